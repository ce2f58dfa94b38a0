//! Packet protection on the wire (issue 13): what `send`, `recv` and the
//! relay do with [`fairstream_proto::secure`] between their sessions and
//! their sockets. `docs/security.md` has the threat model and the format.
//!
//! - **Listener** (`recv`, the relay's upstream side): one salt per run
//!   from the operating system's generator and one master key from the
//!   passphrase. A Request arrives in clear and is answered statelessly (an
//!   Init Cookie, [`fairstream_proto::conn::EndpointConfig::cookies`]); the
//!   Response is sealed with keys derived for it and thrown away. When the
//!   sender's Ack echoes the cookie, the keys are derived again from the
//!   cookie's numbers ([`Endpoint::peek_cookie`]) and the Ack must open
//!   before the endpoint makes a connection: a sender with another
//!   passphrase (or none) makes nothing, and is reported.
//! - **Sender** (`send`, the relay's downstream side): Requests leave in
//!   clear; a Response that answers one of its Requests gives the salt,
//!   the master key is derived once per salt (kept for a few salts, so a
//!   forged Response cannot make it derive again and again), and the
//!   Response must open: if not, the passphrase is wrong, and that is
//!   reported at once. The sender still answers the Response (its Ack,
//!   sealed with the keys it has), so that the listener learns it too.
//! - **Every later packet**, both ways, Acks and Resets included, is sealed
//!   after the session made it and opened before the session sees it;
//!   what does not open is dropped. Nothing is sent in clear on a protected
//!   connection but Requests and the endpoint's stateless Resets (which
//!   belong to no connection).
//! - **Without a passphrase** nothing is sealed, but a sender that meets a
//!   sealed Response says that the receiver wants a passphrase.

use std::collections::HashMap;
use std::net::SocketAddr;

use fairstream_proto::conn::{ConnectionId, Endpoint, State};
use fairstream_proto::secure::{
    peek_response, ConnectionKeys, MasterKey, OpenError, Opener, Passphrase, Role, Sealer,
    SALT_LEN, TAG_LEN,
};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::dccp::{ChecksumContext, Packet, PacketType, SeqNum};

use crate::clock::{address_bytes, random_secret};

/// A sender keeps the master keys of this many listener salts at most.
const MAX_MASTERS: usize = 4;

/// Bytes sealing adds to a packet.
pub(crate) const OVERHEAD: usize = TAG_LEN;

/// What went wrong with the other end's protection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its packets do not open with our keys: another passphrase.
    WrongPassphrase,
    /// A sender with a passphrase met a receiver without one.
    PeerPlain,
    /// A sender without a passphrase met a receiver with one.
    PeerProtected,
}

/// What to do with a datagram that arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// Hand it (now in clear) to the session.
    pub(crate) deliver: bool,
    /// The other end's protection does not match ours.
    pub(crate) refusal: Option<Refusal>,
}

impl Verdict {
    const DELIVER: Verdict = Verdict {
        deliver: true,
        refusal: None,
    };
    const DROP: Verdict = Verdict {
        deliver: false,
        refusal: None,
    };
}

/// What protection did (reported in the summaries).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ProtectionStats {
    /// Packets sealed.
    pub(crate) sealed: u64,
    /// Packets opened.
    pub(crate) opened: u64,
    /// Packets that did not open (forged, altered, another passphrase).
    pub(crate) auth_failures: u64,
    /// Packets refused as replayed or too old.
    pub(crate) replayed: u64,
    /// Packets the session made that were not sent, for want of keys.
    pub(crate) unsealed_dropped: u64,
}

enum Mode {
    Plain,
    Listener {
        salt: [u8; SALT_LEN],
        master: MasterKey,
    },
    Sender {
        passphrase: Passphrase,
        masters: Vec<([u8; SALT_LEN], MasterKey)>,
    },
}

/// One end's packet protection.
pub(crate) struct Protection {
    mode: Mode,
    keys: HashMap<ConnectionId, (Sealer, Opener)>,
    checksum_send: ChecksumContext,
    checksum_receive: ChecksumContext,
    pub(crate) stats: ProtectionStats,
}

impl Protection {
    /// No protection.
    pub(crate) fn plain() -> Protection {
        Protection::with_mode(Mode::Plain)
    }

    /// A listener's protection with `passphrase`: a fresh salt and its
    /// master key (an Argon2id derivation: about 0.15 s).
    pub(crate) fn listener(passphrase: &Passphrase) -> std::io::Result<Protection> {
        let mut salt = [0u8; SALT_LEN];
        salt.copy_from_slice(&random_secret()?[..SALT_LEN]);
        let master = MasterKey::derive(passphrase, &salt);
        Ok(Protection::with_mode(Mode::Listener { salt, master }))
    }

