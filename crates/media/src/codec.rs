//! H.264 encoding and decoding in-process with OpenH264 (the `openh264`
//! crate, built from its bundled source).
//!
//! **Decoding with error concealment.** The crate's safe `decode()` leaves
//! OpenH264's concealment off and treats a frame the decoder flagged as
//! concealed as an error, so a lossy stream loses every damaged frame. A
//! receiver wants the opposite: [`Decoder`] sets `DECODER_OPTION_ERROR_CON_IDC`
//! (default [`DEFAULT_CONCEALMENT`], OpenH264's slice-copy with motion
//! vectors across IDR) and accepts frames returned with
//! `dsDataErrorConcealed`. That needs the crate's raw API, so this module is
//! the crate's only `unsafe` code; each block says why it is sound.
//!
//! **Temporal layers.** [`Encoder::with_temporal_layers`] encodes T = 1 to
//! 4 temporal layers ([`TemporalLayers`]) and
//! [`encode_layered`](Encoder::encode_layered) reports each frame's temporal
//! id (see [`crate::temporal`]). The `openh264` crate's encoder always
//! initialises OpenH264 with one temporal layer, on the first frame it
//! encodes, so the encoder encodes the first frame once and throws it away,
//! then reads the parameters back (`ENCODER_OPTION_SVC_ENCODE_PARAM_EXT`)
//! and sets them again with T layers and the reference count OpenH264's own
//! `InitializeExt` would choose for them: that re-initialises OpenH264
//! (`WelsEncoderParamAdjust`, `encoder_ext.cpp`: a reset when the reference
//! count grows, or at one reference from one to two layers), and the stream
//! starts at the next frame, an IDR with new parameter sets. A change of
//! picture size would re-initialise with one layer again, so a layered
//! encoder refuses one ([`CodecError::SizeChanged`]).
//!
//! **Frame alignment** is the caller's: [`decode_aligned`] feeds one access
//! unit per reference frame and repeats the previous picture when the decoder
//! gives none (EvalVid's convention), so that frame *i* lines up with
//! reference frame *i*.

use std::ptr::null_mut;

use openh264::decoder::{Decoder as OpenH264Decoder, DecoderConfig};
use openh264::encoder::{BitRate, Encoder as OpenH264Encoder, EncoderConfig, FrameRate};
use openh264::encoder::{IntraFramePeriod, RateControlMode};
use openh264::formats::YUVBuffer;
use openh264::OpenH264API;
use openh264_sys2::{
    dsDstBufNeedExpan, dsInitialOptExpected, dsInvalidArgument, dsOutOfMemory, SBitrateInfo,
    SBufferInfo, SEncParamExt, DECODER_OPTION_ERROR_CON_IDC, ENCODER_OPTION_BITRATE,
    ENCODER_OPTION_MAX_BITRATE, ENCODER_OPTION_SVC_ENCODE_PARAM_EXT, SPATIAL_LAYER_0,
    SPATIAL_LAYER_ALL,
};

use crate::temporal::TemporalLayers;
use crate::yuv::{Frame, YuvError};

/// OpenH264's `ERROR_CON_SLICE_MV_COPY_CROSS_IDR` (6): conceal lost slices
/// by copying with the neighbours' motion vectors, also across IDRs.
pub const DEFAULT_CONCEALMENT: u8 = 6;
/// The largest concealment mode OpenH264 knows
/// (`ERROR_CON_SLICE_MV_COPY_CROSS_IDR_FREEZE_RES_CHANGE`).
pub const MAX_CONCEALMENT: u8 = 7;

