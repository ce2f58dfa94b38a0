//! What the scenario-error tests share: a valid scenario whose line numbers
//! the tests refer to, and the check that a refusal names the file, the
//! line and the key.

#![allow(dead_code, unreachable_pub)] // a module of the test files: each takes what it needs

use fairstream_sim::scenario::Scenario;

/// A valid scenario; line numbers below refer to it.
pub const BASE: &str = r#"[run]
duration = "60s"
seed = 1
[[node]]
name = "a"
[[node]]
name = "b"
[[node]]
name = "c"
[[link]]
between = ["a", "b"]
rate = "5mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 50 }
loss = { kind = "bernoulli", p = 0.02 }
[[link]]
between = ["b", "c"]
rate = "2mbit"
delay = "5ms"
[[flow]]
name = "video"
from = "a"
to = "c"
transport = { cc = "tfrc" }
"#;

pub fn replaced(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "test bug: {from:?} not in BASE");
    BASE.replacen(from, to, 1)
}

/// Parses `text` as `bad.toml`, expects an error, and checks that it names
/// the file, `line {line}` and every one of `needles`.
#[track_caller]
pub fn assert_refused(text: &str, line: usize, needles: &[&str]) {
    let message = match Scenario::from_str(text, "bad.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("bad.toml"), "no file name in: {message}");
    assert!(
        message.contains(&format!("line {line},")),
        "expected line {line} in: {message}"
    );
    for needle in needles {
        assert!(
            message.contains(needle),
            "expected {needle:?} in: {message}"
        );
    }
}
