//! Unit tests for the NewReno model, and a tiny two-host harness that the
//! property and throughput tests share.

use std::time::Duration;

use fairstream_proto::time::Instant;

use super::*;

mod cubic;
mod cubic_response;
mod ecn;
mod harness;
mod padhye;
mod props;
mod rto_in_recovery;
mod sack;

use harness::Harness;

const MSS: u64 = 1460;

/// A configuration without delayed ACKs and with the given window setup.
fn config(initial_segments: u32, ssthresh_segments: Option<u64>) -> TcpConfig {
    TcpConfig {
        initial_window: InitialWindow::Segments(initial_segments),
        initial_ssthresh: ssthresh_segments.map_or(u64::MAX, |s| s * MSS),
        delayed_ack: None,
        ..TcpConfig::default()
    }
}

/// Sends what the window allows at `now`, delivers it all without loss after
/// half an RTT, and returns the ACKs a full RTT later. Returns what was sent.
/// A sender and a receiver of `c`, and the sender's first window, sent at
/// time zero.
fn first_window(c: TcpConfig) -> (TcpSender, TcpReceiver, Vec<Segment>) {
    let mut sender = TcpSender::new(c.clone(), Instant::ZERO).unwrap();
    let receiver = TcpReceiver::new(c).unwrap();
    let sent: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(Instant::ZERO)).collect();
    (sender, receiver, sent)
}

fn lossless_round(
    sender: &mut TcpSender,
    receiver: &mut TcpReceiver,
    now: Instant,
) -> Vec<Segment> {
    let sent: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(now)).collect();
    let acks: Vec<Ack> = sent
        .iter()
        .filter_map(|s| receiver.on_segment(now + Duration::from_millis(50), s))
        .collect();
    for ack in &acks {
        sender.on_ack(now + Duration::from_millis(100), ack);
    }
    sent
}

#[test]
fn initial_window_follows_rfc_3390() {
    let mut c = TcpConfig::default();
    assert_eq!(c.initial_window_bytes(), 4380); // 3 * 1460
    c.mss = 536;
    assert_eq!(c.initial_window_bytes(), 4 * 536);
    c.mss = 3000;
    assert_eq!(c.initial_window_bytes(), 6000);
    c.mss = 1460;
    c.initial_window = InitialWindow::Rfc6928;
    assert_eq!(c.initial_window_bytes(), 14600);
}

