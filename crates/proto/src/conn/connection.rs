//! The DCCP connection: its state, constructors, getters and application
//! commands. Packet processing is in [`super::input`], packet writing in
//! [`super::output`].

use std::collections::VecDeque;
use std::time::Duration;

use super::ccid::{ReceiverCcid, SenderCcid};
use super::config::{Ccid, ConnectionConfig, MAX_SEQUENCE_WINDOW};
use super::event::{AcceptError, ConnectionStats, Event, SendError};
use super::features::Features;
use super::history::SendHistory;
use super::seqwin::{SequenceNumbers, SequenceState};
use super::state::{Role, State};
use super::timers::{Timer, TimerTable};
use crate::buffers::{BufferPool, Payload, Shared};
use crate::time::Instant;
use crate::units::Rate;
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, ResetCode, SeqNum};
use crate::wire::options::DccpOption;

/// The most control packets (Reset, Sync, SyncAck) queued at once; more are
/// dropped, so that a flood of invalid packets cannot grow memory.
pub(crate) const MAX_CONTROL_PACKETS: usize = 8;
/// The Sequence Window is kept at least this many times the packets sent per
/// round trip (a choice; see [`Connection::size_sequence_window`]).
pub(crate) const WINDOW_PER_RTT_FACTOR: u64 = 4;
/// The most packets whose send time is remembered for RTT samples.
const MAX_SEND_HISTORY: u64 = 1 << 16;
/// The most sequence numbers a receiving CCID keeps state for.
const MAX_RECEIVER_MEMORY: u64 = 4096;

/// A control packet waiting to be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    /// A Reset. `seq` is `None` for the next sequence number of the
    /// connection, or the number RFC 4340 §8.5 gives a Reset answering a
    /// packet without a connection (P.ackno + 1, or 0).
    Reset {
        /// The Reset Code.
        code: ResetCode,
        /// Data 1-3.
        data: [u8; 3],
        /// Its sequence number, if fixed.
        seq: Option<SeqNum>,
        /// Its acknowledgement number.
        ack: SeqNum,
    },
    /// A Sync acknowledging `ack`.
    Sync {
        /// The acknowledged number.
        ack: SeqNum,
    },
    /// A SyncAck acknowledging `ack` (a Sync's sequence number).
    SyncAck {
        /// The acknowledged number.
        ack: SeqNum,
    },
}

/// Handshake and close packets due at the next `poll_transmit`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Due {
    pub(crate) request: bool,
    pub(crate) response: bool,
    pub(crate) ack: bool,
    pub(crate) close: bool,
    pub(crate) close_req: bool,
}

