//! Paper 001 (Chen and Zakhor, MULTFRC): Tables 1 and 2 and Fig. 2 on a
//! simulated stand-in for the 1xRTT CDMA link the paper measured
//! (`experiments/paper001/1xrtt.toml` says where each of its parameters
//! comes from).

use anyhow::{Context as _, Result};
use fairstream_report::{Chart, Page, Series, Style, Table};

use super::compare::{trend_line, Results};
use super::paper_data::PaperData;
use super::{run_scenario, Input, Quick, Runner};

/// The files the recipe runs.
pub(super) const INPUTS: &[Input] = &[
    (
        "paper001/1xrtt.toml",
        include_str!("../../../../experiments/paper001/1xrtt.toml"),
    ),
    (
        "sweeps/paper001/table1.toml",
        include_str!("../../../../experiments/sweeps/paper001/table1.toml"),
    ),
    (
        "sweeps/paper001/table2.toml",
        include_str!("../../../../experiments/sweeps/paper001/table2.toml"),
    ),
    (
        "papers/001.toml",
        include_str!("../../../../experiments/papers/001.toml"),
    ),
];

/// `--quick`: three seeds of ten minutes (the full run: ten of thirty, the
/// paper's session length).
const QUICK: Quick = Quick {
    seeds: 3,
    duration: "600s",
};

/// The stand-in's two channels, as the sweep files write them.
const CHANNELS: [(&str, &str); 2] = [
    (
        "independent losses (Bernoulli, 2.5 %)",
        r#"{ kind = "bernoulli", p = 0.025 }"#,
    ),
    (
        "bursty losses (Gilbert-Elliott, 3 % in bursts of 2.86 packets on average)",
        r#"{ kind = "gilbert-elliott", p_good_good = 0.98918, p_bad_bad = 0.65, loss_good = 0.0, loss_bad = 1.0 }"#,
    ),
];

const LOSS_KEY: &str = "link.bs-client.loss";
const CONTROLLER_KEY: &str = "flow.stream.transport.controller";

/// Fig. 2's window: 70 s, as the paper's traces, taken once MULTFRC's
/// count has settled (one decision takes 50 RTT samples, about 85 s here).
const FIG2_FROM_S: f64 = 1000.0;
const FIG2_TO_S: f64 = 1070.0;

/// Runs the sweeps and writes the report.
pub(super) fn build(context: &Runner, data: &PaperData, page: &mut Page) -> Result<()> {
    page.heading(2, "The setting");
    page.paragraph(
        "The paper measured a real 1xRTT CDMA link (Verizon Wireless, 2004). fairstream's \
         stand-in is paper 001's Fig. 1 topology with the wireless hop set from what the paper \
         reports: 90 kbit/s (the 80-97 kbit/s it measured by UDP flooding), 700 ms one way (one \
         TFRC connection's RTT near its 1624 ms), a 20-packet queue at the base station, and \
         random loss. The loss is either independent (2.5 %, which puts one TFRC connection near \
         the paper's 54 kbit/s) or bursty (3 % in bursts of 2.86 packets on average, Table 2's \
         burst length with one connection). `experiments/paper001/1xrtt.toml` gives each \
         parameter's source.",
    );
    let plan = context.plan("sweeps/paper001/table1.toml", QUICK)?;
    let duration = Runner::duration(&plan);
    page.paragraph(&format!(
        "{} seeds of {duration} per point{}.",
        plan.seeds.len(),
        if context.quick() {
            " (the quick run; the full run, with 30-minute runs as the paper's sessions, is \
             what docs/results/reproduce/001 holds)"
        } else {
            " (30 minutes: the paper's session length)"
        }
    ));
    table1(context, data, page)?;
    table2(context, data, page)?;
    fig2(context, page)?;
    page.heading(2, "Not reproduced");
    page.list(&[
        "Fig. 3 (playback buffer of MPEG-4 news.cif at 50, 70 and 90 kbit/s, RS(56,50) and \
         RS(61,50) FEC, over 70 s traces of the real link): the simulator has media flows with \
         FEC and a rebuffering player, but the paper's MPEG-4 encodes are not available and \
         this recipe does not drive them yet."
            .to_owned(),
    ]);
    Ok(())
}

