//! `cc=buffer` at the sender (paper 004 §2.3; issue 15): generated content
//! encoded in temporal layers, each 1 s window of frames planned by
//! [`BufferSender::plan_window`] and thinned to whole frames by
//! [`TemporalThinner::select`], the frames kept sent as RTP/H.264 paced at
//! the plan's rate; the receiver's [`BufferReport`]s steer the next
//! windows. The design is the simulator's (`fairstream_sim`'s layered
//! flows): both modes run on the fixed-rate CCID 249 without pacing, so
//! that the schedule alone sets the rate; `mode=tfrc-capped` plans each
//! window under `tcp_friendly_rate`, RFC 5348's equation for the loss
//! event rate and RTT that CCID 249's receiver (CCID 3's) reports.
//!
//! Every packet carries the temporal-frame header extension
//! ([`TemporalFrameInfo`]: frame index, temporal id, the frame's bytes, the
//! frame interval), so that the receiver can tell its controller what
//! arrived of which frame. A frame's bytes, for the controller and in the
//! extension, are those of its RTP packets, headers and extension
//! included: what the receiver adds up as it arrives. Dropped frames are
//! never sent; the receiver repeats the picture before.
//!
//! The window being filled holds at most [`BufferConfig::frames_per_window`]
//! encoded frames, and the queue one planned window's packets (the next
//! window is planned when this one's time is over).

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_media::h264::incremental::SplitAccessUnit;
use fairstream_media::h264::FrameType;
use fairstream_media::stream::{rtp_timestamp, FramePacketizer};
use fairstream_media::temporal::{TemporalFrame, TemporalLayers, TemporalThinner};
use fairstream_proto::cc::buffer::{
    tcp_friendly_rate, BufferConfig, BufferError, BufferSender, FeedbackVerdict, FrameSizes,
    StopReason,
};
use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;
use fairstream_proto::wire::rtcp::BufferReport;
use fairstream_proto::wire::rtp::{
    HeaderExtension, RtpRepr, TemporalFrameInfo, ONE_BYTE_PROFILE, TEMPORAL_FRAME_EXTENSION_LEN,
};
use serde::Serialize;

use fairstream_proto::conn::State;
use fairstream_proto::session::DatagramMeta;

use super::source::Next;
use super::{Mode, Run, SendConfig, SendError, SourceSpec};

/// What the controller did, in the sender's summary and statistics lines.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BufferSendReport {
    /// `paper` or `tfrc-capped`.
    pub mode: String,
    /// The stream's temporal layers.
    pub layers: u8,
    /// Windows planned.
    pub windows: u64,
    /// Windows that kept no enhancement frame.
    pub base_only_windows: u64,
    /// Windows the TCP-friendly cap lowered (`tfrc-capped`).
    pub capped_windows: u64,
    /// Frames of each temporal layer (index = temporal id) in the windows
    /// planned.
    pub frames_offered: Vec<u64>,
    /// Of those, the frames sent.
    pub frames_kept: Vec<u64>,
    /// Bytes of the enhancement frames (temporal id above 0) planned.
    pub enhancement_bytes_offered: u64,
    /// Of those, the bytes of the enhancement frames sent.
    pub enhancement_bytes_kept: u64,
    /// `enhancement_bytes_kept / enhancement_bytes_offered`.
    pub enhancement_share: Option<f64>,
    /// The share of the enhancement the last window kept.
    pub last_window_share: Option<f64>,
    /// Receiver reports taken (not stale).
    pub feedbacks: u64,
    /// Of those, reports of congestion (paper 004 eq. 1).
    pub congestion_feedbacks: u64,
    /// Reports older than one already taken, ignored.
    pub stale_feedbacks: u64,
    /// RTCP packets from the receiver that were malformed buffer reports.
    pub malformed_reports: u64,
    /// η in use (eq. 2; 1 before any congestion).
    pub eta: f64,
    /// δ of eq. 5 (1: the full stream).
    pub delta: f64,
    /// The share of the enhancement the next window schedules, δ + η(1 − δ).
    pub schedule_share: f64,
    /// Why the controller cut the stream off, if it did.
    pub stop_reason: Option<String>,
}

/// A packet of a planned window, waiting for its time.
#[derive(Debug)]
pub(super) struct TimedPacket {
    /// When it leaves.
    pub(super) at: Instant,
    /// The RTP packet, with its header extension.
    pub(super) packet: Vec<u8>,
    /// Its frame's number.
    pub(super) frame: u64,
    /// The first packet of its frame.
    pub(super) first_of_frame: bool,
    /// Its frame is an IDR or I frame.
    pub(super) key: bool,
}

/// A frame encoded for the next window.
#[derive(Debug)]
struct WindowFrame {
    frame: TemporalFrame,
    packets: Vec<Vec<u8>>,
    key: bool,
}

