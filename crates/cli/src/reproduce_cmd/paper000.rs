//! Paper 000 (Al-Majeed and Fleury, multi-connection TFRC video over a
//! WiMAX uplink): Tables 3-6 and Figs. 2-3 on the paper's Fig. 1 (three
//! subscriber stations on one TDD cell, a 5 Mbit/s core bottleneck;
//! `experiments/paper000/wimax.toml` says where each parameter comes
//! from), each beside the paper's numbers.

use anyhow::{Context as _, Result};
use fairstream_media::bframes::{gop_trace, GopTraceConfig};
use fairstream_media::h264::FrameType;
use fairstream_report::{Chart, Page, Series, Style, Table};

mod gops;

use super::compare::{verdict, Results, Stat};
use super::paper_data::{PaperData, PaperTable};
use super::{Input, Quick, Runner};
use crate::sweep_cmd::plan::{self, Plan, CASE_KEY};

/// The files the recipe runs.
pub(super) const INPUTS: &[Input] = &[
    (
        "paper000/wimax.toml",
        include_str!("../../../../experiments/paper000/wimax.toml"),
    ),
    (
        "sweeps/paper000/table3.toml",
        include_str!("../../../../experiments/sweeps/paper000/table3.toml"),
    ),
    (
        "sweeps/paper000/frames.toml",
        include_str!("../../../../experiments/sweeps/paper000/frames.toml"),
    ),
    (
        "papers/000.toml",
        include_str!("../../../../experiments/papers/000.toml"),
    ),
];

/// `--quick`: two seeds of 40 s, 300 frames of video (the full run:
/// fifteen seeds of 150 s, the paper's 1063 frames).
const QUICK: Quick = Quick {
    seeds: 2,
    duration: "40s",
};
/// The frames `--quick` sends.
const QUICK_FRAMES: i64 = 300;
/// The connection counts `--quick` keeps.
const QUICK_CONNS: [i64; 2] = [1, 4];
/// The frame lengths `--quick` keeps (the frames sweep's cases).
const QUICK_FRAME_CASES: [&str; 2] = ["5ms", "20ms"];

/// The swept key: the video's connections.
const CONNS_KEY: &str = "flow.video.transport.conns";
/// The frame lengths of Tables 5 and 6, as the frames sweep names its
/// cases and the paper's columns are headed.
const FRAMES: [(&str, &str); 5] = [
    ("5ms", "5ms"),
    ("8ms", "8ms"),
    ("10ms", "10ms"),
    ("12.5ms", "12.5ms"),
    ("20ms", "20ms"),
];

/// Runs the sweeps and writes the report.
pub(super) fn build(context: &Runner, data: &PaperData, page: &mut Page) -> Result<()> {
    page.heading(2, "The setting");
    page.paragraph(
        "Paper 000 §3 (ns-2): three subscriber stations on one base station's IEEE 802.16e TDD \
         uplink (frames of 5-20 ms, DL:UL 1:3, 10.67 Mbit/s PHY rate), per-station rtPS and \
         nrtPS queues of 50 packets served round robin, a Gilbert-Elliott channel per station, \
         and behind the base station a core network with a 5 Mbit/s bottleneck and 50-packet \
         buffers; SS 1 streams an H.264 video with IPBB GOPs of 15 over 1-4 TFRC connections, \
         whole GOPs interleaved between the connections, beside CBR and FTP cross traffic. \
         Ours: the `tdd` link (`crates/sim/src/link/tdd.rs`: frames, subframes with their \
         overhead, a one-frame request-grant lag, the cell's bursts shared max-min fair), a \
         `priority` queue with round robin, and a synthetic `IBBP` trace in place of the Paris \
         clip (not available) at the 437 kbit/s Table 3 implies. \
         `experiments/paper000/wimax.toml` gives every value and its source and which are ours.",
    );
    let plans = Plans::read(context)?;
    table3(context, data, page, &plans.table3)?;
    let frames = context.run("frames", &plans.frames)?;
    let results = Results {
        plan: &plans.frames,
        outcome: &frames,
    };
    let sweep = Sweep {
        results: &results,
        conns: conns(&plans.frames),
        seconds: run_seconds(&plans.frames)?,
        quick: context.quick(),
    };
    table4(data, page, &sweep)?;
    table5(data, page, &sweep)?;
    table6(data, page, &sweep)?;
    fig3(page, &sweep, &plans.frames)?;
    gops::fig2(context, page)?;
    differences(page);
    Ok(())
}

