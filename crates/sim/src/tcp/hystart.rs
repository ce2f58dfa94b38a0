//! HyStart++ (RFC 9406): leaves the initial slow start when the RTT rises,
//! through a few rounds of Conservative Slow Start (CSS), before a loss
//! ends it with a window twice too large.
//!
//! The model sends without pacing, so L = 8 (RFC 9406 §4.3: "L = infinity
//! if paced, L = 8 if non-paced").

use std::time::Duration;

/// RFC 9406 §4.3: MIN_RTT_THRESH = 4 msec.
pub const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// RFC 9406 §4.3: MAX_RTT_THRESH = 16 msec.
pub const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// RFC 9406 §4.3: MIN_RTT_DIVISOR = 8.
pub const MIN_RTT_DIVISOR: u32 = 8;
/// RFC 9406 §4.3: N_RTT_SAMPLE = 8.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS_GROWTH_DIVISOR = 4.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: CSS_ROUNDS = 5.
pub const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: L = 8 segments for a sender that does not pace.
pub const L_SEGMENTS: u64 = 8;

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartPhase {
    /// Standard slow start, watching each round's minimum RTT.
    SlowStart,
    /// Conservative Slow Start: a quarter of slow start's growth.
    ConservativeSlowStart,
    /// Finished: CSS_ROUNDS of CSS ended in congestion avoidance (the
    /// sender sets ssthresh to cwnd), or a congestion event ended the
    /// initial slow start; the rest of the connection uses standard slow
    /// start (RFC 9406 §4.2: "use HyStart++ only for the initial slow
    /// start").
    Done,
}

/// The HyStart++ state of RFC 9406 §4.2.
#[derive(Clone, Debug)]
pub struct HyStart {
    phase: HyStartPhase,
    /// windowEnd: the round ends when this byte is acknowledged.
    window_end: Option<u64>,
    last_round_min_rtt: Option<Duration>,
    current_round_min_rtt: Option<Duration>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<Duration>,
    /// CSS rounds begun, the partial round of the transition included.
    css_rounds: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart::new()
    }
}

impl HyStart {
    /// HyStart++ at the start of a connection.
    pub fn new() -> HyStart {
        HyStart {
            phase: HyStartPhase::SlowStart,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds: 0,
        }
    }

    /// The phase.
    pub fn phase(&self) -> HyStartPhase {
        self.phase
    }

    /// A congestion event (loss or ECN-Echo) ends HyStart++: RFC 9406
    /// §4.2, "If loss or ECN-marking is observed anytime during standard
    /// slow start or CSS, enter congestion avoidance".
    pub fn on_congestion_event(&mut self) {
        self.phase = HyStartPhase::Done;
    }

    /// The window growth for an ACK of `acked_bytes` new data in this
    /// phase (before [`on_ack`](Self::on_ack) moves it on): RFC 9406 §4.2
    /// "cwnd = cwnd + min(N, L*SMSS)" in slow start, and that divided by
    /// CSS_GROWTH_DIVISOR in CSS.
    pub fn increase(&self, acked_bytes: u64, mss: u64) -> u64 {
        let increase = acked_bytes.min(L_SEGMENTS.saturating_mul(mss));
        match self.phase {
            HyStartPhase::ConservativeSlowStart => increase / CSS_GROWTH_DIVISOR,
            _ => increase,
        }
    }