/// One DCCP connection (RFC 4340 §8): the handshake, both half-connections
/// with their CCIDs, the sequence number windows, Sync recovery and the
/// close, as a state machine in virtual time.
///
/// # Driver contract
///
/// A driver owns the socket and the clock; the connection owns neither. It
/// calls, in this order:
///
/// 1. **Inputs.** [`handle_datagram`](Self::handle_datagram) for every
///    datagram for this connection's ports; [`handle_timeout`](Self::handle_timeout)
///    whenever `now` reaches [`poll_timeout`](Self::poll_timeout).
/// 2. **Outputs**, after every input and every application command:
///    [`poll_transmit`](Self::poll_transmit) until it returns `None`, sending
///    each packet; [`poll_event`](Self::poll_event) until `None`; then
///    [`poll_timeout`](Self::poll_timeout) to know when to wake up next.
///
/// **Application commands**, at any time: [`send`](Self::send),
/// [`recv`](Self::recv), [`close`](Self::close), [`abort`](Self::abort).
///
/// **Getters** never change state: [`state`](Self::state),
/// [`stats`](Self::stats), [`ccids`](Self::ccids), [`local_port`](Self::local_port),
/// [`remote_port`](Self::remote_port), [`role`](Self::role),
/// [`is_drained`](Self::is_drained), [`max_payload`](Self::max_payload).
///
/// Construction: [`connect`](Self::connect) for a client,
/// [`accept`](Self::accept) for a server (normally through an
/// [`Endpoint`](super::Endpoint)).
#[derive(Debug)]
pub struct Connection {
    pub(crate) config: ConnectionConfig,
    pub(crate) role: Role,
    pub(crate) state: State,
    pub(crate) local_port: u16,
    pub(crate) remote_port: u16,
    pub(crate) send_context: ChecksumContext,
    pub(crate) receive_context: ChecksumContext,
    pub(crate) seq: SequenceState,
    pub(crate) features: Features,
    pub(crate) tx: Option<SenderCcid>,
    pub(crate) rx: Option<ReceiverCcid>,
    pub(crate) timers: TimerTable,
    /// The current (backed-off) interval of [`Timer::Retransmit`].
    pub(crate) retransmit_interval: Duration,
    /// The current interval of [`Timer::FeatureRetransmit`].
    pub(crate) feature_interval: Duration,
    pub(crate) sent: SendHistory,
    pub(crate) control: VecDeque<Control>,
    pub(crate) due: Due,
    /// The server's Response options, repeated on every Response.
    pub(crate) response_options: Vec<DccpOption>,
    /// A client's Init Cookies from the Response (RFC 4340 §8.1.4), echoed
    /// on every Ack in PARTOPEN.
    pub(crate) init_cookies: Vec<Vec<u8>>,
    pub(crate) send_queue: VecDeque<Payload>,
    /// The buffers of datagrams sent, for the next ones queued.
    pub(crate) send_buffers: BufferPool,
    pub(crate) recv_queue: VecDeque<Vec<u8>>,
    /// Buffers the application gave back ([`recycle`](Self::recycle)), for
    /// the next datagrams received.
    pub(crate) recv_buffers: BufferPool,
    pub(crate) recv_dropped_unreported: u64,
    pub(crate) events: VecDeque<Event>,
    /// `close` was called with data queued: close once it has left.
    pub(crate) close_after_drain: bool,
    /// The GSR acknowledged by the last packet sent with an acknowledgement.
    pub(crate) last_ack_sent: Option<u64>,
    /// Non-data packets sent since the last data packet (NDP Count, RFC 4340
    /// §7.7).
    pub(crate) nondata_run: u64,
    /// The RTT the handshake measured.
    pub(crate) handshake_rtt: Option<Duration>,
    /// Packets sent since `window_epoch` began (Sequence Window sizing).
    pub(crate) epoch_packets: u64,
    /// The start of the current round-trip-long counting epoch.
    pub(crate) window_epoch: Option<Instant>,
    pub(crate) stats: ConnectionStats,
}

impl Connection {
    fn new(
        config: ConnectionConfig,
        role: Role,
        state: State,
        local_port: u16,
        remote_port: u16,
        seq: SequenceState,
        features: Features,
    ) -> Connection {
        let window = config.clamped_sequence_window();
        let retransmit_interval = config.initial_retransmit;
        Connection {
            send_context: config.checksum.send_context(),
            receive_context: config.checksum.receive_context(),
            role,
            state,
            local_port,
            remote_port,
            seq,
            features,
            tx: None,
            rx: None,
            timers: TimerTable::default(),
            retransmit_interval,
            feature_interval: config.initial_retransmit,
            sent: SendHistory::new(usize::try_from(window.min(MAX_SEND_HISTORY)).unwrap_or(1024)),
            control: VecDeque::new(),
            due: Due::default(),
            response_options: Vec::new(),
            init_cookies: Vec::new(),
            send_queue: VecDeque::new(),
            send_buffers: BufferPool::default(),
            recv_queue: VecDeque::new(),
            recv_buffers: BufferPool::default(),
            recv_dropped_unreported: 0,
            events: VecDeque::new(),
            close_after_drain: false,
            last_ack_sent: None,
            nondata_run: 0,
            handshake_rtt: None,
            epoch_packets: 0,
            window_epoch: None,
            stats: ConnectionStats::default(),
            config,
        }
    }

