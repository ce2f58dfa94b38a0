//! Stateless handshakes with Init Cookies (RFC 4340 §8.1.4): the listening
//! endpoint keeps nothing for a Request, answers no larger than what came,
//! and makes the connection from the client's echoed cookie.

use std::time::Duration;

use super::support::*;
use crate::conn::pair::{Direction, LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionConfig, CookieConfig, Endpoint, EndpointConfig, State};
use crate::ecn::Ecn;
use crate::wire::dccp::{DccpRepr, PacketKind, PacketType, ResetCode};
use crate::wire::options::{DccpOption, Options};

fn cookies() -> CookieConfig {
    CookieConfig {
        secret: [0x5a; 32],
        lifetime: Duration::from_secs(10),
    }
}

/// A client padding its Requests to `request_min_len`, and a stateless
/// server.
fn stateless_pair(request_min_len: usize) -> Pair {
    let client = ConnectionConfig {
        request_min_len,
        ..config(Ccid::Tfrc, vec![])
    };
    let server = EndpointConfig {
        cookies: Some(cookies()),
        ..endpoint(ConnectionConfig::default())
    };
    let mut pair = Pair::new(endpoint(client), server, LinkConfig::default());
    pair.record(true);
    pair
}

fn sent(pair: &Pair, direction: Direction, kind: PacketType) -> Vec<Vec<u8>> {
    let context = ConnectionConfig::default().checksum.receive_context();
    pair.captured()
        .iter()
        .filter(|c| c.direction == direction)
        .filter(|c| {
            DccpRepr::parse_bytes(&c.bytes, &context).is_ok_and(|p| p.kind.packet_type() == kind)
        })
        .map(|c| c.bytes.clone())
        .collect()
}

#[test]
fn a_padded_client_opens_a_connection_the_server_made_only_from_its_cookie() {
    let mut pair = stateless_pair(512);
    let id = pair.connect(CLIENT_PORT, SERVER_PORT).unwrap();
    // The Request has arrived and been answered (one-way delay 20 ms):
    // the server holds nothing.
    pair.run_until(millis(30));
    assert_eq!(pair.server.len(), 0);
    assert_eq!(pair.server.stats().cookies_sent, 1);
    let requests = sent(&pair, Direction::ClientToServer, PacketType::Request);
    let responses = sent(&pair, Direction::ServerToClient, PacketType::Response);
    assert_eq!(requests[0].len(), 512);
    eprintln!(
        "request {} bytes, response {} bytes",
        requests[0].len(),
        responses[0].len()
    );
    assert!(
        responses[0].len() <= requests[0].len(),
        "{}",
        responses[0].len()
    );
    assert!(open(&mut pair, id, millis(2_000)));
    assert_eq!(pair.server.stats().cookies_accepted, 1);
    assert_eq!(pair.server.stats().accepted, 1);
    // The rebuilt connection measured the handshake RTT from the cookie's
    // time: 40 ms, not zero.
    let rtt = pair.server.connection(server_id()).unwrap().stats().rtt;
    assert_eq!(rtt, Some(Duration::from_millis(40)));
    // Data flows both ways.
    let now = pair.now();
    pair.client
        .connection_mut(id)
        .unwrap()
        .send(now, b"hello")
        .unwrap();
    pair.run_until(now + Duration::from_millis(200));
    let conn = pair.server.connection_mut(server_id()).unwrap();
    assert_eq!(conn.recv(), Some(b"hello".to_vec()));
    // The client echoed the cookie only while PARTOPEN, and sent no data
    // before OPEN.
    let context = ConnectionConfig::default().checksum.receive_context();
    for bytes in sent(&pair, Direction::ClientToServer, PacketType::DataAck)
        .iter()
        .chain(&sent(&pair, Direction::ClientToServer, PacketType::Data))
    {
        let packet = DccpRepr::parse_bytes(bytes, &context).unwrap();
        assert!(packet.options.find(36).is_none());
    }
}

#[test]
fn a_request_smaller_than_the_answer_gets_none() {
    let mut pair = stateless_pair(0);
    let id = pair.connect(CLIENT_PORT, SERVER_PORT).unwrap();
    pair.run_until(millis(3_000));
    assert_eq!(pair.server.len(), 0);
    assert!(pair.server.stats().unanswered_small >= 1);
    assert!(sent(&pair, Direction::ServerToClient, PacketType::Response).is_empty());
    assert_eq!(pair.client.connection(id).unwrap().state(), State::Request);
}

#[test]
fn requests_from_strangers_leave_no_state() {
    let client = EndpointConfig {
        max_connections: 1024,
        ..endpoint(ConnectionConfig {
            request_min_len: 512,
            ..ConnectionConfig::default()
        })
    };
    let server = EndpointConfig {
        cookies: Some(cookies()),
        ..endpoint(ConnectionConfig::default())
    };
    let mut pair = Pair::new(client, server, LinkConfig::default());
    for i in 0..500u16 {
        pair.connect(CLIENT_PORT + i, SERVER_PORT).unwrap();
    }
    // Every Request is answered; none is remembered.
    pair.run_until(millis(30));
    assert_eq!(pair.server.len(), 0);
    assert!(pair.server.stats().cookies_sent >= 64);
}

