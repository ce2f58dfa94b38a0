//! `cc = "buffer"` flows (paper 004, issue 15): the receiver-buffer
//! controller of `fairstream-proto` carrying layered video across the
//! simulated network, with its reports going back as RTCP APP packets.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use fairstream_sim::runner::{BufferOutcome, FlowSummary, Simulation, Summary};
use fairstream_sim::scenario::Scenario;

/// One 250 kbit/s FGS video (100 kbit/s base) from a to b over a link of
/// `rate` with a 20-packet drop-tail queue, in `mode`, for `duration`;
/// `extra` is appended (more flows).
fn scenario(rate: &str, mode: &str, duration: &str, extra: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
seed = 3
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "{rate}"
delay = "20ms"
queue = {{ kind = "droptail", packets = 20 }}
[[flow]]
name = "video"
from = "a"
to = "b"
transport = {{ cc = "buffer", mode = "{mode}", packet_size = 1000 }}
media = {{ source = "fgs", rate = "250kbit", base_rate = "100kbit" }}
{extra}
"#
    )
}

const TCP: &str = r#"
[[flow]]
name = "tcp"
from = "a"
to = "b"
transport = { cc = "tcp-newreno", mss = 1000, min_rto = "200ms" }
"#;

fn run(text: &str) -> Summary {
    let scenario = Scenario::from_str(text, "buffer.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut simulation = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let summary = simulation.run();
    assert!(summary.conservation_ok);
    summary
}

fn buffer(flow: &FlowSummary) -> &BufferOutcome {
    flow.buffer
        .as_ref()
        .expect("a buffer flow reports its controller")
}

#[test]
fn on_a_wide_path_the_whole_video_arrives_with_the_preroll_held() {
    let summary = run(&scenario("1mbit", "paper", "30s", ""));
    let video = &summary.flows[0];
    let b = buffer(video);
    assert_eq!(b.mode, "paper");
    assert_eq!(video.cc, "buffer");
    // 30 one-second windows, nothing shed, no congestion, no losses.
    assert_eq!(b.windows, 30);
    assert!(b.enhancement_share.unwrap() > 0.99, "{b:?}");
    assert_eq!(
        (b.congestion_feedbacks, b.underruns, b.lost_packets),
        (0, 0, 0)
    );
    assert!(b.stopped.is_none());
    // Reports flow back: one a T_fb = 1 s while the buffer is full, all of
    // them taken by the sender.
    assert!(b.feedbacks_sent >= 25, "{b:?}");
    assert_eq!(b.feedbacks_sent, b.feedbacks_received);
    let occupancy = b.occupancy_mean_s.unwrap();
    assert!((1.9..=2.3).contains(&occupancy), "{occupancy}");
    // The video's rate, plus RTP and layer headers (28 bytes a packet).
    let rate = video.rate_1s.unwrap();
    assert!((250e3..275e3).contains(&rate.mean_bps), "{}", rate.mean_bps);
    assert!(rate.sd_bps < 0.05 * rate.mean_bps, "smooth: {rate:?}");
}

#[test]
fn a_narrow_path_sheds_enhancement_and_keeps_the_base_layer() {
    // 200 kbit/s against a 250 kbit/s video: losses cost frames, the
    // buffer falls to T_loss, and the sender thins the enhancement layer.
    let summary = run(&scenario("200kbit", "paper", "60s", ""));
    let b = buffer(&summary.flows[0]);
    assert!(b.congestion_feedbacks > 0, "{b:?}");
    let share = b.enhancement_share.unwrap();
    assert!(share < 0.97, "{b:?}");
    assert!(b.stopped.is_none(), "the base layer fits: {b:?}");
    assert!(b.base_only_windows < b.windows);
}

#[test]
fn the_tfrc_capped_mode_leaves_tcp_its_share_where_the_paper_s_scheme_does_not() {
    // A 1 Mbit/s video (300 kbit/s base) and one NewReno transfer on a
    // 1 Mbit/s link: the paper's scheme keeps sending what the buffer
    // allows; capped by TFRC the video takes no more than a TCP-friendly
    // rate.
    let one_mbit = |mode: &str| {
        scenario("1mbit", mode, "60s", TCP).replace(
            r#"rate = "250kbit", base_rate = "100kbit""#,
            r#"rate = "1mbit", base_rate = "300kbit""#,
        )
    };
    let paper = run(&one_mbit("paper"));
    let capped = run(&one_mbit("tfrc-capped"));
    let tcp = |s: &Summary| s.flows[1].goodput_bps;
    let video = |s: &Summary| s.flows[0].goodput_bps;
    assert!(
        tcp(&capped) > 2.0 * tcp(&paper),
        "TCP {} kbit/s against the paper's scheme, {} against the capped one",
        tcp(&paper) / 1e3,
        tcp(&capped) / 1e3
    );
    assert!(video(&capped) < video(&paper));
    let b = buffer(&capped.flows[0]);
    assert_eq!(b.mode, "tfrc-capped");
    assert!(b.capped_windows > 0, "{b:?}");
    assert!(b.stopped.is_none(), "{b:?}");
}

#[test]
fn a_path_below_the_base_layer_cuts_the_stream_off_with_the_reason() {
    // 60 kbit/s under a 100 kbit/s base layer, TFRC-capped: the cap stays
    // below the base layer's rate and the stream is cut off, with the
    // reason.
    let summary = run(&scenario("60kbit", "tfrc-capped", "60s", ""));
    let b = buffer(&summary.flows[0]);
    let reason = b.stopped.as_deref().expect("cut off");
    assert!(reason.contains("base layer"), "{reason}");
}

#[test]
fn the_same_seed_gives_the_same_run_and_the_series_show_the_buffer() {
    let text = scenario("200kbit", "paper", "20s", TCP);
    let a = serde_json::to_string(&run(&text)).unwrap();
    let b = serde_json::to_string(&run(&text)).unwrap();
    assert_eq!(a, b);
    let scenario = Scenario::from_str(&text, "buffer.toml").unwrap();
    let mut simulation = Simulation::new(&scenario).unwrap();
    simulation.run();
    let series = simulation.series();
    let video = &series.flows[0];
    let last = video.rows.last().unwrap();
    assert!(last.buffer_s.is_some_and(|s| s > 0.0), "{last:?}");
    assert!(last
        .enhancement_share
        .is_some_and(|s| (0.0..=1.0).contains(&s)));
    let tcp = &series.flows[1];
    assert!(tcp.rows.iter().all(|r| r.buffer_s.is_none()));
}

#[test]
fn layered_sources_are_refused_where_they_do_not_belong_and_required_where_they_do() {
    let refused = |text: &str, words: &[&str]| {
        let error = Scenario::from_str(text, "buffer.toml")
            .expect_err("refused")
            .to_string();
        for word in words {
            assert!(error.contains(word), "{error} lacks {word}");
        }
    };
    let base = scenario("1mbit", "paper", "10s", "");
    refused(
        &base.replace("mode = \"paper\"", "mode = \"fast\""),
        &["unknown buffer-control mode `fast`", "tfrc-capped"],
    );
    refused(
        &base.replace(
            "media = { source = \"fgs\", rate = \"250kbit\", base_rate = \"100kbit\" }",
            "",
        ),
        &["needs a layered video"],
    );
    refused(
        &base.replace(
            "source = \"fgs\", rate = \"250kbit\", base_rate = \"100kbit\"",
            "source = \"generated\"",
        ),
        &["must be layered"],
    );
    refused(
        &base.replace(
            "base_rate = \"100kbit\"",
            "base_rate = \"100kbit\", fec = { n = 5, k = 4 }",
        ),
        &["`fec`", "pre-roll"],
    );
    refused(
        &base.replace("base_rate = \"100kbit\"", "base_rate = \"300kbit\""),
        &["below its base layer"],
    );
    refused(
        &base.replace(
            "packet_size = 1000 }",
            "packet_size = 1000, preroll = \"1s\" }",
        ),
        &["flow[0].transport"],
    );
    // A whole FGS video over TFRC is an ordinary media flow: every byte of
    // its 250 kbit/s goes, in as many packets as each frame needs.
    let tfrc = base.replace("cc = \"buffer\", mode = \"paper\",", "cc = \"tfrc\",");
    let summary = run(&tfrc);
    let video = &summary.flows[0];
    assert!(video.buffer.is_none());
    assert!(video.media.is_some());
    assert!(
        (245e3..275e3).contains(&video.goodput_bps),
        "{}",
        video.goodput_bps
    );
}
