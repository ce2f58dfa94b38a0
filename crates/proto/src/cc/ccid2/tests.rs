//! Unit tests of the CCID 2 sender, one RFC rule each.

use super::*;
use crate::cc::{AckRun, ControllerConfig, TfrcFeedback};

const T0: Instant = Instant::ZERO;

fn ms(millis: u64) -> Instant {
    Instant::from_millis(millis)
}

fn config(initial_window: u32) -> Ccid2Config {
    Ccid2Config {
        initial_window: Some(initial_window),
        ..Ccid2Config::default()
    }
}

fn sender(config: &Ccid2Config) -> Ccid2Sender {
    Ccid2Sender::new(config, T0)
}

/// An Ack Vector from `ack_number` down to `lowest`, merging equal states.
fn vector(ack_number: u64, lowest: u64, state: impl Fn(u64) -> AckState) -> Feedback {
    let mut runs: Vec<AckRun> = Vec::new();
    for seq in (lowest..=ack_number).rev() {
        let s = state(seq);
        match runs.last_mut() {
            Some(run) if run.state == s => run.length += 1,
            _ => runs.push(AckRun {
                state: s,
                length: 1,
            }),
        }
    }
    Feedback::Ack(AckFeedback { ack_number, runs })
}

/// An Ack Vector saying exactly `received` arrived (from its greatest to 0).
fn received(received: &[u64]) -> Feedback {
    let top = *received.iter().max().expect("non-empty");
    vector(top, 0, |seq| {
        if received.contains(&seq) {
            AckState::Received
        } else {
            AckState::NotReceived
        }
    })
}

fn send(s: &mut Ccid2Sender, now: Instant, seqs: std::ops::Range<u64>) {
    for seq in seqs {
        s.on_packet_sent(now, seq, 1460);
    }
}

fn feed(s: &mut Ccid2Sender, now: Instant, feedback: &Feedback) {
    s.on_feedback(now, feedback).expect("Ack feedback");
}

/// Sends a full window at `now`, then acknowledges it one RTT later in
/// cumulative vectors of `group` packets; returns the new cwnd.
fn round_trip(s: &mut Ccid2Sender, now: &mut Instant, next_seq: &mut u64, group: u64) -> u32 {
    let first = *next_seq;
    while s.permission(*now, 1460) == SendPermission::Now {
        s.on_packet_sent(*now, *next_seq, 1460);
        *next_seq += 1;
    }
    *now += Duration::from_millis(100);
    let mut top = first;
    while top < *next_seq {
        top = (top + group).min(*next_seq);
        feed(s, *now, &vector(top - 1, first, |_| AckState::Received));
    }
    s.cwnd()
}

#[test]
fn initial_window_follows_rfc_3390() {
    let iw = |segment_size| {
        Ccid2Config {
            segment_size,
            ..Ccid2Config::default()
        }
        .initial_window_packets()
    };
    // min(4·s, max(2·s, 4380 bytes)) in packets.
    assert_eq!(iw(500), 4);
    assert_eq!(iw(1000), 4);
    assert_eq!(iw(1460), 3);
    assert_eq!(iw(2190), 2);
    assert_eq!(iw(9000), 2);
    assert_eq!(sender(&Ccid2Config::default()).cwnd(), 3);
    assert_eq!(sender(&Ccid2Config::default()).ssthresh(), u32::MAX);
}

#[test]
fn window_full_when_pipe_reaches_cwnd() {
    let mut s = sender(&config(3));
    for seq in 0..3 {
        assert_eq!(s.permission(T0, 1460), SendPermission::Now);
        s.on_packet_sent(T0, seq, 1460);
    }
    assert_eq!(s.pipe(), 3);
    assert_eq!(s.permission(T0, 1460), SendPermission::WindowFull);
    feed(&mut s, ms(100), &received(&[0]));
    assert_eq!(s.pipe(), 2);
    assert_eq!(s.permission(ms(100), 1460), SendPermission::Now);
}

#[test]
fn slow_start_grows_by_half_per_rtt_with_ack_ratio_two() {
    // RFC 4341 §5: one packet per two newly acknowledged packets.
    let mut s = sender(&config(4));
    let (mut now, mut next) = (T0, 0);
    let windows: Vec<u32> = (0..4)
        .map(|_| round_trip(&mut s, &mut now, &mut next, 2))
        .collect();
    assert_eq!(windows, [6, 9, 13, 20]);
    assert!(s.in_slow_start());
}

