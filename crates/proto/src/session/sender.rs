//! The sending side of a multi-connection session.

use std::collections::VecDeque;
use std::time::Duration;

use super::arq::{
    extend_pid, ArqConfig, DatagramMeta, ResendQueue, SenderArqStats, SentStore, Stored,
    SESSION_SSRC,
};

mod recovery;
use super::{SessionHeader, SEQUENCE_MODULUS, SESSION_HEADER_BYTES};
use crate::buffers::Shared;
use crate::cc::multi::{ConnectionCountConfig, ConnectionCounter, MultiConfigError, Report};
use crate::conn::{
    ConnectionConfig, ConnectionId, Endpoint, EndpointConfig, Event, State, Transmit,
};
use crate::ecn::Ecn;
use crate::time::Instant;
use crate::units::Rate;

/// How datagrams are dealt to connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitPolicy {
    /// Whole GOPs to connections in turn (paper 000 §3.6).
    GopInterleave,
    /// Each datagram to the connection that can send it soonest (its queue
    /// divided by its allowed rate), which keeps the receiver's reordering
    /// small.
    Earliest,
}

/// Configuration of a [`SenderSession`].
#[derive(Clone, Debug, PartialEq)]
pub struct SessionConfig {
    /// Every connection's configuration.
    pub connection: ConnectionConfig,
    /// How many connections. Default: the default controller
    /// ([`ConnectionCountConfig::default`], adaptive).
    pub count: ConnectionCountConfig,
    /// How datagrams are split.
    pub policy: SplitPolicy,
    /// The least time between opening two connections (paper 000 used
    /// 0.5 s). Default 0.5 s.
    pub start_offset: Duration,
    /// Connection i's local DCCP port is this plus i.
    pub local_port: u16,
    /// The receiver's DCCP port.
    pub remote_port: u16,
    /// Datagrams the session queue holds. Default 1024.
    pub queue_datagrams: usize,
    /// Datagrams handed to one connection ahead of its sending, so the
    /// split is decided late. Default 4.
    pub per_connection_depth: usize,
    /// A `TargetBitrate` event is published when the aggregate allowed rate
    /// moved by more than this share since the last one. Default 0.1.
    pub target_hysteresis: f64,
    /// Seed of the connections' initial sequence numbers (the driver draws
    /// it from its generator; RFC 4340 §7.2).
    pub iss_seed: u64,
    /// Retransmission of what the receiver asks for ([`ArqConfig`]).
    pub arq: ArqConfig,
    /// A connection given data that answers nothing for this many smoothed
    /// RTTs (and at least [`dead_after_min`](Self::dead_after_min)) is
    /// dead, when others remain: it is reset, what it was given since it
    /// last answered goes to the others, and another opens if the count
    /// asks for it. Default 4.
    pub dead_after_rtts: u32,
    /// The least silence that makes a connection dead. Default 500 ms.
    pub dead_after_min: Duration,
    /// Network paths the session bonds (issue 19): each has its own
    /// connections, their own TFRC state, and its own connection count
    /// (a controller built from [`count`](Self::count) for each). The
    /// driver sends each packet on the path
    /// [`poll_transmit_on`](SenderSession::poll_transmit_on) names and
    /// tells [`handle_datagram_on`](SenderSession::handle_datagram_on)
    /// which path a datagram came from. Datagrams go to the connection
    /// that delivers them soonest, counting each path's one-way delay.
    /// Default 1.
    pub paths: usize,
    /// A bonded session sends each key datagram (an I frame's,
    /// [`DatagramMeta::key`]) a second time, on the best connection of
    /// another path, as SRT's broadcast groups send everything, but only
    /// for the frames that matter. Default off.
    pub duplicate_key: bool,
    /// Paths known to share a bottleneck (issue 19): `shared[i]` is path
    /// i's group, paths of one group share, `None` shares with no other.
    /// Empty: no path shares. The session is then no more aggressive on a
    /// shared bottleneck than one session: each connection of a path whose
    /// group has k paths up runs TFRC's equation for 1/k of a flow
    /// (MulTFRC's fractional n, [`Connection::set_tfrc_flows`]), the
    /// adaptive controller's target is cut to 1/k, and a path that goes
    /// down gives its share back to the others.
    ///
    /// [`Connection::set_tfrc_flows`]: crate::conn::Connection::set_tfrc_flows
    pub shared: Vec<Option<usize>>,
}

/// The most paths one session bonds.
pub const MAX_PATHS: usize = 8;

/// The longest a bonded session waits between two Requests on a path that
/// is down while another is up: the path is back within about this of
/// answering again.
pub const DOWN_PATH_PROBE: Duration = Duration::from_secs(1);

/// The least silence after data that makes a bonded session's connection
/// suspect (it gets no new data while others answer).
const SUSPECT_AFTER_MIN: Duration = Duration::from_millis(150);

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            connection: ConnectionConfig::default(),
            count: ConnectionCountConfig::default(),
            policy: SplitPolicy::Earliest,
            start_offset: Duration::from_millis(500),
            local_port: 40_000,
            remote_port: 5004,
            queue_datagrams: 1024,
            per_connection_depth: 4,
            target_hysteresis: 0.1,
            iss_seed: 1,
            arq: ArqConfig::default(),
            dead_after_rtts: 4,
            dead_after_min: Duration::from_millis(500),
            paths: 1,
            duplicate_key: false,
            shared: Vec::new(),
        }
    }
}

