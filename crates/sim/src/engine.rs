//! The event queue at the heart of the simulator.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! instant run in the order they were scheduled, so a run depends on nothing
//! but the scenario and its seed. Time jumps from one event to the next.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fairstream_proto::time::Instant;

/// A scheduled event with its ordering key.
#[derive(Debug)]
struct Scheduled<E> {
    at: Instant,
    sequence: u64,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.sequence) == (other.at, other.sequence)
    }
}

impl<E> Eq for Scheduled<E> {}

impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Scheduled<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.sequence).cmp(&(other.at, other.sequence))
    }
}

/// Events ordered by (time, insertion sequence), and the current time.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Scheduled<E>>>,
    next_sequence: u64,
    now: Instant,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> EventQueue<E> {
        EventQueue {
            heap: BinaryHeap::new(),
            next_sequence: 0,
            now: Instant::ZERO,
            processed: 0,
        }
    }

    /// The time of the event being processed (or last processed).
    pub fn now(&self) -> Instant {
        self.now
    }

    /// How many events have been taken from the queue.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// How many events are waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is waiting.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedules `event` at `at`; a time in the past is taken as now (the
    /// simulator never goes back in time).
    pub fn schedule(&mut self, at: Instant, event: E) {
        let at = at.max(self.now);
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.heap.push(Reverse(Scheduled {
            at,
            sequence,
            event,
        }));
    }

    /// The time of the next event, if any.
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(s)| s.at)
    }

    /// Takes the next event if it is due no later than `until`, advancing the
    /// clock to its time.
    pub fn pop_until(&mut self, until: Instant) -> Option<(Instant, E)> {
        if self.peek_time()? > until {
            return None;
        }
        let Reverse(scheduled) = self.heap.pop()?;
        self.now = scheduled.at;
        self.processed += 1;
        Some((scheduled.at, scheduled.event))
    }

    /// Moves the clock to `at` (when the run ends between events).
    pub fn advance_to(&mut self, at: Instant) {
        self.now = self.now.max(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn same_time_events_keep_their_scheduling_order() {
        let mut q = EventQueue::new();
        let t = Instant::from_millis(5);
        q.schedule(t, "b");
        q.schedule(Instant::from_millis(1), "a");
        q.schedule(t, "c");
        q.schedule(t, "d");
        let order: Vec<&str> =
            std::iter::from_fn(|| q.pop_until(Instant::MAX).map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["a", "b", "c", "d"]);
        assert_eq!(q.now(), t);
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn never_goes_back_in_time_and_stops_at_until() {
        let mut q = EventQueue::new();
        q.schedule(Instant::from_millis(10), 1);
        assert_eq!(q.pop_until(Instant::from_millis(9)), None);
        assert_eq!(
            q.pop_until(Instant::from_millis(10)),
            Some((Instant::from_millis(10), 1))
        );
        q.schedule(Instant::from_millis(3), 2); // in the past: runs now
        assert_eq!(
            q.pop_until(Instant::MAX),
            Some((Instant::from_millis(10), 2))
        );
    }

    proptest! {
        #[test]
        fn pops_are_sorted_by_time_then_insertion(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.schedule(Instant::from_millis(*t), i);
            }
            let mut last: Option<(Instant, usize)> = None;
            while let Some((at, i)) = q.pop_until(Instant::MAX) {
                if let Some((prev_at, prev_i)) = last {
                    prop_assert!(at > prev_at || (at == prev_at && i > prev_i));
                }
                last = Some((at, i));
            }
            prop_assert_eq!(q.processed() as usize, times.len());
        }
    }
}
