//! EvalVid's trace files, so that EvalVid's own tools can check our numbers
//! and its traces can drive simulations without video payload.
//!
//! - The sender video trace `st`: one line a frame,
//!   `frame_no<TAB>type<TAB>size_bytes<TAB>n_packets<TAB>send_time_s`
//!   (types `I`, `P`, `B`, and `H` for EvalVid's MPEG-4 header frame,
//!   which counts as intra).
//! - The sender and receiver packet dumps `sd` and `rd`: one line a packet,
//!   `<time_s> id <packet_id> udp <bytes>`; a packet missing from `rd` was
//!   lost.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::h264::FrameType;

/// One line of a sender video trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceFrame {
    /// The frame number, from 1 in EvalVid's files.
    pub number: u64,
    /// The frame's type.
    pub frame_type: FrameType,
    /// Its size in bytes.
    pub size_bytes: u64,
    /// The packets it was sent in.
    pub packets: u32,
    /// When it was sent, seconds from the start.
    pub send_time_s: f64,
}

/// A sender trace that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A line is not `frame_no type size n_packets send_time`.
    #[error("{origin}, line {line}: {message}")]
    Line {
        /// The file's name.
        origin: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// No frame at all.
    #[error("{origin}: no frames in the trace")]
    Empty {
        /// The file's name.
        origin: String,
    },
}

/// Parses a sender video trace; `origin` names it in errors.
pub fn parse_sender_trace(text: &str, origin: &str) -> Result<Vec<TraceFrame>, TraceError> {
    let mut frames = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let error = |message: String| TraceError::Line {
            origin: origin.to_owned(),
            line: line_no,
            message,
        };
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        let [number, kind, size, packets, time] = fields[..] else {
            return Err(error(format!(
                "expected 5 fields (frame_no type size n_packets send_time), found {}",
                fields.len()
            )));
        };
        let number: u64 = number
            .parse()
            .map_err(|_| error(format!("frame number {number:?} is not a whole number")))?;
        let frame_type = match kind {
            "I" | "H" => FrameType::I,
            "P" => FrameType::P,
            "B" => FrameType::B,
            other => return Err(error(format!("frame type {other:?} is not I, P, B or H"))),
        };
        let size_bytes: u64 = size
            .parse()
            .map_err(|_| error(format!("size {size:?} is not a whole number of bytes")))?;
        let packets: u32 = packets
            .parse()
            .map_err(|_| error(format!("packet count {packets:?} is not a whole number")))?;
        let send_time_s: f64 = time
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| error(format!("send time {time:?} is not a time in seconds")))?;
        if let Some(last) = frames.last() {
            let last: &TraceFrame = last;
            if send_time_s < last.send_time_s {
                return Err(error(format!(
                    "send time {send_time_s} is before the previous frame's {}",
                    last.send_time_s
                )));
            }
        }
        frames.push(TraceFrame {
            number,
            frame_type,
            size_bytes,
            packets,
            send_time_s,
        });
    }
    if frames.is_empty() {
        return Err(TraceError::Empty {
            origin: origin.to_owned(),
        });
    }
    Ok(frames)
}

/// Reads a sender video trace file.
pub fn read_sender_trace(path: &Path) -> Result<Vec<TraceFrame>, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_sender_trace(&text, &path.display().to_string())
}

/// Writes a sender video trace (EvalVid's layout, 3 decimals of time).
pub fn format_sender_trace(frames: &[TraceFrame]) -> String {
    let mut out = String::new();
    for f in frames {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{:.3}",
            f.number,
            f.frame_type.letter(),
            f.size_bytes,
            f.packets,
            f.send_time_s
        );
    }
    out
}

/// One packet of a sender or receiver dump.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DumpPacket {
    /// When it was sent (`sd`) or received (`rd`), seconds.
    pub time_s: f64,
    /// Its identifier, shared by the two dumps.
    pub id: u64,
    /// Its size in bytes.
    pub size_bytes: u64,
}

