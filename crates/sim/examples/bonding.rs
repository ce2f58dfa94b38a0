//! Bonding in the simulator (issue 19): is a stream bonded over two access
//! networks TCP-friendly on each path, and does it get the sum of what each
//! path gives it alone? Runs every case in the simulator and writes the
//! tables of `docs/results/bonding.md`'s simulator section.
//!
//! ```sh
//! cargo run --release -p fairstream-sim --example bonding -- --jobs 2
//! cargo run --release -p fairstream-sim --example bonding -- --seeds 1 --quick
//! ```
//!
//! Options: `--jobs N` (simulations at once, default the machine's cores),
//! `--seeds N` (replicates of every case, default 5; the TCP flows' start
//! times are drawn from each seed), `--out FILE` (default: standard
//! output), `--quick` (60 s runs instead of 120 s, for a look), `--dump DIR`
//! (also write every scenario file there, to run one again with
//! `fairstream simulate`).
//!
//! The network: a server and a TCP source behind a core router; two access
//! networks from the core, each a bottleneck to a base station (`bs1`,
//! `bs2`), then a last hop from each base station to the multi-homed
//! client; the TCP flows go from the source to a sink behind each base
//! station, so each path's bottleneck carries its own TCP flows and the
//! stream's share of that path. The shared case joins both paths behind
//! one bottleneck instead. Every figure is measured over the last half of
//! each run. Per path, as in the fairness matrix of issue 11: the ratio of
//! the stream's throughput on the path to the mean TCP flow's there
//! (target ≤ 1.25), and the harm, the TCP flows' loss of goodput against
//! the same run with one more NewReno flow on that path in the stream's
//! place (target ≤ 10 %). A benchmark: it measures and reports, it asserts
//! nothing; `crates/sim/tests/bonding.rs` pins the behaviour.

// The `unwrap`s below cannot fail on input: `writeln!` into a `String` is
// infallible and a poisoned lock can only follow a panic in a worker, which
// it passes on. Bad arguments and unwritable files are errors, not panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]
#![allow(missing_docs)]

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use fairstream_sim::runner::Simulation;
use fairstream_sim::scenario::Scenario;

/// One access network: its bottleneck, last hop and TCP flows.
#[derive(Clone, Copy, Debug)]
struct Access {
    /// Bottleneck capacity, Mbit/s.
    mbit: f64,
    /// One-way propagation delay of the bottleneck, ms (the rest of the
    /// path adds 6 ms each way, and the shared case's paths 1 and 3 ms
    /// more).
    delay_ms: u64,
    /// Last hop: capacity, Mbit/s, and random loss.
    hop_mbit: f64,
    hop_loss: f64,
    /// NewReno flows across the bottleneck.
    tcp: usize,
}

impl Access {
    /// The bottleneck's drop-tail queue: one BDP, at least 20 packets.
    fn queue_packets(&self) -> u64 {
        let rtt_s = 2.0 * (self.delay_ms + 6) as f64 / 1000.0;
        ((self.mbit * 1e6 * rtt_s / 8.0 / 1500.0).ceil() as u64).max(20)
    }
}

#[derive(Clone, Debug)]
struct Case {
    name: &'static str,
    paths: [Access; 2],
    /// Both paths behind one bottleneck (the first's), declared shared
    /// when `declared`.
    shared: Option<bool>,
    /// The stream's transport table.
    transport: &'static str,
}

/// The default: the adaptive controller on each path.
const DEFAULT: &str = "cc = \"tfrc\"";
/// One plain TFRC connection on each path.
const ONE_TFRC: &str = "cc = \"tfrc\", conns = 1, controller = \"fixed\"";

fn cases() -> Vec<Case> {
    let path1 = Access {
        mbit: 10.0,
        delay_ms: 13,
        hop_mbit: 50.0,
        hop_loss: 0.0,
        tcp: 2,
    };
    let path2 = Access {
        mbit: 5.0,
        delay_ms: 33,
        hop_mbit: 50.0,
        hop_loss: 0.0,
        tcp: 2,
    };
    let lossy1 = Access {
        hop_mbit: 20.0,
        hop_loss: 0.01,
        ..path1
    };
    let lossy2 = Access {
        hop_mbit: 10.0,
        hop_loss: 0.02,
        ..path2
    };
    vec![
        Case {
            name: "two paths, clean last hops",
            paths: [path1, path2],
            shared: None,
            transport: DEFAULT,
        },
        Case {
            name: "two paths, lossy last hops (1 %, 2 %)",
            paths: [lossy1, lossy2],
            shared: None,
            transport: DEFAULT,
        },
        Case {
            name: "one shared bottleneck, declared",
            paths: [path1, path2],
            shared: Some(true),
            transport: DEFAULT,
        },
        Case {
            name: "one shared bottleneck, not declared",
            paths: [path1, path2],
            shared: Some(false),
            transport: DEFAULT,
        },
        Case {
            name: "one shared bottleneck, declared, one TFRC connection a path",
            paths: [path1, path2],
            shared: Some(true),
            transport: ONE_TFRC,
        },
        Case {
            name: "one shared bottleneck, not declared, one TFRC connection a path",
            paths: [path1, path2],
            shared: Some(false),
            transport: ONE_TFRC,
        },
    ]
}

