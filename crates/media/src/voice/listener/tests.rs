use super::*;

fn ms(m: u64) -> Duration {
    Duration::from_millis(m)
}

fn config(codec: VoiceCodec, jitter_buffer: JitterBuffer) -> ListenerConfig {
    ListenerConfig {
        codec,
        plc: false,
        jitter_buffer,
        max_frames: MAX_CALL_FRAMES,
    }
}

/// A call of frames captured every 20 ms from 0 for `seconds`, frame i
/// arriving `fate(i)` after capture (`None`: lost), the arrivals taken in
/// time order.
fn call(
    codec: VoiceCodec,
    buffer: JitterBuffer,
    seconds: u64,
    fate: impl Fn(u32) -> Option<Duration>,
) -> VoiceListener {
    let mut listener = VoiceListener::new(config(codec, buffer));
    let frames = (seconds * 50) as u32;
    let mut arrivals = Vec::new();
    for i in 0..frames {
        let capture = VOICE_FRAME * i;
        let index = listener.push_frame(capture).unwrap();
        if let Some(delay) = fate(i) {
            arrivals.push((capture + delay, index));
        }
    }
    arrivals.sort();
    for (at, index) in arrivals {
        listener.arrive(index, at);
    }
    listener
}

const FIXED_60: JitterBuffer = JitterBuffer::Fixed(Duration::from_millis(60));

#[test]
fn a_lossless_short_path_scores_near_the_codec_maximum() {
    let g711 = call(VoiceCodec::G711, FIXED_60, 10, |_| Some(ms(20))).score(ms(20_000));
    assert_eq!(
        (g711.frames, g711.played, g711.late, g711.lost),
        (500, 500, 0, 0)
    );
    // Ta = 20 + 20 + 60 = 100 ms: no Idd, and only the echo terms
    // (Idte 1.96, Idle 0.73) below the 93.2 of G.107's defaults.
    assert_eq!(g711.mouth_to_ear_s, Some(0.1));
    let r = g711.r.unwrap();
    assert!((r - 90.66).abs() < 0.01, "{r}");
    assert!(g711.mos.unwrap() > 4.3);
    let g729 = call(VoiceCodec::G729, FIXED_60, 10, |_| Some(ms(20))).score(ms(20_000));
    // G.729's Ie of 11 off the same.
    let r = g729.r.unwrap();
    assert!((r - (g711.r.unwrap() - 11.0)).abs() < 0.5, "{r}");
}

#[test]
fn burst_loss_gives_a_burst_ratio_above_one_and_a_lower_r() {
    let spread = call(VoiceCodec::G711, FIXED_60, 20, |i| {
        (i % 20 != 7).then_some(ms(30))
    })
    .score(ms(30_000));
    let bursty = call(VoiceCodec::G711, FIXED_60, 20, |i| {
        (i % 200 >= 10).then_some(ms(30))
    })
    .score(ms(30_000));
    assert!((spread.loss_percent - 5.0).abs() < 1e-9);
    assert!((bursty.loss_percent - 5.0).abs() < 1e-9);
    assert!(spread.burst_ratio < 1.0, "{}", spread.burst_ratio);
    assert!(bursty.burst_ratio > 5.0, "{}", bursty.burst_ratio);
    assert!(bursty.r.unwrap() < spread.r.unwrap());
}

#[test]
fn frames_later_than_the_fixed_buffer_are_late_and_count_as_lost() {
    // The first frame takes 100 ms: playout at capture + 160 ms. Every
    // tenth frame takes 200 ms.
    let out = call(VoiceCodec::G711, FIXED_60, 10, |i| {
        Some(ms(if i % 10 == 5 { 200 } else { 100 }))
    })
    .score(ms(20_000));
    assert_eq!((out.frames, out.late, out.lost), (500, 50, 0));
    assert_eq!(out.received, 500);
    assert!((out.loss_percent - 10.0).abs() < 1e-9);
    assert_eq!(out.mouth_to_ear_s, Some(0.18));
    assert_eq!(out.playout_delay_s, Some(0.16));
}

#[test]
fn frames_not_due_at_the_end_are_left_out_and_a_silent_call_has_no_r() {
    let out = call(VoiceCodec::G711, FIXED_60, 10, |_| Some(ms(40))).score(ms(5_000));
    // Due by 5 s: captured by 4.9 s (playout 100 ms later).
    assert_eq!(out.frames, 246);
    let silent = call(VoiceCodec::G711, FIXED_60, 1, |_| None).score(ms(5_000));
    assert_eq!((silent.frames, silent.lost), (50, 50));
    assert_eq!(silent.r, None);
    assert_eq!(silent.mos, None);
}

