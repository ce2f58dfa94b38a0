//! Any datagram: the DCCP header, options and checksum parser must not panic,
//! and what it accepts must emit and parse back to the same packet.
#![no_main]

use fairstream_proto::wire::dccp::{ChecksumContext, DccpRepr};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let context = ChecksumContext::UdpEncapsulated;
    if let Ok(repr) = DccpRepr::parse_bytes(data, &context) {
        if let Ok(bytes) = repr.emit_to_vec(&context) {
            let again =
                DccpRepr::parse_bytes(&bytes, &context).expect("re-parse of emitted packet");
            assert_eq!(again, repr);
        }
    }
});
