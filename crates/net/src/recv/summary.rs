//! The receiver's statistics lines and its summary.

use fairstream_proto::time::Instant;
use serde::Serialize;

use super::{
    BufferRecvReport, FecReceiveStats, LostByType, RecvError, RecvFailure, RecvReport, RecvRun,
    VoiceRecvReport,
};
use crate::stats::{connection_figures, human_rate, ConnectionFigures};

/// One line of `--stats-json` from the receiver.
#[derive(Debug, Serialize)]
struct RecvStatsLine<'a> {
    time_s: f64,
    role: &'static str,
    connections: usize,
    /// Bits/s of RTP since the previous line.
    receive_rate_bps: f64,
    packets_received: u64,
    bytes_received: u64,
    frames_written: u64,
    bytes_written: u64,
    frames_lost: LostByType,
    buffer_s: f64,
    startup_delay_s: Option<f64>,
    stalls: u64,
    fec: FecReceiveStats,
    conns: &'a [ConnectionFigures],
    /// `cc=buffer`: what the controller saw so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    buffer: Option<BufferRecvReport>,
    /// `--wav`: the call so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    voice: Option<VoiceRecvReport>,
}

#[derive(Debug, Serialize)]
struct Summary<'a> {
    summary: &'a RecvReport,
}

impl RecvRun {
    /// Writes one statistics line (a failure is a warning).
    pub(super) fn stats_line(&mut self, now: Instant) {
        let conns = connection_figures(self.session.endpoint());
        let time_s = (now - self.start).as_secs_f64();
        // The rate since the previous line.
        let (last_time, last_bytes) = self.last_stats;
        let rate = (self.report.bytes_received - last_bytes) as f64 * 8.0
            / (now - last_time).as_secs_f64().max(1e-9);
        self.last_stats = (now, self.report.bytes_received);
        let buffer_s = self.player.buffer_s(now);
        let lost = self.assembler.lost;
        let buffer = self.layered.as_mut().map(|l| l.report(false));
        let controller = buffer.as_ref().map_or_else(String::new, |b| {
            format!(
                ", cc=buffer: held {:.2} s, frames by layer {:?}, underruns {}",
                b.occupancy_s, b.frames_complete, b.underruns
            )
        });
        let voice = self.voice.as_mut().map(|v| v.report(now));
        let line = match &voice {
            // A call's line: its frames and score instead of video's.
            Some(voice) => voice_line(time_s, conns.len(), rate, voice),
            None => format!(
                "{time_s:7.1}s recv: {} conns, {} packets, {} frames written, lost I {} P {} B {} ? {}, buffer {:.2} s, stalls {}, {}{controller}",
                conns.len(),
                self.report.packets_received,
                self.report.frames_written,
                lost.by_type.i,
                lost.by_type.p,
                lost.by_type.b,
                lost.unknown,
                buffer_s,
                self.player.stalls,
                human_rate(rate),
            ),
        };
        if let (None, Some(relay)) = (&voice, self.output.relay()) {
            let report = &self.report;
            relay.publish(|p| {
                p.upstream = conns.clone();
                p.upstream_packets = report.packets_received;
                p.upstream_bytes = report.bytes_received;
            });
        }
        // A call has no video player: no start-up delay, stalls or buffer.
        let video = voice.is_none();
        let record = RecvStatsLine {
            time_s,
            role: "recv",
            connections: conns.len(),
            receive_rate_bps: rate,
            packets_received: self.report.packets_received,
            bytes_received: self.report.bytes_received,
            frames_written: self.report.frames_written,
            bytes_written: self.report.bytes_written,
            frames_lost: lost,
            buffer_s,
            startup_delay_s: self.player.startup_delay_s.filter(|_| video),
            stalls: if video { self.player.stalls } else { 0 },
            fec: self.fec.stats,
            conns: &conns,
            buffer: buffer.filter(|_| video),
            voice,
        };
        let written = self.sink.report(&line, &record);
        self.stats_failures.check("recv", written);
    }

