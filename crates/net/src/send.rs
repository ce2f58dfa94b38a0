//! The sender: H.264 frames → RTP/H.264 packets → a proto
//! [`SenderSession`] over a connected UDP socket, on the real clock.
//!
//! The loop follows the sans-IO contract of the session: inputs
//! (`handle_datagram`, `handle_timeout`), then the application's packets
//! (`send`), then `poll_transmit` until `None`, `poll_event` until `None`,
//! and `poll_timeout` to know when to wake ([`UdpLink::wait`]). Frames are
//! released at their frame time in live mode (frame i at i/fps after the
//! first connection opened) and as fast as the session takes them on
//! demand. In live mode a packet that can no longer meet its frame's
//! deadline is dropped with the rest of its frame, I frames last
//! ([`live_frame_is_late`], the simulator's rule).
//!
//! The receiver ends the stream early in three ways, each told apart: it
//! refuses the connection with Reset(Too Busy) while it serves another
//! sender ([`SendError::ReceiverBusy`]); it closes the connections itself
//! (a CloseReq, RFC 4340 §8.3: the sender closes in order and reports
//! `receiver-closed`); or it falls silent, answering nothing the sender
//! sent for the peer timeout ([`SendError::PeerSilent`], [`crate::peer`]).

mod config;
mod fec;
mod layered;
mod source;
mod summary;
mod voice;

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fairstream_media::h264::FrameType;
use fairstream_media::playout::live_frame_is_late;
use fairstream_media::stream::{rtp_timestamp, FramePacketizer};
use fairstream_proto::conn::{ConnectionConfig, State};
use fairstream_proto::session::{
    ArqConfig, DatagramMeta, PathToken, SenderSession, SessionConfig, SessionEvent,
    SESSION_FEC_TAG_BYTES, SESSION_HEADER_BYTES, SESSION_TIMED_HEADER_BYTES,
};
use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;

pub use config::{Mode, PathReport, SendConfig, SendError, SendReport, SourceFrame};
pub use layered::BufferSendReport;
pub use source::{SourceSpec, ENCODER_MAX_BPS, ENCODER_MIN_BPS};
pub use voice::{VoiceSendReport, VoiceSpec, DEFAULT_TRANSMIT_BUFFER};

use config::socket_error;

pub(crate) use crate::clock::random_u64;
use crate::clock::{Clock, WallClock};
use crate::link::{Incoming, UdpLink};
use crate::peer::{largest_rtt, peek_signal, PeerSignal, SilenceWatch};
use crate::protect::{Protection, Refusal, OVERHEAD};
use crate::stats::StatsSink;
use crate::url::LocalBind;
use crate::warn::StatsFailures;
use source::{Next, Source};

/// Packets waiting in the application's queue in on-demand mode.
const ON_DEMAND_PENDING: usize = 2048;
/// Datagrams kept in the session queue on demand (the simulator's depth).
const ON_DEMAND_FEED: usize = 512;
/// How often a source that is behind is asked again for its frame.
const SOURCE_POLL: Duration = Duration::from_millis(5);
/// A path's down and up times kept in the report, at most.
const MAX_PATH_TIMES: usize = 16;
/// The longest the loop sleeps without looking at the stop flag.
const MAX_SLEEP: Duration = Duration::from_millis(20);

/// A packet waiting to enter the session.
#[derive(Debug)]
struct Pending {
    packet: Vec<u8>,
    frame: u64,
    frame_type: FrameType,
    first_of_frame: bool,
    deadline: Option<Instant>,
    gop: u64,
}

/// Requests are padded to this many bytes: a receiver answers a sender it
/// does not know yet with a Response carrying an Init Cookie (about 140
/// bytes for a Request of about 60), and never with more bytes than came
/// (issue 13: no amplification).
pub const REQUEST_MIN_LEN: usize = 320;

/// A sender with its socket bound and connected (one socket per path of
/// a bonded stream, the URL's `paths`).
#[derive(Debug)]
pub struct Sender {
    config: SendConfig,
    /// The first path's address.
    target: SocketAddr,
    /// Every path's address.
    targets: Vec<SocketAddr>,
    link: UdpLink,
}

