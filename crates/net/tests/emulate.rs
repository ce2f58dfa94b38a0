//! The link emulator over loopback: real sockets, the real clock, the
//! simulator's link models. Each test sends paced UDP traffic through an
//! in-process emulator to a sink (or echo server) and measures, at the
//! sink, what the link let through: throughput, loss, delay.
//!
//! The tests run one at a time (a lock), so that they do not take each
//! other's processor time, and each stops by itself within a few seconds.

// Tests measure real time, which only `net` and `cli` may read (clippy.toml).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use fairstream_net::emulate::{
    parse_loss, DirectionConfig, Emulator, EmulatorConfig, EmulatorHandle, EmulatorStats,
};
use fairstream_proto::units::Rate;
use fairstream_sim::link::Capacity;
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::{Limit, QueueConfig};
use fairstream_sim::trace::{Trace, OPPORTUNITY_BYTES};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One datagram as the sink saw it.
#[derive(Clone, Copy, Debug)]
struct Received {
    at: Instant,
    sequence: u64,
    bytes: usize,
}

/// A UDP socket on its own thread that records what arrives and, if asked,
/// echoes it back.
struct Sink {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Received>>,
}

impl Sink {
    fn start(echo: bool) -> Sink {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(10)))
            .unwrap();
        let address = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            let mut received = Vec::new();
            let mut buffer = vec![0u8; 65_536];
            while !flag.load(Ordering::Relaxed) {
                if let Ok((n, from)) = socket.recv_from(&mut buffer) {
                    let at = Instant::now();
                    received.push(Received {
                        at,
                        sequence: sequence_of(&buffer[..n]),
                        bytes: n,
                    });
                    if echo {
                        socket.send_to(&buffer[..n], from).unwrap();
                    }
                }
            }
            received
        });
        Sink {
            address,
            stop,
            thread,
        }
    }

    fn finish(self) -> Vec<Received> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

fn sequence_of(payload: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    let n = payload.len().min(8);
    bytes[..n].copy_from_slice(&payload[..n]);
    u64::from_be_bytes(bytes)
}

/// Sends `count` datagrams of `size` bytes numbered from 0, paced at
/// `rate_bps` (in small bursts every few hundred microseconds).
fn send_paced(socket: &UdpSocket, to: SocketAddr, size: usize, rate_bps: f64, count: u64) {
    let per_second = rate_bps / (8.0 * size as f64);
    let start = Instant::now();
    let mut payload = vec![0u8; size];
    let mut sent = 0u64;
    while sent < count {
        let due = ((start.elapsed().as_secs_f64() * per_second) as u64 + 1).min(count);
        while sent < due {
            payload[..8].copy_from_slice(&sent.to_be_bytes());
            socket.send_to(&payload, to).unwrap();
            sent += 1;
        }
        thread::sleep(Duration::from_micros(300));
    }
}

fn client() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").unwrap()
}

fn start(config: EmulatorConfig) -> EmulatorHandle {
    Emulator::bind(config).unwrap().spawn().unwrap()
}

fn config_to(upstream: SocketAddr, forward: DirectionConfig) -> EmulatorConfig {
    let mut config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), upstream);
    config.forward = forward;
    config
}

fn fixed(rate: &str) -> Option<Capacity> {
    Some(Capacity::Fixed(rate.parse().unwrap()))
}

/// Payload bits per second arriving in [from, to) of the sink's records.
fn rate_between(received: &[Received], from: Instant, to: Instant, overhead: usize) -> f64 {
    let bytes: usize = received
        .iter()
        .filter(|r| r.at >= from && r.at < to)
        .map(|r| r.bytes + overhead)
        .sum();
    8.0 * bytes as f64 / (to - from).as_secs_f64()
}

