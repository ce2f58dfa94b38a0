//! The WiMAX TDD station measured: frame timing, a packet waiting for its
//! subframe and its grant, capacity = PHY rate × the subframe's share of
//! the frame less its overhead, stations sharing a cell, round robin
//! between a station's rtPS and nrtPS queues, conservation and
//! determinism (paper 000 §3.1, Table 1; IEEE 802.16e-2005).

// An integration test is not `cfg(test)`, so clippy.toml's allow-unwrap-in-tests
// does not reach its helper functions; a panic is how a test fails.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fairstream_proto::time::Instant;
use fairstream_sim::link::{
    Capacity, Delivery, LinkConfig, LinkDirection, SharedTddCell, Subframe, TddCell, TddConfig,
};
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::{
    Limit, PriorityConfig, PriorityScheduler, QueueConfig, SimPacket, TrafficClass,
};
use fairstream_sim::rng::SimRng;
use proptest::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Pkt {
    id: u64,
    size: u32,
    class: TrafficClass,
}

impl SimPacket for Pkt {
    fn size_bytes(&self) -> u32 {
        self.size
    }

    fn class(&self) -> TrafficClass {
        self.class
    }
}

fn cell(config: TddConfig) -> SharedTddCell {
    Arc::new(Mutex::new(TddCell::new("bs", config).unwrap()))
}

fn station(
    cell: &SharedTddCell,
    subframe: Subframe,
    queue: QueueConfig,
    loss: LossConfig,
    seed: u64,
) -> LinkDirection<Pkt> {
    let config = cell.lock().unwrap().config();
    let link = LinkConfig {
        capacity: Capacity::Fixed(config.mean_rate(subframe)),
        delay: Duration::ZERO,
        overhead_bytes: 0,
        queue,
        loss,
        delay_change: None,
        outage: None,
    };
    LinkDirection::with_tdd(
        link,
        Arc::clone(cell),
        subframe,
        SimRng::new(seed),
        Instant::ZERO,
    )
    .unwrap()
}

fn droptail(packets: usize) -> QueueConfig {
    QueueConfig::DropTail {
        limit: Limit::Packets(packets),
    }
}

/// Paper 000 §3.1: an rtPS and an nrtPS queue of 50 packets each, served
/// round robin (video and background classes, one packet a turn).
fn rtps_nrtps() -> QueueConfig {
    QueueConfig::Priority(PriorityConfig {
        limit_packets: 50,
        scheduler: PriorityScheduler::WeightedRoundRobin { weights: [1, 1, 1] },
    })
}

/// An arrival: when, at which link, how big, in which class.
type Arrival = (Instant, usize, u32, TrafficClass);

/// Offers `arrivals` (in time order) and runs every link as a driver
/// would, always at the earliest pending time, to `end`; returns what each
/// link delivered.
fn drive(
    links: &mut [LinkDirection<Pkt>],
    arrivals: &[Arrival],
    end: Instant,
) -> Vec<Vec<Delivery<Pkt>>> {
    let mut delivered = vec![Vec::new(); links.len()];
    let mut next = 0;
    loop {
        let arrival = arrivals.get(next).map(|a| a.0);
        let wake = links.iter().filter_map(LinkDirection::next_event).min();
        let now = match (arrival, wake) {
            (Some(a), Some(w)) => a.min(w),
            (Some(a), None) => a,
            (None, Some(w)) => w,
            (None, None) => break,
        };
        if now > end {
            break;
        }
        for (link, out) in links.iter_mut().zip(&mut delivered) {
            if link.next_event().is_some_and(|w| w <= now) {
                out.extend(link.process(now));
            }
        }
        while arrivals.get(next).is_some_and(|a| a.0 == now) {
            let (_, index, size, class) = arrivals[next];
            links[index].enqueue(
                now,
                Pkt {
                    id: next as u64,
                    size,
                    class,
                },
            );
            next += 1;
        }
        assert!(links.iter().all(|l| l.conservation().holds()));
    }
    for (link, out) in links.iter_mut().zip(&mut delivered) {
        out.extend(link.process(end));
    }
    delivered
}

