//! Packet-level FEC end to end: `fairstream send` with `fec=n,k` through
//! the in-process link emulator with Bernoulli loss, against the same run
//! without FEC. Each run is bounded (duration caps, peer timeouts).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // a real-time test measures with the real clock

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fairstream_media::h264::access_unit_bytes;
use fairstream_net::emulate::{parse_loss, DirectionConfig, Emulator, EmulatorConfig};
use fairstream_net::recv::{OutputSpec, Receiver, RecvConfig, RecvReport};
use fairstream_net::send::{self, Mode, SendConfig, SendReport, SourceSpec};
use fairstream_net::url::DccpUrl;
use fairstream_sim::link::Capacity;

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-fec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// What one run through a lossy emulated link gave.
struct Outcome {
    sent: SendReport,
    received: RecvReport,
    /// Access units of the source missing from the output.
    missing: usize,
    /// Access units of the source written byte for byte.
    identical: usize,
    total: usize,
}

/// Sends `input` on demand through the emulator with `loss` on the way to
/// the receiver (10 ms each way), with `query` in the sender's URL.
fn run(input: &Path, loss: &str, query: &str, name: &str) -> Outcome {
    run_in(Mode::OnDemand, None, input, loss, query, name)
}

/// [`run`] in `mode`, with the link's capacity limited to `rate`.
fn run_in(
    mode: Mode,
    rate: Option<&str>,
    input: &Path,
    loss: &str,
    query: &str,
    name: &str,
) -> Outcome {
    let output = temp_path(name);
    let mut config = RecvConfig::new(
        "dccp://127.0.0.1:0".parse().unwrap(),
        OutputSpec::File(output.clone()),
    );
    config.duration = Some(Duration::from_secs(60));
    let receiver = Receiver::bind(config).unwrap();
    let to = SocketAddr::from(([127, 0, 0, 1], receiver.local_addr().port()));
    let receiving = thread::spawn(move || receiver.run(&AtomicBool::new(false)).unwrap());
    let mut emulation = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), to);
    emulation.forward = DirectionConfig {
        capacity: rate.map(|r| Capacity::Fixed(r.parse().unwrap())),
        delay: Duration::from_millis(10),
        loss: parse_loss(loss).unwrap(),
        ..DirectionConfig::default()
    };
    emulation.backward = DirectionConfig {
        delay: Duration::from_millis(10),
        ..DirectionConfig::default()
    };
    let emulator = Emulator::bind(emulation).unwrap().spawn().unwrap();
    let url = format!("dccp://{}{query}", emulator.local_addr())
        .parse()
        .unwrap();
    let mut config = SendConfig::new(SourceSpec::File(input.to_path_buf()), url);
    config.mode = mode;
    config.fps = if mode == Mode::Live { 50.0 } else { 240.0 };
    config.startup_delay = Duration::from_millis(400);
    config.duration = Some(Duration::from_secs(60));
    let sent = send::run(config, Arc::new(AtomicBool::new(false))).unwrap();
    let received = receiving.join().unwrap();
    emulator.stop().unwrap();
    let original = access_unit_bytes(&std::fs::read(input).unwrap()).unwrap();
    let copy = access_unit_bytes(&std::fs::read(&output).unwrap()).unwrap();
    let written: HashSet<&Vec<Vec<u8>>> = copy.iter().collect();
    let identical = original.iter().filter(|au| written.contains(au)).count();
    Outcome {
        missing: original.len().saturating_sub(copy.len()),
        identical,
        total: original.len(),
        sent,
        received,
    }
}

#[test]
fn fec_turns_a_lossy_link_into_a_nearly_whole_stream() {
    let Some(input) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    // FEC alone: retransmission (on by default) would repair the rest.
    let plain = run(&input, "5%", "?arq=off", "plain.264");
    let fec = run(&input, "5%", "?fec=24,20&arq=off", "fec.264");
    for (name, o) in [("without FEC", &plain), ("fec=24,20", &fec)] {
        eprintln!(
            "{name}: {} access units, {} missing, {} byte-identical, {} damaged; {} packets sent, {} parity ({:.1} % of bytes); rebuilt {}, blocks recovered {}, unrecoverable {}",
            o.total,
            o.missing,
            o.identical,
            o.received.frames_damaged,
            o.sent.packets_sent,
            o.sent.fec_parity_sent,
            o.sent.fec_overhead.unwrap_or(0.0) * 100.0,
            o.received.fec.packets_rebuilt,
            o.received.fec.blocks_recovered,
            o.received.fec.blocks_unrecoverable,
        );
    }
    assert_eq!(plain.received.fec.packets_rebuilt, 0);
    assert_eq!(plain.sent.fec_parity_sent, 0);
    // 5 % loss damages many frames without FEC.
    assert!(plain.identical + 20 < plain.total, "{}", plain.identical);
    // RS(24, 20) repairs a block unless it lost more than 4 of 24 packets.
    assert!(fec.received.fec.packets_rebuilt > 0);
    assert_eq!((fec.received.fec.n, fec.received.fec.k), (24, 20));
    assert!(fec.sent.fec_parity_sent >= fec.sent.packets_sent / 20 * 4);
    // Parity packets are as long as their block's longest packet, so the
    // byte overhead exceeds the (n - k)/n = 17 % of packets.
    let overhead = fec.sent.fec_overhead.unwrap();
    assert!((0.15..0.4).contains(&overhead), "{overhead}");
    let lost_plain = plain.total - plain.identical;
    let lost_fec = fec.total - fec.identical;
    assert!(
        lost_fec * 4 <= lost_plain,
        "with FEC {lost_fec} access units differ, without {lost_plain}"
    );
    assert!(fec.missing <= plain.missing);
}

/// Live mode over a link too slow for the file: frames are dropped before
/// sending, and the blocks stay the packets actually sent, so every frame
/// the receiver finds complete (rebuilt packets included) is a frame of
/// the source, byte for byte.
#[test]
fn live_frame_drops_keep_the_blocks_consistent() {
    let Some(input) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    let o = run_in(
        Mode::Live,
        Some("1mbit"),
        &input,
        "5%",
        "?fec=12,10",
        "live.264",
    );
    eprintln!(
        "live: {} of {} frames late; {} written, {} complete, {} byte-identical; rebuilt {}, mismatches {}",
        o.sent.frames_late,
        o.sent.frames_read,
        o.received.frames_written,
        o.received.frames_complete,
        o.identical,
        o.received.fec.packets_rebuilt,
        o.received.fec.rebuild_mismatches,
    );
    assert!(o.sent.frames_late > 0, "no frame was dropped");
    assert!(o.received.fec.packets_rebuilt > 0);
    assert_eq!(o.received.fec.rebuild_mismatches, 0);
    assert!(o.identical as u64 >= o.received.frames_complete);
}

#[test]
fn bad_fec_values_are_refused_naming_the_key() {
    for value in ["20,20", "21,22", "0,0", "256,250", "24", "24,x", ""] {
        let text = format!("dccp://127.0.0.1:9000?fec={value}");
        let error = text.parse::<DccpUrl>().unwrap_err().to_string();
        assert!(
            error.contains("for `fec`") && error.contains("1 <= k < n <= 255"),
            "{text}: {error}"
        );
    }
}
