//! AQM scenario tests: CoDel, FQ-CoDel and RED with ECN in whole runs,
//! asserting on what the simulator measured. Each test prints its figures.

use fairstream_sim::runner::{FlowSummary, LinkSummary, Simulation, Summary, TimeSeries};
use fairstream_sim::scenario::Scenario;

/// The bottleneck of every scenario here: `r-b`, direction `r->b`, 10 Mbit/s.
const BOTTLENECK_BPS: f64 = 10e6;

/// Sender `a`, router `r`, receiver `b`: a fast access link and a 10 Mbit/s
/// bottleneck with `queue`, then the `flows` (TOML `[[flow]]` tables).
fn scenario(duration_s: u32, queue: &str, flows: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration_s}s"
seed = 11
[[node]]
name = "a"
[[node]]
name = "r"
[[node]]
name = "b"
[[link]]
between = ["a", "r"]
rate = "100mbit"
delay = "2ms"
queue = {{ kind = "droptail", packets = 10000 }}
[[link]]
between = ["r", "b"]
rate = "10mbit"
delay = "20ms"
queue = {queue}
{flows}
"#
    )
}

fn tcp_flows(n: usize, ecn: bool) -> String {
    (0..n)
        .map(|i| {
            format!(
                "[[flow]]\nname = \"tcp{i}\"\nfrom = \"a\"\nto = \"b\"\nstart = \"{}ms\"\n\
                 transport = {{ cc = \"tcp-newreno\", min_rto = \"200ms\", ecn = {ecn} }}\n",
                i * 100
            )
        })
        .collect()
}

fn cbr_flow(name: &str, rate: &str) -> String {
    format!(
        "[[flow]]\nname = \"{name}\"\nfrom = \"a\"\nto = \"b\"\n\
         transport = {{ cc = \"cbr\", rate = \"{rate}\", packet_size = 1000 }}\n"
    )
}

fn run(text: &str) -> (Summary, TimeSeries) {
    let scenario = Scenario::from_str(text, "aqm.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut simulation = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let summary = simulation.run();
    assert!(summary.conservation_ok, "conservation: {summary:#?}");
    for link in &summary.links {
        // A CE mark is not a drop: the four counts still add up.
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
    (summary, simulation.series().clone())
}

fn bottleneck(summary: &Summary) -> &LinkSummary {
    summary
        .links
        .iter()
        .find(|l| l.direction == "r->b")
        .expect("bottleneck")
}

fn flow<'a>(summary: &'a Summary, name: &str) -> &'a FlowSummary {
    summary.flows.iter().find(|f| f.name == name).expect("flow")
}

/// The mean queueing delay at the bottleneck from `from_s` on, seconds: the
/// bytes queued at each 100 ms sample over the link rate.
fn mean_queue_delay_s(series: &TimeSeries, from_s: f64) -> f64 {
    let rows: Vec<f64> = series
        .links
        .iter()
        .find(|l| l.direction == "r->b")
        .expect("bottleneck series")
        .rows
        .iter()
        .filter(|row| row.time_s >= from_s)
        .map(|row| row.queue_bytes as f64 * 8.0 / BOTTLENECK_BPS)
        .collect();
    rows.iter().sum::<f64>() / rows.len() as f64
}

#[test]
fn codel_keeps_the_standing_queue_near_target_where_drop_tail_fills_its_buffer() {
    let codel = r#"{ kind = "codel", target = "5ms", interval = "100ms", packets = 1000 }"#;
    let droptail = r#"{ kind = "droptail", packets = 1000 }"#;
    let (codel_summary, codel_series) = run(&scenario(40, codel, &tcp_flows(4, false)));
    let (tail_summary, tail_series) = run(&scenario(40, droptail, &tcp_flows(4, false)));
    let codel_delay = mean_queue_delay_s(&codel_series, 10.0);
    let tail_delay = mean_queue_delay_s(&tail_series, 10.0);
    let codel_link = bottleneck(&codel_summary);
    let tail_link = bottleneck(&tail_summary);
    eprintln!(
        "CoDel: mean queue delay after 10 s {:.2} ms, utilisation {:.3}, drops {}; \
         drop-tail(1000): {:.1} ms, utilisation {:.3}, drops {}",
        codel_delay * 1e3,
        codel_link.utilization,
        codel_link.queue_drops,
        tail_delay * 1e3,
        tail_link.utilization,
        tail_link.queue_drops
    );
    // RFC 8289's aim: a standing queue of about target (5 ms), the link
    // still busy.
    assert!(codel_delay < 0.015, "CoDel queue delay {codel_delay} s");
    assert!(codel_link.utilization > 0.9, "{}", codel_link.utilization);
    assert!(codel_link.queue_drops > 0);
    // Drop-tail lets TCP fill its 1000 packets: hundreds of milliseconds.
    assert!(tail_delay > 0.3, "drop-tail queue delay {tail_delay} s");
    assert!(tail_delay > 20.0 * codel_delay);
}

