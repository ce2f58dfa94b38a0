use super::*;
use proptest::prelude::*;

/// V=2 P=1 X=1 CC=2, M=1 PT=96, seq 0x1234, ts 0xDEADBEEF, SSRC 0x11223344,
/// two CSRCs, a one-word extension with profile 0xBEDE, a 3-byte payload and
/// 3 bytes of padding.
const FULL: [u8; 34] = [
    0xb2, 0xe0, 0x12, 0x34, // V P X CC | M PT | sequence number
    0xde, 0xad, 0xbe, 0xef, // timestamp
    0x11, 0x22, 0x33, 0x44, // SSRC
    0xaa, 0xbb, 0xcc, 0xdd, // CSRC 1
    0x01, 0x02, 0x03, 0x04, // CSRC 2
    0xbe, 0xde, 0x00, 0x01, // extension: profile, length 1 word
    0x10, 0x20, 0x30, 0x40, // extension data
    0x01, 0x02, 0x03, // payload
    0x00, 0x00, 0x03, // padding, count 3
];

fn full_repr() -> RtpRepr<'static> {
    RtpRepr {
        marker: true,
        payload_type: 96,
        sequence_number: 0x1234,
        timestamp: 0xdead_beef,
        ssrc: 0x1122_3344,
        csrcs: CsrcList::from_slice(&[0xaabb_ccdd, 0x0102_0304]).unwrap(),
        extension: Some(HeaderExtension {
            profile: 0xbede,
            data: &[0x10, 0x20, 0x30, 0x40],
        }),
        payload: &[1, 2, 3],
        padding_len: 3,
    }
}

/// The plainest packet: no CSRC, no extension, no padding.
const PLAIN: [u8; 14] = [
    0x80, 0x60, 0x00, 0x01, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x2a, 0x65, 0x66,
];

#[test]
fn full_packet_parses_field_by_field() {
    let packet = Packet::new_checked(&FULL[..]).unwrap();
    assert_eq!(packet.version(), 2);
    assert!(packet.has_padding());
    assert!(packet.has_extension());
    assert_eq!(packet.csrc_count(), 2);
    assert!(packet.marker());
    assert_eq!(packet.payload_type(), 96);
    assert_eq!(packet.sequence_number(), 0x1234);
    assert_eq!(packet.timestamp(), 0xdead_beef);
    assert_eq!(packet.ssrc(), 0x1122_3344);
    assert_eq!(
        packet.csrcs().collect::<Vec<_>>(),
        [0xaabb_ccdd, 0x0102_0304]
    );
    assert_eq!(
        packet.extension(),
        Some(HeaderExtension {
            profile: 0xbede,
            data: &[0x10, 0x20, 0x30, 0x40]
        })
    );
    assert_eq!(packet.header_len(), 28);
    assert_eq!(packet.padding_len(), 3);
    assert_eq!(packet.payload(), [1, 2, 3]);
    assert_eq!(RtpRepr::parse(&packet).unwrap(), full_repr());
}

#[test]
fn full_packet_emits_the_same_bytes() {
    let repr = full_repr();
    assert_eq!(repr.buffer_len(), FULL.len());
    let mut buffer = [0xff; 40];
    assert_eq!(repr.emit(&mut buffer).unwrap(), FULL.len());
    assert_eq!(buffer[..FULL.len()], FULL);
    // Bytes past the packet are left alone.
    assert!(buffer[FULL.len()..].iter().all(|&b| b == 0xff));
}

#[test]
fn plain_packet_both_ways() {
    let repr = RtpRepr::parse_bytes(&PLAIN).unwrap();
    let expected = RtpRepr {
        marker: false,
        payload_type: 96,
        sequence_number: 1,
        timestamp: 100,
        ssrc: 42,
        csrcs: CsrcList::new(),
        extension: None,
        payload: b"ef",
        padding_len: 0,
    };
    assert_eq!(repr, expected);
    let mut buffer = [0; 14];
    assert_eq!(expected.emit(&mut buffer).unwrap(), 14);
    assert_eq!(buffer, PLAIN);
}

