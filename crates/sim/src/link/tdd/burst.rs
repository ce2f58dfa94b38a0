//! A TDD station's link direction at work: frame boundaries and the
//! bursts its cell grants (`TddStation` keeps the grants; this is
//! the transmitter that uses them).

use fairstream_proto::time::Instant;

use crate::link::{InService, LinkDirection};
use crate::queue::SimPacket;

impl<P: SimPacket> LinkDirection<P> {
    /// A WiMAX TDD station: frame boundaries (a grant and a request each)
    /// and the bursts granted, in time order.
    pub(in crate::link) fn advance_tdd(&mut self, now: Instant) {
        loop {
            let idle = self.in_service.is_none() && self.queue.is_empty();
            let Some(station) = self.tdd.as_mut() else {
                return;
            };
            if idle && station.is_quiet() {
                station.skip_quiet_until(now);
            }
            let boundary = station.next_boundary();
            self.serve_burst(now.min(boundary));
            if boundary > now {
                return;
            }
            let backlog = self.backlog_wire_bytes();
            if let Some(station) = self.tdd.as_mut() {
                station.next_frame(backlog);
            }
        }
    }

    /// Sends from the current frame's burst what goes out by `until`: the
    /// packet in service and then the queue's head, back to back; a packet
    /// the burst cannot finish is fragmented and ends in a later burst. A
    /// burst that finds the queue empty passes as padding.
    fn serve_burst(&mut self, until: Instant) {
        loop {
            let Some((left, cursor)) = self
                .tdd
                .as_ref()
                .map(|station| (station.left(), station.time_at(station.used)))
            else {
                return;
            };
            if left == 0 || cursor > until {
                return;
            }
            let mut service = match self.in_service.take() {
                Some(service) => service,
                None => match self.dequeue_collecting(cursor) {
                    Some(packet) => InService {
                        remaining_bytes: self.wire_bytes(&packet),
                        packet,
                        started: cursor,
                        finish: cursor,
                    },
                    None => {
                        // Nothing to send: the burst up to `until` is padding.
                        if let Some(station) = self.tdd.as_mut() {
                            station.used = station.used.max(station.bytes_by(until));
                        }
                        return;
                    }
                },
            };
            let sent = left.min(service.remaining_bytes);
            let Some(station) = self.tdd.as_mut() else {
                return;
            };
            let finish = station.time_at(station.used + sent);
            if finish > until {
                self.in_service = Some(service);
                return;
            }
            station.send(sent);
            service.remaining_bytes -= sent;
            if service.remaining_bytes == 0 {
                self.complete(service, finish);
            } else {
                self.in_service = Some(service);
            }
        }
    }
}
