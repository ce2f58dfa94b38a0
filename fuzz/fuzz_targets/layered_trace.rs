//! Any UTF-8 text as a layered trace (`fairstream_media::layered`, paper
//! 004's scalable video): the parser must not panic; an accepted trace is
//! within its bounds (frames, bytes a frame, layers, times), numbered in
//! increasing order with times never going back, and writes back to text
//! that parses to the same frames; for every frame, shares taken from the
//! text's length keep at least the base, at most the whole frame, more for a
//! larger share, and discrete layers only whole.
#![no_main]

use fairstream_media::layered::{
    format_layered_trace, parse_layered_trace, Enhancement, Share, MAX_ENHANCEMENT_LAYERS,
    MAX_FRAME_BYTES, MAX_FRAME_TIME, MAX_TRACE_FRAMES,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(frames) = parse_layered_trace(text, "fuzz.lt") else {
        return;
    };
    assert!(!frames.is_empty() && frames.len() <= MAX_TRACE_FRAMES);
    for pair in frames.windows(2) {
        assert!(pair[1].number() > pair[0].number());
        assert!(pair[1].time() >= pair[0].time());
    }
    let again = parse_layered_trace(&format_layered_trace(&frames), "again.lt")
        .expect("a written trace parses");
    assert_eq!(again, frames);
    // Two shares from the input, so that runs vary them.
    let low = Share::new((data.len() % 101) as f64 / 100.0);
    let high = Share::new(1.0 - (data.len() % 7) as f64 / 13.0);
    let (low, high) = if low <= high {
        (low, high)
    } else {
        (high, low)
    };
    for frame in &frames {
        assert!(frame.total_bytes() <= MAX_FRAME_BYTES);
        assert!(frame.time() <= MAX_FRAME_TIME);
        let (kept_low, kept_high) = (frame.kept_bytes(low), frame.kept_bytes(high));
        assert!(frame.base_bytes() <= kept_low && kept_low <= kept_high);
        assert!(kept_high <= frame.total_bytes());
        assert_eq!(frame.kept_bytes(Share::ZERO), frame.base_bytes());
        assert_eq!(frame.kept_bytes(Share::ONE), frame.total_bytes());
        if let (Enhancement::Layers(all), Enhancement::Layers(kept)) =
            (frame.enhancement(), frame.truncated(low).enhancement())
        {
            assert!(all.len() <= MAX_ENHANCEMENT_LAYERS && all.iter().all(|&l| l > 0));
            assert!(all.starts_with(kept), "{all:?} cut to {kept:?}");
        }
    }
});
