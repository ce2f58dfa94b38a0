//! Whatever a peer sends, an open connection does not panic and its tables
//! stay bounded (proptest).

use proptest::prelude::*;

use super::support::*;
use crate::conn::pair::{Direction, LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionConfig, ConnectionId, SequenceNumbers};
use crate::wire::dccp::{PacketKind, ResetCode, SeqNum};
use crate::wire::options::{
    AckVector, AckVectorState, DccpOption, ElapsedTime, Feature, LossEventRate, LossInterval,
    LossIntervals, Options,
};

/// The receive queue bound used here.
const RECV_QUEUE: usize = 16;

fn opened(ccid: Ccid) -> (Pair, ConnectionId) {
    let small = |ccid| ConnectionConfig {
        recv_queue_packets: RECV_QUEUE,
        ..config(ccid, vec![ccid])
    };
    let (mut pair, id) = pair_with(small(ccid), small(ccid), LinkConfig::default());
    assert!(open(&mut pair, id, millis(1_000)));
    // Some data in flight both ways, so that every CCID has state.
    let now = pair.now();
    for _ in 0..5 {
        let _ = pair.client.connection_mut(id).unwrap().send(now, &[1; 100]);
        let _ = pair
            .server
            .connection_mut(server_id())
            .unwrap()
            .send(now, &[2; 100]);
    }
    pair.run_until(now + std::time::Duration::from_millis(100));
    (pair, id)
}

/// A packet description, turned into bytes with the connection's current
/// numbers so that many land inside the windows.
#[derive(Clone, Debug)]
struct Spec {
    type_code: u8,
    seq_offset: i64,
    ack_offset: i64,
    absolute: Option<(u64, u64)>,
    right_ports: bool,
    ccval: u8,
    options: Vec<DccpOption>,
    payload: Vec<u8>,
}

fn feature() -> impl Strategy<Value = Feature> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(Feature::Ccid),
        proptest::option::of(0u64..200).prop_map(Feature::SequenceWindow),
        proptest::option::of(any::<u16>()).prop_map(Feature::AckRatio),
        proptest::collection::vec(any::<bool>(), 0..3).prop_map(Feature::SendAckVector),
        proptest::collection::vec(any::<bool>(), 0..3).prop_map(Feature::AllowShortSeqnos),
        (10u8..=255, proptest::collection::vec(any::<u8>(), 0..3))
            .prop_map(|(number, value)| Feature::Unknown { number, value }),
    ]
}

