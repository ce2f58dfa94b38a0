use proptest::prelude::*;

use super::*;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// Paper 001's IIAD with the start-up and packet-time threshold the scenario
/// keys `startup`, `queue_packets` and `gamma` can ask for (the default of
/// issue 6, before the adaptive controller replaced it).
const IIAD_TUNED: MultiConfig = MultiConfig {
    gamma: 0.1,
    queue_packets: 9.0,
    gamma_max: 1.0,
    startup: true,
    ..MultiConfig::MULTFRC
};

/// Feeds `count` windows of `m` samples of `rtt`, one sample every 100 ms
/// from `*now`.
fn feed(
    counter: &mut ConnectionCounter,
    now: &mut Instant,
    rtt: Duration,
    windows: usize,
    m: usize,
) -> Vec<Decision> {
    let mut out = Vec::new();
    for _ in 0..windows * m {
        *now += ms(100);
        if let Some(d) = counter.on_rtt_sample(*now, rtt) {
            out.push(d);
        }
    }
    out
}

#[test]
fn multfrc_follows_iiad() {
    let mut c = ConnectionCountConfig::Multfrc(MultiConfig {
        m: 1,
        ..MultiConfig::MULTFRC
    })
    .build()
    .unwrap();
    let mut now = Instant::ZERO;
    // No queueing: n grows by 1/n: 1 -> 2 -> 2.5 -> 2.9.
    let d = feed(&mut c, &mut now, ms(100), 3, 1);
    assert!(!d[0].congested);
    assert!((c.n() - 2.9).abs() < 1e-12, "{}", c.n());
    assert_eq!(c.connections(), 3);
    // Queueing above 0.2 rtt_min: minus one per decision.
    feed(&mut c, &mut now, ms(125), 1, 1);
    assert!((c.n() - 1.9).abs() < 1e-12);
    // At the threshold exactly (20 ms over 100 ms) is not congestion.
    feed(&mut c, &mut now, ms(120), 1, 1);
    assert!((c.n() - (1.9 + 1.0 / 1.9)).abs() < 1e-12);
    // Never below one.
    feed(&mut c, &mut now, ms(200), 10, 1);
    assert_eq!(c.n(), 1.0);
    assert_eq!(c.rtt_min(), Some(ms(100)));
}

#[test]
fn e_multfrc_decreases_multiplicatively() {
    let mut c = ConnectionCountConfig::EMultfrc(MultiConfig {
        m: 1,
        initial: 8.0,
        ..MultiConfig::E_MULTFRC
    })
    .build()
    .unwrap();
    let mut now = Instant::ZERO;
    feed(&mut c, &mut now, ms(100), 1, 1); // sets rtt_min; 8 + 0.5/8
    let before = c.n();
    feed(&mut c, &mut now, ms(150), 1, 1);
    assert!((c.n() - (0.5 * before + 0.5 / before)).abs() < 1e-12);
}

#[test]
fn ave_rtt_averages_m_samples() {
    let mut c = ConnectionCountConfig::Multfrc(MultiConfig {
        m: 4,
        ..MultiConfig::MULTFRC
    })
    .build()
    .unwrap();
    let mut now = Instant::ZERO;
    let mut decisions = Vec::new();
    for rtt in [100, 110, 90, 100, 300] {
        now += ms(100);
        decisions.extend(c.on_rtt_sample(now, ms(rtt)));
    }
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].ave_rtt, ms(100));
    assert_eq!(c.decisions(), 1);
    // Nonsense samples are ignored.
    assert!(c.on_rtt_sample(now, Duration::ZERO).is_none());
    assert!(c.on_rtt_sample(now, Duration::from_secs(7200)).is_none());
}

#[test]
fn rtt_min_expires_so_a_longer_path_becomes_the_baseline() {
    let config = MultiConfig {
        m: 10,
        initial: 4.0,
        ..MultiConfig::MULTFRC
    };
    for (lifetime, expect_recovery) in [(Some(Duration::from_secs(60)), true), (None, false)] {
        let mut c = ConnectionCountConfig::Multfrc(MultiConfig {
            rtt_min_lifetime: lifetime,
            ..config
        })
        .build()
        .unwrap();
        let mut now = Instant::ZERO;
        feed(&mut c, &mut now, ms(100), 30, 10);
        let before = c.n();
        // The route changes: RTT_min up by 50 %, no queueing at all.
        feed(&mut c, &mut now, ms(150), 200, 10);
        eprintln!(
            "lifetime {lifetime:?}: n {before:.2} -> {:.2}, rtt_min {:?}",
            c.n(),
            c.rtt_min()
        );
        if expect_recovery {
            assert_eq!(c.rtt_min(), Some(ms(150)));
            assert!(c.n() > before, "recovers and grows again");
        } else {
            assert_eq!(c.rtt_min(), Some(ms(100)));
            assert_eq!(c.n(), 1.0, "stuck at one connection");
        }
    }
}

