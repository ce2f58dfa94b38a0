//! Seal then open gives back the packet, for every type, with and without
//! options and application data, and the sealed packet is valid DCCP.

use super::*;

/// Seals `plain` from `from` and checks what the wire carries, then opens it
/// at the other end.
fn check_round_trip(plain: &[u8], from: From, checksum: &ChecksumContext) {
    let (mut client, mut server) = pair();
    let (sealer, opener) = match from {
        From::Client => (client.sealer(), server.opener()),
        From::Server => (server.sealer(), client.opener()),
    };
    let wire = sealed(sealer, plain, checksum);
    let repr = DccpRepr::parse_bytes(plain, checksum).expect("plain parses");
    let header_len = repr.header_len();

    assert_eq!(wire.len(), plain.len() + TAG_LEN, "only the tag is added");
    // The header stays in clear, except the Checksum, which now covers the
    // ciphertext.
    assert_eq!(&wire[..6], &plain[..6]);
    assert_eq!(&wire[8..header_len], &plain[8..header_len]);
    let sealed_repr = DccpRepr::parse_bytes(&wire, checksum)
        .expect("the sealed datagram is a valid DCCP packet with a valid Checksum");
    assert_eq!(sealed_repr.kind, repr.kind);
    assert_eq!(sealed_repr.options, repr.options);
    assert_eq!(sealed_repr.seq, repr.seq);
    if repr.payload.len() >= 4 {
        assert_ne!(
            &wire[header_len..plain.len()],
            repr.payload,
            "application data is encrypted"
        );
    }

    let opened = opened(opener, &wire, checksum).expect("opens");
    assert_eq!(opened, plain, "open(seal(x)) == x, Checksum included");
}

#[test]
fn every_type_with_and_without_options_and_data() {
    let sizes = [0, 1, 5, 1200];
    for kind in all_kinds() {
        for options in [Options::new(), some_options()] {
            for &size in &sizes {
                for checksum in [UDP, native()] {
                    for from in [From::Client, From::Server] {
                        let data = payload(size);
                        let plain = packet(from, 1, kind, options.clone(), &data, &checksum);
                        check_round_trip(&plain, from, &checksum);
                    }
                }
            }
        }
    }
}

#[test]
fn partial_checksum_coverage_round_trips() {
    // CsCov = 2: the Checksum covers the header and 4 bytes of data
    // (RFC 4340 §9.2). Sealing and opening recompute it with the same
    // coverage.
    let checksum = native();
    let data = payload(40);
    let plain = DccpRepr {
        src_port: CLIENT_PORT,
        dst_port: SERVER_PORT,
        ccval: 0,
        checksum_coverage: 2,
        short_seqno: false,
        seq: SeqNum::new(CLIENT_ISS).add(1),
        kind: PacketKind::Data,
        options: Options::new(),
        payload: &data,
    }
    .emit_to_vec(&checksum)
    .expect("emits");
    check_round_trip(&plain, From::Client, &checksum);
}

#[test]
fn a_packet_without_data_carries_just_the_tag() {
    let (mut client, mut server) = pair();
    let ack = packet(
        From::Client,
        1,
        PacketKind::Ack {
            ack: SeqNum::new(SERVER_ISS),
        },
        Options::new(),
        &[],
        &UDP,
    );
    let wire = sealed(client.sealer(), &ack, &UDP);
    assert_eq!(wire.len(), ack.len() + TAG_LEN);
    let header_len = usize::from(wire[4]) * 4;
    assert_eq!(header_len, ack.len(), "no application data before sealing");
    // Without the tag the Ack is refused: a forged Ack or Reset needs the key.
    assert!(matches!(
        opened(server.opener(), &ack, &UDP),
        Err(OpenError::TooShort {
            payload_len: 0,
            needed: TAG_LEN
        })
    ));
    assert_eq!(opened(server.opener(), &wire, &UDP), Ok(ack));
}

#[test]
fn seal_does_not_reallocate_with_spare_capacity() {
    let (mut client, _) = pair();
    let plain = data(From::Client, 1, &payload(1200));
    let mut buf = Vec::with_capacity(plain.len() + TAG_LEN);
    buf.extend_from_slice(&plain);
    let before = buf.as_ptr();
    client.sealer().seal(&mut buf, &UDP).expect("seals");
    assert_eq!(buf.as_ptr(), before);
}

