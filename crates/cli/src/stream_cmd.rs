//! `fairstream send` and `fairstream recv`: real streaming over UDP
//! (`fairstream-net`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use fairstream_media::h264::{probe_frame_rate, FrameRateProbe};
use fairstream_media::temporal::TemporalLayers;
use fairstream_media::voice::playout::JitterBuffer;
use fairstream_net::recv::{OutputSpec, RecvConfig, RecvReport, VoiceOutput};
use fairstream_net::send::{Mode, SendConfig, SourceSpec, VoiceSpec};
use fairstream_net::stats::{StatsConfig, StatsFormat};
use fairstream_net::url::DccpUrl;
use fairstream_proto::secure::Passphrase;
use fairstream_proto::units::{parse_duration, Rate};
use serde::Serialize;

use reference::{ReferenceReport, ReferenceTap};

mod reference;

/// `fairstream send`.
#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    /// An H.264 Annex B file, `-` for Annex B on standard input,
    /// `generated` for the built-in content encoded live at the session's
    /// target bitrate, or a voice call: `voice:g711` (G.711 µ-law of a
    /// generated speech-like signal), `voice:g711:FILE.wav` (of an 8 kHz
    /// 16-bit mono WAV file), `voice:g729` (G.729's packet size and rate
    /// only: there is no G.729 encoder, its payloads are silence)
    ///
    /// A voice call sends one RTP packet (PCMU or G729) every 20 ms over
    /// one connection, starting the call when the allowed rate reaches the
    /// codec's (paper 002; with cc=tfrc-sp, RFC 4828's header allowance);
    /// the frames before are sent as probes. The receiver needs --wav.
    source: String,
    /// Where to: dccp://HOST:PORT?cc=tfrc|tfrc-sp|ccid2|fixed|buffer&rate=64kbit (fixed only)&conns=N&controller=fixed|adaptive|multfrc|e-multfrc|aggregate&policy=earliest|gop-interleave&start_offset=0.5s&rtt_min_lifetime=60s&max_packet=1400&fec=n,k (packet-level Reed-Solomon FEC, RS(n,k), 1 <= k < n <= 255)&peer_timeout=auto|DURATION&arq=on|off&passphrase=SECRET&paths=HOST:PORT(@LOCAL),…&bind=LOCAL&shared=all|0+1,…&duplicate=key|off, and with cc=buffer mode=paper|tfrc-capped&preroll=2s&congestion_threshold=1s&loss_threshold=1.5s
    ///
    /// peer_timeout: the stream fails when the receiver answers nothing the
    /// sender sent for this long; auto (the default) is 8 smoothed RTTs, at
    /// least 4 s. arq (on by default): resend what the receiver reports
    /// lost, when it can still arrive before its frame's deadline.
    /// cc=buffer: paper 004's receiver-buffer controller sheds the upper
    /// temporal layers (--layers) of generated content or of a clip as the
    /// receiver's buffer asks, in 1 s windows; mode=paper alone, or
    /// tfrc-capped under RFC 5348's equation; the receiver needs the same
    /// cc, mode and thresholds. paths: bond more network paths (the URL's
    /// own address is the first), each with its own socket, connections
    /// and count; LOCAL (and bind=, for the first path) is a local address
    /// or dev:INTERFACE. Each packet goes on the path that delivers it
    /// soonest; a path that answers nothing is found dead within a few
    /// RTTs, what it held is resent on the others, and it is taken back
    /// when it answers again. shared: paths known to share a bottleneck
    /// (by index, the URL's own is 0) take one flow's share there together.
    /// duplicate=key: I frames go on two paths.
    url: String,
    /// live: frame i leaves at i/fps and late frames are dropped (I frames
    /// last); on-demand: as fast as the connections allow
    #[arg(long, value_enum, default_value = "live")]
    mode: ModeArg,
    /// Repeat the file at its end (an H.264 file, or a voice call's WAV
    /// file)
    #[arg(long = "loop")]
    looped: bool,
    /// Voice: paper 002's voice activity detection, exponential talk
    /// spurts (mean 1.0 s) and silences (mean 1.5 s) drawn at random (a
    /// model of a talker's pauses, not the signal's energy); no packet in a
    /// silence
    #[arg(long)]
    vad: bool,
    /// Voice: frames the sender's queue holds; a frame that finds it full
    /// is dropped (paper 002: 5)
    #[arg(long, value_name = "FRAMES", default_value_t = fairstream_net::send::DEFAULT_TRANSMIT_BUFFER, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    transmit_buffer: u32,
    /// Frames per second of the source [default: a file's or a pipe's own
    /// rate, from the VUI timing of its SPS; 25 when it states none (said
    /// on stderr) and for generated content]
    #[arg(long, value_parser = parse_fps)]
    fps: Option<f64>,
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
    /// Generated content: frames from one IDR to the next [default: 25;
    /// with several --layers, the next multiple of their temporal GOP of
    /// 2^(layers-1) frames, 28 for 3 layers]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    gop: Option<u32>,
    /// Temporal layers, 1 to 4 (OpenH264's hierarchical P; dropping the
    /// upper ones lowers the frame rate): generated content is encoded in
    /// them; with cc=buffer, a file or a pipe was (required then)
    /// [default for generated content: 3 with cc=buffer, else 1]
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=4))]
    layers: Option<u8>,
    /// Generated content: also write every frame encoded, all its layers,
    /// to this H.264 file (a stored clip: `send FILE --layers N` sends it
    /// again)
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Generated content: the bitrate before the session's first target
    #[arg(long, value_name = "RATE", default_value = "500kbit", value_parser = parse_bitrate)]
    bitrate: u32,
    /// Read the passphrase from this file (one line; a trailing newline is
    /// not part of it) rather than from passphrase= in the URL, which other
    /// users can see in the process list. 10 to 79 bytes; the receiver
    /// needs the same one
    #[arg(long, value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
    #[command(flatten)]
    stats: StatsArgs,
}

