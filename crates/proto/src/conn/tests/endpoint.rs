//! The endpoint: several connections on one UDP port pair (RFC 6773), the
//! LISTEN state's limits, native checksums, and the application API.

use std::net::Ipv4Addr;
use std::time::Duration;

use super::support::*;
use crate::conn::pair::{Direction, LinkConfig, Pair};
use crate::conn::{
    Ccid, ChecksumMode, ConnectionConfig, ConnectionId, Endpoint, EndpointConfig, EndpointError,
    Event, SendError, State,
};
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, PseudoHeader, ResetCode, SeqNum};

#[test]
fn connections_sharing_one_udp_port_pair_are_kept_apart_by_dccp_ports() {
    let mut pair = Pair::new(
        endpoint(config(Ccid::Tfrc, vec![])),
        endpoint(ConnectionConfig::default()),
        LinkConfig::default(),
    );
    let ids: Vec<ConnectionId> = (0..3)
        .map(|i| pair.connect(CLIENT_PORT + i, SERVER_PORT).unwrap())
        .collect();
    assert_eq!(
        pair.connect(CLIENT_PORT, SERVER_PORT),
        Err(EndpointError::PortsInUse(ids[0]))
    );
    pair.run_until(millis(500));
    let now = pair.now();
    for (i, id) in ids.iter().enumerate() {
        let conn = pair.client.connection_mut(*id).unwrap();
        assert_eq!(conn.state(), State::Open);
        conn.send(now, &[i as u8; 10]).unwrap();
    }
    pair.run_until(now + Duration::from_millis(500));
    assert_eq!(pair.server.len(), 3);
    for (i, id) in ids.iter().enumerate() {
        let server_side = ConnectionId {
            local_port: SERVER_PORT,
            remote_port: id.local_port,
        };
        let conn = pair.server.connection_mut(server_side).unwrap();
        assert_eq!(conn.recv(), Some(vec![i as u8; 10]));
        assert_eq!(conn.recv(), None);
    }
}

#[test]
fn a_full_endpoint_refuses_requests_with_too_busy() {
    let server = EndpointConfig {
        max_connections: 1,
        ..endpoint(ConnectionConfig::default())
    };
    let mut pair = Pair::new(
        endpoint(config(Ccid::Tfrc, vec![])),
        server,
        LinkConfig::default(),
    );
    let first = pair.connect(CLIENT_PORT, SERVER_PORT).unwrap();
    let second = pair.connect(CLIENT_PORT + 1, SERVER_PORT).unwrap();
    pair.run_until(millis(500));
    assert_eq!(pair.client.connection(first).unwrap().state(), State::Open);
    let events = drain_events(&mut pair.client);
    assert!(events.contains(&(
        second,
        Event::Reset {
            code: ResetCode::TooBusy,
            data: [0; 3],
            by_peer: true
        }
    )));
    assert_eq!(pair.server.stats().refused, 1);
}

#[test]
fn native_checksums_work_end_to_end_and_verify_with_the_pseudo_header() {
    let client_address = Ipv4Addr::new(10, 0, 0, 1);
    let server_address = Ipv4Addr::new(10, 0, 0, 2);
    let native = ChecksumMode::NativeV4 {
        local: client_address,
        remote: server_address,
    };
    let client = ConnectionConfig {
        checksum: native,
        ..config(Ccid::Tfrc, vec![])
    };
    let server = ConnectionConfig {
        checksum: native.reversed(),
        ..ConnectionConfig::default()
    };
    let (mut pair, id) = pair_with(client, server, LinkConfig::default());
    pair.record(true);
    assert!(open(&mut pair, id, millis(1_000)));
    let now = pair.now();
    pair.client
        .connection_mut(id)
        .unwrap()
        .send(now, b"checked")
        .unwrap();
    pair.run_until(now + Duration::from_millis(200));
    assert_eq!(
        pair.server.connection_mut(server_id()).unwrap().recv(),
        Some(b"checked".to_vec())
    );
    // Every packet carries a real checksum over the IPv4 pseudo-header
    // (protocol 33), as Wireshark checks it.
    for c in pair.captured() {
        let (src, dst) = match c.direction {
            Direction::ClientToServer => (client_address, server_address),
            Direction::ServerToClient => (server_address, client_address),
        };
        let context = ChecksumContext::PseudoHeader(PseudoHeader::native_v4(src, dst));
        assert!(DccpRepr::parse_bytes(&c.bytes, &context).is_ok());
        let elsewhere = Ipv4Addr::new(192, 0, 2, 7);
        let wrong = ChecksumContext::PseudoHeader(PseudoHeader::native_v4(src, elsewhere));
        assert!(DccpRepr::parse_bytes(&c.bytes, &wrong).is_err());
    }
    // A packet with a wrong checksum is counted and dropped.
    let mut bad = pair
        .captured()
        .iter()
        .find(|c| c.direction == Direction::ClientToServer)
        .unwrap()
        .bytes
        .clone();
    bad[6] ^= 0xFF;
    let before = pair
        .server
        .connection(server_id())
        .unwrap()
        .stats()
        .malformed_dropped;
    pair.inject(Direction::ClientToServer, &bad);
    let after = pair
        .server
        .connection(server_id())
        .unwrap()
        .stats()
        .malformed_dropped;
    assert_eq!(after, before + 1);
}

