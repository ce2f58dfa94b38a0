//! Any datagram: the RTCP compound parser and its lenient iterator must not
//! panic or loop.
#![no_main]

use fairstream_proto::wire::rtcp::{packets, CompoundPacket};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for packet in packets(data).take(1 << 16) {
        let _ = packet;
    }
    if let Ok(compound) = CompoundPacket::new_checked(data) {
        for packet in compound.packets() {
            let _ = packet;
        }
    }
});
