//! Several DCCP connections sharing one UDP port pair (RFC 6773), told apart
//! by their DCCP ports, and the LISTEN state (RFC 4340 §8.5 steps 2 and 3).

use std::collections::{BTreeMap, VecDeque};

use super::config::ConnectionConfig;
use super::connection::Connection;
use super::cookie::{Cookie, CookieConfig};
use super::event::{Event, Transmit};
use super::input::no_connection_numbers;
use crate::ecn::Ecn;
use crate::time::Instant;
use crate::wire::dccp::{peek_ports, DccpRepr, PacketKind, PacketType, ResetCode, SeqNum};
use crate::wire::options::{DccpOption, Options};

/// The most Resets an endpoint queues for packets without a connection;
/// more are dropped (and counted), so a flood cannot grow memory.
const MAX_PENDING_RESETS: usize = 64;

/// A connection of an [`Endpoint`]: its DCCP port pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId {
    /// This endpoint's DCCP port.
    pub local_port: u16,
    /// The peer's DCCP port.
    pub remote_port: u16,
}

/// The configuration of an [`Endpoint`].
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointConfig {
    /// The configuration of every connection.
    pub connection: ConnectionConfig,
    /// Whether Requests for unknown port pairs open server connections
    /// (LISTEN); otherwise they get Reset(Connection Refused).
    pub listen: bool,
    /// The most connections held (TIMEWAIT included); a Request beyond it
    /// gets Reset(Too Busy). Default 64.
    pub max_connections: usize,
    /// Stateless handshakes (RFC 4340 §8.1.4 Init Cookies): a listening
    /// endpoint answers a Request with a Response carrying a cookie and
    /// keeps nothing; the connection is made when the client's Ack echoes
    /// a cookie that is good for its address. A Response is sent only if
    /// it is no larger than the Request (no amplification), so clients
    /// pad their Requests ([`ConnectionConfig::request_min_len`]).
    /// `None` (the default): a Request opens a connection at once.
    pub cookies: Option<CookieConfig>,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            connection: ConnectionConfig::default(),
            listen: false,
            max_connections: 64,
            cookies: None,
        }
    }
}

/// Why an endpoint refused to open a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// A connection with these ports exists.
    #[error("a connection with local port {} and remote port {} exists", .0.local_port, .0.remote_port)]
    PortsInUse(ConnectionId),
    /// The endpoint holds its maximum number of connections.
    #[error("the endpoint holds its maximum of {max} connections")]
    TooManyConnections {
        /// The maximum.
        max: usize,
    },
}

/// What an endpoint did with packets no connection took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Datagrams too short to name DCCP ports, or that failed to parse.
    pub malformed_dropped: u64,
    /// Server connections created.
    pub accepted: u64,
    /// Requests refused (Service Code, options, negotiation, capacity, not
    /// listening).
    pub refused: u64,
    /// Resets sent for packets without a connection.
    pub resets_sent: u64,
    /// Resets not sent because the queue was full.
    pub resets_dropped: u64,
    /// Responses with an Init Cookie sent, keeping no state.
    pub cookies_sent: u64,
    /// Connections made from an echoed cookie (also in `accepted`).
    pub cookies_accepted: u64,
    /// Echoed cookies refused: forged, altered, expired, or from another
    /// address.
    pub bad_cookies: u64,
    /// Packets left unanswered because the answer would have been larger
    /// than the packet, to an address not known to receive (RFC 4340
    /// §8.1.4's reason for cookies: no amplification).
    pub unanswered_small: u64,
}

/// Connections demultiplexed by DCCP ports ([`peek_ports`]), as several DCCP
/// connections share one UDP port pair in DCCP-UDP (RFC 6773).
///
/// The driver contract is a [`Connection`]'s: `handle_datagram` and
/// `handle_timeout` in, then `poll_transmit`, `poll_event` and
/// `poll_timeout` out. CLOSED connections whose events were read are
/// removed.
#[derive(Debug)]
pub struct Endpoint {
    config: EndpointConfig,
    connections: BTreeMap<ConnectionId, Connection>,
    resets: VecDeque<(Vec<u8>, Transmit)>,
    /// The connection served last by `poll_transmit` (round robin).
    last_served: Option<ConnectionId>,
    stats: EndpointStats,
}

