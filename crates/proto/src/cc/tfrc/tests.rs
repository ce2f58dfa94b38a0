use super::*;
use crate::cc::equation::tfrc_rate;
use proptest::prelude::*;

const MS: Duration = Duration::from_millis(1);

fn t(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

fn feedback(echo_ms: u64, x_recv: f64, p: f64) -> Feedback {
    Feedback::Tfrc(TfrcFeedback {
        echoed_send_time: t(echo_ms),
        receiver_delay: Duration::ZERO,
        receive_rate: Rate::from_bytes_per_sec(x_recv),
        loss_event_rate: p,
        highest_seq: 0,
    })
}

/// A sender that has been sending flat out (rate-limited) until `now_ms`.
fn busy_sender(config: TfrcConfig, until_ms: u64) -> TfrcSender {
    busy_sender_sized(config, until_ms, 1460)
}

/// [`busy_sender`] with packets of `size` bytes.
fn busy_sender_sized(config: TfrcConfig, until_ms: u64, size: usize) -> TfrcSender {
    let mut s = TfrcSender::new(config, t(0));
    let mut now = t(0);
    let mut seq = 0;
    while now <= t(until_ms) {
        match s.permission(now, size) {
            SendPermission::Now => {
                s.on_packet_sent(now, seq, size);
                seq += 1;
            }
            SendPermission::At(at) => now = at.max(now + Duration::from_nanos(1)),
            SendPermission::WindowFull => unreachable!("TFRC is rate-based"),
        }
    }
    s
}

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

#[test]
fn initial_window_vectors() {
    // tfrc-notes.md / RFC 5348 §4.2: W_init = min(4s, max(2s, 4380)).
    assert_eq!(initial_window(500.0), 2000.0);
    assert_eq!(initial_window(1000.0), 4000.0);
    assert_eq!(initial_window(1460.0), 4380.0);
    assert_eq!(initial_window(9000.0), 18000.0);
}

#[test]
fn starts_at_one_packet_per_second_with_a_two_second_timer() {
    let mut s = TfrcSender::new(TfrcConfig::default(), t(0));
    assert_eq!(s.x().bytes_per_sec(), 1460.0);
    assert_eq!(s.next_timeout(), Some(t(2000)));
    assert_eq!(s.permission(t(0), 1460), SendPermission::Now);
    s.on_packet_sent(t(0), 0, 1460);
    // The next packet one second later (less t_delta = t_gran/2).
    assert_eq!(
        s.permission(t(10), 1460),
        SendPermission::At(t(1000) - MS / 2)
    );
}

#[test]
fn first_feedback_sets_rtt_and_initial_rate() {
    let mut s = busy_sender(TfrcConfig::default(), 100);
    s.on_feedback(t(100), &feedback(0, 1460.0, 0.0)).unwrap();
    assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
    // X = max(min(2X, recv_limit), W_init/R) = 4380 / 0.1.
    assert!(
        rel(s.x().bytes_per_sec(), 43_800.0) < 1e-12,
        "{}",
        s.x().bytes_per_sec()
    );
    // RTO = max(4R, 2s/X) and the nofeedback timer follows it.
    assert_eq!(s.rto(), Some(Duration::from_millis(400)));
    assert_eq!(s.next_timeout(), Some(t(500)));
}

#[test]
fn rtt_is_filtered_with_q_0_9() {
    let mut s = busy_sender(TfrcConfig::default(), 400);
    s.on_feedback(t(100), &feedback(0, 1460.0, 0.0)).unwrap();
    s.on_feedback(t(400), &feedback(200, 50_000.0, 0.0))
        .unwrap();
    // R = 0.9·0.1 + 0.1·0.2
    assert!(rel(s.rtt().unwrap().as_secs_f64(), 0.11) < 1e-9);
    // t_delay is subtracted from the sample.
    let mut s = busy_sender(TfrcConfig::default(), 100);
    let fb = TfrcFeedback {
        echoed_send_time: t(0),
        receiver_delay: Duration::from_millis(30),
        receive_rate: Rate::from_bytes_per_sec(1460.0),
        loss_event_rate: 0.0,
        highest_seq: 0,
    };
    s.on_feedback(t(100), &Feedback::Tfrc(fb)).unwrap();
    assert_eq!(s.rtt(), Some(Duration::from_millis(70)));
}

#[test]
fn bogus_echo_is_not_an_rtt_sample() {
    let mut s = busy_sender(TfrcConfig::default(), 100);
    s.on_feedback(t(100), &feedback(5000, 1e9, 0.0)).unwrap();
    assert_eq!(s.rtt(), None);
    assert_eq!(s.x().bytes_per_sec(), 1460.0);
}

#[test]
fn slow_start_doubles_at_most_once_per_rtt_and_respects_recv_limit() {
    let mut s = busy_sender(TfrcConfig::default(), 100);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    let x0 = s.x().bytes_per_sec();
    // A second feedback 50 ms later (< R): no doubling.
    s.on_feedback(t(150), &feedback(50, 1e9, 0.0)).unwrap();
    assert_eq!(s.x().bytes_per_sec(), x0);
    // One R after the last doubling: doubles.
    s.on_feedback(t(200), &feedback(100, 1e9, 0.0)).unwrap();
    assert!(rel(s.x().bytes_per_sec(), 2.0 * x0) < 1e-12);
    // The receiver got only 30 kB/s: X is held at 2·X_recv... but never below
    // the initial rate W_init/R.
    let mut s = busy_sender(TfrcConfig::default(), 1000);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    for k in 2..10 {
        s.on_feedback(t(100 * k), &feedback(100 * (k - 1), 30_000.0, 0.0))
            .unwrap();
    }
    let x = s.x().bytes_per_sec();
    assert!((43_800.0 - 1e-6..=60_000.0 + 1e-6).contains(&x), "{x}");
}

#[test]
fn with_loss_the_rate_follows_the_equation() {
    let mut s = busy_sender(TfrcConfig::default(), 300);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    s.on_feedback(t(300), &feedback(200, 1e9, 0.01)).unwrap();
    let expected = tfrc_rate(1460.0, s.rtt().unwrap(), 0.01)
        .unwrap()
        .bytes_per_sec();
    assert!(rel(s.x().bytes_per_sec(), expected) < 1e-12);
    // ...but never above recv_limit = 2·max(X_recv_set).
    let mut s = busy_sender(TfrcConfig::default(), 300);
    s.on_feedback(t(100), &feedback(0, 10_000.0, 0.0)).unwrap();
    s.on_feedback(t(300), &feedback(200, 10_000.0, 0.0001))
        .unwrap();
    assert!(
        s.x().bytes_per_sec() <= 20_000.0 + 1e-9,
        "{}",
        s.x().bytes_per_sec()
    );
}

#[test]
fn data_limited_sender_with_new_loss_caps_at_the_halved_receive_rate() {
    // A sender that never was rate-limited (it sends one packet now and then).
    let mut s = TfrcSender::new(TfrcConfig::default(), t(0));
    s.on_packet_sent(t(0), 0, 1460);
    s.on_feedback(t(100), &feedback(0, 100_000.0, 0.0)).unwrap();
    s.on_packet_sent(t(150), 1, 1460);
    // New loss: X_recv_set entries halved, X_recv·0.85, recv_limit = max(set).
    s.on_feedback(t(250), &feedback(150, 100_000.0, 1e-6))
        .unwrap();
    let x = s.x().bytes_per_sec();
    assert!(rel(x, 85_000.0) < 1e-9, "{x}");
    assert!(s.receive_limit().bytes_per_sec() <= 2.0 * 85_000.0 + 1e-6);
}

#[test]
fn nofeedback_before_any_feedback_halves() {
    let mut s = busy_sender(TfrcConfig::default(), 1999);
    s.on_timeout(t(2000));
    assert_eq!(s.x().bytes_per_sec(), 730.0);
    assert_eq!(s.next_timeout(), Some(t(4000)));
    // Never below s/t_mbi.
    for k in 3..40 {
        s.on_timeout(t(2000 * k));
    }
    assert!(rel(s.x().bytes_per_sec(), 1460.0 / 64.0) < 1e-12);
}

#[test]
fn nofeedback_with_loss_limits_by_the_receive_rate_or_the_equation() {
    // X_Bps > 2·X_recv: the set becomes {X_recv/2}, so X = X_recv.
    let mut s = busy_sender(TfrcConfig::default(), 400);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    s.on_feedback(t(300), &feedback(200, 1000.0, 0.01)).unwrap();
    let deadline = s.next_timeout().unwrap();
    let mut s2 = s.clone();
    s2.on_packet_sent(deadline - MS, 99, 1460);
    s2.on_timeout(deadline);
    assert!(
        rel(s2.x().bytes_per_sec(), 1000.0) < 1e-9,
        "{}",
        s2.x().bytes_per_sec()
    );
    // X_Bps <= 2·X_recv: limited to X_Bps/2.
    let mut s = busy_sender(TfrcConfig::default(), 400);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    s.on_feedback(t(300), &feedback(200, 1e9, 0.01)).unwrap();
    let x_bps = s.x().bytes_per_sec();
    let deadline = s.next_timeout().unwrap();
    s.on_packet_sent(deadline - MS, 99, 1460);
    s.on_timeout(deadline);
    assert!(rel(s.x().bytes_per_sec(), x_bps / 2.0) < 1e-9);
}

#[test]
fn nofeedback_when_idle_at_a_low_rate_keeps_the_rate() {
    let mut s = busy_sender(TfrcConfig::default(), 100);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    // X = W_init/R < 2·recover_rate and nothing sent since the timer was set.
    let x = s.x().bytes_per_sec();
    let deadline = s.next_timeout().unwrap();
    s.on_timeout(deadline);
    assert_eq!(s.x().bytes_per_sec(), x);
    // The same, but the sender was busy: p = 0 so the rate halves.
    let mut s = busy_sender(TfrcConfig::default(), 100);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    let deadline = s.next_timeout().unwrap();
    s.on_packet_sent(deadline - MS, 5, 1460);
    s.on_timeout(deadline);
    assert!(rel(s.x().bytes_per_sec(), x / 2.0) < 1e-12);
}

#[test]
fn pacing_spaces_packets_by_s_over_x_and_bounds_catch_up() {
    let mut s = busy_sender(TfrcConfig::default(), 100);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    // X = 43,800 B/s: t_ipi = 1460/43800 s = 33.3 ms.
    let start = t(1000); // after an idle pause
    let mut now = start;
    let mut sent = Vec::new();
    while sent.len() < 5 {
        match s.permission(now, 1460) {
            SendPermission::Now => {
                s.on_packet_sent(now, sent.len() as u64, 1460);
                sent.push(now);
            }
            SendPermission::At(at) => now = at,
            SendPermission::WindowFull => unreachable!(),
        }
    }
    // After idling, no burst: the second packet waits about one t_ipi less
    // at most the catch-up allowance.
    let gap = sent[1] - sent[0];
    let t_ipi = Duration::from_secs_f64(1460.0 / 43_800.0);
    assert!(gap + Duration::from_millis(2) >= t_ipi, "{gap:?}");
    for pair in sent.windows(2).skip(1) {
        let gap = pair[1] - pair[0];
        assert!(gap.abs_diff(t_ipi) <= MS, "{gap:?} vs {t_ipi:?}");
    }
}

#[test]
fn oscillation_prevention_slows_down_when_rtt_rises() {
    let config = TfrcConfig {
        oscillation_prevention: true,
        ..TfrcConfig::default()
    };
    let mut s = busy_sender(config, 400);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    s.on_feedback(t(300), &feedback(200, 1e9, 0.01)).unwrap();
    let before = s.allowed_rate().bytes_per_sec();
    // A sample of 400 ms against a mean near 100 ms.
    s.on_feedback(t(800), &feedback(400, 1e9, 0.01)).unwrap();
    let x = s.x().bytes_per_sec();
    let x_inst = s.allowed_rate().bytes_per_sec();
    // X_inst = X·R_sqmean/√R_sample, R_sqmean = 0.9·√0.1 + 0.1·√0.4 (then
    // the 0.1 s sample again), √R_sample = √0.4.
    let sqmean = 0.9 * (0.9 * 0.1f64.sqrt() + 0.1 * 0.1f64.sqrt()) + 0.1 * 0.4f64.sqrt();
    assert!(
        rel(x_inst, x * sqmean / 0.4f64.sqrt()) < 1e-9,
        "{x_inst} {x}"
    );
    assert!(x_inst < x && before > 0.0);
}

#[test]
fn small_packet_variant_scales_by_header_and_spaces_10ms() {
    // tfrc-notes.md: s = 200, H = 40 -> X·0.8333.
    let config = TfrcConfig {
        segment_size: 200,
        small_packet: Some(SmallPacketConfig::RFC4828),
        ..TfrcConfig::default()
    };
    let mut s = busy_sender_sized(config, 300, 200);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    s.on_feedback(t(300), &feedback(200, 1e9, 0.01)).unwrap();
    // The equation uses the nominal s = 1460.
    let nominal = tfrc_rate(1460.0, s.rtt().unwrap(), 0.01)
        .unwrap()
        .bytes_per_sec();
    assert!(rel(s.x().bytes_per_sec(), nominal * 200.0 / 240.0) < 1e-12);
    assert!(rel(s.allowed_rate().bytes_per_sec(), nominal * 200.0 / 240.0) < 1e-12);
    assert_eq!(s.name(), "tfrc-sp");
    // At least 10 ms between packets even though the rate allows ~690/s.
    let mut now = t(1000);
    let mut last: Option<Instant> = None;
    for seq in 0..20 {
        loop {
            match s.permission(now, 200) {
                SendPermission::Now => break,
                SendPermission::At(at) => now = at,
                SendPermission::WindowFull => unreachable!(),
            }
        }
        if let Some(l) = last {
            assert!(now - l >= Duration::from_millis(10), "{:?}", now - l);
        }
        s.on_packet_sent(now, seq, 200);
        last = Some(now);
    }
}

/// RFC 4828 §4.1's header allowance scales the equation's rate, not
/// recv_limit: a data-limited call of 20-byte frames (G.729 at 50 packets/s,
/// 1000 bytes/s) under CCID 4 (H = 36) keeps the rate it sends at through
/// loss. Scaling 2·X_recv by 20/56 too would give 0.71·X_recv, and each
/// feedback would cut the call below its codec's rate.
#[test]
fn small_packet_allowance_leaves_a_data_limited_call_its_receive_rate() {
    let mut s = TfrcSender::new(TfrcConfig::small_packets(20), t(0));
    let mut lowest = f64::INFINITY;
    for (seq, ms) in (0..20_000u64).step_by(20).enumerate() {
        if ms % 100 == 0 && ms >= 200 {
            // One loss event early on, then p stays put.
            let p = if ms >= 1_000 { 0.01 } else { 0.0 };
            s.on_feedback(t(ms), &feedback(ms - 100, 1000.0, p))
                .unwrap();
            if ms >= 2_000 {
                lowest = lowest.min(s.allowed_rate().bytes_per_sec());
            }
        }
        s.on_packet_sent(t(ms), seq as u64, 20);
    }
    // recv_limit = 2·X_recv = 2000 bytes/s binds (the equation's rate for
    // the nominal 1460 bytes, scaled by 20/56, is far above it).
    assert!(rel(lowest, 2000.0) < 1e-9, "{lowest}");
}

#[test]
fn per_packet_size_keeps_the_packet_rate() {
    let config = TfrcConfig {
        packet_size: PacketSizeMode::PerPacket,
        ..TfrcConfig::default()
    };
    let mut s = busy_sender(config, 300);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    s.on_feedback(t(300), &feedback(200, 1e9, 0.05)).unwrap();
    let x = s.x().bytes_per_sec();
    let t_ipi = Duration::from_secs_f64(1460.0 / x);
    let mut now = t(2000);
    let mut times = Vec::new();
    for (seq, size) in [300usize, 1460, 700, 100, 1200].into_iter().enumerate() {
        loop {
            match s.permission(now, size) {
                SendPermission::Now => break,
                SendPermission::At(at) => now = at,
                SendPermission::WindowFull => unreachable!(),
            }
        }
        s.on_packet_sent(now, seq as u64, size);
        times.push(now);
    }
    for pair in times.windows(2).skip(1) {
        assert!(
            (pair[1] - pair[0]).abs_diff(t_ipi) <= MS,
            "{:?}",
            pair[1] - pair[0]
        );
    }
}

#[test]
fn ack_vector_feedback_is_refused() {
    let mut s = TfrcSender::new(TfrcConfig::default(), t(0));
    let ack = Feedback::Ack(crate::cc::AckFeedback {
        ack_number: 1,
        runs: vec![],
    });
    assert_eq!(
        s.on_feedback(t(1), &ack),
        Err(FeedbackMismatch {
            controller: "tfrc",
            got: "Ack Vector"
        })
    );
}

#[test]
fn handshake_rtt_gives_the_initial_window() {
    let mut s = TfrcSender::new(TfrcConfig::default(), t(0));
    s.set_initial_rtt(t(50), Duration::from_millis(50));
    assert!(rel(s.x().bytes_per_sec(), 4380.0 / 0.05) < 1e-12);
}

#[derive(Debug, Clone)]
enum Op {
    Send {
        advance_ms: u64,
        size: usize,
    },
    Feedback {
        advance_ms: u64,
        echo_back_ms: u64,
        delay_ms: u64,
        x_recv: f64,
        p: f64,
    },
    Timeout,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u64..50, 1usize..1500).prop_map(|(advance_ms, size)| Op::Send { advance_ms, size }),
        (
            0u64..500,
            0u64..600,
            0u64..50,
            0.0f64..1e7,
            prop_oneof![Just(0.0), 1e-6f64..1.0]
        )
            .prop_map(
                |(advance_ms, echo_back_ms, delay_ms, x_recv, p)| Op::Feedback {
                    advance_ms,
                    echo_back_ms,
                    delay_ms,
                    x_recv,
                    p
                }
            ),
        Just(Op::Timeout),
    ]
}

