//! Any options area: the DCCP option parser must not panic, and what it
//! accepts must encode and parse back to the same options.
#![no_main]

use fairstream_proto::wire::options::Options;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(options) = Options::parse(data) {
        if options.check_encodable().is_err() {
            return;
        }
        let bytes = options.to_bytes();
        let again = Options::parse(&bytes).expect("re-parse of emitted options");
        assert_eq!(again, options);
    }
});