#[test]
fn slow_start_doubles_per_rtt_when_counting_every_packet() {
    let mut s = sender(&Ccid2Config {
        slow_start: SlowStartIncrease::PerAckedPacket,
        ..config(4)
    });
    let (mut now, mut next) = (T0, 0);
    let windows: Vec<u32> = (0..4)
        .map(|_| round_trip(&mut s, &mut now, &mut next, 2))
        .collect();
    assert_eq!(windows, [8, 16, 32, 64]);
}

#[test]
fn slow_start_increase_is_limited_per_acknowledgement() {
    // "up to a maximum of Ack Ratio/2 packets per acknowledgement": one
    // Ack Vector acknowledging ten packets at Ack Ratio 2 adds one.
    let mut s = sender(&config(10));
    assert_eq!(s.ack_ratio(), 2);
    send(&mut s, T0, 0..10);
    feed(&mut s, ms(100), &vector(9, 0, |_| AckState::Received));
    assert_eq!(s.cwnd(), 11);
}

#[test]
fn congestion_avoidance_adds_one_per_window() {
    let mut s = sender(&config(10));
    s.ssthresh = 10;
    send(&mut s, T0, 0..10);
    feed(&mut s, ms(100), &vector(8, 0, |_| AckState::Received));
    assert_eq!(s.cwnd(), 10, "nine of ten acknowledged");
    feed(&mut s, ms(101), &vector(9, 0, |_| AckState::Received));
    assert_eq!(s.cwnd(), 11, "a whole window acknowledged");
    send(&mut s, ms(101), 10..21);
    feed(&mut s, ms(200), &vector(20, 0, |_| AckState::Received));
    assert_eq!(s.cwnd(), 12);
    assert!(!s.in_slow_start());
}

#[test]
fn a_loss_halves_cwnd_and_sets_ssthresh() {
    let mut s = sender(&config(10));
    send(&mut s, T0, 0..10);
    feed(&mut s, ms(100), &received(&[0, 1, 3, 4, 5]));
    assert_eq!((s.cwnd(), s.ssthresh()), (5, 5));
    assert_eq!(s.pipe(), 4, "five acknowledged, one lost");
    assert_eq!(s.stats().packets_lost, 1);
    // The rest of the window arrives: no second reduction, no growth.
    feed(&mut s, ms(110), &received(&[0, 1, 3, 4, 5, 6, 7, 8, 9]));
    assert_eq!((s.cwnd(), s.pipe()), (5, 0));
    assert_eq!(s.stats().congestion_events, 1);
}

#[test]
fn halving_rounds_down_and_keeps_ssthresh_at_two() {
    let mut s = sender(&config(3));
    send(&mut s, T0, 0..3);
    s.on_packet_sent(T0, 3, 1460); // Beyond the window; the driver's choice.
    feed(&mut s, ms(100), &received(&[1, 2, 3]));
    assert_eq!((s.cwnd(), s.ssthresh()), (1, 2));
}

#[test]
fn several_losses_in_one_window_halve_once() {
    let mut s = sender(&config(10));
    send(&mut s, T0, 0..10);
    // 2 is lost now; 5 only after 7 and 8 arrive, still in the same window.
    feed(&mut s, ms(100), &received(&[0, 1, 3, 4, 6]));
    assert_eq!(s.cwnd(), 5);
    feed(&mut s, ms(101), &received(&[0, 1, 3, 4, 6, 7, 8]));
    assert_eq!(s.stats().packets_lost, 2);
    assert_eq!((s.cwnd(), s.stats().congestion_events), (5, 1));
    // A loss among packets sent after the reduction is a new event.
    assert_eq!(s.pipe(), 1);
    send(&mut s, ms(101), 10..14);
    feed(
        &mut s,
        ms(200),
        &received(&[0, 1, 3, 4, 6, 7, 8, 9, 10, 12, 13]),
    );
    assert_eq!(s.cwnd(), 5, "11 has only two later packets acknowledged");
    send(&mut s, ms(200), 14..18);
    feed(&mut s, ms(300), &received(&[9, 10, 12, 13, 14]));
    assert_eq!((s.cwnd(), s.ssthresh()), (2, 2));
    assert_eq!(s.stats().congestion_events, 2);
}

