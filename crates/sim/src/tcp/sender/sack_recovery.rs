//! RFC 6675 SACK-based loss recovery: entering it (§5 step 4), NextSeg
//! (§4) and the pipe-limited transmissions of step (C).

use fairstream_proto::time::Instant;

use super::TcpSender;
use crate::tcp::Segment;

/// Which NextSeg rule (RFC 6675 §4) chose a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NextSeg {
    /// Rules (1) and (3): a hole below the highest SACKed byte, lost (1) or
    /// not yet (3).
    Hole { seq: u64, len: u64 },
    /// Rule (2): new data.
    NewData,
    /// Rule (4): the rescue retransmission.
    Rescue { seq: u64, len: u64 },
}

impl TcpSender {
    /// Bytes of one segment retransmitted from `seq`: up to an MSS, never
    /// into SACKed data nor past what was sent.
    pub(super) fn hole_len(&self, seq: u64) -> u64 {
        let mut end = seq.saturating_add(self.config.mss).min(self.snd_max);
        if let Some(next) = self
            .scoreboard
            .as_ref()
            .and_then(|board| board.next_sacked_after(seq))
        {
            end = end.min(next);
        }
        end.saturating_sub(seq).max(1)
    }

    /// Moves `SND.NXT` past SACKed data during go-back-N after a timeout.
    pub(super) fn skip_sacked(&mut self) {
        if let Some(board) = self.scoreboard.as_ref() {
            if self.snd_nxt < self.snd_max {
                self.snd_nxt = board.first_unsacked_from(self.snd_nxt).min(self.snd_max);
            }
        }
    }

    /// RFC 6675 §4 IsLost (HighACK + 1): the first unacknowledged byte.
    pub(super) fn head_is_lost(&self) -> bool {
        self.scoreboard.as_ref().is_some_and(|board| {
            self.snd_una < board.lost_below(self.config.mss, self.config.dupack_threshold)
        })
    }

    /// RFC 6675 §4 SetPipe (): the bytes estimated in the network.
    pub fn pipe(&self) -> u64 {
        match self.scoreboard.as_ref() {
            Some(board) => board.pipe(
                self.snd_una,
                self.snd_max,
                self.high_rxt,
                board.lost_below(self.config.mss, self.config.dupack_threshold),
            ),
            None => self.bytes_in_flight(),
        }
    }

    /// RFC 6675 §5 step (4), after ssthresh was set: "(4.1) RecoveryPoint
    /// = HighData ... (4.2) ssthresh = cwnd = (FlightSize / 2) ... (4.3)
    /// Retransmit the first data segment presumed dropped -- the segment
    /// starting with sequence number HighACK + 1. To prevent repeated
    /// retransmission of the same data or a premature rescue
    /// retransmission, set both HighRxt and RescueRxt to the highest
    /// sequence number in the retransmitted segment."
    pub(super) fn enter_sack_recovery(&mut self) {
        self.recover = Some(self.snd_max);
        self.cwnd = self.ssthresh.max(self.config.mss);
        self.pending_retransmit = Some(self.snd_una);
        let end = self.snd_una + self.hole_len(self.snd_una);
        self.high_rxt = end;
        self.rescue_rxt = Some(end);
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.fast_retransmits += 1;
    }

