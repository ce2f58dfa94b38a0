//! One direction of a link: a [`Queue`] in front of a transmitter of fixed or
//! trace-driven capacity, a propagation delay and a per-packet channel
//! [`LossModel`].
//!
//! The node shape follows neqo's `test-fixture/src/sim`: the driver hands
//! packets in with [`LinkDirection::enqueue`], asks [`LinkDirection::next_event`]
//! when the link next needs to run, and calls [`LinkDirection::process`] at (or
//! after) that time to collect the packets that finished crossing, each with
//! its arrival time at the far end. Nothing reads a clock; every random draw
//! comes from the link's own [`SimRng`].
//!
//! The queue may drop packets after accepting them (CoDel at dequeue,
//! FQ-CoDel on overflow); a driver that attributes drops to flows asks for
//! them with [`LinkDirection::keep_dropped_packets`].
//!
//! Every packet offered is, at any moment, in exactly one of: delivered
//! (returned by `process`), dropped by the queue, lost on the channel, or still
//! in the link (queued, being serialised, or finished but not yet collected);
//! [`LinkDirection::conservation`] checks it.

use std::time::Duration;

use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;
use thiserror::Error;

use crate::loss::{LossConfig, LossError, LossModel};
use crate::queue::{Drop, Queue, QueueConfig, QueueError, QueueStats, SimPacket};
use crate::rng::SimRng;
use crate::trace::{Trace, OPPORTUNITY_BYTES};

mod bod;
mod tdd;

pub use bod::{
    lock_pool, BodConfig, BodGeometry, BodPool, BodPoolStats, BodRequests, BodStats, SharedBodPool,
    BOD_DEFAULT_MAX_RATE_BPS, BOD_DEFAULT_SLOT_BYTES, BOD_DEFAULT_SUPERFRAME,
    MAX_GRANT_LAG_SUPERFRAMES,
};
pub use tdd::{
    lock_cell, SharedTddCell, Subframe, TddCell, TddConfig, TddStats, MAX_TDD_GRANT_LAG,
    OFDMA_SYMBOL, TDD_DEFAULT_DL_OVERHEAD, TDD_DEFAULT_FRAME, TDD_DEFAULT_RATE_BPS,
    TDD_DEFAULT_UL_OVERHEAD,
};

/// How fast the link serialises packets.
#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    /// A constant rate: a packet of `b` wire bytes occupies the link for b / rate.
    Fixed(Rate),
    /// A mahimahi delivery-opportunity schedule, starting when the link is made.
    Trace(Trace),
}

/// The description of one link direction.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// The transmitter's capacity.
    pub capacity: Capacity,
    /// Propagation delay, added after serialisation.
    pub delay: Duration,
    /// Bytes added to each packet on the wire (e.g. 28 for IPv4 + UDP). They
    /// cost serialisation time but not queue space.
    pub overhead_bytes: u32,
    /// The queue in front of the transmitter.
    pub queue: QueueConfig,
    /// Loss on the channel, judged when a packet finishes serialisation.
    pub loss: LossConfig,
    /// From this moment on (`.0`), the propagation delay is `.1` (a route
    /// change).
    pub delay_change: Option<(Instant, Duration)>,
    /// From `.0` until `.1` the link is cut: every packet that finishes
    /// serialisation then is lost on the channel.
    pub outage: Option<(Instant, Instant)>,
}

