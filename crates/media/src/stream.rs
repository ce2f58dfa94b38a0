//! A media stream end to end, independent of the network that carries it:
//! the frames of a source, their RTP packets (RFC 3550 with the H.264
//! payload format of RFC 6184: one NAL unit a packet when it fits, FU-A
//! fragments otherwise), what the receiver got, and the verdict — playout
//! (late packets, stalls, start-up delay) and quality (PSNR, SSIM, MOS
//! against the reference, after a concealing decode).
//!
//! Sources: the built-in [`Generator`] encoded by OpenH264, an H.264 Annex B
//! file, or an EvalVid sender trace (sizes only: packets carry zero bytes
//! and no quality can be measured).

use std::collections::BTreeMap;

use fairstream_proto::wire::rtp::{sequence_delta, CsrcList, RtpRepr};
use serde::Serialize;

use crate::codec::{decode_aligned, CodecError, Decoder, Encoder, EncoderSettings};
use crate::evalvid::TraceFrame;
use crate::generator::Generator;
use crate::h264::{parse_stream, FrameType, H264Error};
use crate::playout::PlayoutReport;
use crate::quality::{FrameQuality, QualitySummary};
use crate::yuv::Frame;

mod evaluation;
mod packetizer;
mod parity;
pub use evaluation::{
    evaluate, evaluate_dumps, evaluate_with_fec, evalvid_files, parity_dump, ReceivedDumps,
};
pub use packetizer::{rtp_timestamp, FramePacketizer};
pub use parity::{parity_rtp_packet, parse_parity, ParityHeader, PARITY_OVERHEAD};

/// The RTP payload type used for H.264 (dynamic range).
pub const PAYLOAD_TYPE: u8 = 96;
/// The RTP clock rate of video (RFC 6184 §8.2.1: 90 kHz).
pub const CLOCK_RATE: f64 = 90_000.0;
/// Bytes of an RTP header without CSRCs or extension.
pub const RTP_HEADER_BYTES: usize = 12;
const SSRC: u32 = 0x4641_4952; // "FAIR"
/// The RTP payload type of FEC parity packets (dynamic range).
pub const FEC_PAYLOAD_TYPE: u8 = 97;
/// Bytes of the parity header inside the RTP payload: block (4), index,
/// k, n (1 each).
const FEC_HEADER_BYTES: usize = 7;

/// Why a stream could not be made or judged.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The source is not usable H.264.
    #[error(transparent)]
    H264(#[from] H264Error),
    /// The codec failed.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// Bad parameters.
    #[error("{0}")]
    Invalid(String),
}

/// One frame of a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamFrame {
    /// Its type.
    pub frame_type: FrameType,
    /// Whether it is an IDR frame.
    pub idr: bool,
    /// Its NAL units (no start codes); empty for a trace source.
    pub nal_units: Vec<Vec<u8>>,
    /// Its size in bytes.
    pub size_bytes: u64,
    /// Packets a trace source says it was sent in (0 for other sources).
    pub trace_packets: u32,
}

/// What frames are compared with.
#[derive(Clone, Debug)]
enum Reference {
    /// The generator's frames (the encoder's input).
    Generated(Generator),
    /// The loss-free decode of the source.
    Decoded(Vec<Frame>),
    /// No payload: no quality.
    None,
}

/// A source's frames, ready to send.
#[derive(Clone, Debug)]
pub struct MediaStream {
    fps: f64,
    frames: Vec<StreamFrame>,
    picture_size: Option<(u32, u32)>,
    reference: Reference,
}

/// One RTP packet of a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaPacket {
    /// Its number in the stream, from 0 (the RTP sequence number is its low
    /// 16 bits).
    pub id: u64,
    /// The frame it belongs to.
    pub frame: usize,
    /// The whole RTP packet.
    pub bytes: Vec<u8>,
}

/// Packet-level FEC of a stream: RS(n, k) over each run of k data packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FecParams {
    /// Packets a block, data and parity.
    pub n: usize,
    /// Data packets a block.
    pub k: usize,
}

/// A parity packet, sent after the last data packet of its block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParityPacket {
    /// The block (data packets `block·k .. block·k + k`).
    pub block: u64,
    /// Its index among the block's n − k parity packets.
    pub index: u8,
    /// The data packet after which it is sent.
    pub after: u64,
    /// The whole RTP packet.
    pub bytes: Vec<u8>,
}

