//! `fairstream send` and `fairstream recv` as a user runs them: errors that
//! name the problem, a closed port found quickly, and RTP output that
//! ffmpeg plays from the SDP file. Loopback only; every child process is
//! waited for with a deadline and killed past it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness
#![allow(clippy::disallowed_methods)] // real-time test: measures with the real clock

use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

fn fairstream() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fairstream"))
}

/// A UDP port nobody listens on (bound, then released).
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Two free consecutive ports, the first even (RTP and RTCP for ffmpeg).
fn free_rtp_port() -> u16 {
    for _ in 0..100 {
        let port = free_port() & !1;
        if UdpSocket::bind(("127.0.0.1", port)).is_ok()
            && UdpSocket::bind(("127.0.0.1", port + 1)).is_ok()
        {
            return port;
        }
    }
    panic!("no free even port pair");
}

use fairstream_testkit::wait_with_limit as wait;

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn sending_to_a_closed_port_fails_at_once_with_a_clear_message() {
    let Some(video) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
        return;
    };
    let port = free_port();
    let start = Instant::now();
    let child = fairstream()
        .arg("send")
        .arg(&video)
        .arg(format!("dccp://127.0.0.1:{port}"))
        .args(["--handshake-timeout", "3s", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = wait(child, Duration::from_secs(10));
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stderr:?} after {elapsed:?}");
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!(
            "no DCCP listener at 127.0.0.1:{port} (connection refused)"
        )),
        "{stderr}"
    );
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

#[test]
fn a_silent_port_fails_after_the_handshake_timeout() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let start = Instant::now();
    let child = fairstream()
        .args(["send", "generated"])
        .arg(format!("dccp://127.0.0.1:{port}"))
        .args(["--handshake-timeout", "1s", "--quiet", "--size", "64x64"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = wait(child, Duration::from_secs(10));
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!(
            "handshake with 127.0.0.1:{port} timed out after 1 s"
        )),
        "{stderr}"
    );
    assert!(elapsed >= Duration::from_secs(1) && elapsed < Duration::from_secs(4));
}

