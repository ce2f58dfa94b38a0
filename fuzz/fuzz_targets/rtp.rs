//! Any datagram: the RTP parser must not panic, and what it accepts must emit
//! to a packet that parses back to the same header and payload; a header
//! extension's temporal-frame element (RFC 8285 one-byte form) must read
//! without panic, and what it accepts must write back to the same element.
#![no_main]

use fairstream_proto::wire::rtp::{HeaderExtension, RtpRepr, TemporalFrameInfo, ONE_BYTE_PROFILE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(repr) = RtpRepr::parse_bytes(data) {
        let mut buffer = vec![0u8; repr.buffer_len()];
        if let Ok(len) = repr.emit(&mut buffer) {
            let again = RtpRepr::parse_bytes(&buffer[..len]).expect("re-parse of emitted RTP");
            assert_eq!(again, repr);
        }
        if let Some(Ok(info)) = repr
            .extension
            .as_ref()
            .and_then(TemporalFrameInfo::from_extension)
        {
            let data = info.extension_data();
            let written = HeaderExtension {
                profile: ONE_BYTE_PROFILE,
                data: &data,
            };
            assert_eq!(TemporalFrameInfo::from_extension(&written), Some(Ok(info)));
        }
    }
});
