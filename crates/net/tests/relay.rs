//! The relay (paper 003's proxy) between two emulated links, in one
//! process over loopback:
//!
//! ```text
//! send ─▶ emulator A (10 Mbit/s, 20 ms) ─▶ relay ─▶ emulator B (1 Mbit/s, 30 ms, 1 % loss) ─▶ recv
//! ```
//!
//! The sender streams over TFRC faster than the downstream side carries:
//! the proxy buffer grows, then drains once the sender closed. Downstream
//! runs either paper 003's dedicated bearer (the fixed-rate CCID at
//! 800 kbit/s, below the link's rate and below the clip's 1.2 Mbit/s sent
//! live at 50 frames/s) or TFRC (the clip sent on demand). Every part is
//! bounded in time.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // a real-time test measures with the real clock

mod support;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use fairstream_net::recv::OutputSpec;
use fairstream_net::relay::{Relay, RelayConfig};
use fairstream_net::send::{self, Mode, SendConfig, SourceSpec};
use fairstream_sim::loss::LossConfig;

use support::{access_units, emulate, ffmpeg_frames, json_lines, start_receiver, stats, temp_path};

/// The cases run one at a time: each measures real time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn relay_to_a_fixed_rate_bearer_delivers_every_frame_and_shows_its_buffer() {
    relay_between_two_emulated_links(Mode::Live, "?cc=fixed&rate=800kbit", "fixed");
}

#[test]
fn relay_between_two_emulated_links_delivers_the_stream_and_shows_its_buffer() {
    relay_between_two_emulated_links(Mode::OnDemand, "", "tfrc");
}

