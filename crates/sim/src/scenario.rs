//! Scenario files: the TOML description of a simulated network and its traffic.
//!
//! A scenario is parsed in two steps ("parse, don't validate"): the text is
//! deserialised strictly (`deny_unknown_fields`) into raw structs that keep
//! the source span of every value, and the raw structs are then checked and
//! turned into a [`Scenario`] whose values carry their units in their types
//! ([`Rate`], [`Duration`], [`Bytes`]). Every error names the file, the line
//! and column, and the key ([`ScenarioError`]); bad input never panics and is
//! never replaced by a default.
//!
//! ```toml
//! [run]
//! duration = "60s"          # required, with a unit
//! seed = 1                  # optional, default 1
//! [[node]]
//! name = "a"
//! [[node]]
//! name = "b"
//! [[link]]
//! between = ["a", "b"]      # full duplex: each direction has its own queue
//! rate = "5mbit"
//! delay = "20ms"
//! overhead = 28             # optional header bytes added to every packet
//! queue = { kind = "droptail", packets = 50 }
//! loss = { kind = "bernoulli", p = 0.02 }
//! [[flow]]
//! name = "video"
//! from = "a"
//! to = "b"
//! start = "0s"              # optional
//! transport = { cc = "tfrc" }
//! ```
//!
//! Transports and their keys (all but `cc` optional unless marked):
//!
//! | `cc` | keys |
//! |---|---|
//! | `"tfrc"`, `"tfrc-sp"`, `"ccid2"` (DCCP CCID 3, 4, 2) | `packet_size` (bytes), `rate` (the application's offered rate; saturating without it); for several connections `conns`, `controller` (`"fixed"`, `"adaptive"`, `"multfrc"`, `"e-multfrc"`, `"aggregate"`; absent: `"fixed"` with `conns`, else `"adaptive"`), `policy` (`"earliest"`, `"gop-interleave"`), `start_offset`, `rtt_min_lifetime`, and for the RTT-driven controllers `gamma`, `queue_packets`, `startup` |
//! | `"tcp-newreno"` | `mss`, `delayed_ack` (bool), `sack` (bool, RFC 2018 / RFC 6675; default `false`), `hystart` (bool, RFC 9406; default `false`), `min_rto`, `ecn` (bool, RFC 3168 §6.1), `max_window` (segments) |
//! | `"tcp-cubic"` (RFC 9438) | the `"tcp-newreno"` keys, with `sack` and `hystart` `true` by default |
//! | `"web"` (many short TCP transfers, [`WebTraffic`]) | `sessions`, `size_mean`, `size_shape`, `think`, `tcp` (`"newreno"`, the default, or `"cubic"`), and the TCP keys with that TCP's defaults |
//! | `"cbr"` | `rate` (required), `packet_size` |
//! | `"onoff"` | `rate`, `on`, `off`, `packet_size` (all required) |
//!
//! Queues and their keys (`queue = { kind = ..., ... }`; all but `kind` and
//! those marked required optional; defaults after `=`):
//!
//! | `kind` | keys |
//! |---|---|
//! | `"droptail"` | `packets` or `bytes` (one required) |
//! | `"red"` | `min_th`, `max_th`, `max_p` (required), `weight = 0.002`, `limit_packets = max(100, 2·max_th)`, `gentle = true`, `ecn = false` |
//! | `"codel"` (RFC 8289) | `target = "5ms"`, `interval = "100ms"`, `packets = 1000`, `ecn = false` |
//! | `"fq-codel"` (RFC 8290) | `flows = 1024`, `quantum = 1514` (bytes), `target = "5ms"`, `interval = "100ms"`, `packets = 10240` (total), `ecn = true` |
//! | `"priority"` (paper 002's CBQ) | `packets = 100` (each class), `scheduler = "fifo"` or `"wrr"`, `weight_video = 1`, `weight_default = 1`, `weight_background = 1` (with `"wrr"`) |
//!
//! With `ecn = true` an AQM marks ECN-capable packets CE where it would
//! drop them (RFC 3168 §5); Not-ECT packets are dropped as before and a full
//! queue always drops. DCCP data packets are ECT(0) once both ends agreed
//! on ECN (RFC 4340 §12.1; the default), TCP segments only with `ecn =
//! true`; CBR and on-off flows are Not-ECT. Every key, with its unit and
//! default, is in `docs/scenarios.md`.
//!
//! A DCCP flow may carry video: `media = { source = "generated" | "clip.264"
//! | "trace.st", fps, frames, gop, bitrate, slice_max, width, height, mode,
//! startup_delay, fec = { n, k } }` ([`MediaConfig`]). A link may change its
//! delay once: `delay_change = { at = "60s", delay = "75ms" }`, and be cut
//! for a while: `outage = { at = "30s", length = "5s" }` ([`Outage`]). A
//! DCCP flow may bond several paths (issue 19): `via = ["bs1", "bs2"]`
//! sends its connections through each of those nodes, each path with its
//! own connection count, and `shared_bottleneck = true` declares that
//! they share one bottleneck ([`Flow::via`]). A link may be
//! a WiMAX TDD air interface from a station to its base station (`tdd = {
//! cell, frame, dl_ul, dl_overhead, ul_overhead, grant_lag }`, its `rate` the
//! PHY rate; [`Capacity::Tdd`]), and a media flow may carry a synthetic video
//! with B-frames (`source = "ibbp"`).
//!
//! Knobs with defaults (each a documented constant, used only when the key is
//! absent): [`DEFAULT_SEED`], [`DEFAULT_OVERHEAD`], [`DEFAULT_QUEUE_PACKETS`],
//! [`DEFAULT_PACKET_SIZE`], [`DEFAULT_RED_WEIGHT`], and the RED and TCP
//! defaults documented on [`QueueConfig::Red`] and [`Transport::TcpNewReno`].
//!
//! Routing is static: [`Scenario::route`] gives the shortest path by hop count
//! between the endpoints of every flow (see [`Hop`]), and
//! [`Scenario::paths`] a bonded flow's path through each of its `via`
//! nodes.

