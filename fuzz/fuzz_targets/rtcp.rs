//! Any datagram: the RTCP compound parser and its lenient iterator must not
//! panic or loop, and a buffer report that parses writes back as itself.
#![no_main]

use fairstream_proto::wire::rtcp::{packets, BufferReport, CompoundPacket};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for packet in packets(data).take(1 << 16) {
        let _ = packet;
    }
    if let Some(Ok(report)) = BufferReport::parse(data) {
        let again = BufferReport::parse(&report.emit());
        assert!(matches!(again, Some(Ok(back)) if back == report));
    }
    if let Ok(compound) = CompoundPacket::new_checked(data) {
        for packet in compound.packets() {
            let _ = packet;
        }
    }
});