#[test]
fn slow_start_doubles_cwnd_every_rtt() {
    let c = TcpConfig {
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let mut sender = TcpSender::new(c.clone(), Instant::ZERO).unwrap();
    let mut receiver = TcpReceiver::new(c).unwrap();
    let mut per_round = Vec::new();
    for round in 0..6u64 {
        let now = Instant::from_millis(100 * round);
        per_round.push(lossless_round(&mut sender, &mut receiver, now).len());
        assert_eq!(sender.state(), CongestionState::SlowStart);
    }
    assert_eq!(per_round, [3, 6, 12, 24, 48, 96]);
    assert_eq!(sender.cwnd(), 192 * MSS);
    assert_eq!(receiver.bytes_delivered(), 189 * MSS);
}

#[test]
fn congestion_avoidance_adds_one_mss_per_rtt() {
    for increase in [
        CwndIncrease::PerAck,
        CwndIncrease::ByteCounting { limit_segments: 2 },
    ] {
        let c = TcpConfig {
            cwnd_increase: increase,
            ..config(10, Some(10))
        };
        let mut sender = TcpSender::new(c.clone(), Instant::ZERO).unwrap();
        let mut receiver = TcpReceiver::new(c).unwrap();
        let mut previous = sender.cwnd();
        for round in 0..20u64 {
            let sent = lossless_round(
                &mut sender,
                &mut receiver,
                Instant::from_millis(100 * round),
            );
            assert_eq!(sender.state(), CongestionState::CongestionAvoidance);
            let expected = 10 + round;
            let sent = sent.len() as u64;
            match increase {
                // Exactly one more segment per RTT.
                CwndIncrease::ByteCounting { .. } => assert_eq!(sent, expected),
                // cwnd lags a little behind an exact MSS per RTT.
                CwndIncrease::PerAck => assert!(
                    sent <= expected && sent + 2 >= expected,
                    "round {round}: {sent}"
                ),
            }
            let growth = sender.cwnd() - previous;
            // Byte counting adds exactly one MSS. Per-ACK counting adds
            // MSS * (ACKs per RTT) / (cwnd / MSS): a little less than one MSS
            // because only whole segments are sent.
            assert!(
                growth <= MSS && growth * 100 >= MSS * 85,
                "{increase:?}: {growth}"
            );
            previous = sender.cwnd();
        }
        let total = sender.cwnd() - 10 * MSS;
        assert!(
            (18 * MSS..=20 * MSS).contains(&total),
            "{increase:?}: {total}"
        );
    }
}

#[test]
fn fast_retransmit_on_exactly_the_third_duplicate_ack() {
    let (mut sender, mut receiver, sent) = first_window(config(10, None));
    assert_eq!(sent.len(), 10);
    let t1 = Instant::from_millis(100);
    let acks: Vec<Ack> = sent
        .iter()
        .filter(|s| s.seq != 2 * MSS)
        .filter_map(|s| receiver.on_segment(t1, s))
        .collect();
    assert_eq!(acks.len(), 9);
    assert!(acks[2..].iter().all(|a| a.cumulative == 2 * MSS));
    // Two new ACKs, then duplicates.
    sender.on_ack(t1, &acks[0]);
    sender.on_ack(t1, &acks[1]);
    // Slow start: the two new ACKs release four new segments.
    let released = std::iter::from_fn(|| sender.poll_transmit(t1)).count();
    assert_eq!(released, 4);
    let flight = sender.bytes_in_flight();
    assert_eq!(flight, 12 * MSS);
    for (i, ack) in acks[2..].iter().enumerate() {
        sender.on_ack(t1, ack);
        let out: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(t1)).collect();
        let retransmitted: Vec<&Segment> = out.iter().filter(|s| s.is_retransmission).collect();
        match i {
            0 | 1 => {
                assert!(retransmitted.is_empty(), "dup ack {}", i + 1);
                assert_ne!(sender.state(), CongestionState::FastRecovery);
            }
            2 => {
                assert_eq!(sender.state(), CongestionState::FastRecovery);
                assert_eq!(retransmitted.len(), 1);
                assert_eq!(retransmitted[0].seq, 2 * MSS);
                assert_eq!(sender.ssthresh(), flight / 2);
                assert_eq!(sender.cwnd(), flight / 2 + 3 * MSS);
            }
            _ => assert!(retransmitted.is_empty()),
        }
    }
    assert_eq!(sender.fast_retransmits(), 1);
    assert_eq!(sender.retransmissions(), 1);
}

/// Runs a CA window of 20 segments in which the first transmissions of
/// `lost` (segment indices) are dropped, and checks NewReno repairs them all
/// in one recovery with one halving and no timeout.
fn newreno_repairs(lost: &[u64]) {
    let c = config(20, Some(20));
    let mut first_send = std::collections::HashSet::new();
    let lost_seqs: Vec<u64> = lost.iter().map(|i| i * MSS).collect();
    let mut h = Harness::new(c, Duration::from_millis(100), |s: &Segment| {
        first_send.insert(s.seq) && lost_seqs.contains(&s.seq)
    });
    let mut saw_recovery = false;
    let mut min_ssthresh = u64::MAX;
    while h.sender.bytes_acked() < 40 * MSS && h.step() {
        saw_recovery |= h.sender.state() == CongestionState::FastRecovery;
        min_ssthresh = min_ssthresh.min(h.sender.ssthresh());
    }
    assert!(saw_recovery, "{lost:?}");
    assert_eq!(h.sender.timeouts(), 0, "{lost:?}");
    assert_eq!(
        h.sender.fast_retransmits(),
        1,
        "{lost:?}: one halving per window"
    );
    assert_eq!(h.sender.retransmissions(), lost.len() as u64, "{lost:?}");
    // FlightSize was 20 segments when the first loss was detected... plus
    // what the two new ACKs before it released; a single halving either way.
    assert!(
        (10 * MSS..=12 * MSS).contains(&min_ssthresh),
        "{min_ssthresh}"
    );
    // The last repair took one RTT per hole after the first.
    assert!(h.now >= Instant::from_millis(100 * (lost.len() as u64 + 1)));
}

