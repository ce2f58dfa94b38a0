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
//! One link direction is one terminal. Alone, it is the only one its
//! capacity is granted to. Terminals in a [`BodPool`] share one control
//! centre's capacity (the forward link's carriers, the same for every
//! terminal of a beam; DVB-RCS's "up to" capacity is the satellite's, not
//! each terminal's): each superframe the centre hands out at most the
//! pool's timeslots, max-min fair (water-filling) over the requests made
//! one request-grant delay earlier, each terminal still capped by its own
//! `max_rate`; a terminal cannot know its grant before it comes, so what it
//! counts on when asking by volume is what it requested.
//! Leaving out: constant-rate assignment (CRA), free capacity assignment,
//! request timeouts, and priorities among terminals.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
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

/// The capacity a control centre shares among the terminals of a pool
/// (see the module documentation), and what it handed out.
#[derive(Debug)]
pub struct BodPool {
    name: String,
    /// Timeslots a superframe for all members together.
    max_slots: u32,
    /// The members' common superframe, timeslot and request-grant delay.
    member: BodConfig,
    members: usize,
    /// Requests by the superframe they are for, a slot count per member
    /// (each capped by the member's own maximum).
    requests: BTreeMap<u64, Vec<u64>>,
    /// The allocation of the superframe being served.
    allocation: Option<(u64, Vec<u32>)>,
    stats: BodPoolStats,
}

/// What a [`BodPool`] was asked for and handed out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BodPoolStats {
    /// Superframes with a request from any member.
    pub superframes: u64,
    /// Of them, those whose requests together exceeded the pool.
    pub contended: u64,
    /// Timeslots requested (after each member's own cap).
    pub slots_requested: u64,
    /// Timeslots granted.
    pub slots_granted: u64,
}

/// A [`BodPool`] as its member links hold it (behind a lock only so that
/// a link stays `Send`; one simulation runs on one thread).
pub type SharedBodPool = Arc<Mutex<BodPool>>;

/// The pool, locked (a panic while it was held cannot leave it half
/// changed in a way that matters more than the panic itself).
pub fn lock_pool(pool: &SharedBodPool) -> MutexGuard<'_, BodPool> {
    pool.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl BodPool {
    /// A pool named `name` of `max_rate` for terminals configured as
    /// `member` (their superframe, timeslot and request-grant delay, which
    /// are the control centre's and must be the same for every member).
    pub fn new(name: &str, max_rate: Rate, member: BodConfig) -> Result<BodPool, &'static str> {
        let pool = BodConfig { max_rate, ..member };
        pool.check()?;
        Ok(BodPool {
            name: name.to_owned(),
            max_slots: pool.max_slots(),
            member,
            members: 0,
            requests: BTreeMap::new(),
            allocation: None,
            stats: BodPoolStats::default(),
        })
    }

    /// The pool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the pool was asked for and handed out so far.
    pub fn stats(&self) -> BodPoolStats {
        self.stats
    }

    /// The pool's timeslots a superframe.
    pub fn max_slots(&self) -> u32 {
        self.max_slots
    }

    /// Admits a terminal configured as `config`, returning its index.
    fn join(&mut self, config: &BodConfig) -> Result<usize, &'static str> {
        let same = config.superframe == self.member.superframe
            && config.slot_bytes == self.member.slot_bytes
            && config.request_grant_delay == self.member.request_grant_delay;
        if !same {
            return Err(
                "the terminals of a pool must share superframe, slot_bytes and request_grant_delay",
            );
        }
        self.members += 1;
        Ok(self.members - 1)
    }

    /// Member `member` asks for `slots` in superframe `frame`.
    fn request(&mut self, member: usize, frame: u64, slots: u64) {
        let members = self.members;
        let entry = self
            .requests
            .entry(frame)
            .or_insert_with(|| vec![0; members]);
        if let Some(request) = entry.get_mut(member) {
            *request = slots;
        }
    }

    /// Member `member`'s grant for superframe `frame`. Every member asks
    /// at the start of `frame` (the links wake at each superframe while
    /// they have requests or grants outstanding), after every request for
    /// it was made a request-grant delay earlier.
    fn grant(&mut self, member: usize, frame: u64) -> u32 {
        if self.allocation.as_ref().is_none_or(|(f, _)| *f != frame) {
            // Requests for superframes gone by were never served (their
            // members were idle by then): let them go.
            let requests = self.requests.remove(&frame);
            self.requests.retain(|&f, _| f > frame);
            let allocation = requests.map_or_else(Vec::new, |requests| {
                let asked: u64 = requests.iter().sum();
                self.stats.superframes += 1;
                self.stats.slots_requested += asked;
                if asked > u64::from(self.max_slots) {
                    self.stats.contended += 1;
                }
                let shares = water_fill(&requests, self.max_slots, frame);
                self.stats.slots_granted += shares.iter().map(|&s| u64::from(s)).sum::<u64>();
                shares
            });
            self.allocation = Some((frame, allocation));
        }
        self.allocation
            .as_ref()
            .and_then(|(_, shares)| shares.get(member).copied())
            .unwrap_or(0)
    }
}

