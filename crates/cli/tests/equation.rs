//! `fairstream equation`, run as a user runs it: the built binary.

mod support;

use serde_json::Value;
use support::{failure_of, fairstream, json_of, number};

/// Runs `fairstream equation ARGS --json`, expects success, parses stdout.
fn json(args: &[&str]) -> Value {
    json_of(&[&["equation"], args, &["--json"]].concat())
}

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

/// Expects `fairstream equation ARGS` to fail; returns its stderr.
fn failure(args: &[&str]) -> String {
    failure_of(&[&["equation"], args].concat())
}

#[test]
fn acceptance_rate_at_p() {
    let v = json(&["--p", "0.01", "--rtt", "100ms", "--size", "1460"]);
    assert!(
        rel(number(&v, "rate_bytes_per_s"), 164_005.06) < 1e-6,
        "{v}"
    );
    assert_eq!(
        number(&v, "rate_bits_per_s"),
        8.0 * number(&v, "rate_bytes_per_s")
    );
    assert_eq!(number(&v, "p"), 0.01);
    assert_eq!(number(&v, "rtt_s"), 0.1);
    assert_eq!(v["size_bytes"], 1460);
    assert_eq!(v["model"], "tfrc");
    assert_eq!(v["given"], "p");
    assert!(rel(number(&v, "f_p"), 0.089_021_642) < 1e-8, "{v}");
}

#[test]
fn acceptance_p_at_rate() {
    let forward = json(&["--p", "0.01", "--rtt", "100ms", "--size", "1460"]);
    // The rate printed, written back in Mbit/s with full precision.
    let mbit = format!("{}mbit", number(&forward, "rate_bits_per_s") / 1e6);
    let v = json(&["--rate", &mbit, "--rtt", "100ms", "--size", "1460"]);
    assert!(rel(number(&v, "p"), 0.01) < 1e-6, "{mbit}: {v}");
    assert_eq!(v["given"], "rate");
    // Bytes per second, as the note writes it.
    let v = json(&["--rate", "164005.06B/s", "--rtt", "100ms", "--size", "1460"]);
    assert!(rel(number(&v, "p"), 0.01) < 1e-6, "{v}");
    assert_eq!(number(&v, "rate_bytes_per_s"), 164_005.06);
    // Six decimals of Mbit/s lose 4e-7 of the rate; p still within 1e-6.
    let v = json(&["--rate", "1.312040mbit", "--rtt", "100ms", "--size", "1460"]);
    assert!(rel(number(&v, "p"), 0.01) < 1e-6, "{v}");
}

