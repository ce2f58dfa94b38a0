//! Byte-exact vectors for every packet type in both directions, malformed
//! input, and property tests. Checksums in the vectors are computed by an
//! independent, deliberately plain one's complement sum ([`reference_v4`]).

use super::*;
use crate::wire::options::{AckVector, AckVectorState, DccpOption, ElapsedTime, Feature, Options};
use proptest::prelude::*;

mod errors;
mod properties;

const SRC: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
const DST: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 2);

fn native() -> ChecksumContext {
    ChecksumContext::PseudoHeader(PseudoHeader::native_v4(SRC, DST))
}

/// How many bytes the checksum covers, straight from RFC 4340 §9.2.
fn coverage(packet: &[u8]) -> usize {
    let header = usize::from(packet[4]) * 4;
    match packet[5] & 0x0F {
        0 => packet.len(),
        cscov => header + (usize::from(cscov) - 1) * 4,
    }
}

/// A one's complement sum written out longhand: 16-bit big-endian words,
/// zero-padded, carries folded at the end.
fn ones_complement(data: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    let mut i = 0;
    while i < data.len() {
        let high = u64::from(data[i]);
        let low = if i + 1 < data.len() {
            u64::from(data[i + 1])
        } else {
            0
        };
        sum += (high << 8) | low;
        i += 2;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum as u16
}

/// The RFC 4340 §9 checksum with the IPv4 pseudo-header (protocol 33),
/// ignoring whatever is in the packet's Checksum field.
fn reference_v4(src: Ipv4Addr, dst: Ipv4Addr, packet: &[u8]) -> u16 {
    let mut data = Vec::new();
    data.extend_from_slice(&src.octets());
    data.extend_from_slice(&dst.octets());
    data.push(0);
    data.push(33);
    data.extend_from_slice(&(packet.len() as u16).to_be_bytes());
    let mut covered = packet[..coverage(packet)].to_vec();
    covered[6] = 0;
    covered[7] = 0;
    data.extend_from_slice(&covered);
    !ones_complement(&data)
}

/// The same with the IPv6 pseudo-header (RFC 2460 §8.1 layout).
fn reference_v6(src: Ipv6Addr, dst: Ipv6Addr, packet: &[u8]) -> u16 {
    let mut data = Vec::new();
    data.extend_from_slice(&src.octets());
    data.extend_from_slice(&dst.octets());
    data.extend_from_slice(&(packet.len() as u32).to_be_bytes());
    data.extend_from_slice(&[0, 0, 0, 33]);
    let mut covered = packet[..coverage(packet)].to_vec();
    covered[6] = 0;
    covered[7] = 0;
    data.extend_from_slice(&covered);
    !ones_complement(&data)
}

/// `bytes` with the reference IPv4 checksum written into bytes 6-7.
fn with_checksum(mut bytes: Vec<u8>) -> Vec<u8> {
    let checksum = reference_v4(SRC, DST, &bytes);
    bytes[6..8].copy_from_slice(&checksum.to_be_bytes());
    bytes
}

/// Bytes → repr must give `expected`; repr → bytes must give the bytes.
#[track_caller]
fn both_ways(bytes_without_checksum: Vec<u8>, expected: &DccpRepr<'_>) {
    let bytes = with_checksum(bytes_without_checksum);
    let parsed = DccpRepr::parse_bytes(&bytes, &native()).expect("vector parses");
    assert_eq!(&parsed, expected, "bytes -> repr");
    assert_eq!(expected.buffer_len(), bytes.len());
    let emitted = expected.emit_to_vec(&native()).expect("vector emits");
    assert_eq!(emitted, bytes, "repr -> bytes");
    // DCCP-UDP: the same packet with a zero Checksum field.
    let udp = expected
        .emit_to_vec(&ChecksumContext::UdpEncapsulated)
        .expect("vector emits");
    assert_eq!(&udp[..6], &bytes[..6]);
    assert_eq!(&udp[6..8], &[0, 0]);
    assert_eq!(&udp[8..], &bytes[8..]);
    assert_eq!(
        DccpRepr::parse_bytes(&udp, &ChecksumContext::UdpEncapsulated).as_ref(),
        Ok(expected)
    );
}

fn options(list: Vec<DccpOption>) -> Options {
    Options::from_options(list).expect("valid options")
}

fn repr<'a>(seq: u64, kind: PacketKind, opts: Options, payload: &'a [u8]) -> DccpRepr<'a> {
    DccpRepr {
        src_port: 40000,
        dst_port: 5004,
        ccval: 0,
        checksum_coverage: 0,
        short_seqno: false,
        seq: SeqNum::new(seq),
        kind,
        options: opts,
        payload,
    }
}