/// Offers `factor` × the link rate for `seconds` and returns the payload
/// throughput measured at the sink over the last seconds but the first.
fn overload_throughput(rate: &str, queue: usize, factor: f64, seconds: f64) -> (f64, f64) {
    const SIZE: usize = 1200;
    let sink = Sink::start(false);
    let link: Rate = rate.parse().unwrap();
    let emulator = start(config_to(
        sink.address,
        DirectionConfig {
            capacity: fixed(rate),
            queue: QueueConfig::DropTail {
                limit: Limit::Packets(queue),
            },
            ..DirectionConfig::default()
        },
    ));
    let offered = factor * link.bits_per_sec();
    let count = (offered * seconds / (8.0 * SIZE as f64)) as u64;
    let started = Instant::now();
    send_paced(&client(), emulator.local_addr(), SIZE, offered, count);
    let sent_until = Instant::now();
    let stats = emulator.stop().unwrap();
    let received = sink.finish();
    // Steady state: from 1 s in to the end of the sending.
    let measured = rate_between(&received, started + Duration::from_secs(1), sent_until, 0);
    // The link carries payload + 28 header bytes at its rate.
    let expected = link.bits_per_sec() * SIZE as f64 / (SIZE + 28) as f64;
    eprintln!(
        "{rate}: offered {:.3} Mbit/s, payload throughput {:.3} Mbit/s (expected {:.3}), \
         queue drops {}, lateness mean {:?} max {:?}",
        offered / 1e6,
        measured / 1e6,
        expected / 1e6,
        stats.forward.queue_drops,
        stats.forward.lateness_mean(),
        stats.forward.lateness_max,
    );
    assert!(stats.forward.queue_drops > 0, "the link was not overloaded");
    (measured, expected)
}

#[test]
fn throughput_at_2_mbit_under_overload() {
    let _serial = serial();
    let (measured, expected) = overload_throughput("2mbit", 50, 1.5, 4.0);
    assert!(
        (measured / expected - 1.0).abs() < 0.05,
        "{measured} vs {expected}"
    );
}

#[test]
fn throughput_at_20_mbit_under_overload() {
    let _serial = serial();
    // 200 packets of queue (98 ms at 20 Mbit/s) keep the link busy through a
    // stall of the sending thread on a loaded machine.
    let (measured, expected) = overload_throughput("20mbit", 200, 1.3, 3.0);
    assert!(
        (measured / expected - 1.0).abs() < 0.1,
        "{measured} vs {expected}"
    );
}

#[test]
fn round_trip_grows_by_twice_the_delay() {
    let _serial = serial();
    let echo = Sink::start(true);
    let delay = Duration::from_millis(40);
    let mut config = config_to(
        echo.address,
        DirectionConfig {
            capacity: fixed("2mbit"),
            delay,
            ..DirectionConfig::default()
        },
    );
    config.backward.delay = delay;
    let emulator = start(config);
    let socket = client();
    socket
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let mut rtts = Vec::new();
    let mut buffer = [0u8; 256];
    for sequence in 0..15u64 {
        let mut payload = [0u8; 100];
        payload[..8].copy_from_slice(&sequence.to_be_bytes());
        let sent = Instant::now();
        socket.send_to(&payload, emulator.local_addr()).unwrap();
        let (n, _) = socket.recv_from(&mut buffer).unwrap();
        rtts.push(sent.elapsed());
        assert_eq!(sequence_of(&buffer[..n]), sequence);
    }
    let stats = emulator.stop().unwrap();
    echo.finish();
    rtts.sort();
    let median = rtts[rtts.len() / 2];
    // 2 × 40 ms, plus 128 bytes at 2 Mbit/s (0.5 ms), plus loopback and
    // scheduling.
    eprintln!(
        "round trips with 2 × 40 ms: min {:?} median {:?} max {:?}; lateness mean {:?}",
        rtts[0],
        median,
        rtts[rtts.len() - 1],
        stats.forward.lateness_mean()
    );
    assert!(rtts[0] >= 2 * delay, "{rtts:?}");
    // Generous above: a loaded machine delays the threads (measured: a
    // median of 88.7 ms with both cores busy with other work).
    assert!(median < 2 * delay + Duration::from_millis(30), "{rtts:?}");
    assert_eq!(stats.backward.sent_packets, 15);
}

