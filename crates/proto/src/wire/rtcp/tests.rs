use super::*;
use proptest::prelude::*;
use std::time::Duration;

/// A sender report with one report block.
const SR: [u8; 52] = [
    0x81, 0xc8, 0x00, 0x0c, // V=2 P=0 RC=1, PT=200, length 12 (52 bytes)
    0x11, 0x22, 0x33, 0x44, // SSRC of sender
    0xe8, 0xd4, 0xa5, 0x10, // NTP seconds
    0x80, 0x00, 0x00, 0x00, // NTP fraction (0.5 s)
    0x00, 0x01, 0x5f, 0x90, // RTP timestamp 90000
    0x00, 0x00, 0x00, 0x64, // packet count 100
    0x00, 0x01, 0x38, 0x80, // octet count 80000
    0x55, 0x66, 0x77, 0x88, // SSRC_1
    0x40, 0xff, 0xff, 0xfd, // fraction lost 64/256, cumulative lost -3
    0x00, 0x01, 0x00, 0x05, // extended highest sequence number
    0x00, 0x00, 0x00, 0x20, // jitter 32
    0xa5, 0x10, 0x80, 0x00, // LSR: the middle 32 bits of the NTP timestamp
    0x00, 0x01, 0x80, 0x00, // DLSR 1.5 s
];

const BLOCK: ReportBlock = ReportBlock {
    ssrc: 0x5566_7788,
    fraction_lost: 0x40,
    cumulative_lost: -3,
    extended_highest_seq: 0x0001_0005,
    jitter: 32,
    last_sr: 0xa510_8000,
    delay_since_last_sr: 0x0001_8000,
};

const SENDER_INFO: SenderInfo = SenderInfo {
    ntp_timestamp: NtpTimestamp(0xe8d4_a510_8000_0000),
    rtp_timestamp: 90_000,
    packet_count: 100,
    octet_count: 80_000,
};

/// A sender report without blocks, then an SDES with the CNAME "fs@host".
const SR_SDES: [u8; 48] = [
    0x80, 0xc8, 0x00, 0x06, // SR, RC=0, length 6 (28 bytes)
    0x11, 0x22, 0x33, 0x44, // SSRC
    0xe8, 0xd4, 0xa5, 0x10, 0x80, 0x00, 0x00, 0x00, // NTP timestamp
    0x00, 0x01, 0x5f, 0x90, 0x00, 0x00, 0x00, 0x64, 0x00, 0x01, 0x38, 0x80, // RTP ts, counts
    0x81, 0xca, 0x00, 0x04, // SDES, SC=1, length 4 (20 bytes)
    0x11, 0x22, 0x33, 0x44, // chunk SSRC
    0x01, 0x07, b'f', b's', b'@', b'h', b'o', b's', b't', // CNAME, 7 bytes
    0x00, 0x00, 0x00, // END and padding to the word boundary
];

/// A receiver report, an SDES with a 38-byte CNAME (so the END octet needs a
/// word of its own) and a BYE: a compound captured from a WebRTC endpoint
/// (as published in the test suite of pion/rtcp).
const CAPTURED_RR_SDES_BYE: [u8; 92] = [
    0x81, 0xc9, 0x00, 0x07, 0x90, 0x2f, 0x9e, 0x2e, 0xbc, 0x5e, 0x9a, 0x40, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x46, 0xe1, 0x00, 0x00, 0x01, 0x11, 0x09, 0xf3, 0x64, 0x32, 0x00, 0x02, 0x4a, 0x79,
    0x81, 0xca, 0x00, 0x0c, 0x90, 0x2f, 0x9e, 0x2e, 0x01, 0x26, 0x7b, 0x39, 0x63, 0x30, 0x30, 0x65,
    0x62, 0x39, 0x32, 0x2d, 0x31, 0x61, 0x66, 0x62, 0x2d, 0x39, 0x64, 0x34, 0x39, 0x2d, 0x61, 0x34,
    0x37, 0x64, 0x2d, 0x39, 0x31, 0x66, 0x36, 0x34, 0x65, 0x65, 0x65, 0x36, 0x39, 0x66, 0x35, 0x7d,
    0x00, 0x00, 0x00, 0x00, 0x81, 0xcb, 0x00, 0x01, 0x90, 0x2f, 0x9e, 0x2e,
];

