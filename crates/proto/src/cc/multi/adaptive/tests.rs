use proptest::prelude::*;

use super::*;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// One flow's equation rate in these tests, bytes/s.
const EQUATION: f64 = 10_000.0;

fn report(rtt: u64, p: f64) -> Report {
    Report {
        rtt_sample: ms(rtt),
        srtt: ms(100),
        // 2.5 ms packets: T = k · 2.5 ms = 5 ms.
        packet_time: Some(Duration::from_micros(2500)),
        loss_event_rate: p,
        equation_rate: (p > 0.0).then_some(EQUATION),
        losses_per_event: 1.0,
        receive_rate: 1e9,
        ce_marks: 0,
    }
}

/// Feeds one report every 25 ms for `duration_ms`; returns the decisions.
fn feed(
    c: &mut AdaptiveCounter,
    now: &mut Instant,
    duration_ms: u64,
    report: Report,
) -> Vec<AdaptiveDecision> {
    let mut out = Vec::new();
    for _ in 0..duration_ms / 25 {
        *now += ms(25);
        out.extend(c.on_report(*now, report));
    }
    out
}

/// A controller past its first window (base 100 ms, still in slow start).
fn warmed(config: AdaptiveConfig) -> (AdaptiveCounter, Instant) {
    let mut c = AdaptiveCounter::new(config);
    let mut now = Instant::ZERO;
    let first = feed(&mut c, &mut now, 225, report(100, 0.0));
    assert_eq!(first.len(), 1);
    (c, now)
}

#[test]
fn grows_ten_percent_per_two_rtts_without_a_queue() {
    let (mut c, mut now) = warmed(AdaptiveConfig::default());
    // 2 s of a 100 ms RTT without queueing: a decision every 200 ms, each
    // ×1.1 (the gain of 0.5 on (T − 0)/T = 1 is capped at 0.1).
    let decisions = feed(&mut c, &mut now, 2000, report(100, 0.01));
    assert_eq!(decisions.len(), 10, "{decisions:?}");
    assert!(decisions.iter().all(|d| !d.congested));
    assert!((c.n() - 1.1f64.powi(10)).abs() < 1e-9, "{}", c.n());
    let target = c.target_rate().unwrap();
    assert!((target - EQUATION * 1.1f64.powi(10)).abs() < 1e-6);
    assert_eq!(c.base_rtt(), Some(ms(100)));
}

#[test]
fn slow_start_holds_the_target() {
    let mut c = AdaptiveCounter::new(AdaptiveConfig::default());
    let mut now = Instant::ZERO;
    let decisions = feed(&mut c, &mut now, 2000, report(100, 0.0));
    assert!(!decisions.is_empty());
    assert_eq!(c.n(), 1.0);
    assert_eq!(c.target_rate(), None);
}

#[test]
fn a_growing_queue_above_the_target_is_cut_and_a_draining_one_held() {
    let config = AdaptiveConfig {
        initial: 40.0,
        ..AdaptiveConfig::default()
    };
    let (mut c, mut now) = warmed(config);
    // T = k·s/X_max = 5 ms. A queue of 30 ms, more than the last window's:
    // cut by g·(q − T)/W = 0.5 × 25 ms / 200 ms = 6.25 %.
    let d = feed(&mut c, &mut now, 200, report(130, 0.01));
    assert_eq!(d.len(), 1);
    assert!(d[0].congested);
    assert_eq!(d[0].target, ms(5));
    assert!((d[0].n - 40.0 * 0.9375).abs() < 1e-9, "{}", d[0].n);
    // Still growing, but the last decision cut: held.
    let d = feed(&mut c, &mut now, 200, report(140, 0.01));
    assert!(d[0].congested);
    assert!((d[0].n - 40.0 * 0.9375).abs() < 1e-9);
    // Draining (20 ms after 40): held.
    let d = feed(&mut c, &mut now, 200, report(120, 0.01));
    assert!(d[0].congested);
    assert!((d[0].n - 40.0 * 0.9375).abs() < 1e-9);
    // A queue that stands for ever brings n down to one, not below.
    feed(&mut c, &mut now, 60_000, report(130, 0.01));
    assert_eq!(c.n(), 1.0);
    assert_eq!(c.target_rate(), Some(EQUATION));
}

