//! `dccp://` URLs: where to send or listen, and the transport's options,
//! in the habit of SRT tools (`dccp://host:9000?cc=tfrc&conns=4`).
//!
//! Keys (all optional; the defaults are the simulator's for a DCCP flow
//! with multi-connection keys, see `fairstream_sim::scenario`):
//!
//! | key | values | default |
//! |---|---|---|
//! | `cc` | `tfrc` (CCID 3), `tfrc-sp` (CCID 4), `ccid2`, `fixed` (the experimental fixed-rate CCID 249, for a dedicated bearer), `buffer` (paper 004's receiver-buffer controller over temporally layered video, see below) | `tfrc` |
//! | `mode` | with `cc=buffer` only: `paper` (paper 004's schedule alone) or `tfrc-capped` (the same schedule never above RFC 5348's TCP throughput equation for the loss event rate, RTT and packet size measured); both on CCID 249 unpaced: the sender paces each window itself | `paper` |
//! | `preroll` | with `cc=buffer` only: T_s, the media buffered before playback and the level the buffer is kept at, a duration | `2s` |
//! | `congestion_threshold` | with `cc=buffer` only: T_c < T_s, the buffer level at which the receiver reports congestion (paper 004 eq. 1) | T_s/2 |
//! | `loss_threshold` | with `cc=buffer` only: T_loss in [T_c, T_s), the level while losses are observed (eq. 1) | 3·T_s/4 |
//! | `rate` | with `cc=fixed` only, and required by a sender with it: each connection's rate, e.g. `64kbit`, `2mbit`, `1gbit` ([`Rate`] syntax) | none |
//! | `conns` | 1..=64: the fixed count, or the count a controller starts from | 1 |
//! | `controller` | `fixed`, `adaptive`, `multfrc`, `e-multfrc`, `aggregate` | `fixed` when `conns` is given or no multi-connection key is; otherwise `adaptive`, the default controller (`docs/results/multiconn.md` says why) |
//! | `policy` | `earliest`, `gop-interleave` | `earliest` |
//! | `start_offset` | a duration: least time between opening two connections | `0.5s` |
//! | `rtt_min_lifetime` | a duration; absent: the all-time minimum (paper 001) | absent |
//! | `max_packet` | bytes of a DCCP packet, 200..=65000 | 1400 |
//! | `fec` | `n,k`: RS(n, k) parity over blocks of k RTP packets, 1 <= k < n <= 255 (the receiver finds it in the stream) | none |
//! | `peer_timeout` | `auto`, or a duration from `100ms` to `3600s`: how long the peer may stay silent before the stream ends with an error ([`PeerTimeout`]) | `auto`: 8 smoothed RTTs, at least 4 s |
//! | `arq` | `on`, `off`: retransmission within the deadline | `on` |
//! | `paths` | more network paths to bond (issue 19), comma-separated, each `HOST:PORT` optionally followed by `@LOCAL` (a local address, or `dev:INTERFACE`); the URL's own address is the first path ([`paths`]) | none: one path |
//! | `bind` | where the first path's socket binds: a local address or `dev:INTERFACE` | any address |
//! | `shared` | with `paths`: paths that share a bottleneck, by index (the URL's own is 0), `+` within a group, `,` between groups (`0+1`, `0+1,2+3`) or `all`: the session is then no more aggressive there than one session ([`fairstream_proto::session::SessionConfig::shared`]) | none |
//! | `duplicate` | with `paths`: `key` sends each I frame's packets on two paths (the one that delivers soonest, and the best of the others), `off` | `off` |
//! | `passphrase` | 10 to 79 bytes (SRT's bounds), percent-encoded where it holds `%`, `&`, `#`, `+` or a space: every packet after the handshake is encrypted and authenticated (`docs/security.md`); both ends need the same one | none: in clear |
//!
//! Port 0 in a listening URL binds any free port.
//!
//! A listening URL (`dccp://:9000`, `dccp://0.0.0.0:9000`) takes only `cc`
//! (the one CCID it accepts), `max_packet`, `peer_timeout`, `arq` and
//! `passphrase`, and with `cc=buffer` the controller's keys.
//!
//! A passphrase never appears in what a URL prints (`Display`, errors): it
//! shows as `passphrase=***`. On a shared machine the command line is
//! visible to other users; `--passphrase-file` is the safer way.
//!
//! `peer_timeout` on a sending URL ends the stream when the receiver sends
//! nothing for that long after a packet it should answer; on a listening
//! URL, when the sender sends nothing for that long once its data began
//! (a receiver waits for its sender to connect and to start as long as it
//! is left running). See [`crate::peer`].
//!
//! `cc=buffer` runs paper 004's receiver-buffer controller
//! ([`fairstream_proto::cc::buffer`]): the sender plans each 1 s window of a
//! temporally layered stream and keeps whole enhancement frames as the
//! receiver's reports allow; the receiver watches its playout buffer and
//! reports it. Both ends need `cc=buffer` with the same `mode` (it chooses
//! the CCID) and thresholds. It streams over one connection without
//! retransmission or FEC: `conns`, `controller`, `policy`, `start_offset`,
//! `rtt_min_lifetime`, `rate`, `fec` and `arq=on` are refused with it, and
//! its keys without it.
//!
//! `cc=fixed` sends at `rate` whatever the loss (paper 003's proxy re-sends
//! on a dedicated bearer of fixed rate, `dccp://host:9001?cc=fixed&rate=64kbit`):
//! it has no congestion control, so it takes no connection-count
//! controller but `fixed`.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::str::FromStr;
use std::time::Duration;