/// What the session tells its application.
#[derive(Clone, Debug, PartialEq)]
pub enum SessionEvent {
    /// The rate the open connections together allow changed by more than
    /// the hysteresis: what an encoder should aim for.
    TargetBitrate(Rate),
    /// The number of open connections changed.
    ConnectionsChanged {
        /// Connections open (or opening) now.
        open: usize,
    },
    /// A connection failed (handshake timeout or reset); the session goes
    /// on with the others and opens another if the count asks for it.
    ConnectionLost {
        /// Its local port.
        port: u16,
    },
    /// A path of a bonded session lost its last open connection (it fell
    /// silent, or its handshakes failed): the session sends on the others
    /// and keeps opening connections on it, which brings it back when it
    /// answers again.
    PathDown {
        /// Its index.
        path: usize,
    },
    /// A path that was down has an open connection again.
    PathUp {
        /// Its index.
        path: usize,
    },
}

/// Why [`SenderSession::send`] refused a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionSendError {
    /// The session queue is full.
    #[error("session queue full ({0} datagrams)")]
    QueueFull(usize),
    /// The datagram does not fit one packet with the session header.
    #[error("datagram of {len} bytes exceeds the {max}-byte limit")]
    TooBig {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
}

#[derive(Clone, Copy, Debug)]
struct SenderConn {
    id: ConnectionId,
    /// The path it runs on.
    path: usize,
    closing: bool,
    /// Packets received from the peer on it when last looked.
    heard: u64,
    /// How far back a failover would resend what it was given: two RTTs
    /// before it last answered, never moving back (see
    /// [`watch_connections`](SenderSession::watch_connections)). What it
    /// was given before is out of every repair's reach once retransmission
    /// is off.
    reach_back: Instant,
    /// Since when it has had data and heard nothing.
    unanswered_since: Option<Instant>,
    /// What it was given was resent on the other paths when it went
    /// suspect; cleared when it answers again.
    hedged: bool,
}

impl SenderConn {
    fn new(id: ConnectionId, path: usize, now: Instant) -> SenderConn {
        SenderConn {
            id,
            path,
            closing: false,
            heard: 0,
            // Nothing was given to it before it opened.
            reach_back: now,
            unanswered_since: None,
            hedged: false,
        }
    }
}

/// What the session keeps for each path.
#[derive(Debug)]
struct Path {
    counter: ConnectionCounter,
    next_open: Instant,
    next_sample: Option<Instant>,
    /// The feedback count of the connection the adaptive controller last
    /// took a sample from (a new sample is one with a higher count).
    last_feedback: Option<(ConnectionId, u64)>,
    /// The CE marks that connection had reported by then.
    last_ecn_marks: u64,
    /// It had an open connection, and has none now.
    down: bool,
    /// It has had an open connection.
    opened: bool,
    /// Its share of its shared bottleneck (1 when it shares none).
    weight: f64,
}

/// A datagram waiting in the session queue.
#[derive(Clone, Debug)]
struct Queued {
    datagram: Shared,
    meta: DatagramMeta,
    seq: u64,
}

/// The sender of one stream over several connections.
#[derive(Debug)]
pub struct SenderSession {
    config: SessionConfig,
    endpoint: Endpoint,
    /// One per path; path 0 is the only one of an unbonded session.
    paths: Vec<Path>,
    /// The path of every connection the endpoint may still send for
    /// (closing ones included).
    path_of: std::collections::BTreeMap<ConnectionId, usize>,
    conns: Vec<SenderConn>,
    /// Ports in use (by open or closing connections).
    next_port: u16,
    queue: VecDeque<Queued>,
    /// The next session sequence number (its low 32 bits go on the wire).
    next_seq: u64,
    /// What was sent, for resending.
    store: SentStore,
    /// Retransmissions waiting for a connection.
    resend: ResendQueue,
    arq_stats: SenderArqStats,
    /// The last datagram handed to a connection, and when; whether its
    /// tail-loss probe went.
    last_dispatch: Option<(Instant, u64)>,
    tail_probed: bool,
    /// [`close`](SenderSession::close) was called: the connections close
    /// at this time.
    linger_until: Option<Instant>,
    events: VecDeque<SessionEvent>,
    last_target: Option<f64>,
    opened: u64,
    /// Sum and count of open connections, sampled at every RTT sample.
    count_sum: f64,
    count_samples: u64,
    max_open: usize,
    /// [`close`](SenderSession::close) was called: no connection opens.
    closed: bool,
    /// Key datagrams sent a second time on another path.
    key_copies: u64,
    /// RTCP packets from the receiver the session does not act on, for
    /// [`poll_report`](SenderSession::poll_report); at most
    /// [`MAX_HELD_REPORTS`].
    reports: VecDeque<Vec<u8>>,
    /// Reports dropped because [`MAX_HELD_REPORTS`] were held.
    reports_dropped: u64,
    /// [`dispatch`](Self::dispatch)'s list of ready connections, kept for
    /// its buffer.
    ready: Vec<ConnectionId>,
    /// When [`dispatch`](Self::dispatch) last found no connection with
    /// room for what waits, if nothing that could make room happened
    /// since: a connection sending, a datagram or timer (which may open,
    /// close or reset a connection, or end a silence), or the close.
    /// Another dispatch at the same instant would find no room either
    /// (whether a bonded connection is suspect depends on the instant
    /// too), and returns at once: dispatch runs several times around
    /// every datagram sent.
    no_room_at: Option<Instant>,
}

