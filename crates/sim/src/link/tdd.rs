//! A WiMAX (IEEE 802.16e) time-division-duplex cell: subscriber stations
//! (SS) whose uplink and downlink share one base station's (BS) frames.
//!
//! The model (paper 000 §3.1 and Table 1; IEEE 802.16e-2005 §8.4, OFDMA):
//!
//! - Time is cut into frames of [`TddConfig::frame`] (the standard allows
//!   2.5 to 20 ms, §8.4.5.2 Table 274; paper 000 varies 5 to 20 ms). Each
//!   frame starts with the downlink (DL) subframe and ends with the uplink
//!   (UL) subframe, split `dl : ul` ([`TddConfig::dl_share`] and
//!   [`TddConfig::ul_share`]; paper 000 Table 1: "DL/UL ratio 1:3", so
//!   1.25–5 ms DL and 3.75–15 ms UL).
//! - Each subframe loses a fixed time to overhead before its data region:
//!   the DL to the preamble, the FCH and the DL- and UL-MAPs plus the
//!   transmit/receive transition gap (TTG), the UL to its ranging, CQI and
//!   ACK region plus the receive/transmit gap (RTG)
//!   ([`TddConfig::dl_overhead`], [`TddConfig::ul_overhead`]; defaults in
//!   [`TDD_DEFAULT_DL_OVERHEAD`] and [`TDD_DEFAULT_UL_OVERHEAD`] with their
//!   sources). A short frame loses a larger share of its time to it.
//! - During a subframe's data region bytes go at the PHY rate
//!   ([`TddConfig::rate`]; paper 000 §3.1: 16-QAM 1/2 "required to achieve
//!   a data rate of 10.67 Mbps"), so a direction's mean capacity is rate ×
//!   its share of the frame less the overhead: the paper's 2.69 Mbit/s
//!   "corresponding downlink rate" is 10.67 Mbit/s × 1/4 (2.67) within 1 %.
//! - The BS grants each station's connection a burst of each subframe: it
//!   builds frame k's maps from the backlog each station reported (UL:
//!   rtPS unicast polling every frame, the station's bandwidth request
//!   carried in its allocation; DL: the BS's own queues)
//!   [`TddConfig::grant_lag`] frames earlier (default one: requests made in
//!   frame k − 1 are granted in frame k's UL-MAP, §6.3.6). A station asks
//!   for what waits less what the grants already on their way will carry.
//!   The data region is divided max-min fair (water-filling) among the
//!   requests, the bursts laid out one after another in an order that
//!   rotates each frame. A burst's unused bytes are padding.
//! - A packet (one MAC PDU, paper 000 §3.2) goes in its station's burst; a
//!   packet longer than what is left of the burst is fragmented and ends in
//!   the next frame's burst (§6.3.3.3). The MAC header and CRC are the
//!   link's `overhead` bytes.
//!
//! One link direction is one station's UL (the link's forward direction)
//! or DL (its reverse): its own queue (paper 000: per-class rtPS and nrtPS
//! queues, "drop-tail … fifty packets … Access to the SS service class
//! queues was round-robin": a `priority` queue with the `wrr` scheduler)
//! and its own channel loss (paper 000 §3.4's Gilbert-Elliott chain, drawn
//! per station). The stations of one [`TddCell`] share its subframes.
//! Leaving out: OFDMA slot granularity and subchannelisation (a burst is a
//! byte count), contention-based requests, ARQ/HARQ, adaptive modulation,
//! handover.

mod burst;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;

