//! The fairness matrix of issue 11: is the default controller full on a
//! lossy hop it has to itself, fair to TCP on a congested wire, and both at
//! once? Runs every cell in the simulator and writes the tables.
//!
//! ```sh
//! cargo run --release -p fairstream-sim --example fairness -- --jobs 2 \
//!     --out docs/results/fairness.md
//! cargo run --release -p fairstream-sim --example fairness -- --only fair --quick
//! ```
//!
//! Options: `--jobs N` (simulations at once, default the machine's cores),
//! `--out FILE` (default: standard output), `--only full|fair|both` (one
//! section), `--quick` (a reduced set of cells and shorter runs, for a look),
//! `--seed N` (default 1), `--controller NAME` (the stream's controller,
//! default `adaptive`; `none` runs one plain TFRC flow).
//!
//! Every figure is measured over the last half of each run (after
//! convergence). A benchmark: it measures and reports, it asserts nothing;
//! `crates/sim/tests/fairness.rs` pins a reduced set with the same bounds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]
#![allow(missing_docs)]

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use fairstream_sim::runner::Simulation;
use fairstream_sim::scenario::Scenario;

/// Application payload of the stream's datagrams.
const PAYLOAD: f64 = 1460.0;
/// Wire bytes of one of the stream's packets: payload, 4 bytes of session
/// header, 16 of DCCP header and 28 of UDP/IP (the link overhead), as the
/// simulator counts them (1508 B; measured: a lossy 5 Mbit/s hop carried
/// 4,947 kbit/s of wire bits for 4,789 kbit/s of payload).
const WIRE: f64 = PAYLOAD + 48.0;

#[derive(Clone, Debug)]
struct Args {
    jobs: usize,
    out: Option<PathBuf>,
    only: Option<String>,
    quick: bool,
    seed: u64,
    controller: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        out: None,
        only: None,
        quick: false,
        seed: 1,
        controller: "adaptive".to_owned(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--jobs" => {
                let v = value("--jobs")?;
                args.jobs = v
                    .parse()
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or(format!("--jobs {v}: expected a whole number ≥ 1"))?;
            }
            "--out" => args.out = Some(PathBuf::from(value("--out")?)),
            "--only" => {
                let v = value("--only")?;
                if !["full", "fair", "both"].contains(&v.as_str()) {
                    return Err(format!("--only {v}: expected full, fair or both"));
                }
                args.only = Some(v);
            }
            "--quick" => args.quick = true,
            "--seed" => {
                let v = value("--seed")?;
                args.seed = v
                    .parse()
                    .map_err(|_| format!("--seed {v}: expected a whole number"))?;
            }
            "--controller" => args.controller = value("--controller")?,
            other => return Err(format!("unknown argument {other} (see the file's doc)")),
        }
    }
    Ok(args)
}

/// The stream's transport table.
fn stream_transport(controller: &str) -> String {
    if controller == "none" {
        "transport = { cc = \"tfrc\" }".to_owned()
    } else {
        format!("transport = {{ cc = \"tfrc\", controller = \"{controller}\" }}")
    }
}

// ---------------------------------------------------------------- full ----

#[derive(Clone, Copy, Debug)]
enum Channel {
    Bernoulli,
    GilbertElliott,
    Trace(&'static str),
}

impl Channel {
    fn name(self) -> String {
        match self {
            Channel::Bernoulli => "Bernoulli".to_owned(),
            Channel::GilbertElliott => "Gilbert-Elliott".to_owned(),
            Channel::Trace(file) => format!("trace {file}"),
        }
    }

