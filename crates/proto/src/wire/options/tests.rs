//! Option vectors in both directions, malformed input, Mandatory, Ack Vector
//! feedback, and property tests.

use super::*;
use crate::cc::{AckRun, AckState};
use crate::wire::dccp::SeqNum;
use proptest::prelude::*;

mod errors;
pub(crate) mod properties;
use std::time::Duration;

/// Parses `bytes` (an options area, padded to 32 bits) and expects exactly
/// `expected`; then emits `expected` and expects exactly `bytes`.
#[track_caller]
fn both_ways(bytes: &[u8], expected: &[DccpOption]) {
    let parsed = Options::parse(bytes).expect("vector parses");
    assert_eq!(parsed.as_slice(), expected, "bytes -> options");
    let built = Options::from_options(expected.iter().cloned()).expect("vector options are valid");
    assert_eq!(built.to_bytes(), bytes, "options -> bytes");
    assert_eq!(built.padded_len(), bytes.len());
}

#[test]
fn single_byte_options() {
    both_ways(
        &[
            0x00, // Padding (between options: kept)
            0x02, // Slow Receiver
            0x01, // Mandatory ...
            0x02, // ... applying to Slow Receiver
        ],
        &[
            DccpOption::Padding,
            DccpOption::SlowReceiver,
            DccpOption::Mandatory,
            DccpOption::SlowReceiver,
        ],
    );
    // A reserved single-byte type (3) is kept as Unknown with no data.
    both_ways(
        &[0x03, 0x00, 0x00, 0x00],
        &[DccpOption::Unknown {
            kind: 3,
            data: vec![],
        }],
    );
}

#[test]
fn trailing_padding_is_dropped_but_regenerated() {
    // Timestamp (6 bytes) then two bytes of padding to 32 bits.
    both_ways(
        &[0x29, 0x06, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00],
        &[DccpOption::Timestamp(0x0102_0304)],
    );
    // An all-padding area is an empty list.
    assert!(Options::parse(&[0, 0, 0, 0]).expect("parses").is_empty());
}

#[test]
fn padding_after_a_trailing_mandatory_is_kept() {
    // Mandatory applies to the Padding after it, which must not vanish.
    both_ways(
        &[0x01, 0x00, 0x00, 0x00],
        &[DccpOption::Mandatory, DccpOption::Padding],
    );
    let options = Options::parse(&[0x01, 0x00, 0x00, 0x00]).expect("parses");
    assert_eq!(options.check_mandatory(DccpOption::is_understood), Ok(()));
}

