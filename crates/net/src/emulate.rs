//! A link emulator for real UDP traffic: datagrams from clients at a
//! listening address cross the simulator's own link model (queue, capacity,
//! propagation delay, channel loss; `fairstream_sim::link`) driven by the
//! real clock, and go on to an upstream address; the upstream's replies cross
//! a second, independent direction back to the client they answer.
//!
//! ```text
//! client ──▶ listen ═[forward: queue → rate → loss → delay]═▶ upstream socket ──▶ --to
//! client ◀── listen ◀═[backward: queue → rate → loss → delay]═ upstream socket ◀── --to
//! ```
//!
//! Each client address gets its own upstream socket and receiving thread
//! (so replies find their way back, as through a NAT); the table of clients
//! is bounded ([`EmulatorConfig::max_clients`]), and so is every buffer: the
//! queues by their limits, the delay lines by
//! [`DirectionConfig::max_in_flight_bytes`], the hand-over from the receiving
//! threads by a bounded channel.
//!
//! The client table holds against a flood from many source ports (issue
//! 13). A client the upstream has answered is never displaced by a
//! newcomer; a client with nothing crossing for it, either way, for
//! [`EmulatorConfig::client_idle`] is forgotten; a newcomer finding the
//! table full takes the place of a client never answered (a stranger) that
//! has had [`EmulatorConfig::stranger_grace`] to be answered, or else is
//! refused and its datagrams dropped
//! ([`EmulatorStats::refused_datagrams`]). The receiving threads, the
//! table's and those of forgotten clients still ending, are at most twice
//! the table's capacity.
//!
//! Use it in-process (tests, a demo) with [`Emulator::bind`] and then
//! [`Emulator::spawn`], or block in [`Emulator::run`]; `fairstream emulate`
//! is the command-line front end.
//!
//! ```no_run
//! use fairstream_net::emulate::{DirectionConfig, Emulator, EmulatorConfig};
//! use fairstream_sim::link::Capacity;
//! use fairstream_sim::loss::LossConfig;
//! use std::time::Duration;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut config = EmulatorConfig::new("127.0.0.1:0".parse()?, "127.0.0.1:9000".parse()?);
//! config.forward = DirectionConfig {
//!     capacity: Some(Capacity::Fixed("2mbit".parse()?)),
//!     delay: Duration::from_millis(40),
//!     loss: LossConfig::Bernoulli { p: 0.02 },
//!     ..DirectionConfig::default()
//! };
//! config.backward.delay = Duration::from_millis(40);
//! let emulator = Emulator::bind(config)?.spawn()?;
//! println!("send to {}", emulator.local_addr());
//! // … traffic …
//! let stats = emulator.stop()?;
//! println!("lost {} on the channel", stats.forward.channel_losses);
//! # Ok(())
//! # }
//! ```

mod clients;
mod clock;
mod direction;
mod engine;
mod parse;
mod receive;
mod stats;
mod table;

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use fairstream_proto::time::Instant;
use fairstream_sim::link::{Capacity, LinkConfig, LinkError};
use fairstream_sim::loss::LossConfig;
use fairstream_sim::network::{RED_TRACE_IDLE_PACKET_TIME, RED_TYPICAL_PACKET_BYTES};
use fairstream_sim::queue::QueueConfig;
use fairstream_sim::rng::SimRng;
use fairstream_sim::scenario::DEFAULT_OVERHEAD;
use thiserror::Error;

pub use parse::{
    parse_client_idle, parse_delay, parse_loss, parse_outage, parse_positive_duration, parse_queue,
    parse_rate, OptionError, DEFAULT_QUEUE, MIN_CLIENT_IDLE,
};
pub use stats::{DirectionStats, EmulatorStats};

use clients::Clients;
use clock::Clock;
use direction::Direction;
use engine::Engine;
use table::TablePolicy;

/// The cap on the bytes a direction's delay line holds when not configured:
/// 64 MiB, a second of 500 Mbit/s. A rate-limited direction holds at most
/// rate × delay; the cap matters for an unlimited one.
pub const DEFAULT_MAX_IN_FLIGHT_BYTES: u64 = 64 << 20;