/// Table 1: one TFRC connection against MULTFRC.
fn table1(context: &Runner, data: &PaperData, page: &mut Page) -> Result<()> {
    let paper = data.table("table1")?;
    let plan = context.plan("sweeps/paper001/table1.toml", QUICK)?;
    let outcome = context.run("table1", &plan)?;
    let results = Results {
        plan: &plan,
        outcome: &outcome,
    };
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    // (paper column, our metric, scale, decimals)
    let columns: [(&str, &str, f64, usize); 4] = [
        ("throughput (kbps)", "throughput_bps", 1e-3, 1),
        ("rtt (ms)", "rtt_s", 1e3, 0),
        ("packet loss rate", "packet_loss_rate", 1.0, 4),
        ("ave. # of conn.", "connections", 1.0, 2),
    ];
    for (name, channel) in CHANNELS {
        let one = results.point(&[(CONTROLLER_KEY, "\"fixed\""), (LOSS_KEY, channel)])?;
        let multi = results.point(&[(CONTROLLER_KEY, "\"multfrc\""), (LOSS_KEY, channel)])?;
        page.heading(3, &format!("With {name}"));
        let mut header = vec!["scheme".to_owned()];
        for (column, ..) in &columns {
            header.push(format!("{column}: paper"));
            header.push("ours".to_owned());
        }
        let mut rows = Vec::new();
        for (row, point) in [(0, one), (1, multi)] {
            let mut cells = vec![paper.text(row, "scheme")?.to_owned()];
            for (column, metric, scale, decimals) in &columns {
                cells.push(paper.text(row, column)?.to_owned());
                cells.push(if row == 0 && *metric == "connections" {
                    "1 (fixed)".to_owned()
                } else {
                    results.stat(point, metric)?.show(*scale, *decimals)
                });
            }
            rows.push(cells);
        }
        let mut ratio_row = vec!["MULTFRC / one TFRC".to_owned()];
        let mut lines = Vec::new();
        for (column, metric, ..) in &columns[..3] {
            let a = paper.number(0, column)?.context("a number in Table 1")?;
            let b = paper.number(1, column)?.context("a number in Table 1")?;
            let ratio = results.ratio(multi, one, metric)?;
            ratio_row.push(format!("{:.2}", b / a));
            ratio_row.push(ratio.show(1.0, 2));
            let ours = (
                results.stat(one, metric)?.mean,
                results.stat(multi, metric)?.mean,
            );
            lines.push(trend_line(
                &format!("MULTFRC's {column} against one TFRC's"),
                (a, b),
                ours,
                TABLE1_WHY_NOT,
            ));
        }
        ratio_row.extend(["".to_owned(), "".to_owned()]);
        rows.push(ratio_row);
        page.table(Table { header, rows });
        let conns = results.stat(multi, "connections")?;
        let paper_conns = paper
            .number(1, "ave. # of conn.")?
            .context("a number in Table 1")?;
        lines.push(format!(
            "MULTFRC's mean connection count: the paper's {paper_conns}, ours {} ({}).",
            conns.show(1.0, 2),
            if conns.contains(paper_conns) {
                "the paper's value lies in our 95 % interval"
            } else {
                "the paper's value lies outside our 95 % interval"
            }
        ));
        page.list(&lines);
    }
    page.paragraph(
        "Where it matches: MULTFRC opens about two connections and gains throughput at the \
         price of a longer RTT (its connections keep the base station's queue fuller) and a \
         higher loss rate, as the paper found on the real link. With bursty losses one TFRC \
         connection already does better (a burst within one RTT is one loss event, RFC 5348 \
         §5.2) and MULTFRC's extra connections mostly add queueing: the paper's link behaved \
         like the independent-loss stand-in in this respect.",
    );
    Ok(())
}

/// Why a Table 1 trend may differ.
const TABLE1_WHY_NOT: &str = "The stand-in's loss process decides how much one TFRC \
     connection leaves unused: with bursty losses its loss event rate is low, it nearly fills \
     the hop, and more connections can only queue.";

