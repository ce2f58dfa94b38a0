//! ECN on real sockets (RFC 3168 §5, RFC 4340 §12): two DCCP endpoints
//! driven over `UdpLink`s on loopback. Data leaves ECT(0) and is read as
//! ECT(0); the client's driver sets Congestion Experienced on one data
//! datagram in ten (as a marking router would), and the server reads CE,
//! delivers the data and counts the marks as losses in CCID 3's loss
//! history. Bounded by a deadline, which is not asserted on. The link
//! emulator forwards codepoints unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // a real-time test runs on the real clock

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use fairstream_net::clock::Clock;
use fairstream_net::ecn::EcnSocket;
use fairstream_net::emulate::{Emulator, EmulatorConfig};
use fairstream_net::link::{Incoming, UdpLink};
use fairstream_proto::conn::{
    Ccid, ConnectionConfig, ConnectionId, Endpoint, EndpointConfig, State,
};
use fairstream_proto::ecn::Ecn;
use fairstream_proto::wire::dccp::{ChecksumContext, DccpRepr, PacketType};

const DATAGRAMS: u64 = 400;
const MARK_EVERY: u64 = 10;

struct Side {
    endpoint: Endpoint,
    link: UdpLink,
    peer: SocketAddr,
}

fn is_data(bytes: &[u8]) -> bool {
    DccpRepr::parse_bytes(bytes, &ChecksumContext::UdpEncapsulated)
        .is_ok_and(|p| matches!(p.kind.packet_type(), PacketType::Data | PacketType::DataAck))
}

fn side(listen: bool) -> (UdpSocket, EndpointConfig) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let config = EndpointConfig {
        connection: ConnectionConfig {
            ccid: Ccid::Tfrc,
            accepted_ccids: vec![Ccid::Tfrc],
            msl: Duration::from_millis(200),
            ..ConnectionConfig::default()
        },
        listen,
        ..EndpointConfig::default()
    };
    (socket, config)
}

