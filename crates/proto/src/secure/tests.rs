//! Tests of packet protection: round trips for every packet type, tampering,
//! wrong keys, the replay window, key epochs, the Response's clear salt, a
//! known-answer vector for the whole derivation, and property tests.

use std::net::Ipv4Addr;
use std::sync::OnceLock;

use super::*;
use crate::wire::dccp::{
    ChecksumContext, DccpRepr, PacketKind, PacketType, PseudoHeader, ResetCode, SeqNum,
};
use crate::wire::options::{DccpOption, Options};

mod epochs;
mod keys;
mod properties;
mod replay;
mod round_trip;
mod tamper;

const PASSPHRASE: &str = "correct horse battery staple";
const SALT: [u8; SALT_LEN] = *b"fairstream salt!";
const CLIENT_PORT: u16 = 40000;
const SERVER_PORT: u16 = 5004;
const CLIENT_ISS: u64 = 0x0123_4567_89AB;
const SERVER_ISS: u64 = 0xFEDC_BA98_7654;

const SRC: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
const DST: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 2);

/// DCCP-UDP: the Checksum field is zero and not checked.
const UDP: ChecksumContext = ChecksumContext::UdpEncapsulated;

/// Native DCCP over IPv4: a real checksum, so that recomputing it matters.
fn native() -> ChecksumContext {
    ChecksumContext::PseudoHeader(PseudoHeader::native_v4(SRC, DST))
}

fn passphrase() -> Passphrase {
    Passphrase::new(PASSPHRASE.to_owned()).expect("valid passphrase")
}

/// The master key of [`PASSPHRASE`] and [`SALT`], derived once for all
/// tests (Argon2id takes a tenth of a second on purpose).
fn master() -> &'static MasterKey {
    static MASTER: OnceLock<MasterKey> = OnceLock::new();
    MASTER.get_or_init(|| MasterKey::derive(&passphrase(), &SALT))
}

fn keys_with(master: &MasterKey, role: Role) -> ConnectionKeys {
    ConnectionKeys::new(
        master,
        role,
        CLIENT_PORT,
        SERVER_PORT,
        CLIENT_ISS,
        SERVER_ISS,
    )
}

/// The client's and the server's keys of one connection.
fn pair() -> (ConnectionKeys, ConnectionKeys) {
    (
        keys_with(master(), Role::Client),
        keys_with(master(), Role::Server),
    )
}

/// Which end sends a packet: sets the ports and the ISS it counts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum From {
    Client,
    Server,
}

impl From {
    fn iss(self) -> u64 {
        match self {
            From::Client => CLIENT_ISS,
            From::Server => SERVER_ISS,
        }
    }

    fn ports(self) -> (u16, u16) {
        match self {
            From::Client => (CLIENT_PORT, SERVER_PORT),
            From::Server => (SERVER_PORT, CLIENT_PORT),
        }
    }
}

/// Every packet kind, with acknowledgement numbers and codes filled in.
fn all_kinds() -> Vec<PacketKind> {
    let ack = SeqNum::new(0x0000_AAAA_BBBB);
    vec![
        PacketKind::Request {
            service_code: 0x5254_5056,
        },
        PacketKind::Response {
            ack,
            service_code: 0x5254_5056,
        },
        PacketKind::Data,
        PacketKind::Ack { ack },
        PacketKind::DataAck { ack },
        PacketKind::CloseReq { ack },
        PacketKind::Close { ack },
        PacketKind::Reset {
            ack,
            code: ResetCode::Closed,
            data: [1, 2, 3],
        },
        PacketKind::Sync { ack },
        PacketKind::SyncAck { ack },
    ]
}

fn some_options() -> Options {
    Options::from_options(vec![
        DccpOption::Timestamp(0x0102_0304),
        DccpOption::NdpCount(5),
        DccpOption::SlowReceiver,
    ])
    .expect("valid options")
}

/// A clear DCCP packet: the `n`th packet after `from`'s ISS.
fn packet(
    from: From,
    n: u64,
    kind: PacketKind,
    options: Options,
    payload: &[u8],
    checksum: &ChecksumContext,
) -> Vec<u8> {
    let (src_port, dst_port) = from.ports();
    DccpRepr {
        src_port,
        dst_port,
        ccval: 3,
        checksum_coverage: 0,
        short_seqno: false,
        seq: SeqNum::new(from.iss()).add(n),
        kind,
        options,
        payload,
    }
    .emit_to_vec(checksum)
    .expect("test packet emits")
}

/// A DataAck with options and `payload`, the `n`th from `from`, for UDP.
fn data(from: From, n: u64, payload: &[u8]) -> Vec<u8> {
    let ack = SeqNum::new(0x0000_0000_0042);
    packet(
        from,
        n,
        PacketKind::DataAck { ack },
        some_options(),
        payload,
        &UDP,
    )
}

/// A payload of `len` bytes that is not all one value.
fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

/// Seals a copy of `datagram`.
fn sealed(sealer: &mut Sealer, datagram: &[u8], checksum: &ChecksumContext) -> Vec<u8> {
    let mut buf = datagram.to_vec();
    sealer.seal(&mut buf, checksum).expect("seals");
    buf
}

/// Opens a copy of `datagram`, returning the opened packet.
fn opened(
    opener: &mut Opener,
    datagram: &[u8],
    checksum: &ChecksumContext,
) -> Result<Vec<u8>, OpenError> {
    let mut buf = datagram.to_vec();
    let result = opener
        .open(&mut buf, checksum)
        .map(|opened| opened.to_vec());
    if result.is_err() {
        assert_eq!(buf, datagram, "a failed open leaves the datagram as it was");
    }
    result
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn packet_types_cover_every_type() {
    let types: Vec<PacketType> = all_kinds().iter().map(|k| k.packet_type()).collect();
    for code in 0..10 {
        let t = PacketType::from_code(code).expect("types 0-9 exist");
        assert!(types.contains(&t), "{} missing from all_kinds", t.name());
    }
}