#[test]
fn bad_urls_and_options_are_errors_that_name_them() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["send", "generated", "dccp://127.0.0.1:9000?conns=0"],
            "bad value `0` for `conns`",
        ),
        (
            &["send", "generated", "dccp://127.0.0.1:9000?colour=red"],
            "unknown option `colour`",
        ),
        (
            &["send", "generated", "dccp://127.0.0.1:70000"],
            "bad port `70000`",
        ),
        (
            &["send", "generated", "dccp://:9000"],
            "names no host to send to",
        ),
        (
            &["send", "generated", "udp://127.0.0.1:9000"],
            "is not a dccp:// URL",
        ),
        (
            &["send", "generated", "dccp://127.0.0.1:9000?cc=tcp"],
            "bad value `tcp` for `cc`",
        ),
        (
            &[
                "send",
                "generated",
                "dccp://127.0.0.1:9000?start_offset=fast",
            ],
            "for `start_offset`",
        ),
        (
            &["send", "no-such-file.264", "dccp://127.0.0.1:9000"],
            "no-such-file.264 is not a file",
        ),
        (
            &["send", "generated", "dccp://127.0.0.1:9000", "--fps", "0"],
            "--fps",
        ),
        (
            &[
                "send",
                "generated",
                "dccp://127.0.0.1:9000",
                "--mode",
                "fast",
            ],
            "--mode",
        ),
        (
            &[
                "send",
                "generated",
                "dccp://127.0.0.1:9000",
                "--duration",
                "5",
            ],
            "--duration",
        ),
        (
            &["send", "generated", "dccp://127.0.0.1:9000", "--loop"],
            "--loop needs a file source",
        ),
        (
            &["recv", "dccp://:9000?conns=2", "out.264"],
            "unknown option `conns`",
        ),
        (
            &["recv", "dccp://:9000", "rtp://nowhere"],
            "bad RTP output `rtp://nowhere`",
        ),
        (
            &["recv", "dccp://:9000", "http://x/y"],
            "unknown output `http://x/y`",
        ),
        (
            &["recv", "dccp://:9000", "out.264", "--duration", "0s"],
            "--duration",
        ),
        (
            &["recv", "dccp://:9000?peer_timeout=0s", "out.264"],
            "bad value `0s` for `peer_timeout`",
        ),
        (
            &[
                "send",
                "generated",
                "dccp://127.0.0.1:9000?peer_timeout=fast",
            ],
            "bad value `fast` for `peer_timeout`",
        ),
    ];
    for (args, expected) in cases {
        let output = fairstream().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn rtp_output_with_its_sdp_plays_in_ffmpeg() {
    let Some(video) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
        return;
    };
    let Some(ffmpeg) = fairstream_testkit::tool("ffmpeg") else {
        return;
    };
    let dccp_port = free_port();
    let rtp_port = free_rtp_port();
    let sdp = temp_path("stream.sdp");
    let _ = std::fs::remove_file(&sdp);
    let receiver = fairstream()
        .arg("recv")
        .arg(format!("dccp://127.0.0.1:{dccp_port}"))
        .arg(format!("rtp://127.0.0.1:{rtp_port}"))
        .arg("--sdp")
        .arg(&sdp)
        .args(["--quiet", "--duration", "30s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The receiver writes the SDP file when it starts.
    let start = Instant::now();
    while !sdp.is_file() && start.elapsed() < Duration::from_secs(10) {
        thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&sdp).unwrap();
    assert!(
        text.contains(&format!("m=video {rtp_port} RTP/AVP 96")),
        "{text}"
    );
    assert!(text.contains("packetization-mode=1"), "{text}");
    let player = Command::new(ffmpeg)
        .args(["-v", "error", "-protocol_whitelist", "file,udp,rtp", "-i"])
        .arg(&sdp)
        .args(["-frames:v", "50", "-f", "framecrc", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The stream starts once ffmpeg holds its RTP port (binding it then
    // fails), however long ffmpeg takes to start.
    let start = Instant::now();
    while UdpSocket::bind(("127.0.0.1", rtp_port)).is_ok()
        && start.elapsed() < Duration::from_secs(20)
    {
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(300));
    let sender = fairstream()
        .arg("send")
        .arg(&video)
        .arg(format!("dccp://127.0.0.1:{dccp_port}"))
        .args(["--fps", "25", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let played = wait(player, Duration::from_secs(30));
    let sent = wait(sender, Duration::from_secs(30));
    let received = wait(receiver, Duration::from_secs(30));
    let frames = String::from_utf8_lossy(&played.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count();
    let errors = String::from_utf8_lossy(&played.stderr);
    eprintln!("ffmpeg decoded {frames} frames; its errors: {errors:?}");
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    assert!(
        received.status.success(),
        "{}",
        String::from_utf8_lossy(&received.stderr)
    );
    assert!(played.status.success(), "{errors}");
    assert_eq!(frames, 50);
    assert!(errors.trim().is_empty(), "{errors}");
    // Once the parameter sets came, the SDP carries them.
    let text = std::fs::read_to_string(&sdp).unwrap();
    assert!(text.contains("sprop-parameter-sets="), "{text}");
    let summary: serde_json::Value =
        serde_json::from_slice(&received.stdout).expect("a JSON summary on stdout");
    assert_eq!(summary["frames_written"], 100);
    assert_eq!(summary["stopped_by"], "closed");
}

#[test]
fn a_pipe_in_and_standard_output_out_carry_the_same_access_units() {
    let Some(video) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    let port = free_port();
    let receiver = fairstream()
        .arg("recv")
        .arg(format!("dccp://127.0.0.1:{port}"))
        .args(["-", "--quiet", "--duration", "60s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(300));
    let sender = fairstream()
        .args(["send", "-"])
        .arg(format!("dccp://127.0.0.1:{port}"))
        .args(["--mode", "on-demand", "--quiet"])
        .stdin(std::fs::File::open(&video).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The receiver's standard output is read while it runs (a full pipe
    // would stop it).
    let receiver_pid = receiver.id();
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(receiver.wait_with_output());
    });
    let sent = wait(sender, Duration::from_secs(60));
    let Ok(received) = rx.recv_timeout(Duration::from_secs(60)) else {
        let _ = Command::new("kill").arg(receiver_pid.to_string()).status();
        panic!("the receiver did not stop");
    };
    let received = received.unwrap();
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    assert!(
        received.status.success(),
        "{}",
        String::from_utf8_lossy(&received.stderr)
    );
    let units = |bytes: &[u8]| fairstream_media::h264::access_unit_bytes(bytes).unwrap();
    let original = units(&std::fs::read(&video).unwrap());
    let copy = units(&received.stdout);
    assert_eq!(copy.len(), original.len());
    assert!(copy == original, "the access units differ");
    // With the video on stdout, the summary goes to stderr.
    let stderr = String::from_utf8_lossy(&received.stderr);
    let summary: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(summary["frames_written"], original.len());
    assert_eq!(summary["bytes_written"], received.stdout.len());
}

#[test]
fn a_source_that_is_not_h264_is_named_and_the_connection_closed() {
    let not_video = temp_path("not-video.264");
    std::fs::write(&not_video, b"this is not an H.264 stream\n").unwrap();
    let port = free_port();
    let receiver = fairstream()
        .arg("recv")
        .arg(format!("dccp://127.0.0.1:{port}"))
        .arg(temp_path("nothing.264"))
        .args(["--quiet", "--duration", "30s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(300));
    let sent = fairstream()
        .arg("send")
        .arg(&not_video)
        .arg(format!("dccp://127.0.0.1:{port}"))
        .arg("--quiet")
        .output()
        .unwrap();
    let start = Instant::now();
    let received = wait(receiver, Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&sent.stderr);
    assert!(!sent.status.success());
    assert!(
        stderr.contains(&format!(
            "{}: not an H.264 Annex B stream",
            not_video.display()
        )),
        "{stderr}"
    );
    // The sender closed in order: the receiver stops at once, and fails,
    // as no frame came (its summary still says what happened).
    let summary: serde_json::Value = serde_json::from_slice(&received.stdout).unwrap();
    assert_eq!(summary["stopped_by"], "closed");
    assert_eq!(summary["frames_written"], 0);
    assert!(start.elapsed() < Duration::from_secs(5));
    let received_stderr = String::from_utf8_lossy(&received.stderr);
    assert!(!received.status.success(), "{received_stderr}");
    assert!(
        received_stderr.contains("no frames arrived from the sender at"),
        "{received_stderr}"
    );
}

/// Runs `send -` with `input` on stdin towards a port nobody listens on,
/// and returns its stderr (the frame rate is found before connecting).
fn send_pipe_to_nowhere(input: &std::path::Path) -> String {
    let port = free_port();
    let child = fairstream()
        .args(["send", "-", &format!("dccp://127.0.0.1:{port}")])
        .args(["--handshake-timeout", "3s"])
        .stdin(std::fs::File::open(input).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = wait(child, Duration::from_secs(10));
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_pipe_is_sent_at_the_rate_its_sps_states_or_the_assumed_one_is_said() {
    let Some(video) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
        return;
    };
    // OpenH264's conformance clip has no VUI timing.
    let stderr = send_pipe_to_nowhere(&video);
    assert_eq!(
        stderr.matches("assuming 25 frames/s").count(),
        1,
        "{stderr}"
    );
    let Some(ffmpeg) = fairstream_testkit::tool("ffmpeg") else {
        return;
    };
    let clip = temp_path("thirty.264");
    let status = Command::new(ffmpeg)
        .args(["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi"])
        .args(["-i", "testsrc=size=176x144:rate=30", "-frames:v", "30"])
        .args(["-pix_fmt", "yuv420p", "-c:v", "libx264", "-f", "h264"])
        .arg(&clip)
        .status()
        .unwrap();
    assert!(status.success());
    let stderr = send_pipe_to_nowhere(&clip);
    assert!(
        stderr.contains("standard input: 30.000 frames/s, from the VUI timing of its SPS"),
        "{stderr}"
    );
    assert!(!stderr.contains("assuming"), "{stderr}");
}

#[test]
fn statistics_go_to_standard_output_as_csv_and_never_beside_the_stream() {
    // Both to standard output: refused before anything starts.
    let output = fairstream()
        .args(["recv", &format!("dccp://127.0.0.1:{}", free_port()), "-"])
        .args(["--stats-json", "-", "--duration", "1s"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot both go to standard output"),
        "{stderr}"
    );

    let Some(video) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
        return;
    };
    let dir = temp_path("stats-csv");
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let receiver = fairstream()
        .arg("recv")
        .arg(format!("dccp://127.0.0.1:{port}"))
        .arg(dir.join("out.264"))
        .args(["--quiet", "--duration", "60s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(300));
    let sender = fairstream()
        .current_dir(&dir)
        .arg("send")
        .arg(&video)
        .arg(format!("dccp://127.0.0.1:{port}"))
        .args(["--fps", "50", "--stats", "200ms", "--quiet"])
        .args(["--stats-json", "-", "--stats-format", "csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sent = wait(sender, Duration::from_secs(60));
    let received = wait(receiver, Duration::from_secs(60));
    assert!(received.status.success());
    let stderr = String::from_utf8_lossy(&sent.stderr);
    assert!(sent.status.success(), "{stderr}");
    assert!(!dir.join("-").exists(), "a file named `-` was written");
    let stdout = String::from_utf8_lossy(&sent.stdout);
    let mut lines = stdout.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("time_s,role,"), "{header}");
    let columns = header.split(',').count();
    let rows: Vec<&str> = lines.collect();
    // 100 frames at 50 frames/s: about 2 s, a line every 200 ms.
    assert!(rows.len() >= 5, "{stdout}");
    for row in &rows {
        assert_eq!(row.split(',').count(), columns, "{row}");
        assert!(row.contains(",send,"), "{row}");
    }
    // The summary, not in the CSV, went to stderr.
    let summary: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(summary["frames_sent"], 100);
}

#[test]
fn an_os_error_is_said_once() {
    let output = fairstream()
        .args(["recv", &format!("dccp://127.0.0.1:{}", free_port())])
        .arg("/nonexistent-directory/out.264")
        .args(["--duration", "1s", "--quiet"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
    let output = fairstream()
        .args(["simulate", "/nonexistent-directory/scenario.toml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
}
