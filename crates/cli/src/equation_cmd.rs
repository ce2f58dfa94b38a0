//! `fairstream equation`: the throughput equations from the command line.
//!
//! ```text
//! fairstream equation --p 0.01 --rtt 100ms --size 1460               # TFRC rate
//! fairstream equation --p 0.01 --rtt 100ms --n 2.5 --j 1             # MulTFRC rate
//! fairstream equation --rate 1mbit --rtt 100ms --size 1460           # p for that rate
//! fairstream equation --p 0.01 --rtt 100ms --json                    # machine-readable
//! ```

use std::io::Write;
use std::time::Duration;

use anyhow::Context;
use clap::{ArgGroup, Args};
use fairstream_proto::cc::equation::{self, FTable, TcpEquation};
use fairstream_proto::cc::multfrc::{self, MulTfrcEquation};
use fairstream_proto::units::{parse_duration, Bytes, Rate, UnitError};
use serde::Serialize;

/// Arguments of `fairstream equation`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("given").required(true).args(["p", "rate"])))]
pub(crate) struct EquationArgs {
    /// Loss event rate p, in (0, 1]; prints the rate the equation allows.
    #[arg(long, value_name = "P", value_parser = parse_loss_event_rate)]
    p: Option<f64>,

    /// A rate with a unit (1mbit, 1.312040mbit, 250kbit, 164005.06B/s); prints the p that gives it.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    rate: Option<Rate>,

    /// Round-trip time R, with a unit (100ms, 0.1s, 250us).
    #[arg(long, value_name = "DURATION", value_parser = parse_rtt)]
    rtt: Duration,

    /// Packet size s in bytes (1460, 1460B, 1.5kB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1460")]
    size: Bytes,

    /// Use the MulTFRC equation for n flows together (a real number > 0, e.g. 2.5).
    #[arg(long, value_name = "N", value_parser = parse_flow_count)]
    n: Option<f64>,

    /// MulTFRC: mean number of packets lost per loss event (a real number >= 1) [default: 1].
    #[arg(long, value_name = "J", value_parser = parse_losses_per_event, requires = "n")]
    j: Option<f64>,

    /// Evaluate TFRC's f(p) with the lookup table instead of directly (with --p, without --n).
    #[arg(long, conflicts_with_all = ["n", "rate"])]
    table: bool,

    /// Print one JSON object (full f64 precision) instead of text.
    #[arg(long)]
    json: bool,
}

/// `--p`: a number in (0, 1].
fn parse_loss_event_rate(text: &str) -> Result<f64, String> {
    let p: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number (expected p in (0, 1], e.g. 0.01)"))?;
    // RFC 5348 §3.1: p is a fraction of packets; the equation needs p > 0.
    if p > 0.0 && p <= 1.0 {
        Ok(p)
    } else {
        Err(format!("p = {text} is outside (0, 1]"))
    }
}

/// A unit error, with "no unit" said plainly when the unit is missing.
pub(crate) fn describe_unit_error(text: &str, error: &UnitError, example: &str) -> String {
    match error {
        UnitError::BadUnit { unit, expected, .. } if unit.is_empty() => {
            format!("`{text}` has no unit: write e.g. {example} (units: {expected})")
        }
        other => other.to_string(),
    }
}

/// `--rate`: a positive rate with a unit.
fn parse_rate(text: &str) -> Result<Rate, String> {
    let rate: Rate = text
        .parse()
        .map_err(|e| describe_unit_error(text, &e, "1mbit or 125kB/s"))?;
    if rate.bytes_per_sec() > 0.0 {
        Ok(rate)
    } else {
        Err(format!("rate `{text}` must be positive"))
    }
}

/// `--rtt`: a positive duration with a unit.
fn parse_rtt(text: &str) -> Result<Duration, String> {
    let rtt = parse_duration(text).map_err(|e| describe_unit_error(text, &e, "100ms"))?;
    if rtt.is_zero() {
        Err(format!("round-trip time `{text}` must be positive"))
    } else {
        Ok(rtt)
    }
}

/// `--size`: a positive whole number of bytes.
fn parse_size(text: &str) -> Result<Bytes, String> {
    let size: Bytes = text.parse().map_err(|e: UnitError| e.to_string())?;
    // f64 holds every whole number up to 2^53 exactly; no packet is larger.
    if size.get() == 0 || size.get() > (1 << 53) {
        Err(format!(
            "packet size `{text}` must be between 1 byte and 2^53 bytes"
        ))
    } else {
        Ok(size)
    }
}

/// `--n`: a finite real number > 0.
fn parse_flow_count(text: &str) -> Result<f64, String> {
    parse_positive(text, "n", "2.5")
}