use fairstream_media::stream::FecParams;
use fairstream_proto::cc::buffer::BufferConfig;
use fairstream_proto::cc::multi::{AdaptiveConfig, ConnectionCountConfig, MultiConfig};
use fairstream_proto::conn::Ccid;
use fairstream_proto::secure::Passphrase;
use fairstream_proto::session::SplitPolicy;
use fairstream_proto::units::{parse_duration, Rate};

use crate::peer::PeerTimeout;
use text::{percent_decode, redact};

/// What was wrong with a URL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not `dccp://…`.
    #[error("`{0}` is not a dccp:// URL (expected e.g. dccp://127.0.0.1:9000 or dccp://:9000)")]
    Scheme(String),
    /// The port is missing or not a number in 1..=65535.
    #[error("bad port `{port}` in `{url}` (expected a number in 1..=65535)")]
    Port {
        /// The URL.
        url: String,
        /// What stood for the port.
        port: String,
    },
    /// A sending URL without a host.
    #[error("`{0}` names no host to send to (only a listening URL may omit it)")]
    NoHost(String),
    /// The host does not resolve.
    #[error("cannot resolve `{host}`: {reason}")]
    Resolve {
        /// The host and port.
        host: String,
        /// Why.
        reason: String,
    },
    /// An unknown query key.
    #[error("unknown option `{key}` in `{url}` (known: {known})")]
    UnknownKey {
        /// The URL.
        url: String,
        /// The key.
        key: String,
        /// The keys accepted here.
        known: &'static str,
    },
    /// A key given twice.
    #[error("option `{key}` given twice in `{url}`")]
    DuplicateKey {
        /// The URL.
        url: String,
        /// The key.
        key: String,
    },
    /// `rate` without `cc=fixed`.
    #[error(
        "`rate={rate}` in `{url}` applies only with cc=fixed (the other CCIDs set their own rate)"
    )]
    RateWithoutFixed {
        /// The URL.
        url: String,
        /// The rate given.
        rate: String,
    },
    /// A sending URL with `cc=fixed` and no `rate`.
    #[error("`{0}` asks for cc=fixed without a rate (add e.g. &rate=64kbit)")]
    FixedWithoutRate(String),
    /// A key that does not go with `cc=buffer`, or a key of `cc=buffer`
    /// without it.
    #[error("option `{key}` in `{url}` {reason}")]
    BufferKey {
        /// The URL.
        url: String,
        /// The key.
        key: String,
        /// Why.
        reason: String,
    },
    /// A bad value.
    #[error("bad value `{value}` for `{key}`: {reason}")]
    BadValue {
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// What is expected.
        reason: String,
    },
}

