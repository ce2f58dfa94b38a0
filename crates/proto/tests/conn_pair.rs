//! The DCCP connection API from outside the crate: an in-memory pair of
//! endpoints with natively checksummed packets, recorded and written as a
//! pcap stream (the shape of a Wireshark test).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure

use std::net::Ipv4Addr;
use std::time::Duration;

use fairstream_proto::capture::{PcapWriter, IPPROTO_DCCP};
use fairstream_proto::conn::pair::{Direction, LinkConfig, Pair};
use fairstream_proto::conn::{
    Ccid, ChecksumMode, ConnectionConfig, ConnectionId, EndpointConfig, Event, State,
};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::dccp::{ChecksumContext, DccpRepr, PacketType, PseudoHeader};

const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

fn endpoint(checksum: ChecksumMode) -> EndpointConfig {
    EndpointConfig {
        connection: ConnectionConfig {
            checksum,
            msl: Duration::from_millis(500),
            ..ConnectionConfig::default()
        },
        ..EndpointConfig::default()
    }
}

#[test]
fn a_recorded_session_opens_transfers_closes_and_writes_as_pcap() {
    let native = ChecksumMode::NativeV4 {
        local: CLIENT,
        remote: SERVER,
    };
    let mut pair = Pair::new(
        endpoint(native),
        endpoint(native.reversed()),
        LinkConfig {
            delay: Duration::from_millis(10),
            ..LinkConfig::default()
        },
    );
    pair.record(true);
    let id = pair.connect(40_000, 5004).unwrap();
    let server_id = ConnectionId {
        local_port: 5004,
        remote_port: 40_000,
    };
    let mut sent = 0u32;
    let mut received = 0u32;
    pair.run_with(Instant::from_millis(1_000), |p| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while sent < 50
                && conn.state() <= State::Open
                && conn.send(now, &sent.to_be_bytes()).is_ok()
            {
                sent += 1;
            }
        }
        if let Some(conn) = p.server.connection_mut(server_id) {
            while conn.recv().is_some() {
                received += 1;
            }
        }
    });
    assert_eq!(received, 50);
    let now = pair.now();
    pair.client.connection_mut(id).unwrap().close(now);
    pair.run_until(now + Duration::from_secs(2));
    let client_events: Vec<Event> = std::iter::from_fn(|| pair.client.poll_event())
        .map(|(_, e)| e)
        .collect();
    assert_eq!(
        client_events,
        vec![
            Event::Connected {
                ccid: Ccid::Tfrc,
                peer_ccid: Ccid::Tfrc
            },
            Event::Closed
        ]
    );
    // Every packet went out with its RFC 4340 §9 checksum; the session
    // writes as native DCCP in IPv4.
    let mut pcap = PcapWriter::new(Vec::new()).unwrap();
    let mut types = Vec::new();
    for c in pair.captured() {
        let (src, dst) = match c.direction {
            Direction::ClientToServer => (CLIENT, SERVER),
            Direction::ServerToClient => (SERVER, CLIENT),
        };
        let context = ChecksumContext::PseudoHeader(PseudoHeader::native_v4(src, dst));
        types.push(
            DccpRepr::parse_bytes(&c.bytes, &context)
                .unwrap()
                .kind
                .packet_type(),
        );
        pcap.write_ipv4(c.at, src, dst, IPPROTO_DCCP, &c.bytes)
            .unwrap();
    }
    assert_eq!(pcap.packets(), pair.captured().len() as u64);
    if let Ok(path) = std::env::var("FAIRSTREAM_CONN_PCAP") {
        std::fs::write(path, pcap.into_inner().unwrap()).unwrap();
    }
    assert_eq!(
        &types[..3],
        &[PacketType::Request, PacketType::Response, PacketType::Ack]
    );
    assert!(types.contains(&PacketType::Close));
    assert_eq!(types.last(), Some(&PacketType::Reset));
}
