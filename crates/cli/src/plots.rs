//! The charts `--out DIR` draws from a run's time series; the report page
//! (`simulate_page`) writes them as PNG files beside `index.html`.

use fairstream_media::playout::{BufferSample, GopArrival, Player, PlayerState};
use fairstream_report::{Chart, Series, Style};
use fairstream_sim::runner::{Summary, TimeSeries, SERIES_INTERVAL};

/// Rows averaged into one plotted point: 1 s at 100 ms per row, so that
/// TCP's sawtooth and TFRC's smoothness both show without the noise of
/// single 100 ms bins.
const ROWS_PER_POINT: usize = 10;

/// Means of consecutive groups of [`ROWS_PER_POINT`] values, each placed at
/// the end of its group.
fn averaged(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .chunks(ROWS_PER_POINT)
        .filter(|chunk| chunk.len() == ROWS_PER_POINT)
        .filter_map(|chunk| {
            let (t, _) = *chunk.last()?;
            let mean = chunk.iter().map(|(_, v)| v).sum::<f64>() / chunk.len() as f64;
            Some((t, mean))
        })
        .collect()
}

/// Only the finite points: a rate or an RTT that is not known yet may be
/// infinite, and a chart refuses such values rather than draw them.
fn finite(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    points
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect()
}

/// The charts of a run by file stem: `throughput`, `queue`, for
/// multi-connection flows `connections`, and when a flow has congestion
/// control `allowed_rate` and `rtt`. A chart with nothing to draw (a run
/// shorter than a plotted point) is left out.
pub(crate) fn simulation_charts(summary: &Summary, series: &TimeSeries) -> Vec<(String, Chart)> {
    let mut charts = Vec::new();
    let seconds = SERIES_INTERVAL.as_secs_f64() * ROWS_PER_POINT as f64;
    let title_suffix = format!("seed {}", summary.seed);

    let mut throughput = Chart::new(
        &format!("Throughput per flow ({title_suffix})"),
        "time (s)",
        &format!("throughput (Mbit/s, {seconds:.0} s means)"),
    )
    .y_from_zero();
    for flow in &series.flows {
        let points = finite(flow.rows.iter().map(|r| (r.time_s, r.throughput_bps / 1e6)));
        throughput = throughput.series(Series::new(&flow.name, averaged(&points), Style::Line));
    }
    charts.push(("throughput".to_owned(), throughput));

    // Links whose queue held something; if none did, every link at zero,
    // so that the chart says so rather than the file being missing.
    let busy: Vec<_> = series
        .links
        .iter()
        .filter(|link| link.rows.iter().any(|r| r.queue_packets > 0))
        .collect();
    let (title, links) = if busy.is_empty() {
        (
            format!("Queue length ({title_suffix}): every queue stayed empty"),
            series.links.iter().collect(),
        )
    } else {
        (format!("Queue length ({title_suffix})"), busy)
    };
    let mut queue = Chart::new(&title, "time (s)", "queue (packets)").y_from_zero();
    for link in links {
        let points = finite(link.rows.iter().map(|r| (r.time_s, r.queue_packets as f64)));
        queue = queue.series(Series::new(&link.direction, points, Style::Line));
    }
    charts.push(("queue".to_owned(), queue));

    let sessions: Vec<_> = series
        .flows
        .iter()
        .filter(|f| f.rows.iter().any(|r| r.connections.is_some()))
        .collect();
    if !sessions.is_empty() {
        let mut count = Chart::new(
            &format!("Connections of multi-connection flows ({title_suffix})"),
            "time (s)",
            "connections (the aggregate: its n)",
        )
        .y_from_zero();
        for flow in sessions {
            let points = finite(
                flow.rows
                    .iter()
                    .filter_map(|r| r.connections.map(|n| (r.time_s, n))),
            );
            count = count.series(Series::new(&flow.name, points, Style::Step));
        }
        charts.push(("connections".to_owned(), count));
    }

    let controlled: Vec<_> = series
        .flows
        .iter()
        .filter(|f| f.rows.iter().any(|r| r.allowed_rate_bps.is_some()))
        .collect();
    if !controlled.is_empty() {
        let mut rate = Chart::new(
            &format!("Rate allowed by congestion control ({title_suffix})"),
            "time (s)",
            "allowed rate (Mbit/s; TFRC X, TCP and CCID 2 cwnd/RTT)",
        )
        .y_from_zero();
        let mut rtt = Chart::new(
            &format!("Smoothed RTT at the sender ({title_suffix})"),
            "time (s)",
            "RTT (ms)",
        )
        .y_from_zero();
        for flow in controlled {
            let allowed = finite(
                flow.rows
                    .iter()
                    .filter_map(|r| r.allowed_rate_bps.map(|x| (r.time_s, x / 1e6))),
            );
            rate = rate.series(Series::new(&flow.name, allowed, Style::Line));
            let rtts = finite(
                flow.rows
                    .iter()
                    .filter_map(|r| r.rtt_s.map(|x| (r.time_s, x * 1e3))),
            );
            rtt = rtt.series(Series::new(&flow.name, rtts, Style::Line));
        }
        charts.push(("allowed_rate".to_owned(), rate));
        charts.push(("rtt".to_owned(), rtt));
    }
    charts.retain(|(_, chart)| !chart.is_empty());
    charts
}

/// Paper 000's Figure 2: per GOP, when its first and its last packet
/// arrived.
pub(crate) fn gop_arrival(flow: &str, gops: &[GopArrival]) -> Chart {
    let first = finite(
        gops.iter()
            .enumerate()
            .filter_map(|(i, g)| g.first_arrival_s.map(|t| (i as f64, t))),
    );
    let last = finite(
        gops.iter()
            .enumerate()
            .filter_map(|(i, g)| g.last_arrival_s.map(|t| (i as f64, t))),
    );
    Chart::new(
        &format!("GOP arrival times: {flow}"),
        "GOP (number)",
        "arrival time (s)",
    )
    .series(Series::new("first packet", first, Style::Points))
    .series(Series::new("last packet", last, Style::Points))
    .y_from_zero()
}

/// Paper 001's Figure 3: the playback buffer over time, in seconds of
/// media, with the samples where playback stood paused to rebuffer marked
/// on the time axis.
pub(crate) fn buffer(flow: &str, player: Player, samples: &[BufferSample]) -> Chart {
    let buffered = finite(samples.iter().map(|s| (s.time_s, s.buffered_s)));
    let paused = finite(
        samples
            .iter()
            .filter(|s| s.state == PlayerState::Rebuffering)
            .map(|s| (s.time_s, 0.0)),
    );
    // An empty "rebuffering" series is left out of the legend.
    Chart::new(
        &format!("Playback buffer: {flow} (player {})", player.as_str()),
        "time (s)",
        "media buffered (s)",
    )
    .series(Series::new("buffered", buffered, Style::Line))
    .series(Series::new("rebuffering", paused, Style::Points))
    .y_from_zero()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_whole_groups_only() {
        let points: Vec<(f64, f64)> = (1..=25).map(|i| (i as f64 * 0.1, i as f64)).collect();
        let means = averaged(&points);
        assert_eq!(means.len(), 2);
        assert!((means[0].0 - 1.0).abs() < 1e-9);
        assert!((means[0].1 - 5.5).abs() < 1e-9);
        assert!((means[1].1 - 15.5).abs() < 1e-9);
    }
}
