//! `cc = "web"`: web-like TCP traffic, many short TCP transfers with
//! heavy-tailed sizes and think times between them; and the TCP keys it
//! shares with `cc = "tcp-newreno"` and `cc = "tcp-cubic"`.

use std::time::Duration;

use fairstream_proto::units::Bytes;

use super::error::ScenarioError;
use super::fields::Fields;
use super::{DEFAULT_MIN_RTO, DEFAULT_PACKET_SIZE};
use crate::tcp::{CongestionControl, CubicConfig, SlowStart, TcpConfig};

/// Web users of a `cc = "web"` flow when `sessions` is absent.
pub const DEFAULT_WEB_SESSIONS: u32 = 1;
/// The mean transfer size in segments of `mss` when `size_mean` is absent:
/// ns-2's web traffic model (Polly Huang's `HttpSession`, the web example
/// of "ns by example": `objectSize_ ParetoII 10 1.2`, "number of
/// packets").
pub const DEFAULT_WEB_SIZE_SEGMENTS: u64 = 10;
/// The Pareto shape (tail index α) of transfer sizes when `size_shape` is
/// absent: 1.2, as the same ns-2 model; Crovella & Bestavros ("Self-
/// similarity in World Wide Web traffic", IEEE/ACM ToN 1997) measured tail
/// indices of web transfer sizes from about 1.1 to 1.3.
pub const DEFAULT_WEB_SIZE_SHAPE: f64 = 1.2;
/// The mean think time when `think` is absent: ns-2's model again,
/// `interPage_ Exponential 1` (seconds).
pub const DEFAULT_WEB_THINK: Duration = Duration::from_secs(1);
/// The largest transfer drawn: the Pareto tail is cut here so that one
/// draw cannot be a transfer no run could finish (1 GiB).
pub const MAX_WEB_TRANSFER_BYTES: u64 = 1 << 30;
/// The most web users one flow may have.
pub const MAX_WEB_SESSIONS: u32 = 100_000;

/// Which TCP congestion control a scenario's TCP runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpVariant {
    /// NewReno (RFC 5681, RFC 6582): `cc = "tcp-newreno"`, or `tcp =
    /// "newreno"` on a web flow.
    NewReno,
    /// CUBIC (RFC 9438): `cc = "tcp-cubic"`, or `tcp = "cubic"` on a web
    /// flow.
    Cubic,
}

impl TcpVariant {
    /// Whether SACK is on when the scenario does not say: off for NewReno
    /// (the papers' baseline, and every committed result made with it),
    /// on for CUBIC (as every stack that runs CUBIC).
    pub fn default_sack(self) -> bool {
        self == TcpVariant::Cubic
    }

    /// Whether HyStart++ (RFC 9406) is on when the scenario does not say:
    /// off for NewReno, on for CUBIC (RFC 9438 §4.10 names it).
    pub fn default_hystart(self) -> bool {
        self == TcpVariant::Cubic
    }
}

/// The TCP of a TCP flow or of a `cc = "web"` flow's transfers (the keys
/// `cc = "tcp-newreno"`, `cc = "tcp-cubic"` and `cc = "web"` share).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpOptions {
    /// The congestion control.
    pub variant: TcpVariant,
    /// `delayed_ack` (default `false`).
    pub delayed_ack: bool,
    /// `mss` (default [`DEFAULT_PACKET_SIZE`]).
    pub mss: Bytes,
    /// `min_rto` (default [`DEFAULT_MIN_RTO`]).
    pub min_rto: Duration,
    /// `ecn` (default `false`).
    pub ecn: bool,
    /// `max_window` in segments (default none).
    pub max_window: Option<u32>,
    /// `sack`: SACK (RFC 2018) and RFC 6675 recovery (default
    /// [`TcpVariant::default_sack`]).
    pub sack: bool,
    /// `hystart`: HyStart++ (RFC 9406) for the initial slow start (default
    /// [`TcpVariant::default_hystart`]).
    pub hystart: bool,
}

impl TcpOptions {
    /// The simulator's TCP configuration for these options: RFC defaults
    /// otherwise, a 200 ms delayed-ACK timer when delayed ACKs are on.
    pub fn tcp_config(&self) -> TcpConfig {
        let mss = self.mss.get();
        TcpConfig {
            mss,
            min_rto: self.min_rto,
            ecn: self.ecn,
            delayed_ack: self.delayed_ack.then_some(Duration::from_millis(200)),
            max_window: self.max_window.map(|segments| u64::from(segments) * mss),
            congestion_control: match self.variant {
                TcpVariant::NewReno => CongestionControl::NewReno,
                TcpVariant::Cubic => CongestionControl::Cubic(CubicConfig::default()),
            },
            slow_start: if self.hystart {
                SlowStart::HyStartPlusPlus
            } else {
                SlowStart::Standard
            },
            sack: self.sack,
            ..TcpConfig::default()
        }
    }
}

