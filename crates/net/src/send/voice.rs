//! `fairstream send voice:CODEC[:FILE.wav]`: a voice call (paper 002
//! §IV.B; issue 16) over the session, one RTP packet every 20 ms.
//!
//! - **Signal.** A WAV file of 8 kHz 16-bit mono speech (`--loop` repeats
//!   it; without, the call ends with the file), or the generated
//!   speech-like signal ([`Signal`]).
//! - **Codec.** G.711 µ-law, really encoded ([`g711`]): 160 bytes a
//!   packet, RTP payload type 0 (PCMU). G.729 is a packet-size and rate
//!   model only: there is no G.729 encoder here, so its 20-byte payloads
//!   (8 kbit/s, payload type 18) carry silence (zero bytes); the receiver
//!   scores the call and writes no audio for it.
//! - **Voice activity** (`--vad`): paper 002's exponential talk spurts
//!   (mean 1.0 s) and silences (1.5 s), drawn at random; no packet leaves
//!   in a silence, the RTP timestamp runs on, and the first packet of a
//!   spurt has the marker bit (RFC 3551 §4.1).
//! - **The call starts** at the first frame for which the allowed rate X
//!   of the connection reaches the rate the call's packets need: 50
//!   packets/s of s bytes (the RTP packet and the session's header; under
//!   CCID 4 the allowed rate already carries RFC 4828 §4.1's header
//!   allowance s/(s + H)) (paper 002: "it starts sending media packets when
//!   the sending rate reaches the desired encoding rate of the codec"). A
//!   CCID without a rate (CCID 2) starts at
//!   once. The frames before are still sent, as probes (the feedback data
//!   brings is what raises a TFRC sender's rate, RFC 5348 §4.3), flagged
//!   so in their header extension; the receiver does not score them.
//! - **Transmit buffer.** A frame that finds `transmit_buffer` packets
//!   (default 5, paper 002: "The transmit buffer was set to 5 packets")
//!   queued in the session and its connection is dropped and counted. Its
//!   RTP sequence number is not used (RFC 3550 §5.1: it "increments by one
//!   for each RTP data packet sent"), but its timestamp is: the receiver
//!   sees the timestamp run on by more frames than the sequence number
//!   without the marker bit of a talk spurt, and counts the frames between
//!   as dropped at the sender, as the simulator's listener does.
//! - **Capture time.** Frame i's 20 ms are complete at its release, the
//!   first frame's release plus i·20 ms on the sender's monotonic clock:
//!   that is its capture time (the 20 ms themselves are the codec's delay
//!   in the listener's Ta), written on the wall clock (Unix time) into
//!   the header extension ([`fairstream_media::voice::rtp`]).

use std::path::PathBuf;
use std::time::Duration;

use fairstream_media::voice::rtp::{CaptureInfo, VoicePacket};
use fairstream_media::voice::talker::{Signal, VoiceActivity};
use fairstream_media::voice::{g711, VoiceCodec, FRAME_SAMPLES, VOICE_FRAME};
use fairstream_proto::conn::State;
use fairstream_proto::session::{DatagramMeta, SESSION_HEADER_BYTES};
use fairstream_proto::time::Instant;
use serde::Serialize;

use super::{Run, SendConfig, SendError, SourceSpec};
use crate::clock::WallClock;
use crate::url::Controller;

/// Paper 002's transmit buffer: 5 packets.
pub const DEFAULT_TRANSMIT_BUFFER: u32 = 5;
/// Paper 002's mean talk spurt.
const TALK: Duration = Duration::from_millis(1000);
/// Paper 002's mean silence.
const SILENCE: Duration = Duration::from_millis(1500);
/// The longest WAV file read: an hour of 8 kHz 16-bit speech and more.
const MAX_WAV_BYTES: u64 = 64 << 20;

