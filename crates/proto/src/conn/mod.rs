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

pub mod ack_vector;
mod ccid;
mod config;
mod connection;
mod endpoint;
mod event;
mod features;
mod history;
mod input;
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
pub use endpoint::{ConnectionId, Endpoint, EndpointConfig, EndpointError, EndpointStats};
pub use event::{AcceptError, ConnectionStats, Event, SendError, Transmit};
pub use seqwin::SequenceNumbers;
pub use state::{Role, State};
pub use timers::{Timer, TimerTable};
