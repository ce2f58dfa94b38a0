//! Property tests for scalable video (`fairstream_media::layered`): traces
//! write and parse back to the same frames, a share keeps more the larger it
//! is and always between the base and the whole frame, the FGS generator
//! keeps its rates over every whole GOP, and no text panics the parser.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use std::time::Duration;

use fairstream_media::h264::FrameType;
use fairstream_media::layered::{
    fgs_trace, format_layered_trace, parse_layered_trace, Enhancement, FgsTraceConfig,
    LayeredFrame, Share, MAX_ENHANCEMENT_LAYERS, MAX_FRAME_BYTES, MAX_FRAME_TIME,
};
use fairstream_proto::units::Rate;
use proptest::prelude::*;

fn frame_type() -> impl Strategy<Value = FrameType> {
    prop_oneof![Just(FrameType::I), Just(FrameType::P), Just(FrameType::B)]
}

/// Layer sizes: mostly small, sometimes up to the frame bound.
fn size() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0u64..5000, 1 => 0..=MAX_FRAME_BYTES]
}

fn enhancement() -> impl Strategy<Value = Enhancement> {
    prop_oneof![
        size().prop_map(|bytes| Enhancement::Fgs { bytes }),
        prop::collection::vec(1u64..=MAX_FRAME_BYTES / 32, 0..=MAX_ENHANCEMENT_LAYERS)
            .prop_map(Enhancement::Layers),
    ]
}

/// One frame within the bounds: a base that fits beside the enhancement.
fn frame_parts() -> impl Strategy<Value = (FrameType, u64, Enhancement)> {
    (frame_type(), size(), enhancement()).prop_map(|(kind, base, enhancement)| {
        let base = base.min(MAX_FRAME_BYTES - enhancement.bytes());
        (kind, base, enhancement)
    })
}

fn one_frame() -> impl Strategy<Value = LayeredFrame> {
    frame_parts().prop_map(|(kind, base, enhancement)| {
        LayeredFrame::new(1, kind, Duration::ZERO, base, enhancement).unwrap()
    })
}

/// A trace: numbers increasing by 1 to 1000, times never going back (by
/// whole nanoseconds, sometimes by none).
fn trace() -> impl Strategy<Value = Vec<LayeredFrame>> {
    (
        0u64..1_000_000,
        prop::collection::vec((frame_parts(), 1u64..1000, 0u64..2_000_000_000), 1..40),
    )
        .prop_map(|(first, parts)| {
            let mut number = first;
            let mut time = Duration::ZERO;
            parts
                .into_iter()
                .map(|((kind, base, enhancement), step, gap)| {
                    number += step;
                    time = (time + Duration::from_nanos(gap)).min(MAX_FRAME_TIME);
                    LayeredFrame::new(number, kind, time, base, enhancement).unwrap()
                })
                .collect()
        })
}

fn share() -> impl Strategy<Value = Share> {
    prop_oneof![
        Just(Share::ZERO),
        Just(Share::ONE),
        (0.0..=1.0f64).prop_map(Share::new),
    ]
}

fn config() -> impl Strategy<Value = FgsTraceConfig> {
    (
        1.0..=240.0f64,
        1usize..2000,
        1usize..=60,
        1e3..1e6f64,
        1.0..10.0f64,
        1.0..20.0f64,
        0.0..0.99f64,
        any::<u64>(),
    )
        .prop_map(
            |(fps, frames, gop, base_bits, total_factor, i_frame_ratio, variation, seed)| {
                FgsTraceConfig {
                    fps,
                    frames,
                    base_rate: Rate::from_bits_per_sec(base_bits),
                    total_rate: Rate::from_bits_per_sec(base_bits * total_factor),
                    gop,
                    i_frame_ratio,
                    variation,
                    seed,
                }
            },
        )
}