/// Sends `count` numbered datagrams through a direction losing with
/// `loss` (no capacity limit, so nothing queues) and returns which arrived.
/// What crossed an emulated link with channel `loss`: the channel's own
/// loss rate (its losses over the datagrams it took in, exact whatever the
/// sockets did), and which datagrams reached the sink, if the sockets
/// dropped almost none (at most 0.5 %) so that the pattern is the channel's.
struct Crossing {
    channel_loss: f64,
    arrived: Option<Vec<bool>>,
}

fn arrivals_through(loss: LossConfig, count: u64) -> Crossing {
    let sink = Sink::start(false);
    let emulator = start(config_to(
        sink.address,
        DirectionConfig {
            loss,
            ..DirectionConfig::default()
        },
    ));
    send_paced(&client(), emulator.local_addr(), 200, 4e6, count);
    thread::sleep(Duration::from_millis(50));
    let stats = emulator.stop().unwrap();
    let received = sink.finish();
    assert!(
        stats.forward.received_packets >= count * 9 / 10,
        "the emulator took in only {} of {count}: {stats:?}",
        stats.forward.received_packets
    );
    let channel_loss = stats.forward.channel_losses as f64 / stats.forward.received_packets as f64;
    // The sockets' buffers on the way in and out overflow only when a
    // thread stalls for tens of milliseconds (a loaded machine); then the
    // arrival pattern is not the channel's alone and is not judged.
    let kernel_in = count - stats.forward.received_packets;
    let kernel_out =
        stats.forward.received_packets - stats.forward.channel_losses - received.len() as u64;
    let arrived = if kernel_in + kernel_out <= count / 200 {
        let mut arrived = vec![false; count as usize];
        for r in &received {
            arrived[r.sequence as usize] = true;
        }
        Some(arrived)
    } else {
        eprintln!(
            "the sockets dropped {kernel_in} on the way in and {kernel_out} on the way out; \
             judging the channel's counters only"
        );
        None
    };
    Crossing {
        channel_loss,
        arrived,
    }
}

fn loss_rate(arrived: &[bool]) -> f64 {
    arrived.iter().filter(|&&a| !a).count() as f64 / arrived.len() as f64
}

#[test]
fn bernoulli_loss_is_near_the_configured_rate() {
    let _serial = serial();
    let crossing = arrivals_through(parse_loss("10%").unwrap(), 4000);
    let measured = crossing.channel_loss;
    if let Some(arrived) = &crossing.arrived {
        // Every datagram the channel let through reached the sink.
        assert!((loss_rate(arrived) - measured).abs() < 0.005);
    }
    // σ = √(0.1 · 0.9 / 4000) ≈ 0.0047.
    eprintln!(
        "Bernoulli 10 %: measured {:.4} over 4000 datagrams",
        measured
    );
    assert!((measured - 0.1).abs() < 0.02, "{measured}");
}

#[test]
fn gilbert_elliott_loss_is_near_the_stationary_rate_and_bursty() {
    let _serial = serial();
    // Paper 000's channel: π_bad = 0.05/0.11, long-run loss ≈ 0.0282.
    let config = parse_loss("ge:0.95,0.94,0.01,0.05").unwrap();
    let expected = config.build().unwrap().steady_state_loss();
    let measured = arrivals_through(config, 10_000).channel_loss;
    eprintln!("Gilbert-Elliott paper 000: measured {measured:.4}, stationary {expected:.4}");
    assert!(
        (measured - expected).abs() < 0.012,
        "{measured} vs {expected}"
    );

    // A burstier chain shows its memory: after a loss, another is likelier.
    let config = parse_loss("ge:0.9,0.8,0,0.5").unwrap();
    let expected = config.build().unwrap().steady_state_loss();
    let crossing = arrivals_through(config, 6000);
    let measured = crossing.channel_loss;
    eprintln!("Gilbert-Elliott 0.9,0.8,0,0.5: measured {measured:.4}, stationary {expected:.4}");
    assert!(
        (measured - expected).abs() < 0.04,
        "{measured} vs {expected}"
    );
    let Some(arrived) = crossing.arrived else {
        return;
    };
    let after_loss: Vec<bool> = arrived
        .windows(2)
        .filter(|w| !w[0])
        .map(|w| !w[1])
        .collect();
    let conditional = after_loss.iter().filter(|&&l| l).count() as f64 / after_loss.len() as f64;
    eprintln!("P(loss | loss before) {conditional:.3}");
    // Stationary 1/6; after a loss the chain is in the bad state and stays
    // with 0.8, so P ≈ 0.4. Independent losses would give 1/6.
    assert!(conditional > 0.3, "{conditional}");
}

