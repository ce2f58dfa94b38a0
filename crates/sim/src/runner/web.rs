//! A `cc = "web"` flow's endpoints: web users, each repeating a transfer
//! over a fresh NewReno connection ([`TcpSender`] and [`TcpReceiver`],
//! byte-limited) and a think time, all reported as one flow.
//!
//! Transfer sizes are Pareto, think times exponential
//! ([`WebTraffic`]); both come from the flow's own [`SimRng`]. A user
//! starts its first transfer when the flow starts. Each transfer's packets
//! carry its number ([`Body::WebSegment`], [`Body::WebAck`]), so that a
//! late packet of a finished transfer is told from the next one's and
//! dropped on arrival.

use std::collections::BTreeMap;
use std::time::Duration;

use fairstream_proto::time::Instant;

use crate::network::Body;
use crate::rng::SimRng;
use crate::scenario::{WebTraffic, MAX_WEB_TRANSFER_BYTES};
use crate::tcp::{Ack, Segment, TcpConfig, TcpConfigError, TcpReceiver, TcpSender};

/// One transfer in progress.
#[derive(Debug)]
struct Transfer {
    sender: TcpSender,
    receiver: TcpReceiver,
    /// The user it belongs to.
    session: usize,
    started: Instant,
}

/// What a web user is doing.
#[derive(Clone, Copy, Debug)]
enum Session {
    /// Thinking until this moment, then it starts a transfer.
    Thinking(Instant),
    /// Waiting for its transfer to finish.
    Transferring,
}

/// What the web flow's transfers did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct WebStats {
    pub(super) transfers_started: u64,
    pub(super) transfers_completed: u64,
    /// Bytes of the completed transfers.
    pub(super) bytes_completed: u64,
    /// Sum of completion times (first segment sent to last byte
    /// acknowledged), seconds.
    pub(super) completion_sum_s: f64,
    /// In-order bytes the receivers of finished transfers delivered.
    delivered_finished: u64,
    /// Sum and count of SRTT samples at every ACK a sender took.
    pub(super) srtt_sum_s: f64,
    pub(super) srtt_samples: u64,
    /// Loss indications (fast retransmits and timeouts) and segments of
    /// the finished transfers.
    loss_indications_finished: u64,
    segments_finished: u64,
}

/// The users of a web flow and their transfers.
#[derive(Debug)]
pub(super) struct WebEnds {
    tcp: TcpConfig,
    web: WebTraffic,
    rng: SimRng,
    sessions: Vec<Session>,
    transfers: BTreeMap<u64, Transfer>,
    next_transfer: u64,
    pub(super) stats: WebStats,
}

impl WebEnds {
    /// `web.sessions` users whose first transfers start at `start`.
    pub(super) fn new(
        tcp: TcpConfig,
        web: WebTraffic,
        start: Instant,
        rng: SimRng,
    ) -> Result<WebEnds, TcpConfigError> {
        tcp.validate()?;
        Ok(WebEnds {
            tcp,
            sessions: vec![Session::Thinking(start); web.sessions as usize],
            web,
            rng,
            transfers: BTreeMap::new(),
            next_transfer: 0,
            stats: WebStats::default(),
        })
    }

    /// Whether new ECN-capable segments are ECT (RFC 3168 §6.1.1).
    pub(super) fn ecn(&self) -> bool {
        self.tcp.ecn
    }

    /// Runs the timers due at `now`, starts the transfers of users done
    /// thinking (while `active`), and collects what is sent.
    pub(super) fn service(&mut self, now: Instant, active: bool, out: &mut Vec<(bool, Body)>) {
        if active {
            for index in 0..self.sessions.len() {
                if matches!(self.sessions.get(index), Some(Session::Thinking(at)) if *at <= now) {
                    self.start_transfer(now, index);
                }
            }
        }
        for (&transfer, ends) in &mut self.transfers {
            if ends.receiver.next_timeout().is_some_and(|t| t <= now) {
                if let Some(ack) = ends.receiver.on_timeout(now) {
                    out.push((false, Body::WebAck { transfer, ack }));
                }
            }
            if active {
                if ends.sender.next_timeout().is_some_and(|t| t <= now) {
                    ends.sender.on_timeout(now);
                }
                while let Some(segment) = ends.sender.poll_transmit(now) {
                    out.push((true, Body::WebSegment { transfer, segment }));
                }
            }
        }
    }

