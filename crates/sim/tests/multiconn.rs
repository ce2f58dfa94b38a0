//! Multi-connection flows in the simulator (issue 6): one stream over
//! several DCCP connections, against the theory of paper 001 and against TCP.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use std::path::PathBuf;
use std::time::Duration;

use fairstream_proto::cc::equation::tfrc_rate;
use fairstream_sim::runner::{Simulation, Summary};
use fairstream_sim::scenario::Scenario;

fn multiconn_file(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/multiconn")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn run_text(text: &str) -> Summary {
    let scenario = Scenario::from_str(text, "multiconn.toml").unwrap_or_else(|e| panic!("{e}"));
    let summary = Simulation::new(&scenario)
        .unwrap_or_else(|e| panic!("{e}"))
        .run();
    assert!(summary.conservation_ok);
    summary
}

fn with_transport(base: &str, transport: &str) -> String {
    let mut done = false;
    base.lines()
        .map(|line| {
            if !done && line.starts_with("transport = ") {
                done = true;
                format!("transport = {{ {transport} }}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Experiment 1's core: on a last hop losing packets at random, one TFRC
/// connection stays near T_b = X(p_w, RTT_min)(1 − p_w) (paper 001 eq. 2;
/// checked at B_w = 5 Mbit/s, p_w = 1 %, where T_b is well below B_w) while
/// four connections fill a 1 Mbit/s hop losing 4 %.
#[test]
fn several_connections_fill_a_lossy_last_hop_one_does_not() {
    let base = multiconn_file("lossy-last-hop.toml");
    let fast = base
        .replace("rate = \"1mbit\"", "rate = \"5mbit\"")
        .replace("p = 0.04", "p = 0.01");
    let single = run_text(&with_transport(&fast, "cc = \"tfrc\""));
    let single = &single.flows[0];
    // RTT_min: 2 × (45 + 5) ms of propagation and one 1488-byte packet's
    // serialisation at 5 Mbit/s (1460 bytes of data, the DCCP header and
    // 28 bytes of UDP/IP).
    let rtt_min = Duration::from_millis(100) + Duration::from_micros(2_381);
    let t_b = tfrc_rate(1460.0, rtt_min, 0.01).unwrap().bits_per_sec() * (1.0 - 0.01);
    let four = run_text(&with_transport(&base, "cc = \"tfrc\", conns = 4"));
    let four = &four.flows[0];
    let capacity = 1e6 * (1.0 - 0.04);
    eprintln!(
        "one TFRC (5 Mbit/s, 1 %): {:.0} kbit/s = {:.3} of T_b ({:.0} kbit/s); \
         four (1 Mbit/s, 4 %): {:.0} kbit/s = {:.3} of B_w(1 − p_w), reorder buffer {:?} packets, {:?} s",
        single.goodput_bps / 1e3,
        single.goodput_bps / t_b,
        t_b / 1e3,
        four.goodput_bps / 1e3,
        four.goodput_bps / capacity,
        four.reorder_buffer_max_packets,
        four.reorder_delay_max_s
    );
    assert!((single.goodput_bps / t_b - 1.0).abs() < 0.15);
    assert!(four.goodput_bps / capacity > 0.9);
    assert_eq!(four.connections_max, Some(4));
    assert!(single.connections_max.is_none());
    // The reorder buffer stays within its bound (4096 datagrams, 1 s).
    assert!(four.reorder_buffer_max_packets.unwrap() <= 4096);
    assert!(four.reorder_delay_max_s.unwrap() <= 1.0);
}

/// Experiment 1's target: the default controller (a multi-connection flow
/// with neither `conns` nor `controller`: `adaptive`) reaches 0.9 of
/// B_w(1 − p_w) on every lossy last hop, B_w ∈ {1, 5} Mbit/s × p_w ∈
/// {1 %, 4 %}, over 600 s (its start-up is part of the run).
#[test]
fn the_default_controller_fills_every_lossy_last_hop() {
    use fairstream_sim::scenario::Controller;
    let base =
        multiconn_file("lossy-last-hop.toml").replace("duration = \"120s\"", "duration = \"600s\"");
    // Neither `conns` nor `controller`: the default controller; `conns`
    // alone: that fixed count.
    let controller = |transport: &str| {
        Scenario::from_str(&with_transport(&base, transport), "default.toml")
            .unwrap()
            .flows()[0]
            .multi
            .unwrap()
            .controller
    };
    assert_eq!(
        controller("cc = \"tfrc\", policy = \"earliest\""),
        Controller::Adaptive
    );
    assert_eq!(controller("cc = \"tfrc\", conns = 3"), Controller::Fixed);
    for (bw, p) in [(1u32, 0.01f64), (1, 0.04), (5, 0.01), (5, 0.04)] {
        let text = with_transport(
            &base
                .replace("rate = \"1mbit\"", &format!("rate = \"{bw}mbit\""))
                .replace("p = 0.04", &format!("p = {p}")),
            "cc = \"tfrc\", policy = \"earliest\"",
        );
        let summary = run_text(&text);
        let flow = &summary.flows[0];
        let share = flow.goodput_bps / (f64::from(bw) * 1e6 * (1.0 - p));
        eprintln!(
            "default controller, {bw} Mbit/s, {:.0} %: {share:.3} of B_w(1 − p_w), connections mean {:.2} max {:?}",
            p * 100.0,
            flow.connections_mean.unwrap(),
            flow.connections_max
        );
        assert!(share >= 0.9, "{bw} Mbit/s, {p}: {share}");
    }
}

/// Experiment 2: on a congested wired bottleneck with four TCP flows, every
/// RTT-driven controller (the default and the papers' rules) stays within
/// twice a TCP share, and the aggregate (with its reported j) within 2.5.
#[test]
fn rtt_driven_controllers_stay_within_twice_a_tcp_share_the_aggregate_within_two_and_a_half() {
    let base = multiconn_file("congested-wired.toml");
    for controller in ["adaptive", "multfrc", "e-multfrc", "aggregate"] {
        let text = with_transport(
            &base,
            &format!("cc = \"tfrc\", controller = \"{controller}\""),
        )
        .replace("duration = \"300s\"", "duration = \"200s\"");
        let summary = run_text(&text);
        let stream = &summary.flows[0];
        let tcp: Vec<f64> = summary.flows[1..].iter().map(|f| f.goodput_bps).collect();
        let mean_tcp = tcp.iter().sum::<f64>() / tcp.len() as f64;
        let ratio = stream.goodput_bps / mean_tcp;
        eprintln!(
            "{controller}: stream {:.0} kbit/s, mean TCP {:.0} kbit/s, ratio {ratio:.3}, connections mean {:.2} max {:?}",
            stream.goodput_bps / 1e3,
            mean_tcp / 1e3,
            stream.connections_mean.unwrap(),
            stream.connections_max
        );
        // The aggregate took 1.25 TCP shares here until the TCP model
        // stopped raising ssthresh on a timeout in a stalled recovery; its
        // NewReno flows now keep less of the link and it takes 2.20
        // (docs/results/multiconn.md, experiment 2).
        let bound = if controller == "aggregate" { 2.5 } else { 2.0 };
        assert!(ratio <= bound, "{controller}: {ratio}");
    }
}

/// Experiment 5's mechanism: after a route change that lengthens the path by
/// 50 %, a controller whose rtt_min never expires takes the longer path for
/// queueing and falls to one connection; with an expiry it recovers.
#[test]
fn a_route_change_strands_a_controller_without_rtt_min_expiry() {
    let base = multiconn_file("lossy-last-hop.toml")
        .replace("duration = \"120s\"", "duration = \"400s\"")
        .replace(
            "delay = \"45ms\"\nqueue = { kind = \"droptail\", packets = 1000 }",
            "delay = \"45ms\"\nqueue = { kind = \"droptail\", packets = 1000 }\ndelay_change = { at = \"150s\", delay = \"70ms\" }",
        )
        .replace("rate = \"1mbit\"", "rate = \"5mbit\"");
    assert!(base.contains("delay_change"));
    let mut ends = Vec::new();
    for lifetime in ["", ", rtt_min_lifetime = \"60s\""] {
        let text = with_transport(
            &base,
            &format!("cc = \"tfrc\", controller = \"multfrc\"{lifetime}"),
        );
        let scenario = Scenario::from_str(&text, "route-change.toml").unwrap();
        let mut simulation = Simulation::new(&scenario).unwrap();
        let summary = simulation.run();
        let rows = &simulation.series().flows[0].rows;
        let mean = |from: f64, to: f64| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.time_s > from && r.time_s <= to)
                .filter_map(|r| r.connections)
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        let (before, after) = (mean(100.0, 150.0), mean(350.0, 400.0));
        eprintln!(
            "rtt_min lifetime {:?}: connections {before:.2} before the change, {after:.2} at the end; goodput {:.0} kbit/s",
            if lifetime.is_empty() { "none" } else { "60 s" },
            summary.flows[0].goodput_bps / 1e3
        );
        ends.push(after);
    }
    assert!(ends[0] <= 1.5, "without expiry: {}", ends[0]);
    assert!(
        ends[1] > ends[0] + 1.0,
        "with expiry: {} vs {}",
        ends[1],
        ends[0]
    );
}

/// Mean goodput of the TCP flows of a summary (all but the first flow).
fn mean_tcp(summary: &Summary) -> f64 {
    let tcp: Vec<f64> = summary.flows[1..].iter().map(|f| f.goodput_bps).collect();
    tcp.iter().sum::<f64>() / tcp.len() as f64
}

/// The tables of `docs/results/multiconn.md`, printed as Markdown. Slow (a
/// few minutes in a debug build), so run on request:
/// `cargo test -p fairstream-sim --test multiconn experiment_tables -- --ignored --nocapture`.
#[test]
#[ignore = "about fifty long simulations; run on request"]
fn experiment_tables() {
    use fairstream_proto::cc::multfrc::analysis::{SimpleModel, WirelessLink};
    use fairstream_proto::units::Rate;
    let transports = [
        ("one TFRC", "cc = \"tfrc\""),
        ("fixed 2", "cc = \"tfrc\", conns = 2"),
        ("fixed 4", "cc = \"tfrc\", conns = 4"),
        ("fixed 8", "cc = \"tfrc\", conns = 8"),
        ("fixed 12", "cc = \"tfrc\", conns = 12"),
        (
            "adaptive (default)",
            "cc = \"tfrc\", controller = \"adaptive\"",
        ),
        ("multfrc", "cc = \"tfrc\", controller = \"multfrc\""),
        ("e-multfrc", "cc = \"tfrc\", controller = \"e-multfrc\""),
        ("aggregate", "cc = \"tfrc\", controller = \"aggregate\""),
    ];
    println!("### Experiment 1\n");
    println!(
        "| B_w | p_w | T_b (eq. 2) | n̂_opt (eq. 5) | {} |",
        transports.map(|t| t.0).join(" | ")
    );
    println!("|---|---|---|---|{}", "---|".repeat(transports.len()));
    let base =
        multiconn_file("lossy-last-hop.toml").replace("duration = \"120s\"", "duration = \"600s\"");
    for (bw, p) in [(1u32, 0.01f64), (1, 0.04), (5, 0.01), (5, 0.04)] {
        let link = WirelessLink {
            bandwidth: Rate::from_bits_per_sec(f64::from(bw) * 1e6),
            loss_rate: p,
            rtt_min: Duration::from_millis(100),
        };
        let model = SimpleModel::default();
        let t_b = model
            .single_connection_bound(1460.0, &link)
            .unwrap()
            .bits_per_sec();
        let n_opt = model.optimal_connection_count(1460.0, &link).unwrap();
        let mut cells = Vec::new();
        for (_, transport) in transports {
            let text = with_transport(
                &base
                    .replace("rate = \"1mbit\"", &format!("rate = \"{bw}mbit\""))
                    .replace("p = 0.04", &format!("p = {p}")),
                transport,
            );
            let s = run_text(&text);
            let f = &s.flows[0];
            let share = f.goodput_bps / (f64::from(bw) * 1e6 * (1.0 - p));
            cells.push(match f.connections_mean {
                Some(n) => format!("{share:.3} (n̄ {n:.1})"),
                None => format!("{share:.3}"),
            });
        }
        println!(
            "| {bw} Mbit/s | {:.0} % | {:.0} kbit/s | {n_opt} | {} |",
            p * 100.0,
            t_b / 1e3,
            cells.join(" | ")
        );
    }
    println!("\n### Experiment 1, the IIAD rule's tuning keys (issue 6's default)\n");
    println!("| variant | 1 Mbit/s, 1 % | 1 Mbit/s, 4 % | 5 Mbit/s, 1 % | 5 Mbit/s, 4 % | experiment 2 ratio |");
    println!("|---|---|---|---|---|---|");
    let variants = [
        (
            "paper 001 (γ 0.2, k 0, no start-up)",
            "gamma = 0.2, queue_packets = 0, startup = false",
        ),
        (
            "+ start-up",
            "gamma = 0.2, queue_packets = 0, startup = true",
        ),
        (
            "+ start-up, k 8",
            "gamma = 0.2, queue_packets = 8, startup = true",
        ),
        (
            "γ 0.1, start-up, k 0",
            "gamma = 0.1, queue_packets = 0, startup = true",
        ),
        (
            "γ 0.1, start-up, k 8",
            "gamma = 0.1, queue_packets = 8, startup = true",
        ),
        (
            "γ 0.1, start-up, k 9 (issue 6's default)",
            "gamma = 0.1, queue_packets = 9, startup = true",
        ),
        (
            "γ 0.1, start-up, k 10",
            "gamma = 0.1, queue_packets = 10, startup = true",
        ),
        (
            "γ 0.1, start-up, k 12",
            "gamma = 0.1, queue_packets = 12, startup = true",
        ),
        (
            "γ 0.1, k 9, no start-up",
            "gamma = 0.1, queue_packets = 9, startup = false",
        ),
    ];
    let lossy =
        multiconn_file("lossy-last-hop.toml").replace("duration = \"120s\"", "duration = \"600s\"");
    let wired = multiconn_file("congested-wired.toml");
    for (name, keys) in variants {
        let transport = format!("cc = \"tfrc\", controller = \"multfrc\", {keys}");
        let mut cells = Vec::new();
        for (bw, p) in [(1u32, 0.01f64), (1, 0.04), (5, 0.01), (5, 0.04)] {
            let text = with_transport(
                &lossy
                    .replace("rate = \"1mbit\"", &format!("rate = \"{bw}mbit\""))
                    .replace("p = 0.04", &format!("p = {p}")),
                &transport,
            );
            let f = &run_text(&text).flows[0];
            cells.push(format!(
                "{:.3} (n̄ {:.1})",
                f.goodput_bps / (f64::from(bw) * 1e6 * (1.0 - p)),
                f.connections_mean.unwrap_or(1.0)
            ));
        }
        let s = run_text(&with_transport(&wired, &transport));
        println!(
            "| {name} | {} | {:.3} |",
            cells.join(" | "),
            s.flows[0].goodput_bps / mean_tcp(&s)
        );
    }
    println!("\n### Experiment 1, the default over seeds\n");
    println!("| seed | 1 Mbit/s, 1 % | 1 Mbit/s, 4 % | 5 Mbit/s, 1 % | 5 Mbit/s, 4 % |");
    println!("|---|---|---|---|---|");
    for seed in 1..=5 {
        let mut cells = Vec::new();
        for (bw, p) in [(1u32, 0.01f64), (1, 0.04), (5, 0.01), (5, 0.04)] {
            let text = with_transport(
                &lossy
                    .replace("seed = 1", &format!("seed = {seed}"))
                    .replace("rate = \"1mbit\"", &format!("rate = \"{bw}mbit\""))
                    .replace("p = 0.04", &format!("p = {p}")),
                "cc = \"tfrc\", controller = \"adaptive\"",
            );
            let f = &run_text(&text).flows[0];
            cells.push(format!(
                "{:.3}",
                f.goodput_bps / (f64::from(bw) * 1e6 * (1.0 - p))
            ));
        }
        println!("| {seed} | {} |", cells.join(" | "));
    }
    println!("\n### Experiment 2\n");
    println!("| controller | stream | mean TCP | ratio | connections mean / max | bottleneck utilisation |");
    println!("|---|---|---|---|---|---|");
    let base = multiconn_file("congested-wired.toml");
    for (name, transport) in transports {
        let s = run_text(&with_transport(&base, transport));
        let f = &s.flows[0];
        let tcp = mean_tcp(&s);
        println!(
            "| {name} | {:.0} kbit/s | {:.0} kbit/s | {:.3} | {} | {:.3} |",
            f.goodput_bps / 1e3,
            tcp / 1e3,
            f.goodput_bps / tcp,
            f.connections_mean.map_or_else(
                || "–".to_owned(),
                |n| format!("{n:.2} / {}", f.connections_max.unwrap_or(1))
            ),
            s.links[0].utilization
        );
    }
    println!("\n### Experiment 3\n");
    println!(
        "| controller | stream | share of the wireless hop | mean TCP | ratio | connections mean |"
    );
    println!("|---|---|---|---|---|---|");
    let both = multiconn_file("congested-wired.toml").replace(
        "[[link]]\nbetween = [\"right\", \"sink\"]\nrate = \"100mbit\"\ndelay = \"1ms\"",
        "[[link]]\nbetween = [\"right\", \"sink\"]\nrate = \"100mbit\"\ndelay = \"1ms\"\n[[node]]\nname = \"client\"\n[[link]]\nbetween = [\"right\", \"client\"]\nrate = \"2mbit\"\ndelay = \"5ms\"\nloss = { kind = \"gilbert-elliott\", p_good_good = 0.95, p_bad_bad = 0.94, loss_good = 0.01, loss_bad = 0.05 }",
    ).replacen("to = \"sink\"", "to = \"client\"", 1);
    assert!(both.contains("to = \"client\""));
    for (name, transport) in transports {
        let s = run_text(&with_transport(&both, transport));
        let f = &s.flows[0];
        let tcp = mean_tcp(&s);
        println!(
            "| {name} | {:.0} kbit/s | {:.3} | {:.0} kbit/s | {:.3} | {} |",
            f.goodput_bps / 1e3,
            f.goodput_bps / 2e6,
            tcp / 1e3,
            f.goodput_bps / tcp,
            f.connections_mean
                .map_or_else(|| "–".to_owned(), |n| format!("{n:.2}"))
        );
    }
    println!("\n### Experiment 4\n");
    println!("| policy | connections | goodput | reorder buffer max | added delay max |");
    println!("|---|---|---|---|---|");
    let base = multiconn_file("lossy-last-hop.toml")
        .replace("rate = \"1mbit\"", "rate = \"5mbit\"")
        .replace("p = 0.04", "p = 0.01");
    for conns in [4, 8] {
        for policy in ["earliest", "gop-interleave"] {
            let s = run_text(&with_transport(
                &base,
                &format!("cc = \"tfrc\", conns = {conns}, policy = \"{policy}\""),
            ));
            let f = &s.flows[0];
            println!(
                "| {policy} | {conns} | {:.0} kbit/s | {} packets | {:.3} s |",
                f.goodput_bps / 1e3,
                f.reorder_buffer_max_packets.unwrap(),
                f.reorder_delay_max_s.unwrap()
            );
        }
    }
}

/// Paper 001 Table 2's split: the summary gives, per connection count,
/// the share of time and the packets sent and lost then; the shares add
/// up to one and the packets to (nearly) the flow's own counts, and on
/// paper 001's 1xRTT stand-in the loss rate rises with the count.
#[test]
fn the_summary_splits_time_and_losses_by_connection_count() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/paper001/1xrtt.toml");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("duration = \"1800s\"", "duration = \"600s\"");
    let summary = run_text(&text);
    let flow = &summary.flows[0];
    let shares = flow
        .by_connections
        .as_ref()
        .expect("a multi-connection flow");
    assert_eq!(shares.len(), flow.connections_max.unwrap());
    let time: f64 = shares.iter().map(|s| s.time_share).sum();
    assert!((time - 1.0).abs() < 1e-9, "{time}");
    let sent: u64 = shares.iter().map(|s| s.packets_sent).sum();
    let lost: u64 = shares.iter().map(|s| s.packets_lost).sum();
    // Only what the last 100 ms interval would have held is missing.
    assert!(
        sent <= flow.packets_sent && flow.packets_sent - sent <= 2,
        "{sent} of {}",
        flow.packets_sent
    );
    let all_lost = flow.packets_lost_congestion + flow.packets_lost_channel;
    assert!(
        lost <= all_lost && all_lost - lost <= 2,
        "{lost} of {all_lost}"
    );
    assert!(shares.len() >= 2, "{shares:?}");
    let one = shares[0].packet_loss_rate.unwrap();
    let two = shares[1].packet_loss_rate.unwrap();
    assert!(
        two > one,
        "loss with two connections {two} not above one's {one}"
    );
    // A single-connection flow has no split.
    let single = run_text(&with_transport(&text, "cc = \"tfrc\""));
    assert!(single.flows[0].by_connections.is_none());
    assert!(single.flows[0].packet_loss_rate.unwrap() > 0.0);
}