#[test]
fn change_and_confirm_for_every_feature() {
    let cases: Vec<(Vec<u8>, DccpOption)> = vec![
        // Change L, length 5, feature 1 (CCID), preference list 2, 3.
        (
            vec![0x20, 0x05, 0x01, 0x02, 0x03, 0, 0, 0],
            DccpOption::ChangeL(Feature::Ccid(vec![2, 3])),
        ),
        // Confirm L, length 4, feature 2 (Allow Short Seqnos), value 1.
        (
            vec![0x21, 0x04, 0x02, 0x01],
            DccpOption::ConfirmL(Feature::AllowShortSeqnos(vec![true])),
        ),
        // Change R, length 9, feature 3 (Sequence Window), 48-bit 100.
        (
            vec![
                0x22, 0x09, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0, 0, 0,
            ],
            DccpOption::ChangeR(Feature::SequenceWindow(Some(100))),
        ),
        // Confirm R, length 5, feature 4 (ECN Incapable), selected 0, list 0.
        (
            vec![0x23, 0x05, 0x04, 0x00, 0x00, 0, 0, 0],
            DccpOption::ConfirmR(Feature::EcnIncapable(vec![false, false])),
        ),
        // Change L, length 5, feature 5 (Ack Ratio), 16-bit 2.
        (
            vec![0x20, 0x05, 0x05, 0x00, 0x02, 0, 0, 0],
            DccpOption::ChangeL(Feature::AckRatio(Some(2))),
        ),
        // Change R, length 5, feature 6 (Send Ack Vector), list 1, 0.
        (
            vec![0x22, 0x05, 0x06, 0x01, 0x00, 0, 0, 0],
            DccpOption::ChangeR(Feature::SendAckVector(vec![true, false])),
        ),
        // Confirm L, length 4, feature 7 (Send NDP Count), 1.
        (
            vec![0x21, 0x04, 0x07, 0x01],
            DccpOption::ConfirmL(Feature::SendNdpCount(vec![true])),
        ),
        // Change L, length 5, feature 8 (Minimum Checksum Coverage), 4, 0.
        (
            vec![0x20, 0x05, 0x08, 0x04, 0x00, 0, 0, 0],
            DccpOption::ChangeL(Feature::MinimumChecksumCoverage(vec![4, 0])),
        ),
        // Confirm R, length 4, feature 9 (Check Data Checksum), 0.
        (
            vec![0x23, 0x04, 0x09, 0x00],
            DccpOption::ConfirmR(Feature::CheckDataChecksum(vec![false])),
        ),
        // Change L, length 6, CCID-specific feature 200, raw 1 2 3.
        (
            vec![0x20, 0x06, 0xC8, 0x01, 0x02, 0x03, 0, 0],
            DccpOption::ChangeL(Feature::Unknown {
                number: 200,
                value: vec![1, 2, 3],
            }),
        ),
        // Empty Confirm L for Sequence Window (length 3: feature number only).
        (
            vec![0x21, 0x03, 0x03, 0],
            DccpOption::ConfirmL(Feature::SequenceWindow(None)),
        ),
        // Empty Confirm R for reserved feature 12 (not understood).
        (
            vec![0x23, 0x03, 0x0C, 0],
            DccpOption::ConfirmR(Feature::Unknown {
                number: 12,
                value: vec![],
            }),
        ),
    ];
    for (bytes, option) in cases {
        both_ways(&bytes, &[option]);
    }
}

