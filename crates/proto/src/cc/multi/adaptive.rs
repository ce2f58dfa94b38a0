//! fairstream's default connection-count controller: one TFRC connection
//! that may send above RFC 5348's rate, up to a target rate steered by the
//! queue it sees, decided on a time basis. Its n is the target over one
//! flow's equation rate: fractional, never below one, up to
//! [`AdaptiveConfig::max`] without a socket per unit.
//!
//! **Why not paper 001's rule.** Measured on the simulator (issue 11), the
//! IIAD rule over real extra connections had three faults. Each new
//! connection slow-started into a hop the session already filled (78-100 %
//! of its congestion drops came in the 3 s after an opening); a decision
//! waited for m = 50 RTT samples, so a 400 ms path took minutes to converge;
//! and 64 sockets capped n where paper 001 eq. 5 asks for hundreds. Here
//! nothing opens and nothing slow-starts after the first slow start, a
//! decision comes every [`AdaptiveConfig::decision_rtts`] smoothed RTTs (the
//! same number of round trips on every path), and n is a number.
//!
//! **The rate.** The connection's sender computes RFC 5348's X_Bps for the
//! p it measures and sends at `max(X_Bps, target)`, never above recv_limit
//! (twice what the receiver got, RFC 5348 §4.3). With no target it is plain
//! TFRC: the floor is one TCP-friendly flow whatever this controller does.
//! Between two decisions a loss event lowers X_Bps but not the target. (The
//! alternative, a factor n on X_Bps so that every loss event lowers the rate
//! as it lowers TFRC's, was measured on the whole matrix: it met the
//! fairness targets in 97 cells instead of 91 but filled only 48 of the 78
//! lossy hops instead of 71, because every channel loss then cuts the rate
//! too.)
//!
//! **The signals.** The loss event rate p cannot tell channel loss from
//! congestion. Two things can: a Congestion Experienced mark, which only a
//! congested queue sets, and queueing delay, which only a queue builds.
//!
//! - `base`: the smallest raw RTT sample seen (within
//!   [`AdaptiveConfig::rtt_min_lifetime`] if one is set). It comes from the
//!   first feedbacks, during slow start, before a queue stands.
//! - `q`: the largest RTT sample of the decision window minus `base`
//!   ([`QueueMeasure::WindowMax`]; the window's mean and minimum are
//!   options). The largest, because a queue that cross traffic keeps only
//!   part of the time (TCP's bursts into a shallow buffer, CoDel's
//!   excursions above its 5 ms) drains between samples and a mean or a
//!   minimum misses it.
//! - the target delay `T = max(γ·base, k·s/X_max)`, γ = 0 and k = 2: two of
//!   the session's own packets at the highest receive rate seen. A share of
//!   the base RTT (γ > 0) let a 5 ms CoDel queue pass unseen at 80-200 ms.
//!
//! At each decision, with p > 0:
//!
//! - a CE mark in the window (the receiver of the experimental CCID 248
//!   counts them in its option 197): the target falls to the equation's
//!   rate, n = 1. A mark proves the path congested; a partial cut (tried:
//!   25 % a marked window) let a stream whose packets CoDel marks only now
//!   and then keep several TCP shares at 200 ms;
//! - `q ≤ T`: the target grows by `min(g·(T − q)/T, i)` (10 % per two RTTs
//!   with no queue), from where it was;
//! - `q > T` and the queue grew since the last window: it is cut by
//!   `min(g·(q − T)/W, d)` (W the window's length: the excess drains over
//!   about two windows), from what the path delivered, `X_recv/(1 − p·j)`
//!   (j the receiver's losses per loss event: p·j is the share of packets
//!   lost), if that is less than the target: while a queue stands the
//!   receive rate is the bottleneck's rate for the session;
//! - `q > T` and the queue shrank, or the last decision cut: hold (a cut
//!   shows a window later).
//!
//! On a lossy hop the session has to itself, every queue is its own: the
//! target grows until the hop is full and about T of queue stands, which
//! keeps the hop busy whatever the channel loses, and the gentle cuts keep it
//! from draining. On a bottleneck shared with loss-based TCP that keeps a
//! queue (a drop-tail buffer of a BDP or more, RED between its thresholds),
//! the target is cut to the equation's rate and the session is one TFRC
//! flow. Where it fails (`docs/results/fairness.md` has every cell): a queue
//! that TCP cannot keep standing (a 10-packet buffer, CoDel without ECN at
//! long RTTs) leaves windows without a queue, the target grows in them, and
//! the gentle cut that keeps a lossy hop full does not undo it. A cut of at
//! least 10 % a congested window (tried) met the fairness targets in 102 of
//! 144 cells instead of 91, but filled only 20 of the 78 lossy hops instead of
//! 72: the two targets pull the cut in opposite directions, and without ECN
//! there is no signal here that tells the session's own queue from one it
//! shares.
//!
//! **On a path that marks.** Behind a congested bottleneck that marks (RED
//! or CoDel with ECN) and then a lossy hop, the session sees the
//! bottleneck's queue, stays at n ≈ 1, and one TFRC connection counts the
//! hop's losses as congestion: it filled 0.59 and 0.88 of what it could
//! have had in the matrix's two CoDel+ECN *both* cells. A bottleneck that
//! marks ECN-capable packets does not drop them until its buffer is full
//! (RFC 3168 §5; CoDel and RED mark where they would drop), so a packet of
//! this connection lost while its packets are being marked was most likely
//! lost elsewhere, on a channel. CCID 248's receiver therefore also keeps a
//! second loss history without the losses declared within 64 RTTs of a CE
//! mark (`TfrcReceiverConfig::channel_loss_memory`) and reports its loss
//! event rate in option 198 once it has set one aside; this controller's
//! connection takes that rate into the equation
//! (`TfrcSender::set_congestion_loss_event_rate_used`), its marks still
//! counting as RFC 3168 asks. Measured on the matrix: the two cells fill
//! 1.08 and 0.96, the second meeting all three targets; no full or fair
//! cell changed its verdict (one fair cell that missed already, CoDel+ECN
//! at 50 Mbit/s with eight flows and 200 ms, took more: a ratio of 2.21
//! instead of 1.50). This is experimental and a deviation from RFC
//! 5348 §5 (every loss is congestion): on a path whose marking bottleneck
//! is followed by a second, congested bottleneck that drops instead, that
//! second bottleneck's drops would go unheard while marks arrive. Without
//! marks nothing changes.
//!
//! **Measured and left out.** Losses were also classified by the queueing
//! delay of the feedback that reported them (a new loss event is reported at
//! once, RFC 5348 §6.2, with the RTT of a packet just after the loss). Behind
//! RED (one 300 s run, four NewReno flows, 10 Mbit/s) the mean queue at a
//! loss was only 1.8 ms above the mean of all samples (deciles of the
//! difference −3 to +7 ms), against −1.6 ms for channel loss on a lossy hop
//! (one 120 s run): RED drops on its averaged queue, uncorrelated with the
//! instantaneous one, and the classification cut the lossy hop's rate as
//! often as RED's. The other suggestion, whether the loss rate rises
//! with the session's own rate, failed too: behind CoDel the slope of ln p
//! against ln X_recv over 16 decisions was −0.86 to −1.05 (the three windows
//! it was computed for, four NewReno flows, 10 Mbit/s, 80 ms): p falls as the
//! one connection's rate rises, because more of its losses fall into one
//! loss event, the sign channel loss gives. Neither is used.
//!
//! While the sender is still in slow start (p = 0), the target waits: the
//! first loss interval is computed from one flow's receive rate (RFC 5348
//! §6.3.1), and a higher target would only multiply the overshoot.