/// A link description that cannot work.
#[derive(Debug, Error)]
pub enum LinkError {
    /// A fixed capacity must be positive and finite.
    #[error("link rate must be positive and finite, got {0}")]
    InvalidRate(Rate),
    /// The queue description is invalid.
    #[error(transparent)]
    Queue(#[from] QueueError),
    /// The loss model description is invalid.
    #[error(transparent)]
    Loss(#[from] LossError),
    /// The bandwidth-on-demand description is invalid.
    #[error("bandwidth on demand: {0}")]
    Bod(&'static str),
    /// The TDD cell description is invalid.
    #[error("TDD: {0}")]
    Tdd(&'static str),
}

/// A packet that crossed the link, and when it reaches the far end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery<P> {
    /// The packet.
    pub packet: P,
    /// Arrival time: end of serialisation plus the propagation delay.
    pub at: Instant,
}

/// What became of an offered packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnqueueOutcome<P> {
    /// The queue accepted it.
    Queued,
    /// The queue refused it; the packet comes back with the reason.
    Dropped(Drop<P>),
}

/// What the link has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered to [`LinkDirection::enqueue`].
    pub offered: u64,
    /// Packets returned by [`LinkDirection::process`].
    pub delivered: u64,
    /// Packets the queue refused or dropped later (full, RED, CoDel).
    pub queue_drops: u64,
    /// Packets the queue marked CE instead of dropping them (they are
    /// delivered, or lost on the channel, like any other).
    pub ce_marked: u64,
    /// Packets that finished serialisation but were lost on the channel.
    pub channel_losses: u64,
    /// Packets that finished serialisation (delivered or lost).
    pub packets_sent: u64,
    /// Wire bytes (size + overhead) of the packets that finished serialisation.
    pub wire_bytes_sent: u64,
    /// Time spent serialising those packets.
    pub busy_time: Duration,
}

/// The packet accounting of a link at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conservation {
    /// Packets offered.
    pub offered: u64,
    /// Packets delivered.
    pub delivered: u64,
    /// Packets dropped by the queue.
    pub queue_drops: u64,
    /// Packets lost on the channel.
    pub channel_losses: u64,
    /// Packets still inside: queued, being serialised, or awaiting collection.
    pub in_link: u64,
}

impl Conservation {
    /// Whether every offered packet is accounted for exactly once.
    pub fn holds(&self) -> bool {
        self.offered == self.delivered + self.queue_drops + self.channel_losses + self.in_link
    }
}

/// The packet being serialised.
#[derive(Clone, Debug)]
struct InService<P> {
    packet: P,
    /// When its first byte went out.
    started: Instant,
    /// Fixed capacity: when its last byte goes out.
    finish: Instant,
    /// Trace capacity: wire bytes still to send.
    remaining_bytes: u64,
}

/// One direction of a link. See the module documentation for the driver
/// contract: `enqueue`, `next_event`, `process`.
#[derive(Clone, Debug)]
pub struct LinkDirection<P> {
    capacity: Capacity,
    delay: Duration,
    delay_change: Option<(Instant, Duration)>,
    outage: Option<(Instant, Instant)>,
    overhead_bytes: u32,
    queue: Queue<P>,
    loss: LossModel,
    queue_rng: SimRng,
    loss_rng: SimRng,
    /// When the link was made: the origin of a trace schedule.
    start: Instant,
    in_service: Option<InService<P>>,
    /// Fixed capacity: start of the current busy period and the wire bytes
    /// started in it, so that finish times are computed from the period's
    /// start and rounding never accumulates.
    busy_since: Instant,
    busy_bytes: u64,
    /// Trace capacity: index of the next unused opportunity.
    next_opportunity: u64,
    /// Finished, surviving packets not yet returned by `process`.
    pending: Vec<Delivery<P>>,
    /// Packets lost on the channel and not yet collected, when the driver
    /// asked for them with [`LinkDirection::keep_lost_packets`].
    lost: Option<Vec<P>>,
    /// Packets the queue dropped after accepting them, not yet collected,
    /// when the driver asked with [`LinkDirection::keep_dropped_packets`].
    dropped: Option<Vec<Drop<P>>>,
    /// The latest `now` the link has been given.
    clock: Instant,
    stats: LinkStats,
    /// Bandwidth on demand: the capacity is granted timeslots instead
    /// ([`with_bandwidth_on_demand`](Self::with_bandwidth_on_demand)).
    bod: Option<Box<bod::Bod>>,
    /// A WiMAX TDD station's direction: the capacity is the bursts its
    /// cell grants ([`with_tdd`](Self::with_tdd)).
    tdd: Option<Box<tdd::TddStation>>,
}

