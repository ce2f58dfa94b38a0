//! Tests of NDUPACK loss detection and of CE-marked packets.

use super::*;

fn mark(seq: u64) -> PacketMark {
    PacketMark {
        seq,
        arrival: Instant::from_millis(seq.saturating_mul(10)),
        window_counter: None,
    }
}

fn feed(detector: &mut LossDetector, seqs: &[u64]) -> Vec<(ArrivalKind, Vec<(u64, u64)>)> {
    seqs.iter()
        .map(|&seq| {
            let arrival = detector.on_packet(mark(seq));
            let runs = arrival
                .newly_lost
                .iter()
                .map(|run| (run.first_seq, run.last_seq))
                .collect();
            (arrival.kind, runs)
        })
        .collect()
}

/// RFC 5348 §5.1: lost only after NDUPACK = 3 later packets.
#[test]
fn loss_declared_after_three_later_packets() {
    let mut d = LossDetector::new(NDUPACK);
    let out = feed(&mut d, &[0, 1, 3, 4]);
    assert!(out.iter().all(|(_, lost)| lost.is_empty()), "{out:?}");
    assert_eq!(d.pending_gap_count(), 1);
    let out = feed(&mut d, &[5]);
    assert_eq!(out[0], (ArrivalKind::Newest, vec![(2, 2)]));
    assert!(d.is_lost(2));
    assert_eq!(d.pending_gap_count(), 0);
}

/// Later packets are counted, not sequence distance: a jump of 10 is one
/// packet above the hole.
#[test]
fn counts_packets_not_distance() {
    let mut d = LossDetector::new(NDUPACK);
    let out = feed(&mut d, &[0, 10, 11]);
    assert!(out.iter().all(|(_, lost)| lost.is_empty()));
    let out = feed(&mut d, &[12]);
    assert_eq!(out[0].1, vec![(1, 9)]);
}

#[test]
fn reordered_within_ndupack_is_no_loss() {
    let mut d = LossDetector::new(NDUPACK);
    let out = feed(&mut d, &[0, 1, 3, 4, 2, 5, 6, 7]);
    assert_eq!(out[4].0, ArrivalKind::Reordered);
    assert!(out.iter().all(|(_, lost)| lost.is_empty()), "{out:?}");
    assert_eq!(d.pending_gap_count(), 0);
}

/// A fill in the middle of a hole splits it; the part below the filler
/// has one more packet above it and is declared first.
#[test]
fn fill_splits_a_hole() {
    let mut d = LossDetector::new(NDUPACK);
    let out = feed(&mut d, &[0, 6, 3, 7]);
    // [1,2] has 6, 3 and 7 above it: lost. [4,5] has 6 and 7: pending.
    assert_eq!(out[3].1, vec![(1, 2)]);
    assert_eq!(d.pending_gap_count(), 1);
    let out = feed(&mut d, &[8]);
    assert_eq!(out[0].1, vec![(4, 5)]);
}

#[test]
fn duplicates_are_ignored() {
    let mut d = LossDetector::new(NDUPACK);
    let out = feed(&mut d, &[0, 1, 1, 0, 3, 3, 3, 3]);
    let kinds: Vec<_> = out.iter().map(|(kind, _)| *kind).collect();
    use ArrivalKind::*;
    assert_eq!(
        kinds,
        [First, Newest, Duplicate, Duplicate, Newest, Duplicate, Duplicate, Duplicate]
    );
    // Duplicates of 3 are not "later packets" for the hole at 2.
    assert!(!d.is_lost(2));
    assert_eq!(d.pending_gap_count(), 1);
}

#[test]
fn late_packet_recovers_a_declared_loss() {
    let mut d = LossDetector::new(NDUPACK);
    feed(&mut d, &[0, 4, 5, 6]);
    assert!(d.is_lost(1) && d.is_lost(2) && d.is_lost(3));
    let out = feed(&mut d, &[2]);
    assert_eq!(out[0].0, ArrivalKind::Recovered);
    assert!(d.is_lost(1) && !d.is_lost(2) && d.is_lost(3));
    assert_eq!(d.first_lost_in(2, 10).map(|(s, _)| s), Some(3));
    assert_eq!(d.last_lost_in(0, 2), Some(1));
    assert_eq!(feed(&mut d, &[2])[0].0, ArrivalKind::Duplicate);
}

#[test]
fn huge_jumps_cost_one_entry() {
    let mut d = LossDetector::new(NDUPACK);
    let out = feed(
        &mut d,
        &[0, u64::MAX - 3, u64::MAX - 2, u64::MAX - 1, u64::MAX],
    );
    assert_eq!(out[3].1, vec![(1, u64::MAX - 4)]);
    assert_eq!(d.remembered_lost_runs().len(), 1);
    assert_eq!(
        d.remembered_lost_runs().next().map(LostRun::len),
        Some(u64::MAX - 4)
    );
    // Nothing can be above u64::MAX: the next one is a duplicate.
    assert_eq!(feed(&mut d, &[u64::MAX])[0].0, ArrivalKind::Duplicate);
}