#[test]
fn size_defaults_to_1460() {
    let with = json(&["--p", "0.02", "--rtt", "50ms", "--size", "1460"]);
    let without = json(&["--p", "0.02", "--rtt", "50ms"]);
    assert_eq!(with, without);
    let help = fairstream(&["equation", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("[default: 1460]"));
}

#[test]
fn multfrc_n1_is_close_to_tfrc() {
    let tfrc = json(&["--p", "0.01", "--rtt", "100ms"]);
    let multfrc = json(&["--p", "0.01", "--rtt", "100ms", "--n", "1", "--j", "1"]);
    assert_eq!(multfrc["model"], "multfrc");
    let ratio = number(&multfrc, "rate_bytes_per_s") / number(&tfrc, "rate_bytes_per_s");
    assert!((ratio - 1.0).abs() < 0.04, "{ratio}");
    // tfrc-notes.md: 170,193 B/s.
    assert!((number(&multfrc, "rate_bytes_per_s") - 170_193.0).abs() < 0.5);
    assert_eq!(number(&multfrc, "n"), 1.0);
    assert_eq!(number(&multfrc, "j"), 1.0);
    assert_eq!(
        number(&multfrc, "tfrc_rate_bytes_per_s"),
        number(&tfrc, "rate_bytes_per_s")
    );
}

#[test]
fn multfrc_fractional_n_and_its_inverse() {
    let v = json(&["--p", "0.01", "--rtt", "100ms", "--n", "2.5"]);
    assert_eq!(number(&v, "j"), 1.0, "j defaults to 1");
    let bits = format!("{}bit", number(&v, "rate_bits_per_s"));
    let back = json(&["--rate", &bits, "--rtt", "100ms", "--n", "2.5"]);
    assert!(rel(number(&back, "p"), 0.01) < 1e-9, "{back}");
    // More flows get more than one at the same p.
    assert!(number(&v, "rate_bytes_per_s") > 2.0 * number(&v, "tfrc_rate_bytes_per_s"));
}

#[test]
fn table_agrees_with_direct() {
    for p in ["1e-9", "0.0002", "0.01", "0.3", "1"] {
        let direct = json(&["--p", p, "--rtt", "100ms"]);
        let table = json(&["--p", p, "--rtt", "100ms", "--table"]);
        assert_eq!(table["model"], "tfrc-table");
        let error = rel(
            number(&table, "rate_bytes_per_s"),
            number(&direct, "rate_bytes_per_s"),
        );
        assert!(error < 1e-4, "p {p}: {error}");
    }
}

#[test]
fn human_output() {
    let output = fairstream(&["equation", "--p", "0.01", "--rtt", "100ms"]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for expected in [
        "TFRC",
        "164.005 kB/s",
        "1.312 Mbit/s",
        "0.01",
        "f(p)",
        "0.0890216",
    ] {
        assert!(text.contains(expected), "no `{expected}` in\n{text}");
    }
    let output = fairstream(&["equation", "--rate", "1mbit", "--rtt", "100ms", "--n", "2"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("MulTFRC") && text.contains("solved"),
        "{text}"
    );
}

#[test]
fn bad_p() {
    let e = failure(&["--p", "2", "--rtt", "100ms"]);
    assert!(e.contains("'2'") && e.contains("--p"), "{e}");
    let e = failure(&["--p", "0", "--rtt", "100ms"]);
    assert!(e.contains("'0'") && e.contains("(0, 1]"), "{e}");
    let e = failure(&["--p", "lots", "--rtt", "100ms"]);
    assert!(e.contains("lots"), "{e}");
}

#[test]
fn rtt_without_unit() {
    let e = failure(&["--p", "0.01", "--rtt", "100"]);
    assert!(
        e.contains("'100'") && e.contains("--rtt") && e.contains("no unit"),
        "{e}"
    );
    let e = failure(&["--p", "0.01", "--rtt", "0ms"]);
    assert!(e.contains("0ms") && e.contains("positive"), "{e}");
}

#[test]
fn rate_with_unknown_unit() {
    let e = failure(&["--rate", "5furlongs", "--rtt", "100ms"]);
    assert!(e.contains("5furlongs") && e.contains("furlongs"), "{e}");
}

#[test]
fn exactly_one_of_p_and_rate() {
    let e = failure(&["--p", "0.01", "--rate", "1mbit", "--rtt", "100ms"]);
    assert!(e.contains("--p") && e.contains("--rate"), "{e}");
    let e = failure(&["--rtt", "100ms"]);
    assert!(e.contains("--p") && e.contains("--rate"), "{e}");
}

#[test]
fn other_bad_inputs() {
    let e = failure(&["--p", "0.01", "--rtt", "100ms", "--n", "0"]);
    assert!(e.contains("--n") && e.contains("'0'"), "{e}");
    let e = failure(&["--p", "0.01", "--rtt", "100ms", "--n", "2", "--j", "0.5"]);
    assert!(e.contains("--j") && e.contains("0.5"), "{e}");
    let e = failure(&["--p", "0.01", "--rtt", "100ms", "--j", "2"]);
    assert!(e.contains("--n"), "{e}");
    let e = failure(&["--p", "0.01", "--rtt", "100ms", "--size", "0"]);
    assert!(e.contains("--size") && e.contains("'0'"), "{e}");
    let e = failure(&["--p", "0.01", "--rtt", "100ms", "--n", "2", "--table"]);
    assert!(e.contains("--table"), "{e}");
    let e = failure(&["--rate", "1mbit", "--rtt", "100ms", "--table"]);
    assert!(e.contains("--table"), "{e}");
    // Below the equation's minimum (X at p = 1): a run-time error, named.
    let e = failure(&["--rate", "1bit", "--rtt", "100ms"]);
    assert!(e.contains("--rate") && e.contains("minimum"), "{e}");
}

#[test]
fn version_and_help() {
    let output = fairstream(&["--version"]);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        format!("fairstream {}", env!("CARGO_PKG_VERSION"))
    );
    let output = fairstream(&["--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    let line = help
        .lines()
        .find(|line| line.trim_start().starts_with("equation"))
        .unwrap_or_else(|| panic!("no `equation` in\n{help}"));
    assert!(line.contains("throughput equation"), "{line}");
    // Only subcommands that work are listed, and clap's help.
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(
        commands,
        [
            "demo",
            "equation",
            "emodel",
            "simulate",
            "sweep",
            "reproduce",
            "decode",
            "evaluate",
            "schedule",
            "send",
            "recv",
            "emulate",
            "relay",
            "help"
        ]
    );
}
