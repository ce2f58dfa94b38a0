//! The receiver's packet-level FEC: parity packets (payload type
//! [`FEC_PAYLOAD_TYPE`], the simulator's wire format) are recognised in the
//! merged stream, and the data packets a block lost are rebuilt once any k
//! of its n packets arrived ([`FecCode::recover`]).
//!
//! Until the first parity packet names RS(n, k), packets pass straight
//! through. Then data packets are released in RTP sequence order; at a
//! gap they are held until the gap's block can be rebuilt or is given up:
//! when a packet of a later block arrived (the session delivers in its
//! order, so nothing more of the block will come), when the block has
//! waited [`HOLD`], or when more than [`MAX_OPEN_BLOCKS`] blocks are open.
//! Memory is so bounded by `MAX_OPEN_BLOCKS` blocks of n packets.

use std::collections::BTreeMap;
use std::time::Duration;

use fairstream_media::fec::FecCode;
use fairstream_media::stream::{parse_parity, FEC_PAYLOAD_TYPE, PAYLOAD_TYPE};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::rtp::{sequence_delta, RtpRepr};
use serde::Serialize;

/// The longest a block with a gap is waited for.
pub(crate) const HOLD: Duration = Duration::from_millis(300);
/// The most blocks held at once.
pub const MAX_OPEN_BLOCKS: usize = 32;

/// What the receiver's FEC did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FecReceiveStats {
    /// n of the RS(n, k) code the stream's parity named (0: no FEC seen).
    pub n: u8,
    /// k of that code.
    pub k: u8,
    /// Parity packets received.
    pub parity_received: u64,
    /// Data packets rebuilt from parity.
    pub packets_rebuilt: u64,
    /// Blocks with a loss that parity repaired.
    pub blocks_recovered: u64,
    /// Blocks given up with packets still missing.
    pub blocks_unrecoverable: u64,
    /// Parity packets ignored: a bad header, another code than the
    /// stream's, or a block too far ahead.
    pub parity_malformed: u64,
    /// Rebuilt packets that were not the data packet expected (ignored).
    pub rebuild_mismatches: u64,
}

/// One block's packets.
#[derive(Debug)]
struct Block {
    data: Vec<Option<Vec<u8>>>,
    parity: Vec<Option<Vec<u8>>>,
    since: Instant,
    /// Given up (counted once) or the code refused it.
    failed: bool,
}

impl Block {
    fn new(k: usize, n: usize, now: Instant) -> Block {
        Block {
            data: vec![None; k],
            parity: vec![None; n - k],
            since: now,
            failed: false,
        }
    }

    fn shards(&self) -> usize {
        self.data.iter().chain(&self.parity).flatten().count()
    }
}

/// Rebuilds lost data packets from parity packets.
#[derive(Debug, Default)]
pub struct FecDecoder {
    code: Option<FecCode>,
    blocks: BTreeMap<u64, Block>,
    /// The number of the next data packet to release.
    next: u64,
    /// The highest data packet number seen.
    highest: Option<u64>,
    /// The highest block any packet was seen of.
    highest_block: u64,
    /// What it did.
    pub stats: FecReceiveStats,
}

impl FecDecoder {
    /// A decoder that has seen no parity yet.
    pub fn new() -> FecDecoder {
        FecDecoder::default()
    }

    /// Takes a packet of the merged stream; returns the data packets
    /// (and any packets that are not the stream's) ready in order.
    pub fn push(&mut self, now: Instant, packet: Vec<u8>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let Ok(rtp) = RtpRepr::parse_bytes(&packet) else {
            out.push(packet);
            return out;
        };
        if rtp.payload_type == FEC_PAYLOAD_TYPE {
            self.stats.parity_received += 1;
            match parse_parity(rtp.payload) {
                Some((header, shard)) => self.parity(now, header, shard.to_vec()),
                None => self.stats.parity_malformed += 1,
            }
            self.release(now, false, &mut out);
            return out;
        }
        if rtp.payload_type != PAYLOAD_TYPE {
            out.push(packet);
            return out;
        }
        let number = self.extend(rtp.sequence_number);
        let Some(code) = &self.code else {
            out.push(packet);
            return out;
        };
        let (k, n) = (code.k(), code.n());
        if number < self.next {
            // Given up already: late, as without FEC.
            out.push(packet);
            return out;
        }
        let block = number / k as u64;
        self.highest_block = self.highest_block.max(block);
        let slot = self
            .blocks
            .entry(block)
            .or_insert_with(|| Block::new(k, n, now));
        if let Some(place) = slot.data.get_mut((number % k as u64) as usize) {
            if place.is_none() {
                *place = Some(packet);
            }
        }
        self.release(now, false, &mut out);
        out
    }