#[test]
fn a_loss_needs_numdupack_later_acknowledgements() {
    let mut s = sender(&config(10));
    send(&mut s, T0, 0..10);
    feed(&mut s, ms(100), &received(&[0, 1, 3, 4]));
    let stats = s.stats();
    assert_eq!(
        (stats.packets_lost, stats.congestion_events),
        (0, 0),
        "two are not enough"
    );
    assert_eq!((s.pipe(), s.cwnd()), (6, 11));
    feed(&mut s, ms(101), &received(&[0, 1, 3, 4, 5]));
    let stats = s.stats();
    assert_eq!(
        (stats.packets_lost, stats.congestion_events),
        (1, 1),
        "three are"
    );
    assert_eq!(s.cwnd(), 5);
}

#[test]
fn acknowledged_non_data_packets_count_towards_numdupack() {
    // RFC 4341 §5: "the acknowledged packets following the hole may be
    // DCCP-Acks or other non-data packets." Sequence number 3 was the
    // sender's own DCCP-Ack, never reported to the controller.
    let mut s = sender(&config(10));
    send(&mut s, T0, 0..3);
    send(&mut s, T0, 4..6);
    feed(&mut s, ms(100), &received(&[0, 2, 3, 4]));
    assert_eq!(s.stats().packets_lost, 1);
    assert_eq!(s.cwnd(), 5);
}

#[test]
fn an_ecn_mark_halves_cwnd_but_the_packet_arrived() {
    let mut s = sender(&config(10));
    send(&mut s, T0, 0..10);
    let marked = vector(5, 0, |seq| {
        if seq == 3 {
            AckState::ReceivedEcnMarked
        } else {
            AckState::Received
        }
    });
    feed(&mut s, ms(100), &marked);
    assert_eq!((s.cwnd(), s.ssthresh()), (5, 5));
    assert_eq!(s.pipe(), 4);
    let stats = s.stats();
    assert_eq!((stats.packets_ecn_marked, stats.packets_lost), (1, 0));
    assert_eq!(stats.congestion_events, 1);
}

#[test]
fn repeated_ack_vectors_count_once() {
    let mut s = sender(&config(10));
    send(&mut s, T0, 0..10);
    let fb = received(&[0, 1, 3, 4, 5, 6]);
    feed(&mut s, ms(100), &fb);
    let (cwnd, pipe, stats) = (s.cwnd(), s.pipe(), s.stats());
    for i in 0..5 {
        feed(&mut s, ms(101 + i), &fb);
    }
    assert_eq!((s.cwnd(), s.pipe(), s.stats()), (cwnd, pipe, stats));
}

#[test]
fn timeout_resets_cwnd_and_backs_off() {
    let mut s = sender(&config(10));
    send(&mut s, T0, 0..10);
    assert_eq!(s.next_timeout(), Some(ms(1000)), "RFC 6298 initial RTO 1 s");
    s.on_timeout(ms(999));
    assert_eq!(s.cwnd(), 10, "not yet");
    s.on_timeout(ms(1000));
    assert_eq!((s.cwnd(), s.ssthresh(), s.pipe()), (1, 5, 0));
    assert_eq!(s.rto(), Duration::from_secs(2));
    assert_eq!(s.next_timeout(), None, "nothing outstanding");
    assert_eq!(s.tracked_packets(), 0);
    // The timer restarts with the next packet, backed off.
    s.on_packet_sent(ms(1100), 10, 1460);
    assert_eq!(s.next_timeout(), Some(ms(3100)));
    s.on_timeout(ms(3100));
    assert_eq!((s.cwnd(), s.ssthresh()), (1, 2));
    assert_eq!(s.rto(), Duration::from_secs(4));
    assert_eq!(s.stats().timeouts, 2);
}

#[test]
fn acknowledgements_after_a_timeout_do_not_touch_pipe() {
    let mut s = sender(&config(4));
    send(&mut s, T0, 0..4);
    s.on_timeout(ms(1000));
    feed(&mut s, ms(1100), &vector(3, 0, |_| AckState::Received));
    assert_eq!((s.pipe(), s.stats().packets_acked), (0, 0));
    s.on_packet_sent(ms(1100), 4, 1460);
    feed(&mut s, ms(1200), &vector(4, 0, |_| AckState::Received));
    assert_eq!((s.pipe(), s.stats().packets_acked), (0, 1));
}

