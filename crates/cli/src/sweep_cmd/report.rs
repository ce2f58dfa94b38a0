//! A sweep's report: `index.html` (self-contained) and `index.md` with the
//! summary table and, per metric, a chart of its mean and 95 % confidence
//! interval against the last numeric parameter, one line per combination
//! of the others.

use std::path::Path;

use anyhow::{Context, Result};
use fairstream_report::{Chart, Page, Series, Style, Table};
use toml::Value;

use super::plan::{Plan, Point};
use super::stats::mean_ci;
use super::Outcome;

/// The most lines one chart draws (more would not be read).
const MAX_LINES: usize = 12;

/// A parameter value as a number and its unit: `5`, `0.2`, `"20ms"` →
/// (20, "ms"), `"1mbit"` → (1, "mbit"); `None` for other values.
fn numeric(value: &Value) -> Option<(f64, String)> {
    match value {
        Value::Integer(i) => Some((*i as f64, String::new())),
        Value::Float(f) => Some((*f, String::new())),
        Value::String(s) => {
            let split = s
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
                .unwrap_or(s.len());
            let number: f64 = s.get(..split)?.parse().ok()?;
            Some((number, s.get(split..)?.trim().to_owned()))
        }
        _ => None,
    }
}

/// The parameter to draw along x: the last whose values are all numbers
/// in one unit, with at least two distinct ones; its index and unit.
fn x_parameter(plan: &Plan) -> Option<(usize, String)> {
    plan.vary
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, (_, values))| {
            let parsed: Option<Vec<(f64, String)>> = values.iter().map(numeric).collect();
            let parsed = parsed?;
            let unit = parsed.first()?.1.clone();
            let distinct = parsed
                .iter()
                .any(|(x, _)| (x - parsed[0].0).abs() > f64::EPSILON);
            (distinct && parsed.iter().all(|(_, u)| *u == unit)).then_some((i, unit))
        })
}

/// A chart's file name for metric `name` (number `m`): its letters,
/// digits, `-` and `_`, the rest as `_`.
fn file_stem(name: &str, m: usize) -> String {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        format!("metric-{}", m + 1)
    } else {
        stem
    }
}

fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Writes `out/index.html` and `out/index.md` (charts as PNG files beside).
pub(crate) fn write(
    plan: &Plan,
    outcome: &Outcome,
    table: Table,
    out: &Path,
    name: &str,
) -> Result<()> {
    let mut page = Page::new(&format!("Sweep {name}"));
    page.paragraph(&format!(
        "Scenario `{}`, {} points × {} seeds ({}). Each value is the mean over the seeds ± the \
         half-width of its 95 % confidence interval (Student's t). `runs.csv` has every run.",
        plan.scenario.display(),
        outcome.points.len(),
        plan.seeds.len(),
        plan.seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    page.table(table);
    match x_parameter(plan) {
        Some((x, unit)) => {
            for (m, (metric, _)) in plan.metrics.iter().enumerate() {
                if let Some(chart) = metric_chart(plan, outcome, x, &unit, m, metric) {
                    page.chart(&file_stem(metric, m), chart);
                }
            }
        }
        None => {
            page.paragraph(
                "No chart: no varied parameter has numeric values (with one unit) to draw \
                 the metrics against.",
            );
        }
    }
    page.write(out, "index")
        .with_context(|| format!("cannot write the sweep's report into {}", out.display()))
}

/// One line of a chart: the other parameters' values, the means and the
/// confidence intervals.
type Line = (Point, Vec<(f64, f64)>, Vec<(f64, f64, f64)>);

/// Metric `m` against parameter `x`, one line per combination of the other
/// parameters; `None` when no point has a value.
fn metric_chart(
    plan: &Plan,
    outcome: &Outcome,
    x: usize,
    unit: &str,
    m: usize,
    metric: &str,
) -> Option<Chart> {
    let key = &plan.vary[x].0;
    let x_label = if unit.is_empty() {
        key.clone()
    } else {
        format!("{key} ({unit})")
    };
    let mut chart = Chart::new(metric, &x_label, metric);
    // The parameters that tell the lines apart: not x, not a constant.
    let shown = |i: usize| i != x && plan.vary.get(i).is_some_and(|(_, v)| v.len() > 1);
    // Lines keyed by the other parameters' values, in the points' order.
    let mut lines: Vec<Line> = Vec::new();
    for (p, point) in outcome.points.iter().enumerate() {
        let (xv, _) = numeric(point.get(x)?)?;
        let others: Point = point
            .iter()
            .enumerate()
            .filter(|(i, _)| shown(*i))
            .map(|(_, v)| v.clone())
            .collect();
        let values = outcome.values(p, m);
        if values.is_empty() {
            continue;
        }
        let (mean, half) = mean_ci(&values);
        let index = match lines.iter().position(|(o, ..)| *o == others) {
            Some(i) => i,
            None => {
                lines.push((others, Vec::new(), Vec::new()));
                lines.len() - 1
            }
        };
        let (_, points, bars) = &mut lines[index];
        points.push((xv, mean));
        if half.is_finite() {
            bars.push((xv, mean - half, mean + half));
        }
    }
    if lines.is_empty() {
        return None;
    }
    let other_keys: Vec<&str> = plan
        .vary
        .iter()
        .enumerate()
        .filter(|(i, _)| shown(*i))
        .map(|(_, (k, _))| k.as_str())
        .collect();
    for (others, mut points, mut bars) in lines.into_iter().take(MAX_LINES) {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        bars.sort_by(|a, b| a.0.total_cmp(&b.0));
        let name = if others.is_empty() {
            metric.to_owned()
        } else {
            other_keys
                .iter()
                .zip(&others)
                .map(|(k, v)| format!("{} = {}", k.rsplit('.').next().unwrap_or(k), cell(v)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut series = Series::new(&name, points, Style::Line);
        if !bars.is_empty() {
            series = series.error_bars(bars);
        }
        chart = chart.series(series);
    }
    Some(chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_with_units_are_numbers() {
        assert_eq!(numeric(&Value::Integer(5)), Some((5.0, String::new())));
        assert_eq!(
            numeric(&Value::String("20ms".into())),
            Some((20.0, "ms".into()))
        );
        assert_eq!(
            numeric(&Value::String("1.5mbit".into())),
            Some((1.5, "mbit".into()))
        );
        assert_eq!(numeric(&Value::String("fixed".into())), None);
        assert_eq!(numeric(&Value::Boolean(true)), None);
    }
}
