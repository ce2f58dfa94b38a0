//! Loss detection from sequence numbers with NDUPACK (RFC 5348 §5.1).
//!
//! The detector never keeps one entry per sequence number. It keeps the
//! highest sequence number received, the holes below it that are not yet
//! declared lost (*pending gaps*, at most `ndupack - 1` of them, see
//! [`LossDetector::on_packet`]), and the last [`REMEMBERED_LOST_RUNS`] runs of
//! packets declared lost, so that a late packet can still cancel its loss. A
//! peer that jumps its sequence number by 2⁶⁴ costs one entry, like any hole.
//!
//! Anything at or below the highest sequence number that is neither in a
//! pending gap nor in a remembered lost run is a duplicate (or a packet so late
//! that its loss has been forgotten) and is ignored.

use std::collections::VecDeque;

use crate::time::Instant;

/// RFC 5348 §5.1: "The loss of a packet is detected by the arrival of at least
/// NDUPACK packets with a higher sequence number than the lost packet, for
/// NDUPACK set to 3."
pub const NDUPACK: u64 = 3;

/// The largest NDUPACK a [`LossDetector`] accepts (larger values are clamped).
///
/// Bounds the number of pending gaps, which is below NDUPACK.
pub const MAX_NDUPACK: u64 = 64;

/// How many runs of lost packets the detector remembers so that a late arrival
/// can cancel its loss; older runs are forgotten and a packet from them is then
/// ignored like a duplicate.
pub const REMEMBERED_LOST_RUNS: usize = 64;

/// What the detector needs to know of a received packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMark {
    /// Its sequence number.
    pub seq: u64,
    /// When it arrived at the receiver.
    pub arrival: Instant,
    /// Its DCCP window counter (CCVal, 0..=15), if the packet carried one.
    pub window_counter: Option<u8>,
}

/// A run of consecutive sequence numbers declared lost, with the received
/// packets that bounded the hole when it opened (RFC 5348 §5.2's S_before and
/// S_after), from which the nominal arrival time of each lost packet is
/// interpolated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostRun {
    /// The first lost sequence number.
    pub first_seq: u64,
    /// The last lost sequence number (inclusive).
    pub last_seq: u64,
    /// The highest packet received before the hole opened (S_before, T_before).
    pub before: PacketMark,
    /// The packet whose arrival opened the hole (S_after, T_after).
    pub after: PacketMark,
}

impl LostRun {
    /// The number of packets in the run (at least one).
    pub fn len(&self) -> u64 {
        (self.last_seq - self.first_seq).saturating_add(1)
    }

    /// Always false: a run holds at least one packet.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether `seq` is in the run.
    pub fn contains(&self, seq: u64) -> bool {
        (self.first_seq..=self.last_seq).contains(&seq)
    }

    /// The nominal arrival time of lost packet `seq` (RFC 5348 §5.2):
    ///
    /// ```text
    /// T_loss = T_before + ( (T_after - T_before) * (S_loss - S_before)/(S_after - S_before) )
    /// ```
    ///
    /// In integer nanoseconds, rounded down; a `seq` outside
    /// `[S_before, S_after]` is clamped to it.
    pub fn nominal_arrival(&self, seq: u64) -> Instant {
        let (t_before, span_time, span_seq) = self.spans();
        let k = u128::from(seq.min(self.after.seq).saturating_sub(self.before.seq));
        // span_seq >= 2 (there is at least one lost packet between the two).
        let offset = span_time * k / span_seq;
        // offset <= span_time, which fits in u64.
        Instant::from_nanos(t_before + u64::try_from(offset).unwrap_or(u64::MAX))
    }

    /// The first packet of the run whose nominal arrival time is strictly
    /// after `threshold`, or `None` if every packet of the run arrived (in the
    /// interpolation) at or before it.
    pub fn first_seq_after(&self, threshold: Instant) -> Option<u64> {
        let (t_before, span_time, span_seq) = self.spans();
        // T(s) = t_before + floor(span_time * k / span_seq), k = s - S_before.
        // T(s) > x  <=>  floor(span_time*k/span_seq) >= x - t_before + 1
        //           <=>  span_time * k >= (x - t_before + 1) * span_seq.
        let x = threshold.as_nanos();
        let k_min = if x < t_before {
            0
        } else if span_time == 0 {
            return None;
        } else {
            let need = u128::from(x - t_before + 1).checked_mul(span_seq)?;
            need.div_ceil(span_time)
        };
        let first_k = u128::from(self.first_seq - self.before.seq);
        let last_k = u128::from(self.last_seq - self.before.seq);
        let k = k_min.max(first_k);
        if k > last_k {
            return None;
        }
        // k <= last_k, which came from a u64.
        Some(self.before.seq + u64::try_from(k).unwrap_or(u64::MAX))
    }

