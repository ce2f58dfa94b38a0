//! Temporal scalability: H.264 streams whose frames form up to four temporal
//! layers (OpenH264's hierarchical P), and how paper 004's share η of the
//! enhancement maps onto whole frames of them.
//!
//! # The layers
//!
//! With T temporal layers ([`TemporalLayers`], 1 to 4) OpenH264 codes a
//! dyadic hierarchy of P frames in temporal GOPs of 2^(T−1) frames. Frame
//! *i* from an IDR has the temporal id of OpenH264's
//! `g_kuiTemporalIdListTable` (`encoder_data_tables.cpp`), which
//! [`TemporalLayers::dyadic_id`] reproduces: T = 2 gives 0, 1, 0, 1, …;
//! T = 3 gives 0, 2, 1, 2, …; T = 4 gives 0, 3, 2, 3, 1, 3, 2, 3. A frame
//! predicts only from frames of its own layer or lower
//! (`ref_list_mgr_svc.cpp`, `WelsBuildRefList`: `pRef->uiTemporalId <=
//! kuiTid`), and only from its temporal GOP, which starts at a frame of
//! layer 0 (coding one drops every other short-term reference,
//! `WelsUpdateRefList`); the highest layer is not a reference at all
//! (`nal_ref_idc` 0). So dropping every frame above a layer leaves a stream
//! that decodes ([`drop_above_layer`]); the encoder is
//! [`codec::Encoder::with_temporal_layers`](crate::codec::Encoder::with_temporal_layers),
//! which reports each frame's id ([`codec::EncodedFrame`](crate::codec::EncodedFrame)).
//!
//! # Measured
//!
//! 50 generated CIF frames ([`Generator`](crate::generator::Generator)) at
//! 25 fps and 500 kbit/s, an IDR every 48 frames, one slice a frame; upper
//! layers dropped with [`drop_above_layer`], decoded with
//! [`codec::decode_aligned`](crate::codec::decode_aligned) (a dropped
//! frame repeats the one before) and compared with the source (luma PSNR,
//! mean over the 50 frames; 50 frames are not a whole number of temporal
//! GOPs, hence 13 and 7 frames of layer 0). `cargo test -p fairstream-media --lib
//! dropping_upper_temporal_layers -- --nocapture` prints it:
//!
//! | T | layers kept | frames | frame rate | bytes   | of the stream | PSNR     |
//! |---|-------------|--------|------------|---------|---------------|----------|
//! | 1 | 0           | 50     | 25 fps     | 130,988 | 100 %         | 36.83 dB |
//! | 2 | 0           | 25     | 12.5 fps   |  84,730 | 65 %          | 30.11 dB |
//! | 2 | 0-1         | 50     | 25 fps     | 130,158 | 100 %         | 36.77 dB |
//! | 3 | 0           | 13     | 6.25 fps   |  55,334 | 44 %          | 25.18 dB |
//! | 3 | 0-1         | 25     | 12.5 fps   |  91,637 | 72 %          | 30.12 dB |
//! | 3 | 0-2         | 50     | 25 fps     | 126,547 | 100 %         | 36.75 dB |
//! | 4 | 0           | 7      | 3.125 fps  |  35,071 | 28 %          | 21.15 dB |
//! | 4 | 0-1         | 13     | 6.25 fps   |  53,366 | 42 %          | 25.17 dB |
//! | 4 | 0-2         | 25     | 12.5 fps   |  87,893 | 69 %          | 30.09 dB |
//! | 4 | 0-3         | 50     | 25 fps     | 127,016 | 100 %         | 36.73 dB |
//!
//! The bytes per layer, lowest first: T = 2, 65.1 % and 34.9 % (3,389 and
//! 1,817 bytes a frame); T = 3, 43.7 %, 28.7 % and 27.6 % (4,256, 3,025
//! and 1,396 bytes a frame); T = 4, 27.6 %, 14.4 %, 27.2 % and 30.8 %
//! (5,010, 3,049, 2,877 and 1,565 bytes a frame). OpenH264 has no rate per
//! temporal layer; its rate control gives the lower layers, which predict
//! from farther back, the larger frames. The hierarchy costs the whole
//! stream less than 0.1 dB against one layer. Every kept frame decodes
//! exactly as in the whole stream and the decoder conceals nothing; the
//! loss is all in the repeated pictures, which on this moving content cost
//! about 6.7 dB for halving the frame rate, 5 more for halving it again
//! and 4 more for the eighth. Keeping a frame whose reference was dropped is what
//! damages a stream (the test
//! `a_frame_kept_after_its_reference_was_dropped_is_damaged`).
//!
//! # Layers and paper 004's share η
//!
//! Paper 004 sends a frame's base layer whole and a share η of its
//! enhancement. A temporal layer is made of whole frames, not of a part of
//! every frame, so a [`TemporalFrame`] belongs wholly to one layer: a frame
//! of layer 0 is base, a frame of a higher layer is enhancement, and its
//! [`sizes`](TemporalFrame::sizes) give the controller either a base or an
//! enhancement of the frame's size (eq. 4's F_base_k or F_enh_k, the other
//! 0). A frame is sent whole or not at all.
//!
//! The controller plans a window of frames (`BufferSender::plan_window`)
//! and truncates each frame's enhancement; for temporal layers that
//! truncation is done over the window instead, by a [`TemporalThinner`]:
//!
//! 1. Every frame of layer 0 is sent.
//! 2. The enhancement budget is ⌊η · the window's enhancement bytes⌋
//!    ([`TemporalThinner::select_share`], the controller's rounding), or the
//!    sum of the controller's per-frame enhancement bytes
//!    ([`TemporalThinner::select`]; that sum can be a few bytes lower, one
//!    rounding per frame, and keeps the sender within the plan).
//! 3. The frames of layers 1, 2, … are taken lowest layer first and, within
//!    a layer, in time order, each whole while it fits in what is left of
//!    the budget; the first that does not fit ends the selection, so a share
//!    never keeps a frame of a higher layer while a decodable one of a lower
//!    layer is dropped, and a larger share keeps everything a smaller one
//!    keeps.
//! 4. A frame whose temporal GOP lost a reference frame of its layer or a
//!    lower one (dropped earlier, in this window or the one before) is not
//!    sent and uses no budget: it could not be decoded. This is why the
//!    thinner keeps state from window to window.
//!
//! Nothing is ever sent in part: what is kept is at most the budget; at
//! η = 1 every frame that can be decoded is kept (all of them if no earlier
//! window dropped any), at η = 0 layer 0 alone.
//!
//! To drive it: give each window's frames' [`sizes`](TemporalFrame::sizes)
//! to `BufferSender::plan_window`, then [`TemporalThinner::select`] the
//! same frames with the sum of the plan's `FramePlan::enhancement_bytes`,
//! and send the frames the [`Selection`] keeps, whole, in order, paced at
//! the plan's rate.
//!
//! Bounds are [`layered`](crate::layered)'s: a frame has at most
//! [`MAX_FRAME_BYTES`] and a time of at most [`MAX_FRAME_TIME`], frame
//! numbers increase and times never go back, a window has at most
//! [`MAX_TRACE_FRAMES`] frames.

