//! A TCP bulk-transfer model — NewReno (RFC 6582) or CUBIC (RFC 9438), with
//! or without SACK (RFC 2018, RFC 6675): the cross traffic every fairness
//! result is measured against.
//!
//! This is not a TCP stack. There is no handshake, no byte stream, no
//! flow-control window beyond a large fixed receive window, and no header
//! on the wire beyond a fixed 40-byte overhead. What *is* modelled, and
//! faithfully, is congestion control and loss recovery:
//!
//! - slow start and congestion avoidance (RFC 5681 §3.1), with optional
//!   appropriate byte counting (RFC 3465), optionally HyStart++ (RFC 9406,
//!   [`SlowStart::HyStartPlusPlus`]) for the initial slow start;
//! - NewReno congestion avoidance (RFC 5681) or CUBIC (RFC 9438,
//!   [`CongestionControl::Cubic`]): the cubic window function, the
//!   Reno-friendly region, β = 0.7 and fast convergence;
//! - fast retransmit and NewReno fast recovery (RFC 5681 §3.2, RFC 6582 §3.2),
//!   with the "Impatient" timer variant (RFC 6582 §4); or, with
//!   [`TcpConfig::sack`], SACK blocks from the receiver (RFC 2018, at most
//!   [`MAX_SACK_BLOCKS`] an ACK) and the sender's SACK-based loss recovery
//!   (RFC 6675: scoreboard, IsLost with DupThresh, pipe, NextSeg with the
//!   rescue retransmission);
//! - the retransmission timer (RFC 6298): SRTT/RTTVAR, minimum and maximum
//!   RTO, exponential backoff, Karn's rule; go-back-N after a timeout;
//! - a receiver with cumulative ACKs, a bounded out-of-order buffer and
//!   optional delayed ACKs (RFC 5681 §4.2);
//! - optionally ECN (RFC 3168 §6.1, [`TcpConfig::ecn`]): new data segments
//!   are ECT(0) (retransmissions and ACKs are not, §6.1.4-6.1.5), the
//!   receiver echoes a CE mark with ECE on its ACKs until it sees CWR, and
//!   the sender halves its window for an ECE at most once per window of
//!   data, without retransmitting, and sets CWR on its next new segment.
//!   The codepoint itself travels in the IP header the simulator's packet
//!   models (`network::Packet::ecn`), not in [`Segment`].
//!
//! **Sequence numbers count bytes**, from 0 at the first data byte (the
//! handshake is not modelled, so there is no ISN). Every new segment carries
//! one MSS of data, except the last one of a byte-limited transfer.
//!
//! **Not implemented:** D-SACK (RFC 2883), proportional rate reduction
//! (RFC 6937) and RACK-TLP (RFC 8985), timestamps (RFC 7323; RTT samples
//! obey Karn's rule instead), window scaling, Nagle, limited transmit
//! (RFC 3042), and ECN nonces or the ECN and SACK-permitted handshakes (a
//! flow's two ends are configured alike, so nothing is negotiated). The
//! receiver never reneges on data it has SACKed.
//!
//! The driver contract follows quinn-proto/neqo: a driver calls
//! [`TcpSender::poll_transmit`] until it returns `None`, delivers
//! [`Ack`]s with [`TcpSender::on_ack`], and calls [`TcpSender::on_timeout`]
//! once [`TcpSender::next_timeout`] has passed; the receiver side is the same
//! with [`TcpReceiver::on_segment`]. After every input, poll again.

/// Adds the byte range [start, end) to `ranges` (start → end, disjoint),
/// merged with every range it overlaps or touches: the receiver's
/// out-of-order data and the sender's SACK scoreboard keep their ranges so.
fn merge_range(ranges: &mut std::collections::BTreeMap<u64, u64>, mut start: u64, mut end: u64) {
    let touching: Vec<(u64, u64)> = ranges
        .range(..=end)
        .rev()
        .take_while(|&(_, &range_end)| range_end >= start)
        .map(|(&s, &e)| (s, e))
        .collect();
    for (range_start, range_end) in touching {
        ranges.remove(&range_start);
        start = start.min(range_start);
        end = end.max(range_end);
    }
    ranges.insert(start, end);
}

mod cubic;
mod hystart;
mod receiver;
mod sack;
mod sender;

use std::time::Duration;

use fairstream_proto::time::Instant;

pub use cubic::{Cubic, CubicConfig, BETA_CUBIC, C_CUBIC};
pub use fairstream_proto::cc::rtt::RttEstimator;
pub use hystart::{
    HyStart, HyStartPhase, CSS_GROWTH_DIVISOR, CSS_ROUNDS, L_SEGMENTS, MAX_RTT_THRESH,
    MIN_RTT_DIVISOR, MIN_RTT_THRESH, N_RTT_SAMPLE,
};
pub use receiver::TcpReceiver;
pub use sack::Scoreboard;
pub use sender::{CongestionState, TcpSender};

