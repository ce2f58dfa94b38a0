//! Orderly close (RFC 4340 §8.3), TIMEWAIT, and close retransmission.

use std::time::Duration;

use super::support::*;
use crate::conn::pair::{Direction, LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionId, Event, State};
use crate::time::Instant;
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, PacketType, ResetCode, SeqNum};

fn opened() -> (Pair, ConnectionId) {
    let (mut pair, id) = pair_with(
        config(Ccid::Tfrc, vec![]),
        config(Ccid::Tfrc, vec![]),
        LinkConfig::default(),
    );
    assert!(open(&mut pair, id, millis(1_000)));
    drain_events(&mut pair.client);
    drain_events(&mut pair.server);
    pair.record(true);
    (pair, id)
}

/// The packet types sent in `direction` since recording began.
fn types(pair: &Pair, direction: Direction) -> Vec<PacketKind> {
    pair.captured()
        .iter()
        .filter(|c| c.direction == direction)
        .map(|c| {
            DccpRepr::parse_bytes(&c.bytes, &ChecksumContext::UdpEncapsulated)
                .unwrap()
                .kind
        })
        .collect()
}

fn is_type(kind: &PacketKind, packet_type: PacketType) -> bool {
    kind.packet_type() == packet_type
}

#[test]
fn client_close_ends_with_the_client_in_timewait_until_it_expires() {
    let (mut pair, id) = opened();
    let now = pair.now();
    pair.client.connection_mut(id).unwrap().close(now);
    assert_eq!(pair.client.connection(id).unwrap().state(), State::Closing);
    let mut server_closed_at = None;
    pair.run_until_with(now + Duration::from_millis(500), |p| {
        if server_closed_at.is_none()
            && p.server.connection(server_id()).map(|c| c.state()) == Some(State::Closed)
        {
            server_closed_at = Some(p.now());
        }
        false
    });
    // Close from the client, Reset(Closed) from the server (§8.5 step 14).
    let sent = types(&pair, Direction::ClientToServer);
    assert!(is_type(&sent[0], PacketType::Close), "{sent:?}");
    let answers = types(&pair, Direction::ServerToClient);
    assert!(
        matches!(
            answers.last(),
            Some(PacketKind::Reset {
                code: ResetCode::Closed,
                ..
            })
        ),
        "{answers:?}"
    );
    assert!(server_closed_at.is_some());
    assert_eq!(
        drain_events(&mut pair.server),
        vec![(server_id(), Event::Closed)]
    );
    // The server connection is gone once its events were read.
    pair.run_until(pair.now() + Duration::from_millis(10));
    assert!(pair.server.connection(server_id()).is_none());
    // The client holds TIMEWAIT for 2·MSL (2 s here), then closes.
    let client = pair.client.connection(id).unwrap();
    assert_eq!(client.state(), State::TimeWait);
    assert_eq!(drain_events(&mut pair.client), vec![(id, Event::Closed)]);
    let entered = pair.now();
    pair.run_until(now + Duration::from_millis(1_900));
    assert_eq!(pair.client.connection(id).unwrap().state(), State::TimeWait);
    pair.run_until(entered + Duration::from_millis(2_100));
    assert!(
        pair.client.connection(id).is_none(),
        "TIMEWAIT expired and the connection was dropped"
    );
}

#[test]
fn server_close_uses_closereq_so_that_the_client_holds_timewait() {
    let (mut pair, id) = opened();
    let now = pair.now();
    pair.server.connection_mut(server_id()).unwrap().close(now);
    assert_eq!(
        pair.server.connection(server_id()).unwrap().state(),
        State::CloseReq
    );
    pair.run_until(now + Duration::from_millis(500));
    let server_sent = types(&pair, Direction::ServerToClient);
    assert!(
        is_type(&server_sent[0], PacketType::CloseReq),
        "{server_sent:?}"
    );
    assert!(matches!(
        server_sent.last(),
        Some(PacketKind::Reset {
            code: ResetCode::Closed,
            ..
        })
    ));
    let client_sent = types(&pair, Direction::ClientToServer);
    assert!(
        client_sent.iter().any(|k| is_type(k, PacketType::Close)),
        "the client answers CloseReq with Close (§8.5 step 13): {client_sent:?}"
    );
    assert_eq!(
        drain_events(&mut pair.server),
        vec![(server_id(), Event::Closed)]
    );
    assert_eq!(drain_events(&mut pair.client), vec![(id, Event::Closed)]);
    assert_eq!(pair.client.connection(id).unwrap().state(), State::TimeWait);
    pair.run_until(now + Duration::from_secs(3));
    assert!(pair.client.connection(id).is_none());
    assert!(pair.server.connection(server_id()).is_none());
}