/// The two sweeps, shortened when quick.
struct Plans {
    table3: Plan,
    frames: Plan,
}

impl Plans {
    fn read(context: &Runner) -> Result<Plans> {
        let mut table3 = context.plan("sweeps/paper000/table3.toml", QUICK)?;
        let mut frames = context.plan("sweeps/paper000/frames.toml", QUICK)?;
        if context.quick() {
            for plan in [&mut table3, &mut frames] {
                plan::set(
                    &mut plan.base,
                    "flow.video.media.frames",
                    toml::Value::Integer(QUICK_FRAMES),
                )?;
                if let Some((_, values)) = plan.vary.iter_mut().find(|(key, _)| key == CONNS_KEY) {
                    values.retain(|v| v.as_integer().is_some_and(|n| QUICK_CONNS.contains(&n)));
                }
            }
            frames
                .cases
                .retain(|(name, _)| QUICK_FRAME_CASES.contains(&name.as_str()));
            if let Some((_, values)) = frames.vary.iter_mut().find(|(key, _)| key == CASE_KEY) {
                values.retain(|v| v.as_str().is_some_and(|n| QUICK_FRAME_CASES.contains(&n)));
            }
        }
        Ok(Plans { table3, frames })
    }
}

/// The connection counts a plan runs.
fn conns(plan: &Plan) -> Vec<i64> {
    plan.vary
        .iter()
        .find(|(key, _)| key == CONNS_KEY)
        .map(|(_, values)| values.iter().filter_map(toml::Value::as_integer).collect())
        .unwrap_or_default()
}

/// The run's length in seconds (the goodput is over it).
fn run_seconds(plan: &Plan) -> Result<f64> {
    let text = plan
        .base
        .get("run")
        .and_then(|run| run.get("duration"))
        .and_then(toml::Value::as_str)
        .context("the scenario's run.duration")?;
    Ok(fairstream_proto::units::parse_duration(text)?.as_secs_f64())
}

/// A sweep over frame lengths (cases) and connections.
struct Sweep<'a> {
    results: &'a Results<'a>,
    conns: Vec<i64>,
    seconds: f64,
    quick: bool,
}

impl Sweep<'_> {
    fn point(&self, case: &str, conns: i64) -> Result<usize> {
        self.results.point(&[
            (CASE_KEY, &format!("\"{case}\"")),
            (CONNS_KEY, &conns.to_string()),
        ])
    }

    fn stat(&self, case: &str, conns: i64, metric: &str) -> Result<Stat> {
        self.results.stat(self.point(case, conns)?, metric)
    }

    /// The video's throughput over its sending period, kbit/s: the
    /// goodput over the run per second of the period, times the run.
    fn throughput(&self, case: &str, conns: i64) -> Result<Stat> {
        let stat = self.stat(case, conns, "rate_per_period")?;
        Ok(Stat {
            mean: stat.mean * self.seconds / 1e3,
            half: stat.half * self.seconds / 1e3,
            n: stat.n,
        })
    }

    fn has(&self, case: &str) -> bool {
        self.results.plan.cases.iter().any(|(name, _)| name == case)
    }
}

/// The paper's row for `conns` connections (`1-conn`, `3-conn.`).
fn paper_row(table: &PaperTable, conns: i64) -> Option<usize> {
    table.rows.iter().position(|row| {
        row.first()
            .is_some_and(|label| label.trim_end_matches('.') == format!("{conns}-conn"))
    })
}

