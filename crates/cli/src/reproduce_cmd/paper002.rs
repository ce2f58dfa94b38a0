//! Paper 002 (Sathaseelan and Fairhurst, multimedia congestion control for
//! broadband wireless networks): Figs. 1-3 on a bandwidth-on-demand (RRM)
//! satellite return link (`experiments/paper002/fairness.toml` and
//! `voice.toml` say where each of their parameters comes from), each of the
//! paper's claims checked against our numbers, and Table 2 (R → MOS) beside
//! the E-model's own mapping.

use anyhow::{Context as _, Result};
use fairstream_media::emodel::mos_from_r;
use fairstream_report::{Chart, Page, Series, Style, Table};

mod voice;

use super::compare::{verdict, Direction, Results, Stat};
use super::paper_data::PaperData;
use super::{Input, Quick, Runner};
use crate::sweep_cmd::plan::CASE_KEY;

/// The files the recipe runs.
pub(super) const INPUTS: &[Input] = &[
    (
        "paper002/fairness.toml",
        include_str!("../../../../experiments/paper002/fairness.toml"),
    ),
    (
        "paper002/voice.toml",
        include_str!("../../../../experiments/paper002/voice.toml"),
    ),
    (
        "sweeps/paper002/fig1.toml",
        include_str!("../../../../experiments/sweeps/paper002/fig1.toml"),
    ),
    (
        "sweeps/paper002/fig2.toml",
        include_str!("../../../../experiments/sweeps/paper002/fig2.toml"),
    ),
    (
        "sweeps/paper002/fig3.toml",
        include_str!("../../../../experiments/sweeps/paper002/fig3.toml"),
    ),
    (
        "papers/002.toml",
        include_str!("../../../../experiments/papers/002.toml"),
    ),
];

/// `--quick` for Fig. 1: two seeds of 40 s a point, at 1, 5 and 20 flows
/// (the full run: five seeds of 120 s at 1-50 flows).
const QUICK_FAIRNESS: Quick = Quick {
    seeds: 2,
    duration: "40s",
};

/// Fig. 1's swept parameter and the flow counts `--quick` keeps.
const COUNT_KEY: &str = "flow.media.count";
const QUICK_COUNTS: [i64; 3] = [1, 5, 20];

/// What the link can grant at most: "variable capacity (up to 2 Mbps)"
/// (paper 002 §IV).
const LINK_MAX_BPS: f64 = 2e6;
/// Each media flow's rate: "50 packets per second, each packet with a
/// fixed 1000 B of data (400 kbps)" (§IV.A).
const MEDIA_BPS: f64 = 400e3;
/// The most the TCP flow can carry: "a maximum congestion window (cwnd) of
/// 40 packets" of 1460 bytes (§IV.A) a round trip, 2 × (300 + 1) ms
/// without queueing (fairness.toml).
const TCP_WINDOW_BPS: f64 = 40.0 * 1460.0 * 8.0 / 0.602;

/// The TCP flow's max-min fair share beside `n` media flows of
/// [`MEDIA_BPS`] on [`LINK_MAX_BPS`]: an equal split, or what the media
/// flows leave when they ask for less, and never more than its window
/// lets it carry.
fn tcp_fair_share_bps(n: u32) -> f64 {
    let n = f64::from(n);
    let equal = LINK_MAX_BPS / (n + 1.0);
    let left = LINK_MAX_BPS - n * MEDIA_BPS;
    equal.max(left).min(TCP_WINDOW_BPS)
}

/// Runs the sweeps and writes the report.
pub(super) fn build(context: &Runner, data: &PaperData, page: &mut Page) -> Result<()> {
    page.heading(2, "The setting");
    page.paragraph(
        "Paper 002 §IV (ns-2): \"a broadband wireless link ... a congestion bottleneck with \
         variable capacity (up to 2 Mbps) and delay (a base propagation delay of 300ms)\" whose \
         capacity comes from radio resource management. Ours is a bandwidth-on-demand return \
         link (`bod`, RBDC and VBDC requests each superframe, granted after the request-grant \
         delay: 300 ms for the regenerative satellite, 600 ms for the transparent one) behind \
         a 50-packet queue; the scenario files under `experiments/paper002/` give every value \
         and its source, and which are ours (the queue, the reverse direction, the de-jitter \
         buffer, the web load, the run length).",
    );
    table2(data, page)?;
    fig1(context, page)?;
    voice::fig2(context, page)?;
    voice::fig3(context, page)?;
    Ok(())
}

