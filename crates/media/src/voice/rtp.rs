//! A voice frame as an RTP packet: RFC 3551's payload types (PCMU, 0, for
//! G.711 µ-law; G729, 18), 20 ms of speech a packet, timestamps in 8 kHz
//! units, the marker bit on the first packet of a talk spurt after a
//! silence in which no packet was sent (RFC 3551 §4.1), and
//! an RFC 8285 one-byte header extension element of ours with the
//! frame's capture time on the sender's wall clock and whether the call
//! had started (paper 002's rule: the frames before are probes).
//!
//! The capture time gives the receiver each frame's one-way delay, from
//! the sender's clock to the receiver's: exact on one host, as good as the
//! two clocks' synchronisation (NTP: a few ms) between hosts.

use fairstream_proto::wire::rtp::{one_byte_element, HeaderExtension, RtpRepr, ONE_BYTE_PROFILE};
use thiserror::Error;

use super::VoiceCodec;

/// RFC 3551 Table 4: PCMU, G.711 µ-law.
pub const PAYLOAD_TYPE_PCMU: u8 = 0;
/// RFC 3551 Table 4: G729.
pub const PAYLOAD_TYPE_G729: u8 = 18;
/// The element's local ID (1 is the temporal-frame element's).
pub const CAPTURE_ID: u8 = 2;
/// The name an SDP `a=extmap` line would give the element.
pub const CAPTURE_URI: &str = "urn:fairstream:rtp-hdrext:voice-capture";
/// Bytes of the element's data: capture time (8), flags (1).
const DATA_LEN: usize = 9;
/// Bytes of the extension's data: the element's header, data and padding
/// to whole words.
const EXTENSION_DATA_LEN: usize = 12;
/// Bytes a voice packet's RTP header takes: 12 fixed, 4 of extension
/// header, 12 of extension data.
pub const VOICE_HEADER_BYTES: usize = 12 + 4 + EXTENSION_DATA_LEN;

/// What the extension says of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaptureInfo {
    /// When the frame's 20 ms were captured, nanoseconds since the Unix
    /// epoch on the sender's clock.
    pub capture_unix_ns: u64,
    /// The call had started (frames before are probes, not scored).
    pub in_call: bool,
}

/// A voice packet's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VoicePacket<'a> {
    /// The codec (from the payload type).
    pub codec: VoiceCodec,
    /// The first packet of a talk spurt.
    pub marker: bool,
    /// RTP sequence number.
    pub sequence_number: u16,
    /// RTP timestamp, 8 kHz.
    pub timestamp: u32,
    /// Synchronisation source.
    pub ssrc: u32,
    /// The capture extension.
    pub capture: CaptureInfo,
    /// The codec's frame: exactly its payload bytes.
    pub payload: &'a [u8],
}

/// Why a packet is not a voice frame.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum VoicePacketError {
    /// Not an RTP packet.
    #[error("not an RTP packet: {0}")]
    NotRtp(String),
    /// A payload type other than PCMU or G729.
    #[error("payload type {0} is neither PCMU (0) nor G729 (18)")]
    PayloadType(u8),
    /// No capture-time element.
    #[error("no capture-time header extension")]
    NoCapture,
    /// A payload of another size than the codec's 20 ms.
    #[error("a {codec} payload of {got} bytes (20 ms is {expected})")]
    PayloadLength {
        /// The codec's name.
        codec: &'static str,
        /// Its 20 ms payload.
        expected: usize,
        /// The packet's.
        got: usize,
    },
}

impl VoiceCodec {
    /// The RTP payload type (RFC 3551 Table 4).
    pub fn payload_type(self) -> u8 {
        match self {
            VoiceCodec::G711 => PAYLOAD_TYPE_PCMU,
            VoiceCodec::G729 => PAYLOAD_TYPE_G729,
        }
    }
}

impl VoicePacket<'_> {
    /// The packet's bytes.
    pub fn emit(&self) -> Vec<u8> {
        let mut data = [0u8; EXTENSION_DATA_LEN];
        data[0] = (CAPTURE_ID << 4) | (DATA_LEN as u8 - 1);
        data[1..9].copy_from_slice(&self.capture.capture_unix_ns.to_be_bytes());
        data[9] = u8::from(self.capture.in_call);
        let repr = RtpRepr {
            marker: self.marker,
            payload_type: self.codec.payload_type(),
            sequence_number: self.sequence_number,
            timestamp: self.timestamp,
            ssrc: self.ssrc,
            csrcs: Default::default(),
            extension: Some(HeaderExtension {
                profile: ONE_BYTE_PROFILE,
                data: &data,
            }),
            payload: self.payload,
            padding_len: 0,
        };
        let mut bytes = vec![0; repr.buffer_len()];
        // The buffer is the representation's length and the extension whole
        // words: emit cannot fail.
        let _ = repr.emit(&mut bytes);
        bytes
    }
}