    /// The `loss` table of the hop, and its mean capacity in bit/s.
    fn loss(self, bw_bps: f64, p: f64) -> (String, f64) {
        match self {
            Channel::Bernoulli => (
                format!("loss = {{ kind = \"bernoulli\", p = {p} }}"),
                bw_bps,
            ),
            Channel::GilbertElliott => {
                // Good state loses nothing, the bad state half its packets
                // and lasts 10 packets on average; the bad state's share
                // 2·p_w gives a mean loss of p_w.
                let bad_share = 2.0 * p;
                let p_bb = 0.9;
                let p_gb = bad_share * (1.0 - p_bb) / (1.0 - bad_share);
                (
                    format!(
                        "loss = {{ kind = \"gilbert-elliott\", p_good_good = {}, p_bad_bad = {p_bb}, loss_good = 0.0, loss_bad = 0.5 }}",
                        1.0 - p_gb
                    ),
                    bw_bps,
                )
            }
            Channel::Trace(file) => {
                let path = shared_trace(file);
                let mean = trace_mean_bps(&path);
                (
                    format!(
                        "loss = {{ kind = \"trace\", up = \"{}\", down = \"{}\" }}",
                        path.display(),
                        path.display()
                    ),
                    mean,
                )
            }
        }
    }
}

fn shared_trace(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/traces")
        .join(file)
}

/// A mahimahi trace's mean capacity: 1504 bytes per delivery opportunity
/// over its span.
fn trace_mean_bps(path: &PathBuf) -> f64 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (../shared/data beside the repository)",
            path.display()
        )
    });
    let stamps: Vec<u64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    let span_ms = stamps.last().copied().unwrap_or(1).max(1) as f64;
    stamps.len() as f64 * 1504.0 * 8.0 / (span_ms / 1000.0)
}

#[derive(Clone, Debug)]
struct FullCell {
    bw_mbit: f64,
    p: f64,
    rtt_ms: u64,
    channel: Channel,
    duration_s: u64,
}

impl FullCell {
    fn scenario(&self, args: &Args) -> (String, f64) {
        let bw = self.bw_mbit * 1e6;
        let hop_delay = (self.rtt_ms as f64 / 4.0).min(5.0);
        let wired_delay = self.rtt_ms as f64 / 2.0 - hop_delay;
        // The hop's buffer: one BDP of the hop, at least 20 packets.
        let bdp = (bw * self.rtt_ms as f64 / 1000.0 / 8.0 / WIRE).ceil() as u64;
        let (loss, capacity) = self.channel.loss(bw, self.p);
        let rate = match self.channel {
            Channel::Trace(_) => String::new(),
            _ => format!("rate = \"{}kbit\"\n", (bw / 1e3).round()),
        };
        let text = format!(
            "[run]\nduration = \"{}s\"\nseed = {}\n\
             [[node]]\nname = \"server\"\n[[node]]\nname = \"bs\"\n[[node]]\nname = \"client\"\n\
             [[link]]\nbetween = [\"server\", \"bs\"]\nrate = \"1gbit\"\ndelay = \"{wired_delay}ms\"\n\
             queue = {{ kind = \"droptail\", packets = 10000 }}\n\
             [[link]]\nbetween = [\"bs\", \"client\"]\n{rate}delay = \"{hop_delay}ms\"\n\
             queue = {{ kind = \"droptail\", packets = {} }}\n{loss}\n\
             [[flow]]\nname = \"stream\"\nfrom = \"server\"\nto = \"client\"\n{}\n",
            self.duration_s,
            args.seed,
            bdp.max(20),
            stream_transport(&args.controller)
        );
        let ideal = match self.channel {
            Channel::Trace(_) => capacity * PAYLOAD / WIRE,
            _ => capacity * (1.0 - self.p) * PAYLOAD / WIRE,
        };
        (text, ideal)
    }
}

#[derive(Clone, Debug, Default)]
struct FullResult {
    share: f64,
    reach_s: Option<f64>,
    congestion_loss: f64,
    n_mean: Option<f64>,
}

