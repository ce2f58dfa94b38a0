//! H.264 Annex B byte streams: NAL units, access units (frames), and what a
//! frame is (I, P or B; IDR; `frame_num`) read from its slice headers.
//!
//! - [`split_nal_units`] finds the NAL units between start codes (ITU-T
//!   H.264 Annex B).
//! - [`parse_stream`] groups them into [`AccessUnit`]s (§7.4.1.2.3) and reads
//!   each frame's type and number from its first slice header (§7.3.3), with
//!   the sequence and picture parameter sets it refers to (§7.3.2.1, §7.3.2.2).
//!
//! Damage is reported, not fatal: a NAL unit whose header cannot be read is
//! counted in [`StreamReport::damaged_nal_units`] and its access unit is kept
//! with what could be read. Only input that is not an Annex B stream at all
//! is an error ([`H264Error::NotAnnexB`]).

mod bits;
pub mod incremental;
mod vui;

pub use vui::{probe_frame_rate, FrameRateProbe, VuiTiming};

use std::collections::BTreeMap;
use std::ops::Range;

use bits::{rbsp, BitReader, BitsExhausted};

/// NAL unit types (Table 7-1) this module uses.
pub mod nal_type {
    /// Coded slice of a non-IDR picture.
    pub const SLICE: u8 = 1;
    /// Coded slice data partition A.
    pub const SLICE_PARTITION_A: u8 = 2;
    /// Coded slice of an IDR picture.
    pub const IDR: u8 = 5;
    /// Supplemental enhancement information.
    pub const SEI: u8 = 6;
    /// Sequence parameter set.
    pub const SPS: u8 = 7;
    /// Picture parameter set.
    pub const PPS: u8 = 8;
    /// Access unit delimiter.
    pub const AUD: u8 = 9;
}

/// Bytes of a slice header and parameter set read at most (they are short;
/// the rest of a slice is never unescaped).
const HEADER_BYTES: usize = 256;

/// Why a byte stream was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum H264Error {
    /// No start code (0x000001) in the data: not an H.264 Annex B stream.
    #[error("not an H.264 Annex B stream: no start code (00 00 01) in the first {searched} bytes")]
    NotAnnexB {
        /// How many bytes were searched.
        searched: usize,
    },
    /// Start codes were found but no NAL unit of a coded picture (types 1-5):
    /// no video in the stream.
    #[error("no coded picture in the stream ({nal_units} NAL units, none a slice)")]
    NoPictures {
        /// NAL units found.
        nal_units: usize,
    },
}

/// One NAL unit: its byte range in the stream (header included, start code
/// and trailing zero bytes excluded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NalUnit {
    /// The bytes, as a range of the stream.
    pub range: Range<usize>,
    /// `nal_unit_type` (0-31).
    pub nal_type: u8,
    /// `nal_ref_idc` (0-3).
    pub ref_idc: u8,
}

impl NalUnit {
    /// Whether it carries a slice of a coded picture (types 1-5).
    pub fn is_slice(&self) -> bool {
        (nal_type::SLICE..=nal_type::IDR).contains(&self.nal_type)
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// Whether it has no bytes (never, for units found by
    /// [`split_nal_units`]).
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }
}

/// The NAL units of an Annex B byte stream, in order. Bytes before the first
/// start code are ignored; empty units (two start codes in a row) are
/// skipped.
pub fn split_nal_units(stream: &[u8]) -> Vec<NalUnit> {
    let mut starts = Vec::new();
    let mut i = 0;
    // Looks at the third byte of the window first (as FFmpeg's start-code
    // search does): above 1 it rules out windows at i, i + 1 and i + 2,
    // which would need it to be 1, 0 and 0; a 1 rules out the windows at
    // i + 1 and i + 2. The starts found are those of a byte-by-byte scan,
    // in about a third of the steps on slice data (pacing benchmark,
    // `docs/performance.md`).
    while let Some(&third) = stream.get(i + 2) {
        match third {
            2.. => i += 3,
            1 => {
                if stream[i] == 0 && stream[i + 1] == 0 {
                    starts.push(i + 3);
                }
                i += 3;
            }
            0 => i += 1,
        }
    }
    let mut units = Vec::with_capacity(starts.len());
    for (index, &start) in starts.iter().enumerate() {
        // The unit ends at the next start code, less its leading zero bytes
        // (zero_byte and trailing_zero_8bits, Annex B.1).
        let mut end = starts.get(index + 1).map_or(stream.len(), |next| next - 3);
        while end > start && stream[end - 1] == 0 {
            end -= 1;
        }
        if end <= start {
            continue;
        }
        let header = stream[start];
        units.push(NalUnit {
            range: start..end,
            nal_type: header & 0x1f,
            ref_idc: (header >> 5) & 0x3,
        });
    }
    units
}