#[test]
fn fq_codel_shares_the_link_equally_where_drop_tail_does_not() {
    // Incommensurate rates and a phase offset, so that drop-tail's outcome
    // is not an artefact of two periodic sources locked in step.
    let flows = format!(
        "{}{}",
        cbr_flow("fast", "12mbit"),
        cbr_flow("slow", "7mbit").replace("to = \"b\"\n", "to = \"b\"\nstart = \"370us\"\n")
    );
    let fq = r#"{ kind = "fq-codel" }"#;
    let droptail = r#"{ kind = "droptail", packets = 100 }"#;
    let (fq_summary, _) = run(&scenario(20, fq, &flows));
    let (tail_summary, _) = run(&scenario(20, droptail, &flows));
    let share = |s: &Summary| {
        let fast = flow(s, "fast").throughput_bps;
        let slow = flow(s, "slow").throughput_bps;
        (fast, slow, fast / slow)
    };
    let (fq_fast, fq_slow, fq_ratio) = share(&fq_summary);
    let (tail_fast, tail_slow, tail_ratio) = share(&tail_summary);
    eprintln!(
        "12 and 7 Mbit/s CBR into 10 Mbit/s: FQ-CoDel {:.3} / {:.3} Mbit/s (ratio {fq_ratio:.3}); \
         drop-tail {:.3} / {:.3} Mbit/s (ratio {tail_ratio:.3})",
        fq_fast / 1e6,
        fq_slow / 1e6,
        tail_fast / 1e6,
        tail_slow / 1e6
    );
    // Both flows offer more than half the link: DRR gives each half of the
    // payload capacity (1000-byte payloads, 28 bytes of overhead).
    let half = 10e6 * 1000.0 / 1028.0 / 2.0;
    for rate in [fq_fast, fq_slow] {
        assert!((rate / half - 1.0).abs() < 0.03, "{rate} vs {half}");
    }
    // Drop-tail shares in proportion to the offered load (12:7).
    assert!(tail_ratio > 1.5, "{tail_ratio}");
}

