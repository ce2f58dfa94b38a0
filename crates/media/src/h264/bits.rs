//! Reading H.264 syntax elements from a NAL unit's payload: removing the
//! emulation prevention bytes (ITU-T H.264 §7.4.1) and reading fixed-width
//! and Exp-Golomb codes (§9.1).

/// The raw byte sequence payload of a NAL unit: the bytes after its header
/// with every `emulation_prevention_three_byte` (the 0x03 of 0x000003)
/// removed. At most `limit` bytes are produced (slice headers and parameter
/// sets are short; there is no need to unescape a whole slice).
pub(crate) fn rbsp(payload: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len().min(limit));
    let mut zeros = 0;
    for &byte in payload {
        if out.len() >= limit {
            break;
        }
        if zeros >= 2 && byte == 3 {
            zeros = 0;
            continue;
        }
        zeros = if byte == 0 { zeros + 1 } else { 0 };
        out.push(byte);
    }
    out
}

/// The syntax element could not be read: the data ended, or an Exp-Golomb
/// code was longer than 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BitsExhausted;

/// A big-endian bit reader over an RBSP.
#[derive(Clone, Debug)]
pub(crate) struct BitReader<'a> {
    data: &'a [u8],
    position: usize,
}

impl<'a> BitReader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> BitReader<'a> {
        BitReader { data, position: 0 }
    }

    /// u(1).
    pub(crate) fn bit(&mut self) -> Result<bool, BitsExhausted> {
        let byte = self.data.get(self.position / 8).ok_or(BitsExhausted)?;
        let bit = (byte >> (7 - self.position % 8)) & 1;
        self.position += 1;
        Ok(bit == 1)
    }

    /// u(n), n ≤ 32.
    pub(crate) fn bits(&mut self, n: u32) -> Result<u32, BitsExhausted> {
        if n > 32 {
            return Err(BitsExhausted);
        }
        let mut value = 0u32;
        for _ in 0..n {
            value = (value << 1) | u32::from(self.bit()?);
        }
        Ok(value)
    }

    /// ue(v): unsigned Exp-Golomb (§9.1), up to 32 leading zeros' worth.
    pub(crate) fn ue(&mut self) -> Result<u32, BitsExhausted> {
        let mut leading_zeros = 0;
        while !self.bit()? {
            leading_zeros += 1;
            if leading_zeros > 31 {
                return Err(BitsExhausted);
            }
        }
        let suffix = self.bits(leading_zeros)?;
        // 2^n − 1 + suffix, in u64 so that n = 31 cannot overflow.
        let value = (1u64 << leading_zeros) - 1 + u64::from(suffix);
        u32::try_from(value).map_err(|_| BitsExhausted)
    }

    /// se(v): signed Exp-Golomb (§9.1.1).
    pub(crate) fn se(&mut self) -> Result<i32, BitsExhausted> {
        let k = i64::from(self.ue()?);
        let value = if k % 2 == 1 { (k + 1) / 2 } else { -(k / 2) };
        i32::try_from(value).map_err(|_| BitsExhausted)
    }

    /// Skips `n` bits.
    pub(crate) fn skip(&mut self, n: usize) -> Result<(), BitsExhausted> {
        let end = self.position.checked_add(n).ok_or(BitsExhausted)?;
        if end > self.data.len() * 8 {
            return Err(BitsExhausted);
        }
        self.position = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_golomb_codes_of_the_standard() {
        // §9.1 Table 9-2: 1 → 0, 010 → 1, 011 → 2, 00100 → 3, 00111 → 6.
        // Bits: 1 010 011 00100 00111 + padding.
        let data = [0b1010_0110, 0b0100_0011, 0b1000_0000];
        let mut reader = BitReader::new(&data);
        let values: Vec<u32> = (0..5).map(|_| reader.ue().unwrap()).collect();
        assert_eq!(values, [0, 1, 2, 3, 6]);
        // se: codeNum 1 → 1, 2 → −1, 3 → 2.
        let mut reader = BitReader::new(&data[..]);
        reader.ue().unwrap();
        assert_eq!(reader.se().unwrap(), 1);
        assert_eq!(reader.se().unwrap(), -1);
        assert_eq!(reader.se().unwrap(), 2);
    }

    #[test]
    fn running_out_of_bits_is_an_error_not_a_panic() {
        let mut reader = BitReader::new(&[0, 0, 0, 0, 0]);
        assert_eq!(reader.ue(), Err(BitsExhausted));
        let mut reader = BitReader::new(&[]);
        assert_eq!(reader.bit(), Err(BitsExhausted));
        assert_eq!(BitReader::new(&[0xff]).bits(33), Err(BitsExhausted));
        assert_eq!(BitReader::new(&[0xff]).skip(9), Err(BitsExhausted));
    }

    #[test]
    fn emulation_prevention_bytes_are_removed() {
        assert_eq!(
            rbsp(&[0, 0, 3, 1, 0, 0, 3, 0, 7], 100),
            [0, 0, 1, 0, 0, 0, 7]
        );
        assert_eq!(rbsp(&[0, 0, 3, 1], 2), [0, 0]);
        assert_eq!(rbsp(&[0, 3, 0, 0, 3], 100), [0, 3, 0, 0]);
    }
}
