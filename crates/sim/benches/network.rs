//! Whole-simulation benchmark (issue 4): a dumbbell of TCP NewReno and TFRC
//! (DCCP, CCID 3) flows on a 100 Mbit/s drop-tail bottleneck for 60
//! simulated seconds.
//!
//! ```sh
//! cargo bench -p fairstream-sim --bench network            # every size
//! cargo bench -p fairstream-sim --bench network -- 16      # 8 TCP + 8 TFRC only
//! ```
//!
//! Each configuration runs in a child process of its own (this binary with
//! `--child N`), so that the peak resident memory it reports (VmHWM from
//! /proc/self/status) is that run's alone. Prints a Markdown table: wall
//! time, engine events per wall second, packets (every packet any host sent,
//! both directions) per wall second, and peak memory. A benchmark measures;
//! it never fails on time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]
#![allow(clippy::disallowed_methods)] // a benchmark reads the wall clock
#![allow(missing_docs)]

#[path = "support/child.rs"]
mod child;
use std::time::{Duration, Instant};

use fairstream_sim::runner::Simulation;
use fairstream_sim::scenario::Scenario;

/// The dumbbell with `flows` flows, half TCP NewReno, half TFRC.
fn dumbbell(flows: usize, seconds: u64) -> String {
    let mut text = format!(
        "[run]\nduration = \"{seconds}s\"\nseed = 1\n\
         [[node]]\nname = \"left\"\n[[node]]\nname = \"right\"\n[[node]]\nname = \"sink\"\n\
         [[link]]\nbetween = [\"left\", \"right\"]\nrate = \"100mbit\"\ndelay = \"20ms\"\n\
         queue = {{ kind = \"droptail\", packets = 400 }}\n\
         [[link]]\nbetween = [\"right\", \"sink\"]\nrate = \"1gbit\"\ndelay = \"1ms\"\n"
    );
    for i in 0..flows {
        let cc = if i % 2 == 0 { "tcp-newreno" } else { "tfrc" };
        text.push_str(&format!(
            "[[node]]\nname = \"src{i}\"\n\
             [[link]]\nbetween = [\"src{i}\", \"left\"]\nrate = \"1gbit\"\ndelay = \"{}ms\"\n\
             [[flow]]\nname = \"f{i}\"\nfrom = \"src{i}\"\nto = \"sink\"\nstart = \"{}ms\"\n\
             transport = {{ cc = \"{cc}\" }}\n",
            1 + i % 5,
            (i * 37) % 1000
        ));
    }
    text
}

fn peak_resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs one configuration and prints one line of figures for the parent.
fn child(flows: usize) {
    let scenario = Scenario::from_str(&dumbbell(flows, 60), "bench.toml").unwrap();
    let started = Instant::now();
    let mut simulation = Simulation::new(&scenario).unwrap();
    let summary = simulation.run();
    let wall = started.elapsed();
    assert!(summary.conservation_ok);
    let bottleneck = &summary.links[0];
    println!(
        "{} {} {} {} {} {}",
        wall.as_secs_f64(),
        summary.events,
        summary.packets.created,
        peak_resident_kib().unwrap_or(0),
        bottleneck.utilization,
        summary.flows.iter().map(|f| f.throughput_bps).sum::<f64>()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|a| a == "--child") {
        let flows = args[position + 1].parse().unwrap();
        child(flows);
        return;
    }
    // `cargo bench` passes `--bench`; a bare number selects one size.
    let sizes: Vec<usize> = match args.iter().skip(1).find_map(|a| a.parse().ok()) {
        Some(n) => vec![n],
        None => vec![2, 4, 8, 16, 32, 64],
    };
    println!("| flows (TCP + TFRC) | wall time | events | events/s | packets | packets/s | peak memory | bottleneck utilisation |");
    println!("|---|---|---|---|---|---|---|---|");
    for flows in sizes {
        let fields = child::child_fields(&flows.to_string());
        let [wall, events, packets, kib, utilisation, _] = fields[..] else {
            panic!("bad child output: {fields:?}");
        };
        let wall = Duration::from_secs_f64(wall);
        println!(
            "| {} + {} | {:.2} s | {:.2} M | {:.2} M/s | {:.2} M | {:.2} M/s | {:.1} MiB | {:.3} |",
            flows.div_ceil(2),
            flows / 2,
            wall.as_secs_f64(),
            events / 1e6,
            events / 1e6 / wall.as_secs_f64(),
            packets / 1e6,
            packets / 1e6 / wall.as_secs_f64(),
            kib / 1024.0,
            utilisation
        );
    }
}
