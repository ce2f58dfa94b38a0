//! DCCP connections (RFC 4340 §8) and the per-CCID machinery they drive.
//!
//! - [`Connection`]: one connection as a sans-IO state machine — the
//!   Request/Response/Ack handshake, feature negotiation of the CCIDs,
//!   sequence number validity windows with Sync recovery, the Close/Reset
//!   exchange — driving CCID 2 ([`crate::cc::ccid2`]), CCID 3 and CCID 4
//!   ([`crate::cc::tfrc`], [`crate::cc::tfrc_receiver`]).
//! - [`Endpoint`]: several connections sharing one UDP port pair, told apart
//!   by their DCCP ports (RFC 6773), with the LISTEN state.
//! - [`pair`]: two endpoints joined by an in-memory link in virtual time, for
//!   tests and captures.
//! - [`ack_vector`]: the receiver's record of arrivals in Ack Vector form (CCID 2).
//! - [`window_counter`]: the CCID 3/4 sender's CCVal window counter.
//!
//! # Decisions, deviations and limits
//!
//! - RFC 4340 §8.5 is implemented step by step in `input.rs`, quoting the
//!   pseudocode. As in Linux, Step 6 is not applied to the packet Step 4
//!   accepted in REQUEST (a Reset would otherwise fail "S.GSR + 1 <= P.seqno"
//!   against the GSR Step 4 just set).
//! - A client reports [`Event::Connected`] on entering PARTOPEN (it may send
//!   data, on DataAck); the server on entering OPEN, when it also sends one Ack
//!   so that an idle client leaves PARTOPEN (§8.1.5 allows any packet).
//! - PARTOPEN and RESPOND are bounded by `handshake_timeout` rather than
//!   §8.1.5's 4·MSL. `close()` before the handshake completes aborts.
//! - Feature options (Change, Confirm) and CCID feedback ride only on
//!   DCCP-Ack (and Request/Response): Data and DataAck carry at most an NDP
//!   Count, so their size is predictable ([`DATA_PACKET_OVERHEAD`]). CCIDs are
//!   fixed once agreed; later Change(CCID) options are answered with the
//!   agreed value. A Confirm that does not match a pending non-negotiable
//!   Change is ignored.
//! - The TFRC receiver counts data packets, not sequence numbers: the sender
//!   puts an NDP Count (RFC 4340 §7.7) on packets that follow non-data
//!   packets, and a sequence number neither received nor covered by an NDP
//!   Count is taken as a lost data packet (so the error is towards more loss).
//!   Loss Intervals lengths are in data packets.
//! - Init Cookies (RFC 4340 §8.1.4, `cookie.rs`): a listening endpoint may
//!   answer Requests statelessly ([`EndpointConfig::cookies`]); the cookie
//!   holds the Request itself, so the server rebuilds the connection by
//!   accepting it again when the client's Ack echoes it. Such a server
//!   answers nothing larger than the packet it got, so its clients pad
//!   their Requests ([`ConnectionConfig::request_min_len`]); a client that
//!   echoes a cookie sends no data before OPEN.
//! - Not implemented: short sequence numbers (Allow Short
//!   Seqnos is held at 0), partial checksum coverage (CsCov is 0), the ECN
//!   Nonce (RFC 3540; data leaves ECT(0) only, and the Loss Intervals
//!   option's ECN Nonce Echo is 0), Data Checksum, Timestamp options, Slow
//!   Receiver, Data Dropped and CCID 4's Dropped Packets option (received ones are ignored), shrinking the
//!   Sequence Window, and application data on Request and Response (never
//!   sent, never delivered).
//! - The Sequence Window grows with the sending rate: an endpoint keeps it at
//!   least four times the packets it sent in the last round trip and
//!   announces each increase with Change L(Sequence Window) (RFC 4340 §7.5.2
//!   leaves the sizing to the sender; the factor is a choice).
//! - ECN (RFC 4340 §12): on by default ([`ConnectionConfig::ecn`]); data
//!   packets leave ECT(0) while ECN Incapable is 0 at both ends
//!   ([`Transmit::ecn`]); the driver hands the received codepoint to
//!   [`Connection::handle_datagram_ecn`]. A CE-marked data packet is
//!   delivered, and counted as congestion: in the CCID 3/4 loss history as
//!   a lost packet (RFC 4342 §9), in CCID 2's Ack Vector as state 1
//!   (RFC 4341 §5).
//! - An Ack Vector is one option of at most 253 cells; older history is
//!   forgotten once the sender has acknowledged an Ack that carried it
//!   (RFC 4340 §11.4.2).

pub mod ack_vector;
mod ccid;
mod config;
mod connection;
mod cookie;
mod endpoint;
mod event;
mod features;
mod history;
mod input;
mod losses_per_event;
mod output;
pub mod pair;
mod seqwin;
mod state;
mod timers;
pub mod window_counter;

#[cfg(test)]
mod tests;

pub use config::{
    Ccid, ChecksumMode, ConnectionConfig, DATA_PACKET_OVERHEAD, DEFAULT_SEQUENCE_WINDOW,
    INVALID_SERVICE_CODE, MAX_SEQUENCE_WINDOW, MIN_SEQUENCE_WINDOW, SERVICE_CODE_RTP,
};
pub use connection::Connection;
pub use cookie::{CookieConfig, MAX_COOKIE_REQUEST_LEN};
pub use endpoint::{ConnectionId, Endpoint, EndpointConfig, EndpointError, EndpointStats};
pub use event::{AcceptError, ConnectionStats, Event, SendError, Transmit};
pub use seqwin::SequenceNumbers;
pub use state::{Role, State};
pub use timers::{Timer, TimerTable};
