//! The receiver-buffer report of paper 004 (§2.4: the receiver sends "the
//! average buffer occupancy in bits and the proportional temporal
//! occupancy"), carried as an RTCP APP packet (RFC 3550 §6.7, packet type
//! 204) named `FSBF`, subtype 0.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |V=2|P| subtype |    PT=204     |          length = 16          |
//! |                      SSRC of the receiver                     |
//! |                        name = "FSBF"                          |
//! |                     feedback seq (64 bits)                    |
//! |                                                               |
//! |          B_av_obs, average occupancy in bits (64 bits)        |
//! |                                                               |
//! |               B_av_size, full buffer bits (64 bits)           |
//! |                                                               |
//! |                   occupancy (microseconds)                    |
//! |                     span (microseconds)                       |
//! |                    deficit (microseconds)                     |
//! |        η (1/65535 units)      |    flags (C = 1, L = 2)       |
//! |                   underruns (64 bits)                         |
//! |                                                               |
//! |                receive rate, bits/s (64 bits)                 |
//! |                                                               |
//! ```
//!
//! RFC 3550 §6.7 leaves the data "application-dependent"; the layout is
//! ours. Times are microseconds, saturating at 2³² − 1 µs (71 minutes);
//! η is rounded to 1/65535; C says congestion (eq. 1), L that losses were
//! observed. Flag bits other than C and L are written as zero and ignored
//! when read, so that a later version may use them.

use std::time::Duration;

use super::{RtcpError, RtcpRepr, PT_APP};
use crate::cc::buffer::{BufferFeedback, Share};
use crate::units::Rate;

/// The APP packet's name (RFC 3550 §6.7: four ASCII characters).
pub const BUFFER_REPORT_NAME: [u8; 4] = *b"FSBF";
/// The APP subtype of this layout.
pub const BUFFER_REPORT_SUBTYPE: u8 = 0;
/// Bytes of the application-dependent data.
const DATA_LEN: usize = 56;
/// Bytes of the whole packet: common header, SSRC, name, data.
pub const BUFFER_REPORT_LEN: usize = 4 + 4 + 4 + DATA_LEN;

const FLAG_CONGESTED: u16 = 1;
const FLAG_LOSSES: u16 = 2;

/// A receiver-buffer report: who sends it and what it says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufferReport {
    /// SSRC of the receiver that sends it.
    pub ssrc: u32,
    /// The feedback.
    pub feedback: BufferFeedback,
}

/// Why bytes are not a buffer report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BufferReportError {
    /// Not an RTCP packet, or a malformed one.
    #[error(transparent)]
    Rtcp(#[from] RtcpError),
    /// An `FSBF` APP packet of another length.
    #[error("an FSBF report carries {expected} bytes of data, this one {len}")]
    WrongLength {
        /// What the layout needs.
        expected: usize,
        /// What the packet had.
        len: usize,
    },
}

impl BufferReport {
    /// Writes the packet: [`BUFFER_REPORT_LEN`] bytes.
    pub fn emit(&self) -> Vec<u8> {
        let f = &self.feedback;
        let mut body = Vec::with_capacity(8 + DATA_LEN);
        body.extend_from_slice(&self.ssrc.to_be_bytes());
        body.extend_from_slice(&BUFFER_REPORT_NAME);
        body.extend_from_slice(&f.seq.to_be_bytes());
        body.extend_from_slice(&f.average_occupancy_bits.to_be_bytes());
        body.extend_from_slice(&f.full_buffer_bits.to_be_bytes());
        for time in [f.occupancy, f.span, f.deficit] {
            body.extend_from_slice(&micros(time).to_be_bytes());
        }
        // `as` saturates; a share is in [0, 1].
        let eta = (f.eta.get() * f64::from(u16::MAX)).round() as u16;
        body.extend_from_slice(&eta.to_be_bytes());
        let flags = if f.congested { FLAG_CONGESTED } else { 0 }
            | if f.losses_observed { FLAG_LOSSES } else { 0 };
        body.extend_from_slice(&flags.to_be_bytes());
        body.extend_from_slice(&f.underruns.to_be_bytes());
        // `as` saturates: a rate above 2⁶⁴ bit/s is written as the most.
        let rate = f.receive_rate.bits_per_sec().round() as u64;
        body.extend_from_slice(&rate.to_be_bytes());
        let repr = RtcpRepr::Other {
            packet_type: PT_APP,
            count: BUFFER_REPORT_SUBTYPE,
            body: &body,
        };
        let mut bytes = vec![0; repr.buffer_len()];
        // The buffer is exactly the packet's length, which `emit` accepts.
        let _ = repr.emit(&mut bytes);
        bytes
    }

