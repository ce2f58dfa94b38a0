//! The relay: paper 003's proxy. It terminates the incoming connections
//! (a [`Receiver`], as `fairstream recv`), keeps the frames in a bounded
//! buffer ([`RelayBuffer`]) and sends them on under its own rate control
//! (a [`Sender`], as `fairstream send`), for example over a dedicated
//! fixed-rate bearer while TFRC stays on the shared wired part:
//!
//! ```text
//! sender ══TFRC══▶ [Receiver → RelayBuffer → Sender] ══the downstream URL's CCID══▶ recv
//! ```
//!
//! Paper 003 §3.2's upper bound is the downstream rule: "as long as there
//! are data in the proxy buffer, transmit them as fast as possible to the
//! client", so the downstream sender runs on demand, as fast as its CCID
//! allows; RTP timestamps are kept, so the client plays the stream at the
//! upstream sender's pace. The buffer's policy when full (drop the oldest
//! P and B frames first; DCCP leaves no way to push back) is described in
//! [`buffer`].
//!
//! The two halves run on their own threads with the send and receive
//! loops of [`crate::send`] and [`crate::recv`]; this module starts them,
//! reports the buffer and both sides' connections, and ends them in
//! order: when the upstream sender closes (or falls silent for the
//! listening URL's peer timeout, [`crate::peer`]), the downstream sender
//! drains the buffer and then closes its connections; when the downstream
//! side ends (its receiver closed, fell silent for the downstream URL's
//! peer timeout, or went away), the upstream side closes its connections
//! in order (CloseReq); on `stop` (Ctrl-C, SIGTERM) both stop at once,
//! each with the Close handshake. The relay fails (an error, a non-zero
//! exit status) when either side failed, as `fairstream send` and
//! `fairstream recv` would.

pub mod buffer;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde::Serialize;

pub use buffer::{BufferFigures, Popped, RelayBuffer, RelayFrame};

use crate::clock::Clock;
use crate::recv::{OutputSpec, Receiver, RecvConfig, RecvError, RecvFailure, RecvReport};
use crate::send::{Mode, SendConfig, SendError, SendReport, Sender, SourceSpec};
use crate::stats::{human_rate, ConnectionFigures, StatsConfig, StatsSink};
use crate::url::DccpUrl;
use crate::warn::StatsFailures;

/// The buffer's size when not configured: 8 MiB, about 65 s of a 1 Mbit/s
/// stream, or 17 minutes of paper 003's 64 kbit/s bearer.
pub const DEFAULT_BUFFER_BYTES: u64 = 8 << 20;
/// The smallest buffer accepted: one large frame must fit.
pub const MIN_BUFFER_BYTES: u64 = 64 << 10;
/// How often the halves publish their figures when the relay writes no
/// periodic statistics.
const PUBLISH: Duration = Duration::from_millis(250);
/// The longest the relay's own loop sleeps without looking at `stop`.
const POLL: Duration = Duration::from_millis(20);

/// What a [`Relay`] does.
#[derive(Clone, Debug)]
pub struct RelayConfig {
    /// Where the upstream sender connects (`dccp://:PORT`; listener keys
    /// only).
    pub listen: DccpUrl,
    /// Where the stream goes on, and the downstream transport (any
    /// sender URL: `cc`, `conns`, `controller`, …).
    pub downstream: DccpUrl,
    /// The buffer's capacity, bytes of NAL units (at least
    /// [`MIN_BUFFER_BYTES`]).
    pub buffer_bytes: u64,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Give up when no downstream connection opened within this.
    pub handshake_timeout: Duration,
    /// The longest the downstream Close handshake may take.
    pub close_timeout: Duration,
    /// Statistics: the relay's own lines (the halves write none).
    pub stats: StatsConfig,
}

impl RelayConfig {
    /// A configuration with the defaults: an 8 MiB buffer
    /// ([`DEFAULT_BUFFER_BYTES`]), 5 s handshake timeout, 2 s close
    /// timeout; each side's peer timeout is its URL's (`peer_timeout`).
    pub fn new(listen: DccpUrl, downstream: DccpUrl) -> RelayConfig {
        RelayConfig {
            listen,
            downstream,
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            duration: None,
            handshake_timeout: Duration::from_secs(5),
            close_timeout: Duration::from_secs(2),
            stats: StatsConfig::default(),
        }
    }
}

