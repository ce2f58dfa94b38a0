//! The talker of a real call: its signal, 20 ms at a time, and its voice
//! activity.
//!
//! - [`Signal`]: the samples of a WAV file (looped or not), or a generated
//!   speech-like signal: a 120 Hz voiced buzz (its first ten harmonics,
//!   falling 6 dB per octave) under a syllable envelope of 4 Hz, the
//!   rhythm of speech. Deterministic: the same samples every run.
//! - [`VoiceActivity`]: paper 002 §IV.B's on-off model, exponential talk
//!   spurts of mean 1.0 s and silences of mean 1.5 s, drawn from a
//!   seeded generator (SplitMix64) whole frames at a time. It models a
//!   talker's pauses; it does not look at the signal's energy.

use std::time::Duration;

use super::{FRAME_SAMPLES, SAMPLE_RATE, VOICE_FRAME};

/// The generated signal's fundamental, Hz.
const PITCH_HZ: f64 = 120.0;
/// Its syllable rate, Hz.
const SYLLABLE_HZ: f64 = 4.0;
/// Its peak amplitude.
const PEAK: f64 = 12_000.0;

/// Where the talker's samples come from.
#[derive(Clone, Debug)]
pub enum Signal {
    /// A WAV file's samples, from `next`; `looped` starts again at the end.
    Samples {
        /// The samples.
        samples: Vec<i16>,
        /// The next one to send.
        next: usize,
        /// Start again at the end.
        looped: bool,
    },
    /// The generated speech-like signal, from sample `next`.
    Generated {
        /// The next sample's index.
        next: u64,
    },
}

impl Signal {
    /// A WAV file's samples.
    pub fn from_samples(samples: Vec<i16>, looped: bool) -> Signal {
        Signal::Samples {
            samples,
            next: 0,
            looped,
        }
    }

    /// The generated signal.
    pub fn generated() -> Signal {
        Signal::Generated { next: 0 }
    }

    /// The next 20 ms (the end of a file that is not looped padded with
    /// silence); `None` once a file has ended.
    pub fn next_frame(&mut self) -> Option<[i16; FRAME_SAMPLES]> {
        let mut frame = [0i16; FRAME_SAMPLES];
        match self {
            Signal::Samples {
                samples,
                next,
                looped,
            } => {
                if *next >= samples.len() {
                    if !*looped || samples.is_empty() {
                        return None;
                    }
                    *next = 0;
                }
                for slot in frame.iter_mut() {
                    if *next >= samples.len() {
                        if !*looped {
                            break;
                        }
                        *next = 0;
                    }
                    *slot = samples[*next];
                    *next += 1;
                }
            }
            Signal::Generated { next } => {
                for slot in frame.iter_mut() {
                    *slot = generated_sample(*next);
                    *next += 1;
                }
            }
        }
        Some(frame)
    }

    /// Skips 20 ms (a frame not sent during a silence keeps the signal in
    /// time).
    pub fn skip_frame(&mut self) {
        let _ = self.next_frame();
    }
}

/// Sample `n` of the generated signal.
pub fn generated_sample(n: u64) -> i16 {
    let t = n as f64 / f64::from(SAMPLE_RATE);
    let envelope = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * SYLLABLE_HZ * t).cos();
    let mut buzz = 0.0;
    for k in 1..=10 {
        let k = f64::from(k);
        buzz += (2.0 * std::f64::consts::PI * PITCH_HZ * k * t).sin() / k;
    }
    // The harmonic sum peaks near 1.85; scaled to stay within PEAK.
    (PEAK * envelope * buzz / 1.9) as i16
}

/// Paper 002's on-off talker: exponential talk spurts and silences.
#[derive(Clone, Debug)]
pub struct VoiceActivity {
    state: u64,
    talking: bool,
    /// Frames left in the current spurt or silence.
    left: u64,
    talk: Duration,
    silence: Duration,
}

impl VoiceActivity {
    /// Starts with a talk spurt; means `talk` and `silence`, draws from
    /// `seed`.
    pub fn new(talk: Duration, silence: Duration, seed: u64) -> VoiceActivity {
        let mut activity = VoiceActivity {
            state: seed,
            talking: true,
            left: 0,
            talk,
            silence,
        };
        activity.left = activity.draw(talk);
        activity
    }

    /// Whether the next frame is spoken (and moves on by one frame); the
    /// second value says it starts a talk spurt after a silence.
    pub fn next_frame(&mut self) -> (bool, bool) {
        let mut started = false;
        while self.left == 0 {
            self.talking = !self.talking;
            started = self.talking;
            let mean = if self.talking {
                self.talk
            } else {
                self.silence
            };
            self.left = self.draw(mean);
        }
        self.left -= 1;
        (self.talking, started)
    }

    /// An exponential period of mean `mean` in whole frames (at least one).
    fn draw(&mut self, mean: Duration) -> u64 {
        // SplitMix64 (Steele, Lea, Flood 2014).
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // Uniform in (0, 1].
        let u = ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let seconds = -u.ln() * mean.as_secs_f64();
        ((seconds / VOICE_FRAME.as_secs_f64()).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_ends_padded_or_loops() {
        let mut once = Signal::from_samples(vec![1; 200], false);
        assert_eq!(once.next_frame().unwrap(), [1; 160]);
        let second = once.next_frame().unwrap();
        assert_eq!(
            (&second[..40], &second[40..]),
            (&[1; 40][..], &[0; 120][..])
        );
        assert!(once.next_frame().is_none());
        let mut looped = Signal::from_samples((0..200).collect(), true);
        looped.next_frame();
        let frame = looped.next_frame().unwrap();
        assert_eq!((frame[39], frame[40], frame[41]), (199, 0, 1));
    }

    #[test]
    fn the_generated_signal_is_speech_like_and_repeatable() {
        let mut a = Signal::generated();
        let mut b = Signal::generated();
        let (fa, fb) = (a.next_frame().unwrap(), b.next_frame().unwrap());
        assert_eq!(fa, fb);
        // A syllable's peak (1/8 s in) is loud; its trough (0 s) silent.
        assert_eq!(generated_sample(0), 0);
        let loud = (900..1100)
            .map(|n| generated_sample(n).unsigned_abs())
            .max();
        assert!(loud.unwrap() > 8_000, "{loud:?}");
    }

    #[test]
    fn voice_activity_averages_the_papers_means() {
        let mut vad = VoiceActivity::new(Duration::from_secs(1), Duration::from_millis(1500), 7);
        let frames = 500_000;
        let (mut talking, mut spurts) = (0u64, 0u64);
        for _ in 0..frames {
            let (on, started) = vad.next_frame();
            talking += u64::from(on);
            spurts += u64::from(started);
        }
        // Talking 1.0/(1.0 + 1.5) = 40 % of the time, a spurt per 2.5 s.
        let share = talking as f64 / frames as f64;
        assert!((share - 0.4).abs() < 0.02, "{share}");
        let per_spurt = frames as f64 / spurts as f64 * 0.02;
        assert!((per_spurt - 2.5).abs() < 0.1, "{per_spurt}");
    }
}
