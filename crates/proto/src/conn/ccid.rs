//! The CCID machinery of the two half-connections: the sender of this
//! endpoint's data and the receiver of the peer's, each an enum over the
//! CCIDs so that CCID-specific calls stay reachable.
//!
//! | half | CCID 3/4 (RFC 4342, RFC 5622) | CCID 2 (RFC 4341) |
//! |---|---|---|
//! | sender | [`TfrcSender`] paces, [`WindowCounter`] sets CCVal; feedback from Loss Event Rate, Receive Rate and Elapsed Time | [`Ccid2Sender`] window; feedback from Ack Vectors; Ack Ratio changes |
//! | receiver | [`TfrcReceiver`] on a dense data-packet count ([`DataSeqMapper`]); feedback options when it says so | [`AckHistory`]; an Ack Vector every Ack Ratio data packets or after a delay |
//!
//! The experimental fixed-rate CCID 249 pairs a [`FixedRateSender`] (with
//! CCID 3's window counter) with CCID 3's receiver: its feedback gives the
//! sender an RTT and the loss event rate, which do not change its rate.

use std::collections::VecDeque;
use std::time::Duration;

use super::ack_vector::AckHistory;
use super::config::{Ccid, ConnectionConfig};
use super::history::{DataSeqMapper, SendHistory};
use super::losses_per_event::{
    decode_congestion_loss_event_rate, decode_ecn_marks, decode_losses_per_event,
    encode_congestion_loss_event_rate, encode_ecn_marks, encode_losses_per_event,
};
use super::window_counter::WindowCounter;
use crate::cc::ccid2::{Ccid2Sender, ReceiverPacket};
use crate::cc::fixed_rate::FixedRateSender;
use crate::cc::tfrc::TfrcSender;
use crate::cc::tfrc_receiver::{DataPacket, TfrcReceiver};
use crate::cc::{Feedback, RateController, SendPermission, TfrcFeedback};
use crate::time::Instant;
use crate::units::Rate;
use crate::wire::dccp::SeqNum;
use crate::wire::options::{
    ack_vector_to_feedback, DccpOption, ElapsedTime, LossEventRate, LossInterval, LossIntervals,
    Options,
};

/// A valid packet from the peer, as the sending CCID sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerPacket<'a> {
    /// Its extended sequence number.
    pub(crate) seq: u64,
    /// Its acknowledgement number: as on the wire and extended.
    pub(crate) ack: Option<(SeqNum, u64)>,
    /// Whether it is a DCCP-Data or DCCP-DataAck.
    pub(crate) carries_data: bool,
    /// Whether it arrived marked Congestion Experienced (while ECN is in
    /// use).
    pub(crate) ce_marked: bool,
    /// Its options.
    pub(crate) options: &'a Options,
}

/// A valid packet from the peer, as the receiving CCID sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReceivedPacket {
    /// Its extended sequence number.
    pub(crate) seq: u64,
    /// Whether it is a DCCP-Data or DCCP-DataAck.
    pub(crate) is_data: bool,
    /// Its application data bytes.
    pub(crate) size: usize,
    /// Its CCVal.
    pub(crate) ccval: u8,
    /// Its NDP Count option (RFC 4340 §7.7), if any.
    pub(crate) ndp: Option<u64>,
    /// Whether it arrived marked Congestion Experienced (while ECN is in
    /// use, RFC 4340 §12).
    pub(crate) ce_marked: bool,
}

/// What the sending CCID made of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FeedbackUse {
    /// The packet carried no feedback for this CCID.
    None,
    /// Feedback was used.
    Used,
    /// Feedback was present but unusable.
    Ignored,
}

/// The sender of this endpoint's half-connection.
#[derive(Debug)]
pub(crate) enum SenderCcid {
    /// CCID 3 or 4 (and the experimental MulTFRC, run as CCID 3).
    Tfrc {
        /// The rate controller.
        sender: Box<TfrcSender>,
        /// The CCVal window counter (RFC 4342 §8.1).
        window: WindowCounter,
    },
    /// CCID 2.
    Ccid2 {
        /// The window controller.
        sender: Box<Ccid2Sender>,
    },
    /// The experimental fixed-rate CCID 249.
    Fixed {
        /// The pacer.
        sender: Box<FixedRateSender>,
        /// The CCVal window counter, for CCID 3's receiver (RFC 4342 §8.1).
        window: WindowCounter,
    },
}

