//! What the demo leaves in its output directory: `summary.json` with every
//! figure, and `index.html`, a self-contained page (inline CSS, the PNG
//! plots beside it referenced relatively) with the setup, the table, the
//! conclusion and the plots.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use anyhow::Context;
use fairstream_net::emulate::DirectionStats;
use serde::Serialize;

use super::charts::Plot;
use super::run::{describe, Sample, Setup};
use super::table::{Figures, Row};
use super::{setup_line, Measured};
use crate::demo_cmd::quality::Quality;
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

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "
body { font: 16px/1.5 system-ui, -apple-system, 'Segoe UI', sans-serif; color: #222;
       max-width: 960px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.lead { color: #555; margin-top: 0; }
.conclusion { background: #eef6ee; border-left: 4px solid #2a8a4a; padding: 0.8em 1em;
              font-size: 1.1em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.35em 0.9em; border-bottom: 1px solid #e4e4e4; }
th { text-align: left; background: #f6f6f6; }
td.value { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #e4e4e4; }
figcaption { color: #555; font-size: 0.92em; }
code, pre { font-family: ui-monospace, 'SFMono-Regular', Menlo, monospace; font-size: 0.92em; }
pre { background: #f6f6f6; padding: 0.7em 1em; overflow-x: auto; }
";

/// Everything `index.html` shows.
pub(super) struct Page<'a> {
    /// The shared setup.
    pub(super) setup: &'a Setup,
    /// Both runs.
    pub(super) runs: &'a [Measured],
    /// The table's rows.
    pub(super) rows: &'a [Row],
    /// The conclusion.
    pub(super) conclusion: &'a str,
    /// The plots.
    pub(super) plots: &'a [Plot],
    /// The command that reproduces the run.
    pub(super) command: &'a str,
    /// Seconds the whole demo took.
    pub(super) wall_time_s: f64,
}

/// Writes `index.html`.
pub(super) fn write_html(path: &Path, page: &Page<'_>) -> anyhow::Result<()> {
    fs::write(path, html(page)).with_context(|| format!("cannot write {}", path.display()))
}

fn html(page: &Page<'_>) -> String {
    let setup = page.setup;
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>fairstream demo</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>fairstream demo: one TFRC connection against several</h1>\n\
         <p class=\"lead\">{}</p>\n<p class=\"conclusion\">{}.</p>",
        escape(&setup_line(setup)),
        escape(page.conclusion),
    );
    let _ = writeln!(
        out,
        "<p>A lossy wireless last hop loses packets that no queue dropped. TFRC (RFC 5348) \
         reads every loss as congestion, so one connection settles far below the link's \
         capacity, and a live encoder that follows it is starved. Several TFRC connections \
         for one stream (paper 001's MULTFRC; fairstream's default controller adds \
         connections while the queue stays short) fill the link, and each connection still \
         behaves as one TCP-friendly flow.</p>\n\
         <p>The live encoder follows the rate the connections allow, so more throughput is a \
         higher bitrate and a better picture as encoded. On the way, though, every lost packet \
         that is not repaired damages the picture until the next IDR frame ({}), and at a few \
         per cent of random loss that damage can outweigh what the bitrate bought: compare \
         the PSNR as encoded with the PSNR as received.</p>",
        escape(&repair_words(setup)),
    );

    out.push_str("<h2>Results</h2>\n<table>\n<tr><th></th>");
    for run in page.runs {
        let _ = write!(out, "<th>{}</th>", escape(run.outcome.variant.label));
    }
    out.push_str("</tr>\n");
    for row in page.rows {
        let _ = write!(out, "<tr><th>{}</th>", escape(row.label));
        for cell in &row.cells {
            let _ = write!(out, "<td class=\"value\">{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    let _ = writeln!(
        out,
        "<p>Throughput is the RTP bytes the receiver got over the {:.0} s of a run; \
         PSNR and SSIM are of the luma plane, every frame the sender encoded against the \
         generator's frame of the same number; start-up delay and stalls come from the \
         receiver's player model ({:.1} s prebuffer).</p>",
        setup.duration.as_secs_f64(),
        setup.prebuffer.as_secs_f64(),
    );

    out.push_str("<h2>Over time</h2>\n");
    for plot in page.plots {
        let _ = writeln!(
            out,
            "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
            escape(plot.file),
            escape(plot.file),
            escape(&plot.caption),
        );
    }

    out.push_str("<h2>Setup</h2>\n<ul>\n");
    let _ = writeln!(
        out,
        "<li>Link (emulated on loopback, <code>fairstream_net::emulate</code>): {} \
         towards the receiver, {} ms one-way delay each way (RTT {} ms), queue <code>{}</code>, \
         loss <code>{}</code> ({}); feedback crosses without loss. Seed {}: both runs draw \
         the same losses.</li>",
        escape(&setup.rate.to_string()),
        setup.delay.as_millis(),
        2 * setup.delay.as_millis(),
        escape(&setup.queue_text),
        escape(&setup.loss_text),
        escape(&loss_words(setup)),
        setup.seed,
    );
    let _ = writeln!(
        out,
        "<li>Video: fairstream's generated content, {}×{} at {} fps, an IDR every {} frames, \
         encoded live by OpenH264 at the session's target bitrate.</li>",
        setup.size.0, setup.size.1, setup.fps, setup.gop
    );
    for (index, run) in page.runs.iter().enumerate() {
        let _ = writeln!(
            out,
            "<li>Run {}: {}, <code>{}</code></li>",
            index + 1,
            escape(&describe(run.outcome.variant)),
            escape(&run.outcome.url),
        );
    }
    let _ = writeln!(
        out,
        "<li>The whole demo took {:.0} s.</li>\n</ul>",
        page.wall_time_s
    );

    out.push_str("<h2>Files</h2>\n<ul>\n<li><a href=\"summary.json\">summary.json</a>: every figure above, the time series and the per-frame PSNR</li>\n");
    for run in page.runs {
        let key = run.outcome.variant.key;
        let _ = writeln!(
            out,
            "<li><code>{key}.264</code>: the H.264 stream the receiver wrote in the {} run \
             (<code>ffplay {key}.264</code>); <code>{key}-send.jsonl</code>, \
             <code>{key}-recv.jsonl</code>: the statistics of both ends, a JSON line a \
             second</li>",
            escape(run.outcome.variant.label),
        );
    }
    let _ = writeln!(
        out,
        "</ul>\n<h2>Run it again</h2>\n<pre>{}</pre>\n</body>\n</html>",
        escape(page.command)
    );
    out
}

/// The loss model in words.
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
            html(&Page {
                setup,
                conclusion: "",
                runs: &[],
                rows: &[],
                plots: &[],
                command: "fairstream demo",
                wall_time_s: 1.0,
            })
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

    #[test]
    fn html_text_is_escaped() {
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}
