//! Real-time pacing on loopback (issue 7): fairstream's runtime (a real
//! `SenderSession` in the fixed-rate CCID 249, driven by `send::run`, to a
//! real `recv::run` in another process) beside a plain UDP blaster that
//! paces the same datagrams with the same sleep-then-spin wait, in the same
//! run.
//!
//! ```sh
//! cargo bench -p fairstream-net --bench pacing                  # 10, 100 Mbit/s and the sweep
//! cargo bench -p fairstream-net --bench pacing -- --secs 3 --rates 10,1000
//! cargo bench -p fairstream-net --bench pacing -- --rates 1000 --only fairstream   # to profile one side
//! cargo bench -p fairstream-net --bench pacing -- --encrypted --rates 100,500,1000   # the cost of passphrase=
//! ```
//!
//! With `--encrypted`, each rate also runs fairstream with a passphrase at
//! both ends (every packet sealed and opened, ChaCha20-Poly1305), and a
//! last table gives the protected run's figures as ratios to the plain
//! run's of the same rate.
//!
//! For each rate and each sender it prints the achieved rate, the loss at
//! the receiver, the sending side's CPU time per gigabit sent, and the
//! pacing error: the actual gap between two departures (each stamped when
//! its send call returned) less the requested gap s/rate. Figures are
//! measured, never asserted: a benchmark does not pass or fail on time.
//!
//! The receivers run in a child process (this binary again, with
//! `--child`), so the parent's CPU time is the sending side's alone: the
//! sender's loop thread, its socket reader thread and its file reader
//! thread for fairstream; one thread for the blaster.

// A benchmark harness: a failure is a failed run, reported by a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// It measures with the real clock.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fairstream_net::recv::{OutputSpec, Receiver, RecvConfig};
use fairstream_net::send::{self, Mode, SendConfig, SourceSpec};

