//! The sender's configuration, errors and report.

use std::io;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;

use fairstream_media::temporal::TemporalLayers;
use serde::Serialize;

use fairstream_proto::cc::buffer::StopReason;

use super::{BufferSendReport, SourceSpec};
use crate::peer::PeerTimeout;
use crate::stats::StatsConfig;
use crate::url::{DccpUrl, UrlError};

/// How frames are released.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Frame i at i/fps; frames that would be late are dropped.
    Live,
    /// As fast as the connections allow; nothing is dropped.
    OnDemand,
}

/// What a [`Sender`](super::Sender) does.
#[derive(Clone, Debug)]
pub struct SendConfig {
    /// The frames.
    pub source: SourceSpec,
    /// Where to, and the transport's options.
    pub url: DccpUrl,
    /// Live or on demand.
    pub mode: Mode,
    /// Repeat a file source.
    pub looped: bool,
    /// Frames per second.
    pub fps: f64,
    /// Live mode: a frame's deadline is its release time plus this.
    pub startup_delay: Duration,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Give up when no connection opened within this.
    pub handshake_timeout: Duration,
    /// The longest the Close handshake may take at the end.
    pub close_timeout: Duration,
    /// How long the receiver may leave what was sent unanswered before the
    /// stream ends with [`SendError::PeerSilent`] (the URL's
    /// `peer_timeout`).
    pub peer_timeout: PeerTimeout,
    /// Statistics.
    pub stats: StatsConfig,
    /// Where a copy of every frame taken from the source goes, for an
    /// in-process consumer such as `fairstream demo` (`None`: nowhere).
    pub frames: Option<mpsc::Sender<SourceFrame>>,
    /// Record the departure of up to this many datagrams in
    /// [`SendReport::departures`] (for benchmarks of the pacing). Default 0.
    pub record_departures: usize,
    /// The temporal layers generated content is encoded in (OpenH264's
    /// hierarchical P, `fairstream_media::temporal`), or a file's or a
    /// pipe's frames were (their ids then follow the dyadic pattern from
    /// each IDR, checked against which frames are references); `cc=buffer`
    /// sheds the upper ones. Default one layer.
    pub temporal_layers: TemporalLayers,
    /// Generated content: also write every frame encoded, all its layers,
    /// to this H.264 Annex B file (a stored clip to send again). Default
    /// none.
    pub save: Option<std::path::PathBuf>,
}

/// A frame as the sender took it from its source, for
/// [`SendConfig::frames`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFrame {
    /// Its number: 0 for the first frame (its RTP timestamp is index/fps
    /// seconds).
    pub index: u64,
    /// Its NAL units, without start codes.
    pub nal_units: Vec<Vec<u8>>,
}

impl SendConfig {
    /// A configuration with the defaults (live, 25 fps, 2 s start-up
    /// delay, 5 s handshake timeout, 2 s close timeout, the URL's peer
    /// timeout).
    pub fn new(source: SourceSpec, url: DccpUrl) -> SendConfig {
        SendConfig {
            peer_timeout: url.peer_timeout,
            source,
            url,
            mode: Mode::Live,
            looped: false,
            fps: 25.0,
            startup_delay: Duration::from_secs(2),
            duration: None,
            handshake_timeout: Duration::from_secs(5),
            close_timeout: Duration::from_secs(2),
            stats: StatsConfig::default(),
            frames: None,
            record_departures: 0,
            temporal_layers: TemporalLayers::ONE,
            save: None,
        }
    }
}

impl SendConfig {
    /// Hands a copy of a source frame to [`SendConfig::frames`], if set.
    pub(super) fn copy_frame(&self, index: u64, nal_units: &[Vec<u8>]) {
        if let Some(tap) = &self.frames {
            // A consumer that went away wants no more.
            let _ = tap.send(SourceFrame {
                index,
                nal_units: nal_units.to_vec(),
            });
        }
    }
}

