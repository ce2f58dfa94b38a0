use proptest::prelude::*;

use super::*;

#[test]
fn live_senders_give_up_p_frames_before_i_frames() {
    use fairstream_proto::time::Instant;
    use std::time::Duration;
    let deadline = Instant::from_millis(1000);
    let one_way = Duration::from_millis(50);
    let at = Instant::from_millis(960);
    // 40 ms before the deadline with 50 ms to go: a P or B frame is late,
    // an I frame is still sent.
    assert!(live_frame_is_late(FrameType::P, at, one_way, deadline));
    assert!(live_frame_is_late(FrameType::B, at, one_way, deadline));
    assert!(!live_frame_is_late(FrameType::I, at, one_way, deadline));
    assert!(live_frame_is_late(
        FrameType::I,
        Instant::from_millis(1001),
        one_way,
        deadline
    ));
    assert!(!live_frame_is_late(
        FrameType::P,
        Instant::from_millis(900),
        one_way,
        deadline
    ));
}

fn frame(frame_type: FrameType, arrivals: &[Option<f64>]) -> FrameArrivals {
    FrameArrivals {
        frame_type,
        packets: arrivals
            .iter()
            .map(|a| PacketArrival {
                sent_s: 0.0,
                arrived_s: *a,
            })
            .collect(),
    }
}

#[test]
fn late_packets_count_as_lost_and_empty_frames_stall() {
    // 10 fps; first arrival at 1.0 s; fixed 0.5 s delay: frame i due at
    // 1.5 + 0.1 i.
    let frames = vec![
        frame(FrameType::I, &[Some(1.0), Some(1.2)]),
        frame(FrameType::P, &[Some(1.55)]),
        frame(FrameType::P, &[Some(1.8)]),       // due 1.7: late
        frame(FrameType::P, &[None]),            // lost
        frame(FrameType::P, &[Some(1.7), None]), // partly there
        frame(FrameType::I, &[Some(1.9)]),
    ];
    let r = play_out(&frames, 10.0, StartupDelay::Fixed(0.5));
    assert_eq!(r.frames_total, 6);
    assert_eq!(r.frames_displayed, 4);
    assert_eq!(r.frames_lost, ByType { i: 0, p: 3, b: 0 });
    assert_eq!(r.packets_lost.total(), 3);
    assert_eq!(r.stalls, 1, "frames 2 and 3 form one stall");
    assert!((r.stall_time_s - 0.2).abs() < 1e-12);
    assert_eq!(r.gops.len(), 2);
    assert_eq!(r.gops[0].first_arrival_s, Some(1.0));
    assert_eq!(r.gops[0].last_arrival_s, Some(1.8));
    assert_eq!(r.gops[1].first_frame, 5);
}

#[test]
fn auto_delay_is_the_smallest_without_late_packets() {
    let frames = vec![
        frame(FrameType::I, &[Some(0.0), Some(0.35)]),
        frame(FrameType::P, &[Some(0.2)]),
        frame(FrameType::P, &[Some(0.9)]),
    ];
    let r = play_out(&frames, 10.0, StartupDelay::Auto);
    // Frame 2 arrives 0.9 s after the start; it is due at D + 0.2.
    assert!((r.startup_delay_s - 0.7).abs() < 1e-12);
    assert_eq!(r.frames_lost.total(), 0);
    assert_eq!(r.stalls, 0);
    // One tenth less and frame 2 is late.
    let r = play_out(&frames, 10.0, StartupDelay::Fixed(0.6));
    assert_eq!(r.frames_lost.total(), 1);
}

