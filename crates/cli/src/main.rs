//! `fairstream`: the command-line front end.
//!
//! Subcommands: `demo`, `equation`, `emodel`, `simulate`, `sweep`, `reproduce`,
//! `decode`, `evaluate`, `schedule`, `send`, `recv`, `emulate` and `relay`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod demo_cmd;
mod emodel_cmd;
mod emulate_cmd;
mod equation_cmd;
mod plots;
mod quality;
mod relay_cmd;
mod reproduce_cmd;
mod schedule_cmd;
mod simulate_cmd;
mod simulate_page;
mod stream_cmd;
mod sweep_cmd;
mod video_cmd;

/// fairstream: TCP-friendly video streaming over lossy wireless last hops.
#[derive(Debug, Parser)]
#[command(name = "fairstream", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show what fairstream does: one TFRC connection against the adaptive default over an emulated lossy link
    ///
    /// On loopback: an emulated wireless link (2 Mbit/s, RTT 100 ms, 3 %
    /// loss by default), about 20 s of generated video encoded live across it
    /// with one TFRC connection and then with the multi-connection default.
    /// Prints a side-by-side table and writes an HTML report with plots to
    /// --out (./fairstream-demo).
    Demo(demo_cmd::DemoArgs),
    /// Evaluate the TFRC (RFC 5348) or MulTFRC throughput equation, or invert it
    ///
    /// The TCP throughput equation of TFRC (RFC 5348 §3.1, b = 1, t_RTO = 4R) or,
    /// with --n, the MulTFRC equation for n flows (draft-irtf-iccrg-multfrc).
    /// Given --p, prints the rate the equation allows; given --rate, prints the
    /// loss event rate p that gives it.
    Equation(equation_cmd::EquationArgs),
    /// Rate a voice call with the ITU-T G.107 E-model: R and MOS from codec, delay and loss
    ///
    /// The full G.107 E-model with its Table 1 defaults, the codec's Ie and
    /// Bpl from G.113 Appendix I, the one-way mouth-to-ear delay Ta (the echo
    /// delays T = Ta and Tr = 2·Ta unless given) and the packet loss with its
    /// burst ratio. Prints R, MOS (G.107 Annex B) and the impairments Id and
    /// Ie,eff on one line, or with --json one object.
    Emodel(emodel_cmd::EModelArgs),
    /// Run a scenario file in the deterministic network simulator
    ///
    /// Prints a JSON summary (per flow: throughput, goodput, losses split into
    /// congestion and channel losses, loss event rate, RTT, delay, rate
    /// variation; per link direction: utilisation, drops; `events`, the
    /// engine events processed, a deterministic count) on stdout. The same
    /// scenario and seed always give the same output, byte for byte. Unless
    /// --quiet, stderr ends with the events, the wall time and the events per
    /// second (which depend on the machine, so they stay out of the
    /// summary). Time series are kept only for --out. Every key of a
    /// scenario file, with its unit and default, is in docs/scenarios.md;
    /// examples are in experiments/.
    Simulate(simulate_cmd::SimulateArgs),
    /// Run a scenario over a grid of parameters and seeds, with 95 % confidence intervals
    ///
    /// A sweep file names a base scenario, the keys to vary (every
    /// combination of their values), the seeds and the metrics (JSON
    /// pointers into the summary, ratios, Jain's index); each run is a
    /// deterministic simulation, --jobs at a time, cached so that an
    /// interrupted sweep resumes. Writes runs.csv and summary.csv, .json and
    /// .md (mean ± the 95 % confidence interval's half-width over the seeds,
    /// Student's t). See docs/reproducing.md.
    Sweep(sweep_cmd::SweepArgs),
    /// Run the sweeps behind a paper's tables and figures and report them beside the paper's numbers
    ///
    /// `fairstream reproduce 001` (MULTFRC: Tables 1-2, Fig. 2) or `003`
    /// (proxy-based streaming: Tables 1-3, Figs. 4 and 6-8): the scenarios and
    /// the paper's own numbers are built in (experiments/), the runs go
    /// through the sweep engine (--jobs, --engine, a cache that resumes), and
    /// the report is OUT/index.html (self-contained) and OUT/index.md with
    /// PNG charts. --quick: fewer seeds and shorter runs (docs/reproducing.md
    /// gives the times measured). See docs/reproducing.md.
    Reproduce(reproduce_cmd::ReproduceArgs),
    /// Decode an H.264 file to raw I420 with error concealment, keeping every frame position
    ///
    /// Frames missing from the stream (found from frame_num gaps) or that the
    /// decoder cannot produce repeat the previous picture, so frame i of the
    /// output lines up with frame i of the original (EvalVid's convention).
    Decode(video_cmd::DecodeArgs),
    /// Judge a received stream from EvalVid's st, sd and rd files
    ///
    /// Rebuilds what the receiver could decode from the packets in rd, plays
    /// it out (late packets count as lost) and prints frames lost by type,
    /// start-up delay, stalls, PSNR, SSIM and MOS against the reference.
    Evaluate(video_cmd::EvaluateArgs),
    /// Compute paper 003's smoothing schedules for a stored video
    ///
    /// For the video's playout vector and a rate constraint (a fixed rate or
    /// a per-slot curve): the minimum start-up delay w*, the minimum client
    /// buffer x*, and with --proxy-rate the proxy buffer y' of the two-step
    /// proxy procedure.
    Schedule(schedule_cmd::ScheduleArgs),
    /// Stream H.264 over DCCP (in UDP) to a `fairstream recv`
    ///
    /// A file in real time at its frame rate (or on demand), Annex B from
    /// standard input, or generated content encoded live at the rate TFRC
    /// allows. Statistics on stderr; a JSON summary on stdout at the end.
    /// Exits 0 after a clean close (end of the source, --duration, Ctrl-C or
    /// SIGTERM, or the receiver closing); non-zero when the receiver is busy,
    /// fell silent for the URL's peer_timeout (auto: 8 RTTs, at least 4 s;
    /// after an ICMP port unreachable 4 RTTs, at least 1 s: ICMP alone
    /// never ends a stream) or did not answer the Close.
    Send(stream_cmd::SendArgs),
    /// Receive a `fairstream send` stream and write it out
    ///
    /// To an H.264 Annex B file, standard output, or plain RTP over UDP with
    /// an SDP file for ffplay, VLC or GStreamer. Serves one sender (others
    /// are refused as "too busy"). Exits when the sender closes, or closes
    /// itself on --duration, Ctrl-C or SIGTERM; a JSON summary on stdout
    /// (stderr when the video goes there). Exits 0 only after such a clean
    /// close with at least one frame written; non-zero when the sender fell
    /// silent for the URL's peer_timeout (auto: 8 RTTs, at least 4 s, once
    /// its data began), aborted the stream, or no frame arrived.
    Recv(stream_cmd::RecvArgs),
    /// Forward UDP through an emulated lossy link: the simulator's queue, rate, delay and loss models on the real clock
    ///
    /// Datagrams from clients at --listen cross the forward direction to --to;
    /// replies cross the backward direction to the client they answer. Link
    /// options shape the forward direction only unless their --back-… twin is
    /// given, except --delay, which applies both ways unless --back-delay is
    /// given. Without --back-rate/--trace-back the backward direction has no
    /// capacity limit; without --back-loss it loses nothing. Live statistics go
    /// to stderr; runs until --duration, Ctrl-C or SIGTERM.
    Emulate(Box<emulate_cmd::EmulateArgs>),
    /// Relay a `fairstream send` stream on under its own rate control (paper 003's proxy)
    ///
    /// Terminates the incoming connections as `recv` does, keeps the frames in
    /// a bounded buffer (--buffer; when full the oldest P and B frames are
    /// dropped first) and sends them on to the downstream URL as fast as its
    /// CCID allows, keeping their timestamps. When the upstream sender closes,
    /// the buffer is drained downstream before the relay closes; when the
    /// downstream side ends, the upstream connections are closed. Statistics
    /// (buffer occupancy, both sides' connections) on stderr; a JSON summary on
    /// stdout at the end. Exits non-zero when either side failed as send or
    /// recv would (a silent peer, an aborted stream, no frame relayed).
    Relay(relay_cmd::RelayArgs),
}

