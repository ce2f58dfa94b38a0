//! The receiver: a proto [`ReceiverSession`] listening on a UDP port, on
//! the real clock; the stream it merges is depacketized back into access
//! units and written out ([`OutputSpec`]).
//!
//! The receiver serves one sender: the first address that completes a
//! handshake. Until then it keeps no state for anyone: a Request is
//! answered with a Response carrying an Init Cookie (RFC 4340 §8.1.4), no
//! larger than the Request, and the connection is made only when the
//! sender echoes the cookie from the address it was sent to (issue 13: a
//! forged Request cannot take the receiver, and many senders may be in
//! their handshakes at once). Datagrams from other addresses are then
//! counted and dropped; their Requests are refused with Reset(Too Busy)
//! (RFC 4340 §5.6, code 9), so that a second sender learns at once that
//! the receiver is busy.
//!
//! A bonded sender (issue 19) reaches the receiver from several addresses,
//! one per path: its Requests carry the session's token
//! ([`PathToken`]), and a Request from another address with the token of
//! the sender being served joins that address to the stream (at most
//! [`MAX_PATHS`] addresses). Each connection's packets go back to the
//! address it came from.
//!
//! It stops when every connection of that sender has ended (closed in
//! order, or reset: the stream was aborted); on `stop` or after `duration`,
//! closing the connections in order (CloseReq, RFC 4340 §8.3); or when the
//! sender fell silent for the peer timeout once its data began
//! ([`crate::peer`]). A stream that was aborted, that fell silent or that
//! brought no frame at all ends in [`RecvError::Stream`], with the report.
//! The output is flushed after every access unit, so that whatever ends
//! the receiver leaves whole NAL units behind.

pub(crate) mod assembler;
mod config;
pub(crate) mod fec;
mod layered;
mod output;
mod player;
mod summary;
mod voice;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fairstream_media::stream::CLOCK_RATE;
use fairstream_proto::conn::{Ccid, ConnectionConfig, ConnectionId, CookieConfig, State};
use fairstream_proto::ecn::Ecn;
use fairstream_proto::session::{PathToken, ReceiverSession, ReorderConfig, MAX_PATHS};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::dccp::{peek_ports, ResetCode};

pub use assembler::LostByType;
pub use config::{ReceivedAccessUnit, RecvConfig, RecvError, RecvFailure, RecvReport};
pub use fec::FecReceiveStats;
pub use layered::BufferRecvReport;
pub use output::{base64, sdp_text, OutputSpec};
pub use voice::{VoiceOutput, VoiceRecvReport, MAX_CALL_FRAMES, MAX_GAP_FRAMES, MAX_WAITING};

use crate::clock::{address_bytes, random_secret, Clock, WallClock};
use crate::link::{Incoming, UdpLink};
use crate::peer::{largest_rtt, SilenceWatch};
use crate::protect::{Protection, Refusal, OVERHEAD};
use crate::send::random_u64;
use crate::stats::StatsSink;
use crate::warn::StatsFailures;
use assembler::Assembler;
use layered::LayeredReceiver;
use output::Output;
use player::Player;
use voice::VoiceReceiver;

/// The longest the loop sleeps without looking at the stop flag.
const MAX_SLEEP: Duration = Duration::from_millis(20);
/// After the last connection closed, the reorder buffer is given this
/// long to release what it holds.
const DRAIN: Duration = Duration::from_millis(200);
/// The most established connections remembered (to see the sender close).
const MAX_ESTABLISHED: usize = 1024;
/// Beyond the close timeout, the time a Close handshake the receiver
/// started is waited for (its last retransmission's answer).
const CLOSE_MARGIN: Duration = Duration::from_millis(200);

/// How long before what follows a gap is due the gap is given up: a tenth
/// of the prebuffer, at most 100 ms. The player model needs each frame by
/// its playout time and re-buffers a whole prebuffer once it runs dry;
/// released at the very instant, the frames held behind a gap would come
/// a frame or a loop iteration too late for it (issue 19's stalls of a
/// little over 1 s).
fn playout_lead(prebuffer: Duration) -> Duration {
    (prebuffer / 10).min(Duration::from_millis(100))
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Receiving.
    Running,
    /// The receiver closes the connections (since then).
    Closing(Instant),
    /// The reorder buffer releases what it holds (since then).
    Draining(Instant),
}