/// The most receiver reports a [`SenderSession`] holds for
/// [`poll_report`](SenderSession::poll_report); beyond, the oldest is
/// dropped.
pub const MAX_HELD_REPORTS: usize = 64;

impl SenderSession {
    /// A session that opens its first connection at `now`.
    pub fn new(config: SessionConfig, now: Instant) -> Result<SenderSession, MultiConfigError> {
        if !config.shared.is_empty() && config.shared.len() != config.paths {
            return Err(MultiConfigError::OutOfRange {
                name: "shared",
                value: config.shared.len() as f64,
                range: "one group (or none) per path",
            });
        }
        if config.paths == 0 || config.paths > MAX_PATHS {
            return Err(MultiConfigError::OutOfRange {
                name: "paths",
                value: config.paths as f64,
                range: "1..=8",
            });
        }
        let paths = (0..config.paths)
            .map(|_| {
                Ok(Path {
                    counter: config.count.build()?,
                    next_open: now,
                    next_sample: None,
                    last_feedback: None,
                    last_ecn_marks: 0,
                    down: false,
                    opened: false,
                    weight: 1.0,
                })
            })
            .collect::<Result<Vec<Path>, MultiConfigError>>()?;
        let endpoint = Endpoint::new(EndpointConfig {
            connection: config.connection.clone(),
            listen: false,
            max_connections: 1024,
            cookies: None,
        });
        // Without retransmission, a datagram is resent only by a failover
        // or a hedge, which need two connections alive (a failover) or two
        // paths (a hedge): a session that can have neither keeps nothing.
        let repairable = config.arq.enabled || config.paths > 1 || !config.count.at_most_one();
        let store_bytes = if repairable {
            config.arq.store_bytes
        } else {
            0
        };
        let mut session = SenderSession {
            store: SentStore::new(store_bytes, !config.arq.enabled),
            resend: ResendQueue::default(),
            arq_stats: SenderArqStats::default(),
            last_dispatch: None,
            tail_probed: false,
            linger_until: None,
            next_port: config.local_port,
            config,
            endpoint,
            paths,
            path_of: std::collections::BTreeMap::new(),
            conns: Vec::new(),
            queue: VecDeque::new(),
            next_seq: 0,
            events: VecDeque::new(),
            last_target: None,
            opened: 0,
            count_sum: 0.0,
            count_samples: 0,
            max_open: 0,
            closed: false,
            key_copies: 0,
            reports: VecDeque::new(),
            reports_dropped: 0,
            ready: Vec::new(),
            no_room_at: None,
        };
        session.update(now);
        Ok(session)
    }

    /// The connection-count controller (of the first path; see
    /// [`path_counter`](Self::path_counter)).
    pub fn counter(&self) -> &ConnectionCounter {
        &self.paths[0].counter
    }

    /// The paths the session bonds.
    pub fn paths(&self) -> usize {
        self.paths.len()
    }

    /// Path `path`'s connection-count controller.
    pub fn path_counter(&self, path: usize) -> Option<&ConnectionCounter> {
        self.paths.get(path).map(|p| &p.counter)
    }

    /// Connections open or opening (not closing) on path `path`.
    pub fn open_connections_on(&self, path: usize) -> usize {
        self.conns
            .iter()
            .filter(|c| !c.closing && c.path == path)
            .count()
    }

    /// Whether path `path` is down: it had an open connection and has
    /// none now ([`SessionEvent::PathDown`]).
    pub fn path_down(&self, path: usize) -> bool {
        self.paths.get(path).is_some_and(|p| p.down)
    }

    /// The path connection `id` runs on.
    pub fn path_of(&self, id: ConnectionId) -> Option<usize> {
        self.path_of.get(&id).copied()
    }

    /// The endpoint (for statistics of the connections).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Connections open or opening (not closing).
    pub fn open_connections(&self) -> usize {
        self.conns.iter().filter(|c| !c.closing).count()
    }

    /// The most connections open at once so far.
    pub fn max_open_connections(&self) -> usize {
        self.max_open
    }

    /// The mean number of open connections over the RTT samples taken (for
    /// the aggregate controller, the mean of its fractional n).
    pub fn mean_open_connections(&self) -> Option<f64> {
        (self.count_samples > 0).then(|| self.count_sum / self.count_samples as f64)
    }

    /// Datagrams waiting in the session queue (retransmissions included).
    pub fn queued(&self) -> usize {
        self.queue.len() + self.resend.len()
    }

    /// What retransmission and failover did.
    pub fn arq_stats(&self) -> SenderArqStats {
        self.arq_stats
    }

    /// Key datagrams sent a second time on another path
    /// ([`SessionConfig::duplicate_key`]).
    pub fn key_copies(&self) -> u64 {
        self.key_copies
    }

    /// Bytes kept for resending.
    pub fn stored_bytes(&self) -> usize {
        self.store.bytes()
    }

    /// The largest datagram [`send`](Self::send) takes (one with a playout
    /// time, four bytes less).
    pub fn max_datagram(&self) -> usize {
        self.config
            .connection
            .max_payload()
            .saturating_sub(SESSION_HEADER_BYTES)
    }

    /// Queues one datagram of the stream; `gop` numbers its group of
    /// pictures (for [`SplitPolicy::GopInterleave`]). No deadline; it may
    /// be resent.
    pub fn send(&mut self, now: Instant, data: &[u8], gop: u64) -> Result<(), SessionSendError> {
        self.send_with(now, data, DatagramMeta::gop(gop))
    }

