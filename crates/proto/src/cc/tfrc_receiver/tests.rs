use super::*;
use crate::cc::loss_history::IntervalKind;

const R100: Duration = Duration::from_millis(100);

fn ms(millis: u64) -> Instant {
    Instant::from_millis(millis)
}

/// A sender of `size` bytes every `spacing`, carrying R = `rtt` and, if
/// `quarter_rtt` is set, a window counter growing by one per `quarter_rtt`.
#[derive(Clone, Copy)]
struct Sender {
    size: usize,
    spacing: Duration,
    rtt: Option<Duration>,
    quarter_rtt: Option<Duration>,
}

impl Sender {
    fn every_10ms() -> Sender {
        Sender {
            size: 1_000,
            spacing: Duration::from_millis(10),
            rtt: Some(R100),
            quarter_rtt: None,
        }
    }

    fn time(&self, seq: u64) -> Instant {
        Instant::ZERO + self.spacing * u32::try_from(seq).unwrap()
    }

    fn packet(&self, seq: u64) -> DataPacket {
        let send_time = self.time(seq);
        DataPacket {
            seq,
            size_bytes: self.size,
            send_time,
            rtt_estimate: self.rtt,
            window_counter: self
                .quarter_rtt
                .map(|q| ((send_time.as_nanos() / duration_nanos(q)) % 16) as u8),
        }
    }

    /// Delivers `seqs` (arrival = send time, no network delay) and polls
    /// feedback after each packet; returns the feedback sent.
    fn deliver(
        &self,
        rx: &mut TfrcReceiver,
        seqs: impl IntoIterator<Item = u64>,
    ) -> Vec<(Instant, TfrcFeedback)> {
        let mut sent = Vec::new();
        for seq in seqs {
            let now = self.time(seq);
            rx.on_data_packet(now, &self.packet(seq));
            if let Some(feedback) = rx.poll_feedback(now) {
                sent.push((now, feedback));
            }
        }
        sent
    }
}

fn receiver(config: TfrcReceiverConfig) -> TfrcReceiver {
    TfrcReceiver::new(config, Instant::ZERO)
}

fn all_but(range: std::ops::Range<u64>, lost: &[u64]) -> Vec<u64> {
    range.filter(|seq| !lost.contains(seq)).collect()
}

/// RFC 5348 §6.3 and §6.2: feedback at the first packet, then once per R.
#[test]
fn feedback_once_per_rtt() {
    let sender = Sender::every_10ms();
    let mut rx = receiver(TfrcReceiverConfig::default());
    let sent = sender.deliver(&mut rx, [0]);
    assert_eq!(sent.len(), 1);
    let first = &sent[0].1;
    assert_eq!(first.receive_rate, Rate::ZERO); // §6.3: X_recv = 0
    assert_eq!(first.loss_event_rate, 0.0);
    assert_eq!(
        (first.highest_seq, first.receiver_delay),
        (0, Duration::ZERO)
    );
    assert_eq!(rx.next_timeout(), None); // nothing arrived since

    sender.deliver(&mut rx, [1]);
    assert_eq!(rx.next_timeout(), Some(ms(100)));
    assert!(rx.poll_feedback(ms(99)).is_none());
    let sent = sender.deliver(&mut rx, 2..=10);
    assert_eq!(sent.len(), 1);
    let (at, feedback) = &sent[0];
    assert_eq!(*at, ms(100));
    // Packets 1..=10 over the 100 ms since the first feedback.
    assert!((feedback.receive_rate.bytes_per_sec() - 100_000.0).abs() < 1e-6);
    assert_eq!(feedback.echoed_send_time, ms(100));

    // One feedback per R over a second of data.
    let sent = sender.deliver(&mut rx, 11..=110);
    let times: Vec<Instant> = sent.iter().map(|(at, _)| *at).collect();
    assert_eq!(times, (2..=11).map(|i| ms(i * 100)).collect::<Vec<_>>());
}