#[test]
fn newreno_repairs_two_losses_in_one_window() {
    newreno_repairs(&[3, 11]);
}

#[test]
fn newreno_repairs_three_losses_in_one_window() {
    newreno_repairs(&[2, 7, 15]);
}

#[test]
fn newreno_partial_ack_deflates_and_retransmits_next_hole() {
    let c = config(10, Some(10));
    let mut sender = TcpSender::new(c, Instant::ZERO).unwrap();
    let t0 = Instant::ZERO;
    let sent: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(t0)).collect();
    assert_eq!(sent.len(), 10);
    // Segments 0 and 5 lost: 9 ACKs of 0 (three dup ACKs suffice).
    let t1 = Instant::from_millis(100);
    for _ in 0..3 {
        sender.on_ack(t1, &Ack::new(0));
    }
    assert_eq!(sender.state(), CongestionState::FastRecovery);
    assert_eq!(sender.poll_transmit(t1).map(|s| s.seq), Some(0));
    let inflated = sender.cwnd();
    // The retransmission of 0 is acknowledged up to the next hole at 5.
    sender.on_ack(Instant::from_millis(200), &Ack::new(5 * MSS));
    assert_eq!(sender.state(), CongestionState::FastRecovery);
    assert_eq!(sender.cwnd(), inflated - 5 * MSS + MSS);
    let retransmission = sender.poll_transmit(Instant::from_millis(200)).unwrap();
    assert_eq!(
        (retransmission.seq, retransmission.is_retransmission),
        (5 * MSS, true)
    );
    // Impatient: the timer restarted on this first partial ACK.
    assert_eq!(
        sender.next_timeout(),
        Some(Instant::from_millis(200) + sender.rto())
    );
    // Full ACK: cwnd = min(ssthresh, FlightSize + MSS); recovery ends.
    let recover = sent.last().unwrap().end();
    sender.on_ack(Instant::from_millis(300), &Ack::new(recover));
    assert_ne!(sender.state(), CongestionState::FastRecovery);
    let flight = sender.bytes_in_flight();
    assert_eq!(sender.cwnd(), sender.ssthresh().min(flight.max(MSS) + MSS));
}

