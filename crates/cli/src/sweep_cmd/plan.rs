//! The sweep file: a base scenario, the parameters to vary (every
//! combination of their values), the seeds, and the metrics to collect.
//!
//! ```toml
//! scenario = "../examples/wireless-last-hop.toml"   # relative to this file
//! seeds = [1, 2, 3, 4, 5]                # or { from = 1, count = 5 }
//!
//! [vary]                                 # every combination: 2 × 3 points
//!                                        # (keys are taken in sorted order)
//! "link.bs-client.loss.loss_bad" = [0.05, 0.2]
//! "flow.voip.transport.packet_size" = [80, 160, 320]
//! # a range: "link.1.delay" = { from = 5, to = 25, step = 10, unit = "ms" }
//! # linked: "flow.a.transport.rate, flow.b.transport.rate" = ["1mbit", "2mbit"]
//! #   (every path of a comma-separated key takes the same value)
//!
//! [cases]                                # named sets of changes: one more
//!                                        # parameter, `case`, taken first
//! tfrc = { "flow.voip.transport" = { cc = "tfrc" } }
//! ccid2 = { "flow.voip.transport" = { cc = "ccid2" }, "run.duration" = "30s" }
//!
//! [baseline]                             # each point's baseline run (for harm)
//! "flow.voip.transport" = { cc = "tcp-newreno" }
//!
//! [metrics]                              # JSON pointers into the summary
//! goodput_bps = "/flows/0/goodput_bps"
//! loss_event_rate = "/flows/0/loss_event_rate"
//! fairness = { jain = "/flows/*/goodput_bps" }
//! over_tcp = { ratio = ["/flows/0/goodput_bps", { mean = "/flows/[cc=tcp-newreno]/goodput_bps" }] }
//! hop_share = { share = ["/flows/0/goodput_bps", "bs-client"] }
//! tcp_harm = { harm = "/flows/[cc=tcp-newreno]/goodput_bps" }
//! ```
//!
//! A parameter's path names a key of the scenario file: table keys, and in
//! an array of tables (`[[link]]`, `[[flow]]`) an element by its `name`,
//! by its `between` nodes joined with `-` (`bs-client`), or by its index.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use toml::Value;

/// The parameter that names a point's case (`[cases]`).
pub(crate) const CASE_KEY: &str = "case";

/// The most runs (points × seeds) one sweep may ask for.
pub(crate) const MAX_RUNS: usize = 100_000;

/// A metric: where its value comes from in the summary (and, for some, in
/// the run's scenario or its baseline run).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Metric {
    /// A number at a JSON pointer.
    Pointer(String),
    /// The first over the second.
    Ratio(Box<Metric>, Box<Metric>),
    /// Jain's fairness index of the numbers a pattern matches (`*` for
    /// every element of an array, `[key=value]` for the elements whose
    /// `key` is `value`).
    Jain(String),
    /// The sum of the numbers a pattern matches.
    Sum(String),
    /// Their mean.
    Mean(String),
    /// A rate over the capacity of a link of the run's scenario, B(1 − p):
    /// its rate times one less its mean loss (paper 001's B_w(1 − p_w)).
    Share {
        /// The rate (a metric, bits/s).
        of: Box<Metric>,
        /// The link, by name or `a-b`.
        link: String,
    },
    /// 1 − (the mean of what a pattern matches) / (the same in the point's
    /// baseline run, the sweep file's `[baseline]`): how much less those
    /// flows got (issue 11's harm).
    Harm(String),
}

/// A parsed sweep file.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The base scenario's path (resolved against the sweep file).
    pub(crate) scenario: PathBuf,
    /// Its text.
    pub(crate) base: Value,
    /// The parameters, in the order of their keys (TOML tables are read
    /// sorted), with their values; with `[cases]`, [`CASE_KEY`] first, its
    /// values the cases' names.
    pub(crate) vary: Vec<(String, Vec<Value>)>,
    /// Each case's changes (key paths and values), by name.
    pub(crate) cases: Vec<(String, Vec<(String, Value)>)>,
    pub(crate) seeds: Vec<u64>,
    /// What the sweep file's `[baseline]` changes in each point to make its
    /// baseline run (for `harm`), in the order of the keys.
    pub(crate) baseline: Vec<(String, Value)>,
    /// The metrics, in the order of their names.
    pub(crate) metrics: Vec<(String, Metric)>,
}

/// One point: a value for each parameter, in `Plan::vary`'s order.
pub(crate) type Point = Vec<Value>;

