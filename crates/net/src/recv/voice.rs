//! `fairstream recv URL --wav FILE`: the listener of a voice call (issue
//! 16). Every packet of the stream is a voice frame
//! ([`fairstream_media::voice::rtp`]); the call's frames are scored by the
//! same [`VoiceListener`] as the simulator's voice flows, and the audio is
//! written to an 8 kHz 16-bit mono WAV file as it plays.
//!
//! - **Delay.** A frame's one-way delay is its arrival on this host's
//!   clock less its capture time on the sender's, both as Unix time (the
//!   capture time travels in the packet's header extension): exact when
//!   sender and receiver share a host, as good as their clocks'
//!   synchronisation otherwise (NTP: a few ms; an offset adds to every
//!   delay, and to Ta). A capture time later than the arrival counts as no
//!   delay.
//! - **Frames.** The call's frames are numbered from the first packet
//!   flagged as in the call (the sender's probes before it are played, not
//!   scored), by extended RTP sequence number; a frame missing from the
//!   numbers is lost, its capture time taken as 20 ms after the frame
//!   before. When the RTP timestamp runs on by more frames than the
//!   sequence number and the packet has no marker bit (no talk spurt
//!   starts: RFC 3551 §4.1), the frames between were dropped at the
//!   sender (its transmit buffer was full; the sequence number counts the
//!   packets sent, RFC 3550 §5.1): they are scored as dropped (lost), as
//!   the simulator's listener scores them, and concealed in the audio. (A
//!   lost first packet of a talk spurt makes its silence look like drops:
//!   ours.) Only the first sender's SSRC and payload type are taken;
//!   other packets are counted and dropped, as are malformed ones and jumps
//!   of more than [`MAX_GAP_FRAMES`] frames. The listener keeps at most
//!   [`MAX_CALL_FRAMES`] frames (3 h), and the audio waiting for its
//!   playout time is bounded by [`MAX_WAITING`] frames: memory is bounded
//!   whatever the sender sends.
//! - **Audio.** Frame i is written when its playout time has come: decoded
//!   if it arrived in time, else concealed ([`Concealer`], after G.711
//!   Appendix I); a silence between talk spurts (the RTP timestamp ran on)
//!   is written as silence. G.729 has no decoder here: its frames are
//!   scored and written as silence.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::time::Duration;

use fairstream_media::voice::listener::{ListenerConfig, VoiceListener, VoiceScore};
use fairstream_media::voice::playout::JitterBuffer;
use fairstream_media::voice::plc::Concealer;
use fairstream_media::voice::rtp;
use fairstream_media::voice::wav::WavWriter;
use fairstream_media::voice::{g711, VoiceCodec, FRAME_SAMPLES, SAMPLE_RATE, VOICE_FRAME};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::rtp::sequence_delta;
use serde::Serialize;

use crate::clock::WallClock;

/// The most frames of a call scored: 3 hours at 50 frames/s.
pub const MAX_CALL_FRAMES: usize = 50 * 3 * 3600;
/// The largest forward jump in sequence numbers taken (1 minute of
/// frames); a larger one is dropped as malformed.
pub const MAX_GAP_FRAMES: u64 = 3000;
/// The most frames held waiting for their playout time (20 s).
pub const MAX_WAITING: usize = 1000;
/// The longest silence written for one jump of the RTP timestamp (10 s).
const MAX_SILENCE_SAMPLES: u64 = 10 * SAMPLE_RATE as u64;

/// The receiver's voice options (`--wav`, `--jitter-buffer`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoiceOutput {
    /// The WAV file written.
    pub wav: PathBuf,
    /// The de-jitter buffer.
    pub jitter_buffer: JitterBuffer,
}

