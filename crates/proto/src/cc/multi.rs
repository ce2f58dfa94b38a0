//! How many TFRC connections one stream should use: the connection-count
//! controllers of multi-connection streaming (paper 001 §3, paper 000 eq. 2).
//!
//! Every controller except [`ConnectionCountConfig::Fixed`] is driven by the
//! same RTT measurement subsystem (RMS, paper 001 §3): the receiver reports
//! an RTT sample about once per round trip ([`ConnectionCounter::on_rtt_sample`]);
//! every `m` samples the RMS averages them into `ave_rtt` and the controller
//! compares it with `rtt_min`, the smallest `ave_rtt` seen:
//!
//! - congestion, `ave_rtt − rtt_min > γ · rtt_min` (queueing delay beyond a
//!   threshold; see below for the default's threshold): decrease;
//! - otherwise: increase by `α / n` (inversely to the count).
//!
//! | controller | decrease | source |
//! |---|---|---|
//! | `Multfrc` | `n − β` (additive) | paper 001 eq. 6, IIAD(α, β), α = β = 1, γ = 0.2, m = 50 |
//! | `EMultfrc` | `β · n + α / n` (multiplicative), α = 1 − β | paper 000 eq. 2 |
//! | `Aggregate` | as `Multfrc`, but `n` stays fractional: one connection sends at the MulTFRC rate of n flows | AIO-TFRC / MulTFRC |
//!
//! `n` never goes below one. The connection count a session opens is `n`
//! rounded to the nearest integer ([`ConnectionCounter::connections`]).
//!
//! **The default, [`ConnectionCountConfig::Adaptive`]** ([`adaptive`]): one
//! connection at the MulTFRC rate of a fractional n, steered by the smallest
//! queueing delay of each window of two RTTs and by ECN marks; its module
//! documentation says why, and `docs/results/fairness.md` measures it. The
//! papers' rules below stay as they are, for reproduction.
//!
//! **rtt_min expiry.** Paper 000 notes that a global `rtt_min` goes stale:
//! after a route change that lengthens the path, every `ave_rtt` looks like
//! queueing and the count falls to one for good. With
//! [`MultiConfig::rtt_min_lifetime`] set, `rtt_min` is the smallest `ave_rtt`
//! of that last stretch of time, so a longer path becomes the new baseline
//! after one lifetime. The price: a queue that stays standing for a whole
//! lifetime — the cross traffic of a congested bottleneck keeps one — is then
//! taken for path delay too, and the count grows into the congestion. The
//! measurements (`docs/results/multiconn.md`) found that price too high for
//! a default: the default keeps the paper's all-time minimum (`None`), and
//! the expiry is an option for paths that change.

use std::collections::VecDeque;
use std::time::Duration;

use crate::time::Instant;

pub mod adaptive;

pub use adaptive::{AdaptiveConfig, AdaptiveCounter, AdaptiveDecision, Report};

/// Parameters of the RTT-driven controllers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultiConfig {
    /// α: the increase is α / n per `ave_rtt` without congestion.
    pub alpha: f64,
    /// β: the decrease (subtracted for MULTFRC, a factor for E-MULTFRC).
    pub beta: f64,
    /// γ: queueing delay tolerated, as a share of `rtt_min`.
    pub gamma: f64,
    /// m: RTT samples averaged into one `ave_rtt`.
    pub m: usize,
    /// How long an `ave_rtt` can stay `rtt_min`; `None` for ever (the
    /// paper's rule).
    pub rtt_min_lifetime: Option<Duration>,
    /// The count to start with.
    pub initial: f64,
    /// The most connections (a bound on what a peer's RTTs can make us open).
    pub max: f64,
    /// k: queueing delay is also tolerated up to k packet times at the
    /// highest receive rate the session has seen, `k · s / max X_recv`
    /// (0: γ only, the papers' rule). See [the module documentation](self).
    pub queue_packets: f64,
    /// The packet-time allowance `k · s / max X_recv` never exceeds this
    /// share of `rtt_min` (the threshold stays `γ · rtt_min` at least).
    pub gamma_max: f64,
    /// Start-up: until the first congested decision the count grows by α
    /// per decision instead of α / n (false: the papers' rule throughout).
    pub startup: bool,
}

