//! EvalVid sender traces turned layered: a modelling stand-in for an FGS
//! encode of the same video.

use std::time::Duration;

use super::{
    share_of, Enhancement, LayeredError, LayeredFrame, Share, MAX_FRAME_TIME, MAX_TRACE_FRAMES,
};
use crate::evalvid::TraceFrame;

/// Splits each frame of an EvalVid sender trace into a base layer of
/// ⌊`base_share` · size⌋ bytes and one FGS enhancement layer of the rest,
/// keeping numbers, types and send times (times to the nanosecond).
///
/// This is a model, not an FGS encode: a real FGS coder would spend the
/// same bytes differently (a coarser base at every frame, the enhancement's
/// bit planes refining it), and a frame's quality would follow the bytes
/// kept, which nothing here measures. It gives the simulator the sizes and
/// timing of a real video with an enhancement layer to truncate.
///
/// Refused: more than [`MAX_TRACE_FRAMES`] frames, a frame beyond a frame's
/// bounds, frame numbers not increasing, send times that are no time or go
/// back.
pub fn from_evalvid(
    frames: &[TraceFrame],
    base_share: Share,
) -> Result<Vec<LayeredFrame>, LayeredError> {
    if frames.len() > MAX_TRACE_FRAMES {
        return Err(LayeredError::TooManyFrames);
    }
    let mut layered: Vec<LayeredFrame> = Vec::with_capacity(frames.len());
    for frame in frames {
        let time = time_of(frame)?;
        let base_bytes = share_of(base_share, frame.size_bytes);
        let next = LayeredFrame::new(
            frame.number,
            frame.frame_type,
            time,
            base_bytes,
            Enhancement::Fgs {
                bytes: frame.size_bytes - base_bytes,
            },
        )?;
        if let Some(previous) = layered.last() {
            next.follows(previous)?;
        }
        layered.push(next);
    }
    Ok(layered)
}

/// A frame's send time, rounded to the nanosecond (so that EvalVid's
/// 66.433 is 66.433 s, not the float's 66.432999999…).
fn time_of(frame: &TraceFrame) -> Result<Duration, LayeredError> {
    let seconds = frame.send_time_s;
    if !(0.0..=MAX_FRAME_TIME.as_secs_f64()).contains(&seconds) {
        return Err(LayeredError::BadTime {
            number: frame.number,
            seconds,
        });
    }
    // At most 10^15 nanoseconds: exact in a float, and the cast cannot
    // saturate.
    Ok(Duration::from_nanos((seconds * 1e9).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalvid::{parse_sender_trace, read_sender_trace};
    use crate::h264::FrameType;
    use crate::layered::{format_layered_trace, parse_layered_trace};

    #[test]
    fn frames_split_into_a_base_share_and_an_fgs_rest() {
        let evalvid = parse_sender_trace(
            "1\tH\t12038\t12\t0.000\n2\tP\t1001\t1\t0.033\n3\tB\t7\t1\t0.067\n",
            "t.st",
        )
        .unwrap();
        let frames = from_evalvid(&evalvid, Share::new(0.4)).unwrap();
        let split: Vec<(u64, u64)> = frames
            .iter()
            .map(|f| (f.base_bytes(), f.enhancement_bytes()))
            .collect();
        // ⌊0.4 · 12038⌋ = 4815, ⌊0.4 · 1001⌋ = 400, ⌊0.4 · 7⌋ = 2.
        assert_eq!(split, vec![(4815, 7223), (400, 601), (2, 5)]);
        assert_eq!(frames[0].frame_type(), FrameType::I);
        assert_eq!(frames[2].frame_type(), FrameType::B);
        assert_eq!(frames[2].time(), Duration::from_millis(67));
        let all_base = from_evalvid(&evalvid, Share::ONE).unwrap();
        assert!(all_base.iter().all(|f| f.enhancement_bytes() == 0));
    }

    #[test]
    fn what_a_layered_trace_cannot_hold_is_refused() {
        let frame = |number, size_bytes, send_time_s| TraceFrame {
            number,
            frame_type: FrameType::P,
            size_bytes,
            packets: 1,
            send_time_s,
        };
        let half = Share::new(0.5);
        for (frames, needle) in [
            (
                vec![frame(2, 10, 0.0), frame(2, 10, 0.1)],
                "2 does not follow 2",
            ),
            (
                vec![frame(1, 10, 0.5), frame(2, 10, 0.1)],
                "before the previous",
            ),
            (vec![frame(1, 10, f64::NAN)], "time NaN s"),
            (vec![frame(1, 10, -1.0)], "time -1 s"),
            (vec![frame(1, u64::MAX, 0.0)], "more than the 16777216"),
        ] {
            let error = from_evalvid(&frames, half).unwrap_err().to_string();
            assert!(error.contains(needle), "{error}");
        }
    }

    #[test]
    fn the_evalvid_example_becomes_a_layered_trace() {
        let Some(path) = fairstream_testkit::shared_file("data/evalvid/st_highway_cif.st") else {
            return;
        };
        let evalvid = read_sender_trace(&path).unwrap();
        let frames = from_evalvid(&evalvid, Share::new(0.3)).unwrap();
        assert_eq!(frames.len(), 2000);
        let sizes: u64 = evalvid.iter().map(|f| f.size_bytes).sum();
        let totals: u64 = frames.iter().map(LayeredFrame::total_bytes).sum();
        assert_eq!(totals, sizes);
        assert_eq!(frames[1999].time(), Duration::from_millis(66_433));
        let text = format_layered_trace(&frames);
        assert_eq!(parse_layered_trace(&text, "highway.lt").unwrap(), frames);
    }
}
