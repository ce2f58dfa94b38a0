//! The sender's statistics lines and its summary.

use fairstream_proto::time::Instant;
use serde::Serialize;

use super::{BufferSendReport, Run, SendReport};
use crate::stats::{connection_figures, human_duration, human_rate, ConnectionFigures};

/// One line of `--stats-json` from the sender.
#[derive(Debug, Serialize)]
struct SendStatsLine<'a> {
    time_s: f64,
    role: &'static str,
    connections: usize,
    target_bitrate_bps: Option<f64>,
    encoder_bitrate_bps: Option<u32>,
    frames_sent: u64,
    frames_late: u64,
    frames_dropped: u64,
    packets_sent: u64,
    bytes_sent: u64,
    session_queue: usize,
    conns: &'a [ConnectionFigures],
    /// `cc=buffer`: what the controller did so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    buffer: Option<BufferSendReport>,
}

/// The final line of `--stats-json`.
#[derive(Debug, Serialize)]
struct Summary<'a, T: Serialize> {
    summary: &'a T,
}

impl Run {
    /// Writes one statistics line (a failure is a warning).
    pub(super) fn stats_line(&mut self, now: Instant) {
        let conns = connection_figures(self.session.endpoint());
        let rate: f64 = conns.iter().filter_map(|c| c.allowed_rate_bps).sum();
        let rtt = conns
            .iter()
            .filter_map(|c| c.rtt_s)
            .fold(f64::NAN, f64::min);
        let p = conns.iter().map(|c| c.p).fold(0.0, f64::max);
        let time_s = (now - self.start).as_secs_f64();
        let buffer = self.layered.as_ref().map(|l| l.report());
        let controller = buffer.as_ref().map_or_else(String::new, |b| {
            format!(
                ", buffer: η {:.2} δ {:.3} enhancement kept {} of the last window",
                b.eta,
                b.delta,
                b.last_window_share
                    .map_or_else(|| "-".to_owned(), |s| format!("{:.0} %", 100.0 * s)),
            )
        });
        // cc=buffer runs on CCID 249 unpaced: its schedule sets the rate,
        // under the TCP-friendly cap in tfrc-capped mode.
        let allowed = match buffer.as_ref().map(|b| b.mode.as_str()) {
            Some("tfrc-capped") => format!(
                "{} (the cap)",
                human_rate(self.allowed_rate().map_or(f64::NAN, |r| r.bits_per_sec()))
            ),
            Some(_) => "unpaced (the schedule's)".to_owned(),
            None => human_rate(rate),
        };
        let line = format!(
            "{time_s:7.1}s send: {} conns, allowed {allowed}, rtt {}, p {:.4}, frames sent {} late {} dropped {}, {} pkts{controller}",
            self.session.open_connections(),
            human_duration(Some(rtt)),
            p,
            self.report.frames_sent,
            self.report.frames_late,
            self.report.frames_dropped,
            self.report.packets_sent,
        );
        if let Some(relay) = self.source.relay() {
            let report = &self.report;
            let queued = (self.pending.len() + self.session.queued()) as u64;
            relay.publish(|p| {
                p.downstream = conns.clone();
                p.downstream_packets = report.packets_sent;
                p.downstream_bytes = report.bytes_sent;
                p.downstream_queued = queued;
            });
        }
        let record = SendStatsLine {
            time_s,
            role: "send",
            connections: self.session.open_connections(),
            target_bitrate_bps: self.report.target_bitrate_bps,
            encoder_bitrate_bps: self.report.encoder_bitrate_bps,
            frames_sent: self.report.frames_sent,
            frames_late: self.report.frames_late,
            frames_dropped: self.report.frames_dropped,
            packets_sent: self.report.packets_sent,
            bytes_sent: self.report.bytes_sent,
            session_queue: self.session.queued(),
            conns: &conns,
            buffer,
        };
        let written = self.sink.report(&line, &record);
        self.stats_failures.check("send", written);
    }

    /// The report, after the summary line.
    pub(super) fn finish(mut self) -> SendReport {
        self.report.elapsed_s = self.clock.elapsed().as_secs_f64();
        self.report.connections_max = self.session.max_open_connections();
        self.report.connections_mean = self.session.mean_open_connections();
        self.report.stats_write_errors = self.stats_failures.count();
        let arq = self.session.arq_stats();
        self.report.arq_requested = arq.requested;
        self.report.arq_retransmitted = arq.retransmitted;
        self.report.arq_too_late = arq.too_late;
        self.report.dead_connections = arq.dead_connections;
        self.report.suspect_resent = arq.suspect_resent;
        self.report.encrypted = self.protection.is_on();
        self.report.packets_sealed = self.protection.stats.sealed;
        self.report.auth_failures = self.protection.stats.auth_failures;
        self.report.replays_dropped = self.protection.stats.replayed;
        self.report.buffer = self.layered.as_ref().map(|l| l.report());
        self.report.voice = self.voice.as_ref().map(|v| v.report());
        self.report.paths = std::mem::take(&mut self.paths);
        self.report.key_copies = self.session.key_copies();
        let written = self.sink.report(
                &format!(
                    "send done ({}): {} frames sent, {} late, {} dropped, {} packets, {} bytes in {:.2} s",
                    self.report.stopped_by,
                    self.report.frames_sent,
                    self.report.frames_late,
                    self.report.frames_dropped,
                    self.report.packets_sent,
                    self.report.bytes_sent,
                    self.report.elapsed_s
                ),
                &Summary {
                    summary: &self.report,
                },
            );
        self.stats_failures.check("send", written);
        self.report
    }
}