/// A voice source: `voice:CODEC[:FILE.wav]`.
#[derive(Clone, Debug, PartialEq)]
pub struct VoiceSpec {
    /// The codec.
    pub codec: VoiceCodec,
    /// The talker's WAV file; `None`: the generated signal.
    pub wav: Option<PathBuf>,
    /// Paper 002's voice activity detection.
    pub vad: bool,
    /// Frames the session and connection queue may hold.
    pub transmit_buffer: u32,
    /// Paper 002's rule: the call starts when the allowed rate is the
    /// codec's.
    pub wait_for_rate: bool,
}

impl VoiceSpec {
    /// Parses `voice:g711`, `voice:g729`, `voice:g711:FILE.wav`; `None` if
    /// `text` does not start with `voice:`.
    pub fn parse(text: &str) -> Option<Result<VoiceSpec, String>> {
        let rest = text.strip_prefix("voice:")?;
        let (codec, file) = match rest.split_once(':') {
            Some((codec, file)) => (codec, Some(file)),
            None => (rest, None),
        };
        let codec = match codec {
            "g711" => VoiceCodec::G711,
            "g729" => VoiceCodec::G729,
            other => {
                return Some(Err(format!(
                    "unknown voice codec `{other}` in `{text}` (expected voice:g711 or \
                     voice:g729, e.g. voice:g711:speech.wav)"
                )))
            }
        };
        if file.is_some() && codec == VoiceCodec::G729 {
            return Some(Err(
                "voice:g729 is a packet-size and rate model (there is no G.729 encoder): \
                 it takes no WAV file"
                    .into(),
            ));
        }
        if file == Some("") {
            return Some(Err(format!("`{text}`: the WAV file's name is empty")));
        }
        Some(Ok(VoiceSpec {
            codec,
            wav: file.map(PathBuf::from),
            vad: false,
            transmit_buffer: DEFAULT_TRANSMIT_BUFFER,
            wait_for_rate: true,
        }))
    }
}

/// What the voice sender did, in the sender's summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VoiceSendReport {
    /// `g711` or `g729`.
    pub codec: String,
    /// `generated` or the WAV file's name.
    pub signal: String,
    /// Voice activity detection on.
    pub vad: bool,
    /// 20 ms frames of the talker (spoken and silent).
    pub frames: u64,
    /// Of those, silent ones (no packet).
    pub silent_frames: u64,
    /// Frames sent before the call started (probes).
    pub probe_frames: u64,
    /// Of those, dropped at the sender.
    pub probe_drops: u64,
    /// Frames of the call (spoken, after it started).
    pub call_frames: u64,
    /// Of those, dropped at the sender (transmit buffer full).
    pub sender_drops: u64,
    /// When the call started, seconds after the first frame; `null` if it
    /// never did.
    pub call_start_s: Option<f64>,
    /// Bytes/s the allowed rate had to reach.
    pub required_rate_bytes_per_s: f64,
}

/// The sender's side of a call (see the [module](self)).
#[derive(Debug)]
pub(super) struct VoiceSender {
    spec: VoiceSpec,
    signal: Signal,
    activity: Option<VoiceActivity>,
    wall: WallClock,
    ssrc: u32,
    sequence: u16,
    timestamp: u32,
    /// The first frame's release, and the frames taken since.
    anchor: Option<Instant>,
    taken: u64,
    /// The previous frame was silent (the next spoken one has the marker).
    after_silence: bool,
    ended: bool,
    required_rate: f64,
    report: VoiceSendReport,
}

