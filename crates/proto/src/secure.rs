//! Packet protection for DCCP over UDP: keys from a passphrase,
//! authenticated encryption of every packet after the handshake, and a
//! replay window. Sans-IO like the rest of the crate: the salt is drawn by
//! the caller, and nothing here reads a clock or a random number generator.
//!
//! `fairstream send`, `recv` and `relay` use it when a URL has
//! `passphrase=` (or `--passphrase-file` is given): `fairstream_net`'s
//! `protect` module is the glue, and `docs/security.md` has the threat
//! model and the measured cost.
//!
//! # How the ends use it
//!
//! ```text
//! listener (recv, relay downstream)          sender (send, relay upstream)
//! ---------------------------------          -----------------------------
//! once per run: salt ← 16 random bytes
//!   master ← MasterKey::derive(pass, salt)
//!                                   <- Request (clear, seq = client ISS)
//! ConnectionKeys::new(master, Server, ports, client ISS, server ISS)
//! sealer.seal_response(Response, salt)  ->  peek_response → salt, ISSs
//!                                           master ← MasterKey::derive(pass, salt)
//!                                                    (once per salt)
//!                                           ConnectionKeys::new(master, Client, …)
//!                                           opener.open_response(Response)?
//!                                             (wrong passphrase → BadTag)
//! every later packet, both ways: sealer.seal(…) → opener.open(…)
//! ```
//!
//! # Packet format
//!
//! A sealed datagram is the DCCP packet with its application data replaced:
//!
//! ```text
//! | DCCP header + options (Data Offset · 4) | clear prefix | ciphertext | tag (16) |
//!  \____________ in clear, authenticated ___________________/
//! ```
//!
//! - The header stays readable, so Wireshark dissects it and the connection
//!   code can demultiplex on the ports before opening anything.
//! - AEAD: ChaCha20-Poly1305 (RFC 8439 §2.8), 32-byte key, 16-byte tag.
//! - Associated data: the header and options with the Checksum field set
//!   to zero, followed by the clear prefix (empty except in the Response,
//!   where it is the listener's 16-byte salt).
//! - Nonce: the direction's 12-byte IV XOR the 48-bit sequence number,
//!   right-aligned (as TLS 1.3's per-record nonce, RFC 8446 §5.3). Every
//!   protected packet has X = 1: the nonce needs the whole number.
//! - A packet without application data (Ack, Close, Reset, Sync…) carries
//!   just the tag, so forging one takes the key too.
//! - The Checksum is recomputed after sealing (it covers the ciphertext) and
//!   after opening (it covers the plaintext), with
//!   [`ChecksumContext`](crate::wire::dccp::ChecksumContext) as elsewhere.
//!
//! Keys: see [`MasterKey`] (Argon2id) and [`ConnectionKeys`] (HKDF-SHA256).
//! Key epochs: the key changes every 2^[`EPOCH_BITS`] packets of a
//! direction, epoch = ((seq − ISS) mod 2^48) >> [`EPOCH_BITS`], with
//! secret_{e+1} = HKDF-Expand(secret_e, "fairstream v1 key update", 32); no
//! signalling is needed since both ends know the ISS.
//!
//! # Changes from the first design, and why
//!
//! - **Epoch length 2^23, not 2^24.** RFC 9001 §6.6 limits AES-GCM to 2^23
//!   packets per key ("For AEAD_AES_128_GCM and AEAD_AES_256_GCM, the
//!   confidentiality limit is 2^23 encrypted packets"). ChaCha20-Poly1305's
//!   limit is far beyond that ("greater than
//!   the number of possible packets (2^62) and so can be disregarded"), but
//!   2^23 keeps the schedule within both AEADs' limits, so swapping the AEAD
//!   cannot silently exceed one. A key update costs three HMAC-SHA256 calls.
//! - **A secret per epoch, separate from the AEAD key.** Expanding the next
//!   key from the current AEAD key would use one key for two algorithms;
//!   TLS 1.3 (RFC 8446 §7.2, §7.3) keeps a traffic secret from which both the
//!   record key and the next secret are expanded, and so does this module.
//! - **An integrity limit.** Key updates bound what one key encrypts, not how
//!   many forgeries an attacker may try: RFC 9001 §6.6 sets
//!   ChaCha20-Poly1305's integrity limit ("For AEAD_CHACHA20_POLY1305, the
//!   integrity limit is 2^36 invalid packets"), counted "across all keys",
//!   after which the endpoint "MUST immediately close the connection". [`Opener`] counts failures and refuses everything past
//!   [`INTEGRITY_LIMIT`].
//! - **The sealer refuses a repeated sequence number.** Sealing two packets
//!   with one sequence number would reuse a nonce; the sealer requires
//!   strictly increasing positions from the ISS, which also stops the
//!   numbers wrapping around to the ISS.
//! - **The opener keeps the epoch of the replay window's low edge and the
//!   next.** With "current and next" counted from the newest packet, a
//!   packet reordered from just before a boundary would find its key gone
//!   after the first packet of the new epoch; keyed to the window's low
//!   edge, every packet the window can accept has its key. Packets more than
//!   one epoch ahead are refused ([`OpenError::TooFarAhead`]): opening them
//!   would mean deriving keys for an attacker's arbitrary sequence numbers.
//! - **Argon2id with RFC 9106's second recommended parameters** (64 MiB,
//!   t = 3, p = 4) rather than OWASP's minimum (19 MiB, t = 2, p = 1). A
//!   DCCP-Request is unauthenticated, so anyone who can reach a listener
//!   gets a sealed Response: a tag against which to test passphrase guesses
//!   offline. The derivation runs once per run and once per connection
//!   attempt, so the stronger setting costs little to users (measured: about
//!   0.13 s against 0.023 s for OWASP's in a release build on this machine)
//!   and about 5.7 times as much per guess to an attacker.
//! - **Opening restores a valid DCCP Checksum** over the plaintext, and
//!   [`Opener::open_response`] removes the salt again, so the connection
//!   code parses an opened packet exactly as it parses a clear one.
//!
//! # Choice of crates
//!
//! RustCrypto's `chacha20poly1305` 0.11, `hkdf` 0.13, `sha2` 0.11 and
//! `argon2` 0.6, with `zeroize` 1 for the key material; not `ring` 0.17
//! with `argon2` beside it.
//!
//! - Licences: all the RustCrypto crates are `MIT OR Apache-2.0`, like this
//!   workspace; `ring` is `Apache-2.0 AND ISC`. Both are permissive.
//! - Maintenance: RustCrypto released these versions for Rust 1.85 (this
//!   workspace's `rust-version`); `chacha20poly1305` has had an NCC Group
//!   audit (its README). `ring` was declared unmaintained in February 2025
//!   (RUSTSEC-2025-0007, withdrawn within days when the rustls maintainers
//!   took it over).
//! - One stack: Argon2 is only in RustCrypto, so `ring` would mean two
//!   cryptography stacks, and `ring` builds C and assembly with the `cc`
//!   crate, which a cross or fuzzing build must then provide for.
//! - Build time, measured on this machine: clean debug builds with `-j2`,
//!   the primitives at opt-level 3 as in this workspace, three runs each.
//!   The two cores were shared with other work, so CPU time (user +
//!   system) is the steadier figure; medians, with the range:
//!
//!   | what was built | CPU time | wall time |
//!   |---|---|---|
//!   | a crate with only RustCrypto ChaCha20-Poly1305, HKDF, SHA-256, Argon2, zeroize | 7.5 s (7.5–10.3) | 8.7–13.3 s |
//!   | the same with AES-GCM instead of ChaCha20-Poly1305 | 8.6 s (8.0–10.1) | 11.6–13.4 s |
//!   | a crate with only `ring`, Argon2, zeroize | 27.7 s (22.5–28.4) | 26.5–66.2 s |
//!   | `cargo build -p fairstream-proto` on main at 8fc2ed2, before Init Cookies brought `hmac` and `sha2`: without / with this module | 23.1 s (21.2–23.8) / 33.6 s (30.4–33.9) | 27.9–76.8 s / 40.6–53.2 s |
//!   | the same on main at eb4b799, which has `hmac` and `sha2`: without / with this module | 25.8 s (25.7–26.3) / 29.2 s (28.8–29.2) | 26.0–27.0 s / 26.5–31.3 s |
//!
//!   So on today's main the module adds about 3.4 s of CPU time (0.5–4 s
//!   of wall time) to a clean build of this crate, since the SHA-2 and
//!   HMAC crates are already there; `ring` alone would cost about 28 s.
//! - ChaCha20-Poly1305 rather than AES-GCM: fast in plain software on any
//!   CPU (AES-GCM is fast only with AES and carry-less multiply
//!   instructions; without them the constant-time software fallback is
//!   slow), no practical per-key confidentiality limit (above), and the
//!   `chacha20` crate was already in this workspace's lock file.
//!
//! Throughput and derivation times are in `docs/security.md` ("Measured
//! cost") and come from `benches/secure.rs`.

