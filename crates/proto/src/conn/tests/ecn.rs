//! ECN over the in-memory pair: negotiation of ECN Incapable (RFC 4340
//! §12.1), the codepoints packets leave with, and the reaction of CCID 3
//! (RFC 4342 §9) and CCID 2 (RFC 4341 §5) to data packets a shim on the
//! link marks Congestion Experienced, compared with the same packets lost.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use super::support::*;
use crate::cc::tfrc::TfrcConfig;
use crate::conn::pair::{Direction, LinkConfig, Pair};
use crate::conn::{Ccid, ConnectionConfig, ConnectionId, State};
use crate::ecn::Ecn;
use crate::time::Instant;
use crate::wire::dccp::{ChecksumContext, DccpRepr, PacketType};

const PAYLOAD: usize = 1000;

fn packet_type(bytes: &[u8]) -> PacketType {
    DccpRepr::parse_bytes(bytes, &ChecksumContext::UdpEncapsulated)
        .map(|p| p.kind.packet_type())
        .unwrap_or(PacketType::Reset)
}

fn is_data(bytes: &[u8]) -> bool {
    matches!(packet_type(bytes), PacketType::Data | PacketType::DataAck)
}

/// What the link does to the client's data packets.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shim {
    /// Drops every data packet whose index (from 1) is a multiple of `n`.
    DropEvery(u64),
    /// Marks those CE instead, if they were sent ECN-Capable.
    MarkEvery(u64),
    /// Marks data packets `first..first + count` (indices from 1).
    MarkRange(u64, u64),
}

impl Shim {
    fn hits(self, index: u64) -> bool {
        match self {
            Shim::DropEvery(n) | Shim::MarkEvery(n) => index % n == 0,
            Shim::MarkRange(first, count) => (first..first + count).contains(&index),
        }
    }
}

fn install(pair: &mut Pair, shim: Shim) {
    let counter = Rc::new(Cell::new(0u64));
    let count = Rc::clone(&counter);
    // The drop filter sees every datagram first: it numbers the data.
    pair.set_drop_filter(move |_, direction, bytes| {
        if direction != Direction::ClientToServer || !is_data(bytes) {
            return false;
        }
        count.set(count.get() + 1);
        matches!(shim, Shim::DropEvery(_)) && shim.hits(count.get())
    });
    pair.set_ecn_filter(move |_, direction, bytes, ecn| {
        let marking = matches!(shim, Shim::MarkEvery(_) | Shim::MarkRange(..));
        if direction == Direction::ClientToServer
            && marking
            && ecn.is_ect()
            && is_data(bytes)
            && shim.hits(counter.get())
        {
            Ecn::Ce
        } else {
            ecn
        }
    });
}

struct Run {
    pair: Pair,
    id: ConnectionId,
    /// Data bytes the client sent in the second half.
    bytes_after: u64,
    /// Datagrams the server application received.
    received: u64,
}

/// The client sends as fast as its CCID allows for `seconds`, through
/// `shim`; the pair then runs two more seconds to drain.
fn run(ccid: Ccid, client_ecn: bool, server_ecn: bool, shim: Shim, seconds: u64) -> Run {
    let client = ConnectionConfig {
        tfrc: TfrcConfig {
            segment_size: PAYLOAD,
            ..TfrcConfig::default()
        },
        ecn: client_ecn,
        ..config(ccid, vec![ccid])
    };
    let server = ConnectionConfig {
        ecn: server_ecn,
        ..ConnectionConfig::default()
    };
    let link = LinkConfig {
        delay: Duration::from_millis(25),
        ..LinkConfig::default()
    };
    let (mut pair, id) = pair_with(client, server, link);
    // Only short runs are recorded (the capture holds every packet).
    pair.record(seconds <= 2);
    install(&mut pair, shim);
    let end = Instant::from_secs_f64(seconds as f64);
    let half = Instant::from_secs_f64(seconds as f64 / 2.0);
    let mut received = 0u64;
    let mut bytes_after = 0u64;
    let mut last_sent = 0u64;
    pair.run_with(end, |p| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while conn.state() <= State::Open
                && conn.send_queue_len() < 4
                && conn.send(now, &[0u8; PAYLOAD]).is_ok()
            {}
            let sent = conn.stats().data_bytes_sent;
            if now >= half {
                bytes_after += sent - last_sent;
            }
            last_sent = sent;
        }
        if let Some(server) = p.server.connection_mut(server_id()) {
            received += std::iter::from_fn(|| server.recv()).count() as u64;
        }
    });
    pair.run_with(end + Duration::from_secs(2), |p| {
        if let Some(server) = p.server.connection_mut(server_id()) {
            received += std::iter::from_fn(|| server.recv()).count() as u64;
        }
    });
    assert_eq!(pair.stalls(), 0);
    Run {
        pair,
        id,
        bytes_after,
        received,
    }
}

