//! Malformed option lists and unencodable options: each gives its specific error.

use super::*;

#[test]
fn malformed_option_lists() {
    let err = |bytes: &[u8]| Options::parse(bytes).expect_err("malformed");
    assert_eq!(
        err(&[0x02, 0x29]),
        OptionError::MissingLength {
            kind: 41,
            name: "Timestamp",
            offset: 1
        }
    );
    assert_eq!(
        err(&[0x00, 0x00, 0x29, 0x01, 0x00, 0x00]),
        OptionError::LengthTooSmall {
            kind: 41,
            name: "Timestamp",
            offset: 2,
            length: 1
        }
    );
    assert_eq!(
        err(&[0x29, 0x00]),
        OptionError::LengthTooSmall {
            kind: 41,
            name: "Timestamp",
            offset: 0,
            length: 0
        }
    );
    assert_eq!(
        err(&[0x29, 0x06, 0x00, 0x00]),
        OptionError::Overrun {
            kind: 41,
            name: "Timestamp",
            offset: 0,
            length: 6,
            available: 4
        }
    );
    assert_eq!(
        err(&[0x80, 0xFF, 0x00, 0x00]),
        OptionError::Overrun {
            kind: 128,
            name: "CCID-specific option",
            offset: 0,
            length: 255,
            available: 4
        }
    );
    let bad_length = |bytes: &[u8], kind: u8, name: &'static str, expected: &'static str| {
        assert_eq!(
            err(bytes),
            OptionError::BadLength {
                kind,
                name,
                offset: 0,
                length: bytes[1],
                expected
            }
        );
    };
    bad_length(&[0x29, 0x05, 0, 0, 0], 41, "Timestamp", "6");
    bad_length(&[0x25, 0x02], 37, "NDP Count", "3 to 8");
    bad_length(
        &[0x25, 0x09, 1, 2, 3, 4, 5, 6, 7],
        37,
        "NDP Count",
        "3 to 8",
    );
    bad_length(
        &[0x2A, 0x07, 0, 0, 0, 0, 0],
        42,
        "Timestamp Echo",
        "6, 8 or 10",
    );
    bad_length(&[0x2B, 0x05, 0, 0, 0], 43, "Elapsed Time", "4 or 6");
    bad_length(&[0x2C, 0x04, 0, 0], 44, "Data Checksum", "6");
    bad_length(&[0xC0, 0x05, 0, 0, 0], 192, "Loss Event Rate", "6");
    bad_length(&[0xC1, 0x05, 0, 0, 0], 193, "Loss Intervals", "3 + 9n");
    bad_length(&[0xC1, 0x02], 193, "Loss Intervals", "3 + 9n");
    bad_length(&[0xC2, 0x07, 0, 0, 0, 0, 0], 194, "Receive Rate", "6");
    bad_length(
        &[0x20, 0x02],
        32,
        "Change L",
        "at least 3 (type, length, feature number)",
    );
}

#[test]
fn malformed_feature_values() {
    assert_eq!(
        Options::parse(&[0x20, 0x04, 0x02, 0x02]),
        Err(OptionError::BadFeatureValue {
            kind: 32,
            name: "Change L",
            offset: 0,
            feature: 2,
            feature_name: "Allow Short Seqnos",
            value: 2,
            expected: "0 or 1"
        })
    );
    assert_eq!(
        Options::parse(&[0x22, 0x04, 0x08, 0x10]),
        Err(OptionError::BadFeatureValue {
            kind: 34,
            name: "Change R",
            offset: 0,
            feature: 8,
            feature_name: "Minimum Checksum Coverage",
            value: 16,
            expected: "0-15"
        })
    );
    assert_eq!(
        Options::parse(&[0x21, 0x05, 0x03, 0x00, 0x64]),
        Err(OptionError::BadFeatureLength {
            kind: 33,
            name: "Confirm L",
            offset: 0,
            feature: 3,
            feature_name: "Sequence Window",
            found: 2,
            expected: "6 (48-bit value) or 0"
        })
    );
    assert_eq!(
        Options::parse(&[0x23, 0x04, 0x05, 0x02]),
        Err(OptionError::BadFeatureLength {
            kind: 35,
            name: "Confirm R",
            offset: 0,
            feature: 5,
            feature_name: "Ack Ratio",
            found: 1,
            expected: "2 (16-bit value) or 0"
        })
    );
}

#[test]
fn error_messages_name_the_option_and_offset() {
    let message = Options::parse(&[0x00, 0x29, 0x09])
        .expect_err("overrun")
        .to_string();
    assert!(message.contains("Timestamp"), "{message}");
    assert!(message.contains("offset 1"), "{message}");
}

#[test]
fn unencodable_options_are_refused() {
    let refuse = |option: DccpOption| {
        let mut options = Options::new();
        assert!(
            matches!(
                options.push(option.clone()),
                Err(OptionError::Unencodable { .. })
            ),
            "{option:?} should be refused"
        );
        assert!(options.is_empty());
    };
    refuse(DccpOption::Unknown {
        kind: 41,
        data: vec![0; 4],
    });
    refuse(DccpOption::Unknown {
        kind: 5,
        data: vec![1],
    });
    refuse(DccpOption::NdpCount(1 << 48));
    refuse(DccpOption::InitCookie(vec![0; 254]));
    refuse(DccpOption::ChangeL(Feature::Ccid(vec![2; 253])));
    refuse(DccpOption::ChangeL(Feature::SequenceWindow(Some(1 << 48))));
    refuse(DccpOption::ChangeR(Feature::MinimumChecksumCoverage(vec![
        16,
    ])));
    refuse(DccpOption::LossIntervals(LossIntervals {
        skip_length: 0,
        intervals: vec![LossInterval::default(); 29],
    }));
    refuse(DccpOption::LossIntervals(LossIntervals {
        skip_length: 0,
        intervals: vec![LossInterval {
            loss_length: 1 << 23,
            ..LossInterval::default()
        }],
    }));
    // The largest values that do fit are accepted.
    let mut options = Options::new();
    options
        .push(DccpOption::InitCookie(vec![0; 253]))
        .expect("253 data bytes fit");
    options
        .push(DccpOption::LossIntervals(LossIntervals {
            skip_length: 255,
            intervals: vec![LossInterval::default(); 28],
        }))
        .expect("28 intervals fit");
    assert_eq!(options.encoded_len(), 255 + 255);
}

#[test]
fn options_are_bounded_by_the_header() {
    let mut options = Options::new();
    let cookie = DccpOption::InitCookie(vec![0; 250]); // 252 bytes each
    for _ in 0..4 {
        options.push(cookie.clone()).expect("1008 bytes fit");
    }
    assert_eq!(options.encoded_len(), MAX_OPTIONS_LEN);
    assert_eq!(
        options.push(DccpOption::Padding),
        Err(OptionError::TooLong {
            len: MAX_OPTIONS_LEN + 1,
            max: MAX_OPTIONS_LEN
        })
    );
    assert_eq!(
        Options::parse(&[0; MAX_OPTIONS_LEN + 1]),
        Err(OptionError::TooLong {
            len: MAX_OPTIONS_LEN + 1,
            max: MAX_OPTIONS_LEN
        })
    );
    let mut small = [0u8; 3];
    assert!(matches!(
        Options::from_options([DccpOption::Timestamp(1)])
            .expect("valid")
            .emit(&mut small),
        Err(OptionError::TooLong { len: 8, max: 3 })
    ));
}
