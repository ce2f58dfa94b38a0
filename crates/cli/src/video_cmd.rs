//! `fairstream decode` and `fairstream evaluate`: the EvalVid steps, done
//! in-process.
//!
//! ```text
//! fairstream decode received.264 received.yuv --conceal 6
//! fairstream evaluate --reference clip.264 --sent st sd --received rd --json
//! fairstream evaluate --reference raw.yuv --size 352x288 --video clip.264 --sent st sd --received rd
//! fairstream evaluate --reference clip.264 --sent st sd --received rd --fec 56,50 --received-fec rd_fec
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use fairstream_media::codec::{decode_aligned, Decoder, DEFAULT_CONCEALMENT, MAX_CONCEALMENT};
use fairstream_media::evalvid::{parse_dump, read_sender_trace};
use fairstream_media::h264::parse_stream;
use fairstream_media::playout::{Playback, Player, StartupDelay};
use fairstream_media::stream::{evaluate_dumps, FecParams, MediaStream, ReceivedDumps};
use fairstream_media::yuv::{read_yuv_file, write_yuv};
use fairstream_proto::units::parse_duration;

/// Arguments of `fairstream decode`.
#[derive(Debug, Args)]
pub(crate) struct DecodeArgs {
    /// The H.264 Annex B file to decode (it may be damaged).
    #[arg(value_name = "IN.264")]
    input: PathBuf,
    /// Where to write raw I420 frames.
    #[arg(value_name = "OUT.yuv")]
    output: PathBuf,
    /// OpenH264's error concealment mode, 0 (off) to 7.
    #[arg(long, value_name = "MODE", default_value_t = DEFAULT_CONCEALMENT,
          value_parser = clap::value_parser!(u8).range(0..=i64::from(MAX_CONCEALMENT)))]
    conceal: u8,
}

/// Runs `fairstream decode`: every frame position is kept — frames whose
/// data is missing (found from `frame_num` gaps, a lost IDR picture
/// included) or that the decoder cannot produce repeat the previous picture
/// (mid-grey before the first), as EvalVid expects, and are counted as
/// missing and repeated.
pub(crate) fn run_decode(args: &DecodeArgs) -> anyhow::Result<()> {
    let bytes = std::fs::read(&args.input)
        .with_context(|| format!("cannot read {}", args.input.display()))?;
    let report = parse_stream(&bytes).with_context(|| args.input.display().to_string())?;
    let size = report.picture_size.with_context(|| {
        format!(
            "{}: no sequence parameter set could be read, so the picture size is unknown",
            args.input.display()
        )
    })?;
    let mut position = 0;
    let mut units = Vec::with_capacity(report.access_units.len());
    for au in &report.access_units {
        position += au.frames_missing_before;
        let mut unit = Vec::with_capacity(au.size_bytes() + 4 * au.nal_units.len());
        for nal in &au.nal_units {
            unit.extend_from_slice(&[0, 0, 0, 1]);
            unit.extend_from_slice(&bytes[nal.range.clone()]);
        }
        units.push((position, unit));
        position += 1;
    }
    let mut decoder = Decoder::new(args.conceal)?;
    let (frames, repeats) = decode_aligned(
        &mut decoder,
        units.iter().map(|(i, b)| (*i, b.as_slice())),
        position,
        size,
    )?;
    let file = std::fs::File::create(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let mut out = std::io::BufWriter::new(file);
    write_yuv(&mut out, &frames)
        .and_then(|()| out.flush())
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let missing: usize = report
        .access_units
        .iter()
        .map(|a| a.frames_missing_before)
        .sum();
    eprintln!(
        "decoded {} frames of {}x{} from {} access units: {} frames missing from the stream, \
         {} repeated, {} decoded with concealment, {} damaged NAL units",
        frames.len(),
        size.0,
        size.1,
        report.access_units.len(),
        missing,
        repeats,
        decoder.concealed(),
        report.damaged_nal_units
    );
    Ok(())
}

/// Arguments of `fairstream evaluate`.
#[derive(Debug, Args)]
pub(crate) struct EvaluateArgs {
    /// The reference: an H.264 file (its loss-free decode is the reference),
    /// raw I420 frames (give --size), or `generated` for fairstream's own
    /// content (give --size; the frames are made again).
    #[arg(long, value_name = "REF")]
    reference: PathBuf,
    /// The size of a raw reference, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    size: Option<(u32, u32)>,
    /// The H.264 file that was sent (default: the reference, when it is one).
    #[arg(long, value_name = "FILE.264")]
    video: Option<PathBuf>,
    /// The sender's trace and dump: EvalVid's `st` and `sd` files.
    #[arg(long, num_args = 2, value_names = ["ST", "SD"])]
    sent: Vec<PathBuf>,
    /// The receiver's dump: EvalVid's `rd` file.
    #[arg(long, value_name = "RD")]
    received: PathBuf,
    /// The stream's packet-level FEC, RS(n, k): `n,k` as in the scenario's
    /// `fec = { n, k }` or the URL's `fec=n,k`. Lost packets that the
    /// parity in --received-fec rebuilds count as received, as in
    /// `simulate`.
    #[arg(long, value_name = "N,K", value_parser = parse_fec, requires = "received_fec")]
    fec: Option<FecParams>,
    /// The receiver dump of the parity packets that arrived: the `rd_fec`
    /// file that `simulate --out` writes beside `rd`.
    #[arg(long, value_name = "RD_FEC", requires = "fec")]
    received_fec: Option<PathBuf>,
    /// Frames per second.
    #[arg(long, default_value_t = 25.0)]
    fps: f64,
    /// The largest RTP packet the sender used, bytes (fairstream's DCCP
    /// flows use their `packet_size`, 1460 by default).
    #[arg(long, default_value_t = 1460)]
    packet_size: usize,
    /// The receiver's start-up delay: `auto` or a duration (10s).
    #[arg(long, default_value = "auto", value_parser = parse_startup)]
    startup_delay: StartupDelay,
    /// The player model: `drop` (late packets are lost) or `rebuffer`
    /// (playback pauses until the frame and a refill are complete; the
    /// scenario key `player`).
    #[arg(long, default_value = "drop", value_parser = parse_player)]
    player: Player,
    /// With `--player rebuffer`: media complete before a paused playback
    /// resumes (default: the start-up delay; the scenario key `refill`).
    #[arg(long, value_parser = parse_refill)]
    refill: Option<f64>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{text:?} is not WIDTHxHEIGHT (such as 352x288)"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("{text:?}: {v:?} is not a whole number of pixels"))
    };
    Ok((parse(w)?, parse(h)?))
}

