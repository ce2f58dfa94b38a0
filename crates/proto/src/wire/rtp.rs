//! RTP data packets (RFC 3550 §5.1, §5.3.1) and sequence-number bookkeeping
//! (RFC 3550 Appendix A.1 and A.3).
//!
//! Over DCCP (RFC 5762) every DCCP-Data or DCCP-DataAck payload is exactly one
//! RTP packet, so the whole datagram payload is handed to [`Packet::new_checked`].
//!
//! - [`Packet`]: a zero-copy view. [`Packet::new_checked`] validates the version
//!   and every length (CSRC list, header extension, padding) once, so the
//!   accessors cannot fail afterwards.
//! - [`RtpRepr`]: the parsed header with the payload borrowed, and
//!   [`RtpRepr::emit`] to write it back.
//! - [`sequence_delta`], [`sequence_precedes`]: 16-bit wrap-around arithmetic.
//! - [`SequenceTracker`]: the Appendix A.1 validity check (probation,
//!   MAX_DROPOUT, MAX_MISORDER) with 64-bit extended sequence numbers, and the
//!   Appendix A.3 loss counts a receiver report needs.
//! - [`TemporalFrameInfo`]: the temporal-frame header extension element
//!   (RFC 8285 one-byte form) of a temporally layered stream.

use std::fmt;
use std::ops::Deref;

mod sequence;
mod temporal_frame;

pub use sequence::{
    sequence_delta, sequence_precedes, SequenceTracker, SequenceTrackerConfig, SequenceUpdate,
};
pub use temporal_frame::{
    one_byte_element, TemporalFrameError, TemporalFrameInfo, ONE_BYTE_PROFILE,
    TEMPORAL_FRAME_EXTENSION_DATA_LEN, TEMPORAL_FRAME_EXTENSION_LEN, TEMPORAL_FRAME_ID,
    TEMPORAL_FRAME_URI,
};

/// The RTP version this module reads and writes.
///
/// RFC 3550 §5.1: "This field identifies the version of RTP. The version
/// defined by this specification is two (2)."
pub const VERSION: u8 = 2;

/// Length of the fixed header (before the CSRC list) in bytes.
pub const FIXED_HEADER_LEN: usize = 12;

/// The most CSRC identifiers a packet can carry: the CC field has 4 bits.
pub const MAX_CSRCS: usize = 15;

/// The most header-extension data in bytes: the length field counts 32-bit
/// words in 16 bits.
pub const MAX_EXTENSION_DATA_LEN: usize = u16::MAX as usize * 4;

/// What was wrong with an RTP packet (parsing) or a [`RtpRepr`] (emitting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RtpError {
    /// Shorter than the 12-byte fixed header.
    #[error("RTP packet of {len} bytes is shorter than the 12-byte fixed header")]
    Truncated {
        /// Bytes available.
        len: usize,
    },
    /// The version field is not 2.
    #[error("RTP version {version}; only version 2 (RFC 3550) is understood")]
    BadVersion {
        /// The version found.
        version: u8,
    },
    /// The CSRC count asks for more identifiers than the packet holds.
    #[error("CSRC count {count} needs a {needed}-byte header but the packet has {len} bytes")]
    CsrcListTruncated {
        /// The CC field.
        count: u8,
        /// Fixed header plus CSRC list, in bytes.
        needed: usize,
        /// Bytes available.
        len: usize,
    },
    /// The X bit is set but the 4-byte extension header is cut off.
    #[error("X bit set but the packet of {len} bytes ends before the 4-byte header extension header at byte {offset}")]
    ExtensionHeaderTruncated {
        /// Where the extension header starts.
        offset: usize,
        /// Bytes available.
        len: usize,
    },
    /// The header extension's length runs past the end of the packet.
    #[error("header extension of {words} 32-bit words ends at byte {end} but the packet has {len} bytes")]
    ExtensionTruncated {
        /// The extension length field (32-bit words after the extension header).
        words: u16,
        /// Where the extension would end.
        end: usize,
        /// Bytes available.
        len: usize,
    },
    /// The P bit is set but the padding count is zero; it counts itself, so
    /// it is at least 1.
    #[error(
        "P bit set but the padding count (last byte) is 0; it counts itself, so it is at least 1"
    )]
    ZeroPadding,
    /// The padding count is larger than what follows the header.
    #[error("padding count {padding} is larger than the {available} bytes after the {header_len}-byte header")]
    PaddingTooLong {
        /// The padding count (last byte of the packet).
        padding: u8,
        /// Bytes after the header (payload and padding).
        available: usize,
        /// Header length including CSRCs and extension.
        header_len: usize,
    },
    /// More than 15 CSRC identifiers.
    #[error("{count} CSRC identifiers; at most 15 fit the 4-bit CC field")]
    TooManyCsrcs {
        /// How many were given.
        count: usize,
    },
    /// A payload type above 127.
    #[error("payload type {payload_type} does not fit in 7 bits")]
    PayloadTypeOutOfRange {
        /// The payload type given.
        payload_type: u8,
    },
    /// Header extension data that is not a whole number of 32-bit words.
    #[error("header extension data of {len} bytes is not a whole number of 32-bit words")]
    ExtensionNotWordAligned {
        /// Its length in bytes.
        len: usize,
    },
    /// Header extension data longer than 65535 words.
    #[error("header extension data of {len} bytes is longer than 65535 32-bit words")]
    ExtensionTooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The output buffer is too small.
    #[error("output buffer of {len} bytes is shorter than the {needed}-byte packet")]
    BufferTooShort {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        len: usize,
    },
}

