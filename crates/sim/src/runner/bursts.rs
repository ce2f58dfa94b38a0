//! Loss bursts of a multi-connection flow, by connection count (paper 001
//! Table 2: "avg. burst error length", its standard deviation and the
//! longest burst, per number of connections opened).
//!
//! A burst is a maximal run of the flow's data packets lost in the order
//! they were sent, ended by the next one that arrives. Packets resolve
//! (arrive, or are dropped by a queue, or lost on a channel) out of sending
//! order when they take different time through the network, so outcomes
//! wait in sending order until every earlier packet has one; the wait holds
//! no more than the packets in flight, and at most [`MAX_PENDING`] (a
//! packet that never resolves is then skipped, so memory stays bounded
//! whatever happens).

use std::collections::VecDeque;

/// The most packets waiting for an earlier one to resolve.
const MAX_PENDING: usize = 1 << 16;

/// The largest connection count kept apart.
const MAX_COUNT: usize = 4096;

/// The bursts that ended while one connection count was open.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct BurstTally {
    /// Bursts ended.
    pub(super) bursts: u64,
    /// Their lengths' sum, in packets.
    pub(super) packets: u64,
    /// Their lengths' squares' sum.
    pub(super) squares: f64,
    /// The longest.
    pub(super) longest: u64,
}

impl BurstTally {
    /// The mean length, its (population) standard deviation and the
    /// longest; `None` without a burst.
    pub(super) fn stats(&self) -> Option<(f64, f64, u64)> {
        if self.bursts == 0 {
            return None;
        }
        let n = self.bursts as f64;
        let mean = self.packets as f64 / n;
        let variance = (self.squares / n - mean * mean).max(0.0);
        Some((mean, variance.sqrt(), self.longest))
    }
}

/// One flow's bursts in the making.
#[derive(Clone, Debug, Default)]
pub(super) struct LossRuns {
    /// Data packets sent and not yet settled, by packet id (increasing, as
    /// ids are given in sending order), with their outcome: lost or not.
    pending: VecDeque<(u64, Option<bool>)>,
    /// The current run of lost packets.
    run: u64,
    /// Per connection count (index 0 is one connection).
    tallies: Vec<BurstTally>,
}

impl LossRuns {
    /// A data packet `id` left the sender.
    pub(super) fn sent(&mut self, id: u64) {
        if self.pending.len() >= MAX_PENDING {
            // The oldest never resolved: skip it rather than grow.
            self.pending.pop_front();
        }
        self.pending.push_back((id, None));
    }

    /// Data packet `id` arrived (`lost` false) or was lost, while
    /// `connections` were open.
    pub(super) fn resolved(&mut self, id: u64, lost: bool, connections: f64) {
        if let Ok(i) = self.pending.binary_search_by_key(&id, |&(id, _)| id) {
            if let Some(entry) = self.pending.get_mut(i) {
                entry.1 = Some(lost);
            }
        }
        while let Some(&(_, Some(lost))) = self.pending.front() {
            self.pending.pop_front();
            if lost {
                self.run += 1;
            } else if self.run > 0 {
                self.close(connections);
            }
        }
    }

    /// Ends the current run, counting it under `connections`.
    fn close(&mut self, connections: f64) {
        let run = std::mem::take(&mut self.run);
        if !connections.is_finite() {
            return;
        }
        let index = connections.round().max(1.0) as usize - 1;
        if index >= MAX_COUNT {
            return;
        }
        if self.tallies.len() <= index {
            self.tallies.resize(index + 1, BurstTally::default());
        }
        if let Some(tally) = self.tallies.get_mut(index) {
            tally.bursts += 1;
            tally.packets += run;
            tally.squares += (run * run) as f64;
            tally.longest = tally.longest.max(run);
        }
    }

    /// The tallies, index 0 being one connection.
    pub(super) fn tallies(&self) -> &[BurstTally] {
        &self.tallies
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_counted_in_sending_order_whatever_the_order_of_outcomes() {
        let mut runs = LossRuns::default();
        for id in 0..8 {
            runs.sent(id);
        }
        // Sent: 0 ok, 1 lost, 2 lost, 3 ok, 4 lost, 5 ok, 6 lost, 7 ok;
        // resolved out of order.
        runs.resolved(2, true, 2.0);
        runs.resolved(1, true, 2.0);
        runs.resolved(3, false, 2.0); // waits for 0
        assert!(runs.tallies().is_empty());
        runs.resolved(0, false, 2.0); // 0, 1, 2, 3 settle: one burst of 2
        runs.resolved(5, false, 1.0);
        runs.resolved(4, true, 1.0); // 4, 5 settle: a burst of 1 under one connection
        runs.resolved(6, true, 2.0);
        runs.resolved(7, false, 2.0);
        let tallies = runs.tallies();
        assert_eq!(tallies.len(), 2);
        assert_eq!(tallies[0].stats(), Some((1.0, 0.0, 1)));
        assert_eq!(tallies[1].bursts, 2);
        let (mean, sd, longest) = tallies[1].stats().unwrap();
        assert!((mean - 1.5).abs() < 1e-12 && (sd - 0.5).abs() < 1e-12 && longest == 2);
    }

    #[test]
    fn a_packet_that_never_resolves_does_not_grow_memory() {
        let mut runs = LossRuns::default();
        runs.sent(0); // never resolved
        for id in 1..(MAX_PENDING as u64 + 10) {
            runs.sent(id);
            runs.resolved(id, id % 3 == 0, 1.0);
        }
        assert!(runs.pending.len() < 16);
        assert!(runs.tallies()[0].bursts > 0);
    }
}