/// Client addresses remembered at once when not configured.
pub const DEFAULT_MAX_CLIENTS: usize = 64;

/// How long a client with nothing crossing for it, either way, keeps its
/// place when not configured: a minute. fairstream's own peers give up on a
/// silent peer far sooner (after 4 s or 8 round trips by default,
/// [`crate::peer`]), so a flow quiet for a minute is over. (RFC 4787 REQ-5
/// asks a NAT for at least two minutes, for applications that keep a
/// mapping alive with rare keep-alives; raise it to emulate such a NAT.)
pub const DEFAULT_CLIENT_IDLE: Duration = Duration::from_secs(60);

/// How long a new client keeps its place against newcomers before an
/// answer has come back for it, when not configured (see
/// [`EmulatorConfig::stranger_grace`]).
pub const DEFAULT_STRANGER_GRACE: Duration = Duration::from_secs(1);

/// How long before a deadline the engine stops sleeping and polls, when not
/// configured (see [`EmulatorConfig::spin`]). Measured on a loaded two-core
/// machine at 10 Mbit/s through a 20 Mbit/s link (`tests/emulate_measure.rs`
/// `timer_precision`): without polling datagrams left 100-170 µs late on
/// average for 6 % of a core; with 100 µs, 30-90 µs for 12 %; longer polls
/// cost more (30 % of a core at 200 µs) without leaving earlier, as the
/// polling thread then competes with the receiving ones.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(100);

/// The seed when not configured (the simulator's default, so that
/// `fairstream simulate` and `fairstream emulate` draw alike by default).
pub const DEFAULT_SEED: u64 = fairstream_sim::scenario::DEFAULT_SEED;

/// One direction of the emulated link.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectionConfig {
    /// The transmitter's capacity: a fixed rate or a mahimahi trace. `None`
    /// is no limit at all: the direction then only loses and delays, and
    /// `queue` is unused.
    pub capacity: Option<Capacity>,
    /// One-way propagation delay, added after serialisation.
    pub delay: Duration,
    /// Bytes added to each datagram's size on the link (IPv4 + UDP headers
    /// by default, [`DEFAULT_OVERHEAD`], as the simulator does); they cost
    /// serialisation time, not queue space.
    pub overhead_bytes: u32,
    /// The queue in front of the transmitter.
    pub queue: QueueConfig,
    /// Channel loss, judged as each datagram finishes serialisation.
    pub loss: LossConfig,
    /// The most payload bytes waiting out the propagation delay; beyond it
    /// datagrams are dropped ([`DirectionStats::overflow_drops`]).
    pub max_in_flight_bytes: u64,
    /// Times the link is cut: from `start` after the emulator started, for
    /// `length`, every datagram offered is dropped
    /// ([`DirectionStats::outage_drops`]), as when a radio link or a cable
    /// goes (to try how a bonded stream survives losing a path).
    pub outages: Vec<Outage>,
}

/// A time the link is cut ([`DirectionConfig::outages`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    /// When it begins, after the emulator started.
    pub start: Duration,
    /// How long it lasts.
    pub length: Duration,
}

impl Default for DirectionConfig {
    /// No capacity limit, no delay, no loss; the simulator's default overhead
    /// and queue.
    fn default() -> Self {
        DirectionConfig {
            capacity: None,
            delay: Duration::ZERO,
            overhead_bytes: DEFAULT_OVERHEAD.get() as u32,
            queue: DEFAULT_QUEUE,
            loss: LossConfig::None,
            max_in_flight_bytes: DEFAULT_MAX_IN_FLIGHT_BYTES,
            outages: Vec::new(),
        }
    }
}

