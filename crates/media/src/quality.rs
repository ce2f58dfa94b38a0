//! Video quality as EvalVid reports it: per-frame luma PSNR and SSIM
//! against the reference frames, their means, and the mean opinion score
//! from PSNR buckets.
//!
//! Conventions (EvalVid's, see `shared/data/README.md`):
//! - PSNR is of the luma (Y) plane, 8-bit: 10·log10(255² / MSE). Identical
//!   frames (MSE = 0) are given [`PSNR_CAP_DB`] = 100 dB rather than
//!   infinity, and the reports say so.
//! - `psnr_db_mean` averages the per-frame PSNR; `psnr_db_mse` is the PSNR
//!   of the mean MSE over all frames (ffmpeg's `psnr` filter's "average").
//! - SSIM (Wang et al. 2004) of the luma plane over 8×8 windows stepped by
//!   4 pixels, with C1 = (0.01·255)², C2 = (0.03·255)² (the windowing of
//!   ffmpeg's `ssim` filter), averaged over windows and then frames.
//! - MOS from PSNR: > 37 dB → 5, > 31 → 4, > 25 → 3, > 20 → 2, else 1.

use serde::Serialize;

use crate::yuv::Frame;

/// The PSNR given to a frame identical to its reference.
pub const PSNR_CAP_DB: f64 = 100.0;

/// Mean squared error of the luma planes; `None` if the sizes differ.
pub fn mse_y(reference: &Frame, frame: &Frame) -> Option<f64> {
    if reference.width() != frame.width() || reference.height() != frame.height() {
        return None;
    }
    let sum: u64 = reference
        .y()
        .iter()
        .zip(frame.y())
        .map(|(&a, &b)| {
            let d = i64::from(a) - i64::from(b);
            (d * d) as u64
        })
        .sum();
    Some(sum as f64 / reference.y().len() as f64)
}

/// PSNR in dB for a mean squared error, capped at [`PSNR_CAP_DB`].
pub fn psnr_from_mse(mse: f64) -> f64 {
    if mse <= 0.0 {
        return PSNR_CAP_DB;
    }
    (10.0 * (255.0f64 * 255.0 / mse).log10()).min(PSNR_CAP_DB)
}

/// Luma SSIM of two frames of the same size; `None` if the sizes differ.
pub fn ssim_y(reference: &Frame, frame: &Frame) -> Option<f64> {
    if reference.width() != frame.width() || reference.height() != frame.height() {
        return None;
    }
    const WINDOW: usize = 8;
    const STEP: usize = 4;
    let c1 = (0.01f64 * 255.0).powi(2);
    let c2 = (0.03f64 * 255.0).powi(2);
    let (width, height) = (reference.width() as usize, reference.height() as usize);
    let (a, b) = (reference.y(), frame.y());
    if width < WINDOW || height < WINDOW {
        return Some(if a == b { 1.0 } else { 0.0 });
    }
    let mut total = 0.0;
    let mut windows = 0usize;
    let mut y = 0;
    while y + WINDOW <= height {
        let mut x = 0;
        while x + WINDOW <= width {
            let (mut sa, mut sb, mut saa, mut sbb, mut sab) = (0u64, 0u64, 0u64, 0u64, 0u64);
            for row in y..y + WINDOW {
                let offset = row * width + x;
                for (&pa, &pb) in a[offset..offset + WINDOW]
                    .iter()
                    .zip(&b[offset..offset + WINDOW])
                {
                    let (pa, pb) = (u64::from(pa), u64::from(pb));
                    sa += pa;
                    sb += pb;
                    saa += pa * pa;
                    sbb += pb * pb;
                    sab += pa * pb;
                }
            }
            let n = (WINDOW * WINDOW) as f64;
            let (ma, mb) = (sa as f64 / n, sb as f64 / n);
            let va = saa as f64 / n - ma * ma;
            let vb = sbb as f64 / n - mb * mb;
            let cov = sab as f64 / n - ma * mb;
            total += ((2.0 * ma * mb + c1) * (2.0 * cov + c2))
                / ((ma * ma + mb * mb + c1) * (va + vb + c2));
            windows += 1;
            x += STEP;
        }
        y += STEP;
    }
    Some(total / windows as f64)
}

/// EvalVid's MOS bucket for a PSNR.
pub fn mos_from_psnr(psnr_db: f64) -> u8 {
    match psnr_db {
        p if p > 37.0 => 5,
        p if p > 31.0 => 4,
        p if p > 25.0 => 3,
        p if p > 20.0 => 2,
        _ => 1,
    }
}

/// One frame's quality.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FrameQuality {
    /// Mean squared error of the luma plane.
    pub mse: f64,
    /// Luma PSNR, dB (capped at [`PSNR_CAP_DB`]).
    pub psnr_db: f64,
    /// Luma SSIM.
    pub ssim: f64,
}

/// The quality of a sequence of frames.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QualitySummary {
    /// Frames compared.
    pub frames_compared: usize,
    /// Mean of the per-frame PSNR, dB.
    pub psnr_db_mean: f64,
    /// Standard deviation of the per-frame PSNR, dB.
    pub psnr_db_std: f64,
    /// PSNR of the mean MSE, dB (ffmpeg's average).
    pub psnr_db_mse: f64,
    /// Mean SSIM.
    pub ssim_mean: f64,
    /// Mean of the per-frame MOS buckets.
    pub mos_mean: f64,
    /// Frames identical to their reference (given [`PSNR_CAP_DB`]).
    pub frames_at_psnr_cap: usize,
    /// The cap used for identical frames, dB.
    pub psnr_cap_db: f64,
}

