//! WAV files of telephone speech: 8 kHz, 16-bit, mono PCM, the only kind a
//! call takes (RIFF/WAVE, Microsoft's "Multimedia Programming Interface
//! and Data Specifications 1.0", 1991: a `fmt ` chunk of format 1, PCM,
//! and a `data` chunk of little-endian samples).
//!
//! [`read_samples`] names what is wrong with any other file (not RIFF, not
//! PCM, stereo, another rate or sample size) rather than resampling.
//! [`WavWriter`] writes the header first with sizes patched at
//! [`WavWriter::finish`], so that a file cut short still has its samples.

use std::io::{self, Seek, SeekFrom, Write};

use thiserror::Error;

use super::SAMPLE_RATE;

/// Bytes of the header [`WavWriter`] writes (RIFF, `fmt ` of 16 bytes,
/// `data`).
pub const HEADER_BYTES: usize = 44;
/// The most samples a data chunk can hold (its size is 32 bits).
const MAX_SAMPLES: u64 = (u32::MAX as u64 - 36) / 2;

/// Why a WAV file cannot be a call's signal.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WavError {
    /// Not a RIFF/WAVE file.
    #[error("not a WAV file (no RIFF/WAVE header)")]
    NotWav,
    /// A chunk runs past the end of the file.
    #[error("truncated WAV file: the `{0}` chunk runs past the end")]
    Truncated(String),
    /// No `fmt ` chunk, or none before the data.
    #[error("WAV file without a `fmt ` chunk before its `data` chunk")]
    NoFormat,
    /// No `data` chunk.
    #[error("WAV file without a `data` chunk")]
    NoData,
    /// Not 8 kHz 16-bit mono PCM.
    #[error(
        "the WAV file is {found}; a call needs 8000 Hz, 16-bit, mono PCM \
         (convert it, e.g. `sox in.wav -r 8000 -c 1 -b 16 out.wav`)"
    )]
    Unsupported {
        /// What the file is, in words.
        found: String,
    },
}

/// The samples of an 8 kHz 16-bit mono PCM WAV file's bytes.
pub fn read_samples(bytes: &[u8]) -> Result<Vec<i16>, WavError> {
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return Err(WavError::NotWav);
    }
    let mut rest = &bytes[12..];
    let mut format_seen = false;
    while rest.len() >= 8 {
        let id = String::from_utf8_lossy(&rest[..4]).into_owned();
        let size = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
        let body = rest
            .get(8..8usize.saturating_add(size))
            .ok_or_else(|| WavError::Truncated(id.clone()))?;
        match id.as_str() {
            "fmt " => {
                check_format(body)?;
                format_seen = true;
            }
            "data" => {
                if !format_seen {
                    return Err(WavError::NoFormat);
                }
                return Ok(body
                    .chunks_exact(2)
                    .map(|b| i16::from_le_bytes([b[0], b[1]]))
                    .collect());
            }
            _ => {}
        }
        // Chunks are padded to an even size.
        let next = 8usize.saturating_add(size).saturating_add(size & 1);
        rest = rest.get(next..).unwrap_or(&[]);
    }
    Err(if format_seen {
        WavError::NoData
    } else {
        WavError::NoFormat
    })
}

/// Checks a `fmt ` chunk's body: PCM, one channel, 8000 Hz, 16 bits.
fn check_format(body: &[u8]) -> Result<(), WavError> {
    if body.len() < 16 {
        return Err(WavError::Truncated("fmt ".into()));
    }
    let u16_at = |i: usize| u16::from_le_bytes([body[i], body[i + 1]]);
    let format = u16_at(0);
    let channels = u16_at(2);
    let rate = u32::from_le_bytes([body[4], body[5], body[6], body[7]]);
    let bits = u16_at(14);
    if format == 1 && channels == 1 && rate == SAMPLE_RATE && bits == 16 {
        return Ok(());
    }
    let kind = match format {
        1 => "PCM".to_owned(),
        3 => "floating-point".to_owned(),
        6 => "A-law".to_owned(),
        7 => "µ-law".to_owned(),
        0xFFFE => "WAVE_FORMAT_EXTENSIBLE".to_owned(),
        other => format!("format {other}"),
    };
    let layout = match channels {
        1 => "mono".to_owned(),
        2 => "stereo".to_owned(),
        n => format!("{n} channels"),
    };
    Err(WavError::Unsupported {
        found: format!("{rate} Hz, {bits}-bit, {layout} {kind}"),
    })
}