impl DirectionConfig {
    /// The simulator link this direction runs, or `None` without a
    /// capacity. RED's typical packet time s is set as the simulator sets
    /// it (`fairstream_sim::network`): (1500 B + overhead) / rate on a
    /// fixed-rate link, 1 ms on a trace.
    pub fn link_config(&self) -> Option<LinkConfig> {
        let capacity = self.capacity.clone()?;
        let mut queue = self.queue;
        if let QueueConfig::Red {
            idle_packet_time, ..
        } = &mut queue
        {
            *idle_packet_time = match &capacity {
                Capacity::Fixed(rate) => rate
                    .time_to_send(
                        (RED_TYPICAL_PACKET_BYTES + u64::from(self.overhead_bytes)) as f64,
                    )
                    .filter(|time| !time.is_zero())
                    .unwrap_or(RED_TRACE_IDLE_PACKET_TIME),
                Capacity::Trace(_) => RED_TRACE_IDLE_PACKET_TIME,
            };
        }
        Some(LinkConfig {
            capacity,
            delay: self.delay,
            overhead_bytes: self.overhead_bytes,
            queue,
            loss: self.loss,
            delay_change: None,
            outage: None,
        })
    }
}

/// Everything the emulator needs.
#[derive(Clone, Debug, PartialEq)]
pub struct EmulatorConfig {
    /// Where clients send (port 0: any free port, see
    /// [`Emulator::local_addr`]).
    pub listen: SocketAddr,
    /// Where their datagrams go.
    pub upstream: SocketAddr,
    /// Client → upstream.
    pub forward: DirectionConfig,
    /// Upstream → client.
    pub backward: DirectionConfig,
    /// The seed of the loss models and RED; each direction draws from its
    /// own stream ([`SimRng::for_element`]).
    pub seed: u64,
    /// Client addresses remembered at once (at least 1). A new client
    /// beyond them takes the place of an idle client, or of a stranger past
    /// its grace, or is refused; never that of an answered client.
    pub max_clients: usize,
    /// A client with nothing crossing for it, either way, for this long is
    /// forgotten (its socket closed, its thread stopped and joined), at most
    /// about 120 ms late. The command line takes 1 s to a day
    /// ([`parse_client_idle`]).
    pub client_idle: Duration,
    /// How long a client nothing has yet come back for (a stranger) keeps
    /// its place against newcomers: long enough for an answer. The emulator
    /// uses at least twice the configured round-trip delay (forward plus
    /// backward), so that an answer crossing a slow emulated link arrives
    /// in time.
    pub stranger_grace: Duration,
    /// How long before a deadline the engine stops sleeping and polls:
    /// longer is more punctual and costs more processor time.
    pub spin: Duration,
}

impl EmulatorConfig {
    /// An emulator from `listen` to `upstream` that changes nothing (both
    /// directions unlimited, without delay or loss) until configured.
    pub fn new(listen: SocketAddr, upstream: SocketAddr) -> EmulatorConfig {
        EmulatorConfig {
            listen,
            upstream,
            forward: DirectionConfig::default(),
            backward: DirectionConfig::default(),
            seed: DEFAULT_SEED,
            max_clients: DEFAULT_MAX_CLIENTS,
            client_idle: DEFAULT_CLIENT_IDLE,
            stranger_grace: DEFAULT_STRANGER_GRACE,
            spin: DEFAULT_SPIN,
        }
    }
}

