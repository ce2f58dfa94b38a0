//! One flow's endpoints (a TCP sender and receiver (NewReno or CUBIC), a DCCP client
//! and server running `fairstream-proto`, or a UDP application source) and
//! what was measured about it.

use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;

use fairstream_proto::conn::Ccid;
use fairstream_proto::units::{Bytes, Rate};

use super::bursts::LossRuns;
use super::dccp::DccpEnds;
use super::layered::LayeredApp;
use super::relay::SharedRelay;
use super::series::FlowSample;
use super::session::SessionEnds;
use super::tcp_media::{TcpMedia, FRAMING_BYTES};
use super::voice::VoiceApp;
use super::web::WebEnds;
use super::SimError;
use crate::network::{Body, Packet};
use crate::rng::SimRng;
use crate::scenario::{
    Controller, Flow, Hop, MultiConnection, RelayRole, TcpOptions, TcpVariant, Transport,
};
use crate::source::{Source, SourceConfig};
use crate::tcp::{TcpConfig, TcpConfigError, TcpReceiver, TcpSender};
use fairstream_media::proxy::BufferFigures;

/// The width of the throughput bins behind `rate_cov`.
pub(super) const BIN: Duration = Duration::from_secs(1);
/// The width of the bins of the time series (`--out` CSV rows).
pub(super) const SERIES_BIN: Duration = Duration::from_millis(100);

/// A TCP connection: both ends live in the flow, the network between them.
#[derive(Debug)]
pub(super) struct TcpEnds {
    sender: TcpSender,
    receiver: TcpReceiver,
    /// A media flow over TCP (RFC 4571 framing); `None` for a bulk
    /// transfer.
    media: Option<TcpMedia>,
    /// Sum and count of SRTT, sampled at every ACK the sender takes.
    srtt_sum_s: f64,
    srtt_samples: u64,
}

impl TcpEnds {
    /// The endpoints of a TCP flow (`cc = "tcp-newreno"` or `"tcp-cubic"`)
    /// starting at `start`.
    fn endpoints(
        flow: &Flow,
        tcp: TcpOptions,
        start: Instant,
    ) -> Result<Endpoints, TcpConfigError> {
        let config = tcp.tcp_config();
        let config = if flow.media.is_some() {
            // The application writes the stream as it goes.
            TcpConfig {
                bytes_to_send: Some(0),
                ..config
            }
        } else {
            config
        };
        Ok(Endpoints::Tcp(Box::new(TcpEnds {
            sender: TcpSender::new(config.clone(), start)?,
            receiver: TcpReceiver::new(config)?,
            media: None,
            srtt_sum_s: 0.0,
            srtt_samples: 0,
        })))
    }
}

/// What runs at a flow's endpoints.
#[derive(Debug)]
pub(super) enum Endpoints {
    /// TCP NewReno bulk transfer.
    Tcp(Box<TcpEnds>),
    /// A UDP application source without congestion control.
    Udp(Source),
    /// A DCCP connection between two `fairstream-proto` endpoints.
    Dccp(Box<DccpEnds>),
    /// Several DCCP connections for one stream: two `fairstream-proto`
    /// sessions.
    Session(Box<SessionEnds>),
    /// Web-like traffic: many short NewReno transfers.
    Web(Box<WebEnds>),
}

/// The largest connection count [`FlowState::tally_connections`] keeps
/// apart (the session's own limit is far below).
const MAX_TALLIED_COUNT: usize = 4096;

/// Counters of one flow. Losses count data-direction packets only, so that
/// they compare with `packets_sent`.
#[derive(Clone, Debug, Default)]
pub(super) struct FlowStats {
    pub(super) packets_sent: u64,
    pub(super) queue_drops: u64,
    pub(super) channel_losses: u64,
    /// Payload bytes of data packets that reached the receiver, duplicates
    /// included.
    pub(super) bytes_received: u64,
    pub(super) delay_sum_s: f64,
    pub(super) delay_samples: u64,
    /// `bytes_received` per [`SERIES_BIN`] from time zero.
    pub(super) bins: Vec<u64>,
    /// A bonded flow: `bins` per path (empty for other flows).
    pub(super) path_bins: Vec<Vec<u64>>,
    /// A multi-connection flow: per connection count (index 0 is one
    /// connection), the series intervals that ended with that many open and
    /// the data packets sent and lost in them. At most one element per
    /// connection the controller may open.
    pub(super) by_connections: Vec<CountTally>,
}

