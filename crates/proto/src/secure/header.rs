//! Where a datagram's DCCP header ends and what the protection needs from
//! it, read with [`crate::wire::dccp::Packet`].

use crate::wire::dccp::{DccpError, Packet, PacketType, SeqNum};

/// The fields of a DCCP header that packet protection uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Header {
    /// Data Offset · 4: the header and options, left in clear.
    pub(super) len: usize,
    /// The packet type.
    pub(super) packet_type: PacketType,
    /// The 48-bit sequence number, or `None` for a short (X = 0) header.
    pub(super) seq: Option<SeqNum>,
    /// The application data length.
    pub(super) payload_len: usize,
}

impl Header {
    /// Checks `datagram` as a DCCP packet ([`Packet::new_checked`]: type, X,
    /// Data Offset, CsCov) and reads the header's extent and sequence number.
    pub(super) fn read(datagram: &[u8]) -> Result<Header, DccpError> {
        let packet = Packet::new_checked(datagram)?;
        Ok(Header {
            len: packet.header_len(),
            packet_type: packet.packet_type()?,
            seq: packet.extended().then(|| packet.seq_number()),
            payload_len: packet.payload().len(),
        })
    }
}
