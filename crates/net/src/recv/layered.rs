//! `cc=buffer` at the receiver (paper 004 §2.1, §2.4; issue 15): every
//! packet of the stream, in session order, tells a [`BufferReceiver`] what
//! arrived of which frame (from its temporal-frame header extension,
//! [`TemporalFrameInfo`]), every gap in the RTP sequence numbers is a loss
//! (eq. 1's T_loss), and the controller's feedback goes back to the sender
//! as a [`BufferReport`] when it is due.
//!
//! **Frames the sender dropped.** Paper 004 thins a fine-grained
//! enhancement layer: every frame still arrives, with less of its
//! enhancement. A temporal layer is thinned by whole frames, which the
//! sender never sends (the viewer sees the picture before again), and the
//! controller counts its occupancy in frames held: left out, every dropped
//! frame would lower the occupancy as a lost one does, and the thinning
//! would read as congestion (base-only windows of four layers hold one
//! frame in eight of their span, far below T_c). So a frame the sender
//! dropped is given to the controller as
//! a frame of no bytes, as an FGS frame whose enhancement was cut to
//! nothing: the frames between two frames whose packets have consecutive
//! RTP sequence numbers were never sent (RFC 3550 §5.1: the number counts
//! the packets sent), when there are fewer of them than a temporal GOP (a
//! frame of layer 0 is never dropped). Frames missing across a gap in the
//! sequence numbers are lost, or may be: the controller is not told of
//! them.
//!
//! The controller's frame interval is the stream's, from the first packet's
//! extension; packets that later say another are not given to it. A frame
//! counts as received whole when the bytes of its packets add up to the
//! frame's bytes the extension gives; the frames of each temporal layer the
//! stream held up to the last one seen follow from OpenH264's dyadic
//! pattern ([`TemporalLayers::dyadic_id`]), so that the share of the
//! enhancement frames delivered and the frame rate the viewer got can be
//! told. Only the frame in progress is tracked: memory is bounded whatever
//! the sender sends.

use fairstream_media::temporal::{TemporalLayers, MAX_TEMPORAL_LAYERS};
use fairstream_proto::cc::buffer::{BufferConfig, BufferReceiver, FrameSizes, ReceivedFrame};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::rtcp::BufferReport;
use fairstream_proto::wire::rtp::{sequence_delta, RtpRepr, TemporalFrameInfo};
use serde::Serialize;
use std::time::Duration;

/// The SSRC the receiver's reports carry.
const RECEIVER_SSRC: u32 = 0x0004_0002;

/// What the controller saw and did, in the receiver's summary and
/// statistics lines.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BufferRecvReport {
    /// `paper` or `tfrc-capped`.
    pub mode: String,
    /// The stream's temporal layers (0 before a packet said).
    pub layers: u8,
    /// The frame rate the stream was sent at, frames/s.
    pub nominal_fps: Option<f64>,
    /// Frames of each temporal layer (index = temporal id) whose every
    /// byte arrived.
    pub frames_complete: Vec<u64>,
    /// Frames of each layer of which some packets arrived, not all.
    pub frames_damaged: Vec<u64>,
    /// Frames of each layer the stream held up to the last one seen (sent
    /// or dropped by the sender).
    pub frames_in_stream: Vec<u64>,
    /// The frames whole over the stream's media time, frames/s.
    pub frame_rate_fps: Option<f64>,
    /// Of the enhancement frames (temporal id above 0) in the stream, the
    /// share that arrived whole.
    pub enhancement_frame_share: Option<f64>,
    /// Reports sent back to the sender.
    pub feedbacks: u64,
    /// Of those, reports of congestion (eq. 1).
    pub congestion_feedbacks: u64,
    /// Reports the connection refused (its queue full, or closed).
    pub feedbacks_refused: u64,
    /// Times a frame was due and the buffer held no decodable frame.
    pub underruns: u64,
    /// Frames due without their whole base layer (not shown).
    pub undecodable_frames: u64,
    /// Frame arrivals after their frame was due.
    pub late_frames: u64,
    /// Frames the sender dropped (given to the controller as frames of no
    /// bytes; see the module documentation).
    pub frames_dropped_by_sender: u64,
    /// Packets the RTP sequence numbers say were lost.
    pub lost_packets: u64,
    /// The media held, seconds (as of the last packet or timer).
    pub occupancy_s: f64,
    /// η of eq. 2 as the receiver computes it.
    pub eta: f64,
    /// Packets without a temporal-frame extension, or with a malformed one,
    /// or one giving another frame interval than the first.
    pub packets_not_counted: u64,
    /// Why the controller could not run, if it could not (a frame interval
    /// its pre-roll cannot hold).
    pub controller_error: Option<String>,
}