/// The frame when `frame` is absent: 5 ms, "the WiMAX Forum
/// recommendation" most implementations use (paper 000 §3.1).
pub const TDD_DEFAULT_FRAME: Duration = Duration::from_millis(5);
/// The PHY rate when `rate` is absent: 10.67 Mbit/s, paper 000 §3.1 and
/// Table 1 ("Raw data rate 10.67 Mbps", OFDMA-1024, 16-QAM 1/2).
pub const TDD_DEFAULT_RATE_BPS: f64 = 10.67e6;
/// One OFDMA symbol of a 10 MHz channel with a 1024-point FFT: 11.2 MHz
/// sampling, 91.43 µs of useful symbol and a 1/8 cyclic prefix (IEEE
/// 802.16e-2005 §8.4.2.3; the WiMAX Forum's mobile system profile).
pub const OFDMA_SYMBOL: Duration = Duration::from_nanos(102_857);
/// The DL overhead when `dl_overhead` is absent: three symbols (the
/// preamble, then the FCH and minimal DL- and UL-MAPs, §8.4.4.2) and the
/// TTG of 105.714 µs (296 physical slots, the WiMAX Forum's 10 MHz
/// profile): 414.285 µs. Paper 000 does not give it.
pub const TDD_DEFAULT_DL_OVERHEAD: Duration = Duration::from_nanos(3 * 102_857 + 105_714);
/// The UL overhead when `ul_overhead` is absent: three symbols (one PUSC
/// slot's worth of ranging, CQICH and ACK channels, §8.4.4.2) and the RTG
/// of 60 µs (168 physical slots, the same profile): 368.571 µs.
pub const TDD_DEFAULT_UL_OVERHEAD: Duration = Duration::from_nanos(3 * 102_857 + 60_000);
/// The most frames a grant may lag its request.
pub const MAX_TDD_GRANT_LAG: u32 = 64;

/// Which subframe a link direction sends in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subframe {
    /// The BS to the station (a link's reverse direction).
    Downlink,
    /// The station to the BS (a link's forward direction).
    Uplink,
}

/// A TDD cell's frame (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TddConfig {
    /// The frame length, 2.5 to 20 ms in the standard.
    pub frame: Duration,
    /// The DL's part of the DL:UL split (paper 000: 1).
    pub dl_share: u32,
    /// The UL's part (paper 000: 3).
    pub ul_share: u32,
    /// The PHY rate during a subframe's data region.
    pub rate: Rate,
    /// The DL subframe's time before its data region.
    pub dl_overhead: Duration,
    /// The UL subframe's time before its data region.
    pub ul_overhead: Duration,
    /// Frames from a request to the frame it is granted in, at least one.
    pub grant_lag: u32,
}

impl Default for TddConfig {
    /// Paper 000's settings with a 5 ms frame: DL:UL 1:3, 10.67 Mbit/s,
    /// the default overheads and a one-frame grant lag.
    fn default() -> Self {
        TddConfig {
            frame: TDD_DEFAULT_FRAME,
            dl_share: 1,
            ul_share: 3,
            rate: Rate::from_bits_per_sec(TDD_DEFAULT_RATE_BPS),
            dl_overhead: TDD_DEFAULT_DL_OVERHEAD,
            ul_overhead: TDD_DEFAULT_UL_OVERHEAD,
            grant_lag: 1,
        }
    }
}

