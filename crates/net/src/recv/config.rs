//! The receiver's configuration, errors and report.

use std::io;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;

use serde::Serialize;

use super::{BufferRecvReport, FecReceiveStats, LostByType, OutputSpec};
use crate::peer::PeerTimeout;
use crate::stats::StatsConfig;
use crate::url::{DccpUrl, UrlError};

/// What a [`Receiver`](super::Receiver) does.
#[derive(Clone, Debug)]
pub struct RecvConfig {
    /// Where to listen (`dccp://:PORT`).
    pub url: DccpUrl,
    /// Where the stream goes.
    pub output: OutputSpec,
    /// Stop after this long (closing the connections in order).
    pub duration: Option<Duration>,
    /// How long the sender may stay silent once its data began before the
    /// stream ends with [`RecvFailure::PeerSilent`] (the URL's
    /// `peer_timeout`).
    pub peer_timeout: PeerTimeout,
    /// The longest the Close handshake may take when the receiver ends the
    /// stream (a signal, the duration).
    pub close_timeout: Duration,
    /// The player model's prebuffer.
    pub prebuffer: Duration,
    /// The most connections held at once.
    pub max_connections: usize,
    /// Statistics.
    pub stats: StatsConfig,
    /// Where a copy of every access unit written goes, for an in-process
    /// consumer such as `fairstream demo` (`None`: nowhere).
    pub access_units: Option<mpsc::Sender<ReceivedAccessUnit>>,
}

/// An access unit as the receiver wrote it, for
/// [`RecvConfig::access_units`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceivedAccessUnit {
    /// The RTP timestamp of its packets (90 kHz, as the sender wrote it:
    /// `fairstream send` numbers frame i as i/fps seconds).
    pub rtp_timestamp: u32,
    /// Its NAL units, without start codes (damaged ones included).
    pub nal_units: Vec<Vec<u8>>,
}

impl RecvConfig {
    /// A configuration with the defaults (the URL's peer timeout, 2 s
    /// close timeout, 1 s prebuffer, 64 connections).
    pub fn new(url: DccpUrl, output: OutputSpec) -> RecvConfig {
        RecvConfig {
            peer_timeout: url.peer_timeout,
            url,
            output,
            duration: None,
            close_timeout: Duration::from_secs(2),
            prebuffer: Duration::from_secs(1),
            max_connections: 64,
            stats: StatsConfig::default(),
            access_units: None,
        }
    }
}

/// Why the receiver failed.
#[derive(Debug, thiserror::Error)]
pub enum RecvError {
    /// The URL is unusable.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// A socket call failed.
    #[error("{what}: {error}")]
    Socket {
        /// What was being done.
        what: String,
        /// The error.
        error: io::Error,
    },
    /// The output could not be written.
    #[error("output: {0}")]
    Output(io::Error),
    /// The statistics file could not be created.
    #[error("statistics: {0}")]
    Stats(io::Error),
    /// The stream failed; the report tells what arrived before.
    #[error("{failure}")]
    Stream {
        /// What went wrong.
        failure: RecvFailure,
        /// What the run received.
        report: Box<RecvReport>,
    },
}

impl RecvError {
    /// The run's report, when the stream ran and failed.
    pub fn report(&self) -> Option<&RecvReport> {
        match self {
            RecvError::Stream { report, .. } => Some(report),
            _ => None,
        }
    }
}

/// Why a stream that ran counts as failed (a non-zero exit status of
/// `fairstream recv`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecvFailure {
    /// The sender sent nothing for the peer timeout after its data began:
    /// it, or the path from it, is gone.
    #[error(
        "the sender at {peer} fell silent: nothing for {:.1} s (peer timeout {:.1} s); it or the path from it is gone",
        .silent.as_secs_f64(),
        .timeout.as_secs_f64()
    )]
    PeerSilent {
        /// The sender.
        peer: SocketAddr,
        /// How long it had been silent.
        silent: Duration,
        /// The timeout.
        timeout: Duration,
    },
    /// Every connection of the sender ended with a Reset rather than the
    /// Close handshake (RFC 4340 §8.3).
    #[error("the sender at {peer} aborted the stream (its connections were reset, not closed)")]
    Aborted {
        /// The sender.
        peer: SocketAddr,
    },
    /// The run ended without a single access unit written.
    #[error("no frames arrived{}", .peer.map_or_else(|| " (no sender connected)".to_owned(), |p| format!(" from the sender at {p}")))]
    NoFrames {
        /// The sender, if one connected.
        peer: Option<SocketAddr>,
    },
}