/// Why the sender failed.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The URL is unusable.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// A bad setting.
    #[error("{0}")]
    Config(String),
    /// The source failed.
    #[error("{source_name}: {reason}")]
    Source {
        /// Which source.
        source_name: String,
        /// What happened.
        reason: String,
    },
    /// A socket call failed.
    #[error("{what}: {error}")]
    Socket {
        /// What was being done.
        what: String,
        /// The error.
        error: io::Error,
    },
    /// ICMP port unreachable during the handshake.
    #[error("no DCCP listener at {0} (connection refused)")]
    NoListener(SocketAddr),
    /// The receiver's Response did not authenticate with this passphrase.
    #[error(
        "the receiver at {0} uses another passphrase: its answer does not authenticate with ours"
    )]
    WrongPassphrase(SocketAddr),
    /// This sender has a passphrase; the receiver has none.
    #[error(
        "the receiver at {0} has no passphrase: not streaming in clear (give it the same passphrase, or drop ours)"
    )]
    ReceiverPlain(SocketAddr),
    /// The receiver has a passphrase; this sender has none.
    #[error("the receiver at {0} requires a passphrase (add passphrase=… to the URL, or --passphrase-file)")]
    ReceiverProtected(SocketAddr),
    /// No connection opened in time.
    #[error("handshake with {target} timed out after {} s", .after.as_secs_f64())]
    HandshakeTimeout {
        /// The receiver.
        target: SocketAddr,
        /// The timeout.
        after: Duration,
    },
    /// The receiver disappeared while streaming: an ICMP error said so,
    /// and no answer came for the shortened peer timeout after it.
    #[error(
        "the receiver at {target} went away: connection refused, and no answer for {:.1} s after",
        .silent.as_secs_f64()
    )]
    PeerGone {
        /// The receiver.
        target: SocketAddr,
        /// How long it had been silent.
        silent: Duration,
    },
    /// The receiver answered nothing for the peer timeout: it, or the path
    /// to it, is gone (no ICMP error said so).
    #[error(
        "the receiver at {target} fell silent: no answer for {:.1} s (peer timeout {:.1} s); it or the path to it is gone",
        .silent.as_secs_f64(),
        .timeout.as_secs_f64()
    )]
    PeerSilent {
        /// The receiver.
        target: SocketAddr,
        /// How long it had been silent.
        silent: Duration,
        /// The timeout.
        timeout: Duration,
    },
    /// The receiver refused the connection with Reset(Too Busy) (RFC 4340
    /// §5.6): it serves another sender.
    #[error("the receiver at {0} is busy with another sender (it refused the connection: DCCP Reset \"too busy\")")]
    ReceiverBusy(SocketAddr),
    /// The Close handshake at the end went unanswered: the receiver may
    /// have missed the end of the stream.
    #[error(
        "the receiver at {target} did not answer the Close within {:.1} s; it may have missed the end of the stream",
        .after.as_secs_f64()
    )]
    CloseUnanswered {
        /// The receiver.
        target: SocketAddr,
        /// How long the sender waited.
        after: Duration,
    },
    /// The statistics file could not be created.
    #[error("statistics: {0}")]
    Stats(io::Error),
    /// `cc=buffer`: paper 004's controller cut the stream off, the base
    /// layer no longer fitting the path (paper 004 §2.2: "the stream is
    /// simply cut off").
    #[error("cc=buffer cut the stream off: {0}")]
    BufferStopped(StopReason),
}