/// RFC 5348 §6.2: no feedback without new data; the timer keeps its phase.
#[test]
fn no_feedback_without_data() {
    let sender = Sender::every_10ms();
    let mut rx = receiver(TfrcReceiverConfig::default());
    sender.deliver(&mut rx, 0..=10); // feedback at 0 and 100 ms
    assert_eq!(rx.next_timeout(), None);
    for t in [150, 200, 300, 540] {
        assert!(rx.poll_feedback(ms(t)).is_none());
    }
    // Data again at 550 ms: the quiet expiries at 200 … 500 ms restarted
    // the timer, so the next one is at 600 ms.
    sender.deliver(&mut rx, [55]);
    assert_eq!(rx.next_timeout(), Some(ms(600)));
    assert!(rx.poll_feedback(ms(599)).is_none());
    let feedback = rx.poll_feedback(ms(600)).unwrap();
    assert_eq!(feedback.receiver_delay, Duration::from_millis(50)); // t_delay
    assert_eq!(feedback.echoed_send_time, ms(550));
    assert!(rx.poll_feedback(ms(700)).is_none());
    // Duplicates are not new data.
    rx.on_data_packet(ms(710), &sender.packet(55));
    assert_eq!(rx.next_timeout(), None);
    assert!(rx.poll_feedback(ms(800)).is_none());
}

/// RFC 5348 §6.1: feedback at once when p increases.
#[test]
fn expedited_feedback_when_p_increases() {
    let sender = Sender::every_10ms();
    let mut rx = receiver(TfrcReceiverConfig::default());
    let sent = sender.deliver(&mut rx, all_but(0..28, &[25]));
    assert_eq!(sent.last().map(|(at, _)| *at), Some(ms(200)));
    assert_eq!(rx.loss_event_rate(), 0.0);
    // 28 is the third packet above 25: loss declared at 280 ms, 80 ms before
    // the timer.
    let sent = sender.deliver(&mut rx, [28]);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, ms(280));
    assert!(sent[0].1.loss_event_rate > 0.0);
    // Then the normal schedule again.
    assert!(sender.deliver(&mut rx, [29, 30]).is_empty());
    assert_eq!(rx.next_timeout(), Some(ms(380)));
}

/// RFC 5348 §6.3: no RTT estimate yet, feedback for every packet.
#[test]
fn feedback_for_every_packet_without_rtt() {
    let sender = Sender {
        rtt: None,
        ..Sender::every_10ms()
    };
    let mut rx = receiver(TfrcReceiverConfig::default());
    assert_eq!(sender.deliver(&mut rx, 0..20).len(), 20);
    assert_eq!(rx.rtt(), None);
    // Once a packet carries R, once per R.
    let with_rtt = Sender::every_10ms();
    assert_eq!(with_rtt.deliver(&mut rx, 20..40).len(), 1);
}

fn interval_summary(rx: &TfrcReceiver) -> Vec<(IntervalKind, u64, u64)> {
    rx.loss_intervals()
        .map(|i| (i.kind(), i.start_seq(), i.lost_packets()))
        .collect()
}

/// RFC 5348 §5.2: a loss within R of the start of the loss event (by
/// interpolated arrival time) belongs to it; "If T_old + R >= T_new, then
/// S_new is part of the existing loss event."
#[test]
fn loss_events_grouped_by_interpolation() {
    let sender = Sender::every_10ms();
    let mut rx = receiver(TfrcReceiverConfig::default());
    // T(20) = 200 ms; T(30) = 300 ms = T(20) + R: same event; T(31) = 310 ms:
    // a new one.
    sender.deliver(&mut rx, all_but(0..60, &[20, 30, 31]));
    use IntervalKind::*;
    assert_eq!(
        interval_summary(&rx),
        [(Open, 31, 1), (Closed, 20, 2), (Synthetic, 20, 0)]
    );
    let closed = rx.loss_intervals().nth(1).copied().unwrap();
    assert_eq!((closed.length(), closed.loss_length()), (11, 11));
    assert_eq!(
        rx.loss_intervals().next().map(LossInterval::length),
        Some(29)
    );

    // One hole two RTTs long makes several events.
    let mut rx = receiver(TfrcReceiverConfig::default());
    let lost: Vec<u64> = (100..125).collect();
    sender.deliver(&mut rx, all_but(0..200, &lost));
    assert_eq!(
        interval_summary(&rx),
        [
            (Open, 122, 3),
            (Closed, 111, 11),
            (Closed, 100, 11),
            (Synthetic, 100, 0)
        ]
    );
}

