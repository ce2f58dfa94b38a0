//! The TCP throughput equation (RFC 5348 §3.1; paper 000 eq. 7) and its inverse.
//!
//! RFC 5348 §3.1:
//!
//! ```text
//!                               s
//! X_Bps = ----------------------------------------------------------
//!         R*sqrt(2*b*p/3) + (t_RTO * (3*sqrt(3*b*p/8)*p*(1+32*p^2)))
//! ```
//!
//! "TFRC implementations SHOULD set b to 1" and "SHOULD set t_RTO = 4*R".
//! With those, X = s / (R·f(p)) where
//! f(p) = √(2p/3) + 12·√(3p/8)·(p + 32p³) depends on p alone, so a table of f
//! indexed by p replaces the two square roots (paper 000 §3.2 suggests such a
//! table); [`FTable`] is that table, with interpolation that keeps the relative
//! error below 10⁻⁴ and none of the faults of the Linux CCID 3 table (a floored
//! 500-row grid overstating X by up to 41 %, and every p < 10⁻⁴ replaced by 10⁻⁴).
//!
//! Paper 000 eq. 7 writes the RTO term as `t_RTO·min(1, 3√(3bp/8))·p(1+32p²)`,
//! Padhye's original form; it is [`RtoTerm::Padhye`], an option. The RFC's form
//! is the default.

use std::time::Duration;

use crate::units::Rate;

/// The smallest loss event rate the equation is specified for here.
pub const P_MIN: f64 = 1e-9;

/// Why an equation could not be evaluated.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum EquationError {
    /// p must be in (0, 1].
    #[error("loss event rate p = {0} is outside (0, 1]")]
    LossRateOutOfRange(f64),
    /// The round-trip time must be positive.
    #[error("round-trip time must be positive")]
    ZeroRtt,
    /// The packet size must be positive and finite.
    #[error("packet size {0} bytes must be positive")]
    BadPacketSize(f64),
    /// The rate must be positive and finite.
    #[error("rate {0} bytes/s must be positive and finite")]
    BadRate(f64),
    /// No p in (0, 1] gives a rate this low: even p = 1 allows more.
    #[error("rate {rate:.3} bytes/s is below the equation's minimum {min:.3} bytes/s (at p = 1)")]
    RateBelowMinimum {
        /// The rate asked for.
        rate: f64,
        /// The rate at p = 1.
        min: f64,
    },
    /// A parameter of the model (b, the RTO factor, n, j) is out of range.
    #[error("invalid model parameter {name} = {value}")]
    BadParameter {
        /// The parameter's name.
        name: &'static str,
        /// Its value.
        value: f64,
    },
}

/// The form of the retransmission-timeout term.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoTerm {
    /// RFC 5348 §3.1: `t_RTO·3√(3bp/8)·p(1+32p²)`.
    #[default]
    Rfc5348,
    /// Padhye et al. / paper 000 eq. 7: `t_RTO·min(1, 3√(3bp/8))·p(1+32p²)`.
    Padhye,
}

/// The TCP throughput model with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpEquation {
    /// Packets acknowledged by one ACK; RFC 5348 §3.1: "SHOULD set b to 1".
    pub b: f64,
    /// t_RTO as a multiple of R; RFC 5348 §3.1: "SHOULD set t_RTO = 4*R".
    pub rto_factor: f64,
    /// The form of the RTO term.
    pub rto_term: RtoTerm,
}

impl Default for TcpEquation {
    fn default() -> Self {
        TcpEquation {
            b: 1.0,
            rto_factor: 4.0,
            rto_term: RtoTerm::Rfc5348,
        }
    }
}

/// Checks p ∈ (0, 1].
pub(crate) fn check_p(p: f64) -> Result<(), EquationError> {
    if p > 0.0 && p <= 1.0 {
        Ok(())
    } else {
        Err(EquationError::LossRateOutOfRange(p))
    }
}

