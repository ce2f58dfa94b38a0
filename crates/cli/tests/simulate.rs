//! `fairstream simulate`, run as a user runs it: the built binary on
//! scenario files, with its JSON on stdout, its files under `--out` and
//! `--pcap-dir`, and its errors on stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fairstream(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .args(args)
        .output()
        .expect("the fairstream binary runs")
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-cli-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The scenario of the issue's key list, written by hand from it (with node
/// "b" declared: the list links "a" to "b").
const HAND_WRITTEN: &str = r#"
[run]
duration = "20s"          # with units
seed = 1
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
between = ["a", "b"]      # full duplex
rate = "5mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 50 }
loss = { kind = "bernoulli", p = 0.02 }
[[flow]]
name = "video"
from = "a"
to = "b"
start = "0s"
transport = { cc = "tfrc" }
[[flow]]
name = "ftp"
from = "a"
to = "b"
start = "1s"
transport = { cc = "tcp-newreno" }
[[flow]]
name = "cbr"
from = "b"
to = "a"
transport = { cc = "cbr", rate = "500kbit" }
"#;

fn write_scenario(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("scenario.toml");
    fs::write(&path, text).unwrap();
    path
}

fn run_ok(args: &[&str]) -> (Value, String) {
    let output = fairstream(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{args:?} failed: {stderr}");
    (
        serde_json::from_slice(&output.stdout).expect("stdout is one JSON object"),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn a_hand_written_scenario_runs_and_prints_the_summary() {
    let dir = scratch("hand");
    let path = write_scenario(&dir, HAND_WRITTEN);
    let (summary, text) = run_ok(&["simulate", path.to_str().unwrap(), "--quiet"]);
    for key in ["seed", "sim_time_s", "events", "flows", "links"] {
        assert!(summary.get(key).is_some(), "{key} missing");
    }
    assert_eq!(summary["sim_time_s"].as_f64(), Some(20.0));
    let flows = summary["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 3);
    for flow in flows {
        for key in [
            "name",
            "cc",
            "throughput_bps",
            "goodput_bps",
            "packets_sent",
            "packets_lost_congestion",
            "packets_lost_channel",
            "loss_event_rate",
            "mean_rtt_s",
            "mean_one_way_delay_s",
            "rate_cov",
        ] {
            assert!(flow.get(key).is_some(), "flow key {key} missing");
        }
        assert!(flow["throughput_bps"].as_f64().unwrap() > 0.0, "{flow}");
    }
    assert_eq!(flows[0]["cc"], "tfrc");
    assert!(flows[0]["packets_lost_channel"].as_u64().unwrap() > 0);
    for link in summary["links"].as_array().unwrap() {
        for key in [
            "name",
            "direction",
            "utilization",
            "queue_drops",
            "channel_losses",
        ] {
            assert!(link.get(key).is_some(), "link key {key} missing");
        }
    }
    assert_eq!(summary["conservation_ok"], true);
    // --seed and --duration override the file; the same seed gives the
    // same bytes.
    let (again, again_text) = run_ok(&["simulate", path.to_str().unwrap(), "--quiet"]);
    assert_eq!(text, again_text);
    assert_eq!(summary, again);
    let (other, _) = run_ok(&[
        "simulate",
        path.to_str().unwrap(),
        "--quiet",
        "--seed",
        "9",
        "--duration",
        "5s",
    ]);
    assert_eq!(other["seed"], 9);
    assert_eq!(other["sim_time_s"].as_f64(), Some(5.0));
    // Without --quiet, stderr's last line gives the events the summary
    // counts and their rate on the wall clock.
    let output = Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .args(["simulate", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let events = summary["events"].as_u64().unwrap();
    assert!(events > 0);
    assert!(
        stderr.contains(&format!("done: {events} events in ")) && stderr.contains("M events/s"),
        "{stderr}"
    );
}

#[test]
fn out_dir_holds_csv_series_and_plots() {
    let dir = scratch("out");
    let path = write_scenario(&dir, HAND_WRITTEN);
    let out = dir.join("results");
    let (summary, _) = run_ok(&[
        "simulate",
        path.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let saved: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(saved, summary);
    let video = fs::read_to_string(out.join("flows/video.csv")).unwrap();
    let mut lines = video.lines();
    assert_eq!(
        lines.next(),
        Some("time_s,throughput_bps,allowed_rate_bps,rtt_s,loss_event_rate,connections,packets_sent,packets_lost,buffer_s,enhancement_share,proxy_buffer_bytes")
    );
    // One row per 100 ms of the 20 s run.
    assert_eq!(lines.clone().count(), 200);
    let last: Vec<&str> = lines.last().unwrap().split(',').collect();
    assert_eq!(last[0], "20");
    assert!(last[2].parse::<f64>().unwrap() > 0.0, "allowed rate");
    let link = fs::read_to_string(out.join("links/a-to-b.csv")).unwrap();
    assert!(link.starts_with("time_s,queue_packets,queue_bytes,throughput_bps"));
    assert_eq!(link.lines().count(), 201);
    assert!(out.join("links/b-to-a.csv").exists());
    for plot in ["throughput.png", "queue.png", "allowed_rate.png", "rtt.png"] {
        let bytes = fs::read(out.join(plot)).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "{plot}");
        assert!(bytes.len() > 2000, "{plot} is only {} bytes", bytes.len());
    }
    // The report page: the summary's flows and the charts, inline.
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    for text in [
        "<table>",
        "video",
        "a-&gt;b",
        "<svg",
        "Throughput per flow (seed",
    ] {
        assert!(html.contains(text), "no {text} in index.html");
    }
    assert!(!html.contains("src=") && !html.contains("<script"));
    let markdown = fs::read_to_string(out.join("index.md")).unwrap();
    assert!(markdown.contains("![rtt](rtt.png)"), "{markdown}");
}

#[test]
fn pcap_dir_captures_are_clean_for_tshark() {
    let dir = scratch("pcap");
    let text = HAND_WRITTEN.replace("duration = \"20s\"", "duration = \"3s\"");
    let path = write_scenario(&dir, &text);
    let pcaps = dir.join("pcaps");
    let (summary, _) = run_ok(&[
        "simulate",
        path.to_str().unwrap(),
        "--quiet",
        "--pcap-dir",
        pcaps.to_str().unwrap(),
    ]);
    let forward = pcaps.join("a-to-b.pcap");
    let reverse = pcaps.join("b-to-a.pcap");
    assert!(forward.exists() && reverse.exists());
    let Some(tshark) = fairstream_testkit::tool("tshark") else {
        return;
    };
    for (pcap, link) in [(&forward, 0), (&reverse, 1)] {
        let output = Command::new(&tshark)
            .args(["-r", pcap.to_str().unwrap()])
            .args(["-o", "dccp.check_checksum:TRUE"])
            .args(["-T", "fields", "-E", "separator=|"])
            .args(["-e", "ip.proto", "-e", "dccp.checksum.status"])
            .args(["-e", "_ws.malformed", "-e", "_ws.expert.severity"])
            .output()
            .expect("run tshark");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        let delivered = summary["links"][link]["packets_delivered"]
            .as_u64()
            .unwrap();
        assert_eq!(lines.len() as u64, delivered, "one frame per packet");
        let mut dccp = 0;
        for line in &lines {
            let fields: Vec<&str> = line.split('|').collect();
            assert!(fields[2].is_empty(), "malformed: {line}");
            if fields[0] == "33" {
                dccp += 1;
                // 1 is "good" in Wireshark's checksum status (0 bad, 2
                // unverified).
                assert_eq!(fields[1], "1", "DCCP checksum: {line}");
            }
            // No expert errors (severity 8388608 = error).
            assert!(!fields[3].contains("8388608"), "expert error: {line}");
        }
        assert!(dccp > 0, "no DCCP packet in {}", pcap.display());
        eprintln!(
            "{}: {} frames, {dccp} DCCP, all clean",
            pcap.display(),
            lines.len()
        );
    }
}

fn failure(args: &[&str]) -> String {
    let output = fairstream(args);
    assert!(!output.status.success(), "{args:?} should fail");
    assert!(output.stdout.is_empty(), "no JSON on failure");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn bad_scenarios_and_options_are_named() {
    let dir = scratch("bad");
    let typo = write_scenario(
        &dir,
        &HAND_WRITTEN.replace("delay = \"20ms\"", "dealy = \"20ms\""),
    );
    let stderr = failure(&["simulate", typo.to_str().unwrap()]);
    assert!(stderr.contains("dealy"), "{stderr}");
    assert!(stderr.contains("line 12"), "{stderr}");

    let unit = dir.join("unit.toml");
    fs::write(&unit, HAND_WRITTEN.replace("\"5mbit\"", "\"5 furlongs\"")).unwrap();
    let stderr = failure(&["simulate", unit.to_str().unwrap()]);
    assert!(
        stderr.contains("rate") && stderr.contains("furlongs"),
        "{stderr}"
    );

    let stderr = failure(&["simulate", dir.join("missing.toml").to_str().unwrap()]);
    assert!(stderr.contains("missing.toml"), "{stderr}");

    let good = write_scenario(&dir, HAND_WRITTEN);
    let stderr = failure(&["simulate", good.to_str().unwrap(), "--duration", "0s"]);
    assert!(stderr.contains("--duration"), "{stderr}");
    let stderr = failure(&["simulate", good.to_str().unwrap(), "--seed", "many"]);
    assert!(stderr.contains("--seed"), "{stderr}");
}
