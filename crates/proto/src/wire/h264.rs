//! The H.264 RTP payload format (RFC 6184) in non-interleaved mode
//! (packetization-mode=1): Single NAL Unit packets, STAP-A and FU-A.
//!
//! - [`NalHeader`] and [`PacketType`]: the one-octet header that starts every
//!   NAL unit and every RTP payload (RFC 6184 §5.3, §5.4).
//! - [`Packetizer`]: splits one NAL unit into RTP payloads, as a Single NAL
//!   Unit packet when it fits and as FU-A fragments otherwise (§5.6, §5.8).
//!   It yields [`Fragment`]s that borrow the NAL unit; each is written into
//!   the caller's buffer with [`Fragment::emit`].
//! - [`emit_stap_a`] aggregates small NAL units (SPS, PPS) into one STAP-A
//!   (§5.7.1); [`StapAPacket`] and [`FuAPacket`] are checked views.
//! - [`Depacketizer`]: takes RTP payloads in sequence-number order and gives
//!   back whole NAL units, dropping (and reporting) any fragmented NAL unit
//!   that lost a fragment, with a bound on the reassembly buffer.
//!
//! Interleaved mode (STAP-B, MTAP16, MTAP24, FU-B) is not supported; such
//! packets are rejected with [`H264Error::InterleavedModeOnly`].

use std::iter::FusedIterator;

mod depacketizer;

pub use depacketizer::{
    Depacketized, Depacketizer, DepacketizerConfig, DepacketizerStats, DiscardReason,
};

/// Payload type field value of a STAP-A (RFC 6184 Table 1).
pub const STAP_A: u8 = 24;
/// Payload type field value of a STAP-B.
pub const STAP_B: u8 = 25;
/// Payload type field value of an MTAP16.
pub const MTAP16: u8 = 26;
/// Payload type field value of an MTAP24.
pub const MTAP24: u8 = 27;
/// Payload type field value of an FU-A.
pub const FU_A: u8 = 28;
/// Payload type field value of an FU-B.
pub const FU_B: u8 = 29;

/// Bytes an FU-A adds in front of each fragment: FU indicator and FU header.
pub const FU_A_HEADER_LEN: usize = 2;

/// What was wrong with a NAL unit, an RTP payload, or an output buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum H264Error {
    /// A NAL unit with no bytes (not even its header) was given to send.
    #[error("empty NAL unit: it needs at least its one-byte header")]
    EmptyNal,
    /// A NAL unit whose type RFC 6184 uses for its own packet structures.
    #[error("NAL unit type {nal_type} cannot be sent: RFC 6184 gives types 0 and 24-31 to its packet structures")]
    UnsendableNalType {
        /// The NAL unit type.
        nal_type: u8,
    },
    /// A maximum payload size too small for an FU-A.
    #[error("maximum payload size {max_payload} is below 3 bytes: an FU-A needs 2 header bytes and 1 data byte")]
    MaxPayloadTooSmall {
        /// The size given.
        max_payload: usize,
    },
    /// An empty RTP payload.
    #[error("empty RTP payload: it needs at least the one-byte payload header")]
    EmptyPayload,
    /// Payload type 0, 30 or 31, which RFC 6184 Table 3 says to ignore.
    #[error(
        "payload type {packet_type} is reserved; the packet was ignored (RFC 6184 §5.4, Table 3)"
    )]
    ReservedPacketType {
        /// The type field.
        packet_type: u8,
    },
    /// STAP-B, MTAP16, MTAP24 or FU-B, which only the interleaved mode allows.
    #[error("{name} (payload type {packet_type}) is only allowed in the interleaved mode, which is not supported")]
    InterleavedModeOnly {
        /// The type field.
        packet_type: u8,
        /// The packet type's name.
        name: &'static str,
    },
    /// A view was asked for on a payload of another type.
    #[error("expected payload type {expected}, found {found}")]
    WrongPacketType {
        /// The type the view needs.
        expected: u8,
        /// The type found.
        found: u8,
    },
    /// An FU-A shorter than its two header bytes.
    #[error("FU-A payload of {len} bytes is shorter than its FU indicator and FU header")]
    FuATruncated {
        /// Bytes available.
        len: usize,
    },
    /// An FU-A with both the Start and the End bit set.
    #[error(
        "FU-A with both the Start and End bits set (RFC 6184 §5.8 forbids a NAL unit in one FU)"
    )]
    FuAStartAndEnd,
    /// A STAP-A ends in the middle of a NAL unit size field.
    #[error("STAP-A ends inside the NAL unit size field at byte {offset}")]
    StapASizeTruncated {
        /// Where the size field starts.
        offset: usize,
    },
    /// A STAP-A NAL unit size of zero.
    #[error("STAP-A NAL unit at byte {offset} has size 0")]
    StapAEmptyNal {
        /// Where its size field starts.
        offset: usize,
    },
    /// A STAP-A NAL unit that runs past the end of the payload.
    #[error("STAP-A NAL unit at byte {offset} has size {size} but only {available} bytes follow")]
    StapANalTruncated {
        /// Where its size field starts.
        offset: usize,
        /// The size field.
        size: u16,
        /// Bytes after the size field.
        available: usize,
    },
    /// A STAP-A with no NAL unit in it.
    #[error("STAP-A carries no NAL unit")]
    StapAEmpty,
    /// A NAL unit too long for a STAP-A's 16-bit size field.
    #[error("NAL unit of {len} bytes does not fit a STAP-A's 16-bit size field")]
    StapANalTooLong {
        /// Its length.
        len: usize,
    },
    /// The output buffer is too small.
    #[error("output buffer of {len} bytes is shorter than the {needed} bytes needed")]
    BufferTooShort {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        len: usize,
    },
    /// A packet at or behind the previous one in sequence order: a duplicate
    /// or a late packet. It was ignored.
    #[error("RTP packet {got} is a duplicate or late (expected {expected}); pass packets in sequence-number order")]
    StalePacket {
        /// The sequence number expected next.
        expected: u16,
        /// The sequence number given.
        got: u16,
    },
}