#[test]
fn setters_rewrite_fields_in_place() {
    let mut bytes = FULL;
    let mut packet = Packet::new_checked(&mut bytes[..]).unwrap();
    packet.set_sequence_number(0xfffe);
    packet.set_timestamp(7);
    packet.set_ssrc(9);
    packet.set_marker(false);
    packet.set_payload_type(0xff);
    packet.payload_mut().copy_from_slice(&[7, 8, 9]);
    assert_eq!(packet.sequence_number(), 0xfffe);
    assert_eq!(packet.timestamp(), 7);
    assert_eq!(packet.ssrc(), 9);
    assert!(!packet.marker());
    assert_eq!(packet.payload_type(), 0x7f);
    assert_eq!(packet.payload(), [7, 8, 9]);
    assert_eq!(bytes[0], 0xb2, "the first byte is untouched");
    assert_eq!(bytes[31..], [0, 0, 3], "the padding is untouched");
}

#[test]
fn padding_only_packet_has_an_empty_payload() {
    let mut bytes = PLAIN[..12].to_vec();
    bytes[0] |= 0x20;
    bytes.extend_from_slice(&[0, 0, 3]);
    let repr = RtpRepr::parse_bytes(&bytes).unwrap();
    assert_eq!(repr.payload, b"");
    assert_eq!(repr.padding_len, 3);
}

#[test]
fn malformed_packets_give_specific_errors() {
    let parse = |bytes: &[u8]| Packet::new_checked(bytes).map(|_| ());
    assert_eq!(parse(&PLAIN[..11]), Err(RtpError::Truncated { len: 11 }));
    assert_eq!(parse(&[]), Err(RtpError::Truncated { len: 0 }));

    let mut version_1 = PLAIN;
    version_1[0] = 0x40;
    assert_eq!(parse(&version_1), Err(RtpError::BadVersion { version: 1 }));
    assert_eq!(parse(&[0; 12]), Err(RtpError::BadVersion { version: 0 }));
    let mut version_3 = PLAIN;
    version_3[0] = 0xc0;
    assert_eq!(parse(&version_3), Err(RtpError::BadVersion { version: 3 }));

    // CC = 3 needs 24 bytes; the packet has 20.
    let mut csrc = [0u8; 20];
    csrc[0] = 0x83;
    assert_eq!(
        parse(&csrc),
        Err(RtpError::CsrcListTruncated {
            count: 3,
            needed: 24,
            len: 20
        })
    );
    // CC = 15 with nothing after the fixed header.
    let mut csrc15 = PLAIN;
    csrc15[0] = 0x8f;
    assert_eq!(
        parse(&csrc15),
        Err(RtpError::CsrcListTruncated {
            count: 15,
            needed: 72,
            len: 14
        })
    );

    // X set, but only two bytes of the extension header.
    let mut extension_header = PLAIN;
    extension_header[0] = 0x90;
    assert_eq!(
        parse(&extension_header),
        Err(RtpError::ExtensionHeaderTruncated {
            offset: 12,
            len: 14
        })
    );
    // X set, extension length 2 words but only one present.
    let mut extension = PLAIN[..12].to_vec();
    extension[0] = 0x90;
    extension.extend_from_slice(&[0xbe, 0xde, 0x00, 0x02, 1, 2, 3, 4]);
    assert_eq!(
        parse(&extension),
        Err(RtpError::ExtensionTruncated {
            words: 2,
            end: 24,
            len: 20
        })
    );
    // The full vector with one byte cut off the end loses its padding count.
    assert!(parse(&FULL[..33]).is_err());

    // P set, padding count 0.
    let mut zero_padding = PLAIN.to_vec();
    zero_padding[0] |= 0x20;
    zero_padding.push(0);
    assert_eq!(parse(&zero_padding), Err(RtpError::ZeroPadding));
    // P set, padding count 5 but only 3 bytes after the header.
    let mut long_padding = PLAIN.to_vec();
    long_padding[0] |= 0x20;
    long_padding.push(5);
    assert_eq!(
        parse(&long_padding),
        Err(RtpError::PaddingTooLong {
            padding: 5,
            available: 3,
            header_len: 12
        })
    );
    // P set with nothing after the header at all.
    let mut no_room = PLAIN[..12].to_vec();
    no_room[0] |= 0x20;
    assert_eq!(
        parse(&no_room),
        Err(RtpError::PaddingTooLong {
            padding: 0x2a,
            available: 0,
            header_len: 12
        })
    );
    // Padding may not eat into the extension.
    let mut into_extension = FULL;
    into_extension[33] = 7;
    assert_eq!(
        parse(&into_extension),
        Err(RtpError::PaddingTooLong {
            padding: 7,
            available: 6,
            header_len: 28
        })
    );
}

