//! Retransmission within the deadline in the simulator (issue 12): the
//! scenarios of `experiments/arq/` with and without ARQ and FEC.
//!
//! `docs/results/arq.md` is the output of
//! `cargo test --release -p fairstream-sim --test arq -- --ignored --nocapture`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use std::path::PathBuf;

use fairstream_sim::runner::{MediaOutcome, Simulation, Summary};
use fairstream_sim::scenario::Scenario;

fn experiment(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/arq")
        .join(name)
}

/// The scenario `name` with ARQ on or off, RS(56, 50) FEC or none, `frames`
/// frames and `seed`.
fn variant(name: &str, arq: bool, fec: bool, frames: u32, seed: u64) -> Scenario {
    let path = experiment(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let media = format!(
        "arq = \"{}\"{}, frames = {frames} }}",
        if arq { "on" } else { "off" },
        if fec {
            ", fec = { n = 56, k = 50 }"
        } else {
            ""
        },
    );
    assert!(text.contains("frames = 300,") && text.contains("arq = \"on\" }"));
    let text = text
        .replace("frames = 300, ", "")
        .replace("arq = \"on\" }", &media);
    Scenario::from_str(&text, &path.display().to_string())
        .unwrap()
        .with_seed(seed)
}

struct Outcome {
    frames_damaged: u64,
    psnr_db: f64,
    requested: u64,
    recovered: u64,
    retransmitted: u64,
    refused_late: u64,
    left_to_fec: u64,
    fec_rebuilt: u64,
    channel_losses: u64,
    congestion_losses: u64,
    packets_sent: u64,
}

fn run(scenario: &Scenario) -> Outcome {
    let mut simulation = Simulation::new(scenario).unwrap_or_else(|e| panic!("{e}"));
    let summary: Summary = simulation.run();
    assert!(summary.conservation_ok);
    let flow = &summary.flows[0];
    let report = match flow.media.as_ref().expect("a media object") {
        MediaOutcome::Report(report) => report,
        MediaOutcome::Error { error } => panic!("media error: {error}"),
    };
    // Without ARQ the flow is one plain connection: nothing to count.
    let arq = flow.arq;
    Outcome {
        frames_damaged: report.playout.frames_lost.total(),
        psnr_db: report.quality.as_ref().unwrap().psnr_db_mean,
        requested: arq.map_or(0, |a| a.requested),
        recovered: arq.map_or(0, |a| a.recovered),
        retransmitted: arq.map_or(0, |a| a.retransmitted),
        refused_late: arq.map_or(0, |a| a.refused_late),
        left_to_fec: arq.map_or(0, |a| a.left_to_fec),
        fec_rebuilt: report.packets_recovered_by_fec,
        channel_losses: flow.packets_lost_channel,
        congestion_losses: flow.packets_lost_congestion,
        packets_sent: flow.packets_sent,
    }
}

#[test]
fn arq_leaves_no_frame_damaged_at_three_percent_loss() {
    let with = run(&variant("bernoulli.toml", true, false, 125, 1));
    let without = run(&variant("bernoulli.toml", false, false, 125, 1));
    eprintln!(
        "with ARQ: {} damaged, {:.2} dB, {} asked, {} recovered, {} resent; without: {} damaged, {:.2} dB",
        with.frames_damaged,
        with.psnr_db,
        with.requested,
        with.recovered,
        with.retransmitted,
        without.frames_damaged,
        without.psnr_db
    );
    assert!(with.channel_losses > 0 && without.channel_losses > 0);
    assert!(without.frames_damaged > 0);
    assert_eq!(with.frames_damaged, 0);
    assert!(with.requested > 0);
    assert_eq!(with.recovered, with.requested);
    assert!(with.retransmitted >= with.requested);
    assert!(with.psnr_db > without.psnr_db);
    assert_eq!(without.requested, 0);
}

#[test]
fn fec_and_arq_together_on_a_bursty_hop() {
    let both = run(&variant("gilbert-elliott.toml", true, true, 125, 2));
    let fec = run(&variant("gilbert-elliott.toml", false, true, 125, 2));
    eprintln!(
        "both: {} damaged ({} left to FEC, {} rebuilt by FEC, {} asked, {} resent); FEC alone: {} damaged",
        both.frames_damaged,
        both.left_to_fec,
        both.fec_rebuilt,
        both.requested,
        both.retransmitted,
        fec.frames_damaged
    );
    assert!(both.frames_damaged <= fec.frames_damaged);
    assert_eq!(both.frames_damaged, 0);
    assert!(fec.fec_rebuilt > 0);
    // ARQ leaves to FEC what FEC rebuilds, and FEC then rebuilds it.
    assert!(both.left_to_fec > 0);
    assert!(both.fec_rebuilt > 0);
}

/// The table of `docs/results/arq.md`: frames damaged and PSNR over five
/// seeds, for none, FEC, ARQ and both, on both hops.
#[test]
#[ignore = "a benchmark table: run in release with --ignored --nocapture"]
fn table() {
    let seeds = 1..=5u64;
    println!("| hop | repair | frames damaged (of 300) | PSNR, dB | packets sent | channel losses | asked / recovered | resent | refused late | left to FEC | rebuilt by FEC |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (hop, file) in [
        ("Bernoulli 3 %", "bernoulli.toml"),
        ("Gilbert-Elliott", "gilbert-elliott.toml"),
    ] {
        for (repair, arq, fec) in [
            ("none", false, false),
            ("FEC RS(56,50)", false, true),
            ("ARQ", true, false),
            ("both", true, true),
        ] {
            let outcomes: Vec<Outcome> = seeds
                .clone()
                .map(|seed| run(&variant(file, arq, fec, 300, seed)))
                .collect();
            let stat = |f: &dyn Fn(&Outcome) -> f64| {
                let values: Vec<f64> = outcomes.iter().map(f).collect();
                let mean = values.iter().sum::<f64>() / values.len() as f64;
                let min = values.iter().copied().fold(f64::INFINITY, f64::min);
                let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (mean, min, max)
            };
            let whole = |f: &dyn Fn(&Outcome) -> f64| {
                let (mean, min, max) = stat(f);
                format!("{mean:.1} ({min:.0}–{max:.0})")
            };
            let (psnr, psnr_min, psnr_max) = stat(&|o| o.psnr_db);
            assert!(outcomes.iter().all(|o| o.congestion_losses < 50));
            println!(
                "| {hop} | {repair} | {} | {psnr:.2} ({psnr_min:.2}–{psnr_max:.2}) | {} | {} | {} / {} | {} | {} | {} | {} |",
                whole(&|o| o.frames_damaged as f64),
                whole(&|o| o.packets_sent as f64),
                whole(&|o| o.channel_losses as f64),
                whole(&|o| o.requested as f64),
                whole(&|o| o.recovered as f64),
                whole(&|o| o.retransmitted as f64),
                whole(&|o| o.refused_late as f64),
                whole(&|o| o.left_to_fec as f64),
                whole(&|o| o.fec_rebuilt as f64),
            );
        }
    }
}

/// Paper 000's GOP-interleaved split over four connections: a GOP waits
/// for the one before it, seconds apart, and the receiver holds it until it
/// is due rather than for a fixed second (the issue measured 26–32 % of the
/// bytes discarded with a fixed 1 s wait).
#[test]
fn gop_interleaved_connections_wait_for_each_other_until_the_deadline() {
    let text = r#"
[run]
duration = "20s"
seed = 1
[[node]]
name = "server"
[[node]]
name = "client"
[[link]]
between = ["server", "client"]
rate = "700kbit"
delay = "20ms"
queue = { kind = "droptail", packets = 100 }
[[flow]]
name = "video"
from = "server"
to = "client"
transport = { cc = "tfrc", packet_size = 1000, conns = 4, policy = "gop-interleave" }
media = { source = "generated", width = 176, height = 144, bitrate = "300kbit", slice_max = 900, gop = 25, frames = 200, mode = "on-demand", startup_delay = "6s" }
"#;
    let scenario = Scenario::from_str(text, "gop-interleave.toml").unwrap();
    let mut simulation = Simulation::new(&scenario).unwrap();
    let summary = simulation.run();
    let flow = &summary.flows[0];
    let report = match flow.media.as_ref().unwrap() {
        MediaOutcome::Report(report) => report,
        MediaOutcome::Error { error } => panic!("{error}"),
    };
    eprintln!(
        "held at most {:?} datagrams for {:?} s; {} of {} frames shown, lost {:?}",
        flow.reorder_buffer_max_packets,
        flow.reorder_delay_max_s,
        report.playout.frames_displayed,
        report.playout.frames_total,
        report.playout.frames_lost
    );
    assert_eq!(flow.connections_max, Some(4));
    // Each GOP takes its connection about two seconds at a quarter of the
    // link: the one after it waits that long, longer than a fixed 1 s.
    assert!(flow.reorder_delay_max_s.unwrap() > 1.0);
    assert_eq!(report.playout.frames_lost.total(), 0);
    assert_eq!(report.playout.frames_displayed, 200);
}
