//! The receiver's playout buffer: when each frame is due, which packets
//! came too late, stalls, rebuffering, the start-up delay, and how much
//! media the buffer held over time.
//!
//! Rules common to both player models (EvalVid's play-out buffer, with the
//! papers' measures added):
//! - Playback starts `startup_delay` after the first packet of the stream
//!   arrives; without pauses frame *i* is due `i / fps` later.
//! - A packet that arrives after its frame is due counts as lost (and as
//!   late).
//! - A frame is lost (by type, for the reports) when any of its packets was
//!   lost or late; it is still shown if some packet came in time (the
//!   decoder conceals the rest). A frame none of whose packets came in time
//!   is not shown: the previous picture stays on screen. Each maximal run of
//!   such frames is a stall; its frozen time is the run's length / fps.
//! - `StartupDelay::Auto` is the smallest delay for which every packet that
//!   arrived was in time (for the arrivals that happened).
//! - Per GOP (from one I frame to the next) the first and last packet
//!   arrival times, as in paper 000's Figure 2.
//!
//! The player models ([`Player`]):
//! - **drop** (EvalVid, the default): deadlines never move; what is late is
//!   lost.
//! - **rebuffer** (freeze and resume, paper 001 §4: "decoding process is
//!   stopped and the display is frozen whenever the playback buffer is
//!   empty"). A frame is *complete* when the last of its packets that
//!   arrive at all has arrived. A frame that is not complete when due stops
//!   playback; playback resumes with that frame once it and the frames
//!   after it, `refill` seconds of frames in all (⌈refill · fps⌉ frames,
//!   at least the one), are complete, and every later deadline moves by the
//!   pause. Paper 001 does not say how much the buffer refills before
//!   playback resumes; the default refill is the start-up delay used (its
//!   "10 seconds worth of data before starting"), and `refill = 0` resumes
//!   as soon as the frame is complete. Two choices are ours: the player
//!   waits for the whole frame, not its first packet, because a decoder
//!   given part of a frame shows a concealed picture and paper 001's player
//!   decodes whole frames from its buffer; and a packet that never arrives
//!   does not hold playback, nor does a frame none of whose packets arrive
//!   (it is a stall, as in the drop model). The simulator knows which
//!   packets never arrive; a real player learns it from the sequence
//!   numbers of what follows, so these rules are the best such a player
//!   could do. Under this model no packet that arrives is late.
//! - Buffer occupancy, both models: a frame is in the buffer from the
//!   arrival of its last packet that came in time until it is due (then it
//!   is on screen), and counts as 1 / fps seconds of media. The occupancy
//!   is sampled every [`BUFFER_SAMPLE_INTERVAL_S`] of the receiver's clock,
//!   from the first arrival to the end of playback (paper 001 Fig. 3 plots
//!   the playback buffer over time).

mod buffer;

use serde::Serialize;

use crate::h264::FrameType;

pub use buffer::{
    format_buffer_csv, BufferSample, PlayerState, BUFFER_SAMPLE_INTERVAL_S, MAX_BUFFER_SAMPLES,
};

/// Two times this close are equal (arrival against deadline).
const TIME_EPSILON_S: f64 = 1e-12;

/// How long the receiver buffers before playback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StartupDelay {
    /// A fixed delay, seconds (paper 001 used 10 s).
    Fixed(f64),
    /// The smallest delay without late packets.
    Auto,
}

/// What the player does with a frame that is not there when it is due.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Player {
    /// EvalVid's model: playback never pauses; late packets are lost.
    #[default]
    Drop,
    /// Freeze and resume (paper 001 §4): playback pauses until the frame
    /// and a refill of frames after it are complete (see the module
    /// documentation).
    Rebuffer,
}

impl Player {
    /// The model's name, as scenarios and reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Player::Drop => "drop",
            Player::Rebuffer => "rebuffer",
        }
    }
}