impl SenderCcid {
    /// The sender for `ccid`, started at `now`.
    pub(crate) fn new(ccid: Ccid, config: &ConnectionConfig, now: Instant) -> SenderCcid {
        if ccid == Ccid::FixedRateExperimental {
            SenderCcid::Fixed {
                sender: Box::new(FixedRateSender::new(config.fixed_rate.clone(), now)),
                window: WindowCounter::new(),
            }
        } else if ccid.is_tfrc() {
            SenderCcid::Tfrc {
                sender: Box::new(TfrcSender::new(config.tfrc_sender_config(ccid), now)),
                window: WindowCounter::new(),
            }
        } else {
            SenderCcid::Ccid2 {
                sender: Box::new(Ccid2Sender::new(&config.ccid2, now)),
            }
        }
    }

    fn controller(&self) -> &dyn RateController {
        match self {
            SenderCcid::Tfrc { sender, .. } => sender.as_ref(),
            SenderCcid::Ccid2 { sender } => sender.as_ref(),
            SenderCcid::Fixed { sender, .. } => sender.as_ref(),
        }
    }

    fn controller_mut(&mut self) -> &mut dyn RateController {
        match self {
            SenderCcid::Tfrc { sender, .. } => sender.as_mut(),
            SenderCcid::Ccid2 { sender } => sender.as_mut(),
            SenderCcid::Fixed { sender, .. } => sender.as_mut(),
        }
    }

    /// May a packet of `size` data bytes leave at `now`?
    pub(crate) fn permission(&mut self, now: Instant, size: usize) -> SendPermission {
        self.controller_mut().permission(now, size)
    }

    /// A data packet left; returns its CCVal (RFC 4342 §8.1: the window
    /// counter on every data packet; zero for CCID 2).
    pub(crate) fn on_data_sent(&mut self, now: Instant, seq: u64, size: usize) -> u8 {
        let rtt = self.controller().rtt();
        self.controller_mut().on_packet_sent(now, seq, size);
        match self {
            SenderCcid::Tfrc { window, .. } | SenderCcid::Fixed { window, .. } => {
                window.on_send(now, rtt)
            }
            SenderCcid::Ccid2 { .. } => 0,
        }
    }

    /// The sender had permission but nothing to send.
    pub(crate) fn on_application_limited(&mut self, now: Instant) {
        self.controller_mut().on_application_limited(now);
    }

    /// The CCID's timer fired.
    pub(crate) fn on_timeout(&mut self, now: Instant) {
        self.controller_mut().on_timeout(now);
    }