impl MultiConfig {
    /// Paper 001's MULTFRC: α = β = 1, γ = 0.2, m = 50.
    pub const MULTFRC: MultiConfig = MultiConfig {
        alpha: 1.0,
        beta: 1.0,
        gamma: 0.2,
        m: 50,
        rtt_min_lifetime: None,
        initial: 1.0,
        max: 64.0,
        queue_packets: 0.0,
        gamma_max: 0.0,
        startup: false,
    };

    /// Paper 000 eq. 2's E-MULTFRC with β = 0.5 (so α = 1 − β = 0.5; the
    /// paper gives no value, this is our choice), γ and m as MULTFRC.
    pub const E_MULTFRC: MultiConfig = MultiConfig {
        alpha: 0.5,
        beta: 0.5,
        ..MultiConfig::MULTFRC
    };
}

/// Which controller, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConnectionCountConfig {
    /// A fixed number of connections.
    Fixed(u32),
    /// Paper 001's MULTFRC, IIAD(α, β).
    Multfrc(MultiConfig),
    /// Paper 000 eq. 2's E-MULTFRC: multiplicative decrease.
    EMultfrc(MultiConfig),
    /// One connection at the MulTFRC rate of a fractional n, driven by the
    /// MULTFRC rule.
    Aggregate(MultiConfig),
    /// fairstream's default: one connection at the MulTFRC rate of a
    /// fractional n, steered by queueing delay and ECN marks on a time basis
    /// ([`adaptive`]).
    Adaptive(AdaptiveConfig),
}

impl Default for ConnectionCountConfig {
    /// The default controller, [`ConnectionCountConfig::Adaptive`].
    fn default() -> Self {
        ConnectionCountConfig::Adaptive(AdaptiveConfig::default())
    }
}

/// Why a configuration was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MultiConfigError {
    /// A parameter outside its range.
    #[error("{name} = {value} is outside {range}")]
    OutOfRange {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What is allowed.
        range: &'static str,
    },
}

impl ConnectionCountConfig {
    /// The controller never keeps more than one connection open on a path:
    /// a fixed count of one, or a fractional n in one connection's rate
    /// (the aggregate and the adaptive default).
    pub fn at_most_one(&self) -> bool {
        self.is_fractional() || matches!(self, ConnectionCountConfig::Fixed(n) if *n <= 1)
    }

    /// The count is a fractional n in one connection's MulTFRC rate (the
    /// aggregate and the adaptive default) rather than a number of
    /// connections.
    pub fn is_fractional(&self) -> bool {
        matches!(
            self,
            ConnectionCountConfig::Aggregate(_) | ConnectionCountConfig::Adaptive(_)
        )
    }

