//! The chart description: series, labels and ranges, its checks, and its
//! output as SVG text or PNG bytes (the drawing itself is in `draw`).

use std::path::Path;

use plotters::prelude::SVGBackend;

use crate::axis::{self, Range};
use crate::draw;
use crate::raster::{self, Raster, SUPERSAMPLE};
use crate::ReportError;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Points joined by straight lines.
    Line,
    /// Each point a small dot.
    Points,
    /// Horizontal to the next point's x, then vertical (counts that change
    /// in steps, such as a number of connections).
    Step,
    /// Each point a large outlined symbol, a different shape for each marker
    /// series: reference values such as the paper's number.
    Marker,
}

impl Style {
    /// Whether the style draws symbols that need room at the axis ends.
    pub(crate) fn is_symbol(self) -> bool {
        matches!(self, Style::Points | Style::Marker)
    }
}

/// One named set of (x, y) points, with an optional shaded band and
/// optional error bars.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub(crate) name: String,
    pub(crate) points: Vec<(f64, f64)>,
    pub(crate) style: Style,
    pub(crate) band: Vec<(f64, f64, f64)>,
    pub(crate) error_bars: Vec<(f64, f64, f64)>,
}

impl Series {
    /// A series called `name` (its legend entry).
    pub fn new(name: &str, points: Vec<(f64, f64)>, style: Style) -> Series {
        Series {
            name: name.to_owned(),
            points,
            style,
            band: Vec::new(),
            error_bars: Vec::new(),
        }
    }

    /// A shaded band (x, low, high) drawn under the series, e.g. a 95 %
    /// confidence interval; translucent, in the series' colour.
    #[must_use]
    pub fn band(mut self, band: Vec<(f64, f64, f64)>) -> Series {
        self.band = band;
        self
    }

    /// Vertical error bars (x, low, high) at points.
    #[must_use]
    pub fn error_bars(mut self, bars: Vec<(f64, f64, f64)>) -> Series {
        self.error_bars = bars;
        self
    }

    /// The name in the legend.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the series has nothing to draw (such a series is skipped).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty() && self.band.is_empty() && self.error_bars.is_empty()
    }

    /// Every x value of the points, the band and the error bars.
    pub(crate) fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        let points = self.points.iter().map(|p| p.0);
        let band = self.band.iter().map(|b| b.0);
        let bars = self.error_bars.iter().map(|b| b.0);
        points.chain(band).chain(bars)
    }

    /// Every y value of the points, the band and the error bars.
    pub(crate) fn ys(&self) -> impl Iterator<Item = f64> + '_ {
        let points = self.points.iter().map(|p| p.1);
        let band = self.band.iter().flat_map(|b| [b.1, b.2]);
        let bars = self.error_bars.iter().flat_map(|b| [b.1, b.2]);
        points.chain(band).chain(bars)
    }
}

/// A chart: title, axis labels with units, series and optional ranges.
///
/// The x axis covers the data; the y axis covers it with a little room
/// above and below, from zero with [`Chart::y_from_zero`]. A single point or
/// all-equal values get an axis around them. Series with nothing in them
/// are skipped; a chart with nothing to draw, or a NaN or infinite value
/// anywhere, is an error rather than a misleading picture.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub(crate) title: String,
    pub(crate) x_label: String,
    pub(crate) y_label: String,
    pub(crate) series: Vec<Series>,
    pub(crate) y_from_zero: bool,
    pub(crate) x_range: Option<(f64, f64)>,
    pub(crate) y_range: Option<(f64, f64)>,
    pub(crate) width: u32,
    pub(crate) height: u32,
}

impl Chart {
    /// The default width in pixels.
    pub const WIDTH: u32 = 960;
    /// The default height in pixels.
    pub const HEIGHT: u32 = 540;
    /// The smallest width or height [`Chart::size`] accepts.
    pub const MIN_SIZE: u32 = 320;
    /// The largest width or height [`Chart::size`] accepts.
    pub const MAX_SIZE: u32 = 8000;

    /// An empty [`Chart::WIDTH`] × [`Chart::HEIGHT`] chart. Labels should
    /// include their units, e.g. "time (s)".
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Chart {
        Chart {
            title: title.to_owned(),
            x_label: x_label.to_owned(),
            y_label: y_label.to_owned(),
            series: Vec::new(),
            y_from_zero: false,
            x_range: None,
            y_range: None,
            width: Chart::WIDTH,
            height: Chart::HEIGHT,
        }
    }

    /// Adds a series; it gets the next colour of the Okabe-Ito palette.
    #[must_use]
    pub fn series(mut self, series: Series) -> Chart {
        self.series.push(series);
        self
    }

    /// Makes the y axis include zero (it starts at 0 when no value is
    /// negative).
    #[must_use]
    pub fn y_from_zero(mut self) -> Chart {
        self.y_from_zero = true;
        self
    }

    /// Shows x from `lo` to `hi` exactly; data outside is clipped.
    #[must_use]
    pub fn x_range(mut self, lo: f64, hi: f64) -> Chart {
        self.x_range = Some((lo, hi));
        self
    }

    /// Shows y from `lo` to `hi` exactly; data outside is clipped.
    #[must_use]
    pub fn y_range(mut self, lo: f64, hi: f64) -> Chart {
        self.y_range = Some((lo, hi));
        self
    }

