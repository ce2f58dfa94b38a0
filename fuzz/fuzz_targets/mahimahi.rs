//! Any UTF-8 text as a mahimahi capacity trace (`loss = { kind = "trace" }`
//! in a scenario, and the emulator's traces): the parser must not panic; an
//! accepted trace has one offset a line, never decreasing, and a positive
//! period; its schedule's two views agree: opportunity i falls at an offset
//! through which more than i opportunities have occurred, and at which
//! the count through a nanosecond earlier is at most i.
#![no_main]

use std::time::Duration;

use fairstream_sim::trace::Trace;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(trace) = Trace::parse(text) else {
        return;
    };
    let offsets = trace.offsets_ms();
    assert_eq!(offsets.len(), text.lines().count());
    assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
    assert!(trace.period() > Duration::ZERO);
    assert_eq!(trace.opportunities_per_pass(), offsets.len() as u64);
    let rate = trace.mean_rate().bytes_per_sec();
    assert!(rate.is_finite() && rate > 0.0, "mean rate {rate}");
    let period_ms = u128::from(*offsets.last().expect("a trace has an offset"));
    let per_pass = trace.opportunities_per_pass();
    for index in 0..3 * per_pass {
        // Only where the offset does not saturate (beyond any run's length).
        let exact = u128::from(index / per_pass) * period_ms
            + u128::from(offsets[(index % per_pass) as usize]);
        if exact >= u128::from(u64::MAX) {
            break;
        }
        let at = trace.opportunity_offset(index);
        assert_eq!(at.as_millis(), exact);
        assert!(
            trace.opportunities_through(at) > index,
            "opportunity {index} at {at:?}"
        );
        if let Some(before) = at.checked_sub(Duration::from_nanos(1)) {
            assert!(
                trace.opportunities_through(before) <= index,
                "opportunity {index} at {at:?}"
            );
        }
    }
});
