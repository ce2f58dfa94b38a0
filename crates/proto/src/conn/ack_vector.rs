//! The receiver's record of which packets arrived, in the run-length form of
//! the Ack Vector option (RFC 4340 §11.4), for CCID 2 (RFC 4341 §3).
//!
//! Sequence numbers here are 64-bit and monotone (the connection extends the
//! 48-bit wire numbers, RFC 4340 §7.6). The history covers at most
//! [`AckHistory::capacity`] packets below the greatest received one; older state
//! is forgotten, which RFC 4340 §11.4.2 allows once the sender has seen it.

use std::collections::VecDeque;

use crate::cc::{AckFeedback, AckRun, AckState};
use crate::wire::options::{AckVector, AckVectorCell, AckVectorState};

fn wire_state(state: AckState) -> AckVectorState {
    match state {
        AckState::Received => AckVectorState::Received,
        AckState::ReceivedEcnMarked => AckVectorState::ReceivedEcnMarked,
        AckState::NotReceived => AckVectorState::NotReceived,
    }
}

/// Which packets were received, for the newest `capacity` sequence numbers.
#[derive(Clone, Debug)]
pub struct AckHistory {
    capacity: usize,
    /// The greatest sequence number received.
    head: Option<u64>,
    /// `states[i]` is the state of `head - i`.
    states: VecDeque<AckState>,
}

impl AckHistory {
    /// A history of at most `capacity` packets (at least 1).
    pub fn new(capacity: usize) -> AckHistory {
        let capacity = capacity.max(1);
        AckHistory {
            capacity,
            head: None,
            states: VecDeque::new(),
        }
    }

    /// How many packets the history may describe.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The greatest sequence number received (the Acknowledgement Number).
    pub fn ack_number(&self) -> Option<u64> {
        self.head
    }

    /// Records the arrival of `seq`, ECN-marked or not. Duplicates and packets
    /// older than the history are ignored.
    pub fn record(&mut self, seq: u64, ecn_marked: bool) {
        let state = if ecn_marked {
            AckState::ReceivedEcnMarked
        } else {
            AckState::Received
        };
        match self.head {
            None => {
                self.head = Some(seq);
                self.states.push_front(state);
            }
            Some(head) if seq > head => {
                let gap = seq - head - 1;
                // A jump beyond the capacity forgets everything before it;
                // never loop or allocate more than `capacity`.
                if gap >= self.capacity as u64 {
                    self.states.clear();
                } else {
                    for _ in 0..gap {
                        self.states.push_front(AckState::NotReceived);
                    }
                }
                self.states.push_front(state);
                self.head = Some(seq);
            }
            Some(head) => {
                let Ok(index) = usize::try_from(head - seq) else {
                    return;
                };
                if let Some(slot) = self.states.get_mut(index) {
                    if *slot == AckState::NotReceived {
                        *slot = state;
                    }
                }
            }
        }
        self.states.truncate(self.capacity);
    }

    /// The state of `seq`, if the history still covers it.
    pub fn state(&self, seq: u64) -> Option<AckState> {
        let head = self.head?;
        let index = usize::try_from(head.checked_sub(seq)?).ok()?;
        self.states.get(index).copied()
    }

    /// Forgets everything at or below `seq` (RFC 4340 §11.4.2: the sender
    /// acknowledged an Ack carrying this state, so it need not be repeated).
    pub fn forget_up_to(&mut self, seq: u64) {
        let Some(head) = self.head else { return };
        match head.checked_sub(seq) {
            // Everything is acknowledged: keep only the head.
            None | Some(0) => self.states.truncate(1),
            Some(keep) => self
                .states
                .truncate(usize::try_from(keep).unwrap_or(usize::MAX)),
        }
    }

    /// The history as Ack Vector cells, newest first, at most `max_cells`.
    /// A cell covers at most 64 packets: its run length field is 6 bits and
    /// counts the packets "minus one" (RFC 4340 §11.4).
    pub fn cells(&self, max_cells: usize) -> Vec<AckVectorCell> {
        let mut cells: Vec<AckVectorCell> = Vec::new();
        for &state in &self.states {
            let state = wire_state(state);
            match cells.last_mut() {
                Some(cell)
                    if cell.state == state && cell.run_length < AckVectorCell::MAX_RUN_LENGTH =>
                {
                    cell.run_length += 1;
                }
                _ => {
                    if cells.len() == max_cells {
                        break;
                    }
                    cells.push(AckVectorCell {
                        state,
                        run_length: 0,
                    });
                }
            }
        }
        cells
    }