#[test]
fn nothing_arrived_is_all_stall() {
    let frames = vec![frame(FrameType::I, &[None]), frame(FrameType::P, &[None])];
    let r = play_out(&frames, 25.0, StartupDelay::Auto);
    assert_eq!(r.frames_displayed, 0);
    assert_eq!(r.stalls, 1);
    assert_eq!(r.end_to_end_delay_mean_s, None);
    let empty = play_out(&[], 25.0, StartupDelay::Auto);
    assert_eq!(empty.frames_total, 0);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn rebuffer(startup: f64, refill_s: Option<f64>) -> Playback {
    Playback {
        startup: StartupDelay::Fixed(startup),
        player: Player::Rebuffer,
        refill_s,
    }
}

/// 10 fps, first arrival 1.0 s, start-up delay 0.5 s: frame i due at
/// 1.5 + 0.1 i until a pause. Frame 2 is due at 1.7 s and complete at
/// 1.95 s.
fn one_late_frame() -> Vec<FrameArrivals> {
    vec![
        frame(FrameType::I, &[Some(1.0), Some(1.05)]),
        frame(FrameType::P, &[Some(1.1)]),
        frame(FrameType::P, &[Some(1.6), Some(1.95)]),
        frame(FrameType::P, &[Some(1.2)]),
        frame(FrameType::P, &[Some(1.3)]),
    ]
}

#[test]
fn one_late_frame_is_one_pause_and_moves_every_later_deadline() {
    // Refill 0.2 s = 2 frames: frames 2 and 3, complete at 1.95 s.
    let r = play_out(&one_late_frame(), 10.0, rebuffer(0.5, Some(0.2)));
    assert_eq!(r.player, Player::Rebuffer);
    assert_eq!(r.rebuffers, 1);
    assert!(close(r.rebuffer_time_s, 0.25), "{}", r.rebuffer_time_s);
    assert_eq!(r.pauses.len(), 1);
    assert_eq!(r.pauses[0].frame, 2);
    assert!(close(r.pauses[0].from_s, 1.7) && close(r.pauses[0].to_s, 1.95));
    let deadlines: Vec<f64> = r.frames.iter().map(|f| f.deadline_s).collect();
    for (got, want) in deadlines.iter().zip([1.5, 1.6, 1.95, 2.05, 2.15]) {
        assert!(close(*got, want), "{deadlines:?}");
    }
    assert_eq!(r.frames_displayed, 5);
    assert_eq!(r.frames_lost.total(), 0);
    assert_eq!(r.packets_late, 0);
    assert_eq!(r.stalls, 0);
    // The drop model loses the late packet and keeps its deadlines.
    let d = play_out(&one_late_frame(), 10.0, StartupDelay::Fixed(0.5));
    assert_eq!(d.player, Player::Drop);
    assert_eq!((d.rebuffers, d.rebuffer_time_s), (0, 0.0));
    assert_eq!(d.packets_late, 1);
    assert_eq!(d.frames_lost, ByType { i: 0, p: 1, b: 0 });
    assert!(close(d.frames[4].deadline_s, 1.9));
    assert_eq!(d.rebuffer_refill_s, None);
}

#[test]
fn playback_resumes_only_when_the_refill_is_complete() {
    // Refill 0.3 s = frames 2, 3 and 4; frame 4 completes last, at 2.4 s.
    let mut frames = one_late_frame();
    frames[4] = frame(FrameType::P, &[Some(1.3), Some(2.4)]);
    let r = play_out(&frames, 10.0, rebuffer(0.5, Some(0.3)));
    assert_eq!(r.rebuffers, 1);
    assert!(close(r.rebuffer_time_s, 0.7));
    assert!(close(r.frames[2].deadline_s, 2.4));
    assert!(close(r.frames[4].deadline_s, 2.6));
    // Refill 0: playback resumes as soon as frame 2 is complete; frame 4
    // (due 2.15 s, complete 2.4 s) pauses it a second time.
    let r = play_out(&frames, 10.0, rebuffer(0.5, Some(0.0)));
    assert_eq!(r.rebuffers, 2);
    assert!(close(r.pauses[1].from_s, 2.15) && close(r.pauses[1].to_s, 2.4));
    assert!(close(r.rebuffer_time_s, 0.25 + 0.25));
    assert_eq!(r.packets_late, 0);
}

#[test]
fn the_default_refill_is_the_startup_delay() {
    // Start-up delay 0.5 s at 10 fps: 5 frames, here all to the end (2..5).
    let mut frames = one_late_frame();
    frames.push(frame(FrameType::P, &[Some(2.0)]));
    frames.push(frame(FrameType::P, &[Some(2.2)]));
    frames.push(frame(FrameType::P, &[Some(3.0)]));
    let r = play_out(&frames, 10.0, rebuffer(0.5, None));
    assert_eq!(r.rebuffer_refill_s, Some(0.5));
    // Frames 2..=6 complete at 2.2 s; frame 7 is outside the refill.
    assert!(close(r.pauses[0].to_s, 2.2));
    // Frame 7 is then due at 2.7 s, complete at 3.0: a second pause.
    assert_eq!(r.rebuffers, 2);
    assert!(close(r.pauses[1].from_s, 2.7) && close(r.pauses[1].to_s, 3.0));
}

#[test]
fn packets_and_frames_that_never_arrive_do_not_hold_playback() {
    let frames = vec![
        frame(FrameType::I, &[Some(1.0)]),
        frame(FrameType::P, &[Some(1.1), None]), // part lost: complete at 1.1
        frame(FrameType::P, &[None]),            // all lost: a stall
        frame(FrameType::P, &[]),                // never sent
        frame(FrameType::P, &[Some(1.2)]),
    ];
    let r = play_out(&frames, 10.0, rebuffer(0.5, Some(1.0)));
    assert_eq!(r.rebuffers, 0);
    assert_eq!(r.frames_displayed, 3);
    assert_eq!(r.stalls, 1);
    assert!(close(r.stall_time_s, 0.2));
    assert_eq!(r.frames_lost.total(), 3);
    assert_eq!(r.packets_lost.total(), 2);
    assert_eq!(r.packets_late, 0);
    assert!(close(r.frames[4].deadline_s, 1.9));
}

#[test]
fn occupancy_counts_frames_from_arrival_until_due() {
    // 10 fps, delay 0.14 s after the first arrival at 0.01 s: frames due at
    // 0.15, 0.25, 0.35; frame 2 arrives at 0.25.
    let frames = vec![
        frame(FrameType::I, &[Some(0.01)]),
        frame(FrameType::P, &[Some(0.05)]),
        frame(FrameType::P, &[Some(0.25)]),
    ];
    let r = play_out(&frames, 10.0, StartupDelay::Fixed(0.14));
    let got: Vec<(u64, PlayerState)> = r
        .buffer
        .iter()
        .map(|s| (s.buffered_frames, s.state))
        .collect();
    use PlayerState::*;
    assert_eq!(
        got,
        vec![
            (0, Startup), // 0.0
            (2, Startup), // 0.1
            (1, Playing), // 0.2: frame 0 is on screen
            (1, Playing), // 0.3: frame 2
            (0, Playing), // 0.4
            (0, Ended),   // 0.5: the last frame ended at 0.45
        ]
    );
    assert!(close(r.buffer[1].time_s, 0.1) && close(r.buffer[1].buffered_s, 0.2));
    let csv = format_buffer_csv(&r.buffer);
    assert_eq!(
        csv.lines().next(),
        Some("time_s,buffered_s,buffered_frames,state")
    );
    assert_eq!(csv.lines().nth(2), Some("0.1,0.2,2,startup"));
    assert_eq!(csv.lines().count(), 7);
}

#[test]
fn occupancy_shows_the_pause() {
    let r = play_out(&one_late_frame(), 10.0, rebuffer(0.5, Some(0.2)));
    let at = |t: f64| {
        r.buffer
            .iter()
            .find(|s| close(s.time_s, t))
            .copied()
            .unwrap_or_else(|| panic!("no sample at {t}: {:?}", r.buffer))
    };
    // Paused over [1.7, 1.95): frames 3 and 4 wait, frame 2 is incomplete.
    assert_eq!(at(1.8).state, PlayerState::Rebuffering);
    assert_eq!(at(1.8).buffered_frames, 2);
    assert_eq!(at(1.9).state, PlayerState::Rebuffering);
    // Resumed: frame 2 on screen at 1.95, frame 3 due 2.05, frame 4 2.15.
    assert_eq!(at(2.0).state, PlayerState::Playing);
    assert_eq!(at(2.0).buffered_frames, 2);
    assert_eq!(at(2.1).buffered_frames, 1);
    assert_eq!(at(2.2).buffered_frames, 0);
    assert_eq!(at(2.3).state, PlayerState::Ended);
}

#[test]
fn bad_numbers_do_not_panic() {
    let frames = one_late_frame();
    for fps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let _ = play_out(&frames, fps, rebuffer(0.5, None));
    }
    for refill in [f64::NAN, f64::INFINITY, -1.0, 1e300] {
        let _ = play_out(&frames, 10.0, rebuffer(0.5, Some(refill)));
    }
    for delay in [f64::NAN, f64::INFINITY, -1.0] {
        let r = play_out(&frames, 10.0, rebuffer(delay, None));
        assert!(r.buffer.iter().all(|s| s.time_s.is_finite()));
    }
    // A very long playout is sampled coarsely, not without end.
    let r = play_out(&frames, 10.0, StartupDelay::Fixed(1e9));
    assert!(r.buffer.len() <= MAX_BUFFER_SAMPLES);
}