fn run_full(cell: &FullCell, args: &Args) -> Result<FullResult, String> {
    let (text, ideal) = cell.scenario(args);
    let scenario = Scenario::from_str(&text, "full.toml").map_err(|e| e.to_string())?;
    let mut sim = Simulation::new(&scenario).map_err(|e| e.to_string())?;
    let summary = sim.run();
    let rows = &sim.series().flows[0].rows;
    let half = cell.duration_s as f64 / 2.0;
    let late: Vec<f64> = rows
        .iter()
        .filter(|r| r.time_s > half)
        .map(|r| r.throughput_bps)
        .collect();
    let goodput = late.iter().sum::<f64>() / late.len().max(1) as f64;
    // The first time a 5 s moving mean reaches 0.9 of the ideal.
    let window = 50;
    let reach_s = rows.windows(window).find_map(|w| {
        let mean = w.iter().map(|r| r.throughput_bps).sum::<f64>() / window as f64;
        (mean >= 0.9 * ideal).then(|| w[window - 1].time_s)
    });
    let flow = &summary.flows[0];
    let n: Vec<f64> = rows
        .iter()
        .filter(|r| r.time_s > half)
        .filter_map(|r| r.connections)
        .collect();
    Ok(FullResult {
        share: goodput / ideal,
        reach_s,
        congestion_loss: flow.packets_lost_congestion as f64 / flow.packets_sent.max(1) as f64,
        n_mean: (!n.is_empty()).then(|| n.iter().sum::<f64>() / n.len() as f64),
    })
}

// ---------------------------------------------------------------- fair ----

#[derive(Clone, Copy, Debug)]
enum QueueKind {
    DropTail10,
    Bdp1,
    Bdp4,
    Red,
    RedEcn,
    Codel,
    CodelEcn,
    FqCodel,
}

impl QueueKind {
    const ALL: [QueueKind; 8] = [
        QueueKind::DropTail10,
        QueueKind::Bdp1,
        QueueKind::Bdp4,
        QueueKind::Red,
        QueueKind::RedEcn,
        QueueKind::Codel,
        QueueKind::CodelEcn,
        QueueKind::FqCodel,
    ];

    fn name(self) -> &'static str {
        match self {
            QueueKind::DropTail10 => "drop-tail 10",
            QueueKind::Bdp1 => "drop-tail 1 BDP",
            QueueKind::Bdp4 => "drop-tail 4 BDP",
            QueueKind::Red => "RED",
            QueueKind::RedEcn => "RED+ECN",
            QueueKind::Codel => "CoDel",
            QueueKind::CodelEcn => "CoDel+ECN",
            QueueKind::FqCodel => "FQ-CoDel",
        }
    }

    fn ecn(self) -> bool {
        matches!(self, QueueKind::RedEcn | QueueKind::CodelEcn)
    }

    /// The bottleneck's `queue` table for a BDP of `bdp` packets.
    fn table(self, bdp: u64) -> String {
        // RED: Floyd's thresholds for the BDP (min_th a quarter of it, at
        // least 5; max_th three times min_th), gentle, 4 BDP of buffer.
        let min_th = (bdp / 4).max(5);
        let red = |ecn: bool| {
            format!(
                "{{ kind = \"red\", min_th = {min_th}, max_th = {}, max_p = 0.1, gentle = true, limit_packets = {}{} }}",
                3 * min_th,
                (4 * bdp).max(4 * min_th),
                if ecn { ", ecn = true" } else { "" }
            )
        };
        match self {
            QueueKind::DropTail10 => "{ kind = \"droptail\", packets = 10 }".to_owned(),
            QueueKind::Bdp1 => format!("{{ kind = \"droptail\", packets = {} }}", bdp.max(2)),
            QueueKind::Bdp4 => format!("{{ kind = \"droptail\", packets = {} }}", 4 * bdp.max(2)),
            QueueKind::Red => red(false),
            QueueKind::RedEcn => red(true),
            QueueKind::Codel => "{ kind = \"codel\" }".to_owned(),
            QueueKind::CodelEcn => "{ kind = \"codel\", ecn = true }".to_owned(),
            QueueKind::FqCodel => "{ kind = \"fq-codel\" }".to_owned(),
        }
    }
}

