//! The packets between the far end of one hop and the next: crossed a link
//! and propagating, not yet offered to the next link or handed to a host.
//!
//! They wait here, in a slab, with the index of the hop they crossed, and the
//! engine's `Arrive` event carries only their [`Slot`]: an event queue entry stays 32 bytes instead of carrying a
//! whole [`Packet`], which made the binary heap's sifting the largest cost of
//! a run (issue 18's profile: `BinaryHeap::pop` 33 % of 100 NewReno flows).
//! Freed slots are reused last-in first-out, so the slab is as large as the
//! most packets ever in flight at once, and no allocation happens per packet.

use crate::network::Packet;

/// Where a packet waits in [`InFlight`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Slot(usize);

/// A packet that crossed hop `hop` of its route.
#[derive(Debug)]
pub(super) struct Arrival {
    pub(super) packet: Packet,
    /// The index of the hop in its flow's route.
    pub(super) hop: usize,
}

/// A slab of packets in flight between links.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    slots: Vec<Option<Arrival>>,
    /// Indices of the empty slots.
    free: Vec<usize>,
}

impl InFlight {
    /// Keeps `arrival` until [`take`](Self::take) asks for its slot.
    pub(super) fn insert(&mut self, arrival: Arrival) -> Slot {
        if let Some(index) = self.free.pop() {
            if let Some(slot) = self.slots.get_mut(index) {
                *slot = Some(arrival);
                return Slot(index);
            }
        }
        self.slots.push(Some(arrival));
        Slot(self.slots.len() - 1)
    }

    /// The arrival kept in `slot`, which becomes free; `None` if it was
    /// taken already.
    pub(super) fn take(&mut self, slot: Slot) -> Option<Arrival> {
        let arrival = self.slots.get_mut(slot.0)?.take()?;
        self.free.push(slot.0);
        Some(arrival)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::Body;
    use crate::queue::TrafficClass;
    use fairstream_proto::ecn::Ecn;
    use fairstream_proto::time::Instant;

    fn packet(id: u64) -> Arrival {
        let packet = Packet {
            id,
            flow: 0,
            toward_receiver: true,
            path: 0,
            sent_at: Instant::ZERO,
            ecn: Ecn::NotEct,
            class: TrafficClass::Default,
            body: Body::Datagram { size: 100 },
        };
        Arrival { packet, hop: 0 }
    }

    #[test]
    fn slots_give_back_their_packet_once_and_are_reused() {
        let mut slab = InFlight::default();
        let a = slab.insert(packet(1));
        let b = slab.insert(packet(2));
        assert_ne!(a, b);
        assert_eq!(slab.take(a).map(|a| a.packet.id), Some(1));
        assert!(slab.take(a).is_none());
        let c = slab.insert(packet(3));
        assert_eq!(c, a, "a freed slot is reused");
        assert_eq!(slab.take(b).map(|a| a.packet.id), Some(2));
        assert_eq!(slab.take(c).map(|a| a.packet.id), Some(3));
        assert_eq!(slab.slots.len(), 2);
    }
}