/// Reads `N` bytes at `at`; bytes past the end read as zero. Every caller
/// reads inside a length that [`Packet::check`] validated, so the fallback
/// never shows; it exists so that no input can make an accessor panic.
fn field<const N: usize>(data: &[u8], at: usize) -> [u8; N] {
    data.get(at..at.saturating_add(N))
        .and_then(|bytes| bytes.try_into().ok())
        .unwrap_or([0; N])
}

/// Writes `bytes` at `at`. Callers check the buffer length first (see
/// [`RtpRepr::emit`]), so the out-of-range branch is never taken.
fn put(buffer: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(target) = buffer.get_mut(at..at.saturating_add(bytes.len())) {
        target.copy_from_slice(bytes);
    }
}

/// Header length (fixed header, CSRC list, extension) and padding length of a
/// buffer, validating the RFC 3550 Appendix A.1 header checks that concern
/// the layout.
fn layout(data: &[u8]) -> Result<(usize, usize), RtpError> {
    let len = data.len();
    if len < FIXED_HEADER_LEN {
        return Err(RtpError::Truncated { len });
    }
    let [first, ..] = field::<1>(data, 0);
    let version = first >> 6;
    if version != VERSION {
        return Err(RtpError::BadVersion { version });
    }
    // RFC 3550 §5.1: "The CSRC count contains the number of CSRC identifiers
    // that follow the fixed header."
    let count = first & 0x0f;
    let mut header_len = FIXED_HEADER_LEN + 4 * usize::from(count);
    if header_len > len {
        return Err(RtpError::CsrcListTruncated {
            count,
            needed: header_len,
            len,
        });
    }
    // RFC 3550 §5.1: "If the extension bit is set, the fixed header MUST be
    // followed by exactly one header extension".
    if first & 0x10 != 0 {
        if header_len + 4 > len {
            return Err(RtpError::ExtensionHeaderTruncated {
                offset: header_len,
                len,
            });
        }
        // RFC 3550 §5.3.1: the length field "counts the number of 32-bit words
        // in the extension, excluding the four-octet extension header
        // (therefore zero is a valid length)".
        let words = u16::from_be_bytes(field(data, header_len + 2));
        let end = header_len + 4 + 4 * usize::from(words);
        if end > len {
            return Err(RtpError::ExtensionTruncated { words, end, len });
        }
        header_len = end;
    }
    // RFC 3550 §5.1: "The last octet of the padding contains a count of how
    // many padding octets should be ignored, including itself."
    let padding_len = if first & 0x20 != 0 {
        let [padding] = field::<1>(data, len - 1);
        let available = len - header_len;
        if available == 0 {
            // The count would be read from inside the header.
            return Err(RtpError::PaddingTooLong {
                padding,
                available,
                header_len,
            });
        }
        if padding == 0 {
            return Err(RtpError::ZeroPadding);
        }
        // Appendix A.1 asks for a count "less than the total packet length
        // minus the header size"; we accept equality too, because a packet that
        // is all padding is how senders probe bandwidth without media.
        if usize::from(padding) > available {
            return Err(RtpError::PaddingTooLong {
                padding,
                available,
                header_len,
            });
        }
        usize::from(padding)
    } else {
        0
    };
    Ok((header_len, padding_len))
}