fn emit_to_vec(repr: &RtcpRepr<'_>) -> Vec<u8> {
    let mut buffer = vec![0xee; repr.buffer_len()];
    assert_eq!(repr.emit(&mut buffer).unwrap(), buffer.len());
    buffer
}

#[test]
fn sender_report_both_ways() {
    let packet = Packet::new_checked(&SR[..]).unwrap();
    assert_eq!(packet.version(), 2);
    assert_eq!(packet.count(), 1);
    assert_eq!(packet.packet_type(), PT_SENDER_REPORT);
    assert_eq!(packet.length(), 12);
    assert_eq!(packet.packet_len(), 52);
    let blocks = [BLOCK];
    let expected = RtcpRepr::SenderReport(SenderReport {
        ssrc: 0x1122_3344,
        sender_info: SENDER_INFO,
        reports: ItemList::from_slice(&blocks),
        extension: &[],
    });
    let parsed = RtcpRepr::parse(&packet).unwrap();
    assert_eq!(parsed, expected);
    let RtcpRepr::SenderReport(report) = parsed else {
        unreachable!()
    };
    assert_eq!(report.reports.iter().collect::<Vec<_>>(), [BLOCK]);
    assert_eq!(report.sender_info.ntp_timestamp.compact(), BLOCK.last_sr);
    assert_eq!(emit_to_vec(&expected), SR);
}

#[test]
fn receiver_reports_both_ways() {
    // Empty RR: nothing received yet.
    let empty = [0x80, 0xc9, 0x00, 0x01, 0x00, 0x00, 0x00, 0x2a];
    let repr = RtcpRepr::ReceiverReport(ReceiverReport {
        ssrc: 42,
        reports: ItemList::empty(),
        extension: &[],
    });
    assert_eq!(RtcpRepr::parse_bytes(&empty).unwrap(), repr);
    assert_eq!(emit_to_vec(&repr), empty);

    // One block and a one-word profile-specific extension.
    let mut with_extension = vec![0x81, 0xc9, 0x00, 0x08, 0x00, 0x00, 0x00, 0x2a];
    with_extension.extend_from_slice(&SR[28..]);
    with_extension.extend_from_slice(&[0xca, 0xfe, 0xba, 0xbe]);
    let blocks = [BLOCK];
    let repr = RtcpRepr::ReceiverReport(ReceiverReport {
        ssrc: 42,
        reports: ItemList::from_slice(&blocks),
        extension: &[0xca, 0xfe, 0xba, 0xbe],
    });
    assert_eq!(RtcpRepr::parse_bytes(&with_extension).unwrap(), repr);
    assert_eq!(emit_to_vec(&repr), with_extension);
}

#[test]
fn compound_sender_report_and_cname_both_ways() {
    let compound = CompoundPacket::new_checked(&SR_SDES[..]).unwrap();
    let parsed: Vec<_> = compound.packets().map(Result::unwrap).collect();
    let items = [SdesItem {
        kind: SDES_CNAME,
        value: b"fs@host",
    }];
    let chunks = [SdesChunk {
        ssrc: 0x1122_3344,
        items: ItemList::from_slice(&items),
    }];
    let expected = [
        RtcpRepr::SenderReport(SenderReport {
            ssrc: 0x1122_3344,
            sender_info: SENDER_INFO,
            reports: ItemList::empty(),
            extension: &[],
        }),
        RtcpRepr::SourceDescription(SourceDescription {
            chunks: ItemList::from_slice(&chunks),
        }),
    ];
    assert_eq!(parsed, expected);
    let RtcpRepr::SourceDescription(description) = parsed[1] else {
        unreachable!()
    };
    assert_eq!(description.cname(0x1122_3344), Some(&b"fs@host"[..]));
    assert_eq!(description.cname(1), None);

    assert_eq!(compound_len(&expected), 48);
    let mut buffer = [0xee; 48];
    assert_eq!(emit_compound(&expected, &mut buffer).unwrap(), 48);
    assert_eq!(buffer, SR_SDES);
}

