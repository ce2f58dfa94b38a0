//! Hostile datagrams into a multi-connection receiver session: each input
//! chunk is (time step in ms, length, bytes). Run with the `dccp` seeds (valid
//! packets of every type) so that Requests open connections. The session
//! must not panic, its reorder buffer must stay within its bound, and it must
//! accept no more connections than its limit.
#![no_main]

use std::time::Duration;

use fairstream_proto::conn::ConnectionConfig;
use fairstream_proto::session::{ReceiverSession, ReorderConfig};
use fairstream_proto::time::Instant;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reorder = ReorderConfig {
        capacity: 64,
        max_wait: Duration::from_millis(200),
        ..ReorderConfig::default()
    };
    let mut session = ReceiverSession::new(ConnectionConfig::default(), 4, reorder);
    let mut now = Instant::ZERO;
    let mut buf = Vec::new();
    let mut rest = data;
    let mut iss = 1u64;
    while rest.len() >= 3 {
        now += Duration::from_millis(u64::from(rest[0]));
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]])).min(rest.len() - 3);
        let datagram = &rest[3..3 + len];
        rest = &rest[3 + len..];
        iss = iss.wrapping_mul(6364136223846793005).wrapping_add(1);
        session.handle_datagram(now, datagram, iss);
        session.handle_timeout(now);
        while session.poll_transmit(now, &mut buf).is_some() {}
        while session.recv().is_some() {}
        assert!(session.stats().reorder.max_held <= 65);
        assert!(session.endpoint().len() <= 4);
    }
});