#[test]
fn ect0_and_ce_cross_loopback_and_ce_counts_as_loss() {
    let (client_socket, client_config) = side(false);
    let (server_socket, server_config) = side(true);
    let client_addr = client_socket.local_addr().unwrap();
    let server_addr = server_socket.local_addr().unwrap();
    let mut client = Side {
        endpoint: Endpoint::new(client_config),
        link: UdpLink::new(client_socket).unwrap(),
        peer: server_addr,
    };
    let mut server = Side {
        endpoint: Endpoint::new(server_config),
        link: UdpLink::new(server_socket).unwrap(),
        peer: client_addr,
    };
    let clock = Clock::new();
    let id: ConnectionId = client
        .endpoint
        .connect(clock.now(), 40_000, 5004, 0x1234_5678)
        .unwrap();
    let server_id = ConnectionId {
        local_port: 5004,
        remote_port: 40_000,
    };
    let bound = clock.now() + Duration::from_secs(30);
    let mut buf = Vec::new();
    let (mut queued, mut data_sent, mut marked, mut delivered) = (0u64, 0u64, 0u64, 0u64);
    // Codepoints the server read on data datagrams: (ECT(0), CE, other).
    let mut read = (0u64, 0u64, 0u64);
    let mut iss = 1u64;
    while delivered < DATAGRAMS && clock.now() < bound {
        let now = clock.now();
        for side in [&mut client, &mut server] {
            if side.endpoint.poll_timeout().is_some_and(|t| t <= now) {
                side.endpoint.handle_timeout(now);
            }
        }
        if let Some(conn) = client.endpoint.connection_mut(id) {
            while queued < DATAGRAMS
                && conn.state() == State::Open
                && conn.send_queue_len() < 8
                && conn.send(now, &queued.to_be_bytes().repeat(100)).is_ok()
            {
                queued += 1;
            }
        }
        while let Some((_, transmit)) = client.endpoint.poll_transmit(now, &mut buf) {
            let bytes = &buf[..transmit.len];
            let mut ecn = transmit.ecn;
            if is_data(bytes) {
                assert_eq!(ecn, Ecn::Ect0, "data leaves ECT(0)");
                data_sent += 1;
                if data_sent % MARK_EVERY == 0 {
                    ecn = Ecn::Ce;
                    marked += 1;
                }
            } else {
                assert_eq!(ecn, Ecn::NotEct);
            }
            client.link.send_to_ecn(bytes, client.peer, ecn).unwrap();
        }
        while let Some((_, transmit)) = server.endpoint.poll_transmit(now, &mut buf) {
            let bytes = &buf[..transmit.len];
            server
                .link
                .send_to_ecn(bytes, server.peer, transmit.ecn)
                .unwrap();
        }
        let deadline = [
            client.endpoint.poll_timeout(),
            server.endpoint.poll_timeout(),
            Some(now + Duration::from_millis(2)),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(now);
        let mut incoming = server.link.wait_coarse(&clock, deadline.max(now));
        while let Some(message) = incoming {
            if let Incoming::Datagram(_, bytes, ecn) = message {
                if is_data(&bytes) {
                    match ecn {
                        Ecn::Ect0 => read.0 += 1,
                        Ecn::Ce => read.1 += 1,
                        _ => read.2 += 1,
                    }
                }
                iss += 1;
                server
                    .endpoint
                    .handle_datagram_ecn(clock.now(), &bytes, ecn, iss);
            }
            incoming = server.link.try_recv();
        }
        while let Some(message) = client.link.try_recv() {
            if let Incoming::Datagram(_, bytes, ecn) = message {
                client
                    .endpoint
                    .handle_datagram_ecn(clock.now(), &bytes, ecn, 0);
            }
        }
        if let Some(conn) = server.endpoint.connection_mut(server_id) {
            while conn.recv().is_some() {
                delivered += 1;
            }
        }
    }
    let server_stats = server.endpoint.connection(server_id).unwrap().stats();
    let client_stats = client.endpoint.connection(id).unwrap().stats();
    eprintln!(
        "data sent {data_sent}, marked CE {marked}, read at the server: ECT(0) {}, CE {}, \
         other {}; delivered {delivered}; receiver p = {:.4}, sender p = {:.4}",
        read.0, read.1, read.2, server_stats.receive_loss_event_rate, client_stats.loss_event_rate
    );
    assert!(client_stats.ecn_capable && server_stats.ecn_capable);
    assert_eq!(
        delivered, DATAGRAMS,
        "every datagram delivered, marked or not"
    );
    assert_eq!(read, (data_sent - marked, marked, 0), "codepoints as sent");
    assert_eq!(server_stats.ce_marked_received, marked);
    assert_eq!(server_stats.data_losses, 0);
    assert!(
        server_stats.receive_loss_event_rate > 0.0,
        "marks are loss events"
    );
}

/// Receives one datagram on `socket` (5 s read timeout).
fn receive_one(socket: &EcnSocket) -> (SocketAddr, Ecn, Vec<u8>) {
    let mut buf = vec![0u8; 2048];
    let mut got = None;
    while got.is_none() {
        socket
            .recv(&mut buf, |from, ecn, bytes| {
                got.get_or_insert((from, ecn, bytes.to_vec()));
            })
            .unwrap();
    }
    got.unwrap()
}

/// The link emulator forwards each datagram with the codepoint it
/// received, both ways (a router that does not mark keeps the ECN field,
/// RFC 3168 §5).
#[test]
fn the_emulator_preserves_codepoints_both_ways() {
    let ecn_socket = || {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        EcnSocket::new(socket).unwrap()
    };
    let upstream = ecn_socket();
    let client = ecn_socket();
    let config = EmulatorConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        upstream.socket().local_addr().unwrap(),
    );
    let emulator = Emulator::bind(config).unwrap().spawn().unwrap();
    for codepoint in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
        let payload = [codepoint.bits(); 64];
        client
            .send_to(&payload, emulator.local_addr(), codepoint)
            .unwrap();
        let (emulator_side, forwarded, bytes) = receive_one(&upstream);
        assert_eq!((forwarded, &bytes[..]), (codepoint, &payload[..]));
        upstream
            .send_to(&payload, emulator_side, codepoint)
            .unwrap();
        let (_, back, bytes) = receive_one(&client);
        assert_eq!((back, &bytes[..]), (codepoint, &payload[..]));
    }
    emulator.stop().unwrap();
}
