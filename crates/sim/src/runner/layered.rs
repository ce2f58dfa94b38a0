//! A `cc = "buffer"` flow's application ends (paper 004): the server's
//! smoothing window ([`BufferSender`]) and the client's playout buffer
//! ([`BufferReceiver`]) of `fairstream_proto::cc::buffer`, joined by a DCCP
//! connection on the fixed-rate CCID 249 without pacing, so that the
//! schedule alone sets the rate, as the paper's UDP streams. Its CCID 3
//! receiver still reports the loss event rate and the receive rate: in
//! `tfrc-capped` mode each window is planned under the TCP-friendly rate
//! they give (`fairstream_proto::cc::buffer::tcp_friendly_rate`).
//!
//! Each window's frames leave as RTP packets (payload type 96) at the times
//! the plan gives: a frame's first byte at its `send_at`, the next bytes at
//! the window's pacing rate. The payload starts with a 16-byte header,
//! then as many zero bytes as the layer's share in the packet:
//!
//! ```text
//! byte 0      layer: 0 base, 1 enhancement
//! bytes 1-3   zero
//! bytes 4-7   frame index from 0 (big-endian)
//! bytes 8-11  the frame's whole base layer in bytes
//! bytes 12-15 the frame's whole enhancement layer in bytes
//! ```
//!
//! The receiver tells [`BufferReceiver`] of every part that arrives (the
//! whole sizes as [`ReceivedFrame::full`]) and of every gap in the RTP
//! sequence numbers (losses, eq. 1's T_loss); its feedback goes back as an
//! RTCP APP report ([`BufferReport`]) on the same connection.

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_media::layered::LayeredFrame;
use fairstream_proto::cc::buffer::{
    tcp_friendly_rate, BufferConfig, BufferConfigError, BufferError, BufferReceiver, BufferSender,
    FeedbackVerdict, FrameSizes, ReceivedFrame, StopReason,
};
use fairstream_proto::conn::Connection;
use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;
use fairstream_proto::wire::rtcp::BufferReport;
use fairstream_proto::wire::rtp::{CsrcList, RtpRepr, FIXED_HEADER_LEN};

/// Bytes of the layered payload header.
pub(super) const LAYER_HEADER_LEN: usize = 16;
/// The RTP payload type of the layered packets (dynamic range).
const PAYLOAD_TYPE: u8 = 96;
/// The sender's SSRC.
const SENDER_SSRC: u32 = 0x0004_0001;
/// The receiver's SSRC, in its reports.
const RECEIVER_SSRC: u32 = 0x0004_0002;
/// RTP's video clock (RFC 6184 §8.2.1).
const RTP_CLOCK_HZ: f64 = 90_000.0;

/// One packet waiting for its time.
#[derive(Clone, Copy, Debug)]
struct Pending {
    at: Instant,
    frame: u32,
    enhancement: bool,
    bytes: u32,
    full: FrameSizes,
    marker: bool,
}

/// What the two ends did, for the summary.
#[derive(Clone, Debug, Default)]
pub(super) struct LayeredStats {
    /// Windows planned.
    pub(super) windows: u64,
    /// Windows that carried the base layer alone.
    pub(super) base_only_windows: u64,
    /// Windows the TCP-friendly cap lowered.
    pub(super) capped_windows: u64,
    /// Enhancement bytes planned (sent or to be sent) and in the frames
    /// planned.
    pub(super) enhancement_bytes_planned: u64,
    pub(super) enhancement_bytes_offered: u64,
    /// Reports the receiver sent and the sender took.
    pub(super) feedbacks_sent: u64,
    pub(super) feedbacks_received: u64,
    /// Reports that said congestion.
    pub(super) congestion_feedbacks: u64,
    /// Sum of the occupancy the receiver reported, seconds.
    pub(super) occupancy_sum_s: f64,
    /// Datagrams that were not a layered packet or a report.
    pub(super) malformed: u64,
    /// Packets the connection refused (its send queue full).
    pub(super) app_drops: u64,
    /// Why the sender stopped, if it did.
    pub(super) stop: Option<StopReason>,
}

