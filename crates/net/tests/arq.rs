//! Session-level ARQ and dead-connection failover over real sockets
//! (issue 12), each against the same run without the feature:
//!
//! - a real `.264` sent live through the link emulator with 3 % random
//!   loss on a path TFRC's share easily carries: with `arq=on` the
//!   receiver asks for what it lost, gets nearly all of it in time, and
//!   (nearly) no frame is damaged; with `arq=off` many are;
//! - one connection of a `conns=4` session black-holed mid-stream (a
//!   test-only forwarder, `support/blackhole.rs`, drops its datagrams both
//!   ways): the sender finds it dead, resends what it held on the others,
//!   and the stream reaches its end with nearly every frame, the receiver
//!   writing frames all along.
//!
//! The tests run one at a time (a lock), so that one's traffic does not
//! take the other's processor time; each is bounded by its durations.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // a real-time test measures with the real clock

mod support;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use fairstream_net::recv::{OutputSpec, RecvError, RecvReport};
use fairstream_net::send::{self, Mode, SendConfig, SendReport, SourceSpec};
use fairstream_sim::loss::LossConfig;

use support::blackhole::{data_source_port, Blackhole, BlackholeStats};
use support::{bind_receiver, emulate, json_lines, stats, temp_path};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs a receiver bound with `query` on a thread; its address and its
/// result (a failed stream still has a report).
fn receiver(
    query: &str,
    output: &Path,
    stats_json: Option<&Path>,
) -> (
    std::net::SocketAddr,
    thread::JoinHandle<Result<RecvReport, RecvError>>,
) {
    let (to, receiver) = bind_receiver(
        query,
        OutputSpec::File(output.to_path_buf()),
        Duration::from_secs(60),
        stats_json.map(Path::to_path_buf),
    );
    let handle = thread::spawn(move || receiver.run(&AtomicBool::new(false)));
    (to, handle)
}

/// What a run of the ARQ test gave.
struct Outcome {
    sent: SendReport,
    received: RecvReport,
    channel_losses: u64,
}

/// Sends the clip live (25 frames/s, 576 kbit/s) through a 2 Mbit/s
/// link, 3 ms each way, 3 % random loss forward, with `query` on both
/// URLs. The short RTT keeps TFRC's allowed rate at this loss above the
/// stream's (at 20 ms each way it falls below it, and the sender drops
/// frames late whether or not it retransmits): a damaged frame is the
/// link's loss.
fn lossy_run(input: &Path, query: &str, name: &str) -> Outcome {
    let output = temp_path(name);
    let (to, receiving) = receiver(query, &output, None);
    let link = emulate(
        to,
        "2mbit",
        Duration::from_millis(3),
        LossConfig::Bernoulli { p: 0.03 },
    );
    let url = format!("dccp://{}{query}", link.local_addr())
        .parse()
        .unwrap();
    let mut config = SendConfig::new(SourceSpec::File(input.to_path_buf()), url);
    config.mode = Mode::Live;
    config.duration = Some(Duration::from_secs(40));
    config.stats = stats(Duration::from_millis(500), None);
    let sent = send::run(config, Arc::new(AtomicBool::new(false))).unwrap();
    let received = receiving.join().unwrap().unwrap();
    let link_stats = link.stop().unwrap();
    Outcome {
        sent,
        received,
        channel_losses: link_stats.forward.channel_losses,
    }
}

#[test]
fn arq_repairs_random_loss_that_damages_frames_without_it() {
    let _serial = serial();
    let Some(input) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    let on = lossy_run(&input, "?arq=on", "arq-on.264");
    let off = lossy_run(&input, "?arq=off", "arq-off.264");
    for (name, o) in [("arq=on", &on), ("arq=off", &off)] {
        eprintln!(
            "{name}: {} frames sent ({} late), {} written ({} complete, {} damaged); link lost {}; \
             receiver asked {} recovered {} too late {}; sender requested {} resent {} too late {}",
            o.sent.frames_sent,
            o.sent.frames_late,
            o.received.frames_written,
            o.received.frames_complete,
            o.received.frames_damaged,
            o.channel_losses,
            o.received.arq_requested,
            o.received.arq_recovered,
            o.received.arq_too_late,
            o.sent.arq_requested,
            o.sent.arq_retransmitted,
            o.sent.arq_too_late,
        );
    }
    for o in [&on, &off] {
        assert_eq!(o.received.stopped_by, "closed");
        assert!(o.channel_losses > 0, "the link lost nothing");
    }
    // Without ARQ nothing is asked for nor resent, and 3 % loss of a
    // stream of 14-slice frames damages about a third of them.
    assert_eq!(off.received.arq_requested, 0);
    assert_eq!(off.sent.arq_retransmitted, 0);
    assert!(
        off.received.frames_damaged >= 30,
        "{}",
        off.received.frames_damaged
    );
    // With it the receiver asks, the sender resends, and what was asked
    // for nearly all comes in time.
    let asked = on.received.arq_requested;
    assert!(asked > 0);
    assert!(on.sent.arq_retransmitted > 0);
    assert!(
        on.received.arq_recovered * 10 >= asked * 9,
        "recovered {} of {asked}",
        on.received.arq_recovered
    );
    assert!(
        on.received.frames_damaged * 10 <= off.received.frames_damaged,
        "damaged with ARQ {}, without {}",
        on.received.frames_damaged,
        off.received.frames_damaged
    );
    assert!(on.received.frames_written + 3 >= on.sent.frames_sent);
}

/// What a run with a black-holed connection gave.
struct Failover {
    sent: SendReport,
    received: Result<RecvReport, RecvError>,
    hole: BlackholeStats,
    /// The receiver's `frames_written` in each statistics line, with its
    /// time (s).
    written: Vec<(f64, u64)>,
}

