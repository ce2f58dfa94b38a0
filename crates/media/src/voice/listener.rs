//! The listener of a voice call: what became of each frame, when it
//! plays, and the call's E-model score. The simulator's voice flows and
//! the real receiver (`fairstream recv --wav`) both score with it.
//!
//! - **Frames.** The call's frames in sequence order from its first, each
//!   with its capture time (on the listener's time axis) and fate: sent
//!   and not (yet) arrived, dropped at the sender, or arrived after some
//!   delay from capture. A frame whose capture comes more than one and a
//!   half frame intervals after the previous one's starts a talk spurt
//!   (voice activity detection left a silence; RFC 3551 §4.1 marks such a
//!   frame too). At most `max_frames` frames are kept: the state of a call
//!   is bounded whatever the peer sends.
//! - **Playout** ([`JitterBuffer`]): fixed, each frame at its capture time
//!   plus the one-way delay of the call's first frame to arrive plus the
//!   buffer; or adaptive, each talk spurt at the delay Ramjee et al.'s
//!   algorithm 1 gives when its first frame arrives. A spurt of which
//!   nothing arrived plays as the spurt before it. A frame that arrives
//!   after its playout time is late, which the E-model counts as lost.
//! - **Score** ([`VoiceListener::score`]). Ppl is the share of the call's
//!   frames not played (lost on the way, dropped at the sender, or late),
//!   BurstR that of their pattern ([`LossPattern`]), and the mouth-to-ear
//!   delay Ta is the codec's delay (20 ms of speech plus its look-ahead)
//!   plus the playout delay (the mean over the frames scored when it
//!   adapts); R and MOS come from [`EModelInput`] with the codec's Ie and
//!   Bpl and T = Ta, Tr = 2·Ta. Frames whose playout time is after `end`
//!   are left out.
//!
//! Time is a parameter: captures and arrivals are durations from an origin
//! the caller chooses, the same for both.

use std::time::Duration;

use serde::Serialize;

use super::playout::{DelayEstimate, JitterBuffer};
use super::{VoiceCodec, VOICE_FRAME};
use crate::emodel::{EModelInput, LossPattern};

/// What became of one frame of the call.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fate {
    /// Sent, not (yet) arrived.
    Pending,
    /// Dropped at the sender: the transmit buffer was full.
    Dropped,
    /// Arrived, this long after its capture.
    Arrived(Duration),
}

/// One frame of the call.
#[derive(Clone, Copy, Debug)]
struct Frame {
    capture: Duration,
    /// Its talk spurt's index.
    spurt: u32,
    fate: Fate,
}

/// The listener's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListenerConfig {
    /// The call's codec.
    pub codec: VoiceCodec,
    /// G.711 with packet-loss concealment (scored with G.113's Bpl of
    /// 25.1 rather than 4.3).
    pub plc: bool,
    /// The de-jitter buffer.
    pub jitter_buffer: JitterBuffer,
    /// The most frames of a call kept; later frames are not scored.
    pub max_frames: usize,
}

/// The most frames of a call the simulator's listener keeps: a day at 50
/// frames/s.
pub const MAX_CALL_FRAMES: usize = 50 * 86_400;

/// One call's listener (see the [module](self)).
#[derive(Clone, Debug)]
pub struct VoiceListener {
    config: ListenerConfig,
    frames: Vec<Frame>,
    /// Each talk spurt's playout delay (from capture), once a frame of it
    /// arrived.
    spurts: Vec<Option<Duration>>,
    /// The one-way delay of the call's first frame to arrive.
    first_delay: Option<Duration>,
    estimate: DelayEstimate,
}

