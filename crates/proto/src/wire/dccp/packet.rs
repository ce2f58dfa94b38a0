//! The zero-copy view of a DCCP packet.

use super::{
    ChecksumContext, DccpError, PacketType, PseudoHeader, ResetCode, SeqNum, MIN_HEADER_LEN,
};
use crate::wire::checksum::Accumulator;

/// Byte offsets of the generic header fields.
pub(super) mod field {
    pub(in crate::wire::dccp) const SRC_PORT: usize = 0;
    pub(in crate::wire::dccp) const DST_PORT: usize = 2;
    pub(in crate::wire::dccp) const DATA_OFFSET: usize = 4;
    pub(in crate::wire::dccp) const CCVAL_CSCOV: usize = 5;
    pub(in crate::wire::dccp) const CHECKSUM: usize = 6;
    pub(in crate::wire::dccp) const TYPE_X: usize = 8;
    /// X = 1: the reserved byte; X = 0: the first sequence number byte.
    pub(in crate::wire::dccp) const SEQ_SHORT: usize = 9;
    pub(in crate::wire::dccp) const SEQ_LONG: usize = 10;
}

/// A zero-copy view of a DCCP packet (header, options and application data).
///
/// Build it with [`new_checked`](Self::new_checked) to read a received packet:
/// the header rules are then known to hold and every accessor is in bounds.
/// [`new_unchecked`](Self::new_unchecked) is for emitting into a fresh
/// buffer; on a buffer too short for a field, its accessors return zero (or
/// an empty slice) rather than panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    pub(super) buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without any checks.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// A view of a packet that satisfies [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>, DccpError> {
        let packet = Packet::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks the header rules that make the view safe to read, in the order
    /// of the RFC 4340 §8.5 step 1 checks: the generic header is present
    /// (§5.1), the type is not reserved (§5.1), X = 1 unless the type is Data,
    /// Ack or DataAck (§5.1), Data Offset covers the type's fixed header and
    /// lies within the packet (§5.1), and CsCov does not cover more data than
    /// there is (§9.2).
    pub fn check_len(&self) -> Result<(), DccpError> {
        let len = self.bytes().len();
        if len < MIN_HEADER_LEN {
            return Err(DccpError::Truncated {
                len,
                needed: MIN_HEADER_LEN,
            });
        }
        let packet_type = PacketType::from_code(self.packet_type_code())?;
        let extended = self.extended();
        // RFC 4340 §5.1: X = 0 is allowed only on Data, Ack and DataAck;
        // endpoints ignore other packet types with X = 0.
        if !extended && !packet_type.allows_short_seqno() {
            return Err(DccpError::ShortSeqnoNotAllowed(packet_type));
        }
        let generic = if extended { 16 } else { 12 };
        if len < generic {
            return Err(DccpError::Truncated {
                len,
                needed: generic,
            });
        }
        let data_offset = self.data_offset();
        if self.header_len() > len {
            return Err(DccpError::DataOffsetTooLarge { data_offset, len });
        }
        let needed = packet_type.header_len(extended);
        if self.header_len() < needed {
            return Err(DccpError::DataOffsetTooSmall {
                data_offset,
                needed,
                packet_type,
            });
        }
        // RFC 4340 §8.5 step 1 also drops a packet whose CsCov is too large
        // for its size.
        self.checksum_coverage_len().map(|_| ())
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    fn u8_at(&self, at: usize) -> u8 {
        self.bytes().get(at).copied().unwrap_or(0)
    }

    fn be_at(&self, at: usize, len: usize) -> u64 {
        match self.bytes().get(at..at + len) {
            Some(bytes) => bytes.iter().fold(0, |n, &b| (n << 8) | u64::from(b)),
            None => 0,
        }
    }

    fn u16_at(&self, at: usize) -> u16 {
        // Two bytes fit in a u16.
        self.be_at(at, 2) as u16
    }

    /// Source Port.
    pub fn src_port(&self) -> u16 {
        self.u16_at(field::SRC_PORT)
    }

    /// Destination Port.
    pub fn dst_port(&self) -> u16 {
        self.u16_at(field::DST_PORT)
    }

    /// Data Offset, in 32-bit words.
    pub fn data_offset(&self) -> u8 {
        self.u8_at(field::DATA_OFFSET)
    }

    /// The header length in bytes (Data Offset · 4): the start of the
    /// application data.
    pub fn header_len(&self) -> usize {
        usize::from(self.data_offset()) * 4
    }

    /// CCVal, the 4-bit field the sender's CCID uses.
    pub fn ccval(&self) -> u8 {
        self.u8_at(field::CCVAL_CSCOV) >> 4
    }

    /// CsCov, the 4-bit checksum coverage.
    pub fn checksum_coverage(&self) -> u8 {
        self.u8_at(field::CCVAL_CSCOV) & 0x0F
    }

    /// The Checksum field.
    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }

    /// The 4-bit Type field (reserved values included).
    pub fn packet_type_code(&self) -> u8 {
        (self.u8_at(field::TYPE_X) >> 1) & 0x0F
    }

    /// The packet type; an error for reserved types.
    pub fn packet_type(&self) -> Result<PacketType, DccpError> {
        PacketType::from_code(self.packet_type_code())
    }

    /// The X bit: `true` for 48-bit sequence numbers.
    pub fn extended(&self) -> bool {
        self.u8_at(field::TYPE_X) & 1 == 1
    }

    /// The Sequence Number: 48 bits with X = 1, the 24 bits on the wire with
    /// X = 0 (extend them with [`SeqNum::extend_short`]).
    pub fn seq_number(&self) -> SeqNum {
        if self.extended() {
            SeqNum::new(self.be_at(field::SEQ_LONG, 6))
        } else {
            SeqNum::new(self.be_at(field::SEQ_SHORT, 3))
        }
    }

    fn generic_len(&self) -> usize {
        if self.extended() {
            16
        } else {
            12
        }
    }

    /// The Acknowledgement Number, for types that carry one (24 bits with
    /// X = 0, as for [`seq_number`](Self::seq_number)).
    pub fn ack_number(&self) -> Option<SeqNum> {
        let packet_type = self.packet_type().ok()?;
        if !packet_type.has_ack() {
            return None;
        }
        let at = self.generic_len();
        Some(if self.extended() {
            // 16 reserved bits, then 48 bits.
            SeqNum::new(self.be_at(at + 2, 6))
        } else {
            // 8 reserved bits, then 24 bits.
            SeqNum::new(self.be_at(at + 1, 3))
        })
    }

    /// The Service Code of a Request or Response.
    pub fn service_code(&self) -> Option<u32> {
        let at = match self.packet_type().ok()? {
            PacketType::Request => self.generic_len(),
            PacketType::Response => self.generic_len() + 8,
            _ => return None,
        };
        // Four bytes fit in a u32.
        Some(self.be_at(at, 4) as u32)
    }

    /// The Reset Code and Data 1-3 of a Reset.
    pub fn reset(&self) -> Option<(ResetCode, [u8; 3])> {
        if self.packet_type().ok()? != PacketType::Reset {
            return None;
        }
        let at = self.generic_len() + 8;
        Some((
            ResetCode::from(self.u8_at(at)),
            [self.u8_at(at + 1), self.u8_at(at + 2), self.u8_at(at + 3)],
        ))
    }

    /// The fixed header length of this packet's type and X (0 for a reserved
    /// type).
    fn fixed_header_len(&self) -> usize {
        self.packet_type()
            .map_or(0, |t| t.header_len(self.extended()))
    }

    /// The options area: from the end of the fixed header to Data Offset.
    pub fn options(&self) -> &[u8] {
        self.bytes()
            .get(self.fixed_header_len()..self.header_len())
            .unwrap_or_default()
    }

    /// The application data.
    pub fn payload(&self) -> &[u8] {
        self.bytes().get(self.header_len()..).unwrap_or_default()
    }

    /// How many bytes the checksum covers: the whole packet when CsCov = 0,
    /// otherwise the header and (CsCov − 1) · 4 bytes of application data
    /// (RFC 4340 §9.2); an error when that exceeds the application data.
    pub fn checksum_coverage_len(&self) -> Result<usize, DccpError> {
        let len = self.bytes().len();
        let cscov = self.checksum_coverage();
        if cscov == 0 {
            return Ok(len);
        }
        let payload_len = len.saturating_sub(self.header_len());
        let covered = (usize::from(cscov) - 1) * 4;
        if covered > payload_len {
            return Err(DccpError::ChecksumCoverageTooLarge { cscov, payload_len });
        }
        Ok(self.header_len() + covered)
    }

    /// The one's complement sum of the pseudo-header and the covered bytes,
    /// including the Checksum field as it is.
    fn checksum_sum(&self, pseudo: &PseudoHeader) -> Result<Accumulator, DccpError> {
        let covered = self.checksum_coverage_len()?;
        let mut acc = Accumulator::new();
        pseudo.accumulate(&mut acc, self.bytes().len());
        acc.add_bytes(self.bytes().get(..covered).unwrap_or_default());
        Ok(acc)
    }

    /// Verifies the Checksum (RFC 4340 §9): with a pseudo-header, the sum over
    /// the pseudo-header and the covered bytes, Checksum included, must be
    /// all ones. With [`ChecksumContext::UdpEncapsulated`] nothing is checked.
    pub fn verify_checksum(&self, context: &ChecksumContext) -> Result<(), DccpError> {
        let ChecksumContext::PseudoHeader(pseudo) = context else {
            return Ok(());
        };
        let sum = self.checksum_sum(pseudo)?.sum();
        if sum == 0xFFFF {
            return Ok(());
        }
        let found = self.checksum();
        Err(DccpError::ChecksumMismatch {
            found,
            computed: ones_complement_sub(sum, found),
        })
    }
}

