//! Determinism against committed output: each scenario in `tests/golden/`
//! runs and its JSON summary (as `fairstream simulate` prints it) and its
//! time series and media files (what `--out` writes) must equal, byte for
//! byte, the files committed beside it: `NAME.summary.json` and
//! `NAME.out.txt`.
//!
//! The scenarios are short and cover every part of the engine an
//! optimisation could disturb: TCP NewReno (with and without SACK and
//! delayed ACKs) and CUBIC, DCCP CCID 2 and CCID 3 (TFRC, TFRC-SP), the
//! multi-connection controllers (adaptive, MULTFRC, fixed), generated video
//! with FEC and with retransmission, Bernoulli and Gilbert-Elliott loss,
//! RED with ECN, CoDel and FQ-CoDel, a priority queue, a bandwidth-on-demand
//! satellite link with voice and web traffic, a WiMAX TDD cell, a
//! trace-driven link with paper 004's layered video, and paper 003's proxy.
//!
//! Each scenario also runs with the time series switched off
//! ([`Simulation::without_series`], what `fairstream simulate` does without
//! `--out`) and must give the same summary.
//!
//! # Regenerating
//!
//! ```sh
//! FAIRSTREAM_BLESS=1 cargo test -p fairstream-sim --test golden
//! ```
//!
//! rewrites the committed files from the current code. That is legitimate
//! only when a change alters the simulator's behaviour on purpose (a model
//! fixed or extended, a new summary field), and the commit that does it
//! should say so. A change meant to be a pure optimisation or refactoring
//! must pass this test unchanged: a difference means it changed the run.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use fairstream_sim::runner::Simulation;
use fairstream_sim::scenario::Scenario;

/// The environment variable that rewrites the committed files.
const BLESS: &str = "FAIRSTREAM_BLESS";

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The summary as `fairstream simulate` prints it (pretty JSON and a
/// newline).
fn summary_json(simulation: &mut Simulation) -> String {
    let summary = simulation.run();
    let mut json = serde_json::to_string_pretty(&summary).expect("a summary serialises");
    json.push('\n');
    json
}

/// Every series as CSV and every media flow's per-frame table, EvalVid
/// receiver dump and playback buffer, each under a heading line.
fn out_text(simulation: &Simulation) -> String {
    let mut text = String::new();
    let series = simulation.series();
    for flow in &series.flows {
        let mut csv = Vec::new();
        flow.write_csv(&mut csv).expect("writing to a Vec");
        let _ = writeln!(text, "# flow {}", flow.name);
        text.push_str(&String::from_utf8_lossy(&csv));
    }
    for link in &series.links {
        let mut csv = Vec::new();
        link.write_csv(&mut csv).expect("writing to a Vec");
        let _ = writeln!(text, "# link {} {}", link.name, link.direction);
        text.push_str(&String::from_utf8_lossy(&csv));
    }
    for media in simulation.media_outputs() {
        let _ = writeln!(text, "# media {} frames", media.flow);
        text.push_str(&media.frames_csv);
        let _ = writeln!(text, "# media {} rd", media.flow);
        text.push_str(&media.rd);
        let _ = writeln!(text, "# media {} buffer", media.flow);
        text.push_str(&media.buffer_csv);
    }
    text
}

/// `expected` and `actual` differ: where, as a message.
fn first_difference(file: &Path, expected: &str, actual: &str) -> String {
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    format!(
        "{} differs from the run (first at line {}):\n  committed: {:?}\n  this run:  {:?}\n\
         (a pure optimisation must not change the output; if the behaviour changed on \
         purpose, regenerate with {BLESS}=1, see tests/golden.rs)",
        file.display(),
        line + 1,
        expected.lines().nth(line).unwrap_or("<end of file>"),
        actual.lines().nth(line).unwrap_or("<end of file>"),
    )
}

/// Compares `actual` with the committed `file`, or writes it when blessing.
fn check(file: &Path, actual: &str) {
    if std::env::var_os(BLESS).is_some_and(|v| v == "1") {
        fs::write(file, actual).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        return;
    }
    let expected = fs::read_to_string(file).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (generate it with {BLESS}=1, see tests/golden.rs)",
            file.display()
        )
    });
    assert!(
        expected == actual,
        "{}",
        first_difference(file, &expected, actual)
    );
}

/// Runs `tests/golden/NAME.toml` and checks its output.
fn golden(name: &str) {
    let dir = golden_dir();
    let scenario = Scenario::from_file(dir.join(format!("{name}.toml")))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut simulation = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{name}: {e}"));
    let json = summary_json(&mut simulation);
    check(&dir.join(format!("{name}.summary.json")), &json);
    check(&dir.join(format!("{name}.out.txt")), &out_text(&simulation));

    let mut lean = Simulation::new(&scenario)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .without_series();
    assert!(
        summary_json(&mut lean) == json,
        "{name}: the summary without series differs from the one with them"
    );
    assert!(lean.series().flows.iter().all(|f| f.rows.is_empty()));
}

/// One test per scenario file, so that they run in parallel and fail apart.
macro_rules! golden_tests {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                golden($name);
            }
        )*

        /// Every scenario file in the folder has its test.
        #[test]
        fn every_scenario_has_a_test() {
            let listed = [$($name),*];
            let mut files: Vec<String> = fs::read_dir(golden_dir())
                .expect("tests/golden exists")
                .filter_map(|entry| {
                    let path = entry.ok()?.path();
                    (path.extension()? == "toml")
                        .then(|| path.file_stem()?.to_str().map(str::to_owned))
                        .flatten()
                })
                .collect();
            files.sort();
            let mut listed: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
            listed.sort();
            assert_eq!(files, listed);
        }
    };
}

golden_tests! {
    newreno_dumbbell => "newreno-dumbbell",
    cubic => "cubic",
    tfrc_ccid3 => "tfrc-ccid3",
    ccid2 => "ccid2",
    multiconn => "multiconn",
    video => "video",
    wireless => "wireless",
    aqm => "aqm",
    satellite_voice => "satellite-voice",
    wimax_tdd => "wimax-tdd",
    trace_buffer => "trace-buffer",
    proxy => "proxy",
}
