//! Spare byte buffers, so that the datagrams a connection or a session
//! queues do not each cost an allocation and a free: the buffer a sent
//! datagram leaves behind carries the next one. Only allocation changes;
//! the bytes are the same.
//!
//! A session keeps each datagram it hands to a connection (to resend it):
//! the two share one buffer ([`Shared`]) rather than each holding a copy.

use std::sync::Arc;

/// A datagram's bytes shared between a session's store and the connection
/// that sends them.
pub(crate) type Shared = Arc<Vec<u8>>;

/// A datagram in a connection's send queue: its own copy, or bytes it
/// shares with the session that keeps them.
#[derive(Debug)]
pub(crate) enum Payload {
    Owned(Vec<u8>),
    Shared(Shared),
}

impl Payload {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Payload::Owned(bytes) => bytes,
            Payload::Shared(bytes) => bytes,
        }
    }
}

/// At most this many spare buffers are kept.
const MAX_SPARE: usize = 16;

/// A buffer larger than this is freed rather than kept (a datagram is at
/// most a jumbo frame; an odd large one should not pin its memory).
const MAX_SPARE_CAPACITY: usize = 1 << 16;

/// A few emptied buffers, last in, first out.
#[derive(Debug, Default)]
pub(crate) struct BufferPool {
    spare: Vec<Vec<u8>>,
}

impl BufferPool {
    /// An empty buffer: a spare one if any.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_default()
    }

    /// A buffer holding a copy of `bytes`.
    pub(crate) fn copy_of(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut buffer = self.take();
        buffer.extend_from_slice(bytes);
        buffer
    }

    /// Keeps `buffer`, emptied, for a later [`take`](Self::take).
    pub(crate) fn give(&mut self, buffer: Vec<u8>) {
        self.give_within(buffer, MAX_SPARE);
    }

    /// [`give`](Self::give), keeping at most `max` spare buffers (at
    /// least [`MAX_SPARE`]): for an owner whose buffers come back in
    /// bursts larger than that, such as a store that lets go of a round
    /// trip's datagrams at once and then takes one per datagram sent.
    pub(crate) fn give_within(&mut self, mut buffer: Vec<u8>, max: usize) {
        if self.spare.len() < max.max(MAX_SPARE)
            && buffer.capacity() > 0
            && buffer.capacity() <= MAX_SPARE_CAPACITY
        {
            buffer.clear();
            self.spare.push(buffer);
        }
    }
}

/// [`BufferPool`] for shared buffers: a buffer comes back only when its
/// last holder lets go of it (the connection has sent it by then, almost
/// always); one still held elsewhere is freed by that holder.
#[derive(Debug, Default)]
pub(crate) struct SharedPool {
    spare: Vec<Shared>,
}

impl SharedPool {
    /// An empty buffer no one else holds: a spare one if any.
    pub(crate) fn take(&mut self) -> Shared {
        self.spare.pop().unwrap_or_default()
    }

    /// Keeps `buffer`, emptied, if no one else holds it, and while fewer
    /// than `max` (at least [`MAX_SPARE`]) are kept.
    pub(crate) fn give_within(&mut self, mut buffer: Shared, max: usize) {
        if self.spare.len() >= max.max(MAX_SPARE) {
            return;
        }
        if let Some(bytes) = Arc::get_mut(&mut buffer) {
            if bytes.capacity() > 0 && bytes.capacity() <= MAX_SPARE_CAPACITY {
                bytes.clear();
                self.spare.push(buffer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_buffer_comes_back_empty_with_its_room_and_the_pool_is_bounded() {
        let mut pool = BufferPool::default();
        let first = pool.copy_of(&[1; 1500]);
        assert_eq!(first, [1; 1500]);
        let room = first.capacity();
        pool.give(first);
        let again = pool.take();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), room);
        assert_eq!(pool.copy_of(&[2, 3]), [2, 3]);
        for _ in 0..100 {
            pool.give(vec![0; 10]);
        }
        pool.give(vec![0; MAX_SPARE_CAPACITY + 1]);
        assert_eq!(pool.spare.len(), MAX_SPARE);
        assert!(pool
            .spare
            .iter()
            .all(|b| b.capacity() <= MAX_SPARE_CAPACITY));
        assert_eq!(pool.take().capacity(), 10);
        for _ in 0..100 {
            pool.give_within(vec![0; 10], 40);
        }
        assert_eq!(pool.spare.len(), 40, "a larger bound for bursts");
        pool.give_within(vec![0; 10], 1);
        assert_eq!(pool.spare.len(), 40, "never below MAX_SPARE's");
    }

    #[test]
    fn a_shared_buffer_comes_back_only_from_its_last_holder() {
        let mut pool = SharedPool::default();
        let held = Arc::new(vec![1u8; 100]);
        let other = Arc::clone(&held);
        pool.give_within(held, 0);
        assert!(pool.spare.is_empty(), "another holder still has it");
        pool.give_within(other, 0);
        let again = pool.take();
        assert!(again.is_empty());
        assert!(again.capacity() >= 100);
        assert_eq!(Arc::strong_count(&again), 1);
        for _ in 0..100 {
            pool.give_within(Arc::new(vec![0; 10]), 40);
        }
        assert_eq!(pool.spare.len(), 40);
        assert_eq!(
            Payload::Shared(Arc::new(vec![5, 6])).bytes(),
            Payload::Owned(vec![5, 6]).bytes()
        );
    }
}
