//! What the demo leaves in its output directory: `summary.json` with every
//! figure, and the report page with the setup, the table, the conclusion
//! and the charts: `index.html`, one self-contained file (inline CSS, the
//! charts as inline SVG), `index.md`, and the charts as PNG files.

use std::fs;
use std::path::Path;

use anyhow::Context;
use fairstream_net::emulate::DirectionStats;
use fairstream_report::{Page, Table};
use serde::Serialize;

use super::charts::Plot;
use super::run::{describe, Sample, Setup};
use super::table::{Figures, Row};
use super::{setup_line, Measured};
use crate::quality::Quality;
use fairstream_net::recv::RecvReport;
use fairstream_net::send::SendReport;

/// The forward direction of the emulated link, as counted by the emulator.
#[derive(Debug, Serialize)]
struct LinkFigures {
    received_packets: u64,
    sent_packets: u64,
    sent_bytes: u64,
    channel_losses: u64,
    queue_drops: u64,
    overflow_drops: u64,
}

impl From<&DirectionStats> for LinkFigures {
    fn from(stats: &DirectionStats) -> LinkFigures {
        LinkFigures {
            received_packets: stats.received_packets,
            sent_packets: stats.sent_packets,
            sent_bytes: stats.sent_bytes,
            channel_losses: stats.channel_losses,
            queue_drops: stats.queue_drops,
            overflow_drops: stats.overflow_drops,
        }
    }
}

#[derive(Debug, Serialize)]
struct RunSummary<'a> {
    key: &'static str,
    label: &'static str,
    url: &'a str,
    figures: &'a Figures,
    quality: &'a Quality,
    quality_encoded: &'a Quality,
    psnr_per_frame_db: Vec<f64>,
    psnr_encoded_per_frame_db: Vec<f64>,
    samples: &'a [Sample],
    link_forward: LinkFigures,
    send: &'a SendReport,
    recv: &'a RecvReport,
}

#[derive(Debug, Serialize)]
struct Summary<'a> {
    setup: &'a Setup,
    conclusion: &'a str,
    wall_time_s: f64,
    runs: Vec<RunSummary<'a>>,
}

/// Writes `summary.json`.
pub(super) fn write_summary(
    path: &Path,
    setup: &Setup,
    runs: &[Measured],
    conclusion: &str,
    wall_time_s: f64,
) -> anyhow::Result<()> {
    let summary = Summary {
        setup,
        conclusion,
        wall_time_s,
        runs: runs
            .iter()
            .map(|run| RunSummary {
                key: run.outcome.variant.key,
                label: run.outcome.variant.label,
                url: &run.outcome.url,
                figures: &run.figures,
                quality: &run.quality,
                quality_encoded: &run.encoded,
                psnr_per_frame_db: run.quality.per_frame.iter().map(|q| q.psnr_db).collect(),
                psnr_encoded_per_frame_db: run
                    .encoded
                    .per_frame
                    .iter()
                    .map(|q| q.psnr_db)
                    .collect(),
                samples: &run.outcome.samples,
                link_forward: LinkFigures::from(&run.outcome.link.forward),
                send: &run.outcome.send,
                recv: &run.outcome.recv,
            })
            .collect(),
    };
    let text = serde_json::to_string_pretty(&summary).context("cannot serialise the summary")?;
    fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}

/// Everything the report page shows.
pub(super) struct Report<'a> {
    /// The shared setup.
    pub(super) setup: &'a Setup,
    /// Both runs.
    pub(super) runs: &'a [Measured],
    /// The table's rows.
    pub(super) rows: &'a [Row],
    /// The conclusion.
    pub(super) conclusion: &'a str,
    /// The charts.
    pub(super) plots: Vec<Plot>,
    /// The command that reproduces the run.
    pub(super) command: &'a str,
    /// Seconds the whole demo took.
    pub(super) wall_time_s: f64,
}

/// Writes `index.html`, `index.md` and the charts' PNG files into `dir`.
pub(super) fn write_page(dir: &Path, report: Report<'_>) -> anyhow::Result<()> {
    page(report)
        .write(dir, "index")
        .with_context(|| format!("cannot write the report in {}", dir.display()))
}

