//! The HyperQueue engine: the runs missing from the cache become one
//! HyperQueue job of `fairstream simulate` tasks, run by a local cluster or
//! by the server of a directory, through the Python driver `hq_sweep.py`
//! (HyperQueue's Python API; `docs/reproducing.md` says how to start a
//! server and workers on a cluster).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::plan::Plan;
use super::{store, Missing};

/// The driver, written next to the tasks when a sweep uses HyperQueue.
const DRIVER: &str = include_str!("hq_sweep.py");

/// Runs `missing` on HyperQueue, leaving each summary in its cache file.
pub(crate) fn run(
    plan: &Plan,
    missing: &[Missing],
    out: &Path,
    server: Option<&Path>,
    jobs: usize,
    quiet: bool,
) -> Result<()> {
    if missing.is_empty() {
        return Ok(());
    }
    let dir = out.join("hyperqueue");
    let tasks_dir = dir.join("tasks");
    std::fs::create_dir_all(&tasks_dir)
        .with_context(|| format!("cannot create {}", tasks_dir.display()))?;
    let absolute = |p: &Path| -> Result<String> {
        Ok(std::path::absolute(p)
            .with_context(|| format!("no absolute path for {}", p.display()))?
            .display()
            .to_string())
    };
    let mut tasks = Vec::new();
    for run in missing {
        let scenario = tasks_dir.join(format!("{}.toml", run.key));
        std::fs::write(&scenario, &run.text)
            .with_context(|| format!("cannot write {}", scenario.display()))?;
        tasks.push(json!({
            "name": run.key,
            "scenario": absolute(&scenario)?,
            "summary": absolute(&tasks_dir.join(format!("{}.json", run.key)))?,
            "stderr": absolute(&tasks_dir.join(format!("{}.stderr", run.key)))?,
        }));
    }
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let manifest = json!({
        "fairstream": absolute(&exe)?,
        "origin": absolute(&plan.scenario)?,
        "jobs": jobs,
        "server_dir": server.map(absolute).transpose()?,
        "cluster_dir": absolute(&dir.join("cluster"))?,
        "tasks": tasks,
    });
    let manifest_path = dir.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_string_pretty(&manifest)?)
        .with_context(|| format!("cannot write {}", manifest_path.display()))?;
    let driver = dir.join("hq_sweep.py");
    std::fs::write(&driver, DRIVER)
        .with_context(|| format!("cannot write {}", driver.display()))?;
    let python = std::env::var("FAIRSTREAM_PYTHON").unwrap_or_else(|_| "python3".into());
    if !quiet {
        eprintln!(
            "sweep: {} runs to HyperQueue ({})",
            missing.len(),
            server.map_or_else(
                || format!("a local cluster of {jobs} cores"),
                |s| format!("the server of {}", s.display())
            )
        );
    }
    let mut command = Command::new(&python);
    command.arg(&driver).arg(&manifest_path);
    let log = dir.join("driver.log");
    if quiet {
        // HyperQueue's server table and progress bar go to a log instead.
        let file = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        command.stdout(file.try_clone()?).stderr(file);
    }
    let status = command.status().with_context(|| {
        format!("cannot run {python} (set FAIRSTREAM_PYTHON to a Python with hyperqueue)")
    })?;
    match status.code() {
        Some(0) => {}
        Some(3) => bail!(
            "HyperQueue's Python package is not installed for {python}: pip install hyperqueue, \
             or set FAIRSTREAM_PYTHON to a Python that has it"
        ),
        _ => bail!(
            "the HyperQueue job failed ({status}); each task's stderr is in {}{}",
            tasks_dir.display(),
            if quiet {
                format!(", the driver's output in {}", log.display())
            } else {
                String::new()
            }
        ),
    }
    for run in missing {
        let produced = tasks_dir.join(format!("{}.json", run.key));
        let text = std::fs::read_to_string(&produced)
            .with_context(|| format!("HyperQueue left no summary in {}", produced.display()))?;
        let summary: Value = serde_json::from_str(&text)
            .with_context(|| format!("the summary in {} is not JSON", produced.display()))?;
        store(&run.summary, &summary)?;
        let _ = std::fs::remove_file(&produced);
    }
    Ok(())
}
