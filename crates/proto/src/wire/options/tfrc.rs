//! CCID 3/4 option values (RFC 4342 §8, RFC 5622 §8) and the time units of
//! the Timestamp family (RFC 4340 §13).

use std::time::Duration;

/// The Loss Event Rate option's value (option 192, RFC 4342 §8.5): the
/// inverse of the loss event rate p, rounded up; 2^32 − 1 means no loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LossEventRate(pub u32);

impl LossEventRate {
    /// The value that reports a zero loss event rate.
    pub const NO_LOSS: LossEventRate = LossEventRate(u32::MAX);

    /// The value for loss event rate `p`: `ceil(1/p)`, at most 2^32 − 2 so that
    /// a tiny nonzero `p` is not mistaken for no loss. `p = 0` gives
    /// [`NO_LOSS`](Self::NO_LOSS). `None` for `p` outside [0, 1] or NaN.
    pub fn from_p(p: f64) -> Option<LossEventRate> {
        if !(0.0..=1.0).contains(&p) {
            return None;
        }
        if p == 0.0 {
            return Some(Self::NO_LOSS);
        }
        let inverse = (1.0 / p).ceil();
        let max = f64::from(u32::MAX - 1);
        // `inverse` is in [1, +inf]; clamped below 2^32 − 1, so the cast is exact.
        Some(LossEventRate(inverse.min(max) as u32))
    }

    /// The loss event rate p this value reports: 0 for
    /// [`NO_LOSS`](Self::NO_LOSS), otherwise `1/value`. `None` for 0, which no
    /// rate in [0, 1] produces.
    pub fn p(self) -> Option<f64> {
        match self.0 {
            0 => None,
            u32::MAX => Some(0.0),
            v => Some(1.0 / f64::from(v)),
        }
    }
}

/// One loss interval record of the Loss Intervals option (RFC 4342 §8.6.1):
/// 9 bytes, laid out as Lossless Length (24 bits), E (1 bit), Loss Length
/// (23 bits), Data Length (24 bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LossInterval {
    /// Packets in the interval's lossless part, below 2^24.
    pub lossless_length: u32,
    /// The ECN Nonce Echo bit E for the interval.
    pub ecn_nonce_echo: bool,
    /// Packets in the lossy part, below 2^23.
    pub loss_length: u32,
    /// Data packets in the interval, below 2^24.
    pub data_length: u32,
}

impl LossInterval {
    /// The encoded size of one record.
    pub const LEN: usize = 9;
    /// The bound (exclusive) of the 24-bit fields.
    pub const MAX_24: u32 = 1 << 24;
    /// The bound (exclusive) of the 23-bit Loss Length.
    pub const MAX_23: u32 = 1 << 23;

    /// Decodes a 9-byte record.
    pub(crate) fn decode(record: [u8; 9]) -> LossInterval {
        let [a, b, c, d, e, f, g, h, i] = record;
        LossInterval {
            lossless_length: u32::from_be_bytes([0, a, b, c]),
            ecn_nonce_echo: d & 0x80 != 0,
            loss_length: u32::from_be_bytes([0, d & 0x7F, e, f]),
            data_length: u32::from_be_bytes([0, g, h, i]),
        }
    }

    /// Appends the 9-byte record (fields are assumed validated).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        let [_, a, b, c] = self.lossless_length.to_be_bytes();
        let [_, d, e, f] = self.loss_length.to_be_bytes();
        let d = (d & 0x7F) | if self.ecn_nonce_echo { 0x80 } else { 0 };
        let [_, g, h, i] = self.data_length.to_be_bytes();
        out.extend_from_slice(&[a, b, c, d, e, f, g, h, i]);
    }

    /// The first field that does not fit its bit width, with its value and
    /// bound.
    pub(crate) fn out_of_range(&self) -> Option<(&'static str, u32, u32)> {
        if self.lossless_length >= Self::MAX_24 {
            Some(("Lossless Length", self.lossless_length, Self::MAX_24))
        } else if self.loss_length >= Self::MAX_23 {
            Some(("Loss Length", self.loss_length, Self::MAX_23))
        } else if self.data_length >= Self::MAX_24 {
            Some(("Data Length", self.data_length, Self::MAX_24))
        } else {
            None
        }
    }
}

/// The Loss Intervals option's value (option 193, RFC 4342 §8.6): a Skip
/// Length byte and up to [`LossIntervals::MAX_INTERVALS`] records, newest
/// first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LossIntervals {
    /// Skip Length: packets at the top of the sequence space that are not
    /// yet part of any loss interval.
    pub skip_length: u8,
    /// The loss interval records, newest first.
    pub intervals: Vec<LossInterval>,
}

impl LossIntervals {
    /// The most records one option can hold: (255 − 3) / 9.
    pub const MAX_INTERVALS: usize = 28;
}

/// A time in the units of the Elapsed Time option and of the elapsed time in
/// Timestamp Echo: hundredths of milliseconds, i.e. 10 µs (RFC 4340 §13.2).
/// Encoded in 2 bytes when it fits, otherwise 4.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ElapsedTime(pub u32);

impl ElapsedTime {
    /// The unit: 10 µs.
    pub const UNIT: Duration = Duration::from_micros(10);

    /// `duration` in units of 10 µs, rounded down and saturating at 2^32 − 1.
    pub fn from_duration(duration: Duration) -> ElapsedTime {
        let units = duration.as_micros() / 10;
        ElapsedTime(u32::try_from(units).unwrap_or(u32::MAX))
    }

    /// The time as a `Duration`.
    pub fn to_duration(self) -> Duration {
        Duration::from_micros(u64::from(self.0) * 10)
    }

    /// The encoded size: 2 bytes up to 0xFFFF units (0.65535 s), else 4.
    pub const fn encoded_len(self) -> usize {
        if self.0 <= 0xFFFF {
            2
        } else {
            4
        }
    }

    pub(crate) fn encode(self, out: &mut Vec<u8>) {
        match u16::try_from(self.0) {
            Ok(short) => out.extend_from_slice(&short.to_be_bytes()),
            Err(_) => out.extend_from_slice(&self.0.to_be_bytes()),
        }
    }
}
