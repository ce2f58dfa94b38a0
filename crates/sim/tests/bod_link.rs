//! The bandwidth-on-demand satellite link direction measured: the
//! request-grant delay before the first packet, the maximum rate, grants
//! that never exceed the maximum, conservation and determinism.

// An integration test is not `cfg(test)`, so clippy.toml's allow-unwrap-in-tests
// does not reach its helper functions; a panic is how a test fails.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use fairstream_proto::time::Instant;
use fairstream_proto::units::Rate;
use fairstream_sim::link::{
    BodConfig, BodGeometry, BodRequests, Capacity, Delivery, LinkConfig, LinkDirection,
};
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::{Limit, QueueConfig, SimPacket};
use fairstream_sim::rng::SimRng;
use proptest::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Pkt {
    id: u64,
    size: u32,
}

impl SimPacket for Pkt {
    fn size_bytes(&self) -> u32 {
        self.size
    }
}

fn terminal(bod: BodConfig, delay: Duration, queue: usize) -> LinkDirection<Pkt> {
    let config = LinkConfig {
        capacity: Capacity::Fixed(bod.max_rate),
        delay,
        overhead_bytes: 28,
        queue: QueueConfig::DropTail {
            limit: Limit::Packets(queue),
        },
        loss: LossConfig::None,
        delay_change: None,
        outage: None,
    };
    LinkDirection::with_bandwidth_on_demand(config, bod, SimRng::new(1), Instant::ZERO).unwrap()
}

/// Offers `arrivals` (time, size) in order and runs the link as a driver
/// would, to `end`; returns what was delivered.
fn drive(
    link: &mut LinkDirection<Pkt>,
    arrivals: &[(Instant, u32)],
    end: Instant,
) -> Vec<Delivery<Pkt>> {
    let mut delivered = Vec::new();
    let mut next = 0;
    loop {
        let arrival = arrivals.get(next).map(|a| a.0);
        let wake = link.next_event();
        let now = match (arrival, wake) {
            (Some(a), Some(w)) => a.min(w),
            (Some(a), None) => a,
            (None, Some(w)) => w,
            (None, None) => break,
        };
        if now > end {
            break;
        }
        delivered.extend(link.process(now));
        if arrival == Some(now) {
            let (_, size) = arrivals[next];
            link.enqueue(
                now,
                Pkt {
                    id: next as u64,
                    size,
                },
            );
            next += 1;
        }
        assert!(link.conservation().holds());
    }
    delivered.extend(link.process(end));
    delivered
}

#[test]
fn the_presets_follow_paper_002() {
    let regenerative = BodConfig::preset(BodGeometry::Regenerative);
    let transparent = BodConfig::preset(BodGeometry::Transparent);
    // 2 Mbit/s over 26.5 ms is 6625 bytes: 138 cells of 48 bytes.
    assert_eq!(regenerative.max_slots(), 138);
    assert_eq!(regenerative.request_grant_delay, Duration::from_millis(300));
    assert_eq!(transparent.request_grant_delay, Duration::from_millis(600));
    // ⌈300 / 26.5⌉ = 12 and ⌈600 / 26.5⌉ = 23 superframes.
    assert_eq!(regenerative.grant_lag_superframes(), 12);
    assert_eq!(transparent.grant_lag_superframes(), 23);
}

#[test]
fn the_first_packet_waits_for_its_grant() {
    for geometry in [BodGeometry::Regenerative, BodGeometry::Transparent] {
        let bod = BodConfig::preset(geometry);
        let mut link = terminal(bod, Duration::ZERO, 100);
        let delivered = drive(
            &mut link,
            &[(Instant::from_millis(1), 172)],
            Instant::from_millis(2_000),
        );
        let at = delivered[0].at;
        // Asked for at the next superframe (26.5 ms), granted lag
        // superframes on.
        let granted_from = Duration::from_micros(26_500) * (1 + bod.grant_lag_superframes() as u32);
        println!("{geometry:?}: first packet out at {at:?}");
        assert!(at >= Instant::ZERO + granted_from);
        assert!(at < Instant::ZERO + granted_from + Duration::from_micros(26_500));
    }
}

