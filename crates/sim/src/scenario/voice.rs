//! `voice = { codec = … }`: a voice call carried by a DCCP flow (paper 002
//! §IV.B), its codec, voice activity detection, the rule that starts the
//! call and the receiver's de-jitter buffer (fixed, or adaptive per talk
//! spurt). The codec and the listener are `fairstream_media::voice`'s, the
//! same the real receiver (`fairstream recv --wav`) scores with.

use std::time::Duration;

use fairstream_proto::units::Bytes;

pub use fairstream_media::voice::playout::JitterBuffer;
pub use fairstream_media::voice::{VoiceCodec, VOICE_FRAME};

use super::error::ScenarioError;
use super::fields::Fields;

/// The mean talk spurt with `vad = true` when `talk` is absent: paper 002
/// §IV.B, "exponential distributions of 1.0s and 1.5s".
pub const DEFAULT_TALK: Duration = Duration::from_millis(1000);
/// The mean silence with `vad = true` when `silence` is absent: 1.5 s,
/// the same sentence.
pub const DEFAULT_SILENCE: Duration = Duration::from_millis(1500);
/// The receiver's de-jitter buffer when `jitter_buffer` is absent: 60 ms.
/// Not from the paper, which does not give one; a fixed buffer of a few
/// frames, in the range ITU-T G.1020 §7 discusses for fixed jitter
/// buffers.
pub const DEFAULT_JITTER_BUFFER: Duration = Duration::from_millis(60);
/// Frames the sender's queue holds when `transmit_buffer` is absent:
/// paper 002 §IV.B, "The transmit buffer was set to 5 packets".
pub const DEFAULT_TRANSMIT_BUFFER: u32 = 5;
/// The most frames a transmit buffer may hold.
pub const MAX_TRANSMIT_BUFFER: u32 = 10_000;
/// The longest de-jitter buffer a scenario may ask for.
pub const MAX_JITTER_BUFFER: Duration = Duration::from_secs(10);

/// A voice flow's call (`voice = { … }`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoiceConfig {
    /// `codec`: `"g711"` or `"g729"` (required).
    pub codec: VoiceCodec,
    /// `vad`: voice activity detection, exponential talk spurts and
    /// silences (default `false`: the codec talks all the time).
    pub vad: bool,
    /// `talk`: the mean talk spurt (default [`DEFAULT_TALK`]).
    pub talk: Duration,
    /// `silence`: the mean silence (default [`DEFAULT_SILENCE`]).
    pub silence: Duration,
    /// `jitter_buffer`: the receiver's de-jitter buffer: a duration, the
    /// fixed playout delay after the first frame's arrival (default
    /// [`DEFAULT_JITTER_BUFFER`]), or `"adaptive"`, Ramjee et al.'s
    /// algorithm 1 per talk spurt ([`JitterBuffer::Adaptive`]).
    pub jitter_buffer: JitterBuffer,
    /// `transmit_buffer`: frames the sender's queue holds; a frame that
    /// finds it full is dropped (default [`DEFAULT_TRANSMIT_BUFFER`]).
    pub transmit_buffer: u32,
    /// `wait_for_rate`: paper 002's rule, the call starts when the allowed
    /// rate reaches the codec's (default `true`).
    pub wait_for_rate: bool,
    /// `plc`: G.711 with G.711 Appendix I packet-loss concealment (Bpl
    /// 25.1 instead of 4.3; default `false`).
    pub plc: bool,
}

impl VoiceConfig {
    /// The payload size of every packet.
    pub fn packet_size(&self) -> Bytes {
        Bytes(u64::from(self.codec.payload_bytes()))
    }
}

/// Validates `voice = { codec, vad?, talk?, silence?, jitter_buffer?,
/// transmit_buffer?, wait_for_rate?, plc? }`.
pub(super) fn voice_from_raw(mut fields: Fields<'_>) -> Result<VoiceConfig, ScenarioError> {
    let codec = match fields.string("codec")? {
        Some("g711") => VoiceCodec::G711,
        Some("g729") => VoiceCodec::G729,
        Some(other) => {
            return Err(fields.error(
                "codec",
                format!("unknown codec \"{other}\" (expected \"g711\" or \"g729\")"),
            ))
        }
        None => {
            return Err(fields.error(
                "codec",
                "missing required key `codec` (\"g711\" or \"g729\")",
            ))
        }
    };
    let vad = fields.boolean("vad")?.unwrap_or(false);
    let period = |fields: &mut Fields<'_>, key: &'static str, default: Duration| {
        let value = fields.optional_duration(key)?.unwrap_or(default);
        if value.is_zero() {
            return Err(fields.error(key, "a mean period must be longer than zero"));
        }
        Ok(value)
    };
    let talk = period(&mut fields, "talk", DEFAULT_TALK)?;
    let silence = period(&mut fields, "silence", DEFAULT_SILENCE)?;
    let jitter_buffer = match fields.string("jitter_buffer") {
        Ok(Some("adaptive")) => JitterBuffer::Adaptive,
        // A duration (or a value whose error the duration's parser names).
        _ => {
            let fixed = fields
                .optional_duration("jitter_buffer")?
                .unwrap_or(DEFAULT_JITTER_BUFFER);
            if fixed > MAX_JITTER_BUFFER {
                return Err(fields.error(
                    "jitter_buffer",
                    format!("{fixed:?} is longer than {MAX_JITTER_BUFFER:?}"),
                ));
            }
            JitterBuffer::Fixed(fixed)
        }
    };
    let transmit_buffer = match fields.number("transmit_buffer")? {
        None => DEFAULT_TRANSMIT_BUFFER,
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= f64::from(MAX_TRANSMIT_BUFFER) => n as u32,
        Some(n) => {
            return Err(fields.error(
                "transmit_buffer",
                format!(
                    "{n} is not a whole number of frames in 1..={MAX_TRANSMIT_BUFFER} \
                     (paper 002 used 5)"
                ),
            ))
        }
    };
    let wait_for_rate = fields.boolean("wait_for_rate")?.unwrap_or(true);
    let plc = fields.boolean("plc")?.unwrap_or(false);
    if plc && codec == VoiceCodec::G729 {
        return Err(fields.error(
            "plc",
            "`plc` chooses G.711 with Appendix I concealment; G.729 conceals on its own \
             (its Bpl of 19 already counts it)",
        ));
    }
    let config = VoiceConfig {
        codec,
        vad,
        talk,
        silence,
        jitter_buffer,
        transmit_buffer,
        wait_for_rate,
        plc,
    };
    fields.finish("voice")?;
    Ok(config)
}
