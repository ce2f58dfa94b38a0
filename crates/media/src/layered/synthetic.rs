//! Synthetic FGS traces at a given base and total rate, deterministic for a
//! seed (paper 004's videos are "FGS MPEG-4 video traces encoded at CBR 250
//! kbits/sec", §3, and no such trace is public).

use std::time::Duration;

use fairstream_proto::units::Rate;

use super::{Enhancement, LayeredError, LayeredFrame, MAX_FRAME_BYTES, MAX_TRACE_FRAMES};
use crate::h264::FrameType;

/// The most an I frame's base layer may outweigh a P frame's.
const MAX_I_FRAME_RATIO: f64 = 1000.0;

/// The highest frame rate, as for every media source (`stream`).
const MAX_FPS: f64 = 240.0;

/// What [`fgs_trace`] makes, and the model it follows.
///
/// The model is ours (paper 004 gives only the rate):
///
/// - frame k (from 0) is number k + 1, as EvalVid numbers them, sent at
///   k / `fps` (to the nanosecond); the first frame of every GOP of `gop`
///   frames is an I frame, the others P frames;
/// - the bytes through frame k of each layer are round(rate · k / `fps`), taken at
///   each GOP's end, so every whole GOP carries `base_rate` · `gop` / `fps`
///   bytes of base layer, and (`total_rate` − `base_rate`) · `gop` / `fps`
///   of enhancement, each within one byte; the frames of a GOP share its
///   bytes exactly (cumulative rounding);
/// - within a GOP, a frame's share of the base layer is in proportion to
///   its weight, `i_frame_ratio` for the I frame and 1 for a P frame, times
///   1 + `variation` · u, u uniform in [−1, 1) from the seed;
/// - its share of the enhancement (one FGS layer) is in proportion to
///   1 + `variation` · u′ alone: FGS codes the residual left by the base
///   layer in bit planes up to the rate, whatever the frame's type, so the
///   I/P difference stays in the base layer.
#[derive(Clone, Debug, PartialEq)]
pub struct FgsTraceConfig {
    /// Frames per second, (0, 240].
    pub fps: f64,
    /// How many frames, 1 to [`MAX_TRACE_FRAMES`].
    pub frames: usize,
    /// The base layer's mean rate over a GOP; above zero.
    pub base_rate: Rate,
    /// Base and enhancement's mean rate over a GOP; at least `base_rate`,
    /// and at most [`MAX_FRAME_BYTES`] a frame on average.
    pub total_rate: Rate,
    /// Frames a GOP, an I frame and P frames; at least 1.
    pub gop: usize,
    /// How many times a P frame's base layer an I frame's is, 1 to 1000.
    pub i_frame_ratio: f64,
    /// How much a frame's size varies at random, [0, 1): 0.2 gives frames
    /// within ±20 % of their share.
    pub variation: f64,
    /// The seed of the variation.
    pub seed: u64,
}

impl Default for FgsTraceConfig {
    /// Ten seconds at 30 frames a second, 250 kbit/s in all (paper 004 §3),
    /// 100 kbit/s of it base layer (our choice: the paper does not say),
    /// a GOP of 15 frames with I frames three times a P frame's base.
    fn default() -> Self {
        FgsTraceConfig {
            fps: 30.0,
            frames: 300,
            base_rate: Rate::from_bits_per_sec(100_000.0),
            total_rate: Rate::from_bits_per_sec(250_000.0),
            gop: 15,
            i_frame_ratio: 3.0,
            variation: 0.2,
            seed: 1,
        }
    }
}

/// An [`FgsTraceConfig`] out of range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FgsTraceError {
    /// The frame rate.
    #[error("frame rate {0} is outside (0, {MAX_FPS}]")]
    Fps(f64),
    /// The frame count.
    #[error("{0} frames: a trace has 1 to {MAX_TRACE_FRAMES}")]
    Frames(usize),
    /// The GOP.
    #[error("a GOP of {0} frames: a GOP has at least one")]
    Gop(usize),
    /// The base rate.
    #[error("base rate {0}: it must be above zero and finite")]
    BaseRate(Rate),
    /// The total rate.
    #[error(
        "total rate {total}: it must be at least the base rate ({base}) and at most \
         {MAX_FRAME_BYTES} bytes a frame"
    )]
    TotalRate {
        /// The total rate.
        total: Rate,
        /// The base rate.
        base: Rate,
    },
    /// The I frame ratio.
    #[error("I frame ratio {0} is outside [1, {MAX_I_FRAME_RATIO}]")]
    IFrameRatio(f64),
    /// The variation.
    #[error("variation {0} is outside [0, 1)")]
    Variation(f64),
    /// A frame beyond a frame's bounds (a large I frame at a high rate).
    #[error(transparent)]
    Frame(#[from] LayeredError),
}