/// The frame whose packets are arriving.
#[derive(Clone, Copy, Debug)]
struct FrameInProgress {
    index: u64,
    temporal_id: u8,
    full_bytes: u64,
    bytes: u64,
}

/// The receiver's side of `cc=buffer` (see the [module](self)).
#[derive(Debug)]
pub(super) struct LayeredReceiver {
    config: BufferConfig,
    controller: Option<BufferReceiver>,
    layers: Option<TemporalLayers>,
    frame_interval_us: Option<u32>,
    last_sequence: Option<u16>,
    current: Option<FrameInProgress>,
    highest_frame: Option<u64>,
    report: BufferRecvReport,
}

impl LayeredReceiver {
    /// A receiver under `config` (its frame interval comes with the stream).
    pub(super) fn new(config: BufferConfig) -> LayeredReceiver {
        LayeredReceiver {
            report: BufferRecvReport {
                mode: config.mode.to_string(),
                ..BufferRecvReport::default()
            },
            config,
            controller: None,
            layers: None,
            frame_interval_us: None,
            last_sequence: None,
            current: None,
            highest_frame: None,
        }
    }

    /// An RTP packet of the stream, in session order, at `now`.
    pub(super) fn on_packet(&mut self, now: Instant, packet: &[u8]) {
        let Ok(rtp) = RtpRepr::parse_bytes(packet) else {
            self.report.packets_not_counted += 1;
            return;
        };
        let contiguous = self.count_losses(now, rtp.sequence_number);
        let info = rtp
            .extension
            .as_ref()
            .and_then(TemporalFrameInfo::from_extension)
            .and_then(Result::ok)
            .filter(|info| info.layers <= MAX_TEMPORAL_LAYERS);
        let Some(info) = info.filter(|info| self.accepts(info)) else {
            self.report.packets_not_counted += 1;
            return;
        };
        let index = u64::from(info.frame_index);
        let bytes = packet.len() as u64;
        let full_bytes = u64::from(info.frame_bytes);
        match self.current {
            Some(ref mut frame) if frame.index == index => {
                frame.bytes = frame.bytes.saturating_add(bytes);
            }
            _ => {
                let previous = self.current.map(|frame| frame.index);
                self.finish_frame();
                if let (true, Some(previous)) = (contiguous, previous) {
                    self.skipped_by_sender(now, previous, index);
                }
                self.current = Some(FrameInProgress {
                    index,
                    temporal_id: info.temporal_id,
                    full_bytes,
                    bytes,
                });
            }
        }
        self.highest_frame = Some(self.highest_frame.map_or(index, |h| h.max(index)));
        let sizes = |bytes: u64| layer_sizes(info.temporal_id, bytes.saturating_mul(8));
        if let Some(controller) = self.controller.as_mut() {
            controller.on_frame(
                now,
                &ReceivedFrame {
                    index,
                    received: sizes(bytes),
                    full: Some(sizes(full_bytes)),
                },
            );
        }
    }

    /// Whether `info` belongs to the stream: the first packet's layers and
    /// frame interval (it starts the controller), and the same later.
    fn accepts(&mut self, info: &TemporalFrameInfo) -> bool {
        match (self.layers, self.frame_interval_us) {
            (Some(layers), Some(interval)) => {
                layers.count() == info.layers && interval == info.frame_interval_us
            }
            _ => {
                let Ok(layers) = TemporalLayers::new(info.layers) else {
                    return false;
                };
                self.layers = Some(layers);
                self.frame_interval_us = Some(info.frame_interval_us);
                let count = usize::from(info.layers);
                self.report.layers = info.layers;
                self.report.frames_complete = vec![0; count];
                self.report.frames_damaged = vec![0; count];
                let interval = Duration::from_micros(u64::from(info.frame_interval_us));
                self.report.nominal_fps = Some(1.0 / interval.as_secs_f64());
                let config = BufferConfig {
                    frame_interval: interval,
                    ..self.config
                };
                match BufferReceiver::new(config) {
                    Ok(controller) => self.controller = Some(controller),
                    Err(error) => self.report.controller_error = Some(error.to_string()),
                }
                true
            }
        }
    }

    /// The frames after `previous` and before `index`, which the sender
    /// dropped, to the controller as frames of no bytes (see the module
    /// documentation): fewer than a temporal GOP of them.
    fn skipped_by_sender(&mut self, now: Instant, previous: u64, index: u64) {
        let (Some(controller), Some(layers)) = (self.controller.as_mut(), self.layers) else {
            return;
        };
        let skipped = index.saturating_sub(previous).saturating_sub(1);
        if skipped == 0 || skipped >= u64::from(layers.gop_frames()) {
            return;
        }
        for dropped in previous + 1..index {
            controller.on_frame(
                now,
                &ReceivedFrame {
                    index: dropped,
                    received: FrameSizes::default(),
                    full: None,
                },
            );
        }
        self.report.frames_dropped_by_sender += skipped;
    }

