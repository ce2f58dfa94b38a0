//! Protecting the datagrams one end sends.

use std::fmt;

use chacha20poly1305::AeadInOut;
use zeroize::Zeroizing;

use super::header::Header;
use super::keys::{nonce, DirectionKeys, EpochKeys};
use super::{EPOCH_BITS, IV_LEN, SALT_LEN};
use crate::wire::dccp::{ChecksumContext, DccpError, Packet, PacketType, SeqNum};

/// Seals the DCCP packets one end of a connection sends: the header stays
/// in clear and authenticated, the application data is encrypted, and a
/// 16-byte tag is appended (see the [module documentation](super) for the
/// format).
///
/// Build it with [`ConnectionKeys`](super::ConnectionKeys). Packets must be
/// sealed in the order of their sequence numbers, each number once: a
/// repeated number would repeat a nonce, which ChaCha20-Poly1305 cannot
/// survive (RFC 8439 §4: "each nonce MUST be unique"), so the sealer refuses
/// it ([`SealError::SequenceNotIncreasing`]). It also changes key every
/// 2^[`EPOCH_BITS`] packets without being told, one epoch at a time (a jump
/// of more than an epoch is refused, [`SealError::TooFarAhead`]).
pub struct Sealer {
    iss: SeqNum,
    iv: Zeroizing<[u8; IV_LEN]>,
    keys: EpochKeys,
    /// The position (distance from the ISS) of the last packet sealed.
    pub(super) last_position: Option<u64>,
}

impl Sealer {
    pub(super) fn new(iss: SeqNum, keys: DirectionKeys) -> Sealer {
        Sealer {
            iss,
            iv: keys.iv,
            keys: keys.first,
            last_position: None,
        }
    }

    /// The key epoch of the last packet sealed (0 before the first).
    pub fn epoch(&self) -> u64 {
        self.keys.epoch()
    }

    /// Seals `datagram`, a whole DCCP packet with 48-bit sequence numbers
    /// whose Checksum is computed for `checksum` (or not yet computed):
    /// encrypts its application data in place, appends the tag and
    /// recomputes the Checksum over the result. The vector grows by
    /// [`TAG_LEN`](super::TAG_LEN) bytes; it does not reallocate if it has
    /// that much spare capacity. On an error it is left as it was.
    pub fn seal(
        &mut self,
        datagram: &mut Vec<u8>,
        checksum: &ChecksumContext,
    ) -> Result<(), SealError> {
        self.seal_with_clear_prefix(datagram, 0, checksum)
    }

    /// [`seal`](Self::seal), but the first `clear_prefix` bytes of the
    /// application data stay in clear: they are authenticated with the
    /// header (part of the associated data) and not encrypted.
    pub fn seal_with_clear_prefix(
        &mut self,
        datagram: &mut Vec<u8>,
        clear_prefix: usize,
        checksum: &ChecksumContext,
    ) -> Result<(), SealError> {
        let plan = self.plan(datagram, clear_prefix)?;
        self.apply(datagram, &plan, checksum)
    }

    /// Seals a DCCP-Response for the listener: puts `salt` at the front of
    /// its application data, in clear, and seals the rest with
    /// [`seal_with_clear_prefix`](Self::seal_with_clear_prefix). A Response
    /// without application data becomes `salt || tag`. The client reads the
    /// salt with [`peek_response`](super::peek_response), derives the keys
    /// and checks the tag with [`Opener::open_response`](super::Opener::open_response),
    /// which proves the Response came from a holder of the passphrase.
    pub fn seal_response(
        &mut self,
        datagram: &mut Vec<u8>,
        salt: &[u8; SALT_LEN],
        checksum: &ChecksumContext,
    ) -> Result<(), SealError> {
        let header = Header::read(datagram)?;
        if header.packet_type != PacketType::Response {
            return Err(SealError::NotAResponse(header.packet_type));
        }
        // Every check `plan` makes holds as well once the salt is in: it
        // only lengthens the application data.
        self.plan(datagram, 0)?;
        datagram.splice(header.len..header.len, salt.iter().copied());
        let result = self
            .plan(datagram, SALT_LEN)
            .and_then(|plan| self.apply(datagram, &plan, checksum));
        if result.is_err() {
            datagram.drain(header.len..header.len + SALT_LEN);
        }
        result
    }