#[test]
fn remembered_runs_are_bounded() {
    let mut d = LossDetector::new(NDUPACK);
    let mut seq = 0;
    for _ in 0..(3 * REMEMBERED_LOST_RUNS) {
        seq += 2; // every other packet lost
        d.on_packet(mark(seq));
    }
    assert!(d.remembered_lost_runs().len() <= REMEMBERED_LOST_RUNS);
    assert!(d.pending_gap_count() < NDUPACK as usize);
    // The oldest losses are forgotten: their late arrival is ignored.
    assert_eq!(d.on_packet(mark(1)).kind, ArrivalKind::Duplicate);
}

/// RFC 5348 §5.2 interpolation of nominal arrival times.
#[test]
fn nominal_arrival_interpolates() {
    let run = LostRun {
        first_seq: 11,
        last_seq: 19,
        before: mark(10),
        after: PacketMark {
            seq: 20,
            arrival: Instant::from_millis(300),
            window_counter: None,
        },
    };
    // T_before = 100 ms, T_after = 300 ms: 20 ms per sequence number.
    assert_eq!(run.nominal_arrival(11), Instant::from_millis(120));
    assert_eq!(run.nominal_arrival(15), Instant::from_millis(200));
    assert_eq!(run.first_seq_after(Instant::from_millis(200)), Some(16));
    assert_eq!(run.first_seq_after(Instant::from_millis(199)), Some(15));
    assert_eq!(run.first_seq_after(Instant::from_millis(50)), Some(11));
    assert_eq!(run.first_seq_after(Instant::from_millis(280)), None);
}

fn feed_ecn(detector: &mut LossDetector, packets: &[(u64, bool)]) -> Vec<Vec<(u64, u64, bool)>> {
    packets
        .iter()
        .map(|&(seq, ce)| {
            detector
                .on_packet_ecn(mark(seq), ce)
                .newly_lost
                .iter()
                .map(|run| (run.first_seq, run.last_seq, run.is_marked()))
                .collect()
        })
        .collect()
}

/// RFC 5348 §5: a CE-marked packet is reported as a loss of its own, at once
/// when no hole lies below it; its nominal arrival is its own arrival.
#[test]
fn a_marked_packet_is_reported_at_once_without_holes_below() {
    let mut d = LossDetector::new(NDUPACK);
    let out = feed_ecn(&mut d, &[(0, false), (1, true), (2, false)]);
    assert_eq!(out, vec![vec![], vec![(1, 1, true)], vec![]]);
    assert!(d.is_lost(1));
    let run = LostRun::marked(mark(1));
    assert_eq!(run.nominal_arrival(1), mark(1).arrival);
    assert_eq!(run.len(), 1);
    // A duplicate of the marked packet neither cancels nor repeats it.
    assert_eq!(d.on_packet_ecn(mark(1), false).kind, ArrivalKind::Duplicate);
    assert!(d.is_lost(1));
}

/// Marks wait for the holes below them, so that losses and marks come out
/// in sequence order.
#[test]
fn a_mark_above_a_pending_hole_waits_for_it() {
    let mut d = LossDetector::new(NDUPACK);
    let out = feed_ecn(&mut d, &[(0, false), (2, true), (3, false)]);
    assert_eq!(out[1..], [vec![], vec![]]);
    assert_eq!(d.held_marks(), 1);
    let out = feed_ecn(&mut d, &[(4, false)]);
    assert_eq!(out[0], vec![(1, 1, false), (2, 2, true)]);
    assert_eq!(d.held_marks(), 0);
    // Filled holes release the mark too, without a loss.
    let mut d = LossDetector::new(NDUPACK);
    let out = feed_ecn(&mut d, &[(0, false), (2, true), (1, false)]);
    assert_eq!(out[2], vec![(2, 2, true)]);
}

/// A late packet whose loss was declared, arriving marked, stays counted.
#[test]
fn a_marked_late_packet_keeps_its_loss() {
    let mut d = LossDetector::new(NDUPACK);
    feed_ecn(&mut d, &[(0, false), (2, false), (3, false), (4, false)]);
    assert!(d.is_lost(1));
    let arrival = d.on_packet_ecn(mark(1), true);
    assert_eq!(arrival.kind, ArrivalKind::Recovered);
    assert!(arrival.newly_lost.is_empty());
    assert!(d.is_lost(1));
    assert_eq!(d.on_packet_ecn(mark(1), false).kind, ArrivalKind::Duplicate);
}

/// Whatever a peer marks, the held marks stay bounded.
#[test]
fn held_marks_are_bounded() {
    let mut d = LossDetector::new(MAX_NDUPACK);
    d.on_packet_ecn(mark(0), false);
    // A hole at 1, then marked packets above it, each also reordered below.
    for seq in 3..(3 + 4 * MAX_HELD_MARKS as u64) {
        d.on_packet_ecn(mark(seq), true);
        assert!(d.held_marks() <= MAX_HELD_MARKS);
    }
    assert!(d.remembered_lost_runs().len() <= REMEMBERED_LOST_RUNS);
}
