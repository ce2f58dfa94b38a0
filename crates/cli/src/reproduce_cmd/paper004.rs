//! Paper 004 (Ssesanga and Mandal, receiver-buffer congestion control for
//! scalable video): Tables 1 and 2 and Figs. 2-4 on the paper's Fig. 1
//! dumbbell (`experiments/paper004/dumbbell.toml` says where each of its
//! parameters comes from), then the same with faster videos and behind a
//! lossy last hop, with the TFRC-capped mode beside the paper's.

use anyhow::{Context as _, Result};
use fairstream_report::{Chart, Page, Series, Style, Table};

use super::compare::{verdict, Results, Stat};
use super::paper_data::PaperData;
use super::{run_scenario, Input, Quick, Runner};
use crate::sweep_cmd::plan::{Plan, CASE_KEY};

/// The files the recipe runs.
pub(super) const INPUTS: &[Input] = &[
    (
        "paper004/dumbbell.toml",
        include_str!("../../../../experiments/paper004/dumbbell.toml"),
    ),
    (
        "sweeps/paper004/tables.toml",
        include_str!("../../../../experiments/sweeps/paper004/tables.toml"),
    ),
    (
        "sweeps/paper004/rates.toml",
        include_str!("../../../../experiments/sweeps/paper004/rates.toml"),
    ),
    (
        "sweeps/paper004/wireless.toml",
        include_str!("../../../../experiments/sweeps/paper004/wireless.toml"),
    ),
    (
        "papers/004.toml",
        include_str!("../../../../experiments/papers/004.toml"),
    ),
];

/// `--quick`: three seeds of a minute (the full run: ten of 200 s).
const QUICK: Quick = Quick {
    seeds: 3,
    duration: "60s",
};

/// The three ways the videos are sent: (name in the report, the sweep
/// files' case).
const SCHEMES: [(&str, &str); 3] = [
    ("TFRC", "\"tfrc\""),
    ("buffer scheme (paper)", "\"buffer-paper\""),
    (
        "buffer scheme, TFRC-capped (ours)",
        "\"buffer-tfrc-capped\"",
    ),
];

/// The flows of the dumbbell, as the tables' rows name them and the sweep
/// files' metrics prefix them.
const FLOWS: [(&str, &str); 5] = [
    ("Video 1", "video1"),
    ("Video 2", "video2"),
    ("TCP 1", "tcp1"),
    ("TCP 2", "tcp2"),
    ("TCP 3", "tcp3"),
];

/// The tables' columns: (the paper's column, our metric suffix).
const COLUMNS: [(&str, &str); 4] = [
    ("Mean (kbps)", "mean"),
    ("Standard Deviation (kbps)", "sd"),
    ("Minimum (kbps)", "min"),
    ("Maximum (kbps)", "max"),
];

/// Runs the sweeps and writes the report.
pub(super) fn build(context: &Runner, data: &PaperData, page: &mut Page) -> Result<()> {
    page.heading(2, "The setting");
    page.paragraph(
        "Paper 004 §3 and Fig. 1 (ns-2): five senders, router 1 with a drop-tail queue, a 2 Mbit/s \
         bottleneck, router 2 with RED, five receivers, every other link 5 Mbit/s; two FGS MPEG-4 \
         videos \"encoded at CBR 250 kbits/sec\" and three FTP transfers over TCP. The paper gives \
         no delays, queue sizes, packet size, run length, base-layer rate or buffer thresholds; \
         `experiments/paper004/dumbbell.toml` names ours (2 ms access links, 20 ms bottleneck, 50 \
         packets at router 1, ns-2's RED defaults at router 2, 1000-byte packets, NewReno, \
         synthetic FGS traces of 250 kbit/s with a 100 kbit/s base layer at 25 fps, T_s = 2 s, \
         T_c = 1 s, T_loss = 1.5 s). Rates are taken in 1 s bins (the paper does not say over \
         what interval), after the first 10 % of the run.",
    );
    let plan = context.plan("sweeps/paper004/tables.toml", QUICK)?;
    let duration = Runner::duration(&plan);
    page.paragraph(&format!(
        "{} seeds of {duration} per point{}. Each cell of ours is the mean over the seeds of one \
         run's statistic, with its 95 % confidence interval.",
        plan.seeds.len(),
        if context.quick() {
            " (the quick run; the full run is what docs/results/reproduce/004 holds)"
        } else {
            ""
        }
    ));
    let outcome = context.run("tables", &plan)?;
    let results = Results {
        plan: &plan,
        outcome: &outcome,
    };
    table1(&results, data, page)?;
    table2(&results, data, page)?;
    figures(context, &plan, page)?;
    rates(context, page)?;
    wireless(context, page)?;
    Ok(())
}