impl Sender {
    /// Binds a UDP socket and connects it to the URL's address.
    pub fn connect(config: SendConfig) -> Result<Sender, SendError> {
        if !(config.fps > 0.0 && config.fps <= 240.0) {
            return Err(SendError::Config(format!(
                "frame rate {} is outside (0, 240]",
                config.fps
            )));
        }
        let paths = config.url.path_targets()?;
        let mut sockets = Vec::with_capacity(paths.len());
        for (remote, local) in &paths {
            sockets.push(path_socket(*remote, local.as_ref())?);
        }
        let targets: Vec<SocketAddr> = paths.iter().map(|(remote, _)| *remote).collect();
        let link =
            UdpLink::bonded(sockets).map_err(socket_error("cannot start the socket reader"))?;
        Ok(Sender {
            config,
            target: targets[0],
            targets,
            link,
        })
    }

    /// The local address of the socket.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.link.local_addr()
    }

    /// Streams until the source ends, `stop` is set or the duration
    /// passes; then closes the connections.
    pub fn run(self, stop: &AtomicBool) -> Result<SendReport, SendError> {
        Run::new(self)?.run(stop)
    }
}

/// A UDP socket for one path, bound where the URL says and connected to
/// `remote`.
fn path_socket(remote: SocketAddr, local: Option<&LocalBind>) -> Result<UdpSocket, SendError> {
    let any: SocketAddr = if remote.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let socket = match local {
        None => UdpSocket::bind(any).map_err(socket_error("cannot bind a UDP socket"))?,
        Some(LocalBind::Address(address)) => {
            UdpSocket::bind(address).map_err(socket_error(format!("cannot bind {address}")))?
        }
        Some(LocalBind::Device(name)) => {
            let socket = socket2::Socket::new(
                socket2::Domain::for_address(remote),
                socket2::Type::DGRAM,
                Some(socket2::Protocol::UDP),
            )
            .map_err(socket_error("cannot open a UDP socket"))?;
            socket
                .bind_device(Some(name.as_bytes()))
                .map_err(socket_error(format!(
                    "cannot bind to interface {name} (SO_BINDTODEVICE needs CAP_NET_RAW, \
                 and the interface must exist)"
                )))?;
            socket
                .bind(&any.into())
                .map_err(socket_error("cannot bind a UDP socket"))?;
            socket.into()
        }
    };
    socket
        .connect(remote)
        .map_err(socket_error(format!("cannot connect to {remote}")))?;
    Ok(socket)
}

/// Connects and runs (see [`Sender`]).
pub fn run(config: SendConfig, stop: Arc<AtomicBool>) -> Result<SendReport, SendError> {
    Sender::connect(config)?.run(&stop)
}

/// The state of one run.
struct Run {
    sender: Sender,
    clock: Clock,
    start: Instant,
    session: SenderSession,
    source: Source,
    packetizer: FramePacketizer,
    pending: VecDeque<Pending>,
    sink: StatsSink,
    report: SendReport,
    media_start: Option<Instant>,
    /// Frame i is due at this plus i/fps: the time the first frame was
    /// taken, once a connection was open (a pipe may start late).
    anchor: Option<Instant>,
    next_frame: u64,
    gop: u64,
    source_ended: bool,
    /// The RTP sequence number of the next packet sent.
    rtp_sequence: u16,
    fec: Option<fec::FecEncoder>,
    /// The receiver's silence after what the sender sent.
    watch: SilenceWatch,
    /// A Reset(Too Busy) arrived before any connection opened.
    busy: bool,
    /// The receiver asked to close (CloseReq).
    receiver_closed: bool,
    /// ICMP port unreachable while closing: the receiver finished first.
    refused_while_closing: bool,
    /// An ICMP error said the receiver's port is closed, and nothing was
    /// heard from it since: the peer timeout is shortened
    /// ([`crate::peer::PeerTimeout::hinted`]).
    refused_hint: bool,
    /// Packet protection (the URL's `passphrase`).
    protection: Protection,
    /// The receiver's protection does not match ours: the stream ends.
    refused: Option<Refusal>,
    stats_failures: StatsFailures,
    buf: Vec<u8>,
    /// `cc=buffer`: paper 004's controller plans and paces the stream.
    layered: Option<layered::LayeredSender>,
    /// `voice:`: a voice call instead of video.
    voice: Option<voice::VoiceSender>,
    /// What each path did, when there are several.
    paths: Vec<PathReport>,
}

