//! The `tdd` link key and the `"ibbp"` media source in scenario files:
//! every key checked with a clear error, stations of one cell sharing its
//! uplink, the frame length's effect on delay, and B-frame damage counted
//! in a run (paper 000).

// An integration test is not `cfg(test)`, so clippy.toml's allow-unwrap-in-tests
// does not reach its helper functions; a panic is how a test fails.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_refused, replaced};
use fairstream_sim::link::TddConfig;
use fairstream_sim::runner::{MediaOutcome, Simulation, Summary};
use fairstream_sim::scenario::{Capacity, MediaSourceConfig, Scenario};

fn run(text: &str) -> Summary {
    let scenario = Scenario::from_str(text, "tdd.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut simulation = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let summary = simulation.run();
    assert!(summary.conservation_ok, "packet conservation broken");
    summary
}

#[test]
fn tdd_keys_are_checked() {
    let tdd = |table: &str| {
        replaced(
            "delay = \"5ms\"",
            &format!("delay = \"5ms\"\ntdd = {table}"),
        )
    };
    assert_refused(
        &tdd("{ frame = \"40ms\" }"),
        20,
        &["link[1]", "tdd.frame", "2.5 to 20 ms"],
    );
    assert_refused(&tdd("{ frame = \"1ms\" }"), 20, &["tdd.frame"]);
    assert_refused(&tdd("{ dl_ul = \"1/3\" }"), 20, &["tdd.dl_ul", "1:3"]);
    assert_refused(&tdd("{ dl_ul = \"0:3\" }"), 20, &["tdd.dl_ul"]);
    assert_refused(
        &tdd("{ dl_overhead = \"2ms\" }"),
        20,
        &["tdd.dl_overhead", "no room"],
    );
    assert_refused(&tdd("{ ul_overhead = \"4ms\" }"), 20, &["tdd.ul_overhead"]);
    assert_refused(&tdd("{ grant_lag = 0 }"), 20, &["tdd.grant_lag", "1..=64"]);
    assert_refused(&tdd("{ grant_lag = 1.5 }"), 20, &["tdd.grant_lag"]);
    assert_refused(&tdd("{ cell = \"\" }"), 20, &["tdd.cell", "empty"]);
    assert_refused(&tdd("{ slots = 3 }"), 20, &["tdd.slots", "unknown key"]);
    let both = replaced("delay = \"5ms\"", "delay = \"5ms\"\ntdd = {}\nbod = {}");
    assert_refused(&both, 20, &["link[1]", ".tdd", "bandwidth-on-demand"]);

    let ok = tdd(
        "{ cell = \"bs\", frame = \"12.5ms\", dl_ul = \"1:2\", dl_overhead = \"300us\", \
         ul_overhead = \"200us\", grant_lag = 2 }",
    );
    let scenario = Scenario::from_str(&ok, "ok.toml").unwrap();
    let Capacity::Tdd { config, cell } = &scenario.links()[1].capacity else {
        panic!("a TDD link expected");
    };
    assert_eq!(cell.as_deref(), Some("bs"));
    assert_eq!(config.frame.as_micros(), 12_500);
    assert_eq!(
        (config.dl_share, config.ul_share, config.grant_lag),
        (1, 2, 2)
    );
    assert_eq!(config.rate.bits_per_sec(), 2e6);
    // Absent keys take paper 000's and the standard's values.
    let defaults = Scenario::from_str(&tdd("{}"), "ok.toml").unwrap();
    let Capacity::Tdd { config, cell } = &defaults.links()[1].capacity else {
        panic!("a TDD link expected");
    };
    assert_eq!(cell, &None);
    assert_eq!(
        *config,
        TddConfig {
            rate: config.rate,
            ..TddConfig::default()
        }
    );
}

/// Stations `s1`…`sN` in cell `bs` (frames of `frame`), each sending CBR
/// at `rate` to the BS.
fn cell(stations: usize, frame: &str, rate: &str, cell2: &str) -> String {
    let mut text = String::from("[run]\nduration = \"20s\"\nseed = 3\n[[node]]\nname = \"bs\"\n");
    for s in 1..=stations {
        let cell = if s == 2 { cell2 } else { "bs" };
        text += &format!(
            "[[node]]\nname = \"s{s}\"\n[[link]]\nbetween = [\"s{s}\", \"bs\"]\n\
             rate = \"10.67mbit\"\ndelay = \"2us\"\n\
             tdd = {{ cell = \"{cell}\", frame = \"{frame}\" }}\n\
             queue = {{ kind = \"droptail\", packets = 50 }}\n\
             [[flow]]\nname = \"s{s}\"\nfrom = \"s{s}\"\nto = \"bs\"\n\
             transport = {{ cc = \"cbr\", rate = \"{rate}\", packet_size = 1000 }}\n"
        );
    }
    text
}

#[test]
fn the_stations_of_a_cell_must_agree_on_its_frame() {
    let text = cell(2, "5ms", "1mbit", "bs").replacen(
        "tdd = { cell = \"bs\", frame = \"5ms\" }",
        "tdd = { cell = \"bs\", frame = \"5ms\" }\n#",
        0,
    );
    assert!(Scenario::from_str(&text, "ok.toml").is_ok());
    let mismatched = text.replacen("frame = \"5ms\"", "frame = \"10ms\"", 2);
    let mismatched = mismatched.replacen("frame = \"10ms\"", "frame = \"5ms\"", 1);
    let line = mismatched
        .lines()
        .position(|l| l.contains("frame = \"10ms\""))
        .unwrap()
        + 1;
    assert_refused(
        &mismatched,
        line,
        &["link[1].tdd.frame", "cell \"bs\"", "link[0]"],
    );
    let other_base = text.replacen(
        "between = [\"s2\", \"bs\"]",
        "between = [\"bs\", \"s2\"]",
        1,
    );
    let line = other_base
        .lines()
        .position(|l| l.contains("between = [\"bs\", \"s2\"]"))
        .unwrap()
        + 4;
    assert_refused(
        &other_base,
        line,
        &["link[1].tdd.cell", "same base station"],
    );
}

#[test]
fn stations_of_one_cell_share_its_uplink_and_a_cell_of_ones_own_does_not() {
    let rates =
        |summary: &Summary| -> Vec<f64> { summary.flows.iter().map(|f| f.goodput_bps).collect() };
    // Three stations offering 4 Mbit/s each: one cell's 7.81 Mbit/s
    // uplink (20 ms frames) split three ways.
    let shared = rates(&run(&cell(3, "20ms", "4mbit", "bs")));
    let total: f64 = shared.iter().sum();
    assert!(total > 7.5e6 && total < 7.82e6, "{shared:?}");
    for rate in &shared {
        assert!((rate / (total / 3.0) - 1.0).abs() < 0.05, "{shared:?}");
    }
    // Station 2 in a cell of its own gets its 4 Mbit/s.
    let apart = rates(&run(&cell(3, "20ms", "4mbit", "other")));
    assert!(apart[1] > 3.9e6, "{apart:?}");
    let summary = run(&cell(3, "20ms", "4mbit", "bs"));
    let tdd = summary.links[0].tdd.as_ref().unwrap();
    assert_eq!((tdd.cell.as_str(), tdd.subframe), ("bs", "uplink"));
    assert!(tdd.bytes_used <= tdd.bytes_granted);
    assert_eq!(summary.links[1].tdd.as_ref().unwrap().subframe, "downlink");
}

#[test]
fn a_longer_frame_delays_a_light_flow_more() {
    let delay = |frame: &str| {
        let summary = run(&cell(1, frame, "200kbit", "bs"));
        summary.flows[0].mean_one_way_delay_s.unwrap()
    };
    let (short, long) = (delay("5ms"), delay("20ms"));
    // A packet waits for the next frame's request (half a frame on
    // average) and a frame more for its grant, then for the DL subframe and
    // the UL overhead: about 1.5 frames + 1/4 frame.
    println!("one-way delay: 5 ms frames {short:.4} s, 20 ms frames {long:.4} s");
    assert!(short > 0.0075 && short < 0.0175, "{short}");
    assert!(long > 0.03 && long < 0.07, "{long}");
}

#[test]
fn ibbp_keys_are_checked() {
    let media = |table: &str| {
        replaced(
            "transport = { cc = \"tfrc\" }",
            &format!("transport = {{ cc = \"tfrc\" }}\nmedia = {table}"),
        )
    };
    let line = 25;
    assert_refused(
        &media("{ source = \"ibbp\", gop = 15, b_frames = 15 }"),
        line,
        &["media.b_frames", "GOP of 15"],
    );
    assert_refused(
        &media("{ source = \"generated\", b_frames = 2 }"),
        line,
        &["media.b_frames", "\"ibbp\" only"],
    );
    assert_refused(
        &media("{ source = \"ibbp\", base_rate = \"1mbit\" }"),
        line,
        &["media.base_rate", "\"fgs\" only"],
    );
    assert_refused(
        &media("{ source = \"generated\", rate = \"1mbit\" }"),
        line,
        &["media.rate", "\"ibbp\""],
    );
    assert_refused(
        &media("{ source = \"ibbp\", width = 352 }"),
        line,
        &["media.width"],
    );
    let ok = Scenario::from_str(
        &media("{ source = \"ibbp\", gop = 12, b_frames = 3, rate = \"500kbit\" }"),
        "ok.toml",
    )
    .unwrap();
    let source = &ok.flows()[0].media.as_ref().unwrap().source;
    assert!(matches!(
        source,
        MediaSourceConfig::Ibbp {
            gop: 12,
            b_frames: 3,
            ..
        }
    ));
}

#[test]
fn b_frame_video_over_a_lossy_tdd_uplink_counts_damage_by_reference() {
    let text = "[run]\nduration = \"30s\"\nseed = 5\n\
        [[node]]\nname = \"ss\"\n[[node]]\nname = \"bs\"\n\
        [[link]]\nbetween = [\"ss\", \"bs\"]\nrate = \"10.67mbit\"\ndelay = \"2us\"\n\
        tdd = { frame = \"10ms\" }\n\
        loss = { kind = \"gilbert-elliott\", p_good_good = 0.95, p_bad_bad = 0.94, loss_good = 0.01, loss_bad = 0.05 }\n\
        [[flow]]\nname = \"video\"\nfrom = \"ss\"\nto = \"bs\"\n\
        transport = { cc = \"tfrc\", packet_size = 912 }\n\
        media = { source = \"ibbp\", frames = 300, fps = 30, arq = \"off\", startup_delay = \"30s\" }\n";
    let summary = run(text);
    let Some(MediaOutcome::Report(report)) = &summary.flows[0].media else {
        panic!("a media report expected");
    };
    let (lost, damaged) = (report.playout.frames_lost, report.playout.frames_damaged);
    println!("lost {lost:?}, damaged {damaged:?}");
    assert!(lost.total() > 0, "Gilbert-Elliott loses some");
    assert!(lost.b > 0 && lost.p > 0);
    // A lost B damages only itself; a lost anchor damages more.
    assert!(damaged.i == lost.i && damaged.p >= lost.p && damaged.b > lost.b);
    assert!(report.playout.last_arrival_s.unwrap() > 0.0);
    // The same seed, the same run.
    assert_eq!(
        serde_json::to_string(&summary).unwrap(),
        serde_json::to_string(&run(text)).unwrap()
    );
}
