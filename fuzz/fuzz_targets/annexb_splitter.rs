//! Any bytes as an Annex B stream arriving in pieces (what `fairstream send -`
//! reads from a pipe): the incremental splitter must not panic, must hand
//! out no more NAL bytes than it was given, and must keep its buffer bounded.
//! The first byte sets the piece size, so pipes of every read size are tried.
#![no_main]

use fairstream_media::h264::incremental::{AccessUnitSplitter, MAX_PENDING_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&piece, stream)) = data.split_first() else {
        return;
    };
    let piece = usize::from(piece).max(1);
    let mut splitter = AccessUnitSplitter::new();
    let mut out = 0;
    for chunk in stream.chunks(piece) {
        match splitter.push(chunk) {
            Ok(units) => out += units.iter().map(|u| u.size_bytes()).sum::<usize>(),
            Err(_) => return,
        }
        assert!(splitter.pending() <= MAX_PENDING_BYTES + piece);
    }
    if let Ok(units) = splitter.finish() {
        out += units.iter().map(|u| u.size_bytes()).sum::<usize>();
    }
    assert!(
        out <= stream.len(),
        "{out} NAL bytes out of {} in",
        stream.len()
    );
    assert_eq!(splitter.pending(), 0);
});
