//! Bounded per-packet records: what this endpoint sent (for RTT samples from
//! acknowledgement numbers) and how the peer's sequence numbers map to data
//! packets (for the TFRC receiver, whose loss detection counts data packets).

use std::collections::VecDeque;

use crate::time::Instant;

/// One packet this endpoint sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SentRecord {
    /// Its extended sequence number.
    pub(crate) seq: u64,
    /// When it was sent.
    pub(crate) at: Instant,
    /// Its CCVal.
    pub(crate) ccval: u8,
    /// Whether it carried application data.
    pub(crate) data: bool,
}

/// The most recent packets sent, by increasing sequence number.
#[derive(Clone, Debug)]
pub(crate) struct SendHistory {
    records: VecDeque<SentRecord>,
    capacity: usize,
}

impl SendHistory {
    /// A history of at most `capacity` packets (at least 1).
    pub(crate) fn new(capacity: usize) -> SendHistory {
        SendHistory {
            records: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Raises the capacity (it never shrinks).
    pub(crate) fn grow_to(&mut self, capacity: usize) {
        self.capacity = self.capacity.max(capacity);
    }

    /// Records a packet; sequence numbers must increase.
    pub(crate) fn push(&mut self, record: SentRecord) {
        if self.records.len() >= self.capacity {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    /// The record of `seq`, if still held.
    pub(crate) fn get(&self, seq: u64) -> Option<SentRecord> {
        let index = self.records.binary_search_by_key(&seq, |r| r.seq).ok()?;
        self.records.get(index).copied()
    }

    /// How many records are held.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }
}

/// What the mapper knows of one sequence number.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// Its data packet index, if it is (or is assumed to be) a data packet.
    data_index: Option<u64>,
    received: bool,
}

/// Maps the peer's sequence numbers, which count every packet, to a dense
/// count of data packets, which is what the TFRC receiver's loss detection
/// expects (RFC 5348 §5.1 numbers data packets).
///
/// A sequence number never seen is assumed to be a lost data packet, unless
/// an NDP Count option (RFC 4340 §7.7) says that the packets just before a
/// received one were non-data packets. So a lost non-data packet that no NDP
/// Count covers is counted as a lost data packet: the error is towards
/// seeing more loss, never less.
#[derive(Clone, Debug)]
pub(crate) struct DataSeqMapper {
    /// Slots for `base ..= base + slots.len() - 1`.
    slots: VecDeque<Slot>,
    base: u64,
    next_index: u64,
    capacity: usize,
    received_data: u64,
}

impl DataSeqMapper {
    /// A mapper that remembers at most `capacity` sequence numbers.
    pub(crate) fn new(capacity: usize) -> DataSeqMapper {
        DataSeqMapper {
            slots: VecDeque::new(),
            base: 0,
            next_index: 0,
            capacity: capacity.max(1),
            received_data: 0,
        }
    }

    fn highest(&self) -> Option<u64> {
        (self.base + self.slots.len() as u64)
            .checked_sub(1)
            .filter(|_| !self.slots.is_empty())
    }

    /// A packet with extended sequence number `seq` arrived; `ndp` is its NDP
    /// Count. Returns the data index to give the TFRC receiver, or `None` for
    /// a non-data packet, a duplicate, or a packet older than the mapper
    /// remembers.
    pub(crate) fn on_packet(&mut self, seq: u64, is_data: bool, ndp: Option<u64>) -> Option<u64> {
        match self.highest() {
            None => {
                self.base = seq;
                self.slots.push_back(Slot::default());
            }
            Some(highest) if seq > highest => {
                let gap = seq - highest - 1;
                let non_data = ndp.unwrap_or(0).min(gap);
                let assumed_data = gap - non_data;
                if gap >= self.capacity as u64 {
                    // A jump past the memory: keep counting, remember nothing.
                    self.next_index += assumed_data.min(self.capacity as u64);
                    self.slots.clear();
                    self.base = seq;
                } else {
                    for i in 0..gap {
                        let data_index = (i < assumed_data).then(|| {
                            self.next_index += 1;
                            self.next_index - 1
                        });
                        self.slots.push_back(Slot {
                            data_index,
                            received: false,
                        });
                    }
                }
                self.slots.push_back(Slot::default());
            }
            Some(_) => {}
        }
        let offset = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        let newest = offset + 1 == self.slots.len();
        let slot = self.slots.get_mut(offset)?;
        if slot.received {
            return None; // A duplicate.
        }
        slot.received = true;
        let index = if is_data {
            if slot.data_index.is_none() && newest {
                // The newest packet: it gets the next index.
                slot.data_index = Some(self.next_index);
                self.next_index += 1;
            }
            slot.data_index
        } else {
            None
        };
        if index.is_some() {
            self.received_data += 1;
        }
        while self.slots.len() > self.capacity {
            self.slots.pop_front();
            self.base += 1;
        }
        index
    }

    /// Data packets (as counted) that have not arrived: holes that are
    /// losses, or packets still on their way.
    pub(crate) fn missing(&self) -> u64 {
        self.next_index.saturating_sub(self.received_data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_history_is_bounded_and_searchable() {
        let mut h = SendHistory::new(3);
        for seq in 10..15 {
            h.push(SentRecord {
                seq,
                at: Instant::from_millis(seq),
                ccval: 0,
                data: true,
            });
        }
        assert_eq!(h.len(), 3);
        assert_eq!(h.get(11), None);
        assert_eq!(h.get(13).map(|r| r.at), Some(Instant::from_millis(13)));
    }

    #[test]
    fn non_data_packets_do_not_count_as_data_losses() {
        let mut m = DataSeqMapper::new(100);
        assert_eq!(m.on_packet(100, true, None), Some(0));
        // 101 is a pure Ack of the sender, received.
        assert_eq!(m.on_packet(101, false, None), None);
        assert_eq!(m.on_packet(102, true, Some(1)), Some(1));
        // 103 (non-data) was lost, but 104's NDP Count covers it.
        assert_eq!(m.on_packet(104, true, Some(1)), Some(2));
        assert_eq!(m.missing(), 0);
        // 105 (data) lost: the hole is a data packet.
        assert_eq!(m.on_packet(106, true, None), Some(4));
        assert_eq!(m.missing(), 1);
        // Reordered: 105 arrives late with its index.
        assert_eq!(m.on_packet(105, true, None), Some(3));
        assert_eq!(m.missing(), 0);
        // Duplicates and ancient packets are ignored.
        assert_eq!(m.on_packet(105, true, None), None);
        assert_eq!(m.on_packet(3, true, None), None);
    }

    #[test]
    fn mapper_memory_is_bounded_even_for_jumps() {
        let mut m = DataSeqMapper::new(16);
        m.on_packet(0, true, None);
        assert_eq!(m.on_packet(1_000_000, true, None), Some(17));
        assert!(m.slots.len() <= 16);
        for seq in 1_000_001..1_000_100 {
            m.on_packet(seq, true, None);
        }
        assert!(m.slots.len() <= 16);
    }
}
