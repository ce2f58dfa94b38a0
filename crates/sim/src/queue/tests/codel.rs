//! CoDel (RFC 8289) against its pseudocode: when the first drop comes, the
//! control law's spacing, the count reuse on re-entry, and ECN marking.

use fairstream_proto::ecn::Ecn;

use super::*;

fn codel(ecn: bool) -> Queue<EcnPkt> {
    let config = QueueConfig::CoDel(CoDelConfig {
        ecn,
        limit: Limit::Packets(100_000),
        ..CoDelConfig::default()
    });
    Queue::new(config, t(0)).unwrap()
}

/// Fills the queue with `n` packets at `at`.
fn fill(queue: &mut Queue<EcnPkt>, at: Instant, n: usize, ecn: Ecn) {
    let mut rng = SimRng::new(0);
    for _ in 0..n {
        queue
            .enqueue(at, EcnPkt::new(1000, ecn, 0), &mut rng)
            .unwrap();
    }
}

/// Dequeues once per millisecond from `from` for `ms` milliseconds; returns
/// the times (ms) at which CoDel dropped or marked a packet, with the count
/// after each.
fn signal_times(queue: &mut Queue<EcnPkt>, from: u64, ms: u64) -> Vec<(u64, u32)> {
    let mut signals = Vec::new();
    for now in from..from + ms {
        let before = queue.stats().dropped_codel + queue.stats().ce_marked;
        let _ = queue.dequeue(t(now));
        let after = queue.stats().dropped_codel + queue.stats().ce_marked;
        for _ in before..after {
            let count = queue.codel_state().map_or(0, |s| s.count);
            signals.push((now, count));
        }
        queue.take_dropped();
    }
    signals
}

#[test]
fn codel_leaves_a_queue_below_target_alone() {
    let mut queue = codel(false);
    let mut rng = SimRng::new(0);
    // Two packets arrive every millisecond and two leave: sojourn ≤ 1 ms.
    for now in 0..5_000 {
        for _ in 0..2 {
            queue
                .enqueue(t(now), EcnPkt::new(1000, Ecn::NotEct, 0), &mut rng)
                .unwrap();
        }
        queue.dequeue(t(now + 1));
        queue.dequeue(t(now + 1));
    }
    assert_eq!(queue.stats().dropped(), 0);
    assert!(!queue.codel_state().unwrap().dropping);
}

#[test]
fn codel_drops_after_an_interval_above_target_then_at_interval_over_sqrt_count() {
    let mut queue = codel(false);
    // A standing queue far above target: 5000 packets enqueued at 0,
    // one dequeue per millisecond from 10 ms on.
    fill(&mut queue, t(0), 5_000, Ecn::NotEct);
    let signals = signal_times(&mut queue, 10, 1_000);
    // RFC 8289 §5.6: the first dequeue above target (10 ms) sets
    // first_above_time = 110 ms; the first drop is at the first dequeue at or
    // after it.
    assert_eq!(signals.first(), Some(&(110, 1)), "{signals:?}");
    // §5.6 control_law: the k-th next drop comes interval/√k after the
    // previous one; dequeues are 1 ms apart, so each gap is that, rounded up
    // to the millisecond.
    assert!(signals.len() > 20, "{signals:?}");
    for pair in signals.windows(2) {
        let [(t0, count), (t1, _)] = [pair[0], pair[1]];
        let law = 100.0 / f64::from(count).sqrt();
        let gap = (t1 - t0) as f64;
        assert!(
            gap >= law - 1.0 && gap <= law + 1.0,
            "count {count}: {gap} ms vs {law} ms"
        );
    }
    assert_eq!(queue.stats().dropped_codel, signals.len() as u64);
    assert_eq!(queue.stats().ce_marked, 0);
}

#[test]
fn codel_reuses_the_count_when_it_reenters_dropping_soon() {
    let mut queue = codel(false);
    fill(&mut queue, t(0), 3_000, Ecn::NotEct);
    let first = signal_times(&mut queue, 10, 600);
    // Drain the queue: once at most one MTU is left, dropping ends.
    let mut now = 610;
    while queue.dequeue(t(now)).is_some() {}
    queue.take_dropped();
    let state = queue.codel_state().unwrap();
    assert!(!state.dropping);
    let count = state.count;
    assert!(count > 5, "{first:?}");
    // Refill at once: CoDel goes above target again within 16 intervals of
    // its last drop, and RFC 8289 §5.5's rule starts from count − lastcount.
    now += 1;
    fill(&mut queue, t(now), 3_000, Ecn::NotEct);
    let second = signal_times(&mut queue, now + 10, 200);
    let (_, reentry_count) = second.first().copied().unwrap();
    // lastcount was 1 (the first dropping state started at count 1).
    assert_eq!(reentry_count, count - 1, "{second:?}");

    // Re-entering long after (more than 16 intervals): count restarts at 1.
    let mut late = codel(false);
    fill(&mut late, t(0), 3_000, Ecn::NotEct);
    signal_times(&mut late, 10, 600);
    while late.dequeue(t(610)).is_some() {}
    late.take_dropped();
    fill(&mut late, t(5_000), 3_000, Ecn::NotEct);
    let again = signal_times(&mut late, 5_010, 200);
    assert_eq!(again.first().map(|s| s.1), Some(1), "{again:?}");
}

#[test]
fn codel_with_ecn_marks_ect_packets_on_the_same_schedule() {
    let mut marking = codel(true);
    fill(&mut marking, t(0), 5_000, Ecn::Ect0);
    let marks = signal_times(&mut marking, 10, 1_000);
    assert_eq!(marking.stats().dropped(), 0);
    assert_eq!(marking.stats().ce_marked, marks.len() as u64);
    assert_eq!(marks.first(), Some(&(110, 1)));
    // Not-ECT packets are dropped even with ECN on.
    let mut mixed = codel(true);
    fill(&mut mixed, t(0), 5_000, Ecn::NotEct);
    let drops = signal_times(&mut mixed, 10, 1_000);
    assert_eq!(mixed.stats().ce_marked, 0);
    assert_eq!(mixed.stats().dropped_codel, drops.len() as u64);
    // A marked packet is sent, not dropped: with ECT the queue drains one
    // packet per dequeue; with drops it drains faster.
    assert!(marking.len_packets() > mixed.len_packets());
}

#[test]
fn codel_never_drops_the_last_packet_of_a_short_queue() {
    // RFC 8289 §5.6: "bytes() <= maxpacket" keeps the sojourn test off when
    // at most one MTU remains queued.
    let mut queue = codel(false);
    let mut rng = SimRng::new(0);
    for now in 0..2_000 {
        queue
            .enqueue(t(now * 10), EcnPkt::new(1000, Ecn::NotEct, 0), &mut rng)
            .unwrap();
        queue
            .enqueue(t(now * 10), EcnPkt::new(1000, Ecn::NotEct, 0), &mut rng)
            .unwrap();
        // Each packet waits 9 ms (> target), but only one remains behind it.
        queue.dequeue(t(now * 10 + 9));
        queue.dequeue(t(now * 10 + 9));
    }
    assert_eq!(queue.stats().dropped(), 0);
}