/// Bytes of TCP/IP header counted on the wire for every segment and ACK
/// (20-byte IPv4 header + 20-byte TCP header, no options).
pub const HEADER_BYTES: u64 = 40;

/// How the congestion window grows per ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndIncrease {
    /// RFC 5681 §3.1: `cwnd += min(N, SMSS)` per ACK in slow start (eq. 2) and
    /// `cwnd += SMSS*SMSS/cwnd` per ACK in congestion avoidance (eq. 3).
    PerAck,
    /// RFC 3465 appropriate byte counting: in slow start `cwnd += min(N,
    /// L*SMSS)` per ACK; in congestion avoidance `cwnd += SMSS` once a full
    /// cwnd of bytes has been acknowledged.
    ByteCounting {
        /// RFC 3465 §2.2 limit L in segments (the RFC recommends L = 2).
        limit_segments: u32,
    },
}

/// The initial congestion window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindow {
    /// RFC 5681 §3.1 / RFC 3390: `min(4*MSS, max(2*MSS, 4380))` bytes.
    Rfc3390,
    /// RFC 6928: `min(10*MSS, max(2*MSS, 14600))` bytes ("IW10").
    Rfc6928,
    /// A fixed number of segments (for instance 1, as in ns-2's default).
    Segments(u32),
}

/// Which RFC 6582 §3.2 step 6 rule sets cwnd on the full ACK that ends fast
/// recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullAckCwnd {
    /// Option 1: `cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)`, which
    /// avoids a burst when little data is outstanding.
    MinFlightPlusMss,
    /// Option 2: `cwnd = ssthresh`.
    Ssthresh,
}

/// The congestion-control algorithm: how the window grows in congestion
/// avoidance and how far it falls on a congestion event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CongestionControl {
    /// RFC 5681 / RFC 6582: one segment per RTT, halved on loss.
    NewReno,
    /// RFC 9438 CUBIC.
    Cubic(CubicConfig),
}

/// The slow-start algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStart {
    /// RFC 5681 §3.1 slow start until a loss or ssthresh.
    Standard,
    /// RFC 9406 HyStart++ for the initial slow start (then standard): slow
    /// start leaves for Conservative Slow Start when the round's minimum RTT
    /// rises, and for congestion avoidance after `CSS_ROUNDS` rounds of it.
    HyStartPlusPlus,
}

/// Configuration shared by [`TcpSender`] and [`TcpReceiver`]; `Default` gives
/// the RFC values, NewReno without SACK (the papers' TCP).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size in bytes (SMSS). Default 1460.
    pub mss: u64,
    /// Initial window. Default RFC 3390.
    pub initial_window: InitialWindow,
    /// Initial slow-start threshold in bytes. RFC 5681 §3.1: "SHOULD be set
    /// arbitrarily high (e.g., to the size of the largest possible advertised
    /// window)". Default `u64::MAX`.
    pub initial_ssthresh: u64,
    /// Receive window in bytes: the sender never has more than this
    /// outstanding, and the receiver buffers nothing beyond it. Default
    /// 64 MiB, large enough never to limit the model.
    pub receive_window: u64,
    /// Duplicate ACKs that trigger fast retransmit. RFC 5681 §3.2: 3.
    pub dupack_threshold: u32,
    /// Window growth rule. Default RFC 5681 per-ACK counting.
    pub cwnd_increase: CwndIncrease,
    /// cwnd on the full ACK that ends fast recovery. Default RFC 6582 option 1.
    pub full_ack_cwnd: FullAckCwnd,
    /// RTO before any RTT sample. RFC 6298 §2.1: 1 s.
    pub initial_rto: Duration,
    /// Lower bound of the RTO. RFC 6298 §2.4: 1 s (ns-2 and Linux use 200 ms).
    pub min_rto: Duration,
    /// Upper bound of the RTO. RFC 6298 §2.5: "at least 60 seconds"; 60 s.
    pub max_rto: Duration,
    /// Clock granularity G of RFC 6298 §2. Default 1 ms.
    pub clock_granularity: Duration,
    /// Receiver delayed-ACK timeout; `None` acknowledges every segment at
    /// once. RFC 5681 §4.2: a receiver SHOULD delay ACKs, MUST ack within
    /// 500 ms; default 200 ms (the common implementation value).
    pub delayed_ack: Option<Duration>,
    /// Bytes to transfer; `None` is an unlimited bulk source. Default `None`.
    pub bytes_to_send: Option<u64>,
    /// ECN-capable transport (RFC 3168 §6.1). Default `false`.
    pub ecn: bool,
    /// The largest window in bytes, `None` for no cap: cwnd never grows
    /// beyond it and the sender never has more outstanding. ns-2's
    /// `Agent/TCP` `window_` (and `maxcwnd_`), Linux's `snd_cwnd_clamp`;
    /// paper 002 §IV.A caps its TCP at "a maximum congestion window (cwnd)
    /// of 40 packets per RTT (60 KB)". Default `None`.
    pub max_window: Option<u64>,
    /// Congestion control. Default [`CongestionControl::NewReno`].
    pub congestion_control: CongestionControl,
    /// Slow start. Default [`SlowStart::Standard`].
    pub slow_start: SlowStart,
    /// Selective acknowledgments (RFC 2018) and SACK-based loss recovery
    /// (RFC 6675) at both ends. Default `false`: the papers' NewReno.
    pub sack: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            initial_window: InitialWindow::Rfc3390,
            initial_ssthresh: u64::MAX,
            receive_window: 64 << 20,
            dupack_threshold: 3,
            cwnd_increase: CwndIncrease::PerAck,
            full_ack_cwnd: FullAckCwnd::MinFlightPlusMss,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            clock_granularity: Duration::from_millis(1),
            delayed_ack: Some(Duration::from_millis(200)),
            bytes_to_send: None,
            ecn: false,
            max_window: None,
            congestion_control: CongestionControl::NewReno,
            slow_start: SlowStart::Standard,
            sack: false,
        }
    }
}

