//! A bonded session (issue 19) end to end over two in-test paths in
//! virtual time: each path a bottleneck of its own (a rate, a drop-tail
//! queue and a delay), the receiver one [`ReceiverSession`] that sees both.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use super::tests::{next_wake, pair_wake};
use super::*;
use crate::cc::multi::ConnectionCountConfig;
use crate::conn::{ConnectionConfig, ConnectionId};
use crate::time::Instant;
use crate::wire::dccp::peek_ports;

/// One direction of one path: a rate, a queue of `limit` packets and a
/// fixed delay. Feedback (toward the sender) only takes the delay.
#[derive(Clone, Copy)]
struct PathLink {
    bytes_per_sec: f64,
    delay: Duration,
    limit: usize,
}

/// A datagram in flight: arrival, order, path, toward the receiver, bytes.
type InFlight = (Instant, u64, usize, bool, Vec<u8>);

/// What one run gave.
struct Outcome {
    sender: SenderSession,
    receiver: ReceiverSession,
    /// The numbers of the datagrams the receiver read, in its order.
    received: Vec<u32>,
    /// When the receiver read each of them.
    received_at: Vec<Instant>,
    /// Data bytes that crossed each path toward the receiver.
    carried: Vec<u64>,
    events: Vec<(Instant, SessionEvent)>,
}

/// Runs a session of `paths.len()` paths for `until`, the application
/// offering `offered` bytes a second in 1000-byte datagrams; `cut` says
/// whether a path drops everything at a time (both ways).
fn run(
    paths: &[PathLink],
    until: Duration,
    offered: f64,
    arq: bool,
    cut: impl Fn(Instant, usize) -> bool,
) -> Outcome {
    run_with(paths, until, offered, arq, false, cut)
}

/// [`run`], with `duplicate_key` (every tenth datagram is key).
fn run_with(
    paths: &[PathLink],
    until: Duration,
    offered: f64,
    arq: bool,
    duplicate_key: bool,
    cut: impl Fn(Instant, usize) -> bool,
) -> Outcome {
    let config = SessionConfig {
        connection: ConnectionConfig {
            msl: Duration::from_secs(1),
            ..ConnectionConfig::default()
        },
        count: ConnectionCountConfig::Fixed(1),
        paths: paths.len(),
        duplicate_key,
        ..SessionConfig::default()
    };
    let mut receiver =
        ReceiverSession::new(config.connection.clone(), 64, ReorderConfig::default()).with_arq(arq);
    let mut now = Instant::ZERO;
    let mut sender = SenderSession::new(config, now).unwrap();
    let mut link: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    // When each path's bottleneck is next free, and what it holds.
    let mut busy_until = vec![Instant::ZERO; paths.len()];
    let mut carried = vec![0u64; paths.len()];
    let mut order = 0u64;
    let mut received = Vec::new();
    let mut received_at = Vec::new();
    let mut events = Vec::new();
    let mut sent = 0u64;
    let mut buf = Vec::new();
    let end = Instant::ZERO + until;
    while now < end {
        let due = (offered * now.as_nanos() as f64 / 1e9 / 1000.0) as u64 + 1;
        while sent < due && sender.queued() < 64 {
            let payload = (sent as u32).to_be_bytes().repeat(250);
            let meta = arq::DatagramMeta {
                key: sent % 10 == 0,
                ..arq::DatagramMeta::gop(sent / 10)
            };
            if sender.send_with(now, &payload, meta).is_err() {
                break;
            }
            sent += 1;
        }
        while let Some((path, transmit)) = sender.poll_transmit_on(now, &mut buf) {
            let p = paths[path];
            let start = busy_until[path].max(now);
            let wait = start.saturating_duration_since(now);
            let serialise = Duration::from_secs_f64(transmit.len as f64 / p.bytes_per_sec);
            if wait > serialise * p.limit as u32 || cut(now, path) {
                continue;
            }
            busy_until[path] = start + serialise;
            if transmit.payload_len > 0 {
                carried[path] += transmit.payload_len as u64;
            }
            order += 1;
            link.push(Reverse((
                busy_until[path] + p.delay,
                order,
                path,
                true,
                buf.clone(),
            )));
        }
        // The receiver answers each connection on the path it came by:
        // the path of the sender's connection with those ports.
        while let Some((id, _)) = receiver.poll_transmit_for(now, &mut buf) {
            let path = id
                .and_then(|id| {
                    sender.path_of(ConnectionId {
                        local_port: id.remote_port,
                        remote_port: id.local_port,
                    })
                })
                .unwrap_or(0);
            if cut(now, path) {
                continue;
            }
            order += 1;
            link.push(Reverse((
                now + paths[path].delay,
                order,
                path,
                false,
                buf.clone(),
            )));
        }
        while let Some(data) = receiver.recv() {
            received.push(u32::from_be_bytes([data[0], data[1], data[2], data[3]]));
            received_at.push(now);
        }
        while let Some(event) = sender.poll_event() {
            events.push((now, event));
        }
        let head = link.peek().map(|Reverse((t, ..))| *t);
        now = pair_wake(now, end, head, &sender, &receiver);
        while link.peek().is_some_and(|Reverse((t, ..))| *t <= now) {
            let Some(Reverse((_, _, path, to_receiver, bytes))) = link.pop() else {
                break;
            };
            if to_receiver {
                receiver.handle_datagram(now, &bytes, order);
            } else {
                sender.handle_datagram_on(now, path, &bytes, crate::ecn::Ecn::NotEct);
            }
        }
        sender.handle_timeout(now);
        receiver.handle_timeout(now);
    }
    Outcome {
        sender,
        receiver,
        received,
        received_at,
        carried,
        events,
    }
}

