//! `fairstream schedule`: paper 003's smoothing schedules for a stored
//! video — the minimum start-up delay w*, the minimum client buffer x*, and
//! with a proxy the proxy buffer y'.
//!
//! ```text
//! fairstream schedule --source clip.264 --rate 64kbit --fps 15
//! fairstream schedule --source video.st --rate-curve tfrc.txt --proxy-rate 64kbit --json
//! fairstream schedule --source video.st --rate-curve run/flows/tfrc.csv --curve-from 30s \
//!     --deduct 5% --out schedules/
//! ```
//!
//! A rate curve is either one rate a line, or the per-flow CSV that
//! `fairstream simulate --out` writes (a `time_s` column and the received
//! rate in `throughput_bps`, a row per interval), so the schedules of
//! paper 003's Figs. 7 and 8 come straight from a simulated run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{ArgGroup, Args};
use fairstream_media::evalvid::read_sender_trace;
use fairstream_media::h264::parse_stream;
use fairstream_media::schedule::{end_to_end_plan, proxy_plan, Playout, RateConstraint};
use fairstream_proto::units::{parse_duration, Rate};
use fairstream_report::{Chart, Series, Style};
use serde::Serialize;

/// Arguments of `fairstream schedule`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("constraint").required(true).args(["rate", "rate_curve"])))]
pub(crate) struct ScheduleArgs {
    /// The video: an H.264 Annex B file (.264) or an EvalVid sender trace (.st).
    #[arg(long, value_name = "FILE")]
    source: PathBuf,
    /// A fixed rate for the sender's path (64kbit, 1mbit).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    rate: Option<Rate>,
    /// A rate per slot instead: one rate a line (64kbit, or bits/s), the last
    /// repeating, `#` starting a comment; or a flow's CSV from `fairstream
    /// simulate --out` (flows/NAME.csv: its `throughput_bps` by `time_s`,
    /// resampled to the slots)
    #[arg(long, value_name = "FILE")]
    rate_curve: Option<PathBuf>,
    /// With a simulator CSV: the column to read instead of throughput_bps
    #[arg(long, value_name = "NAME", requires = "rate_curve")]
    column: Option<String>,
    /// With a simulator CSV: the curve starts at this time of the run (paper
    /// 003 drops the first 30 s: "slow-start effects are not taken into
    /// account")
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, requires = "rate_curve")]
    curve_from: Option<Duration>,
    /// Lower the path's rate by this share (5% or 0.05): paper 003 deducts 5 %
    /// from TFRC's curves to leave room for one retransmission
    #[arg(long, value_name = "SHARE", value_parser = parse_share)]
    deduct: Option<f64>,
    /// With a proxy: the rate of the dedicated hop from the proxy to the
    /// client; --rate or --rate-curve is then the server's path to the proxy.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    proxy_rate: Option<Rate>,
    /// Frames per second of the video.
    #[arg(long, default_value_t = 25.0)]
    fps: f64,
    /// The slot length (default: one frame period).
    #[arg(long, value_name = "DURATION", value_parser = parse_slot)]
    slot: Option<Duration>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Write the schedules (schedule.csv, a row per slot, cumulative bytes)
    /// and their plot (schedule.png) into this directory (created if
    /// missing)
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

fn parse_duration_arg(text: &str) -> Result<Duration, String> {
    parse_duration(text).map_err(|e| e.to_string())
}

/// A share as `5%` or `0.05`, in [0, 1).
fn parse_share(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let share = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.parse::<f64>(),
    }
    .map_err(|_| format!("{text:?} is not a share (such as 5% or 0.05)"))?;
    if !(0.0..1.0).contains(&share) {
        return Err(format!("{text} is outside [0, 100 %)"));
    }
    Ok(share)
}

fn parse_rate(text: &str) -> Result<Rate, String> {
    let rate: Rate = text.parse().map_err(|e| format!("{e}"))?;
    if rate.bits_per_sec() <= 0.0 {
        return Err("the rate must be greater than zero".to_owned());
    }
    Ok(rate)
}