    /// When the CCID needs `on_timeout`.
    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        self.controller().next_timeout()
    }

    /// The RTT measured by the handshake (RFC 5348 §4.2 lets TFRC start from
    /// it: X = W_init/R).
    pub(crate) fn set_handshake_rtt(&mut self, now: Instant, rtt: Duration) {
        match self {
            SenderCcid::Tfrc { sender, .. } => sender.set_initial_rtt(now, rtt),
            SenderCcid::Fixed { sender, .. } => sender.set_initial_rtt(rtt),
            SenderCcid::Ccid2 { .. } => {}
        }
    }

    /// A valid packet from the peer: feedback for this CCID, if it carries
    /// some. `history` gives the send times of acknowledged packets.
    pub(crate) fn on_peer_packet(
        &mut self,
        now: Instant,
        packet: &PeerPacket<'_>,
        history: &SendHistory,
    ) -> FeedbackUse {
        match self {
            SenderCcid::Fixed { sender, window } => {
                let (feedback, record) = match tfrc_feedback(packet, history) {
                    Ok(found) => found,
                    Err(use_) => return use_,
                };
                if sender.on_feedback(now, &Feedback::Tfrc(feedback)).is_err() {
                    return FeedbackUse::Ignored;
                }
                if record.data {
                    window.on_ack_of(now, record.ccval);
                }
                FeedbackUse::Used
            }
            SenderCcid::Tfrc { sender, window } => {
                let (feedback, record) = match tfrc_feedback(packet, history) {
                    Ok(found) => found,
                    Err(use_) => return use_,
                };
                if let Some(j) = decode_losses_per_event(packet.options) {
                    sender.set_losses_per_event(j);
                }
                if let Some(marks) = decode_ecn_marks(packet.options) {
                    sender.set_ecn_marks_reported(marks);
                }
                sender.set_congestion_loss_event_rate(decode_congestion_loss_event_rate(
                    packet.options,
                ));
                if sender.on_feedback(now, &Feedback::Tfrc(feedback)).is_err() {
                    return FeedbackUse::Ignored;
                }
                if record.data {
                    // RFC 4342 §8.1: after an acknowledgement of a packet
                    // sent with CCVal C, later packets carry at least C + 4.
                    window.on_ack_of(now, record.ccval);
                }
                FeedbackUse::Used
            }
            SenderCcid::Ccid2 { sender } => {
                // RFC 4341 §6.1.1: the sender watches the receiver's packets
                // (losses and marks of its Acks) for Ack Ratio control.
                sender.on_receiver_packet(
                    now,
                    ReceiverPacket {
                        seq: packet.seq,
                        carries_data: packet.carries_data,
                        // RFC 4341 §6.1.1: marked Acks count as congestion
                        // on the Ack path.
                        ecn_marked: packet.ce_marked,
                    },
                );
                let Some((wire_ack, ack)) = packet.ack else {
                    return FeedbackUse::None;
                };
                if packet.options.ack_vectors().next().is_none() {
                    return FeedbackUse::None;
                }
                match ack_vector_to_feedback(wire_ack, packet.options.ack_vector_cells()) {
                    Ok(mut feedback) => {
                        // The Ack Vector runs back from the extended number.
                        feedback.ack_number = ack;
                        match sender.on_feedback(now, &Feedback::Ack(feedback)) {
                            Ok(()) => FeedbackUse::Used,
                            Err(_) => FeedbackUse::Ignored,
                        }
                    }
                    Err(_) => FeedbackUse::Ignored,
                }
            }
        }
    }

    /// CCID 2: a new Ack Ratio to announce with Change L(Ack Ratio).
    pub(crate) fn take_ack_ratio_change(&mut self) -> Option<u16> {
        match self {
            SenderCcid::Ccid2 { sender } => sender.take_ack_ratio_change(),
            SenderCcid::Tfrc { .. } | SenderCcid::Fixed { .. } => None,
        }
    }

    /// The rate the controller allows.
    pub(crate) fn allowed_rate(&self) -> Rate {
        self.controller().allowed_rate()
    }

    /// The controller's smoothed RTT.
    pub(crate) fn rtt(&self) -> Option<Duration> {
        self.controller().rtt()
    }

    /// TFRC: the loss event rate the receiver reported.
    pub(crate) fn loss_event_rate(&self) -> f64 {
        match self {
            SenderCcid::Tfrc { sender, .. } => sender.loss_event_rate(),
            SenderCcid::Fixed { sender, .. } => sender.loss_event_rate(),
            SenderCcid::Ccid2 { .. } => 0.0,
        }
    }

    /// CCID 2: the congestion window.
    pub(crate) fn cwnd(&self) -> Option<u32> {
        match self {
            SenderCcid::Ccid2 { sender } => Some(sender.cwnd()),
            SenderCcid::Tfrc { .. } | SenderCcid::Fixed { .. } => None,
        }
    }

    /// The TFRC sender, for CCID 3/4.
    pub(crate) fn tfrc(&self) -> Option<&TfrcSender> {
        match self {
            SenderCcid::Tfrc { sender, .. } => Some(sender),
            SenderCcid::Ccid2 { .. } | SenderCcid::Fixed { .. } => None,
        }
    }

    /// The TFRC sender, mutable.
    pub(crate) fn tfrc_mut(&mut self) -> Option<&mut TfrcSender> {
        match self {
            SenderCcid::Tfrc { sender, .. } => Some(sender),
            SenderCcid::Ccid2 { .. } | SenderCcid::Fixed { .. } => None,
        }
    }

    /// The fixed-rate sender of CCID 249.
    pub(crate) fn fixed_rate(&self) -> Option<&FixedRateSender> {
        match self {
            SenderCcid::Fixed { sender, .. } => Some(sender),
            _ => None,
        }
    }

    /// The CCID 2 sender.
    pub(crate) fn ccid2(&self) -> Option<&Ccid2Sender> {
        match self {
            SenderCcid::Ccid2 { sender } => Some(sender),
            SenderCcid::Tfrc { .. } | SenderCcid::Fixed { .. } => None,
        }
    }
}

