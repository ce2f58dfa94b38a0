//! The event queue at the heart of the simulator.
//!
//! Events are ordered by (time, insertion sequence): two events at the same
//! instant run in the order they were scheduled, so a run depends on nothing
//! but the scenario and its seed. Time jumps from one event to the next.
//!
//! The queue is a timing wheel (issue 18: popping `std`'s binary heap was
//! 22 % of the instructions of 100 NewReno flows). Time is cut into slots of
//! [`SLOT_NANOS`]; the events of the next [`WHEEL_SLOTS`] slots wait unsorted
//! in the wheel, one list a slot (linked through one pool of nodes, so that
//! a slot costs no allocation of its own), and a bitmap says which lists are
//! not empty. When the clock reaches a slot, its list is copied into the
//! front and sorted, and events are taken from there in order; an event
//! scheduled into the slot being taken (or an earlier one) goes straight into
//! the front at its place. Events further ahead than the wheel reaches
//! (retransmission timers, flows' starts) wait in a binary heap and move into
//! the wheel as the clock comes near. The order is that of the (time,
//! sequence) key whatever the structure, so the wheel changes no run.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use fairstream_proto::time::Instant;

/// A slot of the wheel is 2^`SLOT_SHIFT` nanoseconds wide.
const SLOT_SHIFT: u32 = 13;

/// The width of a slot of the wheel, about 8 µs: a 1500-byte packet's
/// serialisation at 1.5 Gbit/s, a tenth of it at 100 Mbit/s, so that a
/// slot holds a few events of a busy run.
pub const SLOT_NANOS: u64 = 1 << SLOT_SHIFT;

/// How many slots the wheel holds: 4096 slots of 8 µs, 33.5 ms ahead,
/// which covers a packet's propagation over the links of most scenarios.
pub const WHEEL_SLOTS: usize = 4096;

/// Words of the bitmap of non-empty slots.
const WORDS: usize = WHEEL_SLOTS / 64;

