//! The receiver: a proto [`ReceiverSession`] listening on a UDP port, on
//! the real clock; the stream it merges is depacketized back into access
//! units and written out ([`OutputSpec`]).
//!
//! The receiver serves one sender: the first address whose Request opens
//! a connection. Datagrams from other addresses are counted and dropped.
//! It stops when every connection of that sender has closed (after the
//! Close handshake), on `stop`, after `duration`, or when nothing came for
//! `idle_timeout`.

mod assembler;
mod fec;
mod output;
mod player;

use std::collections::BTreeSet;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use fairstream_media::stream::CLOCK_RATE;
use fairstream_proto::conn::{Ccid, ConnectionConfig, ConnectionId, State};
use fairstream_proto::ecn::Ecn;
use fairstream_proto::session::{ReceiverSession, ReorderConfig};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::dccp::peek_ports;
use serde::Serialize;

pub use assembler::LostByType;
pub use fec::FecReceiveStats;
pub use output::{base64, sdp_text, OutputSpec};

use crate::clock::Clock;
use crate::link::{Incoming, UdpLink};
use crate::send::random_u64;
use crate::stats::{connection_figures, human_rate, ConnectionFigures, StatsConfig, StatsSink};
use crate::url::{DccpUrl, UrlError};
use assembler::Assembler;
use output::Output;
use player::Player;

/// The longest the loop sleeps without looking at the stop flag.
const MAX_SLEEP: Duration = Duration::from_millis(20);
/// After the last connection closed, the reorder buffer is given this
/// long to release what it holds.
const DRAIN: Duration = Duration::from_millis(200);
/// The most established connections remembered (to see the sender close).
const MAX_ESTABLISHED: usize = 1024;

/// What [`Receiver`] does.
#[derive(Clone, Debug)]
pub struct RecvConfig {
    /// Where to listen (`dccp://:PORT`).
    pub url: DccpUrl,
    /// Where the stream goes.
    pub output: OutputSpec,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Stop when nothing arrived for this long after the first datagram.
    pub idle_timeout: Duration,
    /// The player model's prebuffer.
    pub prebuffer: Duration,
    /// The most connections held at once.
    pub max_connections: usize,
    /// Statistics.
    pub stats: StatsConfig,
    /// Where a copy of every access unit written goes, for an in-process
    /// consumer such as `fairstream demo` (`None`: nowhere).
    pub access_units: Option<mpsc::Sender<ReceivedAccessUnit>>,
}

/// An access unit as the receiver wrote it, for
/// [`RecvConfig::access_units`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceivedAccessUnit {
    /// The RTP timestamp of its packets (90 kHz, as the sender wrote it:
    /// `fairstream send` numbers frame i as i/fps seconds).
    pub rtp_timestamp: u32,
    /// Its NAL units, without start codes (damaged ones included).
    pub nal_units: Vec<Vec<u8>>,
}

impl RecvConfig {
    /// A configuration with the defaults (10 s idle timeout, 1 s
    /// prebuffer, 64 connections).
    pub fn new(url: DccpUrl, output: OutputSpec) -> RecvConfig {
        RecvConfig {
            url,
            output,
            duration: None,
            idle_timeout: Duration::from_secs(10),
            prebuffer: Duration::from_secs(1),
            max_connections: 64,
            stats: StatsConfig::default(),
            access_units: None,
        }
    }
}

/// Why the receiver failed.
#[derive(Debug, thiserror::Error)]
pub enum RecvError {
    /// The URL is unusable.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// A socket call failed.
    #[error("{what}: {error}")]
    Socket {
        /// What was being done.
        what: String,
        /// The error.
        error: io::Error,
    },
    /// The output could not be written.
    #[error("output: {0}")]
    Output(io::Error),
    /// The statistics file could not be written.
    #[error("statistics: {0}")]
    Stats(io::Error),
}

