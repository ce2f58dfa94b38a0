//! Turns the raw file into a [`Scenario`]: units parsed, names resolved,
//! every rule checked, routes computed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use fairstream_proto::cc::buffer::{BufferConfig, BufferMode, UnknownBufferMode};
use fairstream_proto::units::{Bytes, Rate};
use toml::Spanned;

use super::error::{ScenarioError, Source};
use super::fields::{bytes_at, duration_at, rate_at, Fields};
use super::raw::{RawFlow, RawLink, RawScenario};
use super::routing::Router;
use crate::queue::UnknownTrafficClass;

use super::{
    Capacity, Controller, DelayChange, Flow, Link, LossModel, MediaConfig, MediaSourceConfig,
    MultiConnection, Node, NodeId, Outage, QueueConfig, RunConfig, Scenario, SendMode,
    StartupDelaySetting, TrafficClass, Transport, DEFAULT_FPS, DEFAULT_OVERHEAD,
    DEFAULT_PACKET_SIZE, DEFAULT_QUEUE_PACKETS, DEFAULT_SEED,
};

/// Parses and validates a whole scenario.
pub(crate) fn parse(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    let source = Source { origin, text };
    let raw: RawScenario = toml::from_str(text).map_err(|e| source.syntax(&e))?;
    let base_dir = Path::new(origin)
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf);

    let run_raw = raw.run.get_ref();
    let duration = duration_at(
        source,
        run_raw.duration.get_ref(),
        run_raw.duration.span(),
        "run.duration",
        false,
    )?;
    let run = RunConfig {
        duration,
        seed: run_raw
            .seed
            .as_ref()
            .map_or(DEFAULT_SEED, |seed| *seed.get_ref()),
    };

    let mut nodes: Vec<Node> = Vec::with_capacity(raw.node.len());
    // Node names to their index, so that a large scenario is not checked
    // and resolved name by name against every node.
    let mut node_ids: BTreeMap<&str, NodeId> = BTreeMap::new();
    for (index, node) in raw.node.iter().enumerate() {
        let name = &node.get_ref().name;
        let key = format!("node[{index}].name");
        if name.get_ref().trim().is_empty() {
            return Err(source.invalid(name.span(), key, "node name must not be empty"));
        }
        if node_ids.insert(name.get_ref(), NodeId(index)).is_some() {
            return Err(source.invalid(
                name.span(),
                key,
                format!("duplicate node name \"{}\"", name.get_ref()),
            ));
        }
        nodes.push(Node {
            name: name.get_ref().clone(),
        });
    }
    let resolve = |name: &Spanned<String>, key: String| -> Result<NodeId, ScenarioError> {
        node_ids
            .get(name.get_ref().as_str())
            .copied()
            .ok_or_else(|| {
                let known: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
                source.invalid(
                    name.span(),
                    key,
                    format!(
                        "unknown node \"{}\" (declared nodes: {})",
                        name.get_ref(),
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ),
                )
            })
    };

    let mut links: Vec<Link> = Vec::with_capacity(raw.link.len());
    let mut pairs: BTreeMap<(NodeId, NodeId), usize> = BTreeMap::new();
    for (index, link) in raw.link.iter().enumerate() {
        let link = link_from_raw(source, &base_dir, index, link.get_ref(), &resolve)?;
        let [a, b] = link.between;
        let pair = (a.min(b), a.max(b));
        if let Some(first) = pairs.insert(pair, index) {
            let between = &raw.link[index].get_ref().between;
            return Err(source.invalid(
                between.span(),
                format!("link[{index}].between"),
                format!(
                    "a link between \"{}\" and \"{}\" is already declared as link[{first}]",
                    nodes[a.0].name, nodes[b.0].name
                ),
            ));
        }
        links.push(link);
    }
    check_bod_pools(source, &raw, &links)?;
    super::tdd::check_cells(source, &raw, &links)?;

    let mut flows: Vec<Flow> = Vec::with_capacity(raw.flow.len());
    let mut flow_names = BTreeSet::new();
    let mut routes = BTreeMap::new();
    let mut router = Router::new(nodes.len(), links.iter().map(|link| link.between));
    for (index, flow_raw) in raw.flow.iter().enumerate() {
        let flow = flow_from_raw(
            source,
            &base_dir,
            index,
            flow_raw.get_ref(),
            run.duration,
            &resolve,
        )?;
        let proxy = super::proxy::proxy_from_raw(source, index, flow_raw.get_ref(), &flow, &nodes)?;
        for flow in super::copies::copies(source, index, flow_raw.get_ref(), flow, run.duration)? {
            let legs = match &proxy {
                None => vec![flow],
                Some(proxy) => proxy.legs(flow, flows.len()),
            };
            for flow in legs {
                add_flow(
                    source,
                    (index, flow_raw.get_ref()),
                    flow,
                    (&nodes, &links, &mut router),
                    (&mut flows, &mut flow_names),
                    &mut routes,
                )?;
            }
        }
    }

    Ok(Scenario {
        origin: origin.to_owned(),
        run,
        nodes,
        links,
        flows,
        routes,
    })
}

