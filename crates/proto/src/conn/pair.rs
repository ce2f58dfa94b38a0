//! Two [`Endpoint`]s joined by a tiny in-memory link, in virtual time: for
//! tests, examples and captures of whole sessions.
//!
//! The link has a fixed one-way delay, optional Bernoulli loss, optional
//! reordering (a packet is held back by an extra delay with some
//! probability), an optional filter that drops chosen packets, and an
//! optional ECN filter that rewrites a datagram's codepoint as a marking
//! router would (the codepoint a datagram is sent with is its
//! [`Transmit::ecn`](super::Transmit)). Every
//! random choice comes from a xorshift generator seeded by [`LinkConfig::seed`],
//! so a run is reproducible. Every datagram either endpoint sends can be
//! recorded with its time, direction and fate ([`Pair::captured`]), so that
//! a session can be written to a pcap file
//! ([`PcapWriter`](crate::capture::PcapWriter); use
//! [`ChecksumMode::NativeV4`](super::ChecksumMode) for natively checksummed
//! packets).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use super::endpoint::{ConnectionId, Endpoint, EndpointConfig, EndpointError};
use crate::ecn::Ecn;
use crate::time::Instant;

/// Which way a datagram travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// From the client endpoint to the server endpoint.
    ClientToServer,
    /// From the server endpoint to the client endpoint.
    ServerToClient,
}

/// The link between the two endpoints.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// One-way delay.
    pub delay: Duration,
    /// Probability that a datagram is lost (Bernoulli).
    pub loss: f64,
    /// Probability that a datagram is held back by `reorder_delay`.
    pub reorder: f64,
    /// The extra delay of a held-back datagram.
    pub reorder_delay: Duration,
    /// The generator's seed (zero is replaced by a fixed nonzero value).
    pub seed: u64,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            delay: Duration::from_millis(20),
            loss: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(5),
            seed: 1,
        }
    }
}

/// One datagram sent by either endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// When it was sent.
    pub at: Instant,
    /// Which way.
    pub direction: Direction,
    /// The DCCP packet.
    pub bytes: Vec<u8>,
    /// When it arrives, or `None` if the link dropped it.
    pub arrives: Option<Instant>,
    /// Its ECN codepoint as it arrives (after the ECN filter).
    pub ecn: Ecn,
}

/// xorshift64*: enough for loss and reordering decisions.
#[derive(Clone, Debug)]
struct XorShift(u64);

impl XorShift {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A datagram on its way: arrival, sending order, direction, ECN bits
/// (RFC 3168 §5), bytes.
type InFlight = Reverse<(Instant, u64, Direction, u8, Vec<u8>)>;

/// A drop filter: `true` drops the datagram.
type DropFilter = Box<dyn FnMut(Instant, Direction, &[u8]) -> bool>;

/// An ECN filter: the codepoint a datagram arrives with, given the one it
/// was sent with.
type EcnFilter = Box<dyn FnMut(Instant, Direction, &[u8], Ecn) -> Ecn>;

/// Two endpoints, a link, and virtual time.
pub struct Pair {
    /// The client's endpoint.
    pub client: Endpoint,
    /// The server's endpoint.
    pub server: Endpoint,
    now: Instant,
    link: LinkConfig,
    rng: XorShift,
    in_flight: BinaryHeap<InFlight>,
    order: u64,
    captured: Vec<Captured>,
    record: bool,
    drop_filter: Option<DropFilter>,
    ecn_filter: Option<EcnFilter>,
    stalls: u64,
    buf: Vec<u8>,
}

impl std::fmt::Debug for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pair")
            .field("now", &self.now)
            .field("in_flight", &self.in_flight.len())
            .field("captured", &self.captured.len())
            .finish()
    }
}