#[test]
fn captured_compound_parses_and_reemits_identically() {
    let compound = CompoundPacket::new_checked(&CAPTURED_RR_SDES_BYE[..]).unwrap();
    let parsed: Vec<_> = compound.packets().collect::<Result<_, _>>().unwrap();
    assert_eq!(parsed.len(), 3);
    let RtcpRepr::ReceiverReport(report) = parsed[0] else {
        panic!("{:?}", parsed[0])
    };
    assert_eq!(report.ssrc, 0x902f_9e2e);
    assert_eq!(
        report.reports.iter().collect::<Vec<_>>(),
        [ReportBlock {
            ssrc: 0xbc5e_9a40,
            fraction_lost: 0,
            cumulative_lost: 0,
            extended_highest_seq: 0x46e1,
            jitter: 273,
            last_sr: 0x09f3_6432,
            delay_since_last_sr: 150_137,
        }]
    );
    let RtcpRepr::SourceDescription(description) = parsed[1] else {
        panic!("{:?}", parsed[1])
    };
    assert_eq!(
        description.cname(0x902f_9e2e),
        Some(&b"{9c00eb92-1afb-9d49-a47d-91f64eee69f5}"[..])
    );
    assert_eq!(
        parsed[2],
        RtcpRepr::Other {
            packet_type: PT_BYE,
            count: 1,
            body: &[0x90, 0x2f, 0x9e, 0x2e]
        }
    );
    let mut buffer = [0; 92];
    assert_eq!(emit_compound(&parsed, &mut buffer).unwrap(), 92);
    assert_eq!(buffer, CAPTURED_RR_SDES_BYE);
}

#[test]
fn padding_is_stripped_from_the_body() {
    // RR with no blocks, padded by one word.
    let padded = [
        0xa0, 0xc9, 0x00, 0x02, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x04,
    ];
    let packet = Packet::new_checked(&padded[..]).unwrap();
    assert_eq!(packet.padding_len(), 4);
    assert_eq!(packet.body(), [0, 0, 0, 0x2a]);
    assert_eq!(
        RtcpRepr::parse(&packet).unwrap(),
        RtcpRepr::ReceiverReport(ReceiverReport {
            ssrc: 42,
            reports: ItemList::empty(),
            extension: &[]
        })
    );
}