/// What a run received.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RecvReport {
    /// The sender served.
    pub peer: Option<String>,
    /// Seconds from start to exit.
    pub elapsed_s: f64,
    /// Why it stopped: `closed` (by the sender, in order), `aborted` (the
    /// sender reset its connections), `signal`, `duration` (the receiver
    /// closed), `peer-timeout` (the sender fell silent).
    pub stopped_by: String,
    /// RTP packets the session delivered.
    pub packets_received: u64,
    /// Bytes of those RTP packets.
    pub bytes_received: u64,
    /// Access units written.
    pub frames_written: u64,
    /// Bytes written (Annex B, start codes included; 0 for RTP output; NAL
    /// unit bytes for a relay).
    pub bytes_written: u64,
    /// Frames complete.
    pub frames_complete: u64,
    /// Frames with packets missing.
    pub frames_damaged: u64,
    /// Frames lost by type, as far as the receiver can tell.
    pub frames_lost: LostByType,
    /// RTP sequence numbers missing.
    pub packets_missing: u64,
    /// The player model's start-up delay, seconds.
    pub startup_delay_s: Option<f64>,
    /// Its stalls.
    pub stalls: u64,
    /// Its time stalled, seconds.
    pub stall_time_s: f64,
    /// Its longest stall, seconds.
    pub stall_max_s: f64,
    /// Datagrams from addresses other than the sender's, dropped.
    pub foreign_datagrams: u64,
    /// Datagrams the endpoint could not parse.
    pub malformed_datagrams: u64,
    /// Datagrams (RTP packets) that were not H.264 of the stream.
    pub foreign_packets: u64,
    /// The most connections the endpoint held at once.
    pub connections_max: usize,
    /// The largest total of the connections' internal tables seen.
    pub tables_max: usize,
    /// The most datagrams the reorder buffer held.
    pub reorder_max_held: usize,
    /// The longest a datagram waited in the reorder buffer for one before
    /// it, seconds (a bonded stream's paths differ in delay).
    pub reorder_max_delay_s: f64,
    /// Gaps the reorder buffer gave up.
    pub reorder_skipped: u64,
    /// Datagrams asked to be resent (`arq`; distinct sequence numbers).
    pub arq_requested: u64,
    /// Of those, the ones that came in time.
    pub arq_recovered: u64,
    /// Of those, the ones given up before they came.
    pub arq_too_late: u64,
    /// What FEC repaired (when the sender added parity).
    pub fec: FecReceiveStats,
    /// Statistics lines that could not be written (a warning, not an
    /// error).
    pub stats_write_errors: u64,
    /// Requests of other senders refused with Reset(Too Busy).
    pub busy_refusals: u64,
    /// Other addresses of a bonded sender that joined its stream (their
    /// Requests carried its session token).
    pub paths_joined: u64,
    /// Packets were encrypted and authenticated (`passphrase`).
    pub encrypted: bool,
    /// Packets that did not authenticate (forged, altered, or a sender
    /// with another passphrase or none) and were dropped.
    pub auth_failures: u64,
    /// Authenticated packets dropped as replays.
    pub replays_dropped: u64,
    /// Senders (addresses) whose handshake did not authenticate; the
    /// first few are named on stderr.
    pub refused_senders: u64,
    /// `cc=buffer`: what paper 004's controller saw and did (absent
    /// otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferRecvReport>,
    /// `--wav`: the voice call heard, its E-model score (`r`, `mos`) and
    /// the WAV file written (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voice: Option<super::VoiceRecvReport>,
}
