//! The PNG drawing backend: plotters' `BitMapBackend` with our own text
//! drawing. Plotters' `ab_glyph` text drops each glyph's left side bearing,
//! so that "1 s" reads "1  s" and narrow letters crowd their right
//! neighbours; here each glyph is placed at its caret position plus its own
//! bounds, with kerning, as a text renderer does.

use ab_glyph::{point, Font, FontRef, ScaleFont};
use plotters::backend::{BitMapBackend, DrawingBackend};
use plotters::style::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontStyle,
};

use crate::font;

/// A bitmap backend whose text is drawn by [`draw_text`](DrawingBackend::draw_text) below.
pub(crate) struct Raster<'a> {
    inner: BitMapBackend<'a>,
}

impl<'a> Raster<'a> {
    /// Draws into `pixels` (RGB, 3 bytes a pixel, row-major) of `size`.
    pub(crate) fn with_buffer(pixels: &'a mut [u8], size: (u32, u32)) -> Raster<'a> {
        Raster {
            inner: BitMapBackend::with_buffer(pixels, size),
        }
    }
}

type Error = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

impl DrawingBackend for Raster<'_> {
    type ErrorType = Error;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vertices: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.fill_polygon(vertices, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (width, height): (u32, u32),
        source: &[u8],
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.blit_bitmap(pos, (width, height), source)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Error>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let bold = matches!(style.style(), FontStyle::Bold);
        let Some(face) = font::face(bold) else {
            // Registration already failed for the chart; nothing to draw.
            return Ok(());
        };
        let glyphs = layout(face, style.size() as f32, text);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Center => -glyphs.width / 2,
            HPos::Right => -glyphs.width,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -glyphs.height / 2,
            VPos::Bottom => -glyphs.height,
        };
        let transform = style.transform();
        for (x, y, coverage) in glyphs.pixels {
            let (tx, ty) = transform.transform(x + dx, y + dy);
            let shade = BackendColor {
                alpha: color.alpha * f64::from(coverage.min(1.0)),
                rgb: color.rgb,
            };
            self.inner.draw_pixel((pos.0 + tx, pos.1 + ty), shade)?;
        }
        Ok(())
    }
}

/// PNGs are drawn at this many times their size in each direction, then
/// reduced by [`halved`].
pub(crate) const SUPERSAMPLE: usize = 2;

/// An RGB image of `width` × `height` from one [`SUPERSAMPLE`] times as
/// wide and high: each pixel the rounded mean of its 2 × 2 block.
pub(crate) fn halved(large: &[u8], width: usize, height: usize) -> Vec<u8> {
    let large_width = width * SUPERSAMPLE;
    let mut pixels = vec![0u8; width * height * 3];
    for (index, pixel) in pixels.chunks_exact_mut(3).enumerate() {
        let (x, y) = (index % width, index / width);
        for (channel, value) in pixel.iter_mut().enumerate() {
            let mut sum = 0u32;
            for dy in 0..SUPERSAMPLE {
                for dx in 0..SUPERSAMPLE {
                    let at = ((y * SUPERSAMPLE + dy) * large_width + x * SUPERSAMPLE + dx) * 3;
                    sum += u32::from(large.get(at + channel).copied().unwrap_or(255));
                }
            }
            let count = (SUPERSAMPLE * SUPERSAMPLE) as u32;
            *value = u8::try_from((sum + count / 2) / count).unwrap_or(u8::MAX);
        }
    }
    pixels
}

/// A line of text laid out: its box and its pixels with their coverage,
/// relative to the box's top-left corner.
struct Glyphs {
    width: i32,
    height: i32,
    pixels: Vec<(i32, i32, f32)>,
}

/// Lays out `text` on one line at `size` pixels (ascent to descent).
fn layout(face: &FontRef<'static>, size: f32, text: &str) -> Glyphs {
    let scaled = face.as_scaled(size);
    let ascent = scaled.ascent();
    let mut caret = 0.0f32;
    let mut previous = None;
    let mut pixels = Vec::new();
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(previous) = previous {
            caret += scaled.kern(previous, id);
        }
        previous = Some(id);
        let glyph = id.with_scale_and_position(size, point(caret, ascent));
        if let Some(outline) = scaled.outline_glyph(glyph) {
            let bounds = outline.px_bounds();
            let (left, top) = (bounds.min.x as i32, bounds.min.y as i32);
            outline.draw(|x, y, coverage| {
                if coverage > 0.0 {
                    pixels.push((left + x as i32, top + y as i32, coverage));
                }
            });
        }
        caret += scaled.h_advance(id);
    }
    Glyphs {
        width: caret.ceil() as i32,
        height: (ascent - scaled.descent()).ceil() as i32,
        pixels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_averages_each_block() {
        // A 2 × 1 image from a 4 × 2 one: a white and black block, then a
        // block of two greys.
        #[rustfmt::skip]
        let large = [
            255, 255, 255,  0, 0, 0,   10, 10, 10,  20, 20, 20,
            255, 255, 255,  0, 0, 0,   30, 30, 30,  40, 40, 40,
        ];
        assert_eq!(halved(&large, 2, 1), vec![128, 128, 128, 25, 25, 25]);
    }

    #[test]
    fn glyphs_keep_their_side_bearings() {
        let face = font::face(false).expect("the embedded font parses");
        // "1" has a wide left side bearing in DejaVu Sans: its ink starts
        // well right of the caret.
        let one = layout(face, 60.0, "1");
        let leftmost = one.pixels.iter().map(|p| p.0).min().unwrap();
        assert!(leftmost >= 4, "the 1 starts at {leftmost}");
        assert!(one.width > leftmost);
        let empty = layout(face, 20.0, "");
        assert_eq!(empty.width, 0);
        assert!(empty.pixels.is_empty());
        assert_eq!(layout(face, 20.0, "x").height, empty.height);
    }
}