/// Writes an `sd` or `rd` dump: `<time_s> id <packet_id> udp <bytes>`.
///
/// Times are written with EvalVid's six decimals when those read back to
/// the same value, and with as many digits as it takes otherwise (Rust's
/// shortest round-trip form), so that a verdict computed from the dump
/// equals one computed from the times themselves.
pub fn format_dump(packets: &[DumpPacket]) -> String {
    let mut out = String::new();
    for p in packets {
        let short = format!("{:.6}", p.time_s);
        let time = if short.parse::<f64>().ok() == Some(p.time_s) {
            short
        } else {
            p.time_s.to_string()
        };
        let _ = writeln!(out, "{time} id {} udp {}", p.id, p.size_bytes);
    }
    out
}

/// Parses an `sd` or `rd` dump.
pub fn parse_dump(text: &str, origin: &str) -> Result<Vec<DumpPacket>, TraceError> {
    let mut packets = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let error = |message: String| TraceError::Line {
            origin: origin.to_owned(),
            line: index + 1,
            message,
        };
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        let [time, "id", id, "udp", size] = fields[..] else {
            return Err(error(
                "expected `<time> id <packet_id> udp <bytes>`".to_owned(),
            ));
        };
        let time_s: f64 = time
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite())
            .ok_or_else(|| error(format!("time {time:?} is not a number")))?;
        let id = id
            .parse()
            .map_err(|_| error(format!("packet id {id:?} is not a whole number")))?;
        let size_bytes = size
            .parse()
            .map_err(|_| error(format!("size {size:?} is not a whole number")))?;
        packets.push(DumpPacket {
            time_s,
            id,
            size_bytes,
        });
    }
    Ok(packets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_evalvid_example_trace_parses() {
        let Some(path) = fairstream_testkit::shared_file("data/evalvid/st_highway_cif.st") else {
            return;
        };
        let frames = read_sender_trace(&path).unwrap();
        assert_eq!(frames.len(), 2000);
        assert_eq!(frames[0].frame_type, FrameType::I); // "H"
        assert_eq!(frames[0].size_bytes, 12038);
        assert_eq!(frames[0].packets, 12);
        assert_eq!(frames[1999].send_time_s, 66.433);
        assert!(
            frames
                .iter()
                .filter(|f| f.frame_type == FrameType::I)
                .count()
                > 10
        );
    }

    #[test]
    fn round_trips_and_errors_name_the_line() {
        let text = "1\tI\t1000\t2\t0.000\n2\tP\t300\t1\t0.040\n";
        let frames = parse_sender_trace(text, "t.st").unwrap();
        assert_eq!(format_sender_trace(&frames), text);
        for (bad, needle) in [
            ("1 I 1000 2\n", "expected 5 fields"),
            ("1 X 1000 2 0\n", "frame type \"X\""),
            ("1 I lots 2 0\n", "size \"lots\""),
            ("1 I 10 2 -1\n", "send time"),
            ("1 I 10 2 1\n2 P 10 1 0.5\n", "before the previous"),
        ] {
            let error = parse_sender_trace(bad, "t.st").unwrap_err().to_string();
            assert!(
                error.contains("t.st, line") && error.contains(needle),
                "{error}"
            );
        }
        assert!(parse_sender_trace("\n# nothing\n", "t.st").is_err());
        let dump = [DumpPacket {
            time_s: 0.5,
            id: 7,
            size_bytes: 1024,
        }];
        let text = format_dump(&dump);
        assert_eq!(text, "0.500000 id 7 udp 1024\n");
        assert_eq!(parse_dump(&text, "rd").unwrap(), dump);
        // A time that six decimals would round reads back exactly.
        let dump = [DumpPacket {
            time_s: 1.000_000_123_456_789,
            id: 8,
            size_bytes: 10,
        }];
        let text = format_dump(&dump);
        assert_eq!(parse_dump(&text, "rd").unwrap(), dump, "{text}");
        assert!(parse_dump("0.5 id x udp 3", "rd").is_err());
    }
}
