//! CoDel, "Controlled Delay Active Queue Management" (RFC 8289): the
//! controller of §5 and a FIFO it guards.
//!
//! The controller follows the annotated pseudocode of RFC 8289 §5 line by
//! line, with the Linux choices the RFC itself adopts (the count-reuse rule
//! on re-entering the dropping state, §5.5). Two differences from Linux
//! `codel_impl.h`, both for exactness: the control law computes
//! interval/√count in floating point instead of Linux's Newton-step
//! reciprocal square root, and times are nanoseconds rather than 1024 ns
//! units.
//!
//! With ECN (Linux's `ecn` flag; RFC 8289 §5: "drop (or mark)"), a packet
//! the control law selects is marked CE instead of dropped when it is
//! ECN-capable, and handed on; the schedule of the next signal is the same.

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_proto::time::Instant;

use super::{mark_ce, CoDelState, Drop, DropReason, Limit, QueueError, QueueStats, SimPacket};

/// RFC 8289 §5.3: TARGET = 5 ms, the acceptable standing queue delay.
pub const CODEL_DEFAULT_TARGET: Duration = Duration::from_millis(5);
/// RFC 8289 §5.3: INTERVAL = 100 ms, on the order of a worst-case RTT.
pub const CODEL_DEFAULT_INTERVAL: Duration = Duration::from_millis(100);
/// Linux `sch_codel`'s default limit, in packets (RFC 8289 leaves the
/// buffer size to the implementation).
pub const CODEL_DEFAULT_LIMIT_PACKETS: usize = 1000;
/// RFC 8289 §5.3 `maxpacket` ("should be >= MTU"): a queue holding no more
/// than this many bytes is never dropped from. 1514 bytes, an Ethernet
/// frame, as Linux's `psched_mtu`.
pub const CODEL_DEFAULT_MAX_PACKET_BYTES: u32 = 1514;

/// CoDel's parameters; `Default` gives the RFC 8289 values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoDelConfig {
    /// TARGET: the sojourn time CoDel tolerates as a standing queue.
    pub target: Duration,
    /// INTERVAL: how long the sojourn time must stay above target before
    /// the first drop, and the base of the control law.
    pub interval: Duration,
    /// The buffer: arrivals beyond it are tail-dropped (RFC 8289 §5.4).
    pub limit: Limit,
    /// `maxpacket` of RFC 8289 §5.3.
    pub max_packet_bytes: u32,
    /// Mark ECN-capable packets CE instead of dropping them.
    pub ecn: bool,
}

impl Default for CoDelConfig {
    fn default() -> Self {
        CoDelConfig {
            target: CODEL_DEFAULT_TARGET,
            interval: CODEL_DEFAULT_INTERVAL,
            limit: Limit::Packets(CODEL_DEFAULT_LIMIT_PACKETS),
            max_packet_bytes: CODEL_DEFAULT_MAX_PACKET_BYTES,
            ecn: false,
        }
    }
}

impl CoDelConfig {
    /// Checks the parameters; `discipline` names the queue in the error.
    pub(super) fn validate(&self, discipline: &'static str) -> Result<(), QueueError> {
        let invalid = |parameter, reason| {
            Err(QueueError::InvalidAqm {
                discipline,
                parameter,
                reason,
            })
        };
        if self.target.is_zero() {
            return invalid("target", "must be positive");
        }
        if self.interval.is_zero() {
            return invalid("interval", "must be positive");
        }
        if matches!(self.limit, Limit::Packets(0) | Limit::Bytes(0)) {
            return invalid("limit", "must be at least one packet or byte");
        }
        Ok(())
    }
}

/// RFC 8289 §5.4: packets with the time they were enqueued, and their bytes.
#[derive(Clone, Debug)]
pub(super) struct TimedFifo<P> {
    packets: VecDeque<(Instant, P)>,
    bytes: u64,
}

