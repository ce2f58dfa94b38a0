//! Virtual time.
//!
//! fairstream's protocol code never reads a clock. Drivers (the simulator, the
//! socket runtime, tests) pass the current time in as an [`Instant`]: a count of
//! nanoseconds since an epoch the driver chooses. Durations are
//! [`std::time::Duration`].

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time: nanoseconds since an arbitrary, driver-chosen epoch.
///
/// Arithmetic saturates instead of wrapping or panicking: an `Instant` is at
/// least [`Instant::ZERO`] and at most [`Instant::MAX`] (about 584 years).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);
    /// The latest representable instant.
    pub const MAX: Instant = Instant(u64::MAX);

    /// The instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }

    /// The instant `micros` microseconds after the epoch (saturating).
    pub const fn from_micros(micros: u64) -> Self {
        Instant(micros.saturating_mul(1_000))
    }

    /// The instant `millis` milliseconds after the epoch (saturating).
    pub const fn from_millis(millis: u64) -> Self {
        Instant(millis.saturating_mul(1_000_000))
    }

    /// The instant `secs` seconds after the epoch, rounded to the nanosecond.
    /// Negative and NaN inputs give the epoch; too large ones saturate.
    pub fn from_secs_f64(secs: f64) -> Self {
        // `as` from f64 to u64 saturates and maps NaN to 0.
        Instant((secs * 1e9).round() as u64)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the epoch, as a float: whole seconds and round
    /// fractions (60 s, 0.1 s) come out exact, as with
    /// [`Duration::as_secs_f64`].
    pub fn as_secs_f64(self) -> f64 {
        let seconds = self.0 / 1_000_000_000;
        let nanos = self.0 % 1_000_000_000;
        seconds as f64 + nanos as f64 / 1e9
    }

    /// Time elapsed from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// Time elapsed from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn checked_duration_since(self, earlier: Instant) -> Option<Duration> {
        self.0.checked_sub(earlier.0).map(Duration::from_nanos)
    }

    /// `self - d`, or `None` if that would be before the epoch.
    pub fn checked_sub(self, d: Duration) -> Option<Instant> {
        u64::try_from(d.as_nanos())
            .ok()
            .and_then(|n| self.0.checked_sub(n))
            .map(Instant)
    }
}

fn duration_nanos_saturating(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_nanos_saturating(rhs)))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration_nanos_saturating(rhs)))
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier `self` gives zero.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact_for_round_values() {
        assert_eq!(Instant::from_nanos(60_000_000_000).as_secs_f64(), 60.0);
        assert_eq!(Instant::from_nanos(59_900_000_000).as_secs_f64(), 59.9);
        assert_eq!(Instant::from_nanos(100_000_000).as_secs_f64(), 0.1);
        assert_eq!(Instant::from_nanos(1).as_secs_f64(), 1e-9);
    }

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_millis(5);
        assert_eq!(t + Duration::from_millis(5), Instant::from_millis(10));
        assert_eq!(t - Duration::from_secs(1), Instant::ZERO);
        assert_eq!(Instant::ZERO - t, Duration::ZERO);
        assert_eq!(t - Instant::ZERO, Duration::from_millis(5));
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(Instant::ZERO.checked_duration_since(t), None);
        assert_eq!(t.checked_sub(Duration::from_millis(6)), None);
    }

    #[test]
    fn float_conversions() {
        assert_eq!(Instant::from_secs_f64(1.5), Instant::from_millis(1500));
        assert_eq!(Instant::from_secs_f64(-1.0), Instant::ZERO);
        assert_eq!(Instant::from_secs_f64(f64::NAN), Instant::ZERO);
        assert!((Instant::from_millis(250).as_secs_f64() - 0.25).abs() < 1e-12);
    }
}