fn parse_slot(text: &str) -> Result<Duration, String> {
    let slot = parse_duration(text).map_err(|e| e.to_string())?;
    if slot.is_zero() {
        return Err("the slot must be longer than zero".to_owned());
    }
    Ok(slot)
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Output {
    frames: usize,
    slot_s: f64,
    startup_delay_slots: usize,
    startup_delay_s: f64,
    client_buffer_bytes: u64,
    proxy_buffer_bytes: Option<u64>,
}

/// Frame sizes of the source, in decoding order.
fn frame_sizes(path: &Path) -> anyhow::Result<Vec<u64>> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("264" | "h264") => {
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            let report = parse_stream(&bytes).with_context(|| path.display().to_string())?;
            Ok(report
                .access_units
                .iter()
                .map(|au| au.size_bytes() as u64)
                .collect())
        }
        Some("st" | "trace" | "txt") => Ok(read_sender_trace(path)?
            .iter()
            .map(|f| f.size_bytes)
            .collect()),
        _ => bail!(
            "{}: expected an H.264 Annex B file (.264) or an EvalVid sender trace (.st)",
            path.display()
        ),
    }
}

/// The playout vector of frames of `sizes` bytes shown at `fps`, in slots
/// of `slot`: frame i plays at i / fps.
pub(crate) fn playout_in_slots(
    sizes: &[u64],
    fps: f64,
    slot: Duration,
) -> Result<Playout, fairstream_media::schedule::ScheduleError> {
    let mut per_slot: Vec<u64> = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        let index = ((i as f64 / fps) / slot.as_secs_f64() + 1e-9).floor() as usize;
        if per_slot.len() <= index {
            per_slot.resize(index + 1, 0);
        }
        per_slot[index] += size;
    }
    Playout::from_frame_sizes(&per_slot)
}

/// Bytes per slot of a rate, at least one.
pub(crate) fn bytes_per_slot(rate: Rate, slot: Duration) -> u64 {
    (rate.bytes_per_sec() * slot.as_secs_f64()).floor().max(1.0) as u64
}

/// How a rate curve file is read.
#[derive(Clone, Debug, Default)]
struct CurveOptions {
    /// The simulator CSV's column (default `throughput_bps`).
    column: Option<String>,
    /// Where a simulator CSV's curve starts.
    from: Option<Duration>,
    /// The share taken off every slot.
    deduct: f64,
}

fn read_curve(
    path: &Path,
    slot: Duration,
    options: &CurveOptions,
) -> anyhow::Result<RateConstraint> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let first = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .find(|l| !l.is_empty());
    let keep = 1.0 - options.deduct;
    if first.is_some_and(|l| l.contains(',')) {
        let values = simulator_curve(&text, path, slot, options)?;
        return Ok(RateConstraint::Curve(values));
    }
    if options.column.is_some() || options.from.is_some() {
        bail!(
            "{}: --column and --curve-from read a simulator CSV (flows/NAME.csv); this file has \
             one rate a line",
            path.display()
        );
    }
    let mut values = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let rate = match line.parse::<f64>() {
            Ok(bits) if bits.is_finite() && bits >= 0.0 => Rate::from_bits_per_sec(bits),
            Ok(_) => bail!(
                "{}, line {}: {line:?} is not a rate",
                path.display(),
                index + 1
            ),
            Err(_) => line
                .parse::<Rate>()
                .map_err(|e| anyhow::anyhow!("{}, line {}: {e}", path.display(), index + 1))?,
        };
        values.push((rate.bytes_per_sec() * slot.as_secs_f64() * keep).floor() as u64);
    }
    if values.is_empty() {
        bail!("{}: no rates in the file", path.display());
    }
    Ok(RateConstraint::Curve(values))
}