    /// The Ack Vector option body for this history (at most the 253 cells
    /// one option holds).
    pub fn ack_vector(&self) -> AckVector {
        let cells: Vec<(AckVectorState, u8)> = self
            .cells(AckVector::MAX_CELLS)
            .into_iter()
            .map(|cell| (cell.state, cell.run_length))
            .collect();
        // The cells come from `cells`, whose run lengths are at most 63 and
        // whose count is at most MAX_CELLS, so this cannot fail; an empty
        // vector is the harmless fallback all the same.
        match AckVector::from_cells(false, &cells) {
            Ok(vector) => vector,
            Err(_) => AckVector::empty(),
        }
    }

    /// The history as the feedback a CCID 2 sender consumes.
    pub fn feedback(&self) -> Option<AckFeedback> {
        let ack_number = self.head?;
        let mut runs: Vec<AckRun> = Vec::new();
        for &state in &self.states {
            match runs.last_mut() {
                Some(run) if run.state == state => run.length += 1,
                _ => runs.push(AckRun { state, length: 1 }),
            }
        }
        Some(AckFeedback { ack_number, runs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::dccp::SeqNum;
    use crate::wire::options::ack_vector_to_feedback;
    use proptest::prelude::*;

    #[test]
    fn gaps_become_not_received_runs() {
        let mut h = AckHistory::new(100);
        for seq in [10, 11, 12, 15, 16] {
            h.record(seq, false);
        }
        assert_eq!(h.ack_number(), Some(16));
        assert_eq!(
            h.cells(16),
            vec![
                AckVectorCell {
                    state: AckVectorState::Received,
                    run_length: 1
                },
                AckVectorCell {
                    state: AckVectorState::NotReceived,
                    run_length: 1
                },
                AckVectorCell {
                    state: AckVectorState::Received,
                    run_length: 2
                },
            ]
        );
        // A late packet fills its hole.
        h.record(13, false);
        assert_eq!(h.state(13), Some(AckState::Received));
        assert_eq!(h.state(14), Some(AckState::NotReceived));
        // Duplicates change nothing.
        h.record(16, true);
        assert_eq!(h.state(16), Some(AckState::Received));
    }

    #[test]
    fn long_runs_split_at_64_packets() {
        let mut h = AckHistory::new(1000);
        for seq in 0..130 {
            h.record(seq, false);
        }
        let cells = h.cells(10);
        assert_eq!(
            cells.iter().map(|c| c.packets()).collect::<Vec<_>>(),
            vec![64, 64, 2]
        );
        assert_eq!(h.cells(2).len(), 2);
    }

    #[test]
    fn history_is_bounded_and_forgets_acknowledged_state() {
        let mut h = AckHistory::new(8);
        h.record(0, false);
        h.record(u64::MAX / 2, false);
        assert_eq!(
            h.feedback().unwrap().runs,
            vec![AckRun {
                state: AckState::Received,
                length: 1
            }]
        );
        for seq in u64::MAX / 2 + 1..u64::MAX / 2 + 20 {
            h.record(seq, false);
        }
        assert_eq!(
            h.feedback()
                .unwrap()
                .runs
                .iter()
                .map(|r| r.length)
                .sum::<u64>(),
            8
        );
        h.forget_up_to(u64::MAX / 2 + 15);
        assert_eq!(
            h.feedback()
                .unwrap()
                .runs
                .iter()
                .map(|r| r.length)
                .sum::<u64>(),
            4
        );
    }

    proptest! {
        #[test]
        fn cells_and_feedback_agree_with_arrivals(
            arrivals in proptest::collection::vec(0u64..300, 1..300),
            capacity in 1usize..400,
        ) {
            let mut h = AckHistory::new(capacity);
            for &seq in &arrivals {
                h.record(seq, false);
            }
            let head = *arrivals.iter().max().unwrap();
            prop_assert_eq!(h.ack_number(), Some(head));
            let fb = h.feedback().unwrap();
            let covered: u64 = fb.runs.iter().map(|r| r.length).sum();
            prop_assert!(covered as usize <= capacity);
            let from_cells = ack_vector_to_feedback(SeqNum::new(head), h.cells(usize::MAX)).unwrap();
            // The wire form splits runs at 64 packets; merge them to compare.
            let mut merged: Vec<AckRun> = Vec::new();
            for run in from_cells.runs {
                match merged.last_mut() {
                    Some(last) if last.state == run.state => last.length += run.length,
                    _ => merged.push(run),
                }
            }
            prop_assert_eq!(&merged, &fb.runs);
            let option = h.ack_vector();
            prop_assert!(option.len() <= AckVector::MAX_CELLS);
            // Every packet reported received did arrive (the history never invents).
            let mut seq = head;
            for run in &fb.runs {
                for _ in 0..run.length {
                    if run.state == AckState::Received {
                        prop_assert!(arrivals.contains(&seq));
                    }
                    seq = seq.wrapping_sub(1);
                }
            }
        }
    }
}