/// How many of this endpoint's Acks the CCID 2 receiver remembers, to learn
/// when the sender has seen an Ack Vector (RFC 4340 §11.4.2).
const ACK_HEADS_KEPT: usize = 64;

/// The receiver of the peer's half-connection.
#[derive(Debug)]
pub(crate) enum ReceiverCcid {
    /// CCID 3 or 4.
    Tfrc {
        /// The TFRC receiver.
        receiver: Box<TfrcReceiver>,
        /// Sequence numbers to data packet indices.
        mapper: DataSeqMapper,
        /// The greatest sequence number received and when (for Elapsed Time).
        newest: Option<(u64, Instant)>,
        /// The experimental MulTFRC CCID 248: the feedback also carries j,
        /// the losses per loss event.
        multfrc: bool,
    },
    /// CCID 2.
    Ccid2 {
        /// Which packets arrived.
        history: AckHistory,
        /// Data packets not yet acknowledged.
        unacked_data: u32,
        /// When the oldest unacknowledged data packet must be acknowledged.
        deadline: Option<Instant>,
        /// The delay before that.
        delay: Duration,
        /// (sequence number of an Ack sent, the history head it reported).
        sent_heads: VecDeque<(u64, u64)>,
    },
}

impl ReceiverCcid {
    /// The receiver for `ccid`; `memory` bounds its per-packet state.
    pub(crate) fn new(
        ccid: Ccid,
        config: &ConnectionConfig,
        now: Instant,
        memory: usize,
    ) -> ReceiverCcid {
        if ccid.has_tfrc_feedback() {
            ReceiverCcid::Tfrc {
                receiver: Box::new(TfrcReceiver::new(config.tfrc_receiver_config(ccid), now)),
                mapper: DataSeqMapper::new(memory),
                newest: None,
                multfrc: ccid == Ccid::MulTfrcExperimental,
            }
        } else {
            ReceiverCcid::Ccid2 {
                history: AckHistory::new(memory),
                unacked_data: 0,
                deadline: None,
                delay: config.ccid2_ack_delay,
                sent_heads: VecDeque::new(),
            }
        }
    }

    /// A valid packet from the peer (RFC 4340 §8.5 step 8: it becomes
    /// acknowledgeable).
    pub(crate) fn on_packet(&mut self, now: Instant, packet: &ReceivedPacket, ack_ratio: u16) {
        let ReceivedPacket {
            seq,
            is_data,
            size,
            ccval,
            ndp,
            ce_marked,
        } = *packet;
        match self {
            ReceiverCcid::Tfrc {
                receiver,
                mapper,
                newest,
                ..
            } => {
                if newest.is_none_or(|(s, _)| seq > s) {
                    *newest = Some((seq, now));
                }
                if let Some(index) = mapper.on_packet(seq, is_data, ndp) {
                    // RFC 4342 §8.1: R comes from the window counters; the
                    // packet carries no RTT estimate and no timestamp.
                    // RFC 4342 §9: a CE-marked data packet is counted in the
                    // loss history as a lost one.
                    receiver.on_data_packet_ecn(
                        now,
                        &DataPacket {
                            seq: index,
                            size_bytes: size,
                            send_time: now,
                            rtt_estimate: None,
                            window_counter: Some(ccval),
                        },
                        ce_marked,
                    );
                }
            }
            ReceiverCcid::Ccid2 {
                history,
                unacked_data,
                deadline,
                delay,
                ..
            } => {
                // RFC 4341 §5 / RFC 4340 §11.4: a marked data packet is
                // reported as state 1, "Received ECN Marked" (only data is
                // sent ECN-Capable).
                history.record(seq, ce_marked && is_data);
                if is_data {
                    *unacked_data = unacked_data.saturating_add(1);
                    if *unacked_data >= u32::from(ack_ratio.max(1)) {
                        // RFC 4341 §6.1 / RFC 4340 §11.3: one Ack per Ack
                        // Ratio data packets.
                        *deadline = Some(now);
                    } else if deadline.is_none() {
                        *deadline = Some(now + *delay);
                    }
                }
            }
        }
    }

