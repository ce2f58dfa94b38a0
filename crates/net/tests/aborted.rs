//! A sender that resets its connection instead of closing it aborts the
//! stream: the receiver stops at once and fails (issue 12), with its
//! report. The sender here is a bare DCCP endpoint driven by hand, over
//! loopback; the receiver's duration bounds the run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // a real-time test waits on the real clock

use std::net::UdpSocket;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Duration, Instant};

use fairstream_net::clock::Clock;
use fairstream_net::recv::{OutputSpec, Receiver, RecvConfig, RecvError, RecvFailure};
use fairstream_proto::conn::{ConnectionConfig, Endpoint, EndpointConfig, State};

#[test]
fn a_sender_that_resets_its_connection_aborts_the_stream() {
    let output =
        std::env::temp_dir().join(format!("fairstream-aborted-{}.264", std::process::id()));
    let mut config = RecvConfig::new(
        "dccp://127.0.0.1:0".parse().unwrap(),
        OutputSpec::File(output.clone()),
    );
    config.duration = Some(Duration::from_secs(30));
    config.stats.interval = None;
    let receiver = Receiver::bind(config).unwrap();
    let port = receiver.local_addr().port();
    let receiving = thread::spawn(move || receiver.run(&AtomicBool::new(false)));

    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(("127.0.0.1", port)).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(5)))
        .unwrap();
    let clock = Clock::new();
    let mut endpoint = Endpoint::new(EndpointConfig {
        // Padded like fairstream's Requests: the receiver answers nothing
        // larger than what it got.
        connection: ConnectionConfig {
            request_min_len: fairstream_net::send::REQUEST_MIN_LEN,
            ..ConnectionConfig::default()
        },
        listen: false,
        max_connections: 1,
        cookies: None,
    });
    let id = endpoint.connect(clock.now(), 40_000, port, 7).unwrap();
    let mut buf = Vec::new();
    let mut datagram = [0u8; 2048];
    let started = Instant::now();
    let mut sent = 0;
    let mut aborted = false;
    while started.elapsed() < Duration::from_secs(20) && !receiving.is_finished() {
        let now = clock.now();
        let state = endpoint.connection(id).map(|c| c.state());
        if state == Some(State::Open) && sent < 20 {
            // The session header and a few bytes: data the receiver takes.
            let conn = endpoint.connection_mut(id).unwrap();
            if conn.send(now, &[0, 0, 0, sent, 0x80, 96, 0, sent]).is_ok() {
                sent += 1;
            }
        } else if sent == 20 && !aborted {
            endpoint.connection_mut(id).unwrap().abort(now);
            aborted = true;
        }
        if endpoint.poll_timeout().is_some_and(|t| t <= now) {
            endpoint.handle_timeout(now);
        }
        while let Some((_, transmit)) = endpoint.poll_transmit(now, &mut buf) {
            socket.send(&buf[..transmit.len]).unwrap();
        }
        while endpoint.poll_event().is_some() {}
        if let Ok(n) = socket.recv(&mut datagram) {
            endpoint.handle_datagram(clock.now(), &datagram[..n], 1);
        }
    }
    assert!(aborted, "the connection never opened");
    let result = receiving.join().unwrap();
    let _ = std::fs::remove_file(&output);
    let Err(RecvError::Stream { failure, report }) = result else {
        panic!("the receiver did not fail: {result:?}");
    };
    assert!(matches!(failure, RecvFailure::Aborted { .. }), "{failure}");
    assert!(
        failure.to_string().contains("aborted the stream"),
        "{failure}"
    );
    assert_eq!(report.stopped_by, "aborted");
    // It stopped at the Reset, not at its duration.
    assert!(report.elapsed_s < 15.0, "{report:?}");
}
