//! Video with B-frames: a synthetic EvalVid sender trace of an
//! `IBBP…` GOP in decoding order, and which frames a loss damages once
//! frames refer to each other.
//!
//! Paper 000 §3.2 streams "Paris", H.264 at 30 frame/s, CIF, "intra-refresh
//! rate was every 15 frames with IPBB...I structure, i.e. the GOP size was
//! 15. 1063 frames were transmitted". That clip is not available; the
//! [`gop_trace`] stands in for it: the GOP structure and length of the
//! paper, frame sizes in a fixed I : P : B proportion
//! ([`GOP_TRACE_SIZE_WEIGHTS`]) varied deterministically from a seed, and a
//! mean rate the caller chooses.
//!
//! Decoding order is the order frames are sent: each anchor (I or P) comes
//! before the B-frames displayed before it, so a GOP of 15 with two
//! B-frames goes `I P B B P B B P B B P B B I B B …` (the paper's "IPBB").
//! The last two B-frames of a GOP are displayed before the next I and
//! refer to it (an open GOP, MPEG's usual structure).
//!
//! [`damaged_frames`] applies the references: a P refers to the anchor
//! before it, a B to the two anchors before it in decoding order (the one
//! displayed before it and the one after), an I to nothing. A frame is
//! damaged if it is lost or refers to a damaged frame, so a lost I or P
//! damages the frames that follow it up to the next I (and the B-frames
//! sent just after that I); a lost B damages only itself.

use crate::evalvid::TraceFrame;
use crate::h264::FrameType;

/// The relative sizes of I, P and B frames in [`gop_trace`]: 5 : 2 : 1.
/// Not the Paris clip's (unknown): the order of magnitude H.264 gives at
/// a moderate QP such as the paper's 26, where an I frame costs a few P
/// frames and a B frame about half a P frame.
pub const GOP_TRACE_SIZE_WEIGHTS: [f64; 3] = [5.0, 2.0, 1.0];

/// How far a frame's size strays from its type's mean: uniform within
/// ±25 %.
pub const GOP_TRACE_SPREAD: f64 = 0.25;

/// The largest slice, one packet's payload: paper 000 §3.2, "The slice
/// size was fixed at the codec as 900 B".
pub const GOP_TRACE_SLICE_BYTES: u64 = 900;

/// A synthetic trace's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GopTraceConfig {
    /// Frames in the trace.
    pub frames: u64,
    /// Frames per second (the send times are frame / fps).
    pub fps: f64,
    /// Frames from one I to the next.
    pub gop: u32,
    /// B-frames between two anchors (0: IPPP…).
    pub b_frames: u32,
    /// The mean rate over the trace's duration, bits/s.
    pub mean_rate_bps: f64,
    /// Seed of the sizes' variation.
    pub seed: u64,
}

impl Default for GopTraceConfig {
    /// Paper 000's shape: 1063 frames at 30 frame/s, GOP 15, two B-frames
    /// per anchor; 437 kbit/s, the mean rate that its Table 3 implies
    /// (217 kbit/s × 71.4 s of sending = 15.5 Mbit over 1063 / 30 s).
    fn default() -> Self {
        GopTraceConfig {
            frames: 1063,
            fps: 30.0,
            gop: 15,
            b_frames: 2,
            mean_rate_bps: 437_000.0,
            seed: 1,
        }
    }
}

/// A trace that cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GopTraceError {
    /// A parameter out of its range.
    #[error("synthetic GOP trace: {0}")]
    Invalid(&'static str),
}

/// The frame types of `frames` frames in display order.
fn display_types(frames: u64, gop: u32, b_frames: u32) -> Vec<FrameType> {
    let gop = u64::from(gop.max(1));
    let period = u64::from(b_frames) + 1;
    let mut types: Vec<FrameType> = (0..frames)
        .map(|n| {
            let k = n % gop;
            if k == 0 {
                FrameType::I
            } else if k % period == 0 {
                FrameType::P
            } else {
                FrameType::B
            }
        })
        .collect();
    // The last frame anchors the B-frames before it.
    if let Some(last) = types.last_mut() {
        if *last == FrameType::B {
            *last = FrameType::P;
        }
    }
    types
}