mod bod;
mod copies;
mod error;
mod fields;
mod player;
mod proxy;
pub use proxy::{DEFAULT_PROXY_BUFFER_BYTES, MIN_PROXY_BUFFER_BYTES};
mod queue;
mod raw;
mod routing;
mod tdd;
mod validate;
mod voice;
mod web;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fairstream_proto::cc::buffer::{BufferConfig, BufferMode};
use fairstream_proto::units::{Bytes, Rate};

pub use copies::MAX_FLOW_COPIES;
pub use error::{Location, ScenarioError};
pub use voice::{
    JitterBuffer, VoiceCodec, VoiceConfig, DEFAULT_JITTER_BUFFER, DEFAULT_SILENCE, DEFAULT_TALK,
    DEFAULT_TRANSMIT_BUFFER, MAX_JITTER_BUFFER, MAX_TRANSMIT_BUFFER, VOICE_FRAME,
};
pub use web::{
    TcpOptions, TcpVariant, WebTraffic, DEFAULT_WEB_SESSIONS, DEFAULT_WEB_SIZE_SEGMENTS,
    DEFAULT_WEB_SIZE_SHAPE, DEFAULT_WEB_THINK, MAX_WEB_SESSIONS, MAX_WEB_TRANSFER_BYTES,
};

/// The seed used when `[run]` has no `seed` key.
pub const DEFAULT_SEED: u64 = 1;
/// Header bytes added to every packet on a link when `overhead` is absent:
/// 20 bytes of IPv4 header plus 8 bytes of UDP header (DCCP runs over UDP,
/// RFC 6773). The link's serialisation time counts these bytes.
pub const DEFAULT_OVERHEAD: Bytes = Bytes(28);
/// The capacity of the drop-tail queue used when a link has no `queue` key,
/// in packets. A starting point, not a recommendation: experiments about
/// buffering should set `queue` explicitly.
pub const DEFAULT_QUEUE_PACKETS: u64 = 100;
/// Packet (payload) size in bytes when a flow's transport has no
/// `packet_size` or `mss` key: 1460 bytes, a full Ethernet TCP segment, so
/// that TCP and TFRC compete with equal packet sizes (RFC 5348 §4.3 assumes
/// TFRC uses the same segment size as competing TCP).
pub const DEFAULT_PACKET_SIZE: Bytes = Bytes(1460);
/// RED's averaging weight `w_q` when `weight` is absent (Floyd and Jacobson
/// 1993 recommend 0.002, ns-2's `q_weight_` default).
pub const DEFAULT_RED_WEIGHT: f64 = 0.002;
/// TCP's minimum retransmission timeout when `min_rto` is absent: RFC 6298
/// §2.4, "the RTO SHOULD be rounded up to 1 second".
pub const DEFAULT_MIN_RTO: Duration = Duration::from_secs(1);
/// The largest packet size accepted: the largest UDP payload over IPv4.
pub const MAX_PACKET_SIZE: Bytes = Bytes(65_507);

/// A validated scenario: the network, its traffic and the routes between the
/// endpoints of every flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    origin: String,
    run: RunConfig,
    nodes: Vec<Node>,
    links: Vec<Link>,
    flows: Vec<Flow>,
    routes: BTreeMap<(NodeId, NodeId), Vec<Hop>>,
}

