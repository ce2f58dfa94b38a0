use proptest::prelude::*;

use super::axis::{label, nice_step, Axis};
use super::canvas::Rgb;
use super::*;

fn decode(bytes: &[u8]) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let reader = decoder.read_info().unwrap();
    let info = reader.info();
    (info.width, info.height)
}

fn three_flows() -> Chart {
    let mut chart = Chart::new("Throughput per flow", "time (s)", "Mbit/s");
    for (i, name) in ["tcp", "tfrc", "multfrc"].iter().enumerate() {
        let points = (0..60)
            .map(|t| (t as f64, 1.0 + i as f64 + (t as f64 / 5.0).sin() * 0.3))
            .collect();
        chart = chart.series(Series::new(name, points, Style::Line));
    }
    chart
}

#[test]
fn renders_a_png_of_the_declared_size() {
    let bytes = three_flows().render().unwrap();
    assert_eq!(decode(&bytes), (900, 480));
    let mut small = three_flows();
    small.width = 10; // clamped up to MIN_SIZE
    small.height = 300;
    assert_eq!(decode(&small.render().unwrap()), (MIN_SIZE, 300));
}

#[test]
fn the_same_chart_gives_the_same_bytes() {
    assert_eq!(
        three_flows().render().unwrap(),
        three_flows().render().unwrap()
    );
}

#[test]
fn a_line_paints_its_colour_between_its_points_and_stays_inside() {
    let chart = Chart::new("t", "x", "y").series(Series::new(
        "a",
        vec![(0.0, 0.0), (10.0, 10.0)],
        Style::Line,
    ));
    let canvas = chart.draw();
    let colour = color(0);
    let painted: Vec<(i64, i64)> = (0..i64::from(canvas.width()))
        .flat_map(|x| (0..i64::from(canvas.height())).map(move |y| (x, y)))
        .filter(|&(x, y)| canvas.get(x, y) == Some(colour))
        .collect();
    // The legend swatch is colour too; the line lies in the plot area.
    let in_plot: Vec<_> = painted
        .iter()
        .filter(|(x, _)| *x < i64::from(canvas.width()) - MARGIN_RIGHT - LEGEND_WIDTH)
        .collect();
    assert!(in_plot.len() > 300, "{} pixels", in_plot.len());
    for (x, y) in &in_plot {
        assert!(*x > MARGIN_LEFT && *y >= MARGIN_TOP, "({x}, {y}) outside");
        assert!(*y < i64::from(canvas.height()) - MARGIN_BOTTOM);
    }
    // The midpoint of the diagonal is painted.
    let right = i64::from(canvas.width()) - MARGIN_RIGHT - LEGEND_WIDTH;
    let bottom = i64::from(canvas.height()) - MARGIN_BOTTOM;
    let (mx, my) = ((MARGIN_LEFT + right) / 2, (MARGIN_TOP + bottom) / 2);
    let near = (-3..=3).any(|d| canvas.get(mx + d, my) == Some(colour));
    assert!(near, "no line near the middle ({mx}, {my})");
}

#[test]
fn non_finite_points_break_lines_and_degenerate_charts_render() {
    let broken = Chart::new("t", "x", "y").series(Series::new(
        "a",
        vec![
            (0.0, 1.0),
            (1.0, f64::NAN),
            (2.0, 1.0),
            (f64::INFINITY, 3.0),
        ],
        Style::Line,
    ));
    assert!(broken.render().is_ok());
    for chart in [
        Chart::new("", "", ""),
        Chart::new("one", "x", "y").series(Series::new("p", vec![(5.0, 5.0)], Style::Points)),
        Chart::new("flat", "x", "y").series(Series::new(
            "f",
            vec![(0.0, 3.0), (1.0, 3.0)],
            Style::Step,
        )),
        Chart::new("huge", "x", "y").series(Series::new(
            "h",
            vec![(0.0, -1e300), (1.0, 1e300)],
            Style::Line,
        )),
        Chart::new("nan only", "x", "y").series(Series::new(
            "n",
            vec![(f64::NAN, f64::NAN)],
            Style::Line,
        )),
    ] {
        let bytes = chart.render().unwrap();
        assert_eq!(decode(&bytes), (900, 480), "{}", chart.title);
    }
}

