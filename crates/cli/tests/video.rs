//! `fairstream decode` and `fairstream evaluate`, and the media files of
//! `fairstream simulate --out`, run as a user runs them.

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

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-video-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(args: &[&str]) -> Output {
    let output = fairstream(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Writes `text` as a scenario in `dir`, runs `simulate --out` on it and
/// returns its summary and the directory of the media flow's files.
fn simulate_out(dir: &Path, text: &str) -> (Value, PathBuf) {
    let file = dir.join("video.toml");
    fs::write(&file, text).unwrap();
    let out = dir.join("out");
    let output = ok(&["simulate", s(&file), "--quiet", "--out", s(&out)]);
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    (summary, out.join("media/video"))
}

/// `evaluate REFERENCE… --sent st sd --received rd EXTRA…` on the EvalVid
/// files in `files` (`sent.264` is the stream sent).
fn evaluate_args(files: &Path, reference: &[&str], extra: &[&str]) -> Vec<String> {
    let file = |name: &str| s(&files.join(name)).to_owned();
    let mut args = vec!["evaluate".to_owned()];
    args.extend(reference.iter().map(|a| (*a).to_owned()));
    args.extend([
        "--sent".to_owned(),
        file("st"),
        file("sd"),
        "--received".to_owned(),
        file("rd"),
    ]);
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args
}

/// `evaluate --json` on the EvalVid files of a 176×144 generated run with
/// 1000-byte packets in `files`, with `extra` options.
fn evaluate_files(files: &Path, extra: &[&str]) -> Value {
    let video = files.join("sent.264");
    let mut more = vec!["--packet-size", "1000", "--json"];
    more.extend_from_slice(extra);
    let args = evaluate_args(
        files,
        &[
            "--reference",
            "generated",
            "--size",
            "176x144",
            "--video",
            s(&video),
        ],
        &more,
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    serde_json::from_slice(&ok(&args).stdout).unwrap()
}

/// `evaluate`'s figures under `keys` equal the simulator's.
fn assert_agree(evaluated: &Value, media: &Value, keys: &[&str]) {
    for key in keys {
        assert_eq!(evaluated[*key], media[*key], "{key}");
    }
}

/// `evaluate` on the EvalVid files in `files` (the sent stream as the
/// reference) with `extra` fails; its stderr.
fn evaluate_refused(files: &Path, extra: &[&str]) -> String {
    let video = files.join("sent.264");
    let args = evaluate_args(files, &["--reference", s(&video)], extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = fairstream(&args);
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn decode_keeps_every_frame_position_of_a_stream_missing_a_frame() {
    let Some(input) = fairstream_testkit::shared_file("data/video/BA_MW_D_P_LOST.264") else {
        return;
    };
    let dir = scratch("decode");
    let out = dir.join("out.yuv");
    let output = ok(&["decode", s(&input), s(&out)]);
    // 100 QCIF frames although the file holds 99.
    assert_eq!(fs::metadata(&out).unwrap().len(), 100 * 38_016);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("1 frames missing"), "{stderr}");
    let output = fairstream(&["decode", s(&input), s(&out), "--conceal", "9"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--conceal"));
}

#[test]
fn decode_keeps_the_positions_of_a_lost_idr_and_the_frames_after_it() {
    let Some(input) = fairstream_testkit::shared_file("data/video/BA_MW_D_IDR_LOST.264") else {
        return;
    };
    let dir = scratch("decode-idr");
    let out = dir.join("out.yuv");
    let output = ok(&["decode", s(&input), s(&out)]);
    // The file holds 97 of the original's 100 frames; the first three (the
    // IDR picture and two P pictures) are gone, and their positions stay.
    assert_eq!(fs::metadata(&out).unwrap().len(), 100 * 38_016);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("3 frames missing"), "{stderr}");
}

#[test]
fn decode_refuses_what_is_not_h264_and_survives_damage() {
    let dir = scratch("damage");
    let not_video = dir.join("notes.264");
    fs::write(&not_video, b"these are not the frames you are looking for").unwrap();
    let output = fairstream(&["decode", s(&not_video), s(&dir.join("x.yuv"))]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not an H.264 Annex B stream"), "{stderr}");
    let Some(input) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
        return;
    };
    let mut bytes = fs::read(input).unwrap();
    // Cut mid-NAL and flip bytes: decoded as far as it goes, damage reported.
    bytes.truncate(bytes.len() * 2 / 3 + 11);
    for i in (500..bytes.len()).step_by(1499) {
        bytes[i] ^= 0x5a;
    }
    let damaged = dir.join("damaged.264");
    fs::write(&damaged, &bytes).unwrap();
    let out = dir.join("damaged.yuv");
    let output = ok(&["decode", s(&damaged), s(&out)]);
    let frames = fs::metadata(&out).unwrap().len() / 38_016;
    assert!((60..=70).contains(&frames), "{frames} frames");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("decoded"), "{stderr}");
}

#[test]
fn evaluate_reproduces_the_simulators_verdict_from_the_evalvid_files() {
    let dir = scratch("evaluate");
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/video/tfrc-gilbert-elliott.toml");
    let text = fs::read_to_string(&scenario)
        .unwrap()
        .replace("frames = 250", "frames = 75")
        .replace("width = 352, height = 288", "width = 176, height = 144");
    let (summary, files) = simulate_out(&dir, &text);
    let media = &summary["flows"][0]["media"];
    for name in [
        "frames.csv",
        "st",
        "sd",
        "rd",
        "sent.264",
        "gop_arrival.png",
        "buffer.csv",
        "buffer.png",
    ] {
        assert!(files.join(name).exists(), "{name} missing");
    }
    let evaluated = evaluate_files(&files, &[]);
    assert_agree(
        &evaluated,
        media,
        &[
            "frames_total",
            "frames_displayed",
            "frames_lost",
            "packets_lost",
            "psnr_db_mean",
            "psnr_db_mse",
            "ssim_mean",
            "mos_mean",
            "stalls",
        ],
    );
    // The st file's packet counts pin the packetization.
    assert!(evaluate_refused(&files, &["--packet-size", "200"]).contains("--packet-size"));
}

#[test]
fn evaluate_counts_what_fec_rebuilt_and_agrees_with_simulate() {
    let dir = scratch("evaluate-fec");
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/video/tfrc-gilbert-elliott-fec.toml");
    let text = fs::read_to_string(&scenario)
        .unwrap()
        .replace("frames = 250", "frames = 100")
        .replace("duration = \"20s\"", "duration = \"8s\"")
        .replace("width = 352, height = 288", "width = 176, height = 144");
    let (summary, files) = simulate_out(&dir, &text);
    let media = &summary["flows"][0]["media"];
    let rebuilt = media["packets_recovered_by_fec"].as_u64().unwrap();
    assert!(
        rebuilt > 0,
        "the run must lose packets that FEC rebuilds: {media}"
    );
    let rd_fec = files.join("rd_fec");
    let evaluate = |fec: bool| -> Value {
        if fec {
            evaluate_files(&files, &["--fec", "56,50", "--received-fec", s(&rd_fec)])
        } else {
            evaluate_files(&files, &[])
        }
    };
    let evaluated = evaluate(true);
    assert_agree(
        &evaluated,
        media,
        &[
            "frames_total",
            "frames_displayed",
            "frames_lost",
            "packets_lost",
            "packets_recovered_by_fec",
            "psnr_db_mean",
            "psnr_db_mse",
            "ssim_mean",
            "mos_mean",
            "stalls",
            "startup_delay_s",
        ],
    );
    // Without the parity, evaluate judges the unprotected stream.
    let unprotected = evaluate(false);
    assert_eq!(unprotected["packets_recovered_by_fec"], 0);
    // One flag without the other is refused.
    let output = fairstream(&[
        "evaluate",
        "--reference",
        s(&files.join("sent.264")),
        "--sent",
        s(&files.join("st")),
        s(&files.join("sd")),
        "--received",
        s(&files.join("rd")),
        "--fec",
        "56,50",
    ]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--received-fec"));
}

/// Issue 12 §2: `evaluate --player rebuffer` reaches the verdict of a
/// simulated rebuffering player, pauses included.
#[test]
fn evaluate_agrees_with_simulate_on_a_rebuffering_player() {
    let dir = scratch("evaluate-rebuffer");
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/video/tfrc-gilbert-elliott.toml");
    let text = fs::read_to_string(&scenario)
        .unwrap()
        .replace("frames = 250", "frames = 75")
        .replace("rate = \"2mbit\"", "rate = \"300kbit\"")
        .replace("width = 352, height = 288", "width = 176, height = 144")
        .replace(
            "startup_delay = \"auto\"",
            "startup_delay = \"1s\", player = \"rebuffer\", refill = \"400ms\"",
        );
    let (summary, files) = simulate_out(&dir, &text);
    let media = &summary["flows"][0]["media"];
    assert_eq!(media["player"], "rebuffer");
    assert!(media["rebuffers"].as_u64().unwrap() > 0, "{media}");
    let csv = fs::read_to_string(files.join("buffer.csv")).unwrap();
    assert!(csv.contains(",rebuffering\n"), "{csv}");
    let evaluated = evaluate_files(
        &files,
        &[
            "--startup-delay",
            "1s",
            "--player",
            "rebuffer",
            "--refill",
            "400ms",
        ],
    );
    assert_agree(
        &evaluated,
        media,
        &[
            "player",
            "rebuffer_refill_s",
            "rebuffers",
            "rebuffer_time_s",
            "frames_displayed",
            "frames_lost",
            "packets_lost",
            "packets_late",
            "stalls",
            "psnr_db_mean",
        ],
    );
    // --refill belongs to the rebuffer model.
    assert!(evaluate_refused(&files, &["--refill", "1s"]).contains("--player rebuffer"));
}

#[test]
fn schedule_prints_the_papers_figures_and_names_bad_input() {
    let Some(trace) = fairstream_testkit::shared_file("data/evalvid/st_highway_cif.st") else {
        return;
    };
    let json = |args: &[&str]| -> Value { serde_json::from_slice(&ok(args).stdout).unwrap() };
    let end_to_end = json(&[
        "schedule",
        "--source",
        s(&trace),
        "--rate",
        "400kbit",
        "--fps",
        "30",
        "--json",
    ]);
    for key in [
        "startup_delay_s",
        "client_buffer_bytes",
        "proxy_buffer_bytes",
    ] {
        assert!(end_to_end.get(key).is_some(), "{key}");
    }
    assert!(end_to_end["proxy_buffer_bytes"].is_null());
    // A slower rate needs a longer start-up delay.
    let slower = json(&[
        "schedule",
        "--source",
        s(&trace),
        "--rate",
        "200kbit",
        "--fps",
        "30",
        "--json",
    ]);
    assert!(slower["startup_delay_s"].as_f64() > end_to_end["startup_delay_s"].as_f64());
    // A bursty rate curve for the wired path and a proxy: the proxy buffers.
    let dir = scratch("schedule");
    let curve = dir.join("curve.txt");
    fs::write(
        &curve,
        "# bursty\n0\n0\n0\n5mbit\n0\n0\n0\n5mbit\n500kbit\n",
    )
    .unwrap();
    let proxy = json(&[
        "schedule",
        "--source",
        s(&trace),
        "--rate-curve",
        s(&curve),
        "--proxy-rate",
        "350kbit",
        "--fps",
        "30",
        "--json",
    ]);
    assert!(proxy["proxy_buffer_bytes"].as_u64().unwrap() > 0, "{proxy}");
    fs::write(&curve, "fast\n").unwrap();
    let output = fairstream(&["schedule", "--source", s(&trace), "--rate-curve", s(&curve)]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("line 1"));
}

/// `schedule` on a simulated flow's CSV (paper 003's Figs. 7 and 8 from a
/// run): a curve of a constant rate gives the fixed rate's figures, the
/// deduction lengthens the delay, and `--out` writes the schedules and
/// their plot.
#[test]
fn schedule_reads_a_simulated_flows_csv_and_writes_the_schedules() {
    let Some(trace) = fairstream_testkit::shared_file("data/evalvid/st_highway_cif.st") else {
        return;
    };
    let dir = scratch("schedule-csv");
    // What `simulate --out` writes: a row per 100 ms, here 400 kbit/s
    // throughout, after 2 s of nothing.
    let csv = dir.join("flow.csv");
    let mut text = String::from("time_s,throughput_bps,allowed_rate_bps\n");
    for k in 1..=1200 {
        let rate = if k <= 20 { 0 } else { 400_000 };
        text.push_str(&format!("{:.1},{rate},\n", f64::from(k) / 10.0));
    }
    fs::write(&csv, text).unwrap();
    // `schedule` on the trace at 30 frames/s with `extra` arguments.
    let args = |extra: &[&str]| -> Vec<String> {
        ["schedule", "--source", s(&trace), "--fps", "30"]
            .iter()
            .chain(extra)
            .map(|a| (*a).to_owned())
            .collect()
    };
    let run = |extra: &[&str]| -> Output {
        let all = args(extra);
        fairstream(&all.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let json = |extra: &[&str]| -> Value {
        let output = run(&[extra, &["--json"]].concat());
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let curve = ["--rate-curve", s(&csv)];
    let fixed = json(&["--rate", "400kbit"]);
    let from_csv = json(&[&curve[..], &["--curve-from", "2s"]].concat());
    println!("fixed {fixed}\nfrom the CSV {from_csv}");
    for key in ["startup_delay_slots", "client_buffer_bytes"] {
        let (a, b) = (
            fixed[key].as_f64().unwrap(),
            from_csv[key].as_f64().unwrap(),
        );
        assert!(
            (a - b).abs() <= 0.01 * a.max(1.0) + 1.0,
            "{key}: {a} against {b}"
        );
    }
    // From the start of the run, the 2 s of nothing come first.
    let late = json(&curve);
    let delay = |v: &Value| v["startup_delay_s"].as_f64().unwrap();
    assert!(delay(&late) > delay(&from_csv) + 1.9, "{late}");
    // Less rate: a longer delay or a larger buffer.
    let deducted = json(&[&curve[..], &["--curve-from", "2s", "--deduct", "5%"]].concat());
    let buffer = |v: &Value| v["client_buffer_bytes"].as_u64().unwrap();
    assert!(delay(&deducted) >= delay(&from_csv), "{deducted}");
    assert!(
        delay(&deducted) > delay(&from_csv) || buffer(&deducted) > buffer(&from_csv),
        "{deducted}"
    );
    // --out: the schedules, cumulative and never falling, and their plot.
    let out = dir.join("out");
    let written = run(&[&curve[..], &["--curve-from", "2s", "--out", s(&out)]].concat());
    assert!(written.status.success());
    let table = fs::read_to_string(out.join("schedule.csv")).unwrap();
    let mut lines = table.lines();
    assert_eq!(
        lines.next(),
        Some("slot,time_s,capacity_bytes,s_late_bytes,playout_bytes")
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() > 100);
    for pair in rows.windows(2) {
        assert!(pair[1][2..5]
            .iter()
            .zip(&pair[0][2..5])
            .all(|(now, before)| now >= before));
        // Sent by each slot: never behind the playout, never ahead of the
        // path.
        assert!(
            pair[1][3] >= pair[1][4] && pair[1][3] <= pair[1][2],
            "{pair:?}"
        );
    }
    assert_eq!(&fs::read(out.join("schedule.png")).unwrap()[1..4], b"PNG");
    // With a proxy: the server's and the proxy's schedules.
    let proxied = run(&[&curve[..], &["--proxy-rate", "300kbit", "--out", s(&out)]].concat());
    assert!(proxied.status.success());
    let table = fs::read_to_string(out.join("schedule.csv")).unwrap();
    assert!(table
        .starts_with("slot,time_s,server_to_proxy_bytes,proxy_to_client_bytes,playout_bytes\n"));
    // Bad input names the problem.
    for (extra, needle) in [
        (["--column", "rtt_s"], "no `rtt_s` column"),
        (["--curve-from", "200s"], "carries nothing after 200 s"),
        (["--deduct", "120%"], "outside [0, 100 %)"),
    ] {
        let output = run(&[&curve[..], &extra[..]].concat());
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(needle), "{needle} not in {stderr}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// Retransmitted packets count as they arrived: `evaluate` on the files of
/// a run with ARQ reaches the simulator's verdict (issue 12).
#[test]
fn evaluate_counts_what_arq_recovered_and_agrees_with_simulate() {
    let dir = scratch("evaluate-arq");
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/arq/bernoulli.toml");
    let text = fs::read_to_string(&scenario)
        .unwrap()
        .replace("frames = 300", "frames = 100")
        .replace("duration = \"30s\"", "duration = \"10s\"")
        .replace(
            "source = \"generated\"",
            "source = \"generated\", width = 176, height = 144",
        );
    let (summary, files) = simulate_out(&dir, &text);
    let flow = &summary["flows"][0];
    let media = &flow["media"];
    assert!(
        flow["arq"]["recovered"].as_u64().unwrap() > 0,
        "the run must lose packets that ARQ recovers: {flow}"
    );
    let evaluated = evaluate_files(&files, &["--startup-delay", "2s"]);
    assert_agree(
        &evaluated,
        media,
        &[
            "frames_total",
            "frames_displayed",
            "frames_lost",
            "packets_lost",
            "psnr_db_mean",
            "ssim_mean",
            "stalls",
            "startup_delay_s",
        ],
    );
    assert_eq!(media["frames_lost"]["P"], 0);
}
