//! Time series of a run: one row per flow and per link direction every
//! [`SERIES_INTERVAL`] of simulated time, for `--out` CSV files and plots.
//!
//! A row at time T describes the interval (T − 100 ms, T]: what arrived or
//! was sent in it, and the state (queue length, allowed rate, RTT) at T,
//! before any event due at T itself. Sampling adds no events to the engine,
//! so a run's `events` count does not depend on whether series are written.

use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;

/// The interval between two rows.
pub const SERIES_INTERVAL: Duration = super::flow::SERIES_BIN;

/// One row of a flow's series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSample {
    /// The end of the interval, seconds.
    pub time_s: f64,
    /// Payload bits that reached the receiver in the interval, per second.
    pub throughput_bps: f64,
    /// The rate the sender's congestion control allowed at `time_s`, bits/s:
    /// TFRC's X, CCID 2's and TCP's cwnd·s/RTT; empty for UDP sources.
    pub allowed_rate_bps: Option<f64>,
    /// The sender's smoothed RTT at `time_s`, seconds.
    pub rtt_s: Option<f64>,
    /// The loss event rate the sender used at `time_s` (TFRC).
    pub loss_event_rate: Option<f64>,
    /// A multi-connection flow's open connections at `time_s` (the
    /// fractional n of the aggregate controller).
    pub connections: Option<f64>,
    /// Data packets the sender handed to the network in the interval.
    pub packets_sent: u64,
    /// Data packets of the flow lost in the interval, by a queue or on a
    /// channel.
    pub packets_lost: u64,
    /// A `cc = "buffer"` flow: the media the receiver's playout buffer held
    /// at `time_s`, seconds (paper 004's temporal occupancy).
    pub buffer_s: Option<f64>,
    /// A `cc = "buffer"` flow: the share of the enhancement layer the
    /// sender schedules at `time_s`, δ + η(1 − δ) (paper 004 eq. 5).
    pub enhancement_share: Option<f64>,
    /// The downstream leg of a proxied flow: bytes the proxy's buffer held
    /// at `time_s` (paper 003's y).
    pub proxy_buffer_bytes: Option<f64>,
    /// A bonded flow (`via`): `throughput_bps` of each path, in the order
    /// of its `via`; empty for other flows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path_throughput_bps: Vec<f64>,
}

/// One row of a link direction's series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkSample {
    /// The end of the interval, seconds.
    pub time_s: f64,
    /// Packets waiting in the queue at `time_s`.
    pub queue_packets: u64,
    /// Bytes waiting in the queue at `time_s`.
    pub queue_bytes: u64,
    /// Wire bits that finished serialisation in the interval, per second.
    pub throughput_bps: f64,
    /// Packets the queue dropped in the interval.
    pub queue_drops: u64,
    /// Packets lost on the channel in the interval.
    pub channel_losses: u64,
    /// Packets the queue marked CE in the interval (RFC 3168 §5).
    pub ce_marked: u64,
}

/// A flow's rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSeries {
    /// The flow's name.
    pub name: String,
    /// A bonded flow's `via` nodes, one a path (the CSV names its
    /// per-path columns after them); empty for other flows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// Its rows, in time order.
    pub rows: Vec<FlowSample>,
}

/// A link direction's rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkSeries {
    /// The link's name (`a-b`).
    pub name: String,
    /// The direction (`a->b`).
    pub direction: String,
    /// Its rows, in time order.
    pub rows: Vec<LinkSample>,
}

/// Every series of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimeSeries {
    /// One per flow, in scenario order.
    pub flows: Vec<FlowSeries>,
    /// One per link direction, in scenario order, forward first.
    pub links: Vec<LinkSeries>,
}

/// An optional value as a CSV field: empty when absent.
fn field(value: Option<f64>) -> String {
    value.map_or_else(String::new, |v| v.to_string())
}

impl FlowSeries {
    /// Writes the rows as CSV with a header line; a bonded flow's rows end
    /// with one `throughput_bps_via_NODE` column per path.
    pub fn write_csv(&self, out: &mut impl Write) -> io::Result<()> {
        write!(
            out,
            "time_s,throughput_bps,allowed_rate_bps,rtt_s,loss_event_rate,connections,packets_sent,packets_lost,buffer_s,enhancement_share,proxy_buffer_bytes"
        )?;
        for node in &self.via {
            write!(out, ",throughput_bps_via_{node}")?;
        }
        writeln!(out)?;
        for row in &self.rows {
            write!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{}",
                row.time_s,
                row.throughput_bps,
                field(row.allowed_rate_bps),
                field(row.rtt_s),
                field(row.loss_event_rate),
                field(row.connections),
                row.packets_sent,
                row.packets_lost,
                field(row.buffer_s),
                field(row.enhancement_share),
                field(row.proxy_buffer_bytes)
            )?;
            for path in 0..self.via.len() {
                write!(
                    out,
                    ",{}",
                    row.path_throughput_bps.get(path).unwrap_or(&0.0)
                )?;
            }
            writeln!(out)?;
        }
        Ok(())
    }
}

impl LinkSeries {
    /// Writes the rows as CSV with a header line.
    pub fn write_csv(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(
            out,
            "time_s,queue_packets,queue_bytes,throughput_bps,queue_drops,channel_losses,ce_marked"
        )?;
        for row in &self.rows {
            writeln!(
                out,
                "{},{},{},{},{},{},{}",
                row.time_s,
                row.queue_packets,
                row.queue_bytes,
                row.throughput_bps,
                row.queue_drops,
                row.channel_losses,
                row.ce_marked
            )?;
        }
        Ok(())
    }
}

/// The cumulative counters of a link direction at the previous row.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LinkCounters {
    pub(super) wire_bytes: u64,
    pub(super) queue_drops: u64,
    pub(super) channel_losses: u64,
    pub(super) ce_marked: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_leave_missing_values_empty() {
        let series = FlowSeries {
            name: "f".into(),
            via: Vec::new(),
            rows: vec![FlowSample {
                time_s: 0.1,
                throughput_bps: 1.5e6,
                allowed_rate_bps: None,
                rtt_s: Some(0.05),
                loss_event_rate: None,
                connections: None,
                packets_sent: 12,
                packets_lost: 1,
                buffer_s: Some(1.5),
                enhancement_share: None,
                proxy_buffer_bytes: None,
                path_throughput_bps: Vec::new(),
            }],
        };
        let mut out = Vec::new();
        series.write_csv(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "time_s,throughput_bps,allowed_rate_bps,rtt_s,loss_event_rate,connections,packets_sent,packets_lost,buffer_s,enhancement_share,proxy_buffer_bytes\n0.1,1500000,,0.05,,,12,1,1.5,,\n"
        );
    }
}
