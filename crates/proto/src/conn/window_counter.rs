//! The CCID 3/4 sender's window counter, carried in the CCVal header field
//! (RFC 4342 §8.1).
//!
//! The counter advances by one every quarter of a round-trip time, by at most
//! five between two packets, modulo 16. The receiver uses it to tell whether two
//! losses fall within one RTT (RFC 4342 §10.2).

use std::time::Duration;

use crate::time::Instant;

/// The RTT assumed before there is an estimate. RFC 4340 §3.4: "a default
/// RTT of 0.2 seconds".
pub const FALLBACK_RTT: Duration = Duration::from_millis(200);

/// The sender's window counter (RFC 4342 §8.1).
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowCounter {
    value: u8,
    /// When the counter last changed.
    last_update: Option<Instant>,
}

impl WindowCounter {
    /// A counter at zero.
    pub fn new() -> WindowCounter {
        WindowCounter::default()
    }

    /// The current value, 0..=15.
    pub fn value(&self) -> u8 {
        self.value
    }

    /// The CCVal for a data packet sent at `now`, with the sender's RTT
    /// estimate `rtt` (or [`FALLBACK_RTT`]).
    ///
    /// RFC 4342 §8.1: the counter "is incremented by one every quarter of a
    /// round-trip time", and "the window counter MUST NOT be incremented by
    /// more than 5 between two consecutive data packets".
    pub fn on_send(&mut self, now: Instant, rtt: Option<Duration>) -> u8 {
        let quarter = rtt.unwrap_or(FALLBACK_RTT).max(Duration::from_nanos(4)) / 4;
        match self.last_update {
            None => self.last_update = Some(now),
            Some(last) => {
                let quarters = (now - last).as_nanos() / quarter.as_nanos().max(1);
                if quarters > 0 {
                    self.advance(quarters.min(5) as u8);
                    self.last_update = Some(now);
                }
            }
        }
        self.value
    }

    /// An acknowledgement arrived for a packet sent with CCVal `acked`.
    /// RFC 4342 §8.1: the sender "SHOULD increase its window counter, if
    /// necessary, so that subsequent packets have window counter value at least
    /// (C + 4) mod 16".
    pub fn on_ack_of(&mut self, now: Instant, acked: u8) {
        let target = (acked & 0x0f).wrapping_add(4) & 0x0f;
        let ahead = (target.wrapping_sub(self.value)) & 0x0f;
        // Only move forward, and only by less than half the circle: a
        // distance of 8 or more means the counter is already past the target.
        if ahead > 0 && ahead < 8 {
            self.advance(ahead);
            self.last_update = Some(now);
        }
    }

    fn advance(&mut self, by: u8) {
        self.value = (self.value + by) & 0x0f;
    }
}

/// The distance from window counter `earlier` to `later`, modulo 16.
pub fn counter_distance(earlier: u8, later: u8) -> u8 {
    later.wrapping_sub(earlier) & 0x0f
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Duration = Duration::from_millis(100);

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn one_step_per_quarter_rtt() {
        let mut w = WindowCounter::new();
        assert_eq!(w.on_send(at(0), Some(R)), 0);
        assert_eq!(w.on_send(at(10), Some(R)), 0);
        assert_eq!(w.on_send(at(25), Some(R)), 1);
        assert_eq!(w.on_send(at(49), Some(R)), 1);
        assert_eq!(w.on_send(at(75), Some(R)), 3);
    }

    #[test]
    fn at_most_five_between_packets_and_wraps() {
        let mut w = WindowCounter::new();
        w.on_send(at(0), Some(R));
        assert_eq!(w.on_send(at(10_000), Some(R)), 5);
        assert_eq!(w.on_send(at(20_000), Some(R)), 10);
        assert_eq!(w.on_send(at(30_000), Some(R)), 15);
        assert_eq!(w.on_send(at(40_000), Some(R)), 4);
        assert_eq!(counter_distance(15, 4), 5);
    }

    #[test]
    fn fallback_rtt_before_an_estimate() {
        let mut w = WindowCounter::new();
        w.on_send(at(0), None);
        assert_eq!(w.on_send(at(49), None), 0);
        assert_eq!(w.on_send(at(50), None), 1);
    }

    #[test]
    fn ack_pushes_the_counter_to_c_plus_4() {
        let mut w = WindowCounter::new();
        w.on_send(at(0), Some(R));
        w.on_ack_of(at(5), 0);
        assert_eq!(w.value(), 4);
        // Already past: no change.
        w.on_ack_of(at(6), 15);
        assert_eq!(w.value(), 4);
        w.on_ack_of(at(7), 14);
        assert_eq!(w.value(), 4);
    }
}
