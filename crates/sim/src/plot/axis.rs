//! Axis ranges and "nice" tick positions (steps of 1, 2 or 5 times a power
//! of ten), and compact tick labels.

/// The range an axis shows and its ticks.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Axis {
    /// The lowest value shown.
    pub(crate) min: f64,
    /// The highest value shown.
    pub(crate) max: f64,
    /// The distance between ticks.
    pub(crate) step: f64,
    /// Tick values from `min` to `max`.
    pub(crate) ticks: Vec<f64>,
}

/// The 1-2-5 step that gives about `target` intervals over `span`.
pub(crate) fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target.max(1) as f64;
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let fraction = raw / magnitude;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

impl Axis {
    /// An axis covering [`low`, `high`] with about `target` intervals, its
    /// ends on ticks. A degenerate or non-finite range is widened so that
    /// something sensible is drawn.
    pub(crate) fn covering(low: f64, high: f64, target: usize) -> Axis {
        let (mut low, mut high) = if low.is_finite() && high.is_finite() && low <= high {
            (low, high)
        } else {
            (0.0, 1.0)
        };
        if high - low <= f64::EPSILON * low.abs().max(high.abs()).max(1e-300) {
            let pad = if low == 0.0 { 1.0 } else { low.abs() * 0.1 };
            low -= pad;
            high += pad;
        }
        let step = nice_step(high - low, target);
        let min = (low / step).floor() * step;
        let max = (high / step).ceil() * step;
        let count = ((max - min) / step).round() as usize;
        let ticks = (0..=count.min(100))
            .map(|i| {
                let value = min + i as f64 * step;
                // Snap values that should be zero but are not by rounding.
                if value.abs() < step * 1e-9 {
                    0.0
                } else {
                    value
                }
            })
            .collect();
        Axis {
            min,
            max,
            step,
            ticks,
        }
    }

    /// Where `value` lies between `min` (0) and `max` (1).
    pub(crate) fn fraction(&self, value: f64) -> f64 {
        let span = self.max - self.min;
        if span > 0.0 {
            (value - self.min) / span
        } else {
            0.5
        }
    }
}

/// A tick label: SI suffixes for large values (`1.5M`), as few decimals as
/// the step needs.
pub(crate) fn label(value: f64, step: f64) -> String {
    let magnitude = value.abs().max(step.abs());
    let (scaled, scaled_step, suffix) = if magnitude >= 1e9 {
        (value / 1e9, step / 1e9, "G")
    } else if magnitude >= 1e6 {
        (value / 1e6, step / 1e6, "M")
    } else if magnitude >= 1e4 {
        (value / 1e3, step / 1e3, "k")
    } else {
        (value, step, "")
    };
    let decimals = if scaled_step >= 1.0 || scaled_step <= 0.0 {
        0
    } else {
        (-scaled_step.log10().floor()).clamp(0.0, 9.0) as usize
    };
    let text = format!("{scaled:.decimals$}");
    // 0.0, 0.5, 1.0 read better as 0, 0.5, 1.
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    };
    let text = if text.starts_with('-') && text.trim_start_matches(['-', '0', '.']).is_empty() {
        text.trim_start_matches('-').to_owned()
    } else {
        text
    };
    format!("{text}{suffix}")
}