#[test]
fn close_sends_the_queued_data_first() {
    let (mut pair, id) = opened();
    let now = pair.now();
    let conn = pair.client.connection_mut(id).unwrap();
    for i in 0..10u8 {
        conn.send(now, &[i; 100]).unwrap();
    }
    conn.close(now);
    assert_eq!(conn.state(), State::Open, "the close waits for the queue");
    assert!(conn.send(now, &[0; 10]).is_err(), "no new data after close");
    let mut received = Vec::new();
    pair.run_with(now + Duration::from_secs(5), |p| {
        if let Some(server) = p.server.connection_mut(server_id()) {
            received.extend(std::iter::from_fn(|| server.recv()).map(|d| d[0]));
        }
    });
    assert_eq!(received, (0..10).collect::<Vec<u8>>());
    assert!(
        pair.client.connection(id).is_none()
            || pair.client.connection(id).unwrap().state() >= State::TimeWait
    );
}

#[test]
fn close_is_retransmitted_with_backoff_then_given_up() {
    let (mut pair, id) = opened();
    pair.set_drop_filter(|_, direction, _| direction == Direction::ClientToServer);
    let now = pair.now();
    pair.client.connection_mut(id).unwrap().close(now);
    pair.run_until(now + Duration::from_secs(12));
    let closes: Vec<Instant> = pair
        .captured()
        .iter()
        .filter(|c| c.direction == Direction::ClientToServer)
        .filter(|c| {
            DccpRepr::parse_bytes(&c.bytes, &ChecksumContext::UdpEncapsulated)
                .unwrap()
                .kind
                .packet_type()
                == PacketType::Close
        })
        .map(|c| c.at)
        .collect();
    // Sent at 0, then after 1, 2 and 4 s (backoff), and given up at 10 s.
    let gaps: Vec<Duration> = closes.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(
        gaps,
        vec![
            Duration::from_secs(1),
            Duration::from_secs(2),
            Duration::from_secs(4)
        ]
    );
    let events = drain_events(&mut pair.client);
    assert_eq!(events, vec![(id, Event::Closed)]);
}

#[test]
fn timewait_answers_packets_with_reset_no_connection() {
    let (mut pair, id) = opened();
    let now = pair.now();
    pair.client.connection_mut(id).unwrap().close(now);
    pair.run_until(now + Duration::from_millis(200));
    assert_eq!(pair.client.connection(id).unwrap().state(), State::TimeWait);
    // A stray packet from the server's port pair.
    let stray = from_server(
        SeqNum::new(77),
        PacketKind::Ack {
            ack: SeqNum::new(5),
        },
        &[],
    );
    let before = pair.captured().len();
    pair.inject(Direction::ServerToClient, &stray);
    let reply = &pair.captured()[before..];
    assert_eq!(reply.len(), 1);
    let reset = DccpRepr::parse_bytes(&reply[0].bytes, &ChecksumContext::UdpEncapsulated).unwrap();
    // RFC 4340 §8.5: "R.seqno := P.ackno + 1", "R.ackno := P.seqno".
    assert_eq!(reset.seq, SeqNum::new(6));
    assert!(matches!(
        reset.kind,
        PacketKind::Reset {
            code: ResetCode::NoConnection,
            ack,
            ..
        } if ack == SeqNum::new(77)
    ));
    // Never a Reset in answer to a Reset.
    let before = pair.captured().len();
    pair.inject(Direction::ServerToClient, &reply[0].bytes.clone());
    assert_eq!(pair.captured().len(), before);
}
