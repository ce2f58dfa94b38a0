//! The clients the emulator has seen: for each client address, a UDP socket
//! connected to the upstream address, so that the upstream's replies can be
//! told apart and sent back to the right client (the way a NAT keeps one
//! mapping per flow), and a thread receiving on it.
//!
//! Which clients keep a place is [`super::table`]'s policy: answered clients
//! are never displaced, idle ones are forgotten, strangers make room for
//! newcomers after a grace period, and a newcomer finding no room is
//! refused. Here a place's socket and thread come and go with it: a client
//! forgotten has its socket closed and its thread told to stop; the thread
//! ends within one receive poll and is then joined. Datagrams still
//! crossing towards a forgotten client upstream are counted as unroutable.
//!
//! The threads are bounded: the table's and the ending ones together are at
//! most twice the table's capacity, and a newcomer that would exceed that is
//! refused too (under a flood, until the ending threads have been joined).

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;

use super::receive::ReceiverContext;
use super::table::{ClientTable, TablePolicy};
use crate::ecn::EcnSocket;

/// One client's way upstream.
#[derive(Debug)]
struct Upstream {
    /// Connected to the upstream address.
    socket: Arc<EcnSocket>,
    /// Stops this client's receiver thread.
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

/// Why a datagram could not be sent upstream.
#[derive(Debug)]
pub(crate) enum UpstreamError {
    /// The client is not (or no longer) in the table.
    Unknown,
    /// The operating system refused the send.
    Io,
}

/// The bounded table of clients with their sockets and threads.
pub(crate) struct Clients {
    upstream: SocketAddr,
    table: ClientTable<Upstream>,
    /// Receiver threads of forgotten clients, until they have ended.
    retired: Vec<JoinHandle<()>>,
    /// Datagrams from newcomers turned away for want of room.
    refused: u64,
    /// The most receiver threads (the table's and the ending ones) at once.
    threads_max: usize,
}

impl Clients {
    /// An empty table for flows towards `upstream`, chosen by `policy`.
    pub(crate) fn new(upstream: SocketAddr, policy: TablePolicy) -> Clients {
        Clients {
            upstream,
            table: ClientTable::new(policy),
            retired: Vec::new(),
            refused: 0,
            threads_max: 0,
        }
    }

    /// Notes a datagram from `client` at `now`, opening its upstream socket
    /// when the client is new and the table has (or can make) room.
    /// `Ok(false)`: the client was refused a place and the datagram is to
    /// be dropped.
    pub(crate) fn arrived(
        &mut self,
        client: SocketAddr,
        now: Instant,
        receivers: &ReceiverContext,
    ) -> io::Result<bool> {
        if self.table.heard(client, now) {
            return Ok(true);
        }
        // Opening a place never changes the sum of the table's threads and
        // the ending ones, except by the one it starts.
        let thread_limit = 2 * self.table.policy().capacity;
        if self.threads() >= thread_limit {
            self.join_ended();
        }
        let retired = &mut self.retired;
        if self.table.len() + retired.len() >= thread_limit
            || !self
                .table
                .make_room(now, &mut |upstream| retire(retired, upstream))
        {
            self.refused += 1;
            return Ok(false);
        }
        let upstream = self.open(client, receivers)?;
        if let Some(unused) = self.table.insert(client, upstream, now) {
            // Not reached: the client was not in the table above.
            retire(&mut self.retired, unused);
        }
        self.threads_max = self.threads_max.max(self.threads());
        Ok(true)
    }

    /// A socket connected upstream and the thread receiving on it.
    fn open(&self, client: SocketAddr, receivers: &ReceiverContext) -> io::Result<Upstream> {
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
        Ok(Upstream {
            socket,
            stop,
            thread,
        })
    }

    /// Notes a reply of `client`'s flow at `now`: the client is answered.
    pub(crate) fn answered(&mut self, client: SocketAddr, now: Instant) {
        self.table.answered(client, now);
    }

    /// Forgets the clients idle at `now` and joins the receiver threads
    /// that have ended.
    pub(crate) fn sweep(&mut self, now: Instant) {
        let retired = &mut self.retired;
        self.table
            .expire(now, &mut |upstream| retire(retired, upstream));
        self.join_ended();
    }

    /// Joins the retired threads that have ended.
    fn join_ended(&mut self) {
        let mut index = 0;
        while index < self.retired.len() {
            if self.retired[index].is_finished() {
                // A receiver thread does not panic; if one did, there is
                // nothing left to clean up.
                let _ = self.retired.swap_remove(index).join();
            } else {
                index += 1;
            }
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
        let known = self.table.get(client).ok_or(UpstreamError::Unknown)?;
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

    /// Strangers displaced so far to make room for newcomers.
    pub(crate) fn evicted(&self) -> u64 {
        self.table.displaced()
    }

    /// Clients forgotten so far for idleness.
    pub(crate) fn expired(&self) -> u64 {
        self.table.expired()
    }

    /// Datagrams from newcomers refused a place so far.
    pub(crate) fn refused(&self) -> u64 {
        self.refused
    }

    /// Receiver threads now: the table's, and the ending ones not yet
    /// joined.
    pub(crate) fn threads(&self) -> usize {
        self.table.len() + self.retired.len()
    }

    /// The most receiver threads at once so far.
    pub(crate) fn threads_max(&self) -> usize {
        self.threads_max
    }

    /// Stops every receiver thread and waits for them. The engine's channel
    /// must be closed first, so that none is blocked handing it a datagram.
    pub(crate) fn close(mut self) {
        let retired = &mut self.retired;
        for upstream in self.table.drain() {
            retire(retired, upstream);
        }
        for thread in self.retired {
            // As in `join_ended`.
            let _ = thread.join();
        }
    }
}

/// Tells `upstream`'s thread to stop and keeps it to be joined; its socket
/// closes when the thread lets go of it.
fn retire(retired: &mut Vec<JoinHandle<()>>, upstream: Upstream) {
    upstream.stop.store(true, Ordering::Relaxed);
    retired.push(upstream.thread);
}
