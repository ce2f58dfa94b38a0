//! The proxy buffer between the relay's two halves (paper 003 §3.2: "the
//! ingress buffer corresponds to the proxy buffer"): access units the
//! upstream receiver completed, waiting for the downstream sender, in
//! [`fairstream_media::proxy::FrameQueue`] (the simulator's proxy node
//! uses the same queue), which documents the drop policy.
//!
//! It is bounded in bytes of NAL units, and in NAL units (one per
//! [`BYTES_PER_NAL_UNIT`] bytes of the limit). Frames carrying parameter
//! sets (SPS or PPS) count as I frames: without them nothing decodes.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use fairstream_media::h264::FrameType;
pub use fairstream_media::proxy::BufferFigures;
use fairstream_media::proxy::{FrameQueue, QueuedFrame};

use crate::stats::ConnectionFigures;

/// The buffer holds at most one NAL unit per this many bytes of its limit.
pub const BYTES_PER_NAL_UNIT: u64 = 64;

/// NAL unit types of a sequence and a picture parameter set (H.264
/// Table 7-1).
const SPS: u8 = 7;
const PPS: u8 = 8;

/// One access unit held by the relay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayFrame {
    /// Its RTP timestamp as the upstream sender set it (90 kHz), kept
    /// downstream.
    pub timestamp: u32,
    /// Its type, when a slice header told it.
    pub frame_type: Option<FrameType>,
    /// Whether it is an IDR picture.
    pub idr: bool,
    /// Its NAL units, without start codes.
    pub nal_units: Vec<Vec<u8>>,
}

impl RelayFrame {
    /// Bytes of its NAL units.
    pub fn bytes(&self) -> u64 {
        self.nal_units.iter().map(|n| n.len() as u64).sum()
    }

    /// Whether it is dropped last: an I frame, or one carrying parameter
    /// sets.
    fn carries_key(&self) -> bool {
        self.frame_type == Some(FrameType::I)
            || self
                .nal_units
                .iter()
                .any(|n| n.first().is_some_and(|b| matches!(b & 0x1f, SPS | PPS)))
    }
}

impl QueuedFrame for RelayFrame {
    fn bytes(&self) -> u64 {
        RelayFrame::bytes(self)
    }

    fn units(&self) -> u64 {
        self.nal_units.len() as u64
    }

    fn frame_type(&self) -> Option<FrameType> {
        self.frame_type
    }

    fn is_key(&self) -> bool {
        self.carries_key()
    }
}

/// What the halves last published, for the relay's statistics lines.
#[derive(Clone, Debug, Default)]
pub(crate) struct Published {
    /// The upstream receiver's connections.
    pub(crate) upstream: Vec<ConnectionFigures>,
    /// RTP packets the upstream receiver delivered.
    pub(crate) upstream_packets: u64,
    /// Bytes of them.
    pub(crate) upstream_bytes: u64,
    /// The downstream sender's connections.
    pub(crate) downstream: Vec<ConnectionFigures>,
    /// RTP packets the downstream sender handed to its session.
    pub(crate) downstream_packets: u64,
    /// Bytes of them.
    pub(crate) downstream_bytes: u64,
    /// Packets waiting in the downstream sender (its queue and its
    /// session's).
    pub(crate) downstream_queued: u64,
}

#[derive(Debug)]
struct State {
    queue: FrameQueue<RelayFrame>,
    ended: bool,
    published: Published,
}

/// The relay's bounded frame buffer, shared by its receiving half (which
/// pushes) and its sending half (which pops). Clones share one buffer;
/// two handles are equal when they are the same buffer.
#[derive(Clone, Debug)]
pub struct RelayBuffer {
    state: Arc<Mutex<State>>,
}

impl PartialEq for RelayBuffer {
    fn eq(&self, other: &RelayBuffer) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
    }
}

impl Eq for RelayBuffer {}

/// What [`RelayBuffer::pop`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Popped {
    /// The oldest frame.
    Frame(RelayFrame),
    /// Nothing yet.
    Empty,
    /// Nothing, and nothing more will come.
    Ended,
}