impl TcpConfig {
    /// The initial window in bytes for this configuration.
    pub fn initial_window_bytes(&self) -> u64 {
        let mss = self.mss;
        match self.initial_window {
            // RFC 3390 §1: "min (4*MSS, max (2*MSS, 4380 bytes))"
            InitialWindow::Rfc3390 => (4 * mss).min((2 * mss).max(4380)),
            // RFC 6928 §2: "min (10*MSS, max (2*MSS, 14600))"
            InitialWindow::Rfc6928 => (10 * mss).min((2 * mss).max(14600)),
            InitialWindow::Segments(n) => u64::from(n) * mss,
        }
    }

    /// Checks that the configuration can drive a sender and a receiver.
    pub fn validate(&self) -> Result<(), TcpConfigError> {
        if self.mss == 0 || self.mss > 1 << 30 {
            return Err(TcpConfigError::Mss(self.mss));
        }
        if self.dupack_threshold == 0 {
            return Err(TcpConfigError::DupackThreshold);
        }
        if let InitialWindow::Segments(0) = self.initial_window {
            return Err(TcpConfigError::InitialWindow);
        }
        if let CwndIncrease::ByteCounting { limit_segments: 0 } = self.cwnd_increase {
            return Err(TcpConfigError::ByteCountingLimit);
        }
        if self.receive_window < self.mss {
            return Err(TcpConfigError::ReceiveWindow {
                window: self.receive_window,
                mss: self.mss,
            });
        }
        if self.min_rto.is_zero() || self.min_rto > self.max_rto {
            return Err(TcpConfigError::RtoBounds {
                min: self.min_rto,
                max: self.max_rto,
            });
        }
        if self.initial_rto.is_zero() {
            return Err(TcpConfigError::InitialRto);
        }
        if self.delayed_ack.is_some_and(|d| d.is_zero()) {
            return Err(TcpConfigError::DelayedAck);
        }
        if let Some(window) = self.max_window.filter(|w| *w < self.mss) {
            return Err(TcpConfigError::MaxWindow {
                window,
                mss: self.mss,
            });
        }
        if let CongestionControl::Cubic(cubic) = self.congestion_control {
            if !cubic.is_valid() {
                return Err(TcpConfigError::Cubic {
                    beta: cubic.beta,
                    c: cubic.c,
                });
            }
        }
        Ok(())
    }
}

