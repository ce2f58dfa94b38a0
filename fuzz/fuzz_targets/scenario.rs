//! Any UTF-8 text as a scenario file, through the parser and validator that
//! `fairstream simulate` runs first (`Scenario::from_str`); the simulation
//! itself is not run. The parser must not panic or hang, must give the same
//! scenario for the same text, and what it accepts must lie within the
//! bounds of `fairstream_sim::limits` (the issue 13 rule: an absurd value is
//! refused when the file is read, not met during a run), with a route for
//! every flow.
#![no_main]

use std::time::Duration;

use fairstream_proto::units::Rate;
use fairstream_sim::limits::{MAX_DURATION, MAX_QUEUE_BYTES, MAX_QUEUE_PACKETS, MAX_RATE_BPS};
use fairstream_sim::queue::Limit;
use fairstream_sim::scenario::{
    Capacity, MediaSourceConfig, PlayerSetting, QueueConfig, Scenario, StartupDelaySetting,
    Transport, MAX_PACKET_SIZE,
};
use libfuzzer_sys::fuzz_target;

fn rate(rate: Rate, what: &str) {
    let bits = rate.bits_per_sec();
    assert!(
        bits.is_finite() && bits >= 0.0 && bits <= MAX_RATE_BPS,
        "{what}: {bits} bit/s"
    );
}

fn duration(duration: Duration, what: &str) {
    assert!(duration <= MAX_DURATION, "{what}: {duration:?}");
}

fn packets(limit: u64, what: &str) {
    assert!(
        limit >= 1 && limit <= MAX_QUEUE_PACKETS,
        "{what}: a queue of {limit} packets"
    );
}

fn check(scenario: &Scenario) {
    let run = scenario.run();
    assert!(!run.duration.is_zero());
    duration(run.duration, "run");
    let nodes = scenario.nodes().len();
    for link in scenario.links() {
        assert!(link.between.iter().all(|n| n.0 < nodes));
        if let Capacity::Fixed(r) = link.capacity {
            assert!(r.bits_per_sec() > 0.0, "a link of rate zero");
            rate(r, "link rate");
        }
        duration(link.delay, "link delay");
        if let Some(change) = link.delay_change {
            duration(change.at, "delay change time");
            duration(change.delay, "changed delay");
        }
        match &link.queue {
            QueueConfig::DropTailPackets(n) => packets(*n, "drop-tail"),
            QueueConfig::DropTailBytes(b) => {
                assert!(
                    b.get() >= 1 && b.get() <= MAX_QUEUE_BYTES,
                    "a queue of {} bytes",
                    b.get()
                )
            }
            QueueConfig::Red(red) => {
                packets(red.limit_packets, "RED");
                assert!(
                    red.min_th.is_finite() && red.max_th.is_finite() && red.min_th < red.max_th
                );
            }
            QueueConfig::CoDel(codel) => match codel.limit {
                Limit::Packets(n) => packets(n as u64, "CoDel"),
                Limit::Bytes(n) => assert!(n >= 1 && n <= MAX_QUEUE_BYTES),
            },
            QueueConfig::FqCoDel(fq) => packets(fq.limit_packets as u64, "FQ-CoDel"),
        }
    }
    for flow in scenario.flows() {
        assert!(flow.from.0 < nodes && flow.to.0 < nodes);
        let route = scenario
            .route(flow.from, flow.to)
            .expect("a flow has a route");
        assert!(route.iter().all(|hop| hop.link.0 < scenario.links().len()));
        assert!(
            scenario.route(flow.to, flow.from).is_some(),
            "a flow has a way back"
        );
        duration(flow.start, "flow start");
        if let Some(stop) = flow.stop {
            duration(stop, "flow stop");
        }
        if let Some(size) = flow.transport.packet_size() {
            assert!(
                size.get() >= 1 && size <= MAX_PACKET_SIZE,
                "packets of {size}"
            );
        }
        match flow.transport {
            Transport::Tfrc { app_rate, .. }
            | Transport::TfrcSp { app_rate, .. }
            | Transport::Ccid2 { app_rate, .. } => {
                if let Some(r) = app_rate {
                    rate(r, "application rate");
                }
            }
            Transport::TcpNewReno { mss, min_rto, .. } => {
                assert!(mss.get() >= 1 && mss <= MAX_PACKET_SIZE, "an MSS of {mss}");
                duration(min_rto, "minimum RTO");
            }
            Transport::Cbr { rate: r, .. } => rate(r, "CBR rate"),
            Transport::OnOff {
                rate: r, on, off, ..
            } => {
                rate(r, "on-off rate");
                duration(on, "on time");
                duration(off, "off time");
            }
        }
        if let Some(multi) = &flow.multi {
            assert!(multi.conns >= 1, "{multi:?}");
            duration(multi.start_offset, "start offset");
            if let Some(lifetime) = multi.rtt_min_lifetime {
                duration(lifetime, "rtt_min lifetime");
            }
        }
        if let Some(media) = &flow.media {
            assert!(media.fps > 0.0 && media.fps <= 240.0, "{media:?}");
            if let StartupDelaySetting::Fixed(delay) = media.startup_delay {
                duration(delay, "start-up delay");
            }
            if let PlayerSetting::Rebuffer {
                refill: Some(refill),
            } = media.player
            {
                duration(refill, "refill");
            }
            if let MediaSourceConfig::Generated {
                width,
                height,
                bitrate,
                ..
            } = media.source
            {
                assert!((16..=4096).contains(&width) && (16..=4096).contains(&height));
                rate(bitrate, "video bitrate");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Trace and media paths resolve against a directory that does not exist.
    let origin = "/nonexistent/fuzz.toml";
    let Ok(scenario) = Scenario::from_str(text, origin) else {
        return;
    };
    check(&scenario);
    assert_eq!(
        Scenario::from_str(text, origin).ok().as_ref(),
        Some(&scenario)
    );
    let _ = scenario.with_seed(7).with_duration(Duration::from_secs(1));
});
