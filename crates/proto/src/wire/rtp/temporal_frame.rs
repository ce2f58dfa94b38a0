//! The temporal-frame header extension: what a receiver of a temporally
//! layered stream must know of every packet to drive paper 004's
//! receiver-buffer controller (`crate::cc::buffer`), carried in the RTP
//! header extension in the one-byte form of RFC 8285 §4.2.
//!
//! RFC 8285 §4.2: the extension's profile field is `0xBEDE`; each element
//! is a byte with a 4-bit ID and a 4-bit length L (the data is L + 1
//! bytes, 1 to 16), then its data; "The ID value 0 … padding", skipped;
//! "The local identifier value 15 is reserved for a future extension and
//! MUST NOT be used as an identifier. If the ID value 15 is encountered,
//! its length field MUST be ignored, processing of the entire extension
//! MUST terminate at that point". The extension is padded with zero bytes
//! to a whole number of 32-bit words (RFC 3550 §5.3.1).
//!
//! The element has ID [`TEMPORAL_FRAME_ID`] (RFC 8285 leaves the ID to
//! signalling, `a=extmap` in SDP; fairstream's two ends agree on 1, named
//! [`TEMPORAL_FRAME_URI`]) and 13 bytes of data, big-endian:
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |      0xBE     |      0xDE     |         length = 4            |
//! |  ID=1 | L=12  |          frame index (32 bits) ...            |
//! |      ...      |  TID  |   T   |       frame bytes (32 bits) ...
//! |          ...                  |    frame interval (µs) ...    |
//! |          ...                  |    0 (padding)   |    0       |
//! ```
//!
//! - **frame index**: the frame's number in the stream from 0 (the RTP
//!   timestamp does not say it once frames are dropped);
//! - **TID**: its temporal layer, 0 (the base) to T − 1; **T**: the
//!   stream's temporal layers, 1 to 15 (OpenH264 encodes up to 4);
//! - **frame bytes**: the bytes of all the RTP packets of the frame
//!   (headers, this extension and payloads), so that a receiver adding up
//!   what arrived knows when the frame is whole;
//! - **frame interval**: 1/fps in microseconds, at least 1.
//!
//! A frame that was dropped before sending has no packet at all. Other
//! elements in the same extension are skipped; the first element with this
//! ID is the one read.

use super::HeaderExtension;

/// RFC 8285 §4.2: the profile of the one-byte header form.
pub const ONE_BYTE_PROFILE: u16 = 0xBEDE;
/// The element's local ID.
pub const TEMPORAL_FRAME_ID: u8 = 1;
/// The name an SDP `a=extmap` line would give the element.
pub const TEMPORAL_FRAME_URI: &str = "urn:fairstream:rtp-hdrext:temporal-frame";
/// Bytes of the element's data.
const DATA_LEN: usize = 13;
/// Bytes of the extension data the element takes (element header and
/// padding included): four 32-bit words.
pub const TEMPORAL_FRAME_EXTENSION_DATA_LEN: usize = 16;
/// Bytes the extension adds to an RTP packet: its 4-byte header and its
/// data.
pub const TEMPORAL_FRAME_EXTENSION_LEN: usize = 4 + TEMPORAL_FRAME_EXTENSION_DATA_LEN;

/// What the element says of a packet's frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TemporalFrameInfo {
    /// The frame's number from 0.
    pub frame_index: u32,
    /// Its temporal layer: 0 (the base) to `layers − 1`.
    pub temporal_id: u8,
    /// The stream's temporal layers, 1 to 15.
    pub layers: u8,
    /// The bytes of all the RTP packets of the frame.
    pub frame_bytes: u32,
    /// 1/fps, microseconds (at least 1).
    pub frame_interval_us: u32,
}

/// Why an extension's element is not a temporal-frame element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemporalFrameError {
    /// The element has another length than the layout's 13 bytes.
    #[error("temporal-frame element of {len} bytes; the layout has {DATA_LEN}")]
    WrongLength {
        /// Its data length.
        len: usize,
    },
    /// The layer count is 0, or the temporal id is not below it.
    #[error("temporal id {temporal_id} of {layers} temporal layers")]
    Layer {
        /// The temporal id.
        temporal_id: u8,
        /// The layer count.
        layers: u8,
    },
    /// A frame interval of zero.
    #[error("a frame interval of 0 µs")]
    FrameInterval,
}