/// A `cc = "buffer"` flow's sender and receiver applications.
#[derive(Debug)]
pub(super) struct LayeredApp {
    sender: BufferSender,
    frames: Vec<FrameSizes>,
    next_frame: usize,
    frame_ticks: f64,
    payload_max: usize,
    pending: VecDeque<Pending>,
    next_seq: u16,
    receiver: BufferReceiver,
    /// The next extended sequence number the receiver expects.
    expected: Option<u64>,
    packet: Vec<u8>,
    /// The mean packet size sent, s of the TCP equation.
    mean_packet_bytes: Option<f64>,
    pub(super) stats: LayeredStats,
}

impl LayeredApp {
    /// The ends of a flow sending `frames` under `config`, in packets of at
    /// most `packet_size` bytes of application data.
    pub(super) fn new(
        config: BufferConfig,
        frames: &[LayeredFrame],
        packet_size: usize,
    ) -> Result<LayeredApp, BufferConfigError> {
        Ok(LayeredApp {
            sender: BufferSender::new(config)?,
            receiver: BufferReceiver::new(config)?,
            frames: frames.iter().map(LayeredFrame::sizes).collect(),
            next_frame: 0,
            frame_ticks: config.frame_interval.as_secs_f64() * RTP_CLOCK_HZ,
            // At least one byte of media a packet.
            payload_max: packet_size
                .saturating_sub(FIXED_HEADER_LEN + LAYER_HEADER_LEN)
                .max(1),
            pending: VecDeque::new(),
            next_seq: 0,
            expected: None,
            packet: Vec::with_capacity(packet_size),
            mean_packet_bytes: None,
            stats: LayeredStats::default(),
        })
    }

    /// The controller's configuration.
    pub(super) fn config(&self) -> &BufferConfig {
        self.sender.config()
    }

    /// The receiver (its playout buffer and counts).
    pub(super) fn receiver(&self) -> &BufferReceiver {
        &self.receiver
    }

    // --- the sender (the client of the DCCP connection) ---

    /// Plans the windows due at `now` (for `tfrc-capped`, under
    /// `tcp_friendly_rate` of the mean packet sent and what the connection
    /// measured) and hands `conn` the packets whose time has come,
    /// keeping at most `depth` in its send queue.
    pub(super) fn feed(&mut self, now: Instant, conn: &mut Connection, depth: usize) {
        // The CCID 3 receiver's p and X_recv reach CCID 249's sender, which
        // does not act on them: the cap does (`tfrc-capped`).
        let cap = conn.fixed_rate_sender().and_then(|ccid| {
            tcp_friendly_rate(
                self.mean_packet_bytes.unwrap_or(0.0),
                conn.rtt(),
                ccid.loss_event_rate(),
                ccid.receive_rate(),
            )
        });
        self.plan_due(now, cap);
        while let Some(next) = self.pending.front().copied() {
            if next.at > now || conn.send_queue_len() >= depth {
                break;
            }
            self.pending.pop_front();
            self.write_packet(next);
            // s as Linux's CCID 3 kept it (RFC 5348 §4.1): s = (9·s + len)/10.
            let len = self.packet.len() as f64;
            self.mean_packet_bytes =
                Some(self.mean_packet_bytes.map_or(len, |s| 0.9 * s + 0.1 * len));
            if conn.send(now, &self.packet).is_err() {
                self.stats.app_drops += 1;
            }
        }
    }