    /// A client connection in REQUEST state, with its first Request queued.
    ///
    /// `iss` is the Initial Sequence Number (its low 48 bits are used). RFC
    /// 4340 §7.2: it should be chosen at random; the driver draws it from its
    /// seeded generator.
    pub fn connect(
        config: ConnectionConfig,
        now: Instant,
        local_port: u16,
        remote_port: u16,
        iss: u64,
    ) -> Connection {
        let window = config.clamped_sequence_window();
        let seq = SequenceState::new(iss, window, super::config::DEFAULT_SEQUENCE_WINDOW);
        let features = Features::client(&config);
        let mut conn = Connection::new(
            config,
            Role::Client,
            State::Request,
            local_port,
            remote_port,
            seq,
            features,
        );
        conn.due.request = true;
        // RFC 4340 §8.1.1: retransmit with exponential backoff, and give up
        // after a while.
        conn.timers
            .set(Timer::Retransmit, Some(now + conn.retransmit_interval));
        conn.timers
            .set(Timer::GiveUp, Some(now + conn.config.handshake_timeout));
        conn
    }

    /// A server connection for a Request that arrived at a listening
    /// endpoint (RFC 4340 §8.5 step 3): state RESPOND, with the Response
    /// queued. The request is checked (Service Code, Mandatory options,
    /// feature negotiation); [`AcceptError::reset`] tells which Reset, if
    /// any, answers a refused one.
    pub fn accept(
        config: ConnectionConfig,
        now: Instant,
        request_bytes: &[u8],
        iss: u64,
    ) -> Result<Connection, AcceptError> {
        let receive_context = config.checksum.receive_context();
        let request = DccpRepr::parse_bytes(request_bytes, &receive_context)?;
        let PacketKind::Request { service_code } = request.kind else {
            return Err(AcceptError::NotARequest(request.kind.packet_type()));
        };
        if request.short_seqno {
            return Err(AcceptError::ShortSequenceNumbers);
        }
        // RFC 4340 §8.1.2: a server not listening for the Service Code "MUST
        // reject the request by sending a DCCP-Reset packet with Reset Code
        // 8, "Bad Service Code""; 4294967295 is never valid.
        if service_code != config.service_code
            || service_code == super::config::INVALID_SERVICE_CODE
        {
            return Err(AcceptError::BadServiceCode {
                got: service_code,
                expected: config.service_code,
            });
        }
        // RFC 4340 §5.8.2: a Mandatory option the server does not understand
        // resets the connection.
        request
            .options
            .check_mandatory(understood_in_request)
            .map_err(AcceptError::Mandatory)?;
        let features = Features::server(&config, &request.options).map_err(|failure| {
            AcceptError::Negotiation {
                reason: failure.reason,
                code: failure.code,
                data: failure.data,
            }
        })?;
        let window = config.clamped_sequence_window();
        let peer_window = features
            .peer_window()
            .unwrap_or(super::config::DEFAULT_SEQUENCE_WINDOW);
        let mut seq = SequenceState::new(iss, window, peer_window);
        // Step 3: "Choose S.ISS (initial seqno) ... Initialize S.GAR := S.ISS;
        // Set S.ISR, S.GSR, S.SWL, S.SWH from packet".
        seq.set_isr(request.seq);
        let mut conn = Connection::new(
            config,
            Role::Server,
            State::Respond,
            request.dst_port,
            request.src_port,
            seq,
            features,
        );
        conn.response_options = conn.features.take_options();
        conn.start_ccids(now);
        conn.due.response = true;
        // The server does not retransmit Responses (it answers repeated
        // Requests, step 11), but it gives up on a client that vanishes.
        conn.timers
            .set(Timer::GiveUp, Some(now + conn.config.handshake_timeout));
        conn.stats.packets_received = 1;
        conn.stats.bytes_received = request_bytes.len() as u64;
        Ok(conn)
    }

    // --- getters ---

    /// The connection's state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Client or server.
    pub fn role(&self) -> Role {
        self.role
    }

    /// This endpoint's DCCP port.
    pub fn local_port(&self) -> u16 {
        self.local_port
    }

    /// The peer's DCCP port.
    pub fn remote_port(&self) -> u16 {
        self.remote_port
    }

    /// The agreed CCIDs: (this endpoint's sending half-connection, the
    /// peer's), once the handshake settled them.
    pub fn ccids(&self) -> Option<(Ccid, Ccid)> {
        self.features.ccids()
    }