    /// (T_before in ns, T_after - T_before in ns, S_after - S_before).
    fn spans(&self) -> (u64, u128, u128) {
        let t_before = self.before.arrival.as_nanos();
        let t_after = self.after.arrival.as_nanos();
        (
            t_before,
            u128::from(t_after.saturating_sub(t_before)),
            u128::from(self.after.seq - self.before.seq).max(1),
        )
    }
}

/// How the detector classified an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrivalKind {
    /// The first packet ever received.
    First,
    /// A packet above every packet received so far (possibly opening a hole).
    Newest,
    /// A late packet that filled part of a hole before its loss was declared:
    /// no loss is counted for it (RFC 5348 §5.1, reordering within NDUPACK).
    Reordered,
    /// A late packet whose loss had already been declared: the loss is
    /// cancelled in the detector, and the caller should un-count it where it
    /// still can.
    Recovered,
    /// A packet received before, or too old to matter: ignored.
    Duplicate,
}

/// The result of one arrival.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// How the packet was classified.
    pub kind: ArrivalKind,
    /// Runs of packets whose loss this arrival declared, in increasing
    /// sequence order (at most NDUPACK - 1 runs).
    pub newly_lost: Vec<LostRun>,
}

/// A hole below the highest sequence number whose loss is not declared yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PendingGap {
    run: LostRun,
    /// Packets received with a higher sequence number than every packet of
    /// the gap.
    later: u64,
}

/// NDUPACK loss detection over u64 sequence numbers (RFC 5348 §5.1), with
/// bounded memory whatever the peer sends.
#[derive(Clone, Debug)]
pub struct LossDetector {
    ndupack: u64,
    highest: Option<PacketMark>,
    /// Ordered by sequence number; `later` does not increase along it.
    pending: VecDeque<PendingGap>,
    /// Declared-lost runs still remembered, ordered by sequence number.
    lost: VecDeque<LostRun>,
}

impl LossDetector {
    /// A detector declaring a packet lost once `ndupack` packets with higher
    /// sequence numbers have arrived; `ndupack` is clamped to
    /// `1..=`[`MAX_NDUPACK`] (use [`NDUPACK`]).
    pub fn new(ndupack: u64) -> Self {
        LossDetector {
            ndupack: ndupack.clamp(1, MAX_NDUPACK),
            highest: None,
            pending: VecDeque::new(),
            lost: VecDeque::new(),
        }
    }

    /// The NDUPACK in use.
    pub fn ndupack(&self) -> u64 {
        self.ndupack
    }

    /// The packet with the highest sequence number received so far.
    pub fn highest(&self) -> Option<PacketMark> {
        self.highest
    }

    /// Holes not yet declared lost (always fewer than NDUPACK).
    pub fn pending_gap_count(&self) -> usize {
        self.pending.len()
    }

    /// Sequence numbers in holes not yet declared lost.
    pub fn pending_packets(&self) -> u64 {
        self.pending
            .iter()
            .fold(0, |sum, gap| sum.saturating_add(gap.run.len()))
    }

