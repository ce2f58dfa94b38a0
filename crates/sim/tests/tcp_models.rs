//! The TCP models a scenario can ask for: `cc = "tcp-newreno"` with or
//! without SACK, `cc = "tcp-cubic"`, and `cc = "web"` over either; their
//! keys and defaults, and their long-run send rates on a Bernoulli-loss
//! link against the response functions: Padhye et al. (SIGCOMM '98,
//! eq. 33) for NewReno with SACK, RFC 9438 §5.1 for CUBIC.

mod common;

use common::{assert_refused, replaced};
use fairstream_sim::runner::{MediaOutcome, Simulation, Summary};
use fairstream_sim::scenario::{Scenario, TcpVariant, Transport};

fn transport(cc: &str) -> Transport {
    let text = replaced(
        "transport = { cc = \"tfrc\" }",
        &format!("transport = {cc}"),
    );
    let scenario = Scenario::from_str(&text, "tcp.toml").unwrap_or_else(|e| panic!("{e}"));
    scenario.flows()[0].transport
}

#[test]
fn tcp_keys_keep_newreno_without_sack_and_give_cubic_sack_and_hystart() {
    // NewReno: the papers' TCP, SACK and HyStart++ off unless asked.
    assert!(matches!(
        transport("{ cc = \"tcp-newreno\" }"),
        Transport::TcpNewReno {
            sack: false,
            hystart: false,
            ..
        }
    ));
    assert!(matches!(
        transport("{ cc = \"tcp-newreno\", sack = true, hystart = true }"),
        Transport::TcpNewReno {
            sack: true,
            hystart: true,
            ..
        }
    ));
    // CUBIC: SACK and HyStart++ on unless refused.
    let Transport::TcpCubic { tcp } = transport("{ cc = \"tcp-cubic\" }") else {
        panic!("not CUBIC");
    };
    assert_eq!(tcp.variant, TcpVariant::Cubic);
    assert!(tcp.sack && tcp.hystart && !tcp.delayed_ack);
    let Transport::TcpCubic { tcp } =
        transport("{ cc = \"tcp-cubic\", sack = false, hystart = false, delayed_ack = true }")
    else {
        panic!("not CUBIC");
    };
    assert!(!tcp.sack && !tcp.hystart && tcp.delayed_ack);
    // Web flows: NewReno without SACK unless `tcp = "cubic"`.
    let Transport::Web { tcp, .. } = transport("{ cc = \"web\" }") else {
        panic!("not web");
    };
    assert_eq!(
        (tcp.variant, tcp.sack, tcp.hystart),
        (TcpVariant::NewReno, false, false)
    );
    let Transport::Web { tcp, .. } = transport("{ cc = \"web\", tcp = \"cubic\" }") else {
        panic!("not web");
    };
    assert_eq!(
        (tcp.variant, tcp.sack, tcp.hystart),
        (TcpVariant::Cubic, true, true)
    );
    let Transport::Web { tcp, .. } = transport("{ cc = \"web\", sack = true }") else {
        panic!("not web");
    };
    assert_eq!((tcp.variant, tcp.sack), (TcpVariant::NewReno, true));
}

#[test]
fn bad_tcp_keys_are_refused_by_name() {
    let with = |t: &str| replaced("transport = { cc = \"tfrc\" }", &format!("transport = {t}"));
    assert_refused(
        &with("{ cc = \"tcp-cubic\", sack = 1 }"),
        24,
        &["flow[0].transport.sack", "true or false"],
    );
    assert_refused(
        &with("{ cc = \"tcp-newreno\", hystart = \"on\" }"),
        24,
        &["flow[0].transport.hystart", "true or false"],
    );
    assert_refused(
        &with("{ cc = \"web\", tcp = \"bbr\" }"),
        24,
        &["flow[0].transport.tcp", "\"newreno\" or \"cubic\""],
    );
    assert_refused(
        &with("{ cc = \"tcp-cubic\", tcp = \"cubic\" }"),
        24,
        &["flow[0].transport.tcp", "unknown key"],
    );
    assert_refused(
        &with("{ cc = \"tcp-reno\" }"),
        24,
        &["flow[0].transport.cc", "\"tcp-cubic\""],
    );
}

/// One TCP flow over 100 Mbit/s, `delay_ms` each way and Bernoulli loss
/// `p` on both directions' link, for `seconds`.
fn bernoulli(transport: &str, p: f64, delay_ms: u64, seconds: u64) -> Summary {
    let text = format!(
        r#"
[run]
duration = "{seconds}s"
seed = 1
[[node]]
name = "sender"
[[node]]
name = "receiver"
[[link]]
between = ["sender", "receiver"]
rate = "100mbit"
delay = "{delay_ms}ms"
queue = {{ kind = "droptail", packets = 10000 }}
loss = {{ kind = "bernoulli", p = {p} }}
[[flow]]
name = "tcp"
from = "sender"
to = "receiver"
transport = {transport}
"#
    );
    let scenario = Scenario::from_str(&text, "bernoulli.toml").unwrap_or_else(|e| panic!("{e}"));
    let summary = Simulation::new(&scenario)
        .unwrap_or_else(|e| panic!("{e}"))
        .run();
    assert!(summary.conservation_ok);
    summary
}

