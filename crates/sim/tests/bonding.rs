//! Bonded flows in the simulator (issue 19): one stream over several paths
//! of a multi-homed client, each path with its own connections; a path cut
//! is found dead, its data moves to the others, and it comes back; paths
//! declared to share a bottleneck take no more than one session together.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use std::path::PathBuf;

use fairstream_sim::runner::{FlowSummary, Simulation, Summary, TimeSeries};
use fairstream_sim::scenario::Scenario;

fn example() -> String {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/bonding/two-paths.toml");
    std::fs::read_to_string(path).unwrap()
}

fn run(text: &str) -> (Summary, TimeSeries) {
    let scenario = Scenario::from_str(text, "bonding.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let summary = sim.run();
    assert!(summary.conservation_ok);
    (summary, sim.series().clone())
}

fn flow<'a>(summary: &'a Summary, name: &str) -> &'a FlowSummary {
    summary.flows.iter().find(|f| f.name == name).unwrap()
}

fn link_packets(summary: &Summary, direction: &str) -> u64 {
    summary
        .links
        .iter()
        .find(|l| l.direction == direction)
        .unwrap_or_else(|| panic!("no link direction {direction}"))
        .packets_delivered
}

/// The example's stream: both paths carry it, each through its own base
/// station, in proportion to what each path gives; the per-path figures add
/// up to the flow's.
#[test]
fn a_bonded_flow_carries_data_on_every_path_through_its_own_links() {
    let text = example().replace("duration = \"60s\"", "duration = \"30s\"");
    let (summary, series) = run(&text);
    let stream = flow(&summary, "stream");
    let paths = stream
        .paths
        .as_ref()
        .expect("a bonded flow reports its paths");
    assert_eq!(paths.len(), 2);
    assert_eq!(
        (paths[0].via.as_str(), paths[1].via.as_str()),
        ("bs1", "bs2")
    );
    for path in paths {
        let share = path.share.unwrap();
        assert!(
            share > 0.15,
            "path via {} carried {share:.3} of the stream",
            path.via
        );
        assert!(path.down_at_s.is_empty(), "path via {} went down", path.via);
    }
    let sum: f64 = paths.iter().map(|p| p.throughput_bps).sum();
    assert!((sum - stream.throughput_bps).abs() < 1.0);
    // Each last hop carried the stream (only the stream crosses them), and
    // the acknowledgments came back on both.
    for direction in ["bs1->client", "bs2->client", "client->bs1", "client->bs2"] {
        assert!(
            link_packets(&summary, direction) > 100,
            "{direction} carried too little"
        );
    }
    // The series has a column per path, adding up to the flow's.
    let rows = &series.flows[0].rows;
    assert_eq!(series.flows[0].via, ["bs1", "bs2"]);
    for row in rows {
        let sum: f64 = row.path_throughput_bps.iter().sum();
        assert!((sum - row.throughput_bps).abs() < 1e-6);
    }
    // One single-path session through bs1 alone never touches bs2.
    let single = text.replace("via = [\"bs1\", \"bs2\"]", "via = [\"bs1\"]");
    let (alone, _) = run(&single);
    assert_eq!(link_packets(&alone, "bs2->client"), 0);
    assert!(flow(&alone, "stream").throughput_bps < stream.throughput_bps);
}

/// A path cut for 10 s: the sender finds it dead within about a second,
/// the other path carries on alone, and the cut path is back within about
/// a second of the cut's end (its Request probes are held to one a second
/// while another path is up).
#[test]
fn a_cut_path_is_found_dead_and_comes_back_after_the_cut() {
    let text = example().replace(
        "loss = { kind = \"bernoulli\", p = 0.02 }",
        "loss = { kind = \"bernoulli\", p = 0.02 }\noutage = { at = \"20s\", length = \"10s\" }",
    );
    let (summary, series) = run(&text);
    let stream = flow(&summary, "stream");
    let paths = stream.paths.as_ref().unwrap();
    assert!(paths[0].down_at_s.is_empty() && paths[0].up_at_s.is_empty());
    assert_eq!(paths[1].down_at_s.len(), 1, "{:?}", paths[1]);
    assert_eq!(paths[1].up_at_s.len(), 1, "{:?}", paths[1]);
    let (down, up) = (paths[1].down_at_s[0], paths[1].up_at_s[0]);
    assert!((20.0..21.0).contains(&down), "found dead at {down} s");
    assert!((30.0..31.5).contains(&up), "back at {up} s");
    let rows = &series.flows[0].rows;
    let during: Vec<_> = rows
        .iter()
        .filter(|r| r.time_s > 20.5 && r.time_s <= 30.0)
        .collect();
    // Nothing on the cut path, and never a stall on the other.
    assert!(during.iter().all(|r| r.path_throughput_bps[1] == 0.0));
    assert!(during.iter().all(|r| r.path_throughput_bps[0] > 0.0));
    // After it, both carry again.
    let after: f64 = rows
        .iter()
        .filter(|r| r.time_s > 32.0)
        .map(|r| r.path_throughput_bps[1])
        .sum();
    assert!(after > 0.0);
    // What the dead connection held was resent on the other path.
    assert!(stream.arq.unwrap().dead_connections >= 1);
}