impl Run {
    fn new(sender: Sender) -> Result<Run, SendError> {
        let config = &sender.config;
        let transport = &config.url.transport;
        let ccid = transport.ccid();
        let protection = match &config.url.passphrase {
            Some(passphrase) => Protection::sender(passphrase.clone()),
            None => Protection::plain(),
        };
        // A sealed packet is the tag longer: it still fits `max_packet`.
        let overhead = if protection.is_on() { OVERHEAD } else { 0 };
        let mut connection = ConnectionConfig {
            ccid,
            accepted_ccids: vec![ccid],
            max_packet_size: transport.max_packet.saturating_sub(overhead),
            handshake_timeout: config.handshake_timeout,
            close_timeout: config.close_timeout,
            msl: Duration::from_secs(1),
            request_min_len: REQUEST_MIN_LEN,
            ..ConnectionConfig::default()
        };
        let bonded = sender.targets.len() > 1;
        if bonded {
            // The token that tells the receiver these paths are one
            // session.
            connection.request_data = PathToken(random_u64(0x6f6e_6473)).request_data();
        }
        connection.tfrc.segment_size = connection.max_payload().max(1);
        if let Some(rate) = transport.rate {
            // cc=fixed: the experimental CCID 249 paces at the URL's rate.
            connection.fixed_rate.rate = rate;
        }
        if config.url.buffer.is_some() {
            // cc=buffer: CCID 249 never holds the schedule back; the
            // application paces every packet (as the simulator does).
            connection.fixed_rate.rate = Rate::INFINITY;
        }
        let clock = Clock::new();
        let start = clock.now();
        let seed = random_u64(u64::from(sender.target.port()));
        let session_config = SessionConfig {
            connection,
            count: transport.count(),
            policy: transport.policy,
            start_offset: transport.start_offset,
            local_port: 1024 + (seed % 50_000) as u16,
            remote_port: sender.target.port(),
            iss_seed: seed,
            arq: ArqConfig {
                enabled: config.url.arq.unwrap_or(true),
                ..ArqConfig::default()
            },
            paths: sender.targets.len(),
            duplicate_key: config.url.duplicate_key,
            shared: config.url.shared_groups(),
            ..SessionConfig::default()
        };
        let session = SenderSession::new(session_config, start)
            .map_err(|e| SendError::Config(e.to_string()))?;
        // Media datagrams carry their playout time in the session header,
        // and with FEC their place in their block.
        let tag = if config.url.fec.is_some() {
            SESSION_FEC_TAG_BYTES
        } else {
            0
        };
        let max_datagram = fec::media_datagram(
            session
                .max_datagram()
                .saturating_sub(SESSION_TIMED_HEADER_BYTES - SESSION_HEADER_BYTES + tag),
            config.url.fec,
        );
        let packetizer = FramePacketizer::new(max_datagram)
            .map_err(|e| SendError::Config(format!("max_packet {}: {e}", transport.max_packet)))?;
        // A slice of the encoder fits a packet with its RTP header.
        let slice_max = u32::try_from(max_datagram.saturating_sub(16)).unwrap_or(u32::MAX);
        // Checked before the source opens (a pipe would start being read).
        let layered = layered::LayeredSender::for_config(config, max_datagram)?;
        let voice = voice::VoiceSender::for_config(config, WallClock::new(&clock), seed)?;
        let source = Source::open(
            &config.source,
            config.looped,
            config.fps,
            slice_max,
            config.temporal_layers,
            config.save.as_deref(),
        )?;
        let sink = StatsSink::open(&config.stats).map_err(SendError::Stats)?;
        let fec = config.url.fec.map(fec::FecEncoder::new).transpose()?;
        let paths = if bonded {
            sender
                .targets
                .iter()
                .enumerate()
                .map(|(index, target)| PathReport {
                    target: target.to_string(),
                    local: sender
                        .link
                        .local_addr_of(index)
                        .map_or_else(|_| "?".into(), |a| a.to_string()),
                    ..PathReport::default()
                })
                .collect()
        } else {
            Vec::new()
        };
        let report = SendReport {
            target: sender.target.to_string(),
            // Allocated up front: growing it would cost a copy mid-run.
            departures: Vec::with_capacity(config.record_departures.min(1 << 24)),
            ..SendReport::default()
        };
        Ok(Run {
            sender,
            clock,
            start,
            session,
            source,
            packetizer,
            pending: VecDeque::new(),
            sink,
            report,
            media_start: None,
            anchor: None,
            next_frame: 0,
            gop: 0,
            source_ended: false,
            rtp_sequence: 0,
            fec,
            watch: SilenceWatch::default(),
            busy: false,
            receiver_closed: false,
            refused_while_closing: false,
            refused_hint: false,
            protection,
            refused: None,
            stats_failures: StatsFailures::default(),
            buf: Vec::with_capacity(2048),
            layered,
            voice,
            paths,
        })
    }

