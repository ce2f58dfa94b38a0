//! `fairstream sweep`: one scenario over a grid of parameters and seeds,
//! each run a separate deterministic simulation, with means and 95 %
//! confidence intervals per point (issue 14; the sweep file is described
//! in `plan.rs` and `docs/reproducing.md`).
//!
//! ```text
//! fairstream sweep experiments/sweeps/wireless-loss.toml         # --jobs = the cores
//! fairstream sweep FILE --jobs 2 --out results/wireless-loss
//! ```
//!
//! Each run's summary is cached in `OUT/cache/`, named by a SHA-256 of the
//! run's full scenario text and of this executable, so an interrupted
//! sweep resumes where it stopped and a changed binary runs everything
//! again. Writes `runs.csv` (one row per point and seed) and
//! `summary.csv`, `summary.json`, `summary.md` (per point: each metric's
//! mean and the half-width of its 95 % confidence interval over the
//! seeds, Student's t).

mod hyperqueue;
pub(crate) mod plan;
mod report;
pub(crate) mod stats;

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{Context, Result};
use clap::Args;
use fairstream_report::Table;
use fairstream_sim::runner::Simulation;
use fairstream_sim::scenario::Scenario;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use plan::{Plan, Point};

/// The most worker threads.
const MAX_JOBS: usize = 256;

/// Arguments of `fairstream sweep`.
#[derive(Debug, Args)]
pub(crate) struct SweepArgs {
    /// The sweep file (TOML: scenario, seeds, a vary table, a metrics table; see
    /// docs/reproducing.md)
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Simulations run at once [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
    /// Where the tables and the cache go [default: sweep-NAME, NAME the sweep file's name]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// No progress line on stderr
    #[arg(long)]
    quiet: bool,
    /// Where the runs run: `local` (--jobs threads of this process), or
    /// `hyperqueue` (a local HyperQueue cluster of --jobs cores) or
    /// `hyperqueue=SERVER_DIR` (the HyperQueue server of that directory, on
    /// a cluster). HyperQueue needs its Python package (pip install
    /// hyperqueue) in the Python that FAIRSTREAM_PYTHON names (default:
    /// python3). The tables are the same byte for byte either way
    #[arg(long, value_name = "ENGINE", default_value = "local", value_parser = parse_engine)]
    engine: Engine,
}

/// Where the runs run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// Threads of this process.
    Local,
    /// HyperQueue: a local cluster (`None`) or the server of a directory.
    HyperQueue(Option<PathBuf>),
}

pub(crate) fn parse_engine(text: &str) -> Result<Engine, String> {
    match text.split_once('=') {
        None if text == "local" => Ok(Engine::Local),
        None if text == "hyperqueue" => Ok(Engine::HyperQueue(None)),
        Some(("hyperqueue", dir)) if !dir.is_empty() => {
            Ok(Engine::HyperQueue(Some(PathBuf::from(dir))))
        }
        _ => Err(format!(
            "`{text}` is not an engine (local, hyperqueue, or hyperqueue=SERVER_DIR)"
        )),
    }
}

/// One run's result.
struct RunResult {
    point: usize,
    seed: u64,
    metrics: Vec<Option<f64>>,
}

/// Runs `fairstream sweep`.
pub(crate) fn run(args: &SweepArgs) -> Result<()> {
    let plan = Plan::read(&args.file)?;
    let name = args
        .file
        .file_stem()
        .map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("sweep-{name}")));
    let outcome = execute_plan(&plan, &out, args.jobs, &args.engine, args.quiet)?;
    write_outputs(&plan, &outcome, &out, &name)?;
    if !args.quiet {
        eprintln!(
            "sweep: {} points × {} seeds written to {}",
            outcome.points.len(),
            plan.seeds.len(),
            out.display()
        );
    }
    Ok(())
}

/// What a sweep produced: its points and every run's metrics, by point
/// and then in the order of the plan's seeds.
pub(crate) struct Outcome {
    pub(crate) points: Vec<Point>,
    results: Vec<RunResult>,
}

impl Outcome {
    /// The values of metric `metric` (an index into `Plan::metrics`) at
    /// point `point` over the seeds that gave one.
    pub(crate) fn values(&self, point: usize, metric: usize) -> Vec<f64> {
        self.results
            .iter()
            .filter(|r| r.point == point)
            .filter_map(|r| r.metrics.get(metric).copied().flatten())
            .collect()
    }

    /// The values of metric `metric` at point `point`, one per seed in the
    /// plan's order (`None` where a run lacks it), so that two points
    /// pair up seed by seed.
    pub(crate) fn by_seed(&self, point: usize, metric: usize) -> Vec<Option<f64>> {
        self.results
            .iter()
            .filter(|r| r.point == point)
            .map(|r| r.metrics.get(metric).copied().flatten())
            .collect()
    }
}

