//! `fairstream relay` as a user runs it: bad URLs and options are errors
//! that name the side and the problem, and a downstream without a
//! listener ends the relay at once. Loopback only; every child process is
//! waited for with a deadline and killed past it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness
#![allow(clippy::disallowed_methods)] // real-time test: measures with the real clock

use std::net::UdpSocket;
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

fn relay(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .arg("relay")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

use fairstream_testkit::wait_with_limit as wait;

/// A UDP port nobody listens on (bound, then released).
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn bad_relay_urls_and_options_name_the_problem() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["http://:9000", "dccp://127.0.0.1:9001"],
            &["the listening URL", "`http://:9000` is not a dccp:// URL"],
        ),
        (
            &["dccp://:9000", "udp://127.0.0.1:9001"],
            &[
                "the downstream URL",
                "`udp://127.0.0.1:9001` is not a dccp:// URL",
            ],
        ),
        (
            &["dccp://127.0.0.1:0?conns=4", "dccp://127.0.0.1:9001"],
            &[
                "upstream side",
                "unknown option `conns`",
                "known: cc, max_packet",
            ],
        ),
        (
            &["dccp://127.0.0.1:0", "dccp://:9001"],
            &["downstream side", "names no host to send to"],
        ),
        (
            &["dccp://127.0.0.1:0", "dccp://127.0.0.1:0"],
            &["downstream side", "bad port `0`"],
        ),
        (
            &["dccp://127.0.0.1:0", "dccp://127.0.0.1:9001?cc=tcp"],
            &["the downstream URL", "bad value `tcp` for `cc`"],
        ),
        (
            &["dccp://127.0.0.1:0", "dccp://127.0.0.1:9001?colour=red"],
            &["unknown option `colour`"],
        ),
        (
            &["dccp://127.0.0.1:0", "dccp://no-such-host.invalid:9001"],
            &[
                "downstream side",
                "cannot resolve `no-such-host.invalid:9001`",
            ],
        ),
        (
            &[
                "dccp://127.0.0.1:0",
                "dccp://127.0.0.1:9001",
                "--buffer",
                "1kB",
            ],
            &["--buffer", "smaller than the least buffer"],
        ),
        (
            &[
                "dccp://127.0.0.1:0",
                "dccp://127.0.0.1:9001",
                "--buffer",
                "8 parsecs",
            ],
            &["--buffer"],
        ),
    ];
    for (args, expected) in cases {
        let output = wait(relay(args), Duration::from_secs(20));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded");
        for text in *expected {
            assert!(stderr.contains(text), "{args:?}: `{text}` not in {stderr}");
        }
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_downstream_without_a_listener_ends_the_relay_with_a_clear_message() {
    let port = free_port();
    let started = Instant::now();
    let child = relay(&[
        "dccp://127.0.0.1:0",
        &format!("dccp://127.0.0.1:{port}"),
        "--handshake-timeout",
        "3s",
        "--quiet",
    ]);
    let output = wait(child, Duration::from_secs(15));
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stderr} after {:?}", started.elapsed());
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!("downstream side (dccp://127.0.0.1:{port})")),
        "{stderr}"
    );
    // ICMP port unreachable at once, or no answer within the timeout.
    assert!(
        stderr.contains(&format!("no DCCP listener at 127.0.0.1:{port}"))
            || stderr.contains("timed out"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

fn fairstream(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn summary(output: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "{e}: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn the_binaries_relay_a_clip_and_sigterm_stops_an_idle_relay() {
    let Some(video) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
        return;
    };
    let out = std::env::temp_dir().join(format!("fairstream-relay-{}.264", std::process::id()));
    let recv_port = free_port();
    let relay_port = loop {
        let port = free_port();
        if port != recv_port {
            break port;
        }
    };
    let recv = fairstream(&[
        "recv",
        &format!("dccp://127.0.0.1:{recv_port}"),
        out.to_str().unwrap(),
        "--quiet",
        "--duration",
        "30s",
    ]);
    thread::sleep(Duration::from_millis(300));
    let relay = fairstream(&[
        "relay",
        &format!("dccp://127.0.0.1:{relay_port}"),
        &format!("dccp://127.0.0.1:{recv_port}"),
        "--buffer",
        "1MB",
        "--duration",
        "30s",
    ]);
    thread::sleep(Duration::from_millis(300));
    let send = fairstream(&[
        "send",
        video.to_str().unwrap(),
        &format!("dccp://127.0.0.1:{relay_port}"),
        "--mode",
        "on-demand",
        "--quiet",
    ]);
    let sent = wait(send, Duration::from_secs(30));
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let relayed = wait(relay, Duration::from_secs(30));
    assert!(
        relayed.status.success(),
        "{}",
        String::from_utf8_lossy(&relayed.stderr)
    );
    let received = wait(recv, Duration::from_secs(30));
    assert!(received.status.success());
    let relay_summary = summary(&relayed);
    assert_eq!(relay_summary["buffer"]["limit_bytes"], 1_000_000);
    assert_eq!(relay_summary["buffer"]["frames_in"], 100);
    assert_eq!(relay_summary["buffer"]["frames_out"], 100);
    assert!(relay_summary["buffer"]["max_bytes"].as_u64().unwrap() > 0);
    assert_eq!(relay_summary["upstream"]["stopped_by"], "closed");
    assert_eq!(relay_summary["downstream"]["stopped_by"], "end");
    assert_eq!(relay_summary["downstream"]["closed_cleanly"], true);
    assert_eq!(summary(&received)["frames_written"], 100);
    let stderr = String::from_utf8_lossy(&relayed.stderr);
    assert!(
        stderr.contains("relay done: 100 frames in, 100 out"),
        "{stderr}"
    );

    // An idle relay (its downstream connected, nobody upstream) stops on
    // SIGTERM, closing its downstream connection; having relayed no frame,
    // it fails, with its summary.
    let recv = fairstream(&[
        "recv",
        &format!("dccp://127.0.0.1:{recv_port}"),
        out.to_str().unwrap(),
        "--quiet",
        "--duration",
        "30s",
    ]);
    thread::sleep(Duration::from_millis(300));
    let relay = fairstream(&[
        "relay",
        &format!("dccp://127.0.0.1:{relay_port}"),
        &format!("dccp://127.0.0.1:{recv_port}"),
        "--quiet",
    ]);
    thread::sleep(Duration::from_secs(1));
    let pid = relay.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let stopped = wait(relay, Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert!(!stopped.status.success());
    assert!(
        stderr.contains("upstream side") && stderr.contains("no frames arrived"),
        "{stderr}"
    );
    let stopped = summary(&stopped);
    assert_eq!(stopped["upstream"]["stopped_by"], "signal");
    assert_eq!(stopped["downstream"]["stopped_by"], "signal");
    assert_eq!(stopped["downstream"]["closed_cleanly"], true);
    let received = wait(recv, Duration::from_secs(10));
    assert_eq!(summary(&received)["stopped_by"], "closed");
    let _ = std::fs::remove_file(&out);
}