    /// The peer acknowledged this endpoint's packet `ack`: Ack Vector state
    /// it has seen may be forgotten (RFC 4340 §11.4.2).
    pub(crate) fn on_ack(&mut self, ack: u64) {
        if let ReceiverCcid::Ccid2 {
            history,
            sent_heads,
            ..
        } = self
        {
            let mut acknowledged = None;
            while sent_heads.front().is_some_and(|&(seq, _)| seq <= ack) {
                acknowledged = sent_heads.pop_front();
            }
            if let Some((_, head)) = acknowledged {
                history.forget_up_to(head);
            }
        }
    }

    /// The feedback options due at `now`, if any.
    pub(crate) fn poll_feedback(&mut self, now: Instant) -> Option<Vec<DccpOption>> {
        match self {
            ReceiverCcid::Tfrc {
                receiver,
                newest,
                multfrc,
                ..
            } => {
                let feedback = receiver.poll_feedback(now)?;
                let mut options = Vec::with_capacity(4);
                if let Some((_, arrival)) = newest {
                    // RFC 4340 §13.2: time since the acknowledged packet
                    // arrived.
                    options.push(DccpOption::ElapsedTime(ElapsedTime::from_duration(
                        now.saturating_duration_since(*arrival),
                    )));
                }
                options.push(DccpOption::LossEventRate(
                    LossEventRate::from_p(feedback.loss_event_rate)
                        .unwrap_or(LossEventRate::NO_LOSS),
                ));
                // `as` from f64 saturates; the rate is finite and positive.
                let rate = feedback.receive_rate.bytes_per_sec().round() as u32;
                options.push(DccpOption::ReceiveRate(rate));
                let intervals: Vec<LossInterval> = receiver
                    .loss_intervals()
                    .take(LossIntervals::MAX_INTERVALS)
                    .map(|i| LossInterval {
                        lossless_length: clamp_u32(i.lossless_length(), LossInterval::MAX_24 - 1),
                        ecn_nonce_echo: false,
                        loss_length: clamp_u32(i.loss_length(), LossInterval::MAX_23 - 1),
                        data_length: clamp_u32(i.length(), LossInterval::MAX_24 - 1),
                    })
                    .collect();
                if !intervals.is_empty() {
                    options.push(DccpOption::LossIntervals(LossIntervals {
                        skip_length: 0,
                        intervals,
                    }));
                }
                if *multfrc {
                    // The MulTFRC receiver reports j beside p
                    // (draft-irtf-iccrg-multfrc); CCID 248 carries it in
                    // its option 196, in thousandths of a packet.
                    if let Some(j) = receiver.mean_lost_packets() {
                        options.push(encode_losses_per_event(j));
                    }
                    // Option 197: how many packets came marked CE, so the
                    // sender can tell congestion from channel loss in p.
                    options.push(encode_ecn_marks(receiver.ce_marked()));
                    // Option 198: p without the losses of a marking path,
                    // once there are such losses (before, it is p).
                    if let (Some(p), true) = (
                        receiver.congestion_loss_event_rate(),
                        receiver.losses_set_aside() > 0,
                    ) {
                        options.push(encode_congestion_loss_event_rate(p));
                    }
                }
                Some(options)
            }
            ReceiverCcid::Ccid2 {
                history,
                unacked_data,
                deadline,
                ..
            } => {
                if !deadline.is_some_and(|at| at <= now) {
                    return None;
                }
                *deadline = None;
                *unacked_data = 0;
                Some(vec![DccpOption::AckVector(history.ack_vector())])
            }
        }
    }

