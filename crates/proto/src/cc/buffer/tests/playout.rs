//! The receiver's playout model: pre-roll, frames due on the clock,
//! underruns, late, missing and far frames, parts, and bounded memory.

use super::*;

#[test]
fn playback_starts_after_the_preroll_and_no_feedback_comes_before() {
    // 49 frames (1.96 s) at t = 0: short of T_s = 2 s, nothing plays and
    // nothing is sent, however long it waits.
    let mut r = receiver();
    deliver(&mut r, at(0), 0..49, 1000, 0);
    assert!(!r.is_playing());
    assert_eq!(r.occupancy(), ms(1960));
    assert_eq!(r.next_timeout(), None);
    assert!(r.poll_feedback(at(5000)).is_none());
    assert!(!r.is_congested(), "no detection before playback");
    assert_eq!(r.average_occupancy_bits(), None);
    assert_eq!(r.eta(), Share::ONE);
    // The 50th frame at 5 s starts playback: frame 0 is due at once.
    deliver(&mut r, at(5000), 49..50, 1000, 0);
    assert!(r.is_playing());
    let first = r.poll_feedback(at(5000)).unwrap();
    assert_eq!((first.seq, first.occupancy), (0, ms(1960)));
    assert_eq!(r.occupancy_bits(), 49_000);
    // 50,000 bits since the first arrival, 5 s before.
    assert_eq!(first.receive_rate.bits_per_sec(), 10_000.0);
}

#[test]
fn an_empty_buffer_is_an_underrun_and_playback_waits_for_the_preroll_again() {
    // Frame 49 is due at 1960 ms; frame 50 at 2000 ms finds nothing held.
    let mut r = receiver();
    deliver(&mut r, at(0), 0..50, 1000, 1000);
    r.poll_feedback(at(0)).unwrap();
    r.poll_feedback(at(1999));
    assert_eq!((r.underruns(), r.occupancy()), (0, Duration::ZERO));
    r.poll_feedback(at(2000));
    assert_eq!(r.underruns(), 1);
    assert!(!r.is_playing() && r.is_congested());
    // Frame 49 was played: late. Frames from 50 on refill the buffer, and
    // playback resumes with T_s held again.
    assert_eq!(
        r.on_frame(at(2100), &whole(49, 1000, 1000)),
        FrameArrival::Late
    );
    assert_eq!(r.late_frames(), 1);
    deliver(&mut r, at(2100), 50..99, 1000, 1000);
    assert!(!r.is_playing());
    deliver(&mut r, at(2200), 99..100, 1000, 1000);
    assert!(r.is_playing());
    let feedback = r.poll_feedback(at(2300)).unwrap();
    assert_eq!(feedback.underruns, 1);
    assert!(
        feedback.congested,
        "the buffer was empty since the last feedback"
    );
    // Frames 50.. are due from 2200 ms: 47 held at 2300 ms, and playback
    // would last until frame 100 is due at 4200 ms.
    assert_eq!(feedback.occupancy, ms(47 * 40));
    assert_eq!(feedback.span, ms(1900));
    assert_eq!(feedback.deficit, ms(100));
}

#[test]
fn a_missing_frame_is_skipped_while_later_ones_are_held() {
    // Frames 0..=50 but 10: 50 frames, playback starts at 0. Frame 10 is
    // due at 400 ms: skipped, no underrun. Arriving before that it would
    // have been buffered; after, it is late. Frames too far ahead are
    // refused.
    let mut r = receiver();
    deliver(&mut r, at(0), 0..10, 1000, 1000);
    deliver(&mut r, at(0), 11..51, 1000, 1000);
    assert!(r.is_playing());
    r.poll_feedback(at(0)).unwrap();
    assert_eq!(
        r.on_frame(at(440), &whole(10, 1000, 1000)),
        FrameArrival::Late
    );
    assert_eq!(r.underruns(), 0);
    // 51 frames of which 10 arrived, 11 of them due by 440 ms: 39 held.
    assert_eq!(r.held_frames(), 39);
    // Frame 12 is the next to play.
    let far = whole(12 + MAX_FRAMES_AHEAD, 1, 1);
    assert_eq!(r.on_frame(at(440), &far), FrameArrival::OutOfRange);
    assert_eq!(
        r.on_frame(at(440), &whole(u64::MAX, 1, 1)),
        FrameArrival::OutOfRange
    );
    assert_eq!(r.refused_frames(), 2);
    // One just inside the range is held.
    let near = whole(12 + MAX_FRAMES_AHEAD - 1, 1, 1);
    assert_eq!(r.on_frame(at(440), &near), FrameArrival::Buffered);
}