    /// The configuration.
    pub fn config(&self) -> &ConnectionConfig {
        &self.config
    }

    /// The application data limit of one packet.
    pub fn max_payload(&self) -> usize {
        self.config.max_payload()
    }

    /// Whether the connection is CLOSED with nothing left to send: the driver
    /// may drop it.
    pub fn is_drained(&self) -> bool {
        self.state == State::Closed && self.control.is_empty()
    }

    /// Datagrams waiting in the send queue.
    pub fn send_queue_len(&self) -> usize {
        self.send_queue.len()
    }

    /// The rate the sender's CCID allows now: [`stats`](Self::stats)'s
    /// `rate`, without building the rest (a driver that asks on every
    /// packet, such as a session choosing a connection, needs only this).
    pub fn allowed_rate(&self) -> Option<Rate> {
        self.tx.as_ref().map(SenderCcid::allowed_rate)
    }

    /// The round-trip time estimate: [`stats`](Self::stats)'s `rtt` (the
    /// sender CCID's, else the handshake's), without building the rest.
    pub fn rtt(&self) -> Option<Duration> {
        match &self.tx {
            Some(tx) => tx.rtt().or(self.handshake_rtt),
            None => self.handshake_rtt,
        }
    }

    /// Valid packets received: [`stats`](Self::stats)'s `packets_received`.
    pub fn packets_received(&self) -> u64 {
        self.stats.packets_received
    }

    /// Data-carrying packets received: [`stats`](Self::stats)'s
    /// `data_packets_received`.
    pub fn data_packets_received(&self) -> u64 {
        self.stats.data_packets_received
    }

    /// Counters and current values.
    pub fn stats(&self) -> ConnectionStats {
        let mut stats = self.stats.clone();
        if let Some(tx) = &self.tx {
            stats.rate = Some(tx.allowed_rate());
            stats.rtt = tx.rtt().or(self.handshake_rtt);
            stats.loss_event_rate = tx.loss_event_rate();
            stats.cwnd = tx.cwnd();
        } else {
            stats.rtt = self.handshake_rtt;
        }
        if let Some(rx) = &self.rx {
            stats.receive_loss_event_rate = rx.loss_event_rate();
            stats.data_losses = rx.data_losses();
        }
        stats.ack_ratio = self.features.ack_ratio();
        stats.peer_sends_ack_vectors = self.features.peer_sends_ack_vectors();
        stats.ecn_capable = self.features.ecn_permitted();
        stats
    }

    /// The sequence number variables (RFC 4340 §7, §8.5) as wire numbers.
    pub fn sequence_numbers(&self) -> SequenceNumbers {
        self.seq.numbers()
    }

    /// The TFRC sender of a CCID 3/4 half-connection.
    pub fn tfrc_sender(&self) -> Option<&crate::cc::tfrc::TfrcSender> {
        self.tx.as_ref().and_then(SenderCcid::tfrc)
    }

    /// Holds this connection's retransmission backoff (of Requests, Closes
    /// and feature negotiation) at `max` or below. A bonded session does
    /// this to the connection that probes a path gone down, while its other
    /// paths show that the receiver is alive, so that the path is back
    /// within about `max` of answering again (RFC 4340 §8.1.1 asks for a
    /// backoff to at most 64 s; its concern, load on a server that does not
    /// answer, is one Request of some 50 bytes per `max` here).
    pub fn cap_retransmit_interval(&mut self, now: Instant, max: Duration) {
        let max = self.config.max_retransmit_interval.min(max);
        self.config.max_retransmit_interval = max;
        self.retransmit_interval = self.retransmit_interval.min(max);
        self.feature_interval = self.feature_interval.min(max);
        for timer in [Timer::Retransmit, Timer::FeatureRetransmit] {
            if self.timers.get(timer).is_some_and(|at| at > now + max) {
                self.timers.set(timer, Some(now + max));
            }
        }
    }

