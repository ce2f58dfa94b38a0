//! Benchmarks that run each case in a process of its own (so that its peak
//! memory is its alone): the parent runs this executable again with
//! `--child ARG` and reads the numbers the child prints.

use std::process::Command;

/// Runs this executable with `--child arg` and returns the whitespace-
/// separated numbers it printed on standard output.
pub(crate) fn child_fields(arg: &str) -> Vec<f64> {
    let exe = std::env::current_exe().expect("the benchmark's own path");
    let output = Command::new(&exe)
        .args(["--child", arg])
        .output()
        .expect("the child ran");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("the child printed text");
    text.split_whitespace()
        .map(|f| {
            f.parse()
                .unwrap_or_else(|_| panic!("bad child output: {text}"))
        })
        .collect()
}
