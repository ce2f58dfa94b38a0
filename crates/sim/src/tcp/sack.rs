//! The sender's SACK scoreboard (RFC 6675 §3-4): which bytes above the
//! cumulative acknowledgment the receiver has reported, and the questions
//! RFC 6675 asks of it — IsLost, the pipe, and where NextSeg finds a hole.

use std::collections::BTreeMap;

use super::SackBlock;

/// The bytes SACKed above `SND.UNA` (RFC 6675 §3 "Update ()"), kept as
/// disjoint, non-adjacent ranges.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// `start -> end` of every SACKed range.
    sacked: BTreeMap<u64, u64>,
}

impl Scoreboard {
    /// An empty scoreboard.
    pub fn new() -> Scoreboard {
        Scoreboard::default()
    }

    /// Whether nothing is SACKed.
    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }

    /// The SACKed ranges, lowest first.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sacked.iter().map(|(&start, &end)| (start, end))
    }

    /// Forgets everything (RFC 6675 §5.1, RFC 2018 §8: after a timeout "a
    /// TCP sender MUST 'ignore prior SACK information in determining which
    /// data to retransmit'").
    pub fn clear(&mut self) {
        self.sacked.clear();
    }

    /// RFC 6675 §3 "Update ()": records `blocks` as SACKed, clipped to
    /// `[snd_una, snd_max)` (a block for data never sent is ignored, as a
    /// peer's nonsense must be), and drops everything below `snd_una`.
    pub fn update(&mut self, snd_una: u64, snd_max: u64, blocks: &[SackBlock]) {
        self.prune(snd_una);
        for block in blocks {
            let start = block.start.max(snd_una);
            let end = block.end.min(snd_max);
            if start < end {
                super::merge_range(&mut self.sacked, start, end);
            }
        }
    }

    /// Drops what lies below the cumulative acknowledgment `snd_una`.
    pub fn prune(&mut self, snd_una: u64) {
        while let Some((&start, &end)) = self.sacked.first_key_value() {
            if start >= snd_una {
                break;
            }
            self.sacked.remove(&start);
            if end > snd_una {
                self.sacked.insert(snd_una, end);
                break;
            }
        }
    }

    /// The SACKed range holding byte `seq`, if any.
    pub fn range_containing(&self, seq: u64) -> Option<(u64, u64)> {
        self.sacked
            .range(..=seq)
            .next_back()
            .filter(|&(_, &end)| end > seq)
            .map(|(&start, &end)| (start, end))
    }

    /// The start of the first SACKed range above `seq`, if any.
    pub fn next_sacked_after(&self, seq: u64) -> Option<u64> {
        self.sacked
            .range(seq.saturating_add(1)..)
            .next()
            .map(|(&start, _)| start)
    }

    /// The first byte at or above `seq` that is not SACKed.
    pub fn first_unsacked_from(&self, seq: u64) -> u64 {
        self.range_containing(seq).map_or(seq, |(_, end)| end)
    }

    /// One past the highest SACKed byte, if any.
    pub fn highest_sacked(&self) -> Option<u64> {
        self.sacked.last_key_value().map(|(_, &end)| end)
    }

    /// SACKed bytes within `[from, to)`.
    pub fn sacked_bytes_in(&self, from: u64, to: u64) -> u64 {
        if from >= to {
            return 0;
        }
        let first = self.range_containing(from).map_or(from, |(start, _)| start);
        self.sacked
            .range(first..to)
            .map(|(&start, &end)| end.min(to).saturating_sub(start.max(from)))
            .sum()
    }

    /// RFC 6675 §4 "IsLost (SeqNum)" as a threshold: every byte that is
    /// not SACKed and lies below the returned sequence number is lost.
    ///
    /// "This routine returns whether the given sequence number is
    /// considered to be lost. The routine returns true when either
    /// DupThresh discontiguous SACKed sequences have arrived above
    /// 'SeqNum' or more than (DupThresh - 1) * SMSS bytes with sequence
    /// numbers greater than 'SeqNum' have been SACKed." Both counts only
    /// grow as SeqNum falls, so one walk down the ranges finds the point
    /// below which IsLost holds (the start of the range where either count
    /// is first met). A SACKed range counts as ⌈bytes / SMSS⌉ SACKed
    /// segments. Returns 0 when nothing is lost.
    pub fn lost_below(&self, mss: u64, dupthresh: u32) -> u64 {
        let byte_limit = u64::from(dupthresh.saturating_sub(1)).saturating_mul(mss);
        let mut bytes = 0u64;
        let mut segments = 0u64;
        for (&start, &end) in self.sacked.iter().rev() {
            bytes += end - start;
            segments += (end - start).div_ceil(mss.max(1));
            if segments >= u64::from(dupthresh) || bytes > byte_limit {
                // Enough has arrived at or above `start`; within the range
                // everything is SACKed, so every byte that is not SACKed
                // below `start` is lost.
                return start;
            }
        }
        0
    }

    /// RFC 6675 §4 "SetPipe ()": the bytes the sender estimates to be in
    /// the network. For each byte between HighACK (`snd_una`) and HighData
    /// (`snd_max`) that is not SACKed: "(a) If IsLost (S1) returns false:
    /// pipe is incremented by 1 octet. (b) If S1 <= HighRxt: Pipe is
    /// incremented by 1 octet." `high_rxt` is exclusive (one past the
    /// highest byte retransmitted).
    pub fn pipe(&self, snd_una: u64, snd_max: u64, high_rxt: u64, lost_below: u64) -> u64 {
        let unsacked = |from: u64, to: u64| {
            let to = to.min(snd_max);
            let from = from.max(snd_una);
            to.saturating_sub(from) - self.sacked_bytes_in(from, to)
        };
        unsacked(lost_below, snd_max) + unsacked(snd_una, high_rxt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn block(start: u64, end: u64) -> SackBlock {
        SackBlock { start, end }
    }

    /// Segments `n` (0-based) as SACK blocks of one MSS each.
    fn segments(n: &[u64]) -> Vec<SackBlock> {
        n.iter().map(|&i| block(i * MSS, (i + 1) * MSS)).collect()
    }

    #[test]
    fn update_merges_clips_and_prunes() {
        let mut board = Scoreboard::new();
        board.update(0, 10 * MSS, &segments(&[2, 3, 5]));
        assert_eq!(
            board.ranges().collect::<Vec<_>>(),
            [(2 * MSS, 4 * MSS), (5 * MSS, 6 * MSS)]
        );
        // Filling segment 4 joins the ranges; data beyond snd_max and below
        // snd_una is ignored.
        board.update(
            MSS,
            10 * MSS,
            &[
                block(4 * MSS, 5 * MSS),
                block(0, 500),
                block(9 * MSS, 20 * MSS),
            ],
        );
        assert_eq!(
            board.ranges().collect::<Vec<_>>(),
            [(2 * MSS, 6 * MSS), (9 * MSS, 10 * MSS)]
        );
        // A cumulative ACK into a range keeps its upper part.
        board.update(3 * MSS, 10 * MSS, &[]);
        assert_eq!(board.ranges().next(), Some((3 * MSS, 6 * MSS)));
        assert_eq!(board.sacked_bytes_in(0, 10 * MSS), 4 * MSS);
        assert_eq!(board.sacked_bytes_in(5 * MSS + 500, 9 * MSS + 100), 600);
        assert_eq!(board.first_unsacked_from(4 * MSS), 6 * MSS);
        assert_eq!(board.next_sacked_after(6 * MSS), Some(9 * MSS));
        assert_eq!(board.highest_sacked(), Some(10 * MSS));
    }

    #[test]
    fn is_lost_needs_dupthresh_segments_sacked_above() {
        let mut board = Scoreboard::new();
        // Segment 0 lost, 1 and 2 SACKed: two segments above, not lost yet
        // (2·SMSS is not "more than (DupThresh - 1) * SMSS").
        board.update(0, 10 * MSS, &segments(&[1, 2]));
        assert_eq!(board.lost_below(MSS, 3), 0);
        // A third SACKed segment: segment 0 is lost.
        board.update(0, 10 * MSS, &segments(&[3]));
        assert_eq!(board.lost_below(MSS, 3), MSS);
        // Three discontiguous SACKed segments above a hole make it lost,
        // and the holes between them are not (fewer than three above).
        let mut board = Scoreboard::new();
        board.update(0, 20 * MSS, &segments(&[2, 4, 6]));
        let lost = board.lost_below(MSS, 3);
        assert_eq!(lost, 2 * MSS);
        // Segments 0 and 1 are below the threshold; 3 and 5 are not.
        assert!(MSS < lost && 3 * MSS > lost);
        // Partial segments: more than 2·SMSS of bytes suffices.
        let mut board = Scoreboard::new();
        board.update(0, 20 * MSS, &[block(MSS, 3 * MSS + 1)]);
        assert_eq!(board.lost_below(MSS, 3), MSS);
    }

    #[test]
    fn pipe_counts_what_is_neither_sacked_nor_lost_and_retransmissions() {
        // RFC 6675 §4 SetPipe over 10 segments sent: 0 and 1 lost, 2-4
        // SACKed, 5-9 in flight.
        let mut board = Scoreboard::new();
        board.update(0, 10 * MSS, &segments(&[2, 3, 4]));
        let lost = board.lost_below(MSS, 3);
        assert_eq!(lost, 2 * MSS);
        // Nothing retransmitted: pipe = segments 5-9.
        assert_eq!(board.pipe(0, 10 * MSS, 0, lost), 5 * MSS);
        // Segment 0 retransmitted (HighRxt past it): counted once more.
        assert_eq!(board.pipe(0, 10 * MSS, MSS, lost), 6 * MSS);
        // Both retransmitted.
        assert_eq!(board.pipe(0, 10 * MSS, 2 * MSS, lost), 7 * MSS);
        // A not-lost hole retransmitted (rule 3) counts twice, as (a) and
        // (b) both hold.
        let mut board = Scoreboard::new();
        board.update(0, 10 * MSS, &segments(&[1]));
        let lost = board.lost_below(MSS, 3);
        assert_eq!(lost, 0);
        assert_eq!(board.pipe(0, 10 * MSS, MSS, lost), 10 * MSS);
    }

    mod props {
        use proptest::prelude::*;

        use super::super::Scoreboard;
        use crate::tcp::SackBlock;

        const SMSS: u64 = 10;
        const DUPTHRESH: u32 = 3;

        proptest! {
            /// The range-based IsLost threshold and pipe agree with RFC
            /// 6675 §4's per-octet definitions, and the ranges stay
            /// disjoint, non-adjacent and within [SND.UNA, SND.MAX).
            #[test]
            fn scoreboard_matches_the_per_octet_definitions(
                updates in proptest::collection::vec(
                    (0u64..50, proptest::collection::vec((0u64..420, 1u64..40), 0..4)),
                    1..20,
                ),
                high_rxt in 0u64..420,
            ) {
                let snd_max = 400u64;
                let mut board = Scoreboard::new();
                let mut una = 0u64;
                for (advance, blocks) in updates {
                    una = (una + advance).min(snd_max);
                    let blocks: Vec<SackBlock> = blocks
                        .iter()
                        .map(|&(start, len)| SackBlock { start, end: start + len })
                        .collect();
                    board.update(una, snd_max, &blocks);
                    let ranges: Vec<(u64, u64)> = board.ranges().collect();
                    for pair in ranges.windows(2) {
                        prop_assert!(pair[0].1 < pair[1].0, "{ranges:?}");
                    }
                    for &(start, end) in &ranges {
                        prop_assert!(una <= start && start < end && end <= snd_max);
                    }
                    let sacked = |b: u64| ranges.iter().any(|&(s, e)| s <= b && b < e);
                    // IsLost (b) for a byte b that is not SACKed: every
                    // range above it counts whole.
                    let is_lost = |b: u64| {
                        let above = ranges.iter().filter(|&&(s, _)| s > b);
                        let bytes: u64 = above.clone().map(|&(s, e)| e - s).sum();
                        let segments: u64 = above.map(|&(s, e)| (e - s).div_ceil(SMSS)).sum();
                        segments >= u64::from(DUPTHRESH)
                            || bytes > u64::from(DUPTHRESH - 1) * SMSS
                    };
                    let lost_below = board.lost_below(SMSS, DUPTHRESH);
                    let mut pipe = 0;
                    for b in una..snd_max {
                        if sacked(b) {
                            continue;
                        }
                        prop_assert_eq!(b < lost_below, is_lost(b), "byte {}", b);
                        pipe += u64::from(!is_lost(b)) + u64::from(b < high_rxt);
                    }
                    prop_assert_eq!(board.pipe(una, snd_max, high_rxt, lost_below), pipe);
                }
            }
        }
    }
}