impl VoiceSender {
    /// The sender for a `voice:` source (`None` for another), its WAV file
    /// read and checked; `seed` draws the SSRC and the talk spurts.
    pub(super) fn for_config(
        config: &SendConfig,
        wall: WallClock,
        seed: u64,
    ) -> Result<Option<VoiceSender>, SendError> {
        let SourceSpec::Voice(spec) = &config.source else {
            return Ok(None);
        };
        let url = &config.url;
        let refuse = |what: &str| {
            Err(SendError::Config(format!(
                "a voice call {what} (one call, one connection, its frames never resent)"
            )))
        };
        if url.buffer.is_some() {
            return refuse("does not run with cc=buffer");
        }
        if url.fec.is_some() {
            return refuse("takes no fec");
        }
        if url.transport.conns > 1 || url.transport.controller != Controller::Fixed {
            return refuse("takes no conns or controller");
        }
        let (signal, name) = match &spec.wav {
            Some(path) => {
                let source_error = |reason: String| SendError::Source {
                    source_name: path.display().to_string(),
                    reason,
                };
                let size = std::fs::metadata(path)
                    .map_err(|e| source_error(e.to_string()))?
                    .len();
                if size > MAX_WAV_BYTES {
                    return Err(source_error(format!(
                        "{size} bytes: longer than the {MAX_WAV_BYTES} bytes a call reads"
                    )));
                }
                let bytes = std::fs::read(path).map_err(|e| source_error(e.to_string()))?;
                let samples = fairstream_media::voice::wav::read_samples(&bytes)
                    .map_err(|e| source_error(e.to_string()))?;
                if samples.is_empty() {
                    return Err(source_error("the WAV file holds no sample".into()));
                }
                (
                    Signal::from_samples(samples, config.looped),
                    path.display().to_string(),
                )
            }
            None => (Signal::generated(), "generated".to_owned()),
        };
        let codec = spec.codec;
        // The datagram the connection carries: the RTP packet and the
        // session's header.
        let s = (fairstream_media::voice::rtp::VOICE_HEADER_BYTES
            + codec.payload_bytes() as usize
            + SESSION_HEADER_BYTES) as f64;
        // The allowed rate already carries CCID 4's header allowance (RFC
        // 4828 §4.1's s/(s + H)): it is compared with what the packets need.
        let packets_per_second = 1.0 / VOICE_FRAME.as_secs_f64();
        let required_rate = packets_per_second * s;
        Ok(Some(VoiceSender {
            signal,
            activity: spec
                .vad
                .then(|| VoiceActivity::new(TALK, SILENCE, seed.rotate_left(17))),
            wall,
            ssrc: seed as u32,
            sequence: (seed >> 32) as u16,
            timestamp: 0,
            anchor: None,
            taken: 0,
            after_silence: false,
            ended: false,
            required_rate,
            report: VoiceSendReport {
                codec: codec.name().into(),
                signal: name,
                vad: spec.vad,
                required_rate_bytes_per_s: required_rate,
                ..VoiceSendReport::default()
            },
            spec: spec.clone(),
        }))
    }

    /// When the next frame is due.
    pub(super) fn next_due(&self, now: Instant) -> Option<Instant> {
        if self.ended {
            return None;
        }
        Some(self.anchor.map_or(now, |a| self.release(a, self.taken)))
    }

    fn release(&self, anchor: Instant, frame: u64) -> Instant {
        anchor + Duration::from_nanos(VOICE_FRAME.as_nanos() as u64 * frame)
    }

    /// The signal has ended (a WAV file not looped).
    pub(super) fn is_ended(&self) -> bool {
        self.ended
    }

    /// What it did so far.
    pub(super) fn report(&self) -> VoiceSendReport {
        self.report.clone()
    }
}