#[test]
fn many_series_and_long_names_fit_the_legend() {
    let mut chart = Chart::new("many", "x", "y");
    for i in 0..40 {
        chart = chart.series(Series::new(
            &format!("a rather long series name number {i} ünïcode"),
            vec![(0.0, i as f64), (1.0, i as f64 + 1.0)],
            Style::Line,
        ));
    }
    assert!(chart.render().is_ok());
}

#[test]
fn a_write_to_a_missing_directory_names_the_path() {
    let path = std::env::temp_dir().join("fairstream-no-such-dir-xyz/plot.png");
    let error = three_flows().write_png(&path).unwrap_err().to_string();
    assert!(error.contains("fairstream-no-such-dir-xyz"), "{error}");
}

#[test]
fn text_uses_the_bitmap_font() {
    let mut canvas = canvas::Canvas::new(64, 16);
    canvas.text(0, 0, "A", 1, Rgb::BLACK);
    let black = (0..8)
        .flat_map(|x| (0..8).map(move |y| (x, y)))
        .filter(|&(x, y)| canvas.get(x, y) == Some(Rgb::BLACK))
        .count();
    assert!(black > 10, "an A has more than 10 pixels, got {black}");
    assert_eq!(canvas.get(20, 4), Some(Rgb::WHITE));
}

#[test]
fn labels_are_compact() {
    assert_eq!(label(0.0, 0.5), "0");
    assert_eq!(label(2.5, 0.5), "2.5");
    assert_eq!(label(1_500_000.0, 500_000.0), "1.5M");
    assert_eq!(label(20_000.0, 10_000.0), "20k");
    assert_eq!(label(3e9, 1e9), "3G");
    assert_eq!(label(-0.0, 1.0), "0");
    assert_eq!(label(0.001, 0.001), "0.001");
}

#[test]
fn steps_are_one_two_or_five_times_a_power_of_ten() {
    assert_eq!(nice_step(10.0, 5), 2.0);
    assert_eq!(nice_step(60.0, 8), 10.0);
    assert_eq!(nice_step(0.7, 6), 0.2);
    assert_eq!(nice_step(0.0, 6), 1.0);
}

proptest! {
    #[test]
    fn axes_cover_the_data_with_nice_steps(
        low in -1e9f64..1e9,
        span in 1e-6f64..1e9,
        target in 2usize..12,
    ) {
        let high = low + span;
        let axis = Axis::covering(low, high, target);
        prop_assert!(axis.min <= low && axis.max >= high);
        let magnitude = 10f64.powf(axis.step.log10().floor());
        let mantissa = axis.step / magnitude;
        prop_assert!(
            [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-9),
            "step {} (mantissa {mantissa})", axis.step
        );
        prop_assert!(axis.ticks.len() >= 2 && axis.ticks.len() <= 101);
        // About `target` intervals: never more than 2.5 times as many.
        prop_assert!((axis.ticks.len() - 1) as f64 <= 2.5 * target as f64 + 1.0);
    }

    #[test]
    fn any_points_render(points in proptest::collection::vec((any::<f64>(), any::<f64>()), 0..20)) {
        let chart = Chart::new("p", "x", "y").series(Series::new("s", points, Style::Line));
        prop_assert!(chart.render().is_ok());
    }
}

#[test]
fn y_at_least_leaves_room_above_the_data() {
    let chart = Chart::new("t", "x", "y").series(Series::new(
        "limit",
        vec![(0.0, 2.0), (10.0, 2.0)],
        Style::Line,
    ));
    assert_eq!(chart.axes().1.max, 2.0);
    let roomy = Chart {
        y_at_least: Some(2.2),
        ..chart.clone()
    };
    assert!(roomy.axes().1.max > 2.2);
    let ignored = Chart {
        y_at_least: Some(f64::NAN),
        ..chart
    };
    assert_eq!(ignored.axes().1.max, 2.0);
}