/// Adds `flow` (from `[[flow]]` number `index`) and its routes both ways.
fn add_flow(
    source: Source<'_>,
    (index, flow_raw): (usize, &RawFlow),
    flow: Flow,
    (nodes, links, router): (&[Node], &[Link], &mut Router),
    (flows, names): (&mut Vec<Flow>, &mut BTreeSet<String>),
    routes: &mut BTreeMap<(NodeId, NodeId), Vec<super::Hop>>,
) -> Result<(), ScenarioError> {
    {
        if !names.insert(flow.name.clone()) {
            let name = &flow_raw.name;
            return Err(source.invalid(
                name.span(),
                format!("flow[{index}].name"),
                format!("duplicate flow name \"{}\"", flow.name),
            ));
        }
        let mut pairs = vec![(flow.from, flow.to), (flow.to, flow.from)];
        for &via in &flow.via {
            pairs.extend([
                (flow.from, via),
                (via, flow.to),
                (flow.to, via),
                (via, flow.from),
            ]);
        }
        for (from, to) in pairs {
            if routes.contains_key(&(from, to)) {
                continue;
            }
            let path = router.shortest_path(from, to).ok_or_else(|| {
                let to_raw = &flow_raw.to;
                source.invalid(
                    to_raw.span(),
                    format!("flow[{index}].to"),
                    format!(
                        "flow \"{}\": no path of links between \"{}\" and \"{}\"",
                        flow.name, nodes[from.0].name, nodes[to.0].name
                    ),
                )
            })?;
            routes.insert((from, to), path);
        }
        // A path through `via` that crosses a link twice (a detour to a
        // dead end and back) is refused: the node is not between the ends.
        for (i, &via) in flow.via.iter().enumerate() {
            for (a, b) in [(flow.from, flow.to), (flow.to, flow.from)] {
                let (Some(first), Some(second)) = (routes.get(&(a, via)), routes.get(&(via, b)))
                else {
                    continue;
                };
                if let Some(hop) = first
                    .iter()
                    .find(|hop| second.iter().any(|h| h.link == hop.link))
                {
                    let link = links.get(hop.link.0).map_or(String::new(), |link| {
                        let [a, b] = link.between.map(|n| nodes[n.0].name.as_str());
                        format!("link[{}] ({a}–{b})", hop.link.0)
                    });
                    return Err(source.invalid(
                        flow_raw
                            .via
                            .as_ref()
                            .map_or(flow_raw.name.span(), Spanned::span),
                        format!("flow[{index}].via[{i}]"),
                        format!(
                            "flow \"{}\": the path via \"{}\" crosses {link} twice; a \
                             path's node must lie between the flow's ends",
                            flow.name, nodes[via.0].name
                        ),
                    ));
                }
            }
        }
        flows.push(flow);
    }
    Ok(())
}

/// Validates one `[[link]]`.
fn link_from_raw(
    source: Source<'_>,
    base_dir: &Path,
    index: usize,
    raw: &RawLink,
    resolve: &impl Fn(&Spanned<String>, String) -> Result<NodeId, ScenarioError>,
) -> Result<Link, ScenarioError> {
    let path = format!("link[{index}]");
    let between_key = format!("{path}.between");
    let [first, second] = raw.between.get_ref().as_slice() else {
        return Err(source.invalid(
            raw.between.span(),
            between_key,
            format!(
                "expected exactly two node names, found {}",
                raw.between.get_ref().len()
            ),
        ));
    };
    let a = resolve(first, format!("{between_key}[0]"))?;
    let b = resolve(second, format!("{between_key}[1]"))?;
    if a == b {
        return Err(source.invalid(
            raw.between.span(),
            between_key,
            format!("a link from \"{}\" to itself", first.get_ref()),
        ));
    }
    // Name the link by its ends too, so the message is useful without
    // counting `[[link]]` headers.
    let path = format!("{path} ({}–{})", first.get_ref(), second.get_ref());

    let delay = duration_at(
        source,
        raw.delay.get_ref(),
        raw.delay.span(),
        &format!("{path}.delay"),
        true,
    )?;
    let overhead = raw
        .overhead
        .as_ref()
        .map(|value| bytes_at(source, value, &format!("{path}.overhead")))
        .transpose()?
        .unwrap_or(DEFAULT_OVERHEAD);
    let queue = match &raw.queue {
        Some(table) => {
            super::queue::queue_from_raw(Fields::new(source, format!("{path}.queue"), table))?
        }
        None => QueueConfig::DropTailPackets(DEFAULT_QUEUE_PACKETS),
    };
    let (loss, trace) = match &raw.loss {
        Some(table) => loss_from_raw(Fields::new(source, format!("{path}.loss"), table), base_dir)?,
        None => (LossModel::None, None),
    };
    let capacity = match (trace, &raw.rate) {
        (Some((up, down)), None) => Capacity::Trace { up, down },
        (Some(_), Some(rate)) => {
            return Err(source.invalid(
                rate.span(),
                format!("{path}.rate"),
                "a link with a capacity trace (loss kind \"trace\") takes its rate from the \
                 trace; remove `rate`",
            ))
        }
        (None, Some(rate)) => Capacity::Fixed(rate_at(
            source,
            rate.get_ref(),
            rate.span(),
            &format!("{path}.rate"),
        )?),
        (None, None) => {
            return Err(source.invalid(
                raw.between.span(),
                format!("{path}.rate"),
                "missing required key `rate` (e.g. rate = \"5mbit\")",
            ))
        }
    };
    let capacity = match (&raw.bod, capacity) {
        (None, capacity) => capacity,
        (Some(table), Capacity::Fixed(reverse)) => {
            let (forward, pool) =
                super::bod::bod_from_raw(Fields::new(source, format!("{path}.bod"), table))?;
            Capacity::BandwidthOnDemand {
                forward,
                reverse,
                pool,
            }
        }
        (Some(table), _) => {
            return Err(source.invalid(
                table.span(),
                format!("{path}.bod"),
                "a bandwidth-on-demand link cannot also follow a capacity trace",
            ))
        }
    };
    let capacity = match (&raw.tdd, capacity) {
        (None, capacity) => capacity,
        (Some(table), Capacity::Fixed(rate)) => {
            let (config, cell) =
                super::tdd::tdd_from_raw(Fields::new(source, format!("{path}.tdd"), table), rate)?;
            Capacity::Tdd { config, cell }
        }
        (Some(table), _) => {
            return Err(source.invalid(
                table.span(),
                format!("{path}.tdd"),
                "a TDD link cannot also follow a capacity trace or be a bandwidth-on-demand link",
            ))
        }
    };
    let delay_change = match &raw.delay_change {
        None => None,
        Some(table) => {
            let mut fields = Fields::new(source, format!("{path}.delay_change"), table);
            let at_text = fields
                .string("at")?
                .ok_or_else(|| fields.error("at", "missing required key `at` (such as \"60s\")"))?
                .to_owned();
            let at_span = fields.optional("at").map(Spanned::span).unwrap_or_default();
            let at = duration_at(source, &at_text, at_span, &fields.key("at"), false)?;
            let delay_text = fields
                .string("delay")?
                .ok_or_else(|| {
                    fields.error("delay", "missing required key `delay` (such as \"75ms\")")
                })?
                .to_owned();
            let delay_span = fields
                .optional("delay")
                .map(Spanned::span)
                .unwrap_or_default();
            let new_delay =
                duration_at(source, &delay_text, delay_span, &fields.key("delay"), true)?;
            fields.finish("delay_change")?;
            Some(DelayChange {
                at,
                delay: new_delay,
            })
        }
    };
    let outage = match &raw.outage {
        None => None,
        Some(table) => {
            let mut fields = Fields::new(source, format!("{path}.outage"), table);
            // From the start on is a cut too (`at = "0s"`); a cut of no
            // length is refused.
            let at = fields.duration_or_zero("at")?;
            let length = fields.duration("length")?;
            fields.finish("outage")?;
            Some(Outage { at, length })
        }
    };
    Ok(Link {
        between: [a, b],
        capacity,
        delay,
        overhead,
        queue,
        loss,
        delay_change,
        outage,
    })
}

