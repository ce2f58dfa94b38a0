//! What `send`, `recv` and `relay` do when the other end misbehaves
//! (issue 12): a peer that vanishes without an ICMP error behind
//! `fairstream emulate`, a receiver stopped with SIGTERM, a second sender
//! to a busy receiver, a receiver that got no frame. The binaries run as a
//! user runs them, over loopback; every child is waited for with a
//! deadline and killed past it, and every bound on time is generous (it
//! only keeps a broken build from hanging the test).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness
#![allow(clippy::disallowed_methods)] // real-time test: waits on the real clock

use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use fairstream_testkit::wait_with_limit as wait;
use serde_json::Value;

/// Starts `fairstream ARGS` with its output piped.
fn fairstream(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_fairstream"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A UDP port nobody listens on (bound, then released).
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until a child has bound `port` (binding it then fails).
fn wait_bound(port: u16) {
    let start = Instant::now();
    while UdpSocket::bind(("127.0.0.1", port)).is_ok() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nothing bound port {port}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `fairstream recv` on `port`, with `query` on its URL, writing `name`.
fn recv(port: u16, query: &str, name: &str, extra: &[&str]) -> Child {
    let url = format!("dccp://127.0.0.1:{port}{query}");
    let out = temp_path(name);
    let mut args = vec!["recv", &url, out.to_str().unwrap(), "--quiet"];
    args.extend_from_slice(extra);
    let child = fairstream(&args);
    wait_bound(port);
    child
}

/// `fairstream emulate` in front of 127.0.0.1:`to` (5 ms each way); its
/// listening port.
fn emulate(to: u16) -> (Child, u16) {
    let port = free_port();
    let child = fairstream(&[
        "emulate",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--to",
        &format!("127.0.0.1:{to}"),
        "--delay",
        "5ms",
        "--quiet",
        "--duration",
        "90s",
    ]);
    wait_bound(port);
    (child, port)
}

/// `fairstream send generated` (a small picture, at most 60 s unless
/// `extra` says otherwise) to `url`.
fn send(url: &str, extra: &[&str]) -> Child {
    let mut args = vec!["send", "generated", url, "--size", "64x64", "--quiet"];
    if !extra.contains(&"--duration") {
        args.extend_from_slice(&["--duration", "60s"]);
    }
    args.extend_from_slice(extra);
    fairstream(&args)
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The JSON summary: the last line of standard output.
fn summary(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!("{e}: {stdout}\nstderr: {}", stderr(output));
    })
}

/// Stops the emulator (it runs at most its duration anyway).
fn stop(mut emulator: Child) {
    let _ = emulator.kill();
    let _ = emulator.wait();
}

#[test]
fn a_receiver_that_vanishes_silently_fails_the_sender_within_the_timeout() {
    let recv_port = free_port();
    let mut receiver = recv(recv_port, "", "vanishing-receiver.264", &[]);
    let (emulator, port) = emulate(recv_port);
    // The default peer timeout: 8 RTTs, at least 4 s.
    let sender = send(&format!("dccp://127.0.0.1:{port}"), &[]);
    thread::sleep(Duration::from_secs(2));
    // SIGKILL: no Close, and behind the emulator no ICMP error either.
    receiver.kill().unwrap();
    let killed = Instant::now();
    let sent = wait(sender, Duration::from_secs(30));
    let after = killed.elapsed();
    let text = stderr(&sent);
    eprintln!("{text} after {after:?}");
    stop(emulator);
    let _ = receiver.wait();
    assert!(!sent.status.success(), "{text}");
    assert!(
        text.contains(&format!("the receiver at 127.0.0.1:{port} fell silent")),
        "{text}"
    );
    assert!(text.contains("peer timeout 4.0 s"), "{text}");
    assert!(after < Duration::from_secs(20), "{after:?}");
}

#[test]
fn a_sender_that_vanishes_silently_fails_the_receiver() {
    let recv_port = free_port();
    let receiver = recv(recv_port, "?peer_timeout=2s", "vanishing-sender.264", &[]);
    let (emulator, port) = emulate(recv_port);
    let mut sender = send(&format!("dccp://127.0.0.1:{port}"), &[]);
    thread::sleep(Duration::from_secs(2));
    sender.kill().unwrap();
    let received = wait(receiver, Duration::from_secs(30));
    stop(emulator);
    let _ = sender.wait();
    let text = stderr(&received);
    eprintln!("{text}");
    assert!(!received.status.success(), "{text}");
    assert!(text.contains("the sender at 127.0.0.1:"), "{text}");
    assert!(text.contains("fell silent"), "{text}");
    assert!(text.contains("peer timeout 2.0 s"), "{text}");
    // What came before is kept and summed up.
    let summary = summary(&received);
    assert_eq!(summary["stopped_by"], "peer-timeout");
    assert!(summary["frames_written"].as_u64().unwrap() > 0, "{summary}");
}

#[test]
fn sigterm_to_the_receiver_closes_the_stream_cleanly_at_both_ends() {
    let recv_port = free_port();
    let receiver = recv(recv_port, "", "sigterm.264", &[]);
    let (emulator, port) = emulate(recv_port);
    let sender = send(&format!("dccp://127.0.0.1:{port}"), &[]);
    thread::sleep(Duration::from_secs(2));
    sigterm(&receiver);
    let received = wait(receiver, Duration::from_secs(15));
    let sent = wait(sender, Duration::from_secs(15));
    stop(emulator);
    assert!(received.status.success(), "{}", stderr(&received));
    assert!(sent.status.success(), "{}", stderr(&sent));
    let received = summary(&received);
    assert_eq!(received["stopped_by"], "signal");
    assert!(received["frames_written"].as_u64().unwrap() > 0);
    // The sender saw the receiver's CloseReq and closed in order.
    let sent = summary(&sent);
    assert_eq!(sent["stopped_by"], "receiver-closed");
    assert_eq!(sent["closed_cleanly"], true);
}

#[test]
fn a_second_sender_to_a_busy_receiver_is_told_so() {
    let recv_port = free_port();
    let receiver = recv(recv_port, "", "busy.264", &[]);
    let (emulator, port) = emulate(recv_port);
    let url = format!("dccp://127.0.0.1:{port}");
    let first = send(&url, &[]);
    thread::sleep(Duration::from_secs(1));
    // The emulator gives each client its own socket: the receiver sees a
    // second address.
    let second = send(&url, &["--handshake-timeout", "5s"]);
    let refused = wait(second, Duration::from_secs(20));
    let text = stderr(&refused);
    assert!(!refused.status.success(), "{text}");
    assert!(
        text.contains(&format!("the receiver at {url} is busy").replace("dccp://", "")),
        "{text}"
    );
    assert!(!text.contains("timed out"), "{text}");
    // The first stream went on, and ends cleanly.
    sigterm(&receiver);
    let received = wait(receiver, Duration::from_secs(15));
    let sent = wait(first, Duration::from_secs(15));
    stop(emulator);
    assert!(received.status.success(), "{}", stderr(&received));
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert!(summary(&received)["busy_refusals"].as_u64().unwrap() >= 1);
}

#[test]
fn a_receiver_that_got_no_frame_fails() {
    let port = free_port();
    let receiver = recv(port, "", "nothing.264", &["--duration", "1s"]);
    let received = wait(receiver, Duration::from_secs(15));
    let text = stderr(&received);
    assert!(!received.status.success(), "{text}");
    assert!(
        text.contains("no frames arrived (no sender connected)"),
        "{text}"
    );
    let summary = summary(&received);
    assert_eq!(summary["stopped_by"], "duration");
    assert_eq!(summary["frames_written"], 0);
}

#[test]
fn a_relay_whose_receiver_vanishes_fails_and_closes_upstream() {
    let recv_port = free_port();
    let mut receiver = recv(recv_port, "", "relayed.264", &[]);
    let (emulator, port) = emulate(recv_port);
    let relay_port = free_port();
    let relay = fairstream(&[
        "relay",
        &format!("dccp://127.0.0.1:{relay_port}"),
        &format!("dccp://127.0.0.1:{port}?peer_timeout=2s"),
        "--quiet",
    ]);
    wait_bound(relay_port);
    let sender = send(&format!("dccp://127.0.0.1:{relay_port}"), &[]);
    thread::sleep(Duration::from_secs(2));
    receiver.kill().unwrap();
    let relayed = wait(relay, Duration::from_secs(30));
    let sent = wait(sender, Duration::from_secs(15));
    stop(emulator);
    let _ = receiver.wait();
    let text = stderr(&relayed);
    eprintln!("{text}");
    assert!(!relayed.status.success(), "{text}");
    assert!(text.contains("downstream side"), "{text}");
    assert!(
        text.contains(&format!("the receiver at 127.0.0.1:{port} fell silent")),
        "{text}"
    );
    // The relay's receiving side closed in order: its sender stops cleanly.
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert_eq!(summary(&sent)["stopped_by"], "receiver-closed");
}

#[test]
fn a_relay_whose_sender_vanishes_drains_downstream_and_fails() {
    let recv_port = free_port();
    let receiver = recv(recv_port, "", "drained.264", &[]);
    let relay_port = free_port();
    let (emulator, port) = emulate(relay_port);
    let relay = fairstream(&[
        "relay",
        &format!("dccp://127.0.0.1:{relay_port}?peer_timeout=2s"),
        &format!("dccp://127.0.0.1:{recv_port}"),
        "--quiet",
    ]);
    wait_bound(relay_port);
    let mut sender = send(&format!("dccp://127.0.0.1:{port}"), &[]);
    thread::sleep(Duration::from_secs(2));
    sender.kill().unwrap();
    let relayed = wait(relay, Duration::from_secs(30));
    let received = wait(receiver, Duration::from_secs(15));
    stop(emulator);
    let _ = sender.wait();
    let text = stderr(&relayed);
    eprintln!("{text}");
    assert!(!relayed.status.success(), "{text}");
    assert!(text.contains("upstream side"), "{text}");
    assert!(text.contains("fell silent"), "{text}");
    let relay_summary = summary(&relayed);
    assert_eq!(relay_summary["upstream"]["stopped_by"], "peer-timeout");
    assert_eq!(relay_summary["downstream"]["stopped_by"], "end");
    // What reached the relay went on, and the final receiver's stream
    // closed in order.
    assert!(received.status.success(), "{}", stderr(&received));
    assert_eq!(summary(&received)["stopped_by"], "closed");
}

#[test]
fn statistics_that_cannot_be_written_are_a_warning_not_the_end_of_the_stream() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let port = free_port();
    // Every write to /dev/full fails with "no space left on device".
    let receiver = recv(port, "", "full.264", &["--stats-json", "/dev/full"]);
    let sender = send(
        &format!("dccp://127.0.0.1:{port}"),
        &["--duration", "2s", "--stats-json", "/dev/full"],
    );
    let sent = wait(sender, Duration::from_secs(20));
    let received = wait(receiver, Duration::from_secs(20));
    for (role, output) in [("send", &sent), ("recv", &received)] {
        let text = stderr(output);
        assert!(output.status.success(), "{role}: {text}");
        assert!(
            text.contains(&format!("warning: {role}: cannot write statistics")),
            "{role}: {text}"
        );
        assert!(summary(output)["stats_write_errors"].as_u64().unwrap() > 0);
    }
    assert_eq!(summary(&sent)["stopped_by"], "duration");
    assert_eq!(summary(&received)["stopped_by"], "closed");
}