/// The header extension (RFC 3550 §5.3.1): a 16-bit profile-defined
/// identifier and data in whole 32-bit words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderExtension<'a> {
    /// The 16 bits "defined by profile" (e.g. `0xBEDE` for RFC 8285
    /// one-byte extension elements).
    pub profile: u16,
    /// The extension data, without its 4-byte header; a multiple of 4 bytes.
    pub data: &'a [u8],
}

impl<'a> HeaderExtension<'a> {
    fn from_header(data: &'a [u8], csrc_end: usize, header_len: usize) -> Self {
        HeaderExtension {
            profile: u16::from_be_bytes(field(data, csrc_end)),
            data: data.get(csrc_end + 4..header_len).unwrap_or(&[]),
        }
    }
}

/// A read-only (or field-rewriting) view of an RTP packet.
///
/// Only [`Packet::new_checked`] builds one, so every accessor works on a
/// validated layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer`, checking the version (2) and that the CSRC list, the
    /// header extension and the padding all fit.
    pub fn new_checked(buffer: T) -> Result<Self, RtpError> {
        layout(buffer.as_ref())?;
        Ok(Packet { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    fn first(&self) -> u8 {
        field::<1>(self.data(), 0)[0]
    }

    fn layout(&self) -> (usize, usize) {
        // Checked in `new_checked`; the buffer has not changed length since.
        layout(self.data()).unwrap_or((FIXED_HEADER_LEN, 0))
    }

    /// The version field (always 2 for a checked packet).
    pub fn version(&self) -> u8 {
        self.first() >> 6
    }

    /// The P bit: the packet ends in padding.
    pub fn has_padding(&self) -> bool {
        self.first() & 0x20 != 0
    }

    /// The X bit: a header extension follows the CSRC list.
    pub fn has_extension(&self) -> bool {
        self.first() & 0x10 != 0
    }

    /// The CC field: how many CSRC identifiers follow the fixed header.
    pub fn csrc_count(&self) -> u8 {
        self.first() & 0x0f
    }

    /// The M bit (its meaning is defined by the profile; for H.264 it marks
    /// the last packet of an access unit).
    pub fn marker(&self) -> bool {
        field::<1>(self.data(), 1)[0] & 0x80 != 0
    }

    /// The 7-bit payload type.
    pub fn payload_type(&self) -> u8 {
        field::<1>(self.data(), 1)[0] & 0x7f
    }

    /// The 16-bit sequence number.
    pub fn sequence_number(&self) -> u16 {
        u16::from_be_bytes(field(self.data(), 2))
    }

    /// The 32-bit RTP timestamp.
    pub fn timestamp(&self) -> u32 {
        u32::from_be_bytes(field(self.data(), 4))
    }

    /// The synchronisation source identifier.
    pub fn ssrc(&self) -> u32 {
        u32::from_be_bytes(field(self.data(), 8))
    }

    /// The contributing source identifiers, in order.
    pub fn csrcs(&self) -> impl Iterator<Item = u32> + '_ {
        let data = self.data();
        (0..usize::from(self.csrc_count()))
            .map(move |i| u32::from_be_bytes(field(data, FIXED_HEADER_LEN + 4 * i)))
    }

    /// The header extension, if the X bit is set.
    pub fn extension(&self) -> Option<HeaderExtension<'_>> {
        let (header_len, _) = self.layout();
        self.has_extension()
            .then(|| HeaderExtension::from_header(self.data(), self.csrc_end(), header_len))
    }

    fn csrc_end(&self) -> usize {
        FIXED_HEADER_LEN + 4 * usize::from(self.csrc_count())
    }

    /// Length of the header: fixed part, CSRC list and header extension.
    pub fn header_len(&self) -> usize {
        self.layout().0
    }

    /// Length of the padding (0 when the P bit is clear).
    pub fn padding_len(&self) -> usize {
        self.layout().1
    }

    /// The payload, without header and padding.
    pub fn payload(&self) -> &[u8] {
        let (header_len, padding_len) = self.layout();
        let data = self.data();
        data.get(header_len..data.len() - padding_len)
            .unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the M bit.
    pub fn set_marker(&mut self, marker: bool) {
        let byte = field::<1>(self.data(), 1)[0];
        let byte = if marker { byte | 0x80 } else { byte & 0x7f };
        put(self.buffer.as_mut(), 1, &[byte]);
    }

    /// Sets the payload type (the low 7 bits of `payload_type`).
    pub fn set_payload_type(&mut self, payload_type: u8) {
        let byte = (field::<1>(self.data(), 1)[0] & 0x80) | (payload_type & 0x7f);
        put(self.buffer.as_mut(), 1, &[byte]);
    }

    /// Rewrites the sequence number (a relay renumbering a stream).
    pub fn set_sequence_number(&mut self, sequence_number: u16) {
        put(self.buffer.as_mut(), 2, &sequence_number.to_be_bytes());
    }

    /// Rewrites the timestamp.
    pub fn set_timestamp(&mut self, timestamp: u32) {
        put(self.buffer.as_mut(), 4, &timestamp.to_be_bytes());
    }

    /// Rewrites the SSRC.
    pub fn set_ssrc(&mut self, ssrc: u32) {
        put(self.buffer.as_mut(), 8, &ssrc.to_be_bytes());
    }

    /// The payload, writable in place.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (header_len, padding_len) = self.layout();
        let data = self.buffer.as_mut();
        let end = data.len() - padding_len;
        data.get_mut(header_len..end).unwrap_or(&mut [])
    }
}

