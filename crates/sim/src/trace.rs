//! mahimahi capacity traces (Netravali et al., "Mahimahi", USENIX ATC 2015;
//! the format of `shared/data/traces/`).
//!
//! A trace is ASCII, one non-negative integer per line: a millisecond offset
//! from the start of the trace. Each line is one *delivery opportunity* of
//! [`OPPORTUNITY_BYTES`]; values repeat when several packets may leave in the
//! same millisecond and never decrease. At its end the schedule repeats,
//! shifted by the last timestamp. Memory is bounded by the file: the looping
//! is arithmetic, never materialised.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use fairstream_proto::units::Rate;
use thiserror::Error;

/// Bytes one delivery opportunity may drain: mahimahi's `PACKET_SIZE`
/// (an Ethernet MTU of 1500 plus 4 bytes of tunnel framing).
pub const OPPORTUNITY_BYTES: u32 = 1504;

/// Why a trace could not be read.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("cannot read trace {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a non-negative integer (blank lines included).
    #[error("trace line {line}: expected a non-negative integer millisecond offset, got {text:?}")]
    NotANumber {
        /// 1-based line number.
        line: usize,
        /// The line as found.
        text: String,
    },
    /// A timestamp is smaller than the one before it.
    #[error("trace line {line}: offset {value} ms is before the previous line's {previous} ms")]
    Decreasing {
        /// 1-based line number.
        line: usize,
        /// The offset on that line.
        value: u64,
        /// The offset on the line before.
        previous: u64,
    },
    /// The trace has no opportunities at all.
    #[error("trace has no delivery opportunities")]
    Empty,
    /// The last timestamp is 0, so the looped schedule would offer infinite
    /// capacity at a single instant (mahimahi refuses such traces too).
    #[error("trace lasts 0 ms: its last offset must be positive for it to loop")]
    ZeroDuration,
}

/// A parsed, validated mahimahi trace. Cloning is cheap (shared storage).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    offsets_ms: Arc<[u64]>,
}