/// A call's score: what became of its frames, its delays, R and MOS.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VoiceScore {
    /// The call's frames (due by the end).
    pub frames: u64,
    /// Frames that reached the listener, late ones included.
    pub received: u64,
    /// Frames played: arrived by their playout time.
    pub played: u64,
    /// Frames that arrived after their playout time.
    pub late: u64,
    /// Frames that never arrived (lost on the way or dropped at the
    /// sender).
    pub lost: u64,
    /// Of those, the ones dropped at the sender.
    pub sender_drops: u64,
    /// Ppl: the frames not played (lost or late) in percent of the call's.
    pub loss_percent: f64,
    /// BurstR of the frames not played (G.107 §3.5; 1 when none was).
    pub burst_ratio: f64,
    /// Mean one-way delay of the frames received, capture to arrival,
    /// seconds.
    pub mean_network_delay_s: Option<f64>,
    /// The playout delay from capture, seconds (the mean over the frames
    /// scored with an adaptive buffer).
    pub playout_delay_s: Option<f64>,
    /// Ta, mouth to ear: the codec's delay plus the playout delay,
    /// seconds; `null` if nothing arrived.
    pub mouth_to_ear_s: Option<f64>,
    /// R, G.107's transmission rating; `null` if nothing arrived.
    pub r: Option<f64>,
    /// MOS from R (G.107 Annex B); `null` if nothing arrived.
    pub mos: Option<f64>,
}

