//! Sequence number validity (RFC 4340 §7.5, §8.5 steps 4-7) against blind
//! attackers, Sync recovery, and the Resets the RFC requires.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use super::support::*;
use crate::conn::pair::{Direction, LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionId, Event, SequenceNumbers, State};
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, ResetCode, SeqNum};
use crate::wire::options::{DccpOption, Options};

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

fn server_numbers(pair: &Pair) -> SequenceNumbers {
    pair.server
        .connection(server_id())
        .unwrap()
        .sequence_numbers()
}

fn client_numbers(pair: &Pair, id: ConnectionId) -> SequenceNumbers {
    pair.client.connection(id).unwrap().sequence_numbers()
}

/// The packets sent in `direction` from capture index `from` on.
fn sent_since(pair: &Pair, from: usize, direction: Direction) -> Vec<DccpRepr<'_>> {
    pair.captured()[from..]
        .iter()
        .filter(|c| c.direction == direction)
        .map(|c| DccpRepr::parse_bytes(&c.bytes, &ChecksumContext::UdpEncapsulated).unwrap())
        .collect()
}

#[test]
fn out_of_window_data_is_not_delivered_and_draws_rate_limited_syncs() {
    let (mut pair, _) = opened();
    let gsr = server_numbers(&pair).gsr.unwrap();
    let before = pair.captured().len();
    // SWH = GSR + floor(3W/4) = GSR + 75: GSR + 1000 is far outside.
    for i in 0..5 {
        let evil = from_client(gsr + 1000 + i, PacketKind::Data, b"evil");
        pair.inject(Direction::ClientToServer, &evil);
    }
    let server = pair.server.connection_mut(server_id()).unwrap();
    assert_eq!(server.recv(), None, "out-of-window data is not delivered");
    assert_eq!(server.state(), State::Open);
    let stats = server.stats();
    assert_eq!(stats.invalid_dropped, 5);
    assert_eq!(
        stats.syncs_sent, 1,
        "RFC 4340 §7.5.4: Syncs are rate-limited"
    );
    assert_eq!(stats.syncs_suppressed, 4);
    let syncs = sent_since(&pair, before, Direction::ServerToClient);
    assert_eq!(syncs.len(), 1);
    // "Send Sync packet acknowledging P.seqno".
    assert_eq!(syncs[0].kind, PacketKind::Sync { ack: gsr + 1000 });
    // After the rate limit interval another Sync may go.
    pair.run_until(pair.now() + Duration::from_millis(200));
    pair.inject(
        Direction::ClientToServer,
        &from_client(gsr + 2000, PacketKind::Data, b"evil"),
    );
    let stats = pair.server.connection(server_id()).unwrap().stats();
    assert_eq!(stats.syncs_sent, 2);
    // The attack changed nothing: data still flows.
    let now = pair.now();
    let id = pair.client.connection_ids().next().unwrap();
    pair.client
        .connection_mut(id)
        .unwrap()
        .send(now, b"good")
        .unwrap();
    pair.run_until(now + Duration::from_millis(200));
    let server = pair.server.connection_mut(server_id()).unwrap();
    assert_eq!(server.recv(), Some(b"good".to_vec()));
    assert_eq!(server.recv(), None);
}

#[test]
fn a_reset_with_wrong_numbers_draws_a_sync_and_does_not_end_the_connection() {
    let (mut pair, id) = opened();
    let numbers = client_numbers(&pair, id);
    let gsr = numbers.gsr.unwrap();
    let before = pair.captured().len();
    let forged = [
        // Sequence number far outside the window.
        (gsr + 5_000, numbers.gss),
        // In the window but not above GSR, as a Reset must be.
        (gsr, numbers.gss),
        // Right sequence number, acknowledgement number of nothing sent.
        (gsr + 1, numbers.gss + 1_000),
    ];
    for (i, (seq, ack)) in forged.into_iter().enumerate() {
        pair.run_until(pair.now() + Duration::from_millis(200));
        let reset = from_server(
            seq,
            PacketKind::Reset {
                ack,
                code: ResetCode::Aborted,
                data: [0; 3],
            },
            &[],
        );
        pair.inject(Direction::ServerToClient, &reset);
        let client = pair.client.connection(id).unwrap();
        assert_eq!(
            client.state(),
            State::Open,
            "forged Reset {i} ended the connection"
        );
    }
    // "If P.type == Reset, Send Sync packet acknowledging S.GSR".
    let syncs: Vec<_> = sent_since(&pair, before, Direction::ClientToServer)
        .into_iter()
        .filter(|p| matches!(p.kind, PacketKind::Sync { .. }))
        .collect();
    assert_eq!(syncs.len(), 3);
    for sync in &syncs {
        let PacketKind::Sync { ack } = sync.kind else {
            unreachable!()
        };
        assert!(ack == gsr || ack.is_after(gsr), "the Sync acknowledges GSR");
    }
    assert!(drain_events(&mut pair.client).is_empty());
    // The real server answers the Syncs with SyncAcks and the connection
    // carries on.
    let now = pair.now();
    pair.client
        .connection_mut(id)
        .unwrap()
        .send(now, b"still here")
        .unwrap();
    pair.run_until(now + Duration::from_millis(300));
    let server = pair.server.connection_mut(server_id()).unwrap();
    assert_eq!(server.recv(), Some(b"still here".to_vec()));
    assert!(server.stats().sync_acks_sent >= 1);
}

