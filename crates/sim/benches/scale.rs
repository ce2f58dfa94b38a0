//! How the simulator scales (issue 18): TCP NewReno dumbbells of 100, 1,000
//! and 10,000 flows and 100 adaptive multi-connection TFRC flows, each on a
//! 100 Mbit/s bottleneck for 60 simulated seconds.
//!
//! ```sh
//! cargo bench -p fairstream-sim --bench scale                  # every case
//! cargo bench -p fairstream-sim --bench scale -- newreno-1000  # one case
//! cargo bench -p fairstream-sim --bench scale -- --toml newreno-100 > dumbbell.toml
//! ```
//!
//! The network is the one `bench/ns3/` builds for ns-3: every sender and
//! every receiver on an access link of its own (1 Gbit/s, 1 ms), the
//! bottleneck 100 Mbit/s, 20 ms, a drop-tail queue of 100 packets; flow i
//! starts at (7919·i mod 1000) ms. `--toml CASE` prints the scenario, for
//! `fairstream simulate`.
//!
//! Each case runs in a child process of its own (this binary with
//! `--child CASE`), so that the peak resident memory it reports (VmHWM from
//! /proc/self/status) is that run's alone; the time series are off, as in
//! `fairstream simulate` without `--out`. Prints a Markdown table: wall
//! time (building the network included), engine events, events per wall
//! second, packets any host sent and peak memory. A benchmark measures; it
//! never fails on time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]
#![allow(clippy::disallowed_methods)] // a benchmark reads the wall clock
#![allow(missing_docs)]

use std::fmt::Write as _;
#[path = "support/child.rs"]
mod child;
use std::time::Instant;

use fairstream_sim::runner::Simulation;
use fairstream_sim::scenario::Scenario;

/// The cases: name, flows, transport.
const CASES: [(&str, usize, &str); 4] = [
    ("newreno-100", 100, r#"{ cc = "tcp-newreno" }"#),
    ("newreno-1000", 1000, r#"{ cc = "tcp-newreno" }"#),
    ("newreno-10000", 10_000, r#"{ cc = "tcp-newreno" }"#),
    (
        "adaptive-100",
        100,
        r#"{ cc = "tfrc", controller = "adaptive" }"#,
    ),
];

/// The dumbbell of `flows` flows of `transport`.
fn dumbbell(flows: usize, transport: &str, seconds: u64) -> String {
    let mut text = format!(
        "[run]\nduration = \"{seconds}s\"\nseed = 1\n\
         [[node]]\nname = \"left\"\n[[node]]\nname = \"right\"\n\
         [[link]]\nbetween = [\"left\", \"right\"]\nrate = \"100mbit\"\ndelay = \"20ms\"\n\
         queue = {{ kind = \"droptail\", packets = 100 }}\n"
    );
    for i in 0..flows {
        let _ = write!(
            text,
            "[[node]]\nname = \"s{i}\"\n[[node]]\nname = \"d{i}\"\n\
             [[link]]\nbetween = [\"s{i}\", \"left\"]\nrate = \"1gbit\"\ndelay = \"1ms\"\n\
             [[link]]\nbetween = [\"right\", \"d{i}\"]\nrate = \"1gbit\"\ndelay = \"1ms\"\n\
             [[flow]]\nname = \"f{i}\"\nfrom = \"s{i}\"\nto = \"d{i}\"\nstart = \"{}ms\"\n\
             transport = {transport}\n",
            (i * 7919) % 1000
        );
    }
    text
}

fn case(name: &str) -> (usize, &'static str) {
    let (_, flows, transport) = CASES
        .iter()
        .find(|(n, _, _)| *n == name)
        .unwrap_or_else(|| panic!("unknown case {name}"));
    (*flows, transport)
}

fn peak_resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs one case and prints one line of figures for the parent.
fn child(name: &str) {
    let (flows, transport) = case(name);
    let text = dumbbell(flows, transport, 60);
    let started = Instant::now();
    let scenario = Scenario::from_str(&text, "scale.toml").unwrap();
    let mut simulation = Simulation::new(&scenario).unwrap().without_series();
    let summary = simulation.run();
    let wall = started.elapsed();
    assert!(summary.conservation_ok);
    println!(
        "{} {} {} {}",
        wall.as_secs_f64(),
        summary.events,
        summary.packets.created,
        peak_resident_kib().unwrap_or(0),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|a| a == "--child") {
        child(&args[position + 1]);
        return;
    }
    if let Some(position) = args.iter().position(|a| a == "--toml") {
        let (flows, transport) = case(&args[position + 1]);
        print!("{}", dumbbell(flows, transport, 60));
        return;
    }
    // `cargo bench` passes `--bench`; a case name selects one case.
    let selected: Vec<&str> = CASES
        .iter()
        .map(|(name, _, _)| *name)
        .filter(|name| {
            args.iter().skip(1).all(|a| a.starts_with('-')) || args.iter().any(|a| a == name)
        })
        .collect();
    println!("| case | flows | wall time | events | events/s | packets | peak memory (VmHWM) |");
    println!("|---|---|---|---|---|---|---|");
    for name in selected {
        let fields = child::child_fields(name);
        let [wall, events, packets, kib] = fields[..] else {
            panic!("bad child output: {fields:?}");
        };
        println!(
            "| {name} | {} | {wall:.2} s | {:.2} M | {:.2} M/s | {:.2} M | {:.1} MiB |",
            case(name).0,
            events / 1e6,
            events / 1e6 / wall,
            packets / 1e6,
            kib / 1024.0
        );
    }
}