#[test]
fn malformed_packets_give_specific_errors() {
    assert_eq!(
        RtcpRepr::parse_bytes(&SR[..3]),
        Err(RtcpError::Truncated { len: 3 })
    );
    let mut version_1 = SR;
    version_1[0] = 0x41;
    assert_eq!(
        RtcpRepr::parse_bytes(&version_1),
        Err(RtcpError::BadVersion { version: 1 })
    );

    // The length field claims one more word than there is.
    let mut too_long = SR;
    too_long[3] = 13;
    assert_eq!(
        RtcpRepr::parse_bytes(&too_long),
        Err(RtcpError::LengthExceedsBuffer {
            length: 13,
            needed: 56,
            available: 52
        })
    );
    // The length field leaves no room for the report block RC announces.
    let mut too_short = SR;
    too_short[3] = 6;
    assert_eq!(
        RtcpRepr::parse_bytes(&too_short),
        Err(RtcpError::ReportTooShort {
            packet_type: 200,
            count: 1,
            needed: 52,
            len: 28
        })
    );
    // An RR with RC = 2 but one block.
    let mut rr = vec![0x82, 0xc9, 0x00, 0x07, 0, 0, 0, 1];
    rr.extend_from_slice(&SR[28..]);
    assert_eq!(
        RtcpRepr::parse_bytes(&rr),
        Err(RtcpError::ReportTooShort {
            packet_type: 201,
            count: 2,
            needed: 56,
            len: 32
        })
    );
    // An SR whose length field says 1 word: not even the SSRC.
    assert_eq!(
        RtcpRepr::parse_bytes(&[0x80, 0xc8, 0x00, 0x01, 0, 0, 0, 1]),
        Err(RtcpError::ReportTooShort {
            packet_type: 200,
            count: 0,
            needed: 28,
            len: 8
        })
    );

    let zero_padding = [0xa0, 0xc9, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00];
    assert_eq!(
        RtcpRepr::parse_bytes(&zero_padding),
        Err(RtcpError::ZeroPadding)
    );
    let long_padding = [0xa0, 0xc9, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05];
    assert_eq!(
        RtcpRepr::parse_bytes(&long_padding),
        Err(RtcpError::PaddingTooLong {
            padding: 5,
            available: 4
        })
    );

    // SDES whose item fills the chunk with no END octet.
    let no_end = [0x81, 0xca, 0x00, 0x02, 0, 0, 0, 1, 0x01, 0x02, b'a', b'b'];
    assert_eq!(
        RtcpRepr::parse_bytes(&no_end),
        Err(RtcpError::SdesChunkTruncated { chunk: 0 })
    );
    // SDES item length running past the packet.
    let long_item = [0x81, 0xca, 0x00, 0x02, 0, 0, 0, 1, 0x01, 0x09, b'a', 0];
    assert_eq!(
        RtcpRepr::parse_bytes(&long_item),
        Err(RtcpError::SdesChunkTruncated { chunk: 0 })
    );
    // SC = 2 but one chunk.
    let mut one_chunk = SR_SDES[28..].to_vec();
    one_chunk[0] = 0x82;
    assert_eq!(
        RtcpRepr::parse_bytes(&one_chunk),
        Err(RtcpError::SdesChunkTruncated { chunk: 1 })
    );
    // SC = 0 with a chunk.
    let mut extra_chunk = SR_SDES[28..].to_vec();
    extra_chunk[0] = 0x80;
    assert_eq!(
        RtcpRepr::parse_bytes(&extra_chunk),
        Err(RtcpError::SdesTrailingBytes {
            count: 0,
            trailing: 16
        })
    );
}

#[test]
fn compound_validity_checks_of_appendix_a2() {
    let check = |bytes: &[u8]| CompoundPacket::new_checked(bytes).map(|_| ());
    assert_eq!(check(&[]), Err(RtcpError::EmptyCompound));
    assert_eq!(
        check(&SR_SDES[28..]),
        Err(RtcpError::FirstNotReport { packet_type: 202 })
    );
    // Padding on the first of two packets.
    let mut padded_first = SR_SDES;
    padded_first[0] |= 0x20;
    padded_first[27] = 4;
    assert_eq!(
        check(&padded_first),
        Err(RtcpError::PaddingNotLast { index: 0 })
    );
    // Padding on the last is fine.
    let mut padded_last = SR_SDES.to_vec();
    padded_last[28] |= 0x20;
    padded_last[31] = 5;
    padded_last.extend_from_slice(&[0, 0, 0, 4]);
    assert_eq!(check(&padded_last), Ok(()));
    // The lengths must add up to the datagram: two stray bytes at the end.
    let mut stray = SR_SDES.to_vec();
    stray.extend_from_slice(&[0x80, 0xc9]);
    assert_eq!(check(&stray), Err(RtcpError::Truncated { len: 2 }));
    // The second packet's length runs past the datagram.
    assert_eq!(
        check(&SR_SDES[..44]),
        Err(RtcpError::LengthExceedsBuffer {
            length: 4,
            needed: 20,
            available: 16
        })
    );
}