#[test]
fn rto_backs_off_and_karn_discards_retransmitted_samples() {
    let c = TcpConfig {
        min_rto: Duration::from_millis(200),
        ..config(1, None)
    };
    let mut sender = TcpSender::new(c.clone(), Instant::ZERO).unwrap();
    let mut receiver = TcpReceiver::new(c).unwrap();
    lossless_round(&mut sender, &mut receiver, Instant::ZERO);
    // RFC 6298 §2.2: SRTT = R = 100 ms, RTTVAR = 50 ms, RTO = 100 + 4*50.
    assert_eq!(sender.srtt(), Some(Duration::from_millis(100)));
    assert_eq!(sender.rto(), Duration::from_millis(300));
    let samples = sender.rtt_estimator().sample_count();

    // The next window is lost entirely.
    let t = Instant::from_millis(100);
    let lost: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(t)).collect();
    assert_eq!(lost.len(), 2);
    assert_eq!(sender.next_timeout(), Some(t + Duration::from_millis(300)));
    let t1 = t + Duration::from_millis(300);
    sender.on_timeout(t1 - Duration::from_millis(1)); // early: ignored
    assert_eq!(sender.timeouts(), 0);
    sender.on_timeout(t1);
    assert_eq!(sender.timeouts(), 1);
    assert_eq!(sender.cwnd(), MSS);
    assert_eq!(sender.ssthresh(), 2 * MSS); // max(2 MSS / 2, 2 MSS)
    assert_eq!(sender.rto(), Duration::from_millis(600));
    let resent = sender.poll_transmit(t1).unwrap();
    assert_eq!((resent.seq, resent.is_retransmission), (lost[0].seq, true));
    assert!(
        sender.poll_transmit(t1).is_none(),
        "loss window is one segment"
    );

    // Lost again: the timer doubles again; ssthresh is not cut twice.
    let t2 = t1 + Duration::from_millis(600);
    assert_eq!(sender.next_timeout(), Some(t2));
    sender.on_timeout(t2);
    assert_eq!(sender.rto(), Duration::from_millis(1200));
    assert_eq!(sender.ssthresh(), 2 * MSS);
    let resent = sender.poll_transmit(t2).unwrap();
    assert_eq!(resent.seq, lost[0].seq);

    // Its ACK arrives after a long delay: Karn's rule, no sample, and the
    // backed-off RTO stays.
    sender.on_ack(t2 + Duration::from_millis(700), &Ack::new(lost[0].end()));
    assert_eq!(sender.rtt_estimator().sample_count(), samples);
    assert_eq!(sender.srtt(), Some(Duration::from_millis(100)));
    assert_eq!(sender.rto(), Duration::from_millis(1200));

    // Go-back-N resends segment 1, then new data; one ACK covering both
    // includes a resent byte, so still no sample.
    let t3 = t2 + Duration::from_millis(700);
    let burst: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(t3)).collect();
    assert!(burst[0].is_retransmission && burst[0].seq == lost[1].seq);
    let end = burst.last().unwrap().end();
    sender.on_ack(t3 + Duration::from_millis(100), &Ack::new(end));
    assert_eq!(sender.rtt_estimator().sample_count(), samples);
    // A fresh segment acknowledged alone gives a clean sample and clears
    // the backoff.
    let t4 = t3 + Duration::from_millis(100);
    let fresh = sender.poll_transmit(t4).unwrap();
    assert!(!fresh.is_retransmission);
    sender.on_ack(t4 + Duration::from_millis(100), &Ack::new(fresh.end()));
    assert!(sender.rtt_estimator().sample_count() > samples);
    assert_eq!(sender.rtt_estimator().backoff(), 0);
    assert!(sender.rto() < Duration::from_millis(1200));
}

#[test]
fn rto_is_bounded_by_max() {
    let c = TcpConfig {
        max_rto: Duration::from_secs(4),
        ..config(1, None)
    };
    let mut sender = TcpSender::new(c, Instant::ZERO).unwrap();
    let mut now = Instant::ZERO;
    sender.poll_transmit(now).unwrap();
    for expected in [2, 4, 4, 4] {
        now = sender.next_timeout().unwrap();
        sender.on_timeout(now);
        assert_eq!(sender.rto(), Duration::from_secs(expected));
        assert!(sender.poll_transmit(now).unwrap().is_retransmission);
    }
    assert_eq!(sender.timeouts(), 4);
}

