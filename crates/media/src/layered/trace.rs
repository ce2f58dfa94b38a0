//! The layered trace file: EvalVid's sender trace with each frame's size
//! split into a base layer and a tagged enhancement (the format is in the
//! [module documentation](super)).

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Enhancement, LayeredError, LayeredFrame, MAX_ENHANCEMENT_LAYERS, MAX_TRACE_FRAMES};
use crate::h264::FrameType;

/// The longest text a layered trace may have: 128 MiB, three times a trace
/// of [`MAX_TRACE_FRAMES`] frames with FGS enhancement.
pub const MAX_TRACE_TEXT_BYTES: usize = 128 * 1024 * 1024;

/// The first line [`format_layered_trace`] writes, a comment naming the
/// columns.
const HEADER: &str = "# frame_no\ttype\tbase_bytes\tenhancement\ttime_s\n";

/// How much of a bad field an error quotes.
const QUOTED_CHARS: usize = 40;

/// A layered trace that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LayeredTraceError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// More text than [`MAX_TRACE_TEXT_BYTES`].
    #[error("{origin}: more than the {MAX_TRACE_TEXT_BYTES} bytes a layered trace may have")]
    TooLong {
        /// The trace's name.
        origin: String,
    },
    /// More frames than [`MAX_TRACE_FRAMES`].
    #[error("{origin}, line {line}: more than the {MAX_TRACE_FRAMES} frames a trace may have")]
    TooManyFrames {
        /// The trace's name.
        origin: String,
        /// The line of the frame too many, from 1.
        line: usize,
    },
    /// A line that is not `frame_no type base_bytes enhancement time_s`.
    #[error("{origin}, line {line}: {problem}")]
    Field {
        /// The trace's name.
        origin: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        problem: FieldError,
    },
    /// A line that reads but is no frame (out of bounds) or does not follow
    /// the previous one.
    #[error("{origin}, line {line}: {problem}")]
    Frame {
        /// The trace's name.
        origin: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        problem: LayeredError,
    },
    /// No frame at all.
    #[error("{origin}: no frames in the trace")]
    Empty {
        /// The trace's name.
        origin: String,
    },
}

/// What is wrong with a line's fields (the quoted field is cut to 40
/// characters).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// Not five fields.
    #[error("expected 5 fields (frame_no type base_bytes enhancement time_s), found {found}")]
    FieldCount {
        /// How many there are.
        found: usize,
    },
    /// The frame number.
    #[error("frame number {0:?} is not a whole number")]
    Number(String),
    /// The frame type.
    #[error("frame type {0:?} is not I, P or B")]
    FrameType(String),
    /// The base layer's size.
    #[error("base size {0:?} is not a whole number of bytes")]
    BaseBytes(String),
    /// The enhancement's tag.
    #[error("enhancement {0:?} is not fgs:BYTES or layers:BYTES,BYTES,...")]
    Enhancement(String),
    /// A size in the enhancement.
    #[error("enhancement size {0:?} is not a whole number of bytes")]
    EnhancementBytes(String),
    /// The time.
    #[error("time {0:?} is not seconds with at most 9 decimals")]
    Time(String),
}

/// The bounds a parse enforces ([`MAX_TRACE_TEXT_BYTES`] and
/// [`MAX_TRACE_FRAMES`]; smaller in tests).
#[derive(Clone, Copy, Debug)]
struct Limits {
    text_bytes: usize,
    frames: usize,
}

const LIMITS: Limits = Limits {
    text_bytes: MAX_TRACE_TEXT_BYTES,
    frames: MAX_TRACE_FRAMES,
};

/// Parses a layered trace; `origin` names it in errors, which give the line
/// and what is wrong with it. At least one frame; numbers increasing, times
/// never going back; at most [`MAX_TRACE_FRAMES`] frames and
/// [`MAX_TRACE_TEXT_BYTES`] of text.
pub fn parse_layered_trace(
    text: &str,
    origin: &str,
) -> Result<Vec<LayeredFrame>, LayeredTraceError> {
    parse_within(text, origin, LIMITS)
}

