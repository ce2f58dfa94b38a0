//! The MulTFRC n-flow throughput equation, its inverse, and paper 001's analysis.
//!
//! MulTFRC (Damjanovic & Welzl, "MulTFRC: providing weighted fairness for
//! multimedia applications (and others too!)", CCR 2009; specified in
//! draft-irtf-iccrg-multfrc as a replacement of the equation of RFC 5348 §3.1)
//! gives the aggregate rate of `n` TFRC flows for a real-valued `n > 0`, so that
//! one connection can take the share of 2.5 flows, or of 0.5 of one. Besides
//! TFRC's parameters it takes `j`, the mean number of packets lost per loss
//! event. The draft's pseudo-code, with t_RTO = 4R and b = 1 by default:
//!
//! ```text
//! af = n < 12 ? n*(1 - (1 - 1/n)^j) : j ;   af = max(min(af, ceil(n)), 1)
//! a  = p*b*af*(24*n^2 + p*b*af*(n - 2*af)^2)
//! x  = (af*p*b*(2*af - n) + sqrt(a)) / (6*n^2*p)
//! z  = t_RTO*(1 + 32*p^2)/(1 - p)
//! q  = min(2*j*b*z/(R*(1 + 3*n/j)*x^2), n*z/(x*R), n)
//! X  = ((1 - q/n)/(p*x*R) + q/(z*(1 - p))) * s
//! ```
//!
//! [`MulTfrcEquation::rate`] evaluates exactly this, with three rewrites that
//! change no value the pseudo-code defines (each is marked where it is made):
//! - for n ≤ 1, `af` is 1 without evaluating `(1 - 1/n)^j` (the clamp to
//!   `[1, ceil(n)] = [1, 1]` gives 1 for any value; for n < 1 and fractional j
//!   the power of a negative base would be NaN);
//! - `x` is computed in a form without cancellation when `2*af < n`;
//! - `z*(1 - p)` is computed as `t_RTO*(1 + 32*p^2)`, so that p = 1 gives the
//!   limit of the expression (all n flows in timeout) instead of ∞·0.
//!
//! The rate is continuous and strictly decreasing in p, so
//! [`MulTfrcEquation::loss_event_rate_for`] inverts it with a bracketing solver.
//!
//! **It is not monotone in n.** The rate jumps where `af` switches from
//! `n(1 - (1 - 1/n)^j)` to `j` at n = 12 (for every j > 1, at every p; −2 % for
//! j = 2, −8 % for j = 5 at p = 10⁻³), jumps down where `ceil(n)` caps `af` for
//! 12 ≤ n < j, and falls with n where the timeout term `q` grows faster than n
//! (for j = 1 from p ≈ 0.13, for j = 20 from p ≈ 0.0035). The tests pin
//! examples of each; the draft defines MulTFRC's n as a weight, and these are
//! properties of its model, kept as they are.
//!
//! [`analysis`] has paper 001's simplified model and its results on the
//! number of connections that fills a lossy wireless link (eq. 1-5).

use std::time::Duration;

use crate::cc::equation::{check_p, check_s_r};
use crate::cc::equation::{EquationError, P_MIN};
use crate::units::Rate;

pub mod analysis;

/// The MulTFRC throughput model with its parameters (draft-irtf-iccrg-multfrc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MulTfrcEquation {
    /// Packets acknowledged by one ACK; as in RFC 5348 §3.1, b = 1.
    pub b: f64,
    /// t_RTO as a multiple of R; as in RFC 5348 §3.1, t_RTO = 4R. Must be
    /// positive: the equation divides by t_RTO.
    pub rto_factor: f64,
}

impl Default for MulTfrcEquation {
    fn default() -> Self {
        MulTfrcEquation {
            b: 1.0,
            rto_factor: 4.0,
        }
    }
}