proptest! {
    #[test]
    fn traces_write_and_parse_back_to_the_same_frames(frames in trace()) {
        let text = format_layered_trace(&frames);
        let parsed = parse_layered_trace(&text, "props.lt").unwrap();
        prop_assert_eq!(&parsed, &frames);
        // And the text it writes is a fixed point.
        prop_assert_eq!(format_layered_trace(&parsed), text);
    }

    #[test]
    fn kept_bytes_grow_with_the_share_between_base_and_total(
        frame in one_frame(),
        a in share(),
        b in share(),
    ) {
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        let (kept_low, kept_high) = (frame.kept_bytes(low), frame.kept_bytes(high));
        prop_assert!(frame.base_bytes() <= kept_low);
        prop_assert!(kept_low <= kept_high);
        prop_assert!(kept_high <= frame.total_bytes());
        prop_assert_eq!(frame.kept_bytes(Share::ZERO), frame.base_bytes());
        prop_assert_eq!(frame.kept_bytes(Share::ONE), frame.total_bytes());
        // What a truncation leaves is what it keeps, and within η of the
        // enhancement.
        let cut = frame.truncated(high);
        prop_assert_eq!(cut.total_bytes(), kept_high);
        let budget = high.get() * frame.enhancement_bytes() as f64;
        prop_assert!(cut.enhancement_bytes() as f64 <= budget);
        match (frame.enhancement(), cut.enhancement()) {
            (Enhancement::Fgs { bytes }, Enhancement::Fgs { bytes: kept }) => {
                // FGS: everything up to the budget, to the byte.
                prop_assert!(kept <= bytes);
                prop_assert!((*kept as f64) > budget - 1.0);
            }
            (Enhancement::Layers(all), Enhancement::Layers(kept)) => {
                // Discrete: a prefix of whole layers, the next one would
                // not fit.
                prop_assert!(all.starts_with(kept));
                if let Some(next) = all.get(kept.len()) {
                    prop_assert!((cut.enhancement_bytes() + next) as f64 > budget);
                }
            }
            (before, after) => prop_assert!(false, "{before:?} became {after:?}"),
        }
    }

    /// Every whole GOP carries the base rate within one byte and the total
    /// rate within two (one a layer); the same seed gives the same trace.
    #[test]
    fn generated_gops_keep_the_base_and_total_rates(config in config()) {
        let frames = fgs_trace(&config).unwrap();
        prop_assert_eq!(frames.len(), config.frames);
        let seconds = config.gop as f64 / config.fps;
        for gop in frames.chunks_exact(config.gop) {
            prop_assert_eq!(gop[0].frame_type(), FrameType::I);
            let base: u64 = gop.iter().map(LayeredFrame::base_bytes).sum();
            let total: u64 = gop.iter().map(LayeredFrame::total_bytes).sum();
            let base_target = config.base_rate.bytes_per_sec() * seconds;
            let total_target = config.total_rate.bytes_per_sec() * seconds;
            prop_assert!((base as f64 - base_target).abs() <= 1.0 + 1e-9 * base_target,
                "base {} for {}", base, base_target);
            prop_assert!((total as f64 - total_target).abs() <= 2.0 + 1e-9 * total_target,
                "total {} for {}", total, total_target);
        }
        prop_assert_eq!(fgs_trace(&config).unwrap(), frames);
    }

    #[test]
    fn any_text_parses_or_fails_without_panicking(text in any::<String>()) {
        let _ = parse_layered_trace(&text, "any.lt");
    }

    /// Text made of the format's own pieces reaches deeper than any string.
    #[test]
    fn near_miss_text_parses_or_fails_without_panicking(
        text in "([0-9]{0,21}|[IPBH#]|fgs:[0-9]{0,9}|layers:[0-9,]{0,40}|[0-9]{1,7}\\.[0-9]{0,11}|[ \t\n])*"
    ) {
        if let Ok(frames) = parse_layered_trace(&text, "near.lt") {
            let again = parse_layered_trace(&format_layered_trace(&frames), "again.lt").unwrap();
            prop_assert_eq!(again, frames);
        }
    }
}
