//! Paper 001 §2 (Chen & Zakhor): how many TFRC connections fill a lossy
//! wireless link.
//!
//! The paper analyses the scenario "server — wired network — wireless last hop
//! — client" with the simplified TFRC model of its eq. 1, T = k·S/(rtt·√p).
//! The wireless link has bandwidth B_w and a loss rate p_w from channel errors
//! (not congestion); without congestion rtt = RTT_min and p = p_w. Then
//! - one connection sends at most T_b = k·S/(RTT_min·√p_w) (eq. 2);
//! - it under-uses the link if and only if T_b < B_w (Theorem 1, eq. 3);
//! - n_opt connections fill it: n_opt·S = B_w·RTT_min·√p_w/k (eq. 4), and
//!   n̂_opt = ⌈B_w·RTT_min·√p_w/(k·S)⌉ is the whole number to open (eq. 5),
//!   "resulting in throughput of n̂_opt·k·S·(1 − p_w)/(RTT_min·√p_w)".
//!
//! That throughput exceeds the link's B_w(1 − p_w) whenever n̂_opt > n_opt,
//! which is what the ceiling does; the link cannot carry more, so
//! [`SimpleModel::throughput_with_connections`] caps it there (paper 001 §2.3:
//! "the total throughput of the application is expected to increase with the
//! number of connections until it reaches the hard limit of B_w(1 − p_w)").
//! With n̂_opt the cap always applies; with fewer connections it does not.

use std::time::Duration;

use crate::cc::equation::EquationError;
use crate::units::Rate;

/// The wireless last hop of paper 001 §2.1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WirelessLink {
    /// B_w: the bandwidth available on the wireless link.
    pub bandwidth: Rate,
    /// p_w ∈ (0, 1]: the packet loss rate caused by channel errors.
    pub loss_rate: f64,
    /// RTT_min: the round-trip time without queueing.
    pub rtt_min: Duration,
}

/// The simplified TFRC model of paper 001 eq. 1: T = k·S/(rtt·√p).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimpleModel {
    /// The constant k. Default √(3/2) ≈ 1.22: with it, eq. 1 is RFC 5348's
    /// equation (b = 1) without the timeout term.
    pub k: f64,
}

impl Default for SimpleModel {
    fn default() -> Self {
        SimpleModel { k: 1.5f64.sqrt() }
    }
}

/// Checks the packet size; returns it.
fn check_size(s: f64) -> Result<f64, EquationError> {
    if s > 0.0 && s.is_finite() {
        Ok(s)
    } else {
        Err(EquationError::BadPacketSize(s))
    }
}

/// Checks an RTT; returns it in seconds.
fn check_rtt(rtt: Duration) -> Result<f64, EquationError> {
    let r = rtt.as_secs_f64();
    if r > 0.0 {
        Ok(r)
    } else {
        Err(EquationError::ZeroRtt)
    }
}

/// Checks p ∈ (0, 1].
fn check_p(p: f64) -> Result<f64, EquationError> {
    if p > 0.0 && p <= 1.0 {
        Ok(p)
    } else {
        Err(EquationError::LossRateOutOfRange(p))
    }
}

impl SimpleModel {
    fn check_k(&self) -> Result<f64, EquationError> {
        if self.k > 0.0 && self.k.is_finite() {
            Ok(self.k)
        } else {
            Err(EquationError::BadParameter {
                name: "k",
                value: self.k,
            })
        }
    }

    /// Checks the link; returns (B_w in bytes/s, p_w, RTT_min in seconds).
    fn check_link(link: &WirelessLink) -> Result<(f64, f64, f64), EquationError> {
        let bandwidth = link.bandwidth.bytes_per_sec();
        if !(bandwidth > 0.0 && bandwidth.is_finite()) {
            return Err(EquationError::BadRate(bandwidth));
        }
        Ok((
            bandwidth,
            check_p(link.loss_rate)?,
            check_rtt(link.rtt_min)?,
        ))
    }

    /// T = k·S/(rtt·√p) in bytes/s for packet size `s` bytes (paper 001 eq. 1).
    pub fn rate(&self, s: f64, rtt: Duration, p: f64) -> Result<Rate, EquationError> {
        let k = self.check_k()?;
        let s = check_size(s)?;
        let r = check_rtt(rtt)?;
        let p = check_p(p)?;
        // paper 001 eq. 1
        Ok(Rate::from_bytes_per_sec(k * s / (r * p.sqrt())))
    }

    /// T_b = k·S/(RTT_min·√p_w): the most one connection sends over `link`
    /// (paper 001 eq. 2).
    pub fn single_connection_bound(
        &self,
        s: f64,
        link: &WirelessLink,
    ) -> Result<Rate, EquationError> {
        Self::check_link(link)?;
        // paper 001 eq. 2: eq. 1 at rtt = RTT_min, p = p_w (no congestion).
        self.rate(s, link.rtt_min, link.loss_rate)
    }