/// Why the relay failed.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// A bad setting.
    #[error("{0}")]
    Config(String),
    /// The upstream (receiving) side failed.
    #[error("upstream side ({url}): {error}")]
    Upstream {
        /// The listening URL.
        url: String,
        /// What happened.
        error: RecvError,
    },
    /// The upstream stream failed (the sender fell silent or aborted, or
    /// no frame came) after the relay ran; the report tells what it did.
    #[error("upstream side ({url}): {failure}")]
    UpstreamStream {
        /// The listening URL.
        url: String,
        /// What went wrong.
        failure: RecvFailure,
        /// What the relay did.
        report: Box<RelayReport>,
    },
    /// The downstream (sending) side failed.
    #[error("downstream side ({url}): {error}")]
    Downstream {
        /// The downstream URL.
        url: String,
        /// What happened.
        error: SendError,
    },
    /// A half's thread could not start or panicked (a bug).
    #[error("relay thread: {0}")]
    Thread(String),
    /// The statistics file could not be created.
    #[error("statistics: {0}")]
    Stats(std::io::Error),
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RelayReport {
    /// Seconds from start to exit.
    pub elapsed_s: f64,
    /// The buffer's occupancy at the end, its maxima and its drops.
    pub buffer: BufferFigures,
    /// The upstream side, as `fairstream recv` reports it.
    pub upstream: RecvReport,
    /// The downstream side, as `fairstream send` reports it.
    pub downstream: SendReport,
    /// The relay's statistics lines that could not be written (a warning,
    /// not an error).
    pub stats_write_errors: u64,
}

/// One line of `--stats-json` from the relay.
#[derive(Debug, Serialize)]
struct RelayStatsLine<'a> {
    time_s: f64,
    role: &'static str,
    buffer: BufferFigures,
    /// Packets waiting inside the downstream sender, beyond the buffer.
    downstream_queued_packets: u64,
    upstream_packets: u64,
    upstream_bytes: u64,
    /// Bits/s of RTP received since the previous line.
    upstream_rate_bps: f64,
    downstream_packets: u64,
    downstream_bytes: u64,
    /// Bits/s of RTP sent since the previous line.
    downstream_rate_bps: f64,
    upstream_conns: &'a [ConnectionFigures],
    downstream_conns: &'a [ConnectionFigures],
}

#[derive(Debug, Serialize)]
struct Summary<'a> {
    summary: &'a RelayReport,
}

/// A relay with its listening socket bound and its downstream socket
/// connected.
#[derive(Debug)]
pub struct Relay {
    config: RelayConfig,
    buffer: RelayBuffer,
    receiver: Receiver,
    sender: Sender,
}

impl Relay {
    /// Binds the listening URL's address and connects a socket to the
    /// downstream URL's.
    pub fn bind(config: RelayConfig) -> Result<Relay, RelayError> {
        if config.buffer_bytes < MIN_BUFFER_BYTES {
            return Err(RelayError::Config(format!(
                "a relay buffer of {} bytes is too small (at least {MIN_BUFFER_BYTES})",
                config.buffer_bytes
            )));
        }
        let upstream_error = |error| RelayError::Upstream {
            url: config.listen.to_string(),
            error,
        };
        let downstream_error = |error| RelayError::Downstream {
            url: config.downstream.to_string(),
            error,
        };
        // The URLs' own checks, with the side named.
        config
            .listen
            .listen_address()
            .map_err(|e| upstream_error(e.into()))?;
        config
            .downstream
            .target()
            .map_err(|e| downstream_error(e.into()))?;
        let buffer = RelayBuffer::new(config.buffer_bytes);
        // The halves only publish their figures; the relay writes.
        let halves = StatsConfig {
            interval: Some(config.stats.interval.map_or(PUBLISH, |i| i.min(PUBLISH))),
            human: false,
            json: None,
            ..StatsConfig::default()
        };
        let mut recv = RecvConfig::new(config.listen.clone(), OutputSpec::Relay(buffer.clone()));
        recv.duration = config.duration;
        recv.close_timeout = config.close_timeout;
        recv.stats = halves.clone();
        let receiver = Receiver::bind(recv).map_err(upstream_error)?;
        let mut send =
            SendConfig::new(SourceSpec::Relay(buffer.clone()), config.downstream.clone());
        send.mode = Mode::OnDemand;
        send.duration = config.duration;
        send.handshake_timeout = config.handshake_timeout;
        send.close_timeout = config.close_timeout;
        send.stats = halves;
        let sender = Sender::connect(send).map_err(downstream_error)?;
        Ok(Relay {
            config,
            buffer,
            receiver,
            sender,
        })
    }

