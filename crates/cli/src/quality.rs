//! The quality of what a receiver got (`fairstream demo`, and `fairstream
//! recv --reference generated`): its access units decoded with
//! concealment, each placed at the frame its RTP timestamp names, and
//! compared with the generator's frame of the same number (the generator
//! is deterministic, so the reference is made again). A frame that never
//! arrived, or that the sender dropped (a temporal layer shed by
//! `cc=buffer`), shows the previous picture, as a player would (EvalVid's
//! convention, that of `fairstream_media::codec::decode_aligned`).

use anyhow::Context;
use fairstream_media::codec::{Decoder, DEFAULT_CONCEALMENT};
use fairstream_media::generator::Generator;
use fairstream_media::quality::{
    mse_y, psnr_from_mse, ssim_y, summarise, FrameQuality, QualitySummary,
};
use fairstream_media::stream::CLOCK_RATE;
use fairstream_media::yuv::Frame;
use fairstream_net::recv::ReceivedAccessUnit;
use fairstream_net::send::SourceFrame;
use serde::Serialize;

/// The quality of one run's video.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Quality {
    /// The frames the sender encoded (the reference's length).
    pub(crate) frames: usize,
    /// Frames the decoder did not produce: lost, or dropped by the sender
    /// as late; the previous picture stands in.
    pub(crate) frames_repeated: usize,
    /// Pictures decoded with concealment (or predicted from one).
    pub(crate) frames_concealed: u64,
    /// Luma PSNR and SSIM (NaN when not measured) of every frame against
    /// the source.
    #[serde(skip)]
    pub(crate) per_frame: Vec<FrameQuality>,
    /// Their means.
    pub(crate) summary: Option<QualitySummary>,
}

/// The frames as the sender took them from the encoder, before any loss:
/// the quality the encoder reached at the bitrate it was given.
pub(crate) fn as_encoded(sent: &[SourceFrame], size: (u32, u32)) -> anyhow::Result<Quality> {
    let units = sent
        .iter()
        .map(|frame| {
            (
                usize::try_from(frame.index).unwrap_or(usize::MAX),
                annex_b(&frame.nal_units),
            )
        })
        .collect();
    measure(units, sent.len(), size, Ssim::Measured)
}

/// Whether SSIM is measured beside PSNR (it costs several times more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ssim {
    /// Measured.
    Measured,
    /// Left out: NaN in the per-frame figures and the summary.
    Skipped,
}

/// What the receiver wrote, each access unit placed at the frame its RTP
/// timestamp names; `frames` is how many the sender encoded.
pub(crate) fn as_received(
    units: &[ReceivedAccessUnit],
    frames: usize,
    size: (u32, u32),
    fps: f64,
    ssim: Ssim,
) -> anyhow::Result<Quality> {
    let units = units
        .iter()
        .map(|unit| (frame_index(unit, fps), annex_b(&unit.nal_units)))
        .collect();
    measure(units, frames, size, ssim)
}

/// The frame an access unit's RTP timestamp names: `fairstream send`
/// stamps frame i with i/fps seconds.
pub(crate) fn frame_index(unit: &ReceivedAccessUnit, fps: f64) -> usize {
    (f64::from(unit.rtp_timestamp) * fps / CLOCK_RATE).round() as usize
}

/// NAL units with start codes.
fn annex_b(nal_units: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for nal in nal_units {
        bytes.extend_from_slice(&[0, 0, 0, 1]);
        bytes.extend_from_slice(nal);
    }
    bytes
}

/// Decodes `units` (frame index, Annex B) and compares frames `0..frames`
/// with the generated source of `size`. The pictures are scored as the
/// decoder gives them, so memory holds one picture however long the run;
/// the result is `decode_aligned`'s followed by a comparison (the test
/// checks it).
fn measure(
    mut units: Vec<(usize, Vec<u8>)>,
    frames: usize,
    size: (u32, u32),
    ssim: Ssim,
) -> anyhow::Result<Quality> {
    let generator = Generator::new(size.0, size.1)
        .with_context(|| format!("picture size {}x{}", size.0, size.1))?;
    units.retain(|(index, _)| *index < frames);
    let mut decoder = Decoder::new(DEFAULT_CONCEALMENT).context("cannot start the decoder")?;
    let mut scorer = Scorer {
        generator,
        frames,
        next: 0,
        last: None,
        repeated: 0,
        per_frame: Vec::with_capacity(frames),
        ssim,
    };
    for (index, bytes) in &units {
        let pictures = decoder
            .decode(bytes, *index as u64)
            .with_context(|| format!("cannot decode frame {index}"))?;
        for (tag, picture) in pictures {
            scorer.place(tag, picture)?;
        }
    }
    if let Some((tag, picture)) = decoder.flush().context("cannot decode the last frame")? {
        scorer.place(tag, picture)?;
    }
    scorer.repeat_until(frames)?;
    Ok(Quality {
        frames,
        frames_repeated: scorer.repeated,
        frames_concealed: decoder.concealed(),
        summary: summarise(&scorer.per_frame),
        per_frame: scorer.per_frame,
    })
}