impl<P: SimPacket> LinkDirection<P> {
    /// An idle link made at `now`, drawing its randomness from `rng` (give
    /// each link its own stream, e.g. [`SimRng::for_element`]).
    pub fn new(config: LinkConfig, mut rng: SimRng, now: Instant) -> Result<Self, LinkError> {
        if let Capacity::Fixed(rate) = config.capacity {
            let bytes_per_sec = rate.bytes_per_sec();
            if !(bytes_per_sec > 0.0 && bytes_per_sec.is_finite()) {
                return Err(LinkError::InvalidRate(rate));
            }
        }
        // Separate streams, so that RED's draws never shift the channel's.
        let queue_rng = SimRng::new(rng.next_u64());
        let loss_rng = SimRng::new(rng.next_u64());
        Ok(LinkDirection {
            capacity: config.capacity,
            delay: config.delay,
            delay_change: config.delay_change,
            outage: config.outage,
            overhead_bytes: config.overhead_bytes,
            queue: Queue::new(config.queue, now)?,
            loss: config.loss.build()?,
            queue_rng,
            loss_rng,
            start: now,
            in_service: None,
            busy_since: now,
            busy_bytes: 0,
            next_opportunity: 0,
            pending: Vec::new(),
            lost: None,
            dropped: None,
            clock: now,
            stats: LinkStats::default(),
            bod: None,
            tdd: None,
        })
    }

    /// The terminal of a bandwidth-on-demand satellite return link made at
    /// `now` ([`BodConfig`] describes the model): `config` gives the queue,
    /// the delay, the overhead and the channel loss, and its capacity is
    /// what utilisation is measured against (give
    /// `Capacity::Fixed(bod.max_rate)`); the transmitter sends only in the
    /// timeslots granted.
    pub fn with_bandwidth_on_demand(
        config: LinkConfig,
        bod: BodConfig,
        rng: SimRng,
        now: Instant,
    ) -> Result<Self, LinkError> {
        let mut link = LinkDirection::new(config, rng, now)?;
        link.bod = Some(Box::new(
            bod::Bod::new(bod, None, now).map_err(LinkError::Bod)?,
        ));
        Ok(link)
    }

    /// [`with_bandwidth_on_demand`](Self::with_bandwidth_on_demand) for a
    /// terminal of `pool`, whose capacity it shares with the pool's other
    /// terminals (made at the same `now`, with the same superframe, timeslot
    /// and request-grant delay).
    pub fn with_pooled_bandwidth_on_demand(
        config: LinkConfig,
        bod: BodConfig,
        pool: SharedBodPool,
        rng: SimRng,
        now: Instant,
    ) -> Result<Self, LinkError> {
        let mut link = LinkDirection::new(config, rng, now)?;
        link.bod = Some(Box::new(
            bod::Bod::new(bod, Some(pool), now).map_err(LinkError::Bod)?,
        ));
        Ok(link)
    }

    /// A station of the WiMAX TDD cell `cell` sending in `subframe` (the
    /// UL for a station's forward direction, the DL for the BS's way back
    /// to it), made at `now`, the cell's time origin; [`TddConfig`]
    /// documents the model. `config` gives the queue (paper 000: the
    /// station's rtPS and nrtPS queues, a round-robin `Priority` queue), the
    /// delay, the overhead and the channel loss; its capacity is what
    /// utilisation is measured against (give the subframe's
    /// [`TddConfig::mean_rate`]).
    pub fn with_tdd(
        config: LinkConfig,
        cell: SharedTddCell,
        subframe: Subframe,
        rng: SimRng,
        now: Instant,
    ) -> Result<Self, LinkError> {
        let mut link = LinkDirection::new(config, rng, now)?;
        link.tdd = Some(Box::new(tdd::TddStation::new(cell, subframe, now)));
        Ok(link)
    }

    /// A TDD station's grants and their use (`None` for other links).
    pub fn tdd_stats(&self) -> Option<TddStats> {
        self.tdd.as_ref().map(|station| station.stats)
    }

    /// A TDD station's cell and subframe (`None` for other links).
    pub fn tdd_cell(&self) -> Option<(&SharedTddCell, Subframe)> {
        self.tdd
            .as_ref()
            .map(|station| (station.cell(), station.subframe))
    }