    /// The address the upstream sender connects to.
    pub fn local_addr(&self) -> SocketAddr {
        self.receiver.local_addr()
    }

    /// The relay's buffer (for its figures while it runs).
    pub fn buffer(&self) -> RelayBuffer {
        self.buffer.clone()
    }

    /// Relays until the upstream sender closes and the buffer is drained
    /// downstream, `stop` is set, or the duration passes.
    pub fn run(self, stop: &AtomicBool) -> Result<RelayReport, RelayError> {
        let Relay {
            config,
            buffer,
            receiver,
            sender,
        } = self;
        let mut sink = StatsSink::open(&config.stats).map_err(RelayError::Stats)?;
        let mut failures = StatsFailures::default();
        let clock = Clock::new();
        let recv_stop = Arc::new(AtomicBool::new(false));
        let send_stop = Arc::new(AtomicBool::new(false));
        let upstream = spawn("fairstream-relay-up", &recv_stop, move |s| receiver.run(s))?;
        let downstream = match spawn("fairstream-relay-down", &send_stop, move |s| sender.run(s)) {
            Ok(handle) => handle,
            Err(error) => {
                recv_stop.store(true, Ordering::Relaxed);
                let _ = upstream.join();
                return Err(error);
            }
        };
        let interval = config.stats.interval;
        let mut next_stats = interval.map(|i| clock.now() + i);
        let mut last = LastLine {
            at: clock.now(),
            upstream_bytes: 0,
            downstream_bytes: 0,
        };
        loop {
            if stop.load(Ordering::Relaxed) {
                recv_stop.store(true, Ordering::Relaxed);
                send_stop.store(true, Ordering::Relaxed);
            }
            if upstream.is_finished() {
                // Whatever ended it, nothing more comes: drain and close.
                buffer.end();
            }
            if downstream.is_finished() {
                // Nowhere to send: stop taking frames in.
                recv_stop.store(true, Ordering::Relaxed);
                if upstream.is_finished() {
                    break;
                }
            }
            let now = clock.now();
            if let Some(at) = next_stats.filter(|t| *t <= now) {
                last = stats_line(&mut sink, &mut failures, &clock, &buffer, last);
                next_stats = interval.map(|i| (at + i).max(now));
            }
            thread::sleep(POLL);
        }
        if interval.is_some() {
            // The state at the end, beside the summary.
            stats_line(&mut sink, &mut failures, &clock, &buffer, last);
        }
        let received = join(upstream)?;
        let sent = join(downstream)?;
        // A stream that failed upstream still has its report; the relay's
        // summary is written before the failure is.
        let (upstream, upstream_failure) = match received {
            Ok(report) => (report, None),
            Err(RecvError::Stream { failure, report }) => (*report, Some(failure)),
            Err(error) => {
                return Err(RelayError::Upstream {
                    url: config.listen.to_string(),
                    error,
                })
            }
        };
        let report = RelayReport {
            elapsed_s: clock.elapsed().as_secs_f64(),
            buffer: buffer.figures(),
            upstream,
            downstream: sent.map_err(|error| RelayError::Downstream {
                url: config.downstream.to_string(),
                error,
            })?,
            stats_write_errors: 0,
        };
        let line = format!(
            "relay done: {} frames in, {} out, {} dropped; buffer max {:.1} kB {} frames; upstream {} ({} frames), downstream {} ({} frames)",
            report.buffer.frames_in,
            report.buffer.frames_out,
            report.buffer.frames_dropped.i + report.buffer.frames_dropped.p + report.buffer.frames_dropped.b,
            report.buffer.max_bytes as f64 / 1e3,
            report.buffer.max_frames,
            report.upstream.stopped_by,
            report.upstream.frames_written,
            report.downstream.stopped_by,
            report.downstream.frames_sent,
        );
        let mut report = report;
        report.stats_write_errors = failures.count();
        failures.check("relay", sink.report(&line, &Summary { summary: &report }));
        match upstream_failure {
            Some(failure) => Err(RelayError::UpstreamStream {
                url: config.listen.to_string(),
                failure,
                report: Box::new(report),
            }),
            None => Ok(report),
        }
    }
}