impl TddConfig {
    /// The DL subframe's length: frame × dl / (dl + ul).
    pub fn dl_length(&self) -> Duration {
        let parts = u128::from(self.dl_share) + u128::from(self.ul_share);
        let nanos = self.frame.as_nanos() * u128::from(self.dl_share) / parts.max(1);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// The UL subframe's length: the rest of the frame.
    pub fn ul_length(&self) -> Duration {
        self.frame.saturating_sub(self.dl_length())
    }

    /// Where `subframe`'s data region starts from the frame's start, and
    /// how long it is.
    pub fn data_region(&self, subframe: Subframe) -> (Duration, Duration) {
        match subframe {
            Subframe::Downlink => (
                self.dl_overhead,
                self.dl_length().saturating_sub(self.dl_overhead),
            ),
            Subframe::Uplink => (
                self.dl_length() + self.ul_overhead,
                self.ul_length().saturating_sub(self.ul_overhead),
            ),
        }
    }

    /// The bytes `subframe`'s data region carries each frame at the PHY
    /// rate (whole bytes, rounded down).
    pub fn capacity_bytes(&self, subframe: Subframe) -> u64 {
        let (_, length) = self.data_region(subframe);
        let bytes = (self.rate.bytes_per_sec() * length.as_secs_f64()).floor();
        if bytes.is_finite() && bytes > 0.0 {
            bytes as u64
        } else {
            0
        }
    }

    /// `subframe`'s mean capacity over whole frames: its bytes a frame
    /// over the frame length.
    pub fn mean_rate(&self, subframe: Subframe) -> Rate {
        let seconds = self.frame.as_secs_f64();
        if seconds > 0.0 {
            Rate::from_bytes_per_sec(self.capacity_bytes(subframe) as f64 / seconds)
        } else {
            Rate::from_bytes_per_sec(0.0)
        }
    }

    /// Why the configuration cannot run, if it cannot.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.frame < Duration::from_micros(2_500) || self.frame > Duration::from_millis(20) {
            return Err("a TDD frame is 2.5 to 20 ms long (IEEE 802.16e-2005 §8.4.5.2)");
        }
        if self.dl_share == 0 || self.ul_share == 0 {
            return Err("both subframes need a share of the frame");
        }
        let bytes_per_sec = self.rate.bytes_per_sec();
        if !(bytes_per_sec > 0.0 && bytes_per_sec.is_finite()) {
            return Err("the PHY rate must be positive and finite");
        }
        if self.capacity_bytes(Subframe::Downlink) == 0 {
            return Err("the DL overhead leaves no room for data in the DL subframe");
        }
        if self.capacity_bytes(Subframe::Uplink) == 0 {
            return Err("the UL overhead leaves no room for data in the UL subframe");
        }
        if self.grant_lag == 0 || self.grant_lag > MAX_TDD_GRANT_LAG {
            return Err("the grant lag is 1 to 64 frames");
        }
        Ok(())
    }
}

/// What one station's direction was granted and used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TddStats {
    /// Frames begun.
    pub frames: u64,
    /// Bytes requested.
    pub bytes_requested: u64,
    /// Bytes granted.
    pub bytes_granted: u64,
    /// Granted bytes that carried data.
    pub bytes_used: u64,
}

/// The stations of one BS: both subframes' schedulers.
#[derive(Debug)]
pub struct TddCell {
    name: String,
    config: TddConfig,
    downlink: Scheduler,
    uplink: Scheduler,
}

/// A [`TddCell`] as its stations' link directions hold it (behind a lock
/// only so that a link stays `Send`; one simulation runs on one thread).
pub type SharedTddCell = Arc<Mutex<TddCell>>;

/// The cell, locked (a panic while it was held cannot leave it half
/// changed in a way that matters more than the panic itself).
pub fn lock_cell(cell: &SharedTddCell) -> MutexGuard<'_, TddCell> {
    cell.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl TddCell {
    /// A cell named `name` whose frames are `config`.
    pub fn new(name: &str, config: TddConfig) -> Result<TddCell, &'static str> {
        config.check()?;
        Ok(TddCell {
            name: name.to_owned(),
            downlink: Scheduler::new(config.capacity_bytes(Subframe::Downlink)),
            uplink: Scheduler::new(config.capacity_bytes(Subframe::Uplink)),
            config,
        })
    }

    /// The cell's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The cell's frame.
    pub fn config(&self) -> TddConfig {
        self.config
    }

    /// Stations with a connection in `subframe`.
    pub fn members(&self, subframe: Subframe) -> usize {
        self.scheduler(subframe).members
    }

    fn scheduler(&self, subframe: Subframe) -> &Scheduler {
        match subframe {
            Subframe::Downlink => &self.downlink,
            Subframe::Uplink => &self.uplink,
        }
    }

    fn scheduler_mut(&mut self, subframe: Subframe) -> &mut Scheduler {
        match subframe {
            Subframe::Downlink => &mut self.downlink,
            Subframe::Uplink => &mut self.uplink,
        }
    }
}