#[test]
fn emit_refuses_what_cannot_be_written() {
    let mut buffer = [0; 64];
    let bad_type = RtpRepr {
        payload_type: 128,
        ..full_repr()
    };
    assert_eq!(
        bad_type.emit(&mut buffer),
        Err(RtpError::PayloadTypeOutOfRange { payload_type: 128 })
    );
    let unaligned = RtpRepr {
        extension: Some(HeaderExtension {
            profile: 1,
            data: &[1, 2, 3],
        }),
        ..full_repr()
    };
    assert_eq!(
        unaligned.emit(&mut buffer),
        Err(RtpError::ExtensionNotWordAligned { len: 3 })
    );
    let long = vec![0; MAX_EXTENSION_DATA_LEN + 4];
    let too_long = RtpRepr {
        extension: Some(HeaderExtension {
            profile: 1,
            data: &long,
        }),
        ..full_repr()
    };
    assert_eq!(
        too_long.emit(&mut buffer),
        Err(RtpError::ExtensionTooLong {
            len: MAX_EXTENSION_DATA_LEN + 4
        })
    );
    assert_eq!(
        full_repr().emit(&mut buffer[..33]),
        Err(RtpError::BufferTooShort {
            needed: 34,
            len: 33
        })
    );
    assert_eq!(
        CsrcList::from_slice(&[0; 16]),
        Err(RtpError::TooManyCsrcs { count: 16 })
    );
    let mut list = CsrcList::from_slice(&[0; 15]).unwrap();
    assert!(list.push(1).is_err());
    assert_eq!(list.len(), 15);
}

#[test]
fn sequence_arithmetic_wraps() {
    assert_eq!(sequence_delta(65535, 0), 1);
    assert_eq!(sequence_delta(0, 65535), -1);
    assert_eq!(sequence_delta(100, 90), -10);
    assert!(sequence_precedes(65535, 0));
    assert!(!sequence_precedes(0, 65535));
    assert!(!sequence_precedes(5, 5));
    assert!(!sequence_precedes(0, 32768) && !sequence_precedes(32768, 0));
    assert!(sequence_precedes(0, 32767));
}

#[test]
fn tracker_needs_two_sequential_packets_then_extends_across_the_wrap() {
    let mut tracker = SequenceTracker::default();
    assert_eq!(tracker.update(65534), SequenceUpdate::Probation);
    assert!(!tracker.is_valid());
    assert_eq!(
        tracker.update(65535),
        SequenceUpdate::Valid { extended: 65535 }
    );
    assert!(tracker.is_valid());
    assert_eq!(tracker.update(0), SequenceUpdate::Valid { extended: 65536 });
    assert_eq!(tracker.update(1), SequenceUpdate::Valid { extended: 65537 });
    assert_eq!(tracker.extended_max(), 65537);
    assert_eq!(tracker.expected(), 3);
    assert_eq!(tracker.received(), 3);
    assert_eq!(tracker.cumulative_lost(), 0);
}

