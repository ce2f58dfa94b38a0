//! Checks the code against the tables in `shared/reference/tfrc-notes.md`
//! itself, so that the notes and the code cannot drift apart unnoticed.

use std::time::Duration;

use fairstream_proto::cc::equation::{f, tfrc_rate};
use fairstream_proto::cc::tfrc::initial_window;

fn parse_number(text: &str) -> f64 {
    let cleaned: String = text.chars().filter(|c| !matches!(c, ',' | ' ')).collect();
    let cleaned = cleaned.trim_end_matches("B/s");
    cleaned
        .parse()
        .unwrap_or_else(|_| panic!("not a number in the notes: `{text}`"))
}

#[test]
fn throughput_table_of_the_notes() {
    let Some(path) = fairstream_testkit::shared_file("reference/tfrc-notes.md") else {
        return;
    };
    let notes = std::fs::read_to_string(path).unwrap();
    let section = notes
        .split("## Throughput equation")
        .nth(1)
        .expect("the notes have a throughput equation section");
    let mut rows = 0;
    for line in section.lines().take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | p | f(p) | X | -> ["", p, f, X, ""]
        if cells.len() != 5 || cells[1].parse::<f64>().is_err() {
            continue;
        }
        let p = parse_number(cells[1]);
        let f_expected = parse_number(cells[2]);
        let x_expected = parse_number(cells[3]);
        let f_ours = f(p);
        // The notes give f to 6-9 significant digits.
        assert!(
            ((f_ours - f_expected) / f_expected).abs() < 2e-6,
            "f({p}): {f_ours} vs {f_expected}"
        );
        let x = tfrc_rate(1460.0, Duration::from_millis(100), p)
            .unwrap()
            .bytes_per_sec();
        // X is rounded to whole bytes/s in the notes.
        assert!(
            (x - x_expected).abs() <= 0.5 + 2e-6 * x_expected,
            "X({p}): {x} vs {x_expected}"
        );
        rows += 1;
    }
    assert_eq!(rows, 7, "expected the 7 rows of the notes' table");
}

#[test]
fn initial_window_line_of_the_notes() {
    let Some(path) = fairstream_testkit::shared_file("reference/tfrc-notes.md") else {
        return;
    };
    let notes = std::fs::read_to_string(path).unwrap();
    let line = notes
        .lines()
        .find(|l| l.contains("W_init = min(4s"))
        .expect("the notes state W_init");
    // "... s = 500 → 2000; 1000 → 4000; 1460 → 4380; 9000 → 18000."
    let pairs = line.split(':').nth(1).expect("examples after the colon");
    let mut checked = 0;
    for pair in pairs.split(';') {
        let mut parts = pair.split('→');
        let (Some(s), Some(w)) = (parts.next(), parts.next()) else {
            continue;
        };
        let s = parse_number(s.trim().trim_start_matches("s =").trim());
        let w = parse_number(w.trim().trim_end_matches('.'));
        assert_eq!(initial_window(s), w, "W_init for s = {s}");
        checked += 1;
    }
    assert_eq!(checked, 4);
}
