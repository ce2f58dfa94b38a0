//! What the help texts and the documentation point to exists: every
//! `docs/…` and `experiments/…` path named in the code (string literals,
//! help texts, doc comments) or in the README and the markdown under
//! `docs/` is a file or directory of the repository, and the help texts
//! name what they must (`send --help` every controller and FEC, `simulate
//! --help` the scenario reference).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files searched: Rust sources of every crate (tests and examples
/// included), the fuzz targets, the README and markdown under `docs/`.
fn searched_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "corpus" | "artifacts") {
                searched_files(&path, out);
            }
        } else if name.ends_with(".rs") || name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The `docs/…` and `experiments/…` paths in `text`: a run of path
/// characters that starts at a word boundary with one of the two folders.
fn named_paths(text: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-');
    let mut found = Vec::new();
    for prefix in ["docs/", "experiments/"] {
        let mut from = 0;
        while let Some(at) = text[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            let before = text[..start].chars().next_back();
            // `../docs/x` and `crates/docs/x` are not repository-root paths;
            // `https://docs.rs/…` is no path at all.
            if before.is_some_and(|c| is_path_char(c) || c == ':') {
                continue;
            }
            let end = text[start..]
                .find(|c: char| !is_path_char(c))
                .map_or(text.len(), |n| start + n);
            // A sentence's full stop is not part of the path.
            let path = text[start..end].trim_end_matches(['.', '-']);
            if path.len() > prefix.len() && !path.contains("...") {
                found.push(path.to_owned());
            }
        }
    }
    found
}

#[test]
fn the_path_finder_finds_paths_and_only_paths() {
    // A path into another repository's docs folder (built here so that
    // it is not itself a path this repository names).
    let foreign = format!("../{}/other.md", "docs");
    let text = format!(
        "see docs/scenarios.md. Run `simulate experiments/video/a.toml`; \
         {foreign} and https://docs.rs/y and crates/docs/z are not ours; \
         (docs/results/) and \"experiments/multiconn/*.toml\""
    );
    assert_eq!(
        named_paths(&text),
        [
            "docs/scenarios.md",
            "docs/results/",
            "experiments/video/a.toml",
            "experiments/multiconn/"
        ]
    );
}

#[test]
fn every_docs_and_experiments_path_named_exists() {
    let root = root();
    let mut files = vec![root.join("README.md")];
    for dir in ["crates", "docs", "fuzz"] {
        searched_files(&root.join(dir), &mut files);
    }
    let mut missing = Vec::new();
    let mut checked = 0;
    // This file's own examples are not claims.
    let this = Path::new(file!()).file_name().unwrap();
    for file in files.iter().filter(|f| f.file_name() != Some(this)) {
        let text = fs::read_to_string(file).unwrap();
        for path in named_paths(&text) {
            checked += 1;
            let target = root.join(&path);
            if !target.exists() {
                missing.push(format!(
                    "{}: {path}",
                    file.strip_prefix(&root).unwrap_or(file).display()
                ));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} paths found: is the finder broken?"
    );
    assert!(
        missing.is_empty(),
        "named but not in the repository:\n{}",
        missing.join("\n")
    );
}

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn send_help_names_every_controller_and_fec() {
    let text = help(&["send", "--help"]);
    for word in [
        "controller=fixed|adaptive|multfrc|e-multfrc|aggregate",
        "fec=n,k",
        "cc=tfrc|tfrc-sp|ccid2|fixed",
        "policy=earliest|gop-interleave",
        "--stats-format",
    ] {
        assert!(text.contains(word), "send --help lacks {word}:\n{text}");
    }
}

#[test]
fn simulate_help_points_to_the_scenario_reference() {
    let text = help(&["simulate", "--help"]);
    assert!(text.contains("docs/scenarios.md"), "{text}");
    assert!(root().join("docs/scenarios.md").is_file());
}

#[test]
fn every_key_of_the_scenario_reference_is_one_the_parser_knows() {
    let root = root();
    let reference = fs::read_to_string(root.join("docs/scenarios.md")).unwrap();
    let mut code = fs::read_to_string(root.join("crates/sim/src/scenario.rs")).unwrap();
    for entry in fs::read_dir(root.join("crates/sim/src/scenario")).unwrap() {
        code.push_str(&fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    // A key or a quoted value as the parser spells it: a field name
    // (`pub(crate) seed:`, `seed: Option<…>`) or a string it matches.
    let known = |key: &str| {
        if let Some(value) = key.strip_prefix('"') {
            return code.contains(&format!("\"{}", value));
        }
        code.contains(&format!(" {key}:")) || code.contains(&format!("\"{key}\""))
    };
    let mut keys = 0;
    let mut unknown = Vec::new();
    for line in reference.lines() {
        // A table row: | `key` | meaning | default |
        let Some(first) = line.strip_prefix("| ").and_then(|l| l.split(" |").next()) else {
            continue;
        };
        for key in first.split(", ") {
            let Some(key) = key.strip_prefix('`').and_then(|k| k.strip_suffix('`')) else {
                continue;
            };
            keys += 1;
            if !known(key) {
                unknown.push(key.to_owned());
            }
        }
    }
    assert!(keys > 30, "only {keys} keys found in docs/scenarios.md");
    assert!(
        unknown.is_empty(),
        "docs/scenarios.md names keys the parser does not know: {unknown:?}"
    );
}
