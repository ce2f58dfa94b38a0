//! Property tests of paper 004's receiver-buffer controller: random
//! configurations and random (hostile) sequences of frames, losses, polls,
//! feedbacks and windows, with invariants checked after every step.
//!
//! - η is always in [0, 1], feedbacks count up by one, the deficit is at
//!   most T_s, the feedback interval within eq. 6's bounds;
//! - δ takes only 0 and the sequence's values, and moves one step per calm
//!   feedback (after the calm run), to 0 on congestion, else not at all;
//! - a window carries every base layer whole and no more than the full
//!   frames; in `tfrc-capped` mode it is never paced above the cap, and a
//!   base layer above the cap is stretched or stops the stream;
//! - nothing panics on huge or zero sizes, time standing still or going
//!   backwards, frames far ahead, or feedback out of order; the buffer
//!   holds at most `MAX_HELD_FRAMES`.

use std::time::Duration;

use fairstream_proto::cc::buffer::{
    BufferConfig, BufferError, BufferFeedback, BufferMode, BufferReceiver, BufferSender,
    FeedbackVerdict, FrameSizes, ReceivedFrame, Share, StopReason, DELTA_SEQUENCE, MAX_HELD_FRAMES,
};
use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;
use proptest::prelude::*;

fn config() -> impl Strategy<Value = BufferConfig> {
    (
        (prop::sample::select(vec![1u64, 10, 40, 100]), 1u64..=100),
        (0.0f64..1.0, 0.0f64..1.0),
        (1u64..=500, 0.01f64..=1.0, 0.0f64..1.0),
        (any::<bool>(), any::<bool>(), 1u32..=5, 0.0f64..0.9),
        (0.0f64..=1.0, 0.0f64..=1.0, 1u64..=50),
    )
        .prop_filter_map(
            "a valid configuration",
            |(
                (frame_ms, preroll_frames),
                (t_c, t_loss),
                (round_ms, weight, floor),
                (on_congestion, capped, calm, make_up),
                (lag, grace, window_frames),
            )| {
                let fi = Duration::from_millis(frame_ms);
                let preroll = fi * preroll_frames as u32;
                let t_c = preroll.mul_f64(t_c);
                let config = BufferConfig {
                    mode: if capped {
                        BufferMode::TfrcCapped
                    } else {
                        BufferMode::Paper
                    },
                    preroll,
                    congestion_threshold: t_c,
                    loss_threshold: t_c + (preroll - t_c).mul_f64(t_loss),
                    frame_interval: fi,
                    measurement_interval: Duration::from_millis(round_ms),
                    occupancy_weight: weight,
                    min_feedback_interval: (preroll / 2).mul_f64(floor),
                    feedback_on_congestion: on_congestion,
                    window: fi * window_frames as u32,
                    calm_feedbacks: calm,
                    max_make_up_share: make_up,
                    base_lag_tolerance: preroll.mul_f64(lag),
                    dry_buffer_grace: preroll.mul_f64(grace),
                };
                config.validate().ok().map(|()| config)
            },
        )
}

/// Sizes from small to absurd.
fn bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 0u64..20_000,
        1 => Just(0u64),
        1 => any::<u64>(),
    ]
}

fn frame_sizes() -> impl Strategy<Value = FrameSizes> {
    (bits(), bits()).prop_map(|(base_bits, enhancement_bits)| FrameSizes {
        base_bits,
        enhancement_bits,
    })
}

#[derive(Clone, Debug)]
enum ReceiverOp {
    /// After `step_us` (negative: earlier than the last time).
    Frame {
        step_us: i64,
        index: u64,
        received: FrameSizes,
        full: Option<FrameSizes>,
    },
    Loss {
        step_us: i64,
        packets: u64,
    },
    Poll {
        step_us: i64,
    },
}

fn step_us() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 0i64..60_000,
        1 => Just(0i64),
        1 => -100_000i64..0,
        1 => 0i64..5_000_000,
    ]
}

