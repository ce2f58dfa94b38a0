//! Any datagram at a protected end: `peek_response` and `Opener::open` (and
//! `open_response`) must not panic, must leave a datagram they refuse as it
//! was, and must never open what was not sealed with the key: the input is
//! also sealed as a DCCP-Data packet's application data and must open back
//! to itself, and the sealed packet with one byte changed (chosen by the
//! input) must not open, but for the Checksum field: over DCCP-UDP it is
//! not checked and is rewritten on opening, so changing it changes nothing
//! (the first run of this target stopped there; `secure::tests::tamper`
//! says the same).
#![no_main]

use fairstream_proto::conn::ChecksumMode;
use fairstream_proto::secure::{peek_response, ConnectionKeys, MasterKey, Passphrase, Role};
use fairstream_proto::wire::dccp::{DccpRepr, PacketKind, SeqNum};
use fairstream_proto::wire::options::Options;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const CLIENT_ISS: u64 = 0x0000_1234_5678_9abc;
const SERVER_ISS: u64 = 0x0000_fedc_ba98_7654;

/// The master key, derived once (Argon2id takes a tenth of a second).
fn master() -> &'static MasterKey {
    static MASTER: OnceLock<MasterKey> = OnceLock::new();
    MASTER.get_or_init(|| {
        let passphrase: Passphrase = "fuzzing passphrase".parse().expect("a valid passphrase");
        MasterKey::derive(&passphrase, b"fairstream fuzz!")
    })
}

fuzz_target!(|data: &[u8]| {
    let checksum = ChecksumMode::UdpEncapsulated;
    // Arbitrary bytes, as a peer or an attacker sends them.
    let _ = peek_response(data);
    let mut server =
        ConnectionKeys::new(master(), Role::Server, 5004, 9000, CLIENT_ISS, SERVER_ISS);
    let mut copy = data.to_vec();
    if server
        .opener()
        .open(&mut copy, &checksum.receive_context())
        .is_err()
    {
        assert_eq!(copy, data, "a refused datagram changed");
    }
    let mut copy = data.to_vec();
    let mut client =
        ConnectionKeys::new(master(), Role::Client, 5004, 9000, CLIENT_ISS, SERVER_ISS);
    if client
        .opener()
        .open_response(&mut copy, &checksum.receive_context())
        .is_err()
    {
        assert_eq!(copy, data, "a refused Response changed");
    }
    // The input as data: seal, open back, and one changed byte refused.
    let Some(packet) = (DccpRepr {
        src_port: 5004,
        dst_port: 9000,
        ccval: 0,
        checksum_coverage: 0,
        short_seqno: false,
        seq: SeqNum::new(CLIENT_ISS + 1),
        kind: PacketKind::Data,
        options: Options::new(),
        payload: data,
    })
    .emit_to_vec(&checksum.send_context())
    .ok() else {
        return;
    };
    let mut sealed = packet.clone();
    let mut client =
        ConnectionKeys::new(master(), Role::Client, 5004, 9000, CLIENT_ISS, SERVER_ISS);
    if client
        .sealer()
        .seal(&mut sealed, &checksum.send_context())
        .is_err()
    {
        return;
    }
    let mut tampered = sealed.clone();
    let mut server =
        ConnectionKeys::new(master(), Role::Server, 5004, 9000, CLIENT_ISS, SERVER_ISS);
    let opened = server
        .opener()
        .open(&mut sealed, &checksum.receive_context())
        .expect("what was sealed opens")
        .to_vec();
    let parsed =
        DccpRepr::parse_bytes(&opened, &checksum.receive_context()).expect("opened parses");
    assert_eq!(parsed.payload, data);
    if let Some(&pick) = data.first() {
        let at = usize::from(pick) * tampered.len() / 256;
        let checksum_field = (6..8).contains(&at);
        if let Some(byte) = tampered.get_mut(at).filter(|_| !checksum_field) {
            *byte ^= 0x01;
            let mut fresh =
                ConnectionKeys::new(master(), Role::Server, 5004, 9000, CLIENT_ISS, SERVER_ISS);
            assert!(
                fresh
                    .opener()
                    .open(&mut tampered, &checksum.receive_context())
                    .is_err(),
                "a changed byte at {at} opened"
            );
        }
    }
});