fn parse_fec(text: &str) -> Result<FecParams, String> {
    let (n, k) = text
        .split_once(',')
        .ok_or_else(|| format!("{text:?} is not n,k (such as 30,24)"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u8>()
            .map_err(|_| format!("{text:?}: {v:?} is not a whole number from 1 to 255"))
    };
    let (n, k) = (parse(n)?, parse(k)?);
    if k == 0 || k >= n {
        return Err(format!("{text:?}: RS(n, k) needs 1 <= k < n <= 255"));
    }
    Ok(FecParams {
        n: usize::from(n),
        k: usize::from(k),
    })
}

fn parse_startup(text: &str) -> Result<StartupDelay, String> {
    if text == "auto" {
        return Ok(StartupDelay::Auto);
    }
    parse_duration(text)
        .map(|d| StartupDelay::Fixed(d.as_secs_f64()))
        .map_err(|e| format!("{e} (or \"auto\")"))
}

fn parse_player(text: &str) -> Result<Player, String> {
    match text {
        "drop" => Ok(Player::Drop),
        "rebuffer" => Ok(Player::Rebuffer),
        other => Err(format!("unknown player {other:?} (drop or rebuffer)")),
    }
}

fn parse_refill(text: &str) -> Result<f64, String> {
    parse_duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|e| e.to_string())
}

fn is_h264(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("264") || e.eq_ignore_ascii_case("h264"))
}