/// RFC 4342 §10.2: with window counters, a loss belongs to the current
/// event while the counter distance is at most 4.
#[test]
fn loss_events_grouped_by_window_counter() {
    // R carried is 50 ms, but the counter grows once per 25 ms (R = 100 ms
    // for the counter): the two rules disagree on losses 60 ms apart.
    let sender = Sender {
        rtt: Some(Duration::from_millis(50)),
        quarter_rtt: Some(Duration::from_millis(25)),
        ..Sender::every_10ms()
    };
    let lost = [20, 26];
    let mut by_counter = receiver(TfrcReceiverConfig::default());
    sender.deliver(&mut by_counter, all_but(0..60, &lost));
    use IntervalKind::*;
    // Counter of 19 (190 ms) is 7, of 25 (250 ms) 10: distance 3.
    assert_eq!(
        interval_summary(&by_counter),
        [(Open, 20, 2), (Synthetic, 20, 0)]
    );
    let mut by_time = receiver(TfrcReceiverConfig {
        loss_event_grouping: LossEventGrouping::Interpolation,
        ..TfrcReceiverConfig::default()
    });
    sender.deliver(&mut by_time, all_but(0..60, &lost));
    assert_eq!(
        interval_summary(&by_time),
        [(Open, 26, 1), (Closed, 20, 1), (Synthetic, 20, 0)]
    );

    // Distance 5 (counter of 30 at 300 ms is 12): a new event.
    let mut rx = receiver(TfrcReceiverConfig::default());
    sender.deliver(&mut rx, all_but(0..60, &[20, 31]));
    assert_eq!(
        interval_summary(&rx),
        [(Open, 31, 1), (Closed, 20, 1), (Synthetic, 20, 0)]
    );

    // Four RTTs later the counter has wrapped to distance 0 (59 at 590 ms:
    // counter 23 = 7 mod 16), but packets in between were more than 4 past:
    // a new event.
    let mut rx = receiver(TfrcReceiverConfig::default());
    sender.deliver(&mut rx, all_but(0..100, &[20, 60]));
    assert_eq!(
        interval_summary(&rx),
        [(Open, 60, 1), (Closed, 20, 1), (Synthetic, 20, 0)]
    );
}

/// Without R carried, the receiver estimates R from window counters.
#[test]
fn rtt_from_window_counters() {
    let sender = Sender {
        rtt: None,
        quarter_rtt: Some(Duration::from_millis(25)),
        ..Sender::every_10ms()
    };
    let mut rx = receiver(TfrcReceiverConfig::default());
    sender.deliver(&mut rx, 0..100);
    let rtt = rx.rtt().unwrap();
    assert!(
        rtt >= Duration::from_millis(90) && rtt <= Duration::from_millis(110),
        "{rtt:?}"
    );
}