fn frame(ms: u64) -> TddConfig {
    TddConfig {
        frame: Duration::from_millis(ms),
        ..TddConfig::default()
    }
}

#[test]
fn a_packet_waits_for_its_grant_and_goes_in_the_uplink_subframe() {
    for ms in [5, 20] {
        let config = frame(ms);
        let cell = cell(config);
        let mut links = [station(
            &cell,
            Subframe::Uplink,
            droptail(50),
            LossConfig::None,
            1,
        )];
        // Arrives 1 ms into frame 0: asked for at frame 1's start, granted
        // in frame 2's UL subframe (a one-frame grant lag).
        let delivered = drive(
            &mut links,
            &[(Instant::from_millis(1), 0, 1000, TrafficClass::Video)],
            Instant::from_millis(200),
        );
        let at = delivered[0][0].at;
        let frame_length = config.frame;
        let (region, length) = config.data_region(Subframe::Uplink);
        let frame_two = Instant::ZERO + frame_length * 2;
        println!("{ms} ms frames: out at {at:?}");
        assert!(
            at > frame_two + region,
            "{at:?} before frame 2's UL data region"
        );
        assert!(at <= frame_two + region + length);
        // 1000 bytes at 10.67 Mbit/s: 0.75 ms from the burst's start.
        let expected = frame_two + region + Duration::from_nanos(749_766);
        assert!(at.saturating_duration_since(expected) < Duration::from_micros(2));
        assert!(expected.saturating_duration_since(at) < Duration::from_micros(2));
    }
}

#[test]
fn the_downlink_goes_in_the_first_part_of_the_frame() {
    let config = frame(10);
    let cell = cell(config);
    let mut links = [station(
        &cell,
        Subframe::Downlink,
        droptail(50),
        LossConfig::None,
        1,
    )];
    let delivered = drive(
        &mut links,
        &[(Instant::from_millis(3), 0, 500, TrafficClass::Default)],
        Instant::from_millis(100),
    );
    let at = delivered[0][0].at;
    let offset = at.saturating_duration_since(Instant::from_millis(20));
    // Frame 2 (20-30 ms): within the 2.5 ms DL subframe, after its overhead.
    assert!(
        offset > config.dl_overhead && offset <= config.dl_length(),
        "{offset:?}"
    );
}

/// Bytes delivered by `end` from a station offered far more than the
/// uplink carries.
fn saturated_rate(config: TddConfig, stations: usize, seconds: u64) -> Vec<f64> {
    let cell = cell(config);
    let mut links: Vec<_> = (0..stations)
        .map(|i| {
            station(
                &cell,
                Subframe::Uplink,
                droptail(100),
                LossConfig::None,
                i as u64,
            )
        })
        .collect();
    let mut arrivals = Vec::new();
    // 12 Mbit/s each: 1000-byte packets every 0.667 ms.
    for k in 0..(seconds * 1500) {
        for s in 0..stations {
            arrivals.push((
                Instant::from_micros(k * 667 + s as u64),
                s,
                1000,
                TrafficClass::Default,
            ));
        }
    }
    let end = Instant::from_millis(seconds * 1000);
    let delivered = drive(&mut links, &arrivals, end);
    delivered
        .iter()
        .map(|d| {
            let bytes: u64 = d.iter().filter(|d| d.at <= end).map(|_| 1000).sum();
            bytes as f64 * 8.0 / seconds as f64
        })
        .collect()
}

