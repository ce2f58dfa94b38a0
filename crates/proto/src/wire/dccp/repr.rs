//! The parsed representation of a DCCP packet.

use super::packet::{field, Packet};
use super::{ChecksumContext, DccpError, PacketType, ResetCode, SeqNum, MAX_HEADER_LEN};
use crate::wire::options::Options;

/// A packet type with its type-specific header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// DCCP-Request with its Service Code (RFC 4340 §5.2).
    Request {
        /// The Service Code.
        service_code: u32,
    },
    /// DCCP-Response (§5.3).
    Response {
        /// The Acknowledgement Number.
        ack: SeqNum,
        /// The Service Code.
        service_code: u32,
    },
    /// DCCP-Data (§5.4).
    Data,
    /// DCCP-Ack (§5.4).
    Ack {
        /// The Acknowledgement Number.
        ack: SeqNum,
    },
    /// DCCP-DataAck (§5.4).
    DataAck {
        /// The Acknowledgement Number.
        ack: SeqNum,
    },
    /// DCCP-CloseReq (§5.5).
    CloseReq {
        /// The Acknowledgement Number.
        ack: SeqNum,
    },
    /// DCCP-Close (§5.5).
    Close {
        /// The Acknowledgement Number.
        ack: SeqNum,
    },
    /// DCCP-Reset (§5.6).
    Reset {
        /// The Acknowledgement Number.
        ack: SeqNum,
        /// The Reset Code.
        code: ResetCode,
        /// Data 1, Data 2 and Data 3.
        data: [u8; 3],
    },
    /// DCCP-Sync (§5.7).
    Sync {
        /// The Acknowledgement Number.
        ack: SeqNum,
    },
    /// DCCP-SyncAck (§5.7).
    SyncAck {
        /// The Acknowledgement Number.
        ack: SeqNum,
    },
}

impl PacketKind {
    /// The packet type.
    pub const fn packet_type(&self) -> PacketType {
        match self {
            PacketKind::Request { .. } => PacketType::Request,
            PacketKind::Response { .. } => PacketType::Response,
            PacketKind::Data => PacketType::Data,
            PacketKind::Ack { .. } => PacketType::Ack,
            PacketKind::DataAck { .. } => PacketType::DataAck,
            PacketKind::CloseReq { .. } => PacketType::CloseReq,
            PacketKind::Close { .. } => PacketType::Close,
            PacketKind::Reset { .. } => PacketType::Reset,
            PacketKind::Sync { .. } => PacketType::Sync,
            PacketKind::SyncAck { .. } => PacketType::SyncAck,
        }
    }

    /// The Acknowledgement Number, for types that carry one.
    pub const fn ack(&self) -> Option<SeqNum> {
        match *self {
            PacketKind::Request { .. } | PacketKind::Data => None,
            PacketKind::Response { ack, .. }
            | PacketKind::Ack { ack }
            | PacketKind::DataAck { ack }
            | PacketKind::CloseReq { ack }
            | PacketKind::Close { ack }
            | PacketKind::Reset { ack, .. }
            | PacketKind::Sync { ack }
            | PacketKind::SyncAck { ack } => Some(ack),
        }
    }
}

/// A parsed DCCP packet: header fields, options and a borrowed payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DccpRepr<'a> {
    /// Source Port.
    pub src_port: u16,
    /// Destination Port.
    pub dst_port: u16,
    /// CCVal, 0-15: set by the sender's CCID (the CCID 3 window counter).
    pub ccval: u8,
    /// CsCov, 0-15: how much application data the checksum covers.
    pub checksum_coverage: u8,
    /// X = 0: 24-bit sequence and acknowledgement numbers. Only on Data, Ack
    /// and DataAck. On emit only the low 24 bits of the numbers are written
    /// (RFC 4340 §7.6); on parse they are the 24 bits on the wire.
    pub short_seqno: bool,
    /// The Sequence Number.
    pub seq: SeqNum,
    /// The packet type and its type-specific fields.
    pub kind: PacketKind,
    /// The options.
    pub options: Options,
    /// The application data.
    pub payload: &'a [u8],
}

