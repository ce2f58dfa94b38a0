//! Means and 95 % confidence intervals over seeds (Student's t), and the
//! metrics read from a simulation summary.

use serde_json::Value;

use super::plan::Metric;

/// t_{0.975, df} for df = 1..=30 (two-sided 95 %), from the standard
/// tables (e.g. NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.2).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// t_{0.975, df}; above 30 degrees of freedom the table's values at 40,
/// 60 and 120, each used up to the next (so the interval errs wide), then
/// the normal quantile 1.960.
pub(crate) fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T_975[df - 1],
        31..=40 => 2.042,
        41..=60 => 2.021,
        61..=120 => 2.000,
        _ => 1.980,
    }
}

/// Mean and half-width of the 95 % confidence interval of `values` (the
/// half-width is NaN for fewer than two values).
pub(crate) fn mean_ci(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN);
    }
    let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t_975(n - 1) * (variance / n as f64).sqrt())
}

/// The numbers a pattern matches: a JSON pointer whose `*` segments stand
/// for every element of an array (or every value of an object), and whose
/// `[key=value]` segments for the elements of an array whose `key` is
/// `value` (`/flows/[cc=tcp-newreno]/goodput_bps`), and `[key^=prefix]`
/// for those whose `key` is a string starting with `prefix`
/// (`/flows/[name^=tcp]/goodput_bps`).
fn matches(summary: &Value, pattern: &str) -> Vec<f64> {
    let mut here = vec![summary];
    for segment in pattern.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        let filter = segment
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .and_then(|s| s.split_once('='));
        let mut next = Vec::new();
        for value in here {
            match (segment.as_str(), value, filter) {
                (_, Value::Array(items), Some((key, prefix))) if key.ends_with('^') => {
                    let key = key.trim_end_matches('^');
                    next.extend(items.iter().filter(|item| {
                        item.get(key)
                            .and_then(Value::as_str)
                            .is_some_and(|s| s.starts_with(prefix))
                    }));
                }
                (_, Value::Array(items), Some((key, wanted))) => {
                    next.extend(items.iter().filter(|item| {
                        item.get(key).is_some_and(|v| match v {
                            Value::String(s) => s == wanted,
                            Value::Number(n) => wanted.parse::<f64>().ok() == n.as_f64(),
                            Value::Bool(b) => wanted.parse::<bool>().ok() == Some(*b),
                            _ => false,
                        })
                    }));
                }
                ("*", Value::Array(items), None) => next.extend(items.iter()),
                ("*", Value::Object(map), None) => next.extend(map.values()),
                (key, Value::Object(map), None) => next.extend(map.get(key)),
                (key, Value::Array(items), None) => {
                    next.extend(key.parse::<usize>().ok().and_then(|i| items.get(i)));
                }
                _ => {}
            }
        }
        here = next;
    }
    here.into_iter().filter_map(Value::as_f64).collect()
}

/// What a metric can be computed from: one run's summary, its scenario,
/// and the summary of its baseline run, if the sweep has one.
pub(crate) struct RunData<'a> {
    pub(crate) summary: &'a Value,
    pub(crate) scenario: &'a toml::Value,
    pub(crate) baseline: Option<&'a Value>,
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The value of `metric` for `run`, if it has one.
pub(crate) fn evaluate(metric: &Metric, run: &RunData<'_>) -> Option<f64> {
    let summary = run.summary;
    match metric {
        // A pattern names one number here: a filter such as
        // `/flows/[cc=tcp-newreno]/goodput_bps` that matches one flow.
        Metric::Pointer(p) if p.contains(['*', '[']) => match matches(summary, p)[..] {
            [one] => Some(one),
            _ => None,
        },
        Metric::Pointer(p) => summary.pointer(p).and_then(Value::as_f64),
        Metric::Ratio(a, b) => {
            let (a, b) = (evaluate(a, run)?, evaluate(b, run)?);
            (b != 0.0).then(|| a / b)
        }
        Metric::Jain(pattern) => {
            // R. Jain, D. Chiu, W. Hawe, DEC-TR-301 (1984): (Σx)² / (n Σx²).
            let xs = matches(summary, pattern);
            let sum: f64 = xs.iter().sum();
            let squares: f64 = xs.iter().map(|x| x * x).sum();
            (!xs.is_empty() && squares > 0.0).then(|| sum * sum / (xs.len() as f64 * squares))
        }
        Metric::Sum(pattern) => {
            let xs = matches(summary, pattern);
            (!xs.is_empty()).then(|| xs.iter().sum())
        }
        Metric::Mean(pattern) => mean(&matches(summary, pattern)),
        Metric::Share { of, link } => {
            let capacity = link_capacity_bps(run.scenario, link)?;
            let rate = evaluate(of, run)?;
            (capacity > 0.0).then(|| rate / capacity)
        }
        Metric::Harm(pattern) => {
            let with = mean(&matches(summary, pattern))?;
            let without = mean(&matches(run.baseline?, pattern))?;
            (without > 0.0).then(|| 1.0 - with / without)
        }
    }
}

