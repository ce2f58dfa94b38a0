//! A UDP forwarder whose listening port closes for a moment at given times:
//! while it is closed, the kernel answers the sender's datagrams with ICMP
//! port unreachable, exactly as it would deliver a forged one (issue 13),
//! without raw sockets or privileges. The receiver behind it stays up.
//!
//! ```text
//! sender ──▶ listen (closed now and then) ──▶ upstream ──▶ to
//! sender ◀── listen ◀──────────────────────── upstream ◀── to
//! ```

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// What the forwarder did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BlinkStats {
    /// Times the listening port was closed.
    pub(crate) closed: u32,
    /// Datagrams forwarded (both directions).
    pub(crate) forwarded: u64,
}

/// A running forwarder; [`stop`](Self::stop) ends it.
pub(crate) struct Blinker {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<BlinkStats>>,
    thread: JoinHandle<()>,
}

fn open(local: SocketAddr) -> Option<UdpSocket> {
    let socket = UdpSocket::bind(local).ok()?;
    socket.set_nonblocking(true).ok()?;
    Some(socket)
}

impl Blinker {
    /// Forwards datagrams arriving on a loopback port to `to` (and the
    /// answers back); at each of `closes` after its start it closes the
    /// listening port for `closed_for` (`None`: for good).
    pub(crate) fn start(
        to: SocketAddr,
        closes: Vec<Duration>,
        closed_for: Option<Duration>,
    ) -> Blinker {
        let first = UdpSocket::bind("127.0.0.1:0").unwrap();
        first.set_nonblocking(true).unwrap();
        let local = first.local_addr().unwrap();
        let upstream = UdpSocket::bind("127.0.0.1:0").unwrap();
        upstream.connect(to).unwrap();
        upstream.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(BlinkStats::default()));
        let thread = {
            let (stop, stats) = (stop.clone(), stats.clone());
            thread::spawn(move || {
                let start = Instant::now();
                let mut listen = Some(first);
                let mut closes = closes.into_iter().peekable();
                let mut reopen_at: Option<Duration> = None;
                let mut client: Option<SocketAddr> = None;
                let mut buf = vec![0u8; 65_536];
                while !stop.load(Ordering::Relaxed) {
                    let elapsed = start.elapsed();
                    if listen.is_some() && closes.peek().is_some_and(|t| *t <= elapsed) {
                        closes.next();
                        listen = None;
                        reopen_at = closed_for.map(|d| elapsed + d);
                        stats.lock().unwrap_or_else(PoisonError::into_inner).closed += 1;
                    }
                    if listen.is_none() && reopen_at.is_some_and(|t| t <= elapsed) {
                        listen = open(local);
                    }
                    let mut idle = true;
                    if let Some(socket) = &listen {
                        while let Ok((len, source)) = socket.recv_from(&mut buf) {
                            client = Some(source);
                            idle = false;
                            // A datagram the kernel refuses is lost, as on a link.
                            let _ = upstream.send(&buf[..len]);
                            stats
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .forwarded += 1;
                        }
                    }
                    while let Ok(len) = upstream.recv(&mut buf) {
                        idle = false;
                        if let (Some(socket), Some(client)) = (&listen, client) {
                            let _ = socket.send_to(&buf[..len], client);
                            stats
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .forwarded += 1;
                        }
                    }
                    if idle {
                        thread::sleep(Duration::from_micros(300));
                    }
                }
            })
        };
        Blinker {
            local,
            stop,
            stats,
            thread,
        }
    }

    /// Where the sender sends.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Stops forwarding; what it did.
    pub(crate) fn stop(self) -> BlinkStats {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap();
        let stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        *stats
    }
}