/// What a run received.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RecvReport {
    /// The sender served.
    pub peer: Option<String>,
    /// Seconds from start to exit.
    pub elapsed_s: f64,
    /// Why it stopped: `closed` (by the sender), `signal`, `duration`,
    /// `idle`.
    pub stopped_by: String,
    /// RTP packets the session delivered.
    pub packets_received: u64,
    /// Bytes of those RTP packets.
    pub bytes_received: u64,
    /// Access units written.
    pub frames_written: u64,
    /// Bytes written (Annex B, start codes included; 0 for RTP output; NAL
    /// unit bytes for a relay).
    pub bytes_written: u64,
    /// Frames complete.
    pub frames_complete: u64,
    /// Frames with packets missing.
    pub frames_damaged: u64,
    /// Frames lost by type, as far as the receiver can tell.
    pub frames_lost: LostByType,
    /// RTP sequence numbers missing.
    pub packets_missing: u64,
    /// The player model's start-up delay, seconds.
    pub startup_delay_s: Option<f64>,
    /// Its stalls.
    pub stalls: u64,
    /// Its time stalled, seconds.
    pub stall_time_s: f64,
    /// Datagrams from addresses other than the sender's, dropped.
    pub foreign_datagrams: u64,
    /// Datagrams the endpoint could not parse.
    pub malformed_datagrams: u64,
    /// Datagrams (RTP packets) that were not H.264 of the stream.
    pub foreign_packets: u64,
    /// The most connections the endpoint held at once.
    pub connections_max: usize,
    /// The largest total of the connections' internal tables seen.
    pub tables_max: usize,
    /// The most datagrams the reorder buffer held.
    pub reorder_max_held: usize,
    /// Gaps the reorder buffer gave up.
    pub reorder_skipped: u64,
    /// What FEC repaired (when the sender added parity).
    pub fec: FecReceiveStats,
}

/// One line of `--stats-json` from the receiver.
#[derive(Debug, Serialize)]
struct RecvStatsLine<'a> {
    time_s: f64,
    role: &'static str,
    connections: usize,
    /// Bits/s of RTP since the previous line.
    receive_rate_bps: f64,
    packets_received: u64,
    bytes_received: u64,
    frames_written: u64,
    bytes_written: u64,
    frames_lost: LostByType,
    buffer_s: f64,
    startup_delay_s: Option<f64>,
    stalls: u64,
    fec: FecReceiveStats,
    conns: &'a [ConnectionFigures],
}

#[derive(Debug, Serialize)]
struct Summary<'a> {
    summary: &'a RecvReport,
}

/// A receiver with its socket bound.
#[derive(Debug)]
pub struct Receiver {
    config: RecvConfig,
    link: UdpLink,
    local: SocketAddr,
}

