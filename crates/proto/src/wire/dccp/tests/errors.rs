//! Malformed packets and invalid reprs: each gives its specific error.

use super::*;

#[test]
fn malformed_headers() {
    fn parse(bytes: &[u8]) -> Result<DccpRepr<'_>, DccpError> {
        DccpRepr::parse_bytes(bytes, &ChecksumContext::UdpEncapsulated)
    }
    // Truncated: below the 12-byte generic header, and below 16 with X = 1.
    assert_eq!(
        parse(&[0; 11]),
        Err(DccpError::Truncated {
            len: 11,
            needed: 12
        })
    );
    let long = ack_only(0x0B);
    assert_eq!(
        parse(&long[..14]),
        Err(DccpError::Truncated {
            len: 14,
            needed: 16
        })
    );
    // Reserved types 10-15, named.
    for code in 10..16u8 {
        let mut bytes = long.clone();
        bytes[8] = (code << 1) | 1;
        assert_eq!(parse(&bytes), Err(DccpError::ReservedType(code)));
    }
    // X = 0 on a Request (and on the other types that need X = 1).
    let mut bytes = long.clone();
    bytes[8] = 0x00; // Type 0, X 0
    assert_eq!(
        parse(&bytes),
        Err(DccpError::ShortSeqnoNotAllowed(PacketType::Request))
    );
    bytes[8] = 0x0E; // Type 7 (Reset), X 0
    assert_eq!(
        parse(&bytes),
        Err(DccpError::ShortSeqnoNotAllowed(PacketType::Reset))
    );
    // Data Offset too small for a CloseReq (5 words < 24 bytes).
    let mut bytes = long.clone();
    bytes[4] = 5;
    assert_eq!(
        parse(&bytes),
        Err(DccpError::DataOffsetTooSmall {
            data_offset: 5,
            needed: 24,
            packet_type: PacketType::CloseReq
        })
    );
    // Data Offset 0 on a short Data packet.
    let short_data = [0, 1, 0, 2, 0, 0, 0, 0, 0x04, 0, 0, 1];
    assert_eq!(
        parse(&short_data),
        Err(DccpError::DataOffsetTooSmall {
            data_offset: 0,
            needed: 12,
            packet_type: PacketType::Data
        })
    );
    // Data Offset beyond the packet.
    bytes[4] = 7;
    assert_eq!(
        parse(&bytes),
        Err(DccpError::DataOffsetTooLarge {
            data_offset: 7,
            len: 24
        })
    );
    // CsCov covering more data than there is: 4 → 12 bytes, packet has 3.
    let mut bytes = ack_only(0x0B);
    bytes[5] = 0x04;
    bytes.extend_from_slice(&[1, 2, 3]);
    assert_eq!(
        parse(&bytes),
        Err(DccpError::ChecksumCoverageTooLarge {
            cscov: 4,
            payload_len: 3
        })
    );
    // CsCov is checked even where the checksum is not (it is a header rule).
    assert_eq!(
        DccpRepr::parse_bytes(&bytes, &native()),
        Err(DccpError::ChecksumCoverageTooLarge {
            cscov: 4,
            payload_len: 3
        })
    );
}

#[test]
fn malformed_options_name_the_option_and_packet_offset() {
    // A CloseReq with 4 option bytes: Timestamp whose length runs off the end.
    let mut bytes = ack_only(0x0B);
    bytes[4] = 7;
    bytes.extend_from_slice(&[0x00, 0x29, 0x06, 0x00]);
    assert_eq!(
        DccpRepr::parse_bytes(&bytes, &ChecksumContext::UdpEncapsulated),
        Err(DccpError::Option(OptionError::Overrun {
            kind: 41,
            name: "Timestamp",
            offset: 25,
            length: 6,
            available: 3
        }))
    );
    bytes[26] = 0x01;
    assert_eq!(
        DccpRepr::parse_bytes(&bytes, &ChecksumContext::UdpEncapsulated),
        Err(DccpError::Option(OptionError::LengthTooSmall {
            kind: 41,
            name: "Timestamp",
            offset: 25,
            length: 1
        }))
    );
    let message = DccpRepr::parse_bytes(&bytes, &ChecksumContext::UdpEncapsulated)
        .expect_err("bad option")
        .to_string();
    assert!(
        message.contains("Timestamp") && message.contains("offset 25"),
        "{message}"
    );
}

#[test]
fn emit_refuses_invalid_reprs() {
    let base = repr(
        1,
        PacketKind::Sync { ack: SeqNum::ZERO },
        Options::new(),
        &[],
    );
    let mut bad = base.clone();
    bad.ccval = 16;
    assert_eq!(
        bad.emit_to_vec(&native()),
        Err(DccpError::FieldOutOfRange {
            field: "CCVal",
            value: 16,
            max: 15
        })
    );
    let mut bad = base.clone();
    bad.checksum_coverage = 16;
    assert!(matches!(
        bad.emit_to_vec(&native()),
        Err(DccpError::FieldOutOfRange { field: "CsCov", .. })
    ));
    let mut bad = base.clone();
    bad.short_seqno = true;
    assert_eq!(
        bad.emit_to_vec(&native()),
        Err(DccpError::ShortSeqnoNotAllowed(PacketType::Sync))
    );
    let mut bad = base.clone();
    bad.checksum_coverage = 2;
    assert_eq!(
        bad.emit_to_vec(&native()),
        Err(DccpError::ChecksumCoverageTooLarge {
            cscov: 2,
            payload_len: 0
        })
    );
    // 1008 bytes of options on a 28-byte Reset header exceed 1020.
    let mut big = Options::new();
    for _ in 0..4 {
        big.push(DccpOption::InitCookie(vec![0; 250]))
            .expect("fits the options bound");
    }
    let mut bad = repr(
        1,
        PacketKind::Reset {
            ack: SeqNum::ZERO,
            code: ResetCode::Closed,
            data: [0; 3],
        },
        big,
        &[],
    );
    assert_eq!(
        bad.emit_to_vec(&native()),
        Err(DccpError::HeaderTooLong { len: 1036 })
    );
    // On a 16-byte Data header they still do not fit; on a 12-byte one
    // (X = 0) they fill Data Offset 255 exactly.
    bad.kind = PacketKind::Data;
    assert_eq!(
        bad.emit_to_vec(&native()),
        Err(DccpError::HeaderTooLong { len: 1024 })
    );
    bad.short_seqno = true;
    assert_eq!(bad.header_len(), MAX_HEADER_LEN);
    let bytes = bad.emit_to_vec(&native()).expect("fits");
    assert_eq!(bytes[4], 255);
    assert_eq!(DccpRepr::parse_bytes(&bytes, &native()).as_ref(), Ok(&bad));
    // The buffer must be exactly the packet's length.
    let mut packet = Packet::new_unchecked(vec![0; base.buffer_len() + 1]);
    assert_eq!(
        base.emit(&mut packet, &native()),
        Err(DccpError::BufferLength {
            len: 25,
            needed: 24
        })
    );
}
