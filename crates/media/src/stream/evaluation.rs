//! The verdict on a stream: which packets arrived in time (FEC's rebuilt
//! ones included), what the receiver could decode from them, and how it
//! compares with the reference; and the EvalVid files that record a run so
//! that `fairstream evaluate` can reach the same verdict from them.
//!
//! The simulator judges its own record with [`evaluate_with_fec`];
//! `fairstream evaluate` reads the files back through [`evaluate_dumps`],
//! which rebuilds the same record and calls the same function. The dumps'
//! times are written so that they read back to the same `f64`
//! ([`crate::evalvid::format_dump`]), so the two verdicts are equal.

use std::collections::BTreeMap;

use fairstream_proto::wire::h264::{Depacketized, Depacketizer, DepacketizerConfig};
use fairstream_proto::wire::rtp::RtpRepr;

use super::{
    parity_packets, FecParams, MediaPacket, MediaReport, MediaStream, Reception, Reference,
    SendTimes, StreamError, FEC_HEADER_BYTES, RTP_HEADER_BYTES,
};
use crate::codec::{decode_aligned, Decoder};
use crate::evalvid::{DumpPacket, TraceFrame};
use crate::playout::{play_out, FrameArrivals, PacketArrival, Playback};
use crate::quality::{compare, summarise};
use crate::yuv::Frame;

/// Judges what arrived: plays the stream out as `playback` says (a
/// [`StartupDelay`](crate::playout::StartupDelay) alone is the drop model
/// with that delay), rebuilds the frames from the packets that came in
/// time, decodes them with concealment
/// and compares them with the reference.
pub fn evaluate(
    stream: &MediaStream,
    packets: &[MediaPacket],
    sent: &SendTimes,
    reception: &Reception,
    playback: impl Into<Playback>,
) -> Result<MediaReport, StreamError> {
    evaluate_with_fec(stream, packets, sent, reception, playback, None)
}

/// The data packets FEC can rebuild: for each block with a loss and at
/// least k of its n packets, the lost ones, arriving when the k-th earliest
/// of the block's packets did.
fn recover_with_fec(
    packets: &[MediaPacket],
    sent: &SendTimes,
    reception: &Reception,
    fec: FecParams,
) -> Result<BTreeMap<u64, (f64, Vec<u8>)>, StreamError> {
    let code =
        crate::fec::FecCode::new(fec.n, fec.k).map_err(|e| StreamError::Invalid(e.to_string()))?;
    let mut recovered = BTreeMap::new();
    for (block, chunk) in packets.chunks(fec.k).enumerate() {
        let block = block as u64;
        if chunk.iter().all(|p| reception.arrivals.contains_key(&p.id)) {
            continue;
        }
        let mut times: Vec<f64> = Vec::new();
        let data: Vec<Option<Vec<u8>>> = (0..fec.k)
            .map(|i| match chunk.get(i) {
                // A short last block: the missing packets are known empty.
                None => Some(Vec::new()),
                Some(p) => reception.arrivals.get(&p.id).map(|(t, b)| {
                    times.push(*t);
                    b.clone()
                }),
            })
            .collect();
        let parity: Vec<Option<Vec<u8>>> = (0..fec.n - fec.k)
            .map(|j| {
                reception.parity.get(&(block, j as u8)).map(|(t, b)| {
                    times.push(*t);
                    b.clone()
                })
            })
            .collect();
        let Ok(rebuilt) = code.recover(&data, &parity) else {
            continue;
        };
        let short = fec.k - chunk.len();
        times.sort_by(f64::total_cmp);
        let Some(&ready) = times.get(fec.k.saturating_sub(short + 1)) else {
            continue;
        };
        for (packet, bytes) in chunk.iter().zip(rebuilt) {
            if !reception.arrivals.contains_key(&packet.id) && sent.contains_key(&packet.id) {
                recovered.insert(packet.id, (ready, bytes));
            }
        }
    }
    Ok(recovered)
}

