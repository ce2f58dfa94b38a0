//! What the receiver measures: the round-trip time it works with, and the
//! receive rate X_recv.

use std::time::Duration;

use crate::time::Instant;
use crate::units::Rate;

/// The largest R taken from a peer; a larger value is clamped (it would only
/// delay feedback by more than a minute).
pub(super) const MAX_RTT: Duration = Duration::from_secs(64);

/// The smallest R used (a zero R would ask for feedback continuously).
pub(super) const MIN_RTT: Duration = Duration::from_micros(1);

/// The receiver's R: the sender's estimate carried in data packets
/// (RFC 5348 §3.2.1), or else one derived from DCCP window counters
/// (RFC 4342 §8.1: the window counter grows by 4 per round-trip time).
#[derive(Clone, Debug, Default)]
pub(super) struct RttTracker {
    carried: Option<Duration>,
    /// Arrival of the first in-order packet with each window counter value,
    /// and the counter's total advance (not taken modulo 16) at that packet.
    first_arrival: [Option<(Instant, u64)>; 16],
    last_counter: Option<u8>,
    /// The counter's total advance since the first packet: the sum of the
    /// steps between consecutive values (each taken modulo 16).
    advance: u64,
    from_counters: Option<Duration>,
}

impl RttTracker {
    /// R as of now: the sender's, else the one from window counters.
    pub(super) fn get(&self) -> Option<Duration> {
        self.carried.or(self.from_counters)
    }

    /// The sender put its R in a data packet.
    pub(super) fn on_carried(&mut self, rtt: Duration) {
        if !rtt.is_zero() {
            self.carried = Some(rtt.clamp(MIN_RTT, MAX_RTT));
        }
    }

    /// An in-order packet (above every one received before) carried window
    /// counter `counter` and arrived at `arrival`.
    ///
    /// When a counter value c first appears, the time since the first
    /// packet with c - 4 (mod 16) is one RTT sample, provided the counter
    /// advanced by exactly 4 from that packet to this one; samples are
    /// smoothed like the sender's (RFC 5348 §4.3, q = 0.9).
    ///
    /// The advance is counted, not read modulo 16: a sender with less than
    /// a packet per quarter RTT skips values, up to 5 at a time (RFC 4342
    /// §8.1), and the last packet with c - 4 may then be 4 + 16 k quarters
    /// back (0, 5, 10, 15, 4: five RTTs from 0 to 4). Taking that as an RTT
    /// made R several times too large, and the feedback (once per R, RFC
    /// 5348 §6.2) as rare.
    pub(super) fn on_window_counter(&mut self, counter: u8, arrival: Instant) {
        let counter = usize::from(counter & 0x0F);
        if self.last_counter == Some(counter as u8) {
            return;
        }
        if let Some(last) = self.last_counter {
            self.advance = self
                .advance
                .saturating_add(u64::from((counter as u8).wrapping_sub(last) & 0x0F));
        }
        self.last_counter = Some(counter as u8);
        if let Some((quarter_rtts_ago, advance)) = self.first_arrival[(counter + 12) % 16] {
            let one_rtt = self.advance.saturating_sub(advance) == 4;
            let sample = arrival.saturating_duration_since(quarter_rtts_ago);
            if one_rtt && !sample.is_zero() {
                let sample = sample.clamp(MIN_RTT, MAX_RTT);
                self.from_counters = Some(match self.from_counters {
                    Some(r) => r.mul_f64(0.9) + sample.mul_f64(0.1),
                    None => sample,
                });
            }
        }
        self.first_arrival[counter] = Some((arrival, self.advance));
    }
}

/// Bytes received over two adjoining windows, each opened by a feedback: the
/// receive rate "over the last RTT" is measured over the current window when
/// it is at least R long, else over both (RFC 5348 §6.2 step 2; like Linux
/// after RFC 4342 errata 610/611, never over less than R when it can).
#[derive(Clone, Debug, Default)]
pub(super) struct ReceiveRateMeter {
    current: Option<Window>,
    previous: Option<Window>,
}

#[derive(Clone, Copy, Debug)]
struct Window {
    start: Instant,
    bytes: u64,
}

impl ReceiveRateMeter {
    /// `bytes` of data arrived at `now`.
    pub(super) fn on_bytes(&mut self, now: Instant, bytes: u64) {
        let window = self.current.get_or_insert(Window {
            start: now,
            bytes: 0,
        });
        window.bytes = window.bytes.saturating_add(bytes);
    }

