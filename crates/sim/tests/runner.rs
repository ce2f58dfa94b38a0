//! Scenario tests: run the simulator and assert on what it measured.

use std::path::PathBuf;
use std::time::Duration;

use fairstream_sim::runner::{Simulation, Summary};
use fairstream_sim::scenario::Scenario;

fn run_text(text: &str) -> Summary {
    let scenario = Scenario::from_str(text, "inline.toml")
        .unwrap_or_else(|e| panic!("scenario should parse: {e}"));
    run(&scenario)
}

fn run(scenario: &Scenario) -> Summary {
    let summary = Simulation::new(scenario)
        .unwrap_or_else(|e| panic!("scenario should build: {e}"))
        .run();
    // Validation 4: conservation on every run.
    assert!(summary.conservation_ok, "conservation: {summary:#?}");
    for link in &summary.links {
        assert_eq!(
            link.packets_offered,
            link.packets_delivered
                + link.queue_drops
                + link.channel_losses
                + link.packets_in_flight,
            "{}",
            link.direction
        );
    }
    summary
}

const MIXED: &str = r#"
[run]
duration = "20s"
seed = 7
[[node]]
name = "a"
[[node]]
name = "r"
[[node]]
name = "b"
[[link]]
between = ["a", "r"]
rate = "20mbit"
delay = "5ms"
loss = { kind = "bernoulli", p = 0.01 }
[[link]]
between = ["r", "b"]
rate = "4mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 30 }
[[flow]]
name = "tcp1"
from = "a"
to = "b"
transport = { cc = "tcp-newreno" }
[[flow]]
name = "tcp2"
from = "b"
to = "a"
start = "2s"
transport = { cc = "tcp-newreno", delayed_ack = true }
[[flow]]
name = "cbr"
from = "a"
to = "b"
transport = { cc = "cbr", rate = "500kbit" }
[[flow]]
name = "voice"
from = "a"
to = "b"
stop = "15s"
transport = { cc = "onoff", rate = "64kbit", on = "1s", off = "1s", packet_size = 160 }
"#;

#[test]
fn same_seed_same_json_other_seed_other_json() {
    let scenario = Scenario::from_str(MIXED, "mixed.toml").unwrap();
    let first = serde_json::to_string(&run(&scenario)).unwrap();
    let second = serde_json::to_string(&run(&scenario)).unwrap();
    assert_eq!(first, second);
    let other = serde_json::to_string(&run(&scenario.with_seed(8))).unwrap();
    assert_ne!(first, other);
    let summary: serde_json::Value = serde_json::from_str(&first).unwrap();
    for key in ["seed", "sim_time_s", "events", "flows", "links"] {
        assert!(summary.get(key).is_some(), "{key} missing");
    }
    for key in [
        "name",
        "cc",
        "throughput_bps",
        "goodput_bps",
        "packets_sent",
        "packets_lost_congestion",
        "packets_lost_channel",
        "loss_event_rate",
        "mean_rtt_s",
        "mean_one_way_delay_s",
        "rate_cov",
    ] {
        assert!(summary["flows"][0].get(key).is_some(), "flow {key} missing");
    }
    for key in [
        "name",
        "direction",
        "utilization",
        "queue_drops",
        "channel_losses",
    ] {
        assert!(summary["links"][0].get(key).is_some(), "link {key} missing");
    }
    eprintln!("{first}");
}

#[test]
fn mixed_flows_all_move_data_and_losses_are_attributed() {
    let s = run_text(MIXED);
    for flow in &s.flows {
        assert!(flow.throughput_bps > 0.0, "{flow:?}");
        assert!(flow.packets_sent > 0, "{flow:?}");
    }
    let channel: u64 = s.flows.iter().map(|f| f.packets_lost_channel).sum();
    assert!(channel > 0, "1 % loss on a-r must hit some data packets");
    let [tcp1, tcp2, cbr, voice] = &s.flows[..] else {
        panic!("four flows");
    };
    assert!(tcp1.mean_rtt_s.is_some() && tcp2.mean_rtt_s.is_some());
    assert!(cbr.mean_rtt_s.is_none() && cbr.loss_event_rate.is_none());
    assert_eq!(cbr.throughput_bps, cbr.goodput_bps);
    assert!(voice.throughput_bps < 64e3);
    // Data drops of a flow never exceed the drops the links counted.
    let queue_drops: u64 = s.links.iter().map(|l| l.queue_drops).sum();
    let flow_drops: u64 = s.flows.iter().map(|f| f.packets_lost_congestion).sum();
    assert!(flow_drops <= queue_drops);
}

