//! Measurements of the link emulator over loopback, printed as tables (they
//! measure; they do not pass or fail on a figure, STYLE.md rule 7):
//!
//! ```sh
//! cargo test -p fairstream-net --test emulate_measure -- --ignored --nocapture --test-threads 1
//! ```
//!
//! - `accuracy`: at 2 and 20 Mbit/s, throughput under overload against the
//!   configured rate, channel loss against the configured loss, and the
//!   one-way delay added at light load against the configured delay.
//! - `timer_precision`: how late datagrams leave, against the processor
//!   time spent, for several [`EmulatorConfig::spin`] settings.
//! - `forwarding_cost`: how many datagrams per second the emulator forwards
//!   with no limit configured, and the processor time its threads use.
//! - `flood_cost`: the processor time a flood from many source ports costs
//!   the emulator per datagram, against one client sending as much, and the
//!   places and threads it gets (issue 13).

// Measures real time, which only `net` and `cli` may read (clippy.toml).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use fairstream_net::emulate::{
    parse_loss, parse_queue, DirectionConfig, Emulator, EmulatorConfig, EmulatorStats, DEFAULT_SPIN,
};
use fairstream_proto::units::Rate;
use fairstream_sim::link::Capacity;

/// The measurements' common time origin: the sender writes its send time in
/// each payload, the sink reads it on arrival (one process, one clock).
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn nanos_since_epoch() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

/// Records (arrival time, one-way delay, size) of every datagram.
struct Sink {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<(Instant, Duration, usize)>>,
}

impl Sink {
    fn start() -> Sink {
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
                if let Ok((n, _)) = socket.recv_from(&mut buffer) {
                    let now = nanos_since_epoch();
                    let sent = u64::from_be_bytes(buffer[..8].try_into().unwrap());
                    received.push((
                        Instant::now(),
                        Duration::from_nanos(now.saturating_sub(sent)),
                        n,
                    ));
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

    fn finish(self) -> Vec<(Instant, Duration, usize)> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// Sends datagrams of `size` bytes at `rate_bps` for `seconds` (as fast as
/// possible when the rate is infinite), each stamped with its send time.
fn send(to: SocketAddr, size: usize, rate_bps: f64, seconds: f64) -> u64 {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let per_second = rate_bps / (8.0 * size as f64);
    let start = Instant::now();
    let mut payload = vec![0u8; size];
    let mut sent = 0u64;
    while start.elapsed().as_secs_f64() < seconds {
        let due = if per_second.is_finite() {
            (start.elapsed().as_secs_f64() * per_second) as u64 + 1
        } else {
            sent + 64
        };
        while sent < due {
            payload[..8].copy_from_slice(&nanos_since_epoch().to_be_bytes());
            // Beyond what loopback takes, the kernel may refuse: not counted.
            if socket.send_to(&payload, to).is_ok() {
                sent += 1;
            }
        }
        if per_second.is_finite() {
            thread::sleep(Duration::from_micros(300));
        }
    }
    sent
}

fn run(forward: DirectionConfig, size: usize, rate_bps: f64, seconds: f64) -> Run {
    run_with_spin(forward, size, rate_bps, seconds, DEFAULT_SPIN)
}

fn run_with_spin(
    forward: DirectionConfig,
    size: usize,
    rate_bps: f64,
    seconds: f64,
    spin: Duration,
) -> Run {
    let sink = Sink::start();
    let mut config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), sink.address);
    config.forward = forward;
    config.spin = spin;
    let emulator = Emulator::bind(config).unwrap().spawn().unwrap();
    let cpu_before = emulator_cpu_seconds();
    let started = Instant::now();
    let sent = send(emulator.local_addr(), size, rate_bps, seconds);
    let sent_until = Instant::now();
    thread::sleep(Duration::from_millis(300));
    let cpu = emulator_cpu_seconds() - cpu_before;
    let stats = emulator.stop().unwrap();
    Run {
        sent,
        started,
        sent_until,
        received: sink.finish(),
        stats,
        cpu,
    }
}

struct Run {
    sent: u64,
    started: Instant,
    sent_until: Instant,
    received: Vec<(Instant, Duration, usize)>,
    stats: EmulatorStats,
    cpu: f64,
}

impl Run {
    /// Payload bits per second arriving from 1 s in to the end of sending.
    fn throughput(&self) -> f64 {
        let from = self.started + Duration::from_secs(1);
        let bytes: usize = self
            .received
            .iter()
            .filter(|(at, _, _)| *at >= from && *at < self.sent_until)
            .map(|(_, _, n)| n)
            .sum();
        8.0 * bytes as f64 / (self.sent_until - from).as_secs_f64()
    }

