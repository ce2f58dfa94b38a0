//! CCID 2: TCP-like congestion control for DCCP (RFC 4341).
//!
//! A window controller counted in packets: the sender may send while
//! pipe < cwnd; Ack Vectors ([`AckFeedback`]) tell which packets arrived, were
//! ECN-marked or are missing; a packet is lost once NUMDUPACK packets sent after
//! it have been acknowledged; a congestion event halves cwnd at most once per
//! window of data; a transmit timeout (RFC 6298) resets cwnd to one packet. The
//! sender also controls the receiver's acknowledgement rate through the Ack
//! Ratio (RFC 4341 §6.1), from losses and marks on the receiver's own packets.
//!
//! | rule | where |
//! |---|---|
//! | send while pipe < cwnd (RFC 4341 §5) | [`Ccid2Sender::permission`](RateController::permission) |
//! | pipe accounting, NUMDUPACK loss inference (§5) | `Ccid2Sender::on_ack_feedback` |
//! | congestion events, halving, slow start, congestion avoidance (§5) | `congestion_event`, `grow` |
//! | RTT, RTO, backoff (§5, RFC 6298) | `rtt` module, [`RateController::on_timeout`] |
//! | idle and application-limited periods (§5.1, RFC 2861, RFC 5681 §4.1) | [`RateController::on_packet_sent`], [`RateController::on_application_limited`] |
//! | Data Dropped code 2, Slow Receiver (§5.2) | [`Ccid2Sender::on_receive_buffer_drop`], [`Ccid2Sender::on_slow_receiver`] |
//! | lost and marked DCCP-Acks, Ack Ratio (§6.1.1, §6.1.2) | `ack_ratio` module, [`Ccid2Sender::on_receiver_packet`] |
//!
//! # Driver contract
//! Besides the [`RateController`] calls, a DCCP connection using CCID 2:
//! - reports every packet it receives from the peer's half-connection
//!   (its sequence number, whether it carried data, whether it was ECN-marked)
//!   through [`Ccid2Sender::on_receiver_packet`], so that lost and marked
//!   DCCP-Acks can drive the Ack Ratio;
//! - after each call, sends a `Change R(Ack Ratio)` option (RFC 4340 §11.3)
//!   whenever [`Ccid2Sender::take_ack_ratio_change`] returns a value;
//! - passes sequence numbers as 64-bit values that increase with every packet
//!   sent (the 48-bit DCCP numbers extended, RFC 4340 §7.6), data or not.
//!
//! Non-data packets of the sender (DCCP-Ack, DCCP-Sync, …) need not be
//! reported: a sequence number at or below the greatest data sequence number
//! sent but not tracked is taken as such a packet, which RFC 4341 §5 lets count
//! towards NUMDUPACK ("the acknowledged packets following the hole may be
//! DCCP-Acks or other non-data packets").

use std::collections::VecDeque;
use std::time::Duration;

use crate::cc::{
    AckFeedback, AckState, Feedback, FeedbackMismatch, RateController, SendPermission,
};
use crate::time::Instant;
use crate::units::Rate;

mod ack_ratio;
mod config;

use crate::cc::rtt::RttEstimator;
use ack_ratio::AckRatioControl;
pub use config::{
    Ccid2Config, Ccid2ConfigError, SlowStartIncrease, DEFAULT_ACK_RATIO, MAX_NUMDUPACK, NUMDUPACK,
};

/// A packet from the receiver of this half-connection (RFC 4341 §6.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiverPacket {
    /// Its sequence number (64-bit, extended).
    pub seq: u64,
    /// Whether it carried application data (DCCP-Data, DCCP-DataAck); Ack
    /// Ratio reacts to marks on non-data packets only.
    pub carries_data: bool,
    /// Whether it arrived with ECN Congestion Experienced.
    pub ecn_marked: bool,
}

/// Counters of what the sender has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ccid2Stats {
    /// Data packets sent.
    pub packets_sent: u64,
    /// Data packets newly acknowledged as received (State 0 or 1).
    pub packets_acked: u64,
    /// Of those, ECN-marked (State 1).
    pub packets_ecn_marked: u64,
    /// Data packets inferred lost from NUMDUPACK later acknowledgements.
    pub packets_lost: u64,
    /// Congestion events that reduced cwnd (losses and marks).
    pub congestion_events: u64,
    /// Transmit timeouts.
    pub timeouts: u64,
    /// Lost or marked packets from the receiver (Ack Ratio congestion).
    pub reverse_congestion_signals: u64,
}

