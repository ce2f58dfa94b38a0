//! The receiver's reorder buffer: datagrams of one stream arrive over
//! several connections out of order; the buffer releases them in session
//! sequence order, waiting for a missing one at most `max_wait` and holding
//! at most `capacity` datagrams (then the gap is given up as lost).
//!
//! Each connection delivers its own datagrams in order (it sends them in
//! order and one path rarely reorders), so a missing datagram is known lost
//! as soon as every connection that delivered anything within `max_wait`
//! has delivered a later one: the buffer then gives the gap up at once
//! instead of waiting (`push_from` names the connection, its "lane").

use std::collections::BTreeMap;
use std::time::Duration;

use crate::time::Instant;

/// Bounds of the reorder buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReorderConfig {
    /// The most datagrams held waiting for a gap. Default 4096.
    pub capacity: usize,
    /// The longest a gap is waited for. Default 1 s (a choice: longer than
    /// the RTT differences between connections of one path).
    pub max_wait: Duration,
}

impl Default for ReorderConfig {
    fn default() -> Self {
        ReorderConfig {
            capacity: 4096,
            max_wait: Duration::from_secs(1),
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
    /// The longest a released datagram waited in the buffer.
    pub max_delay: Duration,
}

/// Restores the order of a stream by 32-bit session sequence numbers.
#[derive(Clone, Debug)]
pub struct ReorderBuffer {
    config: ReorderConfig,
    /// The next sequence number to release (extended to 64 bits).
    next: Option<u64>,
    held: BTreeMap<u64, (Instant, Vec<u8>)>,
    ready: std::collections::VecDeque<Vec<u8>>,
    /// Since when the oldest gap has been waited for.
    gap_since: Option<Instant>,
    /// Per lane (connection): the highest sequence number it delivered and
    /// when its last datagram came.
    lanes: BTreeMap<u16, (u64, Instant)>,
    stats: ReorderStats,
}

impl ReorderBuffer {
    /// An empty buffer.
    pub fn new(config: ReorderConfig) -> ReorderBuffer {
        ReorderBuffer {
            config,
            next: None,
            held: BTreeMap::new(),
            ready: std::collections::VecDeque::new(),
            gap_since: None,
            lanes: BTreeMap::new(),
            stats: ReorderStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> ReorderStats {
        self.stats
    }

    /// Datagrams held waiting for a gap.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Takes a datagram with 32-bit sequence number `seq` at `now` that
    /// came over connection `lane`.
    pub fn push_from(&mut self, now: Instant, lane: u16, seq: u32, data: Vec<u8>) {
        let Some(extended) = self.extend(seq) else {
            self.stats.stale += 1;
            return;
        };
        let entry = self.lanes.entry(lane).or_insert((extended, now));
        *entry = (entry.0.max(extended), now);
        self.push_extended(now, extended, data);
        // Gaps every recently active lane has passed are lost.
        while let (Some(next), Some(&first)) = (self.next, self.held.keys().next()) {
            if first == next {
                break;
            }
            let passed = self
                .lanes
                .values()
                .filter(|(_, last)| now.saturating_duration_since(*last) < self.config.max_wait)
                .all(|(highest, _)| *highest > next);
            if !passed {
                break;
            }
            self.skip_gap(now);
        }
    }

    /// Takes a datagram with 32-bit sequence number `seq` at `now` (from a
    /// single lane).
    pub fn push(&mut self, now: Instant, seq: u32, data: Vec<u8>) {
        let Some(extended) = self.extend(seq) else {
            self.stats.stale += 1;
            return;
        };
        self.push_extended(now, extended, data);
    }

    /// `seq` extended to 64 bits around the next expected number; `None`
    /// if that would be negative.
    fn extend(&mut self, seq: u32) -> Option<u64> {
        let next = *self.next.get_or_insert(u64::from(seq));
        let delta = i64::from(seq.wrapping_sub(next as u32) as i32);
        u64::try_from(next as i64 + delta).ok()
    }

    fn push_extended(&mut self, now: Instant, extended: u64, data: Vec<u8>) {
        let next = self.next.unwrap_or(extended);
        if extended < next || self.held.contains_key(&extended) {
            self.stats.stale += 1;
            return;
        }
        self.held.insert(extended, (now, data));
        if let Some(since) = &mut self.gap_since {
            *since = (*since).min(now);
        }
        self.stats.max_held = self.stats.max_held.max(self.held.len());
        self.release(now);
        if self.held.len() > self.config.capacity {
            self.skip_gap(now);
        }
    }

    /// Gives up gaps waited for longer than `max_wait`.
    pub fn handle_timeout(&mut self, now: Instant) {
        while self
            .gap_since
            .is_some_and(|since| now.saturating_duration_since(since) >= self.config.max_wait)
        {
            self.skip_gap(now);
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.gap_since.map(|since| since + self.config.max_wait)
    }

    /// The next datagram in order.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        self.ready.pop_front()
    }

    fn release(&mut self, now: Instant) {
        let Some(mut next) = self.next else {
            return;
        };
        while let Some((arrived, data)) = self.held.remove(&next) {
            self.stats.max_delay = self
                .stats
                .max_delay
                .max(now.saturating_duration_since(arrived));
            self.stats.released += 1;
            self.ready.push_back(data);
            next += 1;
        }
        self.next = Some(next);
        // The gap has been waited for since the oldest held datagram arrived,
        // so that no datagram waits longer than `max_wait` in all.
        self.gap_since = match self.gap_since {
            _ if self.held.is_empty() => None,
            Some(since) => Some(since),
            None => self.held.values().map(|(at, _)| *at).min(),
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
        self.gap_since = self.held.values().map(|(at, _)| *at).min();
    }
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
            let config = ReorderConfig { capacity, max_wait: Duration::from_millis(100) };
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
    fn sequence_numbers_wrap() {
        let mut buffer = ReorderBuffer::new(ReorderConfig::default());
        buffer.push(at(0), u32::MAX, vec![1]);
        buffer.push(at(1), 0, vec![2]);
        assert_eq!(buffer.pop(), Some(vec![1]));
        assert_eq!(buffer.pop(), Some(vec![2]));
    }
}
