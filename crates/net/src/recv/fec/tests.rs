//! The receiver's FEC against the simulator's parity packets, with random
//! losses and hostile parity.

use fairstream_media::stream::{
    parity_packets, parity_rtp_packet, FecParams, MediaPacket, ParityHeader,
};
use fairstream_proto::wire::rtp::{CsrcList, RtpRepr};

use super::*;

fn at(ms: u64) -> Instant {
    Instant::from_secs_f64(ms as f64 / 1000.0)
}

/// A data packet numbered `id` (RTP sequence number `id` modulo 2¹⁶).
fn data(id: u64) -> Vec<u8> {
    let payload: Vec<u8> = (0..(id % 300 + 20)).map(|b| (b * 7 + id) as u8).collect();
    let mut payload = payload;
    payload[0] = 0x41; // a non-IDR slice NAL unit
    let repr = RtpRepr {
        marker: id % 5 == 4,
        payload_type: PAYLOAD_TYPE,
        sequence_number: id as u16,
        timestamp: (id / 5 * 3600) as u32,
        ssrc: 1,
        csrcs: CsrcList::new(),
        extension: None,
        payload: &payload,
        padding_len: 0,
    };
    let mut bytes = vec![0; repr.buffer_len()];
    repr.emit(&mut bytes).unwrap();
    bytes
}