#[test]
fn fq_codel_protects_a_tcp_flow_from_an_unresponsive_overload() {
    let flows = format!("{}{}", tcp_flows(1, false), cbr_flow("flood", "12mbit"));
    let (fq_summary, _) = run(&scenario(30, r#"{ kind = "fq-codel" }"#, &flows));
    let (tail_summary, _) = run(&scenario(
        30,
        r#"{ kind = "droptail", packets = 100 }"#,
        &flows,
    ));
    let fq_tcp = flow(&fq_summary, "tcp0").goodput_bps;
    let fq_flood = flow(&fq_summary, "flood").throughput_bps;
    let tail_tcp = flow(&tail_summary, "tcp0").goodput_bps;
    let tail_flood = flow(&tail_summary, "flood").throughput_bps;
    eprintln!(
        "TCP against a 12 Mbit/s CBR into 10 Mbit/s: FQ-CoDel TCP {:.3} Mbit/s, CBR {:.3} Mbit/s; \
         drop-tail TCP {:.3} Mbit/s, CBR {:.3} Mbit/s",
        fq_tcp / 1e6,
        fq_flood / 1e6,
        tail_tcp / 1e6,
        tail_flood / 1e6
    );
    // Two backlogged flows under DRR: about half the link each.
    let fq_share = fq_tcp / (fq_tcp + fq_flood);
    assert!(fq_share > 0.4, "TCP share under FQ-CoDel {fq_share}");
    assert!(
        tail_tcp < 0.5 * fq_tcp,
        "drop-tail TCP {tail_tcp} vs FQ {fq_tcp}"
    );
}

#[test]
fn red_with_ecn_marks_the_ecn_tcp_flow_and_drops_the_cbr_flow() {
    let red = r#"{ kind = "red", min_th = 5, max_th = 15, max_p = 0.1, ecn = true }"#;
    let flows = format!("{}{}", tcp_flows(2, true), cbr_flow("cbr", "2mbit"));
    let (summary, series) = run(&scenario(30, red, &flows));
    let link = bottleneck(&summary);
    let tcp: Vec<&FlowSummary> = summary
        .flows
        .iter()
        .filter(|f| f.cc == "tcp-newreno")
        .collect();
    let cbr = flow(&summary, "cbr");
    let tcp_drops: u64 = tcp.iter().map(|f| f.packets_lost_congestion).sum();
    let tcp_marks: u64 = tcp.iter().filter_map(|f| f.ecn_ce_received).sum();
    let reductions: u64 = tcp.iter().filter_map(|f| f.ecn_window_reductions).sum();
    eprintln!(
        "RED+ECN: link ce_marked {}, queue drops {}; TCP drops {tcp_drops}, CE received \
         {tcp_marks}, window reductions {reductions}; CBR drops {} of {} sent",
        link.ce_marked, link.queue_drops, cbr.packets_lost_congestion, cbr.packets_sent
    );
    assert!(link.ce_marked > 100, "{}", link.ce_marked);
    assert!(tcp_marks > 100 && reductions > 10);
    // The ECN flows' packets are marked, not dropped: their only drops are
    // slow start's overshoot of the hard limit, before RED's slow average
    // (w_q = 0.002) reacts. The Not-ECT CBR flow's are dropped throughout.
    assert!(
        tcp_drops * 5 < tcp_marks,
        "{tcp_drops} drops, {tcp_marks} marks"
    );
    assert!(cbr.packets_lost_congestion > 50);
    eprintln!(
        "RED+ECN: bottleneck drops after 5 s {} (all flows), utilisation {:.3}",
        drops_after(&series, 5.0),
        link.utilization
    );
    // Those TCP drops are the hard limit's: with room for 1000 packets the
    // ECN flows lose none, and the CBR flow is still dropped.
    let roomy = red.replace("ecn = true", "ecn = true, limit_packets = 1000");
    let (summary, _) = run(&scenario(30, &roomy, &flows));
    let tcp_drops: u64 = summary
        .flows
        .iter()
        .filter(|f| f.cc == "tcp-newreno")
        .map(|f| f.packets_lost_congestion)
        .sum();
    let cbr_drops = flow(&summary, "cbr").packets_lost_congestion;
    eprintln!("RED+ECN, limit 1000: TCP drops {tcp_drops}, CBR drops {cbr_drops}");
    assert_eq!(tcp_drops, 0);
    assert!(cbr_drops > 50);
}

/// Packets the bottleneck's queue dropped from `from_s` on.
fn drops_after(series: &TimeSeries, from_s: f64) -> u64 {
    series
        .links
        .iter()
        .find(|l| l.direction == "r->b")
        .expect("bottleneck series")
        .rows
        .iter()
        .filter(|row| row.time_s > from_s)
        .map(|row| row.queue_drops)
        .sum()
}

/// Two TCP flows behind `queue`, with and without ECN; checks and prints
/// drops and marks and returns the goodputs (with, without).
fn ecn_against_drops(name: &str, queue: &str) -> (f64, f64) {
    let (with, with_series) = run(&scenario(30, queue, &tcp_flows(2, true)));
    let (without, _) = run(&scenario(30, queue, &tcp_flows(2, false)));
    let late_drops = drops_after(&with_series, 5.0);
    eprintln!("{name}: with ECN, drops after 5 s: {late_drops}");
    // The time series counts the same marks as the summary.
    let series_marks: u64 = with_series
        .links
        .iter()
        .filter(|l| l.direction == "r->b")
        .flat_map(|l| &l.rows)
        .map(|row| row.ce_marked)
        .sum();
    assert_eq!(series_marks, bottleneck(&with).ce_marked, "{name}");
    // After start-up an ECN flow loses nothing to the AQM.
    assert_eq!(late_drops, 0, "{name}");
    report(name, &with, &without)
}

fn report(name: &str, with: &Summary, without: &Summary) -> (f64, f64) {
    let goodput = |s: &Summary| s.flows.iter().map(|f| f.goodput_bps).sum::<f64>();
    let drops = |s: &Summary| {
        s.flows
            .iter()
            .map(|f| f.packets_lost_congestion)
            .sum::<u64>()
    };
    let marks: u64 = with.flows.iter().filter_map(|f| f.ecn_ce_received).sum();
    eprintln!(
        "{name}: with ECN goodput {:.3} Mbit/s, drops {}, CE received {marks}, link ce_marked {}; \
         without ECN goodput {:.3} Mbit/s, drops {}",
        goodput(with) / 1e6,
        drops(with),
        bottleneck(with).ce_marked,
        goodput(without) / 1e6,
        drops(without)
    );
    assert!(
        drops(with) * 4 < drops(without),
        "{name}: the ECN flows lost {} packets",
        drops(with)
    );
    assert!(marks > 50, "{name}: {marks} marks");
    assert!(
        drops(without) > 50,
        "{name}: the drop case dropped too little"
    );
    assert_eq!(bottleneck(without).ce_marked, 0);
    (goodput(with), goodput(without))
}

#[test]
fn tcp_ecn_behind_codel_is_marked_not_dropped_at_comparable_throughput() {
    let (g_with, g_without) = ecn_against_drops("CoDel+ECN", r#"{ kind = "codel", ecn = true }"#);
    assert!(
        (g_with / g_without - 1.0).abs() < 0.1,
        "{g_with} vs {g_without}"
    );
}

#[test]
fn tcp_ecn_behind_red_is_marked_not_dropped_at_comparable_throughput() {
    let red = r#"{ kind = "red", min_th = 5, max_th = 15, max_p = 0.1, ecn = true }"#;
    let (g_with, g_without) = ecn_against_drops("RED+ECN", red);
    assert!(
        (g_with / g_without - 1.0).abs() < 0.1,
        "{g_with} vs {g_without}"
    );
}

#[test]
fn same_seed_gives_a_byte_identical_summary() {
    let flows = format!("{}{}", tcp_flows(2, true), cbr_flow("cbr", "3mbit"));
    let text = scenario(
        10,
        r#"{ kind = "fq-codel", flows = 64, ecn = true }"#,
        &flows,
    );
    let json = |text: &str| serde_json::to_string(&run(text).0).expect("json");
    let first = json(&text);
    assert_eq!(first, json(&text));
    assert!(first.contains("\"ce_marked\""));
    assert!(first.contains("\"ecn_ce_received\""));
}