#[test]
fn delayed_acks_every_second_segment_or_on_timer() {
    let c = TcpConfig::default();
    let mut r = TcpReceiver::new(c).unwrap();
    let seg = |i: u64| Segment {
        seq: i * MSS,
        len: MSS,
        is_retransmission: false,
        sent_at: Instant::ZERO,
        cwr: false,
    };
    let t = Instant::from_millis(10);
    assert_eq!(r.on_segment(t, &seg(0)), None);
    assert_eq!(r.next_timeout(), Some(t + Duration::from_millis(200)));
    assert_eq!(r.on_segment(t, &seg(1)), Some(Ack::new(2 * MSS)));
    assert_eq!(r.next_timeout(), None);
    // A lone segment is acknowledged when the 200 ms timer fires.
    assert_eq!(r.on_segment(t, &seg(2)), None);
    assert_eq!(r.on_timeout(t + Duration::from_millis(199)), None);
    assert_eq!(
        r.on_timeout(t + Duration::from_millis(200)),
        Some(Ack::new(3 * MSS))
    );
    // Out of order: immediate duplicate ACK, the data is kept.
    assert_eq!(r.on_segment(t, &seg(4)), Some(Ack::new(3 * MSS)));
    assert_eq!(r.on_segment(t, &seg(6)), Some(Ack::new(3 * MSS)));
    assert_eq!(r.bytes_out_of_order(), 2 * MSS);
    // Filling a gap: immediate ACK.
    assert_eq!(r.on_segment(t, &seg(3)), Some(Ack::new(5 * MSS)));
    assert_eq!(r.on_segment(t, &seg(5)), Some(Ack::new(7 * MSS)));
    assert_eq!(r.bytes_out_of_order(), 0);
    // Duplicate: immediate ACK.
    assert_eq!(r.on_segment(t, &seg(1)), Some(Ack::new(7 * MSS)));
    assert_eq!(r.bytes_delivered(), 7 * MSS);
}

#[test]
fn receiver_buffer_is_bounded_by_the_window() {
    let c = TcpConfig {
        receive_window: 10 * MSS,
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let mut r = TcpReceiver::new(c).unwrap();
    for i in 1..100 {
        let s = Segment {
            seq: i * MSS,
            len: MSS,
            is_retransmission: false,
            sent_at: Instant::ZERO,
            cwr: false,
        };
        assert_eq!(r.on_segment(Instant::ZERO, &s), Some(Ack::new(0)));
    }
    assert_eq!(r.bytes_out_of_order(), 9 * MSS);
}

#[test]
fn acks_for_unsent_data_are_ignored() {
    let mut sender = TcpSender::new(config(4, None), Instant::ZERO).unwrap();
    let sent: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(Instant::ZERO)).collect();
    let cwnd = sender.cwnd();
    for bogus in [sent[3].end() + 1, u64::MAX] {
        sender.on_ack(Instant::from_millis(1), &Ack::new(bogus));
    }
    assert_eq!((sender.cwnd(), sender.bytes_acked()), (cwnd, 0));
    // And nothing outstanding: duplicate ACKs of everything do nothing.
    sender.on_ack(Instant::from_millis(1), &Ack::new(sent[3].end()));
    for _ in 0..5 {
        sender.on_ack(Instant::from_millis(2), &Ack::new(sent[3].end()));
    }
    assert_eq!(sender.fast_retransmits(), 0);
}

#[test]
fn byte_limited_transfer_finishes_and_stops_the_timer() {
    let c = TcpConfig {
        bytes_to_send: Some(10 * MSS + 7),
        ..TcpConfig::default()
    };
    let mut h = Harness::new(c, Duration::from_millis(40), |_: &Segment| false);
    h.run_until(Instant::from_secs_f64(10.0));
    assert!(h.sender.is_finished());
    assert_eq!(h.receiver.bytes_delivered(), 10 * MSS + 7);
    assert_eq!(h.sender.next_timeout(), None);
    assert_eq!(h.sent.last().map(|s| s.len), Some(7));
}

#[test]
fn bad_configurations_are_rejected() {
    let bad = [
        TcpConfig {
            mss: 0,
            ..TcpConfig::default()
        },
        TcpConfig {
            dupack_threshold: 0,
            ..TcpConfig::default()
        },
        TcpConfig {
            min_rto: Duration::from_secs(61),
            ..TcpConfig::default()
        },
        TcpConfig {
            receive_window: 100,
            ..TcpConfig::default()
        },
        TcpConfig {
            delayed_ack: Some(Duration::ZERO),
            ..TcpConfig::default()
        },
        config(0, None),
    ];
    for c in bad {
        assert!(TcpSender::new(c.clone(), Instant::ZERO).is_err(), "{c:?}");
        assert!(TcpReceiver::new(c).is_err());
    }
}