#[test]
fn fixed_and_aggregate_counts() {
    let mut fixed = ConnectionCountConfig::Fixed(4).build().unwrap();
    assert!(fixed.on_rtt_sample(Instant::ZERO, ms(100)).is_none());
    assert_eq!(fixed.connections(), 4);
    let mut aggregate = ConnectionCountConfig::Aggregate(MultiConfig {
        m: 1,
        ..MultiConfig::MULTFRC
    })
    .build()
    .unwrap();
    let mut now = Instant::ZERO;
    feed(&mut aggregate, &mut now, ms(100), 5, 1);
    assert!(aggregate.n() > 2.0 && aggregate.n().fract() != 0.0);
    assert_eq!(aggregate.connections(), 1);
}

#[test]
fn bad_parameters_are_named() {
    for (config, name) in [
        (ConnectionCountConfig::Fixed(0), "conns"),
        (
            ConnectionCountConfig::Multfrc(MultiConfig {
                alpha: 0.0,
                ..MultiConfig::MULTFRC
            }),
            "alpha",
        ),
        (
            ConnectionCountConfig::EMultfrc(MultiConfig {
                beta: 1.0,
                ..MultiConfig::E_MULTFRC
            }),
            "beta",
        ),
        (
            ConnectionCountConfig::Multfrc(MultiConfig {
                m: 0,
                ..MultiConfig::MULTFRC
            }),
            "m",
        ),
        (
            ConnectionCountConfig::Multfrc(MultiConfig {
                gamma: f64::NAN,
                ..MultiConfig::MULTFRC
            }),
            "gamma",
        ),
        (
            ConnectionCountConfig::Multfrc(MultiConfig {
                initial: 100.0,
                ..MultiConfig::MULTFRC
            }),
            "initial",
        ),
    ] {
        let error = config.build().unwrap_err().to_string();
        assert!(error.starts_with(name), "{error}");
    }
}

#[test]
fn iiad_with_startup_starts_up_then_follows_iiad() {
    let mut c = ConnectionCountConfig::Multfrc(MultiConfig { m: 1, ..IIAD_TUNED })
        .build()
        .unwrap();
    let mut now = Instant::ZERO;
    // Start-up: +α = 1 per decision while no decision found congestion.
    feed(&mut c, &mut now, ms(100), 4, 1);
    assert_eq!(c.n(), 5.0);
    // 100 ms over a 100 ms rtt_min, no packet time known: γ·rtt_min = 10 ms.
    let d = feed(&mut c, &mut now, ms(200), 1, 1);
    assert!(d[0].congested);
    assert_eq!(d[0].threshold, ms(10));
    assert_eq!(c.n(), 4.0);
    // After the first congestion: the papers' α/n.
    feed(&mut c, &mut now, ms(100), 1, 1);
    assert!((c.n() - 4.25).abs() < 1e-12);
}

#[test]
fn the_threshold_is_k_packet_times_at_the_highest_receive_rate() {
    let config = MultiConfig {
        m: 2,
        initial: 4.0,
        ..IIAD_TUNED
    };
    let mut c = ConnectionCountConfig::Multfrc(config).build().unwrap();
    let mut now = Instant::ZERO;
    let mut report = |c: &mut ConnectionCounter, rtt: u64, packet: u64| {
        let mut last = None;
        for _ in 0..2 {
            now += ms(100);
            last = c.on_report(now, ms(rtt), Some(ms(packet)));
        }
        last.unwrap()
    };
    // 10 ms packets (about 1.2 Mbit/s): 9 × 10 = 90 ms are tolerated, not
    // γ · rtt_min = 10 ms.
    report(&mut c, 100, 10);
    let d = report(&mut c, 185, 10);
    assert_eq!(d.threshold, ms(90));
    assert!(!d.congested);
    // A lower receive rate later (20 ms packets) does not raise it: the
    // highest rate seen counts.
    let d = report(&mut c, 185, 20);
    assert_eq!(d.threshold, ms(90));
    // Capped at γ_max · rtt_min = 100 ms.
    let mut c = ConnectionCountConfig::Multfrc(config).build().unwrap();
    report(&mut c, 100, 50);
    let d = report(&mut c, 150, 50);
    assert_eq!(d.threshold, ms(100));
    // The papers' rule ignores the packet time.
    let mut paper = ConnectionCountConfig::Multfrc(MultiConfig {
        m: 2,
        ..MultiConfig::MULTFRC
    })
    .build()
    .unwrap();
    report(&mut paper, 100, 10);
    let d = report(&mut paper, 185, 10);
    assert_eq!(d.threshold, ms(20));
    assert!(d.congested);
}