/// What went wrong in the codec.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// OpenH264 refused to start or reported a fatal state.
    #[error("OpenH264: {0}")]
    OpenH264(String),
    /// A concealment mode outside 0-7.
    #[error("concealment mode {0} does not exist (OpenH264 has modes 0 to 7)")]
    BadConcealment(u8),
    /// The decoder produced a picture this crate cannot hold.
    #[error("decoded picture: {0}")]
    Picture(#[from] YuvError),
    /// Encoder settings out of range.
    #[error("encoder: {0}")]
    BadEncoderSettings(String),
    /// A frame of another size than the first to an encoder of several
    /// temporal layers (OpenH264 would go back to one layer).
    #[error(
        "a {}x{} frame after {}x{} ones: an encoder with temporal layers keeps its picture size",
        to.0, to.1, from.0, from.1
    )]
    SizeChanged {
        /// The size of the frames before.
        from: (u32, u32),
        /// The size of this frame.
        to: (u32, u32),
    },
}

/// An H.264 decoder that conceals errors.
pub struct Decoder {
    inner: OpenH264Decoder,
    concealed: u64,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("concealed", &self.concealed)
            .finish()
    }
}

impl Decoder {
    /// A decoder with concealment mode `concealment` (0 turns it off; see
    /// [`DEFAULT_CONCEALMENT`]).
    #[allow(unsafe_code)]
    pub fn new(concealment: u8) -> Result<Decoder, CodecError> {
        if concealment > MAX_CONCEALMENT {
            return Err(CodecError::BadConcealment(concealment));
        }
        let mut inner =
            OpenH264Decoder::with_api_config(OpenH264API::from_source(), DecoderConfig::new())
                .map_err(|e| CodecError::OpenH264(e.to_string()))?;
        let mut mode = std::os::raw::c_int::from(concealment);
        // SAFETY: the decoder was initialised by `with_api_config`; the
        // option is an int read during the call, and `mode` outlives it.
        let status = unsafe {
            inner
                .raw_api()
                .set_option(DECODER_OPTION_ERROR_CON_IDC, (&raw mut mode).cast())
        };
        if status != 0 {
            return Err(CodecError::OpenH264(format!(
                "setting concealment mode {concealment} failed ({status})"
            )));
        }
        Ok(Decoder {
            inner,
            concealed: 0,
        })
    }

    /// Pictures returned with a decoding state other than error-free so
    /// far: concealed, or predicted from a concealed picture.
    pub fn concealed(&self) -> u64 {
        self.concealed
    }

    /// Decodes one access unit (Annex B, start codes included; it may be
    /// damaged or incomplete), tagged `tag`, and returns the pictures the
    /// decoder produced, each with the tag of the access unit it came from
    /// (normally this one; OpenH264 may also finish an earlier picture).
    ///
    /// The unit is given to `DecodeFrame2` and then the end of the unit is
    /// signalled with `DecodeFrame2(NULL, 0)`, as OpenH264's own console
    /// decoder does: `DecodeFrameNoDelay` cannot finish (and conceal) a
    /// picture that lost its last slices (OpenH264 issue 3077).
    #[allow(unsafe_code)]
    pub fn decode(
        &mut self,
        access_unit: &[u8],
        tag: u64,
    ) -> Result<Vec<(u64, Frame)>, CodecError> {
        let mut pictures = Vec::new();
        if access_unit.is_empty() {
            return Ok(pictures);
        }
        let length = std::os::raw::c_int::try_from(access_unit.len())
            .map_err(|_| CodecError::OpenH264("access unit larger than 2 GiB".into()))?;
        for (source, source_len) in [(access_unit.as_ptr(), length), (std::ptr::null(), 0)] {
            let mut planes: [*mut u8; 3] = [null_mut(); 3];
            // OpenH264 carries the input's time stamp to the picture it makes.
            let mut info = SBufferInfo {
                uiInBsTimeStamp: tag,
                ..SBufferInfo::default()
            };
            // SAFETY: the source pointer and length describe `access_unit`,
            // which is borrowed for the call (or are null and 0, the
            // documented end-of-unit call); `planes` and `info` are valid
            // out-parameters of the sizes OpenH264 writes (three pointers
            // and one SBufferInfo).
            let state = unsafe {
                self.inner.raw_api().decode_frame2(
                    source,
                    source_len,
                    planes.as_mut_ptr(),
                    &raw mut info,
                )
            };
            let fatal =
                dsInvalidArgument | dsInitialOptExpected | dsOutOfMemory | dsDstBufNeedExpan;
            if state & fatal != 0 {
                return Err(CodecError::OpenH264(format!("decoding state {state:#x}")));
            }
            if let Some(picture) = self.take_picture(&planes, &info, state)? {
                pictures.push(picture);
            }
        }
        Ok(pictures)
    }