/// Binds and runs (see [`Relay`]).
pub fn run(config: RelayConfig, stop: Arc<AtomicBool>) -> Result<RelayReport, RelayError> {
    Relay::bind(config)?.run(&stop)
}

/// When the previous statistics line was written, and the bytes then.
#[derive(Clone, Copy, Debug)]
struct LastLine {
    at: fairstream_proto::time::Instant,
    upstream_bytes: u64,
    downstream_bytes: u64,
}

/// Writes one statistics line from the buffer and what the halves
/// published.
fn stats_line(
    sink: &mut StatsSink,
    failures: &mut StatsFailures,
    clock: &Clock,
    buffer: &RelayBuffer,
    last: LastLine,
) -> LastLine {
    let now = clock.now();
    let published = buffer.published();
    let seconds = (now - last.at).as_secs_f64().max(1e-9);
    let rate = |bytes: u64, before: u64| bytes.saturating_sub(before) as f64 * 8.0 / seconds;
    let figures = buffer.figures();
    let record = RelayStatsLine {
        time_s: clock.elapsed().as_secs_f64(),
        role: "relay",
        buffer: figures,
        downstream_queued_packets: published.downstream_queued,
        upstream_packets: published.upstream_packets,
        upstream_bytes: published.upstream_bytes,
        upstream_rate_bps: rate(published.upstream_bytes, last.upstream_bytes),
        downstream_packets: published.downstream_packets,
        downstream_bytes: published.downstream_bytes,
        downstream_rate_bps: rate(published.downstream_bytes, last.downstream_bytes),
        upstream_conns: &published.upstream,
        downstream_conns: &published.downstream,
    };
    let allowed: f64 = published
        .downstream
        .iter()
        .filter_map(|c| c.allowed_rate_bps)
        .sum();
    let dropped = figures.frames_dropped;
    let line = format!(
        "{:7.1}s relay: buffer {:.1} kB {} frames {} pkts (max {:.1} kB), dropped {} frames; in {} over {} conns, out {} over {} conns (allowed {})",
        record.time_s,
        figures.bytes as f64 / 1e3,
        figures.frames,
        figures.packets,
        figures.max_bytes as f64 / 1e3,
        dropped.i + dropped.p + dropped.b,
        human_rate(record.upstream_rate_bps),
        published.upstream.len(),
        human_rate(record.downstream_rate_bps),
        published.downstream.len(),
        human_rate(allowed),
    );
    failures.check("relay", sink.report(&line, &record));
    LastLine {
        at: now,
        upstream_bytes: published.upstream_bytes,
        downstream_bytes: published.downstream_bytes,
    }
}

fn spawn<T: Send + 'static>(
    name: &str,
    stop: &Arc<AtomicBool>,
    body: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<JoinHandle<T>, RelayError> {
    let stop = Arc::clone(stop);
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || body(&stop))
        .map_err(|e| RelayError::Thread(format!("cannot start {name}: {e}")))
}

fn join<T>(handle: JoinHandle<T>) -> Result<T, RelayError> {
    handle
        .join()
        .map_err(|_| RelayError::Thread("a relay half panicked".into()))
}
