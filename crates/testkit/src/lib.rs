//! Test support shared by fairstream's crates.
//!
//! Some tests need something the repository does not hold: the real traces and
//! video in `../shared/data`, the reference notes in `../shared/reference`, or an
//! external tool such as `tshark` or `ffmpeg`. Such a test asks for it here:
//!
//! - found: the test gets its path and runs;
//! - missing, and `FAIRSTREAM_REQUIRE_ALL=1` (set by `.ci/run`): the test fails,
//!   naming what is missing, so CI cannot pass by skipping;
//! - missing otherwise: the test prints `skipped: …` and returns early.
//!
//! ```no_run
//! let Some(notes) = fairstream_testkit::shared_file("reference/tfrc-notes.md") else {
//!     return;
//! };
//! ```

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::thread;
use std::time::{Duration, Instant};

/// The environment variable that turns a missing dependency into a failure.
pub const REQUIRE_ALL: &str = "FAIRSTREAM_REQUIRE_ALL";
/// The environment variable that overrides where `shared/` is.
pub const SHARED_DIR: &str = "FAIRSTREAM_SHARED";

/// Whether missing test dependencies must fail the test.
pub fn require_all() -> bool {
    env::var(REQUIRE_ALL).is_ok_and(|v| v == "1")
}

/// The `shared/` directory beside the repository (or `$FAIRSTREAM_SHARED`).
pub fn shared_dir() -> PathBuf {
    if let Some(dir) = env::var_os(SHARED_DIR) {
        return PathBuf::from(dir);
    }
    // crates/testkit -> the workspace root -> its parent.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// Reports a missing dependency: panics under `FAIRSTREAM_REQUIRE_ALL=1`,
/// otherwise prints that the calling test is skipped.
#[track_caller]
pub fn missing(what: &str) {
    if require_all() {
        panic!("{what} is missing and {REQUIRE_ALL}=1: this test may not be skipped");
    }
    eprintln!("skipped: {what} is missing (set {REQUIRE_ALL}=1 to make this a failure)");
}

/// A file under `shared/`, e.g. `data/video/BA_MW_D.264`, if it exists.
#[track_caller]
pub fn shared_file(relative: &str) -> Option<PathBuf> {
    let path = shared_dir().join(relative);
    if path.is_file() {
        Some(path)
    } else {
        missing(&format!("shared file {}", path.display()));
        None
    }
}

/// An executable on `PATH`, e.g. `tshark`, if there is one.
#[track_caller]
pub fn tool(name: &str) -> Option<PathBuf> {
    let found = env::var_os("PATH").and_then(|paths| {
        env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    });
    if found.is_none() {
        missing(&format!("the external tool `{name}`"));
    }
    found
}

/// Waits for `child` at most `limit` and returns its output; past that it
/// kills the child and panics with its stderr, so that a test that runs a
/// binary always stops by itself.
pub fn wait_with_limit(mut child: Child, limit: Duration) -> Output {
    // A test helper: wall time bounds the wait, it is not measured.
    #[allow(clippy::disallowed_methods)]
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().expect("poll the child").is_some() {
            return child
                .wait_with_output()
                .expect("collect the child's output");
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let output = child
        .wait_with_output()
        .expect("collect the child's output");
    panic!(
        "still running after {limit:?}; stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
