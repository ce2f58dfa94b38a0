//! Init Cookies (RFC 4340 §8.1.4): a listening endpoint that keeps no state
//! for a peer until the peer has shown it receives at its address.
//!
//! RFC 4340 §8.1.4: "The server wraps up the Service Code, server port,
//! and any options it cares about from both the DCCP-Request and
//! DCCP-Response in an opaque cookie ... When the server receives the
//! cookie back in the response, it can decrypt the cookie and instantiate
//! all the state it avoided keeping." Here the cookie holds the Request
//! itself (without padding), the server's Initial Sequence Number and the
//! time the Response left; the server rebuilds the connection by accepting
//! that Request again at that time with that ISS, which gives the same
//! Response and so the same state, and then takes the client's Ack.
//!
//! The cookie is authenticated, not encrypted: it is the server's own data
//! sent back, and the Request in it is what the client sent in clear. Its
//! tag is HMAC-SHA256 (RFC 2104, FIPS 180-4) under a secret the driver
//! chooses at random, over the cookie and the peer's address (`source`),
//! truncated to 128 bits (RFC 2104 §5 allows truncation to no less than
//! half the hash; 128 bits is what RFC 4868 uses for HMAC-SHA256 in IPsec).
//! A cookie is good for [`CookieConfig::lifetime`] after its Response.
//!
//! Layout: version (1 byte) · Response time, ns (8) · ISS (6) · Request
//! (the rest) · tag (16).

use std::fmt;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::time::Instant;
use crate::wire::options::MAX_OPTION_DATA_LEN;

/// The cookie format's version.
const VERSION: u8 = 1;
/// Bytes of the truncated HMAC-SHA256 tag.
const TAG_LEN: usize = 16;
/// Bytes before the Request: version, time, ISS.
const HEADER_LEN: usize = 1 + 8 + 6;
/// The longest Request (without padding) a cookie can hold.
pub const MAX_COOKIE_REQUEST_LEN: usize = MAX_OPTION_DATA_LEN - HEADER_LEN - TAG_LEN;
/// Domain separation for the tag.
const LABEL: &[u8] = b"fairstream DCCP Init Cookie v1";

/// Stateless handshakes for a listening endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct CookieConfig {
    /// The key of the cookies' tags: random, and kept secret.
    pub secret: [u8; 32],
    /// How long after its Response a cookie is accepted. A client
    /// retransmits its Ack in PARTOPEN until the handshake timeout, so
    /// this is usually that timeout.
    pub lifetime: Duration,
}

impl fmt::Debug for CookieConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CookieConfig")
            .field("secret", &"<secret>")
            .field("lifetime", &self.lifetime)
            .finish()
    }
}

/// What a cookie holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cookie {
    /// When the Response carrying it was made.
    pub(crate) sent_at: Instant,
    /// The server's Initial Sequence Number.
    pub(crate) iss: u64,
    /// The client's Request, without padding or data.
    pub(crate) request: Vec<u8>,
}

/// Why a cookie was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CookieError {
    /// Too short, or another version.
    Malformed,
    /// The tag does not match: forged, altered, or from another address.
    BadTag,
    /// Older than the lifetime (or from the future).
    Expired,
}

/// The HMAC over `source` and `body`, ready to finalize or verify.
fn mac(config: &CookieConfig, source: &[u8], body: &[u8]) -> Option<Hmac<Sha256>> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&config.secret).ok()?;
    mac.update(LABEL);
    // The source's length first, so that source and body cannot trade bytes.
    mac.update(&u64::try_from(source.len()).ok()?.to_be_bytes());
    mac.update(source);
    mac.update(body);
    Some(mac)
}

impl Cookie {
    /// The cookie's bytes for a peer at `source`; `None` if the Request is
    /// too long for one Init Cookie option.
    pub(crate) fn seal(&self, config: &CookieConfig, source: &[u8]) -> Option<Vec<u8>> {
        if self.request.len() > MAX_COOKIE_REQUEST_LEN {
            return None;
        }
        let mut body = Vec::with_capacity(HEADER_LEN + self.request.len() + TAG_LEN);
        body.push(VERSION);
        body.extend_from_slice(&self.sent_at.as_nanos().to_be_bytes());
        body.extend_from_slice(&self.iss.to_be_bytes()[2..]);
        body.extend_from_slice(&self.request);
        let full = mac(config, source, &body)?.finalize().into_bytes();
        body.extend_from_slice(full.get(..TAG_LEN)?);
        Some(body)
    }