impl Endpoint {
    /// An endpoint without connections.
    pub fn new(config: EndpointConfig) -> Endpoint {
        Endpoint {
            config,
            connections: BTreeMap::new(),
            resets: VecDeque::new(),
            last_served: None,
            stats: EndpointStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// Counters.
    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    /// The connection `id`.
    pub fn connection(&self, id: ConnectionId) -> Option<&Connection> {
        self.connections.get(&id)
    }

    /// The connection `id`, for application commands.
    pub fn connection_mut(&mut self, id: ConnectionId) -> Option<&mut Connection> {
        self.connections.get_mut(&id)
    }

    /// The connections' identifiers.
    pub fn connection_ids(&self) -> impl Iterator<Item = ConnectionId> + '_ {
        self.connections.keys().copied()
    }

    /// The number of connections held.
    pub fn len(&self) -> usize {
        self.connections.len()
    }

    /// Whether the endpoint holds no connection.
    pub fn is_empty(&self) -> bool {
        self.connections.is_empty()
    }

    /// Opens a client connection (see [`Connection::connect`]).
    pub fn connect(
        &mut self,
        now: Instant,
        local_port: u16,
        remote_port: u16,
        iss: u64,
    ) -> Result<ConnectionId, EndpointError> {
        self.remove_drained();
        let id = ConnectionId {
            local_port,
            remote_port,
        };
        if self.connections.contains_key(&id) {
            return Err(EndpointError::PortsInUse(id));
        }
        if self.connections.len() >= self.config.max_connections {
            return Err(EndpointError::TooManyConnections {
                max: self.config.max_connections,
            });
        }
        let conn = Connection::connect(
            self.config.connection.clone(),
            now,
            local_port,
            remote_port,
            iss,
        );
        self.connections.insert(id, conn);
        Ok(id)
    }

    /// Processes one datagram: hands it to its connection, or applies RFC
    /// 4340 §8.5 steps 2 and 3 when there is none. `iss` is used if the
    /// datagram opens a server connection (the driver draws it from its
    /// seeded generator, RFC 4340 §7.2). Returns the connection that took
    /// the datagram. The same as
    /// [`handle_datagram_ecn`](Self::handle_datagram_ecn) with Not-ECT, for
    /// drivers that cannot read the ECN field.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        bytes: &[u8],
        iss: u64,
    ) -> Option<ConnectionId> {
        self.handle_datagram_ecn(now, bytes, Ecn::NotEct, iss)
    }

    /// [`handle_datagram`](Self::handle_datagram) for a datagram that
    /// arrived with the ECN codepoint `ecn` in its IP header (RFC 3168 §5),
    /// which the connection takes as
    /// [`Connection::handle_datagram_ecn`] does.
    pub fn handle_datagram_ecn(
        &mut self,
        now: Instant,
        bytes: &[u8],
        ecn: Ecn,
        iss: u64,
    ) -> Option<ConnectionId> {
        self.handle_datagram_from(now, bytes, ecn, iss, &[])
    }

    /// [`handle_datagram_ecn`](Self::handle_datagram_ecn) for a datagram
    /// from the network address `source` (its bytes, in any encoding the
    /// driver keeps to): with [`EndpointConfig::cookies`], a cookie is good
    /// only when echoed from the address it was sent to.
    pub fn handle_datagram_from(
        &mut self,
        now: Instant,
        bytes: &[u8],
        ecn: Ecn,
        iss: u64,
        source: &[u8],
    ) -> Option<ConnectionId> {
        self.remove_drained();
        let Some((src, dst)) = peek_ports(bytes) else {
            self.stats.malformed_dropped += 1;
            return None;
        };
        let id = ConnectionId {
            local_port: dst,
            remote_port: src,
        };
        if let Some(conn) = self.connections.get_mut(&id) {
            conn.handle_datagram_ecn(now, bytes, ecn);
            return Some(id);
        }
        // Step 1 for a packet without a connection.
        let context = self.config.connection.checksum.receive_context();
        let Ok(packet) = DccpRepr::parse_bytes(bytes, &context) else {
            self.stats.malformed_dropped += 1;
            return None;
        };
        let packet_type = packet.kind.packet_type();
        if packet_type == PacketType::Request {
            if !self.config.listen {
                // RFC 4340 §5.6: Connection Refused, "sent only in response to
                // DCCP-Requests".
                self.stats.refused += 1;
                self.queue_reset(&packet, ResetCode::ConnectionRefused, [0; 3]);
                return None;
            }
            if self.connections.len() >= self.config.max_connections {
                self.stats.refused += 1;
                self.queue_reset(&packet, ResetCode::TooBusy, [0; 3]);
                return None;
            }
            if let Some(cookies) = self.config.cookies.clone() {
                self.answer_statelessly(now, &packet, bytes.len(), iss, &cookies, source);
                return None;
            }
            // Step 3: "If P.type == Request ... Generate a new socket".
            match Connection::accept(self.config.connection.clone(), now, bytes, iss) {
                Ok(conn) => {
                    self.stats.accepted += 1;
                    self.connections.insert(id, conn);
                    return Some(id);
                }
                Err(error) => {
                    self.stats.refused += 1;
                    if let Some((code, data)) = error.reset() {
                        self.queue_reset(&packet, code, data);
                    }
                    return None;
                }
            }
        }
        if let Some(cookies) = self.config.cookies.clone() {
            if let Some(cookie) = init_cookie(&packet) {
                return self.accept_cookie(now, bytes, ecn, &packet, cookie, &cookies, source);
            }
        }
        // Steps 2 and 3: "Generate Reset(No Connection) unless P.type ==
        // Reset; Drop packet and return".
        if packet_type != PacketType::Reset {
            self.queue_reset_within(&packet, ResetCode::NoConnection, bytes.len());
        }
        None
    }

