//! The configuration of the receiver-buffer controller: paper 004's
//! thresholds and window, with the values the paper leaves open named.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::{MAX_HELD_FRAMES, MAX_WINDOW_FRAMES};

/// The shortest frame interval accepted (a million frames a second).
pub const MIN_FRAME_INTERVAL: Duration = Duration::from_micros(1);
/// The longest frame interval accepted (one frame every ten seconds).
pub const MAX_FRAME_INTERVAL: Duration = Duration::from_secs(10);

/// Which schedule a [`BufferSender`](super::BufferSender) follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BufferMode {
    /// `paper`: paper 004's scheme alone, for reproduction; a rate cap
    /// given to [`plan_window`](super::BufferSender::plan_window) is
    /// ignored.
    #[default]
    Paper,
    /// `tfrc-capped` (our addition): the same schedule, never above the
    /// TCP-friendly rate the caller passes for each window.
    TfrcCapped,
}

impl BufferMode {
    /// The name used in URLs and scenario files: `paper`, `tfrc-capped`.
    pub const fn name(self) -> &'static str {
        match self {
            BufferMode::Paper => "paper",
            BufferMode::TfrcCapped => "tfrc-capped",
        }
    }
}

impl fmt::Display for BufferMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mode name that is neither `paper` nor `tfrc-capped`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown buffer-control mode `{0}`: expected `paper` or `tfrc-capped`")]
pub struct UnknownBufferMode(pub String);

impl FromStr for BufferMode {
    type Err = UnknownBufferMode;

    fn from_str(text: &str) -> Result<BufferMode, UnknownBufferMode> {
        match text {
            "paper" => Ok(BufferMode::Paper),
            "tfrc-capped" => Ok(BufferMode::TfrcCapped),
            other => Err(UnknownBufferMode(other.to_owned())),
        }
    }
}

/// Configuration of a [`BufferReceiver`](super::BufferReceiver) and a
/// [`BufferSender`](super::BufferSender) (both ends use the same values).
///
/// Paper 004 fixes the smoothing window (1 s), the calm feedbacks before
/// probing (3) and T_fb = T_s/2; it gives no numbers for T_s, T_c and
/// T_loss. The defaults are ours: a 2 s pre-roll (one feedback a window at
/// η = 1), congestion at half of it, and T_loss half-way between.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufferConfig {
    /// `paper` or `tfrc-capped`. Default `paper`.
    pub mode: BufferMode,
    /// T_s, the pre-roll: media buffered before playback starts (§2), and
    /// the level the buffer is kept at. Default 2 s.
    pub preroll: Duration,
    /// T_c < T_s: "When the buffer occupancy falls to T_c, congestion is
    /// presumed to have occurred" (§2.1). Default 1 s.
    pub congestion_threshold: Duration,
    /// T_loss, T_c ≤ T_loss < T_s (eq. 1): the threshold while losses are
    /// observed. Default 1.5 s.
    pub loss_threshold: Duration,
    /// The time between frames, 1/fps. Default 40 ms (25 fps, the
    /// simulator's default).
    pub frame_interval: Duration,
    /// One measurement round of B_av_obs (§2.4). Default 100 ms.
    pub measurement_interval: Duration,
    /// The weight of the newest round in B_av_obs, in (0, 1] (§2.4: "giving
    /// a higher weight to the most recent values while also including the
    /// long term behaviour"). Default 0.2: the average follows within about
    /// five rounds, half a second, and never forgets the past entirely.
    pub occupancy_weight: f64,
    /// The least feedback interval: eq. 6 gives η·T_fb, zero at η = 0.
    /// Default 100 ms (a tenth of T_fb).
    pub min_feedback_interval: Duration,
    /// Send a feedback at once when congestion begins, not only every
    /// T_fb_k (T_fb is the *maximum* interval, §2.4). Default on.
    pub feedback_on_congestion: bool,
    /// The sender's smoothing window (§2.3: "Let this smoothing buffer be 1
    /// second of video data"). Default 1 s.
    pub window: Duration,
    /// Feedbacks in a row above T_c before probing starts (§2.3: "over at
    /// least 3 feedback updates"). Default 3.
    pub calm_feedbacks: u32,
    /// At most this share of a window's media time is made up per window
    /// when the receiver reports a deficit, in [0, 1). Default 0.1: a 1 s
    /// window is sent in 0.9 s at the same rate, 100 ms of enhancement
    /// saved. Zero turns the make-up off.
    pub max_make_up_share: f64,
    /// `tfrc-capped`: how far behind its schedule the sender may fall,
    /// sending the base layer alone at the cap, while the cap is below the
    /// base layer's rate; beyond, it stops. At most T_s. Default 1 s
    /// (T_s − T_c: the part of the buffer above the congestion threshold).
    /// Zero stops at the first window whose base layer exceeds the cap.
    pub base_lag_tolerance: Duration,
    /// An underrun stops the stream once only the base layer has been sent
    /// for this long (less, and the buffer may have run dry on what was
    /// sent before the cut). At most T_s. Default 1 s (T_fb).
    pub dry_buffer_grace: Duration,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            mode: BufferMode::Paper,
            preroll: Duration::from_secs(2),
            congestion_threshold: Duration::from_secs(1),
            loss_threshold: Duration::from_millis(1500),
            frame_interval: Duration::from_millis(40),
            measurement_interval: Duration::from_millis(100),
            occupancy_weight: 0.2,
            min_feedback_interval: Duration::from_millis(100),
            feedback_on_congestion: true,
            window: Duration::from_secs(1),
            calm_feedbacks: 3,
            max_make_up_share: 0.1,
            base_lag_tolerance: Duration::from_secs(1),
            dry_buffer_grace: Duration::from_secs(1),
        }
    }
}

