//! Unit tests of paper 004's controller: one per equation with numbers
//! worked by hand here; the playout model in [`playout`], the make-up, the
//! cut-off and the windows in [`sender`], the configuration in [`config`],
//! and the closed loop through a fake bottleneck in [`closed_loop`].

mod closed_loop;
mod config;
mod playout;
mod sender;

use std::time::Duration;

use super::*;
use crate::time::Instant;
use crate::units::Rate;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn at(millis: u64) -> Instant {
    Instant::from_millis(millis)
}

/// A frame of `base` + `enhancement` bits, all of it received, full sizes
/// known.
fn whole(index: u64, base: u64, enhancement: u64) -> ReceivedFrame {
    let sizes = FrameSizes {
        base_bits: base,
        enhancement_bits: enhancement,
    };
    ReceivedFrame {
        index,
        received: sizes,
        full: Some(sizes),
    }
}

/// Frames `from..to` arrive at `now`, each `base` + `enhancement` bits.
fn deliver(
    r: &mut BufferReceiver,
    now: Instant,
    frames: std::ops::Range<u64>,
    base: u64,
    enh: u64,
) {
    for index in frames {
        assert_eq!(
            r.on_frame(now, &whole(index, base, enh)),
            FrameArrival::Buffered
        );
    }
}

fn receiver() -> BufferReceiver {
    BufferReceiver::new(BufferConfig::default()).unwrap()
}

fn sizes(base: u64, enhancement: u64, n: usize) -> Vec<FrameSizes> {
    vec![
        FrameSizes {
            base_bits: base,
            enhancement_bits: enhancement,
        };
        n
    ]
}

/// A feedback with the buffer full (T_s = 2 s held, no deficit).
fn calm(seq: u64) -> BufferFeedback {
    BufferFeedback {
        seq,
        average_occupancy_bits: 0,
        full_buffer_bits: 0,
        occupancy: ms(2000),
        span: ms(2000),
        eta: Share::ONE,
        congested: false,
        losses_observed: false,
        deficit: Duration::ZERO,
        underruns: 0,
        receive_rate: Rate::ZERO,
    }
}

fn congestion(seq: u64, average_bits: u64) -> BufferFeedback {
    BufferFeedback {
        congested: true,
        average_occupancy_bits: average_bits,
        occupancy: ms(1000),
        ..calm(seq)
    }
}

#[test]
fn eq1_congestion_at_t_c_without_losses() {
    // 50 frames (T_s = 2 s at 40 ms) at t = 0: playback starts at once,
    // frame k is due at 40k ms and leaves then. At t the buffer holds
    // 50 − (⌊t/40⌋ + 1) frames: 26 (1.04 s > T_c) at 920 ms, 25 (1.00 s ≤
    // T_c = 1 s) at 960 ms.
    let mut r = receiver();
    deliver(&mut r, at(0), 0..50, 1000, 1000);
    assert!(r.is_playing());
    assert!(
        r.poll_feedback(at(0)).is_some(),
        "the first feedback at playback start"
    );
    assert_eq!(r.detection_threshold(), ms(1000));
    assert!(r.poll_feedback(at(920)).is_none());
    assert_eq!(r.occupancy(), ms(1040));
    assert!(!r.is_congested());
    // The onset is foreseen by the timer and sends a feedback at once.
    assert_eq!(r.next_timeout(), Some(at(960)));
    let feedback = r.poll_feedback(at(960)).expect("congestion sends at once");
    assert!(feedback.congested);
    assert!(!feedback.losses_observed);
    assert_eq!(feedback.occupancy, ms(1000));
    // Playback would last until frame 50 is due at 2000 ms: the span is
    // 1040 ms (the frame on screen included), the deficit T_s − 1040 ms.
    assert_eq!(feedback.span, ms(1040));
    assert_eq!(feedback.deficit, ms(960));
}