/// Validates `loss = { kind = ... }`; a capacity trace comes back as its
/// (up, down) paths.
fn loss_from_raw(
    mut fields: Fields<'_>,
    base_dir: &Path,
) -> Result<(LossModel, Option<(PathBuf, PathBuf)>), ScenarioError> {
    let kind = fields.string("kind")?.ok_or_else(|| {
        fields.error(
            "kind",
            "missing required key `kind` (\"bernoulli\", \"gilbert-elliott\" or \"trace\")",
        )
    })?;
    let result = match kind {
        "bernoulli" => (
            LossModel::Bernoulli {
                p: fields.probability("p")?,
            },
            None,
        ),
        "gilbert-elliott" => (
            LossModel::GilbertElliott {
                p_good_good: fields.probability("p_good_good")?,
                p_bad_bad: fields.probability("p_bad_bad")?,
                loss_good: fields.probability("loss_good")?,
                loss_bad: fields.probability("loss_bad")?,
            },
            None,
        ),
        "trace" => {
            let mut trace = |key: &'static str| -> Result<PathBuf, ScenarioError> {
                fields.required(key)?;
                let written = fields
                    .string(key)?
                    .ok_or_else(|| fields.error(key, "missing trace path"))?;
                let path = base_dir.join(written);
                if path.is_file() {
                    Ok(path)
                } else {
                    Err(fields.error(
                        key,
                        format!(
                            "trace file \"{written}\" not found (looked for {}; paths are \
                             relative to the scenario file's directory)",
                            path.display()
                        ),
                    ))
                }
            };
            let up = trace("up")?;
            let down = trace("down")?;
            (LossModel::None, Some((up, down)))
        }
        other => {
            return Err(fields.error(
                "kind",
                format!(
                    "unknown loss kind \"{other}\" (expected \"bernoulli\", \
                     \"gilbert-elliott\" or \"trace\")"
                ),
            ))
        }
    };
    let what = format!("loss kind \"{kind}\"");
    fields.finish(&what)?;
    Ok(result)
}

