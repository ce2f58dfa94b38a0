//! 48-bit circular sequence numbers (RFC 4340 §3.1, §7).

use std::fmt;
use std::ops::{Add, Sub};

/// A DCCP sequence or acknowledgement number: 48 bits, compared and added
/// modulo 2^48 (RFC 4340 §7: sequence numbers "increase by one, modulo
/// 2^48, per packet").
///
/// Circular order is not a total order, so `SeqNum` has no `Ord`: use
/// [`distance`](Self::distance), [`is_after`](Self::is_after) and
/// [`is_before`](Self::is_before). Two numbers exactly 2^47 apart are neither
/// before nor after each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeqNum(u64);

impl SeqNum {
    /// 2^48, the modulus of sequence number arithmetic.
    pub const MODULUS: u64 = 1 << 48;
    /// Half the sequence space, 2^47.
    pub const HALF: u64 = 1 << 47;
    /// The largest sequence number, 2^48 − 1.
    pub const MAX: SeqNum = SeqNum(Self::MODULUS - 1);
    /// Zero.
    pub const ZERO: SeqNum = SeqNum(0);

    const MASK: u64 = Self::MODULUS - 1;
    const SHORT_MODULUS: u64 = 1 << 24;
    const SHORT_MASK: u64 = Self::SHORT_MODULUS - 1;

    /// The sequence number `value` modulo 2^48 (higher bits are dropped).
    pub const fn new(value: u64) -> Self {
        SeqNum(value & Self::MASK)
    }

    /// The number as an integer in 0..2^48.
    pub const fn value(self) -> u64 {
        self.0
    }

    /// The low 24 bits: what a short (X = 0) header carries (RFC 4340 §5.1).
    pub const fn low24(self) -> u32 {
        // Masked to 24 bits, so it fits in a u32.
        (self.0 & Self::SHORT_MASK) as u32
    }

    /// `self + n` modulo 2^48.
    pub const fn add(self, n: u64) -> Self {
        SeqNum(self.0.wrapping_add(n) & Self::MASK)
    }

    /// `self − n` modulo 2^48.
    pub const fn sub(self, n: u64) -> Self {
        SeqNum(self.0.wrapping_sub(n) & Self::MASK)
    }

    /// `self + delta` modulo 2^48, for a signed `delta`.
    pub const fn add_signed(self, delta: i64) -> Self {
        SeqNum(self.0.wrapping_add_signed(delta) & Self::MASK)
    }

    /// The signed circular distance from `self` to `to`: the `d` in
    /// [−2^47, 2^47) with `self + d ≡ to (mod 2^48)`. Positive when `to` is
    /// after `self`.
    pub const fn distance(self, to: SeqNum) -> i64 {
        let forward = to.0.wrapping_sub(self.0) & Self::MASK;
        if forward < Self::HALF {
            // forward < 2^47 fits in an i64.
            forward as i64
        } else {
            // forward − 2^48 is in [−2^47, 0).
            (forward as i64) - (Self::MODULUS as i64)
        }
    }

    /// Whether `self` comes after `other` in circular order: `other + d =
    /// self` for some `d` in (0, 2^47) (RFC 4340 §7.1: "greatest" is measured
    /// in circular sequence space).
    pub const fn is_after(self, other: SeqNum) -> bool {
        let forward = self.0.wrapping_sub(other.0) & Self::MASK;
        forward != 0 && forward < Self::HALF
    }

    /// Whether `self` comes before `other` in circular order.
    pub const fn is_before(self, other: SeqNum) -> bool {
        other.is_after(self)
    }

    /// Extends a 24-bit short sequence number to 48 bits (RFC 4340 §7.6).
    ///
    /// The result is the 48-bit number whose low 24 bits are `short` and
    /// which is circularly closest to `expected` (the receiver uses its
    /// Greatest Sequence Number Received, GSR, or for acknowledgement numbers
    /// its Greatest Sequence Number Sent, GSS): the 24-bit difference from
    /// `expected`'s low bits is taken as a signed number in [−2^23, 2^23) and
    /// added to `expected`. Only bits 0..24 of `short` are used.
    pub const fn extend_short(short: u32, expected: SeqNum) -> Self {
        let diff = ((short as u64).wrapping_sub(expected.0) & Self::SHORT_MASK) as i64;
        let signed = if diff >= (Self::SHORT_MODULUS / 2) as i64 {
            diff - Self::SHORT_MODULUS as i64
        } else {
            diff
        };
        expected.add_signed(signed)
    }
}

impl Add<u64> for SeqNum {
    type Output = SeqNum;
    fn add(self, n: u64) -> SeqNum {
        SeqNum::add(self, n)
    }
}

impl Sub<u64> for SeqNum {
    type Output = SeqNum;
    fn sub(self, n: u64) -> SeqNum {
        SeqNum::sub(self, n)
    }
}

