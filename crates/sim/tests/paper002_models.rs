//! Paper 002's models in whole runs (issue 16): TCP's maximum window,
//! class-based priority queueing, web-like TCP traffic and the
//! bandwidth-on-demand satellite link. Each test asserts on what the
//! simulator measured and prints its figures.

use fairstream_sim::runner::{FlowSummary, Simulation, Summary};
use fairstream_sim::scenario::Scenario;

mod common;

use common::{assert_refused, replaced};

/// Sender `a`, router `r`, receiver `b`: a fast access link, then `link`
/// (the rest of a `[[link]]` table between `r` and `b`), then `flows`.
fn scenario(duration_s: u32, link: &str, flows: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration_s}s"
seed = 16
[[node]]
name = "a"
[[node]]
name = "r"
[[node]]
name = "b"
[[link]]
between = ["a", "r"]
rate = "100mbit"
delay = "1ms"
queue = {{ kind = "droptail", packets = 10000 }}
[[link]]
between = ["r", "b"]
{link}
{flows}
"#
    )
}

fn flow(name: &str, transport: &str, extra: &str) -> String {
    format!(
        "[[flow]]\nname = \"{name}\"\nfrom = \"a\"\nto = \"b\"\n{extra}\ntransport = {transport}\n"
    )
}

fn run(text: &str) -> Summary {
    let scenario = Scenario::from_str(text, "paper002.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut simulation = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let summary = simulation.run();
    assert!(summary.conservation_ok, "packet conservation broken");
    summary
}

fn flow_summary<'a>(summary: &'a Summary, name: &str) -> &'a FlowSummary {
    summary
        .flows
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no flow {name}"))
}

#[test]
fn tcp_max_window_caps_throughput_at_window_over_rtt() {
    // 40 segments of 1460 B per ~100 ms RTT is 4.67 Mbit/s, far below the
    // 20 Mbit/s bottleneck; without the cap TCP fills the bottleneck.
    let link =
        "rate = \"20mbit\"\ndelay = \"49ms\"\nqueue = { kind = \"droptail\", packets = 1000 }";
    let capped = run(&scenario(
        30,
        link,
        &flow("tcp", "{ cc = \"tcp-newreno\", max_window = 40 }", ""),
    ));
    let free = run(&scenario(
        30,
        link,
        &flow("tcp", "{ cc = \"tcp-newreno\" }", ""),
    ));
    let capped = flow_summary(&capped, "tcp");
    let free = flow_summary(&free, "tcp");
    let rtt = capped.mean_rtt_s.unwrap_or(0.0);
    let bound = 40.0 * 1460.0 * 8.0 / rtt;
    println!(
        "capped: {:.3} Mbit/s over RTT {rtt:.4} s (40 MSS/RTT = {:.3} Mbit/s); free: {:.3} Mbit/s",
        capped.goodput_bps / 1e6,
        bound / 1e6,
        free.goodput_bps / 1e6
    );
    assert!(capped.goodput_bps <= bound * 1.01, "the cap was exceeded");
    assert!(capped.goodput_bps > bound * 0.9, "the cap was not reached");
    assert!(free.goodput_bps > 2.0 * capped.goodput_bps);
}

#[test]
fn tcp_max_window_is_checked() {
    let tcp = |max_window: &str| {
        replaced(
            "transport = { cc = \"tfrc\" }",
            &format!("transport = {{ cc = \"tcp-newreno\", max_window = {max_window} }}"),
        )
    };
    assert_refused(&tcp("0"), 24, &["transport.max_window", "whole number"]);
    assert_refused(&tcp("2.5"), 24, &["transport.max_window"]);
    assert_refused(&tcp("\"40\""), 24, &["transport.max_window", "number"]);
    assert!(Scenario::from_str(&tcp("40"), "ok.toml").is_ok());
}

/// A G.711-like call (64 kbit/s of 160-byte packets) of `class` and two
/// bulk TCP flows through a 2 Mbit/s bottleneck with `queue`.
fn voice_and_tcp(queue: &str, class: &str) -> String {
    let link = format!("rate = \"2mbit\"\ndelay = \"20ms\"\nqueue = {queue}");
    let flows = [
        flow(
            "voice",
            "{ cc = \"cbr\", rate = \"64kbit\", packet_size = 160 }",
            &format!("class = \"{class}\""),
        ),
        flow("tcp1", "{ cc = \"tcp-newreno\", min_rto = \"200ms\" }", ""),
        flow("tcp2", "{ cc = \"tcp-newreno\", min_rto = \"200ms\" }", ""),
    ]
    .concat();
    scenario(20, &link, &flows)
}