use std::time::Duration;

use crate::time::Instant;

/// Parameters of the [adaptive controller](self).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveConfig {
    /// The n to start from. Default 1.
    pub initial: f64,
    /// The least n (1: never below one TFRC flow's share). Default 1.
    pub min: f64,
    /// The most n. Default 1024.
    pub max: f64,
    /// A decision every this many smoothed RTTs. Default 2.
    pub decision_rtts: f64,
    /// Decisions are at least this far apart (short paths). Default 10 ms.
    pub min_decision_interval: Duration,
    /// γ: the target queueing delay is at least this share of the base RTT.
    /// Default 0.1.
    pub gamma: f64,
    /// k: the target is at least k packet times at the highest receive rate
    /// seen. Default 4.
    pub queue_packets: f64,
    /// g: the proportional gain on `(T − q)/T`. Default 0.5.
    pub gain: f64,
    /// i: n grows by at most this share per decision. Default 0.25.
    pub max_increase: f64,
    /// d: n falls by at most this share per decision (and by this share on
    /// an ECN mark). Default 0.25.
    pub max_decrease: f64,
    /// Which queueing delay of a window is held at the target.
    pub queue_measure: QueueMeasure,
    /// How long an RTT sample can stay the base; `None`: for ever.
    pub rtt_min_lifetime: Option<Duration>,
}

impl Default for AdaptiveConfig {
    fn default() -> Self {
        AdaptiveConfig {
            initial: 1.0,
            min: 1.0,
            max: 1024.0,
            decision_rtts: 2.0,
            min_decision_interval: Duration::from_millis(10),
            gamma: 0.0,
            queue_packets: 2.0,
            gain: 0.5,
            max_increase: 0.1,
            max_decrease: 0.25,
            queue_measure: QueueMeasure::WindowMax,
            rtt_min_lifetime: None,
        }
    }
}