/// How the receiver plays a stream out: when it starts, and what it does
/// with frames that are late.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Playback {
    /// The start-up delay.
    pub startup: StartupDelay,
    /// The player model.
    pub player: Player,
    /// [`Player::Rebuffer`]: seconds of frames that must be complete before
    /// a paused playback resumes; `None`: the start-up delay used. Ignored
    /// by [`Player::Drop`].
    pub refill_s: Option<f64>,
}

impl From<StartupDelay> for Playback {
    /// The drop model with `startup`.
    fn from(startup: StartupDelay) -> Playback {
        Playback {
            startup,
            player: Player::Drop,
            refill_s: None,
        }
    }
}

/// Whether a live sender should drop a frame rather than send it at `now`:
/// P and B frames as soon as they would arrive after their `deadline`
/// (`one_way` is the sender's estimate of the path's one-way delay), I
/// frames only once the deadline itself has passed, since every later
/// frame of their GOP needs them ("I frames last").
pub fn live_frame_is_late(
    frame_type: crate::h264::FrameType,
    now: fairstream_proto::time::Instant,
    one_way: std::time::Duration,
    deadline: fairstream_proto::time::Instant,
) -> bool {
    if frame_type == crate::h264::FrameType::I {
        now > deadline
    } else {
        now + one_way > deadline
    }
}

/// One packet of a frame: when it was sent and when (if) it arrived,
/// seconds on one clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketArrival {
    /// When the sender sent it.
    pub sent_s: f64,
    /// When it reached the receiver; `None` if it never did.
    pub arrived_s: Option<f64>,
}

/// A frame and the fate of its packets.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameArrivals {
    /// Its type.
    pub frame_type: FrameType,
    /// Its packets. A frame the sender dropped before sending has none.
    pub packets: Vec<PacketArrival>,
}

/// Counts by frame type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ByType {
    /// I frames.
    #[serde(rename = "I")]
    pub i: u64,
    /// P frames.
    #[serde(rename = "P")]
    pub p: u64,
    /// B frames.
    #[serde(rename = "B")]
    pub b: u64,
}

impl ByType {
    /// Adds `count` frames of `frame_type`.
    pub fn add(&mut self, frame_type: FrameType, count: u64) {
        match frame_type {
            FrameType::I => self.i += count,
            FrameType::P => self.p += count,
            FrameType::B => self.b += count,
        }
    }

    /// The sum over types.
    pub fn total(&self) -> u64 {
        self.i + self.p + self.b
    }
}

/// The first and last arrival of a GOP's packets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GopArrival {
    /// The GOP's first frame.
    pub first_frame: usize,
    /// Earliest arrival of one of its packets, seconds.
    pub first_arrival_s: Option<f64>,
    /// Latest arrival, seconds.
    pub last_arrival_s: Option<f64>,
}

/// What the viewer got, frame by frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FramePlayout {
    /// When the frame was due on screen, seconds.
    pub deadline_s: f64,
    /// Its packets that came in time.
    pub packets_on_time: usize,
    /// Its packets sent.
    pub packets_sent: usize,
    /// When its last in-time packet arrived.
    pub last_arrival_s: Option<f64>,
    /// Whether a picture for it was shown (some packet in time).
    pub displayed: bool,
}

/// A pause of the rebuffer model: playback stopped at `frame`'s deadline
/// and resumed when enough frames were complete.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Pause {
    /// The frame that was not complete when due; it is shown at `to_s`.
    pub frame: usize,
    /// When playback stopped (the frame's deadline before the pause),
    /// seconds.
    pub from_s: f64,
    /// When playback resumed, seconds.
    pub to_s: f64,
}

impl Pause {
    /// How long playback stood still, seconds.
    pub fn duration_s(&self) -> f64 {
        self.to_s - self.from_s
    }
}