/// A scheduled event with its ordering key.
#[derive(Clone, Copy, Debug)]
struct Scheduled<E> {
    /// `(at in nanoseconds) << 64 | sequence`: the order is the key's.
    key: u128,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Scheduled<E> {}

impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Scheduled<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// The end of a list of the wheel.
const NIL: usize = usize::MAX;

/// An event in a list of the wheel.
#[derive(Clone, Copy, Debug)]
struct Node<E> {
    entry: Scheduled<E>,
    /// The next node of the list (or of the free nodes), `NIL` at the end.
    next: usize,
}

/// The key of an event scheduled at `at` with insertion sequence `sequence`.
fn key(at: Instant, sequence: u64) -> u128 {
    (u128::from(at.as_nanos()) << 64) | u128::from(sequence)
}

/// The time a key was made from.
fn key_time(key: u128) -> Instant {
    // The upper 64 bits are the time: the shift leaves nothing to truncate.
    Instant::from_nanos((key >> 64) as u64)
}

/// The slot a key's time falls in.
fn key_slot(key: u128) -> u64 {
    key_time(key).as_nanos() >> SLOT_SHIFT
}

/// The wheel's list for `slot`.
fn wheel_index(slot: u64) -> usize {
    // The remainder is below WHEEL_SLOTS: nothing to truncate.
    (slot % WHEEL_SLOTS as u64) as usize
}

/// Events ordered by (time, insertion sequence), and the current time.
///
/// Where an event waits: the front holds every event of slot `current` and
/// earlier, sorted; the wheel those of slots `current + 1` to `current +
/// WHEEL_SLOTS - 1`, at `slot % WHEEL_SLOTS`; the heap the later ones.
/// Every event of the front therefore comes before every event of the
/// wheel, and those before every event of the heap.
#[derive(Debug)]
pub struct EventQueue<E> {
    /// Sorted by descending key: the next event is the last.
    front: Vec<Scheduled<E>>,
    current: u64,
    /// The nodes of the wheel's lists, and the free ones.
    nodes: Vec<Node<E>>,
    /// The first free node.
    free: usize,
    /// Per slot of the wheel, the first and last node of its list.
    heads: Vec<usize>,
    tails: Vec<usize>,
    /// Bit `i % 64` of word `i / 64`: list `i` of the wheel is not empty.
    occupied: [u64; WORDS],
    in_wheel: usize,
    far: BinaryHeap<Reverse<Scheduled<E>>>,
    next_sequence: u64,
    now: Instant,
    processed: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> EventQueue<E> {
        EventQueue {
            front: Vec::new(),
            current: 0,
            nodes: Vec::new(),
            free: NIL,
            heads: vec![NIL; WHEEL_SLOTS],
            tails: vec![NIL; WHEEL_SLOTS],
            occupied: [0; WORDS],
            in_wheel: 0,
            far: BinaryHeap::new(),
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
        self.front.len() + self.in_wheel + self.far.len()
    }

    /// Whether no event is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `event` at `at`; a time in the past is taken as now (the
    /// simulator never goes back in time).
    pub fn schedule(&mut self, at: Instant, event: E) {
        let at = at.max(self.now);
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.place(Scheduled {
            key: key(at, sequence),
            event,
        });
    }

    /// The time of the next event, if any.
    pub fn peek_time(&self) -> Option<Instant> {
        if let Some(first) = self.front.last() {
            return Some(key_time(first.key));
        }
        if let Some(slot) = self.next_occupied() {
            let mut node = self.heads.get(wheel_index(slot)).copied().unwrap_or(NIL);
            let mut first = u128::MAX;
            while let Some(n) = self.nodes.get(node) {
                first = first.min(n.entry.key);
                node = n.next;
            }
            return Some(key_time(first));
        }
        self.far.peek().map(|Reverse(s)| key_time(s.key))
    }

    /// Takes the next event if it is due no later than `until`, advancing the
    /// clock to its time. Inline, with the refill of the front out of
    /// line: most pops find the front holding events already.
    #[inline]
    pub fn pop_until(&mut self, until: Instant) -> Option<(Instant, E)> {
        if self.front.is_empty() && !self.fill_front() {
            return None;
        }
        let at = key_time(self.front.last()?.key);
        if at > until {
            return None;
        }
        let next = self.front.pop()?;
        self.now = at;
        self.processed += 1;
        Some((at, next.event))
    }

    /// Moves the clock to `at` (when the run ends between events).
    pub fn advance_to(&mut self, at: Instant) {
        self.now = self.now.max(at);
    }

    /// Puts `entry` where its slot says.
    fn place(&mut self, entry: Scheduled<E>) {
        let slot = key_slot(entry.key);
        if slot <= self.current {
            // Most come after all the front holds, and go to its start:
            // the front holds few events, the shift is short.
            let position = self.front.partition_point(|s| s.key > entry.key);
            self.front.insert(position, entry);
        } else if slot - self.current < WHEEL_SLOTS as u64 {
            let index = wheel_index(slot);
            let node = self.new_node(entry);
            let (Some(head), Some(tail)) = (self.heads.get_mut(index), self.tails.get_mut(index))
            else {
                return;
            };
            match self.nodes.get_mut(*tail) {
                Some(last) => last.next = node,
                None => *head = node,
            }
            *tail = node;
            self.in_wheel += 1;
            if let Some(word) = self.occupied.get_mut(index / 64) {
                *word |= 1 << (index % 64);
            }
        } else {
            self.far.push(Reverse(entry));
        }
    }

    /// A node holding `entry`, free or new. The links are `usize`, so the
    /// pool never runs out of indices before memory; with the simulator's
    /// 16-byte events a node is 48 bytes either way (the key's alignment
    /// pads a `u32` link as much).
    fn new_node(&mut self, entry: Scheduled<E>) -> usize {
        let node = Node { entry, next: NIL };
        if let Some(free) = self.nodes.get_mut(self.free) {
            let index = self.free;
            self.free = free.next;
            *free = node;
            return index;
        }
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// Makes the front hold the next events, moving the clock's slot on to
    /// theirs; `false` when no event waits.
    #[inline(never)]
    fn fill_front(&mut self) -> bool {
        while self.front.is_empty() {
            let slot = match self.next_occupied() {
                Some(slot) => slot,
                // Nothing in the wheel: jump to the heap's first event.
                None => match self.far.peek() {
                    Some(Reverse(first)) => key_slot(first.key),
                    None => return false,
                },
            };
            self.current = slot;
            let index = wheel_index(slot);
            // The slot's list moves to the front, its nodes to the free ones.
            let mut node = self
                .heads
                .get_mut(index)
                .map_or(NIL, |head| std::mem::replace(head, NIL));
            if let Some(tail) = self.tails.get_mut(index) {
                *tail = NIL;
            }
            while let Some(n) = self.nodes.get_mut(node) {
                self.front.push(n.entry);
                let next = std::mem::replace(&mut n.next, self.free);
                self.free = node;
                node = next;
                self.in_wheel -= 1;
            }
            self.front.sort_unstable_by_key(|s| Reverse(s.key));
            if let Some(word) = self.occupied.get_mut(index / 64) {
                *word &= !(1 << (index % 64));
            }
            // The wheel now reaches one slot further (or, after a jump,
            // many): the heap's events that it covers move in.
            while let Some(Reverse(first)) = self.far.peek() {
                if key_slot(first.key).saturating_sub(self.current) >= WHEEL_SLOTS as u64 {
                    break;
                }
                if let Some(Reverse(entry)) = self.far.pop() {
                    self.place(entry);
                }
            }
        }
        true
    }

    /// The first slot after `current` whose list is not empty.
    fn next_occupied(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = wheel_index(self.current + 1);
        let mut word = start / 64;
        let mut bits = self.occupied.get(word).copied().unwrap_or(0) & (u64::MAX << (start % 64));
        // One more word than the bitmap has: the first word again, for the
        // slots before `start` in it, the furthest ahead.
        for _ in 0..=WORDS {
            if bits != 0 {
                let index = word * 64 + bits.trailing_zeros() as usize;
                let ahead = (index + WHEEL_SLOTS - start) % WHEEL_SLOTS;
                return Some(self.current + 1 + ahead as u64);
            }
            word = (word + 1) % WORDS;
            bits = self.occupied.get(word).copied().unwrap_or(0);
        }
        None
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

        /// Scheduling and popping interleaved, with delays from the same
        /// slot to beyond the wheel's reach, give the order of a plain sort
        /// by (time, sequence), and `peek_time` always names the next.
        #[test]
        fn interleaved_operations_keep_the_order(
            operations in proptest::collection::vec(
                (any::<bool>(), prop_oneof![
                    0u64..SLOT_NANOS,
                    0u64..SLOT_NANOS * 64,
                    0u64..SLOT_NANOS * WHEEL_SLOTS as u64 * 3,
                ]),
                0..400,
            )
        ) {
            let mut q = EventQueue::new();
            let mut reference = std::collections::BTreeSet::new();
            let mut sequence = 0usize;
            for (pop, delay) in operations {
                if pop {
                    prop_assert_eq!(q.peek_time(), reference.first().map(|&(at, _)| at));
                    let expected = reference.pop_first();
                    prop_assert_eq!(q.pop_until(Instant::MAX), expected);
                } else {
                    let at = Instant::from_nanos(q.now().as_nanos() + delay);
                    q.schedule(at, sequence);
                    reference.insert((at, sequence));
                    sequence += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(expected) = reference.pop_first() {
                prop_assert_eq!(q.pop_until(Instant::MAX), Some(expected));
            }
            prop_assert!(q.is_empty());
        }

        /// A `pop_until` that finds nothing due may move the wheel on; what
        /// is scheduled afterwards, even at the current time, still comes
        /// first.
        #[test]
        fn scheduling_after_a_refused_pop_keeps_the_order(
            later in SLOT_NANOS..SLOT_NANOS * WHEEL_SLOTS as u64 * 2,
            soon in 0u64..SLOT_NANOS,
        ) {
            let mut q = EventQueue::new();
            q.schedule(Instant::from_nanos(later), "later");
            prop_assert_eq!(q.pop_until(Instant::ZERO), None);
            q.schedule(Instant::from_nanos(soon), "soon");
            prop_assert_eq!(q.pop_until(Instant::MAX), Some((Instant::from_nanos(soon), "soon")));
            prop_assert_eq!(q.pop_until(Instant::MAX), Some((Instant::from_nanos(later), "later")));
        }
    }
}
