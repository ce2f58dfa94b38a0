//! Scalable (layered) video as paper 004 streams it: each frame is a base
//! layer, which is sent whole or not at all, and an enhancement layer, of
//! which the sender sends a share η.
//!
//! # The model
//!
//! Paper 004 §2.2: "For scalable video such as FGS MPEG-4 the amount of
//! enhancement layer to be transmitted is proportional to the ratio of the
//! buffer occupancy in bits to the average full buffer size", η (eq. 2), and
//! "If congestion reaches such a level that the base layer has to be
//! truncated then the stream is simply cut off". A [`LayeredFrame`] is a
//! frame's number, type and time, its base layer's size and its
//! [`Enhancement`]:
//!
//! - [`Enhancement::Fgs`]: MPEG-4 fine-granular scalability, bit-plane coded,
//!   so the layer may be cut after any byte: a share η keeps ⌊η · bytes⌋.
//! - [`Enhancement::Layers`]: discrete layers (H.264 SVC quality or spatial
//!   layers, or simulcast-like steps), lowest first, each useful only whole
//!   and only with every layer below it: a share η keeps the whole layers,
//!   lowest first, whose sizes add up to at most ⌊η · total⌋; the rest is
//!   dropped from the highest down, and no layer is ever kept in part.
//!
//! A [`Share`] is η as paper 004's controller computes it
//! (`fairstream_proto::cc::buffer`, re-exported here): a number in [0, 1],
//! clamped, NaN taken as 0. [`Share::ZERO`] keeps exactly the base layer,
//! [`Share::ONE`] the whole frame; ⌊η · bytes⌋ is the controller's own
//! rounding of a frame's enhancement (`FramePlan::enhancement_bytes`).
//! [`scheduled_bytes`] is eq. 3's D_txn in the whole bytes and layers sent
//! (the controller's `scheduled_bits` is the same sum before rounding), and
//! [`LayeredFrame::sizes`] gives a frame to the controller as its
//! `FrameSizes`.
//!
//! Sizes are bounded: a frame (base and enhancement together) has at most
//! [`MAX_FRAME_BYTES`], at most [`MAX_ENHANCEMENT_LAYERS`] discrete layers of
//! at least one byte each, and a time of at most [`MAX_FRAME_TIME`]; a
//! sequence has at most [`MAX_TRACE_FRAMES`] frames, numbered in increasing
//! order, times never going back. [`LayeredFrame::new`] refuses anything
//! else, so a frame that exists is within the bounds, and no operation on
//! one can overflow or panic.
//!
//! # The layered trace format
//!
//! EvalVid's sender trace (`crate::evalvid`) with the frame's one size split
//! in two: one line a frame,
//!
//! ```text
//! frame_no<TAB>type<TAB>base_bytes<TAB>enhancement<TAB>time_s
//! ```
//!
//! `frame_no` a whole number, increasing from line to line (EvalVid's start
//! at 1); `type` `I`, `P` or `B`; `base_bytes` a whole number; `enhancement`
//! either `fgs:BYTES` (one FGS layer, `fgs:0` for none) or
//! `layers:BYTES,BYTES,…` (discrete layers, lowest first, each at least one
//! byte; `layers:` alone for none); `time_s` when the frame is sent, seconds
//! from the start with at most 9 decimals (nanoseconds, so that a time reads
//! back exactly), never before the previous line's. Fields are separated by
//! tabs or spaces; a line that is empty or starts with `#` is skipped. The
//! enhancement is tagged because a single size would not say whether it is
//! one FGS layer or one discrete layer, which a share truncates differently.
//! [`parse_layered_trace`] reads it, [`format_layered_trace`] writes it;
//! `docs/scenarios.md` has the same description.
//!
//! ```text
//! # frame_no type base_bytes enhancement time_s
//! 1   I   2400    fgs:1100            0.000
//! 2   P   800     fgs:1050            0.033333333
//! 3   P   780     layers:300,300,450  0.066666667
//! ```
//!
//! ([`format_layered_trace`] separates the fields with single tabs.)
//!
//! # Synthetic FGS traces
//!
//! Paper 004's videos are "FGS MPEG-4 video traces encoded at CBR 250
//! kbits/sec" (§3); no such trace is public, so [`fgs_trace`] makes one from
//! a base and a total rate, a GOP and a seed (the model is described at
//! [`FgsTraceConfig`]), and [`from_evalvid`] splits an EvalVid sender
//! trace's frames into a base share and an FGS rest, a modelling stand-in,
//! not an FGS encode.
//!
//! # Real scalable H.264
//!
//! What the OpenH264 in the workspace (the `openh264` and `openh264-sys2`
//! crates 0.9.9, OpenH264 at commit 1bca623) can give, read from the crates'
//! sources and OpenH264's issue tracker. Temporal layers are built and
//! measured ([`crate::temporal`]); the rest is what the sources and the
//! maintainers say.
//!
//! **Temporal layers: built.** `SEncParamExt` has `iTemporalLayerNum`
//! ("temporal layer number, max temporal layer = 4",
//! `MAX_TEMPORAL_LAYER_NUM` = 4). OpenH264 turns it into a dyadic hierarchy
//! of P frames, GOP size 2^(T−1) (`param_svc.h`: `uiGopSize = 1 <<
//! (iTemporalLayerNum - 1)`), temporal ids from `g_kuiTemporalIdListTable`
//! (`encoder_data_tables.cpp`: T = 3 gives 0, 2, 1, 2, …; T = 4 gives 0, 3,
//! 2, 3, 1, 3, 2, 3), the highest layer coded with `nal_ref_idc` 0 and the
//! others as references (`encoder_ext.cpp`, `NRI_PRI_LOWEST` for
//! `iCurTid == iDecompositionStages`); with more than one reference frame the
//! SPS allows `frame_num` gaps (`au_set.cpp`). The safe `Encoder` sets
//! `iTemporalLayerNum = 1` in its private `reinit` (openh264
//! `src/encoder.rs`), so
//! [`codec::Encoder::with_temporal_layers`](crate::codec::Encoder::with_temporal_layers)
//! goes through `Encoder::raw_api()`: it encodes the first frame once to
//! initialise OpenH264 and throws it away, then
//! `get_option(ENCODER_OPTION_SVC_ENCODE_PARAM_EXT)`, sets
//! `iTemporalLayerNum` and the reference count `InitializeExt` would choose,
//! and `set_option(ENCODER_OPTION_SVC_ENCODE_PARAM_EXT)`, which
//! re-initialises the encoder (`WelsEncoderParamAdjust` in
//! `encoder_ext.cpp`): the stream starts at the next frame, an IDR with its
//! parameter sets. A change of picture size would undo it, so it is
//! refused; the GOP must be a multiple of 2^(T−1) (OpenH264 would round
//! it). [`codec::Encoder::encode_layered`](crate::codec::Encoder::encode_layered)
//! returns each frame's bytes with its temporal id from
//! `SLayerBSInfo::uiTemporalId`. The id travels beside the bytes, not in
//! them: `bPrefixNalAddingCtrl` is left off, so OpenH264 writes no prefix
//! NAL units (type 14) carrying `temporal_id` (tested: only types 1, 5, 7
//! and 8). There is no rate per temporal layer (cisco/openh264#3126), and
//! changing the layer count while encoding once crashed
//! (cisco/openh264#2885, closed); the encoder sets it once, before the
//! stream starts. Tested: the ids follow the table for T = 1 to 4, and the
//! top layer, and only it, has `nal_ref_idc` 0.
//!
//! **Dropping upper layers decodes: confirmed.** OpenH264's maintainer:
//! "Higher temporal layers could be dropped without affecting lower temporal
//! layers' decoding. But you need drop the data by yourself"
//! (cisco/openh264#3268; likewise #3200: an extractor is needed).
//! [`crate::temporal::drop_above_layer`] is that extractor. Dropping every
//! frame above any layer, for T = 2 to 4 (tested on 50 generated CIF
//! frames), OpenH264's decoder conceals nothing, every kept frame decodes
//! to exactly the picture it has in the whole stream, and
//! [`codec::decode_aligned`](crate::codec::decode_aligned) repeats the
//! previous picture for each dropped frame; keeping a frame whose reference
//! was dropped does damage it (concealed, and different from the whole
//! stream's). The PSNR and bytes per layer are in [`crate::temporal`]'s
//! documentation: at CIF, 500 kbit/s, T = 3, layer 0 alone is 44 % of the
//! bytes at a quarter of the frame rate and 25.2 dB, against 36.8 dB for
//! the whole stream.
//!
//! **Temporal layers in this module's terms.** They are whole frames, not
//! a part of every frame, so a [`LayeredFrame`] does not describe them; a
//! [`TemporalFrame`](crate::temporal::TemporalFrame) is a frame of one layer
//! (base if 0, enhancement otherwise), and a
//! [`TemporalThinner`](crate::temporal::TemporalThinner) turns paper 004's
//! share η of a window's enhancement into whole frames kept, lowest layer
//! first, never a frame whose reference was dropped.
//!
//! **Spatial and quality layers: no true scalability.** `iSpatialLayerNum`
//! (up to `MAX_SPATIAL_LAYER_NUM` = 4, one `SSpatialLayerConfig` each with
//! its own `iVideoWidth`, `iVideoHeight`, `fFrameRate`, `iSpatialBitrate`)
//! encodes either simulcast AVC (`bSimulcastAVC = true`) or SVC syntax (NAL
//! type 20) without inter-layer prediction: "openh264 encoder does not
//! support inter-layer prediction" (cisco/openh264#3124; its streams carry
//! `no_inter_layer_pred_flag` = 1), so every spatial layer is a complete
//! stream and the layers' rates add up instead of refining one another. The
//! decoder decodes one spatial layer only: "Current openh264 decoder cannot
//! support multi-layer decoding. Only one resolution data should be sent into
//! it" (#3532, also #3540, #1413). `SLayerBSInfo::uiQualityId` is always 0:
//! there are no quality (MGS/CGS) layers and nothing like FGS. Real FGS-like
//! truncation is therefore out of reach with OpenH264; what it can give is
//! temporal scalability (discrete, whole frames) and switching between
//! simulcast streams at IDR frames.