/// One subframe's requests and grants.
#[derive(Debug)]
struct Scheduler {
    /// The data region's bytes a frame.
    capacity: u64,
    members: usize,
    /// Requests by the frame they are for, bytes per member.
    requests: BTreeMap<u64, Vec<u64>>,
    /// The grants of the frame being served: (bytes, offset in the data
    /// region) per member.
    allocation: Option<(u64, Vec<(u64, u64)>)>,
}

impl Scheduler {
    fn new(capacity: u64) -> Scheduler {
        Scheduler {
            capacity,
            members: 0,
            requests: BTreeMap::new(),
            allocation: None,
        }
    }

    fn join(&mut self) -> usize {
        self.members += 1;
        self.members - 1
    }

    fn request(&mut self, member: usize, frame: u64, bytes: u64) {
        let members = self.members;
        let entry = self
            .requests
            .entry(frame)
            .or_insert_with(|| vec![0; members]);
        if entry.len() < members {
            entry.resize(members, 0);
        }
        if let Some(request) = entry.get_mut(member) {
            *request = bytes;
        }
    }

    /// Member `member`'s burst in `frame`: (bytes, offset). Every request
    /// for `frame` was made at least one frame earlier.
    fn grant(&mut self, member: usize, frame: u64) -> (u64, u64) {
        if self.allocation.as_ref().is_none_or(|(f, _)| *f != frame) {
            let requests = self.requests.remove(&frame);
            // Requests for frames gone by were never served (their members
            // were idle by then): let them go.
            self.requests.retain(|&f, _| f > frame);
            let allocation = requests.map_or_else(Vec::new, |requests| {
                let shares = water_fill(&requests, self.capacity);
                // Bursts one after another, the first member rotating.
                let n = shares.len().max(1);
                let first = usize::try_from(frame % n as u64).unwrap_or(0);
                let mut placed = vec![(0, 0); shares.len()];
                let mut offset = 0;
                for k in 0..shares.len() {
                    let i = (first + k) % n;
                    placed[i] = (shares[i], offset);
                    offset += shares[i];
                }
                placed
            });
            self.allocation = Some((frame, allocation));
        }
        self.allocation
            .as_ref()
            .and_then(|(_, shares)| shares.get(member).copied())
            .unwrap_or((0, 0))
    }
}

/// Max-min fair shares of `capacity` bytes for `requests`: every request
/// met when they fit; otherwise each gets the lesser of its request and an
/// equal share of what the smaller requests left (the bytes an equal
/// division leaves over go to the first members still short).
fn water_fill(requests: &[u64], capacity: u64) -> Vec<u64> {
    let n = requests.len();
    let mut shares = vec![0u64; n];
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (requests[i], i));
    let mut left = capacity;
    for (k, &i) in order.iter().enumerate() {
        let remaining = (n - k) as u64;
        if requests[i].saturating_mul(remaining) <= left {
            shares[i] = requests[i];
            left -= requests[i];
        } else {
            let level = left / remaining;
            for &j in &order[k..] {
                shares[j] = level;
            }
            left -= level * remaining;
            for &j in &order[k..] {
                if left == 0 {
                    break;
                }
                if shares[j] < requests[j] {
                    shares[j] += 1;
                    left -= 1;
                }
            }
            break;
        }
    }
    shares
}

/// One station's direction as time passes: its frame, its grants and its
/// place in the current burst.
#[derive(Clone, Debug)]
pub(super) struct TddStation {
    pub(super) config: TddConfig,
    pub(super) subframe: Subframe,
    cell: SharedTddCell,
    member: usize,
    start: Instant,
    frame: u64,
    /// Bytes granted for the current frame (front) and asked for the next
    /// ones, up to the grant lag.
    grants: VecDeque<u64>,
    /// The current burst's offset in the data region, bytes.
    offset: u64,
    /// Bytes of the current burst used (or passed over while idle).
    pub(super) used: u64,
    pub(super) stats: TddStats,
}