    /// The cookie in `bytes`, echoed by a peer at `source` at `now`.
    pub(crate) fn open(
        config: &CookieConfig,
        source: &[u8],
        bytes: &[u8],
        now: Instant,
    ) -> Result<Cookie, CookieError> {
        if bytes.len() < HEADER_LEN + TAG_LEN || bytes.first() != Some(&VERSION) {
            return Err(CookieError::Malformed);
        }
        let (body, got) = bytes.split_at(bytes.len() - TAG_LEN);
        // Compared in constant time (the leftmost TAG_LEN bytes).
        mac(config, source, body)
            .ok_or(CookieError::Malformed)?
            .verify_truncated_left(got)
            .map_err(|_| CookieError::BadTag)?;
        let mut nanos = [0u8; 8];
        nanos.copy_from_slice(body.get(1..9).ok_or(CookieError::Malformed)?);
        let sent_at = Instant::from_nanos(u64::from_be_bytes(nanos));
        let mut iss = [0u8; 8];
        iss[2..].copy_from_slice(body.get(9..15).ok_or(CookieError::Malformed)?);
        if sent_at > now || now.saturating_duration_since(sent_at) > config.lifetime {
            return Err(CookieError::Expired);
        }
        Ok(Cookie {
            sent_at,
            iss: u64::from_be_bytes(iss),
            request: body
                .get(HEADER_LEN..)
                .ok_or(CookieError::Malformed)?
                .to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> CookieConfig {
        CookieConfig {
            secret: [7; 32],
            lifetime: Duration::from_secs(5),
        }
    }

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn cookie() -> Cookie {
        Cookie {
            sent_at: at(1_000),
            iss: 0x0000_1234_5678_9abc,
            request: vec![1, 2, 3, 4, 5],
        }
    }

    #[test]
    fn a_cookie_opens_for_its_address_within_its_lifetime() {
        let config = config();
        let bytes = cookie().seal(&config, b"peer A").unwrap();
        assert_eq!(bytes.len(), HEADER_LEN + 5 + TAG_LEN);
        assert_eq!(
            Cookie::open(&config, b"peer A", &bytes, at(3_000)),
            Ok(cookie())
        );
        assert_eq!(
            Cookie::open(&config, b"peer A", &bytes, at(6_000)),
            Ok(cookie())
        );
        assert_eq!(
            Cookie::open(&config, b"peer A", &bytes, at(6_001)),
            Err(CookieError::Expired)
        );
        assert_eq!(
            Cookie::open(&config, b"peer A", &bytes, at(999)),
            Err(CookieError::Expired)
        );
    }

    #[test]
    fn another_address_another_secret_or_any_changed_byte_is_refused() {
        let config = config();
        let bytes = cookie().seal(&config, b"peer A").unwrap();
        assert_eq!(
            Cookie::open(&config, b"peer B", &bytes, at(2_000)),
            Err(CookieError::BadTag)
        );
        let other = CookieConfig {
            secret: [8; 32],
            ..config.clone()
        };
        assert_eq!(
            Cookie::open(&other, b"peer A", &bytes, at(2_000)),
            Err(CookieError::BadTag)
        );
        for i in 1..bytes.len() {
            let mut changed = bytes.clone();
            changed[i] ^= 0x01;
            assert_eq!(
                Cookie::open(&config, b"peer A", &changed, at(2_000)),
                Err(CookieError::BadTag),
                "byte {i}"
            );
        }
        let mut version = bytes.clone();
        version[0] = 2;
        assert_eq!(
            Cookie::open(&config, b"peer A", &version, at(2_000)),
            Err(CookieError::Malformed)
        );
        assert_eq!(
            Cookie::open(&config, b"peer A", &bytes[..20], at(2_000)),
            Err(CookieError::Malformed)
        );
    }

    #[test]
    fn a_request_too_long_for_one_option_has_no_cookie() {
        let long = Cookie {
            request: vec![0; MAX_COOKIE_REQUEST_LEN + 1],
            ..cookie()
        };
        assert_eq!(long.seal(&config(), b""), None);
        let longest = Cookie {
            request: vec![0; MAX_COOKIE_REQUEST_LEN],
            ..cookie()
        };
        assert_eq!(
            longest.seal(&config(), b"").map(|b| b.len()),
            Some(MAX_OPTION_DATA_LEN)
        );
    }
}
