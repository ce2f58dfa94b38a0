//! Sender information and reception report blocks (RFC 3550 §6.4.1), and the
//! NTP timestamp formats they use.

use std::time::Duration;

use super::list::WireItem;
use super::{be_u32, put, RtcpError, REPORT_BLOCK_LEN};

/// The 64-bit NTP timestamp of a sender report: seconds since 1900 in the
/// high 32 bits, the fraction of a second in the low 32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NtpTimestamp(pub u64);

impl NtpTimestamp {
    /// From whole seconds and a binary fraction (units of 2⁻³² s).
    pub const fn from_parts(seconds: u32, fraction: u32) -> Self {
        NtpTimestamp(((seconds as u64) << 32) | fraction as u64)
    }

    /// Whole seconds.
    pub const fn seconds(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The fraction of a second, in units of 2⁻³² s.
    pub const fn fraction(self) -> u32 {
        self.0 as u32
    }

    /// The middle 32 bits: the compact form a report block echoes as LSR.
    ///
    /// RFC 3550 §6.4.1: LSR is "the middle 32 bits out of 64 in the NTP
    /// timestamp ... received as part of the most recent RTCP sender report".
    pub const fn compact(self) -> u32 {
        (self.0 >> 16) as u32
    }
}

/// Converts a compact NTP value (16.16 fixed-point seconds, as DLSR) to a
/// duration.
pub fn compact_ntp_to_duration(compact: u32) -> Duration {
    Duration::from_secs(u64::from(compact >> 16))
        + Duration::from_nanos((u64::from(compact & 0xffff) * 1_000_000_000) >> 16)
}

/// Converts a duration to compact NTP units (1/65536 s, as DLSR), rounding
/// down and saturating at about 18.2 hours.
pub fn duration_to_compact_ntp(duration: Duration) -> u32 {
    let units = duration.as_nanos().saturating_mul(65_536) / 1_000_000_000;
    u32::try_from(units).unwrap_or(u32::MAX)
}

/// The sender information of a sender report (RFC 3550 §6.4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderInfo {
    /// Wallclock time when the report was sent.
    pub ntp_timestamp: NtpTimestamp,
    /// The same instant in RTP timestamp units.
    pub rtp_timestamp: u32,
    /// Data packets sent since the start of transmission (the sender's
    /// packet count).
    pub packet_count: u32,
    /// Payload octets sent since the start of transmission (the sender's
    /// octet count).
    pub octet_count: u32,
}

/// Clamps a loss count to the 24-bit signed field of a report block, as RFC
/// 3550 Appendix A.3 asks: "clamp at 0x7fffff for positive loss or 0x800000
/// for negative loss".
pub fn clamp_cumulative_lost(lost: i64) -> i32 {
    // The clamp bounds fit an i32.
    lost.clamp(-0x80_0000, 0x7f_ffff) as i32
}

/// One reception report block (RFC 3550 §6.4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReportBlock {
    /// The source this block reports on (SSRC_n).
    pub ssrc: u32,
    /// Fraction of packets lost since the previous report, as a fixed-point
    /// number with the binary point at the left (loss × 256).
    pub fraction_lost: u8,
    /// Packets expected less packets received since reception began; 24-bit
    /// signed, negative when duplicates outnumber losses.
    pub cumulative_lost: i32,
    /// Extended highest sequence number received (low 32 bits).
    pub extended_highest_seq: u32,
    /// Interarrival jitter, in RTP timestamp units.
    pub jitter: u32,
    /// LSR: compact NTP timestamp of the last sender report received from
    /// this source, 0 if none.
    pub last_sr: u32,
    /// DLSR: delay since that sender report, in units of 1/65536 s.
    pub delay_since_last_sr: u32,
}

impl ReportBlock {
    /// The round-trip time RFC 3550 §6.4.1 derives from this block: the
    /// arrival time `arrival` (compact NTP) minus LSR minus DLSR. `None`
    /// when no sender report was echoed (LSR = 0) or the result would be
    /// negative (clocks or a bogus block).
    pub fn round_trip_time(&self, arrival: u32) -> Option<Duration> {
        if self.last_sr == 0 {
            return None;
        }
        let rtt = arrival
            .wrapping_sub(self.last_sr)
            .wrapping_sub(self.delay_since_last_sr);
        // More than half the 32-bit space means the subtraction went negative.
        (rtt < 0x8000_0000).then(|| compact_ntp_to_duration(rtt))
    }
}

impl<'a> WireItem<'a> for ReportBlock {
    fn decode(bytes: &'a [u8]) -> Option<(Self, &'a [u8])> {
        let block = bytes.get(..REPORT_BLOCK_LEN)?;
        let rest = bytes.get(REPORT_BLOCK_LEN..)?;
        let lost_word = be_u32(block, 4);
        Some((
            ReportBlock {
                ssrc: be_u32(block, 0),
                fraction_lost: (lost_word >> 24) as u8,
                // Sign-extend the 24-bit field.
                cumulative_lost: ((lost_word << 8) as i32) >> 8,
                extended_highest_seq: be_u32(block, 8),
                jitter: be_u32(block, 12),
                last_sr: be_u32(block, 16),
                delay_since_last_sr: be_u32(block, 20),
            },
            rest,
        ))
    }

    fn wire_len(&self) -> usize {
        REPORT_BLOCK_LEN
    }

    fn validate(&self) -> Result<(), RtcpError> {
        if !(-0x80_0000..=0x7f_ffff).contains(&self.cumulative_lost) {
            return Err(RtcpError::CumulativeLostOutOfRange {
                lost: self.cumulative_lost,
            });
        }
        Ok(())
    }

    fn encode(&self, buffer: &mut [u8]) {
        let lost_word =
            (u32::from(self.fraction_lost) << 24) | (self.cumulative_lost as u32 & 0x00ff_ffff);
        put(buffer, 0, &self.ssrc.to_be_bytes());
        put(buffer, 4, &lost_word.to_be_bytes());
        put(buffer, 8, &self.extended_highest_seq.to_be_bytes());
        put(buffer, 12, &self.jitter.to_be_bytes());
        put(buffer, 16, &self.last_sr.to_be_bytes());
        put(buffer, 20, &self.delay_since_last_sr.to_be_bytes());
    }
}