/// What the sender knows of one data packet it sent.
#[derive(Clone, Copy, Debug)]
struct SentPacket {
    seq: u64,
    sent_at: Instant,
    /// Neither acknowledged nor inferred lost yet (counted in pipe).
    outstanding: bool,
}

/// The CCID 2 sender (RFC 4341 §5, §6.1).
#[derive(Clone, Debug)]
pub struct Ccid2Sender {
    config: Ccid2Config,
    initial_window: u32,
    cwnd: u32,
    ssthresh: u32,
    pipe: u32,
    /// Newly acknowledged packets not yet turned into slow-start growth (0 or 1).
    slow_start_carry: u64,
    /// Packets acknowledged towards the next congestion-avoidance increase.
    avoidance_acked: u64,
    /// Packets sent and not yet forgotten, by increasing sequence number.
    sent: VecDeque<SentPacket>,
    greatest_sent: Option<u64>,
    /// The NUMDUPACK greatest sequence numbers acknowledged as received,
    /// greatest first (data or not, never above `greatest_sent`).
    greatest_acked: Vec<u64>,
    /// The greatest sequence number sent when cwnd was last reduced: losses of
    /// packets up to it belong to that congestion event (RFC 4341 §5).
    recovery_seq: Option<u64>,
    rtt: RttEstimator,
    /// An RTT sample needs an acknowledgement of a packet above this one: at
    /// most one sample per window of data (RFC 4341 §5).
    rtt_sample_after: Option<u64>,
    rto_deadline: Option<Instant>,
    last_send: Option<Instant>,
    application_limited: bool,
    ack_ratio: AckRatioControl,
    stats: Ccid2Stats,
}

impl Ccid2Sender {
    /// A sender in slow start with the initial window, started at `now`.
    pub fn new(config: &Ccid2Config, now: Instant) -> Self {
        // Nothing is timed from the start: the RTO timer starts with the
        // first packet sent (RFC 6298 §5.1).
        let _ = now;
        let config = config.sanitized();
        let initial_window = config.initial_window_packets();
        let rtt = RttEstimator::new(
            config.initial_rto,
            config.min_rto,
            config.max_rto,
            config.clock_granularity,
        );
        let ack_ratio = AckRatioControl::new(
            config.initial_ack_ratio,
            DEFAULT_ACK_RATIO,
            initial_window,
            config.ack_ratio_two_always_acceptable,
        );
        Ccid2Sender {
            initial_window,
            cwnd: initial_window,
            // RFC 4341 §5: "the ssthresh parameter is initialized to an
            // arbitrarily high value."
            ssthresh: u32::MAX,
            pipe: 0,
            slow_start_carry: 0,
            avoidance_acked: 0,
            sent: VecDeque::new(),
            greatest_sent: None,
            greatest_acked: Vec::with_capacity(config.numdupack as usize),
            recovery_seq: None,
            rtt,
            rtt_sample_after: None,
            rto_deadline: None,
            last_send: None,
            application_limited: false,
            ack_ratio,
            stats: Ccid2Stats::default(),
            config,
        }
    }

    /// The congestion window, in packets.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }

    /// The slow-start threshold, in packets (`u32::MAX` until the first reduction).
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    /// The sender's estimate of data packets in the network.
    pub fn pipe(&self) -> u32 {
        self.pipe
    }

    /// Whether the sender is in slow start (cwnd < ssthresh).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// The current retransmission timeout, with any backoff.
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    /// The round-trip time variation RTTVAR, once there is a sample.
    pub fn rttvar(&self) -> Option<Duration> {
        self.rtt.srtt().map(|_| self.rtt.rttvar())
    }

    /// The Ack Ratio the sender wants the receiver to use.
    pub fn ack_ratio(&self) -> u16 {
        self.ack_ratio.value()
    }

    /// The new Ack Ratio, if it changed since it was last taken (or differs
    /// from the RFC 4340 §11.3 default of 2 the receiver starts with); the
    /// connection then sends `Change R(Ack Ratio, value)`.
    pub fn take_ack_ratio_change(&mut self) -> Option<u16> {
        self.ack_ratio.take_change()
    }

