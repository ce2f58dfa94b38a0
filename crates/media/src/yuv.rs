//! Raw video frames in I420 (planar YUV 4:2:0, 8 bits), the format decoders
//! produce and EvalVid's tools compare, and raw `.yuv` files of them.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// A frame of I420 video: a full-size luma plane and two chroma planes of
/// half the width and height (rounded up).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    width: u32,
    height: u32,
    data: Vec<u8>,
}

/// Why frames could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum YuvError {
    /// A width or height of zero, odd, or too large.
    #[error("bad frame size {width}x{height}: both must be even, positive and at most 16384")]
    BadSize {
        /// The width given.
        width: u32,
        /// The height given.
        height: u32,
    },
    /// Plane data of the wrong length.
    #[error("frame data is {got} bytes; {width}x{height} I420 needs {expected}")]
    BadLength {
        /// The width.
        width: u32,
        /// The height.
        height: u32,
        /// Bytes needed.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// The file's length is not a whole number of frames.
    #[error("{}: {len} bytes is not a whole number of {width}x{height} I420 frames ({frame} bytes each)", path.display())]
    PartialFrame {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// The width.
        width: u32,
        /// The height.
        height: u32,
        /// Bytes of one frame.
        frame: usize,
    },
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
}

/// Bytes of one `width`×`height` I420 frame.
pub fn frame_bytes(width: u32, height: u32) -> usize {
    let (w, h) = (width as usize, height as usize);
    w * h + 2 * w.div_ceil(2) * h.div_ceil(2)
}

fn check_size(width: u32, height: u32) -> Result<(), YuvError> {
    if width == 0
        || height == 0
        || width % 2 != 0
        || height % 2 != 0
        || width > 16384
        || height > 16384
    {
        return Err(YuvError::BadSize { width, height });
    }
    Ok(())
}

impl Frame {
    /// A frame of one colour (`y`, `u`, `v`).
    pub fn filled(width: u32, height: u32, y: u8, u: u8, v: u8) -> Result<Frame, YuvError> {
        check_size(width, height)?;
        let luma = width as usize * height as usize;
        let mut data = vec![y; luma];
        let chroma = (frame_bytes(width, height) - luma) / 2;
        data.extend(std::iter::repeat_n(u, chroma));
        data.extend(std::iter::repeat_n(v, chroma));
        Ok(Frame {
            width,
            height,
            data,
        })
    }

    /// A frame from its planes laid out one after another (Y, U, V).
    pub fn from_i420(width: u32, height: u32, data: Vec<u8>) -> Result<Frame, YuvError> {
        check_size(width, height)?;
        let expected = frame_bytes(width, height);
        if data.len() != expected {
            return Err(YuvError::BadLength {
                width,
                height,
                expected,
                got: data.len(),
            });
        }
        Ok(Frame {
            width,
            height,
            data,
        })
    }

    /// Width in luma samples.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in luma samples.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The luma plane, row after row.
    pub fn y(&self) -> &[u8] {
        &self.data[..self.width as usize * self.height as usize]
    }

    /// The whole frame, Y then U then V.
    pub fn as_i420(&self) -> &[u8] {
        &self.data
    }

    /// The whole frame, mutable (for generators).
    pub fn as_i420_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }

    /// The U and V planes' width and height.
    pub fn chroma_size(&self) -> (usize, usize) {
        (
            (self.width as usize).div_ceil(2),
            (self.height as usize).div_ceil(2),
        )
    }
}

/// Reads every frame of a raw I420 file of `width`×`height` frames.
pub fn read_yuv_file(path: &Path, width: u32, height: u32) -> Result<Vec<Frame>, YuvError> {
    check_size(width, height)?;
    let io_error = |source| YuvError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io_error)?;
    let len = file.metadata().map_err(io_error)?.len();
    let frame = frame_bytes(width, height);
    if len % frame as u64 != 0 {
        return Err(YuvError::PartialFrame {
            path: path.to_owned(),
            len,
            width,
            height,
            frame,
        });
    }
    let mut frames = Vec::with_capacity((len / frame as u64) as usize);
    for _ in 0..len / frame as u64 {
        let mut data = vec![0; frame];
        file.read_exact(&mut data).map_err(io_error)?;
        frames.push(Frame {
            width,
            height,
            data,
        });
    }
    Ok(frames)
}

/// Writes frames one after another as raw I420.
pub fn write_yuv(out: &mut impl Write, frames: &[Frame]) -> io::Result<()> {
    for frame in frames {
        out.write_all(frame.as_i420())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_planes() {
        assert_eq!(frame_bytes(352, 288), 152_064);
        let frame = Frame::filled(4, 2, 10, 20, 30).unwrap();
        assert_eq!(
            frame.as_i420(),
            &[10, 10, 10, 10, 10, 10, 10, 10, 20, 20, 30, 30]
        );
        assert_eq!(frame.y().len(), 8);
        assert!(Frame::filled(3, 2, 0, 0, 0).is_err());
        assert!(Frame::filled(0, 2, 0, 0, 0).is_err());
        let error = Frame::from_i420(4, 2, vec![0; 11]).unwrap_err().to_string();
        assert!(
            error.contains("11 bytes") && error.contains("needs 12"),
            "{error}"
        );
    }

    #[test]
    fn a_file_that_is_not_whole_frames_is_named() {
        let path = std::env::temp_dir().join(format!("fairstream-yuv-{}.yuv", std::process::id()));
        std::fs::write(&path, vec![0u8; 13]).unwrap();
        let error = read_yuv_file(&path, 4, 2).unwrap_err().to_string();
        assert!(error.contains("not a whole number"), "{error}");
        std::fs::write(&path, vec![7u8; 24]).unwrap();
        let frames = read_yuv_file(&path, 4, 2).unwrap();
        assert_eq!(frames.len(), 2);
        let mut out = Vec::new();
        write_yuv(&mut out, &frames).unwrap();
        assert_eq!(out, vec![7u8; 24]);
        std::fs::remove_file(&path).unwrap();
        let error = read_yuv_file(&path, 4, 2).unwrap_err().to_string();
        assert!(error.contains("fairstream-yuv"), "{error}");
    }
}
