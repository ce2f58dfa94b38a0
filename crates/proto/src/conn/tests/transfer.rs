//! Data transfer with each CCID over a lossy, reordering link.

use std::collections::HashSet;
use std::time::Duration;

use super::support::*;
use crate::cc::equation::tfrc_rate;
use crate::cc::tfrc::TfrcConfig;
use crate::conn::pair::{Captured, Direction, LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionConfig, ConnectionId, State};
use crate::time::Instant;
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketType};
use crate::wire::options::DccpOption;

struct Outcome {
    pair: Pair,
    id: ConnectionId,
    /// Datagram ids the server application received, in order.
    received: Vec<u32>,
    /// Data bytes the client sent after `measure_from`.
    bytes_after: u64,
    /// The measurement interval.
    measured: Duration,
}

fn parse(bytes: &[u8]) -> DccpRepr<'_> {
    DccpRepr::parse_bytes(bytes, &ChecksumContext::UdpEncapsulated).unwrap()
}

fn is_data(c: &Captured) -> bool {
    matches!(
        parse(&c.bytes).kind.packet_type(),
        PacketType::Data | PacketType::DataAck
    )
}

fn id_of(payload: &[u8]) -> u32 {
    u32::from_be_bytes(payload[..4].try_into().unwrap())
}

/// The client sends `payload`-byte datagrams for `seconds` as fast as its
/// CCID allows (the queue never runs dry), then the pair runs two more
/// seconds to drain.
fn transfer(ccid: Ccid, link: LinkConfig, seconds: u64, payload: usize) -> Outcome {
    let client = ConnectionConfig {
        tfrc: TfrcConfig {
            segment_size: payload,
            ..TfrcConfig::default()
        },
        ..config(ccid, vec![ccid])
    };
    let (mut pair, id) = pair_with(client, ConnectionConfig::default(), link);
    pair.record(true);
    let end = Instant::from_secs_f64(seconds as f64);
    let measure_from = Instant::from_secs_f64(seconds as f64 / 2.0);
    let mut next_id = 0u32;
    let mut received = Vec::new();
    let mut bytes_after = 0u64;
    let mut last_sent = 0u64;
    pair.run_with(end, |p| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while conn.state() <= State::Open && conn.send_queue_len() < 4 {
                let mut data = vec![0u8; payload];
                data[..4].copy_from_slice(&next_id.to_be_bytes());
                if conn.send(now, &data).is_err() {
                    break;
                }
                next_id += 1;
            }
            let sent = conn.stats().data_bytes_sent;
            if now >= measure_from {
                bytes_after += sent - last_sent;
            }
            last_sent = sent;
        }
        if let Some(server) = p.server.connection_mut(server_id()) {
            received.extend(std::iter::from_fn(|| server.recv()).map(|d| id_of(&d)));
        }
    });
    // Drain: nothing new is queued.
    pair.run_with(end + Duration::from_secs(2), |p| {
        if let Some(server) = p.server.connection_mut(server_id()) {
            received.extend(std::iter::from_fn(|| server.recv()).map(|d| id_of(&d)));
        }
    });
    assert_eq!(
        pair.stalls(),
        0,
        "an endpoint asked for a timeout in the past"
    );
    Outcome {
        pair,
        id,
        received,
        bytes_after,
        measured: Duration::from_secs_f64(seconds as f64 / 2.0),
    }
}

/// The data packets the client sent, split into those the link delivered
/// (in arrival order, ties in sending order) and those it dropped.
fn link_fate(captured: &[Captured]) -> (Vec<u32>, Vec<u32>) {
    let mut delivered: Vec<(Instant, usize, u32)> = Vec::new();
    let mut dropped = Vec::new();
    for (index, c) in captured.iter().enumerate() {
        if c.direction != Direction::ClientToServer || !is_data(c) {
            continue;
        }
        let id = id_of(parse(&c.bytes).payload);
        match c.arrives {
            Some(at) => delivered.push((at, index, id)),
            None => dropped.push(id),
        }
    }
    delivered.sort();
    (
        delivered.into_iter().map(|(_, _, id)| id).collect(),
        dropped,
    )
}

