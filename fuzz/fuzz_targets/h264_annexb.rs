//! Any bytes as an H.264 Annex B stream: the parser must not panic, and
//! what it accepts must describe the input: every NAL unit lies inside it,
//! units do not overlap and come in order, and access units are numbered
//! from 0.
#![no_main]

use fairstream_media::h264::parse_stream;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(report) = parse_stream(data) else {
        return;
    };
    let mut end = 0;
    for (index, au) in report.access_units.iter().enumerate() {
        assert_eq!(au.index, index);
        assert!(
            au.slices().next().is_some(),
            "an access unit without a slice"
        );
        for nal in &au.nal_units {
            assert!(nal.range.start >= end && nal.range.end <= data.len() && !nal.is_empty());
            end = nal.range.end;
        }
    }
});