use std::fmt;
use std::time::Duration;

use fairstream_proto::cc::buffer::FrameSizes;

use crate::h264::FrameType;

mod convert;
mod synthetic;
mod trace;

pub use convert::from_evalvid;
pub use fairstream_proto::cc::buffer::Share;
pub use synthetic::{fgs_trace, FgsTraceConfig, FgsTraceError};
pub use trace::{
    format_layered_trace, parse_layered_trace, read_layered_trace, write_layered_trace, FieldError,
    LayeredTraceError, MAX_TRACE_TEXT_BYTES,
};

/// The most bytes a frame may have, base and enhancement together: 16 MiB,
/// more than the 12,441,600 bytes of an uncompressed 3840×2160 I420 picture,
/// the largest OpenH264 encodes.
pub const MAX_FRAME_BYTES: u64 = 16 * 1024 * 1024;

/// The most discrete enhancement layers a frame may have: 16, as many as
/// H.264 SVC's 4-bit `quality_id` can number.
pub const MAX_ENHANCEMENT_LAYERS: usize = 16;

/// The latest time a frame may have: a million seconds (11.6 days).
pub const MAX_FRAME_TIME: Duration = Duration::from_secs(1_000_000);

/// The most frames a sequence (a trace) may have: a million, 9.3 hours at
/// 30 frames a second.
pub const MAX_TRACE_FRAMES: usize = 1_000_000;