    /// An ACK in slow start for the cumulative acknowledgment `ackno`, with
    /// `snd_nxt` the next byte to send and `rtt` the ACK's RTT sample if it
    /// gave one; returns the phase after it. On a return of
    /// [`HyStartPhase::Done`] from CSS the sender enters congestion
    /// avoidance by setting ssthresh to cwnd.
    pub fn on_ack(&mut self, ackno: u64, snd_nxt: u64, rtt: Option<Duration>) -> HyStartPhase {
        if self.phase == HyStartPhase::Done {
            return self.phase;
        }
        // RFC 9406 §4.2: "At the start of each round during standard slow
        // start and CSS, initialize the variables used to compute the last
        // round's and current round's minimum RTT: lastRoundMinRTT =
        // currentRoundMinRTT; currentRoundMinRTT = infinity; rttSampleCount
        // = 0". A round ends when the ACK covers windowEnd.
        let round_ended = self.window_end.is_none_or(|end| ackno >= end);
        if round_ended {
            self.window_end = Some(snd_nxt);
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            if self.phase == HyStartPhase::ConservativeSlowStart {
                // "If CSS_ROUNDS rounds are complete, enter congestion
                // avoidance by setting the ssthresh to the current cwnd."
                if self.css_rounds >= CSS_ROUNDS {
                    self.phase = HyStartPhase::Done;
                    return self.phase;
                }
                self.css_rounds += 1;
            }
        }
        let Some(rtt) = rtt else {
            return self.phase;
        };
        // "currentRoundMinRTT = min(currentRoundMinRTT, currRTT);
        // rttSampleCount += 1"
        self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.rtt_sample_count += 1;
        let (Some(current), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt)
        else {
            return self.phase;
        };
        if self.rtt_sample_count < N_RTT_SAMPLE {
            return self.phase;
        }
        match self.phase {
            HyStartPhase::SlowStart => {
                // "RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT /
                // MIN_RTT_DIVISOR, MAX_RTT_THRESH)); if (currentRoundMinRTT
                // >= (lastRoundMinRTT + RttThresh)) cssBaselineMinRtt =
                // currentRoundMinRTT; exit slow start and enter CSS".
                let threshold = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                if current >= last + threshold {
                    self.css_baseline_min_rtt = Some(current);
                    self.phase = HyStartPhase::ConservativeSlowStart;
                    // "If the transition into CSS happens in the middle of
                    // a round, that partial round counts towards the limit."
                    self.css_rounds = 1;
                }
            }
            HyStartPhase::ConservativeSlowStart => {
                // "if (currentRoundMinRTT < cssBaselineMinRtt)
                // cssBaselineMinRtt = infinity; resume slow start" — the
                // RTT rise was spurious.
                if self.css_baseline_min_rtt.is_some_and(|base| current < base) {
                    self.css_baseline_min_rtt = None;
                    self.phase = HyStartPhase::SlowStart;
                }
            }
            HyStartPhase::Done => {}
        }
        self.phase
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Feeds one round of `acks` ACKs with the same RTT; round `round`
    /// ends at byte `round * 100 * MSS`.
    fn round(h: &mut HyStart, round: u64, acks: u64, rtt_ms: u64) -> HyStartPhase {
        let mut phase = h.phase();
        for i in 0..acks {
            let ackno = (round - 1) * 100 * MSS + (i + 1) * MSS;
            phase = h.on_ack(
                ackno,
                round * 100 * MSS,
                Some(Duration::from_millis(rtt_ms)),
            );
        }
        phase
    }

    #[test]
    fn constants_follow_rfc_9406() {
        assert_eq!(MIN_RTT_THRESH, Duration::from_millis(4));
        assert_eq!(MAX_RTT_THRESH, Duration::from_millis(16));
        assert_eq!((MIN_RTT_DIVISOR, N_RTT_SAMPLE, CSS_ROUNDS), (8, 8, 5));
        assert_eq!((CSS_GROWTH_DIVISOR, L_SEGMENTS), (4, 8));
        let mut h = HyStart::new();
        assert_eq!(h.increase(20 * MSS, MSS), 8 * MSS);
        h.phase = HyStartPhase::ConservativeSlowStart;
        assert_eq!(h.increase(4 * MSS, MSS), MSS);
    }

    #[test]
    fn an_rtt_rise_past_the_threshold_enters_css_then_congestion_avoidance() {
        let mut h = HyStart::new();
        // Round 1 sets the baseline (100 ms); RttThresh = clamp(100/8,
        // 4, 16) = 12.5 ms.
        assert_eq!(round(&mut h, 1, 10, 100), HyStartPhase::SlowStart);
        // 112 ms is below 112.5: still slow start.
        assert_eq!(round(&mut h, 2, 10, 112), HyStartPhase::SlowStart);
        // The next round's minimum 113 ms is compared with 112 ms + 14 ms.
        assert_eq!(round(&mut h, 3, 10, 113), HyStartPhase::SlowStart);
        // 126 ms >= 113 + 14.1: CSS.
        assert_eq!(
            round(&mut h, 4, 10, 128),
            HyStartPhase::ConservativeSlowStart
        );
        // The partial round counts; four more rounds keep CSS, and the end
        // of the fifth enters congestion avoidance.
        for r in 5..9 {
            assert_eq!(
                round(&mut h, r, 10, 130),
                HyStartPhase::ConservativeSlowStart
            );
        }
        assert_eq!(
            h.on_ack(
                8 * 100 * MSS,
                9 * 100 * MSS,
                Some(Duration::from_millis(130))
            ),
            HyStartPhase::Done
        );
    }

    #[test]
    fn fewer_than_n_rtt_sample_samples_decide_nothing() {
        let mut h = HyStart::new();
        round(&mut h, 1, 10, 100);
        // Seven samples of a far larger RTT: not enough to leave.
        assert_eq!(round(&mut h, 2, 7, 300), HyStartPhase::SlowStart);
        // The eighth sample leaves.
        assert_eq!(
            h.on_ack(108 * MSS, 200 * MSS, Some(Duration::from_millis(300))),
            HyStartPhase::ConservativeSlowStart
        );
    }

    #[test]
    fn an_rtt_drop_in_css_resumes_slow_start_and_loss_ends_it() {
        let mut h = HyStart::new();
        round(&mut h, 1, 10, 100);
        assert_eq!(
            round(&mut h, 2, 10, 150),
            HyStartPhase::ConservativeSlowStart
        );
        // The baseline was 150 ms; a round at 120 ms was a spurious rise.
        assert_eq!(round(&mut h, 3, 10, 120), HyStartPhase::SlowStart);
        h.on_congestion_event();
        assert_eq!(round(&mut h, 4, 10, 500), HyStartPhase::Done);
    }
}