    /// RFC 6675 §5 step (C): "If cwnd - pipe >= 1 SMSS, the sender SHOULD
    /// transmit one or more segments" chosen by NextSeg ().
    pub(super) fn poll_sack_recovery(&mut self, now: Instant) -> Option<Segment> {
        let mss = self.config.mss;
        let window = self.cwnd.min(self.max_window());
        if self.pipe().saturating_add(mss) > window {
            return None;
        }
        match self.next_seg()? {
            NextSeg::Hole { seq, len } => {
                // (C.2) "HighRxt MUST be set to the highest sequence number
                // of the retransmitted segment".
                self.high_rxt = self.high_rxt.max(seq + len);
                Some(self.emit(now, seq, len))
            }
            NextSeg::Rescue { seq, len } => {
                // Rule (4): "RescueRxt set to RecoveryPoint. HighRxt MUST
                // NOT be updated."
                self.rescue_rxt = self.recover;
                Some(self.emit(now, seq, len))
            }
            NextSeg::NewData => {
                let seq = self.snd_nxt;
                let len = mss.min(self.limit - seq);
                let segment = self.emit(now, seq, len);
                // (C.3) HighData moves on.
                self.snd_nxt = segment.end();
                self.snd_max = self.snd_max.max(self.snd_nxt);
                Some(segment)
            }
        }
    }

    /// RFC 6675 §4 NextSeg ().
    fn next_seg(&self) -> Option<NextSeg> {
        let board = self.scoreboard.as_ref()?;
        let mss = self.config.mss;
        let lost_below = board.lost_below(mss, self.config.dupack_threshold);
        let highest_sacked = board.highest_sacked().unwrap_or(self.snd_una);
        // (1.a) "S2 is greater than HighRxt", (1.b) "S2 is less than the
        // highest octet covered by any received SACK": the smallest such
        // byte not SACKed.
        let hole = board.first_unsacked_from(self.high_rxt.max(self.snd_una));
        let hole = (hole < highest_sacked && hole < self.snd_max).then_some(hole);
        // (1.c) "IsLost (S2) returns true."
        if let Some(seq) = hole.filter(|&seq| seq < lost_below) {
            return Some(NextSeg::Hole {
                seq,
                len: self.hole_len(seq),
            });
        }
        // (2) "If no sequence number 'S2' per rule (1) exists but there
        // exists available unsent data and the receiver's advertised window
        // allows, the sequence range of one segment of up to SMSS octets of
        // previously unsent data starting with sequence number HighData+1
        // MUST be returned."
        if self.snd_nxt < self.limit {
            let len = mss.min(self.limit - self.snd_nxt);
            let outstanding = self.snd_nxt - self.snd_una;
            if outstanding.saturating_add(len) <= self.max_window() {
                return Some(NextSeg::NewData);
            }
        }
        // (3) "If the conditions for rules (1) and (2) fail, but there
        // exists an unSACKed sequence number 'S3' that meets the criteria
        // for detecting loss given in steps (1.a) and (1.b) above
        // (specifically excluding step (1.c)), then one segment of up to
        // SMSS octets starting with S3 SHOULD be returned."
        if let Some(seq) = hole {
            return Some(NextSeg::Hole {
                seq,
                len: self.hole_len(seq),
            });
        }
        // (4) "If the conditions for (1), (2), and (3) fail, but there
        // exists outstanding unSACKed data, we provide the opportunity for
        // a single "rescue" retransmission per entry into loss recovery. If
        // HighACK is greater than RescueRxt (or RescueRxt is undefined),
        // then one segment of up to SMSS octets that MUST include the
        // highest outstanding unSACKed sequence number SHOULD be returned".
        let rescue_allowed = self.rescue_rxt.is_none_or(|rescue| self.snd_una > rescue);
        if rescue_allowed {
            let top = self.highest_unsacked_end(board)?;
            let seq = top.saturating_sub(mss).max(self.snd_una);
            let seq = board.range_containing(seq).map_or(seq, |(_, end)| end);
            if seq < top {
                return Some(NextSeg::Rescue {
                    seq,
                    len: top - seq,
                });
            }
        }
        None
    }

    /// One past the highest outstanding byte that is not SACKed.
    fn highest_unsacked_end(&self, board: &crate::tcp::Scoreboard) -> Option<u64> {
        let mut top = self.snd_max;
        while top > self.snd_una {
            match board.range_containing(top - 1) {
                Some((start, _)) => top = start,
                None => return Some(top),
            }
        }
        None
    }
}
