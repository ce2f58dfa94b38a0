//! Receiver-buffer congestion control for scalable video (paper 004,
//! Ssesanga & Mandal, §2; issue 15): the receiver watches its playout
//! buffer, in seconds of media and in bits, and the sender sheds
//! enhancement-layer data in proportion to how empty it is, never touching
//! the base layer.
//!
//! | paper 004 | rule | here |
//! |---|---|---|
//! | §2.1 eq. 1 | congestion when the buffer falls to T_c, or to T_loss (T_c ≤ T_loss < T_s) while losses are observed | [`BufferConfig::detection_threshold`], [`BufferReceiver`] |
//! | §2.2 eq. 2 | η = B_av_obs / B_av_size | [`eta`] |
//! | §2.3 eq. 3-5 | the data of a window | [`scheduled_bits`], [`frame_bits`], [`probe_share`] |
//! | §2.4 eq. 6 | feedback every T_fb_k = η·T_fb, T_fb = T_s/2 | [`feedback_interval`], [`BufferReceiver::poll_feedback`] |
//!
//! Nothing here reads a clock or knows the media crate: frames are plain
//! sizes in bits ([`FrameSizes`]) and every call that depends on time takes
//! `now`. A `now` earlier than one already seen is taken as that one.
//!
//! # Driver contract (sans-IO)
//!
//! **Receiver** ([`BufferReceiver`]), for one stream:
//! 1. [`on_frame`](BufferReceiver::on_frame) for every frame, or part of a
//!    frame, that arrives (parts add up);
//! 2. [`on_loss`](BufferReceiver::on_loss) whenever the driver's loss
//!    detector declares packets of the stream lost;
//! 3. [`poll_feedback`](BufferReceiver::poll_feedback) after each input and
//!    whenever `now` reaches [`next_timeout`](BufferReceiver::next_timeout);
//!    send what it returns to the sender.
//!
//! # Where the paper is silent
//!
//! - **Playout.** The receiver plays out on its own clock, not the
//!   driver's player: playback starts (and, after the buffer ran dry,
//!   resumes) once T_s of media is held; when it (re)starts at t₀ with frame
//!   k₀, frame k is due at t₀ + (k − k₀)·`frame_interval`. A frame is in
//!   the buffer from its first arriving bit until it is due, as in the
//!   media crate's player; a frame that arrives after it was due is late
//!   and not buffered; a missing frame is skipped while later ones are
//!   held; an empty buffer when a frame is due is an underrun.
//!   Occupancy in time is the number of frames held times the frame
//!   interval, so lost frames lower it as the paper's "packet losses …
//!   that result in a significant reduction in the buffer occupancy" asks.
//! - **Deficit.** The receiver reports T_s minus its *span*, how long
//!   playback would last without arrivals (lost frames before the newest
//!   included), not minus the occupancy: sending earlier refills time, it
//!   cannot bring lost frames back.
//! - **Feedback starts with playback**: none during the first pre-roll (the
//!   buffer fills, it does not "fall"; the first feedback tells the sender
//!   playback has started), then every T_fb_k.
//! - **Observed losses** (eq. 1's T_loss): a loss the driver reported
//!   within the current feedback interval T_fb_k.
//! - **Congestion** is a level, not an edge: a feedback says congestion
//!   when the occupancy was at or below the threshold at any time since the
//!   previous feedback. Its onset (after a feedback without congestion)
//!   also sends a feedback at once
//!   ([`BufferConfig::feedback_on_congestion`]): T_fb is the *maximum*
//!   interval (§2.4), and waiting up to T_s/2 at T_c would spend half the
//!   margin left.
//! - **B_av_obs** is an exponentially weighted moving average of the
//!   occupancy in bits sampled every
//!   [`BufferConfig::measurement_interval`] from the start of playback,
//!   the newest sample weighing [`BufferConfig::occupancy_weight`].
//! - **B_av_size** is, as §2.2 says, "the bit length of data spanning the
//!   specified temporal buffer length" averaged: the mean full frame size
//!   times the frames in T_s. The sender computes it from the frames it
//!   plans and divides the B_av_obs it is sent by it (the paper's η); the
//!   receiver computes it from the full sizes the driver gives with each
//!   frame ([`ReceivedFrame::full`]), or, without them, from the bits it
//!   received (then its η measures the buffer's temporal fullness), for its
//!   own feedback schedule and the η it reports.

