//! The server side of paper 004 (§2.3): a smoothing window of 1 s whose
//! frames are thinned to D_txn (eq. 3) or D (eq. 5) and sent uniformly, the
//! receiver's deficit made up, the base layer never truncated. The driver
//! contract is in the [parent module](super).

use std::time::Duration;

use crate::time::Instant;
use crate::units::Rate;

use super::equations::{eta, frame_bits, layer_totals, MeanFrameBits};
use super::playout::frames_duration;
use super::recovery::Recovery;
use super::{
    BufferConfig, BufferConfigError, BufferError, BufferFeedback, BufferMode, FrameSizes, Share,
    StopReason, MAX_WINDOW_FRAMES,
};

/// What to send of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramePlan {
    /// The whole base layer, rounded up to whole bytes.
    pub base_bytes: u64,
    /// The first bytes of the enhancement layer (FGS: truncated at a byte),
    /// rounded down.
    pub enhancement_bytes: u64,
    /// When its first byte leaves: the window's bytes are spread uniformly
    /// over the window (§2.3: "uniformly distributed and transmitted over
    /// 1 sec").
    pub send_at: Instant,
}

/// One window's schedule, from [`BufferSender::plan_window`].
#[derive(Clone, Debug, PartialEq)]
pub struct WindowPlan {
    /// When the window's first byte leaves.
    pub start: Instant,
    /// The real time the window is sent over: its media time, less the
    /// make-up, or more when the base layer alone exceeds the cap.
    pub duration: Duration,
    /// The media time of its frames.
    pub media_duration: Duration,
    /// Media time gained on the receiver's deficit (§2.3).
    pub make_up: Duration,
    /// The rate the window's bytes are paced at.
    pub pacing_rate: Rate,
    /// The share of the enhancement layer eq. 3 or eq. 5 schedules:
    /// δ + η(1 − δ).
    pub schedule_share: Share,
    /// The share actually sent, after the cap and the make-up.
    pub enhancement_share: Share,
    /// The TCP-friendly cap lowered the rate (`tfrc-capped`).
    pub capped: bool,
    /// The frames, in the order given.
    pub frames: Vec<FramePlan>,
}

impl WindowPlan {
    /// When the next window starts.
    pub fn end(&self) -> Instant {
        self.start + self.duration
    }

    /// Bytes of the base layer.
    pub fn base_bytes(&self) -> u64 {
        self.frames
            .iter()
            .map(|f| f.base_bytes)
            .fold(0, u64::saturating_add)
    }

    /// Bytes of the enhancement layer.
    pub fn enhancement_bytes(&self) -> u64 {
        self.frames
            .iter()
            .map(|f| f.enhancement_bytes)
            .fold(0, u64::saturating_add)
    }

    /// All the bytes of the window.
    pub fn total_bytes(&self) -> u64 {
        self.base_bytes().saturating_add(self.enhancement_bytes())
    }
}

/// What the sender made of a feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackVerdict {
    /// Older than one already taken (by its sequence number): ignored.
    Stale,
    /// Congestion (eq. 1): η taken, δ back to 0.
    Congestion,
    /// The buffer above T_c: one calm feedback more.
    Calm,
    /// Neither (the receiver's thresholds differ from the sender's): the
    /// calm run ends, nothing else changes.
    Unsettled,
}

/// The sender (see the [parent module](super)).
#[derive(Clone, Debug)]
pub struct BufferSender {
    config: BufferConfig,
    recovery: Recovery,
    /// Full frame sizes planned, for B_av_size.
    full_sizes: MeanFrameBits,
    next_window_at: Option<Instant>,
    last_now: Instant,
    deficit_remaining: Duration,
    last_feedback_seq: Option<u64>,
    last_underruns: u64,
    /// Since when every window carried the base layer alone.
    base_only_since: Option<Instant>,
    /// How far windows stretched by the cap have put the schedule behind.
    base_lag: Duration,
    stopped: Option<StopReason>,
    windows: u64,
}

impl BufferSender {
    /// A sender of the full stream (δ = 1, η = 1), or the first value
    /// `config` has out of range.
    pub fn new(config: BufferConfig) -> Result<BufferSender, BufferConfigError> {
        config.validate()?;
        Ok(BufferSender {
            recovery: Recovery::new(config.calm_feedbacks),
            full_sizes: MeanFrameBits::default(),
            next_window_at: None,
            last_now: Instant::ZERO,
            deficit_remaining: Duration::ZERO,
            last_feedback_seq: None,
            last_underruns: 0,
            base_only_since: None,
            base_lag: Duration::ZERO,
            stopped: None,
            windows: 0,
            config,
        })
    }

