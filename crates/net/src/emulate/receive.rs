//! Receiver threads: each blocks on one socket, stamps every datagram with
//! the time it arrived and hands it to the engine over a bounded channel.
//!
//! Stamping on the receiving thread keeps arrival times exact while the
//! engine sleeps towards its next deadline; the bounded channel keeps memory
//! bounded when the engine falls behind (the socket's own buffer then fills
//! and the kernel drops, as a real router's input would).

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;

use super::clock::Clock;
use crate::ecn::EcnSocket;

/// How long a receiver blocks before it looks at its stop flags again.
pub(crate) const RECEIVE_POLL: Duration = Duration::from_millis(20);

/// Datagrams waiting for the engine, at most.
pub(crate) const CHANNEL_CAPACITY: usize = 1024;

/// The largest UDP payload (IPv4: 65 535 − 20 − 8).
const MAX_DATAGRAM: usize = 65_507;

/// Where a datagram came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// From a client, at the listening socket.
    Client(SocketAddr),
    /// From upstream, at the socket opened for this client.
    Upstream(SocketAddr),
}

/// A datagram, the ECN codepoint it arrived with, and when it arrived.
#[derive(Debug)]
pub(crate) struct Arrival {
    pub(crate) origin: Origin,
    pub(crate) payload: Vec<u8>,
    pub(crate) ecn: Ecn,
    pub(crate) at: Instant,
}

/// What every receiver thread shares: the clock, the engine's channel and
/// the emulator-wide stop flag.
#[derive(Clone, Debug)]
pub(crate) struct ReceiverContext {
    pub(crate) clock: Clock,
    pub(crate) sender: SyncSender<Arrival>,
    pub(crate) shutdown: Arc<AtomicBool>,
}

impl ReceiverContext {
    /// Starts a thread receiving on `socket` until `shutdown` or `stop` is
    /// set, or the engine goes away. `upstream_of` is `None` for the
    /// listening socket (the sender is the client) and the client's address
    /// for an upstream socket.
    pub(crate) fn spawn(
        &self,
        socket: Arc<EcnSocket>,
        upstream_of: Option<SocketAddr>,
        stop: Arc<AtomicBool>,
    ) -> std::io::Result<JoinHandle<()>> {
        socket.socket().set_read_timeout(Some(RECEIVE_POLL))?;
        let context = self.clone();
        let name = match upstream_of {
            None => "emulate-listen".to_owned(),
            Some(client) => format!("emulate-up-{client}"),
        };
        thread::Builder::new()
            .name(name)
            .spawn(move || context.receive(&socket, upstream_of, &stop))
    }

    fn receive(&self, socket: &EcnSocket, upstream_of: Option<SocketAddr>, stop: &AtomicBool) {
        let mut buffer = vec![0u8; MAX_DATAGRAM];
        let mut arrivals = Vec::new();
        while !(self.shutdown.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed)) {
            let received = socket.recv(&mut buffer, |from, ecn, payload| {
                let origin = match upstream_of {
                    None => Origin::Client(from),
                    Some(client) => Origin::Upstream(client),
                };
                // The codepoint is kept: the emulator forwards it as a
                // router would (RFC 3168 §5).
                arrivals.push(Arrival {
                    origin,
                    payload: payload.to_vec(),
                    ecn,
                    at: self.clock.now(),
                });
            });
            match received {
                Ok(_) => {
                    if arrivals.drain(..).any(|a| self.sender.send(a).is_err()) {
                        return; // The engine has stopped.
                    }
                }
                // The read timeout: look at the stop flags again.
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                // An ICMP error for an earlier send (nothing listens upstream
                // yet), or a signal: neither ends the flow.
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::ConnectionRefused
                            | ErrorKind::ConnectionReset
                            | ErrorKind::Interrupted
                    ) => {}
                // Anything else: do not spin on a failing socket.
                Err(_) => thread::sleep(RECEIVE_POLL),
            }
        }
    }
}