/// The NAL unit header octet (RFC 6184 §5.3; H.264 §7.3.1): F, NRI, Type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NalHeader(pub u8);

impl NalHeader {
    /// From its parts; each is masked to its width (1, 2 and 5 bits).
    pub const fn new(forbidden_zero_bit: bool, nri: u8, nal_type: u8) -> Self {
        NalHeader(((forbidden_zero_bit as u8) << 7) | ((nri & 0x03) << 5) | (nal_type & 0x1f))
    }

    /// F: the forbidden_zero_bit. RFC 6184 §5.3: "A value of 1 indicates that
    /// the NAL unit type octet and payload may contain bit errors or other
    /// syntax violations."
    pub const fn forbidden_zero_bit(self) -> bool {
        self.0 & 0x80 != 0
    }

    /// NRI: nal_ref_idc, 0 (disposable) to 3 (most important).
    pub const fn nri(self) -> u8 {
        (self.0 >> 5) & 0x03
    }

    /// Type: the NAL unit type, or in an RTP payload header the payload
    /// structure (Table 1).
    pub const fn nal_type(self) -> u8 {
        self.0 & 0x1f
    }

    /// The same header with F and NRI kept and the type replaced.
    pub const fn with_type(self, nal_type: u8) -> Self {
        NalHeader((self.0 & 0xe0) | (nal_type & 0x1f))
    }
}

/// The payload structure an RTP payload's first octet announces
/// (RFC 6184 §5.4, Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketType {
    /// Types 1-23: the payload is one whole NAL unit (§5.6).
    SingleNal {
        /// The NAL unit type.
        nal_type: u8,
    },
    /// Type 24: single-time aggregation packet (§5.7.1).
    StapA,
    /// Type 25 (interleaved mode only).
    StapB,
    /// Type 26 (interleaved mode only).
    Mtap16,
    /// Type 27 (interleaved mode only).
    Mtap24,
    /// Type 28: fragmentation unit (§5.8).
    FuA,
    /// Type 29 (interleaved mode only).
    FuB,
    /// Types 0, 30 and 31.
    Reserved {
        /// The type field.
        packet_type: u8,
    },
}

