//! What a connection reports to its driver and application: events, the
//! description of a transmitted packet, statistics and errors.

use std::time::Duration;

use super::config::Ccid;
use super::state::State;
use crate::ecn::Ecn;
use crate::units::Rate;
use crate::wire::dccp::{DccpError, PacketType, ResetCode, SeqNum};
use crate::wire::options::MandatoryError;

/// Something the application should know about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed: the client reached PARTOPEN (it may send) or
    /// the server reached OPEN. `ccid` is the CCID of this endpoint's sending
    /// half-connection, `peer_ccid` that of the peer's.
    Connected {
        /// The CCID this endpoint sends with.
        ccid: Ccid,
        /// The CCID the peer sends with.
        peer_ccid: Ccid,
    },
    /// The connection closed in order (the Close/Reset(Closed) exchange of
    /// RFC 4340 §8.3 finished, or the close timed out). No more data flows.
    Closed,
    /// The connection was reset: by the peer (`by_peer`), or by this endpoint
    /// because the peer broke a rule or the application aborted.
    Reset {
        /// The Reset Code.
        code: ResetCode,
        /// Data 1-3 (for option errors: the option type and its first two
        /// data bytes, RFC 4340 §5.6).
        data: [u8; 3],
        /// Whether the peer sent the Reset.
        by_peer: bool,
    },
    /// The client gave up: no valid Response (or, in PARTOPEN, no packet from
    /// the server) within the handshake timeout.
    HandshakeTimeout,
    /// Received datagrams were dropped because the application did not read
    /// them before the receive queue filled (counted since the last event).
    DatagramsDropped {
        /// How many.
        count: u64,
    },
}

/// One packet written by [`Connection::poll_transmit`](super::Connection::poll_transmit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Its length in bytes (the packet is `buf[..len]`).
    pub len: usize,
    /// Its type.
    pub packet_type: PacketType,
    /// Its sequence number.
    pub seq: SeqNum,
    /// Its acknowledgement number, for types that carry one.
    pub ack: Option<SeqNum>,
    /// The bytes of application data it carries.
    pub payload_len: usize,
    /// The ECN codepoint the driver sets on the datagram's IP header
    /// (RFC 4340 §12): ECT(0) on DCCP-Data and DCCP-DataAck while ECN is
    /// agreed, Not-ECT otherwise.
    pub ecn: Ecn,
}

/// Counters and current values of one connection.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnectionStats {
    /// Packets sent, of every type.
    pub packets_sent: u64,
    /// Bytes sent (whole DCCP packets).
    pub bytes_sent: u64,
    /// Packets with application data sent.
    pub data_packets_sent: u64,
    /// Application data bytes sent.
    pub data_bytes_sent: u64,
    /// Valid packets received (after the sequence number checks).
    pub packets_received: u64,
    /// Bytes of valid packets received.
    pub bytes_received: u64,
    /// Packets with application data delivered to the receive queue.
    pub data_packets_received: u64,
    /// Application data bytes delivered.
    pub data_bytes_received: u64,
    /// Packets that failed to parse (bad header, checksum or options) and
    /// were dropped.
    pub malformed_dropped: u64,
    /// Packets dropped by the sequence number checks (RFC 4340 §8.5 steps
    /// 5 and 6) or as unexpected types (step 7).
    pub invalid_dropped: u64,
    /// Other packets dropped (wrong ports, short sequence numbers, packets
    /// after the connection closed).
    pub other_dropped: u64,
    /// Received datagrams dropped because the receive queue was full.
    pub recv_queue_dropped: u64,
    /// Syncs sent.
    pub syncs_sent: u64,
    /// Syncs not sent because of the rate limit (RFC 4340 §7.5.4).
    pub syncs_suppressed: u64,
    /// SyncAcks sent.
    pub sync_acks_sent: u64,
    /// Resets sent.
    pub resets_sent: u64,
    /// Valid Resets received.
    pub resets_received: u64,
    /// Feedback packets the sending CCID used.
    pub feedback_received: u64,
    /// Feedback packets the sending CCID could not use (an acknowledgement
    /// number with no recorded send time, a malformed Ack Vector).
    pub feedback_ignored: u64,
    /// The rate the sending CCID allows (TFRC's X; CCID 2's cwnd·s/R).
    pub rate: Option<Rate>,
    /// The sending CCID's smoothed RTT, or the handshake's RTT sample.
    pub rtt: Option<Duration>,
    /// The loss event rate p: as the peer reported it (TFRC sender).
    pub loss_event_rate: f64,
    /// The loss event rate this endpoint's TFRC receiver computes for the
    /// peer's data.
    pub receive_loss_event_rate: f64,
    /// Data packets of the peer's that this endpoint's receiver counts as
    /// lost (sequence number holes never filled, RFC 5348 §5.1; CCID 2: not
    /// counted).
    pub data_losses: u64,
    /// CCID 2: the congestion window in packets.
    pub cwnd: Option<u32>,
    /// CCID 2: the Ack Ratio this endpoint uses when acknowledging.
    pub ack_ratio: u16,
    /// CCID 2 sender: the peer confirmed Send Ack Vector (RFC 4341 §4).
    pub peer_sends_ack_vectors: bool,
    /// Data packets that arrived marked Congestion Experienced and were
    /// counted as congestion (RFC 4340 §12; counted only while ECN is in
    /// use, and delivered all the same).
    pub ce_marked_received: u64,
    /// Whether this endpoint sends its data ECN-Capable (ECN agreed by both
    /// endpoints, RFC 4340 §12.1).
    pub ecn_capable: bool,
}