/// The sender's side of `cc=buffer` (see the [module](self)).
#[derive(Debug)]
pub(super) struct LayeredSender {
    controller: BufferSender,
    thinner: TemporalThinner,
    packetizer: FramePacketizer,
    fps: f64,
    layers: TemporalLayers,
    frame_interval_us: u32,
    window: Vec<WindowFrame>,
    next_frame: u64,
    ended: bool,
    queue: VecDeque<TimedPacket>,
    report: BufferSendReport,
}

impl LayeredSender {
    /// The sender `config` asks for with `cc=buffer` (`None` without it),
    /// in RTP packets of at most `max_packet` bytes; a source whose
    /// a relay's frames (no temporal layers) and on-demand mode are refused.
    pub(super) fn for_config(
        config: &SendConfig,
        max_packet: usize,
    ) -> Result<Option<LayeredSender>, SendError> {
        let Some(buffer) = config.url.buffer else {
            return Ok(None);
        };
        if matches!(config.source, SourceSpec::Relay(_)) {
            return Err(SendError::Config(
                "cc=buffer needs a temporally layered source: `generated`, or a file or a \
                 pipe encoded in temporal layers (a relay's frames have none)"
                    .into(),
            ));
        }
        if config.mode == Mode::OnDemand {
            return Err(SendError::Config(
                "cc=buffer sends each 1 s window on its own schedule: on-demand mode \
                 does not apply"
                    .into(),
            ));
        }
        LayeredSender::new(buffer, config.temporal_layers, config.fps, max_packet).map(Some)
    }

    /// A sender of `layers` temporal layers at `fps` under `config` (its
    /// frame interval is set from `fps`), in RTP packets of at most
    /// `max_packet` bytes.
    pub(super) fn new(
        mut config: BufferConfig,
        layers: TemporalLayers,
        fps: f64,
        max_packet: usize,
    ) -> Result<LayeredSender, SendError> {
        let interval = Duration::try_from_secs_f64(1.0 / fps)
            .map_err(|e| SendError::Config(format!("frame rate {fps}: {e}")))?;
        config.frame_interval = interval;
        let controller = BufferSender::new(config)
            .map_err(|e| SendError::Config(format!("cc=buffer at {fps} frames/s: {e}")))?;
        let packetizer =
            FramePacketizer::new(max_packet.saturating_sub(TEMPORAL_FRAME_EXTENSION_LEN))
                .map_err(|e| SendError::Config(format!("cc=buffer: {e}")))?;
        let count = usize::from(layers.count());
        Ok(LayeredSender {
            controller,
            thinner: TemporalThinner::new(layers),
            packetizer,
            fps,
            layers,
            frame_interval_us: u32::try_from(interval.as_micros())
                .unwrap_or(u32::MAX)
                .max(1),
            window: Vec::with_capacity(config.frames_per_window()),
            next_frame: 0,
            ended: false,
            queue: VecDeque::new(),
            report: BufferSendReport {
                mode: config.mode.to_string(),
                layers: layers.count(),
                frames_offered: vec![0; count],
                frames_kept: vec![0; count],
                ..BufferSendReport::default()
            },
        })
    }

    /// Whether the window being filled wants another frame from the source.
    pub(super) fn wants_frame(&self) -> bool {
        !self.ended && self.window.len() < self.controller.config().frames_per_window()
    }

    /// The source's next frame, of temporal layer `temporal_id`, into the
    /// window being filled: packetized, each packet with its extension.
    pub(super) fn push_frame(
        &mut self,
        frame: &SplitAccessUnit,
        temporal_id: u8,
    ) -> Result<(), SendError> {
        let index = self.next_frame;
        let error = |reason: String| SendError::Source {
            source_name: "generated".into(),
            reason: format!("frame {index}: {reason}"),
        };
        let packets = self
            .packetizer
            .packetize(
                rtp_timestamp(index, self.fps),
                frame.nal_units.iter().map(Vec::as_slice),
            )
            .map_err(|e| error(e.to_string()))?;
        let bytes: usize = packets
            .iter()
            .map(|p| p.len() + TEMPORAL_FRAME_EXTENSION_LEN)
            .sum();
        let info = TemporalFrameInfo {
            frame_index: u32::try_from(index).map_err(|_| error("beyond 2³² frames".into()))?,
            temporal_id,
            layers: self.layers.count(),
            frame_bytes: u32::try_from(bytes).map_err(|_| error(format!("{bytes} bytes")))?,
            frame_interval_us: self.frame_interval_us,
        };
        let time = Duration::from_secs_f64(index as f64 / self.fps);
        let temporal = TemporalFrame::new(index, time, temporal_id, bytes as u64)
            .map_err(|e| error(e.to_string()))?;
        let packets = packets
            .iter()
            .map(|packet| with_extension(packet, &info))
            .collect::<Result<Vec<_>, _>>()
            .map_err(error)?;
        self.window.push(WindowFrame {
            frame: temporal,
            packets,
            key: frame.idr || frame.frame_type == FrameType::I,
        });
        self.next_frame += 1;
        Ok(())
    }

