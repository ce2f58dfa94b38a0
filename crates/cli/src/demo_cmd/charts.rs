//! The report's charts (`fairstream_report`): throughput, connection count
//! and encoder bitrate over time, and per-frame PSNR, each with both runs.
//! The report page shows them inline and writes them as PNG files beside
//! `index.html`.

use fairstream_report::{Chart, Series, Style};

use super::run::{Sample, Setup};
use super::Measured;
use crate::quality::Quality;

/// A chart, its file stem and what it shows (the caption).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Plot {
    /// The PNG's file stem, beside `index.html`.
    pub(super) name: &'static str,
    /// The chart.
    pub(super) chart: Chart,
    /// The caption.
    pub(super) caption: String,
}

/// The charts in the report's order.
pub(super) fn charts(setup: &Setup, runs: &[Measured]) -> Vec<Plot> {
    let capacity_mbit = setup.rate.bits_per_sec() / 1e6;
    let end = setup.duration.as_secs_f64();
    let over_time = |pick: &dyn Fn(&Sample) -> Option<f64>| -> Vec<Vec<(f64, f64)>> {
        runs.iter()
            .map(|run| {
                run.outcome
                    .samples
                    .iter()
                    .filter_map(|s| Some((s.time_s, pick(s)?)))
                    .filter(|(t, v)| t.is_finite() && v.is_finite())
                    .collect()
            })
            .collect()
    };
    let chart = |title: &str, y_label: &str, series: Vec<Vec<(f64, f64)>>, style: Style| {
        runs.iter().zip(series).fold(
            Chart::new(title, "time (s)", y_label).y_from_zero(),
            |chart, (run, points)| {
                chart.series(Series::new(run.outcome.variant.label, points, style))
            },
        )
    };

    let mut plots = Vec::new();
    let throughput = chart(
        "Throughput at the receiver",
        "throughput (Mbit/s, 1 s means)",
        over_time(&|s| s.throughput_bps.map(|b| b / 1e6)),
        Style::Line,
    )
    .series(Series::new(
        "link capacity",
        vec![(0.0, capacity_mbit), (end, capacity_mbit)],
        Style::Line,
    ));
    plots.push(Plot {
        name: "throughput",
        chart: throughput,
        caption: format!(
            "RTP bits per second the receiver got, each second, beside the link's {} capacity.",
            setup.rate
        ),
    });

    let connections = chart(
        "Open connections",
        "connections (count)",
        over_time(&|s| s.connections),
        Style::Step,
    );
    plots.push(Plot {
        name: "connections",
        chart: connections,
        caption: "Connections the sender had open: the default controller adds one while \
                  the queue stays short and takes one away when it grows."
            .into(),
    });

    let bitrate = chart(
        "Encoder target bitrate",
        "target bitrate (Mbit/s)",
        over_time(&|s| s.encoder_bitrate_bps.map(|b| b / 1e6)),
        Style::Step,
    );
    plots.push(Plot {
        name: "bitrate",
        chart: bitrate,
        caption: "The bitrate the live encoder was told to produce: 85 % of the rate the \
                  connections allow together (the rest is headers and headroom)."
            .into(),
    });

    let fps = setup.fps;
    // PSNR is not drawn from zero: the differences of a few dB matter.
    let per_frame = |title: &str, pick: &dyn Fn(&Measured) -> &Quality| {
        runs.iter().fold(
            Chart::new(title, "time (s)", "luma PSNR (dB)"),
            |chart, run| {
                let points = pick(run)
                    .per_frame
                    .iter()
                    .enumerate()
                    .map(|(i, q)| (i as f64 / fps, q.psnr_db))
                    .filter(|(_, psnr)| psnr.is_finite())
                    .collect();
                chart.series(Series::new(run.outcome.variant.label, points, Style::Line))
            },
        )
    };
    plots.push(Plot {
        name: "psnr",
        chart: per_frame("PSNR of every frame as received", &|run| &run.quality),
        caption: "Each received frame against the source frame of the same number, after \
                  decoding with concealment; a frame that did not arrive shows the previous \
                  one, as a player would. A lost packet damages the picture until the next IDR \
                  frame: the saw teeth."
            .into(),
    });
    plots.push(Plot {
        name: "psnr_encoded",
        chart: per_frame("PSNR of every frame as encoded", &|run| &run.encoded),
        caption: "The same frames as the encoder produced them, before the link: the quality \
                  the bitrate bought."
            .into(),
    });
    plots
}
