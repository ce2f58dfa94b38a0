//! What the TFRC sender offers to multi-connection streaming beyond RFC
//! 5348: the MulTFRC equation's n and j (the aggregate), a target rate above
//! the equation's (the adaptive default), the CE marks the experimental CCID
//! 248's receiver reports, and the raw RTT samples the connection-count
//! controllers read.

use std::time::Duration;

use super::{secs, TfrcSender};
use crate::units::Rate;

impl TfrcSender {
    /// Makes X the rate of `n` TFRC flows (MulTFRC's equation with a
    /// fractional n) from the next feedback on; 1 restores RFC 5348's
    /// equation. Values outside [0.01, 1024] are clamped.
    pub fn set_flows(&mut self, n: f64) {
        self.flows = if n.is_finite() {
            n.clamp(0.01, 1024.0)
        } else {
            1.0
        };
    }

    /// Sets j, the packets lost per loss event, for the MulTFRC equation
    /// (used when [`flows`](Self::flows) ≠ 1); clamped to [1, 1000], 1 for
    /// a value that is not a number.
    pub fn set_losses_per_event(&mut self, j: f64) {
        self.losses_per_event = if j.is_nan() {
            1.0
        } else {
            j.clamp(1.0, 1000.0)
        };
    }

    /// j of [`set_losses_per_event`](Self::set_losses_per_event).
    pub fn losses_per_event(&self) -> f64 {
        self.losses_per_event
    }

    /// n of [`set_flows`](Self::set_flows).
    pub fn flows(&self) -> f64 {
        self.flows
    }

    /// Lets X rise to `rate` (bytes/s) where the equation gives less, from
    /// the next feedback on: X = max(min(max(X_Bps, rate), recv_limit),
    /// s/t_mbi). The adaptive connection-count controller sets it; X is
    /// never below what RFC 5348's equation allows, and never above
    /// recv_limit (twice what the receiver got). `None` (or a rate that is
    /// not a positive number) restores RFC 5348.
    pub fn set_target_rate(&mut self, rate: Option<Rate>) {
        self.target_rate = rate
            .map(|r| r.bytes_per_sec())
            .filter(|r| r.is_finite() && *r > 0.0);
    }

    /// The rate of [`set_target_rate`](Self::set_target_rate).
    pub fn target_rate(&self) -> Option<Rate> {
        self.target_rate.map(Rate::from_bytes_per_sec)
    }

    /// Takes the receiver's count of CE-marked packets (modulo 2³², the
    /// experimental CCID 248's option 197). A count that went back (a
    /// reordered feedback) is ignored; one that wrapped is unwrapped.
    pub fn set_ecn_marks_reported(&mut self, count: u32) {
        let low = (self.ecn_marks & u64::from(u32::MAX)) as u32;
        let step = count.wrapping_sub(low);
        // Less than half the 32-bit space ahead: a forward step.
        if step < 1 << 31 {
            self.ecn_marks = self.ecn_marks.saturating_add(u64::from(step));
        }
    }

    /// The CE-marked packets the receiver has reported so far.
    pub fn ecn_marks_reported(&self) -> u64 {
        self.ecn_marks
    }

    /// Takes the loss event rate the receiver of the experimental CCID 248
    /// computes without the losses it took for the channel's (its option
    /// 198; `None` when the feedback did not carry one).
    pub fn set_congestion_loss_event_rate(&mut self, p: Option<f64>) {
        self.congestion_p = p.filter(|p| (0.0..=1.0).contains(p));
    }

    /// Experimental (off by default): whether the equation takes the
    /// receiver's [congestion loss event rate](Self::set_congestion_loss_event_rate)
    /// instead of p where the receiver reports one that is not zero. The
    /// adaptive connection-count controller turns it on; RFC 5348's p stays
    /// what [`loss_event_rate`](crate::cc::RateController) reports and what
    /// decides between slow start and the equation.
    pub fn set_congestion_loss_event_rate_used(&mut self, used: bool) {
        self.use_congestion_p = used;
    }

    /// The p the equation takes: RFC 5348's p, or with
    /// [`set_congestion_loss_event_rate_used`](Self::set_congestion_loss_event_rate_used)
    /// the congestion loss event rate when one above zero was reported.
    pub(super) fn equation_p(&self) -> f64 {
        match self.congestion_p {
            Some(p) if self.use_congestion_p && p > 0.0 => p,
            _ => self.p,
        }
    }

    /// X_Bps of RFC 5348's equation for one flow at the last feedback with
    /// p > 0 (before any target or n); `None` before the first loss.
    pub fn equation_rate(&self) -> Option<Rate> {
        self.x_equation_one.map(Rate::from_bytes_per_sec)
    }

    /// The latest RTT sample, R_sample of RFC 5348 §4.3 step 1, unfiltered.
    pub fn rtt_sample(&self) -> Option<Duration> {
        self.rtt_sample.map(secs)
    }

    /// How many feedback packets have given a valid RTT sample so far (a
    /// driver that polls [`rtt_sample`](Self::rtt_sample) can tell a new
    /// sample from the last one).
    pub fn feedback_count(&self) -> u64 {
        self.feedbacks
    }
}