    /// Blocks held now (at most [`MAX_OPEN_BLOCKS`] after every call).
    pub fn open_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Releases what waited too long.
    pub fn poll(&mut self, now: Instant) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        self.release(now, false, &mut out);
        out
    }

    /// Releases everything (the stream ended).
    pub fn finish(&mut self, now: Instant) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        self.release(now, true, &mut out);
        out
    }

    /// The 16-bit RTP sequence number extended around the highest seen
    /// (the sender counts from 0).
    fn extend(&mut self, sequence: u16) -> u64 {
        let number = match self.highest {
            None => u64::from(sequence),
            Some(highest) => {
                let delta = i64::from(sequence_delta(highest as u16, sequence));
                (highest as i64 + delta).max(0) as u64
            }
        };
        self.highest = Some(self.highest.map_or(number, |h| h.max(number)));
        number
    }

    fn parity(
        &mut self,
        now: Instant,
        header: fairstream_media::stream::ParityHeader,
        shard: Vec<u8>,
    ) {
        let (k, n) = (usize::from(header.k), usize::from(header.n));
        let code = match &self.code {
            Some(code) if code.k() == k && code.n() == n => code,
            Some(_) => {
                self.stats.parity_malformed += 1;
                return;
            }
            None => {
                let Ok(code) = FecCode::new(n, k) else {
                    self.stats.parity_malformed += 1;
                    return;
                };
                self.stats.n = header.n;
                self.stats.k = header.k;
                // What came before passed through.
                self.next = self.highest.map_or(0, |h| h + 1);
                self.code.insert(code)
            }
        };
        let current = self.next / k as u64;
        // The block number modulo 2³², extended around the current block.
        let delta = i64::from(header.block.wrapping_sub(current as u32) as i32);
        let Ok(block) = u64::try_from(current as i64 + delta) else {
            self.stats.parity_malformed += 1;
            return;
        };
        if block < current {
            return;
        }
        if block > current + 4 * MAX_OPEN_BLOCKS as u64 {
            self.stats.parity_malformed += 1;
            return;
        }
        self.highest_block = self.highest_block.max(block);
        let (k, n) = (code.k(), code.n());
        let slot = self
            .blocks
            .entry(block)
            .or_insert_with(|| Block::new(k, n, now));
        if let Some(place) = slot.parity.get_mut(usize::from(header.index)) {
            if place.is_none() {
                *place = Some(shard);
            }
        }
    }

    /// Releases data packets in order, rebuilding or giving up gaps.
    fn release(&mut self, now: Instant, all: bool, out: &mut Vec<Vec<u8>>) {
        let Some(code) = &self.code else {
            return;
        };
        let k = code.k() as u64;
        loop {
            let number = self.next / k;
            let index = (self.next % k) as usize;
            let open = self.blocks.len();
            let Some(block) = self.blocks.get_mut(&number) else {
                // Nothing of this block arrived: skip it if a later one did.
                match self.blocks.keys().next() {
                    Some(&later) if later > number => {
                        self.stats.blocks_unrecoverable += later - number;
                        self.next = later * k;
                        continue;
                    }
                    _ => break,
                }
            };
            if let Some(packet) = block.data.get(index).cloned().flatten() {
                out.push(packet);
            } else {
                if !block.failed && block.shards() >= code.k() {
                    match code.recover(&block.data, &block.parity) {
                        Ok(rebuilt) => {
                            self.stats.blocks_recovered += 1;
                            for (i, bytes) in rebuilt.into_iter().enumerate().skip(index) {
                                let expected = (number * k + i as u64) as u16;
                                let Some(place) = block.data.get_mut(i) else {
                                    continue;
                                };
                                if place.is_some() {
                                    continue;
                                }
                                // The data packet expected: of the stream, with
                                // its sequence number (the `fec_parity` fuzz target
                                // had parity rebuild payload type 122 in its place).
                                if RtpRepr::parse_bytes(&bytes).is_ok_and(|r| {
                                    r.sequence_number == expected && r.payload_type == PAYLOAD_TYPE
                                }) {
                                    self.stats.packets_rebuilt += 1;
                                    *place = Some(bytes);
                                } else {
                                    self.stats.rebuild_mismatches += 1;
                                }
                            }
                            if block.data.get(index).is_some_and(Option::is_some) {
                                continue;
                            }
                            block.failed = true;
                            self.stats.blocks_unrecoverable += 1;
                        }
                        Err(_) => {
                            block.failed = true;
                            self.stats.blocks_unrecoverable += 1;
                        }
                    }
                }
                let done = all
                    || block.failed
                    || self.highest_block > number
                    || open > MAX_OPEN_BLOCKS
                    || now.saturating_duration_since(block.since) >= HOLD;
                if !done {
                    break;
                }
                if !block.failed {
                    block.failed = true;
                    self.stats.blocks_unrecoverable += 1;
                }
            }
            self.next += 1;
            if index + 1 == k as usize {
                self.blocks.remove(&number);
            }
        }
    }
}

#[cfg(test)]
mod tests;