    /// Answers a Request with a Response that carries the state as an Init
    /// Cookie, and keeps nothing (RFC 4340 §8.1.4).
    fn answer_statelessly(
        &mut self,
        now: Instant,
        request: &DccpRepr<'_>,
        request_len: usize,
        iss: u64,
        cookies: &CookieConfig,
        source: &[u8],
    ) {
        // The Request as the connection needs it: padding and data dropped
        // (trailing Padding is not kept by the parser).
        let bare = DccpRepr {
            payload: &[],
            ..request.clone()
        };
        let context = self.config.connection.checksum.send_context();
        let Ok(bare) = bare.emit_to_vec(&context) else {
            return;
        };
        let mut conn = match Connection::accept(self.config.connection.clone(), now, &bare, iss) {
            Ok(conn) => conn,
            Err(error) => {
                self.stats.refused += 1;
                if let Some((code, data)) = error.reset() {
                    if let Some(reset) = self.reset_for(request, code, data) {
                        self.push_answer(reset, request_len);
                    }
                }
                return;
            }
        };
        let mut buf = Vec::new();
        let Some(transmit) = conn.poll_transmit(now, &mut buf) else {
            return;
        };
        let cookie = Cookie {
            sent_at: now,
            iss,
            request: bare,
        };
        let receive = self.config.connection.checksum.receive_context();
        let Some(response) = cookie.seal(cookies, source).and_then(|sealed| {
            let mut repr = DccpRepr::parse_bytes(&buf, &receive).ok()?;
            repr.options.push(DccpOption::InitCookie(sealed)).ok()?;
            repr.emit_to_vec(&context).ok()
        }) else {
            // A Request too long to fit in a cookie: refused as a server
            // that cannot take it would.
            self.stats.refused += 1;
            if let Some(reset) = self.reset_for(request, ResetCode::TooBusy, [0; 3]) {
                self.push_answer(reset, request_len);
            }
            return;
        };
        let transmit = Transmit {
            len: response.len(),
            ..transmit
        };
        if self.push_answer((response, transmit), request_len) {
            self.stats.cookies_sent += 1;
        }
    }

    /// Makes the connection an echoed cookie describes, if the cookie is
    /// good for `source`, and hands it the packet that echoed it.
    #[allow(clippy::too_many_arguments)]
    fn accept_cookie(
        &mut self,
        now: Instant,
        bytes: &[u8],
        ecn: Ecn,
        packet: &DccpRepr<'_>,
        cookie: &[u8],
        cookies: &CookieConfig,
        source: &[u8],
    ) -> Option<ConnectionId> {
        let opened = Cookie::open(cookies, source, cookie, now)
            .ok()
            // The cookie's Request must be for these ports.
            .filter(|c| peek_ports(&c.request) == Some((packet.src_port, packet.dst_port)));
        let Some(cookie) = opened else {
            // RFC 4340 §8.1.4: "respond to a tampered Init Cookie option by
            // resetting the connection with Reset Code 10, "Bad Init
            // Cookie"".
            self.stats.bad_cookies += 1;
            self.queue_reset_within(packet, ResetCode::BadInitCookie, bytes.len());
            return None;
        };
        if self.connections.len() >= self.config.max_connections {
            self.stats.refused += 1;
            self.queue_reset_within(packet, ResetCode::TooBusy, bytes.len());
            return None;
        }
        // The same Request at the same time with the same ISS gives the
        // same connection, which sends the same Response (discarded: the
        // client has it).
        let mut conn = Connection::accept(
            self.config.connection.clone(),
            cookie.sent_at,
            &cookie.request,
            cookie.iss,
        )
        .ok()?;
        let mut buf = Vec::new();
        conn.poll_transmit(cookie.sent_at, &mut buf)?;
        conn.handle_datagram_ecn(now, bytes, ecn);
        let id = ConnectionId {
            local_port: packet.dst_port,
            remote_port: packet.src_port,
        };
        self.stats.accepted += 1;
        self.stats.cookies_accepted += 1;
        self.connections.insert(id, conn);
        Some(id)
    }

