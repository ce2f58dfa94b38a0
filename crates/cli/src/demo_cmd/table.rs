//! The headline figures of a run, the side-by-side table (as text for
//! stdout and as rows for the HTML report) and the one-line conclusion.

use serde::Serialize;

use super::run::{RunOutcome, Setup};
use crate::quality::Quality;

/// The figures the table shows, for `summary.json` too.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Figures {
    /// RTP bits delivered to the receiver per second of the run.
    pub(super) throughput_bps: f64,
    /// `throughput_bps` over the link's rate.
    pub(super) share_of_capacity: f64,
    /// The mean of the controller's n: a fractional count in one
    /// connection's rate for the aggregate and adaptive controllers, the
    /// connections open for a count of connections.
    pub(super) connections_mean: f64,
    /// The most connections open at once.
    pub(super) connections_max: usize,
    /// The mean bitrate the encoder was set to, bits/s.
    pub(super) encoder_bitrate_mean_bps: Option<f64>,
    /// Datagrams lost on the emulated channel, over those that entered
    /// the link.
    pub(super) channel_loss: f64,
    /// Datagrams dropped by the link's queue (congestion), likewise.
    pub(super) queue_drops: f64,
    /// RTP packets the receiver found missing, over those it expected.
    pub(super) packets_missing: f64,
    /// RTP packets FEC rebuilt at the receiver (`None` without FEC).
    pub(super) packets_rebuilt: Option<u64>,
    /// Blocks FEC could not repair.
    pub(super) blocks_unrecoverable: Option<u64>,
    /// The share of the bytes sent that was FEC parity.
    pub(super) fec_overhead: Option<f64>,
    /// Datagrams the receiver asked for again and got in time, and those
    /// the sender resent (`None` without ARQ).
    pub(super) arq: Option<(u64, u64)>,
    /// Frames the sender encoded.
    pub(super) frames_encoded: u64,
    /// Frames (or what was left of them) the sender dropped as too late.
    pub(super) frames_late: u64,
    /// Frames the viewer did not get: the previous picture stayed.
    pub(super) frames_repeated: usize,
    /// Mean luma PSNR of the frames as encoded (before any loss) against
    /// the source, dB: what the bitrate bought.
    pub(super) psnr_encoded_db: Option<f64>,
    /// Their mean luma SSIM.
    pub(super) ssim_encoded: Option<f64>,
    /// Mean luma PSNR of the frames as received against the source, dB.
    pub(super) psnr_db: Option<f64>,
    /// Mean luma SSIM against the source.
    pub(super) ssim: Option<f64>,
    /// The player model's start-up delay, seconds.
    pub(super) startup_delay_s: Option<f64>,
    /// Its stalls.
    pub(super) stalls: u64,
    /// Its time stalled, seconds.
    pub(super) stall_time_s: f64,
}

impl Figures {
    /// The figures of `run`.
    pub(super) fn of(
        setup: &Setup,
        run: &RunOutcome,
        quality: &Quality,
        encoded: &Quality,
    ) -> Figures {
        let throughput_bps =
            run.recv.bytes_received as f64 * 8.0 / setup.duration.as_secs_f64().max(1e-9);
        let forward = &run.link.forward;
        let entered = forward.received_packets.max(1) as f64;
        let expected = (run.recv.packets_received + run.recv.packets_missing).max(1) as f64;
        let mean = |values: Vec<f64>| {
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let connections_mean = run
            .send
            .connections_mean
            .or_else(|| mean(run.samples.iter().filter_map(|s| s.connections).collect()))
            .unwrap_or(0.0);
        Figures {
            throughput_bps,
            share_of_capacity: throughput_bps / setup.rate.bits_per_sec(),
            connections_mean,
            connections_max: run.send.connections_max,
            encoder_bitrate_mean_bps: mean(
                run.samples
                    .iter()
                    .filter_map(|s| s.encoder_bitrate_bps)
                    .collect(),
            ),
            channel_loss: forward.channel_losses as f64 / entered,
            queue_drops: forward.queue_drops as f64 / entered,
            packets_missing: run.recv.packets_missing as f64 / expected,
            packets_rebuilt: setup.fec.map(|_| run.recv.fec.packets_rebuilt),
            blocks_unrecoverable: setup.fec.map(|_| run.recv.fec.blocks_unrecoverable),
            fec_overhead: run.send.fec_overhead,
            arq: setup
                .arq
                .then_some((run.recv.arq_recovered, run.send.arq_retransmitted)),
            frames_encoded: run.send.frames_read,
            frames_late: run.send.frames_late + run.send.frames_dropped,
            frames_repeated: quality.frames_repeated,
            psnr_encoded_db: encoded.summary.as_ref().map(|s| s.psnr_db_mean),
            ssim_encoded: encoded.summary.as_ref().map(|s| s.ssim_mean),
            psnr_db: quality.summary.as_ref().map(|s| s.psnr_db_mean),
            ssim: quality.summary.as_ref().map(|s| s.ssim_mean),
            startup_delay_s: run.recv.startup_delay_s,
            stalls: run.recv.stalls,
            stall_time_s: run.recv.stall_time_s,
        }
    }
}

/// One row of the table: a label and a value per run.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Row {
    /// What the row shows.
    pub(super) label: &'static str,
    /// One cell per run.
    pub(super) cells: Vec<String>,
}

fn percent(fraction: f64) -> String {
    format!("{:.1} %", fraction * 100.0)
}

fn optional(value: Option<f64>, format: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| "–".to_owned(), format)
}

