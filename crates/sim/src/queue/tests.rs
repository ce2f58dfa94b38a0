//! Drop-tail and RED queue tests.

use super::*;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Pkt(u32);

impl SimPacket for Pkt {
    fn size_bytes(&self) -> u32 {
        self.0
    }
}

fn t(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

#[test]
fn drop_tail_in_packets() {
    let config = QueueConfig::DropTail {
        limit: Limit::Packets(3),
    };
    let mut queue = Queue::new(config, t(0)).unwrap();
    let mut rng = SimRng::new(0);
    for i in 0..3 {
        queue.enqueue(t(i), Pkt(100), &mut rng).unwrap();
    }
    let drop = queue.enqueue(t(3), Pkt(7), &mut rng).unwrap_err();
    assert_eq!(drop.packet, Pkt(7));
    assert_eq!(drop.reason, DropReason::Full);
    assert_eq!((queue.len_packets(), queue.len_bytes()), (3, 300));
    assert_eq!(queue.dequeue(t(4)), Some(Pkt(100)));
    queue.enqueue(t(5), Pkt(1), &mut rng).unwrap();
    let stats = queue.stats();
    assert_eq!(
        (stats.enqueued, stats.dropped_full, stats.max_len_packets),
        (4, 1, 3)
    );
}

#[test]
fn drop_tail_in_bytes() {
    let config = QueueConfig::DropTail {
        limit: Limit::Bytes(1000),
    };
    let mut queue = Queue::new(config, t(0)).unwrap();
    let mut rng = SimRng::new(0);
    queue.enqueue(t(0), Pkt(600), &mut rng).unwrap();
    assert_eq!(
        queue.enqueue(t(0), Pkt(401), &mut rng).unwrap_err().reason,
        DropReason::Full
    );
    // A smaller packet still fits exactly.
    queue.enqueue(t(0), Pkt(400), &mut rng).unwrap();
    assert_eq!(queue.len_bytes(), 1000);
    assert!(queue.enqueue(t(0), Pkt(1), &mut rng).is_err());
    assert_eq!(queue.stats().max_len_bytes, 1000);
}

/// Holds the instantaneous queue at `target` packets and offers `n`
/// arrivals, each followed by a departure; returns the drop fraction.
fn red_drop_fraction(config: QueueConfig, target: usize, n: usize, seed: u64) -> f64 {
    let mut queue = Queue::new(config, t(0)).unwrap();
    let mut rng = SimRng::new(seed);
    let mut now = t(0);
    while queue.len_packets() < target {
        // The first arrivals are below min_th on average: never dropped.
        queue.enqueue(now, Pkt(1000), &mut rng).unwrap();
    }
    // Let the average converge (w_q = 0.002: 5000 arrivals ≈ e^-10).
    let mut drops = 0usize;
    for i in 0..(5000 + n) {
        now += Duration::from_micros(10);
        let dropped = queue.enqueue(now, Pkt(1000), &mut rng).is_err();
        if !dropped {
            queue.dequeue(now);
        }
        if i >= 5000 && dropped {
            drops += 1;
        }
    }
    drops as f64 / n as f64
}

#[test]
fn red_drop_probability_rises_between_thresholds() {
    let config = QueueConfig::red(5.0, 15.0, 0.1, Limit::Packets(100));
    let fractions: Vec<f64> = [4, 8, 12, 14, 16, 30]
        .iter()
        .map(|&q| red_drop_fraction(config, q, 20_000, 1))
        .collect();
    assert_eq!(fractions[0], 0.0, "{fractions:?}");
    assert!(
        fractions.windows(2).all(|w| w[0] < w[1] || w[1] == 1.0),
        "{fractions:?}"
    );
    // With count-spreading, drops at p_b come every ~1/(2 p_b) + 1/2 packets,
    // so the fraction is ≈ 2 p_b / (1 + p_b); at q = 12, p_b = 0.07.
    let p_b = 0.07;
    let expected = 2.0 * p_b / (1.0 + p_b);
    assert!((fractions[2] - expected).abs() < 0.01, "{fractions:?}");
    // Above max_th (not gentle) every arrival is dropped.
    assert_eq!(fractions[4], 1.0, "{fractions:?}");
    assert_eq!(fractions[5], 1.0, "{fractions:?}");
}

#[test]
fn gentle_red_is_below_one_just_above_max_th() {
    let QueueConfig::Red {
        min_th,
        max_th,
        max_p,
        weight,
        limit,
        idle_packet_time,
        ..
    } = QueueConfig::red(5.0, 15.0, 0.1, Limit::Packets(100))
    else {
        unreachable!()
    };
    let gentle = QueueConfig::Red {
        min_th,
        max_th,
        max_p,
        weight,
        limit,
        gentle: true,
        idle_packet_time,
        ecn: false,
    };
    let fraction = red_drop_fraction(gentle, 18, 20_000, 2);
    assert!(fraction > 0.2 && fraction < 1.0, "{fraction}");
}

#[test]
fn red_average_tracks_with_the_weight() {
    let config = QueueConfig::red(50.0, 150.0, 0.1, Limit::Packets(1000));
    let mut queue = Queue::new(config, t(0)).unwrap();
    let mut rng = SimRng::new(3);
    // The first arrival finds an empty queue that was idle for 0 s.
    queue.enqueue(t(0), Pkt(1), &mut rng).unwrap();
    assert_eq!(queue.red_average(), Some(0.0));
    // Each next arrival sees q = k and moves avg by w_q·(q − avg).
    let mut expected = 0.0;
    for k in 1..=20usize {
        expected += 0.002 * (k as f64 - expected);
        queue.enqueue(t(0), Pkt(1), &mut rng).unwrap();
    }
    let average = queue.red_average().unwrap();
    assert!(
        (average - expected).abs() < 1e-12,
        "{average} vs {expected}"
    );
    assert!(average > 0.3 && average < 0.5, "{average}");
    // After an idle period of m packet times the average decays by (1 − w_q)^m.
    while queue.dequeue(t(1)).is_some() {}
    queue.enqueue(t(1001), Pkt(1), &mut rng).unwrap();
    let decayed = queue.red_average().unwrap();
    let m = 1000.0; // 1000 ms idle / s = 1 ms
    assert!(
        (decayed - average * 0.998f64.powf(m)).abs() < 1e-12,
        "{decayed}"
    );
}

#[test]
fn red_is_deterministic_for_a_seed() {
    let config = QueueConfig::red(5.0, 15.0, 0.1, Limit::Packets(100));
    let run = |seed| {
        let mut queue = Queue::new(config, t(0)).unwrap();
        let mut rng = SimRng::new(seed);
        (0..3000u64)
            .map(|i| {
                let ok = queue.enqueue(t(i), Pkt(1000), &mut rng).is_ok();
                if i % 3 == 0 {
                    queue.dequeue(t(i));
                }
                ok
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(9), run(9));
    assert_ne!(run(9), run(10));
}

#[test]
fn invalid_red_parameters_are_named() {
    let err =
        Queue::<Pkt>::new(QueueConfig::red(10.0, 5.0, 0.1, Limit::Packets(9)), t(0)).unwrap_err();
    assert!(err.to_string().contains("max_th"), "{err}");
    let err =
        Queue::<Pkt>::new(QueueConfig::red(1.0, 5.0, 1.5, Limit::Packets(9)), t(0)).unwrap_err();
    assert!(err.to_string().contains("max_p"), "{err}");
}

mod aqm_props;
mod codel;
mod fq_codel;
mod priority;

/// A packet with an ECN field and a flow, for the AQM tests.
#[derive(Clone, Debug, PartialEq, Eq)]
struct EcnPkt {
    size: u32,
    ecn: fairstream_proto::ecn::Ecn,
    flow: u64,
    /// Whether it was ECN-capable when it was sent.
    sent_ect: bool,
}

impl EcnPkt {
    fn new(size: u32, ecn: fairstream_proto::ecn::Ecn, flow: u64) -> EcnPkt {
        EcnPkt {
            size,
            ecn,
            flow,
            sent_ect: ecn.is_ect(),
        }
    }
}

impl SimPacket for EcnPkt {
    fn size_bytes(&self) -> u32 {
        self.size
    }

    fn ecn(&self) -> fairstream_proto::ecn::Ecn {
        self.ecn
    }

    fn set_ce(&mut self) {
        self.ecn = fairstream_proto::ecn::Ecn::Ce;
    }

    fn flow_key(&self) -> u64 {
        self.flow
    }
}

fn red_with_ecn(gentle: bool) -> QueueConfig {
    let QueueConfig::Red {
        min_th,
        max_th,
        max_p,
        weight,
        limit,
        idle_packet_time,
        ..
    } = QueueConfig::red(5.0, 15.0, 0.1, Limit::Packets(100))
    else {
        unreachable!()
    };
    QueueConfig::Red {
        min_th,
        max_th,
        max_p,
        weight,
        limit,
        gentle,
        idle_packet_time,
        ecn: true,
    }
}

/// Holds RED's queue at `target` packets and offers `n` arrivals that
/// alternate ECT(0) and Not-ECT; returns (ECT marked, ECT dropped, Not-ECT
/// dropped, Not-ECT marked) as fractions of each kind.
fn red_ecn_fractions(config: QueueConfig, target: usize, n: usize) -> [f64; 4] {
    use fairstream_proto::ecn::Ecn;
    let mut queue = Queue::new(config, t(0)).unwrap();
    let mut rng = SimRng::new(5);
    let mut now = t(0);
    while queue.len_packets() < target {
        queue
            .enqueue(now, EcnPkt::new(1000, Ecn::NotEct, 0), &mut rng)
            .unwrap();
    }
    let mut counts = [0usize; 4];
    for i in 0..(5000 + n) {
        now += Duration::from_micros(10);
        let ect = i % 2 == 0;
        let codepoint = if ect { Ecn::Ect0 } else { Ecn::NotEct };
        let marks_before = queue.stats().ce_marked;
        let accepted = queue
            .enqueue(now, EcnPkt::new(1000, codepoint, 0), &mut rng)
            .is_ok();
        let marked = queue.stats().ce_marked > marks_before;
        if accepted {
            // Keep the instantaneous length at `target`.
            queue.dequeue(now);
        }
        if i >= 5000 {
            match (ect, marked, accepted) {
                (true, true, _) => counts[0] += 1,
                (true, false, false) => counts[1] += 1,
                (false, false, false) => counts[2] += 1,
                (false, true, _) => counts[3] += 1,
                _ => {}
            }
        }
    }
    let half = (n / 2) as f64;
    counts.map(|c| c as f64 / half)
}

#[test]
fn red_with_ecn_marks_ect_packets_and_drops_not_ect_ones() {
    // Between the thresholds (q = 12, p_b = 0.07): ECT packets are marked
    // where Not-ECT ones are dropped, at the same rate; no ECT packet is lost.
    let [ect_marked, ect_dropped, not_ect_dropped, not_ect_marked] =
        red_ecn_fractions(red_with_ecn(false), 12, 40_000);
    assert_eq!((ect_dropped, not_ect_marked), (0.0, 0.0));
    let expected = 2.0 * 0.07 / (1.0 + 0.07);
    assert!((ect_marked - expected).abs() < 0.015, "{ect_marked}");
    assert!(
        (not_ect_dropped - expected).abs() < 0.015,
        "{not_ect_dropped}"
    );
    // Above max_th (not gentle): Linux sch_red without harddrop marks every
    // ECT packet and drops every Not-ECT one.
    let above = red_ecn_fractions(red_with_ecn(false), 20, 10_000);
    assert_eq!(above, [1.0, 0.0, 1.0, 0.0], "{above:?}");
}

#[test]
fn red_with_ecn_still_drops_when_full() {
    use fairstream_proto::ecn::Ecn;
    // A tiny hard limit under RED thresholds that are never reached.
    let QueueConfig::Red {
        max_p,
        weight,
        idle_packet_time,
        ..
    } = red_with_ecn(false)
    else {
        unreachable!()
    };
    let config = QueueConfig::Red {
        min_th: 50.0,
        max_th: 60.0,
        max_p,
        weight,
        limit: Limit::Packets(3),
        gentle: false,
        idle_packet_time,
        ecn: true,
    };
    let mut queue = Queue::new(config, t(0)).unwrap();
    let mut rng = SimRng::new(1);
    for _ in 0..3 {
        queue
            .enqueue(t(0), EcnPkt::new(100, Ecn::Ect0, 0), &mut rng)
            .unwrap();
    }
    let drop = queue
        .enqueue(t(0), EcnPkt::new(100, Ecn::Ect0, 0), &mut rng)
        .unwrap_err();
    assert_eq!(drop.reason, DropReason::Full);
    assert_eq!(drop.packet.ecn, Ecn::Ect0, "a dropped packet is not marked");
    assert_eq!(
        (queue.stats().ce_marked, queue.stats().dropped_full),
        (0, 1)
    );
}
