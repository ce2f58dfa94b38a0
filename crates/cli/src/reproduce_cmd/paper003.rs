//! Paper 003 (Huang et al., proxy-based TCP-friendly streaming): the rate
//! curves of TCP and TFRC to wired and wireless clients from the
//! simulator (its Fig. 5 set-up, `experiments/paper003/backbone.toml`),
//! and from them Tables 1-3: the minimum start-up delay w* and client
//! buffer x* of a stored video, without and with a proxy (whose buffer is
//! y'), by the schedules of its §3 (`fairstream_media::schedule`).
//!
//! The paper's video (Glasgow, H.263 QCIF, 15 frames/s, 64 kbit/s over its
//! first 30 s) is not available. Ours is the first 30 s of the EvalVid
//! "Highway" trace (`../shared/data/evalvid/st_highway_cif.st`, MPEG-4,
//! variable rate) shown at 15 frames/s with its frame sizes scaled to
//! average 64 kbit/s: a real variable-rate video with the paper's frame
//! rate and mean rate, not its content. (The paper's length is not given;
//! its Table 3, 16.5 s of start-up at 43.3 kbit/s, fits a video of about
//! 30 s at 64 kbit/s.) The report also
//! gives our w* and x* at the paper's own rates of Table 1, which shows how
//! much of a difference is the video's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use fairstream_media::evalvid::{format_sender_trace, read_sender_trace, TraceFrame};
use fairstream_media::schedule::{
    end_to_end_plan, proxy_plan, Playout, RateConstraint, ScheduleError,
};
use fairstream_report::{Chart, Page, Series, Style, Table};
use fairstream_sim::runner::{MediaOutcome, Summary, TimeSeries, SERIES_INTERVAL};

use super::compare::{Direction, Stat};
use super::paper_data::PaperData;
use super::{run_scenario, Input, Runner};
use crate::schedule_cmd::{
    bytes_per_slot, cumulative_capacity, delayed_playout, playout_in_slots, schedule_chart,
};

/// The files the recipe runs.
pub(super) const INPUTS: &[Input] = &[
    (
        "paper003/backbone.toml",
        include_str!("../../../../experiments/paper003/backbone.toml"),
    ),
    (
        "papers/003.toml",
        include_str!("../../../../experiments/papers/003.toml"),
    ),
];

/// Seeds of the full run and of `--quick` (each run is 120 simulated
/// seconds either way, as the paper's are 90).
const SEEDS: u64 = 30;
const QUICK_SEEDS: u64 = 3;
/// Seeds of the streamed runs at most (each also 120 s).
const STREAMED_SEEDS: u64 = 10;

/// The rate curves start here (the paper drops its runs' first 30 s:
/// "slow-start effects are not taken into account").
const CURVE_FROM_S: f64 = 30.0;

/// The video: frames per second, seconds used, and its mean rate.
const FPS: f64 = 15.0;
const VIDEO_S: f64 = 30.0;
const VIDEO_RATE_BPS: f64 = 64_000.0;

/// The dedicated wireless bearer after the proxy (paper 003 §4: 64 kbit/s).
const BEARER_BPS: f64 = 64_000.0;

/// Paper 003 §4.1: "we deducted 5% from the TFRC throughput curves ... to
/// allow for at least one retransmission".
const TFRC_DEDUCTION: f64 = 0.05;

/// The measured flows, as the scenario names them.
const FLOWS: [(&str, &str); 4] = [
    ("TCP, wired", "tcp-wired"),
    ("TFRC, wired", "tfrc-wired"),
    ("TCP, wireless", "tcp-wireless"),
    ("TFRC, wireless", "tfrc-wireless"),
];

/// One rate curve of one run: bytes per slot, and the flow's mean RTT.
#[derive(Clone, Debug)]
struct Curve {
    bytes: Vec<u64>,
    rtt_s: f64,
    tfrc: bool,
}

impl Curve {
    /// The mean rate, bits per second.
    fn mean_bps(&self) -> f64 {
        let slot_s = SERIES_INTERVAL.as_secs_f64();
        self.bytes.iter().sum::<u64>() as f64 * 8.0 / (self.bytes.len().max(1) as f64 * slot_s)
    }

    /// The time TFRC's one retransmission adds to the start-up delay
    /// (paper 003 §4.1: "increasing the initial buffering delay by one
    /// round-trip delay in case TFRC is used"); nothing for TCP.
    fn retransmission_s(&self) -> f64 {
        if self.tfrc {
            self.rtt_s
        } else {
            0.0
        }
    }
}

/// What one seed gave.
struct Run {
    curves: Vec<Curve>,
    backbone_loss: f64,
}