impl PacketType {
    /// Classifies a payload header.
    pub const fn of(header: NalHeader) -> Self {
        match header.nal_type() {
            nal_type @ 1..=23 => PacketType::SingleNal { nal_type },
            STAP_A => PacketType::StapA,
            STAP_B => PacketType::StapB,
            MTAP16 => PacketType::Mtap16,
            MTAP24 => PacketType::Mtap24,
            FU_A => PacketType::FuA,
            FU_B => PacketType::FuB,
            packet_type => PacketType::Reserved { packet_type },
        }
    }
}

/// Writes `bytes` at `at`; callers check the length first.
fn put(buffer: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(target) = buffer.get_mut(at..at.saturating_add(bytes.len())) {
        target.copy_from_slice(bytes);
    }
}

fn first_byte(data: &[u8]) -> u8 {
    data.first().copied().unwrap_or(0)
}

/// A checked view of an FU-A payload (RFC 6184 §5.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FuAPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> FuAPacket<T> {
    /// Checks the type (28), the length (at least FU indicator and FU header)
    /// and that Start and End are not both set.
    pub fn new_checked(buffer: T) -> Result<Self, H264Error> {
        let data = buffer.as_ref();
        let Some(&indicator) = data.first() else {
            return Err(H264Error::FuATruncated { len: 0 });
        };
        let found = NalHeader(indicator).nal_type();
        if found != FU_A {
            return Err(H264Error::WrongPacketType {
                expected: FU_A,
                found,
            });
        }
        let Some(&fu_header) = data.get(1) else {
            return Err(H264Error::FuATruncated { len: data.len() });
        };
        // RFC 6184 §5.8: "A fragmented NAL unit MUST NOT be transmitted in one
        // FU; that is, the Start bit and End bit MUST NOT both be set to one in
        // the same FU header."
        if fu_header & 0xc0 == 0xc0 {
            return Err(H264Error::FuAStartAndEnd);
        }
        Ok(FuAPacket { buffer })
    }

    fn fu_header(&self) -> u8 {
        self.buffer.as_ref().get(1).copied().unwrap_or(0)
    }

    /// The FU indicator: F and NRI of the fragmented NAL unit, type 28.
    pub fn indicator(&self) -> NalHeader {
        NalHeader(first_byte(self.buffer.as_ref()))
    }

    /// S: this fragment starts the NAL unit.
    pub fn is_start(&self) -> bool {
        self.fu_header() & 0x80 != 0
    }

    /// E: this fragment ends the NAL unit.
    pub fn is_end(&self) -> bool {
        self.fu_header() & 0x40 != 0
    }

    /// The header of the fragmented NAL unit: F and NRI from the FU
    /// indicator, the type from the FU header. (The R bit "MUST be ignored by
    /// the receiver".)
    pub fn nal_header(&self) -> NalHeader {
        self.indicator().with_type(self.fu_header())
    }

    /// The fragment of the NAL unit's payload (after its header octet).
    pub fn fragment(&self) -> &[u8] {
        self.buffer.as_ref().get(FU_A_HEADER_LEN..).unwrap_or(&[])
    }
}

/// Walks a STAP-A body; returns the number of NAL units or the first error.
fn check_stap_a(data: &[u8]) -> Result<usize, H264Error> {
    let mut offset = 1;
    let mut count = 0;
    while offset < data.len() {
        let Some(&[high, low]) = data.get(offset..offset + 2) else {
            return Err(H264Error::StapASizeTruncated { offset });
        };
        let size = u16::from_be_bytes([high, low]);
        if size == 0 {
            return Err(H264Error::StapAEmptyNal { offset });
        }
        let available = data.len() - offset - 2;
        if usize::from(size) > available {
            return Err(H264Error::StapANalTruncated {
                offset,
                size,
                available,
            });
        }
        offset += 2 + usize::from(size);
        count += 1;
    }
    if count == 0 {
        return Err(H264Error::StapAEmpty);
    }
    Ok(count)
}

