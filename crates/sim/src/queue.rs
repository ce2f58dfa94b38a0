//! Router queues: drop-tail and RED (Floyd & Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM ToN 1993).
//!
//! A [`Queue`] holds packets of any [`SimPacket`] type in FIFO order. Every
//! call takes `now`; RED's random drops draw from a [`SimRng`] the owner
//! passes in.

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_proto::time::Instant;
use thiserror::Error;

use crate::rng::SimRng;

/// A packet the simulator can carry: a DCCP datagram, a TCP segment, ….
pub trait SimPacket {
    /// The packet's size in bytes as handed to the network (before any
    /// per-packet link overhead).
    fn size_bytes(&self) -> u32;
}

/// A queue's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many packets.
    Packets(usize),
    /// At most this many bytes (sum of [`SimPacket::size_bytes`]).
    Bytes(u64),
}

/// RED's default queue weight w_q (Floyd & Jacobson 1993 §11 uses 0.002).
pub const RED_DEFAULT_WEIGHT: f64 = 0.002;

/// The description of a queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueConfig {
    /// Drop arrivals that do not fit.
    DropTail {
        /// The capacity.
        limit: Limit,
    },
    /// Random Early Detection in packet mode: thresholds and the average are
    /// in packets.
    Red {
        /// min_th: below this average nothing is dropped early.
        min_th: f64,
        /// max_th: at or above this average every arrival is dropped (or, with
        /// `gentle`, the drop probability rises to 1 at 2·max_th).
        max_th: f64,
        /// max_p: the drop probability p_b reached at max_th.
        max_p: f64,
        /// w_q: the EWMA weight of the average queue length.
        weight: f64,
        /// The hard capacity; arrivals beyond it are dropped as [`DropReason::Full`].
        limit: Limit,
        /// Floyd's "gentle" RED (2000): p_b rises linearly from max_p to 1
        /// between max_th and 2·max_th instead of jumping to 1.
        gentle: bool,
        /// s, the typical transmission time of a small packet, for the idle-time
        /// correction: after an idle period the average decays as if m =
        /// idle / s empty-queue packets had arrived (Floyd & Jacobson 1993 §4).
        idle_packet_time: Duration,
    },
}

impl QueueConfig {
    /// RED with the paper's defaults: w_q = 0.002, not gentle, and s = 1 ms.
    pub fn red(min_th: f64, max_th: f64, max_p: f64, limit: Limit) -> QueueConfig {
        QueueConfig::Red {
            min_th,
            max_th,
            max_p,
            weight: RED_DEFAULT_WEIGHT,
            limit,
            gentle: false,
            idle_packet_time: Duration::from_millis(1),
        }
    }
}

/// A queue description that cannot work.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum QueueError {
    /// A RED parameter is out of range.
    #[error("RED parameter `{parameter}` is invalid ({value}): {reason}")]
    InvalidRed {
        /// The parameter's name (`min_th`, `max_th`, `max_p`, `weight`, `idle_packet_time`).
        parameter: &'static str,
        /// The rejected value (seconds for `idle_packet_time`).
        value: f64,
        /// What it must be.
        reason: &'static str,
    },
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The queue was at its limit.
    Full,
    /// RED dropped it early.
    Red,
}

/// A packet the queue refused, handed back with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drop<P> {
    /// The refused packet.
    pub packet: P,
    /// Why.
    pub reason: DropReason,
}

/// What a queue has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Packets accepted.
    pub enqueued: u64,
    /// Packets handed out by [`Queue::dequeue`].
    pub dequeued: u64,
    /// Packets refused because the queue was full.
    pub dropped_full: u64,
    /// Packets dropped early by RED.
    pub dropped_red: u64,
    /// The longest the queue has been, in packets.
    pub max_len_packets: usize,
    /// The longest the queue has been, in bytes.
    pub max_len_bytes: u64,
}

impl QueueStats {
    /// All drops, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.dropped_full + self.dropped_red
    }
}

/// RED's validated parameters and running state.
#[derive(Clone, Debug, PartialEq)]
struct Red {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    weight: f64,
    gentle: bool,
    idle_packet_time: Duration,
    /// avg: the EWMA of the queue length in packets.
    average: f64,
    /// count: packets since the last drop while avg was above min_th;
    /// −1 when below (Floyd & Jacobson 1993 fig. 2).
    count: i64,
}