/// A [`BufferConfig`] value out of range.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum BufferConfigError {
    /// The frame interval must be in [`MIN_FRAME_INTERVAL`]..=[`MAX_FRAME_INTERVAL`].
    #[error("frame_interval = {0:?} is outside 1µs..=10s")]
    FrameInterval(Duration),
    /// T_s must hold at least one frame and at most [`MAX_HELD_FRAMES`].
    #[error(
        "preroll T_s = {preroll:?} must hold between 1 and {max} frames of {frame_interval:?}",
        max = MAX_HELD_FRAMES
    )]
    Preroll {
        /// T_s.
        preroll: Duration,
        /// The frame interval.
        frame_interval: Duration,
    },
    /// T_c must be below T_s (§2.1).
    #[error("congestion_threshold T_c = {t_c:?} must be below the preroll T_s = {t_s:?}")]
    CongestionThreshold {
        /// T_c.
        t_c: Duration,
        /// T_s.
        t_s: Duration,
    },
    /// T_loss must be in [T_c, T_s) (eq. 1).
    #[error("loss_threshold T_loss = {t_loss:?} is outside [T_c, T_s) = [{t_c:?}, {t_s:?}) (paper 004 eq. 1)")]
    LossThreshold {
        /// T_loss.
        t_loss: Duration,
        /// T_c.
        t_c: Duration,
        /// T_s.
        t_s: Duration,
    },
    /// A measurement round must last at least a nanosecond.
    #[error("measurement_interval must be positive")]
    MeasurementInterval,
    /// The weight of the newest round must be in (0, 1].
    #[error("occupancy_weight = {0} is outside (0, 1]")]
    OccupancyWeight(f64),
    /// The least feedback interval must be in (0, T_fb].
    #[error("min_feedback_interval = {min:?} is outside (0, T_fb = {max:?}]")]
    MinFeedbackInterval {
        /// The value given.
        min: Duration,
        /// T_fb = T_s/2.
        max: Duration,
    },
    /// The window must hold 1 to [`MAX_WINDOW_FRAMES`] frames.
    #[error("window = {0:?} must hold between 1 and {max} frames", max = MAX_WINDOW_FRAMES)]
    Window(Duration),
    /// At least one calm feedback before probing.
    #[error("calm_feedbacks must be at least 1")]
    CalmFeedbacks,
    /// The make-up share must be in [0, 1).
    #[error("max_make_up_share = {0} is outside [0, 1)")]
    MakeUpShare(f64),
    /// The base-layer lag tolerance must not exceed T_s.
    #[error("base_lag_tolerance = {0:?} exceeds the preroll")]
    BaseLagTolerance(Duration),
    /// The dry-buffer grace must not exceed T_s.
    #[error("dry_buffer_grace = {0:?} exceeds the preroll")]
    DryBufferGrace(Duration),
}

