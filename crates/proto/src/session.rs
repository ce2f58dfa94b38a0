//! One media stream over several DCCP connections (papers 001 and 000): the
//! sender splits the stream's datagrams over N connections whose count a
//! [`ConnectionCounter`](crate::cc::multi::ConnectionCounter) decides; the
//! receiver merges them back into one ordered stream.
//!
//! Every datagram carries a 4-byte session sequence number in front of the
//! application's bytes, so that the receiver can restore the order whatever
//! connection carried it ([`reorder`]).
//!
//! The driver contract is the connections' (see [`Connection`]): inputs
//! (`handle_datagram`, `handle_timeout`), then `poll_transmit` until `None`,
//! `poll_event` until `None`, and `poll_timeout`.
//!
//! [`Connection`]: crate::conn::Connection

pub mod arq;
mod receiver;
pub mod reorder;
mod sender;

pub use arq::{ArqConfig, DatagramMeta, ReceiverArqStats, SenderArqStats};
pub use receiver::{ReceiverSession, ReceiverSessionStats};
pub use reorder::{ReorderBuffer, ReorderConfig, ReorderStats};
pub use sender::{SenderSession, SessionConfig, SessionEvent, SessionSendError, SplitPolicy};

/// Bytes of the session header in front of every datagram.
pub const SESSION_HEADER_BYTES: usize = 4;

#[cfg(test)]
mod tests;