    /// Whether one TFRC connection under-uses `link`: T_b < B_w (paper 001
    /// Theorem 1, eq. 3, a necessary and sufficient condition).
    pub fn underutilizes(&self, s: f64, link: &WirelessLink) -> Result<bool, EquationError> {
        let t_b = self.single_connection_bound(s, link)?;
        // paper 001 eq. 3
        Ok(t_b.bytes_per_sec() < link.bandwidth.bytes_per_sec())
    }

    /// n_opt = B_w·RTT_min·√p_w/(k·S), the real number of connections that
    /// fills `link` exactly (paper 001 eq. 4).
    pub fn optimal_connections(&self, s: f64, link: &WirelessLink) -> Result<f64, EquationError> {
        let k = self.check_k()?;
        let s = check_size(s)?;
        let (bandwidth, p_w, rtt_min) = Self::check_link(link)?;
        // paper 001 eq. 4: n_opt·S = B_w·RTT_min·√p_w/k
        Ok(bandwidth * rtt_min * p_w.sqrt() / (k * s))
    }

    /// n̂_opt = ⌈n_opt⌉, the number of connections to open (paper 001 eq. 5);
    /// at least 1 for any valid link.
    pub fn optimal_connection_count(
        &self,
        s: f64,
        link: &WirelessLink,
    ) -> Result<u64, EquationError> {
        let n_opt = self.optimal_connections(s, link)?;
        // paper 001 eq. 5. n_opt is positive and finite here; a count beyond
        // 2^53 is not a number of connections anyone opens.
        if n_opt > 9_007_199_254_740_992.0 {
            return Err(EquationError::BadParameter {
                name: "n_opt",
                value: n_opt,
            });
        }
        Ok(n_opt.ceil() as u64)
    }

    /// The throughput (goodput) of `n` connections over `link`:
    /// min(n·T_b·(1 − p_w), B_w·(1 − p_w)) (paper 001 §2.3).
    pub fn throughput_with_connections(
        &self,
        n: f64,
        s: f64,
        link: &WirelessLink,
    ) -> Result<Rate, EquationError> {
        if !(n > 0.0 && n.is_finite()) {
            return Err(EquationError::BadParameter {
                name: "n",
                value: n,
            });
        }
        let t_b = self.single_connection_bound(s, link)?.bytes_per_sec();
        let delivered = 1.0 - link.loss_rate;
        // paper 001 §2.3: n·k·S·(1 - p_w)/(RTT_min·√p_w), up to "the hard
        // limit of B_w(1 - p_w)".
        let capacity = link.bandwidth.bytes_per_sec() * delivered;
        Ok(Rate::from_bytes_per_sec(
            (n * t_b * delivered).min(capacity),
        ))
    }