    /// Queues an answer to a packet of `incoming_len` bytes from an
    /// address not known to receive, if it is no larger; whether it was
    /// queued.
    fn push_answer(&mut self, answer: (Vec<u8>, Transmit), incoming_len: usize) -> bool {
        if answer.0.len() > incoming_len {
            self.stats.unanswered_small += 1;
            return false;
        }
        if self.resets.len() >= MAX_PENDING_RESETS {
            self.stats.resets_dropped += 1;
            return false;
        }
        self.resets.push_back(answer);
        true
    }

    /// Queues the Reset with `code` for `packet` when cookies are on and
    /// the Reset is no larger than the `incoming_len` bytes that came;
    /// without cookies, as [`queue_reset`](Self::queue_reset).
    fn queue_reset_within(&mut self, packet: &DccpRepr<'_>, code: ResetCode, incoming_len: usize) {
        if self.config.cookies.is_none() {
            self.queue_reset(packet, code, [0; 3]);
            return;
        }
        if let Some(reset) = self.reset_for(packet, code, [0; 3]) {
            self.push_answer(reset, incoming_len);
        }
    }

    /// The Reset with `code` that refuses the Request `bytes` outside any
    /// connection, for a driver that turns away a peer the endpoint never
    /// sees (a receiver busy with another sender answers Reset(Too Busy),
    /// RFC 4340 §5.6: "the server is too busy to accept new connections").
    /// `None` unless `bytes` is a valid Request.
    pub fn refuse_request(&self, bytes: &[u8], code: ResetCode) -> Option<Vec<u8>> {
        let context = self.config.connection.checksum.receive_context();
        let packet = DccpRepr::parse_bytes(bytes, &context).ok()?;
        if packet.kind.packet_type() != PacketType::Request {
            return None;
        }
        self.reset_for(&packet, code, [0; 3])
            .map(|(bytes, _)| bytes)
    }

    /// Builds the Reset that answers `packet` without a connection.
    fn queue_reset(&mut self, packet: &DccpRepr<'_>, code: ResetCode, data: [u8; 3]) {
        if self.resets.len() >= MAX_PENDING_RESETS {
            self.stats.resets_dropped += 1;
            return;
        }
        if let Some(reset) = self.reset_for(packet, code, data) {
            self.resets.push_back(reset);
        }
    }

    /// The Reset that answers `packet` without a connection (RFC 4340 §8.5
    /// for its numbers), and its description.
    fn reset_for(
        &self,
        packet: &DccpRepr<'_>,
        code: ResetCode,
        data: [u8; 3],
    ) -> Option<(Vec<u8>, Transmit)> {
        let (seq, ack) = no_connection_numbers(packet);
        let repr = DccpRepr {
            src_port: packet.dst_port,
            dst_port: packet.src_port,
            ccval: 0,
            checksum_coverage: 0,
            short_seqno: false,
            seq,
            kind: PacketKind::Reset { ack, code, data },
            options: Options::new(),
            payload: &[],
        };
        let context = self.config.connection.checksum.send_context();
        let bytes = repr.emit_to_vec(&context).ok()?;
        let transmit = Transmit {
            len: bytes.len(),
            packet_type: PacketType::Reset,
            seq,
            ack: Some(ack),
            payload_len: 0,
            // RFC 4340 §12: a Reset is not congestion-controlled.
            ecn: Ecn::NotEct,
        };
        Some((bytes, transmit))
    }