#[test]
fn a_reset_with_valid_numbers_does_end_the_connection() {
    // The positive control for the test above: the checks are not vacuous.
    let (mut pair, id) = opened();
    let numbers = client_numbers(&pair, id);
    let reset = from_server(
        numbers.gsr.unwrap() + 1,
        PacketKind::Reset {
            ack: numbers.gss,
            code: ResetCode::Aborted,
            data: [0; 3],
        },
        &[],
    );
    pair.inject(Direction::ServerToClient, &reset);
    assert_eq!(pair.client.connection(id).unwrap().state(), State::TimeWait);
    assert_eq!(
        drain_events(&mut pair.client),
        vec![(
            id,
            Event::Reset {
                code: ResetCode::Aborted,
                data: [0; 3],
                by_peer: true
            }
        )]
    );
}

#[test]
fn sync_and_syncack_recover_after_losing_more_packets_than_the_window() {
    // The client keeps s = 1460 in its equation (not the 200 bytes it
    // sends): this test is about sequence windows, and while every packet is
    // lost TFRC backs off towards one packet per t_mbi = 64 s of s bytes
    // (RFC 5348 §4.4), which with s = 200 would take hours to lose 200.
    let mut client = config(Ccid::Tfrc, vec![]);
    client.tfrc.packet_size = crate::cc::tfrc::PacketSizeMode::ConfiguredMean;
    let (mut pair, id) = pair_with(client, config(Ccid::Tfrc, vec![]), LinkConfig::default());
    assert!(open(&mut pair, id, millis(1_000)));
    drain_events(&mut pair.client);
    drain_events(&mut pair.server);
    pair.record(true);
    let dropped = Rc::new(Cell::new(0u32));
    let counter = Rc::clone(&dropped);
    // Lose the client's next 200 packets: twice the Sequence Window of 100,
    // so the server's window [SWL, SWH] falls far behind.
    pair.set_drop_filter(move |_, direction, _| {
        if direction == Direction::ClientToServer && counter.get() < 200 {
            counter.set(counter.get() + 1);
            true
        } else {
            false
        }
    });
    let gsr_before = server_numbers(&pair).gsr.unwrap();
    let mut received = 0usize;
    let mut received_after_burst = 0usize;
    let end = pair.now() + Duration::from_secs(30);
    let dropped_view = Rc::clone(&dropped);
    // A bounded amount of data: the link has no capacity limit, so an
    // unbounded source would only measure slow start.
    let mut queued = 0;
    pair.run_with(end, |p| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while queued < 2_000 && conn.send_queue_len() < 4 && conn.send(now, &[1; 200]).is_ok() {
                queued += 1;
            }
        }
        if let Some(server) = p.server.connection_mut(server_id()) {
            let n = std::iter::from_fn(|| server.recv()).count();
            received += n;
            if dropped_view.get() >= 200 {
                received_after_burst += n;
            }
        }
    });
    assert_eq!(dropped.get(), 200, "the burst happened");
    let client_seq = client_numbers(&pair, id).gss;
    assert!(
        gsr_before.distance(client_seq) > 200,
        "the client sent past the server's window"
    );
    let server = pair.server.connection(server_id()).unwrap();
    assert_eq!(server.state(), State::Open);
    assert!(
        server.stats().syncs_sent >= 1,
        "the server asked to resynchronise"
    );
    let client = pair.client.connection(id).unwrap().stats();
    assert!(
        client.sync_acks_sent >= 1,
        "the client answered with SyncAck"
    );
    assert!(
        received_after_burst > 10,
        "data flows again after recovery ({received_after_burst} of {received})"
    );
}

