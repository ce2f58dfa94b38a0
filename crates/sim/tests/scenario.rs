//! Scenario files that must parse, and the routes and values they yield.

use std::path::{Path, PathBuf};
use std::time::Duration;

use fairstream_proto::units::{Bytes, Rate};
use fairstream_sim::scenario::{
    Capacity, Direction, Hop, LinkId, LossModel, PlayerSetting, QueueConfig, Scenario, Transport,
    DEFAULT_OVERHEAD, DEFAULT_PACKET_SIZE, DEFAULT_QUEUE_PACKETS,
};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(name: &str) -> Scenario {
    let path = manifest_dir().join("tests/scenarios").join(name);
    match Scenario::from_file(&path) {
        Ok(scenario) => scenario,
        Err(e) => panic!("{name} should parse: {e}"),
    }
}

#[test]
fn issue_key_list_parses_with_its_values() {
    let s = load("issue-key-list.toml");
    assert_eq!(s.run().duration, Duration::from_secs(60));
    assert_eq!(s.run().seed, 1);
    assert_eq!(s.nodes().len(), 2);
    let link = &s.links()[0];
    assert_eq!(link.capacity, Capacity::Fixed(Rate::from_bits_per_sec(5e6)));
    assert_eq!(link.delay, Duration::from_millis(20));
    assert_eq!(link.overhead, DEFAULT_OVERHEAD);
    assert_eq!(link.queue, QueueConfig::DropTailPackets(50));
    assert_eq!(link.loss, LossModel::Bernoulli { p: 0.02 });
    let flow = &s.flows()[0];
    assert_eq!(flow.name, "video");
    assert_eq!(flow.start, Duration::ZERO);
    assert_eq!(flow.stop, None);
    assert_eq!(
        flow.transport,
        Transport::Tfrc {
            packet_size: DEFAULT_PACKET_SIZE,
            app_rate: None,
        }
    );
    let (a, b) = (flow.from, flow.to);
    let forward = [Hop {
        link: LinkId(0),
        direction: Direction::Forward,
    }];
    let reverse = [Hop {
        link: LinkId(0),
        direction: Direction::Reverse,
    }];
    assert_eq!(s.route(a, b), Some(&forward[..]));
    assert_eq!(s.route(b, a), Some(&reverse[..]));
}

#[test]
fn design_example_routes_server_to_client_through_router_and_bs() {
    let s = load("design-four-nodes.toml");
    let id = |name: &str| s.node_id(name).unwrap_or_else(|| panic!("node {name}"));
    let route = s.route(id("server"), id("client")).expect("route");
    let hops: Vec<(usize, Direction)> = route.iter().map(|h| (h.link.0, h.direction)).collect();
    assert_eq!(
        hops,
        [
            (0, Direction::Forward),
            (1, Direction::Forward),
            (2, Direction::Forward)
        ]
    );
    let back: Vec<(usize, Direction)> = s
        .route(id("client"), id("server"))
        .expect("reverse route")
        .iter()
        .map(|h| (h.link.0, h.direction))
        .collect();
    assert_eq!(
        back,
        [
            (2, Direction::Reverse),
            (1, Direction::Reverse),
            (0, Direction::Reverse)
        ]
    );
    // Walk the route and check it really passes server → router → bs → client.
    let mut at = id("server");
    let mut visited = vec![s.nodes()[at.0].name.clone()];
    for hop in route {
        let [a, b] = s.links()[hop.link.0].between;
        at = match hop.direction {
            Direction::Forward => {
                assert_eq!(a, at);
                b
            }
            Direction::Reverse => {
                assert_eq!(b, at);
                a
            }
        };
        visited.push(s.nodes()[at.0].name.clone());
    }
    assert_eq!(visited, ["server", "router", "bs", "client"]);
    assert_eq!(
        s.links()[1].queue,
        QueueConfig::DropTailPackets(50),
        "explicit queue"
    );
    assert_eq!(
        s.links()[0].queue,
        QueueConfig::DropTailPackets(DEFAULT_QUEUE_PACKETS)
    );
    assert!(matches!(
        s.links()[2].loss,
        LossModel::GilbertElliott {
            p_bad_bad: 0.94,
            ..
        }
    ));
    assert_eq!(s.flows()[1].transport.cc_name(), "tcp-newreno");
    // Routes no flow needs are not computed.
    assert_eq!(s.route(id("router"), id("bs")), None);
}

