//! A fixed-rate sender for a dedicated bearer: paces packets at a rate set
//! by configuration and never changes it, whatever the receiver reports.
//!
//! Paper 003 §1 (scenario B, Fig. 1) splits the path at a proxy: TFRC on the
//! shared, wired part, and after the proxy a WCDMA streaming bearer that "is
//! solely dedicated to RTP traffic and provides a guaranteed quality of
//! service … in terms of bit-rate and delay jitter … Thus no congestion
//! control for this part of the connection is required"; §4 gives the
//! bearer 64 kbit/s. The proxy's re-sending side runs this controller: it
//! sends the bearer's rate, no more (the bearer would queue and drop) and no
//! less (the bearer's capacity is reserved whether it is used or not).
//!
//! Pacing: packet k + 1 may leave at t_nom(k) + s_k/rate, s_k the bytes
//! packet k counts for (its size plus
//! [`FixedRateConfig::per_packet_overhead`]). Unlike TFRC (RFC 5348 §4.6)
//! nothing leaves before its nominal time: a bearer of fixed rate has no
//! slack for early packets. A sender that wakes late may catch up by at most
//! [`FixedRateConfig::max_catch_up`] of credit, so that timer lateness does
//! not lower the mean rate while bursts stay bounded.
//!
//! Feedback: DCCP runs this controller as the experimental CCID 249
//! ([`Ccid::FixedRateExperimental`](crate::conn::Ccid)) with CCID 3's
//! receiver, so the receiver still reports the loss event rate and receive
//! rate (RFC 4342 §8). The sender takes its RTT from that feedback (for the
//! statistics and the CCVal window counter) and records p and X_recv; none
//! of it changes the rate. Losses are ignored on purpose: on a dedicated
//! bearer they are channel errors, not congestion.

use std::time::Duration;

use crate::cc::{
    ControllerConfig, Feedback, FeedbackMismatch, RateController, SendPermission, TfrcFeedback,
};
use crate::time::Instant;
use crate::units::Rate;

/// The slowest rate a fixed-rate sender paces at: one byte per second
/// (a zero rate would never send, and is refused where users write rates).
pub const MIN_FIXED_RATE_BYTES_PER_SEC: f64 = 1.0;

/// Configuration of a [`FixedRateSender`].
#[derive(Clone, Debug, PartialEq)]
pub struct FixedRateConfig {
    /// The rate packets are paced at. Default: 64 kbit/s, paper 003's
    /// dedicated WCDMA streaming bearer (§4). Rates below
    /// [`MIN_FIXED_RATE_BYTES_PER_SEC`] are raised to it;
    /// [`Rate::INFINITY`] sends without pacing.
    pub rate: Rate,
    /// Bytes added to every packet's size when pacing, for a bearer whose
    /// rate counts headers the controller does not see (for example 20 + 8
    /// for IPv4 and UDP). Default 0: the rate counts the bytes the
    /// connection hands the controller, as TFRC's X does.
    pub per_packet_overhead: usize,
    /// How far behind its schedule the sender may fall and still catch up
    /// by sending early (after a late wake-up). Default 1 ms, TFRC's
    /// ([`TfrcConfig::max_catch_up`](crate::cc::tfrc::TfrcConfig)).
    pub max_catch_up: Duration,
    /// q, the filter constant of the smoothed RTT (RFC 5348 §4.3's "a
    /// typical value for q is 0.9"); the RTT only feeds statistics and the
    /// window counter.
    pub rtt_filter: f64,
}

impl Default for FixedRateConfig {
    fn default() -> Self {
        FixedRateConfig {
            rate: Rate::from_bits_per_sec(64_000.0),
            per_packet_overhead: 0,
            max_catch_up: Duration::from_millis(1),
            rtt_filter: 0.9,
        }
    }
}

impl ControllerConfig for FixedRateConfig {
    fn build(&self, now: Instant) -> Box<dyn RateController> {
        Box::new(FixedRateSender::new(self.clone(), now))
    }
}

/// The fixed-rate sender (see the [module](self) documentation).
#[derive(Clone, Debug)]
pub struct FixedRateSender {
    config: FixedRateConfig,
    /// The rate paced at, bytes/s, at least the minimum.
    bytes_per_sec: f64,
    /// The nominal send time of the last packet.
    last_nominal: Option<Instant>,
    /// The bytes the last packet counted for.
    last_bytes: f64,
    /// The smoothed RTT, seconds, once feedback gave a sample.
    rtt: Option<f64>,
    /// The loss event rate p the receiver last reported.
    p: f64,
    /// The receive rate the receiver last reported.
    receive_rate: Rate,
}