/// A layered frame or sequence out of bounds.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LayeredError {
    /// Base and enhancement together above [`MAX_FRAME_BYTES`].
    #[error("frame {number}: {bytes} bytes, more than the {MAX_FRAME_BYTES} a frame may have")]
    FrameTooLarge {
        /// The frame's number.
        number: u64,
        /// Its size, base and enhancement (saturating at `u64::MAX`).
        bytes: u64,
    },
    /// More than [`MAX_ENHANCEMENT_LAYERS`] discrete layers.
    #[error(
        "frame {number}: {layers} enhancement layers, more than the {MAX_ENHANCEMENT_LAYERS} \
         a frame may have"
    )]
    TooManyLayers {
        /// The frame's number.
        number: u64,
        /// How many layers it has.
        layers: usize,
    },
    /// A discrete layer of no bytes.
    #[error("frame {number}: enhancement layer {layer} has no bytes (a layer has at least one)")]
    EmptyLayer {
        /// The frame's number.
        number: u64,
        /// The layer, from 1 (the lowest).
        layer: usize,
    },
    /// A time after [`MAX_FRAME_TIME`], or not a time at all.
    #[error("frame {number}: time {seconds} s is not a time from 0 to {} s", MAX_FRAME_TIME.as_secs())]
    BadTime {
        /// The frame's number.
        number: u64,
        /// The time, seconds.
        seconds: f64,
    },
    /// A frame number not above the previous one.
    #[error("frame number {number} does not follow {previous}: numbers must increase")]
    NumberNotIncreasing {
        /// The previous frame's number.
        previous: u64,
        /// This frame's.
        number: u64,
    },
    /// A time before the previous frame's.
    #[error("frame {number}: time {} s is before the previous frame's {} s", time.as_secs_f64(), previous.as_secs_f64())]
    TimeGoesBack {
        /// The frame's number.
        number: u64,
        /// The previous frame's time.
        previous: Duration,
        /// This frame's.
        time: Duration,
    },
    /// More than [`MAX_TRACE_FRAMES`] frames.
    #[error("more than {MAX_TRACE_FRAMES} frames")]
    TooManyFrames,
}