#[test]
fn rtt_follows_rfc_6298_once_per_window() {
    let mut s = sender(&Ccid2Config {
        min_rto: Duration::ZERO,
        ..config(4)
    });
    assert_eq!(s.rtt(), None);
    send(&mut s, T0, 0..4);
    feed(&mut s, ms(100), &vector(1, 0, |_| AckState::Received));
    // First sample: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4·RTTVAR.
    assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
    assert_eq!(s.rttvar(), Some(Duration::from_millis(50)));
    assert_eq!(s.rto(), Duration::from_millis(300));
    assert_eq!(s.next_timeout(), Some(ms(400)), "restarted on new data");
    // Same window: no second sample.
    feed(&mut s, ms(150), &vector(3, 0, |_| AckState::Received));
    assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
    assert_eq!(s.next_timeout(), None, "all acknowledged");
    // Next window: R' = 200 ms.
    send(&mut s, ms(150), 4..6);
    feed(&mut s, ms(350), &vector(5, 0, |_| AckState::Received));
    assert_eq!(s.rtt(), Some(Duration::from_micros(112_500)));
    assert_eq!(s.rttvar(), Some(Duration::from_micros(62_500)));
}

#[test]
fn rto_has_a_one_second_floor_by_default() {
    let mut s = sender(&config(4));
    send(&mut s, T0, 0..4);
    feed(&mut s, ms(100), &vector(3, 0, |_| AckState::Received));
    assert_eq!(s.rto(), Duration::from_secs(1));
}

#[test]
fn tfrc_feedback_is_refused() {
    let mut s = sender(&Ccid2Config::default());
    let tfrc = Feedback::Tfrc(TfrcFeedback {
        echoed_send_time: T0,
        receiver_delay: Duration::ZERO,
        receive_rate: Rate::ZERO,
        loss_event_rate: 0.0,
        highest_seq: 0,
    });
    let err = s.on_feedback(T0, &tfrc).unwrap_err();
    assert_eq!((err.controller, err.got), ("ccid2", "TFRC"));
}

#[test]
fn feedback_about_packets_never_sent_is_ignored() {
    let mut s = sender(&config(4));
    assert!(
        s.on_feedback(T0, &received(&[0, 1, 2])).is_ok(),
        "nothing sent"
    );
    send(&mut s, T0, 0..4);
    let beyond = Feedback::Ack(AckFeedback {
        ack_number: 100,
        runs: vec![AckRun {
            state: AckState::Received,
            length: 97,
        }],
    });
    feed(&mut s, ms(10), &beyond);
    assert_eq!((s.pipe(), s.cwnd()), (4, 4));
    assert_eq!(s.rtt(), None);
}

#[test]
fn hostile_ack_vectors_do_not_panic_or_loop() {
    let mut s = sender(&config(4));
    send(&mut s, T0, 0..4);
    let hostile = [
        AckFeedback {
            ack_number: 2,
            runs: vec![
                AckRun {
                    state: AckState::NotReceived,
                    length: 0,
                },
                AckRun {
                    state: AckState::NotReceived,
                    length: 1,
                },
                AckRun {
                    state: AckState::Received,
                    length: u64::MAX,
                },
                AckRun {
                    state: AckState::Received,
                    length: 7,
                },
            ],
        },
        AckFeedback {
            ack_number: 0,
            runs: vec![],
        },
        AckFeedback {
            ack_number: u64::MAX,
            runs: vec![
                AckRun {
                    state: AckState::Received,
                    length: 1,
                };
                100_000
            ],
        },
        AckFeedback {
            ack_number: u64::MAX,
            runs: vec![AckRun {
                state: AckState::ReceivedEcnMarked,
                length: u64::MAX,
            }],
        },
    ];
    for (i, fb) in hostile.iter().enumerate() {
        feed(&mut s, ms(10 + i as u64), &Feedback::Ack(fb.clone()));
        assert!(s.cwnd() >= 1 && s.ssthresh() >= 2);
    }
    // The last one acknowledged everything (marked): pipe is empty.
    assert_eq!(s.pipe(), 0);
    assert_eq!(s.stats().packets_acked, 4);
}

#[test]
fn per_packet_state_is_bounded() {
    let mut s = sender(&Ccid2Config {
        max_window: 8,
        max_tracked_packets: 16,
        ..config(4)
    });
    // A driver ignoring `permission`.
    send(&mut s, T0, 0..1000);
    assert_eq!(s.tracked_packets(), 16);
    assert_eq!(s.pipe(), 16);
    feed(&mut s, ms(100), &vector(999, 0, |_| AckState::Received));
    assert_eq!((s.pipe(), s.tracked_packets()), (0, 0));
    // Repeated or older sequence numbers are not tracked.
    s.on_packet_sent(ms(100), 5, 1460);
    assert_eq!(s.pipe(), 0);
}