/// Padhye et al. eq. 33 in packets/s.
fn padhye(p: f64, b: f64, rtt: f64, t0: f64) -> f64 {
    let timeout_term = t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    1.0 / (rtt * (2.0 * b * p / 3.0).sqrt() + timeout_term)
}

/// NewReno with SACK and delayed ACKs (b = 2), T0 = the 1 s minimum RTO,
/// R = the flow's mean SRTT, 300 s over 2 × 50 ms. Padhye's p is the rate
/// of loss indications, which SACK makes lower than the packet loss rate
/// (several losses of a window are one indication); fed the measured
/// indication rate (fast retransmits and timeouts per segment sent) the
/// model is within 25 % at every point. Measured (seed 1), ratio =
/// measured / model:
///
/// | p     | R ms  | pkt/s | indications/pkt | ratio at p | ratio at the indication rate |
/// |-------|-------|-------|--------|-------|-------|
/// | 0.5 % | 100.3 | 115.3 | 0.0044 | 1.050 | 0.976 |
/// | 1 %   | 100.6 |  75.4 | 0.0088 | 1.072 | 0.987 |
/// | 2 %   | 101.8 |  43.8 | 0.0182 | 1.055 | 0.976 |
/// | 5 %   | 107.5 |  12.7 | 0.0550 | 0.753 | 0.838 |
///
/// At 5 % the indication rate exceeds p: a lost retransmission leaves
/// only the timer, and timeouts count as indications too; Padhye's
/// timeout term, with T0 = 1 s, dominates.
#[test]
fn newreno_with_sack_follows_padhye() {
    let mut failures = Vec::new();
    for p in [0.005, 0.01, 0.02, 0.05] {
        let s = bernoulli(
            "{ cc = \"tcp-newreno\", sack = true, delayed_ack = true }",
            p,
            50,
            300,
        );
        let flow = &s.flows[0];
        let rtt = flow.mean_rtt_s.unwrap_or(0.0);
        let events = flow.loss_event_rate.unwrap_or(0.0);
        let sent = flow.packets_sent as f64 / s.sim_time_s;
        let at_p = sent / padhye(p, 2.0, rtt, 1.0);
        let at_events = sent / padhye(events, 2.0, rtt, 1.0);
        println!(
            "p={p:.3} R={:.1} ms sent={sent:.1} pkt/s ratio at p={at_p:.3} \
             loss indications/pkt={events:.4} ratio at the indication rate={at_events:.3}",
            rtt * 1e3
        );
        if !(0.75..=1.25).contains(&at_events) {
            failures.push((p, at_events));
        }
    }
    assert!(failures.is_empty(), "outside 25 %: {failures:?}");
}

/// CUBIC as a scenario runs it (SACK, HyStart++, fast convergence, no
/// delayed ACKs) over Bernoulli loss, against RFC 9438 §5.1: AVG_W =
/// max(∜(C(3 + β)/(4(1 − β)))·∜(RTT³/p³), √(3/(2p))), rate = AVG_W/R,
/// with p the measured loss-event rate (fast retransmits and timeouts
/// per segment sent: the RFC's model has one loss per epoch) and R the
/// mean SRTT; 300 s. Measured (seed 1):
///
/// | RTT    | p      | region        | pkt/s | events/pkt | model | ratio |
/// |--------|--------|---------------|-------|------------|-------|-------|
/// | 100 ms | 0.001  | Reno-friendly | 434.9 | 0.00106 | 376.0 | 1.157 |
/// | 100 ms | 0.005  | Reno-friendly | 195.4 | 0.00428 | 186.8 | 1.046 |
/// | 400 ms | 0.0005 | cubic         | 467.9 | 0.00045 | 429.5 | 1.089 |
/// | 400 ms | 0.001  | cubic         | 253.5 | 0.00096 | 242.9 | 1.044 |
/// | 400 ms | 0.002  | cubic         | 148.5 | 0.00171 | 157.8 | 0.941 |
/// | 400 ms | 0.005  | cubic         |  79.2 | 0.00404 |  82.7 | 0.958 |
///
/// The RFC's model assumes deterministic loss (`tcp::tests::cubic_response`
/// checks that case, within 19 %); the test asserts within 25 % here.
#[test]
fn cubic_follows_rfc_9438_response_function() {
    let mut failures = Vec::new();
    for (delay_ms, p) in [
        (50, 0.001),
        (50, 0.005),
        (200, 0.0005),
        (200, 0.001),
        (200, 0.002),
        (200, 0.005),
    ] {
        let s = bernoulli("{ cc = \"tcp-cubic\" }", p, delay_ms, 300);
        let flow = &s.flows[0];
        let rtt = flow.mean_rtt_s.unwrap_or(0.0);
        let events = flow.loss_event_rate.unwrap_or(0.0);
        let sent = flow.packets_sent as f64 / s.sim_time_s;
        let cubic = 1.0538 * (rtt / events).powf(0.75) / rtt;
        let reno = (1.5 / events).sqrt() / rtt;
        let ratio = sent / cubic.max(reno);
        println!(
            "/// | {} ms | {p} | {} | {sent:.1} | {events:.5} | {:.1} | {ratio:.3} |",
            2 * delay_ms,
            if cubic > reno {
                "cubic"
            } else {
                "Reno-friendly"
            },
            cubic.max(reno),
        );
        if !(0.75..=1.25).contains(&ratio) {
            failures.push((delay_ms, p, ratio));
        }
    }
    assert!(failures.is_empty(), "outside 25 %: {failures:?}");
}