/// The point of `scheme` (an index into [`SCHEMES`]).
fn scheme_point(results: &Results<'_>, scheme: usize) -> Result<usize> {
    let (_, case) = SCHEMES.get(scheme).context("a scheme")?;
    results.point(&[(CASE_KEY, case)])
}

/// A row of ours: the four statistics of `flow` at `point`, in kbit/s.
fn our_row(results: &Results<'_>, point: usize, flow: &str) -> Result<Vec<Stat>> {
    COLUMNS
        .iter()
        .map(|(_, stat)| results.stat(point, &format!("{flow}_{stat}")))
        .collect()
}

/// Table 1: the videos on TFRC.
fn table1(results: &Results<'_>, data: &PaperData, page: &mut Page) -> Result<()> {
    let paper = data.table("table1")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph(
        "The videos' whole frames over DCCP CCID 3 (TFRC), released as a camera makes them, \
         each frame waiting in the sender's queue until TFRC lets it go (and dropped only after \
         10 s of waiting); the paper gives one row for \"the TFRC session\", set here beside \
         each video.",
    );
    let point = scheme_point(results, 0)?;
    let drops = results.stat(point, "video_sender_drops")?;
    page.paragraph(&format!(
        "Frames the TFRC senders dropped after waiting 10 s, both videos of a run: {}.",
        drops.show(1.0, 1)
    ));
    let mut header = vec!["session".to_owned()];
    for (column, _) in COLUMNS {
        header.push(format!("{column}: paper"));
        header.push("ours".to_owned());
    }
    let mut rows = Vec::new();
    for (name, flow) in &FLOWS[..2] {
        let ours = our_row(results, point, flow)?;
        let mut cells = vec![(*name).to_owned()];
        for ((column, _), stat) in COLUMNS.iter().zip(&ours) {
            cells.push(paper.text(0, column)?.to_owned());
            cells.push(stat.show(1e-3, 1));
        }
        rows.push(cells);
    }
    page.table(Table { header, rows });
    Ok(())
}

