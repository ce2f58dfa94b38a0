//! RTCP (RFC 3550 §6): sender and receiver reports (§6.4), source
//! descriptions (§6.5) and compound packets (§6.1, Appendix A.2).
//!
//! - [`Packet`]: a zero-copy view of one RTCP packet (common header, body,
//!   padding), checked by [`Packet::new_checked`].
//! - [`RtcpRepr`]: one parsed packet: [`SenderReport`], [`ReceiverReport`],
//!   [`SourceDescription`], or [`RtcpRepr::Other`] for every other type (BYE,
//!   APP, feedback), kept as raw body bytes.
//! - [`GenericNack`]: the RFC 4585 §6.2.1 Generic NACK, read from and
//!   written as an [`RtcpRepr::Other`].
//! - [`BufferReport`]: paper 004's receiver-buffer feedback in an APP
//!   packet (§6.7) named `FSBF`.
//! - [`packets`] iterates over the packets of a compound packet;
//!   [`CompoundPacket::new_checked`] first applies the Appendix A.2 validity
//!   checks to the whole compound; [`emit_compound`] writes one.
//!
//! Lists inside a packet (report blocks, SDES chunks and items) are
//! [`ItemList`]s: parsed lists borrow the packet bytes and decode on
//! iteration, lists to emit borrow a slice of values. Parsing allocates
//! nothing.

mod buffer_report;
mod list;
mod nack;
mod report;
mod sdes;

pub use buffer_report::{
    BufferReport, BufferReportError, BUFFER_REPORT_LEN, BUFFER_REPORT_NAME, BUFFER_REPORT_SUBTYPE,
};
use list::split_list;
pub use list::{ItemIter, ItemList, WireItem};
pub use nack::{GenericNack, FMT_GENERIC_NACK, PT_TRANSPORT_FEEDBACK};
pub use report::{
    clamp_cumulative_lost, compact_ntp_to_duration, duration_to_compact_ntp, NtpTimestamp,
    ReportBlock, SenderInfo,
};
pub use sdes::{SdesChunk, SdesItem, SourceDescription, SDES_CNAME};

/// The RTCP version this module reads and writes (the same as RTP's).
pub const VERSION: u8 = 2;
/// Length of the common header (V, P, count, PT, length).
pub const HEADER_LEN: usize = 4;
/// Length of one report block (RFC 3550 §6.4.1).
pub const REPORT_BLOCK_LEN: usize = 24;
/// Length of the sender information in a sender report.
pub const SENDER_INFO_LEN: usize = 20;
/// The most report blocks or SDES chunks a packet holds: the count field has
/// 5 bits.
pub const MAX_COUNT: usize = 31;
/// The longest RTCP packet: the length field counts up to 65536 words.
pub const MAX_PACKET_LEN: usize = (u16::MAX as usize + 1) * 4;

/// Packet type of a sender report (RFC 3550 §6.4.1).
pub const PT_SENDER_REPORT: u8 = 200;
/// Packet type of a receiver report (RFC 3550 §6.4.2).
pub const PT_RECEIVER_REPORT: u8 = 201;
/// Packet type of a source description (RFC 3550 §6.5).
pub const PT_SOURCE_DESCRIPTION: u8 = 202;
/// Packet type of a goodbye (RFC 3550 §6.6).
pub const PT_BYE: u8 = 203;
/// Packet type of an application-defined packet (RFC 3550 §6.7).
pub const PT_APP: u8 = 204;

