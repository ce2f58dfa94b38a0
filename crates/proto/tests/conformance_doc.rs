//! `docs/conformance.md` names, for each rule, the code that implements it and
//! the test that checks it. This test keeps the document honest: every test it
//! names must exist as a `fn` in the workspace's sources, and every source file
//! it names must exist.

use std::fs;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_sources(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            if let Ok(text) = fs::read_to_string(&path) {
                out.push(text);
            }
        }
    }
}

/// The `backticked` spans of a table cell.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

#[test]
fn every_named_test_and_file_exists() {
    let root = workspace_root();
    let doc = fs::read_to_string(root.join("docs/conformance.md")).expect("docs/conformance.md");
    let mut sources = Vec::new();
    rust_sources(&root.join("crates"), &mut sources);
    let all = sources.join("\n");
    let mut checked_tests = 0;
    let mut missing = Vec::new();
    for line in doc.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | rule | code | test |  ->  ["", rule, code, test, ""]
        if cells.len() != 5 || cells[1] == "rule" || cells[1].starts_with("---") {
            continue;
        }
        for span in code_spans(cells[2]) {
            let path = span.split_whitespace().next().unwrap_or(span);
            // Paths are relative to crates/proto/src, unless they start at
            // the repository's root (`crates/sim/src/...`).
            let file = if path.starts_with("crates/") {
                root.join(path)
            } else {
                root.join("crates/proto/src").join(path)
            };
            if path.ends_with(".rs") && !file.exists() {
                missing.push(format!("code file `{path}` in: {line}"));
            }
        }
        for span in code_spans(cells[3]) {
            let span = span.trim();
            if span.ends_with(".rs") || span.ends_with(".md") {
                // `tests/x.rs` is an integration test of the crate; other
                // paths are relative to the repository.
                let path = match span.strip_prefix("tests/") {
                    Some(file) => root.join("crates/proto/tests").join(file),
                    None => root.join(span),
                };
                if !path.exists() {
                    missing.push(format!("file `{span}`"));
                }
                continue;
            }
            // `module::tests::name`, `tests/file.rs::name`, or a bare `name`.
            let name = span.rsplit("::").next().unwrap_or(span);
            if name == "*" || name.is_empty() {
                continue;
            }
            let name = name.trim_end_matches('*').trim_end_matches('_');
            if !all.contains(&format!("fn {name}")) {
                missing.push(format!("test `{span}` in: {line}"));
            }
            checked_tests += 1;
        }
    }
    assert!(
        missing.is_empty(),
        "docs/conformance.md names what does not exist:\n{}",
        missing.join("\n")
    );
    assert!(
        checked_tests > 100,
        "only {checked_tests} tests named: is the table still parsed?"
    );
}
