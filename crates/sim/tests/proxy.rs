//! Paper 003's proxy node in the simulator (issue 17): a media flow split
//! at a node between a shared wired path and a dedicated bearer, its
//! buffer in the summary and the series, and the keys checked.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

use fairstream_sim::runner::{MediaOutcome, Simulation, Summary};
use fairstream_sim::scenario::Scenario;

mod common;

use common::assert_refused;

/// server ==(2 Mbit/s, 40 ms, lossy)== bs ==(64 kbit/s, 200 ms)== client,
/// the video flow's extra keys in `flow_keys`.
fn bearer(flow_keys: &str, transport: &str) -> String {
    format!(
        r#"[run]
duration = "40s"
seed = 5
[[node]]
name = "server"
[[node]]
name = "bs"
[[node]]
name = "client"
[[link]]
between = ["server", "bs"]
rate = "2mbit"
delay = "40ms"
queue = {{ kind = "droptail", packets = 50 }}
loss = {{ kind = "bernoulli", p = 0.01 }}
[[link]]
between = ["bs", "client"]
rate = "64kbit"
delay = "200ms"
queue = {{ kind = "droptail", packets = 50 }}
[[flow]]
name = "video"
from = "server"
to = "client"
transport = {transport}
media = {{ source = "generated", width = 176, height = 144, fps = 15, gop = 15, bitrate = "50kbit", slice_max = 500, frames = 225, mode = "on-demand", startup_delay = "auto", arq = "off" }}
{flow_keys}
"#
    )
}

fn run(text: &str) -> (Summary, Simulation) {
    let scenario = Scenario::from_str(text, "proxy.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut simulation = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let summary = simulation.run();
    assert!(summary.conservation_ok);
    (summary, simulation)
}

#[test]
fn a_proxy_buffers_what_the_wired_path_brings_ahead_of_the_bearer() {
    let proxied = bearer(
        "proxy = { at = \"bs\", transport = { cc = \"fixed\", rate = \"60kbit\", packet_size = 600 } }",
        "{ cc = \"tfrc\", packet_size = 600 }",
    );
    let (summary, simulation) = run(&proxied);
    let names: Vec<&str> = summary.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["video-up", "video"]);
    let (up, down) = (&summary.flows[0], &summary.flows[1]);
    let proxy = down.proxy.expect("the downstream leg reports the proxy");
    let report = match down.media.as_ref().expect("the client's verdict") {
        MediaOutcome::Report(report) => report,
        MediaOutcome::Error { error } => panic!("{error}"),
    };
    println!(
        "upstream {:.0} bit/s, downstream {:.0} bit/s; proxy {proxy:?}; client: {} of {} frames, \
         start-up {:.2} s",
        up.goodput_bps,
        down.goodput_bps,
        report.playout.frames_displayed,
        report.playout.frames_total,
        report.playout.startup_delay_s
    );
    assert!(up.proxy.is_none() && up.media.is_some());
    // TFRC on the 2 Mbit/s path brings the video faster than the 60 kbit/s
    // bearer drains it: the proxy holds kilobytes.
    assert!(proxy.max_bytes > 10_000, "{proxy:?}");
    assert!(proxy.frames_in > 300 && proxy.frames_out == proxy.frames_in);
    assert_eq!(proxy.frames_dropped.total(), 0);
    // While it has data, the bearer runs at its rate, no faster.
    let rows = &simulation.series().flows[1].rows;
    let busy: Vec<f64> = rows
        .iter()
        .map(|r| r.throughput_bps)
        .skip_while(|&b| b == 0.0)
        .collect();
    let busy_len = busy.iter().rposition(|&b| b > 0.0).map_or(0, |i| i + 1);
    let bearer_bps = busy[..busy_len].iter().sum::<f64>() / busy_len.max(1) as f64;
    println!("the bearer carried {bearer_bps:.0} bit/s over {busy_len} rows");
    assert!(
        bearer_bps > 50_000.0 && bearer_bps <= 60_000.0,
        "{bearer_bps}"
    );
    assert_eq!(report.playout.frames_total, 225);
    // The series shows the buffer filling and draining.
    let held: Vec<f64> = rows.iter().filter_map(|r| r.proxy_buffer_bytes).collect();
    assert_eq!(held.len(), rows.len());
    let peak = held.iter().copied().fold(0.0, f64::max);
    assert!(peak > 10_000.0 && held.last().is_some_and(|&b| b < peak));
    assert!(simulation.series().flows[0]
        .rows
        .iter()
        .all(|r| r.proxy_buffer_bytes.is_none()));
    // Deterministic.
    assert_eq!(run(&proxied).0, summary);
}

