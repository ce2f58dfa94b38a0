//! One run of the demo, in-process on threads: the emulated link
//! (`fairstream_net::emulate`), a receiver (`fairstream_net::recv`) and a
//! sender of generated video (`fairstream_net::send`), all on loopback.
//!
//! ```text
//! sender ──▶ emulator [queue → rate → loss → delay] ──▶ receiver
//! sender ◀── emulator [delay] ◀────────────────────────── receiver (feedback)
//! ```
//!
//! The per-second statistics both ends write as JSON lines (the files stay
//! in the output directory) give the time series; a copy of every access
//! unit the receiver writes gives the frames for the quality measurement.

use std::fs;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use fairstream_media::stream::FecParams;
use fairstream_net::emulate::{DirectionConfig, Emulator, EmulatorConfig, EmulatorStats};
use fairstream_net::peer::PeerTimeout;
use fairstream_net::recv::{OutputSpec, ReceivedAccessUnit, Receiver, RecvConfig, RecvReport};
use fairstream_net::send::{SendConfig, SendReport, Sender, SourceFrame, SourceSpec};
use fairstream_net::stats::StatsConfig;
use fairstream_proto::units::Rate;
use fairstream_sim::link::Capacity;
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::QueueConfig;
use serde::Serialize;
use serde_json::Value;

/// The interval of the statistics the time series are made of.
const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);
/// The encoder's bitrate before the session's first target.
const INITIAL_BITRATE_BPS: u32 = 300_000;
/// The longest the receiver waits for a silent sender once its data began.
const PEER_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the progress line is refreshed on a terminal.
const PROGRESS_TICK: Duration = Duration::from_millis(250);
/// How often a progress line is printed when stderr is not a terminal.
const PROGRESS_LINE: Duration = Duration::from_secs(5);

/// What both runs share: the link, the video and the seed.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Setup {
    /// The link's forward capacity.
    #[serde(rename = "rate_bps", serialize_with = "bits_per_sec")]
    pub(super) rate: Rate,
    /// One-way propagation delay, both directions.
    #[serde(rename = "delay_s", serialize_with = "seconds")]
    pub(super) delay: Duration,
    /// The queue in front of the forward transmitter.
    #[serde(skip)]
    pub(super) queue: QueueConfig,
    /// The queue as the user wrote it.
    pub(super) queue_text: String,
    /// Channel loss in the forward direction.
    #[serde(skip)]
    pub(super) loss: LossConfig,
    /// The loss as the user wrote it.
    pub(super) loss_text: String,
    /// The long-run loss rate of the loss model.
    pub(super) mean_loss: f64,
    /// How long each run streams.
    #[serde(rename = "duration_s", serialize_with = "seconds")]
    pub(super) duration: Duration,
    /// The picture size of the generated video.
    pub(super) size: (u32, u32),
    /// Its frame rate.
    pub(super) fps: f64,
    /// Frames from one IDR to the next.
    pub(super) gop: u32,
    /// Packet-level FEC in both runs.
    pub(super) fec: Option<FecParams>,
    /// Retransmission within the deadline in both runs.
    pub(super) arq: bool,
    /// The emulator's seed (the same loss draws in both runs).
    pub(super) seed: u64,
    /// The receiver's player model buffers this much before it plays.
    #[serde(rename = "prebuffer_s", serialize_with = "seconds")]
    pub(super) prebuffer: Duration,
}

fn bits_per_sec<S: serde::Serializer>(rate: &Rate, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(rate.bits_per_sec())
}

fn seconds<S: serde::Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(duration.as_secs_f64())
}

/// What is compared: the transport options of one run.
#[derive(Clone, Copy, Debug, Serialize)]
pub(super) struct Variant {
    /// A short name, for files and JSON keys.
    pub(super) key: &'static str,
    /// The name in the table.
    pub(super) label: &'static str,
    /// The query of the `dccp://` URL.
    pub(super) query: &'static str,
}

/// The two runs: one TFRC connection, then the multi-connection default.
pub(super) const VARIANTS: [Variant; 2] = [
    Variant {
        key: "single",
        label: "one TFRC",
        query: "cc=tfrc",
    },
    Variant {
        key: "multi",
        label: "multi-connection",
        query: "cc=tfrc&controller=adaptive",
    },
];

/// One point of the time series, at the end of its interval.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(super) struct Sample {
    /// Seconds since the sender started.
    pub(super) time_s: f64,
    /// RTP bits/s the receiver got during the interval.
    pub(super) throughput_bps: Option<f64>,
    /// Connections open at the sender.
    pub(super) connections: Option<f64>,
    /// The session's target bitrate, bits/s.
    pub(super) target_bitrate_bps: Option<f64>,
    /// The bitrate the encoder was set to, bits/s.
    pub(super) encoder_bitrate_bps: Option<f64>,
}