/// Runs `fairstream evaluate`: rebuilds what the receiver could decode from
/// the packets in `rd` (re-packetizing the sent video as the sender did),
/// plays it out and compares it with the reference.
pub(crate) fn run_evaluate(args: &EvaluateArgs) -> anyhow::Result<()> {
    let [st, sd] = &args.sent[..] else {
        bail!("--sent needs two files: the sender trace (st) and the sender dump (sd)");
    };
    let video_path = match (&args.video, is_h264(&args.reference)) {
        (Some(video), _) => video.clone(),
        (None, true) => args.reference.clone(),
        (None, false) => bail!(
            "{} is not an H.264 file: give the video that was sent with --video",
            args.reference.display()
        ),
    };
    let video = std::fs::read(&video_path)
        .with_context(|| format!("cannot read {}", video_path.display()))?;
    let mut stream = MediaStream::from_annex_b(&video, args.fps)
        .with_context(|| video_path.display().to_string())?;
    let trace = read_sender_trace(st)?;
    let read = |path: &Path| {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let sent_dump = parse_dump(&read(sd)?, &sd.display().to_string())?;
    let received_dump = parse_dump(&read(&args.received)?, &args.received.display().to_string())?;
    let packets = stream.packetize(args.packet_size)?;
    // The trace must describe the same packetization.
    let mut per_frame = vec![0u32; stream.frames().len()];
    for packet in &packets {
        if let Some(count) = per_frame.get_mut(packet.frame) {
            *count += 1;
        }
    }
    for entry in &trace {
        let index = usize::try_from(entry.number.saturating_sub(1)).unwrap_or(usize::MAX);
        let Some(&count) = per_frame.get(index) else {
            bail!(
                "{}: frame {} is beyond the {} frames of {}",
                st.display(),
                entry.number,
                per_frame.len(),
                video_path.display()
            );
        };
        if count != entry.packets {
            bail!(
                "{}: frame {} was sent in {} packets, but {} packetized at {} bytes gives {}: \
                 give the run's packet size with --packet-size",
                st.display(),
                entry.number,
                entry.packets,
                video_path.display(),
                args.packet_size,
                count
            );
        }
    }
    let parity_dump = match &args.received_fec {
        Some(path) => parse_dump(&read(path)?, &path.display().to_string())?,
        None => Vec::new(),
    };
    let dumps = ReceivedDumps {
        sent: &sent_dump,
        received: &received_dump,
        parity_received: &parity_dump,
    };
    if args.refill.is_some() && args.player != Player::Rebuffer {
        bail!("--refill applies to --player rebuffer only");
    }
    let playback = Playback {
        startup: args.startup_delay,
        player: args.player,
        refill_s: args.refill,
    };
    let judge = |stream: &MediaStream| {
        evaluate_dumps(stream, &packets, dumps, args.fec, playback)
            .with_context(|| format!("cannot judge {}", args.received.display()))
    };
    // A raw reference replaces the loss-free decode.
    let report = if args.reference.as_os_str() == "generated" {
        let (width, height) = args
            .size
            .context("--reference generated needs the picture size: --size WIDTHxHEIGHT")?;
        let generator = fairstream_media::generator::Generator::new(width, height)?;
        let frames = (0..stream.frames().len())
            .map(|n| generator.frame(n as u64))
            .collect();
        stream = stream.with_reference_frames(frames)?;
        judge(&stream)?
    } else if is_h264(&args.reference) && args.video.is_none() {
        judge(&stream)?
    } else if is_h264(&args.reference) {
        let reference_bytes = std::fs::read(&args.reference)
            .with_context(|| format!("cannot read {}", args.reference.display()))?;
        let reference = MediaStream::from_annex_b(&reference_bytes, args.fps)?;
        stream = stream.with_reference_of(&reference)?;
        judge(&stream)?
    } else {
        let (width, height) = args
            .size
            .context("a raw .yuv reference needs its size: --size WIDTHxHEIGHT")?;
        let frames = read_yuv_file(&args.reference, width, height)?;
        stream = stream.with_reference_frames(frames)?;
        judge(&stream)?
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let p = &report.playout;
    println!(
        "frames {} shown {} | lost I {} P {} B {} | packets lost I {} P {} B {}",
        p.frames_total,
        p.frames_displayed,
        p.frames_lost.i,
        p.frames_lost.p,
        p.frames_lost.b,
        p.packets_lost.i,
        p.packets_lost.p,
        p.packets_lost.b
    );
    if args.fec.is_some() {
        println!("packets rebuilt by FEC {}", report.packets_recovered_by_fec);
    }
    println!(
        "start-up delay {:.3} s | stalls {} ({:.2} s frozen) | mean end-to-end delay {}",
        p.startup_delay_s,
        p.stalls,
        p.stall_time_s,
        p.end_to_end_delay_mean_s
            .map_or_else(|| "n/a".to_owned(), |d| format!("{:.3} s", d))
    );
    if p.player == Player::Rebuffer {
        println!(
            "player rebuffer | rebuffers {} ({:.2} s paused)",
            p.rebuffers, p.rebuffer_time_s
        );
    }
    if let Some(q) = &report.quality {
        println!(
            "PSNR {:.2} dB mean (± {:.2}), {:.2} dB from the mean MSE | SSIM {:.4} | MOS {:.2} \
             ({} identical frames counted at {} dB)",
            q.psnr_db_mean,
            q.psnr_db_std,
            q.psnr_db_mse,
            q.ssim_mean,
            q.mos_mean,
            q.frames_at_psnr_cap,
            q.psnr_cap_db
        );
    }
    Ok(())
}