/// Up to 15 CSRC identifiers, stored inline (no allocation).
#[derive(Clone, Copy, Default)]
pub struct CsrcList {
    ids: [u32; MAX_CSRCS],
    len: u8,
}

impl CsrcList {
    /// An empty list.
    pub const fn new() -> Self {
        CsrcList {
            ids: [0; MAX_CSRCS],
            len: 0,
        }
    }

    /// A list holding `ids`, or [`RtpError::TooManyCsrcs`] beyond 15.
    pub fn from_slice(ids: &[u32]) -> Result<Self, RtpError> {
        let mut list = CsrcList::new();
        for &id in ids {
            list.push(id)
                .map_err(|_| RtpError::TooManyCsrcs { count: ids.len() })?;
        }
        Ok(list)
    }

    /// Appends `id`, or [`RtpError::TooManyCsrcs`] when 15 are already held.
    pub fn push(&mut self, id: u32) -> Result<(), RtpError> {
        let slot = self
            .ids
            .get_mut(usize::from(self.len))
            .ok_or(RtpError::TooManyCsrcs {
                count: MAX_CSRCS + 1,
            })?;
        *slot = id;
        self.len += 1;
        Ok(())
    }

    /// The identifiers, in order.
    pub fn as_slice(&self) -> &[u32] {
        // `len` never exceeds MAX_CSRCS (see `push`).
        self.ids.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

impl Deref for CsrcList {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl PartialEq for CsrcList {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for CsrcList {}

impl fmt::Debug for CsrcList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.as_slice().iter().map(|id| format!("{id:#010x}")))
            .finish()
    }
}

/// An RTP packet's header fields, with the payload borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtpRepr<'a> {
    /// The M bit.
    pub marker: bool,
    /// The payload type, 0..=127.
    pub payload_type: u8,
    /// The sequence number.
    pub sequence_number: u16,
    /// The RTP timestamp.
    pub timestamp: u32,
    /// The synchronisation source.
    pub ssrc: u32,
    /// The contributing sources (at most 15).
    pub csrcs: CsrcList,
    /// The header extension, if any.
    pub extension: Option<HeaderExtension<'a>>,
    /// The payload (without padding).
    pub payload: &'a [u8],
    /// Padding bytes after the payload, counting the final count byte; 0 for
    /// no padding (P bit clear).
    pub padding_len: u8,
}