/// Checks n > 0 and j ≥ 1 (a loss event loses at least one packet).
fn check_n_j(n: f64, j: f64) -> Result<(), EquationError> {
    if !(n > 0.0 && n.is_finite()) {
        return Err(EquationError::BadParameter {
            name: "n",
            value: n,
        });
    }
    if !(j >= 1.0 && j.is_finite()) {
        return Err(EquationError::BadParameter {
            name: "j",
            value: j,
        });
    }
    Ok(())
}

/// The draft's `af`: how many of the n flows one loss event of j packets hits.
fn affected_flows(n: f64, j: f64) -> f64 {
    // draft-irtf-iccrg-multfrc: "af = max(min(af, ceil(N)), 1)". For n <= 1,
    // ceil(n) = 1 and the clamp gives 1 whatever af was; evaluating
    // (1 - 1/n)^j would raise a negative base to a possibly fractional power.
    if n <= 1.0 {
        return 1.0;
    }
    // "if (N < 12) af = N*(1-(1-1/N)^j) else af = j"
    let af = if n < 12.0 {
        n * (1.0 - (1.0 - 1.0 / n).powf(j))
    } else {
        j
    };
    af.min(n.ceil()).max(1.0)
}

impl MulTfrcEquation {
    fn check(&self) -> Result<(), EquationError> {
        if !(self.b > 0.0 && self.b.is_finite()) {
            return Err(EquationError::BadParameter {
                name: "b",
                value: self.b,
            });
        }
        if !(self.rto_factor > 0.0 && self.rto_factor.is_finite()) {
            return Err(EquationError::BadParameter {
                name: "rto_factor",
                value: self.rto_factor,
            });
        }
        Ok(())
    }

    /// X in bytes/s for n flows of packet size `s` bytes, round-trip time `rtt`,
    /// loss event rate `p` ∈ (0, 1] and `j` ≥ 1 packets lost per loss event.
    ///
    /// n may be any positive real number; n = 1 is close to, but not the same
    /// as, RFC 5348's equation (4 % above it at p = 0.01, 21 % at p = 0.05).
    pub fn rate(
        &self,
        s: f64,
        rtt: Duration,
        p: f64,
        n: f64,
        j: f64,
    ) -> Result<Rate, EquationError> {
        self.check()?;
        let r = check_s_r(s, rtt)?;
        check_p(p)?;
        check_n_j(n, j)?;
        Ok(Rate::from_bytes_per_sec(self.rate_unchecked(s, r, p, n, j)))
    }

    /// The equation in bytes/s; R in seconds; the parameters already checked.
    fn rate_unchecked(&self, s: f64, r: f64, p: f64, n: f64, j: f64) -> f64 {
        let b = self.b;
        let t_rto = self.rto_factor * r;
        let af = affected_flows(n, j);
        // draft: a = p*b*af*(24*N^2+p*b*af*(N-2*af)^2);
        //        x = (af*p*b*(2*af-N)+sqrt(a))/(6*N^2*p)
        // With B = af*p*b*(2*af-N) and D = 24*N^2*p*b*af, a = B^2 + D and
        // x = (B + sqrt(B^2 + D))/(6*N^2*p). When B < 0 the sum cancels; the
        // same value is D/(6*N^2*p)/(sqrt(B^2 + D) - B) = 4*b*af/(sqrt(a) - B).
        let big_b = af * p * b * (2.0 * af - n);
        let d = 24.0 * n * n * p * b * af;
        let root = (big_b * big_b + d).sqrt();
        let x = if big_b >= 0.0 {
            (big_b + root) / (6.0 * n * n * p)
        } else {
            4.0 * b * af / (root - big_b)
        };
        // draft: z = t_RTO*(1+32*p^2)/(1-p). z*(1-p) is kept as its own
        // product so that p = 1 (z = inf) gives the limit, not inf*0.
        let z_times_one_minus_p = t_rto * (1.0 + 32.0 * p * p);
        let z = if p < 1.0 {
            z_times_one_minus_p / (1.0 - p)
        } else {
            f64::INFINITY
        };
        // draft: q = min(2*j*b*z/(R*(1+3*N/j)*x^2), N*z/(x*R), N)
        let q = (2.0 * j * b * z / (r * (1.0 + 3.0 * n / j) * x * x))
            .min(n * z / (x * r))
            .min(n);
        // draft: X_Bps = ((1-q/N)/(p*x*R)+q/(z*(1-p)))*s
        ((1.0 - q / n) / (p * x * r) + q / z_times_one_minus_p) * s
    }