#[test]
fn application_limited_senders_do_not_grow() {
    let mut s = sender(&config(4));
    send(&mut s, T0, 0..2);
    s.on_application_limited(T0);
    feed(&mut s, ms(100), &vector(1, 0, |_| AckState::Received));
    assert_eq!(s.cwnd(), 4, "window not in full use");
    // Filling the window ends the application-limited period.
    send(&mut s, ms(100), 2..6);
    feed(&mut s, ms(200), &vector(5, 0, |_| AckState::Received));
    assert_eq!(s.cwnd(), 5);
}

#[test]
fn an_idle_period_longer_than_the_rto_restarts_from_the_initial_window() {
    let mut s = sender(&config(4));
    s.cwnd = 20;
    send(&mut s, T0, 0..1);
    feed(&mut s, ms(100), &vector(0, 0, |_| AckState::Received));
    s.on_packet_sent(ms(900), 1, 1460);
    assert_eq!(s.cwnd(), 20, "idle for less than the RTO");
    feed(&mut s, ms(1000), &vector(1, 0, |_| AckState::Received));
    s.on_packet_sent(ms(2500), 2, 1460);
    assert_eq!(s.cwnd(), 4);
    assert_eq!(
        s.ssthresh(),
        u32::MAX,
        "ssthresh keeps at least 3/4 of cwnd"
    );
}

#[test]
fn receive_buffer_drops_and_slow_receivers_end_slow_start() {
    let mut s = sender(&config(10));
    s.on_receive_buffer_drop(T0, 3);
    assert_eq!((s.cwnd(), s.ssthresh()), (7, 7));
    s.on_receive_buffer_drop(T0, 100);
    assert_eq!(s.cwnd(), 1);
    let mut s = sender(&config(10));
    s.on_slow_receiver(T0);
    assert!(!s.in_slow_start());
}

#[test]
fn allowed_rate_is_cwnd_times_s_over_rtt() {
    let mut s = sender(&Ccid2Config::default());
    // Before a sample: R = 0.2 s (RFC 4340 §3.4).
    let rate = s.allowed_rate().bytes_per_sec();
    assert!((rate - 3.0 * 1460.0 / 0.2).abs() < 1e-6, "{rate}");
    send(&mut s, T0, 0..1);
    feed(&mut s, ms(100), &vector(0, 0, |_| AckState::Received));
    let rate = s.allowed_rate().bytes_per_sec();
    assert!((rate - 3.0 * 1460.0 / 0.1).abs() < 1e-6, "{rate}");
}

#[test]
fn ack_ratio_starts_at_two_within_the_window_constraints() {
    let mut s = sender(&config(4));
    assert_eq!((s.ack_ratio(), s.take_ack_ratio_change()), (2, None));
    // RFC 3390 gives two packets of 9000 bytes: Ack Ratio ≤ ceil(2/2) = 1.
    let mut jumbo = sender(&Ccid2Config {
        segment_size: 9000,
        ..Ccid2Config::default()
    });
    assert_eq!(jumbo.ack_ratio(), 1);
    assert_eq!(
        jumbo.take_ack_ratio_change(),
        Some(1),
        "receiver starts at 2"
    );
    assert_eq!(jumbo.take_ack_ratio_change(), None);
}

fn receiver_ack(seq: u64) -> ReceiverPacket {
    ReceiverPacket {
        seq,
        carries_data: false,
        ecn_marked: false,
    }
}

#[test]
fn lost_acks_double_the_ack_ratio_once_per_window() {
    let mut s = sender(&config(20));
    for seq in [100, 101, 103, 104] {
        s.on_receiver_packet(T0, receiver_ack(seq));
    }
    assert_eq!(s.ack_ratio(), 2, "102 not yet lost");
    s.on_receiver_packet(T0, receiver_ack(105));
    assert_eq!(s.ack_ratio(), 4);
    assert_eq!(s.take_ack_ratio_change(), Some(4));
    // Another lost Ack in the same window of data: no further doubling.
    for seq in [107, 108, 109] {
        s.on_receiver_packet(ms(300), receiver_ack(seq));
    }
    assert_eq!(s.ack_ratio(), 4);
    // After a window of data, a new loss doubles again, but not within one
    // RTT (0.2 s before a sample) of the last change.
    send(&mut s, ms(300), 0..20);
    s.on_receiver_packet(ms(300), receiver_ack(110));
    for seq in [112, 113, 114] {
        s.on_receiver_packet(ms(300), receiver_ack(seq));
    }
    assert_eq!(s.ack_ratio(), 8);
    assert_eq!(s.stats().reverse_congestion_signals, 2 + 1);
}