/// Table 2 beside the E-model's own R → MOS mapping (G.107 Annex B).
fn table2(data: &PaperData, page: &mut Page) -> Result<()> {
    let paper = data.table("table2")?;
    page.heading(2, &format!("{}: {}", paper.label, paper.caption));
    page.paragraph(
        "The paper's table, and the MOS that `fairstream_media::emodel::mos_from_r` (G.107 \
         Annex B's formula, which scores our calls) gives at the ends of each band of R.",
    );
    let mut rows = Vec::new();
    for row in 0..paper.rows.len() {
        let band = paper.text(row, "R Score")?;
        let (low, high) = band
            .split_once('-')
            .and_then(|(l, h)| Some((l.parse::<f64>().ok()?, h.parse::<f64>().ok()?)))
            .with_context(|| format!("Table 2's R band `{band}`"))?;
        rows.push(vec![
            band.to_owned(),
            paper.text(row, "MOS")?.to_owned(),
            format!("{:.2}-{:.2}", mos_from_r(low), mos_from_r(high)),
            paper.text(row, "Perceived Quality")?.to_owned(),
        ]);
    }
    page.table(Table {
        header: vec![
            "R Score".to_owned(),
            "MOS: paper".to_owned(),
            "ours".to_owned(),
            "Perceived Quality".to_owned(),
        ],
        rows,
    });
    Ok(())
}

/// How a sweep was run, for the report.
fn runs_line(context: &Runner, seeds: usize, duration: &str, full: &str) -> String {
    format!(
        "{seeds} seed{} of {duration} per point{}.",
        if seeds == 1 { "" } else { "s" },
        if context.quick() {
            format!(
                " (the quick run; the full run, {full}, is what docs/results/reproduce/002 holds)"
            )
        } else {
            String::new()
        }
    )
}

