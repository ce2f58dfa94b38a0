//! The key schedule: passphrase → master key (Argon2id) → one traffic
//! secret per direction of a connection (HKDF-SHA256) → one AEAD key per
//! key epoch.

use std::fmt;

use argon2::{Algorithm, Argon2, Params, Version};
use chacha20poly1305::{ChaCha20Poly1305, Key, KeyInit, Nonce};
use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::Zeroizing;

use super::open::Opener;
use super::seal::Sealer;
use super::{Passphrase, IV_LEN, KEY_LEN, SALT_LEN};
use crate::wire::dccp::SeqNum;

/// Argon2id memory cost in KiB: 2^16 KiB = 64 MiB.
///
/// RFC 9106 §4, the "SECOND RECOMMENDED option" for when "much less memory
/// is available" than 2 GiB: "Argon2id with t=3 iterations, p=4 lanes,
/// m=2^(16) (64 MiB of RAM), 128-bit salt, and 256-bit tag size". These four
/// constants, [`SALT_LEN`] and [`KEY_LEN`] are that option. They are part of
/// the wire format: both ends must use the same ones.
pub const ARGON2_MEMORY_KIB: u32 = 1 << 16;
/// Argon2id passes over the memory (RFC 9106 §4: t = 3).
pub const ARGON2_ITERATIONS: u32 = 3;
/// Argon2id lanes (RFC 9106 §4: p = 4). The `argon2` crate computes them one
/// after the other; the result is the same as on four threads.
pub const ARGON2_LANES: u32 = 4;

/// HKDF `info` prefix of a direction's traffic secret.
const TRAFFIC_LABEL: &[u8] = b"fairstream v1 traffic";
/// HKDF `info` of a direction's IV.
const IV_LABEL: &[u8] = b"fairstream v1 iv";
/// HKDF `info` of an epoch's AEAD key.
const KEY_LABEL: &[u8] = b"fairstream v1 key";
/// HKDF `info` of the next epoch's secret.
const UPDATE_LABEL: &[u8] = b"fairstream v1 key update";

/// The direction byte at the end of the traffic `info`.
const CLIENT_TO_SERVER: u8 = 0;
const SERVER_TO_CLIENT: u8 = 1;

/// The 32-byte key both ends derive from the passphrase and the listener's
/// salt: Argon2id (RFC 9106) with [`ARGON2_MEMORY_KIB`],
/// [`ARGON2_ITERATIONS`] and [`ARGON2_LANES`].
///
/// Deriving it takes about a tenth of a second and 64 MiB on purpose (it is
/// what an attacker pays per guessed passphrase), so a listener derives it
/// once per run and a sender once per salt it receives, and both keep it for
/// [`ConnectionKeys::new`]. Wiped from memory on drop; `Debug` does not
/// show it.
pub struct MasterKey {
    bytes: Zeroizing<[u8; KEY_LEN]>,
}

impl MasterKey {
    /// Derives the master key of `passphrase` and `salt`.
    pub fn derive(passphrase: &Passphrase, salt: &[u8; SALT_LEN]) -> MasterKey {
        let mut bytes = Zeroizing::new([0; KEY_LEN]);
        // Cannot fail: the parameters are RFC 9106's, within every bound
        // `Params::new` checks (the constant is evaluated at compile time,
        // so an out-of-range edit would not build); the passphrase is at most
        // 79 bytes and the salt 16, within Argon2's limits of 2^32 − 1 and
        // 8..2^32 − 1; the output, 32 bytes, within 4..2^32 − 1.
        let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, ARGON2_PARAMS);
        argon2
            .hash_password_into(passphrase.as_bytes(), salt, bytes.as_mut())
            .expect("Argon2id parameters, salt and output length are valid constants");
        MasterKey { bytes }
    }
}