proptest! {
    /// The invariants of RFC 5348 §4.3/§4.4 over random operation sequences:
    /// X >= s/t_mbi; with p > 0, X <= max(recv_limit, s/t_mbi); in slow start
    /// X at most doubles per R (or rises to the initial rate).
    #[test]
    fn sender_invariants(ops in proptest::collection::vec(op(), 1..200)) {
        let config = TfrcConfig::default();
        let mut s = TfrcSender::new(config, t(0));
        let mut now = t(0);
        let mut last_double: Option<(Instant, f64)> = None;
        for op in ops {
            match op {
                Op::Send { advance_ms, size } => {
                    now += Duration::from_millis(advance_ms);
                    if s.permission(now, size) == SendPermission::Now {
                        s.on_packet_sent(now, 0, size);
                    }
                }
                Op::Feedback { advance_ms, echo_back_ms, delay_ms, x_recv, p } => {
                    now += Duration::from_millis(advance_ms);
                    let before = s.x().bytes_per_sec();
                    let fb = TfrcFeedback {
                        echoed_send_time: now - Duration::from_millis(echo_back_ms),
                        receiver_delay: Duration::from_millis(delay_ms),
                        receive_rate: Rate::from_bytes_per_sec(x_recv),
                        loss_event_rate: p,
                        highest_seq: 0,
                    };
                    s.on_feedback(now, &Feedback::Tfrc(fb)).unwrap();
                    let x = s.x().bytes_per_sec();
                    if s.loss_event_rate() > 0.0 {
                        let limit = s.receive_limit().bytes_per_sec();
                        prop_assert!(x <= limit.max(s.segment_size() / 64.0) * (1.0 + 1e-12) || x <= before,
                            "x {} limit {}", x, limit);
                    } else if x > before * (1.0 + 1e-12) {
                        let initial = 4380.0 / s.rtt().unwrap().as_secs_f64();
                        let r = s.rtt().unwrap();
                        if let Some((when, _)) = last_double {
                            prop_assert!(now - when >= r.mul_f64(0.999) || x <= initial * (1.0 + 1e-6),
                                "doubled twice within R");
                        }
                        prop_assert!(x <= (2.0 * before).max(initial) * (1.0 + 1e-6));
                        last_double = Some((now, x));
                    }
                }
                Op::Timeout => {
                    if let Some(deadline) = s.next_timeout() {
                        now = now.max(deadline);
                        s.on_timeout(now);
                    }
                }
            }
            let x = s.x().bytes_per_sec();
            let s_min = s.segment_size() / 64.0;
            prop_assert!(x.is_finite());
            prop_assert!(x >= s_min * (1.0 - 1e-12), "x {} below s/t_mbi", x);
        }
    }
}

