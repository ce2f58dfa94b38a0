//! CoDel and FQ-CoDel inside a link direction: the sojourn time CoDel sees
//! runs from arrival to the start of transmission, and packets dropped after
//! they were queued come back to the driver and keep the accounting whole.

// An integration test is not `cfg(test)`, so clippy.toml's allow-unwrap-in-tests
// does not reach its helper functions; a panic is how a test fails.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;
use fairstream_sim::link::{Capacity, EnqueueOutcome, LinkConfig, LinkDirection};
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::{CoDelConfig, DropReason, FqCoDelConfig, QueueConfig, SimPacket};
use fairstream_sim::rng::SimRng;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Pkt {
    id: u64,
    flow: u64,
    ecn: Ecn,
}

impl SimPacket for Pkt {
    fn size_bytes(&self) -> u32 {
        1500
    }

    fn ecn(&self) -> Ecn {
        self.ecn
    }

    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }

    fn flow_key(&self) -> u64 {
        self.flow
    }
}

/// 1500-byte packets at 1.25 MB/s: 1.2 ms each, no overhead, no delay.
fn link(queue: QueueConfig) -> LinkDirection<Pkt> {
    let config = LinkConfig {
        capacity: Capacity::Fixed(Rate::from_bytes_per_sec(1.25e6)),
        delay: Duration::ZERO,
        overhead_bytes: 0,
        queue,
        loss: LossConfig::None,
        delay_change: None,
        outage: None,
    };
    let mut link = LinkDirection::new(config, SimRng::new(1), Instant::ZERO).unwrap();
    link.keep_dropped_packets();
    link
}

fn codel(ecn: bool) -> QueueConfig {
    QueueConfig::CoDel(CoDelConfig {
        ecn,
        ..CoDelConfig::default()
    })
}

#[test]
fn codel_measures_the_sojourn_to_the_start_of_transmission() {
    let mut link = link(codel(false));
    // 500 packets at once: packet k starts transmission at k × 1.2 ms.
    for id in 0..500 {
        let packet = Pkt {
            id,
            flow: 0,
            ecn: Ecn::NotEct,
        };
        assert_eq!(link.enqueue(Instant::ZERO, packet), EnqueueOutcome::Queued);
    }
    let mut first_drop = None;
    let mut now = Instant::ZERO;
    while first_drop.is_none() && now < Instant::from_millis(300) {
        now += Duration::from_micros(100);
        link.process(now);
        first_drop = link.take_dropped_packets().into_iter().next();
    }
    let drop = first_drop.expect("CoDel dropped nothing");
    assert_eq!(drop.reason, DropReason::CoDel);
    // Sojourn reaches 5 ms at the 6th dequeue (packet 5, 6 ms), so
    // first_above_time = 106 ms, and the first dequeue at or after it is
    // packet 89's, at 106.8 ms: the one dropped. Were the sojourn measured at
    // the end of transmission (one packet later), it would be packet 88.
    assert_eq!(drop.packet.id, 89);
    let conservation = link.conservation();
    assert!(conservation.holds(), "{conservation:?}");
    assert_eq!(link.stats().queue_drops, 1);
}

#[test]
fn dropped_and_marked_packets_keep_the_link_accounting_whole() {
    for (queue, ecn) in [
        (codel(false), Ecn::NotEct),
        (codel(true), Ecn::Ect0),
        (
            QueueConfig::FqCoDel(FqCoDelConfig {
                limit_packets: 200,
                ..FqCoDelConfig::default()
            }),
            Ecn::Ect0,
        ),
    ] {
        let mut link = link(queue);
        let mut now = Instant::ZERO;
        let (mut delivered, mut dropped, mut marked_delivered) = (0u64, 0u64, 0u64);
        // Two flows at 1.5× the link's rate for 5 s.
        for id in 0..6_250u64 {
            now += Duration::from_micros(800);
            let packet = Pkt {
                id,
                flow: id % 2,
                ecn,
            };
            if let EnqueueOutcome::Dropped(_) = link.enqueue(now, packet) {
                dropped += 1;
            }
            for delivery in link.process(now) {
                delivered += 1;
                marked_delivered += u64::from(delivery.packet.ecn == Ecn::Ce);
            }
            dropped += link.take_dropped_packets().len() as u64;
            assert!(link.conservation().holds());
        }
        let stats = link.stats();
        eprintln!("{queue:?}: delivered {delivered}, dropped {dropped}, CE {marked_delivered}");
        assert_eq!(stats.queue_drops, dropped);
        assert_eq!(stats.delivered, delivered);
        // Every mark reached the far end (but the packet still in
        // transmission): a mark is not a drop.
        assert!(
            stats.ce_marked >= marked_delivered && stats.ce_marked <= marked_delivered + 1,
            "{stats:?}"
        );
        assert!(dropped + marked_delivered > 100, "{stats:?}");
        assert_eq!(
            6_250,
            delivered + dropped + link.conservation().in_link,
            "{stats:?}"
        );
    }
}

#[test]
fn fq_codel_bounds_the_total_but_not_a_sparse_flow() {
    let mut link = link(QueueConfig::FqCoDel(FqCoDelConfig {
        limit_packets: 100,
        ecn: false,
        ..FqCoDelConfig::default()
    }));
    let mut now = Instant::ZERO;
    let mut sparse_delivered = 0;
    for id in 0..5_000u64 {
        now += Duration::from_micros(600);
        // A fat flow at twice the link rate and, every 20th slot, a sparse one.
        let flow = u64::from(id % 20 == 0);
        let outcome = link.enqueue(
            now,
            Pkt {
                id,
                flow,
                ecn: Ecn::NotEct,
            },
        );
        assert_eq!(
            outcome,
            EnqueueOutcome::Queued,
            "FQ-CoDel drops from a queue head"
        );
        assert!(link.queue_len_packets() <= 100);
        for drop in link.take_dropped_packets() {
            assert_eq!(drop.packet.flow, 0, "the sparse flow lost a packet");
        }
        sparse_delivered += link
            .process(now)
            .iter()
            .filter(|d| d.packet.flow == 1)
            .count();
    }
    assert!(sparse_delivered >= 249, "{sparse_delivered}");
    assert!(
        link.queue_stats().dropped() > 900,
        "{:?}",
        link.queue_stats()
    );
}
