//! How the window grows on an ACK (RFC 5681 §3.1, RFC 3465, RFC 9438,
//! RFC 9406), how far ssthresh falls on a congestion event, and the
//! reaction to ECN-Echo (RFC 3168 §6.1.2).

use std::time::Duration;

use fairstream_proto::time::Instant;

use super::TcpSender;
use crate::tcp::{CwndIncrease, HyStartPhase};

impl TcpSender {
    /// The new ssthresh for a congestion event with `flight` bytes
    /// outstanding and a window of `window` bytes (CUBIC's W_max):
    /// RFC 5681 §3.2 eq. 4, "ssthresh = max (FlightSize / 2, 2*SMSS)", or
    /// for CUBIC RFC 9438 §4.6's β_cubic. Either way the initial slow start
    /// is over (HyStart++ ends, RFC 9406 §4.2).
    pub(super) fn reduced_ssthresh(&mut self, window: u64, flight: u64) -> u64 {
        let mss = self.config.mss;
        if let Some(hystart) = self.hystart.as_mut() {
            hystart.on_congestion_event();
        }
        match self.cubic.as_mut() {
            Some(cubic) => cubic.on_congestion_event(window, flight, mss),
            None => (flight / 2).max(2 * mss),
        }
    }

    /// The congestion window without fast recovery's inflation: RFC 6582's
    /// recovery inflates cwnd by an SMSS per duplicate ACK above the target
    /// ssthresh it set at the entry (and partial ACKs deflate it, perhaps
    /// below); RFC 6675's never inflates it (cwnd = ssthresh, step 4.2),
    /// nor does anything outside a recovery.
    pub(super) fn uninflated_window(&self) -> u64 {
        if self.in_recovery && self.scoreboard.is_none() {
            self.cwnd.min(self.ssthresh)
        } else {
            self.cwnd
        }
    }

    pub(super) fn grow_cwnd(&mut self, now: Instant, acked: u64, rtt_sample: Option<Duration>) {
        let mss = self.config.mss;
        let slow_start = self.cwnd < self.ssthresh;
        if slow_start && self.grow_with_hystart(acked, rtt_sample) {
            return;
        }
        if let (Some(cubic), false) = (self.cubic.as_mut(), slow_start) {
            // RFC 9438 §4.2-4.3: the window in congestion avoidance.
            let srtt = self.rtt.srtt().unwrap_or_default();
            let grown = cubic.on_ack(now, self.cwnd, acked, mss, srtt);
            self.cwnd = grown.min(self.max_window().max(self.cwnd));
            return;
        }
        let increase = match (self.config.cwnd_increase, slow_start) {
            // RFC 5681 §3.1 eq. 2: "cwnd += min (N, SMSS)"
            (CwndIncrease::PerAck, true) => acked.min(mss),
            // RFC 5681 §3.1 eq. 3: "cwnd += SMSS*SMSS/cwnd", and "if the above
            // formula yields 0, the result SHOULD be rounded up to 1 byte".
            (CwndIncrease::PerAck, false) => (mss * mss / self.cwnd).max(1),
            // RFC 3465 §2.2: "cwnd = cwnd + min (N, L*SMSS)"
            (CwndIncrease::ByteCounting { limit_segments }, true) => {
                acked.min(u64::from(limit_segments).saturating_mul(mss))
            }
            // RFC 3465 §2.1: "When bytes_acked becomes greater than or equal to
            // the value of the congestion window, bytes_acked is reduced by
            // the value of cwnd. Next, cwnd is incremented by a full-sized
            // segment (SMSS)."
            (CwndIncrease::ByteCounting { .. }, false) => {
                self.bytes_acked_ca = self.bytes_acked_ca.saturating_add(acked);
                if self.bytes_acked_ca >= self.cwnd {
                    self.bytes_acked_ca -= self.cwnd;
                    mss
                } else {
                    0
                }
            }
        };
        // The cap stops growth (ns-2 `maxcwnd_`, Linux `snd_cwnd_clamp`),
        // so that a capped sender's cwnd says what it may send.
        self.cwnd = self
            .cwnd
            .saturating_add(increase)
            .min(self.max_window().max(self.cwnd));
    }

    /// The most the sender may have outstanding: the receive window, and
    /// the configured [`TcpConfig::max_window`] if any.
    pub(super) fn max_window(&self) -> u64 {
        self.config
            .max_window
            .map_or(self.config.receive_window, |cap| {
                cap.min(self.config.receive_window)
            })
    }

    /// RFC 9406 slow start while HyStart++ runs; returns false when it does
    /// not (any more), for standard slow start.
    fn grow_with_hystart(&mut self, acked: u64, rtt_sample: Option<Duration>) -> bool {
        let mss = self.config.mss;
        let Some(hystart) = self.hystart.as_mut() else {
            return false;
        };
        if hystart.phase() == HyStartPhase::Done {
            return false;
        }
        let increase = hystart.increase(acked, mss);
        let before = hystart.phase();
        let after = hystart.on_ack(self.snd_una, self.snd_nxt, rtt_sample);
        self.cwnd = self
            .cwnd
            .saturating_add(increase)
            .min(self.max_window().max(self.cwnd));
        if before == HyStartPhase::ConservativeSlowStart && after == HyStartPhase::Done {
            // RFC 9406 §4.2: "If CSS_ROUNDS rounds are complete, enter
            // congestion avoidance by setting the ssthresh to the current
            // cwnd."
            self.ssthresh = self.cwnd;
        }
        true
    }

    /// RFC 3168 §6.1.2: "The indication of congestion should be treated
    /// just as a congestion loss in non-ECN-Capable TCP. That is, the TCP
    /// source halves the congestion window "cwnd" and reduces the slow start
    /// threshold "ssthresh"" — at most once per window of data, and without
    /// retransmitting anything.
    pub(super) fn on_ecn_echo(&mut self, now: Instant) {
        // "TCP should not react to congestion indications more than once
        // every window of data": not during a loss recovery, nor before the
        // data outstanding at the last reduction is acknowledged.
        let reduced_this_window = self.ecn_recover.is_some_and(|r| self.snd_una < r);
        if self.in_recovery || reduced_this_window {
            return;
        }
        let mss = self.config.mss;
        // As for a loss, RFC 5681 §3.2 eq. 4 (RFC 9438 §4.6 for CUBIC).
        let flight = self.snd_max - self.snd_una;
        self.ssthresh = self.reduced_ssthresh(self.cwnd, flight);
        self.cwnd = self.cwnd.min(self.ssthresh).max(mss);
        self.bytes_acked_ca = 0;
        self.note_window_reduction();
        self.ecn_reductions += 1;
        // "the sending TCP MUST reset the retransmit timer on receiving the
        // ECN-Echo packet when the congestion window is one."
        if self.cwnd <= mss {
            self.restart_timer(now);
        }
    }

    /// Records a window reduction for RFC 3168 §6.1.2: no ECE reduces again
    /// within this window, and the next new segment carries CWR.
    pub(super) fn note_window_reduction(&mut self) {
        if self.config.ecn {
            self.ecn_recover = Some(self.snd_max);
            self.cwr_pending = true;
        }
    }
}