/// The `[run]` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunConfig {
    /// Simulated time to run; never zero.
    pub duration: Duration,
    /// The seed of every random choice in the run.
    pub seed: u64,
}

/// The index of a node in [`Scenario::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub usize);

/// The index of a link in [`Scenario::links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub usize);

/// A `[[node]]`: a host or router.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The node's unique, non-empty name.
    pub name: String,
}

/// A `[[link]]`: a full-duplex link between two distinct nodes. Each
/// direction has its own queue, configured identically.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The two ends, as written in `between`. [`Direction::Forward`] ("up")
    /// carries packets from `between[0]` to `between[1]`.
    pub between: [NodeId; 2],
    /// How fast packets leave the queue.
    pub capacity: Capacity,
    /// One-way propagation delay (zero is allowed).
    pub delay: Duration,
    /// Header bytes added to every packet (see [`DEFAULT_OVERHEAD`]).
    pub overhead: Bytes,
    /// The queue in front of each direction.
    pub queue: QueueConfig,
    /// Random loss on the channel, after the queue.
    pub loss: LossModel,
    /// A route change: from `at` on, the propagation delay is `delay`
    /// (`delay_change = { at = "60s", delay = "75ms" }`), both directions.
    pub delay_change: Option<DelayChange>,
    /// A cut (`outage = { at = "30s", length = "5s" }`), both directions:
    /// every packet that finishes serialisation in it is lost, as if the
    /// link went dark (issue 19's path failure). The channel's loss process
    /// runs on underneath, so the rest of the run draws as without it.
    pub outage: Option<Outage>,
}

/// A time a link carries nothing (`outage = { at, length }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    /// When it starts, from the start of the run.
    pub at: Duration,
    /// How long it lasts.
    pub length: Duration,
}

/// The delay of a link from a moment on (a route change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayChange {
    /// When, from the start of the run.
    pub at: Duration,
    /// The new one-way propagation delay.
    pub delay: Duration,
}

/// A bandwidth-on-demand terminal's pool (`bod = { pool, pool_rate }`):
/// the terminals naming the same pool share its capacity
/// ([`crate::link::BodPool`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BodPoolSpec {
    /// The pool's name.
    pub name: String,
    /// The capacity the pool's control centre hands out.
    pub rate: Rate,
}

/// How fast a link direction drains its queue.
#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    /// A fixed rate (`rate = "5mbit"`), never zero.
    Fixed(Rate),
    /// Bandwidth on demand (`bod = { … }`): the forward direction is a
    /// satellite terminal's return link granted timeslots from its requests
    /// ([`crate::link::BodConfig`]); the reverse direction runs at `rate`.
    BandwidthOnDemand {
        /// The forward direction's requests and grants.
        forward: crate::link::BodConfig,
        /// The reverse direction's fixed rate (`rate`).
        reverse: Rate,
        /// The pool whose capacity the terminal shares (`pool`, `pool_rate`).
        pool: Option<BodPoolSpec>,
    },
    /// A WiMAX TDD air interface (`tdd = { … }`): `between[0]` is a
    /// subscriber station, `between[1]` its base station; the forward
    /// direction sends in the uplink subframe and the reverse in the
    /// downlink, at the link's `rate` (the PHY rate) in the bursts the
    /// cell grants ([`crate::link::TddConfig`]).
    Tdd {
        /// The cell's frame.
        config: crate::link::TddConfig,
        /// The cell the station shares (`cell`); `None`: a cell of its own.
        cell: Option<String>,
    },
    /// Mahimahi capacity traces (`loss = { kind = "trace", up, down }`), one
    /// per direction; the link then has no `rate` key. Paths are resolved
    /// relative to the scenario file's directory.
    Trace {
        /// The trace for [`Direction::Forward`] (`between[0]` → `between[1]`).
        up: PathBuf,
        /// The trace for [`Direction::Reverse`] (`between[1]` → `between[0]`).
        down: PathBuf,
    },
}

