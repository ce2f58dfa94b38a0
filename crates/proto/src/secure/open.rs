//! Checking and decrypting the datagrams one end receives.

use std::fmt;

use chacha20poly1305::{AeadInOut, Tag};
use zeroize::Zeroizing;

use super::header::Header;
use super::keys::{nonce, DirectionKeys, EpochKeys};
use super::replay::{Refusal, ReplayWindow};
use super::{EPOCH_BITS, INTEGRITY_LIMIT, IV_LEN, REPLAY_WINDOW, SALT_LEN, TAG_LEN};
use crate::wire::dccp::{ChecksumContext, DccpError, Packet, PacketType, SeqNum};

/// Opens the DCCP packets one end of a connection receives: checks the tag,
/// decrypts the application data in place, and refuses replays.
///
/// Build it with [`ConnectionKeys`](super::ConnectionKeys). Constant
/// memory: the keys of two key epochs (the oldest one the replay window
/// reaches and the next, derived when first needed, so that packets
/// reordered across an epoch boundary open in either order) and a
/// [`REPLAY_WINDOW`]-bit window.
pub struct Opener {
    peer_iss: SeqNum,
    iv: Zeroizing<[u8; IV_LEN]>,
    /// The keys of the epoch of the window's low edge.
    base: EpochKeys,
    /// The keys of the epoch after `base`, once needed.
    next: Option<EpochKeys>,
    window: ReplayWindow,
    /// Packets that failed authentication, across all epochs.
    pub(super) failures: u64,
}

impl Opener {
    pub(super) fn new(peer_iss: SeqNum, keys: DirectionKeys) -> Opener {
        Opener {
            peer_iss,
            iv: keys.iv,
            base: keys.first,
            next: None,
            window: ReplayWindow::new(),
            failures: 0,
        }
    }

    /// How many packets failed authentication so far (forged, altered, or
    /// sealed under another passphrase).
    pub fn authentication_failures(&self) -> u64 {
        self.failures
    }

    /// The sequence number of the newest packet opened.
    pub fn highest_opened(&self) -> Option<SeqNum> {
        self.window
            .highest()
            .map(|position| self.peer_iss.add(position))
    }

