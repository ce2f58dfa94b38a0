//! The listener's de-jitter buffer: when each talk spurt plays.
//!
//! - **Fixed** ([`JitterBuffer::Fixed`]): every frame plays at its capture
//!   time plus the one-way delay of the call's first frame to arrive plus
//!   the buffer; the simulator's model since paper 002's runs.
//! - **Adaptive** ([`JitterBuffer::Adaptive`]): R. Ramjee, J. Kurose,
//!   D. Towsley, H. Schulzrinne, "Adaptive playout mechanisms for
//!   packetized audio applications in wide-area networks", IEEE INFOCOM
//!   1994, algorithm 1. For every frame i that arrives, with n_i its delay
//!   from capture to arrival,
//!
//!   ```text
//!   d̂_i = α·d̂_(i−1) + (1 − α)·n_i
//!   v̂_i = α·v̂_(i−1) + (1 − α)·|d̂_i − n_i|        α = 0.998002
//!   ```
//!
//!   and the first frame of a talk spurt to arrive sets the spurt's
//!   playout delay to d̂_i + 4·v̂_i; the rest of the spurt keeps it (the
//!   spacing of the frames within a spurt is kept, silences stretch or
//!   shrink). Ours: the estimates start at d̂_1 = n_1 and v̂_1 = 0 (the
//!   paper leaves the start open), so the first spurt plays at its first
//!   frame's delay, and a call without voice activity detection is one
//!   talk spurt whose delay is set once, at its first frame: the algorithm
//!   re-evaluates only across silences, as the paper's does.

use std::time::Duration;

/// α of Ramjee et al.'s algorithm 1 (the paper's value, 0.998002).
pub const RAMJEE_ALPHA: f64 = 0.998002;
/// The multiple of v̂ added to d̂ (algorithm 1: "β = 4").
pub const RAMJEE_BETA: f64 = 4.0;

/// How the listener chooses its playout delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitterBuffer {
    /// The first frame's delay plus this, for the whole call.
    Fixed(Duration),
    /// Ramjee et al.'s algorithm 1, set at the start of each talk spurt.
    Adaptive,
}

impl Default for JitterBuffer {
    /// A fixed 60 ms buffer (see `fairstream_sim`'s `DEFAULT_JITTER_BUFFER`).
    fn default() -> Self {
        JitterBuffer::Fixed(Duration::from_millis(60))
    }
}

/// Ramjee et al.'s running estimates of the delay and its variation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DelayEstimate {
    /// d̂, seconds; `None` before the first frame.
    delay_s: Option<f64>,
    /// v̂, seconds.
    variation_s: f64,
}

impl DelayEstimate {
    /// No frame seen yet.
    pub fn new() -> DelayEstimate {
        DelayEstimate::default()
    }

    /// Frame i arrived `delay` after its capture (n_i): algorithm 1's two
    /// updates.
    pub fn update(&mut self, delay: Duration) {
        let n = delay.as_secs_f64();
        let Some(previous) = self.delay_s else {
            // Ours: the estimates start at the first frame's delay.
            self.delay_s = Some(n);
            return;
        };
        let alpha = RAMJEE_ALPHA;
        let d = alpha * previous + (1.0 - alpha) * n;
        self.variation_s = alpha * self.variation_s + (1.0 - alpha) * (d - n).abs();
        self.delay_s = Some(d);
    }

    /// d̂, seconds.
    pub fn delay_s(&self) -> Option<f64> {
        self.delay_s
    }

    /// v̂, seconds.
    pub fn variation_s(&self) -> f64 {
        self.variation_s
    }

    /// The playout delay a talk spurt starting now gets: d̂ + 4·v̂.
    pub fn playout_delay(&self) -> Option<Duration> {
        let d = self.delay_s?;
        Duration::try_from_secs_f64(d + RAMJEE_BETA * self.variation_s).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Duration {
        Duration::from_millis(m)
    }

    #[test]
    fn the_first_frame_sets_the_estimate_and_the_next_move_it_by_one_minus_alpha() {
        let mut e = DelayEstimate::new();
        assert_eq!(e.playout_delay(), None);
        e.update(ms(100));
        assert_eq!(e.playout_delay(), Some(ms(100)));
        e.update(ms(200));
        // d̂ = 0.998002·0.1 + 0.001998·0.2 = 0.1001998;
        // v̂ = 0.001998·|0.1001998 − 0.2| = 0.0001994008.
        let d = 0.998002 * 0.1 + 0.001998 * 0.2;
        assert!((e.delay_s().unwrap() - 0.100_199_8).abs() < 1e-12);
        let v = 0.001998 * (0.2 - d);
        assert!((e.variation_s() - 0.000_199_400_8).abs() < 1e-12, "{v}");
        // Playout: 0.1001998 + 4·0.0001994008 = 0.1009974032 s.
        let p = e.playout_delay().unwrap().as_secs_f64();
        assert!((p - 0.100_997_403_2).abs() < 1e-9, "{p}");
    }

    #[test]
    fn a_constant_delay_keeps_the_estimate_and_no_variation() {
        let mut e = DelayEstimate::new();
        for _ in 0..1000 {
            e.update(ms(300));
        }
        assert!((e.delay_s().unwrap() - 0.3).abs() < 1e-12);
        assert!(e.variation_s().abs() < 1e-12);
    }
}
