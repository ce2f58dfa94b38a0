//! Packet-loss concealment for G.711, after ITU-T G.711 Appendix I ("A
//! high quality low-complexity algorithm for packet loss concealment with
//! G.711", 09/1999), simplified.
//!
//! What is kept of Appendix I: a history of the last 48.75 ms of good
//! speech (390 samples at 8 kHz); at the first lost frame, the pitch
//! period is estimated by the normalised cross-correlation of the last
//! 20 ms of the history with the history lagged by 5 to 15 ms (40 to 120
//! samples, Appendix I's pitch range); the lost frame is filled by
//! repeating the last pitch period, continued across consecutive lost
//! frames; the first 10 ms of an erasure play at full level, then the
//! level falls linearly by 20 % per 10 ms (Appendix I's attenuation),
//! reaching silence 60 ms into the erasure.
//!
//! Ours, simpler than Appendix I: no overlap-add at the start and the end
//! of an erasure (Appendix I cross-fades over a quarter pitch period), and
//! no growth of the repeated span to 2 and 3 pitch periods after 10 and
//! 20 ms. The E-model scores the call as G.711 with Appendix I's Bpl
//! whichever; this only makes the WAV a listener hears.

use super::FRAME_SAMPLES;

/// The good speech kept: 48.75 ms at 8 kHz (Appendix I's history).
pub const HISTORY_SAMPLES: usize = 390;
/// The shortest pitch period looked for: 5 ms (40 samples, 200 Hz).
pub const MIN_PITCH: usize = 40;
/// The longest: 15 ms (120 samples, 66.7 Hz).
pub const MAX_PITCH: usize = 120;
/// The correlation window: 20 ms.
const WINDOW: usize = 160;
/// Samples of an erasure at full level (10 ms).
const FULL_LEVEL: usize = 80;
/// The level falls 20 % per this many samples (10 ms) after that.
const FADE_STEP: usize = 80;
/// Samples into an erasure at which the level reaches 0 (60 ms).
const SILENT_FROM: usize = FULL_LEVEL + 5 * FADE_STEP;

/// A G.711 Appendix I-style concealer (see the [module](self)).
#[derive(Clone, Debug)]
pub struct Concealer {
    /// The last good samples, oldest first, at most [`HISTORY_SAMPLES`].
    history: Vec<i16>,
    /// The pitch period in use during an erasure.
    pitch: usize,
    /// Samples concealed in the erasure so far (0: none under way).
    erased: usize,
}

impl Default for Concealer {
    fn default() -> Self {
        Concealer::new()
    }
}

impl Concealer {
    /// A concealer with no history (an erasure first plays silence).
    pub fn new() -> Concealer {
        Concealer {
            history: Vec::with_capacity(HISTORY_SAMPLES + FRAME_SAMPLES),
            pitch: MAX_PITCH,
            erased: 0,
        }
    }

    /// A frame that arrived: kept as history; an erasure under way ends.
    pub fn good_frame(&mut self, samples: &[i16]) {
        self.history.extend_from_slice(samples);
        let excess = self.history.len().saturating_sub(HISTORY_SAMPLES);
        self.history.drain(..excess);
        self.erased = 0;
    }

    /// Fills `out` for a lost frame: the last pitch period repeated and
    /// faded (see the [module](self)).
    pub fn conceal(&mut self, out: &mut [i16]) {
        // Too little history to find a pitch in (the first 35 ms): silence.
        if self.history.len() < MAX_PITCH + WINDOW {
            out.fill(0);
            self.erased += out.len();
            return;
        }
        if self.erased == 0 {
            self.pitch = estimate_pitch(&self.history);
        }
        let period = &self.history[self.history.len() - self.pitch..];
        for (i, sample) in out.iter_mut().enumerate() {
            let position = self.erased + i;
            let gain = gain_at(position);
            let value = f64::from(period[position % self.pitch]) * gain;
            *sample = value
                .round()
                .clamp(f64::from(i16::MIN), f64::from(i16::MAX)) as i16;
        }
        self.erased += out.len();
    }