    /// Makes this connection's TFRC sender (CCID 3, 4 or the experimental
    /// MulTFRC CCID) send at the rate of `n` TFRC flows (the MulTFRC
    /// equation with a fractional n); no effect on CCID 2. Returns whether a
    /// TFRC sender took it.
    pub fn set_tfrc_flows(&mut self, n: f64) -> bool {
        match self.tx.as_mut().and_then(SenderCcid::tfrc_mut) {
            Some(sender) => {
                sender.set_flows(n);
                true
            }
            None => false,
        }
    }

    /// Experimental: whether this connection's TFRC sender takes the
    /// receiver's congestion loss event rate (CCID 248's option 198: p
    /// without the losses of a marking path) into its equation
    /// ([`TfrcSender::set_congestion_loss_event_rate_used`](crate::cc::tfrc::TfrcSender::set_congestion_loss_event_rate_used));
    /// no effect on CCID 2. Returns whether a TFRC sender took it.
    pub fn set_tfrc_congestion_loss_event_rate_used(&mut self, used: bool) -> bool {
        match self.tx.as_mut().and_then(SenderCcid::tfrc_mut) {
            Some(sender) => {
                sender.set_congestion_loss_event_rate_used(used);
                true
            }
            None => false,
        }
    }

    /// Lets this connection's TFRC sender rise to `rate` where RFC 5348's
    /// equation gives less ([`TfrcSender::set_target_rate`](crate::cc::tfrc::TfrcSender::set_target_rate));
    /// no effect on CCID 2. Returns whether a TFRC sender took it.
    pub fn set_tfrc_target_rate(&mut self, rate: Option<crate::units::Rate>) -> bool {
        match self.tx.as_mut().and_then(SenderCcid::tfrc_mut) {
            Some(sender) => {
                sender.set_target_rate(rate);
                true
            }
            None => false,
        }
    }

    /// The sender of the experimental fixed-rate CCID 249.
    pub fn fixed_rate_sender(&self) -> Option<&crate::cc::fixed_rate::FixedRateSender> {
        self.tx.as_ref().and_then(SenderCcid::fixed_rate)
    }

    /// The CCID 2 sender.
    pub fn ccid2_sender(&self) -> Option<&crate::cc::ccid2::Ccid2Sender> {
        self.tx.as_ref().and_then(SenderCcid::ccid2)
    }

    /// The TFRC receiver of the peer's CCID 3/4 half-connection.
    pub fn tfrc_receiver(&self) -> Option<&crate::cc::tfrc_receiver::TfrcReceiver> {
        self.rx.as_ref().and_then(ReceiverCcid::tfrc)
    }

    /// The sizes of the connection's peer-influenced tables (for tests that
    /// check they stay bounded): control queue, receive queue, events, send
    /// history, CCID 2 Ack history.
    pub fn table_sizes(&self) -> [usize; 5] {
        [
            self.control.len(),
            self.recv_queue.len(),
            self.events.len(),
            self.sent.len(),
            self.rx.as_ref().map_or(0, ReceiverCcid::ack_history_len),
        ]
    }

    // --- application commands ---

    /// Queues `payload` as one datagram (DCCP is unreliable: it is sent at
    /// most once). Allowed from REQUEST to OPEN; the data leaves when the
    /// state and the CCID allow.
    pub fn send(&mut self, now: Instant, payload: &[u8]) -> Result<(), SendError> {
        let _ = now;
        self.may_queue(payload.len())?;
        let payload = self.send_buffers.copy_of(payload);
        self.send_queue.push_back(Payload::Owned(payload));
        Ok(())
    }

    /// [`send`](Self::send) for bytes a session keeps too: the connection
    /// holds them without a copy.
    pub(crate) fn send_shared(&mut self, payload: &Shared) -> Result<(), SendError> {
        self.may_queue(payload.len())?;
        self.send_queue
            .push_back(Payload::Shared(Shared::clone(payload)));
        Ok(())
    }

    /// Whether a datagram of `len` bytes may be queued now.
    fn may_queue(&self, len: usize) -> Result<(), SendError> {
        if !self.state.can_send() || self.close_after_drain {
            return Err(SendError::NotOpen(self.state));
        }
        let max = self.max_payload();
        if len > max {
            return Err(SendError::TooBig { len, max });
        }
        if self.send_queue.len() >= self.config.send_queue_packets {
            return Err(SendError::QueueFull {
                capacity: self.config.send_queue_packets,
            });
        }
        Ok(())
    }

