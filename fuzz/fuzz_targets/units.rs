//! Any UTF-8 text as a rate, a size and a duration (`fairstream_proto::units`,
//! behind every option and scenario key with a unit): the parsers must not
//! panic; an accepted rate is finite and not negative and its `Display`
//! (rounded to 3 digits) parses back to within that rounding; an accepted
//! size's `Display` parses back to the same size; an accepted duration
//! written in nanoseconds parses back to within float precision.
#![no_main]

use std::time::Duration;

use fairstream_proto::units::{parse_duration, Bytes, Rate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(rate) = text.parse::<Rate>() {
        let bits = rate.bits_per_sec();
        assert!(bits.is_finite() && bits >= 0.0, "{text:?} gave {bits}");
        let shown = rate.to_string();
        let back: Rate = shown
            .parse()
            .unwrap_or_else(|e| panic!("{shown:?} from {text:?}: {e}"));
        // `{:.3}` of a value scaled to [1, 1000) or `{:.1}` below 1 kbit/s.
        let error = (back.bits_per_sec() - bits).abs();
        assert!(
            error <= 0.051 + bits * 5.01e-4,
            "{text:?}: {bits} shown as {shown:?}"
        );
    }
    if let Ok(size) = text.parse::<Bytes>() {
        let shown = size.to_string();
        assert_eq!(
            shown.parse::<Bytes>(),
            Ok(size),
            "{text:?} shown as {shown:?}"
        );
    }
    if let Ok(duration) = parse_duration(text) {
        // Far from Duration::MAX, where the float's rounding can overflow.
        if duration < Duration::from_secs(1 << 60) {
            let nanos = duration.as_nanos();
            let back = parse_duration(&format!("{nanos}ns"))
                .unwrap_or_else(|e| panic!("{nanos}ns from {text:?}: {e}"));
            let error = back.as_nanos().abs_diff(nanos);
            assert!(
                error <= 1 + nanos / (1 << 50),
                "{text:?}: {duration:?} back as {back:?}"
            );
        }
    }
});