/// Which queueing delay of a decision window the controller holds at its
/// target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueMeasure {
    /// The mean of the window's RTT samples minus the base.
    #[default]
    WindowMean,
    /// The smallest of the window's RTT samples minus the base: blind to a
    /// queue that drains once a window.
    WindowMin,
    /// The largest of the window's RTT samples minus the base: sees a queue
    /// that stands only part of the time (a shallow buffer TCP fills in
    /// bursts, CoDel's excursions above its target).
    WindowMax,
}

/// What the sender knows at one feedback, for [`AdaptiveCounter::on_report`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    /// The feedback's raw RTT sample (RFC 5348 §4.3 step 1).
    pub rtt_sample: Duration,
    /// The smoothed RTT R.
    pub srtt: Duration,
    /// One packet's time at the session's receive rate, `s / X_recv`.
    pub packet_time: Option<Duration>,
    /// The loss event rate p the sender uses (0: still in slow start).
    pub loss_event_rate: f64,
    /// X_Bps, RFC 5348's equation for one flow at p, bytes/s (`None` before
    /// the first loss).
    pub equation_rate: Option<f64>,
    /// j, the packets lost per loss event as the receiver reports it
    /// (CCID 248's option 196; 1 when unknown): p·j estimates the share of
    /// packets lost.
    pub losses_per_event: f64,
    /// X_recv, the rate the receiver last reported, bytes/s.
    pub receive_rate: f64,
    /// Congestion Experienced marks reported since the previous report.
    pub ce_marks: u64,
}

/// What one decision found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveDecision {
    /// The smallest RTT sample of the window.
    pub window_min_rtt: Duration,
    /// The base RTT it was compared with.
    pub base_rtt: Duration,
    /// The target queueing delay T.
    pub target: Duration,
    /// Whether the window's queue exceeded the target or carried a mark.
    pub congested: bool,
    /// The target rate after the decision, bytes/s (`None` in slow start).
    pub target_rate: Option<f64>,
    /// n after the decision: the target over one flow's equation rate.
    pub n: f64,
}

/// The controller's state.
#[derive(Clone, Debug)]
pub struct AdaptiveCounter {
    config: AdaptiveConfig,
    n: f64,
    /// (time, sample) pairs whose minimum is the base RTT: a sliding-window
    /// minimum, increasing from front to back.
    base: super::ExpiringMinimum,
    window_min: Option<Duration>,
    window_max: Option<Duration>,
    /// Sum and count of the window's samples, for its mean.
    window_sum: Duration,
    window_len: u32,
    window_marks: u64,
    /// The previous window's queueing delay (seconds), for its trend.
    previous_queue: Option<f64>,
    /// Whether the last decision cut the target (its effect shows only a
    /// window later, so the next decision does not cut again).
    cut_last: bool,
    /// The length of the window that just closed.
    interval: Duration,
    /// X_recv smoothed over the reports (EWMA, weight 1/4), bytes/s: one
    /// report covers one RTT, a few packets on a slow path.
    receive_rate: Option<f64>,
    window_end: Option<Instant>,
    /// The shortest packet time seen (the highest receive rate), seconds.
    min_packet_time: Option<f64>,
    /// The rate X may rise to, bytes/s.
    target: Option<f64>,

    decisions: u64,
    last: Option<AdaptiveDecision>,
}

