//! `fairstream send` and `fairstream recv`: real streaming over UDP
//! (`fairstream-net`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use fairstream_net::recv::{OutputSpec, RecvConfig};
use fairstream_net::send::{Mode, SendConfig, SourceSpec};
use fairstream_net::stats::StatsConfig;
use fairstream_net::url::DccpUrl;
use fairstream_proto::units::{parse_duration, Rate};

/// `fairstream send`.
#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    /// An H.264 Annex B file, `-` for Annex B on standard input, or
    /// `generated` for the built-in content encoded live at the session's
    /// target bitrate
    source: String,
    /// Where to: dccp://HOST:PORT?cc=tfrc|tfrc-sp|ccid2|fixed&rate=64kbit (fixed only)&conns=N&controller=fixed|multfrc|e-multfrc|aggregate&policy=earliest|gop-interleave&start_offset=0.5s&rtt_min_lifetime=60s&max_packet=1400&peer_timeout=auto|DURATION
    ///
    /// peer_timeout: the stream fails when the receiver answers nothing the
    /// sender sent for this long; auto (the default) is 8 smoothed RTTs, at
    /// least 4 s.
    url: String,
    /// live: frame i leaves at i/fps and late frames are dropped (I frames
    /// last); on-demand: as fast as the connections allow
    #[arg(long, value_enum, default_value = "live")]
    mode: ModeArg,
    /// Repeat the file at its end
    #[arg(long = "loop")]
    looped: bool,
    /// Frames per second of the source
    #[arg(long, default_value = "25", value_parser = parse_fps)]
    fps: f64,
    /// Live mode: a frame is dropped when it cannot arrive within this of
    /// its release
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_positive_duration)]
    startup_delay: Duration,
    /// Stop after this long
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    duration: Option<Duration>,
    /// Give up when no connection opened within this
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_positive_duration)]
    handshake_timeout: Duration,
    /// Generated content: picture size
    #[arg(long, value_name = "WxH", default_value = "352x288", value_parser = parse_size)]
    size: (u32, u32),
    /// Generated content: frames from one IDR to the next
    #[arg(long, default_value = "25")]
    gop: u32,
    /// Generated content: the bitrate before the session's first target
    #[arg(long, value_name = "RATE", default_value = "500kbit", value_parser = parse_bitrate)]
    bitrate: u32,
    #[command(flatten)]
    stats: StatsArgs,
}

/// `fairstream recv`.
#[derive(Debug, Args)]
pub(crate) struct RecvArgs {
    /// Where to listen: dccp://:PORT (or dccp://ADDRESS:PORT), options cc, max_packet and peer_timeout=auto|DURATION
    ///
    /// peer_timeout: once the sender's data began, the stream fails when
    /// the sender sends nothing for this long; auto (the default) is 8
    /// smoothed RTTs, at least 4 s. The receiver waits for a sender to
    /// connect as long as it runs.
    url: String,
    /// An H.264 file to write, `-` for standard output, or rtp://IP:PORT to
    /// re-send the RTP packets over plain UDP (with an SDP file, --sdp)
    output: String,
    /// The SDP file written for an rtp:// output
    #[arg(long, value_name = "FILE", default_value = "fairstream.sdp")]
    sdp: PathBuf,
    /// Stop after this long, closing the connections in order
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    duration: Option<Duration>,
    /// The player model buffers this much media before it plays (start-up
    /// delay, stalls and buffer level in the statistics)
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration_arg)]
    prebuffer: Duration,
    #[command(flatten)]
    stats: StatsArgs,
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// The interval of the statistics lines (0 for none)
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration_arg)]
    stats: Duration,
    /// No statistics lines on stderr
    #[arg(long)]
    quiet: bool,
    /// Write the statistics as JSON lines to this file; the last line is the summary
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,
}