    /// Builds the controller.
    pub fn build(&self) -> Result<ConnectionCounter, MultiConfigError> {
        let check = |name: &'static str, value: f64, ok: bool, range: &'static str| {
            if ok {
                Ok(())
            } else {
                Err(MultiConfigError::OutOfRange { name, value, range })
            }
        };
        match self {
            ConnectionCountConfig::Fixed(n) => {
                check("conns", f64::from(*n), (1..=1024).contains(n), "1..=1024")?;
            }
            ConnectionCountConfig::Adaptive(c) => {
                check("min", c.min, c.min >= 0.1 && c.min <= 1024.0, "[0.1, 1024]")?;
                check(
                    "max",
                    c.max,
                    c.max >= c.min && c.max <= 1024.0,
                    "[min, 1024]",
                )?;
                check(
                    "initial",
                    c.initial,
                    c.initial >= c.min && c.initial <= c.max,
                    "[min, max]",
                )?;
                check(
                    "decision_rtts",
                    c.decision_rtts,
                    c.decision_rtts >= 0.25 && c.decision_rtts <= 100.0,
                    "[0.25, 100]",
                )?;
                check(
                    "gamma",
                    c.gamma,
                    c.gamma >= 0.0 && c.gamma <= 10.0,
                    "[0, 10]",
                )?;
                check(
                    "queue_packets",
                    c.queue_packets,
                    c.queue_packets >= 0.0 && c.queue_packets <= 1000.0,
                    "[0, 1000]",
                )?;
                check("gain", c.gain, c.gain > 0.0 && c.gain <= 10.0, "(0, 10]")?;
                check(
                    "max_increase",
                    c.max_increase,
                    c.max_increase > 0.0 && c.max_increase <= 1.0,
                    "(0, 1]",
                )?;
                check(
                    "max_decrease",
                    c.max_decrease,
                    c.max_decrease > 0.0 && c.max_decrease < 1.0,
                    "(0, 1)",
                )?;
                check(
                    "gamma + queue_packets",
                    c.gamma + c.queue_packets,
                    c.gamma > 0.0 || c.queue_packets > 0.0,
                    "one of them > 0",
                )?;
            }
            ConnectionCountConfig::Multfrc(c)
            | ConnectionCountConfig::EMultfrc(c)
            | ConnectionCountConfig::Aggregate(c) => {
                check(
                    "alpha",
                    c.alpha,
                    c.alpha > 0.0 && c.alpha <= 16.0,
                    "(0, 16]",
                )?;
                let beta_ok = match self {
                    ConnectionCountConfig::EMultfrc(_) => c.beta > 0.0 && c.beta < 1.0,
                    _ => c.beta > 0.0 && c.beta <= 16.0,
                };
                check(
                    "beta",
                    c.beta,
                    beta_ok,
                    "(0, 1) for E-MULTFRC, (0, 16] otherwise",
                )?;
                check(
                    "gamma",
                    c.gamma,
                    c.gamma >= 0.0 && c.gamma <= 10.0,
                    "[0, 10]",
                )?;
                check(
                    "queue_packets",
                    c.queue_packets,
                    c.queue_packets >= 0.0 && c.queue_packets <= 1000.0,
                    "[0, 1000]",
                )?;
                check(
                    "gamma_max",
                    c.gamma_max,
                    c.gamma_max >= 0.0 && c.gamma_max <= 10.0,
                    "[0, 10]",
                )?;
                check("m", c.m as f64, (1..=10_000).contains(&c.m), "1..=10000")?;
                check("max", c.max, c.max >= 1.0 && c.max <= 1024.0, "[1, 1024]")?;
                check(
                    "initial",
                    c.initial,
                    c.initial >= 1.0 && c.initial <= c.max,
                    "[1, max]",
                )?;
            }
        }
        Ok(ConnectionCounter::new(*self))
    }
}

/// A controller's state.
#[derive(Clone, Debug)]
pub struct ConnectionCounter {
    config: ConnectionCountConfig,
    n: f64,
    /// RTT samples of the current window.
    window_sum: Duration,
    window_len: usize,
    /// Packet-time samples of the current window (seconds) and their count.
    packet_time_sum: f64,
    packet_time_len: usize,
    /// Recent `ave_rtt`s (time, value), for the expiring minimum.
    history: ExpiringMinimum,
    last_ave_rtt: Option<Duration>,
    decisions: u64,
    /// Whether a decision has found congestion yet (ends the start-up).
    congestion_seen: bool,
    /// The shortest window-mean packet time seen (the highest receive rate).
    min_packet_time: Option<f64>,
    /// The state of [`ConnectionCountConfig::Adaptive`].
    adaptive: Option<AdaptiveCounter>,
}

/// What one `ave_rtt` decided.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// The averaged RTT.
    pub ave_rtt: Duration,
    /// The reference minimum it was compared with.
    pub rtt_min: Duration,
    /// The queueing delay tolerated: `γ · rtt_min`, or more with the
    /// packet-time allowance ([`MultiConfig::queue_packets`]).
    pub threshold: Duration,
    /// Whether the queueing delay exceeded the threshold.
    pub congested: bool,
    /// The count after the decision.
    pub n: f64,
}

