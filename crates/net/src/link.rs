//! A UDP socket driven from one thread with precise waits: a reader thread
//! blocks in `recvmsg` and hands datagrams over a bounded channel, so the
//! driver can wait for "the next datagram or the deadline, whichever comes
//! first" with the channel's timer (a futex with a high-resolution
//! timeout), then spin for the last stretch so that paced packets leave on
//! time. Datagrams are read and sent with their ECN codepoint
//! ([`crate::ecn`]).

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;

use crate::clock::Clock;
use crate::ecn::EcnUdp;

/// Datagrams held between the reader thread and the driver; beyond it the
/// reader waits and the kernel's socket buffer takes (and drops) the rest,
/// so a flood cannot grow memory.
const CHANNEL_DATAGRAMS: usize = 4096;
/// The largest datagram read.
const MAX_DATAGRAM: usize = 65_536;
/// How long the reader blocks before checking whether it should stop.
const READER_POLL: Duration = Duration::from_millis(50);
/// The socket buffers asked for (the kernel may cap them, on Linux at
/// `net.core.rmem_max` and `wmem_max`): a burst at a high allowed rate
/// must not overflow a default buffer of about 200 kB while the reader
/// thread waits for a core.
const SOCKET_BUFFER_BYTES: usize = 4 << 20;
/// The last stretch before a deadline is spun rather than slept:
/// a timed wait can wake this much late.
const SPIN: Duration = Duration::from_micros(200);

/// What the reader thread saw.
#[derive(Debug)]
pub enum Incoming {
    /// A datagram, its source and the ECN codepoint it arrived with
    /// (RFC 3168 §5).
    Datagram(SocketAddr, Vec<u8>, Ecn),
    /// A socket error (on a connected socket, `ConnectionRefused` reports an
    /// ICMP port unreachable).
    Error(io::Error),
}

/// One socket of a link and its ECN access.
#[derive(Debug)]
struct Path {
    socket: Arc<UdpSocket>,
    ecn: Arc<EcnUdp>,
}

/// A UDP socket with a reader thread, or several (the paths of a bonded
/// sender, issue 19), whose datagrams arrive through one channel tagged
/// with their socket's index.
#[derive(Debug)]
pub struct UdpLink {
    paths: Vec<Path>,
    incoming: Receiver<(usize, Incoming)>,
    stop: Arc<AtomicBool>,
    readers: Vec<JoinHandle<()>>,
}

impl UdpLink {
    /// Starts reading `socket`.
    pub fn new(socket: UdpSocket) -> io::Result<UdpLink> {
        UdpLink::bonded(vec![socket])
    }

    /// Starts reading each of `sockets`: socket i is path i.
    pub fn bonded(sockets: Vec<UdpSocket>) -> io::Result<UdpLink> {
        let (tx, incoming) = sync_channel(CHANNEL_DATAGRAMS);
        let stop = Arc::new(AtomicBool::new(false));
        let mut paths = Vec::with_capacity(sockets.len());
        let mut readers = Vec::with_capacity(sockets.len());
        for (index, socket) in sockets.into_iter().enumerate() {
            let ecn = Arc::new(EcnUdp::new(&socket)?);
            socket.set_read_timeout(Some(READER_POLL))?;
            // Best effort: a smaller buffer only costs packets under load.
            let sock = socket2::SockRef::from(&socket);
            let _ = sock.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
            let _ = sock.set_send_buffer_size(SOCKET_BUFFER_BYTES);
            let socket = Arc::new(socket);
            readers.push(spawn_reader(
                index,
                Arc::clone(&socket),
                Arc::clone(&ecn),
                tx.clone(),
                Arc::clone(&stop),
            )?);
            paths.push(Path { socket, ecn });
        }
        Ok(UdpLink {
            paths,
            incoming,
            stop,
            readers,
        })
    }