/// Scores decoded pictures in frame order against the source.
struct Scorer {
    generator: Generator,
    frames: usize,
    /// The next frame to score.
    next: usize,
    /// The picture on screen: the last one decoded.
    last: Option<Frame>,
    /// Frames that showed the previous picture.
    repeated: usize,
    per_frame: Vec<FrameQuality>,
    ssim: Ssim,
}

impl Scorer {
    /// The decoder's picture for frame `tag`; the frames it skipped show
    /// the previous picture. A picture for a frame already scored, or past
    /// the end, is ignored (a Baseline decoder returns them in order).
    fn place(&mut self, tag: u64, picture: Frame) -> anyhow::Result<()> {
        let Ok(index) = usize::try_from(tag) else {
            return Ok(());
        };
        if index < self.next || index >= self.frames {
            return Ok(());
        }
        self.repeat_until(index)?;
        let quality = self.quality(&picture)?;
        self.per_frame.push(quality);
        self.next += 1;
        self.last = Some(picture);
        Ok(())
    }

    /// Scores the previous picture (mid-grey before the first) for every
    /// frame up to `index`.
    fn repeat_until(&mut self, index: usize) -> anyhow::Result<()> {
        while self.next < index {
            let quality = match &self.last {
                Some(picture) => self.quality(picture)?,
                None => {
                    let (width, height) = self.generator.size();
                    self.quality(&Frame::filled(width, height, 128, 128, 128)?)?
                }
            };
            self.per_frame.push(quality);
            self.repeated += 1;
            self.next += 1;
        }
        Ok(())
    }

    /// `picture` against the source frame `self.next`.
    fn quality(&self, picture: &Frame) -> anyhow::Result<FrameQuality> {
        let index = self.next;
        let reference = self.generator.frame(index as u64);
        let mse = mse_y(&reference, picture)
            .with_context(|| format!("frame {index} has another size than the source"))?;
        Ok(FrameQuality {
            mse,
            psnr_db: psnr_from_mse(mse),
            ssim: match self.ssim {
                Ssim::Measured => ssim_y(&reference, picture).unwrap_or(f64::NAN),
                Ssim::Skipped => f64::NAN,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairstream_media::codec::{decode_aligned, Encoder, EncoderSettings};
    use fairstream_media::quality::compare;

    #[test]
    fn scoring_as_decoded_equals_decode_aligned_then_compare() {
        let size = (64, 48);
        let generator = Generator::new(size.0, size.1).unwrap();
        let mut encoder = Encoder::new(EncoderSettings {
            bitrate_bps: 150_000,
            fps: 25.0,
            gop: 10,
            slice_max_bytes: None,
        })
        .unwrap();
        let frames = 30;
        let units: Vec<(usize, Vec<u8>)> = (0..frames)
            .map(|i| (i, encoder.encode(&generator.frame(i as u64)).unwrap()))
            // Lost: the first frame, two in a row, and the last.
            .filter(|(i, _)| ![0, 5, 6, 29].contains(i))
            .collect();
        let quality = measure(units.clone(), frames, size, Ssim::Measured).unwrap();

        let mut decoder = Decoder::new(DEFAULT_CONCEALMENT).unwrap();
        let (decoded, repeats) = decode_aligned(
            &mut decoder,
            units.iter().map(|(i, b)| (*i, b.as_slice())),
            frames,
            size,
        )
        .unwrap();
        let reference: Vec<Frame> = (0..frames).map(|i| generator.frame(i as u64)).collect();
        let expected = compare(&reference, &decoded).unwrap();
        assert_eq!(quality.frames_repeated, repeats);
        assert!(repeats >= 4, "{repeats}");
        assert_eq!(quality.per_frame, expected);
    }
}
