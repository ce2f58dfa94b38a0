//! Any change to a sealed packet, and any mismatch in the keys, fails.

use super::*;
use crate::wire::dccp::Packet;

/// Every single-byte change (three different XOR masks per byte) of a
/// sealed DataAck with options and data is refused, even with the Checksum
/// recomputed after the change, except a change of the Checksum field
/// itself under DCCP-UDP, where the field is not checked and is rewritten
/// on opening, so the change has no effect at all.
fn check_every_byte(checksum: &ChecksumContext) {
    let (mut client, _) = pair();
    let plain = packet(
        From::Client,
        1,
        PacketKind::DataAck {
            ack: SeqNum::new(SERVER_ISS),
        },
        some_options(),
        &payload(48),
        checksum,
    );
    let wire = sealed(client.sealer(), &plain, checksum);
    let header_len = usize::from(wire[4]) * 4;
    let mut refused = 0;
    for at in 0..wire.len() {
        for mask in [0x01, 0x80, 0xFF] {
            // A fresh opener each time, so that no refusal is a replay.
            let (_, mut server) = pair();
            let mut changed = wire.clone();
            changed[at] ^= mask;
            if !(6..8).contains(&at) {
                // An attacker fixes the Checksum up: only the tag may stop
                // the change. (Over UDP there is nothing to fix.)
                let _ = Packet::new_unchecked(&mut changed[..]).fill_checksum(checksum);
            }
            let result = opened(server.opener(), &changed, checksum);
            if *checksum == UDP && (6..8).contains(&at) {
                assert_eq!(result, Ok(plain.clone()), "byte {at} ^ {mask:#04x}");
                continue;
            }
            match result {
                Err(OpenError::BadTag { .. }) => {}
                Err(_) if at < header_len => {
                    // A header change may be caught earlier: a reserved
                    // type, X = 0, a Data Offset out of range, a sequence
                    // number epochs ahead, a checksum mismatch.
                }
                other => panic!("byte {at} ^ {mask:#04x}: {other:?}"),
            }
            refused += 1;
        }
    }
    assert!(refused >= 3 * (wire.len() - 2));
}

#[test]
fn any_changed_byte_fails_over_udp() {
    check_every_byte(&UDP);
}

#[test]
fn any_changed_byte_fails_natively() {
    check_every_byte(&native());
}

#[test]
fn truncated_or_extended_packets_fail() {
    let (mut client, _) = pair();
    let wire = sealed(client.sealer(), &data(From::Client, 1, &payload(40)), &UDP);
    let header_len = usize::from(wire[4]) * 4;
    for len in 0..wire.len() {
        let (_, mut server) = pair();
        let result = opened(server.opener(), &wire[..len], &UDP);
        assert!(result.is_err(), "cut to {len} bytes");
        if len >= header_len + TAG_LEN {
            assert!(matches!(result, Err(OpenError::BadTag { .. })), "{len}");
        }
    }
    let (_, mut server) = pair();
    let mut longer = wire.clone();
    longer.push(0);
    assert!(matches!(
        opened(server.opener(), &longer, &UDP),
        Err(OpenError::BadTag { .. })
    ));
}

/// The server's opener refuses a packet the client sealed with `client`'s
/// keys.
fn refused_by_server(mut client: ConnectionKeys) {
    let (_, mut server) = pair();
    let wire = sealed(client.sealer(), &data(From::Client, 1, b"hello"), &UDP);
    assert_eq!(
        opened(server.opener(), &wire, &UDP),
        Err(OpenError::BadTag {
            seq: SeqNum::new(CLIENT_ISS).add(1)
        })
    );
    assert_eq!(server.opener().authentication_failures(), 1);
}

#[test]
fn wrong_passphrase_fails() {
    let other = Passphrase::new("correct horse battery stapler".to_owned()).expect("valid");
    refused_by_server(keys_with(&MasterKey::derive(&other, &SALT), Role::Client));
}