/// Bytes per slot from a simulator CSV: the column's rate over each row's
/// interval (from the row before, or from `from`), cumulated from
/// `options.from` and cut into slots (linear within a row), less the
/// deduction.
fn simulator_curve(
    text: &str,
    path: &Path,
    slot: Duration,
    options: &CurveOptions,
) -> anyhow::Result<Vec<u64>> {
    let name = options.column.as_deref().unwrap_or("throughput_bps");
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = lines
        .next()
        .map(|(_, l)| l.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let find = |column: &str| {
        header.iter().position(|h| *h == column).with_context(|| {
            format!(
                "{}: no `{column}` column in its header ({})",
                path.display(),
                header.join(", ")
            )
        })
    };
    let (time_at, rate_at) = (find("time_s")?, find(name)?);
    let from = options.from.unwrap_or(Duration::ZERO).as_secs_f64();
    // (end of the row's interval, cumulative bytes from `from` by then).
    let mut points: Vec<(f64, f64)> = vec![(from, 0.0)];
    let mut previous = 0.0f64;
    for (index, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').collect();
        let cell = |at: usize, what: &str| -> anyhow::Result<f64> {
            let text = cells.get(at).map(|c| c.trim()).unwrap_or("");
            let value: f64 = if text.is_empty() {
                0.0
            } else {
                text.parse().map_err(|_| {
                    anyhow::anyhow!(
                        "{}, line {}: {what} {text:?} is not a number",
                        path.display(),
                        index + 1
                    )
                })?
            };
            if !value.is_finite() || value < 0.0 {
                bail!(
                    "{}, line {}: {what} {value} is not a time or rate",
                    path.display(),
                    index + 1
                );
            }
            Ok(value)
        };
        let (end, rate) = (cell(time_at, "time_s")?, cell(rate_at, name)?);
        let begin = previous.max(from);
        previous = previous.max(end);
        if end <= begin {
            continue;
        }
        let (_, total) = points.last().copied().unwrap_or((from, 0.0));
        points.push((end, total + rate / 8.0 * (end - begin)));
    }
    let Some(&(last, total)) = points.last() else {
        bail!("{}: no rows", path.display());
    };
    if last <= from || total <= 0.0 {
        bail!(
            "{}: `{name}` carries nothing after {from} s (the curve must deliver the video)",
            path.display()
        );
    }
    // Cumulative bytes at time t (t from `from`), linear within a row.
    let at = |t: f64| -> f64 {
        let t = from + t;
        let k = points.partition_point(|p| p.0 < t);
        match (k.checked_sub(1).and_then(|i| points.get(i)), points.get(k)) {
            (Some(a), Some(b)) if b.0 > a.0 => a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0),
            (_, Some(b)) => b.1,
            (Some(a), None) => a.1,
            (None, None) => 0.0,
        }
    };
    let slot_s = slot.as_secs_f64();
    let slots = ((last - from) / slot_s).floor() as usize;
    if slots == 0 {
        bail!("{}: the curve is shorter than one slot", path.display());
    }
    let keep = 1.0 - options.deduct;
    Ok((0..slots)
        .map(|j| {
            let bytes = (at((j + 1) as f64 * slot_s) * keep).floor()
                - (at(j as f64 * slot_s) * keep).floor();
            bytes.max(0.0) as u64
        })
        .collect())
}

/// Cumulative kbytes per slot, as chart points.
pub(crate) fn cumulative_points(values: &[u64], slot: Duration) -> Vec<(f64, f64)> {
    values
        .iter()
        .enumerate()
        .map(|(k, v)| ((k + 1) as f64 * slot.as_secs_f64(), *v as f64 / 1e3))
        .collect()
}

/// The playout vector delayed by `w` slots (`D_{k−w}`), to the schedule's
/// length `slots`.
pub(crate) fn delayed_playout(playout: &Playout, w: usize, slots: usize) -> Vec<u64> {
    let d = playout.cumulative();
    (0..slots)
        .map(|k| {
            k.checked_sub(w)
                .map_or(0, |i| d.get(i).copied().unwrap_or(playout.total()))
        })
        .collect()
}

/// A chart of cumulative schedules (bytes by the end of each slot), titled
/// with the start-up delay `w` slots.
pub(crate) fn schedule_chart(
    title: &str,
    w: usize,
    slot: Duration,
    lines: [(&str, &[u64], Style); 3],
) -> Chart {
    let mut chart = Chart::new(
        &format!("{title} (w* = {:.1} s)", w as f64 * slot.as_secs_f64()),
        "time (s)",
        "data (kbytes)",
    )
    .y_from_zero();
    for (name, values, style) in lines {
        chart = chart.series(Series::new(name, cumulative_points(values, slot), style));
    }
    chart
}

/// What the path can have carried by the end of each of `slots` slots.
pub(crate) fn cumulative_capacity(constraint: &RateConstraint, slots: usize) -> Vec<u64> {
    let mut total = 0u64;
    (0..slots)
        .map(|k| {
            total = total.saturating_add(constraint.at(k));
            total
        })
        .collect()
}