    fn plan_due(&mut self, now: Instant, cap: Option<Rate>) {
        while self.stats.stop.is_none()
            && self.next_frame < self.frames.len()
            && self.sender.next_timeout().is_none_or(|t| t <= now)
        {
            let end = self
                .next_frame
                .saturating_add(self.sender.config().frames_per_window())
                .min(self.frames.len());
            let window = self.frames.get(self.next_frame..end).unwrap_or(&[]);
            let plan = match self.sender.plan_window(now, window, cap) {
                Ok(plan) => plan,
                Err(BufferError::Stopped(reason)) => {
                    self.stop(reason);
                    return;
                }
                // A window of 1..=frames_per_window frames is never empty
                // nor too long; should it be, nothing more is planned.
                Err(BufferError::EmptyWindow | BufferError::TooManyFrames { .. }) => return,
            };
            let stats = &mut self.stats;
            stats.windows += 1;
            stats.base_only_windows += u64::from(plan.enhancement_bytes() == 0);
            stats.capped_windows += u64::from(plan.capped);
            stats.enhancement_bytes_planned += plan.enhancement_bytes();
            stats.enhancement_bytes_offered +=
                window.iter().map(|f| f.enhancement_bits / 8).sum::<u64>();
            let rate = plan.pacing_rate.bits_per_sec();
            for (offset, (frame, full)) in plan.frames.iter().zip(window).enumerate() {
                let index = u32::try_from(self.next_frame + offset).unwrap_or(u32::MAX);
                let parts = [(false, frame.base_bytes), (true, frame.enhancement_bytes)];
                let total: u64 = frame.base_bytes + frame.enhancement_bytes;
                let mut before = 0u64;
                for (enhancement, bytes) in parts {
                    let mut left = bytes;
                    while left > 0 {
                        let chunk = left.min(self.payload_max as u64);
                        let delay = if rate > 0.0 {
                            Duration::from_secs_f64(before as f64 * 8.0 / rate)
                        } else {
                            Duration::ZERO
                        };
                        before += chunk;
                        left -= chunk;
                        self.pending.push_back(Pending {
                            at: frame.send_at + delay,
                            frame: index,
                            enhancement,
                            bytes: u32::try_from(chunk).unwrap_or(u32::MAX),
                            full: *full,
                            marker: before == total,
                        });
                    }
                }
            }
            self.next_frame = end;
        }
    }

    fn stop(&mut self, reason: StopReason) {
        self.stats.stop = Some(reason);
        self.pending.clear();
    }

    /// Writes `next` as an RTP packet into `self.packet`.
    fn write_packet(&mut self, next: Pending) {
        let mut payload = vec![0; LAYER_HEADER_LEN + next.bytes as usize];
        payload[0] = u8::from(next.enhancement);
        payload[4..8].copy_from_slice(&next.frame.to_be_bytes());
        let full = |bits: u64| u32::try_from(bits.div_ceil(8)).unwrap_or(u32::MAX);
        payload[8..12].copy_from_slice(&full(next.full.base_bits).to_be_bytes());
        payload[12..16].copy_from_slice(&full(next.full.enhancement_bits).to_be_bytes());
        let repr = RtpRepr {
            marker: next.marker,
            payload_type: PAYLOAD_TYPE,
            sequence_number: self.next_seq,
            // RTP timestamps wrap (RFC 3550 §5.1); `as` keeps the low bits.
            timestamp: (f64::from(next.frame) * self.frame_ticks).round() as u64 as u32,
            ssrc: SENDER_SSRC,
            csrcs: CsrcList::new(),
            extension: None,
            payload: &payload,
            padding_len: 0,
        };
        self.next_seq = self.next_seq.wrapping_add(1);
        self.packet.resize(repr.buffer_len(), 0);
        if repr.emit(&mut self.packet).is_err() {
            self.packet.clear();
        }
    }