/// Max-min fair shares of `slots` for `requests`: every request met when
/// they fit; otherwise each member gets the lesser of its request and an
/// equal share of what the smaller requests left, and the slots an equal
/// division leaves over go one each to members still short, starting at
/// member `rotate` mod n (so that no member is always first).
fn water_fill(requests: &[u64], slots: u32, rotate: u64) -> Vec<u32> {
    let n = requests.len();
    let mut shares = vec![0u32; n];
    if n == 0 {
        return shares;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (requests[i], i));
    let mut left = u64::from(slots);
    for (k, &i) in order.iter().enumerate() {
        let remaining = (n - k) as u64;
        if requests[i].saturating_mul(remaining) <= left {
            // The smallest request left fits in an equal share: met.
            shares[i] = u32::try_from(requests[i]).unwrap_or(u32::MAX);
            left -= requests[i];
        } else {
            // The water level: the rest all get the same.
            let level = left / remaining;
            for &j in &order[k..] {
                shares[j] = u32::try_from(level).unwrap_or(u32::MAX);
            }
            left -= level * remaining;
            break;
        }
    }
    let start = usize::try_from(rotate % n as u64).unwrap_or(0);
    for i in (0..n).map(|k| (start + k) % n) {
        if left == 0 {
            break;
        }
        if u64::from(shares[i]) < requests[i] {
            shares[i] += 1;
            left -= 1;
        }
    }
    shares
}

/// A terminal's requests and grants as time passes.
#[derive(Clone, Debug)]
pub(super) struct Bod {
    pub(super) config: BodConfig,
    /// The pool the terminal shares, and its index there.
    pool: Option<(SharedBodPool, usize)>,
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
    pub(super) fn new(
        config: BodConfig,
        pool: Option<SharedBodPool>,
        start: Instant,
    ) -> Result<Bod, &'static str> {
        config.check()?;
        let lag = config.grant_lag_superframes();
        let pool = match pool {
            Some(pool) => {
                let member = lock_pool(&pool).join(&config)?;
                Some((pool, member))
            }
            None => None,
        };
        Ok(Bod {
            max_slots: config.max_slots(),
            pool,
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
        if let Some((pool, member)) = &self.pool {
            // What was queued here is the request; the pool decides.
            let granted = lock_pool(pool).grant(*member, self.frame);
            if let Some(front) = self.grants.front_mut() {
                *front = granted;
            }
        }
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
        if let Some((pool, member)) = &self.pool {
            let lag = self.grants.len() as u64;
            lock_pool(pool).request(*member, self.frame + lag, u64::from(grant));
        }
        self.grants.push_back(grant);
    }

    /// The pool the terminal shares, if any.
    pub(super) fn pool(&self) -> Option<&SharedBodPool> {
        self.pool.as_ref().map(|(pool, _)| pool)
    }

    /// Whether the terminal shares a pool (and must then make every
    /// request on time: it wakes at each superframe while not quiet).
    pub(super) fn is_pooled(&self) -> bool {
        self.pool.is_some()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_fill_meets_requests_that_fit() {
        assert_eq!(water_fill(&[10, 20, 30], 100, 0), vec![10, 20, 30]);
        assert_eq!(water_fill(&[], 100, 0), Vec::<u32>::new());
    }

    #[test]
    fn water_fill_is_max_min_fair() {
        // 100 slots for 10, 60 and 80: 10 met, the other two split the 90
        // left equally.
        assert_eq!(water_fill(&[10, 60, 80], 100, 0), vec![10, 45, 45]);
        // 100 for three wanting 50: 33 each and the one left over rotates.
        assert_eq!(water_fill(&[50, 50, 50], 100, 0), vec![34, 33, 33]);
        assert_eq!(water_fill(&[50, 50, 50], 100, 1), vec![33, 34, 33]);
        assert_eq!(water_fill(&[50, 50, 50], 100, 5), vec![33, 33, 34]);
        // Never more than the pool, never more than asked.
        let shares = water_fill(&[7, 0, 200, 13], 30, 3);
        assert_eq!(shares.iter().sum::<u32>(), 30);
        assert_eq!(shares[1], 0);
        assert!(shares[0] <= 7 && shares[3] <= 13);
    }

    #[test]
    fn a_pool_grants_a_superframe_from_the_requests_made_for_it() {
        let member = BodConfig::preset(BodGeometry::Regenerative);
        let mut pool = BodPool::new("beam", Rate::from_bits_per_sec(2e6), member).unwrap();
        let a = pool.join(&member).unwrap();
        let b = pool.join(&member).unwrap();
        assert_eq!(pool.max_slots(), 138);
        pool.request(a, 12, 138);
        pool.request(b, 12, 20);
        // A superframe nobody asked for grants nothing.
        assert_eq!(pool.grant(a, 11), 0);
        assert_eq!(pool.grant(b, 12), 20);
        assert_eq!(pool.grant(a, 12), 118);
        let stats = pool.stats();
        assert_eq!((stats.superframes, stats.contended), (1, 1));
        assert_eq!((stats.slots_requested, stats.slots_granted), (158, 138));
        // A terminal with another superframe cannot join.
        let other = BodConfig {
            superframe: Duration::from_millis(20),
            ..member
        };
        assert!(pool.join(&other).is_err());
    }
}
