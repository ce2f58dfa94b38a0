//! The Internet checksum (RFC 1071): the 16-bit one's complement of the one's
//! complement sum of 16-bit big-endian words.
//!
//! [`Accumulator`] sums any number of byte slices as if they were one
//! contiguous buffer: a slice of odd length leaves its last byte pending and
//! the next slice continues from it, so callers can feed a pseudo-header, a
//! header and a payload separately. Only the very end of the data is padded
//! with a zero byte, as RFC 1071 §1 prescribes for an odd total length.

/// Eight-byte blocks summed between two folds: 2^16 blocks of two halves
/// below 2^32 each add less than 2^49.
const RUN_BLOCKS: usize = 1 << 16;

/// A running one's complement sum of 16-bit big-endian words (RFC 1071).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Accumulator {
    /// The unfolded sum. Folded whenever it could overflow.
    sum: u64,
    /// The high byte of a word whose low byte has not been seen yet.
    pending: Option<u8>,
}

impl Accumulator {
    /// An empty sum.
    pub const fn new() -> Self {
        Accumulator {
            sum: 0,
            pending: None,
        }
    }

    /// Adds `bytes`, continuing any odd byte left by the previous call.
    pub fn add_bytes(&mut self, bytes: &[u8]) -> &mut Self {
        let mut rest = bytes;
        if let Some(high) = self.pending {
            if let Some((&low, tail)) = rest.split_first() {
                self.add_word(u16::from_be_bytes([high, low]));
                self.pending = None;
                rest = tail;
            }
        }
        // Eight bytes at a time: RFC 1071 §2 (B), "the sum may be
        // calculated on larger words and folded"; a 32-bit half adds less
        // than 2^32 to a 64-bit sum. A run of RUN_BLOCKS blocks adds less
        // than 2^49, so the loop over a run needs no test for overflow. The
        // blocks are read little-endian, with no byte swap in the loop, so
        // that the compiler vectorises it: by RFC 1071 §2 (B), "Byte Order
        // Independence", the folded sum of the byte-swapped words is the
        // byte swap of the folded sum. The same 16-bit result as word by
        // word (a property test checks).
        let whole = rest.len() / 8 * 8;
        let (body, tail) = rest.split_at(whole);
        for run in body.chunks(8 * RUN_BLOCKS) {
            let mut swapped_sum = 0u64;
            for block in run.chunks_exact(8) {
                let mut word = [0u8; 8];
                word.copy_from_slice(block);
                let word = u64::from_le_bytes(word);
                swapped_sum += (word >> 32) + (word & 0xFFFF_FFFF);
            }
            // `fold` returns a value below 2^16.
            self.sum += u64::from((fold(swapped_sum) as u16).swap_bytes());
        }
        let mut words = tail.chunks_exact(2);
        for word in &mut words {
            // `chunks_exact(2)` yields slices of exactly two bytes.
            if let [high, low] = *word {
                self.add_word(u16::from_be_bytes([high, low]));
            }
        }
        if let [last] = *words.remainder() {
            self.pending = Some(last);
        }
        self
    }

    /// Adds one 16-bit word. Must not be called while a byte is pending
    /// (after an odd-length [`add_bytes`](Self::add_bytes)); in that case the
    /// word is added as two bytes so that the byte order stays right.
    pub fn add_u16(&mut self, word: u16) -> &mut Self {
        if self.pending.is_some() {
            return self.add_bytes(&word.to_be_bytes());
        }
        self.add_word(word);
        self
    }

    /// Adds a 32-bit value as two 16-bit words (as a pseudo-header length).
    pub fn add_u32(&mut self, value: u32) -> &mut Self {
        self.add_bytes(&value.to_be_bytes())
    }

    fn add_word(&mut self, word: u16) {
        self.sum += u64::from(word);
        if self.sum > u64::from(u32::MAX) {
            self.sum = fold(self.sum);
        }
    }

    /// The one's complement sum so far, folded to 16 bits (with a pending odd
    /// byte padded by a zero byte).
    pub fn sum(&self) -> u16 {
        let mut sum = self.sum;
        if let Some(high) = self.pending {
            sum += u64::from(u16::from_be_bytes([high, 0]));
        }
        // `fold` returns a value below 2^16.
        fold(sum) as u16
    }

