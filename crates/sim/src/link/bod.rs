//! Bandwidth on demand (BoD): the return link of a DVB-RCS satellite
//! terminal, whose capacity comes in timeslots its control centre grants
//! superframe by superframe from the terminal's own requests.
//!
//! The model (paper 002 §IV: "a broadband wireless link … with variable
//! capacity (up to 2 Mbps) … This incorporates an RRM model (based on that
//! in [2])", [2] being Sooriyabandara & Fairhurst, "Dynamics of TCP over
//! BoD satellite networks", Int. J. Satellite Communications and
//! Networking 21, 2003; the request types are ETSI EN 301 790's (DVB-RCS)
//! capacity categories):
//!
//! - Time is cut into superframes of [`BodConfig::superframe`]. At the
//!   start of each, the terminal sends a capacity request made of a
//!   **rate-based** part (RBDC: the wire bytes that arrived at the
//!   terminal in the superframe that just ended, those its full queue
//!   dropped included, i.e. the rate offered to it) and a
//!   **volume-based** part (VBDC: the wire bytes waiting, queued or being
//!   sent, less those the grants already on their way will carry), each
//!   rounded up to whole timeslots of [`BodConfig::slot_bytes`].
//! - The request is granted, up to [`BodConfig::max_slots`] timeslots, for
//!   the first superframe that starts once the request-grant delay
//!   ([`BodConfig::request_grant_delay`]: the request's trip to the
//!   control centre, its scheduling, and the grant's trip back) has
//!   passed: ⌈delay / superframe⌉ superframes later.
//! - A superframe's granted slots are spread evenly over it; each carries
//!   `slot_bytes` wire bytes of the queue's head, a packet spanning as
//!   many slots as it needs (as the trace-driven link's delivery
//!   opportunities do). A slot that finds the queue empty is wasted.
//!
//! One link direction is one terminal, the only one its capacity is
//! granted to; the terminals of several links do not share a pool.
//! Leaving out: constant-rate assignment (CRA), free capacity assignment,
//! request timeouts, and the control centre's fairness among terminals.

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;

/// Which capacity requests a terminal sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodRequests {
    /// Rate-based (RBDC) and volume-based (VBDC), added.
    Both,
    /// Rate-based only: the arrival rate of the last superframe.
    Rate,
    /// Volume-based only: the backlog not yet covered by grants.
    Volume,
}

/// A satellite geometry: where the scheduler is, hence the request-grant
/// delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodGeometry {
    /// A transparent (bent-pipe) satellite: requests go up, down to the
    /// control centre on the ground, and grants come back up and down,
    /// four geostationary hops; paper 002's TS case, ≈ 600 ms.
    Transparent,
    /// A regenerative satellite with the scheduler on board: one hop up
    /// and one down; paper 002's RS case, ≈ 300 ms.
    Regenerative,
}

impl BodGeometry {
    /// The request-grant delay of the geometry: 600 ms transparent and
    /// 300 ms regenerative, paper 002 §IV.C's two delays (its "propagation
    /// delay of 300 ms and one with a propagation delay of 600 ms").
    pub fn request_grant_delay(self) -> Duration {
        match self {
            BodGeometry::Transparent => Duration::from_millis(600),
            BodGeometry::Regenerative => Duration::from_millis(300),
        }
    }
}

/// The superframe when `superframe` is absent: 26.5 ms. Not from a
/// source: EN 301 790 leaves superframe durations to the operator, and
/// this is a value of the order DVB-RCS systems use (tens of ms).
pub const BOD_DEFAULT_SUPERFRAME: Duration = Duration::from_micros(26_500);
/// The wire bytes one timeslot carries when `slot_bytes` is absent: 48,
/// the payload of one ATM cell, EN 301 790's ATM traffic burst of one
/// cell.
pub const BOD_DEFAULT_SLOT_BYTES: u32 = 48;
/// The most a terminal is granted when `max_rate` is absent: 2 Mbit/s,
/// paper 002 §IV ("variable capacity (up to 2 Mbps)").
pub const BOD_DEFAULT_MAX_RATE_BPS: f64 = 2e6;

