//! The clients the emulator has seen: for each client address, a UDP socket
//! connected to the upstream address, so that the upstream's replies can be
//! told apart and sent back to the right client (the way a NAT keeps one
//! mapping per flow).
//!
//! The table is bounded: when a new client arrives and the table is full,
//! the client heard from least recently is forgotten (its socket closed, its
//! receiver thread stopped). Datagrams still crossing towards it upstream
//! are then counted as unroutable.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;

use super::receive::ReceiverContext;
use crate::ecn::EcnSocket;

/// One remembered client.
struct Client {
    /// Connected to the upstream address.
    socket: Arc<EcnSocket>,
    /// Stops this client's receiver thread.
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
    /// When a datagram of this flow last arrived (either way).
    last_active: Instant,
}

/// Why a datagram could not be sent upstream.
#[derive(Debug)]
pub(crate) enum UpstreamError {
    /// The client is not (or no longer) in the table.
    Unknown,
    /// The operating system refused the send.
    Io,
}

/// The bounded table of clients.
pub(crate) struct Clients {
    upstream: SocketAddr,
    capacity: usize,
    table: HashMap<SocketAddr, Client>,
    /// Receiver threads of forgotten clients, until they have ended.
    retired: Vec<JoinHandle<()>>,
    evicted: u64,
}

impl Clients {
    /// An empty table for flows towards `upstream`, holding at most
    /// `capacity` clients (at least one).
    pub(crate) fn new(upstream: SocketAddr, capacity: usize) -> Clients {
        Clients {
            upstream,
            capacity: capacity.max(1),
            table: HashMap::new(),
            retired: Vec::new(),
            evicted: 0,
        }
    }

    /// Notes a datagram of `client`'s flow at `now`, opening its upstream
    /// socket (and forgetting the least recent client if the table is full)
    /// when the client is new.
    pub(crate) fn arrived(
        &mut self,
        client: SocketAddr,
        now: Instant,
        receivers: &ReceiverContext,
    ) -> io::Result<()> {
        if let Some(known) = self.table.get_mut(&client) {
            known.last_active = known.last_active.max(now);
            return Ok(());
        }
        if self.table.len() >= self.capacity {
            self.evict_least_recent();
        }
        let local: SocketAddr = if self.upstream.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let socket = UdpSocket::bind(local)?;
        // Connected: the kernel delivers only the upstream's datagrams.
        socket.connect(self.upstream)?;
        let socket = Arc::new(EcnSocket::new(socket)?);
        let stop = Arc::new(AtomicBool::new(false));
        let thread = receivers.spawn(Arc::clone(&socket), Some(client), Arc::clone(&stop))?;
        self.table.insert(
            client,
            Client {
                socket,
                stop,
                thread,
                last_active: now,
            },
        );
        Ok(())
    }

    /// Notes a reply of `client`'s flow at `now`.
    pub(crate) fn touch(&mut self, client: SocketAddr, now: Instant) {
        if let Some(known) = self.table.get_mut(&client) {
            known.last_active = known.last_active.max(now);
        }
    }

    /// Sends `payload` upstream on `client`'s socket with the ECN
    /// codepoint it arrived with.
    pub(crate) fn send_upstream(
        &self,
        client: SocketAddr,
        payload: &[u8],
        ecn: Ecn,
    ) -> Result<(), UpstreamError> {
        let known = self.table.get(&client).ok_or(UpstreamError::Unknown)?;
        known
            .socket
            .send(payload, ecn)
            .map(|_| ())
            .map_err(|_| UpstreamError::Io)
    }

    /// Clients remembered now.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Clients forgotten so far to make room.
    pub(crate) fn evicted(&self) -> u64 {
        self.evicted
    }

    fn evict_least_recent(&mut self) {
        let Some(oldest) = self
            .table
            .iter()
            .min_by_key(|(_, client)| client.last_active)
            .map(|(address, _)| *address)
        else {
            return;
        };
        if let Some(client) = self.table.remove(&oldest) {
            client.stop.store(true, Ordering::Relaxed);
            self.retired.push(client.thread);
            self.evicted += 1;
        }
        // The retired threads end within one receive poll; forget the ended.
        self.retired.retain(|thread| !thread.is_finished());
    }

    /// Stops every receiver thread and waits for them. The engine's channel
    /// must be closed first, so that none is blocked handing it a datagram.
    pub(crate) fn close(self) {
        for client in self.table.values() {
            client.stop.store(true, Ordering::Relaxed);
        }
        let threads = self
            .table
            .into_values()
            .map(|client| client.thread)
            .chain(self.retired);
        for thread in threads {
            // A receiver thread does not panic; if one did, there is
            // nothing left to clean up.
            let _ = thread.join();
        }
    }
}