impl<'a> DccpRepr<'a> {
    /// Parses and validates a packet: the header rules of
    /// [`Packet::check_len`], the checksum for `checksum`, and the options.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        packet: &Packet<&'a T>,
        checksum: &ChecksumContext,
    ) -> Result<DccpRepr<'a>, DccpError> {
        packet.check_len()?;
        packet.verify_checksum(checksum)?;
        let packet_type = packet.packet_type()?;
        let fixed = packet_type.header_len(packet.extended());
        let options = Options::parse_at(packet.options(), fixed)?;
        let ack = packet.ack_number().unwrap_or_default();
        let service_code = packet.service_code().unwrap_or_default();
        let kind = match packet_type {
            PacketType::Request => PacketKind::Request { service_code },
            PacketType::Response => PacketKind::Response { ack, service_code },
            PacketType::Data => PacketKind::Data,
            PacketType::Ack => PacketKind::Ack { ack },
            PacketType::DataAck => PacketKind::DataAck { ack },
            PacketType::CloseReq => PacketKind::CloseReq { ack },
            PacketType::Close => PacketKind::Close { ack },
            PacketType::Reset => {
                let (code, data) = packet.reset().unwrap_or((ResetCode::Unspecified, [0; 3]));
                PacketKind::Reset { ack, code, data }
            }
            PacketType::Sync => PacketKind::Sync { ack },
            PacketType::SyncAck => PacketKind::SyncAck { ack },
        };
        Ok(DccpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            ccval: packet.ccval(),
            checksum_coverage: packet.checksum_coverage(),
            short_seqno: !packet.extended(),
            seq: packet.seq_number(),
            kind,
            options,
            payload: packet.payload_ref(),
        })
    }

    /// [`parse`](Self::parse) on raw bytes.
    pub fn parse_bytes(
        bytes: &'a [u8],
        checksum: &ChecksumContext,
    ) -> Result<DccpRepr<'a>, DccpError> {
        let packet = Packet::new_checked(bytes)?;
        DccpRepr::parse(&packet, checksum)
    }

    /// The header length with options and padding: what Data Offset · 4 will
    /// be.
    pub fn header_len(&self) -> usize {
        self.kind.packet_type().header_len(!self.short_seqno) + self.options.padded_len()
    }

    /// The whole packet's length.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }

    /// Checks the fields that the types do not constrain.
    fn validate(&self) -> Result<(), DccpError> {
        let out_of_range = |field, value: u8, max| DccpError::FieldOutOfRange {
            field,
            value: u64::from(value),
            max,
        };
        if self.ccval > 15 {
            return Err(out_of_range("CCVal", self.ccval, 15));
        }
        if self.checksum_coverage > 15 {
            return Err(out_of_range("CsCov", self.checksum_coverage, 15));
        }
        let packet_type = self.kind.packet_type();
        if self.short_seqno && !packet_type.allows_short_seqno() {
            return Err(DccpError::ShortSeqnoNotAllowed(packet_type));
        }
        self.options.check_encodable()?;
        if self.header_len() > MAX_HEADER_LEN {
            return Err(DccpError::HeaderTooLong {
                len: self.header_len(),
            });
        }
        let covered = usize::from(self.checksum_coverage).saturating_sub(1) * 4;
        if self.checksum_coverage > 0 && covered > self.payload.len() {
            return Err(DccpError::ChecksumCoverageTooLarge {
                cscov: self.checksum_coverage,
                payload_len: self.payload.len(),
            });
        }
        Ok(())
    }

    /// Writes the packet into `packet`, whose buffer must be exactly
    /// [`buffer_len`](Self::buffer_len) bytes, and fills the checksum for
    /// `checksum`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut Packet<T>,
        checksum: &ChecksumContext,
    ) -> Result<(), DccpError> {
        self.validate()?;
        let len = packet.buffer.as_ref().len();
        if len != self.buffer_len() {
            return Err(DccpError::BufferLength {
                len,
                needed: self.buffer_len(),
            });
        }
        let packet_type = self.kind.packet_type();
        let extended = !self.short_seqno;
        let header_len = self.header_len();
        packet.put(field::SRC_PORT, u64::from(self.src_port), 2);
        packet.put(field::DST_PORT, u64::from(self.dst_port), 2);
        // validate(): header_len <= 1020 and a multiple of 4, so it fits.
        packet.put_u8(
            field::DATA_OFFSET,
            u8::try_from(header_len / 4).unwrap_or(u8::MAX),
        );
        packet.put_u8(
            field::CCVAL_CSCOV,
            (self.ccval << 4) | self.checksum_coverage,
        );
        packet.set_checksum(0);
        // RFC 4340 §5.1: Res and the reserved fields are sent as zero.
        packet.put_u8(
            field::TYPE_X,
            (packet_type.code() << 1) | u8::from(extended),
        );
        let mut at = if extended {
            packet.put_u8(field::SEQ_SHORT, 0);
            packet.put(field::SEQ_LONG, self.seq.value(), 6);
            16
        } else {
            packet.put(field::SEQ_SHORT, u64::from(self.seq.low24()), 3);
            12
        };
        if let Some(ack) = self.kind.ack() {
            if extended {
                packet.put(at, ack.value(), 8);
                at += 8;
            } else {
                packet.put(at, u64::from(ack.low24()), 4);
                at += 4;
            }
        }
        match self.kind {
            PacketKind::Request { service_code } | PacketKind::Response { service_code, .. } => {
                packet.put(at, u64::from(service_code), 4);
                at += 4;
            }
            PacketKind::Reset { code, data, .. } => {
                let [d1, d2, d3] = data;
                packet.put(
                    at,
                    u64::from(u32::from_be_bytes([u8::from(code), d1, d2, d3])),
                    4,
                );
                at += 4;
            }
            _ => {}
        }
        let buffer = packet.buffer.as_mut();
        if let Some(area) = buffer.get_mut(at..header_len) {
            self.options.emit(area)?;
        }
        if let Some(dst) = buffer.get_mut(header_len..) {
            dst.copy_from_slice(self.payload);
        }
        packet.fill_checksum(checksum)
    }

    /// Emits into a new vector of [`buffer_len`](Self::buffer_len) bytes.
    pub fn emit_to_vec(&self, checksum: &ChecksumContext) -> Result<Vec<u8>, DccpError> {
        let mut packet = Packet::new_unchecked(vec![0; self.buffer_len()]);
        self.emit(&mut packet, checksum)?;
        Ok(packet.into_inner())
    }
}