/// [`evaluate`], with the stream protected by FEC (`fec`): lost packets a
/// block's parity can rebuild count as arrived when it could.
pub fn evaluate_with_fec(
    stream: &MediaStream,
    packets: &[MediaPacket],
    sent: &SendTimes,
    reception: &Reception,
    playback: impl Into<Playback>,
    fec: Option<FecParams>,
) -> Result<MediaReport, StreamError> {
    let recovered = match fec {
        Some(fec) => recover_with_fec(packets, sent, reception, fec)?,
        None => BTreeMap::new(),
    };
    let packets_recovered_by_fec = recovered.len() as u64;
    let mut all = reception.arrivals.clone();
    all.extend(recovered);
    let reception = &Reception {
        arrivals: all,
        ..Reception::default()
    };
    let mut arrivals: Vec<FrameArrivals> = stream
        .frames
        .iter()
        .map(|f| FrameArrivals {
            frame_type: f.frame_type,
            packets: Vec::new(),
        })
        .collect();
    let mut dropped_frames = vec![true; stream.frames.len()];
    for packet in packets {
        let Some(&sent_s) = sent.get(&packet.id) else {
            continue;
        };
        if let Some(slot) = dropped_frames.get_mut(packet.frame) {
            *slot = false;
        }
        if let Some(frame) = arrivals.get_mut(packet.frame) {
            frame.packets.push(PacketArrival {
                sent_s,
                arrived_s: reception.arrivals.get(&packet.id).map(|(t, _)| *t),
            });
        }
    }
    let playout = play_out(&arrivals, stream.fps, playback);
    let frames_dropped_by_sender = dropped_frames.iter().filter(|d| **d).count() as u64;
    let Some(size) = stream.picture_size.filter(|_| stream.has_payload()) else {
        return Ok(MediaReport {
            playout,
            quality: None,
            frames_dropped_by_sender,
            frames_repeated: 0,
            packets_recovered_by_fec,
            frame_quality: Vec::new(),
        });
    };
    // Rebuild each frame from its in-time packets, in sequence order.
    let mut units: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut by_frame: BTreeMap<usize, Vec<&MediaPacket>> = BTreeMap::new();
    for packet in packets {
        by_frame.entry(packet.frame).or_default().push(packet);
    }
    for (frame, frame_packets) in by_frame {
        let Some(deadline) = playout.frames.get(frame).map(|f| f.deadline_s) else {
            continue;
        };
        let mut depacketizer = Depacketizer::new(DepacketizerConfig::default());
        let mut bytes = Vec::new();
        for packet in frame_packets {
            let Some((time, data)) = reception.arrivals.get(&packet.id) else {
                continue;
            };
            if *time > deadline + 1e-12 {
                continue;
            }
            let Ok(repr) = RtpRepr::parse_bytes(data) else {
                continue;
            };
            let _ = depacketizer.push(repr.sequence_number, repr.marker, repr.payload, |out| {
                if let Depacketized::Nal { data, .. } = out {
                    bytes.extend_from_slice(&[0, 0, 0, 1]);
                    bytes.extend_from_slice(data);
                }
            });
        }
        depacketizer.finish(|out| {
            if let Depacketized::Nal { data, .. } = out {
                bytes.extend_from_slice(&[0, 0, 0, 1]);
                bytes.extend_from_slice(data);
            }
        });
        if !bytes.is_empty() {
            units.push((frame, bytes));
        }
    }
    let mut decoder = Decoder::new(crate::codec::DEFAULT_CONCEALMENT)?;
    let (decoded, repeats) = decode_aligned(
        &mut decoder,
        units.iter().map(|(i, b)| (*i, b.as_slice())),
        stream.frames.len(),
        size,
    )?;
    let reference: Vec<Frame> = match &stream.reference {
        Reference::Generated(generator) => (0..stream.frames.len())
            .map(|n| generator.frame(n as u64))
            .collect(),
        Reference::Decoded(frames) => frames.clone(),
        Reference::None => Vec::new(),
    };
    let frame_quality =
        compare(&reference, &decoded).map_err(|e| StreamError::Invalid(e.to_string()))?;
    Ok(MediaReport {
        playout,
        quality: summarise(&frame_quality),
        frames_dropped_by_sender,
        frames_repeated: repeats as u64,
        packets_recovered_by_fec,
        frame_quality,
    })
}