    /// Writes the rest of the stream out, and the summary; the report, or
    /// the stream's failure with it.
    pub(super) fn finish(mut self) -> Result<RecvReport, RecvError> {
        self.report.encrypted = self.protection.is_on();
        self.report.auth_failures = self.protection.stats.auth_failures;
        self.report.replays_dropped = self.protection.stats.replayed;
        let now = self.clock.now();
        let ready = self.fec.finish(now);
        self.assemble(now, ready)?;
        let tail = self.assembler.finish();
        self.write(now, tail)?;
        self.output.flush().map_err(RecvError::Output)?;
        if let Some(relay) = self.output.relay() {
            // The relay's sender drains what is left, then closes.
            relay.end();
        }
        self.player.tick(now, true);
        if let Some(voice) = self.voice.take() {
            let voice = voice.finish(now).map_err(RecvError::Output)?;
            self.report.frames_written = voice.frames_written;
            self.report.voice = Some(voice);
        }
        let session_stats = self.session.stats();
        let report = &mut self.report;
        report.peer = self.peer.map(|p| p.to_string());
        report.elapsed_s = self.clock.elapsed().as_secs_f64();
        report.frames_complete = self.assembler.frames_complete;
        report.frames_damaged = self.assembler.frames_damaged;
        report.frames_lost = self.assembler.lost;
        report.packets_missing = self.assembler.missing_packets();
        report.foreign_packets = self.assembler.foreign_packets;
        report.startup_delay_s = self.player.startup_delay_s;
        report.stalls = self.player.stalls;
        report.stall_time_s = self.player.stall_time.as_secs_f64();
        report.stall_max_s = self.player.stall_max.as_secs_f64();
        report.malformed_datagrams =
            self.session.endpoint().stats().malformed_dropped + session_stats.malformed;
        report.reorder_max_held = session_stats.reorder.max_held;
        report.reorder_max_delay_s = session_stats.reorder.max_delay.as_secs_f64();
        report.reorder_skipped = session_stats.reorder.skipped;
        report.arq_requested = session_stats.arq.requested;
        report.arq_recovered = session_stats.arq.recovered;
        report.arq_too_late = session_stats.arq.too_late;
        report.fec = self.fec.stats;
        report.buffer = self.layered.as_mut().map(|l| l.report(true));
        report.stats_write_errors = self.stats_failures.count();
        if self.failure.is_none() && report.frames_written == 0 {
            self.failure = Some(RecvFailure::NoFrames { peer: self.peer });
        }
        let call = report
            .voice
            .as_ref()
            .map_or_else(String::new, |v| format!(", call: {}", call_figures(v)));
        let line = format!(
            "recv done ({}): {} frames written ({} bytes), {} complete, {} damaged, {} packets{call}",
            report.stopped_by,
            report.frames_written,
            report.bytes_written,
            report.frames_complete,
            report.frames_damaged,
            report.packets_received,
        );
        let written = self.sink.report(
            &line,
            &Summary {
                summary: &self.report,
            },
        );
        self.stats_failures.check("recv", written);
        self.report.stats_write_errors = self.stats_failures.count();
        match self.failure {
            Some(failure) => Err(RecvError::Stream {
                failure,
                report: Box::new(self.report),
            }),
            None => Ok(self.report),
        }
    }
}

/// A voice call's figures for a human: frames, loss, delays, R and MOS.
fn call_figures(voice: &VoiceRecvReport) -> String {
    let Some(score) = &voice.score else {
        return format!(
            "{} probe packets, the call has not started",
            voice.probe_packets
        );
    };
    let ms = |s: Option<f64>| s.map_or_else(|| "-".to_owned(), |s| format!("{:.0} ms", s * 1e3));
    let number = |x: Option<f64>, digits: usize| {
        x.map_or_else(|| "-".to_owned(), |x| format!("{x:.digits$}"))
    };
    format!(
        "{} frames, {} lost, {} late, loss {:.2} %, burst ratio {:.2}, delay {}, playout {}, Ta {}, R {}, MOS {}",
        score.frames,
        score.lost,
        score.late,
        score.loss_percent,
        score.burst_ratio,
        ms(score.mean_network_delay_s),
        ms(score.playout_delay_s),
        ms(score.mouth_to_ear_s),
        number(score.r, 1),
        number(score.mos, 2),
    )
}

/// A statistics line of a voice call.
fn voice_line(time_s: f64, conns: usize, rate: f64, voice: &VoiceRecvReport) -> String {
    format!(
        "{time_s:7.1}s recv: {conns} conns, {}, voice {}: {}",
        human_rate(rate),
        voice.codec.as_deref().unwrap_or("?"),
        call_figures(voice),
    )
}