#[test]
fn send_refuses_what_it_cannot_queue_and_names_why() {
    let client = ConnectionConfig {
        send_queue_packets: 2,
        max_packet_size: 100,
        ..config(Ccid::Tfrc, vec![])
    };
    let (mut pair, id) = pair_with(client, ConnectionConfig::default(), LinkConfig::default());
    let now = pair.now();
    let conn = pair.client.connection_mut(id).unwrap();
    let max = conn.max_payload();
    assert_eq!(max, 100 - crate::conn::DATA_PACKET_OVERHEAD);
    assert_eq!(
        conn.send(now, &vec![0; max + 1]),
        Err(SendError::TooBig { len: max + 1, max })
    );
    conn.send(now, &[1]).unwrap();
    conn.send(now, &[2]).unwrap();
    assert_eq!(
        conn.send(now, &[3]),
        Err(SendError::QueueFull { capacity: 2 })
    );
    conn.abort(now);
    assert_eq!(conn.send(now, &[4]), Err(SendError::NotOpen(State::Closed)));
}

#[test]
fn a_full_receive_queue_drops_the_oldest_and_says_so() {
    let server = ConnectionConfig {
        recv_queue_packets: 4,
        ..ConnectionConfig::default()
    };
    let (mut pair, id) = pair_with(config(Ccid::Tfrc, vec![]), server, LinkConfig::default());
    assert!(open(&mut pair, id, millis(1_000)));
    drain_events(&mut pair.server);
    let mut next = 0u8;
    pair.run_with(pair.now() + Duration::from_secs(3), |p| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while next < 10 && conn.send(now, &[next]).is_ok() {
                next += 1;
            }
        }
    });
    let conn = pair.server.connection_mut(server_id()).unwrap();
    let received: Vec<u8> = std::iter::from_fn(|| conn.recv()).map(|d| d[0]).collect();
    assert_eq!(received, vec![6, 7, 8, 9]);
    assert_eq!(conn.stats().recv_queue_dropped, 6);
    assert_eq!(
        drain_events(&mut pair.server),
        vec![(server_id(), Event::DatagramsDropped { count: 6 })]
    );
    let _ = PacketKind::Data;
}

#[test]
fn a_refused_request_gets_a_reset_the_client_accepts() {
    let mut client = Endpoint::new(endpoint(config(Ccid::Tfrc, vec![])));
    let server = Endpoint::new(EndpointConfig {
        listen: true,
        ..endpoint(ConnectionConfig::default())
    });
    let id = client
        .connect(millis(0), CLIENT_PORT, SERVER_PORT, 7)
        .unwrap();
    let mut request = Vec::new();
    client.poll_transmit(millis(0), &mut request).unwrap();
    // Only a Request is refused this way.
    let not_a_request = from_client(
        SeqNum::new(1),
        PacketKind::Ack {
            ack: SeqNum::new(1),
        },
        &[],
    );
    assert_eq!(
        server.refuse_request(&not_a_request, ResetCode::TooBusy),
        None
    );
    assert_eq!(server.refuse_request(&[1, 2, 3], ResetCode::TooBusy), None);
    let reset = server.refuse_request(&request, ResetCode::TooBusy).unwrap();
    client.handle_datagram(millis(1), &reset, 0);
    assert!(drain_events(&mut client).contains(&(
        id,
        Event::Reset {
            code: ResetCode::TooBusy,
            data: [0; 3],
            by_peer: true
        }
    )));
    // The server kept nothing of it.
    assert!(server.is_empty());
}
