//! `fairstream emodel`: a voice call's ITU-T G.107 rating from the command line.
//!
//! ```text
//! fairstream emodel --codec g711 --delay 150ms --loss 2%            # R and MOS
//! fairstream emodel --codec g729 --delay 300ms --loss 0.01 --burst-ratio 1.5
//! fairstream emodel --codec g711-plc --delay 150ms --loss 2% --json # machine-readable
//! ```
//!
//! Every other input keeps G.107 Table 1's default. `--delay` is the one-way
//! mouth-to-ear delay Ta; the echo delays follow it for a symmetric path,
//! T = Ta and Tr = 2·Ta, unless `--echo-path-delay` or `--round-trip-delay`
//! give them.

use std::io::Write;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use fairstream_media::emodel::{Codec, EModelInput, Rating};
use fairstream_proto::units::parse_duration;
use serde::Serialize;

use crate::equation_cmd::{describe_unit_error, parse_positive};

/// Arguments of `fairstream emodel`.
#[derive(Debug, Args)]
pub(crate) struct EModelArgs {
    /// The codec and its G.113 Appendix I Ie and Bpl: g711 (no concealment,
    /// Bpl 4.3), g711-plc (G.711 Appendix I concealment, Bpl 25.1) or g729
    /// (G.729A with VAD, Ie 11, Bpl 19).
    #[arg(long, value_name = "CODEC", value_parser = parse_codec)]
    codec: Codec,

    /// One-way mouth-to-ear delay Ta, with a unit (150ms, 0.3s).
    #[arg(long, value_name = "DURATION", value_parser = parse_delay)]
    delay: Duration,

    /// Packet loss Ppl, as a percentage (2%) or a fraction (0.02).
    #[arg(long, value_name = "LOSS", value_parser = parse_loss, default_value = "0%")]
    loss: LossPercent,

    /// BurstR: 1 for random loss, more for bursty loss (for a two-state
    /// Markov model with transition probabilities p and q, 1/(p + q)).
    #[arg(long, value_name = "RATIO", value_parser = parse_burst_ratio, default_value = "1")]
    burst_ratio: f64,

    /// T, the mean one-way delay of the echo path [default: --delay].
    #[arg(long, value_name = "DURATION", value_parser = parse_delay)]
    echo_path_delay: Option<Duration>,

    /// Tr, the round-trip delay of the 4-wire loop [default: twice --delay].
    #[arg(long, value_name = "DURATION", value_parser = parse_delay)]
    round_trip_delay: Option<Duration>,

    /// Print one JSON object (full f64 precision) instead of a line of text.
    #[arg(long)]
    json: bool,
}

/// Packet loss in percent, in [0, 100].
#[derive(Debug, Clone, Copy)]
struct LossPercent(f64);

/// `--codec`: a codec's name.
fn parse_codec(text: &str) -> Result<Codec, String> {
    text.parse()
        .map_err(|e: fairstream_media::emodel::UnknownCodec| e.to_string())
}

/// `--delay`, `--echo-path-delay`, `--round-trip-delay`: a duration with a
/// unit, zero allowed.
fn parse_delay(text: &str) -> Result<Duration, String> {
    parse_duration(text).map_err(|e| describe_unit_error(text, &e, "150ms"))
}

/// `--loss`: `2%` (a percentage in [0, 100]) or `0.02` (a fraction in [0, 1]).
fn parse_loss(text: &str) -> Result<LossPercent, String> {
    let trimmed = text.trim();
    let (number, scale, range) = match trimmed.strip_suffix('%') {
        Some(number) => (number.trim(), 1.0, "[0, 100] %"),
        None => (trimmed, 100.0, "[0, 1] (or write a percentage, e.g. 2%)"),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a loss (expected e.g. 2% or 0.02)"))?;
    let percent = value * scale;
    if value.is_finite() && (0.0..=100.0).contains(&percent) {
        Ok(LossPercent(percent))
    } else {
        Err(format!("loss `{text}` is outside {range}"))
    }
}

/// `--burst-ratio`: a finite number > 0.
fn parse_burst_ratio(text: &str) -> Result<f64, String> {
    parse_positive(text, "BurstR", "1.5")
}

/// What `--json` prints: the inputs that differ from G.107's defaults, R,
/// MOS and the terms of R.
#[derive(Debug, Serialize)]
struct Report {
    codec: &'static str,
    ie: f64,
    bpl: f64,
    ta_ms: f64,
    t_ms: f64,
    tr_ms: f64,
    ppl_percent: f64,
    burst_ratio: f64,
    r: f64,
    mos: f64,
    ro: f64,
    is: f64,
    id: f64,
    idte: f64,
    idle: f64,
    idd: f64,
    ie_eff: f64,
    a: f64,
}

/// Runs `fairstream emodel`.
pub(crate) fn run(args: &EModelArgs) -> anyhow::Result<()> {
    let input = input(args);
    let rating = input.evaluate().context("cannot evaluate the E-model")?;
    let report = report(args.codec, &input, &rating);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report).context("cannot write JSON to stdout")?;
        writeln!(out).context("cannot write to stdout")?;
    } else {
        writeln!(out, "{}", line(&report)).context("cannot write to stdout")?;
    }
    Ok(())
}

