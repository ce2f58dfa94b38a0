//! The Generic NACK of RFC 4585 §6.2.1: a transport-layer feedback message
//! (RTPFB, packet type 205, FMT 1) that names lost packets by sequence
//! number.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |V=2|P| FMT=1   |    PT=205     |          length               |
//! |                  SSRC of packet sender                        |
//! |                  SSRC of media source                         |
//! |            PID                |             BLP               |   (FCI, repeated)
//! ```
//!
//! "The PID field is used to specify a lost packet. […] The BLP allows for
//! reporting losses of any of the 16 RTP packets immediately following the
//! RTP packet indicated by the PID. […] Bit i of the bit mask is set to 1
//! if the receiver has not received RTP packet number (PID+i+1)" (§6.2.1).
//! One entry therefore names up to 17 packets.

use super::{RtcpError, RtcpRepr};

/// Packet type of transport-layer feedback (RFC 4585 §6.1, RTPFB).
pub const PT_TRANSPORT_FEEDBACK: u8 = 205;
/// FMT of the Generic NACK (RFC 4585 §6.2.1).
pub const FMT_GENERIC_NACK: u8 = 1;
/// Bytes of one FCI entry (PID and BLP).
const ENTRY_LEN: usize = 4;

/// A Generic NACK: who asks, for which source, and the sequence numbers it
/// has not received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenericNack {
    /// SSRC of the packet sender (the receiver that asks).
    pub sender_ssrc: u32,
    /// SSRC of the media source whose packets are missing.
    pub media_ssrc: u32,
    /// The missing sequence numbers, in the order the entries name them.
    pub lost: Vec<u16>,
}

impl GenericNack {
    /// The FCI entries for `lost`: consecutive numbers within 16 of an
    /// entry's PID share its BLP. `lost` should be sorted (in sequence
    /// order); unsorted input still names every number, in more entries.
    pub fn entries(lost: &[u16]) -> Vec<(u16, u16)> {
        let mut entries: Vec<(u16, u16)> = Vec::new();
        for &seq in lost {
            if let Some((pid, blp)) = entries.last_mut() {
                let offset = seq.wrapping_sub(*pid);
                if (1..=16).contains(&offset) {
                    *blp |= 1 << (offset - 1);
                    continue;
                }
                if offset == 0 {
                    continue;
                }
            }
            entries.push((seq, 0));
        }
        entries
    }

    /// Writes the packet; an error if it would exceed `max_len` bytes, in
    /// which case [`truncated_to`](Self::truncated_to) gives a shorter one.
    pub fn emit(&self, max_len: usize) -> Result<Vec<u8>, RtcpError> {
        let entries = Self::entries(&self.lost);
        let mut body = Vec::with_capacity(8 + ENTRY_LEN * entries.len());
        body.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        body.extend_from_slice(&self.media_ssrc.to_be_bytes());
        for (pid, blp) in entries {
            body.extend_from_slice(&pid.to_be_bytes());
            body.extend_from_slice(&blp.to_be_bytes());
        }
        let repr = RtcpRepr::Other {
            packet_type: PT_TRANSPORT_FEEDBACK,
            count: FMT_GENERIC_NACK,
            body: &body,
        };
        let len = repr.buffer_len();
        if len > max_len {
            return Err(RtcpError::BufferTooShort {
                needed: len,
                len: max_len,
            });
        }
        let mut bytes = vec![0; len];
        repr.emit(&mut bytes)?;
        Ok(bytes)
    }

    /// The longest prefix of `lost` whose packet fits `max_len` bytes (at
    /// least the 12-byte header and one entry must fit for any to).
    pub fn truncated_to(&self, max_len: usize) -> GenericNack {
        let room = max_len.saturating_sub(12) / ENTRY_LEN;
        let mut kept = Vec::new();
        let mut entries = 0usize;
        let mut pid: Option<u16> = None;
        for &seq in &self.lost {
            let joins = pid.is_some_and(|pid| (0..=16).contains(&seq.wrapping_sub(pid)));
            if !joins {
                if entries == room {
                    break;
                }
                entries += 1;
                pid = Some(seq);
            }
            kept.push(seq);
        }
        GenericNack {
            sender_ssrc: self.sender_ssrc,
            media_ssrc: self.media_ssrc,
            lost: kept,
        }
    }

