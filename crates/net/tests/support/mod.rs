//! Pieces shared by the end-to-end tests that stream through in-process
//! emulators: receivers on threads, emulated links, ffmpeg.

#![allow(dead_code)] // each test file uses its own part

pub(crate) mod blackhole;
pub(crate) mod blink;
pub(crate) mod tap;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fairstream_net::emulate::{DirectionConfig, Emulator, EmulatorConfig, EmulatorHandle};
use fairstream_net::recv::{OutputSpec, Receiver, RecvConfig, RecvReport};
use fairstream_net::send::{Mode, SendConfig, SourceSpec};
use fairstream_net::stats::StatsConfig;
use fairstream_sim::link::Capacity;
use fairstream_sim::loss::LossConfig;

/// A file in this test run's temporary directory.
pub(crate) fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Statistics every `interval`, as JSON lines to `json`, none on stderr.
pub(crate) fn stats(interval: Duration, json: Option<PathBuf>) -> StatsConfig {
    StatsConfig {
        interval: Some(interval),
        human: false,
        json,
        ..StatsConfig::default()
    }
}

/// A receiver on a thread writing to `output`; its address on loopback
/// and its result.
pub(crate) fn start_receiver(
    output: OutputSpec,
    duration: Duration,
    stats_json: Option<PathBuf>,
) -> (SocketAddr, thread::JoinHandle<RecvReport>) {
    let (to, receiver) = bind_receiver("", output, duration, stats_json);
    let stop = Arc::new(AtomicBool::new(false));
    let handle = thread::spawn(move || receiver.run(&stop).unwrap());
    (to, handle)
}

/// A receiver bound on loopback with `query` on its listening URL
/// (`?arq=off`), writing to `output`, for `duration` at most, with
/// statistics every 500 ms; its address.
pub(crate) fn bind_receiver(
    query: &str,
    output: OutputSpec,
    duration: Duration,
    stats_json: Option<PathBuf>,
) -> (SocketAddr, Receiver) {
    let url = format!("dccp://127.0.0.1:0{query}");
    let mut config = RecvConfig::new(url.parse().unwrap(), output);
    config.duration = Some(duration);
    config.stats = stats(Duration::from_millis(500), stats_json);
    let receiver = Receiver::bind(config).unwrap();
    let port = receiver.local_addr().port();
    (SocketAddr::from(([127, 0, 0, 1], port)), receiver)
}

/// An emulated link in front of `to`: `rate`, `delay` each way, `loss`
/// forward only (feedback is neither throttled nor lost).
pub(crate) fn emulate(
    to: SocketAddr,
    rate: &str,
    delay: Duration,
    loss: LossConfig,
) -> EmulatorHandle {
    let mut config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), to);
    config.forward = DirectionConfig {
        capacity: Some(Capacity::Fixed(rate.parse().unwrap())),
        delay,
        loss,
        ..DirectionConfig::default()
    };
    config.backward.delay = delay;
    Emulator::bind(config).unwrap().spawn().unwrap()
}

/// Frames ffmpeg decodes from `path` (its default error concealment; it
/// outputs no picture for a frame missing whole).
pub(crate) fn ffmpeg_frames(ffmpeg: &Path, path: &Path) -> usize {
    let out = Command::new(ffmpeg)
        .args(["-v", "error", "-err_detect", "ignore_err", "-i"])
        .arg(path)
        .args(["-f", "framecrc", "-"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count()
}

/// The access units of an Annex B file.
pub(crate) fn access_units(path: &Path) -> usize {
    fairstream_media::h264::access_unit_bytes(&std::fs::read(path).unwrap())
        .unwrap()
        .len()
}

/// The JSON lines of a statistics file.
pub(crate) fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Generated video (176×144, an IDR every 25 frames, 200 kbit/s to start
/// with), live, to `url` for `seconds`, without statistics lines.
pub(crate) fn generated_live(url: &str, seconds: u64) -> SendConfig {
    let mut config = SendConfig::new(
        SourceSpec::Generated {
            width: 176,
            height: 144,
            gop: 25,
            initial_bitrate_bps: 200_000,
        },
        url.parse().unwrap(),
    );
    config.mode = Mode::Live;
    config.duration = Some(Duration::from_secs(seconds));
    config.stats.interval = None;
    config
}

/// At least 95 % of the frames sent were written.
pub(crate) fn assert_nearly_every_frame(written: u64, sent: u64) {
    assert!(
        written * 100 >= sent * 95,
        "{written} of {sent} frames written"
    );
}
