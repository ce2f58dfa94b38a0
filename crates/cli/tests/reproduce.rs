//! `fairstream reproduce` as a researcher runs it: the quick runs of papers
//! 001-004 write a self-contained HTML page and a Markdown file with
//! the paper's numbers beside ours, a rerun takes everything from the cache
//! and writes the same report, papers not yet reproducible are refused with
//! the reason, and the paper numbers in `experiments/papers/` are quoted
//! exactly from the papers' text.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

// Only its way of running the binary is used here.
#[allow(dead_code)]
mod support;

use support::fairstream;

use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fairstream-reproduce-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn succeed(args: &[&str]) {
    let out = fairstream(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The HTML opens offline: no scripts, no external references, charts inline.
fn assert_self_contained(html: &str, charts: usize) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..40]);
    assert!(!html.contains("<script"));
    for outside in ["src=\"http", "href=\"http", "url(http", "<link "] {
        assert!(
            !html.contains(outside),
            "the page refers outside: {outside}"
        );
    }
    assert_eq!(html.matches("<svg").count(), charts, "inline charts");
}

#[test]
fn paper_001_quick_sets_the_papers_tables_beside_ours_and_resumes() {
    let out = scratch("001");
    let dir = out.to_str().unwrap();
    succeed(&[
        "reproduce",
        "001",
        "--quick",
        "--out",
        dir,
        "--jobs",
        "2",
        "--quiet",
    ]);
    let md = read(&out, "index.md");
    // Table 1 with the paper's numbers and ours beside them.
    for row in [
        "| one TFRC | 54 |",
        "| MULTFRC | 86 |",
        "| MULTFRC / one TFRC | 1.59 |",
    ] {
        assert!(md.contains(row), "{row} missing from:\n{md}");
    }
    // Table 2, both channels, with the paper's burst lengths.
    assert_eq!(md.matches("| two | 60.1 |").count(), 2, "{md}");
    assert!(md.contains("| 2.41 |"));
    // A verdict per trend, and Fig. 2 redrawn.
    assert!(md.matches("the trend matches").count() >= 4, "{md}");
    assert!(md.contains("![fig2-throughput](fig2-throughput.png)"));
    for png in ["fig2-throughput.png", "fig2-losses.png"] {
        let bytes = std::fs::read(out.join(png)).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "{png}");
    }
    assert_self_contained(&read(&out, "index.html"), 2);
    // The sweeps' own tables.
    assert!(read(&out, "work/table1/summary.md").contains("multfrc"));
    // Again: everything from the cache, the same report byte for byte.
    let cached = std::fs::read_dir(out.join("work/cache")).unwrap().count();
    assert_eq!(cached, 2 * 2 * 3 + 2 * 3, "one summary per point and seed");
    succeed(&["reproduce", "1", "--quick", "--out", dir, "--quiet"]);
    assert_eq!(read(&out, "index.md"), md);
    assert_eq!(
        std::fs::read_dir(out.join("work/cache")).unwrap().count(),
        cached
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn paper_003_quick_computes_the_three_tables_from_simulated_rate_curves() {
    let out = scratch("003");
    let dir = out.to_str().unwrap();
    succeed(&["reproduce", "003", "--quick", "--out", dir, "--quiet"]);
    let md = read(&out, "index.md");
    for row in [
        "| TCP, wired | 65.6 |",
        "| TFRC, wireless | 49.7 |",
        "| TCP | 4.1 |",
        "| TCP (without proxy) | 16.5 |",
        "| TFRC (with proxy) | 2.2 |",
    ] {
        assert!(md.contains(row), "{row} missing from:\n{md}");
    }
    assert!(md.contains("Backbone loss rate measured:"));
    // The proxy's gain: both delays fall with it in our runs too.
    assert_eq!(
        md.matches("with a proxy against without").count(),
        4,
        "{md}"
    );
    // Table 3 streamed through the simulator's proxy node: four cases,
    // the proxy's buffer only where there is one, and TCP (RTP over TCP)
    // showing every frame it sent end to end.
    let streamed = md
        .split("## Table 3 streamed")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap_or_else(|| panic!("no streamed Table 3 in:\n{md}"));
    for case in [
        "| TCP, no proxy |",
        "| TFRC, no proxy |",
        "| TCP, proxy |",
        "| TFRC, proxy |",
    ] {
        assert!(streamed.contains(case), "{case} missing from:\n{streamed}");
    }
    assert_eq!(streamed.matches("| n.a. | n.a. |").count(), 2, "{streamed}");
    let tcp = streamed
        .lines()
        .find(|l| l.starts_with("| TCP, no proxy |"))
        .unwrap();
    let shown: Vec<&str> = tcp
        .trim_end_matches(" |")
        .rsplit("| ")
        .next()
        .unwrap()
        .split(" of ")
        .collect();
    assert_eq!(shown.len(), 2);
    assert_eq!(shown[0], shown[1], "{tcp}");
    assert!(out.join("work/paper003-streamed.toml").is_file());
    // Figs. 4, 6, 7 (TCP, TFRC) and 8 (TCP, TFRC).
    assert_self_contained(&read(&out, "index.html"), 6);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn paper_004_quick_sets_tables_1_and_2_beside_ours_and_goes_beyond() {
    let out = scratch("004");
    let dir = out.to_str().unwrap();
    succeed(&["reproduce", "004", "--quick", "--out", dir, "--quiet"]);
    let md = read(&out, "index.md");
    // Table 1 (TFRC) beside each video, Table 2's five sessions.
    assert_eq!(md.matches("| 196.666 |").count(), 2, "{md}");
    for row in [
        "| Video 1 | 215.720 |",
        "| Video 2 | 215.354 |",
        "| TCP 1 | 252.058 |",
        "| TCP 3 | 285.130 |",
    ] {
        assert!(md.contains(row), "{row} missing from:\n{md}");
    }
    // The claims checked, each with a verdict.
    assert_eq!(
        md.matches(": holds.").count() + md.matches(": does not hold.").count(),
        3,
        "{md}"
    );
    // Beyond: three schemes × three video rates, and × three channels.
    assert_eq!(md.matches("| buffer scheme (paper) |").count(), 6, "{md}");
    assert_eq!(
        md.matches("| buffer scheme, TFRC-capped (ours) |").count(),
        6
    );
    // Figs. 2-4 and the buffer's state, inline in the page.
    assert_self_contained(&read(&out, "index.html"), 4);
    for png in [
        "fig2-tfrc.png",
        "fig3-buffer.png",
        "fig4-tcp.png",
        "buffer-state.png",
    ] {
        let bytes = std::fs::read(out.join(png)).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "{png}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn paper_002_quick_redraws_figs_1_to_3_and_checks_the_claims() {
    let out = scratch("002");
    let dir = out.to_str().unwrap();
    succeed(&["reproduce", "002", "--quick", "--out", dir, "--quiet"]);
    let md = read(&out, "index.md");
    // Table 2 quoted, beside the E-model's own mapping.
    for row in [
        "| 90-100 | 4.34-4.5 | 4.34-4.50 | Best |",
        "| 50-60 | 2.58-3.1 |",
    ] {
        assert!(md.contains(row), "{row} missing from:\n{md}");
    }
    // Fig. 1: two seeds a point (the flows' random starts), at 1, 5 and 20
    // flows, each value with its interval.
    assert!(md.contains("`start_jitter`"), "{md}");
    let fig1 = md
        .split("## Fig. 1")
        .nth(1)
        .and_then(|s| s.split("## Fig. 2").next())
        .unwrap();
    for n in ["| 1 | 776 |", "| 5 | 333 |", "| 20 | 95 |"] {
        assert!(fig1.contains(n), "{n} missing from:\n{fig1}");
    }
    assert!(fig1.contains("2 seeds"), "{fig1}");
    assert!(fig1.contains('±'), "{fig1}");
    // Figs. 2 and 3: four calls × six delays, six links (two with the
    // adaptive buffer) × five web loads, each row saying how many of its two
    // calls started.
    assert_eq!(md.matches("| G.711 with VAD |").count(), 6, "{md}");
    assert_eq!(md.matches("| TS 600 ms, CBQ |").count(), 5, "{md}");
    assert_eq!(md.matches(" of 2 |").count(), 4 * 6 + 6 * 5, "{md}");
    assert_eq!(
        md.matches("| TS 600 ms, CBQ, adaptive buffer |").count(),
        5,
        "{md}"
    );
    // Every claim with a verdict: four for Fig. 1, four for Fig. 2, four
    // for Fig. 3.
    assert_eq!(
        md.matches(": holds.").count() + md.matches(": does not hold.").count(),
        12,
        "{md}"
    );
    assert!(!md.contains("NaN"), "{md}");
    // Figs. 1-3, R and MOS for Figs. 2 and 3, inline in the page.
    assert_self_contained(&read(&out, "index.html"), 5);
    for png in [
        "fig1-tcp.png",
        "fig2-r.png",
        "fig2-mos.png",
        "fig3-r.png",
        "fig3-mos.png",
    ] {
        let bytes = std::fs::read(out.join(png)).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "{png}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn paper_000_quick_sets_tables_3_to_6_and_figs_2_3_beside_the_paper() {
    let out = scratch("000");
    let dir = out.to_str().unwrap();
    succeed(&["reproduce", "000", "--quick", "--out", dir, "--quiet"]);
    let md = read(&out, "index.md");
    // The paper's numbers quoted beside ours, with intervals.
    for row in [
        "| 1-conn | 71.4 |",
        "| 4-conn | 15.6 |",
        "| 4-conn | 28.12 (3.11) |",
    ] {
        assert!(md.contains(row), "{row} missing from:\n{md}");
    }
    for heading in [
        "## Table 3",
        "## Table 4",
        "## Table 5",
        "## Table 6",
        "## Fig. 2",
        "## Fig. 3",
    ] {
        assert!(md.contains(heading), "{heading} missing from:\n{md}");
    }
    assert!(md.contains('±') && md.contains("2 seeds"), "{md}");
    // Table 3: 1 and 4 connections, four frame/downlink cases each.
    let table3 = md
        .split("## Table 3")
        .nth(1)
        .and_then(|s| s.split("## Table 4").next())
        .unwrap();
    assert_eq!(table3.matches("-conn |").count(), 2, "{table3}");
    // Both claims of Table 3 with a verdict.
    let claims: String = table3.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        claims.matches("hold").count(),
        4,
        "two claims, each judged twice:\n{table3}"
    );
    // Fig. 2 for both split policies; Fig. 3 by frame type.
    assert!(md.contains("| GOP interleave (the paper's) | 20 |"), "{md}");
    assert!(md.contains("| earliest connection (ours) | 20 |"), "{md}");
    assert!(md.contains("| 20ms | 4-conn |"), "{md}");
    assert!(!md.contains("NaN"), "{md}");
    assert_self_contained(&read(&out, "index.html"), 3);
    for png in ["table3.png", "fig2.png", "fig3.png"] {
        let bytes = std::fs::read(out.join(png)).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "{png}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn papers_not_yet_reproducible_are_refused_with_the_reason() {
    for (paper, reason) in [("12", "no paper 012"), ("one", "not a paper number")] {
        let out = fairstream(&["reproduce", paper, "--out", "/nonexistent/never"]);
        assert!(!out.status.success(), "{paper}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(reason), "{paper}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Collapses what a transcription adds around a table's cells (TeX
/// dollars, emphasis, runs of spaces).
fn plain(text: &str) -> String {
    text.replace(['$', '*'], "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every row of every table in `experiments/papers/*.toml` is a line of
/// the paper's text (cells separated by tabs), and every caption is in it.
#[test]
fn paper_numbers_are_quoted_exactly() {
    let papers = repository().join("experiments/papers");
    let mut checked = 0;
    for entry in std::fs::read_dir(&papers).unwrap() {
        let path = entry.unwrap().path();
        let data: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let file = data["file"].as_str().unwrap();
        let text = std::fs::read_to_string(repository().join("../shared/papers").join(file))
            .unwrap_or_else(|e| panic!("{}: {file}: {e}", path.display()));
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        let flat = plain(&text);
        for table in data["table"].as_array().unwrap() {
            let label = table["label"].as_str().unwrap();
            let caption = table["caption"].as_str().unwrap();
            assert!(
                flat.contains(&plain(caption)),
                "{}: {label}'s caption is not in {file}",
                path.display()
            );
            for row in table["rows"].as_array().unwrap() {
                let cells: Vec<&str> = row
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap())
                    .collect();
                let line = cells.join("\t");
                assert!(
                    lines.contains(&line.as_str()),
                    "{}: {label} row {line:?} is not a line of {file}",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 13, "{checked} rows checked");
}