#[test]
fn lenient_iteration_reports_body_errors_and_stops_at_header_errors() {
    let mut bytes = vec![0x81, 0xc9, 0x00, 0x01, 0, 0, 0, 1]; // RR, RC=1, no block
    bytes.extend_from_slice(&SR_SDES[28..]);
    bytes.extend_from_slice(&[0x40, 0, 0, 0]); // version 1
    bytes.extend_from_slice(&SR_SDES[28..]);
    let results: Vec<_> = packets(&bytes).collect();
    assert_eq!(results.len(), 3);
    assert!(matches!(results[0], Err(RtcpError::ReportTooShort { .. })));
    assert!(matches!(results[1], Ok(RtcpRepr::SourceDescription(_))));
    assert_eq!(results[2], Err(RtcpError::BadVersion { version: 1 }));
}

#[test]
fn emit_refuses_what_cannot_be_written() {
    let mut buffer = [0; 2048];
    let bad_loss = [ReportBlock {
        cumulative_lost: 0x80_0000,
        ..BLOCK
    }];
    let repr = RtcpRepr::ReceiverReport(ReceiverReport {
        ssrc: 1,
        reports: ItemList::from_slice(&bad_loss),
        extension: &[],
    });
    assert_eq!(
        repr.emit(&mut buffer),
        Err(RtcpError::CumulativeLostOutOfRange { lost: 0x80_0000 })
    );
    let many = [BLOCK; 32];
    let repr = RtcpRepr::ReceiverReport(ReceiverReport {
        ssrc: 1,
        reports: ItemList::from_slice(&many),
        extension: &[],
    });
    assert_eq!(
        repr.emit(&mut buffer),
        Err(RtcpError::TooManyItems { count: 32 })
    );
    let repr = RtcpRepr::SenderReport(SenderReport {
        ssrc: 1,
        sender_info: SENDER_INFO,
        reports: ItemList::empty(),
        extension: &[1, 2],
    });
    assert_eq!(
        repr.emit(&mut buffer),
        Err(RtcpError::NotWordAligned {
            what: "profile-specific extension",
            len: 2
        })
    );
    let repr = RtcpRepr::Other {
        packet_type: PT_APP,
        count: 0,
        body: &[1, 2, 3],
    };
    assert_eq!(
        repr.emit(&mut buffer),
        Err(RtcpError::NotWordAligned {
            what: "packet body",
            len: 3
        })
    );
    let repr = RtcpRepr::Other {
        packet_type: PT_APP,
        count: 32,
        body: &[],
    };
    assert_eq!(
        repr.emit(&mut buffer),
        Err(RtcpError::TooManyItems { count: 32 })
    );
    let long = [b'x'; 256];
    let items = [SdesItem {
        kind: SDES_CNAME,
        value: &long,
    }];
    let chunks = [SdesChunk {
        ssrc: 1,
        items: ItemList::from_slice(&items),
    }];
    let repr = RtcpRepr::SourceDescription(SourceDescription {
        chunks: ItemList::from_slice(&chunks),
    });
    assert_eq!(
        repr.emit(&mut buffer),
        Err(RtcpError::SdesItemTooLong { len: 256 })
    );
    let items = [SdesItem {
        kind: 0,
        value: b"",
    }];
    let chunks = [SdesChunk {
        ssrc: 1,
        items: ItemList::from_slice(&items),
    }];
    let repr = RtcpRepr::SourceDescription(SourceDescription {
        chunks: ItemList::from_slice(&chunks),
    });
    assert_eq!(repr.emit(&mut buffer), Err(RtcpError::SdesItemTypeZero));
    let huge = vec![0; MAX_PACKET_LEN];
    let repr = RtcpRepr::Other {
        packet_type: PT_APP,
        count: 0,
        body: &huge,
    };
    assert_eq!(
        repr.emit(&mut buffer),
        Err(RtcpError::PacketTooLong {
            len: MAX_PACKET_LEN + 4
        })
    );
    let repr = RtcpRepr::parse_bytes(&SR).unwrap();
    assert_eq!(
        repr.emit(&mut buffer[..51]),
        Err(RtcpError::BufferTooShort {
            needed: 52,
            len: 51
        })
    );
}

