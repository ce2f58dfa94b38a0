//! RTP/H.264 packets (in session order) back into access units, with the
//! losses the receiver can see: sequence gaps inside a frame (a damaged
//! frame, counted by its type when a slice header survived) and whole
//! frames missing between two RTP timestamps (type unknown).

use fairstream_media::h264::incremental::ParameterSets;
use fairstream_media::h264::FrameType;
use fairstream_media::playout::ByType;
use fairstream_media::stream::{CLOCK_RATE, PAYLOAD_TYPE};
use fairstream_proto::wire::h264::{Depacketized, Depacketizer, DepacketizerConfig};
use fairstream_proto::wire::rtp::RtpRepr;
use serde::Serialize;

/// The most bytes one access unit may gather (a peer cannot grow it more).
const MAX_ACCESS_UNIT_BYTES: usize = 16 << 20;

/// Frames lost, by type, as far as the receiver can tell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LostByType {
    /// Damaged frames whose type a surviving slice header told.
    #[serde(flatten)]
    pub by_type: ByType,
    /// Frames missing whole, or damaged without a readable slice header.
    pub unknown: u64,
}

/// A completed access unit.
#[derive(Debug)]
pub struct Completed {
    /// Its RTP timestamp, extended past wrap-around.
    pub(super) timestamp: i64,
    /// Its NAL units.
    pub nal_units: Vec<Vec<u8>>,
    /// Its type and whether it is an IDR picture, when a slice header
    /// told them.
    pub(super) kind: Option<(FrameType, bool)>,
}

/// Collects NAL units into access units.
#[derive(Debug)]
pub struct Assembler {
    depacketizer: Depacketizer,
    current: Option<(i64, Vec<Vec<u8>>, bool, usize)>,
    last_timestamp: Option<u32>,
    /// The RTP timestamp the extended ones count from.
    first_timestamp: Option<u32>,
    extended: i64,
    previous_completed: Option<i64>,
    /// The smallest positive step between two frames' timestamps.
    frame_step: Option<i64>,
    parameter_sets: ParameterSets,
    /// Frames lost by type.
    pub(super) lost: LostByType,
    /// Frames whole and complete.
    pub(super) frames_complete: u64,
    /// Frames with some packets lost.
    pub(super) frames_damaged: u64,
    /// RTP packets that were not H.264 of this stream.
    pub(super) foreign_packets: u64,
}

impl Default for Assembler {
    fn default() -> Self {
        Assembler::new()
    }
}

impl Assembler {
    /// An empty assembler.
    pub fn new() -> Assembler {
        Assembler {
            depacketizer: Depacketizer::new(DepacketizerConfig::default()),
            current: None,
            last_timestamp: None,
            first_timestamp: None,
            extended: 0,
            previous_completed: None,
            frame_step: None,
            parameter_sets: ParameterSets::default(),
            lost: LostByType::default(),
            frames_complete: 0,
            frames_damaged: 0,
            foreign_packets: 0,
        }
    }

    /// The parameter sets seen.
    pub(super) fn parameter_sets(&self) -> &ParameterSets {
        &self.parameter_sets
    }

    /// The frame interval seen, seconds.
    pub(super) fn frame_interval_s(&self) -> Option<f64> {
        self.frame_step.map(|s| s as f64 / CLOCK_RATE)
    }

    /// Missing packets the depacketizer saw.
    pub(super) fn missing_packets(&self) -> u64 {
        self.depacketizer.stats().missing_packets
    }

    /// The RTP timestamp of an extended one (as the sender wrote it).
    pub(super) fn rtp_timestamp(&self, extended: i64) -> u32 {
        // Wrapping back to 32 bits is the point: RTP timestamps wrap.
        self.first_timestamp
            .unwrap_or(0)
            .wrapping_add(extended as u32)
    }

    /// Takes one RTP packet; returns the access units it completed.
    pub fn push(&mut self, packet: &[u8]) -> Vec<Completed> {
        let mut done = Vec::new();
        let Ok(rtp) = RtpRepr::parse_bytes(packet) else {
            self.foreign_packets += 1;
            return done;
        };
        if rtp.payload_type != PAYLOAD_TYPE {
            self.foreign_packets += 1;
            return done;
        }
        let timestamp = self.extend(rtp.timestamp);
        if self.current.as_ref().is_some_and(|c| c.0 != timestamp) {
            // A new frame began before the last one's marker: it lost its end.
            if let Some(c) = self.current.as_mut() {
                c.2 = true;
            }
            done.extend(self.complete());
        }
        let current = self
            .current
            .get_or_insert_with(|| (timestamp, Vec::new(), false, 0));
        let mut ended = false;
        let _ = self.depacketizer.push(
            rtp.sequence_number,
            rtp.marker,
            rtp.payload,
            |out| match out {
                Depacketized::Nal {
                    data,
                    end_of_access_unit,
                } => {
                    if current.3 + data.len() <= MAX_ACCESS_UNIT_BYTES {
                        current.3 += data.len();
                        current.1.push(data.to_vec());
                    } else {
                        current.2 = true;
                    }
                    ended |= end_of_access_unit;
                }
                Depacketized::Gap { .. } | Depacketized::Discarded { .. } => current.2 = true,
            },
        );
        if rtp.marker || ended {
            done.extend(self.complete());
        }
        done
    }