impl Plan {
    /// Reads `path`.
    pub(crate) fn read(path: &Path) -> Result<Plan> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the sweep file {}", path.display()))?;
        let file: Value = toml::from_str(&text)
            .with_context(|| format!("the sweep file {} is not TOML", path.display()))?;
        let table = file.as_table().context("a sweep file is a table")?;
        for key in table.keys() {
            if !matches!(
                key.as_str(),
                "scenario" | "seeds" | "vary" | "cases" | "metrics" | "baseline"
            ) {
                bail!(
                    "unknown key `{key}` in the sweep file (known: scenario, seeds, vary, cases, metrics, baseline)"
                );
            }
        }
        let scenario = table
            .get("scenario")
            .and_then(Value::as_str)
            .context("the sweep file names no `scenario = \"FILE\"`")?;
        let scenario = path.parent().unwrap_or(Path::new(".")).join(scenario);
        let base_text = std::fs::read_to_string(&scenario)
            .with_context(|| format!("cannot read the scenario {}", scenario.display()))?;
        let base: Value = toml::from_str(&base_text)
            .with_context(|| format!("the scenario {} is not TOML", scenario.display()))?;
        let seeds = seeds(table.get("seeds"))?;
        let mut vary = Vec::new();
        let mut cases = Vec::new();
        if let Some(c) = table.get("cases") {
            let c = c
                .as_table()
                .context("`cases` is a table of named cases, each a table of key paths")?;
            for (name, changes) in c {
                let changes = changes.as_table().with_context(|| {
                    format!("case `{name}` is a table of key paths and their values")
                })?;
                let mut probe = base.clone();
                let mut list = Vec::new();
                for (key, value) in changes {
                    set(&mut probe, key, value.clone())
                        .with_context(|| format!("case `{name}`: `{key}`"))?;
                    list.push((key.clone(), value.clone()));
                }
                cases.push((name.clone(), list));
            }
            if cases.is_empty() {
                bail!("`cases` names no case");
            }
            vary.push((
                CASE_KEY.to_owned(),
                cases
                    .iter()
                    .map(|(name, _)| Value::String(name.clone()))
                    .collect(),
            ));
        }
        if let Some(v) = table.get("vary") {
            let v = v.as_table().context("`vary` is a table of key paths")?;
            for (key, values) in v {
                if key == CASE_KEY && !cases.is_empty() {
                    bail!("vary `{CASE_KEY}` and [cases] both name the case: keep one");
                }
                let values = values_of(key, values)?;
                // The path must name a key of the base scenario.
                let mut probe = base.clone();
                set(&mut probe, key, values[0].clone()).with_context(|| format!("vary `{key}`"))?;
                vary.push((key.clone(), values));
            }
        }
        let mut baseline = Vec::new();
        if let Some(b) = table.get("baseline") {
            let b = b
                .as_table()
                .context("`baseline` is a table of key paths and their values")?;
            for (key, value) in b {
                let mut probe = base.clone();
                set(&mut probe, key, value.clone()).with_context(|| format!("baseline `{key}`"))?;
                baseline.push((key.clone(), value.clone()));
            }
        }
        let mut metrics = Vec::new();
        match table.get("metrics") {
            Some(m) => {
                for (name, spec) in m.as_table().context("`metrics` is a table")? {
                    metrics.push((name.clone(), metric(name, spec)?));
                }
            }
            None => bail!("the sweep file asks for no metrics (add a [metrics] table)"),
        }
        if metrics.is_empty() {
            bail!("the sweep file's [metrics] table is empty");
        }
        let harm = metrics.iter().find(|(_, m)| m.needs_baseline());
        match (harm, baseline.is_empty()) {
            (Some((name, _)), true) => bail!(
                "metric `{name}` is a harm, which compares each run with a baseline run: add a [baseline] table (the keys to change, e.g. \"flow.stream.transport\" = {{ cc = \"tcp-newreno\" }})"
            ),
            (None, false) => bail!(
                "the sweep file has a [baseline] but no metric uses it (a `harm`)"
            ),
            _ => {}
        }
        let plan = Plan {
            scenario,
            base,
            vary,
            cases,
            seeds,
            baseline,
            metrics,
        };
        let runs = plan.points().len().saturating_mul(plan.seeds.len());
        if runs > MAX_RUNS {
            bail!("the sweep asks for {runs} runs; at most {MAX_RUNS}");
        }
        Ok(plan)
    }

    /// Every combination of the parameters' values (the last parameter
    /// varies fastest); one empty point when nothing varies.
    pub(crate) fn points(&self) -> Vec<Point> {
        let mut points: Vec<Point> = vec![Vec::new()];
        for (_, values) in &self.vary {
            let mut next = Vec::with_capacity(points.len().saturating_mul(values.len()));
            for point in &points {
                for value in values {
                    let mut p = point.clone();
                    p.push(value.clone());
                    next.push(p);
                }
                if next.len() > MAX_RUNS {
                    break;
                }
            }
            points = next;
        }
        points
    }

    /// The scenario of `point` with `seed`.
    pub(crate) fn scenario(&self, point: &Point, seed: u64) -> Result<Value> {
        let mut scenario = self.base.clone();
        for ((key, _), value) in self.vary.iter().zip(point) {
            let case = value
                .as_str()
                .and_then(|name| self.cases.iter().find(|(n, _)| n == name))
                .filter(|_| key == CASE_KEY);
            match case {
                Some((_, changes)) => {
                    for (path, change) in changes {
                        set(&mut scenario, path, change.clone())?;
                    }
                }
                None => set(&mut scenario, key, value.clone())?,
            }
        }
        set_seed(&mut scenario, seed)?;
        Ok(scenario)
    }

    /// The scenario text of `point` with `seed`.
    pub(crate) fn scenario_text(&self, point: &Point, seed: u64) -> Result<String> {
        Ok(toml::to_string(&self.scenario(point, seed)?)?)
    }

    /// The text of the baseline run of `point` with `seed` (the point with
    /// the `[baseline]` changes); `None` without a `[baseline]`.
    pub(crate) fn baseline_text(&self, point: &Point, seed: u64) -> Result<Option<String>> {
        if self.baseline.is_empty() {
            return Ok(None);
        }
        let mut scenario = self.scenario(point, seed)?;
        for (key, value) in &self.baseline {
            set(&mut scenario, key, value.clone())?;
        }
        Ok(Some(toml::to_string(&scenario)?))
    }
}