impl ConnectionCounter {
    fn new(config: ConnectionCountConfig) -> ConnectionCounter {
        let n = match config {
            ConnectionCountConfig::Fixed(n) => f64::from(n),
            ConnectionCountConfig::Multfrc(c)
            | ConnectionCountConfig::EMultfrc(c)
            | ConnectionCountConfig::Aggregate(c) => c.initial,
            ConnectionCountConfig::Adaptive(c) => c.initial,
        };
        let adaptive = match config {
            ConnectionCountConfig::Adaptive(c) => Some(AdaptiveCounter::new(c)),
            _ => None,
        };
        ConnectionCounter {
            config,
            n,
            window_sum: Duration::ZERO,
            window_len: 0,
            packet_time_sum: 0.0,
            packet_time_len: 0,
            history: ExpiringMinimum::default(),
            last_ave_rtt: None,
            decisions: 0,
            congestion_seen: false,
            min_packet_time: None,
            adaptive,
        }
    }

    /// The configuration.
    pub fn config(&self) -> ConnectionCountConfig {
        self.config
    }

    /// The current (possibly fractional) count n.
    pub fn n(&self) -> f64 {
        self.adaptive.as_ref().map_or(self.n, AdaptiveCounter::n)
    }

    /// Whether the count is a fractional n in one connection's MulTFRC
    /// rate (the aggregate and the adaptive default) rather than a number of
    /// connections.
    pub fn is_fractional(&self) -> bool {
        self.config.is_fractional()
    }

    /// The connections to keep open: n rounded, at least one (always one for
    /// the aggregate and adaptive controllers, which put n into one
    /// connection's rate).
    pub fn connections(&self) -> usize {
        if self.is_fractional() {
            1
        } else {
            (self.n.round() as usize).max(1)
        }
    }

    /// `rtt_min` (the adaptive controller's base RTT), if any has been seen.
    pub fn rtt_min(&self) -> Option<Duration> {
        match &self.adaptive {
            Some(adaptive) => adaptive.base_rtt(),
            None => self.history.min(),
        }
    }

    /// The last `ave_rtt` (the adaptive controller's last window minimum).
    pub fn ave_rtt(&self) -> Option<Duration> {
        match &self.adaptive {
            Some(adaptive) => adaptive.last_decision().map(|d| d.window_min_rtt),
            None => self.last_ave_rtt,
        }
    }

    /// Decisions taken so far.
    pub fn decisions(&self) -> u64 {
        self.adaptive
            .as_ref()
            .map_or(self.decisions, AdaptiveCounter::decisions)
    }

    /// The adaptive controller, when it is the one configured.
    pub fn adaptive(&self) -> Option<&AdaptiveCounter> {
        self.adaptive.as_ref()
    }

    /// Takes one feedback's report for the adaptive controller (ignored by
    /// the others); returns its decision when it closes a window.
    pub fn on_adaptive_report(&mut self, now: Instant, report: Report) -> Option<AdaptiveDecision> {
        self.adaptive.as_mut()?.on_report(now, report)
    }

    /// Takes one RTT sample (about one per round trip, paper 001 §3's
    /// receiver report); returns the decision when it completes a window of
    /// `m` samples.
    pub fn on_rtt_sample(&mut self, now: Instant, rtt: Duration) -> Option<Decision> {
        self.on_report(now, rtt, None)
    }