/// `fairstream recv`.
#[derive(Debug, Args)]
pub(crate) struct RecvArgs {
    /// Where to listen: dccp://:PORT (or dccp://ADDRESS:PORT), options cc, max_packet, peer_timeout=auto|DURATION, arq=on|off and passphrase=SECRET, and with cc=buffer mode, preroll, congestion_threshold and loss_threshold (the sender's)
    ///
    /// peer_timeout: once the sender's data began, the stream fails when
    /// the sender sends nothing for this long; auto (the default) is 8
    /// smoothed RTTs, at least 4 s. The receiver waits for a sender to
    /// connect as long as it runs. arq (on by default): ask the sender
    /// again for what was lost, and wait for a gap until shortly (a tenth
    /// of --prebuffer, at most 100 ms) before what follows it is due (the
    /// player model's --prebuffer after the first packet).
    url: String,
    /// An H.264 file to write, `-` for standard output, or rtp://IP:PORT to
    /// re-send the RTP packets over plain UDP (with an SDP file, --sdp);
    /// none with --wav
    #[arg(required_unless_present = "wav", conflicts_with = "wav")]
    output: Option<String>,
    /// A voice call (`send voice:…`): write the audio heard to this 8 kHz
    /// 16-bit mono WAV file (lost and late frames concealed, after G.711
    /// Appendix I) and score the call with the ITU-T G.107 E-model (`voice`
    /// in the summary: frames, lost, late, loss_percent, burst_ratio,
    /// delays, mouth_to_ear_s, r, mos). Each frame's one-way delay is its
    /// arrival less its capture time on the sender's wall clock: exact on
    /// one host, as good as the clocks' synchronisation between two
    #[arg(long, value_name = "FILE")]
    wav: Option<PathBuf>,
    /// With --wav: the de-jitter buffer, a duration (a fixed playout
    /// delay after the first frame's one-way delay) or `adaptive` (Ramjee
    /// et al. 1994, algorithm 1, set at each talk spurt) [default: 60ms]
    #[arg(long, value_name = "DURATION|adaptive", value_parser = parse_jitter_buffer, requires = "wav")]
    jitter_buffer: Option<JitterBuffer>,
    /// The SDP file written for an rtp:// output
    #[arg(long, value_name = "FILE", default_value = "fairstream.sdp")]
    sdp: PathBuf,
    /// Stop after this long, closing the connections in order
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    duration: Option<Duration>,
    /// The player model buffers this much media before it plays (start-up
    /// delay, stalls and buffer level in the statistics) [default: 1s; with
    /// cc=buffer, the URL's preroll]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg)]
    prebuffer: Option<Duration>,
    /// Read the passphrase from this file (one line; a trailing newline is
    /// not part of it) rather than from passphrase= in the URL, which other
    /// users can see in the process list. 10 to 79 bytes; the sender
    /// needs the same one
    #[arg(long, value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
    /// Compare what is written with the sender's content and add `quality`
    /// to the summary (luma PSNR): `generated`, fairstream's generated
    /// content of --size. Each frame is placed at the frame its RTP
    /// timestamp names at --fps; a frame that did not arrive, or that the
    /// sender dropped (cc=buffer), shows the picture before
    #[arg(long, value_enum)]
    reference: Option<ReferenceArg>,
    /// With --reference: the sender's picture size
    #[arg(long, value_name = "WxH", default_value = "352x288", value_parser = parse_size, requires = "reference")]
    size: (u32, u32),
    /// With --reference: the sender's frame rate
    #[arg(long, default_value = "25", value_parser = parse_fps, requires = "reference")]
    fps: f64,
    #[command(flatten)]
    stats: StatsArgs,
}