#[test]
fn request_with_service_code_and_change_l() {
    let bytes = vec![
        0x9C, 0x40, // Source Port 40000
        0x13, 0x8C, // Destination Port 5004
        0x07, // Data Offset: 7 words = 28 bytes
        0x00, // CCVal 0, CsCov 0
        0x00, 0x00, // Checksum (filled in by the reference)
        0x01, // Res 0, Type 0 (Request), X 1
        0x00, // Reserved
        0x00, 0x00, 0x0A, 0x0B, 0x0C, 0x0D, // Sequence Number
        0x52, 0x54, 0x50, 0x56, // Service Code "RTPV"
        0x20, 0x05, 0x01, 0x03, 0x02, // Change L(CCID: 3, 2)
        0x00, 0x00, 0x00, // Padding to 32 bits
    ];
    let expected = repr(
        0x0A0B_0C0D,
        PacketKind::Request {
            service_code: 0x5254_5056,
        },
        options(vec![DccpOption::ChangeL(Feature::Ccid(vec![3, 2]))]),
        &[],
    );
    both_ways(bytes, &expected);
}

#[test]
fn response_with_confirm_r() {
    let bytes = vec![
        0x9C, 0x40, 0x13, 0x8C, // ports
        0x09, // Data Offset: 36 bytes
        0x00, 0x00, 0x00, // CCVal/CsCov, Checksum
        0x03, // Type 1 (Response), X 1
        0x00, // Reserved
        0x00, 0x00, 0x55, 0x66, 0x77, 0x88, // Sequence Number
        0x00, 0x00, // Reserved
        0x00, 0x00, 0x0A, 0x0B, 0x0C, 0x0D, // Acknowledgement Number
        0x52, 0x54, 0x50, 0x56, // Service Code
        0x23, 0x06, 0x01, 0x03, 0x03, 0x02, // Confirm R(CCID: 3; 3, 2)
        0x00, 0x00, // Padding
    ];
    let expected = repr(
        0x5566_7788,
        PacketKind::Response {
            ack: SeqNum::new(0x0A0B_0C0D),
            service_code: 0x5254_5056,
        },
        options(vec![DccpOption::ConfirmR(Feature::Ccid(vec![3, 3, 2]))]),
        &[],
    );
    both_ways(bytes, &expected);
}

#[test]
fn data_with_long_and_short_sequence_numbers() {
    let bytes = vec![
        0x9C, 0x40, 0x13, 0x8C, // ports
        0x04, // Data Offset: 16 bytes
        0x50, // CCVal 5, CsCov 0
        0x00, 0x00, // Checksum
        0x05, // Type 2 (Data), X 1
        0x00, // Reserved
        0x00, 0x00, 0x0A, 0x0B, 0x0C, 0x0E, // Sequence Number
        b'h', b'e', b'l', b'l', b'o', // odd-length application data
    ];
    let mut expected = repr(0x0A0B_0C0E, PacketKind::Data, Options::new(), b"hello");
    expected.ccval = 5;
    both_ways(bytes, &expected);

    let short = vec![
        0x9C, 0x40, 0x13, 0x8C, // ports
        0x03, // Data Offset: 12 bytes
        0x30, // CCVal 3, CsCov 0
        0x00, 0x00, // Checksum
        0x04, // Type 2 (Data), X 0
        0xAB, 0xCD, 0xEF, // 24-bit Sequence Number
        0x01, 0x02, 0x03, 0x04, // application data
    ];
    let mut expected = repr(0xAB_CDEF, PacketKind::Data, Options::new(), &[1, 2, 3, 4]);
    expected.ccval = 3;
    expected.short_seqno = true;
    both_ways(short, &expected);
}

