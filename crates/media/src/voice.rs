//! Voice calls (paper 002 §IV.B; issue 16): the codecs as a call sends
//! them, the listener that scores a call with the ITU-T G.107 E-model, and
//! what a real call needs besides: G.711 µ-law, packet-loss concealment and
//! 8 kHz WAV files.
//!
//! - [`VoiceCodec`]: G.711 and G.729 as 20 ms packets ([`VOICE_FRAME`]).
//! - [`listener`]: one call's frames, their fates and playout, scored: the
//!   simulator's voice flows and `fairstream recv --wav` both score with
//!   it.
//! - [`playout`]: the de-jitter buffer, fixed or adaptive (Ramjee et al.
//!   1994, algorithm 1).
//! - [`g711`]: ITU-T G.711 µ-law encoding and decoding.
//! - [`plc`]: packet-loss concealment after G.711 Appendix I's idea
//!   (repeat the last pitch period, attenuated).
//! - [`rtp`]: a voice frame as an RTP packet (RFC 3551 PCMU and G729),
//!   with its capture time in a header extension.
//! - [`wav`]: 8 kHz 16-bit mono WAV files, read and written.
//! - [`talker`]: the talker's signal (a WAV file or a generated one) and its
//!   voice activity (exponential talk spurts and silences).

pub mod g711;
pub mod listener;
pub mod playout;
pub mod plc;
pub mod rtp;
pub mod talker;
pub mod wav;

use std::time::Duration;

use fairstream_proto::units::Rate;

use crate::emodel::Codec;

/// The voice frame (packet) interval: 20 ms, paper 002 §IV.C's "G.711
/// codec, 50 packets per second".
pub const VOICE_FRAME: Duration = Duration::from_millis(20);

/// Samples per second of narrow-band speech (ITU-T G.711 §1: "The nominal
/// value recommended for the sampling rate is 8000 samples per second"),
/// and the RTP clock rate of PCMU (RFC 3551 §4.5.14).
pub const SAMPLE_RATE: u32 = 8000;

/// Samples in one [`VOICE_FRAME`]: 160.
pub const FRAME_SAMPLES: usize = 160;

/// A voice codec as a call sends it: one frame every [`VOICE_FRAME`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoiceCodec {
    /// G.711 PCM, 64 kbit/s: 160-byte payloads every 20 ms.
    G711,
    /// G.729 CS-ACELP, 8 kbit/s: two 10-byte frames, a 20-byte payload
    /// every 20 ms.
    G729,
}

impl VoiceCodec {
    /// The codec's name in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            VoiceCodec::G711 => "g711",
            VoiceCodec::G729 => "g729",
        }
    }

    /// Payload bytes of one 20 ms packet: the codec's bit rate times 20 ms
    /// (ITU-T G.711: 64 kbit/s; G.729: 8 kbit/s).
    pub fn payload_bytes(self) -> u32 {
        match self {
            VoiceCodec::G711 => 160,
            VoiceCodec::G729 => 20,
        }
    }

    /// The codec's bit rate while talking.
    pub fn rate(self) -> Rate {
        Rate::from_bytes_per_sec(f64::from(self.payload_bytes()) / VOICE_FRAME.as_secs_f64())
    }

    /// The codec's own delay, counted in the mouth-to-ear delay: the
    /// packet's 20 ms of speech, which must be captured before it can be
    /// sent, plus the encoder's look-ahead (G.729 §2: 5 ms; G.711 none).
    pub fn delay(self) -> Duration {
        VOICE_FRAME
            + match self {
                VoiceCodec::G711 => Duration::ZERO,
                VoiceCodec::G729 => Duration::from_millis(5),
            }
    }

    /// The E-model codec whose Ie and Bpl (G.113 Appendix I) score it.
    pub fn emodel(self, plc: bool) -> Codec {
        match (self, plc) {
            (VoiceCodec::G711, false) => Codec::G711,
            (VoiceCodec::G711, true) => Codec::G711Plc,
            (VoiceCodec::G729, _) => Codec::G729,
        }
    }
}
