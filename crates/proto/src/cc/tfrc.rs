//! The TFRC sender (RFC 5348 §4), with the TFRC-SP small-packet variant
//! (RFC 4828, used by CCID 4, RFC 5622).
//!
//! The sender keeps the allowed sending rate X and paces packets at it. It
//! learns the round-trip time R, the receive rate X_recv and the loss event rate
//! p from the receiver's feedback ([`TfrcFeedback`]); with p > 0 it follows the
//! throughput equation, with p = 0 it slow-starts, doubling X at most once per R
//! and never above twice what the receiver got. A nofeedback timer halves the
//! rate when feedback stops.
//!
//! Options, each off by default and named after its source:
//! - oscillation prevention (RFC 5348 §4.5);
//! - the packet size in the equation: the mean size sent (the default, RFC
//!   5348 §4.1), the configured size, or each packet's own size (paper 000
//!   §3.2, [`PacketSizeMode::PerPacket`]);
//! - TFRC-SP ([`SmallPacketConfig`]).

use std::time::Duration;

use crate::cc::equation::TcpEquation;
use crate::cc::{
    ControllerConfig, Feedback, FeedbackMismatch, RateController, SendPermission, TfrcFeedback,
};
use crate::time::Instant;
use crate::units::Rate;

/// Which packet size s the sender puts into the throughput equation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacketSizeMode {
    /// RFC 5348 §4.1: "s is the nominal packet size in bytes", which "may be
    /// estimated as the mean size of the packets sent": an exponentially
    /// weighted mean of the data packets as they leave (weight 1/10 for the
    /// newest, as Linux's CCID 3 did), [`TfrcConfig::segment_size`] until
    /// the first one. The receiver's first loss interval (RFC 5348 §6.3.1)
    /// uses the mean size it receives, so with the same s at both ends the
    /// first p reproduces X_recv (RFC 4342 §5.3 asks the two to agree).
    #[default]
    SentMean,
    /// s is the configured size, [`TfrcConfig::segment_size`], whatever is
    /// sent. With packets much smaller than it, the sender's equation and
    /// the receiver's first loss interval disagree by the ratio of the two
    /// sizes (measured: a 205-byte clip sent with s = 1460 ran at 2·X_recv
    /// for 14 RTTs after its first loss and lost 21.9 % of its packets).
    ConfiguredMean,
    /// Paper 000 §3.2: s is the size of each packet as it is sent, "dynamically
    /// altered according to … trace file sizes". With it the packet rate, not
    /// the byte rate, follows the equation.
    PerPacket,
}

/// TFRC-SP, the small-packet variant (RFC 4828; CCID 4, RFC 5622).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmallPacketConfig {
    /// The nominal segment size used in the equation. RFC 4828 §4.1: "the
    /// TFRC-SP sender uses a segment size of 1460 bytes" in the equation.
    pub nominal_segment_size: usize,
    /// Header size H by which the rate is reduced: X·s/(s + H). RFC 4828 §4.1
    /// uses H = 40 (IPv4 + UDP/TCP headers); CCID 4 (RFC 5622 §5) uses 36 (IPv4
    /// 20 + DCCP 16 with short sequence numbers... as the RFC states it).
    pub header_size: usize,
    /// RFC 4828 §4.3: "a TFRC-SP sender ... MUST enforce a minimum interval of
    /// 10 ms between data packets".
    pub min_interval: Duration,
}

impl SmallPacketConfig {
    /// RFC 4828's constants: s_nominal = 1460, H = 40, 10 ms.
    pub const RFC4828: SmallPacketConfig = SmallPacketConfig {
        nominal_segment_size: 1460,
        header_size: 40,
        min_interval: Duration::from_millis(10),
    };
    /// CCID 4's constants (RFC 5622 §5): s_nominal = 1460, H = 36, 10 ms.
    pub const CCID4: SmallPacketConfig = SmallPacketConfig {
        header_size: 36,
        ..Self::RFC4828
    };
}

impl Default for SmallPacketConfig {
    fn default() -> Self {
        SmallPacketConfig::CCID4
    }
}