#[test]
fn wire_sizes_include_headers() {
    let s = Segment {
        seq: 0,
        len: 1460,
        is_retransmission: false,
        sent_at: Instant::ZERO,
        cwr: false,
    };
    assert_eq!(s.wire_size(), 1500);
    assert_eq!(Ack::new(0).wire_size(), 40);
}

#[test]
fn impatient_timer_ends_a_long_recovery_in_a_timeout() {
    // Six holes in one window, RTO ≈ 300 ms, RTT 100 ms: the timer restarts
    // on the first partial ACK only (RFC 6582 §4 "Impatient"), so it fires
    // before the last holes are repaired one per RTT.
    let c = TcpConfig {
        min_rto: Duration::from_millis(200),
        ..config(20, Some(20))
    };
    let lost: Vec<u64> = [1, 3, 5, 7, 9, 11].iter().map(|i| i * MSS).collect();
    let mut first_send = std::collections::HashSet::new();
    let mut h = Harness::new(c, Duration::from_millis(100), |s: &Segment| {
        first_send.insert(s.seq) && lost.contains(&s.seq)
    });
    while h.sender.bytes_acked() < 40 * MSS && h.step() {}
    assert_eq!(h.sender.fast_retransmits(), 1);
    assert_eq!(h.sender.timeouts(), 1);
    assert_eq!(h.receiver.bytes_delivered(), h.sender.bytes_acked());
}

#[test]
fn rtt_estimator_follows_rfc_6298() {
    let ms = Duration::from_millis;
    let mut e = RttEstimator::new(ms(1000), ms(100), ms(60_000), ms(1));
    assert_eq!((e.rto(), e.srtt()), (ms(1000), None));
    e.on_sample(ms(200));
    // SRTT = 200, RTTVAR = 100, RTO = 200 + 4 * 100.
    assert_eq!(
        (e.srtt(), e.rttvar(), e.rto()),
        (Some(ms(200)), ms(100), ms(600))
    );
    e.on_sample(ms(120));
    // RTTVAR = 3/4 * 100 + 1/4 * 80 = 95; SRTT = 7/8 * 200 + 1/8 * 120 = 190.
    assert_eq!(
        (e.srtt(), e.rttvar(), e.rto()),
        (Some(ms(190)), ms(95), ms(570))
    );
    e.back_off();
    e.back_off();
    assert_eq!((e.rto(), e.backoff()), (ms(2280), 2));
    e.on_sample(ms(190));
    assert_eq!(e.backoff(), 0);
    assert_eq!(e.mean_sample(), Some(ms(170)));
}

#[test]
fn max_window_caps_cwnd_and_what_is_outstanding() {
    // Paper 002 §IV.A: "a maximum congestion window (cwnd) of 40 packets".
    let c = TcpConfig {
        delayed_ack: None,
        max_window: Some(40 * MSS),
        ..TcpConfig::default()
    };
    let mut sender = TcpSender::new(c.clone(), Instant::ZERO).unwrap();
    let mut receiver = TcpReceiver::new(c).unwrap();
    let per_round: Vec<usize> = (0..10u64)
        .map(|round| {
            let now = Instant::from_millis(100 * round);
            lossless_round(&mut sender, &mut receiver, now).len()
        })
        .collect();
    // Slow start doubles 3, 6, 12, 24, then the cap holds 40 a round.
    assert_eq!(per_round, [3, 6, 12, 24, 40, 40, 40, 40, 40, 40]);
    assert_eq!(sender.cwnd(), 40 * MSS);
}

#[test]
fn max_window_below_one_segment_is_refused() {
    let c = TcpConfig {
        max_window: Some(MSS - 1),
        ..TcpConfig::default()
    };
    assert_eq!(
        c.validate(),
        Err(TcpConfigError::MaxWindow {
            window: MSS - 1,
            mss: MSS
        })
    );
}