    fn delays(&self) -> Vec<Duration> {
        let mut delays: Vec<Duration> = self.received.iter().map(|(_, d, _)| *d).collect();
        delays.sort();
        delays
    }
}

/// Processor time (user + system) of this process's emulator threads, from
/// /proc/self/task/*/stat (0 where /proc is missing).
fn emulator_cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let ticks: u64 = tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.starts_with("emulate"))
        })
        .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
        .map(|stat| {
            // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
            let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0)
        })
        .sum();
    // USER_HZ is 100 on every Linux architecture that matters here.
    ticks as f64 / 100.0
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn accuracy() {
    const SIZE: usize = 1200;
    println!(
        "| rate | payload at the sink | expected payload (rate × 1200/1228 × (1 − measured loss)) | configured loss | measured channel loss | configured one-way delay | added delay min / median / p99 at 20 % load |"
    );
    println!("|---|---|---|---|---|---|---|");
    for rate in ["2mbit", "20mbit"] {
        let link: Rate = rate.parse().unwrap();
        let delay = Duration::from_millis(20);
        let forward = DirectionConfig {
            capacity: Some(Capacity::Fixed(link)),
            delay,
            queue: parse_queue("50").unwrap(),
            loss: parse_loss("5%").unwrap(),
            ..DirectionConfig::default()
        };
        let overload = run(forward.clone(), SIZE, 1.5 * link.bits_per_sec(), 4.0);
        let link_stats = overload.stats.forward.link.unwrap();
        let channel_loss = link_stats.channel_losses as f64 / link_stats.packets_sent as f64;
        let expected =
            link.bits_per_sec() * SIZE as f64 / (SIZE + 28) as f64 * (1.0 - channel_loss);
        // Light load: the one-way delay less the configured delay and the
        // serialisation time is what the emulator adds (timers, sockets).
        let light = run(
            DirectionConfig {
                loss: parse_loss("none").unwrap(),
                ..forward
            },
            SIZE,
            0.2 * link.bits_per_sec(),
            3.0,
        );
        let serialisation = Duration::from_secs_f64(8.0 * (SIZE + 28) as f64 / link.bits_per_sec());
        let added: Vec<Duration> = light
            .delays()
            .iter()
            .map(|d| d.saturating_sub(delay + serialisation))
            .collect();
        println!(
            "| {rate} | {:.4} Mbit/s | {:.4} Mbit/s | 5 % | {:.2} % of {} | {delay:?} | {:?} / {:?} / {:?} |",
            overload.throughput() / 1e6,
            expected / 1e6,
            100.0 * channel_loss,
            link_stats.packets_sent,
            added[0],
            added[added.len() / 2],
            added[added.len() * 99 / 100],
        );
        eprintln!(
            "{rate}: overload sent {} received {}, lateness mean {:?} max {:?}; light-load lateness mean {:?} max {:?}",
            overload.sent,
            overload.received.len(),
            overload.stats.forward.lateness_mean(),
            overload.stats.forward.lateness_max,
            light.stats.forward.lateness_mean(),
            light.stats.forward.lateness_max,
        );
    }
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn forwarding_cost() {
    println!("| offered | datagrams/s into the emulator | forwarded/s | emulator CPU | CPU per datagram |");
    println!("|---|---|---|---|---|");
    let shaped = |rate: &str| DirectionConfig {
        capacity: Some(Capacity::Fixed(rate.parse().unwrap())),
        ..DirectionConfig::default()
    };
    for (label, link, size, rate) in [
        (
            "unlimited link, 10k datagrams/s",
            DirectionConfig::default(),
            200,
            10_000.0 * 8.0 * 200.0,
        ),
        (
            "unlimited link, 50k datagrams/s",
            DirectionConfig::default(),
            200,
            50_000.0 * 8.0 * 200.0,
        ),
        (
            "unlimited link, as fast as possible",
            DirectionConfig::default(),
            200,
            f64::INFINITY,
        ),
        (
            "2 Mbit/s link, 1200-byte datagrams at 3 Mbit/s",
            shaped("2mbit"),
            1200,
            3e6,
        ),
        (
            "20 Mbit/s link, 1200-byte datagrams at 26 Mbit/s",
            shaped("20mbit"),
            1200,
            26e6,
        ),
    ] {
        let seconds = 3.0;
        let run = run(link, size, rate, seconds);
        let stats = run.stats.forward;
        let wall = (run.sent_until - run.started).as_secs_f64();
        println!(
            "| {label} (sender sent {:.0}/s) | {:.0} | {:.0} | {:.0} % of a core | {:.1} µs |",
            run.sent as f64 / wall,
            stats.received_packets as f64 / wall,
            stats.sent_packets as f64 / wall,
            100.0 * run.cpu / wall,
            1e6 * run.cpu / stats.sent_packets.max(1) as f64,
        );
    }
}

/// Sends `rate` datagrams per second of 64 bytes for `seconds`, from each
/// of `ports` sockets in turn; how many.
fn send_from_ports(to: SocketAddr, ports: usize, rate: f64, seconds: f64) -> u64 {
    let sockets: Vec<UdpSocket> = (0..ports)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed().as_secs_f64() < seconds {
        let due = (start.elapsed().as_secs_f64() * rate) as u64 + 1;
        while sent < due {
            let socket = &sockets[sent as usize % ports];
            if socket.send_to(&[0u8; 64], to).is_ok() {
                sent += 1;
            }
        }
        thread::sleep(Duration::from_micros(300));
    }
    sent
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn flood_cost() {
    println!(
        "| traffic (64-byte datagrams, 3 s, upstream never answers) | datagrams in | forwarded | refused | strangers displaced | upstream threads at most | emulator CPU | CPU per datagram |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let seconds = 3.0;
    for (label, ports, rate) in [
        ("one client, 10k datagrams/s", 1, 10_000.0),
        ("1000 ports in turn, 10k datagrams/s", 1000, 10_000.0),
        ("1000 ports in turn, 30k datagrams/s", 1000, 30_000.0),
    ] {
        let sink = Sink::start();
        let config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), sink.address);
        let emulator = Emulator::bind(config).unwrap().spawn().unwrap();
        let cpu_before = emulator_cpu_seconds();
        let started = Instant::now();
        send_from_ports(emulator.local_addr(), ports, rate, seconds);
        let wall = started.elapsed().as_secs_f64();
        thread::sleep(Duration::from_millis(300));
        let cpu = emulator_cpu_seconds() - cpu_before;
        let stats = emulator.stop().unwrap();
        sink.finish();
        let received = stats.forward.received_packets;
        println!(
            "| {label} | {received} | {} | {} | {} | {} | {:.0} % of a core | {:.1} µs |",
            stats.forward.sent_packets,
            stats.refused_datagrams,
            stats.clients_evicted,
            stats.upstream_threads_max,
            100.0 * cpu / wall,
            1e6 * cpu / received.max(1) as f64,
        );
    }
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn timer_precision() {
    println!(
        "| spin | lateness mean / max | one-way delay beyond 20 ms + serialisation: median / p99 | emulator CPU |"
    );
    println!("|---|---|---|---|");
    let link: Rate = "20mbit".parse().unwrap();
    let delay = Duration::from_millis(20);
    let serialisation = Duration::from_secs_f64(8.0 * 1228.0 / link.bits_per_sec());
    for spin_us in [0, 50, 100, 200, 500] {
        let forward = DirectionConfig {
            capacity: Some(Capacity::Fixed(link)),
            delay,
            ..DirectionConfig::default()
        };
        // 10 Mbit/s of 1200-byte datagrams, regularly spaced: little queueing.
        let run = run_with_spin(forward, 1200, 10e6, 3.0, Duration::from_micros(spin_us));
        let wall = (run.sent_until - run.started).as_secs_f64();
        let added: Vec<Duration> = run
            .delays()
            .iter()
            .map(|d| d.saturating_sub(delay + serialisation))
            .collect();
        let stats = run.stats.forward;
        println!(
            "| {spin_us} µs | {:?} / {:?} | {:?} / {:?} | {:.0} % of a core |",
            stats.lateness_mean(),
            stats.lateness_max,
            added[added.len() / 2],
            added[added.len() * 99 / 100],
            100.0 * run.cpu / wall,
        );
    }
}
