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
//! | §2.3 eq. 3-4 | D_txn = Σ(F_base_k + η·F_enh_k) over a 1 s window, F_k = F_base_k + F_enh_k | [`scheduled_bits`], [`frame_bits`], [`BufferSender::plan_window`] |
//! | §2.3 eq. 5 | after 3 calm feedbacks, D = Σ(F_base + [δ + η(1 − δ)]F_enh), δ through 1/8 … 1 | [`probe_share`], [`DELTA_SEQUENCE`] |
//! | §2.3 | the receiver's deficit made up by momentarily smaller frames | [`BufferSender::plan_window`] |
//! | §2.2 | base layer never truncated: "the stream is simply cut off" | [`StopReason`] |
//! | §2.4 eq. 6 | feedback every T_fb_k = η·T_fb, T_fb = T_s/2 | [`feedback_interval`], [`BufferReceiver::poll_feedback`] |
//!
//! Nothing here reads a clock or knows the media crate: frames are plain
//! sizes in bits ([`FrameSizes`]) and every call that depends on time takes
//! `now`. A `now` earlier than one already seen is taken as that one.
//! The sender plans windows of frames, not packets, so it is not a
//! [`RateController`](super::RateController): its driver paces each
//! window's bytes at the plan's rate.
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
//! **Sender** ([`BufferSender`]):
//! 1. [`plan_window`](BufferSender::plan_window) with the frames of the
//!    next window ([`BufferConfig::frames_per_window`] of them, fewer at
//!    the end of the stream) at the start and whenever `now` reaches
//!    [`next_timeout`](BufferSender::next_timeout); send each frame's
//!    [`FramePlan`] bytes from its `send_at`, paced at the plan's rate;
//! 2. [`on_feedback`](BufferSender::on_feedback) for each feedback that
//!    arrives;
//! 3. on [`BufferError::Stopped`] end the stream: the base layer no longer
//!    fits.
//!
//! # Where the paper is silent
//!
//! - **Playout.** The receiver plays out on its own clock, not the
//!   driver's player: playback starts (and, after the buffer ran dry,
//!   resumes) once the frames held span T_s of media, from the first held
//!   to the newest (frames lost on the way included: the pre-roll is a
//!   time, not a count, so that steady losses do not lengthen it and hide
//!   themselves), one of them at least decodable; when it (re)starts at t₀ with frame
//!   k₀, frame k is due at t₀ + (k − k₀)·`frame_interval`. A frame is in
//!   the buffer from its first arriving bit until it is due, as in the
//!   media crate's player; a frame that arrives after it was due is late
//!   and not buffered; a missing frame is skipped while later ones are
//!   held. A frame counts as *decodable* once its whole base layer has
//!   arrived (its size from [`ReceivedFrame::full`]; without it, every
//!   frame held counts); one due without it is skipped unshown
//!   ([`BufferReceiver::undecodable_frames`]), and a frame due with no
//!   decodable frame held is an underrun. Occupancy in time is the number
//!   of decodable frames held times the frame interval, so losses that
//!   cost frames lower it as the paper's "packet losses … that result in a
//!   significant reduction in the buffer occupancy" asks (counting frames
//!   that arrived in part would hide them: measured in the simulator, a
//!   250 kbit/s video on a 60 kbit/s link lost 2461 packets in 60 s with
//!   the buffer at 1.7 s and no congestion reported).
//! - **Deficit.** The receiver reports T_s minus its *span*, how long
//!   playback would last without arrivals (lost frames before the newest
//!   included), not minus the occupancy: sending earlier refills time, it
//!   cannot bring lost frames back, and a deficit counted in frames held
//!   would send the sender ahead without bound under steady loss (measured
//!   in the closed-loop test before this choice: 3.2 s buffered after a
//!   lossy spell, the make-up hiding the losses from eq. 1). The sender
//!   makes it up by sending each window's media in less real time at the
//!   same rate, at most [`BufferConfig::max_make_up_share`] of a window
//!   per window, the saved time coming out of the enhancement layer. A
//!   feedback's deficit replaces the one before; what was made up since it
//!   was sent is not subtracted, so the buffer may overshoot T_s by about
//!   a window's make-up.
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
//! - **η is taken at congestion.** The sender applies the η of the latest
//!   feedback that reported congestion, and holds it while it probes
//!   (eq. 5): outside congestion the buffer holds frames already thinned,
//!   and a fresh η would shrink the stream further on a calm path.
//! - **δ** steps once per calm feedback (see [`DELTA_SEQUENCE`]).
//! - **Cut-off.** The stream stops when the receiver reports an underrun
//!   after the sender has sent the base layer alone for
//!   [`BufferConfig::dry_buffer_grace`] (the base no longer fits the path),
//!   or, in `tfrc-capped` mode, when the TCP-friendly cap stays below the
//!   base layer's rate until the schedule has fallen
//!   [`BufferConfig::base_lag_tolerance`] behind (windows below the cap
//!   are stretched, never sent above it, until then).

