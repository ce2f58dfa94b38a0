//! SACK: the receiver's blocks against RFC 2018 §3's examples, and the
//! sender's RFC 6675 recovery.

use std::collections::HashSet;
use std::time::Duration;

use fairstream_proto::time::Instant;

use super::{config, Harness, MSS};
use crate::tcp::{Ack, CongestionState, SackBlock, Segment, TcpConfig, TcpReceiver, HEADER_BYTES};

fn sack_config(initial_segments: u32, ssthresh_segments: Option<u64>) -> TcpConfig {
    TcpConfig {
        sack: true,
        ..config(initial_segments, ssthresh_segments)
    }
}

fn segment(seq: u64, len: u64) -> Segment {
    Segment {
        seq,
        len,
        is_retransmission: false,
        sent_at: Instant::ZERO,
        cwr: false,
    }
}

fn blocks(ack: &Ack) -> Vec<(u64, u64)> {
    ack.sack_blocks().iter().map(|b| (b.start, b.end)).collect()
}

/// RFC 2018 §3's example: "the left window edge is 5000 and that the data
/// transmitter sends a burst of 8 segments, each containing 500 data
/// bytes".
fn rfc_2018_receiver() -> TcpReceiver {
    let mut receiver = TcpReceiver::new(sack_config(10, None)).unwrap();
    let ack = receiver.on_segment(Instant::ZERO, &segment(0, 5000));
    assert_eq!(ack.map(|a| a.cumulative), Some(5000));
    receiver
}

#[test]
fn receiver_blocks_follow_rfc_2018_case_2() {
    // "Case 2: The first segment is dropped but the remaining 7 are
    // received. Upon receiving each of the last seven packets, the data
    // receiver will return a TCP ACK segment that acknowledges sequence
    // number 5000 and contains a SACK option specifying one block of
    // queued data: 5500-6000, 5500-6500, ... 5500-9000".
    let mut receiver = rfc_2018_receiver();
    for i in 1..8u64 {
        let ack = receiver
            .on_segment(Instant::ZERO, &segment(5000 + 500 * i, 500))
            .unwrap();
        assert_eq!(ack.cumulative, 5000);
        assert_eq!(blocks(&ack), [(5500, 5500 + 500 * i)]);
    }
}

#[test]
fn receiver_blocks_follow_rfc_2018_case_3() {
    // "Case 3: The 2nd, 4th, 6th, and 8th (last) segments are dropped."
    let mut receiver = rfc_2018_receiver();
    let mut ack = |seq: u64| {
        receiver
            .on_segment(Instant::ZERO, &segment(seq, 500))
            .unwrap()
    };
    let first = ack(5000);
    assert_eq!((first.cumulative, blocks(&first)), (5500, vec![]));
    let a = ack(6000);
    assert_eq!((a.cumulative, blocks(&a)), (5500, vec![(6000, 6500)]));
    let a = ack(7000);
    assert_eq!(blocks(&a), [(7000, 7500), (6000, 6500)]);
    let a = ack(8000);
    assert_eq!(blocks(&a), [(8000, 8500), (7000, 7500), (6000, 6500)]);
    // "Suppose the 4th packet is received out of order. ... the receiver
    // will send: 5500 (ACK) First Block: 6000 7500, Second Block: 8000
    // 8500".
    let a = ack(6500);
    assert_eq!(
        (a.cumulative, blocks(&a)),
        (5500, vec![(6000, 7500), (8000, 8500)])
    );
    // "Suppose the 2nd segment is received. ... 7500 (ACK) First Block:
    // 8000 8500".
    let a = ack(5500);
    assert_eq!((a.cumulative, blocks(&a)), (7500, vec![(8000, 8500)]));
}

#[test]
fn receiver_reports_at_most_three_blocks_and_none_without_sack() {
    let mut receiver = rfc_2018_receiver();
    let mut last = None;
    for i in 0..6u64 {
        last = receiver.on_segment(Instant::ZERO, &segment(6000 + 1000 * i, 500));
    }
    let last = last.unwrap();
    assert_eq!(last.sack_blocks().len(), 3);
    assert_eq!(blocks(&last)[0], (11000, 11500));
    let mut plain = TcpReceiver::new(config(10, None)).unwrap();
    let ack = plain
        .on_segment(Instant::ZERO, &segment(1000, 500))
        .unwrap();
    assert!(ack.sack.is_none());
}