#[test]
fn a_saturated_station_gets_the_uplink_share_of_the_phy_rate() {
    for ms in [5, 20] {
        let config = frame(ms);
        let rate = saturated_rate(config, 1, 4)[0];
        let capacity = config.mean_rate(Subframe::Uplink).bits_per_sec();
        // rate × 3/4 less the overhead: 7.21 Mbit/s at 5 ms, 7.81 at 20 ms.
        println!("{ms} ms: {rate:.0} bit/s of a {capacity:.0} bit/s uplink");
        assert!(rate <= capacity * 1.001);
        assert!(rate > capacity * 0.98, "{rate} of {capacity}");
    }
    let short = frame(5).mean_rate(Subframe::Uplink).bits_per_sec();
    let long = frame(20).mean_rate(Subframe::Uplink).bits_per_sec();
    assert!((short / 7.21e6 - 1.0).abs() < 0.01, "{short}");
    assert!((long / 7.81e6 - 1.0).abs() < 0.01, "{long}");
}

#[test]
fn stations_of_a_cell_share_its_uplink_equally() {
    let config = frame(10);
    let rates = saturated_rate(config, 3, 4);
    let capacity = config.mean_rate(Subframe::Uplink).bits_per_sec();
    let total: f64 = rates.iter().sum();
    println!("{rates:?} of {capacity:.0}");
    assert!(total <= capacity * 1.001 && total > capacity * 0.98);
    for rate in &rates {
        assert!((rate / (capacity / 3.0) - 1.0).abs() < 0.03, "{rates:?}");
    }
}

#[test]
fn a_light_station_gets_what_it_asks_and_the_rest_goes_to_the_others() {
    let config = frame(20);
    let cell = cell(config);
    let mut links: Vec<_> = (0..2)
        .map(|i| station(&cell, Subframe::Uplink, droptail(100), LossConfig::None, i))
        .collect();
    let mut arrivals = Vec::new();
    for k in 0..6000u64 {
        // Station 0 saturating (12 Mbit/s), station 1 at 1.2 Mbit/s.
        arrivals.push((
            Instant::from_micros(k * 667),
            0,
            1000,
            TrafficClass::Default,
        ));
        if k % 10 == 0 {
            arrivals.push((
                Instant::from_micros(k * 667 + 1),
                1,
                1000,
                TrafficClass::Default,
            ));
        }
    }
    let end = Instant::from_millis(4000);
    let delivered = drive(&mut links, &arrivals, end);
    let rate = |i: usize| delivered[i].len() as f64 * 8000.0 / 4.0;
    let capacity = config.mean_rate(Subframe::Uplink).bits_per_sec();
    println!("{:.0} {:.0} of {capacity:.0}", rate(0), rate(1));
    assert!((rate(1) / 1.2e6 - 1.0).abs() < 0.03);
    assert!((rate(0) + rate(1)) / capacity > 0.97);
}

#[test]
fn a_stations_service_class_queues_are_served_round_robin() {
    let config = frame(20);
    let cell = cell(config);
    let mut links = [station(
        &cell,
        Subframe::Uplink,
        rtps_nrtps(),
        LossConfig::None,
        1,
    )];
    // Both queues full at once: 50 rtPS (video) and 50 nrtPS (background)
    // packets, the nrtPS ones first.
    let mut arrivals = Vec::new();
    for i in 0..50u64 {
        arrivals.push((
            Instant::from_micros(100 + i),
            0,
            1000,
            TrafficClass::Background,
        ));
    }
    for i in 0..50u64 {
        arrivals.push((Instant::from_micros(200 + i), 0, 1000, TrafficClass::Video));
    }
    let delivered = drive(&mut links, &arrivals, Instant::from_millis(500));
    let classes: Vec<TrafficClass> = delivered[0].iter().map(|d| d.packet.class).collect();
    assert_eq!(classes.len(), 100);
    // Alternating from the first packet out: never two of a class in a row.
    for pair in classes.windows(2) {
        assert_ne!(pair[0], pair[1], "{classes:?}");
    }
}

