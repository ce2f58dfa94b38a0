//! Sender and receiver on threads of one process, over loopback UDP.
//! Every run is bounded: the receiver has a duration cap and a peer
//! timeout, the sender a duration cap.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // a real-time test measures with the real clock

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use fairstream_media::h264::{access_unit_bytes, parse_stream};
use fairstream_net::recv::{OutputSpec, Receiver, RecvConfig, RecvReport};
use fairstream_net::send::{self, Mode, SendConfig, SendError, SendReport, SourceSpec};
use fairstream_net::stats::StatsConfig;

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The NAL units of each access unit of an Annex B stream.
fn access_units(bytes: &[u8]) -> Vec<Vec<Vec<u8>>> {
    access_unit_bytes(bytes).unwrap()
}

/// Frames ffmpeg decodes from `path`.
fn ffmpeg_frames(ffmpeg: &Path, path: &Path) -> usize {
    let out = Command::new(ffmpeg)
        .args(["-v", "error", "-i"])
        .arg(path)
        .args(["-f", "framecrc", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count()
}

fn recv_config(output: OutputSpec, stats_json: Option<PathBuf>) -> RecvConfig {
    let mut config = RecvConfig::new("dccp://127.0.0.1:0".parse().unwrap(), output);
    config.duration = Some(Duration::from_secs(60));
    config.stats = StatsConfig {
        interval: Some(Duration::from_millis(250)),
        human: false,
        json: stats_json,
        ..StatsConfig::default()
    };
    config
}

/// Starts a receiver on a thread; returns its address and its result.
fn start_receiver(
    config: RecvConfig,
) -> (SocketAddr, thread::JoinHandle<RecvReport>, Arc<AtomicBool>) {
    let receiver = Receiver::bind(config).unwrap();
    let port = receiver.local_addr().port();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = thread::spawn(move || receiver.run(&flag).unwrap());
    (SocketAddr::from(([127, 0, 0, 1], port)), handle, stop)
}

fn send_file(path: &Path, to: SocketAddr, query: &str, stats_json: Option<PathBuf>) -> SendReport {
    send_file_in(Mode::OnDemand, path, to, query, stats_json)
}

fn send_file_in(
    mode: Mode,
    path: &Path,
    to: SocketAddr,
    query: &str,
    stats_json: Option<PathBuf>,
) -> SendReport {
    let url = format!("dccp://{to}{query}").parse().unwrap();
    let mut config = SendConfig::new(SourceSpec::File(path.to_path_buf()), url);
    config.mode = mode;
    config.fps = 240.0;
    config.duration = Some(Duration::from_secs(60));
    config.stats = StatsConfig {
        interval: Some(Duration::from_millis(250)),
        human: false,
        json: stats_json,
        ..StatsConfig::default()
    };
    send::run(config, Arc::new(AtomicBool::new(false))).unwrap()
}

#[test]
fn an_h264_file_arrives_whole_and_decodes_to_every_frame() {
    let Some(input) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    let output = temp_path("on-demand.264");
    let (to, receiver, _) = start_receiver(recv_config(OutputSpec::File(output.clone()), None));
    let started = Instant::now();
    let sent = send_file(&input, to, "", None);
    let received = receiver.join().unwrap();
    let elapsed = started.elapsed();
    let original = std::fs::read(&input).unwrap();
    let copy = std::fs::read(&output).unwrap();
    let expected = access_units(&original);
    eprintln!(
        "{} frames, {} packets, {} bytes in {:.3} s ({:.1} Mbit/s of RTP); receiver stopped by {}",
        received.frames_written,
        received.packets_received,
        received.bytes_received,
        sent.elapsed_s,
        sent.bytes_sent as f64 * 8.0 / sent.elapsed_s / 1e6,
        received.stopped_by
    );
    assert_eq!(sent.frames_sent, expected.len() as u64);
    assert_eq!(received.stopped_by, "closed");
    assert_eq!(received.packets_received, sent.packets_sent);
    assert_eq!(received.frames_written, expected.len() as u64);
    assert_eq!(received.frames_damaged, 0);
    assert!(access_units(&copy) == expected, "the access units differ");
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    if let Some(ffmpeg) = fairstream_testkit::tool("ffmpeg") {
        assert_eq!(ffmpeg_frames(&ffmpeg, &output), expected.len());
    }
}

#[test]
fn several_connections_carry_the_stream_in_order() {
    let Some(input) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    let output = temp_path("three-conns.264");
    let (to, receiver, _) = start_receiver(recv_config(OutputSpec::File(output.clone()), None));
    // Live at 240 frames a second: 1.25 s, time for all three to open.
    let sent = send_file_in(
        Mode::Live,
        &input,
        to,
        "?conns=3&policy=gop-interleave&start_offset=0.05s",
        None,
    );
    let received = receiver.join().unwrap();
    eprintln!("{sent:?}\n{received:?}");
    assert_eq!(received.stopped_by, "closed");
    assert_eq!(sent.connections_max, 3);
    assert_eq!(received.connections_max, 3);
    assert_eq!(received.frames_written, 300);
    let original = std::fs::read(&input).unwrap();
    assert!(access_units(&std::fs::read(&output).unwrap()) == access_units(&original));
}

#[test]
fn the_json_statistics_match_what_was_written() {
    let Some(input) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
        return;
    };
    let output = temp_path("stats.264");
    let recv_json = temp_path("recv.jsonl");
    let send_json = temp_path("send.jsonl");
    let (to, receiver, _) = start_receiver(recv_config(
        OutputSpec::File(output.clone()),
        Some(recv_json.clone()),
    ));
    let sent = send_file(&input, to, "", Some(send_json.clone()));
    let received = receiver.join().unwrap();
    let last = |path: &Path| -> serde_json::Value {
        let text = std::fs::read_to_string(path).unwrap();
        let line = text.lines().last().unwrap().to_owned();
        serde_json::from_str(&line).unwrap()
    };
    let recv_summary = last(&recv_json);
    let send_summary = last(&send_json);
    let written = std::fs::read(&output).unwrap();
    let r = &recv_summary["summary"];
    let s = &send_summary["summary"];
    assert_eq!(r["bytes_written"], written.len() as u64);
    assert_eq!(
        r["frames_written"],
        access_units(&written).len() as u64,
        "{r}"
    );
    assert_eq!(r["frames_written"], received.frames_written);
    assert_eq!(s["packets_sent"], sent.packets_sent);
    assert_eq!(s["bytes_sent"], r["bytes_received"]);
    assert_eq!(s["frames_sent"], r["frames_written"]);
    assert_eq!(r["frames_lost"]["unknown"], 0);
    // Every line is JSON with a time, except the summary.
    let text = std::fs::read_to_string(&recv_json).unwrap();
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(value.get("time_s").is_some() || value.get("summary").is_some());
    }
}