#[test]
fn priority_queue_keeps_voice_out_of_the_tcp_queue() {
    let fifo = run(&voice_and_tcp(
        "{ kind = \"droptail\", packets = 100 }",
        "voice",
    ));
    let cbq = run(&voice_and_tcp(
        "{ kind = \"priority\", packets = 100 }",
        "voice",
    ));
    // The class only matters to a priority queue: as "default" the call
    // shares the FIFO below voice with TCP.
    let unclassed = run(&voice_and_tcp(
        "{ kind = \"priority\", packets = 100 }",
        "default",
    ));
    let delay = |s: &Summary| flow_summary(s, "voice").mean_one_way_delay_s.unwrap_or(0.0);
    let lost = |s: &Summary| flow_summary(s, "voice").packets_lost_congestion;
    let tcp =
        |s: &Summary| flow_summary(s, "tcp1").goodput_bps + flow_summary(s, "tcp2").goodput_bps;
    println!(
        "voice delay: droptail {:.4} s ({} lost), priority {:.4} s ({} lost), \
         priority as default {:.4} s; TCP {:.3} / {:.3} Mbit/s",
        delay(&fifo),
        lost(&fifo),
        delay(&cbq),
        lost(&cbq),
        delay(&unclassed),
        tcp(&fifo) / 1e6,
        tcp(&cbq) / 1e6
    );
    // 20 ms of propagation, the access link and at most one 1500-byte
    // packet ahead (6 ms at 2 Mbit/s): well under 30 ms.
    assert!(delay(&cbq) < 0.030, "voice waited behind TCP");
    assert_eq!(lost(&cbq), 0);
    // Behind a 100-packet FIFO kept full by TCP, far more.
    assert!(delay(&fifo) > 0.2);
    assert!(delay(&unclassed) > 0.2);
    // TCP still fills the rest of the link.
    assert!(tcp(&cbq) > 1.5e6);
}

#[test]
fn weighted_round_robin_shares_the_link_by_weight() {
    let link = "rate = \"2mbit\"\ndelay = \"20ms\"\n\
                queue = { kind = \"priority\", scheduler = \"wrr\", weight_video = 3, weight_default = 1 }";
    let flows = [
        flow(
            "video",
            "{ cc = \"cbr\", rate = \"3mbit\", packet_size = 1000 }",
            "class = \"video\"",
        ),
        flow(
            "data",
            "{ cc = \"cbr\", rate = \"3mbit\", packet_size = 1000 }",
            "",
        ),
    ]
    .concat();
    let summary = run(&scenario(10, link, &flows));
    let video = flow_summary(&summary, "video").goodput_bps;
    let data = flow_summary(&summary, "data").goodput_bps;
    println!(
        "video {:.3} Mbit/s, data {:.3} Mbit/s",
        video / 1e6,
        data / 1e6
    );
    // Equal packets, weights 3 : 1.
    assert!((video / data - 3.0).abs() < 0.1, "ratio {}", video / data);
}

#[test]
fn priority_queue_and_class_keys_are_checked() {
    let queue = |table: &str| replaced("{ kind = \"droptail\", packets = 50 }", table);
    assert_refused(
        &queue("{ kind = \"priority\", scheduler = \"drr\" }"),
        14,
        &["queue.scheduler", "\"fifo\" or \"wrr\""],
    );
    assert_refused(
        &queue("{ kind = \"priority\", weight_video = 2 }"),
        14,
        &["queue.weight_video", "scheduler = \"wrr\""],
    );
    assert_refused(
        &queue("{ kind = \"priority\", scheduler = \"wrr\", weight_default = 0 }"),
        14,
        &["queue.weight_default", "whole number"],
    );
    assert_refused(
        &queue("{ kind = \"priority\", packets = 0 }"),
        14,
        &["queue.packets"],
    );
    assert_refused(
        &queue("{ kind = \"priority\", bytes = 100 }"),
        14,
        &["queue.bytes", "unknown key"],
    );
    assert_refused(
        &replaced("to = \"c\"", "to = \"c\"\nclass = \"gold\""),
        24,
        &["flow[0].class", "unknown traffic class \"gold\""],
    );
    assert!(Scenario::from_str(
        &replaced("to = \"c\"", "to = \"c\"\nclass = \"voice\""),
        "ok.toml"
    )
    .is_ok());
}

