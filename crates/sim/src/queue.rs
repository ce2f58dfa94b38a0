//! Router queues: drop-tail, RED (Floyd & Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM ToN 1993), CoDel (RFC 8289),
//! FQ-CoDel (RFC 8290) and class-based priority queueing (paper 002's CBQ,
//! [`PriorityConfig`]); the AQMs each optionally marking ECN-capable packets
//! Congestion Experienced instead of dropping them (RFC 3168 §5, §7).
//!
//! A [`Queue`] holds packets of any [`SimPacket`] type. Every call takes
//! `now`; RED's random drops and FQ-CoDel's hash perturbation draw from a
//! [`SimRng`] the owner passes in.
//!
//! Driver contract: offer packets with [`Queue::enqueue`] (a refused arrival
//! comes back at once), take them with [`Queue::dequeue`] **when their
//! transmission starts** (CoDel measures the sojourn time there, RFC 8289
//! §5.4-5.5), and after either call collect with [`Queue::take_dropped`] the
//! packets the queue dropped on its own: CoDel's dequeue-side drops and
//! FQ-CoDel's drops from the fattest flow queue (RFC 8290 §4.1). At every
//! moment each offered packet is refused, queued, dequeued, or dropped
//! later — [`QueueStats`] counts them, and a CE mark is not a drop.

mod codel;
mod fifo;
mod fq_codel;
mod priority;
mod red;

use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;
use thiserror::Error;

use crate::rng::SimRng;

pub use codel::{
    CoDelConfig, CODEL_DEFAULT_INTERVAL, CODEL_DEFAULT_LIMIT_PACKETS,
    CODEL_DEFAULT_MAX_PACKET_BYTES, CODEL_DEFAULT_TARGET,
};
pub use fq_codel::{
    FqCoDelConfig, FQ_CODEL_DEFAULT_ECN, FQ_CODEL_DEFAULT_FLOWS, FQ_CODEL_DEFAULT_LIMIT_PACKETS,
    FQ_CODEL_DEFAULT_QUANTUM_BYTES,
};
pub use priority::{PriorityConfig, PriorityScheduler, TrafficClass, UnknownTrafficClass};

/// A packet the simulator can carry: a DCCP datagram, a TCP segment, ….
pub trait SimPacket {
    /// The packet's size in bytes as handed to the network (before any
    /// per-packet link overhead).
    fn size_bytes(&self) -> u32;

    /// The ECN field of the packet's IP header (RFC 3168 §5). Default:
    /// Not-ECT, so a queue drops such packets rather than marking them.
    fn ecn(&self) -> Ecn {
        Ecn::NotEct
    }

    /// Sets the ECN field to CE (RFC 3168 §5). Queues call it only on
    /// packets whose [`ecn`](Self::ecn) is ECT or CE; a type that reports
    /// an ECT codepoint must implement it. The default does nothing.
    fn set_ce(&mut self) {}

    /// The packet's flow identity, the simulator's equivalent of the
    /// 5-tuple FQ-CoDel hashes (RFC 8290 §4.1). Default 0: every packet
    /// of a type without flows shares one queue.
    fn flow_key(&self) -> u64 {
        0
    }

    /// The packet's traffic class, which a class-based priority queue
    /// ([`QueueConfig::Priority`]) serves it by. Default
    /// [`TrafficClass::Default`].
    fn class(&self) -> TrafficClass {
        TrafficClass::Default
    }
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
        /// RFC 3168 §7: mark ECT packets CE where RED would drop them early;
        /// Not-ECT packets are still dropped, and a full queue still drops.
        /// Above max_th this follows Linux `sch_red` without its `harddrop`
        /// flag: ECT packets are marked there too (`forced_mark`), only
        /// Not-ECT ones are dropped.
        ecn: bool,
    },
    /// CoDel (RFC 8289): a FIFO whose dequeue drops (or marks) packets once
    /// their sojourn time has stayed above `target` for `interval`.
    CoDel(CoDelConfig),
    /// FQ-CoDel (RFC 8290): flows hashed into queues served by deficit round
    /// robin, each queue under its own CoDel.
    FqCoDel(FqCoDelConfig),
    /// Class-based priority queueing (paper 002 §IV.C's CBQ): voice with
    /// strict priority, the other classes in one FIFO or weighted round
    /// robin ([`PriorityConfig`] documents the model).
    Priority(PriorityConfig),
}