impl RelayBuffer {
    /// An empty buffer holding at most `limit_bytes` of NAL units.
    pub fn new(limit_bytes: u64) -> RelayBuffer {
        RelayBuffer {
            state: Arc::new(Mutex::new(State {
                queue: FrameQueue::new(limit_bytes, (limit_bytes / BYTES_PER_NAL_UNIT).max(1)),
                ended: false,
                published: Published::default(),
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A half that panicked left the counters consistent: every update
        // is a few integer additions.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a frame, dropping older ones (P and B first) to make room.
    pub fn push(&self, frame: RelayFrame) {
        self.lock().queue.push(frame);
    }

    /// Takes the oldest frame.
    pub fn pop(&self) -> Popped {
        let mut state = self.lock();
        match state.queue.pop() {
            Some(frame) => Popped::Frame(frame),
            None if state.ended => Popped::Ended,
            None => Popped::Empty,
        }
    }

    /// No more frames will be pushed: once empty, [`pop`](Self::pop)
    /// says [`Popped::Ended`].
    pub fn end(&self) {
        self.lock().ended = true;
    }

    /// The occupancy and the counters now.
    pub fn figures(&self) -> BufferFigures {
        self.lock().queue.figures()
    }

    /// Records what a half published.
    pub(crate) fn publish(&self, update: impl FnOnce(&mut Published)) {
        update(&mut self.lock().published);
    }

    /// What the halves last published.
    pub(crate) fn published(&self) -> Published {
        self.lock().published.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(timestamp: u32, frame_type: FrameType, bytes: usize) -> RelayFrame {
        let header = match frame_type {
            FrameType::I => 0x65,
            _ => 0x41,
        };
        let mut nal = vec![0u8; bytes];
        nal[0] = header;
        RelayFrame {
            timestamp,
            frame_type: Some(frame_type),
            idr: frame_type == FrameType::I,
            nal_units: vec![nal],
        }
    }

    #[test]
    fn full_buffer_drops_the_oldest_p_frames_first() {
        let buffer = RelayBuffer::new(1000);
        buffer.push(frame(0, FrameType::I, 400));
        buffer.push(frame(1, FrameType::P, 200));
        buffer.push(frame(2, FrameType::P, 200));
        buffer.push(frame(3, FrameType::P, 300));
        let figures = buffer.figures();
        assert_eq!(figures.frames_dropped.p, 1);
        assert_eq!(figures.bytes, 900);
        assert_eq!(figures.max_bytes, 900);
        let order: Vec<u32> = std::iter::from_fn(|| match buffer.pop() {
            Popped::Frame(f) => Some(f.timestamp),
            _ => None,
        })
        .collect();
        assert_eq!(order, vec![0, 2, 3]);
        assert_eq!(buffer.figures().bytes, 0);
    }

    #[test]
    fn only_i_frames_left_drops_the_oldest_and_oversize_frames_are_refused() {
        let buffer = RelayBuffer::new(1000);
        buffer.push(frame(0, FrameType::I, 600));
        buffer.push(frame(1, FrameType::I, 600));
        buffer.push(frame(2, FrameType::P, 2000));
        let figures = buffer.figures();
        assert_eq!(figures.frames_dropped.i, 1);
        assert_eq!(figures.frames_dropped.p, 1);
        assert_eq!(figures.frames, 1);
        assert!(matches!(buffer.pop(), Popped::Frame(f) if f.timestamp == 1));
        assert_eq!(buffer.pop(), Popped::Empty);
        buffer.end();
        assert_eq!(buffer.pop(), Popped::Ended);
    }

    #[test]
    fn tiny_nal_units_are_bounded_by_count() {
        let buffer = RelayBuffer::new(6400);
        for i in 0..1000u32 {
            let mut f = frame(i, FrameType::P, 1);
            f.nal_units = vec![vec![0x41]; 10];
            buffer.push(f);
        }
        let figures = buffer.figures();
        assert_eq!(figures.limit_packets, 100);
        assert_eq!(figures.packets, 100);
        assert_eq!(figures.frames, 10);
        assert_eq!(figures.frames_dropped.p, 990);
    }

    #[test]
    fn parameter_sets_are_kept_like_i_frames() {
        let buffer = RelayBuffer::new(500);
        let mut sps = frame(0, FrameType::P, 300);
        sps.frame_type = None;
        sps.nal_units.insert(0, vec![0x67, 1, 2]);
        buffer.push(sps);
        buffer.push(frame(1, FrameType::P, 100));
        buffer.push(frame(2, FrameType::P, 150));
        assert!(matches!(buffer.pop(), Popped::Frame(f) if f.timestamp == 0));
    }

    #[test]
    fn occupancy_never_exceeds_the_limit() {
        let buffer = RelayBuffer::new(10_000);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for i in 0..2_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let kind = if state % 10 == 0 {
                FrameType::I
            } else {
                FrameType::P
            };
            buffer.push(frame(i, kind, 1 + (state % 3000) as usize));
            if state % 3 == 0 {
                buffer.pop();
            }
            let figures = buffer.figures();
            assert!(figures.bytes <= figures.limit_bytes);
            assert!(figures.max_bytes <= figures.limit_bytes);
            assert!(figures.packets <= figures.limit_packets);
        }
    }
}