/// Table 2: the videos on the buffer scheme, the TCP transfers beside
/// them; and the same with the TFRC-capped scheme.
fn table2(results: &Results<'_>, data: &PaperData, page: &mut Page) -> Result<()> {
    let paper = data.table("table2")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph(
        "The videos on paper 004's scheme alone (`cc = \"buffer\"`, `mode = \"paper\"`: DCCP with \
         a CCID that never holds the schedule back, as the paper's UDP streams).",
    );
    let buffer = scheme_point(results, 1)?;
    let mut header = vec!["session".to_owned()];
    for (column, _) in COLUMNS {
        header.push(format!("{column}: paper"));
        header.push("ours".to_owned());
    }
    let mut rows = Vec::new();
    for (row, (name, flow)) in FLOWS.iter().enumerate() {
        let ours = our_row(results, buffer, flow)?;
        let mut cells = vec![(*name).to_owned()];
        for ((column, _), stat) in COLUMNS.iter().zip(&ours) {
            cells.push(paper.text(row, column)?.to_owned());
            cells.push(stat.show(1e-3, 1));
        }
        rows.push(cells);
    }
    page.table(Table { header, rows });

    let capped = scheme_point(results, 2)?;
    page.heading(
        3,
        "The same with the TFRC-capped scheme (ours; no paper column)",
    );
    page.paragraph(
        "`mode = \"tfrc-capped\"`: the same schedule, never above RFC 5348's TCP throughput \
         equation for the loss event rate and RTT the connection measures.",
    );
    let mut rows = Vec::new();
    for (name, flow) in FLOWS {
        let ours = our_row(results, capped, flow)?;
        let mut cells = vec![name.to_owned()];
        cells.extend(ours.iter().map(|s| s.show(1e-3, 1)));
        rows.push(cells);
    }
    let mut header = vec!["session".to_owned()];
    header.extend(COLUMNS.iter().map(|(c, _)| (*c).to_owned()));
    page.table(Table { header, rows });

    page.heading(3, "The paper's claims, checked");
    let mean = |point: usize, flows: &[(&str, &str)], stat: &str| -> Result<f64> {
        let mut sum = 0.0;
        for (_, flow) in flows {
            sum += results.stat(point, &format!("{flow}_{stat}"))?.mean;
        }
        Ok(sum / flows.len() as f64)
    };
    let tfrc = scheme_point(results, 0)?;
    let number = |row: usize, column: &str| -> Result<f64> {
        paper
            .number(row, column)?
            .with_context(|| format!("a number in Table 2, {column}"))
    };
    let table1 = data.table("table1")?;
    let paper_tfrc_sd = table1
        .number(0, "Standard Deviation (kbps)")?
        .context("Table 1's standard deviation")?;
    let paper_buffer_sd =
        (number(0, "Standard Deviation (kbps)")? + number(1, "Standard Deviation (kbps)")?) / 2.0;
    let our_tfrc_sd = mean(tfrc, &FLOWS[..2], "sd")? / 1e3;
    let our_buffer_sd = mean(buffer, &FLOWS[..2], "sd")? / 1e3;
    let paper_video = (number(0, "Mean (kbps)")? + number(1, "Mean (kbps)")?) / 2.0;
    let paper_tcp =
        (number(2, "Mean (kbps)")? + number(3, "Mean (kbps)")? + number(4, "Mean (kbps)")?) / 3.0;
    let our_video = mean(buffer, &FLOWS[..2], "mean")? / 1e3;
    let our_tcp = mean(buffer, &FLOWS[2..], "mean")? / 1e3;
    let v1 = results.stat(buffer, "video1_mean")?.mean / 1e3;
    let v2 = results.stat(buffer, "video2_mean")?.mean / 1e3;
    let smoother = our_buffer_sd < our_tfrc_sd;
    let not_starved = our_tcp >= our_video;
    let even = (v1 - v2).abs() <= 0.05 * v1.max(v2);
    page.list(&[
        format!(
            "Smoother than TFRC: the videos' standard deviation of the 1 s rate is {paper_buffer_sd:.1} \
             kbit/s with the buffer scheme against {paper_tfrc_sd:.1} with TFRC in the paper \
             (×{:.2}); ours {our_buffer_sd:.1} against {our_tfrc_sd:.1} (×{:.2}): {}.",
            paper_buffer_sd / paper_tfrc_sd,
            our_buffer_sd / our_tfrc_sd,
            verdict(smoother)
        ),
        format!(
            "TCP not starved: the TCP transfers' mean is {paper_tcp:.1} kbit/s against the videos' \
             {paper_video:.1} in the paper; ours {our_tcp:.1} against {our_video:.1}: {}.",
            verdict(not_starved)
        ),
        format!(
            "The two videos alike: {v1:.1} and {v2:.1} kbit/s (the paper: 215.720 and 215.354): {}.",
            verdict(even)
        ),
    ]);
    page.paragraph(
        "Where ours differ from the paper's numbers, and why. Our videos get their whole 250 \
         kbit/s (plus 28 bytes of RTP and layer headers a packet), where the paper's got 215: \
         with two videos and three TCP transfers on 2 Mbit/s the fair share is 400 kbit/s, so a \
         250 kbit/s video never drains its buffer to T_loss here, and the controller has nothing \
         to shed. The paper's TCP transfers got only 252-285 kbit/s of the 1.6 Mbit/s the videos \
         left, which suggests a limit it does not name (ns-2's TCP agents default to a 20-packet \
         window); ours, NewReno without such a limit, take what is left (about 450 kbit/s each). \
         TFRC has room to spare here too, so its video follows the source: its standard \
         deviation is closer to the buffer scheme's than the paper's 59 kbit/s, whose TFRC \
         session fell behind (a mean of 197 kbit/s for a 250 kbit/s video) and caught up in \
         bursts (a maximum of 543).",
    );
    Ok(())
}