    /// Reads a Generic NACK from a parsed RTCP packet; `None` when it is
    /// some other packet.
    pub fn from_repr(repr: &RtcpRepr<'_>) -> Option<Result<GenericNack, RtcpError>> {
        let RtcpRepr::Other {
            packet_type: PT_TRANSPORT_FEEDBACK,
            count: FMT_GENERIC_NACK,
            body,
        } = *repr
        else {
            return None;
        };
        // §6.1: "the FCI field MUST contain at least one and MAY contain
        // more than one Generic NACK".
        if body.len() < 8 + ENTRY_LEN || body.len() % ENTRY_LEN != 0 {
            return Some(Err(RtcpError::ReportTooShort {
                packet_type: PT_TRANSPORT_FEEDBACK,
                count: FMT_GENERIC_NACK,
                needed: 4 + 8 + ENTRY_LEN,
                len: 4 + body.len(),
            }));
        }
        let word =
            |at: usize| u32::from_be_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]);
        let mut lost = Vec::new();
        for entry in body[8..].chunks_exact(ENTRY_LEN) {
            let pid = u16::from_be_bytes([entry[0], entry[1]]);
            let blp = u16::from_be_bytes([entry[2], entry[3]]);
            lost.push(pid);
            for bit in 0..16u16 {
                if blp & (1 << bit) != 0 {
                    lost.push(pid.wrapping_add(bit + 1));
                }
            }
        }
        Some(Ok(GenericNack {
            sender_ssrc: word(0),
            media_ssrc: word(4),
            lost,
        }))
    }

    /// Parses the first RTCP packet of `bytes` as a Generic NACK; `None`
    /// when it is another packet type.
    pub fn parse(bytes: &[u8]) -> Option<Result<GenericNack, RtcpError>> {
        match RtcpRepr::parse_bytes(bytes) {
            Ok(repr) => GenericNack::from_repr(&repr),
            Err(error) => Some(Err(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4585_layout_round_trips() {
        // Lost 100, 101, 103, 116 (one entry: PID 100, BLP bits 0, 2, 15)
        // and 200 (a second entry).
        let nack = GenericNack {
            sender_ssrc: 0x0102_0304,
            media_ssrc: 0x0A0B_0C0D,
            lost: vec![100, 101, 103, 116, 200],
        };
        let bytes = nack.emit(1500).unwrap();
        let expected = [
            0x81,
            205,
            0,
            4, // V=2, FMT=1, PT=205, length 4 words + 1
            1,
            2,
            3,
            4, // sender SSRC
            10,
            11,
            12,
            13, // media SSRC
            0,
            100,
            0b1000_0000,
            0b0000_0101, // PID 100, BLP 0x8005
            0,
            200,
            0,
            0, // PID 200
        ];
        assert_eq!(bytes, expected);
        assert_eq!(GenericNack::parse(&bytes), Some(Ok(nack)));
    }

    #[test]
    fn entries_wrap_around_and_skip_duplicates() {
        assert_eq!(
            GenericNack::entries(&[65_535, 0, 0, 15, 16]),
            [(65_535, 0b1000_0000_0000_0001), (16, 0)]
        );
    }

    #[test]
    fn other_packets_and_bad_lengths() {
        let receiver_report = [0x80, 201, 0, 1, 0, 0, 0, 1];
        assert_eq!(GenericNack::parse(&receiver_report), None);
        // A NACK with no FCI entry.
        let empty = [0x81, 205, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2];
        assert!(matches!(GenericNack::parse(&empty), Some(Err(_))));
        assert!(matches!(GenericNack::parse(&[0x81]), Some(Err(_))));
    }

    #[test]
    fn truncation_keeps_whole_entries_that_fit() {
        let lost: Vec<u16> = (0..200).map(|i| i * 20).collect();
        let nack = GenericNack {
            sender_ssrc: 1,
            media_ssrc: 2,
            lost,
        };
        assert!(nack.emit(100).is_err());
        let short = nack.truncated_to(100);
        assert_eq!(short.lost.len(), (100 - 12) / 4);
        assert!(short.emit(100).unwrap().len() <= 100);
    }

    proptest::proptest! {
        /// Any set of missing numbers comes back as the same set.
        #[test]
        fn every_number_survives(mut lost in proptest::collection::vec(0u16..2000, 1..300)) {
            lost.sort_unstable();
            lost.dedup();
            let nack = GenericNack { sender_ssrc: 7, media_ssrc: 9, lost: lost.clone() };
            let parsed = GenericNack::parse(&nack.emit(65_536).unwrap()).unwrap().unwrap();
            let mut back = parsed.lost;
            back.sort_unstable();
            proptest::prop_assert_eq!(back, lost);
        }

        /// No input makes the parser panic.
        #[test]
        fn parsing_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let _ = GenericNack::parse(&bytes);
        }
    }
}