/// The Argon2id parameters, checked when the crate is compiled.
const ARGON2_PARAMS: Params = match Params::new(
    ARGON2_MEMORY_KIB,
    ARGON2_ITERATIONS,
    ARGON2_LANES,
    Some(KEY_LEN),
) {
    Ok(params) => params,
    Err(_) => panic!("invalid Argon2id parameters"),
};

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MasterKey(<redacted>)")
    }
}

/// Which end of the connection this is: the client sent the DCCP-Request
/// (the sender, `fairstream send`, or a relay's upstream side), the server
/// answered it (the listener: `fairstream recv` or a relay's downstream
/// side).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The end that sent the DCCP-Request.
    Client,
    /// The end that sent the DCCP-Response.
    Server,
}

/// HKDF-Expand (RFC 5869 §2.3) of `prk` with the concatenation of `info`.
fn expand(prk: &[u8; KEY_LEN], info: &[&[u8]], out: &mut [u8]) {
    // Cannot fail: the PRK is 32 bytes, SHA-256's output length, which is
    // all `from_prk` asks (RFC 5869 §2.3: "at least HashLen octets"), and
    // every output here is at most 32 bytes, far below 255 · HashLen.
    Hkdf::<Sha256>::from_prk(prk)
        .expect("a 32-byte PRK is valid for HKDF-SHA256")
        .expand_multi_info(info, out)
        .expect("at most 32 bytes of output is valid for HKDF-SHA256");
}

/// One direction's keys for one key epoch.
///
/// Like TLS 1.3's traffic secrets (RFC 8446 §7.2, §7.3), the epoch's secret
/// is never used as an AEAD key itself: the AEAD key is expanded from it
/// with one label and the next epoch's secret with another, so the two
/// uses never share a key.
pub(super) struct EpochKeys {
    epoch: u64,
    secret: Zeroizing<[u8; KEY_LEN]>,
    aead: ChaCha20Poly1305,
}

impl EpochKeys {
    fn new(epoch: u64, secret: Zeroizing<[u8; KEY_LEN]>) -> EpochKeys {
        let mut key = Zeroizing::new([0; KEY_LEN]);
        expand(&secret, &[KEY_LABEL], key.as_mut());
        let aead = ChaCha20Poly1305::new(&Key::from(*key));
        EpochKeys {
            epoch,
            secret,
            aead,
        }
    }

    /// The key epoch these keys belong to.
    pub(super) const fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The AEAD of this epoch.
    pub(super) const fn aead(&self) -> &ChaCha20Poly1305 {
        &self.aead
    }

    /// The next epoch's keys: secret_{e+1} = HKDF-Expand(secret_e,
    /// "fairstream v1 key update", 32), as TLS 1.3's
    /// `application_traffic_secret_N+1` (RFC 8446 §7.2).
    pub(super) fn next(&self) -> EpochKeys {
        let mut secret = Zeroizing::new([0; KEY_LEN]);
        expand(&self.secret, &[UPDATE_LABEL], secret.as_mut());
        EpochKeys::new(self.epoch.saturating_add(1), secret)
    }
}

/// One direction's IV and the keys of its first epoch.
pub(super) struct DirectionKeys {
    pub(super) iv: Zeroizing<[u8; IV_LEN]>,
    pub(super) first: EpochKeys,
}

impl DirectionKeys {
    pub(super) fn derive(master: &MasterKey, ports_and_iss: &[u8], direction: u8) -> DirectionKeys {
        let mut secret = Zeroizing::new([0; KEY_LEN]);
        expand(
            &master.bytes,
            &[TRAFFIC_LABEL, ports_and_iss, &[direction]],
            secret.as_mut(),
        );
        let mut iv = Zeroizing::new([0; IV_LEN]);
        expand(&secret, &[IV_LABEL], iv.as_mut());
        DirectionKeys {
            iv,
            first: EpochKeys::new(0, secret),
        }
    }
}