    /// Tells the controller of the packets a gap in the RTP sequence
    /// numbers says were lost; whether this packet follows the one before
    /// without a gap.
    fn count_losses(&mut self, now: Instant, sequence: u16) -> bool {
        let gap = match self.last_sequence {
            Some(last) => i64::from(sequence_delta(last, sequence)),
            None => 1,
        };
        // Duplicates and stragglers are neither losses nor news.
        if gap <= 0 {
            return false;
        }
        self.last_sequence = Some(sequence);
        let lost = (gap - 1).unsigned_abs();
        if lost > 0 {
            self.report.lost_packets += lost;
            if let Some(controller) = self.controller.as_mut() {
                controller.on_loss(now, lost);
            }
        }
        lost == 0
    }

    /// Counts the frame in progress as whole or damaged.
    fn finish_frame(&mut self) {
        let Some(frame) = self.current.take() else {
            return;
        };
        let counts = if frame.bytes >= frame.full_bytes {
            &mut self.report.frames_complete
        } else {
            &mut self.report.frames_damaged
        };
        if let Some(count) = counts.get_mut(usize::from(frame.temporal_id)) {
            *count += 1;
        }
    }

    /// The report due at `now`, as the bytes to send back.
    pub(super) fn poll_feedback(&mut self, now: Instant) -> Option<Vec<u8>> {
        let feedback = self.controller.as_mut()?.poll_feedback(now)?;
        self.report.feedbacks += 1;
        self.report.congestion_feedbacks += u64::from(feedback.congested);
        Some(
            BufferReport {
                ssrc: RECEIVER_SSRC,
                feedback,
            }
            .emit(),
        )
    }

    /// A report the connection refused.
    pub(super) fn feedback_refused(&mut self) {
        self.report.feedbacks_refused += 1;
    }

    /// When [`poll_feedback`](Self::poll_feedback) is next due.
    pub(super) fn next_timeout(&self) -> Option<Instant> {
        self.controller.as_ref()?.next_timeout()
    }

    /// What the controller saw so far; `ended`: the stream is over (the
    /// frame in progress counts).
    pub(super) fn report(&mut self, ended: bool) -> BufferRecvReport {
        if ended {
            self.finish_frame();
        }
        let mut report = self.report.clone();
        if let Some(controller) = &self.controller {
            report.underruns = controller.underruns();
            report.undecodable_frames = controller.undecodable_frames();
            report.late_frames = controller.late_frames();
            report.occupancy_s = controller.occupancy().as_secs_f64();
            report.eta = controller.eta().get();
        }
        if let (Some(layers), Some(highest)) = (self.layers, self.highest_frame) {
            report.frames_in_stream = frames_per_layer(layers, highest.saturating_add(1));
            let whole: u64 = report.frames_complete.iter().sum();
            report.frame_rate_fps = report
                .nominal_fps
                .map(|fps| whole as f64 * fps / highest.saturating_add(1) as f64);
            let enhancement = |counts: &[u64]| counts.iter().skip(1).sum::<u64>();
            let in_stream = enhancement(&report.frames_in_stream);
            report.enhancement_frame_share = (in_stream > 0)
                .then(|| enhancement(&report.frames_complete) as f64 / in_stream as f64);
        }
        report
    }
}

/// A frame's bits as the controller takes them: all base (layer 0) or all
/// enhancement (as `TemporalFrame::sizes`).
fn layer_sizes(temporal_id: u8, bits: u64) -> FrameSizes {
    if temporal_id == 0 {
        FrameSizes {
            base_bits: bits,
            enhancement_bits: 0,
        }
    } else {
        FrameSizes {
            base_bits: 0,
            enhancement_bits: bits,
        }
    }
}

