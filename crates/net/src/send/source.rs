//! Where the sender's frames come from: an H.264 Annex B file (optionally
//! looped), Annex B on standard input, or the built-in generator encoded
//! live by OpenH264 at the session's target bitrate.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};

use fairstream_media::codec::{Encoder, EncoderSettings};
use fairstream_media::generator::Generator;
use fairstream_media::h264::incremental::{AccessUnitSplitter, SplitAccessUnit};
use fairstream_media::temporal::TemporalLayers;

use super::SendError;
use crate::relay::{Popped, RelayBuffer};

/// Access units read ahead of the sender.
const READ_AHEAD_FRAMES: usize = 64;
/// Bytes read at a time.
const CHUNK_BYTES: usize = 64 * 1024;
/// The encoder's bitrate is kept within this range, bits/s (and at most
/// one bit per pixel and frame).
pub const ENCODER_MIN_BPS: u32 = 50_000;
/// See [`ENCODER_MIN_BPS`].
pub const ENCODER_MAX_BPS: u32 = 8_000_000;
/// The share of the allowed rate given to the encoder (the rest is RTP,
/// session and DCCP headers and the rate's own variation).
const ENCODER_SHARE: f64 = 0.85;

/// What the sender sends.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceSpec {
    /// An H.264 Annex B file.
    File(PathBuf),
    /// H.264 Annex B on standard input.
    Stdin,
    /// H.264 Annex B on standard input, of which these first bytes were
    /// already read (by a caller that looked for the stream's frame rate
    /// in them): they are sent first, then the rest of the input.
    StdinAfter(Vec<u8>),
    /// The built-in content, encoded live.
    Generated {
        /// Width in pixels (even).
        width: u32,
        /// Height in pixels (even).
        height: u32,
        /// Frames from one IDR to the next.
        gop: u32,
        /// The bitrate before the first target, bits/s.
        initial_bitrate_bps: u32,
    },
    /// The frames a relay received upstream ([`crate::relay`]), with
    /// their RTP timestamps.
    Relay(RelayBuffer),
    /// A voice call (`voice:g711`, `voice:g729`, `voice:g711:FILE.wav`):
    /// the voice sender makes its own frames.
    Voice(super::VoiceSpec),
}

/// The next frame, if one is ready.
#[derive(Debug)]
pub(super) enum Next {
    /// A frame, the RTP timestamp it keeps (a relayed frame), and its
    /// temporal layer (0 but for generated content of several layers).
    Frame(SplitAccessUnit, Option<u32>, u8),
    /// None yet (the reader is behind).
    NotYet,
    /// The end of the source.
    End,
}

/// A source of access units.
#[derive(Debug)]
pub(super) enum Source {
    /// Read by a thread (files and stdin).
    Reader {
        /// The access units, or what went wrong.
        frames: Receiver<Result<SplitAccessUnit, String>>,
        /// The file's name, or "standard input".
        name: String,
        /// The temporal layers the stream was encoded in, and the frames
        /// read since its last IDR.
        layers: TemporalLayers,
        since_idr: u64,
        /// Frames read.
        read: u64,
    },
    /// Encoded on demand.
    Generated(Box<GeneratedSource>),
    /// Taken from a relay's buffer.
    Relay(RelayBuffer),
    /// None: a voice call's sender makes its frames.
    Idle,
}

/// The generator and its encoder.
#[derive(Debug)]
pub(super) struct GeneratedSource {
    /// The encoder's ceiling: one bit per pixel and frame, at most
    /// [`ENCODER_MAX_BPS`].
    max_bps: f64,
    generator: Generator,
    encoder: Encoder,
    next: u64,
    splitter: AccessUnitSplitter,
    /// Where every encoded frame is also written, and its name.
    save: Option<(File, PathBuf)>,
}

