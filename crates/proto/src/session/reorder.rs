//! The receiver's reorder buffer: datagrams of one stream arrive over
//! several connections out of order; the buffer releases them in session
//! sequence order, waiting for a missing one at most `max_wait` and holding
//! at most `capacity` datagrams (then the gap is given up as lost).
//!
//! Each connection delivers its own datagrams in order (it sends them in
//! order and one path rarely reorders), so a missing datagram is known lost
//! as soon as every connection that delivered anything within `max_wait`
//! has delivered a later one: the buffer then gives the gap up at once
//! instead of waiting (`push_from` names the connection, its "lane"), or,
//! when a retransmission may still fill it (`hold_lost`), names it in
//! [`ReorderBuffer::certain_gaps`] and keeps waiting up to `max_wait`.
//! A lane silent for `lane_timeout` (a dead connection) is not waited on.

use std::collections::BTreeMap;
use std::time::Duration;

use super::SEQUENCE_MODULUS;
use crate::time::Instant;

/// Bounds of the reorder buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReorderConfig {
    /// The most datagrams held waiting for a gap. Default 65,536.
    pub capacity: usize,
    /// The most bytes held waiting for a gap (a peer cannot grow memory
    /// past it). Default 32 MiB: more than paper 000's ~6 s of frames at
    /// 20 Mbit/s.
    pub capacity_bytes: usize,
    /// The longest a gap is waited for. Default 1 s; a receiver with a
    /// playout deadline sets it from its start-up delay.
    pub max_wait: Duration,
    /// A lane (connection) that delivered nothing for this long no longer
    /// counts when deciding that a gap is lost: a dead connection does not
    /// hold the stream up. Default 1 s, twice the least silence after which
    /// a sender session gives a dead connection's datagrams to the others
    /// (so that what it resends is still waited for); a session raises it to
    /// eight RTTs.
    pub lane_timeout: Duration,
    /// Keep waiting (up to `max_wait`) for gaps every lane has passed, so
    /// that a retransmission can fill them ([`ReorderBuffer::certain_gaps`]
    /// names them). Without it such a gap is given up at once. Default off.
    pub hold_lost: bool,
    /// A gap before a datagram that was already late when it came (past
    /// its deadline) is waited for this long after it came: the player
    /// counts it late anyway, and what is written or relayed is whole if a
    /// retransmission still fills the gap. Default zero; a session that
    /// asks for retransmissions sets three RTTs.
    pub late_grace: Duration,
}

impl Default for ReorderConfig {
    fn default() -> Self {
        ReorderConfig {
            capacity: 1 << 16,
            capacity_bytes: 32 << 20,
            max_wait: Duration::from_secs(1),
            lane_timeout: Duration::from_secs(1),
            hold_lost: false,
            late_grace: Duration::ZERO,
        }
    }
}

/// What the buffer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReorderStats {
    /// Datagrams released in order.
    pub released: u64,
    /// Sequence numbers given up as lost.
    pub skipped: u64,
    /// Duplicates and datagrams older than what was released, dropped.
    pub stale: u64,
    /// The most datagrams held at once.
    pub max_held: usize,
    /// The most bytes held at once.
    pub max_held_bytes: usize,
    /// The longest a released datagram waited in the buffer.
    pub max_delay: Duration,
}

/// How many datagrams after a gap must have arrived before it counts as
/// lost, as RFC 5348 §5.1's NDUPACK: a path may reorder a little.
pub const NDUPACK: usize = 3;

/// The widest gap [`ReorderBuffer::certain_gaps`] looks through: a peer
/// that jumps the sequence far ahead cannot make it list billions.
const MAX_GAP_SCAN: u64 = 1 << 16;

#[derive(Clone, Debug)]
struct Held {
    arrived: Instant,
    deadline: Option<Instant>,
    data: Vec<u8>,
}