#[test]
fn ack_ratio_doubling_waits_one_rtt_after_a_change() {
    let mut s = sender(&config(40));
    for seq in [0, 2, 3, 4] {
        s.on_receiver_packet(T0, receiver_ack(seq));
    }
    assert_eq!(s.ack_ratio(), 4);
    send(&mut s, ms(10), 0..40);
    for seq in [6, 7, 8] {
        s.on_receiver_packet(ms(10), receiver_ack(seq));
    }
    assert_eq!(s.ack_ratio(), 4, "pending until one RTT has passed");
    s.on_timeout(ms(200));
    assert_eq!(s.ack_ratio(), 8);
}

#[test]
fn marked_non_data_packets_double_the_ack_ratio() {
    let mut s = sender(&config(20));
    let marked_data = ReceiverPacket {
        seq: 1,
        carries_data: true,
        ecn_marked: true,
    };
    s.on_receiver_packet(T0, marked_data);
    assert_eq!(s.ack_ratio(), 2, "marks on data packets do not count");
    let marked_ack = ReceiverPacket {
        seq: 2,
        carries_data: false,
        ecn_marked: true,
    };
    s.on_receiver_packet(T0, marked_ack);
    assert_eq!(s.ack_ratio(), 4);
}

#[test]
fn ack_ratio_decreases_after_cwnd_squared_over_r_squared_minus_r_clean_packets() {
    let mut s = sender(&config(20));
    for seq in [0, 2, 3, 4] {
        s.on_receiver_packet(T0, receiver_ack(seq));
    }
    assert_eq!(s.ack_ratio(), 4);
    // cwnd = 20, R = 4: 400 / 12 = 33.3 windows' worth of packets.
    send(&mut s, ms(300), 0..33);
    assert_eq!(s.ack_ratio(), 4);
    send(&mut s, ms(300), 33..34);
    assert_eq!(s.ack_ratio(), 3);
    // R = 3: 400 / 6 = 66.7 packets, and at most one change per RTT.
    send(&mut s, ms(300), 34..101);
    assert_eq!(s.ack_ratio(), 3, "within one RTT of the last change");
    send(&mut s, ms(500), 101..102);
    assert_eq!(s.ack_ratio(), 2);
    // Constraint (3): never below 2 while cwnd ≥ 4.
    send(&mut s, ms(10_000), 102..2000);
    assert_eq!(s.ack_ratio(), 2);
}

#[test]
fn ack_ratio_follows_cwnd_down_at_once() {
    let mut s = sender(&config(20));
    for seq in [0, 2, 3, 4] {
        s.on_receiver_packet(T0, receiver_ack(seq));
    }
    assert_eq!(s.ack_ratio(), 4);
    send(&mut s, ms(1), 0..20);
    s.on_timeout(ms(1001));
    // Constraint (2): Ack Ratio ≤ ceil(cwnd/2) = 1.
    assert_eq!((s.cwnd(), s.ack_ratio()), (1, 1));
    assert_eq!(s.take_ack_ratio_change(), Some(1));
}

#[test]
fn config_validation_names_the_bad_option() {
    assert_eq!(Ccid2Config::default().validate(), Ok(()));
    let bad = Ccid2Config {
        segment_size: 0,
        ..Ccid2Config::default()
    };
    assert_eq!(
        bad.validate(),
        Err(Ccid2ConfigError::Zero {
            name: "segment_size"
        })
    );
    let bad = Ccid2Config {
        min_rto: Duration::from_secs(2),
        max_rto: Duration::from_secs(1),
        ..Ccid2Config::default()
    };
    assert!(bad.validate().unwrap_err().to_string().contains("min_rto"));
    let bad = Ccid2Config {
        numdupack: 1000,
        ..Ccid2Config::default()
    };
    assert_eq!(
        bad.validate(),
        Err(Ccid2ConfigError::NumDupAckTooLarge(1000))
    );
    // build() still works, with the value brought into range.
    let built = Ccid2Sender::new(&bad, T0);
    assert_eq!(built.config().numdupack, MAX_NUMDUPACK);
}

#[test]
fn the_config_builds_a_boxed_controller() {
    let mut c = Ccid2Config::default().build(T0);
    assert_eq!(c.name(), "ccid2");
    assert_eq!(c.permission(T0, 1460), SendPermission::Now);
    assert_eq!(c.next_timeout(), None);
}
