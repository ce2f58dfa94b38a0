//! Property tests for the TFRC receiver: random arrival orders with losses,
//! reordering and duplicates, and random (hostile) sequence numbers, checked
//! against invariants after every packet.

use std::collections::BTreeSet;
use std::time::Duration;

use fairstream_proto::cc::loss_history::{LossInterval, MAX_HELD_MARKS, REMEMBERED_LOST_RUNS};
use fairstream_proto::cc::tfrc_receiver::{
    DataPacket, LossEventGrouping, TfrcReceiver, TfrcReceiverConfig,
};
use fairstream_proto::time::Instant;
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Scenario {
    config: TfrcReceiverConfig,
    /// (sequence number, gap in µs since the previous arrival, size).
    arrivals: Vec<(u64, u64, usize)>,
    rtt: Option<Duration>,
    counters: bool,
}

fn config() -> impl Strategy<Value = TfrcReceiverConfig> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        1u64..=5,
        prop::option::of(1u32..=100),
    )
        .prop_map(
            |(history_discounting, small_packet, interpolation, ndupack, channel_loss_memory)| {
                TfrcReceiverConfig {
                    ndupack,
                    history_discounting,
                    small_packet,
                    loss_event_grouping: if interpolation {
                        LossEventGrouping::Interpolation
                    } else {
                        LossEventGrouping::Auto
                    },
                    channel_loss_memory,
                    ..TfrcReceiverConfig::default()
                }
            },
        )
}

/// Sequence numbers 0..n, some dropped (fewer than the detector remembers,
/// so that every late packet can still cancel its loss), locally reordered
/// and sometimes duplicated.
fn scenario() -> impl Strategy<Value = Scenario> {
    (20u64..400)
        .prop_flat_map(|n| {
            (
                Just(n),
                prop::collection::btree_set(0..n, 0..(REMEMBERED_LOST_RUNS - 4)),
                prop::collection::vec(0u64..6, n as usize),
                prop::collection::vec(0u64..20_000, n as usize),
                prop::collection::vec(prop::option::weighted(0.05, 0u64..8), n as usize),
                config(),
                prop::option::of(20u64..300),
                any::<bool>(),
            )
        })
        .prop_map(
            |(n, dropped, displacement, gaps, duplicates, config, rtt_ms, counters)| {
                let mut order: Vec<(u64, u64)> = (0..n)
                    .filter(|seq| !dropped.contains(seq))
                    .map(|seq| (seq + displacement[seq as usize], seq))
                    .collect();
                order.sort();
                let mut arrivals = Vec::new();
                for (i, &(_, seq)) in order.iter().enumerate() {
                    arrivals.push((seq, gaps[i % gaps.len()], 200 + (seq % 7) as usize * 100));
                    if let Some(back) = duplicates[i % duplicates.len()] {
                        let earlier = order[i.saturating_sub(back as usize)].1;
                        arrivals.push((earlier, 0, 500));
                    }
                }
                Scenario {
                    config,
                    arrivals,
                    rtt: rtt_ms.map(Duration::from_millis),
                    counters,
                }
            },
        )
}

/// Losses counted in the history, and sequence numbers missing in
/// [first received, highest received].
fn counted_and_missing(rx: &TfrcReceiver, received: &BTreeSet<u64>, first: u64) -> (u64, u64) {
    let counted = rx.loss_intervals().map(LossInterval::lost_packets).sum();
    let highest = rx.highest_seq().unwrap_or(first);
    let present = received.range(first..=highest).count() as u64;
    (counted, highest - first + 1 - present)
}

fn check_invariants(rx: &TfrcReceiver) -> Result<(), TestCaseError> {
    let p = rx.loss_event_rate();
    prop_assert!((0.0..=1.0).contains(&p), "p = {}", p);
    let n = rx.config().loss_intervals;
    prop_assert!(rx.loss_intervals().len() <= n + 1);
    prop_assert!(rx.loss_intervals().filter(|i| i.is_open()).count() <= 1);
    let detector = rx.loss_detector();
    prop_assert!((detector.pending_gap_count() as u64) < detector.ndupack());
    prop_assert!(detector.remembered_lost_runs().len() <= REMEMBERED_LOST_RUNS);
    for interval in rx.loss_intervals() {
        prop_assert!(interval.length() >= 1);
        prop_assert!(interval.loss_length() <= interval.length());
    }
    Ok(())
}

