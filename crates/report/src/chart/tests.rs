use super::*;

fn sample() -> Chart {
    let line: Vec<(f64, f64)> = (0..50)
        .map(|i| (f64::from(i) * 0.2, 2.0 + (f64::from(i) * 0.3).sin()))
        .collect();
    let band = line.iter().map(|&(x, y)| (x, y - 0.3, y + 0.3)).collect();
    Chart::new("Throughput per flow", "time (s)", "throughput (Mbit/s)")
        .series(Series::new("tfrc", line, Style::Line).band(band))
        .series(Series::new(
            "connections",
            vec![(0.0, 1.0), (4.0, 2.0), (8.0, 3.0)],
            Style::Step,
        ))
        .series(
            Series::new("measured", vec![(2.0, 1.0), (6.0, 1.5)], Style::Points)
                .error_bars(vec![(2.0, 0.5, 1.5), (6.0, 1.0, 2.0)]),
        )
        .series(Series::new("paper 001", vec![(5.0, 2.5)], Style::Marker))
        .y_from_zero()
}

/// The width and height a PNG's header gives, after decoding it whole.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a buffer size")];
    let info = reader.next_frame(&mut pixels).expect("a whole frame");
    (info.width, info.height)
}

#[test]
fn the_svg_names_the_title_the_axes_and_every_series() {
    let svg = sample().to_svg().unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
    for text in [
        "Throughput per flow",
        "time (s)",
        "throughput (Mbit/s)",
        "tfrc",
        "connections",
        "measured",
        "paper 001",
    ] {
        assert!(svg.contains(text), "no {text} in the SVG");
    }
    // The band is translucent; no system font is named.
    assert!(svg.contains("opacity=\"0.22\""), "no translucent band");
    assert!(svg.contains("font-family=\"sans-serif\""));
}

#[test]
fn the_png_decodes_to_the_chart_size() {
    let bytes = sample().to_png().unwrap();
    assert_eq!(png_size(&bytes), (Chart::WIDTH, Chart::HEIGHT));
    let small = sample().size(480, 320).to_png().unwrap();
    assert_eq!(png_size(&small), (480, 320));
}

#[test]
fn the_same_chart_gives_the_same_bytes() {
    assert_eq!(sample().to_png().unwrap(), sample().to_png().unwrap());
    assert_eq!(sample().to_svg().unwrap(), sample().to_svg().unwrap());
    // And a different chart different bytes.
    let other = sample().series(Series::new("more", vec![(1.0, 1.0)], Style::Points));
    assert_ne!(sample().to_png().unwrap(), other.to_png().unwrap());
}

