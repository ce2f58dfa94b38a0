//! RTP/H.264 packets of one access unit at a time, for a sender that gets
//! its frames as they come (a live encoder, a pipe) rather than as a whole
//! [`MediaStream`](super::MediaStream).

use fairstream_proto::wire::h264::Packetizer;

use super::{rtp_packet, StreamError, CLOCK_RATE, PAYLOAD_TYPE, RTP_HEADER_BYTES};

/// The RTP timestamp of frame `index` at `fps` (90 kHz clock, RFC 6184
/// §5.1), wrapping at 2^32.
pub fn rtp_timestamp(index: u64, fps: f64) -> u32 {
    (index as f64 * CLOCK_RATE / fps).round() as u64 as u32
}

/// Turns access units into RTP packets of at most `max_packet` bytes, the
/// sequence numbers running on from one frame to the next; the marker bit
/// is set on each frame's last packet.
#[derive(Clone, Debug)]
pub struct FramePacketizer {
    max_payload: usize,
    next_sequence: u16,
}

impl FramePacketizer {
    /// A packetizer for packets of at most `max_packet` bytes (RTP header
    /// included).
    pub fn new(max_packet: usize) -> Result<FramePacketizer, StreamError> {
        let max_payload = max_packet
            .checked_sub(RTP_HEADER_BYTES)
            .filter(|p| *p >= 3)
            .ok_or_else(|| {
                StreamError::Invalid(format!(
                    "packets of {max_packet} bytes cannot carry RTP and H.264 (at least {} needed)",
                    RTP_HEADER_BYTES + 3
                ))
            })?;
        Ok(FramePacketizer {
            max_payload,
            next_sequence: 0,
        })
    }

    /// The RTP packets of one access unit whose NAL units (no start codes)
    /// are `nal_units`, with RTP timestamp `timestamp`.
    pub fn packetize<'a>(
        &mut self,
        timestamp: u32,
        nal_units: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Vec<Vec<u8>>, StreamError> {
        let mut payloads: Vec<Vec<u8>> = Vec::new();
        for nal in nal_units {
            let packetizer = Packetizer::new(nal, self.max_payload)
                .map_err(|e| StreamError::Invalid(e.to_string()))?;
            payloads.extend(packetizer.map(|fragment| fragment.to_vec()));
        }
        self.packets(timestamp, payloads)
    }

    /// The largest RTP payload.
    pub(super) fn max_payload(&self) -> usize {
        self.max_payload
    }

    /// One frame's RTP packets with these payloads.
    pub(super) fn packets(
        &mut self,
        timestamp: u32,
        payloads: Vec<Vec<u8>>,
    ) -> Result<Vec<Vec<u8>>, StreamError> {
        let last = payloads.len().saturating_sub(1);
        let mut packets = Vec::with_capacity(payloads.len());
        for (i, payload) in payloads.into_iter().enumerate() {
            packets.push(rtp_packet(
                i == last,
                PAYLOAD_TYPE,
                self.next_sequence,
                timestamp,
                &payload,
            )?);
            self.next_sequence = self.next_sequence.wrapping_add(1);
        }
        Ok(packets)
    }
}
