//! Writing packets: [`Connection::poll_transmit`] and the packet builders.

use super::connection::{Connection, Control};
use super::event::Transmit;
use super::history::SentRecord;
use super::seqwin::SequenceState;
use super::state::{Role, State};
use super::timers::Timer;
use crate::buffers::Payload;
use crate::cc::SendPermission;
use crate::ecn::Ecn;
use crate::time::Instant;
use crate::wire::dccp::{DccpRepr, Packet, PacketKind, PacketType, SeqNum, MAX_HEADER_LEN};
use crate::wire::options::{DccpOption, Options};

/// A Request's header before its options (RFC 4340 §5.1, §5.2): the generic
/// header with 48-bit sequence numbers (16 bytes) and the Service Code (4).
const REQUEST_HEADER_LEN: usize = 20;

impl Connection {
    /// Writes the next packet to send into `buf` (cleared first) and
    /// describes it; `None` when nothing is due. Call until `None` after
    /// every input and command.
    ///
    /// Priority: Resets, Syncs and SyncAcks; the handshake packet of the
    /// state (Request, Response); Close or CloseReq; an Ack with feedback or
    /// feature options; then application data, as the sending CCID allows.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        buf.clear();
        if let Some(control) = self.control.pop_front() {
            return self.send_control(now, buf, control);
        }
        let transmit = match self.state {
            State::Closed | State::TimeWait => None,
            State::Request => self.poll_request(now, buf),
            State::Respond => self.poll_response(now, buf),
            _ => self
                .poll_close(now, buf)
                .or_else(|| self.poll_ack(now, buf))
                .or_else(|| self.poll_data(now, buf)),
        };
        self.refresh_timers();
        transmit
    }

    fn poll_request(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        if !std::mem::take(&mut self.due.request) {
            return None;
        }
        // RFC 4340 §8.1.1: "Each new DCCP-Request MUST increment the Sequence
        // Number by one and MUST contain the same Service Code and
        // application data as the original DCCP-Request."
        let kind = PacketKind::Request {
            service_code: self.config.service_code,
        };
        let mut options = self.features.take_options();
        // Padding to `request_min_len` (RFC 4340 §5.8.1: Padding options
        // may appear anywhere), so that a server with Init Cookies may
        // answer; within the options area's limit.
        let encoded: usize =
            Options::from_options(options.iter().cloned()).map_or(0, |o| o.encoded_len());
        let header = REQUEST_HEADER_LEN + encoded;
        let padding = self
            .config
            .request_min_len
            .saturating_sub(header)
            .min(MAX_HEADER_LEN.saturating_sub(header));
        options.extend(std::iter::repeat_n(DccpOption::Padding, padding));
        let data = self.config.request_data.clone();
        self.transmit(now, buf, kind, options, &data)
    }

    fn poll_response(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        if !std::mem::take(&mut self.due.response) {
            return None;
        }
        let kind = PacketKind::Response {
            ack: self.gsr_wire(),
            service_code: self.config.service_code,
        };
        let options = self.response_options.clone();
        self.transmit(now, buf, kind, options, &[])
    }

    fn poll_close(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let ack = self.gsr_wire();
        if std::mem::take(&mut self.due.close) {
            return self.transmit(now, buf, PacketKind::Close { ack }, Vec::new(), &[]);
        }
        if std::mem::take(&mut self.due.close_req) {
            return self.transmit(now, buf, PacketKind::CloseReq { ack }, Vec::new(), &[]);
        }
        None
    }

    /// An Ack when one is due: CCID feedback, a handshake acknowledgement,
    /// Confirms, or new Changes.
    fn poll_ack(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let feedback = self.rx.as_mut().and_then(|rx| rx.poll_feedback(now));
        if let Some(ratio) = self.tx.as_mut().and_then(|tx| tx.take_ack_ratio_change()) {
            // RFC 4341 §6.1.2 via RFC 4340 §11.3: the CCID 2 sender announces
            // the Ack Ratio with Change L(Ack Ratio).
            self.features.change_ack_ratio(ratio);
            self.due.ack = true;
        }
        let needed = feedback.is_some() || self.due.ack || self.features.has_confirms();
        if !needed {
            return None;
        }
        self.due.ack = false;
        let mut options = self.features.take_options();
        if self.state == State::PartOpen && self.role == Role::Client {
            // RFC 4340 §8.1.4: the Init Cookies go back on the Acks of
            // PARTOPEN.
            options.extend(
                self.init_cookies
                    .iter()
                    .cloned()
                    .map(DccpOption::InitCookie),
            );
        }
        if self.features.has_pending_changes() {
            if self.timers.get(Timer::FeatureRetransmit).is_none() {
                self.timers
                    .set(Timer::FeatureRetransmit, Some(now + self.feature_interval));
            }
        } else {
            self.timers.stop(Timer::FeatureRetransmit);
            self.feature_interval = self.config.initial_retransmit;
        }
        let has_feedback = feedback.is_some();
        options.extend(feedback.unwrap_or_default());
        let kind = PacketKind::Ack {
            ack: self.gsr_wire(),
        };
        let transmit = self.transmit(now, buf, kind, options, &[])?;
        if has_feedback {
            if let Some(rx) = &mut self.rx {
                rx.on_feedback_sent(self.seq.gss());
            }
        }
        Some(transmit)
    }

    /// Application data, if the state and the sending CCID allow it.
    fn poll_data(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        // RFC 4340 §8.1.5: in PARTOPEN the client may send data, on
        // DataAck; the server sends data once OPEN.
        // A client that must echo an Init Cookie holds its data until OPEN
        // (one RTT): the cookie would not fit beside a full-size payload,
        // and a DataAck without it would find no connection at a stateless
        // server.
        let may_send = self.state == State::Open
            || (self.state == State::PartOpen
                && self.role == Role::Client
                && self.init_cookies.is_empty());
        if !may_send {
            return None;
        }
        let Some(size) = self.send_queue.front().map(|p| p.bytes().len()) else {
            if let Some(tx) = &mut self.tx {
                tx.on_application_limited(now);
            }
            self.timers.stop(Timer::Pacing);
            if self.close_after_drain {
                self.start_close(now);
                return self.poll_close(now, buf);
            }
            return None;
        };
        let tx = self.tx.as_mut()?;
        match tx.permission(now, size) {
            SendPermission::Now => self.timers.stop(Timer::Pacing),
            SendPermission::At(at) => {
                self.timers.set(Timer::Pacing, Some(at));
                return None;
            }
            SendPermission::WindowFull => {
                self.timers.stop(Timer::Pacing);
                return None;
            }
        }
        let payload = self.send_queue.pop_front()?;
        // Acknowledge what arrived since the last acknowledgement by
        // piggybacking on DataAck; PARTOPEN requires an acknowledgement on
        // every packet (RFC 4340 §8.1.5).
        let unacknowledged = self
            .seq
            .gsr()
            .is_some_and(|gsr| self.last_ack_sent.is_none_or(|last| gsr > last));
        let kind = if self.state == State::PartOpen || unacknowledged {
            PacketKind::DataAck {
                ack: self.gsr_wire(),
            }
        } else {
            PacketKind::Data
        };
        let transmit = self.transmit(now, buf, kind, Vec::new(), payload.bytes());
        // A shared payload stays with the session that keeps it.
        if let Payload::Owned(payload) = payload {
            self.send_buffers.give(payload);
        }
        transmit
    }

    fn send_control(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        control: Control,
    ) -> Option<Transmit> {
        match control {
            Control::Reset {
                code,
                data,
                seq: Some(seq),
                ack,
            } => {
                // A Reset for a packet without a connection: its numbers come
                // from that packet, and it uses none of this connection's.
                let kind = PacketKind::Reset { ack, code, data };
                self.write(buf, seq, 0, kind, &[], &[])
            }
            Control::Reset {
                code,
                data,
                seq: None,
                ack,
            } => self.transmit(
                now,
                buf,
                PacketKind::Reset { ack, code, data },
                Vec::new(),
                &[],
            ),
            Control::Sync { ack } => {
                self.transmit(now, buf, PacketKind::Sync { ack }, Vec::new(), &[])
            }
            Control::SyncAck { ack } => {
                self.transmit(now, buf, PacketKind::SyncAck { ack }, Vec::new(), &[])
            }
        }
    }

    /// Sends a packet with the connection's next sequence number: records it
    /// for RTT samples, runs the CCID's per-packet bookkeeping for data, and
    /// adds NDP Count after non-data packets (RFC 4340 §7.7).
    pub(crate) fn transmit(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        kind: PacketKind,
        mut options: Vec<DccpOption>,
        payload: &[u8],
    ) -> Option<Transmit> {
        let packet_type = kind.packet_type();
        let data = matches!(packet_type, PacketType::Data | PacketType::DataAck);
        if self.nondata_run > 0
            && matches!(
                packet_type,
                PacketType::Data | PacketType::DataAck | PacketType::Ack
            )
        {
            options.insert(0, DccpOption::NdpCount(self.nondata_run.min((1 << 48) - 1)));
        }
        let seq = self.seq.next();
        let ccval = match (&mut self.tx, data) {
            (Some(tx), true) => tx.on_data_sent(now, seq, payload.len()),
            _ => 0,
        };
        let transmit = self.write(
            buf,
            SequenceState::wire(seq),
            ccval,
            kind,
            &options,
            payload,
        )?;
        self.sent.push(SentRecord {
            seq,
            at: now,
            ccval,
            data,
        });
        self.nondata_run = if data {
            0
        } else {
            self.nondata_run.saturating_add(1)
        };
        if matches!(self.state, State::PartOpen | State::Open) {
            self.size_sequence_window(now);
        }
        if kind.ack().is_some() {
            self.last_ack_sent = self.seq.gsr();
        }
        if self.state == State::PartOpen {
            // RFC 4340 §8.1.5: the PARTOPEN timer is "set every time a
            // packet is transmitted in PARTOPEN".
            self.timers
                .set(Timer::Retransmit, Some(now + self.retransmit_interval));
        }
        Some(transmit)
    }

    /// Emits one packet into `buf` and counts it.
    fn write(
        &mut self,
        buf: &mut Vec<u8>,
        seq: SeqNum,
        ccval: u8,
        kind: PacketKind,
        options: &[DccpOption],
        payload: &[u8],
    ) -> Option<Transmit> {
        let mut list = Options::new();
        for option in options {
            // Options that do not fit in a header are left out.
            if list.push(option.clone()).is_err() {
                break;
            }
        }
        let repr = DccpRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            ccval,
            checksum_coverage: 0,
            short_seqno: false,
            seq,
            kind,
            options: list,
            payload,
        };
        buf.clear();
        buf.resize(repr.buffer_len(), 0);
        let mut packet = Packet::new_unchecked(buf.as_mut_slice());
        if repr.emit(&mut packet, &self.send_context).is_err() {
            buf.clear();
            return None;
        }
        let packet_type = kind.packet_type();
        let stats = &mut self.stats;
        stats.packets_sent += 1;
        stats.bytes_sent += buf.len() as u64;
        match packet_type {
            PacketType::Data | PacketType::DataAck => {
                stats.data_packets_sent += 1;
                stats.data_bytes_sent += payload.len() as u64;
            }
            PacketType::Sync => stats.syncs_sent += 1,
            PacketType::SyncAck => stats.sync_acks_sent += 1,
            PacketType::Reset => stats.resets_sent += 1,
            _ => {}
        }
        Some(Transmit {
            len: buf.len(),
            packet_type,
            seq,
            ack: kind.ack(),
            payload_len: payload.len(),
            ecn: self.codepoint(packet_type),
        })
    }

    /// The ECN codepoint of a packet of `packet_type` (RFC 4340 §12).
    ///
    /// Only DCCP-Data and DCCP-DataAck, the packets the sending CCID
    /// controls, are ECN-Capable, and only while ECN Incapable is 0 at both
    /// endpoints (§12.1). Request and Response leave before that is agreed.
    /// Ack, Close, CloseReq, Reset, Sync and SyncAck stay Not-ECT (a choice,
    /// as RFC 3168 §6.1.4 keeps TCP's pure ACKs and §6.1.1 its SYNs and
    /// RSTs Not-ECT): no CCID here reacts to marks on them, so a router
    /// should drop them rather than mark them.
    fn codepoint(&self, packet_type: PacketType) -> Ecn {
        let data = matches!(packet_type, PacketType::Data | PacketType::DataAck);
        if data && self.features.ecn_permitted() {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }
}
