//! Per-packet channel loss models: what a lossy (wireless) hop does to each
//! packet that finished crossing it, independently of congestion.
//!
//! [`LossConfig`] is the validated-on-build description (scenario data);
//! [`LossModel`] is the running model, which draws from a [`SimRng`] that the
//! owner passes in, so the same seed always loses the same packets.

use thiserror::Error;

use crate::rng::SimRng;

/// A loss-model parameter that is not a probability.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum LossError {
    /// The named parameter is outside [0, 1] (or not a number).
    #[error("loss parameter `{parameter}` must be a probability in [0, 1], got {value}")]
    NotAProbability {
        /// The parameter's name as written in a scenario (`p`, `p_good_good`, …).
        parameter: &'static str,
        /// The rejected value.
        value: f64,
    },
}

/// Checks that `value` is a probability, naming `parameter` if not.
fn probability(parameter: &'static str, value: f64) -> Result<f64, LossError> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(LossError::NotAProbability { parameter, value })
    }
}

/// The description of a channel loss model, as a scenario states it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum LossConfig {
    /// No channel loss.
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        /// The per-packet loss probability.
        p: f64,
    },
    /// The Gilbert-Elliott two-state Markov chain, stepped once per packet,
    /// with a loss probability in each state (paper 000 §3.4).
    GilbertElliott {
        /// Probability of staying in the good state from one packet to the next.
        p_good_good: f64,
        /// Probability of staying in the bad state from one packet to the next.
        p_bad_bad: f64,
        /// Loss probability of a packet sent in the good state.
        loss_good: f64,
        /// Loss probability of a packet sent in the bad state.
        loss_bad: f64,
    },
}

impl LossConfig {
    /// Paper 000 §3.4's channel: "The probability of remaining in the good
    /// state was set to 0.95 and of remaining in the bad state was 0.94 […]
    /// The packet loss probability in the good state was fixed at 0.01 and the
    /// bad state default was 0.05."
    pub const PAPER_000: LossConfig = LossConfig::GilbertElliott {
        p_good_good: 0.95,
        p_bad_bad: 0.94,
        loss_good: 0.01,
        loss_bad: 0.05,
    };

    /// Validates the parameters and builds the running model.
    pub fn build(self) -> Result<LossModel, LossError> {
        Ok(match self {
            LossConfig::None => LossModel::None,
            LossConfig::Bernoulli { p } => LossModel::Bernoulli(Bernoulli {
                p: probability("p", p)?,
            }),
            LossConfig::GilbertElliott {
                p_good_good,
                p_bad_bad,
                loss_good,
                loss_bad,
            } => LossModel::GilbertElliott(GilbertElliott {
                p_good_good: probability("p_good_good", p_good_good)?,
                p_bad_bad: probability("p_bad_bad", p_bad_bad)?,
                loss_good: probability("loss_good", loss_good)?,
                loss_bad: probability("loss_bad", loss_bad)?,
                state: ChannelState::Good,
            }),
        })
    }
}

/// Independent per-packet loss with a fixed probability.
#[derive(Clone, Debug, PartialEq)]
pub struct Bernoulli {
    p: f64,
}

impl Bernoulli {
    /// Whether the next packet is lost.
    pub fn lose(&mut self, rng: &mut SimRng) -> bool {
        rng.bernoulli(self.p)
    }

    /// The long-run loss rate: `p`.
    pub fn steady_state_loss(&self) -> f64 {
        self.p
    }
}

/// The state of a Gilbert-Elliott channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelState {
    /// The good state (loss probability `loss_good`).
    Good,
    /// The bad state (loss probability `loss_bad`).
    Bad,
}

/// The Gilbert-Elliott channel: a two-state, discrete-time Markov chain
/// stepped once per packet (paper 000 §3.4, after Haßlinger and Hohlfeld 2008).
///
/// Each packet is first judged in the current state (lost with that state's
/// loss probability), then the chain moves: it stays with probability
/// `p_good_good` / `p_bad_bad`. The chain starts in the good state.
#[derive(Clone, Debug, PartialEq)]
pub struct GilbertElliott {
    p_good_good: f64,
    p_bad_bad: f64,
    loss_good: f64,
    loss_bad: f64,
    state: ChannelState,
}

impl GilbertElliott {
    /// Whether the next packet is lost; advances the chain by one packet.
    pub fn lose(&mut self, rng: &mut SimRng) -> bool {
        let (loss, stay) = match self.state {
            ChannelState::Good => (self.loss_good, self.p_good_good),
            ChannelState::Bad => (self.loss_bad, self.p_bad_bad),
        };
        let lost = rng.bernoulli(loss);
        if !rng.bernoulli(stay) {
            self.state = match self.state {
                ChannelState::Good => ChannelState::Bad,
                ChannelState::Bad => ChannelState::Good,
            };
        }
        lost
    }

    /// The state the next packet will be judged in.
    pub fn state(&self) -> ChannelState {
        self.state
    }

    /// The stationary probability of the bad state,
    /// π_bad = (1 − p_gg) / (2 − p_gg − p_bb).
    ///
    /// When both states are absorbing (p_gg = p_bb = 1) the chain never leaves
    /// its initial, good state, so this is 0.
    pub fn steady_state_bad(&self) -> f64 {
        let denominator = 2.0 - self.p_good_good - self.p_bad_bad;
        if denominator <= 0.0 {
            0.0
        } else {
            (1.0 - self.p_good_good) / denominator
        }
    }

