//! Sessions end to end over an in-test link in virtual time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use super::*;
use crate::cc::multi::{ConnectionCountConfig, MultiConfig};
use crate::conn::ConnectionConfig;
use crate::time::Instant;

/// A datagram on the test link: arrival, order, toward the receiver, bytes.
type InFlight = (Instant, u64, bool, Vec<u8>);

/// Sender and receiver joined by a link with a fixed delay that drops the
/// packets `drop` selects (by sender port); runs until `until`, feeding
/// `per_ms` datagrams a millisecond. Returns what the receiver read.
fn run(
    config: SessionConfig,
    until: Duration,
    datagrams: usize,
    drop: impl Fn(Instant, u16) -> bool,
) -> (SenderSession, ReceiverSession, Vec<Vec<u8>>) {
    let mut now = Instant::ZERO;
    let mut sender = SenderSession::new(config.clone(), now).unwrap();
    let mut receiver =
        ReceiverSession::new(config.connection.clone(), 64, ReorderConfig::default());
    let delay = Duration::from_millis(20);
    let mut link: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut order = 0;
    let mut received = Vec::new();
    let mut next_datagram = 0usize;
    let mut buf = Vec::new();
    let end = Instant::ZERO + until;
    while now < end {
        // Feed the application's datagrams, one a millisecond (200 kB/s);
        // each GOP is 10 datagrams.
        let due = (now.as_nanos() / 1_000_000) as usize + 1;
        while next_datagram < datagrams.min(due) && sender.queued() < 64 {
            let payload = (next_datagram as u32).to_be_bytes().repeat(50);
            if sender
                .send(now, &payload, (next_datagram / 10) as u64)
                .is_err()
            {
                break;
            }
            next_datagram += 1;
        }
        while sender.poll_transmit(now, &mut buf).is_some() {
            let port = u16::from_be_bytes([buf[0], buf[1]]);
            if !drop(now, port) {
                order += 1;
                link.push(Reverse((now + delay, order, true, buf.clone())));
            }
        }
        while receiver.poll_transmit(now, &mut buf).is_some() {
            order += 1;
            link.push(Reverse((now + delay, order, false, buf.clone())));
        }
        while let Some(data) = receiver.recv() {
            received.push(data);
        }
        let next = [
            link.peek().map(|Reverse((t, ..))| *t),
            sender.poll_timeout(),
            receiver.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(end)
        .min(now + Duration::from_millis(1))
        .max(now + Duration::from_micros(1));
        now = next.min(end);
        while link.peek().is_some_and(|Reverse((t, ..))| *t <= now) {
            let Some(Reverse((_, _, to_receiver, bytes))) = link.pop() else {
                break;
            };
            if to_receiver {
                receiver.handle_datagram(now, &bytes, order);
            } else {
                sender.handle_datagram(now, &bytes);
            }
        }
        sender.handle_timeout(now);
        receiver.handle_timeout(now);
    }
    (sender, receiver, received)
}

fn numbers(received: &[Vec<u8>]) -> Vec<u32> {
    received
        .iter()
        .map(|d| u32::from_be_bytes([d[0], d[1], d[2], d[3]]))
        .collect()
}

fn config(count: ConnectionCountConfig, policy: SplitPolicy) -> SessionConfig {
    SessionConfig {
        connection: ConnectionConfig {
            msl: Duration::from_secs(1),
            ..ConnectionConfig::default()
        },
        count,
        policy,
        ..SessionConfig::default()
    }
}

#[test]
fn four_connections_deliver_one_ordered_stream() {
    for policy in [SplitPolicy::Earliest, SplitPolicy::GopInterleave] {
        let (sender, receiver, received) = run(
            config(ConnectionCountConfig::Fixed(4), policy),
            Duration::from_secs(20),
            3000,
            |_, _| false,
        );
        assert_eq!(sender.max_open_connections(), 4);
        assert_eq!(receiver.endpoint().len(), 4);
        assert_eq!(
            numbers(&received),
            (0..3000).collect::<Vec<u32>>(),
            "{policy:?}"
        );
        eprintln!("{policy:?}: reorder {:?}", receiver.stats().reorder);
    }
}

#[test]
fn a_dead_connection_does_not_stop_the_stream() {
    // Everything the first connection (port 40 000), which carries the
    // stream, sends is lost from 1.2 s on: its TFRC hears nothing back and
    // backs off, and the others take over.
    let (sender, receiver, received) = run(
        config(ConnectionCountConfig::Fixed(3), SplitPolicy::Earliest),
        Duration::from_secs(40),
        30_000,
        |now, port| port == 40_000 && now > Instant::from_millis(1200),
    );
    let got = numbers(&received);
    eprintln!(
        "{} of 30000 delivered; {:?}",
        got.len(),
        receiver.stats().reorder
    );
    for id in sender.endpoint().connection_ids() {
        let c = sender.endpoint().connection(id).unwrap();
        eprintln!(
            "port {}: {} data packets sent",
            id.local_port,
            c.stats().data_packets_sent
        );
    }
    // The stream went on to its end, in order, with gaps given up.
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(got.last(), Some(&29_999));
    assert!(got.len() > 20_000, "{} of 30000", got.len());
    let reorder = receiver.stats().reorder;
    assert!(reorder.skipped > 0);
    // No datagram waited longer than the reorder buffer's bound.
    assert!(
        reorder.max_delay <= ReorderConfig::default().max_wait,
        "{reorder:?}"
    );
    assert!(sender.max_open_connections() >= 3);
}

#[test]
fn targets_follow_the_aggregate_rate_with_hysteresis() {
    let mut config = config(
        ConnectionCountConfig::Multfrc(MultiConfig {
            m: 5,
            initial: 2.0,
            ..MultiConfig::MULTFRC
        }),
        SplitPolicy::Earliest,
    );
    config.target_hysteresis = 0.25;
    let mut now = Instant::ZERO;
    let mut sender = SenderSession::new(config, now).unwrap();
    now += Duration::from_millis(600);
    sender.handle_timeout(now);
    let mut events = Vec::new();
    while let Some(e) = sender.poll_event() {
        events.push(e);
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SessionEvent::ConnectionsChanged { open: 2 })),
        "{events:?}"
    );
    assert!(sender.send(now, &vec![0; 100_000], 0).is_err());
}

#[test]
fn a_closed_session_opens_no_connection() {
    let config = config(ConnectionCountConfig::Fixed(2), SplitPolicy::Earliest);
    let mut now = Instant::ZERO;
    let mut sender = SenderSession::new(config, now).unwrap();
    assert_eq!(sender.endpoint().len(), 1);
    sender.close(now);
    for _ in 0..20 {
        now += Duration::from_millis(500);
        sender.handle_timeout(now);
    }
    // The first connection was aborted in REQUEST and none replaced it.
    assert_eq!(sender.open_connections(), 0);
    let endpoint = sender.endpoint();
    assert!(endpoint
        .connection_ids()
        .all(|id| endpoint.connection(id).unwrap().state() >= crate::conn::State::CloseReq));
}