#[test]
fn the_response_carries_the_salt_in_clear_and_proves_the_passphrase() {
    let (_, mut server) = pair();
    // The listener's connection emits a Response without application data.
    let response = packet(
        From::Server,
        0,
        PacketKind::Response {
            ack: SeqNum::new(CLIENT_ISS),
            service_code: 0x5254_5056,
        },
        some_options(),
        &[],
        &native(),
    );
    let mut wire = response.clone();
    server
        .sealer()
        .seal_response(&mut wire, &SALT, &native())
        .expect("seals the Response");
    let header_len = response.len();
    assert_eq!(wire.len(), header_len + SALT_LEN + TAG_LEN, "salt || tag");
    assert_eq!(&wire[header_len..header_len + SALT_LEN], &SALT);

    // The client reads what it needs, derives the keys and opens.
    let peeked = peek_response(&wire).expect("a sealed Response");
    assert_eq!(
        peeked,
        PeekedResponse {
            salt: SALT,
            server_iss: SeqNum::new(SERVER_ISS),
            acknowledged: SeqNum::new(CLIENT_ISS),
            server_port: SERVER_PORT,
            client_port: CLIENT_PORT,
        }
    );
    let master = MasterKey::derive(&passphrase(), &peeked.salt);
    let mut client = ConnectionKeys::new(
        &master,
        Role::Client,
        peeked.client_port,
        peeked.server_port,
        peeked.acknowledged.value(),
        peeked.server_iss.value(),
    );
    let mut buf = wire.clone();
    let opened = client
        .opener()
        .open_response(&mut buf, &native())
        .expect("opens");
    assert_eq!(
        opened,
        &response[..],
        "the Response as the listener emitted it"
    );
}

#[test]
fn a_response_with_data_keeps_the_data_encrypted_after_the_salt() {
    let (mut client, mut server) = pair();
    let data = payload(30);
    let response = packet(
        From::Server,
        0,
        PacketKind::Response {
            ack: SeqNum::new(CLIENT_ISS),
            service_code: 1,
        },
        Options::new(),
        &data,
        &UDP,
    );
    let mut wire = response.clone();
    server
        .sealer()
        .seal_response(&mut wire, &SALT, &UDP)
        .expect("seals");
    let header_len = response.len() - data.len();
    assert_eq!(&wire[header_len..header_len + SALT_LEN], &SALT);
    assert_ne!(
        &wire[header_len + SALT_LEN..wire.len() - TAG_LEN],
        &data[..]
    );
    let mut buf = wire.clone();
    let opened = client
        .opener()
        .open_response(&mut buf, &UDP)
        .expect("opens");
    assert_eq!(opened, &response[..]);
}

#[test]
fn clear_prefix_is_authenticated_but_not_encrypted() {
    let (mut client, mut server) = pair();
    let data = payload(64);
    let plain = data_packet(&data);
    let header_len = plain.len() - data.len();
    let mut wire = plain.clone();
    client
        .sealer()
        .seal_with_clear_prefix(&mut wire, 10, &UDP)
        .expect("seals");
    assert_eq!(&wire[header_len..header_len + 10], &data[..10], "in clear");
    assert_ne!(&wire[header_len + 10..header_len + 64], &data[10..]);

    // Opened with the same prefix: the packet comes back.
    let mut buf = wire.clone();
    let opened = server
        .opener()
        .open_with_clear_prefix(&mut buf, 10, &UDP)
        .expect("opens");
    assert_eq!(opened, &plain[..]);

    // A changed clear byte fails, as does opening with another prefix
    // length (so the prefix length is bound to the packet too).
    let (_, mut server) = pair();
    let mut changed = wire.clone();
    changed[header_len] ^= 1;
    assert!(matches!(
        server
            .opener()
            .open_with_clear_prefix(&mut changed, 10, &UDP),
        Err(OpenError::BadTag { .. })
    ));
    let mut buf = wire.clone();
    assert!(matches!(
        server.opener().open(&mut buf, &UDP),
        Err(OpenError::BadTag { .. })
    ));
}

fn data_packet(data: &[u8]) -> Vec<u8> {
    packet(
        From::Client,
        1,
        PacketKind::Data,
        Options::new(),
        data,
        &UDP,
    )
}