impl FixedRateSender {
    /// A sender at `config.rate`, started at `_now` (nothing depends on the
    /// start time: the first packet may leave at once).
    pub fn new(config: FixedRateConfig, _now: Instant) -> FixedRateSender {
        let bytes_per_sec = config
            .rate
            .bytes_per_sec()
            .max(MIN_FIXED_RATE_BYTES_PER_SEC);
        FixedRateSender {
            config,
            bytes_per_sec,
            last_nominal: None,
            last_bytes: 0.0,
            rtt: None,
            p: 0.0,
            receive_rate: Rate::ZERO,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &FixedRateConfig {
        &self.config
    }

    /// The loss event rate p the receiver last reported (not acted on).
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }

    /// The receive rate the receiver last reported (not acted on).
    pub fn receive_rate(&self) -> Rate {
        self.receive_rate
    }

    /// The gap after a packet of `bytes`: bytes/rate.
    fn gap(&self, bytes: f64) -> Duration {
        Duration::try_from_secs_f64(bytes / self.bytes_per_sec).unwrap_or(Duration::MAX)
    }

    fn counted_bytes(&self, size_bytes: usize) -> f64 {
        size_bytes.saturating_add(self.config.per_packet_overhead) as f64
    }

    /// t_nom of the next packet.
    fn next_nominal(&self) -> Option<Instant> {
        self.last_nominal.map(|t| t + self.gap(self.last_bytes))
    }

    /// The RTT the handshake measured, as a first sample.
    pub fn set_initial_rtt(&mut self, rtt: Duration) {
        if self.rtt.is_none() && !rtt.is_zero() {
            self.rtt = Some(rtt.as_secs_f64());
        }
    }

    fn handle_feedback(&mut self, now: Instant, feedback: &TfrcFeedback) {
        // RFC 5348 §4.3 step 1: R_sample = (t_now - t_recvdata) - t_delay;
        // step 2: R = q*R + (1-q)*R_sample. Only the RTT estimate is kept;
        // the rate does not follow the feedback.
        let sample = now
            .checked_duration_since(feedback.echoed_send_time)
            .and_then(|d| d.checked_sub(feedback.receiver_delay))
            .map(|d| d.as_secs_f64())
            .filter(|&d| d > 0.0);
        if let Some(sample) = sample {
            let q = self.config.rtt_filter;
            self.rtt = Some(match self.rtt {
                None => sample,
                Some(r) => q * r + (1.0 - q) * sample,
            });
        }
        if feedback.loss_event_rate.is_finite() {
            self.p = feedback.loss_event_rate.clamp(0.0, 1.0);
        }
        self.receive_rate = feedback.receive_rate;
    }
}

impl RateController for FixedRateSender {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn permission(&mut self, now: Instant, _size_bytes: usize) -> SendPermission {
        match self.next_nominal() {
            Some(nominal) if now < nominal => SendPermission::At(nominal),
            _ => SendPermission::Now,
        }
    }

    fn on_packet_sent(&mut self, now: Instant, _seq: u64, size_bytes: usize) {
        let nominal = match self.next_nominal() {
            None => now,
            // Sent before its time (the driver did not ask): keep the
            // schedule, so the mean rate holds.
            Some(nominal) if nominal > now => nominal,
            // Behind schedule: at most `max_catch_up` of credit.
            Some(nominal) => nominal.max(now - self.config.max_catch_up),
        };
        self.last_nominal = Some(nominal);
        self.last_bytes = self.counted_bytes(size_bytes);
    }