/// The DCCP packet size asked for (`max_packet`), header included.
const MAX_PACKET: usize = 1400;
/// The application data of a full DCCP data packet: `max_packet` less the
/// 32 bytes `fairstream_proto::conn::DATA_PACKET_OVERHEAD` keeps for
/// headers. The fixed-rate CCID paces these bytes: a full packet's
/// requested gap is this over the rate.
const FULL_PAYLOAD: usize = MAX_PACKET - 32;
/// Datagrams at least this long are data packets (control packets are
/// under 100 bytes; the last fragment of a frame may be short, and is left
/// out of the gap statistics).
const DATA_MIN: usize = 100;
/// Datagrams at least this long carry a full payload: `FULL_PAYLOAD` plus
/// the shortest DCCP data header (16 bytes; a DataAck has 24, and an NDP
/// Count option may follow).
const FULL_MIN: usize = FULL_PAYLOAD + 16;
/// The blaster's wait: sleep until this long before the deadline, then
/// spin (as `fairstream_net::link::UdpLink::wait` does).
const SPIN: Duration = Duration::from_micros(200);
/// The blaster's catch-up credit (the fixed-rate CCID's default).
const MAX_CATCH_UP: Duration = Duration::from_millis(1);
/// The synthetic stream's frame: one slice NAL unit of this many bytes,
/// cut into full FU-A fragments.
const FRAME_BYTES: usize = 64 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        child(&args[at + 1..]);
        return;
    }
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let secs: f64 = value("--secs").map_or(4.0, |s| s.parse().expect("--secs SECONDS"));
    let rates: Vec<f64> = value("--rates")
        .unwrap_or_else(|| "10,100,200,500,1000,2000".into())
        .split(',')
        .map(|r| r.trim().parse().expect("--rates MBIT,MBIT,..."))
        .collect();
    let clk_tck = clk_tck();
    let dir = std::env::temp_dir().join(format!("fairstream-pacing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stream = dir.join("synthetic.264");
    write_synthetic_stream(&stream);

    let only = value("--only");
    let encrypted = args.iter().any(|a| a == "--encrypted");
    println!(
        "# pacing on loopback: {secs} s per run, DCCP packets of {MAX_PACKET} bytes \
         ({FULL_PAYLOAD} paced), blaster datagrams of the same size"
    );
    println!();
    println!("| Mbit/s asked | sender | achieved Mbit/s | datagrams | lost | loss | CPU s | CPU s/Gbit | loop thread CPU s | loop preempted | receiver CPU s | mean gap µs (asked) | gap error mean abs µs | p50 µs | p99 µs |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut results = Vec::new();
    let mut sealed = Vec::new();
    for &mbit in &rates {
        // `--only fairstream` or `--only blaster`: one side (to profile it).
        let fs = if only.as_deref() != Some("blaster") {
            let fs = run_fairstream(&stream, mbit, secs, clk_tck, None);
            print_row(mbit, "fairstream", &fs);
            fs
        } else {
            Measured::default()
        };
        if encrypted {
            let protected = run_fairstream(&stream, mbit, secs, clk_tck, Some(PASSPHRASE));
            print_row(mbit, "fairstream, passphrase", &protected);
            sealed.push((mbit, protected));
        }
        let blast = if only.as_deref() != Some("fairstream") {
            let blast = run_blaster(mbit, secs, clk_tck, fs.datagram_len);
            print_row(mbit, "blaster", &blast);
            blast
        } else {
            Measured::default()
        };
        results.push((mbit, fs, blast));
    }
    println!();
    println!("| Mbit/s asked | achieved fs/blaster | loss fs, blaster | CPU s/Gbit fs/blaster | gap error mean abs fs/blaster | p99 fs/blaster |");
    println!("|---|---|---|---|---|---|");
    for (mbit, fs, blast) in &results {
        println!(
            "| {mbit} | {:.3} | {:.4}, {:.4} | {:.2} | {} | {} |",
            fs.achieved_mbit / blast.achieved_mbit,
            fs.loss(),
            blast.loss(),
            fs.cpu_per_gbit() / blast.cpu_per_gbit(),
            ratio(fs.gaps.mean_abs_us, blast.gaps.mean_abs_us),
            ratio(fs.gaps.p99_us, blast.gaps.p99_us),
        );
    }
    let sustained = |pick: fn(&(f64, Measured, Measured)) -> &Measured| {
        results
            .iter()
            .filter(|r| {
                let m = pick(r);
                m.lost == 0 && m.achieved_mbit >= 0.97 * r.0 * datagram_factor(m.datagram_len)
            })
            .map(|r| r.0)
            .fold(0.0, f64::max)
    };
    println!();
    println!(
        "highest rate sustained without loss (achieved ≥ 0.97 of asked): fairstream {} Mbit/s, blaster {} Mbit/s",
        sustained(|r| &r.1),
        sustained(|r| &r.2)
    );
    if encrypted {
        println!();
        println!("| Mbit/s asked | achieved protected/plain | loss protected, plain | CPU s/Gbit protected/plain | receiver CPU s protected/plain | gap error mean abs protected/plain |");
        println!("|---|---|---|---|---|---|");
        for ((mbit, fs, _), (_, protected)) in results.iter().zip(&sealed) {
            println!(
                "| {mbit} | {} | {:.4}, {:.4} | {} | {} | {} |",
                ratio(protected.achieved_mbit, fs.achieved_mbit),
                protected.loss(),
                fs.loss(),
                ratio(protected.cpu_per_gbit(), fs.cpu_per_gbit()),
                ratio(protected.receiver_cpu_s, fs.receiver_cpu_s),
                ratio(protected.gaps.mean_abs_us, fs.gaps.mean_abs_us),
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The passphrase of `--encrypted` runs (percent-encoded for the URL).
const PASSPHRASE: &str = "pacing%20benchmark%20passphrase";
/// Bytes sealing adds to a packet: the 16-byte tag, which `max_packet`
/// includes, so a full packet paces that much less application data.
const TAG: usize = 16;

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "–".into()
    }
}

/// Datagram bytes per paced byte: the rate asked counts DCCP application
/// data; a datagram adds the DCCP header.
fn datagram_factor(datagram_len: usize) -> f64 {
    datagram_len as f64 / FULL_PAYLOAD as f64
}

fn print_row(mbit: f64, who: &str, m: &Measured) {
    println!(
        "| {mbit} | {who} | {:.2} | {} | {} | {:.4} | {:.3} | {:.3} | {} | {} | {:.3} | {:.2} ({:.2}) | {:.2} | {:.2} | {:.2} |",
        m.achieved_mbit,
        m.sent,
        m.lost,
        m.loss(),
        m.cpu_s,
        m.cpu_per_gbit(),
        m.loop_cpu_s.map_or("–".into(), |s| format!("{s:.3}")),
        m.loop_preempted.map_or("–".into(), |n| n.to_string()),
        m.receiver_cpu_s,
        m.gaps.mean_us,
        m.gaps.asked_us,
        m.gaps.mean_abs_us,
        m.gaps.p50_us,
        m.gaps.p99_us,
    );
    let _ = std::io::stdout().flush();
}

/// What one run measured.
#[derive(Debug, Default)]
struct Measured {
    /// Datagram bits per second between the first and the last data
    /// departure.
    achieved_mbit: f64,
    /// Datagrams (RTP packets for fairstream) sent and not received.
    sent: u64,
    lost: u64,
    /// The sending side's CPU time (user + system, every thread).
    cpu_s: f64,
    /// The sending loop thread's own CPU time, where it is known.
    loop_cpu_s: Option<f64>,
    /// How often the sending loop thread was preempted (involuntary
    /// context switches), where it is known.
    loop_preempted: Option<u64>,
    /// The receiving process's CPU time.
    receiver_cpu_s: f64,
    /// Gigabits of datagrams sent.
    gbit: f64,
    /// The length of a full data datagram.
    datagram_len: usize,
    gaps: GapStats,
}

impl Measured {
    fn loss(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost as f64 / self.sent as f64
        }
    }

    fn cpu_per_gbit(&self) -> f64 {
        if self.gbit > 0.0 {
            self.cpu_s / self.gbit
        } else {
            f64::NAN
        }
    }
}

/// Actual less requested inter-departure gaps after full data packets.
#[derive(Debug, Default)]
struct GapStats {
    asked_us: f64,
    mean_us: f64,
    mean_abs_us: f64,
    p50_us: f64,
    p99_us: f64,
}

/// Rate, volume and gap statistics of `departures` ((ns, bytes) in
/// order), with `asked` the requested gap after a full data packet.
fn analyse(departures: &[(u64, usize)], asked: Duration) -> (f64, f64, usize, GapStats) {
    // From the first full data datagram on: the handshake before it (a
    // padded Request is 320 bytes; with a passphrase the sender derives
    // its key between the Response and its Ack) is not pacing.
    let data: Vec<(u64, usize)> = departures
        .iter()
        .copied()
        .skip_while(|&(_, len)| len < FULL_MIN)
        .filter(|&(_, len)| len >= DATA_MIN)
        .collect();
    // The most common length of a full datagram (the blaster sends it).
    let mut lengths: Vec<usize> = data
        .iter()
        .map(|d| d.1)
        .filter(|&l| l >= FULL_MIN)
        .collect();
    lengths.sort_unstable();
    let full = lengths
        .chunk_by(|a, b| a == b)
        .max_by_key(|run| run.len())
        .and_then(|run| run.first().copied())
        .unwrap_or(0);
    let (Some(first), Some(last)) = (data.first(), data.last()) else {
        return (0.0, 0.0, full, GapStats::default());
    };
    let bits: f64 = data.iter().map(|d| d.1 as f64 * 8.0).sum();
    let span = (last.0 - first.0) as f64 / 1e9;
    let achieved_mbit = bits / span.max(1e-9) / 1e6;
    let asked_ns = asked.as_nanos() as f64;
    let gaps: Vec<f64> = data
        .windows(2)
        .filter(|w| w[0].1 >= FULL_MIN)
        .map(|w| (w[1].0 - w[0].0) as f64)
        .collect();
    let n = gaps.len().max(1) as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let mut errors: Vec<f64> = gaps.iter().map(|g| (g - asked_ns).abs()).collect();
    errors.sort_by(f64::total_cmp);
    let quantile = |q: f64| {
        errors
            .get(((errors.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let stats = GapStats {
        asked_us: asked_ns / 1e3,
        mean_us: mean / 1e3,
        mean_abs_us: errors.iter().sum::<f64>() / n / 1e3,
        p50_us: quantile(0.5) / 1e3,
        p99_us: quantile(0.99) / 1e3,
    };
    (achieved_mbit, bits / 1e9, full, stats)
}

/// Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`).
fn clk_tck() -> f64 {
    String::from_utf8(
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .expect("getconf")
            .stdout,
    )
    .unwrap()
    .trim()
    .parse()
    .expect("CLK_TCK")
}

/// The process's CPU time so far (user + system, all threads, living and
/// ended), from /proc/self/stat, in seconds.
fn process_cpu(clk_tck: f64) -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // The fields after the command name (which may hold spaces) start
    // after the last ')': state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields[11].parse().unwrap();
    let stime: f64 = fields[12].parse().unwrap();
    (utime + stime) / clk_tck
}

/// The calling thread's CPU time in seconds, to the nanosecond
/// (/proc/thread-self/schedstat), if the kernel provides it.
fn thread_cpu() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// The calling thread's involuntary context switches so far
/// (/proc/thread-self/status): how often it was preempted.
fn preemptions() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/thread-self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))?
        .trim()
        .parse()
        .ok()
}

/// An Annex B stream of `FRAME_BYTES` slices, each behind an access unit
/// delimiter so that every slice is a frame; its bytes avoid start-code
/// emulation. The receiver counts the slices as damaged (there is no
/// parameter set): only the transport is measured.
fn write_synthetic_stream(path: &Path) {
    let mut bytes = Vec::new();
    for frame in 0..32u8 {
        bytes.extend_from_slice(&[0, 0, 0, 1, 0x09, 0xf0]);
        bytes.extend_from_slice(&[0, 0, 0, 1, 0x65]);
        bytes.extend((0..FRAME_BYTES).map(|i| 0x40 | ((i as u8).wrapping_add(frame) & 0x3f)));
    }
    std::fs::write(path, bytes).unwrap();
}

/// A child process of this binary, and the port it printed.
fn spawn_child(args: &[&str]) -> (Child, u16, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .arg("--child")
        .args(args)
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port = line
        .trim()
        .strip_prefix("port ")
        .expect("the child prints its port")
        .parse()
        .unwrap();
    (child, port, out)
}

/// The child's result line and its CPU time in seconds.
fn child_result(mut child: Child, mut out: BufReader<std::process::ChildStdout>) -> (String, f64) {
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let mut cpu = String::new();
    out.read_line(&mut cpu).unwrap();
    child.wait().unwrap();
    (line, cpu.trim().parse().unwrap())
}

fn run_fairstream(
    stream: &Path,
    mbit: f64,
    secs: f64,
    clk_tck: f64,
    passphrase: Option<&str>,
) -> Measured {
    let limit = format!("{}", secs + 15.0);
    let mut child_args = vec!["fairstream", limit.as_str()];
    child_args.extend(passphrase);
    let (child, port, out) = spawn_child(&child_args);
    let secret = passphrase.map_or_else(String::new, |p| format!("&passphrase={p}"));
    let url =
        format!("dccp://127.0.0.1:{port}?cc=fixed&rate={mbit}mbit&max_packet={MAX_PACKET}{secret}")
            .parse()
            .unwrap();
    let paced = FULL_PAYLOAD - if passphrase.is_some() { TAG } else { 0 };
    let mut config = SendConfig::new(SourceSpec::File(PathBuf::from(stream)), url);
    config.mode = Mode::OnDemand;
    config.looped = true;
    config.duration = Some(Duration::from_secs_f64(secs));
    let packets_per_sec = mbit * 1e6 / 8.0 / FULL_PAYLOAD as f64;
    config.record_departures = (packets_per_sec * (secs + 1.0) * 1.2) as usize + 10_000;
    let cpu_before = process_cpu(clk_tck);
    let sender = std::thread::spawn(move || {
        let report = send::run(config, Arc::new(AtomicBool::new(false))).unwrap();
        (report, thread_cpu(), preemptions())
    });
    let (report, loop_cpu, loop_preempted) = sender.join().unwrap();
    let cpu_s = process_cpu(clk_tck) - cpu_before;
    let (line, receiver_cpu_s) = child_result(child, out);
    let received: serde_json::Value = serde_json::from_str(&line).unwrap();
    let packets_received = received["packets_received"].as_u64().unwrap();
    let asked = Duration::from_secs_f64(paced as f64 * 8.0 / (mbit * 1e6));
    let (achieved_mbit, gbit, datagram_len, gaps) = analyse(&report.departures, asked);
    // The data packets that left (the report's packets_sent also counts
    // those still queued in the session when the duration ended, which a
    // close does not send).
    let sent = report
        .departures
        .iter()
        .filter(|&&(_, len)| len >= DATA_MIN)
        .count() as u64;
    Measured {
        achieved_mbit,
        sent,
        lost: sent.saturating_sub(packets_received),
        cpu_s,
        loop_cpu_s: loop_cpu,
        loop_preempted,
        receiver_cpu_s,
        gbit,
        datagram_len,
        gaps,
    }
}

fn run_blaster(mbit: f64, secs: f64, clk_tck: f64, datagram_len: usize) -> Measured {
    let datagram_len = if datagram_len >= FULL_MIN {
        datagram_len
    } else {
        MAX_PACKET
    };
    let (child, port, out) = spawn_child(&["blaster"]);
    let gap = Duration::from_secs_f64(FULL_PAYLOAD as f64 * 8.0 / (mbit * 1e6));
    let cpu_before = process_cpu(clk_tck);
    let blaster = std::thread::spawn(move || {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let sock = socket2::SockRef::from(&socket);
        let _ = sock.set_send_buffer_size(4 << 20);
        socket
            .connect(SocketAddr::from(([127, 0, 0, 1], port)))
            .unwrap();
        let payload = vec![0x5au8; datagram_len];
        let packets = ((secs / gap.as_secs_f64()) as usize + 2).min(1 << 24);
        let mut departures = Vec::with_capacity(packets);
        let start = Instant::now();
        let mut nominal = start;
        let end = start + Duration::from_secs_f64(secs);
        for _ in 0..packets {
            if nominal >= end {
                break;
            }
            loop {
                let now = Instant::now();
                if now >= nominal {
                    break;
                }
                let remaining = nominal - now;
                if remaining > SPIN {
                    std::thread::sleep(remaining - SPIN);
                } else {
                    std::hint::spin_loop();
                }
            }
            // A full send buffer loses the datagram, as in the runtime.
            let _ = socket.send(&payload);
            let now = Instant::now();
            departures.push((
                u64::try_from((now - start).as_nanos()).unwrap(),
                payload.len(),
            ));
            // The fixed-rate CCID's schedule: the next nominal time, with
            // at most MAX_CATCH_UP of credit after a late wake-up.
            nominal = nominal.max(now - MAX_CATCH_UP) + gap;
        }
        // Tell the receiver it is over: an empty datagram.
        let _ = socket.send(&[]);
        (departures, thread_cpu(), preemptions())
    });
    let (departures, loop_cpu, loop_preempted) = blaster.join().unwrap();
    let cpu_s = process_cpu(clk_tck) - cpu_before;
    let (line, receiver_cpu_s) = child_result(child, out);
    let received: u64 = line.trim().parse().unwrap();
    let (achieved_mbit, gbit, datagram_len, gaps) = analyse(&departures, gap);
    let sent = departures.len() as u64;
    Measured {
        achieved_mbit,
        sent,
        lost: sent.saturating_sub(received),
        cpu_s,
        loop_cpu_s: loop_cpu,
        loop_preempted,
        receiver_cpu_s,
        gbit,
        datagram_len,
        gaps,
    }
}

/// The receiving side, in its own process: prints `port N`, receives, then
/// prints what it received (a `RecvReport` as JSON, or a datagram count).
fn child(args: &[String]) {
    match args.first().map(String::as_str) {
        Some("fairstream") => {
            let limit: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60.0);
            let url = match args.get(2) {
                Some(passphrase) => format!("dccp://127.0.0.1:0?passphrase={passphrase}"),
                None => "dccp://127.0.0.1:0".into(),
            };
            let mut config = RecvConfig::new(
                url.parse().unwrap(),
                OutputSpec::File(PathBuf::from("/dev/null")),
            );
            config.duration = Some(Duration::from_secs_f64(limit));
            let receiver = Receiver::bind(config).unwrap();
            println!("port {}", receiver.local_addr().port());
            let _ = std::io::stdout().flush();
            let report = receiver.run(&AtomicBool::new(false)).unwrap();
            println!("{}", serde_json::to_string(&report).unwrap());
            println!("{}", process_cpu(clk_tck()));
        }
        Some("blaster") => {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            let sock = socket2::SockRef::from(&socket);
            let _ = sock.set_recv_buffer_size(4 << 20);
            println!("port {}", socket.local_addr().unwrap().port());
            let _ = std::io::stdout().flush();
            socket
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut buf = vec![0u8; 65_536];
            let mut count = 0u64;
            // Until the empty datagram that ends the run, or 5 s of silence
            // (the end marker itself was lost).
            while let Ok(len) = socket.recv(&mut buf) {
                if len == 0 {
                    break;
                }
                count += 1;
            }
            println!("{count}");
            println!("{}", process_cpu(clk_tck()));
        }
        _ => panic!("--child fairstream|blaster"),
    }
}