/// The parity packets of `packets` (a stream's data packets, in order).
pub fn parity_packets(
    packets: &[MediaPacket],
    fec: FecParams,
) -> Result<Vec<ParityPacket>, StreamError> {
    let code =
        crate::fec::FecCode::new(fec.n, fec.k).map_err(|e| StreamError::Invalid(e.to_string()))?;
    let mut out = Vec::new();
    let mut seq = 0u16;
    for (block, chunk) in packets.chunks(fec.k).enumerate() {
        let refs: Vec<&[u8]> = chunk.iter().map(|p| p.bytes.as_slice()).collect();
        let parity = code
            .encode(&refs)
            .map_err(|e| StreamError::Invalid(e.to_string()))?;
        let Some(last) = chunk.last() else { continue };
        let timestamp = RtpRepr::parse_bytes(&last.bytes)
            .map(|r| r.timestamp)
            .unwrap_or(0);
        for (index, shard) in parity.into_iter().enumerate() {
            let header = ParityHeader {
                block: block as u32,
                index: index as u8,
                k: fec.k as u8,
                n: fec.n as u8,
            };
            let bytes = parity_rtp_packet(header, seq, timestamp, &shard)?;
            seq = seq.wrapping_add(1);
            out.push(ParityPacket {
                block: block as u64,
                index: index as u8,
                after: last.id,
                bytes,
            });
        }
    }
    Ok(out)
}

/// One RTP packet of the stream's SSRC.
fn rtp_packet(
    marker: bool,
    payload_type: u8,
    sequence_number: u16,
    timestamp: u32,
    payload: &[u8],
) -> Result<Vec<u8>, StreamError> {
    let repr = RtpRepr {
        marker,
        payload_type,
        sequence_number,
        timestamp,
        ssrc: SSRC,
        csrcs: CsrcList::new(),
        extension: None,
        payload,
        padding_len: 0,
    };
    let mut bytes = vec![0; repr.buffer_len()];
    repr.emit(&mut bytes)
        .map_err(|e| StreamError::Invalid(e.to_string()))?;
    Ok(bytes)
}

fn check_fps(fps: f64) -> Result<(), StreamError> {
    if fps > 0.0 && fps <= 240.0 {
        Ok(())
    } else {
        Err(StreamError::Invalid(format!(
            "frame rate {fps} is outside (0, 240]"
        )))
    }
}

impl MediaStream {
    /// `frames` frames of generated `width`×`height` content encoded with
    /// `settings`.
    pub fn generated(
        width: u32,
        height: u32,
        frames: usize,
        settings: EncoderSettings,
    ) -> Result<MediaStream, StreamError> {
        check_fps(f64::from(settings.fps))?;
        let generator =
            Generator::new(width, height).map_err(|e| StreamError::Invalid(e.to_string()))?;
        let mut encoder = Encoder::new(settings)?;
        let mut stream = Vec::new();
        for n in 0..frames {
            stream.extend(encoder.encode(&generator.frame(n as u64))?);
        }
        let mut parsed = MediaStream::from_annex_b(&stream, f64::from(settings.fps))?;
        if parsed.frames.len() != frames {
            return Err(StreamError::Invalid(format!(
                "the encoder produced {} frames for {frames}",
                parsed.frames.len()
            )));
        }
        parsed.reference = Reference::Generated(generator);
        Ok(parsed)
    }

    /// The frames of an Annex B stream at `fps`; the reference is its
    /// loss-free decode.
    pub fn from_annex_b(bytes: &[u8], fps: f64) -> Result<MediaStream, StreamError> {
        check_fps(fps)?;
        let report = parse_stream(bytes)?;
        let frames: Vec<StreamFrame> = report
            .access_units
            .iter()
            .map(|au| StreamFrame {
                frame_type: au.frame_type.unwrap_or(FrameType::P),
                idr: au.idr,
                nal_units: au
                    .nal_units
                    .iter()
                    .map(|n| bytes[n.range.clone()].to_vec())
                    .collect(),
                size_bytes: au.size_bytes() as u64,
                trace_packets: 0,
            })
            .collect();
        let size = report
            .picture_size
            .ok_or_else(|| StreamError::Invalid("no sequence parameter set".into()))?;
        let mut stream = MediaStream {
            fps,
            frames,
            picture_size: Some(size),
            reference: Reference::None,
        };
        let mut decoder = Decoder::new(crate::codec::DEFAULT_CONCEALMENT)?;
        let units: Vec<(usize, Vec<u8>)> = (0..stream.frames.len())
            .map(|i| (i, stream.frame_bytes(i, |_| true)))
            .collect();
        let (decoded, _) = decode_aligned(
            &mut decoder,
            units.iter().map(|(i, b)| (*i, b.as_slice())),
            stream.frames.len(),
            size,
        )?;
        stream.reference = Reference::Decoded(decoded);
        Ok(stream)
    }

