//! A DCCP flow: two real `fairstream-proto` [`Endpoint`]s, the client at the
//! flow's `from` host sending application data, the server at its `to` host
//! receiving it, joined by the simulated network. Every packet is the bytes
//! the endpoints wrote; nothing of the protocol is modelled here.
//!
//! The driver follows the endpoints' contract ([`Connection`]'s documentation):
//! after every input (a datagram or a due timeout) it feeds the application's
//! data, drains `poll_transmit`, then `poll_event`, and asks `poll_timeout`
//! when to wake next.
//!
//! [`Connection`]: fairstream_proto::conn::Connection

use std::net::Ipv4Addr;
use std::time::Duration;

use fairstream_proto::conn::{
    Ccid, ChecksumMode, ConnectionConfig, ConnectionId, Endpoint, EndpointConfig, Event,
    DATA_PACKET_OVERHEAD,
};
use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;

use super::layered::LayeredApp;
use super::media::MediaApp;
use super::relay::SharedRelay;
use super::store::MAX_SPARE_BODIES;
use super::voice::VoiceApp;
use crate::network::Body;
use crate::rng::SimRng;
use crate::source::Source;
use fairstream_proto::buffers::BufferPool;

/// The DCCP port of every flow's server endpoint (each flow has its own
/// endpoints, so ports only make captures readable).
pub(super) const SERVER_PORT: u16 = 5004;
/// The client's port is this plus the flow's index (modulo 20 000).
pub(super) const CLIENT_PORT_BASE: u16 = 40_000;
/// How many datagrams the driver keeps in the client's send queue when the
/// application has data: enough that the connection is never data-limited
/// between two wake-ups, few enough that nothing waits long in the queue.
const FEED_DEPTH: usize = 16;

/// What the DCCP flow measured.
#[derive(Clone, Debug, Default)]
pub(super) struct DccpStats {
    /// Application bytes the server's application read.
    pub(super) app_bytes_delivered: u64,
    /// Application datagrams refused because the send queue was full (CBR
    /// faster than the connection allows).
    pub(super) app_drops: u64,
    /// Loss events the server's TFRC receiver started (RFC 5348 §5.2), or
    /// CCID 2 congestion events at the sender.
    pub(super) loss_events: u64,
    /// Data packets the server's connection received.
    pub(super) data_packets_received: u64,
    /// Sum and count of the sender's smoothed RTT, sampled at every packet
    /// the client took from the server.
    pub(super) rtt_sum_s: f64,
    pub(super) rtt_samples: u64,
    /// The handshake completed.
    pub(super) connected: bool,
    /// The handshake failed or the connection was reset: what happened.
    pub(super) failure: Option<String>,
}

/// Both endpoints of a DCCP flow and its application source.
#[derive(Debug)]
pub(super) struct DccpEnds {
    ccid: Ccid,
    /// CCID 249's rate.
    fixed_rate: Rate,
    client: Endpoint,
    server: Endpoint,
    client_port: u16,
    client_id: Option<ConnectionId>,
    closing: bool,
    source: Source,
    /// The video, when the flow carries one instead of `source`.
    pub(super) media: Option<MediaApp>,
    /// An upstream leg of a proxy: what the receiver takes goes here.
    pub(super) relay_out: Option<SharedRelay>,
    /// A downstream leg of a proxy: what the sender sends comes from here.
    pub(super) relay_in: Option<SharedRelay>,
    /// The layered video of a `cc = "buffer"` flow, instead of `source`.
    pub(super) layered: Option<LayeredApp>,
    /// The voice call of a voice flow, instead of `source`.
    pub(super) voice: Option<VoiceApp>,
    payload: Vec<u8>,
    /// Initial sequence numbers (RFC 4340 §7.2 asks for random ones).
    rng: SimRng,
    /// The buffers the endpoints write their packets into.
    bodies: BufferPool,
    /// The start sequence number of the TFRC receiver's open loss interval,
    /// to count new loss events.
    open_interval_start: Option<u64>,
    pub(super) stats: DccpStats,
}

/// The IPv4 address of node `index` in captures and DCCP checksums:
/// 10.0.0.1 for the first node, counting up.
pub(super) fn node_address(index: usize) -> Ipv4Addr {
    let offset = u32::try_from(index)
        .unwrap_or(u32::MAX - 1)
        .min(0x00FF_FFFD);
    Ipv4Addr::from(0x0A00_0001 + offset)
}

