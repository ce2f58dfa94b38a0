//! Temporal scalability: H.264 streams whose frames form up to four temporal
//! layers (OpenH264's hierarchical P).
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
//! that decodes; the encoder is
//! [`codec::Encoder::with_temporal_layers`](crate::codec::Encoder::with_temporal_layers),
//! which reports each frame's id ([`codec::EncodedFrame`](crate::codec::EncodedFrame)).

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

#[cfg(test)]
mod tests;
