//! # fairstream-media
//!
//! Video as the papers judge it: frames and GOPs, sources (H.264 Annex B files,
//! EvalVid traces, a built-in generator), the playout buffer with start-up delay
//! and stalls, paper 003's smoothing schedules, PSNR/SSIM/MOS, and packet-level
//! FEC, and voice quality by the ITU-T G.107 E-model. See `DESIGN.md`. Not
//! built yet: scalable (layered) video in the simulator (paper 004; its
//! frame model and traces are in [`layered`]).
//!
//! Built so far:
//! - [`h264`]: Annex B byte streams split into NAL units and access units,
//!   with each frame's type (I/P/B, IDR) and `frame_num` from its slice
//!   headers, and the frame rate from the SPS's VUI timing.
//! - [`codec`]: OpenH264 encoding and decoding with error concealment, frames
//!   kept aligned with the reference.
//! - [`generator`]: the project's own synthetic content.
//! - [`yuv`], [`quality`]: I420 frames; PSNR, SSIM and MOS as EvalVid reports
//!   them.
//! - [`emodel`]: the ITU-T G.107 E-model (paper 002): R from delay, codec
//!   and packet loss with its burstiness, MOS from R, G.113's codecs.
//! - [`fec`]: packet-level Reed-Solomon RS(n, k) erasure coding.
//! - [`evalvid`]: EvalVid's sender trace and packet dump files.
//! - [`bframes`]: synthetic `IBBP…` traces in decoding order (paper 000's
//!   GOP) and the frames a loss damages through B- and P-frame references.
//! - [`layered`]: scalable video (paper 004): frames of a base and an FGS or
//!   discrete-layer enhancement, truncated to a share η; layered trace
//!   files; synthetic FGS traces and EvalVid traces split into layers.
//! - [`temporal`]: temporally scalable H.264 (OpenH264's hierarchical P,
//!   up to four layers of whole frames): dropping upper layers, and paper
//!   004's share η as whole frames kept lowest layer first.
//! - [`stream`]: a stream end to end: source frames, RTP/H.264 packets, what
//!   arrived, and the verdict (playout and quality).
//! - [`schedule`]: paper 003's smoothing schedules (S_late, S_early, w*,
//!   x*, the proxy buffer y').
//! - [`playout`]: the playout buffer: deadlines, late packets, stalls,
//!   start-up delay, GOP arrivals; the drop and rebuffer (freeze-and-resume)
//!   player models, and the buffer's occupancy over time.
//! - [`voice`]: voice calls (paper 002): G.711 and G.729 as 20 ms packets,
//!   the listener that scores a call (fixed or adaptive de-jitter buffer,
//!   E-model), G.711 µ-law, packet-loss concealment and WAV files.

pub mod bframes;
pub mod emodel;
pub mod evalvid;
pub mod fec;
pub mod generator;
pub mod h264;
pub mod layered;
pub mod playout;
pub mod proxy;
pub mod quality;
pub mod schedule;
pub mod stream;
pub mod temporal;
pub mod voice;
pub mod yuv;

// The one module with `unsafe` code: OpenH264's raw API, needed to decode
// with error concealment and to encode temporal layers (see the module's
// documentation).
#[allow(unsafe_code)]
pub mod codec;