#[derive(Clone, Debug)]
struct FairCell {
    bottleneck_mbit: u64,
    queue: QueueKind,
    tcp: usize,
    rtt_ms: u64,
    duration_s: u64,
}

impl FairCell {
    /// The dumbbell with `tcp` NewReno flows and the stream (or, with
    /// `stream` false, one more NewReno flow in its place). `lossy`: the
    /// stream's own last hop after the bottleneck (rate in Mbit/s, loss).
    fn scenario(&self, args: &Args, stream: bool, lossy: Option<(f64, f64)>) -> String {
        let bw = self.bottleneck_mbit as f64 * 1e6;
        let access = 1.0;
        let bottleneck_delay = self.rtt_ms as f64 / 2.0 - 2.0 * access;
        let bdp = (bw * self.rtt_ms as f64 / 1000.0 / 8.0 / 1500.0).ceil() as u64;
        let ecn = if self.queue.ecn() { ", ecn = true" } else { "" };
        let mut text = format!(
            "[run]\nduration = \"{}s\"\nseed = {}\n\
             [[node]]\nname = \"left\"\n[[node]]\nname = \"right\"\n[[node]]\nname = \"sink\"\n\
             [[node]]\nname = \"server\"\n[[node]]\nname = \"client\"\n\
             [[link]]\nbetween = [\"left\", \"right\"]\nrate = \"{}mbit\"\ndelay = \"{bottleneck_delay}ms\"\n\
             queue = {}\n\
             [[link]]\nbetween = [\"right\", \"sink\"]\nrate = \"10gbit\"\ndelay = \"{access}ms\"\n\
             [[link]]\nbetween = [\"server\", \"left\"]\nrate = \"10gbit\"\ndelay = \"{access}ms\"\n",
            self.duration_s,
            args.seed,
            self.bottleneck_mbit,
            self.queue.table(bdp)
        );
        match lossy {
            Some((rate, p)) => write!(
                text,
                "[[link]]\nbetween = [\"right\", \"client\"]\nrate = \"{}kbit\"\ndelay = \"{access}ms\"\n\
                 queue = {{ kind = \"droptail\", packets = 100 }}\nloss = {{ kind = \"bernoulli\", p = {p} }}\n",
                (rate * 1e3).round()
            ),
            None => write!(
                text,
                "[[link]]\nbetween = [\"right\", \"client\"]\nrate = \"10gbit\"\ndelay = \"{access}ms\"\n"
            ),
        }
        .unwrap();
        if stream {
            write!(
                text,
                "[[flow]]\nname = \"stream\"\nfrom = \"server\"\nto = \"client\"\n{}\n",
                stream_transport(&args.controller)
            )
            .unwrap();
        } else {
            write!(
                text,
                "[[flow]]\nname = \"extra-tcp\"\nfrom = \"server\"\nto = \"client\"\n\
                 transport = {{ cc = \"tcp-newreno\", min_rto = \"200ms\"{ecn} }}\n"
            )
            .unwrap();
        }
        for i in 0..self.tcp {
            write!(
                text,
                "[[node]]\nname = \"src{i}\"\n\
                 [[link]]\nbetween = [\"src{i}\", \"left\"]\nrate = \"10gbit\"\ndelay = \"{access}ms\"\n\
                 [[flow]]\nname = \"tcp{i}\"\nfrom = \"src{i}\"\nto = \"sink\"\nstart = \"{}ms\"\n\
                 transport = {{ cc = \"tcp-newreno\", min_rto = \"200ms\"{ecn} }}\n",
                100 * (i + 1)
            )
            .unwrap();
        }
        text
    }
}

#[derive(Clone, Debug, Default)]
struct FairResult {
    ratio: f64,
    harm: f64,
    stream_mbit: f64,
    tcp_mbit: f64,
    n_mean: Option<f64>,
}

