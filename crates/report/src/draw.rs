//! Drawing a checked [`Chart`] on a plotters backend (SVG or bitmap): the
//! title, the axes with a light grid, the series in three passes (bands
//! under everything, then lines, points and error bars, then reference
//! markers on top), and the legend in a column right of the plot, where it
//! hides no data.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axis;
use crate::chart::{Chart, Layout, Series, Style};
use crate::clip::Window;
use crate::font::{self, FAMILY};
use crate::ReportError;

/// The Okabe-Ito palette (colour-blind safe; Okabe & Ito 2008), yellow
/// last as it is faint on white, then two darker extras.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
    RGBColor(120, 60, 0),
    RGBColor(100, 100, 100),
];
/// Axis lines, tick labels and axis descriptions.
const DARK: RGBColor = RGBColor(60, 60, 60);
/// Grid lines.
const GRID: RGBColor = RGBColor(225, 225, 225);
/// The opacity of a confidence band.
const BAND_OPACITY: f64 = 0.22;

/// The legend never takes more than this share of the width.
const LEGEND_MAX_SHARE: f64 = 0.32;

/// Sizes in pixels at a scale: 1 for SVG; PNGs are drawn at 2 and halved,
/// which smooths their lines (plotters' bitmap lines are not antialiased).
#[derive(Clone, Copy, Debug)]
struct Sizes {
    /// Text sizes (plotters' font size; an SVG shows size / 1.24).
    title: f64,
    smallest_title: f64,
    description: f64,
    tick: f64,
    legend: f64,
    /// Line widths and symbol sizes.
    line: u32,
    thin: u32,
    point: i32,
    marker: i32,
    cap: i32,
    tick_mark: i32,
    /// The legend column: a swatch, a gap, the name; rows this tall.
    swatch: i32,
    legend_gap: i32,
    legend_pad: i32,
    legend_row: i32,
    /// Space around the plot inside its area.
    margin: i32,
    /// One pixel at the final size.
    unit: i32,
}

impl Sizes {
    fn at(scale: u32) -> Sizes {
        let s = i32::try_from(scale).unwrap_or(1);
        let f = f64::from(scale);
        Sizes {
            title: 24.0 * f,
            smallest_title: 15.0 * f,
            description: 18.0 * f,
            tick: 16.0 * f,
            legend: 16.0 * f,
            line: 2 * scale,
            thin: scale,
            point: 3 * s,
            marker: 9 * s,
            cap: 5 * s,
            tick_mark: 5 * s,
            swatch: 30 * s,
            legend_gap: 8 * s,
            legend_pad: 14 * s,
            legend_row: 26 * s,
            margin: 12 * s,
            unit: s,
        }
    }
}

/// The colour of series `index`.
fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// A text style of the chart's font.
fn text(size: f64, color: &RGBColor) -> TextStyle<'static> {
    FontDesc::new(FontFamily::Name(FAMILY), size, FontStyle::Normal).color(color)
}