    /// The loss event rate p ∈ (0, 1] at which n flows get `rate` in total.
    ///
    /// The rate is strictly decreasing in p, so p is found by a safeguarded
    /// bracketing solver (regula falsi with the Illinois modification, falling
    /// back to bisection) on ln X against ln p; the answer is exact to about
    /// 10⁻¹⁴ relative (the tests check 10⁻¹²). Rates below the rate at p = 1
    /// are refused with [`EquationError::RateBelowMinimum`].
    pub fn loss_event_rate_for(
        &self,
        rate: Rate,
        s: f64,
        rtt: Duration,
        n: f64,
        j: f64,
    ) -> Result<f64, EquationError> {
        self.check()?;
        let r = check_s_r(s, rtt)?;
        check_n_j(n, j)?;
        let target = rate.bytes_per_sec();
        if !(target > 0.0 && target.is_finite()) {
            return Err(EquationError::BadRate(target));
        }
        let at_one = self.rate_unchecked(s, r, 1.0, n, j);
        if target < at_one {
            return Err(EquationError::RateBelowMinimum {
                rate: target,
                min: at_one,
            });
        }
        if target == at_one {
            return Ok(1.0);
        }
        // A lower end with X(p_low) >= target. X grows like 1/sqrt(p) as p -> 0,
        // so every finite rate has one; stop before p underflows.
        let mut p_low = P_MIN;
        while self.rate_unchecked(s, r, p_low, n, j) < target {
            p_low *= 1e-6;
            if p_low < 1e-290 {
                return Err(EquationError::BadRate(target));
            }
        }
        let ln_target = target.ln();
        let g = |ln_p: f64| self.rate_unchecked(s, r, ln_p.exp(), n, j).ln() - ln_target;
        let ln_p = solve_decreasing(g, p_low.ln(), 0.0);
        Ok(ln_p.exp().min(1.0))
    }
}

/// Width of the final bracket on ln p: a relative error of p.
const LN_P_TOLERANCE: f64 = 1e-14;
/// |ln X - ln target| small enough to stop: the rounding noise of X itself.
const LN_RATE_TOLERANCE: f64 = 4.0 * f64::EPSILON;
/// More than enough: bisection alone needs about 60 steps on [ln 1e-290, 0].
const MAX_ITERATIONS: usize = 400;

/// The root of a continuous, strictly decreasing `g` on `[low, high]`, where
/// `g(low) >= 0 >= g(high)`: regula falsi with the Illinois modification, and
/// a bisection step whenever three steps in a row did not halve the bracket.
fn solve_decreasing(g: impl Fn(f64) -> f64, mut low: f64, mut high: f64) -> f64 {
    let mut g_low = g(low);
    let mut g_high = g(high);
    if g_low <= 0.0 {
        return low;
    }
    if g_high >= 0.0 {
        return high;
    }
    // Which end the last step replaced: -1 low, +1 high, 0 neither.
    let mut last_side = 0i8;
    let mut steps_without_halving = 0;
    let mut width_mark = high - low;
    let (mut best, mut best_abs) = if -g_high < g_low {
        (high, -g_high)
    } else {
        (low, g_low)
    };
    for _ in 0..MAX_ITERATIONS {
        if high - low <= LN_P_TOLERANCE {
            break;
        }
        let mid = 0.5 * (low + high);
        let candidate = if steps_without_halving >= 3 {
            last_side = 0;
            mid
        } else {
            let c = (low * g_high - high * g_low) / (g_high - g_low);
            if c > low && c < high {
                c
            } else {
                mid
            }
        };
        let value = g(candidate);
        if value.abs() < best_abs {
            best = candidate;
            best_abs = value.abs();
        }
        if value.abs() <= LN_RATE_TOLERANCE {
            return candidate;
        }
        if value > 0.0 {
            low = candidate;
            g_low = value;
            if last_side == -1 {
                // Illinois: the high end stayed twice; halve its weight.
                g_high *= 0.5;
            }
            last_side = -1;
        } else {
            high = candidate;
            g_high = value;
            if last_side == 1 {
                g_low *= 0.5;
            }
            last_side = 1;
        }
        if high - low <= 0.5 * width_mark {
            width_mark = high - low;
            steps_without_halving = 0;
        } else {
            steps_without_halving += 1;
        }
    }
    best
}