    /// Copies out the picture OpenH264 returned, if there is one.
    #[allow(unsafe_code)]
    fn take_picture(
        &mut self,
        planes: &[*mut u8; 3],
        info: &SBufferInfo,
        state: std::os::raw::c_int,
    ) -> Result<Option<(u64, Frame)>, CodecError> {
        if info.iBufferStatus != 1 || planes.iter().any(|p| p.is_null()) {
            return Ok(None);
        }
        if state != 0 {
            self.concealed += 1;
        }
        // SAFETY: with iBufferStatus == 1 the union holds the system buffer
        // description (OpenH264's decoder only writes that variant).
        let buffer = unsafe { info.UsrData.sSystemBuffer };
        let (width, height) = (buffer.iWidth, buffer.iHeight);
        let (luma_stride, chroma_stride) = (buffer.iStride[0], buffer.iStride[1]);
        if width <= 0 || height <= 0 || luma_stride < width || chroma_stride < (width + 1) / 2 {
            return Err(CodecError::OpenH264(format!(
                "picture {width}x{height} with strides {luma_stride}/{chroma_stride}"
            )));
        }
        let (w, h) = (width as usize, height as usize);
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        let mut data = Vec::with_capacity(w * h + 2 * cw * ch);
        // SAFETY: OpenH264 returned three non-null planes of `height` rows
        // of `luma_stride` bytes (Y) and `(height + 1) / 2` rows of
        // `chroma_stride` bytes (U, V), valid until the next decoder call;
        // they are copied out before it, reading `width` (or `(width + 1) /
        // 2`) bytes of each row, within the stride checked above.
        unsafe {
            for (plane, rows, columns, stride) in [
                (planes[0], h, w, luma_stride as usize),
                (planes[1], ch, cw, chroma_stride as usize),
                (planes[2], ch, cw, chroma_stride as usize),
            ] {
                for row in 0..rows {
                    let start = plane.add(row * stride);
                    data.extend_from_slice(std::slice::from_raw_parts(start, columns));
                }
            }
        }
        let frame = Frame::from_i420(width as u32, height as u32, data)?;
        Ok(Some((info.uiOutYuvTimeStamp, frame)))
    }
}

impl Decoder {
    /// Takes a picture the decoder still holds, if any (after the last
    /// access unit), with its access unit's tag.
    #[allow(unsafe_code)]
    pub fn flush(&mut self) -> Result<Option<(u64, Frame)>, CodecError> {
        let mut planes: [*mut u8; 3] = [null_mut(); 3];
        let mut info = SBufferInfo::default();
        // SAFETY: `planes` and `info` are valid out-parameters of the sizes
        // OpenH264 writes.
        unsafe {
            self.inner
                .raw_api()
                .flush_frame(planes.as_mut_ptr(), &raw mut info);
        }
        self.take_picture(&planes, &info, 0)
    }
}

/// Decodes access units that belong to reference frames `0..frames`:
/// `units` yields (reference frame index, the bytes received of that access
/// unit). A frame the decoder does not produce is replaced by the previous
/// picture (or mid-grey before the first), so the result has exactly
/// `frames` pictures, frame *i* aligned with reference frame *i*. Returns the
/// pictures and how many were repeats.
pub fn decode_aligned<'a>(
    decoder: &mut Decoder,
    units: impl IntoIterator<Item = (usize, &'a [u8])>,
    frames: usize,
    size: (u32, u32),
) -> Result<(Vec<Frame>, usize), CodecError> {
    let mut decoded: Vec<Option<Frame>> = vec![None; frames];
    let mut place = |picture: Option<(u64, Frame)>| {
        if let Some((tag, frame)) = picture {
            if let Some(slot) = usize::try_from(tag).ok().and_then(|i| decoded.get_mut(i)) {
                *slot = Some(frame);
            }
        }
    };
    for (index, bytes) in units {
        for picture in decoder.decode(bytes, index as u64)? {
            place(Some(picture));
        }
    }
    place(decoder.flush()?);
    let mut out = Vec::with_capacity(frames);
    let mut repeats = 0;
    let grey = Frame::filled(size.0, size.1, 128, 128, 128)?;
    for slot in decoded {
        match slot {
            Some(frame) => out.push(frame),
            None => {
                repeats += 1;
                out.push(out.last().cloned().unwrap_or_else(|| grey.clone()));
            }
        }
    }
    Ok((out, repeats))
}

