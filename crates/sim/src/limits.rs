//! The largest values a scenario file, the emulator's options or a URL may
//! give, checked when they are parsed (issue 13: an absurd value such as a
//! rate of `1e30bit` made `simulate` run forever and grow without bound).
//! Each is far beyond what the papers or a real path need and small enough
//! that a run stays finite and its memory bounded.

use std::time::Duration;

/// The fastest link or source: 100 Gbit/s.
pub const MAX_RATE_BPS: f64 = 100e9;
/// The most packets a queue holds: 2²⁴ (16.7 million).
pub const MAX_QUEUE_PACKETS: u64 = 1 << 24;
/// The most bytes a queue holds: 1 GiB.
pub const MAX_QUEUE_BYTES: u64 = 1 << 30;
/// The longest duration (a run, a delay, a timer): one day.
pub const MAX_DURATION: Duration = Duration::from_secs(86_400);

/// `Err` with the reason when a rate of `bits_per_sec` is above
/// [`MAX_RATE_BPS`].
pub fn check_rate(bits_per_sec: f64) -> Result<(), String> {
    if bits_per_sec <= MAX_RATE_BPS {
        Ok(())
    } else {
        Err(format!(
            "rate {bits_per_sec:e} bit/s exceeds the maximum of 100 Gbit/s"
        ))
    }
}

/// `Err` with the reason when `duration` is above [`MAX_DURATION`].
pub fn check_duration(duration: Duration) -> Result<(), String> {
    if duration <= MAX_DURATION {
        Ok(())
    } else {
        Err(format!(
            "duration {:.0} s exceeds the maximum of one day (86400 s)",
            duration.as_secs_f64()
        ))
    }
}

/// `Err` with the reason when a queue of `packets` packets is too large.
pub fn check_queue_packets(packets: u64) -> Result<(), String> {
    if packets <= MAX_QUEUE_PACKETS {
        Ok(())
    } else {
        Err(format!(
            "a queue of {packets} packets exceeds the maximum of {MAX_QUEUE_PACKETS}"
        ))
    }
}

/// `Err` with the reason when a queue of `bytes` bytes is too large.
pub fn check_queue_bytes(bytes: u64) -> Result<(), String> {
    if bytes <= MAX_QUEUE_BYTES {
        Ok(())
    } else {
        Err(format!(
            "a queue of {bytes} bytes exceeds the maximum of 1 GiB ({MAX_QUEUE_BYTES} bytes)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_take_what_is_at_most_the_maximum() {
        assert!(check_rate(100e9).is_ok());
        assert!(check_rate(1e30).unwrap_err().contains("100 Gbit/s"));
        assert!(check_duration(MAX_DURATION).is_ok());
        assert!(check_duration(MAX_DURATION + Duration::from_secs(1)).is_err());
        assert!(check_queue_packets(MAX_QUEUE_PACKETS).is_ok());
        assert!(check_queue_packets(MAX_QUEUE_PACKETS + 1).is_err());
        assert!(check_queue_bytes(1 << 30).is_ok());
        assert!(check_queue_bytes(1_000_000_000_000).is_err());
    }
}