/// Validates one `[[flow]]` (routes are checked by the caller).
fn flow_from_raw(
    source: Source<'_>,
    base_dir: &Path,
    index: usize,
    raw: &RawFlow,
    run_duration: Duration,
    resolve: &impl Fn(&Spanned<String>, String) -> Result<NodeId, ScenarioError>,
) -> Result<Flow, ScenarioError> {
    let path = format!("flow[{index}]");
    let name = raw.name.get_ref();
    if name.trim().is_empty() {
        return Err(source.invalid(
            raw.name.span(),
            format!("{path}.name"),
            "flow name must not be empty",
        ));
    }
    let from = resolve(&raw.from, format!("{path}.from"))?;
    let to = resolve(&raw.to, format!("{path}.to"))?;
    if from == to {
        return Err(source.invalid(
            raw.to.span(),
            format!("{path}.to"),
            format!(
                "flow \"{name}\" goes from \"{}\" to itself",
                raw.from.get_ref()
            ),
        ));
    }
    let start = raw
        .start
        .as_ref()
        .map(|s| {
            duration_at(
                source,
                s.get_ref(),
                s.span(),
                &format!("{path}.start"),
                true,
            )
        })
        .transpose()?
        .unwrap_or(Duration::ZERO);
    if start >= run_duration {
        let span = raw.start.as_ref().map_or(raw.name.span(), Spanned::span);
        return Err(source.invalid(
            span,
            format!("{path}.start"),
            format!(
                "flow \"{name}\" starts at {start:?}, not before the end of the run ({run_duration:?})"
            ),
        ));
    }
    let start_jitter = match &raw.start_jitter {
        None => Duration::ZERO,
        Some(s) => {
            let jitter = duration_at(
                source,
                s.get_ref(),
                s.span(),
                &format!("{path}.start_jitter"),
                true,
            )?;
            let latest = start.saturating_add(jitter);
            if latest >= run_duration {
                return Err(source.invalid(
                    s.span(),
                    format!("{path}.start_jitter"),
                    format!(
                        "flow \"{name}\" could start as late as {latest:?}, not before the end \
                         of the run ({run_duration:?})"
                    ),
                ));
            }
            jitter
        }
    };
    let stop = match &raw.stop {
        None => None,
        Some(s) => {
            let stop = duration_at(
                source,
                s.get_ref(),
                s.span(),
                &format!("{path}.stop"),
                false,
            )?;
            let latest = start.saturating_add(start_jitter);
            if stop <= latest {
                let message = if start_jitter.is_zero() {
                    format!("flow \"{name}\" stops at {stop:?}, not after its start ({start:?})")
                } else {
                    format!(
                        "flow \"{name}\" stops at {stop:?}, not after its latest start \
                         ({latest:?}: `start` plus `start_jitter`)"
                    )
                };
                return Err(source.invalid(s.span(), format!("{path}.stop"), message));
            }
            Some(stop)
        }
    };
    let (transport, multi, buffer) = transport_from_raw(Fields::new(
        source,
        format!("{path}.transport"),
        &raw.transport,
    ))?;
    let media = match &raw.media {
        None => None,
        Some(table) => {
            let refuse =
                |message: String| source.invalid(table.span(), format!("{path}.media"), message);
            if matches!(transport, Transport::Buffer { .. }) {
                if let Some(key) = BUFFER_REFUSED_MEDIA_KEYS
                    .iter()
                    .find(|key| table.get_ref().contains_key(**key))
                {
                    return Err(refuse(format!(
                        "`{key}` belongs to a DCCP media flow's player; a cc = \"buffer\" flow \
                         plays out on its own pre-roll (`preroll` in the transport)"
                    )));
                }
            }
            let fields = Fields::new(source, format!("{path}.media"), table);
            let mut media = media_from_raw(fields, base_dir)?;
            match transport {
                Transport::Tfrc { app_rate, .. }
                | Transport::TfrcSp { app_rate, .. }
                | Transport::Ccid2 { app_rate, .. } => {
                    if app_rate.is_some() {
                        return Err(refuse(
                            "a media flow's rate is the video's: remove `rate` from the transport"
                                .to_owned(),
                        ));
                    }
                }
                // The bearer's rate carries the video as it comes.
                Transport::Fixed { .. } => {}
                Transport::Buffer { .. } => {
                    if !matches!(
                        media.source,
                        MediaSourceConfig::Fgs { .. } | MediaSourceConfig::LayeredTrace(_)
                    ) {
                        return Err(refuse(
                            "cc = \"buffer\" thins an enhancement layer: its media source must \
                             be layered, \"fgs\" or a layered trace (.lt)"
                                .to_owned(),
                        ));
                    }
                    // The controller neither resends nor uses the player.
                    media.arq = false;
                }
                Transport::TcpNewReno { .. } | Transport::TcpCubic { .. } => {
                    // RTP over TCP (RFC 4571): TCP resends what is lost.
                    if let Some(key) = ["arq", "fec"]
                        .iter()
                        .find(|key| table.get_ref().contains_key(**key))
                    {
                        return Err(refuse(format!(
                            "`{key}` is for media over DCCP; over TCP, TCP resends what is lost"
                        )));
                    }
                    media.arq = false;
                }
                other => {
                    return Err(refuse(format!(
                        "media needs a DCCP transport (tfrc, tfrc-sp, ccid2 or buffer) or \
                         tcp-newreno (RTP over TCP), not {}",
                        other.cc_name()
                    )))
                }
            }
            Some(media)
        }
    };
    let buffer = match (buffer, &media) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(source.invalid(
                raw.transport.span(),
                format!("{path}.transport"),
                "cc = \"buffer\" needs a layered video: add media = { source = \"fgs\" } \
                 (or a layered trace, .lt)",
            ))
        }
        (Some(config), Some(media)) => {
            let config = BufferConfig {
                frame_interval: Duration::from_secs_f64(1.0 / media.fps),
                ..config
            };
            config.validate().map_err(|e| {
                source.invalid(
                    raw.transport.span(),
                    format!("{path}.transport"),
                    e.to_string(),
                )
            })?;
            Some(config)
        }
    };
    let (transport, voice) = match &raw.voice {
        None => (transport, None),
        Some(table) => {
            let voice =
                super::voice::voice_from_raw(Fields::new(source, format!("{path}.voice"), table))?;
            let refuse =
                |message: String| source.invalid(table.span(), format!("{path}.voice"), message);
            if media.is_some() || multi.is_some() {
                return Err(refuse(
                    "a voice flow carries its call alone: remove `media` and `conns`".to_owned(),
                ));
            }
            let packet_size = voice.packet_size();
            let transport = match transport {
                Transport::Tfrc { .. } => Transport::Tfrc {
                    packet_size,
                    app_rate: None,
                },
                Transport::TfrcSp { .. } => Transport::TfrcSp {
                    packet_size,
                    app_rate: None,
                },
                Transport::Ccid2 { .. } => Transport::Ccid2 {
                    packet_size,
                    app_rate: None,
                },
                other => {
                    return Err(refuse(format!(
                        "voice needs a DCCP transport (tfrc-sp, tfrc or ccid2), not {}",
                        other.cc_name()
                    )))
                }
            };
            if let Some(key) = ["packet_size", "rate"]
                .iter()
                .find(|key| raw.transport.get_ref().contains_key(**key))
            {
                return Err(source.invalid(
                    raw.transport.span(),
                    format!("{path}.transport.{key}"),
                    "a voice flow's packet size and rate are its codec's: remove it",
                ));
            }
            (transport, Some(voice))
        }
    };
    let class = match &raw.class {
        None => TrafficClass::Default,
        Some(text) => text.get_ref().parse().map_err(|e: UnknownTrafficClass| {
            source.invalid(text.span(), format!("{path}.class"), e.to_string())
        })?,
    };
    let (via, multi) = via_from_raw(source, &path, raw, (from, to), &transport, multi, resolve)?;
    let shared_bottleneck = match &raw.shared_bottleneck {
        Some(shared) if via.is_empty() => {
            return Err(source.invalid(
                shared.span(),
                format!("{path}.shared_bottleneck"),
                "shared_bottleneck is about a bonded flow's paths: give them with `via`",
            ))
        }
        Some(shared) => *shared.get_ref(),
        None => false,
    };
    Ok(Flow {
        class,
        name: name.clone(),
        from,
        to,
        start,
        stop,
        start_jitter,
        transport,
        media,
        multi,
        buffer,
        voice,
        relay: None,
        via,
        shared_bottleneck,
    })
}