/// What one run produced.
#[derive(Debug)]
pub(super) struct RunOutcome {
    /// The transport options.
    pub(super) variant: Variant,
    /// The sender's URL.
    pub(super) url: String,
    /// The sender's report.
    pub(super) send: SendReport,
    /// The receiver's report.
    pub(super) recv: RecvReport,
    /// The emulator's counters at the end.
    pub(super) link: EmulatorStats,
    /// The per-second time series.
    pub(super) samples: Vec<Sample>,
    /// The access units the receiver wrote, in order.
    pub(super) units: Vec<ReceivedAccessUnit>,
    /// The frames the sender took from the encoder.
    pub(super) sent: Vec<SourceFrame>,
}

/// Progress on stderr: a line rewritten in place on a terminal, a line
/// every few seconds otherwise, nothing when quiet.
pub(super) struct Progress {
    quiet: bool,
    terminal: bool,
}

impl Progress {
    /// Progress to stderr unless `quiet`.
    pub(super) fn new(quiet: bool) -> Progress {
        Progress {
            quiet,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// A line of its own.
    pub(super) fn line(&self, text: &str) {
        if !self.quiet {
            eprintln!("{text}");
        }
    }

    fn tick(&self, text: &str, last: &mut Option<Instant>) {
        if self.quiet {
            return;
        }
        if self.terminal {
            eprint!("\r{text}\x1b[K");
        } else if last.is_none_or(|t| t.elapsed() >= PROGRESS_LINE) {
            eprintln!("{text}");
            *last = Some(Instant::now());
        }
    }

    fn end_tick(&self) {
        if !self.quiet && self.terminal {
            eprintln!();
        }
    }
}

/// Runs `variant` over a fresh emulated link; `index` counts the runs
/// from 1 for the progress line. Files go to `dir`. `interrupt` is the
/// Ctrl-C flag: the sender then closes and the run fails.
pub(super) fn run(
    setup: &Setup,
    variant: Variant,
    index: usize,
    dir: &Path,
    interrupt: &Arc<AtomicBool>,
    progress: &Progress,
) -> anyhow::Result<RunOutcome> {
    let video_file = dir.join(format!("{}.264", variant.key));
    let send_json = dir.join(format!("{}-send.jsonl", variant.key));
    let recv_json = dir.join(format!("{}-recv.jsonl", variant.key));
    let (tap, units) = mpsc::channel();

    let arq = if setup.arq { "on" } else { "off" };
    let listen = format!("dccp://127.0.0.1:0?arq={arq}")
        .parse()
        .context("the receiver's URL")?;
    let mut recv_config = RecvConfig::new(listen, OutputSpec::File(video_file));
    recv_config.duration = Some(setup.duration + Duration::from_secs(30));
    recv_config.peer_timeout = PeerTimeout::Fixed(PEER_TIMEOUT);
    recv_config.prebuffer = setup.prebuffer;
    recv_config.stats = stats(&recv_json);
    recv_config.access_units = Some(tap);
    let receiver = Receiver::bind(recv_config)
        .context("cannot start the receiver on a loopback UDP port (127.0.0.1)")?;
    let receiver_address = receiver.local_addr();

    let emulator = Emulator::bind(emulator_config(setup, receiver_address))
        .context("cannot start the link emulator on a loopback UDP port (127.0.0.1)")?
        .spawn()
        .context("cannot start the link emulator's thread")?;
    let fec = setup
        .fec
        .map_or_else(String::new, |f| format!("&fec={},{}", f.n, f.k));
    let url = format!(
        "dccp://{}?{}{fec}&arq={arq}",
        emulator.local_addr(),
        variant.query
    );

    let receiver_stop = Arc::new(AtomicBool::new(false));
    let receiver_started = Instant::now();
    let receiving = {
        let stop = Arc::clone(&receiver_stop);
        thread::Builder::new()
            .name("demo-recv".into())
            .spawn(move || receiver.run(&stop))
            .context("cannot start the receiver's thread")?
    };
    let stop_receiver = |receiving: thread::JoinHandle<_>| {
        receiver_stop.store(true, Ordering::Relaxed);
        let _ = receiving.join();
    };

    let mut send_config = SendConfig::new(
        SourceSpec::Generated {
            width: setup.size.0,
            height: setup.size.1,
            gop: setup.gop,
            initial_bitrate_bps: INITIAL_BITRATE_BPS,
        },
        url.parse().context("the sender's URL")?,
    );
    send_config.fps = setup.fps;
    send_config.duration = Some(setup.duration);
    send_config.stats = stats(&send_json);
    let (frames_tap, sent) = mpsc::channel();
    send_config.frames = Some(frames_tap);
    let sender = match Sender::connect(send_config) {
        Ok(sender) => sender,
        Err(error) => {
            stop_receiver(receiving);
            return Err(error).context("cannot start the sender on a loopback UDP socket");
        }
    };
    let sender_started = Instant::now();
    let stop = Arc::clone(interrupt);
    let sending = match thread::Builder::new()
        .name("demo-send".into())
        .spawn(move || sender.run(&stop))
    {
        Ok(sending) => sending,
        Err(error) => {
            stop_receiver(receiving);
            return Err(error).context("cannot start the sender's thread");
        }
    };

    let total = setup.duration.as_secs_f64();
    let mut last_line = None;
    while !sending.is_finished() {
        let elapsed = sender_started.elapsed().as_secs_f64().min(total);
        progress.tick(
            &format!(
                "run {index}/{}: {}… {elapsed:.0}/{total:.0} s",
                VARIANTS.len(),
                describe(variant),
            ),
            &mut last_line,
        );
        thread::sleep(PROGRESS_TICK);
    }
    progress.end_tick();

    let send = match sending.join() {
        Ok(Ok(report)) => report,
        Ok(Err(error)) => {
            stop_receiver(receiving);
            return Err(error).with_context(|| format!("run {index} ({})", variant.label));
        }
        Err(_) => {
            stop_receiver(receiving);
            bail!(
                "run {index} ({}): the sender's thread panicked",
                variant.label
            );
        }
    };
    if send.stopped_by == "signal" {
        stop_receiver(receiving);
        bail!("interrupted");
    }
    // The sender closed its connections: the receiver drains and stops.
    let recv = match receiving.join() {
        Ok(result) => result.with_context(|| format!("run {index}: the receiver failed"))?,
        Err(_) => bail!("run {index}: the receiver's thread panicked"),
    };
    let link = emulator
        .stop()
        .with_context(|| format!("run {index}: the link emulator failed"))?;
    let offset = sender_started
        .saturating_duration_since(receiver_started)
        .as_secs_f64();
    let samples = samples(&send_json, &recv_json, offset)?;
    Ok(RunOutcome {
        variant,
        url,
        send,
        recv,
        link,
        samples,
        units: units.try_iter().collect(),
        sent: sent.try_iter().collect(),
    })
}

/// "one TFRC connection" or "multi-connection default (adaptive)".
pub(super) fn describe(variant: Variant) -> String {
    match variant.key {
        "single" => "one TFRC connection".into(),
        _ => "the multi-connection default (controller=adaptive)".into(),
    }
}

fn stats(json: &Path) -> StatsConfig {
    StatsConfig {
        interval: Some(SAMPLE_INTERVAL),
        human: false,
        json: Some(json.to_path_buf()),
        ..StatsConfig::default()
    }
}

/// The link: capacity, queue and loss forward; the delay both ways.
fn emulator_config(setup: &Setup, receiver: SocketAddr) -> EmulatorConfig {
    let listen = SocketAddr::from(([127, 0, 0, 1], 0));
    let mut config = EmulatorConfig::new(listen, receiver);
    config.forward = DirectionConfig {
        capacity: Some(Capacity::Fixed(setup.rate)),
        delay: setup.delay,
        queue: setup.queue,
        loss: setup.loss,
        ..DirectionConfig::default()
    };
    config.backward.delay = setup.delay;
    config.seed = setup.seed;
    config
}

/// The JSON lines of a statistics file, the summary left out.
fn json_lines(path: &Path) -> anyhow::Result<Vec<Value>> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("cannot read the statistics {}", path.display()))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str::<Value>(line)
                .with_context(|| format!("{}: a line is not JSON", path.display()))
        })
        .filter(|value| !value.as_ref().is_ok_and(|v| v.get("summary").is_some()))
        .collect()
}

