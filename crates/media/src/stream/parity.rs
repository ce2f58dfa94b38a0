//! The wire format of FEC parity packets, shared by the simulator and the
//! real-time sender and receiver: an RTP packet of payload type
//! [`FEC_PAYLOAD_TYPE`](super::FEC_PAYLOAD_TYPE) whose payload is the
//! block number (4 bytes, big-endian), the parity index, k and n (1 byte
//! each), then the parity shard ([`crate::fec`]). Block b covers the data
//! packets numbered b·k .. b·k + k (RTP sequence numbers counted from 0).

use super::{rtp_packet, StreamError, FEC_HEADER_BYTES, RTP_HEADER_BYTES};

/// Bytes a parity packet is longer than the longest data packet of its
/// block: its RTP header, the parity header and a shard's length prefix.
pub const PARITY_OVERHEAD: usize = RTP_HEADER_BYTES + FEC_HEADER_BYTES + 2;

/// The header of a parity packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParityHeader {
    /// The block number (modulo 2³²).
    pub block: u32,
    /// The packet's index among the block's n − k parity packets.
    pub index: u8,
    /// Data packets a block.
    pub k: u8,
    /// Packets a block, data and parity.
    pub n: u8,
}

/// A whole parity packet (RTP header included).
pub fn parity_rtp_packet(
    header: ParityHeader,
    sequence_number: u16,
    timestamp: u32,
    shard: &[u8],
) -> Result<Vec<u8>, StreamError> {
    let mut payload = Vec::with_capacity(FEC_HEADER_BYTES + shard.len());
    payload.extend_from_slice(&header.block.to_be_bytes());
    payload.extend_from_slice(&[header.index, header.k, header.n]);
    payload.extend_from_slice(shard);
    rtp_packet(
        false,
        super::FEC_PAYLOAD_TYPE,
        sequence_number,
        timestamp,
        &payload,
    )
}

/// The header and shard of a parity packet's RTP payload; `None` when it
/// is too short or names no code (it needs 1 ≤ k < n and index < n − k).
pub fn parse_parity(payload: &[u8]) -> Option<(ParityHeader, &[u8])> {
    let header = payload.get(..FEC_HEADER_BYTES)?;
    let shard = payload.get(FEC_HEADER_BYTES..)?;
    let parsed = ParityHeader {
        block: u32::from_be_bytes([header[0], header[1], header[2], header[3]]),
        index: header[4],
        k: header[5],
        n: header[6],
    };
    let valid = parsed.k >= 1
        && parsed.n > parsed.k
        && parsed.index < parsed.n - parsed.k
        && !shard.is_empty();
    valid.then_some((parsed, shard))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairstream_proto::wire::rtp::RtpRepr;

    #[test]
    fn round_trip_and_refusals() {
        let header = ParityHeader {
            block: 7,
            index: 1,
            k: 20,
            n: 24,
        };
        let bytes = parity_rtp_packet(header, 3, 9000, &[1, 2, 3]).unwrap();
        let rtp = RtpRepr::parse_bytes(&bytes).unwrap();
        assert_eq!(rtp.payload_type, super::super::FEC_PAYLOAD_TYPE);
        assert_eq!(parse_parity(rtp.payload), Some((header, &[1u8, 2, 3][..])));
        assert_eq!(parse_parity(&[0, 0, 0, 1, 0, 5]), None);
        assert_eq!(parse_parity(&[0, 0, 0, 1, 4, 20, 24, 9]), None);
        assert_eq!(parse_parity(&[0, 0, 0, 1, 0, 0, 24, 9]), None);
        assert_eq!(parse_parity(&[0, 0, 0, 1, 0, 20, 20, 9]), None);
    }
}