#[test]
fn several_flows_send_at_the_multfrc_rate() {
    use crate::cc::multfrc::MulTfrcEquation;
    let start = Instant::ZERO;
    let mut sender = TfrcSender::new(TfrcConfig::default(), start);
    sender.set_flows(2.5);
    assert_eq!(sender.flows(), 2.5);
    sender.set_flows(f64::NAN);
    assert_eq!(sender.flows(), 1.0);
    sender.set_flows(1e9);
    assert_eq!(sender.flows(), 1024.0);
    let mut single = busy_sender(TfrcConfig::default(), 100);
    let mut several = busy_sender(TfrcConfig::default(), 100);
    several.set_flows(3.0);
    // The same feedback with p = 1 % and R = 100 ms to both, as from a
    // receiver far faster than either.
    single.on_feedback(t(100), &feedback(0, 1e7, 0.01)).unwrap();
    several
        .on_feedback(t(100), &feedback(0, 1e7, 0.01))
        .unwrap();
    let ratio = several.x().bytes_per_sec() / single.x().bytes_per_sec();
    let expected = MulTfrcEquation::default()
        .rate(1460.0, Duration::from_millis(100), 0.01, 3.0, 1.0)
        .unwrap()
        .bytes_per_sec()
        / tfrc_rate(1460.0, Duration::from_millis(100), 0.01)
            .unwrap()
            .bytes_per_sec();
    assert!((ratio - expected).abs() < 1e-9, "{ratio} vs {expected}");
    assert!(ratio > 2.5 && ratio < 3.5);
}