#[test]
fn rfc4340_options() {
    let cases: Vec<(Vec<u8>, DccpOption)> = vec![
        // Init Cookie, length 6, 4 opaque bytes.
        (
            vec![0x24, 0x06, 0xDE, 0xAD, 0xBE, 0xEF, 0, 0],
            DccpOption::InitCookie(vec![0xDE, 0xAD, 0xBE, 0xEF]),
        ),
        // NDP Count, length 3, one byte: 7.
        (vec![0x25, 0x03, 0x07, 0], DccpOption::NdpCount(7)),
        // NDP Count, length 5, three bytes: 0x010203.
        (
            vec![0x25, 0x05, 0x01, 0x02, 0x03, 0, 0, 0],
            DccpOption::NdpCount(0x01_0203),
        ),
        // NDP Count, length 8, six bytes: 2^48 - 1.
        (
            vec![0x25, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            DccpOption::NdpCount((1 << 48) - 1),
        ),
        // Ack Vector [Nonce 0], length 4: cells 0x00 (state 0, run 0) and
        // 0xC5 (state 3, run 5).
        (
            vec![0x26, 0x04, 0x00, 0xC5],
            DccpOption::AckVector(
                AckVector::from_cells(
                    false,
                    &[
                        (AckVectorState::Received, 0),
                        (AckVectorState::NotReceived, 5),
                    ],
                )
                .expect("valid cells"),
            ),
        ),
        // Ack Vector [Nonce 1], length 3: cell 0x7F (state 1, run 63).
        (
            vec![0x27, 0x03, 0x7F, 0],
            DccpOption::AckVector(
                AckVector::from_cells(true, &[(AckVectorState::ReceivedEcnMarked, 63)])
                    .expect("valid cells"),
            ),
        ),
        // Data Dropped, length 4, raw block bytes.
        (
            vec![0x28, 0x04, 0x81, 0x02],
            DccpOption::DataDropped(vec![0x81, 0x02]),
        ),
        // Timestamp, length 6.
        (
            vec![0x29, 0x06, 0xCA, 0xFE, 0xBA, 0xBE, 0, 0],
            DccpOption::Timestamp(0xCAFE_BABE),
        ),
        // Timestamp Echo, length 6: no elapsed time.
        (
            vec![0x2A, 0x06, 0x00, 0x00, 0x01, 0x00, 0, 0],
            DccpOption::TimestampEcho {
                timestamp: 256,
                elapsed: None,
            },
        ),
        // Timestamp Echo, length 8: 2-byte elapsed time 0x1234.
        (
            vec![0x2A, 0x08, 0x00, 0x00, 0x01, 0x00, 0x12, 0x34],
            DccpOption::TimestampEcho {
                timestamp: 256,
                elapsed: Some(ElapsedTime(0x1234)),
            },
        ),
        // Timestamp Echo, length 10: 4-byte elapsed time 0x00012345.
        (
            vec![
                0x2A, 0x0A, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x23, 0x45, 0, 0,
            ],
            DccpOption::TimestampEcho {
                timestamp: 256,
                elapsed: Some(ElapsedTime(0x0001_2345)),
            },
        ),
        // Elapsed Time, length 4: 500 units = 5 ms.
        (
            vec![0x2B, 0x04, 0x01, 0xF4],
            DccpOption::ElapsedTime(ElapsedTime(500)),
        ),
        // Elapsed Time, length 6: 0x00100000 units.
        (
            vec![0x2B, 0x06, 0x00, 0x10, 0x00, 0x00, 0, 0],
            DccpOption::ElapsedTime(ElapsedTime(0x0010_0000)),
        ),
        // Data Checksum, length 6, CRC-32c value.
        (
            vec![0x2C, 0x06, 0x12, 0x34, 0x56, 0x78, 0, 0],
            DccpOption::DataChecksum(0x1234_5678),
        ),
        // Reserved type 45, length 3, one raw byte.
        (
            vec![0x2D, 0x03, 0xCC, 0],
            DccpOption::Unknown {
                kind: 45,
                data: vec![0xCC],
            },
        ),
    ];
    for (bytes, option) in cases {
        both_ways(&bytes, &[option]);
    }
}

#[test]
fn ccid3_and_ccid4_options() {
    let cases: Vec<(Vec<u8>, DccpOption)> = vec![
        // Loss Event Rate, length 6: 1/p = 100.
        (
            vec![0xC0, 0x06, 0x00, 0x00, 0x00, 0x64, 0, 0],
            DccpOption::LossEventRate(LossEventRate(100)),
        ),
        // Loss Event Rate, length 6: 0xFFFFFFFF, no loss.
        (
            vec![0xC0, 0x06, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0],
            DccpOption::LossEventRate(LossEventRate::NO_LOSS),
        ),
        // Loss Intervals, length 21: Skip Length 2, then two 9-byte records:
        //   lossless 0x000100, E=1, loss 0x000003, data 0x0000FF
        //   lossless 0xFFFFFF, E=0, loss 0x7FFFFF, data 0x000001
        (
            vec![
                0xC1, 0x15, 0x02, // type, length 3 + 2·9, Skip Length
                0x00, 0x01, 0x00, // Lossless Length
                0x80, 0x00, 0x03, // E = 1, Loss Length 3
                0x00, 0x00, 0xFF, // Data Length
                0xFF, 0xFF, 0xFF, // Lossless Length
                0x7F, 0xFF, 0xFF, // E = 0, Loss Length 2^23 - 1
                0x00, 0x00, 0x01, // Data Length
                0x00, 0x00, 0x00, // padding to 24 bytes
            ],
            DccpOption::LossIntervals(LossIntervals {
                skip_length: 2,
                intervals: vec![
                    LossInterval {
                        lossless_length: 0x100,
                        ecn_nonce_echo: true,
                        loss_length: 3,
                        data_length: 0xFF,
                    },
                    LossInterval {
                        lossless_length: 0xFF_FFFF,
                        ecn_nonce_echo: false,
                        loss_length: 0x7F_FFFF,
                        data_length: 1,
                    },
                ],
            }),
        ),
        // Loss Intervals with no records (length 3).
        (
            vec![0xC1, 0x03, 0x00, 0],
            DccpOption::LossIntervals(LossIntervals::default()),
        ),
        // Receive Rate, length 6: 125000 bytes/s.
        (
            vec![0xC2, 0x06, 0x00, 0x01, 0xE8, 0x48, 0, 0],
            DccpOption::ReceiveRate(125_000),
        ),
        // Dropped Packets, length 5, kept raw.
        (
            vec![0xC3, 0x05, 0x00, 0x00, 0x02, 0, 0, 0],
            DccpOption::DroppedPackets(vec![0, 0, 2]),
        ),
        // CCID-specific option 128 without a decoder: kept raw.
        (
            vec![0x80, 0x04, 0xAA, 0xBB],
            DccpOption::Unknown {
                kind: 128,
                data: vec![0xAA, 0xBB],
            },
        ),
    ];
    for (bytes, option) in cases {
        both_ways(&bytes, &[option]);
    }
}

#[test]
fn several_options_in_sequence() {
    both_ways(
        &[
            0x20, 0x04, 0x01, 0x03, // Change L(CCID, 3)
            0x01, // Mandatory
            0x22, 0x04, 0x06, 0x01, // Change R(Send Ack Vector, 1)
            0x29, 0x06, 0x00, 0x00, 0x00, 0x2A, // Timestamp 42
            0x00, // padding
        ],
        &[
            DccpOption::ChangeL(Feature::Ccid(vec![3])),
            DccpOption::Mandatory,
            DccpOption::ChangeR(Feature::SendAckVector(vec![true])),
            DccpOption::Timestamp(42),
        ],
    );
}

#[test]
fn lookup_helpers() {
    let options = Options::from_options([
        DccpOption::Timestamp(9),
        DccpOption::TimestampEcho {
            timestamp: 8,
            elapsed: Some(ElapsedTime(7)),
        },
        DccpOption::ElapsedTime(ElapsedTime(6)),
        DccpOption::NdpCount(5),
        DccpOption::LossEventRate(LossEventRate(4)),
        DccpOption::ReceiveRate(3),
        DccpOption::LossIntervals(LossIntervals::default()),
        DccpOption::ChangeL(Feature::Ccid(vec![2])),
    ])
    .expect("valid");
    assert_eq!(options.timestamp(), Some(9));
    assert_eq!(options.timestamp_echo(), Some((8, Some(ElapsedTime(7)))));
    assert_eq!(options.elapsed_time(), Some(ElapsedTime(6)));
    assert_eq!(options.ndp_count(), Some(5));
    assert_eq!(options.loss_event_rate(), Some(LossEventRate(4)));
    assert_eq!(options.receive_rate(), Some(3));
    assert_eq!(options.loss_intervals(), Some(&LossIntervals::default()));
    assert_eq!(options.feature_options().count(), 1);
    assert_eq!(
        options.find(kind::RECEIVE_RATE),
        Some(&DccpOption::ReceiveRate(3))
    );
    assert_eq!(options.find(kind::DATA_CHECKSUM), None);
    assert_eq!(options.len(), 8);
    assert_eq!((&options).into_iter().count(), 8);
}

#[test]
fn mandatory_rules() {
    let check = |bytes: &[u8]| {
        Options::parse(bytes)
            .expect("parses")
            .check_mandatory(DccpOption::is_understood)
    };
    // Mandatory followed by an understood option.
    assert_eq!(check(&[0x01, 0x29, 0x06, 0, 0, 0, 1, 0]), Ok(()));
    // RFC 4340 §5.8.2: Mandatory last, or followed by Mandatory: Option Error.
    let at_end = Options::from_options([DccpOption::Timestamp(1), DccpOption::Mandatory])
        .expect("valid")
        .check_mandatory(DccpOption::is_understood);
    assert_eq!(at_end, Err(MandatoryError::AtEnd));
    assert_eq!(
        check(&[0x01, 0x01, 0x02, 0x00]),
        Err(MandatoryError::Repeated)
    );
    assert_eq!(MandatoryError::AtEnd.reset_code(), ResetCode::OptionError);
    assert_eq!(MandatoryError::Repeated.reset_data(), [1, 0, 0]);
    // Mandatory before an unknown option: Mandatory Error with its type and
    // first two data bytes as Reset Data 1-3.
    let err = check(&[0x01, 0x80, 0x05, 0xAB, 0xCD, 0xEF, 0, 0]).expect_err("not understood");
    assert_eq!(
        err,
        MandatoryError::NotUnderstood {
            kind: 0x80,
            data: [0xAB, 0xCD]
        }
    );
    assert_eq!(err.reset_code(), ResetCode::MandatoryError);
    assert_eq!(err.reset_data(), [0x80, 0xAB, 0xCD]);
    // Short data is zero-filled; single-byte reserved options have none.
    assert_eq!(
        check(&[0x01, 0x81, 0x03, 0x11]),
        Err(MandatoryError::NotUnderstood {
            kind: 0x81,
            data: [0x11, 0]
        })
    );
    assert_eq!(
        check(&[0x01, 0x05, 0x00, 0x00]),
        Err(MandatoryError::NotUnderstood {
            kind: 5,
            data: [0, 0]
        })
    );
    // The caller decides what is understood (e.g. a CCID-specific option
    // under the wrong CCID).
    let options = Options::parse(&[0x01, 0xC2, 0x06, 0, 0, 0, 1, 0]).expect("parses");
    assert_eq!(options.check_mandatory(DccpOption::is_understood), Ok(()));
    assert!(options.check_mandatory(|o| o.kind() < 128).is_err());
}

#[test]
fn allowed_on_data_follows_table_3() {
    assert_eq!(DccpOption::Padding.allowed_on_data(), Some(true));
    assert_eq!(DccpOption::NdpCount(1).allowed_on_data(), Some(true));
    assert_eq!(DccpOption::Mandatory.allowed_on_data(), Some(false));
    assert_eq!(
        DccpOption::ChangeL(Feature::Ccid(vec![2])).allowed_on_data(),
        Some(false)
    );
    assert_eq!(DccpOption::ReceiveRate(1).allowed_on_data(), Some(false));
    assert_eq!(
        DccpOption::Unknown {
            kind: 200,
            data: vec![]
        }
        .allowed_on_data(),
        None
    );
}

#[test]
fn ack_vector_cells_and_feedback() {
    // Cells, newest first: 3 received, 1 lost, 64 ECN-marked.
    let vector = AckVector::from_cells(
        false,
        &[
            (AckVectorState::Received, 2),
            (AckVectorState::NotReceived, 0),
            (AckVectorState::ReceivedEcnMarked, 63),
        ],
    )
    .expect("valid");
    assert_eq!(vector.as_bytes(), &[0x02, 0xC0, 0x7F]);
    let feedback = ack_vector_to_feedback(SeqNum::new(100), vector.cells()).expect("no reserved");
    assert_eq!(feedback.ack_number, 100);
    assert_eq!(
        feedback.runs,
        vec![
            AckRun {
                state: AckState::Received,
                length: 3
            },
            AckRun {
                state: AckState::NotReceived,
                length: 1
            },
            AckRun {
                state: AckState::ReceivedEcnMarked,
                length: 64
            },
        ]
    );
    // State 2 is reserved: an error naming the cell.
    let reserved = AckVector::from_bytes(false, &[0x00, 0x81]).expect("raw cells");
    assert_eq!(
        ack_vector_to_feedback(SeqNum::ZERO, reserved.cells()),
        Err(AckVectorError::ReservedState { index: 1 })
    );
    assert_eq!(
        AckVector::from_cells(false, &[(AckVectorState::Received, 64)]),
        Err(AckVectorError::RunLengthTooLong {
            index: 0,
            run_length: 64
        })
    );
    assert_eq!(
        AckVector::from_bytes(true, &[0; 254]),
        Err(AckVectorError::TooManyCells { count: 254 })
    );
}

#[test]
fn ack_vector_options_are_concatenated() {
    let options = Options::parse(&[
        0x26, 0x03, 0x05, // Ack Vector [Nonce 0]: received, run 5
        0x27, 0x04, 0xC0, 0x01, // Ack Vector [Nonce 1]: lost, run 0; received, run 1
        0x00,
    ])
    .expect("parses");
    let cells: Vec<u8> = options
        .ack_vector_cells()
        .map(AckVectorCell::to_byte)
        .collect();
    assert_eq!(cells, vec![0x05, 0xC0, 0x01]);
    let nonces: Vec<bool> = options.ack_vectors().map(AckVector::nonce).collect();
    assert_eq!(nonces, vec![false, true]);
}

#[test]
fn loss_event_rate_conversions() {
    assert_eq!(LossEventRate::from_p(0.0), Some(LossEventRate::NO_LOSS));
    assert_eq!(LossEventRate::from_p(0.01), Some(LossEventRate(100)));
    // Rounded up: 1/0.003 = 333.3 -> 334.
    assert_eq!(LossEventRate::from_p(0.003), Some(LossEventRate(334)));
    assert_eq!(LossEventRate::from_p(1.0), Some(LossEventRate(1)));
    // A tiny nonzero p must not read as "no loss".
    assert_eq!(
        LossEventRate::from_p(1e-12),
        Some(LossEventRate(u32::MAX - 1))
    );
    assert_eq!(LossEventRate::from_p(-0.1), None);
    assert_eq!(LossEventRate::from_p(1.5), None);
    assert_eq!(LossEventRate::from_p(f64::NAN), None);
    assert_eq!(LossEventRate::NO_LOSS.p(), Some(0.0));
    assert_eq!(LossEventRate(100).p(), Some(0.01));
    assert_eq!(LossEventRate(0).p(), None);
}

#[test]
fn elapsed_time_units() {
    assert_eq!(
        ElapsedTime::from_duration(Duration::from_millis(5)),
        ElapsedTime(500)
    );
    assert_eq!(ElapsedTime(500).to_duration(), Duration::from_millis(5));
    assert_eq!(
        ElapsedTime::from_duration(Duration::from_micros(19)),
        ElapsedTime(1)
    );
    assert_eq!(
        ElapsedTime::from_duration(Duration::from_secs(1 << 40)),
        ElapsedTime(u32::MAX)
    );
    assert_eq!(ElapsedTime(0xFFFF).encoded_len(), 2);
    assert_eq!(ElapsedTime(0x1_0000).encoded_len(), 4);
}

/// Found by the `dccp_options` fuzz target: a list ending in Mandatory off a
/// 32-bit boundary cannot be emitted, since the padding would become the
/// option Mandatory applies to (RFC 4340 §5.8.2) and the packet would mean
/// something else when parsed back.
#[test]
fn trailing_mandatory_off_a_word_boundary_is_unencodable() {
    let mut list = Options::default();
    list.push(DccpOption::SlowReceiver).unwrap();
    list.push(DccpOption::Mandatory).unwrap();
    assert!(matches!(
        list.check_encodable(),
        Err(OptionError::Unencodable { kind: 1, .. })
    ));
    let mut buf = [0u8; 8];
    assert!(list.emit(&mut buf).is_err());
    // On a boundary it is representable: the options area ends right there.
    let mut list = Options::default();
    for _ in 0..3 {
        list.push(DccpOption::SlowReceiver).unwrap();
    }
    list.push(DccpOption::Mandatory).unwrap();
    assert!(list.check_encodable().is_ok());
    let bytes = list.to_bytes();
    assert_eq!(Options::parse(&bytes).unwrap(), list);
}
