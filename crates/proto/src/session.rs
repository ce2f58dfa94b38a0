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
pub use sender::{
    SenderSession, SessionConfig, SessionEvent, SessionSendError, SplitPolicy, DOWN_PATH_PROBE,
    MAX_HELD_REPORTS, MAX_PATHS,
};

/// Bytes of the session header in front of every datagram: the sequence
/// number.
pub const SESSION_HEADER_BYTES: usize = 4;
/// Bytes of the header of a datagram with a playout time: the sequence
/// number with its top bit set, then the playout time.
pub const SESSION_TIMED_HEADER_BYTES: usize = 8;
/// Bytes a packet-level FEC tag adds to the header (the datagram's index in
/// its Reed-Solomon block, k and n).
pub const SESSION_FEC_TAG_BYTES: usize = 4;
/// Session sequence numbers have 30 bits. The top bit of the header's first
/// word says that a 32-bit playout time in milliseconds follows (the
/// datagram's place on the media timeline, as SRT's packet timestamp, from
/// which the receiver knows its deadline); the next bit, that an FEC tag
/// follows (so that the receiver leaves to FEC what FEC will rebuild).
pub const SEQUENCE_MODULUS: u64 = 1 << 30;
const TIMED_FLAG: u32 = 1 << 31;
const FEC_FLAG: u32 = 1 << 30;

/// The token that makes a session's paths known as one (issue 19): a
/// bonded sender draws 64 random bits for the session and puts them, after
/// the four bytes `FSBP`, as the application data of every Request it
/// sends on any path ([`ConnectionConfig::request_data`]). A receiver
/// serving a session admits another source address whose Requests carry
/// the same token. The token is no secret (Requests go in clear): with a
/// passphrase, a path's connection still opens only when the sender's
/// sealed packets open (`docs/security.md`), so a stranger who read the
/// token can add nothing to the stream.
///
/// [`ConnectionConfig::request_data`]: crate::conn::ConnectionConfig::request_data
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PathToken(pub u64);

/// The four bytes in front of a [`PathToken`] in a Request.
const PATH_TOKEN_MAGIC: [u8; 4] = *b"FSBP";

impl PathToken {
    /// Bytes of a token in a Request's application data.
    pub const LEN: usize = 12;

    /// The Request application data that carries it.
    pub fn request_data(self) -> Vec<u8> {
        let mut data = Vec::with_capacity(Self::LEN);
        data.extend_from_slice(&PATH_TOKEN_MAGIC);
        data.extend_from_slice(&self.0.to_be_bytes());
        data
    }

    /// The token a Request's application data carries, if it carries one.
    pub fn from_request_data(data: &[u8]) -> Option<PathToken> {
        let rest = data.strip_prefix(&PATH_TOKEN_MAGIC)?;
        let bytes: [u8; 8] = rest.get(..8)?.try_into().ok()?;
        Some(PathToken(u64::from_be_bytes(bytes)))
    }

    /// The token carried by `bytes` if they are a valid DCCP-Request (its
    /// checksum checked with `context`) with one.
    pub fn peek_request(
        bytes: &[u8],
        context: &crate::wire::dccp::ChecksumContext,
    ) -> Option<PathToken> {
        let packet = crate::wire::dccp::DccpRepr::parse_bytes(bytes, context).ok()?;
        if packet.kind.packet_type() != crate::wire::dccp::PacketType::Request {
            return None;
        }
        PathToken::from_request_data(packet.payload)
    }
}

/// Where a datagram sits in its packet-level FEC block: RS(n, k) over k
/// data datagrams, their n − k parity datagrams sent right after them, so
/// that block b holds the n consecutive sequence numbers from the first of
/// its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FecTag {
    /// Its index in the block: 0..k for data, k..n for parity.
    pub index: u8,
    /// Data datagrams a block.
    pub k: u8,
    /// Datagrams a block, data and parity.
    pub n: u8,
}

/// The header of a session datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SessionHeader {
    /// The sequence number, modulo [`SEQUENCE_MODULUS`].
    pub(crate) seq: u32,
    /// The playout time in milliseconds, if the datagram has one.
    pub(crate) playout_ms: Option<u32>,
    /// Its place in an FEC block, if the stream carries FEC.
    pub(crate) fec: Option<FecTag>,
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
        let mut len = SESSION_HEADER_BYTES;
        let playout_ms = if first & TIMED_FLAG != 0 {
            len += 4;
            Some(word(len - 4)?)
        } else {
            None
        };
        let fec = if first & FEC_FLAG != 0 {
            let bytes = datagram.get(len..len + SESSION_FEC_TAG_BYTES)?;
            len += SESSION_FEC_TAG_BYTES;
            let tag = FecTag {
                index: bytes[0],
                k: bytes[1],
                n: bytes[2],
            };
            // A tag that cannot describe a block is ignored, as no tag.
            (tag.k >= 1 && tag.k < tag.n && tag.index < tag.n).then_some(tag)
        } else {
            None
        };
        Some((
            SessionHeader {
                seq: first & !(TIMED_FLAG | FEC_FLAG),
                playout_ms,
                fec,
            },
            len,
        ))
    }

    /// Writes the header.
    pub(crate) fn emit(&self, out: &mut Vec<u8>) {
        let mut first = self.seq & !(TIMED_FLAG | FEC_FLAG);
        if self.playout_ms.is_some() {
            first |= TIMED_FLAG;
        }
        if self.fec.is_some() {
            first |= FEC_FLAG;
        }
        out.extend_from_slice(&first.to_be_bytes());
        if let Some(ms) = self.playout_ms {
            out.extend_from_slice(&ms.to_be_bytes());
        }
        if let Some(tag) = self.fec {
            out.extend_from_slice(&[tag.index, tag.k, tag.n, 0]);
        }
    }

    /// Its length on the wire.
    pub(crate) fn len(&self) -> usize {
        SESSION_HEADER_BYTES
            + if self.playout_ms.is_some() { 4 } else { 0 }
            + if self.fec.is_some() {
                SESSION_FEC_TAG_BYTES
            } else {
                0
            }
    }
}

#[cfg(test)]
mod bonding_tests;
#[cfg(test)]
mod tests;