/// Checks the packet size and the RTT; returns R in seconds.
pub(crate) fn check_s_r(s: f64, rtt: Duration) -> Result<f64, EquationError> {
    if !(s > 0.0 && s.is_finite()) {
        return Err(EquationError::BadPacketSize(s));
    }
    let r = rtt.as_secs_f64();
    if r <= 0.0 {
        return Err(EquationError::ZeroRtt);
    }
    Ok(r)
}

impl TcpEquation {
    /// f(p) = √(2bp/3) + (t_RTO/R)·3√(3bp/8)·p(1+32p²), so that X = s/(R·f(p)).
    ///
    /// Defined for every p ≥ 0 (f(0) = 0); strictly increasing.
    pub fn f(&self, p: f64) -> f64 {
        self.f_of_sqrt(p.max(0.0).sqrt())
    }

    /// f as a function of u = √p: c1·u + c2(u)·u³(1 + 32u⁴).
    fn f_of_sqrt(&self, u: f64) -> f64 {
        let b = self.b;
        let c1 = (2.0 * b / 3.0).sqrt();
        let rto_coefficient = 3.0 * (3.0 * b / 8.0).sqrt();
        let p = u * u;
        let rto_part = match self.rto_term {
            RtoTerm::Rfc5348 => rto_coefficient * u * p * (1.0 + 32.0 * p * p),
            RtoTerm::Padhye => (rto_coefficient * u).min(1.0) * p * (1.0 + 32.0 * p * p),
        };
        c1 * u + self.rto_factor * rto_part
    }

    fn check(&self) -> Result<(), EquationError> {
        if !(self.b > 0.0 && self.b.is_finite()) {
            return Err(EquationError::BadParameter {
                name: "b",
                value: self.b,
            });
        }
        if !(self.rto_factor >= 0.0 && self.rto_factor.is_finite()) {
            return Err(EquationError::BadParameter {
                name: "rto_factor",
                value: self.rto_factor,
            });
        }
        Ok(())
    }

    /// X in bytes/s for packet size `s` bytes, round-trip time `rtt` and loss
    /// event rate `p` ∈ (0, 1].
    pub fn rate(&self, s: f64, rtt: Duration, p: f64) -> Result<Rate, EquationError> {
        self.check()?;
        let r = check_s_r(s, rtt)?;
        check_p(p)?;
        Ok(Rate::from_bytes_per_sec(s / (r * self.f(p))))
    }

    /// The p ∈ (0, 1] for which f(p) = `target` (RFC 5348 §6.3.1 needs this to
    /// turn a receive rate into a first loss interval). Exact to the last few
    /// ulps: safeguarded Newton iteration on u = √p.
    pub fn inverse_f(&self, target: f64) -> Result<f64, EquationError> {
        self.check()?;
        let f_max = self.f_of_sqrt(1.0);
        if !(target > 0.0 && target.is_finite()) {
            return Err(EquationError::BadParameter {
                name: "f(p)",
                value: target,
            });
        }
        if target > f_max {
            return Err(EquationError::BadParameter {
                name: "f(p) above f(1)",
                value: target,
            });
        }
        // Bracket [lo, hi] on u with f(lo) <= target <= f(hi). f is increasing.
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        // Start from the root of the linear term alone: f(u) >= c1·u, so this u
        // is at or above the root (Newton from above converges monotonically
        // while f is convex, which it is for the RFC form).
        let c1 = (2.0 * self.b / 3.0).sqrt();
        let mut u = (target / c1).min(1.0);
        for _ in 0..200 {
            let value = self.f_of_sqrt(u) - target;
            if value == 0.0 {
                break;
            }
            if value > 0.0 {
                hi = u;
            } else {
                lo = u;
            }
            let derivative = self.df_du(u);
            let mut next = u - value / derivative;
            if !(next > lo && next < hi && next.is_finite()) {
                next = 0.5 * (lo + hi);
            }
            if (next - u).abs() <= 1e-17_f64.max(u * 1e-16) {
                u = next;
                break;
            }
            u = next;
        }
        Ok(u * u)
    }