/// Settings of the H.264 encoder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EncoderSettings {
    /// Target bitrate, bits/s.
    pub bitrate_bps: u32,
    /// Frames per second.
    pub fps: f32,
    /// Frames from one IDR to the next (the GOP length).
    pub gop: u32,
    /// The largest slice (NAL unit) in bytes: each slice fits a packet
    /// (paper 000 used 900-byte slices). `None`: one slice a frame.
    pub slice_max_bytes: Option<u32>,
}

/// One frame as the encoder made it: its Annex B bytes and its temporal
/// layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedFrame {
    /// Annex B bytes (several NAL units, with start codes); the first frame
    /// also carries the parameter sets.
    pub bytes: Vec<u8>,
    /// The frame's temporal id, 0 (the base) to T − 1, as OpenH264
    /// reports it (`SLayerBSInfo::uiTemporalId`); 0 for a frame without
    /// coded slices (OpenH264 skipped it).
    pub temporal_id: u8,
}

/// An H.264 encoder (OpenH264, Constrained Baseline, bitrate-controlled),
/// with one temporal layer or several.
pub struct Encoder {
    inner: OpenH264Encoder,
    settings: EncoderSettings,
    layers: TemporalLayers,
    /// The size of the first frame, once one was encoded (OpenH264 is
    /// initialised on the first).
    size: Option<(u32, u32)>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("settings", &self.settings)
            .field("layers", &self.layers)
            .finish()
    }
}

/// The reference frames OpenH264's `InitializeExt` chooses for camera video
/// without long-term references (`welsEncoderExt.cpp`: `(uiGopSize >> 1) >
/// 1 ? uiGopSize >> 1 : MIN_REF_PIC_COUNT`): 1, 1, 2 and 4 for T = 1 to 4.
fn reference_frames(layers: TemporalLayers) -> std::os::raw::c_int {
    let half_gop = layers.gop_frames() >> 1;
    // At most 4: fits.
    half_gop.max(1) as std::os::raw::c_int
}

impl Encoder {
    /// An encoder with `settings` and one temporal layer.
    pub fn new(settings: EncoderSettings) -> Result<Encoder, CodecError> {
        Encoder::with_temporal_layers(settings, TemporalLayers::ONE)
    }

