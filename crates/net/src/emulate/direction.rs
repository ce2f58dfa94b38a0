//! One direction of the emulated link: the simulator's own
//! [`LinkDirection`] (queue, capacity, channel loss; `fairstream_sim::link`)
//! driven by the real clock, followed by a delay line that holds each
//! datagram until its arrival time at the far end.
//!
//! The link computes every time itself, from the arrival times it is given:
//! a saturated fixed-rate link finishes packet k of a busy period at exactly
//! start + (bytes so far) / rate, however late the driver runs. So timer
//! precision moves datagrams a little in time (the lateness in
//! [`DirectionStats`]) but never changes the rate.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;
use fairstream_sim::link::{Delivery, EnqueueOutcome, LinkDirection, LinkError};
use fairstream_sim::loss::LossModel;
use fairstream_sim::queue::SimPacket;
use fairstream_sim::rng::SimRng;

use super::stats::DirectionStats;
use super::DirectionConfig;

/// A UDP payload crossing the emulator, with the client flow it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Datagram {
    /// The client's address: where replies go, and whose upstream socket
    /// forwards it.
    pub(crate) client: SocketAddr,
    /// The UDP payload.
    pub(crate) payload: Vec<u8>,
    /// The ECN codepoint it arrived with, which it leaves with.
    pub(crate) ecn: Ecn,
}

impl SimPacket for Datagram {
    fn size_bytes(&self) -> u32 {
        // A UDP payload is at most 65 507 bytes.
        u32::try_from(self.payload.len()).unwrap_or(u32::MAX)
    }
}

/// What shapes the traffic before the delay line.
enum Shaper {
    /// The simulator's link direction.
    Link(Box<LinkDirection<Datagram>>),
    /// No capacity limit: only the channel loss model and the delay.
    Unlimited {
        loss: LossModel,
        rng: SimRng,
        delay: Duration,
        channel_losses: u64,
    },
}

/// One direction: shaper, delay line and counters.
pub(crate) struct Direction {
    shaper: Shaper,
    /// Datagrams that crossed, in arrival-time order (the delay is constant
    /// and the link finishes packets in order).
    in_flight: VecDeque<Delivery<Datagram>>,
    in_flight_bytes: u64,
    max_in_flight_bytes: u64,
    /// The latest time the direction has been given. Arrivals are stamped by
    /// receiver threads and may reach the engine after it has run the link
    /// further; they are offered at this time, so that a packet never uses
    /// capacity from before the link last ran.
    clock: Instant,
    /// When the link is cut: [start, end) on the engine's clock.
    outages: Vec<(Instant, Instant)>,
    stats: DirectionStats,
}

impl Direction {
    /// A direction made at `now` (a trace schedule starts then).
    pub(crate) fn new(
        config: &DirectionConfig,
        rng: SimRng,
        now: Instant,
    ) -> Result<Direction, LinkError> {
        let shaper = match config.link_config() {
            Some(link) => Shaper::Link(Box::new(LinkDirection::new(link, rng, now)?)),
            None => Shaper::Unlimited {
                loss: config.loss.build()?,
                rng,
                delay: config.delay,
                channel_losses: 0,
            },
        };
        Ok(Direction {
            shaper,
            in_flight: VecDeque::new(),
            in_flight_bytes: 0,
            max_in_flight_bytes: config.max_in_flight_bytes,
            clock: now,
            outages: config
                .outages
                .iter()
                .map(|o| (now + o.start, now + o.start + o.length))
                .collect(),
            stats: DirectionStats::default(),
        })
    }