impl Red {
    fn new(config: &QueueConfig) -> Result<Option<Red>, QueueError> {
        let &QueueConfig::Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
            idle_packet_time,
            ..
        } = config
        else {
            return Ok(None);
        };
        let invalid = |parameter, value, reason| {
            Err(QueueError::InvalidRed {
                parameter,
                value,
                reason,
            })
        };
        if !(min_th >= 0.0 && min_th.is_finite()) {
            return invalid("min_th", min_th, "must be a finite number ≥ 0");
        }
        if !(max_th > min_th && max_th.is_finite()) {
            return invalid("max_th", max_th, "must be finite and above min_th");
        }
        if !(max_p > 0.0 && max_p <= 1.0) {
            return invalid("max_p", max_p, "must be in (0, 1]");
        }
        if !(weight > 0.0 && weight <= 1.0) {
            return invalid("weight", weight, "must be in (0, 1]");
        }
        if idle_packet_time.is_zero() {
            return invalid("idle_packet_time", 0.0, "must be positive");
        }
        Ok(Some(Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
            idle_packet_time,
            average: 0.0,
            count: -1,
        }))
    }

    /// p_b for the current average (Floyd & Jacobson 1993 fig. 2; gentle
    /// variant above max_th).
    fn base_probability(&self) -> f64 {
        let avg = self.average;
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }

    /// Updates avg for an arrival that finds `len` packets queued.
    fn update_average(&mut self, len: usize, idle_since: Option<Instant>, now: Instant) {
        match idle_since {
            // "if the queue is empty: m ← f(time − q_time); avg ← (1 − w_q)^m avg"
            Some(since) => {
                let idle = now.saturating_duration_since(since);
                let m = idle.as_secs_f64() / self.idle_packet_time.as_secs_f64();
                self.average *= (1.0 - self.weight).powf(m);
            }
            // "avg ← (1 − w_q) avg + w_q q"
            None => self.average += self.weight * (len as f64 - self.average),
        }
    }

    /// Whether RED drops the arriving packet (after the average is updated).
    fn drops(&mut self, rng: &mut SimRng) -> bool {
        let p_b = self.base_probability();
        if p_b <= 0.0 {
            self.count = -1;
            return false;
        }
        if p_b >= 1.0 {
            self.count = 0;
            return true;
        }
        self.count += 1;
        // "p_a ← p_b / (1 − count·p_b)": spreads drops evenly; once
        // count·p_b ≥ 1 the drop is certain.
        let spread = 1.0 - self.count as f64 * p_b;
        let p_a = if spread <= 0.0 { 1.0 } else { p_b / spread };
        if rng.bernoulli(p_a) {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

/// A FIFO queue with drop-tail or RED admission.
#[derive(Clone, Debug)]
pub struct Queue<P> {
    packets: VecDeque<P>,
    bytes: u64,
    limit: Limit,
    red: Option<Red>,
    /// q_time: when the queue last became empty (`None` while not empty).
    idle_since: Option<Instant>,
    stats: QueueStats,
}

impl<P: SimPacket> Queue<P> {
    /// An empty queue, idle since `now`.
    pub fn new(config: QueueConfig, now: Instant) -> Result<Queue<P>, QueueError> {
        let limit = match config {
            QueueConfig::DropTail { limit } | QueueConfig::Red { limit, .. } => limit,
        };
        Ok(Queue {
            packets: VecDeque::new(),
            bytes: 0,
            limit,
            red: Red::new(&config)?,
            idle_since: Some(now),
            stats: QueueStats::default(),
        })
    }

    /// Offers a packet; on refusal it comes back inside the [`Drop`].
    pub fn enqueue(&mut self, now: Instant, packet: P, rng: &mut SimRng) -> Result<(), Drop<P>> {
        let len = self.packets.len();
        if let Some(red) = &mut self.red {
            red.update_average(len, self.idle_since, now);
            if red.drops(rng) {
                self.stats.dropped_red += 1;
                return Err(Drop {
                    packet,
                    reason: DropReason::Red,
                });
            }
        }
        let size = u64::from(packet.size_bytes());
        let fits = match self.limit {
            Limit::Packets(max) => len < max,
            Limit::Bytes(max) => self.bytes.saturating_add(size) <= max,
        };
        if !fits {
            self.stats.dropped_full += 1;
            return Err(Drop {
                packet,
                reason: DropReason::Full,
            });
        }
        self.packets.push_back(packet);
        self.bytes += size;
        self.idle_since = None;
        self.stats.enqueued += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.packets.len());
        self.stats.max_len_bytes = self.stats.max_len_bytes.max(self.bytes);
        Ok(())
    }

    /// Takes the head packet, if any.
    pub fn dequeue(&mut self, now: Instant) -> Option<P> {
        let packet = self.packets.pop_front()?;
        self.bytes -= u64::from(packet.size_bytes());
        self.stats.dequeued += 1;
        if self.packets.is_empty() {
            // "when queue becomes empty: q_time ← time"
            self.idle_since = Some(now);
        }
        Some(packet)
    }

    /// The head packet, if any.
    pub fn peek(&self) -> Option<&P> {
        self.packets.front()
    }

    /// Packets queued.
    pub fn len_packets(&self) -> usize {
        self.packets.len()
    }

    /// Bytes queued.
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// RED's average queue length in packets (`None` for drop-tail).
    pub fn red_average(&self) -> Option<f64> {
        self.red.as_ref().map(|red| red.average)
    }

    /// RED's p_b at the current average (`None` for drop-tail).
    pub fn red_base_probability(&self) -> Option<f64> {
        self.red.as_ref().map(Red::base_probability)
    }

    /// What the queue has done so far.
    pub fn stats(&self) -> QueueStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
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
        let err = Queue::<Pkt>::new(QueueConfig::red(10.0, 5.0, 0.1, Limit::Packets(9)), t(0))
            .unwrap_err();
        assert!(err.to_string().contains("max_th"), "{err}");
        let err = Queue::<Pkt>::new(QueueConfig::red(1.0, 5.0, 1.5, Limit::Packets(9)), t(0))
            .unwrap_err();
        assert!(err.to_string().contains("max_p"), "{err}");
    }
}