#[test]
fn wrong_salt_fails() {
    let mut salt = SALT;
    salt[15] ^= 1;
    refused_by_server(keys_with(
        &MasterKey::derive(&passphrase(), &salt),
        Role::Client,
    ));
}

#[test]
fn wrong_iss_or_port_fails() {
    let variants = [
        (CLIENT_PORT, SERVER_PORT, CLIENT_ISS + 1, SERVER_ISS),
        (CLIENT_PORT, SERVER_PORT, CLIENT_ISS, SERVER_ISS + 1),
        (CLIENT_PORT, SERVER_PORT, CLIENT_ISS, SERVER_ISS ^ (1 << 47)),
        (CLIENT_PORT + 1, SERVER_PORT, CLIENT_ISS, SERVER_ISS),
        (CLIENT_PORT, SERVER_PORT + 1, CLIENT_ISS, SERVER_ISS),
        // The ports swapped: the order in `info` matters.
        (SERVER_PORT, CLIENT_PORT, CLIENT_ISS, SERVER_ISS),
    ];
    for (client_port, server_port, client_iss, server_iss) in variants {
        refused_by_server(ConnectionKeys::new(
            master(),
            Role::Client,
            client_port,
            server_port,
            client_iss,
            server_iss,
        ));
    }
}

#[test]
fn swapped_isss_fail() {
    // Two ISSs close enough that the packet's position is in the first
    // epoch either way, so that only the keys can tell.
    let keys = |role, client_iss, server_iss| {
        ConnectionKeys::new(
            master(),
            role,
            CLIENT_PORT,
            SERVER_PORT,
            client_iss,
            server_iss,
        )
    };
    let mut client = keys(Role::Client, 1001, 1000);
    let mut server = keys(Role::Server, 1000, 1001);
    let mut plain = data(From::Client, 0, b"swapped");
    plain[10..16].copy_from_slice(&1002u64.to_be_bytes()[2..]);
    let wire = sealed(client.sealer(), &plain, &UDP);
    assert_eq!(
        opened(server.opener(), &wire, &UDP),
        Err(OpenError::BadTag {
            seq: SeqNum::new(1002)
        })
    );
    let mut right = keys(Role::Server, 1001, 1000);
    assert_eq!(opened(right.opener(), &wire, &UDP), Ok(plain));
}

#[test]
fn bits_above_48_of_an_iss_are_ignored() {
    // As everywhere else, an ISS is taken modulo 2^48 (`SeqNum::new`).
    let (_, mut server) = pair();
    let mut client = ConnectionKeys::new(
        master(),
        Role::Client,
        CLIENT_PORT,
        SERVER_PORT,
        CLIENT_ISS | (0xABCD << 48),
        SERVER_ISS,
    );
    let plain = data(From::Client, 1, b"hello");
    let wire = sealed(client.sealer(), &plain, &UDP);
    assert_eq!(opened(server.opener(), &wire, &UDP), Ok(plain));
}

#[test]
fn a_direction_does_not_open_its_own_packets() {
    // Each direction has its own key and IV: a packet the server sent,
    // reflected back to the server, does not open, nor does a client's
    // packet at the client.
    let (mut client, mut server) = pair();
    let from_server = sealed(server.sealer(), &data(From::Server, 1, b"hi"), &UDP);
    assert!(matches!(
        opened(server.opener(), &from_server, &UDP),
        Err(OpenError::BadTag { .. } | OpenError::TooFarAhead { .. })
    ));
    let from_client = sealed(client.sealer(), &data(From::Client, 1, b"hi"), &UDP);
    assert!(matches!(
        opened(client.opener(), &from_client, &UDP),
        Err(OpenError::BadTag { .. } | OpenError::TooFarAhead { .. })
    ));
}