    /// df/du, for Newton's method (u = √p).
    fn df_du(&self, u: f64) -> f64 {
        let b = self.b;
        let c1 = (2.0 * b / 3.0).sqrt();
        let k = 3.0 * (3.0 * b / 8.0).sqrt();
        let p = u * u;
        let rto_part = match self.rto_term {
            // d/du [k·(u³ + 32u⁷)]
            RtoTerm::Rfc5348 => k * (3.0 * p + 224.0 * p * p * p),
            RtoTerm::Padhye => {
                if k * u < 1.0 {
                    k * (3.0 * p + 224.0 * p * p * p)
                } else {
                    // d/du [u² + 32u⁶]
                    2.0 * u + 192.0 * p * p * u
                }
            }
        };
        c1 + self.rto_factor * rto_part
    }

    /// The loss event rate p ∈ (0, 1] at which the equation gives `rate` for
    /// packet size `s` and round-trip time `rtt` (RFC 5348 §6.3.1).
    pub fn loss_event_rate_for(
        &self,
        rate: Rate,
        s: f64,
        rtt: Duration,
    ) -> Result<f64, EquationError> {
        self.check()?;
        let r = check_s_r(s, rtt)?;
        let x = rate.bytes_per_sec();
        if !(x > 0.0 && x.is_finite()) {
            return Err(EquationError::BadRate(x));
        }
        let target = s / (r * x);
        let f_max = self.f_of_sqrt(1.0);
        if target > f_max {
            return Err(EquationError::RateBelowMinimum {
                rate: x,
                min: s / (r * f_max),
            });
        }
        self.inverse_f(target)
    }
}

/// f(p) with RFC 5348's constants (b = 1, t_RTO = 4R).
pub fn f(p: f64) -> f64 {
    TcpEquation::default().f(p)
}

/// X = s/(R·f(p)) with RFC 5348's constants; p ∈ (0, 1].
pub fn tfrc_rate(s: f64, rtt: Duration, p: f64) -> Result<Rate, EquationError> {
    TcpEquation::default().rate(s, rtt, p)
}

/// The loss event rate that gives `rate` with RFC 5348's constants.
pub fn tfrc_loss_event_rate(rate: Rate, s: f64, rtt: Duration) -> Result<f64, EquationError> {
    TcpEquation::default().loss_event_rate_for(rate, s, rtt)
}

/// A lookup table of f(p) for RFC 5348's constants, indexed by the bits of p.
///
/// The table has [`FTable::SUBDIVISIONS`] segments per binade (power of two) of
/// p from 2⁻³⁰ (< 10⁻⁹) to 1; a segment's index is read straight from the
/// exponent and the top mantissa bits of the IEEE-754 representation of p (no
/// logarithm, no division), and f is interpolated linearly across the segment.
/// Within a segment p changes by a factor 1 + 1/128, which bounds the relative
/// interpolation error by about (1/128)²/8 times f''·p²/f: about 10⁻⁶ where
/// f ≈ √p and at most about 7·10⁻⁵ near p = 1 where the p^3.5 term dominates
/// (the tests measure the worst case over 10⁶ points).
#[derive(Clone, Debug)]
pub struct FTable {
    /// Per segment: f at its lower end and the slope df/dp across it.
    segments: Vec<(f64, f64)>,
}

impl FTable {
    /// Log₂ of the number of segments per binade.
    const MANTISSA_BITS: u32 = 7;
    /// Segments per binade.
    pub const SUBDIVISIONS: usize = 1 << Self::MANTISSA_BITS;
    /// The smallest binade covered: p ≥ 2^MIN_EXPONENT.
    const MIN_EXPONENT: i32 = -30;
    const SHIFT: u32 = 52 - Self::MANTISSA_BITS;
    /// The bits of 2^MIN_EXPONENT.
    const BASE_BITS: u64 = ((1023 + Self::MIN_EXPONENT) as u64) << 52;

    fn boundary(i: usize) -> f64 {
        f64::from_bits(Self::BASE_BITS + ((i as u64) << Self::SHIFT))
    }