#[test]
fn parts_of_a_frame_add_up_and_its_full_size_counts_once() {
    let mut r = receiver();
    let base = FrameSizes {
        base_bits: 1000,
        enhancement_bits: 0,
    };
    let full = FrameSizes {
        base_bits: 1000,
        enhancement_bits: 3000,
    };
    let part = |received, full| ReceivedFrame {
        index: 0,
        received,
        full: Some(full),
    };
    assert_eq!(r.on_frame(at(0), &part(base, full)), FrameArrival::Buffered);
    let rest = FrameSizes {
        base_bits: 0,
        enhancement_bits: 3000,
    };
    // Counted twice, the empty full size would halve the mean.
    assert_eq!(
        r.on_frame(at(1), &part(rest, FrameSizes::default())),
        FrameArrival::Buffered
    );
    assert_eq!((r.held_frames(), r.occupancy_bits()), (1, 4000));
    assert_eq!(r.full_buffer_bits(), Some(4000.0 * 50.0));

    // Without full sizes B_av_size comes from what arrived: 3000 · 50.
    let mut r = receiver();
    let mut frame = whole(0, 1000, 2000);
    frame.full = None;
    r.on_frame(at(0), &frame);
    assert_eq!(r.full_buffer_bits(), Some(150_000.0));
}

#[test]
fn time_going_backwards_is_taken_as_the_latest_seen() {
    let mut r = receiver();
    deliver(&mut r, at(1000), 0..50, 1000, 1000);
    // Frames due 1000..=1480 ms have left: 37 held.
    assert!(r.poll_feedback(at(1500)).is_some());
    assert_eq!(r.held_frames(), 37);
    assert_eq!(
        r.on_frame(at(0), &whole(60, 1000, 1000)),
        FrameArrival::Buffered
    );
    assert!(r.poll_feedback(at(0)).is_none());
    assert_eq!(r.held_frames(), 38);
    // And at the same instant again, nothing moves.
    assert!(r.poll_feedback(at(1500)).is_none());
    assert_eq!(r.held_frames(), 38);
}

#[test]
fn the_buffer_holds_at_most_max_held_frames() {
    let mut r = receiver();
    let mut refused = 0;
    for index in 0..(MAX_HELD_FRAMES as u64 + 10) {
        if r.on_frame(at(0), &whole(index, 8, 8)) == FrameArrival::OutOfRange {
            refused += 1;
        }
    }
    // Frame 0 was due at once and left: one more fitted.
    assert_eq!(r.held_frames(), MAX_HELD_FRAMES);
    assert_eq!(refused, 9);
    assert_eq!(r.refused_frames(), 9);
}

#[test]
fn a_frame_without_its_whole_base_layer_is_held_but_not_counted_and_never_shown() {
    // 50 whole frames start playback; frames 50..60 arrive with only half
    // of their 1000-bit base layer (the rest lost), frame 60 whole.
    let mut r = receiver();
    deliver(&mut r, at(0), 0..50, 1000, 500);
    r.poll_feedback(at(0)).unwrap();
    let half = |index| ReceivedFrame {
        index,
        received: FrameSizes {
            base_bits: 500,
            enhancement_bits: 500,
        },
        full: Some(FrameSizes {
            base_bits: 1000,
            enhancement_bits: 500,
        }),
    };
    for index in 50..60 {
        assert_eq!(r.on_frame(at(10), &half(index)), FrameArrival::Buffered);
    }
    deliver(&mut r, at(10), 60..61, 1000, 500);
    // Frame 0 was due at 0 and played: 50 decodable frames held (1..50
    // and 60); every bit held counts in bits.
    assert_eq!(r.held_frames(), 60);
    assert_eq!(r.occupancy(), ms(50 * 40));
    assert_eq!(r.occupancy_bits(), 50 * 1500 + 10 * 1000);
    // The base layer's second half completes frame 50: it counts now.
    let rest = ReceivedFrame {
        index: 50,
        received: FrameSizes {
            base_bits: 500,
            enhancement_bits: 0,
        },
        full: None,
    };
    r.on_frame(at(20), &rest);
    assert_eq!(r.occupancy(), ms(51 * 40));
    // Frame k is due at 40·k ms: 1..=50 play by 2000 ms, 51..=59 are
    // skipped by 2360 ms with frame 60 still held: no underrun.
    r.poll_feedback(at(2390));
    assert_eq!(r.undecodable_frames(), 9);
    assert_eq!((r.underruns(), r.occupancy()), (0, ms(40)));
    assert!(r.is_playing());
    // Frame 61 only in part: when it is due at 2440 ms with no decodable
    // frame left, playback stops for the pre-roll.
    assert_eq!(r.on_frame(at(2395), &half(61)), FrameArrival::Buffered);
    r.poll_feedback(at(2480));
    assert_eq!(r.underruns(), 1);
    assert!(!r.is_playing());
}

#[test]
fn without_full_sizes_every_frame_held_counts() {
    let mut r = receiver();
    let part = |index| ReceivedFrame {
        index,
        received: FrameSizes {
            base_bits: 10,
            enhancement_bits: 0,
        },
        full: None,
    };
    for index in 0..10 {
        r.on_frame(at(0), &part(index));
    }
    assert_eq!(r.occupancy(), ms(400));
}