/// Sessions through the proxy: with ARQ on both legs the proxy's
/// upstream receiver asks for what the lossy wired path lost, and the
/// downstream leg may be several connections.
#[test]
fn arq_and_several_connections_run_through_the_proxy() {
    let plain = bearer(
        "proxy = { at = \"bs\", transport = { cc = \"tfrc\", packet_size = 600 } }",
        "{ cc = \"tfrc\", packet_size = 600 }",
    );
    let with_arq = plain.replace("arq = \"off\"", "arq = \"on\"");
    let two = with_arq.replace(
        "transport = { cc = \"tfrc\", packet_size = 600 } }",
        "transport = { cc = \"tfrc\", packet_size = 600, conns = 2, controller = \"fixed\" } }",
    );
    // (frames shown, upstream losses recovered, downstream connections at
    // the end, proxy's peak bytes)
    let measure = |text: &str| -> (u64, u64, f64, u64) {
        let (summary, simulation) = run(text);
        let down = &summary.flows[1];
        let report = match down.media.as_ref().expect("the client's verdict") {
            MediaOutcome::Report(report) => report,
            MediaOutcome::Error { error } => panic!("{error}"),
        };
        let recovered = summary.flows[0].arq.as_ref().map_or(0, |a| a.recovered);
        let conns = simulation.series().flows[1]
            .rows
            .iter()
            .filter_map(|r| r.connections)
            .fold(0.0, f64::max);
        let proxy = down.proxy.map_or(0, |p| p.max_bytes);
        (report.playout.frames_displayed, recovered, conns, proxy)
    };
    let (plain, with_arq, two) = (measure(&plain), measure(&with_arq), measure(&two));
    println!("without ARQ {plain:?}, with {with_arq:?}, two downstream connections {two:?}");
    // The wired path's channel losses are asked for and recovered at the
    // proxy only with ARQ.
    assert_eq!(plain.1, 0);
    assert!(with_arq.1 > 0, "the upstream receiver recovered nothing");
    // The downstream leg opened its two connections and carried the video.
    assert_eq!(two.2, 2.0);
    assert!(two.0 > 150 && two.3 > 0, "{two:?}");
}

/// Paper 003's TCP through the proxy: RTP over TCP to the proxy (which
/// resends what the wired path loses), the bearer on: every frame arrives.
#[test]
fn rtp_over_tcp_through_the_proxy_delivers_every_frame() {
    let text = bearer(
        "proxy = { at = \"bs\", transport = { cc = \"fixed\", rate = \"60kbit\", packet_size = 1000 } }",
        "{ cc = \"tcp-newreno\", mss = 1000 }",
    )
    .replace(", arq = \"off\"", "");
    // CUBIC with SACK, as stacks run today, may carry the upstream leg too.
    let cubic = run(&text.replace("tcp-newreno", "tcp-cubic")).0;
    let cubic_report = match cubic.flows[1].media.as_ref().expect("the client's verdict") {
        MediaOutcome::Report(report) => report,
        MediaOutcome::Error { error } => panic!("{error}"),
    };
    assert_eq!(cubic_report.playout.frames_displayed, 225);
    let (summary, _) = run(&text);
    let down = &summary.flows[1];
    let report = match down.media.as_ref().expect("the client's verdict") {
        MediaOutcome::Report(report) => report,
        MediaOutcome::Error { error } => panic!("{error}"),
    };
    let proxy = down.proxy.unwrap();
    println!(
        "{proxy:?}; TCP retransmissions upstream; client {} of {} frames",
        report.playout.frames_displayed, report.playout.frames_total
    );
    assert!(summary.flows[0].packets_lost_channel > 0);
    assert_eq!(report.playout.packets_lost.total(), 0);
    assert_eq!(report.playout.frames_displayed, 225);
    assert!(proxy.max_bytes > 10_000);
}

#[test]
fn a_small_proxy_buffer_drops_p_frames_before_i_frames() {
    let (summary, _) = run(&bearer(
        "proxy = { at = \"bs\", transport = { cc = \"fixed\", rate = \"20kbit\", packet_size = 600 }, buffer = \"64KiB\" }",
        "{ cc = \"tfrc\", packet_size = 600 }",
    ));
    let proxy = summary.flows[1].proxy.unwrap();
    println!("{proxy:?}");
    assert!(proxy.max_bytes <= 64 * 1024);
    assert!(proxy.frames_dropped.p > 0);
    assert!(proxy.frames_dropped.i < proxy.frames_dropped.p);
}

#[test]
fn proxy_keys_are_checked() {
    let tfrc = "{ cc = \"tfrc\", packet_size = 600 }";
    let with = |proxy: &str| bearer(&format!("proxy = {proxy}"), tfrc);
    // The proxy table is on line 27.
    assert_refused(
        &with("{ at = \"nowhere\", transport = { cc = \"tfrc\" } }"),
        27,
        &["flow[0].proxy.at", "unknown node \"nowhere\""],
    );
    assert_refused(
        &with("{ at = \"client\", transport = { cc = \"tfrc\" } }"),
        27,
        &["flow[0].proxy.at", "between the flow's ends"],
    );
    assert_refused(
        &with("{ at = \"bs\", transport = { cc = \"tcp-newreno\" } }"),
        27,
        &["flow[0].proxy.transport", "the downstream leg is DCCP"],
    );
    assert_refused(
        &with("{ at = \"bs\", transport = { cc = \"tfrc\", packet_size = 300 } }"),
        27,
        &["proxy.transport.packet_size", "at least the flow's (600)"],
    );
    assert_refused(
        &with("{ at = \"bs\", transport = { cc = \"fixed\" } }"),
        27,
        &["flow[0].proxy.transport.rate", "missing"],
    );
    assert_refused(
        &with("{ at = \"bs\", transport = { cc = \"tfrc\" }, buffer = \"1kB\" }"),
        27,
        &["flow[0].proxy.buffer", "64 KiB"],
    );
    assert_refused(
        &with("{ at = \"bs\", transport = { cc = \"tfrc\" }, size = 3 }"),
        27,
        &["unknown field `size`"],
    );
    let fec = bearer(
        "proxy = { at = \"bs\", transport = { cc = \"tfrc\" } }",
        tfrc,
    )
    .replace("arq = \"off\"", "fec = { n = 10, k = 8 }");
    assert_refused(&fec, 27, &["flow[0].proxy", "not FEC blocks"]);
    let no_media = bearer(
        "proxy = { at = \"bs\", transport = { cc = \"tfrc\" } }",
        tfrc,
    )
    .replace("media = {", "# media = {");
    assert_refused(&no_media, 27, &["flow[0].proxy", "needs `media`"]);
}
