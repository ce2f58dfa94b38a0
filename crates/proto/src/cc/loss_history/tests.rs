use super::*;

const R100: Duration = Duration::from_millis(100);

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

fn event(seq: u64, time_ms: u64, lost: u64) -> LossEventStart {
    LossEventStart {
        seq,
        time: Instant::from_millis(time_ms),
        window_counter: None,
        lost_packets: lost,
        last_lost_seq: seq + lost - 1,
    }
}

fn plain(now_ms: u64) -> AverageContext {
    AverageContext {
        now: Instant::from_millis(now_ms),
        rtt: R100,
        small_packet: false,
    }
}

/// A history whose closed intervals are `closed` (oldest first) and whose
/// open interval holds `open` packets; events one second apart, one loss each.
fn history_of(closed: &[u64], open: u64, discounting: bool) -> LossIntervalHistory {
    let mut history = LossIntervalHistory::new(DEFAULT_LOSS_INTERVALS, discounting);
    let mut seq = 1_000;
    let mut time = 0;
    for &length in closed {
        history.start_event(event(seq, time, 1), seq);
        seq += length;
        time += 1_000;
    }
    history.start_event(event(seq, time, 1), seq);
    history.set_highest(seq + open - 1);
    history
}

#[test]
fn rfc5348_weights() {
    assert_eq!(
        loss_interval_weights(8),
        [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]
    );
    assert_eq!(loss_interval_weights(4), [1.0, 1.0, 2.0 / 3.0, 1.0 / 3.0]);
}

/// tfrc-notes.md worked vector (RFC 5348 §5.4).
#[test]
fn worked_vector_weighted_average() {
    let weights = loss_interval_weights(8);
    let lengths = [10.0, 100.0, 120.0, 80.0, 100.0, 90.0, 110.0, 100.0, 100.0];
    let average = average_loss_interval(&lengths, &weights).unwrap();
    assert!(close(average.i_tot0, 508.0, 1e-9), "{average:?}");
    assert!(close(average.i_tot1, 598.0, 1e-9), "{average:?}");
    assert!(close(average.w_tot, 6.0, 1e-12), "{average:?}");
    assert!(
        close(average.loss_event_rate(), 0.010033, 5e-7),
        "{average:?}"
    );

    let mut lengths = lengths;
    lengths[0] = 400.0;
    let average = average_loss_interval(&lengths, &weights).unwrap();
    assert!(close(average.i_tot0, 898.0, 1e-9), "{average:?}");
    assert!(
        close(average.loss_event_rate(), 0.006682, 5e-7),
        "{average:?}"
    );
}

/// The same vector through a history built from loss events.
#[test]
fn worked_vector_through_history() {
    // I_8 … I_1 oldest first, then I_0 = 10.
    let closed = [100, 100, 110, 90, 100, 80, 120, 100];
    let history = history_of(&closed, 10, false);
    assert_eq!(history.intervals().len(), 9);
    let lengths: Vec<u64> = history.intervals().map(LossInterval::length).collect();
    assert_eq!(lengths, [10, 100, 120, 80, 100, 90, 110, 100, 100]);
    let p = history.loss_event_rate(plain(100_000));
    assert!(close(p, 0.010033, 5e-7), "{p}");

    let history = history_of(&closed, 400, false);
    let p = history.loss_event_rate(plain(100_000));
    assert!(close(p, 0.006682, 5e-7), "{p}");

    // A tenth event forgets I_8: the history stays at n + 1 intervals.
    let mut history = history;
    history.start_event(event(1_000_000, 50_000, 1), 1_000_000);
    assert_eq!(history.intervals().len(), 9);
}

/// With k < n closed intervals only k weights count (RFC 5348 §5.4).
#[test]
fn fewer_intervals_use_fewer_weights() {
    let history = history_of(&[200, 100], 50, false);
    // I_tot0 = 50 + 100 = 150, I_tot1 = 100 + 200 = 300, W_tot = 2.
    let p = history.loss_event_rate(plain(100_000));
    assert!(close(p, 1.0 / 150.0, 1e-12), "{p}");
    let weights = loss_interval_weights(8);
    assert_eq!(average_loss_interval(&[5.0], &weights), None);
    assert!(LossIntervalHistory::new(8, false)
        .average(plain(0))
        .is_none());
}