/// A `[[flow]]`'s `via` (issue 19's bonded paths): the nodes, one a path,
/// and the flow's connections, which a bonded flow needs (the default
/// controller when the transport names none).
fn via_from_raw(
    source: Source<'_>,
    path: &str,
    raw: &RawFlow,
    (from, to): (NodeId, NodeId),
    transport: &Transport,
    multi: Option<MultiConnection>,
    resolve: &impl Fn(&Spanned<String>, String) -> Result<NodeId, ScenarioError>,
) -> Result<(Vec<NodeId>, Option<MultiConnection>), ScenarioError> {
    let Some(list) = &raw.via else {
        return Ok((Vec::new(), multi));
    };
    let key = format!("{path}.via");
    let refuse = |message: String| source.invalid(list.span(), key.clone(), message);
    let names = list.get_ref();
    let max = fairstream_proto::session::MAX_PATHS;
    if names.is_empty() || names.len() > max {
        return Err(refuse(format!(
            "a bonded flow has 1 to {max} paths, one node each; found {}",
            names.len()
        )));
    }
    if !matches!(
        transport,
        Transport::Tfrc { .. } | Transport::TfrcSp { .. } | Transport::Ccid2 { .. }
    ) {
        return Err(refuse(format!(
            "bonding needs a DCCP session (cc = \"tfrc\", \"tfrc-sp\" or \"ccid2\"), not {}",
            transport.cc_name()
        )));
    }
    if raw.voice.is_some() || raw.proxy.is_some() {
        return Err(refuse(
            "a bonded flow carries neither `voice` nor `proxy`: bond the proxy's legs as flows \
             of their own"
                .to_owned(),
        ));
    }
    let mut via = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let node = resolve(name, format!("{key}[{i}]"))?;
        if node == from || node == to {
            return Err(source.invalid(
                name.span(),
                format!("{key}[{i}]"),
                format!(
                    "\"{}\" is an end of the flow; a path goes via a node between them",
                    name.get_ref()
                ),
            ));
        }
        if via.contains(&node) {
            return Err(source.invalid(
                name.span(),
                format!("{key}[{i}]"),
                format!(
                    "\"{}\" is named twice: each path needs its own node",
                    name.get_ref()
                ),
            ));
        }
        via.push(node);
    }
    let multi = multi.unwrap_or(MultiConnection::one(Controller::Adaptive));
    Ok((via, Some(multi)))
}

/// `media` keys of a DCCP media flow's player and transport that a
/// `cc = "buffer"` flow has no use for.
const BUFFER_REFUSED_MEDIA_KEYS: [&str; 6] =
    ["mode", "startup_delay", "player", "refill", "fec", "arq"];

