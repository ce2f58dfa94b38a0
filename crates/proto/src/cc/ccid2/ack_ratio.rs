//! Congestion control on acknowledgements (RFC 4341 §6.1): detecting lost and
//! marked DCCP-Acks (§6.1.1) and changing the Ack Ratio (§6.1.2).

use std::time::Duration;

use crate::time::Instant;

/// How many of the receiver's most recent sequence numbers the loss detector
/// remembers (one bit each).
const REVERSE_WINDOW: u32 = 128;

/// RFC 4341 §6.1.1: "a packet from the receiver is considered lost after at
/// least NUMDUPACK packets with greater sequence numbers have been received."
///
/// Keeps two bitmaps over the last [`REVERSE_WINDOW`] sequence numbers below the
/// greatest one seen: which were received, and which have been decided (reported
/// lost, or older than the first packet seen). Constant memory, no allocation.
#[derive(Clone, Debug, Default)]
pub(super) struct ReverseLossDetector {
    greatest: Option<u64>,
    /// Bit i: sequence number `greatest - i` was received.
    received: u128,
    /// Bit i: sequence number `greatest - i` was reported lost, or precedes
    /// everything seen (so nothing is known of it).
    decided: u128,
}

impl ReverseLossDetector {
    /// Records a packet from the receiver and returns how many of the
    /// receiver's packets are newly inferred lost.
    pub(super) fn on_packet(&mut self, seq: u64, numdupack: u32) -> u32 {
        match self.greatest {
            None => {
                self.greatest = Some(seq);
                self.received = 1;
                // Nothing is known of packets before the first one seen.
                self.decided = !1;
                return 0;
            }
            Some(greatest) if seq > greatest => {
                let shift = seq - greatest;
                if shift >= u64::from(REVERSE_WINDOW) {
                    self.received = 0;
                    self.decided = 0;
                } else {
                    self.received <<= shift;
                    self.decided <<= shift;
                }
                self.received |= 1;
                self.greatest = Some(seq);
            }
            Some(greatest) => {
                let back = greatest - seq;
                if back < u64::from(REVERSE_WINDOW) {
                    // A late or duplicate packet; a loss already inferred
                    // stays inferred (it was a congestion signal).
                    self.received |= 1u128 << back;
                }
                return 0;
            }
        }
        let mut greater_received = 0;
        let mut lost = 0;
        for i in 0..REVERSE_WINDOW {
            let bit = 1u128 << i;
            if self.received & bit != 0 {
                greater_received += 1;
            } else if self.decided & bit == 0 && greater_received >= numdupack {
                self.decided |= bit;
                lost += 1;
            }
        }
        lost
    }
}

/// The sender's choice of the receiver's Ack Ratio (RFC 4341 §6.1.2).
#[derive(Clone, Debug)]
pub(super) struct AckRatioControl {
    value: u16,
    /// The value the receiver is known to use or has last been told.
    announced: u16,
    /// RFC 4341 §6.1.2: "Ack Ratio 2 is always acceptable" (off by default).
    two_always_acceptable: bool,
    /// A doubling is due (a window of data saw a lost or marked DCCP-Ack) but
    /// waits for the once-per-RTT limit.
    double_pending: bool,
    /// Data packets sent since the last DCCP-Ack congestion event or change.
    clean_packets_sent: u64,
    /// Total data packets sent by the end of the window in which Ack Ratio
    /// was last doubled; a new doubling needs a new window.
    doubling_window_end: u64,
    last_change: Option<Instant>,
    reverse_losses: ReverseLossDetector,
}

impl AckRatioControl {
    /// Starts at `initial` (brought within the constraints for `cwnd`).
    /// `receiver_default` is the Ack Ratio the receiver uses until told
    /// otherwise (RFC 4340 §11.3: 2).
    pub(super) fn new(initial: u16, receiver_default: u16, cwnd: u32, two_ok: bool) -> Self {
        let mut control = AckRatioControl {
            value: initial,
            announced: receiver_default,
            two_always_acceptable: two_ok,
            double_pending: false,
            clean_packets_sent: 0,
            doubling_window_end: 0,
            last_change: None,
            reverse_losses: ReverseLossDetector::default(),
        };
        control.value = control.constrained(initial, cwnd);
        control
    }

    /// The current Ack Ratio.
    pub(super) fn value(&self) -> u16 {
        self.value
    }

    /// The new Ack Ratio if it differs from the one last announced.
    pub(super) fn take_change(&mut self) -> Option<u16> {
        if self.value == self.announced {
            return None;
        }
        self.announced = self.value;
        Some(self.value)
    }

    /// The bounds RFC 4341 §6.1.2 sets for a congestion window of `cwnd`.
    pub(super) fn bounds(&self, cwnd: u32) -> (u16, u16) {
        // RFC 4341 §6.1.2: "(3) Ack Ratio is two or more for a congestion
        // window of four or more packets."
        let lower: u16 = if cwnd >= 4 { 2 } else { 1 };
        // RFC 4341 §6.1.2: "(2) Ack Ratio does not exceed cwnd/2, rounded up,
        // except that Ack Ratio 2 is always acceptable." The exception is off
        // by default: with cwnd = 1 and Ack Ratio 2 the receiver waits for a
        // second packet the sender may not send, and only the timeout
        // recovers (Linux found the same and drops the exception).
        let half = u16::try_from(cwnd.div_ceil(2)).unwrap_or(u16::MAX);
        let mut upper = half.max(lower);
        if self.two_always_acceptable {
            upper = upper.max(2);
        }
        (lower, upper)
    }