/// What was wrong with an RTCP packet (parsing) or a representation (emitting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RtcpError {
    /// Shorter than the 4-byte common header.
    #[error("RTCP packet of {len} bytes is shorter than the 4-byte common header")]
    Truncated {
        /// Bytes available.
        len: usize,
    },
    /// The version field is not 2.
    #[error("RTCP version {version}; only version 2 (RFC 3550) is understood")]
    BadVersion {
        /// The version found.
        version: u8,
    },
    /// The length field says the packet is longer than the bytes available.
    #[error("RTCP length field {length} means {needed} bytes but only {available} are left")]
    LengthExceedsBuffer {
        /// The length field (32-bit words minus one).
        length: u16,
        /// The packet length it implies, in bytes.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// The P bit is set but the padding count is zero.
    #[error(
        "P bit set but the padding count (last byte) is 0; it counts itself, so it is at least 1"
    )]
    ZeroPadding,
    /// The padding count is larger than the packet body.
    #[error("padding count {padding} is larger than the {available}-byte body")]
    PaddingTooLong {
        /// The padding count.
        padding: u8,
        /// Bytes after the common header.
        available: usize,
    },
    /// A sender or receiver report too short for its report count.
    #[error("RTCP packet type {packet_type} with {count} report blocks needs {needed} bytes but has {len}")]
    ReportTooShort {
        /// The packet type (200 or 201).
        packet_type: u8,
        /// The report count.
        count: u8,
        /// Bytes needed (header, SSRC, sender info, blocks).
        needed: usize,
        /// Bytes present (without padding).
        len: usize,
    },
    /// An SDES chunk runs past the end of the packet or lacks its terminating
    /// null item.
    #[error("SDES chunk {chunk} is truncated or lacks its terminating null octet")]
    SdesChunkTruncated {
        /// Index of the chunk, from 0.
        chunk: usize,
    },
    /// Bytes left in an SDES packet after the number of chunks its count gives.
    #[error("SDES packet has {trailing} bytes after its {count} chunks")]
    SdesTrailingBytes {
        /// The source count.
        count: u8,
        /// Bytes left over.
        trailing: usize,
    },
    /// A compound packet with no packet in it.
    #[error("empty compound RTCP packet")]
    EmptyCompound,
    /// Appendix A.2: the first packet of a compound is not SR or RR.
    #[error(
        "compound RTCP packet starts with packet type {packet_type}, not SR (200) or RR (201)"
    )]
    FirstNotReport {
        /// The first packet's type.
        packet_type: u8,
    },
    /// Appendix A.2: a packet other than the last is padded.
    #[error("packet {index} of a compound RTCP packet has the P bit set, but only the last may be padded")]
    PaddingNotLast {
        /// Index of the offending packet, from 0.
        index: usize,
    },
    /// The output buffer is too small.
    #[error("output buffer of {len} bytes is shorter than the {needed} bytes needed")]
    BufferTooShort {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        len: usize,
    },
    /// More than 31 report blocks or chunks, or a count above 31.
    #[error("{count} items; the 5-bit count field holds at most 31")]
    TooManyItems {
        /// How many were given.
        count: usize,
    },
    /// A cumulative loss outside the 24-bit signed range.
    #[error(
        "cumulative loss {lost} is outside the 24-bit signed range (use clamp_cumulative_lost)"
    )]
    CumulativeLostOutOfRange {
        /// The value given.
        lost: i32,
    },
    /// Data that must fill whole 32-bit words does not.
    #[error("{what} of {len} bytes is not a whole number of 32-bit words")]
    NotWordAligned {
        /// What was misaligned.
        what: &'static str,
        /// Its length.
        len: usize,
    },
    /// A packet longer than the length field can express.
    #[error("RTCP packet of {len} bytes is longer than the 262144 bytes the length field allows")]
    PacketTooLong {
        /// Its length.
        len: usize,
    },
    /// An SDES item value longer than 255 bytes.
    #[error("SDES item value of {len} bytes is longer than 255")]
    SdesItemTooLong {
        /// Its length.
        len: usize,
    },
    /// An SDES item of type 0, which is the list terminator.
    #[error("SDES item type 0 is the END marker and cannot carry a value")]
    SdesItemTypeZero,
}

/// Reads `N` bytes at `at`; bytes past the end read as zero. Callers read
/// inside lengths checked beforehand; the fallback only makes a panic
/// impossible.
fn field<const N: usize>(data: &[u8], at: usize) -> [u8; N] {
    data.get(at..at.saturating_add(N))
        .and_then(|bytes| bytes.try_into().ok())
        .unwrap_or([0; N])
}