mod config;
mod equations;
mod playout;
mod receiver;

use std::time::Duration;

use crate::units::Rate;

pub use config::{
    BufferConfig, BufferConfigError, BufferMode, UnknownBufferMode, MAX_FRAME_INTERVAL,
    MIN_FRAME_INTERVAL,
};
pub use equations::{eta, feedback_interval, frame_bits, probe_share, scheduled_bits};
pub use playout::FrameArrival;
pub use receiver::{BufferReceiver, ReceivedFrame};

/// The most frames a receiver holds; a frame beyond is refused
/// ([`FrameArrival::OutOfRange`]). 65,536 frames are 43 minutes at 25 fps.
pub const MAX_HELD_FRAMES: usize = 1 << 16;

/// How far ahead of the next frame to play a frame's index may be, in
/// frames; farther is refused ([`FrameArrival::OutOfRange`]).
pub const MAX_FRAMES_AHEAD: u64 = 1 << 20;

/// The most frames in one window of the sender.
pub const MAX_WINDOW_FRAMES: usize = 4096;

/// A share in [0, 1]: η, δ, and the part of the enhancement layer sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Share(f64);

impl Share {
    /// Nothing.
    pub const ZERO: Share = Share(0.0);
    /// Everything.
    pub const ONE: Share = Share(1.0);

    /// `value` clamped to [0, 1]; NaN gives zero.
    pub fn new(value: f64) -> Share {
        if value.is_nan() {
            Share::ZERO
        } else {
            Share(value.clamp(0.0, 1.0))
        }
    }

    /// The share as a number in [0, 1].
    pub fn get(self) -> f64 {
        self.0
    }
}

/// The sizes of one frame's layers, in bits: F_base_k and F_enh_k of paper
/// 004 eq. 4.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FrameSizes {
    /// The base layer, F_base_k: never truncated.
    pub base_bits: u64,
    /// The enhancement layer, F_enh_k: fine-grained, truncatable at any
    /// byte.
    pub enhancement_bits: u64,
}

/// What the receiver tells the sender (paper 004 §2.4: "the average buffer
/// occupancy in bits and the proportional temporal occupancy"), with what
/// the sender needs for the deficit and the cut-off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufferFeedback {
    /// Counts the receiver's feedbacks from 0, so that the sender can drop
    /// one that arrives after a newer one.
    pub seq: u64,
    /// B_av_obs: the weighted average of the occupancy in bits.
    pub average_occupancy_bits: u64,
    /// B_av_size as the receiver computes it (0 when it has no estimate).
    pub full_buffer_bits: u64,
    /// The media held when the feedback was sent: frames held × the frame
    /// interval (eq. 1 compares this with T_c and T_loss).
    pub occupancy: Duration,
    /// How long playback would have lasted from then with nothing more
    /// arriving: to the end of the newest frame held, lost frames before it
    /// included.
    pub span: Duration,
    /// η of eq. 2 as the receiver computes it.
    pub eta: Share,
    /// Eq. 1: the occupancy was at or below the threshold (T_c, or T_loss
    /// under losses) at some time since the previous feedback.
    pub congested: bool,
    /// Losses were observed (T_loss was the threshold) when it was sent.
    pub losses_observed: bool,
    /// T_s minus the span (zero when it is T_s or more): the "receiver
    /// buffer deficit to be made up" of §2.3.
    pub deficit: Duration,
    /// Underruns (the buffer empty when a frame was due) since the stream
    /// began; a count, so that a lost feedback loses none.
    pub underruns: u64,
    /// The bits received since the previous feedback over the time since
    /// it (since the first arrival for the first); zero over no time.
    pub receive_rate: Rate,
}
