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

/// Waits for `child` at most `limit`; kills it past that.
fn wait(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    panic!(
        "still running after {limit:?}; stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

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
