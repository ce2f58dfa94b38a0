//! `fairstream demo`: the README's first command. On loopback it starts an
//! emulated lossy wireless link, streams generated video across it with
//! one TFRC connection and then with the multi-connection default, prints
//! a side-by-side table and writes an HTML report with plots.
//!
//! - [`mod@run`]: one run, emulator, receiver and sender on threads;
//! - [`quality`]: the received video decoded and compared with the source;
//! - [`table`]: the figures, the table and the conclusion;
//! - [`charts`] and [`report`]: the charts, the report page (`index.html`,
//!   `index.md`, the charts as PNG files) and `summary.json`.

// The demo runs on the real clock: it times its runs and its progress.
#![allow(clippy::disallowed_methods)]

mod charts;
mod report;
mod run;
mod table;

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use fairstream_media::stream::FecParams;
use fairstream_net::emulate;
use fairstream_proto::units::Rate;

use crate::quality::{self, Quality, Ssim};
use run::{Progress, RunOutcome, Setup, VARIANTS};
use table::Figures;

/// The generated video's frame rate.
const FPS: f64 = 25.0;
/// The player model's prebuffer.
const PREBUFFER: Duration = Duration::from_secs(1);

/// Arguments of `fairstream demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// How long each of the two runs streams
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = positive_duration)]
    duration: Duration,
    /// Where the report goes (index.html, summary.json, plots, the received
    /// streams); created if missing
    #[arg(long, value_name = "DIR", default_value = "fairstream-demo")]
    out: PathBuf,
    /// The emulated link's capacity towards the receiver (2mbit, 500kbit)
    #[arg(long, value_name = "RATE", default_value = "2mbit", value_parser = rate)]
    rate: Rate,
    /// One-way propagation delay, both directions (the RTT is twice it)
    #[arg(long, value_name = "DURATION", default_value = "50ms", value_parser = delay)]
    delay: Duration,
    /// The link's queue: packets (50), bytes (64kB) or red:MIN_TH,MAX_TH,MAX_P
    #[arg(long, value_name = "QUEUE", default_value = "50", value_parser = queue)]
    queue: String,
    /// Channel loss towards the receiver: 3% (random), or
    /// ge:p_good_good,p_bad_bad,loss_good,loss_bad (Gilbert-Elliott bursts,
    /// paper 000's channel is ge:0.95,0.94,0.01,0.05), or none
    #[arg(long, value_name = "LOSS", default_value = "3%", value_parser = loss)]
    loss: String,
    /// The picture size of the generated video
    #[arg(long, value_name = "WxH", default_value = "352x288",
          value_parser = crate::stream_cmd::parse_size)]
    size: (u32, u32),
    /// Frames from one IDR to the next (a loss damages the picture until
    /// the next IDR)
    #[arg(long, value_name = "FRAMES", default_value_t = 25,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    gop: u32,
    /// Packet-level FEC in both runs: RS(n,k) parity over blocks of k RTP
    /// packets (`n,k`, e.g. 24,20), or none (the default: retransmission
    /// repairs what the link loses; docs/results/demo.md)
    #[arg(long, value_name = "n,k", default_value = DEFAULT_FEC, value_parser = fec)]
    fec: String,
    /// Retransmission within the deadline in both runs (`arq=on|off` in
    /// both URLs)
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = on_off)]
    arq: bool,
    /// The seed of the link's loss draws (the same in both runs)
    #[arg(long, value_name = "N", default_value_t = emulate::DEFAULT_SEED)]
    seed: u64,
    /// No progress lines on stderr
    #[arg(long)]
    quiet: bool,
}

fn positive_duration(text: &str) -> Result<Duration, String> {
    emulate::parse_positive_duration(text).map_err(|e| e.to_string())
}

fn rate(text: &str) -> Result<Rate, String> {
    emulate::parse_rate(text).map_err(|e| e.to_string())
}

fn delay(text: &str) -> Result<Duration, String> {
    emulate::parse_delay(text).map_err(|e| e.to_string())
}

/// Checks a queue and keeps its text (the report quotes it).
fn queue(text: &str) -> Result<String, String> {
    emulate::parse_queue(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// The demo's FEC unless `--fec` says otherwise: none, since retransmission
/// repaired every loss in five runs with RS(30,24) and the parity rebuilt
/// nothing (docs/results/demo.md).
const DEFAULT_FEC: &str = "none";

/// `on` or `off`.
fn on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{text:?}: expected on or off")),
    }
}

/// `n,k` or `none`.
fn parse_fec(text: &str) -> Result<Option<FecParams>, String> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    fairstream_net::url::parse_fec(text).map(Some)
}

/// Checks an FEC code and keeps its text.
fn fec(text: &str) -> Result<String, String> {
    parse_fec(text).map(|_| text.to_owned())
}