    /// Queues one datagram of the stream with what the application knows
    /// of it: its GOP, its deadline, whether it is key, whether it may be
    /// resent.
    pub fn send_with(
        &mut self,
        now: Instant,
        data: &[u8],
        meta: DatagramMeta,
    ) -> Result<(), SessionSendError> {
        let header = SessionHeader {
            seq: (self.next_seq % SEQUENCE_MODULUS) as u32,
            playout_ms: meta
                .playout
                .map(|t| u32::try_from(t.as_millis()).unwrap_or(u32::MAX)),
            fec: meta.fec,
        };
        let max = self
            .config
            .connection
            .max_payload()
            .saturating_sub(header.len());
        if data.len() > max {
            return Err(SessionSendError::TooBig {
                len: data.len(),
                max,
            });
        }
        if self.queue.len() >= self.config.queue_datagrams {
            return Err(SessionSendError::QueueFull(self.config.queue_datagrams));
        }
        let mut datagram = self.store.buffer();
        // The store's spare buffers are held by no one else: no copy.
        let bytes = Shared::make_mut(&mut datagram);
        bytes.reserve(header.len() + data.len());
        header.emit(bytes);
        bytes.extend_from_slice(data);
        self.queue.push_back(Queued {
            datagram,
            meta,
            seq: self.next_seq,
        });
        self.next_seq += 1;
        self.dispatch(now);
        Ok(())
    }