/// What happened in the series intervals that ended with one connection
/// count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CountTally {
    pub(super) intervals: u64,
    pub(super) packets_sent: u64,
    pub(super) packets_lost: u64,
}

/// A flow in the running simulation.
#[derive(Debug)]
pub(super) struct FlowState {
    pub(super) name: String,
    pub(super) cc: &'static str,
    /// The traffic class its packets carry (`class`).
    pub(super) class: crate::queue::TrafficClass,
    pub(super) start: Instant,
    /// Its `stop`, or the end of the run.
    pub(super) stop: Instant,
    /// Per path (one, or a bonded flow's), the route toward the receiver
    /// and the route back.
    routes: Vec<[Vec<Hop>; 2]>,
    /// A bonded flow's `via` nodes by name, one a path; empty otherwise.
    pub(super) via: Vec<String>,
    pub(super) endpoints: Endpoints,
    /// The pending `FlowWake` the runner scheduled, if any.
    pub(super) wake_at: Option<Instant>,
    pub(super) stats: FlowStats,
    /// A multi-connection flow's loss bursts (paper 001 Table 2).
    pub(super) loss_runs: Option<LossRuns>,
    /// A leg of a media flow through a proxy node.
    pub(super) relay: Option<RelayRole>,
    /// The downstream leg's view of the proxy's buffer.
    proxy_buffer: Option<SharedRelay>,
}