/// Configuration of a TFRC sender; `Default` gives RFC 5348's constants.
#[derive(Clone, Debug, PartialEq)]
pub struct TfrcConfig {
    /// s, the (mean) packet size in bytes (RFC 5348 §4.1): under
    /// [`PacketSizeMode::SentMean`] the estimate before the first packet
    /// leaves. Default 1460.
    pub segment_size: usize,
    /// Which s goes into the equation. Default: the mean of the packets
    /// sent ([`PacketSizeMode::SentMean`]).
    pub packet_size: PacketSizeMode,
    /// The throughput model. Default: RFC 5348 §3.1 with b = 1, t_RTO = 4R.
    pub equation: TcpEquation,
    /// q, the RTT filter constant. RFC 5348 §4.3: "a typical value for q is 0.9".
    pub rtt_filter: f64,
    /// t_mbi, the maximum back-off interval: X never drops below s/t_mbi.
    /// RFC 5348 §4.3: "t_mbi ... 64 seconds".
    pub max_backoff_interval: Duration,
    /// The nofeedback timer before the first RTT sample. RFC 5348 §4.2: "set to
    /// expire after 2 seconds".
    pub initial_nofeedback: Duration,
    /// RFC 5348 §4.5 oscillation prevention ("MAY"); off by default.
    pub oscillation_prevention: bool,
    /// q2 of §4.5: "a typical value for q2 is 0.9".
    pub oscillation_filter: f64,
    /// t_gran, the driver's timer granularity (RFC 5348 §4.6). Default 1 ms.
    pub timer_granularity: Duration,
    /// How far behind its schedule the sender may fall and still catch up by
    /// sending early (after a late wake-up or an idle pause). The RFC bounds
    /// bursts (§4.6, §8.3); we allow at most this much credit. Default 1 ms.
    pub max_catch_up: Duration,
    /// TFRC-SP (RFC 4828). `None`: plain TFRC.
    pub small_packet: Option<SmallPacketConfig>,
}

impl Default for TfrcConfig {
    fn default() -> Self {
        TfrcConfig {
            segment_size: 1460,
            packet_size: PacketSizeMode::SentMean,
            equation: TcpEquation::default(),
            rtt_filter: 0.9,
            max_backoff_interval: Duration::from_secs(64),
            initial_nofeedback: Duration::from_secs(2),
            oscillation_prevention: false,
            oscillation_filter: 0.9,
            timer_granularity: Duration::from_millis(1),
            max_catch_up: Duration::from_millis(1),
            small_packet: None,
        }
    }
}

impl TfrcConfig {
    /// The TFRC-SP configuration of CCID 4 (RFC 5622) for packets of `s` bytes.
    pub fn small_packets(segment_size: usize) -> TfrcConfig {
        TfrcConfig {
            segment_size,
            small_packet: Some(SmallPacketConfig::CCID4),
            ..TfrcConfig::default()
        }
    }
}

impl ControllerConfig for TfrcConfig {
    fn build(&self, now: Instant) -> Box<dyn RateController> {
        Box::new(TfrcSender::new(self.clone(), now))
    }
}

/// W_init = min(4·s, max(2·s, 4380)) bytes (RFC 5348 §4.2, from RFC 3390).
pub fn initial_window(s: f64) -> f64 {
    (4.0 * s).min((2.0 * s).max(4380.0))
}

