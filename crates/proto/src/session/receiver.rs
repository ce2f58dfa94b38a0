//! The receiving side of a multi-connection session.

use std::time::Duration;

use super::arq::{NakTracker, ReceiverArqStats, SESSION_SSRC};
use super::reorder::{ReorderBuffer, ReorderConfig, ReorderStats};
use super::{FecTag, SessionHeader};
use crate::cc::tfrc::PacketSizeMode;
use crate::conn::{
    ConnectionConfig, ConnectionId, CookieConfig, Endpoint, EndpointConfig, SendError, State,
    Transmit,
};
use crate::ecn::Ecn;
use crate::time::Instant;
use crate::wire::rtcp::GenericNack;

/// The RTT assumed before any connection has one.
const RTT_BEFORE_SAMPLES: Duration = Duration::from_millis(100);
/// The most sequence numbers one round of requests names.
const MAX_REQUESTS_PER_ROUND: usize = 4096;

/// Counters of a [`ReceiverSession`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverSessionStats {
    /// Datagrams too short for the session header, dropped.
    pub malformed: u64,
    /// The reorder buffer's counters.
    pub reorder: ReorderStats,
    /// What the receiver asked to be resent, and got.
    pub arq: ReceiverArqStats,
}

/// The receiver of one stream over several connections: it accepts the
/// sender's connections on one port and merges what they carry into one
/// ordered stream. A connection that dies leaves gaps the reorder buffer
/// gives up after its `max_wait`; the others go on.
#[derive(Debug)]
pub struct ReceiverSession {
    endpoint: Endpoint,
    reorder: ReorderBuffer,
    malformed: u64,
    /// Ask for what is lost ([`with_arq`](Self::with_arq)).
    arq: bool,
    naks: NakTracker,
    /// The playout delay the stream is played with, if known.
    playout_delay: Option<Duration>,
    /// How long before a datagram is due a gap before it is given up
    /// ([`with_playout_lead`](Self::with_playout_lead)).
    playout_lead: Duration,
    /// The reorder buffer's own bounds, before the playout delay and the RTT
    /// adjust them.
    base_reorder: ReorderConfig,
    /// The connection that delivered last (requests go back on it).
    last_lane: Option<ConnectionId>,
    /// The datagrams a connection delivered, taken at once (kept for its
    /// buffer).
    arrived: Vec<Vec<u8>>,
    rtt: Option<Duration>,
    /// The first timed datagram's playout time and arrival: the origin of
    /// the deadlines.
    timeline: Option<(u32, Instant)>,
    /// When a gap with fewer than NDUPACK datagrams after it counts as
    /// lost if nothing else came (a quarter RTT after the last datagram).
    settle_check: Option<Instant>,
    /// FEC blocks seen (by the extended number of their first datagram):
    /// k, n, and how many of their datagrams arrived.
    fec_blocks: std::collections::BTreeMap<u64, (FecTag, u16)>,
    /// The highest number that arrived.
    highest: Option<u64>,
}

/// The most FEC blocks tracked (a sender cannot grow memory by tagging).
const MAX_FEC_BLOCKS: usize = 4096;

/// What to do about a certainly lost datagram of an FEC-protected stream.
enum FecVerdict {
    /// Ask for it: no FEC block is known to hold it, or its block came with
    /// fewer than k datagrams.
    Ask,
    /// Leave it to FEC: its block came with at least k datagrams, or it is
    /// parity (never resent).
    Forgo,
    /// Its block has not passed yet: the count is not final.
    Wait,
}