/// B(1 − p) of link `name` (its `name`, or `a-b` for the nodes it joins):
/// its rate times one less its mean loss (Bernoulli p; Gilbert-Elliott's
/// stationary mean); `None` for a link without a rate (a trace).
pub(crate) fn link_capacity_bps(scenario: &toml::Value, name: &str) -> Option<f64> {
    let link = scenario
        .get("link")?
        .as_array()?
        .iter()
        .find(|l| super::plan::names(l, name))?;
    let rate: fairstream_proto::units::Rate = link.get("rate")?.as_str()?.parse().ok()?;
    let number = |v: &toml::Value, key: &str| {
        v.get(key)
            .and_then(|x| x.as_float().or_else(|| x.as_integer().map(|i| i as f64)))
    };
    let loss = match link.get("loss") {
        None => 0.0,
        Some(loss) => match loss.get("kind").and_then(toml::Value::as_str)? {
            "bernoulli" => number(loss, "p")?,
            "gilbert-elliott" => {
                // The chain's stationary share of the bad state:
                // (1 − p_gg) / ((1 − p_gg) + (1 − p_bb)).
                let to_bad = 1.0 - number(loss, "p_good_good")?;
                let to_good = 1.0 - number(loss, "p_bad_bad")?;
                let bad = if to_bad + to_good > 0.0 {
                    to_bad / (to_bad + to_good)
                } else {
                    0.0
                };
                (1.0 - bad) * number(loss, "loss_good")? + bad * number(loss, "loss_bad")?
            }
            _ => return None,
        },
    };
    Some(rate.bits_per_sec() * (1.0 - loss))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confidence_interval_by_hand() {
        // 2, 4, 6: mean 4, s = 2, t(2) = 4.303, half-width 4.303·2/√3.
        let (mean, half) = mean_ci(&[2.0, 4.0, 6.0]);
        assert_eq!(mean, 4.0);
        assert!((half - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-12);
        let (mean, half) = mean_ci(&[5.0]);
        assert_eq!(mean, 5.0);
        assert!(half.is_nan());
        assert_eq!(t_975(1), 12.706);
        assert_eq!(t_975(30), 2.042);
        assert!(t_975(1000) < t_975(100));
    }

    #[test]
    fn metrics_from_a_summary() {
        let summary: Value = serde_json::json!({
            "flows": [{"goodput_bps": 300.0}, {"goodput_bps": 100.0}, {"name": "x"}]
        });
        let scenario = toml::Value::Table(toml::Table::new());
        let run = RunData {
            summary: &summary,
            scenario: &scenario,
            baseline: None,
        };
        let evaluate = |metric: &Metric, _: &Value| evaluate(metric, &run);
        assert_eq!(
            evaluate(&Metric::Pointer("/flows/0/goodput_bps".into()), &summary),
            Some(300.0)
        );
        assert_eq!(
            evaluate(
                &Metric::Ratio(
                    Box::new(Metric::Pointer("/flows/0/goodput_bps".into())),
                    Box::new(Metric::Pointer("/flows/1/goodput_bps".into()))
                ),
                &summary
            ),
            Some(3.0)
        );
        assert_eq!(
            evaluate(&Metric::Sum("/flows/*/goodput_bps".into()), &summary),
            Some(400.0)
        );
        // (400)² / (2 · (300² + 100²)) = 0.8.
        let jain = evaluate(&Metric::Jain("/flows/*/goodput_bps".into()), &summary).unwrap();
        assert!((jain - 0.8).abs() < 1e-12);
        assert_eq!(
            evaluate(&Metric::Pointer("/nothing".into()), &summary),
            None
        );
    }

    #[test]
    fn derived_metrics_share_harm_mean_and_filters() {
        let summary: Value = serde_json::json!({"flows": [
            {"cc": "tfrc", "goodput_bps": 900_000.0},
            {"cc": "tcp-newreno", "goodput_bps": 2_000_000.0},
            {"cc": "tcp-newreno", "goodput_bps": 1_000_000.0},
        ]});
        let baseline: Value = serde_json::json!({"flows": [
            {"cc": "tcp-newreno", "goodput_bps": 500_000.0},
            {"cc": "tcp-newreno", "goodput_bps": 2_000_000.0},
            {"cc": "tcp-newreno", "goodput_bps": 2_000_000.0},
        ]});
        let scenario: toml::Value = toml::from_str(
            r#"
[[link]]
between = ["bs", "client"]
rate = "1mbit"
loss = { kind = "bernoulli", p = 0.1 }
[[link]]
name = "bursty"
between = ["a", "b"]
rate = "2mbit"
loss = { kind = "gilbert-elliott", p_good_good = 0.99, p_bad_bad = 0.9, loss_good = 0.0, loss_bad = 0.5 }
"#,
        )
        .unwrap();
        let run = RunData {
            summary: &summary,
            scenario: &scenario,
            baseline: Some(&baseline),
        };
        let tcp = "/flows/[cc=tcp-newreno]/goodput_bps";
        assert_eq!(evaluate(&Metric::Mean(tcp.into()), &run), Some(1_500_000.0));
        // As a plain metric a pattern must name one number.
        assert_eq!(evaluate(&Metric::Pointer(tcp.into()), &run), None);
        assert_eq!(
            evaluate(
                &Metric::Pointer("/flows/[cc=tfrc]/goodput_bps".into()),
                &run
            ),
            Some(900_000.0)
        );
        // The stream over the mean TCP flow: 0.9 / 1.5.
        let ratio = Metric::Ratio(
            Box::new(Metric::Pointer("/flows/0/goodput_bps".into())),
            Box::new(Metric::Mean(tcp.into())),
        );
        assert!((evaluate(&ratio, &run).unwrap() - 0.6).abs() < 1e-12);
        // B_w(1 − p_w) = 0.9 Mbit/s: the stream fills all of it.
        let share = |link: &str| Metric::Share {
            of: Box::new(Metric::Pointer("/flows/0/goodput_bps".into())),
            link: link.into(),
        };
        assert!((evaluate(&share("bs-client"), &run).unwrap() - 1.0).abs() < 1e-12);
        // Gilbert-Elliott: bad 0.01 / (0.01 + 0.1) of the time, losing half.
        let bursty = 2e6 * (1.0 - 0.5 * 0.01 / 0.11);
        assert!((evaluate(&share("bursty"), &run).unwrap() - 0.9e6 / bursty).abs() < 1e-12);
        assert_eq!(evaluate(&share("nowhere"), &run), None);
        // Harm: the TCP flows' mean, 1.5 against 1.5 (the baseline's
        // three TCP flows): none; only the two that are TCP in both runs
        // would need a narrower pattern.
        let harm = evaluate(&Metric::Harm(tcp.into()), &run).unwrap();
        assert!(harm.abs() < 1e-12, "{harm}");
        let harm = evaluate(&Metric::Harm("/flows/2/goodput_bps".into()), &run).unwrap();
        assert!((harm - 0.5).abs() < 1e-12, "{harm}");
        let no_baseline = RunData {
            baseline: None,
            ..run
        };
        assert_eq!(evaluate(&Metric::Harm(tcp.into()), &no_baseline), None);
    }

    #[test]
    fn a_prefix_filter_picks_the_names_that_start_with_it() {
        let summary: Value = serde_json::json!({"flows": [
            {"name": "video1", "goodput_bps": 1.0},
            {"name": "tcp1", "goodput_bps": 2.0},
            {"name": "tcp2", "goodput_bps": 4.0},
            {"name": "xtcp", "goodput_bps": 8.0},
            {"goodput_bps": 16.0},
        ]});
        assert_eq!(
            matches(&summary, "/flows/[name^=tcp]/goodput_bps"),
            [2.0, 4.0]
        );
        assert_eq!(matches(&summary, "/flows/[name^=]/goodput_bps").len(), 4);
        assert!(matches(&summary, "/flows/[name^=zz]/goodput_bps").is_empty());
    }
}