#[test]
fn a_saturated_terminal_runs_at_its_maximum_rate() {
    let bod = BodConfig::preset(BodGeometry::Regenerative);
    let mut link = terminal(bod, Duration::ZERO, 10_000);
    // 4 Mbit/s offered for 10 s: twice the maximum.
    let arrivals: Vec<(Instant, u32)> = (0..3_333u64)
        .map(|i| (Instant::from_micros(3_000 * i), 1472))
        .collect();
    let end = Instant::from_millis(10_000);
    let delivered = drive(&mut link, &arrivals, end);
    let bytes: u64 = delivered
        .iter()
        .map(|d| 1500 * u64::from(d.at <= end))
        .sum();
    let stats = link.bod_stats().unwrap();
    // After the grant lag (0.33 s) every superframe is granted 138 slots.
    let rate = bytes as f64 * 8.0 / (10.0 - 0.33);
    let granted_rate = 138.0 * 48.0 * 8.0 / 0.0265;
    println!("{rate:.0} bit/s delivered, {granted_rate:.0} granted a superframe; {stats:?}");
    assert_eq!(stats.max_slots_granted, 138);
    assert!(rate <= granted_rate * 1.01);
    assert!(rate > granted_rate * 0.97);
}

#[test]
fn a_full_queue_still_asks_for_what_is_offered() {
    // 4 Mbit/s offered into a 10-packet queue: most arrivals are dropped,
    // and the requests still count them, so the grant grows to the
    // maximum (counting only what the queue took, it stayed where the
    // first grants left it).
    let bod = BodConfig::preset(BodGeometry::Regenerative);
    let mut link = terminal(bod, Duration::ZERO, 10);
    let arrivals: Vec<(Instant, u32)> = (0..3_333u64)
        .map(|i| (Instant::from_micros(3_000 * i), 1472))
        .collect();
    drive(&mut link, &arrivals, Instant::from_millis(10_000));
    let stats = link.bod_stats().unwrap();
    println!("{stats:?}");
    assert_eq!(stats.max_slots_granted, 138);
    // Every superframe after the first second granted the maximum.
    let superframes = stats.superframes as f64;
    assert!(
        stats.slots_granted as f64 > 138.0 * (superframes - 1.0 / 0.0265),
        "{stats:?}"
    );
}

#[test]
fn rate_requests_alone_follow_the_arrival_rate() {
    let bod = BodConfig {
        requests: BodRequests::Rate,
        ..BodConfig::preset(BodGeometry::Regenerative)
    };
    let mut link = terminal(bod, Duration::ZERO, 10_000);
    // 64 kbit/s of 160-byte voice packets (188 on the wire), 20 ms apart.
    let arrivals: Vec<(Instant, u32)> = (0..500u64)
        .map(|i| (Instant::from_millis(20 * i), 160))
        .collect();
    let delivered = drive(&mut link, &arrivals, Instant::from_millis(12_000));
    let stats = link.bod_stats().unwrap();
    // 188 bytes every 20 ms is about 5.2 slots a superframe: 4 or 8 slots
    // (one or two packets' worth), never the maximum.
    println!("{stats:?}, {} delivered", delivered.len());
    assert!(stats.max_slots_granted <= 8);
    assert_eq!(delivered.len(), 500);
}

proptest! {
    /// Any arrival pattern: no superframe is granted more than the maximum,
    /// every packet is accounted for, and the same input gives the same
    /// output.
    #[test]
    fn grants_stay_under_the_maximum(
        gaps in prop::collection::vec((0u64..40_000, 40u32..1500), 1..200),
        transparent in any::<bool>(),
        requests in prop::sample::select(vec![BodRequests::Both, BodRequests::Rate, BodRequests::Volume]),
        max_kbit in 64u32..4000,
    ) {
        let geometry = if transparent { BodGeometry::Transparent } else { BodGeometry::Regenerative };
        let bod = BodConfig {
            requests,
            max_rate: Rate::from_bits_per_sec(f64::from(max_kbit) * 1e3),
            ..BodConfig::preset(geometry)
        };
        let mut at = Instant::ZERO;
        let arrivals: Vec<(Instant, u32)> = gaps
            .iter()
            .map(|(gap, size)| {
                at += Duration::from_micros(*gap);
                (at, *size)
            })
            .collect();
        let end = at + Duration::from_secs(3);
        let mut link = terminal(bod, Duration::from_millis(250), 20);
        let first = drive(&mut link, &arrivals, end);
        let stats = link.bod_stats().unwrap();
        prop_assert!(stats.max_slots_granted <= bod.max_slots());
        prop_assert!(stats.slots_used <= stats.slots_granted);
        let conservation = link.conservation();
        prop_assert!(conservation.holds());
        let mut again = terminal(bod, Duration::from_millis(250), 20);
        prop_assert_eq!(drive(&mut again, &arrivals, end), first);
    }
}