#[test]
fn a_mahimahi_trace_limits_the_rate_to_its_capacity() {
    let _serial = serial();
    let Some(path) = fairstream_testkit::shared_file("data/traces/Verizon-LTE-short.down") else {
        return;
    };
    let trace = Trace::from_file(&path).unwrap();
    const SIZE: usize = 1400;
    let sink = Sink::start(false);
    let emulator = start(config_to(
        sink.address,
        DirectionConfig {
            capacity: Some(Capacity::Trace(trace.clone())),
            ..DirectionConfig::default()
        },
    ));
    // The trace's first seconds run at 9-12 Mbit/s: offer 20.
    let origin = Instant::now() - emulator.stats().elapsed;
    let started = Instant::now();
    send_paced(&client(), emulator.local_addr(), SIZE, 20e6, 5360);
    let sent_until = Instant::now();
    let stats = emulator.stop().unwrap();
    let received = sink.finish();
    let from = started + Duration::from_secs(1);
    // Wire bytes (payload + 28) against the opportunities of the same
    // stretch of the trace, on the emulator's clock.
    let measured = rate_between(&received, from, sent_until, 28);
    let opportunities = trace.opportunities_through(sent_until - origin)
        - trace.opportunities_through(from - origin);
    let capacity = 8.0 * (opportunities * u64::from(OPPORTUNITY_BYTES)) as f64
        / (sent_until - from).as_secs_f64();
    eprintln!(
        "Verizon-LTE-short.down: {:.3} Mbit/s on the wire, trace capacity {:.3} Mbit/s \
         over the same {:.2} s (trace mean {:.3}); queue drops {}",
        measured / 1e6,
        capacity / 1e6,
        (sent_until - from).as_secs_f64(),
        trace.mean_rate().bits_per_sec() / 1e6,
        stats.forward.queue_drops
    );
    assert!(stats.forward.queue_drops > 0, "not overloaded");
    assert!(
        (measured / capacity - 1.0).abs() < 0.1,
        "{measured} vs {capacity}"
    );
}