    /// A sender's protection with `passphrase`.
    pub(crate) fn sender(passphrase: Passphrase) -> Protection {
        Protection::with_mode(Mode::Sender {
            passphrase,
            masters: Vec::new(),
        })
    }

    fn with_mode(mode: Mode) -> Protection {
        let checksum = fairstream_proto::conn::ConnectionConfig::default().checksum;
        Protection {
            mode,
            keys: HashMap::new(),
            checksum_send: checksum.send_context(),
            checksum_receive: checksum.receive_context(),
            stats: ProtectionStats::default(),
        }
    }

    /// Whether packets are protected.
    pub(crate) fn is_on(&self) -> bool {
        !matches!(self.mode, Mode::Plain)
    }

    /// Seals a datagram the session made; whether to send it.
    pub(crate) fn outgoing(&mut self, datagram: &mut Vec<u8>) -> bool {
        if !self.is_on() {
            return true;
        }
        let Ok(packet) = Packet::new_checked(datagram.as_slice()) else {
            return false;
        };
        let Ok(packet_type) = packet.packet_type() else {
            return false;
        };
        let id = ConnectionId {
            local_port: packet.src_port(),
            remote_port: packet.dst_port(),
        };
        if let (Mode::Listener { salt, master }, PacketType::Response) = (&self.mode, packet_type) {
            // Keys for this Response only: the endpoint keeps no state
            // before the cookie comes back, and neither does this.
            let Some(client_iss) = packet.ack_number() else {
                return false;
            };
            let mut keys = ConnectionKeys::new(
                master,
                Role::Server,
                id.remote_port,
                id.local_port,
                client_iss.value(),
                packet.seq_number().value(),
            );
            let sealed = keys
                .sealer()
                .seal_response(datagram, salt, &self.checksum_send)
                .is_ok();
            self.stats.sealed += u64::from(sealed);
            return sealed;
        }
        if let Some((sealer, _)) = self.keys.get_mut(&id) {
            let sealed = sealer.seal(datagram, &self.checksum_send).is_ok();
            self.stats.sealed += u64::from(sealed);
            return sealed;
        }
        // No keys: only what belongs to no protected connection yet leaves
        // in clear (a Request; a Reset refusing a handshake).
        let clear = matches!(packet_type, PacketType::Request | PacketType::Reset);
        if !clear {
            self.stats.unsealed_dropped += 1;
        }
        clear
    }

    /// Opens a datagram from `source` before the session sees it
    /// (`endpoint` is the session's, read to match Responses with Requests
    /// and echoed cookies with their numbers).
    pub(crate) fn incoming(
        &mut self,
        datagram: &mut Vec<u8>,
        source: SocketAddr,
        endpoint: &Endpoint,
        now: Instant,
    ) -> Verdict {
        let Ok(packet) = Packet::new_checked(datagram.as_slice()) else {
            // The session counts what is not DCCP.
            return Verdict::DELIVER;
        };
        let Ok(packet_type) = packet.packet_type() else {
            return Verdict::DELIVER;
        };
        let id = ConnectionId {
            local_port: packet.dst_port(),
            remote_port: packet.src_port(),
        };
        let answers_request = packet_type == PacketType::Response
            && packet
                .ack_number()
                .is_some_and(|ack| answers_our_request(endpoint, id, ack));
        match &mut self.mode {
            Mode::Plain => {
                // A Response with application data: a listener sealed it
                // (salt and tag), so it wants a passphrase. Delivered all
                // the same (the connection ignores a Response's data), so
                // that the Ack it sends in clear tells the listener too.
                if answers_request && packet.payload().len() >= SALT_LEN + TAG_LEN {
                    return Verdict {
                        deliver: true,
                        refusal: Some(Refusal::PeerProtected),
                    };
                }
                Verdict::DELIVER
            }
            Mode::Sender {
                passphrase,
                masters,
            } if packet_type == PacketType::Response => {
                if !answers_request {
                    return Verdict::DROP;
                }
                let Ok(peeked) = peek_response(datagram) else {
                    return Verdict {
                        deliver: false,
                        refusal: Some(Refusal::PeerPlain),
                    };
                };
                let master = master_for(masters, passphrase, &peeked.salt);
                let mut keys = ConnectionKeys::new(
                    master,
                    Role::Client,
                    peeked.client_port,
                    peeked.server_port,
                    peeked.acknowledged.value(),
                    peeked.server_iss.value(),
                );
                let opened = keys
                    .opener()
                    .open_response(datagram, &self.checksum_receive)
                    .map(|plain| plain.len());
                self.remember(endpoint, id, keys);
                match opened {
                    Ok(len) => {
                        self.stats.opened += 1;
                        datagram.truncate(len);
                        Verdict::DELIVER
                    }
                    Err(_) => {
                        // Delivered all the same (the connection ignores a
                        // Response's data), so that the Ack it sends, sealed
                        // with these keys, tells the listener too.
                        self.stats.auth_failures += 1;
                        Verdict {
                            deliver: true,
                            refusal: Some(Refusal::WrongPassphrase),
                        }
                    }
                }
            }
            Mode::Listener { master, .. } => {
                if packet_type == PacketType::Request {
                    return Verdict::DELIVER;
                }
                if let Some((request, iss)) =
                    endpoint.peek_cookie(now, datagram, &address_bytes(source))
                {
                    let mut keys = ConnectionKeys::new(
                        master,
                        Role::Server,
                        id.remote_port,
                        id.local_port,
                        request.value(),
                        iss.value(),
                    );
                    let opened = keys
                        .opener()
                        .open(datagram, &self.checksum_receive)
                        .map(|plain| plain.len());
                    return match opened {
                        Ok(len) => {
                            self.stats.opened += 1;
                            datagram.truncate(len);
                            self.remember(endpoint, id, keys);
                            Verdict::DELIVER
                        }
                        Err(_) => {
                            self.stats.auth_failures += 1;
                            Verdict {
                                deliver: false,
                                refusal: Some(Refusal::WrongPassphrase),
                            }
                        }
                    };
                }
                self.open_known(datagram, id)
            }
            Mode::Sender { .. } => self.open_known(datagram, id),
        }
    }

