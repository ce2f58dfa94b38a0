//! The sender: RFC 5681 congestion control (NewReno, or CUBIC per RFC
//! 9438), RFC 6582 fast recovery or RFC 6675 SACK-based loss recovery
//! (`sender/sack_recovery.rs`), RFC 9406 HyStart++, RFC 6298
//! retransmission timer, RFC 3168 §6.1.2 reaction to ECN-Echo.

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_proto::time::Instant;

use super::{
    Ack, CongestionControl, Cubic, FullAckCwnd, HyStart, HyStartPhase, RttEstimator, Scoreboard,
    Segment, SlowStart, TcpConfig, TcpConfigError,
};

mod sack_recovery;
mod window;

/// Which congestion-control phase the sender is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionState {
    /// `cwnd < ssthresh` (RFC 5681 §3.1).
    SlowStart,
    /// `cwnd >= ssthresh` (RFC 5681 §3.1).
    CongestionAvoidance,
    /// Between fast retransmit and the full ACK (RFC 6582 §3.2), or the
    /// ACK of RecoveryPoint (RFC 6675 §5).
    FastRecovery,
}

/// One transmitted byte range, kept for Karn-safe RTT sampling.
#[derive(Clone, Copy, Debug)]
struct SentRecord {
    start: u64,
    end: u64,
    sent_at: Instant,
    retransmitted: bool,
}