/// The frames of each layer among the first `frames` of a stream of
/// `layers` (OpenH264's dyadic pattern; an IDR period is a whole number of
/// temporal GOPs, so the pattern runs on from the first frame).
fn frames_per_layer(layers: TemporalLayers, frames: u64) -> Vec<u64> {
    let gop = u64::from(layers.gop_frames());
    let mut counts = vec![0u64; usize::from(layers.count())];
    let whole = frames / gop;
    for position in 0..gop {
        let extra = u64::from(position < frames % gop);
        if let Some(count) = counts.get_mut(usize::from(layers.dyadic_id(position))) {
            *count += whole + extra;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairstream_proto::wire::rtp::{CsrcList, HeaderExtension, ONE_BYTE_PROFILE};

    /// An RTP packet of frame `index` (layer `tid` of 3), numbered `seq`,
    /// its frame `frame_bytes` long in all.
    fn packet(seq: u16, index: u32, tid: u8, frame_bytes: u32, payload: usize) -> Vec<u8> {
        let data = TemporalFrameInfo {
            frame_index: index,
            temporal_id: tid,
            layers: 3,
            frame_bytes,
            frame_interval_us: 40_000,
        }
        .extension_data();
        let payload = vec![0x41; payload];
        let repr = RtpRepr {
            marker: true,
            payload_type: 96,
            sequence_number: seq,
            timestamp: index.wrapping_mul(3600),
            ssrc: 1,
            csrcs: CsrcList::new(),
            extension: Some(HeaderExtension {
                profile: ONE_BYTE_PROFILE,
                data: &data,
            }),
            payload: &payload,
            padding_len: 0,
        };
        let mut bytes = vec![0; repr.buffer_len()];
        repr.emit(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn frames_the_sender_dropped_are_told_apart_from_frames_lost() {
        let mut receiver = LayeredReceiver::new(BufferConfig::default());
        let t = |ms: u64| Instant::from_millis(ms);
        // 12 + 20 bytes of headers: a 100-byte frame in one packet has a
        // 68-byte payload.
        let one = |seq, index, tid| packet(seq, index, tid, 100, 68);
        // Frames 0, 1, 2 (layers 0, 2, 1), then frame 4: frame 3 (layer 2)
        // was dropped by the sender, as the sequence numbers run on.
        receiver.on_packet(t(0), &one(0, 0, 0));
        receiver.on_packet(t(40), &one(1, 1, 2));
        receiver.on_packet(t(80), &one(2, 2, 1));
        receiver.on_packet(t(160), &one(3, 4, 0));
        // Then a packet lost (sequence 4) and frame 6 after frame 4: frame 5
        // may have been lost, and is not counted as dropped.
        receiver.on_packet(t(240), &one(5, 6, 1));
        // A frame in two packets, the second lost: damaged.
        receiver.on_packet(t(280), &packet(6, 7, 2, 200, 68));
        receiver.on_packet(t(320), &one(8, 8, 0));
        let report = receiver.report(true);
        assert_eq!(report.frames_dropped_by_sender, 1, "{report:?}");
        assert_eq!(report.lost_packets, 2);
        assert_eq!(report.frames_complete, [3, 2, 1]);
        assert_eq!(report.frames_damaged, [0, 0, 1]);
        // Frames 0 to 8 of three layers: 0, 2, 1, 2, 0, 2, 1, 2, 0.
        assert_eq!(report.frames_in_stream, [3, 2, 4]);
        assert_eq!(report.nominal_fps, Some(25.0));
        assert_eq!(report.packets_not_counted, 0);
    }

    #[test]
    fn packets_of_another_kind_are_counted_and_memory_stays_bounded() {
        let mut receiver = LayeredReceiver::new(BufferConfig::default());
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for i in 0..5_000u64 {
            let now = Instant::from_millis(i);
            let bytes = if i % 2 == 0 {
                let len = (next() % 200) as usize;
                (0..len).map(|_| next() as u8).collect()
            } else {
                // Frames far apart and sizes of any kind.
                packet(
                    next() as u16,
                    next() as u32,
                    (next() % 3) as u8,
                    next() as u32,
                    (next() % 100) as usize,
                )
            };
            receiver.on_packet(now, &bytes);
            let _ = receiver.poll_feedback(now);
        }
        let report = receiver.report(true);
        assert!(report.packets_not_counted >= 2_500);
        assert_eq!(report.frames_in_stream.len(), 3);
        assert!(receiver.controller.as_ref().unwrap().held_frames() <= 1 << 16);
    }

    #[test]
    fn frames_per_layer_follow_the_dyadic_pattern() {
        let three = TemporalLayers::new(3).unwrap();
        // 0, 2, 1, 2 | 0, 2, 1, 2 | 0, 2
        assert_eq!(frames_per_layer(three, 10), [3, 2, 5]);
        assert_eq!(frames_per_layer(three, 0), [0, 0, 0]);
        let one = TemporalLayers::ONE;
        assert_eq!(frames_per_layer(one, 7), [7]);
        let four = TemporalLayers::new(4).unwrap();
        let counts = frames_per_layer(four, 50);
        let direct = (0..50).fold([0u64; 4], |mut c, i| {
            c[usize::from(four.dyadic_id(i))] += 1;
            c
        });
        assert_eq!(counts, direct);
        // A peer's index cannot make it loop long.
        assert_eq!(frames_per_layer(four, u64::MAX).len(), 4);
    }
}