/// A finite real number > 0, called `symbol` in the messages.
pub(crate) fn parse_positive(text: &str, symbol: &str, example: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number (expected {symbol} > 0, e.g. {example})"))?;
    if value > 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{symbol} = {text} must be a finite number > 0"))
    }
}

/// `--j`: a finite real number >= 1.
fn parse_losses_per_event(text: &str) -> Result<f64, String> {
    let j: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number (expected j >= 1, e.g. 1)"))?;
    // A loss event loses at least one packet.
    if j >= 1.0 && j.is_finite() {
        Ok(j)
    } else {
        Err(format!("j = {text} must be a finite number >= 1"))
    }
}

/// Which equation was used.
#[derive(Clone, Copy, Debug)]
enum Model {
    /// RFC 5348 §3.1, f(p) computed directly.
    Tfrc,
    /// RFC 5348 §3.1, f(p) from the lookup table.
    TfrcTable,
    /// MulTFRC for n flows, j packets lost per loss event.
    MulTfrc { n: f64, j: f64 },
}

impl Model {
    fn key(self) -> &'static str {
        match self {
            Model::Tfrc => "tfrc",
            Model::TfrcTable => "tfrc-table",
            Model::MulTfrc { .. } => "multfrc",
        }
    }

    fn description(self) -> String {
        match self {
            Model::Tfrc => "TFRC, RFC 5348 §3.1 (b = 1, t_RTO = 4R)".to_owned(),
            Model::TfrcTable => {
                "TFRC, RFC 5348 §3.1 (b = 1, t_RTO = 4R), f(p) from the lookup table".to_owned()
            }
            Model::MulTfrc { n, j } => {
                format!("MulTFRC, draft-irtf-iccrg-multfrc (n = {n}, j = {j}, b = 1, t_RTO = 4R)")
            }
        }
    }
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Report {
    /// `tfrc`, `tfrc-table` or `multfrc`.
    model: &'static str,
    /// Which of p and rate was given (`p` or `rate`); the other was computed.
    given: &'static str,
    p: f64,
    rate_bytes_per_s: f64,
    rate_bits_per_s: f64,
    rtt_s: f64,
    size_bytes: u64,
    b: f64,
    t_rto_s: f64,
    /// TFRC's f(p), X = s/(R·f(p)); absent for MulTFRC.
    #[serde(skip_serializing_if = "Option::is_none")]
    f_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    n: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    j: Option<f64>,
    /// MulTFRC: TFRC's rate at the same p, for comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    tfrc_rate_bytes_per_s: Option<f64>,
}

/// Runs `fairstream equation`.
pub(crate) fn run(args: &EquationArgs) -> anyhow::Result<()> {
    let (model, report) = compute(args)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report).context("cannot write JSON to stdout")?;
        writeln!(out).context("cannot write to stdout")?;
    } else {
        write_text(&mut out, &report, model).context("cannot write to stdout")?;
    }
    Ok(())
}

/// The model the arguments select, and its results.
fn compute(args: &EquationArgs) -> anyhow::Result<(Model, Report)> {
    let s = args.size.get() as f64; // exact: parse_size bounds it by 2^53
    let rtt = args.rtt;
    let model = match args.n {
        Some(n) => Model::MulTfrc {
            n,
            j: args.j.unwrap_or(1.0),
        },
        None if args.table => Model::TfrcTable,
        None => Model::Tfrc,
    };
    let (given, p, rate) = match (args.p, args.rate) {
        (Some(p), _) => {
            let rate = match model {
                Model::Tfrc => equation::tfrc_rate(s, rtt, p),
                Model::TfrcTable => FTable::new().rate(s, rtt, p),
                Model::MulTfrc { n, j } => multfrc::multfrc_rate(s, rtt, p, n, j),
            }
            .with_context(|| format!("cannot evaluate the equation at p = {p}"))?;
            ("p", p, rate)
        }
        (None, Some(rate)) => {
            let p = match model {
                Model::Tfrc | Model::TfrcTable => equation::tfrc_loss_event_rate(rate, s, rtt),
                Model::MulTfrc { n, j } => multfrc::multfrc_loss_event_rate(rate, s, rtt, n, j),
            }
            .with_context(|| format!("no loss event rate gives --rate {rate}"))?;
            ("rate", p, rate)
        }
        // clap's required group "given" makes this unreachable; say so if not.
        (None, None) => anyhow::bail!("one of --p and --rate is required"),
    };
    let (b, rto_factor) = match model {
        Model::MulTfrc { .. } => {
            let equation = MulTfrcEquation::default();
            (equation.b, equation.rto_factor)
        }
        Model::Tfrc | Model::TfrcTable => {
            let equation = TcpEquation::default();
            (equation.b, equation.rto_factor)
        }
    };
    let (f_p, n, j, tfrc_rate) = match model {
        Model::Tfrc => (Some(equation::f(p)), None, None, None),
        Model::TfrcTable => (Some(FTable::new().f(p)), None, None, None),
        Model::MulTfrc { n, j } => {
            let tfrc = equation::tfrc_rate(s, rtt, p)
                .with_context(|| format!("cannot evaluate TFRC at p = {p}"))?;
            (None, Some(n), Some(j), Some(tfrc.bytes_per_sec()))
        }
    };
    let report = Report {
        model: model.key(),
        given,
        p,
        rate_bytes_per_s: rate.bytes_per_sec(),
        rate_bits_per_s: rate.bits_per_sec(),
        rtt_s: rtt.as_secs_f64(),
        size_bytes: args.size.get(),
        b,
        t_rto_s: rto_factor * rtt.as_secs_f64(),
        f_p,
        n,
        j,
        tfrc_rate_bytes_per_s: tfrc_rate,
    };
    Ok((model, report))
}