/// What the voice receiver heard, in the summary (`voice`) and the
/// statistics lines.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VoiceRecvReport {
    /// `g711` or `g729` (from the payload type); `null` before a packet.
    pub codec: Option<String>,
    /// The E-model codec scored: `g711-plc` (G.711 with this receiver's
    /// concealment) or `g729`.
    pub emodel_codec: Option<String>,
    /// `fixed` or `adaptive`.
    pub jitter_buffer: String,
    /// The fixed buffer, seconds (`null` when adaptive).
    pub jitter_buffer_s: Option<f64>,
    /// Voice packets taken (probes and call).
    pub packets: u64,
    /// Of those, the sender's probes before the call started.
    pub probe_packets: u64,
    /// Packets dropped: not a voice frame, another SSRC or codec, a jump.
    pub malformed_packets: u64,
    /// Duplicates, and frames that came after they were played (late).
    pub stale_packets: u64,
    /// The call's score: frames, lost, late, loss %, burst ratio, delays,
    /// Ta, R and MOS (`null` before the call).
    #[serde(flatten)]
    pub score: Option<VoiceScore>,
    /// Frames written to the WAV file (decoded or concealed).
    pub frames_written: u64,
    /// Of those, concealed (lost or late).
    pub frames_concealed: u64,
    /// Samples in the WAV file.
    pub wav_samples: u64,
    /// The WAV file.
    pub wav: String,
}

/// A frame waiting for its playout.
#[derive(Debug)]
struct Waiting {
    timestamp: u32,
    marker: bool,
    payload: Vec<u8>,
}

/// The most places where the sender dropped frames remembered (beyond,
/// further drops count as losses).
const MAX_DROP_RUNS: usize = 4096;

/// The receiver's side of a call (see the [module](self)).
#[derive(Debug)]
pub(super) struct VoiceReceiver {
    output: VoiceOutput,
    wall: WallClock,
    writer: WavWriter<BufWriter<File>>,
    concealer: Concealer,
    /// The stream's SSRC and codec, from its first packet.
    stream: Option<(u32, VoiceCodec)>,
    /// The highest extended sequence number, and its 16-bit value.
    highest: Option<(u64, u16)>,
    /// The extended sequence number of the call's first frame.
    call_first: Option<u64>,
    listener: Option<VoiceListener>,
    /// Frames arrived, not yet played, by extended sequence number.
    waiting: BTreeMap<u64, Waiting>,
    /// The next frame to play (extended sequence number).
    next_play: Option<u64>,
    /// The RTP timestamp the next frame should have if no silence came.
    next_timestamp: Option<u32>,
    /// The highest in-call extended sequence number and its timestamp.
    call_last: Option<(u64, u32)>,
    /// From each of these extended sequence numbers on, the frames the
    /// sender dropped before it, in all: a frame's index in the listener
    /// is its distance from the call's first plus these.
    drop_runs: Vec<(u64, u64)>,
    report: VoiceRecvReport,
    buf: Vec<i16>,
}