/// Runs the simulations and writes the report.
pub(super) fn build(context: &Runner, data: &PaperData, page: &mut Page) -> Result<()> {
    let slot = SERIES_INTERVAL;
    let sizes = video_frames()?;
    let playout = playout_in_slots(&sizes, FPS, slot)?;
    let seeds = if context.quick() { QUICK_SEEDS } else { SEEDS };
    let path = context.input_path("paper003/backbone.toml");
    let runs = simulate(&path, seeds, context)?;
    let first = runs.first().context("at least one seed")?;

    page.heading(2, "The setting");
    let loss = Stat::of(&runs.iter().map(|r| r.backbone_loss).collect::<Vec<_>>());
    page.paragraph(&format!(
        "Rate curves from the simulator on paper 003's Fig. 5 set-up \
         (`experiments/paper003/backbone.toml`: 16 TCP and 16 TFRC flows over a 2048 kbit/s, \
         75 ms backbone, one of each to a client behind a dedicated 64 kbit/s wireless link with \
         200 ms of delay, background traffic for about 5 % loss on the backbone). Backbone loss \
         rate measured: {} % (the paper: 5 %). {seeds} seeds of 120 s; each curve is a flow's \
         received bytes per 100 ms from {CURVE_FROM_S:.0} s to the end, TFRC's less 5 % for one \
         retransmission, and TFRC's start-up delays include one RTT for it, as the paper's \
         (§4.1). The schedules use slots of 100 ms.",
        loss.show(100.0, 2)
    ));
    page.paragraph(&format!(
        "The video: the paper's (Glasgow, H.263, QCIF, 15 frames/s, 64 kbit/s over its first \
         30 s) is not available. Ours is the first {VIDEO_S:.0} s of the EvalVid Highway trace \
         (`../shared/data/evalvid/st_highway_cif.st`, MPEG-4, variable rate) shown at 15 \
         frames/s, its frame sizes scaled to average 64 kbit/s: {} frames, {} bytes, {:.1} \
         kbit/s (the paper does not give its video's length; its Table 3, 16.5 s of start-up at \
         43.3 kbit/s, fits about 30 s at 64 kbit/s). The w* and x* of a video depend on \
         where its large frames fall, so ours differ from the paper's even at the same rate; \
         the columns \"ours at the paper's R\" separate that from the difference in rates.",
        sizes.len(),
        playout.total(),
        playout.total() as f64 * 8.0 / VIDEO_S / 1e3
    ));
    page.chart("fig4-playout", fig4(&playout, slot)?);

    fig6(first, page)?;
    table1(data, &playout, &runs, slot, page)?;
    table2(data, &playout, &runs, slot, page)?;
    table3(data, &playout, &runs, slot, page)?;
    table3_streamed(context, data, seeds.min(STREAMED_SEEDS), page)?;
    fig7_and_8(first, &playout, slot, page)?;
    Ok(())
}

/// The first `VIDEO_S` seconds of the Highway trace at `FPS`, scaled to
/// `VIDEO_RATE_BPS`: frame sizes.
fn video_frames() -> Result<Vec<u64>> {
    Ok(video_trace()?.iter().map(|f| f.size_bytes).collect())
}

/// [`video_frames`] as an EvalVid sender trace (types kept, one packet
/// per `STREAM_PACKET_BYTES`).
fn video_trace() -> Result<Vec<TraceFrame>> {
    let path = shared_data()?.join("evalvid/st_highway_cif.st");
    let frames = read_sender_trace(&path)?;
    let count = (VIDEO_S * FPS) as usize;
    if frames.len() < count {
        bail!(
            "{} has {} frames; {count} are needed",
            path.display(),
            frames.len()
        );
    }
    let total: u64 = frames.iter().take(count).map(|f| f.size_bytes).sum();
    if total == 0 {
        bail!("{}: the frames are empty", path.display());
    }
    let scale = VIDEO_RATE_BPS / 8.0 * VIDEO_S / total as f64;
    Ok(frames
        .iter()
        .take(count)
        .enumerate()
        .map(|(i, f)| {
            let size_bytes = ((f.size_bytes as f64 * scale).round() as u64).max(1);
            TraceFrame {
                number: i as u64 + 1,
                frame_type: f.frame_type,
                size_bytes,
                packets: u32::try_from(size_bytes.div_ceil(STREAM_PACKET_BYTES))
                    .unwrap_or(u32::MAX),
                send_time_s: i as f64 / FPS,
            }
        })
        .collect())
}

