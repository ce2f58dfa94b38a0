//! Link directions measured: timing, capacity, loss, conservation, determinism.

// An integration test is not `cfg(test)`, so clippy.toml's allow-unwrap-in-tests
// does not reach its helper functions; a panic is how a test fails.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;
use fairstream_sim::link::{Capacity, Delivery, EnqueueOutcome, LinkConfig, LinkDirection};
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::{DropReason, Limit, QueueConfig, SimPacket};
use fairstream_sim::rng::SimRng;
use fairstream_sim::trace::Trace;
use proptest::prelude::*;

/// A test packet: an id and a size.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pkt {
    id: u64,
    size: u32,
}

impl SimPacket for Pkt {
    fn size_bytes(&self) -> u32 {
        self.size
    }
}

fn ms(millis: u64) -> Instant {
    Instant::from_millis(millis)
}

fn drop_tail(packets: usize) -> QueueConfig {
    QueueConfig::DropTail {
        limit: Limit::Packets(packets),
    }
}

fn fixed(bytes_per_sec: f64, delay_ms: u64, overhead: u32, queue: usize) -> LinkConfig {
    LinkConfig {
        capacity: Capacity::Fixed(Rate::from_bytes_per_sec(bytes_per_sec)),
        delay: Duration::from_millis(delay_ms),
        overhead_bytes: overhead,
        queue: drop_tail(queue),
        loss: LossConfig::None,
        delay_change: None,
        outage: None,
    }
}

fn traced(trace: Trace, overhead: u32, queue: usize) -> LinkConfig {
    LinkConfig {
        capacity: Capacity::Trace(trace),
        delay: Duration::ZERO,
        overhead_bytes: overhead,
        queue: drop_tail(queue),
        loss: LossConfig::None,
        delay_change: None,
        outage: None,
    }
}

/// Runs the link event by event until it is idle; returns every delivery.
fn drain(link: &mut LinkDirection<Pkt>) -> Vec<Delivery<Pkt>> {
    let mut out = Vec::new();
    while let Some(at) = link.next_event() {
        out.extend(link.process(at));
    }
    out
}

fn pkt(id: u64, size: u32) -> Pkt {
    Pkt { id, size }
}

#[test]
fn fixed_link_serialises_at_exactly_its_rate_then_delays() {
    // 1000-byte packets + 28 bytes overhead at 1 028 000 B/s: 1 ms each.
    let mut link =
        LinkDirection::new(fixed(1_028_000.0, 10, 28, 1000), SimRng::new(1), ms(0)).unwrap();
    for id in 0..200 {
        assert_eq!(link.enqueue(ms(0), pkt(id, 1000)), EnqueueOutcome::Queued);
    }
    assert_eq!(link.next_event(), Some(ms(1)));
    let deliveries = drain(&mut link);
    assert_eq!(deliveries.len(), 200);
    for (k, delivery) in deliveries.iter().enumerate() {
        assert_eq!(delivery.packet.id, k as u64, "FIFO");
        // Finish of packet k: (k + 1) ms; arrival 10 ms later.
        assert_eq!(delivery.at, ms(k as u64 + 1 + 10), "packet {k}");
    }
    let stats = link.stats();
    assert_eq!(stats.wire_bytes_sent, 200 * 1028);
    assert_eq!(stats.busy_time, Duration::from_millis(200));
    assert_eq!(link.utilisation(ms(200)), 1.0);
    assert_eq!(link.utilisation(ms(400)), 0.5);
    assert!(link.conservation().holds());
}

#[test]
fn fixed_link_rate_is_exact_with_awkward_sizes() {
    // 8 Mbit/s, 1371-byte packets + 28: 1399 / 1e6 s each, not a whole number
    // of nanoseconds; the k-th finish must still be k·1399 µs to the nanosecond.
    let mut link =
        LinkDirection::new(fixed(1_000_000.0, 0, 28, 10_000), SimRng::new(1), ms(0)).unwrap();
    for id in 0..5000 {
        link.enqueue(ms(0), pkt(id, 1371));
    }
    let deliveries = drain(&mut link);
    let last = deliveries.last().unwrap().at;
    assert_eq!(last, Instant::from_micros(5000 * 1399));
    let rate = 5000.0 * 1399.0 * 8.0 / last.as_secs_f64();
    assert!((rate - 8e6).abs() < 1e-3, "{rate}");
}