    /// The numbers behind the Init Cookie that `bytes` (an Ack or DataAck
    /// for ports without a connection) echoes, if the cookie is good for
    /// `source` at `now`: the sequence number of the client's Request it
    /// answered, and the server's Initial Sequence Number. A driver that
    /// protects packets needs both to derive the connection's keys and
    /// check the packet before the endpoint makes a connection for it.
    /// Reads only the header, so the application data may be ciphertext.
    pub fn peek_cookie(
        &self,
        now: Instant,
        bytes: &[u8],
        source: &[u8],
    ) -> Option<(SeqNum, SeqNum)> {
        let cookies = self.config.cookies.as_ref()?;
        let context = self.config.connection.checksum.receive_context();
        let packet = DccpRepr::parse_bytes(bytes, &context).ok()?;
        let id = ConnectionId {
            local_port: packet.dst_port,
            remote_port: packet.src_port,
        };
        if self.connections.contains_key(&id) {
            return None;
        }
        let cookie = Cookie::open(cookies, source, init_cookie(&packet)?, now).ok()?;
        if peek_ports(&cookie.request) != Some((packet.src_port, packet.dst_port)) {
            return None;
        }
        let request = DccpRepr::parse_bytes(&cookie.request, &context).ok()?;
        Some((request.seq, SeqNum::new(cookie.iss)))
    }

    /// Turns stateless handshakes on (`Some`) or off for Requests from now
    /// on ([`EndpointConfig::cookies`]).
    pub fn set_cookies(&mut self, cookies: Option<CookieConfig>) {
        self.config.cookies = cookies;
    }

    /// Acts on every connection's due timers.
    pub fn handle_timeout(&mut self, now: Instant) {
        for conn in self.connections.values_mut() {
            if conn.poll_timeout().is_some_and(|at| at <= now) {
                conn.handle_timeout(now);
            }
        }
        self.remove_drained();
    }

    /// The next packet to send, from the endpoint's Resets first, then from
    /// the connections in turn; with the connection it belongs to (`None`
    /// for an endpoint Reset).
    pub fn poll_transmit(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<(Option<ConnectionId>, Transmit)> {
        if let Some((bytes, transmit)) = self.resets.pop_front() {
            buf.clear();
            buf.extend_from_slice(&bytes);
            self.stats.resets_sent += 1;
            return Some((None, transmit));
        }
        // Round robin: the connections after the last one served, then all
        // of them from the first (those after it asked a second time).
        let after = self.last_served.map(|s| {
            self.connections
                .range_mut((std::ops::Bound::Excluded(s), std::ops::Bound::Unbounded))
        });
        for (id, conn) in after.into_iter().flatten() {
            if let Some(transmit) = conn.poll_transmit(now, buf) {
                self.last_served = Some(*id);
                return Some((Some(*id), transmit));
            }
        }
        // The same pass notes whether a connection is drained.
        let mut drained = false;
        for (id, conn) in self.connections.iter_mut() {
            if let Some(transmit) = conn.poll_transmit(now, buf) {
                self.last_served = Some(*id);
                return Some((Some(*id), transmit));
            }
            drained |= conn.is_drained() && conn.events.is_empty();
        }
        if drained {
            self.remove_drained();
        }
        None
    }

    /// The next event of any connection.
    pub fn poll_event(&mut self) -> Option<(ConnectionId, Event)> {
        // One pass: the first event, or else whether a connection is
        // drained (its events, just asked, are none).
        let mut drained = false;
        for (id, conn) in self.connections.iter_mut() {
            if let Some(event) = conn.poll_event() {
                return Some((*id, event));
            }
            drained |= conn.is_drained();
        }
        if drained {
            self.remove_drained();
        }
        None
    }

    /// The earliest time a connection needs `handle_timeout`.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.connections
            .values()
            .filter_map(Connection::poll_timeout)
            .min()
    }

    /// Drops CLOSED connections with nothing left to send or report.
    fn remove_drained(&mut self) {
        // Runs whenever nothing is left to send or report: a read-only look
        // first, as `retain` walks the map with mutable handles.
        let drained = |conn: &Connection| conn.is_drained() && conn.events.is_empty();
        if self.connections.values().any(drained) {
            self.connections.retain(|_, conn| !drained(conn));
        }
    }
}

/// The first Init Cookie on a packet that may echo one (RFC 4340 §5.8:
/// Init Cookie is valid on Response, Ack and DataAck; a client echoes it
/// on its Ack or DataAck).
fn init_cookie<'a>(packet: &'a DccpRepr<'_>) -> Option<&'a [u8]> {
    if !matches!(
        packet.kind.packet_type(),
        PacketType::Ack | PacketType::DataAck
    ) {
        return None;
    }
    packet.options.iter().find_map(|option| match option {
        DccpOption::InitCookie(cookie) => Some(cookie.as_slice()),
        _ => None,
    })
}
