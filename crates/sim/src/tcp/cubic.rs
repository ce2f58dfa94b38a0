//! CUBIC congestion control (RFC 9438): the window as a cubic function of
//! the time since the last congestion event, with a Reno-friendly floor.
//!
//! The RFC states its formulas in segments and seconds; so does this
//! module (`_segments` in the names, `f64`). The sender keeps its window in
//! bytes and asks [`Cubic`] for the new window on every ACK in congestion
//! avoidance ([`Cubic::on_ack`]) and for the new ssthresh on every
//! congestion event ([`Cubic::on_congestion_event`]).
//!
//! **Not implemented:** the spurious-congestion-event undo of RFC 9438
//! §4.9 (the model has no timestamps or F-RTO to detect one), and the
//! application-limited exclusion of RFC 9438 §4.2 (`t` keeps running while
//! the sender is data-limited; every flow the simulator runs this way is a
//! bulk transfer).

use std::time::Duration;

use fairstream_proto::time::Instant;

/// RFC 9438 §5.1: β_cubic, "the multiplicative window decrease factor",
/// SHOULD be 0.7.
pub const BETA_CUBIC: f64 = 0.7;
/// RFC 9438 §5.1: C SHOULD be 0.4 (segments per second³).
pub const C_CUBIC: f64 = 0.4;

/// CUBIC's parameters; `Default` gives RFC 9438's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// β_cubic (RFC 9438 §4.6), in (0, 1). Default [`BETA_CUBIC`].
    pub beta: f64,
    /// C (RFC 9438 §4.2), in segments/s³, positive. Default [`C_CUBIC`].
    pub c: f64,
    /// Fast convergence (RFC 9438 §4.7): "SHOULD" be on. Default `true`.
    pub fast_convergence: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            beta: BETA_CUBIC,
            c: C_CUBIC,
            fast_convergence: true,
        }
    }
}

impl CubicConfig {
    /// Whether β and C are usable (β in (0, 1), C positive and finite).
    pub fn is_valid(&self) -> bool {
        self.beta > 0.0 && self.beta < 1.0 && self.c > 0.0 && self.c.is_finite()
    }

    /// RFC 9438 §4.3: α_cubic = 3·(1 − β_cubic)/(1 + β_cubic), the
    /// Reno-friendly additive increase (0.529 for β = 0.7).
    pub fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }

    /// RFC 9438 eq. 1: W_cubic(t) = C·(t − K)³ + W_max, in segments.
    pub fn w_cubic(&self, t: f64, k: f64, w_max_segments: f64) -> f64 {
        self.c * (t - k).powi(3) + w_max_segments
    }

    /// RFC 9438 eq. 2: K = ∛((W_max − cwnd_epoch)/C), in seconds; 0 when
    /// the epoch starts at or above W_max.
    pub fn k(&self, w_max_segments: f64, cwnd_epoch_segments: f64) -> f64 {
        ((w_max_segments - cwnd_epoch_segments).max(0.0) / self.c).cbrt()
    }

    /// RFC 9438 §5.1, the average window of CUBIC in its cubic region
    /// under a deterministic loss rate `p` ("the number of packets between
    /// two successive packet losses is always 1/p") on a path of round-trip
    /// time `rtt`: AVG_W_cubic = ∜(C·(3 + β)/(4·(1 − β))) · ∜(RTT³) /
    /// ∜(p³), in segments (so CUBIC's rate, AVG_W/RTT, falls only as
    /// RTT^-¼). With one epoch from β·W_max to W_max in K seconds carrying
    /// 1/p packets: W_max·(3 + β)/4 · K/RTT = 1/p.
    pub fn average_window_segments(&self, p: f64, rtt: Duration) -> f64 {
        let factor = (self.c * (3.0 + self.beta) / (4.0 * (1.0 - self.beta))).powf(0.25);
        factor * rtt.as_secs_f64().powf(0.75) / p.powf(0.75)
    }

    /// RFC 9438 §5.1: the average window of the Reno-friendly region,
    /// AVG_W_est = √(α_cubic·(1 + β)/(2·(1 − β)·p)); with α_cubic =
    /// 3(1 − β)/(1 + β) this is Reno's √(3/(2p)), in segments.
    pub fn average_reno_window_segments(&self, p: f64) -> f64 {
        (self.alpha() * (1.0 + self.beta) / (2.0 * (1.0 - self.beta) * p)).sqrt()
    }
}