    /// An encoder with `settings` and `layers` temporal layers. The GOP
    /// must be a multiple of the temporal GOP, 2^(T−1) frames (OpenH264
    /// would round it up).
    pub fn with_temporal_layers(
        settings: EncoderSettings,
        layers: TemporalLayers,
    ) -> Result<Encoder, CodecError> {
        if settings.bitrate_bps < 1000 {
            return Err(CodecError::BadEncoderSettings(format!(
                "bitrate {} bit/s is below 1 kbit/s",
                settings.bitrate_bps
            )));
        }
        if !(settings.fps > 0.0 && settings.fps <= 240.0) {
            return Err(CodecError::BadEncoderSettings(format!(
                "frame rate {} is outside (0, 240]",
                settings.fps
            )));
        }
        if settings.gop == 0 {
            return Err(CodecError::BadEncoderSettings("GOP length 0".into()));
        }
        // welsEncoderExt.cpp: "valid in case it equals to 0 for unlimited
        // intra period or exceeds specified uiGopSize also multiple of it".
        if settings.gop % layers.gop_frames() != 0 {
            return Err(CodecError::BadEncoderSettings(format!(
                "GOP length {} is not a multiple of {}, the temporal GOP of {} temporal layers",
                settings.gop,
                layers.gop_frames(),
                layers.count()
            )));
        }
        if settings.slice_max_bytes.is_some_and(|s| s < 100) {
            return Err(CodecError::BadEncoderSettings(
                "maximum slice size below 100 bytes".into(),
            ));
        }
        let mut config = EncoderConfig::new()
            .bitrate(BitRate::from_bps(settings.bitrate_bps))
            .max_frame_rate(FrameRate::from_hz(settings.fps))
            .rate_control_mode(RateControlMode::Bitrate)
            .skip_frames(false)
            .intra_frame_period(IntraFramePeriod::from_num_frames(settings.gop))
            // One encoder thread: OpenH264's default (0) uses one thread per
            // core, and with size-limited slices the bitstream then depends
            // on the machine's core count (a 4-core CI machine encoded the
            // same frames into other slices than a 2-core one). The same
            // settings must give the same stream everywhere.
            .num_threads(1);
        if let Some(max) = settings.slice_max_bytes {
            config = config.max_slice_len(max);
        }
        let inner = OpenH264Encoder::with_api_config(OpenH264API::from_source(), config)
            .map_err(|e| CodecError::OpenH264(e.to_string()))?;
        Ok(Encoder {
            inner,
            settings,
            layers,
            size: None,
        })
    }

    /// Changes the target bitrate from the next frame on (an encoder
    /// following a rate controller). Below 1 kbit/s is refused.
    pub fn set_bitrate(&mut self, bitrate_bps: u32) -> Result<(), CodecError> {
        if bitrate_bps < 1000 {
            return Err(CodecError::BadEncoderSettings(format!(
                "bitrate {bitrate_bps} bit/s is below 1 kbit/s"
            )));
        }
        if self.size.is_none() {
            // Not initialised yet: start again with the new setting.
            let settings = EncoderSettings {
                bitrate_bps,
                ..self.settings
            };
            *self = Encoder::with_temporal_layers(settings, self.layers)?;
            return Ok(());
        }
        let bitrate = std::os::raw::c_int::try_from(bitrate_bps).unwrap_or(i32::MAX);
        // OpenH264 refuses a layer bitrate above the layer's maximum: raise
        // the maximum (to twice the target: equal, the encoder stays below
        // the target) before raising the target, lower it after.
        let max = (
            SPATIAL_LAYER_0,
            ENCODER_OPTION_MAX_BITRATE,
            bitrate.saturating_mul(2),
        );
        let target = (SPATIAL_LAYER_ALL, ENCODER_OPTION_BITRATE, bitrate);
        let order = if bitrate_bps >= self.settings.bitrate_bps {
            [max, target]
        } else {
            [target, max]
        };
        for (layer, option, value) in order {
            let mut info = SBitrateInfo {
                iLayer: layer,
                iBitrate: value,
            };
            // SAFETY: the encoder was initialised by its first `encode`;
            // both options read one SBitrateInfo during the call, and `info`
            // outlives it.
            let status = unsafe {
                self.inner
                    .raw_api()
                    .set_option(option, (&raw mut info).cast())
            };
            if status != 0 {
                return Err(CodecError::OpenH264(format!(
                    "setting the bitrate to {bitrate_bps} bit/s failed ({status})"
                )));
            }
        }
        self.settings.bitrate_bps = bitrate_bps;
        Ok(())
    }

    /// The settings.
    pub fn settings(&self) -> EncoderSettings {
        self.settings
    }

    /// The temporal layers.
    pub fn temporal_layers(&self) -> TemporalLayers {
        self.layers
    }

    /// Encodes one frame; returns its Annex B bytes (several NAL units).
    pub fn encode(&mut self, frame: &Frame) -> Result<Vec<u8>, CodecError> {
        Ok(self.encode_layered(frame)?.bytes)
    }