impl StatsArgs {
    pub(crate) fn config(&self) -> StatsConfig {
        StatsConfig {
            interval: (!self.stats.is_zero()).then_some(self.stats),
            human: !self.quiet,
            json: self.stats_json.clone(),
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ModeArg {
    Live,
    OnDemand,
}

pub(crate) fn parse_duration_arg(text: &str) -> Result<Duration, String> {
    parse_duration(text).map_err(|e| e.to_string())
}

pub(crate) fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let duration = parse_duration_arg(text)?;
    if duration.is_zero() {
        return Err(format!("`{text}` must be longer than zero"));
    }
    Ok(duration)
}

fn parse_fps(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(fps) if fps > 0.0 && fps <= 240.0 => Ok(fps),
        _ => Err(format!("`{text}` is not a frame rate in (0, 240]")),
    }
}

pub(crate) fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let parsed = text
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
    match parsed {
        Some((w, h))
            if w >= 16 && h >= 16 && w % 2 == 0 && h % 2 == 0 && w <= 3840 && h <= 2160 =>
        {
            Ok((w, h))
        }
        _ => Err(format!(
            "`{text}` is not a picture size WxH (even, 16x16 to 3840x2160)"
        )),
    }
}

fn parse_bitrate(text: &str) -> Result<u32, String> {
    let rate: Rate = text
        .parse()
        .map_err(|e: fairstream_proto::units::UnitError| e.to_string())?;
    let bps = rate.bits_per_sec();
    if !(50_000.0..=20_000_000.0).contains(&bps) {
        return Err(format!("`{text}` is outside 50kbit..20mbit"));
    }
    Ok(bps as u32)
}

pub(crate) fn parse_url(text: &str) -> Result<DccpUrl> {
    text.parse::<DccpUrl>().map_err(anyhow::Error::from)
}

/// Runs `fairstream send`.
pub(crate) fn run_send(args: &SendArgs) -> Result<()> {
    let url = parse_url(&args.url)?;
    let source = match args.source.as_str() {
        "-" => SourceSpec::Stdin,
        "generated" => SourceSpec::Generated {
            width: args.size.0,
            height: args.size.1,
            gop: args.gop.max(1),
            initial_bitrate_bps: args.bitrate,
        },
        path => {
            let path = PathBuf::from(path);
            if !path.is_file() {
                bail!(
                    "source {} is not a file (nor - or generated)",
                    path.display()
                );
            }
            SourceSpec::File(path)
        }
    };
    if args.looped && !matches!(source, SourceSpec::File(_)) {
        bail!("--loop needs a file source");
    }
    let mut config = SendConfig::new(source, url);
    config.mode = match args.mode {
        ModeArg::Live => Mode::Live,
        ModeArg::OnDemand => Mode::OnDemand,
    };
    config.looped = args.looped;
    config.fps = args.fps;
    config.startup_delay = args.startup_delay;
    config.duration = args.duration;
    config.handshake_timeout = args.handshake_timeout;
    config.stats = args.stats.config();
    let stop = fairstream_net::signal::stop_on_signal().map_err(anyhow::Error::msg)?;
    let report = fairstream_net::send::run(config, stop)?;
    println!("{}", serde_json::to_string(&report).context("summary")?);
    Ok(())
}

/// Runs `fairstream recv`.
pub(crate) fn run_recv(args: &RecvArgs) -> Result<()> {
    let url = parse_url(&args.url)?;
    let output = OutputSpec::parse(&args.output, &args.sdp).map_err(anyhow::Error::msg)?;
    let to_stdout = output == OutputSpec::Stdout;
    let mut config = RecvConfig::new(url, output);
    config.duration = args.duration;
    config.prebuffer = args.prebuffer;
    config.stats = args.stats.config();
    let stop = fairstream_net::signal::stop_on_signal().map_err(anyhow::Error::msg)?;
    let result = fairstream_net::recv::run(config, stop);
    // A stream that failed has a summary too, before the error.
    let report = match &result {
        Ok(report) => Some(report),
        Err(error) => error.report(),
    };
    if let Some(report) = report {
        let line = serde_json::to_string(report).context("summary")?;
        if to_stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    result?;
    Ok(())
}