    /// The end of the stream: the access unit in progress, if any.
    pub fn finish(&mut self) -> Vec<Completed> {
        let mut done = Vec::new();
        let mut tail = Vec::new();
        self.depacketizer.finish(|out| {
            if let Depacketized::Nal { data, .. } = out {
                tail.push(data.to_vec());
            }
        });
        if let Some(current) = self.current.as_mut() {
            current.1.extend(tail);
            current.2 = true;
        }
        done.extend(self.complete());
        done
    }

    fn extend(&mut self, timestamp: u32) -> i64 {
        if let Some(last) = self.last_timestamp {
            self.extended += i64::from(timestamp.wrapping_sub(last) as i32);
        }
        self.last_timestamp = Some(timestamp);
        self.first_timestamp.get_or_insert(timestamp);
        self.extended
    }

    fn complete(&mut self) -> Option<Completed> {
        let (timestamp, nal_units, damaged, _) = self.current.take()?;
        if let Some(previous) = self.previous_completed {
            let step = timestamp - previous;
            if step > 0 {
                if let Some(known) = self.frame_step {
                    // Whole frames missing between the two.
                    let frames = (step as f64 / known as f64).round() as i64;
                    if frames > 1 {
                        self.lost.unknown += (frames - 1) as u64;
                    }
                }
                self.frame_step = Some(self.frame_step.map_or(step, |s| s.min(step)));
            }
        }
        self.previous_completed = Some(timestamp);
        let slices: Vec<&[u8]> = nal_units.iter().map(Vec::as_slice).collect();
        let kind = self.parameter_sets.classify(&slices);
        if damaged {
            self.frames_damaged += 1;
            match kind {
                Some((frame_type, _)) => self.lost.by_type.add(frame_type, 1),
                None => self.lost.unknown += 1,
            }
        } else {
            self.frames_complete += 1;
        }
        Some(Completed {
            timestamp,
            nal_units,
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recv::player::Player;
    use fairstream_proto::time::Instant;
    use fairstream_proto::wire::rtp::CsrcList;

    fn rtp(seq: u16, timestamp: u32, marker: bool, payload: &[u8]) -> Vec<u8> {
        let repr = RtpRepr {
            marker,
            payload_type: PAYLOAD_TYPE,
            sequence_number: seq,
            timestamp,
            ssrc: 1,
            csrcs: CsrcList::new(),
            extension: None,
            payload,
            padding_len: 0,
        };
        let mut bytes = vec![0; repr.buffer_len()];
        repr.emit(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn whole_frames_missing_between_timestamps_are_counted() {
        let mut assembler = Assembler::new();
        let slice = [0x41, 0x9a, 0x00, 0x01];
        let mut done = 0;
        for (seq, frame) in [(0u16, 0u32), (1, 1), (2, 2), (3, 5), (4, 6)] {
            done += assembler.push(&rtp(seq, frame * 3600, true, &slice)).len();
        }
        assert_eq!(done, 5);
        assert_eq!(assembler.lost.unknown, 2);
        assert_eq!(assembler.frames_damaged, 0);
        assert_eq!(assembler.frame_interval_s(), Some(0.04));
    }

    #[test]
    fn the_sender_timestamps_are_given_back_across_wrap_around() {
        let mut assembler = Assembler::new();
        let slice = [0x41, 0x9a, 0x00, 0x01];
        let first = u32::MAX - 3599;
        let mut given = Vec::new();
        for (seq, timestamp) in [(0u16, first), (1, first.wrapping_add(7200))] {
            for unit in assembler.push(&rtp(seq, timestamp, true, &slice)) {
                given.push(assembler.rtp_timestamp(unit.timestamp));
            }
        }
        assert_eq!(given, [first, 3600]);
    }

    #[test]
    fn random_packets_never_panic_and_stay_bounded() {
        let mut assembler = Assembler::new();
        let mut player = Player::new(std::time::Duration::from_millis(500));
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for i in 0..5_000u64 {
            let len = (next() % 300) as usize;
            let payload: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let packet = if i % 3 == 0 {
                payload
            } else {
                rtp(next() as u16, next() as u32, next() % 2 == 0, &payload)
            };
            let now = Instant::from_millis(i);
            for unit in assembler.push(&packet) {
                player.on_frame(now, unit.timestamp as f64 / CLOCK_RATE);
                assert!(
                    unit.nal_units.iter().map(Vec::len).sum::<usize>() <= MAX_ACCESS_UNIT_BYTES
                );
            }
            player.tick(now, false);
        }
        assembler.finish();
        assert!(assembler.foreign_packets > 0);
    }
}