impl FgsTraceConfig {
    fn check(&self) -> Result<(), FgsTraceError> {
        if !(self.fps > 0.0 && self.fps <= MAX_FPS) {
            return Err(FgsTraceError::Fps(self.fps));
        }
        if !(1..=MAX_TRACE_FRAMES).contains(&self.frames) {
            return Err(FgsTraceError::Frames(self.frames));
        }
        if self.gop == 0 {
            return Err(FgsTraceError::Gop(self.gop));
        }
        let base = self.base_rate.bytes_per_sec();
        if !(base > 0.0 && base.is_finite()) {
            return Err(FgsTraceError::BaseRate(self.base_rate));
        }
        let total = self.total_rate.bytes_per_sec();
        if !(total >= base && total / self.fps <= MAX_FRAME_BYTES as f64) {
            return Err(FgsTraceError::TotalRate {
                total: self.total_rate,
                base: self.base_rate,
            });
        }
        if !(1.0..=MAX_I_FRAME_RATIO).contains(&self.i_frame_ratio) {
            return Err(FgsTraceError::IFrameRatio(self.i_frame_ratio));
        }
        if !(0.0..1.0).contains(&self.variation) {
            return Err(FgsTraceError::Variation(self.variation));
        }
        Ok(())
    }
}

/// A synthetic FGS trace as `config` describes it (the model is at
/// [`FgsTraceConfig`]); the same config gives the same frames.
pub fn fgs_trace(config: &FgsTraceConfig) -> Result<Vec<LayeredFrame>, FgsTraceError> {
    config.check()?;
    let base_per_frame = config.base_rate.bytes_per_sec() / config.fps;
    let enhancement_per_frame =
        (config.total_rate.bytes_per_sec() - config.base_rate.bytes_per_sec()) / config.fps;
    let mut random = SplitMix64(config.seed);
    let mut frames = Vec::with_capacity(config.frames);
    let mut start = 0;
    while start < config.frames {
        let end = start.saturating_add(config.gop).min(config.frames);
        let mut base_weights = Vec::with_capacity(end - start);
        let mut enhancement_weights = Vec::with_capacity(end - start);
        for k in start..end {
            let size = if k == start {
                config.i_frame_ratio
            } else {
                1.0
            };
            base_weights.push(size * (1.0 + config.variation * random.symmetric()));
            enhancement_weights.push(1.0 + config.variation * random.symmetric());
        }
        let base = share_out(
            bytes_through(base_per_frame, end) - bytes_through(base_per_frame, start),
            &base_weights,
        );
        let enhancement = share_out(
            bytes_through(enhancement_per_frame, end) - bytes_through(enhancement_per_frame, start),
            &enhancement_weights,
        );
        for ((k, base_bytes), enhancement_bytes) in (start..end).zip(base).zip(enhancement) {
            let frame_type = if k == start {
                FrameType::I
            } else {
                FrameType::P
            };
            // Float-to-integer casts saturate: an absurd time is refused by
            // `LayeredFrame::new`, not wrapped.
            let time = Duration::from_nanos((k as f64 * 1e9 / config.fps).round() as u64);
            frames.push(LayeredFrame::new(
                k as u64 + 1,
                frame_type,
                time,
                base_bytes,
                Enhancement::Fgs {
                    bytes: enhancement_bytes,
                },
            )?);
        }
        start = end;
    }
    Ok(frames)
}

/// The bytes of a layer through `frames` frames at `per_frame` bytes a
/// frame, to the nearest byte; non-decreasing in `frames`. (At most 2^44,
/// well within a float's exact integers, after `check`.)
fn bytes_through(per_frame: f64, frames: usize) -> u64 {
    (per_frame * frames as f64).round() as u64
}