/// The report's one-run charts: Figs. 2-4 and the buffer scheme's state.
fn figures(context: &Runner, plan: &Plan, page: &mut Page) -> Result<()> {
    page.heading(2, "Figs. 2-4: throughput over time");
    page.paragraph(
        "One run each (seed 1, Table 1's and Table 2's settings), in 1 s means. The paper draws \
         these curves without printing values: no paper numbers are marked.",
    );
    let path = context.input_path("paper004/dumbbell.toml");
    let base_text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let duration = if context.quick() { "60s" } else { "200s" };
    let run = |case: &str| -> Result<fairstream_sim::runner::TimeSeries> {
        let (_, changes) = plan
            .cases
            .iter()
            .find(|(name, _)| name == case)
            .with_context(|| format!("tables.toml has no case `{case}`"))?;
        let mut all: Vec<(&str, toml::Value)> = changes
            .iter()
            .map(|(path, change)| (path.as_str(), change.clone()))
            .collect();
        all.push(("run.duration", toml::Value::String(duration.to_owned())));
        let (simulation, _) = run_scenario(&base_text, &path.display().to_string(), &all)?;
        Ok(simulation.series().clone())
    };
    let tfrc = run("tfrc")?;
    let buffer = run("buffer-paper")?;
    let per_second = |series: &fairstream_sim::runner::TimeSeries,
                      flow: &str,
                      pick: fn(&fairstream_sim::runner::FlowSample) -> Option<f64>|
     -> Vec<(f64, f64)> {
        let Some(rows) = series.flows.iter().find(|f| f.name == flow) else {
            return Vec::new();
        };
        rows.rows
            .chunks(10)
            .filter(|c| c.len() == 10)
            .filter_map(|second| {
                let values: Vec<f64> = second.iter().filter_map(pick).collect();
                let t = second.last()?.time_s;
                (!values.is_empty()).then(|| (t, values.iter().sum::<f64>() / values.len() as f64))
            })
            .collect()
    };
    let kbps = |r: &fairstream_sim::runner::FlowSample| Some(r.throughput_bps / 1e3);
    let chart = |title: &str, series: Vec<(&str, Vec<(f64, f64)>)>| {
        let mut chart = Chart::new(title, "time (s)", "throughput (kbit/s)").y_from_zero();
        for (name, points) in series {
            chart = chart.series(Series::new(name, points, Style::Line));
        }
        chart
    };
    page.chart(
        "fig2-tfrc",
        chart(
            "Fig. 2: a video session using TFRC",
            vec![("Video 1 (TFRC)", per_second(&tfrc, "video1", kbps))],
        ),
    );
    page.chart(
        "fig3-buffer",
        chart(
            "Fig. 3: a video using the buffer scheme",
            vec![(
                "Video 1 (buffer scheme)",
                per_second(&buffer, "video1", kbps),
            )],
        ),
    );
    page.chart(
        "fig4-tcp",
        chart(
            "Fig. 4: a data session using TCP (beside the buffer-scheme videos)",
            vec![("TCP 1", per_second(&buffer, "tcp1", kbps))],
        ),
    );
    let mut state = Chart::new(
        "The buffer scheme's state (Video 1, ours)",
        "time (s)",
        "seconds of media held; share of the enhancement layer scheduled",
    )
    .y_from_zero();
    state = state
        .series(Series::new(
            "buffer held (s)",
            per_second(&buffer, "video1", |r| r.buffer_s),
            Style::Line,
        ))
        .series(Series::new(
            "enhancement share",
            per_second(&buffer, "video1", |r| r.enhancement_share),
            Style::Step,
        ));
    page.chart("buffer-state", state);
    Ok(())
}

/// Beyond the paper: videos faster than their fair share.
fn rates(context: &Runner, page: &mut Page) -> Result<()> {
    page.heading(2, "Beyond the paper: videos above their fair share");
    page.paragraph(
        "The same dumbbell with each video at 250 kbit/s, 500 kbit/s and 1 Mbit/s (100 kbit/s \
         base layer): from 500 kbit/s two videos no longer fit in their fair share (400 kbit/s a \
         flow). Harm is 1 − the TCP transfers' mean goodput over the same in a run with the two \
         videos replaced by two more TCP transfers (issue 11's harm; 0 is harmless, negative \
         means TCP got more than with TCP in the videos' place).",
    );
    let plan = context.plan("sweeps/paper004/rates.toml", QUICK)?;
    let outcome = context.run("rates", &plan)?;
    let results = Results {
        plan: &plan,
        outcome: &outcome,
    };
    let rate_key = "flow.video1.media.rate, flow.video2.media.rate";
    let rates = [
        ("250kbit", "\"250kbit\""),
        ("500kbit", "\"500kbit\""),
        ("1mbit", "\"1mbit\""),
    ];
    beyond_table(&results, page, ("video rate", rate_key), &rates)?;
    let harm_at_1m = |scheme: usize| -> Result<f64> {
        let (_, case) = SCHEMES.get(scheme).context("a scheme")?;
        let point = results.point(&[(CASE_KEY, case), (rate_key, "\"1mbit\"")])?;
        Ok(results.stat(point, "tcp_harm")?.mean)
    };
    let (paper, capped) = (harm_at_1m(1)?, harm_at_1m(2)?);
    page.paragraph(&format!(
        "At 1 Mbit/s the paper's scheme does {} TCP (harm {paper:.2}): it sheds enhancement \
         only when losses cost it enough whole frames to bring the buffer down to T_loss, and \
         on a drop-tail bottleneck a flow that does not slow down takes the queue from the \
         flows that do. Capped by TFRC's equation the harm is {capped:.2}.",
        if paper > 0.5 { "starve" } else { "not starve" }
    ));
    Ok(())
}

