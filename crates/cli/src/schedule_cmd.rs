//! `fairstream schedule`: paper 003's smoothing schedules for a stored
//! video — the minimum start-up delay w*, the minimum client buffer x*, and
//! with a proxy the proxy buffer y'.
//!
//! ```text
//! fairstream schedule --source clip.264 --rate 64kbit --fps 15
//! fairstream schedule --source video.st --rate-curve tfrc.txt --proxy-rate 64kbit --json
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{ArgGroup, Args};
use fairstream_media::evalvid::read_sender_trace;
use fairstream_media::h264::parse_stream;
use fairstream_media::schedule::{end_to_end_plan, proxy_plan, Playout, RateConstraint};
use fairstream_proto::units::{parse_duration, Rate};
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
    /// repeating; `#` starts a comment.
    #[arg(long, value_name = "FILE")]
    rate_curve: Option<PathBuf>,
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

fn read_curve(path: &Path, slot: Duration) -> anyhow::Result<RateConstraint> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
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
        values.push((rate.bytes_per_sec() * slot.as_secs_f64()).floor() as u64);
    }
    if values.is_empty() {
        bail!("{}: no rates in the file", path.display());
    }
    Ok(RateConstraint::Curve(values))
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
    let constraint = match (&args.rate, &args.rate_curve) {
        (Some(rate), _) => RateConstraint::Fixed {
            bytes_per_slot: bytes_per_slot(*rate, slot),
        },
        (None, Some(path)) => read_curve(path, slot)?,
        (None, None) => bail!("give --rate or --rate-curve"),
    };
    let (startup_delay_slots, client_buffer_bytes, proxy_buffer_bytes) = match args.proxy_rate {
        None => {
            let plan = end_to_end_plan(&playout, &constraint)?;
            (plan.startup_delay_slots, plan.client_buffer_bytes, None)
        }
        Some(proxy) => {
            let wireless = RateConstraint::Fixed {
                bytes_per_slot: bytes_per_slot(proxy, slot),
            };
            let plan = proxy_plan(&playout, &constraint, &wireless)?;
            (
                plan.startup_delay_slots,
                plan.client_buffer_bytes,
                Some(plan.proxy_buffer_bytes),
            )
        }
    };
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
    Ok(())
}