    /// Reads a buffer report from a parsed RTCP packet; `None` when it is
    /// another packet (another type, APP name or subtype).
    pub fn from_repr(repr: &RtcpRepr<'_>) -> Option<Result<BufferReport, BufferReportError>> {
        let RtcpRepr::Other {
            packet_type: PT_APP,
            count: BUFFER_REPORT_SUBTYPE,
            body,
        } = *repr
        else {
            return None;
        };
        if body.get(4..8) != Some(BUFFER_REPORT_NAME.as_slice()) {
            return None;
        }
        let data = &body[8..];
        if data.len() != DATA_LEN {
            return Some(Err(BufferReportError::WrongLength {
                expected: DATA_LEN,
                len: data.len(),
            }));
        }
        let mut reader = Reader { bytes: data, at: 0 };
        let ssrc = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
        let seq = reader.u64();
        let average_occupancy_bits = reader.u64();
        let full_buffer_bits = reader.u64();
        let occupancy = Duration::from_micros(u64::from(reader.u32()));
        let span = Duration::from_micros(u64::from(reader.u32()));
        let deficit = Duration::from_micros(u64::from(reader.u32()));
        let eta = Share::new(f64::from(reader.u16()) / f64::from(u16::MAX));
        let flags = reader.u16();
        let underruns = reader.u64();
        let receive_rate = Rate::from_bits_per_sec(reader.u64() as f64);
        Some(Ok(BufferReport {
            ssrc,
            feedback: BufferFeedback {
                seq,
                average_occupancy_bits,
                full_buffer_bits,
                occupancy,
                span,
                eta,
                congested: flags & FLAG_CONGESTED != 0,
                losses_observed: flags & FLAG_LOSSES != 0,
                deficit,
                underruns,
                receive_rate,
            },
        }))
    }

    /// Parses the first RTCP packet of `bytes` as a buffer report; `None`
    /// when it is another packet.
    pub fn parse(bytes: &[u8]) -> Option<Result<BufferReport, BufferReportError>> {
        match RtcpRepr::parse_bytes(bytes) {
            Ok(repr) => BufferReport::from_repr(&repr),
            Err(error) => Some(Err(error.into())),
        }
    }
}

/// `time` in whole microseconds, at most 2³² − 1.
fn micros(time: Duration) -> u32 {
    u32::try_from(time.as_micros()).unwrap_or(u32::MAX)
}

/// Big-endian fields read in order from a slice whose length was checked.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        if let Some(field) = self.bytes.get(self.at..self.at + N) {
            out.copy_from_slice(field);
        }
        self.at += N;
        out
    }

    fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.take())
    }

    fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.take())
    }

    fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feedback() -> BufferFeedback {
        BufferFeedback {
            seq: 7,
            average_occupancy_bits: 412_345,
            full_buffer_bits: 500_000,
            occupancy: Duration::from_millis(1240),
            span: Duration::from_millis(1320),
            eta: Share::new(0.8246),
            congested: true,
            losses_observed: false,
            deficit: Duration::from_millis(680),
            underruns: 2,
            receive_rate: Rate::from_bits_per_sec(245_000.0),
        }
    }

    #[test]
    fn round_trips_at_the_layout_s_precision() {
        let report = BufferReport {
            ssrc: 0xDEAD_BEEF,
            feedback: feedback(),
        };
        let bytes = report.emit();
        assert_eq!(bytes.len(), BUFFER_REPORT_LEN);
        // V = 2, subtype 0, PT 204, length 16 words after the first.
        assert_eq!(&bytes[..4], &[0x80, 204, 0, 16]);
        assert_eq!(&bytes[8..12], b"FSBF");
        let back = BufferReport::parse(&bytes)
            .expect("an FSBF packet")
            .expect("well formed");
        assert_eq!(back.ssrc, 0xDEAD_BEEF);
        let (sent, got) = (report.feedback, back.feedback);
        assert!((sent.eta.get() - got.eta.get()).abs() <= 0.5 / 65535.0);
        assert_eq!(
            BufferFeedback {
                eta: sent.eta,
                ..got
            },
            sent
        );
    }

    #[test]
    fn other_rtcp_packets_are_not_reports() {
        let mut bytes = BufferReport {
            ssrc: 1,
            feedback: feedback(),
        }
        .emit();
        bytes[8..12].copy_from_slice(b"ABCD");
        assert!(BufferReport::parse(&bytes).is_none());
        bytes[8..12].copy_from_slice(b"FSBF");
        bytes[0] = 0x81; // subtype 1
        assert!(BufferReport::parse(&bytes).is_none());
    }

    #[test]
    fn truncated_and_padded_reports_are_refused() {
        let bytes = BufferReport {
            ssrc: 1,
            feedback: feedback(),
        }
        .emit();
        // One word short: the length field says 15.
        let mut short = bytes[..bytes.len() - 4].to_vec();
        short[3] = 15;
        assert!(matches!(
            BufferReport::parse(&short),
            Some(Err(BufferReportError::WrongLength { len: 52, .. }))
        ));
        // Cut without fixing the length: the RTCP layer refuses it.
        assert!(matches!(
            BufferReport::parse(&bytes[..20]),
            Some(Err(BufferReportError::Rtcp(_)))
        ));
    }

    #[test]
    fn long_times_saturate_and_unknown_flags_are_ignored() {
        let mut f = feedback();
        f.span = Duration::from_secs(10_000);
        let mut bytes = BufferReport {
            ssrc: 1,
            feedback: f,
        }
        .emit();
        // Flags are the last two bytes before underruns (offset 12 + 40).
        bytes[12 + 38] = 0xFF;
        let back = BufferReport::parse(&bytes)
            .expect("an FSBF packet")
            .expect("well formed")
            .feedback;
        assert_eq!(back.span, Duration::from_micros(u64::from(u32::MAX)));
        assert!(back.congested);
        assert!(!back.losses_observed);
    }
}