impl FlowState {
    /// The flow of `flow` (the `index`-th of the scenario), with its routes.
    pub(super) fn new(
        flow: &Flow,
        index: usize,
        seed: u64,
        end: Instant,
        routes: Vec<[Vec<Hop>; 2]>,
        via: Vec<String>,
    ) -> Result<FlowState, SimError> {
        let start = Instant::ZERO + flow.start + start_jitter(flow, index, seed);
        let stop = flow
            .stop
            .map_or(end, |stop| (Instant::ZERO + stop).min(end));
        let tcp_error = |source| SimError::Tcp {
            flow: flow.name.clone(),
            source,
        };
        let endpoints = match flow.transport {
            Transport::Web { tcp, web } => Endpoints::Web(Box::new(
                WebEnds::new(
                    tcp.tcp_config(),
                    web,
                    start,
                    SimRng::for_element(seed, &format!("flow:{index}:web")),
                )
                .map_err(tcp_error)?,
            )),
            Transport::TcpNewReno {
                delayed_ack,
                sack,
                hystart,
                mss,
                min_rto,
                ecn,
                max_window,
            } => TcpEnds::endpoints(
                flow,
                TcpOptions {
                    variant: TcpVariant::NewReno,
                    delayed_ack,
                    mss,
                    min_rto,
                    ecn,
                    max_window,
                    sack,
                    hystart,
                },
                start,
            )
            .map_err(tcp_error)?,
            Transport::TcpCubic { tcp } => {
                TcpEnds::endpoints(flow, tcp, start).map_err(tcp_error)?
            }
            Transport::Cbr { rate, packet_size } => Endpoints::Udp(Source::new(
                SourceConfig::Cbr {
                    rate,
                    packet_size: packet_size_u32(packet_size.get()),
                },
                start,
                SimRng::for_element(seed, &format!("flow:{index}:source")),
            )),
            Transport::OnOff {
                rate,
                on,
                off,
                packet_size,
            } => Endpoints::Udp(Source::new(
                SourceConfig::OnOff {
                    rate,
                    packet_size: packet_size_u32(packet_size.get()),
                    on,
                    off,
                },
                start,
                SimRng::for_element(seed, &format!("flow:{index}:source")),
            )),
            Transport::Tfrc {
                packet_size,
                app_rate,
            } => dccp(
                index,
                seed,
                start,
                Ccid::Tfrc,
                Rate::INFINITY,
                packet_size,
                app_rate,
            ),
            Transport::TfrcSp {
                packet_size,
                app_rate,
            } => dccp(
                index,
                seed,
                start,
                Ccid::TfrcSp,
                Rate::INFINITY,
                packet_size,
                app_rate,
            ),
            Transport::Ccid2 {
                packet_size,
                app_rate,
            } => dccp(
                index,
                seed,
                start,
                Ccid::Ccid2,
                Rate::INFINITY,
                packet_size,
                app_rate,
            ),
            // The schedule alone sets the rate (`tfrc-capped` caps it with
            // what the CCID 3 receiver reports): a CCID without pacing.
            Transport::Buffer { packet_size, .. } => dccp(
                index,
                seed,
                start,
                Ccid::FixedRateExperimental,
                Rate::INFINITY,
                packet_size,
                None,
            ),
            Transport::Fixed { rate, packet_size } => dccp(
                index,
                seed,
                start,
                Ccid::FixedRateExperimental,
                rate,
                packet_size,
                None,
            ),
        };
        let mut endpoints = endpoints;
        // A media flow with retransmission needs a session, which one plain
        // DCCP connection lacks: it gets a one-connection session.
        let one_connection = MultiConnection::one(Controller::Fixed);
        let multi = flow.multi.as_ref().or(flow
            .media
            .as_ref()
            .filter(|media| media.arq)
            .map(|_| &one_connection));
        if let (Some(multi), Endpoints::Dccp(dccp), Some(packet_size)) =
            (multi, &endpoints, flow.transport.packet_size())
        {
            let size = usize::try_from(packet_size.get()).unwrap_or(usize::MAX);
            let source = Source::new(
                match flow.transport {
                    Transport::Tfrc {
                        app_rate: Some(rate),
                        ..
                    }
                    | Transport::TfrcSp {
                        app_rate: Some(rate),
                        ..
                    }
                    | Transport::Ccid2 {
                        app_rate: Some(rate),
                        ..
                    } => SourceConfig::Cbr {
                        rate,
                        packet_size: packet_size_u32(packet_size.get()),
                    },
                    _ => SourceConfig::Saturating {
                        packet_size: packet_size_u32(packet_size.get()),
                    },
                },
                start,
                SimRng::for_element(seed, &format!("flow:{index}:source")),
            );
            let session = SessionEnds::new(
                dccp.ccid(),
                dccp.fixed_rate(),
                size,
                index,
                multi,
                flow.media.as_ref(),
                source,
                SimRng::for_element(seed, &format!("flow:{index}:session")),
                start,
                (routes.len(), flow.shared_bottleneck),
            )
            .map_err(|reason| SimError::Session {
                flow: flow.name.clone(),
                reason,
            })?;
            endpoints = Endpoints::Session(Box::new(session));
        }
        let media_error = |source| SimError::Media {
            flow: flow.name.clone(),
            source,
        };
        let active = stop.saturating_duration_since(start);
        let media_seed = SimRng::for_element(seed, &format!("flow:{index}:media")).next_u64();
        if let (Some(buffer), Some(media), Endpoints::Dccp(dccp), Some(packet_size)) = (
            flow.buffer,
            &flow.media,
            &mut endpoints,
            flow.transport.packet_size(),
        ) {
            let frames = super::media::layered_frames(media, active, media_seed)
                .transpose()
                .map_err(media_error)?
                .unwrap_or_default();
            let size = usize::try_from(packet_size.get()).unwrap_or(usize::MAX);
            dccp.layered =
                Some(
                    LayeredApp::new(buffer, &frames, size).map_err(|e| SimError::Session {
                        flow: flow.name.clone(),
                        reason: e.to_string(),
                    })?,
                );
        } else if let (Some(config), Some(packet_size)) =
            (&flow.media, flow.transport.packet_size())
        {
            let mut size = usize::try_from(packet_size.get()).unwrap_or(usize::MAX);
            if matches!(endpoints, Endpoints::Tcp(_)) {
                // A framed packet fills one segment of `mss`.
                size = size.saturating_sub(FRAMING_BYTES);
            }
            let stream = super::media::build_stream(config, active, media_seed, size)
                .map_err(media_error)?;
            match &mut endpoints {
                Endpoints::Tcp(tcp) => {
                    tcp.media = Some(TcpMedia::new(
                        super::media::MediaApp::new(stream, size, config, start)
                            .map_err(media_error)?,
                    ));
                }
                Endpoints::Dccp(dccp) => {
                    dccp.media = Some(
                        super::media::MediaApp::new(stream, size, config, start)
                            .map_err(media_error)?,
                    );
                }
                Endpoints::Session(session) => {
                    session.media = Some(
                        super::media::MediaApp::new(stream, size, config, start)
                            .map_err(media_error)?,
                    );
                }
                _ => {}
            }
        }
        if let (Some(voice), Endpoints::Dccp(dccp)) = (flow.voice, &mut endpoints) {
            dccp.voice = Some(VoiceApp::new(
                voice,
                start,
                SimRng::for_element(seed, &format!("flow:{index}:voice")),
            ));
        }
        let loss_runs = matches!(endpoints, Endpoints::Session(_)).then(LossRuns::default);
        Ok(FlowState {
            name: flow.name.clone(),
            cc: flow.transport.cc_name(),
            class: flow.class,
            start,
            stop,
            routes,
            via,
            endpoints,
            wake_at: None,
            stats: FlowStats::default(),
            loss_runs,
            relay: flow.relay,
            proxy_buffer: None,
        })
    }