mod header;
mod keys;
mod open;
mod passphrase;
mod replay;
mod seal;
#[cfg(test)]
mod tests;

pub use keys::{
    ConnectionKeys, MasterKey, Role, ARGON2_ITERATIONS, ARGON2_LANES, ARGON2_MEMORY_KIB,
};
pub use open::{peek_response, OpenError, Opener, PeekedResponse};
pub use passphrase::{Passphrase, PassphraseError};
pub use seal::{SealError, Sealer};

/// The listener's salt length: 16 bytes (RFC 9106 §3.1 recommends 128 bits
/// for password hashing; §4 uses a 128-bit salt).
pub const SALT_LEN: usize = 16;
/// The master key and AEAD key length: 32 bytes (ChaCha20, RFC 8439 §2.3).
pub const KEY_LEN: usize = 32;
/// The IV and nonce length: 12 bytes (RFC 8439 §2.8).
pub const IV_LEN: usize = 12;
/// The tag length: 16 bytes (Poly1305, RFC 8439 §2.5).
pub const TAG_LEN: usize = 16;
/// The shortest passphrase, in bytes (SRT's lower bound).
pub const MIN_PASSPHRASE_LEN: usize = 10;
/// The longest passphrase, in bytes (SRT's upper bound).
pub const MAX_PASSPHRASE_LEN: usize = 79;
/// A direction changes key every 2^`EPOCH_BITS` packets: RFC 9001 §6.6's
/// confidentiality limit for AES-GCM, the tightest of the AEADs TLS 1.3 and
/// QUIC use (see the module documentation).
pub const EPOCH_BITS: u32 = 23;
/// The replay window: how many sequence numbers behind the newest one a
/// packet may arrive and still be accepted once. RFC 4303 §3.4.3: "A
/// minimum window size of 32 packets MUST be supported ...; a window size of
/// 64 is preferred", and "The receive window size should be increased for
/// higher-speed environments". 1024 packets are 1.2 MB of 1200-byte
/// datagrams: well beyond the reordering DCCP's own sequence window
/// (default 100, RFC 4340 §7.5.2) lets through.
pub const REPLAY_WINDOW: u64 = 1024;
/// The number of packets failing authentication after which a connection
/// is closed: ChaCha20-Poly1305's integrity limit, 2^36 (RFC 9001 §6.6).
pub const INTEGRITY_LIMIT: u64 = 1 << 36;