/// The connection-count controller named in a URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    /// `fixed`: `conns` connections.
    Fixed,
    /// `adaptive`: the default controller, one connection at the MulTFRC
    /// rate of a fractional n steered by the queue it sees
    /// ([`ConnectionCountConfig::Adaptive`]).
    Adaptive,
    /// `multfrc`: paper 001's IIAD rule.
    Multfrc,
    /// `e-multfrc`: paper 000 eq. 2.
    EMultfrc,
    /// `aggregate`: one connection at the MulTFRC rate of a fractional n.
    Aggregate,
}

/// The transport options of a URL.
#[derive(Clone, Debug, PartialEq)]
pub struct TransportOptions {
    /// The CCID.
    pub cc: Ccid,
    /// Connections (fixed), or the count a controller starts from.
    pub conns: u32,
    /// Who decides the count.
    pub controller: Controller,
    /// How datagrams are split across connections.
    pub policy: SplitPolicy,
    /// The least time between opening two connections.
    pub start_offset: Duration,
    /// How long an `ave_rtt` may stay the controller's `rtt_min`.
    pub rtt_min_lifetime: Option<Duration>,
    /// Bytes of a DCCP packet (header included).
    pub max_packet: usize,
    /// `cc=fixed`: each connection's rate.
    pub rate: Option<Rate>,
}

impl Default for TransportOptions {
    fn default() -> Self {
        TransportOptions {
            cc: Ccid::Tfrc,
            conns: 1,
            controller: Controller::Fixed,
            policy: SplitPolicy::Earliest,
            start_offset: Duration::from_millis(500),
            rtt_min_lifetime: None,
            max_packet: 1400,
            rate: None,
        }
    }
}

impl TransportOptions {
    /// The session's connection-count configuration (as the simulator
    /// builds it for a scenario's transport).
    pub fn count(&self) -> ConnectionCountConfig {
        let multi = MultiConfig {
            initial: f64::from(self.conns),
            rtt_min_lifetime: self.rtt_min_lifetime,
            ..MultiConfig::MULTFRC
        };
        match self.controller {
            Controller::Fixed => ConnectionCountConfig::Fixed(self.conns),
            Controller::Multfrc => ConnectionCountConfig::Multfrc(multi),
            Controller::Adaptive => ConnectionCountConfig::Adaptive(AdaptiveConfig {
                initial: f64::from(self.conns),
                rtt_min_lifetime: self.rtt_min_lifetime,
                ..AdaptiveConfig::default()
            }),
            Controller::EMultfrc => ConnectionCountConfig::EMultfrc(MultiConfig {
                initial: f64::from(self.conns),
                rtt_min_lifetime: self.rtt_min_lifetime,
                ..MultiConfig::E_MULTFRC
            }),
            Controller::Aggregate => ConnectionCountConfig::Aggregate(multi),
        }
    }

    /// The CCID the connections run: the aggregate and the adaptive
    /// default run the experimental CCID 248, whose receiver reports j and
    /// its ECN marks.
    pub fn ccid(&self) -> Ccid {
        if matches!(
            self.controller,
            Controller::Aggregate | Controller::Adaptive
        ) {
            Ccid::MulTfrcExperimental
        } else {
            self.cc
        }
    }
}

/// A parsed `dccp://` URL.
#[derive(Clone, Debug, PartialEq)]
pub struct DccpUrl {
    /// The host (`None` in a listening URL such as `dccp://:9000`).
    pub host: Option<String>,
    /// The UDP port (also the receiver's DCCP port).
    pub port: u16,
    /// The options.
    pub transport: TransportOptions,
    /// Packet-level FEC the sender adds (`fec=n,k`).
    pub fec: Option<FecParams>,
    /// How long the peer may stay silent (`peer_timeout`).
    pub peer_timeout: PeerTimeout,
    /// Retransmission within the deadline (`arq=on|off`; `None`: the
    /// default, on). The sender resends what the receiver asks for and can
    /// still arrive in time; the receiver asks for what it lost
    /// (`fairstream_proto::session::arq`).
    pub arq: Option<bool>,
    /// `passphrase`: packets are protected with keys from it.
    pub passphrase: Option<Passphrase>,
    /// `cc=buffer`: the receiver-buffer controller's configuration (its
    /// frame interval is the sender's frame rate's, set by the sender, and
    /// learnt by the receiver from the stream).
    pub buffer: Option<BufferConfig>,
    /// `paths`: the paths beyond the URL's own address.
    pub paths: Vec<PathSpec>,
    /// `bind`: where the first path's socket binds.
    pub bind: Option<LocalBind>,
    /// `duplicate=key`: I frames go on two paths.
    pub duplicate_key: bool,
    /// `shared`: groups of path indices that share a bottleneck (`all`:
    /// one group of every path).
    pub shared: Option<SharedPaths>,
    /// The URL as given, with the passphrase shown as `***`.
    text: String,
    /// Keys given in the query.
    keys: Vec<String>,
}