#[test]
fn eq1_congestion_at_t_loss_while_losses_are_observed() {
    // As above, with a loss reported at 400 ms: T_loss = 1.5 s applies.
    // 38 frames (1.52 s) at 440 ms, 37 (1.48 s ≤ 1.5 s) at 480 ms.
    let mut r = receiver();
    deliver(&mut r, at(0), 0..50, 1000, 1000);
    r.poll_feedback(at(0)).unwrap();
    r.on_loss(at(400), 1);
    assert_eq!(r.detection_threshold(), ms(1500));
    // Held 39 at 400 ms; the second of them (frame 12, due at 480 ms)
    // leaves 37.
    assert_eq!(r.next_timeout(), Some(at(480)));
    assert!(r.poll_feedback(at(440)).is_none());
    let feedback = r.poll_feedback(at(480)).unwrap();
    assert!(feedback.congested && feedback.losses_observed);
    assert_eq!(feedback.occupancy, ms(1480));
    // The same receiver without the loss is calm at 480 ms.
    let mut calm = receiver();
    deliver(&mut calm, at(0), 0..50, 1000, 1000);
    calm.poll_feedback(at(0)).unwrap();
    assert!(calm.poll_feedback(at(480)).is_none());
    assert!(!calm.is_congested());
}

#[test]
fn eq1_a_loss_counts_as_observed_for_one_feedback_interval() {
    // T_fb_0 = η·T_fb = 1 s (η = 1 at playback start): a loss at 400 ms
    // is observed until 1400 ms, not after.
    let mut r = receiver();
    deliver(&mut r, at(0), 0..50, 1000, 1000);
    r.poll_feedback(at(0)).unwrap();
    assert_eq!(r.feedback_interval(), ms(1000));
    r.on_loss(at(400), 3);
    assert_eq!(r.lost_packets(), 3);
    assert!(r.losses_observed(at(1400)));
    assert!(!r.losses_observed(at(1401)));
    assert!(!r.losses_observed(at(399)));
}

#[test]
fn eq2_eta_is_the_weighted_average_over_the_full_size() {
    // Frames of 2000 + 2000 bits: B_av_size = 4000 · 50 = 200,000 bits.
    // Rounds every 100 ms from playback start, weight 0.2:
    //   t = 0:   50 frames held, 200,000 → B_av_obs = 200,000
    //   t = 100: 47 held (due at 0, 40, 80 gone), 188,000
    //            → 0.2·188,000 + 0.8·200,000 = 197,600
    //   t = 200: 44 held (the frame due at 200 leaves first), 176,000
    //            → 0.2·176,000 + 0.8·197,600 = 193,280
    // η = 193,280 / 200,000 = 0.9664.
    let mut r = receiver();
    deliver(&mut r, at(0), 0..50, 2000, 2000);
    let feedback = r.poll_feedback(at(200)).unwrap();
    assert_eq!(feedback.full_buffer_bits, 200_000);
    assert_eq!(feedback.average_occupancy_bits, 193_280);
    assert!(
        (feedback.eta.get() - 0.9664).abs() < 1e-12,
        "{:?}",
        feedback.eta
    );
    assert_eq!(r.full_buffer_bits(), Some(200_000.0));

    // Frames that arrive with their base layer only: the buffer is full in
    // time but holds half the bits, η = 100,000 / 200,000 = 0.5.
    let mut thin = receiver();
    for index in 0..50 {
        thin.on_frame(
            at(0),
            &ReceivedFrame {
                index,
                received: FrameSizes {
                    base_bits: 2000,
                    enhancement_bits: 0,
                },
                full: Some(FrameSizes {
                    base_bits: 2000,
                    enhancement_bits: 2000,
                }),
            },
        );
    }
    let feedback = thin.poll_feedback(at(0)).unwrap();
    assert_eq!(feedback.eta, Share::new(0.5));
    assert!(!feedback.congested);
    // eq. 2 itself, clamped to [0, 1].
    assert_eq!(eta(150.0, 200.0), Share::new(0.75));
    assert_eq!(eta(300.0, 200.0), Share::ONE);
    assert_eq!(eta(-1.0, 200.0), Share::ZERO);
    assert_eq!(eta(5.0, 0.0), Share::ONE);
    assert_eq!(eta(f64::NAN, 200.0), Share::ZERO);
}