/// The playout of a stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayoutReport {
    /// The player model.
    pub player: Player,
    /// The start-up delay used, seconds.
    pub startup_delay_s: f64,
    /// [`Player::Rebuffer`]: the refill before playback resumes, seconds;
    /// `None` for the drop model.
    pub rebuffer_refill_s: Option<f64>,
    /// Frames in the stream.
    pub frames_total: u64,
    /// Frames shown (at least one packet in time).
    pub frames_displayed: u64,
    /// Frames with a packet lost or late, by type.
    pub frames_lost: ByType,
    /// Frames lost or referring to a lost frame, by type: a lost I or P
    /// frame damages the frames that refer to it up to the next I, a lost
    /// B frame only itself ([`crate::bframes::damaged_frames`]; frames in
    /// decoding order).
    pub frames_damaged: ByType,
    /// Packets lost or late, by the type of their frame.
    pub packets_lost: ByType,
    /// Of those, packets that arrived, but after their frame was due
    /// (always 0 in the rebuffer model).
    pub packets_late: u64,
    /// Runs of frames with nothing in time.
    pub stalls: u64,
    /// Frames frozen in those runs, as time, seconds.
    pub stall_time_s: f64,
    /// Times playback paused to rebuffer (0 in the drop model).
    pub rebuffers: u64,
    /// Time playback stood paused, seconds (the sum of the pauses).
    pub rebuffer_time_s: f64,
    /// Mean delay from sending to arrival of the packets that arrived.
    pub end_to_end_delay_mean_s: Option<f64>,
    /// When the last packet to arrive arrived, seconds (paper 000's
    /// sending period, for a stream sent from time zero).
    pub last_arrival_s: Option<f64>,
    /// Per GOP first and last arrivals.
    pub gops: Vec<GopArrival>,
    /// The pauses, in order (not in JSON summaries).
    #[serde(skip)]
    pub pauses: Vec<Pause>,
    /// Buffer occupancy over time (not in JSON summaries: `--out` writes
    /// it as CSV).
    #[serde(skip)]
    pub buffer: Vec<BufferSample>,
    /// Per frame (not in JSON summaries: `--out` writes it as CSV).
    #[serde(skip)]
    pub frames: Vec<FramePlayout>,
}