    /// Drops the datagrams queued and not yet sent, and says how many: an
    /// application whose queued data went stale (feedback such as a NACK)
    /// replaces it with fresh data rather than sending both.
    pub fn discard_send_queue(&mut self) -> usize {
        let count = self.send_queue.len();
        self.send_queue.clear();
        count
    }

    /// The next received datagram, in order of arrival.
    pub fn recv(&mut self) -> Option<Vec<u8>> {
        self.recv_queue.pop_front()
    }

    /// Gives back a buffer [`recv`](Self::recv) returned, once read, to
    /// carry a later datagram (a few are kept; the rest are freed).
    pub fn recycle(&mut self, buffer: Vec<u8>) {
        self.recv_buffers.give(buffer);
    }

    /// Starts an orderly close (RFC 4340 §8.3) once the queued data has left:
    /// a client sends Close, a server CloseReq (so that the client holds
    /// TIMEWAIT). Before the handshake completes, the connection is aborted.
    pub fn close(&mut self, now: Instant) {
        match self.state {
            State::Request | State::Respond => self.abort(now),
            State::PartOpen | State::Open => {
                if self.send_queue.is_empty() {
                    self.start_close(now);
                } else {
                    self.close_after_drain = true;
                }
            }
            _ => {}
        }
    }

    /// Resets the connection at once with Reset Code 2, "Aborted".
    pub fn abort(&mut self, now: Instant) {
        if matches!(self.state, State::Closed | State::TimeWait) {
            return;
        }
        self.reset_and_close(now, ResetCode::Aborted, [0; 3], None);
    }

    // --- outputs ---

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        if self.recv_dropped_unreported > 0 {
            let count = std::mem::take(&mut self.recv_dropped_unreported);
            return Some(Event::DatagramsDropped { count });
        }
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    // --- internals shared by input and output ---

    /// Enters CLOSING (client) or CLOSEREQ (server) and queues the packet.
    pub(crate) fn start_close(&mut self, now: Instant) {
        self.close_after_drain = false;
        match self.role {
            Role::Client => {
                self.state = State::Closing;
                self.due.close = true;
            }
            Role::Server => {
                self.state = State::CloseReq;
                self.due.close_req = true;
            }
        }
        // RFC 4340 §8.3: Close and CloseReq are retransmitted with backoff.
        self.retransmit_interval = self.config.initial_retransmit;
        self.timers
            .set(Timer::Retransmit, Some(now + self.retransmit_interval));
        self.timers
            .set(Timer::GiveUp, Some(now + self.config.close_timeout));
    }

    /// Queues a Reset with this connection's next sequence number and tears
    /// the connection down (CLOSED once the Reset has left).
    pub(crate) fn reset_and_close(
        &mut self,
        now: Instant,
        code: ResetCode,
        data: [u8; 3],
        ack: Option<SeqNum>,
    ) {
        let _ = now;
        let ack = ack.unwrap_or_else(|| self.gsr_wire());
        self.push_control(Control::Reset {
            code,
            data,
            seq: None,
            ack,
        });
        if code != ResetCode::Closed {
            self.events.push_back(Event::Reset {
                code,
                data,
                by_peer: false,
            });
        }
        self.enter_closed();
    }

    /// CLOSED: every timer stops and unsent data is dropped.
    pub(crate) fn enter_closed(&mut self) {
        self.state = State::Closed;
        self.timers.stop_all();
        self.due = Due::default();
        self.send_queue.clear();
        self.close_after_drain = false;
    }

    /// TIMEWAIT for 2·MSL (RFC 4340 §8.3).
    pub(crate) fn enter_time_wait(&mut self, now: Instant) {
        self.enter_closed();
        self.state = State::TimeWait;
        self.timers.set(
            Timer::TimeWait,
            Some(now + self.config.msl.saturating_mul(2)),
        );
    }