/// The coding type of a frame, from its slices' `slice_type` (Table 7-6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FrameType {
    /// Intra (I or SI slices only).
    I,
    /// Predicted (some P or SP slice, no B slice).
    P,
    /// Bi-predicted (some B slice).
    B,
}

impl FrameType {
    /// The letter EvalVid writes (`I`, `P`, `B`).
    pub fn letter(self) -> char {
        match self {
            FrameType::I => 'I',
            FrameType::P => 'P',
            FrameType::B => 'B',
        }
    }
}

/// One access unit: a coded frame and the non-VCL NAL units sent with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessUnit {
    /// Position in decoding order, from 0.
    pub index: usize,
    /// The frame's type; `None` if no slice header could be read.
    pub frame_type: Option<FrameType>,
    /// Whether its slices are IDR slices (type 5).
    pub idr: bool,
    /// `frame_num` of its first slice, if it could be read.
    pub frame_num: Option<u32>,
    /// Whether it is a reference picture (its slices' `nal_ref_idc` > 0).
    pub reference: bool,
    /// Frames that `frame_num` says are missing just before this one: a
    /// gap in the numbering of reference pictures (§7.4.3: a picture's
    /// `frame_num` is the previous reference picture's plus one, modulo
    /// MaxFrameNum; an IDR picture is numbered 0, so a stream or a period
    /// that starts without its IDR picture shows too). Used to keep frame
    /// positions when whole frames were lost; zero at an IDR or when the
    /// numbering is unknown.
    pub frames_missing_before: usize,
    /// Its NAL units, in stream order.
    pub nal_units: Vec<NalUnit>,
}

impl AccessUnit {
    /// Bytes of all its NAL units (start codes excluded).
    pub fn size_bytes(&self) -> usize {
        self.nal_units.iter().map(NalUnit::len).sum()
    }

    /// Its slices.
    pub fn slices(&self) -> impl Iterator<Item = &NalUnit> {
        self.nal_units.iter().filter(|n| n.is_slice())
    }
}

/// What [`parse_stream`] found, damage included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamReport {
    /// The access units, in decoding order.
    pub access_units: Vec<AccessUnit>,
    /// NAL units whose header could not be read (forbidden bit set, a slice
    /// header or parameter set cut short or inconsistent).
    pub damaged_nal_units: usize,
    /// The picture size from the first sequence parameter set, if one was
    /// read: (width, height) in luma samples, cropping applied.
    pub picture_size: Option<(u32, u32)>,
    /// The VUI timing of the first sequence parameter set that has one
    /// (Annex E): the stream's frame rate, when the encoder wrote it.
    pub timing: Option<VuiTiming>,
}

/// The fields of a sequence parameter set this module needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sps {
    log2_max_frame_num: u32,
    separate_colour_plane: bool,
    width: u32,
    height: u32,
    timing: Option<VuiTiming>,
}

/// The fields of a slice header this module needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SliceHeader {
    first_mb: u32,
    slice_type: u32,
    pps_id: u32,
    frame_num: Option<u32>,
    /// MaxFrameNum = 2^(log2_max_frame_num) of its SPS.
    max_frame_num: Option<u32>,
}