impl Pair {
    /// Two endpoints at time zero; the server listens.
    pub fn new(client: EndpointConfig, mut server: EndpointConfig, link: LinkConfig) -> Pair {
        server.listen = true;
        let seed = if link.seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            link.seed
        };
        Pair {
            client: Endpoint::new(client),
            server: Endpoint::new(server),
            now: Instant::ZERO,
            rng: XorShift(seed),
            link,
            in_flight: BinaryHeap::new(),
            order: 0,
            captured: Vec::new(),
            record: false,
            drop_filter: None,
            ecn_filter: None,
            stalls: 0,
            buf: Vec::new(),
        }
    }

    /// The current virtual time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Starts recording every datagram sent ([`captured`](Self::captured)).
    pub fn record(&mut self, on: bool) {
        self.record = on;
    }

    /// The datagrams recorded, in the order they were sent.
    pub fn captured(&self) -> &[Captured] {
        &self.captured
    }

    /// Drops, besides random loss, every datagram for which `filter`
    /// returns `true`.
    pub fn set_drop_filter(
        &mut self,
        filter: impl FnMut(Instant, Direction, &[u8]) -> bool + 'static,
    ) {
        self.drop_filter = Some(Box::new(filter));
    }

    /// Removes the drop filter.
    pub fn clear_drop_filter(&mut self) {
        self.drop_filter = None;
    }

    /// Rewrites the ECN codepoint of every datagram the link delivers to
    /// what `filter` returns, given the codepoint it was sent with (a
    /// marking router sets Congestion Experienced on an ECN-Capable one,
    /// RFC 3168 §5).
    pub fn set_ecn_filter(
        &mut self,
        filter: impl FnMut(Instant, Direction, &[u8], Ecn) -> Ecn + 'static,
    ) {
        self.ecn_filter = Some(Box::new(filter));
    }

    /// How often time had to be pushed on because an endpoint kept asking
    /// for a timeout in the past (a bug if nonzero).
    pub fn stalls(&self) -> u64 {
        self.stalls
    }

    /// Opens a client connection with an ISS from the generator.
    pub fn connect(
        &mut self,
        local_port: u16,
        remote_port: u16,
    ) -> Result<ConnectionId, EndpointError> {
        let iss = self.rng.next_u64();
        let id = self
            .client
            .connect(self.now, local_port, remote_port, iss)?;
        self.flush();
        Ok(id)
    }

    /// Delivers `bytes` to one endpoint now, as if it came over the link
    /// (for attack tests), then flushes what the endpoints send.
    pub fn inject(&mut self, direction: Direction, bytes: &[u8]) {
        let iss = self.rng.next_u64();
        match direction {
            Direction::ClientToServer => self.server.handle_datagram(self.now, bytes, iss),
            Direction::ServerToClient => self.client.handle_datagram(self.now, bytes, iss),
        };
        self.flush();
    }

    /// Sends everything both endpoints have to send into the link.
    pub fn flush(&mut self) {
        let now = self.now;
        let mut buf = std::mem::take(&mut self.buf);
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            loop {
                let endpoint = match direction {
                    Direction::ClientToServer => &mut self.client,
                    Direction::ServerToClient => &mut self.server,
                };
                let Some((_, transmit)) = endpoint.poll_transmit(now, &mut buf) else {
                    break;
                };
                self.send(direction, &buf, transmit.ecn);
            }
        }
        self.buf = buf;
    }

    fn send(&mut self, direction: Direction, bytes: &[u8], sent_ecn: Ecn) {
        let random_loss = self.link.loss > 0.0 && self.rng.next_f64() < self.link.loss;
        let filtered = match &mut self.drop_filter {
            Some(filter) => filter(self.now, direction, bytes),
            None => false,
        };
        let held = self.link.reorder > 0.0 && self.rng.next_f64() < self.link.reorder;
        let arrives = (!random_loss && !filtered).then(|| {
            self.now
                + self.link.delay
                + if held {
                    self.link.reorder_delay
                } else {
                    Duration::ZERO
                }
        });
        let ecn = match (&mut self.ecn_filter, arrives) {
            (Some(filter), Some(_)) => filter(self.now, direction, bytes, sent_ecn),
            _ => sent_ecn,
        };
        if self.record {
            self.captured.push(Captured {
                at: self.now,
                direction,
                bytes: bytes.to_vec(),
                arrives,
                ecn,
            });
        }
        if let Some(at) = arrives {
            self.order += 1;
            self.in_flight.push(Reverse((
                at,
                self.order,
                direction,
                ecn.bits(),
                bytes.to_vec(),
            )));
        }
    }

    /// Advances to the next delivery or timeout, if it is not after
    /// `until`; returns whether anything happened.
    pub fn step(&mut self, until: Instant) -> bool {
        self.flush();
        let delivery = self.in_flight.peek().map(|Reverse((at, ..))| *at);
        let timeout = [self.client.poll_timeout(), self.server.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let Some(next) = [delivery, timeout].into_iter().flatten().min() else {
            self.now = self.now.max(until);
            return false;
        };
        if next > until {
            self.now = self.now.max(until);
            return false;
        }
        if next < self.now {
            // A timeout in the past that handling did not clear.
            self.stalls += 1;
        }
        self.now = self.now.max(next);
        while self
            .in_flight
            .peek()
            .is_some_and(|Reverse((at, ..))| *at <= self.now)
        {
            let Some(Reverse((_, _, direction, ecn, bytes))) = self.in_flight.pop() else {
                break;
            };
            let iss = self.rng.next_u64();
            let now = self.now;
            let ecn = Ecn::from_bits(ecn);
            match direction {
                Direction::ClientToServer => self.server.handle_datagram_ecn(now, &bytes, ecn, iss),
                Direction::ServerToClient => self.client.handle_datagram_ecn(now, &bytes, ecn, iss),
            };
            self.flush();
        }
        if self.client.poll_timeout().is_some_and(|at| at <= self.now) {
            self.client.handle_timeout(self.now);
        }
        if self.server.poll_timeout().is_some_and(|at| at <= self.now) {
            self.server.handle_timeout(self.now);
        }
        self.flush();
        true
    }

    /// Runs until `until`, calling `hook` after every step (to feed data,
    /// read events, or check invariants). A step that does not move time
    /// forward is counted; after 10 000 of them in a row time is pushed on
    /// by a microsecond (and [`stalls`](Self::stalls) counts it).
    pub fn run_with(&mut self, until: Instant, mut hook: impl FnMut(&mut Pair)) {
        self.run_until_with(until, |pair| {
            hook(pair);
            false
        });
    }

    /// Runs until `until`.
    pub fn run_until(&mut self, until: Instant) {
        self.run_with(until, |_| {});
    }

    /// Runs until `done` holds (checked after every step) or `until`;
    /// returns whether `done` held.
    pub fn run_until_with(
        &mut self,
        until: Instant,
        mut done: impl FnMut(&mut Pair) -> bool,
    ) -> bool {
        let mut reached = false;
        let mut same = 0u32;
        while !reached {
            let before = self.now;
            let progressed = self.step(until);
            reached = done(self);
            if !progressed {
                break;
            }
            if self.now == before {
                same += 1;
                if same > 10_000 {
                    self.stalls += 1;
                    self.now += Duration::from_micros(1);
                    same = 0;
                }
            } else {
                same = 0;
            }
        }
        reached
    }
}