#[test]
fn eq3_eq4_d_txn_sheds_eta_of_the_enhancement() {
    // 25 frames (1 s) of F_base = 4000, F_enh = 6000: F_k = 10,000 (eq. 4).
    // η = 0.5: D_txn = 25 · (4000 + 0.5·6000) = 175,000 bits (eq. 3).
    let frames = sizes(4000, 6000, 25);
    assert_eq!(frame_bits(frames[0]), 10_000);
    assert_eq!(scheduled_bits(&frames, Share::new(0.5)), 175_000.0);
    assert_eq!(scheduled_bits(&frames, Share::ONE), 250_000.0);
    assert_eq!(scheduled_bits(&frames, Share::ZERO), 100_000.0);

    // Through the sender: the first window is whole (250 kbit/s); its
    // B_av_size is 10,000 · 50 = 500,000 bits, so a congestion feedback
    // with B_av_obs = 250,000 gives η = 0.5.
    let mut s = BufferSender::new(BufferConfig::default()).unwrap();
    let first = s.plan_window(at(0), &frames, None).unwrap();
    assert_eq!(first.total_bytes(), 31_250);
    assert_eq!(first.pacing_rate.bits_per_sec(), 250_000.0);
    assert_eq!(s.full_buffer_bits(), Some(500_000.0));
    let mut feedback = congestion(0, 250_000);
    feedback.deficit = Duration::ZERO; // nothing to make up here
    assert_eq!(
        s.on_feedback(at(500), &feedback),
        Ok(FeedbackVerdict::Congestion)
    );
    assert_eq!(s.eta(), Share::new(0.5));
    // Each frame: 500 bytes of base, ⌊0.5 · 6000 / 8⌋ = 375 of enhancement;
    // 25 · 875 bytes = 175,000 bits over 1 s, a frame every 40 ms.
    let plan = s.plan_window(at(1000), &frames, None).unwrap();
    assert_eq!(plan.start, at(1000));
    assert_eq!(plan.duration, ms(1000));
    assert_eq!(plan.total_bytes() * 8, 175_000);
    assert_eq!(plan.pacing_rate.bits_per_sec(), 175_000.0);
    for (k, frame) in plan.frames.iter().enumerate() {
        assert_eq!((frame.base_bytes, frame.enhancement_bytes), (500, 375));
        assert_eq!(frame.send_at, at(1000 + 40 * k as u64));
    }
}

#[test]
fn eq5_delta_steps_after_three_calm_feedbacks_and_congestion_resets_it() {
    // η = 0.5 from congestion. Calm feedbacks 1 and 2: δ = 0; the 3rd sets
    // 1/8, each one after moves one step: share δ + 0.5(1 − δ) =
    // 0.5, 0.5, 0.5625, 0.625, 0.75, 0.875, 0.9375, 1, 1.
    let frames = sizes(4000, 6000, 25);
    let mut s = BufferSender::new(BufferConfig::default()).unwrap();
    s.plan_window(at(0), &frames, None).unwrap();
    s.on_feedback(at(100), &congestion(0, 250_000)).unwrap();
    assert_eq!(
        (s.delta(), s.schedule_share()),
        (Share::ZERO, Share::new(0.5))
    );
    let expected = [
        (0.0, 0.5),
        (0.0, 0.5),
        (0.125, 0.5625),
        (0.25, 0.625),
        (0.5, 0.75),
        (0.75, 0.875),
        (0.875, 0.9375),
        (1.0, 1.0),
        (1.0, 1.0),
    ];
    for (k, (delta, share)) in expected.into_iter().enumerate() {
        let seq = k as u64 + 1;
        assert_eq!(
            s.on_feedback(at(200 + 100 * seq), &calm(seq)),
            Ok(FeedbackVerdict::Calm)
        );
        assert_eq!(s.delta(), Share::new(delta), "calm feedback {seq}");
        assert_eq!(s.schedule_share(), Share::new(share), "calm feedback {seq}");
        if seq == 3 {
            // Eq. 5 at δ = 1/8: ⌊0.5625 · 6000 / 8⌋ = 421 bytes a frame.
            let plan = s.plan_window(at(1000), &frames, None).unwrap();
            assert_eq!(plan.enhancement_share, Share::new(0.5625));
            assert_eq!(plan.frames[0].enhancement_bytes, 421);
            assert_eq!(plan.total_bytes(), 25 * (500 + 421));
        }
    }
    // Congestion resets δ and takes the new η (100,000 / 500,000 = 0.2).
    s.on_feedback(at(5000), &congestion(20, 100_000)).unwrap();
    assert_eq!((s.delta(), s.eta()), (Share::ZERO, Share::new(0.2)));
    assert_eq!(s.calm_feedbacks(), 0);
    // A feedback at or below T_c without congestion ends a calm run.
    s.on_feedback(at(5100), &calm(21)).unwrap();
    s.on_feedback(at(5200), &calm(22)).unwrap();
    let low = BufferFeedback {
        occupancy: ms(1000),
        ..calm(23)
    };
    assert_eq!(
        s.on_feedback(at(5300), &low),
        Ok(FeedbackVerdict::Unsettled)
    );
    s.on_feedback(at(5400), &calm(24)).unwrap();
    s.on_feedback(at(5500), &calm(25)).unwrap();
    assert_eq!(
        s.delta(),
        Share::ZERO,
        "two calm feedbacks since the run broke"
    );
    // A feedback older than one taken is ignored.
    assert_eq!(
        s.on_feedback(at(5600), &congestion(3, 0)),
        Ok(FeedbackVerdict::Stale)
    );
    assert_eq!(s.eta(), Share::new(0.2));
    assert_eq!(DELTA_SEQUENCE, [0.125, 0.25, 0.5, 0.75, 0.875, 1.0]);
}

