//! The receiving side of a multi-connection session.

use super::reorder::{ReorderBuffer, ReorderConfig, ReorderStats};
use super::SESSION_HEADER_BYTES;
use crate::conn::{ConnectionConfig, ConnectionId, Endpoint, EndpointConfig, Transmit};
use crate::ecn::Ecn;
use crate::time::Instant;

/// Counters of a [`ReceiverSession`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverSessionStats {
    /// Datagrams too short for the session header, dropped.
    pub malformed: u64,
    /// The reorder buffer's counters.
    pub reorder: ReorderStats,
}

/// The receiver of one stream over several connections: it accepts the
/// sender's connections on one port and merges what they carry into one
/// ordered stream. A connection that dies leaves gaps the reorder buffer
/// gives up after its `max_wait`; the others go on.
#[derive(Debug)]
pub struct ReceiverSession {
    endpoint: Endpoint,
    reorder: ReorderBuffer,
    malformed: u64,
}

impl ReceiverSession {
    /// A receiver accepting up to `max_connections` connections.
    pub fn new(
        connection: ConnectionConfig,
        max_connections: usize,
        reorder: ReorderConfig,
    ) -> ReceiverSession {
        ReceiverSession {
            endpoint: Endpoint::new(EndpointConfig {
                connection,
                listen: true,
                max_connections,
            }),
            reorder: ReorderBuffer::new(reorder),
            malformed: 0,
        }
    }

    /// The endpoint (for the connections' statistics).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Counters.
    pub fn stats(&self) -> ReceiverSessionStats {
        ReceiverSessionStats {
            malformed: self.malformed,
            reorder: self.reorder.stats(),
        }
    }

    /// A datagram from the sender; `iss` is used if it opens a connection.
    /// The same as [`handle_datagram_ecn`](Self::handle_datagram_ecn) with
    /// Not-ECT.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8], iss: u64) {
        self.handle_datagram_ecn(now, bytes, Ecn::NotEct, iss);
    }

    /// A datagram from the sender that arrived with the ECN codepoint `ecn`
    /// (RFC 3168 §5; a Congestion Experienced mark counts as a loss in the
    /// connection's loss history, RFC 4342 §9).
    pub fn handle_datagram_ecn(&mut self, now: Instant, bytes: &[u8], ecn: Ecn, iss: u64) {
        if let Some(id) = self.endpoint.handle_datagram_ecn(now, bytes, ecn, iss) {
            self.collect(now, id);
        }
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.endpoint.poll_timeout().is_some_and(|t| t <= now) {
            self.endpoint.handle_timeout(now);
        }
        self.reorder.handle_timeout(now);
    }

    /// The next packet to send (feedback, handshake).
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.endpoint.poll_transmit(now, buf).map(|(_, t)| t)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [self.endpoint.poll_timeout(), self.reorder.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    /// The next datagram of the stream, in order, without the session
    /// header.
    pub fn recv(&mut self) -> Option<Vec<u8>> {
        self.reorder.pop()
    }

    fn collect(&mut self, now: Instant, id: ConnectionId) {
        while self.endpoint.poll_event().is_some() {}
        let Some(conn) = self.endpoint.connection_mut(id) else {
            return;
        };
        while let Some(datagram) = conn.recv() {
            let Some(header) = datagram.get(..SESSION_HEADER_BYTES) else {
                self.malformed += 1;
                continue;
            };
            let seq = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
            self.reorder.push_from(
                now,
                id.remote_port,
                seq,
                datagram[SESSION_HEADER_BYTES..].to_vec(),
            );
        }
    }
}