    /// A bandwidth-on-demand link's grants and their use (`None` for other
    /// links).
    pub fn bod_stats(&self) -> Option<BodStats> {
        self.bod.as_ref().map(|bod| bod.stats)
    }

    /// The pool a bandwidth-on-demand link shares (`None` for a terminal
    /// alone and for other links).
    pub fn bod_pool(&self) -> Option<&SharedBodPool> {
        self.bod.as_ref().and_then(|bod| bod.pool())
    }

    /// A bandwidth-on-demand link's configuration (`None` for other links).
    pub fn bod_config(&self) -> Option<BodConfig> {
        self.bod.as_ref().map(|bod| bod.config)
    }

    /// Offers a packet arriving at `now`. Work due before `now` is done first,
    /// so a packet never uses capacity from before its arrival.
    pub fn enqueue(&mut self, now: Instant, packet: P) -> EnqueueOutcome<P> {
        self.advance(now);
        self.stats.offered += 1;
        let wire_bytes = self.wire_bytes(&packet);
        if let Some(bod) = &mut self.bod {
            // RBDC measures what arrives at the terminal, the demand: a
            // packet its full queue drops counts too (counting only what
            // the queue took, a full queue asks for what it already gets
            // and the grant never grows: measured with paper 002's Fig. 1,
            // a 2 Mbit/s link granted 1.0-1.3 Mbit/s on average).
            bod.arrived(wire_bytes);
        }
        let outcome = self.queue.enqueue(now, packet, &mut self.queue_rng);
        self.collect_queue_drops();
        if let Err(drop) = outcome {
            self.stats.queue_drops += 1;
            return EnqueueOutcome::Dropped(drop);
        }
        if self.bod.is_some() || self.tdd.is_some() {
            return EnqueueOutcome::Queued;
        }
        if matches!(self.capacity, Capacity::Fixed(_)) && self.in_service.is_none() {
            // An idle fixed-rate transmitter starts a new busy period at once.
            self.busy_since = now;
            self.busy_bytes = 0;
            self.start_fixed(now);
        }
        EnqueueOutcome::Queued
    }

    /// When the link next needs [`process`](Self::process): a transmission
    /// finishing, the next trace opportunity while packets wait, or — when
    /// an `enqueue` finished packets that `process` has not yet collected —
    /// the latest time the link was given. Never earlier than that time;
    /// `None` when idle.
    #[inline]
    pub fn next_event(&self) -> Option<Instant> {
        if self.tdd.is_some() || self.bod.is_some() {
            return self.next_granted_event();
        }
        let transmitter = match &self.capacity {
            Capacity::Fixed(_) => self.in_service.as_ref().map(|s| s.finish),
            Capacity::Trace(trace) => (self.in_service.is_some() || !self.queue.is_empty())
                .then(|| self.start + trace.opportunity_offset(self.next_opportunity)),
        };
        if self.pending.is_empty() {
            transmitter
        } else {
            Some(self.clock)
        }
    }

    /// [`next_event`](Self::next_event) for a TDD station or a
    /// bandwidth-on-demand terminal, which send only in what they are
    /// granted.
    #[inline(never)]
    fn next_granted_event(&self) -> Option<Instant> {
        if let Some(station) = &self.tdd {
            let waiting = self.in_service.is_some() || !self.queue.is_empty();
            let transmitter = if waiting && station.left() > 0 {
                // The end of what the burst sends of the packet in service,
                // or the burst's next byte for the queue's head.
                Some(match &self.in_service {
                    Some(service) => {
                        station.time_at(station.used + station.left().min(service.remaining_bytes))
                    }
                    None => station.time_at(station.used),
                })
            } else if waiting || !station.is_quiet() {
                Some(station.next_boundary())
            } else {
                None
            };
            return if self.pending.is_empty() {
                transmitter.map(|at| at.max(self.clock))
            } else {
                Some(self.clock)
            };
        }
        if let Some(bod) = &self.bod {
            let transmitter = match &self.in_service {
                // The slot its last byte goes in, or the next superframe.
                Some(service) => bod.slot_carrying(service.remaining_bytes),
                None if !self.queue.is_empty() => bod.next_slot(),
                None => None,
            }
            .or_else(|| {
                let waiting = self.in_service.is_some() || !self.queue.is_empty();
                // A pooled terminal makes every request at its boundary,
                // before the pool hands out the superframe it is for.
                let due = waiting || (bod.is_pooled() && !bod.is_quiet());
                due.then(|| bod.next_boundary())
            });
            return if self.pending.is_empty() {
                transmitter
            } else {
                Some(self.clock)
            };
        }
        None
    }

