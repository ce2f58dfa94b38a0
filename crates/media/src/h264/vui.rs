//! The timing of a sequence parameter set's video usability information
//! (ITU-T H.264 Annex E): how many frames a second the stream is made for.
//!
//! E.1.1 reads, in order, the aspect ratio, overscan, video signal type and
//! chroma location fields (each behind its own presence flag), then
//! `timing_info_present_flag` and, when it is set, `num_units_in_tick`
//! u(32), `time_scale` u(32) and `fixed_frame_rate_flag` u(1). The rest of
//! the VUI (HRD parameters, bitstream restrictions) is not read.

use super::bits::{BitReader, BitsExhausted};

/// `aspect_ratio_idc` of an explicit sample aspect ratio (Table E-1).
const EXTENDED_SAR: u32 = 255;

/// The timing fields of a VUI (E.1.1, E.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VuiTiming {
    /// `num_units_in_tick`: time units of a clock tick.
    pub num_units_in_tick: u32,
    /// `time_scale`: time units a second.
    pub time_scale: u32,
    /// `fixed_frame_rate_flag`: whether the frame rate is constant.
    pub fixed_frame_rate: bool,
}

impl VuiTiming {
    /// Frames a second of a frame-coded stream: `time_scale / (2 ·
    /// num_units_in_tick)` — E.2.1: a tick is the time of one field, a
    /// frame lasts two (the x264 and ffmpeg convention; a 30 fps encode
    /// writes 1 and 60). `None` when either field is 0, which E.2.1
    /// forbids.
    pub fn frames_per_second(&self) -> Option<f64> {
        if self.num_units_in_tick == 0 || self.time_scale == 0 {
            return None;
        }
        Some(f64::from(self.time_scale) / (2.0 * f64::from(self.num_units_in_tick)))
    }
}

/// What the start of a stream says of its frame rate
/// ([`probe_frame_rate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameRateProbe {
    /// Its first SPS has VUI timing.
    Stated(VuiTiming),
    /// Its first SPS has none (or cannot be read), or a picture came
    /// before any SPS.
    NotStated,
    /// No complete SPS yet: more of the stream is needed.
    NeedMore,
}

/// Looks for the frame rate in `start`, the first bytes of an Annex B
/// stream; `complete` says that nothing follows them (so the last NAL unit
/// is whole). The first sequence parameter set decides.
pub fn probe_frame_rate(start: &[u8], complete: bool) -> FrameRateProbe {
    let units = super::split_nal_units(start);
    let count = units.len();
    for (position, unit) in units.into_iter().enumerate() {
        if unit.is_slice() {
            // §7.4.1.2.3: parameter sets come before the pictures that use them.
            return FrameRateProbe::NotStated;
        }
        if unit.nal_type != super::nal_type::SPS {
            continue;
        }
        if position + 1 == count && !complete {
            return FrameRateProbe::NeedMore;
        }
        return start
            .get(unit.range)
            .and_then(super::sps_timing)
            .map_or(FrameRateProbe::NotStated, FrameRateProbe::Stated);
    }
    if complete {
        FrameRateProbe::NotStated
    } else {
        FrameRateProbe::NeedMore
    }
}