#[test]
fn web_users_complete_many_short_transfers() {
    let link = "rate = \"2mbit\"\ndelay = \"50ms\"\nqueue = { kind = \"droptail\", packets = 50 }";
    let web = |sessions: u32| {
        run(&scenario(
            60,
            link,
            &flow(
                "web",
                &format!(
                    "{{ cc = \"web\", sessions = {sessions}, min_rto = \"200ms\", max_window = 40 }}"
                ),
                "",
            ),
        ))
    };
    let light = web(2);
    let heavy = web(20);
    let outcome = |s: &Summary| {
        let flow = flow_summary(s, "web");
        (flow.web.expect("a web outcome"), flow.goodput_bps)
    };
    let (light_web, light_goodput) = outcome(&light);
    let (heavy_web, heavy_goodput) = outcome(&heavy);
    println!(
        "2 users: {} of {} transfers, mean {:.3} s, {:.3} Mbit/s; \
         20 users: {} of {} transfers, mean {:.3} s, {:.3} Mbit/s",
        light_web.transfers_completed,
        light_web.transfers_started,
        light_web.mean_completion_time_s.unwrap_or(0.0),
        light_goodput / 1e6,
        heavy_web.transfers_completed,
        heavy_web.transfers_started,
        heavy_web.mean_completion_time_s.unwrap_or(0.0),
        heavy_goodput / 1e6
    );
    // Each user alternates a transfer of ~10 segments (at least a few
    // RTTs of 100 ms) and a 1 s think time: tens of transfers a minute.
    assert!(light_web.transfers_completed > 40);
    assert!(light_web.transfers_started - light_web.transfers_completed <= 2);
    // More users move more data and wait longer for it.
    assert!(heavy_goodput > 3.0 * light_goodput);
    assert!(
        heavy_web.mean_completion_time_s.unwrap_or(0.0)
            > light_web.mean_completion_time_s.unwrap_or(f64::MAX)
    );
    // Mean completion time is at least one RTT.
    assert!(light_web.mean_completion_time_s.unwrap_or(0.0) > 0.1);
    // The same seed gives the same run.
    assert_eq!(web(2), light);
}