    fn constrained(&self, value: u16, cwnd: u32) -> u16 {
        let (lower, upper) = self.bounds(cwnd);
        // RFC 4341 §6.1.2: "(1) Ack Ratio is an integer" (u16, as the Ack
        // Ratio feature of RFC 4340 §11.3 is two bytes).
        value.clamp(lower, upper)
    }

    /// One data packet was sent.
    pub(super) fn on_data_sent(&mut self) {
        self.clean_packets_sent = self.clean_packets_sent.saturating_add(1);
    }

    /// A packet from the receiver arrived. `non_data` and `ecn_marked` describe it.
    pub(super) fn on_receiver_packet(
        &mut self,
        seq: u64,
        non_data: bool,
        ecn_marked: bool,
        numdupack: u32,
        total_sent: u64,
        cwnd: u32,
    ) -> bool {
        let lost = self.reverse_losses.on_packet(seq, numdupack);
        // RFC 4341 §6.1.1: "Ack Ratio depends on losses and marks on the
        // receiver's non-data packets" and "the sender SHOULD assume, for the
        // purpose of Ack Ratio calculation, that every lost packet was a
        // non-data packet."
        let congested = lost > 0 || (ecn_marked && non_data);
        if congested {
            self.on_reverse_congestion(total_sent, cwnd);
        }
        congested
    }

    fn on_reverse_congestion(&mut self, total_sent: u64, cwnd: u32) {
        // RFC 4341 §6.1.2: "For each congestion window of data with lost or
        // marked DCCP-Ack packets, Ack Ratio is doubled".
        if total_sent >= self.doubling_window_end {
            self.double_pending = true;
            self.doubling_window_end = total_sent.saturating_add(u64::from(cwnd));
        }
        self.clean_packets_sent = 0;
    }

    /// Applies due changes and the constraints for the current `cwnd`;
    /// `rtt` is the current round-trip time estimate.
    pub(super) fn update(&mut self, now: Instant, cwnd: u32, rtt: Duration) {
        // RFC 4341 §6.1.2: "The sender SHOULD NOT attempt to renegotiate the
        // Ack Ratio more than once per round-trip time." This limits the
        // dynamic changes; the constraints below hold at all times.
        let may_change = self
            .last_change
            .is_none_or(|last| now.saturating_duration_since(last) >= rtt);
        let mut next = self.value;
        if may_change {
            if self.double_pending {
                self.double_pending = false;
                next = self.value.saturating_mul(2);
            } else if self.value >= 2 && self.decrease_due(cwnd) {
                // RFC 4341 §6.1.2: "for each cwnd/(R^2 - R) consecutive
                // congestion windows of data with no lost or marked DCCP-Ack
                // packets, Ack Ratio is decreased by 1." K windows of cwnd
                // packets each: cwnd²/(R² − R) packets. "We recommend that the
                // sender use the most recent value of cwnd".
                next = self.value - 1;
            }
        }
        let next = self.constrained(next, cwnd);
        if next != self.value {
            if may_change {
                self.last_change = Some(now);
            }
            self.value = next;
            self.clean_packets_sent = 0;
        }
    }

    fn decrease_due(&self, cwnd: u32) -> bool {
        let r = u128::from(self.value);
        let cwnd = u128::from(cwnd);
        // clean ≥ cwnd² / (R² − R), without division; R ≥ 2 so R² − R ≥ 2.
        u128::from(self.clean_packets_sent) * (r * r - r) >= cwnd * cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_loss_needs_numdupack_greater_packets() {
        let mut d = ReverseLossDetector::default();
        assert_eq!(d.on_packet(10, 3), 0);
        // 11 is missing.
        assert_eq!(d.on_packet(12, 3), 0);
        assert_eq!(d.on_packet(13, 3), 0);
        assert_eq!(d.on_packet(14, 3), 1, "three greater packets make 11 lost");
        assert_eq!(d.on_packet(15, 3), 0, "reported once");
        // Packets before the first one seen are never reported.
        assert_eq!(d.on_packet(9, 3), 0);
        // A late arrival of 11 changes nothing more.
        assert_eq!(d.on_packet(11, 3), 0);
    }

    #[test]
    fn reverse_loss_survives_huge_jumps() {
        let mut d = ReverseLossDetector::default();
        d.on_packet(0, 3);
        assert_eq!(d.on_packet(u64::MAX - 3, 3), 0);
        assert_eq!(d.on_packet(u64::MAX - 2, 3), 0);
        // The numbers skipped by the jump that are still in the window are
        // reported lost once three greater packets have arrived, once.
        assert_eq!(d.on_packet(u64::MAX - 1, 3), 125);
        assert_eq!(d.on_packet(u64::MAX, 3), 0);
        assert_eq!(d.on_packet(3, 3), 0);
    }

    #[test]
    fn bounds_follow_rfc_4341_6_1_2() {
        let c = AckRatioControl::new(2, 2, 10, false);
        assert_eq!(c.bounds(1), (1, 1));
        assert_eq!(c.bounds(2), (1, 1));
        assert_eq!(c.bounds(3), (1, 2));
        assert_eq!(c.bounds(4), (2, 2));
        assert_eq!(c.bounds(9), (2, 5));
        let lenient = AckRatioControl::new(2, 2, 10, true);
        assert_eq!(lenient.bounds(1), (1, 2), "Ack Ratio 2 always acceptable");
    }
}
