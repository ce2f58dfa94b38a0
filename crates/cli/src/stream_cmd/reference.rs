//! `fairstream recv --reference generated`: what the receiver writes,
//! compared with the generated content the sender encoded (the generator
//! is deterministic, so the reference is made again), frame by frame, a
//! frame that did not arrive or that the sender dropped showing the
//! picture before ([`crate::quality`]).
//!
//! The receiver hands each access unit it writes to a thread that keeps
//! it, up to [`MAX_KEPT_BYTES`]; the comparison runs once the stream has
//! ended, over at most [`MAX_REFERENCE_FRAMES`] frames. A longer stream is
//! not compared (the summary says so): the frames a sender names cannot
//! make the receiver keep or score without bound.

use std::sync::mpsc;
use std::thread::{self, JoinHandle};

use anyhow::Context;
use fairstream_net::recv::ReceivedAccessUnit;
use serde::Serialize;

use crate::quality::{self, Quality, Ssim};

/// The most bytes of access units kept for the comparison: 256 MiB, an
/// hour of a 500 kbit/s stream.
pub(crate) const MAX_KEPT_BYTES: usize = 256 << 20;
/// The most frames compared: an hour at 25 frames/s.
pub(crate) const MAX_REFERENCE_FRAMES: usize = 90_000;

/// The comparison in the summary.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ReferenceReport {
    /// Measured (luma PSNR; SSIM is not measured here).
    Measured(Quality),
    /// Not measured, and why.
    Skipped {
        /// Why.
        skipped: String,
    },
}

/// The thread that keeps what the receiver writes.
pub(crate) struct ReferenceTap {
    size: (u32, u32),
    fps: f64,
    thread: JoinHandle<Kept>,
}

/// What the thread kept.
struct Kept {
    units: Vec<ReceivedAccessUnit>,
    overflowed: bool,
}

impl ReferenceTap {
    /// Starts keeping; the receiver sends its access units to the sender
    /// returned, and the comparison is against generated content of `size`
    /// sent at `fps`.
    pub(crate) fn start(
        size: (u32, u32),
        fps: f64,
    ) -> anyhow::Result<(ReferenceTap, mpsc::Sender<ReceivedAccessUnit>)> {
        let (tap, units) = mpsc::channel::<ReceivedAccessUnit>();
        let thread = thread::Builder::new()
            .name("fairstream-reference".into())
            .spawn(move || {
                let mut kept = Kept {
                    units: Vec::new(),
                    overflowed: false,
                };
                let mut bytes = 0usize;
                for unit in units {
                    let size: usize = unit.nal_units.iter().map(Vec::len).sum();
                    bytes = bytes.saturating_add(size);
                    if bytes > MAX_KEPT_BYTES {
                        kept.overflowed = true;
                        kept.units = Vec::new();
                    }
                    if !kept.overflowed {
                        kept.units.push(unit);
                    }
                }
                kept
            })
            .context("cannot start the thread that keeps the stream for --reference")?;
        Ok((ReferenceTap { size, fps, thread }, tap))
    }

    /// Compares what was kept (the receiver has ended, so its sender is
    /// dropped and the thread has all of it).
    pub(crate) fn finish(self) -> anyhow::Result<ReferenceReport> {
        let kept = self
            .thread
            .join()
            .map_err(|_| anyhow::anyhow!("the thread keeping the stream for --reference failed"))?;
        if kept.overflowed {
            return Ok(ReferenceReport::Skipped {
                skipped: format!("the stream exceeded {} MiB", MAX_KEPT_BYTES >> 20),
            });
        }
        let frames = kept
            .units
            .iter()
            .map(|unit| quality::frame_index(unit, self.fps).saturating_add(1))
            .max()
            .unwrap_or(0);
        if frames > MAX_REFERENCE_FRAMES {
            return Ok(ReferenceReport::Skipped {
                skipped: format!(
                    "the stream names frame {frames}; at most {MAX_REFERENCE_FRAMES} are compared"
                ),
            });
        }
        let measured =
            quality::as_received(&kept.units, frames, self.size, self.fps, Ssim::Skipped)
                .context("--reference generated")?;
        Ok(ReferenceReport::Measured(measured))
    }
}