/// Per path, over the seeds: the stream's throughput and the mean TCP
/// flow's (Mbit/s), their ratio, and the harm (%).
type PerPath = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

/// What a run puts in the stream's place.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Variant {
    /// The stream, bonded over both paths.
    Bonded,
    /// The stream on path `.0` alone.
    Alone(usize),
    /// No stream; one more NewReno flow on each path.
    Baseline,
}

fn scenario(case: &Case, variant: Variant, seed: u64, duration_s: u64) -> String {
    let mut t = String::new();
    writeln!(t, "# {} ({variant:?}, seed {seed})", case.name).unwrap();
    writeln!(t, "[run]\nduration = \"{duration_s}s\"\nseed = {seed}\n").unwrap();
    for node in [
        "server", "tcpsrc", "core", "agg", "bs1", "bs2", "client", "sink1", "sink2",
    ] {
        writeln!(t, "[[node]]\nname = \"{node}\"").unwrap();
    }
    let link = |t: &mut String, a: &str, b: &str, mbit: f64, ms: u64, extra: &str| {
        writeln!(
            t,
            "[[link]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{mbit}mbit\"\ndelay = \"{ms}ms\"\n{extra}"
        )
        .unwrap();
    };
    link(&mut t, "server", "core", 1000.0, 1, "");
    link(&mut t, "tcpsrc", "core", 1000.0, 1, "");
    let queue = |a: &Access| {
        format!(
            "queue = {{ kind = \"droptail\", packets = {} }}",
            a.queue_packets()
        )
    };
    match case.shared {
        None => {
            // The aggregation router is unused: each path's bottleneck
            // runs from the core to its base station.
            link(&mut t, "core", "agg", 1000.0, 1, "");
            for (i, a) in case.paths.iter().enumerate() {
                link(
                    &mut t,
                    "core",
                    &format!("bs{}", i + 1),
                    a.mbit,
                    a.delay_ms,
                    &queue(a),
                );
            }
        }
        Some(_) => {
            let a = &case.paths[0];
            link(&mut t, "core", "agg", a.mbit, a.delay_ms, &queue(a));
            link(&mut t, "agg", "bs1", 1000.0, 1, "");
            link(&mut t, "agg", "bs2", 1000.0, 3, "");
        }
    }
    for (i, a) in case.paths.iter().enumerate() {
        let loss = if a.hop_loss > 0.0 {
            format!("loss = {{ kind = \"bernoulli\", p = {} }}", a.hop_loss)
        } else {
            String::new()
        };
        link(
            &mut t,
            &format!("bs{}", i + 1),
            "client",
            a.hop_mbit,
            5,
            &loss,
        );
        // The sinks sit as far behind their base station as the client, so
        // that the TCP flows see the stream's RTT.
        link(
            &mut t,
            &format!("bs{}", i + 1),
            &format!("sink{}", i + 1),
            1000.0,
            5,
            "",
        );
    }
    // The stream over the paths through `via`; one path alone declares no
    // sharing.
    let stream = |t: &mut String, via: &str, bonded: bool| {
        let shared = match case.shared {
            Some(declared) if bonded => format!("shared_bottleneck = {declared}\n"),
            _ => String::new(),
        };
        writeln!(
            t,
            "[[flow]]\nname = \"stream\"\nfrom = \"server\"\nto = \"client\"\nvia = [{via}]\n{shared}transport = {{ {} }}\n",
            case.transport
        )
        .unwrap();
    };
    match variant {
        Variant::Bonded => stream(&mut t, "\"bs1\", \"bs2\"", true),
        Variant::Alone(path) => stream(&mut t, &format!("\"bs{}\"", path + 1), false),
        Variant::Baseline => {}
    }
    for (i, a) in case.paths.iter().enumerate() {
        // The shared case's TCP flows all cross the one bottleneck, to the
        // sink behind the first base station.
        let sink = if case.shared.is_some() { 1 } else { i + 1 };
        let extra = usize::from(variant == Variant::Baseline);
        let count = if case.shared.is_some() && i == 1 {
            0
        } else {
            a.tcp + extra
        };
        if count > 0 {
            writeln!(
                t,
                "[[flow]]\nname = \"tcp{}\"\nfrom = \"tcpsrc\"\nto = \"sink{sink}\"\ncount = {count}\nstart_jitter = \"2s\"\ntransport = {{ cc = \"tcp-newreno\" }}\n",
                i + 1
            )
            .unwrap();
        }
    }
    t
}