    /// A datagram arrived at this direction's input at `at`.
    pub(crate) fn offer(&mut self, at: Instant, datagram: Datagram) {
        let now = at.max(self.clock);
        self.clock = now;
        self.count_received(datagram.payload.len());
        if self
            .outages
            .iter()
            .any(|(start, end)| (*start..*end).contains(&now))
        {
            self.stats.outage_drops += 1;
            return;
        }
        match &mut self.shaper {
            // Drops are counted by the link itself (`LinkStats::queue_drops`).
            Shaper::Link(link) => match link.enqueue(now, datagram) {
                EnqueueOutcome::Queued | EnqueueOutcome::Dropped(_) => {}
            },
            Shaper::Unlimited {
                loss,
                rng,
                delay,
                channel_losses,
            } => {
                if loss.lose(rng) {
                    *channel_losses += 1;
                } else {
                    let at = now + *delay;
                    self.push_in_flight(Delivery {
                        packet: datagram,
                        at,
                    });
                }
            }
        }
    }

    /// Counts a datagram that arrived but could not enter the link (no
    /// upstream socket for its client).
    pub(crate) fn count_unroutable_arrival(&mut self, bytes: usize) {
        self.count_received(bytes);
        self.stats.unroutable += 1;
    }

    fn count_received(&mut self, bytes: usize) {
        self.stats.received_packets += 1;
        self.stats.received_bytes += bytes as u64;
    }

    /// Runs the link up to `now`, moving the datagrams that finished
    /// crossing into the delay line.
    pub(crate) fn advance(&mut self, now: Instant) {
        self.clock = self.clock.max(now);
        if let Shaper::Link(link) = &mut self.shaper {
            for delivery in link.process(self.clock) {
                self.push_in_flight(delivery);
            }
        }
    }

    fn push_in_flight(&mut self, delivery: Delivery<Datagram>) {
        let bytes = delivery.packet.payload.len() as u64;
        if self.in_flight_bytes.saturating_add(bytes) > self.max_in_flight_bytes {
            self.stats.overflow_drops += 1;
            return;
        }
        self.in_flight_bytes += bytes;
        self.in_flight.push_back(delivery);
    }