/// Mean payload throughput of each flow over the last half, bit/s.
fn late_goodputs(text: &str, duration_s: u64) -> Result<(Vec<f64>, Option<f64>), String> {
    let scenario = Scenario::from_str(text, "fair.toml").map_err(|e| e.to_string())?;
    let mut sim = Simulation::new(&scenario).map_err(|e| e.to_string())?;
    sim.run();
    let half = duration_s as f64 / 2.0;
    let mut n = None;
    let goodputs = sim
        .series()
        .flows
        .iter()
        .enumerate()
        .map(|(i, flow)| {
            let late: Vec<_> = flow.rows.iter().filter(|r| r.time_s > half).collect();
            if i == 0 {
                let ns: Vec<f64> = late.iter().filter_map(|r| r.connections).collect();
                n = (!ns.is_empty()).then(|| ns.iter().sum::<f64>() / ns.len() as f64);
            }
            late.iter().map(|r| r.throughput_bps).sum::<f64>() / late.len().max(1) as f64
        })
        .collect();
    Ok((goodputs, n))
}

fn run_fair(cell: &FairCell, args: &Args, lossy: Option<(f64, f64)>) -> Result<FairResult, String> {
    let (with_stream, n_mean) = late_goodputs(&cell.scenario(args, true, lossy), cell.duration_s)?;
    let (baseline, _) = late_goodputs(&cell.scenario(args, false, lossy), cell.duration_s)?;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let tcp_with = mean(&with_stream[1..]);
    let tcp_without = mean(&baseline[1..]);
    Ok(FairResult {
        ratio: with_stream[0] / tcp_with,
        harm: 1.0 - tcp_with / tcp_without,
        stream_mbit: with_stream[0] / 1e6,
        tcp_mbit: tcp_with / 1e6,
        n_mean,
    })
}

// ---------------------------------------------------------------- main ----

#[derive(Clone, Debug)]
enum Job {
    Full(FullCell),
    Fair(FairCell),
    /// The congested wire, then a lossy hop only the stream crosses
    /// (rate in Mbit/s, loss).
    Both(FairCell, f64, f64),
}

#[derive(Clone, Debug)]
enum Outcome {
    Full(Result<FullResult, String>),
    Fair(Result<FairResult, String>),
}