#[test]
fn eq6_feedback_interval_is_eta_times_half_the_preroll_with_a_floor() {
    // T_s = 2 s: T_fb = 1 s. η = 0.5: 500 ms; η = 0.05: 50 ms, raised to
    // the 100 ms floor; η = 0: the floor.
    let t_fb = BufferConfig::default().max_feedback_interval();
    assert_eq!(t_fb, ms(1000));
    let floor = ms(100);
    assert_eq!(feedback_interval(Share::ONE, t_fb, floor), ms(1000));
    assert_eq!(feedback_interval(Share::new(0.5), t_fb, floor), ms(500));
    assert_eq!(feedback_interval(Share::new(0.05), t_fb, floor), ms(100));
    assert_eq!(feedback_interval(Share::ZERO, t_fb, floor), ms(100));

    // Through the receiver: base layers only, η = 0.5 at playback start,
    // so the second feedback is due 500 ms after the first (the buffer
    // falls to T_c only at 960 ms).
    let mut r = receiver();
    for index in 0..50 {
        let mut frame = whole(index, 2000, 2000);
        frame.received.enhancement_bits = 0;
        r.on_frame(at(0), &frame);
    }
    assert_eq!(r.poll_feedback(at(0)).unwrap().eta, Share::new(0.5));
    assert_eq!(r.feedback_interval(), ms(500));
    assert_eq!(r.next_timeout(), Some(at(500)));
    assert!(r.poll_feedback(at(499)).is_none());
    let second = r.poll_feedback(at(500)).unwrap();
    assert_eq!(second.seq, 1);
    assert!(!second.congested);
}

#[test]
fn the_tcp_friendly_cap_is_rfc_5348_s_equation_or_twice_the_receive_rate_before_losses() {
    let rtt = Some(ms(100));
    // s = 1000 bytes, R = 100 ms, p = 1 %: X = s/(R·f(p)) by hand, f(p) =
    // sqrt(2p/3) + 12·sqrt(3p/8)·p·(1 + 32p²) (b = 1, t_RTO = 4R).
    let p: f64 = 0.01;
    let f = (2.0 * p / 3.0).sqrt() + 12.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p);
    let expected = 1000.0 / (0.1 * f);
    let cap = tcp_friendly_rate(1000.0, rtt, p, Rate::ZERO).unwrap();
    assert!((cap.bytes_per_sec() - expected).abs() < 1e-6 * expected);
    // Before the first loss: twice what the receiver reported.
    let recv = Rate::from_bits_per_sec(300_000.0);
    assert_eq!(
        tcp_friendly_rate(1000.0, rtt, 0.0, recv),
        Some(Rate::from_bits_per_sec(600_000.0))
    );
    // Nothing known yet, or nonsense: no cap.
    assert_eq!(tcp_friendly_rate(1000.0, None, p, recv), None);
    assert_eq!(tcp_friendly_rate(1000.0, rtt, 0.0, Rate::ZERO), None);
    assert_eq!(
        tcp_friendly_rate(1000.0, Some(Duration::ZERO), p, recv),
        None
    );
    assert_eq!(tcp_friendly_rate(f64::NAN, rtt, p, recv), None);
    assert_eq!(tcp_friendly_rate(1000.0, rtt, f64::NAN, recv), None);
    // More loss, a lower cap.
    assert!(tcp_friendly_rate(1000.0, rtt, 0.05, recv).unwrap() < cap);
}
