//! `fairstream sweep` as a user runs it: the same tables with one job or
//! two, a cache that lets a sweep resume, confidence intervals that match
//! the runs, and sweep files with mistakes named.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

// Only its way of running the binary is used here.
#[allow(dead_code)]
mod support;

use support::fairstream;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn base_scenario() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/examples/wireless-last-hop.toml")
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// A sweep file in `dir` over the wireless example: 2 × 2 points, 3 seeds,
/// 10 s runs.
fn sweep_file(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("sweep.toml");
    std::fs::write(
        &path,
        format!(
            r#"scenario = "{}"
seeds = [1, 2, 3]
[vary]
"run.duration" = ["10s"]
"link.bs-client.loss.loss_bad" = [0.05, 0.2]
"link.bs-client.rate" = {{ from = 1, to = 2, step = 1, unit = "mbit" }}
[metrics]
voip_goodput_bps = "/flows/0/goodput_bps"
ftp_goodput_bps = "/flows/1/goodput_bps"
jain = {{ jain = "/flows/*/goodput_bps" }}
{extra}
"#,
            base_scenario()
        ),
    )
    .unwrap();
    path
}

fn run(file: &Path, out: &Path, jobs: &str) -> Output {
    let output = fairstream(&[
        "sweep",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        jobs,
        "--quiet",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn one_job_or_two_give_the_same_tables_and_a_sweep_resumes_from_its_cache() {
    let dir = scratch("jobs");
    let file = sweep_file(&dir, "");
    let (one, two) = (dir.join("one"), dir.join("two"));
    run(&file, &one, "1");
    run(&file, &two, "2");
    for name in [
        "runs.csv",
        "summary.csv",
        "summary.json",
        "summary.md",
        "index.md",
        "index.html",
    ] {
        assert_eq!(read(&one, name), read(&two, name), "{name}");
    }
    // The report: a chart per metric against the rate (the last numeric
    // parameter), one line per loss_bad, inline in the page.
    let md = read(&one, "index.md");
    assert!(
        md.contains("![ftp_goodput_bps](ftp_goodput_bps.png)"),
        "{md}"
    );
    assert!(one.join("jain.png").exists());
    let html = read(&one, "index.html");
    assert_eq!(html.matches("<svg").count(), 3);
    assert!(html.contains("link.bs-client.rate (mbit)") && html.contains("loss_bad = 0.2"));
    // 4 points × 3 seeds, a header line each.
    assert_eq!(read(&one, "runs.csv").lines().count(), 13);
    assert_eq!(read(&one, "summary.csv").lines().count(), 5);
    // The cache holds one summary per run; a lost one is run again and
    // the tables do not change.
    let cache: Vec<PathBuf> = std::fs::read_dir(two.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(cache.len(), 12);
    std::fs::remove_file(&cache[0]).unwrap();
    let before = read(&two, "runs.csv");
    std::fs::remove_file(two.join("runs.csv")).unwrap();
    run(&file, &two, "2");
    assert!(cache[0].exists());
    assert_eq!(read(&two, "runs.csv"), before);
}

#[test]
fn the_summary_is_the_mean_and_confidence_interval_of_the_runs() {
    let dir = scratch("ci");
    let file = sweep_file(&dir, "");
    let out = dir.join("out");
    run(&file, &out, "2");
    let runs = read(&out, "runs.csv");
    let header: Vec<&str> = runs.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "ftp_goodput_bps").unwrap();
    let summary: Value = serde_json::from_str(&read(&out, "summary.json")).unwrap();
    let points = summary["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for (p, point) in points.iter().enumerate() {
        let values: Vec<f64> = runs
            .lines()
            .skip(1)
            .filter(|l| l.split(',').next() == Some(&(p + 1).to_string()))
            .map(|l| l.split(',').nth(column).unwrap().parse().unwrap())
            .collect();
        assert_eq!(values.len(), 3);
        let mean = values.iter().sum::<f64>() / 3.0;
        let s = (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        // Student's t with 2 degrees of freedom: 4.303.
        let half = 4.303 * s / 3f64.sqrt();
        let metric = &point["metrics"]["ftp_goodput_bps"];
        assert!((metric["mean"].as_f64().unwrap() - mean).abs() <= 1e-9 * mean.abs());
        assert!((metric["ci95"].as_f64().unwrap() - half).abs() <= 1e-9 * half.abs().max(1.0));
        assert_eq!(metric["n"], 3);
    }
    // The seeds differ: a random-loss hop gives a non-zero interval.
    assert!(
        points[0]["metrics"]["ftp_goodput_bps"]["ci95"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // Jain's index of two or more flows lies in (0, 1].
    let jain = points[0]["metrics"]["jain"]["mean"].as_f64().unwrap();
    assert!(jain > 0.0 && jain <= 1.0, "{jain}");
}

#[test]
fn mistakes_in_a_sweep_file_are_named() {
    let dir = scratch("errors");
    let scenario = base_scenario();
    for (text, expected) in [
        (
            format!("scenario = \"{scenario}\"\n[vary]\n\"link.nowhere.rate\" = [\"1mbit\"]\n[metrics]\na = \"/x\"\n"),
            "`nowhere` in `link.nowhere.rate` names no element",
        ),
        (
            format!("scenario = \"{scenario}\"\n[vary]\n\"run.durration\" = [\"1s\"]\n[metrics]\na = \"/x\"\n"),
            "no key `run.durration`",
        ),
        (format!("scenario = \"{scenario}\"\n"), "asks for no metrics"),
        (
            format!("scenario = \"{scenario}\"\n[metrics]\na = \"flows\"\n"),
            "not a JSON pointer",
        ),
        (
            format!("scenario = \"{scenario}\"\n[vary]\n\"run.seed\" = {{ from = 5, to = 1, step = 1 }}\n[metrics]\na = \"/x\"\n"),
            "a range goes from",
        ),
        (
            format!("scenario = \"{scenario}\"\nseeds = {{ from = 1, count = 1000 }}\n[vary]\n\"run.seed\" = {{ from = 1, to = 1000, step = 1 }}\n[metrics]\na = \"/x\"\n"),
            "at most 100000",
        ),
        ("scenario = \"missing.toml\"\n[metrics]\na = \"/x\"\n".to_owned(), "cannot read the scenario"),
        (
            format!("scenario = \"{scenario}\"\nsweeps = 1\n[metrics]\na = \"/x\"\n"),
            "unknown key `sweeps`",
        ),
        (
            format!("scenario = \"{scenario}\"\n[metrics]\nh = {{ harm = \"/flows/1/goodput_bps\" }}\n"),
            "add a [baseline] table",
        ),
        (
            format!("scenario = \"{scenario}\"\n[baseline]\n\"run.duration\" = \"1s\"\n[metrics]\na = \"/x\"\n"),
            "no metric uses it",
        ),
        (
            format!("scenario = \"{scenario}\"\n[baseline]\n\"flow.nope.transport\" = {{ cc = \"cbr\" }}\n[metrics]\nh = {{ harm = \"/flows/1/goodput_bps\" }}\n"),
            "baseline `flow.nope.transport`",
        ),
        (
            format!("scenario = \"{scenario}\"\n[metrics]\ns = {{ share = [\"/flows/0/goodput_bps\"] }}\n"),
            "share = [rate, \"LINK\"]",
        ),
        (
            format!("scenario = \"{scenario}\"\n[metrics]\nm = {{ median = \"/flows/*/goodput_bps\" }}\n"),
            "unknown kind `median`",
        ),
    ] {
        let file = dir.join("bad.toml");
        std::fs::write(&file, &text).unwrap();
        let output = fairstream(&["sweep", file.to_str().unwrap(), "--out", dir.join("o").to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{text}");
        assert!(stderr.contains(expected), "{text}\n{stderr}");
    }
    // A point whose scenario the simulator refuses names the point.
    let file = sweep_file(&dir, "");
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "\"run.duration\" = [\"10s\"]",
        "\"run.duration\" = [\"-1s\"]",
    );
    std::fs::write(&file, text).unwrap();
    let output = fairstream(&[
        "sweep",
        file.to_str().unwrap(),
        "--out",
        dir.join("o").to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("point 1"), "{stderr}");
}

/// The Python with HyperQueue's package (FAIRSTREAM_PYTHON, or python3);
/// `None` (the test is skipped) when there is none, unless
/// FAIRSTREAM_REQUIRE_ALL=1 (CI), where that is a failure.
fn python_with_hyperqueue() -> Option<String> {
    let python = std::env::var("FAIRSTREAM_PYTHON").unwrap_or_else(|_| "python3".into());
    let found = Command::new(&python)
        .args(["-c", "import hyperqueue"])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(python);
    }
    assert!(
        std::env::var("FAIRSTREAM_REQUIRE_ALL").as_deref() != Ok("1"),
        "{python} has no hyperqueue package (pip install hyperqueue; FAIRSTREAM_PYTHON names the Python)"
    );
    eprintln!("skipped: {python} has no hyperqueue package");
    None
}

#[test]
fn hyperqueue_gives_the_same_tables_as_local_jobs() {
    let Some(python) = python_with_hyperqueue() else {
        return;
    };
    let dir = scratch("hyperqueue");
    // Three parameters × five seeds.
    let file = dir.join("sweep.toml");
    std::fs::write(
        &file,
        format!(
            r#"scenario = "{}"
seeds = {{ from = 1, count = 5 }}
[vary]
"run.duration" = ["10s"]
"link.bs-client.loss.loss_bad" = [0.05, 0.2]
"link.bs-client.rate" = ["1mbit", "2mbit"]
"flow.voip.transport.packet_size" = [160, 320]
[metrics]
voip_goodput_bps = "/flows/0/goodput_bps"
ftp_goodput_bps = "/flows/1/goodput_bps"
jain = {{ jain = "/flows/*/goodput_bps" }}
"#,
            base_scenario()
        ),
    )
    .unwrap();
    let local = dir.join("local");
    run(&file, &local, "2");
    let cluster = dir.join("cluster");
    let output = Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .env("FAIRSTREAM_PYTHON", &python)
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--out",
            cluster.to_str().unwrap(),
            "--engine",
            "hyperqueue",
            "--jobs",
            "2",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Every run went through HyperQueue (nothing was cached before).
    let tasks = std::fs::read_to_string(cluster.join("hyperqueue/manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&tasks).unwrap();
    assert_eq!(manifest["tasks"].as_array().unwrap().len(), 8 * 5);
    for name in ["runs.csv", "summary.csv", "summary.json", "summary.md"] {
        assert_eq!(read(&local, name), read(&cluster, name), "{name}");
    }
    assert_eq!(read(&local, "runs.csv").lines().count(), 41);
}

#[test]
fn a_missing_hyperqueue_is_named() {
    let dir = scratch("no-hyperqueue");
    let file = sweep_file(&dir, "");
    let output = Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .env("FAIRSTREAM_PYTHON", "/nonexistent/python")
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--out",
            dir.join("o").to_str().unwrap(),
            "--engine",
            "hyperqueue",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("FAIRSTREAM_PYTHON"), "{stderr}");
    let bad = fairstream(&["sweep", file.to_str().unwrap(), "--engine", "slurm"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not an engine"));
}

#[test]
fn the_example_sweeps_run() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/sweeps");
    let dir = scratch("examples");
    let mut ran = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        // The same sweep with ten-second runs: it parses, every key path
        // names a key, and every metric is found.
        let text = std::fs::read_to_string(&path).unwrap();
        let scenario = text
            .lines()
            .find_map(|l| l.strip_prefix("scenario = \""))
            .and_then(|l| l.strip_suffix('"'))
            .unwrap();
        let absolute = examples.join(scenario).canonicalize().unwrap();
        let short: String = text
            .lines()
            .map(|l| {
                if l.starts_with("scenario = ") {
                    format!("scenario = \"{}\"", absolute.display())
                } else if l.starts_with("\"run.duration\"") {
                    "\"run.duration\" = [\"10s\"]".to_owned()
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let file = dir.join(path.file_name().unwrap());
        std::fs::write(&file, short).unwrap();
        let out = dir.join(path.file_stem().unwrap());
        run(&file, &out, "2");
        let summary: Value = serde_json::from_str(&read(&out, "summary.json")).unwrap();
        for point in summary["points"].as_array().unwrap() {
            for (name, metric) in point["metrics"].as_object().unwrap() {
                assert!(metric["mean"].is_number(), "{}: {name}", path.display());
            }
        }
        ran += 1;
    }
    assert!(ran >= 2, "{ran} example sweeps");
}

/// A harm compares each run with its point's baseline run (the sweep file's
/// `[baseline]`): the baseline runs are simulated and cached too, and the
/// harm is what the numbers say. A share divides by the scenario's B(1 − p).
#[test]
fn harm_against_a_baseline_run_and_share_of_a_link() {
    let dir = scratch("harm");
    let file = dir.join("sweep.toml");
    std::fs::write(
        &file,
        format!(
            r#"scenario = "{}"
seeds = [1, 2]
[vary]
"run.duration" = ["10s"]
"link.bs-client.loss.loss_bad" = [0.05, 0.2]
[baseline]
"flow.voip.transport" = {{ cc = "tcp-newreno" }}
[metrics]
ftp_goodput_bps = "/flows/[name=ftp]/goodput_bps"
voip_share = {{ share = ["/flows/0/goodput_bps", "bs-client"] }}
ftp_harm = {{ harm = "/flows/[name=ftp]/goodput_bps" }}
"#,
            base_scenario()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    run(&file, &out, "2");
    // 2 points × 2 seeds, each with its baseline run.
    assert_eq!(std::fs::read_dir(out.join("cache")).unwrap().count(), 8);
    let runs = read(&out, "runs.csv");
    let header: Vec<&str> = runs.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (goodput, share, harm) = (
        column("ftp_goodput_bps"),
        column("voip_share"),
        column("ftp_harm"),
    );
    let scenario = std::fs::read_to_string(base_scenario()).unwrap();
    let loss_column = column("link.bs-client.loss.loss_bad");
    let seed_column = column("seed");
    for line in runs.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let value = |i: usize| -> f64 { cells[i].parse().unwrap() };
        assert!(value(goodput) > 0.0, "{line}");
        // A VoIP flow at its codec's rate uses a small share of the hop.
        assert!((0.0..0.5).contains(&value(share)), "{line}");
        // The harm is 1 − the FTP flow's goodput over its goodput in the
        // baseline run, which is this scenario with VoIP's flow as NewReno:
        // simulate that here and check.
        let baseline = scenario
            .replace(
                "transport = { cc = \"tfrc-sp\", packet_size = 160 }",
                "transport = { cc = \"tcp-newreno\" }",
            )
            .replace(
                "loss_bad = 0.05 }",
                &format!("loss_bad = {} }}", cells[loss_column]),
            );
        let path = dir.join(format!(
            "baseline-{}-{}.toml",
            cells[loss_column], cells[seed_column]
        ));
        std::fs::write(&path, baseline).unwrap();
        let output = fairstream(&[
            "simulate",
            path.to_str().unwrap(),
            "--seed",
            cells[seed_column],
            "--duration",
            "10s",
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
        let without = summary["flows"][1]["goodput_bps"].as_f64().unwrap();
        let expected = 1.0 - value(goodput) / without;
        assert!(
            (value(harm) - expected).abs() < 1e-9,
            "{line}: expected {expected}"
        );
    }
}