/// Table 2: MULTFRC's time, losses and bursts by connection count.
fn table2(context: &Runner, data: &PaperData, page: &mut Page) -> Result<()> {
    let paper = data.table("table2")?;
    let plan = context.plan("sweeps/paper001/table2.toml", QUICK)?;
    let outcome = context.run("table2", &plan)?;
    let results = Results {
        plan: &plan,
        outcome: &outcome,
    };
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph(
        "MULTFRC with 760-byte packets, as the paper's 30-minute experiment. Per connection \
         count: the share of time with that many open, the packet loss rate then, and the loss \
         bursts (runs of packets lost in sending order) that ended then. Our longest burst is \
         the mean over the seeds of each run's longest.",
    );
    // (paper column, our metric prefix, scale, decimals)
    let columns: [(&str, &str, f64, usize); 5] = [
        ("% of time", "time_share", 100.0, 1),
        ("pkt loss rate", "loss_rate", 1.0, 3),
        ("avg. burst error length", "burst_mean", 1.0, 2),
        ("snd. dev.", "burst_sd", 1.0, 2),
        ("max. burst length", "burst_max", 1.0, 1),
    ];
    const COUNTS: [&str; 5] = ["one", "two", "three", "four", "five"];
    for (name, channel) in CHANNELS {
        let point = results.point(&[(LOSS_KEY, channel)])?;
        page.heading(3, &format!("With {name}"));
        let mut header = vec!["# of conn. opened".to_owned()];
        for (column, ..) in &columns {
            header.push(format!("{column}: paper"));
            header.push("ours".to_owned());
        }
        let mut rows = Vec::new();
        let mut our_loss = Vec::new();
        let mut our_time = Vec::new();
        for (i, count) in COUNTS.iter().enumerate() {
            let time = results.stat(point, &format!("time_share_{}", i + 1))?;
            let in_paper = i < paper.rows.len();
            if !in_paper && (time.n == 0 || time.mean <= 0.0) {
                continue;
            }
            let mut cells = vec![(*count).to_owned()];
            for (column, metric, scale, decimals) in &columns {
                cells.push(if in_paper {
                    paper.text(i, column)?.to_owned()
                } else {
                    "–".to_owned()
                });
                cells.push(
                    results
                        .stat(point, &format!("{metric}_{}", i + 1))?
                        .show(*scale, *decimals),
                );
            }
            rows.push(cells);
            our_time.push(time.mean);
            our_loss.push(results.stat(point, &format!("loss_rate_{}", i + 1))?.mean);
        }
        page.table(Table { header, rows });
        let mut lines = Vec::new();
        let paper_loss: Vec<f64> = (0..paper.rows.len())
            .filter_map(|i| paper.number(i, "pkt loss rate").ok().flatten())
            .collect();
        let rises = |v: &[f64]| v.windows(2).all(|w| w[1] >= w[0]);
        let busy: Vec<f64> = our_loss
            .iter()
            .zip(&our_time)
            .filter(|(_, t)| **t >= 0.05)
            .map(|(l, _)| *l)
            .collect();
        lines.push(format!(
            "The loss rate rises with the connection count: the paper's {}; ours (counts held at \
             least 5 % of the time) {}{}",
            if rises(&paper_loss) {
                "does"
            } else {
                "does not"
            },
            if rises(&busy) { "does" } else { "does not" },
            if rises(&paper_loss) == rises(&busy) {
                ": the trend matches.".to_owned()
            } else {
                ": the trend differs. Most of the stand-in's losses are its channel's, the \
                 same whatever the count; the queue's drops, which more connections do add, \
                 are few beside them. The paper's rising loss rate says the real link lost \
                 more the more it was loaded, which a fixed-rate channel model does not."
                    .to_owned()
            }
        ));
        let mode = |v: &[f64]| {
            v.iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(i, _)| i + 1)
        };
        let paper_time: Vec<f64> = (0..paper.rows.len())
            .filter_map(|i| paper.number(i, "% of time").ok().flatten())
            .collect();
        let (pm, om) = (mode(&paper_time), mode(&our_time));
        lines.push(format!(
            "The count held longest: the paper's {pm}, ours {om}{}",
            if pm == om {
                ": matches.".to_owned()
            } else {
                ": differs. A TFRC connection's rate is proportional to its packet size (RFC \
                 5348 §3.1), so with 760-byte packets MULTFRC needs about twice the connections \
                 it needs with 1460-byte ones on the same hop; the paper's real link gave it \
                 two either way, which the stand-in's fixed RTT and loss do not."
                    .to_owned()
            }
        ));
        page.list(&lines);
    }
    page.paragraph(
        "Bursts: with independent losses ours are about one packet long (a queue overflow adds \
         the odd pair); the paper's 2.4-3.3 packets are the real link's own burstiness, which \
         the Gilbert-Elliott stand-in is set to (its bad state lasts 2.86 packets on average, \
         and loses them all). A burst here is a run of the stream's packets lost in sending \
         order, the control packets of the connections counted among them.",
    );
    Ok(())
}