    /// How many packets' state is held (bounded by `max_tracked_packets`).
    pub fn tracked_packets(&self) -> usize {
        self.sent.len()
    }

    /// Counters of what the sender has seen.
    pub fn stats(&self) -> Ccid2Stats {
        self.stats
    }

    /// The configuration in use (with out-of-range values brought into range).
    pub fn config(&self) -> &Ccid2Config {
        &self.config
    }

    /// A packet from the receiver arrived (RFC 4341 §6.1.1): losses among
    /// the receiver's packets and marks on its non-data packets raise the Ack
    /// Ratio (§6.1.2).
    pub fn on_receiver_packet(&mut self, now: Instant, packet: ReceiverPacket) {
        let congested = self.ack_ratio.on_receiver_packet(
            packet.seq,
            !packet.carries_data,
            packet.ecn_marked,
            self.config.numdupack,
            self.stats.packets_sent,
            self.cwnd,
        );
        if congested {
            self.stats.reverse_congestion_signals += 1;
        }
        self.update_ack_ratio(now);
    }

    /// The receiver reported `count` packets newly acknowledged with Data
    /// Dropped Drop Code 2, "receive buffer drop" (RFC 4341 §5.2): "The
    /// congestion window "cwnd" is reduced by one for each packet newly
    /// acknowledged as Drop Code 2, except that it is never reduced below one."
    pub fn on_receive_buffer_drop(&mut self, now: Instant, count: u32) {
        self.cwnd = self.cwnd.saturating_sub(count).max(1);
        self.exit_slow_start();
        self.update_ack_ratio(now);
    }

    /// The receiver sent a Slow Receiver option, or another relevant Data
    /// Dropped code (RFC 4341 §5.2): "The sender MUST exit slow start".
    pub fn on_slow_receiver(&mut self, now: Instant) {
        self.exit_slow_start();
        self.update_ack_ratio(now);
    }

    fn exit_slow_start(&mut self) {
        // ssthresh never below two (RFC 4341 §5); at cwnd = 1 congestion
        // avoidance would grow faster than slow start anyway.
        self.ssthresh = self.ssthresh.min(self.cwnd.max(2));
        self.slow_start_carry = 0;
    }

