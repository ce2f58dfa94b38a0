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
/// for every element of an array (or every value of an object).
fn matches(summary: &Value, pattern: &str) -> Vec<f64> {
    let mut here = vec![summary];
    for segment in pattern.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        let mut next = Vec::new();
        for value in here {
            match (segment.as_str(), value) {
                ("*", Value::Array(items)) => next.extend(items.iter()),
                ("*", Value::Object(map)) => next.extend(map.values()),
                (key, Value::Object(map)) => next.extend(map.get(key)),
                (key, Value::Array(items)) => {
                    next.extend(key.parse::<usize>().ok().and_then(|i| items.get(i)));
                }
                _ => {}
            }
        }
        here = next;
    }
    here.into_iter().filter_map(Value::as_f64).collect()
}

/// The value of `metric` in `summary`, if the summary has it.
pub(crate) fn evaluate(metric: &Metric, summary: &Value) -> Option<f64> {
    match metric {
        Metric::Pointer(p) => summary.pointer(p).and_then(Value::as_f64),
        Metric::Ratio(a, b) => {
            let (a, b) = (
                summary.pointer(a).and_then(Value::as_f64)?,
                summary.pointer(b).and_then(Value::as_f64)?,
            );
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
    }
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
        assert_eq!(
            evaluate(&Metric::Pointer("/flows/0/goodput_bps".into()), &summary),
            Some(300.0)
        );
        assert_eq!(
            evaluate(
                &Metric::Ratio("/flows/0/goodput_bps".into(), "/flows/1/goodput_bps".into()),
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
}