/// Restores the order of a stream by 31-bit session sequence numbers
/// ([`SEQUENCE_MODULUS`]).
#[derive(Clone, Debug)]
pub struct ReorderBuffer {
    config: ReorderConfig,
    /// The next sequence number to release (extended to 64 bits).
    next: Option<u64>,
    /// Held datagrams: when each arrived, its deadline, its bytes.
    held: BTreeMap<u64, Held>,
    held_bytes: usize,
    ready: std::collections::VecDeque<Vec<u8>>,
    /// Since when the oldest gap has been waited for.
    gap_since: Option<Instant>,
    /// Per lane (connection): the highest sequence number it delivered and
    /// when its last datagram came.
    lanes: BTreeMap<u16, (u64, Instant)>,
    /// When the last datagram came.
    last_push: Option<Instant>,
    /// Missing numbers not to wait for (left to FEC): passed over as lost
    /// when reached.
    forgone: std::collections::BTreeSet<u64>,
    stats: ReorderStats,
}

impl ReorderBuffer {
    /// An empty buffer.
    pub fn new(config: ReorderConfig) -> ReorderBuffer {
        ReorderBuffer {
            config,
            next: None,
            held: BTreeMap::new(),
            held_bytes: 0,
            ready: std::collections::VecDeque::new(),
            gap_since: None,
            lanes: BTreeMap::new(),
            last_push: None,
            forgone: std::collections::BTreeSet::new(),
            stats: ReorderStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> ReorderStats {
        self.stats
    }

    /// The bounds in force.
    pub fn config(&self) -> &ReorderConfig {
        &self.config
    }

    /// Changes how long a gap is waited for (a receiver follows its
    /// playout deadline and the RTT).
    pub fn set_max_wait(&mut self, max_wait: Duration) {
        self.config.max_wait = max_wait;
    }

    /// Turns holding of certainly lost gaps on or off.
    pub fn set_hold_lost(&mut self, hold_lost: bool) {
        self.config.hold_lost = hold_lost;
    }

    /// Stops waiting for missing number `seq` (extended): something else
    /// will stand in for it (FEC rebuilds it downstream). Numbers already
    /// released, held, or too far ahead are ignored.
    pub fn forgo(&mut self, now: Instant, seq: u64) {
        let Some(next) = self.next else {
            return;
        };
        if seq < next || seq >= next.saturating_add(MAX_GAP_SCAN) || self.held.contains_key(&seq) {
            return;
        }
        self.forgone.insert(seq);
        self.release(now);
    }

    /// Whether nothing has come for `settle`: a block or a burst has ended.
    pub fn quiet_for(&self, now: Instant, settle: Duration) -> bool {
        self.last_push
            .is_some_and(|at| now.saturating_duration_since(at) >= settle)
    }

    /// Changes how long a gap before a late datagram is waited for.
    pub fn set_late_grace(&mut self, late_grace: Duration) {
        self.config.late_grace = late_grace;
    }

    /// Changes when a silent lane stops counting.
    pub fn set_lane_timeout(&mut self, lane_timeout: Duration) {
        self.config.lane_timeout = lane_timeout;
    }

    /// Datagrams held waiting for a gap.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// The next sequence number to release, extended to 64 bits (`None`
    /// before the first datagram).
    pub fn next_expected(&self) -> Option<u64> {
        self.next
    }

    /// `seq` extended to 64 bits around the next expected number, without
    /// changing anything; `None` before the first datagram or if negative.
    pub fn extended(&self, seq: u32) -> Option<u64> {
        extend_around(self.next?, seq)
    }

    /// Takes a datagram with sequence number `seq` at `now` that came over
    /// connection `lane`. Returns its extended number if it was new (not a
    /// duplicate or older than what was released).
    pub fn push_from(&mut self, now: Instant, lane: u16, seq: u32, data: Vec<u8>) -> Option<u64> {
        self.push_timed(now, lane, seq, data, None)
    }

    /// [`push_from`](Self::push_from) for a datagram that is of no use after
    /// `deadline`: a gap before it is given up by then, so that waiting for
    /// a retransmission never makes it late.
    pub fn push_timed(
        &mut self,
        now: Instant,
        lane: u16,
        seq: u32,
        data: Vec<u8>,
        deadline: Option<Instant>,
    ) -> Option<u64> {
        let Some(extended) = self.extend(seq) else {
            self.stats.stale += 1;
            return None;
        };
        let entry = self.lanes.entry(lane).or_insert((extended, now));
        *entry = (entry.0.max(extended), now);
        self.last_push = Some(now);
        let fresh = self.push_extended(now, extended, data, deadline);
        if !self.config.hold_lost {
            // Gaps every recently active lane has passed are lost.
            while let (Some(next), Some(&first)) = (self.next, self.held.keys().next()) {
                if first == next || !self.passed_by_every_lane(now, next) {
                    break;
                }
                self.skip_gap(now);
            }
        }
        fresh.then_some(extended)
    }

    /// Takes a datagram with sequence number `seq` at `now` (from a single
    /// lane).
    pub fn push(&mut self, now: Instant, seq: u32, data: Vec<u8>) {
        let Some(extended) = self.extend(seq) else {
            self.stats.stale += 1;
            return;
        };
        self.push_extended(now, extended, data, None);
    }

    /// Whether every lane that delivered within `lane_timeout` has
    /// delivered a number above `seq`.
    fn passed_by_every_lane(&self, now: Instant, seq: u64) -> bool {
        let mut active = self
            .lanes
            .values()
            .filter(|(_, last)| now.saturating_duration_since(*last) < self.config.lane_timeout)
            .peekable();
        active.peek().is_some() && active.all(|(highest, _)| *highest > seq)
    }

    /// The missing sequence numbers (extended) that are certainly lost at
    /// `now`, oldest first, at most `limit`: every recently active lane has
    /// passed them (each connection delivers in order) and at least
    /// [`NDUPACK`] later datagrams have arrived, or nothing has arrived for
    /// `settle` (a loss at the end of a burst or of the stream has fewer
    /// than NDUPACK datagrams after it).
    pub fn certain_gaps(&self, now: Instant, limit: usize, settle: Duration) -> Vec<u64> {
        let Some(next) = self.next else {
            return Vec::new();
        };
        let lanes_passed = self
            .lanes
            .values()
            .filter(|(_, last)| now.saturating_duration_since(*last) < self.config.lane_timeout)
            .map(|(highest, _)| *highest)
            .min();
        let Some(lanes_passed) = lanes_passed else {
            return Vec::new();
        };
        // The NDUPACK-th highest held number: gaps below it have at least
        // NDUPACK datagrams after them.
        let settled = self
            .last_push
            .is_some_and(|at| now.saturating_duration_since(at) >= settle);
        let bound = if settled {
            self.held.keys().next_back()
        } else {
            self.held.keys().rev().nth(NDUPACK - 1)
        };
        let Some(&dupack_bound) = bound else {
            return Vec::new();
        };
        let bound = lanes_passed
            .min(dupack_bound)
            .min(next.saturating_add(MAX_GAP_SCAN));
        if bound <= next {
            return Vec::new();
        }
        let mut gaps = Vec::new();
        let mut seq = next;
        for &held in self.held.range(next..bound).map(|(k, _)| k) {
            while seq < held && gaps.len() < limit {
                if !self.forgone.contains(&seq) {
                    gaps.push(seq);
                }
                seq += 1;
            }
            if gaps.len() >= limit {
                return gaps;
            }
            seq = held + 1;
        }
        while seq < bound && gaps.len() < limit {
            if !self.forgone.contains(&seq) {
                gaps.push(seq);
            }
            seq += 1;
        }
        gaps
    }

    /// `seq` extended to 64 bits around the next expected number; `None`
    /// if that would be negative.
    fn extend(&mut self, seq: u32) -> Option<u64> {
        let next = *self.next.get_or_insert(u64::from(seq) % SEQUENCE_MODULUS);
        extend_around(next, seq)
    }

    /// Holds (and releases what it can); false for a duplicate or an old
    /// number.
    fn push_extended(
        &mut self,
        now: Instant,
        extended: u64,
        data: Vec<u8>,
        deadline: Option<Instant>,
    ) -> bool {
        let next = self.next.unwrap_or(extended);
        if extended < next || self.held.contains_key(&extended) {
            self.stats.stale += 1;
            return false;
        }
        self.held_bytes += data.len();
        self.held.insert(
            extended,
            Held {
                arrived: now,
                deadline,
                data,
            },
        );
        if let Some(since) = &mut self.gap_since {
            *since = (*since).min(now);
        }
        self.stats.max_held = self.stats.max_held.max(self.held.len());
        self.stats.max_held_bytes = self.stats.max_held_bytes.max(self.held_bytes);
        self.release(now);
        while self.held.len() > self.config.capacity
            || (self.held_bytes > self.config.capacity_bytes && !self.held.is_empty())
        {
            self.skip_gap(now);
        }
        true
    }

    /// Gives up gaps waited for longer than `max_wait`, or up to the
    /// deadline of the datagram after them.
    pub fn handle_timeout(&mut self, now: Instant) {
        while self.poll_timeout().is_some_and(|at| at <= now) {
            self.skip_gap(now);
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must run: when the
    /// oldest gap has been waited for `max_wait`, or when the first held
    /// datagram's deadline comes, whichever is first.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let waited = self.gap_since.map(|since| since + self.config.max_wait)?;
        // A datagram that came in time holds the gap to its deadline; one
        // that came late, `late_grace` after it came.
        let deadline = self.held.values().next().and_then(|held| {
            let deadline = held.deadline?;
            Some(if held.arrived > deadline {
                held.arrived + self.config.late_grace
            } else {
                deadline
            })
        });
        Some(deadline.map_or(waited, |deadline| deadline.min(waited)))
    }

    /// Gives every gap up and releases all that is held: the stream has
    /// ended and nothing more can come.
    pub fn flush(&mut self, now: Instant) {
        while !self.held.is_empty() {
            self.skip_gap(now);
        }
    }

    /// The next datagram in order.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        self.ready.pop_front()
    }

    fn release(&mut self, now: Instant) {
        let Some(mut next) = self.next else {
            return;
        };
        loop {
            if let Some(held) = self.held.remove(&next) {
                self.stats.max_delay = self
                    .stats
                    .max_delay
                    .max(now.saturating_duration_since(held.arrived));
                self.stats.released += 1;
                self.held_bytes -= held.data.len();
                self.ready.push_back(held.data);
            } else if self.forgone.remove(&next) {
                self.stats.skipped += 1;
            } else {
                break;
            }
            next += 1;
        }
        // Forgone numbers below what was released are moot.
        while self.forgone.first().is_some_and(|first| *first < next) {
            self.forgone.pop_first();
        }
        self.next = Some(next);
        // The gap has been waited for since the oldest held datagram arrived,
        // so that no datagram waits longer than `max_wait` in all.
        self.gap_since = match self.gap_since {
            _ if self.held.is_empty() => None,
            Some(since) => Some(since),
            None => self.held.values().map(|held| held.arrived).min(),
        };
    }

    /// Declares the first gap lost and releases what follows it.
    fn skip_gap(&mut self, now: Instant) {
        let (Some(next), Some(&first)) = (self.next, self.held.keys().next()) else {
            self.gap_since = None;
            return;
        };
        self.stats.skipped += first.saturating_sub(next);
        self.next = Some(first);
        self.gap_since = None;
        self.release(now);
        // Recompute from what is still held (a rare, bounded scan).
        self.gap_since = self.held.values().map(|held| held.arrived).min();
    }
}

/// `seq` (modulo [`SEQUENCE_MODULUS`]) extended to 64 bits as the number
/// nearest `next`; `None` if that would be negative.
fn extend_around(next: u64, seq: u32) -> Option<u64> {
    let modulus = SEQUENCE_MODULUS as i64;
    let mut delta = (i64::from(seq) - next as i64).rem_euclid(modulus);
    if delta >= modulus / 2 {
        delta -= modulus;
    }
    u64::try_from(next as i64 + delta).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn releases_in_order_and_measures_the_wait() {
        let mut buffer = ReorderBuffer::new(ReorderConfig::default());
        buffer.push(at(0), 10, vec![10]);
        buffer.push(at(5), 12, vec![12]);
        buffer.push(at(7), 13, vec![13]);
        assert_eq!(buffer.pop(), Some(vec![10]));
        assert_eq!(buffer.pop(), None);
        assert_eq!(buffer.held(), 2);
        buffer.push(at(30), 11, vec![11]);
        let order: Vec<Vec<u8>> = std::iter::from_fn(|| buffer.pop()).collect();
        assert_eq!(order, [vec![11], vec![12], vec![13]]);
        assert_eq!(buffer.stats().max_held, 3);
        assert_eq!(buffer.stats().max_delay, Duration::from_millis(25));
        // Duplicates and old numbers are dropped.
        buffer.push(at(31), 12, vec![12]);
        assert_eq!(buffer.stats().stale, 1);
    }

    #[test]
    fn a_gap_is_given_up_after_max_wait_or_when_full() {
        let config = ReorderConfig {
            capacity: 3,
            max_wait: Duration::from_millis(100),
            ..ReorderConfig::default()
        };
        let mut buffer = ReorderBuffer::new(config);
        buffer.push(at(0), 0, vec![0]);
        buffer.push(at(10), 2, vec![2]);
        assert_eq!(buffer.poll_timeout(), Some(at(110)));
        buffer.handle_timeout(at(109));
        assert_eq!(buffer.held(), 1);
        buffer.handle_timeout(at(110));
        assert_eq!(buffer.held(), 0);
        assert_eq!(buffer.stats().skipped, 1);
        // Full: 5 to 8 wait for 3 and 4; the fourth held datagram makes it
        // give both up.
        for seq in [5, 6, 7, 8] {
            buffer.push(at(200), seq, vec![seq as u8]);
        }
        assert_eq!(buffer.held(), 0);
        assert_eq!(buffer.stats().skipped, 3);
    }

    proptest::proptest! {
        /// Under any arrival order, duplicates and losses: the buffer never
        /// holds more than its capacity, releases in increasing order, and
        /// (its timeout honoured) nothing waits longer than `max_wait`.
        #[test]
        fn bounded_ordered_and_timely(
            arrivals in proptest::collection::vec((0u32..300, 0u64..50), 1..400),
            capacity in 1usize..64,
        ) {
            let config = ReorderConfig { capacity, max_wait: Duration::from_millis(100), ..ReorderConfig::default() };
            let mut buffer = ReorderBuffer::new(config);
            let mut now = at(0);
            let mut released: Vec<u32> = Vec::new();
            for (seq, gap_ms) in arrivals {
                let next = now + Duration::from_millis(gap_ms);
                while let Some(deadline) = buffer.poll_timeout().filter(|d| *d <= next) {
                    buffer.handle_timeout(deadline);
                }
                now = next;
                buffer.handle_timeout(now);
                buffer.push(now, seq, seq.to_be_bytes().to_vec());
                proptest::prop_assert!(buffer.held() <= capacity);
                while let Some(data) = buffer.pop() {
                    released.push(u32::from_be_bytes([data[0], data[1], data[2], data[3]]));
                }
            }
            proptest::prop_assert!(released.windows(2).all(|w| w[0] < w[1]));
            proptest::prop_assert!(buffer.stats().max_delay <= config.max_wait);
        }

        /// Whatever lanes deliver, the gaps named are missing, not yet
        /// released, in order and bounded, and nothing panics.
        #[test]
        fn certain_gaps_are_missing_numbers(
            arrivals in proptest::collection::vec((0u16..4, proptest::num::u32::ANY, 0u64..300), 1..200),
            hold_lost in proptest::bool::ANY,
            limit in 0usize..100,
        ) {
            let config = ReorderConfig { hold_lost, ..ReorderConfig::default() };
            let mut buffer = ReorderBuffer::new(config);
            let mut now = at(0);
            for (lane, seq, gap_ms) in arrivals {
                now += Duration::from_millis(gap_ms);
                buffer.handle_timeout(now);
                buffer.push_from(now, lane, seq % 5000, vec![0; 8]);
                while buffer.pop().is_some() {}
                let gaps = buffer.certain_gaps(now, limit, Duration::from_millis(20));
                proptest::prop_assert!(gaps.len() <= limit);
                proptest::prop_assert!(gaps.windows(2).all(|w| w[0] < w[1]));
                let next = buffer.next_expected().unwrap_or(0);
                proptest::prop_assert!(gaps.iter().all(|g| *g >= next && !buffer.held.contains_key(g)));
            }
        }
    }

    #[test]
    fn a_gap_every_lane_has_passed_is_lost_at_once() {
        let mut buffer = ReorderBuffer::new(ReorderConfig::default());
        buffer.push_from(at(0), 1, 0, vec![0]);
        buffer.push_from(at(1), 2, 1, vec![1]);
        // 2 went over lane 1 and was lost; lane 2 delivers 3, lane 1 then 4.
        buffer.push_from(at(2), 2, 3, vec![3]);
        assert_eq!(buffer.held(), 1, "lane 1 may still deliver 2");
        buffer.push_from(at(3), 1, 4, vec![4]);
        assert_eq!(buffer.held(), 0, "both lanes are past 2: it is lost");
        assert_eq!(buffer.stats().skipped, 1);
        let order: Vec<Vec<u8>> = std::iter::from_fn(|| buffer.pop()).collect();
        assert_eq!(order, [vec![0], vec![1], vec![3], vec![4]]);
    }

    #[test]
    fn held_gaps_are_named_once_certain_and_filled_by_a_retransmission() {
        let config = ReorderConfig {
            hold_lost: true,
            ..ReorderConfig::default()
        };
        let mut buffer = ReorderBuffer::new(config);
        buffer.push_from(at(0), 1, 0, vec![0]);
        // 1 and 2 lost; 3 and 4 arrive: fewer than NDUPACK after the gap.
        buffer.push_from(at(1), 1, 3, vec![3]);
        buffer.push_from(at(2), 1, 4, vec![4]);
        assert!(buffer
            .certain_gaps(at(2), 10, Duration::from_secs(1))
            .is_empty());
        // Unless nothing more comes for the settling time: a loss at the end.
        assert_eq!(
            buffer.certain_gaps(at(52), 10, Duration::from_millis(50)),
            [1, 2]
        );
        buffer.push_from(at(3), 1, 5, vec![5]);
        assert_eq!(
            buffer.certain_gaps(at(3), 10, Duration::from_secs(1)),
            [1, 2]
        );
        assert_eq!(buffer.certain_gaps(at(3), 1, Duration::from_secs(1)), [1]);
        // Still held, not given up: the retransmission of 1 and 2 fills it.
        assert_eq!(buffer.held(), 3);
        assert_eq!(buffer.push_from(at(50), 1, 2, vec![2]), Some(2));
        assert_eq!(buffer.push_from(at(51), 1, 1, vec![1]), Some(1));
        assert_eq!(buffer.push_from(at(52), 1, 1, vec![1]), None, "duplicate");
        let order: Vec<Vec<u8>> = std::iter::from_fn(|| buffer.pop()).collect();
        assert_eq!(
            order,
            [vec![0], vec![1], vec![2], vec![3], vec![4], vec![5]]
        );
        assert_eq!(buffer.stats().skipped, 0);
    }

    #[test]
    fn a_silent_lane_is_not_waited_on() {
        let config = ReorderConfig {
            lane_timeout: Duration::from_millis(100),
            ..ReorderConfig::default()
        };
        let mut buffer = ReorderBuffer::new(config);
        buffer.push_from(at(0), 1, 0, vec![0]);
        buffer.push_from(at(0), 2, 1, vec![1]);
        // Lane 2 dies with 3 in flight; lane 1 goes on.
        buffer.push_from(at(10), 1, 2, vec![2]);
        buffer.push_from(at(20), 1, 4, vec![4]);
        assert_eq!(buffer.held(), 1, "lane 2 may still deliver 3");
        buffer.push_from(at(150), 1, 5, vec![5]);
        assert_eq!(buffer.held(), 0, "lane 2 has been silent for 150 ms");
        assert_eq!(buffer.stats().skipped, 1);
    }

    #[test]
    fn the_byte_bound_gives_gaps_up() {
        let config = ReorderConfig {
            capacity_bytes: 250,
            ..ReorderConfig::default()
        };
        let mut buffer = ReorderBuffer::new(config);
        buffer.push(at(0), 0, vec![0; 100]);
        buffer.push(at(1), 2, vec![0; 100]);
        buffer.push(at(2), 3, vec![0; 100]);
        assert_eq!(buffer.held(), 2);
        buffer.push(at(3), 5, vec![0; 100]);
        assert!(buffer.stats().max_held_bytes <= 300);
        assert_eq!(
            buffer.stats().skipped,
            1,
            "1 given up to stay under 250 bytes"
        );
    }

    #[test]
    fn a_gap_is_given_up_by_the_deadline_of_what_follows_it() {
        let config = ReorderConfig {
            hold_lost: true,
            ..ReorderConfig::default()
        };
        let mut buffer = ReorderBuffer::new(config);
        buffer.push_timed(at(0), 1, 0, vec![0], Some(at(500)));
        buffer.push_timed(at(10), 1, 2, vec![2], Some(at(300)));
        // Waiting for 1 ends when 2 is due, well before max_wait (1 s).
        assert_eq!(buffer.poll_timeout(), Some(at(300)));
        buffer.handle_timeout(at(299));
        assert_eq!(buffer.held(), 1);
        buffer.handle_timeout(at(300));
        assert_eq!(buffer.held(), 0);
        let order: Vec<Vec<u8>> = std::iter::from_fn(|| buffer.pop()).collect();
        assert_eq!(order, [vec![0], vec![2]]);
    }

    #[test]
    fn a_gap_before_a_late_datagram_waits_the_grace() {
        let config = ReorderConfig {
            hold_lost: true,
            late_grace: Duration::from_millis(300),
            ..ReorderConfig::default()
        };
        let mut buffer = ReorderBuffer::new(config);
        buffer.push_timed(at(0), 1, 0, vec![0], Some(at(500)));
        // 2 comes at 1 s, already past its deadline (0.8 s).
        buffer.push_timed(at(1000), 1, 2, vec![2], Some(at(800)));
        assert_eq!(buffer.poll_timeout(), Some(at(1300)));
        buffer.push_timed(at(1200), 1, 1, vec![1], Some(at(700)));
        assert_eq!(buffer.stats().skipped, 0);
        assert_eq!(buffer.held(), 0);
    }

    /// The grace is for a datagram that came late: one that came in time,
    /// however shortly before its deadline, holds the gap to its deadline
    /// and not a moment longer (a player would otherwise run dry waiting
    /// for what arrived in time; issue 19).
    #[test]
    fn a_gap_before_a_datagram_in_time_waits_only_to_its_deadline() {
        let config = ReorderConfig {
            hold_lost: true,
            late_grace: Duration::from_millis(900),
            ..ReorderConfig::default()
        };
        let mut buffer = ReorderBuffer::new(config);
        buffer.push_timed(at(0), 1, 0, vec![0], Some(at(500)));
        // 2 comes at 1 s, 200 ms before its deadline, far less than the
        // grace.
        buffer.push_timed(at(1000), 1, 2, vec![2], Some(at(1200)));
        assert_eq!(buffer.poll_timeout(), Some(at(1200)));
        buffer.handle_timeout(at(1200));
        assert_eq!(buffer.stats().skipped, 1);
        assert_eq!(buffer.held(), 0);
    }

    #[test]
    fn a_flush_releases_everything_held() {
        let config = ReorderConfig {
            hold_lost: true,
            ..ReorderConfig::default()
        };
        let mut buffer = ReorderBuffer::new(config);
        for seq in [0, 2, 3, 5] {
            buffer.push_from(at(0), 1, seq, vec![seq as u8]);
        }
        assert_eq!(buffer.held(), 3);
        buffer.flush(at(1));
        let order: Vec<Vec<u8>> = std::iter::from_fn(|| buffer.pop()).collect();
        assert_eq!(order, [vec![0], vec![2], vec![3], vec![5]]);
        assert_eq!(buffer.stats().skipped, 2);
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut buffer = ReorderBuffer::new(ReorderConfig::default());
        buffer.push(at(0), (SEQUENCE_MODULUS - 1) as u32, vec![1]);
        buffer.push(at(1), 0, vec![2]);
        assert_eq!(buffer.pop(), Some(vec![1]));
        assert_eq!(buffer.pop(), Some(vec![2]));
    }
}