    /// Queues a control packet, dropping it when the queue is full.
    pub(crate) fn push_control(&mut self, control: Control) {
        if self.control.len() < MAX_CONTROL_PACKETS {
            self.control.push_back(control);
        }
    }

    /// GSR as a wire number (zero before ISR is known).
    pub(crate) fn gsr_wire(&self) -> SeqNum {
        self.seq.gsr().map_or(SeqNum::ZERO, SequenceState::wire)
    }

    /// Creates the CCID machinery once the CCIDs are agreed (the client on
    /// the Response; the server at once, since the Request settles them).
    pub(crate) fn start_ccids(&mut self, now: Instant) {
        let Some((tx_ccid, rx_ccid)) = self.features.ccids() else {
            return;
        };
        let memory = usize::try_from(
            (self.seq.peer_window().saturating_mul(2)).clamp(64, MAX_RECEIVER_MEMORY),
        )
        .unwrap_or(1024);
        if self.tx.is_none() {
            let mut tx = SenderCcid::new(tx_ccid, &self.config, now);
            if let Some(rtt) = self.handshake_rtt {
                tx.set_handshake_rtt(now, rtt);
            }
            self.tx = Some(tx);
        }
        if self.rx.is_none() {
            self.rx = Some(ReceiverCcid::new(rx_ccid, &self.config, now, memory));
        }
    }

    /// Keeps this endpoint's Sequence Window at least
    /// [`WINDOW_PER_RTT_FACTOR`] times the packets it sends per round trip.
    ///
    /// RFC 4340 §7.5.2: the Sequence Window must reflect the packets an
    /// endpoint has in flight, which only that endpoint can anticipate, and it
    /// should be raised with Change L(Sequence Window) as the connection
    /// progresses; an endpoint must not persistently send more than its
    /// window per round trip. Too small a window makes the peer take this
    /// endpoint's packets and acknowledgements for invalid ones. The window
    /// only grows (doubling at least), up to [`MAX_SEQUENCE_WINDOW`].
    pub(crate) fn size_sequence_window(&mut self, now: Instant) {
        let rtt = self
            .tx
            .as_ref()
            .and_then(SenderCcid::rtt)
            .or(self.handshake_rtt)
            .unwrap_or(super::window_counter::FALLBACK_RTT);
        match self.window_epoch {
            Some(start) if now.saturating_duration_since(start) < rtt => {}
            _ => {
                self.window_epoch = Some(now);
                self.epoch_packets = 0;
            }
        }
        self.epoch_packets += 1;
        let needed = self.epoch_packets.saturating_mul(WINDOW_PER_RTT_FACTOR);
        let current = self.seq.local_window();
        if needed <= current || current >= MAX_SEQUENCE_WINDOW {
            return;
        }
        let window = needed
            .max(current.saturating_mul(2))
            .min(MAX_SEQUENCE_WINDOW);
        self.seq.set_local_window(window);
        self.sent
            .grow_to(usize::try_from(window.min(MAX_SEND_HISTORY)).unwrap_or(1024));
        self.features.change_sequence_window(window);
        self.due.ack = true;
    }

    /// Brings the CCID entries of the timer table up to date.
    pub(crate) fn refresh_timers(&mut self) {
        let active = matches!(
            self.state,
            State::PartOpen | State::Open | State::CloseReq | State::Closing
        );
        let sender = self.tx.as_ref().and_then(SenderCcid::next_timeout);
        let receiver = self.rx.as_ref().and_then(ReceiverCcid::next_timeout);
        self.timers
            .set(Timer::CcidSender, sender.filter(|_| active));
        self.timers
            .set(Timer::CcidReceiver, receiver.filter(|_| active));
        if !active {
            self.timers.stop(Timer::Pacing);
        }
    }
}

/// What a listening server understands after Mandatory in a Request: every
/// option this implementation decodes, and feature options for known
/// features (CCID-specific options mean nothing before a CCID is agreed).
fn understood_in_request(option: &DccpOption) -> bool {
    match option.feature() {
        Some(feature) => !matches!(feature, crate::wire::options::Feature::Unknown { .. }),
        None => option.is_understood() && option.kind() < 128,
    }
}