/// Draws `chart` on `backend`, whose size is the chart's times `scale`;
/// `layout` came from the chart's checks.
pub(crate) fn chart<DB: DrawingBackend>(
    chart: &Chart,
    layout: &Layout,
    backend: DB,
    scale: u32,
) -> Result<(), ReportError> {
    let sizes = Sizes::at(scale);
    if !font::ensure_registered() {
        return Err(ReportError::Backend {
            chart: chart.title.clone(),
            message: "the embedded DejaVu Sans font could not be loaded".to_owned(),
        });
    }
    let failed = |error: DrawingAreaErrorKind<DB::ErrorType>| ReportError::Backend {
        chart: chart.title.clone(),
        message: error.to_string(),
    };
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(failed)?;
    let (width, _) = root.dim_in_pixel();
    let title = fitted_title(&root, &chart.title, width, &sizes).map_err(failed)?;
    let body = root
        .margin(6 * sizes.unit, 0, 0, 0)
        .titled(&title.0, text(title.1, &BLACK))
        .map_err(failed)?;

    let shown: Vec<(usize, &Series)> = chart
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .collect();
    let legend = legend_entries(&root, &shown, width, &sizes).map_err(failed)?;
    let (plot_area, legend_area) = body.split_horizontally(width as i32 - legend.width);

    let format_x = axis::formatter(layout.x);
    let format_y = axis::formatter(layout.y);
    let tick_style = text(sizes.tick, &DARK);
    let y_labels_width = [
        layout.y.low,
        layout.y.high,
        layout.y.low + layout.y.span() / 3.0,
    ]
    .iter()
    .map(|v| root.estimate_text_size(&format_y(v), &tick_style))
    .try_fold(0, |widest, size| size.map(|(w, _)| widest.max(w)))
    .map_err(failed)?;
    let mut plot = ChartBuilder::on(&plot_area)
        .margin(sizes.margin)
        .x_label_area_size(sizes.tick as i32 + sizes.description as i32 + 24 * sizes.unit)
        .y_label_area_size(y_labels_width as i32 + sizes.description as i32 + 22 * sizes.unit)
        .build_cartesian_2d(layout.x.low..layout.x.high, layout.y.low..layout.y.high)
        .map_err(failed)?;
    plot.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .x_labels(9)
        .y_labels(7)
        .x_label_formatter(&format_x)
        .y_label_formatter(&format_y)
        .label_style(tick_style.clone())
        .axis_desc_style(text(sizes.description, &DARK))
        .set_all_tick_mark_size(sizes.tick_mark)
        .axis_style(DARK.stroke_width(sizes.thin))
        .bold_line_style(GRID.stroke_width(sizes.thin))
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(failed)?;

    let window = Window {
        x: layout.x,
        y: layout.y,
    };
    // Pass 1: bands under everything.
    for &(index, series) in &shown {
        let band = band_polygon(series, &window);
        if band.len() >= 3 {
            let fill = color(index).mix(BAND_OPACITY).filled();
            plot.draw_series(std::iter::once(Polygon::new(band, fill)))
                .map_err(failed)?;
        }
    }
    // Pass 2: lines, steps, points and error bars.
    for &(index, series) in &shown {
        let stroke = color(index).stroke_width(sizes.line);
        for &(x, low, high) in &series.error_bars {
            if let Some((a, b)) = window.segment((x, low), (x, high)) {
                plot.draw_series(std::iter::once(PathElement::new(vec![a, b], stroke)))
                    .map_err(failed)?;
                for (end, value) in [(a, low), (b, high)] {
                    if end.1 == value {
                        let (px, py) = plot.backend_coord(&end);
                        let cap = vec![(px - sizes.cap, py), (px + sizes.cap, py)];
                        root.draw(&PathElement::new(cap, stroke)).map_err(failed)?;
                    }
                }
            }
        }
        match series.style {
            Style::Line | Style::Step => {
                let points = if series.style == Style::Step {
                    steps(&series.points)
                } else {
                    series.points.clone()
                };
                for piece in window.polyline(&points) {
                    plot.draw_series(std::iter::once(PathElement::new(piece, stroke)))
                        .map_err(failed)?;
                }
                if let [only] = series.points[..] {
                    if window.contains(only) {
                        let dot = Circle::new(only, sizes.point, color(index).filled());
                        plot.draw_series(std::iter::once(dot)).map_err(failed)?;
                    }
                }
            }
            Style::Points => {
                let fill = color(index).filled();
                let dots = series
                    .points
                    .iter()
                    .filter(|p| window.contains(**p))
                    .map(|&p| Circle::new(p, sizes.point, fill));
                plot.draw_series(dots).map_err(failed)?;
            }
            Style::Marker => {}
        }
    }
    // Pass 3: reference markers on top, a shape per marker series.
    let markers = shown.iter().filter(|(_, s)| s.style == Style::Marker);
    for (shape, &(index, series)) in markers.enumerate() {
        for &point in series.points.iter().filter(|p| window.contains(**p)) {
            let center = plot.backend_coord(&point);
            draw_marker(&root, shape, center, sizes.marker, color(index), &sizes)
                .map_err(failed)?;
        }
    }

    draw_legend(&legend_area, &legend, &shown, &sizes).map_err(failed)?;
    root.present().map_err(failed)?;
    Ok(())
}