/// The checks every transfer must pass: the application receives exactly
/// the data packets the link delivered, in their order of arrival, and
/// nothing else.
fn check_delivery(outcome: &Outcome) -> (usize, usize) {
    let (delivered, dropped) = link_fate(outcome.pair.captured());
    assert!(!delivered.is_empty());
    assert_eq!(
        outcome.received, delivered,
        "the receiver gets what the link delivered, in arrival order"
    );
    let unique: HashSet<u32> = outcome.received.iter().copied().collect();
    assert_eq!(unique.len(), outcome.received.len(), "no duplicates");
    assert!(
        dropped.iter().all(|id| !unique.contains(id)),
        "nothing invented"
    );
    (delivered.len(), dropped.len())
}

fn link(loss: f64, reorder: f64, seed: u64) -> LinkConfig {
    LinkConfig {
        delay: Duration::from_millis(25),
        loss,
        reorder,
        reorder_delay: Duration::from_millis(3),
        seed,
    }
}

#[test]
fn ccid3_transfer_with_loss_and_reordering_delivers_in_arrival_order_with_feedback() {
    let outcome = transfer(Ccid::Tfrc, link(0.02, 0.05, 7), 20, 1000);
    let (delivered, dropped) = check_delivery(&outcome);
    assert!(delivered > 500, "only {delivered} packets delivered");
    assert!(dropped > 0);
    let client = outcome.pair.client.connection(outcome.id).unwrap().stats();
    let server = outcome.pair.server.connection(server_id()).unwrap().stats();
    // Feedback flowed, with the loss the receiver measured.
    assert!(client.feedback_received > 20, "{client:?}");
    assert_eq!(client.feedback_ignored, 0, "{client:?}");
    assert!(client.loss_event_rate > 0.0, "{client:?}");
    assert!(server.receive_loss_event_rate > 0.0);
    // The RTT is the link's 50 ms (plus the receiver's feedback delays,
    // which the Elapsed Time option removes).
    let rtt = client.rtt.unwrap();
    assert!(
        rtt >= Duration::from_millis(45) && rtt <= Duration::from_millis(70),
        "rtt {rtt:?}"
    );
    // The receiver counts as lost what the link dropped: data packets, and
    // at most the client's few lost non-data packets besides.
    let dropped_all = outcome
        .pair
        .captured()
        .iter()
        .filter(|c| c.direction == Direction::ClientToServer && c.arrives.is_none())
        .count() as u64;
    assert!(server.data_losses >= dropped as u64, "{server:?}");
    assert!(server.data_losses <= dropped_all, "{server:?}");
}

/// Mean sending rate over the second half, with the sender's p and R.
fn rate_and_equation(ccid: Ccid, loss: f64, seed: u64) -> (f64, f64) {
    let outcome = transfer(ccid, link(loss, 0.0, seed), 40, 1000);
    check_delivery(&outcome);
    let rate = outcome.bytes_after as f64 / outcome.measured.as_secs_f64();
    let stats = outcome.pair.client.connection(outcome.id).unwrap().stats();
    let equation = tfrc_rate(1000.0, stats.rtt.unwrap(), stats.loss_event_rate)
        .unwrap()
        .bytes_per_sec();
    (rate, equation)
}

#[test]
fn ccid3_rate_follows_the_tfrc_equation_and_falls_with_loss() {
    let (rate_low, equation_low) = rate_and_equation(Ccid::Tfrc, 0.005, 3);
    let (rate_high, equation_high) = rate_and_equation(Ccid::Tfrc, 0.05, 3);
    println!("0.5 %: {rate_low:.0} B/s (equation {equation_low:.0}); 5 %: {rate_high:.0} B/s (equation {equation_high:.0})");
    assert!(
        rate_high < rate_low,
        "5 % loss: {rate_high:.0} B/s, 0.5 % loss: {rate_low:.0} B/s"
    );
    for (rate, equation) in [(rate_low, equation_low), (rate_high, equation_high)] {
        let ratio = rate / equation;
        assert!(
            (0.5..2.0).contains(&ratio),
            "rate {rate:.0} B/s vs equation {equation:.0} B/s"
        );
    }
}

