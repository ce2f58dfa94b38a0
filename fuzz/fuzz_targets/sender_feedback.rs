//! Datagrams from a hostile receiver into a multi-connection sender session
//! (four connections, retransmission on): each input chunk is (time step in
//! ms, length, bytes), and every millisecond the application offers a
//! datagram and the timers run. No receiver answers but the input, so the
//! seeds are what a real `ReceiverSession` answered to this very session
//! (handshakes, ACKs with TFRC feedback, RTCP NACKs). The session must not
//! panic; its queue, retransmission store and connections' tables must stay
//! bounded, and it must open no more connections than its count.
#![no_main]

mod sender_driver;

use std::time::Duration;

use fairstream_proto::session::SenderSession;
use fairstream_proto::time::Instant;
use libfuzzer_sys::fuzz_target;
use sender_driver::{config, feed, tick, PAYLOAD_BYTES};

fuzz_target!(|data: &[u8]| {
    let config = config();
    let mut now = Instant::ZERO;
    let mut sender = SenderSession::new(config.clone(), now).expect("a valid configuration");
    let mut offered = 0;
    let mut buf = Vec::new();
    let mut rest = data;
    // Five seconds of the session at most, so that an input stays quick.
    while rest.len() >= 3 && now < Instant::ZERO + Duration::from_secs(5) {
        for _ in 0..rest[0] {
            now += Duration::from_millis(1);
            tick(&mut sender, now, &mut offered, &mut buf, |_| {});
        }
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]])).min(rest.len() - 3);
        let datagram = &rest[3..3 + len];
        rest = &rest[3 + len..];
        feed(&mut sender, now, datagram, &mut buf, |_| {});
        assert!(sender.stored_bytes() <= config.arq.store_bytes);
        // The session queue, and retransmissions of what the store keeps.
        let most = config.queue_datagrams + config.arq.store_bytes / PAYLOAD_BYTES;
        assert!(
            sender.queued() <= most,
            "{} datagrams queued",
            sender.queued()
        );
        assert!(sender.max_open_connections() <= 4);
        assert!(sender.endpoint().len() <= 1024);
        for id in sender.endpoint().connection_ids() {
            if let Some(conn) = sender.endpoint().connection(id) {
                for size in conn.table_sizes() {
                    assert!(size < 100_000, "table grew to {size}");
                }
            }
        }
    }
});
