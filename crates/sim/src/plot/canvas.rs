//! An RGB pixel buffer with the few drawing operations charts need: filled
//! rectangles, thick lines, small squares for points, and text in the public
//! domain 8×8 bitmap font of the `font8x8` crate (no system fonts).

use font8x8::legacy::BASIC_LEGACY;

/// A colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rgb(pub(crate) u8, pub(crate) u8, pub(crate) u8);

impl Rgb {
    /// White.
    #[cfg(test)]
    pub(crate) const WHITE: Rgb = Rgb(255, 255, 255);
    /// Black.
    pub(crate) const BLACK: Rgb = Rgb(0, 0, 0);
    /// The grey of grid lines.
    pub(crate) const GRID: Rgb = Rgb(225, 225, 225);
    /// The grey of axis labels.
    pub(crate) const DARK: Rgb = Rgb(60, 60, 60);
}

/// Pixels of one glyph (the font is 8×8).
pub(crate) const GLYPH: i64 = 8;

/// An RGB image, row-major, 3 bytes a pixel.
#[derive(Clone, Debug)]
pub(crate) struct Canvas {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl Canvas {
    /// A white canvas.
    pub(crate) fn new(width: u32, height: u32) -> Canvas {
        let len = width as usize * height as usize * 3;
        Canvas {
            width,
            height,
            pixels: vec![255; len],
        }
    }

    pub(crate) fn width(&self) -> u32 {
        self.width
    }

    pub(crate) fn height(&self) -> u32 {
        self.height
    }

    /// The raw RGB bytes.
    pub(crate) fn pixels(&self) -> &[u8] {
        &self.pixels
    }

    /// The colour at (x, y), if inside.
    #[cfg(test)]
    pub(crate) fn get(&self, x: i64, y: i64) -> Option<Rgb> {
        let index = self.index(x, y)?;
        Some(Rgb(
            self.pixels[index],
            self.pixels[index + 1],
            self.pixels[index + 2],
        ))
    }

    fn index(&self, x: i64, y: i64) -> Option<usize> {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return None;
        }
        Some((y as usize * self.width as usize + x as usize) * 3)
    }

    /// Paints one pixel; outside the canvas nothing happens.
    pub(crate) fn set(&mut self, x: i64, y: i64, color: Rgb) {
        if let Some(index) = self.index(x, y) {
            if let Some(pixel) = self.pixels.get_mut(index..index + 3) {
                pixel.copy_from_slice(&[color.0, color.1, color.2]);
            }
        }
    }

    /// Fills the rectangle [x0, x1) × [y0, y1), clipped to the canvas.
    pub(crate) fn fill(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, color: Rgb) {
        let (x0, x1) = (x0.max(0), x1.min(i64::from(self.width)));
        let (y0, y1) = (y0.max(0), y1.min(i64::from(self.height)));
        for y in y0..y1 {
            for x in x0..x1 {
                self.set(x, y, color);
            }
        }
    }

    /// A line `thickness` pixels wide from (x0, y0) to (x1, y1) (Bresenham,
    /// with a square pen), clipped to `clip` = (left, top, right, bottom),
    /// inclusive.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn line(
        &mut self,
        (x0, y0): (i64, i64),
        (x1, y1): (i64, i64),
        thickness: i64,
        color: Rgb,
        clip: (i64, i64, i64, i64),
    ) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut error) = (x0, y0, dx + dy);
        // A line's length is bounded by the canvas after clipping by the
        // caller; the step limit makes a wild coordinate harmless anyway.
        let limit = 4 * (i64::from(self.width) + i64::from(self.height)) + 16;
        for _ in 0..limit {
            self.pen(x, y, thickness, color, clip);
            if x == x1 && y == y1 {
                break;
            }
            let doubled = 2 * error;
            if doubled >= dy {
                error += dy;
                x += sx;
            }
            if doubled <= dx {
                error += dx;
                y += sy;
            }
        }
    }

    fn pen(&mut self, x: i64, y: i64, thickness: i64, color: Rgb, clip: (i64, i64, i64, i64)) {
        let (left, top, right, bottom) = clip;
        let half = thickness / 2;
        for oy in 0..thickness {
            for ox in 0..thickness {
                let (px, py) = (x + ox - half, y + oy - half);
                if px >= left && px <= right && py >= top && py <= bottom {
                    self.set(px, py, color);
                }
            }
        }
    }

    /// Text with its top-left corner at (x, y), each glyph `scale` times
    /// its 8×8 size. Non-ASCII characters are drawn as `?`.
    pub(crate) fn text(&mut self, x: i64, y: i64, text: &str, scale: i64, color: Rgb) {
        for (i, c) in text.chars().enumerate() {
            let code = if c.is_ascii() {
                c as usize
            } else {
                '?' as usize
            };
            let glyph = BASIC_LEGACY.get(code).copied().unwrap_or([0; 8]);
            let origin = x + i as i64 * GLYPH * scale;
            for (row, bits) in glyph.iter().enumerate() {
                for column in 0..8 {
                    if bits & (1 << column) != 0 {
                        let px = origin + column * scale;
                        let py = y + row as i64 * scale;
                        self.fill(px, py, px + scale, py + scale, color);
                    }
                }
            }
        }
    }

    /// The width in pixels of `text` at `scale`.
    pub(crate) fn text_width(text: &str, scale: i64) -> i64 {
        text.chars().count() as i64 * GLYPH * scale
    }
}