#[test]
fn shortest_path_wins_and_ties_go_to_the_earlier_link() {
    // A square a-b-d, a-c-d plus a long way round; a→d has two 2-hop paths.
    let text = r#"
        [run]
        duration = "1s"
        [[node]]
        name = "a"
        [[node]]
        name = "b"
        [[node]]
        name = "c"
        [[node]]
        name = "d"
        [[node]]
        name = "e"
        [[link]]
        between = ["a", "e"]
        rate = "1mbit"
        delay = "1ms"
        [[link]]
        between = ["e", "c"]
        rate = "1mbit"
        delay = "1ms"
        [[link]]
        between = ["c", "d"]
        rate = "1mbit"
        delay = "1ms"
        [[link]]
        between = ["a", "c"]
        rate = "1mbit"
        delay = "1ms"
        [[link]]
        between = ["b", "a"]
        rate = "1mbit"
        delay = "1ms"
        [[link]]
        between = ["d", "b"]
        rate = "1mbit"
        delay = "1ms"
        [[flow]]
        name = "f"
        from = "a"
        to = "d"
        transport = { cc = "ccid2" }
    "#;
    let s = Scenario::from_str(text, "square.toml").expect("parses");
    let (a, d) = (s.node_id("a").expect("a"), s.node_id("d").expect("d"));
    let hops: Vec<(usize, Direction)> = s
        .route(a, d)
        .expect("route")
        .iter()
        .map(|h| (h.link.0, h.direction))
        .collect();
    // From a, link 3 (a-c) is tried before link 4 (b-a): a → c → d.
    assert_eq!(hops, [(3, Direction::Forward), (2, Direction::Forward)]);
}

#[test]
fn every_typed_knob_is_read() {
    let text = r#"
        [run]
        duration = "2min"
        seed = 42
        [[node]]
        name = "a"
        [[node]]
        name = "b"
        [[link]]
        between = ["a", "b"]
        rate = "1.5mbit"
        delay = "0ms"
        overhead = "40B"
        queue = { kind = "red", min_th = 5, max_th = 15.5, max_p = 0.1, weight = 0.01, limit_packets = 60, gentle = false }
        [[flow]]
        name = "onoff"
        from = "a"
        to = "b"
        start = "1s"
        stop = "100s"
        transport = { cc = "onoff", rate = "1mbit", on = "500ms", off = "1.5s", packet_size = "1kB" }
        [[flow]]
        name = "cbr"
        from = "b"
        to = "a"
        transport = { cc = "cbr", rate = "64kbit" }
    "#;
    let s = Scenario::from_str(text, "knobs.toml").expect("parses");
    assert_eq!(s.run().duration, Duration::from_secs(120));
    assert_eq!(s.run().seed, 42);
    let link = &s.links()[0];
    assert_eq!(link.delay, Duration::ZERO);
    assert_eq!(link.overhead, Bytes(40));
    let QueueConfig::Red(red) = link.queue else {
        panic!("RED expected, got {:?}", link.queue)
    };
    assert_eq!(
        (
            red.min_th,
            red.max_th,
            red.max_p,
            red.weight,
            red.limit_packets,
            red.gentle
        ),
        (5.0, 15.5, 0.1, 0.01, 60, false)
    );
    assert_eq!(
        s.flows()[0].transport,
        Transport::OnOff {
            rate: Rate::from_bits_per_sec(1e6),
            on: Duration::from_millis(500),
            off: Duration::from_millis(1500),
            packet_size: Bytes(1000),
        }
    );
    assert_eq!(s.flows()[0].stop, Some(Duration::from_secs(100)));
    assert_eq!(
        s.flows()[1].transport,
        Transport::Cbr {
            rate: Rate::from_bits_per_sec(64e3),
            packet_size: DEFAULT_PACKET_SIZE
        }
    );
    let s = s
        .with_seed(9)
        .with_duration(Duration::from_secs(5))
        .expect("ok");
    assert_eq!(
        (s.run().seed, s.run().duration),
        (9, Duration::from_secs(5))
    );
    assert!(s.with_duration(Duration::ZERO).is_err());
}