fn receiver_op() -> impl Strategy<Value = ReceiverOp> {
    let index = prop_oneof![8 => 0u64..400, 1 => any::<u64>()];
    prop_oneof![
        6 => (step_us(), index, frame_sizes(), prop::option::of(frame_sizes())).prop_map(
            |(step_us, index, received, full)| ReceiverOp::Frame {
                step_us,
                index,
                received,
                full,
            }
        ),
        1 => (step_us(), any::<u64>()).prop_map(|(step_us, packets)| ReceiverOp::Loss {
            step_us,
            packets,
        }),
        3 => step_us().prop_map(|step_us| ReceiverOp::Poll { step_us }),
    ]
}

fn advance(now: Instant, step_us: i64) -> Instant {
    if step_us >= 0 {
        now + Duration::from_micros(step_us.unsigned_abs())
    } else {
        now - Duration::from_micros(step_us.unsigned_abs())
    }
}

fn check_feedback(config: &BufferConfig, feedback: &BufferFeedback, expected_seq: u64) {
    assert!((0.0..=1.0).contains(&feedback.eta.get()));
    assert_eq!(feedback.seq, expected_seq);
    assert!(feedback.deficit <= config.preroll);
    assert_eq!(
        feedback.deficit,
        config.preroll.saturating_sub(feedback.span)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// η in [0, 1], feedbacks in order, eq. 6's interval within its bounds,
    /// the occupancy at most the frames held, memory bounded: whatever arrives.
    #[test]
    fn receiver_invariants(config in config(), ops in prop::collection::vec(receiver_op(), 1..300)) {
        let mut r = BufferReceiver::new(config).unwrap();
        let mut now = Instant::from_secs_f64(1.0);
        let mut seq = 0;
        let t_fb = config.max_feedback_interval();
        for op in ops {
            match op {
                ReceiverOp::Frame { step_us, index, received, full } => {
                    now = advance(now, step_us);
                    r.on_frame(now, &ReceivedFrame { index, received, full });
                }
                ReceiverOp::Loss { step_us, packets } => {
                    now = advance(now, step_us);
                    r.on_loss(now, packets);
                }
                ReceiverOp::Poll { step_us } => {
                    now = advance(now, step_us);
                    if let Some(feedback) = r.poll_feedback(now) {
                        check_feedback(&config, &feedback, seq);
                        seq += 1;
                    }
                }
            }
            prop_assert!((0.0..=1.0).contains(&r.eta().get()));
            prop_assert!(r.held_frames() <= MAX_HELD_FRAMES);
            // Decodable frames only count in time.
            prop_assert!(r.occupancy() <= config.frame_interval * r.held_frames() as u32);
            let interval = r.feedback_interval();
            prop_assert!(interval >= config.min_feedback_interval && interval <= t_fb);
            if let Some(average) = r.average_occupancy_bits() {
                prop_assert!(average.is_finite() && average >= 0.0);
            }
        }
    }
}

#[derive(Clone, Debug)]
enum SenderOp {
    Window {
        step_us: i64,
        frames: Vec<FrameSizes>,
        cap: Option<u64>,
    },
    Feedback(BufferFeedback),
}

fn feedback() -> impl Strategy<Value = BufferFeedback> {
    (
        (0u64..64, any::<bool>(), bits(), 0u64..4_000),
        (0u64..4_000, 0.0f64..=1.0, 0u64..4),
    )
        .prop_map(
            |((seq, congested, average, occupancy_ms), (deficit_ms, eta, underruns))| {
                BufferFeedback {
                    seq,
                    average_occupancy_bits: average,
                    full_buffer_bits: 0,
                    occupancy: Duration::from_millis(occupancy_ms),
                    span: Duration::from_millis(occupancy_ms),
                    eta: Share::new(eta),
                    congested,
                    losses_observed: false,
                    deficit: Duration::from_millis(deficit_ms),
                    underruns,
                    receive_rate: Rate::ZERO,
                }
            },
        )
}

fn sender_op() -> impl Strategy<Value = SenderOp> {
    let cap = prop_oneof![
        1 => Just(None),
        3 => (0u64..2_000_000).prop_map(Some),
        1 => any::<u64>().prop_map(Some),
    ];
    prop_oneof![
        1 => (step_us(), prop::collection::vec(frame_sizes(), 1..60), cap).prop_map(
            |(step_us, frames, cap)| SenderOp::Window { step_us, frames, cap }
        ),
        2 => feedback().prop_map(SenderOp::Feedback),
    ]
}

fn delta_index(delta: Share) -> Option<usize> {
    if delta == Share::ZERO {
        return Some(0);
    }
    DELTA_SEQUENCE
        .iter()
        .position(|&d| Share::new(d) == delta)
        .map(|k| k + 1)
}

/// What a window must be, whatever the sender's state.
fn check_window(
    config: &BufferConfig,
    frames: &[FrameSizes],
    cap: Option<Rate>,
    plan: &fairstream_proto::cc::buffer::WindowPlan,
) -> Result<(), TestCaseError> {
    let mut least = 0u128;
    let mut most = 0u128;
    for (frame, planned) in frames.iter().zip(&plan.frames) {
        // The base layer is never truncated.
        prop_assert_eq!(planned.base_bytes, frame.base_bits.div_ceil(8));
        prop_assert!(planned.enhancement_bytes <= frame.enhancement_bits / 8);
        prop_assert!(planned.send_at >= plan.start && planned.send_at <= plan.end());
        least += u128::from(frame.base_bits.div_ceil(8));
        let full = u128::from(frame.base_bits) + u128::from(frame.enhancement_bits);
        most += full.div_ceil(8);
    }
    prop_assert_eq!(plan.frames.len(), frames.len());
    let total: u128 = plan
        .frames
        .iter()
        .map(|f| u128::from(f.base_bytes) + u128::from(f.enhancement_bytes))
        .sum();
    prop_assert!(
        total >= least && total <= most,
        "{} not in [{}, {}]",
        total,
        least,
        most
    );
    let media = config.frame_interval * frames.len() as u32;
    prop_assert_eq!(plan.media_duration, media);
    let stretched = plan.duration > media;
    if stretched {
        prop_assert!(plan.capped && plan.enhancement_bytes() == 0);
    } else {
        let shortest = media.mul_f64(1.0 - config.max_make_up_share);
        prop_assert!(plan.duration + Duration::from_nanos(2) >= shortest);
    }
    if let (BufferMode::TfrcCapped, Some(cap)) = (config.mode, cap) {
        // Never above the cap (to the rounding of a float).
        let limit = cap.bits_per_sec() * (1.0 + 1e-9) + 1e-6;
        prop_assert!(
            plan.pacing_rate.bits_per_sec() <= limit,
            "{} above the cap {}",
            plan.pacing_rate,
            cap
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// δ moves only along the sequence, one step per calm feedback; windows
    /// keep the base layer whole, stay within the full frames and under the
    /// cap; a stop is for good; feedback out of order changes nothing.
    #[test]
    fn sender_invariants(config in config(), ops in prop::collection::vec(sender_op(), 1..120)) {
        let mut s = BufferSender::new(config).unwrap();
        let mut now = Instant::from_secs_f64(1.0);
        let mut newest_seq: Option<u64> = None;
        let mut last_end: Option<Instant> = None;
        for op in ops {
            let before = delta_index(s.delta()).expect("δ on the sequence");
            match op {
                SenderOp::Feedback(feedback) => {
                    now += Duration::from_millis(10);
                    let result = s.on_feedback(now, &feedback);
                    let after = delta_index(s.delta()).expect("δ on the sequence");
                    match result {
                        Ok(FeedbackVerdict::Stale) => {
                            prop_assert!(newest_seq.is_some_and(|n| feedback.seq <= n));
                            prop_assert_eq!(after, before);
                        }
                        Ok(verdict) => {
                            prop_assert!(newest_seq.is_none_or(|n| feedback.seq > n));
                            newest_seq = Some(feedback.seq);
                            match verdict {
                                FeedbackVerdict::Congestion => {
                                    prop_assert!(feedback.congested);
                                    prop_assert_eq!(after, 0);
                                }
                                FeedbackVerdict::Calm => {
                                    let stepping = s.calm_feedbacks() >= config.calm_feedbacks
                                        && before < DELTA_SEQUENCE.len();
                                    prop_assert_eq!(after, if stepping { before + 1 } else { before });
                                }
                                _ => prop_assert_eq!(after, before),
                            }
                            prop_assert_eq!(s.deficit_remaining(), feedback.deficit.min(config.preroll));
                        }
                        Err(BufferError::Stopped(reason)) => {
                            prop_assert_eq!(s.stop_reason(), Some(reason));
                        }
                        Err(other) => prop_assert!(false, "{:?}", other),
                    }
                }
                SenderOp::Window { step_us, frames, cap } => {
                    now = advance(now, step_us);
                    let cap = cap.map(|c| Rate::from_bits_per_sec(c as f64));
                    let was_stopped = s.stop_reason().is_some();
                    match s.plan_window(now, &frames, cap) {
                        Ok(plan) => {
                            prop_assert!(!was_stopped);
                            prop_assert!(last_end.is_none_or(|end| plan.start >= end));
                            last_end = Some(plan.end());
                            check_window(&config, &frames, cap, &plan)?;
                        }
                        Err(BufferError::Stopped(reason)) => {
                            prop_assert_eq!(s.stop_reason(), Some(reason));
                            if !was_stopped {
                                // Only the cap stops a stream at a window.
                                prop_assert_eq!(config.mode, BufferMode::TfrcCapped);
                                let is_cap = matches!(reason, StopReason::BaseLayerDoesNotFit { .. });
                                prop_assert!(is_cap);
                            }
                        }
                        Err(other) => prop_assert!(false, "{:?}", other),
                    }
                }
            }
            prop_assert!((0.0..=1.0).contains(&s.eta().get()));
            if s.stop_reason().is_some() {
                prop_assert_eq!(s.next_timeout(), None);
            }
        }
    }

    /// A receiver and a sender wired back to back over a random delay and
    /// random whole-frame losses: nothing panics, the base layer arrives
    /// whole whenever a frame arrives, η stays in [0, 1].
    #[test]
    fn wired_pair_never_panics(
        config in config(),
        frame in frame_sizes(),
        delay_ms in 0u64..500,
        losses in prop::collection::vec(any::<bool>(), 64),
        windows in 1usize..12,
    ) {
        let mut s = BufferSender::new(config).unwrap();
        let mut r = BufferReceiver::new(config).unwrap();
        let delay = Duration::from_millis(delay_ms);
        let mut now = Instant::ZERO;
        let mut index = 0u64;
        let mut in_flight: Vec<(Instant, ReceivedFrame)> = Vec::new();
        for _ in 0..windows {
            let frames = vec![frame; config.frames_per_window()];
            let Ok(plan) = s.plan_window(now, &frames, None) else {
                break;
            };
            for planned in &plan.frames {
                if !losses[(index % 64) as usize] {
                    in_flight.push((
                        planned.send_at + delay,
                        ReceivedFrame {
                            index,
                            received: FrameSizes {
                                base_bits: planned.base_bytes.saturating_mul(8),
                                enhancement_bits: planned.enhancement_bytes.saturating_mul(8),
                            },
                            full: Some(frame),
                        },
                    ));
                } else {
                    r.on_loss(planned.send_at + delay, 1);
                }
                index += 1;
            }
            in_flight.sort_by_key(|(t, _)| *t);
            now = plan.end();
            for (t, received) in in_flight.drain(..) {
                r.on_frame(t, &received);
                if let Some(feedback) = r.poll_feedback(t) {
                    prop_assert!((0.0..=1.0).contains(&feedback.eta.get()));
                    let _ = s.on_feedback(t + delay, &feedback);
                }
            }
        }
        prop_assert!(r.held_frames() <= MAX_HELD_FRAMES);
    }
}
