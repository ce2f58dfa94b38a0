//! Paper 004's equations as functions, and the two averages behind η:
//! B_av_obs (a weighted average of the occupancy) and B_av_size (the mean
//! full frame over T_s).

use std::time::Duration;

use super::{FrameSizes, Share};
use crate::cc::equation::tfrc_rate;
use crate::units::Rate;

/// Paper 004 eq. 4: F_k = F_base_k + F_enh_k, the frame's full size in bits.
pub fn frame_bits(frame: FrameSizes) -> u128 {
    u128::from(frame.base_bits) + u128::from(frame.enhancement_bits)
}

/// Paper 004 eq. 2: η = B_av_obs / B_av_size, "the rate adjustment
/// coefficient", clamped to [0, 1] (a buffer fuller than its full size
/// asks for no more than the whole enhancement layer). A full size of zero
/// (a stream of empty frames) or one not known gives η = 1: nothing is
/// missing. NaN averages give 0.
pub fn eta(average_occupancy_bits: f64, full_buffer_bits: f64) -> Share {
    if full_buffer_bits.is_nan() || full_buffer_bits <= 0.0 {
        return Share::ONE;
    }
    // Share::new clamps (and maps the NaN of ∞/∞ to zero).
    Share::new(average_occupancy_bits / full_buffer_bits)
}

/// The coefficient of F_enh_k in paper 004 eq. 5, δ + η(1 − δ): the share
/// of each frame's enhancement layer sent while probing. δ = 0 gives eq. 3's
/// η, δ = 1 the whole layer.
pub fn probe_share(delta: Share, eta: Share) -> Share {
    let (d, e) = (delta.get(), eta.get());
    Share::new(d + e * (1.0 - d))
}

/// Paper 004 eq. 3, D_txn = Σ_{k=1}^{N} (F_base_k + η·F_enh_k): the bits
/// scheduled for one window, with `share` = η; with `share` =
/// [`probe_share`]`(δ, η)` it is eq. 5's D.
pub fn scheduled_bits(frames: &[FrameSizes], share: Share) -> f64 {
    let (base, enhancement) = layer_totals(frames);
    base as f64 + share.get() * enhancement as f64
}

/// Paper 004 eq. 6, T_fb_k = η·T_fb: the next feedback interval, at least
/// `floor` (η can be 0) and at most `max(T_fb, floor)`.
pub fn feedback_interval(eta: Share, max_interval: Duration, floor: Duration) -> Duration {
    let scaled = Duration::try_from_secs_f64(max_interval.as_secs_f64() * eta.get())
        .unwrap_or(max_interval)
        .min(max_interval);
    scaled.max(floor)
}

/// Σ F_base_k and Σ F_enh_k, bits.
pub(super) fn layer_totals(frames: &[FrameSizes]) -> (u128, u128) {
    frames.iter().fold((0, 0), |(b, e), f| {
        (
            b + u128::from(f.base_bits),
            e + u128::from(f.enhancement_bits),
        )
    })
}

/// An exponentially weighted moving average: B_av_obs (paper 004 §2.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Ewma {
    weight: f64,
    value: Option<f64>,
}

impl Ewma {
    /// An average whose newest sample weighs `weight` ∈ (0, 1].
    pub(super) fn new(weight: f64) -> Ewma {
        Ewma {
            weight: weight.clamp(f64::MIN_POSITIVE, 1.0),
            value: None,
        }
    }

    /// The average; `None` before the first sample.
    pub(super) fn value(&self) -> Option<f64> {
        self.value
    }

    /// `count` samples, all equal to `sample`: avg ← s + (avg − s)(1 − w)^k,
    /// which is `count` steps of avg ← w·s + (1 − w)·avg at once (so that a
    /// long quiet stretch costs one step). The first sample starts the
    /// average at itself.
    pub(super) fn update_repeated(&mut self, sample: f64, count: u64) {
        if count == 0 {
            return;
        }
        let keep = (1.0 - self.weight).powf(count as f64);
        self.value = Some(match self.value {
            None => sample,
            Some(avg) => sample + (avg - sample) * keep,
        });
    }
}

/// The mean size of the frames seen, for B_av_size: paper 004 §2.2, "the
/// full buffer size in bits … determined by averaging the bit length of
/// data spanning the specified temporal buffer length". Two counters; no
/// history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct MeanFrameBits {
    frames: u64,
    bits: u128,
}

impl MeanFrameBits {
    /// One more frame of `bits`.
    pub(super) fn add(&mut self, bits: u128) {
        self.frames = self.frames.saturating_add(1);
        self.bits = self.bits.saturating_add(bits);
    }

    /// The mean frame, bits; `None` before the first.
    pub(super) fn mean(&self) -> Option<f64> {
        (self.frames > 0).then(|| self.bits as f64 / self.frames as f64)
    }

    /// B_av_size: the mean frame times the frames in T_s.
    pub(super) fn buffer_bits(&self, frames_in_preroll: f64) -> Option<f64> {
        self.mean().map(|mean| mean * frames_in_preroll)
    }
}

/// The rate a `tfrc-capped` window may not exceed: RFC 5348's TCP
/// throughput equation X = s/(R·f(p)) (§3.1) for the packet size `s`
/// (bytes), the RTT and the loss event rate p the connection measures;
/// before the first loss event (p = 0), twice the receive rate the
/// receiver last reported, as TFRC's slow start allows (§4.3: X = min(2X,
/// 2·X_recv)). `None` (no cap) before an RTT and a receive rate are known,
/// and for a p or s that is not a number above zero.
///
/// Not TFRC's X itself: a sender that paces its own schedule below X is
/// data-limited, and RFC 5348 §4.3 step 4 halves X_recv_set at every new
/// loss event while it is, so X follows the schedule down and the cap
/// never lets it back up (measured on paper 004's dumbbell with a 1 %
/// lossy last hop in `docs/results/paper004.md`).
pub fn tcp_friendly_rate(
    s: f64,
    rtt: Option<Duration>,
    p: f64,
    receive_rate: Rate,
) -> Option<Rate> {
    let rtt = rtt.filter(|r| !r.is_zero())?;
    if p > 0.0 && p <= 1.0 && s > 0.0 {
        tfrc_rate(s, rtt, p).ok()
    } else if p == 0.0 && receive_rate.bits_per_sec() > 0.0 {
        Some(receive_rate.scaled(2.0))
    } else {
        None
    }
}