impl<P: SimPacket> TimedFifo<P> {
    pub(super) fn new() -> Self {
        TimedFifo {
            packets: VecDeque::new(),
            bytes: 0,
        }
    }

    /// RFC 8289 §5.4: "pkt->tstamp = clock(); queue_t::enqueue(pkt);"
    pub(super) fn push(&mut self, now: Instant, packet: P) {
        self.bytes += u64::from(packet.size_bytes());
        self.packets.push_back((now, packet));
    }

    pub(super) fn pop(&mut self) -> Option<(Instant, P)> {
        let (at, packet) = self.packets.pop_front()?;
        self.bytes -= u64::from(packet.size_bytes());
        Some((at, packet))
    }

    pub(super) fn len(&self) -> usize {
        self.packets.len()
    }

    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The per-queue state of RFC 8289 §5.2 and the parameters it runs with.
#[derive(Clone, Debug)]
pub(super) struct CoDel {
    target: Duration,
    interval: Duration,
    max_packet_bytes: u64,
    ecn: bool,
    /// `first_above_time_`: when the sojourn time will have been above
    /// target for an interval (`None` for the RFC's 0).
    first_above_time: Option<Instant>,
    /// `drop_next_`: the time to drop (or mark) next while dropping.
    drop_next: Instant,
    /// `count_`: packets dropped or marked since entering dropping state.
    count: u32,
    /// `lastcount_`: the count of the previous dropping state.
    last_count: u32,
    /// `dropping_`.
    dropping: bool,
}

impl CoDel {
    pub(super) fn new(config: &CoDelConfig) -> CoDel {
        CoDel {
            target: config.target,
            interval: config.interval,
            max_packet_bytes: u64::from(config.max_packet_bytes),
            ecn: config.ecn,
            first_above_time: None,
            drop_next: Instant::ZERO,
            count: 0,
            last_count: 0,
            dropping: false,
        }
    }

    pub(super) fn state(&self) -> CoDelState {
        CoDelState {
            dropping: self.dropping,
            count: self.count,
            drop_next: self.dropping.then_some(self.drop_next),
        }
    }

    /// RFC 8289 §5.6 `control_law`: "return t + INTERVAL / sqrt(count);"
    fn control_law(&self, t: Instant, count: u32) -> Instant {
        let nanos = self.interval.as_nanos() as f64 / f64::from(count.max(1)).sqrt();
        t + Duration::from_nanos(nanos.round() as u64)
    }

