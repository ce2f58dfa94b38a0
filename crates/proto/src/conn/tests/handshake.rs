//! The three-way handshake and CCID negotiation (RFC 4340 §8.1, §6).

use super::support::*;
use crate::conn::pair::LinkConfig;
use crate::conn::{Ccid, ConnectionConfig, Event, State};
use crate::wire::dccp::ResetCode;
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