/// The time series: the sender's lines, each with the receiver's rate of
/// the interval ending nearest to it (`offset`: how much later the sender
/// started than the receiver).
fn samples(send_json: &Path, recv_json: &Path, offset: f64) -> anyhow::Result<Vec<Sample>> {
    let number = |value: &Value, key: &str| value.get(key).and_then(Value::as_f64);
    let received: Vec<(f64, f64)> = json_lines(recv_json)?
        .iter()
        .filter_map(|v| {
            Some((
                number(v, "time_s")? - offset,
                number(v, "receive_rate_bps")?,
            ))
        })
        .collect();
    let sent = json_lines(send_json)?;
    Ok(sent
        .iter()
        .filter_map(|v| {
            let time_s = number(v, "time_s")?;
            let throughput_bps = received
                .iter()
                .min_by(|a, b| (a.0 - time_s).abs().total_cmp(&(b.0 - time_s).abs()))
                .filter(|(t, _)| (t - time_s).abs() < SAMPLE_INTERVAL.as_secs_f64() / 2.0)
                .map(|(_, rate)| *rate);
            Some(Sample {
                time_s,
                throughput_bps,
                connections: number(v, "connections"),
                target_bitrate_bps: number(v, "target_bitrate_bps"),
                encoder_bitrate_bps: number(v, "encoder_bitrate_bps"),
            })
        })
        // The line written while the connections close says nothing.
        .filter(|sample| sample.connections != Some(0.0))
        .collect())
}