    /// Encodes one frame; returns its Annex B bytes and its temporal id.
    /// With temporal layers, every frame must have the first one's size.
    pub fn encode_layered(&mut self, frame: &Frame) -> Result<EncodedFrame, CodecError> {
        let size = (frame.width(), frame.height());
        let source = YUVBuffer::from_vec(
            frame.as_i420().to_vec(),
            frame.width() as usize,
            frame.height() as usize,
        );
        let layered = self.layers != TemporalLayers::ONE;
        let first = match self.size {
            None => {
                if layered {
                    self.start_temporal_layers(&source)?;
                }
                self.size = Some(size);
                true
            }
            Some(from) if from != size && layered => {
                return Err(CodecError::SizeChanged { from, to: size });
            }
            Some(_) => false,
        };
        let bitstream = self
            .inner
            .encode(&source)
            .map_err(|e| CodecError::OpenH264(e.to_string()))?;
        if first && layered && bitstream.frame_type() != openh264::encoder::FrameType::IDR {
            return Err(CodecError::OpenH264(format!(
                "the first frame with temporal layers is {:?}, not an IDR: OpenH264 did not \
                 restart the sequence",
                bitstream.frame_type()
            )));
        }
        let mut temporal_id = None;
        for layer in (0..bitstream.num_layers()).filter_map(|i| bitstream.layer(i)) {
            if !layer.is_video() {
                continue;
            }
            let id = layer.raw_info().uiTemporalId;
            match temporal_id {
                Some(seen) if seen != id => {
                    return Err(CodecError::OpenH264(format!(
                        "one frame's layers report temporal ids {seen} and {id}"
                    )));
                }
                _ => temporal_id = Some(id),
            }
        }
        let temporal_id = temporal_id.unwrap_or(0);
        if temporal_id > self.layers.highest_id() {
            return Err(CodecError::OpenH264(format!(
                "temporal id {temporal_id} from an encoder of {} temporal layer(s)",
                self.layers.count()
            )));
        }
        Ok(EncodedFrame {
            bytes: bitstream.to_vec(),
            temporal_id,
        })
    }

    /// Initialises OpenH264 by encoding `first` (thrown away), then
    /// switches it to the temporal layers, which re-initialises it: the next
    /// frame starts the stream (see the module documentation).
    #[allow(unsafe_code)]
    fn start_temporal_layers(&mut self, first: &YUVBuffer) -> Result<(), CodecError> {
        self.inner
            .encode(first)
            .map_err(|e| CodecError::OpenH264(e.to_string()))?;
        let mut params = SEncParamExt::default();
        // SAFETY: the encoder was initialised by the `encode` above; the
        // option copies one SEncParamExt (`memcpy` of its size) into
        // `params`, which outlives the call. All-zero is a valid value of
        // the plain-data struct before that.
        let status = unsafe {
            self.inner.raw_api().get_option(
                ENCODER_OPTION_SVC_ENCODE_PARAM_EXT,
                (&raw mut params).cast(),
            )
        };
        if status != 0 {
            return Err(CodecError::OpenH264(format!(
                "reading the encoder parameters failed ({status})"
            )));
        }
        params.iTemporalLayerNum = std::os::raw::c_int::from(self.layers.count());
        params.iNumRefFrame = reference_frames(self.layers);
        // SAFETY: the encoder is initialised; the option reads one
        // SEncParamExt during the call, and `params` outlives it. The
        // parameters are the encoder's own but for the layer and reference
        // counts, which OpenH264 validates (`ParamValidationExt`). The
        // `openh264` wrapper relies on neither (`raw_api`'s contract): it
        // sets its parameters again only when the picture size changes,
        // which `encode_layered` refuses with temporal layers.
        let status = unsafe {
            self.inner.raw_api().set_option(
                ENCODER_OPTION_SVC_ENCODE_PARAM_EXT,
                (&raw mut params).cast(),
            )
        };
        if status != 0 {
            return Err(CodecError::OpenH264(format!(
                "setting {} temporal layers failed ({status})",
                self.layers.count()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod temporal_tests;
#[cfg(test)]
mod tests;
