//! The FIFO behind drop-tail and RED: admission at enqueue, nothing dropped
//! once accepted.

use std::collections::VecDeque;

use fairstream_proto::time::Instant;

use super::red::Red;
use super::{mark_ce, Drop, DropReason, Limit, QueueConfig, QueueError, QueueStats, SimPacket};
use crate::rng::SimRng;

/// A FIFO with drop-tail or RED admission.
#[derive(Clone, Debug)]
pub(super) struct Fifo<P> {
    packets: VecDeque<P>,
    bytes: u64,
    limit: Limit,
    red: Option<Red>,
    /// q_time: when the queue last became empty (`None` while not empty).
    idle_since: Option<Instant>,
}

impl<P: SimPacket> Fifo<P> {
    /// An empty FIFO for a drop-tail or RED `config`, idle since `now`.
    pub(super) fn new(config: &QueueConfig, now: Instant) -> Result<Fifo<P>, QueueError> {
        let limit = match *config {
            QueueConfig::DropTail { limit } | QueueConfig::Red { limit, .. } => limit,
            // Not reached: `Queue::new` builds a FIFO for these two only.
            QueueConfig::CoDel(_) | QueueConfig::FqCoDel(_) | QueueConfig::Priority(_) => {
                Limit::Packets(0)
            }
        };
        Ok(Fifo {
            packets: VecDeque::new(),
            bytes: 0,
            limit,
            red: Red::new(config)?,
            idle_since: Some(now),
        })
    }

    pub(super) fn red(&self) -> Option<&Red> {
        self.red.as_ref()
    }

    pub(super) fn enqueue(
        &mut self,
        now: Instant,
        mut packet: P,
        rng: &mut SimRng,
        stats: &mut QueueStats,
    ) -> Result<(), Drop<P>> {
        let len = self.packets.len();
        let size = u64::from(packet.size_bytes());
        let fits = match self.limit {
            Limit::Packets(max) => len < max,
            Limit::Bytes(max) => self.bytes.saturating_add(size) <= max,
        };
        if let Some(red) = &mut self.red {
            red.update_average(len, self.idle_since, now);
            // RFC 3168 §5, §7: an ECN-capable packet RED would drop early is
            // marked CE instead. A packet that would not fit is not marked:
            // a full queue drops (below).
            if red.signals(rng) && !(red.ecn && fits && mark_ce(&mut packet, stats)) {
                stats.dropped_red += 1;
                return Err(Drop {
                    packet,
                    reason: DropReason::Red,
                });
            }
        }
        if !fits {
            // A full queue drops whatever the ECN field says.
            stats.dropped_full += 1;
            return Err(Drop {
                packet,
                reason: DropReason::Full,
            });
        }
        self.packets.push_back(packet);
        self.bytes += size;
        self.idle_since = None;
        Ok(())
    }

    pub(super) fn dequeue(&mut self, now: Instant) -> Option<P> {
        let packet = self.packets.pop_front()?;
        self.bytes -= u64::from(packet.size_bytes());
        if self.packets.is_empty() {
            // "when queue becomes empty: q_time ← time"
            self.idle_since = Some(now);
        }
        Some(packet)
    }

    pub(super) fn len_packets(&self) -> usize {
        self.packets.len()
    }

    pub(super) fn len_bytes(&self) -> u64 {
        self.bytes
    }
}