/// Runs every point and seed of `plan` (or takes them from the cache in
/// `out/cache`) on `jobs` threads [default: the cores] or through
/// `engine`.
pub(crate) fn execute_plan(
    plan: &Plan,
    out: &Path,
    jobs: Option<u16>,
    engine: &Engine,
    quiet: bool,
) -> Result<Outcome> {
    let cache = out.join("cache");
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create {}", cache.display()))?;
    let binary = binary_digest()?;
    let points = plan.points();
    let tasks: Vec<(usize, u64)> = (0..points.len())
        .flat_map(|p| plan.seeds.iter().map(move |&s| (p, s)))
        .collect();
    let jobs = jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let jobs = jobs.clamp(1, MAX_JOBS).min(tasks.len().max(1));
    if let Engine::HyperQueue(server) = engine {
        let missing = missing_runs(plan, &points, &tasks, &cache, &binary)?;
        hyperqueue::run(plan, &missing, out, server.as_deref(), jobs, quiet)?;
    }
    let results = execute(plan, &points, &tasks, jobs, &cache, &binary, quiet)?;
    Ok(Outcome { points, results })
}

/// A digest of the running executable: the cache's notion of "the binary's
/// version" (a rebuilt binary runs everything again).
fn binary_digest() -> Result<String> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let bytes = std::fs::read(&exe).with_context(|| format!("cannot read {}", exe.display()))?;
    Ok(hex(&Sha256::digest(&bytes)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Runs (or takes from the cache) every task on `jobs` threads.
#[allow(clippy::too_many_arguments)]
#[allow(clippy::disallowed_methods)] // the progress line reads the wall clock, never a simulation
fn execute(
    plan: &Plan,
    points: &[Point],
    tasks: &[(usize, u64)],
    jobs: usize,
    cache: &Path,
    binary: &str,
    quiet: bool,
) -> Result<Vec<RunResult>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let cached = AtomicUsize::new(0);
    let results: Mutex<Vec<RunResult>> = Mutex::new(Vec::with_capacity(tasks.len()));
    let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let started = std::time::Instant::now();
    let tty = std::io::stderr().is_terminal();
    let origin = plan.scenario.display().to_string();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(point, seed)) = tasks.get(i) else {
                    return;
                };
                if failure.lock().map_or(true, |f| f.is_some()) {
                    return;
                }
                match one_run(plan, &points[point], seed, cache, binary, &origin) {
                    Ok((metrics, from_cache)) => {
                        cached.fetch_add(usize::from(from_cache), Ordering::Relaxed);
                        if let Ok(mut r) = results.lock() {
                            r.push(RunResult {
                                point,
                                seed,
                                metrics,
                            });
                        }
                    }
                    Err(error) => {
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(error.context(format!(
                                "point {} ({}), seed {seed}",
                                point + 1,
                                describe_point(plan, &points[point])
                            )));
                        }
                        return;
                    }
                }
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                if !quiet {
                    progress(
                        finished,
                        tasks.len(),
                        cached.load(Ordering::Relaxed),
                        started,
                        tty,
                    );
                }
            });
        }
    });
    if !quiet && tty {
        eprintln!();
    }
    if let Some(error) = failure.into_inner().ok().flatten() {
        return Err(error);
    }
    let mut results = results
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a sweep worker panicked"))?;
    results.sort_by_key(|r| (r.point, plan.seeds.iter().position(|&s| s == r.seed)));
    Ok(results)
}

/// The progress line: runs done, from the cache, and the time left.
fn progress(done: usize, total: usize, cached: usize, started: std::time::Instant, tty: bool) {
    let elapsed = started.elapsed().as_secs_f64();
    let computed = done.saturating_sub(cached).max(1);
    let left = elapsed / computed as f64 * total.saturating_sub(done) as f64;
    let width = 30;
    let filled = done * width / total.max(1);
    let line = format!(
        "[{}{}] {done}/{total} runs ({cached} cached), {elapsed:.0} s, about {left:.0} s left",
        "#".repeat(filled),
        " ".repeat(width - filled),
    );
    let mut stderr = std::io::stderr();
    if tty {
        let _ = write!(stderr, "\r{line}");
    } else if done == total || done % 10 == 0 {
        let _ = writeln!(stderr, "{line}");
    }
    let _ = stderr.flush();
}

/// A run the cache does not hold yet: its scenario text and cache file.
pub(crate) struct Missing {
    pub(crate) key: String,
    pub(crate) text: String,
    pub(crate) summary: PathBuf,
}