fn seeds(value: Option<&Value>) -> Result<Vec<u64>> {
    let expected = "`seeds` is a list of numbers, or { from = N, count = M }";
    let seeds: Vec<u64> = match value {
        None => vec![1],
        Some(Value::Array(list)) => list
            .iter()
            .map(|v| v.as_integer().and_then(|n| u64::try_from(n).ok()))
            .collect::<Option<_>>()
            .context(expected)?,
        Some(Value::Table(t)) => {
            let from = t
                .get("from")
                .and_then(Value::as_integer)
                .and_then(|n| u64::try_from(n).ok())
                .context(expected)?;
            let count = t
                .get("count")
                .and_then(Value::as_integer)
                .and_then(|n| u64::try_from(n).ok())
                .filter(|&n| n >= 1 && n <= MAX_RUNS as u64)
                .context(expected)?;
            (from..from.saturating_add(count)).collect()
        }
        Some(_) => bail!(expected),
    };
    if seeds.is_empty() {
        bail!("`seeds` is empty");
    }
    Ok(seeds)
}

/// A parameter's values: a list, or a range { from, to, step [, unit] }.
fn values_of(key: &str, value: &Value) -> Result<Vec<Value>> {
    let values = match value {
        Value::Array(list) => list.clone(),
        Value::Table(t) => {
            let number = |k: &str| -> Result<f64> {
                let v = t
                    .get(k)
                    .with_context(|| format!("vary `{key}`: a range needs `{k}`"))?;
                v.as_float()
                    .or_else(|| v.as_integer().map(|n| n as f64))
                    .with_context(|| format!("vary `{key}`: `{k}` must be a number"))
            };
            let (from, to, step) = (number("from")?, number("to")?, number("step")?);
            if step.is_nan() || step <= 0.0 || !from.is_finite() || !to.is_finite() || to < from {
                bail!("vary `{key}`: a range goes from `from` up to `to` by a positive `step`");
            }
            let count = ((to - from) / step + 1e-9).floor() as usize + 1;
            if count > MAX_RUNS {
                bail!("vary `{key}`: the range has {count} values; at most {MAX_RUNS}");
            }
            let unit = t.get("unit").and_then(Value::as_str);
            let integers = [t.get("from"), t.get("to"), t.get("step")]
                .iter()
                .all(|v| v.is_some_and(Value::is_integer));
            (0..count)
                .map(|i| {
                    let x = from + step * i as f64;
                    match unit {
                        Some(unit) => Value::String(format!("{}{unit}", trim(x))),
                        None if integers => Value::Integer(x.round() as i64),
                        None => Value::Float(x),
                    }
                })
                .collect()
        }
        _ => bail!("vary `{key}`: give a list of values or a range {{ from, to, step }}"),
    };
    if values.is_empty() {
        bail!("vary `{key}` has no values");
    }
    Ok(values)
}

