//! A voice call over a DCCP flow (paper 002 §IV.B): the talker's codec
//! frames fed to the connection, and the listener's de-jitter buffer and
//! E-model score.
//!
//! - **Talker.** One frame every 20 ms ([`VOICE_FRAME`]) of the codec's
//!   payload size, from a [`Source`]: constant bit rate, or with `vad` an
//!   on-off source with exponential talk spurts and silences (paper 002:
//!   means of 1.0 s and 1.5 s). A frame that finds the sender's queue
//!   holding `transmit_buffer` frames is dropped (paper 002: "The transmit
//!   buffer was set to 5 packets").
//! - **The call starts** at the first frame for which the CCID's allowed
//!   rate X reaches the codec's rate (paper 002: "When each call is setup,
//!   it starts sending media packets when the sending rate reaches the
//!   desired encoding rate of the codec"); for CCID 4 the allowed rate
//!   already carries RFC 4828 §4.1's header allowance s/(s + H), so it is
//!   compared with the codec's rate as it is. The frames made before are
//!   still offered to the
//!   connection, as probes: a TFRC sender raises its rate only from the
//!   feedback that data brings (RFC 5348 §4.3), so a call that sent nothing
//!   would never see its rate rise. Probes are counted apart and not
//!   scored.
//! - **Listener and score**: [`VoiceListener`], the one the real receiver
//!   (`fairstream recv --wav`) scores with. A fixed de-jitter buffer
//!   (frame i plays at its capture time plus the one-way delay of the
//!   call's first frame to arrive plus `jitter_buffer`) or an adaptive one
//!   (Ramjee et al. 1994, algorithm 1, per talk spurt); a frame that
//!   arrives after its playout time is late, which the E-model counts as
//!   lost. Delays run from the frame's capture, so the time it waited in
//!   the sender's queue counts. Ppl, BurstR, Ta = codec delay + playout
//!   delay, R and MOS as [`fairstream_media::voice::listener`] says.
//!   Frames whose playout time is after the end of the run are left out.
//!
//! A frame carries its sequence number (4 bytes) and capture time (8 bytes,
//! nanoseconds) at the start of its payload, the simulator's stand-in for
//! the RTP header a real call would add (which paper 002's payload sizes
//! leave out as well).

use std::time::Duration;

use fairstream_media::voice::listener::{ListenerConfig, VoiceListener, MAX_CALL_FRAMES};
use fairstream_media::voice::playout::JitterBuffer;
use fairstream_proto::conn::Connection;
use fairstream_proto::time::Instant;

use super::summary::VoiceOutcome;
use crate::rng::SimRng;
use crate::scenario::VoiceConfig;
use crate::source::{Source, SourceConfig};

/// Bytes of the sequence number and capture time at a frame's start.
const HEADER_BYTES: usize = 12;

/// Both ends of a voice call.
#[derive(Debug)]
pub(super) struct VoiceApp {
    config: VoiceConfig,
    source: Source,
    /// Bytes/s the CCID's X must reach before the call starts.
    required_rate: f64,
    payload: Vec<u8>,
    next_seq: u32,
    /// When the call started and its first frame's sequence number.
    call_start: Option<(Instant, u32)>,
    /// Frames made before the call started, and those of them dropped at
    /// the sender.
    probes: u64,
    probe_drops: u64,
    /// The call's frames, their fates and their playout.
    listener: VoiceListener,
}

/// `at` on the listener's time axis: since the simulation's start.
fn since_zero(at: Instant) -> Duration {
    at.saturating_duration_since(Instant::ZERO)
}

impl VoiceApp {
    /// A call talking from `start`, drawing its talk spurts from `rng`.
    pub(super) fn new(config: VoiceConfig, start: Instant, rng: SimRng) -> VoiceApp {
        let codec = config.codec;
        let packet_size = codec.payload_bytes();
        let rate = codec.rate();
        let source = if config.vad {
            SourceConfig::OnOff {
                rate,
                packet_size,
                on: config.talk,
                off: config.silence,
            }
        } else {
            SourceConfig::Cbr { rate, packet_size }
        };
        let listener = VoiceListener::new(ListenerConfig {
            codec,
            plc: config.plc,
            jitter_buffer: config.jitter_buffer,
            max_frames: MAX_CALL_FRAMES,
        });
        VoiceApp {
            config,
            source: Source::new(source, start, rng),
            required_rate: rate.bytes_per_sec(),
            payload: vec![0; packet_size as usize],
            next_seq: 0,
            call_start: None,
            probes: 0,
            probe_drops: 0,
            listener,
        }
    }

