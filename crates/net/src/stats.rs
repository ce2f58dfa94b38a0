//! Live statistics: a human line on stderr every interval, and the same
//! figures in a file or on standard output (`--stats-json FILE`, `-` for
//! standard output): JSON lines, the last one the run's summary, or CSV
//! (`--stats-format csv`, in the manner of srt-live-transmit's `-pf csv`):
//! a header line, then one line an interval.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
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
    /// The statistics file (`-`: standard output), in `format`.
    pub json: Option<PathBuf>,
    /// The form of the statistics file.
    pub format: StatsFormat,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig {
            interval: Some(Duration::from_secs(1)),
            human: false,
            json: None,
            format: StatsFormat::Json,
        }
    }
}

impl StatsConfig {
    /// Whether the statistics go to standard output (the file is `-`).
    pub fn to_stdout(&self) -> bool {
        self.json.as_deref().is_some_and(is_stdout)
    }
}

/// Whether a file name means standard output.
fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The form of the statistics file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatsFormat {
    /// One JSON object a line; the last line is the run's summary.
    #[default]
    Json,
    /// A header line, then one line an interval; nested figures are
    /// flattened (`frames_lost.I`), and a list of connections is summed
    /// (its RTT the smallest, its p the largest). The summary is not a
    /// line of it.
    Csv,
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
            // Both halves may carry data (a receiver's NACKs go back on
            // the stream's connection): the p of the direction the stream
            // flows, the one with more data packets.
            let p = if stats.data_packets_received > stats.data_packets_sent {
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

/// Writes the human lines and the statistics file.
#[derive(Debug)]
pub struct StatsSink {
    human: bool,
    out: Option<StatsOut>,
    format: StatsFormat,
    /// The CSV columns, fixed by the first line.
    columns: Option<Vec<String>>,
}

/// Where the statistics file goes.
#[derive(Debug)]
enum StatsOut {
    File(BufWriter<File>),
    Stdout,
}

impl StatsSink {
    /// Opens the statistics file, if any (`-`: standard output).
    pub fn open(config: &StatsConfig) -> io::Result<StatsSink> {
        let out = match &config.json {
            Some(path) if is_stdout(path) => Some(StatsOut::Stdout),
            Some(path) => Some(StatsOut::File(BufWriter::new(File::create(path).map_err(
                |e| io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())),
            )?))),
            None => None,
        };
        Ok(StatsSink {
            human: config.human,
            out,
            format: config.format,
            columns: None,
        })
    }

    /// Writes one report: `line` to stderr (unless quiet), `record` as a
    /// line of the statistics file.
    pub fn report(&mut self, line: &str, record: &impl Serialize) -> io::Result<()> {
        if self.human {
            eprintln!("{line}");
        }
        let Some(out) = &mut self.out else {
            return Ok(());
        };
        let text = match self.format {
            StatsFormat::Json => {
                let mut text = serde_json::to_string(record).map_err(io::Error::other)?;
                text.push('\n');
                text
            }
            StatsFormat::Csv => {
                let value = serde_json::to_value(record).map_err(io::Error::other)?;
                if value.get("summary").is_some() {
                    return Ok(());
                }
                let mut cells = Vec::new();
                flatten("", &value, &mut cells);
                csv_lines(&mut self.columns, &cells)
            }
        };
        match out {
            StatsOut::File(file) => {
                file.write_all(text.as_bytes())?;
                file.flush()
            }
            StatsOut::Stdout => {
                let mut stdout = io::stdout().lock();
                stdout.write_all(text.as_bytes())?;
                stdout.flush()
            }
        }
    }
}

/// The scalar cells of `value`, named by their path (`frames_lost.I`).
/// A list of objects (the connections) becomes one cell a numeric field:
/// the smallest for an RTT, the largest for p, the sum otherwise.
fn flatten(prefix: &str, value: &serde_json::Value, cells: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                flatten(&format!("{prefix}{key}."), value, cells);
            }
        }
        Value::Array(items) => {
            let mut fields: Vec<(String, f64)> = Vec::new();
            for item in items {
                let Value::Object(map) = item else { continue };
                for (key, value) in map {
                    let Some(x) = value.as_f64() else { continue };
                    match fields.iter_mut().find(|(k, _)| k == key) {
                        Some((_, total)) if key.ends_with("rtt_s") => *total = total.min(x),
                        Some((_, total)) if key == "p" => *total = total.max(x),
                        Some((_, total)) => *total += x,
                        None => fields.push((key.clone(), x)),
                    }
                }
            }
            for (key, total) in fields {
                cells.push((format!("{prefix}{key}"), total.to_string()));
            }
        }
        Value::Null => cells.push((prefix.trim_end_matches('.').to_owned(), String::new())),
        Value::String(text) => {
            cells.push((prefix.trim_end_matches('.').to_owned(), csv_field(text)))
        }
        other => cells.push((prefix.trim_end_matches('.').to_owned(), other.to_string())),
    }
}