/// A link's queue discipline (`queue = { kind = ... }`).
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// Drop-tail limited to a number of packets
    /// (`{ kind = "droptail", packets = N }`; the default, with
    /// [`DEFAULT_QUEUE_PACKETS`]).
    DropTailPackets(u64),
    /// Drop-tail limited to a number of bytes (`{ kind = "droptail", bytes = N }`).
    DropTailBytes(Bytes),
    /// Random Early Detection (Floyd and Jacobson 1993), thresholds in packets.
    Red(RedConfig),
    /// CoDel (RFC 8289): `{ kind = "codel", target?, interval?, packets?,
    /// ecn? }`, defaults 5 ms, 100 ms, 1000 packets (Linux) and no ECN.
    CoDel(CoDelConfig),
    /// FQ-CoDel (RFC 8290): `{ kind = "fq-codel", flows?, quantum?, target?,
    /// interval?, packets?, ecn? }`, defaults (RFC 8290 §5.2) 1024 flows, a
    /// 1514-byte quantum, 5 ms, 100 ms, 10240 packets and ECN on.
    FqCoDel(FqCoDelConfig),
    /// Class-based priority queueing (paper 002's CBQ): `{ kind =
    /// "priority", packets?, scheduler?, weight_video?, weight_default?,
    /// weight_background? }`; defaults [`DEFAULT_QUEUE_PACKETS`] a class,
    /// `"fifo"` below voice, weights 1 (see [`PriorityConfig`]).
    Priority(PriorityConfig),
}

pub use crate::queue::{
    CoDelConfig, FqCoDelConfig, PriorityConfig, PriorityScheduler, TrafficClass,
};

/// Parameters of a RED queue (`{ kind = "red", min_th, max_th, max_p, weight?,
/// limit_packets?, gentle? }`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// Average queue length (packets) below which nothing is dropped.
    pub min_th: f64,
    /// Average queue length (packets) at which the drop probability reaches
    /// `max_p`; greater than `min_th`.
    pub max_th: f64,
    /// Drop probability at `max_th`, in (0, 1].
    pub max_p: f64,
    /// Averaging weight `w_q`, in (0, 1]; default [`DEFAULT_RED_WEIGHT`].
    pub weight: f64,
    /// Hard limit of the queue in packets; default `max(100, ceil(2 * max_th))`
    /// so that gentle RED's ramp to `2 * max_th` fits.
    pub limit_packets: u64,
    /// Gentle RED: the drop probability rises from `max_p` to 1 between
    /// `max_th` and `2 * max_th` instead of jumping to 1 (Floyd 2000);
    /// default `true`, as in ns-2.
    pub gentle: bool,
    /// Mark ECN-capable packets CE instead of dropping them early (RFC 3168
    /// §7); default `false`.
    pub ecn: bool,
}

/// Random loss on a link's channel (`loss = { kind = ... }`), applied to each
/// direction independently: the simulator's own loss configuration
/// ([`crate::loss::LossConfig`]), so a scenario builds its links directly.
pub use crate::loss::LossConfig as LossModel;

/// A `[[flow]]`: one transport connection from `from` to `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// The flow's unique, non-empty name.
    pub name: String,
    /// The sending node.
    pub from: NodeId,
    /// The receiving node (distinct from `from` and reachable from it).
    pub to: NodeId,
    /// When the flow starts (default zero).
    pub start: Duration,
    /// When the flow stops, after `start`; `None` runs to the end.
    pub stop: Option<Duration>,
    /// `start_jitter`: the flow starts a random time after `start`, uniform
    /// in [0, `start_jitter`), drawn from the run's seed and the flow's
    /// index (so replicate runs of one scenario differ; default zero).
    pub start_jitter: Duration,
    /// The transport and its congestion control.
    pub transport: Transport,
    /// The video the flow carries instead of a saturating or CBR source
    /// (DCCP transports only).
    pub media: Option<MediaConfig>,
    /// Several DCCP connections for the flow (`conns`, `controller`,
    /// `policy`, `start_offset` in the transport); `None`: one connection.
    pub multi: Option<MultiConnection>,
    /// `class`: the traffic class its packets carry, both ways (`"voice"`,
    /// `"video"`, `"default"`, `"background"`); only a `kind =
    /// "priority"` queue tells classes apart. Default `"default"`.
    pub class: TrafficClass,
    /// A voice call the flow carries instead of a saturating or CBR source
    /// (`voice = { codec = … }`; DCCP transports only).
    pub voice: Option<VoiceConfig>,
    /// A `cc = "buffer"` flow: paper 004's controller as configured
    /// (`preroll`, `congestion_threshold`, `loss_threshold` in the
    /// transport; the frame interval from the media's `fps`).
    pub buffer: Option<BufferConfig>,
    /// One leg of a media flow split by a proxy node (`proxy = { … }`);
    /// `None` for other flows.
    pub relay: Option<RelayRole>,
    /// A bonded flow's paths (`via = ["bs1", "bs2"]`, issue 19): path i
    /// goes from `from` to `via[i]` and on to `to` (and back the same
    /// way), each the shortest route; each path has its own connections
    /// and connection count, as `fairstream send` with `paths=` has on
    /// real sockets. Empty: one path, the shortest route.
    pub via: Vec<NodeId>,
    /// `shared_bottleneck = true`: a bonded flow's paths are declared to
    /// share one bottleneck, so the session is no more aggressive over all
    /// of them than over one (`SessionConfig::shared`). Default false.
    pub shared_bottleneck: bool,
}