    /// Sets the image size in pixels (SVG user units), each side
    /// [`Chart::MIN_SIZE`] to [`Chart::MAX_SIZE`].
    #[must_use]
    pub fn size(mut self, width: u32, height: u32) -> Chart {
        self.width = width;
        self.height = height;
        self
    }

    /// Whether no series has anything to draw (drawing it is an error).
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(Series::is_empty)
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String, ReportError> {
        let layout = self.check()?;
        let mut svg = String::new();
        {
            let backend = SVGBackend::with_string(&mut svg, (self.width, self.height));
            draw::chart(self, &layout, backend, 1)?;
        }
        Ok(svg)
    }

    /// The chart as PNG bytes: drawn at twice the size and halved, which
    /// smooths lines and edges.
    pub fn to_png(&self) -> Result<Vec<u8>, ReportError> {
        let layout = self.check()?;
        let (width, height) = (self.width as usize, self.height as usize);
        let mut large = vec![0u8; width * height * 3 * SUPERSAMPLE * SUPERSAMPLE];
        {
            let size = (
                self.width * SUPERSAMPLE as u32,
                self.height * SUPERSAMPLE as u32,
            );
            let backend = Raster::with_buffer(&mut large, size);
            draw::chart(self, &layout, backend, SUPERSAMPLE as u32)?;
        }
        let pixels = raster::halved(&large, width, height);
        let encode = |source| ReportError::Encode {
            chart: self.title.clone(),
            source,
        };
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(encode)?;
        writer.write_image_data(&pixels).map_err(encode)?;
        writer.finish().map_err(encode)?;
        Ok(bytes)
    }

    /// Writes the chart as a PNG file at `path`.
    pub fn write_png(&self, path: &Path) -> Result<(), ReportError> {
        let bytes = self.to_png()?;
        std::fs::write(path, bytes).map_err(|e| ReportError::io("write", path, e))
    }

    /// Writes the chart as an SVG file at `path`.
    pub fn write_svg(&self, path: &Path) -> Result<(), ReportError> {
        let svg = self.to_svg()?;
        std::fs::write(path, svg).map_err(|e| ReportError::io("write", path, e))
    }

    /// Checks the data and works out the axes.
    fn check(&self) -> Result<Layout, ReportError> {
        for side in [self.width, self.height] {
            if !(Chart::MIN_SIZE..=Chart::MAX_SIZE).contains(&side) {
                return Err(ReportError::BadSize {
                    chart: self.title.clone(),
                    width: self.width,
                    height: self.height,
                });
            }
        }
        for series in &self.series {
            self.check_series(series)?;
        }
        if self.is_empty() {
            return Err(ReportError::Empty {
                chart: self.title.clone(),
            });
        }
        let drawn = || self.series.iter().filter(|s| !s.is_empty());
        let x = match self.x_range {
            Some((low, high)) => self.given_range("x", low, high)?,
            None => {
                let symbols = drawn().any(|s| s.style.is_symbol() || !s.error_bars.is_empty());
                axis::x_range(drawn().flat_map(Series::xs), symbols)
            }
        };
        let y = match self.y_range {
            Some((low, high)) => self.given_range("y", low, high)?,
            None => axis::y_range(drawn().flat_map(Series::ys), self.y_from_zero),
        };
        // Values near the largest f64 can widen to infinity.
        for (axis, range) in [("x", x), ("y", y)] {
            self.given_range(axis, range.low, range.high)?;
        }
        Ok(Layout { x, y })
    }

    fn check_series(&self, series: &Series) -> Result<(), ReportError> {
        let non_finite = |part, index, value| ReportError::NonFinite {
            chart: self.title.clone(),
            series: series.name.clone(),
            part,
            index,
            value,
        };
        for (index, &(x, y)) in series.points.iter().enumerate() {
            if let Some(value) = [x, y].into_iter().find(|v| !v.is_finite()) {
                return Err(non_finite("point", index, value));
            }
        }
        for (part, rows) in [
            ("band row", &series.band),
            ("error bar", &series.error_bars),
        ] {
            for (index, &(x, low, high)) in rows.iter().enumerate() {
                if let Some(value) = [x, low, high].into_iter().find(|v| !v.is_finite()) {
                    return Err(non_finite(part, index, value));
                }
                if low > high {
                    return Err(ReportError::Inverted {
                        chart: self.title.clone(),
                        series: series.name.clone(),
                        part,
                        index,
                        low,
                        high,
                    });
                }
            }
        }
        Ok(())
    }

    fn given_range(&self, axis: &'static str, low: f64, high: f64) -> Result<Range, ReportError> {
        // plotters looks for tick steps among powers of ten up to ten
        // times the span: beyond about 1e307 the step overflows to
        // infinity and that search never ends.
        if low.is_finite() && high.is_finite() && low < high && high - low <= MAX_SPAN {
            Ok(Range { low, high })
        } else {
            Err(ReportError::BadRange {
                chart: self.title.clone(),
                axis,
                low,
                high,
            })
        }
    }
}

/// The widest axis a chart draws (see `Chart::given_range`).
const MAX_SPAN: f64 = 1e300;

/// What the checks worked out for drawing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Layout {
    /// The x axis.
    pub(crate) x: Range,
    /// The y axis.
    pub(crate) y: Range,
}

#[cfg(test)]
mod tests;