fn page(report: Report<'_>) -> Page {
    let setup = report.setup;
    let mut page = Page::new("fairstream demo: one TFRC connection against several");
    page.paragraph(&setup_line(setup))
        .callout(&format!("{}.", report.conclusion))
        .paragraph(
            "A lossy wireless last hop loses packets that no queue dropped. TFRC (RFC 5348) \
             reads every loss as congestion, so one connection settles far below the link's \
             capacity, and a live encoder that follows it is starved. Several TFRC connections \
             for one stream (paper 001's MULTFRC; fairstream's default controller adds \
             connections while the queue stays short) fill the link, and each connection still \
             behaves as one TCP-friendly flow.",
        )
        .paragraph(&format!(
            "The live encoder follows the rate the connections allow, so more throughput is a \
             higher bitrate and a better picture as encoded. On the way, though, every lost \
             packet that is not repaired damages the picture until the next IDR frame ({}), \
             and at a few per cent of random loss that damage can outweigh what the bitrate \
             bought: compare the PSNR as encoded with the PSNR as received.",
            repair_words(setup)
        ));

    let mut header = vec![String::new()];
    header.extend(
        report
            .runs
            .iter()
            .map(|r| r.outcome.variant.label.to_owned()),
    );
    let rows = report
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![row.label.to_owned()];
            cells.extend(row.cells.iter().cloned());
            cells
        })
        .collect();
    page.heading(2, "Results")
        .table(Table { header, rows })
        .paragraph(&format!(
            "Throughput is the RTP bytes the receiver got over the {:.0} s of a run; PSNR and \
             SSIM are of the luma plane, every frame the sender encoded against the \
             generator's frame of the same number; start-up delay and stalls come from the \
             receiver's player model ({:.1} s prebuffer).",
            setup.duration.as_secs_f64(),
            setup.prebuffer.as_secs_f64(),
        ));

    page.heading(2, "Over time");
    // A chart with nothing to draw (a run that ended before its first
    // sample) is left out rather than failing the report.
    for plot in report.plots.into_iter().filter(|p| !p.chart.is_empty()) {
        page.chart(plot.name, plot.chart).paragraph(&plot.caption);
    }

    let mut setup_items = vec![
        format!(
            "Link (emulated on loopback, `fairstream_net::emulate`): {} towards the receiver, \
             {} ms one-way delay each way (RTT {} ms), queue `{}`, loss `{}` ({}); feedback \
             crosses without loss. Seed {}: both runs draw the same losses.",
            setup.rate,
            setup.delay.as_millis(),
            2 * setup.delay.as_millis(),
            setup.queue_text,
            setup.loss_text,
            loss_words(setup),
            setup.seed,
        ),
        format!(
            "Video: fairstream's generated content, {}×{} at {} fps, an IDR every {} frames, \
             encoded live by OpenH264 at the session's target bitrate.",
            setup.size.0, setup.size.1, setup.fps, setup.gop
        ),
    ];
    for (index, run) in report.runs.iter().enumerate() {
        setup_items.push(format!(
            "Run {}: {}, `{}`",
            index + 1,
            describe(run.outcome.variant),
            run.outcome.url,
        ));
    }
    setup_items.push(format!("The whole demo took {:.0} s.", report.wall_time_s));
    page.heading(2, "Setup").list(&setup_items);

    let mut files = vec![
        "`summary.json`: every figure above, the time series and the per-frame PSNR".to_owned(),
        "`index.md`: this page as Markdown, with the charts as PNG files beside it".to_owned(),
    ];
    for run in report.runs {
        let key = run.outcome.variant.key;
        files.push(format!(
            "`{key}.264`: the H.264 stream the receiver wrote in the {} run (`ffplay \
             {key}.264`); `{key}-send.jsonl`, `{key}-recv.jsonl`: the statistics of both \
             ends, a JSON line a second",
            run.outcome.variant.label,
        ));
    }
    page.heading(2, "Files").list(&files);
    page.heading(2, "Run it again").code_block(report.command);
    page
}

/// What repairs losses in both runs, from the configuration the runs used.
fn repair_words(setup: &Setup) -> String {
    let fec = setup.fec.map(|fec| {
        format!(
            "packet-level Reed-Solomon FEC, RS({},{}): {} parity packets after every {} RTP \
             packets rebuild up to {} lost ones of the block",
            fec.n,
            fec.k,
            fec.n - fec.k,
            fec.k,
            fec.n - fec.k
        )
    });
    let arq = "retransmission within the deadline: the receiver asks for what it lost and \
               the sender resends what can still arrive in time, inside its rate";
    match (fec, setup.arq) {
        (Some(fec), true) => format!("both runs carry {fec}, and {arq}"),
        (Some(fec), false) => format!("both runs carry {fec}; nothing is retransmitted"),
        (None, true) => format!("both runs repair losses by {arq}; no FEC"),
        (None, false) => "nothing here repairs losses: no FEC, no retransmission".to_owned(),
    }
}

pub(super) fn loss_words(setup: &Setup) -> String {
    use fairstream_sim::loss::LossConfig;
    match setup.loss {
        LossConfig::None => "no channel loss".into(),
        LossConfig::Bernoulli { p } => format!("{:.1} % random loss", p * 100.0),
        LossConfig::GilbertElliott { .. } => format!(
            "Gilbert-Elliott bursts, {:.1} % on average",
            setup.mean_loss * 100.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(fec: Option<fairstream_media::stream::FecParams>, arq: bool) -> Setup {
        Setup {
            rate: fairstream_proto::units::Rate::from_bits_per_sec(2e6),
            delay: std::time::Duration::from_millis(50),
            queue: fairstream_sim::queue::QueueConfig::DropTail {
                limit: fairstream_sim::queue::Limit::Packets(50),
            },
            queue_text: "50".into(),
            loss: fairstream_sim::loss::LossConfig::Bernoulli { p: 0.03 },
            loss_text: "3%".into(),
            mean_loss: 0.03,
            duration: std::time::Duration::from_secs(20),
            size: (352, 288),
            fps: 25.0,
            gop: 25,
            fec,
            arq,
            seed: 1,
            prebuffer: std::time::Duration::from_secs(1),
        }
    }

    #[test]
    fn the_text_says_what_repaired_losses_in_the_runs() {
        let fec = fairstream_media::stream::FecParams { n: 30, k: 24 };
        let page = |setup: &Setup| {
            page(Report {
                setup,
                conclusion: "",
                runs: &[],
                rows: &[],
                plots: Vec::new(),
                command: "fairstream demo",
                wall_time_s: 1.0,
            })
            .to_markdown()
        };
        let with = page(&setup(Some(fec), false));
        assert!(with.contains("RS(30,24)"), "{with}");
        assert!(with.contains("nothing is retransmitted"), "{with}");
        assert!(!with.contains("no FEC"), "{with}");
        let both = page(&setup(Some(fec), true));
        assert!(both.contains("RS(30,24)") && both.contains("the sender resends"));
        let arq = page(&setup(None, true));
        assert!(
            arq.contains("the sender resends") && arq.contains("no FEC"),
            "{arq}"
        );
        let without = page(&setup(None, false));
        assert!(without.contains("no FEC, no retransmission"), "{without}");
    }
}
