//! Application traffic sources: what a flow has to send, and when.
//!
//! A source is polled with the current time and hands out messages (sizes in
//! bytes) as they become ready; the flow then offers them to its transport,
//! which may take them at once or later (congestion control). Sources never
//! read a clock; the on-off source draws its periods from its own
//! [`SimRng`].

use std::time::Duration;

use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;

use crate::rng::SimRng;

/// What kind of traffic a source generates.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceConfig {
    /// Always has data (bulk transfer, "saturating").
    Saturating {
        /// Size of each message, bytes.
        packet_size: u32,
    },
    /// Constant bit rate: one message of `packet_size` every
    /// packet_size/rate.
    Cbr {
        /// The rate.
        rate: Rate,
        /// Size of each message, bytes.
        packet_size: u32,
    },
    /// On-off: CBR at `rate` during exponentially distributed on periods
    /// (mean `on`), silent during exponentially distributed off periods (mean
    /// `off`), starting with an on period — the usual model of a voice source.
    OnOff {
        /// The rate while on.
        rate: Rate,
        /// Size of each message, bytes.
        packet_size: u32,
        /// Mean on period.
        on: Duration,
        /// Mean off period.
        off: Duration,
    },
}

/// A running source.
#[derive(Clone, Debug)]
pub struct Source {
    config: SourceConfig,
    /// When the next message is due (CBR, on-off).
    next: Instant,
    /// End of the current on period (on-off), or the start of the next one
    /// when `off` is true.
    period_end: Instant,
    off: bool,
    rng: SimRng,
    messages: u64,
    bytes: u64,
}

impl Source {
    /// A source starting at `start`, drawing randomness from `rng`.
    pub fn new(config: SourceConfig, start: Instant, mut rng: SimRng) -> Source {
        let period_end = match &config {
            SourceConfig::OnOff { on, .. } => start + secs(rng.exponential(on.as_secs_f64())),
            _ => Instant::MAX,
        };
        Source {
            config,
            next: start,
            period_end,
            off: false,
            rng,
            messages: 0,
            bytes: 0,
        }
    }

    /// The message size this source uses.
    pub fn packet_size(&self) -> u32 {
        match self.config {
            SourceConfig::Saturating { packet_size }
            | SourceConfig::Cbr { packet_size, .. }
            | SourceConfig::OnOff { packet_size, .. } => packet_size.max(1),
        }
    }

    /// Messages and bytes handed out so far.
    pub fn totals(&self) -> (u64, u64) {
        (self.messages, self.bytes)
    }

    /// Whether the source always has data.
    pub fn is_saturating(&self) -> bool {
        matches!(self.config, SourceConfig::Saturating { .. })
    }

    /// The next message if one is ready at `now` (its size in bytes).
    pub fn poll(&mut self, now: Instant) -> Option<u32> {
        let size = self.packet_size();
        match self.config.clone() {
            SourceConfig::Saturating { .. } => {}
            SourceConfig::Cbr { rate, .. } => {
                if now < self.next {
                    return None;
                }
                self.next += interval(rate, size);
            }
            SourceConfig::OnOff { rate, on, off, .. } => {
                self.advance_periods(now, on, off);
                if self.off || now < self.next {
                    return None;
                }
                self.next += interval(rate, size);
            }
        }
        self.messages += 1;
        self.bytes += u64::from(size);
        Some(size)
    }

    /// When the source next has a message (`None`: always ready, saturating).
    pub fn next_ready(&self) -> Option<Instant> {
        match self.config {
            SourceConfig::Saturating { .. } => None,
            SourceConfig::Cbr { .. } => Some(self.next),
            SourceConfig::OnOff { .. } => Some(if self.off {
                self.period_end.max(self.next)
            } else {
                self.next
            }),
        }
    }

    /// Moves through on and off periods that ended by `now`.
    fn advance_periods(&mut self, now: Instant, on: Duration, off: Duration) {
        // Each step moves `period_end` forward by at least one nanosecond
        // (`secs` never returns zero), so this ends; the bound guards against
        // absurdly short periods.
        for _ in 0..1_000_000 {
            if now < self.period_end {
                return;
            }
            if self.off {
                self.off = false;
                let start = self.period_end;
                self.next = self.next.max(start);
                self.period_end = start + secs(self.rng.exponential(on.as_secs_f64()));
            } else {
                self.off = true;
                self.period_end += secs(self.rng.exponential(off.as_secs_f64()));
            }
            self.period_end = self
                .period_end
                .max(now.min(self.period_end) + Duration::from_nanos(1));
        }
    }
}

fn interval(rate: Rate, size: u32) -> Duration {
    rate.time_to_send(f64::from(size)).unwrap_or(Duration::MAX)
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.max(1e-9)).unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(source: &mut Source, until: Instant, step: Duration) -> u64 {
        let mut now = Instant::ZERO;
        let mut bytes = 0;
        while now < until {
            while let Some(size) = source.poll(now) {
                bytes += u64::from(size);
            }
            now += step;
        }
        bytes
    }

    #[test]
    fn cbr_sends_at_its_rate() {
        let rate: Rate = "1mbit".parse().unwrap();
        let mut s = Source::new(
            SourceConfig::Cbr {
                rate,
                packet_size: 1000,
            },
            Instant::ZERO,
            SimRng::new(1),
        );
        let bytes = drain(
            &mut s,
            Instant::from_millis(10_000),
            Duration::from_micros(100),
        );
        // 1 Mbit/s for 10 s = 1.25 MB, give or take one packet.
        assert!((bytes as i64 - 1_250_000).abs() <= 1000, "{bytes}");
        assert_eq!(
            s.next_ready().map(|t| t > Instant::from_millis(9_999)),
            Some(true)
        );
    }

    #[test]
    fn saturating_always_has_data() {
        let mut s = Source::new(
            SourceConfig::Saturating { packet_size: 1460 },
            Instant::ZERO,
            SimRng::new(1),
        );
        assert_eq!(s.poll(Instant::ZERO), Some(1460));
        assert_eq!(s.poll(Instant::ZERO), Some(1460));
        assert_eq!(s.next_ready(), None);
        assert!(s.is_saturating());
    }

    #[test]
    fn on_off_averages_rate_times_duty_cycle() {
        let rate: Rate = "64kbit".parse().unwrap();
        let config = SourceConfig::OnOff {
            rate,
            packet_size: 160,
            on: Duration::from_millis(1000),
            off: Duration::from_millis(1350),
        };
        let mut s = Source::new(config, Instant::ZERO, SimRng::new(7));
        let seconds = 2000;
        let bytes = drain(
            &mut s,
            Instant::from_millis(seconds * 1000),
            Duration::from_millis(1),
        );
        let mean = bytes as f64 / seconds as f64;
        let expected = rate.bytes_per_sec() * 1.0 / 2.35;
        assert!(
            ((mean - expected) / expected).abs() < 0.08,
            "{mean} vs {expected}"
        );
        // Deterministic for a seed.
        let mut again = Source::new(
            SourceConfig::OnOff {
                rate,
                packet_size: 160,
                on: Duration::from_millis(1000),
                off: Duration::from_millis(1350),
            },
            Instant::ZERO,
            SimRng::new(7),
        );
        assert_eq!(
            drain(
                &mut again,
                Instant::from_millis(seconds * 1000),
                Duration::from_millis(1)
            ),
            bytes
        );
    }
}