    /// Processes one Ack Vector (RFC 4341 §5, RFC 4340 §11.4).
    fn on_ack_feedback(&mut self, now: Instant, feedback: &AckFeedback) {
        let Some(greatest_sent) = self.greatest_sent else {
            return; // Nothing sent: nothing to acknowledge.
        };
        let lowest_tracked = self.sent.front().map_or(u64::MAX, |p| p.seq);
        let mut newest_acked: Option<SentPacket> = None;
        let mut grow_by: u64 = 0;
        let mut marked: Option<u64> = None;
        let mut newly_acked = false;

        // Runs go backwards from the Ack Number; each covers [low, high].
        let mut high = feedback.ack_number;
        for run in &feedback.runs {
            if run.length == 0 {
                continue; // Malformed; covers nothing.
            }
            let low = high.saturating_sub(run.length - 1);
            if run.state != AckState::NotReceived && low <= greatest_sent {
                // Never-sent sequence numbers (above greatest_sent) are ignored.
                let top = high.min(greatest_sent);
                self.note_acked_numbers(low, top);
                let first = self.sent.partition_point(|p| p.seq < low);
                for packet in self.sent.range_mut(first..) {
                    if packet.seq > top {
                        break;
                    }
                    if !packet.outstanding {
                        // RFC 4341 §5: "The sender MUST NOT decrement pipe
                        // more than once per data packet" — nor "again upon
                        // receiving acknowledgement of a packet previously
                        // inferred as lost".
                        continue;
                    }
                    // RFC 4341 §5: "The sender reduces pipe by 1 for each data
                    // packet newly acknowledged as received (Ack Vector State 0
                    // or State 1)".
                    packet.outstanding = false;
                    self.pipe = self.pipe.saturating_sub(1);
                    self.stats.packets_acked += 1;
                    newly_acked = true;
                    if newest_acked.is_none_or(|n| packet.seq > n.seq) {
                        newest_acked = Some(*packet);
                    }
                    if run.state == AckState::ReceivedEcnMarked {
                        self.stats.packets_ecn_marked += 1;
                        marked = marked.max(Some(packet.seq));
                    } else if self.recovery_seq.is_none_or(|r| packet.seq > r) {
                        // Only packets sent after the last reduction count
                        // towards growth: "a window of data acknowledged
                        // without lost or marked packets".
                        grow_by += 1;
                    }
                }
            }
            // Below what is tracked, a run can tell nothing new.
            match low.checked_sub(1) {
                Some(next) if next >= lowest_tracked => high = next,
                _ => break,
            }
        }

        let lost = self.infer_losses();
        // RFC 4341 §5: "For each congestion event, either indicated explicitly
        // as an Ack Vector State 1 (ECN-marked) acknowledgement or inferred via
        // "duplicate acknowledgements", cwnd is halved".
        let reduced = match lost.max(marked) {
            Some(seq) => self.congestion_event(seq, greatest_sent),
            None => false,
        };
        if !reduced && grow_by > 0 {
            self.grow(grow_by);
        }

        if let Some(packet) = newest_acked {
            // RFC 4341 §5: "The sender estimates the round-trip time at most
            // once per window of data and uses the TCP algorithms for
            // maintaining the average round-trip time, mean deviation, and
            // timeout value [RFC2988]." DCCP never retransmits, so the sample
            // is unambiguous (no Karn's rule needed).
            if self.rtt_sample_after.is_none_or(|after| packet.seq > after) {
                self.rtt
                    .on_sample(now.saturating_duration_since(packet.sent_at));
                self.rtt_sample_after = Some(greatest_sent);
            }
        }

        // RFC 6298 §5.2: "When all outstanding data has been acknowledged,
        // turn off the retransmission timer." §5.3: "When an ACK is received
        // that acknowledges new data, restart the retransmission timer".
        if self.pipe == 0 {
            self.rto_deadline = None;
        } else if newly_acked {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.forget_finished();
        self.update_ack_ratio(now);
    }

    /// Records acknowledged sequence numbers in [low, top] among the
    /// NUMDUPACK greatest ever acknowledged (only the top few can matter).
    fn note_acked_numbers(&mut self, low: u64, top: u64) {
        let keep = self.config.numdupack as usize;
        let mut seq = top;
        for _ in 0..keep {
            if self.greatest_acked.len() == keep
                && self.greatest_acked.last().is_some_and(|&l| seq <= l)
            {
                break; // Smaller than every kept number; the rest are smaller still.
            }
            if let Err(at) = self.greatest_acked.binary_search_by(|k| seq.cmp(k)) {
                self.greatest_acked.insert(at, seq);
                self.greatest_acked.truncate(keep);
            }
            if seq == low {
                break;
            }
            seq -= 1;
        }
    }

    /// Marks lost every outstanding packet with at least NUMDUPACK packets
    /// sent after it acknowledged; returns the greatest such sequence number.
    fn infer_losses(&mut self) -> Option<u64> {
        // RFC 4341 §5: "A packet P is inferred to be lost, rather than delayed,
        // when at least NUMDUPACK packets transmitted after P have been
        // acknowledged as received (Ack Vector State 0 or 1) by the receiver."
        if self.greatest_acked.len() < self.config.numdupack as usize {
            return None;
        }
        let threshold = *self.greatest_acked.last()?;
        let mut greatest_lost = None;
        for packet in self.sent.iter_mut() {
            if packet.seq >= threshold {
                break;
            }
            if packet.outstanding {
                // RFC 4341 §5: "The sender reduces pipe by 1 for each data
                // packet it can infer as lost".
                packet.outstanding = false;
                self.pipe = self.pipe.saturating_sub(1);
                self.stats.packets_lost += 1;
                greatest_lost = Some(packet.seq);
            }
        }
        greatest_lost
    }

    /// A loss or mark of packet `seq`; returns whether cwnd was reduced.
    fn congestion_event(&mut self, seq: u64, greatest_sent: u64) -> bool {
        // RFC 4341 §5: "two losses or marks are considered part of a single
        // congestion event when the second packet was sent before the loss or
        // mark of the first packet was detected."
        if self.recovery_seq.is_some_and(|r| seq <= r) {
            return false;
        }
        self.recovery_seq = Some(greatest_sent);
        // RFC 4341 §5: "cwnd is halved, then ssthresh is set to the new cwnd.
        // Cwnd is never reduced below one packet." and "When halved, cwnd and
        // ssthresh have their values rounded down, except that cwnd is never
        // less than one and ssthresh is never less than two."
        self.cwnd = (self.cwnd / 2).max(1);
        self.ssthresh = self.cwnd.max(2);
        self.slow_start_carry = 0;
        self.avoidance_acked = 0;
        self.stats.congestion_events += 1;
        true
    }

    /// Grows cwnd for `acked` newly acknowledged, unmarked packets.
    fn grow(&mut self, acked: u64) {
        // RFC 2861 (RFC 4341 §5.1): the congestion window should not be
        // increased while the application does not use it fully.
        if self.application_limited {
            return;
        }
        let max_window = self.config.max_window;
        if self.cwnd < self.ssthresh {
            let increase = match self.config.slow_start {
                SlowStartIncrease::Rfc4341 => {
                    // RFC 4341 §5: "increased by one packet for every two newly
                    // acknowledged data packets with Ack Vector State 0 (not
                    // ECN-marked), up to a maximum of Ack Ratio/2 packets per
                    // acknowledgement."
                    let total = self.slow_start_carry + acked;
                    let limit = u64::from(self.ack_ratio.value().div_ceil(2));
                    if total / 2 > limit {
                        self.slow_start_carry = 0;
                        limit
                    } else {
                        self.slow_start_carry = total % 2;
                        total / 2
                    }
                }
                SlowStartIncrease::PerAckedPacket => acked,
            };
            let increase = u32::try_from(increase).unwrap_or(u32::MAX);
            self.cwnd = self
                .cwnd
                .saturating_add(increase)
                .min(self.ssthresh)
                .min(max_window);
        } else {
            // RFC 4341 §5: "When cwnd >= ssthresh, the congestion window is
            // increased by one packet for every window of data acknowledged
            // without lost or marked packets."
            self.avoidance_acked = self.avoidance_acked.saturating_add(acked);
            while self.avoidance_acked >= u64::from(self.cwnd) && self.cwnd < max_window {
                self.avoidance_acked -= u64::from(self.cwnd);
                self.cwnd += 1;
            }
            if self.cwnd >= max_window {
                self.avoidance_acked = 0;
            }
        }
    }

    /// Drops the state of packets at the front that are no longer outstanding.
    fn forget_finished(&mut self) {
        while self.sent.front().is_some_and(|p| !p.outstanding) {
            self.sent.pop_front();
        }
    }

    fn update_ack_ratio(&mut self, now: Instant) {
        let rtt = self.rtt.srtt().unwrap_or(self.config.initial_rtt);
        self.ack_ratio.update(now, self.cwnd, rtt);
    }

    /// The transmit timeout expired with packets outstanding.
    fn transmit_timeout(&mut self, now: Instant) {
        // RFC 4341 §5: "After a timeout, the slow-start threshold is set to
        // cwnd/2, then cwnd is set to one packet." ssthresh "is never less
        // than two".
        self.ssthresh = (self.cwnd / 2).max(2);
        self.cwnd = 1;
        // RFC 4341 §5: "When a transmit timeout occurs, the sender sets pipe
        // to zero." Every outstanding packet is taken as lost and forgotten;
        // later acknowledgements of them change nothing.
        self.pipe = 0;
        self.sent.clear();
        self.recovery_seq = self.greatest_sent;
        self.slow_start_carry = 0;
        self.avoidance_acked = 0;
        // RFC 4341 §5: "The exponential backoff of the timer is exactly as in
        // TCP." The timer restarts with the next packet sent (RFC 6298 §5.1).
        self.rtt.back_off();
        self.rto_deadline = None;
        self.stats.timeouts += 1;
        self.update_ack_ratio(now);
    }
}

impl RateController for Ccid2Sender {
    fn name(&self) -> &'static str {
        "ccid2"
    }

