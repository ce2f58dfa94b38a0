//! Charts and report pages for fairstream's results.
//!
//! - [`Chart`]: line, point, step and marker series with optional
//!   confidence bands and error bars, drawn by [`plotters`] as SVG or PNG.
//!   Text in PNGs is DejaVu Sans, embedded by the `dejavu` crate and
//!   rasterised by `ab_glyph`, so no system font is read; the PNG is encoded
//!   by the `png` crate. The same chart always gives the same bytes.
//! - [`Page`]: a report as one self-contained HTML file (inline CSS, charts as
//!   inline SVG, images as `data:` URIs, no scripts, no external references,
//!   so it opens offline) and the same content as Markdown with the charts as
//!   PNG files beside it.
//!
//! ```no_run
//! use fairstream_report::{Chart, Page, Series, Style, Table};
//! # fn main() -> Result<(), fairstream_report::ReportError> {
//! let chart = Chart::new("Throughput", "time (s)", "throughput (Mbit/s)")
//!     .series(
//!         Series::new("tfrc", vec![(1.0, 2.0), (2.0, 2.5)], Style::Line)
//!             .band(vec![(1.0, 1.8, 2.2), (2.0, 2.3, 2.7)]),
//!     )
//!     .series(Series::new("paper", vec![(2.0, 2.4)], Style::Marker))
//!     .y_from_zero();
//! let mut page = Page::new("A run");
//! page.paragraph("Made by `fairstream simulate`.")
//!     .table(Table {
//!         header: vec!["flow".into(), "Mbit/s".into()],
//!         rows: vec![vec!["tfrc".into(), "2.25".into()]],
//!     })
//!     .chart("throughput", chart);
//! page.write(std::path::Path::new("out"), "index")?; // out/index.html, index.md, throughput.png
//! # Ok(())
//! # }
//! ```
//!
//! Dependencies (all MIT, Apache-2.0 or both; the DejaVu fonts are under the
//! Bitstream Vera licence, a permissive font licence like the OFL, with
//! DejaVu's changes in the public domain): `plotters` 0.3 without its default
//! features (only `svg_backend`, `bitmap_backend` and `ab_glyph`: no
//! font-kit, no system fonts, no `image`) and `plotters-backend`; `ab_glyph`
//! (with `ttf-parser`) for text; `dejavu` 2.37 for the font; `png` 0.18 and
//! `base64ct` 1.8, both already in the workspace. A clean debug build of this
//! crate and everything it needs takes about 20 s on two idle cores (35 s of
//! CPU time).

mod axis;
mod chart;
mod clip;
mod draw;
mod font;
mod html;
mod markdown;
mod page;
mod raster;

use std::path::PathBuf;

use thiserror::Error;

pub use chart::{Chart, Series, Style};
pub use page::{Page, Table};

/// Why a chart or a page could not be made.
#[derive(Debug, Error)]
pub enum ReportError {
    /// The chart has no series with anything to draw.
    #[error("the chart \"{chart}\" has nothing to draw: every series is empty")]
    Empty {
        /// The chart's title.
        chart: String,
    },
    /// A value is NaN or infinite.
    #[error(
        "the chart \"{chart}\" cannot be drawn: series \"{series}\" has a non-finite value \
         ({value}) in its {part} number {index}"
    )]
    NonFinite {
        /// The chart's title.
        chart: String,
        /// The series' name.
        series: String,
        /// Which data: "point", "band row" or "error bar".
        part: &'static str,
        /// The index of that point, band row or error bar.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A band row or error bar whose low end is above its high end.
    #[error(
        "the chart \"{chart}\" cannot be drawn: series \"{series}\" has a {part} whose low \
         end {low} is above its high end {high} (number {index})"
    )]
    Inverted {
        /// The chart's title.
        chart: String,
        /// The series' name.
        series: String,
        /// "band row" or "error bar".
        part: &'static str,
        /// The index of that band row or error bar.
        index: usize,
        /// Its low end.
        low: f64,
        /// Its high end.
        high: f64,
    },
    /// An axis range set by `x_range`/`y_range` that is empty or not
    /// finite, or any axis wider than 1e300 (data that far apart cannot be
    /// ticked).
    #[error("the chart \"{chart}\" has an unusable {axis} range: {low} to {high}")]
    BadRange {
        /// The chart's title.
        chart: String,
        /// "x" or "y".
        axis: &'static str,
        /// The range's low end.
        low: f64,
        /// The range's high end.
        high: f64,
    },
    /// A chart's size outside [`Chart::MIN_SIZE`]..=[`Chart::MAX_SIZE`].
    #[error(
        "the chart \"{chart}\" cannot be {width}×{height} pixels: each side must be {} to {}",
        Chart::MIN_SIZE,
        Chart::MAX_SIZE
    )]
    BadSize {
        /// The chart's title.
        chart: String,
        /// The width asked for.
        width: u32,
        /// The height asked for.
        height: u32,
    },
    /// A chart name or image file name that is not a plain relative path.
    #[error(
        "\"{0}\" cannot name a file beside the page: use letters, digits, `.`, `_`, `-` and `/` \
         between non-empty parts, none of them `.` or `..`"
    )]
    BadName(String),
    /// Two charts of a page with the same name (they would share a file).
    #[error("the page has two charts named \"{0}\"")]
    DuplicateName(String),
    /// Plotters failed while drawing.
    #[error("cannot draw the chart \"{chart}\": {message}")]
    Backend {
        /// The chart's title.
        chart: String,
        /// Plotters' message.
        message: String,
    },
    /// The PNG encoder failed.
    #[error("cannot encode the chart \"{chart}\" as PNG: {source}")]
    Encode {
        /// The chart's title.
        chart: String,
        /// The encoder's error.
        #[source]
        source: png::EncodingError,
    },
    /// A file could not be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// "read", "write" or "create".
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

impl ReportError {
    /// An I/O error on `path`.
    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        ReportError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    }
}