    /// The checksum: the one's complement of [`sum`](Self::sum).
    pub fn checksum(&self) -> u16 {
        !self.sum()
    }
}

/// Folds carries back into the low 16 bits until none are left.
fn fold(mut sum: u64) -> u64 {
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum
}

/// The Internet checksum of one contiguous buffer.
pub fn checksum(bytes: &[u8]) -> u16 {
    Accumulator::new().add_bytes(bytes).checksum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to 0xddf2 (with the
        // end-around carry), so the checksum is its complement, 0x220d.
        let bytes = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(Accumulator::new().add_bytes(&bytes).sum(), 0xddf2);
        assert_eq!(checksum(&bytes), 0x220d);
    }

    #[test]
    fn odd_length_is_padded_with_zero() {
        assert_eq!(checksum(&[0x12]), !0x1200);
        assert_eq!(checksum(&[0x12, 0x34, 0x56]), !(0x1234 + 0x5600));
    }

    #[test]
    fn a_buffer_with_its_checksum_sums_to_all_ones() {
        let mut bytes = vec![0x45, 0x00, 0x00, 0x1c, 0xab, 0xcd, 0x00, 0x00];
        let sum = checksum(&bytes);
        bytes[6..8].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(Accumulator::new().add_bytes(&bytes).sum(), 0xFFFF);
    }

    /// RFC 1071 word by word, with the end-around carry after each word.
    fn word_by_word(bytes: &[u8]) -> u16 {
        let mut sum: u32 = 0;
        for pair in bytes.chunks(2) {
            let word = match *pair {
                [high, low] => u16::from_be_bytes([high, low]),
                [high] => u16::from_be_bytes([high, 0]),
                _ => 0,
            };
            sum += u32::from(word);
            if sum > 0xFFFF {
                sum = (sum & 0xFFFF) + 1;
            }
        }
        !(sum as u16)
    }

    #[test]
    fn all_ones_and_zeros_keep_their_one_s_complement_zero() {
        // A nonzero sum folds to 0xFFFF, never to 0x0000.
        assert_eq!(checksum(&[0xFF; 64]), word_by_word(&[0xFF; 64]));
        assert_eq!(checksum(&[0xFF; 64]), 0);
        assert_eq!(checksum(&[0; 64]), 0xFFFF);
    }

    #[test]
    fn buffers_longer_than_a_run_match_word_by_word() {
        // Saturated and patterned words across two run boundaries, after an
        // odd byte left pending.
        let len = 2 * 8 * RUN_BLOCKS + 13;
        let ones = vec![0xFF; len];
        let pattern: Vec<u8> = (0..len).map(|i| (i * 151 % 251) as u8).collect();
        for bytes in [&ones, &pattern] {
            assert_eq!(checksum(bytes), word_by_word(bytes));
            let mut acc = Accumulator::new();
            acc.add_bytes(&bytes[..3]).add_bytes(&bytes[3..]);
            assert_eq!(acc.checksum(), word_by_word(bytes));
        }
    }

    proptest! {
        #[test]
        fn matches_the_sum_word_by_word(bytes in proptest::collection::vec(any::<u8>(), 0..3000)) {
            prop_assert_eq!(checksum(&bytes), word_by_word(&bytes));
        }

        #[test]
        fn saturated_words_match_too(len in 0usize..5000, odd in any::<u8>()) {
            let mut bytes = vec![0xFF; len];
            bytes.push(odd);
            prop_assert_eq!(checksum(&bytes), word_by_word(&bytes));
        }

        #[test]
        fn split_anywhere_gives_the_same_sum(
            bytes in proptest::collection::vec(any::<u8>(), 0..300),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
        ) {
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            points.sort_unstable();
            let mut acc = Accumulator::new();
            let mut start = 0;
            for p in points {
                acc.add_bytes(&bytes[start..p]);
                start = p;
            }
            acc.add_bytes(&bytes[start..]);
            prop_assert_eq!(acc.checksum(), checksum(&bytes));
        }
    }
}