    // --- getters ---

    /// The configuration.
    pub fn config(&self) -> &BufferConfig {
        &self.config
    }

    /// Why the stream was cut off; `None` while it runs.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stopped
    }

    /// η in use: that of the last congestion feedback, 1 before any.
    pub fn eta(&self) -> Share {
        self.recovery.eta()
    }

    /// δ of eq. 5: 0 after congestion, then [`DELTA_SEQUENCE`](super::DELTA_SEQUENCE)'s
    /// values; 1 is the full stream.
    pub fn delta(&self) -> Share {
        self.recovery.delta()
    }

    /// Calm feedbacks in a row.
    pub fn calm_feedbacks(&self) -> u32 {
        self.recovery.calm()
    }

    /// The share of the enhancement layer the next window schedules
    /// (before a cap and the make-up): δ + η(1 − δ).
    pub fn schedule_share(&self) -> Share {
        self.recovery.share()
    }

    /// B_av_size as the paper computes it at the server: the mean full
    /// frame planned times the frames in T_s; `None` before any window.
    pub fn full_buffer_bits(&self) -> Option<f64> {
        self.full_sizes.buffer_bits(self.config.frames_in_preroll())
    }

    /// The receiver's deficit not yet made up.
    pub fn deficit_remaining(&self) -> Duration {
        self.deficit_remaining
    }

    /// How far behind its schedule the cap has put the base layer.
    pub fn base_lag(&self) -> Duration {
        self.base_lag
    }

    /// Windows planned.
    pub fn windows_planned(&self) -> u64 {
        self.windows
    }

    /// When the next window should be planned; `None` once stopped (and
    /// before the first window: plan it at once).
    pub fn next_timeout(&self) -> Option<Instant> {
        if self.stopped.is_some() {
            return None;
        }
        self.next_window_at
    }

    // --- inputs ---

    /// A feedback arrived at `now`. Congestion (eq. 1, as the receiver
    /// found it) takes η = B_av_obs / B_av_size (eq. 2, with the sender's
    /// B_av_size, as §2.2 computes it "at the server"; the receiver's η
    /// before the first window) and sets δ to 0; a feedback with the buffer
    /// above T_c counts towards probing (eq. 5). An underrun reported after
    /// [`BufferConfig::dry_buffer_grace`] of the base layer alone stops
    /// the stream.
    pub fn on_feedback(
        &mut self,
        now: Instant,
        feedback: &BufferFeedback,
    ) -> Result<FeedbackVerdict, BufferError> {
        if let Some(reason) = self.stopped {
            return Err(BufferError::Stopped(reason));
        }
        let now = now.max(self.last_now);
        self.last_now = now;
        if self
            .last_feedback_seq
            .is_some_and(|last| feedback.seq <= last)
        {
            return Ok(FeedbackVerdict::Stale);
        }
        self.last_feedback_seq = Some(feedback.seq);
        // Paper 004 §2.3: "the server also schedules the data to be
        // transmitted taking into consideration the receiver buffer deficit
        // to be made up". The newest report replaces the older.
        self.deficit_remaining = feedback.deficit.min(self.config.preroll);
        if feedback.underruns > self.last_underruns {
            self.last_underruns = feedback.underruns;
            // Paper 004 §2.2: "If congestion reaches such a level that the
            // base layer has to be truncated then the stream is simply cut
            // off": the buffer ran dry on the base layer alone.
            if let Some(since) = self.base_only_since {
                let base_only_for = now - since;
                if base_only_for >= self.config.dry_buffer_grace {
                    return Err(self.stop(StopReason::BufferRanDry {
                        base_only_for,
                        underruns: feedback.underruns,
                    }));
                }
            }
        }
        if feedback.congested {
            let eta = match self.full_buffer_bits() {
                // Paper 004 eq. 2: η = B_av_obs / B_av_size.
                Some(full) => eta(feedback.average_occupancy_bits as f64, full),
                None => feedback.eta,
            };
            self.recovery.on_congestion(eta);
            Ok(FeedbackVerdict::Congestion)
        } else if feedback.occupancy > self.config.congestion_threshold {
            // Paper 004 §2.3: "in the absence of congestion the receiver
            // temporal buffer length is consistently greater than the
            // congestion threshold".
            self.recovery.on_calm();
            Ok(FeedbackVerdict::Calm)
        } else {
            self.recovery.on_unsettled();
            Ok(FeedbackVerdict::Unsettled)
        }
    }

    // --- outputs ---

    /// The schedule of the next window: `frames` are its frames in order
    /// (N = [`BufferConfig::frames_per_window`], fewer at the end of the
    /// stream), `rate_cap` the TCP-friendly rate for it in `tfrc-capped`
    /// mode (`None`: no cap yet; ignored in `paper` mode). The window
    /// starts at `now`, or when the previous one ends if that is later.
    ///
    /// The data is D = Σ(F_base_k + [δ + η(1 − δ)]·F_enh_k) (eq. 5; eq. 3
    /// at δ = 0), sent uniformly over the window's media time (N frame
    /// intervals) at D over that time, or at the cap if that is lower, with
    /// the enhancement cut to fit. A deficit reported by
    /// the receiver is made up by sending the media in less time at the
    /// same rate, with less enhancement. The base layer is always whole;
    /// when the cap cannot carry it the window is sent over as long as the
    /// base layer needs at the cap, until that puts the schedule more than
    /// [`BufferConfig::base_lag_tolerance`] behind: then the stream stops.
    pub fn plan_window(
        &mut self,
        now: Instant,
        frames: &[FrameSizes],
        rate_cap: Option<Rate>,
    ) -> Result<WindowPlan, BufferError> {
        if let Some(reason) = self.stopped {
            return Err(BufferError::Stopped(reason));
        }
        if frames.is_empty() {
            return Err(BufferError::EmptyWindow);
        }
        if frames.len() > MAX_WINDOW_FRAMES {
            return Err(BufferError::TooManyFrames {
                frames: frames.len(),
            });
        }
        let now = now.max(self.last_now);
        self.last_now = now;
        let start = self.next_window_at.map_or(now, |at| at.max(now));
        for frame in frames {
            self.full_sizes.add(frame_bits(*frame));
        }
        let media = frames_duration(self.config.frame_interval, frames.len() as u64);
        let media_s = media.as_secs_f64();
        let base_bits = base_bytes(frames) as f64 * 8.0;
        let enhancement_bits = layer_totals(frames).1 as f64;
        let schedule_share = self.recovery.share();
        // Paper 004 eq. 3 / eq. 5, the base layer in whole bytes; "the
        // amount of video data scheduled for transmission … is uniformly
        // distributed and transmitted over 1 sec" (§2.3).
        let scheduled = base_bits + schedule_share.get() * enhancement_bits;
        let mut rate = scheduled / media_s;
        let mut capped = false;
        if let (BufferMode::TfrcCapped, Some(cap)) = (self.config.mode, rate_cap) {
            let cap_bits = cap.bits_per_sec();
            if base_bits > cap_bits * media_s {
                return self.stretch(start, frames, media, cap);
            }
            if rate > cap_bits {
                rate = cap_bits;
                capped = true;
            }
        }
        self.base_lag = Duration::ZERO;

        // The make-up: at the same rate, `make_up` less real time for the
        // window's media, out of the enhancement layer only.
        let headroom = if rate > 0.0 {
            (media_s - base_bits / rate).max(0.0)
        } else {
            0.0
        };
        let make_up_s = self
            .deficit_remaining
            .as_secs_f64()
            .min(self.config.max_make_up_share * media_s)
            .min(headroom);
        let make_up = Duration::try_from_secs_f64(make_up_s)
            .unwrap_or(Duration::ZERO)
            .min(media);
        // Never shorter than the base layer needs at the rate, to the
        // nanosecond rounded up: a make-up rounded the other way would pace
        // the base layer a hair above the rate (and the cap).
        let base_time = if rate > 0.0 {
            ceil_duration(base_bits / rate).min(media)
        } else {
            Duration::ZERO
        };
        let duration = (media - make_up).max(base_time);
        let make_up = media - duration;
        let budget = (rate * duration.as_secs_f64() - base_bits).max(0.0);
        let share = if enhancement_bits > 0.0 {
            Share::new(budget / enhancement_bits)
        } else {
            Share::ONE
        };
        self.deficit_remaining = self.deficit_remaining.saturating_sub(make_up);
        let shape = Shape {
            start,
            duration,
            media,
            make_up,
            share,
            capped,
        };
        Ok(self.finish(shape, frames))
    }

    // --- internals ---

    /// `tfrc-capped` with the base layer alone above the cap: the base
    /// layer over the time it needs at the cap, or the end of the stream.
    fn stretch(
        &mut self,
        start: Instant,
        frames: &[FrameSizes],
        media: Duration,
        cap: Rate,
    ) -> Result<WindowPlan, BufferError> {
        let base_bits = base_bytes(frames) as f64 * 8.0;
        let needed = ceil_duration(base_bits / cap.bits_per_sec());
        let lag = self.base_lag.saturating_add(needed.saturating_sub(media));
        if lag > self.config.base_lag_tolerance || needed == Duration::MAX {
            let base_rate = Rate::from_bits_per_sec(base_bits / media.as_secs_f64());
            return Err(self.stop(StopReason::BaseLayerDoesNotFit {
                base_rate,
                cap,
                lag,
            }));
        }
        self.base_lag = lag;
        let shape = Shape {
            start,
            duration: needed.max(media),
            media,
            make_up: Duration::ZERO,
            share: Share::ZERO,
            capped: true,
        };
        Ok(self.finish(shape, frames))
    }

    /// The frames' bytes and send times, and the state the window leaves.
    fn finish(&mut self, shape: Shape, frames: &[FrameSizes]) -> WindowPlan {
        let (start, duration, share) = (shape.start, shape.duration, shape.share);
        let mut planned: Vec<FramePlan> = frames
            .iter()
            .map(|f| FramePlan {
                base_bytes: f.base_bits.div_ceil(8),
                enhancement_bytes: enhancement_bytes(f.enhancement_bits, share),
                send_at: start,
            })
            .collect();
        let total_bits: f64 = planned
            .iter()
            .map(|f| (f.base_bytes as f64 + f.enhancement_bytes as f64) * 8.0)
            .sum();
        let seconds = duration.as_secs_f64();
        let rate = if seconds > 0.0 {
            total_bits / seconds
        } else {
            0.0
        };
        // Frame k leaves when the bits before it have: at the pacing rate,
        // that share of the window's duration.
        let mut sent_bits = 0.0;
        for frame in &mut planned {
            if total_bits > 0.0 {
                let nanos = (sent_bits / total_bits * duration.as_nanos() as f64).round();
                // `as` saturates; the share is at most 1.
                frame.send_at = start + Duration::from_nanos(nanos as u64).min(duration);
            }
            sent_bits += (frame.base_bytes as f64 + frame.enhancement_bytes as f64) * 8.0;
        }
        let plan = WindowPlan {
            start,
            duration,
            media_duration: shape.media,
            make_up: shape.make_up,
            pacing_rate: Rate::from_bits_per_sec(rate),
            schedule_share: self.recovery.share(),
            enhancement_share: share,
            capped: shape.capped,
            frames: planned,
        };
        self.next_window_at = Some(plan.end());
        self.windows = self.windows.saturating_add(1);
        if plan.enhancement_bytes() == 0 {
            self.base_only_since.get_or_insert(start);
        } else {
            self.base_only_since = None;
        }
        plan
    }

    fn stop(&mut self, reason: StopReason) -> BufferError {
        self.stopped = Some(reason);
        BufferError::Stopped(reason)
    }
}

