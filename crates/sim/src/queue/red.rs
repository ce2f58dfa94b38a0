//! Random Early Detection (Floyd & Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM ToN 1993): the average
//! queue length and the early-signal decision. The FIFO it guards is
//! [`super::fifo`].

use std::time::Duration;

use fairstream_proto::time::Instant;

use super::{QueueConfig, QueueError};
use crate::rng::SimRng;

/// RED's validated parameters and running state.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Red {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    weight: f64,
    gentle: bool,
    idle_packet_time: Duration,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 3168 §7).
    pub(super) ecn: bool,
    /// avg: the EWMA of the queue length in packets.
    pub(super) average: f64,
    /// count: packets since the last drop while avg was above min_th;
    /// −1 when below (Floyd & Jacobson 1993 fig. 2).
    count: i64,
}

impl Red {
    pub(super) fn new(config: &QueueConfig) -> Result<Option<Red>, QueueError> {
        let &QueueConfig::Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
            idle_packet_time,
            ecn,
            ..
        } = config
        else {
            return Ok(None);
        };
        let invalid = |parameter, value, reason| {
            Err(QueueError::InvalidRed {
                parameter,
                value,
                reason,
            })
        };
        if !(min_th >= 0.0 && min_th.is_finite()) {
            return invalid("min_th", min_th, "must be a finite number ≥ 0");
        }
        if !(max_th > min_th && max_th.is_finite()) {
            return invalid("max_th", max_th, "must be finite and above min_th");
        }
        if !(max_p > 0.0 && max_p <= 1.0) {
            return invalid("max_p", max_p, "must be in (0, 1]");
        }
        if !(weight > 0.0 && weight <= 1.0) {
            return invalid("weight", weight, "must be in (0, 1]");
        }
        if idle_packet_time.is_zero() {
            return invalid("idle_packet_time", 0.0, "must be positive");
        }
        Ok(Some(Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
            idle_packet_time,
            ecn,
            average: 0.0,
            count: -1,
        }))
    }

    /// p_b for the current average (Floyd & Jacobson 1993 fig. 2; gentle
    /// variant above max_th).
    pub(super) fn base_probability(&self) -> f64 {
        let avg = self.average;
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }

    /// Updates avg for an arrival that finds `len` packets queued.
    pub(super) fn update_average(&mut self, len: usize, idle_since: Option<Instant>, now: Instant) {
        match idle_since {
            // "if the queue is empty: m ← f(time − q_time); avg ← (1 − w_q)^m avg"
            Some(since) => {
                let idle = now.saturating_duration_since(since);
                let m = idle.as_secs_f64() / self.idle_packet_time.as_secs_f64();
                self.average *= (1.0 - self.weight).powf(m);
            }
            // "avg ← (1 − w_q) avg + w_q q"
            None => self.average += self.weight * (len as f64 - self.average),
        }
    }

    /// Whether RED signals congestion on the arriving packet (after the
    /// average is updated): drops it, or with ECN marks it. A mark restarts
    /// `count` exactly as a drop does (Linux `sch_red`, `RED_PROB_MARK`).
    pub(super) fn signals(&mut self, rng: &mut SimRng) -> bool {
        let p_b = self.base_probability();
        if p_b <= 0.0 {
            self.count = -1;
            return false;
        }
        if p_b >= 1.0 {
            self.count = 0;
            return true;
        }
        self.count += 1;
        // "p_a ← p_b / (1 − count·p_b)": spreads drops evenly; once
        // count·p_b ≥ 1 the drop is certain.
        let spread = 1.0 - self.count as f64 * p_b;
        let p_a = if spread <= 0.0 { 1.0 } else { p_b / spread };
        if rng.bernoulli(p_a) {
            self.count = 0;
            true
        } else {
            false
        }
    }
}