use std::time::Duration;

use fairstream_proto::cc::buffer::{FrameSizes, Share};

use crate::codec::EncodedFrame;
use crate::layered::{
    Enhancement, LayeredError, MAX_FRAME_BYTES, MAX_FRAME_TIME, MAX_TRACE_FRAMES,
};

/// The most temporal layers OpenH264 encodes (`MAX_TEMPORAL_LAYER_NUM`).
pub const MAX_TEMPORAL_LAYERS: u8 = 4;

/// A temporal layer count or frame out of bounds.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TemporalError {
    /// A layer count outside 1 to [`MAX_TEMPORAL_LAYERS`].
    #[error("{0} temporal layers: OpenH264 encodes 1 to {MAX_TEMPORAL_LAYERS}")]
    LayerCount(u8),
    /// A temporal id the stream's layers do not have.
    #[error(
        "frame {number}: temporal id {temporal_id}, but the stream has {layers} temporal \
         layer(s), ids 0 to {}", layers.saturating_sub(1)
    )]
    IdOutOfRange {
        /// The frame's number.
        number: u64,
        /// Its temporal id.
        temporal_id: u8,
        /// How many layers the stream has.
        layers: u8,
    },
    /// A frame's size or time, or the order of frames, out of bounds.
    #[error(transparent)]
    Frame(#[from] LayeredError),
}