#[test]
fn a_cut_starts_from_what_the_path_delivered() {
    let config = AdaptiveConfig {
        initial: 40.0,
        ..AdaptiveConfig::default()
    };
    let mut c = AdaptiveCounter::new(config);
    let mut now = Instant::ZERO;
    // The target is 400 kB/s but the receiver gets 96 kB/s at p = 1 %
    // with 4 packets lost per loss event: 4 % of the packets are lost, the
    // path carries 100 kB/s; the cut applies to that.
    let squeezed = |rtt, p| Report {
        receive_rate: 96_000.0,
        losses_per_event: 4.0,
        ..report(rtt, p)
    };
    feed(&mut c, &mut now, 225, squeezed(100, 0.0));
    let d = feed(&mut c, &mut now, 200, squeezed(130, 0.01));
    let expected = 96_000.0 / 0.96 * 0.9375;
    assert!((d[0].target_rate.unwrap() - expected).abs() < 1e-6);
    // The next window holds, even though the queue still grows: the cut
    // shows a window later.
    let d = feed(&mut c, &mut now, 200, squeezed(140, 0.01));
    assert!((d[0].target_rate.unwrap() - expected).abs() < 1e-6);
}

#[test]
fn the_window_maximum_and_mean_see_a_queue_the_minimum_misses() {
    let alternate = |c: &mut AdaptiveCounter, now: &mut Instant| {
        for i in 0..40 {
            *now += ms(25);
            let rtt = if i % 2 == 0 { 300 } else { 100 };
            c.on_report(*now, report(rtt, 0.01));
        }
    };
    // Samples alternate between 100 ms and 300 ms: the maximum (the
    // default) has a 200 ms queue, the mean 100 ms, the minimum none.
    let (mut max, mut now) = warmed(AdaptiveConfig::default());
    alternate(&mut max, &mut now);
    assert_eq!(max.n(), 1.0);
    let (mut mean, mut now) = warmed(AdaptiveConfig {
        queue_measure: QueueMeasure::WindowMean,
        ..AdaptiveConfig::default()
    });
    alternate(&mut mean, &mut now);
    assert_eq!(mean.n(), 1.0);
    let (mut min, mut now) = warmed(AdaptiveConfig {
        queue_measure: QueueMeasure::WindowMin,
        ..AdaptiveConfig::default()
    });
    alternate(&mut min, &mut now);
    assert!((min.n() - 1.1f64.powi(5)).abs() < 1e-9, "{}", min.n());
}

#[test]
fn the_target_delay_is_k_packet_times_at_the_highest_receive_rate() {
    let mut c = AdaptiveCounter::new(AdaptiveConfig::default());
    let mut now = Instant::ZERO;
    let with_packets = |rtt, packet_ms, p| Report {
        packet_time: Some(ms(packet_ms)),
        ..report(rtt, p)
    };
    // 10 ms packets: T = 2 × 10 = 20 ms; a queue of 20 ms holds n.
    feed(&mut c, &mut now, 225, with_packets(100, 10, 0.0));
    let d = feed(&mut c, &mut now, 200, with_packets(120, 10, 0.01));
    assert_eq!(d[0].target, ms(20));
    assert!(!d[0].congested);
    assert!((c.n() - 1.0).abs() < 1e-9);
    // A slower receive rate later does not raise it.
    let d = feed(&mut c, &mut now, 200, with_packets(150, 30, 0.01));
    assert_eq!(d[0].target, ms(20));
    assert!(d[0].congested);
}

#[test]
fn an_ecn_mark_brings_the_target_down_to_one_flow_whatever_the_delay() {
    let config = AdaptiveConfig {
        initial: 8.0,
        ..AdaptiveConfig::default()
    };
    let (mut c, mut now) = warmed(config);
    let marked = Report {
        ce_marks: 1,
        ..report(100, 0.01)
    };
    let d = feed(&mut c, &mut now, 200, marked);
    assert_eq!(d.len(), 1);
    assert!(d[0].congested);
    assert_eq!(c.n(), 1.0);
    assert_eq!(c.target_rate(), Some(EQUATION));
}