    /// When the talker next has a frame.
    pub(super) fn next_frame(&self) -> Option<Instant> {
        self.source.next_ready()
    }

    /// Hands the frames due by `now` to `conn` (the sender's connection),
    /// each at most `transmit_buffer` deep in its queue.
    pub(super) fn feed(&mut self, now: Instant, conn: &mut Connection) {
        while self.source.poll(now).is_some() {
            let seq = self.next_seq;
            self.next_seq = self.next_seq.wrapping_add(1);
            if self.call_start.is_none() {
                let allowed = conn
                    .stats()
                    .rate
                    .is_some_and(|x| x.bytes_per_sec() >= self.required_rate);
                if allowed || !self.config.wait_for_rate {
                    self.call_start = Some((now, seq));
                }
            }
            let in_call = match self.call_start {
                Some(_) => self.listener.push_frame(since_zero(now)),
                None => None,
            };
            if in_call.is_none() {
                self.probes += 1;
            }
            let full = conn.send_queue_len() >= self.config.transmit_buffer as usize;
            let sent = !full && {
                self.write_header(seq, now);
                conn.send(now, &self.payload).is_ok()
            };
            if !sent {
                match in_call {
                    Some(index) => self.listener.drop_frame(index),
                    None => self.probe_drops += 1,
                }
            }
        }
    }

    fn write_header(&mut self, seq: u32, now: Instant) {
        if let Some(header) = self.payload.get_mut(..HEADER_BYTES) {
            header[..4].copy_from_slice(&seq.to_be_bytes());
            header[4..].copy_from_slice(&now.as_nanos().to_be_bytes());
        }
    }

    /// A frame reached the listener's application at `now`.
    pub(super) fn on_received(&mut self, now: Instant, data: &[u8]) {
        let Some(seq) = data.get(..4).and_then(|b| b.try_into().ok()) else {
            return;
        };
        if data.len() < HEADER_BYTES {
            return;
        }
        let seq = u32::from_be_bytes(seq);
        let Some((_, first)) = self.call_start else {
            return;
        };
        let Some(index) = seq.checked_sub(first) else {
            return;
        };
        // The listener knows each frame's capture time (the header's, which
        // the sender wrote from the same clock).
        self.listener.arrive(index as usize, since_zero(now));
    }