#[test]
fn a_mandatory_option_that_is_not_understood_resets_with_mandatory_error() {
    let (mut pair, id) = opened();
    let numbers = server_numbers(&pair);
    let options = Options::from_options([
        DccpOption::Mandatory,
        DccpOption::Unknown {
            kind: 120,
            data: vec![1, 2, 3],
        },
    ])
    .unwrap();
    let ack = packet(
        CLIENT_PORT,
        SERVER_PORT,
        numbers.gsr.unwrap() + 1,
        PacketKind::Ack { ack: numbers.gss },
        options,
        &[],
    );
    let before = pair.captured().len();
    pair.inject(Direction::ClientToServer, &ack);
    // RFC 4340 §5.8.2: Reset(Mandatory Error) with the option's type and
    // first two data bytes.
    let expected = Event::Reset {
        code: ResetCode::MandatoryError,
        data: [120, 1, 2],
        by_peer: false,
    };
    assert_eq!(
        drain_events(&mut pair.server),
        vec![(server_id(), expected)]
    );
    // The Reset on the wire names the option.
    let resets: Vec<_> = sent_since(&pair, before, Direction::ServerToClient)
        .into_iter()
        .map(|p| p.kind)
        .collect();
    assert!(matches!(
        resets.as_slice(),
        [PacketKind::Reset {
            code: ResetCode::MandatoryError,
            data: [120, 1, 2],
            ..
        }]
    ));
    assert_eq!(
        pair.server.connection(server_id()).map(|c| c.state()),
        None,
        "the server connection is closed and gone"
    );
    let _ = id;
}

#[test]
fn a_request_arriving_at_a_client_in_request_state_draws_reset_packet_error() {
    let (mut pair, id) = pair_with(
        config(Ccid::Tfrc, vec![]),
        config(Ccid::Tfrc, vec![]),
        LinkConfig::default(),
    );
    pair.record(true);
    let before = pair.captured().len();
    let request = from_server(
        SeqNum::new(99),
        PacketKind::Request {
            service_code: crate::conn::SERVICE_CODE_RTP,
        },
        &[],
    );
    pair.inject(Direction::ServerToClient, &request);
    let replies = sent_since(&pair, before, Direction::ClientToServer);
    assert_eq!(replies.len(), 1);
    // RFC 4340 §8.5 step 4: "Only Response and Reset are valid in REQUEST
    // state": "Generate Reset(Packet Error)".
    assert!(matches!(
        replies[0].kind,
        PacketKind::Reset {
            code: ResetCode::PacketError,
            ack,
            ..
        } if ack == SeqNum::new(99)
    ));
    // The spoofed packet does not end the client's attempt.
    assert_eq!(pair.client.connection(id).unwrap().state(), State::Request);
}

#[test]
fn a_packet_for_unknown_ports_draws_reset_no_connection() {
    let (mut pair, _) = opened();
    let before = pair.captured().len();
    let stray = packet(
        7777,
        SERVER_PORT,
        SeqNum::new(1234),
        PacketKind::Ack {
            ack: SeqNum::new(41),
        },
        Options::new(),
        &[],
    );
    pair.inject(Direction::ClientToServer, &stray);
    let replies = sent_since(&pair, before, Direction::ServerToClient);
    assert_eq!(replies.len(), 1);
    let reply = &replies[0];
    assert_eq!((reply.src_port, reply.dst_port), (SERVER_PORT, 7777));
    assert_eq!(reply.seq, SeqNum::new(42), "P.ackno + 1");
    assert_eq!(
        reply.kind,
        PacketKind::Reset {
            ack: SeqNum::new(1234),
            code: ResetCode::NoConnection,
            data: [0; 3]
        }
    );
    // Never a Reset for a Reset.
    let before = pair.captured().len();
    let reset = packet(
        7777,
        SERVER_PORT,
        SeqNum::new(1),
        PacketKind::Reset {
            ack: SeqNum::new(1),
            code: ResetCode::Aborted,
            data: [0; 3],
        },
        Options::new(),
        &[],
    );
    pair.inject(Direction::ClientToServer, &reset);
    assert_eq!(pair.captured().len(), before);
    // A Request to an endpoint that does not listen: Connection Refused.
    let request = packet(
        SERVER_PORT,
        4444,
        SeqNum::new(5),
        PacketKind::Request { service_code: 1 },
        Options::new(),
        &[],
    );
    pair.inject(Direction::ServerToClient, &request);
    let refused = sent_since(&pair, before, Direction::ClientToServer);
    assert!(matches!(
        refused.as_slice(),
        [DccpRepr {
            kind: PacketKind::Reset {
                code: ResetCode::ConnectionRefused,
                ..
            },
            ..
        }]
    ));
}