/// Sends a clip (live at 50 frames/s, or on demand) through emulator A,
/// the relay (downstream URL options `query`) and emulator B, and checks
/// what each part saw.
fn relay_between_two_emulated_links(mode: Mode, query: &str, name: &str) {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(input) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    let frames = access_units(&input) as u64;
    let output = temp_path(&format!("relayed-{name}.264"));
    let relay_json = temp_path(&format!("relay-{name}.jsonl"));
    let (receiver_addr, receiver) = start_receiver(
        OutputSpec::File(output.clone()),
        Duration::from_secs(90),
        None,
    );
    let downstream = emulate(
        receiver_addr,
        "1mbit",
        Duration::from_millis(30),
        LossConfig::Bernoulli { p: 0.01 },
    );
    let mut config = RelayConfig::new(
        "dccp://127.0.0.1:0".parse().unwrap(),
        format!("dccp://{}{query}", downstream.local_addr())
            .parse()
            .unwrap(),
    );
    config.duration = Some(Duration::from_secs(90));
    config.stats = stats(Duration::from_millis(250), Some(relay_json.clone()));
    let relay = Relay::bind(config).unwrap();
    let relay_addr = relay.local_addr();
    let relaying = thread::spawn(move || relay.run(&AtomicBool::new(false)).unwrap());
    let upstream = emulate(
        relay_addr,
        "10mbit",
        Duration::from_millis(20),
        LossConfig::None,
    );
    let started = Instant::now();
    let url = format!("dccp://{}", upstream.local_addr()).parse().unwrap();
    let mut send_config = SendConfig::new(SourceSpec::File(input.clone()), url);
    send_config.mode = mode;
    send_config.fps = 50.0;
    send_config.duration = Some(Duration::from_secs(60));
    send_config.stats.interval = None;
    let sent = send::run(send_config, Arc::new(AtomicBool::new(false))).unwrap();
    let sender_done = started.elapsed();
    let relayed = relaying.join().unwrap();
    let relay_done = started.elapsed();
    let received = receiver.join().unwrap();
    let down_stats = downstream.stop().unwrap();
    upstream.stop().unwrap();

    let lines = json_lines(&relay_json);
    let periodic: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l.get("time_s").is_some()).collect();
    let occupancy: Vec<u64> = periodic
        .iter()
        .map(|l| l["buffer"]["bytes"].as_u64().unwrap())
        .collect();
    let peak = occupancy.iter().copied().max().unwrap_or(0);
    let buffer = relayed.buffer;
    eprintln!(
        "{mode:?}, downstream {query:?}: {frames} frames, {} bytes: sender done in {:.2} s ({:.2} Mbit/s), relay done in {:.2} s; \
         proxy buffer max {} bytes / {} frames / {} NAL units, peak in the stats {peak} bytes; \
         downstream {:.2} Mbit/s over {} conns, {} channel losses, {} queue drops; \
         received {} frames ({} damaged), stopped by {}; upstream {} frames ({} damaged), \
         {} bytes",
        sent.bytes_sent,
        sender_done.as_secs_f64(),
        sent.bytes_sent as f64 * 8.0 / sent.elapsed_s / 1e6,
        relay_done.as_secs_f64(),
        buffer.max_bytes,
        buffer.max_frames,
        buffer.max_packets,
        relayed.downstream.bytes_sent as f64 * 8.0 / relayed.downstream.elapsed_s / 1e6,
        relayed.downstream.connections_max,
        down_stats.forward.channel_losses,
        down_stats.forward.queue_drops,
        received.frames_written,
        received.frames_damaged,
        received.stopped_by,
        relayed.upstream.frames_written,
        relayed.upstream.frames_damaged,
        relayed.upstream.bytes_received,
    );
    eprintln!("buffer bytes every 250 ms: {occupancy:?}");

    // The stream went through: TFRC's slow start may overflow the wired
    // link's queue (frames damaged, rarely one lost whole), and what
    // arrived crossed the relay without a drop.
    let up = &relayed.upstream;
    assert_eq!(sent.frames_sent, frames);
    assert!(up.frames_written + 3 >= frames, "{up:?}");
    assert_eq!(up.stopped_by, "closed");
    assert_eq!(buffer.frames_in, up.frames_written);
    assert_eq!(buffer.frames_out, up.frames_written);
    assert_eq!(buffer.frames_dropped.i + buffer.frames_dropped.p, 0);
    assert_eq!(relayed.downstream.frames_sent, up.frames_written);
    assert_eq!(relayed.downstream.stopped_by, "end");
    assert!(relayed.downstream.closed_cleanly);
    // Drained before closing.
    assert_eq!(buffer.bytes, 0);
    // The downstream bearer is the bottleneck: the buffer held a good part
    // of the stream, and the stats lines saw it grow and drain.
    assert!(
        buffer.max_bytes > sent.bytes_sent / 4,
        "buffer max {} of {}",
        buffer.max_bytes,
        sent.bytes_sent
    );
    assert!(peak > sent.bytes_sent / 4, "{occupancy:?}");
    assert_eq!(occupancy.last().copied(), Some(0), "{occupancy:?}");
    assert!(relay_done > sender_done + Duration::from_secs(2));
    // Both sides' connections appear in the statistics.
    assert!(periodic.iter().any(|l| l["upstream_conns"]
        .as_array()
        .is_some_and(|c| !c.is_empty())));
    assert!(periodic.iter().any(|l| l["downstream_conns"]
        .as_array()
        .is_some_and(|c| !c.is_empty())));
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["buffer"]["max_bytes"], buffer.max_bytes);
    // At the client: the frames (a frame has 14 slices: the hop's losses
    // damage frames, and a burst of queue drops may take a whole one),
    // each decoded, what is missing concealed.
    assert_eq!(received.stopped_by, "closed");
    assert!(received.frames_written + 3 >= frames, "{received:?}");
    if name == "fixed" {
        // The bearer's rate, below the link's: no queue drops, every
        // frame arrives (damaged where the channel lost a slice), and the
        // relay sends at the rate (RTP bytes a little below the DCCP ones).
        assert_eq!(down_stats.forward.queue_drops, 0);
        assert_eq!(received.frames_written, up.frames_written);
        let rate = relayed.downstream.bytes_sent as f64 * 8.0 / relayed.downstream.elapsed_s;
        assert!((600e3..=800e3).contains(&rate), "{rate}");
    }
    if let Some(ffmpeg) = fairstream_testkit::tool("ffmpeg") {
        let decoded = ffmpeg_frames(&ffmpeg, &output) as u64;
        eprintln!("ffmpeg decoded {decoded} frames");
        if name == "fixed" {
            assert_eq!(decoded, received.frames_written);
        } else {
            // TFRC loses a third of the bytes upstream and more in the
            // hop's queue: a frame may keep too little to give a picture.
            assert!(decoded + 3 >= received.frames_written, "{decoded}");
        }
    }
}