pub(super) fn socket_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> SendError {
    let what = what.into();
    move |error| SendError::Socket { what, error }
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SendReport {
    /// The receiver.
    pub target: String,
    /// Seconds from start to exit.
    pub elapsed_s: f64,
    /// Why it stopped: `end` (of the source), `signal`, `duration`,
    /// `receiver-closed` (the receiver closed the connections) or `error`.
    pub stopped_by: String,
    /// Frames taken from the source.
    pub frames_read: u64,
    /// Frames whose first packet was handed to the session.
    pub frames_sent: u64,
    /// Frames (or the rest of frames) dropped as late (live mode).
    pub frames_late: u64,
    /// Frames dropped for another reason (a packet the session refused).
    pub frames_dropped: u64,
    /// RTP packets handed to the session.
    pub packets_sent: u64,
    /// Bytes of those RTP packets.
    pub bytes_sent: u64,
    /// The most connections open at once.
    pub connections_max: usize,
    /// The mean number of open connections over the RTT samples.
    pub connections_mean: Option<f64>,
    /// The last target bitrate the session published, bits/s.
    pub target_bitrate_bps: Option<f64>,
    /// The encoder's last bitrate (generated source), bits/s.
    pub encoder_bitrate_bps: Option<u32>,
    /// Bitrate changes the encoder refused.
    pub encoder_errors: u64,
    /// Connections lost (handshake timeout or reset).
    pub connections_lost: u64,
    /// Every connection closed with the Close handshake in time.
    pub closed_cleanly: bool,
    /// ICMP errors (port unreachable) reported by the socket once the
    /// stream had begun. Each is a hint that shortens the peer timeout,
    /// never a verdict: anyone can forge one.
    pub icmp_refused: u64,
    /// (nanoseconds since the sender started, bytes) of the first
    /// [`SendConfig::record_departures`] datagrams the socket took, data
    /// and control alike, each stamped when its send call returned. Not
    /// in the JSON summary.
    #[serde(skip)]
    pub departures: Vec<(u64, usize)>,
    /// FEC parity packets handed to the session (`fec=n,k`).
    pub fec_parity_sent: u64,
    /// Bytes of those parity packets.
    pub fec_parity_bytes: u64,
    /// Parity packets the session refused.
    pub fec_parity_dropped: u64,
    /// The share of the bytes sent that was parity.
    pub fec_overhead: Option<f64>,
    /// Sequence numbers the receiver asked to be resent (`arq`; with
    /// repeats).
    pub arq_requested: u64,
    /// Datagrams resent after a request.
    pub arq_retransmitted: u64,
    /// Requests refused because the datagram could no longer arrive before
    /// its deadline.
    pub arq_too_late: u64,
    /// Connections that answered nothing for a few RTTs and were replaced;
    /// what they held went to the others.
    pub dead_connections: u64,
    /// Statistics lines that could not be written (a warning, not an
    /// error).
    pub stats_write_errors: u64,
    /// Packets were encrypted and authenticated (`passphrase`).
    pub encrypted: bool,
    /// Packets sealed.
    pub packets_sealed: u64,
    /// Packets from the receiver's address that did not authenticate
    /// (forged, altered, or another passphrase) and were dropped.
    pub auth_failures: u64,
    /// Authenticated packets dropped as replays.
    pub replays_dropped: u64,
    /// `cc=buffer`: what paper 004's controller did (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferSendReport>,
    /// `voice:`: what the voice sender did (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voice: Option<super::VoiceSendReport>,
    /// `paths=`: what each path of a bonded stream carried (absent with
    /// one path).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathReport>,
    /// `duplicate=key`: packets of I frames sent a second time, on another
    /// path.
    pub key_copies: u64,
    /// `paths=`: datagrams resent on the other paths because their
    /// connection went silent for three RTTs while another path answered
    /// (before it could be found dead; duplicates if it was only slow).
    pub suspect_resent: u64,
}

/// What one path of a bonded stream did (issue 19).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PathReport {
    /// Where it sent.
    pub target: String,
    /// Its socket's local address.
    pub local: String,
    /// Datagrams its socket took, data and control.
    pub packets_sent: u64,
    /// Bytes of those datagrams.
    pub bytes_sent: u64,
    /// Bytes of media data among them (DCCP payload, retransmissions
    /// included).
    pub payload_bytes: u64,
    /// Times it went down (no open connection left after it had one).
    pub down: u64,
    /// Times it came back.
    pub up: u64,
    /// When it went down, seconds after the sender started (the first 16
    /// times).
    pub down_at_s: Vec<f64>,
    /// When it came back, seconds after the sender started (the first 16).
    pub up_at_s: Vec<f64>,
    /// Socket errors on it (unreachable network, ICMP), each a hint: only
    /// its silence takes it down.
    pub errors: u64,
}