/// A sender with less than a packet per quarter RTT skips counter values:
/// every 125 ms at R = 100 ms the counter goes 0, 5, 10, 15, 4, … and the
/// last packet with c - 4 is five RTTs back, not one. No such pair is a
/// sample; where the counter did advance by 4 (every 30 ms it goes 0, 1, 2,
/// 3, 4, 6, …), R is measured.
#[test]
fn skipped_window_counters_do_not_inflate_the_rtt() {
    let sparse = Sender {
        rtt: None,
        quarter_rtt: Some(Duration::from_millis(25)),
        spacing: Duration::from_millis(125),
        ..Sender::every_10ms()
    };
    let mut rx = receiver(TfrcReceiverConfig::default());
    sparse.deliver(&mut rx, 0..40);
    assert_eq!(rx.rtt(), None, "five RTTs taken for one");
    let uneven = Sender {
        spacing: Duration::from_millis(30),
        ..sparse
    };
    let mut rx = receiver(TfrcReceiverConfig::default());
    uneven.deliver(&mut rx, 0..200);
    let rtt = rx.rtt().unwrap();
    assert!(
        rtt >= Duration::from_millis(80) && rtt <= Duration::from_millis(125),
        "{rtt:?}"
    );
}

/// RFC 5348 §6.3.1, tfrc-notes.md: X_recv = 100 kB/s, s = 1460, R = 0.1 s
/// → f(p) = 0.146 → p = 0.022122 (the inverse is exact; 0.0234 is a ±5 %
/// answer).
#[test]
fn first_interval_vector() {
    let p = first_interval_loss_event_rate(Rate::from_bytes_per_sec(100_000.0), 1460.0, R100);
    assert!((p - 0.022_122_29).abs() < 1e-7, "{p}");
    assert!((crate::cc::equation::f(p) - 0.146).abs() < 1e-12);
    // Degenerate inputs give a valid p.
    assert_eq!(
        first_interval_loss_event_rate(Rate::from_bytes_per_sec(1.0), 1460.0, R100),
        1.0
    );
    let p = first_interval_loss_event_rate(Rate::ZERO, 0.0, Duration::ZERO);
    assert!(p > 0.0 && p <= 1.0);
    let p = first_interval_loss_event_rate(Rate::INFINITY, 1460.0, R100);
    assert!(p > 0.0 && p <= 1.0);
}

/// The same vector end to end: 5000-byte packets every 50 ms (100 kB/s),
/// R = 100 ms, s = 1460 configured; the loss of 21 is declared at 24, when
/// the receive rate of the last RTT (packets 23 and 24) is exactly 100 kB/s.
#[test]
fn first_interval_from_the_receive_rate() {
    let sender = Sender {
        size: 5_000,
        spacing: Duration::from_millis(50),
        ..Sender::every_10ms()
    };
    let x_recv = Rate::from_bytes_per_sec(100_000.0);
    for (size, s) in [
        (FirstIntervalPacketSize::Fixed(1460), 1460.0),
        (FirstIntervalPacketSize::MeanReceived, 5000.0),
    ] {
        let mut rx = receiver(TfrcReceiverConfig {
            first_interval_packet_size: size,
            ..TfrcReceiverConfig::default()
        });
        sender.deliver(&mut rx, all_but(0..25, &[21]));
        let expected = first_interval_loss_event_rate(x_recv, s, R100);
        let p = rx.loss_event_rate();
        assert!((p - expected).abs() < 1e-9 * expected, "{p} vs {expected}");
        let synthetic = rx.loss_intervals().nth(1).copied().unwrap();
        assert_eq!(synthetic.kind(), IntervalKind::Synthetic);
        assert!((synthetic.length() as f64 - 1.0 / p).abs() <= 0.5);
        if s == 1460.0 {
            assert!((p - 0.022_122).abs() < 1e-6, "{p}");
        }
    }
}