    /// Opens a packet of a connection with keys; one without keys goes to
    /// the session only if it is a Reset refusing a handshake (Too Busy,
    /// Connection Refused: they belong to no connection).
    fn open_known(&mut self, datagram: &mut Vec<u8>, id: ConnectionId) -> Verdict {
        let Some((_, opener)) = self.keys.get_mut(&id) else {
            let reset = Packet::new_checked(datagram.as_slice())
                .ok()
                .and_then(|p| p.packet_type().ok())
                == Some(PacketType::Reset);
            return if reset {
                Verdict::DELIVER
            } else {
                Verdict::DROP
            };
        };
        match opener.open(datagram, &self.checksum_receive) {
            Ok(plain) => {
                let len = plain.len();
                datagram.truncate(len);
                self.stats.opened += 1;
                Verdict::DELIVER
            }
            Err(OpenError::Replayed { .. } | OpenError::TooOld { .. }) => {
                self.stats.replayed += 1;
                Verdict::DROP
            }
            Err(_) => {
                self.stats.auth_failures += 1;
                Verdict::DROP
            }
        }
    }

    /// Keeps `keys` for `id`, forgetting the keys of connections the
    /// endpoint no longer has (so the table stays within its limit).
    fn remember(&mut self, endpoint: &Endpoint, id: ConnectionId, keys: ConnectionKeys) {
        self.keys
            .retain(|known, _| *known != id && endpoint.connection(*known).is_some());
        self.keys.insert(id, keys.into_parts());
    }
}

/// Whether `ack` acknowledges a Request of `id`, a connection of ours
/// still in REQUEST: only then can a Response's failure mean anything (an
/// off-path attacker does not know the Request's 48-bit number).
fn answers_our_request(endpoint: &Endpoint, id: ConnectionId, ack: SeqNum) -> bool {
    let Some(conn) = endpoint.connection(id) else {
        return false;
    };
    if conn.state() != State::Request {
        return false;
    }
    let numbers = conn.sequence_numbers();
    let from_iss = ack.value().wrapping_sub(numbers.iss.value()) & ((1 << 48) - 1);
    let sent = numbers.gss.value().wrapping_sub(numbers.iss.value()) & ((1 << 48) - 1);
    from_iss <= sent
}

/// The master key for `salt`, derived once and kept (the last
/// [`MAX_MASTERS`] salts).
fn master_for<'a>(
    masters: &'a mut Vec<([u8; SALT_LEN], MasterKey)>,
    passphrase: &Passphrase,
    salt: &[u8; SALT_LEN],
) -> &'a MasterKey {
    let index = match masters.iter().position(|(s, _)| s == salt) {
        Some(index) => index,
        None => {
            if masters.len() >= MAX_MASTERS {
                masters.remove(0);
            }
            masters.push((*salt, MasterKey::derive(passphrase, salt)));
            masters.len() - 1
        }
    };
    &masters[index].1
}
