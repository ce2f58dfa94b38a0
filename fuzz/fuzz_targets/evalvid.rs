//! Any text as an EvalVid sender trace and as a packet dump: the parsers
//! must not panic, and what they accept must format back to text that
//! parses to the same trace.
#![no_main]

use fairstream_media::evalvid::{format_sender_trace, parse_dump, parse_sender_trace};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(frames) = parse_sender_trace(text, "fuzz.st") {
        let again = parse_sender_trace(&format_sender_trace(&frames), "again.st")
            .expect("a formatted trace parses");
        assert_eq!(again.len(), frames.len());
        for (a, b) in again.iter().zip(&frames) {
            assert_eq!(
                (a.number, a.frame_type, a.size_bytes, a.packets),
                (b.number, b.frame_type, b.size_bytes, b.packets)
            );
        }
    }
    let _ = parse_dump(text, "fuzz.rd");
});
