//! The experimental fixed-rate CCID 249 (`cc=fixed&rate=…`) over loopback
//! UDP: a file sent on demand arrives whole at the URL's rate.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fairstream_media::h264::access_unit_bytes;
use fairstream_net::recv::{OutputSpec, Receiver, RecvConfig};
use fairstream_net::send::{self, Mode, SendConfig, SourceSpec};
use fairstream_net::stats::StatsConfig;

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-net-fixed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// (time, RTP bytes received) of every periodic statistics line of the
/// receiver.
fn received_bytes_over_time(stats: &Path) -> Vec<(f64, f64)> {
    std::fs::read_to_string(stats)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|v| v["role"] == "recv")
        .map(|v| {
            (
                v["time_s"].as_f64().unwrap(),
                v["bytes_received"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_file_on_demand_leaves_at_the_fixed_rate_and_arrives_whole() {
    let Some(input) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    let output = temp_path("fixed.264");
    // The default listener accepts CCID 249 among the others.
    let mut recv = RecvConfig::new(
        "dccp://127.0.0.1:0".parse().unwrap(),
        OutputSpec::File(output.clone()),
    );
    recv.duration = Some(Duration::from_secs(60));
    let stats = temp_path("fixed-recv.jsonl");
    recv.stats = StatsConfig {
        interval: Some(Duration::from_millis(250)),
        human: false,
        json: Some(stats.clone()),
        ..StatsConfig::default()
    };
    let receiver = Receiver::bind(recv).unwrap();
    let to = SocketAddr::from(([127, 0, 0, 1], receiver.local_addr().port()));
    let handle = thread::spawn(move || receiver.run(&AtomicBool::new(false)).unwrap());

    let url = format!("dccp://{to}?cc=fixed&rate=2mbit").parse().unwrap();
    let mut config = SendConfig::new(SourceSpec::File(input.clone()), url);
    config.mode = Mode::OnDemand;
    config.duration = Some(Duration::from_secs(60));
    let sent = send::run(config, Arc::new(AtomicBool::new(false))).unwrap();
    let received = handle.join().unwrap();

    assert_eq!(sent.stopped_by, "end");
    assert_eq!(received.stopped_by, "closed");
    assert_eq!(received.packets_received, sent.packets_sent);
    assert_eq!(received.frames_damaged, 0);
    let units = |path: &Path| access_unit_bytes(&std::fs::read(path).unwrap()).unwrap();
    assert!(units(&output) == units(&input), "the access units differ");
    // The steady rate at the receiver: RTP bytes between the first
    // statistics line with data and the last one before the end (the
    // sender's own count runs ahead of the wire: it counts what enters its
    // queue). Each DCCP payload adds the session's 4-byte header to an RTP
    // packet (of 205 bytes on average in this file), so RTP bytes run
    // about 2 % below the paced rate.
    let total = received.bytes_received as f64;
    let series: Vec<(f64, f64)> = received_bytes_over_time(&stats)
        .into_iter()
        .filter(|(_, b)| *b > 0.0 && *b < total)
        .collect();
    let first = *series.first().unwrap();
    let last = *series.last().unwrap();
    assert!(last.0 - first.0 >= 2.0, "{series:?}");
    let rate = (last.1 - first.1) * 8.0 / (last.0 - first.0);
    eprintln!(
        "cc=fixed&rate=2mbit: {:.3} Mbit/s of RTP over {:.2} s; {} packets in {:.2} s",
        rate / 1e6,
        last.0 - first.0,
        sent.packets_sent,
        sent.elapsed_s
    );
    // Unpaced, loopback carries hundreds of Mbit/s: the upper bound is the
    // pacing. The lower bound only catches a sender far behind its rate.
    assert!(rate < 2e6 * 1.05, "{rate} bit/s");
    assert!(rate > 2e6 * 0.85, "{rate} bit/s");
}