fn option() -> impl Strategy<Value = DccpOption> {
    let state = prop_oneof![
        Just(AckVectorState::Received),
        Just(AckVectorState::ReceivedEcnMarked),
        Just(AckVectorState::NotReceived),
        Just(AckVectorState::Reserved),
    ];
    prop_oneof![
        1 => Just(DccpOption::Mandatory),
        1 => Just(DccpOption::Padding),
        1 => Just(DccpOption::SlowReceiver),
        3 => feature().prop_map(DccpOption::ChangeL),
        3 => feature().prop_map(DccpOption::ChangeR),
        3 => feature().prop_map(DccpOption::ConfirmL),
        3 => feature().prop_map(DccpOption::ConfirmR),
        3 => (0u64..1 << 48).prop_map(DccpOption::NdpCount),
        3 => proptest::collection::vec((state, 0u8..64), 0..40).prop_map(|cells| {
            DccpOption::AckVector(AckVector::from_cells(false, &cells).unwrap())
        }),
        3 => any::<u32>().prop_map(|v| DccpOption::ElapsedTime(ElapsedTime(v))),
        3 => any::<u32>().prop_map(|v| DccpOption::LossEventRate(LossEventRate(v))),
        3 => any::<u32>().prop_map(DccpOption::ReceiveRate),
        3 => proptest::collection::vec((0u32..1 << 24, 0u32..1 << 23, 0u32..1 << 24), 0..5).prop_map(
            |records| DccpOption::LossIntervals(LossIntervals {
                skip_length: 0,
                intervals: records
                    .into_iter()
                    .map(|(a, b, c)| LossInterval {
                        lossless_length: a,
                        ecn_nonce_echo: false,
                        loss_length: b,
                        data_length: c,
                    })
                    .collect(),
            })
        ),
        3 => (45u8..=255, proptest::collection::vec(any::<u8>(), 0..6))
            .prop_filter("decoded types have their own variants", |(k, _)| {
                !matches!(k, 192..=195)
            })
            .prop_map(|(kind, data)| DccpOption::Unknown { kind, data }),
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        // Mostly Data, Ack and DataAck; every type sometimes.
        prop_oneof![6 => 2u8..=4, 1 => 8u8..10, 1 => 0u8..10],
        // Mostly inside the windows, sometimes well outside.
        prop_oneof![3 => 1i64..40, 1 => -120i64..200],
        prop_oneof![3 => -6i64..=0, 1 => -150i64..5],
        proptest::option::of((0u64..1 << 48, 0u64..1 << 48)),
        proptest::bool::weighted(0.9),
        0u8..16,
        proptest::collection::vec(option(), 0..6),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(
            |(
                type_code,
                seq_offset,
                ack_offset,
                absolute,
                right_ports,
                ccval,
                options,
                payload,
            )| Spec {
                type_code,
                seq_offset,
                ack_offset,
                absolute,
                right_ports,
                ccval,
                options,
                payload,
            },
        )
}

/// The bytes of `spec` for a packet to the client, whose numbers are `n`.
fn build(spec: &Spec, n: &SequenceNumbers) -> Vec<u8> {
    let (seq, ack) = match spec.absolute {
        Some((s, a)) => (SeqNum::new(s), SeqNum::new(a)),
        None => (
            n.gsr.unwrap_or_default().add_signed(spec.seq_offset),
            n.gss.add_signed(spec.ack_offset),
        ),
    };
    let kind = match spec.type_code {
        0 => PacketKind::Request { service_code: 1 },
        1 => PacketKind::Response {
            ack,
            service_code: 1,
        },
        2 => PacketKind::Data,
        3 => PacketKind::Ack { ack },
        4 => PacketKind::DataAck { ack },
        5 => PacketKind::CloseReq { ack },
        6 => PacketKind::Close { ack },
        7 => PacketKind::Reset {
            ack,
            code: ResetCode::from(spec.ccval),
            data: [1, 2, 3],
        },
        8 => PacketKind::Sync { ack },
        _ => PacketKind::SyncAck { ack },
    };
    let mut options = Options::new();
    for option in &spec.options {
        if options.push(option.clone()).is_err() {
            break;
        }
    }
    // A list ending in Mandatory cannot be emitted off a word boundary (the
    // padding would become the option it applies to); give it one to apply to.
    if options.check_encodable().is_err() {
        let _ = options.push(DccpOption::SlowReceiver);
    }
    let src = if spec.right_ports {
        SERVER_PORT
    } else {
        SERVER_PORT ^ 1
    };
    let mut bytes = packet(src, CLIENT_PORT, seq, kind, options, &spec.payload);
    // CCVal, set after emitting: the UDP-encapsulated checksum does not
    // cover it.
    if let Some(byte) = bytes.get_mut(5) {
        *byte = (spec.ccval << 4) | (*byte & 0x0F);
    }
    bytes
}

fn check_bounded(pair: &Pair, id: ConnectionId) {
    let Some(conn) = pair.client.connection(id) else {
        return;
    };
    let [control, recv, events, sent, ack_history] = conn.table_sizes();
    assert!(control <= 8, "control queue {control}");
    assert!(recv <= RECV_QUEUE, "receive queue {recv}");
    assert!(events <= 8, "events {events}");
    assert!(sent <= 100, "send history {sent}");
    assert!(ack_history <= 4096, "ack history {ack_history}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_bytes_never_panic(
        datagrams in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..120), 1..40),
        ccid in prop_oneof![Just(Ccid::Tfrc), Just(Ccid::Ccid2)],
    ) {
        let (mut pair, id) = opened(ccid);
        for bytes in &datagrams {
            pair.inject(Direction::ServerToClient, bytes);
            check_bounded(&pair, id);
        }
        pair.run_until(pair.now() + std::time::Duration::from_secs(1));
        check_bounded(&pair, id);
    }

    #[test]
    fn random_valid_looking_packets_never_panic_and_tables_stay_bounded(
        specs in proptest::collection::vec(spec(), 1..60),
        ccid in prop_oneof![Just(Ccid::Tfrc), Just(Ccid::Ccid2), Just(Ccid::TfrcSp)],
        flip in proptest::option::of((0usize..64, any::<u8>())),
    ) {
        let (mut pair, id) = opened(ccid);
        for spec in &specs {
            let Some(conn) = pair.client.connection(id) else { break };
            let mut bytes = build(spec, &conn.sequence_numbers());
            if let Some((at, value)) = flip {
                if let Some(byte) = bytes.get_mut(at) {
                    *byte ^= value;
                }
            }
            pair.inject(Direction::ServerToClient, &bytes);
            // Let the connection run a little between packets.
            pair.run_until(pair.now() + std::time::Duration::from_millis(3));
            check_bounded(&pair, id);
            let _ = drain_events(&mut pair.client);
        }
        pair.run_until(pair.now() + std::time::Duration::from_secs(2));
        check_bounded(&pair, id);
        prop_assert_eq!(pair.stalls(), 0);
    }
}
