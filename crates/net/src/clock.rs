//! The real clock, as the protocol's virtual time.

use std::time::Duration;

use fairstream_proto::time::Instant;

/// Maps the operating system's monotonic clock to
/// [`fairstream_proto::time::Instant`]: nanoseconds since the clock was made.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: std::time::Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock whose epoch is now.
    pub fn new() -> Clock {
        Clock {
            start: std::time::Instant::now(),
        }
    }

    /// The time now.
    pub fn now(&self) -> Instant {
        let elapsed = self.start.elapsed();
        Instant::from_nanos(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The operating system's instant for `at`.
    pub fn to_std(&self, at: Instant) -> std::time::Instant {
        self.start + Duration::from_nanos(at.as_nanos())
    }

    /// Time since the epoch.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

/// 32 bytes from the operating system's cryptographic generator, for keys
/// (the receiver's Init Cookie secret). Fails only if the system has none.
pub(crate) fn random_secret() -> std::io::Result<[u8; 32]> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(std::io::Error::other)?;
    Ok(secret)
}

/// A socket address as bytes (IP octets, then the port), to bind an Init
/// Cookie to the address it was sent to.
pub(crate) fn address_bytes(address: std::net::SocketAddr) -> Vec<u8> {
    let mut bytes = match address.ip() {
        std::net::IpAddr::V4(ip) => ip.octets().to_vec(),
        std::net::IpAddr::V6(ip) => ip.octets().to_vec(),
    };
    bytes.extend_from_slice(&address.port().to_be_bytes());
    bytes
}

/// A random 64-bit number from the standard library's per-process keys
/// (initial sequence numbers, ports).
pub(crate) fn random_u64(salt: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(salt);
    hasher.write_u128(
        std::time::SystemTime::UNIX_EPOCH
            .elapsed()
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_monotonic_and_maps_back() {
        let clock = Clock::new();
        let a = clock.now();
        std::thread::sleep(Duration::from_millis(2));
        let b = clock.now();
        assert!(b > a);
        assert!(b - a >= Duration::from_millis(2));
        let back = clock.to_std(b);
        assert!(back <= std::time::Instant::now());
    }
}

/// The system's wall clock (Unix time) for a [`Clock`]'s instants: read
/// once, so that a step of the wall clock during a run moves nothing. Voice
/// frames carry their capture time on it (`fairstream_media::voice::rtp`).
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    /// Unix nanoseconds at the clock's epoch.
    epoch_unix_ns: i128,
}

impl WallClock {
    /// Reads the wall clock now, against `clock`.
    pub fn new(clock: &Clock) -> WallClock {
        let unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        WallClock {
            epoch_unix_ns: unix_ns - i128::from(clock.now().as_nanos()),
        }
    }

    /// Unix nanoseconds of `at`.
    pub fn unix_ns(&self, at: Instant) -> u64 {
        u64::try_from(self.epoch_unix_ns + i128::from(at.as_nanos())).unwrap_or(0)
    }

    /// The instant of Unix time `unix_ns` (the clock's epoch if earlier).
    pub fn instant(&self, unix_ns: u64) -> Instant {
        let nanos = i128::from(unix_ns) - self.epoch_unix_ns;
        Instant::from_nanos(u64::try_from(nanos.max(0)).unwrap_or(u64::MAX))
    }
}
