//! Any UTF-8 text as a `dccp://` URL (what `fairstream send`, `recv` and
//! `relay` take on the command line): the parser must not panic; an
//! accepted URL's values must lie within the documented bounds, and its
//! text (`Display`) must parse back to an equal URL, or, with a passphrase,
//! show it as `passphrase=***` (a secret is never printed). Nothing is
//! resolved: a host name would be looked up over the network.
#![no_main]

use fairstream_net::url::{parse_fec, Controller, DccpUrl};
use fairstream_proto::conn::Ccid;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(fec) = parse_fec(text) {
        assert!(fec.k >= 1 && fec.k < fec.n && fec.n <= 255, "{fec:?}");
    }
    let Ok(url) = text.parse::<DccpUrl>() else {
        return;
    };
    let shown = url.to_string();
    if url.passphrase.is_some() {
        assert!(shown.contains("passphrase=***"), "{shown}");
    } else {
        let again: DccpUrl = shown.parse().expect("a URL's text parses");
        assert_eq!(again, url);
    }
    let t = &url.transport;
    assert!((1..=64).contains(&t.conns), "{url:?}");
    assert!((200..=65_000).contains(&t.max_packet), "{url:?}");
    if let Some(fec) = url.fec {
        assert!(fec.k >= 1 && fec.k < fec.n && fec.n <= 255, "{url:?}");
    }
    if let Some(rate) = t.rate {
        assert_eq!(t.cc, Ccid::FixedRateExperimental, "{url:?}");
        assert!(rate.bits_per_sec() > 0.0, "{url:?}");
        assert!(
            rate.bits_per_sec() <= fairstream_sim::limits::MAX_RATE_BPS,
            "{url:?}"
        );
    }
    if t.cc == Ccid::FixedRateExperimental {
        assert_eq!(t.controller, Controller::Fixed, "{url:?}");
    }
    let _ = t.count().build();
    let _ = t.ccid();
    let _ = url.names_cc();
    if url.host.is_none() {
        let _ = url.listen_address();
    }
});