/// RFC 4340 §12.1: ECN is on unless either endpoint sets ECN Incapable;
/// then no packet leaves ECN-Capable. Only Data and DataAck ever do.
#[test]
fn data_is_ect0_only_when_both_endpoints_allow_ecn() {
    for (client_ecn, server_ecn) in [(true, true), (false, true), (true, false), (false, false)] {
        // Some loss keeps slow start from growing without bound (the link
        // has no capacity limit).
        let r = run(Ccid::Tfrc, client_ecn, server_ecn, Shim::DropEvery(20), 2);
        let both = client_ecn && server_ecn;
        let client = r.pair.client.connection(r.id).unwrap().stats();
        let server = r.pair.server.connection(server_id()).unwrap().stats();
        assert_eq!((client.ecn_capable, server.ecn_capable), (both, both));
        let mut data = 0;
        for c in r.pair.captured() {
            if is_data(&c.bytes) {
                data += 1;
                let expected = if both { Ecn::Ect0 } else { Ecn::NotEct };
                assert_eq!(c.ecn, expected, "data, ecn = {client_ecn}/{server_ecn}");
            } else {
                assert_eq!(c.ecn, Ecn::NotEct, "{:?}", packet_type(&c.bytes));
            }
        }
        assert!(data > 100, "only {data} data packets");
    }
}

/// A router cannot mark a Not-ECT packet, and an ECN-incapable endpoint
/// ignores a CE it was handed anyway.
#[test]
fn an_ecn_incapable_receiver_ignores_marks() {
    // A shim that marks whatever it sees, ECT or not: ignored.
    let (mut pair, id) = pair_with(
        config(Ccid::Tfrc, vec![Ccid::Tfrc]),
        ConnectionConfig {
            ecn: false,
            ..ConnectionConfig::default()
        },
        LinkConfig::default(),
    );
    pair.set_ecn_filter(|_, _, _, _| Ecn::Ce);
    assert!(open(&mut pair, id, Instant::from_secs_f64(2.0)));
    let client = pair.client.connection_mut(id).unwrap();
    for _ in 0..50 {
        client.send(Instant::from_secs_f64(2.0), &[1; 100]).unwrap();
    }
    pair.run_until(Instant::from_secs_f64(6.0));
    let server = pair.server.connection(server_id()).unwrap().stats();
    assert_eq!(server.data_packets_received, 50);
    assert_eq!(
        (server.ce_marked_received, server.receive_loss_event_rate),
        (0, 0.0)
    );
}