    /// A new transfer for user `session`: a Pareto size, cut at
    /// [`MAX_WEB_TRANSFER_BYTES`], at least one byte.
    fn start_transfer(&mut self, now: Instant, session: usize) {
        let drawn = self
            .rng
            .pareto(self.web.size_shape, self.web.size_mean.get() as f64);
        // Truncation toward zero, then the cut: a finite, positive size.
        let size = (drawn as u64).clamp(1, MAX_WEB_TRANSFER_BYTES);
        let config = TcpConfig {
            bytes_to_send: Some(size),
            ..self.tcp.clone()
        };
        // The configuration was validated in `new`; a byte limit cannot
        // make it invalid, but a failure leaves the user thinking rather
        // than panicking.
        let (Ok(sender), Ok(receiver)) = (
            TcpSender::new(config.clone(), now),
            TcpReceiver::new(config),
        ) else {
            return;
        };
        let number = self.next_transfer;
        self.next_transfer += 1;
        self.transfers.insert(
            number,
            Transfer {
                sender,
                receiver,
                session,
                started: now,
            },
        );
        if let Some(slot) = self.sessions.get_mut(session) {
            *slot = Session::Transferring;
        }
        self.stats.transfers_started += 1;
    }

    /// When [`service`](Self::service) is next needed: a user done
    /// thinking (while `active`), or a transfer's timer.
    pub(super) fn next_wake(&self, active: bool) -> Option<Instant> {
        let thinking = self.sessions.iter().filter_map(|s| match s {
            Session::Thinking(at) if active => Some(*at),
            _ => None,
        });
        let timers = self.transfers.values().flat_map(|t| {
            [
                t.sender.next_timeout().filter(|_| active),
                t.receiver.next_timeout(),
            ]
            .into_iter()
            .flatten()
        });
        thinking.chain(timers).min()
    }

    /// A data segment of `transfer` reached the receiving host; the ACK it
    /// sends, if any. Segments of finished transfers are dropped.
    pub(super) fn on_segment(
        &mut self,
        now: Instant,
        transfer: u64,
        segment: &Segment,
        ecn: fairstream_proto::ecn::Ecn,
    ) -> Option<Body> {
        let ends = self.transfers.get_mut(&transfer)?;
        let ack = ends.receiver.on_segment_ecn(now, segment, ecn)?;
        Some(Body::WebAck { transfer, ack })
    }

    /// An ACK of `transfer` reached the sending host (`active`: before
    /// the flow's stop). A transfer whose last byte is acknowledged ends,
    /// and its user thinks.
    pub(super) fn on_ack(&mut self, now: Instant, transfer: u64, ack: &Ack, active: bool) {
        let Some(ends) = self.transfers.get_mut(&transfer) else {
            return;
        };
        if !active {
            return;
        }
        ends.sender.on_ack(now, ack);
        if let Some(srtt) = ends.sender.srtt() {
            self.stats.srtt_sum_s += srtt.as_secs_f64();
            self.stats.srtt_samples += 1;
        }
        if !ends.sender.is_finished() {
            return;
        }
        let Some(done) = self.transfers.remove(&transfer) else {
            return;
        };
        let stats = &mut self.stats;
        stats.transfers_completed += 1;
        stats.bytes_completed += done.sender.bytes_acked();
        stats.completion_sum_s += now.saturating_duration_since(done.started).as_secs_f64();
        stats.delivered_finished += done.receiver.bytes_delivered();
        stats.loss_indications_finished += done.sender.fast_retransmits() + done.sender.timeouts();
        stats.segments_finished += done.sender.segments_sent();
        let think = Duration::from_secs_f64(self.rng.exponential(self.web.think.as_secs_f64()));
        if let Some(slot) = self.sessions.get_mut(done.session) {
            *slot = Session::Thinking(now + think);
        }
    }

