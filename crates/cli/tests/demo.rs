//! `fairstream demo`, run as a user runs it (the built binary, on
//! loopback), shortened: two runs of 4 s of a small picture. The test
//! checks the shape of what it prints and writes, not which run wins
//! (that needs the full length; `docs/results/demo.md` has the figures).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness
// The run is bounded with the real clock.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Runs `fairstream demo ARGS`, killing it after `limit`.
fn demo(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .arg("demo")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the fairstream binary runs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("fairstream demo still ran after {limit:?}");
        }
        thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-demo-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn number(value: &Value, path: &[&str]) -> f64 {
    let mut at = value;
    for key in path {
        at = at
            .get(key)
            .unwrap_or_else(|| panic!("no {path:?} in {value}"));
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number: {at}"))
}

#[test]
fn a_short_demo_prints_the_table_and_writes_the_report() {
    let dir = temp_dir("short");
    let out = dir.to_str().unwrap();
    let output = demo(
        &["--duration", "4s", "--size", "176x144", "--out", out],
        Duration::from_secs(120),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}\n{stderr}");
    assert!(output.status.success(), "{stderr}");
    // The side-by-side table and the conclusion.
    for text in [
        "one TFRC",
        "multi-connection",
        "throughput",
        "share of the link's capacity",
        "PSNR as encoded",
        "PSNR as received",
        "start-up delay",
        "stalls",
        "rebuilt by FEC",
        "recovered by retransmission",
        ", ARQ, seed",
        "the bytes of one TFRC connection",
    ] {
        assert!(stdout.contains(text), "no `{text}` in\n{stdout}");
    }
    // Progress on stderr.
    assert!(stderr.contains("run 1/2: one TFRC connection"), "{stderr}");
    assert!(stderr.contains("run 2/2"), "{stderr}");

    for file in [
        "index.html",
        "index.md",
        "summary.json",
        "throughput.png",
        "connections.png",
        "bitrate.png",
        "psnr.png",
        "psnr_encoded.png",
        "single.264",
        "multi.264",
    ] {
        let path = Path::new(out).join(file);
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .len();
        assert!(size > 0, "{} is empty", path.display());
    }
    // One self-contained page: the charts inline as SVG, nothing fetched.
    let html = std::fs::read_to_string(Path::new(out).join("index.html")).unwrap();
    assert!(html.contains("<table>") && html.contains("<svg"));
    assert!(html.contains("Throughput at the receiver"));
    assert!(!html.contains("src=") && !html.contains("<script"));
    let markdown = std::fs::read_to_string(Path::new(out).join("index.md")).unwrap();
    assert!(
        markdown.contains("![throughput](throughput.png)"),
        "{markdown}"
    );

    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(out).join("summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(number(&summary, &["setup", "rate_bps"]), 2e6);
    assert_eq!(number(&summary, &["setup", "duration_s"]), 4.0);
    assert!(summary["conclusion"].as_str().unwrap().contains("PSNR"));
    let runs = summary["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["key"], "single");
    assert_eq!(runs[1]["key"], "multi");
    for run in runs {
        let figures = &run["figures"];
        let throughput = number(figures, &["throughput_bps"]);
        let share = number(figures, &["share_of_capacity"]);
        let psnr = number(figures, &["psnr_db"]);
        assert!(throughput > 0.0, "{figures}");
        assert!(share > 0.0 && share <= 1.05, "{figures}");
        assert!(psnr.is_finite() && psnr > 10.0, "{figures}");
        // Loss only takes away from what the encoder made.
        let encoded = number(figures, &["psnr_encoded_db"]);
        assert!(encoded.is_finite() && encoded > psnr - 0.5, "{figures}");
        assert!(number(figures, &["ssim"]) <= 1.0);
        assert!(number(figures, &["connections_mean"]) >= 1.0);
        assert!(number(figures, &["channel_loss"]) < 0.2);
        // About 25 frames a second for 4 s, each with its PSNR.
        let frames = run["psnr_per_frame_db"].as_array().unwrap().len();
        assert!((80..=110).contains(&frames), "{frames} frames");
        assert!(!run["samples"].as_array().unwrap().is_empty());
        assert!(run["url"]
            .as_str()
            .unwrap()
            .starts_with("dccp://127.0.0.1:"));
    }
    assert!(runs[1]["url"]
        .as_str()
        .unwrap()
        .contains("controller=adaptive"));
    // Both runs retransmit (the default, no FEC), and say what it did.
    for run in runs {
        let url = run["url"].as_str().unwrap();
        assert!(url.ends_with("&arq=on") && !url.contains("fec="), "{url}");
        assert!(run["figures"]["arq"].is_array(), "{run}");
        assert!(run["figures"]["packets_rebuilt"].is_null(), "{run}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_options_fail_at_once_and_name_the_problem() {
    let dir = temp_dir("bad");
    let out = dir.to_str().unwrap();
    for (args, expected) in [
        (vec!["--loss", "150%"], "--loss"),
        (vec!["--rate", "fast"], "--rate"),
        (vec!["--size", "17x9"], "--size"),
        (vec!["--fec", "24,24"], "--fec"),
        (vec!["--fec", "300,250"], "1 <= k < n <= 255"),
    ] {
        let mut all = args.clone();
        all.extend(["--out", out]);
        let output = demo(&all, Duration::from_secs(10));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(!dir.exists(), "a failed demo created {}", dir.display());
}