/// `secret` in a file of its own.
fn passphrase_file(name: &str, secret: &str) -> PathBuf {
    let path = temp_path(name);
    std::fs::write(&path, format!("{secret}\n")).unwrap();
    path
}

#[test]
fn a_passphrase_file_protects_the_stream_and_a_wrong_one_fails_at_both_ends() {
    let secret = "a passphrase from a file";
    let good = passphrase_file("good.txt", secret);
    let wrong = passphrase_file("wrong.txt", "another passphrase, also long");
    let recv_port = free_port();
    let good_arg = good.to_str().unwrap();
    let receiver = recv(
        recv_port,
        "",
        "secret.264",
        &["--passphrase-file", good_arg, "--duration", "6s"],
    );
    let url = format!("dccp://127.0.0.1:{recv_port}");
    // A sender with another passphrase: refused at once, and named by the
    // receiver.
    let refused = wait(
        send(&url, &["--passphrase-file", wrong.to_str().unwrap()]),
        Duration::from_secs(20),
    );
    let text = stderr(&refused);
    assert!(!refused.status.success(), "{text}");
    assert!(text.contains("uses another passphrase"), "{text}");
    // The sender with the right one streams.
    let sent = wait(
        send(&url, &["--passphrase-file", good_arg, "--duration", "2s"]),
        Duration::from_secs(20),
    );
    let received = wait(receiver, Duration::from_secs(20));
    let receiver_text = stderr(&received);
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert!(
        receiver_text.contains("uses another passphrase (or none)"),
        "{receiver_text}"
    );
    let sent = summary(&sent);
    let received = summary(&received);
    assert_eq!(sent["encrypted"], true);
    assert_eq!(received["encrypted"], true);
    assert!(received["frames_written"].as_u64().unwrap() > 0);
    assert_eq!(received["refused_senders"], 1);
    // The secret appears nowhere in what either printed.
    assert!(!receiver_text.contains(secret) && !text.contains(secret));
    // A passphrase twice, or a bad one, is an error that names the problem
    // and not the secret.
    let twice = wait(
        fairstream(&[
            "send",
            "generated",
            "dccp://127.0.0.1:9?passphrase=0123456789abc",
            "--passphrase-file",
            good_arg,
        ]),
        Duration::from_secs(10),
    );
    let text = stderr(&twice);
    assert!(!twice.status.success());
    assert!(text.contains("give the passphrase once"), "{text}");
    assert!(!text.contains("0123456789abc"), "{text}");
    let short = passphrase_file("short.txt", "short");
    let bad = wait(
        fairstream(&[
            "recv",
            "dccp://:0",
            "out.264",
            "--passphrase-file",
            short.to_str().unwrap(),
        ]),
        Duration::from_secs(10),
    );
    let text = stderr(&bad);
    assert!(!bad.status.success());
    assert!(text.contains("at least 10 bytes"), "{text}");
}
