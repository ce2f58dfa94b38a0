//! Property tests: random ACK, timer and poll sequences, bogus ACKs included.

use std::time::Duration;

use fairstream_proto::time::Instant;
use proptest::prelude::*;

use super::{config, MSS};
use crate::tcp::{
    Ack, CongestionControl, CongestionState, CubicConfig, CwndIncrease, SackBlock, Segment,
    TcpReceiver, TcpSender, MAX_SACK_BLOCKS,
};

#[derive(Clone, Debug)]
enum Op {
    Poll,
    /// ACK at a segment boundary chosen among what could exist (may exceed
    /// what was sent).
    AckSegment(u64),
    /// Any ACK value at all.
    AckRaw(u64),
    /// An ACK at a segment boundary with ECN-Echo (RFC 3168 §6.1.2).
    AckEce(u64),
    /// A duplicate-or-new ACK with one SACK block of `len` segments from
    /// segment `start` (any value, sent or not).
    AckSack(u64, u64, u64),
    Advance(u64),
    Timeout,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Poll),
        4 => (0u64..400).prop_map(Op::AckSegment),
        1 => any::<u64>().prop_map(Op::AckRaw),
        2 => (0u64..400).prop_map(Op::AckEce),
        4 => (0u64..400, 0u64..420, 0u64..6).prop_map(|(a, s, l)| Op::AckSack(a, s, l)),
        2 => (0u64..2_000).prop_map(Op::Advance),
        1 => Just(Op::Timeout),
    ]
}

proptest! {
    #[test]
    fn sender_invariants_hold_under_any_ack_sequence(
        ops in proptest::collection::vec(op(), 1..400),
        abc in any::<bool>(),
        ecn in any::<bool>(),
        sack in any::<bool>(),
        cubic in any::<bool>(),
    ) {
        let mut c = config(3, None);
        c.ecn = ecn;
        c.sack = sack;
        if cubic {
            c.congestion_control = CongestionControl::Cubic(CubicConfig::default());
        }
        if abc {
            c.cwnd_increase = CwndIncrease::ByteCounting { limit_segments: 2 };
        }
        let mut sender = TcpSender::new(c, Instant::ZERO).unwrap();
        let mut now = Instant::ZERO;
        let mut acked = 0;
        for op in ops {
            match op {
                Op::Poll => {
                    let flight_before = sender.bytes_in_flight();
                    if let Some(s) = sender.poll_transmit(now) {
                        prop_assert!(s.len > 0 && s.len <= MSS);
                        prop_assert!(s.seq >= sender.bytes_acked());
                        // RFC 3168 §6.1.2: CWR only from an ECN sender, only
                        // on new data.
                        prop_assert!(!s.cwr || (ecn && !s.is_retransmission));
                        // New data only when the window allows it; a fast or
                        // partial-ACK retransmission may exceed a deflated
                        // window but never adds to the flight.
                        if sack && sender.state() == CongestionState::FastRecovery {
                            // RFC 6675 §5 (C): only while cwnd - pipe >= 1
                            // SMSS (the first retransmission aside).
                            prop_assert!(
                                sender.pipe() <= sender.cwnd() + MSS,
                                "pipe {} cwnd {}", sender.pipe(), sender.cwnd()
                            );
                        } else if sender.bytes_in_flight() > flight_before {
                            prop_assert!(sender.bytes_in_flight() <= sender.cwnd());
                        }
                    }
                }
                Op::AckSegment(i) => sender.on_ack(now, &Ack::new(i * MSS)),
                Op::AckRaw(a) => sender.on_ack(now, &Ack::new(a)),
                Op::AckEce(i) => sender.on_ack(now, &Ack { cumulative: i * MSS, ece: true, sack: None }),
                Op::AckSack(i, start, len) => {
                    let block = SackBlock { start: start * MSS, end: (start + len) * MSS };
                    let ack = Ack { sack: Some(vec![block].into_boxed_slice()), ..Ack::new(i * MSS) };
                    sender.on_ack(now, &ack);
                }
                Op::Advance(ms) => now += Duration::from_millis(ms),
                Op::Timeout => {
                    if let Some(t) = sender.next_timeout() {
                        now = now.max(t);
                        sender.on_timeout(now);
                    }
                }
            }
            prop_assert!(sender.cwnd() >= MSS);
            prop_assert!(sender.ssthresh() >= 2 * MSS);
            // At most one reduction per echo, none without ECN.
            prop_assert!(sender.ecn_reductions() <= sender.ece_acks());
            prop_assert!(ecn || sender.ecn_reductions() == 0);
            prop_assert!(sender.bytes_acked() >= acked, "SND.UNA never goes back");
            acked = sender.bytes_acked();
            prop_assert!(sender.rto() >= Duration::from_secs(1));
            prop_assert!(sender.rto() <= Duration::from_secs(60));
            if sender.bytes_in_flight() > 0 || sender.state() == CongestionState::FastRecovery {
                // Outstanding data always has a timer (RFC 6298 §5.1).
                let outstanding = sender.bytes_in_flight() > 0;
                prop_assert!(!outstanding || sender.next_timeout().is_some());
            }
        }
    }

    #[test]
    fn receiver_never_panics_and_acks_monotonically(
        segments in proptest::collection::vec((0u64..200, 0u64..3000, 0u64..500), 1..300),
        delayed in any::<bool>(),
        sack in any::<bool>(),
    ) {
        let mut c = config(3, None);
        c.receive_window = 50 * MSS;
        c.sack = sack;
        if delayed {
            c.delayed_ack = Some(Duration::from_millis(200));
        }
        let mut receiver = TcpReceiver::new(c).unwrap();
        let mut now = Instant::ZERO;
        let mut last = 0;
        for (index, len, advance_ms) in segments {
            now += Duration::from_millis(advance_ms);
            let s = Segment { seq: index * MSS, len, is_retransmission: false, sent_at: now, cwr: false };
            let acks = [receiver.on_segment(now, &s), receiver.on_timeout(now)];
            for ack in acks.into_iter().flatten() {
                prop_assert!(ack.cumulative >= last);
                last = ack.cumulative;
                // RFC 2018: blocks above the cumulative ACK, disjoint, at
                // most MAX_SACK_BLOCKS, none without SACK.
                let blocks = ack.sack_blocks();
                prop_assert!(sack || blocks.is_empty());
                prop_assert!(blocks.len() <= MAX_SACK_BLOCKS);
                for (i, b) in blocks.iter().enumerate() {
                    prop_assert!(b.start > ack.cumulative && b.end > b.start);
                    for other in &blocks[i + 1..] {
                        prop_assert!(other.end < b.start || other.start > b.end);
                    }
                }
            }
            prop_assert!(receiver.bytes_out_of_order() <= 50 * MSS);
            prop_assert!(receiver.bytes_delivered() >= last);
        }
    }
}