impl VoiceListener {
    /// A listener with no frame yet.
    pub fn new(config: ListenerConfig) -> VoiceListener {
        VoiceListener {
            config,
            frames: Vec::new(),
            spurts: Vec::new(),
            first_delay: None,
            estimate: DelayEstimate::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ListenerConfig {
        &self.config
    }

    /// The call's frames so far.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether no frame was captured yet.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The capture time of frame `index`.
    pub fn capture(&self, index: usize) -> Option<Duration> {
        self.frames.get(index).map(|f| f.capture)
    }

    /// The call's next frame was captured at `capture` (not earlier than the
    /// frame before); its index, or `None` once `max_frames` are kept.
    pub fn push_frame(&mut self, capture: Duration) -> Option<usize> {
        if self.frames.len() >= self.config.max_frames {
            return None;
        }
        // A gap of more than 1.5 frame intervals is a silence.
        let spurt = match self.frames.last() {
            Some(last) if capture.saturating_sub(last.capture) <= VOICE_FRAME * 3 / 2 => last.spurt,
            _ => {
                self.spurts.push(None);
                u32::try_from(self.spurts.len() - 1).unwrap_or(u32::MAX)
            }
        };
        self.frames.push(Frame {
            capture,
            spurt,
            fate: Fate::Pending,
        });
        Some(self.frames.len() - 1)
    }

    /// Frame `index` was dropped at the sender.
    pub fn drop_frame(&mut self, index: usize) {
        if let Some(frame) = self.frames.get_mut(index) {
            frame.fate = Fate::Dropped;
        }
    }

    /// Frame `index` arrived at `arrival` (the first copy counts; unknown
    /// frames are ignored). Whether it was taken.
    pub fn arrive(&mut self, index: usize, arrival: Duration) -> bool {
        let Some(frame) = self.frames.get_mut(index) else {
            return false;
        };
        if frame.fate != Fate::Pending {
            return false;
        }
        let delay = arrival.saturating_sub(frame.capture);
        frame.fate = Fate::Arrived(delay);
        let spurt = frame.spurt as usize;
        self.first_delay.get_or_insert(delay);
        if let JitterBuffer::Adaptive = self.config.jitter_buffer {
            // Ramjee et al. 1994, algorithm 1: the estimates move with every
            // frame; a spurt's first frame to arrive sets its delay.
            self.estimate.update(delay);
            if let Some(slot) = self.spurts.get_mut(spurt) {
                if slot.is_none() {
                    *slot = self.estimate.playout_delay();
                }
            }
        }
        true
    }

    /// Frame `index`'s playout delay from capture, if one is known yet.
    pub fn playout_delay(&self, index: usize) -> Option<Duration> {
        match self.config.jitter_buffer {
            JitterBuffer::Fixed(buffer) => self.first_delay.map(|d| d + buffer),
            JitterBuffer::Adaptive => {
                let spurt = self.frames.get(index)?.spurt as usize;
                // This spurt's, else the latest before it, else the first.
                self.spurts
                    .get(..=spurt)?
                    .iter()
                    .rev()
                    .flatten()
                    .next()
                    .or_else(|| self.spurts.iter().flatten().next())
                    .copied()
            }
        }
    }

    /// Frame `index`'s playout time, if known.
    pub fn playout_time(&self, index: usize) -> Option<Duration> {
        Some(self.capture(index)? + self.playout_delay(index)?)
    }

    /// Whether frame `index` arrived by its playout time.
    pub fn on_time(&self, index: usize) -> bool {
        match (self.frames.get(index), self.playout_delay(index)) {
            (
                Some(Frame {
                    fate: Fate::Arrived(delay),
                    ..
                }),
                Some(playout),
            ) => *delay <= playout,
            _ => false,
        }
    }

    /// The call scored at `end` (see the [module](self)).
    pub fn score(&self, end: Duration) -> VoiceScore {
        let codec = self.config.codec;
        let mut pattern = LossPattern::new();
        let (mut late, mut lost, mut dropped, mut received) = (0, 0, 0, 0);
        let mut delay_sum_s = 0.0;
        let mut playout_sum_s = 0.0;
        let mut playout_count = 0u64;
        for (index, frame) in self.frames.iter().enumerate() {
            let playout = self.playout_delay(index);
            // Not yet due at the end (or nothing ever arrived: all count).
            if playout.is_some_and(|p| frame.capture + p > end) {
                continue;
            }
            if let Some(p) = playout {
                playout_sum_s += p.as_secs_f64();
                playout_count += 1;
            }
            let played = match frame.fate {
                Fate::Arrived(delay) => {
                    received += 1;
                    delay_sum_s += delay.as_secs_f64();
                    let on_time = playout.is_some_and(|p| delay <= p);
                    if !on_time {
                        late += 1;
                    }
                    on_time
                }
                Fate::Dropped => {
                    dropped += 1;
                    lost += 1;
                    false
                }
                Fate::Pending => {
                    lost += 1;
                    false
                }
            };
            pattern.push(!played);
        }
        let mouth_to_ear_s = match self.config.jitter_buffer {
            // Exactly the codec's delay plus the fixed playout delay.
            JitterBuffer::Fixed(buffer) => self
                .first_delay
                .map(|d| (codec.delay() + d + buffer).as_secs_f64()),
            JitterBuffer::Adaptive => (playout_count > 0)
                .then(|| codec.delay().as_secs_f64() + playout_sum_s / playout_count as f64),
        };
        let playout_delay_s = match self.config.jitter_buffer {
            JitterBuffer::Fixed(buffer) => self.first_delay.map(|d| (d + buffer).as_secs_f64()),
            JitterBuffer::Adaptive => {
                (playout_count > 0).then(|| playout_sum_s / playout_count as f64)
            }
        };
        let emodel = codec.emodel(self.config.plc);
        let rating = mouth_to_ear_s.and_then(|ta_s| {
            EModelInput {
                ppl_percent: pattern.loss_percent(),
                burst_ratio: pattern.burst_ratio(),
                ..EModelInput::default()
                    .with_codec(emodel)
                    .with_mouth_to_ear_delay(ta_s * 1e3)
            }
            .evaluate()
            .ok()
        });
        VoiceScore {
            frames: pattern.packets(),
            received,
            played: pattern.packets() - pattern.lost(),
            late,
            lost,
            sender_drops: dropped,
            loss_percent: pattern.loss_percent(),
            burst_ratio: pattern.burst_ratio(),
            mean_network_delay_s: (received > 0).then(|| delay_sum_s / received as f64),
            playout_delay_s,
            mouth_to_ear_s,
            r: rating.map(|r| r.r),
            mos: rating.map(|r| r.mos),
        }
    }
}

#[cfg(test)]
mod tests;
