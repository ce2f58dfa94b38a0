//! The real clock, read as the simulator's time: nanoseconds since the
//! emulator was bound, as a [`fairstream_proto::time::Instant`].
//!
//! The link models take time as a parameter and never read a clock (STYLE.md
//! rule 1); the emulator is the driver that feeds them the real time, and
//! [`Clock::read`] is the one place where it reads it.

use fairstream_proto::time::Instant;

/// A monotonic clock whose epoch is the moment it was started.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    epoch: std::time::Instant,
}

impl Clock {
    /// A clock reading zero now.
    pub(crate) fn start() -> Clock {
        Clock {
            epoch: Clock::read(),
        }
    }

    /// The time since the clock was started.
    pub(crate) fn now(&self) -> Instant {
        let elapsed = Clock::read().saturating_duration_since(self.epoch);
        // u64 nanoseconds last 584 years.
        Instant::from_nanos(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The operating system's monotonic clock. `clippy.toml` forbids reading
    /// it in protocol and simulator code; the emulator drives the simulator's
    /// link models in real time, so it must.
    #[allow(clippy::disallowed_methods)]
    fn read() -> std::time::Instant {
        std::time::Instant::now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_near_zero_and_never_goes_back() {
        let clock = Clock::start();
        let first = clock.now();
        assert!(first.as_nanos() < 1_000_000_000, "{first}");
        let mut previous = first;
        for _ in 0..1000 {
            let now = clock.now();
            assert!(now >= previous);
            previous = now;
        }
    }
}
