//! ICMP is a hint, not a verdict (issue 13, item 3). A port unreachable
//! can be forged by anyone who knows or sweeps the sender's port; on the
//! main branch before this change one ended `send` (and the relay's
//! downstream side, which is a sender) at once. Here the sender's path runs
//! through a forwarder whose listening port closes for 100 ms now and
//! then, so that the kernel delivers real ICMP port-unreachable errors to
//! the sender while the receiver behind it is up: the stream must go on.
//! When the port closes for good, the sender must still notice, within the
//! shortened peer timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // a real-time test runs on the real clock

mod support;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fairstream_net::recv::OutputSpec;
use fairstream_net::send::{self, SendConfig, SendError};
use support::blink::Blinker;
use support::{assert_nearly_every_frame, bind_receiver, generated_live, temp_path};

/// Generated video, live, through `blinker` for `seconds`.
fn config(blinker: &Blinker, seconds: u64) -> SendConfig {
    generated_live(&format!("dccp://{}", blinker.local_addr()), seconds)
}

#[test]
fn port_unreachable_while_the_receiver_is_up_does_not_end_the_stream() {
    let output = temp_path("icmp-blink.264");
    let (to, receiver) = bind_receiver(
        "",
        OutputSpec::File(output.clone()),
        Duration::from_secs(30),
        None,
    );
    let receiving = thread::spawn(move || receiver.run(&AtomicBool::new(false)));
    let closes = (0..4)
        .map(|i| Duration::from_millis(2_000 + 1_500 * i))
        .collect();
    let blinker = Blinker::start(to, closes, Some(Duration::from_millis(100)));
    let sent = send::run(config(&blinker, 10), Arc::new(AtomicBool::new(false)));
    let blinks = blinker.stop();
    let received = receiving.join().unwrap();
    let sent = sent.unwrap_or_else(|e| panic!("the sender gave up: {e}"));
    let received = received.unwrap_or_else(|e| panic!("the receiver failed: {e}"));
    eprintln!(
        "port closed {} times; sender: {} ICMP errors, {} frames sent, stopped by {}; \
         receiver: {} frames written ({} damaged)",
        blinks.closed,
        sent.icmp_refused,
        sent.frames_sent,
        sent.stopped_by,
        received.frames_written,
        received.frames_damaged,
    );
    assert_eq!(blinks.closed, 4);
    // The attack happened: the kernel reported port unreachable to the
    // sender (at least once; Linux rate-limits ICMP errors).
    assert!(sent.icmp_refused >= 1, "no ICMP error reached the sender");
    assert_eq!(sent.stopped_by, "duration");
    assert!(sent.frames_sent >= 240, "{} frames sent", sent.frames_sent);
    // What crossed the closed port is lost, and ARQ resends it: nearly
    // every frame arrives.
    assert_nearly_every_frame(received.frames_written, sent.frames_sent);
}

#[test]
fn a_port_that_stays_closed_ends_the_stream_within_the_shortened_timeout() {
    let output = temp_path("icmp-gone.264");
    let (to, receiver) = bind_receiver("", OutputSpec::File(output), Duration::from_secs(30), None);
    let receiving = thread::spawn(move || receiver.run(&AtomicBool::new(false)));
    let blinker = Blinker::start(to, vec![Duration::from_secs(2)], None);
    let sent = send::run(config(&blinker, 20), Arc::new(AtomicBool::new(false)));
    blinker.stop();
    match sent {
        // Gone: ICMP said so and nothing was heard for the shortened
        // timeout (4 RTTs, at least 1 s), well before the usual 4 s.
        Err(SendError::PeerGone { silent, .. }) => {
            assert!(silent >= Duration::from_secs(1), "{silent:?}");
            assert!(silent < Duration::from_secs(4), "{silent:?}");
        }
        other => panic!("expected the receiver to be found gone, got {other:?}"),
    }
    // The receiver, cut off, ends on its own peer timeout.
    let _ = receiving.join().unwrap();
}
