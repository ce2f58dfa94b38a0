//! The simulator's proxy node (paper 003 §3.2): the upstream leg's
//! receiver puts every RTP packet it takes into a bounded buffer
//! ([`fairstream_media::proxy::FrameQueue`], the queue of `fairstream
//! relay`), and the downstream leg's sender sends them on, oldest first,
//! as fast as its CCID allows. The two legs are flows of their own
//! ([`crate::scenario::RelayRole`]); the runner wakes the downstream leg
//! whenever the upstream one has run.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use fairstream_media::h264::FrameType;
use fairstream_media::proxy::{BufferFigures, FrameQueue, QueuedFrame};

use super::media::MediaApp;

/// The buffer holds at most one packet per this many bytes of its limit
/// (as `fairstream relay` holds NAL units).
pub(super) const BYTES_PER_PACKET: u64 = 64;

/// An RTP packet waiting in the proxy.
#[derive(Clone, Debug)]
pub(super) struct RelayedPacket {
    pub(super) bytes: Vec<u8>,
    pub(super) frame_type: Option<FrameType>,
}

impl QueuedFrame for RelayedPacket {
    fn bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn units(&self) -> u64 {
        1
    }

    fn frame_type(&self) -> Option<FrameType> {
        self.frame_type
    }

    fn is_key(&self) -> bool {
        self.frame_type == Some(FrameType::I)
    }
}

/// The buffer both legs hold (behind a lock only so that a simulation
/// stays `Send`; one simulation runs on one thread).
#[derive(Clone, Debug)]
pub(super) struct SharedRelay(Arc<Mutex<FrameQueue<RelayedPacket>>>);

impl SharedRelay {
    pub(super) fn new(limit_bytes: u64) -> SharedRelay {
        SharedRelay(Arc::new(Mutex::new(FrameQueue::new(
            limit_bytes,
            (limit_bytes / BYTES_PER_PACKET).max(1),
        ))))
    }

    fn lock(&self) -> MutexGuard<'_, FrameQueue<RelayedPacket>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes in an RTP packet of `media`'s stream that the upstream leg
    /// received.
    pub(super) fn forward(&self, media: &MediaApp, bytes: Vec<u8>) {
        let frame_type = media.frame_type_of(&bytes);
        self.lock().push(RelayedPacket { bytes, frame_type });
    }

    pub(super) fn pop(&self) -> Option<RelayedPacket> {
        self.lock().pop()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    pub(super) fn figures(&self) -> BufferFigures {
        self.lock().figures()
    }
}