    /// The source has ended: the last window may be shorter.
    pub(super) fn end_source(&mut self) {
        self.ended = true;
    }

    /// Plans the window being filled once it is full (or the source ended)
    /// and its time has come; `cap` is the connection's allowed rate
    /// (`tfrc-capped`; ignored in `paper` mode).
    pub(super) fn plan(&mut self, now: Instant, cap: Option<Rate>) -> Result<(), SendError> {
        let full = self.window.len() >= self.controller.config().frames_per_window();
        let due = self.controller.next_timeout().is_none_or(|at| at <= now);
        if self.window.is_empty() || !(full || self.ended) || !due {
            return Ok(());
        }
        let frames: Vec<TemporalFrame> = self.window.iter().map(|w| w.frame).collect();
        let sizes: Vec<FrameSizes> = frames.iter().map(TemporalFrame::sizes).collect();
        let plan = match self.controller.plan_window(now, &sizes, cap) {
            Ok(plan) => plan,
            Err(BufferError::Stopped(reason)) => return Err(self.stop(reason)),
            Err(error) => return Err(SendError::Config(format!("cc=buffer: {error}"))),
        };
        let budget = plan.enhancement_bytes();
        let selection = self
            .thinner
            .select(&frames, budget)
            .map_err(|e| SendError::Config(format!("cc=buffer: {e}")))?;
        let report = &mut self.report;
        report.windows += 1;
        report.capped_windows += u64::from(plan.capped);
        report.base_only_windows += u64::from(selection.enhancement_bytes == 0);
        let offered: u64 = frames
            .iter()
            .filter(|f| !f.is_base())
            .map(|f| f.bytes())
            .sum();
        report.enhancement_bytes_offered += offered;
        report.enhancement_bytes_kept += selection.enhancement_bytes;
        report.last_window_share =
            (offered > 0).then(|| selection.enhancement_bytes as f64 / offered as f64);
        // The kept frames' packets, in order, at the plan's pacing rate from
        // the window's start.
        let mut before = 0u64;
        for (kept, window_frame) in selection.keep.iter().zip(self.window.drain(..)) {
            let layer = usize::from(window_frame.frame.temporal_id());
            if let Some(count) = report.frames_offered.get_mut(layer) {
                *count += 1;
            }
            if !kept {
                continue;
            }
            if let Some(count) = report.frames_kept.get_mut(layer) {
                *count += 1;
            }
            for (i, packet) in window_frame.packets.into_iter().enumerate() {
                let offset = plan
                    .pacing_rate
                    .time_to_send(before as f64)
                    .unwrap_or(Duration::ZERO)
                    .min(plan.duration);
                before += packet.len() as u64;
                self.queue.push_back(TimedPacket {
                    at: plan.start + offset,
                    packet,
                    frame: window_frame.frame.number(),
                    first_of_frame: i == 0,
                    key: window_frame.key,
                });
            }
        }
        Ok(())
    }

    /// The next packet whose time has come.
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<TimedPacket> {
        if self.queue.front().is_some_and(|p| p.at <= now) {
            self.queue.pop_front()
        } else {
            None
        }
    }

    /// Drops what is left of frame `frame` (a packet of it was refused).
    pub(super) fn drop_rest_of_frame(&mut self, frame: u64) {
        while self.queue.front().is_some_and(|p| p.frame == frame) {
            self.queue.pop_front();
        }
    }

    /// When the driver must call again: at once while the window wants
    /// frames, else at the next packet's time or the next window's.
    pub(super) fn next_due(&self, now: Instant) -> Option<Instant> {
        if self.wants_frame() {
            return Some(now);
        }
        let planning =
            (!self.window.is_empty()).then(|| self.controller.next_timeout().unwrap_or(now));
        [self.queue.front().map(|p| p.at), planning]
            .into_iter()
            .flatten()
            .min()
    }

    /// Every frame of an ended source has left.
    pub(super) fn is_drained(&self) -> bool {
        self.ended && self.window.is_empty() && self.queue.is_empty()
    }