/// The TFRC sender state machine (RFC 5348 §4).
#[derive(Debug, Clone)]
pub struct TfrcSender {
    config: TfrcConfig,
    /// X, the allowed transmit rate in bytes/s.
    x: f64,
    /// X_Bps from the equation at the last feedback with p > 0 (under
    /// TFRC-SP, with the header allowance).
    x_equation: Option<f64>,
    /// n of the MulTFRC equation: 1 for RFC 5348's TFRC; another value
    /// makes X the rate of n TFRC flows (the aggregate controller).
    flows: f64,
    /// j of the MulTFRC equation: packets lost per loss event, as the
    /// receiver of the experimental MulTFRC CCID reports it; 1 until then.
    losses_per_event: f64,
    /// p as last reported.
    p: f64,
    /// R, the smoothed RTT in seconds, once there is a sample.
    rtt: Option<f64>,
    /// R as a duration, kept beside it (asked for far more often than R
    /// changes).
    rtt_duration: Option<Duration>,
    /// The latest RTT sample, seconds.
    rtt_sample: Option<f64>,
    /// R_sqmean for oscillation prevention.
    rtt_sqmean: Option<f64>,
    /// The latest X_recv reported.
    x_recv: f64,
    /// X_recv_set: (time, rate) pairs; `f64::INFINITY` is the initial item.
    x_recv_set: Vec<(Instant, f64)>,
    /// tld: time last doubled in slow start.
    time_last_doubled: Option<Instant>,
    /// When the nofeedback timer expires.
    nofeedback_deadline: Instant,
    /// When the nofeedback timer was last set.
    nofeedback_set_at: Instant,
    /// Whether any feedback has been received.
    have_feedback: bool,
    /// The nominal send time of the last packet sent (RFC 5348 §4.6 t_nom
    /// before the increment). The next t_nom is derived from it with the
    /// current rate, so a rate change applies to the very next packet.
    last_nominal: Option<Instant>,
    /// The bytes the last packet counted for in pacing.
    last_paced_bytes: f64,
    /// The last t_ipi and t_delta made durations, by their seconds' bits:
    /// [`permission`](RateController::permission) asks for the same ones
    /// several times a packet, and the conversion is not cheap.
    ipi_memo: (u64, Duration),
    delta_memo: (u64, Duration),
    /// The last time a packet was sent.
    last_send: Option<Instant>,
    /// The last time the sender had data but was held back by the rate (it
    /// was not data-limited then), RFC 5348 §8.2.1.
    last_rate_limited: Option<Instant>,
    /// The send time echoed by the previous feedback: the start of the interval
    /// the next feedback covers.
    previous_echo: Option<Instant>,
    /// s used in the equation.
    s_equation: f64,
    /// The mean size of the data packets sent, once one has been.
    mean_sent: Option<f64>,
    /// Feedback packets that gave a valid RTT sample.
    feedbacks: u64,
    /// A rate X may rise to above the equation's (the adaptive
    /// connection-count controller's target), bytes/s.
    target_rate: Option<f64>,
    /// X_Bps of the equation for one flow (n = 1) at the last feedback with
    /// p > 0, before any target.
    x_equation_one: Option<f64>,
    /// CE-marked packets the receiver has reported (experimental CCID 248
    /// option 197), unwrapped from its 32-bit count.
    ecn_marks: u64,
    /// The loss event rate without the losses of a marking path, as the
    /// receiver of the experimental CCID 248 last reported it (option 198).
    congestion_p: Option<f64>,
    /// Whether the equation takes `congestion_p` instead of p (the adaptive
    /// controller's connections).
    use_congestion_p: bool,
}

impl TfrcSender {
    /// A new sender at `now`. RFC 5348 §4.2: before the first RTT sample X is
    /// one packet per second ("the value of X is set to s bytes per second")
    /// and the nofeedback timer is set to 2 s.
    pub fn new(config: TfrcConfig, now: Instant) -> TfrcSender {
        let s_equation = Self::equation_size(&config, config.segment_size);
        // (Under PerPacket, `paced_bytes` keeps the packet rate of the
        // equation; s in the equation stays the configured mean.)
        let initial_nofeedback = config.initial_nofeedback;
        TfrcSender {
            x: config.segment_size.max(1) as f64,
            x_equation: None,
            flows: 1.0,
            losses_per_event: 1.0,
            p: 0.0,
            rtt: None,
            rtt_duration: None,
            rtt_sample: None,
            rtt_sqmean: None,
            x_recv: 0.0,
            // RFC 5348 §4.2: "the sender initializes X_recv_set to contain a
            // single item, with value Infinity".
            x_recv_set: vec![(now, f64::INFINITY)],
            time_last_doubled: None,
            nofeedback_deadline: now + initial_nofeedback,
            nofeedback_set_at: now,
            have_feedback: false,
            last_nominal: None,
            last_paced_bytes: 0.0,
            // secs(0.0) is zero: a correct first entry.
            ipi_memo: (0, Duration::ZERO),
            delta_memo: (0, Duration::ZERO),
            last_send: None,
            last_rate_limited: None,
            previous_echo: None,
            s_equation,
            mean_sent: None,
            feedbacks: 0,
            target_rate: None,
            x_equation_one: None,
            ecn_marks: 0,
            congestion_p: None,
            use_congestion_p: false,
            config,
        }
    }