/// Fig. 1: the TCP flow against N UDP flows, and against N CCID 3 flows.
fn fig1(context: &Runner, page: &mut Page) -> Result<()> {
    page.heading(2, "Fig. 1: a TCP flow against N media flows");
    let mut plan = context.plan("sweeps/paper002/fig1.toml", QUICK_FAIRNESS)?;
    if context.quick() {
        let (_, counts) = plan
            .vary
            .iter_mut()
            .find(|(key, _)| key == COUNT_KEY)
            .with_context(|| format!("fig1.toml does not vary `{COUNT_KEY}`"))?;
        counts.retain(|v| v.as_integer().is_some_and(|n| QUICK_COUNTS.contains(&n)));
    }
    let counts: Vec<u32> = plan
        .vary
        .iter()
        .find(|(key, _)| key == COUNT_KEY)
        .map(|(_, values)| {
            values
                .iter()
                .filter_map(|v| v.as_integer().and_then(|n| u32::try_from(n).ok()))
                .collect()
        })
        .unwrap_or_default();
    page.paragraph(&format!(
        "One TCP NewReno transfer (1460-byte segments, a 40-segment window) against N media \
         flows of 400 kbit/s (1000-byte packets, 50 a second, the copies starting 100 ms \
         apart, each a further random time in its first second, `start_jitter`): plain UDP CBR, \
         then the same sources over DCCP CCID 3. Goodput over the whole run. {} The start times \
         are the only random draw (CBR, NewReno, TFRC and the link's grants are deterministic): \
         the seeds differ in when each flow starts, and the values are their mean ± the 95 % \
         confidence interval's half-width (kbit/s).",
        runs_line(context, plan.seeds.len(), &Runner::duration(&plan), "120 s")
    ));
    page.paragraph(&format!(
        "TCP's fair share is max-min: the 2 Mbit/s the link can grant split equally, or what \
         the media flows leave when they ask for less (400 kbit/s each), but never above what \
         40 segments a base round trip of 602 ms carry ({:.0} kbit/s).",
        TCP_WINDOW_BPS / 1e3
    ));
    let outcome = context.run("fig1", &plan)?;
    let results = Results {
        plan: &plan,
        outcome: &outcome,
    };
    let stat = |case: &str, n: u32, metric: &str| -> Result<Stat> {
        let point = results.point(&[(CASE_KEY, case), (COUNT_KEY, &n.to_string())])?;
        results.stat(point, metric)
    };
    let at = |case: &str, n: u32, metric: &str| -> Result<f64> { Ok(stat(case, n, metric)?.mean) };
    let shown = |case: &str, n: u32, metric: &str| -> Result<String> {
        Ok(stat(case, n, metric)?.show(1e-3, 0))
    };
    let mut rows = Vec::new();
    let mut udp_tcp = Vec::new();
    let mut ccid3_tcp = Vec::new();
    // (N, what the link granted, kbit/s) with CCID 3 and with UDP.
    let mut ccid3_granted = Vec::new();
    let mut udp_granted = Vec::new();
    for &n in &counts {
        let fair = tcp_fair_share_bps(n);
        let (udp, ccid3) = (at("\"udp\"", n, "tcp_bps")?, at("\"ccid3\"", n, "tcp_bps")?);
        udp_tcp.push((n, udp / 1e3));
        ccid3_tcp.push((n, ccid3 / 1e3));
        ccid3_granted.push((n, at("\"ccid3\"", n, "granted_bps")? / 1e3));
        udp_granted.push((n, at("\"udp\"", n, "granted_bps")? / 1e3));
        rows.push(vec![
            n.to_string(),
            format!("{:.0}", fair / 1e3),
            shown("\"udp\"", n, "tcp_bps")?,
            shown("\"udp\"", n, "media_bps")?,
            shown("\"udp\"", n, "granted_bps")?,
            shown("\"ccid3\"", n, "tcp_bps")?,
            shown("\"ccid3\"", n, "media_bps")?,
            shown("\"ccid3\"", n, "granted_bps")?,
        ]);
    }
    page.table(Table {
        header: [
            "N",
            "TCP's fair share (kbit/s)",
            "UDP: TCP (kbit/s)",
            "UDP: a media flow",
            "UDP: granted",
            "CCID 3: TCP (kbit/s)",
            "CCID 3: a media flow",
            "CCID 3: granted",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    });
    let drawn = |points: &[(u32, f64)]| -> Vec<(f64, f64)> {
        points.iter().map(|&(n, y)| (f64::from(n), y)).collect()
    };
    let fair: Vec<(f64, f64)> = counts
        .iter()
        .map(|&n| (f64::from(n), tcp_fair_share_bps(n) / 1e3))
        .collect();
    page.chart(
        "fig1-tcp",
        Chart::new(
            "Fig. 1: throughput of a single TCP flow against N media flows",
            "media flows N",
            "TCP goodput (kbit/s)",
        )
        .y_from_zero()
        .series(Series::new(
            "against N UDP flows",
            drawn(&udp_tcp),
            Style::Line,
        ))
        .series(Series::new(
            "against N CCID 3 flows",
            drawn(&ccid3_tcp),
            Style::Line,
        ))
        .series(Series::new("TCP's fair share", fair, Style::Points)),
    );

    page.heading(3, "The paper's claims, checked");
    // Within 5 % of the fair share counts as getting it.
    let gets_share = |&(n, kbps): &(u32, f64)| kbps * 1e3 >= 0.95 * tcp_fair_share_bps(n);
    let (first, last) = (
        udp_tcp.first().context("Fig. 1's points")?,
        udp_tcp.last().context("Fig. 1's points")?,
    );
    let falls = Direction::of(first.1, last.1, 0.05) == Direction::Down;
    let deprived: Vec<String> = udp_tcp
        .iter()
        .filter(|p| p.0 >= 2 && !gets_share(p))
        .map(|p| p.0.to_string())
        .collect();
    let several = udp_tcp.iter().filter(|p| p.0 >= 2).count();
    let ccid3_up_to = ccid3_tcp
        .iter()
        .take_while(|p| gets_share(p))
        .last()
        .map(|p| p.0);
    let ccid3_all = ccid3_tcp.iter().all(gets_share);
    let better: Vec<String> = udp_tcp
        .iter()
        .zip(&ccid3_tcp)
        .filter(|(udp, ccid3)| ccid3.1 > udp.1)
        .map(|(udp, _)| udp.0.to_string())
        .collect();
    // TCP's equal share of what the link granted (window-capped), the
    // capacity the flows actually had.
    let of_granted: Vec<String> = ccid3_tcp
        .iter()
        .zip(&ccid3_granted)
        .filter(|((n, tcp), (_, granted))| {
            *tcp >= 0.95 * (granted / f64::from(n + 1)).min(TCP_WINDOW_BPS / 1e3)
        })
        .map(|((n, _), _)| n.to_string())
        .collect();
    let range = |points: &[(u32, f64)]| {
        let low = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let high = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        format!("{low:.0}-{high:.0} kbit/s")
    };
    let ccid3_line = match ccid3_up_to {
        _ if ccid3_all => "at every N".to_owned(),
        Some(n) => format!("up to N = {n}, not beyond"),
        None => "at no N".to_owned(),
    };
    page.list(&[
        format!(
            "\"as the number of UDP flows increased, the throughput of the TCP flow is gradually \
             reduced\": ours goes from {:.0} kbit/s at N = {} to {:.0} at N = {}: {}.",
            first.1,
            first.0,
            last.1,
            last.0,
            verdict(falls)
        ),
        format!(
            "\"When there are multiple UDP flows, the single TCP was deprived of its fair share\": \
             ours is below 95 % of its fair share at {} of the {several} counts from N = 2 ({}): {}.",
            deprived.len(),
            if deprived.is_empty() {
                "none".to_owned()
            } else {
                format!("N = {}", deprived.join(", "))
            },
            verdict(several > 0 && deprived.len() == several)
        ),
        format!(
            "\"[with CCID 3] the TCP flow was able to get more than its fair share of the \
             capacity\": ours gets at least 95 % of its fair share of the 2 Mbit/s {ccid3_line} \
             (and of an equal share of what the link granted, window-capped, at {} of the {} \
             counts{}): {}.",
            of_granted.len(),
            counts.len(),
            if of_granted.is_empty() {
                String::new()
            } else {
                format!(": N = {}", of_granted.join(", "))
            },
            verdict(ccid3_all)
        ),
        format!(
            "\"DCCP CCID 3 could improve fairness\" (§IV.A): ours gives TCP more against CCID 3 \
             than against UDP at {} of the {} counts ({}): {}.",
            better.len(),
            counts.len(),
            if better.is_empty() {
                "none".to_owned()
            } else {
                format!("N = {}", better.join(", "))
            },
            verdict(!counts.is_empty() && better.len() == counts.len())
        ),
    ]);
    page.paragraph(&format!(
        "Where ours differ, and why: the BoD link grants only what the terminal's queue asks \
         for, 300 ms late. UDP's sources send their 400 kbit/s whatever is lost, so the \
         queue stays full and the grant grows to {udp} over the counts; CCID 3's flows, like TCP, slow down \
         when the queue drops their packets, ask for less, and are granted {ccid3}, well short \
         of the 2 Mbit/s the fair share above assumes. TCP, with a 40-segment window over a \
         round trip of more than 600 ms, is also slow to take capacity the grants have not yet \
         caught up with. The paper's ns-2 RRM model is not given in enough detail to say \
         whether its grants followed the offered load the same way.",
        udp = range(&udp_granted),
        ccid3 = range(&ccid3_granted),
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_fair_share_is_max_min_and_window_limited() {
        // One 400 kbit/s flow leaves 1.6 Mbit/s, more than 40 segments a
        // 602 ms round trip carry (776 kbit/s).
        assert!((tcp_fair_share_bps(1) - TCP_WINDOW_BPS).abs() < 1e-6);
        assert!((TCP_WINDOW_BPS - 776_080.0).abs() < 1.0);
        // Four leave 400 kbit/s, an equal fifth too.
        assert!((tcp_fair_share_bps(4) - 400e3).abs() < 1e-6);
        // Nine ask for more than the link has: an equal tenth.
        assert!((tcp_fair_share_bps(9) - 200e3).abs() < 1e-6);
        assert!((tcp_fair_share_bps(49) - 40e3).abs() < 1e-6);
    }
}
