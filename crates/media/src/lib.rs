//! # fairstream-media
//!
//! Video as the papers judge it: frames and GOPs, sources (H.264 Annex B files,
//! EvalVid traces, a built-in generator), the playout buffer with start-up delay
//! and stalls, paper 003's smoothing schedules, PSNR/SSIM and the E-model, and
//! packet-level FEC. See `DESIGN.md`; this crate is filled by the video issue and
//! has no code yet.