#[test]
fn ccid2_transfer_uses_ack_vectors_and_respects_the_window() {
    let outcome = transfer(Ccid::Ccid2, link(0.02, 0.05, 11), 20, 1000);
    let (delivered, _) = check_delivery(&outcome);
    assert!(delivered > 200, "only {delivered} packets delivered");
    let client = outcome.pair.client.connection(outcome.id).unwrap();
    let stats = client.stats();
    assert!(
        stats.peer_sends_ack_vectors,
        "Send Ack Vector was confirmed"
    );
    assert!(stats.feedback_received > 50, "{stats:?}");
    assert_eq!(stats.feedback_ignored, 0);
    let sender = client.ccid2_sender().unwrap();
    assert!(
        sender.stats().packets_lost > 0,
        "losses inferred from Ack Vectors"
    );
    assert!(sender.stats().packets_acked > 200);
    // The server's acknowledgements carry Ack Vectors.
    let vectors = outcome
        .pair
        .captured()
        .iter()
        .filter(|c| c.direction == Direction::ServerToClient)
        .filter(|c| {
            parse(&c.bytes)
                .options
                .iter()
                .any(|o| matches!(o, DccpOption::AckVector(_)))
        })
        .count();
    assert!(vectors > 50, "{vectors} Ack Vectors");
}

#[test]
fn ccid2_never_has_more_packets_in_flight_than_its_window() {
    let client = config(Ccid::Ccid2, vec![Ccid::Ccid2]);
    let (mut pair, id) = pair_with(client, ConnectionConfig::default(), link(0.01, 0.0, 5));
    let mut checked = 0;
    let mut last_pipe = 0;
    pair.run_with(Instant::from_millis(5_000), |p| {
        let now = p.now();
        let Some(conn) = p.client.connection_mut(id) else {
            return;
        };
        while conn.send_queue_len() < 8 && conn.send(now, &[7; 500]).is_ok() {}
        if let Some(sender) = conn.ccid2_sender() {
            // RFC 4341 §5: no data packet leaves while pipe >= cwnd. After a
            // halving pipe may exceed cwnd, but it must not grow then.
            assert!(
                sender.pipe() <= sender.cwnd() || sender.pipe() <= last_pipe,
                "pipe grew from {last_pipe} to {} with cwnd {}",
                sender.pipe(),
                sender.cwnd()
            );
            last_pipe = sender.pipe();
            checked += 1;
        }
    });
    assert!(checked > 100);
}

#[test]
fn ccid4_spaces_data_packets_by_at_least_10_ms() {
    let outcome = transfer(Ccid::TfrcSp, link(0.0, 0.0, 2), 5, 100);
    let (delivered, _) = check_delivery(&outcome);
    let sends: Vec<Instant> = outcome
        .pair
        .captured()
        .iter()
        .filter(|c| c.direction == Direction::ClientToServer && is_data(c))
        .map(|c| c.at)
        .collect();
    assert!(delivered > 100, "only {delivered} packets");
    for pair in sends.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(10),
            "RFC 4828 §4.3: {gap:?} between data packets"
        );
    }
}

/// A configuration whose TFRC segment size matches `payload`.
fn sized(ccid: Ccid, payload: usize) -> ConnectionConfig {
    ConnectionConfig {
        tfrc: TfrcConfig {
            segment_size: payload,
            ..TfrcConfig::default()
        },
        ..config(ccid, vec![ccid])
    }
}

/// Both ends send up to `limit` datagrams of `payload` bytes; returns the
/// pair, the ids each side received, and a check that each side received
/// exactly what the link delivered to it.
fn both_ways(
    ccid: Ccid,
    link: LinkConfig,
    payload: usize,
    limit: u32,
    seconds: u64,
) -> (Pair, ConnectionId) {
    let (mut pair, id) = pair_with(sized(ccid, payload), sized(ccid, payload), link);
    pair.record(true);
    let (mut to_server, mut to_client) = (0u32, 0u32);
    let (mut at_server, mut at_client) = (Vec::new(), Vec::new());
    let fill = |n: u32| {
        let mut data = vec![0u8; payload];
        data[..4].copy_from_slice(&n.to_be_bytes());
        data
    };
    pair.run_with(Instant::from_secs_f64(seconds as f64), |p| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while to_server < limit
                && conn.send_queue_len() < 4
                && conn.send(now, &fill(to_server)).is_ok()
            {
                to_server += 1;
            }
            at_client.extend(std::iter::from_fn(|| conn.recv()).map(|d| id_of(&d)));
        }
        if let Some(conn) = p.server.connection_mut(server_id()) {
            while to_client < limit
                && conn.send_queue_len() < 4
                && conn.send(now, &fill(to_client)).is_ok()
            {
                to_client += 1;
            }
            at_server.extend(std::iter::from_fn(|| conn.recv()).map(|d| id_of(&d)));
        }
    });
    assert_eq!(pair.stalls(), 0);
    for (direction, received) in [
        (Direction::ClientToServer, &at_server),
        (Direction::ServerToClient, &at_client),
    ] {
        let mut delivered: Vec<(Instant, usize, u32)> = pair
            .captured()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.direction == direction && is_data(c))
            .filter_map(|(i, c)| c.arrives.map(|at| (at, i, id_of(parse(&c.bytes).payload))))
            // Packets still on their way at the end are not compared.
            .filter(|(at, ..)| *at <= pair.now())
            .collect();
        delivered.sort();
        let delivered: Vec<u32> = delivered.into_iter().map(|(_, _, id)| id).collect();
        if &delivered != received {
            let first = delivered
                .iter()
                .zip(received.iter())
                .position(|(a, b)| a != b);
            panic!(
                "{ccid} {direction:?}: delivered {} received {}, first difference at {first:?}: {:?} vs {:?}",
                delivered.len(),
                received.len(),
                first.map(|i| &delivered[i.saturating_sub(2)..(i + 3).min(delivered.len())]),
                first.map(|i| &received[i.saturating_sub(2)..(i + 3).min(received.len())]),
            );
        }
        assert!(
            received.len() > 100,
            "{ccid} {direction:?}: {}",
            received.len()
        );
    }
    (pair, id)
}