    /// A payload-less stream from an EvalVid sender trace at `fps`.
    pub fn from_trace(trace: &[TraceFrame], fps: f64) -> Result<MediaStream, StreamError> {
        check_fps(fps)?;
        Ok(MediaStream {
            fps,
            frames: trace
                .iter()
                .map(|f| StreamFrame {
                    frame_type: f.frame_type,
                    idr: f.frame_type == FrameType::I,
                    nal_units: Vec::new(),
                    size_bytes: f.size_bytes,
                    trace_packets: f.packets.max(1),
                })
                .collect(),
            picture_size: None,
            reference: Reference::None,
        })
    }

    /// The first `frames` frames only (all of them if there are fewer).
    #[must_use]
    pub fn truncated(mut self, frames: usize) -> MediaStream {
        self.frames.truncate(frames);
        if let Reference::Decoded(decoded) = &mut self.reference {
            decoded.truncate(frames);
        }
        self
    }

    /// The same stream judged against `frames` (raw reference video, one
    /// frame per stream frame).
    pub fn with_reference_frames(mut self, frames: Vec<Frame>) -> Result<MediaStream, StreamError> {
        if frames.len() != self.frames.len() {
            return Err(StreamError::Invalid(format!(
                "the reference has {} frames and the stream {}",
                frames.len(),
                self.frames.len()
            )));
        }
        if let Some(first) = frames.first() {
            let size = (first.width(), first.height());
            if self.picture_size.is_some_and(|s| s != size) {
                return Err(StreamError::Invalid(format!(
                    "the reference is {}x{}, the stream {:?}",
                    size.0, size.1, self.picture_size
                )));
            }
        }
        self.reference = Reference::Decoded(frames);
        Ok(self)
    }

    /// The same stream judged against `other`'s reference (the loss-free
    /// decode of another encoding of the same content).
    pub fn with_reference_of(self, other: &MediaStream) -> Result<MediaStream, StreamError> {
        match &other.reference {
            Reference::Decoded(frames) => self.with_reference_frames(frames.clone()),
            Reference::Generated(generator) => {
                let frames = (0..self.frames.len())
                    .map(|n| generator.frame(n as u64))
                    .collect();
                self.with_reference_frames(frames)
            }
            Reference::None => Err(StreamError::Invalid(
                "the reference stream carries no video".into(),
            )),
        }
    }

    /// The stream as an Annex B byte stream (empty for a trace source).
    pub fn annex_b(&self) -> Vec<u8> {
        (0..self.frames.len())
            .flat_map(|i| self.frame_bytes(i, |_| true))
            .collect()
    }

    /// Frames per second.
    pub fn fps(&self) -> f64 {
        self.fps
    }

    /// The frames.
    pub fn frames(&self) -> &[StreamFrame] {
        &self.frames
    }

    /// Whether quality can be measured (the stream carries video).
    pub fn has_payload(&self) -> bool {
        !matches!(self.reference, Reference::None)
    }

    /// Frame `index` as Annex B bytes, with the NAL units `keep` selects.
    fn frame_bytes(&self, index: usize, keep: impl Fn(usize) -> bool) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(frame) = self.frames.get(index) {
            for (i, nal) in frame.nal_units.iter().enumerate() {
                if keep(i) {
                    out.extend_from_slice(&[0, 0, 0, 1]);
                    out.extend_from_slice(nal);
                }
            }
        }
        out
    }

    /// The stream as RTP packets of at most `max_packet` bytes (RTP header
    /// included), in sending order.
    pub fn packetize(&self, max_packet: usize) -> Result<Vec<MediaPacket>, StreamError> {
        let mut packetizer = FramePacketizer::new(max_packet)?;
        let mut packets = Vec::new();
        for (index, frame) in self.frames.iter().enumerate() {
            let timestamp = rtp_timestamp(index as u64, self.fps);
            let frame_packets = if frame.nal_units.is_empty() {
                // A trace frame: its size spread over its packets, zeros.
                let count = u64::from(frame.trace_packets.max(1));
                let mut left = frame.size_bytes;
                let mut payloads: Vec<Vec<u8>> = Vec::new();
                for i in 0..count {
                    let share = left / (count - i);
                    left -= share;
                    payloads.push(vec![0; (share as usize).min(packetizer.max_payload())]);
                }
                packetizer.packets(timestamp, payloads)?
            } else {
                packetizer.packetize(timestamp, frame.nal_units.iter().map(Vec::as_slice))?
            };
            for bytes in frame_packets {
                let id = packets.len() as u64;
                packets.push(MediaPacket {
                    id,
                    frame: index,
                    bytes,
                });
            }
        }
        Ok(packets)
    }
}