fn jobs(args: &Args) -> Vec<Job> {
    let mut jobs = Vec::new();
    let wants = |s: &str| args.only.as_deref().is_none_or(|o| o == s);
    if wants("full") {
        let (bws, ps, rtts): (&[f64], &[f64], &[u64]) = if args.quick {
            (&[1.0, 5.0], &[0.02, 0.1], &[20, 400])
        } else {
            (
                &[1.0, 5.0, 20.0],
                &[0.005, 0.02, 0.05, 0.1],
                &[20, 100, 400],
            )
        };
        for channel in [Channel::Bernoulli, Channel::GilbertElliott] {
            for &bw_mbit in bws {
                for &p in ps {
                    for &rtt_ms in rtts {
                        jobs.push(Job::Full(FullCell {
                            bw_mbit,
                            p,
                            rtt_ms,
                            channel,
                            duration_s: if rtt_ms >= 400 { 240 } else { 120 },
                        }));
                    }
                }
            }
        }
        let traces: &[&'static str] = if args.quick {
            &["Verizon-LTE-short.down"]
        } else {
            &["Verizon-LTE-short.down", "TMobile-LTE-short.down"]
        };
        for file in traces {
            for &rtt_ms in rtts {
                jobs.push(Job::Full(FullCell {
                    bw_mbit: 0.0,
                    p: 0.0,
                    rtt_ms,
                    channel: Channel::Trace(file),
                    duration_s: if rtt_ms >= 400 { 240 } else { 120 },
                }));
            }
        }
    }
    if wants("fair") {
        let (bws, tcps, rtts): (&[u64], &[usize], &[u64]) = if args.quick {
            (&[10], &[4], &[80])
        } else {
            (&[10, 50], &[2, 4, 8], &[20, 80, 200])
        };
        for &bottleneck_mbit in bws {
            for queue in QueueKind::ALL {
                for &tcp in tcps {
                    for &rtt_ms in rtts {
                        jobs.push(Job::Fair(FairCell {
                            bottleneck_mbit,
                            queue,
                            tcp,
                            rtt_ms,
                            duration_s: 120,
                        }));
                    }
                }
            }
        }
    }
    if wants("both") {
        for queue in [QueueKind::Bdp1, QueueKind::Red, QueueKind::CodelEcn] {
            for (rate, p) in [(5.0, 0.02), (1.0, 0.05)] {
                jobs.push(Job::Both(
                    FairCell {
                        bottleneck_mbit: 10,
                        queue,
                        tcp: 4,
                        rtt_ms: 80,
                        duration_s: 120,
                    },
                    rate,
                    p,
                ));
            }
        }
    }
    jobs
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let jobs = jobs(&args);
    let total = jobs.len();
    let queue: Arc<Mutex<VecDeque<(usize, Job)>>> =
        Arc::new(Mutex::new(jobs.iter().cloned().enumerate().collect()));
    let results: Arc<Mutex<Vec<Option<Outcome>>>> = Arc::new(Mutex::new(vec![None; total]));
    let workers: Vec<_> = (0..args.jobs)
        .map(|_| {
            let (queue, results, args) = (Arc::clone(&queue), Arc::clone(&results), args.clone());
            std::thread::spawn(move || loop {
                let Some((index, job)) = queue.lock().unwrap().pop_front() else {
                    break;
                };
                let outcome = match &job {
                    Job::Full(cell) => Outcome::Full(run_full(cell, &args)),
                    Job::Fair(cell) => Outcome::Fair(run_fair(cell, &args, None)),
                    Job::Both(cell, rate, p) => {
                        Outcome::Fair(run_fair(cell, &args, Some((*rate, *p))))
                    }
                };
                let mut results = results.lock().unwrap();
                results[index] = Some(outcome);
                let done = results.iter().filter(|r| r.is_some()).count();
                eprint!("\r{done}/{total} cells");
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    eprintln!();
    let results = Arc::try_unwrap(results).unwrap().into_inner().unwrap();
    let report = render(&args, &jobs, &results);
    match &args.out {
        Some(path) => std::fs::write(path, report).unwrap_or_else(|e| {
            eprintln!("error: {}: {e}", path.display());
            std::process::exit(1);
        }),
        None => print!("{report}"),
    }
}

fn render(args: &Args, jobs: &[Job], results: &[Option<Outcome>]) -> String {
    let mut out = String::new();
    let command = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    writeln!(
        out,
        "Generated by `cargo run --release -p fairstream-sim --example fairness -- {command}` \
         (seed {}, stream controller `{}`). Every figure is the mean over the last half of its \
         run.\n",
        args.seed, args.controller
    )
    .unwrap();
    let rows = jobs.iter().zip(results);
    let full: Vec<_> = rows
        .clone()
        .filter_map(|(j, r)| match (j, r) {
            (Job::Full(c), Some(Outcome::Full(r))) => Some((c, r)),
            _ => None,
        })
        .collect();
    if !full.is_empty() {
        let met = full
            .iter()
            .filter(|(_, r)| r.as_ref().is_ok_and(|r| r.share >= 0.95))
            .count();
        writeln!(
            out,
            "### Full: the stream alone on a lossy hop\n\n\
             Share of B_w(1 − p_w) × 1460/1508 (the payload share of the wire bytes) reached \
             (target ≥ 0.95; {met} of {} cells meet it); the time its 5 s mean first reached \
             0.9 (target ≤ 30 s at RTT ≤ 100 ms, ≤ 90 s at 400 ms); congestion loss over the \
             whole run; the mean n. Trace cells: the trace's mean capacity × 1460/1508.\n\n\
             | channel | B_w | p_w | RTT | share | reaches 0.9 | congestion loss | n |\n|---|---|---|---|---|---|---|---|",
            full.len()
        )
        .unwrap();
        for (c, r) in full {
            let (bw, p) = match c.channel {
                Channel::Trace(_) => ("trace".to_owned(), "—".to_owned()),
                _ => (
                    format!("{} Mbit/s", c.bw_mbit),
                    format!("{} %", c.p * 100.0),
                ),
            };
            match r {
                Ok(r) => writeln!(
                    out,
                    "| {} | {bw} | {p} | {} ms | {:.3}{} | {} | {:.2} % | {} |",
                    c.channel.name(),
                    c.rtt_ms,
                    r.share,
                    if r.share >= 0.95 { "" } else { " ✗" },
                    r.reach_s
                        .map_or("never".to_owned(), |t| format!("{t:.1} s")),
                    100.0 * r.congestion_loss,
                    r.n_mean.map_or("—".to_owned(), |n| format!("{n:.1}")),
                ),
                Err(e) => writeln!(
                    out,
                    "| {} | {bw} | {p} | {} ms | error: {e} | | | |",
                    c.channel.name(),
                    c.rtt_ms
                ),
            }
            .unwrap();
        }
        out.push('\n');
    }
    let fair: Vec<_> = rows
        .clone()
        .filter_map(|(j, r)| match (j, r) {
            (Job::Fair(c), Some(Outcome::Fair(r))) => Some((c, None, r)),
            (Job::Both(c, rate, p), Some(Outcome::Fair(r))) => Some((c, Some((*rate, *p)), r)),
            _ => None,
        })
        .collect();
    for (title, both) in [
        (
            "### Fair: the stream and NewReno flows on a congested wire",
            false,
        ),
        (
            "### Both: the congested wire, then a lossy hop only the stream crosses",
            true,
        ),
    ] {
        let cells: Vec<_> = fair
            .iter()
            .filter(|(_, l, _)| l.is_some() == both)
            .collect();
        if cells.is_empty() {
            continue;
        }
        let met = cells
            .iter()
            .filter(|(_, _, r)| r.as_ref().is_ok_and(|r| r.ratio <= 1.25 && r.harm <= 0.10))
            .count();
        writeln!(
            out,
            "{title}\n\n\
             The stream's goodput over the mean NewReno flow's (target ≤ 1.25), and the harm: how \
             much less the NewReno flows got than when the stream is replaced by one more NewReno \
             flow (target ≤ 10 %). {met} of {} cells meet both.\n\n\
             | bottleneck | queue | NewReno flows | RTT |{} stream | mean TCP | ratio | harm | n |\n|---|---|---|---|{}---|---|---|---|---|",
            cells.len(),
            if both { " lossy hop |" } else { "" },
            if both { "---|" } else { "" }
        )
        .unwrap();
        for (c, lossy, r) in cells {
            let hop = lossy.map_or(String::new(), |(rate, p)| {
                format!(" {rate} Mbit/s, {} % |", p * 100.0)
            });
            match r {
                Ok(r) => writeln!(
                    out,
                    "| {} Mbit/s | {} | {} | {} ms |{hop} {:.2} Mbit/s | {:.2} Mbit/s | {:.2}{} | {:.1} %{} | {} |",
                    c.bottleneck_mbit,
                    c.queue.name(),
                    c.tcp,
                    c.rtt_ms,
                    r.stream_mbit,
                    r.tcp_mbit,
                    r.ratio,
                    if r.ratio <= 1.25 { "" } else { " ✗" },
                    100.0 * r.harm,
                    if r.harm <= 0.10 { "" } else { " ✗" },
                    r.n_mean.map_or("—".to_owned(), |n| format!("{n:.1}")),
                ),
                Err(e) => writeln!(
                    out,
                    "| {} Mbit/s | {} | {} | {} ms |{hop} error: {} | | | | |",
                    c.bottleneck_mbit,
                    c.queue.name(),
                    c.tcp,
                    c.rtt_ms,
                    e.lines().next().unwrap_or_default()
                ),
            }
            .unwrap();
        }
        out.push('\n');
    }
    out
}