/// `../shared/data`: from the working directory (the README's commands
/// run from the repository's root), `FAIRSTREAM_SHARED_DATA`, or beside
/// the checkout this binary was built from.
fn shared_data() -> Result<PathBuf> {
    let mut tried = Vec::new();
    if let Some(dir) = std::env::var_os("FAIRSTREAM_SHARED_DATA") {
        tried.push(PathBuf::from(dir));
    }
    tried.push(PathBuf::from("../shared/data"));
    tried.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    for dir in &tried {
        if dir.join("evalvid/st_highway_cif.st").is_file() {
            return Ok(dir.clone());
        }
    }
    bail!(
        "paper 003's video trace evalvid/st_highway_cif.st is in none of {} \
         (set FAIRSTREAM_SHARED_DATA to the shared data directory)",
        tried
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Runs seeds 1..=`seeds` of the scenario at `path`, `--jobs` at a time.
fn simulate(path: &Path, seeds: u64, context: &Runner) -> Result<Vec<Run>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let origin = path.display().to_string();
    let runs = in_parallel(seeds, context, |seed| one_seed(&text, &origin, seed))?;
    if !context.quiet() {
        eprintln!("reproduce: {seeds} runs of the paper 003 backbone");
    }
    Ok(runs)
}

/// `run` for seeds 1..=`seeds`, `--jobs` at a time, in seed order.
fn in_parallel<T: Send>(
    seeds: u64,
    context: &Runner,
    run: impl Fn(u64) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let jobs = context.jobs().min(seeds as usize).max(1);
    let results: Vec<std::sync::Mutex<Option<Result<T>>>> =
        (0..seeds).map(|_| std::sync::Mutex::new(None)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(slot) = results.get(i) else {
                    return;
                };
                let outcome = run(i as u64 + 1);
                if let Ok(mut slot) = slot.lock() {
                    *slot = Some(outcome);
                }
            });
        }
    });
    results
        .into_iter()
        .enumerate()
        .map(|(i, slot)| {
            slot.into_inner()
                .ok()
                .flatten()
                .with_context(|| format!("seed {} did not run", i + 1))?
                .with_context(|| format!("seed {}", i + 1))
        })
        .collect()
}

/// One seed: the four curves and the backbone's loss rate.
fn one_seed(text: &str, origin: &str, seed: u64) -> Result<Run> {
    let seed = toml::Value::Integer(i64::try_from(seed)?);
    let (simulation, summary) = run_scenario(text, origin, &[("run.seed", seed)])?;
    let curves = FLOWS
        .iter()
        .map(|(_, name)| curve(&summary, simulation.series(), name))
        .collect::<Result<Vec<_>>>()?;
    let backbone = summary
        .links
        .iter()
        .find(|l| l.direction == "r1->r2")
        .context("the scenario has a backbone r1 -> r2")?;
    let backbone_loss = if backbone.packets_offered > 0 {
        (backbone.queue_drops + backbone.channel_losses) as f64 / backbone.packets_offered as f64
    } else {
        0.0
    };
    Ok(Run {
        curves,
        backbone_loss,
    })
}

/// Flow `name`'s received bytes per series interval from `CURVE_FROM_S`.
fn curve(summary: &Summary, series: &TimeSeries, name: &str) -> Result<Curve> {
    let flow = series
        .flows
        .iter()
        .find(|f| f.name == name)
        .with_context(|| format!("the scenario has no flow `{name}`"))?;
    let tfrc = name.starts_with("tfrc");
    let keep = if tfrc { 1.0 - TFRC_DEDUCTION } else { 1.0 };
    let slot_s = SERIES_INTERVAL.as_secs_f64();
    let bytes: Vec<u64> = flow
        .rows
        .iter()
        .filter(|r| r.time_s > CURVE_FROM_S + 1e-9)
        .map(|r| (r.throughput_bps * slot_s / 8.0 * keep).floor() as u64)
        .collect();
    if bytes.is_empty() {
        bail!("flow `{name}` has no rows after {CURVE_FROM_S} s");
    }
    let rtt_s = summary
        .flows
        .iter()
        .find(|f| f.name == name)
        .and_then(|f| f.mean_rtt_s)
        .with_context(|| format!("flow `{name}` has no RTT"))?;
    Ok(Curve { bytes, rtt_s, tfrc })
}