/// How the sender's established connections ended.
#[derive(Clone, Debug, Default)]
struct Endings {
    /// The connections already counted.
    seen: BTreeSet<ConnectionId>,
    /// Closed in order.
    closed: u64,
    /// Reset by the sender.
    reset: u64,
    /// When the first one was seen closed in order.
    first_closed: Option<Instant>,
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

    /// Receives until the sender ends the stream, `stop` is set or the
    /// duration passes (then closes in order), or the sender falls silent
    /// for the peer timeout. A stream that was aborted, fell silent or
    /// brought no frame is [`RecvError::Stream`], with the report.
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
        // Retransmission (the URL's `arq`, on by default): lost datagrams
        // are asked for, and a gap is waited for up to the deadline the
        // player model's prebuffer gives what follows it.
        let connection_handshake_timeout = connection.handshake_timeout;
        let protection = match &self.config.url.passphrase {
            Some(passphrase) => {
                Protection::listener(passphrase).map_err(|error| RecvError::Socket {
                    what: "no random salt for the passphrase".into(),
                    error,
                })?
            }
            None => {
                if self.config.stats.human {
                    eprintln!(
                        "recv: no passphrase: the stream is neither encrypted nor authenticated \
                         (passphrase=… in the URL or --passphrase-file protects it)"
                    );
                }
                Protection::plain()
            }
        };
        if protection.is_on() {
            // Sealed packets are the tag longer than what the session makes.
            connection.max_packet_size = connection.max_packet_size.saturating_sub(OVERHEAD);
        }
        let voice_output = match &self.config.output {
            OutputSpec::Voice(voice) => Some(voice.clone()),
            _ => None,
        };
        if voice_output.is_some() && self.config.url.arq == Some(true) {
            return Err(RecvError::Output(std::io::Error::other(
                "a voice call's frames are never resent (a resent frame would be late):                  arq=on does not apply with --wav",
            )));
        }
        // A voice call: no retransmission, so a gap is given up as soon as a
        // later frame came (the reorder buffer holds nothing back).
        let arq = voice_output.is_none() && self.config.url.arq.unwrap_or(true);
        let session = ReceiverSession::new(
            connection,
            self.config.max_connections.max(1),
            ReorderConfig::default(),
        )
        .with_arq(arq)
        .with_playout_delay(self.config.prebuffer)
        .with_playout_lead(playout_lead(self.config.prebuffer));
        // No state for strangers (issue 13): a Request is answered with an
        // Init Cookie and nothing is kept until a sender echoes it from its
        // address; a forged Request cannot take the receiver.
        let mut session = session;
        session.use_cookies(CookieConfig {
            secret: random_secret().map_err(|error| RecvError::Socket {
                what: "no random key for the handshake cookies".into(),
                error,
            })?,
            lifetime: connection_handshake_timeout,
        });
        let output = Output::open(&self.config.output).map_err(RecvError::Output)?;
        let sink = StatsSink::open(&self.config.stats).map_err(RecvError::Stats)?;
        let clock = Clock::new();
        let start = clock.now();
        let player = Player::new(self.config.prebuffer);
        let layered = self.config.url.buffer.map(LayeredReceiver::new);
        let voice = voice_output
            .map(|output| VoiceReceiver::new(output, WallClock::new(&clock)))
            .transpose()
            .map_err(RecvError::Output)?;
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
            token: None,
            pending_tokens: std::collections::VecDeque::new(),
            paths: Vec::new(),
            routes: BTreeMap::new(),
            watch: SilenceWatch::default(),
            data_started: false,
            failure: None,
            endings: Endings::default(),
            stats_failures: StatsFailures::default(),
            buf: Vec::with_capacity(2048),
            accepted: 0,
            established: BTreeSet::new(),
            heard: BTreeMap::new(),
            last_stats: (start, 0),
            protection,
            refused_senders: BTreeSet::new(),
            layered,
            voice,
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
    /// The session token of the sender being served, if its Requests
    /// carried one (a bonded sender).
    token: Option<PathToken>,
    /// The tokens of the last Requests from addresses not yet served (the
    /// connection is made later, when the cookie comes back), at most
    /// [`MAX_PENDING_TOKENS`].
    pending_tokens: std::collections::VecDeque<(SocketAddr, PathToken)>,
    /// The sender's other paths: addresses whose Requests carried its
    /// token.
    paths: Vec<SocketAddr>,
    /// The address each connection of the sender came from, where its
    /// packets go back.
    routes: BTreeMap<ConnectionId, SocketAddr>,
    /// The sender's silence, once its data began.
    watch: SilenceWatch,
    /// Data arrived on a connection of the sender.
    data_started: bool,
    /// Why the stream failed, if it did.
    failure: Option<RecvFailure>,
    endings: Endings,
    stats_failures: StatsFailures,
    buf: Vec<u8>,
    accepted: u64,
    established: BTreeSet<ConnectionId>,
    /// For each established connection: the packets it had received, and
    /// since when.
    heard: BTreeMap<ConnectionId, (u64, Instant)>,
    /// Time and bytes received at the previous statistics line.
    last_stats: (Instant, u64),
    /// Packet protection (the URL's `passphrase`).
    protection: Protection,
    /// Senders whose handshake failed to authenticate, named on stderr
    /// (the first [`MAX_NAMED_REFUSALS`]).
    refused_senders: BTreeSet<SocketAddr>,
    /// `cc=buffer`: paper 004's controller watches the stream.
    layered: Option<LayeredReceiver>,
    /// `--wav`: a voice call's listener.
    voice: Option<VoiceReceiver>,
}