    /// The runs of declared losses still remembered (at most
    /// [`REMEMBERED_LOST_RUNS`]), oldest first.
    pub fn remembered_lost_runs(&self) -> impl ExactSizeIterator<Item = &LostRun> + '_ {
        self.lost.iter()
    }

    /// Whether `seq` is remembered as lost.
    pub fn is_lost(&self, seq: u64) -> bool {
        self.lost.iter().any(|run| run.contains(seq))
    }

    /// The smallest sequence number in `from..=to` still remembered as lost,
    /// with the run it belongs to.
    pub fn first_lost_in(&self, from: u64, to: u64) -> Option<(u64, LostRun)> {
        self.lost
            .iter()
            .filter(|run| run.last_seq >= from && run.first_seq <= to)
            .map(|run| (run.first_seq.max(from), *run))
            .min_by_key(|&(seq, _)| seq)
    }

    /// The largest sequence number in `from..=to` still remembered as lost.
    pub fn last_lost_in(&self, from: u64, to: u64) -> Option<u64> {
        self.lost
            .iter()
            .filter(|run| run.last_seq >= from && run.first_seq <= to)
            .map(|run| run.last_seq.min(to))
            .max()
    }

    /// Takes one arriving packet and reports how it was classified and which
    /// losses it declared.
    ///
    /// Every packet above a pending gap adds one to that gap's count; a gap
    /// whose count reaches NDUPACK is declared lost. Since each pending gap
    /// is bounded above by a distinct received packet, the k-th gap from the
    /// top has a count of at least k, so fewer than NDUPACK gaps are pending.
    pub fn on_packet(&mut self, mark: PacketMark) -> Arrival {
        let kind = self.classify(mark);
        let mut newly_lost = Vec::new();
        // RFC 5348 §5.1: lost once "at least NDUPACK packets with a higher
        // sequence number than the lost packet" have arrived. Counts do not
        // increase along `pending`, so the declared gaps are a prefix.
        while let Some(gap) = self.pending.front() {
            if gap.later < self.ndupack {
                break;
            }
            let run = gap.run;
            self.pending.pop_front();
            newly_lost.push(run);
            self.remember_lost(run);
        }
        Arrival { kind, newly_lost }
    }

    fn classify(&mut self, mark: PacketMark) -> ArrivalKind {
        let Some(highest) = self.highest else {
            self.highest = Some(mark);
            return ArrivalKind::First;
        };
        if mark.seq > highest.seq {
            for gap in &mut self.pending {
                gap.later = gap.later.saturating_add(1);
            }
            if mark.seq > highest.seq + 1 {
                self.pending.push_back(PendingGap {
                    run: LostRun {
                        first_seq: highest.seq + 1,
                        last_seq: mark.seq - 1,
                        before: highest,
                        after: mark,
                    },
                    later: 1,
                });
            }
            self.highest = Some(mark);
            return ArrivalKind::Newest;
        }
        if let Some(index) = self.pending.iter().position(|g| g.run.contains(mark.seq)) {
            self.fill_pending(index, mark.seq);
            return ArrivalKind::Reordered;
        }
        if let Some(index) = self.lost.iter().position(|run| run.contains(mark.seq)) {
            // RFC 5348 §5.1: "if a packet arrives late (after NDUPACK
            // subsequent packets arrived) in TFRC, the late packet can fill
            // the hole in the TFRC reception record".
            let run = self.lost[index];
            let (lower, upper) = split(run, mark.seq);
            self.lost.remove(index);
            let mut at = index;
            if let Some(lower) = lower {
                self.lost.insert(at, lower);
                at += 1;
            }
            if let Some(upper) = upper {
                self.lost.insert(at, upper);
            }
            self.trim_lost();
            return ArrivalKind::Recovered;
        }
        ArrivalKind::Duplicate
    }

    /// A reordered packet `seq` filled part of pending gap `index`.
    fn fill_pending(&mut self, index: usize, seq: u64) {
        let gap = self.pending[index];
        // Every gap below the packet has one more packet above it.
        for below in self.pending.iter_mut().take(index) {
            below.later = below.later.saturating_add(1);
        }
        let (lower, upper) = split(gap.run, seq);
        self.pending.remove(index);
        let mut at = index;
        if let Some(run) = lower {
            let later = gap.later.saturating_add(1);
            self.pending.insert(at, PendingGap { run, later });
            at += 1;
        }
        if let Some(run) = upper {
            self.pending.insert(
                at,
                PendingGap {
                    run,
                    later: gap.later,
                },
            );
        }
    }

    fn remember_lost(&mut self, run: LostRun) {
        self.lost.push_back(run);
        self.trim_lost();
    }

    fn trim_lost(&mut self) {
        while self.lost.len() > REMEMBERED_LOST_RUNS {
            self.lost.pop_front();
        }
    }
}

/// The parts of `run` below and above `seq` (which is in it).
fn split(run: LostRun, seq: u64) -> (Option<LostRun>, Option<LostRun>) {
    let lower = (seq > run.first_seq).then(|| LostRun {
        last_seq: seq - 1,
        ..run
    });
    let upper = (seq < run.last_seq).then(|| LostRun {
        first_seq: seq + 1,
        ..run
    });
    (lower, upper)
}

#[cfg(test)]
mod tests {
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
}