/// The runs whose summaries are not in `cache` (each point's baseline run
/// too, if the sweep has a `[baseline]`).
fn missing_runs(
    plan: &Plan,
    points: &[Point],
    tasks: &[(usize, u64)],
    cache: &Path,
    binary: &str,
) -> Result<Vec<Missing>> {
    let mut missing = Vec::new();
    for &(point, seed) in tasks {
        let texts = [
            Some(plan.scenario_text(&points[point], seed)?),
            plan.baseline_text(&points[point], seed)?,
        ];
        for text in texts.into_iter().flatten() {
            let key = cache_key(binary, &text);
            let summary = cache.join(format!("{key}.json"));
            if !summary.exists() && !missing.iter().any(|m: &Missing| m.key == key) {
                missing.push(Missing { key, text, summary });
            }
        }
    }
    Ok(missing)
}

/// The cache's name for a run: a SHA-256 of the executable's digest and
/// the run's scenario text.
fn cache_key(binary: &str, text: &str) -> String {
    hex(&Sha256::digest(format!("{binary}\n{text}").as_bytes()))
}

/// Stores `summary` (any JSON text of a summary) as the cache file
/// `file`: written whole, then renamed, so an interrupted sweep leaves no
/// half file; in one form whatever engine ran it.
pub(crate) fn store(file: &Path, summary: &Value) -> Result<()> {
    let mut partial = file.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, serde_json::to_string(summary)?)
        .with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, file).with_context(|| format!("cannot write {}", file.display()))
}

/// One point and seed: its metrics, and whether every simulation came from
/// the cache.
fn one_run(
    plan: &Plan,
    point: &Point,
    seed: u64,
    cache: &Path,
    binary: &str,
    origin: &str,
) -> Result<(Vec<Option<f64>>, bool)> {
    let scenario = plan.scenario(point, seed)?;
    let (summary, cached) = simulate_cached(&toml::to_string(&scenario)?, cache, binary, origin)?;
    let (baseline, baseline_cached) = match plan.baseline_text(point, seed)? {
        Some(text) => {
            let (summary, cached) =
                simulate_cached(&text, cache, binary, origin).context("its baseline run")?;
            (Some(summary), cached)
        }
        None => (None, true),
    };
    let run = stats::RunData {
        summary: &summary,
        scenario: &scenario,
        baseline: baseline.as_ref(),
    };
    let metrics = plan
        .metrics
        .iter()
        .map(|(_, m)| stats::evaluate(m, &run))
        .collect();
    Ok((metrics, cached && baseline_cached))
}

/// One simulation of scenario `text`, or its cached summary: (summary,
/// from the cache).
fn simulate_cached(text: &str, cache: &Path, binary: &str, origin: &str) -> Result<(Value, bool)> {
    let file = cache.join(format!("{}.json", cache_key(binary, text)));
    if let Ok(cached) = std::fs::read_to_string(&file) {
        if let Ok(summary) = serde_json::from_str(&cached) {
            return Ok((summary, true));
        }
    }
    let scenario = Scenario::from_str(text, origin)?;
    // A sweep keeps only summaries: no time series.
    let mut simulation = Simulation::new(&scenario)?.without_series();
    // Through text, as a cached or HyperQueue summary comes: every engine
    // and every rerun reads the same numbers.
    let text = serde_json::to_string(&simulation.run())?;
    let summary: Value = serde_json::from_str(&text)?;
    store(&file, &summary)?;
    Ok((summary, false))
}