/// RFC 4342 §9 / RFC 5348 §5: CCID 3 counts a CE-marked data packet as a
/// lost one, so the same pattern of marks and of drops gives nearly the
/// same loss event rate and sending rate; with marks no data is lost.
#[test]
fn ccid3_slows_down_for_marks_as_for_the_same_losses() {
    const EVERY: u64 = 25;
    let dropped = run(Ccid::Tfrc, true, true, Shim::DropEvery(EVERY), 40);
    let marked = run(Ccid::Tfrc, true, true, Shim::MarkEvery(EVERY), 40);
    let stats = |r: &Run| {
        (
            r.pair.client.connection(r.id).unwrap().stats(),
            r.pair.server.connection(server_id()).unwrap().stats(),
        )
    };
    let (dropped_client, dropped_server) = stats(&dropped);
    let (marked_client, marked_server) = stats(&marked);
    let p_dropped = dropped_server.receive_loss_event_rate;
    let p_marked = marked_server.receive_loss_event_rate;
    eprintln!(
        "p: dropped {p_dropped:.5}, marked {p_marked:.5}; bytes in the second half: \
         dropped {}, marked {}; marks {}, data sent {}, received {}",
        dropped.bytes_after,
        marked.bytes_after,
        marked_server.ce_marked_received,
        marked_client.data_packets_sent,
        marked.received
    );
    assert!(p_dropped > 0.0 && p_marked > 0.0);
    assert!(
        (p_marked / p_dropped - 1.0).abs() < 0.15,
        "p with marks {p_marked} vs drops {p_dropped}"
    );
    let ratio = marked.bytes_after as f64 / dropped.bytes_after as f64;
    assert!((ratio - 1.0).abs() < 0.15, "throughput ratio {ratio}");
    // One mark in 25 packets, each more than a round trip after the last:
    // one loss event per 25 packets (without marks the rate would grow
    // without bound on this link).
    let expected = 1.0 / EVERY as f64;
    assert!(
        (p_marked / expected - 1.0).abs() < 0.25,
        "p {p_marked} vs 1/{EVERY}"
    );
    // The sender learnt p from the feedback.
    assert!(marked_client.loss_event_rate > 0.0);
    // Marked packets are delivered: nothing lost.
    assert_eq!(marked.received, marked_client.data_packets_sent);
    assert_eq!(marked_server.data_losses, 0);
    assert!(marked_server.ce_marked_received >= marked_client.data_packets_sent / EVERY - 1);
    assert!(dropped.received < dropped_client.data_packets_sent);
}

/// RFC 4341 §5: CCID 2's receiver reports a marked packet as Ack Vector
/// state 1 and the sender halves cwnd, once for marks within one window;
/// no packet is lost.
#[test]
fn ccid2_halves_its_window_once_per_window_of_marks() {
    for count in [1, 3] {
        let r = run(Ccid::Ccid2, true, true, Shim::MarkRange(300, count), 6);
        let client = r.pair.client.connection(r.id).unwrap();
        let sender = client.ccid2_sender().unwrap().stats();
        assert_eq!(sender.packets_ecn_marked, count, "marks reported");
        assert_eq!(sender.packets_lost, 0);
        assert_eq!(sender.congestion_events, 1, "{count} marks in one window");
        assert_eq!(r.received, client.stats().data_packets_sent);
    }
    // The halving itself, watched as it happens.
    let client = config(Ccid::Ccid2, vec![Ccid::Ccid2]);
    let (mut pair, id) = pair_with(client, ConnectionConfig::default(), LinkConfig::default());
    install(&mut pair, Shim::MarkRange(300, 1));
    let mut before = None;
    let mut after = None;
    pair.run_with(Instant::from_secs_f64(6.0), |p| {
        let now = p.now();
        let Some(conn) = p.client.connection_mut(id) else {
            return;
        };
        while conn.state() <= State::Open
            && conn.send_queue_len() < 4
            && conn.send(now, &[0u8; PAYLOAD]).is_ok()
        {}
        let Some(sender) = conn.ccid2_sender() else {
            return;
        };
        let events = sender.stats().congestion_events;
        if events == 0 {
            before = Some(sender.cwnd());
        } else if after.is_none() {
            after = Some((sender.cwnd(), sender.ssthresh()));
        }
        if let Some(server) = p.server.connection_mut(server_id()) {
            while server.recv().is_some() {}
        }
    });
    let (before, (cwnd, ssthresh)) = (before.unwrap(), after.unwrap());
    eprintln!("CCID 2 cwnd before the mark {before}, after {cwnd} (ssthresh {ssthresh})");
    assert!(before >= 8, "cwnd {before} grew before the mark");
    assert_eq!(ssthresh, (before / 2).max(1));
    assert!(cwnd <= before / 2 + 1, "cwnd {cwnd} after {before}");
}
