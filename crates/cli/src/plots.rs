//! The PNG plots `--out DIR` writes, drawn from a run's time series.

use std::path::Path;

use anyhow::Context;
use fairstream_media::playout::{BufferSample, GopArrival, Player, PlayerState};
use fairstream_sim::plot::{Chart, Series, Style};
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

/// Writes `throughput.png`, `queue.png`, for multi-connection flows
/// `connections.png`, and when a flow has congestion control
/// `allowed_rate.png` and `rtt.png` into `dir`.
pub(crate) fn write_simulation_plots(
    dir: &Path,
    summary: &Summary,
    series: &TimeSeries,
) -> anyhow::Result<()> {
    let seconds = SERIES_INTERVAL.as_secs_f64() * ROWS_PER_POINT as f64;
    let title_suffix = format!("seed {}", summary.seed);

    let mut throughput = Chart::new(
        &format!("Throughput per flow ({title_suffix})"),
        "time (s)",
        &format!("Mbit/s, {seconds:.0} s mean"),
    );
    for flow in &series.flows {
        let points: Vec<(f64, f64)> = flow
            .rows
            .iter()
            .map(|r| (r.time_s, r.throughput_bps / 1e6))
            .collect();
        throughput = throughput.series(Series::new(&flow.name, averaged(&points), Style::Line));
    }
    write(&throughput, &dir.join("throughput.png"))?;

    let mut queue = Chart::new(
        &format!("Queue length ({title_suffix})"),
        "time (s)",
        "packets queued",
    );
    let mut any_queue = false;
    for link in &series.links {
        if link.rows.iter().all(|r| r.queue_packets == 0) {
            continue;
        }
        any_queue = true;
        let points = link
            .rows
            .iter()
            .map(|r| (r.time_s, r.queue_packets as f64))
            .collect();
        queue = queue.series(Series::new(&link.direction, points, Style::Line));
    }
    if !any_queue {
        // Every queue stayed empty: say so rather than leave the file out.
        queue.title = format!("Queue length ({title_suffix}): every queue stayed empty");
    }
    write(&queue, &dir.join("queue.png"))?;

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
        );
        for flow in sessions {
            let points = flow
                .rows
                .iter()
                .filter_map(|r| r.connections.map(|n| (r.time_s, n)))
                .collect();
            count = count.series(Series::new(&flow.name, points, Style::Step));
        }
        write(&count, &dir.join("connections.png"))?;
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
            "Mbit/s (TFRC X; TCP and CCID 2 cwnd/RTT)",
        );
        let mut rtt = Chart::new(
            &format!("Smoothed RTT at the sender ({title_suffix})"),
            "time (s)",
            "ms",
        );
        for flow in controlled {
            let allowed = flow
                .rows
                .iter()
                .filter_map(|r| r.allowed_rate_bps.map(|x| (r.time_s, x / 1e6)))
                .collect();
            rate = rate.series(Series::new(&flow.name, allowed, Style::Line));
            let rtts = flow
                .rows
                .iter()
                .filter_map(|r| r.rtt_s.map(|x| (r.time_s, x * 1e3)))
                .collect();
            rtt = rtt.series(Series::new(&flow.name, rtts, Style::Line));
        }
        write(&rate, &dir.join("allowed_rate.png"))?;
        write(&rtt, &dir.join("rtt.png"))?;
    }
    Ok(())
}

/// Paper 000's Figure 2: per GOP, when its first and its last packet
/// arrived.
pub(crate) fn write_gop_arrival(
    path: &Path,
    flow: &str,
    gops: &[GopArrival],
) -> anyhow::Result<()> {
    let first = gops
        .iter()
        .enumerate()
        .filter_map(|(i, g)| g.first_arrival_s.map(|t| (i as f64, t)))
        .collect();
    let last = gops
        .iter()
        .enumerate()
        .filter_map(|(i, g)| g.last_arrival_s.map(|t| (i as f64, t)))
        .collect();
    let chart = Chart::new(
        &format!("GOP arrival times: {flow}"),
        "GOP",
        "arrival time (s)",
    )
    .series(Series::new("first packet", first, Style::Points))
    .series(Series::new("last packet", last, Style::Points));
    write(&chart, path)
}

/// Paper 001's Figure 3: the playback buffer over time, in seconds of
/// media, with the samples where playback stood paused to rebuffer marked
/// on the time axis.
pub(crate) fn write_buffer(
    path: &Path,
    flow: &str,
    player: Player,
    samples: &[BufferSample],
) -> anyhow::Result<()> {
    let buffered = samples.iter().map(|s| (s.time_s, s.buffered_s)).collect();
    let paused: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.state == PlayerState::Rebuffering)
        .map(|s| (s.time_s, 0.0))
        .collect();
    let mut chart = Chart::new(
        &format!("Playback buffer: {flow} (player {})", player.as_str()),
        "time (s)",
        "media buffered (s)",
    )
    .series(Series::new("buffered", buffered, Style::Line));
    if !paused.is_empty() {
        chart = chart.series(Series::new("rebuffering", paused, Style::Points));
    }
    write(&chart, path)
}

fn write(chart: &Chart, path: &Path) -> anyhow::Result<()> {
    chart
        .write_png(path)
        .with_context(|| format!("cannot write plot {}", path.display()))
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