    /// The next datagram whose arrival time is at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<Delivery<Datagram>> {
        if self.in_flight.front()?.at > now {
            return None;
        }
        let delivery = self.in_flight.pop_front()?;
        self.in_flight_bytes -= delivery.packet.payload.len() as u64;
        Some(delivery)
    }

    /// A datagram due at `due` left at `sent_at`.
    pub(crate) fn count_sent(&mut self, due: Instant, sent_at: Instant, bytes: usize) {
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += bytes as u64;
        let lateness = sent_at.saturating_duration_since(due);
        self.stats.lateness_max = self.stats.lateness_max.max(lateness);
        self.stats.lateness_total += lateness;
    }

    /// A datagram crossed but its client has no upstream socket any more.
    pub(crate) fn count_unroutable(&mut self) {
        self.stats.unroutable += 1;
    }

    /// The operating system refused to send a datagram.
    pub(crate) fn count_send_error(&mut self) {
        self.stats.send_errors += 1;
    }

    /// When the direction next has work: a transmission finishing, a trace
    /// opportunity while datagrams wait, or a datagram's arrival time.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let link = match &self.shaper {
            Shaper::Link(link) => link.next_event(),
            Shaper::Unlimited { .. } => None,
        };
        let line = self.in_flight.front().map(|delivery| delivery.at);
        match (link, line) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The counters now.
    pub(crate) fn stats(&self) -> DirectionStats {
        let mut stats = self.stats;
        stats.in_flight_packets = self.in_flight.len();
        match &self.shaper {
            Shaper::Link(link) => {
                let link_stats = link.stats();
                stats.queue_drops = link_stats.queue_drops;
                stats.channel_losses = link_stats.channel_losses;
                stats.queue_len_packets = link.queue_len_packets();
                stats.queue_len_bytes = link.queue_len_bytes();
                stats.link = Some(link_stats);
            }
            Shaper::Unlimited { channel_losses, .. } => {
                stats.channel_losses = *channel_losses;
            }
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use fairstream_proto::units::Rate;
    use fairstream_sim::link::Capacity;
    use fairstream_sim::loss::LossConfig;
    use fairstream_sim::queue::{Limit, QueueConfig};

    use super::*;

    fn datagram(size: usize) -> Datagram {
        Datagram {
            client: SocketAddr::from(([127, 0, 0, 1], 1)),
            payload: vec![0; size],
            ecn: Ecn::NotEct,
        }
    }

    fn drain(direction: &mut Direction, now: Instant) -> Vec<Instant> {
        direction.advance(now);
        std::iter::from_fn(|| direction.pop_due(now).map(|d| d.at)).collect()
    }

    #[test]
    fn fixed_rate_link_paces_and_delays() {
        // 972 + 28 bytes at 8 Mbit/s = 1 ms each; 10 ms of delay; 2 packets of queue.
        let config = DirectionConfig {
            capacity: Some(Capacity::Fixed(Rate::from_bits_per_sec(8e6))),
            delay: Duration::from_millis(10),
            queue: QueueConfig::DropTail {
                limit: Limit::Packets(2),
            },
            ..DirectionConfig::default()
        };
        let mut direction = Direction::new(&config, SimRng::new(1), Instant::ZERO).unwrap();
        for _ in 0..4 {
            direction.offer(Instant::ZERO, datagram(972));
        }
        // One in service, two queued, one dropped.
        assert_eq!(direction.stats().queue_drops, 1);
        assert_eq!(
            direction.next_deadline(),
            Some(Instant::from_millis(1)),
            "first transmission ends"
        );
        assert!(drain(&mut direction, Instant::from_millis(5)).is_empty());
        assert_eq!(direction.stats().in_flight_packets, 3);
        assert_eq!(
            drain(&mut direction, Instant::from_millis(12)),
            [Instant::from_millis(11), Instant::from_millis(12)]
        );
        assert_eq!(direction.next_deadline(), Some(Instant::from_millis(13)));
        let stats = direction.stats();
        assert_eq!((stats.received_packets, stats.received_bytes), (4, 3888));
        assert_eq!(stats.link.unwrap().delivered, 3);
    }

    #[test]
    fn unlimited_direction_loses_and_delays_only() {
        let config = DirectionConfig {
            delay: Duration::from_millis(5),
            loss: LossConfig::Bernoulli { p: 0.5 },
            ..DirectionConfig::default()
        };
        let mut direction = Direction::new(&config, SimRng::new(3), Instant::ZERO).unwrap();
        for i in 0..1000 {
            direction.offer(Instant::from_micros(i), datagram(100));
        }
        let arrived = drain(&mut direction, Instant::from_millis(10));
        let stats = direction.stats();
        assert_eq!(arrived.len() as u64 + stats.channel_losses, 1000);
        assert!((400..600).contains(&arrived.len()), "{}", arrived.len());
        assert!(arrived.iter().all(|&at| at >= Instant::from_millis(5)));
        assert!(stats.link.is_none());
    }

    #[test]
    fn delay_line_is_bounded() {
        let config = DirectionConfig {
            delay: Duration::from_secs(1),
            max_in_flight_bytes: 1000,
            ..DirectionConfig::default()
        };
        let mut direction = Direction::new(&config, SimRng::new(3), Instant::ZERO).unwrap();
        for _ in 0..25 {
            direction.offer(Instant::ZERO, datagram(100));
        }
        let stats = direction.stats();
        assert_eq!((stats.in_flight_packets, stats.overflow_drops), (10, 15));
    }

    #[test]
    fn late_arrivals_do_not_use_past_capacity() {
        let config = DirectionConfig {
            capacity: Some(Capacity::Fixed(Rate::from_bits_per_sec(8e6))),
            ..DirectionConfig::default()
        };
        let mut direction = Direction::new(&config, SimRng::new(1), Instant::ZERO).unwrap();
        direction.advance(Instant::from_millis(10));
        // Stamped at 2 ms by a receiver thread, seen after the link ran to 10 ms.
        direction.offer(Instant::from_millis(2), datagram(972));
        assert_eq!(direction.next_deadline(), Some(Instant::from_millis(11)));
    }
}