/// The receiver's record: every RTP packet that arrived, by packet number.
#[derive(Clone, Debug, Default)]
pub struct Reception {
    arrivals: BTreeMap<u64, (f64, Vec<u8>)>,
    /// FEC parity packets by (block, index).
    parity: BTreeMap<(u64, u8), (f64, Vec<u8>)>,
    highest: Option<u64>,
    malformed: u64,
    duplicates: u64,
}

impl Reception {
    /// An empty record.
    pub fn new() -> Reception {
        Reception::default()
    }

    /// Records a datagram that arrived at `time_s`. Datagrams that are not
    /// RTP are counted and dropped; at most `limit` packets are kept (a
    /// peer cannot grow the record without bound).
    pub fn on_datagram(&mut self, time_s: f64, bytes: &[u8], limit: usize) {
        let Ok(repr) = RtpRepr::parse_bytes(bytes) else {
            self.malformed += 1;
            return;
        };
        if repr.payload_type == FEC_PAYLOAD_TYPE {
            let header = repr.payload.get(..FEC_HEADER_BYTES);
            let Some(header) = header else {
                self.malformed += 1;
                return;
            };
            let block = u64::from(u32::from_be_bytes([
                header[0], header[1], header[2], header[3],
            ]));
            if self.parity.len() >= limit {
                self.malformed += 1;
                return;
            }
            self.parity.insert(
                (block, header[4]),
                (time_s, repr.payload[FEC_HEADER_BYTES..].to_vec()),
            );
            return;
        }
        let seq = repr.sequence_number;
        // Extend the 16-bit number around the highest seen (RFC 3550 A.1).
        let id = match self.highest {
            None => u64::from(seq),
            Some(highest) => {
                let delta = i64::from(sequence_delta(highest as u16, seq));
                match u64::try_from(highest as i64 + delta) {
                    Ok(id) => id,
                    Err(_) => {
                        self.malformed += 1;
                        return;
                    }
                }
            }
        };
        self.highest = Some(self.highest.map_or(id, |h| h.max(id)));
        if self.arrivals.len() >= limit && !self.arrivals.contains_key(&id) {
            self.malformed += 1;
            return;
        }
        if self.arrivals.insert(id, (time_s, bytes.to_vec())).is_some() {
            self.duplicates += 1;
        }
    }

    /// Packets recorded.
    pub fn len(&self) -> usize {
        self.arrivals.len()
    }

    /// Whether nothing arrived.
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty()
    }

    /// Datagrams that were not RTP of this stream.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }
}

/// The verdict on a stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MediaReport {
    /// Playout: frames, losses by type, stalls, start-up delay, delay.
    #[serde(flatten)]
    pub playout: PlayoutReport,
    /// Quality against the reference; `None` for a payload-less stream.
    #[serde(flatten)]
    pub quality: Option<QualitySummary>,
    /// Frames the sender dropped before sending (live mode).
    pub frames_dropped_by_sender: u64,
    /// Pictures the decoder could not produce, shown as repeats.
    pub frames_repeated: u64,
    /// Lost data packets rebuilt from FEC parity (0 without FEC).
    pub packets_recovered_by_fec: u64,
    /// Per-frame quality, in frame order (empty without payload).
    #[serde(skip)]
    pub frame_quality: Vec<FrameQuality>,
}

/// When each packet was sent (seconds), by packet number; packets never
/// sent (dropped by a live sender) are absent.
pub type SendTimes = BTreeMap<u64, f64>;

#[cfg(test)]
mod tests;
