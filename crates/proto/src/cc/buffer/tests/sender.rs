//! The sender beyond the equations: the deficit's make-up, the base layer
//! under a cap and on a dry buffer (the cut-off), and refused windows.

use super::*;

#[test]
fn the_deficit_is_made_up_at_the_same_rate_out_of_the_enhancement() {
    // Make-up at most 1/8 of a window. Frames of 4000 + 4000 bits: the
    // full stream is 200 kbit/s. A deficit of 250 ms: the next window's
    // 1 s of media leaves in 875 ms at 200 kbit/s, 175,000 bits, of which
    // 100,000 base: the enhancement share is 75,000 / 100,000 = 0.75,
    // 375 bytes a frame. The window after makes up the other 125 ms, and
    // the third is whole again.
    let config = BufferConfig {
        max_make_up_share: 0.125,
        ..BufferConfig::default()
    };
    let frames = sizes(4000, 4000, 25);
    let mut s = BufferSender::new(config).unwrap();
    let first = s.plan_window(at(0), &frames, None).unwrap();
    assert_eq!(first.make_up, Duration::ZERO);
    let short = BufferFeedback {
        occupancy: ms(1750),
        deficit: ms(250),
        ..calm(0)
    };
    s.on_feedback(at(900), &short).unwrap();
    for (window, start) in [(1, at(1000)), (2, at(1875))] {
        let plan = s.plan_window(at(0), &frames, None).unwrap();
        assert_eq!(plan.start, start, "window {window}");
        assert_eq!(plan.make_up, ms(125));
        assert_eq!(plan.duration, ms(875));
        assert_eq!(plan.pacing_rate.bits_per_sec(), 200_000.0);
        assert_eq!(plan.enhancement_share, Share::new(0.75));
        assert!(plan
            .frames
            .iter()
            .all(|f| (f.base_bytes, f.enhancement_bytes) == (500, 375)));
    }
    assert_eq!(s.deficit_remaining(), Duration::ZERO);
    let whole = s.plan_window(at(0), &frames, None).unwrap();
    assert_eq!((whole.start, whole.duration), (at(2750), ms(1000)));
    assert_eq!(whole.total_bytes(), 25_000);
}

#[test]
fn the_base_layer_is_never_truncated_and_a_cap_below_it_stretches_then_stops() {
    // tfrc-capped, frames of 4000 + 4000 bits (base 100 kbit/s, full 200).
    let config = BufferConfig {
        mode: BufferMode::TfrcCapped,
        ..BufferConfig::default()
    };
    let frames = sizes(4000, 4000, 25);
    let mut s = BufferSender::new(config).unwrap();
    // A cap of 150 kbit/s: 50,000 bits of enhancement, share 0.5.
    let plan = s
        .plan_window(at(0), &frames, Some(Rate::from_bits_per_sec(150_000.0)))
        .unwrap();
    assert!(plan.capped);
    assert_eq!(plan.enhancement_share, Share::new(0.5));
    assert_eq!(plan.total_bytes() * 8, 150_000);
    // 80 kbit/s cannot carry the 100,000 bits of base in 1 s: each window
    // takes 1.25 s, the base whole, and the schedule falls 250 ms behind a
    // window, up to the 1 s tolerance.
    let cap = Rate::from_bits_per_sec(80_000.0);
    for lag in [250, 500, 750, 1000] {
        let plan = s.plan_window(at(0), &frames, Some(cap)).unwrap();
        assert_eq!(plan.duration, ms(1250));
        assert!(plan
            .frames
            .iter()
            .all(|f| (f.base_bytes, f.enhancement_bytes) == (500, 0)));
        assert_eq!(plan.pacing_rate.bits_per_sec(), 80_000.0);
        assert_eq!(s.base_lag(), ms(lag));
    }
    let stop = StopReason::BaseLayerDoesNotFit {
        base_rate: Rate::from_bits_per_sec(100_000.0),
        cap,
        lag: ms(1250),
    };
    assert_eq!(
        s.plan_window(at(0), &frames, Some(cap)),
        Err(BufferError::Stopped(stop))
    );
    assert_eq!(s.stop_reason(), Some(stop));
    assert_eq!(s.next_timeout(), None);
    assert_eq!(
        s.on_feedback(at(9000), &calm(0)),
        Err(BufferError::Stopped(stop))
    );
    assert!(stop.to_string().contains("cap is 80.000 kbit/s"), "{stop}");

    // With no tolerance it stops at the first window the cap cannot carry.
    let mut strict = BufferSender::new(BufferConfig {
        base_lag_tolerance: Duration::ZERO,
        ..config
    })
    .unwrap();
    assert!(matches!(
        strict.plan_window(at(0), &frames, Some(cap)),
        Err(BufferError::Stopped(StopReason::BaseLayerDoesNotFit { .. }))
    ));
    // The paper's mode has no cap.
    let mut paper = BufferSender::new(BufferConfig::default()).unwrap();
    let plan = paper.plan_window(at(0), &frames, Some(cap)).unwrap();
    assert_eq!(plan.total_bytes(), 25_000);
}