/// The title and the size it is drawn at: smaller when it is too wide, cut
/// short with an ellipsis when even the smallest size is too wide.
fn fitted_title<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    width: u32,
    sizes: &Sizes,
) -> Result<(String, f64), DrawingAreaErrorKind<DB::ErrorType>> {
    let room = width.saturating_sub(2 * sizes.margin.unsigned_abs());
    let mut size = sizes.title;
    while size > sizes.smallest_title {
        if root.estimate_text_size(title, &text(size, &BLACK))?.0 <= room {
            return Ok((title.to_owned(), size));
        }
        size -= f64::from(sizes.unit);
    }
    Ok((shortened(root, title, room, &text(size, &BLACK))?, size))
}

/// `text` cut short with an ellipsis so that it fits in `room` pixels.
fn shortened<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: &str,
    room: u32,
    style: &TextStyle<'_>,
) -> Result<String, DrawingAreaErrorKind<DB::ErrorType>> {
    if root.estimate_text_size(text, style)?.0 <= room {
        return Ok(text.to_owned());
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let candidate: String = chars.iter().chain(['…'].iter()).collect();
        if root.estimate_text_size(&candidate, style)?.0 <= room {
            return Ok(candidate);
        }
    }
    Ok("…".to_owned())
}

/// The legend's names (shortened to fit) and the column's width.
struct Legend {
    names: Vec<String>,
    width: i32,
}

fn legend_entries<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    shown: &[(usize, &Series)],
    width: u32,
    sizes: &Sizes,
) -> Result<Legend, DrawingAreaErrorKind<DB::ErrorType>> {
    let style = text(sizes.legend, &BLACK);
    let most = (f64::from(width) * LEGEND_MAX_SHARE) as i32;
    let fixed = 2 * sizes.legend_pad + sizes.swatch + sizes.legend_gap;
    let room = u32::try_from(most - fixed).unwrap_or(0);
    let mut names = Vec::with_capacity(shown.len());
    let mut widest = 0;
    for (_, series) in shown {
        let name = shortened(root, &series.name, room, &style)?;
        widest = widest.max(root.estimate_text_size(&name, &style)?.0);
        names.push(name);
    }
    let width = (fixed + widest as i32).min(most);
    Ok(Legend { names, width })
}

/// The legend: one row per series, a swatch in its style and its name; as
/// many rows as fit, then "+N more".
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    legend: &Legend,
    shown: &[(usize, &Series)],
    sizes: &Sizes,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (_, height) = area.dim_in_pixel();
    let row_height = sizes.legend_row;
    let rows = ((height as i32 - 2 * sizes.margin) / row_height).max(1) as usize;
    let style = text(sizes.legend, &BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    let u = sizes.unit;
    let mut markers = 0;
    let fits = if shown.len() > rows { rows - 1 } else { rows };
    for (row, (&(index, series), name)) in shown.iter().zip(&legend.names).enumerate() {
        let shape = markers;
        if series.style == Style::Marker {
            markers += 1;
        }
        if row >= fits {
            continue;
        }
        let y = sizes.margin + row_height / 2 + row as i32 * row_height;
        let (left, right) = (sizes.legend_pad, sizes.legend_pad + sizes.swatch);
        let color = color(index);
        if !series.band.is_empty() {
            let fill = color.mix(BAND_OPACITY).filled();
            area.draw(&Rectangle::new(
                [(left, y - 8 * u), (right, y + 8 * u)],
                fill,
            ))?;
        }
        let stroke = color.stroke_width(sizes.line);
        let middle = (left + right) / 2;
        match series.style {
            Style::Line => area.draw(&PathElement::new(vec![(left, y), (right, y)], stroke))?,
            Style::Step => area.draw(&PathElement::new(
                vec![
                    (left, y + 5),
                    (middle, y + 5),
                    (middle, y - 5),
                    (right, y - 5),
                ],
                stroke,
            ))?,
            Style::Points => area.draw(&Circle::new((middle, y), sizes.point, color.filled()))?,
            Style::Marker => {
                draw_marker(area, shape, (middle, y), sizes.marker - 2 * u, color, sizes)?
            }
        }
        if !series.error_bars.is_empty() && series.style != Style::Line {
            area.draw(&PathElement::new(
                vec![(middle, y - 9 * u), (middle, y + 9 * u)],
                stroke,
            ))?;
        }
        area.draw_text(name, &style, (right + sizes.legend_gap, y))?;
    }
    if shown.len() > fits {
        let y = sizes.margin + row_height / 2 + fits as i32 * row_height;
        let more = format!("+{} more", shown.len() - fits);
        area.draw_text(&more, &style.color(&DARK), (sizes.legend_pad, y))?;
    }
    Ok(())
}