#[test]
fn probation_restarts_on_a_non_sequential_packet() {
    let mut tracker = SequenceTracker::default();
    assert_eq!(tracker.update(10), SequenceUpdate::Probation);
    assert_eq!(tracker.update(12), SequenceUpdate::Probation);
    assert_eq!(tracker.update(13), SequenceUpdate::Valid { extended: 13 });
    let mut three = SequenceTracker::new(SequenceTrackerConfig {
        min_sequential: 3,
        ..SequenceTrackerConfig::default()
    });
    assert_eq!(three.update(1), SequenceUpdate::Probation);
    assert_eq!(three.update(2), SequenceUpdate::Probation);
    assert_eq!(three.update(3), SequenceUpdate::Valid { extended: 3 });
    let mut one = SequenceTracker::new(SequenceTrackerConfig {
        min_sequential: 0,
        ..SequenceTrackerConfig::default()
    });
    assert_eq!(one.update(0), SequenceUpdate::Valid { extended: 0 });
    assert_eq!(one.update(1), SequenceUpdate::Valid { extended: 1 });
}

#[test]
fn tracker_counts_loss_late_packets_and_fraction_lost() {
    let mut tracker = SequenceTracker::default();
    tracker.update(0);
    tracker.update(1); // valid, base 1
    tracker.update(2);
    assert_eq!(tracker.update(4), SequenceUpdate::Valid { extended: 4 });
    tracker.update(5);
    // Expected 1..=5 = 5, received 4: one lost.
    assert_eq!(tracker.expected(), 5);
    assert_eq!(tracker.cumulative_lost(), 1);
    // A.3: (1 << 8) / 5 = 51.
    assert_eq!(tracker.take_fraction_lost(), 51);
    assert_eq!(
        tracker.take_fraction_lost(),
        0,
        "nothing new in the interval"
    );
    // 3 arrives late: counted, extended number behind the highest.
    assert_eq!(tracker.update(3), SequenceUpdate::Valid { extended: 3 });
    assert_eq!(tracker.cumulative_lost(), 0);
    // A duplicate makes the loss negative, and the fraction stays 0.
    assert_eq!(tracker.update(5), SequenceUpdate::Valid { extended: 5 });
    assert_eq!(tracker.cumulative_lost(), -1);
    assert_eq!(tracker.take_fraction_lost(), 0);
}

#[test]
fn large_jumps_are_ignored_unless_confirmed() {
    let mut tracker = SequenceTracker::default();
    tracker.update(0);
    tracker.update(1);
    // 3000 ahead is MAX_DROPOUT: a jump, not a gap.
    assert_eq!(tracker.update(3001), SequenceUpdate::LargeJump);
    assert_eq!(tracker.update(2), SequenceUpdate::Valid { extended: 2 });
    // 2999 ahead is still a gap.
    assert_eq!(
        tracker.update(3001),
        SequenceUpdate::Valid { extended: 3001 }
    );
    // A jump followed by its successor restarts the count.
    assert_eq!(tracker.update(40000), SequenceUpdate::LargeJump);
    assert_eq!(
        tracker.update(40001),
        SequenceUpdate::Restarted { extended: 40001 }
    );
    assert_eq!(tracker.expected(), 1);
    assert_eq!(tracker.received(), 1);
    assert_eq!(
        tracker.update(40200),
        SequenceUpdate::Valid { extended: 40200 }
    );
    // 99 behind is late; 100 behind (MAX_MISORDER) is a jump.
    assert_eq!(
        tracker.update(40200 - 99),
        SequenceUpdate::Valid {
            extended: 40200 - 99
        }
    );
    assert_eq!(tracker.update(40200 - 100), SequenceUpdate::LargeJump);
    assert_eq!(
        tracker.update(40201),
        SequenceUpdate::Valid { extended: 40201 }
    );
}

#[test]
fn late_packet_from_before_the_start_has_no_extended_number() {
    let mut tracker = SequenceTracker::default();
    tracker.update(1);
    assert_eq!(tracker.update(2), SequenceUpdate::Valid { extended: 2 });
    assert_eq!(tracker.update(65535), SequenceUpdate::PrecedesStart);
    assert_eq!(tracker.update(3), SequenceUpdate::Valid { extended: 3 });
}