/// EvalVid's `st`, `sd` and `rd` files for a run: the sender trace (frame,
/// type, size, packets, first send time), and the packet dumps.
pub fn evalvid_files(
    stream: &MediaStream,
    packets: &[MediaPacket],
    sent: &SendTimes,
    reception: &Reception,
) -> (String, String, String) {
    let mut first_send: BTreeMap<usize, (f64, u32)> = BTreeMap::new();
    let mut sd = Vec::new();
    let mut rd = Vec::new();
    for packet in packets {
        let Some(&time_s) = sent.get(&packet.id) else {
            continue;
        };
        let entry = first_send.entry(packet.frame).or_insert((time_s, 0));
        entry.0 = entry.0.min(time_s);
        entry.1 += 1;
        let size_bytes = packet.bytes.len() as u64;
        sd.push(DumpPacket {
            time_s,
            id: packet.id,
            size_bytes,
        });
        if let Some((arrived, _)) = reception.arrivals.get(&packet.id) {
            rd.push(DumpPacket {
                time_s: *arrived,
                id: packet.id,
                size_bytes,
            });
        }
    }
    let trace: Vec<TraceFrame> = stream
        .frames
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let (send_time_s, packets) = *first_send.get(&i)?;
            Some(TraceFrame {
                number: i as u64 + 1,
                frame_type: f.frame_type,
                size_bytes: f.size_bytes,
                packets,
                send_time_s,
            })
        })
        .collect();
    rd.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    (
        crate::evalvid::format_sender_trace(&trace),
        crate::evalvid::format_dump(&sd),
        crate::evalvid::format_dump(&rd),
    )
}

/// The receiver dump of the FEC parity packets that arrived (the `rd_fec`
/// file beside EvalVid's `rd`), in the same line format: the packet id is
/// the parity packet's number in sending order, block·(n − k) + index, as
/// [`parity_packets`] numbers them. Empty without FEC.
pub fn parity_dump(reception: &Reception, fec: Option<FecParams>) -> String {
    let Some(fec) = fec else {
        return String::new();
    };
    let per_block = (fec.n - fec.k) as u64;
    let mut dump: Vec<DumpPacket> = reception
        .parity
        .iter()
        .map(|(&(block, index), (time_s, shard))| DumpPacket {
            time_s: *time_s,
            id: block * per_block + u64::from(index),
            size_bytes: (RTP_HEADER_BYTES + FEC_HEADER_BYTES + shard.len()) as u64,
        })
        .collect();
    dump.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    crate::evalvid::format_dump(&dump)
}

/// The packet dumps of a run, as `fairstream evaluate` reads them.
#[derive(Clone, Copy, Debug)]
pub struct ReceivedDumps<'a> {
    /// EvalVid's sender dump `sd`: when each data packet was sent.
    pub sent: &'a [DumpPacket],
    /// EvalVid's receiver dump `rd`: when each data packet arrived.
    pub received: &'a [DumpPacket],
    /// The parity packets that arrived ([`parity_dump`]); empty without
    /// FEC.
    pub parity_received: &'a [DumpPacket],
}

/// The verdict on a run from its dumps: `packets` (the stream packetized
/// as the sender did) and the parity packets RS(n, k) makes of them
/// (`fec`) are given the times the dumps record, and [`evaluate_with_fec`]
/// judges them — the function the simulator judges its own record with.
pub fn evaluate_dumps(
    stream: &MediaStream,
    packets: &[MediaPacket],
    dumps: ReceivedDumps<'_>,
    fec: Option<FecParams>,
    playback: impl Into<Playback>,
) -> Result<MediaReport, StreamError> {
    let sent: SendTimes = dumps.sent.iter().map(|p| (p.id, p.time_s)).collect();
    let limit = packets.len().saturating_add(1);
    let mut reception = Reception::new();
    for arrival in dumps.received {
        let packet = usize::try_from(arrival.id)
            .ok()
            .and_then(|i| packets.get(i))
            .ok_or_else(|| {
                StreamError::Invalid(format!(
                    "the receiver dump names packet {}, but the stream has {} packets",
                    arrival.id,
                    packets.len()
                ))
            })?;
        reception
            .arrivals
            .insert(packet.id, (arrival.time_s, packet.bytes.clone()));
        reception.highest = Some(reception.highest.map_or(packet.id, |h| h.max(packet.id)));
    }
    if !dumps.parity_received.is_empty() {
        let Some(fec) = fec else {
            return Err(StreamError::Invalid(
                "parity packets arrived, but no FEC code (n, k) was given".into(),
            ));
        };
        let parity = parity_packets(packets, fec)?;
        for arrival in dumps.parity_received {
            let packet = usize::try_from(arrival.id)
                .ok()
                .and_then(|i| parity.get(i))
                .ok_or_else(|| {
                    StreamError::Invalid(format!(
                        "the parity dump names parity packet {}, but RS({}, {}) over the \
                         stream makes {}",
                        arrival.id,
                        fec.n,
                        fec.k,
                        parity.len()
                    ))
                })?;
            reception.on_datagram(arrival.time_s, &packet.bytes, limit.max(parity.len()));
        }
    }
    evaluate_with_fec(stream, packets, &sent, &reception, playback, fec)
}