impl ReceiverSession {
    /// A receiver accepting up to `max_connections` connections.
    ///
    /// What the receiver sends back as data (its NACKs, a few tens of
    /// bytes each) is paced by each connection's own CCID (RFC 5762 §4).
    /// With s the mean size sent, TFRC would allow such small packets only
    /// a few tens of bytes a second (measured: 26 B/s after one NACK in
    /// eight was lost, one NACK a second), so the receiver's TFRC senders
    /// count every packet as the configured segment size (a nominal s, RFC
    /// 5348 §4.1): their rate is a TFRC rate in packets, the view TFRC-SP
    /// takes of small packets (RFC 4828 §3).
    pub fn new(
        mut connection: ConnectionConfig,
        max_connections: usize,
        reorder: ReorderConfig,
    ) -> ReceiverSession {
        connection.tfrc.packet_size = PacketSizeMode::ConfiguredMean;
        ReceiverSession {
            endpoint: Endpoint::new(EndpointConfig {
                connection,
                listen: true,
                max_connections,
                cookies: None,
            }),
            reorder: ReorderBuffer::new(reorder),
            malformed: 0,
            arq: false,
            naks: NakTracker::default(),
            playout_delay: None,
            playout_lead: Duration::ZERO,
            base_reorder: reorder,
            last_lane: None,
            arrived: Vec::new(),
            rtt: None,
            timeline: None,
            settle_check: None,
            fec_blocks: std::collections::BTreeMap::new(),
            highest: None,
        }
    }

    /// Counts a datagram that arrived for its FEC block.
    fn count_fec(&mut self, seq: u64, tag: FecTag) {
        let Some(start) = seq.checked_sub(u64::from(tag.index)) else {
            return;
        };
        if !self.fec_blocks.contains_key(&start) && self.fec_blocks.len() >= MAX_FEC_BLOCKS {
            self.fec_blocks.pop_first();
        }
        let entry = self.fec_blocks.entry(start).or_insert((tag, 0));
        entry.1 = entry.1.saturating_add(1);
    }

    /// Whether to ask for `gap`, leave it to FEC, or wait for its block.
    fn fec_verdict(&self, now: Instant, gap: u64) -> FecVerdict {
        let Some((&start, &(tag, received))) = self.fec_blocks.range(..=gap).next_back() else {
            return FecVerdict::Ask;
        };
        let end = start + u64::from(tag.n);
        if gap >= end {
            return FecVerdict::Ask;
        }
        let passed = self.highest.is_some_and(|h| h + 1 >= end)
            || self.reorder.quiet_for(now, self.settle());
        if !passed {
            FecVerdict::Wait
        } else if received >= u16::from(tag.k) || gap - start >= u64::from(tag.k) {
            FecVerdict::Forgo
        } else {
            FecVerdict::Ask
        }
    }

    /// How long after the last datagram a gap with fewer than NDUPACK
    /// datagrams after it counts as lost: a quarter RTT, longer than a path
    /// reorders for.
    fn settle(&self) -> Duration {
        self.rtt.unwrap_or(RTT_BEFORE_SAMPLES) / 4
    }

    /// The deadline of a datagram with playout time `playout_ms`, when the
    /// playout delay is known: the delay after the first timed datagram
    /// arrived, plus the playout time since that datagram's, less the
    /// [playout lead](Self::with_playout_lead).
    pub(super) fn deadline(&mut self, now: Instant, playout_ms: Option<u32>) -> Option<Instant> {
        let delay = self.playout_delay?;
        let playout_ms = playout_ms?;
        let (first_ms, first_arrival) = *self.timeline.get_or_insert((playout_ms, now));
        let offset_ms = i64::from(playout_ms.wrapping_sub(first_ms) as i32);
        let origin = first_arrival + delay.saturating_sub(self.playout_lead);
        Some(if offset_ms >= 0 {
            origin + Duration::from_millis(offset_ms.unsigned_abs())
        } else {
            Instant::from_nanos(
                origin
                    .as_nanos()
                    .saturating_sub(offset_ms.unsigned_abs().saturating_mul(1_000_000)),
            )
        })
    }

    /// Asks for lost datagrams (RTCP Generic NACKs, see
    /// [`arq`](super::arq)) and holds gaps for their retransmission, when
    /// `enabled`; with a playout delay, only while the delay is at least two
    /// RTTs (a retransmission needs one RTT and must still be in time).
    pub fn with_arq(mut self, enabled: bool) -> ReceiverSession {
        self.arq = enabled;
        self.base_reorder.hold_lost = enabled;
        self.tune();
        self
    }