    /// Checks everything that can fail before the datagram is touched.
    fn plan(&self, datagram: &[u8], clear_prefix: usize) -> Result<Plan, SealError> {
        let header = Header::read(datagram)?;
        let Some(seq) = header.seq else {
            return Err(SealError::ShortSequenceNumber(header.packet_type));
        };
        if clear_prefix > header.payload_len {
            return Err(SealError::ClearPrefixTooLong {
                clear_prefix,
                payload_len: header.payload_len,
            });
        }
        let position = seq.sub(self.iss.value()).value();
        if let Some(last) = self.last_position {
            // Strictly increasing positions in [0, 2^48): no sequence number
            // is sealed twice, and the numbers cannot wrap around to the ISS
            // and reuse a (key, nonce) pair.
            if position <= last {
                return Err(SealError::SequenceNotIncreasing {
                    seq,
                    last: self.iss.add(last),
                });
            }
        }
        // Keys only go forward one epoch at a time (each is expanded from
        // the one before); the connection numbers its packets one by one, so
        // a jump of more than an epoch is a bug, refused rather than paid
        // for with millions of key updates.
        if position >> EPOCH_BITS > self.keys.epoch().saturating_add(1) {
            return Err(SealError::TooFarAhead { seq });
        }
        Ok(Plan {
            associated_len: header.len + clear_prefix,
            seq,
            position,
        })
    }

    fn apply(
        &mut self,
        datagram: &mut Vec<u8>,
        plan: &Plan,
        checksum: &ChecksumContext,
    ) -> Result<(), SealError> {
        // `plan` allows at most one step.
        if plan.position >> EPOCH_BITS > self.keys.epoch() {
            self.keys = self.keys.next();
        }
        let mut packet = Packet::new_unchecked(&mut datagram[..]);
        let old_checksum = packet.checksum();
        // The associated data is the header with its Checksum zeroed: the
        // Checksum is computed after sealing, over the ciphertext.
        packet.set_checksum(0);
        let nonce = nonce(&self.iv, plan.seq);
        let (associated, plaintext) = datagram.split_at_mut(plan.associated_len);
        let tag =
            match self
                .keys
                .aead()
                .encrypt_inout_detached(&nonce, associated, plaintext.into())
            {
                Ok(tag) => tag,
                Err(_) => {
                    // Only a message beyond ChaCha20's 256 GiB limit: checked
                    // before anything is encrypted.
                    Packet::new_unchecked(&mut datagram[..]).set_checksum(old_checksum);
                    return Err(SealError::TooLong {
                        len: datagram.len(),
                    });
                }
            };
        datagram.extend_from_slice(&tag);
        self.last_position = Some(plan.position);
        // Cannot fail: the packet was valid before, and a longer payload
        // keeps CsCov's coverage within it.
        Packet::new_unchecked(&mut datagram[..]).fill_checksum(checksum)?;
        Ok(())
    }
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("iss", &self.iss)
            .field("epoch", &self.keys.epoch())
            .field("last_position", &self.last_position)
            .finish_non_exhaustive()
    }
}

/// What [`Sealer::plan`] found.
struct Plan {
    /// Header and clear prefix: authenticated, not encrypted.
    associated_len: usize,
    seq: SeqNum,
    /// Distance from the ISS.
    position: u64,
}

/// Why a packet could not be sealed. Each is a bug in the caller (the
/// connection hands the sealer its own packets), never a peer's doing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The datagram is not a valid DCCP packet.
    #[error("cannot seal: not a valid DCCP packet: {0}")]
    NotDccp(#[from] DccpError),
    /// A short (X = 0) header: the nonce needs the full 48-bit number.
    #[error(
        "cannot seal a {} with 24-bit sequence numbers: protected connections use 48-bit ones (X = 1)",
        .0.name()
    )]
    ShortSequenceNumber(PacketType),
    /// The clear prefix is longer than the application data.
    #[error("cannot seal: a clear prefix of {clear_prefix} bytes in {payload_len} bytes of application data")]
    ClearPrefixTooLong {
        /// The clear prefix asked for.
        clear_prefix: usize,
        /// The application data length.
        payload_len: usize,
    },
    /// The sequence number is not after the last one sealed: sealing it
    /// would reuse a nonce.
    #[error(
        "cannot seal packet {} after packet {}: sequence numbers must increase, or a nonce would repeat",
        .seq.value(), .last.value()
    )]
    SequenceNotIncreasing {
        /// The packet's sequence number.
        seq: SeqNum,
        /// The last sequence number sealed.
        last: SeqNum,
    },
    /// The sequence number is more than one key epoch ahead of the last
    /// packet sealed.
    #[error(
        "cannot seal packet {}: more than one key epoch (2^{EPOCH_BITS} packets) after the last one sealed",
        .seq.value()
    )]
    TooFarAhead {
        /// The packet's sequence number.
        seq: SeqNum,
    },
    /// [`Sealer::seal_response`] was given another packet type.
    #[error("cannot seal a {} as a DCCP-Response", .0.name())]
    NotAResponse(PacketType),
    /// More data than the AEAD can encrypt under one nonce.
    #[error("cannot seal a {len}-byte datagram: too long for ChaCha20-Poly1305")]
    TooLong {
        /// The datagram length.
        len: usize,
    },
}