    /// The s to use in the equation for a packet of `size` bytes.
    fn equation_size(config: &TfrcConfig, size: usize) -> f64 {
        if let Some(sp) = config.small_packet {
            return sp.nominal_segment_size.max(1) as f64;
        }
        size.max(1) as f64
    }

    /// The configuration.
    pub fn config(&self) -> &TfrcConfig {
        &self.config
    }

    /// s, the packet size in bytes the equation uses now (RFC 5348 §4.1):
    /// the configured size, the mean sent ([`PacketSizeMode::SentMean`]), or
    /// TFRC-SP's nominal size.
    pub fn segment_size(&self) -> f64 {
        self.s_equation
    }

    /// RFC 5348 §4.1: s "may be estimated as the mean size of the packets
    /// sent". Linux's CCID 3 kept `s = (9·s + len) / 10`, starting from the
    /// first packet's size; so does this.
    fn update_segment_size(&mut self, size_bytes: usize) {
        let size = size_bytes.max(1) as f64;
        let mean = self.mean_sent.map_or(size, |s| 0.9 * s + 0.1 * size);
        self.mean_sent = Some(mean);
        if self.config.small_packet.is_none() && self.config.packet_size == PacketSizeMode::SentMean
        {
            self.s_equation = mean;
            // X never below s/t_mbi (RFC 5348 §4.3), for the s of now.
            self.x = self.x.max(self.min_rate());
        }
    }

    /// X, the allowed sending rate.
    pub fn x(&self) -> Rate {
        Rate::from_bytes_per_sec(self.x)
    }