/// Late-half mean throughputs, bits/s: the stream's per path (empty
/// without a stream), and per path the mean TCP flow's.
#[derive(Clone, Debug, Default)]
struct Late {
    stream_paths: Vec<f64>,
    tcp_mean: [f64; 2],
}

fn run(text: &str, duration_s: u64) -> Result<Late, String> {
    let scenario = Scenario::from_str(text, "bonding.toml").map_err(|e| e.to_string())?;
    let mut sim = Simulation::new(&scenario).map_err(|e| e.to_string())?;
    sim.run();
    let half = duration_s as f64 / 2.0;
    let mut late = Late::default();
    let mut tcp: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for flow in &sim.series().flows {
        let rows: Vec<_> = flow.rows.iter().filter(|r| r.time_s > half).collect();
        let n = rows.len().max(1) as f64;
        if flow.name == "stream" {
            late.stream_paths = (0..flow.via.len())
                .map(|p| {
                    rows.iter()
                        .map(|r| r.path_throughput_bps.get(p).copied().unwrap_or(0.0))
                        .sum::<f64>()
                        / n
                })
                .collect();
        } else if let Some(path) = flow.name.strip_prefix("tcp").and_then(|s| s.chars().next()) {
            let index = usize::from(path == '2');
            tcp[index].push(rows.iter().map(|r| r.throughput_bps).sum::<f64>() / n);
        }
    }
    for (mean, flows) in late.tcp_mean.iter_mut().zip(&tcp) {
        *mean = flows.iter().sum::<f64>() / flows.len().max(1) as f64;
    }
    Ok(late)
}

#[derive(Clone, Debug)]
struct Args {
    jobs: usize,
    seeds: u64,
    out: Option<PathBuf>,
    quick: bool,
    dump: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        seeds: 5,
        out: None,
        quick: false,
        dump: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        let whole = |name: &str, v: String| {
            v.parse::<u64>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or(format!("{name} {v}: expected a whole number ≥ 1"))
        };
        match arg.as_str() {
            "--jobs" => args.jobs = whole("--jobs", value("--jobs")?)? as usize,
            "--seeds" => args.seeds = whole("--seeds", value("--seeds")?)?,
            "--out" => args.out = Some(PathBuf::from(value("--out")?)),
            "--dump" => args.dump = Some(PathBuf::from(value("--dump")?)),
            "--quick" => args.quick = true,
            other => return Err(format!("unknown argument {other} (see the file's doc)")),
        }
    }
    Ok(args)
}