/// RFC 4828 §3 at the receiver: a loss event with several losses less than
/// 2R before the next counts its losses.
#[test]
fn small_packet_counts_losses_in_short_intervals() {
    let sender = Sender::every_10ms();
    // Event A: 100, 101, 102 (3 losses); event B at 115, 150 ms later (< 2R).
    let lost = [100, 101, 102, 115];
    let run = |small_packet| {
        let mut rx = receiver(TfrcReceiverConfig {
            small_packet,
            ..TfrcReceiverConfig::default()
        });
        sender.deliver(&mut rx, all_but(0..200, &lost));
        rx
    };
    let (plain, sp) = (run(false), run(true));
    let summary = |rx: &TfrcReceiver| -> Vec<(u64, u64)> {
        rx.loss_intervals()
            .map(|i| (i.length(), i.lost_packets()))
            .collect()
    };
    assert_eq!(summary(&plain)[..2], [(85, 1), (15, 3)]);
    assert_eq!(summary(&plain), summary(&sp));
    // I_0 = 85 long and old; I_1 = 15 becomes 15/3 = 5 with TFRC-SP:
    // I_tot1 = 5 + I_2, I_tot0 = 85 + 5 instead of 85 + 15.
    let synthetic = sp
        .loss_intervals()
        .nth(2)
        .map(LossInterval::length)
        .unwrap() as f64;
    let expected_plain = 2.0 / (85.0 + 15.0_f64).max(15.0 + synthetic);
    let expected_sp = 2.0 / (85.0 + 5.0_f64).max(5.0 + synthetic);
    let tolerance = 1.0 / synthetic; // the synthetic length is rounded here
    assert!((plain.loss_event_rate() - expected_plain).abs() < tolerance * expected_plain);
    assert!((sp.loss_event_rate() - expected_sp).abs() < tolerance * expected_sp);
    assert!(sp.loss_event_rate() > plain.loss_event_rate());
}

/// RFC 4828 §3: a young I_0 (less than 2R) does not lower p.
#[test]
fn small_packet_ignores_a_young_open_interval() {
    // One packet per ms; a large configured s keeps the synthetic interval
    // short, so that I_0 soon outweighs it.
    let sender = Sender {
        spacing: Duration::from_millis(1),
        ..Sender::every_10ms()
    };
    let config = TfrcReceiverConfig {
        first_interval_packet_size: FirstIntervalPacketSize::Fixed(100_000),
        ..TfrcReceiverConfig::default()
    };
    let mut plain = receiver(config);
    let mut sp = receiver(TfrcReceiverConfig {
        small_packet: true,
        ..config
    });
    let lost = [1_000, 1_500];
    // I_0 = 150 packets, 149 ms old: I_tot0 = 150 + 500 > I_tot1 = 500 + I_2.
    sender.deliver(&mut plain, all_but(0..1_650, &lost));
    sender.deliver(&mut sp, all_but(0..1_650, &lost));
    let synthetic = plain
        .loss_intervals()
        .nth(2)
        .map(LossInterval::length)
        .unwrap();
    assert!(synthetic < 150, "{synthetic}");
    assert!((plain.loss_event_rate() - 2.0 / 650.0).abs() < 1e-12);
    assert!(sp.loss_event_rate() > plain.loss_event_rate());
    // Two RTTs after the loss event the open interval counts again.
    sender.deliver(&mut plain, 1_650..1_720);
    sender.deliver(&mut sp, 1_650..1_720);
    assert_eq!(sp.loss_event_rate(), plain.loss_event_rate());
}

/// RFC 5348 §5.5 at the receiver: a long loss-free period lowers p faster
/// with discounting.
#[test]
fn history_discounting_lowers_p_after_a_long_clean_period() {
    let sender = Sender::every_10ms();
    let lost: Vec<u64> = (1..=6).map(|i| i * 50).collect();
    let run = |history_discounting, until| {
        let mut rx = receiver(TfrcReceiverConfig {
            history_discounting,
            ..TfrcReceiverConfig::default()
        });
        sender.deliver(&mut rx, all_but(0..until, &lost));
        rx.loss_event_rate()
    };
    // Shortly after the last loss: no difference.
    assert_eq!(run(false, 320), run(true, 320));
    // 2000 clean packets later: I_0 ≫ 2·I_mean, the older intervals count less.
    let (plain, discounted) = (run(false, 2_300), run(true, 2_300));
    assert!(discounted < plain, "{discounted} vs {plain}");
}