impl TddStation {
    /// A station of `cell` sending in `subframe`, from `start` (the
    /// cell's time origin).
    pub(super) fn new(cell: SharedTddCell, subframe: Subframe, start: Instant) -> TddStation {
        let (config, member) = {
            let mut locked = lock_cell(&cell);
            let member = locked.scheduler_mut(subframe).join();
            (locked.config, member)
        };
        TddStation {
            grants: std::iter::repeat_n(0, config.grant_lag as usize + 1).collect(),
            config,
            subframe,
            cell,
            member,
            start,
            frame: 0,
            offset: 0,
            used: 0,
            stats: TddStats {
                frames: 1,
                ..TddStats::default()
            },
        }
    }

    /// The cell the station belongs to.
    pub(super) fn cell(&self) -> &SharedTddCell {
        &self.cell
    }

    fn frame_start(&self, frame: u64) -> Instant {
        let nanos = self
            .config
            .frame
            .as_nanos()
            .saturating_mul(u128::from(frame));
        self.start + Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// When the next frame starts.
    pub(super) fn next_boundary(&self) -> Instant {
        self.frame_start(self.frame + 1)
    }

    /// The current frame's grant, bytes.
    pub(super) fn granted(&self) -> u64 {
        self.grants.front().copied().unwrap_or(0)
    }

    /// Bytes of the current burst not yet used.
    pub(super) fn left(&self) -> u64 {
        self.granted().saturating_sub(self.used)
    }

    /// When the byte at `bytes` into the current burst goes out.
    pub(super) fn time_at(&self, bytes: u64) -> Instant {
        let (region, _) = self.config.data_region(self.subframe);
        let nanos = ((self.offset + bytes) as f64 * 1e9 / self.config.rate.bytes_per_sec()).round();
        self.frame_start(self.frame) + region + Duration::from_nanos(nanos as u64)
    }

    /// The burst bytes gone by at `at` (at most the grant).
    pub(super) fn bytes_by(&self, at: Instant) -> u64 {
        let burst = self.time_at(0);
        let elapsed = at.saturating_duration_since(burst).as_secs_f64();
        let bytes = (elapsed * self.config.rate.bytes_per_sec()).floor();
        if bytes.is_finite() && bytes > 0.0 {
            (bytes as u64).min(self.granted())
        } else {
            0
        }
    }

    /// Uses `bytes` of the current burst for data.
    pub(super) fn send(&mut self, bytes: u64) {
        self.used += bytes;
        self.stats.bytes_used += bytes;
    }

    /// Starts the next frame with `backlog` wire bytes waiting: takes its
    /// grant from the cell and makes the request for `grant_lag` frames
    /// on.
    pub(super) fn next_frame(&mut self, backlog: u64) {
        self.grants.pop_front();
        self.frame += 1;
        self.used = 0;
        self.stats.frames += 1;
        let capacity = self.config.capacity_bytes(self.subframe);
        let request = {
            let mut cell = lock_cell(&self.cell);
            let scheduler = cell.scheduler_mut(self.subframe);
            let (granted, offset) = scheduler.grant(self.member, self.frame);
            if let Some(front) = self.grants.front_mut() {
                *front = granted;
            }
            self.offset = offset;
            // What waits and the grants on their way will not carry.
            let coming: u64 = self.grants.iter().sum();
            let request = backlog.saturating_sub(coming).min(capacity);
            let lag = self.grants.len() as u64;
            scheduler.request(self.member, self.frame + lag, request);
            request
        };
        self.stats.bytes_granted += self.granted();
        self.stats.bytes_requested += request;
        self.grants.push_back(request);
    }

    /// Whether the station has no grant now or to come: frames until
    /// `now` can be skipped while nothing waits.
    pub(super) fn is_quiet(&self) -> bool {
        self.grants.iter().all(|g| *g == 0)
    }

    /// Jumps over the quiet frames before the one holding `now`.
    pub(super) fn skip_quiet_until(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.start).as_nanos();
        let frame = elapsed / self.config.frame.as_nanos().max(1);
        let frame = u64::try_from(frame).unwrap_or(u64::MAX);
        if frame > self.frame + 1 {
            // Every skipped frame requested nothing and was granted nothing.
            self.stats.frames += frame - 1 - self.frame;
            self.frame = frame - 1;
            self.used = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_000s_frames_split_one_to_three() {
        let five = TddConfig::default();
        assert_eq!(five.dl_length(), Duration::from_micros(1_250));
        assert_eq!(five.ul_length(), Duration::from_micros(3_750));
        let twenty = TddConfig {
            frame: Duration::from_millis(20),
            ..five
        };
        assert_eq!(twenty.dl_length(), Duration::from_millis(5));
        assert_eq!(twenty.ul_length(), Duration::from_millis(15));
        // Without overhead the UL carries 3/4 of 10.67 Mbit/s and the DL
        // 1/4: paper 000's 2.69 Mbit/s downlink within 1 %.
        let bare = TddConfig {
            dl_overhead: Duration::ZERO,
            ul_overhead: Duration::ZERO,
            ..twenty
        };
        let ul = bare.mean_rate(Subframe::Uplink).bits_per_sec();
        let dl = bare.mean_rate(Subframe::Downlink).bits_per_sec();
        assert!((ul - 8.0025e6).abs() < 1e3, "{ul}");
        assert!((dl / 2.69e6 - 1.0).abs() < 0.01, "{dl}");
        // The overhead costs a short frame more.
        let short = five.mean_rate(Subframe::Uplink).bits_per_sec();
        let long = twenty.mean_rate(Subframe::Uplink).bits_per_sec();
        assert!(short < 0.91 * ul && long > 0.97 * ul, "{short} {long}");
    }

    #[test]
    fn configurations_outside_the_standard_are_refused() {
        let bad = |config: TddConfig| config.check().unwrap_err();
        let base = TddConfig::default();
        assert!(bad(TddConfig {
            frame: Duration::from_millis(40),
            ..base
        })
        .contains("2.5 to 20 ms"));
        assert!(bad(TddConfig {
            dl_share: 0,
            ..base
        })
        .contains("share"));
        assert!(bad(TddConfig {
            dl_overhead: Duration::from_millis(2),
            ..base
        })
        .contains("DL overhead"));
        assert!(bad(TddConfig {
            grant_lag: 0,
            ..base
        })
        .contains("grant lag"));
        assert!(base.check().is_ok());
    }

    #[test]
    fn water_fill_meets_small_requests_and_splits_the_rest() {
        assert_eq!(water_fill(&[10, 20], 100), vec![10, 20]);
        assert_eq!(water_fill(&[10, 60, 80], 100), vec![10, 45, 45]);
        let shares = water_fill(&[50, 50, 50], 100);
        assert_eq!(shares.iter().sum::<u64>(), 100);
        assert!(shares.iter().all(|s| *s == 33 || *s == 34));
        assert_eq!(water_fill(&[], 100), Vec::<u64>::new());
    }

    #[test]
    fn bursts_follow_each_other_and_the_first_rotates() {
        let mut scheduler = Scheduler::new(1000);
        let a = scheduler.join();
        let b = scheduler.join();
        scheduler.request(a, 4, 300);
        scheduler.request(b, 4, 200);
        // Frame 4: 4 mod 2 = 0, member a first.
        assert_eq!(scheduler.grant(a, 4), (300, 0));
        assert_eq!(scheduler.grant(b, 4), (200, 300));
        scheduler.request(a, 5, 300);
        scheduler.request(b, 5, 200);
        assert_eq!(scheduler.grant(b, 5), (200, 0));
        assert_eq!(scheduler.grant(a, 5), (300, 200));
        // A frame nobody asked for grants nothing.
        assert_eq!(scheduler.grant(a, 9), (0, 0));
    }
}