#[test]
fn a_packet_longer_than_its_burst_is_fragmented_into_the_next_frame() {
    // 5 ms frames: 3.38 ms of UL data region, 4509 bytes a frame.
    let config = frame(5);
    let capacity = config.capacity_bytes(Subframe::Uplink);
    assert_eq!(capacity, 4509);
    let cell = cell(config);
    let mut links = [station(
        &cell,
        Subframe::Uplink,
        droptail(50),
        LossConfig::None,
        1,
    )];
    let delivered = drive(
        &mut links,
        &[(Instant::from_micros(100), 0, 6000, TrafficClass::Video)],
        Instant::from_millis(100),
    );
    let at = delivered[0][0].at;
    // Asked for in frame 1 (4509 bytes at most), granted in frame 2, the
    // rest asked for in frame 2 and granted in frame 3: it ends there.
    assert!(
        at > Instant::from_millis(15) && at < Instant::from_millis(20),
        "{at:?}"
    );
    let stats = links[0].tdd_stats().unwrap();
    assert_eq!(stats.bytes_used, 6000);
}

#[test]
fn each_station_draws_its_own_channel_losses() {
    let config = frame(10);
    let ge = LossConfig::GilbertElliott {
        p_good_good: 0.95,
        p_bad_bad: 0.94,
        loss_good: 0.01,
        loss_bad: 0.05,
    };
    let cell = cell(config);
    let mut links: Vec<_> = (0..2)
        .map(|i| station(&cell, Subframe::Uplink, droptail(100), ge, 10 + i))
        .collect();
    let mut arrivals = Vec::new();
    for k in 0..20_000u64 {
        arrivals.push((Instant::from_micros(k * 2000), 0, 200, TrafficClass::Video));
        arrivals.push((
            Instant::from_micros(k * 2000 + 1),
            1,
            200,
            TrafficClass::Video,
        ));
    }
    let delivered = drive(&mut links, &arrivals, Instant::from_millis(41_000));
    let lost: Vec<u64> = links.iter().map(|l| l.stats().channel_losses).collect();
    // Paper 000 §3.4's chain loses 2.4 % in the long run.
    for (i, l) in lost.iter().enumerate() {
        let rate = *l as f64 / 20_000.0;
        assert!((0.015..0.035).contains(&rate), "station {i}: {rate}");
        assert_eq!(delivered[i].len() as u64 + l, 20_000);
    }
    assert_ne!(lost[0], lost[1], "the stations' channels are independent");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the traffic, packets leave each station in order, within
    /// the subframe's data region, never faster than the cell allows, and
    /// the same run gives the same result.
    #[test]
    fn stations_conserve_order_and_stay_in_their_subframe(
        ms in prop::sample::select(vec![5u64, 8, 10, 20]),
        gaps in prop::collection::vec((0u64..3_000, 40u32..1500, 0usize..3), 1..300),
    ) {
        let config = frame(ms);
        let run = || {
            let cell = cell(config);
            let mut links: Vec<_> = (0..3)
                .map(|i| station(&cell, Subframe::Uplink, droptail(40), LossConfig::None, i))
                .collect();
            let mut t = 0;
            let arrivals: Vec<Arrival> = gaps
                .iter()
                .map(|&(gap, size, s)| {
                    t += gap;
                    (Instant::from_micros(t), s, size, TrafficClass::Default)
                })
                .collect();
            drive(&mut links, &arrivals, Instant::from_millis(5_000))
        };
        let first = run();
        prop_assert_eq!(&first, &run());
        let (region, length) = config.data_region(Subframe::Uplink);
        for out in &first {
            for pair in out.windows(2) {
                prop_assert!(pair[0].packet.id < pair[1].packet.id);
                prop_assert!(pair[0].at <= pair[1].at);
            }
            for d in out {
                let into = Duration::from_nanos(
                    (d.at.saturating_duration_since(Instant::ZERO).as_nanos()
                        % config.frame.as_nanos()) as u64,
                );
                prop_assert!(into > region && into <= region + length + Duration::from_nanos(2),
                    "{:?} into the frame", into);
            }
        }
    }
}