/// Fig. 2: throughput and losses over 70 s for one TFRC and MULTFRC.
fn fig2(context: &Runner, page: &mut Page) -> Result<()> {
    page.heading(
        2,
        "Fig. 2: Throughput and packet loss details for one TFRC and MULTFRC",
    );
    page.paragraph(&format!(
        "70 s of one run each (seed 1, {FIG2_FROM_S:.0}-{FIG2_TO_S:.0} s, Table 1's setting: \
         1460-byte packets, independent losses), as the paper's 70 s traces. The paper draws these curves without \
         printing values, so no paper numbers are marked."
    ));
    let path = context.input_path("paper001/1xrtt.toml");
    let base_text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut throughput =
        Chart::new("Throughput (1 s means)", "time (s)", "throughput (kbit/s)").y_from_zero();
    let mut losses =
        Chart::new("Packets lost", "time (s)", "packets lost per second").y_from_zero();
    let mut rows = Vec::new();
    let mut means = Vec::new();
    for (name, controller) in [("one TFRC", "fixed"), ("MULTFRC", "multfrc")] {
        let (simulation, _) = run_scenario(
            &base_text,
            &path.display().to_string(),
            &[
                (CONTROLLER_KEY, toml::Value::String(controller.into())),
                ("run.duration", toml::Value::String(format!("{FIG2_TO_S}s"))),
            ],
        )?;
        let flow = simulation
            .series()
            .flows
            .first()
            .context("the stand-in has a stream")?;
        // One-second groups of the 100 ms rows, inside the window.
        let window: Vec<_> = flow
            .rows
            .iter()
            .filter(|r| r.time_s > FIG2_FROM_S && r.time_s <= FIG2_TO_S + 1e-9)
            .collect();
        let mut kbps = Vec::new();
        let mut lost = Vec::new();
        for second in window.chunks(10).filter(|c| c.len() == 10) {
            let t = second.last().map_or(0.0, |r| r.time_s);
            let mean = second.iter().map(|r| r.throughput_bps).sum::<f64>() / 10.0;
            kbps.push((t, mean / 1e3));
            lost.push((t, second.iter().map(|r| r.packets_lost).sum::<u64>() as f64));
        }
        let sent: u64 = window.iter().map(|r| r.packets_sent).sum();
        let lost_total: u64 = window.iter().map(|r| r.packets_lost).sum();
        let mean_kbps = kbps.iter().map(|(_, v)| v).sum::<f64>() / kbps.len().max(1) as f64;
        let loss_rate = if sent > 0 {
            lost_total as f64 / sent as f64
        } else {
            0.0
        };
        means.push((mean_kbps, loss_rate));
        rows.push(vec![
            name.to_owned(),
            format!("{mean_kbps:.1}"),
            format!("{loss_rate:.3}"),
            window
                .last()
                .and_then(|r| r.connections)
                .map_or_else(|| "–".to_owned(), |n| format!("{n:.0}")),
        ]);
        throughput = throughput.series(Series::new(name, kbps, Style::Line));
        losses = losses.series(Series::new(name, lost, Style::Step));
    }
    page.chart("fig2-throughput", throughput);
    page.chart("fig2-losses", losses);
    page.table(Table {
        header: vec![
            "70 s window".to_owned(),
            "mean throughput (kbit/s)".to_owned(),
            "packet loss rate".to_owned(),
            "connections at the end".to_owned(),
        ],
        rows,
    });
    if let [(one_kbps, one_loss), (multi_kbps, multi_loss)] = means[..] {
        let higher = |a: f64, b: f64| if b > a { "higher" } else { "not higher" };
        page.paragraph(&format!(
            "The paper: \"both the throughput and the packet loss rate are higher for MULTFRC than \
             for one TFRC\". Ours in this window: the throughput is {} ({multi_kbps:.1} against \
             {one_kbps:.1} kbit/s) and the loss rate {} ({multi_loss:.3} against {one_loss:.3}).",
            higher(one_kbps, multi_kbps),
            higher(one_loss, multi_loss),
        ));
    }
    Ok(())
}