/// Web-like traffic (`cc = "web"`): `sessions` users, each repeating a
/// transfer of a Pareto-distributed size from `from` to `to` over a fresh
/// TCP connection (NewReno unless `tcp = "cubic"`), then an exponentially distributed think time. The
/// model is ns-2's web traffic (Polly Huang's `HttpSession`: exponential
/// inter-page times, Pareto object sizes) with one object a page.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WebTraffic {
    /// `sessions`: users, each with one transfer or think time at a time
    /// (default [`DEFAULT_WEB_SESSIONS`]).
    pub sessions: u32,
    /// `size_mean`: the mean transfer size (default
    /// [`DEFAULT_WEB_SIZE_SEGMENTS`] segments of `mss`).
    pub size_mean: Bytes,
    /// `size_shape`: the Pareto tail index α, above 1 (default
    /// [`DEFAULT_WEB_SIZE_SHAPE`]).
    pub size_shape: f64,
    /// `think`: the mean think time (default [`DEFAULT_WEB_THINK`]).
    pub think: Duration,
}

/// Reads the TCP keys of `cc = "tcp-newreno"`, `cc = "tcp-cubic"` and `cc =
/// "web"` for a TCP of `variant`.
pub(super) fn tcp_options(
    fields: &mut Fields<'_>,
    variant: TcpVariant,
) -> Result<TcpOptions, ScenarioError> {
    let delayed_ack = fields.boolean("delayed_ack")?.unwrap_or(false);
    let mss = fields.packet_size("mss")?.unwrap_or(DEFAULT_PACKET_SIZE);
    let min_rto = fields
        .optional_duration("min_rto")?
        .unwrap_or(DEFAULT_MIN_RTO);
    // RFC 3168 §6.1: ECN-capable transport; off unless asked.
    let ecn = fields.boolean("ecn")?.unwrap_or(false);
    let max_window = max_window(fields)?;
    let sack = fields.boolean("sack")?.unwrap_or(variant.default_sack());
    let hystart = fields
        .boolean("hystart")?
        .unwrap_or(variant.default_hystart());
    Ok(TcpOptions {
        variant,
        delayed_ack,
        mss,
        min_rto,
        ecn,
        max_window,
        sack,
        hystart,
    })
}

/// `tcp` of a web flow: `"newreno"` (default) or `"cubic"`.
pub(super) fn web_tcp_variant(fields: &mut Fields<'_>) -> Result<TcpVariant, ScenarioError> {
    match fields.string("tcp")? {
        None | Some("newreno") => Ok(TcpVariant::NewReno),
        Some("cubic") => Ok(TcpVariant::Cubic),
        Some(other) => Err(fields.error(
            "tcp",
            format!("unknown TCP \"{other}\" (expected \"newreno\" or \"cubic\")"),
        )),
    }
}

/// The largest TCP window a scenario may ask for, in segments.
const MAX_TCP_WINDOW_SEGMENTS: u32 = 1 << 20;

/// `max_window`: a TCP window cap in segments (paper 002 §IV.A's 40).
fn max_window(fields: &mut Fields<'_>) -> Result<Option<u32>, ScenarioError> {
    match fields.number("max_window")? {
        None => Ok(None),
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= f64::from(MAX_TCP_WINDOW_SEGMENTS) => {
            Ok(Some(n as u32))
        }
        Some(n) => Err(fields.error(
            "max_window",
            format!(
                "{n} is not a whole number of segments in 1..={MAX_TCP_WINDOW_SEGMENTS} \
                 (paper 002 used 40)"
            ),
        )),
    }
}

/// Reads the keys of `cc = "web"` beside its TCP's.
pub(super) fn web_traffic(
    fields: &mut Fields<'_>,
    mss: Bytes,
) -> Result<WebTraffic, ScenarioError> {
    let sessions = match fields.number("sessions")? {
        None => DEFAULT_WEB_SESSIONS,
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= f64::from(MAX_WEB_SESSIONS) => n as u32,
        Some(n) => {
            return Err(fields.error(
                "sessions",
                format!("{n} is not a whole number of users in 1..={MAX_WEB_SESSIONS}"),
            ))
        }
    };
    let size_mean = fields
        .bytes("size_mean")?
        .unwrap_or(Bytes(DEFAULT_WEB_SIZE_SEGMENTS * mss.get()));
    if size_mean.get() == 0 || size_mean.get() > MAX_WEB_TRANSFER_BYTES {
        return Err(fields.error(
            "size_mean",
            format!(
                "a mean transfer of {} bytes is outside 1..={MAX_WEB_TRANSFER_BYTES}",
                size_mean.get()
            ),
        ));
    }
    let size_shape = fields
        .number("size_shape")?
        .unwrap_or(DEFAULT_WEB_SIZE_SHAPE);
    if !(size_shape > 1.0 && size_shape <= 10.0) {
        return Err(fields.error(
            "size_shape",
            format!(
                "Pareto shape {size_shape} is outside (1, 10] (at or below 1 the mean size is \
                 infinite)"
            ),
        ));
    }
    let think = fields
        .optional_duration("think")?
        .unwrap_or(DEFAULT_WEB_THINK);
    Ok(WebTraffic {
        sessions,
        size_mean,
        size_shape,
        think,
    })
}
