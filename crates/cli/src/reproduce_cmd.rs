//! `fairstream reproduce PAPER`: the sweeps behind a paper's tables and
//! figures, and a report that sets the paper's own numbers beside ours
//! (issue 14).
//!
//! ```text
//! fairstream reproduce 000 --quick            # paper 000's Tables 3-6 on a WiMAX TDD uplink
//! fairstream reproduce 001 --quick            # fewer seeds, shorter runs
//! fairstream reproduce 002 --quick            # paper 002's Figs. 1-3 on a BoD satellite link
//! fairstream reproduce 003 --out docs/results/reproduce/003
//! fairstream reproduce 004 --quick            # paper 004's Tables 1-2, and beyond
//! ```
//!
//! Each paper's scenarios, sweeps and numbers are files under
//! `experiments/` built into the binary (`paper001/`, `sweeps/paper001/`,
//! `papers/001.toml`, …), written to `OUT/work/inputs/` and run from
//! there with the sweep engine (`--jobs`, `--engine`), whose cache in
//! `OUT/work/cache/` lets an interrupted run resume. The report is
//! `OUT/index.html` (one self-contained page) and `OUT/index.md` with its
//! charts as PNG files beside it; each sweep's own tables are in
//! `OUT/work/SWEEP/`.

mod compare;
mod paper000;
mod paper001;
mod paper002;
mod paper003;
mod paper004;
mod paper_data;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use fairstream_report::Page;
use fairstream_sim::runner::{Simulation, Summary};
use fairstream_sim::scenario::Scenario;

use crate::sweep_cmd::plan::{self, Plan};
use crate::sweep_cmd::{self, Engine, Outcome};
use paper_data::PaperData;

/// Arguments of `fairstream reproduce`.
#[derive(Debug, Args)]
pub(crate) struct ReproduceArgs {
    /// The paper: 000, 001, 002, 003 or 004 (the numbers of ../shared/papers)
    #[arg(value_name = "PAPER")]
    paper: String,
    /// A reduced run: fewer seeds, shorter runs
    #[arg(long)]
    quick: bool,
    /// Where the report goes [default: reproduce/PAPER]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Simulations run at once [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
    /// Where the runs run: `local`, `hyperqueue` or `hyperqueue=SERVER_DIR`
    /// (as `fairstream sweep --engine`)
    #[arg(long, value_name = "ENGINE", default_value = "local", value_parser = sweep_cmd::parse_engine)]
    engine: Engine,
    /// No progress lines on stderr
    #[arg(long)]
    quiet: bool,
}

/// An input file of a paper, built into the binary: its path under
/// `experiments/` and its text.
type Input = (&'static str, &'static str);

/// A paper `reproduce` knows.
struct Recipe {
    /// Its number, as the file names in ../shared/papers.
    id: &'static str,
    /// The scenario, sweep and data files it runs.
    inputs: &'static [Input],
    /// Runs the sweeps and writes the report's sections.
    build: fn(&Runner, &PaperData, &mut Page) -> Result<()>,
}

/// The papers, and what is still missing for the others.
const RECIPES: &[Recipe] = &[
    Recipe {
        id: "000",
        inputs: paper000::INPUTS,
        build: paper000::build,
    },
    Recipe {
        id: "001",
        inputs: paper001::INPUTS,
        build: paper001::build,
    },
    Recipe {
        id: "002",
        inputs: paper002::INPUTS,
        build: paper002::build,
    },
    Recipe {
        id: "003",
        inputs: paper003::INPUTS,
        build: paper003::build,
    },
    Recipe {
        id: "004",
        inputs: paper004::INPUTS,
        build: paper004::build,
    },
];

/// Why a paper cannot be reproduced yet (none now; the list stays for
/// papers added to ../shared/papers later).
const NOT_YET: &[(&str, &str)] = &[];

/// What a paper's recipe works with.
pub(crate) struct Runner {
    /// Where the inputs were written.
    inputs: PathBuf,
    /// Where the sweeps' caches and tables go.
    work: PathBuf,
    jobs: Option<u16>,
    engine: Engine,
    /// The reduced run.
    quick: bool,
    quiet: bool,
}

/// How `--quick` shortens a sweep.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Quick {
    /// Seeds kept (the first ones of the sweep file).
    pub(crate) seeds: usize,
    /// The runs' `run.duration`.
    pub(crate) duration: &'static str,
}

impl Runner {
    /// Whether this is the reduced run.
    pub(crate) fn quick(&self) -> bool {
        self.quick
    }

    /// Whether progress lines are off.
    pub(crate) fn quiet(&self) -> bool {
        self.quiet
    }