const SENDER_KEYS: &str = "cc, rate, conns, controller, policy, start_offset, rtt_min_lifetime, \
     max_packet, fec, peer_timeout, arq, passphrase, paths, bind, shared, duplicate, mode, preroll, \
     congestion_threshold, loss_threshold";
const LISTENER_KEYS: &str = "cc, max_packet, peer_timeout, arq, passphrase, and with cc=buffer \
     mode, preroll, congestion_threshold, loss_threshold";

impl fmt::Display for DccpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for DccpUrl {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<DccpUrl, UrlError> {
        // What errors and Display show: never the passphrase.
        let shown = redact(text);
        let rest = text
            .strip_prefix("dccp://")
            .ok_or_else(|| UrlError::Scheme(shown.clone()))?;
        let (authority, query) = rest.split_once('?').unwrap_or((rest, ""));
        let authority = authority.strip_suffix('/').unwrap_or(authority);
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or_else(|| UrlError::Port {
                url: shown.clone(),
                port: authority.to_owned(),
            })?;
            (host, after.strip_prefix(':').unwrap_or(after))
        } else {
            authority.rsplit_once(':').unwrap_or((authority, ""))
        };
        let port = match port.parse::<u16>() {
            // Port 0 binds any free port (a listener in tests); sending
            // to it is refused in `target`.
            Ok(p) => p,
            _ => {
                return Err(UrlError::Port {
                    url: shown.clone(),
                    port: port.to_owned(),
                })
            }
        };
        let mut url = DccpUrl {
            host: (!host.is_empty()).then(|| host.to_owned()),
            port,
            transport: TransportOptions::default(),
            fec: None,
            peer_timeout: PeerTimeout::Auto,
            arq: None,
            passphrase: None,
            buffer: None,
            paths: Vec::new(),
            bind: None,
            duplicate_key: false,
            shared: None,
            text: shown.clone(),
            keys: Vec::new(),
        };
        let mut cc_buffer = false;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if url.keys.iter().any(|k| k == key) {
                return Err(UrlError::DuplicateKey {
                    url: shown.clone(),
                    key: key.to_owned(),
                });
            }
            if key == "cc" && value == "buffer" {
                cc_buffer = true;
            } else if !url.set_buffer_key(key, value)? {
                url.set(key, value)?;
            }
            url.keys.push(key.to_owned());
        }
        url.finish_buffer(cc_buffer)?;
        // As in a scenario file: a multi-connection key without `conns` or
        // `controller` asks for the default controller.
        let given = |k: &str| url.keys.iter().any(|key| key == k);
        if !given("controller")
            && !given("conns")
            && url.transport.cc != Ccid::FixedRateExperimental
            && ["policy", "start_offset", "rtt_min_lifetime"]
                .iter()
                .any(|k| given(k))
        {
            url.transport.controller = Controller::Adaptive;
        }
        url.check_fixed_rate()?;
        if let Some(shared) = &url.shared {
            shared
                .by_path(url.paths.len() + 1)
                .map_err(|reason| bad("shared", &shared.to_string(), reason))?;
        }
        if url.duplicate_key && url.paths.is_empty() {
            return Err(bad(
                "duplicate",
                "key",
                "needs paths=: with one path there is no other to send a copy on",
            ));
        }
        Ok(url)
    }
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> UrlError {
    UrlError::BadValue {
        key: key.to_owned(),
        value: value.to_owned(),
        reason: reason.into(),
    }
}

/// `n,k` of RS(n, k): 1 <= k < n <= 255.
pub fn parse_fec(value: &str) -> Result<FecParams, String> {
    let expected = "expected n,k with 1 <= k < n <= 255 (e.g. 24,20)";
    let (n, k) = value.split_once(',').ok_or(expected)?;
    match (n.trim().parse::<usize>(), k.trim().parse::<usize>()) {
        (Ok(n), Ok(k)) if k >= 1 && k < n && n <= 255 => Ok(FecParams { n, k }),
        _ => Err(expected.into()),
    }
}