/// The owned parts of an arbitrary [`RtpRepr`].
#[derive(Debug, Clone)]
struct ReprParts {
    marker: bool,
    payload_type: u8,
    sequence_number: u16,
    timestamp: u32,
    ssrc: u32,
    csrcs: Vec<u32>,
    extension: Option<(u16, Vec<u8>)>,
    payload: Vec<u8>,
    padding_len: u8,
}

impl ReprParts {
    fn repr(&self) -> RtpRepr<'_> {
        RtpRepr {
            marker: self.marker,
            payload_type: self.payload_type,
            sequence_number: self.sequence_number,
            timestamp: self.timestamp,
            ssrc: self.ssrc,
            csrcs: CsrcList::from_slice(&self.csrcs).unwrap(),
            extension: self
                .extension
                .as_ref()
                .map(|(profile, data)| HeaderExtension {
                    profile: *profile,
                    data,
                }),
            payload: &self.payload,
            padding_len: self.padding_len,
        }
    }
}

prop_compose! {
    fn repr_parts()(
        marker in any::<bool>(),
        payload_type in 0u8..=127,
        sequence_number in any::<u16>(),
        timestamp in any::<u32>(),
        ssrc in any::<u32>(),
        csrcs in proptest::collection::vec(any::<u32>(), 0..=15),
        extension in proptest::option::of(
            (any::<u16>(), (0usize..=8).prop_flat_map(|words| proptest::collection::vec(any::<u8>(), 4 * words)))
        ),
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        padding_len in any::<u8>(),
    ) -> ReprParts {
        ReprParts { marker, payload_type, sequence_number, timestamp, ssrc, csrcs, extension, payload, padding_len }
    }
}

proptest! {
    #[test]
    fn emit_then_parse_round_trips(parts in repr_parts()) {
        let repr = parts.repr();
        let mut buffer = vec![0; repr.buffer_len()];
        prop_assert_eq!(repr.emit(&mut buffer).unwrap(), buffer.len());
        prop_assert_eq!(RtpRepr::parse_bytes(&buffer).unwrap(), repr);
    }

    #[test]
    fn random_bytes_never_panic_and_reparse_to_the_same_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..2000),
        force_version_2 in any::<bool>(),
    ) {
        let mut bytes = bytes;
        if force_version_2 {
            if let Some(first) = bytes.first_mut() {
                *first = (*first & 0x3f) | 0x80;
            }
        }
        let Ok(packet) = Packet::new_checked(&bytes[..]) else { return Ok(()) };
        let _ = (packet.csrcs().count(), packet.extension(), packet.payload());
        let repr = RtpRepr::parse(&packet).unwrap();
        prop_assert_eq!(repr.buffer_len(), bytes.len());
        let mut again = vec![0; bytes.len()];
        repr.emit(&mut again).unwrap();
        // Identical except the padding filler, which emit writes as zeros.
        let filler = bytes.len() - packet.padding_len()..bytes.len().saturating_sub(1);
        for (i, (a, b)) in bytes.iter().zip(&again).enumerate() {
            if !filler.contains(&i) {
                prop_assert_eq!(a, b, "byte {}", i);
            }
        }
    }

    #[test]
    fn in_order_stream_with_gaps_extends_monotonically(
        start in any::<u16>(),
        gaps in proptest::collection::vec(1u16..3000, 1..200),
    ) {
        let mut tracker = SequenceTracker::default();
        prop_assert_eq!(tracker.update(start), SequenceUpdate::Probation);
        let second = start.wrapping_add(1);
        prop_assert_eq!(tracker.update(second), SequenceUpdate::Valid { extended: u64::from(second) });
        let mut extended = u64::from(second);
        let mut seq = second;
        for gap in gaps {
            seq = seq.wrapping_add(gap);
            extended += u64::from(gap);
            prop_assert_eq!(tracker.update(seq), SequenceUpdate::Valid { extended });
        }
        prop_assert_eq!(tracker.extended_max(), extended);
        prop_assert_eq!(tracker.expected(), extended - u64::from(second) + 1);
    }
}