#[test]
fn seal_refuses_what_it_cannot_protect() {
    let (mut client, _) = pair();
    let sealer = client.sealer();

    let mut not_dccp = vec![1, 2, 3];
    assert!(matches!(
        sealer.seal(&mut not_dccp, &UDP),
        Err(SealError::NotDccp(_))
    ));
    assert_eq!(not_dccp, [1, 2, 3]);

    let short = DccpRepr {
        src_port: CLIENT_PORT,
        dst_port: SERVER_PORT,
        ccval: 0,
        checksum_coverage: 0,
        short_seqno: true,
        seq: SeqNum::new(CLIENT_ISS).add(1),
        kind: PacketKind::Data,
        options: Options::new(),
        payload: b"x",
    }
    .emit_to_vec(&UDP)
    .expect("emits");
    let mut buf = short.clone();
    assert_eq!(
        sealer.seal(&mut buf, &UDP),
        Err(SealError::ShortSequenceNumber(PacketType::Data))
    );
    assert_eq!(buf, short, "left as it was");

    let plain = data_packet(&[1, 2, 3]);
    let mut buf = plain.clone();
    assert_eq!(
        sealer.seal_with_clear_prefix(&mut buf, 4, &UDP),
        Err(SealError::ClearPrefixTooLong {
            clear_prefix: 4,
            payload_len: 3
        })
    );
    assert_eq!(buf, plain);

    let mut buf = plain.clone();
    assert_eq!(
        sealer.seal_response(&mut buf, &SALT, &UDP),
        Err(SealError::NotAResponse(PacketType::Data))
    );
    assert_eq!(buf, plain);
}

#[test]
fn seal_refuses_a_sequence_number_twice_or_backwards() {
    let (mut client, _) = pair();
    let sealer = client.sealer();
    sealed(sealer, &data(From::Client, 5, b"five"), &UDP);
    for n in [5, 4, 0] {
        let plain = data(From::Client, n, b"again");
        let mut buf = plain.clone();
        assert_eq!(
            sealer.seal(&mut buf, &UDP),
            Err(SealError::SequenceNotIncreasing {
                seq: SeqNum::new(CLIENT_ISS).add(n),
                last: SeqNum::new(CLIENT_ISS).add(5),
            }),
            "packet {n} after packet 5"
        );
        assert_eq!(buf, plain);
    }
    // A failed Response seal does not leave the salt behind either.
    let response = packet(
        From::Client,
        3,
        PacketKind::Response {
            ack: SeqNum::ZERO,
            service_code: 0,
        },
        Options::new(),
        &[],
        &UDP,
    );
    let mut buf = response.clone();
    assert!(sealer.seal_response(&mut buf, &SALT, &UDP).is_err());
    assert_eq!(buf, response);
    sealed(sealer, &data(From::Client, 6, b"six"), &UDP);
}

#[test]
fn the_sequence_space_cannot_wrap_back_to_the_iss() {
    // After position 2^48 − 1 the next number is the ISS again, whose nonce
    // (under the same epoch-0 key chain) must not come back. Reaching that
    // position honestly takes 2^48 packets; the state is set directly.
    let (mut client, _) = pair();
    let sealer = client.sealer();
    sealer.last_position = Some((1 << 48) - 1);
    for n in [0, 1, 2] {
        let mut buf = data(From::Client, n, b"wrapped");
        assert!(matches!(
            sealer.seal(&mut buf, &UDP),
            Err(SealError::SequenceNotIncreasing { .. })
        ));
    }
}

#[test]
fn seal_refuses_a_jump_of_more_than_one_epoch() {
    let (mut client, _) = pair();
    let sealer = client.sealer();
    let mut buf = data(From::Client, 2 << EPOCH_BITS, b"far");
    assert_eq!(
        sealer.seal(&mut buf, &UDP),
        Err(SealError::TooFarAhead {
            seq: SeqNum::new(CLIENT_ISS).add(2 << EPOCH_BITS)
        })
    );
    // One epoch ahead is a single key update.
    sealed(sealer, &data(From::Client, 1 << EPOCH_BITS, b"next"), &UDP);
    assert_eq!(sealer.epoch(), 1);
}