#[test]
fn both_directions_carry_data_and_feedback_at_once() {
    for ccid in [Ccid::Tfrc, Ccid::Ccid2] {
        let (pair, id) = both_ways(ccid, link(0.01, 0.02, 13), 500, 2_000, 10);
        let client = pair.client.connection(id).unwrap().stats();
        let server = pair.server.connection(server_id()).unwrap().stats();
        assert!(
            client.feedback_received > 10 && server.feedback_received > 10,
            "{ccid}"
        );
        assert_eq!(
            client.feedback_ignored + server.feedback_ignored,
            0,
            "{ccid}"
        );
    }
}

#[test]
fn the_sequence_window_grows_with_the_packets_sent_per_round_trip() {
    // A 400 ms round trip: TFRC soon sends far more than 100 packets per
    // round trip, the default Sequence Window.
    let slow = LinkConfig {
        delay: Duration::from_millis(200),
        ..link(0.0, 0.0, 17)
    };
    let (pair, id) = both_ways(Ccid::Tfrc, slow, 100, 3_000, 12);
    let client = pair.client.connection(id).unwrap();
    let server = pair.server.connection(server_id()).unwrap();
    let grown = |n: crate::conn::SequenceNumbers| n.awl.distance(n.awh) + 1;
    assert!(
        grown(client.sequence_numbers()) > 100,
        "the client's window grew"
    );
    assert!(
        grown(server.sequence_numbers()) > 100,
        "the server's window grew"
    );
    // Each side learnt the other's window (Change L(Sequence Window)).
    let swh = server.sequence_numbers();
    assert!(swh.gsr.unwrap().distance(swh.swh.unwrap()) > 75);
    // Nothing was taken for invalid: every packet was inside the windows.
    assert_eq!(client.stats().invalid_dropped, 0);
    assert_eq!(server.stats().invalid_dropped, 0);
}

#[test]
fn a_buffer_given_back_carries_the_next_datagram_received() {
    let (mut pair, id) = pair_with(
        config(Ccid::Tfrc, vec![Ccid::Tfrc]),
        config(Ccid::Tfrc, vec![Ccid::Tfrc]),
        link(0.0, 0.0, 1),
    );
    assert!(open(&mut pair, id, millis(2_000)));
    let send = |pair: &mut Pair, bytes: &[u8]| {
        let now = pair.now();
        pair.client
            .connection_mut(id)
            .and_then(|c| c.send(now, bytes).ok())
            .expect("the client takes the datagram");
        pair.run_until(now + Duration::from_millis(300));
    };
    send(&mut pair, b"first");
    let server = pair.server.connection_mut(server_id()).expect("open");
    let first = server.recv().expect("delivered");
    assert_eq!(first, b"first");
    // A roomy buffer given back holds the next datagram, not a new one.
    let mut roomy = first;
    roomy.reserve(4096);
    let room = roomy.capacity();
    server.recycle(roomy);
    send(&mut pair, b"second");
    let server = pair.server.connection_mut(server_id()).expect("open");
    let second = server.recv().expect("delivered");
    assert_eq!(second, b"second");
    assert_eq!(second.capacity(), room);
}