#[test]
fn cumulative_loss_is_24_bit_signed_and_clamped() {
    assert_eq!(clamp_cumulative_lost(10_000_000), 0x7f_ffff);
    assert_eq!(clamp_cumulative_lost(-10_000_000), -0x80_0000);
    assert_eq!(clamp_cumulative_lost(-5), -5);
    for (lost, wire) in [
        (0x7f_ffff, [0x7f, 0xff, 0xff]),
        (-0x80_0000, [0x80, 0x00, 0x00]),
    ] {
        let blocks = [ReportBlock {
            cumulative_lost: lost,
            ..BLOCK
        }];
        let repr = RtcpRepr::ReceiverReport(ReceiverReport {
            ssrc: 1,
            reports: ItemList::from_slice(&blocks),
            extension: &[],
        });
        let bytes = emit_to_vec(&repr);
        assert_eq!(bytes[13..16], wire);
        assert_eq!(RtcpRepr::parse_bytes(&bytes).unwrap(), repr);
    }
}

#[test]
fn ntp_and_round_trip_time() {
    let ntp = NtpTimestamp::from_parts(0xe8d4_a510, 0x8000_0000);
    assert_eq!(ntp, SENDER_INFO.ntp_timestamp);
    assert_eq!(
        (ntp.seconds(), ntp.fraction(), ntp.compact()),
        (0xe8d4_a510, 0x8000_0000, 0xa510_8000)
    );
    assert_eq!(
        compact_ntp_to_duration(0x0001_8000),
        Duration::from_millis(1500)
    );
    assert_eq!(
        duration_to_compact_ntp(Duration::from_millis(1500)),
        0x0001_8000
    );
    assert_eq!(
        duration_to_compact_ntp(Duration::from_secs(1 << 20)),
        u32::MAX
    );
    // RFC 3550 §6.4.1 example: A = 0xb710:8000 (46864.5 s), LSR = 0xb705:2000
    // (46853.125 s), DLSR = 0x0005:4000 (5.25 s) gives 6.125 s.
    let block = ReportBlock {
        last_sr: 0xb705_2000,
        delay_since_last_sr: 0x0005_4000,
        ..BLOCK
    };
    assert_eq!(
        block.round_trip_time(0xb710_8000),
        Some(Duration::from_millis(6125))
    );
    assert_eq!(block.round_trip_time(0xb705_2000), None, "negative");
    assert_eq!(
        ReportBlock {
            last_sr: 0,
            ..block
        }
        .round_trip_time(0xb710_8000),
        None
    );
}

#[test]
fn rtp_and_rtcp_are_told_apart_by_the_second_octet() {
    assert!(is_rtcp(&SR));
    assert!(is_rtcp(&[0x80, 223]));
    assert!(!is_rtcp(&[0x80, 0x60]), "RTP, PT 96");
    assert!(!is_rtcp(&[0x80, 0xe0]), "RTP, marker and PT 96");
    assert!(!is_rtcp(&[0x80, 191]));
    assert!(!is_rtcp(&[0x80]));
}

prop_compose! {
    fn report_block()(
        ssrc in any::<u32>(),
        fraction_lost in any::<u8>(),
        cumulative_lost in -0x80_0000i32..=0x7f_ffff,
        extended_highest_seq in any::<u32>(),
        jitter in any::<u32>(),
        last_sr in any::<u32>(),
        delay_since_last_sr in any::<u32>(),
    ) -> ReportBlock {
        ReportBlock { ssrc, fraction_lost, cumulative_lost, extended_highest_seq, jitter, last_sr, delay_since_last_sr }
    }
}

/// Owned SDES content: (SSRC, [(kind, value)]) per chunk.
type OwnedChunks = Vec<(u32, Vec<(u8, Vec<u8>)>)>;

