//! Access units from an Annex B stream that arrives in pieces (a pipe, a
//! socket, a file read in chunks), and the frame type of an access unit
//! taken on its own.
//!
//! [`parse_stream`] needs the sequence and picture
//! parameter sets to read a slice header, and it sees where an access unit
//! ends only when the next one begins (§7.4.1.2.3). The splitter therefore
//! keeps the parameter sets it has seen and puts them in front of the bytes
//! it parses, and hands out an access unit only once the next one has begun
//! (or at the end of the stream).

use super::{nal_type, parse_stream, FrameType, H264Error};

/// The most distinct parameter sets remembered (older ones are forgotten).
const MAX_PARAMETER_SETS: usize = 32;
/// Bytes buffered without a complete access unit before the stream is
/// refused: no sane frame is this large.
pub const MAX_PENDING_BYTES: usize = 64 << 20;

/// One access unit handed out by the [`AccessUnitSplitter`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitAccessUnit {
    /// The frame's type (P when no slice header could be read).
    pub frame_type: FrameType,
    /// Whether its slices are IDR slices.
    pub idr: bool,
    /// Its NAL units (no start codes), in stream order.
    pub nal_units: Vec<Vec<u8>>,
}

impl SplitAccessUnit {
    /// Bytes of all its NAL units (start codes excluded).
    pub fn size_bytes(&self) -> usize {
        self.nal_units.iter().map(Vec::len).sum()
    }

    /// The access unit as Annex B, each NAL unit after a 4-byte start code.
    pub fn annex_b(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_bytes() + 4 * self.nal_units.len());
        for nal in &self.nal_units {
            out.extend_from_slice(&[0, 0, 0, 1]);
            out.extend_from_slice(nal);
        }
        out
    }
}

/// Splits an Annex B stream given in pieces into access units.
#[derive(Clone, Debug, Default)]
pub struct AccessUnitSplitter {
    pending: Vec<u8>,
    parameter_sets: ParameterSets,
}

/// The SPS and PPS NAL units seen so far, to read later slice headers.
#[derive(Clone, Debug, Default)]
pub struct ParameterSets {
    units: Vec<Vec<u8>>,
}

impl ParameterSets {
    /// Remembers `nal` if it is an SPS or a PPS.
    pub fn observe(&mut self, nal: &[u8]) {
        let kind = nal.first().map_or(0, |h| h & 0x1f);
        if !matches!(kind, nal_type::SPS | nal_type::PPS) {
            return;
        }
        if let Some(at) = self.units.iter().position(|u| u == nal) {
            self.units.remove(at);
        } else if self.units.len() >= MAX_PARAMETER_SETS {
            self.units.remove(0);
        }
        self.units.push(nal.to_vec());
    }

    /// The last SPS and the last PPS seen.
    pub fn latest(&self) -> (Option<&[u8]>, Option<&[u8]>) {
        let last = |kind: u8| {
            self.units
                .iter()
                .rev()
                .find(|u| u.first().is_some_and(|h| h & 0x1f == kind))
                .map(Vec::as_slice)
        };
        (last(nal_type::SPS), last(nal_type::PPS))
    }

    /// The parameter sets as Annex B.
    fn annex_b(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for unit in &self.units {
            out.extend_from_slice(&[0, 0, 0, 1]);
            out.extend_from_slice(unit);
        }
        out
    }

    /// The type of the frame whose NAL units are `nal_units` (read from its
    /// slice headers with the parameter sets seen so far, which it also
    /// adds to), and whether it is an IDR frame; `None` without a readable
    /// slice.
    pub fn classify(&mut self, nal_units: &[&[u8]]) -> Option<(FrameType, bool)> {
        for nal in nal_units {
            self.observe(nal);
        }
        let mut bytes = self.annex_b();
        let prefix = bytes.len();
        for nal in nal_units {
            bytes.extend_from_slice(&[0, 0, 0, 1]);
            bytes.extend_from_slice(nal);
        }
        let report = parse_stream(&bytes).ok()?;
        let unit = report
            .access_units
            .iter()
            .find(|au| au.nal_units.iter().any(|n| n.range.start >= prefix))?;
        Some((unit.frame_type?, unit.idr))
    }
}

/// The position of the last start code (00 00 01) in `bytes`.
fn last_start_code(bytes: &[u8]) -> Option<usize> {
    bytes.windows(3).rposition(|w| w == [0, 0, 1])
}

impl AccessUnitSplitter {
    /// A splitter with nothing buffered.
    pub fn new() -> AccessUnitSplitter {
        AccessUnitSplitter::default()
    }

    /// The parameter sets seen so far.
    pub fn parameter_sets(&self) -> &ParameterSets {
        &self.parameter_sets
    }