    /// Runs the link up to `now` and returns the packets that finished
    /// serialisation and survived the channel, in order, each with its arrival
    /// time at the far end (which may be after `now`).
    pub fn process(&mut self, now: Instant) -> Vec<Delivery<P>> {
        let mut deliveries = Vec::new();
        self.process_into(now, &mut deliveries);
        deliveries
    }

    /// [`process`](Self::process), appending the deliveries to `out`
    /// instead: a driver that keeps one buffer allocates nothing per call.
    pub fn process_into(&mut self, now: Instant, out: &mut Vec<Delivery<P>>) {
        self.advance(now);
        self.stats.delivered += self.pending.len() as u64;
        out.append(&mut self.pending);
    }

    /// Keeps the packets lost on the channel from now on, for
    /// [`take_lost_packets`](Self::take_lost_packets) (a driver that
    /// attributes losses to flows needs them; by default they are discarded).
    pub fn keep_lost_packets(&mut self) {
        self.lost.get_or_insert_with(Vec::new);
    }

    /// The packets lost on the channel since the last call, in loss order
    /// (always empty unless [`keep_lost_packets`](Self::keep_lost_packets)
    /// was called). They stay counted in [`LinkStats::channel_losses`].
    pub fn take_lost_packets(&mut self) -> Vec<P> {
        self.lost.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Keeps the packets the queue drops after accepting them (CoDel,
    /// FQ-CoDel) from now on, for
    /// [`take_dropped_packets`](Self::take_dropped_packets); by default they
    /// are discarded. Refused arrivals always come back from
    /// [`enqueue`](Self::enqueue).
    pub fn keep_dropped_packets(&mut self) {
        self.dropped.get_or_insert_with(Vec::new);
    }

    /// The packets the queue dropped after accepting them since the last
    /// call, in drop order (always empty unless
    /// [`keep_dropped_packets`](Self::keep_dropped_packets) was called).
    /// They stay counted in [`LinkStats::queue_drops`].
    pub fn take_dropped_packets(&mut self) -> Vec<Drop<P>> {
        self.dropped
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Counts (and keeps, if asked) what the queue dropped on its own.
    /// Inline: it runs after every enqueue and dequeue and almost always
    /// finds nothing (issue 18's profile: its call was 2 % of a NewReno run).
    #[inline]
    fn collect_queue_drops(&mut self) {
        if self.queue.has_dropped() {
            self.take_queue_drops();
        }
    }

    #[cold]
    fn take_queue_drops(&mut self) {
        let drops = self.queue.take_dropped();
        self.stats.queue_drops += drops.len() as u64;
        if let Some(kept) = &mut self.dropped {
            kept.extend(drops);
        }
    }

    /// Packets waiting in the queue (not counting the one being serialised).
    pub fn queue_len_packets(&self) -> usize {
        self.queue.len_packets()
    }

    /// Bytes waiting in the queue.
    pub fn queue_len_bytes(&self) -> u64 {
        self.queue.len_bytes()
    }

    /// The queue's own statistics (drops by reason, maximum length).
    pub fn queue_stats(&self) -> QueueStats {
        self.queue.stats()
    }

    /// What the link has done so far.
    pub fn stats(&self) -> LinkStats {
        LinkStats {
            ce_marked: self.queue.stats().ce_marked,
            ..self.stats
        }
    }

    /// The packet accounting: [`Conservation::holds`] must always be true.
    pub fn conservation(&self) -> Conservation {
        let in_link = self.queue.len_packets() as u64
            + u64::from(self.in_service.is_some())
            + self.pending.len() as u64;
        Conservation {
            offered: self.stats.offered,
            delivered: self.stats.delivered,
            queue_drops: self.stats.queue_drops,
            channel_losses: self.stats.channel_losses,
            in_link,
        }
    }

    /// The share of the capacity used from the link's creation to `now`:
    /// bits sent / (rate × time) for a fixed rate; bytes sent / bytes offered
    /// by the opportunities so far for a trace. 0 before any capacity existed.
    pub fn utilisation(&self, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.start);
        let capacity_bytes = match &self.capacity {
            Capacity::Fixed(rate) => rate.bytes_per_sec() * elapsed.as_secs_f64(),
            Capacity::Trace(trace) => {
                trace.opportunities_through(elapsed) as f64 * f64::from(OPPORTUNITY_BYTES)
            }
        };
        if capacity_bytes > 0.0 {
            self.stats.wire_bytes_sent as f64 / capacity_bytes
        } else {
            0.0
        }
    }

    fn wire_bytes(&self, packet: &P) -> u64 {
        u64::from(packet.size_bytes()) + u64::from(self.overhead_bytes)
    }

    /// Does all the work due at or before `now`. Inline for a fixed-rate
    /// link with nothing due, which most enqueues find (issue 18).
    #[inline]
    fn advance(&mut self, now: Instant) {
        self.clock = self.clock.max(now);
        let fixed = matches!(self.capacity, Capacity::Fixed(_));
        if fixed && self.tdd.is_none() && self.bod.is_none() {
            if self.in_service.as_ref().is_some_and(|s| s.finish <= now) {
                self.advance_fixed(now);
            }
            return;
        }
        self.advance_scheduled(now);
    }

    /// [`advance`](Self::advance) for a TDD, bandwidth-on-demand or
    /// trace-driven link.
    #[inline(never)]
    fn advance_scheduled(&mut self, now: Instant) {
        if self.tdd.is_some() {
            self.advance_tdd(now);
            return;
        }
        if self.bod.is_some() {
            self.advance_bod(now);
            return;
        }
        match &self.capacity {
            Capacity::Fixed(_) => self.advance_fixed(now),
            Capacity::Trace(_) => self.advance_trace(now),
        }
    }

    #[inline(never)]
    fn advance_fixed(&mut self, now: Instant) {
        while let Some(service) = self.in_service.take_if(|s| s.finish <= now) {
            let finish = service.finish;
            self.complete(service, finish);
            // Back to back: the next packet starts as this one ends.
            self.start_fixed(finish);
        }
    }

    /// Starts serialising the queue's head at `at`, within the current busy
    /// period.
    fn start_fixed(&mut self, at: Instant) {
        let Capacity::Fixed(rate) = &self.capacity else {
            return;
        };
        let bytes_per_sec = rate.bytes_per_sec();
        let packet = self.queue.dequeue(at);
        self.collect_queue_drops();
        let Some(packet) = packet else {
            return;
        };
        self.busy_bytes += self.wire_bytes(&packet);
        // Serialisation time = size / rate, measured from the busy period's
        // start so that a saturated link runs at exactly its rate.
        let nanos = (self.busy_bytes as f64 * 1e9 / bytes_per_sec).round();
        let finish = self.busy_since + Duration::from_nanos(nanos as u64);
        self.in_service = Some(InService {
            packet,
            started: at,
            finish,
            remaining_bytes: 0,
        });
    }

    /// mahimahi's `LinkQueue::rationalize`: each opportunity due at or before
    /// `now` drains up to 1504 bytes from the head of the queue; a packet may
    /// span opportunities and several may finish in one; an opportunity that
    /// finds nothing to send is wasted.
    fn advance_trace(&mut self, now: Instant) {
        loop {
            // The schedule is read in place each turn: serving an
            // opportunity needs the whole link mutably.
            let Capacity::Trace(trace) = &self.capacity else {
                return;
            };
            if self.in_service.is_none() && self.queue.is_empty() {
                // Idle: every opportunity up to now is wasted. Skip them
                // arithmetically rather than one by one.
                let through =
                    trace.opportunities_through(now.saturating_duration_since(self.start));
                self.next_opportunity = self.next_opportunity.max(through);
                return;
            }
            let at = self.start + trace.opportunity_offset(self.next_opportunity);
            if at > now {
                return;
            }
            self.next_opportunity += 1;
            self.serve_opportunity(at, u64::from(OPPORTUNITY_BYTES));
        }
    }

    /// A delivery opportunity of `budget` wire bytes at `at`: drains the
    /// packet in service and then the queue's head, a packet spanning
    /// opportunities and several finishing in one; whatever finds nothing
    /// to send is wasted. Returns whether any byte went out.
    fn serve_opportunity(&mut self, at: Instant, mut budget: u64) -> bool {
        let full = budget;
        loop {
            let mut service = match self.in_service.take() {
                Some(service) => service,
                None => match self.dequeue_collecting(at) {
                    Some(packet) => InService {
                        remaining_bytes: self.wire_bytes(&packet),
                        packet,
                        started: at,
                        finish: at,
                    },
                    // The rest of this opportunity is wasted.
                    None => break,
                },
            };
            let sent = budget.min(service.remaining_bytes);
            service.remaining_bytes -= sent;
            budget -= sent;
            if service.remaining_bytes == 0 {
                self.complete(service, at);
            } else {
                self.in_service = Some(service);
            }
            if budget == 0 {
                break;
            }
        }
        budget < full
    }

    /// Bandwidth on demand: superframe boundaries (a request each) and
    /// granted timeslots due at or before `now`, in time order, so that
    /// every request sees the queue as it was at its boundary.
    fn advance_bod(&mut self, now: Instant) {
        loop {
            let idle = self.in_service.is_none() && self.queue.is_empty();
            let Some(bod) = self.bod.as_mut() else {
                return;
            };
            if idle && bod.is_quiet() {
                bod.skip_quiet_until(now);
            }
            let boundary = bod.next_boundary();
            match bod.next_slot().filter(|slot| *slot < boundary) {
                Some(at) if at <= now => {
                    let slot_bytes = bod.slot_bytes();
                    let used = !idle && self.serve_opportunity(at, slot_bytes);
                    if let Some(bod) = self.bod.as_mut() {
                        bod.take_slot(used);
                    }
                }
                Some(_) => return,
                None if boundary <= now => {
                    let backlog = self.backlog_wire_bytes();
                    if let Some(bod) = self.bod.as_mut() {
                        bod.next_frame(backlog);
                    }
                }
                None => return,
            }
        }
    }

    /// Wire bytes waiting to be sent: the queue's (with the overhead of
    /// each packet) and what is left of the packet in service.
    fn backlog_wire_bytes(&self) -> u64 {
        self.queue.len_bytes()
            + self.queue.len_packets() as u64 * u64::from(self.overhead_bytes)
            + self.in_service.as_ref().map_or(0, |s| s.remaining_bytes)
    }

    /// Takes the queue's next packet at `at`, counting what it dropped.
    fn dequeue_collecting(&mut self, at: Instant) -> Option<P> {
        let packet = self.queue.dequeue(at);
        self.collect_queue_drops();
        packet
    }

    /// A packet's last byte left at `finish`: judge it on the channel.
    fn complete(&mut self, service: InService<P>, finish: Instant) {
        self.stats.packets_sent += 1;
        self.stats.wire_bytes_sent += self.wire_bytes(&service.packet);
        self.stats.busy_time += finish.saturating_duration_since(service.started);
        // The channel draws whether cut or not, so that a cut leaves the
        // rest of the run's draws as they were.
        let lost = self.loss.lose(&mut self.loss_rng);
        let cut = self
            .outage
            .is_some_and(|(from, until)| finish >= from && finish < until);
        if lost || cut {
            self.stats.channel_losses += 1;
            if let Some(lost) = &mut self.lost {
                lost.push(service.packet);
            }
            return;
        }
        self.pending.push(Delivery {
            packet: service.packet,
            at: finish
                + match self.delay_change {
                    Some((at, delay)) if finish >= at => delay,
                    _ => self.delay,
                },
        });
    }
}