/// Parses the byte stream: NAL units, access units and frame types.
pub fn parse_stream(stream: &[u8]) -> Result<StreamReport, H264Error> {
    let units = split_nal_units(stream);
    if units.is_empty() {
        return Err(H264Error::NotAnnexB {
            searched: stream.len(),
        });
    }
    if !units.iter().any(NalUnit::is_slice) {
        return Err(H264Error::NoPictures {
            nal_units: units.len(),
        });
    }
    let mut sps: BTreeMap<u32, Sps> = BTreeMap::new();
    let mut pps: BTreeMap<u32, u32> = BTreeMap::new(); // pps id -> sps id
    let mut damaged = 0;
    let mut picture_size = None;
    let mut timing = None;
    let mut access_units: Vec<AccessUnit> = Vec::new();
    let mut current: Option<AccessUnit> = None;
    let mut current_max: Option<u32> = None;
    let mut maxes: Vec<Option<u32>> = Vec::new();
    let mut seen_slice = false;
    let mut last_slice: Option<(SliceHeader, bool)> = None;

    for unit in units {
        let bytes = &stream[unit.range.clone()];
        // forbidden_zero_bit (§7.4.1) set: a damaged unit.
        let forbidden = bytes.first().is_some_and(|b| b & 0x80 != 0);
        if forbidden {
            damaged += 1;
        }
        let payload = rbsp(bytes.get(1..).unwrap_or(&[]), HEADER_BYTES);
        let mut starts_new = false;
        let mut header = None;
        match unit.nal_type {
            nal_type::SPS if !forbidden => match parse_sps(&payload) {
                Ok((id, parsed)) => {
                    picture_size.get_or_insert((parsed.width, parsed.height));
                    if timing.is_none() {
                        timing = parsed.timing;
                    }
                    sps.insert(id, parsed);
                }
                Err(BitsExhausted) => damaged += 1,
            },
            nal_type::PPS if !forbidden => {
                let mut reader = BitReader::new(&payload);
                match (reader.ue(), reader.ue()) {
                    (Ok(pps_id), Ok(sps_id)) => {
                        pps.insert(pps_id, sps_id);
                    }
                    _ => damaged += 1,
                }
            }
            _ => {}
        }
        if unit.is_slice() {
            let parsed = if forbidden {
                None
            } else {
                parse_slice_header(&payload, &sps, &pps)
            };
            if parsed.is_none() && !forbidden {
                damaged += 1;
            }
            let idr = unit.nal_type == nal_type::IDR;
            // §7.4.1.2.4: a new primary coded picture starts with its first
            // macroblock, or when frame_num, the PPS or IDR-ness change.
            starts_new = match (parsed, last_slice) {
                (Some(h), Some((last, last_idr))) => {
                    h.first_mb == 0
                        || h.frame_num != last.frame_num
                        || h.pps_id != last.pps_id
                        || idr != last_idr
                }
                (Some(h), None) => h.first_mb == 0 || seen_slice,
                (None, _) => false,
            } && seen_slice;
            if let Some(h) = parsed {
                last_slice = Some((h, idr));
            }
            header = parsed;
        } else if seen_slice
            && matches!(
                unit.nal_type,
                nal_type::AUD | nal_type::SPS | nal_type::PPS | nal_type::SEI | 14..=18
            )
        {
            // §7.4.1.2.3: these start the next access unit.
            starts_new = true;
        }
        if starts_new {
            if let Some(done) = current.take() {
                access_units.push(done);
                maxes.push(current_max.take());
            }
            seen_slice = false;
        }
        let au = current.get_or_insert_with(|| AccessUnit {
            index: access_units.len(),
            frame_type: None,
            idr: false,
            frame_num: None,
            reference: false,
            frames_missing_before: 0,
            nal_units: Vec::new(),
        });
        if unit.is_slice() {
            seen_slice = true;
            au.idr |= unit.nal_type == nal_type::IDR;
            au.reference |= unit.ref_idc > 0;
            if current_max.is_none() {
                current_max = header.and_then(|h| h.max_frame_num);
            }
            if let Some(h) = header {
                let this = match h.slice_type % 5 {
                    0 | 3 => FrameType::P,
                    1 => FrameType::B,
                    _ => FrameType::I,
                };
                au.frame_type = Some(au.frame_type.map_or(this, |t| t.max(this)));
                au.frame_num = au.frame_num.or(h.frame_num);
            }
        }
        au.nal_units.push(unit);
    }
    if let Some(done) = current.take() {
        access_units.push(done);
        maxes.push(current_max.take());
    }
    // Parameter sets at the very end without a picture form no frame.
    let mut kept = Vec::with_capacity(access_units.len());
    let mut kept_maxes = Vec::with_capacity(access_units.len());
    for (au, max) in access_units.into_iter().zip(maxes) {
        if au.slices().next().is_some() {
            kept.push(au);
            kept_maxes.push(max);
        }
    }
    let mut access_units = kept;
    for (index, au) in access_units.iter_mut().enumerate() {
        au.index = index;
    }
    count_missing_frames(&mut access_units, &kept_maxes);
    Ok(StreamReport {
        access_units,
        damaged_nal_units: damaged,
        picture_size,
        timing,
    })
}