/// The per-packet nonce: the direction's IV XOR the 48-bit sequence number,
/// right-aligned in the 12 bytes, as TLS 1.3 forms its per-record nonce from
/// the record sequence number (RFC 8446 §5.3).
pub(super) fn nonce(iv: &[u8; IV_LEN], seq: SeqNum) -> Nonce {
    let mut nonce = *iv;
    let seq = seq.value().to_be_bytes();
    // The low 6 bytes of the u64 are the 48-bit number.
    for (byte, s) in nonce.iter_mut().skip(IV_LEN - 6).zip(seq.iter().skip(2)) {
        *byte ^= s;
    }
    Nonce::from(nonce)
}

/// The packet protection of one connection: a [`Sealer`] for what this end
/// sends and an [`Opener`] for what it receives.
///
/// Each direction has its own traffic secret:
///
/// ```text
/// secret = HKDF-Expand(PRK = master key,
///                      info = "fairstream v1 traffic" || client port (2 bytes)
///                             || server port (2) || client ISS (6) || server ISS (6)
///                             || direction (1: 0 client→server, 1 server→client),
///                      L = 32)
/// IV     = HKDF-Expand(secret, "fairstream v1 iv", 12)
/// key_0  = HKDF-Expand(secret, "fairstream v1 key", 32)
/// ```
///
/// with big-endian numbers. The master key is the PRK directly (RFC 5869
/// §3.3: the extract step may be skipped when the input "is already a
/// cryptographically strong key", as Argon2id's output is).
///
/// Keys differ between connections because the ISSs do: each end chooses
/// its ISS at random (48 bits each), so two connections under one master
/// key share keys only if both ISSs and both ports repeat. Keys differ
/// between runs of a listener because it draws a new salt per run.
pub struct ConnectionKeys {
    sealer: Sealer,
    opener: Opener,
}

impl ConnectionKeys {
    /// The keys of the connection between `client_port` and `server_port`
    /// (the DCCP ports) whose ends chose `client_iss` and `server_iss` (the
    /// sequence numbers of the Request and of the Response; their low 48
    /// bits are used, as [`SeqNum::new`] does), for the end `role`.
    pub fn new(
        master: &MasterKey,
        role: Role,
        client_port: u16,
        server_port: u16,
        client_iss: u64,
        server_iss: u64,
    ) -> ConnectionKeys {
        let client_iss = SeqNum::new(client_iss);
        let server_iss = SeqNum::new(server_iss);
        let mut context = [0u8; 16];
        context[0..2].copy_from_slice(&client_port.to_be_bytes());
        context[2..4].copy_from_slice(&server_port.to_be_bytes());
        context[4..10].copy_from_slice(&client_iss.value().to_be_bytes()[2..]);
        context[10..16].copy_from_slice(&server_iss.value().to_be_bytes()[2..]);
        let to_server = DirectionKeys::derive(master, &context, CLIENT_TO_SERVER);
        let to_client = DirectionKeys::derive(master, &context, SERVER_TO_CLIENT);
        let (sealer, opener) = match role {
            Role::Client => (
                Sealer::new(client_iss, to_server),
                Opener::new(server_iss, to_client),
            ),
            Role::Server => (
                Sealer::new(server_iss, to_client),
                Opener::new(client_iss, to_server),
            ),
        };
        ConnectionKeys { sealer, opener }
    }

    /// The sealer for packets this end sends.
    pub fn sealer(&mut self) -> &mut Sealer {
        &mut self.sealer
    }

    /// The opener for packets this end receives.
    pub fn opener(&mut self) -> &mut Opener {
        &mut self.opener
    }

    /// The sealer and the opener, to keep apart (for example in a send path
    /// and a receive path).
    pub fn into_parts(self) -> (Sealer, Opener) {
        (self.sealer, self.opener)
    }
}

impl fmt::Debug for ConnectionKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionKeys")
            .field("sealer", &self.sealer)
            .field("opener", &self.opener)
            .finish()
    }
}
