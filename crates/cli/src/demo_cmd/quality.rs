//! The quality of what the receiver got: its access units decoded with
//! concealment, each placed at the frame its RTP timestamp names, and
//! compared with the generator's frame of the same number (the generator
//! is deterministic, so the reference is made again). A frame that never
//! arrived shows the previous picture, as a player would (EvalVid's
//! convention, `fairstream_media::codec::decode_aligned`).

use anyhow::Context;
use fairstream_media::codec::{decode_aligned, Decoder, DEFAULT_CONCEALMENT};
use fairstream_media::generator::Generator;
use fairstream_media::quality::{
    mse_y, psnr_from_mse, ssim_y, summarise, FrameQuality, QualitySummary,
};
use fairstream_media::stream::CLOCK_RATE;
use fairstream_net::recv::ReceivedAccessUnit;
use fairstream_net::send::SourceFrame;
use serde::Serialize;

/// The quality of one run's video.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Quality {
    /// The frames the sender encoded (the reference's length).
    pub(super) frames: usize,
    /// Frames the decoder did not produce: lost, or dropped by the sender
    /// as late; the previous picture stands in.
    pub(super) frames_repeated: usize,
    /// Pictures decoded with concealment (or predicted from one).
    pub(super) frames_concealed: u64,
    /// Luma PSNR and SSIM of every frame against the source.
    #[serde(skip)]
    pub(super) per_frame: Vec<FrameQuality>,
    /// Their means.
    pub(super) summary: Option<QualitySummary>,
}

/// The frames as the sender took them from the encoder, before any loss:
/// the quality the encoder reached at the bitrate it was given.
pub(super) fn as_encoded(sent: &[SourceFrame], size: (u32, u32)) -> anyhow::Result<Quality> {
    let units = sent
        .iter()
        .map(|frame| {
            (
                usize::try_from(frame.index).unwrap_or(usize::MAX),
                annex_b(&frame.nal_units),
            )
        })
        .collect();
    measure(units, sent.len(), size)
}

/// What the receiver wrote, each access unit placed at the frame its RTP
/// timestamp names; `frames` is how many the sender encoded.
pub(super) fn as_received(
    units: &[ReceivedAccessUnit],
    frames: usize,
    size: (u32, u32),
    fps: f64,
) -> anyhow::Result<Quality> {
    let units = units
        .iter()
        .map(|unit| {
            // `fairstream send` stamps frame i with i/fps seconds.
            let index = (f64::from(unit.rtp_timestamp) * fps / CLOCK_RATE).round() as usize;
            (index, annex_b(&unit.nal_units))
        })
        .collect();
    measure(units, frames, size)
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
/// with the generated source of `size`.
fn measure(
    mut units: Vec<(usize, Vec<u8>)>,
    frames: usize,
    size: (u32, u32),
) -> anyhow::Result<Quality> {
    let generator = Generator::new(size.0, size.1)
        .with_context(|| format!("picture size {}x{}", size.0, size.1))?;
    units.retain(|(index, _)| *index < frames);
    let mut decoder = Decoder::new(DEFAULT_CONCEALMENT).context("cannot start the decoder")?;
    let (decoded, frames_repeated) = decode_aligned(
        &mut decoder,
        units.iter().map(|(i, b)| (*i, b.as_slice())),
        frames,
        size,
    )
    .context("cannot decode the received video")?;
    let per_frame = decoded
        .iter()
        .enumerate()
        .map(|(index, picture)| {
            let reference = generator.frame(index as u64);
            let mse = mse_y(&reference, picture)
                .with_context(|| format!("frame {index} has another size than the source"))?;
            let ssim = ssim_y(&reference, picture).unwrap_or(f64::NAN);
            Ok(FrameQuality {
                mse,
                psnr_db: psnr_from_mse(mse),
                ssim,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Quality {
        frames,
        frames_repeated,
        frames_concealed: decoder.concealed(),
        summary: summarise(&per_frame),
        per_frame,
    })
}
