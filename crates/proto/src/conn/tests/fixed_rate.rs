//! The experimental fixed-rate CCID 249: negotiation, and pacing in virtual
//! time at exactly s/rate whatever the loss.

use std::time::Duration;

use super::support::*;
use crate::cc::fixed_rate::FixedRateConfig;
use crate::conn::pair::{Direction, LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionConfig, ConnectionId, Event};
use crate::time::Instant;
use crate::units::Rate;
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketType};

const FIXED: Ccid = Ccid::FixedRateExperimental;

fn fixed_client(bits_per_sec: f64) -> ConnectionConfig {
    ConnectionConfig {
        fixed_rate: FixedRateConfig {
            rate: Rate::from_bits_per_sec(bits_per_sec),
            ..FixedRateConfig::default()
        },
        ..config(FIXED, vec![])
    }
}

/// Keeps the client's send queue full for `until` and returns the send
/// times of its data packets.
fn saturate(pair: &mut Pair, id: ConnectionId, until: Instant, payload: usize) -> Vec<Instant> {
    let feed = move |p: &mut Pair| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while conn.send_queue_len() < 16 && conn.send(now, &vec![7; payload]).is_ok() {}
        }
        if let Some(server) = p.server.connection_mut(server_id()) {
            while server.recv().is_some() {}
        }
    };
    pair.record(true);
    // Queue data before the first step: an idle pair has nothing to step to.
    feed(pair);
    pair.run_with(until, feed);
    pair.captured()
        .iter()
        .filter(|c| c.direction == Direction::ClientToServer)
        .filter(|c| {
            let packet =
                DccpRepr::parse_bytes(&c.bytes, &ChecksumContext::UdpEncapsulated).unwrap();
            matches!(
                packet.kind.packet_type(),
                PacketType::Data | PacketType::DataAck
            )
        })
        .map(|c| c.at)
        .collect()
}

#[test]
fn ccid_249_negotiates_only_when_listed() {
    let (mut pair, _) = pair_with(
        fixed_client(64_000.0),
        ConnectionConfig::default(),
        LinkConfig::default(),
    );
    pair.run_until(millis(500));
    assert!(matches!(
        drain_events(&mut pair.client).as_slice(),
        [(_, Event::Reset { .. })]
    ));
    let server = config(Ccid::Tfrc, vec![Ccid::Tfrc, FIXED]);
    let (mut pair, id) = pair_with(fixed_client(64_000.0), server, LinkConfig::default());
    assert!(open(&mut pair, id, millis(1_000)));
    assert_eq!(
        drain_events(&mut pair.client),
        vec![(
            id,
            Event::Connected {
                ccid: FIXED,
                peer_ccid: FIXED
            }
        )]
    );
    let client = pair.client.connection(id).unwrap();
    assert!(client.fixed_rate_sender().is_some());
    assert!(client.tfrc_sender().is_none());
    // The receiver half runs CCID 3's receiver, which sends feedback.
    assert!(pair
        .server
        .connection(server_id())
        .unwrap()
        .tfrc_receiver()
        .is_some());
}

#[test]
fn data_leaves_exactly_s_over_rate_apart() {
    // 1000 bytes at 2 Mbit/s (250 000 B/s): 4 ms apart, in virtual time.
    let server = config(FIXED, vec![FIXED]);
    let (mut pair, id) = pair_with(fixed_client(2e6), server, LinkConfig::default());
    assert!(open(&mut pair, id, millis(1_000)));
    let start = pair.now();
    let times = saturate(&mut pair, id, start + Duration::from_secs(2), 1000);
    assert!(times.len() >= 400, "{} packets", times.len());
    for gap in times.windows(2).map(|w| w[1] - w[0]) {
        assert_eq!(gap, Duration::from_millis(4));
    }
    let stats = pair.client.connection(id).unwrap().stats();
    assert_eq!(stats.rate.map(Rate::bits_per_sec), Some(2e6));
    // The feedback gave an RTT: twice the link's 20 ms (and no more than
    // the feedback's own delays).
    let rtt = stats.rtt.unwrap();
    assert!(
        rtt >= Duration::from_millis(40) && rtt < Duration::from_millis(50),
        "{rtt:?}"
    );
}

#[test]
fn loss_does_not_slow_it_down() {
    // 10 % random loss: TFRC would fall far below the rate; CCID 249 keeps
    // it, and the receiver's loss event rate reaches the sender's report.
    let server = config(FIXED, vec![FIXED]);
    let link = LinkConfig {
        loss: 0.1,
        seed: 7,
        ..LinkConfig::default()
    };
    let (mut pair, id) = pair_with(fixed_client(1e6), server, link);
    assert!(open(&mut pair, id, millis(5_000)));
    let start = pair.now();
    let times = saturate(&mut pair, id, start + Duration::from_secs(5), 500);
    // 500 bytes at 125 000 B/s: 4 ms apart, 1250 packets in 5 s.
    for gap in times.windows(2).map(|w| w[1] - w[0]) {
        assert_eq!(gap, Duration::from_millis(4));
    }
    assert!(times.len() >= 1240, "{} packets", times.len());
    let sender = pair
        .client
        .connection(id)
        .unwrap()
        .fixed_rate_sender()
        .unwrap();
    assert!(sender.loss_event_rate() > 0.0);
}
