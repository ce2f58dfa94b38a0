//! FQ-CoDel, "The Flow Queue CoDel Packet Scheduler and Active Queue
//! Management Algorithm" (RFC 8290): packets hashed by flow into queues,
//! a deficit round robin over a list of new and a list of old queues, and
//! CoDel on each queue.
//!
//! Choices where the RFC leaves room, each Linux `sch_fq_codel`'s:
//! - the hash is keyed with a perturbation drawn once, here from the
//!   queue's seeded random stream at the first arrival (Linux draws it when
//!   the qdisc is made), so a run is reproducible from its seed;
//! - a queue of the new list that CoDel finds empty goes to the old list
//!   only when the old list is not empty (RFC 8290 §4.2 describes the move
//!   without that condition; both prevent starvation).
//!
//! One difference: on overflow one packet is dropped from the head of the
//! fattest queue per arrival (RFC 8290 §4.1), where Linux drops a batch of
//! up to 64 packets or half that queue's bytes.

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_proto::time::Instant;

use super::codel::{
    CoDel, TimedFifo, CODEL_DEFAULT_INTERVAL, CODEL_DEFAULT_MAX_PACKET_BYTES, CODEL_DEFAULT_TARGET,
};
use super::{CoDelConfig, Drop, DropReason, Limit, QueueError, QueueStats, SimPacket};
use crate::rng::SimRng;

/// RFC 8290 §5.2.5: 1024 flow queues.
pub const FQ_CODEL_DEFAULT_FLOWS: usize = 1024;
/// RFC 8290 §5.2.4: a quantum of 1514 bytes, one Ethernet frame.
pub const FQ_CODEL_DEFAULT_QUANTUM_BYTES: u32 = 1514;
/// RFC 8290 §5.2.3: a total limit of 10240 packets.
pub const FQ_CODEL_DEFAULT_LIMIT_PACKETS: usize = 10240;
/// RFC 8290 §5.2.6: ECN is enabled by default.
pub const FQ_CODEL_DEFAULT_ECN: bool = true;

/// FQ-CoDel's parameters; `Default` gives the RFC 8290 values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqCoDelConfig {
    /// The number of flow queues packets are hashed into.
    pub flows: usize,
    /// DRR quantum: bytes a queue may send per round.
    pub quantum_bytes: u32,
    /// The total limit over all queues, in packets.
    pub limit_packets: usize,
    /// CoDel's TARGET on every queue (RFC 8290 §5.2.2, default 5 ms).
    pub target: Duration,
    /// CoDel's INTERVAL on every queue (RFC 8290 §5.2.1, default 100 ms).
    pub interval: Duration,
    /// Mark ECN-capable packets CE instead of dropping them (CoDel's
    /// decisions only; an overflow always drops).
    pub ecn: bool,
}

impl Default for FqCoDelConfig {
    fn default() -> Self {
        FqCoDelConfig {
            flows: FQ_CODEL_DEFAULT_FLOWS,
            quantum_bytes: FQ_CODEL_DEFAULT_QUANTUM_BYTES,
            limit_packets: FQ_CODEL_DEFAULT_LIMIT_PACKETS,
            target: CODEL_DEFAULT_TARGET,
            interval: CODEL_DEFAULT_INTERVAL,
            ecn: FQ_CODEL_DEFAULT_ECN,
        }
    }
}

impl FqCoDelConfig {
    /// The CoDel each flow queue runs.
    fn codel(&self) -> CoDelConfig {
        CoDelConfig {
            target: self.target,
            interval: self.interval,
            limit: Limit::Packets(self.limit_packets),
            max_packet_bytes: CODEL_DEFAULT_MAX_PACKET_BYTES,
            ecn: self.ecn,
        }
    }
}

/// Which list a flow queue is on (RFC 8290 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    New,
    Old,
}

/// One flow queue with its CoDel state and DRR deficit.
#[derive(Clone, Debug)]
struct FlowQueue<P> {
    fifo: TimedFifo<P>,
    codel: CoDel,
    /// DRR deficit in bytes; may go negative by less than one packet.
    deficit: i64,
    /// `None`: idle, on neither list.
    list: Option<List>,
}

/// The FQ-CoDel scheduler.
#[derive(Clone, Debug)]
pub(super) struct FqCoDel<P> {
    queues: Vec<FlowQueue<P>>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    quantum: i64,
    limit_packets: usize,
    packets: usize,
    bytes: u64,
    /// The hash key, drawn at the first arrival.
    perturbation: Option<u64>,
}

/// The 64-bit finaliser of MurmurHash3: a cheap, well-mixing, fixed
/// function, so the mapping depends only on the key and the perturbation.
fn mix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