/// The rows of the table, one cell per run.
pub(super) fn rows(figures: &[Figures]) -> Vec<Row> {
    let row = |label, cell: &dyn Fn(&Figures) -> String| Row {
        label,
        cells: figures.iter().map(cell).collect(),
    };
    vec![
        row("throughput", &|f| {
            format!("{:.2} Mbit/s", f.throughput_bps / 1e6)
        }),
        row("share of the link's capacity", &|f| {
            percent(f.share_of_capacity)
        }),
        // For the aggregate and adaptive controllers the mean is n, a
        // fractional count in one connection's rate, so it differs from the
        // most open.
        row("connections: mean n / most open", &|f| {
            format!("{:.1} / {}", f.connections_mean, f.connections_max)
        }),
        row("encoder bitrate (mean)", &|f| {
            optional(f.encoder_bitrate_mean_bps, |b| {
                format!("{:.0} kbit/s", b / 1e3)
            })
        }),
        row("lost on the wireless channel", &|f| percent(f.channel_loss)),
        row("dropped by the link's queue", &|f| percent(f.queue_drops)),
        row("rebuilt by FEC (overhead)", &|f| match f.packets_rebuilt {
            Some(rebuilt) => format!("{rebuilt} packets ({})", optional(f.fec_overhead, percent)),
            None => "no FEC".to_owned(),
        }),
        row("recovered by retransmission (resent)", &|f| match f.arq {
            Some((recovered, resent)) => format!("{recovered} packets ({resent})"),
            None => "no ARQ".to_owned(),
        }),
        row("packets missing at the receiver", &|f| {
            percent(f.packets_missing)
        }),
        row("frames encoded / dropped late", &|f| {
            format!("{} / {}", f.frames_encoded, f.frames_late)
        }),
        row("frames not shown (previous kept)", &|f| {
            f.frames_repeated.to_string()
        }),
        row("PSNR as encoded (before loss)", &|f| {
            optional(f.psnr_encoded_db, |p| format!("{p:.1} dB"))
        }),
        row("PSNR as received", &|f| {
            optional(f.psnr_db, |p| format!("{p:.1} dB"))
        }),
        row("SSIM as encoded / as received", &|f| {
            format!(
                "{} / {}",
                optional(f.ssim_encoded, |s| format!("{s:.3}")),
                optional(f.ssim, |s| format!("{s:.3}"))
            )
        }),
        row("start-up delay", &|f| {
            optional(f.startup_delay_s, |s| format!("{s:.2} s"))
        }),
        row("stalls (time stalled)", &|f| {
            format!("{} ({:.1} s)", f.stalls, f.stall_time_s)
        }),
    ]
}

/// The table as aligned text, with a header row of `labels`.
pub(super) fn text(labels: &[&str], rows: &[Row]) -> String {
    let first = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..labels.len())
        .map(|column| {
            rows.iter()
                .filter_map(|r| r.cells.get(column))
                .map(|c| c.chars().count())
                .chain(labels.get(column).map(|l| l.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |label: &str, cells: &mut dyn Iterator<Item = &str>| {
        let mut out = format!("{label:<first$}");
        for (cell, width) in cells.zip(&widths) {
            out.push_str(&format!("   {cell:>width$}"));
        }
        out.trim_end().to_owned()
    };
    let mut out = line("", &mut labels.iter().copied());
    out.push('\n');
    for row in rows {
        out.push_str(&line(row.label, &mut row.cells.iter().map(String::as_str)));
        out.push('\n');
    }
    out
}

/// The conclusion from the numbers: how the second run compares with the
/// first.
pub(super) fn conclusion(single: &Figures, multi: &Figures) -> String {
    let ratio = multi.throughput_bps / single.throughput_bps.max(1.0);
    let mut text = format!(
        "multi-connection moved {ratio:.1}× the bytes of one TFRC connection \
         ({:.2} → {:.2} Mbit/s, {:.0} % → {:.0} % of the link)",
        single.throughput_bps / 1e6,
        multi.throughput_bps / 1e6,
        single.share_of_capacity * 100.0,
        multi.share_of_capacity * 100.0,
    );
    let change = |label: &str, before: Option<f64>, after: Option<f64>| {
        let (before, after) = (before?, after?);
        let verb = if after >= before { "rose" } else { "fell" };
        Some(format!(
            "{label} {verb} {:.1} dB ({before:.1} → {after:.1} dB)",
            (after - before).abs()
        ))
    };
    let parts: Vec<String> = [
        change(
            "the encoder's PSNR",
            single.psnr_encoded_db,
            multi.psnr_encoded_db,
        ),
        change("the received PSNR", single.psnr_db, multi.psnr_db),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !parts.is_empty() {
        text.push_str(&format!("; {}", parts.join(", ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_table_aligns_its_columns() {
        let rows = vec![
            Row {
                label: "throughput",
                cells: vec!["0.62 Mbit/s".into(), "1.71 Mbit/s".into()],
            },
            Row {
                label: "PSNR",
                cells: vec!["31.2 dB".into(), "37.3 dB".into()],
            },
        ];
        let text = text(&["one", "multi-connection"], &rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        // Every value ends in the same column as its header.
        let end = |line: &str, cell: &str| line.find(cell).map(|i| i + cell.len());
        assert_eq!(
            end(lines[0], "multi-connection"),
            end(lines[1], "1.71 Mbit/s")
        );
        assert_eq!(end(lines[1], "1.71 Mbit/s"), end(lines[2], "37.3 dB"));
    }
}