    /// The long-run loss rate, π_good·loss_good + π_bad·loss_bad.
    pub fn steady_state_loss(&self) -> f64 {
        let bad = self.steady_state_bad();
        (1.0 - bad) * self.loss_good + bad * self.loss_bad
    }

    /// The mean number of consecutive packets spent in the bad state,
    /// 1 / (1 − p_bb) (infinite when p_bb = 1).
    pub fn mean_bad_run(&self) -> f64 {
        1.0 / (1.0 - self.p_bad_bad)
    }
}

/// A running channel loss model.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum LossModel {
    /// Nothing is lost.
    #[default]
    None,
    /// Independent loss.
    Bernoulli(Bernoulli),
    /// Bursty loss from a two-state Markov chain.
    GilbertElliott(GilbertElliott),
}

impl LossModel {
    /// Whether the next packet is lost on the channel. Inline: every
    /// packet a link finishes asks, and most links lose nothing.
    #[inline]
    pub fn lose(&mut self, rng: &mut SimRng) -> bool {
        match self {
            LossModel::None => false,
            LossModel::Bernoulli(model) => model.lose(rng),
            LossModel::GilbertElliott(model) => model.lose(rng),
        }
    }

    /// The long-run fraction of packets lost.
    pub fn steady_state_loss(&self) -> f64 {
        match self {
            LossModel::None => 0.0,
            LossModel::Bernoulli(model) => model.steady_state_loss(),
            LossModel::GilbertElliott(model) => model.steady_state_loss(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 100_000;

    #[test]
    fn bernoulli_rate_matches_p() {
        let mut model = LossConfig::Bernoulli { p: 0.03 }.build().unwrap();
        let mut rng = SimRng::new(7);
        let lost = (0..N).filter(|_| model.lose(&mut rng)).count() as f64 / N as f64;
        // Standard deviation is sqrt(0.03 * 0.97 / 1e5) ≈ 0.00054.
        assert!((lost - 0.03).abs() < 0.002, "measured {lost}");
        assert_eq!(model.steady_state_loss(), 0.03);
    }

    #[test]
    fn none_loses_nothing() {
        let mut model = LossConfig::None.build().unwrap();
        let mut rng = SimRng::new(1);
        assert!((0..1000).all(|_| !model.lose(&mut rng)));
    }

    #[test]
    fn gilbert_elliott_long_run_loss_and_bursts() {
        let LossModel::GilbertElliott(mut model) = LossConfig::PAPER_000.build().unwrap() else {
            panic!("wrong model");
        };
        // π_bad = 0.05 / 0.11 ≈ 0.4545; loss = 0.5455·0.01 + 0.4545·0.05 ≈ 0.02818.
        let expected = model.steady_state_loss();
        assert!((expected - (0.06 / 0.11 * 0.01 + 0.05 / 0.11 * 0.05)).abs() < 1e-12);
        let mut rng = SimRng::new(11);
        let n = 1_000_000;
        let mut lost = 0usize;
        let mut bad_runs = Vec::new();
        let mut run = 0usize;
        let mut bad_packets = 0usize;
        for _ in 0..n {
            let state = model.state();
            if model.lose(&mut rng) {
                lost += 1;
            }
            if state == ChannelState::Bad {
                run += 1;
                bad_packets += 1;
            } else if run > 0 {
                bad_runs.push(run);
                run = 0;
            }
        }
        let rate = lost as f64 / n as f64;
        assert!((rate - expected).abs() < 0.0015, "{rate} vs {expected}");
        let bad_share = bad_packets as f64 / n as f64;
        assert!(
            (bad_share - model.steady_state_bad()).abs() < 0.02,
            "{bad_share}"
        );
        let mean_run = bad_runs.iter().sum::<usize>() as f64 / bad_runs.len() as f64;
        // 1 / (1 − 0.94) ≈ 16.7 packets.
        assert!(
            (mean_run - model.mean_bad_run()).abs() < 0.5,
            "mean bad run {mean_run}"
        );
    }

    #[test]
    fn same_seed_same_losses() {
        let run = |seed| {
            let mut model = LossConfig::PAPER_000.build().unwrap();
            let mut rng = SimRng::new(seed);
            (0..1000).map(|_| model.lose(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn invalid_parameters_are_named() {
        let err = LossConfig::Bernoulli { p: 1.5 }.build().unwrap_err();
        assert_eq!(
            err,
            LossError::NotAProbability {
                parameter: "p",
                value: 1.5
            }
        );
        let err = LossConfig::GilbertElliott {
            p_good_good: 0.9,
            p_bad_bad: f64::NAN,
            loss_good: 0.0,
            loss_bad: 0.1,
        }
        .build()
        .unwrap_err();
        assert!(err.to_string().contains("p_bad_bad"), "{err}");
        let err = LossConfig::GilbertElliott {
            p_good_good: 0.9,
            p_bad_bad: 0.9,
            loss_good: -0.1,
            loss_bad: 0.1,
        }
        .build()
        .unwrap_err();
        assert!(err.to_string().contains("loss_good"), "{err}");
    }

    #[test]
    fn absorbing_chain_has_a_defined_steady_state() {
        let LossModel::GilbertElliott(model) = (LossConfig::GilbertElliott {
            p_good_good: 1.0,
            p_bad_bad: 1.0,
            loss_good: 0.2,
            loss_bad: 0.9,
        })
        .build()
        .unwrap() else {
            panic!("wrong model");
        };
        assert_eq!(model.steady_state_loss(), 0.2);
    }
}
