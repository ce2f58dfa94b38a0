//! A bonded stream (issue 19) over two emulated paths on loopback: one
//! path is cut in the middle of the stream, and the stream goes on over
//! the other; the cut path comes back when its link does.
//!
//! The tests run one at a time (a lock), so that one's traffic does not
//! take the other's processor time; each is bounded by its durations.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // the shared support module measures with the real clock

mod support;

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use fairstream_net::emulate::{DirectionConfig, Emulator, EmulatorConfig, EmulatorHandle, Outage};
use fairstream_net::recv::{OutputSpec, Receiver, RecvConfig};
use fairstream_net::send::{self, SendError};

use fairstream_sim::link::Capacity;
use support::{generated_live, stats, temp_path};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An emulated path in front of `to`: `rate`, `one_way` delay each way,
/// cut both ways during `outage`.
fn path(to: SocketAddr, rate: &str, one_way: Duration, outage: Option<Outage>) -> EmulatorHandle {
    let mut config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), to);
    let outages: Vec<Outage> = outage.into_iter().collect();
    config.forward = DirectionConfig {
        capacity: Some(Capacity::Fixed(rate.parse().unwrap())),
        delay: one_way,
        outages: outages.clone(),
        ..DirectionConfig::default()
    };
    config.backward = DirectionConfig {
        delay: one_way,
        outages,
        ..DirectionConfig::default()
    };
    Emulator::bind(config).unwrap().spawn().unwrap()
}

/// A receiver on loopback with `query` on its URL, for 30 s at most.
fn receiver(query: &str, name: &str) -> (SocketAddr, thread::JoinHandle<RecvReportOrError>) {
    let url = format!("dccp://127.0.0.1:0{query}");
    let mut config = RecvConfig::new(url.parse().unwrap(), OutputSpec::File(temp_path(name)));
    config.duration = Some(Duration::from_secs(30));
    config.stats = stats(Duration::from_millis(500), None);
    let receiver = Receiver::bind(config).unwrap();
    let to = SocketAddr::from(([127, 0, 0, 1], receiver.local_addr().port()));
    let stop = Arc::new(AtomicBool::new(false));
    (
        to,
        thread::spawn(move || receiver.run(&stop).map_err(|e| e.to_string())),
    )
}

type RecvReportOrError = Result<fairstream_net::recv::RecvReport, String>;

const PASSPHRASE: &str = "bonded paths, one secret";

#[test]
fn a_bonded_stream_goes_on_when_a_path_is_cut_and_takes_it_back() {
    let _serial = serial();
    let query = format!("?passphrase={}", PASSPHRASE.replace(' ', "%20"));
    let (to, receiver) = receiver(&query, "bonded.264");
    // The first path is cut from 4 s to 8 s after it started.
    let cut = Outage {
        start: Duration::from_secs(4),
        length: Duration::from_secs(4),
    };
    let first = path(to, "2mbit", Duration::from_millis(20), Some(cut));
    let second = path(to, "1mbit", Duration::from_millis(40), None);
    let url = format!(
        "dccp://{}{query}&paths={}",
        first.local_addr(),
        second.local_addr()
    );
    let mut config = generated_live(&url, 14);
    config.stats = stats(Duration::from_millis(500), None);
    let sent = send::run(config, Arc::new(AtomicBool::new(false))).unwrap();
    let received = receiver.join().unwrap().unwrap();
    let first_stats = first.stop().unwrap();
    let second_stats = second.stop().unwrap();
    eprintln!("sent: {:?}", sent.paths);
    eprintln!(
        "received: {} of {} frames written, {} damaged, {} stalls for {:.2} s, {} paths joined; \
         the cut dropped {} datagrams forward and {} back",
        received.frames_written,
        sent.frames_sent,
        received.frames_damaged,
        received.stalls,
        received.stall_time_s,
        received.paths_joined,
        first_stats.forward.outage_drops,
        first_stats.backward.outage_drops,
    );
    // Both paths carried the stream, sealed, and the receiver took the
    // second as the same sender's.
    assert!(sent.encrypted && received.encrypted);
    assert_eq!(received.paths_joined, 1);
    assert_eq!(sent.paths.len(), 2);
    assert!(first_stats.forward.outage_drops > 0);
    // The cut path went down and came back, and carried data after.
    assert_eq!(sent.paths[0].down, 1, "{:?}", sent.paths);
    assert_eq!(sent.paths[0].up, 1, "{:?}", sent.paths);
    assert!(second_stats.forward.sent_packets > 0);
    // The stream went on: no more than a second stalled, nearly every
    // frame whole.
    assert!(received.stall_max_s <= 1.0, "{received:?}");
    assert!(
        received.frames_written * 100 >= sent.frames_sent * 95,
        "{} of {} frames written",
        received.frames_written,
        sent.frames_sent
    );
    assert!(
        received.frames_damaged * 100 <= received.frames_written * 2,
        "{} damaged of {}",
        received.frames_damaged,
        received.frames_written
    );
}

#[test]
fn a_path_without_the_senders_token_is_refused_while_a_stream_runs() {
    let _serial = serial();
    let (to, receiver) = receiver("", "busy.264");
    let first = path(to, "2mbit", Duration::from_millis(10), None);
    let second = path(to, "2mbit", Duration::from_millis(10), None);
    let bonded = format!(
        "dccp://{}?paths={}",
        first.local_addr(),
        second.local_addr()
    );
    let running = thread::spawn(move || {
        send::run(generated_live(&bonded, 6), Arc::new(AtomicBool::new(false)))
    });
    thread::sleep(Duration::from_secs(2));
    // Another bonded sender, whose token is its own: both of its paths
    // are strangers to the receiver.
    let third = path(to, "2mbit", Duration::from_millis(10), None);
    let fourth = path(to, "2mbit", Duration::from_millis(10), None);
    let other = format!(
        "dccp://{}?paths={}",
        third.local_addr(),
        fourth.local_addr()
    );
    let refused = send::run(generated_live(&other, 3), Arc::new(AtomicBool::new(false)));
    assert!(
        matches!(refused, Err(SendError::ReceiverBusy(_))),
        "{refused:?}"
    );
    let sent = running.join().unwrap().unwrap();
    let received = receiver.join().unwrap().unwrap();
    assert_eq!(received.paths_joined, 1);
    assert!(received.busy_refusals > 0);
    assert!(received.frames_written * 100 >= sent.frames_sent * 95);
    for link in [first, second, third, fourth] {
        link.stop().unwrap();
    }
}
