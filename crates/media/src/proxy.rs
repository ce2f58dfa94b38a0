//! A proxy's bounded buffer (paper 003 §3.2: "the ingress buffer
//! corresponds to the proxy buffer"): frames the proxy received upstream,
//! waiting to be sent on. The same queue serves `fairstream relay` on real
//! sockets (its items access units of NAL units) and the simulator's proxy
//! node (its items RTP packets).
//!
//! It is bounded in bytes and in units (NAL units or packets, so that a
//! stream of tiny units cannot multiply the memory each byte costs).
//! DCCP has no flow control (a TFRC sender keeps sending at the rate its
//! receiver reports, whatever the application does with the data), so the
//! proxy cannot push back on its sender: when a new item does not fit,
//! items are dropped, the oldest P and B frames first (they are the least
//! needed: an I frame starts a GOP that the decoder can use on its own),
//! then, when nothing but key items is left, the oldest of any type. An
//! item larger than the whole buffer is dropped on arrival.

use std::collections::VecDeque;

use serde::Serialize;

use crate::h264::FrameType;
use crate::playout::ByType;

/// What the queue needs to know of an item.
pub trait QueuedFrame {
    /// Its bytes.
    fn bytes(&self) -> u64;
    /// Its units (NAL units, packets), at least one.
    fn units(&self) -> u64;
    /// Its frame's type, when known (unknown counts as P).
    fn frame_type(&self) -> Option<FrameType>;
    /// Whether it is dropped last (an I frame, parameter sets).
    fn is_key(&self) -> bool;
}

/// The buffer's occupancy and what it dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferFigures {
    /// Its capacity, bytes.
    pub limit_bytes: u64,
    /// Its capacity in units.
    pub limit_packets: u64,
    /// Bytes held now.
    pub bytes: u64,
    /// Items held now.
    pub frames: u64,
    /// Units held now (each leaves as one packet, or as several fragments
    /// when larger than a packet).
    pub packets: u64,
    /// The most bytes held at once.
    pub max_bytes: u64,
    /// The most items held at once.
    pub max_frames: u64,
    /// The most units held at once.
    pub max_packets: u64,
    /// Items taken in from upstream.
    pub frames_in: u64,
    /// Items handed on downstream.
    pub frames_out: u64,
    /// Items dropped because the buffer was full, by type (unknown types
    /// count as P).
    pub frames_dropped: ByType,
    /// Bytes of the items dropped.
    pub bytes_dropped: u64,
}

/// The bounded queue (see the module documentation).
#[derive(Clone, Debug)]
pub struct FrameQueue<F> {
    frames: VecDeque<F>,
    figures: BufferFigures,
}

impl<F: QueuedFrame> FrameQueue<F> {
    /// An empty queue of at most `limit_bytes` and `limit_units` (at least
    /// one each).
    pub fn new(limit_bytes: u64, limit_units: u64) -> FrameQueue<F> {
        FrameQueue {
            frames: VecDeque::new(),
            figures: BufferFigures {
                limit_bytes: limit_bytes.max(1),
                limit_packets: limit_units.max(1),
                ..BufferFigures::default()
            },
        }
    }

    /// Adds an item, dropping older ones (P and B first) to make room.
    pub fn push(&mut self, frame: F) {
        let size = frame.bytes();
        let units = frame.units().max(1);
        let figures = &mut self.figures;
        figures.frames_in += 1;
        if size > figures.limit_bytes || units > figures.limit_packets {
            figures.bytes_dropped += size;
            figures
                .frames_dropped
                .add(frame.frame_type().unwrap_or(FrameType::P), 1);
            return;
        }
        while self.figures.bytes + size > self.figures.limit_bytes
            || self.figures.packets + units > self.figures.limit_packets
        {
            let victim = self.frames.iter().position(|f| !f.is_key()).unwrap_or(0);
            let Some(dropped) = self.frames.remove(victim) else {
                break;
            };
            let figures = &mut self.figures;
            figures.bytes -= dropped.bytes();
            figures.frames -= 1;
            figures.packets -= dropped.units().max(1);
            figures.bytes_dropped += dropped.bytes();
            figures
                .frames_dropped
                .add(dropped.frame_type().unwrap_or(FrameType::P), 1);
        }
        let figures = &mut self.figures;
        figures.bytes += size;
        figures.frames += 1;
        figures.packets += units;
        figures.max_bytes = figures.max_bytes.max(figures.bytes);
        figures.max_frames = figures.max_frames.max(figures.frames);
        figures.max_packets = figures.max_packets.max(figures.packets);
        self.frames.push_back(frame);
    }

    /// Takes the oldest item.
    pub fn pop(&mut self) -> Option<F> {
        let frame = self.frames.pop_front()?;
        let figures = &mut self.figures;
        figures.bytes -= frame.bytes();
        figures.frames -= 1;
        figures.packets -= frame.units().max(1);
        figures.frames_out += 1;
        Some(frame)
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The occupancy and the counters now.
    pub fn figures(&self) -> BufferFigures {
        self.figures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Packet(u32, FrameType, u64);

    impl QueuedFrame for Packet {
        fn bytes(&self) -> u64 {
            self.2
        }
        fn units(&self) -> u64 {
            1
        }
        fn frame_type(&self) -> Option<FrameType> {
            Some(self.1)
        }
        fn is_key(&self) -> bool {
            self.1 == FrameType::I
        }
    }

    #[test]
    fn packets_are_bounded_by_count_and_b_frames_go_before_i() {
        let mut queue = FrameQueue::new(10_000, 3);
        queue.push(Packet(0, FrameType::I, 100));
        queue.push(Packet(1, FrameType::B, 100));
        queue.push(Packet(2, FrameType::P, 100));
        queue.push(Packet(3, FrameType::I, 100));
        let figures = queue.figures();
        assert_eq!(
            (figures.frames, figures.packets, figures.max_packets),
            (3, 3, 3)
        );
        assert_eq!(figures.frames_dropped.b, 1);
        assert_eq!(queue.pop(), Some(Packet(0, FrameType::I, 100)));
        assert_eq!(queue.pop(), Some(Packet(2, FrameType::P, 100)));
        assert_eq!(queue.pop(), Some(Packet(3, FrameType::I, 100)));
        assert!(queue.is_empty() && queue.pop().is_none());
        assert_eq!(queue.figures().frames_out, 3);
        assert_eq!(queue.figures().frames_in, 4);
    }
}