/// Reads `vui_parameters()` (E.1.1) as far as the timing: `None` when
/// `timing_info_present_flag` is 0.
pub(super) fn parse_timing(r: &mut BitReader<'_>) -> Result<Option<VuiTiming>, BitsExhausted> {
    if r.bit()? {
        // aspect_ratio_info_present_flag
        if r.bits(8)? == EXTENDED_SAR {
            r.skip(32)?; // sar_width, sar_height
        }
    }
    if r.bit()? {
        // overscan_info_present_flag
        r.skip(1)?; // overscan_appropriate_flag
    }
    if r.bit()? {
        // video_signal_type_present_flag: video_format, video_full_range_flag
        r.skip(4)?;
        if r.bit()? {
            // colour_description_present_flag: primaries, transfer, matrix
            r.skip(24)?;
        }
    }
    if r.bit()? {
        // chroma_loc_info_present_flag
        r.ue()?; // chroma_sample_loc_type_top_field
        r.ue()?; // chroma_sample_loc_type_bottom_field
    }
    if !r.bit()? {
        return Ok(None);
    }
    Ok(Some(VuiTiming {
        num_units_in_tick: r.bits(32)?,
        time_scale: r.bits(32)?,
        fixed_frame_rate: r.bit()?,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::sps_timing;
    use super::*;

    /// The SPS of `ffmpeg -f lavfi -i testsrc=size=176x144:rate=30
    /// -pix_fmt yuv420p -c:v libx264 -f h264` (ffmpeg 5.1, libx264; High
    /// profile), NAL header included.
    const X264_30_FPS: [u8; 24] = [
        0x67, 0x64, 0x00, 0x0b, 0xac, 0xd9, 0x42, 0xc4, 0xec, 0x04, 0x40, 0x00, 0x00, 0x03, 0x00,
        0x40, 0x00, 0x00, 0x0f, 0x03, 0xc5, 0x0a, 0x65, 0x80,
    ];
    /// The same at `rate=30000/1001` (NTSC's 29.97).
    const X264_29_97_FPS: [u8; 23] = [
        0x67, 0x64, 0x00, 0x0b, 0xac, 0xd9, 0x42, 0xc4, 0xec, 0x04, 0x40, 0x00, 0x00, 0xfa, 0x40,
        0x00, 0x3a, 0x98, 0x03, 0xc5, 0x0a, 0x65, 0x80,
    ];
    /// `testsrc=size=64x64:rate=30` without `-pix_fmt`: High 4:4:4
    /// (profile 244), whose SPS carries the chroma format fields.
    const X264_444_30_FPS: [u8; 23] = [
        0x67, 0xf4, 0x00, 0x0a, 0x91, 0x9b, 0x28, 0x84, 0xd8, 0x08, 0x80, 0x00, 0x00, 0x03, 0x00,
        0x80, 0x00, 0x00, 0x1e, 0x07, 0x89, 0x12, 0xcb,
    ];

    #[test]
    fn x264_encodes_give_their_frame_rate() {
        let timing = sps_timing(&X264_30_FPS).unwrap();
        assert_eq!(
            timing,
            VuiTiming {
                num_units_in_tick: 1,
                time_scale: 60,
                fixed_frame_rate: false,
            }
        );
        assert_eq!(timing.frames_per_second(), Some(30.0));
        let ntsc = sps_timing(&X264_29_97_FPS).unwrap();
        assert_eq!((ntsc.num_units_in_tick, ntsc.time_scale), (1001, 60_000));
        let fps = ntsc.frames_per_second().unwrap();
        assert!((fps - 29.970_03).abs() < 1e-4, "{fps}");
        assert_eq!(
            sps_timing(&X264_444_30_FPS).and_then(|t| t.frames_per_second()),
            Some(30.0)
        );
    }

    #[test]
    fn no_vui_no_timing_and_cut_short_is_not_a_panic() {
        // The SPS of BA_MW_D.264 has no VUI (vui_parameters_present_flag 0).
        let Some(stream) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
            return;
        };
        let stream = std::fs::read(stream).unwrap();
        let report = super::super::parse_stream(&stream).unwrap();
        assert_eq!(report.timing, None);
        // Cut short: no timing, or (once the fields are complete) the
        // whole one; never a panic or a wrong value.
        let whole = sps_timing(&X264_30_FPS);
        for cut in 0..X264_30_FPS.len() {
            let timing = sps_timing(&X264_30_FPS[..cut]);
            assert!(timing.is_none() || timing == whole, "cut at {cut}");
        }
        assert_eq!(sps_timing(&X264_30_FPS[..16]), None);
        assert_eq!(sps_timing(&[0x68, 0xee, 0x3c, 0x80]), None, "a PPS");
        let zero = VuiTiming {
            num_units_in_tick: 0,
            time_scale: 60,
            fixed_frame_rate: true,
        };
        assert_eq!(zero.frames_per_second(), None);
    }

    #[test]
    fn the_probe_waits_for_a_whole_sps_and_stops_at_the_first_picture() {
        let mut stream = vec![0, 0, 0, 1];
        stream.extend_from_slice(&X264_30_FPS);
        let thirty = FrameRateProbe::Stated(sps_timing(&X264_30_FPS).unwrap());
        assert_eq!(probe_frame_rate(&stream, false), FrameRateProbe::NeedMore);
        assert_eq!(probe_frame_rate(&stream, true), thirty);
        assert_eq!(
            probe_frame_rate(&stream[..10], false),
            FrameRateProbe::NeedMore
        );
        stream.extend_from_slice(&[0, 0, 0, 1, 0x68, 0xeb, 0xe3, 0xcb, 0x22, 0xc0]);
        assert_eq!(probe_frame_rate(&stream, false), thirty);
        // A picture before any SPS: no rate will come.
        let slice = [0, 0, 0, 1, 0x65, 0x88, 0x84, 0, 0, 0, 1, 0x67];
        assert_eq!(probe_frame_rate(&slice, false), FrameRateProbe::NotStated);
        assert_eq!(probe_frame_rate(b"", false), FrameRateProbe::NeedMore);
        assert_eq!(probe_frame_rate(b"", true), FrameRateProbe::NotStated);
    }

    #[test]
    fn an_ffmpeg_encode_made_now_gives_its_rate() {
        let Some(ffmpeg) = fairstream_testkit::tool("ffmpeg") else {
            return;
        };
        let out = std::env::temp_dir().join(format!("fairstream-vui-{}.264", std::process::id()));
        let status = std::process::Command::new(ffmpeg)
            .args([
                "-hide_banner",
                "-loglevel",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-i",
            ])
            .arg("testsrc=size=96x64:rate=24")
            .args([
                "-frames:v",
                "2",
                "-pix_fmt",
                "yuv420p",
                "-c:v",
                "libx264",
                "-f",
                "h264",
            ])
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        let stream = std::fs::read(&out).unwrap();
        let _ = std::fs::remove_file(&out);
        let report = super::super::parse_stream(&stream).unwrap();
        assert_eq!(
            report.timing.and_then(|t| t.frames_per_second()),
            Some(24.0)
        );
    }
}
