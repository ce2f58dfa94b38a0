//! RTP packets into the receiver's assembler (RTP/H.264 back into access
//! units, as `fairstream recv` does after the session and FEC): each input
//! chunk is (length, bytes). It must not panic, must complete no more
//! access units than it was given packets of the stream, and must hand out
//! no more NAL bytes than the RTP payloads of the stream carried.
#![no_main]

use fairstream_media::stream::PAYLOAD_TYPE;
use fairstream_net::fuzzing::{Assembler, Completed};
use fairstream_proto::wire::rtp::RtpRepr;
use libfuzzer_sys::fuzz_target;

fn nal_bytes(units: &[Completed]) -> usize {
    units.iter().flat_map(|u| &u.nal_units).map(Vec::len).sum()
}

fuzz_target!(|data: &[u8]| {
    let mut assembler = Assembler::new();
    let (mut packets_in, mut payload_in) = (0usize, 0usize);
    let (mut units_out, mut bytes_out) = (0usize, 0usize);
    let mut rest = data;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_be_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        let packet = &rest[2..2 + len];
        rest = &rest[2 + len..];
        if let Ok(rtp) = RtpRepr::parse_bytes(packet) {
            if rtp.payload_type == PAYLOAD_TYPE {
                packets_in += 1;
                payload_in += rtp.payload.len();
            }
        }
        let units = assembler.push(packet);
        units_out += units.len();
        bytes_out += nal_bytes(&units);
        assert!(
            units_out <= packets_in,
            "{units_out} access units from {packets_in} packets"
        );
        assert!(
            bytes_out <= payload_in,
            "{bytes_out} NAL bytes from {payload_in} payload bytes"
        );
    }
    let units = assembler.finish();
    units_out += units.len();
    bytes_out += nal_bytes(&units);
    assert!(
        units_out <= packets_in,
        "{units_out} access units from {packets_in} packets"
    );
    assert!(
        bytes_out <= payload_in,
        "{bytes_out} NAL bytes from {payload_in} payload bytes"
    );
});