    /// p as last reported by the receiver.
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }

    /// The latest receive rate reported by the receiver.
    pub fn receive_rate(&self) -> Rate {
        Rate::from_bytes_per_sec(self.x_recv)
    }

    /// The current limit recv_limit = 2·max(X_recv_set) (or max for the
    /// data-limited-after-loss case); infinite before feedback.
    pub fn receive_limit(&self) -> Rate {
        Rate::from_bytes_per_sec(2.0 * self.max_x_recv_set())
    }

    /// RTO = max(4R, 2s/X) (RFC 5348 §4.3 step 3), once there is an RTT sample.
    pub fn rto(&self) -> Option<Duration> {
        self.rtt
            .map(|r| secs((4.0 * r).max(2.0 * self.s() / self.x)))
    }

    /// The s used for rate floors and W_init: the configured size (or nominal
    /// 1460 under TFRC-SP).
    fn s(&self) -> f64 {
        self.s_equation
    }

    /// s/t_mbi, the lowest rate X may fall to.
    fn min_rate(&self) -> f64 {
        self.s() / self.config.max_backoff_interval.as_secs_f64().max(1e-9)
    }

    /// initial_rate = W_init/R (RFC 5348 §4.2); also recover_rate (§4.4).
    fn initial_rate(&self) -> Option<f64> {
        self.rtt
            .map(|r| initial_window(self.s()) / r * self.header_allowance())
    }

    /// TFRC-SP's header allowance s/(s + H) (1 for TFRC), s the mean size of
    /// the packets sent. RFC 4828 §4.1: "The allowed transmit rate X in
    /// bytes per second is reduced by a factor that accounts for packet
    /// header size", so that the flow's bytes with headers match those of a
    /// TCP sending 1460-byte segments.
    ///
    /// The factor scales the rates modelled on that TCP (the equation's
    /// X_Bps for the nominal s, and W_init/R), not recv_limit: X_recv is
    /// this flow's own delivered rate, already in its packets' bytes. Scaled
    /// too, the limit of a data-limited flow would be 2·X_recv·s/(s + H),
    /// below X_recv itself whenever s < H (0.71·X_recv for G.729's 20-byte
    /// frames under CCID 4's H = 36), and every feedback would cut the rate
    /// of a call sending exactly what its codec makes.
    fn header_allowance(&self) -> f64 {
        self.config.small_packet.map_or(1.0, |sp| {
            let s_true = self
                .mean_sent
                .unwrap_or(self.config.segment_size.max(1) as f64);
            s_true / (s_true + sp.header_size as f64)
        })
    }

    fn max_x_recv_set(&self) -> f64 {
        self.x_recv_set.iter().map(|&(_, x)| x).fold(0.0, f64::max)
    }

    /// The rate actually paced at: X, scaled (with §4.5) by the oscillation
    /// factor.
    fn pacing_rate(&self) -> f64 {
        let mut x = self.x;
        if let (true, Some(sqmean), Some(sample)) = (
            self.config.oscillation_prevention,
            self.rtt_sqmean,
            self.rtt_sample,
        ) {
            // RFC 5348 §4.5: X_inst = X * R_sqmean / sqrt(R_sample).
            if sample > 0.0 {
                x = x * sqmean / sample.sqrt();
            }
        }
        // Positive, so that s/X is finite.
        x.max(1e-3)
    }

    /// t_nom of the next packet: the last nominal time plus t_ipi at the
    /// current rate.
    fn next_nominal(&mut self) -> Option<Instant> {
        let pacing_rate = self.pacing_rate();
        self.next_nominal_at(pacing_rate)
    }

    /// [`next_nominal`](Self::next_nominal) with the pacing rate given.
    fn next_nominal_at(&mut self, pacing_rate: f64) -> Option<Instant> {
        let last = self.last_nominal?;
        Some(last + memo_secs(&mut self.ipi_memo, self.last_paced_bytes / pacing_rate))
    }

    /// The bytes a packet of `size` counts for in pacing: its size, or under
    /// paper 000's per-packet mode the mean s. With s_i in the equation,
    /// X_i = s_i/(R·f(p)) and t_ipi = s_i/X_i = R·f(p) whatever the size: the
    /// packet rate, not the byte rate, follows the equation.
    fn paced_bytes(&self, size: usize) -> f64 {
        match (self.config.packet_size, self.config.small_packet) {
            (PacketSizeMode::PerPacket, None) => self.s(),
            _ => size.max(1) as f64,
        }
    }

    /// The interval covered by a feedback (from the packet echoed by the
    /// previous feedback to the one echoed now) was data-limited when the
    /// sender was never held back by the rate since it began (RFC 5348
    /// §8.2.1).
    fn interval_was_data_limited(&self) -> bool {
        let start = self.previous_echo.unwrap_or(Instant::ZERO);
        self.last_rate_limited.is_none_or(|t| t < start)
    }

    /// RFC 5348 §4.3 "Maximize X_recv_set()": add X_recv, delete Infinity,
    /// keep only the largest item, stamped now.
    fn maximize_x_recv_set(&mut self, now: Instant) {
        let max = self
            .x_recv_set
            .iter()
            .map(|&(_, x)| x)
            .filter(|x| x.is_finite())
            .fold(self.x_recv, f64::max);
        self.x_recv_set.clear();
        self.x_recv_set.push((now, max));
    }

    /// RFC 5348 §4.3 "Update X_recv_set()": add X_recv, delete values older
    /// than two round-trip times.
    fn update_x_recv_set(&mut self, now: Instant, r: f64) {
        self.x_recv_set.push((now, self.x_recv));
        let horizon = secs(2.0 * r);
        self.x_recv_set
            .retain(|&(t, _)| now.saturating_duration_since(t) <= horizon);
        // Feedback comes about once per RTT, so the set is small; bound it
        // anyway against a peer that floods feedback.
        const MAX_ITEMS: usize = 64;
        if self.x_recv_set.len() > MAX_ITEMS {
            let excess = self.x_recv_set.len() - MAX_ITEMS;
            self.x_recv_set.drain(..excess);
        }
    }

    /// Step 4 of §4.3 after recv_limit is known.
    fn recompute_x(&mut self, now: Instant, recv_limit: f64, r: f64) {
        if self.p > 0.0 {
            // RFC 5348 §4.3: "Calculate X_Bps using the TCP throughput
            // equation. X = max(min(X_Bps, recv_limit), s/t_mbi);"
            // With n ≠ 1 flows the MulTFRC n-flow equation replaces RFC
            // 5348's (the aggregate of multi-connection streaming), with j
            // as the receiver reported it (1 until it does).
            let p = self.equation_p();
            let x_bps = if self.flows == 1.0 {
                self.config.equation.rate(self.s(), secs(r), p)
            } else {
                crate::cc::multfrc::MulTfrcEquation::default().rate(
                    self.s(),
                    secs(r),
                    p,
                    self.flows,
                    self.losses_per_event,
                )
            };
            let x_bps = x_bps.map_or(self.min_rate(), |rate| rate.bytes_per_sec())
                * self.header_allowance();
            self.x_equation_one = if self.flows == 1.0 {
                Some(x_bps)
            } else {
                self.config
                    .equation
                    .rate(self.s(), secs(r), p)
                    .ok()
                    .map(|rate| rate.bytes_per_sec() * self.header_allowance())
            };
            // The adaptive controller's target may raise X above the
            // equation, never lower it.
            let x_bps = self.target_rate.map_or(x_bps, |target| x_bps.max(target));
            self.x_equation = Some(x_bps);
            self.x = x_bps.min(recv_limit).max(self.min_rate());
        } else {
            let due = self
                .time_last_doubled
                .is_none_or(|tld| now - tld >= secs(r));
            if due {
                // RFC 5348 §4.3: "Else if (t_now - tld >= R) { // initial
                // slow-start: X = max(min(2*X, recv_limit), initial_rate);
                // tld = t_now; }"
                let initial = self.initial_rate().unwrap_or(self.x);
                self.x = (2.0 * self.x).min(recv_limit).max(initial);
                self.time_last_doubled = Some(now);
            }
        }
    }

    fn handle_feedback(&mut self, now: Instant, feedback: &TfrcFeedback) {
        // RFC 5348 §4.3 step 1: R_sample = (t_now - t_recvdata) - t_delay.
        let since_echo = now.checked_duration_since(feedback.echoed_send_time);
        let sample = since_echo
            .and_then(|d| d.checked_sub(feedback.receiver_delay))
            .map(|d| d.as_secs_f64())
            .filter(|&d| d > 0.0);
        let Some(sample) = sample else {
            // An echo from the future or a delay longer than the round trip:
            // not a valid sample. The feedback is not trusted.
            return;
        };
        // Step 2: "If no feedback has been received before { R = R_sample; }
        // Else { R = q*R + (1-q)*R_sample; }"
        let q = self.config.rtt_filter;
        let r = match self.rtt {
            None => sample,
            Some(r) => q * r + (1.0 - q) * sample,
        };
        self.rtt = Some(r);
        self.rtt_duration = Some(secs(r));
        self.rtt_sample = Some(sample);
        self.feedbacks += 1;
        // RFC 5348 §4.5: "R_sqmean = q2*R_sqmean + (1-q2)*sqrt(R_sample)",
        // initialised to sqrt(R_sample).
        let q2 = self.config.oscillation_filter;
        self.rtt_sqmean = Some(match self.rtt_sqmean {
            None => sample.sqrt(),
            Some(m) => q2 * m + (1.0 - q2) * sample.sqrt(),
        });

        let new_p = feedback.loss_event_rate.clamp(0.0, 1.0);
        let p_rose = new_p > self.p;
        self.p = if new_p.is_nan() { self.p } else { new_p };
        self.x_recv = feedback.receive_rate.bytes_per_sec();

        // Step 4.
        let echo = feedback.echoed_send_time;
        let recv_limit = if self.interval_was_data_limited() {
            if p_rose {
                // "If (the feedback packet reports a new loss event or an
                // increase in the loss event rate p) { Halve entries in
                // X_recv_set; X_recv = 0.85 * X_recv; Maximize X_recv_set();
                // recv_limit = max (X_recv_set); }"
                for item in &mut self.x_recv_set {
                    item.1 /= 2.0;
                }
                self.x_recv *= 0.85;
                self.maximize_x_recv_set(now);
                self.max_x_recv_set()
            } else {
                // "Else { Maximize X_recv_set(); recv_limit = 2 * max
                // (X_recv_set); }"
                self.maximize_x_recv_set(now);
                2.0 * self.max_x_recv_set()
            }
        } else {
            // "Else { Update X_recv_set(); recv_limit = 2 * max (X_recv_set); }"
            self.update_x_recv_set(now, r);
            2.0 * self.max_x_recv_set()
        };
        self.recompute_x(now, recv_limit, r);
        self.previous_echo = Some(echo);
        self.have_feedback = true;
        // Step 6: "Reset the nofeedback timer to expire after RTO seconds."
        self.restart_nofeedback_timer(now);
    }

    fn restart_nofeedback_timer(&mut self, now: Instant) {
        let timeout = self.rto().unwrap_or(self.config.initial_nofeedback);
        self.nofeedback_set_at = now;
        self.nofeedback_deadline = now + timeout;
    }

    /// Whether no packet was sent since the nofeedback timer was set.
    fn idle_since_timer_set(&self) -> bool {
        self.last_send.is_none_or(|t| t < self.nofeedback_set_at)
    }

    /// RFC 5348 §4.4 "Update_Limits(timer_limit)".
    fn update_limits(&mut self, now: Instant, timer_limit: f64) {
        // "If (timer_limit < s/t_mbi) timer_limit = s/t_mbi;"
        let timer_limit = timer_limit.max(self.min_rate());
        // "Replace X_recv_set contents with the single item timer_limit/2;"
        self.x_recv_set.clear();
        self.x_recv_set.push((now, timer_limit / 2.0));
        // "Recalculate X as in step (4) of Section 4.3;"
        let recv_limit = 2.0 * self.max_x_recv_set();
        if let Some(r) = self.rtt {
            self.recompute_x(now, recv_limit, r);
        } else {
            self.x = self.x.min(recv_limit).max(self.min_rate());
        }
    }

    /// The nofeedback timer expired (RFC 5348 §4.4).
    fn nofeedback_expired(&mut self, now: Instant) {
        let idle = self.idle_since_timer_set();
        let recover_rate = self.initial_rate();
        let low_and_idle = idle
            && recover_rate.is_some_and(|recover| {
                (self.p > 0.0 && self.x_recv < recover) || (self.p == 0.0 && self.x < 2.0 * recover)
            });
        if self.rtt.is_none() && !self.have_feedback && !idle {
            // "If (the sender does not have an RTT sample, has not received
            // any feedback from the receiver, and has not been idle ever since
            // the nofeedback timer was set) { X = max(X/2, s/t_mbi); }"
            self.x = (self.x / 2.0).max(self.min_rate());
        } else if low_and_idle {
            // "Else if (((p > 0 && X_recv < recover_rate) or (p == 0 && X < 2
            // * recover_rate)), and the sender has been idle ever since the
            // nofeedback timer was set) { // Don't halve the allowed sending
            // rate. Do nothing; }"
        } else if self.p == 0.0 {
            // "Else if (p == 0) { X = max(X/2, s/t_mbi); }"
            self.x = (self.x / 2.0).max(self.min_rate());
        } else if self.x_equation.unwrap_or(f64::INFINITY) > 2.0 * self.x_recv {
            // "Else if (X_Bps > 2*X_recv) { Update_Limits(X_recv); }"
            self.update_limits(now, self.x_recv);
        } else {
            // "Else { Update_Limits(X_Bps/2); }"
            let x_bps = self.x_equation.unwrap_or(self.x);
            self.update_limits(now, x_bps / 2.0);
        }
        // Step 2: "Restart the nofeedback timer to expire after max(4*R,
        // 2*s/X) seconds." (Before an RTT sample: 2 s again.)
        self.restart_nofeedback_timer(now);
    }

    /// Use an RTT measured outside the feedback loop (e.g. the DCCP
    /// handshake). RFC 5348 §4.2: the sender "MAY use the RTT measured in the
    /// handshake" and then "SHOULD set the initial transmit rate ... X =
    /// W_init/R".
    pub fn set_initial_rtt(&mut self, now: Instant, rtt: Duration) {
        let r = rtt.as_secs_f64();
        if self.rtt.is_some() || self.have_feedback || r <= 0.0 {
            return;
        }
        self.rtt = Some(r);
        self.rtt_duration = Some(secs(r));
        self.x = initial_window(self.s()) / r * self.header_allowance();
        self.restart_nofeedback_timer(now);
    }
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.max(0.0)).unwrap_or(Duration::MAX)
}