/// CUBIC's state between congestion events.
#[derive(Clone, Debug)]
pub struct Cubic {
    config: CubicConfig,
    /// W_max: the window just before the last reduction (after fast
    /// convergence), in segments; `None` before any congestion event.
    w_max_segments: Option<f64>,
    /// cwnd_prior (RFC 9438 §4.6): cwnd before the last reduction.
    cwnd_prior_segments: f64,
    /// The current congestion-avoidance epoch, once started.
    epoch: Option<Epoch>,
    /// RFC 9438 §4.8: the first congestion-avoidance stage after a
    /// timeout starts with K = 0 and W_max = cwnd.
    after_timeout: bool,
    /// Fractions of a byte of window growth carried between ACKs.
    carry_bytes: f64,
}

/// One congestion-avoidance stage (RFC 9438 §4.2).
#[derive(Clone, Copy, Debug)]
struct Epoch {
    /// t_epoch.
    start: Instant,
    /// K, seconds.
    k: f64,
    /// W_max of this epoch, segments.
    w_max_segments: f64,
    /// W_est (RFC 9438 §4.3), segments.
    w_est_segments: f64,
    /// α_cubic now: 3(1−β)/(1+β) until W_est reaches cwnd_prior, then 1.
    alpha: f64,
}

impl Cubic {
    /// A CUBIC state before any congestion event.
    pub fn new(config: CubicConfig) -> Cubic {
        Cubic {
            config,
            w_max_segments: None,
            cwnd_prior_segments: 0.0,
            epoch: None,
            after_timeout: false,
            carry_bytes: 0.0,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &CubicConfig {
        &self.config
    }

    /// W_max in segments, once there was a congestion event.
    pub fn w_max_segments(&self) -> Option<f64> {
        self.w_max_segments
    }

    /// K of the current epoch, in seconds.
    pub fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// W_est of the current epoch, in segments.
    pub fn w_est_segments(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est_segments)
    }

    /// A congestion event (fast retransmit, ECN-Echo or timeout) with
    /// `cwnd_bytes` and `flight_bytes` as they were just before it; returns
    /// the new ssthresh in bytes.
    pub fn on_congestion_event(&mut self, cwnd_bytes: u64, flight_bytes: u64, mss: u64) -> u64 {
        let mss_f = mss as f64;
        let cwnd = cwnd_bytes as f64 / mss_f;
        // RFC 9438 §4.7: "if cwnd < W_max and fast convergence is enabled,
        // further reduce W_max: W_max = cwnd * (1 + β_cubic) / 2; otherwise,
        // remember cwnd before reduction: W_max = cwnd".
        let w_max = match self.w_max_segments {
            Some(previous) if self.config.fast_convergence && cwnd < previous => {
                cwnd * (1.0 + self.config.beta) / 2.0
            }
            _ => cwnd,
        };
        self.w_max_segments = Some(w_max);
        // RFC 9438 §4.6: "cwnd_prior = cwnd".
        self.cwnd_prior_segments = cwnd;
        self.epoch = None;
        self.after_timeout = false;
        self.carry_bytes = 0.0;
        // RFC 9438 §4.6: "ssthresh = flight_size * β_cubic", and "cwnd =
        // max(ssthresh, 2)" — at least two segments, as RFC 5681 eq. 4.
        ((flight_bytes as f64 * self.config.beta) as u64).max(2 * mss)
    }

    /// A retransmission timeout: a congestion event (RFC 9438 §4.8 sets
    /// ssthresh "using β_cubic (same as in Section 4.6)"), after which the
    /// first congestion-avoidance stage starts from K = 0.
    pub fn on_timeout(&mut self, cwnd_bytes: u64, flight_bytes: u64, mss: u64) -> u64 {
        let ssthresh = self.on_congestion_event(cwnd_bytes, flight_bytes, mss);
        self.note_timeout();
        ssthresh
    }

    /// Marks the last congestion event a timeout (RFC 9438 §4.8: "During
    /// the first congestion avoidance stage after a timeout, CUBIC
    /// increases its congestion window size using Figure 1, where t is the
    /// elapsed time since the beginning of the current congestion avoidance
    /// stage, K is set to 0, and W_max is set to the congestion window size
    /// at the beginning of the current congestion avoidance stage").
    pub fn note_timeout(&mut self) {
        self.after_timeout = true;
        self.epoch = None;
    }

    /// An ACK of `acked_bytes` new data in congestion avoidance at `now`;
    /// returns the new window in bytes. `srtt` is the smoothed RTT of
    /// "W_cubic(t + RTT)" (RFC 9438 §4.2).
    pub fn on_ack(
        &mut self,
        now: Instant,
        cwnd_bytes: u64,
        acked_bytes: u64,
        mss: u64,
        srtt: Duration,
    ) -> u64 {
        let mss_f = mss as f64;
        let cwnd = cwnd_bytes as f64 / mss_f;
        let config = self.config;
        let epoch = *self.epoch.get_or_insert_with(|| {
            // RFC 9438 §4.2: at the start of a congestion-avoidance stage,
            // t_epoch = now, cwnd_epoch = cwnd, W_est = cwnd_epoch; K from
            // eq. 2. Without a previous congestion event (slow start left
            // by HyStart++) and after a timeout (§4.8: "K is set to 0, and
            // W_max is set to the congestion window size at the beginning
            // of the current congestion avoidance stage") W_max = cwnd.
            let w_max = match self.w_max_segments {
                Some(w_max) if !self.after_timeout => w_max,
                _ => cwnd,
            };
            Epoch {
                start: now,
                k: config.k(w_max, cwnd),
                w_max_segments: w_max,
                w_est_segments: cwnd,
                alpha: config.alpha(),
            }
        });
        let segments_acked = acked_bytes as f64 / mss_f;
        let t = now.saturating_duration_since(epoch.start).as_secs_f64();
        // RFC 9438 §4.3: "W_est = W_est + α_cubic * segments_acked / cwnd";
        // "Once W_est has grown to reach the cwnd at the time of most
        // recently setting ssthresh -- that is, W_est >= cwnd_prior -- the
        // sender SHOULD set α_cubic to 1".
        let mut w_est = epoch.w_est_segments + epoch.alpha * segments_acked / cwnd;
        let alpha = if w_est >= self.cwnd_prior_segments {
            1.0
        } else {
            epoch.alpha
        };
        w_est = w_est.max(0.0);
        let w_cubic_now = config.w_cubic(t, epoch.k, epoch.w_max_segments);
        let new_cwnd = if w_cubic_now < w_est {
            // RFC 9438 §4.3: "When receiving a new ACK in congestion
            // avoidance (where cwnd could be greater than or less than
            // W_max), CUBIC checks whether W_cubic(t) is less than W_est.
            // If so, CUBIC is in the Reno-friendly region and cwnd SHOULD
            // be set to W_est at each reception of a new ACK."
            w_est.max(cwnd)
        } else {
            // RFC 9438 §4.2: target = cwnd if W_cubic(t + RTT) < cwnd;
            // 1.5·cwnd if above 1.5·cwnd; W_cubic(t + RTT) otherwise. "cwnd
            // MUST be incremented by (target - cwnd)/cwnd for each received
            // new ACK" — counted per segment acknowledged.
            let w_next = config.w_cubic(t + srtt.as_secs_f64(), epoch.k, epoch.w_max_segments);
            let target = w_next.clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * segments_acked
        };
        self.epoch = Some(Epoch {
            w_est_segments: w_est,
            alpha,
            ..epoch
        });
        let grown_bytes = (new_cwnd - cwnd) * mss_f + self.carry_bytes;
        let whole = grown_bytes.floor().max(0.0);
        self.carry_bytes = grown_bytes - whole;
        cwnd_bytes.saturating_add(whole as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn constants_follow_rfc_9438() {
        let c = CubicConfig::default();
        assert_eq!(c.beta, 0.7);
        assert_eq!(c.c, 0.4);
        // RFC 9438 §4.3: α_cubic = 3(1 − 0.7)/(1 + 0.7) = 0.9/1.7.
        assert!(close(c.alpha(), 0.9 / 1.7, 1e-12));
        assert!(close(c.alpha(), 0.529, 1e-3));
    }

    #[test]
    fn w_cubic_and_k_follow_equations_1_and_2() {
        let c = CubicConfig::default();
        // After a reduction from W_max = 100 to cwnd_epoch = 70: K =
        // ∛(30/0.4) = ∛75 ≈ 4.217 s, and W_cubic(0) = cwnd_epoch,
        // W_cubic(K) = W_max, W_cubic(2K) = W_max + C·K³ = 130.
        let k = c.k(100.0, 70.0);
        assert!(close(k, 75f64.cbrt(), 1e-12));
        assert!(close(k, 4.2172, 1e-4));
        assert!(close(c.w_cubic(0.0, k, 100.0), 70.0, 1e-9));
        assert!(close(c.w_cubic(k, k, 100.0), 100.0, 1e-12));
        assert!(close(c.w_cubic(2.0 * k, k, 100.0), 130.0, 1e-9));
        // Concave below W_max, convex above: the increments shrink and grow.
        let step = |t: f64| c.w_cubic(t + 1.0, k, 100.0) - c.w_cubic(t, k, 100.0);
        assert!(step(0.0) > step(2.0) && step(5.0) > step(4.0));
        // No K below zero when the epoch starts above W_max.
        assert_eq!(c.k(50.0, 70.0), 0.0);
    }

    #[test]
    fn multiplicative_decrease_is_beta_and_fast_convergence_lowers_w_max() {
        let mut cubic = Cubic::new(CubicConfig::default());
        // RFC 9438 §4.6: ssthresh = flight_size·β.
        let ssthresh = cubic.on_congestion_event(100 * MSS, 100 * MSS, MSS);
        assert_eq!(ssthresh, 70 * MSS);
        assert_eq!(cubic.w_max_segments(), Some(100.0));
        // §4.7: a second event below W_max remembers cwnd·(1 + β)/2.
        let ssthresh = cubic.on_congestion_event(80 * MSS, 80 * MSS, MSS);
        assert_eq!(ssthresh, 56 * MSS);
        assert!(close(
            cubic.w_max_segments().unwrap_or(0.0),
            80.0 * 0.85,
            1e-9
        ));
        // An event above the last W_max remembers cwnd itself.
        cubic.on_congestion_event(90 * MSS, 90 * MSS, MSS);
        assert_eq!(cubic.w_max_segments(), Some(90.0));
        // Without fast convergence, W_max is always cwnd.
        let mut plain = Cubic::new(CubicConfig {
            fast_convergence: false,
            ..CubicConfig::default()
        });
        plain.on_congestion_event(100 * MSS, 100 * MSS, MSS);
        plain.on_congestion_event(80 * MSS, 80 * MSS, MSS);
        assert_eq!(plain.w_max_segments(), Some(80.0));
        // Never below two segments.
        assert_eq!(plain.on_congestion_event(2 * MSS, MSS, MSS), 2 * MSS);
    }

    /// Drives one window of ACKs per RTT and returns cwnd in segments after
    /// each RTT.
    fn rtts(cubic: &mut Cubic, mut cwnd: u64, start: Instant, rtt: Duration, n: usize) -> Vec<f64> {
        let mut out = Vec::new();
        let mut now = start;
        for _ in 0..n {
            let acks = cwnd / MSS;
            for i in 0..acks {
                let at = now + rtt.mul_f64(i as f64 / acks as f64);
                cwnd = cubic.on_ack(at, cwnd, MSS, MSS, rtt);
            }
            now += rtt;
            out.push(cwnd as f64 / MSS as f64);
        }
        out
    }

    #[test]
    fn window_follows_w_cubic_back_to_w_max_at_k() {
        // A long RTT (1 s) puts CUBIC in its cubic region (W_cubic above
        // W_est), where cwnd tracks W_cubic(t + RTT).
        let rtt = Duration::from_secs(1);
        let mut cubic = Cubic::new(CubicConfig::default());
        let ssthresh = cubic.on_congestion_event(1000 * MSS, 1000 * MSS, MSS);
        assert_eq!(ssthresh, 700 * MSS);
        let trace = rtts(&mut cubic, ssthresh, Instant::ZERO, rtt, 14);
        let k = cubic.k().unwrap_or(0.0);
        // K = ∛(300/0.4) = ∛750 ≈ 9.09 s.
        assert!(close(k, 750f64.cbrt(), 1e-9));
        let c = CubicConfig::default();
        for (i, w) in trace.iter().enumerate() {
            // cwnd moves (target - cwnd)/cwnd per ACK towards W_cubic(t +
            // RTT), so at the end of round i (t = i + 1 s) it trails
            // W_cubic(t) by a little (1.5 % of W_max at most) and never
            // passes W_cubic(t + RTT).
            let t = (i + 1) as f64;
            let now = c.w_cubic(t, k, 1000.0);
            let ahead = c.w_cubic(t + 1.0, k, 1000.0);
            println!("round {i}: cwnd {w:.1}, W_cubic(t) {now:.1}, W_cubic(t + RTT) {ahead:.1}");
            assert!(
                *w <= ahead + 1.0 && *w >= now - 15.0,
                "round {i}: cwnd {w:.1} against W_cubic {now:.1} .. {ahead:.1}"
            );
        }
        // Plateau near W_max around t = K, then convex growth beyond it.
        assert!(close(trace[8], 1000.0, 3.0));
        assert!(trace[13] > 1010.0);
    }

    #[test]
    fn short_rtts_follow_the_reno_friendly_region() {
        // RFC 9438 §4.3: at a small BDP W_cubic grows slower than Reno;
        // W_est grows by α_cubic segments per RTT until cwnd_prior, then by
        // one, and cwnd follows it.
        let rtt = Duration::from_millis(10);
        let mut cubic = Cubic::new(CubicConfig::default());
        let ssthresh = cubic.on_congestion_event(20 * MSS, 20 * MSS, MSS);
        assert_eq!(ssthresh, 14 * MSS);
        let trace = rtts(&mut cubic, ssthresh, Instant::ZERO, rtt, 10);
        let alpha = CubicConfig::default().alpha();
        // Ten RTTs at α ≈ 0.53 segments per RTT: about 5.3 segments, where
        // W_cubic(0.1 s) = 20 + 0.4·(0.1 − K)³ is barely above 14.
        let grown = trace[9] - 14.0;
        assert!(
            (grown - 10.0 * alpha).abs() < 0.6,
            "grew {grown:.2} segments in 10 RTTs"
        );
        let w_est = cubic.w_est_segments().unwrap_or(0.0);
        assert!(close(w_est, trace[9], 1.0));
        // Beyond cwnd_prior (20 segments) α becomes 1.
        let trace = rtts(
            &mut cubic,
            (trace[9] * MSS as f64) as u64,
            Instant::from_millis(100),
            rtt,
            20,
        );
        let late = trace[19] - trace[14];
        assert!(
            trace[14] > 20.0 && close(late, 5.0, 0.6),
            "late growth {late:.2}"
        );
    }

    #[test]
    fn timeout_restarts_the_epoch_from_k_zero() {
        let mut cubic = Cubic::new(CubicConfig::default());
        let ssthresh = cubic.on_timeout(100 * MSS, 100 * MSS, MSS);
        assert_eq!(ssthresh, 70 * MSS);
        // Entering congestion avoidance at 70 segments after the timeout:
        // W_max = 70, K = 0.
        cubic.on_ack(
            Instant::from_millis(5000),
            70 * MSS,
            MSS,
            MSS,
            Duration::from_millis(100),
        );
        assert_eq!(cubic.k(), Some(0.0));
    }

    #[test]
    fn response_function_follows_section_5_1() {
        let c = CubicConfig::default();
        // (0.4·3.7/(4·0.3))^¼ = 1.2333^¼ ≈ 1.0538.
        let factor = c.average_window_segments(1.0, Duration::from_secs(1));
        assert!(close(factor, 1.0538, 1e-4));
        // p = 0.01, RTT = 100 ms: 1.0538 · 0.1^¾ / 0.01^¾ ≈ 5.93 segments,
        // below Reno's √(3/(2p)) ≈ 12.25: the Reno-friendly region.
        let w = c.average_window_segments(0.01, Duration::from_millis(100));
        assert!(close(w, 5.926, 0.001));
        // p = 0.001, RTT = 400 ms: 1.0538 · 0.4^¾ / 0.001^¾ ≈ 94.25, above
        // Reno's 38.7: the cubic region.
        let w = c.average_window_segments(0.001, Duration::from_millis(400));
        assert!(close(w, 94.25, 0.05));
        // The model's own derivation: one epoch carries 1/p packets.
        let w_max = w * 4.0 / 3.7;
        let k = c.k(w_max, 0.7 * w_max);
        assert!(close(w * k / 0.4, 1000.0, 0.5));
        // The Reno-friendly average is Reno's √(3/(2p)) ≈ 12.25.
        assert!(close(
            c.average_reno_window_segments(0.01),
            (1.5f64 / 0.01).sqrt(),
            1e-9
        ));
    }
}