/// ⌊η · `bytes`⌋: the bytes share η keeps of `bytes`; never more than
/// `bytes`.
fn share_of(share: Share, bytes: u64) -> u64 {
    // The float-to-integer cast saturates and cannot panic; `min` guards
    // against a product rounded above `bytes` (only beyond 2^53 bytes).
    ((share.get() * bytes as f64).floor() as u64).min(bytes)
}

/// A frame's enhancement layer.
///
/// The sizes are bounded only inside a [`LayeredFrame`]; on a free-standing
/// value the methods saturate rather than overflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Enhancement {
    /// One fine-granular (MPEG-4 FGS) layer, truncatable after any byte.
    Fgs {
        /// Its size.
        bytes: u64,
    },
    /// Discrete layers' sizes, lowest first; each is dropped only whole,
    /// the highest first.
    Layers(Vec<u64>),
}

impl Enhancement {
    /// No enhancement at all.
    pub const NONE: Enhancement = Enhancement::Fgs { bytes: 0 };

    /// All its bytes.
    pub fn bytes(&self) -> u64 {
        match self {
            Enhancement::Fgs { bytes } => *bytes,
            Enhancement::Layers(layers) => layers.iter().fold(0, |sum, &l| sum.saturating_add(l)),
        }
    }

    /// The bytes a share keeps: FGS ⌊η · bytes⌋; discrete layers the whole
    /// layers, lowest first, that fit in ⌊η · total⌋.
    pub fn kept_bytes(&self, share: Share) -> u64 {
        self.truncated(share).bytes()
    }

    /// What a share leaves of it: FGS cut to ⌊η · bytes⌋; of discrete
    /// layers the lowest ones whose sizes add up to at most ⌊η · total⌋.
    pub fn truncated(&self, share: Share) -> Enhancement {
        let budget = share_of(share, self.bytes());
        match self {
            Enhancement::Fgs { .. } => Enhancement::Fgs { bytes: budget },
            Enhancement::Layers(layers) => {
                let mut kept = 0u64;
                let whole = layers
                    .iter()
                    .take_while(|&&layer| {
                        kept = kept.saturating_add(layer);
                        kept <= budget
                    })
                    .count();
                Enhancement::Layers(layers[..whole].to_vec())
            }
        }
    }
}

impl fmt::Display for Enhancement {
    /// The trace file's form: `fgs:BYTES` or `layers:BYTES,BYTES,…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Enhancement::Fgs { bytes } => write!(f, "fgs:{bytes}"),
            Enhancement::Layers(layers) => {
                f.write_str("layers:")?;
                for (i, layer) in layers.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{layer}")?;
                }
                Ok(())
            }
        }
    }
}

/// One frame of scalable video: a base layer and an enhancement layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayeredFrame {
    number: u64,
    frame_type: FrameType,
    time: Duration,
    base_bytes: u64,
    enhancement: Enhancement,
}