/// The Ack a client sends in PARTOPEN, from a recorded run.
fn partopen_ack(pair: &Pair) -> Vec<u8> {
    let context = ConnectionConfig::default().checksum.receive_context();
    sent(pair, Direction::ClientToServer, PacketType::Ack)
        .into_iter()
        .find(|b| DccpRepr::parse_bytes(b, &context).is_ok_and(|p| p.options.find(36).is_some()))
        .unwrap()
}

#[test]
fn a_forged_or_altered_or_misplaced_cookie_makes_no_connection() {
    let mut pair = stateless_pair(512);
    let id = pair.connect(CLIENT_PORT, SERVER_PORT).unwrap();
    assert!(open(&mut pair, id, millis(2_000)));
    let ack = partopen_ack(&pair);
    let context = ConnectionConfig::default().checksum.receive_context();
    let send = ConnectionConfig::default().checksum.send_context();
    let now = pair.now();
    // A fresh stateless server with the same secret.
    let mut server = Endpoint::new(EndpointConfig {
        listen: true,
        cookies: Some(cookies()),
        ..endpoint(ConnectionConfig::default())
    });
    // The real Ack from another address: refused.
    assert_eq!(
        server.handle_datagram_from(now, &ack, Ecn::NotEct, 1, b"elsewhere"),
        None
    );
    assert_eq!(server.stats().bad_cookies, 1);
    // The cookie altered.
    let mut repr = DccpRepr::parse_bytes(&ack, &context).unwrap();
    let mut options = Options::new();
    for option in repr.options.iter() {
        options
            .push(match option {
                DccpOption::InitCookie(c) => {
                    let mut c = c.clone();
                    c[10] ^= 1;
                    DccpOption::InitCookie(c)
                }
                other => other.clone(),
            })
            .unwrap();
    }
    repr.options = options;
    let altered = repr.emit_to_vec(&send).unwrap();
    assert_eq!(server.handle_datagram(now, &altered, 1), None);
    assert_eq!(server.stats().bad_cookies, 2);
    // The real cookie on an Ack for other ports.
    let mut moved = DccpRepr::parse_bytes(&ack, &context).unwrap();
    moved.src_port += 1;
    let moved = moved.emit_to_vec(&send).unwrap();
    assert_eq!(server.handle_datagram(now, &moved, 1), None);
    assert_eq!(server.stats().bad_cookies, 3);
    assert_eq!(server.len(), 0);
    // Each was answered with Reset(Bad Init Cookie), no larger than the Ack.
    let mut buf = Vec::new();
    let mut resets = 0;
    while let Some((None, transmit)) = server.poll_transmit(now, &mut buf) {
        let reset = DccpRepr::parse_bytes(&buf, &context).unwrap();
        assert!(matches!(
            reset.kind,
            PacketKind::Reset {
                code: ResetCode::BadInitCookie,
                ..
            }
        ));
        assert!(transmit.len <= ack.len());
        resets += 1;
    }
    assert_eq!(resets, 3);
    // The real Ack's numbers, from the right address only.
    assert_eq!(server.peek_cookie(now, &ack, b"elsewhere"), None);
    assert_eq!(server.peek_cookie(now, &altered, &[]), None);
    let (request_seq, server_iss) = server.peek_cookie(now, &ack, &[]).unwrap();
    let client = pair.client.connection(id).unwrap().sequence_numbers();
    assert_eq!(request_seq, client.iss);
    assert_eq!(Some(server_iss), client.isr);
    // And the real Ack, from the right address, within the lifetime: a
    // connection.
    assert!(server.handle_datagram(now, &ack, 1).is_some());
    assert_eq!(server.peek_cookie(now, &ack, &[]), None);
    assert_eq!(server.len(), 1);
}

#[test]
fn an_expired_cookie_makes_no_connection() {
    let mut pair = stateless_pair(512);
    let id = pair.connect(CLIENT_PORT, SERVER_PORT).unwrap();
    assert!(open(&mut pair, id, millis(2_000)));
    let ack = partopen_ack(&pair);
    let mut server = Endpoint::new(EndpointConfig {
        listen: true,
        cookies: Some(cookies()),
        ..endpoint(ConnectionConfig::default())
    });
    let late = millis(10_100);
    assert_eq!(server.handle_datagram(late, &ack, 1), None);
    assert_eq!(server.stats().bad_cookies, 1);
    assert_eq!(server.len(), 0);
    assert!(std::iter::from_fn(|| server.poll_event()).next().is_none());
}