/// NewReno, NewReno with SACK, CUBIC and web transfers over CUBIC share a
/// 10 Mbit/s drop-tail dumbbell: every one moves data, the link is full,
/// and the same seed gives the same summary.
#[test]
fn every_tcp_variant_runs_through_the_simulator_deterministically() {
    let mut text = String::from(
        r#"
[run]
duration = "30s"
seed = 7
[[node]]
name = "s"
[[node]]
name = "r"
[[node]]
name = "d"
[[link]]
between = ["s", "r"]
rate = "100mbit"
delay = "2ms"
[[link]]
between = ["r", "d"]
rate = "10mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 60 }
"#,
    );
    for (name, transport) in [
        ("newreno", "{ cc = \"tcp-newreno\" }"),
        ("newreno-sack", "{ cc = \"tcp-newreno\", sack = true }"),
        ("cubic", "{ cc = \"tcp-cubic\" }"),
        (
            "web-cubic",
            "{ cc = \"web\", tcp = \"cubic\", sessions = 5 }",
        ),
    ] {
        text.push_str(&format!(
            "[[flow]]\nname = \"{name}\"\nfrom = \"s\"\nto = \"d\"\ntransport = {transport}\n"
        ));
    }
    let run = || {
        let scenario = Scenario::from_str(&text, "dumbbell.toml").unwrap_or_else(|e| panic!("{e}"));
        Simulation::new(&scenario)
            .unwrap_or_else(|e| panic!("{e}"))
            .run()
    };
    let s = run();
    assert!(s.conservation_ok);
    let names: Vec<(&str, &str)> = s
        .flows
        .iter()
        .map(|f| (f.name.as_str(), f.cc.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("newreno", "tcp-newreno"),
            ("newreno-sack", "tcp-newreno"),
            ("cubic", "tcp-cubic"),
            ("web-cubic", "web")
        ]
    );
    for flow in &s.flows {
        println!("{}: {:.0} kbit/s", flow.name, flow.goodput_bps / 1e3);
        assert!(
            flow.goodput_bps > 100e3,
            "{}: {}",
            flow.name,
            flow.goodput_bps
        );
    }
    let web = s.flows[3].web.as_ref().map_or(0, |w| w.transfers_completed);
    assert!(web > 10, "{web} web transfers");
    let total: f64 = s.flows.iter().map(|f| f.goodput_bps).sum();
    assert!(total > 8.5e6, "{total}");
    assert_eq!(format!("{s:?}"), format!("{:?}", run()));
}

/// RTP over TCP (RFC 4571) runs over CUBIC too: over a lossy last hop the
/// channel loses segments and TCP resends every one, SACK repairing them.
#[test]
fn rtp_over_cubic_loses_nothing() {
    // media.rs's RTP-over-TCP scenario, its TCP flow on CUBIC.
    let base = include_str!("scenarios/rtp-over-tcp.toml");
    let newreno = "cc = \"tcp-newreno\", mss = 1000";
    assert!(base.contains(newreno));
    let text = base.replacen(newreno, "cc = \"tcp-cubic\", mss = 1000", 1);
    let scenario = Scenario::from_str(&text, "cubic-media.toml").unwrap_or_else(|e| panic!("{e}"));
    let s = Simulation::new(&scenario)
        .unwrap_or_else(|e| panic!("{e}"))
        .run();
    let Some(MediaOutcome::Report(report)) = s.flows[0].media.as_ref() else {
        panic!("no media report: {:?}", s.flows[0].media);
    };
    assert!(s.flows[0].packets_lost_channel > 0);
    assert_eq!(report.playout.packets_lost.total(), 0);
    assert_eq!(report.playout.frames_total, 250);
}