#[test]
fn the_default_controller_is_adaptive() {
    assert_eq!(
        ConnectionCountConfig::default(),
        ConnectionCountConfig::Adaptive(AdaptiveConfig::default())
    );
    let counter = ConnectionCountConfig::default().build().unwrap();
    assert!(counter.is_fractional());
    assert_eq!(counter.connections(), 1);
    assert!(ConnectionCountConfig::default().build().is_ok());
}

fn any_controller() -> impl Strategy<Value = ConnectionCountConfig> {
    (
        0usize..3,
        0.1f64..2.0,
        0.1f64..0.95,
        0.0f64..0.5,
        1usize..5,
        1.0f64..10.0,
        (0.0f64..16.0, 0.0f64..2.0, any::<bool>()),
    )
        .prop_map(
            |(kind, alpha, beta, gamma, m, initial, (k, gamma_max, startup))| {
                let c = MultiConfig {
                    alpha,
                    beta,
                    gamma,
                    m,
                    initial,
                    max: 16.0,
                    rtt_min_lifetime: Some(Duration::from_secs(5)),
                    queue_packets: k,
                    gamma_max,
                    startup,
                };
                match kind {
                    0 => ConnectionCountConfig::Multfrc(c),
                    1 => ConnectionCountConfig::EMultfrc(c),
                    _ => ConnectionCountConfig::Aggregate(c),
                }
            },
        )
}

proptest! {
    /// Under any sequence of RTT samples and packet times: n stays in
    /// [1, max], a step up is α/n (α during a start-up, until the first
    /// congested decision), a step down is β (MULTFRC) or to βn + α/n
    /// (E-MULTFRC), and a decrease happens exactly when the queueing delay
    /// exceeds the threshold, which is γ·rtt_min, or k times the shortest
    /// packet time seen when that is more, capped at γ_max·rtt_min.
    #[test]
    fn steps_are_bounded_and_have_the_iiad_shape(
        config in any_controller(),
        rtts in proptest::collection::vec((1u64..500, 1u64..50), 1..300),
    ) {
        let mut counter = config.build().unwrap();
        let params = match config {
            ConnectionCountConfig::Multfrc(c) | ConnectionCountConfig::EMultfrc(c) | ConnectionCountConfig::Aggregate(c) => c,
            ConnectionCountConfig::Fixed(_) | ConnectionCountConfig::Adaptive(_) => unreachable!(),
        };
        let mut now = Instant::ZERO;
        let mut congestion_seen = false;
        let mut shortest_packet: Option<f64> = None;
        let mut window_packets = Vec::new();
        for (rtt, packet) in rtts {
            now += ms(rtt);
            let before = counter.n();
            window_packets.push(ms(packet).as_secs_f64());
            if let Some(d) = counter.on_report(now, ms(rtt), Some(ms(packet))) {
                let mean = window_packets.iter().sum::<f64>() / window_packets.len() as f64;
                window_packets.clear();
                let shortest = shortest_packet.map_or(mean, |s| s.min(mean));
                shortest_packet = Some(shortest);
                prop_assert!(d.n >= 1.0 && d.n <= params.max);
                let rtt_min = d.rtt_min.as_secs_f64();
                let threshold = (params.gamma * rtt_min)
                    .max((params.queue_packets * shortest).min(params.gamma_max * rtt_min));
                prop_assert!((d.threshold.as_secs_f64() - threshold).abs() < 1e-6);
                prop_assert!(d.threshold.as_secs_f64() >= params.gamma * rtt_min - 1e-9);
                let queueing = d.ave_rtt.saturating_sub(d.rtt_min).as_secs_f64();
                prop_assert_eq!(d.congested, queueing > threshold);
                let starting = params.startup && !congestion_seen && !d.congested;
                congestion_seen |= d.congested;
                let expected = match (config, d.congested) {
                    (ConnectionCountConfig::EMultfrc(_), true) => params.beta * before + params.alpha / before,
                    (_, true) => before - params.beta,
                    (_, false) if starting => before + params.alpha,
                    (_, false) => before + params.alpha / before,
                };
                prop_assert!((d.n - expected.clamp(1.0, params.max)).abs() < 1e-9);
                prop_assert!(d.rtt_min <= d.ave_rtt);
            }
            prop_assert!(counter.connections() >= 1);
        }
    }
}
