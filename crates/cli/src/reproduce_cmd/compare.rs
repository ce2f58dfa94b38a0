//! Setting ours beside the paper's: a sweep's values as "mean ± half-width",
//! points and metrics found by name, and whether a trend matches.

use anyhow::{Context, Result};
use fairstream_report::{Series, Style};

use crate::sweep_cmd::plan::Plan;
use crate::sweep_cmd::stats::mean_ci;
use crate::sweep_cmd::Outcome;

/// A metric over the seeds of one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Stat {
    pub(crate) mean: f64,
    /// The 95 % confidence interval's half-width (NaN with one seed).
    pub(crate) half: f64,
    /// The seeds that gave a value.
    pub(crate) n: usize,
}

impl Stat {
    /// Over `values`.
    pub(crate) fn of(values: &[f64]) -> Stat {
        let (mean, half) = mean_ci(values);
        Stat {
            mean,
            half,
            n: values.len(),
        }
    }

    /// "mean ± half" with the values multiplied by `scale`, to `decimals`;
    /// "–" without a value.
    pub(crate) fn show(&self, scale: f64, decimals: usize) -> String {
        if self.n == 0 || !self.mean.is_finite() {
            return "–".to_owned();
        }
        let mean = self.mean * scale;
        if self.half.is_finite() {
            format!("{mean:.decimals$} ± {:.decimals$}", self.half * scale)
        } else {
            format!("{mean:.decimals$}")
        }
    }

    /// Whether `value` lies in the confidence interval.
    pub(crate) fn contains(&self, value: f64) -> bool {
        self.half.is_finite() && (value - self.mean).abs() <= self.half
    }
}

/// A sweep's outcome with its plan, to look values up by name.
pub(crate) struct Results<'a> {
    pub(crate) plan: &'a Plan,
    pub(crate) outcome: &'a Outcome,
}

impl Results<'_> {
    /// The index of the point whose parameters have the values `wanted`
    /// (pairs of key path and value as written in the sweep file, e.g.
    /// `("flow.stream.transport.controller", "\"multfrc\"")`; a key not
    /// named may have any value).
    pub(crate) fn point(&self, wanted: &[(&str, &str)]) -> Result<usize> {
        let mut keys = Vec::new();
        for (key, value) in wanted {
            let index = self
                .plan
                .vary
                .iter()
                .position(|(k, _)| k == key)
                .with_context(|| format!("the sweep does not vary `{key}`"))?;
            let value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {value}"))
                .ok()
                .and_then(|mut t| t.remove("v"))
                .with_context(|| format!("`{value}` is not a TOML value"))?;
            keys.push((index, value));
        }
        self.outcome
            .points
            .iter()
            .position(|point| keys.iter().all(|(i, v)| point.get(*i) == Some(v)))
            .with_context(|| format!("the sweep has no point with {wanted:?}"))
    }

    /// The index of metric `name`.
    fn metric(&self, name: &str) -> Result<usize> {
        self.plan
            .metrics
            .iter()
            .position(|(n, _)| n == name)
            .with_context(|| format!("the sweep has no metric `{name}`"))
    }

    /// Metric `name` at `point` over the seeds.
    pub(crate) fn stat(&self, point: usize, name: &str) -> Result<Stat> {
        Ok(Stat::of(&self.outcome.values(point, self.metric(name)?)))
    }

    /// Metric `name` at `point` over the seeds whose runs also gave metric
    /// `given` a value (a call's loss only where the call started).
    pub(crate) fn stat_given(&self, point: usize, name: &str, given: &str) -> Result<Stat> {
        let values: Vec<f64> = self
            .outcome
            .by_seed(point, self.metric(name)?)
            .into_iter()
            .zip(self.outcome.by_seed(point, self.metric(given)?))
            .filter_map(|(value, given)| given.and(value))
            .collect();
        Ok(Stat::of(&values))
    }

    /// How many of the seeds at `point` gave metric `name` a value, and
    /// how many seeds there were (a call that never started has no R).
    pub(crate) fn present(&self, point: usize, name: &str) -> Result<(usize, usize)> {
        let values = self.outcome.by_seed(point, self.metric(name)?);
        Ok((values.iter().flatten().count(), values.len()))
    }

    /// Metric `name` along the sweep parameter `key`: a point (x, mean)
    /// with its 95 % error bar for each of `xs` (the x drawn, the value as
    /// the sweep file writes it), the other parameters as in `fixed`,
    /// values multiplied by `scale`; a point without a value is left out.
    /// The series is called `legend`.
    pub(crate) fn curve(
        &self,
        legend: &str,
        name: &str,
        (key, xs): (&str, &[(f64, &str)]),
        fixed: &[(&str, &str)],
        scale: f64,
    ) -> Result<Series> {
        let mut points = Vec::new();
        let mut bars = Vec::new();
        for (x, value) in xs {
            let mut wanted = fixed.to_vec();
            wanted.push((key, value));
            let stat = self.stat(self.point(&wanted)?, name)?;
            if stat.n == 0 || !stat.mean.is_finite() {
                continue;
            }
            let mean = stat.mean * scale;
            points.push((*x, mean));
            if stat.half.is_finite() {
                let half = stat.half * scale;
                bars.push((*x, mean - half, mean + half));
            }
        }
        Ok(Series::new(legend, points, Style::Line).error_bars(bars))
    }

    /// Metric `name` at point `over` divided by the same at `under`, seed
    /// by seed (the seeds pair up: the same seed draws the same losses).
    pub(crate) fn ratio(&self, over: usize, under: usize, name: &str) -> Result<Stat> {
        let m = self.metric(name)?;
        let ratios: Vec<f64> = self
            .outcome
            .by_seed(over, m)
            .into_iter()
            .zip(self.outcome.by_seed(under, m))
            .filter_map(|(a, b)| Some(a? / b?))
            .filter(|r| r.is_finite())
            .collect();
        Ok(Stat::of(&ratios))
    }
}

