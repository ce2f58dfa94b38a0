//! `proxy = { at, transport, buffer }` on a media `[[flow]]`: paper 003's
//! proxy node, splitting the flow into an upstream leg (the flow's own
//! transport, to the proxy) and a downstream leg (the proxy's transport,
//! to the receiver) around a bounded buffer ([`super::RelayRole`]).

use super::error::{ScenarioError, Source};
use super::fields::{bytes_at, Fields};
use super::raw::RawFlow;
use super::{Flow, MultiConnection, Node, NodeId, RelayRole, Transport};

/// The buffer when `buffer` is absent: 8 MiB, as `fairstream relay`'s
/// (about 17 minutes of paper 003's 64 kbit/s bearer).
pub const DEFAULT_PROXY_BUFFER_BYTES: u64 = 8 << 20;
/// The smallest buffer accepted: 64 KiB, as `fairstream relay`'s (a large
/// frame must fit).
pub const MIN_PROXY_BUFFER_BYTES: u64 = 64 << 10;

/// A validated `proxy` table.
#[derive(Clone, Debug)]
pub(super) struct ProxySpec {
    at: NodeId,
    transport: Transport,
    /// The downstream leg's connections (`conns`, `controller` in its
    /// transport).
    multi: Option<MultiConnection>,
    buffer_bytes: u64,
}

impl ProxySpec {
    /// The two legs of `flow`, the upstream one to be the flow at index
    /// `first` and the downstream one at `first + 1`.
    pub(super) fn legs(&self, flow: Flow, first: usize) -> Vec<Flow> {
        let media = flow.media.clone();
        let upstream = Flow {
            name: format!("{}-up", flow.name),
            to: self.at,
            stop: flow.stop,
            media: media.clone(),
            relay: Some(RelayRole::Upstream {
                downstream: first + 1,
            }),
            ..flow.clone()
        };
        let downstream = Flow {
            from: self.at,
            transport: self.transport,
            multi: self.multi,
            media,
            relay: Some(RelayRole::Downstream {
                upstream: first,
                buffer_bytes: self.buffer_bytes,
            }),
            ..flow
        };
        vec![upstream, downstream]
    }
}

/// Validates `[[flow]]` number `index`'s `proxy` table, if any, against
/// the validated `flow` and the declared `nodes`.
pub(super) fn proxy_from_raw(
    source: Source<'_>,
    index: usize,
    raw: &RawFlow,
    flow: &Flow,
    nodes: &[Node],
) -> Result<Option<ProxySpec>, ScenarioError> {
    let Some(proxy) = &raw.proxy else {
        return Ok(None);
    };
    let path = format!("flow[{index}].proxy");
    let refuse = |span: std::ops::Range<usize>, key: &str, message: String| {
        source.invalid(span, format!("{path}{key}"), message)
    };
    let table = proxy.get_ref();
    let at_name = table.at.get_ref();
    let at = nodes
        .iter()
        .position(|n| n.name == *at_name)
        .map(NodeId)
        .ok_or_else(|| {
            let known: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
            refuse(
                table.at.span(),
                ".at",
                format!(
                    "unknown node \"{at_name}\" (declared nodes: {})",
                    known.join(", ")
                ),
            )
        })?;
    if at == flow.from || at == flow.to {
        return Err(refuse(
            table.at.span(),
            ".at",
            format!("the proxy must run on a node between the flow's ends, not on \"{at_name}\""),
        ));
    }
    let Some(media) = &flow.media else {
        return Err(refuse(
            proxy.span(),
            "",
            "a proxy relays video: the flow needs `media`".to_owned(),
        ));
    };
    if flow.voice.is_some() || flow.buffer.is_some() {
        return Err(refuse(
            proxy.span(),
            "",
            "the proxy node relays video: no `voice` or cc = \"buffer\" through it".to_owned(),
        ));
    }
    if media.fec.is_some() {
        return Err(refuse(
            proxy.span(),
            "",
            "the proxy node forwards RTP packets, not FEC blocks: leave `fec` out".to_owned(),
        ));
    }
    let transport = super::validate::transport_from_raw(Fields::new(
        source,
        format!("{path}.transport"),
        &table.transport,
    ))?;
    let (transport, multi, buffer) = transport;
    let dccp = |t: &Transport| {
        matches!(
            t,
            Transport::Tfrc { .. }
                | Transport::TfrcSp { .. }
                | Transport::Ccid2 { .. }
                | Transport::Fixed { .. }
        )
    };
    if !dccp(&transport) || buffer.is_some() {
        return Err(refuse(
            table.transport.span(),
            ".transport",
            format!(
                "the downstream leg is DCCP: cc = \"tfrc\", \"tfrc-sp\", \"ccid2\" or \"fixed\", \
                 not {}",
                transport.cc_name()
            ),
        ));
    }
    let tcp = matches!(
        flow.transport,
        Transport::TcpNewReno { .. } | Transport::TcpCubic { .. }
    );
    if !dccp(&flow.transport) && !tcp {
        return Err(refuse(
            proxy.span(),
            "",
            format!(
                "the upstream leg is DCCP (cc = \"tfrc\", \"tfrc-sp\", \"ccid2\" \
                 or \"fixed\") or RTP over TCP (\"tcp-newreno\", \"tcp-cubic\"), not {}",
                flow.transport.cc_name()
            ),
        ));
    }
    let (Some(up), Some(down)) = (flow.transport.packet_size(), transport.packet_size()) else {
        return Err(refuse(proxy.span(), "", "no packet size".to_owned()));
    };
    if down.get() < up.get() {
        return Err(refuse(
            table.transport.span(),
            ".transport.packet_size",
            format!(
                "the proxy forwards packets whole: its packet_size ({}) must be at least the \
                 flow's ({})",
                down.get(),
                up.get()
            ),
        ));
    }
    let buffer_bytes = match &table.buffer {
        None => DEFAULT_PROXY_BUFFER_BYTES,
        Some(value) => {
            let key = format!("{path}.buffer");
            let bytes = bytes_at(source, value, &key)?.get();
            if bytes < MIN_PROXY_BUFFER_BYTES {
                return Err(source.invalid(
                    value.span(),
                    key,
                    format!("a proxy buffer of {bytes} bytes is below the least, 64 KiB"),
                ));
            }
            bytes
        }
    };
    Ok(Some(ProxySpec {
        at,
        transport,
        multi,
        buffer_bytes,
    }))
}
