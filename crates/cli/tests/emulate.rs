//! `fairstream emulate`, run as a user runs it: the built binary, over
//! loopback. Every run is bounded (`--duration`, or killed by the test).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness
// The round trip through the binary is timed with the real clock.
#![allow(clippy::disallowed_methods)]

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

fn fairstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fairstream"))
}

/// Runs `fairstream emulate ARGS` to completion.
fn emulate(args: &[&str]) -> Output {
    fairstream()
        .arg("emulate")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the fairstream binary runs")
}

/// Expects `fairstream emulate ARGS` to fail at once; returns its stderr.
fn failure(args: &[&str]) -> String {
    let output = emulate(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Waits for `child` at most `limit`, killing it (and failing) after.
fn wait_at_most(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("fairstream emulate still ran after {limit:?}");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn temp_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-emulate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The JSON lines of `path`, which is then removed.
fn json_lines(path: &PathBuf) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::remove_file(path).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
        .collect()
}

const BASE: [&str; 4] = ["--listen", "127.0.0.1:0", "--to", "127.0.0.1:9"];

fn with_base<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    BASE.iter().copied().chain(extra.iter().copied()).collect()
}

#[test]
fn bad_options_are_named_with_their_values() {
    for (extra, names) in [
        (&["--loss", "2x"][..], &["--loss", "2x"][..]),
        (&["--rate", "fast"], &["--rate", "fast"]),
        (&["--rate", "2"], &["--rate", "no unit"]),
        (&["--delay", "soon"], &["--delay", "soon"]),
        (&["--bogus", "1"], &["--bogus"]),
        (
            &["--rate", "2mbit", "--queue", "0"],
            &["--queue", "at least 1"],
        ),
        (&["--queue", "50"], &["--queue", "--rate"]),
        (&["--back-queue", "50"], &["--back-queue", "--back-rate"]),
        (&["--loss", "ge:0.9,0.9,0.1"], &["--loss", "ge:0.9,0.9,0.1"]),
        (&["--back-loss", "150%"], &["--back-loss", "150%"]),
        (&["--duration", "0s"], &["--duration", "0s"]),
        (&["--max-clients", "0"], &["--max-clients", "0"]),
        (
            &["--client-idle", "0.5s"],
            &["--client-idle", "0.5s", "at least 1 s"],
        ),
        (
            &["--trace-forward", "/nonexistent/trace.up"],
            &["--trace-forward", "/nonexistent/trace.up"],
        ),
        (
            &["--rate", "1mbit", "--trace-forward", "x"],
            &["--rate", "--trace-forward"],
        ),
    ] {
        let stderr = failure(&with_base(extra));
        for name in names {
            assert!(stderr.contains(name), "{extra:?}: {name} not in {stderr}");
        }
    }
    let stderr = failure(&["--listen", "nowhere", "--to", "127.0.0.1:9"]);
    assert!(
        stderr.contains("--listen") && stderr.contains("nowhere"),
        "{stderr}"
    );
    // The listening address is taken: the error names it.
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let stderr = failure(&["--listen", &address, "--to", "127.0.0.1:9"]);
    assert!(stderr.contains(&address), "{stderr}");
}

#[test]
fn help_documents_the_backward_direction() {
    let output = fairstream().args(["emulate", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    for option in [
        "--back-rate",
        "--back-delay",
        "--back-queue",
        "--back-loss",
        "--trace-back",
    ] {
        assert!(help.contains(option), "{option} missing from:\n{help}");
    }
    assert!(help.contains("applies both ways"), "{help}");
}

#[test]
fn duration_ends_the_run_and_stats_are_written() {
    let json = temp_file("stats-duration.jsonl");
    let mut child = fairstream()
        .arg("emulate")
        .args(with_base(&[
            "--rate",
            "2mbit",
            "--loss",
            "ge:0.95,0.94,0.01,0.05",
            "--duration",
            "1s",
            "--stats",
            "200ms",
            "--stats-json",
            json.to_str().unwrap(),
        ]))
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_at_most(&mut child, Duration::from_secs(20));
    assert!(status.success(), "{status}");
    let lines = json_lines(&json);
    // About one line per 200 ms, and a final one.
    assert!(lines.len() >= 4, "{lines:?}");
    let last = lines.last().unwrap();
    assert!(last["elapsed_s"].as_f64().unwrap() >= 1.0, "{last}");
    for direction in ["forward", "backward"] {
        for key in [
            "sent_packets",
            "queue_drops",
            "channel_losses",
            "throughput_bits_per_s",
        ] {
            assert!(
                last[direction][key].is_number(),
                "{direction}.{key}: {last}"
            );
        }
    }
}

/// A UDP echo server on its own thread until the flag is set.
fn echo_server() -> (SocketAddr, Arc<AtomicBool>, thread::JoinHandle<()>) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(10)))
        .unwrap();
    let address = socket.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = thread::spawn(move || {
        let mut buffer = [0u8; 2048];
        while !flag.load(Ordering::Relaxed) {
            if let Ok((n, from)) = socket.recv_from(&mut buffer) {
                socket.send_to(&buffer[..n], from).unwrap();
            }
        }
    });
    (address, stop, thread)
}

#[test]
fn the_binary_forwards_with_delay_and_stops_on_sigterm() {
    let (upstream, stop_echo, echo) = echo_server();
    // A free port for the emulator (free a moment ago).
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let json = temp_file("stats-sigterm.jsonl");
    let mut child = fairstream()
        .args([
            "emulate",
            "--listen",
            &listen,
            "--to",
            &upstream.to_string(),
        ])
        .args(["--rate", "1mbit", "--delay", "15ms", "--duration", "30s"])
        .args(["--stats-json", json.to_str().unwrap()])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buffer = [0u8; 64];
    let mut round_trips = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while round_trips.len() < 5 && Instant::now() < deadline {
        let sent = Instant::now();
        client.send_to(b"ping", &listen).unwrap();
        // The first pings may find the emulator not yet started.
        if let Ok((n, _)) = client.recv_from(&mut buffer) {
            assert_eq!(&buffer[..n], b"ping");
            round_trips.push(sent.elapsed());
        }
    }
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let status = wait_at_most(&mut child, Duration::from_secs(10));
    stop_echo.store(true, Ordering::Relaxed);
    echo.join().unwrap();
    assert!(
        status.success(),
        "SIGTERM should end the run cleanly: {status}"
    );
    assert_eq!(
        round_trips.len(),
        5,
        "no echo came back through the emulator"
    );
    // 2 × 15 ms of propagation delay at least.
    assert!(
        round_trips
            .iter()
            .all(|&rtt| rtt >= Duration::from_millis(30)),
        "{round_trips:?}"
    );
    let lines = json_lines(&json);
    let last = lines.last().expect("a final statistics line");
    assert!(
        last["forward"]["sent_packets"].as_u64().unwrap() >= 5,
        "{last}"
    );
    assert!(
        last["backward"]["sent_packets"].as_u64().unwrap() >= 5,
        "{last}"
    );
}