    /// Connects the legs of a proxy: the upstream leg `up` puts what it
    /// receives into `buffer`, this (downstream) leg sends from it.
    pub(super) fn attach_proxy(&mut self, up: &mut FlowState, buffer: SharedRelay) {
        match &mut up.endpoints {
            Endpoints::Dccp(dccp) => dccp.relay_out = Some(buffer.clone()),
            Endpoints::Session(session) => session.relay_out = Some(buffer.clone()),
            Endpoints::Tcp(tcp) => {
                if let Some(media) = &mut tcp.media {
                    media.relay_out = Some(buffer.clone());
                }
            }
            _ => {}
        }
        match &mut self.endpoints {
            Endpoints::Dccp(dccp) => dccp.relay_in = Some(buffer.clone()),
            Endpoints::Session(session) => session.relay_in = Some(buffer.clone()),
            _ => {}
        }
        self.proxy_buffer = Some(buffer);
    }

    /// The proxy's buffer, for the downstream leg.
    pub(super) fn proxy_figures(&self) -> Option<BufferFigures> {
        self.proxy_buffer.as_ref().map(SharedRelay::figures)
    }

    /// The route a packet of this flow follows on path `path` (`[]` for a
    /// path the flow does not have).
    pub(super) fn route(&self, toward_receiver: bool, path: u8) -> &[Hop] {
        self.routes
            .get(usize::from(path))
            .map_or(
                &[],
                |[forward, reverse]| {
                    if toward_receiver {
                        forward
                    } else {
                        reverse
                    }
                },
            )
    }

    /// The path `body`, sent by this flow's sender (`toward_receiver`) or
    /// receiver, takes: its connection's, for a bonded flow; 0 otherwise.
    pub(super) fn path_of(&self, toward_receiver: bool, body: &Body) -> u8 {
        match (&self.endpoints, body) {
            (Endpoints::Session(session), Body::Dccp { bytes, .. }) if self.routes.len() > 1 => {
                session.path_of(toward_receiver, bytes)
            }
            _ => 0,
        }
    }

    fn is_active(&self, now: Instant) -> bool {
        now >= self.start && now < self.stop
    }

    /// Runs the timers due at `now` and appends what the endpoints send to
    /// `out`: (toward the receiver?, body) pairs.
    pub(super) fn service(&mut self, now: Instant, out: &mut Vec<(bool, Body)>) {
        let active = self.is_active(now);
        let before = out.len();
        match &mut self.endpoints {
            Endpoints::Tcp(tcp) => {
                if tcp.receiver.next_timeout().is_some_and(|t| t <= now) {
                    if let Some(ack) = tcp.receiver.on_timeout(now) {
                        out.push((false, Body::TcpAck(ack)));
                    }
                }
                if active {
                    if tcp.sender.next_timeout().is_some_and(|t| t <= now) {
                        tcp.sender.on_timeout(now);
                    }
                    if let Some(media) = &mut tcp.media {
                        media.feed(now, &mut tcp.sender);
                    }
                    while let Some(segment) = tcp.sender.poll_transmit(now) {
                        out.push((true, Body::TcpSegment(segment)));
                    }
                }
            }
            Endpoints::Web(web) => web.service(now, active, out),
            Endpoints::Udp(source) => {
                if active {
                    while let Some(size) = source.poll(now) {
                        out.push((true, Body::Datagram { size }));
                    }
                }
            }
            Endpoints::Dccp(dccp) => {
                if now >= self.start {
                    dccp.service(now, active, out);
                }
            }
            Endpoints::Session(session) => {
                if now >= self.start {
                    session.service(now, active, out);
                }
            }
        }
        let sent = out.get(before..).unwrap_or_default();
        self.stats.packets_sent += sent.iter().filter(|(toward, _)| *toward).count() as u64;
    }