/// Plays `frames` out at `fps` as `playback` says (a [`StartupDelay`]
/// alone is the drop model with that delay).
pub fn play_out(
    frames: &[FrameArrivals],
    fps: f64,
    playback: impl Into<Playback>,
) -> PlayoutReport {
    let playback = playback.into();
    let period = if fps > 0.0 && fps.is_finite() {
        1.0 / fps
    } else {
        0.0
    };
    let first_arrival = frames
        .iter()
        .flat_map(|f| f.packets.iter().filter_map(|p| p.arrived_s))
        .fold(None, |min: Option<f64>, t| {
            Some(min.map_or(t, |m| m.min(t)))
        });
    let start = first_arrival.unwrap_or(0.0);
    let delay = match playback.startup {
        StartupDelay::Fixed(d) => d.max(0.0),
        StartupDelay::Auto => frames
            .iter()
            .enumerate()
            .flat_map(|(i, f)| {
                f.packets
                    .iter()
                    .filter_map(move |p| p.arrived_s.map(|a| a - start - i as f64 * period))
            })
            .fold(0.0f64, f64::max),
    };
    // Rebuffer model: the frames that must be complete before playback
    // resumes, the stalled one included.
    let refill_s = match playback.player {
        Player::Drop => None,
        Player::Rebuffer => Some(
            playback
                .refill_s
                .filter(|r| r.is_finite())
                .map_or(delay, |r| r.max(0.0)),
        ),
    };
    let refill_frames = refill_s.map_or(1, |r| {
        let wanted = (r * fps - 1e-9).ceil();
        if wanted.is_finite() && wanted >= 1.0 {
            wanted.min(frames.len() as f64) as usize
        } else {
            1
        }
    });
    // When each frame is complete: its last packet that arrives at all.
    let complete: Vec<Option<f64>> = frames
        .iter()
        .map(|f| {
            f.packets
                .iter()
                .filter_map(|p| p.arrived_s)
                .reduce(f64::max)
        })
        .collect();
    let mut report = PlayoutReport {
        player: playback.player,
        startup_delay_s: delay,
        rebuffer_refill_s: refill_s,
        frames_total: frames.len() as u64,
        frames_displayed: 0,
        frames_lost: ByType::default(),
        frames_damaged: ByType::default(),
        packets_lost: ByType::default(),
        packets_late: 0,
        stalls: 0,
        stall_time_s: 0.0,
        rebuffers: 0,
        rebuffer_time_s: 0.0,
        end_to_end_delay_mean_s: None,
        last_arrival_s: complete.iter().flatten().copied().reduce(f64::max),
        gops: Vec::new(),
        pauses: Vec::new(),
        buffer: Vec::new(),
        frames: Vec::with_capacity(frames.len()),
    };
    let (mut delay_sum, mut delay_count) = (0.0, 0u64);
    let mut lost = vec![false; frames.len()];
    let mut in_stall = false;
    // Rebuffer model: how far the pauses so far moved the deadlines.
    let mut shift = 0.0;
    for (i, frame) in frames.iter().enumerate() {
        let mut deadline = start + delay + i as f64 * period + shift;
        if playback.player == Player::Rebuffer {
            // Paper 001 §4: "decoding process is stopped and the display is
            // frozen whenever the playback buffer is empty"; it resumes once
            // the refill is complete (module documentation).
            if let Some(ready) = complete[i].filter(|r| *r > deadline + TIME_EPSILON_S) {
                let end = (i + refill_frames).min(frames.len());
                let resume = complete[i..end]
                    .iter()
                    .flatten()
                    .fold(ready, |a, b| a.max(*b));
                report.pauses.push(Pause {
                    frame: i,
                    from_s: deadline,
                    to_s: resume,
                });
                report.rebuffers += 1;
                report.rebuffer_time_s += resume - deadline;
                shift += resume - deadline;
                deadline = resume;
            }
        }
        let on_time: Vec<f64> = frame
            .packets
            .iter()
            .filter_map(|p| p.arrived_s.filter(|a| *a <= deadline + TIME_EPSILON_S))
            .collect();
        let mut arrived = 0usize;
        for p in &frame.packets {
            if let Some(a) = p.arrived_s {
                delay_sum += a - p.sent_s;
                delay_count += 1;
                arrived += 1;
            }
        }
        report.packets_late += (arrived - on_time.len()) as u64;
        let missing = (frame.packets.len() - on_time.len()) as u64;
        report.packets_lost.add(frame.frame_type, missing);
        if missing > 0 || frame.packets.is_empty() {
            report.frames_lost.add(frame.frame_type, 1);
            lost[i] = true;
        }
        let displayed = !on_time.is_empty();
        if displayed {
            report.frames_displayed += 1;
            in_stall = false;
        } else {
            if !in_stall {
                report.stalls += 1;
            }
            in_stall = true;
            report.stall_time_s += period;
        }
        if frame.frame_type == FrameType::I || report.gops.is_empty() {
            report.gops.push(GopArrival {
                first_frame: i,
                first_arrival_s: None,
                last_arrival_s: None,
            });
        }
        if let Some(gop) = report.gops.last_mut() {
            for a in frame.packets.iter().filter_map(|p| p.arrived_s) {
                gop.first_arrival_s = Some(gop.first_arrival_s.map_or(a, |f| f.min(a)));
                gop.last_arrival_s = Some(gop.last_arrival_s.map_or(a, |l| l.max(a)));
            }
        }
        report.frames.push(FramePlayout {
            deadline_s: deadline,
            packets_on_time: on_time.len(),
            packets_sent: frame.packets.len(),
            last_arrival_s: on_time.iter().copied().reduce(f64::max),
            displayed,
        });
    }
    report.end_to_end_delay_mean_s = (delay_count > 0).then(|| delay_sum / delay_count as f64);
    let types: Vec<FrameType> = frames.iter().map(|f| f.frame_type).collect();
    for (frame_type, damaged) in types
        .iter()
        .zip(crate::bframes::damaged_frames(&types, &lost))
    {
        report.frames_damaged.add(*frame_type, u64::from(damaged));
    }
    if first_arrival.is_some() {
        report.buffer = buffer::sample(&report.frames, &report.pauses, period, start);
    }
    report
}

#[cfg(test)]
mod tests;
