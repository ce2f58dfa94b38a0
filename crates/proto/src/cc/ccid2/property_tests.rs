//! Property tests: random operation sequences, honest and hostile, keep the
//! sender's invariants.

use super::*;
use crate::cc::AckRun;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// Send up to n packets while `permission` allows.
    Send(u8),
    /// Send n packets regardless of `permission` (a misbehaving driver).
    ForceSend(u8),
    /// Non-data packets of the sender use up sequence numbers.
    SkipSequenceNumbers(u8),
    /// An honest-looking Ack Vector ending `lag` below the greatest number
    /// sent, covering the 64 numbers below it.
    Ack {
        lag: u8,
        received: u64,
        marked: u64,
    },
    /// Anything at all.
    Hostile {
        ack_number: u64,
        runs: Vec<(u8, u64)>,
    },
    Advance(u16),
    Timeout,
    ReceiverPacket {
        skip: u8,
        data: bool,
        marked: bool,
    },
    ApplicationLimited,
}

fn run_length() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0), Just(1), Just(u64::MAX), 1..300u64, any::<u64>()]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1..40u8).prop_map(Op::Send),
        1 => (1..100u8).prop_map(Op::ForceSend),
        1 => (1..5u8).prop_map(Op::SkipSequenceNumbers),
        6 => (0..8u8, any::<u64>(), any::<u64>())
            .prop_map(|(lag, received, marked)| Op::Ack { lag, received, marked: marked & marked.rotate_left(7) & marked.rotate_left(13) }),
        1 => (
            prop_oneof![any::<u64>(), Just(u64::MAX), 0..200u64],
            prop::collection::vec((0..3u8, run_length()), 0..6)
        )
            .prop_map(|(ack_number, runs)| Op::Hostile { ack_number, runs }),
        3 => (1..500u16).prop_map(Op::Advance),
        1 => Just(Op::Timeout),
        2 => (0..3u8, any::<bool>(), any::<bool>())
            .prop_map(|(skip, data, marked)| Op::ReceiverPacket { skip, data, marked }),
        1 => Just(Op::ApplicationLimited),
    ]
}

fn state(code: u8) -> AckState {
    match code % 3 {
        0 => AckState::Received,
        1 => AckState::ReceivedEcnMarked,
        _ => AckState::NotReceived,
    }
}

fn honest_vector(ack_number: u64, received: u64, marked: u64) -> AckFeedback {
    let mut runs: Vec<AckRun> = Vec::new();
    for i in 0..64u64.min(ack_number + 1) {
        let s = if received & (1 << i) == 0 {
            AckState::NotReceived
        } else if marked & (1 << i) != 0 {
            AckState::ReceivedEcnMarked
        } else {
            AckState::Received
        };
        match runs.last_mut() {
            Some(run) if run.state == s => run.length += 1,
            _ => runs.push(AckRun {
                state: s,
                length: 1,
            }),
        }
    }
    AckFeedback { ack_number, runs }
}

fn check_invariants(s: &Ccid2Sender, data_sent: u64) -> Result<(), TestCaseError> {
    let c = s.config();
    prop_assert!(s.cwnd() >= 1, "cwnd {}", s.cwnd());
    prop_assert!(s.cwnd() <= c.max_window, "cwnd {}", s.cwnd());
    prop_assert!(s.ssthresh() >= 2, "ssthresh {}", s.ssthresh());
    prop_assert!(u64::from(s.pipe()) <= data_sent);
    let outstanding = s.sent.iter().filter(|p| p.outstanding).count();
    prop_assert_eq!(s.pipe() as usize, outstanding);
    prop_assert!(s.tracked_packets() <= c.max_tracked_packets);
    prop_assert!(s.greatest_acked.len() <= c.numdupack as usize);
    prop_assert!(s
        .sent
        .iter()
        .zip(s.sent.iter().skip(1))
        .all(|(a, b)| a.seq < b.seq));
    prop_assert_eq!(s.next_timeout().is_some(), s.pipe() > 0);
    prop_assert!(s.rto() >= c.min_rto && s.rto() <= c.max_rto);
    let (lower, upper) = s.ack_ratio.bounds(s.cwnd());
    prop_assert!(
        (lower..=upper).contains(&s.ack_ratio()),
        "Ack Ratio {} outside [{lower}, {upper}] for cwnd {}",
        s.ack_ratio(),
        s.cwnd()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_for_any_operation_sequence(
        ops in prop::collection::vec(op(), 1..150),
        per_packet_slow_start in any::<bool>(),
        two_always_acceptable in any::<bool>(),
    ) {
        let config = Ccid2Config {
            max_window: 40,
            max_tracked_packets: 80,
            min_rto: Duration::from_millis(10),
            slow_start: if per_packet_slow_start {
                SlowStartIncrease::PerAckedPacket
            } else {
                SlowStartIncrease::Rfc4341
            },
            ack_ratio_two_always_acceptable: two_always_acceptable,
            ..Ccid2Config::default()
        };
        let mut now = Instant::from_millis(1);
        let mut s = Ccid2Sender::new(&config, now);
        let mut next_seq = 0u64;
        let mut data_sent = 0u64;
        let mut receiver_seq = 0u64;
        for op in ops {
            match op {
                Op::Send(n) => {
                    for _ in 0..n {
                        if s.permission(now, 1460) != SendPermission::Now {
                            break;
                        }
                        s.on_packet_sent(now, next_seq, 1460);
                        next_seq += 1;
                        data_sent += 1;
                    }
                }
                Op::ForceSend(n) => {
                    for _ in 0..n {
                        s.on_packet_sent(now, next_seq, 1460);
                        next_seq += 1;
                        data_sent += 1;
                    }
                }
                Op::SkipSequenceNumbers(n) => next_seq += u64::from(n),
                Op::Ack { lag, received, marked } => {
                    if next_seq > 0 {
                        let ack_number = (next_seq - 1).saturating_sub(u64::from(lag));
                        let fb = Feedback::Ack(honest_vector(ack_number, received | 1, marked));
                        prop_assert!(s.on_feedback(now, &fb).is_ok());
                    }
                }
                Op::Hostile { ack_number, runs } => {
                    let runs = runs
                        .into_iter()
                        .map(|(code, length)| AckRun { state: state(code), length })
                        .collect();
                    let fb = Feedback::Ack(AckFeedback { ack_number, runs });
                    prop_assert!(s.on_feedback(now, &fb).is_ok());
                }
                Op::Advance(millis) => now += Duration::from_millis(u64::from(millis)),
                Op::Timeout => {
                    if let Some(deadline) = s.next_timeout() {
                        now = now.max(deadline);
                    }
                    s.on_timeout(now);
                }
                Op::ReceiverPacket { skip, data, marked } => {
                    receiver_seq += 1 + u64::from(skip);
                    s.on_receiver_packet(
                        now,
                        ReceiverPacket { seq: receiver_seq, carries_data: data, ecn_marked: marked },
                    );
                }
                Op::ApplicationLimited => s.on_application_limited(now),
            }
            let _ = s.take_ack_ratio_change();
            check_invariants(&s, data_sent)?;
        }
    }
}