fn arrivals() -> impl Strategy<Value = Vec<FrameArrivals>> {
    let packet = prop::option::weighted(0.9, 0.0f64..10.0).prop_map(|arrived_s| PacketArrival {
        sent_s: 0.0,
        arrived_s,
    });
    let frame =
        (0u8..3, prop::collection::vec(packet, 0..4)).prop_map(|(t, packets)| FrameArrivals {
            frame_type: [FrameType::I, FrameType::P, FrameType::B][usize::from(t)],
            packets,
        });
    prop::collection::vec(frame, 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn playouts_keep_their_invariants(
        frames in arrivals(),
        fps in prop::sample::select(vec![10.0, 25.0, 30.0]),
        startup in prop::option::of(0.0f64..3.0),
        refill in prop::option::of(0.0f64..2.0),
    ) {
        let startup = startup.map_or(StartupDelay::Auto, StartupDelay::Fixed);
        let drop = play_out(&frames, fps, startup);
        let rebuffered = play_out(&frames, fps, Playback { startup, player: Player::Rebuffer, refill_s: refill });
        for r in [&drop, &rebuffered] {
            prop_assert!(r.frames_displayed <= r.frames_total);
            prop_assert!(r.frames_lost.total() <= r.frames_total);
            prop_assert!(r.rebuffer_time_s >= 0.0);
            prop_assert_eq!(r.rebuffers, r.pauses.len() as u64);
            let paused: f64 = r.pauses.iter().map(Pause::duration_s).sum();
            prop_assert!((paused - r.rebuffer_time_s).abs() < 1e-9);
            prop_assert!(r.pauses.iter().all(|p| p.duration_s() > 0.0));
            for pair in r.frames.windows(2) {
                prop_assert!(pair[1].deadline_s - pair[0].deadline_s >= 1.0 / fps - 1e-9);
            }
            for s in &r.buffer {
                prop_assert!(s.buffered_s >= 0.0);
                prop_assert!(s.buffered_frames <= r.frames_total);
            }
            for pair in r.buffer.windows(2) {
                prop_assert!(pair[1].time_s > pair[0].time_s);
            }
        }
        prop_assert_eq!(drop.rebuffers, 0);
        prop_assert_eq!(rebuffered.packets_late, 0);
        prop_assert_eq!(rebuffered.startup_delay_s, drop.startup_delay_s);
        // Waiting shows every frame that has a packet at all; dropping
        // shows no more.
        let with_data = frames.iter().filter(|f| f.packets.iter().any(|p| p.arrived_s.is_some())).count() as u64;
        prop_assert_eq!(rebuffered.frames_displayed, with_data);
        prop_assert!(drop.frames_displayed <= with_data);
        // The auto delay leaves nothing late, so nothing to wait for.
        if startup == StartupDelay::Auto {
            prop_assert_eq!(rebuffered.rebuffers, 0);
            prop_assert_eq!(drop.packets_late, 0);
        }
    }
}

#[test]
fn a_lost_p_frame_damages_what_refers_to_it_and_a_lost_b_frame_only_itself() {
    use FrameType::{B, I, P};
    // Decoding order I P B B P B B I B B; the first P and the last B lost.
    let on = Some(1.0);
    let frames: Vec<FrameArrivals> = [I, P, B, B, P, B, B, I, B, B]
        .iter()
        .enumerate()
        .map(|(i, t)| frame(*t, &[if i == 1 || i == 9 { None } else { on }]))
        .collect();
    let r = play_out(&frames, 10.0, StartupDelay::Fixed(5.0));
    assert_eq!(r.frames_lost, ByType { i: 0, p: 1, b: 1 });
    // P1 lost: B2, B3 (refer to it), P4 and its B5, B6, then the open
    // GOP's B8 (refers to P4); B9 lost itself.
    assert_eq!(r.frames_damaged, ByType { i: 0, p: 2, b: 6 });
}
