//! Reassembly of NAL units from RTP payloads (RFC 6184 non-interleaved mode).

use super::{
    FuAPacket, H264Error, NalHeader, PacketType, StapAPacket, FU_B, MTAP16, MTAP24, STAP_B,
};
use crate::wire::rtp::sequence_delta;

/// Settings of a [`Depacketizer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepacketizerConfig {
    /// The largest NAL unit reassembled from FU-A fragments; a larger one is
    /// dropped, so a peer cannot make the buffer grow without bound.
    /// Default 4 MiB.
    pub max_nal_size: usize,
    /// A packet less than this far behind the expected sequence number is
    /// taken as a duplicate or late packet and ignored; further behind, it is
    /// taken as a forward jump (a gap). Default 100, RFC 3550 A.1's
    /// MAX_MISORDER.
    pub stale_window: u16,
}

impl Default for DepacketizerConfig {
    fn default() -> Self {
        DepacketizerConfig {
            max_nal_size: 4 << 20,
            stale_window: 100,
        }
    }
}

/// Why a [`Depacketizer`] dropped a partly reassembled NAL unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscardReason {
    /// A sequence-number gap: a fragment was lost. RFC 6184 §5.8: "If a
    /// fragmentation unit is lost, the receiver SHOULD discard all following
    /// fragmentation units in transmission order corresponding to the same
    /// fragmented NAL unit."
    Gap,
    /// Another NAL unit began before this one's End fragment.
    MissingEnd,
    /// A middle or End fragment arrived without its Start fragment.
    MissingStart,
    /// A fragment's F/NRI/type did not match the NAL unit being reassembled.
    Inconsistent {
        /// The header of the NAL unit being reassembled.
        expected: NalHeader,
        /// The header the fragment carried.
        got: NalHeader,
    },
    /// The NAL unit grew past [`DepacketizerConfig::max_nal_size`].
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// A malformed packet interrupted the reassembly.
    Malformed,
}

/// What the [`Depacketizer`] hands back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depacketized<'b> {
    /// A whole NAL unit (header octet first, no start code).
    Nal {
        /// The NAL unit.
        data: &'b [u8],
        /// The RTP marker bit was set on the packet that completed it: the
        /// last NAL unit of an access unit (for a STAP-A, only its last unit).
        end_of_access_unit: bool,
    },
    /// RTP packets from `expected` up to (not including) `received` never
    /// arrived; whatever they carried is lost.
    Gap {
        /// The first missing sequence number.
        expected: u16,
        /// The sequence number that arrived instead.
        received: u16,
    },
    /// A partly reassembled (or orphaned) fragmented NAL unit was dropped.
    Discarded {
        /// Its NAL unit header.
        nal_header: NalHeader,
        /// Bytes dropped.
        bytes: usize,
        /// Why.
        reason: DiscardReason,
    },
}

/// Counters of a [`Depacketizer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DepacketizerStats {
    /// Packets pushed.
    pub packets: u64,
    /// Whole NAL units handed back.
    pub nal_units: u64,
    /// Sequence numbers skipped over by gaps.
    pub missing_packets: u64,
    /// Partly reassembled or orphaned NAL units dropped.
    pub discarded_nal_units: u64,
    /// Bytes of those.
    pub discarded_bytes: u64,
    /// FU-A fragments of an already dropped NAL unit, skipped quietly.
    pub skipped_fragments: u64,
    /// Packets rejected as malformed, reserved, or interleaved-mode only.
    pub malformed_packets: u64,
    /// Duplicate or late packets ignored.
    pub stale_packets: u64,
}

/// Reassembles NAL units from RTP payloads (non-interleaved mode).
///
/// Call [`Depacketizer::push`] with each RTP payload in sequence-number
/// order (after any reordering buffer), with its sequence number and marker
/// bit. Results go to a callback so that single NAL units and STAP-A units
/// are handed over without copying; only FU-A reassembly copies, into one
/// buffer bounded by [`DepacketizerConfig::max_nal_size`].
///
/// A NAL unit handed back is always whole and exact: when a fragment is
/// missing (a sequence gap) or the fragments do not fit together, the partial
/// NAL unit is dropped with a [`Depacketized::Discarded`] event instead.
#[derive(Clone, Debug)]
pub struct Depacketizer {
    config: DepacketizerConfig,
    last_seq: Option<u16>,
    /// Header of the FU-A NAL unit being reassembled, if any.
    in_progress: Option<NalHeader>,
    /// Visible to the tests, which check its capacity bound.
    pub(super) buffer: Vec<u8>,
    /// After a gap or a drop: further fragments of the same NAL unit are
    /// skipped without a new report.
    skipping: bool,
    stats: DepacketizerStats,
}

