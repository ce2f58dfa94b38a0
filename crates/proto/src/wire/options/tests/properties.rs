//! Strategies for valid options (shared with the DCCP tests) and property tests.

use super::*;

/// A feature with a canonical, encodable value.
pub(crate) fn arb_feature() -> impl Strategy<Value = Feature> {
    let bools = || proptest::collection::vec(any::<bool>(), 0..6);
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..6).prop_map(Feature::Ccid),
        bools().prop_map(Feature::AllowShortSeqnos),
        proptest::option::of(0..(1u64 << 48)).prop_map(Feature::SequenceWindow),
        bools().prop_map(Feature::EcnIncapable),
        any::<Option<u16>>().prop_map(Feature::AckRatio),
        bools().prop_map(Feature::SendAckVector),
        bools().prop_map(Feature::SendNdpCount),
        proptest::collection::vec(0u8..16, 0..6).prop_map(Feature::MinimumChecksumCoverage),
        bools().prop_map(Feature::CheckDataChecksum),
        (
            prop_oneof![Just(0u8), 10u8..=255],
            proptest::collection::vec(any::<u8>(), 0..8)
        )
            .prop_map(|(number, value)| Feature::Unknown { number, value }),
    ]
}

/// An option that encodes and parses back as itself, never Padding (whose
/// trailing copies parse away).
pub(crate) fn arb_option() -> impl Strategy<Value = DccpOption> {
    let bytes = |max| proptest::collection::vec(any::<u8>(), 0..max);
    let elapsed = || any::<u32>().prop_map(ElapsedTime);
    prop_oneof![
        Just(DccpOption::SlowReceiver),
        arb_feature().prop_map(DccpOption::ChangeL),
        arb_feature().prop_map(DccpOption::ConfirmL),
        arb_feature().prop_map(DccpOption::ChangeR),
        arb_feature().prop_map(DccpOption::ConfirmR),
        bytes(40).prop_map(DccpOption::InitCookie),
        (0..(1u64 << 48)).prop_map(DccpOption::NdpCount),
        (any::<bool>(), bytes(40)).prop_map(|(nonce, cells)| DccpOption::AckVector(
            AckVector::from_bytes(nonce, &cells).expect("at most 40 cells")
        )),
        bytes(20).prop_map(DccpOption::DataDropped),
        any::<u32>().prop_map(DccpOption::Timestamp),
        (any::<u32>(), proptest::option::of(elapsed()))
            .prop_map(|(timestamp, elapsed)| DccpOption::TimestampEcho { timestamp, elapsed }),
        elapsed().prop_map(DccpOption::ElapsedTime),
        any::<u32>().prop_map(DccpOption::DataChecksum),
        any::<u32>().prop_map(|v| DccpOption::LossEventRate(LossEventRate(v))),
        (
            any::<u8>(),
            proptest::collection::vec(
                (
                    0..(1u32 << 24),
                    any::<bool>(),
                    0..(1u32 << 23),
                    0..(1u32 << 24)
                ),
                0..5
            )
        )
            .prop_map(
                |(skip_length, records)| DccpOption::LossIntervals(LossIntervals {
                    skip_length,
                    intervals: records
                        .into_iter()
                        .map(
                            |(lossless_length, ecn_nonce_echo, loss_length, data_length)| {
                                LossInterval {
                                    lossless_length,
                                    ecn_nonce_echo,
                                    loss_length,
                                    data_length,
                                }
                            }
                        )
                        .collect(),
                })
            ),
        any::<u32>().prop_map(DccpOption::ReceiveRate),
        bytes(20).prop_map(DccpOption::DroppedPackets),
        (prop_oneof![3u8..32, 45u8..192, 196u8..=255], bytes(20)).prop_map(|(kind, data)| {
            DccpOption::Unknown {
                kind,
                data: if kind < 32 { vec![] } else { data },
            }
        }),
    ]
}

/// A valid option list that round-trips exactly: Padding and Mandatory only
/// where something non-Padding follows them.
pub(crate) fn arb_options() -> impl Strategy<Value = Options> {
    proptest::collection::vec((arb_option(), any::<bool>(), any::<bool>()), 0..8).prop_map(
        |items| {
            let mut options = Options::new();
            for (option, padding_before, mandatory_before) in items {
                if option.encoded_len() + options.encoded_len() + 2 > MAX_OPTIONS_LEN {
                    break;
                }
                if padding_before {
                    let _ = options.push(DccpOption::Padding);
                }
                if mandatory_before {
                    let _ = options.push(DccpOption::Mandatory);
                }
                options.push(option).expect("generated options are valid");
            }
            options
        },
    )
}

proptest! {
    #[test]
    fn options_round_trip(options in arb_options()) {
        let bytes = options.to_bytes();
        prop_assert_eq!(bytes.len(), options.padded_len());
        prop_assert!(options.encoded_len() <= bytes.len() && bytes.len() < options.encoded_len() + 4);
        prop_assert_eq!(Options::parse(&bytes).expect("emitted options parse"), options);
    }

    #[test]
    fn each_option_encodes_to_its_encoded_len(option in arb_option()) {
        let mut out = Vec::new();
        option.encode(&mut out);
        prop_assert_eq!(out.len(), option.encoded_len());
        prop_assert_eq!(out.first().copied(), Some(option.kind()));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let parsed = Options::parse(&bytes);
        // An options area is a whole number of 32-bit words; there, whatever
        // parses re-encodes to something that parses to the same list.
        if let (Ok(options), true) = (parsed, bytes.len() % 4 == 0) {
            let again = Options::parse(&options.to_bytes()).expect("re-encoded options parse");
            prop_assert_eq!(again, options.clone());
            let _ = options.check_mandatory(DccpOption::is_understood);
            let _ = ack_vector_to_feedback(SeqNum::ZERO, options.ack_vector_cells());
        }
    }

    #[test]
    fn loss_event_rate_round_trips_p(p in 1e-9f64..=1.0) {
        let rate = LossEventRate::from_p(p).expect("p in range");
        let back = rate.p().expect("nonzero");
        // Rounded up 1/p: the reported p is at most p, and within one step of it.
        prop_assert!(back <= p * (1.0 + 1e-12));
        prop_assert!(1.0 / back - 1.0 / p < 1.0 + 1e-6);
    }
}