impl Source {
    /// Opens `spec`; `looped` repeats a file; `slice_max` is the largest
    /// slice the encoder makes (so that a slice fits a packet); generated
    /// content is encoded in `layers` temporal layers (and written to
    /// `save` as well), a file's or a pipe's was.
    pub(super) fn open(
        spec: &SourceSpec,
        looped: bool,
        fps: f64,
        slice_max: u32,
        layers: TemporalLayers,
        save: Option<&std::path::Path>,
    ) -> Result<Source, SendError> {
        let reader = |frames, name: String| Source::Reader {
            frames,
            name,
            layers,
            since_idr: 0,
            read: 0,
        };
        match spec {
            SourceSpec::File(path) => {
                let file = File::open(path).map_err(|e| SendError::Source {
                    source_name: path.display().to_string(),
                    reason: e.to_string(),
                })?;
                let reopen = looped.then(|| path.clone());
                Ok(reader(
                    spawn_reader(Box::new(file), reopen),
                    path.display().to_string(),
                ))
            }
            SourceSpec::Relay(buffer) => Ok(Source::Relay(buffer.clone())),
            SourceSpec::Voice(_) => Ok(Source::Idle),
            SourceSpec::Stdin => Ok(reader(
                spawn_reader(Box::new(io::stdin()), None),
                "standard input".into(),
            )),
            SourceSpec::StdinAfter(read_ahead) => Ok(reader(
                spawn_reader(
                    Box::new(io::Cursor::new(read_ahead.clone()).chain(io::stdin())),
                    None,
                ),
                "standard input".into(),
            )),
            SourceSpec::Generated {
                width,
                height,
                gop,
                initial_bitrate_bps,
            } => {
                let generator = Generator::new(*width, *height).map_err(|e| SendError::Source {
                    source_name: "generated".into(),
                    reason: e.to_string(),
                })?;
                let settings = EncoderSettings {
                    bitrate_bps: *initial_bitrate_bps,
                    fps: fps as f32,
                    gop: *gop,
                    slice_max_bytes: Some(slice_max.max(100)),
                };
                let encoder = Encoder::with_temporal_layers(settings, layers).map_err(|e| {
                    SendError::Source {
                        source_name: "generated".into(),
                        reason: e.to_string(),
                    }
                })?;
                let save = save
                    .map(|path| {
                        File::create(path)
                            .map(|file| (file, path.to_path_buf()))
                            .map_err(|e| SendError::Source {
                                source_name: path.display().to_string(),
                                reason: format!("cannot create it to save the stream: {e}"),
                            })
                    })
                    .transpose()?;
                let pixels_per_second = f64::from(*width) * f64::from(*height) * fps;
                Ok(Source::Generated(Box::new(GeneratedSource {
                    max_bps: pixels_per_second
                        .clamp(f64::from(ENCODER_MIN_BPS), f64::from(ENCODER_MAX_BPS)),
                    generator,
                    encoder,
                    next: 0,
                    splitter: AccessUnitSplitter::new(),
                    save,
                })))
            }
        }
    }

    /// The next frame.
    pub(super) fn next(&mut self) -> Result<Next, SendError> {
        match self {
            Source::Reader {
                frames,
                name,
                layers,
                since_idr,
                read,
            } => match frames.try_recv() {
                Ok(Ok(frame)) => {
                    if frame.idr {
                        *since_idr = 0;
                    }
                    let temporal_id = layers.dyadic_id(*since_idr);
                    check_reference(&frame, *layers, temporal_id, *read).map_err(|reason| {
                        SendError::Source {
                            source_name: name.clone(),
                            reason,
                        }
                    })?;
                    *since_idr += 1;
                    *read += 1;
                    Ok(Next::Frame(frame, None, temporal_id))
                }
                Ok(Err(reason)) => Err(SendError::Source {
                    source_name: name.clone(),
                    reason,
                }),
                Err(TryRecvError::Empty) => Ok(Next::NotYet),
                Err(TryRecvError::Disconnected) => Ok(Next::End),
            },
            Source::Generated(generated) => generated
                .encode_next()
                .map(|(frame, temporal_id)| Next::Frame(frame, None, temporal_id)),
            Source::Relay(buffer) => Ok(match buffer.pop() {
                Popped::Frame(frame) => Next::Frame(
                    SplitAccessUnit {
                        // Unknown types are sent as P frames (the
                        // splitter's convention).
                        frame_type: frame
                            .frame_type
                            .unwrap_or(fairstream_media::h264::FrameType::P),
                        idr: frame.idr,
                        nal_units: frame.nal_units,
                    },
                    Some(frame.timestamp),
                    0,
                ),
                Popped::Empty => Next::NotYet,
                Popped::Ended => Next::End,
            }),
            Source::Idle => Ok(Next::End),
        }
    }

    /// The relay buffer this source drains, if it is one.
    pub(super) fn relay(&self) -> Option<&RelayBuffer> {
        match self {
            Source::Relay(buffer) => Some(buffer),
            _ => None,
        }
    }

    /// Follows the session's target bitrate (generated content only);
    /// returns the bitrate set.
    pub(super) fn set_target(&mut self, allowed_bps: f64) -> Result<Option<u32>, SendError> {
        let Source::Generated(generated) = self else {
            return Ok(None);
        };
        let bps = (allowed_bps * ENCODER_SHARE).clamp(f64::from(ENCODER_MIN_BPS), generated.max_bps)
            as u32;
        generated
            .encoder
            .set_bitrate(bps)
            .map_err(|e| SendError::Source {
                source_name: "generated".into(),
                reason: e.to_string(),
            })?;
        Ok(Some(bps))
    }
}