    fn permission(&mut self, _now: Instant, _size_bytes: usize) -> SendPermission {
        // RFC 4341 §5: "The sender MAY send a data packet when pipe < cwnd but
        // MUST NOT send a data packet when pipe >= cwnd." No pacing: RFC 4341
        // §5 makes it optional ("Senders MAY use a form of rate-based pacing").
        if self.pipe < self.cwnd {
            SendPermission::Now
        } else {
            SendPermission::WindowFull
        }
    }

    fn on_packet_sent(&mut self, now: Instant, seq: u64, _size_bytes: usize) {
        if self.greatest_sent.is_some_and(|g| seq <= g) {
            // Sequence numbers increase with every packet (RFC 4340 §7.1); a
            // repeated or older one is a driver error and is not tracked.
            return;
        }
        // RFC 4341 §5.1: "[RFC2581] recommends that the TCP sender SHOULD
        // slow-start after an idle period, where an idle period is defined as a
        // period exceeding the timeout interval." As in RFC 5681 §4.1, cwnd
        // restarts from min(cwnd, initial window); ssthresh keeps 3/4 of the
        // old cwnd (RFC 2861 §3) so that slow start climbs back.
        if self.config.restart_after_idle
            && self.pipe == 0
            && self
                .last_send
                .is_some_and(|last| now.saturating_duration_since(last) > self.rtt.rto())
        {
            let three_quarters = u32::try_from(u64::from(self.cwnd) * 3 / 4).unwrap_or(u32::MAX);
            self.ssthresh = self.ssthresh.max(three_quarters).max(2);
            self.cwnd = self.cwnd.min(self.initial_window);
            self.slow_start_carry = 0;
            self.avoidance_acked = 0;
        }
        self.last_send = Some(now);
        self.greatest_sent = Some(seq);

        if self.sent.len() >= self.config.max_tracked_packets {
            // Bounded state: forget the oldest packet. Only a driver that
            // ignores `permission` gets here (pipe ≤ cwnd ≤ max_window).
            if let Some(oldest) = self.sent.pop_front() {
                if oldest.outstanding {
                    self.pipe = self.pipe.saturating_sub(1);
                }
            }
            self.forget_finished();
        }
        self.sent.push_back(SentPacket {
            seq,
            sent_at: now,
            outstanding: true,
        });
        // RFC 4341 §5: "Every data packet sent increases pipe by 1."
        self.pipe = self.pipe.saturating_add(1);
        self.stats.packets_sent += 1;
        self.ack_ratio.on_data_sent();
        if self.pipe >= self.cwnd {
            // The window is in full use: not application-limited (RFC 2861).
            self.application_limited = false;
        }
        // RFC 6298 §5.1: "Every time a packet containing data is sent ... if
        // the timer is not running, start it running so that it will expire
        // after RTO seconds".
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.update_ack_ratio(now);
    }

