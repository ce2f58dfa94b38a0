//! Running the built `fairstream` binary as a user runs it, for the
//! calculator tests (`equation.rs`, `emodel.rs`), and its way of running the
//! binary for `sweep.rs` and `reproduce.rs`.

use std::process::{Command, Output};

use serde_json::Value;

/// Runs `fairstream ARGS`.
pub(crate) fn fairstream(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .args(args)
        .output()
        .expect("the fairstream binary runs")
}

/// Runs `fairstream ARGS`, expects success, parses stdout as one JSON object.
pub(crate) fn json_of(args: &[&str]) -> Value {
    let output = fairstream(args);
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON object")
}

/// The number under `key` in `value`.
pub(crate) fn number(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number `{key}` in {value}"))
}

/// Expects `fairstream ARGS` to fail without output or panic; returns stderr.
pub(crate) fn failure_of(args: &[&str]) -> String {
    let output = fairstream(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{args:?} succeeded");
    assert!(output.stdout.is_empty(), "{args:?} printed to stdout");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}