/// Writes schedule.csv and schedule.png into `dir`: a row per slot with the
/// path's capacity, the schedules and the playout delayed by w*, all
/// cumulative bytes by the end of the slot.
fn write_schedules(
    dir: &Path,
    slot: Duration,
    w: usize,
    columns: &[(&str, Vec<u64>, Style)],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let rows = columns.iter().map(|(_, v, _)| v.len()).max().unwrap_or(0);
    let mut csv = String::from("slot,time_s");
    for (name, _, _) in columns {
        csv.push(',');
        csv.push_str(name);
    }
    csv.push('\n');
    for k in 0..rows {
        csv.push_str(&format!("{k},{:.6}", (k + 1) as f64 * slot.as_secs_f64()));
        for (_, values, _) in columns {
            // A schedule that has ended keeps its total.
            let value = values.get(k).or(values.last()).copied().unwrap_or(0);
            csv.push_str(&format!(",{value}"));
        }
        csv.push('\n');
    }
    let path = dir.join("schedule.csv");
    std::fs::write(&path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    let [a, b, c] = [0, 1, 2].map(|i| columns.get(i));
    if let (Some(a), Some(b), Some(c)) = (a, b, c) {
        let chart = schedule_chart(
            "Paper 003's schedules",
            w,
            slot,
            [(a.0, &a.1, a.2), (b.0, &b.1, b.2), (c.0, &c.1, c.2)],
        );
        let path = dir.join("schedule.png");
        chart
            .write_png(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Runs `fairstream schedule`.
pub(crate) fn run(args: &ScheduleArgs) -> anyhow::Result<()> {
    if !(args.fps > 0.0 && args.fps <= 240.0) {
        bail!("--fps {} is outside (0, 240]", args.fps);
    }
    let frame_period = Duration::from_secs_f64(1.0 / args.fps);
    let slot = args.slot.unwrap_or(frame_period);
    let sizes = frame_sizes(&args.source)?;
    let playout = playout_in_slots(&sizes, args.fps, slot)?;
    let deduct = args.deduct.unwrap_or(0.0);
    let constraint = match (&args.rate, &args.rate_curve) {
        (Some(rate), _) => RateConstraint::Fixed {
            bytes_per_slot: bytes_per_slot(
                Rate::from_bits_per_sec(rate.bits_per_sec() * (1.0 - deduct)),
                slot,
            ),
        },
        (None, Some(path)) => read_curve(
            path,
            slot,
            &CurveOptions {
                column: args.column.clone(),
                from: args.curve_from,
                deduct,
            },
        )?,
        (None, None) => bail!("give --rate or --rate-curve"),
    };
    let (startup_delay_slots, client_buffer_bytes, proxy_buffer_bytes, columns) =
        match args.proxy_rate {
            None => {
                let plan = end_to_end_plan(&playout, &constraint)?;
                let w = plan.startup_delay_slots;
                let slots = plan.schedule.cumulative_bytes.len();
                let columns = vec![
                    (
                        "capacity_bytes",
                        cumulative_capacity(&constraint, slots),
                        Style::Line,
                    ),
                    ("s_late_bytes", plan.schedule.cumulative_bytes, Style::Step),
                    (
                        "playout_bytes",
                        delayed_playout(&playout, w, slots),
                        Style::Step,
                    ),
                ];
                (w, plan.client_buffer_bytes, None, columns)
            }
            Some(proxy) => {
                let wireless = RateConstraint::Fixed {
                    bytes_per_slot: bytes_per_slot(proxy, slot),
                };
                let plan = proxy_plan(&playout, &constraint, &wireless)?;
                let w = plan.startup_delay_slots;
                let slots = plan
                    .proxy_schedule
                    .cumulative_bytes
                    .len()
                    .max(plan.server_schedule.cumulative_bytes.len());
                let columns = vec![
                    (
                        "server_to_proxy_bytes",
                        plan.server_schedule.cumulative_bytes,
                        Style::Step,
                    ),
                    (
                        "proxy_to_client_bytes",
                        plan.proxy_schedule.cumulative_bytes,
                        Style::Step,
                    ),
                    (
                        "playout_bytes",
                        delayed_playout(&playout, w, slots),
                        Style::Step,
                    ),
                ];
                (
                    w,
                    plan.client_buffer_bytes,
                    Some(plan.proxy_buffer_bytes),
                    columns,
                )
            }
        };
    if let Some(dir) = &args.out {
        write_schedules(dir, slot, startup_delay_slots, &columns)?;
    }
    let output = Output {
        frames: sizes.len(),
        slot_s: slot.as_secs_f64(),
        startup_delay_slots,
        startup_delay_s: startup_delay_slots as f64 * slot.as_secs_f64(),
        client_buffer_bytes,
        proxy_buffer_bytes,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&output)?);
        return Ok(());
    }
    println!(
        "{} frames in slots of {:.4} s: minimum start-up delay w* = {} slots ({:.3} s), \
         minimum client buffer x* = {} bytes{}",
        output.frames,
        output.slot_s,
        output.startup_delay_slots,
        output.startup_delay_s,
        output.client_buffer_bytes,
        output
            .proxy_buffer_bytes
            .map_or_else(String::new, |y| format!(", proxy buffer y' = {y} bytes"))
    );
    if let Some(dir) = &args.out {
        println!(
            "schedules: {}, plot: {}",
            dir.join("schedule.csv").display(),
            dir.join("schedule.png").display()
        );
    }
    Ok(())
}