    /// The stream is played `delay` after its first datagram. A gap before
    /// a datagram with a playout time is waited for until that datagram is
    /// due (the delay after the first datagram's arrival, plus its playout
    /// time less the first's), so that what follows the gap is still in
    /// time however long the gap lasts: a GOP-interleaved stream's GOPs may
    /// come seconds apart (paper 000's start-up delay holds ~6 s of
    /// frames). The reorder buffer's `max_wait` becomes four playout
    /// delays: the bound for datagrams without a playout time and against
    /// playout times far ahead; its byte bound caps the memory.
    pub fn with_playout_delay(mut self, delay: Duration) -> ReceiverSession {
        self.playout_delay = Some(delay);
        self.tune();
        self
    }

    /// A gap is given up `lead` before what follows it is due, not at the
    /// very instant (the default, zero): a player that needs a frame by its
    /// playout time then has the frames held behind the gap a little before
    /// it would run dry, instead of running dry as they come (a player that
    /// rebuffers after running dry stalls for its whole start-up delay).
    /// Retransmissions have `lead` less time to fill the gap.
    pub fn with_playout_lead(mut self, lead: Duration) -> ReceiverSession {
        self.playout_lead = lead;
        self
    }

    /// Whether requests may go out now: ARQ on, and the playout delay (if
    /// any) at least two RTTs.
    fn asking(&self) -> bool {
        self.arq
            && self
                .playout_delay
                .is_none_or(|delay| delay >= 2 * self.rtt.unwrap_or(RTT_BEFORE_SAMPLES))
    }

    /// Sets the reorder buffer's waits from the playout delay and the RTT.
    fn tune(&mut self) {
        let rtt = self.rtt.unwrap_or(RTT_BEFORE_SAMPLES);
        let base = self.base_reorder;
        let max_wait = match self.playout_delay {
            Some(delay) => (delay * 4).max(rtt),
            None => base.max_wait,
        };
        let hold = self.asking();
        let mut config = *self.reorder.config();
        config.max_wait = max_wait;
        config.lane_timeout = base.lane_timeout.max(8 * rtt);
        config.hold_lost = hold;
        config.late_grace = if hold { 3 * rtt } else { Duration::ZERO };
        if config != *self.reorder.config() {
            self.reorder.set_max_wait(config.max_wait);
            self.reorder.set_lane_timeout(config.lane_timeout);
            self.reorder.set_hold_lost(config.hold_lost);
            self.reorder.set_late_grace(config.late_grace);
        }
    }

    /// The endpoint (for the connections' statistics).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Counters.
    pub fn stats(&self) -> ReceiverSessionStats {
        ReceiverSessionStats {
            malformed: self.malformed,
            reorder: self.reorder.stats(),
            arq: self.naks.stats,
        }
    }