#[test]
fn cbr_gets_its_rate_without_loss() {
    let s = run_text(
        r#"
[run]
duration = "10s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "5mbit"
delay = "10ms"
[[flow]]
name = "cbr"
from = "a"
to = "b"
transport = { cc = "cbr", rate = "1mbit", packet_size = 1000 }
"#,
    );
    let flow = &s.flows[0];
    eprintln!("{flow:?}");
    assert!(
        (flow.throughput_bps - 1e6).abs() < 0.01e6,
        "{}",
        flow.throughput_bps
    );
    assert_eq!(flow.packets_lost_congestion + flow.packets_lost_channel, 0);
    // 10 ms propagation + (1000 + 28) bytes at 5 Mbit/s = 11.6448 ms.
    let delay = flow.mean_one_way_delay_s.unwrap();
    assert!((delay - 0.011_644_8).abs() < 1e-6, "{delay}");
    assert!(flow.rate_cov.unwrap() < 0.01);
    let forward = &s.links[0];
    assert_eq!(forward.direction, "a->b");
    let expected = 1e6 * 1028.0 / 1000.0 / 5e6;
    assert!((forward.utilization - expected).abs() < 0.005);
}

/// Padhye et al. (SIGCOMM '98) eq. 33, packets per second.
fn padhye(p: f64, b: f64, rtt: f64, t0: f64) -> f64 {
    let timeout_term = t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    1.0 / (rtt * (2.0 * b * p / 3.0).sqrt() + timeout_term)
}

fn validation_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/validation")
        .join(name)
}

/// Validation 1: TCP NewReno over Bernoulli loss with ample capacity sends
/// within 25 % of the Padhye model (delayed ACKs, b = 2; T0 = the 1 s
/// minimum RTO; R = the flow's mean SRTT).
#[test]
fn tcp_over_bernoulli_loss_follows_padhye() {
    let base = std::fs::read_to_string(validation_file("tcp-bernoulli.toml")).unwrap();
    let mut failures = Vec::new();
    for p in [0.005, 0.01, 0.02, 0.05] {
        let text = base.replace("p = 0.01", &format!("p = {p}"));
        // 1200 s: some 500 to 1000 losses per point, so that the seed moves
        // the ratio by a few per cent only.
        let scenario = Scenario::from_str(&text, "tcp-bernoulli.toml")
            .unwrap()
            .with_duration(Duration::from_secs(1200))
            .unwrap();
        let s = run(&scenario);
        let flow = &s.flows[0];
        let rtt = flow.mean_rtt_s.unwrap();
        let sent_rate = flow.packets_sent as f64 / s.sim_time_s;
        let model = padhye(p, 2.0, rtt, 1.0);
        let ratio = sent_rate / model;
        eprintln!(
            "p={p:.3} R={:.1} ms sent={sent_rate:.1} pkt/s model={model:.1} pkt/s ratio={ratio:.3} \
             goodput={:.0} kbit/s channel losses={} loss events/pkt={:.4} events={}",
            rtt * 1e3,
            flow.goodput_bps / 1e3,
            flow.packets_lost_channel,
            flow.loss_event_rate.unwrap(),
            s.events,
        );
        if (ratio - 1.0).abs() > 0.25 {
            failures.push((p, ratio));
        }
    }
    assert!(failures.is_empty(), "outside 25 %: {failures:?}");
}

#[test]
fn validation_scenario_runs() {
    let scenario = Scenario::from_file(validation_file("tcp-bernoulli.toml"))
        .unwrap()
        .with_duration(Duration::from_secs(20))
        .unwrap();
    let s = run(&scenario);
    assert!(s.flows[0].goodput_bps > 0.0);
}