#[test]
fn s_is_the_mean_size_sent_and_drives_the_equation() {
    // RFC 5348 §4.1: s estimated as the mean size of the packets sent, as
    // Linux CCID 3's s = (9·s + len)/10 from the first packet on.
    let mut s = TfrcSender::new(TfrcConfig::default(), t(0));
    assert_eq!(s.segment_size(), 1460.0);
    s.on_packet_sent(t(0), 0, 200);
    assert_eq!(s.segment_size(), 200.0);
    s.on_packet_sent(t(1), 1, 300);
    assert!((s.segment_size() - 210.0).abs() < 1e-9);
    for seq in 2..200 {
        s.on_packet_sent(t(seq), seq, 200);
    }
    assert!((s.segment_size() - 200.0).abs() < 1e-6);
    // The equation's rate follows the mean sent, not the configured 1460.
    s.on_feedback(t(300), &feedback(200, 1e9, 0.01)).unwrap();
    let expected = tfrc_rate(200.0, s.rtt().unwrap(), 0.01)
        .unwrap()
        .bytes_per_sec();
    assert!(rel(s.x().bytes_per_sec(), expected) < 1e-9);

    // The configured size stays in the equation when asked to.
    let config = TfrcConfig {
        packet_size: PacketSizeMode::ConfiguredMean,
        ..TfrcConfig::default()
    };
    let mut fixed = TfrcSender::new(config, t(0));
    for seq in 0..50 {
        fixed.on_packet_sent(t(seq), seq, 200);
    }
    assert_eq!(fixed.segment_size(), 1460.0);
    // TFRC-SP keeps its nominal 1460 whatever is sent (RFC 4828 §4.1).
    let mut sp = TfrcSender::new(TfrcConfig::small_packets(200), t(0));
    sp.on_packet_sent(t(0), 0, 100);
    assert_eq!(sp.segment_size(), 1460.0);
}