/// RFC 5348 §5.1: a late packet cancels its loss; §6: feedback at once when
/// that removes a loss event.
#[test]
fn late_packet_cancels_the_loss() {
    let sender = Sender::every_10ms();
    let mut rx = receiver(TfrcReceiverConfig::default());
    sender.deliver(&mut rx, all_but(0..25, &[20]));
    assert!(rx.loss_event_rate() > 0.0);
    assert_eq!(rx.loss_intervals().len(), 2);
    let late = sender.packet(20);
    rx.on_data_packet(ms(251), &late);
    assert_eq!(rx.loss_event_rate(), 0.0);
    assert_eq!(rx.loss_intervals().len(), 0);
    let feedback = rx.poll_feedback(ms(251)).unwrap();
    assert_eq!(feedback.loss_event_rate, 0.0);
    assert_eq!(feedback.echoed_send_time, ms(200)); // the late packet's
}

#[test]
fn config_validation() {
    assert_eq!(TfrcReceiverConfig::default().validate(), Ok(()));
    let bad = |config: TfrcReceiverConfig| config.validate().unwrap_err().to_string();
    let default = TfrcReceiverConfig::default();
    assert_eq!(
        bad(TfrcReceiverConfig {
            ndupack: 0,
            ..default
        }),
        "ndupack = 0 is outside 1..=64"
    );
    assert_eq!(
        bad(TfrcReceiverConfig {
            loss_intervals: 28,
            ..default
        }),
        "loss_intervals = 28 is outside 1..=27"
    );
    assert!(bad(TfrcReceiverConfig {
        first_interval_packet_size: FirstIntervalPacketSize::Fixed(0),
        ..default
    })
    .contains("at least 1 byte"));
    assert!(bad(TfrcReceiverConfig {
        default_rtt: Duration::ZERO,
        ..default
    })
    .contains("default_rtt"));
    // new() clamps instead.
    let rx = receiver(TfrcReceiverConfig {
        ndupack: 0,
        loss_intervals: 1_000,
        ..default
    });
    assert_eq!((rx.config().ndupack, rx.config().loss_intervals), (1, 27));
}

/// Nothing a peer puts in a packet makes the receiver panic.
#[test]
fn absurd_packets_do_not_panic() {
    let mut rx = receiver(TfrcReceiverConfig::default());
    let packets = [
        (0, 0, Some(Duration::MAX), Some(255)),
        (u64::MAX, usize::MAX, Some(Duration::ZERO), Some(16)),
        (1, usize::MAX, None, None),
        (u64::MAX - 1, 1, Some(Duration::from_nanos(1)), Some(3)),
        (5, 0, None, Some(0)),
        (u64::MAX, 0, None, None),
    ];
    for (i, (seq, size_bytes, rtt_estimate, window_counter)) in packets.into_iter().enumerate() {
        let now = Instant::from_nanos(if i % 2 == 0 { u64::MAX } else { 0 });
        rx.on_data_packet(
            now,
            &DataPacket {
                seq,
                size_bytes,
                send_time: Instant::MAX,
                rtt_estimate,
                window_counter,
            },
        );
        let _ = rx.poll_feedback(now);
        let _ = rx.next_timeout();
        let p = rx.loss_event_rate();
        assert!((0.0..=1.0).contains(&p));
    }
}

