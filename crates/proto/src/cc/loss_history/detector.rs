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
//!
//! ECN (RFC 5348 §5 measures loss events from lost or marked packets alike;
//! RFC 4342 §9 for CCID 3): a packet that arrives marked Congestion
//! Experienced ([`LossDetector::on_packet_ecn`]) is reported among the
//! losses as a run of its own ([`LostRun::marked`]), in sequence order with
//! the holes below it: it waits until no hole below it is pending, so that
//! losses and marks reach the loss-event grouping in sequence order, as
//! losses alone do. A marked packet is remembered like a declared loss, but
//! it arrived, so nothing cancels it.

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

/// How many CE-marked packets wait at most for the holes below them to be
/// resolved (each packet above the lowest pending hole counts towards its
/// NDUPACK, so fewer than [`MAX_NDUPACK`] wait in practice); a mark beyond
/// this bound is not counted.
pub const MAX_HELD_MARKS: usize = 2 * MAX_NDUPACK as usize;

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
    /// The run that stands for one packet that arrived marked Congestion
    /// Experienced (RFC 5348 §5: counted as a loss). S_before and S_after
    /// are the packet itself, so its nominal arrival time (§5.2) is its
    /// real arrival, and its window counter is its own.
    pub fn marked(packet: PacketMark) -> LostRun {
        LostRun {
            first_seq: packet.seq,
            last_seq: packet.seq,
            before: packet,
            after: packet,
        }
    }

    /// Whether this run is a CE-marked packet that arrived
    /// ([`LostRun::marked`]) rather than a hole: a hole's S_before is below
    /// its first packet.
    pub fn is_marked(&self) -> bool {
        self.before.seq == self.first_seq
    }

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
    /// Runs of packets whose loss this arrival declared, and CE-marked
    /// packets it released ([`LostRun::is_marked`]), in increasing sequence
    /// order.
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
    /// Declared-lost runs and released marks still remembered, ordered by
    /// sequence number.
    lost: VecDeque<LostRun>,
    /// CE-marked packets waiting for the pending gaps below them, ordered by
    /// sequence number.
    held_marks: VecDeque<PacketMark>,
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
            held_marks: VecDeque::new(),
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

    /// CE-marked packets waiting for the holes below them.
    pub fn held_marks(&self) -> usize {
        self.held_marks.len()
    }

    /// Whether `seq` is remembered as lost (or CE-marked).
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
        self.on_packet_ecn(mark, false)
    }

    /// [`on_packet`](Self::on_packet) for a packet that arrived marked
    /// Congestion Experienced if `ce_marked`: it is reported among
    /// [`Arrival::newly_lost`] as a [`LostRun::marked`] once no hole below
    /// it is pending (at once if none is). A marked packet whose loss had
    /// been declared stays counted: it is classified
    /// [`ArrivalKind::Recovered`], and the caller must not cancel its loss.
    pub fn on_packet_ecn(&mut self, mark: PacketMark, ce_marked: bool) -> Arrival {
        let kind = self.classify(mark);
        if ce_marked {
            match kind {
                ArrivalKind::First | ArrivalKind::Newest | ArrivalKind::Reordered => {
                    if self.held_marks.len() < MAX_HELD_MARKS {
                        let at = self.held_marks.partition_point(|m| m.seq < mark.seq);
                        self.held_marks.insert(at, mark);
                    }
                }
                ArrivalKind::Recovered => {
                    // Its loss was counted; it stays counted, now as a mark
                    // (which a duplicate cannot cancel).
                    let at = self.lost.partition_point(|run| run.first_seq < mark.seq);
                    self.lost.insert(at, LostRun::marked(mark));
                    self.trim_lost();
                }
                ArrivalKind::Duplicate => {}
            }
        }
        let mut newly_lost = Vec::new();
        // RFC 5348 §5.1: lost once "at least NDUPACK packets with a higher
        // sequence number than the lost packet" have arrived. Counts do not
        // increase along `pending`, so the declared gaps are a prefix.
        while let Some(gap) = self.pending.front() {
            if gap.later < self.ndupack {
                break;
            }
            newly_lost.push(gap.run);
            self.pending.pop_front();
        }
        // Marks below every pending gap are released, in order with the
        // gaps just declared (all of which lie below the remaining gaps).
        let limit = self.pending.front().map(|gap| gap.run.first_seq);
        while let Some(&held) = self.held_marks.front() {
            if limit.is_some_and(|lowest| held.seq > lowest) {
                break;
            }
            self.held_marks.pop_front();
            newly_lost.push(LostRun::marked(held));
        }
        newly_lost.sort_by_key(|run| run.first_seq);
        for run in &newly_lost {
            self.remember_lost(*run);
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
            if self.lost[index].is_marked() {
                // A CE-marked packet arrived before: this is a duplicate.
                return ArrivalKind::Duplicate;
            }
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
mod tests;