fn parse_within(
    text: &str,
    origin: &str,
    limits: Limits,
) -> Result<Vec<LayeredFrame>, LayeredTraceError> {
    if text.len() > limits.text_bytes {
        return Err(LayeredTraceError::TooLong {
            origin: origin.to_owned(),
        });
    }
    let mut frames: Vec<LayeredFrame> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let line = index + 1;
        if frames.len() >= limits.frames {
            return Err(LayeredTraceError::TooManyFrames {
                origin: origin.to_owned(),
                line,
            });
        }
        let frame_error = |problem| LayeredTraceError::Frame {
            origin: origin.to_owned(),
            line,
            problem,
        };
        let frame = match parse_line(trimmed) {
            Ok(fields) => fields.into_frame().map_err(frame_error)?,
            Err(problem) => {
                return Err(LayeredTraceError::Field {
                    origin: origin.to_owned(),
                    line,
                    problem,
                })
            }
        };
        if let Some(previous) = frames.last() {
            frame.follows(previous).map_err(frame_error)?;
        }
        frames.push(frame);
    }
    if frames.is_empty() {
        return Err(LayeredTraceError::Empty {
            origin: origin.to_owned(),
        });
    }
    Ok(frames)
}

/// A line's fields, read but not yet checked as a frame.
struct Fields {
    number: u64,
    frame_type: FrameType,
    base_bytes: u64,
    enhancement: Enhancement,
    time: Duration,
}

impl Fields {
    fn into_frame(self) -> Result<LayeredFrame, LayeredError> {
        LayeredFrame::new(
            self.number,
            self.frame_type,
            self.time,
            self.base_bytes,
            self.enhancement,
        )
    }
}

/// The first characters of a bad field, for its error.
fn quoted(field: &str) -> String {
    field.chars().take(QUOTED_CHARS).collect()
}

fn parse_line(line: &str) -> Result<Fields, FieldError> {
    let fields: Vec<&str> = line.split_whitespace().take(6).collect();
    let [number, kind, base, enhancement, time] = fields[..] else {
        let found = line.split_whitespace().count();
        return Err(FieldError::FieldCount { found });
    };
    let number = parse_whole(number).ok_or_else(|| FieldError::Number(quoted(number)))?;
    let frame_type = match kind {
        "I" => FrameType::I,
        "P" => FrameType::P,
        "B" => FrameType::B,
        other => return Err(FieldError::FrameType(quoted(other))),
    };
    let base_bytes = parse_whole(base).ok_or_else(|| FieldError::BaseBytes(quoted(base)))?;
    let enhancement = parse_enhancement(enhancement)?;
    let time = parse_seconds(time).ok_or_else(|| FieldError::Time(quoted(time)))?;
    Ok(Fields {
        number,
        frame_type,
        base_bytes,
        enhancement,
        time,
    })
}

/// A whole number of ASCII digits only (no sign, unlike `u64::from_str`).
fn parse_whole(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `fgs:BYTES` or `layers:BYTES,…` (or `layers:` for none). More than
/// [`MAX_ENHANCEMENT_LAYERS`] sizes are counted but not kept: the frame
/// check refuses them.
fn parse_enhancement(field: &str) -> Result<Enhancement, FieldError> {
    if let Some(bytes) = field.strip_prefix("fgs:") {
        let bytes =
            parse_whole(bytes).ok_or_else(|| FieldError::EnhancementBytes(quoted(bytes)))?;
        return Ok(Enhancement::Fgs { bytes });
    }
    let Some(list) = field.strip_prefix("layers:") else {
        return Err(FieldError::Enhancement(quoted(field)));
    };
    if list.is_empty() {
        return Ok(Enhancement::Layers(Vec::new()));
    }
    let count = list.split(',').count();
    if count > MAX_ENHANCEMENT_LAYERS {
        // Sizes of one byte stand in for the rest: only the count matters
        // to the error `LayeredFrame::new` gives.
        return Ok(Enhancement::Layers(vec![1; count]));
    }
    list.split(',')
        .map(|size| parse_whole(size).ok_or_else(|| FieldError::EnhancementBytes(quoted(size))))
        .collect::<Result<Vec<u64>, FieldError>>()
        .map(Enhancement::Layers)
}

/// Seconds as `WHOLE` or `WHOLE.FRACTION` with 1 to 9 decimals, read exactly
/// to the nanosecond (no float rounding).
fn parse_seconds(text: &str) -> Option<Duration> {
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (text, None),
    };
    let seconds = parse_whole(whole)?;
    let nanos = match fraction {
        None => 0,
        Some(digits) if (1..=9).contains(&digits.len()) => {
            // At most 9 digits: below 10^9, and the scale is at most 10^8.
            let value = u32::try_from(parse_whole(digits)?).ok()?;
            let scale = 10u32.pow(9 - digits.len() as u32);
            value * scale
        }
        Some(_) => return None,
    };
    // `nanos` < 10^9, so `Duration::new` cannot carry into (and overflow)
    // the seconds.
    Some(Duration::new(seconds, nanos))
}