#[test]
fn ack_wire_size_grows_with_the_sack_option() {
    // RFC 2018 §3: 8·n + 2 bytes of option, padded to 32-bit words.
    let mut ack = Ack::new(0);
    assert_eq!(ack.wire_size(), HEADER_BYTES);
    for (n, option) in [(1u64, 12u64), (2, 20), (3, 28)] {
        let list: Vec<SackBlock> = (0..n)
            .map(|i| SackBlock {
                start: 1000 * (i + 1),
                end: 1000 * (i + 1) + 500,
            })
            .collect();
        ack.sack = Some(list.into_boxed_slice());
        assert_eq!(ack.wire_size(), HEADER_BYTES + option, "{n} blocks");
    }
}

/// A window of 20 segments in congestion avoidance with the first
/// transmissions of `lost` dropped; returns the harness once 40 segments
/// are acknowledged.
fn recover(c: TcpConfig, lost: &[u64]) -> (u64, u64, u64, Instant) {
    let mut first_send = HashSet::new();
    let lost_seqs: Vec<u64> = lost.iter().map(|i| i * MSS).collect();
    let mut h = Harness::new(c, Duration::from_millis(100), |s: &Segment| {
        first_send.insert(s.seq) && lost_seqs.contains(&s.seq)
    });
    let mut recovery_ended = None;
    let mut was_in_recovery = false;
    let mut min_ssthresh = u64::MAX;
    while h.sender.bytes_acked() < 40 * MSS && h.step() {
        let in_recovery = h.sender.state() == CongestionState::FastRecovery;
        if was_in_recovery && !in_recovery && recovery_ended.is_none() {
            recovery_ended = Some(h.now);
        }
        was_in_recovery |= in_recovery;
        min_ssthresh = min_ssthresh.min(h.sender.ssthresh());
    }
    assert!(was_in_recovery, "{lost:?}");
    assert_eq!(h.sender.timeouts(), 0, "{lost:?}");
    assert_eq!(h.sender.fast_retransmits(), 1, "{lost:?}: one reduction");
    assert_eq!(h.sender.retransmissions(), lost.len() as u64, "{lost:?}");
    (
        min_ssthresh,
        h.sender.retransmissions(),
        h.sender.fast_retransmits(),
        recovery_ended.unwrap_or(h.now),
    )
}

#[test]
fn sack_recovery_repairs_several_losses_in_one_rtt() {
    // RFC 6675 §1: SACK lets a sender "recover more effectively when
    // multiple segments are lost from a single flight of data": every hole
    // is resent within the first RTT of recovery, where NewReno needs one
    // RTT per hole.
    for lost in [&[3u64, 11][..], &[3, 7, 11], &[2, 4, 6, 8, 10]] {
        let (ssthresh, _, _, sack_end) = recover(sack_config(20, Some(20)), lost);
        assert!((10 * MSS..=12 * MSS).contains(&ssthresh), "{ssthresh}");
        let (_, _, _, newreno_end) = recover(config(20, Some(20)), lost);
        // Loss detected at ~200 ms; SACK recovery ends one RTT later.
        assert!(
            sack_end <= Instant::from_millis(310),
            "{lost:?}: SACK recovery ended at {sack_end:?}"
        );
        assert!(newreno_end > sack_end, "{lost:?}");
    }
}