#[test]
fn a_reflected_packet_with_matching_numbers_fails_on_its_key() {
    // Make the reflected packet's position land in the opener's first
    // epoch, so that only the key (not the epoch check) can refuse it: both
    // ISSs equal.
    let iss = 0x1000;
    let keys = |role| ConnectionKeys::new(master(), role, CLIENT_PORT, SERVER_PORT, iss, iss);
    let mut server = keys(Role::Server);
    let plain = packet(
        From::Server,
        0,
        PacketKind::Data,
        Options::new(),
        b"reflected",
        &UDP,
    );
    // Renumber to the shared ISS + 1.
    let mut plain = plain;
    plain[10..16].copy_from_slice(&(iss + 1).to_be_bytes()[2..]);
    let wire = sealed(server.sealer(), &plain, &UDP);
    assert_eq!(
        opened(server.opener(), &wire, &UDP),
        Err(OpenError::BadTag {
            seq: SeqNum::new(iss + 1)
        })
    );
    let mut client = keys(Role::Client);
    assert_eq!(opened(client.opener(), &wire, &UDP), Ok(plain));
}

#[test]
fn both_ends_claiming_the_same_role_fail() {
    let mut a = keys_with(master(), Role::Client);
    let mut b = keys_with(master(), Role::Client);
    let wire = sealed(a.sealer(), &data(From::Client, 1, b"x"), &UDP);
    assert!(opened(b.opener(), &wire, &UDP).is_err());
}

#[test]
fn unprotected_packets_are_refused() {
    let (_, mut server) = pair();
    let opener = server.opener();
    // A clear DataAck with a little data: the last 16 bytes are taken as the
    // tag and fail.
    let clear = data(From::Client, 1, &payload(100));
    assert!(matches!(
        opened(opener, &clear, &UDP),
        Err(OpenError::BadTag { .. })
    ));
    // A clear Ack: no room for a tag.
    let ack = packet(
        From::Client,
        2,
        PacketKind::Ack { ack: SeqNum::ZERO },
        Options::new(),
        &[],
        &UDP,
    );
    assert!(matches!(
        opened(opener, &ack, &UDP),
        Err(OpenError::TooShort { .. })
    ));
    // A short-sequence-number packet.
    let short = DccpRepr {
        src_port: CLIENT_PORT,
        dst_port: SERVER_PORT,
        ccval: 0,
        checksum_coverage: 0,
        short_seqno: true,
        seq: SeqNum::new(CLIENT_ISS).add(3),
        kind: PacketKind::Data,
        options: Options::new(),
        payload: &payload(40),
    }
    .emit_to_vec(&UDP)
    .expect("emits");
    assert_eq!(
        opened(opener, &short, &UDP),
        Err(OpenError::ShortSequenceNumber(PacketType::Data))
    );
    assert!(matches!(
        opened(opener, b"not dccp", &UDP),
        Err(OpenError::NotDccp(_))
    ));
    // Only the one that reached the tag check counts as a failure.
    assert_eq!(opener.authentication_failures(), 1);
}

#[test]
fn a_checksum_error_is_reported_as_such() {
    let (mut client, mut server) = pair();
    let mut wire = sealed(
        client.sealer(),
        &packet(
            From::Client,
            1,
            PacketKind::Data,
            Options::new(),
            b"x",
            &native(),
        ),
        &native(),
    );
    wire[6] ^= 0x10;
    assert!(matches!(
        opened(server.opener(), &wire, &native()),
        Err(OpenError::NotDccp(
            crate::wire::dccp::DccpError::ChecksumMismatch { .. }
        ))
    ));
    assert_eq!(server.opener().authentication_failures(), 0);
}

#[test]
fn past_the_integrity_limit_everything_is_refused() {
    let (mut client, mut server) = pair();
    let good = sealed(client.sealer(), &data(From::Client, 1, b"good"), &UDP);
    let mut forged = good.clone();
    let last = forged.len() - 1;
    forged[last] ^= 1;
    // Reaching 2^36 failures honestly takes 2^36 packets; start one short.
    server.opener().failures = INTEGRITY_LIMIT - 1;
    assert!(matches!(
        opened(server.opener(), &forged, &UDP),
        Err(OpenError::BadTag { .. })
    ));
    assert_eq!(
        opened(server.opener(), &good, &UDP),
        Err(OpenError::IntegrityLimitReached {
            failures: INTEGRITY_LIMIT
        })
    );
}