/// MulTFRC's X with b = 1 and t_RTO = 4R.
pub fn multfrc_rate(s: f64, rtt: Duration, p: f64, n: f64, j: f64) -> Result<Rate, EquationError> {
    MulTfrcEquation::default().rate(s, rtt, p, n, j)
}

/// The loss event rate that gives n flows `rate` in total, with b = 1 and
/// t_RTO = 4R.
pub fn multfrc_loss_event_rate(
    rate: Rate,
    s: f64,
    rtt: Duration,
    n: f64,
    j: f64,
) -> Result<f64, EquationError> {
    MulTfrcEquation::default().loss_event_rate_for(rate, s, rtt, n, j)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::equation::tfrc_rate;
    use proptest::prelude::*;

    const R100: Duration = Duration::from_millis(100);
    const S: f64 = 1460.0;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    fn x(p: f64, n: f64, j: f64) -> f64 {
        multfrc_rate(S, R100, p, n, j).unwrap().bytes_per_sec()
    }

    fn tfrc(p: f64) -> f64 {
        tfrc_rate(S, R100, p).unwrap().bytes_per_sec()
    }

    /// tfrc-notes.md, MulTFRC: s = 1460, R = 0.1, t_RTO = 0.4, b = 1, j = 1.
    #[test]
    fn reference_vectors_n1() {
        for (p, expected, ratio) in [
            (0.001, 560_163.0, 1.000),
            (0.01, 170_193.0, 1.038),
            (0.05, 65_035.0, 1.209),
        ] {
            let value = x(p, 1.0, 1.0);
            // The notes round to whole bytes/s and ratios to 3 decimals.
            assert!((value - expected).abs() <= 0.5, "X({p}) = {value}");
            assert!(
                (value / tfrc(p) - ratio).abs() <= 0.0005,
                "ratio at {p}: {}",
                value / tfrc(p)
            );
        }
    }

    #[test]
    fn reference_ratios_n2_and_n_half() {
        for (n, ratios) in [(2.0, [2.011, 2.106, 2.417]), (0.5, [0.494, 0.502, 0.584])] {
            for (p, ratio) in [0.001, 0.01, 0.05].into_iter().zip(ratios) {
                let got = x(p, n, 1.0) / tfrc(p);
                assert!((got - ratio).abs() <= 0.0005, "n = {n}, p = {p}: {got}");
            }
        }
    }

    /// Values of the draft's pseudo-code evaluated literally (in another
    /// language, as written), to 1e-12: the rewrites change nothing.
    #[test]
    fn matches_the_literal_pseudo_code() {
        fn literal(s: f64, r: f64, p: f64, n: f64, j: f64) -> f64 {
            let (b, t_rto) = (1.0, 4.0 * r);
            let mut af = if n < 12.0 {
                n * (1.0 - (1.0 - 1.0 / n).powf(j))
            } else {
                j
            };
            af = af.min(n.ceil()).max(1.0);
            let a = p * b * af * (24.0 * n * n + p * b * af * (n - 2.0 * af).powi(2));
            let x = (af * p * b * (2.0 * af - n) + a.sqrt()) / (6.0 * n * n * p);
            let z = t_rto * (1.0 + 32.0 * p * p) / (1.0 - p);
            let q = (2.0 * j * b * z / (r * (1.0 + 3.0 * n / j) * x * x))
                .min(n * z / (x * r))
                .min(n);
            ((1.0 - q / n) / (p * x * r) + q / (z * (1.0 - p))) * s
        }
        for n in [0.5, 1.0, 1.5, 2.0, 2.5, 7.0, 11.9, 12.0, 30.0] {
            for j in [1.0, 2.0, 3.0, 5.5, 20.0] {
                for p in [1e-6, 1e-3, 0.01, 0.05, 0.2, 0.9] {
                    let want = literal(S, 0.1, p, n, j);
                    assert!(rel(x(p, n, j), want) < 1e-12, "n {n} j {j} p {p}");
                }
            }
        }
    }

    /// At p = 1 every flow is in timeout: X = n·s/(t_RTO·33), the limit.
    #[test]
    fn p_equal_one_is_the_limit() {
        for n in [0.5, 1.0, 3.0] {
            let at_one = x(1.0, n, 2.0);
            assert!(rel(at_one, n * S / (0.4 * 33.0)) < 1e-12, "{at_one}");
            let near = x(1.0 - 1e-9, n, 2.0);
            assert!(rel(near, at_one) < 1e-6, "{near} vs {at_one}");
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        let bad = |n: f64, j: f64| multfrc_rate(S, R100, 0.01, n, j);
        assert_eq!(
            bad(0.0, 1.0),
            Err(EquationError::BadParameter {
                name: "n",
                value: 0.0
            })
        );
        assert!(bad(-1.0, 1.0).is_err());
        assert!(bad(f64::NAN, 1.0).is_err());
        assert!(bad(f64::INFINITY, 1.0).is_err());
        assert_eq!(
            bad(2.0, 0.5),
            Err(EquationError::BadParameter {
                name: "j",
                value: 0.5
            })
        );
        assert!(bad(2.0, f64::NAN).is_err());
        assert_eq!(
            multfrc_rate(S, R100, 0.0, 1.0, 1.0),
            Err(EquationError::LossRateOutOfRange(0.0))
        );
        assert!(multfrc_rate(S, R100, 1.01, 1.0, 1.0).is_err());
        assert_eq!(
            multfrc_rate(S, Duration::ZERO, 0.1, 1.0, 1.0),
            Err(EquationError::ZeroRtt)
        );
        assert!(multfrc_rate(0.0, R100, 0.1, 1.0, 1.0).is_err());
        let no_rto = MulTfrcEquation {
            rto_factor: 0.0,
            ..MulTfrcEquation::default()
        };
        assert!(no_rto.rate(S, R100, 0.1, 1.0, 1.0).is_err());
        let below = multfrc_loss_event_rate(Rate::from_bytes_per_sec(1.0), S, R100, 1.0, 1.0);
        assert!(
            matches!(below, Err(EquationError::RateBelowMinimum { .. })),
            "{below:?}"
        );
        assert!(multfrc_loss_event_rate(Rate::ZERO, S, R100, 1.0, 1.0).is_err());
        assert!(multfrc_loss_event_rate(Rate::INFINITY, S, R100, 1.0, 1.0).is_err());
    }

    #[test]
    fn inverse_of_the_reference_vectors() {
        let p = multfrc_loss_event_rate(
            Rate::from_bytes_per_sec(x(0.01, 2.5, 1.0)),
            S,
            R100,
            2.5,
            1.0,
        )
        .unwrap();
        assert!(rel(p, 0.01) < 1e-12, "{p}");
        // The minimum rate (p = 1) inverts to exactly 1.
        let min = Rate::from_bytes_per_sec(x(1.0, 2.0, 3.0));
        assert_eq!(multfrc_loss_event_rate(min, S, R100, 2.0, 3.0), Ok(1.0));
        // A very high rate needs a p far below P_MIN.
        let p = multfrc_loss_event_rate(Rate::from_bits_per_sec(1e12), S, R100, 1.0, 1.0).unwrap();
        assert!(p < P_MIN && p > 0.0, "{p}");
        assert!(rel(x(p, 1.0, 1.0), 1e12 / 8.0) < 1e-12);
    }

    /// The draft's rate is not monotone in n: the three mechanisms, pinned.
    #[test]
    fn not_monotone_in_n_where_the_draft_is_not() {
        // 1. af switches from n(1-(1-1/n)^j) to j at n = 12.
        for (j, p) in [(2.0, 1e-3), (5.0, 1e-3)] {
            assert!(x(p, 12.0, j) < x(p, 12.0 - 1e-9, j), "j {j}");
        }
        let drop = 1.0 - x(1e-3, 12.0, 5.0) / x(1e-3, 12.0 - 1e-9, 5.0);
        assert!((0.07..0.09).contains(&drop), "{drop}");
        // 2. af = min(j, ceil(n)) grows by one where n passes an integer, 12 <= n < j.
        assert!(x(1e-3, 15.0 + 1e-9, 20.0) < x(1e-3, 15.0, 20.0));
        // 3. The timeout term: X falls with n at high p, or large j.
        assert!(x(0.5, 0.2, 1.0) < x(0.5, 0.15, 1.0));
        assert!(x(0.01, 6.0, 20.0) < x(0.01, 1.0, 20.0));
        // With j = 1 and moderate p none of these happens (see the proptest).
        assert!(x(0.1, 12.0, 1.0) > x(0.1, 12.0 - 1e-9, 1.0));
    }

    proptest! {
        #[test]
        fn finite_and_positive(n in 0.1f64..=64.0, j in 1.0f64..=20.0, log_p in -6.0f64..0.0) {
            let p = 10f64.powf(log_p);
            let value = x(p, n, j);
            prop_assert!(value.is_finite() && value > 0.0, "X = {}", value);
        }

        #[test]
        fn decreasing_in_p(n in 0.1f64..=64.0, j in 1.0f64..=20.0, log_p in -6.0f64..0.0) {
            let p = 10f64.powf(log_p);
            let higher = (p * 1.001).min(1.0);
            prop_assume!(higher > p);
            prop_assert!(x(higher, n, j) < x(p, n, j));
        }

        /// Increasing in n where the draft's rate is (see
        /// `not_monotone_in_n_where_the_draft_is_not`): j = 1 and p <= 0.1
        /// over the whole n range ...
        #[test]
        fn increasing_in_n_for_j1(n in 0.1f64..=64.0, log_p in -6.0f64..-1.0) {
            let p = 10f64.powf(log_p);
            prop_assert!(x(p, n * 1.001, 1.0) > x(p, n, 1.0));
        }

        /// ... and every j in [1, 20] for n < 12 and p <= 0.003.
        #[test]
        fn increasing_in_n_below_12(n in 0.1f64..11.98, j in 1.0f64..=20.0, log_p in -6.0f64..-2.53) {
            let p = 10f64.powf(log_p);
            prop_assert!(x(p, n * 1.001, j) > x(p, n, j));
        }

        #[test]
        fn inverse_round_trips(n in 0.1f64..=64.0, j in 1.0f64..=20.0, log_p in -6.0f64..=0.0) {
            let p = 10f64.powf(log_p).min(1.0);
            let rate = multfrc_rate(S, R100, p, n, j).unwrap();
            let back = multfrc_loss_event_rate(rate, S, R100, n, j).unwrap();
            prop_assert!(rel(back, p) < 1e-12, "p {} back {}", p, back);
        }
    }
}