#[test]
fn fixed_link_idle_gap_restarts_at_arrival() {
    let mut link = LinkDirection::new(fixed(1_000_000.0, 5, 0, 10), SimRng::new(1), ms(0)).unwrap();
    link.enqueue(ms(0), pkt(0, 1000));
    link.enqueue(ms(10), pkt(1, 1000));
    link.enqueue(ms(10), pkt(2, 1000));
    let at: Vec<Instant> = drain(&mut link).iter().map(|d| d.at).collect();
    assert_eq!(at, [ms(6), ms(16), ms(17)]);
    // A busy link queues; a full queue drops and hands the packet back.
    let mut link = LinkDirection::new(fixed(1_000.0, 0, 0, 2), SimRng::new(1), ms(0)).unwrap();
    for id in 0..3 {
        assert_eq!(link.enqueue(ms(0), pkt(id, 100)), EnqueueOutcome::Queued);
    }
    assert_eq!(link.queue_len_packets(), 2, "one in service, two queued");
    let EnqueueOutcome::Dropped(drop) = link.enqueue(ms(0), pkt(9, 100)) else {
        panic!("queue should be full");
    };
    assert_eq!((drop.packet.id, drop.reason), (9, DropReason::Full));
    assert_eq!(link.stats().queue_drops, 1);
    assert!(link.conservation().holds());
}

#[test]
fn invalid_rate_is_refused() {
    let err = LinkDirection::<Pkt>::new(fixed(0.0, 0, 0, 1), SimRng::new(1), ms(0)).unwrap_err();
    assert!(err.to_string().contains("rate"), "{err}");
}