/// A leg of a media flow through a proxy node (paper 003 §3.2): the
/// scenario's `[[flow]]` with `proxy = { at, transport, buffer }` becomes
/// two flows, `NAME-up` from the sender to the proxy (the flow's own
/// transport) and `NAME` from the proxy to the receiver (the proxy's), the
/// frames in between held in a bounded buffer
/// ([`fairstream_media::proxy::FrameQueue`], shared with `fairstream
/// relay`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelayRole {
    /// Sender to proxy: what its receiver takes goes into the buffer of
    /// the flow at index `downstream`.
    Upstream {
        /// The downstream leg's flow index.
        downstream: usize,
    },
    /// Proxy to receiver: sends what the buffer holds, as fast as its
    /// CCID allows (paper 003 §3.2: "as long as there are data in the proxy
    /// buffer, transmit them as fast as possible to the client").
    Downstream {
        /// The upstream leg's flow index.
        upstream: usize,
        /// The buffer's capacity, bytes of RTP packets.
        buffer_bytes: u64,
    },
}

/// A multi-connection DCCP flow (papers 001 and 000).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultiConnection {
    /// `conns`: the fixed count, or the count the controller starts from
    /// (default 1).
    pub conns: u32,
    /// `controller`: who decides the count; absent, `"fixed"` when `conns`
    /// is given and `"adaptive"` (the default controller) otherwise.
    pub controller: Controller,
    /// `policy`: how datagrams are split (default `"earliest"`).
    pub policy: fairstream_proto::session::SplitPolicy,
    /// `start_offset`: the least time between opening two connections
    /// (default 0.5 s, as in paper 000).
    pub start_offset: Duration,
    /// `rtt_min_lifetime`: how long an `ave_rtt` can stay the controller's
    /// `rtt_min` (such as `"60s"`); absent, the all-time minimum of paper
    /// 001.
    pub rtt_min_lifetime: Option<Duration>,
    /// `gamma`: the RTT-driven controller's γ instead of its preset's
    /// (MULTFRC 0.2, adaptive 0: the share of the base RTT its target
    /// queueing delay is at least).
    pub gamma: Option<f64>,
    /// `queue_packets`: the controller's k, the queueing delay tolerated in
    /// packet times at the highest receive rate seen, instead of its
    /// preset's (adaptive 2, the papers' rules 0).
    pub queue_packets: Option<f64>,
    /// `startup`: whether the IIAD rules' count grows by α per decision
    /// until the first congested one (default false; the adaptive
    /// controller refuses it: its n waits for the end of slow start).
    pub startup: Option<bool>,
}

impl MultiConnection {
    /// One connection to start with, under `controller`, every other key
    /// at its default (what a flow gets that names none of them).
    pub fn one(controller: Controller) -> MultiConnection {
        MultiConnection {
            conns: 1,
            controller,
            policy: fairstream_proto::session::SplitPolicy::Earliest,
            start_offset: Duration::from_millis(500),
            rtt_min_lifetime: None,
            gamma: None,
            queue_packets: None,
            startup: None,
        }
    }
}

/// The connection-count controller of a multi-connection flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    /// `"fixed"`: `conns` connections.
    Fixed,
    /// `"multfrc"`: paper 001's IIAD rule exactly (γ-only threshold).
    Multfrc,
    /// `"adaptive"`: fairstream's default, one connection at the MulTFRC
    /// rate of a fractional n steered by the queue it sees
    /// (`fairstream_proto::cc::multi::adaptive`); the default when neither
    /// `conns` nor `controller` is given.
    Adaptive,
    /// `"e-multfrc"`: paper 000 eq. 2.
    EMultfrc,
    /// `"aggregate"`: one connection at the MulTFRC rate of a fractional n.
    Aggregate,
}

/// A flow's video (`media = { source = ..., ... }`).
#[derive(Clone, Debug, PartialEq)]
pub struct MediaConfig {
    /// Where the frames come from.
    pub source: MediaSourceConfig,
    /// Frames per second (`fps`, default [`DEFAULT_FPS`]).
    pub fps: f64,
    /// How many frames to send (`frames`); default: the flow's active time
    /// times `fps` for a generated source, the whole file otherwise.
    pub frames: Option<u64>,
    /// When frames may be sent (`mode`).
    pub mode: SendMode,
    /// The receiver's start-up delay (`startup_delay`, `"auto"` by default).
    pub startup_delay: StartupDelaySetting,
    /// What the receiver's player does with a frame that is late (`player`,
    /// `"drop"` by default; `refill` with `"rebuffer"`).
    pub player: PlayerSetting,
    /// Packet-level FEC, RS(n, k) (`fec = { n = 56, k = 50 }`; none by
    /// default).
    pub fec: Option<(u16, u16)>,
    /// Retransmission within the deadline (`arq = "on"` or `"off"`, or a
    /// boolean; on by default). The receiver asks for what it lost, the
    /// sender resends what can still arrive in time; with a fixed start-up
    /// delay the receiver asks only while the delay is at least two RTTs.
    /// A flow on one plain DCCP connection is carried by a one-connection
    /// session for it (`fairstream_proto::session::arq`).
    pub arq: bool,
}