    /// Takes one RTT sample with the time one packet of the session takes
    /// at its receive rate (`s / X_recv`, summed over the connections), for
    /// the packet-time allowance of [`MultiConfig::queue_packets`]; returns
    /// the decision when it completes a window of `m` samples.
    pub fn on_report(
        &mut self,
        now: Instant,
        rtt: Duration,
        packet_time: Option<Duration>,
    ) -> Option<Decision> {
        let config = match self.config {
            ConnectionCountConfig::Fixed(_) | ConnectionCountConfig::Adaptive(_) => return None,
            ConnectionCountConfig::Multfrc(c)
            | ConnectionCountConfig::EMultfrc(c)
            | ConnectionCountConfig::Aggregate(c) => c,
        };
        // A sample of an hour or more is no RTT: ignore it rather than let it
        // poison the average.
        if rtt.is_zero() || rtt > Duration::from_secs(3600) {
            return None;
        }
        self.window_sum += rtt;
        self.window_len += 1;
        if let Some(t) = packet_time.filter(|t| !t.is_zero() && *t <= Duration::from_secs(3600)) {
            self.packet_time_sum += t.as_secs_f64();
            self.packet_time_len += 1;
        }
        if self.window_len < config.m {
            return None;
        }
        // RMS: ave_rtt = (1/m) Σ rtt_sample_i (paper 001 §3).
        let ave_rtt = self.window_sum / self.window_len as u32;
        let packet_time =
            (self.packet_time_len > 0).then(|| self.packet_time_sum / self.packet_time_len as f64);
        self.window_sum = Duration::ZERO;
        self.window_len = 0;
        self.packet_time_sum = 0.0;
        self.packet_time_len = 0;
        self.last_ave_rtt = Some(ave_rtt);
        self.history.push(now, ave_rtt, config.rtt_min_lifetime);
        let rtt_min = self.rtt_min().unwrap_or(ave_rtt);
        // Paper 001 eq. 6 / paper 000 eq. 2.
        let queueing = ave_rtt.saturating_sub(rtt_min).as_secs_f64();
        if let Some(t) = packet_time {
            self.min_packet_time = Some(self.min_packet_time.map_or(t, |m| m.min(t)));
        }
        // The packet-time allowance uses the highest receive rate seen: the
        // best lower bound on the bottleneck's capacity the sender has, so
        // that a session squeezed by cross traffic (a low receive rate)
        // does not tolerate a longer queue for it.
        let threshold = threshold(&config, rtt_min, self.min_packet_time);
        let congested = queueing > threshold;
        let n = self.n;
        self.congestion_seen |= congested;
        let starting = config.startup && !self.congestion_seen;
        let next = match (self.config, congested) {
            (ConnectionCountConfig::EMultfrc(_), true) => config.beta * n + config.alpha / n,
            (_, true) => n - config.beta,
            (_, false) if starting => n + config.alpha,
            (_, false) => n + config.alpha / n,
        };
        self.n = next.clamp(1.0, config.max);
        self.decisions += 1;
        Some(Decision {
            ave_rtt,
            rtt_min,
            threshold: Duration::from_secs_f64(threshold),
            congested,
            n: self.n,
        })
    }
}

/// The smallest RTT of the last `lifetime` (of all time without one): a
/// sliding-window minimum, shared by the IIAD rules' `rtt_min` and the
/// adaptive controller's base RTT.
#[derive(Clone, Debug, Default)]
struct ExpiringMinimum {
    /// (time, value), increasing in both from front to back: a value that
    /// a newer, smaller one outlives can never be the minimum again.
    entries: VecDeque<(Instant, Duration)>,
}

impl ExpiringMinimum {
    /// At most this many entries (one per distinct new minimum within the
    /// lifetime; without a lifetime only the minimum stays), against a peer
    /// whose samples keep rising: the oldest goes first.
    const MAX_ENTRIES: usize = 4096;

    /// Takes `value` seen at `now`; entries older than `lifetime` expire.
    fn push(&mut self, now: Instant, value: Duration, lifetime: Option<Duration>) {
        if let Some(lifetime) = lifetime {
            while self
                .entries
                .front()
                .is_some_and(|(at, _)| now.saturating_duration_since(*at) > lifetime)
            {
                self.entries.pop_front();
            }
        }
        while self.entries.back().is_some_and(|(_, v)| *v >= value) {
            self.entries.pop_back();
        }
        self.entries.push_back((now, value));
        if self.entries.len() > Self::MAX_ENTRIES {
            self.entries.pop_front();
        }
    }

    /// The minimum, once a value has been seen.
    fn min(&self) -> Option<Duration> {
        self.entries.front().map(|(_, v)| *v)
    }
}

/// The queueing delay tolerated, in seconds: `γ · rtt_min` (paper 001
/// eq. 6), raised to `k` packet times of the session's receive rate when
/// that is more, but to no more than `gamma_max · rtt_min`.
pub fn threshold(config: &MultiConfig, rtt_min: Duration, packet_time: Option<f64>) -> f64 {
    let base = config.gamma * rtt_min.as_secs_f64();
    let allowance = packet_time.map_or(0.0, |t| config.queue_packets * t);
    let cap = config.gamma_max * rtt_min.as_secs_f64();
    base.max(allowance.min(cap))
}

#[cfg(test)]
mod tests;