/// `value` with an SI prefix (k, M, G) and 3 decimals, e.g. `164.005 kB/s`.
fn si(value: f64, unit: &str) -> String {
    let (scaled, prefix) = if value >= 1e9 {
        (value / 1e9, "G")
    } else if value >= 1e6 {
        (value / 1e6, "M")
    } else if value >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    format!("{scaled:.3} {prefix}{unit}")
}

/// `value` to 7 significant digits, without an exponent where that stays short.
fn significant(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return value.to_string();
    }
    let magnitude = value.abs().log10().floor();
    if (-4.0..7.0).contains(&magnitude) {
        // Casts are of small whole numbers: magnitude is in [-4, 7).
        let decimals = (6.0 - magnitude).max(0.0) as usize;
        format!("{value:.decimals$}")
    } else {
        format!("{value:.6e}")
    }
}

fn write_text(out: &mut impl Write, report: &Report, model: Model) -> std::io::Result<()> {
    let (p_note, rate_note) = if report.given == "p" {
        ("", "")
    } else {
        ("  (solved for)", "  (given)")
    };
    writeln!(out, "model        {}", model.description())?;
    writeln!(out, "p            {}{p_note}", significant(report.p))?;
    if let Some(f_p) = report.f_p {
        writeln!(out, "f(p)         {}", significant(f_p))?;
    }
    writeln!(
        out,
        "RTT          {:?}",
        Duration::from_secs_f64(report.rtt_s)
    )?;
    writeln!(out, "packet size  {} B", report.size_bytes)?;
    let bytes = si(report.rate_bytes_per_s, "B/s");
    let bits = si(report.rate_bits_per_s, "bit/s");
    let width = bytes.len().max(bits.len());
    writeln!(
        out,
        "rate         {bytes:<width$}  ({:.2} B/s){rate_note}",
        report.rate_bytes_per_s
    )?;
    writeln!(
        out,
        "             {bits:<width$}  ({:.2} bit/s)",
        report.rate_bits_per_s
    )?;
    if let Some(tfrc) = report.tfrc_rate_bytes_per_s {
        writeln!(
            out,
            "TFRC at p    {}  (MulTFRC / TFRC = {:.4})",
            si(tfrc, "B/s"),
            report.rate_bytes_per_s / tfrc
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_parsers_name_the_bad_value() {
        assert_eq!(parse_loss_event_rate("0.01"), Ok(0.01));
        assert_eq!(parse_loss_event_rate("1"), Ok(1.0));
        assert!(parse_loss_event_rate("2").unwrap_err().contains("2"));
        assert!(parse_loss_event_rate("0").is_err());
        assert!(parse_loss_event_rate("NaN").is_err());
        assert!(parse_loss_event_rate("x").unwrap_err().contains("`x`"));
        let e = parse_rtt("100").unwrap_err();
        assert!(e.contains("`100` has no unit"), "{e}");
        assert!(parse_rtt("0ms").is_err());
        assert_eq!(parse_rtt("100ms"), Ok(Duration::from_millis(100)));
        let e = parse_rate("5furlongs").unwrap_err();
        assert!(e.contains("furlongs"), "{e}");
        assert!(parse_rate("0mbit").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_flow_count("0").is_err());
        assert!(parse_flow_count("inf").is_err());
        assert!(parse_losses_per_event("0.5").is_err());
        assert_eq!(parse_losses_per_event("1.5"), Ok(1.5));
    }

    #[test]
    fn formatting() {
        assert_eq!(si(164_005.06, "B/s"), "164.005 kB/s");
        assert_eq!(si(1_312_040.48, "bit/s"), "1.312 Mbit/s");
        assert_eq!(si(60.0, "B/s"), "60.000 B/s");
        assert_eq!(significant(0.01), "0.01000000");
        assert_eq!(significant(0.089_021_642), "0.08902164");
        assert_eq!(significant(1e-9), "1.000000e-9");
        assert_eq!(significant(243.315_981), "243.3160");
    }
}