/// How many temporal layers a stream has: 1 (no temporal scalability) to
/// [`MAX_TEMPORAL_LAYERS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TemporalLayers(u8);

impl Default for TemporalLayers {
    /// One layer: an ordinary stream.
    fn default() -> TemporalLayers {
        TemporalLayers::ONE
    }
}

impl TemporalLayers {
    /// One layer: every frame has temporal id 0.
    pub const ONE: TemporalLayers = TemporalLayers(1);

    /// `count` layers; refused outside 1 to [`MAX_TEMPORAL_LAYERS`].
    pub fn new(count: u8) -> Result<TemporalLayers, TemporalError> {
        if (1..=MAX_TEMPORAL_LAYERS).contains(&count) {
            Ok(TemporalLayers(count))
        } else {
            Err(TemporalError::LayerCount(count))
        }
    }

    /// The number of layers, T.
    pub fn count(self) -> u8 {
        self.0
    }

    /// The highest temporal id, T − 1.
    pub fn highest_id(self) -> u8 {
        self.0 - 1
    }

    /// Frames in a temporal GOP, 2^(T−1) (OpenH264's `uiGopSize`,
    /// `param_svc.h`); an IDR period must be a multiple of it.
    pub fn gop_frames(self) -> u32 {
        1 << (self.0 - 1)
    }

    /// The temporal id OpenH264 gives frame `index` counted from an IDR
    /// (`g_kuiTemporalIdListTable`): 0 at the start of each temporal GOP,
    /// else T − 1 less the number of times 2 divides the frame's position
    /// in its GOP.
    pub fn dyadic_id(self, index: u64) -> u8 {
        let position = index % u64::from(self.gop_frames());
        if position == 0 {
            return 0;
        }
        // position < 2^(T−1) ≤ 8, so trailing_zeros < T − 1.
        self.highest_id() - position.trailing_zeros() as u8
    }

    /// Whether frames of layer `temporal_id` are references for others:
    /// all but the highest layer's, and every frame of a one-layer stream.
    pub fn is_reference(self, temporal_id: u8) -> bool {
        self.0 == 1 || temporal_id < self.highest_id()
    }

    /// Checks that `frame` has one of these layers' ids.
    fn check(self, frame: &TemporalFrame) -> Result<(), TemporalError> {
        if frame.temporal_id > self.highest_id() {
            return Err(TemporalError::IdOutOfRange {
                number: frame.number,
                temporal_id: frame.temporal_id,
                layers: self.0,
            });
        }
        Ok(())
    }
}

/// Keeps the frames of layers 0 to `highest_kept` of `frames` (a stream
/// in encoding order) and drops the rest: each kept frame's index in
/// `frames` and its bytes, as [`codec::decode_aligned`](crate::codec::decode_aligned)
/// takes them, so that a dropped frame is repeated from the one before.
pub fn drop_above_layer(frames: &[EncodedFrame], highest_kept: u8) -> Vec<(usize, &[u8])> {
    frames
        .iter()
        .enumerate()
        .filter(|(_, frame)| frame.temporal_id <= highest_kept)
        .map(|(index, frame)| (index, frame.bytes.as_slice()))
        .collect()
}

/// One frame of a temporally layered stream as the sender plans it: all
/// its bytes belong to layer `temporal_id` (0 is the base).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemporalFrame {
    number: u64,
    time: Duration,
    temporal_id: u8,
    bytes: u64,
}