    /// An RTCP packet the receiver sent back: a [`BufferReport`] steers the
    /// controller (paper 004 §2.3); one saying the base layer no longer
    /// fits ends the stream.
    pub(super) fn on_report(&mut self, now: Instant, bytes: &[u8]) -> Result<(), SendError> {
        let report = match BufferReport::parse(bytes) {
            None => return Ok(()),
            Some(Err(_)) => {
                self.report.malformed_reports += 1;
                return Ok(());
            }
            Some(Ok(report)) => report,
        };
        match self.controller.on_feedback(now, &report.feedback) {
            Ok(FeedbackVerdict::Stale) => self.report.stale_feedbacks += 1,
            Ok(verdict) => {
                self.report.feedbacks += 1;
                if verdict == FeedbackVerdict::Congestion {
                    self.report.congestion_feedbacks += 1;
                }
            }
            Err(BufferError::Stopped(reason)) => return Err(self.stop(reason)),
            // `on_feedback` refuses nothing else.
            Err(error) => return Err(SendError::Config(format!("cc=buffer: {error}"))),
        }
        Ok(())
    }

    /// What the controller did so far.
    pub(super) fn report(&self) -> BufferSendReport {
        let offered = self.report.enhancement_bytes_offered;
        BufferSendReport {
            enhancement_share: (offered > 0)
                .then(|| self.report.enhancement_bytes_kept as f64 / offered as f64),
            eta: self.controller.eta().get(),
            delta: self.controller.delta().get(),
            schedule_share: self.controller.schedule_share().get(),
            ..self.report.clone()
        }
    }

    /// The stream is cut off: nothing more leaves.
    fn stop(&mut self, reason: StopReason) -> SendError {
        self.report.stop_reason = Some(reason.to_string());
        self.queue.clear();
        self.window.clear();
        self.ended = true;
        SendError::BufferStopped(reason)
    }
}

/// `packet` with the temporal-frame header extension `info`.
fn with_extension(packet: &[u8], info: &TemporalFrameInfo) -> Result<Vec<u8>, String> {
    let data = info.extension_data();
    let mut repr = RtpRepr::parse_bytes(packet).map_err(|e| e.to_string())?;
    repr.extension = Some(HeaderExtension {
        profile: ONE_BYTE_PROFILE,
        data: &data,
    });
    let mut bytes = vec![0; repr.buffer_len()];
    repr.emit(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

impl Run {
    /// `cc=buffer`: takes the receiver's reports, encodes the next frame
    /// for the window being filled, and plans the window when it is due.
    pub(super) fn pull_layered(&mut self, now: Instant) -> Result<(), SendError> {
        let cap = self.allowed_rate();
        let Some(layered) = self.layered.as_mut() else {
            return Ok(());
        };
        while let Some(report) = self.session.poll_report() {
            layered.on_report(now, &report)?;
        }
        if layered.wants_frame() {
            match self.source.next()? {
                Next::Frame(frame, _, temporal_id) => {
                    self.sender
                        .config
                        .copy_frame(self.next_frame, &frame.nal_units);
                    self.next_frame += 1;
                    self.report.frames_read += 1;
                    layered.push_frame(&frame, temporal_id)?;
                }
                Next::NotYet => {}
                Next::End => {
                    self.source_ended = true;
                    layered.end_source();
                }
            }
        }
        layered.plan(now, cap)
    }

    /// `cc=buffer`: hands the session the packets whose time has come.
    pub(super) fn feed_layered(&mut self, now: Instant) {
        while let Some(mut timed) = self.layered.as_mut().and_then(|l| l.pop_due(now)) {
            if timed.key {
                self.gop += 1;
            }
            let meta = DatagramMeta {
                gop: self.gop,
                deadline: None,
                key: timed.key,
                retransmit: false,
                playout: Some(self.frame_time(timed.frame)),
                fec: None,
            };
            if !self.send_media(now, &mut timed.packet, meta, timed.first_of_frame) {
                if let Some(layered) = self.layered.as_mut() {
                    layered.drop_rest_of_frame(timed.frame);
                }
            }
        }
    }

    /// `tfrc-capped`'s cap: the sum over the open connections of RFC
    /// 5348's equation for the loss event rate, RTT and mean data packet
    /// size each measures (`tcp_friendly_rate`, as the simulator caps);
    /// `None` before any connection has one.
    pub(super) fn allowed_rate(&self) -> Option<Rate> {
        let endpoint = self.session.endpoint();
        let rates: Vec<Rate> = endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .filter(|c| c.state() == State::Open)
            .filter_map(|c| {
                let ccid = c.fixed_rate_sender()?;
                let stats = c.stats();
                let s = if stats.data_packets_sent > 0 {
                    stats.data_bytes_sent as f64 / stats.data_packets_sent as f64
                } else {
                    c.max_payload() as f64
                };
                tcp_friendly_rate(s, stats.rtt, ccid.loss_event_rate(), ccid.receive_rate())
            })
            .collect();
        (!rates.is_empty())
            .then(|| Rate::from_bits_per_sec(rates.iter().map(|r| r.bits_per_sec()).sum::<f64>()))
    }
}

#[cfg(test)]
mod tests;