#[test]
fn a_target_rate_lifts_x_above_the_equation_never_below() {
    let mut s = busy_sender(TfrcConfig::default(), 300);
    s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
    s.on_feedback(t(300), &feedback(200, 1e9, 0.01)).unwrap();
    let equation = s.equation_rate().unwrap().bytes_per_sec();
    assert!(rel(s.x().bytes_per_sec(), equation) < 1e-12);
    // Above the equation: X follows the target from the next feedback.
    s.set_target_rate(Some(Rate::from_bytes_per_sec(3.0 * equation)));
    s.on_feedback(t(400), &feedback(300, 1e9, 0.01)).unwrap();
    assert!(rel(s.x().bytes_per_sec(), 3.0 * equation) < 1e-12);
    // Below the equation: no effect.
    s.set_target_rate(Some(Rate::from_bytes_per_sec(equation / 10.0)));
    s.on_feedback(t(500), &feedback(400, 1e9, 0.01)).unwrap();
    assert!(
        rel(
            s.x().bytes_per_sec(),
            s.equation_rate().unwrap().bytes_per_sec()
        ) < 1e-12
    );
    // A target that is no rate is none.
    s.set_target_rate(Some(Rate::from_bytes_per_sec(f64::NAN)));
    assert_eq!(s.target_rate(), None);
    // Never above recv_limit = 2·max(X_recv_set).
    let mut low = busy_sender(TfrcConfig::default(), 300);
    low.on_feedback(t(100), &feedback(0, 5_000.0, 0.0)).unwrap();
    low.set_target_rate(Some(Rate::from_bytes_per_sec(1e9)));
    low.on_feedback(t(300), &feedback(200, 5_000.0, 0.01))
        .unwrap();
    assert!(low.x().bytes_per_sec() <= low.receive_limit().bytes_per_sec() * (1.0 + 1e-12));
    assert!(low.x().bytes_per_sec() <= 10_000.0 * (1.0 + 1e-12));
}

