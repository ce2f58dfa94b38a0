//! Receiving packets and timeouts: RFC 4340 §8.5's pseudocode, step by step.

use super::ccid::{FeedbackUse, PeerPacket, ReceivedPacket};
use super::connection::{Connection, Control};
use super::event::Event;
use super::state::{Role, State};
use super::timers::Timer;
use crate::ecn::Ecn;
use crate::time::Instant;
use crate::wire::dccp::{DccpRepr, PacketKind, PacketType, ResetCode, SeqNum};
use crate::wire::options::{kind, DccpOption, Feature};

/// The most Init Cookies a client keeps from a Response and echoes.
const MAX_INIT_COOKIES: usize = 2;

/// RFC 4340 §8.5: a Reset answering packet P where there is no connection
/// has "R.seqno := P.ackno + 1" if P has an acknowledgement number, else 0,
/// and "R.ackno := P.seqno".
pub(crate) fn no_connection_numbers(packet: &DccpRepr<'_>) -> (SeqNum, SeqNum) {
    let seq = packet.kind.ack().map_or(SeqNum::ZERO, |ack| ack + 1);
    (seq, packet.seq)
}

impl Connection {
    /// Processes one datagram addressed to this connection. Never panics;
    /// malformed packets are counted and dropped, invalid ones answered as
    /// RFC 4340 §8.5 says (a Sync, or a Reset).
    ///
    /// The same as [`handle_datagram_ecn`](Self::handle_datagram_ecn) with
    /// Not-ECT, for drivers that cannot read the ECN field.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        self.handle_datagram_ecn(now, bytes, Ecn::NotEct);
    }

    /// [`handle_datagram`](Self::handle_datagram) for a datagram that
    /// arrived with the ECN codepoint `ecn` in its IP header (RFC 3168 §5).
    ///
    /// RFC 4340 §12: a DCCP-Data or DCCP-DataAck marked Congestion
    /// Experienced is congestion for the peer's sending CCID — CCID 3 and 4
    /// count it in the loss history like a lost packet (RFC 4342 §9, RFC
    /// 5348 §5), CCID 2 reports it as Ack Vector state 1 (RFC 4341 §5) —
    /// and its data is delivered all the same. Marks count only while ECN is
    /// agreed ([`ConnectionConfig::ecn`](super::ConnectionConfig::ecn)); on
    /// other packets the codepoint is ignored.
    pub fn handle_datagram_ecn(&mut self, now: Instant, bytes: &[u8], ecn: Ecn) {
        self.process(now, bytes, ecn);
        self.refresh_timers();
    }

    /// Acts on every timer due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        // At most one of each timer: a fixed list, no allocation.
        let mut expired = [None; Timer::ALL.len()];
        for (slot, timer) in expired.iter_mut().zip(self.timers.expired(now)) {
            *slot = Some(timer);
        }
        for timer in expired.into_iter().flatten() {
            self.timers.stop(timer);
            match timer {
                Timer::Retransmit => self.on_retransmit_timer(now),
                Timer::GiveUp => self.on_give_up(now),
                Timer::CcidSender => {
                    if let Some(tx) = &mut self.tx {
                        tx.on_timeout(now);
                    }
                }
                Timer::FeatureRetransmit => {
                    // RFC 4340 §6.6.3: Change options are retransmitted until
                    // confirmed; the timer restarts when the Ack leaves.
                    if self.features.has_pending_changes() {
                        self.due.ack = true;
                        self.feature_interval = self
                            .feature_interval
                            .saturating_mul(2)
                            .min(self.config.max_retransmit_interval);
                    }
                }
                Timer::TimeWait => {
                    self.state = State::Closed;
                    self.timers.stop_all();
                }
                // Pacing and the receiver's feedback act in poll_transmit.
                Timer::Pacing | Timer::CcidReceiver | Timer::SyncRateLimit => {}
            }
        }
        self.refresh_timers();
    }

    fn backoff(&mut self) {
        self.retransmit_interval = self
            .retransmit_interval
            .saturating_mul(2)
            .min(self.config.max_retransmit_interval);
    }

    fn on_retransmit_timer(&mut self, now: Instant) {
        match self.state {
            State::Request => self.due.request = true,
            // RFC 4340 §8.1.5: "If this timer goes off and the client is
            // still in PARTOPEN, the client generates another DCCP-Ack and
            // backs off the timer." (The Ack sets the timer again.)
            State::PartOpen => {
                self.due.ack = true;
                self.backoff();
                return;
            }
            State::Closing => self.due.close = true,
            State::CloseReq => self.due.close_req = true,
            _ => return,
        }
        // RFC 4340 §8.1.1 (Requests) and §8.3 (Close, CloseReq):
        // exponential backoff.
        self.backoff();
        self.timers
            .set(Timer::Retransmit, Some(now + self.retransmit_interval));
    }

    fn on_give_up(&mut self, now: Instant) {
        match self.state {
            State::Request | State::Respond | State::PartOpen => {
                // RFC 4340 §8.1.1: a client that gives up "SHOULD send a
                // DCCP-Reset packet to the server with Reset Code 2,
                // "Aborted""; §8.1.5 likewise for PARTOPEN.
                self.events.push_back(Event::HandshakeTimeout);
                self.push_control(Control::Reset {
                    code: ResetCode::Aborted,
                    data: [0; 3],
                    seq: None,
                    ack: self.gsr_wire(),
                });
                self.enter_closed();
            }
            State::Closing | State::CloseReq => {
                // The peer never answered the close: nothing more to do.
                self.events.push_back(Event::Closed);
                self.enter_closed();
            }
            _ => {}
        }
        let _ = now;
    }

    /// Queues a Sync unless one left less than the rate limit ago (RFC 4340
    /// §7.5.4).
    fn sync_rate_limited(&mut self, now: Instant, ack: SeqNum) {
        if self
            .timers
            .get(Timer::SyncRateLimit)
            .is_some_and(|until| now < until)
        {
            self.stats.syncs_suppressed += 1;
            return;
        }
        self.timers.set(
            Timer::SyncRateLimit,
            Some(now + self.config.sync_rate_limit),
        );
        self.push_control(Control::Sync { ack });
    }

    /// Whether an option after Mandatory is understood (RFC 4340 §5.8.2):
    /// options this implementation acts on, with CCID-specific ones (§10.3:
    /// 128-191 sent by the HC-Sender, 192-255 by the HC-Receiver) only
    /// under the CCID that defines them.
    fn understands(&self, option: &DccpOption) -> bool {
        if let Some(feature) = option.feature() {
            return !matches!(feature, Feature::Unknown { .. });
        }
        match option.kind() {
            0..=127 => option.is_understood(),
            kind::LOSS_EVENT_RATE | kind::LOSS_INTERVALS | kind::RECEIVE_RATE => self
                .features
                .ccids()
                .is_some_and(|(tx, _)| tx.has_tfrc_feedback()),
            _ => false,
        }
    }

    fn process(&mut self, now: Instant, bytes: &[u8], ecn: Ecn) {
        if self.state == State::Closed {
            self.stats.other_dropped += 1;
            return;
        }
        // Step 1: check the header generic area (type, X, Data Offset, CsCov,
        // checksum), and the options.
        let Ok(packet) = DccpRepr::parse_bytes(bytes, &self.receive_context) else {
            self.stats.malformed_dropped += 1;
            return;
        };
        if packet.src_port != self.remote_port || packet.dst_port != self.local_port {
            self.stats.other_dropped += 1;
            return;
        }
        let packet_type = packet.kind.packet_type();
        // Step 2: "If no socket, or S.state == TIMEWAIT, Generate Reset(No
        // Connection) unless P.type == Reset; Drop packet and return".
        if self.state == State::TimeWait {
            self.stats.other_dropped += 1;
            if packet_type != PacketType::Reset {
                let (seq, ack) = no_connection_numbers(&packet);
                self.push_control(Control::Reset {
                    code: ResetCode::NoConnection,
                    data: [0; 3],
                    seq: Some(seq),
                    ack,
                });
            }
            return;
        }
        // Step 6 (first test, done early): "If P.X == 0 and the relevant
        // Allow Short Seqnos feature is 0, Drop packet and return". Short
        // sequence numbers are never allowed here.
        if packet.short_seqno {
            self.stats.other_dropped += 1;
            return;
        }
        // Step 4: prepare sequence numbers in REQUEST.
        if self.state == State::Request {
            let ack_valid = packet
                .kind
                .ack()
                .and_then(|ack| self.seq.extend_ack(ack))
                .is_some_and(|ack| self.seq.ack_in_window(ack));
            if matches!(packet_type, PacketType::Response | PacketType::Reset) && ack_valid {
                // "Set S.GSR, S.ISR, S.SWL, S.SWH".
                self.seq.set_isr(packet.seq);
            } else {
                // "Only Response and Reset are valid in REQUEST state":
                // "Generate Reset(Packet Error); Drop packet and return". The
                // connection stays: a blind attacker cannot end it this way.
                self.stats.invalid_dropped += 1;
                self.push_control(Control::Reset {
                    code: ResetCode::PacketError,
                    data: [0; 3],
                    seq: None,
                    ack: packet.seq,
                });
                return;
            }
        }
        // Numbers that cannot be extended lie far outside every window; zero
        // is below every valid extended number.
        let seq = self.seq.extend_received(packet.seq).unwrap_or(0);
        let ack = packet
            .kind
            .ack()
            .map(|wire| (wire, self.seq.extend_ack(wire).unwrap_or(0)));
        let ack_extended = ack.map(|(_, a)| a);
        // Step 4 checked the acknowledgement number of a packet in REQUEST
        // and set GSR from it; as in Linux, Step 6 is not applied to it
        // (a Reset would fail Step 6's "S.GSR + 1 <= P.seqno" against the GSR
        // it just set).
        let checked_by_step_4 = self.state == State::Request;
        // Step 5: prepare sequence numbers for Sync.
        if !checked_by_step_4 && matches!(packet_type, PacketType::Sync | PacketType::SyncAck) {
            let ack_value = ack_extended.unwrap_or(0);
            if self.seq.sync_is_valid(seq, ack_value) {
                // "Update S.GSR, S.SWL, S.SWH".
                self.seq.on_valid(seq, Some(ack_value), true);
            } else {
                self.stats.invalid_dropped += 1;
                return;
            }
        }
        // Step 6: check sequence numbers.
        if !checked_by_step_4 && !self.seq.is_valid(packet_type, seq, ack_extended) {
            self.stats.invalid_dropped += 1;
            // "If P.type == Reset, Send Sync packet acknowledging S.GSR;
            // Otherwise, Send Sync packet acknowledging P.seqno".
            let sync_ack = if packet_type == PacketType::Reset {
                self.gsr_wire()
            } else {
                packet.seq
            };
            self.sync_rate_limited(now, sync_ack);
            return;
        }
        // "Update S.GSR, S.SWL, S.SWH; If P.type != Sync, Update S.GAR".
        self.seq
            .on_valid(seq, ack_extended, packet_type == PacketType::Sync);
        self.stats.packets_received += 1;
        self.stats.bytes_received += bytes.len() as u64;
        // Step 7: check for unexpected packet types: "If (S.is_server and
        // P.type == CloseReq) or (S.is_server and P.type == Response) or
        // (S.is_client and P.type == Request) or (S.state >= OPEN and P.type
        // == Request and P.seqno >= S.OSR) or (S.state >= OPEN and P.type ==
        // Response and P.seqno >= S.OSR) or (S.state == RESPOND and P.type ==
        // Data)".
        let wrong_role = match self.role {
            Role::Server => matches!(packet_type, PacketType::CloseReq | PacketType::Response),
            Role::Client => packet_type == PacketType::Request,
        };
        let after_osr = self.seq.osr().is_some_and(|osr| seq >= osr);
        let late_handshake = self.state >= State::Open
            && matches!(packet_type, PacketType::Request | PacketType::Response)
            && after_osr;
        let data_in_respond = self.state == State::Respond && packet_type == PacketType::Data;
        let unexpected = wrong_role || late_handshake || data_in_respond;
        if unexpected {
            // "Send Sync packet acknowledging P.seqno; Drop packet and return".
            self.stats.invalid_dropped += 1;
            self.sync_rate_limited(now, packet.seq);
            return;
        }
        // Step 8: process options and mark acknowledgeable.
        if let Err(error) = packet.options.check_mandatory(|o| self.understands(o)) {
            self.reset_and_close(now, error.reset_code(), error.reset_data(), None);
            return;
        }
        let negotiated = match (self.state, packet_type) {
            (State::Request, PacketType::Response) => self.features.on_response(&packet.options),
            // A Reset in REQUEST ends the attempt whatever it carries.
            (State::Request, _) => Ok(()),
            _ => self.features.on_options(&packet.options),
        };
        if let Err(failure) = negotiated {
            self.reset_and_close(now, failure.code, failure.data, None);
            return;
        }
        if let Some(window) = self.features.peer_window() {
            self.seq.set_peer_window(window);
        }
        if self.state == State::Request && packet_type == PacketType::Response {
            // RFC 4340 §8.1.4: the client echoes the server's Init Cookies
            // until it leaves PARTOPEN. At most MAX_INIT_COOKIES of them
            // (each at most 253 bytes): a server needs one.
            self.init_cookies = packet
                .options
                .iter()
                .filter_map(|option| match option {
                    DccpOption::InitCookie(cookie) => Some(cookie.clone()),
                    _ => None,
                })
                .take(MAX_INIT_COOKIES)
                .collect();
            // The handshake RTT: the Response acknowledges one particular
            // Request, so the sample is exact even after retransmissions.
            self.handshake_rtt = ack_extended
                .and_then(|a| self.sent.get(a))
                .map(|record| now.saturating_duration_since(record.at));
            self.start_ccids(now);
        }
        self.ccid_input(now, &packet, seq, ack, ecn);
        // Step 9: process Reset.
        if let PacketKind::Reset { code, data, .. } = packet.kind {
            // "Tear down connection; S.state := TIMEWAIT; Set TIMEWAIT timer".
            self.stats.resets_received += 1;
            let orderly = matches!(self.state, State::Closing | State::CloseReq)
                && matches!(code, ResetCode::Closed | ResetCode::NoConnection);
            self.events.push_back(if orderly {
                Event::Closed
            } else {
                Event::Reset {
                    code,
                    data,
                    by_peer: true,
                }
            });
            self.enter_time_wait(now);
            return;
        }
        // Step 10: process REQUEST state (second part): "S.state :=
        // PARTOPEN; Set PARTOPEN timer; Continue with S.state == PARTOPEN".
        if self.state == State::Request {
            self.state = State::PartOpen;
            self.retransmit_interval = self.config.partopen_ack_interval;
            self.timers
                .set(Timer::Retransmit, Some(now + self.retransmit_interval));
            // RFC 4340 §8.1.5 bounds PARTOPEN (4MSL); the handshake timeout
            // stands in for it.
            self.timers
                .set(Timer::GiveUp, Some(now + self.config.handshake_timeout));
            self.push_connected();
        }
        // Step 11: process RESPOND state.
        if self.state == State::Respond {
            if packet_type == PacketType::Request {
                // "Send Response".
                self.due.response = true;
            } else {
                // "Otherwise, S.state := OPEN".
                self.state = State::Open;
                self.timers.stop(Timer::GiveUp);
                self.handshake_rtt = ack_extended
                    .and_then(|a| self.sent.get(a))
                    .map(|record| now.saturating_duration_since(record.at));
                if let (Some(tx), Some(rtt)) = (&mut self.tx, self.handshake_rtt) {
                    tx.set_handshake_rtt(now, rtt);
                }
                // One Ack so that the client leaves PARTOPEN even when the
                // server has nothing to send (any packet but Response, Reset
                // and Sync does it, §8.1.5).
                self.due.ack = true;
                self.push_connected();
            }
        }
        // Step 12: process PARTOPEN state.
        if self.state == State::PartOpen {
            if packet_type == PacketType::Response {
                // "If P.type == Response, Send Ack".
                self.due.ack = true;
            } else if packet_type != PacketType::Sync {
                // "Otherwise, if P.type != Sync, S.state := OPEN".
                self.state = State::Open;
                self.timers.stop(Timer::Retransmit);
                self.timers.stop(Timer::GiveUp);
            }
        }
        if self.state >= State::Open {
            self.seq.note_open_packet(seq);
        }
        // Step 13: "If P.type == CloseReq and S.state < CLOSEREQ, Generate
        // Close; S.state := CLOSING; Set CLOSING timer".
        if packet_type == PacketType::CloseReq && self.state < State::CloseReq {
            self.start_close(now);
        }
        // Step 14: "If P.type == Close, Generate Reset(Closed); Tear down
        // connection; Drop packet and return".
        if packet_type == PacketType::Close {
            self.events.push_back(Event::Closed);
            self.reset_and_close(now, ResetCode::Closed, [0; 3], None);
            return;
        }
        // Step 15: "If P.type == Sync, Generate SyncAck".
        if packet_type == PacketType::Sync {
            self.push_control(Control::SyncAck { ack: packet.seq });
        }
        // Step 16: process data. Data on Request and Response is not
        // delivered (this implementation never sends any).
        let carries_data = matches!(packet_type, PacketType::Data | PacketType::DataAck);
        if carries_data
            && matches!(
                self.state,
                State::PartOpen | State::Open | State::CloseReq | State::Closing
            )
        {
            self.deliver(packet.payload);
        }
    }

    fn push_connected(&mut self) {
        if let Some((ccid, peer_ccid)) = self.features.ccids() {
            self.events.push_back(Event::Connected { ccid, peer_ccid });
        }
    }

    /// Step 8's "Mark packet as acknowledgeable", and the CCIDs' view of
    /// the packet: the receiving CCID records it, the sending CCID takes
    /// its feedback.
    fn ccid_input(
        &mut self,
        now: Instant,
        packet: &DccpRepr<'_>,
        seq: u64,
        ack: Option<(SeqNum, u64)>,
        ecn: Ecn,
    ) {
        let packet_type = packet.kind.packet_type();
        let carries_data = matches!(packet_type, PacketType::Data | PacketType::DataAck);
        let ack_ratio = self.features.ack_ratio();
        // RFC 4340 §12.1: marks mean something only while ECN is agreed (an
        // ECN-incapable endpoint does not read them).
        let ce_marked = ecn.is_ce() && self.features.ecn_permitted();
        if ce_marked && carries_data {
            self.stats.ce_marked_received += 1;
        }
        if let Some(rx) = &mut self.rx {
            rx.on_packet(
                now,
                &ReceivedPacket {
                    seq,
                    is_data: carries_data,
                    size: packet.payload.len(),
                    ccval: packet.ccval,
                    ndp: packet.options.ndp_count(),
                    ce_marked,
                },
                ack_ratio,
            );
            if let Some((_, acked)) = ack {
                rx.on_ack(acked);
            }
        }
        if let Some(tx) = &mut self.tx {
            let peer = PeerPacket {
                seq,
                ack,
                carries_data,
                ce_marked,
                options: &packet.options,
            };
            match tx.on_peer_packet(now, &peer, &self.sent) {
                FeedbackUse::Used => self.stats.feedback_received += 1,
                FeedbackUse::Ignored => self.stats.feedback_ignored += 1,
                FeedbackUse::None => {}
            }
        }
    }

    /// Hands data to the application; a full queue drops its oldest.
    fn deliver(&mut self, payload: &[u8]) {
        if self.recv_queue.len() >= self.config.recv_queue_packets.max(1) {
            self.recv_queue.pop_front();
            self.stats.recv_queue_dropped += 1;
            self.recv_dropped_unreported += 1;
        }
        let copy = self.recv_buffers.copy_of(payload);
        self.recv_queue.push_back(copy);
        self.stats.data_packets_received += 1;
        self.stats.data_bytes_received += payload.len() as u64;
    }
}
