//! `fairstream emodel`, run as a user runs it: the built binary.

mod support;

use std::process::Output;

use serde_json::Value;
use support::{failure_of, fairstream, json_of, number};

/// Runs `fairstream emodel ARGS`.
fn emodel(args: &[&str]) -> Output {
    fairstream(&[&["emodel"], args].concat())
}

/// Runs `fairstream emodel ARGS --json`, expects success, parses stdout.
fn rating(args: &[&str]) -> Value {
    json_of(&[&["emodel"], args, &["--json"]].concat())
}

/// Expects `fairstream emodel ARGS` to fail cleanly; returns its stderr.
fn refused(args: &[&str]) -> String {
    failure_of(&[&["emodel"], args].concat())
}

#[test]
fn g711_at_150_ms_and_2_percent() {
    let v = rating(&["--codec", "g711", "--delay", "150ms", "--loss", "2%"]);
    // Ie,eff = 95·2/(2 + 4.3) = 30.159 (G.711 without concealment, Bpl 4.3).
    assert!((number(&v, "ie_eff") - 30.159).abs() < 0.001, "{v}");
    // Idd(150 ms) = 0.1635 (worked in crates/media/src/emodel/tests.rs).
    assert!((number(&v, "idd") - 0.1635).abs() < 0.0005, "{v}");
    let r = number(&v, "r");
    let expected = number(&v, "ro") - number(&v, "is") - number(&v, "id") - number(&v, "ie_eff");
    assert!((r - expected).abs() < 1e-9, "{v}");
    assert!((r - 59.38).abs() < 0.01, "{v}");
    // MOS(59.38) = 1 + 2.0783 + 59.38·(−0.62)·40.62·7e-6 = 3.068.
    assert!((number(&v, "mos") - 3.068).abs() < 0.001, "{v}");
    assert_eq!(v["codec"], "g711");
    assert_eq!(number(&v, "ta_ms"), 150.0);
    // T and Tr follow Ta unless given: T = Ta, Tr = 2·Ta.
    assert_eq!(number(&v, "t_ms"), 150.0);
    assert_eq!(number(&v, "tr_ms"), 300.0);
    assert_eq!(number(&v, "ppl_percent"), 2.0);
    assert_eq!(number(&v, "burst_ratio"), 1.0);
}

#[test]
fn loss_as_a_fraction_is_the_same_as_a_percentage() {
    let percent = rating(&["--codec", "g729", "--delay", "100ms", "--loss", "2%"]);
    let fraction = rating(&["--codec", "g729", "--delay", "100ms", "--loss", "0.02"]);
    assert_eq!(percent, fraction);
    // G.729A + VAD: 11 + 84·2/(2 + 19) = 19.
    assert!((number(&percent, "ie_eff") - 19.0).abs() < 1e-9);
}

#[test]
fn concealment_and_burstiness_move_r_the_right_way() {
    let call = ["--delay", "150ms", "--loss", "2%"];
    let plain = rating(&[&["--codec", "g711"][..], &call].concat());
    let plc = rating(&[&["--codec", "g711-plc"][..], &call].concat());
    let bursty = rating(&[&["--codec", "g711", "--burst-ratio", "1.5"][..], &call].concat());
    assert!(number(&plc, "r") > number(&plain, "r"));
    assert!(number(&bursty, "r") < number(&plain, "r"));
    // BurstR 1.5: 95·2/(2/1.5 + 4.3) = 33.728.
    assert!(
        (number(&bursty, "ie_eff") - 33.728).abs() < 0.001,
        "{bursty}"
    );
}

#[test]
fn no_loss_and_no_delay_is_g107_default_rating() {
    let v = rating(&["--codec", "g711", "--delay", "0ms"]);
    assert!((number(&v, "r") - 93.2).abs() < 0.05, "{v}");
    assert!((number(&v, "mos") - 4.41).abs() < 0.005, "{v}");
}

#[test]
fn echo_delays_can_be_given() {
    let v = rating(&[
        "--codec",
        "g711",
        "--delay",
        "150ms",
        "--echo-path-delay",
        "0ms",
        "--round-trip-delay",
        "0ms",
    ]);
    assert_eq!(number(&v, "t_ms"), 0.0);
    assert_eq!(number(&v, "tr_ms"), 0.0);
    assert_eq!(number(&v, "idte"), 0.0);
    // Only Idd and the default Idle remain: 0.1635 + 0.149.
    assert!((number(&v, "id") - 0.3125).abs() < 0.001, "{v}");
}

#[test]
fn one_line_of_text() {
    let output = emodel(&["--codec", "g711-plc", "--delay", "150ms", "--loss", "2%"]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(text.lines().count(), 1, "{text}");
    for expected in ["R 82.53", "MOS 4.12", "Id 3.82", "Ie,eff 7.01", "g711-plc"] {
        assert!(text.contains(expected), "no `{expected}` in {text}");
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let e = refused(&["--codec", "g722", "--delay", "150ms"]);
    assert!(e.contains("--codec") && e.contains("g722"), "{e}");
    let e = refused(&["--codec", "g711", "--delay", "150"]);
    assert!(e.contains("--delay") && e.contains("no unit"), "{e}");
    let e = refused(&["--codec", "g711", "--delay", "-5ms"]);
    assert!(e.contains("--delay"), "{e}");
    let e = refused(&["--codec", "g711", "--delay", "150ms", "--loss", "2"]);
    assert!(e.contains("--loss") && e.contains("2%"), "{e}");
    let e = refused(&["--codec", "g711", "--delay", "150ms", "--loss", "120%"]);
    assert!(e.contains("--loss") && e.contains("[0, 100]"), "{e}");
    let e = refused(&["--codec", "g711", "--delay", "150ms", "--loss", "NaN"]);
    assert!(e.contains("--loss"), "{e}");
    let e = refused(&["--codec", "g711", "--delay", "150ms", "--burst-ratio", "0"]);
    assert!(e.contains("--burst-ratio"), "{e}");
    let e = refused(&["--delay", "150ms"]);
    assert!(e.contains("--codec"), "{e}");
}