/// Validates `media = { source = ..., ... }`.
fn media_from_raw(mut fields: Fields<'_>, base_dir: &Path) -> Result<MediaConfig, ScenarioError> {
    let written = fields
        .string("source")?
        .ok_or_else(|| {
            fields.error(
                "source",
                "missing required key `source` (\"generated\", an H.264 file such as \"clip.264\", \
                 or an EvalVid trace such as \"video.st\")",
            )
        })?
        .to_owned();
    let fps = fields.number("fps")?.unwrap_or(DEFAULT_FPS);
    if !(fps > 0.0 && fps <= 240.0) {
        return Err(fields.error("fps", format!("frame rate {fps} is outside (0, 240]")));
    }
    let frames = match fields.number("frames")? {
        None => None,
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= 1e7 => Some(n as u64),
        Some(n) => {
            return Err(fields.error("frames", format!("{n} is not a whole number of frames ≥ 1")))
        }
    };
    let mode = match fields.string("mode")? {
        None | Some("on-demand") => SendMode::OnDemand,
        Some("live") => SendMode::Live,
        Some(other) => {
            return Err(fields.error(
                "mode",
                format!("unknown mode \"{other}\" (expected \"on-demand\" or \"live\")"),
            ))
        }
    };
    let startup_delay = match fields.string("startup_delay")? {
        None | Some("auto") => StartupDelaySetting::Auto,
        Some(text) => {
            let key = fields.key("startup_delay");
            let span = fields
                .optional("startup_delay")
                .map(Spanned::span)
                .unwrap_or_default();
            StartupDelaySetting::Fixed(duration_at(fields.source(), text, span, &key, true)?)
        }
    };
    let player = super::player::player_from_fields(&mut fields, mode)?;
    if mode == SendMode::Live && startup_delay == StartupDelaySetting::Auto {
        return Err(fields.error(
            "mode",
            "live mode drops frames that would miss their deadline, so it needs a fixed \
             `startup_delay` (such as \"2s\"), not \"auto\"",
        ));
    }
    let gop = |fields: &mut Fields<'_>, default: u32| match fields.number("gop")? {
        None => Ok(default),
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= 100_000.0 => Ok(n as u32),
        Some(n) => Err(fields.error("gop", format!("{n} is not a whole number of frames ≥ 1"))),
    };
    let source = if written == "fgs" {
        let base_rate = fields
            .optional_rate("base_rate")?
            .unwrap_or_else(|| Rate::from_bits_per_sec(100_000.0));
        let total_rate = fields
            .optional_rate("rate")?
            .unwrap_or_else(|| Rate::from_bits_per_sec(250_000.0));
        if total_rate.bits_per_sec() < base_rate.bits_per_sec() {
            return Err(fields.error(
                "rate",
                format!("the video's rate {total_rate} is below its base layer's {base_rate}"),
            ));
        }
        MediaSourceConfig::Fgs {
            base_rate,
            total_rate,
            gop: gop(&mut fields, 15)?,
        }
    } else if written == "ibbp" {
        let gop = gop(&mut fields, 15)?;
        let b_frames = match fields.number("b_frames")? {
            None => 2,
            Some(n) if n >= 0.0 && n.fract() == 0.0 && n < f64::from(gop) => n as u32,
            Some(n) => {
                return Err(fields.error(
                    "b_frames",
                    format!(
                        "{n} B-frames in a row do not fit a GOP of {gop} (0 to {})",
                        gop - 1
                    ),
                ))
            }
        };
        let mean_rate = fields
            .optional_rate("rate")?
            .unwrap_or_else(|| Rate::from_bits_per_sec(437_000.0));
        MediaSourceConfig::Ibbp {
            gop,
            b_frames,
            mean_rate,
        }
    } else if written == "generated" {
        let dimension = |fields: &mut Fields<'_>, key: &'static str, default: u32| match fields
            .number(key)?
        {
            None => Ok(default),
            Some(n) if (16.0..=4096.0).contains(&n) && n.fract() == 0.0 && (n as u32) % 2 == 0 => {
                Ok(n as u32)
            }
            Some(n) => Err(fields.error(
                key,
                format!("{n} is not an even number of pixels in 16..=4096"),
            )),
        };
        let width = dimension(&mut fields, "width", 352)?;
        let height = dimension(&mut fields, "height", 288)?;
        let gop = gop(&mut fields, 25)?;
        let bitrate = fields
            .optional_rate("bitrate")?
            .unwrap_or_else(|| Rate::from_bits_per_sec(1e6));
        let slice_max = fields.bytes("slice_max")?.unwrap_or(Bytes(900));
        if slice_max.get() < 100 {
            return Err(fields.error("slice_max", "slices need at least 100 bytes"));
        }
        MediaSourceConfig::Generated {
            width,
            height,
            gop,
            bitrate,
            slice_max,
        }
    } else {
        let path = base_dir.join(&written);
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("264" | "h264") => MediaSourceConfig::H264File(path),
            Some("st" | "trace" | "txt") => MediaSourceConfig::EvalVidTrace(path),
            Some("lt") => MediaSourceConfig::LayeredTrace(path),
            _ => {
                return Err(fields.error(
                    "source",
                    format!(
                        "\"{written}\": expected \"generated\", \"fgs\", \"ibbp\", an H.264 Annex B file \
                         (.264, .h264), an EvalVid sender trace (.st) or a layered trace (.lt)"
                    ),
                ))
            }
        }
    };
    let fec = match fields.optional("fec") {
        None => None,
        Some(value) => {
            let table = value.get_ref().as_table();
            let get = |key: &str| {
                table
                    .and_then(|t| t.get(key))
                    .and_then(toml::Value::as_integer)
                    .and_then(|v| u16::try_from(v).ok())
            };
            let extra = table.and_then(|t| t.keys().find(|k| *k != "n" && *k != "k"));
            match (get("n"), get("k"), extra) {
                (Some(n), Some(k), None) if k >= 1 && k < n && n <= 255 => Some((n, k)),
                _ => {
                    return Err(fields.error(
                        "fec",
                        "expected { n = N, k = K } with 1 <= k < n <= 255 (paper 001 used \
                         { n = 56, k = 50 })",
                    ))
                }
            }
        }
    };
    let arq = match fields.optional("arq").map(|v| v.get_ref().clone()) {
        None => true,
        Some(toml::Value::Boolean(on)) => on,
        Some(toml::Value::String(text)) if text == "on" => true,
        Some(toml::Value::String(text)) if text == "off" => false,
        Some(_) => {
            return Err(fields.error(
                "arq",
                "expected \"on\" or \"off\" (retransmission within the deadline)",
            ))
        }
    };
    let what = format!("media source \"{written}\" in {}", fields.path());
    let generated_keys: &[&'static str] = match source {
        MediaSourceConfig::Generated { .. } => &[],
        // `gop` was read already.
        MediaSourceConfig::Fgs { .. } | MediaSourceConfig::Ibbp { .. } => {
            &["width", "height", "bitrate", "slice_max"]
        }
        _ => &["width", "height", "gop", "bitrate", "slice_max"],
    };
    for &key in generated_keys {
        if fields.optional(key).is_some() {
            return Err(fields.error(
                key,
                format!("`{key}` applies to source = \"generated\" only"),
            ));
        }
    }
    if !matches!(source, MediaSourceConfig::Ibbp { .. }) && fields.optional("b_frames").is_some() {
        return Err(fields.error("b_frames", r#"`b_frames` applies to source = "ibbp" only"#));
    }
    let rate_keys: &[&'static str] = match source {
        MediaSourceConfig::Fgs { .. } => &[],
        MediaSourceConfig::Ibbp { .. } => &["base_rate"],
        _ => &["rate", "base_rate"],
    };
    for &key in rate_keys {
        if fields.optional(key).is_some() {
            let sources = if key == "rate" {
                r#""fgs" or "ibbp""#
            } else {
                r#""fgs""#
            };
            return Err(fields.error(key, format!("`{key}` applies to source = {sources} only")));
        }
    }
    fields.finish(&what)?;
    Ok(MediaConfig {
        source,
        fps,
        frames,
        mode,
        startup_delay,
        player,
        fec,
        arq,
    })
}

/// Validates `transport = { cc = ... }`.
pub(super) fn transport_from_raw(
    mut fields: Fields<'_>,
) -> Result<(Transport, Option<MultiConnection>, Option<BufferConfig>), ScenarioError> {
    const CCS: &str = "\"tfrc\", \"tfrc-sp\", \"ccid2\", \"buffer\", \"fixed\", \"tcp-newreno\", \"tcp-cubic\", \"web\", \"cbr\" or \"onoff\"";
    let cc = fields
        .string("cc")?
        .ok_or_else(|| fields.error("cc", format!("missing required key `cc` ({CCS})")))?;
    let packet_size = |fields: &mut Fields<'_>| {
        Ok::<_, ScenarioError>(
            fields
                .packet_size("packet_size")?
                .unwrap_or(DEFAULT_PACKET_SIZE),
        )
    };
    let transport = match cc {
        "tfrc" => Transport::Tfrc {
            packet_size: packet_size(&mut fields)?,
            app_rate: fields.optional_rate("rate")?,
        },
        "tfrc-sp" => Transport::TfrcSp {
            packet_size: packet_size(&mut fields)?,
            app_rate: fields.optional_rate("rate")?,
        },
        "ccid2" => Transport::Ccid2 {
            packet_size: packet_size(&mut fields)?,
            app_rate: fields.optional_rate("rate")?,
        },
        "fixed" => Transport::Fixed {
            rate: fields.rate("rate")?,
            packet_size: packet_size(&mut fields)?,
        },
        "buffer" => Transport::Buffer {
            packet_size: packet_size(&mut fields)?,
            mode: match fields.string("mode")? {
                None => BufferMode::Paper,
                Some(text) => text
                    .parse()
                    .map_err(|e: UnknownBufferMode| fields.error("mode", e.to_string()))?,
            },
        },
        "tcp-newreno" => {
            // SACK and HyStart++ off unless asked: the papers' NewReno.
            let tcp = super::web::tcp_options(&mut fields, super::web::TcpVariant::NewReno)?;
            Transport::TcpNewReno {
                delayed_ack: tcp.delayed_ack,
                sack: tcp.sack,
                hystart: tcp.hystart,
                mss: tcp.mss,
                min_rto: tcp.min_rto,
                ecn: tcp.ecn,
                max_window: tcp.max_window,
            }
        }
        "tcp-cubic" => Transport::TcpCubic {
            // SACK and HyStart++ on unless refused.
            tcp: super::web::tcp_options(&mut fields, super::web::TcpVariant::Cubic)?,
        },
        "web" => {
            let variant = super::web::web_tcp_variant(&mut fields)?;
            let tcp = super::web::tcp_options(&mut fields, variant)?;
            let web = super::web::web_traffic(&mut fields, tcp.mss)?;
            Transport::Web { tcp, web }
        }
        "cbr" => Transport::Cbr {
            rate: fields.rate("rate")?,
            packet_size: packet_size(&mut fields)?,
        },
        "onoff" => {
            let rate = fields.rate("rate")?;
            let on = fields.duration("on")?;
            let off = fields.duration("off")?;
            fields.required("packet_size")?;
            let packet_size = fields
                .packet_size("packet_size")?
                .ok_or_else(|| fields.error("packet_size", "missing required key `packet_size`"))?;
            Transport::OnOff {
                rate,
                on,
                off,
                packet_size,
            }
        }
        other => return Err(fields.error("cc", format!("unknown cc \"{other}\" (expected {CCS})"))),
    };
    let multi = match transport {
        Transport::Tfrc { .. } | Transport::TfrcSp { .. } | Transport::Ccid2 { .. } => {
            multi_from_fields(&mut fields)?
        }
        _ => None,
    };
    let buffer = match transport {
        Transport::Buffer { mode, .. } => Some(buffer_from_fields(&mut fields, mode)?),
        _ => None,
    };
    let what = format!("cc \"{cc}\" in {}", fields.path());
    fields.finish(&what)?;
    Ok((transport, multi, buffer))
}