impl DccpUrl {
    fn set(&mut self, key: &str, value: &str) -> Result<(), UrlError> {
        let t = &mut self.transport;
        match key {
            "cc" => {
                t.cc = match value {
                    "tfrc" => Ccid::Tfrc,
                    "tfrc-sp" => Ccid::TfrcSp,
                    "ccid2" => Ccid::Ccid2,
                    "fixed" => Ccid::FixedRateExperimental,
                    _ => {
                        return Err(bad(
                            key,
                            value,
                            "expected tfrc, tfrc-sp, ccid2, fixed or buffer",
                        ))
                    }
                }
            }
            "rate" => {
                let rate: Rate =
                    value
                        .parse()
                        .map_err(|e: fairstream_proto::units::UnitError| {
                            bad(key, value, e.to_string())
                        })?;
                if rate.bytes_per_sec() <= 0.0 {
                    return Err(bad(key, value, "expected a rate above zero, e.g. 64kbit"));
                }
                fairstream_sim::limits::check_rate(rate.bits_per_sec())
                    .map_err(|e| bad(key, value, e))?;
                t.rate = Some(rate);
            }
            "conns" => {
                t.conns = match value.parse::<u32>() {
                    Ok(n) if (1..=64).contains(&n) => n,
                    _ => return Err(bad(key, value, "expected a whole number in 1..=64")),
                }
            }
            "controller" => {
                t.controller = match value {
                    "fixed" => Controller::Fixed,
                    "adaptive" => Controller::Adaptive,
                    "multfrc" => Controller::Multfrc,
                    "e-multfrc" => Controller::EMultfrc,
                    "aggregate" => Controller::Aggregate,
                    _ => {
                        return Err(bad(
                            key,
                            value,
                            "expected fixed, adaptive, multfrc, e-multfrc or aggregate",
                        ))
                    }
                }
            }
            "policy" => {
                t.policy = match value {
                    "earliest" => SplitPolicy::Earliest,
                    "gop-interleave" => SplitPolicy::GopInterleave,
                    _ => return Err(bad(key, value, "expected earliest or gop-interleave")),
                }
            }
            "start_offset" => {
                t.start_offset =
                    parse_duration(value).map_err(|e| bad(key, value, e.to_string()))?
            }
            "rtt_min_lifetime" => {
                t.rtt_min_lifetime =
                    Some(parse_duration(value).map_err(|e| bad(key, value, e.to_string()))?)
            }
            "max_packet" => {
                t.max_packet = match value.parse::<usize>() {
                    Ok(n) if (200..=65_000).contains(&n) => n,
                    _ => return Err(bad(key, value, "expected bytes in 200..=65000")),
                }
            }
            "fec" => self.fec = Some(parse_fec(value).map_err(|r| bad(key, value, r))?),
            "paths" => self.paths = paths::parse_paths(value).map_err(|r| bad(key, value, r))?,
            "bind" => self.bind = Some(paths::parse_local(value).map_err(|r| bad(key, value, r))?),
            "shared" => {
                self.shared = Some(paths::parse_shared(value).map_err(|r| bad(key, value, r))?)
            }
            "duplicate" => {
                self.duplicate_key = match value {
                    "key" => true,
                    "off" => false,
                    _ => return Err(bad(key, value, "expected key or off")),
                }
            }
            "peer_timeout" => self.peer_timeout = value.parse().map_err(|r| bad(key, value, r))?,
            "passphrase" => {
                // The value is never echoed in an error.
                let text = percent_decode(value).ok_or_else(|| {
                    bad(
                        key,
                        "***",
                        "a bad %-escape (write %25 for %, %26 for &, %23 for #, %20 for a space)",
                    )
                })?;
                self.passphrase =
                    Some(Passphrase::new(text).map_err(|e| bad(key, "***", e.to_string()))?);
            }
            "arq" => {
                self.arq = Some(match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(bad(key, value, "expected on or off")),
                })
            }
            _ => {
                return Err(UrlError::UnknownKey {
                    url: self.text.clone(),
                    key: key.to_owned(),
                    known: SENDER_KEYS,
                })
            }
        }
        Ok(())
    }

    /// `rate` belongs to `cc=fixed`, which takes only the fixed
    /// connection-count controller.
    fn check_fixed_rate(&self) -> Result<(), UrlError> {
        let t = &self.transport;
        let fixed = t.cc == Ccid::FixedRateExperimental;
        if let (Some(rate), false) = (t.rate, fixed) {
            return Err(UrlError::RateWithoutFixed {
                url: self.text.clone(),
                rate: rate.to_string(),
            });
        }
        if fixed && t.controller != Controller::Fixed {
            return Err(UrlError::BadValue {
                key: "controller".into(),
                value: format!("{:?}", t.controller).to_lowercase(),
                reason: "cc=fixed has no congestion control to count connections by; \
                         only controller=fixed goes with it"
                    .into(),
            });
        }
        Ok(())
    }

    /// The address to send to (the host must be given); `cc=fixed` must
    /// come with its `rate`.
    pub fn target(&self) -> Result<SocketAddr, UrlError> {
        if self.transport.cc == Ccid::FixedRateExperimental
            && self.transport.rate.is_none()
            && self.buffer.is_none()
        {
            return Err(UrlError::FixedWithoutRate(self.text.clone()));
        }
        if self.port == 0 {
            return Err(UrlError::Port {
                url: self.text.clone(),
                port: "0".into(),
            });
        }
        self.resolve()
    }

    fn resolve(&self) -> Result<SocketAddr, UrlError> {
        let host = self
            .host
            .as_deref()
            .ok_or_else(|| UrlError::NoHost(self.text.clone()))?;
        let joined = if host.contains(':') {
            format!("[{host}]:{}", self.port)
        } else {
            format!("{host}:{}", self.port)
        };
        joined
            .to_socket_addrs()
            .map_err(|e| UrlError::Resolve {
                host: joined.clone(),
                reason: e.to_string(),
            })?
            .next()
            .ok_or_else(|| UrlError::Resolve {
                host: joined.clone(),
                reason: "no address".into(),
            })
    }

    /// The address to listen on (all interfaces when no host is given);
    /// only the listener's keys are allowed.
    pub fn listen_address(&self) -> Result<SocketAddr, UrlError> {
        if let Some(key) = self.keys.iter().find(|k| {
            !matches!(
                k.as_str(),
                "cc" | "max_packet" | "peer_timeout" | "arq" | "passphrase"
            ) && !buffer::BUFFER_KEYS.contains(&k.as_str())
        }) {
            return Err(UrlError::UnknownKey {
                url: self.text.clone(),
                key: key.clone(),
                known: LISTENER_KEYS,
            });
        }
        match &self.host {
            None => Ok(SocketAddr::from(([0, 0, 0, 0], self.port))),
            Some(_) => self.resolve(),
        }
    }

    /// Every path's address to send to, with where its socket binds: the
    /// URL's own ([`target`](Self::target), `bind`) first, then `paths`.
    pub fn path_targets(&self) -> Result<Vec<(SocketAddr, Option<LocalBind>)>, UrlError> {
        let mut targets = vec![(self.target()?, self.bind.clone())];
        for path in &self.paths {
            let address = path.resolve().map_err(|reason| UrlError::Resolve {
                host: path.remote.clone(),
                reason,
            })?;
            targets.push((address, path.local.clone()));
        }
        Ok(targets)
    }

    /// Each path's shared-bottleneck group (`shared`), as
    /// [`SessionConfig::shared`](fairstream_proto::session::SessionConfig::shared)
    /// takes it: empty when none is declared.
    pub fn shared_groups(&self) -> Vec<Option<usize>> {
        self.shared
            .as_ref()
            .and_then(|s| s.by_path(self.paths.len() + 1).ok())
            .unwrap_or_default()
    }

    /// Whether the query named `cc`.
    pub fn names_cc(&self) -> bool {
        self.keys.iter().any(|k| k == "cc")
    }
}

mod buffer;
pub mod paths;
#[cfg(test)]
mod tests;
mod text;

pub use paths::{LocalBind, PathSpec, SharedPaths};