    /// Builds the table (30 binades × 128 segments).
    pub fn new() -> FTable {
        let exact = TcpEquation::default();
        let count = (-Self::MIN_EXPONENT) as usize * Self::SUBDIVISIONS;
        let segments = (0..count)
            .map(|i| {
                let (p0, p1) = (Self::boundary(i), Self::boundary(i + 1));
                let (f0, f1) = (exact.f(p0), exact.f(p1));
                (f0, (f1 - f0) / (p1 - p0))
            })
            .collect();
        FTable { segments }
    }

    /// f(p) by table lookup and linear interpolation. p below 2⁻³⁰, p ≥ 1 and
    /// NaN are computed directly (there is no cap and no floor).
    #[inline]
    pub fn f(&self, p: f64) -> f64 {
        let bits = p.to_bits();
        // NaN and p >= 1 go to the direct computation.
        if p.is_nan() || p >= 1.0 || bits < Self::BASE_BITS {
            return f(p);
        }
        let index = ((bits - Self::BASE_BITS) >> Self::SHIFT) as usize;
        match self.segments.get(index) {
            Some(&(f0, slope)) => f0 + slope * (p - Self::boundary(index)),
            None => f(p),
        }
    }

    /// X = s/(R·f(p)) using the table.
    pub fn rate(&self, s: f64, rtt: Duration, p: f64) -> Result<Rate, EquationError> {
        let r = check_s_r(s, rtt)?;
        check_p(p)?;
        Ok(Rate::from_bytes_per_sec(s / (r * self.f(p))))
    }
}

impl Default for FTable {
    fn default() -> Self {
        FTable::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const R100: Duration = Duration::from_millis(100);

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    /// The vectors of shared/reference/tfrc-notes.md (RFC 5348 §3.1 with b = 1,
    /// t_RTO = 4R).
    #[test]
    fn reference_vectors() {
        let cases = [
            (1e-4, 0.008172314, 1_786_520.0),
            (1e-3, 0.026052275, 560_412.0),
            (1e-2, 0.089021642, 164_005.0),
            (5e-2, 0.271305240, 53_814.0),
            (0.1, 0.564939, 25_843.0),
            (0.5, 23.960036, 609.0),
            (1.0, 243.315981, 60.0),
        ];
        for (p, f_expected, x_expected) in cases {
            assert!(
                rel(f(p), f_expected) < 1e-6,
                "f({p}) = {} vs {f_expected}",
                f(p)
            );
            let x = tfrc_rate(1460.0, R100, p).unwrap().bytes_per_sec();
            // The table's X are rounded to whole bytes/s.
            assert!(
                (x - x_expected).abs() <= 0.5 + 1e-6 * x_expected,
                "X({p}) = {x}"
            );
        }
        let x = tfrc_rate(1460.0, R100, 0.01).unwrap().bytes_per_sec();
        assert!(rel(x, 164_005.06) < 1e-6, "{x}");
    }

    #[test]
    fn inverse_is_exact() {
        let x = tfrc_rate(1460.0, R100, 0.01).unwrap();
        let p = tfrc_loss_event_rate(x, 1460.0, R100).unwrap();
        assert!(rel(p, 0.01) < 1e-12, "{p}");
        // tfrc-notes.md: X_recv = 100 kB/s, s = 1460, R = 0.1 s -> f = 0.146 -> p ≈ 0.0234
        // "(±5 %)": the note's p is a 5 %-tolerance answer (X(0.0234) is 96.2 kB/s,
        // within 5 % of 100 kB/s). The exact inverse is p = 0.022122.
        let p = tfrc_loss_event_rate(Rate::from_bytes_per_sec(100_000.0), 1460.0, R100).unwrap();
        assert!(rel(f(p), 0.146) < 1e-12);
        assert!(rel(p, 0.022_122_29) < 1e-6, "{p}");
        let x_note = tfrc_rate(1460.0, R100, 0.0234).unwrap().bytes_per_sec();
        assert!(rel(x_note, 100_000.0) < 0.05, "{x_note}");
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            tfrc_rate(1460.0, R100, 0.0),
            Err(EquationError::LossRateOutOfRange(0.0))
        );
        assert!(tfrc_rate(1460.0, R100, 1.5).is_err());
        assert!(tfrc_rate(1460.0, R100, f64::NAN).is_err());
        assert_eq!(
            tfrc_rate(1460.0, Duration::ZERO, 0.1),
            Err(EquationError::ZeroRtt)
        );
        assert!(tfrc_rate(0.0, R100, 0.1).is_err());
        let below = tfrc_loss_event_rate(Rate::from_bytes_per_sec(10.0), 1460.0, R100);
        assert!(
            matches!(below, Err(EquationError::RateBelowMinimum { .. })),
            "{below:?}"
        );
        assert!(tfrc_loss_event_rate(Rate::INFINITY, 1460.0, R100).is_err());
    }

