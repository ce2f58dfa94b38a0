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
//! default `adaptive`; `none` runs one plain TFRC flow), `--dump DIR` (also
//! write every cell's scenario files there, to run one again with
//! `fairstream simulate`), `--tcp newreno|newreno-sack|cubic` (the cross
//! traffic's TCP, default `newreno`, the papers' baseline; issue 18).
//!
//! Every figure is measured over the last half of each run (after
//! convergence). A benchmark: it measures and reports, it asserts nothing;
//! `crates/sim/tests/fairness.rs` pins a reduced set with the same bounds.

// The `unwrap`s below cannot fail on input: `writeln!` into a `String` is
// infallible; a poisoned lock or a failed `join` can only follow a panic in
// a worker, which they pass on; `Arc::try_unwrap` runs after every worker
// has been joined. Bad arguments and unreadable files are errors, not panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]
#![allow(missing_docs)]

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

mod cells;

use cells::{
    run_fair, run_full, Channel, FairCell, FairResult, FullCell, FullResult, QueueKind, Setup,
};

#[derive(Clone, Debug)]
struct Args {
    jobs: usize,
    out: Option<PathBuf>,
    only: Option<String>,
    quick: bool,
    setup: Setup,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        out: None,
        only: None,
        quick: false,
        setup: Setup {
            seed: 1,
            controller: "adaptive".to_owned(),
            dump: None,
            tcp: "newreno".to_owned(),
        },
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
                args.setup.seed = v
                    .parse()
                    .map_err(|_| format!("--seed {v}: expected a whole number"))?;
            }
            "--controller" => args.setup.controller = value("--controller")?,
            "--tcp" => {
                let v = value("--tcp")?;
                if !cells::TCPS.contains(&v.as_str()) {
                    return Err(format!(
                        "--tcp {v}: expected one of {}",
                        cells::TCPS.join(", ")
                    ));
                }
                args.setup.tcp = v;
            }
            "--dump" => args.setup.dump = Some(PathBuf::from(value("--dump")?)),
            other => return Err(format!("unknown argument {other} (see the file's doc)")),
        }
    }
    Ok(args)
}

/// The stream's transport table.
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
                    Job::Full(cell) => Outcome::Full(run_full(cell, &args.setup)),
                    Job::Fair(cell) => Outcome::Fair(run_fair(cell, &args.setup, None)),
                    Job::Both(cell, rate, p) => {
                        Outcome::Fair(run_fair(cell, &args.setup, Some((*rate, *p))))
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
        args.setup.seed, args.setup.controller
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
    let tcp = match args.setup.tcp.as_str() {
        "cubic" => "CUBIC",
        "newreno-sack" => "NewReno (SACK)",
        _ => "NewReno",
    };
    for (title, both) in [
        (
            format!("### Fair: the stream and {tcp} flows on a congested wire"),
            false,
        ),
        (
            "### Both: the congested wire, then a lossy hop only the stream crosses".to_owned(),
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
            .filter(|(_, _, r)| {
                r.as_ref().is_ok_and(|r| {
                    r.ratio <= 1.25 && r.harm <= 0.10 && r.fill.is_none_or(|f| f >= 0.95)
                })
            })
            .count();
        writeln!(
            out,
            "{title}\n\n\
             The stream's goodput over the mean {tcp} flow's (target ≤ 1.25), and the harm: how \
             much less the {tcp} flows got than when the stream is replaced by one more {tcp} \
             flow (target ≤ 10 %).{} {met} of {} cells meet {}.\n\n\
             | bottleneck | queue | {tcp} flows | RTT |{} stream | mean TCP | ratio | harm |{} n |\n|---|---|---|---|{}---|---|---|---|{}---|",
            if both {
                " Fill: the stream's goodput over what it could have had, the smaller of the lossy hop's \
                 B_w(1 − p_w) × 1460/1508 and the wire's fair share C/(N + 1) × 1460/1500 (target ≥ 0.95)."
            } else {
                ""
            },
            cells.len(),
            if both { "all three" } else { "both" },
            if both { " lossy hop |" } else { "" },
            if both { " fill |" } else { "" },
            if both { "---|" } else { "" },
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
                    "| {} Mbit/s | {} | {} | {} ms |{hop} {:.2} Mbit/s | {:.2} Mbit/s | {:.2}{} | {:.1} %{} |{} {} |",
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
                    r.fill.map_or(String::new(), |f| format!(
                        " {f:.2}{} |",
                        if f >= 0.95 { "" } else { " ✗" }
                    )),
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
