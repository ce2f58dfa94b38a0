//! A sequence of RTP payloads (each prefixed by a 16-bit sequence number, a
//! marker byte and a length byte) into the H.264 depacketizer: it must not
//! panic, and every NAL unit it yields must fit its bound.
#![no_main]

use fairstream_proto::wire::h264::{Depacketized, Depacketizer, DepacketizerConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let config = DepacketizerConfig {
        max_nal_size: 4096,
        ..DepacketizerConfig::default()
    };
    let mut depacketizer = Depacketizer::new(config);
    let mut rest = data;
    while rest.len() >= 4 {
        let seq = u16::from_be_bytes([rest[0], rest[1]]);
        let marker = rest[2] & 1 == 1;
        let len = usize::from(rest[3]).min(rest.len() - 4);
        let payload = &rest[4..4 + len];
        rest = &rest[4 + len..];
        let _ = depacketizer.push(seq, marker, payload, |event| {
            if let Depacketized::Nal { data, .. } = event {
                assert!(data.len() <= 4096 + 255);
            }
        });
    }
});