mod config;
mod equations;
mod playout;
mod receiver;
mod recovery;
mod sender;

use std::time::Duration;

use crate::units::Rate;

pub use config::{
    BufferConfig, BufferConfigError, BufferMode, UnknownBufferMode, MAX_FRAME_INTERVAL,
    MIN_FRAME_INTERVAL,
};
pub use equations::{
    eta, feedback_interval, frame_bits, probe_share, scheduled_bits, tcp_friendly_rate,
};
pub use playout::FrameArrival;
pub use receiver::{BufferReceiver, ReceivedFrame};
pub use recovery::DELTA_SEQUENCE;
pub use sender::{BufferSender, FeedbackVerdict, FramePlan, WindowPlan};

/// The most frames a receiver holds; a frame beyond is refused
/// ([`FrameArrival::OutOfRange`]). 65,536 frames are 43 minutes at 25 fps.
pub const MAX_HELD_FRAMES: usize = 1 << 16;

/// How far ahead of the next frame to play a frame's index may be, in
/// frames; farther is refused ([`FrameArrival::OutOfRange`]).
pub const MAX_FRAMES_AHEAD: u64 = 1 << 20;

/// The most frames in one window given to [`BufferSender::plan_window`].
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

impl FrameSizes {
    /// `bits` all in one layer: the base layer, or the enhancement layer
    /// when `enhancement` (a part of a frame that carries one layer, or a
    /// frame of a temporal layer above the first).
    pub fn in_layer(enhancement: bool, bits: u64) -> FrameSizes {
        if enhancement {
            FrameSizes {
                base_bits: 0,
                enhancement_bits: bits,
            }
        } else {
            FrameSizes {
                base_bits: bits,
                enhancement_bits: 0,
            }
        }
    }
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

/// Why the sender stopped: the base layer does not fit (paper 004 §2.2:
/// "If congestion reaches such a level that the base layer has to be
/// truncated then the stream is simply cut off").
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum StopReason {
    /// `tfrc-capped`: the TCP-friendly cap stayed below the base layer's
    /// rate until the schedule fell more than the tolerance behind.
    #[error(
        "the base layer needs {base_rate} but the TCP-friendly cap is {cap}; \
         the schedule would fall {lag:?} behind"
    )]
    BaseLayerDoesNotFit {
        /// The base layer's rate over the window's media time.
        base_rate: Rate,
        /// The cap the caller passed.
        cap: Rate,
        /// How far behind the schedule would have fallen.
        lag: Duration,
    },
    /// The receiver's buffer ran dry while only the base layer was sent.
    #[error("the receiver's buffer ran dry after {base_only_for:?} of the base layer alone")]
    BufferRanDry {
        /// How long only the base layer had been sent.
        base_only_for: Duration,
        /// The underruns the receiver had counted.
        underruns: u64,
    },
}

/// What a [`BufferSender`] refuses.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum BufferError {
    /// The stream is cut off; every later call says so again.
    #[error("the stream is cut off: {0}")]
    Stopped(StopReason),
    /// A window needs at least one frame.
    #[error("a window needs at least one frame")]
    EmptyWindow,
    /// More frames than [`MAX_WINDOW_FRAMES`] in one window.
    #[error("{frames} frames in one window; at most {max}", max = MAX_WINDOW_FRAMES)]
    TooManyFrames {
        /// How many were given.
        frames: usize,
    },
}

#[cfg(test)]
mod tests;