fn mean_range(values: &[f64], digits: usize) -> String {
    let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.len() < 2 {
        format!("{mean:.digits$}")
    } else {
        format!("{mean:.digits$} ({min:.digits$}-{max:.digits$})")
    }
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let duration_s = if args.quick { 60 } else { 120 };
    let cases = cases();
    let variants = [
        Variant::Bonded,
        Variant::Alone(0),
        Variant::Alone(1),
        Variant::Baseline,
    ];
    let mut jobs = Vec::new();
    for (c, case) in cases.iter().enumerate() {
        for seed in 1..=args.seeds {
            for variant in variants {
                jobs.push((c, seed, variant, scenario(case, variant, seed, duration_s)));
            }
        }
    }
    if let Some(dir) = &args.dump {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: {}: {e}", dir.display());
            std::process::exit(1);
        }
        for (c, seed, variant, text) in &jobs {
            let name = format!("case{c}-seed{seed}-{variant:?}.toml").replace(['(', ')'], "");
            if let Err(e) = std::fs::write(dir.join(&name), text) {
                eprintln!("error: {name}: {e}");
                std::process::exit(1);
            }
        }
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Late, String>>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..args.jobs {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some((_, _, _, text)) = jobs.get(index) else {
                    break;
                };
                let outcome = run(text, duration_s);
                let mut results = results.lock().unwrap();
                results[index] = Some(outcome);
                let done = results.iter().filter(|r| r.is_some()).count();
                eprint!("\r{done}/{} runs", jobs.len());
            });
        }
    });
    eprintln!();
    let results = results.into_inner().unwrap();
    let lookup = |c: usize, seed: u64, variant: Variant| -> Result<&Late, String> {
        let index = jobs
            .iter()
            .position(|(jc, js, jv, _)| *jc == c && *js == seed && *jv == variant)
            .ok_or("missing run")?;
        match &results[index] {
            Some(Ok(late)) => Ok(late),
            Some(Err(e)) => Err(e.clone()),
            None => Err("not run".to_owned()),
        }
    };
    let mut report = String::new();
    writeln!(
        report,
        "| case | path | stream on the path, Mbit/s | mean TCP flow, Mbit/s | ratio (≤ 1.25) | harm (≤ 10 %) |\n|---|---|---|---|---|---|"
    )
    .unwrap();
    let mut sums = String::new();
    writeln!(
        sums,
        "| case | bonded, Mbit/s | alone on path 1 | alone on path 2 | bonded / sum of alone | bonded / best path alone |\n|---|---|---|---|---|---|"
    )
    .unwrap();
    // For the reading: per-path ratios and harms where the paths do not
    // share, bonded over the sum of alone there; bonded over the best path
    // alone where they share (declared, not), and one session alone there
    // in NewReno shares.
    let mut reading: [Vec<f64>; 6] = Default::default();
    for (c, case) in cases.iter().enumerate() {
        let mut failed = None;
        let mut alone_shares = Vec::new();
        let mut per_path: [PerPath; 2] = Default::default();
        let (mut bonded_total, mut alone) = (Vec::new(), [Vec::new(), Vec::new()]);
        for seed in 1..=args.seeds {
            let runs = (
                lookup(c, seed, Variant::Bonded),
                lookup(c, seed, Variant::Baseline),
                lookup(c, seed, Variant::Alone(0)),
                lookup(c, seed, Variant::Alone(1)),
            );
            let (Ok(bonded), Ok(baseline), Ok(alone0), Ok(alone1)) = runs else {
                failed = Some(format!("{runs:?}"));
                break;
            };
            // The shared case's TCP flows are all on the one bottleneck.
            let tcp_path = |p: usize| if case.shared.is_some() { 0 } else { p };
            for (p, slot) in per_path.iter_mut().enumerate() {
                let stream = bonded.stream_paths.get(p).copied().unwrap_or(0.0);
                let tcp = bonded.tcp_mean[tcp_path(p)];
                slot.0.push(stream / 1e6);
                slot.1.push(tcp / 1e6);
                slot.2.push(stream / tcp);
                slot.3
                    .push(100.0 * (1.0 - tcp / baseline.tcp_mean[tcp_path(p)]));
            }
            alone_shares.push(alone0.stream_paths.iter().sum::<f64>() / alone0.tcp_mean[0]);
            bonded_total.push(bonded.stream_paths.iter().sum::<f64>() / 1e6);
            alone[0].push(alone0.stream_paths.iter().sum::<f64>() / 1e6);
            alone[1].push(alone1.stream_paths.iter().sum::<f64>() / 1e6);
        }
        if let Some(e) = failed {
            writeln!(report, "| {} | failed: {e} | | | | |", case.name).unwrap();
            continue;
        }
        if case.shared.is_some() {
            // One bottleneck: the stream's total against one TCP flow.
            let total: Vec<f64> = (0..bonded_total.len())
                .map(|i| bonded_total[i] / per_path[0].1[i])
                .collect();
            writeln!(
                report,
                "| {} | both (one bottleneck) | {} | {} | {} | {} |",
                case.name,
                mean_range(&bonded_total, 2),
                mean_range(&per_path[0].1, 2),
                mean_range(&total, 2),
                mean_range(&per_path[0].3, 1),
            )
            .unwrap();
        } else {
            for (p, (stream, tcp, ratio, harm)) in per_path.iter().enumerate() {
                writeln!(
                    report,
                    "| {} | {} | {} | {} | {} | {} |",
                    case.name,
                    p + 1,
                    mean_range(stream, 2),
                    mean_range(tcp, 2),
                    mean_range(ratio, 2),
                    mean_range(harm, 1),
                )
                .unwrap();
            }
        }
        let ratio: Vec<f64> = (0..bonded_total.len())
            .map(|i| bonded_total[i] / (alone[0][i] + alone[1][i]))
            .collect();
        let best: Vec<f64> = (0..bonded_total.len())
            .map(|i| bonded_total[i] / alone[0][i].max(alone[1][i]))
            .collect();
        match case.shared {
            None => {
                for (_, _, ratio, harm) in &per_path {
                    reading[0].extend(ratio);
                    reading[1].extend(harm);
                }
                reading[2].extend(&ratio);
            }
            Some(true) => {
                reading[3].extend(&best);
                reading[5].extend(&alone_shares);
            }
            Some(false) => reading[4].extend(&best),
        }
        writeln!(
            sums,
            "| {} | {} | {} | {} | {} | {} |",
            case.name,
            mean_range(&bonded_total, 2),
            mean_range(&alone[0], 2),
            mean_range(&alone[1], 2),
            mean_range(&ratio, 2),
            mean_range(&best, 2),
        )
        .unwrap();
    }
    let low = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let high = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let reading = format!(
        "- Where each path has its own bottleneck, the stream takes at most {:.2} of a NewReno \
         flow's share on a path, and the harm is at most {:.1} % (negative: the NewReno flows \
         gained), in every run: TCP-friendly on each path. The lossy last hops cut the \
         stream's share, as they cut one session's (issue 11's \"both\" cells).\n\
         - Bonded, it gets {:.2}-{:.2} of the sum of what each path gives it alone (issue 19's \
         target for the emulated paths: at least 0.9).\n\
         - Behind one shared bottleneck, declared (`shared_bottleneck = true`), the bonded \
         stream gets {:.2}-{:.2} of what one session gets alone there: no more aggressive than \
         one session. Not declared, {:.2}-{:.2}: each path competes as a flow of its own. One \
         session alone there takes {:.2}-{:.2} NewReno shares, with the default controller or \
         one plain TFRC connection alike (the table above): TFRC's own excess against NewReno \
         behind this drop-tail queue, which bonding, declared, does not add to.\n",
        high(&reading[0]),
        high(&reading[1]),
        low(&reading[2]),
        high(&reading[2]),
        low(&reading[3]),
        high(&reading[3]),
        low(&reading[4]),
        high(&reading[4]),
        low(&reading[5]),
        high(&reading[5]),
    );
    let block = format!(
        "{BEGIN}\n{}",
        SECTION
            .replace("{reading}", &reading)
            .replace("{seeds}", &args.seeds.to_string())
            .replace("{duration}", &duration_s.to_string())
            .replace("{report}", &report)
            .replace("{sums}", &sums)
    );
    match &args.out {
        Some(path) => {
            // The section replaces its earlier self in the file, or goes at
            // its end: scripts/bonding.py writes the rest and keeps it.
            let old = std::fs::read_to_string(path).unwrap_or_default();
            let text = match (old.find(BEGIN), old.find(END)) {
                (Some(begin), Some(end)) if begin < end => {
                    format!("{}{block}{}", &old[..begin], &old[end..])
                }
                _ if old.is_empty() => format!("{block}{END}\n"),
                _ => format!("{}\n{block}{END}\n", old.trim_end()),
            };
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("error: {}: {e}", path.display());
                std::process::exit(1);
            }
        }
        None => print!("{block}"),
    }
}

