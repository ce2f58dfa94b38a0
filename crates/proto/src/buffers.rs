//! Spare byte buffers, so that the datagrams a connection or a session
//! queues do not each cost an allocation and a free: the buffer a sent
//! datagram leaves behind carries the next one. Only allocation changes;
//! the bytes are the same.

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
}