impl BufferConfig {
    /// Checks every value; [`BufferReceiver::new`](super::BufferReceiver::new)
    /// and [`BufferSender::new`](super::BufferSender::new) refuse what this
    /// refuses.
    pub fn validate(&self) -> Result<(), BufferConfigError> {
        let fi = self.frame_interval;
        if !(MIN_FRAME_INTERVAL..=MAX_FRAME_INTERVAL).contains(&fi) {
            return Err(BufferConfigError::FrameInterval(fi));
        }
        let preroll_frames = self.preroll_frames();
        if self.preroll < fi || preroll_frames > MAX_HELD_FRAMES as u64 {
            return Err(BufferConfigError::Preroll {
                preroll: self.preroll,
                frame_interval: fi,
            });
        }
        let (t_c, t_s, t_loss) = (self.congestion_threshold, self.preroll, self.loss_threshold);
        // Paper 004 §2.1: "T_c < T_s".
        if t_c >= t_s {
            return Err(BufferConfigError::CongestionThreshold { t_c, t_s });
        }
        // Paper 004 eq. 1: T_c ≤ T_loss < T_s.
        if !(t_c..t_s).contains(&t_loss) {
            return Err(BufferConfigError::LossThreshold { t_loss, t_c, t_s });
        }
        if self.measurement_interval.is_zero() {
            return Err(BufferConfigError::MeasurementInterval);
        }
        let w = self.occupancy_weight;
        if !(w > 0.0 && w <= 1.0) {
            return Err(BufferConfigError::OccupancyWeight(w));
        }
        let max = self.max_feedback_interval();
        if self.min_feedback_interval.is_zero() || self.min_feedback_interval > max {
            return Err(BufferConfigError::MinFeedbackInterval {
                min: self.min_feedback_interval,
                max,
            });
        }
        if self.window < fi || self.frames_per_window() > MAX_WINDOW_FRAMES {
            return Err(BufferConfigError::Window(self.window));
        }
        if self.calm_feedbacks == 0 {
            return Err(BufferConfigError::CalmFeedbacks);
        }
        let m = self.max_make_up_share;
        if !(0.0..1.0).contains(&m) {
            return Err(BufferConfigError::MakeUpShare(m));
        }
        if self.base_lag_tolerance > t_s {
            return Err(BufferConfigError::BaseLagTolerance(self.base_lag_tolerance));
        }
        if self.dry_buffer_grace > t_s {
            return Err(BufferConfigError::DryBufferGrace(self.dry_buffer_grace));
        }
        Ok(())
    }

    /// T_fb, the maximum feedback interval: paper 004 §2.4, "It is
    /// reasonable to take T_fb as half of the temporal buffer size".
    pub fn max_feedback_interval(&self) -> Duration {
        self.preroll / 2
    }

    /// Paper 004 eq. 1: the occupancy at or below which congestion is
    /// detected: T_loss while losses are observed, T_c otherwise.
    pub fn detection_threshold(&self, losses_observed: bool) -> Duration {
        if losses_observed {
            self.loss_threshold
        } else {
            self.congestion_threshold
        }
    }

    /// N, the frames of one window: the window over the frame interval,
    /// rounded to the nearest, at least one.
    pub fn frames_per_window(&self) -> usize {
        let fi = self.frame_interval.as_nanos().max(1);
        let n = (self.window.as_nanos() + fi / 2) / fi;
        usize::try_from(n.max(1)).unwrap_or(usize::MAX)
    }

    /// The frames that make up T_s (rounded up): playback starts when this
    /// many are held.
    pub(super) fn preroll_frames(&self) -> u64 {
        let fi = self.frame_interval.as_nanos().max(1);
        u64::try_from(self.preroll.as_nanos().div_ceil(fi)).unwrap_or(u64::MAX)
    }

    /// T_s in frames, as a real number: B_av_size is this many mean frames.
    pub(super) fn frames_in_preroll(&self) -> f64 {
        self.preroll.as_nanos() as f64 / self.frame_interval.as_nanos().max(1) as f64
    }
}