/// RFC 5348 §5 / RFC 4342 §9: CE-marked packets make the same loss events
/// and the same j as the same packets lost, mixed or not; the marked packets
/// still count as received.
#[test]
fn marks_count_like_losses() {
    let sender = Sender::every_10ms();
    let mut dropped = receiver(TfrcReceiverConfig::default());
    sender.deliver(&mut dropped, all_but(0..60, &[20, 30, 31]));
    let deliver_marked = |marked: &[u64], lost: &[u64]| {
        let mut rx = receiver(TfrcReceiverConfig::default());
        for seq in all_but(0..60, lost) {
            let now = sender.time(seq);
            rx.on_data_packet_ecn(now, &sender.packet(seq), marked.contains(&seq));
            rx.poll_feedback(now);
        }
        rx
    };
    let marked = deliver_marked(&[20, 30, 31], &[]);
    let mixed = deliver_marked(&[30], &[20, 31]);
    use IntervalKind::*;
    let expected = [(Open, 31, 1), (Closed, 20, 2), (Synthetic, 20, 0)];
    assert_eq!(interval_summary(&dropped), expected);
    assert_eq!(interval_summary(&marked), expected);
    assert_eq!(interval_summary(&mixed), expected);
    // j, the losses per loss event (option 196 of CCID 248): (1 + 2) / 2.
    for rx in [&dropped, &marked, &mixed] {
        assert_eq!(rx.mean_lost_packets(), Some(1.5));
    }
    assert!(marked.loss_event_rate() > 0.0);
    // X_recv counted the marked packets: 60 packets, not 57.
    assert_eq!(marked.mean_packet_size(), Some(1_000.0));
    assert_eq!(
        marked.highest_seq(),
        dropped.highest_seq(),
        "both saw packet 59"
    );
}

/// The experimental congestion loss event rate (CCID 248's option 198):
/// marks always count; a loss declared within `channel_loss_memory` RTTs of
/// a mark is set aside from it (and only from it: p is RFC 5348's); a loss
/// after the memory has run out counts again. Off by default.
#[test]
fn losses_on_a_marking_path_are_set_aside_from_the_congestion_rate_only() {
    let sender = Sender::every_10ms(); // R = 100 ms carried
    let config = TfrcReceiverConfig {
        channel_loss_memory: Some(4), // 400 ms
        ..TfrcReceiverConfig::default()
    };
    let mut rx = receiver(config);
    let marked = [100];
    // Lost: 120 and 130 (declared at 1.23 and 1.33 s, within 400 ms of the
    // mark at 1.00 s), 400 (3 s later: counted again).
    let lost = [120, 130, 400];
    for seq in all_but(0..600, &lost) {
        let now = sender.time(seq);
        rx.on_data_packet_ecn(now, &sender.packet(seq), marked.contains(&seq));
        rx.poll_feedback(now);
    }
    assert_eq!(rx.losses_set_aside(), 2);
    let p = rx.loss_event_rate();
    let p_c = rx.congestion_loss_event_rate().unwrap();
    assert!(p_c > 0.0 && p_c < p, "p {p}, congestion p {p_c}");
    // The same run with the two set-aside losses delivered gives the same
    // congestion history, and its p is the congestion p.
    let mut same = receiver(TfrcReceiverConfig::default());
    for seq in all_but(0..600, &[400]) {
        let now = sender.time(seq);
        same.on_data_packet_ecn(now, &sender.packet(seq), marked.contains(&seq));
        same.poll_feedback(now);
    }
    assert!(
        (same.loss_event_rate() - p_c).abs() < 1e-12,
        "{} vs {p_c}",
        same.loss_event_rate()
    );
    // Off by default; and a receiver that never saw a mark sets nothing aside.
    let mut plain = receiver(TfrcReceiverConfig::default());
    sender.deliver(&mut plain, all_but(0..600, &lost));
    assert_eq!(plain.congestion_loss_event_rate(), None);
    assert_eq!(plain.losses_set_aside(), 0);
    let mut unmarked = receiver(config);
    sender.deliver(&mut unmarked, all_but(0..600, &lost));
    assert_eq!(unmarked.losses_set_aside(), 0);
    assert_eq!(
        unmarked.congestion_loss_event_rate(),
        Some(unmarked.loss_event_rate())
    );
    // The memory is validated.
    let bad = TfrcReceiverConfig {
        channel_loss_memory: Some(0),
        ..TfrcReceiverConfig::default()
    };
    assert_eq!(
        bad.validate(),
        Err(ReceiverConfigError::ChannelLossMemory(0))
    );
}
