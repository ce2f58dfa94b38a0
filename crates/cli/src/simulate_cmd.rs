//! `fairstream simulate`: run a scenario file in the deterministic simulator.
//!
//! ```text
//! fairstream simulate experiments/examples/dumbbell.toml                 # JSON summary on stdout
//! fairstream simulate FILE --seed 3 --duration 30s --out results/        # plus CSV, PNG, index.html
//! fairstream simulate FILE --pcap-dir captures/                          # one pcap per link direction
//! ```

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use fairstream_proto::time::Instant as SimInstant;
use fairstream_proto::units::parse_duration;
use fairstream_report::Chart;
use fairstream_sim::runner::{MediaOutput, Simulation, Summary, TimeSeries};
use fairstream_sim::scenario::Scenario;

use crate::plots;
use crate::simulate_page;

/// Arguments of `fairstream simulate`.
#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// The scenario file (TOML; see docs/scenarios.md).
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// Replace the scenario's seed.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// Replace the scenario's duration (with a unit: 30s, 2min, 500ms).
    #[arg(long, value_name = "DURATION", value_parser = parse_run_duration)]
    duration: Option<Duration>,

    /// Write the summary, per-flow and per-link CSV time series (a row per
    /// 100 ms), PNG plots and a report page (index.html, index.md) into
    /// this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Write one pcap file per link direction into this directory (created
    /// if missing), readable by Wireshark.
    #[arg(long, value_name = "DIR")]
    pcap_dir: Option<PathBuf>,

    /// No progress bar on stderr.
    #[arg(long)]
    quiet: bool,

    /// Resolve the scenario's relative paths (traces, clips) against this
    /// file's directory instead of FILE's (`sweep` runs generated scenario
    /// files this way).
    #[arg(long, value_name = "PATH")]
    origin: Option<PathBuf>,
}

/// `--duration`: a positive duration with a unit.
fn parse_run_duration(text: &str) -> Result<Duration, String> {
    let duration = parse_duration(text).map_err(|e| e.to_string())?;
    if duration.is_zero() {
        return Err("the duration must be greater than zero".to_owned());
    }
    Ok(duration)
}

/// Runs `fairstream simulate`.
pub(crate) fn run(args: &SimulateArgs) -> anyhow::Result<()> {
    let mut scenario = match &args.origin {
        None => Scenario::from_file(&args.file)?,
        Some(origin) => {
            let text = fs::read_to_string(&args.file)
                .with_context(|| format!("cannot read {}", args.file.display()))?;
            Scenario::from_str(&text, &origin.display().to_string())?
        }
    };
    if let Some(seed) = args.seed {
        scenario = scenario.with_seed(seed);
    }
    if let Some(duration) = args.duration {
        scenario = scenario.with_duration(duration)?;
    }
    let mut simulation =
        Simulation::new(&scenario).with_context(|| format!("scenario {}", args.file.display()))?;
    if args.out.is_none() {
        // Only --out writes the time series; the summary does not need them.
        simulation = simulation.without_series();
    }
    if let Some(dir) = &args.pcap_dir {
        create_dir(dir)?;
        let mut names = UniqueNames::default();
        simulation
            .capture_with(|_link, direction| {
                let path = dir.join(format!("{}.pcap", names.take(&direction_file(direction))));
                let file = File::create(&path).map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
                })?;
                Ok(Box::new(BufWriter::new(file)) as Box<dyn Write>)
            })
            .context("cannot start the packet captures")?;
    }
    let summary = run_with_progress(&mut simulation, &scenario, args.quiet);
    if args.pcap_dir.is_some() {
        simulation
            .finish_captures()
            .context("cannot write the packet captures")?;
    }
    let json = serde_json::to_string_pretty(&summary)?;
    if let Some(dir) = &args.out {
        write_outputs(dir, &json, simulation.series())?;
        let media_charts = write_media_outputs(dir, &simulation.media_outputs())?;
        let mut charts = plots::simulation_charts(&summary, simulation.series());
        charts.extend(media_charts);
        let run = simulate_page::Run {
            file: &args.file,
            out: dir,
            summary: &summary,
        };
        simulate_page::page(&run, charts)
            .write(dir, "index")
            .context("cannot write the report page and its plots")?;
    }
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{json}")?;
    stdout.flush()?;
    Ok(())
}