    /// The window the rate is measured over at `now`, as (start, bytes).
    fn span(&self, now: Instant, rtt: Duration) -> Option<(Instant, u64)> {
        let current = self.current?;
        match self.previous {
            Some(previous) if now.saturating_duration_since(current.start) < rtt => {
                Some((previous.start, previous.bytes.saturating_add(current.bytes)))
            }
            _ => Some((current.start, current.bytes)),
        }
    }

    /// X_recv at `now`: zero when no time has passed, as for the feedback to
    /// the first packet (which Linux CCID 3 also sends with X_recv = 0).
    pub(super) fn rate(&self, now: Instant, rtt: Duration) -> Rate {
        match self.span(now, rtt) {
            Some((start, bytes)) => {
                let seconds = now.saturating_duration_since(start).as_secs_f64();
                if seconds > 0.0 {
                    Rate::from_bytes_per_sec(bytes as f64 / seconds)
                } else {
                    Rate::ZERO
                }
            }
            None => Rate::ZERO,
        }
    }

    /// A feedback was sent at `now`: a new window starts.
    pub(super) fn restart(&mut self, now: Instant, rtt: Duration) {
        if let Some((start, bytes)) = self.span(now, rtt) {
            self.previous = Some(Window { start, bytes });
        }
        self.current = Some(Window {
            start: now,
            bytes: 0,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_from_window_counters() {
        let mut tracker = RttTracker::default();
        // Counter +1 every 25 ms: R = 100 ms.
        for i in 0..40u64 {
            tracker.on_window_counter((i % 16) as u8, Instant::from_millis(i * 25));
        }
        assert_eq!(tracker.get(), Some(Duration::from_millis(100)));
        // A carried R wins.
        tracker.on_carried(Duration::from_millis(80));
        assert_eq!(tracker.get(), Some(Duration::from_millis(80)));
        tracker.on_carried(Duration::ZERO);
        assert_eq!(tracker.get(), Some(Duration::from_millis(80)));
        tracker.on_carried(Duration::from_secs(1_000_000));
        assert_eq!(tracker.get(), Some(MAX_RTT));
    }

    #[test]
    fn stale_counter_entries_give_no_sample() {
        let mut tracker = RttTracker::default();
        // 0 at t = 0, then jumps of 5 (at least 5 quarter RTTs each, so R is
        // at most 80 ms): 5, 10, 15, 4. The 0 is 20 quarters before the 4,
        // not 4: no sample (it would say 400 ms); nor from 5 to 9.
        for (counter, ms) in [(0, 0), (5, 100), (10, 200), (15, 300), (4, 400), (9, 500)] {
            tracker.on_window_counter(counter, Instant::from_millis(ms));
        }
        assert_eq!(tracker.get(), None);
        // A step of 4 after them is one.
        tracker.on_window_counter(13, Instant::from_millis(560));
        assert_eq!(tracker.get(), Some(Duration::from_millis(60)));
        let mut tracker = RttTracker::default();
        // 0, 1, … 15, 0, 5: at the second 5, the entry for 1 is from the
        // previous cycle (before the first 5): no sample from it.
        for counter in 0..16u8 {
            tracker.on_window_counter(counter, Instant::from_millis(u64::from(counter) * 25));
        }
        let before = tracker.get();
        tracker.on_window_counter(0, Instant::from_millis(400));
        let after_zero = tracker.get();
        tracker.on_window_counter(5, Instant::from_millis(500));
        assert_eq!(tracker.get(), after_zero);
        assert!(before.is_some());
    }

    #[test]
    fn rate_over_at_least_one_rtt() {
        let rtt = Duration::from_millis(100);
        let mut meter = ReceiveRateMeter::default();
        meter.on_bytes(Instant::ZERO, 1_000);
        assert_eq!(meter.rate(Instant::ZERO, rtt), Rate::ZERO);
        meter.restart(Instant::ZERO, rtt);
        for ms in 1..=100 {
            meter.on_bytes(Instant::from_millis(ms), 100);
        }
        let at = Instant::from_millis(100);
        assert!((meter.rate(at, rtt).bytes_per_sec() - 100_000.0).abs() < 1e-6);
        meter.restart(at, rtt);
        // 10 ms later: measured over the last 110 ms.
        for ms in 101..=110 {
            meter.on_bytes(Instant::from_millis(ms), 100);
        }
        let x = meter.rate(Instant::from_millis(110), rtt).bytes_per_sec();
        assert!((x - 11_000.0 / 0.11).abs() < 1e-6, "{x}");
    }
}