impl Run {
    /// A voice call: the frames due by `now`, each sent, dropped at a full
    /// transmit buffer, or left out in a silence.
    pub(super) fn pull_voice(&mut self, now: Instant) {
        let Some(mut voice) = self.voice.take() else {
            return;
        };
        let anchor = *voice.anchor.get_or_insert(now);
        while !voice.ended && voice.release(anchor, voice.taken) <= now {
            let frame_index = voice.taken;
            voice.taken += 1;
            let Some(samples) = voice.signal.next_frame() else {
                voice.ended = true;
                self.source_ended = true;
                break;
            };
            voice.report.frames += 1;
            let timestamp = voice.timestamp;
            voice.timestamp = voice.timestamp.wrapping_add(FRAME_SAMPLES as u32);
            let spoken = voice.activity.as_mut().is_none_or(|a| a.next_frame().0);
            if !spoken {
                voice.report.silent_frames += 1;
                voice.after_silence = true;
                continue;
            }
            let marker = voice.after_silence || frame_index == 0;
            if voice.report.call_start_s.is_none() {
                let allowed = self.allowed_for_call(voice.required_rate);
                if allowed || !voice.spec.wait_for_rate {
                    voice.report.call_start_s = Some((now - anchor).as_secs_f64());
                }
            }
            let in_call = voice.report.call_start_s.is_some();
            let payload = match voice.spec.codec {
                VoiceCodec::G711 => {
                    let mut codes = Vec::with_capacity(FRAME_SAMPLES);
                    g711::encode_into(&samples, &mut codes);
                    codes
                }
                // No G.729 encoder: the payload's size and rate only.
                VoiceCodec::G729 => vec![0; voice.spec.codec.payload_bytes() as usize],
            };
            // Its 20 ms ended at its release: captured then (the codec's
            // 20 ms count in the listener's Ta apart).
            let captured = voice.release(anchor, frame_index);
            let packet = VoicePacket {
                codec: voice.spec.codec,
                marker,
                sequence_number: voice.sequence,
                timestamp,
                ssrc: voice.ssrc,
                capture: CaptureInfo {
                    capture_unix_ns: voice.wall.unix_ns(captured),
                    in_call,
                },
                payload: &payload,
            }
            .emit();
            let full = self.queued_frames() >= voice.spec.transmit_buffer as usize;
            let meta = DatagramMeta {
                gop: 0,
                deadline: None,
                key: false,
                retransmit: false,
                playout: None,
                fec: None,
            };
            let sent = !full && self.session.send_with(now, &packet, meta).is_ok();
            match (in_call, sent) {
                (true, true) => voice.report.call_frames += 1,
                (true, false) => {
                    voice.report.call_frames += 1;
                    voice.report.sender_drops += 1;
                }
                (false, true) => voice.report.probe_frames += 1,
                (false, false) => {
                    voice.report.probe_frames += 1;
                    voice.report.probe_drops += 1;
                }
            }
            self.report.frames_read += 1;
            if sent {
                // RFC 3550 §5.1: the number counts the packets sent; the
                // marker waits for the first packet of the spurt sent.
                voice.sequence = voice.sequence.wrapping_add(1);
                voice.after_silence = false;
                self.report.frames_sent += 1;
                self.report.packets_sent += 1;
                self.report.bytes_sent += packet.len() as u64;
            } else {
                self.report.frames_dropped += 1;
            }
        }
        self.voice = Some(voice);
    }

    /// Whether an open connection's allowed rate reaches `required`
    /// bytes/s (one without a rate, CCID 2, always does).
    fn allowed_for_call(&self, required: f64) -> bool {
        let endpoint = self.session.endpoint();
        endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .filter(|c| c.state() == State::Open)
            .any(|c| c.stats().rate.is_none_or(|x| x.bytes_per_sec() >= required))
    }

    /// Frames waiting in the session and its connections' queues.
    fn queued_frames(&self) -> usize {
        let endpoint = self.session.endpoint();
        let connections: usize = endpoint
            .connection_ids()
            .filter_map(|id| endpoint.connection(id))
            .map(|c| c.send_queue_len())
            .sum();
        self.session.queued() + connections
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voice_sources_parse_and_unknown_codecs_are_named() {
        let spec = VoiceSpec::parse("voice:g711:speech.wav").unwrap().unwrap();
        assert_eq!(spec.codec, VoiceCodec::G711);
        assert_eq!(spec.wav, Some(PathBuf::from("speech.wav")));
        assert_eq!(spec.transmit_buffer, 5);
        let spec = VoiceSpec::parse("voice:g729").unwrap().unwrap();
        assert_eq!((spec.codec, spec.wav), (VoiceCodec::G729, None));
        assert!(VoiceSpec::parse("generated").is_none());
        let error = VoiceSpec::parse("voice:opus").unwrap().unwrap_err();
        assert!(error.contains("unknown voice codec `opus`"), "{error}");
        let error = VoiceSpec::parse("voice:g729:a.wav").unwrap().unwrap_err();
        assert!(error.contains("no G.729 encoder"), "{error}");
        assert!(VoiceSpec::parse("voice:g711:").unwrap().is_err());
    }
}