#[test]
fn files_are_written_where_asked() {
    let dir = std::env::temp_dir().join(format!("fairstream-report-chart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (png, svg) = (dir.join("c.png"), dir.join("c.svg"));
    sample().write_png(&png).unwrap();
    sample().write_svg(&svg).unwrap();
    assert_eq!(std::fs::read(&png).unwrap(), sample().to_png().unwrap());
    assert_eq!(
        std::fs::read_to_string(&svg).unwrap(),
        sample().to_svg().unwrap()
    );
    let missing = dir.join("no/such/dir/c.png");
    let error = sample().write_png(&missing).unwrap_err();
    assert!(matches!(error, ReportError::Io { .. }), "{error}");
    assert!(error.to_string().contains("no/such/dir"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_single_point_and_equal_values_are_drawn() {
    for style in [Style::Line, Style::Points, Style::Step, Style::Marker] {
        let single = Chart::new("one", "x", "y").series(Series::new("a", vec![(3.0, 7.0)], style));
        single.to_png().unwrap();
        let flat = Chart::new("flat", "x", "y")
            .series(Series::new("a", vec![(0.0, 0.0), (1.0, 0.0)], style))
            .y_from_zero();
        flat.to_png().unwrap();
        let layout = flat.check().unwrap();
        assert_eq!(layout.y.low, 0.0);
        assert!(layout.y.high > 0.0);
    }
}

#[test]
fn empty_series_are_skipped_and_no_series_is_an_error() {
    let chart = Chart::new("t", "x", "y")
        .series(Series::new("ghost", vec![], Style::Line))
        .series(Series::new(
            "real",
            vec![(0.0, 1.0), (1.0, 2.0)],
            Style::Line,
        ));
    let svg = chart.to_svg().unwrap();
    assert!(svg.contains("real") && !svg.contains("ghost"));

    let none = Chart::new("Nothing here", "x", "y");
    let error = none.to_png().unwrap_err();
    assert!(matches!(error, ReportError::Empty { .. }), "{error}");
    assert!(error.to_string().contains("Nothing here"), "{error}");
    let only_empty = none.series(Series::new("ghost", vec![], Style::Line));
    assert!(only_empty.is_empty());
    assert!(matches!(
        only_empty.to_svg(),
        Err(ReportError::Empty { .. })
    ));
}

#[test]
fn non_finite_values_are_refused_by_name() {
    let nan = Chart::new("t", "x", "y").series(Series::new(
        "bad flow",
        vec![(0.0, 1.0), (1.0, f64::NAN)],
        Style::Line,
    ));
    let error = nan.to_svg().unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("bad flow") && text.contains("NaN") && text.contains("point number 1"),
        "{text}"
    );

    let infinite_band = Chart::new("t", "x", "y").series(
        Series::new("s", vec![(0.0, 1.0)], Style::Line).band(vec![(0.0, 0.5, f64::INFINITY)]),
    );
    let text = infinite_band.to_png().unwrap_err().to_string();
    assert!(
        text.contains("band row number 0") && text.contains("inf"),
        "{text}"
    );

    let infinite_bar = Chart::new("t", "x", "y").series(
        Series::new("s", vec![(0.0, 1.0)], Style::Points).error_bars(vec![(
            f64::NEG_INFINITY,
            0.5,
            1.0,
        )]),
    );
    assert!(matches!(
        infinite_bar.to_png(),
        Err(ReportError::NonFinite {
            part: "error bar",
            ..
        })
    ));
}

#[test]
fn inverted_bands_bad_ranges_and_sizes_are_refused() {
    let points = || Series::new("s", vec![(0.0, 1.0), (1.0, 2.0)], Style::Line);
    let inverted = Chart::new("t", "x", "y").series(points().band(vec![(0.0, 2.0, 1.0)]));
    assert!(matches!(
        inverted.to_svg(),
        Err(ReportError::Inverted { .. })
    ));
    for (lo, hi) in [(1.0, 1.0), (2.0, 1.0), (f64::NAN, 1.0)] {
        let chart = Chart::new("t", "x", "y").series(points()).x_range(lo, hi);
        assert!(matches!(
            chart.to_svg(),
            Err(ReportError::BadRange { axis: "x", .. })
        ));
        let chart = Chart::new("t", "x", "y").series(points()).y_range(lo, hi);
        assert!(matches!(
            chart.to_png(),
            Err(ReportError::BadRange { axis: "y", .. })
        ));
    }
    for (w, h) in [(0, 500), (500, 10), (9000, 500)] {
        let chart = Chart::new("t", "x", "y").series(points()).size(w, h);
        assert!(matches!(chart.to_png(), Err(ReportError::BadSize { .. })));
    }
}

#[test]
fn huge_values_are_drawn_or_refused_without_a_panic() {
    for value in [f64::MAX, -f64::MAX, 1e300, f64::MIN_POSITIVE] {
        let chart = Chart::new("t", "x", "y").series(Series::new(
            "s",
            vec![(value, value), (value, value)],
            Style::Line,
        ));
        match chart.to_svg() {
            Ok(svg) => assert!(svg.contains("<svg")),
            Err(error) => assert!(matches!(error, ReportError::BadRange { .. }), "{error}"),
        }
    }
}

#[test]
fn given_ranges_are_used_and_data_outside_them_is_clipped() {
    let chart = sample().x_range(2.0, 6.0).y_range(1.0, 2.0);
    let layout = chart.check().unwrap();
    assert_eq!((layout.x.low, layout.x.high), (2.0, 6.0));
    assert_eq!((layout.y.low, layout.y.high), (1.0, 2.0));
    chart.to_png().unwrap();
    // Entirely outside: nothing of the series is drawn, but the chart is.
    let away = sample().x_range(100.0, 200.0);
    away.to_svg().unwrap();
}

#[test]
fn long_titles_and_names_are_fitted() {
    let long = "a very long name ".repeat(20);
    let chart = Chart::new(&long, "x", "y")
        .series(Series::new(
            &long,
            vec![(0.0, 1.0), (1.0, 2.0)],
            Style::Line,
        ))
        .size(400, 320);
    let svg = chart.to_svg().unwrap();
    assert!(svg.contains('…'), "nothing was shortened");
    chart.to_png().unwrap();
}

#[test]
fn many_series_end_the_legend_with_a_count() {
    let mut chart = Chart::new("t", "x", "y").size(480, 320);
    for i in 0..40 {
        let y = f64::from(i);
        chart = chart.series(Series::new(
            &format!("flow {i}"),
            vec![(0.0, y), (1.0, y)],
            Style::Line,
        ));
    }
    let svg = chart.to_svg().unwrap();
    assert!(svg.contains("more"), "no +N more");
    assert!(!svg.contains("flow 39"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Whatever finite data a chart gets, drawing it ends in an SVG or an
    /// error, never a panic.
    #[test]
    fn any_finite_data_draws_or_is_refused(
        points in proptest::collection::vec(
            (proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
             proptest::num::f64::NORMAL | proptest::num::f64::ZERO),
            0..20,
        ),
        style in proptest::sample::select(vec![Style::Line, Style::Points, Style::Step, Style::Marker]),
        from_zero in proptest::bool::ANY,
    ) {
        let bars = points.iter().map(|&(x, y)| (x, y.min(0.0), y.max(0.0))).collect();
        let mut chart = Chart::new("t", "x", "y")
            .series(Series::new("s", points.clone(), style).error_bars(bars));
        if from_zero {
            chart = chart.y_from_zero();
        }
        match chart.to_svg() {
            Ok(svg) => proptest::prop_assert!(svg.contains("<svg")),
            Err(error) => proptest::prop_assert!(
                matches!(error, ReportError::Empty { .. } | ReportError::BadRange { .. }),
                "{}", error
            ),
        }
    }
}

#[test]
fn data_too_far_apart_to_tick_is_refused_not_drawn_forever() {
    // Found by `any_finite_data_draws_or_is_refused`: plotters' search for
    // a tick step never ended on a span near the largest f64.
    for (low, high) in [(1e300, 1.7e308), (-1.7e308, 1.7e308), (0.0, 1e301)] {
        let chart = Chart::new("t", "x", "y").series(Series::new(
            "s",
            vec![(low, 1.0), (high, 2.0)],
            Style::Line,
        ));
        assert!(
            matches!(chart.to_svg(), Err(ReportError::BadRange { axis: "x", .. })),
            "{low:e} to {high:e}"
        );
    }
    // Tiny and large values whose span can be ticked still draw.
    for (low, high) in [(1e-307, 3e-307), (1e299, 5e299), (-1e299, 1e299)] {
        let chart = Chart::new("t", "x", "y").series(Series::new(
            "s",
            vec![(low, low), (high, high)],
            Style::Line,
        ));
        assert!(chart.to_svg().is_ok(), "{low:e} to {high:e}");
    }
}