/// A checked view of a STAP-A payload (RFC 6184 §5.7.1): a header octet
/// then NAL units, each preceded by its 16-bit size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StapAPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> StapAPacket<T> {
    /// Checks the type (24) and that the payload is a whole number of
    /// non-empty, size-prefixed NAL units, at least one.
    pub fn new_checked(buffer: T) -> Result<Self, H264Error> {
        let data = buffer.as_ref();
        let Some(&header) = data.first() else {
            return Err(H264Error::EmptyPayload);
        };
        let found = NalHeader(header).nal_type();
        if found != STAP_A {
            return Err(H264Error::WrongPacketType {
                expected: STAP_A,
                found,
            });
        }
        check_stap_a(data)?;
        Ok(StapAPacket { buffer })
    }

    /// The STAP-A header octet.
    pub fn header(&self) -> NalHeader {
        NalHeader(first_byte(self.buffer.as_ref()))
    }

    /// The aggregated NAL units, in order.
    pub fn nal_units(&self) -> StapAUnits<'_> {
        StapAUnits {
            rest: self.buffer.as_ref().get(1..).unwrap_or(&[]),
        }
    }
}

/// Iterator over the NAL units of a [`StapAPacket`].
#[derive(Clone, Debug)]
pub struct StapAUnits<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for StapAUnits<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        let (size, rest) = self.rest.split_first_chunk::<2>()?;
        let size = usize::from(u16::from_be_bytes(*size));
        let nal = rest.get(..size)?;
        self.rest = rest.get(size..).unwrap_or(&[]);
        Some(nal)
    }
}

impl FusedIterator for StapAUnits<'_> {}

/// Length of the STAP-A that [`emit_stap_a`] writes for `nal_units`.
pub fn stap_a_len(nal_units: &[&[u8]]) -> usize {
    1 + nal_units.iter().map(|nal| 2 + nal.len()).sum::<usize>()
}

/// Writes a STAP-A aggregating `nal_units` at the start of `buffer` and
/// returns its length.
///
/// RFC 6184 §5.7: the F bit "MUST be set to 0 if all F bits of the aggregated
/// NAL units are zero; otherwise, it MUST be set to 1", and NRI "MUST be the
/// maximum of all the NAL units carried in the aggregation packet".
pub fn emit_stap_a(nal_units: &[&[u8]], buffer: &mut [u8]) -> Result<usize, H264Error> {
    if nal_units.is_empty() {
        return Err(H264Error::StapAEmpty);
    }
    let mut forbidden = false;
    let mut nri = 0;
    for nal in nal_units {
        let Some(&header) = nal.first() else {
            return Err(H264Error::EmptyNal);
        };
        if nal.len() > usize::from(u16::MAX) {
            return Err(H264Error::StapANalTooLong { len: nal.len() });
        }
        forbidden |= NalHeader(header).forbidden_zero_bit();
        nri = nri.max(NalHeader(header).nri());
    }
    let needed = stap_a_len(nal_units);
    if buffer.len() < needed {
        return Err(H264Error::BufferTooShort {
            needed,
            len: buffer.len(),
        });
    }
    put(buffer, 0, &[NalHeader::new(forbidden, nri, STAP_A).0]);
    let mut at = 1;
    for nal in nal_units {
        // Checked above: the length fits 16 bits.
        put(buffer, at, &(nal.len() as u16).to_be_bytes());
        put(buffer, at + 2, nal);
        at += 2 + nal.len();
    }
    Ok(at)
}

/// One RTP payload produced by the [`Packetizer`], borrowing the NAL unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fragment<'a> {
    /// A Single NAL Unit packet: the whole NAL unit (§5.6).
    Single(&'a [u8]),
    /// One FU-A (§5.8).
    FuA {
        /// The FU indicator octet.
        indicator: u8,
        /// The FU header octet (S, E, R = 0, type).
        fu_header: u8,
        /// This fragment of the NAL unit's payload.
        data: &'a [u8],
    },
}

impl Fragment<'_> {
    /// Length of the RTP payload.
    pub fn buffer_len(&self) -> usize {
        match self {
            Fragment::Single(nal) => nal.len(),
            Fragment::FuA { data, .. } => FU_A_HEADER_LEN + data.len(),
        }
    }

    /// True for the last payload of the NAL unit (a Single NAL Unit packet,
    /// or the FU-A with the E bit). The RTP marker bit goes on the last
    /// payload of the last NAL unit of an access unit.
    pub fn is_last(&self) -> bool {
        match self {
            Fragment::Single(_) => true,
            Fragment::FuA { fu_header, .. } => fu_header & 0x40 != 0,
        }
    }

    /// Writes the RTP payload at the start of `buffer` and returns its length.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize, H264Error> {
        let needed = self.buffer_len();
        if buffer.len() < needed {
            return Err(H264Error::BufferTooShort {
                needed,
                len: buffer.len(),
            });
        }
        match self {
            Fragment::Single(nal) => put(buffer, 0, nal),
            Fragment::FuA {
                indicator,
                fu_header,
                data,
            } => {
                put(buffer, 0, &[*indicator, *fu_header]);
                put(buffer, FU_A_HEADER_LEN, data);
            }
        }
        Ok(needed)
    }

    /// The RTP payload as a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut payload = vec![0; self.buffer_len()];
        // The vector has exactly the length `emit` needs.
        let _ = self.emit(&mut payload);
        payload
    }
}