    fn run(mut self, stop: &AtomicBool) -> Result<SendReport, SendError> {
        let interval = self.sender.config.stats.interval;
        let mut next_stats = interval.map(|i| self.start + i);
        // When the close began, and how long the session lingers first.
        let mut closing: Option<(Instant, Duration)> = None;
        let mut failure: Option<SendError> = None;
        loop {
            let now = self.clock.now();
            if let Some((since, linger)) = closing {
                // The session lingers (three RTTs with retransmission on)
                // before its connections send their Close.
                let close_wait =
                    self.sender.config.close_timeout + linger + Duration::from_millis(200);
                if self.all_closed() || now - since > close_wait {
                    self.report.closed_cleanly = self.all_closed();
                    if !self.report.closed_cleanly
                        && !self.refused_while_closing
                        && failure.is_none()
                    {
                        failure = Some(SendError::CloseUnanswered {
                            target: self.sender.target,
                            after: close_wait,
                        });
                    }
                    break;
                }
            } else if let Some(reason) = self.stop_reason(now, stop) {
                self.report.stopped_by = reason.into();
                self.session.close(now);
                closing = Some((now, self.close_linger()));
            }
            if self.media_start.is_none() {
                if self.any_connected() {
                    self.media_start = Some(now);
                } else if now - self.start > self.sender.config.handshake_timeout {
                    return Err(SendError::HandshakeTimeout {
                        target: self.sender.target,
                        after: self.sender.config.handshake_timeout,
                    });
                }
            }
            if self.session.poll_timeout().is_some_and(|t| t <= now) {
                self.session.handle_timeout(now);
            }
            if closing.is_none() && self.media_start.is_some() {
                let rtt = largest_rtt(self.session.endpoint());
                let peer_timeout = self.sender.config.peer_timeout;
                let timeout = if self.refused_hint {
                    peer_timeout.hinted(rtt)
                } else {
                    peer_timeout.for_rtt(rtt)
                };
                if let Some(silent) = self.watch.expired(now, timeout) {
                    // Nobody to close with: the receiver is gone.
                    if self.refused_hint {
                        return Err(SendError::PeerGone {
                            target: self.sender.target,
                            silent,
                        });
                    }
                    return Err(SendError::PeerSilent {
                        target: self.sender.target,
                        silent,
                        timeout,
                    });
                }
            }
            if closing.is_none() {
                if let Err(error) = self.pull_frames(now) {
                    // Close the connections in order before reporting it.
                    self.report.stopped_by = "error".into();
                    self.session.close(now);
                    closing = Some((now, self.close_linger()));
                    failure = Some(error);
                }
                self.feed(now);
            }
            self.transmit(now, closing.is_some())?;
            if let Some(refusal) = self.refused {
                // The Ack that answers the Response has left (sealed with
                // the keys this end has), so the receiver learns it too.
                return Err(refusal_error(refusal, self.sender.target));
            }
            self.events()?;
            if let Some(at) = next_stats.filter(|t| *t <= now) {
                self.stats_line(now);
                next_stats = interval.map(|i| (at + i).max(now));
            }
            // Pacing and frame times need the precise wait; the rest (the
            // session's RTT samples, statistics) not.
            let precise = [self.session.poll_precise_timeout(), self.next_release(now)]
                .into_iter()
                .flatten()
                .min();
            let coarse = [
                self.session.poll_timeout(),
                next_stats,
                Some(now + MAX_SLEEP),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(now + MAX_SLEEP);
            let mut incoming = match precise.filter(|p| *p <= coarse) {
                Some(deadline) => self.sender.link.wait_on(&self.clock, deadline),
                None => self.sender.link.wait_coarse_on(&self.clock, coarse),
            };
            while let Some((path, message)) = incoming {
                match message {
                    // Feedback is sent Not-ECT (RFC 4340 §12 is about the
                    // data); the session takes no codepoint.
                    Incoming::Datagram(_, mut bytes, ecn) => {
                        let now = self.clock.now();
                        let target = self.path_target(path);
                        let verdict = self.protection.incoming(
                            &mut bytes,
                            target,
                            self.session.endpoint(),
                            now,
                        );
                        if let Some(refusal) = verdict.refusal {
                            self.refused.get_or_insert(refusal);
                        }
                        if verdict.deliver {
                            let signal = peek_signal(&bytes);
                            self.session.handle_datagram_on(now, path, &bytes, ecn);
                            self.watch.heard();
                            self.refused_hint = false;
                            self.take_signal(signal);
                        }
                    }
                    Incoming::Error(e) => self.path_error(path, e, closing.is_some())?,
                }
                incoming = self.sender.link.try_recv_on();
            }
        }
        if let Some(error) = failure {
            return Err(error);
        }
        Ok(self.finish())
    }

    /// Acts on what a control packet from the receiver said, once the
    /// session took it.
    fn take_signal(&mut self, signal: Option<PeerSignal>) {
        match signal {
            // Acted on when the connection it reset is reported lost.
            Some(PeerSignal::Busy) if self.media_start.is_none() => self.busy = true,
            Some(PeerSignal::CloseRequest(id)) => {
                // The connection accepted it: it is closing (RFC 4340 §8.5
                // step 13), not merely sent a forged packet.
                let endpoint = self.session.endpoint();
                if endpoint
                    .connection(id)
                    .is_some_and(|c| c.state() >= State::Closing)
                {
                    self.receiver_closed = true;
                }
            }
            _ => {}
        }
    }

    fn stop_reason(&self, now: Instant, stop: &AtomicBool) -> Option<&'static str> {
        if stop.load(Ordering::Relaxed) {
            return Some("signal");
        }
        if self.receiver_closed {
            return Some("receiver-closed");
        }
        if self
            .sender
            .config
            .duration
            .is_some_and(|d| now - self.start >= d)
        {
            return Some("duration");
        }
        let endpoint = self.session.endpoint();
        let drained = endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .all(|c| c.send_queue_len() == 0);
        let sent_all = self.layered.as_ref().is_none_or(|l| l.is_drained())
            && self.voice.as_ref().is_none_or(|v| v.is_ended());
        (self.source_ended
            && sent_all
            && self.pending.is_empty()
            && self.session.queued() == 0
            && drained)
            .then_some("end")
    }

