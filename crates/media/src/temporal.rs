//! Temporal scalability: H.264 streams whose frames form up to four temporal
//! layers (OpenH264's hierarchical P), and dropping the upper ones.
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
//! from farther back, the larger frames.
//! The hierarchy costs the whole stream less than 0.1 dB against one layer.
//! Every kept frame decodes exactly as in the whole stream and the decoder
//! conceals nothing; the loss is all in the repeated pictures, which on this
//! moving content cost about 6.7 dB for halving the frame rate and 5 more
//! for halving it again. Keeping a frame whose reference was dropped is what
//! damages a stream (the test
//! `a_frame_kept_after_its_reference_was_dropped_is_damaged`).

use crate::codec::EncodedFrame;

/// The most temporal layers OpenH264 encodes (`MAX_TEMPORAL_LAYER_NUM`).
pub const MAX_TEMPORAL_LAYERS: u8 = 4;

/// A temporal layer count out of bounds.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TemporalError {
    /// A layer count outside 1 to [`MAX_TEMPORAL_LAYERS`].
    #[error("{0} temporal layers: OpenH264 encodes 1 to {MAX_TEMPORAL_LAYERS}")]
    LayerCount(u8),
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

#[cfg(test)]
mod tests;