impl QueueConfig {
    /// RED with the paper's defaults: w_q = 0.002, not gentle, s = 1 ms,
    /// and no ECN.
    pub fn red(min_th: f64, max_th: f64, max_p: f64, limit: Limit) -> QueueConfig {
        QueueConfig::Red {
            min_th,
            max_th,
            max_p,
            weight: RED_DEFAULT_WEIGHT,
            limit,
            gentle: false,
            idle_packet_time: Duration::from_millis(1),
            ecn: false,
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
    /// A CoDel or FQ-CoDel parameter is out of range.
    #[error("{discipline} parameter `{parameter}` is invalid: {reason}")]
    InvalidAqm {
        /// `CoDel` or `FQ-CoDel`.
        discipline: &'static str,
        /// The parameter's name (`target`, `interval`, `limit`, `flows`, `quantum`).
        parameter: &'static str,
        /// What it must be.
        reason: &'static str,
    },
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The queue was at its limit (for FQ-CoDel: the head of the fattest
    /// flow queue, dropped to make room, RFC 8290 §4.1).
    Full,
    /// RED dropped it early.
    Red,
    /// CoDel's control law dropped it at dequeue (RFC 8289 §5.5).
    CoDel,
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
    /// Packets refused or dropped because the queue was full.
    pub dropped_full: u64,
    /// Packets dropped early by RED.
    pub dropped_red: u64,
    /// Packets dropped at dequeue by CoDel (or FQ-CoDel's per-queue CoDel).
    pub dropped_codel: u64,
    /// Packets marked CE instead of being dropped (RED or CoDel with ECN).
    /// A marked packet stays in the queue: it is not a drop.
    pub ce_marked: u64,
    /// The longest the queue has been, in packets.
    pub max_len_packets: usize,
    /// The longest the queue has been, in bytes.
    pub max_len_bytes: u64,
}

impl QueueStats {
    /// All drops, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.dropped_full + self.dropped_red + self.dropped_codel
    }
}

/// Marks `packet` CE if it is ECN-capable, counting the mark; whether it
/// was (RFC 3168 §5: a router sets CE, instead of dropping, only on a
/// packet whose ECN field says ECN-capable transport).
fn mark_ce<P: SimPacket>(packet: &mut P, stats: &mut QueueStats) -> bool {
    if !packet.ecn().is_ect() {
        return false;
    }
    packet.set_ce();
    stats.ce_marked += 1;
    true
}

/// The discipline behind a [`Queue`].
#[derive(Clone, Debug)]
enum Discipline<P> {
    Fifo(fifo::Fifo<P>),
    CoDel(codel::CoDelQueue<P>),
    FqCoDel(fq_codel::FqCoDel<P>),
    Priority(priority::PriorityQueue<P>),
}

/// A router queue: drop-tail, RED, CoDel or FQ-CoDel (see the module
/// documentation for the driver contract).
#[derive(Clone, Debug)]
pub struct Queue<P> {
    discipline: Discipline<P>,
    /// Packets dropped after they were accepted, not yet collected.
    dropped: Vec<Drop<P>>,
    stats: QueueStats,
}

impl<P: SimPacket> Queue<P> {
    /// An empty queue, idle since `now`.
    pub fn new(config: QueueConfig, now: Instant) -> Result<Queue<P>, QueueError> {
        let discipline = match config {
            QueueConfig::DropTail { .. } | QueueConfig::Red { .. } => {
                Discipline::Fifo(fifo::Fifo::new(&config, now)?)
            }
            QueueConfig::CoDel(codel) => Discipline::CoDel(codel::CoDelQueue::new(codel)?),
            QueueConfig::FqCoDel(fq) => Discipline::FqCoDel(fq_codel::FqCoDel::new(fq)?),
            QueueConfig::Priority(config) => {
                Discipline::Priority(priority::PriorityQueue::new(config)?)
            }
        };
        Ok(Queue {
            discipline,
            dropped: Vec::new(),
            stats: QueueStats::default(),
        })
    }

    /// Offers a packet; on refusal it comes back inside the [`Drop`]. An
    /// accepted packet may push another out (FQ-CoDel): collect it with
    /// [`take_dropped`](Self::take_dropped).
    pub fn enqueue(&mut self, now: Instant, packet: P, rng: &mut SimRng) -> Result<(), Drop<P>> {
        let result = match &mut self.discipline {
            Discipline::Fifo(fifo) => fifo.enqueue(now, packet, rng, &mut self.stats),
            Discipline::CoDel(codel) => codel.enqueue(now, packet, &mut self.stats),
            Discipline::FqCoDel(fq) => {
                fq.enqueue(now, packet, rng, &mut self.stats, &mut self.dropped)
            }
            Discipline::Priority(bands) => bands.enqueue(packet, &mut self.stats),
        };
        if result.is_ok() {
            self.stats.enqueued += 1;
            self.stats.max_len_packets = self.stats.max_len_packets.max(self.len_packets());
            self.stats.max_len_bytes = self.stats.max_len_bytes.max(self.len_bytes());
        }
        result
    }

    /// Takes the next packet to transmit, if any; call it when the
    /// transmission starts. CoDel may drop packets on the way
    /// ([`take_dropped`](Self::take_dropped)).
    pub fn dequeue(&mut self, now: Instant) -> Option<P> {
        let packet = match &mut self.discipline {
            Discipline::Fifo(fifo) => fifo.dequeue(now),
            Discipline::CoDel(codel) => codel.dequeue(now, &mut self.stats, &mut self.dropped),
            Discipline::FqCoDel(fq) => fq.dequeue(now, &mut self.stats, &mut self.dropped),
            Discipline::Priority(bands) => bands.dequeue(),
        };
        if packet.is_some() {
            self.stats.dequeued += 1;
        }
        packet
    }

    /// The packets dropped after they were accepted (CoDel at dequeue,
    /// FQ-CoDel on overflow) since the last call, in drop order. They are
    /// already counted in [`stats`](Self::stats).
    pub fn take_dropped(&mut self) -> Vec<Drop<P>> {
        std::mem::take(&mut self.dropped)
    }

    /// Whether [`take_dropped`](Self::take_dropped) has anything to give
    /// (cheaper to ask on every packet than to take an empty list).
    #[inline]
    pub fn has_dropped(&self) -> bool {
        !self.dropped.is_empty()
    }

    /// Packets queued.
    #[inline]
    pub fn len_packets(&self) -> usize {
        match &self.discipline {
            Discipline::Fifo(fifo) => fifo.len_packets(),
            Discipline::CoDel(codel) => codel.len_packets(),
            Discipline::FqCoDel(fq) => fq.len_packets(),
            Discipline::Priority(bands) => bands.len_packets(),
        }
    }

    /// Bytes queued.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        match &self.discipline {
            Discipline::Fifo(fifo) => fifo.len_bytes(),
            Discipline::CoDel(codel) => codel.len_bytes(),
            Discipline::FqCoDel(fq) => fq.len_bytes(),
            Discipline::Priority(bands) => bands.len_bytes(),
        }
    }