/// Senders named on stderr for a failed handshake at most; later ones are
/// only counted (a flood cannot fill the terminal or the memory).
const MAX_NAMED_REFUSALS: usize = 16;
/// Request tokens remembered from senders in their handshakes.
const MAX_PENDING_TOKENS: usize = 16;

impl RecvRun {
    fn run(mut self, stop: &AtomicBool) -> Result<RecvReport, RecvError> {
        let interval = self.receiver.config.stats.interval;
        let mut next_stats = interval.map(|i| self.start + i);
        let mut phase = Phase::Running;
        let close_wait = self.receiver.config.close_timeout + CLOSE_MARGIN;
        loop {
            let now = self.clock.now();
            match phase {
                Phase::Running => {
                    if let Some(reason) = self.stop_reason(now, stop) {
                        self.report.stopped_by = reason.into();
                        // The receiver ends the stream: it closes in order,
                        // as a sender does (RFC 4340 §8.3: CloseReq).
                        phase = if matches!(reason, "signal" | "duration") && !self.all_ended() {
                            self.session.close(now);
                            Phase::Closing(now)
                        } else {
                            Phase::Draining(now)
                        };
                    }
                }
                Phase::Closing(since) => {
                    if self.all_ended() || now - since >= close_wait {
                        phase = Phase::Draining(now);
                    }
                }
                Phase::Draining(since) => {
                    if now - since >= DRAIN {
                        // Nothing more can come: what the reorder buffer
                        // still holds behind a gap is the stream's end.
                        self.session.flush(now);
                        self.deliver(now)?;
                        break;
                    }
                }
            }
            if self.session.poll_timeout().is_some_and(|t| t <= now) {
                self.session.handle_timeout(now);
            }
            self.deliver(now)?;
            self.buffer_feedback(now);
            self.transmit(now);
            self.observe(now);
            if let Some(at) = next_stats.filter(|t| *t <= now) {
                self.stats_line(now);
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
                self.layered
                    .as_ref()
                    .and_then(LayeredReceiver::next_timeout),
                self.voice.as_ref().and_then(|v| v.next_timeout(now)),
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

    fn stop_reason(&mut self, now: Instant, stop: &AtomicBool) -> Option<&'static str> {
        let config = &self.receiver.config;
        if stop.load(Ordering::Relaxed) {
            return Some("signal");
        }
        if config.duration.is_some_and(|d| now - self.start >= d) {
            return Some("duration");
        }
        let timeout = config
            .peer_timeout
            .for_rtt(largest_rtt(self.session.endpoint()));
        if let (Some(silent), Some(peer)) = (self.watch.expired(now, timeout), self.peer) {
            self.failure = Some(RecvFailure::PeerSilent {
                peer,
                silent,
                timeout,
            });
            return Some("peer-timeout");
        }
        // The sender ended the stream: every connection that was
        // established has left OPEN (half-open ones, such as forged
        // Requests, do not count).
        let endpoint = self.session.endpoint();
        let open: Vec<ConnectionId> = self
            .established
            .iter()
            .filter(|id| {
                endpoint
                    .connection(**id)
                    .is_some_and(|c| c.state() < State::CloseReq)
            })
            .copied()
            .collect();
        if self.established.is_empty() || !self.only_dead_left(now, &open) {
            return None;
        }
        // Reset rather than closed, every one of them: aborted. (A sender
        // may reset one connection of several and go on with the others.)
        if let (0, 1.., Some(peer)) = (self.endings.closed, self.endings.reset, self.peer) {
            self.failure = Some(RecvFailure::Aborted { peer });
            return Some("aborted");
        }
        Some("closed")
    }

    /// Whether the stream may end with `open` connections still open: none,
    /// or another closed in order at least the close timeout ago and each
    /// has heard nothing for that long. A connection whose path died stays
    /// OPEN here for ever (the sender's Reset of it was lost on the same
    /// path); the sender went on without it (a dead connection, issue 12),
    /// and so does the receiver. The wait covers a retransmission of a
    /// Close that was lost (RFC 4340 §8.3; the first after about 1 s,
    /// §8.1.1) on a live connection that carried nothing of late.
    fn only_dead_left(&self, now: Instant, open: &[ConnectionId]) -> bool {
        if open.is_empty() {
            return true;
        }
        let wait = self.receiver.config.close_timeout;
        let quiet_since = |at: Instant| now.saturating_duration_since(at) >= wait;
        self.endings.first_closed.is_some_and(quiet_since)
            && open
                .iter()
                .all(|id| self.heard.get(id).is_some_and(|(_, at)| quiet_since(*at)))
    }

    /// Whether every established connection has ended (closed, reset, or
    /// gone).
    fn all_ended(&self) -> bool {
        let endpoint = self.session.endpoint();
        self.established.iter().all(|id| {
            endpoint
                .connection(*id)
                .is_none_or(|c| c.state() >= State::TimeWait)
        })
    }

    /// A datagram from `from` that arrived with the ECN codepoint `ecn` (RFC
    /// 4340 §12.1: this receiver reads the ECN bits, so it leaves ECN
    /// Incapable at 0 and its CCID counts CE marks as losses).
    fn datagram(&mut self, from: SocketAddr, bytes: &[u8], ecn: Ecn) {
        let joining = self.peer.is_some_and(|p| p != from) && self.joins(from, bytes);
        if self.peer.is_some_and(|p| p != from) && !joining && !self.paths.contains(&from) {
            self.report.foreign_datagrams += 1;
            // RFC 4340 §5.6, Reset Code 9: "Too Busy: The server is too busy
            // to accept new connections". Only a Request is answered; a
            // Reset is no larger than the Request, so nothing is amplified.
            if let Some(reset) = self
                .session
                .endpoint()
                .refuse_request(bytes, ResetCode::TooBusy)
            {
                if self
                    .receiver
                    .link
                    .send_to_ecn(&reset, from, Ecn::NotEct)
                    .is_ok()
                {
                    self.report.busy_refusals += 1;
                }
            }
            return;
        }
        let now = self.clock.now();
        let incoming_len = bytes.len();
        // Opened in a copy only when protected: a plain listener has
        // nothing to open (what a plain end checks, a sealed Response, is a
        // sender's concern).
        let opened;
        let bytes = if self.protection.is_on() {
            let mut copy = bytes.to_vec();
            let verdict = self
                .protection
                .incoming(&mut copy, from, self.session.endpoint(), now);
            if verdict.refusal == Some(Refusal::WrongPassphrase) {
                self.refuse_sender(from);
            }
            if !verdict.deliver {
                return;
            }
            opened = copy;
            opened.as_slice()
        } else {
            bytes
        };
        self.last_source = Some(from);
        if self.peer.is_none() {
            self.note_token(from, bytes);
        }
        let iss = random_u64(now.as_nanos());
        self.session
            .handle_datagram_from(now, bytes, ecn, iss, &address_bytes(from));
        let accepted = self.session.endpoint().stats().accepted;
        if accepted > self.accepted {
            self.accepted = accepted;
            if self.peer.is_none() {
                self.peer = Some(from);
                self.token = self
                    .pending_tokens
                    .iter()
                    .rev()
                    .find(|(address, _)| *address == from)
                    .map(|(_, token)| *token);
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
        if self.peer.is_none() {
            // No sender yet: what the session has to send answers this
            // datagram (a Response with a cookie, a Reset), to its source,
            // and never with more bytes than came (no amplification).
            self.answer(now, from, Some(incoming_len));
        } else if self.peer != Some(from) {
            // Another path of the sender: its own answers (a Response with
            // a cookie) go back to it, no larger than what came.
            self.note_route(from, bytes);
            self.send_routed(now, Some((from, incoming_len)));
        } else {
            self.note_route(from, bytes);
        }
        self.observe(now);
        if self.is_sender(from) && self.data_started {
            // A sender sends all the time once its data began: the silence
            // counts from the last packet heard.
            self.watch.heard();
            self.watch.expect(now);
        }
    }

    /// Whether `from` is the sender: its first address or one of its
    /// paths.
    fn is_sender(&self, from: SocketAddr) -> bool {
        self.peer == Some(from) || self.paths.contains(&from)
    }

    /// Remembers the token of a Request from `from` while no sender is
    /// served (the connection it opens is made later, from its cookie).
    fn note_token(&mut self, from: SocketAddr, bytes: &[u8]) {
        if let Some(token) = self.request_token(bytes) {
            if self.pending_tokens.len() >= MAX_PENDING_TOKENS {
                self.pending_tokens.pop_front();
            }
            self.pending_tokens.push_back((from, token));
        }
    }

    /// The session token `bytes` carry, if they are a Request with one.
    fn request_token(&self, bytes: &[u8]) -> Option<PathToken> {
        let context = self
            .session
            .endpoint()
            .config()
            .connection
            .checksum
            .receive_context();
        PathToken::peek_request(bytes, &context)
    }

    /// Whether a datagram from `from`, while another address is served,
    /// joins `from` to the stream as another path of its sender: a Request
    /// with the sender's token, or anything from an address whose Request
    /// carried it before the sender was known (its handshake was under way
    /// beside the first path's), while there is room for a path.
    fn joins(&mut self, from: SocketAddr, bytes: &[u8]) -> bool {
        if self.paths.contains(&from) {
            return true;
        }
        let Some(token) = self.token else {
            return false;
        };
        if self.paths.len() + 1 >= MAX_PATHS {
            return false;
        }
        let known = self
            .pending_tokens
            .iter()
            .any(|(address, t)| *address == from && *t == token);
        if !known && self.request_token(bytes) != Some(token) {
            return false;
        }
        self.paths.push(from);
        self.report.paths_joined += 1;
        eprintln!("recv: the sender's path from {from} joins the stream");
        true
    }

    /// Remembers which address connection of `bytes` came from.
    fn note_route(&mut self, from: SocketAddr, bytes: &[u8]) {
        let Some((remote_port, local_port)) = peek_ports(bytes) else {
            return;
        };
        let id = ConnectionId {
            local_port,
            remote_port,
        };
        let endpoint = self.session.endpoint();
        if endpoint.connection(id).is_some() {
            self.routes.insert(id, from);
        }
        if self.routes.len() > endpoint.len() {
            self.routes
                .retain(|id, _| endpoint.connection(*id).is_some());
        }
    }

    /// Sends what the session has to send, each connection's packets to the
    /// address it came from; the endpoint's own answers (a Response with a
    /// cookie, a Reset) to `stray`'s address if given, if no larger than
    /// its length, and otherwise to the sender.
    fn send_routed(&mut self, now: Instant, stray: Option<(SocketAddr, usize)>) {
        let fallback = self.peer.or(self.last_source);
        while let Some((id, transmit)) = self.session.poll_transmit_for(now, &mut self.buf) {
            self.buf.truncate(transmit.len);
            if !self.protection.outgoing(&mut self.buf) {
                continue;
            }
            let to = match (id.and_then(|id| self.routes.get(&id).copied()), stray) {
                (Some(route), _) => route,
                (None, Some((to, most))) if id.is_none() => {
                    if self.buf.len() > most {
                        continue;
                    }
                    to
                }
                _ => match fallback {
                    Some(to) => to,
                    None => continue,
                },
            };
            let _ = self.receiver.link.send_to_ecn(&self.buf, to, transmit.ecn);
        }
    }

    /// Sends what the session has to send to `to` at once (sealed when
    /// protected); with `limit`, nothing longer than it.
    fn answer(&mut self, now: Instant, to: SocketAddr, limit: Option<usize>) {
        while let Some(transmit) = self.session.poll_transmit(now, &mut self.buf) {
            self.buf.truncate(transmit.len);
            if !self.protection.outgoing(&mut self.buf) {
                continue;
            }
            if limit.is_some_and(|most| self.buf.len() > most) {
                continue;
            }
            let _ = self.receiver.link.send_to_ecn(&self.buf, to, transmit.ecn);
        }
    }

    /// A sender at `from` failed to authenticate its handshake: named
    /// once on stderr (the first few), counted always.
    fn refuse_sender(&mut self, from: SocketAddr) {
        if self.refused_senders.contains(&from) {
            return;
        }
        self.report.refused_senders += 1;
        if self.refused_senders.len() < MAX_NAMED_REFUSALS {
            self.refused_senders.insert(from);
            eprintln!(
                "recv: the sender at {from} uses another passphrase (or none): \
                 its handshake does not authenticate; its packets are dropped"
            );
        }
    }

    fn transmit(&mut self, now: Instant) {
        if self.peer.or(self.last_source).is_none() {
            while self.session.poll_transmit(now, &mut self.buf).is_some() {}
            return;
        }
        // A lost feedback packet is what DCCP is built to survive.
        self.send_routed(now, None);
    }

    /// Reads the merged stream and writes complete access units.
    fn deliver(&mut self, now: Instant) -> Result<(), RecvError> {
        if let Some(voice) = self.voice.as_mut() {
            while let Some(packet) = self.session.recv() {
                self.report.packets_received += 1;
                self.report.bytes_received += packet.len() as u64;
                voice.on_packet(now, &packet);
            }
            voice.play(now, false).map_err(RecvError::Output)?;
            self.report.frames_written = voice.frames_written();
            return Ok(());
        }
        while let Some(packet) = self.session.recv() {
            self.report.packets_received += 1;
            self.report.bytes_received += packet.len() as u64;
            if let Some(layered) = self.layered.as_mut() {
                layered.on_packet(now, &packet);
            }
            let ready = self.fec.push(now, packet);
            self.assemble(now, ready)?;
        }
        let ready = self.fec.poll(now);
        self.assemble(now, ready)?;
        self.player.tick(now, false);
        Ok(())
    }

    /// `cc=buffer`: sends the controller's report back when one is due.
    fn buffer_feedback(&mut self, now: Instant) {
        let Some(layered) = self.layered.as_mut() else {
            return;
        };
        if let Some(report) = layered.poll_feedback(now) {
            if self.session.send_report(now, &report).is_err() {
                layered.feedback_refused();
            }
        }
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

    /// Keeps the bounds the hostile-input tests check, the connections
    /// that were established, whether their data began and how they ended.
    fn observe(&mut self, now: Instant) {
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
        for id in &self.established {
            let Some(conn) = endpoint.connection(*id) else {
                continue;
            };
            let stats = conn.stats();
            self.data_started |= stats.data_packets_received > 0;
            let heard = self
                .heard
                .entry(*id)
                .or_insert((stats.packets_received, now));
            if stats.packets_received != heard.0 {
                *heard = (stats.packets_received, now);
            }
            // A server that closes in order ends CLOSED (it sends the final
            // Reset(Closed)); one that received a Reset holds TIMEWAIT
            // (RFC 4340 §8.5 step 9).
            let ended = match conn.state() {
                State::Closed => Some(false),
                State::TimeWait => Some(stats.resets_received > 0),
                _ => None,
            };
            if let Some(by_reset) = ended {
                if self.endings.seen.insert(*id) {
                    if by_reset {
                        self.endings.reset += 1;
                    } else {
                        self.endings.closed += 1;
                        self.endings.first_closed.get_or_insert(now);
                    }
                }
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
}