#[test]
fn media_player_keys_are_read() {
    let text = |media: &str| {
        format!(
            "[run]\nduration = \"10s\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
             [[link]]\nbetween = [\"a\", \"b\"]\nrate = \"1mbit\"\ndelay = \"10ms\"\n\
             [[flow]]\nname = \"v\"\nfrom = \"a\"\nto = \"b\"\ntransport = {{ cc = \"tfrc\" }}\n\
             media = {{ source = \"generated\"{media} }}\n"
        )
    };
    let player = |media: &str| {
        let scenario = Scenario::from_str(&text(media), "player.toml")
            .unwrap_or_else(|e| panic!("{media}: {e}"));
        scenario.flows()[0].media.as_ref().map(|m| m.player)
    };
    assert_eq!(player(""), Some(PlayerSetting::Drop));
    assert_eq!(player(", player = \"drop\""), Some(PlayerSetting::Drop));
    assert_eq!(
        player(", player = \"rebuffer\""),
        Some(PlayerSetting::Rebuffer { refill: None })
    );
    assert_eq!(
        player(", player = \"rebuffer\", refill = \"1.5s\""),
        Some(PlayerSetting::Rebuffer {
            refill: Some(Duration::from_millis(1500))
        })
    );
    assert_eq!(
        player(", player = \"rebuffer\", refill = \"0s\""),
        Some(PlayerSetting::Rebuffer {
            refill: Some(Duration::ZERO)
        })
    );
}

#[test]
fn red_defaults_fit_gentle_ramp() {
    let text = r#"
        [run]
        duration = "1s"
        [[node]]
        name = "a"
        [[node]]
        name = "b"
        [[link]]
        between = ["a", "b"]
        rate = "1mbit"
        delay = "1ms"
        queue = { kind = "red", min_th = 30, max_th = 90, max_p = 0.1 }
    "#;
    let s = Scenario::from_str(text, "red.toml").expect("parses");
    let QueueConfig::Red(red) = s.links()[0].queue else {
        panic!("RED expected")
    };
    assert_eq!((red.limit_packets, red.gentle), (180, true));
}

#[test]
fn trace_paths_resolve_against_the_scenario_directory() {
    let dir = std::env::temp_dir().join(format!("fairstream-scenario-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("traces")).expect("mkdir");
    std::fs::write(dir.join("traces/up.trace"), "1\n2\n").expect("write");
    std::fs::write(dir.join("traces/down.trace"), "1\n").expect("write");
    let text = r#"
        [run]
        duration = "10s"
        [[node]]
        name = "phone"
        [[node]]
        name = "tower"
        [[link]]
        between = ["phone", "tower"]
        delay = "10ms"
        loss = { kind = "trace", up = "traces/up.trace", down = "traces/down.trace" }
    "#;
    let file = dir.join("cell.toml");
    std::fs::write(&file, text).expect("write");
    let s = Scenario::from_file(&file).expect("parses");
    assert_eq!(
        s.links()[0].capacity,
        Capacity::Trace {
            up: dir.join("traces/up.trace"),
            down: dir.join("traces/down.trace"),
        }
    );
    assert_eq!(s.links()[0].loss, LossModel::None);
    let missing = text.replace("down.trace", "nope.trace");
    std::fs::write(&file, missing).expect("write");
    let err = Scenario::from_file(&file)
        .expect_err("missing trace")
        .to_string();
    assert!(
        err.contains("nope.trace") && err.contains("line 11"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

fn toml_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        // experiments/sweeps holds sweep files, not scenarios
        // (crates/cli/tests/sweep.rs runs them), and experiments/papers the
        // papers' own numbers (crates/cli/tests/reproduce.rs).
        if path.is_dir() && !path.ends_with("sweeps") && !path.ends_with("papers") {
            toml_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "toml") {
            found.push(path);
        }
    }
}

/// Every scenario file in `experiments/` and the one in the README parse
/// and run.
#[test]
fn every_scenario_under_experiments_parses() {
    let experiments = manifest_dir().join("../../experiments");
    let mut files = Vec::new();
    toml_files(&experiments, &mut files);
    assert!(
        files.len() >= 2,
        "expected example scenarios, found {files:?}"
    );
    for file in files {
        let scenario = match Scenario::from_file(&file) {
            Ok(scenario) => scenario,
            Err(e) => panic!("{} does not parse: {e}", file.display()),
        };
        // And runs: two simulated seconds of it, every packet accounted for.
        let short = scenario
            .with_duration(std::time::Duration::from_secs(2))
            .unwrap();
        let summary = fairstream_sim::runner::Simulation::new(&short)
            .unwrap_or_else(|e| panic!("{} does not build: {e}", file.display()))
            .run();
        assert!(summary.conservation_ok, "{}", file.display());
    }
}

/// The scenario the README shows runs as written.
#[test]
fn the_readme_scenario_runs() {
    let readme = std::fs::read_to_string(manifest_dir().join("../../README.md")).unwrap();
    let block = readme
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```toml block in README.md");
    let scenario = Scenario::from_str(block, "README.md")
        .unwrap_or_else(|e| panic!("the README scenario does not parse: {e}"))
        .with_duration(std::time::Duration::from_secs(5))
        .unwrap();
    let summary = fairstream_sim::runner::Simulation::new(&scenario)
        .unwrap()
        .run();
    assert!(summary.flows[0].throughput_bps > 0.0);
}