    /// The throughput of n̂_opt connections (paper 001 eq. 5 and the sentence
    /// after it), capped at B_w(1 − p_w).
    pub fn predicted_throughput(&self, s: f64, link: &WirelessLink) -> Result<Rate, EquationError> {
        let count = self.optimal_connection_count(s, link)?;
        self.throughput_with_connections(count as f64, s, link)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::equation::tfrc_rate;
    use proptest::prelude::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    /// 2 Mbit/s wireless link, 1 % channel loss, 100 ms RTT.
    fn link() -> WirelessLink {
        WirelessLink {
            bandwidth: Rate::from_bits_per_sec(2e6),
            loss_rate: 0.01,
            rtt_min: Duration::from_millis(100),
        }
    }

    #[test]
    fn eq1_is_the_first_term_of_rfc5348() {
        let model = SimpleModel::default();
        assert!(rel(model.k, 1.224_744_871_391_589) < 1e-15);
        let t = model
            .rate(1000.0, Duration::from_millis(100), 0.01)
            .unwrap();
        // 1.2247449·1000/(0.1·0.1)
        assert!(rel(t.bytes_per_sec(), 122_474.487_139_158_9) < 1e-12);
        // Without the timeout term it is above RFC 5348's X, and close at low p.
        for p in [1e-6, 1e-4, 1e-2] {
            let simple = model.rate(1460.0, Duration::from_millis(100), p).unwrap();
            let full = tfrc_rate(1460.0, Duration::from_millis(100), p).unwrap();
            assert!(simple > full);
        }
        let simple = model
            .rate(1460.0, Duration::from_millis(100), 1e-4)
            .unwrap();
        let full = tfrc_rate(1460.0, Duration::from_millis(100), 1e-4).unwrap();
        assert!(rel(simple.bytes_per_sec(), full.bytes_per_sec()) < 1e-3);
    }

    #[test]
    fn eq2_single_connection_bound() {
        let t_b = SimpleModel::default()
            .single_connection_bound(1000.0, &link())
            .unwrap();
        assert!(rel(t_b.bytes_per_sec(), 122_474.487_139_158_9) < 1e-12);
    }

    #[test]
    fn theorem1_underutilization() {
        let model = SimpleModel::default();
        // T_b = 122.5 kB/s < B_w = 250 kB/s.
        assert!(model.underutilizes(1000.0, &link()).unwrap());
        // A 500 kbit/s link (62.5 kB/s) is filled by one connection.
        let slow = WirelessLink {
            bandwidth: Rate::from_bits_per_sec(500e3),
            ..link()
        };
        assert!(!model.underutilizes(1000.0, &slow).unwrap());
        // The boundary: T_b = B_w exactly is not under-use (strict <).
        let t_b = model.single_connection_bound(1000.0, &link()).unwrap();
        let equal = WirelessLink {
            bandwidth: t_b,
            ..link()
        };
        assert!(!model.underutilizes(1000.0, &equal).unwrap());
    }

    #[test]
    fn eq4_and_eq5_optimal_count() {
        let model = SimpleModel::default();
        let n_opt = model.optimal_connections(1000.0, &link()).unwrap();
        // 250000·0.1·0.1/(1.2247449·1000)
        assert!(rel(n_opt, 2.041_241_452_319_315) < 1e-12, "{n_opt}");
        assert_eq!(model.optimal_connection_count(1000.0, &link()), Ok(3));
        // eq. 4: n_opt connections at T_b each fill B_w exactly.
        let t_b = model.single_connection_bound(1000.0, &link()).unwrap();
        assert!(rel(n_opt * t_b.bytes_per_sec(), 250_000.0) < 1e-12);
        // "what really matters is the product of n_opt and S".
        let half = model.optimal_connections(500.0, &link()).unwrap();
        assert!(rel(half, 2.0 * n_opt) < 1e-12);
        // A link one connection over-fills still needs one.
        let slow = WirelessLink {
            bandwidth: Rate::from_bits_per_sec(100e3),
            ..link()
        };
        assert_eq!(model.optimal_connection_count(1000.0, &slow), Ok(1));
    }

    #[test]
    fn predicted_throughput_is_capped_at_the_link() {
        let model = SimpleModel::default();
        // n̂_opt = 3: 3·122474.5·0.99 = 363749 B/s > B_w(1 - p_w) = 247500.
        let t = model.predicted_throughput(1000.0, &link()).unwrap();
        assert!(rel(t.bytes_per_sec(), 247_500.0) < 1e-12, "{t:?}");
        // Fewer connections than n_opt: n·T_b·(1 - p_w), not capped.
        let two = model
            .throughput_with_connections(2.0, 1000.0, &link())
            .unwrap();
        assert!(rel(two.bytes_per_sec(), 2.0 * 122_474.487_139_158_9 * 0.99) < 1e-12);
        assert!(two.bytes_per_sec() < 247_500.0);
    }

    #[test]
    fn bad_inputs_are_named() {
        let model = SimpleModel::default();
        let bad_p = WirelessLink {
            loss_rate: 0.0,
            ..link()
        };
        assert_eq!(
            model.optimal_connections(1000.0, &bad_p),
            Err(EquationError::LossRateOutOfRange(0.0))
        );
        let bad_bw = WirelessLink {
            bandwidth: Rate::ZERO,
            ..link()
        };
        assert_eq!(
            model.underutilizes(1000.0, &bad_bw),
            Err(EquationError::BadRate(0.0))
        );
        let bad_rtt = WirelessLink {
            rtt_min: Duration::ZERO,
            ..link()
        };
        assert_eq!(
            model.predicted_throughput(1000.0, &bad_rtt),
            Err(EquationError::ZeroRtt)
        );
        assert_eq!(
            model.single_connection_bound(0.0, &link()),
            Err(EquationError::BadPacketSize(0.0))
        );
        let bad_k = SimpleModel { k: -1.0 };
        assert!(bad_k.rate(1000.0, Duration::from_millis(1), 0.1).is_err());
        assert!(model
            .throughput_with_connections(0.0, 1000.0, &link())
            .is_err());
        let huge = WirelessLink {
            bandwidth: Rate::from_bytes_per_sec(1e300),
            ..link()
        };
        assert!(model.optimal_connection_count(1.0, &huge).is_err());
    }

    proptest! {
        /// eq. 5 is the smallest whole number of connections whose total
        /// rate reaches B_w, and the throughput never exceeds the link.
        #[test]
        fn count_is_the_smallest_that_fills(
            bits in 1e4f64..1e9,
            log_p in -6.0f64..-0.01,
            rtt_ms in 1u64..2000,
            s in 40.0f64..9000.0,
        ) {
            let model = SimpleModel::default();
            let link = WirelessLink {
                bandwidth: Rate::from_bits_per_sec(bits),
                loss_rate: 10f64.powf(log_p),
                rtt_min: Duration::from_millis(rtt_ms),
            };
            let n = model.optimal_connection_count(s, &link).unwrap();
            let t_b = model.single_connection_bound(s, &link).unwrap().bytes_per_sec();
            let b_w = link.bandwidth.bytes_per_sec();
            prop_assert!(n >= 1);
            prop_assert!(n as f64 * t_b >= b_w * (1.0 - 1e-12));
            prop_assert!(n == 1 || (n - 1) as f64 * t_b < b_w * (1.0 + 1e-12));
            // Theorem 1: one connection under-uses the link iff more than one is needed.
            prop_assert_eq!(model.underutilizes(s, &link).unwrap(), n > 1);
            let t = model.predicted_throughput(s, &link).unwrap().bytes_per_sec();
            prop_assert!(t <= b_w * (1.0 - link.loss_rate) * (1.0 + 1e-12));
        }
    }
}
