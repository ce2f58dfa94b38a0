//! The report's PNG plots, drawn with the simulator's chart module
//! (`fairstream_sim::plot`): throughput, connection count and encoder
//! bitrate over time, and per-frame PSNR, each with both runs.

use std::path::Path;

use anyhow::Context;
use fairstream_sim::plot::{Chart, Series, Style};

use super::quality::Quality;
use super::run::{Sample, Setup};
use super::Measured;

/// A plot file and what it shows (the HTML caption).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Plot {
    /// The file name, beside `index.html`.
    pub(super) file: &'static str,
    /// The caption.
    pub(super) caption: String,
}

/// Writes the plots into `dir`; returns them in the report's order.
pub(super) fn write(dir: &Path, setup: &Setup, runs: &[Measured]) -> anyhow::Result<Vec<Plot>> {
    let capacity_mbit = setup.rate.bits_per_sec() / 1e6;
    let end = setup.duration.as_secs_f64();
    let over_time = |pick: &dyn Fn(&Sample) -> Option<f64>| -> Vec<Vec<(f64, f64)>> {
        runs.iter()
            .map(|run| {
                run.outcome
                    .samples
                    .iter()
                    .filter_map(|s| Some((s.time_s, pick(s)?)))
                    .collect()
            })
            .collect()
    };
    let chart = |title: &str, y_label: &str, series: Vec<Vec<(f64, f64)>>, style: Style| {
        runs.iter().zip(series).fold(
            Chart::new(title, "time (s)", y_label),
            |chart, (run, points)| {
                chart.series(Series::new(run.outcome.variant.label, points, style))
            },
        )
    };

    let mut plots = Vec::new();
    let throughput = chart(
        "Throughput at the receiver",
        "Mbit/s (1 s means)",
        over_time(&|s| s.throughput_bps.map(|b| b / 1e6)),
        Style::Line,
    )
    .series(Series::new(
        "link capacity",
        vec![(0.0, capacity_mbit), (end, capacity_mbit)],
        Style::Line,
    ));
    // Room above the capacity line, so that it is not drawn on the frame.
    let throughput = Chart {
        y_at_least: Some(capacity_mbit * 1.1),
        ..throughput
    };
    save(&throughput, dir, "throughput.png")?;
    plots.push(Plot {
        file: "throughput.png",
        caption: format!(
            "RTP bits per second the receiver got, each second, beside the link's {} capacity.",
            setup.rate
        ),
    });

    let connections = chart(
        "Open connections",
        "connections",
        over_time(&|s| s.connections),
        Style::Step,
    );
    save(&connections, dir, "connections.png")?;
    plots.push(Plot {
        file: "connections.png",
        caption: "Connections the sender had open: the default controller adds one while \
                  the queue stays short and takes one away when it grows."
            .into(),
    });

    let bitrate = chart(
        "Encoder target bitrate",
        "Mbit/s",
        over_time(&|s| s.encoder_bitrate_bps.map(|b| b / 1e6)),
        Style::Step,
    );
    save(&bitrate, dir, "bitrate.png")?;
    plots.push(Plot {
        file: "bitrate.png",
        caption: "The bitrate the live encoder was told to produce: 85 % of the rate the \
                  connections allow together (the rest is headers and headroom)."
            .into(),
    });

    let fps = setup.fps;
    let per_frame = |title: &str, pick: &dyn Fn(&Measured) -> &Quality| {
        let mut chart = runs.iter().fold(
            Chart::new(title, "time (s)", "luma PSNR (dB)"),
            |chart, run| {
                let points = pick(run)
                    .per_frame
                    .iter()
                    .enumerate()
                    .map(|(i, q)| (i as f64 / fps, q.psnr_db))
                    .collect();
                chart.series(Series::new(run.outcome.variant.label, points, Style::Line))
            },
        );
        chart.y_from_zero = false;
        chart
    };
    save(
        &per_frame("PSNR of every frame as received", &|run| &run.quality),
        dir,
        "psnr.png",
    )?;
    plots.push(Plot {
        file: "psnr.png",
        caption: "Each received frame against the source frame of the same number, after \
                  decoding with concealment; a frame that did not arrive shows the previous \
                  one, as a player would. A lost packet damages the picture until the next IDR \
                  frame: the saw teeth."
            .into(),
    });
    save(
        &per_frame("PSNR of every frame as encoded", &|run| &run.encoded),
        dir,
        "psnr_encoded.png",
    )?;
    plots.push(Plot {
        file: "psnr_encoded.png",
        caption: "The same frames as the encoder produced them, before the link: the quality \
                  the bitrate bought."
            .into(),
    });
    Ok(plots)
}

fn save(chart: &Chart, dir: &Path, file: &str) -> anyhow::Result<()> {
    let path = dir.join(file);
    chart
        .write_png(&path)
        .with_context(|| format!("cannot write the plot {}", path.display()))
}
