//! The playback buffer's occupancy over time, as paper 001 Fig. 3 plots
//! it: seconds of media received and not yet due, sampled on the
//! receiver's clock.

use serde::Serialize;

use super::{FramePlayout, Pause};

/// Time between two samples of the buffer occupancy, seconds (the
/// simulator's time series use the same 100 ms).
pub const BUFFER_SAMPLE_INTERVAL_S: f64 = 0.1;

/// The most samples of one playout; a longer playout is sampled more
/// coarsely, evenly from its first arrival to its end.
pub const MAX_BUFFER_SAMPLES: usize = 1_000_000;

/// What the player was doing at a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlayerState {
    /// Filling the buffer before the first frame is due.
    Startup,
    /// Playing (a stall of the drop model included: the clock runs on).
    Playing,
    /// Paused until the refill is complete (rebuffer model).
    Rebuffering,
    /// Past the end of the last frame.
    Ended,
}

impl PlayerState {
    /// The state's name, as the CSV writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            PlayerState::Startup => "startup",
            PlayerState::Playing => "playing",
            PlayerState::Rebuffering => "rebuffering",
            PlayerState::Ended => "ended",
        }
    }
}

/// The buffer at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BufferSample {
    /// The receiver's clock, seconds.
    pub time_s: f64,
    /// Frames whose last in-time packet had arrived and that were not yet
    /// due.
    pub buffered_frames: u64,
    /// Those frames as media time, seconds (frames / fps).
    pub buffered_s: f64,
    /// What the player was doing.
    pub state: PlayerState,
}

/// The samples as CSV: `time_s,buffered_s,buffered_frames,state`.
pub fn format_buffer_csv(samples: &[BufferSample]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("time_s,buffered_s,buffered_frames,state\n");
    for sample in samples {
        let _ = writeln!(
            out,
            "{},{},{},{}",
            sample.time_s,
            sample.buffered_s,
            sample.buffered_frames,
            sample.state.as_str()
        );
    }
    out
}

/// Samples the occupancy of a playout whose first packet arrived at
/// `start`: frame *i* is in the buffer over [its last in-time arrival, its
/// deadline) and counts as `period` seconds. Samples fall on multiples of
/// [`BUFFER_SAMPLE_INTERVAL_S`] from the one at or before `start` to the
/// first at or after the end of the last frame. Nothing when a time is not
/// finite.
pub(super) fn sample(
    frames: &[FramePlayout],
    pauses: &[Pause],
    period: f64,
    start: f64,
) -> Vec<BufferSample> {
    let (Some(first), Some(last)) = (frames.first(), frames.last()) else {
        return Vec::new();
    };
    let end = last.deadline_s + period;
    if !(start.is_finite() && end.is_finite() && first.deadline_s.is_finite()) {
        return Vec::new();
    }
    let mut enters: Vec<f64> = Vec::with_capacity(frames.len());
    let mut leaves: Vec<f64> = Vec::with_capacity(frames.len());
    for frame in frames {
        if let Some(arrived) = frame.last_arrival_s.filter(|a| *a < frame.deadline_s) {
            enters.push(arrived);
            leaves.push(frame.deadline_s);
        }
    }
    enters.sort_by(f64::total_cmp);
    leaves.sort_by(f64::total_cmp);
    let interval = BUFFER_SAMPLE_INTERVAL_S;
    let first_index = (start / interval).floor();
    let last_index = (end / interval).ceil();
    let regular = last_index - first_index + 1.0;
    // The instants: the regular grid, or an even coarser one when the
    // playout is too long for it.
    let times: Box<dyn Iterator<Item = f64>> = if regular <= MAX_BUFFER_SAMPLES as f64 {
        Box::new((0..regular as usize).map(move |k| (first_index + k as f64) * interval))
    } else {
        let step = (end - start) / (MAX_BUFFER_SAMPLES - 1) as f64;
        Box::new((0..MAX_BUFFER_SAMPLES).map(move |k| start + k as f64 * step))
    };
    let (mut entered, mut left, mut pause) = (0usize, 0usize, 0usize);
    let mut samples = Vec::new();
    for time_s in times {
        while enters.get(entered).is_some_and(|t| *t <= time_s) {
            entered += 1;
        }
        while leaves.get(left).is_some_and(|t| *t <= time_s) {
            left += 1;
        }
        while pauses.get(pause).is_some_and(|p| p.to_s <= time_s) {
            pause += 1;
        }
        // Every frame leaves after it enters, so at any instant at least as
        // many have entered as left.
        let buffered_frames = entered.saturating_sub(left) as u64;
        let state = if pauses.get(pause).is_some_and(|p| p.from_s <= time_s) {
            PlayerState::Rebuffering
        } else if time_s < first.deadline_s {
            PlayerState::Startup
        } else if time_s >= end {
            PlayerState::Ended
        } else {
            PlayerState::Playing
        };
        samples.push(BufferSample {
            time_s,
            buffered_frames,
            buffered_s: buffered_frames as f64 * period,
            state,
        });
    }
    samples
}