    /// RFC 8289 §5.6 `dodequeue`: the head packet and whether its sojourn
    /// time has been above target for at least an interval.
    fn do_dequeue<P: SimPacket>(
        &mut self,
        now: Instant,
        fifo: &mut TimedFifo<P>,
    ) -> (Option<P>, bool) {
        let Some((enqueued_at, packet)) = fifo.pop() else {
            // "queue is empty - reset"
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.saturating_duration_since(enqueued_at);
        // "if (sojourn_time < TARGET || bytes() <= maxpacket)": went below,
        // stay below for at least INTERVAL.
        if sojourn < self.target || fifo.bytes() <= self.max_packet_bytes {
            self.first_above_time = None;
            return (Some(packet), false);
        }
        let ok_to_drop = match self.first_above_time {
            // "just went above from below. if still above at
            // first_above_time, will say it's ok to drop."
            None => {
                self.first_above_time = Some(now + self.interval);
                false
            }
            Some(first_above) => now >= first_above,
        };
        (Some(packet), ok_to_drop)
    }

    /// RFC 8289 §5.5 `dequeue`: the packet to transmit at `now`, after
    /// dropping (into `dropped`) or marking what the control law selects.
    pub(super) fn dequeue<P: SimPacket>(
        &mut self,
        now: Instant,
        fifo: &mut TimedFifo<P>,
        stats: &mut QueueStats,
        dropped: &mut Vec<Drop<P>>,
    ) -> Option<P> {
        let (mut packet, ok_to_drop) = self.do_dequeue(now, fifo);
        if self.dropping {
            if !ok_to_drop {
                // "sojourn time below TARGET - leave drop state"
                self.dropping = false;
            }
            // "Time for the next drop. Drop current packet and dequeue next.
            // If the dequeue doesn't take us out of dropping state, schedule
            // the next drop. A large backlog might result in drop rates so
            // high that the next drop should happen now, hence the 'while'
            // loop."
            while self.dropping && now >= self.drop_next {
                let mut head = packet.take()?;
                self.count = self.count.saturating_add(1);
                if self.ecn && mark_ce(&mut head, stats) {
                    // Linux: a marked packet is sent; the next signal is
                    // scheduled as after a drop.
                    self.drop_next = self.control_law(self.drop_next, self.count);
                    return Some(head);
                }
                stats.dropped_codel += 1;
                dropped.push(Drop {
                    packet: head,
                    reason: DropReason::CoDel,
                });
                let (next, ok_to_drop) = self.do_dequeue(now, fifo);
                packet = next;
                if ok_to_drop {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                } else {
                    // "leave drop state"
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            // "The 'ok_to_drop' return from dodequeue means that the sojourn
            // time has been above 'TARGET' for 'INTERVAL', so enter drop
            // state."
            if let Some(mut head) = packet.take() {
                if self.ecn && mark_ce(&mut head, stats) {
                    packet = Some(head);
                } else {
                    stats.dropped_codel += 1;
                    dropped.push(Drop {
                        packet: head,
                        reason: DropReason::CoDel,
                    });
                    packet = self.do_dequeue(now, fifo).0;
                }
            }
            self.dropping = true;
            // "If min went above TARGET close to when it last went below,
            // assume that the drop rate that controlled the queue on the last
            // cycle is a good starting point to control it now." (the Linux
            // rule the RFC adopts)
            let delta = self.count.saturating_sub(self.last_count);
            self.count = if delta > 1
                && now.saturating_duration_since(self.drop_next) < 16 * self.interval
            {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now, self.count);
            self.last_count = self.count;
        }
        packet
    }
}

/// A CoDel queue: one [`TimedFifo`] under one [`CoDel`].
#[derive(Clone, Debug)]
pub(super) struct CoDelQueue<P> {
    fifo: TimedFifo<P>,
    limit: Limit,
    codel: CoDel,
}

impl<P: SimPacket> CoDelQueue<P> {
    pub(super) fn new(config: CoDelConfig) -> Result<Self, QueueError> {
        config.validate("CoDel")?;
        Ok(CoDelQueue {
            fifo: TimedFifo::new(),
            limit: config.limit,
            codel: CoDel::new(&config),
        })
    }

    pub(super) fn state(&self) -> CoDelState {
        self.codel.state()
    }

    /// RFC 8289 §5.4: timestamp and enqueue; tail-drop beyond the limit.
    pub(super) fn enqueue(
        &mut self,
        now: Instant,
        packet: P,
        stats: &mut QueueStats,
    ) -> Result<(), Drop<P>> {
        let fits = match self.limit {
            Limit::Packets(max) => self.fifo.len() < max,
            Limit::Bytes(max) => {
                self.fifo
                    .bytes()
                    .saturating_add(u64::from(packet.size_bytes()))
                    <= max
            }
        };
        if !fits {
            stats.dropped_full += 1;
            return Err(Drop {
                packet,
                reason: DropReason::Full,
            });
        }
        self.fifo.push(now, packet);
        Ok(())
    }

    pub(super) fn dequeue(
        &mut self,
        now: Instant,
        stats: &mut QueueStats,
        dropped: &mut Vec<Drop<P>>,
    ) -> Option<P> {
        self.codel.dequeue(now, &mut self.fifo, stats, dropped)
    }

    pub(super) fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    pub(super) fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
}