/// G.107 Table 1's defaults with the codec, the delays and the loss given.
fn input(args: &EModelArgs) -> EModelInput {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut input = EModelInput::default()
        .with_codec(args.codec)
        .with_mouth_to_ear_delay(ms(args.delay));
    if let Some(t) = args.echo_path_delay {
        input.t_ms = ms(t);
    }
    if let Some(tr) = args.round_trip_delay {
        input.tr_ms = ms(tr);
    }
    input.ppl_percent = args.loss.0;
    input.burst_ratio = args.burst_ratio;
    input
}

fn report(codec: Codec, input: &EModelInput, rating: &Rating) -> Report {
    Report {
        codec: codec.name(),
        ie: input.ie,
        bpl: input.bpl,
        ta_ms: input.ta_ms,
        t_ms: input.t_ms,
        tr_ms: input.tr_ms,
        ppl_percent: input.ppl_percent,
        burst_ratio: input.burst_ratio,
        r: rating.r,
        mos: rating.mos,
        ro: rating.ro,
        is: rating.is,
        id: rating.id,
        idte: rating.idte,
        idle: rating.idle,
        idd: rating.idd,
        ie_eff: rating.ie_eff,
        a: rating.a,
    }
}

/// The one line of text: R, MOS, the impairments, then the call.
fn line(report: &Report) -> String {
    format!(
        "R {:.2}  MOS {:.2}  Id {:.2} (Idte {:.2}, Idle {:.2}, Idd {:.2})  Ie,eff {:.2}  \
         [{}, Ta {} ms, T {} ms, Tr {} ms, loss {} %, BurstR {}; G.107 defaults otherwise]",
        report.r,
        report.mos,
        report.id,
        report.idte,
        report.idle,
        report.idd,
        report.ie_eff,
        report.codec,
        report.ta_ms,
        report.t_ms,
        report.tr_ms,
        report.ppl_percent,
        report.burst_ratio,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_a_percentage_or_a_fraction() {
        assert_eq!(parse_loss("2%").map(|l| l.0), Ok(2.0));
        assert_eq!(parse_loss(" 2.5 % ").map(|l| l.0), Ok(2.5));
        assert_eq!(parse_loss("0.02").map(|l| l.0), Ok(2.0));
        assert_eq!(parse_loss("0").map(|l| l.0), Ok(0.0));
        assert_eq!(parse_loss("100%").map(|l| l.0), Ok(100.0));
        let e = parse_loss("2").unwrap_err();
        assert!(e.contains("[0, 1]") && e.contains("2%"), "{e}");
        assert!(parse_loss("101%").is_err());
        assert!(parse_loss("-1%").is_err());
        assert!(parse_loss("NaN").is_err());
        assert!(parse_loss("lots").unwrap_err().contains("`lots`"));
    }

    #[test]
    fn other_values() {
        assert_eq!(parse_codec("g711-plc"), Ok(Codec::G711Plc));
        assert!(parse_codec("opus").unwrap_err().contains("opus"));
        assert_eq!(parse_delay("150ms"), Ok(Duration::from_millis(150)));
        assert_eq!(parse_delay("0ms"), Ok(Duration::ZERO));
        assert!(parse_delay("150").unwrap_err().contains("no unit"));
        assert!(parse_delay("-5ms").is_err());
        assert_eq!(parse_burst_ratio("1.5"), Ok(1.5));
        assert!(parse_burst_ratio("0").is_err());
        assert!(parse_burst_ratio("inf").is_err());
    }
}