/// A bandwidth-on-demand link direction (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodConfig {
    /// The superframe, the period of requests and grants.
    pub superframe: Duration,
    /// The most capacity granted, which sets [`max_slots`](Self::max_slots).
    pub max_rate: Rate,
    /// Wire bytes a timeslot carries.
    pub slot_bytes: u32,
    /// From a request to the first superframe its grant may be used in.
    pub request_grant_delay: Duration,
    /// The requests the terminal sends.
    pub requests: BodRequests,
}

impl BodConfig {
    /// The defaults for `geometry`: [`BOD_DEFAULT_SUPERFRAME`],
    /// [`BOD_DEFAULT_MAX_RATE_BPS`], [`BOD_DEFAULT_SLOT_BYTES`], the
    /// geometry's request-grant delay and both kinds of request.
    pub fn preset(geometry: BodGeometry) -> BodConfig {
        BodConfig {
            superframe: BOD_DEFAULT_SUPERFRAME,
            max_rate: Rate::from_bits_per_sec(BOD_DEFAULT_MAX_RATE_BPS),
            slot_bytes: BOD_DEFAULT_SLOT_BYTES,
            request_grant_delay: geometry.request_grant_delay(),
            requests: BodRequests::Both,
        }
    }

    /// The mean capacity `stats` granted, bits/s of wire bytes: the slots
    /// granted times their bytes over the superframes counted.
    pub fn granted_rate_bps(&self, stats: &BodStats) -> f64 {
        let seconds = self.superframe.as_secs_f64() * stats.superframes as f64;
        if seconds > 0.0 {
            stats.slots_granted as f64 * f64::from(self.slot_bytes) * 8.0 / seconds
        } else {
            0.0
        }
    }

    /// Timeslots a superframe at most: ⌊max_rate · superframe / slot⌋
    /// (138 with the defaults); 0 if the rate cannot fill one slot.
    pub fn max_slots(&self) -> u32 {
        let bytes = self.max_rate.bytes_per_sec() * self.superframe.as_secs_f64();
        let slots = (bytes / f64::from(self.slot_bytes.max(1))).floor();
        if slots.is_finite() && slots >= 0.0 {
            slots.min(f64::from(u32::MAX)) as u32
        } else {
            0
        }
    }

    /// Superframes from a request to its grant: ⌈delay / superframe⌉, at
    /// least one.
    pub fn grant_lag_superframes(&self) -> usize {
        let frame = self.superframe.as_nanos().max(1);
        let lag = self.request_grant_delay.as_nanos().div_ceil(frame).max(1);
        usize::try_from(lag).unwrap_or(usize::MAX)
    }

    /// Why the configuration cannot run, if it cannot.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.superframe.is_zero() {
            return Err("the superframe must be longer than zero");
        }
        if self.slot_bytes == 0 {
            return Err("a timeslot must carry at least one byte");
        }
        if self.max_slots() == 0 {
            return Err("max_rate does not fill one timeslot a superframe");
        }
        if self.grant_lag_superframes() > MAX_GRANT_LAG_SUPERFRAMES {
            return Err("the request-grant delay spans too many superframes");
        }
        Ok(())
    }
}

/// The most superframes a grant may lag its request (the grants in flight
/// are kept one a superframe).
pub const MAX_GRANT_LAG_SUPERFRAMES: usize = 1 << 16;

/// What a bandwidth-on-demand terminal was granted and used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BodStats {
    /// Superframes begun.
    pub superframes: u64,
    /// Timeslots requested (before the cap at the maximum).
    pub slots_requested: u64,
    /// Timeslots granted in them.
    pub slots_granted: u64,
    /// Timeslots that carried bytes.
    pub slots_used: u64,
    /// The most timeslots granted for one superframe.
    pub max_slots_granted: u32,
}

/// A terminal's requests and grants as time passes.
#[derive(Clone, Debug)]
pub(super) struct Bod {
    pub(super) config: BodConfig,
    max_slots: u32,
    start: Instant,
    /// The current superframe's index from `start`.
    frame: u64,
    /// Grants of the current superframe (front) and the next ones, up to
    /// the request-grant lag.
    grants: VecDeque<u32>,
    /// The current superframe's next timeslot.
    slot: u32,
    /// Wire bytes that arrived in the current superframe.
    arrived_bytes: u64,
    pub(super) stats: BodStats,
}