    /// A datagram from the sender; `iss` is used if it opens a connection.
    /// The same as [`handle_datagram_ecn`](Self::handle_datagram_ecn) with
    /// Not-ECT.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8], iss: u64) {
        self.handle_datagram_ecn(now, bytes, Ecn::NotEct, iss);
    }

    /// A datagram from the sender that arrived with the ECN codepoint `ecn`
    /// (RFC 3168 §5; a Congestion Experienced mark counts as a loss in the
    /// connection's loss history, RFC 4342 §9).
    pub fn handle_datagram_ecn(&mut self, now: Instant, bytes: &[u8], ecn: Ecn, iss: u64) {
        self.handle_datagram_from(now, bytes, ecn, iss, &[]);
    }

    /// [`handle_datagram_ecn`](Self::handle_datagram_ecn) for a datagram
    /// from the network address `source` (with [`use_cookies`](Self::use_cookies),
    /// a connection opens only for the address its cookie was sent to).
    pub fn handle_datagram_from(
        &mut self,
        now: Instant,
        bytes: &[u8],
        ecn: Ecn,
        iss: u64,
        source: &[u8],
    ) {
        if let Some(id) = self
            .endpoint
            .handle_datagram_from(now, bytes, ecn, iss, source)
        {
            self.collect(now, id);
        }
    }

    /// Stateless handshakes from now on: Requests are answered with Init
    /// Cookies and no state is kept until a sender echoes one from its
    /// address (RFC 4340 §8.1.4; [`EndpointConfig::cookies`]).
    pub fn use_cookies(&mut self, cookies: CookieConfig) {
        self.endpoint.set_cookies(Some(cookies));
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.endpoint.poll_timeout().is_some_and(|t| t <= now) {
            self.endpoint.handle_timeout(now);
        }
        self.reorder.handle_timeout(now);
        if self.settle_check.is_some_and(|at| at <= now) {
            self.settle_check = None;
        }
        self.after_reorder(now);
    }

    /// The next packet to send (feedback, handshake).
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.endpoint.poll_transmit(now, buf).map(|(_, t)| t)
    }

    /// [`poll_transmit`](Self::poll_transmit) with the connection the
    /// packet belongs to (`None` for the endpoint's own answers, such as a
    /// Reset to a stray packet): a driver serving a bonded sender sends
    /// each connection's packets back on the path it came by.
    pub fn poll_transmit_for(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<(Option<ConnectionId>, Transmit)> {
        self.endpoint.poll_transmit(now, buf)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let repeat = if self.asking() {
            self.naks
                .next_repeat(self.rtt.unwrap_or(RTT_BEFORE_SAMPLES))
        } else {
            None
        };
        [
            self.endpoint.poll_timeout(),
            self.reorder.poll_timeout(),
            repeat,
            self.settle_check.filter(|_| self.asking()),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Starts an orderly close of every connection (RFC 4340 §8.3: a
    /// server sends CloseReq, so that the sender closes and holds
    /// TIMEWAIT); a connection still in its handshake is reset.
    pub fn close(&mut self, now: Instant) {
        let ids: Vec<ConnectionId> = self.endpoint.connection_ids().collect();
        for id in ids {
            if let Some(conn) = self.endpoint.connection_mut(id) {
                conn.close(now);
            }
        }
    }

    /// The stream has ended (every connection closed): gives up every gap
    /// still waited for and releases what is held, for
    /// [`recv`](Self::recv).
    pub fn flush(&mut self, now: Instant) {
        self.reorder.flush(now);
        self.after_reorder(now);
    }

    /// The next datagram of the stream, in order, without the session
    /// header.
    pub fn recv(&mut self) -> Option<Vec<u8>> {
        self.reorder.pop()
    }

    /// Gives back a buffer [`recv`](Self::recv) returned, once read, to
    /// carry a later datagram: a connection keeps a few (the one that
    /// delivered last, as most datagrams come on it), and frees the rest.
    pub fn recycle(&mut self, buffer: Vec<u8>) {
        if let Some(conn) = self
            .last_lane
            .and_then(|id| self.endpoint.connection_mut(id))
        {
            conn.recycle(buffer);
        }
    }

    /// Sends an application's report (an RTCP packet, RFC 5762 §4, such as
    /// paper 004's [`BufferReport`](crate::wire::rtcp::BufferReport)) back
    /// to the sender, as the session sends its NACKs: on the connection
    /// that delivered last, or another open one, paced by that
    /// connection's CCID. The sender's session hands it to its application
    /// ([`SenderSession::poll_report`](super::SenderSession::poll_report)).
    /// [`SendError::NotOpen`] when no connection is open.
    pub fn send_report(&mut self, now: Instant, report: &[u8]) -> Result<(), SendError> {
        let conn = self
            .back_lane()
            .and_then(|id| self.endpoint.connection_mut(id))
            .ok_or(SendError::NotOpen(State::Closed))?;
        conn.send(now, report)
    }

    /// The connection what goes back to the sender takes: the one that
    /// delivered last, if it is open, else any open one.
    fn back_lane(&self) -> Option<ConnectionId> {
        let open = |id: &ConnectionId| {
            self.endpoint
                .connection(*id)
                .is_some_and(|c| c.state() == State::Open)
        };
        self.last_lane
            .filter(open)
            .or_else(|| self.endpoint.connection_ids().find(open))
    }

    fn collect(&mut self, now: Instant, id: ConnectionId) {
        while self.endpoint.poll_event().is_some() {}
        let Some(conn) = self.endpoint.connection_mut(id) else {
            return;
        };
        let mut datagrams = std::mem::take(&mut self.arrived);
        while let Some(datagram) = conn.recv() {
            datagrams.push(datagram);
        }
        let rtt = conn.tfrc_receiver().and_then(|r| r.rtt()).or(conn.rtt());
        for mut datagram in datagrams.drain(..) {
            let Some((header, len)) = SessionHeader::parse(&datagram) else {
                self.malformed += 1;
                continue;
            };
            let deadline = self.deadline(now, header.playout_ms);
            // The payload moves to the front of its own buffer: no copy to
            // a new one.
            datagram.drain(..len);
            if let Some(extended) =
                self.reorder
                    .push_timed(now, id.remote_port, header.seq, datagram, deadline)
            {
                self.naks.arrived(extended);
                self.highest = Some(self.highest.map_or(extended, |h| h.max(extended)));
                if let Some(tag) = header.fec {
                    self.count_fec(extended, tag);
                }
            }
            self.last_lane = Some(id);
            if self.reorder.held() > 0 {
                self.settle_check = Some(now + self.settle());
            }
        }
        self.arrived = datagrams;
        if let Some(rtt) = rtt {
            self.rtt = Some(rtt);
            self.tune();
        }
        self.after_reorder(now);
    }

    /// Forgets requests the reorder buffer is past, and asks for what is
    /// certainly lost.
    fn after_reorder(&mut self, now: Instant) {
        if let Some(next) = self.reorder.next_expected() {
            self.naks.released_below(next);
        }
        if !self.asking() {
            return;
        }
        let rtt = self.rtt.unwrap_or(RTT_BEFORE_SAMPLES);
        let certain = self
            .reorder
            .certain_gaps(now, MAX_REQUESTS_PER_ROUND, self.settle());
        // FEC and ARQ together: what FEC will rebuild is not asked for.
        let mut gaps = Vec::with_capacity(certain.len());
        for gap in certain {
            match self.fec_verdict(now, gap) {
                FecVerdict::Ask => gaps.push(gap),
                FecVerdict::Forgo => {
                    self.naks.stats.left_to_fec += 1;
                    self.reorder.forgo(now, gap);
                }
                FecVerdict::Wait => {}
            }
        }
        if let Some(next) = self.reorder.next_expected() {
            while self
                .fec_blocks
                .first_key_value()
                .is_some_and(|(start, (tag, _))| start + u64::from(tag.n) <= next)
            {
                self.fec_blocks.pop_first();
            }
        }
        let due = self.naks.due(now, &gaps, rtt);
        if due.is_empty() {
            return;
        }
        let Some(conn) = self
            .back_lane()
            .and_then(|id| self.endpoint.connection_mut(id))
        else {
            return;
        };
        // The connection paces what it sends back by its own CCID (RFC 5762
        // §4: RTCP over DCCP is congestion controlled): a NACK still queued
        // is stale by now and is replaced by one naming every gap still
        // asked for, so that no burst of stale NACKs arrives later and
        // makes the sender resend what already came.
        let naks = &self.naks;
        let due: Vec<u64> = if conn.discard_send_queue() > 0 {
            gaps.iter()
                .copied()
                .filter(|seq| naks.is_asked(*seq))
                .collect()
        } else {
            due
        };
        let max = conn.max_payload();
        let mut lost: Vec<u16> = due.iter().map(|seq| *seq as u16).collect();
        while !lost.is_empty() {
            let nack = GenericNack {
                sender_ssrc: 0,
                media_ssrc: SESSION_SSRC,
                lost: std::mem::take(&mut lost),
            };
            let part = nack.truncated_to(max);
            if part.lost.is_empty() {
                break;
            }
            lost = nack.lost[part.lost.len()..].to_vec();
            match part.emit(max) {
                Ok(bytes) if conn.send(now, &bytes).is_ok() => self.naks.stats.nacks_sent += 1,
                _ => break,
            }
        }
    }
}