    /// The ECN codepoint a packet this flow sends carries in its IP header
    /// (RFC 3168 §5): the one place the runner asks.
    pub(super) fn codepoint(&self, body: &Body) -> Ecn {
        match (&self.endpoints, body) {
            // RFC 3168 §6.1.1: an ECN-capable data sender sets ECT on data
            // segments; §6.1.5: never on retransmissions; §6.1.4: pure ACKs
            // are Not-ECT.
            (Endpoints::Tcp(tcp), Body::TcpSegment(segment))
                if tcp.sender.config().ecn && !segment.is_retransmission =>
            {
                Ecn::Ect0
            }
            (Endpoints::Web(web), Body::WebSegment { segment, .. })
                if web.ecn() && !segment.is_retransmission =>
            {
                Ecn::Ect0
            }
            // RFC 4340 §12.1: the codepoint the DCCP endpoint chose.
            (Endpoints::Dccp(_) | Endpoints::Session(_), Body::Dccp { ecn, .. }) => *ecn,
            _ => Ecn::NotEct,
        }
    }

    /// TCP with ECN: CE-marked segments the receiver took and the sender's
    /// window reductions for ECN-Echo; `None` for other flows.
    pub(super) fn ecn_counts(&self) -> Option<(u64, u64)> {
        match &self.endpoints {
            Endpoints::Tcp(tcp) if tcp.sender.config().ecn => {
                Some((tcp.receiver.ce_received(), tcp.sender.ecn_reductions()))
            }
            _ => None,
        }
    }

    /// When the flow next needs [`service`](Self::service) after `now`.
    pub(super) fn next_wake(&self, now: Instant) -> Option<Instant> {
        if now < self.start {
            return Some(self.start);
        }
        let before_stop = |t: Option<Instant>| t.filter(|t| *t < self.stop);
        match &self.endpoints {
            Endpoints::Tcp(tcp) => {
                let sender = before_stop(tcp.sender.next_timeout());
                let receiver = tcp.receiver.next_timeout();
                let media = before_stop(tcp.media.as_ref().and_then(|m| m.next_release(now)));
                [sender, receiver, media].into_iter().flatten().min()
            }
            Endpoints::Udp(source) => before_stop(source.next_ready()),
            Endpoints::Web(web) => web.next_wake(now < self.stop),
            Endpoints::Dccp(_) | Endpoints::Session(_) => {
                let active = now < self.stop;
                let next = match &self.endpoints {
                    Endpoints::Dccp(dccp) => dccp.next_wake(active, now),
                    Endpoints::Session(session) => session.next_wake(active, now),
                    _ => None,
                };
                // The stop itself needs a wake-up: the connection closes then.
                if active {
                    next.map(|t| t.min(self.stop)).or(Some(self.stop))
                } else {
                    next
                }
            }
        }
    }

    /// A packet of this flow left the network (delivered, lost or
    /// dropped): its buffer goes back to the endpoints that wrote it.
    pub(super) fn recycle(&mut self, packet: Packet) {
        if let Body::Dccp { bytes, .. } = packet.body {
            match &mut self.endpoints {
                Endpoints::Session(session) => session.recycle(bytes),
                Endpoints::Dccp(dccp) => dccp.recycle(bytes),
                _ => {}
            }
        }
    }

