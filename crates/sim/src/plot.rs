//! PNG charts of time series: throughput of flows, queue lengths, connection
//! counts, arrival times. Self-contained: text comes from the public domain
//! 8×8 bitmap font of `font8x8`, encoding from the `png` crate; no system
//! fonts or files are read. The same chart always gives the same bytes.
//!
//! ```no_run
//! use fairstream_sim::plot::{Chart, Series, Style};
//! let chart = Chart::new("Throughput", "time (s)", "Mbit/s")
//!     .series(Series::new("tfrc", vec![(1.0, 2.0), (2.0, 2.5)], Style::Line));
//! chart.write_png(std::path::Path::new("throughput.png")).unwrap();
//! ```

mod axis;
mod canvas;

use std::path::{Path, PathBuf};

use thiserror::Error;

use axis::{label, Axis};
use canvas::{Canvas, Rgb, GLYPH};

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Points joined by straight lines; a non-finite value breaks the line.
    Line,
    /// Each point a small square.
    Points,
    /// Horizontal to the next point's x, then vertical (counts that change in
    /// steps, such as a number of connections).
    Step,
}

/// One named set of (x, y) points.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The name in the legend.
    pub name: String,
    /// The points, in the order they are joined.
    pub points: Vec<(f64, f64)>,
    /// How they are drawn.
    pub style: Style,
}

impl Series {
    /// A series called `name`.
    pub fn new(name: &str, points: Vec<(f64, f64)>, style: Style) -> Series {
        Series {
            name: name.to_owned(),
            points,
            style,
        }
    }
}

/// A chart: title, axis labels and series.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The title, above the plot.
    pub title: String,
    /// The x axis label, below it.
    pub x_label: String,
    /// The y axis label, above the y axis.
    pub y_label: String,
    /// The series, drawn in order with the palette's colours.
    pub series: Vec<Series>,
    /// Image width in pixels (at least [`MIN_SIZE`]).
    pub width: u32,
    /// Image height in pixels (at least [`MIN_SIZE`]).
    pub height: u32,
    /// Start the y axis at zero when no value is negative (default true).
    pub y_from_zero: bool,
    /// The y axis reaches at least this value (room above a limit line
    /// drawn at the data's maximum; default none).
    pub y_at_least: Option<f64>,
}

/// Why a chart could not be written.
#[derive(Debug, Error)]
pub enum PlotError {
    /// The PNG encoder failed.
    #[error("cannot encode the PNG: {0}")]
    Encode(#[from] png::EncodingError),
    /// The file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

/// The smallest width or height a chart is drawn at.
pub const MIN_SIZE: u32 = 200;
/// The largest width or height a chart is drawn at.
pub const MAX_SIZE: u32 = 8000;

/// The Okabe-Ito palette (colour-blind safe), then darker variants.
const PALETTE: [Rgb; 10] = [
    Rgb(0, 114, 178),
    Rgb(213, 94, 0),
    Rgb(0, 158, 115),
    Rgb(204, 121, 167),
    Rgb(230, 159, 0),
    Rgb(86, 180, 233),
    Rgb(0, 0, 0),
    Rgb(240, 228, 66),
    Rgb(120, 60, 0),
    Rgb(100, 100, 100),
];

/// The colour of series `index`.
fn color(index: usize) -> Rgb {
    PALETTE[index % PALETTE.len()]
}

/// Layout: pixels around the plot area.
const MARGIN_LEFT: i64 = 72;
const MARGIN_TOP: i64 = 48;
const MARGIN_BOTTOM: i64 = 52;
const MARGIN_RIGHT: i64 = 16;
/// The legend's column, right of the plot, when there are series.
const LEGEND_WIDTH: i64 = 176;

impl Chart {
    /// An empty 900×480 chart.
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Chart {
        Chart {
            title: title.to_owned(),
            x_label: x_label.to_owned(),
            y_label: y_label.to_owned(),
            series: Vec::new(),
            width: 900,
            height: 480,
            y_from_zero: true,
            y_at_least: None,
        }
    }

    /// Adds a series.
    #[must_use]
    pub fn series(mut self, series: Series) -> Chart {
        self.series.push(series);
        self
    }

    /// The finite points of every series.
    fn finite_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }

    /// The axes that cover every finite point.
    fn axes(&self) -> (Axis, Axis) {
        let (mut x_low, mut x_high) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut y_low, mut y_high) = (f64::INFINITY, f64::NEG_INFINITY);
        for (x, y) in self.finite_points() {
            x_low = x_low.min(x);
            x_high = x_high.max(x);
            y_low = y_low.min(y);
            y_high = y_high.max(y);
        }
        if x_low > x_high {
            (x_low, x_high, y_low, y_high) = (0.0, 1.0, 0.0, 1.0);
        }
        if self.y_from_zero && y_low >= 0.0 {
            y_low = 0.0;
        }
        if let Some(top) = self.y_at_least.filter(|t| t.is_finite()) {
            y_high = y_high.max(top);
        }
        (
            Axis::covering(x_low, x_high, 8),
            Axis::covering(y_low, y_high, 6),
        )
    }