    /// The (first) socket's local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.local_addr_of(0)
    }

    /// Path `path`'s local address.
    pub fn local_addr_of(&self, path: usize) -> io::Result<SocketAddr> {
        self.path(path)?.socket.local_addr()
    }

    /// The sockets, one per path.
    pub fn paths(&self) -> usize {
        self.paths.len()
    }

    fn path(&self, path: usize) -> io::Result<&Path> {
        self.paths
            .get(path)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("no path {path}")))
    }

    /// Sends on a connected socket.
    pub fn send(&self, bytes: &[u8]) -> io::Result<usize> {
        self.path(0)?.socket.send(bytes)
    }

    /// Sends to `to`.
    pub fn send_to(&self, bytes: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.path(0)?.socket.send_to(bytes, to)
    }

    /// Sends on a connected socket with the ECN field set to `ecn` (the
    /// connection's [`Transmit::ecn`](fairstream_proto::conn::Transmit::ecn)).
    pub fn send_ecn(&self, bytes: &[u8], ecn: Ecn) -> io::Result<usize> {
        self.send_ecn_on(0, bytes, ecn)
    }

    /// [`send_ecn`](Self::send_ecn) on path `path`'s connected socket.
    pub fn send_ecn_on(&self, path: usize, bytes: &[u8], ecn: Ecn) -> io::Result<usize> {
        let path = self.path(path)?;
        if ecn == Ecn::NotEct {
            return path.socket.send(bytes);
        }
        let peer = path.socket.peer_addr()?;
        path.ecn.send_to(&path.socket, bytes, peer, ecn)
    }

    /// Sends to `to` with the ECN field set to `ecn`.
    pub fn send_to_ecn(&self, bytes: &[u8], to: SocketAddr, ecn: Ecn) -> io::Result<usize> {
        let path = self.path(0)?;
        if ecn == Ecn::NotEct {
            return path.socket.send_to(bytes, to);
        }
        path.ecn.send_to(&path.socket, bytes, to, ecn)
    }

    /// What arrived, without waiting.
    pub fn try_recv(&self) -> Option<Incoming> {
        self.try_recv_on().map(|(_, message)| message)
    }

    /// What arrived, without waiting, and on which path.
    pub fn try_recv_on(&self) -> Option<(usize, Incoming)> {
        self.incoming.try_recv().ok()
    }

    /// Waits until something arrives or `deadline` (on `clock`) passes,
    /// without spinning: it may wake a little late (for timers where a
    /// fraction of a millisecond does not matter, such as statistics).
    pub fn wait_coarse(&self, clock: &Clock, deadline: Instant) -> Option<Incoming> {
        self.wait_coarse_on(clock, deadline).map(|(_, m)| m)
    }

    /// [`wait_coarse`](Self::wait_coarse), with the path it came on.
    pub fn wait_coarse_on(&self, clock: &Clock, deadline: Instant) -> Option<(usize, Incoming)> {
        let now = clock.now();
        if now >= deadline {
            return self.try_recv_on();
        }
        match self.incoming.recv_timeout(deadline - now) {
            Ok(message) => Some(message),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                std::thread::sleep(deadline - now);
                None
            }
        }
    }

    /// Waits until something arrives or `deadline` (on `clock`) passes,
    /// sleeping until shortly before it and spinning the rest, so that a
    /// paced packet leaves on time.
    pub fn wait(&self, clock: &Clock, deadline: Instant) -> Option<Incoming> {
        self.wait_on(clock, deadline).map(|(_, m)| m)
    }

    /// [`wait`](Self::wait), with the path it came on.
    pub fn wait_on(&self, clock: &Clock, deadline: Instant) -> Option<(usize, Incoming)> {
        loop {
            let now = clock.now();
            if now >= deadline {
                return self.try_recv_on();
            }
            let remaining = deadline - now;
            if remaining > SPIN {
                match self.incoming.recv_timeout(remaining - SPIN) {
                    Ok(message) => return Some(message),
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => {
                        std::thread::sleep(remaining);
                        return None;
                    }
                }
            }
            match self.incoming.try_recv() {
                Ok(message) => return Some(message),
                // Spin without yielding: a woken thread that yields may wait a
                // whole time slice on a busy machine.
                Err(TryRecvError::Empty) => std::hint::spin_loop(),
                Err(TryRecvError::Disconnected) => return None,
            }
        }
    }
}

/// Starts the thread that reads path `index`'s socket into `tx`.
fn spawn_reader(
    index: usize,
    socket: Arc<UdpSocket>,
    ecn: Arc<EcnUdp>,
    tx: SyncSender<(usize, Incoming)>,
    stop: Arc<AtomicBool>,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("fairstream-udp-reader-{index}"))
        .spawn(move || {
            let mut buf = vec![0u8; MAX_DATAGRAM];
            let mut read = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let received = ecn.recv(&socket, &mut buf, |from, codepoint, bytes| {
                    read.push(Incoming::Datagram(from, bytes.to_vec(), codepoint));
                });
                let message = match received {
                    Ok(_) => {
                        if read.drain(..).any(|m| tx.send((index, m)).is_err()) {
                            break;
                        }
                        continue;
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock
                                | io::ErrorKind::TimedOut
                                | io::ErrorKind::Interrupted
                        ) =>
                    {
                        continue
                    }
                    Err(e) => {
                        // Do not spin on a persistent error.
                        std::thread::sleep(Duration::from_millis(1));
                        Incoming::Error(e)
                    }
                };
                if tx.send((index, message)).is_err() {
                    break;
                }
            }
        })
}

impl Drop for UdpLink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Unblock readers waiting for room in the channel.
        while self.incoming.try_recv().is_ok() {}
        for reader in self.readers.drain(..) {
            while !reader.is_finished() {
                while self.incoming.try_recv().is_ok() {}
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = reader.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_on_time_and_on_datagrams() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b_addr = b.local_addr().unwrap();
        let link = UdpLink::new(b).unwrap();
        let clock = Clock::new();
        let mut lateness = Vec::new();
        for wait_us in (0..20u64).map(|i| 500 + 250 * i) {
            let deadline = clock.now() + Duration::from_micros(wait_us);
            assert!(link.wait(&clock, deadline).is_none());
            let now = clock.now();
            assert!(now >= deadline, "woke early");
            lateness.push(now - deadline);
        }
        lateness.sort();
        let median = lateness[lateness.len() / 2];
        let worst = lateness[lateness.len() - 1];
        eprintln!("woke {median:?} after the deadline (median of 20), {worst:?} at worst");
        // On an idle machine the median is about a microsecond. The
        // machine may be shared, and other tests run beside this one: the
        // bound only catches a wait that sleeps whole timer ticks or more.
        assert!(median < Duration::from_millis(5), "median {median:?} late");
        a.send_to(b"hello", b_addr).unwrap();
        let got = link.wait(&clock, clock.now() + Duration::from_secs(2));
        assert!(matches!(got, Some(Incoming::Datagram(_, ref d, Ecn::NotEct)) if d == b"hello"));
        // RFC 3168 §5: the codepoint crosses the link both ways.
        let back = UdpLink::new(a).unwrap();
        back.send_to_ecn(b"marked", b_addr, Ecn::Ce).unwrap();
        back.send_to_ecn(b"capable", b_addr, Ecn::Ect0).unwrap();
        for (payload, codepoint) in [(&b"marked"[..], Ecn::Ce), (&b"capable"[..], Ecn::Ect0)] {
            let got = link.wait(&clock, clock.now() + Duration::from_secs(2));
            assert!(
                matches!(got, Some(Incoming::Datagram(_, ref d, e)) if d == payload && e == codepoint),
                "{got:?}"
            );
        }
    }
}