fn be_u32(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(field(data, at))
}

/// Writes `bytes` at `at` of `buffer`; callers check the length first.
fn put(buffer: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(target) = buffer.get_mut(at..at.saturating_add(bytes.len())) {
        target.copy_from_slice(bytes);
    }
}

/// Validates the common header of the packet at the start of `data`; returns
/// the packet length (from the length field) and the padding length.
fn header_layout(data: &[u8]) -> Result<(usize, usize), RtcpError> {
    let len = data.len();
    if len < HEADER_LEN {
        return Err(RtcpError::Truncated { len });
    }
    let [first, ..] = field::<1>(data, 0);
    let version = first >> 6;
    if version != VERSION {
        return Err(RtcpError::BadVersion { version });
    }
    // RFC 3550 §6.4.1: "The length of this RTCP packet in 32-bit words minus
    // one, including the header and any padding."
    let length = u16::from_be_bytes(field(data, 2));
    let packet_len = (usize::from(length) + 1) * 4;
    if packet_len > len {
        return Err(RtcpError::LengthExceedsBuffer {
            length,
            needed: packet_len,
            available: len,
        });
    }
    // RFC 3550 §6.4.1: padding octets "are not part of the control information
    // but are included in the length field. The last octet of the padding is a
    // count of how many padding octets should be ignored, including itself".
    let padding_len = if first & 0x20 != 0 {
        let [padding] = field::<1>(data, packet_len - 1);
        let available = packet_len - HEADER_LEN;
        if padding == 0 {
            return Err(RtcpError::ZeroPadding);
        }
        if usize::from(padding) > available {
            return Err(RtcpError::PaddingTooLong { padding, available });
        }
        usize::from(padding)
    } else {
        0
    };
    Ok((packet_len, padding_len))
}

/// A view of one RTCP packet at the start of a buffer (which may hold more
/// packets after it, as a compound packet does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer`, checking the version, that the length field fits the
    /// buffer, and the padding.
    pub fn new_checked(buffer: T) -> Result<Self, RtcpError> {
        header_layout(buffer.as_ref())?;
        Ok(Packet { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    fn layout(&self) -> (usize, usize) {
        // Checked in `new_checked`.
        header_layout(self.data()).unwrap_or((HEADER_LEN, 0))
    }

    /// The version field (2 for a checked packet).
    pub fn version(&self) -> u8 {
        field::<1>(self.data(), 0)[0] >> 6
    }

    /// The P bit.
    pub fn has_padding(&self) -> bool {
        field::<1>(self.data(), 0)[0] & 0x20 != 0
    }

    /// The 5-bit count: report blocks (SR, RR), chunks (SDES), sources (BYE)
    /// or a subtype (APP, feedback).
    pub fn count(&self) -> u8 {
        field::<1>(self.data(), 0)[0] & 0x1f
    }

    /// The packet type.
    pub fn packet_type(&self) -> u8 {
        field::<1>(self.data(), 1)[0]
    }

    /// The raw length field: 32-bit words minus one.
    pub fn length(&self) -> u16 {
        u16::from_be_bytes(field(self.data(), 2))
    }

    /// The packet's length in bytes, header and padding included.
    pub fn packet_len(&self) -> usize {
        self.layout().0
    }

    /// Padding bytes at the end of the packet (0 without the P bit).
    pub fn padding_len(&self) -> usize {
        self.layout().1
    }

    /// The bytes after the common header, without padding.
    pub fn body(&self) -> &[u8] {
        let (packet_len, padding_len) = self.layout();
        self.data()
            .get(HEADER_LEN..packet_len - padding_len)
            .unwrap_or(&[])
    }
}

/// A sender report (RFC 3550 §6.4.1, PT 200).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderReport<'a> {
    /// SSRC of the sender.
    pub ssrc: u32,
    /// What and when the sender sent.
    pub sender_info: SenderInfo,
    /// Reception reports (at most 31).
    pub reports: ItemList<'a, ReportBlock>,
    /// Profile-specific extension after the report blocks (whole words).
    pub extension: &'a [u8],
}

/// A receiver report (RFC 3550 §6.4.2, PT 201).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiverReport<'a> {
    /// SSRC of the packet's sender.
    pub ssrc: u32,
    /// Reception reports (at most 31).
    pub reports: ItemList<'a, ReportBlock>,
    /// Profile-specific extension after the report blocks (whole words).
    pub extension: &'a [u8],
}