impl TemporalFrameInfo {
    /// The extension data carrying this element alone (RFC 8285 one-byte
    /// form: element header, data, zero padding), to go in a
    /// [`HeaderExtension`] with profile [`ONE_BYTE_PROFILE`].
    pub fn extension_data(&self) -> [u8; TEMPORAL_FRAME_EXTENSION_DATA_LEN] {
        let mut data = [0u8; TEMPORAL_FRAME_EXTENSION_DATA_LEN];
        // ID in the high nibble, length − 1 in the low one (RFC 8285 §4.2).
        data[0] = (TEMPORAL_FRAME_ID << 4) | (DATA_LEN as u8 - 1);
        data[1..5].copy_from_slice(&self.frame_index.to_be_bytes());
        data[5] = (self.temporal_id << 4) | (self.layers & 0x0f);
        data[6..10].copy_from_slice(&self.frame_bytes.to_be_bytes());
        data[10..14].copy_from_slice(&self.frame_interval_us.to_be_bytes());
        data
    }

    /// The element of a packet's header extension: `None` when the packet
    /// has no one-byte extension or no element with
    /// [`TEMPORAL_FRAME_ID`]; an error when that element is malformed.
    pub fn from_extension(
        extension: &HeaderExtension<'_>,
    ) -> Option<Result<TemporalFrameInfo, TemporalFrameError>> {
        if extension.profile != ONE_BYTE_PROFILE {
            return None;
        }
        let data = one_byte_element(extension.data, TEMPORAL_FRAME_ID)?;
        Some(TemporalFrameInfo::parse(data))
    }

    fn parse(data: &[u8]) -> Result<TemporalFrameInfo, TemporalFrameError> {
        let Ok(data) = <&[u8; DATA_LEN]>::try_from(data) else {
            return Err(TemporalFrameError::WrongLength { len: data.len() });
        };
        let word =
            |at: usize| u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
        let (temporal_id, layers) = (data[4] >> 4, data[4] & 0x0f);
        if layers == 0 || temporal_id >= layers {
            return Err(TemporalFrameError::Layer {
                temporal_id,
                layers,
            });
        }
        let frame_interval_us = word(9);
        if frame_interval_us == 0 {
            return Err(TemporalFrameError::FrameInterval);
        }
        Ok(TemporalFrameInfo {
            frame_index: word(0),
            temporal_id,
            layers,
            frame_bytes: word(5),
            frame_interval_us,
        })
    }
}