/// The markers around the section this example writes into
/// `docs/results/bonding.md`.
const BEGIN: &str = "<!-- simulator section: crates/sim/examples/bonding.rs -->";
const END: &str = "<!-- end of the simulator section -->";

const SECTION: &str = "## In the simulator: TCP on each path

The same sessions in the simulator, on a multi-homed client (the flow's
`via`, `docs/scenarios.md`), with NewReno cross traffic. Written by

```sh
cargo run --release -p fairstream-sim --example bonding -- --jobs 2 --out docs/results/bonding.md
```

The network: a server and a TCP source behind a core router; two access
networks from the core, each a drop-tail bottleneck of one BDP to a base
station (path 1: 10 Mbit/s, 13 ms; path 2: 5 Mbit/s, 33 ms; RTT about
40 and 80 ms), then a last hop to the client (50 Mbit/s and clean, or
20 and 10 Mbit/s losing 1 % and 2 %); two NewReno flows cross each
bottleneck to a sink behind its base station. In the shared cases both
paths run behind path 1's bottleneck, with its two NewReno flows. The
stream runs the default controller on each path (`cc = \"tfrc\"`) or one
plain TFRC connection a path. Runs of {duration} s, seeds 1-{seeds} (the
TCP flows' start times are drawn from the seed); every figure is over the
last half of a run, as mean (range) over the seeds.

Per path, as in the fairness matrix of issue 11: the stream's throughput
on the path against the mean NewReno flow's there (target ≤ 1.25), and the
harm, how much goodput the NewReno flows lose against the same run with
one more NewReno flow on that path in the stream's place (target ≤ 10 %;
negative: they gained).

{report}
Throughput against the same stream on each path alone (`via` with one
node), with the same cross traffic:

{sums}
{reading}";