    /// Simulations to run at once.
    pub(crate) fn jobs(&self) -> usize {
        self.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            usize::from,
        )
    }

    /// The sweep file `path` (under `experiments/`), shortened when quick.
    pub(crate) fn plan(&self, path: &str, quick: Quick) -> Result<Plan> {
        let mut plan = Plan::read(&self.inputs.join(path))?;
        if self.quick {
            plan.seeds.truncate(quick.seeds);
            plan::set(
                &mut plan.base,
                "run.duration",
                toml::Value::String(quick.duration.to_owned()),
            )
            .context("the quick run's duration")?;
        }
        Ok(plan)
    }

    /// Runs `plan` (or takes it from the cache) and writes its own tables
    /// and report into `work/NAME/`.
    pub(crate) fn run(&self, name: &str, plan: &Plan) -> Result<Outcome> {
        if !self.quiet {
            eprintln!("reproduce: {name}");
        }
        let outcome =
            sweep_cmd::execute_plan(plan, &self.work, self.jobs, &self.engine, self.quiet)?;
        let dir = self.work.join(name);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        sweep_cmd::write_outputs(plan, &outcome, &dir, name)?;
        Ok(outcome)
    }

    /// `plan`'s run length as the report writes it ("600 s"); "?" when it
    /// has none.
    pub(crate) fn duration(plan: &Plan) -> String {
        plan.base
            .get("run")
            .and_then(|run| run.get("duration"))
            .and_then(toml::Value::as_str)
            .unwrap_or("?")
            .replace('s', " s")
    }

    /// The text of scenario `path` (under `experiments/`).
    pub(crate) fn input_path(&self, path: &str) -> PathBuf {
        self.inputs.join(path)
    }

    /// A file the recipe makes for its runs (in the work directory).
    pub(crate) fn work_path(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }
}

/// Runs `fairstream reproduce`.
pub(crate) fn run(args: &ReproduceArgs) -> Result<()> {
    let id = normalise(&args.paper)?;
    let recipe = RECIPES
        .iter()
        .find(|r| r.id == id)
        .context("no recipe for this paper")?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reproduce").join(recipe.id));
    let work = out.join("work");
    let inputs = work.join("inputs");
    for (path, text) in recipe.inputs {
        let file = inputs.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
    }
    let data_path = format!("papers/{}.toml", recipe.id);
    let data = PaperData::read(&inputs.join(&data_path))?;
    let context = Runner {
        inputs,
        work,
        jobs: args.jobs,
        engine: args.engine.clone(),
        quick: args.quick,
        quiet: args.quiet,
    };
    let mut page = Page::new(&format!(
        "Paper {}: {}{}",
        data.paper,
        data.title,
        if args.quick { " (quick run)" } else { "" }
    ));
    page.paragraph(&format!(
        "{}, \"{}\" (`../shared/papers/{}`), reproduced by fairstream's simulator. \
         The paper's numbers are quoted from `experiments/{data_path}`; ours are the mean and the \
         half-width of the 95 % confidence interval over the seeds (Student's t).",
        data.authors, data.title, data.file
    ));
    page.code_block(&command_line(recipe.id, args));
    (recipe.build)(&context, &data, &mut page)?;
    page.write(&out, "index")
        .with_context(|| format!("cannot write the report into {}", out.display()))?;
    if !args.quiet {
        eprintln!(
            "reproduce: {} and {} written",
            out.join("index.html").display(),
            out.join("index.md").display()
        );
    }
    Ok(())
}

/// Runs the scenario `text` (read from `origin`) with `changes` (key paths
/// and values, as a sweep file writes them) set first; the finished
/// simulation, for its series, and its summary.
pub(crate) fn run_scenario(
    text: &str,
    origin: &str,
    changes: &[(&str, toml::Value)],
) -> Result<(Simulation, Summary)> {
    let mut value: toml::Value = toml::from_str(text)?;
    for (path, change) in changes {
        plan::set(&mut value, path, change.clone())?;
    }
    let scenario = Scenario::from_str(&toml::to_string(&value)?, origin)?;
    let mut simulation = Simulation::new(&scenario)?;
    let summary = simulation.run();
    Ok((simulation, summary))
}

/// The command that made the report, as the report prints it.
fn command_line(id: &str, args: &ReproduceArgs) -> String {
    let mut line = format!("fairstream reproduce {id}");
    if args.quick {
        line.push_str(" --quick");
    }
    if let Some(out) = &args.out {
        line.push_str(&format!(" --out {}", out.display()));
    }
    line
}

/// `1`, `01`, `001` and `paper001` all name paper 001; an unknown or
/// not-yet-reproducible paper is an error that says which exist.
fn normalise(text: &str) -> Result<&'static str> {
    let digits = text
        .trim()
        .trim_start_matches("paper")
        .trim_start_matches('0');
    let number: u32 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok().with_context(|| {
            format!(
                "`{text}` is not a paper number (000, 001, 002, 003, 004: the papers in ../shared/papers)"
            )
        })?
    };
    let id = format!("{number:03}");
    if let Some(recipe) = RECIPES.iter().find(|r| r.id == id) {
        return Ok(recipe.id);
    }
    let known: Vec<&str> = RECIPES.iter().map(|r| r.id).collect();
    if let Some((_, why)) = NOT_YET.iter().find(|(p, _)| *p == id) {
        bail!(
            "paper {id} cannot be reproduced yet: {why} (reproducible now: {})",
            known.join(", ")
        );
    }
    bail!(
        "there is no paper {id} (reproducible: {}; see ../shared/papers/INDEX.md)",
        known.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn papers_are_named_with_or_without_zeros() {
        assert_eq!(normalise("1").unwrap(), "001");
        assert_eq!(normalise("001").unwrap(), "001");
        assert_eq!(normalise("paper003").unwrap(), "003");
        assert_eq!(normalise("2").unwrap(), "002");
        assert_eq!(normalise("000").unwrap(), "000");
        assert_eq!(normalise("paper0").unwrap(), "000");
        let none = normalise("9").unwrap_err().to_string();
        assert!(none.contains("no paper 009"), "{none}");
        let junk = normalise("x1").unwrap_err().to_string();
        assert!(junk.contains("not a paper number"), "{junk}");
    }
}