impl From<SeqNum> for u64 {
    fn from(seq: SeqNum) -> u64 {
        seq.0
    }
}

impl fmt::Display for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TOP: u64 = SeqNum::MODULUS - 1;

    #[test]
    fn new_wraps_modulo_2_48() {
        assert_eq!(SeqNum::new(SeqNum::MODULUS).value(), 0);
        assert_eq!(SeqNum::new(SeqNum::MODULUS + 5).value(), 5);
        assert_eq!(SeqNum::new(u64::MAX).value(), TOP);
    }

    #[test]
    fn add_and_sub_wrap_around() {
        assert_eq!(SeqNum::MAX + 1, SeqNum::ZERO);
        assert_eq!(SeqNum::new(TOP - 1) + 5, SeqNum::new(3));
        assert_eq!(SeqNum::ZERO - 1, SeqNum::MAX);
        assert_eq!(SeqNum::new(2) - 5, SeqNum::new(TOP - 2));
        assert_eq!(SeqNum::new(7).add_signed(-10), SeqNum::new(TOP - 2));
    }

    #[test]
    fn comparison_across_the_wrap() {
        let before = SeqNum::new(TOP - 2);
        let after = SeqNum::new(3);
        assert!(after.is_after(before));
        assert!(before.is_before(after));
        assert!(!before.is_after(after));
        assert_eq!(before.distance(after), 6);
        assert_eq!(after.distance(before), -6);
        assert!(!after.is_after(after));
    }

    #[test]
    fn half_space_apart_is_neither_before_nor_after() {
        let a = SeqNum::new(10);
        let b = a + SeqNum::HALF;
        assert!(!a.is_after(b));
        assert!(!b.is_after(a));
        assert_eq!(a.distance(b), -(SeqNum::HALF as i64));
        // Just inside the half space it is ordered.
        assert!((a + (SeqNum::HALF - 1)).is_after(a));
    }

    #[test]
    fn extend_short_examples() {
        // Same 2^24 block.
        let gsr = SeqNum::new(0x0012_3456_789A);
        assert_eq!(
            SeqNum::extend_short(0x78_9A_BC, gsr).value(),
            0x0012_3478_9ABC
        );
        // Low bits just past a 2^24 boundary: the number belongs to the next block.
        let gsr = SeqNum::new(0x0001_00FF_FFF0);
        assert_eq!(
            SeqNum::extend_short(0x00_0005, gsr).value(),
            0x0001_0100_0005
        );
        // A slightly older number from the previous block.
        let gsr = SeqNum::new(0x0001_0100_0002);
        assert_eq!(
            SeqNum::extend_short(0xFF_FFF0, gsr).value(),
            0x0001_00FF_FFF0
        );
        // Across the 48-bit wrap, both ways.
        let gsr = SeqNum::new(TOP - 1);
        assert_eq!(SeqNum::extend_short(0x00_0003, gsr).value(), 3);
        let gsr = SeqNum::new(2);
        assert_eq!(SeqNum::extend_short(0xFF_FFFE, gsr).value(), TOP - 1);
        // Only the low 24 bits of `short` count.
        assert_eq!(SeqNum::extend_short(0xAB00_0001, SeqNum::ZERO).value(), 1);
    }

    proptest! {
        #[test]
        fn add_then_sub_is_identity(a in 0..SeqNum::MODULUS, n in any::<u64>()) {
            let a = SeqNum::new(a);
            prop_assert_eq!((a + n) - n, a);
            prop_assert!((a + n).value() < SeqNum::MODULUS);
        }

        #[test]
        fn distance_inverts_add(a in 0..SeqNum::MODULUS, d in -(SeqNum::HALF as i64)..(SeqNum::HALF as i64)) {
            let a = SeqNum::new(a);
            let b = a.add_signed(d);
            prop_assert_eq!(a.distance(b), d);
            prop_assert_eq!(b.is_after(a), d > 0);
            prop_assert_eq!(b.is_before(a), d < 0 && d != -(SeqNum::HALF as i64));
        }

        #[test]
        fn is_after_is_antisymmetric(a in 0..SeqNum::MODULUS, b in 0..SeqNum::MODULUS) {
            let (a, b) = (SeqNum::new(a), SeqNum::new(b));
            prop_assert!(!(a.is_after(b) && b.is_after(a)));
            if a != b && a.distance(b).unsigned_abs() != SeqNum::HALF {
                prop_assert!(a.is_after(b) || b.is_after(a));
            }
        }

        #[test]
        fn extend_short_recovers_nearby_numbers(
            expected in 0..SeqNum::MODULUS,
            d in -(1i64 << 23)..(1i64 << 23),
        ) {
            let expected = SeqNum::new(expected);
            let actual = expected.add_signed(d);
            prop_assert_eq!(SeqNum::extend_short(actual.low24(), expected), actual);
        }
    }
}