/// Why two sequences cannot be compared.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QualityError {
    /// Different numbers of frames.
    #[error("the reference has {reference} frames and the decoded video {decoded}")]
    FrameCount {
        /// Reference frames.
        reference: usize,
        /// Decoded frames.
        decoded: usize,
    },
    /// Frames of different sizes.
    #[error("frame {index}: reference is {reference_size:?}, decoded is {decoded_size:?}")]
    Size {
        /// Which frame.
        index: usize,
        /// (width, height) of the reference.
        reference_size: (u32, u32),
        /// (width, height) of the decoded frame.
        decoded_size: (u32, u32),
    },
    /// Nothing to compare.
    #[error("no frames to compare")]
    Empty,
}

/// Compares `decoded` with `reference` frame by frame.
pub fn compare(reference: &[Frame], decoded: &[Frame]) -> Result<Vec<FrameQuality>, QualityError> {
    if reference.len() != decoded.len() {
        return Err(QualityError::FrameCount {
            reference: reference.len(),
            decoded: decoded.len(),
        });
    }
    if reference.is_empty() {
        return Err(QualityError::Empty);
    }
    reference
        .iter()
        .zip(decoded)
        .enumerate()
        .map(|(index, (r, d))| {
            let size_error = || QualityError::Size {
                index,
                reference_size: (r.width(), r.height()),
                decoded_size: (d.width(), d.height()),
            };
            let mse = mse_y(r, d).ok_or_else(size_error)?;
            let ssim = ssim_y(r, d).ok_or_else(size_error)?;
            Ok(FrameQuality {
                mse,
                psnr_db: psnr_from_mse(mse),
                ssim,
            })
        })
        .collect()
}

/// The summary of per-frame figures; `None` for none.
pub fn summarise(frames: &[FrameQuality]) -> Option<QualitySummary> {
    if frames.is_empty() {
        return None;
    }
    let n = frames.len() as f64;
    let mean = frames.iter().map(|f| f.psnr_db).sum::<f64>() / n;
    let variance = frames
        .iter()
        .map(|f| (f.psnr_db - mean).powi(2))
        .sum::<f64>()
        / n;
    let mean_mse = frames.iter().map(|f| f.mse).sum::<f64>() / n;
    Some(QualitySummary {
        frames_compared: frames.len(),
        psnr_db_mean: mean,
        psnr_db_std: variance.sqrt(),
        psnr_db_mse: psnr_from_mse(mean_mse),
        ssim_mean: frames.iter().map(|f| f.ssim).sum::<f64>() / n,
        mos_mean: frames
            .iter()
            .map(|f| f64::from(mos_from_psnr(f.psnr_db)))
            .sum::<f64>()
            / n,
        frames_at_psnr_cap: frames.iter().filter(|f| f.mse == 0.0).count(),
        psnr_cap_db: PSNR_CAP_DB,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_with(y: impl Fn(usize) -> u8) -> Frame {
        let mut frame = Frame::filled(16, 16, 0, 128, 128).unwrap();
        for (i, p) in frame.as_i420_mut()[..256].iter_mut().enumerate() {
            *p = y(i);
        }
        frame
    }

    #[test]
    fn psnr_of_a_known_error() {
        let a = frame_with(|_| 100);
        let b = frame_with(|_| 110);
        assert_eq!(mse_y(&a, &b), Some(100.0));
        // 10·log10(65025 / 100) = 28.1308...
        assert!((psnr_from_mse(100.0) - 28.130_803_6).abs() < 1e-6);
        assert_eq!(psnr_from_mse(0.0), PSNR_CAP_DB);
        assert_eq!(mos_from_psnr(28.13), 3);
        assert_eq!(mos_from_psnr(37.0), 4);
        assert_eq!(mos_from_psnr(37.01), 5);
        assert_eq!(mos_from_psnr(f64::NAN), 1);
    }

    #[test]
    fn ssim_is_one_for_identical_and_lower_for_noise() {
        let a = frame_with(|i| (i * 7 % 251) as u8);
        assert!((ssim_y(&a, &a).unwrap() - 1.0).abs() < 1e-12);
        let b = frame_with(|i| ((i * 7 % 251) as u8).wrapping_add((i % 5) as u8 * 9));
        let s = ssim_y(&a, &b).unwrap();
        assert!(s < 0.99 && s > 0.0, "{s}");
        let flat = frame_with(|_| 0);
        let white = frame_with(|_| 255);
        assert!(ssim_y(&flat, &white).unwrap() < 0.01);
    }

    #[test]
    fn summaries_and_errors() {
        let a = frame_with(|_| 100);
        let b = frame_with(|_| 110);
        let q = compare(&[a.clone(), a.clone()], &[a.clone(), b]).unwrap();
        let s = summarise(&q).unwrap();
        assert_eq!(s.frames_at_psnr_cap, 1);
        assert!((s.psnr_db_mean - (100.0 + 28.130_803_6) / 2.0).abs() < 1e-6);
        // Mean MSE 50 → 31.14 dB.
        assert!((s.psnr_db_mse - psnr_from_mse(50.0)).abs() < 1e-12);
        assert_eq!(s.mos_mean, 4.0);
        assert!(matches!(
            compare(std::slice::from_ref(&a), &[]),
            Err(QualityError::FrameCount { .. })
        ));
        let small = Frame::filled(8, 8, 0, 0, 0).unwrap();
        let error = compare(&[a], &[small]).unwrap_err().to_string();
        assert!(error.contains("frame 0"), "{error}");
        assert!(summarise(&[]).is_none());
    }
}