#[test]
fn the_adaptive_buffer_sets_each_talk_spurt_from_ramjees_estimates() {
    // Two talk spurts of 3 frames, 1 s apart: frames at 0, 20, 40 ms and
    // 1000, 1020, 1040 ms. Delays 100, 140, 100 ms, then 100, 100, 100.
    let mut listener = VoiceListener::new(config(VoiceCodec::G711, JitterBuffer::Adaptive));
    let captures = [0, 20, 40, 1000, 1020, 1040];
    let delays = [100, 140, 100, 100, 100, 100];
    for c in captures {
        listener.push_frame(ms(c)).unwrap();
    }
    for (i, (c, d)) in captures.iter().zip(delays).enumerate() {
        listener.arrive(i, ms(c + d));
    }
    // Spurt 1 plays at d̂_1 + 4·v̂_1 = 100 ms: the 140 ms frame is late.
    assert_eq!(listener.playout_delay(0), Some(ms(100)));
    assert!(listener.on_time(0) && !listener.on_time(1) && listener.on_time(2));
    // Spurt 2 starts at frame 4 (i = 3): by hand, with a = 0.998002,
    // b = 1 − a = 0.001998:
    //   d̂_2 = 0.1a + 0.14b = 0.10007992, v̂_2 = b·0.03992008 = 0.0000797603
    //   d̂_3 = d̂_2·a + 0.1b = 0.10007976..., v̂_3 = v̂_2·a + b·|d̂_3 − 0.1|
    //   d̂_4 = d̂_3·a + 0.1b,                  v̂_4 = v̂_3·a + b·|d̂_4 − 0.1|
    // so d̂_4 + 4·v̂_4 = 0.10007960 + 4·0.00007976 = 0.10039864 s.
    let (a, b): (f64, f64) = (0.998002, 0.001998);
    let d2 = 0.1 * a + 0.14 * b;
    let v2 = b * (0.14 - d2);
    let d3 = d2 * a + 0.1 * b;
    let v3 = v2 * a + b * (d3 - 0.1);
    let d4 = d3 * a + 0.1 * b;
    let v4 = v3 * a + b * (d4 - 0.1);
    let expected = d4 + 4.0 * v4;
    assert!((expected - 0.100_398_64).abs() < 1e-8, "{expected}");
    let got = listener.playout_delay(3).unwrap().as_secs_f64();
    assert!((got - expected).abs() < 1e-9, "{got} vs {expected}");
    assert!(listener.on_time(3) && listener.on_time(5));
    let score = listener.score(ms(10_000));
    assert_eq!((score.frames, score.late, score.played), (6, 1, 5));
    // Ta: the codec's 20 ms plus the mean playout delay of the six frames.
    let mean = (3.0 * 0.1 + 3.0 * expected) / 6.0;
    assert!((score.mouth_to_ear_s.unwrap() - (0.02 + mean)).abs() < 1e-9);
}

#[test]
fn a_spurt_of_which_nothing_arrived_plays_as_the_one_before() {
    let mut listener = VoiceListener::new(config(VoiceCodec::G711, JitterBuffer::Adaptive));
    for c in [0, 20, 1000, 1020] {
        listener.push_frame(ms(c)).unwrap();
    }
    listener.arrive(0, ms(50));
    assert_eq!(listener.playout_delay(2), Some(ms(50)));
    assert_eq!(listener.playout_time(3), Some(ms(1070)));
    let score = listener.score(ms(5_000));
    assert_eq!((score.frames, score.lost), (4, 3));
}

#[test]
fn the_listener_keeps_at_most_max_frames_and_ignores_unknown_and_repeated_frames() {
    let mut listener = VoiceListener::new(ListenerConfig {
        max_frames: 3,
        ..config(VoiceCodec::G711, FIXED_60)
    });
    for i in 0..3 {
        assert_eq!(listener.push_frame(VOICE_FRAME * i), Some(i as usize));
    }
    assert_eq!(listener.push_frame(ms(60)), None);
    assert!(!listener.arrive(7, ms(100)));
    assert!(listener.arrive(1, ms(100)));
    assert!(!listener.arrive(1, ms(50)));
    listener.drop_frame(2);
    let score = listener.score(ms(10_000));
    assert_eq!(
        (score.frames, score.received, score.lost, score.sender_drops),
        (3, 1, 2, 1)
    );
}
