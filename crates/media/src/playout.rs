//! The receiver's playout buffer: when each frame is due, which packets
//! came too late, stalls, and the start-up delay.
//!
//! Rules (EvalVid's play-out buffer, with the papers' measures added):
//! - Playback starts `startup_delay` after the first packet of the stream
//!   arrives; frame *i* is due `i / fps` later.
//! - A packet that arrives after its frame is due counts as lost.
//! - A frame is lost (by type, for the reports) when any of its packets was
//!   lost or late; it is still shown if some packet came in time (the
//!   decoder conceals the rest). A frame none of whose packets came in time
//!   is not shown: the previous picture stays on screen. Each maximal run of
//!   such frames is a stall; its frozen time is the run's length / fps.
//! - `StartupDelay::Auto` is the smallest delay for which every packet that
//!   arrived was in time (for the arrivals that happened).
//! - Per GOP (from one I frame to the next) the first and last packet
//!   arrival times, as in paper 000's Figure 2.

use serde::Serialize;

use crate::h264::FrameType;

/// How long the receiver buffers before playback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StartupDelay {
    /// A fixed delay, seconds (paper 001 used 10 s).
    Fixed(f64),
    /// The smallest delay without late packets.
    Auto,
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

/// The playout of a stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayoutReport {
    /// The start-up delay used, seconds.
    pub startup_delay_s: f64,
    /// Frames in the stream.
    pub frames_total: u64,
    /// Frames shown (at least one packet in time).
    pub frames_displayed: u64,
    /// Frames with a packet lost or late, by type.
    pub frames_lost: ByType,
    /// Packets lost or late, by the type of their frame.
    pub packets_lost: ByType,
    /// Runs of frames with nothing in time.
    pub stalls: u64,
    /// Frames frozen in those runs, as time, seconds.
    pub stall_time_s: f64,
    /// Mean delay from sending to arrival of the packets that arrived.
    pub end_to_end_delay_mean_s: Option<f64>,
    /// Per GOP first and last arrivals.
    pub gops: Vec<GopArrival>,
    /// Per frame (not in JSON summaries: `--out` writes it as CSV).
    #[serde(skip)]
    pub frames: Vec<FramePlayout>,
}

/// Plays `frames` out at `fps` with `startup`.
pub fn play_out(frames: &[FrameArrivals], fps: f64, startup: StartupDelay) -> PlayoutReport {
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
    let delay = match startup {
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
    let mut report = PlayoutReport {
        startup_delay_s: delay,
        frames_total: frames.len() as u64,
        frames_displayed: 0,
        frames_lost: ByType::default(),
        packets_lost: ByType::default(),
        stalls: 0,
        stall_time_s: 0.0,
        end_to_end_delay_mean_s: None,
        gops: Vec::new(),
        frames: Vec::with_capacity(frames.len()),
    };
    let (mut delay_sum, mut delay_count) = (0.0, 0u64);
    let mut in_stall = false;
    for (i, frame) in frames.iter().enumerate() {
        let deadline = start + delay + i as f64 * period;
        let on_time: Vec<f64> = frame
            .packets
            .iter()
            .filter_map(|p| p.arrived_s.filter(|a| *a <= deadline + 1e-12))
            .collect();
        for p in &frame.packets {
            if let Some(a) = p.arrived_s {
                delay_sum += a - p.sent_s;
                delay_count += 1;
            }
        }
        let missing = (frame.packets.len() - on_time.len()) as u64;
        report.packets_lost.add(frame.frame_type, missing);
        if missing > 0 || frame.packets.is_empty() {
            report.frames_lost.add(frame.frame_type, 1);
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
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_senders_give_up_p_frames_before_i_frames() {
        use fairstream_proto::time::Instant;
        use std::time::Duration;
        let deadline = Instant::from_millis(1000);
        let one_way = Duration::from_millis(50);
        let at = Instant::from_millis(960);
        // 40 ms before the deadline with 50 ms to go: a P or B frame is late,
        // an I frame is still sent.
        assert!(live_frame_is_late(FrameType::P, at, one_way, deadline));
        assert!(live_frame_is_late(FrameType::B, at, one_way, deadline));
        assert!(!live_frame_is_late(FrameType::I, at, one_way, deadline));
        assert!(live_frame_is_late(
            FrameType::I,
            Instant::from_millis(1001),
            one_way,
            deadline
        ));
        assert!(!live_frame_is_late(
            FrameType::P,
            Instant::from_millis(900),
            one_way,
            deadline
        ));
    }

    fn frame(frame_type: FrameType, arrivals: &[Option<f64>]) -> FrameArrivals {
        FrameArrivals {
            frame_type,
            packets: arrivals
                .iter()
                .map(|a| PacketArrival {
                    sent_s: 0.0,
                    arrived_s: *a,
                })
                .collect(),
        }
    }

    #[test]
    fn late_packets_count_as_lost_and_empty_frames_stall() {
        // 10 fps; first arrival at 1.0 s; fixed 0.5 s delay: frame i due at
        // 1.5 + 0.1 i.
        let frames = vec![
            frame(FrameType::I, &[Some(1.0), Some(1.2)]),
            frame(FrameType::P, &[Some(1.55)]),
            frame(FrameType::P, &[Some(1.8)]), // due 1.7: late
            frame(FrameType::P, &[None]),      // lost
            frame(FrameType::P, &[Some(1.7), None]), // partly there
            frame(FrameType::I, &[Some(1.9)]),
        ];
        let r = play_out(&frames, 10.0, StartupDelay::Fixed(0.5));
        assert_eq!(r.frames_total, 6);
        assert_eq!(r.frames_displayed, 4);
        assert_eq!(r.frames_lost, ByType { i: 0, p: 3, b: 0 });
        assert_eq!(r.packets_lost.total(), 3);
        assert_eq!(r.stalls, 1, "frames 2 and 3 form one stall");
        assert!((r.stall_time_s - 0.2).abs() < 1e-12);
        assert_eq!(r.gops.len(), 2);
        assert_eq!(r.gops[0].first_arrival_s, Some(1.0));
        assert_eq!(r.gops[0].last_arrival_s, Some(1.8));
        assert_eq!(r.gops[1].first_frame, 5);
    }

    #[test]
    fn auto_delay_is_the_smallest_without_late_packets() {
        let frames = vec![
            frame(FrameType::I, &[Some(0.0), Some(0.35)]),
            frame(FrameType::P, &[Some(0.2)]),
            frame(FrameType::P, &[Some(0.9)]),
        ];
        let r = play_out(&frames, 10.0, StartupDelay::Auto);
        // Frame 2 arrives 0.9 s after the start; it is due at D + 0.2.
        assert!((r.startup_delay_s - 0.7).abs() < 1e-12);
        assert_eq!(r.frames_lost.total(), 0);
        assert_eq!(r.stalls, 0);
        // One tenth less and frame 2 is late.
        let r = play_out(&frames, 10.0, StartupDelay::Fixed(0.6));
        assert_eq!(r.frames_lost.total(), 1);
    }

    #[test]
    fn nothing_arrived_is_all_stall() {
        let frames = vec![frame(FrameType::I, &[None]), frame(FrameType::P, &[None])];
        let r = play_out(&frames, 25.0, StartupDelay::Auto);
        assert_eq!(r.frames_displayed, 0);
        assert_eq!(r.stalls, 1);
        assert_eq!(r.end_to_end_delay_mean_s, None);
        let empty = play_out(&[], 25.0, StartupDelay::Auto);
        assert_eq!(empty.frames_total, 0);
    }
}