fn describe_point(plan: &Plan, point: &Point) -> String {
    if plan.vary.is_empty() {
        return "the base scenario".into();
    }
    plan.vary
        .iter()
        .zip(point)
        .map(|((key, _), value)| format!("{key} = {value}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value as a table cell (strings without their quotes).
fn cell(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn number(x: Option<f64>) -> String {
    x.filter(|x| x.is_finite())
        .map_or_else(String::new, |x| format!("{x}"))
}

/// The tables (below) and the report (`index.html`, `index.md` and a chart
/// per metric) of sweep `name` into `out`.
pub(crate) fn write_outputs(plan: &Plan, outcome: &Outcome, out: &Path, name: &str) -> Result<()> {
    let table = write_tables(plan, outcome, out)?;
    report::write(plan, outcome, table, out, name)
}

/// `runs.csv`, `summary.csv`, `summary.json` and `summary.md`; returns the
/// summary table as `summary.md` shows it.
fn write_tables(plan: &Plan, outcome: &Outcome, out: &Path) -> Result<Table> {
    let points = &outcome.points;
    let results = &outcome.results;
    let params: Vec<&str> = plan.vary.iter().map(|(k, _)| k.as_str()).collect();
    let metrics: Vec<&str> = plan.metrics.iter().map(|(k, _)| k.as_str()).collect();
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_owned()
        }
    };
    // One row per run.
    let mut runs = String::new();
    let header: Vec<String> = ["point"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain(params.iter().map(|p| quote(p)))
        .chain(["seed".to_owned()])
        .chain(metrics.iter().map(|m| quote(m)))
        .collect();
    let _ = writeln!(runs, "{}", header.join(","));
    for r in results {
        let mut row = vec![(r.point + 1).to_string()];
        row.extend(points[r.point].iter().map(|v| quote(&cell(v))));
        row.push(r.seed.to_string());
        row.extend(r.metrics.iter().map(|m| number(*m)));
        let _ = writeln!(runs, "{}", row.join(","));
    }
    write(out, "runs.csv", &runs)?;
    // Per point: mean and CI half-width of each metric over the seeds.
    let mut csv = String::new();
    let mut json_points = Vec::new();
    let mut csv_header = vec!["point".to_owned()];
    csv_header.extend(params.iter().map(|p| quote(p)));
    csv_header.push("seeds".into());
    for m in &metrics {
        csv_header.push(quote(&format!("{m} mean")));
        csv_header.push(quote(&format!("{m} ci95")));
    }
    let _ = writeln!(csv, "{}", csv_header.join(","));
    let mut header = vec!["point".to_owned()];
    header.extend(params.iter().map(|p| (*p).to_owned()));
    header.push("seeds".to_owned());
    header.extend(metrics.iter().map(|m| (*m).to_owned()));
    let mut md_rows = Vec::new();
    for (p, point) in points.iter().enumerate() {
        let runs: Vec<&RunResult> = results.iter().filter(|r| r.point == p).collect();
        let mut row = vec![(p + 1).to_string()];
        row.extend(point.iter().map(|v| quote(&cell(v))));
        row.push(runs.len().to_string());
        // Metrics in the order of the [metrics] table's keys (sorted).
        let mut md_cells = Vec::new();
        let mut json_metrics = serde_json::Map::new();
        for (m, name) in metrics.iter().enumerate() {
            let values: Vec<f64> = runs.iter().filter_map(|r| r.metrics[m]).collect();
            let (mean, half) = stats::mean_ci(&values);
            row.push(number(Some(mean)));
            row.push(number(Some(half)));
            md_cells.push(if values.is_empty() {
                "–".to_owned()
            } else if half.is_finite() {
                let (mean, half) = round_pair(mean, half);
                format!("{mean} ± {half}")
            } else {
                round(mean).0
            });
            json_metrics.insert(
                (*name).to_owned(),
                json!({
                    "mean": mean.is_finite().then_some(mean),
                    "ci95": half.is_finite().then_some(half),
                    "n": values.len(),
                }),
            );
        }
        let _ = writeln!(csv, "{}", row.join(","));
        let mut md_row = vec![(p + 1).to_string()];
        md_row.extend(point.iter().map(cell));
        md_row.push(runs.len().to_string());
        md_row.extend(md_cells);
        md_rows.push(md_row);
        let parameters: serde_json::Map<String, Value> = params
            .iter()
            .zip(point)
            .map(|(k, v)| {
                (
                    (*k).to_owned(),
                    serde_json::to_value(v).unwrap_or(Value::Null),
                )
            })
            .collect();
        json_points.push(json!({
            "point": p + 1,
            "parameters": parameters,
            "seeds": runs.len(),
            "metrics": json_metrics,
        }));
    }
    write(out, "summary.csv", &csv)?;
    let table = Table {
        header,
        rows: md_rows,
    };
    write(out, "summary.md", &markdown_table(&table))?;
    let summary = json!({
        "scenario": plan.scenario.display().to_string(),
        "seeds": plan.seeds,
        "points": json_points,
    });
    write(
        out,
        "summary.json",
        &serde_json::to_string_pretty(&summary)?,
    )?;
    Ok(table)
}

/// `table` as a Markdown table, cells as they are.
fn markdown_table(table: &Table) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "| {} |", table.header.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(table.header.len()));
    for row in &table.rows {
        let _ = writeln!(md, "| {} |", row.join(" | "));
    }
    md
}

/// Four significant digits, and the decimals used.
fn round(x: f64) -> (String, usize) {
    if x == 0.0 || !x.is_finite() {
        return (format!("{x}"), 0);
    }
    let digits = 4 - 1 - x.abs().log10().floor() as i32;
    let decimals = usize::try_from(digits).unwrap_or(0);
    (format!("{x:.decimals$}"), decimals)
}

/// A mean to four significant digits and its half-width to the same
/// decimals (a half-width below them shows as 0).
fn round_pair(mean: f64, half: f64) -> (String, String) {
    let (text, decimals) = round(mean);
    (text, format!("{half:.decimals$}"))
}

fn write(dir: &Path, name: &str, text: &str) -> Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}