/// One RTCP packet, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtcpRepr<'a> {
    /// PT 200.
    SenderReport(SenderReport<'a>),
    /// PT 201.
    ReceiverReport(ReceiverReport<'a>),
    /// PT 202.
    SourceDescription(SourceDescription<'a>),
    /// Any other packet type (BYE, APP, RFC 4585 feedback, …), unparsed.
    Other {
        /// The packet type.
        packet_type: u8,
        /// The 5-bit count field.
        count: u8,
        /// The body after the common header, without padding.
        body: &'a [u8],
    },
}

impl<'a> RtcpRepr<'a> {
    /// Parses the packet at the start of a checked buffer.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&'a T>) -> Result<Self, RtcpError> {
        let data: &'a [u8] = packet.buffer.as_ref();
        let (packet_len, padding_len) = header_layout(data)?;
        let body = data
            .get(HEADER_LEN..packet_len - padding_len)
            .unwrap_or(&[]);
        let count = packet.count();
        let packet_type = packet.packet_type();
        let blocks_len = REPORT_BLOCK_LEN * usize::from(count);
        match packet_type {
            PT_SENDER_REPORT | PT_RECEIVER_REPORT => {
                let info_len = if packet_type == PT_SENDER_REPORT {
                    SENDER_INFO_LEN
                } else {
                    0
                };
                let blocks_at = 4 + info_len;
                let needed = blocks_at + blocks_len;
                if body.len() < needed {
                    return Err(RtcpError::ReportTooShort {
                        packet_type,
                        count,
                        needed: HEADER_LEN + needed,
                        len: HEADER_LEN + body.len(),
                    });
                }
                let ssrc = be_u32(body, 0);
                let reports = ItemList::from_wire(body.get(blocks_at..needed).unwrap_or(&[]));
                let extension = body.get(needed..).unwrap_or(&[]);
                Ok(if packet_type == PT_SENDER_REPORT {
                    RtcpRepr::SenderReport(SenderReport {
                        ssrc,
                        sender_info: SenderInfo {
                            ntp_timestamp: NtpTimestamp(u64::from_be_bytes(field(body, 4))),
                            rtp_timestamp: be_u32(body, 12),
                            packet_count: be_u32(body, 16),
                            octet_count: be_u32(body, 20),
                        },
                        reports,
                        extension,
                    })
                } else {
                    RtcpRepr::ReceiverReport(ReceiverReport {
                        ssrc,
                        reports,
                        extension,
                    })
                })
            }
            PT_SOURCE_DESCRIPTION => {
                let rest = split_list::<SdesChunk<'_>>(body, usize::from(count))
                    .map_err(|chunk| RtcpError::SdesChunkTruncated { chunk })?;
                if !rest.is_empty() {
                    return Err(RtcpError::SdesTrailingBytes {
                        count,
                        trailing: rest.len(),
                    });
                }
                Ok(RtcpRepr::SourceDescription(SourceDescription {
                    chunks: ItemList::from_wire(body),
                }))
            }
            _ => Ok(RtcpRepr::Other {
                packet_type,
                count,
                body,
            }),
        }
    }

    /// Checks and parses the first packet of `bytes`.
    pub fn parse_bytes(bytes: &'a [u8]) -> Result<Self, RtcpError> {
        RtcpRepr::parse(&Packet::new_checked(bytes)?)
    }

    /// The packet type this representation emits.
    pub fn packet_type(&self) -> u8 {
        match self {
            RtcpRepr::SenderReport(_) => PT_SENDER_REPORT,
            RtcpRepr::ReceiverReport(_) => PT_RECEIVER_REPORT,
            RtcpRepr::SourceDescription(_) => PT_SOURCE_DESCRIPTION,
            RtcpRepr::Other { packet_type, .. } => *packet_type,
        }
    }

    fn body_len(&self) -> usize {
        match self {
            RtcpRepr::SenderReport(report) => {
                4 + SENDER_INFO_LEN + report.reports.wire_len() + report.extension.len()
            }
            RtcpRepr::ReceiverReport(report) => {
                4 + report.reports.wire_len() + report.extension.len()
            }
            RtcpRepr::SourceDescription(description) => description.chunks.wire_len(),
            RtcpRepr::Other { body, .. } => body.len(),
        }
    }

    /// Length of the packet this representation emits (no padding).
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.body_len()
    }

    /// The count field, after checking every part can be written.
    fn validate(&self) -> Result<u8, RtcpError> {
        let (count, extension) = match self {
            RtcpRepr::SenderReport(report) => {
                report.reports.validate()?;
                (report.reports.len(), Some(report.extension))
            }
            RtcpRepr::ReceiverReport(report) => {
                report.reports.validate()?;
                (report.reports.len(), Some(report.extension))
            }
            RtcpRepr::SourceDescription(description) => {
                description.chunks.validate()?;
                (description.chunks.len(), None)
            }
            RtcpRepr::Other { count, body, .. } => {
                if body.len() % 4 != 0 {
                    return Err(RtcpError::NotWordAligned {
                        what: "packet body",
                        len: body.len(),
                    });
                }
                (usize::from(*count), None)
            }
        };
        if let Some(extension) = extension.filter(|extension| extension.len() % 4 != 0) {
            return Err(RtcpError::NotWordAligned {
                what: "profile-specific extension",
                len: extension.len(),
            });
        }
        let len = self.buffer_len();
        if len > MAX_PACKET_LEN {
            return Err(RtcpError::PacketTooLong { len });
        }
        u8::try_from(count)
            .ok()
            .filter(|&count| usize::from(count) <= MAX_COUNT)
            .ok_or(RtcpError::TooManyItems { count })
    }

    /// Writes the packet at the start of `buffer` and returns its length.
    /// Nothing is padded; the P bit is clear.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize, RtcpError> {
        let count = self.validate()?;
        let len = self.buffer_len();
        if buffer.len() < len {
            return Err(RtcpError::BufferTooShort {
                needed: len,
                len: buffer.len(),
            });
        }
        // Validated: len ≤ MAX_PACKET_LEN and a multiple of 4.
        let length = (len / 4 - 1) as u16;
        put(buffer, 0, &[(VERSION << 6) | count, self.packet_type()]);
        put(buffer, 2, &length.to_be_bytes());
        let Some(body) = buffer.get_mut(HEADER_LEN..len) else {
            return Err(RtcpError::BufferTooShort {
                needed: len,
                len: buffer.len(),
            });
        };
        match self {
            RtcpRepr::SenderReport(report) => {
                put(body, 0, &report.ssrc.to_be_bytes());
                let info = &report.sender_info;
                put(body, 4, &info.ntp_timestamp.0.to_be_bytes());
                put(body, 12, &info.rtp_timestamp.to_be_bytes());
                put(body, 16, &info.packet_count.to_be_bytes());
                put(body, 20, &info.octet_count.to_be_bytes());
                let at = 4 + SENDER_INFO_LEN;
                let blocks = body
                    .get_mut(at..)
                    .map_or(0, |target| report.reports.encode(target));
                put(body, at + blocks, report.extension);
            }
            RtcpRepr::ReceiverReport(report) => {
                put(body, 0, &report.ssrc.to_be_bytes());
                let blocks = body
                    .get_mut(4..)
                    .map_or(0, |target| report.reports.encode(target));
                put(body, 4 + blocks, report.extension);
            }
            RtcpRepr::SourceDescription(description) => {
                description.chunks.encode(body);
            }
            RtcpRepr::Other { body: bytes, .. } => put(body, 0, bytes),
        }
        Ok(len)
    }
}