/// The NAL units of each access unit of `stream`, as bytes (start codes
/// excluded): what two copies of a stream are compared by when their start
/// codes and trailing zeros may differ.
pub fn access_unit_bytes(stream: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, H264Error> {
    Ok(parse_stream(stream)?
        .access_units
        .iter()
        .map(|au| {
            au.nal_units
                .iter()
                .filter_map(|n| stream.get(n.range.clone()).map(<[u8]>::to_vec))
                .collect()
        })
        .collect())
}

/// Fills [`AccessUnit::frames_missing_before`] from `frame_num` gaps.
///
/// §7.4.3: `frame_num` is 0 at an IDR picture, and a picture after a
/// reference picture numbered p is numbered p + 1 (mod MaxFrameNum) unless
/// frames were lost. Three cases are found:
/// - a step larger than one after a reference picture: the frames between
///   are missing;
/// - a stream that starts with a non-IDR picture numbered q (§7.4.1.2.4
///   wants an IDR first): the IDR picture numbered 0 and the q − 1
///   reference pictures after it are missing;
/// - a numbering that goes back without an IDR picture (0 < q < p + 1): a
///   new IDR period whose IDR was lost began, so q frames of it (its IDR
///   and q − 1 more) are missing — or the numbering wrapped past
///   MaxFrameNum with frames lost; the smaller of the two counts is taken.
///
/// Gaps of half the number space or more are taken as a numbering the
/// parser cannot follow, not as losses. Non-reference pictures (B frames)
/// do not advance `frame_num`, so a lost one is not seen: the count is a
/// lower bound.
fn count_missing_frames(access_units: &mut [AccessUnit], maxes: &[Option<u32>]) {
    let mut last_reference: Option<u32> = None;
    let mut first = true;
    for (au, max) in access_units.iter_mut().zip(maxes) {
        let at_start = std::mem::replace(&mut first, false);
        if au.idr {
            last_reference = au.frame_num.filter(|_| au.reference);
            continue;
        }
        if let (Some(current), Some(max)) = (au.frame_num, *max) {
            let gap = match last_reference {
                None if at_start => current,
                None => 0,
                Some(previous) => {
                    let expected = (previous + 1) % max;
                    let step = (current + max - expected) % max;
                    if current > 0 && current < expected {
                        // Back without an IDR: a lost IDR began a new
                        // period, unless the numbering wrapped past
                        // MaxFrameNum; the smaller count is taken.
                        step.min(current)
                    } else {
                        step
                    }
                }
            };
            if gap > 0 && gap < max / 2 {
                au.frames_missing_before = gap as usize;
            }
        }
        if au.reference {
            last_reference = au.frame_num.or(last_reference);
        }
    }
}

/// §7.3.2.1.1: the sequence parameter set, as far as `frame_num`'s width,
/// the picture size and the VUI timing.
fn parse_sps(payload: &[u8]) -> Result<(u32, Sps), BitsExhausted> {
    let mut r = BitReader::new(payload);
    let profile_idc = r.bits(8)?;
    r.skip(16)?; // constraint flags, reserved bits, level_idc
    let id = r.ue()?;
    let mut chroma_format_idc = 1;
    let mut separate_colour_plane = false;
    if matches!(
        profile_idc,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    ) {
        chroma_format_idc = r.ue()?;
        if chroma_format_idc == 3 {
            separate_colour_plane = r.bit()?;
        }
        r.ue()?; // bit_depth_luma_minus8
        r.ue()?; // bit_depth_chroma_minus8
        r.bit()?; // qpprime_y_zero_transform_bypass_flag
        if r.bit()? {
            // seq_scaling_matrix_present_flag: skip the scaling lists
            // (§7.3.2.1.1.1).
            let lists = if chroma_format_idc == 3 { 12 } else { 8 };
            for i in 0..lists {
                if r.bit()? {
                    let size = if i < 6 { 16 } else { 64 };
                    let (mut last, mut next) = (8i32, 8i32);
                    for _ in 0..size {
                        if next != 0 {
                            let delta = r.se()?;
                            next = (last + delta + 256).rem_euclid(256);
                        }
                        if next != 0 {
                            last = next;
                        }
                    }
                }
            }
        }
    }
    let log2_max_frame_num = r.ue()?.checked_add(4).ok_or(BitsExhausted)?;
    if log2_max_frame_num > 16 {
        return Err(BitsExhausted);
    }
    match r.ue()? {
        0 => {
            r.ue()?; // log2_max_pic_order_cnt_lsb_minus4
        }
        1 => {
            r.bit()?;
            r.se()?;
            r.se()?;
            let cycle = r.ue()?;
            if cycle > 255 {
                return Err(BitsExhausted);
            }
            for _ in 0..cycle {
                r.se()?;
            }
        }
        2 => {}
        _ => return Err(BitsExhausted),
    }
    r.ue()?; // max_num_ref_frames
    r.bit()?; // gaps_in_frame_num_value_allowed_flag
    let width_mbs = r.ue()?.checked_add(1).ok_or(BitsExhausted)?;
    let height_map_units = r.ue()?.checked_add(1).ok_or(BitsExhausted)?;
    let frame_mbs_only = r.bit()?;
    if !frame_mbs_only {
        r.bit()?; // mb_adaptive_frame_field_flag
    }
    r.bit()?; // direct_8x8_inference_flag
    let height_mbs = height_map_units * if frame_mbs_only { 1 } else { 2 };
    let (mut width, mut height) = (width_mbs.saturating_mul(16), height_mbs.saturating_mul(16));
    if r.bit()? {
        // frame_cropping_flag: offsets in chroma units (§7.4.2.1.1).
        let (left, right, top, bottom) = (r.ue()?, r.ue()?, r.ue()?, r.ue()?);
        let (crop_x, crop_y) = match chroma_format_idc {
            1 => (2, 2),
            2 => (2, 1),
            _ => (1, 1),
        };
        let crop_y = crop_y * if frame_mbs_only { 1 } else { 2 };
        width = width.saturating_sub((left + right).saturating_mul(crop_x));
        height = height.saturating_sub((top + bottom).saturating_mul(crop_y));
    }
    // vui_parameters_present_flag, then E.1.1. A VUI that cannot be read
    // leaves the SPS usable: the timing is then unknown.
    let timing = match r.bit() {
        Ok(true) => vui::parse_timing(&mut r).ok().flatten(),
        _ => None,
    };
    Ok((
        id,
        Sps {
            log2_max_frame_num,
            separate_colour_plane,
            width,
            height,
            timing,
        },
    ))
}

/// The VUI timing of a sequence parameter set NAL unit (its header byte
/// included), if it has one and it can be read.
pub fn sps_timing(nal: &[u8]) -> Option<VuiTiming> {
    let (&header, rest) = nal.split_first()?;
    if header & 0x1f != nal_type::SPS || header & 0x80 != 0 {
        return None;
    }
    parse_sps(&rbsp(rest, HEADER_BYTES)).ok()?.1.timing
}

/// §7.3.3: the slice header up to `frame_num`. `None` when it cannot be
/// read or refers to parameter sets not seen.
fn parse_slice_header(
    payload: &[u8],
    sps: &BTreeMap<u32, Sps>,
    pps: &BTreeMap<u32, u32>,
) -> Option<SliceHeader> {
    let mut r = BitReader::new(payload);
    let first_mb = r.ue().ok()?;
    let slice_type = r.ue().ok()?;
    if slice_type > 9 {
        return None;
    }
    let pps_id = r.ue().ok()?;
    let sps = pps.get(&pps_id).and_then(|sps_id| sps.get(sps_id));
    let frame_num = sps.and_then(|sps| {
        if sps.separate_colour_plane {
            r.bits(2).ok()?; // colour_plane_id
        }
        r.bits(sps.log2_max_frame_num).ok()
    });
    Some(SliceHeader {
        first_mb,
        slice_type,
        pps_id,
        frame_num,
        max_frame_num: sps.map(|s| 1 << s.log2_max_frame_num),
    })
}

#[cfg(test)]
mod tests;
