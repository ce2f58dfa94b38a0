//! The receiver: cumulative ACKs, a bounded out-of-order buffer, delayed ACKs,
//! SACK blocks (RFC 2018 §4), and the ECN-Echo of RFC 3168 §6.1.3.

use std::collections::BTreeMap;
use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;

use super::{Ack, SackBlock, Segment, TcpConfig, TcpConfigError, MAX_SACK_BLOCKS};

/// A TCP receiver that acknowledges cumulatively.
///
/// Driver contract: feed each arriving [`Segment`] to
/// [`on_segment`](Self::on_segment) and send the [`Ack`] it returns, if any;
/// call [`on_timeout`](Self::on_timeout) when
/// [`next_timeout`](Self::next_timeout) is due and send its ACK.
///
/// With delayed ACKs (RFC 5681 §4.2) an in-order segment is acknowledged
/// with the next one (every second segment) or when the timer expires;
/// out-of-order segments, segments that fill a gap and duplicates are
/// acknowledged at once.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    window: u64,
    delayed_ack: Option<Duration>,
    /// RCV.NXT: every byte before it has arrived.
    rcv_nxt: u64,
    /// Disjoint, non-adjacent ranges `start -> end` above `rcv_nxt`, all
    /// below `rcv_nxt + window`.
    out_of_order: BTreeMap<u64, u64>,
    unacked_segments: u32,
    ack_deadline: Option<Instant>,
    segments_received: u64,
    acks_sent: u64,
    ecn: bool,
    /// RFC 3168 §6.1.3: a CE segment arrived and no CWR since: every ACK
    /// carries ECE.
    ece: bool,
    ce_received: u64,
    /// SACK (RFC 2018) on.
    sack: bool,
    /// A byte of each block reported in the last ACK, in the order
    /// reported (RFC 2018 §4: later ACKs repeat "the most recently reported
    /// SACK blocks"); a byte rather than the block, as blocks grow and
    /// merge.
    sack_history: Vec<u64>,
}

impl TcpReceiver {
    /// A receiver expecting byte 0 first.
    pub fn new(config: TcpConfig) -> Result<Self, TcpConfigError> {
        config.validate()?;
        Ok(TcpReceiver {
            window: config.receive_window,
            delayed_ack: config.delayed_ack,
            rcv_nxt: 0,
            out_of_order: BTreeMap::new(),
            unacked_segments: 0,
            ack_deadline: None,
            segments_received: 0,
            acks_sent: 0,
            ecn: config.ecn,
            ece: false,
            ce_received: 0,
            sack: config.sack,
            sack_history: Vec::new(),
        })
    }

    /// Bytes delivered in order (goodput).
    pub fn bytes_delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// Bytes held out of order, waiting for a gap to fill.
    pub fn bytes_out_of_order(&self) -> u64 {
        self.out_of_order
            .iter()
            .map(|(start, end)| end - start)
            .sum()
    }

    /// Data segments received, duplicates included.
    pub fn segments_received(&self) -> u64 {
        self.segments_received
    }