/// The frames per second of a media flow without `fps`.
pub const DEFAULT_FPS: f64 = 25.0;

/// Where a media flow's frames come from.
#[derive(Clone, Debug, PartialEq)]
pub enum MediaSourceConfig {
    /// `source = "generated"`: the built-in content encoded by OpenH264.
    Generated {
        /// Picture width (`width`, default 352, CIF).
        width: u32,
        /// Picture height (`height`, default 288).
        height: u32,
        /// Frames from one IDR to the next (`gop`, default 25).
        gop: u32,
        /// The encoder's target bitrate (`bitrate`, default 1 Mbit/s).
        bitrate: Rate,
        /// The largest slice in bytes (`slice_max`, default 900 as in
        /// paper 000).
        slice_max: Bytes,
    },
    /// `source = "file.264"`: an H.264 Annex B file (path relative to the
    /// scenario file).
    H264File(PathBuf),
    /// `source = "trace.st"`: an EvalVid sender trace, sizes without
    /// payload.
    EvalVidTrace(PathBuf),
    /// `source = "fgs"`: a synthetic MPEG-4 FGS trace
    /// (`fairstream_media::layered::fgs_trace`, paper 004's videos were
    /// "FGS MPEG-4 video traces encoded at CBR 250 kbits/sec"), its seed
    /// drawn from the run's. A `cc = "buffer"` flow thins its enhancement
    /// layer; a DCCP media flow sends its frames whole.
    Fgs {
        /// `base_rate`: the base layer's mean rate (default 100 kbit/s).
        base_rate: Rate,
        /// `rate`: base and enhancement together (default 250 kbit/s).
        total_rate: Rate,
        /// `gop`: frames from one I frame to the next (default 15).
        gop: u32,
    },
    /// `source = "ibbp"`: a synthetic H.264-like trace with B-frames,
    /// `IBBP…` GOPs in decoding order (`fairstream_media::bframes`; paper
    /// 000's GOP of 15 with two B-frames per anchor by default), the same
    /// sizes in every run.
    Ibbp {
        /// `gop`: frames from one I frame to the next (default 15).
        gop: u32,
        /// `b_frames`: B-frames between two anchors (default 2).
        b_frames: u32,
        /// `rate`: the mean rate (default 437 kbit/s, what paper 000's
        /// Table 3 implies for its clip).
        mean_rate: Rate,
    },
    /// `source = "video.lt"`: a layered trace (`docs/scenarios.md`).
    LayeredTrace(PathBuf),
}

/// When a media sender may send a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    /// `"on-demand"`: everything may be sent ahead as fast as the transport
    /// allows; nothing is dropped.
    OnDemand,
    /// `"live"`: frame *i* exists from `i / fps`; frames that can no longer
    /// arrive by their deadline are dropped before sending, I frames last.
    Live,
}

/// The receiver's start-up delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StartupDelaySetting {
    /// `"auto"`: the smallest delay with no late packet.
    Auto,
    /// A fixed delay such as `"10s"`.
    Fixed(Duration),
}

/// The receiver's player model (`fairstream_media::playout::Player`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum PlayerSetting {
    /// `"drop"`: EvalVid's model, late packets are lost.
    #[default]
    Drop,
    /// `"rebuffer"`: freeze and resume (paper 001 §4).
    Rebuffer {
        /// `refill`: media complete before playback resumes; `None`: the
        /// start-up delay used.
        refill: Option<Duration>,
    },
}