    fn any_connected(&self) -> bool {
        let endpoint = self.session.endpoint();
        endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .any(|c| matches!(c.state(), State::PartOpen | State::Open))
    }

    fn all_closed(&self) -> bool {
        let endpoint = self.session.endpoint();
        endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .all(|c| c.state() >= State::TimeWait)
    }

    /// How long the session lingers after `close` before its connections
    /// send their Close: three RTTs with retransmission on, so that what
    /// the receiver asks for at the end can still be resent.
    fn close_linger(&self) -> Duration {
        if self.sender.config.url.arq.unwrap_or(true) {
            3 * crate::peer::largest_rtt(self.session.endpoint()).unwrap_or_default()
        } else {
            Duration::ZERO
        }
    }

    /// Path `path`'s address.
    fn path_target(&self, path: usize) -> SocketAddr {
        self.sender
            .targets
            .get(path)
            .copied()
            .unwrap_or(self.sender.target)
    }

    /// A socket error on path `path`. With several paths, none is fatal:
    /// a path whose network went away (an interface down, an ICMP error)
    /// falls silent, the session finds it dead and sends on the others,
    /// and probes it until it answers again.
    fn path_error(
        &mut self,
        path: usize,
        error: io::Error,
        closing: bool,
    ) -> Result<(), SendError> {
        match self.paths.get_mut(path) {
            Some(report) => {
                report.errors += 1;
                Ok(())
            }
            None => self.socket_error(error, closing),
        }
    }