    /// A packet of this flow reached its destination host at `now`; appends
    /// what the flow sends in response (timers and new data included) to
    /// `out`.
    pub(super) fn on_arrival(
        &mut self,
        now: Instant,
        packet: &Packet,
        out: &mut Vec<(bool, Body)>,
    ) {
        if packet.toward_receiver {
            let bytes = match &packet.body {
                Body::TcpSegment(segment) | Body::WebSegment { segment, .. } => segment.len,
                Body::Datagram { size } => u64::from(*size),
                Body::Dccp { payload_len, .. } => u64::from(*payload_len),
                Body::TcpAck(_) | Body::WebAck { .. } => 0,
            };
            self.record_data(now, packet.sent_at, bytes, packet.path);
            if let (Endpoints::Tcp(tcp), Body::TcpSegment(segment)) =
                (&mut self.endpoints, &packet.body)
            {
                if let Some(ack) = tcp.receiver.on_segment_ecn(now, segment, packet.ecn) {
                    out.push((false, Body::TcpAck(ack)));
                }
                if let Some(media) = &mut tcp.media {
                    media.deliver(now, &tcp.receiver);
                }
            }
            match (&mut self.endpoints, &packet.body) {
                (Endpoints::Web(web), Body::WebSegment { transfer, segment }) => {
                    out.extend(
                        web.on_segment(now, *transfer, segment, packet.ecn)
                            .map(|ack| (false, ack)),
                    );
                }
                (Endpoints::Dccp(dccp), Body::Dccp { bytes, .. }) => {
                    dccp.on_data_side(now, bytes, packet.ecn);
                }
                (Endpoints::Session(session), Body::Dccp { bytes, .. }) => {
                    session.on_data_side(now, bytes, packet.ecn, packet.path);
                }
                _ => {}
            }
        } else if let (Endpoints::Dccp(dccp), Body::Dccp { bytes, .. }) =
            (&mut self.endpoints, &packet.body)
        {
            dccp.on_feedback_side(now, bytes, packet.ecn, now < self.stop);
        } else if let (Endpoints::Session(session), Body::Dccp { bytes, .. }) =
            (&mut self.endpoints, &packet.body)
        {
            session.on_feedback_side(now, bytes, packet.ecn, packet.path, now < self.stop);
        } else if let (Endpoints::Web(web), Body::WebAck { transfer, ack }) =
            (&mut self.endpoints, &packet.body)
        {
            web.on_ack(now, *transfer, ack, now < self.stop);
        } else if let (Endpoints::Tcp(tcp), Body::TcpAck(ack)) = (&mut self.endpoints, &packet.body)
        {
            if now < self.stop {
                tcp.sender.on_ack(now, ack);
                if let Some(srtt) = tcp.sender.srtt() {
                    tcp.srtt_sum_s += srtt.as_secs_f64();
                    tcp.srtt_samples += 1;
                }
            }
        }
        self.service(now, out);
    }

    fn record_data(&mut self, now: Instant, sent_at: Instant, bytes: u64, path: u8) {
        let stats = &mut self.stats;
        stats.bytes_received += bytes;
        stats.delay_sum_s += now.saturating_duration_since(sent_at).as_secs_f64();
        stats.delay_samples += 1;
        let bin = (now.as_nanos() / SERIES_BIN.as_nanos() as u64) as usize;
        add_to_bin(&mut stats.bins, bin, bytes);
        if !self.via.is_empty() {
            if stats.path_bins.len() < self.via.len() {
                stats.path_bins.resize(self.via.len(), Vec::new());
            }
            if let Some(bins) = stats.path_bins.get_mut(usize::from(path)) {
                add_to_bin(bins, bin, bytes);
            }
        }
    }

    /// The time-series row at `at` for the bin that ends there (`None`
    /// before the first bin).
    /// `sent` and `lost` are the data packets sent and lost in the interval.
    pub(super) fn sample(
        &self,
        at: Instant,
        bin: Option<usize>,
        interval_s: f64,
        sent: u64,
        lost: u64,
    ) -> FlowSample {
        let bytes = bin
            .and_then(|b| self.stats.bins.get(b))
            .copied()
            .unwrap_or(0);
        let (allowed_rate_bps, rtt_s, loss_event_rate) = match &self.endpoints {
            Endpoints::Tcp(tcp) => {
                let srtt = tcp.sender.srtt();
                (
                    srtt.filter(|r| !r.is_zero())
                        .map(|r| tcp.sender.cwnd() as f64 * 8.0 / r.as_secs_f64()),
                    srtt.map(|r| r.as_secs_f64()),
                    None,
                )
            }
            Endpoints::Udp(_) | Endpoints::Web(_) => (None, None, None),
            Endpoints::Dccp(dccp) => (
                dccp.allowed_rate_bps(),
                dccp.rtt().map(|r| r.as_secs_f64()),
                if dccp.ccid() == Ccid::Ccid2 {
                    None
                } else {
                    dccp.current_loss_event_rate()
                },
            ),
            Endpoints::Session(session) => (
                session.allowed_rate_bps(),
                session.rtt().map(|r| r.as_secs_f64()),
                session.current_loss_event_rate(),
            ),
        };
        let connections = self.connection_count();
        FlowSample {
            time_s: at.as_secs_f64(),
            throughput_bps: bytes as f64 * 8.0 / interval_s,
            allowed_rate_bps,
            rtt_s,
            loss_event_rate,
            connections,
            packets_sent: sent,
            packets_lost: lost,
            buffer_s: self
                .layered()
                .map(|app| app.receiver().occupancy().as_secs_f64()),
            enhancement_share: self.layered().map(LayeredApp::schedule_share),
            proxy_buffer_bytes: self.proxy_figures().map(|f| f.bytes as f64),
            path_throughput_bps: (0..self.via.len())
                .map(|path| {
                    let bytes = bin
                        .and_then(|b| self.stats.path_bins.get(path)?.get(b))
                        .copied()
                        .unwrap_or(0);
                    bytes as f64 * 8.0 / interval_s
                })
                .collect(),
        }
    }