/// Iterator over the packets of a compound RTCP packet; see [`packets`].
#[derive(Clone, Debug)]
pub struct Packets<'a> {
    rest: &'a [u8],
}

/// The packets of a compound RTCP packet, back to back, each parsed.
///
/// An error in a packet's common header ends the iteration after it is
/// yielded (the following lengths cannot be trusted); an error inside a
/// packet's body is yielded and iteration continues with the next packet.
/// This iterator does not apply the Appendix A.2 rules; see
/// [`CompoundPacket::new_checked`].
pub fn packets(bytes: &[u8]) -> Packets<'_> {
    Packets { rest: bytes }
}

impl<'a> Iterator for Packets<'a> {
    type Item = Result<RtcpRepr<'a>, RtcpError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let packet = match Packet::new_checked(self.rest) {
            Ok(packet) => packet,
            Err(error) => {
                self.rest = &[];
                return Some(Err(error));
            }
        };
        let parsed = RtcpRepr::parse(&packet);
        self.rest = self.rest.get(packet.packet_len()..).unwrap_or(&[]);
        Some(parsed)
    }
}

impl std::iter::FusedIterator for Packets<'_> {}

/// A compound RTCP packet that passed the header validity checks of RFC 3550
/// Appendix A.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompoundPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CompoundPacket<T> {
    /// Checks, for every packet, the version (2) and the length field, and
    /// that (RFC 3550 Appendix A.2) "the payload type field of the first RTCP
    /// packet in a compound packet must be equal to SR or RR", that only the
    /// last packet is padded, and that "the length fields of the individual
    /// RTCP packets must add up to the overall length of the compound RTCP
    /// packet as received".
    pub fn new_checked(buffer: T) -> Result<Self, RtcpError> {
        let bytes = buffer.as_ref();
        if bytes.is_empty() {
            return Err(RtcpError::EmptyCompound);
        }
        let mut rest = bytes;
        let mut index = 0;
        while !rest.is_empty() {
            let packet = Packet::new_checked(rest)?;
            if index == 0 && !matches!(packet.packet_type(), PT_SENDER_REPORT | PT_RECEIVER_REPORT)
            {
                return Err(RtcpError::FirstNotReport {
                    packet_type: packet.packet_type(),
                });
            }
            rest = rest.get(packet.packet_len()..).unwrap_or(&[]);
            if packet.has_padding() && !rest.is_empty() {
                return Err(RtcpError::PaddingNotLast { index });
            }
            index += 1;
        }
        Ok(CompoundPacket { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The packets, each parsed.
    pub fn packets(&self) -> Packets<'_> {
        packets(self.buffer.as_ref())
    }
}

/// Length of the compound packet [`emit_compound`] writes.
pub fn compound_len(packets: &[RtcpRepr<'_>]) -> usize {
    packets.iter().map(RtcpRepr::buffer_len).sum()
}

/// Writes `packets` back to back at the start of `buffer` and returns the
/// total length.
pub fn emit_compound(packets: &[RtcpRepr<'_>], buffer: &mut [u8]) -> Result<usize, RtcpError> {
    let needed = compound_len(packets);
    if buffer.len() < needed {
        return Err(RtcpError::BufferTooShort {
            needed,
            len: buffer.len(),
        });
    }
    let mut at = 0;
    for packet in packets {
        let target = buffer.get_mut(at..).unwrap_or(&mut []);
        at += packet.emit(target)?;
    }
    Ok(at)
}

/// True when a datagram that carries either RTP or RTCP is RTCP.
///
/// RFC 5761 §4 (RTP and RTCP on one port, which RFC 5762 allows on one DCCP
/// connection): RTCP packet types 192–223 occupy the second octet where RTP
/// has the marker bit and a payload type of 64–95, so RTP payload types
/// 64–95 must not be used when multiplexing.
pub fn is_rtcp(datagram: &[u8]) -> bool {
    matches!(datagram.get(1), Some(192..=223))
}

#[cfg(test)]
mod tests;
