//! The project's own test content: deterministic synthetic video of any size
//! and length — a drifting colour gradient, fixed fine texture, two moving
//! shapes and a frame counter — so that experiments need no third-party clip.
//!
//! Frame *n* depends only on (width, height, *n*): the same frame can be made
//! again as the reference for quality measurement.

use crate::yuv::{Frame, YuvError};

/// Makes frames of synthetic content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generator {
    width: u32,
    height: u32,
}

/// A 32-bit integer hash (for the fixed texture).
fn hash(x: u32, y: u32) -> u32 {
    let mut h = x.wrapping_mul(0x9E37_79B1) ^ y.wrapping_mul(0x85EB_CA77);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    h
}

/// Segments of the digits 0-9 on a seven-segment display: bits a..g.
const SEGMENTS: [u8; 10] = [
    0b011_1111, 0b000_0110, 0b101_1011, 0b100_1111, 0b110_0110, 0b110_1101, 0b111_1101, 0b000_0111,
    0b111_1111, 0b110_1111,
];

impl Generator {
    /// A generator of `width`×`height` frames (even, positive).
    pub fn new(width: u32, height: u32) -> Result<Generator, YuvError> {
        Frame::filled(width, height, 0, 0, 0)?;
        Ok(Generator { width, height })
    }

    /// The frame size.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Frame number `n`.
    pub fn frame(&self, n: u64) -> Frame {
        let (w, h) = (self.width as usize, self.height as usize);
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        let t = (n % 100_000) as f64;
        let Ok(mut frame) = Frame::filled(self.width, self.height, 0, 128, 128) else {
            // `new` checked the size, so this cannot happen.
            return self.fallback();
        };
        let data = frame.as_i420_mut();
        let (luma, chroma) = data.split_at_mut(w * h);
        let (u_plane, v_plane) = chroma.split_at_mut(cw * ch);
        // Gradient drifting right and down, plus fixed texture of ±6.
        for y in 0..h {
            for x in 0..w {
                let gradient = ((x as f64 + y as f64 * 0.5 + t * 1.5) % 256.0) * 0.6 + 40.0;
                let texture = (hash(x as u32, y as u32) % 13) as f64 - 6.0;
                luma[y * w + x] = (gradient + texture).clamp(16.0, 235.0) as u8;
            }
        }
        for y in 0..ch {
            for x in 0..cw {
                u_plane[y * cw + x] = (96.0 + (x as f64 * 64.0 / cw as f64)) as u8;
                v_plane[y * cw + x] =
                    (96.0 + ((y as f64 + t * 0.5) % ch as f64) * 64.0 / ch as f64) as u8;
            }
        }
        // A disc on a Lissajous path and a bar crossing the frame.
        let radius = (w.min(h) / 8).max(2) as f64;
        let cx = w as f64 / 2.0 + (w as f64 / 3.0) * (t * 0.05).sin();
        let cy = h as f64 / 2.0 + (h as f64 / 3.0) * (t * 0.07).cos();
        let bar_x = ((t * 3.0) as usize) % (w + w / 4);
        let bar_width = (w / 16).max(2);
        for y in 0..h {
            for x in 0..w {
                let (dx, dy) = (x as f64 - cx, y as f64 - cy);
                let in_disc = dx * dx + dy * dy <= radius * radius;
                let in_bar = x + w / 4 >= bar_x && x + w / 4 < bar_x + bar_width && y > h / 3;
                if in_disc {
                    luma[y * w + x] = 210;
                    u_plane[(y / 2) * cw + x / 2] = 60;
                    v_plane[(y / 2) * cw + x / 2] = 200;
                } else if in_bar {
                    luma[y * w + x] = 30;
                    u_plane[(y / 2) * cw + x / 2] = 200;
                }
            }
        }
        self.draw_counter(luma, w, h, n);
        frame
    }

    /// A black 2×2 frame, for the impossible case of a bad size.
    fn fallback(&self) -> Frame {
        Frame::from_i420(2, 2, vec![0; 6]).unwrap_or_else(|_| unreachable!("2x2 is valid"))
    }

    /// The frame number in seven-segment digits in the top-left corner.
    fn draw_counter(&self, luma: &mut [u8], w: usize, h: usize, n: u64) {
        let digit_height = (h / 10).max(8);
        let digit_width = digit_height / 2;
        let thick = (digit_height / 8).max(1);
        let text = format!("{n:05}");
        for (i, c) in text.chars().enumerate() {
            let Some(digit) = c.to_digit(10) else {
                continue;
            };
            let segments = SEGMENTS[digit as usize];
            let x0 = 4 + i * (digit_width + thick * 2);
            let y0 = 4;
            let half = digit_height / 2;
            // (segment bit, x, y, width, height)
            let rects = [
                (0, x0, y0, digit_width, thick),
                (1, x0 + digit_width - thick, y0, thick, half),
                (2, x0 + digit_width - thick, y0 + half, thick, half),
                (3, x0, y0 + digit_height - thick, digit_width, thick),
                (4, x0, y0 + half, thick, half),
                (5, x0, y0, thick, half),
                (6, x0, y0 + half - thick / 2, digit_width, thick),
            ];
            for (bit, x, y, rw, rh) in rects {
                if segments & (1 << bit) == 0 {
                    continue;
                }
                for yy in y..(y + rh).min(h) {
                    for xx in x..(x + rw).min(w) {
                        luma[yy * w + xx] = 235;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_deterministic_and_move() {
        let g = Generator::new(176, 144).unwrap();
        assert_eq!(g.frame(7), g.frame(7));
        assert_ne!(g.frame(7), g.frame(8));
        let f = g.frame(0);
        assert_eq!((f.width(), f.height()), (176, 144));
        // Not flat: the luma spans a good part of the range.
        let (min, max) = f
            .y()
            .iter()
            .fold((255u8, 0u8), |(lo, hi), &p| (lo.min(p), hi.max(p)));
        assert!(max - min > 150, "{min}..{max}");
        assert!(Generator::new(175, 144).is_err());
        // Tiny frames work too.
        assert_eq!(Generator::new(2, 2).unwrap().frame(3).as_i420().len(), 6);
    }
}