    fn socket_error(&mut self, error: io::Error, closing: bool) -> Result<(), SendError> {
        if error.kind() != io::ErrorKind::ConnectionRefused {
            return Err(SendError::Socket {
                what: format!("socket to {}", self.sender.target),
                error,
            });
        }
        if closing {
            // The receiver finished first: nothing more to close.
            self.refused_while_closing = true;
            return Ok(());
        }
        if self.media_start.is_none() {
            // Before any connection opened, a closed port ends the attempt
            // at once: that is what a user who mistyped the port wants.
            return Err(SendError::NoListener(self.sender.target));
        }
        // Once the stream runs, ICMP is a hint, never a verdict: an
        // off-path attacker can forge a port unreachable for any port
        // (issue 13). It shortens the peer timeout until the receiver is
        // heard again; only silence ends the stream.
        self.report.icmp_refused += 1;
        self.refused_hint = true;
        Ok(())
    }

    /// When the next live frame is due. A frame whose time has come but
    /// that the reader has not delivered yet (a pipe behind its frame
    /// rate) is looked for again after [`SOURCE_POLL`].
    fn next_release(&self, now: Instant) -> Option<Instant> {
        if let (Some(layered), Some(_)) = (&self.layered, self.media_start) {
            return layered.next_due(now);
        }
        if let (Some(voice), Some(_)) = (&self.voice, self.media_start) {
            return voice.next_due(now);
        }
        if self.media_start.is_none() || self.sender.config.mode != Mode::Live || self.source_ended
        {
            return None;
        }
        Some(match self.anchor {
            Some(anchor) => self.release(anchor, self.next_frame).max(now + SOURCE_POLL),
            None => now + SOURCE_POLL,
        })
    }

    fn release(&self, start: Instant, frame: u64) -> Instant {
        start + Duration::from_secs_f64(frame as f64 / self.sender.config.fps)
    }

    /// Takes the frames that are due from the source and packetizes them.
    fn pull_frames(&mut self, now: Instant) -> Result<(), SendError> {
        if self.media_start.is_none() {
            return Ok(());
        }
        if self.layered.is_some() {
            return self.pull_layered(now);
        }
        if self.voice.is_some() {
            self.pull_voice(now);
            return Ok(());
        }
        let live = self.sender.config.mode == Mode::Live;
        while !self.source_ended {
            let release = self
                .anchor
                .map_or(now, |anchor| self.release(anchor, self.next_frame));
            if live && release > now {
                break;
            }
            // A relay keeps its frames in its own buffer (where its
            // statistics see them) until the sender has room.
            let limit = self.source.relay().map_or(ON_DEMAND_PENDING, |_| 1);
            if !live && self.pending.len() >= limit {
                break;
            }
            let (frame, kept_timestamp) = match self.source.next()? {
                Next::Frame(frame, timestamp, _) => (frame, timestamp),
                Next::NotYet => break,
                Next::End => {
                    self.source_ended = true;
                    break;
                }
            };
            self.anchor.get_or_insert(now);
            let index = self.next_frame;
            self.next_frame += 1;
            self.report.frames_read += 1;
            if index > 0 && (frame.idr || frame.frame_type == FrameType::I) {
                self.gop += 1;
            }
            self.sender.config.copy_frame(index, &frame.nal_units);
            let deadline = live.then(|| release + self.sender.config.startup_delay);
            let timestamp =
                kept_timestamp.unwrap_or_else(|| rtp_timestamp(index, self.sender.config.fps));
            let packets = self
                .packetizer
                .packetize(timestamp, frame.nal_units.iter().map(Vec::as_slice))
                .map_err(|e| SendError::Source {
                    source_name: "packetizer".into(),
                    reason: e.to_string(),
                })?;
            for (i, packet) in packets.into_iter().enumerate() {
                self.pending.push_back(Pending {
                    packet,
                    frame: index,
                    frame_type: frame.frame_type,
                    first_of_frame: i == 0,
                    deadline,
                    gop: self.gop,
                });
            }
        }
        Ok(())
    }