/// The stream in send order: data packets, each block's parity after its
/// last; each entry is (block, is data, data id, bytes).
fn stream(blocks: u64, fec: FecParams) -> Vec<(u64, bool, u64, Vec<u8>)> {
    let k = fec.k as u64;
    let packets: Vec<MediaPacket> = (0..blocks * k)
        .map(|id| MediaPacket {
            id,
            frame: (id / 5) as usize,
            bytes: data(id),
        })
        .collect();
    let parity = parity_packets(&packets, fec).unwrap();
    let mut out = Vec::new();
    for packet in &packets {
        out.push((packet.id / k, true, packet.id, packet.bytes.clone()));
        for p in parity.iter().filter(|p| p.after == packet.id) {
            out.push((p.block, false, 0, p.bytes.clone()));
        }
    }
    out
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Every block with at most n − k losses is rebuilt whole; no block with
/// more gets a packet rebuilt (FEC starts with the first parity packet,
/// so block 0 is sent whole).
#[test]
fn rebuilds_exactly_the_blocks_with_at_most_n_minus_k_losses() {
    for (seed, (n, k), loss) in [
        (1, (6, 4), 0.15),
        (2, (12, 10), 0.08),
        (3, (24, 20), 0.1),
        (4, (30, 24), 0.2),
        (5, (5, 1), 0.5),
    ] {
        let fec = FecParams { n, k };
        let blocks = 200;
        let mut rng = Lcg(seed);
        let mut decoder = FecDecoder::new();
        let mut lost_in_block = vec![0usize; blocks as usize];
        let mut lost_data = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for (i, (block, is_data, id, bytes)) in stream(blocks, fec).into_iter().enumerate() {
            if block > 0 && rng.next() < loss {
                lost_in_block[block as usize] += 1;
                if is_data {
                    lost_data.insert(id);
                }
                continue;
            }
            out.extend(decoder.push(at(i as u64), bytes));
        }
        out.extend(decoder.finish(at(1_000_000)));
        let got: Vec<u64> = out
            .iter()
            .map(|p| u64::from(RtpRepr::parse_bytes(p).unwrap().sequence_number))
            .collect();
        let mut expected_rebuilt = 0;
        let mut expected = Vec::new();
        for id in 0..blocks * k as u64 {
            let block = (id / k as u64) as usize;
            let repaired = lost_in_block[block] <= n - k;
            if !lost_data.contains(&id) || repaired {
                expected.push(id as u16 as u64);
            }
            if lost_data.contains(&id) && repaired {
                expected_rebuilt += 1;
            }
        }
        assert_eq!(got, expected, "RS({n}, {k}), seed {seed}");
        // Rebuilt packets are the packets sent, byte for byte.
        for packet in &out {
            let id = u64::from(RtpRepr::parse_bytes(packet).unwrap().sequence_number);
            assert_eq!(packet, &data(id));
        }
        let stats = decoder.stats;
        assert_eq!(stats.packets_rebuilt, expected_rebuilt);
        let bad = lost_in_block.iter().filter(|l| **l > n - k).count() as u64;
        assert!(expected_rebuilt > 0, "RS({n}, {k}): nothing to rebuild");
        assert!(
            stats.blocks_unrecoverable <= bad,
            "{} > {bad}",
            stats.blocks_unrecoverable
        );
        assert_eq!((stats.n as usize, stats.k as usize), (n, k));
        assert_eq!(stats.rebuild_mismatches, 0);
    }
}

#[test]
fn without_parity_packets_pass_straight_through() {
    let mut decoder = FecDecoder::new();
    for id in [0, 1, 3, 7, 8] {
        assert_eq!(decoder.push(at(id), data(id)), vec![data(id)]);
    }
    assert!(decoder.finish(at(100)).is_empty());
    assert_eq!(decoder.stats, FecReceiveStats::default());
}

#[test]
fn a_gap_is_held_at_most_the_hold_time() {
    let fec = FecParams { n: 6, k: 4 };
    let packets = stream(3, fec);
    let mut decoder = FecDecoder::new();
    // Block 0 and its parity; then block 1 without its packet 5.
    for (_, _, id, bytes) in packets.iter().take(6) {
        let _ = (id, decoder.push(at(0), bytes.clone()));
    }
    assert_eq!(decoder.push(at(0), data(4)), vec![data(4)]);
    assert!(decoder.push(at(10), data(6)).is_empty());
    // The block is held from its first packet's arrival (time 0).
    assert!(decoder.poll(at(HOLD.as_millis() as u64 - 1)).is_empty());
    assert_eq!(decoder.poll(at(HOLD.as_millis() as u64)), vec![data(6)]);
    assert_eq!(decoder.stats.blocks_unrecoverable, 1);
}

#[test]
fn hostile_parity_is_counted_and_ignored_with_bounded_memory() {
    let fec = FecParams { n: 6, k: 4 };
    let mut decoder = FecDecoder::new();
    for (_, _, _, bytes) in stream(2, fec) {
        let _ = decoder.push(at(0), bytes);
    }
    let parity = |block: u32, index: u8, k: u8, n: u8, shard: &[u8]| {
        fairstream_media::stream::parity_rtp_packet(
            fairstream_media::stream::ParityHeader { block, index, k, n },
            0,
            0,
            shard,
        )
        .unwrap()
    };
    let before = decoder.stats.parity_malformed;
    // Another code, a bad header, a block far ahead, a short payload.
    let _ = decoder.push(at(1), parity(2, 0, 10, 12, &[1, 2, 3]));
    let _ = decoder.push(at(1), parity(2, 5, 4, 6, &[1, 2, 3]));
    let _ = decoder.push(at(1), parity(1_000_000, 0, 4, 6, &[1, 2, 3]));
    let mut short = parity(2, 0, 4, 6, &[1]);
    short.truncate(RTP_HEADER + 3);
    let _ = decoder.push(at(1), short);
    assert_eq!(decoder.stats.parity_malformed, before + 4);
    // Random parity and forward-jumping data never grow it without bound.
    let mut rng = Lcg(9);
    for i in 0..20_000u64 {
        let r = rng.next();
        let block = (r * 4000.0) as u32;
        let len = (rng.next() * 40.0) as usize;
        let shard: Vec<u8> = (0..len).map(|b| (b as u64 ^ i) as u8).collect();
        let packet = if i % 3 == 0 {
            data((rng.next() * 65_535.0) as u64)
        } else {
            parity(block, (i % 2) as u8, 4, 6, &shard)
        };
        let _ = decoder.push(at(2 + i), packet);
        assert!(decoder.blocks.len() <= MAX_OPEN_BLOCKS + 1);
    }
    let _ = decoder.finish(at(1 << 40));
    assert!(decoder.blocks.is_empty());
}

const RTP_HEADER: usize = 12;

/// Parity that rebuilds, in a lost packet's place, an RTP packet with its
/// sequence number but another payload type: not the data packet expected
/// (the `fec_parity` fuzz target's regression input did it with 122).
#[test]
fn a_rebuilt_packet_of_another_payload_type_is_a_mismatch() {
    let code = FecCode::new(3, 2).unwrap();
    let first = data(0);
    let mut forged = data(1);
    forged[1] = 122; // marker clear, payload type 122
    let shards = code.encode(&[&first, &forged]).unwrap();
    let header = ParityHeader {
        block: 0,
        index: 0,
        k: 2,
        n: 3,
    };
    let parity = parity_rtp_packet(header, 0, 0, &shards[0]).unwrap();
    let mut decoder = FecDecoder::new();
    let mut out = decoder.push(at(0), parity);
    out.extend(decoder.push(at(1), first.clone()));
    out.extend(decoder.finish(at(2)));
    assert_eq!(out, vec![first]);
    assert_eq!(decoder.stats.packets_rebuilt, 0);
    assert_eq!(decoder.stats.rebuild_mismatches, 1);
}