#[test]
fn web_keys_are_checked() {
    let web = |keys: &str| {
        replaced(
            "transport = { cc = \"tfrc\" }",
            &format!("transport = {{ cc = \"web\"{keys} }}"),
        )
    };
    assert_refused(
        &web(", sessions = 0"),
        24,
        &["transport.sessions", "whole number"],
    );
    assert_refused(
        &web(", size_shape = 1.0"),
        24,
        &["transport.size_shape", "(1, 10]"],
    );
    assert_refused(&web(", size_mean = 0"), 24, &["transport.size_mean"]);
    assert_refused(
        &web(", think = \"0s\""),
        24,
        &["transport.think", "greater than zero"],
    );
    assert_refused(
        &web(", tcp = \"vegas\""),
        24,
        &["transport.tcp", "\"newreno\" or \"cubic\""],
    );
    assert_refused(
        &web(", rate = \"1mbit\""),
        24,
        &["transport.rate", "unknown key"],
    );
    let ok = Scenario::from_str(
        &web(", sessions = 5, size_mean = \"20kB\", size_shape = 1.5, think = \"2s\", mss = 1000"),
        "ok.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    println!("{:?}", ok.flows()[0].transport);
}

/// Paper 002 §IV.C's terminal: a G.711 call and web users share a
/// regenerative BoD return link (2 Mbit/s at most, 300 ms) through `queue`.
fn satellite(queue: &str, geometry: &str) -> String {
    let delay = if geometry == "transparent" {
        "600ms"
    } else {
        "300ms"
    };
    let link = format!(
        "rate = \"2mbit\"\ndelay = \"{delay}\"\nqueue = {queue}\n\
         bod = {{ geometry = \"{geometry}\" }}"
    );
    let flows = [
        flow(
            "voice",
            "{ cc = \"cbr\", rate = \"64kbit\", packet_size = 160 }",
            "class = \"voice\"",
        ),
        flow(
            "web",
            "{ cc = \"web\", sessions = 30, min_rto = \"1s\", max_window = 40 }",
            "",
        ),
    ]
    .concat();
    scenario(60, &link, &flows)
}

#[test]
fn bod_link_delays_voice_less_with_priority() {
    let mut rows = Vec::new();
    for geometry in ["regenerative", "transparent"] {
        let fifo = run(&satellite(
            "{ kind = \"droptail\", packets = 100 }",
            geometry,
        ));
        let cbq = run(&satellite(
            "{ kind = \"priority\", packets = 100 }",
            geometry,
        ));
        let delay = |s: &Summary| flow_summary(s, "voice").mean_one_way_delay_s.unwrap_or(0.0);
        let web = |s: &Summary| flow_summary(s, "web").goodput_bps;
        println!(
            "{geometry}: voice delay {:.3} s without priority, {:.3} s with CBQ; \
             web {:.3} / {:.3} Mbit/s; link utilisation {:.3}",
            delay(&fifo),
            delay(&cbq),
            web(&fifo) / 1e6,
            web(&cbq) / 1e6,
            cbq.links[2].utilization
        );
        let propagation = if geometry == "transparent" { 0.6 } else { 0.3 };
        // The grant lag keeps even prioritised voice above propagation.
        assert!(delay(&cbq) > propagation);
        assert!(delay(&cbq) < delay(&fifo));
        assert!(web(&cbq) > 0.0);
        // The summary's grant figures: the terminal's direction only.
        let grants = cbq.links[2]
            .bod
            .clone()
            .unwrap_or_else(|| panic!("no BoD figures"));
        println!("{geometry}: {grants:?}");
        assert!(cbq.links[3].bod.is_none() && cbq.links[0].bod.is_none());
        assert!(grants.slots_requested >= grants.slots_granted);
        assert!(grants.slots_granted >= grants.slots_used && grants.slots_used > 0);
        assert!(grants.granted_rate_bps > 0.0 && grants.granted_rate_bps <= 2e6);
        rows.push(delay(&cbq));
    }
    assert!(rows[1] > rows[0] + 0.25, "transparent is ≥ 300 ms worse");
}

#[test]
fn bod_keys_are_checked() {
    let bod = |table: &str| {
        replaced(
            "delay = \"5ms\"",
            &format!("delay = \"5ms\"\nbod = {table}"),
        )
    };
    assert_refused(
        &bod("{ geometry = \"leo\" }"),
        20,
        &["link[1]", "bod.geometry", "transparent"],
    );
    assert_refused(&bod("{ requests = \"all\" }"), 20, &["bod.requests"]);
    assert_refused(&bod("{ slot_bytes = 0 }"), 20, &["bod.slot_bytes"]);
    assert_refused(
        &bod("{ max_rate = \"100bit\" }"),
        20,
        &["bod.max_rate", "timeslot"],
    );
    assert_refused(&bod("{ superframe = \"0ms\" }"), 20, &["bod.superframe"]);
    assert_refused(
        &bod("{ request_grant_delay = \"1h\" }"),
        20,
        &["bod.request_grant_delay"],
    );
    assert_refused(&bod("{ slots = 5 }"), 20, &["bod.slots", "unknown key"]);
    let ok = bod("{ geometry = \"transparent\", max_rate = \"1mbit\", superframe = \"20ms\", slot_bytes = 53, request_grant_delay = \"550ms\", requests = \"volume\" }");
    assert!(Scenario::from_str(&ok, "ok.toml").is_ok());
}

/// Two terminals `t1`, `t2` to a hub `h`, each return link a BoD terminal
/// with `bod`, each carrying a UDP flow of `rate`.
fn two_terminals(bod1: &str, bod2: &str, rate: &str) -> String {
    let mut text = String::from(
        "[run]\nduration = \"20s\"\nseed = 16\n\
         [[node]]\nname = \"t1\"\n[[node]]\nname = \"t2\"\n[[node]]\nname = \"h\"\n",
    );
    for (t, bod) in [("t1", bod1), ("t2", bod2)] {
        text += &format!(
            "[[link]]\nbetween = [\"{t}\", \"h\"]\nrate = \"2mbit\"\ndelay = \"300ms\"\n\
             queue = {{ kind = \"droptail\", packets = 100 }}\nbod = {bod}\n\
             [[flow]]\nname = \"{t}\"\nfrom = \"{t}\"\nto = \"h\"\n\
             transport = {{ cc = \"cbr\", rate = \"{rate}\", packet_size = 1000 }}\n"
        );
    }
    text
}

#[test]
fn terminals_in_one_pool_share_its_capacity() {
    let granted = |summary: &Summary| -> Vec<f64> {
        summary
            .links
            .iter()
            .filter_map(|l| l.bod.as_ref().map(|b| b.granted_rate_bps))
            .collect()
    };
    // Alone, each saturated terminal is granted up to its own 2 Mbit/s.
    let alone = run(&two_terminals("{}", "{}", "3mbit"));
    // In one 2 Mbit/s pool they get half each.
    let pooled = run(&two_terminals(
        "{ pool = \"beam\" }",
        "{ pool = \"beam\" }",
        "3mbit",
    ));
    // A 4 Mbit/s pool serves both in full.
    let wide = run(&two_terminals(
        "{ pool = \"beam\", pool_rate = \"4mbit\" }",
        "{ pool = \"beam\", pool_rate = \"4mbit\" }",
        "3mbit",
    ));
    // One terminal light (200 kbit/s): the other gets the rest.
    let light = run(
        &two_terminals("{ pool = \"beam\" }", "{ pool = \"beam\" }", "3mbit").replacen(
            "rate = \"3mbit\"",
            "rate = \"200kbit\"",
            1,
        ),
    );
    let (alone, pooled, wide, light) = (
        granted(&alone),
        granted(&pooled),
        granted(&wide),
        granted(&light),
    );
    println!("alone {alone:?}\npooled {pooled:?}\nwide {wide:?}\nlight {light:?}");
    for rate in alone.iter().chain(&wide) {
        assert!(*rate > 1.85e6 && *rate <= 2.0e6, "{rate}");
    }
    for rate in &pooled {
        assert!(*rate > 0.92e6 && *rate <= 1.0e6, "{rate}");
    }
    assert!((pooled[0] - pooled[1]).abs() < 0.02e6);
    assert!(pooled[0] + pooled[1] <= 2.0e6);
    assert!(light[0] < 0.3e6, "{light:?}");
    assert!(
        light[1] > 1.6e6 && light[0] + light[1] <= 2.0e6,
        "{light:?}"
    );
    let pool = run(&two_terminals(
        "{ pool = \"beam\" }",
        "{ pool = \"beam\" }",
        "3mbit",
    ))
    .links
    .iter()
    .find_map(|l| l.bod.as_ref().and_then(|b| b.pool.clone()))
    .unwrap_or_else(|| panic!("no pool in the summary"));
    assert_eq!((pool.name.as_str(), pool.max_slots), ("beam", 138));
    assert!(pool.contended > pool.superframes / 2, "{pool:?}");
}

#[test]
fn bod_pool_keys_are_checked() {
    assert_refused(
        &two_terminals("{ pool_rate = \"2mbit\" }", "{}", "1mbit"),
        15,
        &["bod.pool_rate", "needs a `pool`"],
    );
    assert_refused(
        &two_terminals("{ pool = \"\" }", "{}", "1mbit"),
        15,
        &["bod.pool", "empty"],
    );
    assert_refused(
        &two_terminals(
            "{ pool = \"beam\" }",
            "{ pool = \"beam\", superframe = \"20ms\" }",
            "1mbit",
        ),
        26,
        &["link[1].bod.superframe", "pool \"beam\"", "link[0]"],
    );
    assert_refused(
        &two_terminals(
            "{ pool = \"beam\", pool_rate = \"4mbit\" }",
            "{ pool = \"beam\" }",
            "1mbit",
        ),
        26,
        &["link[1].bod.pool_rate"],
    );
    assert_refused(
        &two_terminals("{ pool = \"beam\", pool_rate = \"1bit\" }", "{}", "1mbit"),
        15,
        &["bod.pool_rate", "timeslot"],
    );
}