fn main() -> ExitCode {
    // Bad arguments: clap prints the error, naming the argument, and exits with 2.
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo_cmd::run(&args),
        Command::Equation(args) => equation_cmd::run(&args),
        Command::Emodel(args) => emodel_cmd::run(&args),
        Command::Simulate(args) => simulate_cmd::run(&args),
        Command::Sweep(args) => sweep_cmd::run(&args),
        Command::Reproduce(args) => reproduce_cmd::run(&args),
        Command::Decode(args) => video_cmd::run_decode(&args),
        Command::Evaluate(args) => video_cmd::run_evaluate(&args),
        Command::Schedule(args) => schedule_cmd::run(&args),
        Command::Send(args) => stream_cmd::run_send(&args),
        Command::Recv(args) => stream_cmd::run_recv(&args),
        Command::Emulate(args) => emulate_cmd::run(&args),
        Command::Relay(args) => relay_cmd::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", describe(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, like anyhow's `{:#}`, but each
/// cause only once: many errors already quote their source in their own
/// message (`cannot read x: No such file or directory (os error 2)`), and
/// the chain would repeat it.
fn describe(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let message = cause.to_string();
        if text.contains(&message) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&message);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::describe;
    use anyhow::Context;

    #[test]
    fn an_os_error_is_said_once() {
        let os = std::io::Error::from_raw_os_error(2);
        let quoting = anyhow::Error::new(std::io::Error::new(
            os.kind(),
            format!("cannot create out.264: {os}"),
        ))
        .context(format!("output: cannot create out.264: {os}"));
        let text = describe(&quoting);
        assert_eq!(text.matches("os error 2").count(), 1, "{text}");
        let plain: anyhow::Result<()> = Err(os).context("cannot read x");
        let text = describe(&plain.unwrap_err());
        assert!(text.starts_with("cannot read x: "), "{text}");
        assert_eq!(text.matches("os error 2").count(), 1, "{text}");
    }
}