    /// A multi-connection flow's connection count now (the fractional n of
    /// the aggregate controller); `None` for other flows.
    pub(super) fn connection_count(&self) -> Option<f64> {
        match &self.endpoints {
            Endpoints::Session(session) => Some(session.connection_count()),
            _ => None,
        }
    }

    /// Data packet `id` of this flow arrived or was lost (`lost`).
    pub(super) fn data_resolved(&mut self, id: u64, lost: bool) {
        let connections = match &self.endpoints {
            Endpoints::Session(session) => session.connection_count(),
            _ => return,
        };
        if let Some(runs) = &mut self.loss_runs {
            runs.resolved(id, lost, connections);
        }
    }

    /// Counts an interval that ended with `connections` open (rounded to
    /// the nearest whole count, at least one) with `sent` and `lost` data
    /// packets.
    pub(super) fn tally_connections(&mut self, connections: f64, sent: u64, lost: u64) {
        if !connections.is_finite() {
            return;
        }
        // A count beyond any controller's limit is not tallied (the
        // aggregate's fractional n stays far below it).
        let index = connections.round().max(1.0) as usize - 1;
        if index >= MAX_TALLIED_COUNT {
            return;
        }
        let tallies = &mut self.stats.by_connections;
        if tallies.len() <= index {
            tallies.resize(index + 1, CountTally::default());
        }
        if let Some(tally) = tallies.get_mut(index) {
            tally.intervals += 1;
            tally.packets_sent += sent;
            tally.packets_lost += lost;
        }
    }

    /// A media flow's verdict (`None` for other flows).
    pub(super) fn media_report(
        &self,
    ) -> Option<Result<fairstream_media::stream::MediaReport, fairstream_media::stream::StreamError>>
    {
        self.media().map(super::media::MediaApp::report)
    }

    /// A `cc = "buffer"` flow's application ends.
    pub(super) fn layered(&self) -> Option<&LayeredApp> {
        match &self.endpoints {
            Endpoints::Dccp(dccp) => dccp.layered.as_ref(),
            _ => None,
        }
    }

    /// A media flow's application ends, to change.
    pub(super) fn media_mut(&mut self) -> Option<&mut super::media::MediaApp> {
        match &mut self.endpoints {
            Endpoints::Dccp(dccp) => dccp.media.as_mut(),
            Endpoints::Session(session) => session.media.as_mut(),
            Endpoints::Tcp(tcp) => tcp.media.as_mut().map(|m| &mut m.app),
            _ => None,
        }
    }

    /// A media flow's application ends.
    pub(super) fn media(&self) -> Option<&super::media::MediaApp> {
        match &self.endpoints {
            Endpoints::Dccp(dccp) => dccp.media.as_ref(),
            Endpoints::Session(session) => session.media.as_ref(),
            Endpoints::Tcp(tcp) => tcp.media.as_ref().map(|m| &m.app),
            _ => None,
        }
    }

    /// In-order bytes handed to the receiving application.
    pub(super) fn goodput_bytes(&self) -> u64 {
        match &self.endpoints {
            Endpoints::Tcp(tcp) => tcp.receiver.bytes_delivered(),
            Endpoints::Udp(_) => self.stats.bytes_received,
            Endpoints::Web(web) => web.goodput_bytes(),
            Endpoints::Dccp(dccp) => dccp.stats.app_bytes_delivered,
            Endpoints::Session(session) => session.stats.app_bytes_delivered,
        }
    }

    /// A voice flow's call.
    pub(super) fn voice(&self) -> Option<&VoiceApp> {
        match &self.endpoints {
            Endpoints::Dccp(dccp) => dccp.voice.as_ref(),
            _ => None,
        }
    }