    /// An Ack carrying this receiver's feedback left with sequence number
    /// `seq`.
    pub(crate) fn on_feedback_sent(&mut self, seq: u64) {
        if let ReceiverCcid::Ccid2 {
            history,
            sent_heads,
            ..
        } = self
        {
            if let Some(head) = history.ack_number() {
                if sent_heads.len() >= ACK_HEADS_KEPT {
                    sent_heads.pop_front();
                }
                sent_heads.push_back((seq, head));
            }
        }
    }

    /// When the receiver needs `poll_feedback`.
    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        match self {
            ReceiverCcid::Tfrc { receiver, .. } => receiver.next_timeout(),
            ReceiverCcid::Ccid2 { deadline, .. } => *deadline,
        }
    }

    /// TFRC: the loss event rate this receiver computes.
    pub(crate) fn loss_event_rate(&self) -> f64 {
        match self {
            ReceiverCcid::Tfrc { receiver, .. } => receiver.loss_event_rate(),
            ReceiverCcid::Ccid2 { .. } => 0.0,
        }
    }

    /// TFRC: data packets counted missing.
    pub(crate) fn data_losses(&self) -> u64 {
        match self {
            ReceiverCcid::Tfrc { mapper, .. } => mapper.missing(),
            ReceiverCcid::Ccid2 { .. } => 0,
        }
    }

    /// The TFRC receiver, for CCID 3/4.
    pub(crate) fn tfrc(&self) -> Option<&TfrcReceiver> {
        match self {
            ReceiverCcid::Tfrc { receiver, .. } => Some(receiver),
            ReceiverCcid::Ccid2 { .. } => None,
        }
    }

    /// CCID 2: the history's size in packets.
    pub(crate) fn ack_history_len(&self) -> usize {
        match self {
            ReceiverCcid::Ccid2 { history, .. } => history.feedback().map_or(0, |f| {
                usize::try_from(f.runs.iter().map(|r| r.length).sum::<u64>()).unwrap_or(usize::MAX)
            }),
            ReceiverCcid::Tfrc { .. } => 0,
        }
    }
}

/// The TFRC feedback a peer packet carries (RFC 4342 §8.3, §8.5: Receive
/// Rate and Loss Event Rate), with the record of the packet it
/// acknowledges; the [`FeedbackUse`] to report when there is none.
fn tfrc_feedback(
    packet: &PeerPacket<'_>,
    history: &SendHistory,
) -> Result<(TfrcFeedback, super::history::SentRecord), FeedbackUse> {
    let options = packet.options;
    let (Some(receive_rate), Some(loss_event_rate)) =
        (options.receive_rate(), options.loss_event_rate())
    else {
        return Err(FeedbackUse::None);
    };
    let Some((_, ack)) = packet.ack else {
        return Err(FeedbackUse::Ignored);
    };
    let (Some(record), Some(p)) = (history.get(ack), loss_event_rate.p()) else {
        return Err(FeedbackUse::Ignored);
    };
    // RFC 4342 §6.1 / §8.2: the RTT from the acknowledged packet's send
    // time less the Elapsed Time the receiver reports.
    let delay = options
        .elapsed_time()
        .map_or(Duration::ZERO, ElapsedTime::to_duration);
    let feedback = TfrcFeedback {
        echoed_send_time: record.at,
        receiver_delay: delay,
        receive_rate: Rate::from_bytes_per_sec(f64::from(receive_rate)),
        loss_event_rate: p,
        highest_seq: ack,
    };
    Ok((feedback, record))
}

fn clamp_u32(value: u64, max: u32) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX).min(max)
}