/// A large symbol centred on `center` (pixels of `area`): filled with the
/// series' colour and outlined in black, its shape chosen by `shape`
/// (diamond, triangle, square, inverted triangle, then again).
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    shape: usize,
    (x, y): (i32, i32),
    radius: i32,
    color: RGBColor,
    sizes: &Sizes,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let r = radius;
    let offsets: Vec<(i32, i32)> = match shape % 4 {
        0 => vec![(0, -r), (r, 0), (0, r), (-r, 0)],
        1 => vec![(0, -r), (r, r * 3 / 4), (-r, r * 3 / 4)],
        2 => {
            let h = r * 4 / 5;
            vec![(-h, -h), (h, -h), (h, h), (-h, h)]
        }
        _ => vec![(0, r), (r, -r * 3 / 4), (-r, -r * 3 / 4)],
    };
    let vertices: Vec<(i32, i32)> = offsets.iter().map(|(dx, dy)| (x + dx, y + dy)).collect();
    area.draw(&Polygon::new(vertices.clone(), color.filled()))?;
    let mut outline = vertices;
    if let Some(&first) = outline.first() {
        outline.push(first);
    }
    area.draw(&PathElement::new(outline, BLACK.stroke_width(sizes.line)))
}

/// The band as one polygon (its high edge, then its low edge back), cut to
/// the visible window.
fn band_polygon(series: &Series, window: &Window) -> Vec<(f64, f64)> {
    if series.band.len() < 2 {
        return Vec::new();
    }
    let high = series.band.iter().map(|&(x, _, high)| (x, high));
    let low = series.band.iter().rev().map(|&(x, low, _)| (x, low));
    let outline: Vec<(f64, f64)> = high.chain(low).collect();
    window.polygon(&outline)
}

/// A step line through `points`: horizontal to the next point's x, then
/// vertical.
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut line = Vec::with_capacity(points.len() * 2);
    for (i, &(x, y)) in points.iter().enumerate() {
        if i > 0 {
            if let Some(&(_, previous_y)) = line.last() {
                line.push((x, previous_y));
            }
        }
        line.push((x, y));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axis::Range;

    fn window(x: (f64, f64), y: (f64, f64)) -> Window {
        Window {
            x: Range {
                low: x.0,
                high: x.1,
            },
            y: Range {
                low: y.0,
                high: y.1,
            },
        }
    }

    #[test]
    fn steps_go_across_then_up() {
        let line = steps(&[(0.0, 1.0), (2.0, 3.0), (5.0, 2.0)]);
        assert_eq!(
            line,
            vec![(0.0, 1.0), (2.0, 1.0), (2.0, 3.0), (5.0, 3.0), (5.0, 2.0)]
        );
        assert!(steps(&[]).is_empty());
    }

    #[test]
    fn a_band_is_its_high_edge_then_its_low_edge_back() {
        let series =
            Series::new("s", vec![], Style::Line).band(vec![(0.0, 1.0, 2.0), (1.0, 1.5, 2.5)]);
        let polygon = band_polygon(&series, &window((0.0, 1.0), (0.0, 3.0)));
        assert_eq!(
            polygon,
            vec![(0.0, 2.0), (1.0, 2.5), (1.0, 1.5), (0.0, 1.0)]
        );
        let single = Series::new("s", vec![], Style::Line).band(vec![(0.0, 1.0, 2.0)]);
        assert!(band_polygon(&single, &window((0.0, 1.0), (0.0, 3.0))).is_empty());
    }
}