    /// A datagram from the receiver reached the sender's application.
    pub(super) fn on_sender_data(&mut self, now: Instant, bytes: &[u8]) {
        let Some(Ok(report)) = BufferReport::parse(bytes) else {
            self.stats.malformed += 1;
            return;
        };
        self.stats.feedbacks_received += 1;
        match self.sender.on_feedback(now, &report.feedback) {
            Ok(FeedbackVerdict::Congestion) => self.stats.congestion_feedbacks += 1,
            Ok(_) => {}
            Err(BufferError::Stopped(reason)) => self.stop(reason),
            Err(_) => {}
        }
    }

    // --- the receiver (the server of the DCCP connection) ---

    /// A datagram from the sender reached the receiver's application.
    pub(super) fn on_receiver_data(&mut self, now: Instant, bytes: &[u8]) {
        let Ok(rtp) = RtpRepr::parse_bytes(bytes) else {
            self.stats.malformed += 1;
            return;
        };
        let header = rtp.payload.get(..LAYER_HEADER_LEN);
        let Some(header) = header.filter(|h| h[0] <= 1 && rtp.payload_type == PAYLOAD_TYPE) else {
            self.stats.malformed += 1;
            return;
        };
        let word = |at: usize| {
            u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let seq = self.extend(rtp.sequence_number);
        match self.expected {
            Some(expected) if seq > expected => self.receiver.on_loss(now, seq - expected),
            _ => {}
        }
        if self.expected.is_none_or(|expected| seq >= expected) {
            self.expected = Some(seq + 1);
        }
        let bits = (rtp.payload.len() - LAYER_HEADER_LEN) as u64 * 8;
        let received = FrameSizes::in_layer(header[0] != 0, bits);
        self.receiver.on_frame(
            now,
            &ReceivedFrame {
                index: u64::from(word(4)),
                received,
                full: Some(FrameSizes {
                    base_bits: u64::from(word(8)) * 8,
                    enhancement_bits: u64::from(word(12)) * 8,
                }),
            },
        );
    }

    /// `seq` extended to 64 bits around the next one expected (RFC 3550
    /// Appendix A.1's rule, without probation: the path is the simulator's).
    fn extend(&self, seq: u16) -> u64 {
        let Some(expected) = self.expected else {
            return u64::from(seq);
        };
        // The signed distance from the expected number, modulo 2¹⁶.
        let delta = i64::from(seq.wrapping_sub(expected as u16) as i16);
        expected.saturating_add_signed(delta)
    }

    /// The receiver's report due at `now`, as the bytes to send back.
    pub(super) fn poll_feedback(&mut self, now: Instant) -> Option<Vec<u8>> {
        let feedback = self.receiver.poll_feedback(now)?;
        self.stats.feedbacks_sent += 1;
        self.stats.occupancy_sum_s += feedback.occupancy.as_secs_f64();
        Some(
            BufferReport {
                ssrc: RECEIVER_SSRC,
                feedback,
            }
            .emit(),
        )
    }

    /// When either end next needs the driver after `now`, while the flow is
    /// `active` (the receiver's timers run on after the sender stops).
    pub(super) fn next_wake(&self, active: bool, now: Instant) -> Option<Instant> {
        let sender = if active && self.stats.stop.is_none() {
            let planning = (self.next_frame < self.frames.len())
                .then(|| self.sender.next_timeout())
                .flatten();
            [self.pending.front().map(|p| p.at), planning]
                .into_iter()
                .flatten()
                .min()
        } else {
            None
        };
        [sender, self.receiver.next_timeout()]
            .into_iter()
            .flatten()
            .filter(|t| *t > now)
            .min()
    }

    /// The share of the enhancement layer planned over the frames planned
    /// (`None` before any enhancement was offered).
    pub(super) fn enhancement_share(&self) -> Option<f64> {
        let offered = self.stats.enhancement_bytes_offered;
        (offered > 0).then(|| self.stats.enhancement_bytes_planned as f64 / offered as f64)
    }

    /// The sender's schedule share now (δ + η(1 − δ)).
    pub(super) fn schedule_share(&self) -> f64 {
        self.sender.schedule_share().get()
    }
}