    /// ACKs emitted.
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }

    /// CE-marked data segments received within the window (RFC 3168
    /// §6.1.3; always 0 without ECN).
    pub fn ce_received(&self) -> u64 {
        self.ce_received
    }

    /// When the delayed-ACK timer expires, if it runs.
    pub fn next_timeout(&self) -> Option<Instant> {
        self.ack_deadline
    }

    /// Handles the delayed-ACK timer: returns the pending ACK once due.
    pub fn on_timeout(&mut self, now: Instant) -> Option<Ack> {
        match self.ack_deadline {
            Some(deadline) if deadline <= now => Some(self.ack_now(None)),
            _ => None,
        }
    }

    /// Processes a data segment that arrived Not-ECT; returns the ACK to
    /// send now, if any.
    pub fn on_segment(&mut self, now: Instant, segment: &Segment) -> Option<Ack> {
        self.on_segment_ecn(now, segment, Ecn::NotEct)
    }

    /// Processes a data segment whose IP header carried `ecn`; returns the
    /// ACK to send now, if any.
    pub fn on_segment_ecn(&mut self, now: Instant, segment: &Segment, ecn: Ecn) -> Option<Ack> {
        if segment.len == 0 {
            return None;
        }
        self.segments_received += 1;
        let start = segment.seq;
        let window_end = self.rcv_nxt.saturating_add(self.window);
        let end = segment.end().min(window_end);
        // RFC 3168 §6.1.5: "the TCP data receiver SHOULD ignore the ECN field
        // on arriving data packets that are outside of the receiver's
        // current window".
        let in_window = segment.end() > self.rcv_nxt && start < window_end;
        if self.ecn && in_window {
            // RFC 3168 §6.1.3: ECE stops once a CWR segment arrives; a CWR
            // segment that is itself CE turns it on again.
            if segment.cwr {
                self.ece = false;
            }
            if ecn.is_ce() {
                self.ece = true;
                self.ce_received += 1;
            }
        }
        // RFC 5681 §4.2: "an immediate ACK ... when an out-of-order segment
        // arrives" — duplicates and data beyond the window are treated the
        // same way (they say something is amiss at the sender).
        if end <= self.rcv_nxt || start >= window_end {
            return Some(self.ack_now(None));
        }
        if start > self.rcv_nxt {
            // RFC 5681 §4.2: "A TCP receiver SHOULD send an immediate
            // duplicate ACK when an out-of-order segment arrives."
            super::merge_range(&mut self.out_of_order, start, end);
            return Some(self.ack_now(Some(start)));
        }
        let filled_gap = !self.out_of_order.is_empty();
        self.rcv_nxt = end;
        while let Some((&range_start, &range_end)) = self.out_of_order.first_key_value() {
            if range_start > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(range_end);
            self.out_of_order.remove(&range_start);
        }
        // RFC 5681 §4.2: "a TCP receiver SHOULD send an immediate ACK when the
        // incoming segment fills in all or part of a gap in the sequence space."
        let Some(delay) = self.delayed_ack.filter(|_| !filled_gap) else {
            return Some(self.ack_now(None));
        };
        // RFC 5681 §4.2: "an ACK SHOULD be generated for at least every second
        // full-sized segment, and MUST be generated within 500 ms of the
        // arrival of the first unacknowledged packet."
        self.unacked_segments += 1;
        if self.unacked_segments >= 2 {
            return Some(self.ack_now(None));
        }
        if self.ack_deadline.is_none() {
            self.ack_deadline = Some(now + delay);
        }
        None
    }

    /// The ACK to send now; `trigger` is the first byte of the
    /// out-of-order segment that caused it, if one did.
    fn ack_now(&mut self, trigger: Option<u64>) -> Ack {
        self.unacked_segments = 0;
        self.ack_deadline = None;
        self.acks_sent += 1;
        Ack {
            cumulative: self.rcv_nxt,
            // RFC 3168 §6.1.3: ECE on every ACK from a CE segment until a
            // CWR segment; with delayed ACKs one CE among the segments
            // acknowledged suffices.
            ece: self.ece,
            sack: self.sack_blocks(trigger),
        }
    }

    /// The SACK blocks of the next ACK (RFC 2018 §4): "The first SACK
    /// block (i.e., the one immediately following the kind and length
    /// fields in the option) MUST specify the contiguous block of data
    /// containing the segment which triggered this ACK, unless that segment
    /// advanced the Acknowledgment Number field in the header", and "the
    /// SACK option SHOULD be filled out by repeating the most recently
    /// reported SACK blocks (based on first SACK blocks in previous SACK
    /// options) that are not subsets of a SACK block already included in
    /// the SACK option being constructed". Blocks are whole ranges of the
    /// out-of-order buffer, so none is a subset of another.
    fn sack_blocks(&mut self, trigger: Option<u64>) -> Option<Box<[SackBlock]>> {
        if !self.sack || self.out_of_order.is_empty() {
            self.sack_history.clear();
            return None;
        }
        let mut blocks: Vec<SackBlock> = Vec::with_capacity(MAX_SACK_BLOCKS);
        let mut reported = Vec::with_capacity(MAX_SACK_BLOCKS);
        for seq in trigger.into_iter().chain(self.sack_history.iter().copied()) {
            if blocks.len() == MAX_SACK_BLOCKS {
                break;
            }
            let Some((&start, &end)) = self.out_of_order.range(..=seq).next_back() else {
                continue;
            };
            if end <= seq || blocks.iter().any(|b| b.start == start) {
                continue;
            }
            blocks.push(SackBlock { start, end });
            reported.push(seq);
        }
        // The history may be short (a timer ACK, or blocks since
        // delivered): fill up with the highest ranges not yet reported.
        for (&start, &end) in self.out_of_order.iter().rev() {
            if blocks.len() == MAX_SACK_BLOCKS {
                break;
            }
            if !blocks.iter().any(|b| b.start == start) {
                blocks.push(SackBlock { start, end });
                reported.push(start);
            }
        }
        self.sack_history = reported;
        Some(blocks.into_boxed_slice())
    }
}