/// A cell of the paper's row for `conns`, "–" if absent.
fn paper_cell(table: &PaperTable, conns: i64, column: &str) -> String {
    paper_row(table, conns)
        .and_then(|row| table.text(row, column).ok())
        .unwrap_or("–")
        .to_owned()
}

fn runs_line(quick: bool, seeds: usize) -> String {
    if quick {
        format!(
            "{seeds} seeds of 40 s with 300 frames of video (the quick run; the full run, fifteen \
             seeds of 150 s with the paper's 1063 frames, is what docs/results/reproduce/000 \
             holds)"
        )
    } else {
        format!("{seeds} seeds (the paper averages fifteen runs) of 150 s with 1063 frames")
    }
}

/// Table 3: the WiMAX link alone, 5 and 20 ms frames.
fn table3(context: &Runner, data: &PaperData, page: &mut Page, plan: &Plan) -> Result<()> {
    let paper = data.table("table3")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    let outcome = context.run("table3", plan)?;
    let results = Results {
        plan,
        outcome: &outcome,
    };
    let sweep = Sweep {
        results: &results,
        conns: conns(plan),
        seconds: run_seconds(plan)?,
        quick: context.quick(),
    };
    page.paragraph(&format!(
        "The video from SS 1 to the base station, {}. The sending period is when the video's \
         last packet arrived; the throughput is the video's goodput over it. Ours is the mean ± \
         the 95 % confidence interval's half-width. The `DL to SS 1` columns send node B's \
         downlink FTP and CBR (1.5 Mbit/s) to the video's station instead of SS 2, so that the \
         video's TFRC feedback waits in the same downlink queue (the paper does not say which \
         station they go to).",
        runs_line(sweep.quick, plan.seeds.len())
    ));
    let mut rows = Vec::new();
    let mut ours = Vec::new();
    for &n in &sweep.conns {
        let stat = |case: &str, metric: &str, scale: f64, decimals: usize| -> Result<String> {
            Ok(sweep.stat(case, n, metric)?.show(scale, decimals))
        };
        let thr = |case: &str| -> Result<Stat> { sweep.throughput(case, n) };
        ours.push((n, thr("5ms")?.mean, thr("20ms")?.mean));
        rows.push(vec![
            format!("{n}-conn"),
            paper_cell(paper, n, "SS to BS (s), 5 ms"),
            stat("5ms", "period_s", 1.0, 1)?,
            paper_cell(paper, n, "Throughput (kbps), 5 ms"),
            thr("5ms")?.show(1.0, 0),
            paper_cell(paper, n, "SS to BS (s), 20 ms"),
            stat("20ms", "period_s", 1.0, 1)?,
            paper_cell(paper, n, "Throughput (kbps), 20 ms"),
            thr("20ms")?.show(1.0, 0),
            thr("5ms-dl-ss1")?.show(1.0, 0),
            thr("20ms-dl-ss1")?.show(1.0, 0),
        ]);
    }
    page.table(Table {
        header: [
            "connections",
            "5 ms: period, paper (s)",
            "ours",
            "throughput, paper (kbit/s)",
            "ours",
            "20 ms: period, paper (s)",
            "ours",
            "throughput, paper (kbit/s)",
            "ours",
            "DL to SS 1: 5 ms (kbit/s)",
            "20 ms",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    });
    let paper_series = |column: &str, name: &str| -> Series {
        let points = sweep
            .conns
            .iter()
            .filter_map(|&n| {
                let row = paper_row(paper, n)?;
                Some((n as f64, paper.number(row, column).ok()??))
            })
            .collect();
        Series::new(name, points, Style::Marker)
    };
    let ours_series = |case: &str, name: &str| -> Series {
        let points = sweep
            .conns
            .iter()
            .filter_map(|&n| Some((n as f64, sweep.throughput(case, n).ok()?.mean)))
            .collect();
        Series::new(name, points, Style::Line)
    };
    page.chart(
        "table3",
        Chart::new(
            "Table 3: the video's throughput, SS 1 to the base station",
            "TFRC connections",
            "throughput over the sending period (kbit/s)",
        )
        .y_from_zero()
        .series(ours_series("5ms", "ours, 5 ms"))
        .series(ours_series("20ms", "ours, 20 ms"))
        .series(ours_series("5ms-dl-ss1", "ours, 5 ms, DL to SS 1"))
        .series(ours_series("20ms-dl-ss1", "ours, 20 ms, DL to SS 1"))
        .series(paper_series("Throughput (kbps), 5 ms", "paper, 5 ms"))
        .series(paper_series("Throughput (kbps), 20 ms", "paper, 20 ms")),
    );
    let one = |case: &str| -> Result<f64> { Ok(sweep.throughput(case, 1)?.mean) };
    let grows = |f: fn(&(i64, f64, f64)) -> f64| {
        ours.first()
            .zip(ours.last())
            .is_some_and(|(a, b)| f(b) > f(a))
    };
    page.list(&[
        format!(
            "\"TFRC is able to multiplex more data onto a link as the number of connections \
             increases\": ours from 1 to {} connections, 20 ms frames: {}; 5 ms frames: {}.",
            sweep.conns.last().copied().unwrap_or(1),
            verdict(grows(|p| p.2)),
            verdict(grows(|p| p.1)),
        ),
        format!(
            "\"the longer frame length is preferable if only one connection were to be used\": \
             ours with one connection, 5 ms against 20 ms frames: {:.0} against {:.0} kbit/s \
             with node B's downlink traffic to SS 2 ({}), {:.0} against {:.0} with it to SS 1 \
             ({}). The round trip grows with the frame (two request-grant cycles of a frame \
             each); the 5 ms frame's 1.25 ms downlink loses a third of its time to its overhead \
             (1.78 Mbit/s left), so with 1.5 Mbit/s of CBR in front of the feedback it is the \
             downlink's queue that sets the round trip.",
            one("5ms")?,
            one("20ms")?,
            verdict(one("20ms")? > one("5ms")?),
            one("5ms-dl-ss1")?,
            one("20ms-dl-ss1")?,
            verdict(one("20ms-dl-ss1")? > one("5ms-dl-ss1")?),
        ),
    ]);
    Ok(())
}

/// Table 4: across the core, 20 ms frames.
fn table4(data: &PaperData, page: &mut Page, sweep: &Sweep<'_>) -> Result<()> {
    let paper = data.table("table4")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph(&format!(
        "The 20 ms case of the frames sweep (the video to node C across the core): {}. The \
         delay is the video's mean one-way packet delay, network only (the paper's \"per \
         slice/packet end-to-end delay\").",
        runs_line(sweep.quick, sweep.results.plan.seeds.len())
    ));
    let mut rows = Vec::new();
    for &n in &sweep.conns {
        rows.push(vec![
            format!("{n}-conn"),
            paper_cell(paper, n, "Sending Period (s)"),
            sweep.stat("20ms", n, "period_s")?.show(1.0, 1),
            paper_cell(paper, n, "Throughput (kbps)"),
            sweep.throughput("20ms", n)?.show(1.0, 0),
            paper_cell(paper, n, "Mean end-to-end delay (s)"),
            sweep.stat("20ms", n, "one_way_delay_s")?.show(1.0, 3),
            sweep.stat("20ms", n, "rtt_s")?.show(1.0, 3),
        ]);
    }
    page.table(Table {
        header: [
            "connections",
            "period, paper (s)",
            "ours",
            "throughput, paper (kbit/s)",
            "ours",
            "delay, paper (s)",
            "ours",
            "our RTT (s)",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    });
    Ok(())
}

/// The frames of the clip by type, and their packets, as the recipe's
/// trace sends them (for loss percentages by type).
fn packets_by_type(frames: u64) -> Result<[u64; 3]> {
    let trace = gop_trace(&GopTraceConfig {
        frames,
        ..GopTraceConfig::default()
    })?;
    let mut counts = [0u64; 3];
    for frame in &trace {
        let index = match frame.frame_type {
            FrameType::I => 0,
            FrameType::P => 1,
            FrameType::B => 2,
        };
        counts[index] += u64::from(frame.packets);
    }
    Ok(counts)
}

/// The frames the clip has (the quick run sends fewer).
fn clip_frames(quick: bool) -> u64 {
    if quick {
        QUICK_FRAMES.unsigned_abs()
    } else {
        GopTraceConfig::default().frames
    }
}

/// Table 5: the paper's PSNR beside the frames our runs damaged.
fn table5(data: &PaperData, page: &mut Page, sweep: &Sweep<'_>) -> Result<()> {
    let paper = data.table("table5")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph(&format!(
        "PSNR needs the decoded video. Our clip is a trace without pictures (the Paris clip is \
         not available, and the decoder fairstream carries, OpenH264, decodes the Constrained \
         Baseline profile, which has no B-frames), so ours is what decides PSNR under \
         Previous Frame Replacement: the frames damaged, lost or referring to a lost frame (a \
         lost I or P damages what follows it to the next I, a lost B only itself), out of the \
         {} frames, mean ± 95 % half-width. More damaged frames means a lower PSNR; the paper's \
         \"stdv\" is over its fifteen runs, ours a confidence interval of the mean.",
        clip_frames(sweep.quick)
    ));
    let mut header = vec!["connections".to_owned()];
    for (case, column) in FRAMES {
        if sweep.has(case) {
            header.push(format!("{case}: PSNR, paper (dB)"));
            header.push(format!("{column}: damaged, ours"));
        }
    }
    let mut rows = Vec::new();
    for &n in &sweep.conns {
        let mut row = vec![format!("{n}-conn")];
        for (case, column) in FRAMES {
            if !sweep.has(case) {
                continue;
            }
            row.push(format!(
                "{} ({})",
                paper_cell(paper, n, &format!("{column} Mean")),
                paper_cell(paper, n, &format!("{column} stdv"))
            ));
            row.push(sweep.stat(case, n, "frames_damaged")?.show(1.0, 0));
        }
        rows.push(row);
    }
    page.table(Table { header, rows });
    Ok(())
}

/// Table 6: mean packet delay by frame length.
fn table6(data: &PaperData, page: &mut Page, sweep: &Sweep<'_>) -> Result<()> {
    let paper = data.table("table6")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph("The video's mean one-way packet delay to node C (s), the paper's and ours.");
    let paper_columns = ["5 ms", "8ms", "10ms", "12.5ms", "20ms"];
    let mut header = vec!["connections".to_owned()];
    for ((case, _), column) in FRAMES.iter().zip(paper_columns) {
        if sweep.has(case) {
            header.push(format!("{case}: paper"));
            header.push(format!("{column}: ours"));
        }
    }
    let mut rows = Vec::new();
    for &n in &sweep.conns {
        let mut row = vec![format!("{n}-conn")];
        for ((case, _), column) in FRAMES.iter().zip(paper_columns) {
            if !sweep.has(case) {
                continue;
            }
            row.push(paper_cell(paper, n, column));
            row.push(sweep.stat(case, n, "one_way_delay_s")?.show(1.0, 4));
        }
        rows.push(row);
    }
    page.table(Table { header, rows });
    Ok(())
}

/// Fig. 3: packet loss by frame type, connections and frame length.
fn fig3(page: &mut Page, sweep: &Sweep<'_>, plan: &Plan) -> Result<()> {
    page.heading(
        2,
        "Fig. 3: mean percentage packet loss by frame type, connections and TDD frame length",
    );
    let packets = packets_by_type(clip_frames(sweep.quick))?;
    page.paragraph(&format!(
        "The paper draws bars without printed values. Ours: the share of the packets of each \
         frame type lost (channel and congestion), mean ± 95 % half-width over {} seeds; the \
         clip has {} I, {} P and {} B packets. The paper: \"anchor frames (I-frames) and \
         reference frames (I- and P-frames) are evenly affected whatever the number of \
         connections\", and losses are \"generally higher for a 5 ms TDD frame length than a 20 \
         ms frame length\". The I, P and B shares count what the application lost: in the \
         network (channel and congestion, the next column's share of the packets sent) and, \
         with several connections, what our receiver's reorder buffer gave up waiting for (a \
         connection silent for longer than its lane timeout no longer holds a gap open; its \
         late datagrams are then dropped), the column after.",
        plan.seeds.len(),
        packets[0],
        packets[1],
        packets[2]
    ));
    let mut rows = Vec::new();
    let mut chart = Chart::new(
        "Fig. 3: packets lost by frame type",
        "TFRC connections",
        "packets lost (%)",
    )
    .y_from_zero();
    for case in QUICK_FRAME_CASES {
        let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 3];
        for &n in &sweep.conns {
            let mut row = vec![case.to_owned(), format!("{n}-conn")];
            for (k, metric) in ["packets_lost_i", "packets_lost_p", "packets_lost_b"]
                .iter()
                .enumerate()
            {
                let stat = sweep.stat(case, n, metric)?;
                let scale = 100.0 / packets[k].max(1) as f64;
                row.push(stat.show(scale, 2));
                series[k].push((n as f64, stat.mean * scale));
            }
            row.push(sweep.stat(case, n, "packet_loss_rate")?.show(100.0, 2));
            // What the application lost beyond the network's losses: the
            // reorder buffer's give-ups.
            let network = sweep.stat(case, n, "congestion_losses")?.mean
                + sweep.stat(case, n, "channel_losses")?.mean;
            let media = sweep.stat(case, n, "packets_lost_media")?.mean;
            // A few DCCP control packets (handshake, close) count among the
            // network's losses and not the media's: at least zero.
            row.push(format!("{:.1}", (media - network).max(0.0)));
            row.push(sweep.stat(case, n, "reorder_delay_max_s")?.show(1.0, 1));
            rows.push(row);
        }
        for (k, letter) in ["I", "P", "B"].iter().enumerate() {
            chart = chart.series(Series::new(
                &format!("{letter}, {case}"),
                series[k].clone(),
                Style::Line,
            ));
        }
    }
    page.table(Table {
        header: [
            "frame length",
            "connections",
            "I (%)",
            "P (%)",
            "B (%)",
            "sent, lost in the network (%)",
            "given up by the receiver (packets)",
            "longest reorder wait (s)",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    });
    page.chart("fig3", chart);
    Ok(())
}

/// What differs from the paper, and why.
fn differences(page: &mut Page) {
    page.heading(2, "Where ours differ, and why");
    page.list(&[
        "The clip: the paper's Paris (CIF, QP 26) is not available; ours is a synthetic IBBP \
         trace of the same GOP, length and mean rate, so the numbers of frames and packets \
         match but not the sizes of individual frames."
            .to_owned(),
        "PSNR: not measured (see Table 5); the frames damaged are what a PSNR under Previous \
         Frame Replacement follows."
            .to_owned(),
        "The MAC: the paper's ns-2 WiMAX module is not named and its scheduler not described; \
         ours takes the standard's frame overheads and a one-frame request-grant lag, shares \
         each subframe max-min fair and leaves out OFDMA slot granularity, contention \
         requests and ARQ (crates/sim/src/link/tdd.rs). The frame length acts through the \
         request-grant cycle (a longer frame, a longer round trip) and through the overhead's \
         share of the frame (a shorter frame, less capacity, most of all on the 1.25 ms \
         downlink)."
            .to_owned(),
        "The downlink traffic's station is not given: the Table 3 columns \"DL to SS 1\" show \
         that it decides whether the 5 ms frame hurts (the paper's finding) or helps."
            .to_owned(),
        "TFRC: ours is RFC 5348's with the default mean packet size; the paper's ns-2 TFRC \
         used each packet's size in the equation and returned its feedback over TCP."
            .to_owned(),
    ]);
}