impl LayeredFrame {
    /// Frame `number` of type `frame_type`, sent at `time` from the start,
    /// with a base layer of `base_bytes` and `enhancement`; refused beyond
    /// the bounds (see the [module documentation](self)).
    pub fn new(
        number: u64,
        frame_type: FrameType,
        time: Duration,
        base_bytes: u64,
        enhancement: Enhancement,
    ) -> Result<LayeredFrame, LayeredError> {
        if let Enhancement::Layers(layers) = &enhancement {
            if layers.len() > MAX_ENHANCEMENT_LAYERS {
                return Err(LayeredError::TooManyLayers {
                    number,
                    layers: layers.len(),
                });
            }
            if let Some(empty) = layers.iter().position(|&l| l == 0) {
                return Err(LayeredError::EmptyLayer {
                    number,
                    layer: empty + 1,
                });
            }
        }
        let bytes = base_bytes.saturating_add(enhancement.bytes());
        if bytes > MAX_FRAME_BYTES {
            return Err(LayeredError::FrameTooLarge { number, bytes });
        }
        if time > MAX_FRAME_TIME {
            return Err(LayeredError::BadTime {
                number,
                seconds: time.as_secs_f64(),
            });
        }
        Ok(LayeredFrame {
            number,
            frame_type,
            time,
            base_bytes,
            enhancement,
        })
    }

    /// The frame's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Its coding type.
    pub fn frame_type(&self) -> FrameType {
        self.frame_type
    }

    /// When it is sent, from the start of the stream.
    pub fn time(&self) -> Duration {
        self.time
    }

    /// Its base layer's size.
    pub fn base_bytes(&self) -> u64 {
        self.base_bytes
    }

    /// Its enhancement layer.
    pub fn enhancement(&self) -> &Enhancement {
        &self.enhancement
    }

    /// Its enhancement layer's size.
    pub fn enhancement_bytes(&self) -> u64 {
        self.enhancement.bytes()
    }

    /// Base and enhancement together (at most [`MAX_FRAME_BYTES`]).
    pub fn total_bytes(&self) -> u64 {
        self.base_bytes + self.enhancement.bytes()
    }

    /// Its layers' sizes in bits, as paper 004's controller takes a frame
    /// (eq. 4's F_base_k and F_enh_k). The controller treats the
    /// enhancement as fine-grained: for discrete layers its plan is to be
    /// rounded down to whole layers, as [`kept_bytes`](Self::kept_bytes)
    /// does.
    pub fn sizes(&self) -> FrameSizes {
        // At most 2^24 bytes a frame: the bits fit.
        FrameSizes {
            base_bits: self.base_bytes * 8,
            enhancement_bits: self.enhancement.bytes() * 8,
        }
    }

    /// What is sent of it at share η: the base layer and η of the
    /// enhancement (paper 004 eq. 3's F_base + η F_enh, rounded down to the
    /// byte or, for discrete layers, to the layer). [`Share::ZERO`] gives
    /// [`base_bytes`](Self::base_bytes), [`Share::ONE`]
    /// [`total_bytes`](Self::total_bytes).
    pub fn kept_bytes(&self, share: Share) -> u64 {
        self.base_bytes + self.enhancement.kept_bytes(share)
    }

    /// The frame as the share leaves it: the same frame with its
    /// enhancement truncated (see [`Enhancement::truncated`]).
    pub fn truncated(&self, share: Share) -> LayeredFrame {
        LayeredFrame {
            enhancement: self.enhancement.truncated(share),
            ..self.clone()
        }
    }

    /// Whether this frame may come after `previous` in a sequence: a higher
    /// number, and a time not before `previous`'s.
    pub fn follows(&self, previous: &LayeredFrame) -> Result<(), LayeredError> {
        if self.number <= previous.number {
            return Err(LayeredError::NumberNotIncreasing {
                previous: previous.number,
                number: self.number,
            });
        }
        if self.time < previous.time {
            return Err(LayeredError::TimeGoesBack {
                number: self.number,
                previous: previous.time,
                time: self.time,
            });
        }
        Ok(())
    }
}

/// Paper 004 eq. 3, D_txn = Σ (F_base_k + η F_enh_k): the bytes sent of
/// `frames` (the paper's one-second window) at share η, each frame rounded
/// down as in [`LayeredFrame::kept_bytes`] (the controller's
/// `scheduled_bits` is the sum before rounding, in bits).
pub fn scheduled_bytes(frames: &[LayeredFrame], share: Share) -> u64 {
    frames
        .iter()
        .fold(0, |sum, f| sum.saturating_add(f.kept_bytes(share)))
}

#[cfg(test)]
mod tests;