impl<P: SimPacket> FqCoDel<P> {
    pub(super) fn new(config: FqCoDelConfig) -> Result<Self, QueueError> {
        let codel = config.codel();
        codel.validate("FQ-CoDel")?;
        let invalid = |parameter, reason| {
            Err(QueueError::InvalidAqm {
                discipline: "FQ-CoDel",
                parameter,
                reason,
            })
        };
        if config.flows == 0 || config.flows > 1 << 16 {
            return invalid("flows", "must be between 1 and 65536");
        }
        if config.quantum_bytes == 0 {
            return invalid("quantum", "must be at least one byte");
        }
        let queues = (0..config.flows)
            .map(|_| FlowQueue {
                fifo: TimedFifo::new(),
                codel: CoDel::new(&codel),
                deficit: 0,
                list: None,
            })
            .collect();
        Ok(FqCoDel {
            queues,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: i64::from(config.quantum_bytes),
            limit_packets: config.limit_packets,
            packets: 0,
            bytes: 0,
            perturbation: None,
        })
    }

    /// RFC 8290 §4.1: the queue of a flow, from a hash of its identity.
    fn classify(&self, key: u64, perturbation: u64) -> usize {
        let hash = mix64(key ^ perturbation);
        (hash % self.queues.len() as u64) as usize
    }

    /// RFC 8290 §4.1: classify, timestamp and enqueue; a queue that was idle
    /// joins the tail of the new list with a full quantum; past the total
    /// limit, drop from the head of the queue holding the most bytes.
    pub(super) fn enqueue(
        &mut self,
        now: Instant,
        packet: P,
        rng: &mut SimRng,
        stats: &mut QueueStats,
        dropped: &mut Vec<Drop<P>>,
    ) -> Result<(), Drop<P>> {
        let perturbation = *self.perturbation.get_or_insert_with(|| rng.next_u64());
        let index = self.classify(packet.flow_key(), perturbation);
        let size = u64::from(packet.size_bytes());
        let Some(queue) = self.queues.get_mut(index) else {
            return Err(Drop {
                packet,
                reason: DropReason::Full,
            });
        };
        queue.fifo.push(now, packet);
        if queue.list.is_none() {
            // RFC 8290 §4.1: an idle queue joins the end of the new list,
            // its deficit set to one quantum.
            queue.list = Some(List::New);
            queue.deficit = self.quantum;
            self.new_flows.push_back(index);
        }
        self.packets += 1;
        self.bytes += size;
        if self.packets > self.limit_packets {
            self.drop_from_fattest(stats, dropped);
        }
        Ok(())
    }

    /// RFC 8290 §4.1, overflow: drop from the head of the queue holding the
    /// most bytes. Ties go to the lowest index, as Linux scans.
    fn drop_from_fattest(&mut self, stats: &mut QueueStats, dropped: &mut Vec<Drop<P>>) {
        let mut fattest: Option<(usize, u64)> = None;
        for (index, queue) in self.queues.iter().enumerate() {
            let bytes = queue.fifo.bytes();
            if bytes > 0 && fattest.is_none_or(|(_, most)| bytes > most) {
                fattest = Some((index, bytes));
            }
        }
        let Some((_, packet)) = fattest
            .and_then(|(index, _)| self.queues.get_mut(index))
            .and_then(|queue| queue.fifo.pop())
        else {
            return;
        };
        self.packets -= 1;
        self.bytes -= u64::from(packet.size_bytes());
        stats.dropped_full += 1;
        dropped.push(Drop {
            packet,
            reason: DropReason::Full,
        });
    }

    /// RFC 8290 §4.2: deficit round robin over the new list, then the old
    /// list, each packet taken through the queue's CoDel.
    pub(super) fn dequeue(
        &mut self,
        now: Instant,
        stats: &mut QueueStats,
        dropped: &mut Vec<Drop<P>>,
    ) -> Option<P> {
        loop {
            let (index, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&index), _) => (index, true),
                (None, Some(&index)) => (index, false),
                (None, None) => return None,
            };
            let queue = self.queues.get_mut(index)?;
            if queue.deficit <= 0 {
                // RFC 8290 §4.2: a queue out of credits gets another quantum
                // and moves to the end of the old list.
                queue.deficit += self.quantum;
                queue.list = Some(List::Old);
                self.pop_front(from_new);
                self.old_flows.push_back(index);
                continue;
            }
            let (packets_before, bytes_before) = (queue.fifo.len(), queue.fifo.bytes());
            let packet = queue.codel.dequeue(now, &mut queue.fifo, stats, dropped);
            self.packets -= packets_before - queue.fifo.len();
            self.bytes -= bytes_before - queue.fifo.bytes();
            let Some(packet) = packet else {
                // RFC 8290 §4.2: an empty queue from the new list moves to
                // the end of the old list (so it cannot starve the old
                // queues by re-entering as new); from the old list it is
                // removed.
                let to_old = from_new && !self.old_flows.is_empty();
                queue.list = to_old.then_some(List::Old);
                self.pop_front(from_new);
                if to_old {
                    self.old_flows.push_back(index);
                }
                continue;
            };
            queue.deficit -= i64::from(packet.size_bytes());
            return Some(packet);
        }
    }

    fn pop_front(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    pub(super) fn len_packets(&self) -> usize {
        self.packets
    }

    pub(super) fn len_bytes(&self) -> u64 {
        self.bytes
    }
}