/// The "beyond" tables' columns after the scheme and the varied value:
/// (header, metric, scale, decimals).
const BEYOND_COLUMNS: [(&str, &str, f64, usize); 6] = [
    ("video goodput (kbit/s)", "video_bps", 1e-3, 1),
    ("video 1 s SD (kbit/s)", "video_sd_bps", 1e-3, 1),
    ("enhancement share sent", "video_enhancement", 1.0, 2),
    ("videos cut off (of 2)", "video_cut_off", 1.0, 1),
    ("TCP goodput (kbit/s)", "tcp_bps", 1e-3, 1),
    ("harm to TCP", "tcp_harm", 1.0, 2),
];

/// A table of every scheme at every value of the parameter `key` (its
/// column headed `column`): `values` are (as shown, as the sweep file
/// writes it).
fn beyond_table(
    results: &Results<'_>,
    page: &mut Page,
    (column, key): (&str, &str),
    values: &[(&str, &str)],
) -> Result<()> {
    let mut rows = Vec::new();
    for (name, case) in SCHEMES {
        for (shown, value) in values {
            let point = results.point(&[(CASE_KEY, case), (key, value)])?;
            let mut row = vec![name.to_owned(), (*shown).to_owned()];
            for (_, metric, scale, decimals) in BEYOND_COLUMNS {
                row.push(results.stat(point, metric)?.show(scale, decimals));
            }
            rows.push(row);
        }
    }
    let mut header = vec!["videos on".to_owned(), column.to_owned()];
    header.extend(BEYOND_COLUMNS.iter().map(|(h, ..)| (*h).to_owned()));
    page.table(Table { header, rows });
    Ok(())
}

/// Beyond the paper: a lossy last hop to the videos' receivers.
fn wireless(context: &Runner, page: &mut Page) -> Result<()> {
    page.heading(2, "Beyond the paper: a lossy wireless last hop");
    page.paragraph(
        "The links from router 2 to the videos' receivers lose packets (both directions): 1 % \
         and 5 % independently, or in bursts (Gilbert-Elliott, 3 % in bursts of 2.86 packets on \
         average, paper 001's stand-in). Harm as above, the baseline's TCP transfers behind the \
         same lossy hops.",
    );
    let plan = context.plan("sweeps/paper004/wireless.toml", QUICK)?;
    let outcome = context.run("wireless", &plan)?;
    let results = Results {
        plan: &plan,
        outcome: &outcome,
    };
    let loss_key = "link.router2-video1-dst.loss, link.router2-video2-dst.loss";
    let losses = [
        ("1 %", r#"{ kind = "bernoulli", p = 0.01 }"#),
        ("5 %", r#"{ kind = "bernoulli", p = 0.05 }"#),
        (
            "bursty 3 %",
            r#"{ kind = "gilbert-elliott", p_good_good = 0.98918, p_bad_bad = 0.65, loss_good = 0.0, loss_bad = 1.0 }"#,
        ),
    ];
    beyond_table(&results, page, ("last-hop loss", loss_key), &losses)?;
    page.paragraph(
        "The paper's scheme carries on at its full rate behind a lossy hop: a lost enhancement \
         packet costs no frame, and 1-5 % of lost base packets leave the buffer above T_loss. \
         TFRC and the TFRC-capped scheme read every wireless loss as congestion (RFC 5348's \
         equation takes the loss event rate whatever caused it) and fall below the video's rate: \
         the problem fairstream's multi-connection controllers address. The TFRC-capped scheme \
         fares worse than TFRC here because its packets are smaller (each layer of a frame goes \
         in its own packets, and a thinned enhancement layer in smaller ones still, while the \
         equation's rate is proportional to the packet size) and because it stops the stream \
         once the cap stays below the base layer (paper 004 §2.2): `cut off` counts the \
         videos it stopped, of the two in each run.",
    );
    Ok(())
}