impl AdaptiveCounter {
    /// A controller with `config` (checked by the caller).
    pub fn new(config: AdaptiveConfig) -> AdaptiveCounter {
        AdaptiveCounter {
            n: config.initial.clamp(config.min, config.max),
            config,
            base: super::ExpiringMinimum::default(),
            window_min: None,
            window_max: None,
            window_sum: Duration::ZERO,
            window_len: 0,
            window_marks: 0,
            previous_queue: None,
            cut_last: false,
            interval: Duration::ZERO,
            receive_rate: None,
            window_end: None,
            min_packet_time: None,
            target: None,

            decisions: 0,
            last: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AdaptiveConfig {
        &self.config
    }

    /// The current n: the target rate over one flow's equation rate at the
    /// last decision.
    pub fn n(&self) -> f64 {
        self.n
    }

    /// The rate the sender may rise to above RFC 5348's equation, bytes/s
    /// (`None` until the first loss).
    pub fn target_rate(&self) -> Option<f64> {
        self.target
    }

    /// The base RTT, once a sample has been seen.
    pub fn base_rtt(&self) -> Option<Duration> {
        self.base.min()
    }

    /// The last decision.
    pub fn last_decision(&self) -> Option<AdaptiveDecision> {
        self.last
    }

    /// Decisions taken so far.
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// Takes one feedback's report; returns the decision when it closes a
    /// window.
    pub fn on_report(&mut self, now: Instant, report: Report) -> Option<AdaptiveDecision> {
        let sample = report.rtt_sample;
        // A sample of an hour or more is no RTT.
        if sample.is_zero() || sample > Duration::from_secs(3600) {
            return None;
        }
        self.base.push(now, sample, self.config.rtt_min_lifetime);
        self.window_min = Some(self.window_min.map_or(sample, |m| m.min(sample)));
        self.window_max = Some(self.window_max.map_or(sample, |m| m.max(sample)));
        self.window_sum += sample;
        self.window_len += 1;
        self.window_marks = self.window_marks.saturating_add(report.ce_marks);
        if report.receive_rate.is_finite() && report.receive_rate > 0.0 {
            let x = report.receive_rate;
            self.receive_rate = Some(self.receive_rate.map_or(x, |m| 0.75 * m + 0.25 * x));
        }
        if let Some(t) = report
            .packet_time
            .filter(|t| !t.is_zero() && *t <= Duration::from_secs(3600))
        {
            let t = t.as_secs_f64();
            self.min_packet_time = Some(self.min_packet_time.map_or(t, |m| m.min(t)));
        }
        let interval = report
            .srtt
            .min(Duration::from_secs(3600))
            .mul_f64(self.config.decision_rtts)
            .max(self.config.min_decision_interval);
        let Some(end) = self.window_end else {
            self.window_end = Some(now + interval);
            return None;
        };
        if now < end {
            return None;
        }
        self.interval = interval;
        self.window_end = Some(now + interval);
        let decision = self.decide(&report);
        self.window_min = None;
        self.window_max = None;
        self.window_sum = Duration::ZERO;
        self.window_len = 0;
        self.window_marks = 0;
        decision
    }

    fn decide(&mut self, report: &Report) -> Option<AdaptiveDecision> {
        let window_min = self.window_min?;
        let base = self.base_rtt()?;
        let c = self.config;
        let window_mean = self.window_sum / self.window_len.max(1);
        let queue = match c.queue_measure {
            QueueMeasure::WindowMin => window_min,
            QueueMeasure::WindowMean => window_mean,
            QueueMeasure::WindowMax => self.window_max.unwrap_or(window_min),
        }
        .saturating_sub(base)
        .as_secs_f64();
        let target = (c.gamma * base.as_secs_f64())
            .max(c.queue_packets * self.min_packet_time.unwrap_or(0.0))
            .max(1e-6);
        let marked = self.window_marks > 0;
        let congested = marked || queue > target;

        let trend = self.previous_queue.map_or(0.0, |previous| queue - previous);
        self.previous_queue = Some(queue);
        // In slow start (p = 0) there is no equation rate and the target
        // waits: see the module documentation.
        let p = report.loss_event_rate;
        let equation = report
            .equation_rate
            .filter(|x| x.is_finite() && *x > 0.0 && p > 0.0);
        if let Some(equation) = equation {
            let from = self
                .target
                .unwrap_or(equation * self.n)
                .max(equation * c.min);
            // What the path delivers to the session, before channel loss:
            // X_recv / (1 − p·j), X_recv smoothed. While a queue stands,
            // this is the bottleneck's rate for the session, so a cut is
            // measured from it and not from a target the path never carried.
            let lost = (p * report.losses_per_event.max(1.0)).min(0.5);
            let delivered = self.receive_rate.map_or(from, |x| x / (1.0 - lost));
            let interval = self.interval.as_secs_f64().max(1e-3);
            let (mut rate, cut) = if marked {
                // The path said it is congested: one flow's share.
                (equation * c.min, true)
            } else if queue > target {
                if trend < 0.0 || self.cut_last {
                    // Draining, or the last cut cannot show yet: hold.
                    (from, false)
                } else {
                    // Drain the excess over two windows.
                    let cut = (c.gain * (queue - target) / interval).min(c.max_decrease);
                    (from.min(delivered) * (1.0 - cut), true)
                }
            } else {
                let step = (c.gain * (target - queue) / target).min(c.max_increase);
                (from * (1.0 + step), false)
            };
            self.cut_last = cut;
            // Not above twice what the receiver got (the sender's own
            // recv_limit, RFC 5348 §4.3): a sender that is data-limited does
            // not build a target it cannot use.
            if report.receive_rate.is_finite() && report.receive_rate > 0.0 {
                rate = rate.min(2.0 * report.receive_rate);
            }
            let rate = rate.clamp(equation * c.min, equation * c.max);
            self.target = Some(rate);
            self.n = rate / equation;
        }
        self.decisions += 1;
        let decision = AdaptiveDecision {
            window_min_rtt: window_min,
            base_rtt: base,
            target: Duration::from_secs_f64(target),
            congested,
            target_rate: self.target,
            n: self.n,
        };
        self.last = Some(decision);
        Some(decision)
    }
}

#[cfg(test)]
mod tests;