/// How long a simulated client keeps retransmitting its Request before it
/// gives up: RFC 4340 §8.1.1's example, "3 minutes" (a TCP's SYN retries
/// last about as long: Linux's six take 127 s). `fairstream-proto`'s default,
/// 10 s, suits an interactive tool; in a simulated crowd it made flows
/// whose four Requests all met a full queue in slow-start overload give up
/// for good (41 of 100 TFRC flows starting together on a 5 Mbit/s link with
/// a 50-packet queue never sent data).
pub(super) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(180);

impl DccpEnds {
    /// The endpoints of a flow with `ccid`, `packet_size` bytes of
    /// application data per packet; under CCID 249 paced at `fixed_rate`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        ccid: Ccid,
        fixed_rate: Rate,
        packet_size: usize,
        flow_index: usize,
        source: Source,
        rng: SimRng,
    ) -> DccpEnds {
        let mut config = ConnectionConfig {
            ccid,
            accepted_ccids: vec![ccid],
            max_packet_size: packet_size + DATA_PACKET_OVERHEAD,
            // A simulated host has no other use for its time: TIMEWAIT need
            // not hold the connection for the RFC's 4 minutes.
            msl: Duration::from_secs(1),
            handshake_timeout: HANDSHAKE_TIMEOUT,
            // DCCP-UDP (RFC 6773), as `fairstream send` and `recv` run it:
            // the DCCP Checksum field is zero and the UDP checksum, which
            // the link's overhead stands for, protects the datagram (a
            // simulated link corrupts no bits). Captures fill in the
            // native checksum for Wireshark.
            checksum: ChecksumMode::UdpEncapsulated,
            ..ConnectionConfig::default()
        };
        // RFC 5348 §4.1: s is the packet size the sender uses; the
        // application's datagram size here.
        config.tfrc.segment_size = packet_size.max(1);
        // CCID 249 carries a `cc = "fixed"` flow at its rate, and a `cc =
        // "buffer"` flow in `paper` mode (whose application paces every
        // packet itself) unpaced, at an infinite rate.
        config.fixed_rate.rate = fixed_rate;
        let mut server_config = config.clone();
        server_config.checksum = config.checksum.reversed();
        let client_port = CLIENT_PORT_BASE + (flow_index % 20_000) as u16;
        DccpEnds {
            ccid,
            fixed_rate,
            client: Endpoint::new(EndpointConfig {
                connection: config,
                listen: false,
                max_connections: 1,
                cookies: None,
            }),
            server: Endpoint::new(EndpointConfig {
                connection: server_config,
                listen: true,
                max_connections: 1,
                cookies: None,
            }),
            client_port,
            client_id: None,
            closing: false,
            source,
            media: None,
            relay_out: None,
            relay_in: None,
            layered: None,
            voice: None,
            payload: vec![0; packet_size],
            rng,
            bodies: BufferPool::default(),
            open_interval_start: None,
            stats: DccpStats::default(),
        }
    }

    /// The CCID the flow asked for.
    pub(super) fn ccid(&self) -> Ccid {
        self.ccid
    }

    /// The rate CCID 249 paces at (infinite for a `cc = "buffer"` flow).
    pub(super) fn fixed_rate(&self) -> Rate {
        self.fixed_rate
    }

    /// Runs due timers, feeds the application's data while `active`, closes
    /// the connection once the flow stops, and collects what both endpoints
    /// send: (toward the receiver?, body) pairs.
    pub(super) fn service(&mut self, now: Instant, active: bool, out: &mut Vec<(bool, Body)>) {
        if self.client.poll_timeout().is_some_and(|t| t <= now) {
            self.client.handle_timeout(now);
        }
        if self.server.poll_timeout().is_some_and(|t| t <= now) {
            self.server.handle_timeout(now);
        }
        if active && self.client_id.is_none() && self.stats.failure.is_none() {
            let iss = self.rng.next_u64();
            match self.client.connect(now, self.client_port, SERVER_PORT, iss) {
                Ok(id) => self.client_id = Some(id),
                Err(error) => self.stats.failure = Some(error.to_string()),
            }
        }
        if !active && !self.closing {
            if let Some(conn) = self.client_id.and_then(|id| self.client.connection_mut(id)) {
                conn.close(now);
                self.closing = true;
            }
        }
        self.read_reports(now);
        loop {
            if active {
                self.feed(now);
            }
            if !self.transmit_one(now, out) {
                break;
            }
        }
        self.read_application_data(now);
        while let Some((buf, (_, transmit))) =
            self.bodies.fill(|buf| self.server.poll_transmit(now, buf))
        {
            out.push((false, body(buf, transmit.ecn)));
        }
        self.drain_events();
    }

    /// A layered flow: the receiver's reports that reached the sender's
    /// application.
    fn read_reports(&mut self, now: Instant) {
        let Some(layered) = &mut self.layered else {
            return;
        };
        let Some(conn) = self.client_id.and_then(|id| self.client.connection_mut(id)) else {
            return;
        };
        while let Some(data) = conn.recv() {
            layered.on_sender_data(now, &data);
            conn.recycle(data);
        }
    }

    /// Offers the application's messages to the client's send queue, up to
    /// [`FEED_DEPTH`] queued datagrams.
    fn feed(&mut self, now: Instant) {
        let Some(conn) = self.client_id.and_then(|id| self.client.connection_mut(id)) else {
            return;
        };
        if let Some(layered) = &mut self.layered {
            layered.feed(now, conn, FEED_DEPTH);
            return;
        }
        if let Some(voice) = &mut self.voice {
            voice.feed(now, conn);
            return;
        }
        if let Some(relay) = &self.relay_in {
            // The proxy sends what it holds as fast as the CCID allows.
            while conn.send_queue_len() < FEED_DEPTH {
                let Some(packet) = relay.pop() else {
                    return;
                };
                if conn.send(now, &packet.bytes).is_err() {
                    self.stats.app_drops += 1;
                }
            }
            return;
        }
        if let Some(media) = &mut self.media {
            // The sender's estimate of the one-way delay, for live deadlines.
            let one_way = conn.rtt().map_or(Duration::ZERO, |rtt| rtt / 2);
            while conn.send_queue_len() < FEED_DEPTH {
                let Some(packet) = media.next_packet(now, one_way) else {
                    return;
                };
                if conn.send(now, packet).is_err() {
                    self.stats.app_drops += 1;
                }
            }
            return;
        }
        while conn.send_queue_len() < FEED_DEPTH {
            let Some(size) = self.source.poll(now) else {
                return;
            };
            let size = (size as usize).min(self.payload.len());
            if conn.send(now, &self.payload[..size]).is_err() {
                self.stats.app_drops += 1;
                return;
            }
        }
        // A CBR source whose messages are due while the queue is full loses
        // them, as a live application would.
        if !self.source.is_saturating() {
            while self.source.poll(now).is_some() {
                self.stats.app_drops += 1;
            }
        }
    }

    /// Takes one packet from the client; whether there was one.
    fn transmit_one(&mut self, now: Instant, out: &mut Vec<(bool, Body)>) -> bool {
        let Some((buf, (_, transmit))) =
            self.bodies.fill(|buf| self.client.poll_transmit(now, buf))
        else {
            return false;
        };
        out.push((true, body(buf, transmit.ecn)));
        true
    }

    /// A packet's buffer, back from the network.
    pub(super) fn recycle(&mut self, bytes: Vec<u8>) {
        self.bodies.give_within(bytes, MAX_SPARE_BODIES);
    }

    /// A packet from the client reached the server's host with the ECN
    /// codepoint `ecn` (a queue may have marked it).
    pub(super) fn on_data_side(&mut self, now: Instant, bytes: &[u8], ecn: Ecn) {
        let iss = self.rng.next_u64();
        let Some(id) = self.server.handle_datagram_ecn(now, bytes, ecn, iss) else {
            return;
        };
        let Some(conn) = self.server.connection(id) else {
            return;
        };
        self.stats.data_packets_received = conn.data_packets_received();
        if let Some(receiver) = conn.tfrc_receiver() {
            let open = receiver.loss_history().open().map(|i| i.start_seq());
            if open.is_some() && open != self.open_interval_start {
                self.stats.loss_events += 1;
                self.open_interval_start = open;
            }
        }
    }

    /// A packet from the server reached the client's host.
    pub(super) fn on_feedback_side(&mut self, now: Instant, bytes: &[u8], ecn: Ecn, sample: bool) {
        let iss = self.rng.next_u64();
        let Some(id) = self.client.handle_datagram_ecn(now, bytes, ecn, iss) else {
            return;
        };
        let Some(conn) = self.client.connection(id) else {
            return;
        };
        if sample {
            if let Some(rtt) = conn.rtt() {
                self.stats.rtt_sum_s += rtt.as_secs_f64();
                self.stats.rtt_samples += 1;
            }
        }
        if let Some(sender) = conn.ccid2_sender() {
            self.stats.loss_events = sender.stats().congestion_events;
        }
    }

    fn drain_events(&mut self) {
        while let Some((_, event)) = self.client.poll_event() {
            match event {
                Event::Connected { .. } => self.stats.connected = true,
                Event::HandshakeTimeout => {
                    self.stats.failure = Some("the DCCP handshake timed out".to_owned());
                }
                Event::Reset { code, by_peer, .. } if !self.closing => {
                    let who = if by_peer { "the server" } else { "the client" };
                    self.stats.failure = Some(format!("{who} reset the connection ({code:?})"));
                }
                _ => {}
            }
        }
        while self.server.poll_event().is_some() {}
    }

    fn read_application_data(&mut self, now: Instant) {
        let ids: Vec<ConnectionId> = self.server.connection_ids().collect();
        for id in ids {
            if let Some(conn) = self.server.connection_mut(id) {
                while let Some(data) = conn.recv() {
                    self.stats.app_bytes_delivered += data.len() as u64;
                    if let Some(media) = &mut self.media {
                        media.on_received(now, &data);
                        if let Some(relay) = &self.relay_out {
                            relay.forward(media, data.clone());
                        }
                    }
                    if let Some(voice) = &mut self.voice {
                        voice.on_received(now, &data);
                    }
                    if let Some(layered) = &mut self.layered {
                        layered.on_receiver_data(now, &data);
                    }
                    conn.recycle(data);
                }
                // The receiver's reports go back on the same connection.
                if let Some(layered) = &mut self.layered {
                    if let Some(report) = layered.poll_feedback(now) {
                        if conn.send(now, &report).is_err() {
                            layered.stats.app_drops += 1;
                        }
                    }
                }
            }
        }
    }

    /// When the endpoints or the application next need the driver.
    pub(super) fn next_wake(&self, active: bool, now: Instant) -> Option<Instant> {
        let source = if let Some(layered) = &self.layered {
            layered.next_wake(active && self.client_id.is_some(), now)
        } else if !active || !self.has_connection() {
            // No connection to feed (not yet opened, or failed and gone):
            // the application's due data would wake the flow for nothing.
            None
        } else if let Some(relay) = &self.relay_in {
            // Held packets and room for them: at once (feeding fills the
            // queue or empties the buffer, so this does not repeat).
            let room = self
                .client_id
                .and_then(|id| self.client.connection(id))
                .is_some_and(|conn| conn.send_queue_len() < FEED_DEPTH);
            (room && !relay.is_empty()).then_some(now)
        } else if let Some(media) = &self.media {
            media.next_release(now)
        } else if let Some(voice) = &self.voice {
            voice.next_frame()
        } else {
            self.source.next_ready()
        };
        [
            self.client.poll_timeout(),
            self.server.poll_timeout(),
            source,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether the client's connection exists (opened and not removed).
    fn has_connection(&self) -> bool {
        self.client_id
            .and_then(|id| self.client.connection(id))
            .is_some()
    }

    /// The rate the sender's CCID allows now, bits/s.
    pub(super) fn allowed_rate_bps(&self) -> Option<f64> {
        let conn = self.client_id.and_then(|id| self.client.connection(id))?;
        conn.allowed_rate().map(|r| r.bits_per_sec())
    }

    /// The sender's current smoothed RTT.
    pub(super) fn rtt(&self) -> Option<Duration> {
        let conn = self.client_id.and_then(|id| self.client.connection(id))?;
        conn.rtt()
    }

    /// The loss event rate the sender uses now (TFRC: as the receiver
    /// reported it).
    pub(super) fn current_loss_event_rate(&self) -> Option<f64> {
        let conn = self.client_id.and_then(|id| self.client.connection(id))?;
        Some(conn.stats().loss_event_rate)
    }
}

/// The packet in `buf` as a network body, sent with the ECN codepoint the
/// endpoint chose for it (RFC 4340 §12.1).
fn body(buf: Vec<u8>, ecn: Ecn) -> Body {
    // DCCP header length is in 32-bit words at byte 4 (RFC 4340 §5.1).
    let header = buf.get(4).map_or(0, |w| usize::from(*w) * 4);
    let payload_len = u32::try_from(buf.len().saturating_sub(header)).unwrap_or(0);
    Body::dccp(buf, payload_len, ecn)
}
