//! Axis ranges worked out from the data, and tick labels.

/// The values an axis shows, `low < high`, both finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Range {
    /// The lowest value shown.
    pub(crate) low: f64,
    /// The highest value shown.
    pub(crate) high: f64,
}

impl Range {
    /// The distance from `low` to `high`.
    pub(crate) fn span(self) -> f64 {
        self.high - self.low
    }

    /// Whether `value` is shown.
    pub(crate) fn contains(self, value: f64) -> bool {
        (self.low..=self.high).contains(&value)
    }
}

/// Room added to each end of a y axis that is not pinned at zero, as a
/// fraction of the data's span, so that no line runs along the frame.
const Y_ROOM: f64 = 0.05;
/// Room added to each end of an x axis when symbols are drawn, so that a
/// symbol at the first or last x is not cut in half.
const X_ROOM: f64 = 0.02;

/// The smallest and largest of `values` (all finite; the caller checked),
/// or (0, 1) for none.
fn extent(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), v| {
        (low.min(v), high.max(v))
    });
    if low <= high {
        (low, high)
    } else {
        (0.0, 1.0)
    }
}

/// Widens a range that is a single value (or nearly: less than the
/// precision of the numbers) so that the value sits inside a visible axis.
fn widened(low: f64, high: f64) -> (f64, f64) {
    let magnitude = low.abs().max(high.abs());
    if high - low > magnitude * 1e-12 && high > low {
        return (low, high);
    }
    let pad = if magnitude > 0.0 {
        magnitude * 0.1
    } else {
        1.0
    };
    (low - pad, high + pad)
}

/// About this many intervals between ticks on the x and the y axis.
const X_TICKS: usize = 8;
const Y_TICKS: usize = 6;
/// How far an end of the x axis may move to reach a tick, as a share of the
/// span; the y axis always reaches the next tick.
const X_ROUNDING: f64 = 0.1;

/// The 1-2-5 step that gives about `target` intervals over `span`.
fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target as f64;
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

/// [`low`, `high`] widened to the nearest ticks outside it, so that both
/// ends of the axis are labelled (time from 0.1 s to 29.9 s shows 0 to 30).
/// An end that would move by more than `tolerance` of the span stays where
/// it is (a run to 20.3 s is not drawn to 25 s).
fn rounded_out(low: f64, high: f64, target: usize, tolerance: f64) -> Range {
    let span = high - low;
    let step = nice_step(span, target);
    let (rounded_low, rounded_high) = ((low / step).floor() * step, (high / step).ceil() * step);
    // A NaN from extreme magnitudes fails both tests and keeps the end.
    Range {
        low: if low - rounded_low <= tolerance * span {
            rounded_low
        } else {
            low
        },
        high: if rounded_high - high <= tolerance * span {
            rounded_high
        } else {
            high
        },
    }
}

/// The x axis for `values`: their extent out to the next ticks, and when
/// `symbols` are drawn a little room beyond an end that data sits on (room
/// that is not rounded out again, so GOPs 0 to 9 show 0 to 10, not -2).
pub(crate) fn x_range(values: impl Iterator<Item = f64>, symbols: bool) -> Range {
    let (low, high) = extent(values);
    let (low, high) = widened(low, high);
    let axis = rounded_out(low, high, X_TICKS, X_ROUNDING);
    if !symbols {
        return axis;
    }
    let room = axis.span() * X_ROOM;
    Range {
        low: if low <= axis.low {
            axis.low - room
        } else {
            axis.low
        },
        high: if high >= axis.high {
            axis.high + room
        } else {
            axis.high
        },
    }
}

/// The y axis for `values`: their extent with a little room, including zero
/// when `from_zero` (an end at zero gets no room).
pub(crate) fn y_range(values: impl Iterator<Item = f64>, from_zero: bool) -> Range {
    let (mut low, mut high) = extent(values);
    if from_zero {
        low = low.min(0.0);
        high = high.max(0.0);
    }
    let (low, high) = if from_zero && low == 0.0 && high == 0.0 {
        (0.0, 1.0)
    } else {
        widened(low, high)
    };
    let room = (high - low) * Y_ROOM;
    let pinned = |end: f64| from_zero && end == 0.0;
    rounded_out(
        if pinned(low) { low } else { low - room },
        if pinned(high) { high } else { high + room },
        Y_TICKS,
        f64::INFINITY,
    )
}