#[test]
fn ecn_mark_counts_unwrap_and_never_go_back() {
    let mut s = TfrcSender::new(TfrcConfig::default(), t(0));
    assert_eq!(s.ecn_marks_reported(), 0);
    s.set_ecn_marks_reported(5);
    assert_eq!(s.ecn_marks_reported(), 5);
    // A reordered, older report does not take marks back.
    s.set_ecn_marks_reported(3);
    assert_eq!(s.ecn_marks_reported(), 5);
    // The 32-bit count wraps; the total goes on.
    s.set_ecn_marks_reported(2_000_000_000);
    s.set_ecn_marks_reported(4_000_000_000);
    s.set_ecn_marks_reported(2);
    assert_eq!(s.ecn_marks_reported(), u64::from(u32::MAX) + 3);
}

/// The experimental congestion loss event rate (CCID 248's option 198)
/// enters the equation only where the connection asked for it and only when
/// above zero; RFC 5348's p stays the one reported.
#[test]
fn the_congestion_loss_event_rate_is_used_only_when_asked() {
    let run = |used: bool, congestion_p: Option<f64>| {
        let mut s = busy_sender(TfrcConfig::default(), 300);
        s.set_congestion_loss_event_rate_used(used);
        s.on_feedback(t(100), &feedback(0, 1e9, 0.0)).unwrap();
        s.set_congestion_loss_event_rate(congestion_p);
        s.on_feedback(t(300), &feedback(200, 1e9, 0.04)).unwrap();
        (s.x().bytes_per_sec(), s.loss_event_rate())
    };
    let (plain, p) = run(false, Some(0.01));
    assert_eq!(p, 0.04);
    // Not asked: p = 0.04 makes X whatever the option says.
    assert_eq!(run(false, None).0, plain);
    // Asked: p = 0.01 makes X; p itself is still reported as 0.04.
    let (asked, p) = run(true, Some(0.01));
    assert_eq!(p, 0.04);
    let mut reference = busy_sender(TfrcConfig::default(), 300);
    reference
        .on_feedback(t(100), &feedback(0, 1e9, 0.0))
        .unwrap();
    reference
        .on_feedback(t(300), &feedback(200, 1e9, 0.01))
        .unwrap();
    assert!(rel(asked, reference.x().bytes_per_sec()) < 1e-12);
    assert!(asked > plain);
    // Asked, but no rate, zero or a rate that is no probability: p.
    for other in [None, Some(0.0), Some(1.5), Some(f64::NAN)] {
        assert_eq!(run(true, other).0, plain, "{other:?}");
    }
}