    /// In-order bytes every receiver handed to its application.
    pub(super) fn goodput_bytes(&self) -> u64 {
        self.stats.delivered_finished
            + self
                .transfers
                .values()
                .map(|t| t.receiver.bytes_delivered())
                .sum::<u64>()
    }

    /// Loss indications (fast retransmits and timeouts) per segment sent,
    /// over every transfer.
    pub(super) fn loss_event_rate(&self) -> Option<f64> {
        let (losses, segments) = self.transfers.values().fold(
            (
                self.stats.loss_indications_finished,
                self.stats.segments_finished,
            ),
            |(losses, segments), t| {
                (
                    losses + t.sender.fast_retransmits() + t.sender.timeouts(),
                    segments + t.sender.segments_sent(),
                )
            },
        );
        (segments > 0).then(|| losses as f64 / segments as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairstream_proto::units::Bytes;

    fn web(sessions: u32) -> WebEnds {
        let traffic = WebTraffic {
            sessions,
            size_mean: Bytes(14_600),
            size_shape: 1.2,
            think: Duration::from_secs(1),
        };
        let tcp = TcpConfig {
            delayed_ack: None,
            ..TcpConfig::default()
        };
        WebEnds::new(tcp, traffic, Instant::ZERO, SimRng::new(5)).unwrap()
    }

    /// Delivers everything at once, both ways, until no transfer is open.
    fn finish_all(ends: &mut WebEnds, mut now: Instant) -> Instant {
        for _ in 0..10_000 {
            let mut out = Vec::new();
            ends.service(now, true, &mut out);
            now += Duration::from_millis(10);
            let mut acks = Vec::new();
            for (_, body) in out {
                if let Body::WebSegment { transfer, segment } = body {
                    acks.extend(ends.on_segment(
                        now,
                        transfer,
                        &segment,
                        fairstream_proto::ecn::Ecn::NotEct,
                    ));
                }
            }
            for body in acks {
                if let Body::WebAck { transfer, ack } = body {
                    ends.on_ack(now, transfer, &ack, true);
                }
            }
            if ends.transfers.is_empty() {
                return now;
            }
        }
        panic!("transfers did not finish");
    }

    #[test]
    fn every_user_transfers_then_thinks() {
        let mut ends = web(3);
        let now = finish_all(&mut ends, Instant::ZERO);
        assert_eq!(ends.stats.transfers_started, 3);
        assert_eq!(ends.stats.transfers_completed, 3);
        assert_eq!(ends.goodput_bytes(), ends.stats.bytes_completed);
        assert!(ends
            .sessions
            .iter()
            .all(|s| matches!(s, Session::Thinking(at) if *at >= now)));
        // The next transfer starts when the first user is done thinking.
        let next = ends.next_wake(true).unwrap();
        let mut out = Vec::new();
        ends.service(next, true, &mut out);
        assert_eq!(ends.stats.transfers_started, 4);
        assert!(!out.is_empty());
        // Not after the flow's stop.
        assert_eq!(web(1).next_wake(false), None);
    }

    #[test]
    fn a_stale_segment_is_dropped() {
        let mut ends = web(1);
        let segment = Segment {
            seq: 0,
            len: 100,
            is_retransmission: false,
            sent_at: Instant::ZERO,
            cwr: false,
        };
        assert_eq!(
            ends.on_segment(
                Instant::ZERO,
                7,
                &segment,
                fairstream_proto::ecn::Ecn::NotEct
            ),
            None
        );
    }
}