/// A flow's transport (`transport = { cc = ... }`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transport {
    /// DCCP with CCID 3, TFRC (RFC 4342, RFC 5348).
    Tfrc {
        /// Payload bytes per packet (default [`DEFAULT_PACKET_SIZE`]).
        packet_size: Bytes,
        /// The application's offered rate (`rate`): constant bit rate;
        /// `None` for a saturating source.
        app_rate: Option<Rate>,
    },
    /// DCCP with CCID 4, TFRC for small packets (RFC 5622, RFC 4828).
    TfrcSp {
        /// Payload bytes per packet (default [`DEFAULT_PACKET_SIZE`]).
        packet_size: Bytes,
        /// The application's offered rate; `None` for a saturating source.
        app_rate: Option<Rate>,
    },
    /// DCCP with CCID 2, TCP-like congestion control (RFC 4341).
    Ccid2 {
        /// Payload bytes per packet (default [`DEFAULT_PACKET_SIZE`]).
        packet_size: Bytes,
        /// The application's offered rate; `None` for a saturating source.
        app_rate: Option<Rate>,
    },
    /// `cc = "fixed"`: DCCP with the experimental CCID 249, sending at a
    /// fixed `rate` without congestion control (paper 003 §1's dedicated
    /// bearer after the proxy, "solely dedicated to RTP traffic", where "no
    /// congestion control … is required").
    Fixed {
        /// The bearer's rate (`rate`, required).
        rate: Rate,
        /// Application bytes per packet (default [`DEFAULT_PACKET_SIZE`]).
        packet_size: Bytes,
    },
    /// A TCP NewReno bulk transfer (RFC 6582), or with `media` RTP over
    /// TCP (RFC 4571).
    TcpNewReno {
        /// Delayed acknowledgements (RFC 5681 §4.2); default `false`, as
        /// ns-2's `Agent/TCPSink`.
        delayed_ack: bool,
        /// Selective acknowledgements (RFC 2018) and SACK-based loss
        /// recovery (RFC 6675); default `false`, the papers' NewReno
        /// (every committed result with a NewReno flow was made without).
        sack: bool,
        /// HyStart++ (RFC 9406) for the initial slow start; default
        /// `false`.
        hystart: bool,
        /// Maximum segment size (default [`DEFAULT_PACKET_SIZE`]).
        mss: Bytes,
        /// Lower bound of the retransmission timeout (`min_rto`); default
        /// RFC 6298 §2.4's 1 s ([`DEFAULT_MIN_RTO`]). Linux and ns-2 use
        /// 200 ms.
        min_rto: Duration,
        /// ECN-capable transport (RFC 3168 §6.1): data segments ECT(0), the
        /// receiver echoes CE with ECE, the sender halves its window and
        /// answers with CWR; default `false`.
        ecn: bool,
        /// `max_window`: the largest window in segments of `mss` (ns-2's
        /// `window_`; paper 002 §IV.A: "a maximum congestion window (cwnd)
        /// of 40 packets"); default `None`, no cap.
        max_window: Option<u32>,
    },
    /// A TCP CUBIC bulk transfer (RFC 9438), or with `media` RTP over
    /// TCP; SACK (RFC 2018, RFC 6675) and HyStart++ (RFC 9406) on unless
    /// `sack = false` or `hystart = false`, as in the stacks that run it.
    TcpCubic {
        /// The TCP keys ([`TcpOptions::variant`] is [`TcpVariant::Cubic`]).
        tcp: TcpOptions,
    },
    /// Web-like TCP traffic (`cc = "web"`): many short TCP transfers
    /// (NewReno, or CUBIC with `tcp = "cubic"`) with Pareto sizes and
    /// exponential think times ([`WebTraffic`]), reported as one flow.
    Web {
        /// The TCP of every transfer (the TCP keys, with the defaults of
        /// its `tcp`).
        tcp: TcpOptions,
        /// The users and their transfers.
        web: WebTraffic,
    },
    /// Paper 004's receiver-buffer control of layered video (`cc =
    /// "buffer"`), carried by DCCP: the `media` table must give a layered
    /// source (`"fgs"` or a `.lt` trace). The controller's configuration,
    /// its frame interval from the media's `fps`, is [`Flow::buffer`].
    Buffer {
        /// Payload bytes per packet (default [`DEFAULT_PACKET_SIZE`]).
        packet_size: Bytes,
        /// `mode`: `"paper"` (the scheme alone, over DCCP with a CCID that
        /// never limits it) or `"tfrc-capped"` (over CCID 3, never above
        /// TFRC's allowed rate); default `"paper"`.
        mode: BufferMode,
    },
    /// Constant bit rate over UDP.
    Cbr {
        /// Sending rate (payload), never zero.
        rate: Rate,
        /// Payload bytes per packet (default [`DEFAULT_PACKET_SIZE`]).
        packet_size: Bytes,
    },
    /// On-off source over UDP: constant `rate` while on; on and off periods
    /// exponentially distributed with the given means.
    OnOff {
        /// Sending rate while on, never zero.
        rate: Rate,
        /// Mean on time, never zero.
        on: Duration,
        /// Mean off time, never zero.
        off: Duration,
        /// Payload bytes per packet (required).
        packet_size: Bytes,
    },
}