#[test]
fn a_silent_peer_fails_the_handshake_in_time() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = silent.local_addr().unwrap();
    let url = format!("dccp://{to}").parse().unwrap();
    let mut config = SendConfig::new(
        SourceSpec::Generated {
            width: 64,
            height: 64,
            gop: 10,
            initial_bitrate_bps: 100_000,
        },
        url,
    );
    config.handshake_timeout = Duration::from_millis(800);
    config.stats.interval = None;
    let started = Instant::now();
    let error = send::run(config, Arc::new(AtomicBool::new(false))).unwrap_err();
    let elapsed = started.elapsed();
    eprintln!("{error} after {elapsed:?}");
    assert!(
        matches!(error, SendError::HandshakeTimeout { .. }),
        "{error}"
    );
    assert!(error
        .to_string()
        .contains(&format!("handshake with {to} timed out after 0.8 s")));
    assert!(elapsed >= Duration::from_millis(800) && elapsed < Duration::from_secs(3));
}

#[test]
fn live_generated_video_follows_the_clock_and_stops_on_the_flag() {
    let output = temp_path("live.264");
    let (to, receiver, _) = start_receiver(recv_config(OutputSpec::File(output.clone()), None));
    let url = format!("dccp://{to}?cc=tfrc").parse().unwrap();
    let mut config = SendConfig::new(
        SourceSpec::Generated {
            width: 176,
            height: 144,
            gop: 25,
            initial_bitrate_bps: 300_000,
        },
        url,
    );
    config.stats.interval = None;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let stopper = thread::spawn(move || {
        thread::sleep(Duration::from_secs(2));
        flag.store(true, Ordering::Relaxed);
    });
    let sent = send::run(config, stop).unwrap();
    stopper.join().unwrap();
    let received = receiver.join().unwrap();
    eprintln!("{sent:?}\n{received:?}");
    assert_eq!(sent.stopped_by, "signal");
    assert!(sent.closed_cleanly);
    // About 25 frames a second for 2 s.
    assert!(
        (40..=60).contains(&sent.frames_sent),
        "{}",
        sent.frames_sent
    );
    assert!(sent.encoder_bitrate_bps.is_some());
    assert_eq!(received.stopped_by, "closed");
    assert_eq!(received.frames_written, sent.frames_sent);
}