/// A schedule's result for one seed: `None` when the curve never delivers
/// the whole video (a starved flow), other errors as they are.
fn deliverable<T>(result: Result<T, ScheduleError>) -> Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(ScheduleError::NeverDelivered { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// w* (seconds, TFRC's retransmission included) and x* of `curve`;
/// `None` when it never delivers the video.
fn plan_on_curve(playout: &Playout, curve: &Curve, slot: Duration) -> Result<Option<(f64, f64)>> {
    let plan = deliverable(end_to_end_plan(
        playout,
        &RateConstraint::Curve(curve.bytes.clone()),
    ))?;
    Ok(plan.map(|plan| {
        (
            plan.startup_delay_slots as f64 * slot.as_secs_f64() + curve.retransmission_s(),
            plan.client_buffer_bytes as f64,
        )
    }))
}

/// `stat` as "mean ± half", with how many of `seeds` seeds never
/// delivered the video when some did not.
fn show(stat: &Stat, seeds: usize, scale: f64, decimals: usize) -> String {
    let text = stat.show(scale, decimals);
    if stat.n < seeds {
        format!(
            "{text} ({} of {seeds} seeds never delivered the video)",
            seeds - stat.n
        )
    } else {
        text
    }
}

/// w* and x* at a fixed rate.
fn plan_at_rate(playout: &Playout, rate_bps: f64, slot: Duration) -> Result<(f64, f64)> {
    let rate = fairstream_proto::units::Rate::from_bits_per_sec(rate_bps);
    let plan = end_to_end_plan(
        playout,
        &RateConstraint::Fixed {
            bytes_per_slot: bytes_per_slot(rate, slot),
        },
    )?;
    Ok((
        plan.startup_delay_slots as f64 * slot.as_secs_f64(),
        plan.client_buffer_bytes as f64,
    ))
}

/// Table 1: a fixed rate, the mean of each curve.
fn table1(
    data: &PaperData,
    playout: &Playout,
    runs: &[Run],
    slot: Duration,
    page: &mut Page,
) -> Result<()> {
    let paper = data.table("table1")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph(
        "The fixed rate R is each curve's mean, as the paper's (\"the average throughput of the \
         curves shown in Fig. 6\"); TFRC's start-up delay includes one RTT for the \
         retransmission. \"At the paper's R\": our video at the paper's rate, without the RTT.",
    );
    let mut table = Table::new(&[
        "Case",
        "R [kbps]: paper",
        "ours",
        "w* [sec]: paper",
        "ours",
        "ours at the paper's R",
        "x* [bytes]: paper",
        "ours",
        "ours at the paper's R",
    ]);
    let mut ours_w = Vec::new();
    let mut ours_w_at_mean = Vec::new();
    let mut ours_r = Vec::new();
    for (i, (label, _)) in FLOWS.iter().enumerate() {
        let mut rates = Vec::new();
        let mut ws = Vec::new();
        let mut xs = Vec::new();
        let mut rtts = Vec::new();
        for run in runs {
            let curve = &run.curves[i];
            let rate = curve.mean_bps();
            let (w, x) = plan_at_rate(playout, rate, slot)?;
            rates.push(rate);
            ws.push(w + curve.retransmission_s());
            xs.push(x);
            rtts.push(curve.retransmission_s());
        }
        let paper_rate = paper.number(i, "R [kbps]")?.context("a rate in Table 1")?;
        let (w_at, x_at) = plan_at_rate(playout, paper_rate * 1e3, slot)?;
        let (rate, w, x) = (Stat::of(&rates), Stat::of(&ws), Stat::of(&xs));
        ours_w.push(w.mean);
        ours_r.push(rate.mean);
        ours_w_at_mean.push(plan_at_rate(playout, rate.mean, slot)?.0 + Stat::of(&rtts).mean);
        table.row(vec![
            (*label).to_owned(),
            paper.text(i, "R [kbps]")?.to_owned(),
            rate.show(1e-3, 1),
            paper.text(i, "w* [sec]")?.to_owned(),
            w.show(1.0, 1),
            format!("{w_at:.1}"),
            paper.text(i, "x* [bytes]")?.to_owned(),
            x.show(1.0, 0),
            format!("{x_at:.0}"),
        ]);
    }
    page.table(table);
    // The paper: "the initial buffering delay and the minimum buffer size
    // increases with decreasing average rate".
    let mut order: Vec<usize> = (0..ours_r.len()).collect();
    order.sort_by(|&a, &b| ours_r[b].total_cmp(&ours_r[a]));
    let rising = |w: &[f64]| order.windows(2).all(|o| w[o[1]] >= w[o[0]] - 1e-9);
    let (at_mean, means) = (rising(&ours_w_at_mean), rising(&ours_w));
    let mut line = format!(
        "The paper: \"the initial buffering delay and the minimum buffer size increases with \
         decreasing average rate\". Ours, the cases by falling mean R, w* at each case's mean \
         rate (TFRC's with its mean RTT added): it {}",
        if at_mean {
            "grows: the trend matches."
        } else {
            "does not always grow: the trend differs where TFRC's added RTT outweighs a small \
             difference in rate."
        }
    );
    if !means {
        line.push_str(
            " The means over the seeds in the table do not always grow: w* rises steeply as the \
             rate falls, so a seed whose flow nearly starved lifts its case's mean.",
        );
    }
    page.list(&[line]);
    Ok(())
}

/// Table 2: the wired curves as the constraint.
fn table2(
    data: &PaperData,
    playout: &Playout,
    runs: &[Run],
    slot: Duration,
    page: &mut Page,
) -> Result<()> {
    let paper = data.table("table2")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph("Streaming to a wired client, the wired curves as the constraint.");
    let mut table = Table::new(&[
        "Case",
        "w* [sec]: paper",
        "ours",
        "x* [bytes]: paper",
        "ours",
    ]);
    let mut means = Vec::new();
    for (row, curve_index) in [(0, 0), (1, 1)] {
        let mut ws = Vec::new();
        let mut xs = Vec::new();
        for run in runs {
            if let Some((w, x)) = plan_on_curve(playout, &run.curves[curve_index], slot)? {
                ws.push(w);
                xs.push(x);
            }
        }
        let (w, x) = (Stat::of(&ws), Stat::of(&xs));
        means.push((w.mean, x.mean));
        table.row(vec![
            paper.text(row, "Case")?.to_owned(),
            paper.text(row, "w* [sec]")?.to_owned(),
            show(&w, runs.len(), 1.0, 1),
            paper.text(row, "x* [bytes]")?.to_owned(),
            show(&x, runs.len(), 1.0, 0),
        ]);
    }
    page.table(table);
    let mut lines = Vec::new();
    let tfrc_rtt = Stat::of(&runs.iter().map(|r| r.curves[1].rtt_s).collect::<Vec<_>>());
    let why_not = format!(
        "TFRC's curve is smoother than TCP's, which should lower both; where ours is not \
         lower, TFRC's one RTT for the retransmission ({} s here, with the backbone's queue) \
         outweighs the smoothness.",
        tfrc_rtt.show(1.0, 2)
    );
    for (what, column, ours) in [
        ("w*", "w* [sec]", (means[0].0, means[1].0)),
        ("x*", "x* [bytes]", (means[0].1, means[1].1)),
    ] {
        let p = (
            paper.number(0, column)?.context("a number")?,
            paper.number(1, column)?.context("a number")?,
        );
        lines.push(super::compare::trend_line(
            &format!("TFRC's {what} against TCP's"),
            p,
            ours,
            &why_not,
        ));
    }
    page.list(&lines);
    Ok(())
}

/// Table 3: wireless streaming without a proxy (the wireless curves) and
/// with one (wired curve to the proxy, the 64 kbit/s bearer after it).
fn table3(
    data: &PaperData,
    playout: &Playout,
    runs: &[Run],
    slot: Duration,
    page: &mut Page,
) -> Result<()> {
    let paper = data.table("table3")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph(
        "Without a proxy the wireless curves constrain the whole path. With one, the TCP or \
         TFRC connection ends at the proxy (the wired curve) and a dedicated 64 kbit/s bearer \
         carries the stream on (paper 003 §3.2's two steps; TFRC's one RTT is the wired \
         path's).",
    );
    let bearer = RateConstraint::Fixed {
        bytes_per_slot: bytes_per_slot(
            fairstream_proto::units::Rate::from_bits_per_sec(BEARER_BPS),
            slot,
        ),
    };
    let mut table = Table::new(&[
        "Case",
        "w* [sec]: paper",
        "ours",
        "x* [bytes]: paper",
        "ours",
        "y' [bytes]: paper",
        "ours",
    ]);
    let mut w_means = Vec::new();
    let mut x_means = Vec::new();
    for (row, label, wireless, wired) in [
        (0, "without proxy", 2, None),
        (1, "without proxy", 3, None),
        (2, "with proxy", 0, Some(0)),
        (3, "with proxy", 1, Some(1)),
    ] {
        let (mut ws, mut xs, mut ys) = (Vec::new(), Vec::new(), Vec::new());
        for run in runs {
            match wired {
                None => {
                    if let Some((w, x)) = plan_on_curve(playout, &run.curves[wireless], slot)? {
                        ws.push(w);
                        xs.push(x);
                    }
                }
                Some(i) => {
                    let curve = &run.curves[i];
                    let Some(plan) = deliverable(proxy_plan(
                        playout,
                        &RateConstraint::Curve(curve.bytes.clone()),
                        &bearer,
                    ))?
                    else {
                        continue;
                    };
                    ws.push(
                        plan.startup_delay_slots as f64 * slot.as_secs_f64()
                            + curve.retransmission_s(),
                    );
                    xs.push(plan.client_buffer_bytes as f64);
                    ys.push(plan.proxy_buffer_bytes as f64);
                }
            }
        }
        let (w, x, y) = (Stat::of(&ws), Stat::of(&xs), Stat::of(&ys));
        w_means.push(w.mean);
        x_means.push(x.mean);
        table.row(vec![
            format!("{} ({label})", paper.text(row, "Case")?),
            paper.text(row, "w* [sec]")?.to_owned(),
            show(&w, runs.len(), 1.0, 1),
            paper.text(row, "x* [bytes]")?.to_owned(),
            show(&x, runs.len(), 1.0, 0),
            paper.text(row, "y' [bytes]")?.to_owned(),
            if wired.is_none() {
                "n.a.".to_owned()
            } else {
                show(&y, runs.len(), 1.0, 0)
            },
        ]);
    }
    page.table(table);
    let mut lines = Vec::new();
    for (name, without, with) in [("TCP", 0, 2), ("TFRC", 1, 3)] {
        for (what, column, means, decimals) in [
            ("w*", "w* [sec]", &w_means, 1),
            ("x*", "x* [bytes]", &x_means, 0),
        ] {
            let p = (
                paper.number(without, column)?.context("a number")?,
                paper.number(with, column)?.context("a number")?,
            );
            let o = (means[without], means[with]);
            let same = Direction::of(p.0, p.1, 0.02) == Direction::of(o.0, o.1, 0.02);
            lines.push(format!(
                "{name}, {what} with a proxy against without: the paper's {} → {} (÷{:.1}), ours \
                 {:.decimals$} → {:.decimals$} (÷{:.1}){}",
                p.0,
                p.1,
                p.0 / p.1,
                o.0,
                o.1,
                o.0 / o.1,
                if same {
                    ": the trend matches."
                } else {
                    ": the trend differs."
                }
            ));
        }
    }
    page.list(&lines);
    Ok(())
}

/// The streamed runs' video packets: 1000 bytes, as the curves' flows.
const STREAM_PACKET_BYTES: u64 = 1000;
/// When the streams start: after the backbone's first `CURVE_FROM_S`.
const STREAM_START: &str = "30s";
/// The proxy's bearer rate in application bytes: the 64 kbit/s link less
/// what RTP's packets carry as DCCP, IP and UDP headers (about 6 %).
const PROXY_BEARER: &str = "60kbit";
/// The streamed cases: the label, the flow of backbone.toml that carries it,
/// and the proxy's node (`None`: end to end to the wireless client).
const STREAMED: [(&str, &str, Option<&str>); 4] = [
    ("TCP, no proxy", "tcp-wireless", None),
    ("TFRC, no proxy", "tfrc-wireless", None),
    ("TCP, proxy", "tcp-wired", Some("tcp1")),
    ("TFRC, proxy", "tfrc-wired", Some("tfrc1")),
];

/// The backbone scenario with the four measured flows streaming the video
/// (`video`: an EvalVid trace) from `STREAM_START`: over the wireless
/// clients' paths end to end, and through a proxy at the wired clients
/// (`tcp1`, `tfrc1`), each given a wireless client of its own behind a
/// copy of the wireless link. TCP carries RTP (RFC 4571); TFRC runs without
/// retransmission.
fn streamed_scenario(base: &str, video: &Path) -> Result<String> {
    use toml::Value;
    let mut value: Value = toml::from_str(base)?;
    let table = value.as_table_mut().context("a scenario table")?;
    let wireless = table
        .get("link")
        .and_then(Value::as_array)
        .and_then(|links| {
            links.iter().find(|l| {
                l.get("between")
                    .and_then(Value::as_array)
                    .is_some_and(|b| b.iter().any(|n| n.as_str() == Some("mobile-tcp")))
            })
        })
        .cloned()
        .context("backbone.toml has a link to mobile-tcp")?;
    let media = |tcp: bool| -> Value {
        let mut media = toml::map::Map::new();
        media.insert("source".into(), Value::String(video.display().to_string()));
        media.insert("fps".into(), Value::Float(FPS));
        media.insert("mode".into(), Value::String("on-demand".into()));
        media.insert("startup_delay".into(), Value::String("auto".into()));
        if !tcp {
            media.insert("arq".into(), Value::String("off".into()));
        }
        Value::Table(media)
    };
    for (_, _, proxy) in STREAMED {
        let Some(node) = proxy else { continue };
        let client = format!("mobile-{node}");
        let mut entry = toml::map::Map::new();
        entry.insert("name".into(), Value::String(client.clone()));
        table
            .get_mut("node")
            .and_then(Value::as_array_mut)
            .context("nodes")?
            .push(Value::Table(entry));
        let mut link = wireless.clone();
        if let Some(link) = link.as_table_mut() {
            link.insert(
                "between".into(),
                Value::Array(vec![Value::String(node.to_owned()), Value::String(client)]),
            );
        }
        table
            .get_mut("link")
            .and_then(Value::as_array_mut)
            .context("links")?
            .push(link);
    }
    let flows = table
        .get_mut("flow")
        .and_then(Value::as_array_mut)
        .context("flows")?;
    for (_, flow_name, proxy) in STREAMED {
        let flow = flows
            .iter_mut()
            .find(|f| f.get("name").and_then(Value::as_str) == Some(flow_name))
            .and_then(Value::as_table_mut)
            .with_context(|| format!("backbone.toml has no flow {flow_name}"))?;
        let tcp = flow_name.starts_with("tcp");
        flow.insert("start".into(), Value::String(STREAM_START.into()));
        flow.insert("media".into(), media(tcp));
        if let Some(node) = proxy {
            flow.insert("to".into(), Value::String(format!("mobile-{node}")));
            let mut transport = toml::map::Map::new();
            transport.insert("cc".into(), Value::String("fixed".into()));
            transport.insert("rate".into(), Value::String(PROXY_BEARER.into()));
            transport.insert(
                "packet_size".into(),
                Value::Integer(i64::try_from(STREAM_PACKET_BYTES)?),
            );
            let mut proxy = toml::map::Map::new();
            proxy.insert("at".into(), Value::String(node.to_owned()));
            proxy.insert("transport".into(), Value::Table(transport));
            flow.insert("proxy".into(), Value::Table(proxy));
        }
    }
    Ok(toml::to_string(&value)?)
}

/// What one streamed case measured in one run.
#[derive(Clone, Copy, Debug, Default)]
struct Streamed {
    /// The client's start-up delay (paper 003's minimum, from arrivals).
    startup_s: f64,
    /// The most bytes of complete frames the client held.
    client_bytes: f64,
    /// The most bytes the proxy held (proxied cases).
    proxy_bytes: Option<f64>,
    /// Frames shown, of the video's.
    shown: u64,
    total: u64,
}

/// The most bytes of complete frames a client holds: each frame counts
/// from its last packet's arrival to its deadline.
fn client_peak(sizes: &[u64], frames: &[fairstream_media::playout::FramePlayout]) -> f64 {
    let mut events: Vec<(f64, i64)> = Vec::new();
    for (frame, size) in frames.iter().zip(sizes) {
        if let (Some(arrival), true) = (frame.last_arrival_s, frame.displayed) {
            let size = i64::try_from(*size).unwrap_or(i64::MAX);
            events.push((arrival, size));
            events.push((frame.deadline_s.max(arrival), -size));
        }
    }
    // At equal times a frame leaves before the next arrives.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut held, mut peak) = (0i64, 0i64);
    for (_, change) in events {
        held += change;
        peak = peak.max(held);
    }
    peak as f64
}

/// One seed of the streamed runs.
fn stream_seed(text: &str, origin: &str, seed: u64, sizes: &[u64]) -> Result<Vec<Streamed>> {
    let seed = toml::Value::Integer(i64::try_from(seed)?);
    let (_, summary) = run_scenario(text, origin, &[("run.seed", seed)])?;
    STREAMED
        .iter()
        .map(|(_, name, _)| {
            let flow = summary
                .flows
                .iter()
                .find(|f| f.name == *name)
                .with_context(|| format!("no flow {name}"))?;
            let report = match &flow.media {
                Some(MediaOutcome::Report(report)) => report,
                Some(MediaOutcome::Error { error }) => bail!("flow {name}: {error}"),
                None => bail!("flow {name} has no media verdict"),
            };
            Ok(Streamed {
                startup_s: report.playout.startup_delay_s,
                client_bytes: client_peak(sizes, &report.playout.frames),
                proxy_bytes: flow.proxy.map(|p| p.max_bytes as f64),
                shown: report.playout.frames_displayed,
                total: report.playout.frames_total,
            })
        })
        .collect()
}

/// Table 3 streamed: the video sent through the simulator, end to end and
/// through the proxy node, its start-up delay and buffers measured.
fn table3_streamed(context: &Runner, data: &PaperData, seeds: u64, page: &mut Page) -> Result<()> {
    let paper = data.table("table3")?;
    let trace = video_trace()?;
    let sizes: Vec<u64> = trace.iter().map(|f| f.size_bytes).collect();
    let video = context.work_path("paper003-video.st");
    std::fs::write(&video, format_sender_trace(&trace))
        .with_context(|| format!("cannot write {}", video.display()))?;
    let video = video.canonicalize()?;
    let path = context.input_path("paper003/backbone.toml");
    let base = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let text = streamed_scenario(&base, &video)?;
    // Kept beside the video, so that a run can be repeated by hand with
    // `fairstream simulate`.
    let kept = context.work_path("paper003-streamed.toml");
    std::fs::write(&kept, &text).with_context(|| format!("cannot write {}", kept.display()))?;
    let origin = path.display().to_string();
    let runs = in_parallel(seeds, context, |seed| {
        stream_seed(&text, &origin, seed, &sizes)
    })?;
    if !context.quiet() {
        eprintln!("reproduce: {seeds} streamed runs of the paper 003 backbone");
    }
    page.heading(2, "Table 3 streamed: the video through the simulator");
    page.paragraph(&format!(
        "The schedules above are computed on rate curves, as the paper's are. Here the video is \
         sent: the same backbone, the four measured flows carrying the video from {STREAM_START} \
         on (on demand, 1000-byte packets), end to end to the wireless clients, and through the \
         simulator's proxy node at the wired clients (a copy of the 64 kbit/s, 200 ms wireless \
         link behind each; the proxy's bearer a DCCP CCID 249 connection at {PROXY_BEARER} of \
         RTP, the link less headers). TCP carries RTP framed as RFC 4571 says; TFRC runs without \
         retransmission (the schedules' 5 % and one RTT stand for the paper's one retry). \
         Measured at the client: the start-up delay (the least that shows every frame that \
         arrived on time, paper 003's minimum), the most bytes of complete frames it held, and \
         the most the proxy held. {seeds} seed{} (mean ± 95 % interval).",
        if seeds == 1 { "" } else { "s" }
    ));
    let mut table = Table::new(&[
        "Case",
        "w [sec]: paper (w*)",
        "streamed",
        "x [bytes]: paper (x*)",
        "streamed",
        "y [bytes]: paper (y')",
        "streamed",
        "frames shown",
    ]);
    for (row, (label, _, proxy)) in STREAMED.iter().enumerate() {
        let values = |f: &dyn Fn(&Streamed) -> Option<f64>| -> Stat {
            Stat::of(
                &runs
                    .iter()
                    .filter_map(|r| r.get(row).and_then(f))
                    .collect::<Vec<_>>(),
            )
        };
        let w = values(&|s| Some(s.startup_s));
        let x = values(&|s| Some(s.client_bytes));
        let y = values(&|s| s.proxy_bytes);
        let shown: u64 = runs
            .iter()
            .filter_map(|r| r.get(row))
            .map(|s| s.shown)
            .sum();
        let total: u64 = runs
            .iter()
            .filter_map(|r| r.get(row))
            .map(|s| s.total)
            .sum();
        table.row(vec![
            (*label).to_owned(),
            paper.text(row, "w* [sec]")?.to_owned(),
            show(&w, runs.len(), 1.0, 1),
            paper.text(row, "x* [bytes]")?.to_owned(),
            show(&x, runs.len(), 1.0, 0),
            paper.text(row, "y' [bytes]")?.to_owned(),
            if proxy.is_some() {
                show(&y, runs.len(), 1.0, 0)
            } else {
                "n.a.".to_owned()
            },
            format!("{shown} of {total}"),
        ]);
    }
    page.table(table);
    Ok(())
}

/// Fig. 4: the video's playout vector.
fn fig4(playout: &Playout, slot: Duration) -> Result<Chart> {
    let points: Vec<(f64, f64)> = playout
        .cumulative()
        .iter()
        .enumerate()
        .map(|(k, d)| (k as f64 * slot.as_secs_f64(), *d as f64 / 1e3))
        .collect();
    Ok(Chart::new(
        "Fig. 4: playout vector D_k of the video",
        "time (s)",
        "data played out (kbytes)",
    )
    .series(Series::new("D_k", points, Style::Step))
    .y_from_zero())
}

/// Fig. 6: cumulative data received by the four clients (seed 1).
fn fig6(run: &Run, page: &mut Page) -> Result<()> {
    let slot_s = SERIES_INTERVAL.as_secs_f64();
    let mut chart = Chart::new(
        "Fig. 6: TFRC and TCP to wired and wireless clients (seed 1)",
        "time (s)",
        "data received (kbytes)",
    )
    .y_from_zero();
    for ((label, _), curve) in FLOWS.iter().zip(&run.curves) {
        let mut total = 0u64;
        let points: Vec<(f64, f64)> = curve
            .bytes
            .iter()
            .enumerate()
            .map(|(k, b)| {
                total += b;
                ((k + 1) as f64 * slot_s, total as f64 / 1e3)
            })
            .collect();
        chart = chart.series(Series::new(label, points, Style::Line));
    }
    page.heading(2, "Fig. 6: the rate curves");
    page.paragraph(
        "Data received from 30 s on (time 0 here), TFRC's less 5 %, as the paper's Fig. 6 (which \
         draws its last 60 s). The paper prints no values for it beyond the mean rates of \
         Table 1.",
    );
    page.chart("fig6-rate-curves", chart);
    Ok(())
}

/// Figs. 7 and 8: the schedules of seed 1, end to end to the wireless
/// client and through the proxy, for TCP and TFRC.
fn fig7_and_8(run: &Run, playout: &Playout, slot: Duration, page: &mut Page) -> Result<()> {
    page.heading(2, "Figs. 7 and 8: the schedules (seed 1)");
    page.paragraph(
        "Cumulative data over time. Fig. 7, end to end to the wireless client: what the \
         wireless curve could carry, the latest schedule S_late that meets every frame's \
         deadline, and the playout D delayed by w*. Fig. 8, through the proxy: the server's \
         schedule to the proxy (S_early' on the wired curve), the proxy's to the client on the \
         64 kbit/s bearer, and the playout delayed by w*. The w* in the titles is the \
         schedule's own, without TFRC's retransmission RTT. The paper draws these without \
         values.",
    );
    let bearer = RateConstraint::Fixed {
        bytes_per_slot: bytes_per_slot(
            fairstream_proto::units::Rate::from_bits_per_sec(BEARER_BPS),
            slot,
        ),
    };
    for (name, wireless, wired) in [("TCP", 2, 0), ("TFRC", 3, 1)] {
        let curve = &run.curves[wireless];
        let constraint = RateConstraint::Curve(curve.bytes.clone());
        if let Some(plan) = deliverable(end_to_end_plan(playout, &constraint))? {
            let slots = plan.schedule.cumulative_bytes.len();
            let carried = cumulative_capacity(&constraint, slots);
            let w = plan.startup_delay_slots;
            let chart = schedule_chart(
                &format!("Fig. 7: end to end to the wireless client over {name}"),
                w,
                slot,
                [
                    ("the wireless curve's capacity", &carried, Style::Line),
                    (
                        "sent (S_late)",
                        &plan.schedule.cumulative_bytes,
                        Style::Step,
                    ),
                    (
                        "played out (D delayed by w*)",
                        &delayed_playout(playout, w, slots),
                        Style::Step,
                    ),
                ],
            );
            page.chart(&format!("fig7-{}", name.to_ascii_lowercase()), chart);
        }
        let wired_curve = RateConstraint::Curve(run.curves[wired].bytes.clone());
        if let Some(plan) = deliverable(proxy_plan(playout, &wired_curve, &bearer))? {
            let w = plan.startup_delay_slots;
            let slots = plan
                .proxy_schedule
                .cumulative_bytes
                .len()
                .max(plan.server_schedule.cumulative_bytes.len());
            let chart = schedule_chart(
                &format!("Fig. 8: through the proxy over {name}"),
                w,
                slot,
                [
                    (
                        "server to proxy (S_early')",
                        &plan.server_schedule.cumulative_bytes,
                        Style::Step,
                    ),
                    (
                        "proxy to client",
                        &plan.proxy_schedule.cumulative_bytes,
                        Style::Step,
                    ),
                    (
                        "played out (D delayed by w*)",
                        &delayed_playout(playout, w, slots),
                        Style::Step,
                    ),
                ],
            );
            page.chart(&format!("fig8-{}", name.to_ascii_lowercase()), chart);
        }
    }
    Ok(())
}
