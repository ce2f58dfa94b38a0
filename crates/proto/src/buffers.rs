//! Spare byte buffers, so that the datagrams a connection or a session
//! queues (and the packets the simulator carries) do not each cost an
//! allocation and a free: the buffer a sent datagram leaves behind carries
//! the next one. Only allocation changes; the bytes are the same.
//!
//! A session keeps each datagram it hands to a connection (to resend it):
//! the two share one buffer (an `Arc<Vec<u8>>`) rather than each holding a
//! copy.

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

/// A buffer a [`BufferPool`] can take back: a `Vec<u8>`, or a shared one
/// (`Arc<Vec<u8>>`) once no one else holds it.
pub trait Reusable: Default {
    /// The bytes, writable, when this holder alone has them.
    fn bytes_mut(&mut self) -> Option<&mut Vec<u8>>;
}

impl Reusable for Vec<u8> {
    fn bytes_mut(&mut self) -> Option<&mut Vec<u8>> {
        Some(self)
    }
}

impl Reusable for Arc<Vec<u8>> {
    /// A shared buffer comes back only from its last holder (a connection
    /// has sent it by then, almost always); one still held elsewhere is
    /// freed by that holder.
    fn bytes_mut(&mut self) -> Option<&mut Vec<u8>> {
        Arc::get_mut(self)
    }
}

/// A few emptied buffers, last in, first out.
#[derive(Debug)]
pub struct BufferPool<B = Vec<u8>> {
    spare: Vec<B>,
}

impl<B> Default for BufferPool<B> {
    fn default() -> Self {
        BufferPool { spare: Vec::new() }
    }
}

impl<B: Reusable> BufferPool<B> {
    /// An empty buffer no one else holds: a spare one if any.
    pub fn take(&mut self) -> B {
        self.spare.pop().unwrap_or_default()
    }

    /// Keeps `buffer`, emptied, for a later [`take`](Self::take) (at most
    /// 16 are kept).
    pub fn give(&mut self, buffer: B) {
        self.give_within(buffer, MAX_SPARE);
    }

    /// [`give`](Self::give), keeping at most `max` spare buffers (at least
    /// 16): for an owner whose buffers come back in bursts larger than
    /// that, such as a store that lets go of a round trip's datagrams at
    /// once and then takes one per datagram sent. A buffer without room,
    /// or larger than 64 KiB, is freed.
    pub fn give_within(&mut self, mut buffer: B, max: usize) {
        if self.spare.len() >= max.max(MAX_SPARE) {
            return;
        }
        let kept = match buffer.bytes_mut() {
            Some(bytes) if (1..=MAX_SPARE_CAPACITY).contains(&bytes.capacity()) => {
                bytes.clear();
                true
            }
            _ => false,
        };
        if kept {
            self.spare.push(buffer);
        }
    }
}

impl BufferPool {
    /// A buffer holding a copy of `bytes`.
    pub fn copy_of(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut buffer = self.take();
        buffer.extend_from_slice(bytes);
        buffer
    }

    /// A spare buffer `write` filled, with what it said; the buffer comes
    /// back to the pool when `write` says `None` (it wrote nothing).
    pub fn fill<T>(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> Option<T>,
    ) -> Option<(Vec<u8>, T)> {
        let mut buffer = self.take();
        match write(&mut buffer) {
            Some(what) => Some((buffer, what)),
            None => {
                self.give(buffer);
                None
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
        let mut pool = BufferPool::default();
        pool.give(Vec::new());
        assert!(pool.spare.is_empty(), "a buffer without room is not kept");
    }

    #[test]
    fn a_filled_buffer_is_handed_out_and_an_unwritten_one_kept() {
        let mut pool = BufferPool::default();
        pool.give(Vec::with_capacity(100));
        assert_eq!(pool.fill(|_| None::<()>), None);
        assert_eq!(pool.spare.len(), 1, "written nothing: back in the pool");
        let (bytes, what) = pool
            .fill(|buffer| {
                buffer.extend_from_slice(b"packet");
                Some(7)
            })
            .expect("written");
        assert_eq!((bytes.as_slice(), what), (&b"packet"[..], 7));
        assert!(bytes.capacity() >= 100, "the spare buffer carried it");
        assert!(pool.spare.is_empty());
    }

    #[test]
    fn a_shared_buffer_comes_back_only_from_its_last_holder() {
        let mut pool = BufferPool::<Shared>::default();
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