/// What `fairstream recv --reference` compares with.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum ReferenceArg {
    /// fairstream's generated content (`send generated`).
    Generated,
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// The interval of the statistics lines (0 for none)
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration_arg)]
    stats: Duration,
    /// No statistics lines on stderr
    #[arg(long)]
    quiet: bool,
    /// Write the statistics to this file, `-` for standard output (the
    /// summary then goes to stderr): JSON lines, the last one the summary,
    /// or CSV with --stats-format csv
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,
    /// The form of --stats-json: json (one object a line) or csv (a header
    /// line, then one line an interval, connections summed)
    #[arg(long, value_enum, default_value = "json", requires = "stats_json")]
    stats_format: StatsFormatArg,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum StatsFormatArg {
    Json,
    Csv,
}

impl StatsArgs {
    pub(crate) fn config(&self) -> StatsConfig {
        StatsConfig {
            interval: (!self.stats.is_zero()).then_some(self.stats),
            human: !self.quiet,
            json: self.stats_json.clone(),
            format: match self.stats_format {
                StatsFormatArg::Json => StatsFormat::Json,
                StatsFormatArg::Csv => StatsFormat::Csv,
            },
        }
    }
}

/// Prints a run's JSON summary: on stdout, unless the statistics (or the
/// stream) already go there, then on stderr.
pub(crate) fn print_summary(line: &str, stdout_taken: bool) {
    if stdout_taken {
        eprintln!("{line}");
    } else {
        println!("{line}");
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

fn parse_jitter_buffer(text: &str) -> Result<JitterBuffer, String> {
    if text == "adaptive" {
        return Ok(JitterBuffer::Adaptive);
    }
    let fixed = parse_duration_arg(text)
        .map_err(|e| format!("{e} (expected a duration such as 60ms, or adaptive)"))?;
    if fixed > Duration::from_secs(10) {
        return Err(format!("`{text}` is longer than 10 s"));
    }
    Ok(JitterBuffer::Fixed(fixed))
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

/// The longest passphrase file read: a passphrase is at most 79 bytes, so
/// anything much longer is the wrong file.
const MAX_PASSPHRASE_FILE: u64 = 4096;

/// The passphrase in `path` (`--passphrase-file`).
pub(crate) fn read_passphrase_file(path: &Path) -> Result<Passphrase> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open the passphrase file {}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_PASSPHRASE_FILE + 1)
        .read_to_string(&mut text)
        .with_context(|| {
            format!(
                "cannot read the passphrase file {} as UTF-8",
                path.display()
            )
        })?;
    if text.len() as u64 > MAX_PASSPHRASE_FILE {
        bail!(
            "the passphrase file {} is longer than {MAX_PASSPHRASE_FILE} bytes: is it the right file?",
            path.display()
        );
    }
    Passphrase::from_file_contents(&text)
        .with_context(|| format!("the passphrase in {}", path.display()))
}

/// Puts the passphrase of `file` (if given) into `url`; a URL that has one
/// already is an error (which one was meant?). `side` names the URL.
pub(crate) fn apply_passphrase_file(
    url: &mut DccpUrl,
    file: Option<&Path>,
    side: &str,
) -> Result<()> {
    let Some(path) = file else {
        return Ok(());
    };
    if url.passphrase.is_some() {
        bail!(
            "{side} has passphrase= and --passphrase-file is given too: give the passphrase once"
        );
    }
    url.passphrase = Some(read_passphrase_file(path)?);
    Ok(())
}

/// Generated content's frames from one IDR to the next, unless `--gop`.
const DEFAULT_GOP: u32 = 25;

/// The frame rate assumed when neither `--fps` nor the stream gives one.
const DEFAULT_FPS: f64 = 25.0;
/// Bytes of a file or pipe read to find its SPS before giving up.
const FRAME_RATE_READ_AHEAD: usize = 1 << 20;

/// Reads the start of `input` until its first SPS is whole (or a picture
/// came first, or the input ended, or [`FRAME_RATE_READ_AHEAD`] bytes were
/// read); returns what it says of the frame rate and the bytes read.
fn read_frame_rate(input: &mut impl Read) -> std::io::Result<(FrameRateProbe, Vec<u8>)> {
    let mut read = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        read.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
        let complete = n == 0 || read.len() >= FRAME_RATE_READ_AHEAD;
        match probe_frame_rate(&read, complete) {
            FrameRateProbe::NeedMore if !complete => {}
            FrameRateProbe::NeedMore => return Ok((FrameRateProbe::NotStated, read)),
            probe => return Ok((probe, read)),
        }
    }
}