/// Why the emulator could not start or stopped.
#[derive(Debug, Error)]
pub enum EmulatorError {
    /// The listening socket could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// A direction's link description cannot work.
    #[error("the {direction} direction: {source}")]
    Link {
        /// `forward` or `backward`.
        direction: &'static str,
        /// What is wrong with it.
        #[source]
        source: LinkError,
    },
    /// The upstream address is the emulator's own: every datagram would
    /// come back to it and be forwarded again, forever (issue 13).
    #[error("--to {upstream} is the emulator's own listening address {listen}: it would forward to itself")]
    Loop {
        /// The upstream address asked for.
        upstream: SocketAddr,
        /// The address the emulator listens on.
        listen: SocketAddr,
    },
    /// A socket or thread operation failed.
    #[error("emulator: {0}")]
    Io(#[from] io::Error),
    /// The emulator's thread panicked (a bug).
    #[error("the emulator thread panicked")]
    Panicked,
}

/// A bound emulator, not yet forwarding.
pub struct Emulator {
    engine: Engine,
    local_addr: SocketAddr,
}

impl Emulator {
    /// Binds the listening socket and builds both link directions (their
    /// clock, and a trace's schedule, start now).
    pub fn bind(config: EmulatorConfig) -> Result<Emulator, EmulatorError> {
        let listen = UdpSocket::bind(config.listen).map_err(|source| EmulatorError::Bind {
            address: config.listen,
            source,
        })?;
        let local_addr = listen.local_addr()?;
        let upstream = config.upstream;
        let same_host = upstream.ip() == local_addr.ip()
            || (local_addr.ip().is_unspecified()
                && (upstream.ip().is_loopback() || upstream.ip().is_unspecified()));
        if upstream.port() == local_addr.port() && same_host {
            return Err(EmulatorError::Loop {
                upstream,
                listen: local_addr,
            });
        }
        let clock = Clock::start();
        let now: Instant = clock.now();
        let direction = |name: &'static str, direction: &DirectionConfig| {
            let rng = SimRng::for_element(config.seed, &format!("emulate:{name}"));
            Direction::new(direction, rng, now).map_err(|source| EmulatorError::Link {
                direction: name,
                source,
            })
        };
        let forward = direction("forward", &config.forward)?;
        let backward = direction("backward", &config.backward)?;
        Ok(Emulator {
            engine: Engine {
                clock,
                listen: Arc::new(crate::ecn::EcnSocket::new(listen)?),
                forward,
                backward,
                clients: Clients::new(
                    config.upstream,
                    TablePolicy {
                        capacity: config.max_clients,
                        idle: config.client_idle,
                        stranger_grace: config.stranger_grace.max(
                            config
                                .forward
                                .delay
                                .saturating_add(config.backward.delay)
                                .saturating_mul(2),
                        ),
                    },
                ),
                spin: config.spin,
            },
            local_addr,
        })
    }

    /// The address clients send to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Forwards on this thread until `stop` is set (checked at least every
    /// 20 ms); returns the final counters.
    pub fn run(self, stop: &AtomicBool) -> Result<EmulatorStats, EmulatorError> {
        Ok(self.engine.run(stop, &mut |_| {})?)
    }

    /// Forwards on a new thread; the handle reads the counters and stops it.
    pub fn spawn(self) -> Result<EmulatorHandle, EmulatorError> {
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(self.engine.stats()));
        let thread = {
            let stop = Arc::clone(&stop);
            let shared = Arc::clone(&stats);
            thread::Builder::new()
                .name("emulate".to_owned())
                .spawn(move || {
                    let mut publish = |now: &EmulatorStats| {
                        *shared.lock().unwrap_or_else(PoisonError::into_inner) = *now;
                    };
                    Ok(self.engine.run(&stop, &mut publish)?)
                })?
        };
        Ok(EmulatorHandle {
            local_addr: self.local_addr,
            stop,
            stats,
            thread: Some(thread),
        })
    }
}

/// A running emulator. Dropping it stops it too (and waits for it).
pub struct EmulatorHandle {
    local_addr: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<EmulatorStats>>,
    thread: Option<JoinHandle<Result<EmulatorStats, EmulatorError>>>,
}

impl EmulatorHandle {
    /// The address clients send to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The counters: about a millisecond old while traffic flows, up to
    /// 20 ms when idle.
    pub fn stats(&self) -> EmulatorStats {
        *self.stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the emulator is still forwarding.
    pub fn is_running(&self) -> bool {
        self.thread
            .as_ref()
            .is_some_and(|thread| !thread.is_finished())
    }

    /// Stops forwarding (within about 20 ms) and returns the final counters.
    pub fn stop(mut self) -> Result<EmulatorStats, EmulatorError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<EmulatorStats, EmulatorError> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(thread) => thread.join().map_err(|_| EmulatorError::Panicked)?,
            None => Ok(self.stats()),
        }
    }
}

impl Drop for EmulatorHandle {
    fn drop(&mut self) {
        // Errors were the caller's to collect with `stop`.
        let _ = self.finish();
    }
}