/// Splits one NAL unit into RTP payloads of at most `max_payload` bytes.
///
/// A NAL unit that fits is sent whole as a Single NAL Unit packet (§5.6).
/// A larger one is cut into FU-A fragments (§5.8), each as full as
/// `max_payload` allows except the last. RFC 6184 §5.8: "The NAL unit type
/// octet of the fragmented NAL unit is not included as such in the
/// fragmentation unit payload, but rather the information of the NAL unit
/// type octet of the fragmented NAL unit is conveyed in the F and NRI fields
/// of the FU indicator octet of the fragmentation unit and in the type field
/// of the FU header."
#[derive(Clone, Debug)]
pub struct Packetizer<'a> {
    nal: &'a [u8],
    header: NalHeader,
    /// Bytes of NAL payload per FU-A (max_payload - 2).
    chunk: usize,
    /// Next byte of `nal` to send; `nal.len()` when done.
    offset: usize,
    single: bool,
}

impl<'a> Packetizer<'a> {
    /// A packetizer for `nal` (one NAL unit without Annex B start code).
    pub fn new(nal: &'a [u8], max_payload: usize) -> Result<Self, H264Error> {
        if max_payload < FU_A_HEADER_LEN + 1 {
            return Err(H264Error::MaxPayloadTooSmall { max_payload });
        }
        let &first = nal.first().ok_or(H264Error::EmptyNal)?;
        let header = NalHeader(first);
        if !matches!(header.nal_type(), 1..=23) {
            return Err(H264Error::UnsendableNalType {
                nal_type: header.nal_type(),
            });
        }
        Ok(Packetizer {
            nal,
            header,
            chunk: max_payload - FU_A_HEADER_LEN,
            offset: if nal.len() <= max_payload { 0 } else { 1 },
            single: nal.len() <= max_payload,
        })
    }

    /// How many payloads remain.
    fn remaining(&self) -> usize {
        if self.offset >= self.nal.len() {
            0
        } else if self.single {
            1
        } else {
            (self.nal.len() - self.offset).div_ceil(self.chunk)
        }
    }
}

impl<'a> Iterator for Packetizer<'a> {
    type Item = Fragment<'a>;

    fn next(&mut self) -> Option<Fragment<'a>> {
        if self.offset >= self.nal.len() {
            return None;
        }
        if self.single {
            self.offset = self.nal.len();
            return Some(Fragment::Single(self.nal));
        }
        let start = self.offset == 1;
        let end_at = self.offset.saturating_add(self.chunk).min(self.nal.len());
        let data = self.nal.get(self.offset..end_at)?;
        self.offset = end_at;
        let end = end_at == self.nal.len();
        // FU header: S | E | R = 0 | type of the fragmented NAL unit.
        let fu_header =
            if start { 0x80 } else { 0 } | if end { 0x40 } else { 0 } | self.header.nal_type();
        Some(Fragment::FuA {
            indicator: self.header.with_type(FU_A).0,
            fu_header,
            data,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = self.remaining();
        (remaining, Some(remaining))
    }
}

impl ExactSizeIterator for Packetizer<'_> {}
impl FusedIterator for Packetizer<'_> {}

/// All the RTP payloads of one NAL unit, as vectors (a convenience over
/// [`Packetizer`]).
pub fn packetize(nal: &[u8], max_payload: usize) -> Result<Vec<Vec<u8>>, H264Error> {
    Ok(Packetizer::new(nal, max_payload)?
        .map(|fragment| fragment.to_vec())
        .collect())
}

#[cfg(test)]
mod tests;