impl VoiceReceiver {
    /// Creates the WAV file.
    pub(super) fn new(output: VoiceOutput, wall: WallClock) -> io::Result<VoiceReceiver> {
        let file = File::create(&output.wav).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create {}: {e}", output.wav.display()),
            )
        })?;
        let writer = WavWriter::new(BufWriter::new(file))?;
        let (kind, fixed) = match output.jitter_buffer {
            JitterBuffer::Fixed(d) => ("fixed", Some(d.as_secs_f64())),
            JitterBuffer::Adaptive => ("adaptive", None),
        };
        Ok(VoiceReceiver {
            report: VoiceRecvReport {
                jitter_buffer: kind.into(),
                jitter_buffer_s: fixed,
                wav: output.wav.display().to_string(),
                ..VoiceRecvReport::default()
            },
            output,
            wall,
            writer,
            concealer: Concealer::new(),
            stream: None,
            highest: None,
            call_first: None,
            listener: None,
            waiting: BTreeMap::new(),
            next_play: None,
            next_timestamp: None,
            call_last: None,
            drop_runs: Vec::new(),
            buf: Vec::with_capacity(FRAME_SAMPLES),
        })
    }

    /// A packet of the stream arrived at `now`.
    pub(super) fn on_packet(&mut self, now: Instant, bytes: &[u8]) {
        let Ok(packet) = rtp::parse(bytes) else {
            self.report.malformed_packets += 1;
            return;
        };
        let (ssrc, codec) = *self.stream.get_or_insert((packet.ssrc, packet.codec));
        if packet.ssrc != ssrc || packet.codec != codec {
            self.report.malformed_packets += 1;
            return;
        }
        // RFC 3550 Appendix A.1's extension of the 16-bit number.
        let extended = match self.highest {
            None => 1u64 << 32,
            Some((high, high16)) => {
                let delta = i64::from(sequence_delta(high16, packet.sequence_number));
                let Some(extended) = high.checked_add_signed(delta) else {
                    self.report.malformed_packets += 1;
                    return;
                };
                extended
            }
        };
        if let Some((high, _)) = self.highest {
            if extended > high + MAX_GAP_FRAMES {
                self.report.malformed_packets += 1;
                return;
            }
        }
        if self.highest.is_none_or(|(high, _)| extended > high) {
            self.highest = Some((extended, packet.sequence_number));
        }
        self.next_play.get_or_insert(extended);
        self.report.packets += 1;
        if self.report.codec.is_none() {
            self.report.codec = Some(codec.name().into());
            // G.711 with this receiver's concealment; G.729's own.
            self.report.emodel_codec = Some(codec.emodel(true).name().into());
        }
        let arrival = Duration::from_nanos(now.as_nanos());
        let capture =
            Duration::from_nanos(self.wall.instant(packet.capture.capture_unix_ns).as_nanos())
                .min(arrival);
        if packet.capture.in_call && self.call_first.is_none() {
            self.call_first = Some(extended);
            self.listener = Some(VoiceListener::new(ListenerConfig {
                codec,
                plc: true,
                jitter_buffer: self.output.jitter_buffer,
                max_frames: MAX_CALL_FRAMES,
            }));
        }
        let in_call = self.call_first.filter(|first| extended >= *first);
        // Frames the sender dropped just before this packet.
        let mut dropped = None;
        if let (Some(_), Some((last, last_timestamp))) = (in_call, self.call_last) {
            let frames =
                u64::from(packet.timestamp.wrapping_sub(last_timestamp)) / FRAME_SAMPLES as u64;
            let numbers = extended.saturating_sub(last);
            if extended > last
                && !packet.marker
                && frames > numbers
                && frames - numbers <= MAX_GAP_FRAMES
                && self.drop_runs.len() < MAX_DROP_RUNS
            {
                let extra = frames - numbers;
                let before = self.drops_before(last);
                self.drop_runs.push((extended, before + extra));
                // After the packets lost between (ours: their order is not
                // known), before this one.
                let first = self.call_first.unwrap_or(last);
                dropped = Some(((last - first + before + numbers) as usize, extra as usize));
            }
        }
        if in_call.is_some() && self.call_last.is_none_or(|(last, _)| extended > last) {
            self.call_last = Some((extended, packet.timestamp));
        }
        let shift = self.drops_before(extended);
        match (in_call, self.listener.as_mut()) {
            (Some(first), Some(listener)) => {
                let index = (extended - first + shift) as usize;
                while listener.len() <= index {
                    let at = if listener.len() == index {
                        capture
                    } else {
                        listener
                            .capture(listener.len().wrapping_sub(1))
                            .map_or(capture, |c| c + VOICE_FRAME)
                    };
                    if listener.push_frame(at).is_none() {
                        break;
                    }
                }
                if let Some((start, count)) = dropped {
                    for i in start..start + count {
                        listener.drop_frame(i);
                    }
                }
                if !listener.arrive(index, arrival) {
                    self.report.stale_packets += 1;
                    return;
                }
            }
            _ => self.report.probe_packets += 1,
        }
        let before_next = self.next_play.is_some_and(|next| extended < next);
        if before_next || self.waiting.contains_key(&extended) {
            self.report.stale_packets += 1;
            return;
        }
        self.waiting.insert(
            extended,
            Waiting {
                timestamp: packet.timestamp,
                marker: packet.marker,
                payload: packet.payload.to_vec(),
            },
        );
    }

    /// The frames the sender dropped before extended sequence number
    /// `extended`.
    fn drops_before(&self, extended: u64) -> u64 {
        self.drop_runs
            .iter()
            .rev()
            .find(|(from, _)| *from <= extended)
            .map_or(0, |(_, total)| *total)
    }

    /// Writes the frames whose playout time has come by `now` (all of them
    /// when `flush`).
    pub(super) fn play(&mut self, now: Instant, flush: bool) -> io::Result<()> {
        let now = Duration::from_nanos(now.as_nanos());
        loop {
            let Some(next) = self.next_play else {
                return Ok(());
            };
            let highest = self.highest.map_or(next, |(h, _)| h);
            if next > highest {
                return Ok(());
            }
            let in_call = self.call_first.filter(|first| next >= *first);
            let due = match (in_call, &self.listener) {
                (Some(first), Some(listener)) => {
                    let index = (next - first + self.drops_before(next)) as usize;
                    match listener.playout_time(index) {
                        Some(at) => at <= now,
                        // Past the listener's bound: played as it comes.
                        None => index >= listener.len(),
                    }
                }
                // A probe: plays once it or a later frame came.
                _ => true,
            };
            let crowded = self.waiting.len() > MAX_WAITING;
            if !(due || flush || crowded) {
                return Ok(());
            }
            let on_time = match (in_call, &self.listener) {
                (Some(first), Some(listener)) => {
                    let index = (next - first + self.drops_before(next)) as usize;
                    index >= listener.len() || listener.on_time(index)
                }
                _ => true,
            };
            let frame = self.waiting.remove(&next);
            let (frame, late) = match frame {
                Some(frame) if !on_time => (None, Some(frame)),
                frame => (frame, None),
            };
            // A late frame still tells where the timestamp went.
            if let Some(late) = late {
                self.next_timestamp = Some(late.timestamp);
            }
            self.write_frame(frame)?;
            self.next_play = Some(next + 1);
        }
    }

    /// Writes one frame: decoded, or concealed when `None`.
    fn write_frame(&mut self, frame: Option<Waiting>) -> io::Result<()> {
        let codec = self.stream.map(|(_, c)| c);
        self.buf.clear();
        match frame {
            Some(frame) => {
                // The timestamp ran on: a silence (a talk spurt starts:
                // silence) or frames the sender dropped (concealed).
                if let Some(expected) = self.next_timestamp {
                    let gap = u64::from(frame.timestamp.wrapping_sub(expected));
                    if gap > 0 && gap <= MAX_SILENCE_SAMPLES {
                        let mut fill = vec![0i16; gap as usize];
                        if !frame.marker {
                            self.concealer.conceal(&mut fill);
                            let frames = gap / FRAME_SAMPLES as u64;
                            self.report.frames_written += frames;
                            self.report.frames_concealed += frames;
                        }
                        self.writer.write(&fill)?;
                    }
                }
                self.next_timestamp = Some(frame.timestamp.wrapping_add(FRAME_SAMPLES as u32));
                if codec == Some(VoiceCodec::G711) {
                    g711::decode_into(&frame.payload, &mut self.buf);
                } else {
                    self.buf.resize(FRAME_SAMPLES, 0);
                }
                self.concealer.good_frame(&self.buf);
            }
            None => {
                self.buf.resize(FRAME_SAMPLES, 0);
                self.concealer.conceal(&mut self.buf);
                self.next_timestamp = self
                    .next_timestamp
                    .map(|t| t.wrapping_add(FRAME_SAMPLES as u32));
                self.report.frames_concealed += 1;
            }
        }
        self.writer.write(&self.buf)?;
        self.report.frames_written += 1;
        Ok(())
    }

    /// When a frame is next due to play.
    pub(super) fn next_timeout(&self, start: Instant) -> Option<Instant> {
        let next = self.next_play?;
        let (first, listener) = (self.call_first?, self.listener.as_ref()?);
        let index = usize::try_from(next.checked_sub(first)? + self.drops_before(next)).ok()?;
        let at = listener.playout_time(index)?;
        let at = Instant::from_nanos(u64::try_from(at.as_nanos()).unwrap_or(u64::MAX));
        Some(at.max(start))
    }

    /// The report at `now` (the score counts the frames due by then).
    pub(super) fn report(&mut self, now: Instant) -> VoiceRecvReport {
        let end = Duration::from_nanos(now.as_nanos());
        self.report.score = self.listener.as_ref().map(|l| l.score(end));
        self.report.wav_samples = self.writer.samples();
        self.report.clone()
    }

    /// Frames written.
    pub(super) fn frames_written(&self) -> u64 {
        self.report.frames_written
    }

    /// Plays what is left, patches the WAV header; the final report
    /// (scored at `now`).
    pub(super) fn finish(mut self, now: Instant) -> io::Result<VoiceRecvReport> {
        self.play(now, true)?;
        let report = self.report(now);
        self.writer.finish()?;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use fairstream_media::voice::rtp::{CaptureInfo, VoicePacket};
    use fairstream_media::voice::wav;

    fn receiver(name: &str, jitter_buffer: JitterBuffer) -> (VoiceReceiver, WallClock, PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("fairstream-voice-recv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let wall = WallClock::new(&Clock::new());
        let output = VoiceOutput {
            wav: path.clone(),
            jitter_buffer,
        };
        (VoiceReceiver::new(output, wall).unwrap(), wall, path)
    }

    /// Frame `seq` of a G.711 call of a 1000 Hz tone, captured at
    /// `seq`·20 ms.
    fn frame(wall: &WallClock, seq: u16, ssrc: u32, in_call: bool) -> Vec<u8> {
        frame_numbered(wall, seq, seq, ssrc, in_call)
    }

    /// The talker's frame `number`, sent with sequence number `seq`.
    fn frame_numbered(
        wall: &WallClock,
        seq: u16,
        number: u16,
        ssrc: u32,
        in_call: bool,
    ) -> Vec<u8> {
        let samples: Vec<i16> = (0..FRAME_SAMPLES)
            .map(|i| (8000.0 * (i as f64 * std::f64::consts::PI / 4.0).sin()) as i16)
            .collect();
        let mut payload = Vec::new();
        g711::encode_into(&samples, &mut payload);
        VoicePacket {
            codec: VoiceCodec::G711,
            marker: number == 0,
            sequence_number: seq,
            timestamp: u32::from(number) * FRAME_SAMPLES as u32,
            ssrc,
            capture: CaptureInfo {
                capture_unix_ns: wall.unix_ns(Instant::from_millis(u64::from(number) * 20)),
                in_call,
            },
            payload: &payload,
        }
        .emit()
    }

    #[test]
    fn a_call_with_a_lost_and_a_late_frame_is_scored_and_written_whole() {
        let (mut rx, wall, path) =
            receiver("call.wav", JitterBuffer::Fixed(Duration::from_millis(60)));
        // 100 frames, 50 ms on the way; frame 10 lost, frame 20 200 ms late.
        for seq in 0..100u16 {
            if seq == 10 {
                continue;
            }
            let delay = if seq == 20 { 250 } else { 50 };
            let at = Instant::from_millis(u64::from(seq) * 20 + delay);
            rx.play(at, false).unwrap();
            rx.on_packet(at, &frame(&wall, seq, 7, true));
        }
        let report = rx.finish(Instant::from_millis(10_000)).unwrap();
        let score = report.score.clone().unwrap();
        assert_eq!((score.frames, score.lost, score.late), (100, 1, 1));
        assert!((score.loss_percent - 2.0).abs() < 1e-9);
        // Ta = 20 ms + 50 ms + 60 ms.
        assert!(
            (score.mouth_to_ear_s.unwrap() - 0.13).abs() < 1e-6,
            "{score:?}"
        );
        assert_eq!((report.frames_written, report.frames_concealed), (100, 2));
        let samples = wav::read_samples(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(samples.len(), 100 * FRAME_SAMPLES);
        // The tone survives µ-law, and the concealed frame 10 continues it.
        // Sample 2 is the tone's peak, 8000 (µ-law's interval there: 256).
        assert!(
            (i32::from(samples[2]) - 8000).abs() <= 128,
            "{}",
            samples[2]
        );
        assert!(samples[10 * FRAME_SAMPLES..11 * FRAME_SAMPLES]
            .iter()
            .any(|s| s.unsigned_abs() > 4000));
    }

    #[test]
    fn frames_the_sender_dropped_are_told_by_the_timestamp_and_scored_as_dropped() {
        let (mut rx, wall, path) =
            receiver("drops.wav", JitterBuffer::Fixed(Duration::from_millis(60)));
        // Frames 0..50; the sender dropped 10 and 11 (the sequence numbers
        // run on without them); frame 30 was lost on the way.
        let mut seq = 0u16;
        for number in 0..50u16 {
            if number == 10 || number == 11 {
                continue;
            }
            let at = Instant::from_millis(u64::from(number) * 20 + 40);
            rx.play(at, false).unwrap();
            if number != 30 {
                rx.on_packet(at, &frame_numbered(&wall, seq, number, 7, true));
            }
            seq += 1;
        }
        let report = rx.finish(Instant::from_millis(10_000)).unwrap();
        let score = report.score.clone().unwrap();
        assert_eq!(
            (score.frames, score.lost, score.sender_drops, score.received),
            (50, 3, 2, 47)
        );
        assert_eq!((report.frames_written, report.frames_concealed), (50, 3));
        let samples = wav::read_samples(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(samples.len(), 50 * FRAME_SAMPLES);
    }

    #[test]
    fn what_a_peer_sends_cannot_grow_the_state_or_panic() {
        let (mut rx, wall, _) = receiver("hostile.wav", JitterBuffer::Adaptive);
        let now = Instant::from_millis(100);
        rx.on_packet(now, &frame(&wall, 0, 7, true));
        // Garbage, another SSRC, a jump past the bound, a duplicate.
        rx.on_packet(now, b"not rtp");
        rx.on_packet(now, &frame(&wall, 1, 8, true));
        rx.on_packet(now, &frame(&wall, 1 + MAX_GAP_FRAMES as u16 + 5, 7, true));
        rx.on_packet(now, &frame(&wall, 0, 7, true));
        // Frames far ahead in time and never due: held at most MAX_WAITING.
        for seq in 1..3000u16 {
            let mut packet = frame(&wall, seq, 7, true);
            // A capture time an hour ahead of the receiver's clock.
            let ahead = wall.unix_ns(Instant::from_millis(3_600_000 + u64::from(seq) * 20));
            packet[17..25].copy_from_slice(&ahead.to_be_bytes());
            rx.on_packet(now, &packet);
            rx.play(now, false).unwrap();
            assert!(rx.waiting.len() <= MAX_WAITING + 1);
        }
        let report = rx.finish(now).unwrap();
        assert_eq!(report.malformed_packets, 3);
        assert_eq!(report.stale_packets, 1);
        // The duplicate counts as a packet taken, then as stale.
        assert_eq!(report.packets, 3001);
    }
}