impl GeneratedSource {
    /// The next frame and its temporal layer.
    fn encode_next(&mut self) -> Result<(SplitAccessUnit, u8), SendError> {
        let error = |reason: String| SendError::Source {
            source_name: "generated".into(),
            reason,
        };
        let picture = self.generator.frame(self.next);
        self.next += 1;
        let encoded = self
            .encoder
            .encode_layered(&picture)
            .map_err(|e| error(e.to_string()))?;
        if let Some((file, path)) = &mut self.save {
            file.write_all(&encoded.bytes)
                .map_err(|e| SendError::Source {
                    source_name: path.display().to_string(),
                    reason: format!("cannot save the stream: {e}"),
                })?;
        }
        // One frame's bytes are one access unit.
        let mut units = self
            .splitter
            .push(&encoded.bytes)
            .map_err(|e| error(e.to_string()))?;
        units.extend(self.splitter.finish().map_err(|e| error(e.to_string()))?);
        let mut nal_units = Vec::new();
        let mut frame_type = fairstream_media::h264::FrameType::P;
        let mut idr = false;
        for unit in units {
            frame_type = frame_type.min(unit.frame_type);
            idr |= unit.idr;
            nal_units.extend(unit.nal_units);
        }
        if nal_units.is_empty() {
            return Err(error("the encoder produced no NAL unit".into()));
        }
        let frame = SplitAccessUnit {
            frame_type,
            idr,
            nal_units,
        };
        Ok((frame, encoded.temporal_id))
    }
}

/// A frame of a stream in `layers` temporal layers has the id `temporal_id`
/// by the dyadic pattern; OpenH264 codes the top layer's frames alone as
/// non-references (`nal_ref_idc` 0), so a slice that says otherwise means
/// the stream was not encoded in these layers. `index` names the frame.
fn check_reference(
    frame: &SplitAccessUnit,
    layers: TemporalLayers,
    temporal_id: u8,
    index: u64,
) -> Result<(), String> {
    if layers.count() == 1 {
        return Ok(());
    }
    // The first slice's header byte: forbidden bit, nal_ref_idc, type.
    let Some(header) = frame
        .nal_units
        .iter()
        .filter_map(|nal| nal.first())
        .find(|byte| matches!(*byte & 0x1f, 1 | 5))
    else {
        return Ok(());
    };
    let reference = header & 0x60 != 0;
    if reference == layers.is_reference(temporal_id) {
        return Ok(());
    }
    Err(format!(
        "frame {index} is {} but {} temporal layers make it layer {temporal_id}, {}: was the \
         clip encoded in {} layers (`send generated --layers {} --save CLIP` makes one)?",
        if reference {
            "a reference"
        } else {
            "not a reference"
        },
        layers.count(),
        if reference {
            "not a reference"
        } else {
            "a reference"
        },
        layers.count(),
        layers.count(),
    ))
}

/// Reads `input` on a thread, splitting it into access units; at its end,
/// `reopen` (a looped file) starts it again.
fn spawn_reader(
    input: Box<dyn Read + Send>,
    reopen: Option<PathBuf>,
) -> Receiver<Result<SplitAccessUnit, String>> {
    let (tx, rx) = sync_channel(READ_AHEAD_FRAMES);
    let spawned = std::thread::Builder::new()
        .name("fairstream-source".into())
        .spawn(move || {
            let mut input = input;
            let mut buf = vec![0u8; CHUNK_BYTES];
            loop {
                let mut splitter = AccessUnitSplitter::new();
                let mut frames = 0u64;
                loop {
                    let read = match input.read(&mut buf) {
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            let _ = tx.send(Err(format!("read error: {e}")));
                            return;
                        }
                    };
                    let units = if read == 0 {
                        splitter.finish()
                    } else {
                        splitter.push(buf.get(..read).unwrap_or(&[]))
                    };
                    match units {
                        Ok(units) => {
                            for unit in units {
                                frames += 1;
                                if tx.send(Ok(unit)).is_err() {
                                    return;
                                }
                            }
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e.to_string()));
                            return;
                        }
                    }
                    if read == 0 {
                        break;
                    }
                }
                if frames == 0 {
                    let _ = tx.send(Err("no H.264 access unit in the input".into()));
                    return;
                }
                let Some(path) = &reopen else { return };
                match File::open(path) {
                    Ok(file) => input = Box::new(file),
                    Err(e) => {
                        let _ = tx.send(Err(format!("cannot reopen {}: {e}", path.display())));
                        return;
                    }
                }
            }
        });
    if let Err(e) = spawned {
        let (tx, rx) = sync_channel(1);
        let _ = tx.send(Err(format!("cannot start the reader thread: {e}")));
        return rx;
    }
    rx
}