impl Transport {
    /// The payload bytes per packet of a DCCP or UDP transport; the MSS of
    /// TCP.
    pub fn packet_size(&self) -> Option<Bytes> {
        match *self {
            Transport::Tfrc { packet_size, .. }
            | Transport::TfrcSp { packet_size, .. }
            | Transport::Ccid2 { packet_size, .. }
            | Transport::Buffer { packet_size, .. }
            | Transport::Fixed { packet_size, .. }
            | Transport::Cbr { packet_size, .. }
            | Transport::OnOff { packet_size, .. } => Some(packet_size),
            Transport::TcpNewReno { mss, .. } => Some(mss),
            Transport::Web { tcp, .. } | Transport::TcpCubic { tcp } => Some(tcp.mss),
        }
    }

    /// The `cc` name as written in scenario files (`"tfrc"`, `"tcp-newreno"`…).
    pub fn cc_name(&self) -> &'static str {
        match self {
            Transport::Tfrc { .. } => "tfrc",
            Transport::TfrcSp { .. } => "tfrc-sp",
            Transport::Ccid2 { .. } => "ccid2",
            Transport::TcpNewReno { .. } => "tcp-newreno",
            Transport::TcpCubic { .. } => "tcp-cubic",
            Transport::Web { .. } => "web",
            Transport::Buffer { .. } => "buffer",
            Transport::Fixed { .. } => "fixed",
            Transport::Cbr { .. } => "cbr",
            Transport::OnOff { .. } => "onoff",
        }
    }
}

/// Which way a packet crosses a full-duplex link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// From `between[0]` to `between[1]` (the "up" trace).
    Forward,
    /// From `between[1]` to `between[0]` (the "down" trace).
    Reverse,
}

/// One step of a route: a link and the direction it is crossed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hop {
    /// The link crossed.
    pub link: LinkId,
    /// The direction it is crossed in.
    pub direction: Direction,
}

impl Scenario {
    /// Reads and validates the scenario file at `path`. Trace paths are
    /// resolved relative to the file's directory.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.to_owned(),
            source,
        })?;
        Scenario::from_str(&text, &path.display().to_string())
    }

    /// Parses and validates scenario `text`. `origin` names it in error
    /// messages; it is taken as the file's path, so relative trace paths are
    /// resolved against its directory.
    #[allow(clippy::should_implement_trait)] // needs the origin, unlike FromStr
    pub fn from_str(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        validate::parse(text, origin)
    }

    /// The same scenario with another seed (the `--seed` override).
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Scenario {
        self.run.seed = seed;
        self
    }

    /// The same scenario with another duration (the `--duration` override);
    /// refuses a zero duration.
    pub fn with_duration(mut self, duration: Duration) -> Result<Scenario, ScenarioError> {
        if duration.is_zero() {
            return Err(ScenarioError::Override {
                what: "duration",
                reason: "must be greater than zero",
            });
        }
        self.run.duration = duration;
        Ok(self)
    }

    /// The name errors were reported under (usually the file's path).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The `[run]` settings.
    pub fn run(&self) -> &RunConfig {
        &self.run
    }

    /// The nodes, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The links, indexed by [`LinkId`], in file order.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The flows, in file order.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// The node called `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(NodeId)
    }

    /// The path from `from` to `to`: a shortest path by hop count, ties
    /// broken by link order. Computed for both directions of every flow;
    /// `None` for pairs no flow uses.
    pub fn route(&self, from: NodeId, to: NodeId) -> Option<&[Hop]> {
        self.routes.get(&(from, to)).map(Vec::as_slice)
    }

    /// Each path of `flow`, as its route toward the receiver and back: the
    /// shortest route, or for a bonded flow one path through each of its
    /// `via` nodes. `None` when a route is missing (a flow of another
    /// scenario).
    pub fn paths(&self, flow: &Flow) -> Option<Vec<[Vec<Hop>; 2]>> {
        let joined = |a: NodeId, via: NodeId, b: NodeId| -> Option<Vec<Hop>> {
            let mut hops = self.route(a, via)?.to_vec();
            hops.extend_from_slice(self.route(via, b)?);
            Some(hops)
        };
        if flow.via.is_empty() {
            let forward = self.route(flow.from, flow.to)?.to_vec();
            let reverse = self.route(flow.to, flow.from)?.to_vec();
            return Some(vec![[forward, reverse]]);
        }
        flow.via
            .iter()
            .map(|&via| {
                Some([
                    joined(flow.from, via, flow.to)?,
                    joined(flow.to, via, flow.from)?,
                ])
            })
            .collect()
    }
}