    /// Draws the chart.
    fn draw(&self) -> Canvas {
        let width = self.width.clamp(MIN_SIZE, MAX_SIZE);
        let height = self.height.clamp(MIN_SIZE, MAX_SIZE);
        let mut canvas = Canvas::new(width, height);
        let legend = if self.series.is_empty() {
            0
        } else {
            LEGEND_WIDTH
        };
        let left = MARGIN_LEFT;
        let top = MARGIN_TOP;
        let right = (i64::from(width) - MARGIN_RIGHT - legend).max(left + 10);
        let bottom = (i64::from(height) - MARGIN_BOTTOM).max(top + 10);
        let (x_axis, y_axis) = self.axes();
        let to_px = |x: f64, y: f64| -> (i64, i64) {
            let px = left as f64 + x_axis.fraction(x) * (right - left) as f64;
            let py = bottom as f64 - y_axis.fraction(y) * (bottom - top) as f64;
            // Far-off values are clamped so that integer arithmetic stays
            // small; lines to them are clipped at the plot's edge anyway.
            let clamp = |v: f64| v.clamp(-1e6, 1e6).round() as i64;
            (clamp(px), clamp(py))
        };

        // Title, centred.
        let title_width = Canvas::text_width(&self.title, 2);
        canvas.text(
            ((i64::from(width) - title_width) / 2).max(4),
            12,
            &self.title,
            2,
            Rgb::BLACK,
        );
        // The y label above the y axis; the x label centred below the plot.
        canvas.text(8, top - 16, &self.y_label, 1, Rgb::DARK);
        let x_label_width = Canvas::text_width(&self.x_label, 1);
        canvas.text(
            left + ((right - left) - x_label_width) / 2,
            i64::from(height) - 18,
            &self.x_label,
            1,
            Rgb::DARK,
        );

        // Grid and tick labels.
        for &tick in &y_axis.ticks {
            let (_, py) = to_px(x_axis.min, tick);
            canvas.fill(left, py, right + 1, py + 1, Rgb::GRID);
            let text = label(tick, y_axis.step);
            let text_width = Canvas::text_width(&text, 1);
            canvas.text(left - 6 - text_width, py - GLYPH / 2, &text, 1, Rgb::DARK);
        }
        for &tick in &x_axis.ticks {
            let (px, _) = to_px(tick, y_axis.min);
            canvas.fill(px, top, px + 1, bottom + 1, Rgb::GRID);
            canvas.fill(px, bottom, px + 1, bottom + 5, Rgb::DARK);
            let text = label(tick, x_axis.step);
            let text_width = Canvas::text_width(&text, 1);
            canvas.text(px - text_width / 2, bottom + 9, &text, 1, Rgb::DARK);
        }
        // The frame.
        canvas.fill(left, top, left + 1, bottom + 1, Rgb::DARK);
        canvas.fill(left, bottom, right + 1, bottom + 1, Rgb::DARK);

        let clip = (left + 1, top, right, bottom - 1);
        for (index, series) in self.series.iter().enumerate() {
            let color = color(index);
            let mut previous: Option<(i64, i64)> = None;
            for &(x, y) in &series.points {
                if !(x.is_finite() && y.is_finite()) {
                    previous = None;
                    continue;
                }
                let point = to_px(x, y);
                match series.style {
                    Style::Points => canvas.fill(
                        (point.0 - 2).max(clip.0),
                        (point.1 - 2).max(clip.1),
                        (point.0 + 3).min(clip.2 + 1),
                        (point.1 + 3).min(clip.3 + 1),
                        color,
                    ),
                    Style::Line => match previous {
                        Some(from) => canvas.line(from, point, 2, color, clip),
                        None => canvas.line(point, point, 2, color, clip),
                    },
                    Style::Step => {
                        if let Some(from) = previous {
                            let corner = (point.0, from.1);
                            canvas.line(from, corner, 2, color, clip);
                            canvas.line(corner, point, 2, color, clip);
                        } else {
                            canvas.line(point, point, 2, color, clip);
                        }
                    }
                }
                previous = Some(point);
            }
        }

        // The legend: a colour swatch and the name, one row each, as many
        // rows as fit.
        let legend_left = right + 16;
        let row_height = 16;
        let rows = ((bottom - top) / row_height).max(1) as usize;
        for (index, series) in self.series.iter().enumerate().take(rows) {
            let y = top + index as i64 * row_height;
            canvas.fill(legend_left, y + 2, legend_left + 14, y + 6, color(index));
            let max_chars = ((LEGEND_WIDTH - 24) / GLYPH) as usize;
            let name: String = if series.name.chars().count() > max_chars {
                let mut short: String = series.name.chars().take(max_chars - 1).collect();
                short.push('~');
                short
            } else {
                series.name.clone()
            };
            canvas.text(legend_left + 20, y, &name, 1, Rgb::BLACK);
        }
        if self.series.len() > rows {
            let y = top + rows as i64 * row_height;
            let more = format!("+{} more", self.series.len() - rows);
            canvas.text(legend_left, y.min(bottom), &more, 1, Rgb::DARK);
        }
        canvas
    }

    /// The chart as PNG bytes.
    pub fn render(&self) -> Result<Vec<u8>, PlotError> {
        let canvas = self.draw();
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, canvas.width(), canvas.height());
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(canvas.pixels())?;
        writer.finish()?;
        Ok(bytes)
    }

    /// Writes the chart as a PNG file at `path`.
    pub fn write_png(&self, path: &Path) -> Result<(), PlotError> {
        let bytes = self.render()?;
        std::fs::write(path, bytes).map_err(|source| PlotError::Write {
            path: path.to_owned(),
            source,
        })
    }
}

#[cfg(test)]
mod tests;