impl Default for Depacketizer {
    fn default() -> Self {
        Depacketizer::new(DepacketizerConfig::default())
    }
}

impl Depacketizer {
    /// A depacketizer that has seen no packet.
    pub fn new(config: DepacketizerConfig) -> Self {
        Depacketizer {
            config,
            last_seq: None,
            in_progress: None,
            buffer: Vec::new(),
            skipping: false,
            stats: DepacketizerStats::default(),
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> DepacketizerStats {
        self.stats
    }

    /// Appends to the reassembly buffer (the caller checked the size limit),
    /// growing its capacity geometrically but never past `max_nal_size`.
    fn append(&mut self, data: &[u8]) {
        let needed = self.buffer.len() + data.len();
        if needed > self.buffer.capacity() {
            let target = needed
                .max(2 * self.buffer.capacity())
                .min(self.config.max_nal_size)
                .max(needed);
            self.buffer.reserve_exact(target - self.buffer.len());
        }
        self.buffer.extend_from_slice(data);
    }

    /// Drops the NAL unit being reassembled, if any, and reports it.
    fn discard<F: FnMut(Depacketized<'_>)>(&mut self, reason: DiscardReason, sink: &mut F) {
        if let Some(nal_header) = self.in_progress.take() {
            self.stats.discarded_nal_units += 1;
            self.stats.discarded_bytes += self.buffer.len() as u64;
            sink(Depacketized::Discarded {
                nal_header,
                bytes: self.buffer.len(),
                reason,
            });
            self.buffer.clear();
        }
    }

    fn malformed<F: FnMut(Depacketized<'_>)>(
        &mut self,
        error: H264Error,
        sink: &mut F,
    ) -> H264Error {
        self.stats.malformed_packets += 1;
        self.discard(DiscardReason::Malformed, sink);
        self.skipping = true;
        error
    }

    /// Takes one RTP payload and hands whatever it completes to `sink`.
    ///
    /// Errors name what was wrong with this packet; events for earlier
    /// damage (a gap, a dropped partial NAL unit) are still delivered first.
    /// A stale (duplicate or late) packet and a reserved payload type leave
    /// the state untouched; any other error also ends the NAL unit being
    /// reassembled.
    pub fn push<F>(
        &mut self,
        sequence_number: u16,
        marker: bool,
        payload: &[u8],
        mut sink: F,
    ) -> Result<(), H264Error>
    where
        F: FnMut(Depacketized<'_>),
    {
        self.stats.packets += 1;
        if let Some(last) = self.last_seq {
            let expected = last.wrapping_add(1);
            let behind = sequence_delta(sequence_number, expected);
            if behind > 0 && behind.unsigned_abs() < self.config.stale_window {
                self.stats.stale_packets += 1;
                return Err(H264Error::StalePacket {
                    expected,
                    got: sequence_number,
                });
            }
            if sequence_number != expected {
                self.stats.missing_packets += u64::from(sequence_number.wrapping_sub(expected));
                sink(Depacketized::Gap {
                    expected,
                    received: sequence_number,
                });
                self.discard(DiscardReason::Gap, &mut sink);
                // What follows may be the rest of a NAL unit whose start was
                // in the gap; the gap report covers it.
                self.skipping = true;
            }
        }
        self.last_seq = Some(sequence_number);

        let Some(&first) = payload.first() else {
            return Err(self.malformed(H264Error::EmptyPayload, &mut sink));
        };
        match PacketType::of(NalHeader(first)) {
            PacketType::SingleNal { .. } => {
                // RFC 6184 §5.8: fragments are sent "in consecutive order of
                // RTP sequence numbers (with no other RTP packets within the
                // same RTP packet stream being sent between the first and
                // last fragment)".
                self.discard(DiscardReason::MissingEnd, &mut sink);
                self.skipping = false;
                self.stats.nal_units += 1;
                sink(Depacketized::Nal {
                    data: payload,
                    end_of_access_unit: marker,
                });
                Ok(())
            }
            PacketType::StapA => {
                let stap = match StapAPacket::new_checked(payload) {
                    Ok(stap) => stap,
                    Err(error) => return Err(self.malformed(error, &mut sink)),
                };
                self.discard(DiscardReason::MissingEnd, &mut sink);
                self.skipping = false;
                let mut units = stap.nal_units().peekable();
                while let Some(data) = units.next() {
                    self.stats.nal_units += 1;
                    let last = units.peek().is_none();
                    sink(Depacketized::Nal {
                        data,
                        end_of_access_unit: marker && last,
                    });
                }
                Ok(())
            }
            PacketType::FuA => self.push_fu_a(marker, payload, &mut sink),
            PacketType::StapB => Err(self.interleaved(STAP_B, "STAP-B", &mut sink)),
            PacketType::Mtap16 => Err(self.interleaved(MTAP16, "MTAP16", &mut sink)),
            PacketType::Mtap24 => Err(self.interleaved(MTAP24, "MTAP24", &mut sink)),
            PacketType::FuB => Err(self.interleaved(FU_B, "FU-B", &mut sink)),
            PacketType::Reserved { packet_type } => {
                // RFC 6184 Table 3: reserved types are ignored, in every mode.
                self.stats.malformed_packets += 1;
                Err(H264Error::ReservedPacketType { packet_type })
            }
        }
    }

    fn interleaved<F: FnMut(Depacketized<'_>)>(
        &mut self,
        packet_type: u8,
        name: &'static str,
        sink: &mut F,
    ) -> H264Error {
        self.malformed(H264Error::InterleavedModeOnly { packet_type, name }, sink)
    }

    fn push_fu_a<F: FnMut(Depacketized<'_>)>(
        &mut self,
        marker: bool,
        payload: &[u8],
        sink: &mut F,
    ) -> Result<(), H264Error> {
        let fu = match FuAPacket::new_checked(payload) {
            Ok(fu) => fu,
            Err(error) => return Err(self.malformed(error, sink)),
        };
        let nal_header = fu.nal_header();
        let data = fu.fragment();
        if fu.is_start() {
            self.discard(DiscardReason::MissingEnd, sink);
            self.skipping = false;
            if 1 + data.len() > self.config.max_nal_size {
                self.stats.discarded_nal_units += 1;
                self.stats.discarded_bytes += 1 + data.len() as u64;
                sink(Depacketized::Discarded {
                    nal_header,
                    bytes: 1 + data.len(),
                    reason: DiscardReason::TooLarge {
                        limit: self.config.max_nal_size,
                    },
                });
                self.skipping = true;
                return Ok(());
            }
            self.buffer.clear();
            self.append(&[nal_header.0]);
            self.append(data);
            self.in_progress = Some(nal_header);
            return Ok(());
        }
        let Some(expected) = self.in_progress else {
            if self.skipping {
                self.stats.skipped_fragments += 1;
            } else {
                self.stats.discarded_nal_units += 1;
                self.stats.discarded_bytes += data.len() as u64;
                sink(Depacketized::Discarded {
                    nal_header,
                    bytes: data.len(),
                    reason: DiscardReason::MissingStart,
                });
            }
            // The rest of this orphan NAL unit is skipped quietly; its End
            // fragment closes it.
            self.skipping = !fu.is_end();
            return Ok(());
        };
        // F may differ between fragments (a node that saw bit errors sets it);
        // NRI and type may not.
        if expected.0 & 0x7f != nal_header.0 & 0x7f {
            self.discard(
                DiscardReason::Inconsistent {
                    expected,
                    got: nal_header,
                },
                sink,
            );
            self.stats.skipped_fragments += 1;
            self.skipping = !fu.is_end();
            return Ok(());
        }
        if self.buffer.len() + data.len() > self.config.max_nal_size {
            self.discard(
                DiscardReason::TooLarge {
                    limit: self.config.max_nal_size,
                },
                sink,
            );
            self.stats.skipped_fragments += 1;
            self.skipping = !fu.is_end();
            return Ok(());
        }
        self.append(data);
        if nal_header.forbidden_zero_bit() {
            // Keep the warning of any fragment in the reassembled NAL unit.
            if let Some(header) = self.buffer.first_mut() {
                *header |= 0x80;
            }
        }
        if fu.is_end() {
            self.in_progress = None;
            self.stats.nal_units += 1;
            sink(Depacketized::Nal {
                data: &self.buffer,
                end_of_access_unit: marker,
            });
            self.buffer.clear();
        }
        Ok(())
    }

    /// Ends the stream: a NAL unit still being reassembled is dropped and
    /// reported, and the next packet starts afresh (no gap is reported
    /// against the previous sequence number).
    pub fn finish<F: FnMut(Depacketized<'_>)>(&mut self, mut sink: F) {
        self.discard(DiscardReason::MissingEnd, &mut sink);
        self.last_seq = None;
        self.skipping = false;
    }
}