/// The controller keys of a `cc = "buffer"` transport (paper 004 §2.1:
/// T_s, T_c, T_loss); the frame interval is set once the media's `fps` is
/// known, and the whole configuration checked then.
fn buffer_from_fields(
    fields: &mut Fields<'_>,
    mode: BufferMode,
) -> Result<BufferConfig, ScenarioError> {
    let defaults = BufferConfig::default();
    Ok(BufferConfig {
        mode,
        preroll: fields
            .optional_duration("preroll")?
            .unwrap_or(defaults.preroll),
        congestion_threshold: fields
            .optional_duration("congestion_threshold")?
            .unwrap_or(defaults.congestion_threshold),
        loss_threshold: fields
            .optional_duration("loss_threshold")?
            .unwrap_or(defaults.loss_threshold),
        ..defaults
    })
}

/// The multi-connection keys of a DCCP transport, if any is present.
fn multi_from_fields(fields: &mut Fields<'_>) -> Result<Option<MultiConnection>, ScenarioError> {
    let present = [
        "conns",
        "controller",
        "policy",
        "start_offset",
        "rtt_min_lifetime",
        "gamma",
        "queue_packets",
        "startup",
    ]
    .iter()
    .any(|k| fields.optional(k).is_some());
    if !present {
        return Ok(None);
    }
    let conns_given = fields.optional("conns").is_some();
    let conns = match fields.number("conns")? {
        None => 1,
        Some(n) if (1.0..=64.0).contains(&n) && n.fract() == 0.0 => n as u32,
        Some(n) => {
            return Err(fields.error(
                "conns",
                format!("{n} is not a whole number of connections in 1..=64"),
            ))
        }
    };
    let controller = match fields.string("controller")? {
        // An explicit count without a controller is that fixed count; a
        // multi-connection flow with neither gets the default controller
        // (docs/results/multiconn.md says why it is the default).
        None if conns_given => Controller::Fixed,
        None => Controller::Adaptive,
        Some("fixed") => Controller::Fixed,
        Some("adaptive") => Controller::Adaptive,
        Some("multfrc") => Controller::Multfrc,
        Some("e-multfrc") => Controller::EMultfrc,
        Some("aggregate") => Controller::Aggregate,
        Some(other) => {
            return Err(fields.error(
                "controller",
                format!(
                    "unknown controller \"{other}\" (expected \"fixed\", \"adaptive\", \"multfrc\", \"e-multfrc\" or \"aggregate\")"
                ),
            ))
        }
    };
    let policy = match fields.string("policy")? {
        None | Some("earliest") => fairstream_proto::session::SplitPolicy::Earliest,
        Some("gop-interleave") => fairstream_proto::session::SplitPolicy::GopInterleave,
        Some(other) => {
            return Err(fields.error(
                "policy",
                format!("unknown policy \"{other}\" (expected \"earliest\" or \"gop-interleave\")"),
            ))
        }
    };
    let start_offset = match fields.string("start_offset")? {
        None => Duration::from_millis(500),
        Some(text) => {
            let key = fields.key("start_offset");
            let span = fields
                .optional("start_offset")
                .map(Spanned::span)
                .unwrap_or_default();
            duration_at(fields.source(), text, span, &key, true)?
        }
    };
    let rtt_min_lifetime = fields.optional_duration("rtt_min_lifetime")?;
    let gamma = match fields.number("gamma")? {
        Some(g) if !(0.0..=10.0).contains(&g) => {
            return Err(fields.error("gamma", format!("{g} is outside [0, 10]")))
        }
        other => other,
    };
    let queue_packets = match fields.number("queue_packets")? {
        Some(k) if !(0.0..=1000.0).contains(&k) => {
            return Err(fields.error("queue_packets", format!("{k} is outside [0, 1000]")))
        }
        other => other,
    };
    let startup = fields.boolean("startup")?;
    if startup.is_some() && controller == Controller::Adaptive {
        return Err(fields.error(
            "startup",
            "the adaptive controller has no start-up phase to turn on or off \
             (its n waits for the end of TFRC's slow start); `startup` is for \
             \"multfrc\", \"e-multfrc\" and \"aggregate\""
                .to_owned(),
        ));
    }
    if controller == Controller::Adaptive && gamma == Some(0.0) && queue_packets == Some(0.0) {
        return Err(fields.error(
            "queue_packets",
            "the adaptive controller needs a target queueing delay: `gamma` and \
             `queue_packets` cannot both be 0"
                .to_owned(),
        ));
    }
    Ok(Some(MultiConnection {
        conns,
        controller,
        policy,
        start_offset,
        rtt_min_lifetime,
        gamma,
        queue_packets,
        startup,
    }))
}