/// A relay that delays every datagram by `delay` in both directions.
fn delaying_relay(
    receiver: SocketAddr,
    delay: Duration,
    stop: Arc<AtomicBool>,
) -> (SocketAddr, thread::JoinHandle<()>) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = socket.local_addr().unwrap();
    socket
        .set_read_timeout(Some(Duration::from_micros(500)))
        .unwrap();
    let handle = thread::spawn(move || {
        let mut sender: Option<SocketAddr> = None;
        let mut queue: std::collections::VecDeque<(Instant, SocketAddr, Vec<u8>)> =
            std::collections::VecDeque::new();
        let mut buf = vec![0u8; 65_536];
        while !stop.load(Ordering::Relaxed) {
            while queue
                .front()
                .is_some_and(|(due, _, _)| *due <= Instant::now())
            {
                let (_, to, bytes) = queue.pop_front().unwrap();
                let _ = socket.send_to(&bytes, to);
            }
            let Ok((len, from)) = socket.recv_from(&mut buf) else {
                continue;
            };
            let to = if from == receiver {
                match sender {
                    Some(s) => s,
                    None => continue,
                }
            } else {
                sender = Some(from);
                receiver
            };
            queue.push_back((Instant::now() + delay, to, buf[..len].to_vec()));
        }
    });
    (addr, handle)
}

#[test]
fn live_frames_that_cannot_arrive_in_time_are_dropped_i_frames_last() {
    let Some(input) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
        return;
    };
    let output = temp_path("late.264");
    let (to, receiver, _) = start_receiver(recv_config(OutputSpec::File(output.clone()), None));
    let stop = Arc::new(AtomicBool::new(false));
    // 150 ms each way; frames must arrive within 100 ms of their release:
    // once the RTT is known, every P frame is late, no I frame is.
    let (relay, relaying) = delaying_relay(to, Duration::from_millis(150), Arc::clone(&stop));
    let url = format!("dccp://{relay}").parse().unwrap();
    let mut config = SendConfig::new(SourceSpec::File(input.clone()), url);
    config.fps = 50.0;
    config.startup_delay = Duration::from_millis(100);
    config.stats.interval = None;
    let sent = send::run(config, Arc::new(AtomicBool::new(false))).unwrap();
    let received = receiver.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    relaying.join().unwrap();
    eprintln!("{sent:?}\n{received:?}");
    let report = parse_stream(&std::fs::read(&input).unwrap()).unwrap();
    let intra = report
        .access_units
        .iter()
        .filter(|au| au.frame_type == Some(fairstream_media::h264::FrameType::I))
        .count() as u64;
    assert!(sent.frames_late > 0);
    assert_eq!(sent.frames_sent + sent.frames_late, 100);
    // Every I frame went out; what was dropped was P frames.
    assert!(sent.frames_sent >= intra, "{} < {intra}", sent.frames_sent);
    let written = parse_stream(&std::fs::read(&output).unwrap()).unwrap();
    let written_intra = written
        .access_units
        .iter()
        .filter(|au| au.frame_type == Some(fairstream_media::h264::FrameType::I))
        .count() as u64;
    assert_eq!(written_intra, intra);
    assert_eq!(received.frames_written, sent.frames_sent);
    // Frames dropped whole by the sender leave no RTP sequence gap: what
    // arrived is complete.
    assert_eq!(received.packets_missing, 0);
    assert_eq!(received.frames_damaged, 0);
}