    /// A datagram from the receiver. The same as
    /// [`handle_datagram_ecn`](Self::handle_datagram_ecn) with Not-ECT.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        self.handle_datagram_ecn(now, bytes, Ecn::NotEct);
    }

    /// A datagram from the receiver that arrived with the ECN codepoint
    /// `ecn`.
    pub fn handle_datagram_ecn(&mut self, now: Instant, bytes: &[u8], ecn: Ecn) {
        self.no_room_at = None;
        let iss = self.iss();
        self.endpoint.handle_datagram_ecn(now, bytes, ecn, iss);
        self.read_feedback(now);
        self.update(now);
    }

    /// A datagram from the receiver that arrived on path `path`. A
    /// datagram for a connection of another path is dropped: each path's
    /// connections answer on their own path only, so that a packet
    /// cannot make a path look alive that is not.
    pub fn handle_datagram_on(&mut self, now: Instant, path: usize, bytes: &[u8], ecn: Ecn) {
        if let Some((src, dst)) = crate::wire::dccp::peek_ports(bytes) {
            let id = ConnectionId {
                local_port: dst,
                remote_port: src,
            };
            if self.path_of.get(&id).is_some_and(|p| *p != path) {
                return;
            }
        }
        self.handle_datagram_ecn(now, bytes, ecn);
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.no_room_at = None;
        if self.endpoint.poll_timeout().is_some_and(|t| t <= now) {
            self.endpoint.handle_timeout(now);
        }
        for path in 0..self.paths.len() {
            if self.paths[path].next_sample.is_some_and(|t| t <= now) {
                self.sample_rtt(now, path);
            }
        }
        self.update(now);
    }

    /// The next packet to send.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.poll_transmit_on(now, buf).map(|(_, t)| t)
    }

    /// The next packet to send, and the path it goes on.
    pub fn poll_transmit_on(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<(usize, Transmit)> {
        self.dispatch(now);
        let (id, transmit) = self.endpoint.poll_transmit(now, buf)?;
        self.no_room_at = None;
        self.dispatch(now);
        // The endpoint's own answers (a Reset to a stray packet) belong to
        // no connection: they go on the first path.
        let path = id.and_then(|id| self.path_of(id)).unwrap_or(0);
        Some((path, transmit))
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<SessionEvent> {
        self.events.pop_front()
    }

    /// The oldest RTCP packet the receiver sent back that the session does
    /// not act on itself (it acts on its Generic NACKs): an application's
    /// report, such as paper 004's buffer report
    /// ([`BufferReport`](crate::wire::rtcp::BufferReport)). At most
    /// [`MAX_HELD_REPORTS`] wait; a newer one beyond drops the oldest.
    pub fn poll_report(&mut self) -> Option<Vec<u8>> {
        self.reports.pop_front()
    }

    /// Reports dropped because [`MAX_HELD_REPORTS`] were waiting.
    pub fn reports_dropped(&self) -> u64 {
        self.reports_dropped
    }

    /// When [`handle_timeout`](Self::handle_timeout) must run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [
            self.endpoint.poll_timeout(),
            self.paths.iter().filter_map(|p| p.next_sample).min(),
            self.next_opening(),
            self.next_dead_check(),
            self.next_hedge(),
            self.tail_probe_at(),
            self.linger_until,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The part of [`poll_timeout`](Self::poll_timeout) a real-time
    /// driver should meet precisely: the connections' timers (pacing
    /// among them) and the opening of the next connection. The
    /// connection-count controller's RTT sample, taken once per RTT (at
    /// least every millisecond), is left out: a sample taken a little late
    /// changes nothing, and waking precisely for it costs a driver that
    /// spins before its deadlines about a thousand spins a second on a
    /// short path (the pacing benchmark, `docs/performance.md`). The
    /// driver still calls [`handle_timeout`](Self::handle_timeout) by
    /// `poll_timeout`.
    pub fn poll_precise_timeout(&self) -> Option<Instant> {
        [self.endpoint.poll_timeout(), self.next_opening()]
            .into_iter()
            .flatten()
            .min()
    }

    /// When the next connection opens, if a path wants one more.
    fn next_opening(&self) -> Option<Instant> {
        if self.closed {
            return None;
        }
        self.paths
            .iter()
            .enumerate()
            .filter(|(index, p)| self.open_connections_on(*index) < p.counter.connections())
            .map(|(_, p)| p.next_open)
            .min()
    }

    /// Closes every connection once its queue has left.
    ///
    /// With retransmission on, the connections stay open three RTTs more
    /// (as SRT lingers), so that what the receiver asks for at the end can
    /// still be resent.
    pub fn close(&mut self, now: Instant) {
        if self.closed {
            return;
        }
        self.closed = true;
        self.no_room_at = None;
        let linger = if self.config.arq.enabled {
            3 * self.session_rtt()
        } else {
            Duration::ZERO
        };
        self.linger_until = Some(now + linger);
        if linger.is_zero() {
            self.close_connections(now);
        }
    }

    /// Closes every connection once its queue has left.
    fn close_connections(&mut self, now: Instant) {
        self.linger_until = None;
        for conn in &mut self.conns {
            if let Some(c) = self.endpoint.connection_mut(conn.id) {
                c.close(now);
            }
            conn.closing = true;
        }
    }

    fn iss(&mut self) -> u64 {
        // SplitMix64 of the seed and a counter: distinct, deterministic ISSs.
        self.opened = self.opened.wrapping_add(1);
        let mut z = self
            .config
            .iss_seed
            .wrapping_add(self.opened.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// One RTT sample for path `path`'s controller: the mean smoothed RTT
    /// of its connections that have one (paper 001 §3's per-RTT report).
    fn sample_rtt(&mut self, now: Instant, path: usize) {
        let Some(mean) = self.mean_rtt_on(path) else {
            self.paths[path].next_sample = Some(now + Duration::from_millis(100));
            return;
        };
        // The session's receive rate: the sum of the rates its connections'
        // receivers last reported (X_recv, RFC 5348 §6.2).
        let receive_rate: f64 = self
            .conns
            .iter()
            .filter(|c| !c.closing && c.path == path)
            .filter_map(|c| self.endpoint.connection(c.id))
            .filter_map(|c| c.tfrc_sender())
            .map(|s| s.receive_rate().bytes_per_sec())
            .filter(|r| r.is_finite() && *r > 0.0)
            .sum();
        // s as the connections' senders use it (RFC 5348 §4.1: the mean
        // sent), the configured size before any has been sent.
        let s = self
            .conns
            .iter()
            .filter(|c| !c.closing && c.path == path)
            .filter_map(|c| self.endpoint.connection(c.id))
            .filter_map(|c| c.tfrc_sender())
            .map(|t| t.segment_size())
            .next()
            .unwrap_or(self.config.connection.tfrc.segment_size.max(1) as f64);
        let packet_time = (receive_rate > 0.0)
            .then(|| Duration::try_from_secs_f64(s / receive_rate).ok())
            .flatten();
        if matches!(self.config.count, ConnectionCountConfig::Adaptive(_)) {
            self.adaptive_report(now, path, packet_time);
        } else {
            self.paths[path].counter.on_report(now, mean, packet_time);
        }
        if matches!(self.config.count, ConnectionCountConfig::Aggregate(_)) {
            // The aggregate: one connection at the MulTFRC rate of n flows.
            let n = self.paths[path].counter.n() * self.paths[path].weight;
            for conn in self.conns.iter().filter(|c| c.path == path) {
                if let Some(c) = self.endpoint.connection_mut(conn.id) {
                    c.set_tfrc_flows(n);
                }
            }
        }
        // The aggregate's "connections" are its fractional n; a bonded
        // session's, the sum over its paths.
        self.count_sum += (0..self.paths.len())
            .map(|p| {
                let counter = &self.paths[p].counter;
                if counter.is_fractional() {
                    counter.n()
                } else {
                    self.open_connections_on(p) as f64
                }
            })
            .sum::<f64>();
        self.count_samples += 1;
        // The adaptive controller takes every feedback's raw sample (its
        // window minimum needs them all): look four times per RTT.
        let period = if matches!(self.config.count, ConnectionCountConfig::Adaptive(_)) {
            mean / 4
        } else {
            mean
        };
        self.paths[path].next_sample = Some(now + period.max(Duration::from_millis(1)));
    }

    /// Gives the adaptive controller the newest feedback's raw RTT sample,
    /// if there is a new one.
    fn adaptive_report(&mut self, now: Instant, path: usize, packet_time: Option<Duration>) {
        let Some((id, sender)) = self
            .conns
            .iter()
            .filter(|c| !c.closing && c.path == path)
            .find_map(|c| Some((c.id, self.endpoint.connection(c.id)?.tfrc_sender()?)))
        else {
            return;
        };
        let state = &mut self.paths[path];
        let count = sender.feedback_count();
        if state.last_feedback == Some((id, count)) {
            return;
        }
        let (Some(rtt_sample), Some(srtt)) =
            (sender.rtt_sample(), crate::cc::RateController::rtt(sender))
        else {
            return;
        };
        let report = Report {
            rtt_sample,
            srtt,
            packet_time,
            loss_event_rate: sender.loss_event_rate(),
            equation_rate: sender.equation_rate().map(|r| r.bytes_per_sec()),
            losses_per_event: sender.losses_per_event(),
            receive_rate: sender.receive_rate().bytes_per_sec(),
            ce_marks: if state.last_feedback.is_some_and(|(last, _)| last == id) {
                sender
                    .ecn_marks_reported()
                    .saturating_sub(state.last_ecn_marks)
            } else {
                0
            },
        };
        state.last_ecn_marks = sender.ecn_marks_reported();
        state.last_feedback = Some((id, count));
        if state.counter.on_adaptive_report(now, report).is_some() {
            let weight = state.weight;
            let target = state
                .counter
                .adaptive()
                .and_then(|a| a.target_rate())
                .map(|rate| Rate::from_bytes_per_sec(rate * weight));
            if let Some(conn) = self.endpoint.connection_mut(id) {
                conn.set_tfrc_target_rate(target);
                // The adaptive controller's connection counts the losses
                // of a marking path as the channel's (CCID 248's option
                // 198, `docs/results/fairness.md`).
                conn.set_tfrc_congestion_loss_event_rate_used(true);
            }
        }
    }

    /// Follows the endpoint's events and the controller's count.
    fn update(&mut self, now: Instant) {
        while let Some((id, event)) = self.endpoint.poll_event() {
            if matches!(event, Event::HandshakeTimeout | Event::Reset { .. }) {
                if let Some(position) = self.conns.iter().position(|c| c.id == id) {
                    let lost = self.conns.remove(position);
                    if !lost.closing {
                        self.events.push_back(SessionEvent::ConnectionLost {
                            port: lost.id.local_port,
                        });
                    }
                }
            }
        }
        let endpoint = &self.endpoint;
        self.conns.retain(|c| endpoint.connection(c.id).is_some());
        // Every connection of the endpoint is in `path_of` (the session
        // opened it): as many entries as connections, none is stale.
        if self.path_of.len() != endpoint.len() {
            self.path_of
                .retain(|id, _| endpoint.connection(*id).is_some());
        }
        self.watch_connections(now);
        self.prune_store(now);
        self.probe_tail(now);
        if self.linger_until.is_some_and(|at| at <= now) {
            self.close_connections(now);
        }
        let before = self.open_connections();
        for path in 0..self.paths.len() {
            self.open_or_close(now, path);
        }
        let open = self.open_connections();
        self.max_open = self.max_open.max(open);
        if open != before {
            self.events
                .push_back(SessionEvent::ConnectionsChanged { open });
        }
        if self.paths.len() > 1 {
            self.watch_paths(now);
            self.share_bottlenecks();
        }
        for path in 0..self.paths.len() {
            if self.paths[path].next_sample.is_none() && self.conns.iter().any(|c| c.path == path) {
                self.paths[path].next_sample = Some(now + Duration::from_millis(100));
            }
        }
        // What ran above may have made room that a dispatch earlier in this
        // call did not find (a NACK's or a tail probe's): a connection that
        // answered is no longer suspect, one closing leaves the others.
        self.no_room_at = None;
        self.dispatch(now);
        self.publish_target(now);
    }

    /// Opens a connection on `path` if its count wants one more and the
    /// start offset passed; closes its newest beyond the count.
    fn open_or_close(&mut self, now: Instant, path: usize) {
        let wanted = self.paths[path].counter.connections();
        if !self.closed
            && self.open_connections_on(path) < wanted
            && now >= self.paths[path].next_open
        {
            let port = self.free_port();
            let iss = self.iss();
            if let Ok(id) = self
                .endpoint
                .connect(now, port, self.config.remote_port, iss)
            {
                self.conns.push(SenderConn::new(id, path, now));
                self.path_of.insert(id, path);

                self.paths[path].next_open = now + self.config.start_offset;
            }
        }
        while self.open_connections_on(path) > wanted {
            let Some(newest) = self
                .conns
                .iter_mut()
                .rev()
                .find(|c| !c.closing && c.path == path)
            else {
                break;
            };
            newest.closing = true;
            let id = newest.id;
            if let Some(conn) = self.endpoint.connection_mut(id) {
                conn.close(now);
            }
        }
    }

    /// The flows path `path`'s connections stand for before its share of
    /// a bottleneck: the aggregate's n, otherwise one.
    fn base_flows(&self, path: usize) -> f64 {
        if matches!(self.config.count, ConnectionCountConfig::Aggregate(_)) {
            self.paths[path].counter.n()
        } else {
            1.0
        }
    }

    /// Gives each path of a shared bottleneck its share, 1/k with k the
    /// paths of its group that are up ([`SessionConfig::shared`]).
    fn share_bottlenecks(&mut self) {
        if self.config.shared.is_empty() {
            return;
        }
        for path in 0..self.paths.len() {
            let Some(group) = self.config.shared.get(path).copied().flatten() else {
                continue;
            };
            let up = (0..self.paths.len())
                .filter(|q| *q == path || !self.paths[*q].down)
                .filter(|q| self.config.shared.get(*q).copied().flatten() == Some(group))
                .count()
                .max(1);
            let weight = 1.0 / up as f64;
            self.paths[path].weight = weight;
            let n = self.base_flows(path) * weight;
            // A connection takes its share once its TFRC sender exists
            // (after the handshake chose the CCID).
            let ids: Vec<ConnectionId> = self
                .conns
                .iter()
                .filter(|c| c.path == path)
                .filter(|c| {
                    self.endpoint
                        .connection(c.id)
                        .and_then(|conn| conn.tfrc_sender())
                        .is_some_and(|t| t.flows() != n)
                })
                .map(|c| c.id)
                .collect();
            for id in ids {
                if let Some(conn) = self.endpoint.connection_mut(id) {
                    conn.set_tfrc_flows(n);
                }
            }
        }
    }

    /// Notes the paths that went down (no open connection left after they
    /// had one) and came back; a path down is probed at least every
    /// [`DOWN_PATH_PROBE`] while another path is up.
    fn watch_paths(&mut self, now: Instant) {
        for path in 0..self.paths.len() {
            let open = self.conns.iter().any(|c| {
                c.path == path
                    && !c.closing
                    && self
                        .endpoint
                        .connection(c.id)
                        .is_some_and(|conn| conn.state() == State::Open)
            });
            let state = &mut self.paths[path];
            if open {
                state.opened = true;
                if std::mem::take(&mut state.down) {
                    self.events.push_back(SessionEvent::PathUp { path });
                }
            } else if state.opened && !state.down && !self.closed {
                state.down = true;
                self.events.push_back(SessionEvent::PathDown { path });
            }
        }
        let down = |p: usize| self.paths.get(p).is_some_and(|p| p.down);
        if (0..self.paths.len()).all(down) {
            return;
        }
        for c in self.conns.iter().filter(|c| down(c.path)) {
            if let Some(conn) = self.endpoint.connection_mut(c.id) {
                conn.cap_retransmit_interval(now, DOWN_PATH_PROBE);
            }
        }
    }

    /// A local port no connection of the session uses.
    fn free_port(&mut self) -> u16 {
        for _ in 0..u16::MAX {
            let port = self.next_port;
            self.next_port = self.next_port.wrapping_add(1).max(1);
            if !self.conns.iter().any(|c| c.id.local_port == port) {
                return port;
            }
        }
        self.next_port
    }

    /// The connections not closing whose state passes `wanted`.
    fn conns_in(&self, wanted: impl Fn(State) -> bool) -> impl Iterator<Item = &SenderConn> {
        self.conns.iter().filter(move |c| {
            !c.closing
                && self
                    .endpoint
                    .connection(c.id)
                    .is_some_and(|conn| wanted(conn.state()))
        })
    }

    /// Moves datagrams from the session queue to the connections.
    fn dispatch(&mut self, now: Instant) {
        let depth = self.config.per_connection_depth.max(1);
        // Nothing to move: spare the scan (dispatch runs around every
        // packet the session sends or receives).
        if self.resend.len() == 0 && self.queue.is_empty() || self.no_room_at == Some(now) {
            return;
        }
        // The list of ready connections is built in a buffer the session
        // keeps (dispatch runs around every datagram).
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(
            self.conns_in(|state| matches!(state, State::PartOpen | State::Open))
                .map(|c| c.id),
        );
        if !ready.is_empty() {
            self.dispatch_to(now, &ready, depth);
        }
        self.ready = ready;
        // Left waiting: no connection had room (GOP-interleaved dealing
        // may leave datagrams of a full lane while another lane has room
        // for datagrams still to come).
        let waiting = self.resend.len() > 0 || !self.queue.is_empty();
        self.no_room_at =
            (waiting && self.config.policy != SplitPolicy::GopInterleave).then_some(now);
    }

    /// [`dispatch`](Self::dispatch) to the `ready` connections.
    fn dispatch_to(&mut self, now: Instant, ready: &[ConnectionId], depth: usize) {
        // Retransmissions first, each to the connection that sends soonest.
        while self.resend.len() > 0 {
            let Some(id) = self.earliest(now, ready, depth) else {
                return;
            };
            let Some(seq) = self.resend.pop() else {
                break;
            };
            self.resend_now(now, seq, id);
        }
        if self.config.policy == SplitPolicy::GopInterleave {
            self.dispatch_by_gop(now, ready, depth);
            return;
        }
        while !self.queue.is_empty() {
            let Some(id) = self.earliest(now, ready, depth) else {
                break;
            };
            let Some(queued) = self.queue.pop_front() else {
                break;
            };
            if self.config.duplicate_key && queued.meta.key && self.paths.len() > 1 {
                self.copy_to_another_path(now, &queued.datagram, id, ready, depth);
            }
            self.hand_over(now, queued, id);
        }
    }

    /// The connection with room that can send a datagram soonest (its
    /// queue divided by its allowed rate); across the paths of a bonded
    /// session, the one that delivers it soonest: that time plus the
    /// path's one-way delay, taken as half the connection's RTT
    /// (earliest arrival, so that the receiver waits least to reorder).
    fn earliest(&self, now: Instant, ready: &[ConnectionId], depth: usize) -> Option<ConnectionId> {
        let bonded = self.paths.len() > 1;
        if bonded {
            // A connection silent for a few RTTs is suspect: while another
            // answers, it gets nothing new (what it holds is resent if it
            // turns out dead), so a cut path costs only what was in flight
            // when it went.
            let answering: Vec<ConnectionId> = ready
                .iter()
                .copied()
                .filter(|id| !self.suspect(now, *id))
                .collect();
            if !answering.is_empty() && answering.len() < ready.len() {
                return self.earliest_of(&answering, depth, bonded);
            }
        }
        self.earliest_of(ready, depth, bonded)
    }

    /// Whether connection `id` has had data unanswered for
    /// [`suspect_after`](Self::suspect_after).
    fn suspect(&self, now: Instant, id: ConnectionId) -> bool {
        let Some(conn) = self.conns.iter().find(|c| c.id == id) else {
            return false;
        };
        conn.unanswered_since
            .is_some_and(|since| now.saturating_duration_since(since) >= self.suspect_after(id))
    }

    /// The silence after data that makes connection `id` suspect: three
    /// RTTs, at least 150 ms.
    pub(super) fn suspect_after(&self, id: ConnectionId) -> Duration {
        let rtt = self
            .endpoint
            .connection(id)
            .and_then(|c| c.rtt())
            .unwrap_or(Duration::from_millis(100));
        (3 * rtt).max(SUSPECT_AFTER_MIN)
    }

    fn earliest_of(
        &self,
        ready: &[ConnectionId],
        depth: usize,
        bonded: bool,
    ) -> Option<ConnectionId> {
        ready
            .iter()
            .filter_map(|id| {
                let conn = self.endpoint.connection(*id)?;
                let queued = conn.send_queue_len();
                if queued >= depth {
                    return None;
                }
                let rate = conn
                    .allowed_rate()
                    .map_or(1.0, |r| r.bytes_per_sec().max(1.0));
                if bonded {
                    let sending = ((queued + 1) * conn.max_payload()) as f64 / rate;
                    let one_way = conn.rtt().unwrap_or(Duration::from_millis(100)) / 2;
                    return Some((sending + one_way.as_secs_f64(), *id));
                }
                Some(((queued + 1) as f64 / rate, *id))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, id)| id)
    }

    /// Sends `datagram` also on the connection of another path than
    /// `id`'s that delivers it soonest, if one has room.
    fn copy_to_another_path(
        &mut self,
        now: Instant,
        datagram: &Shared,
        id: ConnectionId,
        ready: &[ConnectionId],
        depth: usize,
    ) {
        let path = self.path_of(id);
        let others: Vec<ConnectionId> = ready
            .iter()
            .copied()
            .filter(|other| self.path_of(*other) != path)
            .collect();
        let Some(other) = self.earliest(now, &others, depth) else {
            return;
        };
        if let Some(conn) = self.endpoint.connection_mut(other) {
            if conn.send_shared(datagram).is_ok() {
                self.key_copies += 1;
            }
        }
    }

    /// Gives a datagram to connection `id` and keeps it for resending.
    fn hand_over(&mut self, now: Instant, queued: Queued, id: ConnectionId) {
        let Some(conn) = self.endpoint.connection_mut(id) else {
            return;
        };
        // The size was checked in `send`; a refusal here can only be a
        // connection that started closing: the datagram is lost (and may be
        // asked for again).
        let _ = conn.send_shared(&queued.datagram);
        if let Some(c) = self.conns.iter_mut().find(|c| c.id == id) {
            c.unanswered_since.get_or_insert(now);
        }
        self.last_dispatch = Some((now, queued.seq));
        self.tail_probed = false;
        self.store.insert(
            queued.seq,
            Stored {
                datagram: queued.datagram,
                meta: queued.meta,
                conn: id,
                dispatched: now,
                last_resent: None,
            },
        );
    }

    /// GOP-interleaved dealing (paper 000 §3.6): the datagrams of GOP g
    /// belong to connection g mod N. Every connection with room takes the
    /// earliest queued datagrams of its own GOPs, so that one connection
    /// waiting for its turn does not block the others (no head-of-line
    /// blocking across GOPs).
    fn dispatch_by_gop(&mut self, now: Instant, ready: &[ConnectionId], depth: usize) {
        let lanes = ready.len() as u64;
        let mut room: Vec<usize> = ready
            .iter()
            .map(|id| {
                self.endpoint
                    .connection(*id)
                    .map_or(0, |c| depth.saturating_sub(c.send_queue_len()))
            })
            .collect();
        let mut index = 0;
        while index < self.queue.len() && room.iter().any(|r| *r > 0) {
            let lane = self
                .queue
                .get(index)
                .map_or(0, |queued| (queued.meta.gop % lanes) as usize);
            if room.get(lane).copied().unwrap_or(0) == 0 {
                index += 1;
                continue;
            }
            let Some(queued) = self.queue.remove(index) else {
                break;
            };
            if let (Some(&id), Some(slot)) = (ready.get(lane), room.get_mut(lane)) {
                *slot -= 1;
                self.hand_over(now, queued, id);
            }
        }
    }

    /// Publishes the aggregate allowed rate when it moved enough.
    /// A bonded session leaves out its suspect connections: the encoder
    /// aims at what the paths that answer can carry.
    fn publish_target(&mut self, now: Instant) {
        let bonded = self.paths.len() > 1;
        let total: f64 = self
            .conns
            .iter()
            .filter(|c| !c.closing)
            .filter(|c| !bonded || !self.suspect(now, c.id))
            .filter_map(|c| self.endpoint.connection(c.id))
            .filter_map(|c| c.allowed_rate())
            .map(|r| r.bytes_per_sec())
            .sum();
        if total <= 0.0 {
            return;
        }
        let moved = self
            .last_target
            .is_none_or(|last| (total - last).abs() > self.config.target_hysteresis * last);
        if moved {
            self.last_target = Some(total);
            self.events
                .push_back(SessionEvent::TargetBitrate(Rate::from_bytes_per_sec(total)));
        }
    }
}