/// The frame rate to send `name` at when `--fps` is not given: the
/// stream's own (VUI timing), else [`DEFAULT_FPS`], which is said once on
/// stderr (even with `--quiet`).
fn choose_fps(probe: FrameRateProbe, name: &str, quiet: bool) -> f64 {
    let stated = match probe {
        FrameRateProbe::Stated(timing) => timing.frames_per_second(),
        FrameRateProbe::NotStated | FrameRateProbe::NeedMore => None,
    };
    match stated {
        Some(fps) if fps > 0.0 && fps <= 240.0 => {
            if !quiet {
                eprintln!("{name}: {fps:.3} frames/s, from the VUI timing of its SPS");
            }
            fps
        }
        Some(fps) => {
            eprintln!(
                "{name}: its SPS states {fps} frames/s, outside (0, 240]; assuming \
                 {DEFAULT_FPS} frames/s (set --fps)"
            );
            DEFAULT_FPS
        }
        None => {
            eprintln!(
                "{name}: the stream states no frame rate (no VUI timing in its SPS); assuming \
                 {DEFAULT_FPS} frames/s (set --fps)"
            );
            DEFAULT_FPS
        }
    }
}

/// Runs `fairstream send`.
pub(crate) fn run_send(args: &SendArgs) -> Result<()> {
    let mut url = parse_url(&args.url)?;
    apply_passphrase_file(&mut url, args.passphrase_file.as_deref(), "the URL")?;
    let quiet = args.stats.quiet;
    let mut fps = args.fps.unwrap_or(DEFAULT_FPS);
    if let Some(voice) = VoiceSpec::parse(&args.source) {
        return run_send_voice(args, url, voice.map_err(anyhow::Error::msg)?);
    }
    if args.vad || args.transmit_buffer != fairstream_net::send::DEFAULT_TRANSMIT_BUFFER {
        bail!("--vad and --transmit-buffer apply to a voice call (voice:g711, voice:g729)");
    }
    let generated = args.source == "generated";
    if !generated && (args.gop.is_some() || args.save.is_some()) {
        bail!("--gop and --save apply to generated content only");
    }
    let default_layers = match (generated, url.buffer.is_some(), args.layers) {
        (_, _, Some(layers)) if generated || url.buffer.is_some() => layers,
        (false, _, Some(_)) => {
            bail!("--layers with a file or a pipe applies to cc=buffer (the layers it was encoded in)")
        }
        (false, true, None) => bail!(
            "cc=buffer with a file or a pipe needs --layers N, the temporal layers it was \
             encoded in (`send generated --layers N --save CLIP` makes such a clip)"
        ),
        (true, true, None) => 3,
        _ => 1,
    };
    let layers = TemporalLayers::new(default_layers)?;
    let source = match args.source.as_str() {
        "-" => {
            let mut read_ahead = Vec::new();
            if args.fps.is_none() {
                let (probe, read) = read_frame_rate(&mut std::io::stdin().lock())
                    .context("cannot read standard input")?;
                fps = choose_fps(probe, "standard input", quiet);
                read_ahead = read;
            }
            SourceSpec::StdinAfter(read_ahead)
        }
        "generated" => SourceSpec::Generated {
            width: args.size.0,
            height: args.size.1,
            gop: args
                .gop
                .unwrap_or(DEFAULT_GOP.next_multiple_of(layers.gop_frames())),
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
            if args.fps.is_none() {
                let mut file = std::fs::File::open(&path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                let (probe, _) = read_frame_rate(&mut file)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                fps = choose_fps(probe, &path.display().to_string(), quiet);
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
    config.fps = fps;
    config.startup_delay = args.startup_delay;
    config.duration = args.duration;
    config.handshake_timeout = args.handshake_timeout;
    config.stats = args.stats.config();
    config.temporal_layers = layers;
    config.save = args.save.clone();
    send_and_print(config)
}

/// Runs the sender until it ends or a signal stops it, and prints its
/// summary.
fn send_and_print(config: SendConfig) -> Result<()> {
    let stats_to_stdout = config.stats.to_stdout();
    let stop = fairstream_net::signal::stop_on_signal().map_err(anyhow::Error::msg)?;
    let report = fairstream_net::send::run(config, stop)?;
    let line = serde_json::to_string(&report).context("summary")?;
    print_summary(&line, stats_to_stdout);
    Ok(())
}

/// Runs `fairstream send voice:…`.
fn run_send_voice(args: &SendArgs, url: DccpUrl, mut voice: VoiceSpec) -> Result<()> {
    if args.gop.is_some() || args.save.is_some() || args.layers.is_some() || args.fps.is_some() {
        bail!("--gop, --save, --layers and --fps apply to video, not to a voice call");
    }
    if args.looped && voice.wav.is_none() {
        bail!("--loop needs a WAV file (voice:g711:FILE.wav)");
    }
    if let Some(path) = &voice.wav {
        if !path.is_file() {
            bail!("voice source {} is not a file", path.display());
        }
    }
    voice.vad = args.vad;
    voice.transmit_buffer = args.transmit_buffer;
    let mut config = SendConfig::new(SourceSpec::Voice(voice), url);
    config.looped = args.looped;
    config.duration = args.duration;
    config.handshake_timeout = args.handshake_timeout;
    config.stats = args.stats.config();
    send_and_print(config)
}

/// `fairstream recv`'s summary: the run's report, and with `--reference`
/// the comparison.
#[derive(Debug, Serialize)]
struct RecvSummary<'a> {
    #[serde(flatten)]
    report: &'a RecvReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    quality: Option<ReferenceReport>,
}

/// Runs `fairstream recv`.
pub(crate) fn run_recv(args: &RecvArgs) -> Result<()> {
    let mut url = parse_url(&args.url)?;
    apply_passphrase_file(&mut url, args.passphrase_file.as_deref(), "the URL")?;
    if args.wav.is_none() && args.jitter_buffer.is_some() {
        bail!("--jitter-buffer applies to a voice call: give --wav FILE");
    }
    let output = match (&args.wav, &args.output) {
        (Some(wav), _) => {
            if args.reference.is_some() {
                bail!("--reference compares video; a voice call (--wav) is scored by the E-model");
            }
            OutputSpec::Voice(VoiceOutput {
                wav: wav.clone(),
                jitter_buffer: args.jitter_buffer.unwrap_or_default(),
            })
        }
        (None, Some(output)) => OutputSpec::parse(output, &args.sdp).map_err(anyhow::Error::msg)?,
        (None, None) => bail!("give an output (a file, - or rtp://IP:PORT), or --wav FILE"),
    };
    let to_stdout = output == OutputSpec::Stdout;
    let stats = args.stats.config();
    if to_stdout && stats.to_stdout() {
        bail!(
            "the stream and the statistics cannot both go to standard output: \
             give --stats-json a file name, or the stream a file"
        );
    }
    let stats_to_stdout = stats.to_stdout();
    let preroll = url.buffer.map(|buffer| buffer.preroll);
    let mut config = RecvConfig::new(url, output);
    config.duration = args.duration;
    config.prebuffer = args.prebuffer.or(preroll).unwrap_or(config.prebuffer);
    config.stats = stats;
    let reference = match args.reference {
        Some(ReferenceArg::Generated) => {
            let (tap, units) = ReferenceTap::start(args.size, args.fps)?;
            config.access_units = Some(units);
            Some(tap)
        }
        None => None,
    };
    let stop = fairstream_net::signal::stop_on_signal().map_err(anyhow::Error::msg)?;
    let result = fairstream_net::recv::run(config, stop);
    let quality = reference.map(ReferenceTap::finish).transpose()?;
    // A stream that failed has a summary too, before the error.
    let report = match &result {
        Ok(report) => Some(report),
        Err(error) => error.report(),
    };
    if let Some(report) = report {
        let line = serde_json::to_string(&RecvSummary { report, quality }).context("summary")?;
        print_summary(&line, to_stdout || stats_to_stdout);
    }
    result?;
    Ok(())
}