fn run(scenario: &Scenario) -> Result<TfrcReceiver, TestCaseError> {
    let mut rx = TfrcReceiver::new(scenario.config, Instant::ZERO);
    let mut now = Instant::ZERO;
    let mut received = BTreeSet::new();
    let mut first_seq = None;
    let mut newest_send_time = None;
    for &(seq, gap_us, size) in &scenario.arrivals {
        now += Duration::from_micros(gap_us);
        let send_time = Instant::from_millis(seq * 10);
        rx.on_data_packet(
            now,
            &DataPacket {
                seq,
                size_bytes: size,
                send_time,
                rtt_estimate: scenario.rtt,
                window_counter: scenario.counters.then_some(((seq / 3) % 16) as u8),
            },
        );
        let first = *first_seq.get_or_insert(seq);
        // Not a duplicate (nor below the first packet, which counts as one).
        if seq >= first && received.insert(seq) {
            newest_send_time = Some(send_time);
        }
        check_invariants(&rx)?;
        let (counted, missing) = counted_and_missing(&rx, &received, first);
        prop_assert!(
            counted <= missing,
            "{} losses counted, {} missing",
            counted,
            missing
        );
        // Feedback is returned exactly when the timeout has come.
        let due = rx.next_timeout().is_some_and(|at| at <= now);
        let feedback = rx.poll_feedback(now);
        prop_assert_eq!(feedback.is_some(), due);
        if let Some(feedback) = feedback {
            prop_assert!((0.0..=1.0).contains(&feedback.loss_event_rate));
            let x = feedback.receive_rate.bytes_per_sec();
            prop_assert!(x.is_finite() && x >= 0.0);
            prop_assert_eq!(Some(feedback.highest_seq), rx.highest_seq());
            prop_assert_eq!(Some(feedback.echoed_send_time), newest_send_time);
            // No second feedback without new data.
            prop_assert!(rx.poll_feedback(now + Duration::from_secs(100)).is_none());
            prop_assert_eq!(rx.next_timeout(), None);
        }
    }
    Ok(rx)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_losses_reordering_and_duplicates_keep_invariants(scenario in scenario()) {
        run(&scenario)?;
    }

    /// Every packet delivered, each overtaken by fewer than NDUPACK later
    /// ones, with duplicates: no loss, p = 0.
    #[test]
    fn complete_sequences_have_no_loss(
        n in 1u64..500,
        displacement in prop::collection::vec(0u64..3, 500),
        gaps in prop::collection::vec(0u64..30_000, 500),
        rtt_ms in prop::option::of(1u64..500),
    ) {
        let mut order: Vec<(u64, u64)> =
            (0..n).map(|seq| (seq + displacement[seq as usize], seq)).collect();
        order.sort();
        let arrivals = order
            .iter()
            .enumerate()
            .flat_map(|(i, &(_, seq))| {
                let copies = if i % 17 == 3 { 2 } else { 1 };
                std::iter::repeat_n((seq, gaps[i], 1000), copies)
            })
            .collect();
        let scenario = Scenario {
            config: TfrcReceiverConfig::default(),
            arrivals,
            rtt: rtt_ms.map(Duration::from_millis),
            counters: false,
        };
        let rx = run(&scenario)?;
        prop_assert_eq!(rx.loss_event_rate(), 0.0);
        prop_assert_eq!(rx.loss_intervals().len(), 0);
        prop_assert_eq!(rx.highest_seq(), Some(n - 1));
    }

    /// Hostile input: arbitrary sequence numbers, sizes, RTTs, counters and
    /// times (even going backwards). No panic, and memory stays bounded.
    #[test]
    fn wild_sequence_jumps_keep_memory_bounded(
        packets in prop::collection::vec(
            (any::<u64>(), any::<usize>(), any::<u64>(), prop::option::of(any::<u64>()), prop::option::of(any::<u8>())),
            1..300,
        ),
        config in config(),
    ) {
        let mut rx = TfrcReceiver::new(config, Instant::ZERO);
        for (seq, size_bytes, now, rtt_ns, window_counter) in packets {
            let now = Instant::from_nanos(now);
            rx.on_data_packet(now, &DataPacket {
                seq,
                size_bytes,
                send_time: now,
                rtt_estimate: rtt_ns.map(Duration::from_nanos),
                window_counter,
            });
            check_invariants(&rx)?;
            let _ = rx.next_timeout();
            if let Some(feedback) = rx.poll_feedback(now) {
                prop_assert!((0.0..=1.0).contains(&feedback.loss_event_rate));
                prop_assert!(!feedback.receive_rate.bytes_per_sec().is_nan());
            }
        }
    }

    /// Near-monotone sequence numbers with huge forward jumps.
    #[test]
    fn huge_forward_jumps(
        steps in prop::collection::vec(prop_oneof![1u64..4, 1u64..1 << 40, Just(u64::MAX / 4)], 1..200),
    ) {
        let mut rx = TfrcReceiver::new(TfrcReceiverConfig::default(), Instant::ZERO);
        let mut seq = 0u64;
        for (i, step) in steps.into_iter().enumerate() {
            seq = seq.saturating_add(step);
            let now = Instant::from_millis(i as u64 * 5);
            rx.on_data_packet(now, &DataPacket {
                seq,
                size_bytes: 1200,
                send_time: now,
                rtt_estimate: Some(Duration::from_millis(40)),
                window_counter: None,
            });
            check_invariants(&rx)?;
            let _ = rx.poll_feedback(now);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// CE marks (RFC 4342 §9) on random packets of the same scenarios: the
    /// invariants hold, the held marks stay bounded, and the losses counted
    /// never exceed the packets missing plus the distinct packets received
    /// marked.
    #[test]
    fn random_marks_keep_invariants(
        scenario in scenario(),
        marks in prop::collection::vec(prop::bool::weighted(0.1), 1..64),
    ) {
        let mut rx = TfrcReceiver::new(scenario.config, Instant::ZERO);
        let mut now = Instant::ZERO;
        let mut received = BTreeSet::new();
        let mut marked = 0u64;
        let mut first_seq = None;
        for (i, &(seq, gap_us, size)) in scenario.arrivals.iter().enumerate() {
            now += Duration::from_micros(gap_us);
            let ce = marks[i % marks.len()];
            rx.on_data_packet_ecn(
                now,
                &DataPacket {
                    seq,
                    size_bytes: size,
                    send_time: Instant::from_millis(seq * 10),
                    rtt_estimate: scenario.rtt,
                    window_counter: scenario.counters.then_some(((seq / 3) % 16) as u8),
                },
                ce,
            );
            let first = *first_seq.get_or_insert(seq);
            if seq >= first && received.insert(seq) && ce {
                marked += 1;
            }
            check_invariants(&rx)?;
            prop_assert!(rx.loss_detector().held_marks() <= MAX_HELD_MARKS);
            // The second history of a marking path: a probability, and it
            // sets aside no more packets than were sent.
            if let Some(p) = rx.congestion_loss_event_rate() {
                prop_assert!((0.0..=1.0).contains(&p), "congestion p {}", p);
            }
            let top = scenario.arrivals.iter().map(|a| a.0 + 1).max().unwrap_or(0);
            prop_assert!(rx.losses_set_aside() <= top);
            let (counted, missing) = counted_and_missing(&rx, &received, first);
            prop_assert!(
                counted <= missing + marked,
                "{} counted, {} missing, {} marked",
                counted,
                missing,
                marked
            );
            let _ = rx.poll_feedback(now);
        }
    }

    /// Hostile marks: arbitrary sequence numbers, all marked. No panic, and
    /// memory stays bounded.
    #[test]
    fn wild_marked_packets_keep_memory_bounded(
        packets in prop::collection::vec((any::<u64>(), any::<u64>(), any::<bool>()), 1..300),
        config in config(),
    ) {
        let mut rx = TfrcReceiver::new(config, Instant::ZERO);
        for (seq, now, ce) in packets {
            let now = Instant::from_nanos(now);
            rx.on_data_packet_ecn(now, &DataPacket {
                seq,
                size_bytes: 1000,
                send_time: now,
                rtt_estimate: None,
                window_counter: Some((seq % 16) as u8),
            }, ce);
            check_invariants(&rx)?;
            prop_assert!(rx.loss_detector().held_marks() <= MAX_HELD_MARKS);
            // The second history of a marking path: a probability,
            // whatever the peer sends.
            if let Some(p) = rx.congestion_loss_event_rate() {
                prop_assert!((0.0..=1.0).contains(&p), "congestion p {}", p);
            }
            let _ = rx.poll_feedback(now);
        }
    }
}