    /// Samples concealed in the erasure under way.
    pub fn erased_samples(&self) -> usize {
        self.erased
    }
}

/// The level `position` samples into an erasure: 1 for the first 10 ms,
/// then falling linearly by 20 % per 10 ms, 0 from 60 ms on.
fn gain_at(position: usize) -> f64 {
    if position < FULL_LEVEL {
        return 1.0;
    }
    if position >= SILENT_FROM {
        return 0.0;
    }
    1.0 - 0.2 * (position - FULL_LEVEL) as f64 / FADE_STEP as f64
}

/// The lag in [`MIN_PITCH`]..=[`MAX_PITCH`] whose window best correlates
/// (normalised) with the last 20 ms of `history`; `MAX_PITCH` when the
/// history is silent.
fn estimate_pitch(history: &[i16]) -> usize {
    let end = history.len();
    let window = WINDOW.min(end.saturating_sub(MAX_PITCH));
    if window == 0 {
        return MAX_PITCH;
    }
    let target = &history[end - window..];
    let mut best = (MAX_PITCH, f64::MIN);
    for lag in MIN_PITCH..=MAX_PITCH {
        let lagged = &history[end - window - lag..end - lag];
        let (mut cross, mut energy) = (0.0, 0.0);
        for (a, b) in target.iter().zip(lagged) {
            cross += f64::from(*a) * f64::from(*b);
            energy += f64::from(*b) * f64::from(*b);
        }
        if energy > 0.0 {
            let score = cross / energy.sqrt();
            if score > best.1 {
                best = (lag, score);
            }
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A periodic signal of `period` samples.
    fn periodic(period: usize, len: usize) -> Vec<i16> {
        (0..len)
            .map(|i| {
                let phase = (i % period) as f64 / period as f64;
                (8000.0 * (2.0 * std::f64::consts::PI * phase).sin()
                    + 3000.0 * (4.0 * std::f64::consts::PI * phase).sin()) as i16
            })
            .collect()
    }

    #[test]
    fn the_pitch_of_a_periodic_signal_is_found() {
        for period in [50, 80, 100] {
            let history = periodic(period, HISTORY_SAMPLES);
            assert_eq!(estimate_pitch(&history), period);
        }
    }

    #[test]
    fn a_lost_frame_continues_the_last_period_then_fades_to_silence() {
        let signal = periodic(80, 2000);
        let mut concealer = Concealer::new();
        for frame in signal[..800].chunks(FRAME_SAMPLES) {
            concealer.good_frame(frame);
        }
        let mut out = [0i16; FRAME_SAMPLES];
        concealer.conceal(&mut out);
        // The first 10 ms continue the signal exactly (its period is 80).
        assert_eq!(&out[..80], &signal[800..880]);
        // 15 ms in: 90 % of it.
        let want = 0.9 * f64::from(signal[920]);
        assert!((f64::from(out[120]) - want).abs() <= 1.0, "{}", out[120]);
        // 60 ms on: silence.
        concealer.conceal(&mut out);
        concealer.conceal(&mut out);
        assert_eq!(concealer.erased_samples(), 480);
        concealer.conceal(&mut out);
        assert!(out.iter().all(|s| *s == 0), "{out:?}");
        // A good frame ends the erasure.
        concealer.good_frame(&signal[..160]);
        assert_eq!(concealer.erased_samples(), 0);
    }

    #[test]
    fn without_history_a_lost_frame_is_silence() {
        let mut out = [7i16; FRAME_SAMPLES];
        Concealer::new().conceal(&mut out);
        assert!(out.iter().all(|s| *s == 0));
    }

    #[test]
    fn the_fade_is_twenty_percent_per_ten_ms() {
        assert_eq!(gain_at(0), 1.0);
        assert_eq!(gain_at(79), 1.0);
        assert_eq!(gain_at(80), 1.0);
        assert!((gain_at(160) - 0.8).abs() < 1e-12);
        assert!((gain_at(400) - 0.2).abs() < 1e-12);
        assert_eq!(gain_at(480), 0.0);
    }
}