/// Runs the simulation, drawing a progress bar on stderr once the run has
/// taken more than two seconds of wall time. The wall clock is read here, in
/// the command, never inside the simulation.
#[allow(clippy::disallowed_methods)]
fn run_with_progress(simulation: &mut Simulation, scenario: &Scenario, quiet: bool) -> Summary {
    const PROGRESS_AFTER: Duration = Duration::from_secs(2);
    let started = std::time::Instant::now();
    let total = scenario.run().duration.as_secs_f64();
    let mut drawn = false;
    let mut last_draw = started;
    let mut stderr = io::stderr();
    let show = !quiet;
    // On a terminal the bar is redrawn in place; in a log, a line every 5 s.
    let tty = stderr.is_terminal();
    let redraw = if tty {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(5)
    };
    let summary = simulation.run_with(|now: SimInstant| {
        if !show {
            return;
        }
        let wall = started.elapsed();
        if wall < PROGRESS_AFTER || (drawn && last_draw.elapsed() < redraw) {
            return;
        }
        last_draw = std::time::Instant::now();
        drawn = true;
        let done = if total > 0.0 {
            (now.as_secs_f64() / total).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let width = 30;
        let filled = (done * width as f64).round() as usize;
        let eta = if done > 0.0 {
            wall.as_secs_f64() * (1.0 - done) / done
        } else {
            0.0
        };
        let _ = write!(
            stderr,
            "{}[{}{}] {:>3.0}%  {:.1}/{:.1} s simulated  {:.0} s left {}",
            if tty { "\r" } else { "" },
            "#".repeat(filled),
            " ".repeat(width - filled),
            done * 100.0,
            now.as_secs_f64(),
            total,
            eta,
            if tty { "" } else { "\n" }
        );
        let _ = stderr.flush();
    });
    if show {
        // Wall time and speed stay out of the summary, which must be the
        // same bytes for the same scenario and seed.
        let wall = started.elapsed().as_secs_f64();
        let _ = writeln!(
            stderr,
            "{}done: {} events in {:.2} s of wall time ({:.2} M events/s){}",
            if tty && drawn { "\r" } else { "" },
            summary.events,
            wall,
            summary.events as f64 / wall.max(1e-9) / 1e6,
            " ".repeat(if tty && drawn { 40 } else { 0 })
        );
    }
    summary
}

/// `a->b` as a file name: `a-to-b`, with characters outside `[A-Za-z0-9._-]`
/// replaced by `_`.
fn direction_file(direction: &str) -> String {
    sanitize(&direction.replace("->", "-to-"))
}

fn sanitize(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() || clean.starts_with('.') {
        format!("_{clean}")
    } else {
        clean
    }
}

/// File names made unique by a numeric suffix.
#[derive(Debug, Default)]
struct UniqueNames(BTreeSet<String>);

impl UniqueNames {
    fn take(&mut self, name: &str) -> String {
        let mut candidate = name.to_owned();
        let mut n = 2;
        while !self.0.insert(candidate.clone()) {
            candidate = format!("{name}-{n}");
            n += 1;
        }
        candidate
    }
}

fn create_dir(dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create directory {}", dir.display()))
}

fn write_file(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> anyhow::Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::new(file);
    write(&mut out)
        .and_then(|()| out.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `--out DIR`: summary.json, flows/NAME.csv and links/A-to-B.csv (the
/// report page writes the plots).
fn write_outputs(dir: &Path, json: &str, series: &TimeSeries) -> anyhow::Result<()> {
    create_dir(dir)?;
    write_file(&dir.join("summary.json"), |out| writeln!(out, "{json}"))?;
    let flows_dir = dir.join("flows");
    create_dir(&flows_dir)?;
    let mut names = UniqueNames::default();
    for flow in &series.flows {
        let path = flows_dir.join(format!("{}.csv", names.take(&sanitize(&flow.name))));
        write_file(&path, |out| flow.write_csv(out))?;
    }
    let links_dir = dir.join("links");
    create_dir(&links_dir)?;
    let mut names = UniqueNames::default();
    for link in &series.links {
        let path = links_dir.join(format!(
            "{}.csv",
            names.take(&direction_file(&link.direction))
        ));
        write_file(&path, |out| link.write_csv(out))?;
    }
    Ok(())
}

/// `--out DIR` for media flows: `media/FLOW/frames.csv`, EvalVid's `st`,
/// `sd` and `rd`, with FEC the parity packets that arrived (`rd_fec`), the
/// stream sent as `sent.264`, and the playback buffer over time as
/// `buffer.csv`. Returns the charts the report page writes beside them,
/// `media/FLOW/gop_arrival.png` and `media/FLOW/buffer.png` (those with
/// something to draw).
fn write_media_outputs(
    dir: &Path,
    outputs: &[MediaOutput],
) -> anyhow::Result<Vec<(String, Chart)>> {
    let mut charts = Vec::new();
    let mut names = UniqueNames::default();
    for output in outputs {
        let flow_name = names.take(&sanitize(&output.flow));
        let flow_dir = dir.join("media").join(&flow_name);
        create_dir(&flow_dir)?;
        write_file(&flow_dir.join("frames.csv"), |out| {
            out.write_all(output.frames_csv.as_bytes())
        })?;
        for (name, text) in [("st", &output.st), ("sd", &output.sd), ("rd", &output.rd)] {
            write_file(&flow_dir.join(name), |out| out.write_all(text.as_bytes()))?;
        }
        if output.fec.is_some() {
            write_file(&flow_dir.join("rd_fec"), |out| {
                out.write_all(output.rd_fec.as_bytes())
            })?;
        }
        if !output.video.is_empty() {
            write_file(&flow_dir.join("sent.264"), |out| {
                out.write_all(&output.video)
            })?;
        }
        write_file(&flow_dir.join("buffer.csv"), |out| {
            out.write_all(output.buffer_csv.as_bytes())
        })?;
        let gops = plots::gop_arrival(&output.flow, &output.gops);
        let buffer = plots::buffer(&output.flow, output.player, &output.buffer);
        for (stem, chart) in [("gop_arrival", gops), ("buffer", buffer)] {
            if !chart.is_empty() {
                charts.push((format!("media/{flow_name}/{stem}"), chart));
            }
        }
    }
    Ok(charts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_unique() {
        assert_eq!(direction_file("a->b"), "a-to-b");
        assert_eq!(sanitize("../x y"), "_.._x_y");
        assert_eq!(sanitize(""), "_");
        let mut names = UniqueNames::default();
        assert_eq!(names.take("f"), "f");
        assert_eq!(names.take("f"), "f-2");
        assert_eq!(names.take("f"), "f-3");
    }

    #[test]
    fn zero_duration_is_refused() {
        assert!(parse_run_duration("0s").is_err());
        assert!(parse_run_duration("ten seconds").is_err());
        assert_eq!(parse_run_duration("2s"), Ok(Duration::from_secs(2)));
    }
}