    /// Opens `datagram`, a whole sealed DCCP packet whose Checksum is
    /// computed for `checksum`: checks the Checksum, the replay window and
    /// the tag, decrypts the application data in place, and recomputes the
    /// Checksum over the opened packet. Returns the opened packet, the
    /// front of `datagram` ([`TAG_LEN`] bytes shorter), ready for the
    /// connection to parse. On an error, `datagram` is left as it was and
    /// the packet must be dropped.
    pub fn open<'a>(
        &mut self,
        datagram: &'a mut [u8],
        checksum: &ChecksumContext,
    ) -> Result<&'a mut [u8], OpenError> {
        self.open_with_clear_prefix(datagram, 0, checksum)
    }

    /// [`open`](Self::open) for a packet sealed with
    /// [`Sealer::seal_with_clear_prefix`](super::Sealer::seal_with_clear_prefix):
    /// the first `clear_prefix` bytes of the application data were
    /// authenticated, not encrypted.
    pub fn open_with_clear_prefix<'a>(
        &mut self,
        datagram: &'a mut [u8],
        clear_prefix: usize,
        checksum: &ChecksumContext,
    ) -> Result<&'a mut [u8], OpenError> {
        // RFC 9001 §6.6: past the integrity limit, the endpoint "MUST
        // immediately close the connection"; refusing everything makes sure
        // nothing more is accepted meanwhile.
        if self.failures >= INTEGRITY_LIMIT {
            return Err(OpenError::IntegrityLimitReached {
                failures: self.failures,
            });
        }
        let header = Header::read(datagram)?;
        let Some(seq) = header.seq else {
            return Err(OpenError::ShortSequenceNumber(header.packet_type));
        };
        Packet::new_unchecked(&*datagram).verify_checksum(checksum)?;
        let needed = clear_prefix.saturating_add(TAG_LEN);
        if header.payload_len < needed {
            return Err(OpenError::TooShort {
                payload_len: header.payload_len,
                needed,
            });
        }
        let position = seq.sub(self.peer_iss.value()).value();
        // RFC 4303 §3.4.3: the window is checked before the integrity check
        // (a cheap refusal) and updated only after it.
        self.window
            .check(position)
            .map_err(|refusal| match refusal {
                Refusal::Replayed => OpenError::Replayed { seq },
                Refusal::TooOld { highest } => OpenError::TooOld {
                    seq,
                    newest: self.peer_iss.add(highest),
                },
            })?;
        let epoch = position >> EPOCH_BITS;
        let base_epoch = self.base.epoch();
        let keys = if epoch == base_epoch {
            &self.base
        } else if epoch == base_epoch.saturating_add(1) {
            self.next.get_or_insert_with(|| self.base.next())
        } else if epoch < base_epoch {
            // Older than the window's low edge; `check` refuses these
            // already.
            return Err(OpenError::TooOld {
                seq,
                newest: self.peer_iss.add(self.window.highest().unwrap_or(0)),
            });
        } else {
            return Err(OpenError::TooFarAhead { seq });
        };

        let datagram_len = datagram.len();
        let mut packet = Packet::new_unchecked(&mut datagram[..]);
        let received_checksum = packet.checksum();
        packet.set_checksum(0);
        let (associated, rest) = datagram.split_at_mut(header.len + clear_prefix);
        let (ciphertext, tag) = rest.split_at_mut(rest.len() - TAG_LEN);
        let tag = Tag::try_from(&*tag).map_err(|_| OpenError::TooShort {
            payload_len: header.payload_len,
            needed,
        });
        let opened = tag.and_then(|tag| {
            keys.aead()
                .decrypt_inout_detached(&nonce(&self.iv, seq), associated, ciphertext.into(), &tag)
                .map_err(|_| OpenError::BadTag { seq })
        });
        if let Err(error) = opened {
            Packet::new_unchecked(&mut datagram[..]).set_checksum(received_checksum);
            self.failures = self.failures.saturating_add(1);
            return Err(error);
        }

        self.window.accept(position);
        // The window spans at most two epochs; once its low edge has left
        // the base epoch, that epoch's key is no longer needed.
        if self.window.low_edge() >> EPOCH_BITS > self.base.epoch() {
            self.base = self.next.take().unwrap_or_else(|| self.base.next());
        }
        let opened = &mut datagram[..datagram_len - TAG_LEN];
        // Cannot fail: the header is authenticated, so CsCov is the
        // sender's, which was valid for the plaintext.
        Packet::new_unchecked(&mut opened[..]).fill_checksum(checksum)?;
        Ok(opened)
    }

    /// Opens a DCCP-Response sealed with
    /// [`Sealer::seal_response`](super::Sealer::seal_response) and removes
    /// the salt from it, so that the connection sees the Response as the
    /// listener's connection emitted it. A success proves the listener
    /// holds the passphrase. Read the salt and the ISS first with
    /// [`peek_response`], to build this opener.
    pub fn open_response<'a>(
        &mut self,
        datagram: &'a mut [u8],
        checksum: &ChecksumContext,
    ) -> Result<&'a mut [u8], OpenError> {
        let header = Header::read(datagram)?;
        if header.packet_type != PacketType::Response {
            return Err(OpenError::NotAResponse(header.packet_type));
        }
        let opened = self.open_with_clear_prefix(datagram, SALT_LEN, checksum)?;
        let len = opened.len();
        opened.copy_within(header.len + SALT_LEN.., header.len);
        let response = &mut opened[..len - SALT_LEN];
        // Cannot fail, as in `open_with_clear_prefix`.
        Packet::new_unchecked(&mut response[..]).fill_checksum(checksum)?;
        Ok(response)
    }
}

impl fmt::Debug for Opener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opener")
            .field("peer_iss", &self.peer_iss)
            .field("epoch", &self.base.epoch())
            .field("highest_opened", &self.highest_opened())
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}

/// What a client needs from a sealed DCCP-Response before it can open it:
/// the salt to derive the master key with, and the numbers to derive the
/// connection's keys with. Nothing here is authenticated yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeekedResponse {
    /// The listener's salt, in clear at the front of the application data.
    pub salt: [u8; SALT_LEN],
    /// The Response's sequence number: the server's ISS.
    pub server_iss: SeqNum,
    /// The Response's acknowledgement number: the client's ISS, if the
    /// Response answers this client's Request.
    pub acknowledged: SeqNum,
    /// The source port: the server's.
    pub server_port: u16,
    /// The destination port: the client's.
    pub client_port: u16,
}

