//! Every packet in the network, from the moment its host hands it over to
//! its delivery, loss or drop: the packets stay here, in a slab, and what
//! crosses queues, transmitters and the event queue is a small
//! [`PacketRef`](crate::network::PacketRef) or an event naming the slot
//! (issue 18's profile of 100 NewReno flows: moving the 80-byte packet
//! about ten times a hop, with its drop glue, was a quarter of the run;
//! before that, packets inside events made the binary heap's sifting the
//! largest cost). Freed slots are reused last-in first-out, so the slab is
//! as large as the most packets ever in the network at once, and no
//! allocation happens per packet.

use crate::network::Packet;

/// A slab of the packets in the network.
#[derive(Debug, Default)]
pub(super) struct PacketStore {
    slots: Vec<Option<Packet>>,
    /// Indices of the empty slots.
    free: Vec<u32>,
}

impl PacketStore {
    /// Keeps `packet` until [`take`](Self::take) asks for its slot;
    /// `None` if the store already holds `u32::MAX` packets.
    pub(super) fn insert(&mut self, packet: Packet) -> Option<u32> {
        if let Some(index) = self.free.pop() {
            if let Some(slot) = self.slots.get_mut(index as usize) {
                *slot = Some(packet);
                return Some(index);
            }
        }
        let index = u32::try_from(self.slots.len()).ok()?;
        self.slots.push(Some(packet));
        Some(index)
    }

    /// The packet kept in `slot`, if any.
    pub(super) fn get_mut(&mut self, slot: u32) -> Option<&mut Packet> {
        self.slots.get_mut(slot as usize)?.as_mut()
    }

    /// The packet kept in `slot`, which becomes free; `None` if it was
    /// taken already.
    pub(super) fn take(&mut self, slot: u32) -> Option<Packet> {
        let packet = self.slots.get_mut(slot as usize)?.take()?;
        self.free.push(slot);
        Some(packet)
    }
}

/// The most spare packet buffers a flow keeps: the buffer an endpoint
/// wrote a DCCP packet into travels as the packet's body and comes back to
/// its flow ([`fairstream_proto::buffers::BufferPool`]) when the packet
/// leaves the network (delivered, lost or dropped), to carry a later one,
/// so a packet costs no allocation, copy or free. A flow's packets in
/// flight come back to it; more than this many at once is no steady state.
pub(super) const MAX_SPARE_BODIES: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(id: u64) -> Packet {
        Packet::datagram(id, 100)
    }

    #[test]
    fn slots_give_back_their_packet_once_and_are_reused() {
        let mut store = PacketStore::default();
        let a = store.insert(packet(1)).unwrap();
        let b = store.insert(packet(2)).unwrap();
        assert_ne!(a, b);
        assert_eq!(store.get_mut(a).map(|p| p.id), Some(1));
        assert_eq!(store.take(a).map(|p| p.id), Some(1));
        assert!(store.take(a).is_none());
        assert!(store.get_mut(a).is_none());
        let c = store.insert(packet(3)).unwrap();
        assert_eq!(c, a, "a freed slot is reused");
        assert_eq!(store.take(b).map(|p| p.id), Some(2));
        assert_eq!(store.take(c).map(|p| p.id), Some(3));
        assert_eq!(store.slots.len(), 2);
    }
}