    /// The call as it stands at `end`.
    pub(super) fn outcome(&self, end: Instant) -> VoiceOutcome {
        let codec = self.config.codec;
        let score = self.listener.score(since_zero(end));
        let jitter_buffer_s = match self.config.jitter_buffer {
            JitterBuffer::Fixed(buffer) => buffer.as_secs_f64(),
            // Adaptive: the mean playout delay less the mean network delay,
            // the buffering the algorithm chose on average.
            JitterBuffer::Adaptive => score
                .playout_delay_s
                .zip(score.mean_network_delay_s)
                .map_or(0.0, |(p, d)| p - d),
        };
        VoiceOutcome {
            codec: codec.emodel(self.config.plc).name().to_owned(),
            vad: self.config.vad,
            call_start_s: self.call_start.map(|(t, _)| t.as_secs_f64()),
            probe_frames: self.probes,
            probe_drops: self.probe_drops,
            frames: score.frames,
            received: score.received,
            played: score.played,
            late: score.late,
            lost: score.lost,
            sender_drops: score.sender_drops,
            loss_percent: score.loss_percent,
            burst_ratio: score.burst_ratio,
            mean_network_delay_s: score.mean_network_delay_s,
            jitter_buffer_s,
            codec_delay_s: codec.delay().as_secs_f64(),
            mouth_to_ear_s: score.mouth_to_ear_s,
            r: score.r,
            mos: score.mos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{
        VoiceCodec, DEFAULT_JITTER_BUFFER, DEFAULT_SILENCE, DEFAULT_TALK, VOICE_FRAME,
    };

    fn config(codec: VoiceCodec) -> VoiceConfig {
        VoiceConfig {
            codec,
            vad: false,
            talk: DEFAULT_TALK,
            silence: DEFAULT_SILENCE,
            jitter_buffer: JitterBuffer::Fixed(DEFAULT_JITTER_BUFFER),
            transmit_buffer: 5,
            wait_for_rate: false,
            plc: false,
        }
    }

    /// A call whose frames are made at 20 ms steps for `seconds`, with the
    /// fate of frame i given by `fate(i)` (`None`: lost) — driven without
    /// a connection, straight through the listener.
    fn call(codec: VoiceCodec, seconds: u64, fate: impl Fn(u32) -> Option<Duration>) -> VoiceApp {
        let mut app = VoiceApp::new(config(codec), Instant::ZERO, SimRng::new(1));
        app.call_start = Some((Instant::ZERO, 0));
        let frames = (seconds as f64 / VOICE_FRAME.as_secs_f64()).round() as u32;
        let mut arrivals = Vec::new();
        for seq in 0..frames {
            let captured = Instant::ZERO + VOICE_FRAME * seq;
            app.listener.push_frame(since_zero(captured));
            if let Some(delay) = fate(seq) {
                let mut data = vec![0; codec.payload_bytes() as usize];
                data[..4].copy_from_slice(&seq.to_be_bytes());
                data[4..12].copy_from_slice(&captured.as_nanos().to_be_bytes());
                arrivals.push((captured + delay, data));
            }
        }
        arrivals.sort_by_key(|(t, _)| *t);
        for (t, data) in arrivals {
            app.on_received(t, &data);
        }
        app
    }

    #[test]
    fn a_lossless_short_path_scores_near_the_codec_maximum() {
        let g711 = call(VoiceCodec::G711, 10, |_| Some(Duration::from_millis(20)))
            .outcome(Instant::from_millis(20_000));
        assert_eq!(
            (g711.frames, g711.played, g711.late, g711.lost),
            (500, 500, 0, 0)
        );
        // Ta = 20 + 20 + 60 = 100 ms: no Idd, and only the echo terms
        // (Idte 1.96, Idle 0.73) below the 93.2 of G.107's defaults.
        assert_eq!(g711.mouth_to_ear_s, Some(0.1));
        let r = g711.r.unwrap();
        assert!((r - 90.66).abs() < 0.01, "{r}");
        assert!(g711.mos.unwrap() > 4.3);
        let g729 = call(VoiceCodec::G729, 10, |_| Some(Duration::from_millis(20)))
            .outcome(Instant::from_millis(20_000));
        // G.729's Ie of 11 off the same.
        let r = g729.r.unwrap();
        assert!((r - (g711.r.unwrap() - 11.0)).abs() < 0.5, "{r}");
    }

    #[test]
    fn burst_loss_gives_a_burst_ratio_above_one_and_a_lower_r() {
        let spread = call(VoiceCodec::G711, 20, |i| {
            (i % 20 != 7).then_some(Duration::from_millis(30))
        })
        .outcome(Instant::from_millis(30_000));
        let bursty = call(VoiceCodec::G711, 20, |i| {
            (i % 200 >= 10).then_some(Duration::from_millis(30))
        })
        .outcome(Instant::from_millis(30_000));
        assert!((spread.loss_percent - 5.0).abs() < 1e-9);
        assert!((bursty.loss_percent - 5.0).abs() < 1e-9);
        assert!(spread.burst_ratio < 1.0, "{}", spread.burst_ratio);
        assert!(bursty.burst_ratio > 5.0, "{}", bursty.burst_ratio);
        assert!(bursty.r.unwrap() < spread.r.unwrap());
    }

    #[test]
    fn frames_later_than_the_buffer_are_late_and_count_as_lost() {
        // The first frame takes 100 ms: playout at capture + 160 ms. Every
        // tenth frame takes 200 ms.
        let out = call(VoiceCodec::G711, 10, |i| {
            Some(Duration::from_millis(if i % 10 == 5 { 200 } else { 100 }))
        })
        .outcome(Instant::from_millis(20_000));
        assert_eq!((out.frames, out.late, out.lost), (500, 50, 0));
        assert_eq!(out.received, 500);
        assert!((out.loss_percent - 10.0).abs() < 1e-9);
        assert_eq!(out.mouth_to_ear_s, Some(0.18));
    }

    #[test]
    fn frames_not_due_at_the_end_are_left_out_and_a_silent_call_has_no_r() {
        let out = call(VoiceCodec::G711, 10, |_| Some(Duration::from_millis(40)))
            .outcome(Instant::from_millis(5_000));
        // Due by 5 s: captured by 4.9 s (playout 100 ms later).
        assert_eq!(out.frames, 246);
        let silent = call(VoiceCodec::G711, 1, |_| None).outcome(Instant::from_millis(5_000));
        assert_eq!((silent.frames, silent.lost), (50, 50));
        assert_eq!(silent.r, None);
        assert_eq!(silent.mos, None);
    }
}
