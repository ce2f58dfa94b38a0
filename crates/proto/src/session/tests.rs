//! Sessions end to end over an in-test link in virtual time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use super::*;
use crate::cc::multi::{AdaptiveConfig, ConnectionCountConfig, MultiConfig};
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
    let receiver = ReceiverSession::new(config.connection.clone(), 64, ReorderConfig::default());
    run_with(config, receiver, until, datagrams, |now, port, _| {
        drop(now, port)
    })
}

/// [`run`] with a given receiver; `drop` also sees the index of each data
/// packet the sender sends (from 0).
fn run_with(
    config: SessionConfig,
    mut receiver: ReceiverSession,
    until: Duration,
    datagrams: usize,
    drop: impl Fn(Instant, u16, Option<u64>) -> bool,
) -> (SenderSession, ReceiverSession, Vec<Vec<u8>>) {
    let mut now = Instant::ZERO;
    let mut sender = SenderSession::new(config.clone(), now).unwrap();
    let mut data_index = 0u64;
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
        while let Some(transmit) = sender.poll_transmit(now, &mut buf) {
            let port = u16::from_be_bytes([buf[0], buf[1]]);
            let index = (transmit.payload_len > 0).then(|| {
                data_index += 1;
                data_index - 1
            });
            if !drop(now, port, index) {
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
        let head = link.peek().map(|Reverse((t, ..))| *t);
        now = pair_wake(now, end, head, &sender, &receiver);
        deliver_due(&mut link, now, order, &mut sender, &mut receiver);
    }
    (sender, receiver, received)
}

/// Hands each end what reached it by `now` (the receiver draws its initial
/// sequence numbers from `order`), then runs both ends' timers.
fn deliver_due(
    link: &mut BinaryHeap<Reverse<InFlight>>,
    now: Instant,
    order: u64,
    sender: &mut SenderSession,
    receiver: &mut ReceiverSession,
) {
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

/// The next time an in-test loop runs: the earliest of `deadlines`, at
/// least a microsecond and at most a millisecond ahead, never after `end`.
pub(super) fn next_wake(
    now: Instant,
    end: Instant,
    deadlines: impl IntoIterator<Item = Option<Instant>>,
) -> Instant {
    deadlines
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(end)
        .min(now + Duration::from_millis(1))
        .max(now + Duration::from_micros(1))
        .min(end)
}

/// [`next_wake`] for one sender and one receiver, and the link's next
/// arrival `head`.
pub(super) fn pair_wake(
    now: Instant,
    end: Instant,
    head: Option<Instant>,
    sender: &SenderSession,
    receiver: &ReceiverSession,
) -> Instant {
    next_wake(
        now,
        end,
        [head, sender.poll_timeout(), receiver.poll_timeout()],
    )
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
fn a_dead_connection_loses_at_most_its_packets_in_flight() {
    // Everything the first connection (port 40 000) sends is lost from
    // 1.2 s on: it answers nothing, the session declares it dead, resends
    // what it had given it on the others and opens a replacement.
    for arq in [false, true] {
        let receiver = ReceiverSession::new(
            config(ConnectionCountConfig::Fixed(3), SplitPolicy::Earliest).connection,
            64,
            ReorderConfig::default(),
        )
        .with_arq(arq);
        let (sender, receiver, received) = run_with(
            config(ConnectionCountConfig::Fixed(3), SplitPolicy::Earliest),
            receiver,
            Duration::from_secs(40),
            30_000,
            |now, port, _| port == 40_000 && now > Instant::from_millis(1200),
        );
        let got = numbers(&received);
        let reorder = receiver.stats().reorder;
        eprintln!(
            "arq {arq}: {} of 30000 delivered; {reorder:?}; {:?}",
            got.len(),
            sender.arq_stats()
        );
        // The stream went on to its end, in order.
        assert!(got.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(got.last(), Some(&29_999));
        assert_eq!(sender.arq_stats().dead_connections, 1);
        assert!(sender.arq_stats().failover_resent > 0);
        assert!(sender.max_open_connections() >= 3);
        if arq {
            assert_eq!(got.len(), 30_000);
        } else {
            // At most what was in flight on it is lost.
            assert!(got.len() >= 29_950, "{} of 30000", got.len());
        }
        // No datagram waited longer than the reorder buffer's bound.
        assert!(
            reorder.max_delay <= ReorderConfig::default().max_wait,
            "{reorder:?}"
        );
    }
}

#[test]
fn without_arq_a_dead_connections_data_is_still_resent_and_the_store_stays_small() {
    // As above, the sender's retransmission off: the store keeps only what
    // a failover can reach, and the failover still finds it.
    let mut sender_config = config(ConnectionCountConfig::Fixed(3), SplitPolicy::Earliest);
    sender_config.arq.enabled = false;
    let receiver = ReceiverSession::new(
        sender_config.connection.clone(),
        64,
        ReorderConfig::default(),
    );
    let (sender, _, received) = run_with(
        sender_config,
        receiver,
        Duration::from_secs(40),
        30_000,
        |now, port, _| port == 40_000 && now > Instant::from_millis(1200),
    );
    let got = numbers(&received);
    eprintln!(
        "{} of 30000 delivered; {:?}; store {} bytes",
        got.len(),
        sender.arq_stats(),
        sender.stored_bytes()
    );
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(got.last(), Some(&29_999));
    assert_eq!(sender.arq_stats().dead_connections, 1);
    assert!(sender.arq_stats().failover_resent > 0);
    assert!(got.len() >= 29_950, "{} of 30000", got.len());
    // What is left: the last RTTs' datagrams, not the 6 MB stream.
    assert!(
        sender.stored_bytes() < 64 * 1024,
        "{}",
        sender.stored_bytes()
    );
}

/// The most bytes the sender stored at any step of a 20 s run of 20,000
/// datagrams of 200 bytes (200 kB/s) over four connections and a 40 ms
/// RTT, with retransmission `arq`.
fn stored_peak(arq: bool) -> usize {
    stored_peak_with(ConnectionCountConfig::Fixed(4), 1, arq)
}

/// [`stored_peak`] with the connections `count` controls on each of
/// `paths` paths.
fn stored_peak_with(count: ConnectionCountConfig, paths: usize, arq: bool) -> usize {
    let mut config = config(count, SplitPolicy::Earliest);
    config.arq.enabled = arq;
    config.paths = paths;
    let mut receiver =
        ReceiverSession::new(config.connection.clone(), 64, ReorderConfig::default()).with_arq(arq);
    let mut sender = SenderSession::new(config, Instant::ZERO).unwrap();
    let mut now = Instant::ZERO;
    let end = Instant::from_millis(20_000);
    let delay = Duration::from_millis(20);
    let mut link: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let (mut order, mut fed, mut peak) = (0u64, 0u32, 0usize);
    let mut buf = Vec::new();
    while now < end {
        let due = (now.as_nanos() / 1_000_000) as u32 + 1;
        while fed < due.min(20_000) && sender.queued() < 64 {
            if sender.send(now, &fed.to_be_bytes().repeat(50), 0).is_err() {
                break;
            }
            fed += 1;
        }
        while sender.poll_transmit(now, &mut buf).is_some() {
            order += 1;
            link.push(Reverse((now + delay, order, true, buf.clone())));
        }
        while receiver.poll_transmit(now, &mut buf).is_some() {
            order += 1;
            link.push(Reverse((now + delay, order, false, buf.clone())));
        }
        while receiver.recv().is_some() {}
        peak = peak.max(sender.stored_bytes());
        let head = link.peek().map(|Reverse((t, ..))| *t);
        now = pair_wake(now, end, head, &sender, &receiver);
        deliver_due(&mut link, now, order, &mut sender, &mut receiver);
    }
    assert!(fed >= 19_000, "{fed} datagrams fed");
    peak
}

#[test]
fn without_arq_the_store_holds_a_few_rtts_of_data_not_the_whole_stream() {
    // With retransmission on, nothing has a deadline: every datagram stays
    // (4 MB, under the 16 MiB bound). Without, the store holds what was
    // given since two RTTs before each connection's last answer: a few
    // RTTs at 200 kB/s, 8 kB an RTT.
    let kept = stored_peak(true);
    let pruned = stored_peak(false);
    eprintln!("store peak: arq {kept} bytes, no arq {pruned} bytes");
    assert!(kept > 3_000_000, "{kept}");
    assert!(pruned < 64 * 1024, "{pruned}");
    assert!(pruned > 0, "four connections: a failover may resend");
}

#[test]
fn without_arq_a_session_that_cannot_fail_over_keeps_nothing() {
    // One connection on one path: no failover (it needs another connection
    // alive) and no hedge (another path) can resend, so nothing is kept.
    for count in [
        ConnectionCountConfig::Fixed(1),
        ConnectionCountConfig::Adaptive(AdaptiveConfig::default()),
        ConnectionCountConfig::Aggregate(MultiConfig::MULTFRC),
    ] {
        assert!(count.at_most_one());
        assert_eq!(stored_peak_with(count, 1, false), 0, "{count:?}");
        // Retransmission, or a second path, needs the datagrams again.
        assert!(stored_peak_with(count, 1, true) > 3_000_000, "{count:?}");
        assert!(stored_peak_with(count, 2, false) > 0, "{count:?}");
    }
    // A count that may grow past one keeps them for a failover.
    let multfrc = ConnectionCountConfig::Multfrc(MultiConfig::MULTFRC);
    assert!(!multfrc.at_most_one());
    assert!(stored_peak_with(multfrc, 1, false) > 0);
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

#[test]
fn a_playout_lead_moves_every_deadline_earlier_by_it() {
    let receiver = || {
        ReceiverSession::new(ConnectionConfig::default(), 4, ReorderConfig::default())
            .with_playout_delay(Duration::from_secs(1))
    };
    let mut plain = receiver();
    let mut led = receiver().with_playout_lead(Duration::from_millis(100));
    let t = Instant::from_millis;
    // The first timed datagram sets the origin; the next is due 40 ms
    // after it; one without a playout time has no deadline.
    assert_eq!(plain.deadline(t(5_000), Some(9_000)), Some(t(6_000)));
    assert_eq!(plain.deadline(t(5_010), Some(9_040)), Some(t(6_040)));
    assert_eq!(led.deadline(t(5_000), Some(9_000)), Some(t(5_900)));
    assert_eq!(led.deadline(t(5_010), Some(9_040)), Some(t(5_940)));
    assert_eq!(led.deadline(t(5_020), None), None);
    // A lead longer than the delay gives the first datagram's arrival.
    let mut long = receiver().with_playout_lead(Duration::from_secs(3));
    assert_eq!(long.deadline(t(5_000), Some(9_000)), Some(t(5_000)));
}

fn arq_run(arq: bool) -> (SenderSession, ReceiverSession, Vec<Vec<u8>>) {
    let receiver = ReceiverSession::new(
        ConnectionConfig {
            msl: Duration::from_secs(1),
            ..ConnectionConfig::default()
        },
        64,
        ReorderConfig::default(),
    )
    .with_arq(arq)
    .with_playout_delay(Duration::from_secs(2));
    // One data packet in 25 is lost (4 %), retransmissions too.
    run_with(
        config(ConnectionCountConfig::Fixed(1), SplitPolicy::Earliest),
        receiver,
        Duration::from_secs(30),
        2000,
        |_, _, index| index.is_some_and(|i| i % 25 == 7),
    )
}

#[test]
fn arq_resends_what_was_lost_and_the_stream_arrives_whole() {
    let (sender, receiver, received) = arq_run(true);
    let arq = receiver.stats().arq;
    eprintln!("sender {:?}\nreceiver {:?}", sender.arq_stats(), arq);
    let got = numbers(&received);
    let missing: Vec<u32> = (0..2000).filter(|n| !got.contains(n)).collect();
    assert!(
        missing.is_empty(),
        "{} of 2000 delivered; missing {missing:?}",
        got.len()
    );
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    assert!(arq.requested >= 70, "{arq:?}");
    assert_eq!(arq.recovered, arq.requested, "{arq:?}");
    assert!(arq.nacks_sent > 0 && sender.arq_stats().nacks_received > 0);
    assert!(sender.arq_stats().retransmitted >= arq.requested);
    assert_eq!(receiver.stats().reorder.skipped, 0);
    // Without it the same losses are final.
    let (_, receiver, received) = arq_run(false);
    assert!(received.len() < 1950, "{}", received.len());
    assert_eq!(receiver.stats().arq.requested, 0);
}

#[test]
fn nothing_is_resent_after_its_deadline() {
    let mut config = config(ConnectionCountConfig::Fixed(1), SplitPolicy::Earliest);
    config.arq = ArqConfig::default();
    let mut now = Instant::ZERO;
    let mut sender = SenderSession::new(config, now).unwrap();
    let deadline = Some(Instant::from_millis(30));
    for i in 0..3u8 {
        let meta = DatagramMeta {
            deadline,
            key: i == 0,
            ..DatagramMeta::gop(0)
        };
        sender.send_with(now, &[i; 10], meta).unwrap();
    }
    now += Duration::from_millis(25);
    sender.handle_timeout(now);
    // Nothing was dispatched yet (no connection is open): a request for
    // them finds nothing kept.
    assert_eq!(sender.stored_bytes(), 0);
}

#[test]
fn headers_round_trip_with_and_without_playout_time_and_fec_tag() {
    let tag = FecTag {
        index: 3,
        k: 10,
        n: 12,
    };
    for (playout_ms, fec) in [
        (None, None),
        (Some(40), None),
        (None, Some(tag)),
        (Some(7), Some(tag)),
    ] {
        let header = SessionHeader {
            seq: (SEQUENCE_MODULUS - 1) as u32,
            playout_ms,
            fec,
        };
        let mut bytes = Vec::new();
        header.emit(&mut bytes);
        bytes.extend_from_slice(b"payload");
        assert_eq!(bytes.len(), header.len() + 7);
        assert_eq!(SessionHeader::parse(&bytes), Some((header, header.len())));
    }
    // A tag that describes no block is read as none; a short header is no
    // header.
    let mut bytes = Vec::new();
    SessionHeader {
        seq: 1,
        playout_ms: None,
        fec: Some(FecTag {
            index: 12,
            k: 10,
            n: 12,
        }),
    }
    .emit(&mut bytes);
    assert_eq!(SessionHeader::parse(&bytes).map(|(h, _)| h.fec), Some(None));
    assert_eq!(SessionHeader::parse(&bytes[..6]), None);
}

#[test]
fn reports_go_back_to_the_sender_application_at_most_a_bounded_number_held() {
    let config = config(ConnectionCountConfig::Fixed(1), SplitPolicy::Earliest);
    let (mut sender, mut receiver, received) =
        run(config, Duration::from_secs(2), 200, |_, _| false);
    assert_eq!(received.len(), 200);
    // An RTCP APP packet (PT 204) of 12 bytes, numbered in its last byte.
    let report = |n: u8| vec![0x80, 204, 0, 2, 0, 0, 0, 1, b'T', b'E', b'S', n];
    let mut now = Instant::ZERO + Duration::from_secs(2);
    let mut buf = Vec::new();
    let mut sent = 0u64;
    for n in 0..100u8 {
        if receiver.send_report(now, &report(n)).is_ok() {
            sent += 1;
        }
        // Not RTCP: never handed to the application.
        let _ = receiver.send_report(now, b"not rtcp");
        while receiver.poll_transmit(now, &mut buf).is_some() {
            sender.handle_datagram(now, &buf);
        }
        while sender.poll_transmit(now, &mut buf).is_some() {
            receiver.handle_datagram(now, &buf, 1);
        }
        now += Duration::from_millis(20);
        sender.handle_timeout(now);
        receiver.handle_timeout(now);
    }
    let mut held = Vec::new();
    while let Some(bytes) = sender.poll_report() {
        held.push(bytes);
    }
    let arrived = held.len() as u64 + sender.reports_dropped();
    assert!(sent > MAX_HELD_REPORTS as u64, "{sent} reports sent");
    assert!(
        arrived > MAX_HELD_REPORTS as u64,
        "{arrived} of {sent} arrived"
    );
    assert_eq!(held.len(), MAX_HELD_REPORTS);
    // The newest are kept, in order.
    let numbers: Vec<u8> = held.iter().map(|r| r[11]).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    assert!(held.iter().all(|r| r[1] == 204));
}