/// A CSV field (RFC 4180 quoting when needed).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// The CSV text for `cells`: the header first if `columns` is not yet
/// fixed, then the row in the header's order (a cell the header lacks is
/// left out, a column the row lacks is empty).
fn csv_lines(columns: &mut Option<Vec<String>>, cells: &[(String, String)]) -> String {
    let mut text = String::new();
    let columns = columns.get_or_insert_with(|| {
        // The time and the role first; the rest in name order (as
        // serde_json's map keeps them).
        let mut names: Vec<String> = cells.iter().map(|(name, _)| name.clone()).collect();
        names.sort_by_key(|name| match name.as_str() {
            "time_s" => 0,
            "role" => 1,
            _ => 2,
        });
        text.push_str(
            &names
                .iter()
                .map(|n| csv_field(n))
                .collect::<Vec<_>>()
                .join(","),
        );
        text.push('\n');
        names
    });
    let row: Vec<&str> = columns
        .iter()
        .map(|column| {
            cells
                .iter()
                .find(|(name, _)| name == column)
                .map_or("", |(_, value)| value.as_str())
        })
        .collect();
    text.push_str(&row.join(","));
    text.push('\n');
    text
}

/// Bits per second in a short human form; "n/a" when unknown (not a
/// number), never a negative zero.
pub fn human_rate(bps: f64) -> String {
    if bps.is_nan() {
        "n/a".to_owned()
    } else if bps >= 1e6 {
        format!("{:.2} Mbit/s", bps / 1e6)
    } else {
        // `+ 0.0` turns -0 (an empty sum) into 0; rounding cannot make a
        // rate below 0.5 kbit/s print as "-0".
        format!("{:.0} kbit/s", (bps / 1e3).max(0.0) + 0.0)
    }
}

/// A duration in seconds in a short human form ("850 µs", "42 ms",
/// "1.25 s", "2 min 05 s"); "n/a" when unknown.
pub fn human_duration(seconds: Option<f64>) -> String {
    match seconds {
        Some(s) if s.is_finite() && s >= 0.0 => {
            if s < 1e-3 {
                format!("{:.0} µs", s * 1e6)
            } else if s < 1.0 {
                format!("{:.0} ms", s * 1e3)
            } else if s < 60.0 {
                format!("{s:.2} s")
            } else {
                let whole = s.round() as u64;
                format!("{} min {:02} s", whole / 60, whole % 60)
            }
        }
        _ => "n/a".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_figures_have_no_negative_zero_nan_or_raw_seconds() {
        assert_eq!(human_rate(-0.0), "0 kbit/s");
        assert_eq!(human_rate([].iter().sum::<f64>()), "0 kbit/s");
        assert_eq!(human_rate(-0.2), "0 kbit/s");
        assert_eq!(human_rate(f64::NAN), "n/a");
        assert_eq!(human_rate(2.5e6), "2.50 Mbit/s");
        assert_eq!(human_rate(64_000.0), "64 kbit/s");
        assert_eq!(human_duration(Some(0.052_341_9)), "52 ms");
        assert_eq!(human_duration(Some(0.000_25)), "250 µs");
        assert_eq!(human_duration(Some(1.25)), "1.25 s");
        assert_eq!(human_duration(Some(125.0)), "2 min 05 s");
        assert_eq!(human_duration(Some(f64::NAN)), "n/a");
        assert_eq!(human_duration(None), "n/a");
    }

    #[derive(Serialize)]
    struct Line<'a> {
        time_s: f64,
        role: &'a str,
        rtt: Option<f64>,
        lost: Lost,
        conns: Vec<Conn>,
    }
    #[derive(Serialize)]
    struct Lost {
        #[serde(rename = "I")]
        i: u64,
    }
    #[derive(Serialize)]
    struct Conn {
        rtt_s: f64,
        p: f64,
        packets_sent: u64,
    }

    #[test]
    fn csv_has_one_header_then_a_line_an_interval_and_no_summary() {
        let mut columns = None;
        let mut text = String::new();
        for (time_s, rtt) in [(1.0, None), (2.0, Some(0.1))] {
            let line = Line {
                time_s,
                role: "send, test",
                rtt,
                lost: Lost { i: 2 },
                conns: vec![
                    Conn {
                        rtt_s: 0.2,
                        p: 0.01,
                        packets_sent: 5,
                    },
                    Conn {
                        rtt_s: 0.1,
                        p: 0.03,
                        packets_sent: 7,
                    },
                ],
            };
            let mut cells = Vec::new();
            flatten("", &serde_json::to_value(&line).unwrap(), &mut cells);
            text.push_str(&csv_lines(&mut columns, &cells));
        }
        assert_eq!(
            text,
            "time_s,role,conns.p,conns.packets_sent,conns.rtt_s,lost.I,rtt\n\
             1.0,\"send, test\",0.03,12,0.1,2,\n\
             2.0,\"send, test\",0.03,12,0.1,2,0.1\n"
        );
    }
}
