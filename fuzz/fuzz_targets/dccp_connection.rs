//! Datagrams from a hostile peer into an open DCCP connection (CCID 3): the
//! first byte picks the direction, the next two the length of each datagram.
//! The connection code must not panic, and its peer-influenced tables must
//! stay bounded whatever arrives.
#![no_main]

use std::time::Duration;

use fairstream_proto::conn::pair::{Direction, LinkConfig, Pair};
use fairstream_proto::conn::EndpointConfig;
use fairstream_proto::time::Instant;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut pair = Pair::new(
        EndpointConfig::default(),
        EndpointConfig::default(),
        LinkConfig::default(),
    );
    let Ok(id) = pair.connect(40_000, 5004) else {
        return;
    };
    pair.run_until(Instant::from_millis(500));
    let mut rest = data;
    while rest.len() >= 3 {
        let direction = if rest[0] & 1 == 0 {
            Direction::ServerToClient
        } else {
            Direction::ClientToServer
        };
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]])).min(rest.len() - 3);
        let datagram = &rest[3..3 + len];
        rest = &rest[3 + len..];
        pair.inject(direction, datagram);
        let until = pair.now() + Duration::from_millis(5);
        pair.run_until(until);
    }
    if let Some(conn) = pair.client.connection(id) {
        for size in conn.table_sizes() {
            assert!(size < 100_000, "table grew to {size}");
        }
    }
});