/// A TCP bulk sender: NewReno or CUBIC, with or without SACK.
///
/// Driver contract: call [`poll_transmit`](Self::poll_transmit) until it
/// returns `None`; feed each arriving [`Ack`] to [`on_ack`](Self::on_ack) and
/// call [`on_timeout`](Self::on_timeout) when [`next_timeout`](Self::next_timeout)
/// is due; poll again after every input.
///
/// Timer variant without SACK: "Impatient" (RFC 6582 §4): the
/// retransmission timer is reset on the first partial ACK of a recovery
/// only, so a window with many losses ends in a timeout rather than one
/// hole repaired per RTT for ever. With SACK every ACK of new data restarts
/// it (RFC 6298 §5.3), as RFC 6675 repairs several holes per RTT.
#[derive(Clone, Debug)]
pub struct TcpSender {
    config: TcpConfig,
    /// Oldest unacknowledged byte (SND.UNA).
    snd_una: u64,
    /// Next byte to send (SND.NXT); moves back to `snd_una` after a timeout.
    snd_nxt: u64,
    /// One past the highest byte ever sent.
    snd_max: u64,
    /// One past the last byte of the transfer (`u64::MAX` when unlimited).
    limit: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover`, stored exclusive: one past the highest byte sent
    /// when recovery (or a timeout) began; `None` before the first.
    recover: Option<u64>,
    partial_ack_seen: bool,
    /// A hole to retransmit ahead of any new data.
    pending_retransmit: Option<u64>,
    /// RFC 3465 bytes_acked counter for congestion avoidance.
    bytes_acked_ca: u64,
    /// `snd_una` at the last timeout, to tell a repeated timeout of the same
    /// segment from a new one (RFC 5681 §3.1, eq. 4 note).
    last_timeout_una: Option<u64>,
    rtt: RttEstimator,
    rto_deadline: Option<Instant>,
    sent: VecDeque<SentRecord>,
    segments_sent: u64,
    retransmissions: u64,
    fast_retransmits: u64,
    timeouts: u64,
    /// RFC 3168 §6.1.2: one past the highest byte sent at the last window
    /// reduction; no ECE reduces the window again until it is acknowledged.
    ecn_recover: Option<u64>,
    /// RFC 3168 §6.1.2: the window was reduced; set CWR on the next new
    /// data segment.
    cwr_pending: bool,
    ece_acks: u64,
    ecn_reductions: u64,
    /// CUBIC's state, with [`CongestionControl::Cubic`].
    cubic: Option<Cubic>,
    /// HyStart++'s state while the initial slow start lasts.
    hystart: Option<HyStart>,
    /// The SACK scoreboard, with [`TcpConfig::sack`].
    scoreboard: Option<Scoreboard>,
    /// RFC 6675 HighRxt, exclusive: one past the highest byte retransmitted
    /// in this recovery.
    high_rxt: u64,
    /// RFC 6675 RescueRxt, exclusive; `None` is "undefined".
    rescue_rxt: Option<u64>,
}

impl TcpSender {
    /// A sender that starts its transfer at `now`.
    pub fn new(config: TcpConfig, now: Instant) -> Result<Self, TcpConfigError> {
        config.validate()?;
        let _ = now; // Nothing is sent before the first poll.
        let rtt = RttEstimator::new(
            config.initial_rto,
            config.min_rto,
            config.max_rto,
            config.clock_granularity,
        );
        Ok(TcpSender {
            // RFC 5681 §3.1: "IW, the initial value of cwnd"
            cwnd: config.initial_window_bytes(),
            ssthresh: config.initial_ssthresh,
            limit: config.bytes_to_send.unwrap_or(u64::MAX),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_ack_seen: false,
            pending_retransmit: None,
            bytes_acked_ca: 0,
            last_timeout_una: None,
            rtt,
            rto_deadline: None,
            sent: VecDeque::new(),
            segments_sent: 0,
            retransmissions: 0,
            fast_retransmits: 0,
            timeouts: 0,
            ecn_recover: None,
            cwr_pending: false,
            ece_acks: 0,
            ecn_reductions: 0,
            cubic: match config.congestion_control {
                CongestionControl::NewReno => None,
                CongestionControl::Cubic(cubic) => Some(Cubic::new(cubic)),
            },
            hystart: (config.slow_start == SlowStart::HyStartPlusPlus).then(HyStart::new),
            scoreboard: config.sack.then(Scoreboard::new),
            high_rxt: 0,
            rescue_rxt: None,
            config,
        })
    }

    // ---- getters ----

    /// Congestion window in bytes.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// Slow-start threshold in bytes.
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// Smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }

    /// Current retransmission timeout, backoff included.
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    /// The RTT estimator (sample count, mean sample, backoff).
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Bytes cumulatively acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una
    }

    /// Bytes sent and not yet acknowledged, counted from `SND.NXT`
    /// (`SND.NXT - SND.UNA`, the FlightSize of RFC 5681 outside go-back-N).
    pub fn bytes_in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Segments sent, retransmissions included.
    pub fn segments_sent(&self) -> u64 {
        self.segments_sent
    }

    /// Segments sent that carried some byte already sent before.
    pub fn retransmissions(&self) -> u64 {
        self.retransmissions
    }

    /// Fast retransmits (entries into fast recovery).
    pub fn fast_retransmits(&self) -> u64 {
        self.fast_retransmits
    }

    /// Retransmission-timer expiries.
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }

    /// ACKs taken with the ECN-Echo flag (RFC 3168 §6.1.2).
    pub fn ece_acks(&self) -> u64 {
        self.ece_acks
    }

    /// Window reductions in response to ECN-Echo (at most one per window
    /// of data).
    pub fn ecn_reductions(&self) -> u64 {
        self.ecn_reductions
    }

    /// Congestion-control phase.
    pub fn state(&self) -> CongestionState {
        if self.in_recovery {
            CongestionState::FastRecovery
        } else if self.cwnd < self.ssthresh {
            CongestionState::SlowStart
        } else {
            CongestionState::CongestionAvoidance
        }
    }

    /// Appends `bytes` to a byte-limited transfer: the application wrote
    /// more, and the stream's end moves on (an unlimited transfer stays
    /// unlimited). New data goes out as the window allows, as after any
    /// ACK; the model has no restart window after idle (RFC 5681 §4.1) nor
    /// congestion window validation (RFC 7661).
    pub fn append(&mut self, bytes: u64) {
        self.limit = self.limit.saturating_add(bytes);
    }

    /// One past the last byte the application has written (`u64::MAX` for
    /// an unlimited transfer).
    pub fn bytes_written(&self) -> u64 {
        self.limit
    }

    /// Whether a byte-limited transfer has been fully acknowledged.
    pub fn is_finished(&self) -> bool {
        self.snd_una >= self.limit
    }

    /// The configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.config
    }

    /// CUBIC's state, with [`CongestionControl::Cubic`].
    pub fn cubic(&self) -> Option<&Cubic> {
        self.cubic.as_ref()
    }

    /// HyStart++'s phase, with [`SlowStart::HyStartPlusPlus`].
    pub fn hystart_phase(&self) -> Option<HyStartPhase> {
        self.hystart.as_ref().map(HyStart::phase)
    }

    /// The SACK scoreboard, with [`TcpConfig::sack`].
    pub fn scoreboard(&self) -> Option<&Scoreboard> {
        self.scoreboard.as_ref()
    }

    // ---- outputs ----

    /// When [`on_timeout`](Self::on_timeout) must next be called.
    pub fn next_timeout(&self) -> Option<Instant> {
        self.rto_deadline
    }

    /// The next segment the window allows: a pending retransmission first,
    /// then new data (or go-back-N data after a timeout).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        let mss = self.config.mss;
        // Fast retransmit / partial-ACK retransmission: sent regardless of
        // cwnd (RFC 5681 §3.2 step 4, RFC 6582 §3.2 step 5).
        if let Some(seq) = self.pending_retransmit.take() {
            if seq >= self.snd_una && seq < self.snd_max {
                let len = self.hole_len(seq);
                return Some(self.emit(now, seq, len));
            }
        }
        if self.scoreboard.is_some() {
            if self.in_recovery {
                // RFC 6675 §5 step (C): transmit while cwnd - pipe >= 1 SMSS.
                return self.poll_sack_recovery(now);
            }
            // Go-back-N after a timeout skips what was SACKed since.
            self.skip_sacked();
        }
        if self.snd_nxt >= self.limit {
            return None;
        }
        let len = if self.scoreboard.is_some() && self.snd_nxt < self.snd_max {
            self.hole_len(self.snd_nxt).min(self.limit - self.snd_nxt)
        } else {
            mss.min(self.limit - self.snd_nxt)
        };
        // ns-2's `window()`: min(cwnd, window_); the cap also bounds the
        // window fast recovery inflates (RFC 5681 §3.2 step 4).
        let window = self.cwnd.min(self.max_window());
        if self.bytes_in_flight().saturating_add(len) > window {
            return None;
        }
        let seq = self.snd_nxt;
        let segment = self.emit(now, seq, len);
        self.snd_nxt = segment.end();
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(segment)
    }

    fn emit(&mut self, now: Instant, seq: u64, len: u64) -> Segment {
        let end = seq.saturating_add(len);
        let is_retransmission = seq < self.snd_max;
        if is_retransmission {
            // Karn's rule bookkeeping: every record overlapping a resent byte
            // can no longer give an RTT sample.
            let first = self.sent.partition_point(|r| r.end <= seq);
            for record in self.sent.iter_mut().skip(first) {
                if record.start >= end {
                    break;
                }
                record.retransmitted = true;
            }
            self.retransmissions += 1;
        }
        if end > self.snd_max {
            self.sent.push_back(SentRecord {
                start: seq.max(self.snd_max),
                end,
                sent_at: now,
                retransmitted: is_retransmission,
            });
        }
        // RFC 6298 §5.1: "Every time a packet containing data is sent
        // (including a retransmission), if the timer is not running, start it
        // running so that it will expire after RTO seconds".
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.segments_sent += 1;
        // RFC 3168 §6.1.2: "the TCP sender sets the CWR flag in the TCP
        // header of the first new data packet sent after the window
        // reduction".
        let cwr = self.config.ecn && !is_retransmission && std::mem::take(&mut self.cwr_pending);
        Segment {
            seq,
            len,
            is_retransmission,
            sent_at: now,
            cwr,
        }
    }

    // ---- inputs ----

    /// Processes a cumulative ACK. ACKs for data never sent and ACKs older
    /// than `SND.UNA` are ignored.
    pub fn on_ack(&mut self, now: Instant, ack: &Ack) {
        let ackno = ack.cumulative;
        if ackno > self.snd_max || ackno < self.snd_una {
            return;
        }
        if let Some(board) = self.scoreboard.as_mut() {
            // RFC 6675 §3 "Update ()" with every ACK's SACK blocks.
            board.update(ackno, self.snd_max, ack.sack_blocks());
        }
        if ack.ece && self.config.ecn {
            self.ece_acks += 1;
            self.on_ecn_echo(now);
        }
        if ackno == self.snd_una {
            // RFC 5681 §2 DUPLICATE ACKNOWLEDGMENT: (b) "there is outstanding
            // data" and (d) the ack number equals the greatest one received.
            if self.snd_una < self.snd_max {
                self.on_duplicate_ack();
            }
            return;
        }
        let acked = ackno - self.snd_una;
        let rtt_sample = self.take_rtt_sample(now, ackno);
        self.snd_una = ackno;
        self.snd_nxt = self.snd_nxt.max(ackno);
        if self.in_recovery {
            if self.recover.is_some_and(|recover| ackno < recover) {
                if self.scoreboard.is_some() {
                    // RFC 6675 §5 (B): the scoreboard is updated; the pipe
                    // is recomputed at the next poll. RFC 6298 §5.3
                    // restarts the timer.
                    self.restart_timer(now);
                } else {
                    self.on_partial_ack(now, acked);
                }
                return;
            }
            if self.scoreboard.is_some() {
                // RFC 6675 §5 (A): "An incoming cumulative ACK for a
                // sequence number greater than RecoveryPoint signals the end
                // of loss recovery"; cwnd stays at ssthresh (step 4.2), as
                // it was never inflated.
                self.in_recovery = false;
                self.bytes_acked_ca = 0;
                self.dupacks = 0;
                self.restart_timer(now);
                return;
            }
            // RFC 6582 §3.2 step 6, full acknowledgment: "Set cwnd to either
            // (1) min (ssthresh, max(FlightSize, SMSS) + SMSS) or (2) ssthresh
            // ... Exit the fast recovery procedure."
            let mss = self.config.mss;
            let flight = self.snd_max - self.snd_una;
            self.cwnd = match self.config.full_ack_cwnd {
                FullAckCwnd::MinFlightPlusMss => self.ssthresh.min(flight.max(mss) + mss),
                FullAckCwnd::Ssthresh => self.ssthresh,
            }
            .max(mss);
            self.in_recovery = false;
            self.bytes_acked_ca = 0;
        } else if !(ack.ece && self.config.ecn) {
            // RFC 3168 §6.1.2: "The sender SHOULD NOT increase the congestion
            // window in response to the receipt of an ECN-Echo ACK packet."
            self.grow_cwnd(now, acked, rtt_sample);
        }
        self.dupacks = 0;
        self.restart_timer(now);
    }

    fn on_duplicate_ack(&mut self) {
        let mss = self.config.mss;
        if self.in_recovery {
            if self.scoreboard.is_none() {
                // RFC 6582 §3.2 step 3: "For each additional duplicate ACK
                // received (after the third), increment cwnd by SMSS."
                self.cwnd = self.cwnd.saturating_add(mss);
            }
            // RFC 6675 §5 (B): the scoreboard took the ACK's blocks.
            return;
        }
        self.dupacks = self.dupacks.saturating_add(1);
        if self.scoreboard.is_some() {
            // RFC 6675 §5: enter recovery once DupAcks >= DupThresh, or
            // (step 2) earlier when IsLost (HighACK + 1).
            if self.dupacks < self.config.dupack_threshold && !self.head_is_lost() {
                return;
            }
        } else if self.dupacks != self.config.dupack_threshold {
            return;
        }
        // RFC 6582 §3.2 step 2: "When the third duplicate ACK is received, the
        // TCP sender first checks the value of recover to see if the
        // Cumulative Acknowledgment field covers more than recover. If so, the
        // value of recover is incremented to the value of the highest sequence
        // number transmitted ... If not, the TCP does not enter fast
        // retransmit and does not reset ssthresh." (`recover` is exclusive
        // here, so "covers more than" is `>=`.)
        if self.recover.is_some_and(|recover| self.snd_una < recover) {
            return;
        }
        self.recover = Some(self.snd_max);
        // RFC 5681 §3.2 step 2, eq. 4: "ssthresh = max (FlightSize / 2, 2*SMSS)"
        // — unless an ECN-Echo already reduced it for this window of data
        // (RFC 3168 §6.1.2: "reduced only once in response to a series of
        // dropped and/or CE packets from a single window of data").
        let flight = self.snd_max - self.snd_una;
        if self.ecn_recover.is_none_or(|r| self.snd_una >= r) {
            self.ssthresh = self.reduced_ssthresh(self.cwnd, flight);
        }
        self.note_window_reduction();
        if self.scoreboard.is_some() {
            self.enter_sack_recovery();
            return;
        }
        // RFC 5681 §3.2 step 3: "The lost segment starting at SND.UNA MUST be
        // retransmitted and cwnd set to ssthresh plus 3*SMSS."
        self.pending_retransmit = Some(self.snd_una);
        self.cwnd = self
            .ssthresh
            .saturating_add(u64::from(self.config.dupack_threshold) * mss);
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.fast_retransmits += 1;
    }

    fn on_partial_ack(&mut self, now: Instant, acked: u64) {
        let mss = self.config.mss;
        // RFC 6582 §3.2 step 5: "Retransmit the first unacknowledged segment.
        // Deflate the congestion window by the amount of new data
        // acknowledged by the Cumulative Acknowledgment field. If the partial
        // ACK acknowledges at least one SMSS of new data, then add back SMSS
        // bytes to the congestion window."
        self.pending_retransmit = Some(self.snd_una);
        self.cwnd = self.cwnd.saturating_sub(acked);
        if acked >= mss {
            self.cwnd = self.cwnd.saturating_add(mss);
        }
        self.cwnd = self.cwnd.max(mss);
        // RFC 6582 §3.2 step 5: "For the first partial ACK that arrives during
        // fast recovery, also reset the retransmit timer." (Impatient, §4.)
        if !self.partial_ack_seen {
            self.partial_ack_seen = true;
            self.restart_timer(now);
        }
    }

    fn take_rtt_sample(&mut self, now: Instant, ackno: u64) -> Option<Duration> {
        let mut clean = true;
        let mut newest = None;
        while let Some(record) = self.sent.front().copied() {
            if record.start >= ackno {
                break;
            }
            clean &= !record.retransmitted;
            if record.end > ackno {
                // Partly acknowledged: keep the rest.
                if let Some(front) = self.sent.front_mut() {
                    front.start = ackno;
                }
                break;
            }
            newest = Some(record.sent_at);
            self.sent.pop_front();
        }
        // RFC 6298 §3 (Karn): "RTT samples MUST NOT be made using segments
        // that were retransmitted". An ACK covering any resent byte may have
        // been triggered by the resend, so it gives no sample at all.
        let (true, Some(sent_at)) = (clean, newest) else {
            return None;
        };
        let sample = now.saturating_duration_since(sent_at);
        self.rtt.on_sample(sample);
        Some(sample)
    }

    fn restart_timer(&mut self, now: Instant) {
        // RFC 6298 §5.2: "When all outstanding data has been acknowledged,
        // turn off the retransmission timer." §5.3: "When an ACK is received
        // that acknowledges new data, restart the retransmission timer".
        self.rto_deadline = (self.snd_una < self.snd_max).then(|| now + self.rtt.rto());
    }

    /// Handles the retransmission timer; does nothing before
    /// [`next_timeout`](Self::next_timeout).
    pub fn on_timeout(&mut self, now: Instant) {
        match self.rto_deadline {
            Some(deadline) if deadline <= now => {}
            _ => return,
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        let mss = self.config.mss;
        // RFC 5681 §3.1: "When a TCP sender detects segment loss using the
        // retransmission timer and the given segment has not yet been resent
        // by way of the retransmission timer, the value of ssthresh MUST be
        // set to no more than the value given in equation (4)".
        //
        // FlightSize is taken no larger than the window without inflation
        // (`uninflated_window`): in a recovery whose retransmission was
        // lost again the sender went on sending new data (RFC 6675 NextSeg
        // rule 2, or RFC 6582's inflation by an SMSS per duplicate ACK)
        // until the timer fired, so SND.MAX − SND.UNA can be several windows
        // and eq. 4 on it would *raise* ssthresh above what the path held.
        // eq. 4 is an upper bound, so the smaller value conforms. Linux's
        // tcp_enter_loss likewise takes ssthresh from cwnd, not from what
        // is outstanding (the module's ssthresh(): Reno's max(cwnd/2, 2),
        // CUBIC's cwnd·β), and leaves it alone when a recovery already
        // reduced it in this window; ns-3 takes it from its pipe estimate.
        // Here a timeout in recovery halves the recovery's window once more,
        // as eq. 4 asks of every first timeout of a segment.
        if self.last_timeout_una != Some(self.snd_una) {
            let window = self.uninflated_window();
            let flight = (self.snd_max - self.snd_una).min(window);
            // RFC 9438 §4.8: "CUBIC ... sets ssthresh using β_cubic (same
            // as in Section 4.6)", with W_max from the same window.
            self.ssthresh = self.reduced_ssthresh(window, flight);
            if let Some(cubic) = self.cubic.as_mut() {
                // RFC 9438 §4.8: the next congestion-avoidance stage starts
                // from K = 0 and W_max = cwnd.
                cubic.note_timeout();
            }
        }
        self.last_timeout_una = Some(self.snd_una);
        self.note_window_reduction();
        // RFC 5681 §3.1: "upon a timeout ... cwnd MUST be set to no more than
        // the loss window, LW, which equals 1 full-sized segment".
        self.cwnd = mss;
        self.bytes_acked_ca = 0;
        // RFC 6582 §3.2, "Retransmit timeouts": "After a retransmit
        // timeout, record the highest sequence number transmitted in the
        // variable recover, and exit the fast recovery procedure if
        // applicable."
        self.recover = Some(self.snd_max);
        self.in_recovery = false;
        self.dupacks = 0;
        self.pending_retransmit = None;
        // RFC 6298 §5.4: "Retransmit the earliest segment that has not been
        // acknowledged"; the model then goes back N and resends the rest as
        // the window reopens.
        self.snd_nxt = self.snd_una;
        if let Some(board) = self.scoreboard.as_mut() {
            // RFC 6675 §5.1: "a TCP sender MUST 'ignore prior SACK
            // information in determining which data to retransmit'".
            board.clear();
            self.high_rxt = self.snd_una;
            self.rescue_rxt = None;
        }
        // RFC 6298 §5.5 back off, §5.6 restart the timer.
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.timeouts += 1;
    }
}
