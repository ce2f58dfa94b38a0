//! One media stream over several DCCP connections (papers 001 and 000): the
//! sender splits the stream's datagrams over N connections whose count a
//! [`ConnectionCounter`](crate::cc::multi::ConnectionCounter) decides; the
//! receiver merges them back into one ordered stream.
//!
//! Every datagram carries a 31-bit session sequence number in front of the
//! application's bytes, so that the receiver can restore the order whatever
//! connection carried it ([`reorder`]), and may carry its playout time, so
//! that the receiver waits for a missing datagram no longer than what
//! follows it can wait ([`SESSION_TIMED_HEADER_BYTES`]). What was lost can
//! be asked for again ([`arq`]).
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

/// Bytes of the session header in front of every datagram: the sequence
/// number.
pub const SESSION_HEADER_BYTES: usize = 4;
/// Bytes of the header of a datagram with a playout time: the sequence
/// number with its top bit set, then the playout time.
pub const SESSION_TIMED_HEADER_BYTES: usize = 8;
/// Session sequence numbers have 31 bits; the top bit of the header's
/// first word says that a 32-bit playout time in milliseconds follows
/// (the datagram's place on the media timeline, as SRT's packet timestamp,
/// from which the receiver knows its deadline).
pub const SEQUENCE_MODULUS: u64 = 1 << 31;
const TIMED_FLAG: u32 = 1 << 31;

/// The header of a session datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SessionHeader {
    /// The sequence number, modulo [`SEQUENCE_MODULUS`].
    pub(crate) seq: u32,
    /// The playout time in milliseconds, if the datagram has one.
    pub(crate) playout_ms: Option<u32>,
}

impl SessionHeader {
    /// Reads the header; `None` if the datagram is too short. Returns the
    /// header and its length.
    pub(crate) fn parse(datagram: &[u8]) -> Option<(SessionHeader, usize)> {
        let word = |at: usize| {
            let bytes = datagram.get(at..at + 4)?;
            Some(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
        };
        let first = word(0)?;
        if first & TIMED_FLAG == 0 {
            return Some((
                SessionHeader {
                    seq: first,
                    playout_ms: None,
                },
                SESSION_HEADER_BYTES,
            ));
        }
        Some((
            SessionHeader {
                seq: first & !TIMED_FLAG,
                playout_ms: Some(word(4)?),
            },
            SESSION_TIMED_HEADER_BYTES,
        ))
    }

    /// Writes the header.
    pub(crate) fn emit(&self, out: &mut Vec<u8>) {
        let seq = self.seq & !TIMED_FLAG;
        match self.playout_ms {
            None => out.extend_from_slice(&seq.to_be_bytes()),
            Some(ms) => {
                out.extend_from_slice(&(seq | TIMED_FLAG).to_be_bytes());
                out.extend_from_slice(&ms.to_be_bytes());
            }
        }
    }

    /// Its length on the wire.
    pub(crate) fn len(&self) -> usize {
        if self.playout_ms.is_some() {
            SESSION_TIMED_HEADER_BYTES
        } else {
            SESSION_HEADER_BYTES
        }
    }
}

#[cfg(test)]
mod tests;