fn sdes_chunks() -> impl Strategy<Value = OwnedChunks> {
    proptest::collection::vec(
        (
            any::<u32>(),
            proptest::collection::vec(
                (1u8..=8, proptest::collection::vec(any::<u8>(), 0..40)),
                0..5,
            ),
        ),
        0..=31,
    )
}

proptest! {
    #[test]
    fn reports_round_trip(
        ssrc in any::<u32>(),
        ntp in any::<u64>(),
        rtp_timestamp in any::<u32>(),
        packet_count in any::<u32>(),
        octet_count in any::<u32>(),
        blocks in proptest::collection::vec(report_block(), 0..=31),
        extension_words in 0usize..4,
        sender in any::<bool>(),
    ) {
        let extension: Vec<u8> = (0..4 * extension_words).map(|i| i as u8).collect();
        let reports = ItemList::from_slice(&blocks);
        let repr = if sender {
            RtcpRepr::SenderReport(SenderReport {
                ssrc,
                sender_info: SenderInfo {
                    ntp_timestamp: NtpTimestamp(ntp),
                    rtp_timestamp,
                    packet_count,
                    octet_count,
                },
                reports,
                extension: &extension,
            })
        } else {
            RtcpRepr::ReceiverReport(ReceiverReport { ssrc, reports, extension: &extension })
        };
        let bytes = emit_to_vec(&repr);
        prop_assert_eq!(RtcpRepr::parse_bytes(&bytes).unwrap(), repr);
    }

    #[test]
    fn sdes_round_trips(owned in sdes_chunks()) {
        let items: Vec<Vec<SdesItem<'_>>> = owned
            .iter()
            .map(|(_, items)| items.iter().map(|(kind, value)| SdesItem { kind: *kind, value }).collect())
            .collect();
        let chunks: Vec<SdesChunk<'_>> = owned
            .iter()
            .zip(&items)
            .map(|((ssrc, _), items)| SdesChunk { ssrc: *ssrc, items: ItemList::from_slice(items) })
            .collect();
        let repr = RtcpRepr::SourceDescription(SourceDescription { chunks: ItemList::from_slice(&chunks) });
        let bytes = emit_to_vec(&repr);
        prop_assert_eq!(bytes.len() % 4, 0);
        prop_assert_eq!(RtcpRepr::parse_bytes(&bytes).unwrap(), repr);
    }

    #[test]
    fn random_bytes_never_panic_and_unpadded_packets_reemit_identically(
        bytes in proptest::collection::vec(any::<u8>(), 0..2000),
        header in proptest::option::of((0u8..32, 200u8..=204)),
    ) {
        let mut bytes = bytes;
        // Often give the random bytes a plausible header so parsing goes deep.
        if let (Some((count, packet_type)), true) = (header, bytes.len() >= 4) {
            let words = (bytes.len() / 4 - 1).min(usize::from(u16::MAX)) as u16;
            bytes[0] = 0x80 | count;
            bytes[1] = packet_type;
            bytes[2..4].copy_from_slice(&words.to_be_bytes());
        }
        let _ = CompoundPacket::new_checked(&bytes[..]);
        let mut rest = &bytes[..];
        for result in packets(&bytes) {
            let packet = Packet::new_checked(rest);
            let Ok(repr) = result else { break };
            let packet = packet.unwrap();
            let length = packet.packet_len();
            match repr {
                RtcpRepr::SenderReport(report) => { let _ = report.reports.iter().count(); }
                RtcpRepr::ReceiverReport(report) => { let _ = report.reports.iter().count(); }
                RtcpRepr::SourceDescription(description) => {
                    for chunk in description.chunks.iter() {
                        let _ = (chunk.cname(), chunk.items.iter().count());
                    }
                }
                RtcpRepr::Other { .. } => {}
            }
            if !packet.has_padding() {
                let again = emit_to_vec(&repr);
                prop_assert_eq!(&again[..], &rest[..length]);
            }
            rest = &rest[length..];
        }
    }
}