#[test]
fn the_target_never_passes_twice_the_receive_rate() {
    let (mut c, mut now) = warmed(AdaptiveConfig::default());
    // A data-limited sender: the receiver gets 12 kB/s.
    let limited = Report {
        receive_rate: 12_000.0,
        ..report(100, 0.01)
    };
    feed(&mut c, &mut now, 20_000, limited);
    assert!((c.target_rate().unwrap() - 24_000.0).abs() < 1e-6);
}

#[test]
fn the_base_rtt_expires_when_asked() {
    let config = AdaptiveConfig {
        rtt_min_lifetime: Some(Duration::from_secs(10)),
        ..AdaptiveConfig::default()
    };
    let mut c = AdaptiveCounter::new(config);
    let mut now = Instant::ZERO;
    feed(&mut c, &mut now, 1000, report(100, 0.01));
    // A route change: 150 ms from now on.
    feed(&mut c, &mut now, 5000, report(150, 0.01));
    assert_eq!(c.base_rtt(), Some(ms(100)));
    feed(&mut c, &mut now, 6000, report(150, 0.01));
    assert_eq!(c.base_rtt(), Some(ms(150)));
}

proptest! {
    /// Under any reports: n stays in [min, max], a decision moves the
    /// target by at most +i from where it was (and down by at most d from
    /// where it was or what the path delivered), the target is never above
    /// twice the receive rate unless the equation's floor is, it waits in
    /// slow start, decisions keep their spacing, and the target delay is at
    /// least γ·base.
    #[test]
    fn decisions_are_bounded(
        reports in proptest::collection::vec(
            (1u64..500, 1u64..400, 0u64..3, 0u64..2, 0u64..20, 1u64..100),
            1..400,
        ),
    ) {
        let config = AdaptiveConfig { max: 64.0, ..AdaptiveConfig::default() };
        let mut c = AdaptiveCounter::new(config);
        let mut now = Instant::ZERO;
        let mut last_decision: Option<Instant> = None;
        for (rtt, srtt, p, marks, packet, receive) in reports {
            now += ms(5);
            let before = c.target_rate();
            let report = Report {
                rtt_sample: ms(rtt),
                srtt: ms(srtt),
                packet_time: (packet > 0).then(|| ms(packet)),
                loss_event_rate: p as f64 * 0.01,
                equation_rate: (p > 0).then_some(EQUATION),
                losses_per_event: 1.0,
                receive_rate: receive as f64 * 1000.0,
                ce_marks: marks,
            };
            if let Some(d) = c.on_report(now, report) {
                prop_assert!(d.n >= config.min && d.n <= config.max);
                if p == 0 {
                    prop_assert_eq!(d.target_rate, before);
                } else {
                    let target = d.target_rate.unwrap();
                    prop_assert!(target >= EQUATION - 1e-9);
                    prop_assert!(target <= (2.0 * report.receive_rate).max(EQUATION) + 1e-9);
                    let from = before.unwrap_or(EQUATION).max(EQUATION);
                    prop_assert!(target <= from * (1.0 + config.max_increase) + 1e-9);
                    let delivered = report.receive_rate / (1.0 - report.loss_event_rate);
                    let low = from.min(delivered) * (1.0 - config.max_decrease);
                    prop_assert!(target >= low.min(EQUATION) - 1e-9 || target >= low - 1e-9);
                }
                if marks > 0 {
                    prop_assert!(d.congested);
                }
                prop_assert!(d.target.as_secs_f64() >= config.gamma * d.base_rtt.as_secs_f64() - 1e-6);
                prop_assert!(d.base_rtt <= d.window_min_rtt);
                if let Some(at) = last_decision {
                    prop_assert!(now - at >= config.min_decision_interval);
                }
                last_decision = Some(now);
            }
        }
    }
}
