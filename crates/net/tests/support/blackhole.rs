//! A UDP forwarder that black-holes one DCCP connection of a session: from
//! a given time on it drops, in both directions, every datagram of the first
//! connection it then sees carrying data, and forwards everything else.
//!
//! DCCP runs over UDP here (RFC 6773): every connection of a session shares
//! the one UDP port pair and is told apart by the DCCP ports, the first two
//! 16-bit words of the UDP payload (RFC 4340 §5.1: Source Port, Dest Port).
//! The emulator cannot tell the connections apart; this can.
//!
//! ```text
//! sender ──▶ listen ──[drop the victim's source port]──▶ upstream ──▶ to
//! sender ◀── listen ◀──[drop the victim's dest port]──── upstream ◀── to
//! ```

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use fairstream_proto::wire::dccp::peek_ports;

/// RFC 4340 §5.1: the Type field of the generic header (octet 8, bits
/// 1..=4) of DCCP-Data and DCCP-DataAck, the packets that carry data.
const DCCP_DATA: u8 = 2;
const DCCP_DATA_ACK: u8 = 4;

/// The DCCP source port of a DCCP-UDP payload, if it carries data.
pub(crate) fn data_source_port(payload: &[u8]) -> Option<u16> {
    let packet_type = (payload.get(8)? >> 1) & 0x0f;
    let (source, _) = peek_ports(payload)?;
    matches!(packet_type, DCCP_DATA | DCCP_DATA_ACK).then_some(source)
}

/// What the forwarder did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BlackholeStats {
    /// The sender's DCCP port of the connection black-holed, once chosen.
    pub(crate) port: Option<u16>,
    /// When it was chosen, from the forwarder's start.
    pub(crate) chosen_after: Option<Duration>,
    /// Datagrams forwarded (both directions).
    pub(crate) forwarded: u64,
    /// Datagrams of the victim dropped towards the receiver.
    pub(crate) dropped_forward: u64,
    /// Datagrams to the victim dropped towards the sender.
    pub(crate) dropped_backward: u64,
}

#[derive(Debug)]
struct Shared {
    start: Instant,
    after: Duration,
    client: Option<SocketAddr>,
    stats: BlackholeStats,
}

/// A running forwarder; [`stop`](Self::stop) ends it.
pub(crate) struct Blackhole {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<Shared>>,
    threads: Vec<JoinHandle<()>>,
}

impl Blackhole {
    /// Forwards datagrams arriving on a loopback port to `to` (and the
    /// answers back); `after` its start it black-holes the first connection
    /// seen sending data.
    pub(crate) fn start(to: SocketAddr, after: Duration) -> Blackhole {
        let listen = UdpSocket::bind("127.0.0.1:0").unwrap();
        let upstream = UdpSocket::bind("127.0.0.1:0").unwrap();
        upstream.connect(to).unwrap();
        for socket in [&listen, &upstream] {
            socket
                .set_read_timeout(Some(Duration::from_millis(20)))
                .unwrap();
        }
        let local = listen.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Shared {
            start: Instant::now(),
            after,
            client: None,
            stats: BlackholeStats::default(),
        }));
        let forward = {
            let (from, to) = (listen.try_clone().unwrap(), upstream.try_clone().unwrap());
            let (stop, shared) = (stop.clone(), shared.clone());
            thread::spawn(move || {
                let mut buf = vec![0u8; 65_536];
                while !stop.load(Ordering::Relaxed) {
                    let Ok((len, source)) = from.recv_from(&mut buf) else {
                        continue;
                    };
                    let payload = &buf[..len];
                    let pass = {
                        let mut s = shared.lock().unwrap_or_else(PoisonError::into_inner);
                        s.client = Some(source);
                        let elapsed = s.start.elapsed();
                        if s.stats.port.is_none() && elapsed >= s.after {
                            if let Some(port) = data_source_port(payload) {
                                s.stats.port = Some(port);
                                s.stats.chosen_after = Some(elapsed);
                            }
                        }
                        let victim = s.stats.port.is_some()
                            && peek_ports(payload).map(|(source, _)| source) == s.stats.port;
                        if victim {
                            s.stats.dropped_forward += 1;
                        } else {
                            s.stats.forwarded += 1;
                        }
                        !victim
                    };
                    if pass {
                        // A datagram the kernel refuses is lost, as on a link.
                        let _ = to.send(payload);
                    }
                }
            })
        };
        let backward = {
            let (from, to) = (upstream, listen);
            let (stop, shared) = (stop.clone(), shared.clone());
            thread::spawn(move || {
                let mut buf = vec![0u8; 65_536];
                while !stop.load(Ordering::Relaxed) {
                    let Ok(len) = from.recv(&mut buf) else {
                        continue;
                    };
                    let payload = &buf[..len];
                    let client = {
                        let mut s = shared.lock().unwrap_or_else(PoisonError::into_inner);
                        let victim = s.stats.port.is_some()
                            && peek_ports(payload).map(|(_, dest)| dest) == s.stats.port;
                        if victim {
                            s.stats.dropped_backward += 1;
                            None
                        } else {
                            s.stats.forwarded += 1;
                            s.client
                        }
                    };
                    if let Some(client) = client {
                        let _ = to.send_to(payload, client);
                    }
                }
            })
        };
        Blackhole {
            local,
            stop,
            shared,
            threads: vec![forward, backward],
        }
    }

    /// Where the sender sends.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Stops forwarding; what it did.
    pub(crate) fn stop(self) -> BlackholeStats {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads {
            thread.join().unwrap();
        }
        let shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        shared.stats
    }
}
