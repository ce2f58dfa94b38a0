//! `simulate --out DIR`'s report page: `index.html` (one self-contained
//! file) and `index.md` with the run's summary tables and its charts, the
//! charts also as PNG files beside them.

use std::path::Path;

use fairstream_report::{Chart, Page, Table};
use fairstream_sim::runner::Summary;

/// What the page is about.
pub(crate) struct Run<'a> {
    /// The scenario file.
    pub(crate) file: &'a Path,
    /// The output directory.
    pub(crate) out: &'a Path,
    /// The run's summary.
    pub(crate) summary: &'a Summary,
}

/// The page: the run, a table of flows, a table of link directions, the
/// charts (`(file stem, chart)`), the files and the command again.
pub(crate) fn page(run: &Run<'_>, charts: Vec<(String, Chart)>) -> Page {
    let summary = run.summary;
    let name = run.file.file_name().map_or_else(
        || run.file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut page = Page::new(&format!("fairstream simulate: {name}"));
    page.paragraph(&format!(
        "Scenario `{}`, seed {}, {} s of simulated time, {} events. Packet conservation {}.",
        run.file.display(),
        summary.seed,
        summary.sim_time_s,
        summary.events,
        if summary.conservation_ok {
            "holds: every packet created was delivered, dropped, lost or is still in flight"
        } else {
            "FAILED: packets went missing (see `packets` in `summary.json`)"
        },
    ));
    page.heading(2, "Flows").table(flow_table(summary));
    page.heading(2, "Links").table(link_table(summary));
    if !charts.is_empty() {
        page.heading(2, "Over time");
        for (name, chart) in charts {
            page.chart(&name, chart);
        }
    }
    page.heading(2, "Files").list(&[
        "`summary.json`: the summary printed on stdout, every figure above and more".to_owned(),
        "`flows/NAME.csv`, `links/A-to-B.csv`: a row per flow and per link direction every \
         100 ms of simulated time"
            .to_owned(),
        "`NAME.png`: the charts above; `index.md`: this page as Markdown".to_owned(),
    ]);
    page.heading(2, "Run it again").code_block(&format!(
        "fairstream simulate {} --seed {} --duration {}s --out {}",
        run.file.display(),
        summary.seed,
        summary.sim_time_s,
        run.out.display()
    ));
    page
}

/// `value` with `decimals`, or a dash for none.
fn optional(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.decimals$}"))
}

fn flow_table(summary: &Summary) -> Table {
    let header = [
        "flow",
        "transport",
        "throughput (Mbit/s)",
        "goodput (Mbit/s)",
        "packets sent",
        "queue drops",
        "channel losses",
        "loss event rate",
        "mean RTT (ms)",
        "connections (mean)",
    ];
    Table {
        header: header.map(str::to_owned).to_vec(),
        rows: summary
            .flows
            .iter()
            .map(|flow| {
                vec![
                    flow.name.clone(),
                    flow.cc.clone(),
                    format!("{:.3}", flow.throughput_bps / 1e6),
                    format!("{:.3}", flow.goodput_bps / 1e6),
                    flow.packets_sent.to_string(),
                    flow.packets_lost_congestion.to_string(),
                    flow.packets_lost_channel.to_string(),
                    optional(flow.loss_event_rate, 4),
                    optional(flow.mean_rtt_s.map(|s| s * 1e3), 1),
                    optional(flow.connections_mean, 2),
                ]
            })
            .collect(),
    }
}

fn link_table(summary: &Summary) -> Table {
    let header = [
        "link direction",
        "utilisation",
        "packets offered",
        "delivered",
        "queue drops",
        "CE marked",
        "channel losses",
    ];
    Table {
        header: header.map(str::to_owned).to_vec(),
        rows: summary
            .links
            .iter()
            .map(|link| {
                vec![
                    link.direction.clone(),
                    format!("{:.1} %", link.utilization * 100.0),
                    link.packets_offered.to_string(),
                    link.packets_delivered.to_string(),
                    link.queue_drops.to_string(),
                    link.ce_marked.to_string(),
                    link.channel_losses.to_string(),
                ]
            })
            .collect(),
    }
}
