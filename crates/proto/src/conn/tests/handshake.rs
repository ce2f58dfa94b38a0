//! The three-way handshake and CCID negotiation (RFC 4340 §8.1, §6).

use super::support::*;
use crate::conn::pair::{Direction, LinkConfig};
use crate::conn::{Ccid, ConnectionConfig, Event, State};
use crate::time::Instant;
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, PacketType, ResetCode};
use crate::wire::options::{feature_number, kind};

/// Runs a handshake and returns the states each side went through and the
/// events.
fn handshake(
    client: ConnectionConfig,
    server: ConnectionConfig,
) -> (Vec<State>, Vec<State>, Vec<Event>, Vec<Event>) {
    let (mut pair, id) = pair_with(client, server, LinkConfig::default());
    let mut client_states = vec![];
    let mut server_states = vec![];
    let mut client_events = vec![];
    let mut server_events = vec![];
    pair.run_with(millis(2_000), |p| {
        if let Some(c) = p.client.connection(id) {
            if client_states.last() != Some(&c.state()) {
                client_states.push(c.state());
            }
        }
        if let Some(s) = p.server.connection(server_id()) {
            if server_states.last() != Some(&s.state()) {
                server_states.push(s.state());
            }
        }
        client_events.extend(drain_events(&mut p.client).into_iter().map(|(_, e)| e));
        server_events.extend(drain_events(&mut p.server).into_iter().map(|(_, e)| e));
    });
    assert_eq!(pair.stalls(), 0);
    (client_states, server_states, client_events, server_events)
}

#[test]
fn handshake_reaches_open_with_ccid_3_by_default() {
    let (client_states, server_states, client_events, server_events) = handshake(
        config(Ccid::Tfrc, vec![Ccid::Tfrc, Ccid::Ccid2, Ccid::TfrcSp]),
        ConnectionConfig::default(),
    );
    assert_eq!(
        client_states,
        vec![State::Request, State::PartOpen, State::Open]
    );
    assert_eq!(server_states, vec![State::Respond, State::Open]);
    let connected = Event::Connected {
        ccid: Ccid::Tfrc,
        peer_ccid: Ccid::Tfrc,
    };
    assert_eq!(client_events, vec![connected.clone()]);
    assert_eq!(server_events, vec![connected]);
}

#[test]
fn handshake_negotiates_ccid_2_and_ccid_4_when_asked() {
    for ccid in [Ccid::Ccid2, Ccid::TfrcSp] {
        let (client_states, server_states, client_events, server_events) =
            handshake(config(ccid, vec![ccid]), ConnectionConfig::default());
        assert_eq!(client_states.last(), Some(&State::Open), "{ccid}");
        assert_eq!(server_states.last(), Some(&State::Open), "{ccid}");
        let connected = Event::Connected {
            ccid,
            peer_ccid: ccid,
        };
        assert_eq!(client_events, vec![connected.clone()], "{ccid}");
        assert_eq!(server_events, vec![connected], "{ccid}");
    }
}

#[test]
fn a_ccid_the_server_does_not_accept_is_refused_with_a_reset_naming_it() {
    let server = ConnectionConfig {
        accepted_ccids: vec![Ccid::Tfrc, Ccid::Ccid2],
        ..ConnectionConfig::default()
    };
    let (client_states, server_states, client_events, _) =
        handshake(config(Ccid::TfrcSp, vec![Ccid::TfrcSp]), server);
    assert!(server_states.is_empty(), "no server connection is created");
    // RFC 4340 §8.5 step 9: a valid Reset sends the client to TIMEWAIT.
    assert_eq!(client_states, vec![State::Request, State::TimeWait]);
    assert_eq!(
        client_events,
        vec![Event::Reset {
            code: ResetCode::OptionError,
            data: [kind::CHANGE_L, feature_number::CCID, 4],
            by_peer: true,
        }]
    );
}

#[test]
fn a_wrong_service_code_is_refused_with_bad_service_code() {
    let server = ConnectionConfig {
        service_code: 0x1234_5678,
        ..ConnectionConfig::default()
    };
    let (_, server_states, client_events, _) = handshake(config(Ccid::Tfrc, vec![]), server);
    assert!(server_states.is_empty());
    assert_eq!(
        client_events,
        vec![Event::Reset {
            code: ResetCode::BadServiceCode,
            data: [0; 3],
            by_peer: true,
        }]
    );
}

fn kinds_sent(pair: &crate::conn::pair::Pair, direction: Direction) -> Vec<(Instant, PacketKind)> {
    pair.captured()
        .iter()
        .filter(|c| c.direction == direction)
        .map(|c| {
            let kind = DccpRepr::parse_bytes(&c.bytes, &ChecksumContext::UdpEncapsulated)
                .unwrap()
                .kind;
            (c.at, kind)
        })
        .collect()
}

#[test]
fn requests_back_off_exponentially_then_the_handshake_times_out() {
    let mut pair = crate::conn::pair::Pair::new(
        endpoint(config(Ccid::Tfrc, vec![])),
        endpoint(ConnectionConfig::default()),
        LinkConfig::default(),
    );
    pair.record(true);
    pair.set_drop_filter(|_, direction, _| direction == Direction::ClientToServer);
    let id = pair.connect(CLIENT_PORT, SERVER_PORT).unwrap();
    let mut events = Vec::new();
    pair.run_with(millis(15_000), |p| {
        events.extend(drain_events(&mut p.client))
    });
    let sent = kinds_sent(&pair, Direction::ClientToServer);
    let requests: Vec<Instant> = sent
        .iter()
        .filter(|(_, k)| k.packet_type() == PacketType::Request)
        .map(|(at, _)| *at)
        .collect();
    // RFC 4340 §8.1.1: first retransmission after about one second, then
    // exponential backoff; config.handshake_timeout (10 s) ends it.
    assert_eq!(
        requests,
        vec![millis(0), millis(1_000), millis(3_000), millis(7_000)]
    );
    assert_eq!(events, vec![(id, Event::HandshakeTimeout)]);
    // "it SHOULD send a DCCP-Reset packet to the server with Reset Code 2".
    let (at, last) = sent.last().unwrap();
    assert_eq!(*at, millis(10_000));
    assert!(matches!(
        last,
        PacketKind::Reset {
            code: ResetCode::Aborted,
            ..
        }
    ));
    assert!(
        pair.client.connection(id).is_none(),
        "the connection is gone"
    );
}

#[test]
fn a_lost_response_is_repaired_by_the_retransmitted_request() {
    let (mut pair, id) = pair_with(
        config(Ccid::Tfrc, vec![]),
        ConnectionConfig::default(),
        LinkConfig::default(),
    );
    pair.record(true);
    let mut first = true;
    pair.set_drop_filter(move |_, direction, _| {
        let drop = first && direction == Direction::ServerToClient;
        if drop {
            first = false;
        }
        drop
    });
    assert!(open(&mut pair, id, millis(3_000)));
    let responses: Vec<Instant> = kinds_sent(&pair, Direction::ServerToClient)
        .into_iter()
        .filter(|(_, k)| k.packet_type() == PacketType::Response)
        .map(|(at, _)| at)
        .collect();
    // RFC 4340 §8.5 step 11: a Request in RESPOND gets another Response.
    assert_eq!(responses, vec![millis(20), millis(1_020)]);
    // The handshake RTT comes from the Request the Response acknowledges.
    let rtt = pair.client.connection(id).unwrap().stats().rtt.unwrap();
    assert_eq!(rtt, std::time::Duration::from_millis(40));
}