/// Polls the emulator's counters every 10 ms until `done` holds of them,
/// for `limit` at most; returns the last ones read.
fn stats_once(
    emulator: &EmulatorHandle,
    limit: Duration,
    done: impl Fn(&EmulatorStats) -> bool,
) -> EmulatorStats {
    let started = Instant::now();
    loop {
        let stats = emulator.stats();
        if done(&stats) || started.elapsed() > limit {
            return stats;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn replies_go_back_to_the_client_they_answer() {
    let _serial = serial();
    let echo = Sink::start(true);
    let mut config = config_to(echo.address, DirectionConfig::default());
    config.max_clients = 2;
    let emulator = start(config);
    let clients = [client(), client(), client()];
    let mut buffer = [0u8; 64];
    for (round, socket) in clients[..2].iter().cycle().take(4).enumerate() {
        socket
            .set_read_timeout(Some(Duration::from_secs(1)))
            .unwrap();
        let sequence = 100 + round as u64;
        socket
            .send_to(&sequence.to_be_bytes(), emulator.local_addr())
            .unwrap();
        let (n, from) = socket.recv_from(&mut buffer).unwrap();
        assert_eq!(from, emulator.local_addr());
        assert_eq!(sequence_of(&buffer[..n]), sequence);
    }
    // A third client finds the table of two full of answered clients: it
    // is refused, and displaces neither.
    clients[2]
        .send_to(&7u64.to_be_bytes(), emulator.local_addr())
        .unwrap();
    let seen = stats_once(&emulator, Duration::from_secs(2), |s| {
        s.forward.received_packets == 5
    });
    let stats = emulator.stop().unwrap();
    echo.finish();
    eprintln!("{seen:?}");
    assert_eq!(seen.forward.received_packets, 5);
    assert_eq!(stats.refused_datagrams, 1);
    assert_eq!(stats.forward.unroutable, 1);
    assert_eq!((stats.clients, stats.clients_evicted), (2, 0));
    assert_eq!(stats.backward.sent_packets, 4);
    assert_eq!(stats.upstream_threads_max, 2);
    // Nothing came back to the refused client.
    clients[2].set_nonblocking(true).unwrap();
    assert!(clients[2].recv_from(&mut buffer).is_err());
}

#[test]
fn idle_clients_are_forgotten_and_their_threads_joined() {
    let _serial = serial();
    let echo = Sink::start(true);
    let mut config = config_to(echo.address, DirectionConfig::default());
    config.client_idle = Duration::from_millis(300);
    let emulator = start(config);
    let socket = client();
    socket
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let mut buffer = [0u8; 64];
    let mut round_trip = |sequence: u64| {
        socket
            .send_to(&sequence.to_be_bytes(), emulator.local_addr())
            .unwrap();
        let (n, _) = socket.recv_from(&mut buffer).unwrap();
        assert_eq!(sequence_of(&buffer[..n]), sequence);
    };
    round_trip(1);
    // (The counters are published a few milliseconds late.)
    let answered = stats_once(&emulator, Duration::from_secs(1), |s| {
        s.backward.sent_packets == 1
    });
    assert_eq!((answered.clients, answered.upstream_threads), (1, 1));
    // Nothing crosses for 300 ms: the client is forgotten, its thread
    // stopped and joined (within a sweep, 100 ms, and a receive poll).
    let forgotten = stats_once(&emulator, Duration::from_secs(3), |s| {
        s.clients_expired == 1 && s.upstream_threads == 0
    });
    assert_eq!(
        (
            forgotten.clients,
            forgotten.clients_expired,
            forgotten.upstream_threads
        ),
        (0, 1, 0),
        "{forgotten:?}"
    );
    // It comes back as a new client, with a new upstream socket.
    round_trip(2);
    let stats = emulator.stop().unwrap();
    echo.finish();
    assert_eq!((stats.clients, stats.clients_expired), (1, 1));
    assert_eq!(stats.backward.sent_packets, 2);
    assert_eq!(stats.refused_datagrams, 0);
}

#[test]
fn nothing_listening_upstream_is_not_an_error() {
    let _serial = serial();
    // A port with (most likely) no one behind it: sends fail or vanish, the
    // emulator keeps running and counts.
    let unused = UdpSocket::bind("127.0.0.1:0").unwrap();
    let upstream = unused.local_addr().unwrap();
    drop(unused);
    let emulator = start(config_to(upstream, DirectionConfig::default()));
    let socket = client();
    for _ in 0..20 {
        socket.send_to(b"hello", emulator.local_addr()).unwrap();
        thread::sleep(Duration::from_millis(2));
    }
    thread::sleep(Duration::from_millis(50));
    assert!(emulator.is_running());
    let stats = emulator.stop().unwrap();
    assert_eq!(stats.forward.received_packets, 20);
    assert_eq!(
        stats.forward.sent_packets + stats.forward.send_errors,
        20,
        "{stats:?}"
    );
}

/// Issue 13: `--to` equal to `--listen` forwarded one datagram forever.
#[test]
fn an_emulator_that_would_forward_to_itself_is_refused() {
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let error = fairstream_net::emulate::Emulator::bind(
        fairstream_net::emulate::EmulatorConfig::new(address, address),
    )
    .err()
    .expect("refused");
    assert!(error.to_string().contains("forward to itself"), "{error}");
}