/// A [`TcpConfig`] that cannot drive a connection.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TcpConfigError {
    /// The MSS must be between 1 byte and 1 GiB.
    #[error("TCP mss must be between 1 and 2^30 bytes, got {0}")]
    Mss(u64),
    /// The duplicate-ACK threshold must be at least 1.
    #[error("TCP dupack_threshold must be at least 1")]
    DupackThreshold,
    /// The initial window must hold at least one segment.
    #[error("TCP initial window must be at least one segment")]
    InitialWindow,
    /// RFC 3465's L must be at least 1.
    #[error("TCP byte-counting limit L must be at least 1 segment")]
    ByteCountingLimit,
    /// The receive window must hold at least one segment.
    #[error("TCP receive window ({window} bytes) is smaller than one mss ({mss} bytes)")]
    ReceiveWindow {
        /// The configured window.
        window: u64,
        /// The configured MSS.
        mss: u64,
    },
    /// The RTO bounds must satisfy 0 < min ≤ max.
    #[error("TCP RTO bounds must satisfy 0 < min_rto <= max_rto, got {min:?} and {max:?}")]
    RtoBounds {
        /// The configured minimum.
        min: Duration,
        /// The configured maximum.
        max: Duration,
    },
    /// The maximum window must hold at least one segment.
    #[error("TCP maximum window ({window} bytes) is smaller than one mss ({mss} bytes)")]
    MaxWindow {
        /// The configured cap.
        window: u64,
        /// The configured MSS.
        mss: u64,
    },
    /// The initial RTO must be positive.
    #[error("TCP initial_rto must be positive")]
    InitialRto,
    /// A delayed-ACK timeout, when set, must be positive.
    #[error("TCP delayed_ack timeout must be positive (use no delayed ACKs instead)")]
    DelayedAck,
    /// CUBIC's β must lie in (0, 1) and its C must be positive.
    #[error("CUBIC needs 0 < beta < 1 and C > 0, got beta = {beta} and C = {c}")]
    Cubic {
        /// The configured β_cubic.
        beta: f64,
        /// The configured C.
        c: f64,
    },
}

/// A data segment: bytes `[seq, seq + len)` of the transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number (byte offset from the start of the transfer) of the
    /// first data byte.
    pub seq: u64,
    /// Data bytes carried.
    pub len: u64,
    /// Whether any byte of this segment was sent before.
    pub is_retransmission: bool,
    /// When the sender emitted it.
    pub sent_at: Instant,
    /// The CWR flag: the sender reduced its window since its last new
    /// segment (RFC 3168 §6.1.2).
    pub cwr: bool,
}

impl Segment {
    /// Sequence number one past the last data byte.
    pub fn end(&self) -> u64 {
        self.seq.saturating_add(self.len)
    }

    /// Bytes on the wire: data plus [`HEADER_BYTES`].
    pub fn wire_size(&self) -> u64 {
        self.len.saturating_add(HEADER_BYTES)
    }
}

/// The most SACK blocks one ACK carries: 3. RFC 2018 §3: "a SACK option
/// that specifies n blocks will have a length of 8*n+2 bytes, so the 40
/// bytes available for TCP options can specify a maximum of 4 blocks. It is
/// expected that SACK will often be used in conjunction with the Timestamp
/// option used for RTTM, which takes an additional 10 bytes (plus two bytes
/// of padding); thus a maximum of 3 SACK blocks will be allowed in this
/// case." Every stack that runs SACK today also sends timestamps, so the
/// model's receiver reports three (the timestamp bytes themselves are not
/// counted on the wire: the model has no timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;

/// One SACK block (RFC 2018 §3): bytes `[start, end)` received and queued
/// above the cumulative acknowledgment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackBlock {
    /// Left edge: the first byte of the block.
    pub start: u64,
    /// Right edge: one past the last byte of the block.
    pub end: u64,
}

/// A cumulative acknowledgment, with SACK blocks when both ends run SACK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ack {
    /// The next byte the receiver expects: every byte before it has arrived.
    pub cumulative: u64,
    /// The ECN-Echo flag: a CE-marked segment arrived and no CWR since
    /// (RFC 3168 §6.1.3).
    pub ece: bool,
    /// SACK blocks (RFC 2018), first the one holding the segment that
    /// triggered the ACK; at most [`MAX_SACK_BLOCKS`]. `None` without SACK
    /// or without out-of-order data (boxed so that an ACK, and every packet
    /// in the simulator's event queue, stays small).
    pub sack: Option<Box<[SackBlock]>>,
}

impl Ack {
    /// A plain cumulative ACK, without ECE.
    pub fn new(cumulative: u64) -> Ack {
        Ack {
            cumulative,
            ece: false,
            sack: None,
        }
    }

    /// The SACK blocks, empty without any.
    pub fn sack_blocks(&self) -> &[SackBlock] {
        self.sack.as_deref().unwrap_or(&[])
    }

    /// Bytes on the wire: a bare TCP/IP header, [`HEADER_BYTES`], plus the
    /// SACK option (RFC 2018 §3: kind, length and 8 bytes a block, 8·n + 2
    /// bytes) padded to a multiple of four bytes, as TCP options are.
    pub fn wire_size(&self) -> u64 {
        let blocks = self.sack_blocks().len() as u64;
        if blocks == 0 {
            return HEADER_BYTES;
        }
        HEADER_BYTES + (8 * blocks + 2).div_ceil(4) * 4
    }
}

#[cfg(test)]
mod tests;