/// Display order to decoding order: each anchor, then the B-frames
/// displayed before it (indices into the display order).
fn decoding_order(types: &[FrameType]) -> Vec<usize> {
    let mut order = Vec::with_capacity(types.len());
    let mut waiting = Vec::new();
    for (n, frame_type) in types.iter().enumerate() {
        if *frame_type == FrameType::B {
            waiting.push(n);
        } else {
            order.push(n);
            order.append(&mut waiting);
        }
    }
    order.append(&mut waiting);
    order
}

/// SplitMix64: the sizes' variation, the same for the same seed.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A synthetic EvalVid sender trace of `config` (see the module
/// documentation), frames numbered from 1 in decoding order, frame i
/// (from 0) sent at i / fps, in slices of at most
/// [`GOP_TRACE_SLICE_BYTES`] (the `packets` column).
pub fn gop_trace(config: &GopTraceConfig) -> Result<Vec<TraceFrame>, GopTraceError> {
    if config.frames == 0 || config.frames > 1_000_000 {
        return Err(GopTraceError::Invalid("frames must be 1 to 1000000"));
    }
    if !(config.fps > 0.0 && config.fps <= 1000.0) {
        return Err(GopTraceError::Invalid("fps must be in (0, 1000]"));
    }
    if config.gop == 0 || config.b_frames >= config.gop {
        return Err(GopTraceError::Invalid(
            "the GOP needs at least one frame and more frames than B-frames in a row",
        ));
    }
    if !(config.mean_rate_bps > 0.0 && config.mean_rate_bps.is_finite()) {
        return Err(GopTraceError::Invalid("the mean rate must be positive"));
    }
    let types = display_types(config.frames, config.gop, config.b_frames);
    let mut state = config.seed;
    let weights: Vec<f64> = types
        .iter()
        .map(|t| {
            let base = match t {
                FrameType::I => GOP_TRACE_SIZE_WEIGHTS[0],
                FrameType::P => GOP_TRACE_SIZE_WEIGHTS[1],
                FrameType::B => GOP_TRACE_SIZE_WEIGHTS[2],
            };
            let unit = (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
            base * (1.0 + GOP_TRACE_SPREAD * (2.0 * unit - 1.0))
        })
        .collect();
    let total_bytes = config.mean_rate_bps / 8.0 * config.frames as f64 / config.fps;
    let scale = total_bytes / weights.iter().sum::<f64>();
    let size = |n: usize| ((weights[n] * scale).round() as u64).max(1);
    Ok(decoding_order(&types)
        .into_iter()
        .enumerate()
        .map(|(i, n)| TraceFrame {
            number: i as u64 + 1,
            frame_type: types[n],
            size_bytes: size(n),
            packets: u32::try_from(size(n).div_ceil(GOP_TRACE_SLICE_BYTES)).unwrap_or(u32::MAX),
            send_time_s: i as f64 / config.fps,
        })
        .collect())
}

/// Which frames are damaged, given the frame types in decoding order and
/// which were `lost` (see the module documentation for the references).
/// Frames beyond the shorter of the two slices are left out.
pub fn damaged_frames(types: &[FrameType], lost: &[bool]) -> Vec<bool> {
    // Whether the last anchor and the one before it decode.
    let (mut previous_ok, mut last_ok) = (true, true);
    types
        .iter()
        .zip(lost)
        .map(|(frame_type, &lost)| match frame_type {
            FrameType::I => {
                previous_ok = last_ok;
                last_ok = !lost;
                lost
            }
            FrameType::P => {
                let ok = !lost && last_ok;
                previous_ok = last_ok;
                last_ok = ok;
                !ok
            }
            FrameType::B => lost || !previous_ok || !last_ok,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letters(types: &[FrameType]) -> String {
        types.iter().map(|t| t.letter()).collect()
    }

    #[test]
    fn the_gop_goes_ipbb_in_decoding_order() {
        let config = GopTraceConfig {
            frames: 32,
            ..GopTraceConfig::default()
        };
        let trace = gop_trace(&config).unwrap();
        let types: Vec<FrameType> = trace.iter().map(|f| f.frame_type).collect();
        // The last frame, a B in the pattern, anchors the two before it.
        assert_eq!(letters(&types), "IPBBPBBPBBPBBIBBPBBPBBPBBPBBIBBP");
        assert_eq!(trace[0].number, 1);
        assert!((trace[30].send_time_s - 1.0).abs() < 1e-12);
        for frame in &trace {
            assert_eq!(u64::from(frame.packets), frame.size_bytes.div_ceil(900));
        }
        assert_eq!(trace.len(), 32);
    }

    #[test]
    fn the_mean_rate_and_the_proportions_hold() {
        let config = GopTraceConfig::default();
        let trace = gop_trace(&config).unwrap();
        assert_eq!(trace.len(), 1063);
        let bytes: u64 = trace.iter().map(|f| f.size_bytes).sum();
        let rate = bytes as f64 * 8.0 / (1063.0 / 30.0);
        assert!((rate / 437_000.0 - 1.0).abs() < 1e-3, "{rate}");
        let mean = |t: FrameType| {
            let sizes: Vec<u64> = trace
                .iter()
                .filter(|f| f.frame_type == t)
                .map(|f| f.size_bytes)
                .collect();
            sizes.iter().sum::<u64>() as f64 / sizes.len() as f64
        };
        let (i, p, b) = (mean(FrameType::I), mean(FrameType::P), mean(FrameType::B));
        assert!((i / b / 5.0 - 1.0).abs() < 0.1 && (p / b / 2.0 - 1.0).abs() < 0.1);
        // The same seed, the same trace; another seed, other sizes.
        assert_eq!(trace, gop_trace(&config).unwrap());
        let other = gop_trace(&GopTraceConfig { seed: 2, ..config }).unwrap();
        assert_ne!(trace, other);
    }

    #[test]
    fn impossible_shapes_are_refused() {
        let base = GopTraceConfig::default();
        assert!(gop_trace(&GopTraceConfig { frames: 0, ..base }).is_err());
        assert!(gop_trace(&GopTraceConfig {
            b_frames: 15,
            ..base
        })
        .is_err());
        assert!(gop_trace(&GopTraceConfig { fps: 0.0, ..base }).is_err());
        assert!(gop_trace(&GopTraceConfig {
            mean_rate_bps: -1.0,
            ..base
        })
        .is_err());
    }

    /// Decoding order `I P B B P B B I B B P`.
    fn gop() -> Vec<FrameType> {
        use FrameType::{B, I, P};
        vec![I, P, B, B, P, B, B, I, B, B, P]
    }

    fn damaged_when(lost_at: &[usize]) -> Vec<usize> {
        let types = gop();
        let mut lost = vec![false; types.len()];
        for &i in lost_at {
            lost[i] = true;
        }
        damaged_frames(&types, &lost)
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.then_some(i))
            .collect()
    }

    #[test]
    fn a_lost_b_frame_damages_only_itself() {
        assert_eq!(damaged_when(&[]), Vec::<usize>::new());
        assert_eq!(damaged_when(&[2]), vec![2]);
        assert_eq!(damaged_when(&[9]), vec![9]);
    }

    #[test]
    fn a_lost_anchor_damages_what_refers_to_it_up_to_the_next_i() {
        // The I: everything up to the next I, and the B-frames after that
        // I that still refer to the GOP's last P.
        assert_eq!(damaged_when(&[0]), vec![0, 1, 2, 3, 4, 5, 6, 8, 9]);
        // The second P: itself, its B-frames, and the open GOP's B-frames
        // after the next I.
        assert_eq!(damaged_when(&[4]), vec![4, 5, 6, 8, 9]);
        // The next I: itself, the B-frames before it in display order and
        // the P after it.
        assert_eq!(damaged_when(&[7]), vec![7, 8, 9, 10]);
    }
}