    /// Bytes buffered and not yet handed out.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Adds `bytes` and returns the access units now complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SplitAccessUnit>, H264Error> {
        let old_len = self.pending.len();
        self.pending.extend_from_slice(bytes);
        // Only NAL units followed by a start code are complete; only a new
        // start code can complete an access unit.
        let from = old_len.saturating_sub(2);
        let Some(end) = last_start_code(&self.pending[from..]).map(|at| from + at) else {
            return self.check_pending();
        };
        let (units, consumed) = self.split(end, false)?;
        if consumed == 0 && units.is_empty() {
            return self.check_pending().map(|_| units);
        }
        self.pending.drain(..consumed);
        Ok(units)
    }

    /// The end of the stream: returns the access units left.
    pub fn finish(&mut self) -> Result<Vec<SplitAccessUnit>, H264Error> {
        if self.pending.is_empty() {
            return Ok(Vec::new());
        }
        let end = self.pending.len();
        let result = self.split(end, true).map(|(units, _)| units);
        self.pending.clear();
        result
    }

    fn check_pending(&self) -> Result<Vec<SplitAccessUnit>, H264Error> {
        if self.pending.len() > MAX_PENDING_BYTES {
            return Err(H264Error::NotAnnexB {
                searched: self.pending.len(),
            });
        }
        Ok(Vec::new())
    }

    /// Parses `pending[..end]`; returns the complete access units (all of
    /// them when `last`, otherwise all but the last) and the bytes they
    /// used.
    fn split(
        &mut self,
        end: usize,
        last: bool,
    ) -> Result<(Vec<SplitAccessUnit>, usize), H264Error> {
        let mut bytes = self.parameter_sets.annex_b();
        let prefix = bytes.len();
        bytes.extend_from_slice(&self.pending[..end]);
        let report = match parse_stream(&bytes) {
            Ok(report) => report,
            // Parameter sets or other units without a picture yet.
            Err(H264Error::NoPictures { .. }) if !last => return Ok((Vec::new(), 0)),
            Err(H264Error::NoPictures { .. }) => return Ok((Vec::new(), end)),
            Err(error) => {
                if last || self.pending.len() > MAX_PENDING_BYTES {
                    return Err(error);
                }
                return Ok((Vec::new(), 0));
            }
        };
        let complete = if last {
            report.access_units.len()
        } else {
            report.access_units.len().saturating_sub(1)
        };
        let mut out = Vec::with_capacity(complete);
        for au in report.access_units.iter().take(complete) {
            let nal_units: Vec<Vec<u8>> = au
                .nal_units
                .iter()
                .filter(|n| n.range.start >= prefix)
                .filter_map(|n| bytes.get(n.range.clone()).map(<[u8]>::to_vec))
                .collect();
            if nal_units.is_empty() {
                continue;
            }
            for nal in &nal_units {
                self.parameter_sets.observe(nal);
            }
            out.push(SplitAccessUnit {
                frame_type: au.frame_type.unwrap_or(FrameType::P),
                idr: au.idr,
                nal_units,
            });
        }
        if last {
            return Ok((out, end));
        }
        // The incomplete access unit starts at its first NAL unit of ours,
        // less the 00 00 01 before it.
        let consumed = report
            .access_units
            .last()
            .and_then(|au| au.nal_units.iter().find(|n| n.range.start >= prefix))
            .map_or(0, |n| n.range.start - prefix)
            .saturating_sub(3);
        Ok((out, consumed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_give_the_same_access_units_as_the_whole_file() {
        let Some(path) = fairstream_testkit::shared_file("data/video/BA_MW_D.264") else {
            return;
        };
        let bytes = std::fs::read(path).unwrap();
        let expected = crate::h264::access_unit_bytes(&bytes).unwrap();
        for chunk in [7usize, 1000, 65536] {
            let mut splitter = AccessUnitSplitter::new();
            let mut got = Vec::new();
            for piece in bytes.chunks(chunk) {
                got.extend(splitter.push(piece).unwrap());
            }
            got.extend(splitter.finish().unwrap());
            let got: Vec<Vec<Vec<u8>>> = got.into_iter().map(|a| a.nal_units).collect();
            assert_eq!(got.len(), expected.len(), "chunk {chunk}");
            assert!(got == expected, "chunk {chunk}: access units differ");
        }
    }

    #[test]
    fn garbage_without_start_codes_is_bounded() {
        let mut splitter = AccessUnitSplitter::new();
        assert!(splitter.push(&[0xff; 1000]).unwrap().is_empty());
        assert!(matches!(
            splitter.finish(),
            Err(H264Error::NotAnnexB { .. })
        ));
        assert_eq!(splitter.pending(), 0);
    }
}