/// A window's times and shares, before its frames are laid out.
#[derive(Clone, Copy, Debug)]
struct Shape {
    start: Instant,
    duration: Duration,
    media: Duration,
    make_up: Duration,
    /// The share of each enhancement layer sent.
    share: Share,
    capped: bool,
}

/// Σ ⌈F_base_k / 8⌉: the base layer in whole bytes.
fn base_bytes(frames: &[FrameSizes]) -> u128 {
    frames
        .iter()
        .map(|f| u128::from(f.base_bits.div_ceil(8)))
        .sum()
}

/// ⌊share · F_enh / 8⌋ bytes, never more than the layer's whole bytes.
fn enhancement_bytes(enhancement_bits: u64, share: Share) -> u64 {
    let whole = enhancement_bits / 8;
    // `as` saturates; the f64 of a huge layer may round above it.
    ((share.get() * enhancement_bits as f64 / 8.0).floor() as u64).min(whole)
}

/// `seconds` rounded up to the nanosecond; `Duration::MAX` when too long
/// or not a number (a zero cap).
fn ceil_duration(seconds: f64) -> Duration {
    let nanos = (seconds * 1e9).ceil();
    if !(nanos >= 0.0 && nanos < u64::MAX as f64) {
        return Duration::MAX;
    }
    // In range: the cast is exact up to the f64's own rounding.
    Duration::from_nanos(nanos as u64)
}
