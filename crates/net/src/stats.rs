//! Live statistics: a human line on stderr every interval, and JSON lines
//! in a file (`--stats-json`), the last one the run's summary.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use fairstream_proto::conn::{ConnectionId, Endpoint};
use serde::Serialize;

/// Where statistics go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsConfig {
    /// The interval between two reports (`None`: no periodic reports).
    pub interval: Option<Duration>,
    /// Whether the human lines go to stderr.
    pub human: bool,
    /// The JSON lines file.
    pub json: Option<PathBuf>,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig {
            interval: Some(Duration::from_secs(1)),
            human: false,
            json: None,
        }
    }
}

/// One connection's figures, as either end sees them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConnectionFigures {
    /// This end's DCCP port.
    pub local_port: u16,
    /// The peer's DCCP port.
    pub remote_port: u16,
    /// Its state (RFC 4340 names).
    pub state: &'static str,
    /// The rate the sending CCID allows, bits/s (sender).
    pub allowed_rate_bps: Option<f64>,
    /// The receive rate the receiver reported, bits/s (TFRC sender).
    pub receive_rate_bps: Option<f64>,
    /// The smoothed RTT, seconds.
    pub rtt_s: Option<f64>,
    /// The loss event rate: as reported by the receiver (sender) or as
    /// computed (receiver).
    pub p: f64,
    /// Data packets sent.
    pub packets_sent: u64,
    /// Data packets received.
    pub packets_received: u64,
    /// Data packets lost: as this end's receiver counts them (receiver),
    /// or as a CCID 2 sender infers them from Ack Vectors (a TFRC sender
    /// knows only the loss event rate p).
    pub packets_lost: u64,
}

/// The figures of every connection of `endpoint`.
pub fn connection_figures(endpoint: &Endpoint) -> Vec<ConnectionFigures> {
    endpoint
        .connection_ids()
        .filter_map(|id: ConnectionId| {
            let conn = endpoint.connection(id)?;
            let stats = conn.stats();
            let sender = conn.tfrc_sender();
            let p = if stats.data_packets_received > 0 {
                stats.receive_loss_event_rate
            } else {
                stats.loss_event_rate
            };
            Some(ConnectionFigures {
                local_port: id.local_port,
                remote_port: id.remote_port,
                state: conn.state().name(),
                allowed_rate_bps: stats
                    .rate
                    .map(|r| r.bits_per_sec())
                    .filter(|r| r.is_finite()),
                receive_rate_bps: sender
                    .map(|s| s.receive_rate().bits_per_sec())
                    .filter(|r| r.is_finite()),
                rtt_s: stats.rtt.map(|r| r.as_secs_f64()),
                p,
                packets_sent: stats.data_packets_sent,
                packets_received: stats.data_packets_received,
                packets_lost: conn
                    .ccid2_sender()
                    .map_or(stats.data_losses, |c| c.stats().packets_lost),
            })
        })
        .collect()
}

/// Writes the JSON lines and the human lines.
#[derive(Debug)]
pub struct StatsSink {
    human: bool,
    json: Option<BufWriter<File>>,
}

impl StatsSink {
    /// Opens the JSON file, if any.
    pub fn open(config: &StatsConfig) -> io::Result<StatsSink> {
        let json = match &config.json {
            Some(path) => Some(BufWriter::new(File::create(path).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
            })?)),
            None => None,
        };
        Ok(StatsSink {
            human: config.human,
            json,
        })
    }

    /// Writes one report: `line` to stderr (unless quiet), `record` as a
    /// JSON line.
    pub fn report(&mut self, line: &str, record: &impl Serialize) -> io::Result<()> {
        if self.human {
            eprintln!("{line}");
        }
        if let Some(json) = &mut self.json {
            serde_json::to_writer(&mut *json, record).map_err(io::Error::other)?;
            json.write_all(b"\n")?;
            json.flush()?;
        }
        Ok(())
    }
}

/// Bits per second in a short human form.
pub fn human_rate(bps: f64) -> String {
    if bps >= 1e6 {
        format!("{:.2} Mbit/s", bps / 1e6)
    } else {
        format!("{:.0} kbit/s", bps / 1e3)
    }
}