/// Why [`Connection::send`](super::Connection::send) refused a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The connection is closing or closed.
    #[error("cannot send on a connection in state {0}")]
    NotOpen(State),
    /// The datagram exceeds what one packet carries.
    #[error("datagram of {len} bytes exceeds the {max}-byte limit of one packet")]
    TooBig {
        /// The datagram's length.
        len: usize,
        /// The limit, [`ConnectionConfig::max_payload`](super::ConnectionConfig::max_payload).
        max: usize,
    },
    /// The send queue is full (DCCP is unreliable: the application decides
    /// what to drop).
    #[error("send queue full ({capacity} datagrams)")]
    QueueFull {
        /// The queue's capacity.
        capacity: usize,
    },
}

/// Why a Request did not create a connection
/// ([`Connection::accept`](super::Connection::accept)).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    /// The bytes are not a valid DCCP packet (dropped, no Reset: RFC 4340
    /// §8.5 step 1).
    #[error("malformed packet: {0}")]
    Malformed(#[from] DccpError),
    /// The packet is not a Request.
    #[error("{} does not open a connection", .0.name())]
    NotARequest(PacketType),
    /// The Request uses short sequence numbers, which only Data, Ack and
    /// DataAck may.
    #[error("a Request must use 48-bit sequence numbers")]
    ShortSequenceNumbers,
    /// The Service Code is not the one this server accepts (RFC 4340 §8.1.2).
    #[error("Service Code {got:#010x} does not match {expected:#010x}")]
    BadServiceCode {
        /// The Request's Service Code.
        got: u32,
        /// The server's.
        expected: u32,
    },
    /// A Mandatory option failed (RFC 4340 §5.8.2).
    #[error("mandatory option: {0}")]
    Mandatory(MandatoryError),
    /// Feature negotiation failed: no common CCID, or an invalid value for a
    /// feature that must be understood.
    #[error("feature negotiation failed: {reason}")]
    Negotiation {
        /// What failed.
        reason: String,
        /// The Reset Code to answer with.
        code: ResetCode,
        /// Reset Data 1-3.
        data: [u8; 3],
    },
}

impl AcceptError {
    /// The Reset that answers the Request, if one is due: none for a
    /// malformed packet or a Reset (RFC 4340 §8.5 steps 1 and 3).
    pub fn reset(&self) -> Option<(ResetCode, [u8; 3])> {
        match self {
            AcceptError::Malformed(_) | AcceptError::NotARequest(PacketType::Reset) => None,
            // Step 3: "Generate Reset(No Connection) unless P.type == Reset".
            AcceptError::NotARequest(_) => Some((ResetCode::NoConnection, [0; 3])),
            AcceptError::ShortSequenceNumbers => None,
            AcceptError::BadServiceCode { .. } => Some((ResetCode::BadServiceCode, [0; 3])),
            AcceptError::Mandatory(error) => Some((error.reset_code(), error.reset_data())),
            AcceptError::Negotiation { code, data, .. } => Some((*code, *data)),
        }
    }
}