/// Reads the salt and the numbers of a DCCP-Response sealed with
/// [`Sealer::seal_response`](super::Sealer::seal_response), without
/// checking its tag (the keys to check it come from these values).
pub fn peek_response(datagram: &[u8]) -> Result<PeekedResponse, OpenError> {
    let header = Header::read(datagram)?;
    if header.packet_type != PacketType::Response {
        return Err(OpenError::NotAResponse(header.packet_type));
    }
    let needed = SALT_LEN + TAG_LEN;
    let packet = Packet::new_unchecked(datagram);
    let payload = packet.payload();
    let salt = payload
        .get(..SALT_LEN)
        .and_then(|salt| <[u8; SALT_LEN]>::try_from(salt).ok())
        .filter(|_| payload.len() >= needed)
        .ok_or(OpenError::TooShort {
            payload_len: payload.len(),
            needed,
        })?;
    Ok(PeekedResponse {
        salt,
        server_iss: packet.seq_number(),
        acknowledged: packet.ack_number().unwrap_or_default(),
        server_port: packet.src_port(),
        client_port: packet.dst_port(),
    })
}

/// Why a received packet was not opened. The packet must be dropped; only
/// [`OpenError::IntegrityLimitReached`] also asks to close the connection.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// Not a valid DCCP packet (too short for a header, bad Data Offset,
    /// checksum mismatch, …).
    #[error("dropped a datagram that is not a valid DCCP packet: {0}")]
    NotDccp(#[from] DccpError),
    /// A short (X = 0) header: protected connections use 48-bit numbers.
    #[error(
        "dropped a {} with 24-bit sequence numbers: a protected connection uses 48-bit ones (X = 1); \
         the peer does not protect its packets",
        .0.name()
    )]
    ShortSequenceNumber(PacketType),
    /// Too little application data for the tag (and the clear prefix).
    #[error(
        "dropped a packet with {payload_len} bytes of application data, fewer than the {needed} \
         that protection adds: the peer sends without a passphrase, or the packet was cut short"
    )]
    TooShort {
        /// The application data length.
        payload_len: usize,
        /// The bytes the tag (and clear prefix) need.
        needed: usize,
    },
    /// The tag does not verify.
    #[error(
        "packet {} failed authentication: the peer uses a different passphrase, \
         or the packet was altered or forged",
        .seq.value()
    )]
    BadTag {
        /// The packet's sequence number (as received, so not trustworthy).
        seq: SeqNum,
    },
    /// The sequence number was already opened.
    #[error("dropped packet {}: it was already received (a duplicate or a replay)", .seq.value())]
    Replayed {
        /// The packet's sequence number.
        seq: SeqNum,
    },
    /// The packet is older than the replay window.
    #[error(
        "dropped packet {}: more than {REPLAY_WINDOW} packets older than the newest, {}, \
         so it cannot be told from a replay",
        .seq.value(), .newest.value()
    )]
    TooOld {
        /// The packet's sequence number.
        seq: SeqNum,
        /// The newest sequence number opened.
        newest: SeqNum,
    },
    /// The sequence number is more than one key epoch ahead.
    #[error(
        "dropped packet {}: more than one key epoch (2^{EPOCH_BITS} packets) ahead of the \
         packets received so far",
        .seq.value()
    )]
    TooFarAhead {
        /// The packet's sequence number.
        seq: SeqNum,
    },
    /// Too many packets failed authentication for the AEAD's integrity
    /// bound: close the connection.
    #[error(
        "{failures} packets failed authentication on this connection, ChaCha20-Poly1305's \
         integrity limit (RFC 9001 §6.6): close the connection and open a new one"
    )]
    IntegrityLimitReached {
        /// Packets that failed authentication.
        failures: u64,
    },
    /// [`Opener::open_response`] or [`peek_response`] was given another
    /// packet type.
    #[error("expected a DCCP-Response carrying the listener's salt, got a {}", .0.name())]
    NotAResponse(PacketType),
}