/// [`secs`] of `s`, from `memo` when it holds the same `s` (by its bits).
fn memo_secs(memo: &mut (u64, Duration), s: f64) -> Duration {
    if memo.0 != s.to_bits() {
        *memo = (s.to_bits(), secs(s));
    }
    memo.1
}

impl RateController for TfrcSender {
    fn name(&self) -> &'static str {
        if self.config.small_packet.is_some() {
            "tfrc-sp"
        } else {
            "tfrc"
        }
    }

    fn permission(&mut self, now: Instant, size_bytes: usize) -> SendPermission {
        // RFC 5348 §4.6: send when t_now >= t_nom - t_delta, with
        // t_delta = min(t_ipi/2, t_gran/2).
        let pacing_rate = self.pacing_rate();
        let t_ipi = self.paced_bytes(size_bytes) / pacing_rate;
        let t_delta = memo_secs(
            &mut self.delta_memo,
            (t_ipi / 2.0).min(self.config.timer_granularity.as_secs_f64() / 2.0),
        );
        let Some(nominal) = self.next_nominal_at(pacing_rate) else {
            return SendPermission::Now;
        };
        let mut earliest = nominal - t_delta;
        if let (Some(sp), Some(last)) = (self.config.small_packet, self.last_send) {
            // RFC 4828 §4.3: at least 10 ms between packets.
            earliest = earliest.max(last + sp.min_interval);
        }
        if now >= earliest {
            SendPermission::Now
        } else {
            // The driver has data and the rate holds it back: not data-limited.
            self.last_rate_limited = Some(now);
            SendPermission::At(earliest)
        }
    }

    fn on_packet_sent(&mut self, now: Instant, _seq: u64, size_bytes: usize) {
        let nominal = match self.next_nominal() {
            None => now,
            Some(nominal) if nominal > now => {
                // Sent within t_delta before its nominal time: the rate was
                // what held it back, so the sender was not data-limited.
                self.last_rate_limited = Some(now);
                nominal
            }
            // Behind schedule (idle, or a late wake-up): the sender may catch
            // up by at most `max_catch_up`; the excess credit is forfeit.
            Some(nominal) => nominal.max(now - self.config.max_catch_up),
        };
        // RFC 5348 §4.6: t_nom = t_nom + t_ipi, with t_ipi = s/X_inst.
        self.last_nominal = Some(nominal);
        self.last_paced_bytes = self.paced_bytes(size_bytes);
        self.last_send = Some(now);
        self.update_segment_size(size_bytes);
    }

    fn on_application_limited(&mut self, _now: Instant) {
        // Nothing to record: data-limited is the absence of rate-limited
        // moments (last_rate_limited), RFC 5348 §8.2.1.
    }

    fn on_feedback(&mut self, now: Instant, feedback: &Feedback) -> Result<(), FeedbackMismatch> {
        match feedback {
            Feedback::Tfrc(tfrc) => {
                self.handle_feedback(now, tfrc);
                Ok(())
            }
            other => Err(FeedbackMismatch {
                controller: self.name(),
                got: other.kind(),
            }),
        }
    }

    fn on_timeout(&mut self, now: Instant) {
        if now >= self.nofeedback_deadline {
            self.nofeedback_expired(now);
        }
    }

    fn next_timeout(&self) -> Option<Instant> {
        Some(self.nofeedback_deadline)
    }

    fn allowed_rate(&self) -> Rate {
        Rate::from_bytes_per_sec(self.pacing_rate())
    }

    fn rtt(&self) -> Option<Duration> {
        self.rtt_duration
    }
}

mod multi_connection;

#[cfg(test)]
mod tests;