    fn on_application_limited(&mut self, _now: Instant) {
        // Idle time earns no credit beyond `max_catch_up` (on_packet_sent).
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

    fn on_timeout(&mut self, _now: Instant) {}

    fn next_timeout(&self) -> Option<Instant> {
        // No nofeedback timer: the rate does not depend on feedback.
        None
    }

    fn allowed_rate(&self) -> Rate {
        Rate::from_bytes_per_sec(self.bytes_per_sec)
    }

    fn rtt(&self) -> Option<Duration> {
        self.rtt.and_then(|r| Duration::try_from_secs_f64(r).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::AckFeedback;

    fn sender(bits_per_sec: f64) -> FixedRateSender {
        FixedRateSender::new(
            FixedRateConfig {
                rate: Rate::from_bits_per_sec(bits_per_sec),
                ..FixedRateConfig::default()
            },
            Instant::ZERO,
        )
    }

    /// Sends whenever allowed, as a driver that wakes exactly on time does,
    /// and returns the send times.
    fn send_times(sender: &mut FixedRateSender, packets: usize, size: usize) -> Vec<Instant> {
        let mut now = Instant::ZERO;
        let mut times = Vec::new();
        for seq in 0..packets as u64 {
            if let SendPermission::At(at) = sender.permission(now, size) {
                assert!(at > now);
                now = at;
            }
            assert_eq!(sender.permission(now, size), SendPermission::Now);
            sender.on_packet_sent(now, seq, size);
            times.push(now);
        }
        times
    }

    #[test]
    fn paces_exactly_s_over_rate() {
        // 1000 bytes at 64 kbit/s = 8000 B/s: 125 ms apart.
        let mut s = sender(64_000.0);
        let times = send_times(&mut s, 20, 1000);
        for pair in times.windows(2) {
            assert_eq!(pair[1] - pair[0], Duration::from_millis(125));
        }
        // 1250 bytes at 2 Mbit/s: 5 ms apart.
        let mut s = sender(2e6);
        let times = send_times(&mut s, 10, 1250);
        for pair in times.windows(2) {
            assert_eq!(pair[1] - pair[0], Duration::from_millis(5));
        }
    }

    #[test]
    fn the_gap_follows_each_packets_size_and_overhead() {
        let mut s = FixedRateSender::new(
            FixedRateConfig {
                rate: Rate::from_bytes_per_sec(1000.0),
                per_packet_overhead: 28,
                ..FixedRateConfig::default()
            },
            Instant::ZERO,
        );
        let t0 = Instant::ZERO;
        assert_eq!(s.permission(t0, 472), SendPermission::Now);
        s.on_packet_sent(t0, 0, 472);
        // (472 + 28) bytes at 1000 B/s.
        assert_eq!(
            s.permission(t0, 100),
            SendPermission::At(t0 + Duration::from_millis(500))
        );
    }

    #[test]
    fn loss_and_feedback_do_not_change_the_rate() {
        let mut s = sender(1e6);
        let now = Instant::ZERO + Duration::from_secs(1);
        s.on_packet_sent(Instant::ZERO, 0, 1000);
        let feedback = Feedback::Tfrc(TfrcFeedback {
            echoed_send_time: Instant::ZERO,
            receiver_delay: Duration::from_millis(10),
            receive_rate: Rate::from_bits_per_sec(1e3),
            loss_event_rate: 0.5,
            highest_seq: 0,
        });
        s.on_feedback(now, &feedback).unwrap();
        s.on_timeout(now);
        assert_eq!(s.allowed_rate().bits_per_sec(), 1e6);
        assert_eq!(s.loss_event_rate(), 0.5);
        assert_eq!(s.receive_rate().bits_per_sec(), 1e3);
        assert_eq!(s.rtt(), Some(Duration::from_millis(990)));
        assert_eq!(s.next_timeout(), None);
        let ack = Feedback::Ack(AckFeedback {
            ack_number: 0,
            runs: vec![],
        });
        assert!(s.on_feedback(now, &ack).is_err());
    }

    #[test]
    fn a_late_wake_up_catches_up_at_most_max_catch_up() {
        let mut s = sender(8e6); // 1 MB/s: 1000 bytes every 1 ms
        s.on_packet_sent(Instant::ZERO, 0, 1000);
        // Wake 10 ms late: the credit is 1 ms, so one packet may follow at
        // once and the next 1 ms after the first.
        let late = Instant::ZERO + Duration::from_millis(11);
        assert_eq!(s.permission(late, 1000), SendPermission::Now);
        s.on_packet_sent(late, 1, 1000);
        assert_eq!(s.permission(late, 1000), SendPermission::Now);
        s.on_packet_sent(late, 2, 1000);
        assert_eq!(
            s.permission(late, 1000),
            SendPermission::At(late + Duration::from_millis(1))
        );
    }

    #[test]
    fn a_zero_rate_is_raised_to_the_minimum_and_infinity_does_not_pace() {
        let mut s = sender(0.0);
        s.on_packet_sent(Instant::ZERO, 0, 2);
        assert_eq!(
            s.permission(Instant::ZERO, 2),
            SendPermission::At(Instant::ZERO + Duration::from_secs(2))
        );
        let mut s = FixedRateSender::new(
            FixedRateConfig {
                rate: Rate::INFINITY,
                ..FixedRateConfig::default()
            },
            Instant::ZERO,
        );
        s.on_packet_sent(Instant::ZERO, 0, 1000);
        assert_eq!(s.permission(Instant::ZERO, 1000), SendPermission::Now);
    }
}
