//! ITU-T G.711 µ-law: 16-bit linear PCM to 8-bit code words and back.
//!
//! G.711 (11/88) defines µ-law on 14-bit magnitudes in eight segments
//! of sixteen quantisation intervals each, the interval width doubling
//! from segment to segment, and sends each 8-bit character with its bits
//! inverted (so that +0 is 0xFF). This is the classic
//! formulation (Sun Microsystems' public-domain `g711.c`, used by most
//! implementations) on 16-bit samples: add the bias 0x84 (33 at 14 bits)
//! to the magnitude, clip at 32635, take the segment from the highest set
//! bit and the four bits after it as the interval; decoding returns the
//! interval's middle. A code word decodes to at most half an interval
//! (4·2^segment on the 16-bit scale) from any sample within the clip.

/// The bias added to a magnitude before its segment is found (G.711's 33
/// at 14 bits, times 4).
const BIAS: i32 = 0x84;
/// The largest magnitude encoded without clipping (8159 at 14 bits).
pub const CLIP: i32 = 32_635;

/// G.711 µ-law code word of one 16-bit sample.
pub fn encode(sample: i16) -> u8 {
    let sample = i32::from(sample);
    let (sign, magnitude) = if sample < 0 {
        (0x80u8, -sample)
    } else {
        (0x00u8, sample)
    };
    let biased = magnitude.min(CLIP) + BIAS;
    // The segment: biased lies in [2^(segment+7), 2^(segment+8)).
    let segment = (31 - biased.leading_zeros() as i32 - 7).clamp(0, 7);
    let interval = ((biased >> (segment + 3)) & 0x0F) as u8;
    !(sign | ((segment as u8) << 4) | interval)
}

/// The 16-bit sample a G.711 µ-law code word stands for.
pub fn decode(code: u8) -> i16 {
    let code = !code;
    let segment = i32::from((code >> 4) & 0x07);
    let interval = i32::from(code & 0x0F);
    let magnitude = (((interval << 3) + BIAS) << segment) - BIAS;
    // At most (15·8 + 132)·128 − 132 = 32124: always an i16.
    let value = if code & 0x80 != 0 {
        -magnitude
    } else {
        magnitude
    };
    i16::try_from(value).unwrap_or(if value < 0 { i16::MIN } else { i16::MAX })
}

/// The width of the quantisation interval `code` lies in, on the 16-bit
/// scale: 8·2^segment.
pub fn interval_width(code: u8) -> i32 {
    8 << ((!code >> 4) & 0x07)
}

/// Encodes `samples` into `out` (one code word per sample).
pub fn encode_into(samples: &[i16], out: &mut Vec<u8>) {
    out.extend(samples.iter().map(|s| encode(*s)));
}

/// Decodes `codes` into `out`.
pub fn decode_into(codes: &[u8], out: &mut Vec<i16>) {
    out.extend(codes.iter().map(|c| decode(*c)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_code_words() {
        // Zero is 0xFF (and −0 is 0x7F); the largest magnitudes clip to
        // the last interval of segment 7: 0x80 and 0x00.
        assert_eq!(encode(0), 0xFF);
        assert_eq!(encode(-1), 0x7F);
        assert_eq!(encode(i16::MAX), 0x80);
        assert_eq!(encode(i16::MIN), 0x00);
        assert_eq!(decode(0xFF), 0);
        assert_eq!(decode(0x7F), 0);
        assert_eq!(decode(0x80), 32_124);
        assert_eq!(decode(0x00), -32_124);
        // Segment boundaries: 124 + 132 = 256 starts segment 1 (0xEF
        // inverted is 0x10): decoded at its middle, 132.
        assert_eq!(encode(123), 0xF0);
        assert_eq!(encode(124), 0xEF);
        assert_eq!(decode(0xEF), 132);
        // Segment 0's intervals are 8 wide: 1000 is in segment 3.
        assert_eq!(decode(encode(8)), 8);
        assert_eq!(decode(encode(1000)), 988);
    }

    #[test]
    fn every_code_word_decodes_and_encodes_back_to_itself() {
        for code in 0..=255u8 {
            // −0 (0x7F) encodes as +0 (0xFF).
            let expected = if code == 0x7F { 0xFF } else { code };
            assert_eq!(encode(decode(code)), expected, "{code:#04x}");
        }
    }

    proptest! {
        #[test]
        fn decoding_is_within_half_an_interval(sample in -CLIP..=CLIP) {
            let sample = sample as i16;
            let code = encode(sample);
            let error = (i32::from(decode(code)) - i32::from(sample)).abs();
            prop_assert!(error <= interval_width(code) / 2, "{sample}: {error}");
        }

        #[test]
        fn encoding_keeps_the_order(a in any::<i16>(), b in any::<i16>()) {
            let (low, high) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(decode(encode(low)) <= decode(encode(high)));
        }
    }
}
