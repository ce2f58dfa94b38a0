//! Feature negotiation on the wire (RFC 4340 §6): Sequence Window, Ack
//! Ratio, the experimental CCID, and PARTOPEN's acknowledgements.

use std::time::Duration;

use super::support::*;
use crate::conn::pair::{Direction, LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionConfig, Event, State};
use crate::time::Instant;
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, PacketType, SeqNum};
use crate::wire::options::{DccpOption, Feature};

fn parsed(pair: &Pair, direction: Direction) -> Vec<(Instant, DccpRepr<'_>)> {
    pair.captured()
        .iter()
        .filter(|c| c.direction == direction)
        .map(|c| {
            (
                c.at,
                DccpRepr::parse_bytes(&c.bytes, &ChecksumContext::UdpEncapsulated).unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_peers_sequence_window_sets_the_valid_sequence_number_window() {
    let client = ConnectionConfig {
        sequence_window: 400,
        ..config(Ccid::Tfrc, vec![])
    };
    let (mut pair, id) = pair_with(client, ConnectionConfig::default(), LinkConfig::default());
    assert!(open(&mut pair, id, millis(1_000)));
    // RFC 4340 §7.5.1: SWH = GSR + floor(3W/4), W the client's window.
    let server = pair
        .server
        .connection(server_id())
        .unwrap()
        .sequence_numbers();
    let gsr = server.gsr.unwrap();
    assert_eq!(gsr.distance(server.swh.unwrap()), 300);
    // The client validates the server with the server's default window.
    let client = pair.client.connection(id).unwrap().sequence_numbers();
    assert_eq!(client.gsr.unwrap().distance(client.swh.unwrap()), 75);
}

#[test]
fn the_experimental_ccid_negotiates_only_when_listed() {
    let experimental = Ccid::MulTfrcExperimental;
    // Not accepted by a default server.
    let (mut pair, id) = pair_with(
        config(experimental, vec![]),
        ConnectionConfig::default(),
        LinkConfig::default(),
    );
    pair.run_until(millis(500));
    assert!(matches!(
        drain_events(&mut pair.client).as_slice(),
        [(_, Event::Reset { .. })]
    ));
    let _ = id;
    // Accepted when listed, and run as TFRC.
    let server = config(Ccid::Tfrc, vec![experimental, Ccid::Tfrc]);
    let (mut pair, id) = pair_with(config(experimental, vec![]), server, LinkConfig::default());
    assert!(open(&mut pair, id, millis(1_000)));
    assert_eq!(
        drain_events(&mut pair.client),
        vec![(
            id,
            Event::Connected {
                ccid: experimental,
                peer_ccid: experimental
            }
        )]
    );
    assert!(pair.client.connection(id).unwrap().tfrc_sender().is_some());
}

#[test]
fn ccid2_ack_ratio_changes_are_confirmed_and_used_by_the_receiver() {
    let client = config(Ccid::Ccid2, vec![Ccid::Ccid2]);
    let (mut pair, id) = pair_with(client, ConnectionConfig::default(), LinkConfig::default());
    pair.record(true);
    // Lose every fourth acknowledgement: congestion on the reverse path,
    // which makes the CCID 2 sender raise the Ack Ratio (RFC 4341 §6.1.2).
    let mut count = 0u32;
    pair.set_drop_filter(move |_, direction, _| {
        if direction != Direction::ServerToClient {
            return false;
        }
        count += 1;
        count % 4 == 0
    });
    pair.run_with(millis(4_000), |p| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while conn.send_queue_len() < 16 && conn.send(now, &[3; 500]).is_ok() {}
        }
        if let Some(server) = p.server.connection_mut(server_id()) {
            while server.recv().is_some() {}
        }
    });
    let changes: Vec<u16> = parsed(&pair, Direction::ClientToServer)
        .into_iter()
        .flat_map(|(_, p)| p.options.iter().cloned().collect::<Vec<_>>())
        .filter_map(|o| match o {
            DccpOption::ChangeL(Feature::AckRatio(Some(r))) => Some(r),
            _ => None,
        })
        .collect();
    let confirms: Vec<u16> = parsed(&pair, Direction::ServerToClient)
        .into_iter()
        .flat_map(|(_, p)| p.options.iter().cloned().collect::<Vec<_>>())
        .filter_map(|o| match o {
            DccpOption::ConfirmR(Feature::AckRatio(Some(r))) => Some(r),
            _ => None,
        })
        .collect();
    // The sender announced the new Ack Ratio with Change L(Ack Ratio); the
    // receiver confirmed it (Confirm R) and acknowledges at that ratio.
    let last = *changes.last().expect("an Ack Ratio change");
    assert!(last > 2, "{changes:?}");
    assert_eq!(confirms.last(), Some(&last));
    let server = pair.server.connection(server_id()).unwrap().stats();
    assert_eq!(server.ack_ratio, last);
    let client = pair
        .client
        .connection(id)
        .unwrap()
        .ccid2_sender()
        .unwrap()
        .ack_ratio();
    assert_eq!(client, last);
}

#[test]
fn the_partopen_ack_is_retransmitted_until_the_server_answers() {
    let (mut pair, id) = pair_with(
        config(Ccid::Tfrc, vec![]),
        ConnectionConfig::default(),
        LinkConfig::default(),
    );
    pair.record(true);
    // Lose the client's first two Acks.
    let mut acks_dropped = 0;
    pair.set_drop_filter(move |_, direction, bytes| {
        let ack = direction == Direction::ClientToServer
            && DccpRepr::parse_bytes(bytes, &ChecksumContext::UdpEncapsulated)
                .is_ok_and(|p| p.kind.packet_type() == PacketType::Ack);
        if ack && acks_dropped < 2 {
            acks_dropped += 1;
            return true;
        }
        false
    });
    assert!(open(&mut pair, id, millis(3_000)));
    let acks: Vec<Instant> = parsed(&pair, Direction::ClientToServer)
        .into_iter()
        .filter(|(_, p)| p.kind.packet_type() == PacketType::Ack)
        .map(|(at, _)| at)
        .collect();
    // Response at 40 ms; Acks at 40, 240 (200 ms timer) and 640 ms (backed
    // off, RFC 4340 §8.1.5).
    assert_eq!(&acks[..3], &[millis(40), millis(240), millis(640)]);
}

#[test]
fn the_client_sends_data_in_partopen_on_dataack() {
    let (mut pair, id) = pair_with(
        config(Ccid::Tfrc, vec![]),
        ConnectionConfig::default(),
        LinkConfig::default(),
    );
    pair.record(true);
    // Data queued before the handshake completes.
    pair.client
        .connection_mut(id)
        .unwrap()
        .send(Instant::ZERO, b"early")
        .unwrap();
    let mut seen_partopen = false;
    pair.run_with(millis(1_000), |p| {
        seen_partopen |= p.client.connection(id).map(|c| c.state()) == Some(State::PartOpen);
    });
    assert!(seen_partopen);
    let first_data = parsed(&pair, Direction::ClientToServer)
        .into_iter()
        .map(|(_, p)| p.kind)
        .find(|k| matches!(k.packet_type(), PacketType::Data | PacketType::DataAck))
        .unwrap();
    // RFC 4340 §8.1.5: in PARTOPEN every packet carries an acknowledgement.
    assert!(matches!(first_data, PacketKind::DataAck { .. }));
    let server = pair.server.connection_mut(server_id()).unwrap();
    assert_eq!(server.recv(), Some(b"early".to_vec()));
}

#[test]
fn a_request_in_open_draws_a_sync() {
    let (mut pair, id) = pair_with(
        config(Ccid::Tfrc, vec![]),
        ConnectionConfig::default(),
        LinkConfig::default(),
    );
    assert!(open(&mut pair, id, millis(1_000)));
    pair.record(true);
    let gsr = pair
        .server
        .connection(server_id())
        .unwrap()
        .sequence_numbers()
        .gsr
        .unwrap();
    let request = from_client(
        gsr + 1,
        PacketKind::Request {
            service_code: crate::conn::SERVICE_CODE_RTP,
        },
        &[],
    );
    pair.inject(Direction::ClientToServer, &request);
    // RFC 4340 §8.5 step 7: "(S.state >= OPEN and P.type == Request and
    // P.seqno >= S.OSR)": Sync acknowledging P.seqno.
    let sent: Vec<PacketKind> = parsed(&pair, Direction::ServerToClient)
        .into_iter()
        .map(|(_, p)| p.kind)
        .collect();
    assert_eq!(sent, vec![PacketKind::Sync { ack: gsr + 1 }]);
    assert_eq!(
        pair.server.connection(server_id()).unwrap().state(),
        State::Open
    );
    let _ = (Duration::ZERO, SeqNum::ZERO);
}