/// Sends generated video live (25 frames/s, an IDR every 25 frames) for
/// `seconds` over four connections split by `policy`, through a forwarder
/// that black-holes one connection `after` its start and a link of 20 ms
/// each way.
fn black_holed_run(policy: &str, seconds: u64, after: Duration) -> Failover {
    let output = temp_path(&format!("blackhole-{policy}.264"));
    let recv_json = temp_path(&format!("blackhole-{policy}.jsonl"));
    let (to, receiving) = receiver("", &output, Some(&recv_json));
    let link = emulate(to, "8mbit", Duration::from_millis(20), LossConfig::None);
    let hole = Blackhole::start(link.local_addr(), after);
    let url = format!(
        "dccp://{}?conns=4&controller=fixed&policy={policy}",
        hole.local_addr()
    )
    .parse()
    .unwrap();
    let mut config = SendConfig::new(
        SourceSpec::Generated {
            width: 176,
            height: 144,
            gop: 25,
            initial_bitrate_bps: 300_000,
        },
        url,
    );
    config.mode = Mode::Live;
    config.duration = Some(Duration::from_secs(seconds));
    config.stats = stats(Duration::from_millis(500), None);
    let sent = send::run(config, Arc::new(AtomicBool::new(false))).unwrap();
    let received = receiving.join().unwrap();
    let hole = hole.stop();
    link.stop().unwrap();
    let written = json_lines(&recv_json)
        .iter()
        .filter_map(|l| Some((l["time_s"].as_f64()?, l["frames_written"].as_u64()?)))
        .collect();
    Failover {
        sent,
        received,
        hole,
        written,
    }
}

fn a_black_holed_connection_is_failed_over(policy: &str) {
    let _serial = serial();
    let after = Duration::from_secs(5);
    let run = black_holed_run(policy, 16, after);
    let received = match &run.received {
        Ok(report) => report,
        Err(error) => panic!("the receiver failed: {error}; {:?}", error.report()),
    };
    eprintln!(
        "{policy}: black-holed port {:?} at {:?} ({} datagrams dropped forward, {} back); \
         sender: {} frames sent, {} late, {} dead connections, {} lost, {} resent on request; \
         receiver: {} frames written ({} complete, {} damaged), {} stalls ({:.2} s), \
         {} gaps skipped, stopped by {}",
        run.hole.port,
        run.hole.chosen_after,
        run.hole.dropped_forward,
        run.hole.dropped_backward,
        run.sent.frames_sent,
        run.sent.frames_late,
        run.sent.dead_connections,
        run.sent.connections_lost,
        run.sent.arq_retransmitted,
        received.frames_written,
        received.frames_complete,
        received.frames_damaged,
        received.stalls,
        received.stall_time_s,
        received.reorder_skipped,
        received.stopped_by,
    );
    eprintln!("frames written over time: {:?}", run.written);
    // The black hole took a connection that was carrying data.
    assert!(run.hole.port.is_some());
    assert!(run.hole.dropped_forward > 0);
    // The sender found it dead and went on with the others; the live ones
    // answered in time (feedback once per RTT) and were not taken for dead.
    assert!(
        (1..=2).contains(&run.sent.dead_connections),
        "{}",
        run.sent.dead_connections
    );
    assert_eq!(run.sent.stopped_by, "duration");
    // The stream reached its end with nearly every frame.
    assert!(run.sent.frames_sent >= 300, "{}", run.sent.frames_sent);
    assert!(
        received.frames_written * 100 >= run.sent.frames_sent * 95,
        "{} of {} frames written",
        received.frames_written,
        run.sent.frames_sent
    );
    assert!(
        received.frames_complete * 100 >= run.sent.frames_sent * 95,
        "{} of {} frames complete",
        received.frames_complete,
        run.sent.frames_sent
    );
    // The receiver went on writing frames after the black hole: no
    // statistics interval of 2 s from then to the end without a frame.
    let from = after.as_secs_f64() + 2.0;
    let to = run.sent.elapsed_s - 1.0;
    let lines: Vec<&(f64, u64)> = run
        .written
        .iter()
        .filter(|(t, _)| (from..to).contains(t))
        .collect();
    assert!(lines.len() >= 10, "{lines:?}");
    for pair in lines.windows(5) {
        assert!(
            pair[4].1 > pair[0].1,
            "no frame written between {:.1} s and {:.1} s",
            pair[0].0,
            pair[4].0
        );
    }
}

#[test]
fn a_black_holed_connection_of_a_gop_interleaved_session_is_failed_over() {
    a_black_holed_connection_is_failed_over("gop-interleave");
}

#[test]
fn a_black_holed_connection_of_an_earliest_split_session_is_failed_over() {
    a_black_holed_connection_is_failed_over("earliest");
}

#[test]
fn only_a_data_packet_names_the_connection_to_black_hole() {
    // Source 40001, dest 5004, data offset, CCVal, checksum, then the type
    // (RFC 4340 §5.1: Res 3 bits, Type 4 bits, X 1 bit).
    let mut packet = [0x9c, 0x41, 0x13, 0x8c, 4, 0, 0, 0, 2 << 1, 0, 0, 0];
    assert_eq!(data_source_port(&packet), Some(40_001));
    packet[8] = 4 << 1 | 1; // DCCP-DataAck
    assert_eq!(data_source_port(&packet), Some(40_001));
    packet[8] = 3 << 1 | 1; // DCCP-Ack
    assert_eq!(data_source_port(&packet), None);
    assert_eq!(data_source_port(&packet[..8]), None);
}