    /// Whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }

    /// RED's average queue length in packets (`None` for other queues).
    pub fn red_average(&self) -> Option<f64> {
        match &self.discipline {
            Discipline::Fifo(fifo) => fifo.red().map(|red| red.average),
            _ => None,
        }
    }

    /// RED's p_b at the current average (`None` for other queues).
    pub fn red_base_probability(&self) -> Option<f64> {
        match &self.discipline {
            Discipline::Fifo(fifo) => fifo.red().map(red::Red::base_probability),
            _ => None,
        }
    }

    /// CoDel's state (`None` for other queues): whether it is dropping, its
    /// count, and when it drops next.
    pub fn codel_state(&self) -> Option<CoDelState> {
        match &self.discipline {
            Discipline::CoDel(codel) => Some(codel.state()),
            _ => None,
        }
    }

    /// What the queue has done so far.
    pub fn stats(&self) -> QueueStats {
        self.stats
    }
}

/// A snapshot of CoDel's control state (RFC 8289 §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoDelState {
    /// `dropping_`: in the dropping state.
    pub dropping: bool,
    /// `count_`: packets dropped (or marked) since entering dropping state.
    pub count: u32,
    /// `drop_next_`: when the next drop is due while dropping.
    pub drop_next: Option<Instant>,
}

#[cfg(test)]
mod tests;