#[test]
fn open_interval_lowers_p_only_when_longer() {
    // I_0 only counts through max(I_tot0, I_tot1): a short I_0 does not raise p.
    let short = history_of(&[100; 8], 1, false);
    let long = history_of(&[100; 8], 1_000, false);
    let p_short = short.loss_event_rate(plain(100_000));
    let p_long = long.loss_event_rate(plain(100_000));
    assert!(close(p_short, 0.01, 1e-12), "{p_short}");
    assert!(p_long < p_short);
}

/// RFC 5348 §5.5 history discounting.
#[test]
fn history_discounting() {
    let plain_history = history_of(&[100; 8], 1_000, false);
    let discounted = history_of(&[100; 8], 1_000, true);
    // Without: I_tot0 = 1000 + 100·5 = 1500, W_tot = 6 -> p = 0.004.
    let p_plain = plain_history.loss_event_rate(plain(100_000));
    assert!(close(p_plain, 0.004, 1e-12), "{p_plain}");
    // With: I_mean(I_1..I_8) = 100 < I_0/2, DF = max(2·100/1000, 0.5) = 0.5:
    // I_tot0 = 1000 + 0.5·500 = 1250, W_tot0 = 1 + 0.5·5 = 3.5.
    let p_discounted = discounted.loss_event_rate(plain(100_000));
    assert!(close(p_discounted, 3.5 / 1250.0, 1e-12), "{p_discounted}");

    // DF above the threshold: I_0 = 300 -> DF = 2/3.
    let discounted = history_of(&[100; 8], 300, true);
    let df = 2.0 / 3.0;
    let expected = (1.0 + 5.0 * df) / (300.0 + 500.0 * df);
    let p = discounted.loss_event_rate(plain(100_000));
    assert!(close(p, expected, 1e-12), "{p} vs {expected}");

    // I_0 at most twice the mean: no discount.
    let discounted = history_of(&[100; 8], 150, true);
    let undiscounted = history_of(&[100; 8], 150, false);
    assert_eq!(
        discounted.loss_event_rate(plain(100_000)),
        undiscounted.loss_event_rate(plain(100_000))
    );

    // At the next loss event the discount sticks to the older intervals; the
    // closing long interval starts with DF_1 = 1.
    let mut discounted = history_of(&[100; 8], 1_000, true);
    let next = discounted.open().unwrap().start_seq() + 1_000;
    discounted.start_event(event(next, 90_000, 1), next);
    let factors: Vec<f64> = discounted.intervals().map(LossInterval::discount).collect();
    assert_eq!(factors, [1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    // Off by default: the same events leave every DF_i at 1.
    let mut plain_history = history_of(&[100; 8], 1_000, false);
    plain_history.start_event(event(next, 90_000, 1), next);
    assert!(plain_history.intervals().all(|i| i.discount() == 1.0));
}

/// RFC 4828 §3: intervals shorter than 2R are divided by their losses.
#[test]
fn small_packet_short_intervals_divided_by_losses() {
    let mut history = LossIntervalHistory::new(DEFAULT_LOSS_INTERVALS, false);
    // Event A at t = 0 with 4 losses, event B 150 ms (< 2R) and 40 packets
    // later, event C 1 s later.
    history.start_event(event(1_000, 0, 4), 1_000);
    history.start_event(event(1_040, 150, 1), 1_040);
    history.start_event(event(1_140, 1_150, 2), 1_300);
    let lengths: Vec<u64> = history.intervals().map(LossInterval::length).collect();
    assert_eq!(lengths, [161, 100, 40]);
    let now = Instant::from_millis(10_000);
    let rfc5348 = history.average(plain(10_000)).unwrap();
    let sp = history
        .average(AverageContext {
            now,
            rtt: R100,
            small_packet: true,
        })
        .unwrap();
    // RFC 5348: max(161 + 100, 100 + 40) / 2 = 130.5.
    assert!(close(rfc5348, 130.5, 1e-12), "{rfc5348}");
    // TFRC-SP: I_2 = 40/4 = 10 (short); I_1 = 100 is 1 s long: not divided.
    assert!(close(sp, 130.5, 1e-12), "{sp}");
    // The open interval at its minimum shows the division.
    history.set_highest(1_140);
    let rfc5348 = history.average(plain(10_000)).unwrap();
    let sp = history
        .average(AverageContext {
            now,
            rtt: R100,
            small_packet: true,
        })
        .unwrap();
    assert!(close(rfc5348, 70.0, 1e-12), "{rfc5348}"); // max(1 + 100, 100 + 40) / 2
    assert!(close(sp, 55.0, 1e-12), "{sp}"); // max(1 + 100, 100 + 10) / 2
}

/// RFC 4828 §3: I_0 only counts once it is two round-trip times long.
#[test]
fn small_packet_young_open_interval_ignored() {
    let history = history_of(&[100; 8], 1_000, false);
    let start = history.open().unwrap().start_time();
    let at = |after: Duration| AverageContext {
        now: start + after,
        rtt: R100,
        small_packet: true,
    };
    // Young (< 2R): I_mean = I_tot1/W_tot = 100 despite I_0 = 1000.
    let young = history.average(at(Duration::from_millis(150))).unwrap();
    assert!(close(young, 100.0, 1e-12), "{young}");
    // Two RTTs on, the RFC 5348 average applies: 1500/6 = 250.
    let old = history.average(at(Duration::from_millis(200))).unwrap();
    assert!(close(old, 250.0, 1e-12), "{old}");
    // Without TFRC-SP age does not matter.
    let plain_young = history
        .average(AverageContext {
            small_packet: false,
            ..at(Duration::from_millis(1))
        })
        .unwrap();
    assert!(close(plain_young, 250.0, 1e-12), "{plain_young}");
}

#[test]
fn first_event_with_synthetic_interval() {
    let mut history = LossIntervalHistory::new(DEFAULT_LOSS_INTERVALS, false);
    history.start_first_event(event(100, 0, 1), 1.0 / 0.022_122, 103);
    let kinds: Vec<IntervalKind> = history.intervals().map(LossInterval::kind).collect();
    assert_eq!(kinds, [IntervalKind::Open, IntervalKind::Synthetic]);
    assert_eq!(
        history.intervals().nth(1).map(LossInterval::length),
        Some(45)
    );
    let p = history.loss_event_rate(plain(1_000));
    assert!(close(p, 0.022_122, 1e-9), "{p}");
    // The synthetic interval ages like any other.
    history.start_event(event(200, 5_000, 1), 200);
    let kinds: Vec<IntervalKind> = history.intervals().map(LossInterval::kind).collect();
    assert_eq!(
        kinds,
        [
            IntervalKind::Open,
            IntervalKind::Closed,
            IntervalKind::Synthetic
        ]
    );
}

#[test]
fn option_fields() {
    let mut history = LossIntervalHistory::new(DEFAULT_LOSS_INTERVALS, false);
    history.start_event(event(100, 0, 3), 102);
    history.add_losses_to_open_event(2, 110);
    history.start_event(event(150, 1_000, 1), 160);
    let closed = history.intervals().nth(1).copied().unwrap();
    assert_eq!(closed.length(), 50);
    assert_eq!(closed.lost_packets(), 5);
    assert_eq!(closed.loss_length(), 11);
    assert_eq!(closed.lossless_length(), 39);
    let open = history.open().copied().unwrap();
    assert_eq!((open.length(), open.loss_length()), (11, 1));
}

fn receive(detector: &mut LossDetector, seqs: impl IntoIterator<Item = u64>) {
    for seq in seqs {
        detector.on_packet(PacketMark {
            seq,
            arrival: Instant::from_millis(seq * 10),
            window_counter: None,
        });
    }
}

#[test]
fn cancelling_losses() {
    // Lost: 1..=3 (event A) and 21..=23 (event B, open).
    let mut detector = LossDetector::new(NDUPACK);
    receive(&mut detector, [0, 4, 5, 6]);
    receive(&mut detector, 7..=20);
    receive(&mut detector, 24..=60);
    let mut history = LossIntervalHistory::new(DEFAULT_LOSS_INTERVALS, false);
    history.start_event(event(1, 10, 3), 6);
    history.start_event(event(21, 210, 3), 26);
    history.set_highest(60);
    let lengths =
        |h: &LossIntervalHistory| -> Vec<u64> { h.intervals().map(LossInterval::length).collect() };
    let lost = |h: &LossIntervalHistory| -> Vec<u64> {
        h.intervals().map(LossInterval::lost_packets).collect()
    };
    assert_eq!(lengths(&history), [40, 20]);

    let mut cancel = |history: &mut LossIntervalHistory, seq: u64| {
        assert_eq!(
            detector
                .on_packet(PacketMark {
                    seq,
                    arrival: Instant::from_millis(1_000),
                    window_counter: None,
                })
                .kind,
            ArrivalKind::Recovered
        );
        history.cancel_loss(seq, &detector, 60)
    };
    // Closed interval: only the count changes, even for its first packet.
    assert_eq!(cancel(&mut history, 2), Cancellation::Uncounted);
    assert_eq!(cancel(&mut history, 1), Cancellation::Uncounted);
    assert_eq!(
        (lengths(&history), lost(&history)),
        (vec![40, 20], vec![3, 1])
    );
    // The open event's last loss: one fewer, loss part shorter.
    assert_eq!(cancel(&mut history, 23), Cancellation::Uncounted);
    assert_eq!(history.open().map(LossInterval::loss_length), Some(2));
    // Its first loss: the event moves to 22; I_1 grows by one.
    assert_eq!(cancel(&mut history, 21), Cancellation::StartMoved);
    assert_eq!(
        (lengths(&history), lost(&history)),
        (vec![39, 21], vec![1, 1])
    );
    assert_eq!(
        history.open().map(LossInterval::start_time),
        Some(Instant::from_millis(220))
    );
    // Its only remaining loss: the event goes and I_1 is open again.
    assert_eq!(cancel(&mut history, 22), Cancellation::EventRemoved);
    assert_eq!((lengths(&history), lost(&history)), (vec![60], vec![1]));
    assert!(history.open().is_some());
    // A packet never counted.
    assert_eq!(
        history.cancel_loss(50, &detector, 60),
        Cancellation::NotCounted
    );
}

#[test]
fn cancelling_the_first_event_empties_the_history() {
    let mut detector = LossDetector::new(NDUPACK);
    receive(&mut detector, [0, 2, 3, 4]);
    let mut history = LossIntervalHistory::new(DEFAULT_LOSS_INTERVALS, false);
    history.start_first_event(event(1, 10, 1), 40.0, 4);
    assert!(history.loss_event_rate(plain(0)) > 0.0);
    receive(&mut detector, [1]);
    assert_eq!(
        history.cancel_loss(1, &detector, 4),
        Cancellation::EventRemoved
    );
    assert!(history.is_empty());
    assert_eq!(history.loss_event_rate(plain(0)), 0.0);
}

/// MulTFRC's j: the lost packets per loss event, weighted as the intervals
/// are; the synthetic interval has no loss event and is left out.
#[test]
fn mean_lost_packets_per_loss_event() {
    let mut history = LossIntervalHistory::new(DEFAULT_LOSS_INTERVALS, false);
    assert_eq!(history.mean_lost_packets(), None);
    history.start_first_event(event(100, 0, 3), 40.0, 102);
    history.add_losses_to_open_event(2, 110);
    assert_eq!(history.mean_lost_packets(), Some(5.0));
    history.start_event(event(150, 1_000, 1), 160);
    assert_eq!(history.mean_lost_packets(), Some(3.0));
    // Nine more single-loss events: the eight newest (weights 1, 1, 1, 1,
    // 0.8, 0.6, 0.4, 0.2) are all single losses.
    for i in 0..9 {
        let seq = 200 + 50 * i;
        history.start_event(event(seq, 2_000 + 1_000 * i, 1), seq);
    }
    assert_eq!(history.mean_lost_packets(), Some(1.0));
}

proptest::proptest! {
    /// The plain average reads the intervals directly: the same value, to
    /// the bit, as the general computation over the array of lengths.
    #[test]
    fn the_plain_average_is_the_general_one_to_the_bit(
        closed in proptest::collection::vec(1u64..5_000, 1..12),
        open in 1u64..20_000,
        discounting: bool,
    ) {
        let history = history_of(&closed, open, discounting);
        let k = history.intervals.len().saturating_sub(1).min(history.n());
        proptest::prop_assume!(k > 0);
        let general = history.average_of(&history.lengths(None), k, plain(0));
        proptest::prop_assert_eq!(history.plain_average(k).to_bits(), general.to_bits());
        proptest::prop_assert_eq!(history.average(plain(0)), Some(general));
    }
}
