//! An on-path attacker as a UDP forwarder: it records every datagram it
//! forwards (both ways, up to a byte budget) and may inject forged ones
//! after each, made by a hook that sees the real datagram.
//!
//! ```text
//! sender ──▶ listen ──[record, inject]──▶ upstream ──▶ to
//! sender ◀── listen ◀──[record, inject]── upstream ◀── to
//! ```

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Which way a datagram went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    /// From the sender towards the receiver.
    Forward,
    /// From the receiver towards the sender.
    Backward,
}

/// Makes forged datagrams from a real one (sent the same way after it).
pub(crate) type Forger = Box<dyn FnMut(Way, &[u8]) -> Vec<Vec<u8>> + Send>;

/// What the tap saw and did.
#[derive(Debug, Default)]
pub(crate) struct Tapped {
    /// The datagrams forwarded, in order, while the budget lasted.
    pub(crate) datagrams: Vec<(Way, Vec<u8>)>,
    /// Forged datagrams sent.
    pub(crate) injected: u64,
}

/// A running tap; [`stop`](Self::stop) ends it.
pub(crate) struct Tap {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    tapped: Arc<Mutex<Tapped>>,
    thread: JoinHandle<()>,
}

impl Tap {
    /// Forwards between a loopback port and `to`, recording up to
    /// `budget` bytes, forging with `forger`.
    pub(crate) fn start(to: SocketAddr, budget: usize, mut forger: Forger) -> Tap {
        let listen = UdpSocket::bind("127.0.0.1:0").unwrap();
        let upstream = UdpSocket::bind("127.0.0.1:0").unwrap();
        upstream.connect(to).unwrap();
        listen.set_nonblocking(true).unwrap();
        upstream.set_nonblocking(true).unwrap();
        let local = listen.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let tapped = Arc::new(Mutex::new(Tapped::default()));
        let thread = {
            let (stop, tapped) = (stop.clone(), tapped.clone());
            thread::spawn(move || {
                let mut client: Option<SocketAddr> = None;
                let mut recorded = 0usize;
                let mut buf = vec![0u8; 65_536];
                while !stop.load(Ordering::Relaxed) {
                    let mut idle = true;
                    let mut pass = |way: Way, datagram: &[u8], recorded: &mut usize| {
                        let forged = forger(way, datagram);
                        let mut t = tapped.lock().unwrap_or_else(PoisonError::into_inner);
                        if *recorded + datagram.len() <= budget {
                            *recorded += datagram.len();
                            t.datagrams.push((way, datagram.to_vec()));
                        }
                        t.injected += forged.len() as u64;
                        forged
                    };
                    while let Ok((len, source)) = listen.recv_from(&mut buf) {
                        idle = false;
                        client = Some(source);
                        let _ = upstream.send(&buf[..len]);
                        for forged in pass(Way::Forward, &buf[..len], &mut recorded) {
                            let _ = upstream.send(&forged);
                        }
                    }
                    while let Ok(len) = upstream.recv(&mut buf) {
                        idle = false;
                        let Some(client) = client else { continue };
                        let _ = listen.send_to(&buf[..len], client);
                        for forged in pass(Way::Backward, &buf[..len], &mut recorded) {
                            let _ = listen.send_to(&forged, client);
                        }
                    }
                    if idle {
                        thread::sleep(Duration::from_micros(200));
                    }
                }
            })
        };
        Tap {
            local,
            stop,
            tapped,
            thread,
        }
    }

    /// Where the sender sends.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Stops forwarding; what it saw.
    pub(crate) fn stop(self) -> Tapped {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap();
        std::mem::take(&mut *self.tapped.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
