//! The sender session of the `sender_feedback` target and how it is driven,
//! shared with the seed generator (`examples/seeds.rs`), which records what
//! a real receiver answers to exactly this session: the seeds stay valid
//! only while both drive it alike.

use std::time::Duration;

use fairstream_proto::cc::multi::ConnectionCountConfig;
use fairstream_proto::session::{ArqConfig, SenderSession, SessionConfig};
use fairstream_proto::time::Instant;

/// Bytes of each application datagram.
pub const PAYLOAD_BYTES: usize = 200;

/// Four fixed connections opened 20 ms apart, a small queue and store.
pub fn config() -> SessionConfig {
    SessionConfig {
        count: ConnectionCountConfig::Fixed(4),
        start_offset: Duration::from_millis(20),
        queue_datagrams: 64,
        arq: ArqConfig {
            store_bytes: 64 << 10,
            ..ArqConfig::default()
        },
        ..SessionConfig::default()
    }
}

/// One millisecond of the session's life at `now`: the application offers
/// one datagram (ten a GOP), the timers run, and what the session sends
/// goes to `out`.
pub fn tick(
    sender: &mut SenderSession,
    now: Instant,
    offered: &mut u64,
    buf: &mut Vec<u8>,
    mut out: impl FnMut(&[u8]),
) {
    let payload = offered.to_be_bytes().repeat(PAYLOAD_BYTES / 8);
    if sender.send(now, &payload, *offered / 10).is_ok() {
        *offered += 1;
    }
    sender.handle_timeout(now);
    while sender.poll_transmit(now, buf).is_some() {
        out(buf);
    }
}

/// A datagram from the receiver at `now`; what the session sends in reply
/// goes to `out`, its events are read.
pub fn feed(
    sender: &mut SenderSession,
    now: Instant,
    datagram: &[u8],
    buf: &mut Vec<u8>,
    mut out: impl FnMut(&[u8]),
) {
    sender.handle_datagram(now, datagram);
    while sender.poll_transmit(now, buf).is_some() {
        out(buf);
    }
    while sender.poll_event().is_some() {}
}