/// Path 0 drops everything, both ways, from `from_ms` to `until_ms`.
fn path_0_cut(from_ms: u64, until_ms: u64) -> impl Fn(Instant, usize) -> bool + Copy {
    move |now, path| {
        path == 0 && now >= Instant::from_millis(from_ms) && now < Instant::from_millis(until_ms)
    }
}

/// When the run first reported `event`.
fn first(run: &Outcome, event: SessionEvent) -> Instant {
    run.events
        .iter()
        .find(|(_, e)| *e == event)
        .map(|(at, _)| *at)
        .unwrap_or_else(|| panic!("{event:?} never reported"))
}

const FAST: PathLink = PathLink {
    bytes_per_sec: 250_000.0,
    delay: Duration::from_millis(20),
    limit: 25,
};
const SLOW: PathLink = PathLink {
    bytes_per_sec: 125_000.0,
    delay: Duration::from_millis(60),
    limit: 25,
};

#[test]
fn two_paths_carry_more_than_either_alone_in_order() {
    let until = Duration::from_secs(60);
    let alone: Vec<u64> = [FAST, SLOW]
        .iter()
        .map(|p| run(&[*p], until, 1e6, false, |_, _| false).carried[0])
        .collect();
    let both = run(&[FAST, SLOW], until, 1e6, false, |_, _| false);
    let total: u64 = both.carried.iter().sum();
    let sum_alone: u64 = alone.iter().sum();
    eprintln!(
        "alone {alone:?} bytes; bonded {:?} = {total} ({:.2} of the sum); reorder {:?}",
        both.carried,
        total as f64 / sum_alone as f64,
        both.receiver.stats().reorder
    );
    // Each path carries a share near what it carries alone, and the two
    // together most of the sum.
    for (path, (&bonded, &single)) in both.carried.iter().zip(&alone).enumerate() {
        assert!(
            bonded as f64 >= 0.6 * single as f64,
            "path {path}: {bonded} bonded, {single} alone"
        );
    }
    assert!(total as f64 >= 0.85 * sum_alone as f64);
    // What arrived is one ordered stream.
    assert!(both.received.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(both.sender.paths(), 2);
    assert_eq!(both.sender.open_connections_on(0), 1);
    assert_eq!(both.sender.open_connections_on(1), 1);
}

#[test]
fn a_cut_path_is_found_dead_its_data_resent_and_it_comes_back() {
    // The fast path drops everything, both ways, from 10 s to 20 s.
    let down = path_0_cut(10_000, 20_000);
    let run = run(
        &[FAST, SLOW],
        Duration::from_secs(40),
        200_000.0,
        true,
        down,
    );
    let got = &run.received;
    let stats = run.sender.arq_stats();
    eprintln!(
        "{} delivered; {stats:?}; events {:?}",
        got.len(),
        run.events
            .iter()
            .filter(|(_, e)| matches!(
                e,
                SessionEvent::PathDown { .. } | SessionEvent::PathUp { .. }
            ))
            .collect::<Vec<_>>()
    );
    let went_down = first(&run, SessionEvent::PathDown { path: 0 });
    let came_back = first(&run, SessionEvent::PathUp { path: 0 });
    // Found dead within a second (four RTTs, at least 500 ms), and back
    // within a few seconds of answering again.
    assert!(went_down < Instant::from_millis(11_000), "{went_down:?}");
    assert!(
        came_back >= Instant::from_millis(20_000) && came_back < Instant::from_millis(25_000),
        "{came_back:?}"
    );
    assert!(stats.failover_resent > 0);
    // The stream went on, in order, and with retransmission nothing of it
    // was lost.
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    let offered = (200_000.0 * 40.0 / 1000.0) as u32;
    assert!(
        got.len() as u32 >= offered - 200,
        "{} of about {offered}",
        got.len()
    );
    // Both paths carry data after the fast one came back.
    assert_eq!(run.sender.open_connections_on(0), 1);
}

/// A path cut at 10 s: its connection goes suspect after three RTTs (at
/// least 150 ms) and what it was given is resent on the other path then,
/// not when it is found dead (at least 500 ms). The receiver, which
/// releases datagrams in order, reads again before the connection is found
/// dead; without the resend on suspicion it reads nothing from the cut
/// until the failover's resends cross the other path (10.75 s here), and
/// waits 0.74 s at once instead of 0.51 s.
#[test]
fn a_suspect_paths_datagrams_are_resent_before_it_is_found_dead() {
    let down = path_0_cut(10_000, 30_000);
    let run = run(
        &[FAST, SLOW],
        Duration::from_secs(14),
        200_000.0,
        true,
        down,
    );
    let stats = run.sender.arq_stats();
    let went_down = first(&run, SessionEvent::PathDown { path: 0 });
    let after_cut = |at: &&Instant| **at > Instant::from_millis(10_100);
    let read_again = run.received_at.iter().find(after_cut).copied();
    let longest_wait = run
        .received_at
        .windows(2)
        .filter(|w| w[0] >= Instant::from_millis(9_500))
        .map(|w| w[1].saturating_duration_since(w[0]))
        .max()
        .unwrap_or_default();
    eprintln!("found dead at {went_down:?}, read again at {read_again:?}; longest wait {longest_wait:?}; {stats:?}");
    assert!(stats.suspect_resent > 0, "{stats:?}");
    assert!(went_down >= Instant::from_millis(10_500), "{went_down:?}");
    assert!(
        read_again.is_some_and(|at| at < went_down),
        "{read_again:?}"
    );
    assert!(
        longest_wait < Duration::from_millis(600),
        "the receiver waited {longest_wait:?}"
    );
    // Nothing the cut took was lost: what was read up to 11.5 s (when
    // the slow path, alone, starts losing its own) has no gap.
    let gaps: Vec<_> = run
        .received
        .windows(2)
        .zip(&run.received_at)
        .filter(|(w, at)| **at < Instant::from_millis(11_500) && w[1] != w[0] + 1)
        .collect();
    assert!(gaps.is_empty(), "{gaps:?}");
}

/// A path cut from 10 s to 16 s: its connection is found dead at about
/// 10.5 s and the next one's Requests would back off to 1, 2 and 4 s
/// (RFC 4340 §8.1.1), the fourth at about 17.5 s; held to one a second
/// while the other path is up ([`DOWN_PATH_PROBE`]), the path is back
/// within about a second of the cut's end.
#[test]
fn a_down_path_is_probed_at_least_once_a_second() {
    let down = path_0_cut(10_000, 16_000);
    let run = run(
        &[FAST, SLOW],
        Duration::from_secs(24),
        200_000.0,
        false,
        down,
    );
    let came_back = first(&run, SessionEvent::PathUp { path: 0 });
    assert!(
        came_back >= Instant::from_millis(16_000) && came_back < Instant::from_millis(17_200),
        "back at {came_back:?}"
    );
}

#[test]
fn a_datagram_for_another_paths_connection_is_dropped() {
    let token = PathToken(7);
    let config = SessionConfig {
        connection: ConnectionConfig {
            request_data: token.request_data(),
            ..ConnectionConfig::default()
        },
        count: ConnectionCountConfig::Fixed(1),
        paths: 2,
        ..SessionConfig::default()
    };
    let context = config.connection.checksum.receive_context();
    let now = Instant::ZERO;
    let mut sender = SenderSession::new(config, now).unwrap();
    let mut buf = Vec::new();
    let mut requests = Vec::new();
    while let Some((path, transmit)) = sender.poll_transmit_on(now, &mut buf) {
        buf.truncate(transmit.len);
        // Every Request carries the session's token.
        assert_eq!(PathToken::peek_request(&buf, &context), Some(token));
        requests.push((path, peek_ports(&buf), buf.clone()));
    }
    // One Request on each path, each from its own port.
    assert_eq!(requests.len(), 2);
    assert_ne!(requests[0].0, requests[1].0);
    assert_ne!(requests[0].1, requests[1].1);
    // A Request's answer that comes back on the other path is not taken:
    // the connection of path 1 hears nothing from path 0.
    let mut receiver =
        ReceiverSession::new(ConnectionConfig::default(), 8, ReorderConfig::default());
    receiver.handle_datagram(now, &requests[1].2, 99);
    let mut response = Vec::new();
    let (id, transmit) = receiver.poll_transmit_for(now, &mut response).unwrap();
    response.truncate(transmit.len);
    assert!(id.is_some());
    let other = requests[0].0;
    sender.handle_datagram_on(now, other, &response, crate::ecn::Ecn::NotEct);
    let heard = |s: &SenderSession| {
        s.endpoint()
            .connection_ids()
            .filter_map(|id| s.endpoint().connection(id))
            .map(|c| c.stats().packets_received)
            .sum::<u64>()
    };
    assert_eq!(heard(&sender), 0);
    sender.handle_datagram_on(now, requests[1].0, &response, crate::ecn::Ecn::NotEct);
    assert_eq!(heard(&sender), 1);
    let too_many = SessionConfig {
        paths: MAX_PATHS + 1,
        ..SessionConfig::default()
    };
    assert!(SenderSession::new(too_many, now).is_err());
    let none = SessionConfig {
        paths: 0,
        ..SessionConfig::default()
    };
    assert!(SenderSession::new(none, now).is_err());
}

#[test]
fn a_path_token_round_trips_and_nothing_else_reads_as_one() {
    let token = PathToken(0x0123_4567_89ab_cdef);
    let data = token.request_data();
    assert_eq!(data.len(), PathToken::LEN);
    assert_eq!(PathToken::from_request_data(&data), Some(token));
    assert_eq!(PathToken::from_request_data(&data[..11]), None);
    assert_eq!(PathToken::from_request_data(b"RTPVxxxxxxxx"), None);
    assert_eq!(PathToken::from_request_data(&[]), None);
}

#[test]
fn key_datagrams_go_on_two_paths_and_arrive_once() {
    // The fast path loses everything from 10 s to 20 s: the key datagrams
    // sent meanwhile (until the path is suspect) arrive by the other. The
    // stream (100 kB/s) fits either path, so a copy takes no datagram's
    // place.
    let down = path_0_cut(10_000, 20_000);
    let plain = run(
        &[FAST, SLOW],
        Duration::from_secs(30),
        100_000.0,
        false,
        down,
    );
    let copied = run_with(
        &[FAST, SLOW],
        Duration::from_secs(30),
        100_000.0,
        false,
        true,
        down,
    );
    let keys = |o: &Outcome| o.received.iter().filter(|n| *n % 10 == 0).count();
    eprintln!(
        "copies {}; key datagrams received {} without, {} with copies; all {} and {}",
        copied.sender.key_copies(),
        keys(&plain),
        keys(&copied),
        plain.received.len(),
        copied.received.len()
    );
    assert_eq!(plain.sender.key_copies(), 0);
    assert!(copied.sender.key_copies() > 0);
    // Each arrives once, in order.
    assert!(copied.received.windows(2).all(|w| w[0] < w[1]));
    assert!(keys(&copied) > keys(&plain));
}

/// A bonded session of two paths and one plain TFRC session through one
/// bottleneck (250 kB/s, 25 packets, 20 ms each way), both greedy for
/// 60 s. Returns the data bytes each session got across it.
fn shared_run(shared: bool) -> (u64, u64) {
    let connection = ConnectionConfig {
        msl: Duration::from_secs(1),
        ..ConnectionConfig::default()
    };
    let bonded = SessionConfig {
        connection: connection.clone(),
        count: ConnectionCountConfig::Fixed(1),
        paths: 2,
        shared: if shared {
            vec![Some(0), Some(0)]
        } else {
            Vec::new()
        },
        ..SessionConfig::default()
    };
    let plain = SessionConfig {
        connection: connection.clone(),
        count: ConnectionCountConfig::Fixed(1),
        local_port: 50_000,
        iss_seed: 2,
        ..SessionConfig::default()
    };
    let mut now = Instant::ZERO;
    let mut senders = [
        SenderSession::new(bonded, now).unwrap(),
        SenderSession::new(plain, now).unwrap(),
    ];
    let mut receivers = [
        ReceiverSession::new(connection.clone(), 64, ReorderConfig::default()),
        ReceiverSession::new(connection, 64, ReorderConfig::default()),
    ];
    let link = PathLink {
        bytes_per_sec: 250_000.0,
        delay: Duration::from_millis(20),
        limit: 25,
    };
    let mut busy_until = Instant::ZERO;
    // The path field carries the session too: session · 8 + path.
    let mut flight: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut order = 0u64;
    let mut buf = Vec::new();
    let mut sent = [0u64; 2];
    let mut carried = [0u64; 2];
    let end = Instant::from_millis(60_000);
    while now < end {
        for (index, sender) in senders.iter_mut().enumerate() {
            while sender.queued() < 64 {
                if sender.send(now, &[0u8; 1000], sent[index] / 10).is_err() {
                    break;
                }
                sent[index] += 1;
            }
            while let Some((path, transmit)) = sender.poll_transmit_on(now, &mut buf) {
                let start = busy_until.max(now);
                let serialise = Duration::from_secs_f64(transmit.len as f64 / link.bytes_per_sec);
                if start.saturating_duration_since(now) > serialise * link.limit as u32 {
                    continue;
                }
                busy_until = start + serialise;
                carried[index] += transmit.payload_len as u64;
                order += 1;
                flight.push(Reverse((
                    busy_until + link.delay,
                    order,
                    index * 8 + path,
                    true,
                    buf.clone(),
                )));
            }
        }
        for (index, receiver) in receivers.iter_mut().enumerate() {
            while let Some((id, _)) = receiver.poll_transmit_for(now, &mut buf) {
                let path = id
                    .and_then(|id| {
                        senders[index].path_of(ConnectionId {
                            local_port: id.remote_port,
                            remote_port: id.local_port,
                        })
                    })
                    .unwrap_or(0);
                order += 1;
                flight.push(Reverse((
                    now + link.delay,
                    order,
                    index * 8 + path,
                    false,
                    buf.clone(),
                )));
            }
            while receiver.recv().is_some() {}
        }
        let deadlines: Vec<Option<Instant>> = senders
            .iter()
            .map(SenderSession::poll_timeout)
            .chain(receivers.iter().map(ReceiverSession::poll_timeout))
            .chain([flight.peek().map(|Reverse((t, ..))| *t)])
            .collect();
        now = next_wake(now, end, deadlines);
        while flight.peek().is_some_and(|Reverse((t, ..))| *t <= now) {
            let Some(Reverse((_, _, tag, to_receiver, bytes))) = flight.pop() else {
                break;
            };
            let (index, path) = (tag / 8, tag % 8);
            if to_receiver {
                receivers[index].handle_datagram(now, &bytes, order);
            } else {
                senders[index].handle_datagram_on(now, path, &bytes, crate::ecn::Ecn::NotEct);
            }
        }
        for sender in &mut senders {
            sender.handle_timeout(now);
        }
        for receiver in &mut receivers {
            receiver.handle_timeout(now);
        }
    }
    let flows: Vec<f64> = senders[0]
        .endpoint()
        .connection_ids()
        .filter_map(|id| {
            senders[0]
                .endpoint()
                .connection(id)?
                .tfrc_sender()
                .map(|t| t.flows())
        })
        .collect();
    assert!(
        flows
            .iter()
            .all(|n| (*n - if shared { 0.5 } else { 1.0 }).abs() < 1e-9),
        "{flows:?}"
    );
    (carried[0], carried[1])
}

#[test]
fn paths_declared_to_share_a_bottleneck_take_one_flows_share_between_them() {
    let (bonded, plain) = shared_run(false);
    let share = bonded as f64 / (bonded + plain) as f64;
    let (bonded_shared, plain_shared) = shared_run(true);
    let share_shared = bonded_shared as f64 / (bonded_shared + plain_shared) as f64;
    eprintln!(
        "the bonded session's share of the bottleneck beside one TFRC flow: \
         {share:.3} undeclared, {share_shared:.3} declared shared"
    );
    // Undeclared, its two connections take about two thirds; declared, it
    // is one flow beside one flow.
    assert!(share > 0.58, "{share}");
    assert!((0.4..0.58).contains(&share_shared), "{share_shared}");
}
