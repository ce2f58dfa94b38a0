//! Paper 000 Fig. 2: the order in which GOPs arrive at node C with four
//! connections, and the start-up delay it asks of the receiver.

use anyhow::{bail, Result};
use fairstream_media::playout::GopArrival;
use fairstream_report::{Chart, Page, Series, Style, Table};
use fairstream_sim::runner::MediaOutcome;

use super::super::{run_scenario, Runner};
use super::{INPUTS, QUICK_FRAMES};

/// The split policies compared: the paper's and ours.
const POLICIES: [(&str, &str); 2] = [
    ("GOP interleave (the paper's)", "gop-interleave"),
    ("earliest connection (ours)", "earliest"),
];

/// The frame rate of the clip.
const FPS: f64 = 30.0;

/// The least start-up delay after the first arrival with which every GOP
/// is complete when its first frame is due (frame f due at the first
/// arrival + delay + f / fps), seconds.
pub(super) fn startup_for_gops(gops: &[GopArrival], fps: f64) -> Option<f64> {
    let first = gops
        .iter()
        .filter_map(|g| g.first_arrival_s)
        .reduce(f64::min)?;
    gops.iter()
        .filter_map(|g| {
            let last = g.last_arrival_s?;
            Some(last - first - g.first_frame as f64 / fps)
        })
        .reduce(f64::max)
        .map(|d| d.max(0.0))
}

/// Fig. 2: one run of each policy, four connections, 20 ms frames, seed 1.
pub(super) fn fig2(context: &Runner, page: &mut Page) -> Result<()> {
    page.heading(
        2,
        "Fig. 2: GOP arrival sequence at node C with four connections",
    );
    let Some((path, text)) = INPUTS.iter().find(|(p, _)| *p == "paper000/wimax.toml") else {
        bail!("paper000/wimax.toml is not among the recipe's inputs");
    };
    let origin = context.input_path(path).display().to_string();
    let mut rows = Vec::new();
    let mut chart = Chart::new(
        "Fig. 2: first and last arrival of each GOP (4 connections, 20 ms frames)",
        "GOP",
        "arrival at node C (s)",
    )
    .y_from_zero();
    for (label, policy) in POLICIES {
        let mut changes = vec![
            ("flow.video.transport.conns", toml::Value::Integer(4)),
            (
                "flow.video.transport.policy",
                toml::Value::String(policy.to_owned()),
            ),
            ("run.seed", toml::Value::Integer(1)),
        ];
        if context.quick() {
            changes.push((
                "flow.video.media.frames",
                toml::Value::Integer(QUICK_FRAMES),
            ));
            changes.push(("run.duration", toml::Value::String("40s".to_owned())));
        }
        let (_, summary) = run_scenario(text, &origin, &changes)?;
        let Some(flow) = summary.flows.first() else {
            bail!("the scenario has no video flow");
        };
        let Some(MediaOutcome::Report(report)) = flow.media.as_ref() else {
            bail!("the video flow has no media report");
        };
        let gops = &report.playout.gops;
        let first: Vec<(f64, f64)> = gops
            .iter()
            .enumerate()
            .filter_map(|(i, g)| Some((i as f64 + 1.0, g.first_arrival_s?)))
            .collect();
        let last: Vec<(f64, f64)> = gops
            .iter()
            .enumerate()
            .filter_map(|(i, g)| Some((i as f64 + 1.0, g.last_arrival_s?)))
            .collect();
        // GOPs that complete after a later GOP has completed.
        let mut latest: f64 = 0.0;
        let mut out_of_order = 0;
        for g in gops {
            if let Some(last) = g.last_arrival_s {
                if last < latest {
                    out_of_order += 1;
                }
                latest = latest.max(last);
            }
        }
        let startup = startup_for_gops(gops, FPS);
        rows.push(vec![
            label.to_owned(),
            gops.len().to_string(),
            out_of_order.to_string(),
            startup.map_or_else(|| "–".to_owned(), |s| format!("{s:.1}")),
            startup.map_or_else(|| "–".to_owned(), |s| format!("{:.0}", s * FPS)),
            report
                .playout
                .last_arrival_s
                .map_or_else(|| "–".to_owned(), |s| format!("{s:.1}")),
            flow.reorder_buffer_max_packets
                .map_or_else(|| "–".to_owned(), |n| n.to_string()),
            flow.reorder_delay_max_s
                .map_or_else(|| "–".to_owned(), |s| format!("{s:.1}")),
        ]);
        chart = chart
            .series(Series::new(
                &format!("first packet, {policy}"),
                first,
                Style::Points,
            ))
            .series(Series::new(
                &format!("last packet, {policy}"),
                last,
                Style::Line,
            ));
    }
    page.paragraph(
        "One run each (seed 1): four connections started 0.5 s apart, 20 ms frames, to node C. \
         The paper: \"about 6 s of frames (amounting to 90 frames) should be stored in the \
         reordering buffer\" with GOP interleaving. Ours: the least start-up delay with which \
         every GOP is complete when its first frame is due (GOP-wise playout from the first \
         arrival at 30 frame/s), for the paper's policy and for ours, which gives each \
         datagram to the connection that can send it first; and what the receiver's reorder \
         buffer held to give the datagrams out in order (the most at once, and the longest a \
         datagram waited for those before it).",
    );
    page.table(Table {
        header: [
            "policy",
            "GOPs",
            "completed after a later GOP",
            "start-up delay needed (s)",
            "in frames",
            "last arrival (s)",
            "reorder buffer, most datagrams",
            "longest reorder wait (s)",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    });
    page.chart("fig2", chart);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_startup_covers_the_latest_gop() {
        let gop = |first_frame, first, last| GopArrival {
            first_frame,
            first_arrival_s: Some(first),
            last_arrival_s: Some(last),
        };
        // At 10 frame/s GOP 2 (frames 10-) is due 1 s after the start; it
        // completes 3 s after the first arrival: 2 s of start-up.
        let gops = [gop(0, 1.0, 1.5), gop(10, 1.2, 4.0), gop(20, 1.1, 2.0)];
        let startup = startup_for_gops(&gops, 10.0).unwrap();
        assert!((startup - 2.0).abs() < 1e-12);
        assert_eq!(startup_for_gops(&[], 10.0), None);
    }
}