#[test]
fn ack_with_ack_vector_and_elapsed_time() {
    let bytes = vec![
        0x9C, 0x40, 0x13, 0x8C, // ports
        0x08, // Data Offset: 32 bytes
        0x00, 0x00, 0x00, // CCVal/CsCov, Checksum
        0x07, // Type 3 (Ack), X 1
        0x00, // Reserved
        0x00, 0x00, 0x55, 0x66, 0x77, 0x89, // Sequence Number
        0x00, 0x00, // Reserved
        0x00, 0x00, 0x0A, 0x0B, 0x0C, 0x0E, // Acknowledgement Number
        0x26, 0x04, 0x00, 0xC5, // Ack Vector [Nonce 0]: received; 6 lost
        0x2B, 0x04, 0x01, 0xF4, // Elapsed Time: 500 (5 ms)
    ];
    let vector = AckVector::from_cells(
        false,
        &[
            (AckVectorState::Received, 0),
            (AckVectorState::NotReceived, 5),
        ],
    )
    .expect("valid");
    let expected = repr(
        0x5566_7789,
        PacketKind::Ack {
            ack: SeqNum::new(0x0A0B_0C0E),
        },
        options(vec![
            DccpOption::AckVector(vector),
            DccpOption::ElapsedTime(ElapsedTime(500)),
        ]),
        &[],
    );
    both_ways(bytes, &expected);

    let short = vec![
        0x9C, 0x40, 0x13, 0x8C, // ports
        0x04, // Data Offset: 16 bytes
        0x00, 0x00, 0x00, // CCVal/CsCov, Checksum
        0x06, // Type 3 (Ack), X 0
        0x12, 0x34, 0x56, // 24-bit Sequence Number
        0x00, // Reserved
        0xAB, 0xCD, 0xEF, // 24-bit Acknowledgement Number
    ];
    let mut expected = repr(
        0x12_3456,
        PacketKind::Ack {
            ack: SeqNum::new(0xAB_CDEF),
        },
        Options::new(),
        &[],
    );
    expected.short_seqno = true;
    both_ways(short, &expected);
}

#[test]
fn data_ack_with_partial_checksum_coverage() {
    let payload: Vec<u8> = (0x10..0x1A).collect();
    let mut bytes = vec![
        0x9C, 0x40, 0x13, 0x8C, // ports
        0x08, // Data Offset: 32 bytes
        0x12, // CCVal 1, CsCov 2: header + 4 bytes of data
        0x00, 0x00, // Checksum
        0x09, // Type 4 (DataAck), X 1
        0x00, // Reserved
        0x00, 0x00, 0x0A, 0x0B, 0x0C, 0x0F, // Sequence Number
        0x00, 0x00, // Reserved
        0x00, 0x00, 0x55, 0x66, 0x77, 0x89, // Acknowledgement Number
        0x29, 0x06, 0x00, 0x01, 0x02, 0x03, // Timestamp 0x00010203
        0x00, 0x00, // Padding
    ];
    bytes.extend_from_slice(&payload);
    let mut expected = repr(
        0x0A0B_0C0F,
        PacketKind::DataAck {
            ack: SeqNum::new(0x5566_7789),
        },
        options(vec![DccpOption::Timestamp(0x0001_0203)]),
        &payload,
    );
    expected.ccval = 1;
    expected.checksum_coverage = 2;
    both_ways(bytes.clone(), &expected);

    // Bytes past the coverage are not protected: changing one still verifies.
    let mut packet = with_checksum(bytes);
    *packet.last_mut().expect("payload") ^= 0xFF;
    assert!(DccpRepr::parse_bytes(&packet, &native()).is_ok());
    // A covered data byte is protected.
    packet[32] ^= 0xFF;
    assert!(matches!(
        DccpRepr::parse_bytes(&packet, &native()),
        Err(DccpError::ChecksumMismatch { .. })
    ));
}