/// Four TCP flows on a 10 Mbit/s drop-tail bottleneck fill it and share it.
#[test]
fn four_tcp_flows_share_a_bottleneck() {
    let mut text = String::from(
        r#"
[run]
duration = "40s"
[[node]]
name = "r"
[[node]]
name = "d"
[[link]]
between = ["r", "d"]
rate = "10mbit"
delay = "20ms"
queue = { kind = "droptail", packets = 60 }
"#,
    );
    for i in 1..=4 {
        text.push_str(&format!(
            "[[node]]\nname = \"s{i}\"\n[[link]]\nbetween = [\"s{i}\", \"r\"]\nrate = \"100mbit\"\n\
             delay = \"{}ms\"\n[[flow]]\nname = \"tcp{i}\"\nfrom = \"s{i}\"\nto = \"d\"\n\
             transport = {{ cc = \"tcp-newreno\" }}\n",
            2 * i
        ));
    }
    let s = run_text(&text);
    let bottleneck = s.links.iter().find(|l| l.direction == "r->d").unwrap();
    let rates: Vec<f64> = s.flows.iter().map(|f| f.goodput_bps).collect();
    let sum: f64 = rates.iter().sum();
    let jain = sum * sum / (rates.len() as f64 * rates.iter().map(|x| x * x).sum::<f64>());
    eprintln!(
        "utilisation={:.3} jain={jain:.3} goodput kbit/s={:?} drops={} events={}",
        bottleneck.utilization,
        rates.iter().map(|r| (r / 1e3).round()).collect::<Vec<_>>(),
        bottleneck.queue_drops,
        s.events
    );
    assert!(bottleneck.utilization > 0.9);
    assert!(jain > 0.8);
    assert!(bottleneck.queue_drops > 0);
}

fn trace_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-runner-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

const TRACE_SCENARIO: &str = r#"
[run]
duration = "10s"
[[node]]
name = "phone"
[[node]]
name = "tower"
[[link]]
between = ["tower", "phone"]
delay = "10ms"
loss = { kind = "trace", up = "down.trace", down = "up.trace" }
[[flow]]
name = "cbr"
from = "tower"
to = "phone"
transport = { cc = "cbr", rate = "1mbit" }
[[flow]]
name = "tcp"
from = "tower"
to = "phone"
start = "1s"
transport = { cc = "tcp-newreno" }
"#;

/// A trace with one 1504-byte opportunity per millisecond: 12.032 Mbit/s.
#[test]
fn trace_driven_links_carry_flows() {
    let dir = trace_dir("ok");
    std::fs::write(dir.join("down.trace"), "1\n").unwrap();
    std::fs::write(dir.join("up.trace"), "1\n").unwrap();
    let scenario =
        Scenario::from_str(TRACE_SCENARIO, &dir.join("cell.toml").display().to_string()).unwrap();
    let s = run(&scenario);
    let [cbr, tcp] = &s.flows[..] else {
        panic!("two flows");
    };
    eprintln!("{cbr:?}\n{tcp:?}\n{:?}", s.links[0]);
    // The CBR flow shares the queue with TCP, which fills it: a few drops.
    assert!(
        cbr.throughput_bps > 0.9e6 && cbr.throughput_bps < 1.01e6,
        "{cbr:?}"
    );
    assert!(tcp.goodput_bps > 5e6, "{tcp:?}");
    assert!(s.links[0].utilization > 0.8, "{:?}", s.links[0]);
}

#[test]
fn bad_trace_is_named_in_the_error() {
    let dir = trace_dir("bad");
    std::fs::write(dir.join("up.trace"), "1\n").unwrap();
    std::fs::write(dir.join("down.trace"), "1\nsoon\n").unwrap();
    let scenario =
        Scenario::from_str(TRACE_SCENARIO, &dir.join("cell.toml").display().to_string()).unwrap();
    let error = Simulation::new(&scenario).unwrap_err().to_string();
    assert!(error.contains("down.trace"), "{error}");
    assert!(error.contains("tower-phone"), "{error}");
}