/// The checksum that makes a sum verify: `!(sum − field)` in one's complement
/// arithmetic, where `sum` includes `field`.
fn ones_complement_sub(sum: u16, field: u16) -> u16 {
    // a − b in one's complement is a + !b with end-around carry.
    let (value, carry) = sum.overflowing_add(!field);
    !(value.wrapping_add(u16::from(carry)))
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The application data, borrowed for as long as the buffer.
    pub fn payload_ref(&self) -> &'a [u8] {
        let bytes: &'a [u8] = self.buffer.as_ref();
        let start = usize::from(bytes.get(field::DATA_OFFSET).copied().unwrap_or(0)) * 4;
        bytes.get(start..).unwrap_or_default()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub(super) fn put(&mut self, at: usize, value: u64, len: usize) {
        let bytes = value.to_be_bytes();
        if let (Some(dst), Some(src)) = (
            self.buffer.as_mut().get_mut(at..at + len),
            bytes.get(8 - len..),
        ) {
            dst.copy_from_slice(src);
        }
    }

    pub(super) fn put_u8(&mut self, at: usize, value: u8) {
        if let Some(b) = self.buffer.as_mut().get_mut(at) {
            *b = value;
        }
    }

    /// Sets the Checksum field.
    pub fn set_checksum(&mut self, checksum: u16) {
        self.put(field::CHECKSUM, u64::from(checksum), 2);
    }

    /// Computes and writes the Checksum for `context` (zero for
    /// [`ChecksumContext::UdpEncapsulated`]). The header fields, Data Offset
    /// and CsCov must already be written.
    pub fn fill_checksum(&mut self, context: &ChecksumContext) -> Result<(), DccpError> {
        self.set_checksum(0);
        if let ChecksumContext::PseudoHeader(pseudo) = context {
            let checksum = self.checksum_sum(pseudo)?.checksum();
            self.set_checksum(checksum);
        }
        Ok(())
    }

    /// The application data, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        self.buffer.as_mut().get_mut(start..).unwrap_or_default()
    }
}