    /// A web flow's users and transfers.
    pub(super) fn web(&self) -> Option<&WebEnds> {
        match &self.endpoints {
            Endpoints::Web(web) => Some(web),
            _ => None,
        }
    }

    /// A multi-connection flow's sessions.
    pub(super) fn session(&self) -> Option<&SessionEnds> {
        match &self.endpoints {
            Endpoints::Session(session) => Some(session),
            _ => None,
        }
    }

    /// Loss indications (fast retransmits and timeouts) per segment sent,
    /// for TCP; `None` for flows without a loss-event notion.
    pub(super) fn loss_event_rate(&self) -> Option<f64> {
        match &self.endpoints {
            Endpoints::Tcp(tcp) => {
                let sent = tcp.sender.segments_sent();
                (sent > 0).then(|| {
                    (tcp.sender.fast_retransmits() + tcp.sender.timeouts()) as f64 / sent as f64
                })
            }
            Endpoints::Udp(_) => None,
            Endpoints::Web(web) => web.loss_event_rate(),
            // TFRC: loss events the receiver started per data packet it
            // received (the long-run p of RFC 5348 §5); CCID 2: congestion
            // events per data packet sent.
            Endpoints::Dccp(dccp) => {
                let packets = if dccp.ccid() == Ccid::Ccid2 {
                    self.stats.packets_sent
                } else {
                    dccp.stats.data_packets_received
                };
                (packets > 0).then(|| dccp.stats.loss_events as f64 / packets as f64)
            }
            Endpoints::Session(session) => {
                let packets = session.stats.data_packets_received;
                (packets > 0).then(|| session.stats.loss_events as f64 / packets as f64)
            }
        }
    }

    /// The mean of SRTT over the ACKs the sender took (TCP only).
    pub(super) fn mean_rtt_s(&self) -> Option<f64> {
        match &self.endpoints {
            Endpoints::Tcp(tcp) => {
                (tcp.srtt_samples > 0).then(|| tcp.srtt_sum_s / tcp.srtt_samples as f64)
            }
            Endpoints::Udp(_) => None,
            Endpoints::Web(web) => (web.stats.srtt_samples > 0)
                .then(|| web.stats.srtt_sum_s / web.stats.srtt_samples as f64),
            Endpoints::Dccp(dccp) => (dccp.stats.rtt_samples > 0)
                .then(|| dccp.stats.rtt_sum_s / dccp.stats.rtt_samples as f64),
            Endpoints::Session(session) => (session.stats.rtt_samples > 0)
                .then(|| session.stats.rtt_sum_s / session.stats.rtt_samples as f64),
        }
    }
}

/// The endpoints of a DCCP flow with `ccid`.
#[allow(clippy::too_many_arguments)]
fn dccp(
    index: usize,
    seed: u64,
    start: Instant,
    ccid: Ccid,
    fixed_rate: Rate,
    packet_size: Bytes,
    app_rate: Option<Rate>,
) -> Endpoints {
    let size = packet_size_u32(packet_size.get());
    let config = match app_rate {
        Some(rate) => SourceConfig::Cbr {
            rate,
            packet_size: size,
        },
        None => SourceConfig::Saturating { packet_size: size },
    };
    let source = Source::new(
        config,
        start,
        SimRng::for_element(seed, &format!("flow:{index}:source")),
    );
    Endpoints::Dccp(Box::new(DccpEnds::new(
        ccid,
        fixed_rate,
        size as usize,
        index,
        source,
        SimRng::for_element(seed, &format!("flow:{index}:dccp")),
    )))
}

fn packet_size_u32(bytes: u64) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// The random part of `flow`'s start: uniform in [0, `start_jitter`), from
/// the run's `seed` and the flow's `index` (zero without `start_jitter`, and
/// then no draw).
fn start_jitter(flow: &Flow, index: usize, seed: u64) -> Duration {
    if flow.start_jitter.is_zero() {
        return Duration::ZERO;
    }
    let mut rng = SimRng::for_element(seed, &format!("flow:{index}:start"));
    flow.start_jitter.mul_f64(rng.next_f64())
}

/// Adds `bytes` to `bins[bin]`, growing `bins` to reach it.
fn add_to_bin(bins: &mut Vec<u64>, bin: usize, bytes: u64) {
    if bins.len() <= bin {
        bins.resize(bin + 1, 0);
    }
    if let Some(slot) = bins.get_mut(bin) {
        *slot += bytes;
    }
}