/// The data of the first element with ID `id` in one-byte-form extension
/// data (RFC 8285 §4.2), if there is one before the data ends, an ID 15, or
/// an element that runs past the end.
pub fn one_byte_element(mut data: &[u8], id: u8) -> Option<&[u8]> {
    while let Some((&header, rest)) = data.split_first() {
        let element_id = header >> 4;
        match element_id {
            // Padding: a single zero byte.
            0 => data = rest,
            // "processing of the entire extension MUST terminate".
            15 => return None,
            _ => {
                let len = usize::from(header & 0x0f) + 1;
                let value = rest.get(..len)?;
                if element_id == id {
                    return Some(value);
                }
                data = rest.get(len..)?;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::rtp::{CsrcList, RtpRepr};

    fn info() -> TemporalFrameInfo {
        TemporalFrameInfo {
            frame_index: 0x0102_0304,
            temporal_id: 2,
            layers: 3,
            frame_bytes: 0x0000_1234,
            frame_interval_us: 40_000,
        }
    }

    #[test]
    fn the_element_has_the_documented_bytes_and_reads_back() {
        let data = info().extension_data();
        assert_eq!(
            data,
            [
                0x1c, 0x01, 0x02, 0x03, 0x04, 0x23, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x9c, 0x40,
                0x00, 0x00
            ]
        );
        let extension = HeaderExtension {
            profile: ONE_BYTE_PROFILE,
            data: &data,
        };
        assert_eq!(
            TemporalFrameInfo::from_extension(&extension),
            Some(Ok(info()))
        );
    }

    #[test]
    fn it_round_trips_through_an_rtp_packet() {
        let data = info().extension_data();
        let repr = RtpRepr {
            marker: true,
            payload_type: 96,
            sequence_number: 7,
            timestamp: 3600,
            ssrc: 1,
            csrcs: CsrcList::new(),
            extension: Some(HeaderExtension {
                profile: ONE_BYTE_PROFILE,
                data: &data,
            }),
            payload: &[0x41, 1, 2, 3],
            padding_len: 0,
        };
        assert_eq!(repr.header_len(), 12 + TEMPORAL_FRAME_EXTENSION_LEN);
        let mut bytes = vec![0; repr.buffer_len()];
        repr.emit(&mut bytes).unwrap();
        let parsed = RtpRepr::parse_bytes(&bytes).unwrap();
        assert_eq!(parsed.payload, &[0x41, 1, 2, 3]);
        let extension = parsed.extension.unwrap();
        assert_eq!(
            TemporalFrameInfo::from_extension(&extension),
            Some(Ok(info()))
        );
    }

    #[test]
    fn padding_other_elements_and_the_stop_id_are_honoured() {
        // Padding, an element of ID 2 (2 bytes), then ours.
        let mut data = vec![0, 0, 0x21, 0xaa, 0xbb];
        data.extend_from_slice(&info().extension_data()[..14]);
        data.resize(20, 0);
        assert_eq!(
            one_byte_element(&data, TEMPORAL_FRAME_ID).map(<[u8]>::len),
            Some(13)
        );
        assert_eq!(one_byte_element(&data, 2), Some(&[0xaa, 0xbb][..]));
        // ID 15 ends the processing before ours.
        let stopped = [0xf0, 0x1c, 1, 2];
        assert_eq!(one_byte_element(&stopped, TEMPORAL_FRAME_ID), None);
        // An element running past the end is not read.
        assert_eq!(one_byte_element(&[0x1c, 1, 2], TEMPORAL_FRAME_ID), None);
        // Another profile (RFC 8285 two-byte form) is not read.
        let two_byte = HeaderExtension {
            profile: 0x1000,
            data: &info().extension_data(),
        };
        assert_eq!(TemporalFrameInfo::from_extension(&two_byte), None);
    }

    #[test]
    fn malformed_elements_are_named() {
        let parse = |data: &[u8]| {
            TemporalFrameInfo::from_extension(&HeaderExtension {
                profile: ONE_BYTE_PROFILE,
                data,
            })
        };
        assert_eq!(
            parse(&[0x11, 0, 0, 0, 0]),
            Some(Err(TemporalFrameError::WrongLength { len: 2 }))
        );
        let mut data = info().extension_data();
        data[5] = 0x33;
        assert_eq!(
            parse(&data),
            Some(Err(TemporalFrameError::Layer {
                temporal_id: 3,
                layers: 3
            }))
        );
        let mut data = info().extension_data();
        data[10..14].fill(0);
        assert_eq!(parse(&data), Some(Err(TemporalFrameError::FrameInterval)));
    }

    proptest::proptest! {
        #[test]
        fn no_extension_data_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let _ = TemporalFrameInfo::from_extension(&HeaderExtension {
                profile: ONE_BYTE_PROFILE,
                data: &data,
            });
        }

        #[test]
        fn every_valid_element_round_trips(
            frame_index: u32,
            layers in 1u8..=15,
            tid in 0u8..15,
            frame_bytes: u32,
            frame_interval_us in 1u32..,
        ) {
            let info = TemporalFrameInfo {
                frame_index,
                temporal_id: tid % layers,
                layers,
                frame_bytes,
                frame_interval_us,
            };
            let data = info.extension_data();
            let extension = HeaderExtension { profile: ONE_BYTE_PROFILE, data: &data };
            proptest::prop_assert_eq!(TemporalFrameInfo::from_extension(&extension), Some(Ok(info)));
        }
    }
}