/// The header of the types whose only extra field is the acknowledgement.
fn ack_only(type_x: u8) -> Vec<u8> {
    vec![
        0x9C, 0x40, 0x13, 0x8C, // ports
        0x06, // Data Offset: 24 bytes
        0x00, 0x00, 0x00,   // CCVal/CsCov, Checksum
        type_x, // Type, X 1
        0x00,   // Reserved
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, // Sequence Number 2^40
        0x00, 0x00, // Reserved
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // Acknowledgement Number 2^48 - 1
    ]
}

#[test]
fn close_req_close_sync_and_sync_ack() {
    let ack = SeqNum::MAX;
    let cases = [
        (0x0B, PacketKind::CloseReq { ack }), // Type 5
        (0x0D, PacketKind::Close { ack }),    // Type 6
        (0x11, PacketKind::Sync { ack }),     // Type 8
        (0x13, PacketKind::SyncAck { ack }),  // Type 9
    ];
    for (type_x, kind) in cases {
        both_ways(ack_only(type_x), &repr(1 << 40, kind, Options::new(), &[]));
    }
}

#[test]
fn reset_with_code_and_data() {
    let bytes = vec![
        0x9C, 0x40, 0x13, 0x8C, // ports
        0x07, // Data Offset: 28 bytes
        0x00, 0x00, 0x00, // CCVal/CsCov, Checksum
        0x0F, // Type 7 (Reset), X 1
        0x00, // Reserved
        0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // Sequence Number
        0x00, 0x00, // Reserved
        0x00, 0x00, 0x00, 0x00, 0x00, 0x08, // Acknowledgement Number
        0x06, // Reset Code 6: Mandatory Error
        0xC8, 0x01, 0x02, // Data 1-3: option 200 and its first two bytes
        b'o', b'p', b't', // application data (error text)
    ];
    let expected = repr(
        9,
        PacketKind::Reset {
            ack: SeqNum::new(8),
            code: ResetCode::MandatoryError,
            data: [0xC8, 0x01, 0x02],
        },
        Options::new(),
        b"opt",
    );
    both_ways(bytes, &expected);
}

#[test]
fn ipv6_pseudo_header() {
    let src: Ipv6Addr = "2001:db8::1".parse().expect("address");
    let dst: Ipv6Addr = "2001:db8::2".parse().expect("address");
    let context = ChecksumContext::PseudoHeader(PseudoHeader::native_v6(src, dst));
    let expected = repr(77, PacketKind::Data, Options::new(), b"v6 data");
    let bytes = expected.emit_to_vec(&context).expect("emits");
    let checksum = u16::from_be_bytes([bytes[6], bytes[7]]);
    assert_eq!(checksum, reference_v6(src, dst, &bytes));
    assert_eq!(
        DccpRepr::parse_bytes(&bytes, &context).as_ref(),
        Ok(&expected)
    );
    // The IPv4 pseudo-header gives a different checksum.
    assert!(DccpRepr::parse_bytes(&bytes, &native()).is_err());
    assert_eq!(
        PseudoHeader::new(IpAddr::V6(src), IpAddr::V6(dst), PROTOCOL_DCCP),
        Some(PseudoHeader::native_v6(src, dst))
    );
    assert_eq!(
        PseudoHeader::new(IpAddr::V6(src), IpAddr::V4(SRC), PROTOCOL_DCCP),
        None
    );
}

#[test]
fn protocol_number_is_part_of_the_checksum() {
    let packet = repr(1, PacketKind::Data, Options::new(), b"x");
    let udp_numbered = ChecksumContext::PseudoHeader(PseudoHeader::V4 {
        src: SRC,
        dst: DST,
        protocol: PROTOCOL_UDP,
    });
    let bytes = packet.emit_to_vec(&udp_numbered).expect("emits");
    assert_eq!(
        DccpRepr::parse_bytes(&bytes, &udp_numbered).as_ref(),
        Ok(&packet)
    );
    assert!(matches!(
        DccpRepr::parse_bytes(&bytes, &native()),
        Err(DccpError::ChecksumMismatch { .. })
    ));
    // DCCP-UDP ignores the field, whatever a peer put there.
    assert!(DccpRepr::parse_bytes(&bytes, &ChecksumContext::UdpEncapsulated).is_ok());
}