    fn on_application_limited(&mut self, _now: Instant) {
        // RFC 4341 §5.1: "[RFC2861] essentially suggests that TCP's congestion
        // window not be increased during application-limited periods when the
        // congestion window is not being fully utilized." Growth stops until
        // the window is next filled; RFC 2861's gradual decay of an unused
        // window is not implemented (the idle restart covers long silences).
        if self.pipe < self.cwnd {
            self.application_limited = true;
        }
    }

    fn on_feedback(&mut self, now: Instant, feedback: &Feedback) -> Result<(), FeedbackMismatch> {
        match feedback {
            Feedback::Ack(ack) => {
                self.on_ack_feedback(now, ack);
                Ok(())
            }
            other => Err(FeedbackMismatch {
                controller: "ccid2",
                got: other.kind(),
            }),
        }
    }

    fn on_timeout(&mut self, now: Instant) {
        if let Some(deadline) = self.rto_deadline {
            if now >= deadline && self.pipe > 0 {
                self.transmit_timeout(now);
            }
        }
        self.update_ack_ratio(now);
    }

    fn next_timeout(&self) -> Option<Instant> {
        self.rto_deadline.filter(|_| self.pipe > 0)
    }

    fn allowed_rate(&self) -> Rate {
        // cwnd·s/R, with the initial RTT before the first sample.
        let rtt = self.rtt.srtt().unwrap_or(self.config.initial_rtt);
        let rtt_secs = rtt.as_secs_f64().max(1e-6);
        let window_bytes = f64::from(self.cwnd) * self.config.segment_size as f64;
        Rate::from_bytes_per_sec(window_bytes / rtt_secs)
    }

    fn rtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
}

#[cfg(test)]
mod property_tests;
#[cfg(test)]
mod simulation_tests;
#[cfg(test)]
mod tests;