/// Parses a voice packet, checking its payload type, extension and size.
pub fn parse(bytes: &[u8]) -> Result<VoicePacket<'_>, VoicePacketError> {
    let repr = RtpRepr::parse_bytes(bytes).map_err(|e| VoicePacketError::NotRtp(e.to_string()))?;
    let codec = match repr.payload_type {
        PAYLOAD_TYPE_PCMU => VoiceCodec::G711,
        PAYLOAD_TYPE_G729 => VoiceCodec::G729,
        other => return Err(VoicePacketError::PayloadType(other)),
    };
    let element = repr
        .extension
        .filter(|e| e.profile == ONE_BYTE_PROFILE)
        .and_then(|e| one_byte_element(e.data, CAPTURE_ID))
        .filter(|v| v.len() == DATA_LEN)
        .ok_or(VoicePacketError::NoCapture)?;
    let mut time = [0u8; 8];
    time.copy_from_slice(&element[..8]);
    let expected = codec.payload_bytes() as usize;
    if repr.payload.len() != expected {
        return Err(VoicePacketError::PayloadLength {
            codec: codec.name(),
            expected,
            got: repr.payload.len(),
        });
    }
    Ok(VoicePacket {
        codec,
        marker: repr.marker,
        sequence_number: repr.sequence_number,
        timestamp: repr.timestamp,
        ssrc: repr.ssrc,
        capture: CaptureInfo {
            capture_unix_ns: u64::from_be_bytes(time),
            in_call: element[8] & 1 == 1,
        },
        payload: repr.payload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_pcmu_packet_round_trips_with_its_fields_where_rfc_3550_puts_them() {
        let payload = [0xFFu8; 160];
        let packet = VoicePacket {
            codec: VoiceCodec::G711,
            marker: true,
            sequence_number: 0x1234,
            timestamp: 160 * 7,
            ssrc: 0xDEAD_BEEF,
            capture: CaptureInfo {
                capture_unix_ns: 0x0102_0304_0506_0708,
                in_call: true,
            },
            payload: &payload,
        };
        let bytes = packet.emit();
        assert_eq!(bytes.len(), VOICE_HEADER_BYTES + 160);
        // V=2, X=1; M=1, PT=0 (PCMU).
        assert_eq!(&bytes[..4], &[0x90, 0x80, 0x12, 0x34]);
        assert_eq!(&bytes[4..8], &(1120u32).to_be_bytes());
        // 0xBEDE, 3 words; element ID 2, length 9 (L = 8).
        assert_eq!(&bytes[12..17], &[0xBE, 0xDE, 0x00, 0x03, 0x28]);
        assert_eq!(&bytes[17..25], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(bytes[25], 1);
        assert_eq!(parse(&bytes), Ok(packet));
    }

    #[test]
    fn other_packets_are_refused_with_their_reason() {
        assert!(matches!(parse(&[0u8; 4]), Err(VoicePacketError::NotRtp(_))));
        let payload = [0u8; 160];
        let mut packet = VoicePacket {
            codec: VoiceCodec::G711,
            marker: false,
            sequence_number: 1,
            timestamp: 0,
            ssrc: 1,
            capture: CaptureInfo {
                capture_unix_ns: 0,
                in_call: false,
            },
            payload: &payload[..100],
        };
        assert_eq!(
            parse(&packet.emit()),
            Err(VoicePacketError::PayloadLength {
                codec: "g711",
                expected: 160,
                got: 100
            })
        );
        packet.payload = &payload[..20];
        packet.codec = VoiceCodec::G729;
        let mut bytes = packet.emit();
        assert!(parse(&bytes).is_ok());
        bytes[1] = 96;
        assert_eq!(parse(&bytes), Err(VoicePacketError::PayloadType(96)));
        bytes[1] = 18;
        bytes[16] = 0x18; // element ID 1: not ours
        assert_eq!(parse(&bytes), Err(VoicePacketError::NoCapture));
    }

    proptest! {
        #[test]
        fn any_bytes_parse_or_are_refused_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse(&bytes);
        }
    }
}