/// A time as seconds with 3 decimals as EvalVid writes them, or more (up to
/// 9) when the time needs them to read back exactly.
fn format_seconds(time: Duration) -> String {
    let mut fraction = format!("{:09}", time.subsec_nanos());
    while fraction.len() > 3 && fraction.ends_with('0') {
        fraction.pop();
    }
    format!("{}.{fraction}", time.as_secs())
}

/// Writes a layered trace: a header comment, then one line a frame, fields
/// separated by tabs. What it writes parses back to the same frames.
pub fn format_layered_trace(frames: &[LayeredFrame]) -> String {
    let mut out = String::from(HEADER);
    for frame in frames {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}",
            frame.number(),
            frame.frame_type().letter(),
            frame.base_bytes(),
            frame.enhancement(),
            format_seconds(frame.time())
        );
    }
    out
}

/// Reads a layered trace file (refused unread when longer than
/// [`MAX_TRACE_TEXT_BYTES`]).
pub fn read_layered_trace(path: &Path) -> Result<Vec<LayeredFrame>, LayeredTraceError> {
    let io_error = |source| LayeredTraceError::Io {
        path: path.to_owned(),
        source,
    };
    let origin = path.display().to_string();
    let file = std::fs::File::open(path).map_err(io_error)?;
    let mut text = String::new();
    // One byte more than allowed tells a file at the limit from one beyond.
    file.take(MAX_TRACE_TEXT_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .map_err(io_error)?;
    parse_layered_trace(&text, &origin)
}

/// Writes `frames` to a layered trace file.
pub fn write_layered_trace(path: &Path, frames: &[LayeredFrame]) -> Result<(), LayeredTraceError> {
    std::fs::write(path, format_layered_trace(frames)).map_err(|source| LayeredTraceError::Io {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(number: u64, base: u64, enhancement: Enhancement, ms: u64) -> LayeredFrame {
        LayeredFrame::new(
            number,
            FrameType::P,
            Duration::from_millis(ms),
            base,
            enhancement,
        )
        .unwrap()
    }

    #[test]
    fn a_worked_trace_parses_and_writes_back_exactly() {
        let text = "# a paper 004 style trace\n\
                    1\tI\t2400\tfgs:1100\t0.000\n\
                    \n\
                    2 P 800 fgs:1050 0.033333333\n\
                    3\tB\t780\tlayers:300,300,450\t0.066666667\n\
                    4\tP\t700\tlayers:\t0.1\n";
        let frames = parse_layered_trace(text, "t.lt").unwrap();
        assert_eq!(frames.len(), 4);
        assert_eq!(frames[0].frame_type(), FrameType::I);
        assert_eq!(frames[0].total_bytes(), 3500);
        assert_eq!(frames[1].time(), Duration::from_nanos(33_333_333));
        assert_eq!(
            frames[2].enhancement(),
            &Enhancement::Layers(vec![300, 300, 450])
        );
        assert_eq!(frames[3].enhancement(), &Enhancement::Layers(vec![]));
        let written = format_layered_trace(&frames);
        assert_eq!(
            written,
            "# frame_no\ttype\tbase_bytes\tenhancement\ttime_s\n\
             1\tI\t2400\tfgs:1100\t0.000\n\
             2\tP\t800\tfgs:1050\t0.033333333\n\
             3\tB\t780\tlayers:300,300,450\t0.066666667\n\
             4\tP\t700\tlayers:\t0.100\n"
        );
        assert_eq!(parse_layered_trace(&written, "again").unwrap(), frames);
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        for (bad, needle) in [
            ("1 I 10 fgs:0\n", "expected 5 fields"),
            ("1 I 10 fgs:0 0 extra\n", "found 6"),
            ("x I 10 fgs:0 0\n", "frame number \"x\""),
            ("+1 I 10 fgs:0 0\n", "frame number \"+1\""),
            ("1 H 10 fgs:0 0\n", "frame type \"H\""),
            ("1 I -10 fgs:0 0\n", "base size \"-10\""),
            ("1 I 10 12 0\n", "enhancement \"12\" is not fgs"),
            ("1 I 10 fgs:x 0\n", "enhancement size \"x\""),
            ("1 I 10 layers:1,,2 0\n", "enhancement size \"\""),
            ("1 I 10 layers:1,0 0\n", "enhancement layer 2 has no bytes"),
            ("1 I 10 fgs:0 -1\n", "time \"-1\""),
            ("1 I 10 fgs:0 1.\n", "time \"1.\""),
            ("1 I 10 fgs:0 0.1234567891\n", "at most 9 decimals"),
            ("1 I 10 fgs:0 1e3\n", "time \"1e3\""),
            (
                "1 I 10 fgs:0 1000001\n",
                "is not a time from 0 to 1000000 s",
            ),
            ("1 I 16777216 fgs:1 0\n", "16777217 bytes, more than"),
            ("1 I 10 fgs:0 1\n1 P 10 fgs:0 2\n", "1 does not follow 1"),
            ("1 I 10 fgs:0 1\n2 P 10 fgs:0 0.5\n", "before the previous"),
            (
                "1 I 10 layers:1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 0\n",
                "17 enhancement layers",
            ),
        ] {
            let error = parse_layered_trace(bad, "t.lt").unwrap_err().to_string();
            assert!(
                error.contains("t.lt, line") && error.contains(needle),
                "{bad:?}: {error}"
            );
        }
        let error = parse_layered_trace("# only\n\n", "t.lt").unwrap_err();
        assert!(matches!(error, LayeredTraceError::Empty { .. }), "{error}");
        let long = format!("1 I {} fgs:0 0\n", "9".repeat(500));
        let error = parse_layered_trace(&long, "t.lt").unwrap_err().to_string();
        assert!(error.len() < 200, "the field is quoted in part: {error}");
        let error = parse_layered_trace("\n\n1 I 10 fgs:0 0\n2 I 10 fgs:0 0 3\n", "t.lt")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("t.lt, line 4:"), "{error}");
    }

    #[test]
    fn text_and_frame_counts_are_bounded() {
        let limits = Limits {
            text_bytes: 100,
            frames: 2,
        };
        let two = "1 I 1 fgs:1 0\n2 P 1 fgs:1 0\n";
        assert_eq!(parse_within(two, "t", limits).unwrap().len(), 2);
        let three = format!("{two}# comment lines do not count\n3 P 1 fgs:1 0\n");
        let error = parse_within(&three, "t", limits).unwrap_err();
        assert!(
            matches!(error, LayeredTraceError::TooManyFrames { line: 4, .. }),
            "{error}"
        );
        let long = format!("{two}{}", "#".repeat(100));
        let error = parse_within(&long, "t", limits).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("t: more than the {MAX_TRACE_TEXT_BYTES} bytes a layered trace may have")
        );
    }

    #[test]
    fn times_read_and_write_to_the_nanosecond() {
        for (text, nanos, written) in [
            ("0", 0, "0.000"),
            ("0.5", 500_000_000, "0.500"),
            ("66.433", 66_433_000_000, "66.433"),
            ("1.000000001", 1_000_000_001, "1.000000001"),
            ("0.0400", 40_000_000, "0.040"),
        ] {
            let time = parse_seconds(text).unwrap();
            assert_eq!(time, Duration::from_nanos(nanos), "{text}");
            assert_eq!(format_seconds(time), written);
            assert_eq!(parse_seconds(written), Some(time));
        }
        for bad in [
            "",
            ".5",
            "1.",
            "1.2.3",
            "1,5",
            "inf",
            "NaN",
            "-0",
            " 1",
            "99999999999999999999",
        ] {
            assert_eq!(parse_seconds(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn files_write_and_read_back() {
        let dir = std::env::temp_dir().join(format!("fairstream-layered-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trace.lt");
        let frames = vec![
            frame(1, 100, Enhancement::Fgs { bytes: 50 }, 0),
            frame(2, 80, Enhancement::Layers(vec![10, 20]), 40),
        ];
        write_layered_trace(&path, &frames).unwrap();
        assert_eq!(read_layered_trace(&path).unwrap(), frames);
        let missing = dir.join("missing.lt");
        let error = read_layered_trace(&missing).unwrap_err().to_string();
        assert!(error.contains("missing.lt"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