#[test]
fn a_dry_buffer_on_the_base_layer_alone_cuts_the_stream_off_after_the_grace() {
    let frames = sizes(4000, 4000, 25);
    let mut s = BufferSender::new(BufferConfig::default()).unwrap();
    s.plan_window(at(0), &frames, None).unwrap();
    // η = 0: the base layer alone from the window at 1 s.
    s.on_feedback(at(500), &congestion(0, 0)).unwrap();
    let base_only = s.plan_window(at(1000), &frames, None).unwrap();
    assert_eq!(base_only.enhancement_bytes(), 0);
    assert_eq!(base_only.base_bytes(), 25 * 500);
    // An underrun 500 ms into it may be what was sent before the cut.
    let dry = |seq, underruns| BufferFeedback {
        underruns,
        occupancy: Duration::ZERO,
        ..congestion(seq, 0)
    };
    assert_eq!(
        s.on_feedback(at(1500), &dry(1, 1)),
        Ok(FeedbackVerdict::Congestion)
    );
    s.plan_window(at(2000), &frames, None).unwrap();
    // A new one after 1 s of base layer alone: the base does not fit.
    let stop = StopReason::BufferRanDry {
        base_only_for: ms(1000),
        underruns: 2,
    };
    assert_eq!(
        s.on_feedback(at(2000), &dry(2, 2)),
        Err(BufferError::Stopped(stop))
    );
    assert_eq!(
        s.plan_window(at(3000), &frames, None),
        Err(BufferError::Stopped(stop))
    );

    // An underrun while enhancement is still sent does not stop it.
    let mut s = BufferSender::new(BufferConfig::default()).unwrap();
    s.plan_window(at(0), &frames, None).unwrap();
    assert!(s.on_feedback(at(5000), &dry(0, 7)).is_ok());
    assert_eq!(s.stop_reason(), None);
}

#[test]
fn windows_refuse_no_frames_and_too_many() {
    let mut s = BufferSender::new(BufferConfig::default()).unwrap();
    assert_eq!(
        s.plan_window(at(0), &[], None),
        Err(BufferError::EmptyWindow)
    );
    let many = sizes(1, 1, MAX_WINDOW_FRAMES + 1);
    assert_eq!(
        s.plan_window(at(0), &many, None),
        Err(BufferError::TooManyFrames {
            frames: MAX_WINDOW_FRAMES + 1
        })
    );
    assert_eq!(s.windows_planned(), 0);
    // A short last window is planned over its own media time.
    let plan = s.plan_window(at(0), &sizes(800, 0, 5), None).unwrap();
    assert_eq!((plan.media_duration, plan.duration), (ms(200), ms(200)));
    assert_eq!(plan.pacing_rate.bits_per_sec(), 20_000.0);
    assert_eq!(s.next_timeout(), Some(at(200)));
}
