//! A multi-connection DCCP flow: a `fairstream-proto` [`SenderSession`] at
//! the flow's `from` host splitting one stream over several connections, a
//! [`ReceiverSession`] at its `to` host merging them back.

use std::time::Duration;

use fairstream_proto::cc::multi::{AdaptiveConfig, ConnectionCountConfig, MultiConfig};
use fairstream_proto::conn::{
    Ccid, ChecksumMode, ConnectionConfig, ConnectionId, DATA_PACKET_OVERHEAD,
};
use fairstream_proto::ecn::Ecn;
use fairstream_proto::session::{
    ArqConfig, ReceiverSession, ReorderConfig, SenderSession, SessionConfig, SessionEvent,
    SplitPolicy, SESSION_FEC_TAG_BYTES, SESSION_HEADER_BYTES, SESSION_TIMED_HEADER_BYTES,
};
use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;

use super::dccp::{CLIENT_PORT_BASE, SERVER_PORT};
use super::media::MediaApp;
use super::relay::SharedRelay;
use super::store::MAX_SPARE_BODIES;
use crate::network::Body;
use crate::rng::SimRng;
use crate::scenario::{
    Controller, MediaConfig, MultiConnection, PlayerSetting, StartupDelaySetting,
};
use crate::source::Source;
use fairstream_proto::buffers::BufferPool;

/// Datagrams kept in the session queue while the application has data:
/// enough for several GOPs per connection when GOPs are interleaved. A
/// saturating source's datagrams split by earliest connection need fewer
/// (see [`SessionEnds::source_depth`]).
const FEED_DEPTH: usize = 512;
/// A source without video has no GOPs; for GOP-interleaved splitting its
/// datagrams are grouped in runs of this many.
const PSEUDO_GOP_DATAGRAMS: u64 = 32;

/// What a session flow measured.
#[derive(Clone, Debug, Default)]
pub(super) struct SessionStats {
    pub(super) app_bytes_delivered: u64,
    pub(super) app_drops: u64,
    pub(super) rtt_sum_s: f64,
    pub(super) rtt_samples: u64,
    /// Data packets the receiving connections got, and the loss events
    /// their TFRC receivers started (over all connections).
    pub(super) data_packets_received: u64,
    pub(super) loss_events: u64,
    /// A bonded flow, per path: when it went down and when it came back.
    pub(super) path_changes: Vec<(Vec<Instant>, Vec<Instant>)>,
}

/// Both sessions of a flow and its application.
#[derive(Debug)]
pub(super) struct SessionEnds {
    sender: SenderSession,
    receiver: ReceiverSession,
    source: Source,
    pub(super) media: Option<MediaApp>,
    /// An upstream leg of a proxy: what the receiver takes goes here.
    pub(super) relay_out: Option<SharedRelay>,
    /// A downstream leg of a proxy: what the sender sends comes from here.
    pub(super) relay_in: Option<SharedRelay>,
    payload: Vec<u8>,
    rng: SimRng,
    /// The buffers the sessions write their packets into.
    bodies: BufferPool,
    closing: bool,
    /// Datagrams of a non-video source fed so far.
    fed: u64,
    /// The session splits by GOP ([`SplitPolicy::GopInterleave`]).
    interleaved: bool,
    /// The most datagrams the session gives a connection at once
    /// ([`SessionConfig::per_connection_depth`]).
    per_connection_depth: usize,
    /// Per receiving connection, the start of its TFRC receiver's open loss
    /// interval (to count new loss events).
    open_intervals: std::collections::BTreeMap<u16, u64>,
    /// A bonded flow: per sending connection's port, the path its packets
    /// arrive on, which the receiver's answers take back (as `fairstream
    /// recv` answers each connection at the address it hears it from).
    reply_paths: std::collections::BTreeMap<u16, u8>,
    /// The sender's [`poll_timeout`](SenderSession::poll_timeout) as last
    /// asked, kept until the sender changes: most wake-ups and arrivals
    /// change only one of the two sessions, and the other's deadline
    /// stands.
    sender_timeout: std::cell::Cell<Option<Option<Instant>>>,
    /// The same for the receiver.
    receiver_timeout: std::cell::Cell<Option<Option<Instant>>>,
    /// The sender's `poll_transmit` last returned nothing, and since then
    /// the sender has had no datagram, timer, data or close: asking again
    /// would find nothing either (every deadline of the session is in its
    /// `poll_timeout`).
    sender_idle: bool,
    /// Datagrams given to the sender so far (accepted or not).
    sends: u64,
    /// The same for the receiver.
    receiver_idle: bool,
    pub(super) stats: SessionStats,
}

