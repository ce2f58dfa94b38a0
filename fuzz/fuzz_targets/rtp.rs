//! Any datagram: the RTP parser must not panic, and what it accepts must emit
//! to a packet that parses back to the same header and payload.
#![no_main]

use fairstream_proto::wire::rtp::RtpRepr;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(repr) = RtpRepr::parse_bytes(data) {
        let mut buffer = vec![0u8; repr.buffer_len()];
        if let Ok(len) = repr.emit(&mut buffer) {
            let again = RtpRepr::parse_bytes(&buffer[..len]).expect("re-parse of emitted RTP");
            assert_eq!(again, repr);
        }
    }
});