/// Two paths through one bottleneck, shared with two NewReno flows.
/// Declared shared, the session takes about what one session would; not
/// declared, each path competes as a flow of its own.
fn shared_bottleneck(declared: bool) -> Summary {
    let text = format!(
        r#"
[run]
duration = "60s"
seed = 3

[[node]]
name = "server"
[[node]]
name = "tcpsrc"
[[node]]
name = "core"
[[node]]
name = "agg"
[[node]]
name = "bs1"
[[node]]
name = "bs2"
[[node]]
name = "client"
[[node]]
name = "sink"

[[link]]
between = ["server", "core"]
rate = "1gbit"
delay = "1ms"
[[link]]
between = ["tcpsrc", "core"]
rate = "1gbit"
delay = "1ms"
[[link]]
between = ["core", "agg"]
rate = "6mbit"
delay = "20ms"
queue = {{ kind = "droptail", packets = 30 }}
[[link]]
between = ["agg", "bs1"]
rate = "1gbit"
delay = "2ms"
[[link]]
between = ["agg", "bs2"]
rate = "1gbit"
delay = "4ms"
[[link]]
between = ["bs1", "client"]
rate = "1gbit"
delay = "1ms"
[[link]]
between = ["bs2", "client"]
rate = "1gbit"
delay = "1ms"
[[link]]
between = ["agg", "sink"]
rate = "1gbit"
delay = "3ms"

[[flow]]
name = "stream"
from = "server"
to = "client"
via = ["bs1", "bs2"]
shared_bottleneck = {declared}
transport = {{ cc = "tfrc", conns = 1, controller = "fixed" }}

[[flow]]
name = "tcp"
from = "tcpsrc"
to = "sink"
count = 2
start_jitter = "1s"
transport = {{ cc = "tcp-newreno" }}
"#
    );
    run(&text).0
}

#[test]
fn paths_declared_to_share_a_bottleneck_take_about_one_flows_share() {
    let shared = shared_bottleneck(true);
    let apart = shared_bottleneck(false);
    let tcp_mean = |s: &Summary| {
        let tcp: Vec<f64> = s
            .flows
            .iter()
            .filter(|f| f.name.starts_with("tcp"))
            .map(|f| f.goodput_bps)
            .collect();
        tcp.iter().sum::<f64>() / tcp.len() as f64
    };
    let ratio = |s: &Summary| flow(s, "stream").goodput_bps / tcp_mean(s);
    // Two TFRC flows' worth against one: the undeclared stream takes
    // clearly more of the bottleneck.
    assert!(
        ratio(&apart) > 1.3 * ratio(&shared),
        "apart {:.2} TCP shares, shared {:.2}",
        ratio(&apart),
        ratio(&shared)
    );
    assert!(
        ratio(&shared) < 1.25,
        "shared: {:.2} TCP shares",
        ratio(&shared)
    );
    // Both paths still carry the shared stream.
    for path in flow(&shared, "stream").paths.as_ref().unwrap() {
        assert!(path.share.unwrap() > 0.2, "{path:?}");
    }
}

#[test]
fn the_same_seed_gives_the_same_bonded_run() {
    let text = example().replace("duration = \"60s\"", "duration = \"15s\"");
    let first = serde_json::to_string(&run(&text).0).unwrap();
    let second = serde_json::to_string(&run(&text).0).unwrap();
    assert_eq!(first, second);
}

/// Every misuse of `via`, `shared_bottleneck` and `outage` is refused with
/// the key and the reason.
#[test]
fn bad_bonding_keys_are_refused_by_name() {
    let base = example();
    let refused = |text: &str, needles: &[&str]| {
        let error = Scenario::from_str(text, "bad.toml")
            .err()
            .unwrap_or_else(|| panic!("accepted: {needles:?}"))
            .to_string();
        for needle in needles {
            assert!(error.contains(needle), "{error:?} lacks {needle:?}");
        }
    };
    let via = "via = [\"bs1\", \"bs2\"]";
    refused(
        &base.replace(via, "via = [\"bs1\", \"nowhere\"]"),
        &["via[1]", "nowhere"],
    );
    refused(
        &base.replace(via, "via = [\"bs1\", \"client\"]"),
        &["via[1]", "an end of the flow"],
    );
    refused(
        &base.replace(via, "via = [\"bs1\", \"bs1\"]"),
        &["via[1]", "named twice"],
    );
    refused(&base.replace(via, "via = []"), &["via", "1 to 8 paths"]);
    // sink1 hangs off bs1 only: a path through it would cross bs1–sink1
    // twice.
    refused(
        &base.replace(via, "via = [\"bs1\", \"sink1\"]"),
        &["via[1]", "crosses link[6] (bs1–sink1) twice"],
    );
    refused(
        &base.replace(
            "via = [\"bs1\", \"bs2\"]\ntransport = { cc = \"tfrc\" }",
            "via = [\"bs1\", \"bs2\"]\ntransport = { cc = \"cbr\", rate = \"1mbit\" }",
        ),
        &["via", "needs a DCCP session", "cbr"],
    );
    refused(
        &base.replace(via, "shared_bottleneck = true"),
        &["shared_bottleneck", "give them with `via`"],
    );
    refused(
        &base.replace(
            "p = 0.02 }",
            "p = 0.02 }\noutage = { at = \"20s\", length = \"0s\" }",
        ),
        &["outage.length", "greater than zero"],
    );
    refused(
        &base.replace("p = 0.02 }", "p = 0.02 }\noutage = { at = \"20s\" }"),
        &["outage", "length"],
    );
}