impl Trace {
    /// Parses trace text, naming the first bad line.
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        let mut offsets = Vec::new();
        let mut previous = 0u64;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            let value: u64 = trimmed.parse().map_err(|_| TraceError::NotANumber {
                line,
                text: raw.to_owned(),
            })?;
            if value < previous {
                return Err(TraceError::Decreasing {
                    line,
                    value,
                    previous,
                });
            }
            previous = value;
            offsets.push(value);
        }
        match offsets.last() {
            None => Err(TraceError::Empty),
            Some(0) => Err(TraceError::ZeroDuration),
            Some(_) => Ok(Trace {
                offsets_ms: offsets.into(),
            }),
        }
    }

    /// Reads and parses a trace file.
    pub fn from_file(path: &Path) -> Result<Trace, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
            path: path.to_owned(),
            source,
        })?;
        Trace::parse(&text)
    }

    /// The opportunities of one pass, as millisecond offsets.
    pub fn offsets_ms(&self) -> &[u64] {
        &self.offsets_ms
    }

    /// Opportunities in one pass of the trace.
    pub fn opportunities_per_pass(&self) -> u64 {
        self.offsets_ms.len() as u64
    }

    /// The length of one pass: the last timestamp, by which the schedule is
    /// shifted when it repeats.
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.period_ms())
    }

    fn period_ms(&self) -> u64 {
        // Parsing guarantees at least one offset.
        self.offsets_ms.last().copied().unwrap_or(1)
    }

    /// The mean capacity: opportunities × 1504 bytes over one period.
    pub fn mean_rate(&self) -> Rate {
        let bytes = self.opportunities_per_pass() as f64 * f64::from(OPPORTUNITY_BYTES);
        Rate::from_bytes_per_sec(bytes / self.period().as_secs_f64())
    }

    /// When opportunity `index` (counted from the trace start, across passes)
    /// occurs, as an offset from the trace start.
    pub fn opportunity_offset(&self, index: u64) -> Duration {
        let per_pass = self.opportunities_per_pass();
        let pass = index / per_pass;
        // The index is below the length, which came from a `usize`.
        let within = self.offsets_ms[(index % per_pass) as usize];
        Duration::from_millis(pass.saturating_mul(self.period_ms()).saturating_add(within))
    }

    /// How many opportunities occur at or before `offset` from the trace
    /// start: the index of the first opportunity strictly after it.
    pub fn opportunities_through(&self, offset: Duration) -> u64 {
        let period_ns = u128::from(self.period_ms()) * 1_000_000;
        let offset_ns = offset.as_nanos();
        let pass = offset_ns / period_ns;
        let rest_ns = offset_ns % period_ns;
        let within = self
            .offsets_ms
            .partition_point(|&ms| u128::from(ms) * 1_000_000 <= rest_ns);
        let pass = u64::try_from(pass).unwrap_or(u64::MAX);
        pass.saturating_mul(self.opportunities_per_pass())
            .saturating_add(within as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_loops_shifted_by_the_last_timestamp() {
        let trace = Trace::parse("0\n0\n3\n10\n").unwrap();
        assert_eq!(trace.offsets_ms(), &[0, 0, 3, 10]);
        assert_eq!(trace.period(), Duration::from_millis(10));
        let offsets: Vec<u64> = (0..9)
            .map(|k| trace.opportunity_offset(k).as_millis() as u64)
            .collect();
        assert_eq!(offsets, [0, 0, 3, 10, 10, 10, 13, 20, 20]);
        // Opportunities at or before an offset, across passes.
        assert_eq!(trace.opportunities_through(Duration::ZERO), 2);
        assert_eq!(trace.opportunities_through(Duration::from_micros(2999)), 2);
        assert_eq!(trace.opportunities_through(Duration::from_millis(3)), 3);
        assert_eq!(trace.opportunities_through(Duration::from_millis(10)), 6);
        assert_eq!(trace.opportunities_through(Duration::from_millis(19)), 7);
        // 4 × 1504 bytes in 10 ms.
        assert!((trace.mean_rate().bytes_per_sec() - 601_600.0).abs() < 1e-6);
    }

    #[test]
    fn errors_name_the_line() {
        let err = Trace::parse("0\n5\nx7\n9\n").unwrap_err();
        assert!(
            matches!(err, TraceError::NotANumber { line: 3, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("line 3"));
        let err = Trace::parse("0\n5\n4\n").unwrap_err();
        assert!(
            matches!(
                err,
                TraceError::Decreasing {
                    line: 3,
                    value: 4,
                    previous: 5
                }
            ),
            "{err}"
        );
        let err = Trace::parse("1\n\n2\n").unwrap_err();
        assert!(
            matches!(err, TraceError::NotANumber { line: 2, .. }),
            "{err}"
        );
        let err = Trace::parse("1\n-2\n").unwrap_err();
        assert!(
            matches!(err, TraceError::NotANumber { line: 2, .. }),
            "{err}"
        );
        assert!(matches!(Trace::parse(""), Err(TraceError::Empty)));
        assert!(matches!(
            Trace::parse("0\n0\n"),
            Err(TraceError::ZeroDuration)
        ));
        let err = Trace::from_file(Path::new("/nonexistent/trace.down")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/trace.down"), "{err}");
    }

    #[test]
    fn verizon_down_mean_rate() {
        let Some(path) = fairstream_testkit::shared_file("data/traces/Verizon-LTE-short.down")
        else {
            return;
        };
        let trace = Trace::from_file(&path).unwrap();
        assert_eq!(trace.opportunities_per_pass(), 58655);
        let mbit = trace.mean_rate().bits_per_sec() / 1e6;
        eprintln!(
            "Verizon-LTE-short.down: mean rate {mbit:.3} Mbit/s over {:?}",
            trace.period()
        );
        assert!((mbit - 5.03).abs() < 0.02, "{mbit}");
    }
}