impl Bod {
    pub(super) fn new(config: BodConfig, start: Instant) -> Result<Bod, &'static str> {
        config.check()?;
        let lag = config.grant_lag_superframes();
        Ok(Bod {
            max_slots: config.max_slots(),
            config,
            start,
            frame: 0,
            // Nothing was asked for before the link existed.
            grants: std::iter::repeat_n(0, lag + 1).collect(),
            slot: 0,
            arrived_bytes: 0,
            stats: BodStats {
                superframes: 1,
                ..BodStats::default()
            },
        })
    }

    pub(super) fn slot_bytes(&self) -> u64 {
        u64::from(self.config.slot_bytes)
    }

    fn frame_start(&self, frame: u64) -> Instant {
        let nanos = self
            .config
            .superframe
            .as_nanos()
            .saturating_mul(u128::from(frame));
        self.start + Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// When the next superframe starts.
    pub(super) fn next_boundary(&self) -> Instant {
        self.frame_start(self.frame + 1)
    }

    fn granted_now(&self) -> u32 {
        self.grants.front().copied().unwrap_or(0)
    }

    /// When timeslot `slot` of the current superframe is, if granted.
    fn slot_time(&self, slot: u32) -> Option<Instant> {
        let granted = self.granted_now();
        (slot < granted).then(|| {
            let offset = self.config.superframe.as_nanos() * u128::from(slot) / u128::from(granted);
            self.frame_start(self.frame)
                + Duration::from_nanos(u64::try_from(offset).unwrap_or(u64::MAX))
        })
    }

    /// The next unused timeslot of the current superframe, if any.
    pub(super) fn next_slot(&self) -> Option<Instant> {
        self.slot_time(self.slot)
    }

    /// The timeslot in which `bytes` more wire bytes will have been sent,
    /// if it is in the current superframe.
    pub(super) fn slot_carrying(&self, bytes: u64) -> Option<Instant> {
        let slots = bytes.div_ceil(self.slot_bytes()).max(1);
        let last = u64::from(self.slot) + slots - 1;
        self.slot_time(u32::try_from(last).ok()?)
    }

    /// Uses the next timeslot.
    pub(super) fn take_slot(&mut self, used: bool) {
        self.slot += 1;
        if used {
            self.stats.slots_used += 1;
        }
    }

    /// Counts wire bytes arriving at the terminal's queue.
    pub(super) fn arrived(&mut self, wire_bytes: u64) {
        self.arrived_bytes = self.arrived_bytes.saturating_add(wire_bytes);
    }

    /// Starts the next superframe with `backlog` wire bytes waiting: the
    /// request made now is granted `lag` superframes on.
    pub(super) fn next_frame(&mut self, backlog: u64) {
        let slot = self.slot_bytes();
        self.grants.pop_front();
        self.frame += 1;
        self.slot = 0;
        self.stats.superframes += 1;
        let granted = self.granted_now();
        self.stats.slots_granted += u64::from(granted);
        self.stats.max_slots_granted = self.stats.max_slots_granted.max(granted);
        // RBDC: the arrival rate of the superframe that ended.
        let rate = std::mem::take(&mut self.arrived_bytes).div_ceil(slot);
        // VBDC: what waits and the grants on their way will not carry.
        let coming: u64 = self.grants.iter().map(|g| u64::from(*g) * slot).sum();
        let volume = backlog.saturating_sub(coming).div_ceil(slot);
        let request = match self.config.requests {
            BodRequests::Both => rate.saturating_add(volume),
            BodRequests::Rate => rate,
            BodRequests::Volume => volume,
        };
        self.stats.slots_requested = self.stats.slots_requested.saturating_add(request);
        let grant = u32::try_from(request.min(u64::from(self.max_slots))).unwrap_or(self.max_slots);
        self.grants.push_back(grant);
    }

    /// Whether the terminal has neither grants to come nor arrivals to
    /// ask for: superframes until `now` can be skipped.
    pub(super) fn is_quiet(&self) -> bool {
        self.arrived_bytes == 0 && self.grants.iter().all(|g| *g == 0)
    }

    /// Jumps over the quiet superframes before the one holding `now`.
    pub(super) fn skip_quiet_until(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.start).as_nanos();
        let frame = elapsed / self.config.superframe.as_nanos().max(1);
        let frame = u64::try_from(frame).unwrap_or(u64::MAX);
        if frame > self.frame + 1 {
            // Every skipped superframe requested nothing and was granted
            // nothing.
            self.stats.superframes += frame - 1 - self.frame;
            self.frame = frame - 1;
        }
    }
}
