//! `simulate --out DIR`'s report page: `index.html` (one self-contained
//! file) and `index.md` with the run's summary tables and its charts, the
//! charts also as PNG files beside them.

use std::path::Path;

use fairstream_report::{Chart, Page, Table};
use fairstream_sim::runner::{FlowSummary, LinkSummary, Summary};

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

/// A column: its name and how a cell is made from a row's item.
type Column<T> = (&'static str, fn(&T) -> String);

/// A table of `items`, a row each, in `columns`.
fn table<T>(columns: &[Column<T>], items: &[T]) -> Table {
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    let mut table = Table::new(&names);
    for item in items {
        table.row(columns.iter().map(|(_, cell)| cell(item)).collect());
    }
    table
}

fn flow_table(summary: &Summary) -> Table {
    let columns: [Column<FlowSummary>; 10] = [
        ("flow", |f| f.name.clone()),
        ("transport", |f| f.cc.clone()),
        ("throughput (Mbit/s)", |f| {
            format!("{:.3}", f.throughput_bps / 1e6)
        }),
        ("goodput (Mbit/s)", |f| {
            format!("{:.3}", f.goodput_bps / 1e6)
        }),
        ("packets sent", |f| f.packets_sent.to_string()),
        ("queue drops", |f| f.packets_lost_congestion.to_string()),
        ("channel losses", |f| f.packets_lost_channel.to_string()),
        ("loss event rate", |f| optional(f.loss_event_rate, 4)),
        ("mean RTT (ms)", |f| {
            optional(f.mean_rtt_s.map(|s| s * 1e3), 1)
        }),
        ("connections (mean)", |f| optional(f.connections_mean, 2)),
    ];
    table(&columns, &summary.flows)
}

fn link_table(summary: &Summary) -> Table {
    let columns: [Column<LinkSummary>; 7] = [
        ("link direction", |l| l.direction.clone()),
        ("utilisation", |l| format!("{:.1} %", l.utilization * 100.0)),
        ("packets offered", |l| l.packets_offered.to_string()),
        ("delivered", |l| l.packets_delivered.to_string()),
        ("queue drops", |l| l.queue_drops.to_string()),
        ("CE marked", |l| l.ce_marked.to_string()),
        ("channel losses", |l| l.channel_losses.to_string()),
    ];
    table(&columns, &summary.links)
}