/// Checks a loss model and keeps its text.
fn loss(text: &str) -> Result<String, String> {
    emulate::parse_loss(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// One run with its measurements.
#[derive(Debug)]
pub(super) struct Measured {
    /// What the run produced.
    outcome: RunOutcome,
    /// The quality of its video as received.
    quality: Quality,
    /// The quality of its video as encoded, before any loss.
    encoded: Quality,
    /// Its headline figures.
    figures: Figures,
}

/// The setup in one line.
fn setup_line(setup: &Setup) -> String {
    let queue = if setup.queue_text.bytes().all(|b| b.is_ascii_digit()) {
        format!("{}-packet queue", setup.queue_text)
    } else {
        format!("queue {}", setup.queue_text)
    };
    let fec = setup
        .fec
        .map_or_else(String::new, |f| format!(", FEC RS({},{})", f.n, f.k));
    let fec = format!("{fec}, {}", if setup.arq { "ARQ" } else { "no ARQ" });
    format!(
        "{} link, {} ms each way (RTT {} ms), {queue}, {}{fec}, seed {}; {:.0} s of {}x{} video \
         at {} fps in each run",
        setup.rate,
        setup.delay.as_millis(),
        2 * setup.delay.as_millis(),
        report::loss_words(setup),
        setup.seed,
        setup.duration.as_secs_f64(),
        setup.size.0,
        setup.size.1,
        setup.fps,
    )
}

/// A rate as the command line takes it (`2mbit`, `250kbit`, `1500bit`).
fn rate_text(rate: Rate) -> String {
    let bits = rate.bits_per_sec();
    if bits >= 1e6 && bits % 1e6 == 0.0 {
        format!("{}mbit", bits / 1e6)
    } else if bits >= 1e3 && bits % 1e3 == 0.0 {
        format!("{}kbit", bits / 1e3)
    } else {
        format!("{bits}bit")
    }
}

/// The command line that runs this demo again.
fn command(args: &DemoArgs) -> String {
    format!(
        "cargo run --release -- demo --duration {}s --rate {} --delay {}ms --queue {} \
         --loss '{}' --size {}x{} --gop {} --fec {} --arq {} --seed {}",
        args.duration.as_secs_f64(),
        rate_text(args.rate),
        args.delay.as_millis(),
        args.queue,
        args.loss,
        args.size.0,
        args.size.1,
        args.gop,
        args.fec,
        if args.arq { "on" } else { "off" },
        args.seed
    )
}

/// Runs `fairstream demo`.
pub(crate) fn run(args: &DemoArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let loss = emulate::parse_loss(&args.loss).map_err(anyhow::Error::msg)?;
    let mean_loss = loss
        .build()
        .map(|model| model.steady_state_loss())
        .with_context(|| format!("loss `{}`", args.loss))?;
    let setup = Setup {
        rate: args.rate,
        delay: args.delay,
        queue: emulate::parse_queue(&args.queue).map_err(anyhow::Error::msg)?,
        queue_text: args.queue.clone(),
        loss,
        loss_text: args.loss.clone(),
        mean_loss,
        duration: args.duration,
        size: args.size,
        fps: FPS,
        gop: args.gop,
        fec: parse_fec(&args.fec).map_err(anyhow::Error::msg)?,
        arq: args.arq,
        seed: args.seed,
        prebuffer: PREBUFFER,
    };
    fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create the output directory {}", args.out.display()))?;
    let interrupt = fairstream_net::signal::stop_on_signal().map_err(anyhow::Error::msg)?;
    let progress = Progress::new(args.quiet);
    progress.line(&format!("fairstream demo: {}", setup_line(&setup)));

    let mut runs: Vec<Measured> = Vec::new();
    for (index, variant) in VARIANTS.into_iter().enumerate() {
        let number = index + 1;
        let mut outcome = run::run(&setup, variant, number, &args.out, &interrupt, &progress)?;
        progress.line(&format!(
            "run {number}/{}: measuring the picture quality of {} frames…",
            VARIANTS.len(),
            outcome.send.frames_read
        ));
        let units = std::mem::take(&mut outcome.units);
        let sent = std::mem::take(&mut outcome.sent);
        let frames = usize::try_from(outcome.send.frames_read).unwrap_or(usize::MAX);
        let context = || format!("run {number} ({})", variant.label);
        let quality = quality::as_received(&units, frames, setup.size, setup.fps, Ssim::Measured)
            .with_context(context)?;
        let encoded = quality::as_encoded(&sent, setup.size).with_context(context)?;
        let figures = Figures::of(&setup, &outcome, &quality, &encoded);
        runs.push(Measured {
            outcome,
            quality,
            encoded,
            figures,
        });
    }

    let figures: Vec<Figures> = runs.iter().map(|r| r.figures.clone()).collect();
    let rows = table::rows(&figures);
    let labels: Vec<&str> = runs.iter().map(|r| r.outcome.variant.label).collect();
    let conclusion = match figures.as_slice() {
        [single, multi] => table::conclusion(single, multi),
        _ => String::new(),
    };
    let wall_time_s = started.elapsed().as_secs_f64();
    println!("fairstream demo: {}\n", setup_line(&setup));
    print!("{}", table::text(&labels, &rows));
    println!("\n{conclusion}.");

    report::write_summary(
        &args.out.join("summary.json"),
        &setup,
        &runs,
        &conclusion,
        wall_time_s,
    )?;
    report::write_page(
        &args.out,
        report::Report {
            setup: &setup,
            runs: &runs,
            rows: &rows,
            conclusion: &conclusion,
            plots: charts::charts(&setup, &runs),
            command: &command(args),
            wall_time_s,
        },
    )?;
    let index = args.out.join("index.html");
    println!("report: {} ({wall_time_s:.0} s)", index.display());
    Ok(())
}
