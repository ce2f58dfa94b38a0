//! The scenario file as written: strict serde structs that keep the source
//! span of every value, checked and typed by `validate`.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// A table whose keys depend on its `kind` or `cc` (queue, loss, transport);
/// checked key by key in `fields`.
pub(crate) type RawTable = BTreeMap<String, Spanned<toml::Value>>;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario {
    pub(crate) run: Spanned<RawRun>,
    #[serde(default)]
    pub(crate) node: Vec<Spanned<RawNode>>,
    #[serde(default)]
    pub(crate) link: Vec<Spanned<RawLink>>,
    #[serde(default)]
    pub(crate) flow: Vec<Spanned<RawFlow>>,
}

/// `[run]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRun {
    pub(crate) duration: Spanned<String>,
    pub(crate) seed: Option<Spanned<u64>>,
}

/// `[[node]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNode {
    pub(crate) name: Spanned<String>,
}

/// `[[link]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLink {
    pub(crate) between: Spanned<Vec<Spanned<String>>>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) delay: Spanned<String>,
    pub(crate) overhead: Option<Spanned<toml::Value>>,
    pub(crate) queue: Option<Spanned<RawTable>>,
    pub(crate) loss: Option<Spanned<RawTable>>,
    pub(crate) delay_change: Option<Spanned<RawTable>>,
    /// A cut of the link (`outage = { at, length }`).
    pub(crate) outage: Option<Spanned<RawTable>>,
    /// A bandwidth-on-demand forward direction (`bod = { … }`).
    pub(crate) bod: Option<Spanned<RawTable>>,
    /// A WiMAX TDD station's air interface (`tdd = { … }`).
    pub(crate) tdd: Option<Spanned<RawTable>>,
}

/// `[[flow]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFlow {
    pub(crate) name: Spanned<String>,
    pub(crate) from: Spanned<String>,
    pub(crate) to: Spanned<String>,
    pub(crate) start: Option<Spanned<String>>,
    pub(crate) stop: Option<Spanned<String>>,
    pub(crate) transport: Spanned<RawTable>,
    /// The media source of a DCCP flow (`media = { source = ... }`).
    pub(crate) media: Option<Spanned<RawTable>>,
    /// The traffic class of its packets (`class = "voice"`).
    pub(crate) class: Option<Spanned<String>>,
    /// The voice call of a DCCP flow (`voice = { codec = ... }`).
    pub(crate) voice: Option<Spanned<RawTable>>,
    /// Copies of the flow (`count = N`), named `NAME-1` … `NAME-N`.
    pub(crate) count: Option<Spanned<i64>>,
    /// How much later each copy starts than the one before (`stagger`).
    pub(crate) stagger: Option<Spanned<String>>,
    /// A random delay of the start, uniform below this (`start_jitter`).
    pub(crate) start_jitter: Option<Spanned<String>>,
    /// A proxy node splitting a media flow (`proxy = { at = ... }`).
    pub(crate) proxy: Option<Spanned<RawProxy>>,
    /// The paths of a bonded flow (issue 19): one node each path goes
    /// through (`via = ["bs1", "bs2"]`).
    pub(crate) via: Option<Spanned<Vec<Spanned<String>>>>,
    /// Whether a bonded flow's paths are declared to share one bottleneck
    /// (`shared_bottleneck = true`).
    pub(crate) shared_bottleneck: Option<Spanned<bool>>,
}

/// `proxy = { at, transport, buffer }` of a `[[flow]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProxy {
    /// The node the proxy runs on.
    pub(crate) at: Spanned<String>,
    /// The downstream leg's transport.
    pub(crate) transport: Spanned<RawTable>,
    /// The buffer's capacity.
    pub(crate) buffer: Option<Spanned<toml::Value>>,
}