impl TemporalFrame {
    /// Frame `number`, sent at `time` from the start, of layer
    /// `temporal_id`, `bytes` long; refused beyond the bounds (see the
    /// [module documentation](self)) or with an id of
    /// [`MAX_TEMPORAL_LAYERS`] or more.
    pub fn new(
        number: u64,
        time: Duration,
        temporal_id: u8,
        bytes: u64,
    ) -> Result<TemporalFrame, TemporalError> {
        if temporal_id >= MAX_TEMPORAL_LAYERS {
            return Err(TemporalError::IdOutOfRange {
                number,
                temporal_id,
                layers: MAX_TEMPORAL_LAYERS,
            });
        }
        if bytes > MAX_FRAME_BYTES {
            return Err(LayeredError::FrameTooLarge { number, bytes }.into());
        }
        if time > MAX_FRAME_TIME {
            return Err(LayeredError::BadTime {
                number,
                seconds: time.as_secs_f64(),
            }
            .into());
        }
        Ok(TemporalFrame {
            number,
            time,
            temporal_id,
            bytes,
        })
    }

    /// The frame `number` sent at `time` of an encoder's output.
    pub fn from_encoded(
        number: u64,
        time: Duration,
        frame: &EncodedFrame,
    ) -> Result<TemporalFrame, TemporalError> {
        let bytes = u64::try_from(frame.bytes.len()).unwrap_or(u64::MAX);
        TemporalFrame::new(number, time, frame.temporal_id, bytes)
    }

    /// The frame's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// When it is sent, from the start of the stream.
    pub fn time(&self) -> Duration {
        self.time
    }

    /// Its temporal layer.
    pub fn temporal_id(&self) -> u8 {
        self.temporal_id
    }

    /// Its size.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether it is base (layer 0).
    pub fn is_base(&self) -> bool {
        self.temporal_id == 0
    }

    /// Its sizes in bits as paper 004's controller takes a frame: all base
    /// (layer 0) or all enhancement (a higher layer).
    pub fn sizes(&self) -> FrameSizes {
        // At most 2^24 bytes a frame: the bits fit.
        FrameSizes::in_layer(!self.is_base(), self.bytes * 8)
    }

    /// Whether this frame may come after `previous`: a higher number, and a
    /// time not before `previous`'s.
    fn follows(&self, previous: (u64, Duration)) -> Result<(), LayeredError> {
        let (number, time) = previous;
        if self.number <= number {
            return Err(LayeredError::NumberNotIncreasing {
                previous: number,
                number: self.number,
            });
        }
        if self.time < time {
            return Err(LayeredError::TimeGoesBack {
                number: self.number,
                previous: time,
                time: self.time,
            });
        }
        Ok(())
    }
}

/// The bytes of each temporal layer in `frames` (index = temporal id),
/// saturating.
pub fn bytes_per_layer(frames: &[TemporalFrame]) -> [u64; MAX_TEMPORAL_LAYERS as usize] {
    let mut layers = [0u64; MAX_TEMPORAL_LAYERS as usize];
    for frame in frames {
        // `new` bounds the id below MAX_TEMPORAL_LAYERS.
        if let Some(sum) = layers.get_mut(usize::from(frame.temporal_id)) {
            *sum = sum.saturating_add(frame.bytes);
        }
    }
    layers
}

/// What a [`TemporalThinner`] sends of a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// One flag a frame of the window, in order: whether it is sent.
    pub keep: Vec<bool>,
    /// The bytes of layer 0 (all sent).
    pub base_bytes: u64,
    /// The bytes of the higher layers' frames sent.
    pub enhancement_bytes: u64,
}

impl Selection {
    /// All the bytes sent.
    pub fn kept_bytes(&self) -> u64 {
        self.base_bytes.saturating_add(self.enhancement_bytes)
    }

    /// How many frames are sent.
    pub fn kept_frames(&self) -> usize {
        self.keep.iter().filter(|&&k| k).count()
    }
}