/// `total` bytes shared out in proportion to `weights` (positive), adding
/// up to `total` exactly: each frame gets the rounded cumulative share
/// through it less the one before.
fn share_out(total: u64, weights: &[f64]) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    let mut cumulative = 0.0;
    let mut before = 0u64;
    let mut shares = Vec::with_capacity(weights.len());
    for (i, weight) in weights.iter().enumerate() {
        cumulative += weight;
        let through = if i + 1 == weights.len() {
            total
        } else {
            ((total as f64 * cumulative / sum).round() as u64).min(total)
        };
        shares.push(through.saturating_sub(before));
        before = before.max(through);
    }
    shares
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): small, seeded, and its output never changes
/// under a dependency update. The simulator's `SimRng` (xoshiro256**) is
/// out of reach: `fairstream-sim` depends on this crate.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [−1, 1), 53 bits of precision.
    fn symmetric(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each whole GOP's base and total bytes against the rates.
    fn gop_errors(config: &FgsTraceConfig, frames: &[LayeredFrame]) -> (f64, f64) {
        let mut worst = (0.0f64, 0.0f64);
        for gop in frames.chunks_exact(config.gop) {
            let seconds = config.gop as f64 / config.fps;
            let base: u64 = gop.iter().map(LayeredFrame::base_bytes).sum();
            let total: u64 = gop.iter().map(LayeredFrame::total_bytes).sum();
            let base_error = base as f64 - config.base_rate.bytes_per_sec() * seconds;
            let total_error = total as f64 - config.total_rate.bytes_per_sec() * seconds;
            worst.0 = worst.0.max(base_error.abs());
            worst.1 = worst.1.max(total_error.abs());
        }
        worst
    }

    #[test]
    fn the_default_trace_has_the_rates_in_every_gop() {
        let config = FgsTraceConfig::default();
        let frames = fgs_trace(&config).unwrap();
        assert_eq!(frames.len(), 300);
        let (base_error, total_error) = gop_errors(&config, &frames);
        // 100 kbit/s over half a second: 6250 bytes a GOP, to the byte.
        assert!(base_error <= 1.0, "{base_error}");
        assert!(total_error <= 2.0, "{total_error}");
        // Over the whole trace: 10 s of 100 and 250 kbit/s.
        let base: u64 = frames.iter().map(LayeredFrame::base_bytes).sum();
        let total: u64 = frames.iter().map(LayeredFrame::total_bytes).sum();
        assert_eq!((base, total), (125_000, 312_500));
        assert_eq!(frames[0].frame_type(), FrameType::I);
        assert_eq!(frames[15].frame_type(), FrameType::I);
        assert_eq!(frames[16].frame_type(), FrameType::P);
        assert_eq!(frames[299].number(), 300);
        assert_eq!(frames[3].time(), Duration::from_millis(100));
        assert_eq!(frames[1].time(), Duration::from_nanos(33_333_333));
        assert!(frames
            .iter()
            .all(|f| matches!(f.enhancement(), Enhancement::Fgs { .. })));
    }

    #[test]
    fn i_frames_carry_more_base_layer_and_the_same_enhancement() {
        let config = FgsTraceConfig {
            frames: 3000,
            ..FgsTraceConfig::default()
        };
        let frames = fgs_trace(&config).unwrap();
        let mean = |kind: FrameType, bytes: fn(&LayeredFrame) -> u64| {
            let of_kind: Vec<u64> = frames
                .iter()
                .filter(|f| f.frame_type() == kind)
                .map(bytes)
                .collect();
            of_kind.iter().sum::<u64>() as f64 / of_kind.len() as f64
        };
        let ratio = mean(FrameType::I, LayeredFrame::base_bytes)
            / mean(FrameType::P, LayeredFrame::base_bytes);
        assert!((ratio - 3.0).abs() < 0.15, "I/P base ratio {ratio}");
        let ratio = mean(FrameType::I, LayeredFrame::enhancement_bytes)
            / mean(FrameType::P, LayeredFrame::enhancement_bytes);
        assert!((ratio - 1.0).abs() < 0.05, "I/P enhancement ratio {ratio}");
    }

    #[test]
    fn a_seed_gives_the_same_trace_and_another_seed_another() {
        let config = FgsTraceConfig::default();
        assert_eq!(fgs_trace(&config).unwrap(), fgs_trace(&config).unwrap());
        let other = FgsTraceConfig {
            seed: 2,
            ..config.clone()
        };
        assert_ne!(fgs_trace(&config).unwrap(), fgs_trace(&other).unwrap());
        // Without variation the seed does not matter.
        let flat = FgsTraceConfig {
            variation: 0.0,
            ..config
        };
        let flat_other = FgsTraceConfig {
            seed: 9,
            ..flat.clone()
        };
        assert_eq!(fgs_trace(&flat).unwrap(), fgs_trace(&flat_other).unwrap());
    }

    #[test]
    fn the_generator_is_splitmix64() {
        // Steele, Lea and Flood's reference output from state 0.
        let mut random = SplitMix64(0);
        assert_eq!(random.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert!((0..1000)
            .map(|_| random.symmetric())
            .all(|u| (-1.0..1.0).contains(&u)));
    }

    #[test]
    fn shares_add_up_exactly() {
        assert_eq!(share_out(10, &[1.0, 1.0, 1.0]), vec![3, 4, 3]);
        assert_eq!(share_out(0, &[3.0, 1.0]), vec![0, 0]);
        assert_eq!(share_out(7, &[1.0]), vec![7]);
        assert_eq!(share_out(100, &[3.0, 1.0]), vec![75, 25]);
    }

    #[test]
    fn a_last_partial_gop_gets_its_frames_worth() {
        let config = FgsTraceConfig {
            frames: 20,
            total_rate: Rate::from_bits_per_sec(100_000.0),
            ..FgsTraceConfig::default()
        };
        let frames = fgs_trace(&config).unwrap();
        // Frames 16-20: 5 of 30 a second at 12,500 bytes a second.
        let tail: u64 = frames[15..].iter().map(LayeredFrame::total_bytes).sum();
        assert!((2083..=2084).contains(&tail), "{tail}");
        assert!(frames.iter().all(|f| f.enhancement_bytes() == 0));
    }

    #[test]
    fn configs_out_of_range_are_refused() {
        let good = FgsTraceConfig::default();
        let kbit = |k: f64| Rate::from_bits_per_sec(k * 1000.0);
        for (bad, needle) in [
            (
                FgsTraceConfig {
                    fps: 0.0,
                    ..good.clone()
                },
                "frame rate 0",
            ),
            (
                FgsTraceConfig {
                    fps: f64::NAN,
                    ..good.clone()
                },
                "frame rate NaN",
            ),
            (
                FgsTraceConfig {
                    frames: 0,
                    ..good.clone()
                },
                "0 frames",
            ),
            (
                FgsTraceConfig {
                    gop: 0,
                    ..good.clone()
                },
                "GOP of 0",
            ),
            (
                FgsTraceConfig {
                    base_rate: Rate::ZERO,
                    ..good.clone()
                },
                "base rate",
            ),
            (
                FgsTraceConfig {
                    base_rate: Rate::INFINITY,
                    ..good.clone()
                },
                "base rate",
            ),
            (
                FgsTraceConfig {
                    total_rate: kbit(99.0),
                    ..good.clone()
                },
                "total rate",
            ),
            (
                FgsTraceConfig {
                    total_rate: Rate::INFINITY,
                    ..good.clone()
                },
                "total rate",
            ),
            (
                FgsTraceConfig {
                    i_frame_ratio: 0.5,
                    ..good.clone()
                },
                "I frame ratio",
            ),
            (
                FgsTraceConfig {
                    variation: 1.0,
                    ..good.clone()
                },
                "variation 1",
            ),
            (
                FgsTraceConfig {
                    variation: -0.1,
                    ..good.clone()
                },
                "variation",
            ),
        ] {
            let error = fgs_trace(&bad).unwrap_err().to_string();
            assert!(error.contains(needle), "{error}");
        }
        // A GOP's I frame beyond the frame bound: refused, not wrapped.
        let huge = FgsTraceConfig {
            base_rate: kbit(3_000_000.0),
            total_rate: kbit(3_000_000.0),
            gop: 250,
            i_frame_ratio: 1000.0,
            ..good
        };
        let error = fgs_trace(&huge).unwrap_err();
        assert!(
            matches!(
                error,
                FgsTraceError::Frame(LayeredError::FrameTooLarge { number: 1, .. })
            ),
            "{error}"
        );
    }
}