    /// Moves packets into the session, dropping late frames in live mode.
    fn feed(&mut self, now: Instant) {
        if self.layered.is_some() {
            self.feed_layered(now);
            return;
        }
        if self.voice.is_some() {
            // pull_voice sent each frame as it came.
            return;
        }
        let depth = match self.sender.config.mode {
            Mode::OnDemand if self.source.relay().is_none() => ON_DEMAND_FEED,
            // Live, and a relay: a few packets per connection.
            _ => (self.session.open_connections() * 4).max(8),
        };
        let one_way = self.one_way_delay();
        while self.session.queued() < depth {
            let Some(next) = self.pending.front() else {
                break;
            };
            if next
                .deadline
                .is_some_and(|d| live_frame_is_late(next.frame_type, now, one_way, d))
            {
                let frame = next.frame;
                while self.pending.front().is_some_and(|p| p.frame == frame) {
                    self.pending.pop_front();
                }
                self.report.frames_late += 1;
                continue;
            }
            let Some(mut packet) = self.pending.pop_front() else {
                break;
            };
            let meta = DatagramMeta {
                gop: packet.gop,
                deadline: packet.deadline,
                key: packet.frame_type == FrameType::I,
                retransmit: true,
                playout: Some(self.frame_time(packet.frame)),
                // Its place in its FEC block, so that the receiver leaves to
                // FEC what FEC will rebuild.
                fec: self.fec.as_ref().and_then(fec::FecEncoder::next_tag),
            };
            if !self.send_media(now, &mut packet.packet, meta, packet.first_of_frame) {
                let frame = packet.frame;
                while self.pending.front().is_some_and(|p| p.frame == frame) {
                    self.pending.pop_front();
                }
            }
        }
    }

    /// Frame `frame`'s time from the start of the stream.
    fn frame_time(&self, frame: u64) -> Duration {
        Duration::from_secs_f64(frame as f64 / self.sender.config.fps)
    }

    /// Hands one RTP packet of the stream to the session, numbered as the
    /// next packet sent; whether the session took it (if not, its frame
    /// counts as dropped).
    fn send_media(
        &mut self,
        now: Instant,
        packet: &mut [u8],
        meta: DatagramMeta,
        first_of_frame: bool,
    ) -> bool {
        // RTP sequence numbers count the packets sent: frames dropped
        // before sending leave no gap for the receiver to take as loss
        // (RFC 3550 §5.1: "increments by one for each RTP data packet
        // sent").
        if let Some(field) = packet.get_mut(2..4) {
            field.copy_from_slice(&self.rtp_sequence.to_be_bytes());
        }
        if self.session.send_with(now, packet, meta).is_err() {
            self.report.frames_dropped += 1;
            return false;
        }
        self.rtp_sequence = self.rtp_sequence.wrapping_add(1);
        self.report.packets_sent += 1;
        self.report.bytes_sent += packet.len() as u64;
        if first_of_frame {
            self.report.frames_sent += 1;
        }
        // Parity is not resent: ARQ repairs what FEC could not.
        self.protect(
            now,
            packet,
            DatagramMeta {
                retransmit: false,
                ..meta
            },
        );
        true
    }

    /// Half the smallest RTT of the connections.
    fn one_way_delay(&self) -> Duration {
        let endpoint = self.session.endpoint();
        endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .filter_map(|c| c.stats().rtt)
            .min()
            .unwrap_or(Duration::ZERO)
            / 2
    }