/// Chooses, window after window, the whole frames of a temporally layered
/// stream that a share η of its enhancement sends (the rules are in the
/// [module documentation](self)).
///
/// Give it every frame of the stream, in order, split into windows; it
/// remembers which reference frames of the temporal GOP in progress were
/// dropped, so that a frame that needs one is dropped too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemporalThinner {
    layers: TemporalLayers,
    /// The lowest layer of a reference frame dropped since the last frame
    /// of layer 0, if any: frames of that layer and above cannot be
    /// decoded until the next frame of layer 0.
    lost_from: Option<u8>,
    /// The number and time of the last frame seen.
    last: Option<(u64, Duration)>,
}

impl TemporalThinner {
    /// A thinner for a stream of `layers`.
    pub fn new(layers: TemporalLayers) -> TemporalThinner {
        TemporalThinner {
            layers,
            lost_from: None,
            last: None,
        }
    }

    /// The stream's layers.
    pub fn layers(&self) -> TemporalLayers {
        self.layers
    }

    /// The frames of `window` (the stream's next frames) sent at share η:
    /// the enhancement budget is ⌊η · the window's enhancement bytes⌋.
    pub fn select_share(
        &mut self,
        window: &[TemporalFrame],
        share: Share,
    ) -> Result<Selection, TemporalError> {
        let enhancement = window
            .iter()
            .filter(|f| !f.is_base())
            .fold(0u64, |sum, f| sum.saturating_add(f.bytes));
        // The same ⌊η · bytes⌋ as an FGS layer of that size, and as the
        // controller's `FramePlan::enhancement_bytes`.
        let budget = Enhancement::Fgs { bytes: enhancement }.kept_bytes(share);
        self.select(window, budget)
    }

    /// The frames of `window` (the stream's next frames) sent with at most
    /// `enhancement_budget_bytes` of frames above layer 0. Refused, with
    /// nothing remembered, if a frame has an id above the stream's layers,
    /// does not follow the frame before it, or the window has more than
    /// [`MAX_TRACE_FRAMES`] frames.
    pub fn select(
        &mut self,
        window: &[TemporalFrame],
        enhancement_budget_bytes: u64,
    ) -> Result<Selection, TemporalError> {
        if window.len() > MAX_TRACE_FRAMES {
            return Err(LayeredError::TooManyFrames.into());
        }
        let mut last = self.last;
        for frame in window {
            self.layers.check(frame)?;
            if let Some(previous) = last {
                frame.follows(previous)?;
            }
            last = Some((frame.number, frame.time));
        }
        let mut keep: Vec<bool> = window.iter().map(TemporalFrame::is_base).collect();
        let base_bytes = window
            .iter()
            .filter(|f| f.is_base())
            .fold(0u64, |sum, f| sum.saturating_add(f.bytes));
        let mut left = enhancement_budget_bytes;
        let mut full = false;
        for layer in 1..self.layers.count() {
            // Whether a reference frame of this layer or below is missing
            // from the temporal GOP in progress.
            let mut lost = self.lost_from.is_some_and(|from| from <= layer);
            for (kept, frame) in keep.iter_mut().zip(window) {
                let id = frame.temporal_id;
                if id == 0 {
                    lost = false;
                    continue;
                }
                if id == layer && !lost && !full {
                    if frame.bytes <= left {
                        *kept = true;
                        left -= frame.bytes;
                    } else {
                        // Lowest layer first, time order within a layer:
                        // the first frame that does not fit ends it.
                        full = true;
                    }
                }
                if id <= layer && !*kept && self.layers.is_reference(id) {
                    lost = true;
                }
            }
        }
        for (kept, frame) in keep.iter().zip(window) {
            let id = frame.temporal_id;
            if id == 0 {
                self.lost_from = None;
            } else if !kept && self.layers.is_reference(id) {
                self.lost_from = Some(self.lost_from.map_or(id, |from| from.min(id)));
            }
        }
        self.last = last;
        Ok(Selection {
            keep,
            base_bytes,
            enhancement_bytes: enhancement_budget_bytes - left,
        })
    }
}

#[cfg(test)]
mod tests;
