//! RTP packets, data and FEC parity, into the receiver's FEC decoder (what
//! `fairstream recv` runs on the merged stream): each input chunk is (time
//! step in ms, length, bytes). The parity parser must accept only headers
//! that name a code, and what it accepts must emit and parse back to itself.
//! The decoder must not panic, must hold at most `MAX_OPEN_BLOCKS` blocks,
//! must be empty after `finish`, and may hand out only packets it was given
//! or packets it rebuilt from parity: no more than it counts, each an RTP
//! packet of the stream.
#![no_main]

use std::collections::HashSet;
use std::time::Duration;

use fairstream_media::stream::{parity_rtp_packet, parse_parity, PAYLOAD_TYPE};
use fairstream_net::fuzzing::{FecDecoder, MAX_OPEN_BLOCKS};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::rtp::RtpRepr;
use libfuzzer_sys::fuzz_target;

/// Checks what the decoder handed out; returns how many of them it made.
fn check(out: Vec<Vec<u8>>, given: &HashSet<Vec<u8>>) -> u64 {
    let mut made = 0;
    for packet in out {
        if !given.contains(&packet) {
            made += 1;
            let rtp = RtpRepr::parse_bytes(&packet).expect("a rebuilt packet is RTP");
            assert_eq!(
                rtp.payload_type, PAYLOAD_TYPE,
                "a rebuilt packet is of the stream"
            );
        }
    }
    made
}

fuzz_target!(|data: &[u8]| {
    let mut decoder = FecDecoder::new();
    let mut now = Instant::ZERO;
    let mut given = HashSet::new();
    let mut made = 0;
    let mut rest = data;
    while rest.len() >= 3 {
        now += Duration::from_millis(u64::from(rest[0]));
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]])).min(rest.len() - 3);
        let packet = rest[3..3 + len].to_vec();
        rest = &rest[3 + len..];
        if let Ok(rtp) = RtpRepr::parse_bytes(&packet) {
            if let Some((header, shard)) = parse_parity(rtp.payload) {
                assert!(header.k >= 1 && header.n > header.k && header.index < header.n - header.k);
                let again = parity_rtp_packet(header, rtp.sequence_number, rtp.timestamp, shard)
                    .expect("an accepted parity packet emits");
                let again = RtpRepr::parse_bytes(&again).expect("an emitted parity packet parses");
                assert_eq!(parse_parity(again.payload), Some((header, shard)));
            }
        }
        given.insert(packet.clone());
        made += check(decoder.push(now, packet), &given);
        made += check(decoder.poll(now), &given);
        assert!(
            decoder.open_blocks() <= MAX_OPEN_BLOCKS,
            "{} blocks open",
            decoder.open_blocks()
        );
        assert!(made <= decoder.stats.packets_rebuilt);
    }
    made += check(decoder.finish(now), &given);
    assert_eq!(decoder.open_blocks(), 0);
    assert!(made <= decoder.stats.packets_rebuilt);
    if decoder.stats.parity_received == 0 {
        assert_eq!(decoder.stats.packets_rebuilt, 0, "rebuilt without parity");
    }
});