/// Tick labels for an axis showing `range`: values of 10 000 and more in
/// k, M or G, as many decimals as a thousandth of the span needs, trailing
/// zeros trimmed (0.30000000000000004 reads 0.3, 2.50 reads 2.5).
pub(crate) fn formatter(range: Range) -> impl Fn(&f64) -> String {
    let magnitude = range.low.abs().max(range.high.abs());
    let (divisor, suffix) = if magnitude >= 1e9 {
        (1e9, "G")
    } else if magnitude >= 1e6 {
        (1e6, "M")
    } else if magnitude >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let resolution = range.span() / divisor / 1000.0;
    let decimals = if resolution > 0.0 && resolution < 1.0 {
        (-resolution.log10()).ceil().clamp(0.0, 12.0) as usize
    } else {
        0
    };
    move |value: &f64| {
        let text = format!("{:.decimals$}", value / divisor);
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        // -0 reads 0, and zero needs no unit prefix.
        if text == "0" || text == "-0" {
            "0".to_owned()
        } else {
            format!("{text}{suffix}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(low: f64, high: f64) -> Range {
        Range { low, high }
    }

    #[test]
    fn a_single_value_gets_an_axis_around_it() {
        let y = y_range([5.0].into_iter(), false);
        assert!(y.low < 5.0 && y.high > 5.0, "{y:?}");
        let x = x_range([0.0].into_iter(), false);
        assert!(x.low < 0.0 && x.high > 0.0, "{x:?}");
        let y = y_range([7.0, 7.0, 7.0].into_iter(), true);
        assert_eq!(y.low, 0.0);
        assert!(y.high > 7.0, "{y:?}");
        let zeros = y_range([0.0, 0.0].into_iter(), true);
        assert_eq!(zeros.low, 0.0);
        assert!(zeros.high >= 1.0, "{zeros:?}");
    }

    #[test]
    fn from_zero_includes_zero_without_room_below_it() {
        // 4 plus room rounds out to the next tick, 5 (a step of 1).
        let y = y_range([2.0, 4.0].into_iter(), true);
        assert_eq!((y.low, y.high), (0.0, 5.0));
        // A value on a tick gets room up to the next one: no line on the frame.
        let exact = y_range([0.0, 2.0].into_iter(), true);
        assert!(exact.high > 2.0, "{exact:?}");
        let free = y_range([2.0, 4.0].into_iter(), false);
        assert!(free.low < 2.0 && free.low > 1.0 && free.high > 4.0 && free.high < 5.0);
        let negative = y_range([-4.0, -2.0].into_iter(), true);
        assert_eq!(negative.high, 0.0);
        assert!(negative.low < -4.0);
        let both = y_range([-1.0, 3.0].into_iter(), true);
        assert!(both.low < -1.0 && both.high > 3.0);
    }

    #[test]
    fn x_axes_end_on_ticks_and_symbols_get_room() {
        let lines = x_range([0.0, 10.0].into_iter(), false);
        assert_eq!((lines.low, lines.high), (0.0, 10.0));
        let time = x_range([0.1, 29.9].into_iter(), false);
        assert_eq!((time.low, time.high), (0.0, 30.0));
        let symbols = x_range([0.0, 10.0].into_iter(), true);
        assert!(symbols.low < 0.0 && symbols.low > -1.0, "{symbols:?}");
        assert!(symbols.high > 10.0 && symbols.high < 11.0, "{symbols:?}");
        let gops = x_range([0.0, 9.0].into_iter(), true);
        assert!(gops.low < 0.0 && gops.low > -1.0, "{gops:?}");
        assert!(gops.high > 9.0 && gops.high < 10.0, "{gops:?}");
        // A run that ends just past a tick is not drawn to the next one.
        let run = x_range([1.0, 20.3].into_iter(), false);
        assert_eq!((run.low, run.high), (0.0, 20.3));
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(10.0, 5), 2.0);
        assert_eq!(nice_step(30.0, 8), 5.0);
        assert_eq!(nice_step(0.7, 6), 0.2);
        assert_eq!(nice_step(1000.0, 10), 100.0);
    }

    #[test]
    fn labels_have_the_decimals_the_span_needs() {
        let unit = formatter(range(0.0, 1.0));
        assert_eq!(unit(&0.30000000000000004), "0.3");
        assert_eq!(unit(&0.25), "0.25");
        assert_eq!(unit(&1.0), "1");
        let ten = formatter(range(0.0, 300.0));
        assert_eq!(ten(&150.0), "150");
        assert_eq!(ten(&-0.0), "0");
        let big = formatter(range(0.0, 2.5e6));
        assert_eq!(big(&1.5e6), "1.5M");
        assert_eq!(big(&0.0), "0");
        let thousands = formatter(range(0.0, 20_000.0));
        assert_eq!(thousands(&12_500.0), "12.5k");
        let tiny = formatter(range(0.001, 0.002));
        assert_eq!(tiny(&0.0015), "0.0015");
    }
}