impl Receiver {
    /// Binds the URL's address.
    pub fn bind(config: RecvConfig) -> Result<Receiver, RecvError> {
        let address = config.url.listen_address()?;
        let socket = UdpSocket::bind(address).map_err(|error| RecvError::Socket {
            what: format!("cannot listen on {address}"),
            error,
        })?;
        let local = socket.local_addr().map_err(|error| RecvError::Socket {
            what: "local address".into(),
            error,
        })?;
        let link = UdpLink::new(socket).map_err(|error| RecvError::Socket {
            what: "cannot start the socket reader".into(),
            error,
        })?;
        Ok(Receiver {
            config,
            link,
            local,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Receives until the sender closes, `stop` is set, the duration or
    /// the idle timeout passes.
    pub fn run(self, stop: &AtomicBool) -> Result<RecvReport, RecvError> {
        let mut connection = ConnectionConfig {
            max_packet_size: self.config.url.transport.max_packet,
            msl: Duration::from_secs(1),
            ..ConnectionConfig::default()
        };
        connection.accepted_ccids = if self.config.url.names_cc() {
            vec![self.config.url.transport.cc]
        } else {
            vec![
                Ccid::Tfrc,
                Ccid::Ccid2,
                Ccid::TfrcSp,
                Ccid::MulTfrcExperimental,
                Ccid::FixedRateExperimental,
            ]
        };
        connection.ccid = connection
            .accepted_ccids
            .first()
            .copied()
            .unwrap_or(Ccid::Tfrc);
        let session = ReceiverSession::new(
            connection,
            self.config.max_connections.max(1),
            ReorderConfig::default(),
        );
        let output = Output::open(&self.config.output).map_err(RecvError::Output)?;
        let sink = StatsSink::open(&self.config.stats).map_err(RecvError::Stats)?;
        let clock = Clock::new();
        let start = clock.now();
        let player = Player::new(self.config.prebuffer);
        RecvRun {
            receiver: self,
            clock,
            start,
            session,
            output,
            sink,
            assembler: Assembler::new(),
            fec: fec::FecDecoder::new(),
            player,
            report: RecvReport::default(),
            peer: None,
            last_source: None,
            last_heard: None,
            buf: Vec::with_capacity(2048),
            accepted: 0,
            established: BTreeSet::new(),
            last_stats: (start, 0),
        }
        .run(stop)
    }
}

/// Binds and runs (see [`Receiver`]).
pub fn run(config: RecvConfig, stop: Arc<AtomicBool>) -> Result<RecvReport, RecvError> {
    Receiver::bind(config)?.run(&stop)
}

struct RecvRun {
    receiver: Receiver,
    clock: Clock,
    start: Instant,
    session: ReceiverSession,
    output: Output,
    sink: StatsSink,
    assembler: Assembler,
    fec: fec::FecDecoder,
    player: Player,
    report: RecvReport,
    peer: Option<SocketAddr>,
    last_source: Option<SocketAddr>,
    last_heard: Option<Instant>,
    buf: Vec<u8>,
    accepted: u64,
    established: BTreeSet<ConnectionId>,
    /// Time and bytes received at the previous statistics line.
    last_stats: (Instant, u64),
}

impl RecvRun {
    fn run(mut self, stop: &AtomicBool) -> Result<RecvReport, RecvError> {
        let interval = self.receiver.config.stats.interval;
        let mut next_stats = interval.map(|i| self.start + i);
        let mut ending: Option<(Instant, &'static str)> = None;
        loop {
            let now = self.clock.now();
            if let Some((since, _)) = ending {
                if now - since >= DRAIN {
                    break;
                }
            } else if let Some(reason) = self.stop_reason(now, stop) {
                ending = Some((now, reason));
                self.report.stopped_by = reason.into();
            }
            if self.session.poll_timeout().is_some_and(|t| t <= now) {
                self.session.handle_timeout(now);
            }
            self.transmit(now);
            self.deliver(now)?;
            self.observe();
            if let Some(at) = next_stats.filter(|t| *t <= now) {
                self.stats_line(now)?;
                next_stats = interval.map(|i| (at + i).max(now));
            }
            // Nothing here is paced: feedback and acknowledgement timers
            // may fire a few tens of microseconds late (the sender takes
            // the receiver's delay out of its RTT samples, RFC 4342 §8.2),
            // so the receiver sleeps rather than spin before them. Spinning
            // cost it a spin per feedback, once per RTT, and on a shared
            // machine took the sender's core (pacing benchmark,
            // `docs/performance.md`).
            let deadline = [
                self.session.poll_timeout(),
                next_stats,
                Some(now + MAX_SLEEP),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(now + MAX_SLEEP);
            let mut incoming = self.receiver.link.wait_coarse(&self.clock, deadline);
            while let Some(message) = incoming {
                if let Incoming::Datagram(from, bytes, ecn) = message {
                    self.datagram(from, &bytes, ecn);
                }
                // Errors of an unconnected socket (ICMP from a sender that
                // went away) are not fatal: the sender's connections time
                // out.
                incoming = self.receiver.link.try_recv();
            }
        }
        self.finish()
    }

    fn stop_reason(&self, now: Instant, stop: &AtomicBool) -> Option<&'static str> {
        let config = &self.receiver.config;
        if stop.load(Ordering::Relaxed) {
            return Some("signal");
        }
        if config.duration.is_some_and(|d| now - self.start >= d) {
            return Some("duration");
        }
        if self
            .last_heard
            .is_some_and(|t| now - t >= config.idle_timeout)
        {
            return Some("idle");
        }
        // The sender closed: every connection that was established has
        // left OPEN (half-open ones, such as forged Requests, do not count).
        let endpoint = self.session.endpoint();
        let open = self.established.iter().any(|id| {
            endpoint
                .connection(*id)
                .is_some_and(|c| c.state() < State::CloseReq)
        });
        (!self.established.is_empty() && !open).then_some("closed")
    }

    /// A datagram from `from` that arrived with the ECN codepoint `ecn` (RFC
    /// 4340 §12.1: this receiver reads the ECN bits, so it leaves ECN
    /// Incapable at 0 and its CCID counts CE marks as losses).
    fn datagram(&mut self, from: SocketAddr, bytes: &[u8], ecn: Ecn) {
        if self.peer.is_some_and(|p| p != from) {
            self.report.foreign_datagrams += 1;
            return;
        }
        let now = self.clock.now();
        self.last_source = Some(from);
        let iss = random_u64(now.as_nanos());
        self.session.handle_datagram_ecn(now, bytes, ecn, iss);
        let accepted = self.session.endpoint().stats().accepted;
        if accepted > self.accepted {
            self.accepted = accepted;
            if self.peer.is_none() {
                self.peer = Some(from);
                // The connection that made the sender known counts as
                // established even if it closes before reaching OPEN.
                if let Some((remote_port, local_port)) = peek_ports(bytes) {
                    self.established.insert(ConnectionId {
                        local_port,
                        remote_port,
                    });
                }
            }
        }
        if self.peer == Some(from) {
            self.last_heard = Some(now);
        }
        self.observe();
    }

    fn transmit(&mut self, now: Instant) {
        let Some(to) = self.peer.or(self.last_source) else {
            while self.session.poll_transmit(now, &mut self.buf).is_some() {}
            return;
        };
        while let Some(transmit) = self.session.poll_transmit(now, &mut self.buf) {
            let bytes = self.buf.get(..transmit.len).unwrap_or(&self.buf);
            // A lost feedback packet is what DCCP is built to survive.
            let _ = self.receiver.link.send_to_ecn(bytes, to, transmit.ecn);
        }
    }

    /// Reads the merged stream and writes complete access units.
    fn deliver(&mut self, now: Instant) -> Result<(), RecvError> {
        while let Some(packet) = self.session.recv() {
            self.report.packets_received += 1;
            self.report.bytes_received += packet.len() as u64;
            let ready = self.fec.push(now, packet);
            self.assemble(now, ready)?;
        }
        let ready = self.fec.poll(now);
        self.assemble(now, ready)?;
        self.player.tick(now, false);
        Ok(())
    }

    /// Writes and assembles the data packets FEC released.
    fn assemble(&mut self, now: Instant, packets: Vec<Vec<u8>>) -> Result<(), RecvError> {
        for packet in packets {
            self.output.rtp_packet(&packet).map_err(RecvError::Output)?;
            let completed = self.assembler.push(&packet);
            self.write(now, completed)?;
        }
        Ok(())
    }

    fn write(
        &mut self,
        now: Instant,
        completed: Vec<assembler::Completed>,
    ) -> Result<(), RecvError> {
        for unit in completed {
            let media_end = unit.timestamp as f64 / CLOCK_RATE
                + self.assembler.frame_interval_s().unwrap_or(0.04);
            // A copy for an in-process consumer, taken before the output
            // consumes the unit.
            let tapped = self
                .receiver
                .config
                .access_units
                .as_ref()
                .map(|_| ReceivedAccessUnit {
                    rtp_timestamp: self.assembler.rtp_timestamp(unit.timestamp),
                    nal_units: unit.nal_units.clone(),
                });
            let written = self
                .output
                .access_unit(unit, self.assembler.parameter_sets())
                .map_err(RecvError::Output)?;
            self.report.frames_written += 1;
            self.report.bytes_written += written;
            self.player.on_frame(now, media_end);
            if let (Some(tap), Some(unit)) = (&self.receiver.config.access_units, tapped) {
                // A consumer that went away wants no more.
                let _ = tap.send(unit);
            }
        }
        Ok(())
    }

    /// Keeps the bounds the hostile-input tests check, and the
    /// connections that were established.
    fn observe(&mut self) {
        let endpoint = self.session.endpoint();
        for id in endpoint.connection_ids() {
            if endpoint
                .connection(id)
                .is_some_and(|c| c.state() == State::Open)
                && self.established.len() < MAX_ESTABLISHED
            {
                self.established.insert(id);
            }
        }
        self.report.connections_max = self.report.connections_max.max(endpoint.len());
        let tables: usize = endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .map(|c| c.table_sizes().iter().sum::<usize>())
            .sum();
        self.report.tables_max = self.report.tables_max.max(tables);
    }

    fn stats_line(&mut self, now: Instant) -> Result<(), RecvError> {
        let conns = connection_figures(self.session.endpoint());
        let time_s = (now - self.start).as_secs_f64();
        // The rate since the previous line.
        let (last_time, last_bytes) = self.last_stats;
        let rate = (self.report.bytes_received - last_bytes) as f64 * 8.0
            / (now - last_time).as_secs_f64().max(1e-9);
        self.last_stats = (now, self.report.bytes_received);
        let buffer_s = self.player.buffer_s(now);
        let lost = self.assembler.lost;
        let line = format!(
            "{time_s:7.1}s recv: {} conns, {} packets, {} frames written, lost I {} P {} B {} ? {}, buffer {:.2} s, stalls {}, {}",
            conns.len(),
            self.report.packets_received,
            self.report.frames_written,
            lost.by_type.i,
            lost.by_type.p,
            lost.by_type.b,
            lost.unknown,
            buffer_s,
            self.player.stalls,
            human_rate(rate),
        );
        if let Some(relay) = self.output.relay() {
            let report = &self.report;
            relay.publish(|p| {
                p.upstream = conns.clone();
                p.upstream_packets = report.packets_received;
                p.upstream_bytes = report.bytes_received;
            });
        }
        let record = RecvStatsLine {
            time_s,
            role: "recv",
            connections: conns.len(),
            receive_rate_bps: rate,
            packets_received: self.report.packets_received,
            bytes_received: self.report.bytes_received,
            frames_written: self.report.frames_written,
            bytes_written: self.report.bytes_written,
            frames_lost: lost,
            buffer_s,
            startup_delay_s: self.player.startup_delay_s,
            stalls: self.player.stalls,
            fec: self.fec.stats,
            conns: &conns,
        };
        self.sink.report(&line, &record).map_err(RecvError::Stats)
    }

    fn finish(mut self) -> Result<RecvReport, RecvError> {
        let now = self.clock.now();
        let ready = self.fec.finish(now);
        self.assemble(now, ready)?;
        let tail = self.assembler.finish();
        self.write(now, tail)?;
        self.output.flush().map_err(RecvError::Output)?;
        if let Some(relay) = self.output.relay() {
            // The relay's sender drains what is left, then closes.
            relay.end();
        }
        self.player.tick(now, true);
        let session_stats = self.session.stats();
        let report = &mut self.report;
        report.peer = self.peer.map(|p| p.to_string());
        report.elapsed_s = self.clock.elapsed().as_secs_f64();
        report.frames_complete = self.assembler.frames_complete;
        report.frames_damaged = self.assembler.frames_damaged;
        report.frames_lost = self.assembler.lost;
        report.packets_missing = self.assembler.missing_packets();
        report.foreign_packets = self.assembler.foreign_packets;
        report.startup_delay_s = self.player.startup_delay_s;
        report.stalls = self.player.stalls;
        report.stall_time_s = self.player.stall_time.as_secs_f64();
        report.malformed_datagrams =
            self.session.endpoint().stats().malformed_dropped + session_stats.malformed;
        report.reorder_max_held = session_stats.reorder.max_held;
        report.reorder_skipped = session_stats.reorder.skipped;
        report.fec = self.fec.stats;
        let line = format!(
            "recv done ({}): {} frames written ({} bytes), {} complete, {} damaged, {} packets",
            report.stopped_by,
            report.frames_written,
            report.bytes_written,
            report.frames_complete,
            report.frames_damaged,
            report.packets_received,
        );
        self.sink
            .report(
                &line,
                &Summary {
                    summary: &self.report,
                },
            )
            .map_err(RecvError::Stats)?;
        Ok(self.report)
    }
}