/// Which way a quantity goes from one case to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Up,
    Down,
    Flat,
}

impl Direction {
    /// From `from` to `to`, "flat" within `tolerance` (relative).
    pub(crate) fn of(from: f64, to: f64, tolerance: f64) -> Direction {
        if (to - from).abs() <= tolerance * from.abs().max(to.abs()) {
            Direction::Flat
        } else if to > from {
            Direction::Up
        } else {
            Direction::Down
        }
    }

    fn word(self) -> &'static str {
        match self {
            Direction::Up => "higher",
            Direction::Down => "lower",
            Direction::Flat => "about the same",
        }
    }
}

/// A claim's verdict as the reports write it.
pub(crate) fn verdict(holds: bool) -> &'static str {
    if holds {
        "holds"
    } else {
        "does not hold"
    }
}

/// A line saying whether our trend from case A to case B matches the
/// paper's, and why not when it does not.
pub(crate) fn trend_line(what: &str, paper: (f64, f64), ours: (f64, f64), why_not: &str) -> String {
    let p = Direction::of(paper.0, paper.1, 0.02);
    let o = Direction::of(ours.0, ours.1, 0.02);
    let ratio = |(a, b): (f64, f64)| if a != 0.0 { b / a } else { f64::NAN };
    let head = format!(
        "{what}: the paper's is {} (×{:.2}), ours {} (×{:.2})",
        p.word(),
        ratio(paper),
        o.word(),
        ratio(ours)
    );
    if p == o {
        format!("{head}: the trend matches.")
    } else {
        format!("{head}: the trend differs. {why_not}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_show_mean_and_half_width() {
        let s = Stat::of(&[1.0, 2.0, 3.0]);
        assert_eq!(s.show(1.0, 2), "2.00 ± 2.48");
        assert!(s.contains(4.0) && !s.contains(4.5));
        assert_eq!(Stat::of(&[5.0]).show(1e-3, 3), "0.005");
        assert_eq!(Stat::of(&[]).show(1.0, 1), "–");
    }

    #[test]
    fn trends_match_or_say_why_not() {
        let same = trend_line("throughput", (54.0, 86.0), (49.0, 70.0), "because");
        assert!(same.ends_with("the trend matches."), "{same}");
        assert!(same.contains("×1.59"), "{same}");
        let differs = trend_line("throughput", (54.0, 86.0), (74.0, 74.0), "Bursts.");
        assert!(
            differs.contains("ours about the same") && differs.ends_with("Bursts."),
            "{differs}"
        );
    }
}
