//! Helpers shared by the connection tests.

use std::time::Duration;

use crate::conn::pair::{LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionConfig, ConnectionId, Endpoint, EndpointConfig, Event, State};
use crate::time::Instant;
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, SeqNum};
use crate::wire::options::Options;

pub(super) const CLIENT_PORT: u16 = 5004;
pub(super) const SERVER_PORT: u16 = 9000;

/// The server's view of the client's connection.
pub(super) fn server_id() -> ConnectionId {
    ConnectionId {
        local_port: SERVER_PORT,
        remote_port: CLIENT_PORT,
    }
}

/// A connection configuration with short timers for tests.
pub(super) fn config(ccid: Ccid, accepted: Vec<Ccid>) -> ConnectionConfig {
    ConnectionConfig {
        ccid,
        accepted_ccids: accepted,
        msl: Duration::from_secs(1),
        ..ConnectionConfig::default()
    }
}

pub(super) fn endpoint(connection: ConnectionConfig) -> EndpointConfig {
    EndpointConfig {
        connection,
        ..EndpointConfig::default()
    }
}

pub(super) fn millis(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

/// A pair with default configurations and `link`, and a client connection
/// opened at time zero.
pub(super) fn pair_with(
    client: ConnectionConfig,
    server: ConnectionConfig,
    link: LinkConfig,
) -> (Pair, ConnectionId) {
    let mut pair = Pair::new(endpoint(client), endpoint(server), link);
    let id = pair.connect(CLIENT_PORT, SERVER_PORT).unwrap();
    (pair, id)
}

/// Runs the pair until both ends are OPEN (or `limit`).
pub(super) fn open(pair: &mut Pair, id: ConnectionId, limit: Instant) -> bool {
    pair.run_until_with(limit, |p| {
        p.client.connection(id).map(|c| c.state()) == Some(State::Open)
            && p.server.connection(server_id()).map(|c| c.state()) == Some(State::Open)
    })
}

/// Every event an endpoint has.
pub(super) fn drain_events(endpoint: &mut Endpoint) -> Vec<(ConnectionId, Event)> {
    std::iter::from_fn(|| endpoint.poll_event()).collect()
}

/// A packet from `src` to `dst` (UDP-encapsulated checksum).
pub(super) fn packet(
    src: u16,
    dst: u16,
    seq: SeqNum,
    kind: PacketKind,
    options: Options,
    payload: &[u8],
) -> Vec<u8> {
    DccpRepr {
        src_port: src,
        dst_port: dst,
        ccval: 0,
        checksum_coverage: 0,
        short_seqno: false,
        seq,
        kind,
        options,
        payload,
    }
    .emit_to_vec(&ChecksumContext::UdpEncapsulated)
    .unwrap()
}

/// A packet from the server's port to the client's.
pub(super) fn from_server(seq: SeqNum, kind: PacketKind, payload: &[u8]) -> Vec<u8> {
    packet(SERVER_PORT, CLIENT_PORT, seq, kind, Options::new(), payload)
}

/// A packet from the client's port to the server's.
pub(super) fn from_client(seq: SeqNum, kind: PacketKind, payload: &[u8]) -> Vec<u8> {
    packet(CLIENT_PORT, SERVER_PORT, seq, kind, Options::new(), payload)
}