#[test]
fn trace_small_packets_finish_several_per_opportunity_and_span() {
    // Opportunities at 1, 2, 4 ms, then looped: 5, 6, 8, 9, 10, 12, …
    let trace = Trace::parse("1\n2\n4\n").unwrap();
    let mut link = LinkDirection::new(traced(trace, 0, 100), SimRng::new(1), ms(0)).unwrap();
    // 300-byte packets: five (1500 bytes) in the first opportunity, the sixth
    // gets 4 bytes there and its remaining 296 in the second.
    for id in 0..10 {
        link.enqueue(ms(0), pkt(id, 300));
    }
    assert_eq!(link.next_event(), Some(ms(1)));
    let at: Vec<u64> = drain(&mut link)
        .iter()
        .map(|d| d.at.as_nanos() / 1_000_000)
        .collect();
    assert_eq!(at, [1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    // A 4000-byte packet spans three opportunities (1504 + 1504 + 992); the
    // schedule loops, shifted by the last timestamp (4 ms).
    let trace = Trace::parse("1\n2\n4\n").unwrap();
    let mut link = LinkDirection::new(traced(trace, 0, 100), SimRng::new(1), ms(0)).unwrap();
    link.enqueue(ms(0), pkt(0, 4000));
    link.enqueue(ms(0), pkt(1, 1504));
    link.enqueue(ms(0), pkt(2, 2000));
    let at: Vec<u64> = drain(&mut link)
        .iter()
        .map(|d| d.at.as_nanos() / 1_000_000)
        .collect();
    // pkt 0: 1, 2, 4 (512 bytes left over go to pkt 1); pkt 1: 4 → needs 992 more at 5;
    // pkt 2: 512 bytes at 5, 1488 at 6.
    assert_eq!(at, [4, 5, 6]);
    assert_eq!(link.stats().wire_bytes_sent, 4000 + 1504 + 2000);
}

#[test]
fn trace_wastes_opportunities_when_idle() {
    let trace = Trace::parse("1\n2\n4\n").unwrap();
    let mut link = LinkDirection::new(traced(trace, 0, 100), SimRng::new(1), ms(0)).unwrap();
    assert_eq!(link.next_event(), None);
    // Arriving exactly at an opportunity (5 ms) misses it, as in mahimahi.
    link.enqueue(ms(5), pkt(0, 100));
    assert_eq!(link.next_event(), Some(ms(6)));
    assert_eq!(link.process(ms(6))[0].at, ms(6));
    // Arriving after many idle passes skips them without walking them.
    link.enqueue(ms(4_000_000_001), pkt(1, 100));
    assert_eq!(link.next_event(), Some(ms(4_000_000_002)));
    // Utilisation counts the wasted opportunities: 200 bytes of 1504 × 6.
    let used = link.utilisation(ms(8));
    assert!((used - 100.0 / (6.0 * 1504.0)).abs() < 1e-12, "{used}");
}

/// Keeps the link saturated for `duration` and returns delivered wire bits/s.
fn saturated_trace_rate(trace: &Trace, size: u32, overhead: u32, duration: Duration) -> f64 {
    let mut link =
        LinkDirection::new(traced(trace.clone(), overhead, 200), SimRng::new(5), ms(0)).unwrap();
    let end = ms(0) + duration;
    let mut id = 0;
    let mut bytes = 0u64;
    let mut now = ms(0);
    loop {
        while link.queue_len_packets() < 100 {
            link.enqueue(now, pkt(id, size));
            id += 1;
        }
        let Some(next) = link.next_event() else {
            panic!("a saturated link is never idle");
        };
        if next > end {
            break;
        }
        now = next;
        for delivery in link.process(now) {
            assert!(delivery.at <= end);
            bytes += u64::from(size + overhead);
        }
    }
    assert!(link.conservation().holds());
    assert!(link.utilisation(end) > 0.99, "{}", link.utilisation(end));
    bytes as f64 * 8.0 / duration.as_secs_f64()
}

#[test]
fn saturated_verizon_link_drains_at_the_trace_mean_rate() {
    let Some(path) = fairstream_testkit::shared_file("data/traces/Verizon-LTE-short.down") else {
        return;
    };
    let trace = Trace::from_file(&path).unwrap();
    let mean = trace.mean_rate().bits_per_sec();
    // Two passes, so the loop is crossed; packets that fit an opportunity
    // exactly, and packets that span them.
    let two_passes = trace.period() * 2;
    for (size, overhead) in [(1476, 28), (972, 28), (200, 0)] {
        let rate = saturated_trace_rate(&trace, size, overhead, two_passes);
        eprintln!(
            "Verizon-LTE-short.down saturated, {size}+{overhead} B packets: {:.4} Mbit/s (trace mean {:.4})",
            rate / 1e6,
            mean / 1e6
        );
        assert!((rate / mean - 1.0).abs() < 0.001, "{rate} vs {mean}");
        assert!((rate / 1e6 - 5.03).abs() < 0.02, "{rate}");
    }
}

fn lossy(seed: u64) -> (LinkDirection<Pkt>, Vec<Delivery<Pkt>>) {
    let config = LinkConfig {
        capacity: Capacity::Fixed(Rate::from_bits_per_sec(2e6)),
        delay: Duration::from_millis(5),
        overhead_bytes: 28,
        queue: QueueConfig::red(5.0, 15.0, 0.1, Limit::Packets(30)),
        loss: LossConfig::PAPER_000,
        delay_change: None,
        outage: None,
    };
    let mut link =
        LinkDirection::new(config, SimRng::for_element(seed, "link:bs-client"), ms(0)).unwrap();
    let mut out = Vec::new();
    // 3 Mbit/s offered into 2 Mbit/s.
    for id in 0..20_000u64 {
        let now = Instant::from_micros(id * 4000 / 3);
        out.extend(link.process(now));
        link.enqueue(now, pkt(id, 472));
    }
    out.extend(drain(&mut link));
    (link, out)
}

#[test]
fn channel_loss_and_queue_drops_are_split_and_conserved() {
    let (link, delivered) = lossy(1);
    let stats = link.stats();
    let conservation = link.conservation();
    assert!(conservation.holds(), "{conservation:?}");
    assert_eq!(conservation.in_link, 0);
    assert_eq!(stats.delivered, delivered.len() as u64);
    // A third of the offered load cannot fit; RED drops it.
    let drop_share = stats.queue_drops as f64 / stats.offered as f64;
    assert!((drop_share - 1.0 / 3.0).abs() < 0.03, "{drop_share}");
    assert_eq!(
        link.queue_stats().dropped_full + link.queue_stats().dropped_red,
        stats.queue_drops
    );
    // Channel loss ≈ the Gilbert-Elliott steady state (≈ 2.8 %).
    let loss = stats.channel_losses as f64 / stats.packets_sent as f64;
    assert!((loss - 0.0282).abs() < 0.006, "{loss}");
}

#[test]
fn same_seed_same_outcome() {
    let (a_link, a) = lossy(7);
    let (b_link, b) = lossy(7);
    let (_, c) = lossy(8);
    assert_eq!(a, b);
    assert_eq!(a_link.stats(), b_link.stats());
    assert_ne!(a, c);
}

#[derive(Clone, Debug)]
enum Op {
    Enqueue { after_us: u64, size: u32 },
    Process { after_us: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u64..3000, 0u32..4000).prop_map(|(after_us, size)| Op::Enqueue { after_us, size }),
        (0u64..20_000).prop_map(|after_us| Op::Process { after_us }),
    ]
}

proptest! {
    #[test]
    fn every_packet_is_counted_exactly_once(
        ops in proptest::collection::vec(op(), 1..300),
        use_trace in any::<bool>(),
        red in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let capacity = if use_trace {
            Capacity::Trace(Trace::parse("0\n3\n3\n3\n7\n20\n").unwrap())
        } else {
            Capacity::Fixed(Rate::from_bits_per_sec(3e6))
        };
        let queue = if red {
            QueueConfig::red(2.0, 6.0, 0.2, Limit::Bytes(20_000))
        } else {
            drop_tail(8)
        };
        let config = LinkConfig {
            capacity,
            delay: Duration::from_millis(3),
            overhead_bytes: 28,
            queue,
            loss: LossConfig::Bernoulli { p: 0.1 },
            delay_change: None,
            outage: None,
        };
        let mut link = LinkDirection::new(config, SimRng::new(seed), ms(0)).unwrap();
        let mut now = ms(0);
        let mut next_id = 0u64;
        let mut last_id = None;
        let mut last_at = ms(0);
        let mut check = |deliveries: Vec<Delivery<Pkt>>, now: Instant| {
            for delivery in deliveries {
                // FIFO, and never before it could have finished.
                prop_assert!(last_id.is_none_or(|last| delivery.packet.id > last));
                prop_assert!(delivery.at >= last_at);
                prop_assert!(delivery.at <= now + Duration::from_millis(3));
                last_id = Some(delivery.packet.id);
                last_at = delivery.at;
            }
            Ok(())
        };
        for op in ops {
            match op {
                Op::Enqueue { after_us, size } => {
                    now += Duration::from_micros(after_us);
                    link.enqueue(now, pkt(next_id, size));
                    next_id += 1;
                }
                Op::Process { after_us } => {
                    now += Duration::from_micros(after_us);
                    let out = link.process(now);
                    check(out, now)?;
                }
            }
            prop_assert!(link.conservation().holds(), "{:?}", link.conservation());
            prop_assert!(link.next_event().is_none_or(|at| at >= now));
        }
        while let Some(at) = link.next_event() {
            prop_assert!(at >= now, "next event {at} before {now}");
            now = at;
            let out = link.process(now);
            check(out, now)?;
        }
        let conservation = link.conservation();
        prop_assert!(conservation.holds(), "{conservation:?}");
        prop_assert_eq!(conservation.in_link, 0);
        prop_assert_eq!(conservation.offered, next_id);
    }
}

#[test]
fn lost_packets_are_kept_only_on_request() {
    let config = || LinkConfig {
        capacity: Capacity::Fixed(Rate::from_bits_per_sec(10e6)),
        delay: Duration::from_millis(1),
        overhead_bytes: 0,
        queue: drop_tail(1000),
        loss: LossConfig::Bernoulli { p: 0.2 },
        delay_change: None,
        outage: None,
    };
    let mut kept = LinkDirection::new(config(), SimRng::new(3), ms(0)).unwrap();
    kept.keep_lost_packets();
    let mut discarded = LinkDirection::new(config(), SimRng::new(3), ms(0)).unwrap();
    for id in 0..500 {
        kept.enqueue(ms(id), pkt(id, 500));
        discarded.enqueue(ms(id), pkt(id, 500));
    }
    let delivered = drain(&mut kept);
    drain(&mut discarded);
    let lost = kept.take_lost_packets();
    assert!(!lost.is_empty());
    assert_eq!(lost.len() as u64, kept.stats().channel_losses);
    assert!(lost
        .iter()
        .all(|l| delivered.iter().all(|d| d.packet.id != l.id)));
    assert_eq!(lost.len() + delivered.len(), 500);
    assert!(kept.take_lost_packets().is_empty());
    assert!(discarded.take_lost_packets().is_empty());
    assert_eq!(discarded.stats(), kept.stats());
}

#[test]
fn a_route_change_switches_the_delay_at_its_time() {
    let mut config = fixed(125_000.0, 20, 0, 10);
    config.delay_change = Some((ms(1000), Duration::from_millis(50)));
    let mut link = LinkDirection::new(config, SimRng::new(1), ms(0)).unwrap();
    assert!(matches!(
        link.enqueue(ms(0), pkt(1, 1000)),
        EnqueueOutcome::Queued
    ));
    let before = drain(&mut link);
    // 1000 bytes at 125 kB/s: 8 ms, then 20 ms of propagation.
    assert_eq!(before[0].at, ms(28));
    assert!(matches!(
        link.enqueue(ms(2000), pkt(2, 1000)),
        EnqueueOutcome::Queued
    ));
    let after = drain(&mut link);
    assert_eq!(after[0].at, ms(2058));
}