impl<'a> RtpRepr<'a> {
    /// Reads the fields of a checked packet.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&'a T>) -> Result<Self, RtpError> {
        let data: &'a [u8] = packet.buffer.as_ref();
        let (header_len, padding_len) = layout(data)?;
        let mut csrcs = CsrcList::new();
        for id in packet.csrcs() {
            csrcs.push(id)?;
        }
        let csrc_end = packet.csrc_end();
        Ok(RtpRepr {
            marker: packet.marker(),
            payload_type: packet.payload_type(),
            sequence_number: packet.sequence_number(),
            timestamp: packet.timestamp(),
            ssrc: packet.ssrc(),
            csrcs,
            extension: packet
                .has_extension()
                .then(|| HeaderExtension::from_header(data, csrc_end, header_len)),
            payload: data
                .get(header_len..data.len() - padding_len)
                .unwrap_or(&[]),
            // The padding count is one byte, so this fits.
            padding_len: u8::try_from(padding_len).unwrap_or(u8::MAX),
        })
    }

    /// Checks and parses `bytes` in one step.
    pub fn parse_bytes(bytes: &'a [u8]) -> Result<Self, RtpError> {
        RtpRepr::parse(&Packet::new_checked(bytes)?)
    }

    /// Length of the header this representation emits.
    pub fn header_len(&self) -> usize {
        FIXED_HEADER_LEN
            + 4 * self.csrcs.len()
            + self
                .extension
                .map_or(0, |extension| 4 + extension.data.len())
    }

    /// Length of the whole packet this representation emits.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload.len() + usize::from(self.padding_len)
    }

    /// Writes the packet at the start of `buffer` and returns its length.
    ///
    /// Padding is written as zero bytes followed by the count, as RFC 3550
    /// §5.1 describes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize, RtpError> {
        if self.payload_type > 0x7f {
            return Err(RtpError::PayloadTypeOutOfRange {
                payload_type: self.payload_type,
            });
        }
        if let Some(extension) = self.extension {
            let len = extension.data.len();
            if len % 4 != 0 {
                return Err(RtpError::ExtensionNotWordAligned { len });
            }
            if len > MAX_EXTENSION_DATA_LEN {
                return Err(RtpError::ExtensionTooLong { len });
            }
        }
        let needed = self.buffer_len();
        if buffer.len() < needed {
            return Err(RtpError::BufferTooShort {
                needed,
                len: buffer.len(),
            });
        }
        // `CsrcList` holds at most 15, so the count fits the 4-bit field.
        let count = self.csrcs.len() as u8 & 0x0f;
        let first = (VERSION << 6)
            | if self.padding_len > 0 { 0x20 } else { 0 }
            | if self.extension.is_some() { 0x10 } else { 0 }
            | count;
        let second = if self.marker { 0x80 } else { 0 } | self.payload_type;
        put(buffer, 0, &[first, second]);
        put(buffer, 2, &self.sequence_number.to_be_bytes());
        put(buffer, 4, &self.timestamp.to_be_bytes());
        put(buffer, 8, &self.ssrc.to_be_bytes());
        let mut at = FIXED_HEADER_LEN;
        for id in self.csrcs.iter() {
            put(buffer, at, &id.to_be_bytes());
            at += 4;
        }
        if let Some(extension) = self.extension {
            // Checked above: at most 65535 words.
            let words = (extension.data.len() / 4) as u16;
            put(buffer, at, &extension.profile.to_be_bytes());
            put(buffer, at + 2, &words.to_be_bytes());
            put(buffer, at + 4, extension.data);
            at += 4 + extension.data.len();
        }
        put(buffer, at, self.payload);
        at += self.payload.len();
        if self.padding_len > 0 {
            let padding_len = usize::from(self.padding_len);
            if let Some(padding) = buffer.get_mut(at..at + padding_len - 1) {
                padding.fill(0);
            }
            put(buffer, at + padding_len - 1, &[self.padding_len]);
            at += padding_len;
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests;