    #[test]
    fn monotone_and_finite_over_the_range() {
        let mut previous = 0.0;
        let mut p = P_MIN;
        while p <= 1.0 {
            let value = f(p);
            assert!(
                value.is_finite() && value > previous,
                "f not increasing at {p}"
            );
            previous = value;
            p *= 1.01;
        }
    }

    #[test]
    fn padhye_form_differs_only_at_high_p() {
        let padhye = TcpEquation {
            rto_term: RtoTerm::Padhye,
            ..TcpEquation::default()
        };
        // 3√(3p/8) < 1 for p < 8/27: identical there.
        assert_eq!(padhye.f(0.01), f(0.01));
        assert!(padhye.f(0.5) < f(0.5));
        let p = padhye.inverse_f(padhye.f(0.6)).unwrap();
        assert!(rel(p, 0.6) < 1e-10, "{p}");
    }

    /// The table's relative error over 10⁶ log-spaced points in [1e-9, 1].
    #[test]
    fn table_error_below_1e_minus_4() {
        let table = FTable::new();
        let n = 1_000_000;
        let mut worst: f64 = 0.0;
        for i in 0..=n {
            let p = 10f64.powf(-9.0 + 9.0 * i as f64 / n as f64);
            worst = worst.max(rel(table.f(p), f(p)));
        }
        assert!(worst < 1e-4, "worst relative error {worst}");
        eprintln!("FTable worst relative error over 10^6 points: {worst:.3e}");
        // The Linux table's faults do not occur: no floor to a grid near
        // 2e-4, and no cap below 1e-4.
        for p in [2.05e-4, 5e-5, 1e-6, 1e-9, 1e-12] {
            assert!(rel(table.f(p), f(p)) < 1e-4, "p = {p}");
        }
        let x = table.rate(1460.0, R100, 1e-6).unwrap().bits_per_sec();
        assert!(x > 14.3e6 * 5.0, "{x}");
    }

    proptest! {
        #[test]
        fn inverse_round_trips(log_p in -9.0f64..0.0) {
            let p = 10f64.powf(log_p);
            let x = tfrc_rate(1460.0, R100, p).unwrap();
            let back = tfrc_loss_event_rate(x, 1460.0, R100).unwrap();
            prop_assert!(rel(back, p) < 1e-9, "p {} back {}", p, back);
        }

        #[test]
        fn rate_decreases_in_p_and_rtt(log_p in -9.0f64..-0.01, rtt_ms in 1u64..2000) {
            let p = 10f64.powf(log_p);
            let rtt = Duration::from_millis(rtt_ms);
            let x = tfrc_rate(1000.0, rtt, p).unwrap().bytes_per_sec();
            prop_assert!(x.is_finite() && x > 0.0);
            prop_assert!(tfrc_rate(1000.0, rtt, p * 1.001).unwrap().bytes_per_sec() < x);
            prop_assert!(tfrc_rate(1000.0, rtt + Duration::from_millis(1), p).unwrap().bytes_per_sec() < x);
        }

        #[test]
        fn table_matches_everywhere(p in 0.0f64..=1.0) {
            let table = FTable::new();
            prop_assume!(p > 0.0);
            prop_assert!(rel(table.f(p), f(p)) < 1e-4);
        }
    }
}