impl SessionEnds {
    /// The sessions of a flow with `ccid`, `packet_size` bytes of
    /// application data per datagram.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        ccid: Ccid,
        fixed_rate: Rate,
        packet_size: usize,
        flow_index: usize,
        multi: &MultiConnection,
        media: Option<&MediaConfig>,
        source: Source,
        mut rng: SimRng,
        start: Instant,
        (paths, shared_bottleneck): (usize, bool),
    ) -> Result<SessionEnds, String> {
        // The aggregate and the adaptive default run the experimental CCID
        // 248: its receiver reports j (option 196) and its CE marks (option
        // 197), which the adaptive controller cuts on.
        let aggregate = matches!(
            multi.controller,
            Controller::Aggregate | Controller::Adaptive
        );
        let ccid = if aggregate {
            Ccid::MulTfrcExperimental
        } else {
            ccid
        };
        // A media flow's datagrams carry their playout time, and with FEC
        // their place in their block.
        let header = match media {
            Some(media) if media.fec.is_some() => {
                SESSION_TIMED_HEADER_BYTES + SESSION_FEC_TAG_BYTES
            }
            Some(_) => SESSION_TIMED_HEADER_BYTES,
            None => SESSION_HEADER_BYTES,
        };
        let mut connection = ConnectionConfig {
            ccid,
            accepted_ccids: vec![ccid],
            max_packet_size: packet_size + header + DATA_PACKET_OVERHEAD,
            msl: Duration::from_secs(1),
            handshake_timeout: super::dccp::HANDSHAKE_TIMEOUT,
            // DCCP-UDP (RFC 6773), as `fairstream send` and `recv` run it:
            // the DCCP Checksum field is zero and the UDP checksum, which
            // the link's overhead stands for, protects the datagram (a
            // simulated link corrupts no bits). Captures fill in the
            // native checksum for Wireshark.
            checksum: ChecksumMode::UdpEncapsulated,
            ..ConnectionConfig::default()
        };
        connection.tfrc.segment_size = (packet_size + header).max(1);
        // CCID 249's rate (`cc = "fixed"`; unused by the other CCIDs).
        connection.fixed_rate.rate = fixed_rate;
        let mut receiver_connection = connection.clone();
        receiver_connection.checksum = connection.checksum.reversed();
        let initial = f64::from(multi.conns);
        let lifetime = multi.rtt_min_lifetime;
        let count = match multi.controller {
            Controller::Fixed => ConnectionCountConfig::Fixed(multi.conns),
            Controller::Multfrc => ConnectionCountConfig::Multfrc(MultiConfig {
                initial,
                rtt_min_lifetime: lifetime,
                ..MultiConfig::MULTFRC
            }),
            Controller::Adaptive => {
                let preset = AdaptiveConfig::default();
                ConnectionCountConfig::Adaptive(AdaptiveConfig {
                    initial: initial.max(preset.min),
                    rtt_min_lifetime: lifetime,
                    gamma: multi.gamma.unwrap_or(preset.gamma),
                    queue_packets: multi.queue_packets.unwrap_or(preset.queue_packets),
                    ..preset
                })
            }
            Controller::EMultfrc => ConnectionCountConfig::EMultfrc(MultiConfig {
                initial,
                rtt_min_lifetime: lifetime,
                ..MultiConfig::E_MULTFRC
            }),
            Controller::Aggregate => ConnectionCountConfig::Aggregate(MultiConfig {
                initial,
                rtt_min_lifetime: lifetime,
                ..MultiConfig::MULTFRC
            }),
        };
        // The scenario's overrides of the preset's parameters.
        let tune = |mut c: MultiConfig| {
            c.gamma = multi.gamma.unwrap_or(c.gamma);
            c.queue_packets = multi.queue_packets.unwrap_or(c.queue_packets);
            c.startup = multi.startup.unwrap_or(c.startup);
            // The packet-time allowance is capped at one rtt_min, as in the
            // adaptive preset, whenever a k is given.
            if c.queue_packets > 0.0 && c.gamma_max == 0.0 {
                c.gamma_max = 1.0;
            }
            c
        };
        let count = match count {
            ConnectionCountConfig::Multfrc(c) => ConnectionCountConfig::Multfrc(tune(c)),
            ConnectionCountConfig::EMultfrc(c) => ConnectionCountConfig::EMultfrc(tune(c)),
            ConnectionCountConfig::Aggregate(c) => ConnectionCountConfig::Aggregate(tune(c)),
            other @ (ConnectionCountConfig::Fixed(_) | ConnectionCountConfig::Adaptive(_)) => other,
        };
        let config = SessionConfig {
            connection,
            count,
            policy: multi.policy,
            start_offset: multi.start_offset,
            local_port: CLIENT_PORT_BASE + ((flow_index * 64) % 20_000) as u16,
            remote_port: SERVER_PORT,
            iss_seed: rng.next_u64(),
            // Retransmission is a media flow's (`arq`); other flows' data
            // has no deadline and is never asked for.
            arq: ArqConfig {
                enabled: media.is_some_and(|m| m.arq),
                ..ArqConfig::default()
            },
            paths,
            // Declared shared: all paths are one group.
            shared: if shared_bottleneck {
                vec![Some(0); paths]
            } else {
                Vec::new()
            },
            ..SessionConfig::default()
        };
        let interleaved = config.policy == SplitPolicy::GopInterleave;
        let per_connection_depth = config.per_connection_depth.max(1);
        let sender = SenderSession::new(config, start).map_err(|e| e.to_string())?;
        let mut receiver = ReceiverSession::new(receiver_connection, 64, ReorderConfig::default());
        if let Some(media) = media {
            // Retransmission is the media flow's (`arq`); the reorder wait
            // follows its playout deadline when the start-up delay is fixed.
            receiver = receiver.with_arq(media.arq);
            // A rebuffering player waits for what is missing, moving its
            // deadlines: the session has none to follow and holds a gap up
            // to its bound for a retransmission.
            if let (StartupDelaySetting::Fixed(delay), PlayerSetting::Drop) =
                (media.startup_delay, media.player)
            {
                receiver = receiver.with_playout_delay(delay);
            }
        }
        Ok(SessionEnds {
            sender,
            receiver,
            source,
            media: None,
            relay_out: None,
            relay_in: None,
            payload: vec![0; packet_size],
            rng,
            bodies: BufferPool::default(),
            closing: false,
            fed: 0,
            interleaved,
            per_connection_depth,
            open_intervals: std::collections::BTreeMap::new(),
            reply_paths: std::collections::BTreeMap::new(),
            sender_timeout: std::cell::Cell::new(None),
            receiver_timeout: std::cell::Cell::new(None),
            sender_idle: false,
            sends: 0,
            receiver_idle: false,
            stats: SessionStats::default(),
        })
    }

    /// The sender session.
    pub(super) fn sender(&self) -> &SenderSession {
        &self.sender
    }

    /// The receiver session.
    pub(super) fn receiver(&self) -> &ReceiverSession {
        &self.receiver
    }

    /// Timers, the application's data, and what both sessions send.
    pub(super) fn service(&mut self, now: Instant, active: bool, out: &mut Vec<(bool, Body)>) {
        let sender_timeout = self.sender_timeout();
        let receiver_timeout = self.receiver_timeout();
        // Whether this call may change a session (and so its deadline).
        let mut sender_touched = false;
        let mut receiver_touched = false;
        if sender_timeout.is_some_and(|t| t <= now) {
            self.sender.handle_timeout(now);
            self.sender_idle = false;
            sender_touched = true;
        }
        if receiver_timeout.is_some_and(|t| t <= now) {
            self.receiver.handle_timeout(now);
            self.receiver_idle = false;
            receiver_touched = true;
        }
        if !active && !self.closing {
            self.sender.close(now);
            self.closing = true;
            self.sender_idle = false;
            sender_touched = true;
        }
        loop {
            if active && self.feed(now) {
                self.sender_idle = false;
                sender_touched = true;
            }
            if self.sender_idle {
                break;
            }
            sender_touched = true;
            let Some((buf, transmit)) = self.bodies.fill(|buf| self.sender.poll_transmit(now, buf))
            else {
                self.sender_idle = true;
                break;
            };
            out.push((true, body(buf, transmit.ecn)));
        }
        if !self.receiver_idle {
            receiver_touched = true;
            while let Some((buf, transmit)) = self
                .bodies
                .fill(|buf| self.receiver.poll_transmit(now, buf))
            {
                out.push((false, body(buf, transmit.ecn)));
            }
            self.receiver_idle = true;
        }
        if sender_touched {
            self.sender_timeout.set(None);
        }
        if receiver_touched {
            self.receiver_timeout.set(None);
        }
        while let Some(event) = self.sender.poll_event() {
            match event {
                SessionEvent::PathDown { path } => self.path_changes(path).0.push(now),
                SessionEvent::PathUp { path } => self.path_changes(path).1.push(now),
                _ => {}
            }
        }
        self.read(now);
    }

    /// The sender's next deadline, asked once after each change.
    fn sender_timeout(&self) -> Option<Instant> {
        self.sender_timeout.get().unwrap_or_else(|| {
            let timeout = self.sender.poll_timeout();
            self.sender_timeout.set(Some(timeout));
            timeout
        })
    }

    /// The receiver's next deadline, asked once after each change.
    fn receiver_timeout(&self) -> Option<Instant> {
        self.receiver_timeout.get().unwrap_or_else(|| {
            let timeout = self.receiver.poll_timeout();
            self.receiver_timeout.set(Some(timeout));
            timeout
        })
    }

    /// Gives the sender what the application has; whether it gave any.
    fn feed(&mut self, now: Instant) -> bool {
        let sends = self.sends;
        self.feed_queue(now);
        self.sends != sends
    }

    fn feed_queue(&mut self, now: Instant) {
        if let (Some(relay), Some(media)) = (&self.relay_in, &self.media) {
            // The proxy sends what it holds as fast as the session allows,
            // each packet with its frame's GOP, key and playout time.
            while self.sender.queued() < FEED_DEPTH {
                let Some(packet) = relay.pop() else {
                    return;
                };
                let meta = media.meta_of_packet(&packet.bytes);
                self.sends += 1;
                if self.sender.send_with(now, &packet.bytes, meta).is_err() {
                    self.stats.app_drops += 1;
                }
            }
            return;
        }
        if let Some(media) = &mut self.media {
            let rtt = self
                .sender
                .endpoint()
                .connection_ids()
                .filter_map(|id| self.sender.endpoint().connection(id))
                .filter_map(|c| c.rtt())
                .min()
                .unwrap_or(Duration::ZERO);
            // Live frames wait in the application, which drops the late
            // ones, not in the session queue: a few datagrams a
            // connection, as the real sender does.
            let depth = if media.is_live() {
                (self.sender.open_connections() * 4).max(8)
            } else {
                FEED_DEPTH
            };
            while self.sender.queued() < depth {
                let Some(packet) = media.next_packet(now, rtt / 2) else {
                    return;
                };
                let packet = packet.to_vec();
                self.sends += 1;
                if self
                    .sender
                    .send_with(now, &packet, media.last_meta())
                    .is_err()
                {
                    self.stats.app_drops += 1;
                }
            }
            return;
        }
        let depth = self.source_depth();
        while self.sender.queued() < depth {
            let Some(size) = self.source.poll(now) else {
                return;
            };
            let size = (size as usize).min(self.payload.len());
            let gop = self.fed / PSEUDO_GOP_DATAGRAMS;
            self.fed += 1;
            self.sends += 1;
            if self.sender.send(now, &self.payload[..size], gop).is_err() {
                self.stats.app_drops += 1;
                return;
            }
        }
        if !self.source.is_saturating() {
            while self.source.poll(now).is_some() {
                self.stats.app_drops += 1;
            }
        }
    }

    /// How many datagrams of a plain (non-media) source the session queue
    /// holds. A saturating source always has its next datagram, so the
    /// queue need only keep the connections supplied when datagrams are
    /// split by earliest connection: twice what the open connections and
    /// one more could take at once. Feeding runs before every datagram the
    /// sender sends, and only sending makes room in a connection, so the
    /// session never finds the queue shorter than the room and splits the
    /// same datagrams the same way as with [`FEED_DEPTH`], without holding
    /// 512 datagrams (half a megabyte) a flow. Other sources keep
    /// [`FEED_DEPTH`]: their queue is the application's buffer, and what it
    /// holds decides what is dropped; GOP interleaving needs several GOPs
    /// per connection queued.
    fn source_depth(&self) -> usize {
        if self.source.is_saturating() && !self.interleaved {
            (2 * (self.sender.open_connections() + 1) * self.per_connection_depth).min(FEED_DEPTH)
        } else {
            FEED_DEPTH
        }
    }

    fn read(&mut self, now: Instant) {
        while let Some(data) = self.receiver.recv() {
            self.stats.app_bytes_delivered += data.len() as u64;
            if let Some(media) = &mut self.media {
                media.on_received(now, &data);
                if let Some(relay) = &self.relay_out {
                    relay.forward(media, data);
                    continue;
                }
            }
            self.receiver.recycle(data);
        }
    }

    /// When path `path` went down and when it came back, so far.
    fn path_changes(&mut self, path: usize) -> &mut (Vec<Instant>, Vec<Instant>) {
        if self.stats.path_changes.len() <= path {
            self.stats.path_changes.resize(path + 1, Default::default());
        }
        &mut self.stats.path_changes[path]
    }

    /// The path a datagram takes: the sender's connection's, or for the
    /// receiver's answer the path its connection's packets arrive on.
    pub(super) fn path_of(&self, toward_receiver: bool, bytes: &[u8]) -> u8 {
        let Some((src, dst)) = fairstream_proto::wire::dccp::peek_ports(bytes) else {
            return 0;
        };
        if toward_receiver {
            let id = ConnectionId {
                local_port: src,
                remote_port: dst,
            };
            self.sender
                .path_of(id)
                .and_then(|path| u8::try_from(path).ok())
                .unwrap_or(0)
        } else {
            self.reply_paths.get(&dst).copied().unwrap_or(0)
        }
    }

    /// A packet from the sender reached the receiver's host on path `path`
    /// with the ECN codepoint `ecn`.
    pub(super) fn on_data_side(&mut self, now: Instant, bytes: &[u8], ecn: Ecn, path: u8) {
        if self.sender.paths() > 1 {
            if let Some((src, _)) = fairstream_proto::wire::dccp::peek_ports(bytes) {
                self.reply_paths.insert(src, path);
            }
        }
        let iss = self.rng.next_u64();
        self.receiver_timeout.set(None);
        self.receiver_idle = false;
        self.receiver.handle_datagram_ecn(now, bytes, ecn, iss);
        let endpoint = self.receiver.endpoint();
        let mut received = 0;
        for id in endpoint.connection_ids() {
            let Some(conn) = endpoint.connection(id) else {
                continue;
            };
            received += conn.data_packets_received();
            if let Some(open) = conn
                .tfrc_receiver()
                .and_then(|r| r.loss_history().open().map(|i| i.start_seq()))
            {
                if self.open_intervals.insert(id.remote_port, open) != Some(open) {
                    self.stats.loss_events += 1;
                }
            }
        }
        self.stats.data_packets_received = self.stats.data_packets_received.max(received);
    }

    /// A packet from the receiver reached the sender's host on path `path`.
    pub(super) fn on_feedback_side(
        &mut self,
        now: Instant,
        bytes: &[u8],
        ecn: Ecn,
        path: u8,
        sample: bool,
    ) {
        self.sender_timeout.set(None);
        self.sender_idle = false;
        self.sender
            .handle_datagram_on(now, usize::from(path), bytes, ecn);
        if sample {
            let endpoint = self.sender.endpoint();
            let mut count = 0usize;
            let sum: f64 = endpoint
                .connection_ids()
                .filter_map(|id| endpoint.connection(id))
                .filter_map(|c| c.rtt())
                .inspect(|_| count += 1)
                .map(|r| r.as_secs_f64())
                .sum();
            if count > 0 {
                self.stats.rtt_sum_s += sum / count as f64;
                self.stats.rtt_samples += 1;
            }
        }
    }

    /// When the sessions or the application next need the driver.
    pub(super) fn next_wake(&self, active: bool, now: Instant) -> Option<Instant> {
        let app = if !active {
            None
        } else if let Some(relay) = &self.relay_in {
            // Held packets and room for them: at once (feeding fills the
            // queue or empties the buffer, so this does not repeat).
            (self.sender.queued() < FEED_DEPTH && !relay.is_empty()).then_some(now)
        } else if let Some(media) = &self.media {
            media.next_release(now)
        } else {
            self.source.next_ready()
        };
        [self.sender_timeout(), self.receiver_timeout(), app]
            .into_iter()
            .flatten()
            .min()
    }

    /// The rate the open connections together allow, bits/s.
    pub(super) fn allowed_rate_bps(&self) -> Option<f64> {
        let endpoint = self.sender.endpoint();
        let rates: Vec<f64> = endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .filter_map(|c| c.allowed_rate())
            .map(|r| r.bits_per_sec())
            .collect();
        (!rates.is_empty()).then(|| rates.iter().sum())
    }

    /// The mean smoothed RTT of the connections.
    /// The largest loss event rate of the open connections (TFRC; `None`
    /// for CCID 2 or before any connection).
    pub(super) fn current_loss_event_rate(&self) -> Option<f64> {
        let endpoint = self.sender.endpoint();
        endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .filter(|c| c.tfrc_sender().is_some())
            .map(|c| c.stats().loss_event_rate)
            .reduce(f64::max)
    }

    pub(super) fn rtt(&self) -> Option<Duration> {
        let endpoint = self.sender.endpoint();
        let rtts: Vec<Duration> = endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .filter_map(|c| c.rtt())
            .collect();
        (!rtts.is_empty()).then(|| rtts.iter().sum::<Duration>() / rtts.len() as u32)
    }

    /// The number of connections the controller wants now (fractional n
    /// for the aggregate).
    pub(super) fn connection_count(&self) -> f64 {
        if self.sender.counter().is_fractional() {
            // A bonded flow's paths each have their own count.
            (0..self.sender.paths())
                .filter_map(|path| self.sender.path_counter(path))
                .map(|counter| counter.n())
                .sum()
        } else {
            self.sender.open_connections() as f64
        }
    }

    /// A packet's buffer, back from the network.
    pub(super) fn recycle(&mut self, bytes: Vec<u8>) {
        self.bodies.give_within(bytes, MAX_SPARE_BODIES);
    }
}

fn body(buf: Vec<u8>, ecn: Ecn) -> Body {
    let header = buf.get(4).map_or(0, |w| usize::from(*w) * 4);
    // The session header's top bit says whether a playout time follows.
    let session_header = buf.get(header).map_or(SESSION_HEADER_BYTES, |first| {
        SESSION_HEADER_BYTES
            + if first & 0x80 != 0 { 4 } else { 0 }
            + if first & 0x40 != 0 {
                SESSION_FEC_TAG_BYTES
            } else {
                0
            }
    });
    let payload_len = u32::try_from(buf.len().saturating_sub(header + session_header)).unwrap_or(0);
    Body::dccp(buf, payload_len, ecn)
}