/// A number without trailing zeros (`5`, `2.5`).
fn trim(x: f64) -> String {
    let text = format!("{x:.9}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

impl Metric {
    /// Whether it compares with a baseline run.
    pub(crate) fn needs_baseline(&self) -> bool {
        match self {
            Metric::Harm(_) => true,
            Metric::Ratio(a, b) => a.needs_baseline() || b.needs_baseline(),
            Metric::Share { of, .. } => of.needs_baseline(),
            _ => false,
        }
    }
}

/// The metric kinds a sweep file may use, for error messages.
const METRIC_KINDS: &str = "ratio, sum, mean, jain, share, harm";

fn metric(name: &str, spec: &Value) -> Result<Metric> {
    let pointer = |v: &Value| -> Result<String> {
        let p = v
            .as_str()
            .with_context(|| format!("metric `{name}`: a JSON pointer is a string"))?;
        if !p.starts_with('/') {
            bail!("metric `{name}`: `{p}` is not a JSON pointer (it starts with /)");
        }
        Ok(p.to_owned())
    };
    match spec {
        Value::String(_) => Ok(Metric::Pointer(pointer(spec)?)),
        Value::Table(t) if t.len() == 1 => {
            let (kind, arg) = t.iter().next().context("one key")?;
            match kind.as_str() {
                "jain" => Ok(Metric::Jain(pointer(arg)?)),
                "sum" => Ok(Metric::Sum(pointer(arg)?)),
                "mean" => Ok(Metric::Mean(pointer(arg)?)),
                "harm" => Ok(Metric::Harm(pointer(arg)?)),
                "ratio" => {
                    let pair = arg.as_array().filter(|a| a.len() == 2).with_context(|| {
                        format!("metric `{name}`: ratio = [numerator, denominator], each a JSON pointer or a metric such as {{ mean = \"/flows/1/goodput_bps\" }}")
                    })?;
                    Ok(Metric::Ratio(
                        Box::new(metric(name, &pair[0])?),
                        Box::new(metric(name, &pair[1])?),
                    ))
                }
                "share" => {
                    let pair = arg
                        .as_array()
                        .filter(|a| a.len() == 2 && a[1].is_str())
                        .with_context(|| {
                            format!("metric `{name}`: share = [rate, \"LINK\"], the rate a JSON pointer or a metric, LINK a link of the scenario by name or a-b")
                        })?;
                    Ok(Metric::Share {
                        of: Box::new(metric(name, &pair[0])?),
                        link: pair[1].as_str().unwrap_or_default().to_owned(),
                    })
                }
                other => bail!("metric `{name}`: unknown kind `{other}` (known: {METRIC_KINDS})"),
            }
        }
        _ => bail!(
            "metric `{name}`: a JSON pointer (\"/flows/0/goodput_bps\"), or one of {{ ratio = [a, b] }}, {{ sum = … }}, {{ mean = … }}, {{ jain = \"/flows/*/goodput_bps\" }}, {{ share = [\"/flows/0/goodput_bps\", \"bs-client\"] }}, {{ harm = \"/flows/[cc=tcp-newreno]/goodput_bps\" }}"
        ),
    }
}

/// Sets the key at `path` (dots between segments) to `value`; the key must
/// exist (a typo is an error, not a new key the scenario parser ignores).
pub(crate) fn set(root: &mut Value, path: &str, value: Value) -> Result<()> {
    // Linked parameters: every path of a comma-separated key takes the
    // value.
    let mut paths = path.split(',').map(str::trim).peekable();
    while let Some(one) = paths.next() {
        if paths.peek().is_none() {
            return set_one(root, one, value);
        }
        set_one(root, one, value.clone())?;
    }
    bail!("an empty key path")
}

/// [`set`] for one path.
fn set_one(root: &mut Value, path: &str, value: Value) -> Result<()> {
    let segments: Vec<&str> = path.split('.').collect();
    let mut here = root;
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        here = match here {
            Value::Table(table) => {
                if last {
                    if !table.contains_key(*segment) {
                        bail!("the scenario has no key `{path}` (no `{segment}` there)");
                    }
                    table.insert((*segment).to_owned(), value);
                    return Ok(());
                }
                table
                    .get_mut(*segment)
                    .with_context(|| format!("the scenario has no `{segment}` in `{path}`"))?
            }
            Value::Array(items) => {
                let index = segment
                    .parse::<usize>()
                    .ok()
                    .or_else(|| items.iter().position(|item| names(item, segment)));
                let index = index.filter(|&i| i < items.len()).with_context(|| {
                    format!("`{segment}` in `{path}` names no element (a name, `a-b` for a link between a and b, or an index)")
                })?;
                if last {
                    items[index] = value;
                    return Ok(());
                }
                &mut items[index]
            }
            _ => bail!("`{path}`: `{segment}` is inside a value, not a table"),
        };
    }
    bail!("an empty key path")
}

/// Whether an element of an array of tables (`[[link]]`, `[[flow]]`) is the
/// one `name` names: by its `name`, or by its `between` nodes joined with
/// `-` (`bs-client`).
pub(crate) fn names(item: &Value, name: &str) -> bool {
    item.get("name").and_then(Value::as_str) == Some(name)
        || item
            .get("between")
            .and_then(Value::as_array)
            .map(|b| {
                b.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("-")
            })
            .as_deref()
            == Some(name)
}

/// The scenario's `[run] seed`.
fn set_seed(root: &mut Value, seed: u64) -> Result<()> {
    let run = root
        .as_table_mut()
        .context("a scenario is a table")?
        .entry("run")
        .or_insert_with(|| Value::Table(toml::map::Map::new()));
    let run = run.as_table_mut().context("`run` is a table")?;
    run.insert(
        "seed".to_owned(),
        Value::Integer(i64::try_from(seed).context("a seed above 2^63")?),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comma_separated_key_sets_every_path_it_names() {
        let mut scenario: Value = toml::from_str(
            r#"
[[flow]]
name = "a"
transport = { cc = "tfrc" }
[[flow]]
name = "b"
transport = { cc = "tfrc" }
"#,
        )
        .unwrap();
        let buffer: Value = toml::from_str("cc = \"buffer\"").unwrap();
        set(
            &mut scenario,
            "flow.a.transport, flow.b.transport",
            buffer.clone(),
        )
        .unwrap();
        for name in ["a", "b"] {
            let flow = scenario["flow"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| names(f, name))
                .unwrap();
            assert_eq!(flow["transport"], buffer);
        }
        // A misspelt path among them is named.
        let error = set(&mut scenario, "flow.a.transport,flow.c.transport", buffer)
            .unwrap_err()
            .to_string();
        assert!(error.contains("`c`"), "{error}");
    }

    #[test]
    fn cases_are_one_more_parameter_whose_values_apply_their_changes() {
        let dir = std::env::temp_dir().join(format!("fairstream-cases-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("s.toml"),
            "[run]\nduration = \"10s\"\nseed = 1\n[[flow]]\nname = \"a\"\ntransport = { cc = \"tfrc\" }\n",
        )
        .unwrap();
        let sweep = dir.join("sweep.toml");
        std::fs::write(
            &sweep,
            r#"
scenario = "s.toml"
[cases]
slow = { "flow.a.transport" = { cc = "ccid2" }, "run.duration" = "20s" }
fast = { "flow.a.transport" = { cc = "tcp-newreno" } }
[vary]
"run.seed" = [1, 2]
[metrics]
x = "/flows/0/goodput_bps"
"#,
        )
        .unwrap();
        let plan = Plan::read(&sweep).unwrap();
        assert_eq!(plan.vary[0].0, CASE_KEY);
        // Two cases (sorted by name) × two values.
        let points = plan.points();
        assert_eq!(points.len(), 4);
        let slow = points
            .iter()
            .find(|p| p[0].as_str() == Some("slow"))
            .unwrap();
        let scenario = plan.scenario(slow, 7).unwrap();
        assert_eq!(scenario["run"]["duration"].as_str(), Some("20s"));
        assert_eq!(
            scenario["flow"][0]["transport"]["cc"].as_str(),
            Some("ccid2")
        );
        // A case's misspelt path is named with the case.
        std::fs::write(
            &sweep,
            "scenario = \"s.toml\"\n[cases]\nbad = { \"flow.b.transport\" = 1 }\n[metrics]\nx = \"/x\"\n",
        )
        .unwrap();
        let error = format!("{:#}", Plan::read(&sweep).unwrap_err());
        assert!(
            error.contains("case `bad`") && error.contains("`b`"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