/// The terminals naming one pool agree on what belongs to its control
/// centre: the pool's rate, the superframe, the timeslot and the
/// request-grant delay.
fn check_bod_pools(
    source: Source<'_>,
    raw: &RawScenario,
    links: &[Link],
) -> Result<(), ScenarioError> {
    let mut first: BTreeMap<&str, (usize, crate::link::BodConfig, Rate)> = BTreeMap::new();
    for (index, link) in links.iter().enumerate() {
        let Capacity::BandwidthOnDemand {
            forward,
            pool: Some(pool),
            ..
        } = &link.capacity
        else {
            continue;
        };
        let Some(&(other, config, rate)) = first.get(pool.name.as_str()) else {
            first.insert(&pool.name, (index, *forward, pool.rate));
            continue;
        };
        let differs = if rate != pool.rate {
            Some("pool_rate")
        } else if config.superframe != forward.superframe {
            Some("superframe")
        } else if config.slot_bytes != forward.slot_bytes {
            Some("slot_bytes")
        } else if config.request_grant_delay != forward.request_grant_delay {
            Some("request_grant_delay")
        } else {
            None
        };
        if let Some(key) = differs {
            let span = raw.link[index]
                .get_ref()
                .bod
                .as_ref()
                .map_or_else(|| raw.link[index].span(), Spanned::span);
            return Err(source.invalid(
                span,
                format!("link[{index}].bod.{key}"),
                format!(
                    "the terminals of pool \"{}\" must agree on {key} (the control centre's), \
                     and link[{other}] gives another",
                    pool.name
                ),
            ));
        }
    }
    Ok(())
}