#[test]
fn checksum_mismatch_reports_both_values() {
    let mut bytes = with_checksum(ack_only(0x0B));
    let found = u16::from_be_bytes([bytes[6], bytes[7]]);
    bytes[12] ^= 0x01; // Sequence Number byte
    let computed = reference_v4(SRC, DST, &bytes);
    assert_eq!(
        DccpRepr::parse_bytes(&bytes, &native()),
        Err(DccpError::ChecksumMismatch { found, computed })
    );
    // Writing the computed value in makes it verify.
    bytes[6..8].copy_from_slice(&computed.to_be_bytes());
    assert!(DccpRepr::parse_bytes(&bytes, &native()).is_ok());
}

#[test]
fn short_seqno_emits_the_low_24_bits() {
    let mut data = repr(0x1234_5678_9ABC, PacketKind::Data, Options::new(), &[]);
    data.short_seqno = true;
    let bytes = data.emit_to_vec(&native()).expect("emits");
    assert_eq!(&bytes[9..12], &[0x78, 0x9A, 0xBC]);
    let parsed = DccpRepr::parse_bytes(&bytes, &native()).expect("parses");
    assert_eq!(parsed.seq, SeqNum::new(0x78_9ABC));
    // The receiver extends it with its GSR (RFC 4340 §7.6).
    let gsr = SeqNum::new(0x1234_5678_0000);
    assert_eq!(
        SeqNum::extend_short(parsed.seq.low24(), gsr),
        SeqNum::new(0x1234_5678_9ABC)
    );
}

#[test]
fn packet_view_accessors() {
    let bytes = with_checksum(ack_only(0x13));
    let packet = Packet::new_checked(&bytes[..]).expect("valid");
    assert_eq!(packet.src_port(), 40000);
    assert_eq!(packet.dst_port(), 5004);
    assert_eq!(packet.header_len(), 24);
    assert_eq!(packet.packet_type(), Ok(PacketType::SyncAck));
    assert!(packet.extended());
    assert_eq!(packet.seq_number(), SeqNum::new(1 << 40));
    assert_eq!(packet.ack_number(), Some(SeqNum::MAX));
    assert_eq!(packet.service_code(), None);
    assert_eq!(packet.reset(), None);
    assert!(packet.options().is_empty());
    assert!(packet.payload().is_empty());
    assert_eq!(packet.verify_checksum(&native()), Ok(()));
    assert_eq!(peek_ports(&bytes), Some((40000, 5004)));
    assert_eq!(peek_ports(&bytes[..3]), None);
    // An unchecked view of a short buffer reads zeros, never panics.
    let tiny = Packet::new_unchecked(&[0x9Cu8][..]);
    assert_eq!(tiny.dst_port(), 0);
    assert_eq!(tiny.seq_number(), SeqNum::ZERO);
    // Data Offset reads as 0, so everything is payload.
    assert_eq!(tiny.payload(), &[0x9C]);
    assert!(tiny.options().is_empty());
    assert!(tiny.check_len().is_err());
}

#[test]
fn packet_type_table() {
    for code in 0..10u8 {
        let packet_type = PacketType::from_code(code).expect("defined");
        assert_eq!(packet_type.code(), code);
        assert_eq!(packet_type.has_ack(), code != 0 && code != 2);
        assert_eq!(packet_type.allows_short_seqno(), (2..=4).contains(&code));
    }
    assert_eq!(PacketType::Request.header_len(true), 20);
    assert_eq!(PacketType::Response.header_len(true), 28);
    assert_eq!(PacketType::Data.header_len(true), 16);
    assert_eq!(PacketType::Data.header_len(false), 12);
    assert_eq!(PacketType::Ack.header_len(true), 24);
    assert_eq!(PacketType::Ack.header_len(false), 16);
    assert_eq!(PacketType::Reset.header_len(true), 28);
    for code in 0..=255u8 {
        assert_eq!(u8::from(ResetCode::from(code)), code);
    }
    assert_eq!(ResetCode::from(11), ResetCode::AggressionPenalty);
    assert_eq!(ResetCode::from(12), ResetCode::Unknown(12));
}