    fn transmit(&mut self, now: Instant, closing: bool) -> Result<(), SendError> {
        while let Some((path, transmit)) = self.session.poll_transmit_on(now, &mut self.buf) {
            self.buf.truncate(transmit.len);
            if !self.protection.outgoing(&mut self.buf) {
                continue;
            }
            let bytes = self.buf.as_slice();
            // RFC 4340 §12: ECT(0) on data while the connection agreed ECN.
            let sent = self.sender.link.send_ecn_on(path, bytes, transmit.ecn);
            if let (Ok(_), Some(report)) = (&sent, self.paths.get_mut(path)) {
                report.packets_sent += 1;
                report.bytes_sent += bytes.len() as u64;
                report.payload_bytes += transmit.payload_len as u64;
            }
            if sent.is_ok() && transmit.payload_len > 0 {
                // Data the receiver's CCID answers within about an RTT
                // (RFC 5348 §6.2; RFC 4341 §6). An Ack of its feedback is
                // not answered, and a sender with nothing to send expects
                // nothing.
                self.watch.expect(now);
            }
            if sent.is_ok() && self.report.departures.len() < self.sender.config.record_departures {
                let at = (self.clock.now() - self.start).as_nanos();
                self.report
                    .departures
                    .push((u64::try_from(at).unwrap_or(u64::MAX), bytes.len()));
            }
            if let Err(error) = sent {
                match error.kind() {
                    // The kernel's buffer is full: the packet is lost, as on
                    // a congested link.
                    io::ErrorKind::WouldBlock => {}
                    _ => self.path_error(path, error, closing)?,
                }
            }
        }
        Ok(())
    }

    /// Path `path` went down (`up` false) or came back: counted, timed
    /// and said on stderr.
    fn path_changed(&mut self, path: usize, up: bool) {
        let target = self.path_target(path);
        let at = (self.clock.now() - self.start).as_secs_f64();
        if let Some(report) = self.paths.get_mut(path) {
            let (count, times) = if up {
                (&mut report.up, &mut report.up_at_s)
            } else {
                (&mut report.down, &mut report.down_at_s)
            };
            *count += 1;
            if times.len() < MAX_PATH_TIMES {
                times.push(at);
            }
        }
        if up {
            eprintln!("send: path {path} (to {target}) is back");
        } else {
            eprintln!(
                "send: path {path} (to {target}) answers nothing: sending on the others, \
                 and trying it again"
            );
        }
    }

    fn events(&mut self) -> Result<(), SendError> {
        while let Some(event) = self.session.poll_event() {
            match event {
                SessionEvent::TargetBitrate(rate) => {
                    self.report.target_bitrate_bps = Some(rate.bits_per_sec());
                    if self.layered.is_some() || self.voice.is_some() {
                        // cc=buffer: the encoder keeps its rate; the
                        // controller sheds enhancement frames instead. A
                        // voice codec has one rate.
                        continue;
                    }
                    // An encoder that refuses a bitrate keeps its last one.
                    let bps = rate.bits_per_sec() * self.media_share();
                    match self.source.set_target(bps) {
                        Ok(Some(bps)) => self.report.encoder_bitrate_bps = Some(bps),
                        Ok(None) => {}
                        Err(_) => self.report.encoder_errors += 1,
                    }
                }
                SessionEvent::ConnectionLost { .. } => {
                    self.report.connections_lost += 1;
                    if self.busy && self.media_start.is_none() {
                        return Err(SendError::ReceiverBusy(self.sender.target));
                    }
                }
                SessionEvent::ConnectionsChanged { .. } => {}
                SessionEvent::PathDown { path } => self.path_changed(path, false),
                SessionEvent::PathUp { path } => self.path_changed(path, true),
            }
        }
        Ok(())
    }
}

/// The error that ends a stream whose receiver's protection does not
/// match this sender's.
fn refusal_error(refusal: Refusal, target: SocketAddr) -> SendError {
    match refusal {
        Refusal::WrongPassphrase => SendError::WrongPassphrase(target),
        Refusal::PeerPlain => SendError::ReceiverPlain(target),
        Refusal::PeerProtected => SendError::ReceiverProtected(target),
    }
}