#[test]
fn sack_recovery_sends_only_while_cwnd_exceeds_pipe() {
    // Ten segments out, 0 and 1 lost, 2-9 SACKed by eight duplicate ACKs.
    let (mut sender, mut receiver, sent) = super::first_window(sack_config(10, Some(10)));
    assert_eq!(sent.len(), 10);
    let t1 = Instant::from_millis(100);
    let acks: Vec<Ack> = sent[2..]
        .iter()
        .filter_map(|s| receiver.on_segment(t1, s))
        .collect();
    let mut released = Vec::new();
    for (i, ack) in acks.iter().enumerate() {
        sender.on_ack(t1, ack);
        released.extend(std::iter::from_fn(|| sender.poll_transmit(t1)));
        if i == 2 {
            // RFC 6675 §5 step 4: DupThresh reached: ssthresh = cwnd =
            // FlightSize/2 and the first hole resent.
            assert_eq!(sender.state(), CongestionState::FastRecovery);
            assert_eq!(sender.cwnd(), 5 * MSS);
            assert_eq!(sender.ssthresh(), 5 * MSS);
        }
    }
    // Both holes resent first (rule 1: lost once three segments are SACKed
    // above them), then new data while cwnd - pipe >= 1 SMSS: pipe counts
    // the two retransmissions, so three new segments (5 - 2).
    let seqs: Vec<(u64, bool)> = released
        .iter()
        .map(|s| (s.seq, s.is_retransmission))
        .collect();
    assert_eq!(
        seqs,
        [
            (0, true),
            (MSS, true),
            (10 * MSS, false),
            (11 * MSS, false),
            (12 * MSS, false)
        ]
    );
    assert_eq!(sender.pipe(), 5 * MSS);
    // The hole at 0 is repaired: its ACK (cumulative 1 segment, partial)
    // lets pipe fall by one, and one more segment goes out.
    let ack = receiver
        .on_segment(Instant::from_millis(150), &released[0])
        .unwrap();
    assert_eq!(ack.cumulative, MSS);
    sender.on_ack(Instant::from_millis(200), &ack);
    let more: Vec<Segment> =
        std::iter::from_fn(|| sender.poll_transmit(Instant::from_millis(200))).collect();
    assert_eq!(more.len(), 1);
    assert_eq!(more[0].seq, 13 * MSS);
    // The second repair is a full ACK of RecoveryPoint: recovery ends with
    // cwnd at ssthresh (never inflated).
    let ack = receiver
        .on_segment(Instant::from_millis(150), &released[1])
        .unwrap();
    assert_eq!(ack.cumulative, 10 * MSS);
    sender.on_ack(Instant::from_millis(200), &ack);
    assert_ne!(sender.state(), CongestionState::FastRecovery);
    assert_eq!(sender.cwnd(), 5 * MSS);
}

#[test]
fn rescue_retransmission_repairs_a_lost_tail_without_a_timeout() {
    // A 20-segment transfer loses segment 5 and its last segment: nothing
    // is SACKed above the tail, so only NextSeg rule (4) resends it.
    let c = TcpConfig {
        bytes_to_send: Some(20 * MSS),
        ..sack_config(20, Some(20))
    };
    let mut first_send = HashSet::new();
    let mut h = Harness::new(c, Duration::from_millis(100), |s: &Segment| {
        first_send.insert(s.seq) && (s.seq == 5 * MSS || s.seq == 19 * MSS)
    });
    h.run_until(Instant::from_millis(1000));
    assert!(h.sender.is_finished());
    assert_eq!(h.sender.timeouts(), 0);
    assert_eq!(h.sender.retransmissions(), 2);
    // Without SACK, NewReno also repairs it, one RTT later, from the
    // partial ACK.
    let c = TcpConfig {
        bytes_to_send: Some(20 * MSS),
        ..config(20, Some(20))
    };
    let mut first_send = HashSet::new();
    let mut plain = Harness::new(c, Duration::from_millis(100), |s: &Segment| {
        first_send.insert(s.seq) && (s.seq == 5 * MSS || s.seq == 19 * MSS)
    });
    plain.run_until(Instant::from_millis(1000));
    assert!(plain.sender.is_finished());
}

#[test]
fn a_timeout_forgets_the_scoreboard_and_skips_what_is_sacked_later() {
    // Everything after the first segment is lost once, and the first
    // too: a timeout. Afterwards go-back-N resends from SND.UNA.
    let c = sack_config(4, None);
    let mut first_send = HashSet::new();
    let mut h = Harness::new(c, Duration::from_millis(100), |s: &Segment| {
        first_send.insert(s.seq) && s.seq <= MSS
    });
    // Two lost, two SACKed (two arrivals, two ACKs): fewer than
    // DupThresh, so no fast retransmit.
    for _ in 0..4 {
        h.step();
    }
    assert_eq!(h.sender.fast_retransmits(), 0);
    let sacked: Vec<(u64, u64)> = h
        .sender
        .scoreboard()
        .map(|b| b.ranges().collect())
        .unwrap_or_default();
    assert_eq!(sacked, [(2 * MSS, 4 * MSS)]);
    h.step();
    assert_eq!(h.sender.timeouts(), 1);
    assert!(h.sender.scoreboard().is_some_and(|b| b.is_empty()));
    // RFC 6675 §5.1: prior SACK information ignored after the timeout.
    h.run_until(Instant::from_millis(3000));
    assert!(h.sender.bytes_acked() > 20 * MSS);
    // Two holes resent, and the SACKed segments 2 and 3 never were.
    let resent: Vec<u64> = h
        .sent
        .iter()
        .filter(|s| s.is_retransmission)
        .map(|s| s.seq)
        .collect();
    assert!(resent.contains(&0) && resent.contains(&MSS), "{resent:?}");
}