/// The 44-byte header of a WAV file of `samples` 8 kHz 16-bit mono
/// samples.
pub fn header(samples: u64) -> [u8; HEADER_BYTES] {
    let data = (samples.min(MAX_SAMPLES) * 2) as u32;
    let mut h = [0u8; HEADER_BYTES];
    h[..4].copy_from_slice(b"RIFF");
    h[4..8].copy_from_slice(&(36 + data).to_le_bytes());
    h[8..16].copy_from_slice(b"WAVEfmt ");
    h[16..20].copy_from_slice(&16u32.to_le_bytes());
    h[20..22].copy_from_slice(&1u16.to_le_bytes());
    h[22..24].copy_from_slice(&1u16.to_le_bytes());
    h[24..28].copy_from_slice(&SAMPLE_RATE.to_le_bytes());
    h[28..32].copy_from_slice(&(SAMPLE_RATE * 2).to_le_bytes());
    h[32..34].copy_from_slice(&2u16.to_le_bytes());
    h[34..36].copy_from_slice(&16u16.to_le_bytes());
    h[36..40].copy_from_slice(b"data");
    h[40..44].copy_from_slice(&data.to_le_bytes());
    h
}

/// Writes an 8 kHz 16-bit mono WAV file as samples come.
#[derive(Debug)]
pub struct WavWriter<W: Write + Seek> {
    out: W,
    samples: u64,
    buf: Vec<u8>,
}

impl<W: Write + Seek> WavWriter<W> {
    /// Writes the header (sizes 0 until [`WavWriter::finish`]).
    pub fn new(mut out: W) -> io::Result<WavWriter<W>> {
        out.write_all(&header(0))?;
        Ok(WavWriter {
            out,
            samples: 0,
            buf: Vec::new(),
        })
    }

    /// Appends `samples` (past the 4 GiB a WAV file can hold, they are
    /// dropped).
    pub fn write(&mut self, samples: &[i16]) -> io::Result<()> {
        let room = MAX_SAMPLES.saturating_sub(self.samples) as usize;
        let samples = &samples[..samples.len().min(room)];
        self.buf.clear();
        for s in samples {
            self.buf.extend_from_slice(&s.to_le_bytes());
        }
        self.out.write_all(&self.buf)?;
        self.samples += samples.len() as u64;
        Ok(())
    }

    /// Samples written.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Patches the header's sizes and flushes; the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&header(self.samples))?;
        self.out.seek(SeekFrom::End(0))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn a_written_file_reads_back() {
        let mut writer = WavWriter::new(Cursor::new(Vec::new())).unwrap();
        writer.write(&[0, 1, -1, i16::MAX, i16::MIN]).unwrap();
        let bytes = writer.finish().unwrap().into_inner();
        assert_eq!(bytes.len(), 44 + 10);
        assert_eq!(&bytes[40..44], &10u32.to_le_bytes());
        assert_eq!(&bytes[4..8], &46u32.to_le_bytes());
        assert_eq!(
            read_samples(&bytes).unwrap(),
            vec![0, 1, -1, i16::MAX, i16::MIN]
        );
    }

    #[test]
    fn other_files_are_named() {
        assert_eq!(read_samples(b"hello, not a wav"), Err(WavError::NotWav));
        let mut stereo = header(4).to_vec();
        stereo[22] = 2;
        stereo[24..28].copy_from_slice(&44_100u32.to_le_bytes());
        stereo.extend_from_slice(&[0; 8]);
        let error = read_samples(&stereo).unwrap_err().to_string();
        assert!(error.contains("44100 Hz, 16-bit, stereo PCM"), "{error}");
        let mut short = header(100).to_vec();
        short.extend_from_slice(&[0; 10]);
        assert_eq!(
            read_samples(&short),
            Err(WavError::Truncated("data".into()))
        );
        assert_eq!(read_samples(&header(0)[..36]), Err(WavError::NoData));
    }
}
