//! The event loop that runs a [`Scenario`]: flows' endpoints on their
//! hosts, their packets over the [`Network`], all in virtual time.
//!
//! Events are ordered by (time, insertion sequence) in an
//! [`EventQueue`]; the same scenario and seed therefore give the same run,
//! event for event. Three kinds exist:
//!
//! - a link direction's wake-up, when its [`LinkDirection::next_event`] is
//!   due: it hands over the packets that crossed, each scheduled to arrive
//!   at the far end;
//! - a packet's arrival at the far end of a hop: it is offered to the next
//!   hop of its flow's static route at once, or handed to the destination
//!   host;
//! - a flow's wake-up: its start, a TCP timer (retransmission or delayed
//!   ACK) or its source's next message.
//!
//! Each link direction and flow has at most one live wake-up: the runner
//! remembers the time it scheduled and ignores wake-ups that were
//! superseded by an earlier one.
//!
//! Flows are TCP bulk transfers (NewReno, without SACK unless asked, or
//! CUBIC with SACK), CBR and on-off UDP sources, and DCCP connections
//! (`tfrc`, `tfrc-sp`, `ccid2`) between two real `fairstream-proto`
//! endpoints whose packets are the bytes they wrote. The pcap capture
//! writes a TCP ACK's header without its SACK option (its length on the
//! link does count the option).
//!
//! Besides the [`Summary`], a run keeps [`TimeSeries`] (a row every 100 ms
//! per flow and link direction; [`Simulation::without_series`] turns them
//! off) and, when asked, writes a pcap capture per link direction
//! ([`Simulation::capture_with`]).
//!
//! [`LinkDirection::next_event`]: crate::link::LinkDirection::next_event

mod bursts;
mod capture;
mod dccp;
mod flow;
mod layered;
mod media;
mod relay;
mod series;
mod session;
mod store;
mod summary;
mod tcp_media;
mod voice;
mod web;

use std::io::{self, Write};

use fairstream_proto::capture::PcapWriter;
use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;
use thiserror::Error;

use crate::engine::EventQueue;
use crate::link::{Delivery, EnqueueOutcome};
use crate::network::{direction_index, Body, Network, NetworkError, Packet, PacketRef};
use crate::scenario::{Hop, RelayRole, Scenario};
use crate::tcp::TcpConfigError;

use capture::{Captures, FlowAddresses};
use dccp::node_address;
use flow::FlowState;
pub use media::MediaSetupError;
use series::LinkCounters;
pub use series::{FlowSample, FlowSeries, LinkSample, LinkSeries, TimeSeries, SERIES_INTERVAL};
use store::PacketStore;
pub use summary::{
    ArqOutcome, BodOutcome, BodPoolOutcome, BufferOutcome, ConnectionsShare, FlowSummary,
    LinkSummary, MediaOutcome, PacketAccounting, PathOutcome, RateStats, Summary, TddOutcome,
    VoiceOutcome, WebOutcome,
};

/// What a media flow leaves for `--out`.
#[derive(Clone, Debug, PartialEq)]
pub struct MediaOutput {
    /// The flow's name.
    pub flow: String,
    /// The H.264 stream sent (Annex B; empty for a trace source).
    pub video: Vec<u8>,
    /// Per frame: type, size, packets, arrival, deadline, shown, PSNR, SSIM.
    pub frames_csv: String,
    /// EvalVid's sender trace.
    pub st: String,
    /// EvalVid's sender dump.
    pub sd: String,
    /// EvalVid's receiver dump.
    pub rd: String,
    /// The FEC code (n, k) of the flow, if it used one.
    pub fec: Option<(usize, usize)>,
    /// The receiver dump of the FEC parity packets that arrived (empty
    /// without FEC): what `fairstream evaluate --received-fec` reads.
    pub rd_fec: String,
    /// First and last arrival per GOP.
    pub gops: Vec<fairstream_media::playout::GopArrival>,
    /// The player model that judged the flow.
    pub player: fairstream_media::playout::Player,
    /// The playback buffer's occupancy over time (paper 001 Fig. 3).
    pub buffer: Vec<fairstream_media::playout::BufferSample>,
    /// The same as CSV: `time_s,buffered_s,buffered_frames,state`.
    pub buffer_csv: String,
}

/// How many events pass between two calls of [`Simulation::run_with`]'s
/// progress hook.
pub const PROGRESS_EVENTS: u64 = 1 << 14;

/// A scenario the simulator cannot run.
#[derive(Debug, Error)]
pub enum SimError {
    /// The network could not be built.
    #[error(transparent)]
    Network(#[from] NetworkError),
    /// A flow's TCP parameters are invalid.
    #[error("flow {flow}: {source}")]
    Tcp {
        /// The flow's name.
        flow: String,
        /// What was wrong.
        #[source]
        source: TcpConfigError,
    },
    /// A flow's media source could not be prepared.
    #[error("flow {flow}: media: {source}")]
    Media {
        /// The flow's name.
        flow: String,
        /// What was wrong.
        #[source]
        source: media::MediaSetupError,
    },
    /// A multi-connection flow's session could not be set up.
    #[error("flow {flow}: session: {reason}")]
    Session {
        /// The flow's name.
        flow: String,
        /// What was wrong.
        reason: String,
    },
    /// A flow's endpoints have no route between them.
    #[error("flow {flow}: no route from its sender to its receiver")]
    NoRoute {
        /// The flow's name.
        flow: String,
    },
}

/// Something due at a moment of virtual time. Small (16 bytes) on purpose:
/// the event queue moves its entries on every push and pop, so a packet
/// waits in the [`PacketStore`] and its event carries only the slot.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A link direction's `next_event` is due (`direction`: 0 forward, 1
    /// reverse, as [`direction_index`]).
    LinkWake { link: usize, direction: u8 },
    /// The packet in store slot `slot` reached the far end of hop `hop`
    /// (an index into its flow's route).
    Arrive { slot: u32, hop: u32 },
    /// A flow's start or timer is due.
    FlowWake { flow: usize },
}

/// A running simulation of one scenario.
#[derive(Debug)]
pub struct Simulation {
    seed: u64,
    end: Instant,
    events: EventQueue<Event>,
    network: Network,
    /// Per link, per direction: the wake-up currently scheduled.
    link_wakes: Vec<[Option<Instant>; 2]>,
    /// Every packet in the network; links carry their [`PacketRef`]s.
    store: PacketStore,
    /// Scratch buffers, kept so that handling an event allocates nothing:
    /// what a link direction delivered, and what a flow sends.
    deliveries: Vec<Delivery<PacketRef>>,
    outbox: Vec<(bool, Body)>,
    flows: Vec<FlowState>,
    next_packet_id: u64,
    accounting: PacketAccounting,
    /// The time of the next time-series row.
    next_sample: Instant,
    /// Whether rows are kept ([`Simulation::without_series`]).
    record_series: bool,
    /// The flows whose summary needs the sampler even without series:
    /// multi-connection flows tally their intervals by connection count.
    tallied_flows: Vec<usize>,
    series: TimeSeries,
    link_counters: Vec<[LinkCounters; 2]>,
    /// Per flow, the data packets sent and lost at the last series row.
    flow_counters: Vec<(u64, u64)>,
    addresses: Vec<FlowAddresses>,
    captures: Option<Captures>,
    /// Per flow, the media verdict once the run is over.
    media: Vec<Option<MediaOutcome>>,
    summary: Option<Summary>,
}

impl Simulation {
    /// Builds the network and flows of `scenario`, ready to [`run`](Self::run).
    pub fn new(scenario: &Scenario) -> Result<Simulation, SimError> {
        let network = Network::build(scenario)?;
        let seed = scenario.run().seed;
        let end = Instant::ZERO + scenario.run().duration;
        let mut flows = Vec::with_capacity(scenario.flows().len());
        for (index, flow) in scenario.flows().iter().enumerate() {
            let no_route = || SimError::NoRoute {
                flow: flow.name.clone(),
            };
            let paths = scenario.paths(flow).ok_or_else(no_route)?;
            if paths.iter().flatten().any(Vec::is_empty) {
                return Err(no_route());
            }
            let via = flow
                .via
                .iter()
                .filter_map(|node| scenario.nodes().get(node.0))
                .map(|node| node.name.clone())
                .collect();
            flows.push(FlowState::new(flow, index, seed, end, paths, via)?);
        }
        // The legs of each proxy share its buffer.
        for index in 0..flows.len() {
            let Some(RelayRole::Downstream {
                upstream,
                buffer_bytes,
            }) = flows.get(index).and_then(|f| f.relay)
            else {
                continue;
            };
            if upstream >= index {
                continue;
            }
            let (before, after) = flows.split_at_mut(index);
            if let (Some(up), Some(down)) = (before.get_mut(upstream), after.first_mut()) {
                down.attach_proxy(up, relay::SharedRelay::new(buffer_bytes));
            }
        }
        let mut events = EventQueue::new();
        for (index, flow) in flows.iter_mut().enumerate() {
            events.schedule(flow.start, Event::FlowWake { flow: index });
            flow.wake_at = Some(flow.start);
        }
        let tallied_flows = flows
            .iter()
            .enumerate()
            .filter(|(_, flow)| flow.connection_count().is_some())
            .map(|(index, _)| index)
            .collect();
        let addresses = scenario
            .flows()
            .iter()
            .enumerate()
            .map(|(index, flow)| {
                FlowAddresses::new(index, node_address(flow.from.0), node_address(flow.to.0))
            })
            .collect();
        let series = TimeSeries {
            flows: flows
                .iter()
                .map(|f| FlowSeries {
                    name: f.name.clone(),
                    via: f.via.clone(),
                    rows: Vec::new(),
                })
                .collect(),
            links: network
                .links()
                .iter()
                .flat_map(|link| {
                    let [a, b] = &link.ends;
                    [format!("{a}->{b}"), format!("{b}->{a}")].map(|direction| LinkSeries {
                        name: link.name.clone(),
                        direction,
                        rows: Vec::new(),
                    })
                })
                .collect(),
        };
        Ok(Simulation {
            seed,
            end,
            events,
            link_wakes: vec![[None; 2]; network.links().len()],
            store: PacketStore::default(),
            deliveries: Vec::new(),
            outbox: Vec::new(),
            link_counters: vec![[LinkCounters::default(); 2]; network.links().len()],
            flow_counters: vec![(0, 0); scenario.flows().len()],
            network,
            flows,
            next_packet_id: 0,
            accounting: PacketAccounting::default(),
            next_sample: Instant::ZERO + SERIES_INTERVAL,
            record_series: true,
            tallied_flows,
            series,
            addresses,
            captures: None,
            media: Vec::new(),
            summary: None,
        })
    }

    /// Keeps no time series: [`series`](Self::series) stays empty. The
    /// summary is the same, byte for byte (the sampler still tallies what
    /// the summary reports per connection count, and adds no events); a
    /// run saves the rows' memory, a row per flow and link direction every
    /// 100 ms of simulated time, and the time to make them. Call before
    /// [`run`](Self::run).
    pub fn without_series(mut self) -> Simulation {
        self.record_series = false;
        self
    }

    /// Captures every packet that crosses each link direction: `open` is
    /// called once per direction with the link's name (`a-b`) and the
    /// direction (`a->b`) and returns where its pcap stream goes. Call
    /// before [`run`](Self::run); [`finish_captures`](Self::finish_captures)
    /// flushes them.
    pub fn capture_with(
        &mut self,
        mut open: impl FnMut(&str, &str) -> io::Result<Box<dyn Write>>,
    ) -> io::Result<()> {
        let mut writers = Vec::with_capacity(self.network.links().len());
        for link in self.network.links() {
            let [a, b] = &link.ends;
            let forward = PcapWriter::new(open(&link.name, &format!("{a}->{b}"))?)?;
            let reverse = PcapWriter::new(open(&link.name, &format!("{b}->{a}"))?)?;
            writers.push([forward, reverse]);
        }
        self.captures = Some(Captures::new(writers));
        Ok(())
    }

    /// Flushes the captures opened by [`capture_with`](Self::capture_with)
    /// and returns how many packets they hold; the first write error, if
    /// any, is returned instead.
    pub fn finish_captures(&mut self) -> io::Result<u64> {
        match self.captures.take() {
            Some(captures) => captures.finish(),
            None => Ok(0),
        }
    }

    /// The files a media flow's run leaves (after [`run`](Self::run)): per
    /// flow with media, its per-frame table, EvalVid's st, sd and rd files,
    /// its GOP arrivals and its playback buffer over time.
    pub fn media_outputs(&self) -> Vec<MediaOutput> {
        self.flows
            .iter()
            .zip(&self.media)
            .filter_map(|(flow, outcome)| {
                let app = flow.media()?;
                let Some(MediaOutcome::Report(report)) = outcome else {
                    return None;
                };
                let (st, sd, rd) = app.evalvid_files();
                Some(MediaOutput {
                    flow: flow.name.clone(),
                    video: app.video(),
                    frames_csv: app.frames_csv(report),
                    st,
                    sd,
                    rd,
                    fec: app.fec().map(|f| (f.n, f.k)),
                    rd_fec: app.parity_dump(),
                    gops: report.playout.gops.clone(),
                    player: report.playout.player,
                    buffer: report.playout.buffer.clone(),
                    buffer_csv: fairstream_media::playout::format_buffer_csv(
                        &report.playout.buffer,
                    ),
                })
            })
            .collect()
    }

    /// The time series recorded so far (complete after [`run`](Self::run)).
    pub fn series(&self) -> &TimeSeries {
        &self.series
    }

    /// Runs to the scenario's end (once; later calls return the same
    /// summary) and reports what was measured.
    pub fn run(&mut self) -> Summary {
        self.run_with(|_| {})
    }

    /// Runs like [`run`](Self::run), calling `progress` with the simulated
    /// time every [`PROGRESS_EVENTS`] events (for a progress bar; the hook
    /// cannot change the run).
    pub fn run_with(&mut self, mut progress: impl FnMut(Instant)) -> Summary {
        if let Some(summary) = &self.summary {
            return summary.clone();
        }
        let mut count = 0u64;
        while let Some((now, event)) = self.events.pop_until(self.end) {
            // Checked here: a row is due once in many events.
            if self.next_sample <= now {
                self.sample_until(now);
            }
            count += 1;
            if count % PROGRESS_EVENTS == 0 {
                progress(now);
            }
            match event {
                Event::LinkWake { link, direction } => {
                    self.on_link_wake(now, link, usize::from(direction));
                }
                Event::Arrive { slot, hop } => self.on_arrive(now, slot, hop),
                Event::FlowWake { flow } => self.on_flow_wake(now, flow),
            }
        }
        self.events.advance_to(self.end);
        self.sample_until(self.end);
        progress(self.end);
        // A proxy's client judges the packets by when the server sent them.
        for index in 0..self.flows.len() {
            if let Some(RelayRole::Downstream { upstream, .. }) = self.flows[index].relay {
                let sent = self
                    .flows
                    .get(upstream)
                    .and_then(FlowState::media)
                    .map(|app| app.send_times().clone());
                if let (Some(sent), Some(app)) = (sent, self.flows[index].media_mut()) {
                    app.adopt_send_times(sent);
                }
            }
        }
        self.media = self
            .flows
            .iter()
            .map(|flow| {
                flow.media_report().map(|report| match report {
                    Ok(report) => MediaOutcome::Report(Box::new(report)),
                    Err(error) => MediaOutcome::Error {
                        error: error.to_string(),
                    },
                })
            })
            .collect();
        let summary = self.summarise();
        self.summary = Some(summary.clone());
        summary
    }

    fn on_link_wake(&mut self, now: Instant, link: usize, direction: usize) {
        let Some(slot) = self
            .link_wakes
            .get_mut(link)
            .and_then(|l| l.get_mut(direction))
        else {
            return;
        };
        if *slot != Some(now) {
            return; // superseded by an earlier wake-up
        }
        *slot = None;
        let Some(link_direction) = self.network.by_index_mut(link, direction) else {
            return;
        };
        let mut deliveries = std::mem::take(&mut self.deliveries);
        link_direction.process_into(now, &mut deliveries);
        let lost = link_direction.take_lost_packets();
        let dropped = link_direction.take_dropped_packets();
        self.count_queue_drops(dropped.into_iter().map(|drop| drop.packet));
        self.accounting.channel_losses += lost.len() as u64;
        for handle in lost {
            let Some(packet) = self.store.take(handle.slot) else {
                continue;
            };
            if let Some(flow) = self.flows.get_mut(packet.flow) {
                if packet.toward_receiver {
                    flow.stats.channel_losses += 1;
                    flow.data_resolved(packet.id, true);
                }
                flow.recycle(packet);
            }
        }
        for delivery in deliveries.drain(..) {
            let handle = delivery.packet;
            let Some(packet) = self.store.get_mut(handle.slot) else {
                continue;
            };
            // A queue of this hop may have marked it CE.
            packet.ecn = handle.ecn;
            if let (Some(captures), Some(addresses)) =
                (self.captures.as_mut(), self.addresses.get(packet.flow))
            {
                captures.record(link, direction, delivery.at, packet, addresses);
            }
            self.accounting.in_flight_between_links += 1;
            self.events.schedule(
                delivery.at,
                Event::Arrive {
                    slot: handle.slot,
                    hop: handle.hop,
                },
            );
        }
        self.deliveries = deliveries;
        self.arm_link(now, link, direction);
    }

    /// The packet in `slot` crossed hop `hop` of its route: on to the next
    /// hop, or to its destination host.
    fn on_arrive(&mut self, now: Instant, slot: u32, hop: u32) {
        self.accounting.in_flight_between_links -= 1;
        let Some(packet) = self.store.get_mut(slot) else {
            return;
        };
        let Some(flow) = self.flows.get_mut(packet.flow) else {
            self.store.take(slot);
            return;
        };
        let next_hop = hop.saturating_add(1);
        if let Some(next) = flow
            .route(packet.toward_receiver, packet.path)
            .get(next_hop as usize)
            .copied()
        {
            self.offer(now, next, slot, next_hop);
            return;
        }
        let Some(packet) = self.store.take(slot) else {
            return;
        };
        self.accounting.delivered += 1;
        if packet.toward_receiver {
            flow.data_resolved(packet.id, false);
        }
        let index = packet.flow;
        let mut out = std::mem::take(&mut self.outbox);
        flow.on_arrival(now, &packet, &mut out);
        flow.recycle(packet);
        self.send_all(now, index, out);
    }

    fn on_flow_wake(&mut self, now: Instant, index: usize) {
        let Some(flow) = self.flows.get_mut(index) else {
            return;
        };
        if flow.wake_at != Some(now) {
            return; // superseded by an earlier wake-up
        }
        flow.wake_at = None;
        let mut out = std::mem::take(&mut self.outbox);
        flow.service(now, &mut out);
        self.send_all(now, index, out);
    }

    /// Puts what flow `index` sent on its routes and re-arms its timers;
    /// `out` (emptied) becomes the scratch buffer again.
    fn send_all(&mut self, now: Instant, index: usize, mut out: Vec<(bool, Body)>) {
        for (toward_receiver, body) in out.drain(..) {
            let Some((path, first)) = self.flows.get(index).and_then(|f| {
                let path = f.path_of(toward_receiver, &body);
                Some((path, f.route(toward_receiver, path).first().copied()?))
            }) else {
                continue;
            };
            let ecn = self
                .flows
                .get(index)
                .map_or(Ecn::NotEct, |f| f.codepoint(&body));
            let class = self.flows.get(index).map(|f| f.class).unwrap_or_default();
            let packet = Packet {
                id: self.next_packet_id,
                flow: index,
                toward_receiver,
                path,
                sent_at: now,
                ecn,
                class,
                body,
            };
            self.next_packet_id += 1;
            self.accounting.created += 1;
            if toward_receiver {
                if let Some(runs) = self.flows.get_mut(index).and_then(|f| f.loss_runs.as_mut()) {
                    runs.sent(packet.id);
                }
            }
            if let Some(slot) = self.store.insert(packet) {
                self.offer(now, first, slot, 0);
            }
        }
        self.outbox = out;
        self.rearm(now, index);
        // What the upstream leg of a proxy took may wake the downstream.
        if let Some(RelayRole::Upstream { downstream }) =
            self.flows.get(index).and_then(|f| f.relay)
        {
            self.rearm(now, downstream);
        }
    }

    /// Schedules flow `index`'s next wake-up if it is earlier than the one
    /// pending.
    fn rearm(&mut self, now: Instant, index: usize) {
        let Some(flow) = self.flows.get_mut(index) else {
            return;
        };
        if let Some(next) = flow.next_wake(now) {
            if flow.wake_at.is_none_or(|at| next < at) {
                flow.wake_at = Some(next);
                self.events.schedule(next, Event::FlowWake { flow: index });
            }
        }
    }

    /// Offers the packet in store slot `slot` to the link direction of
    /// `hop`, the `index`-th of its route, at `now`.
    fn offer(&mut self, now: Instant, hop: Hop, slot: u32, index: u32) {
        let (Some(packet), Some(link_direction)) =
            (self.store.get_mut(slot), self.network.direction_mut(hop))
        else {
            self.store.take(slot);
            return;
        };
        let handle = PacketRef::new(packet, slot, index);
        let refused = match link_direction.enqueue(now, handle) {
            EnqueueOutcome::Dropped(drop) => Some(drop.packet),
            EnqueueOutcome::Queued => None,
        };
        // FQ-CoDel may push out another packet, CoDel drop at the dequeue
        // an idle link does at once.
        let dropped = link_direction.take_dropped_packets();
        self.count_queue_drops(
            refused
                .into_iter()
                .chain(dropped.into_iter().map(|d| d.packet)),
        );
        self.arm_link(now, hop.link.0, direction_index(hop.direction));
    }

    /// Accounts for packets a queue dropped, data packets also to their
    /// flow, and lets them go.
    fn count_queue_drops(&mut self, handles: impl Iterator<Item = PacketRef>) {
        for handle in handles {
            self.accounting.queue_drops += 1;
            let Some(packet) = self.store.take(handle.slot) else {
                continue;
            };
            if let Some(flow) = self.flows.get_mut(packet.flow) {
                if packet.toward_receiver {
                    flow.stats.queue_drops += 1;
                    flow.data_resolved(packet.id, true);
                }
                flow.recycle(packet);
            }
        }
    }

    /// Schedules a wake-up for a link direction if it needs one earlier than
    /// the one already scheduled.
    fn arm_link(&mut self, _now: Instant, link: usize, direction: usize) {
        let next = self
            .network
            .by_index_mut(link, direction)
            .and_then(|d| d.next_event());
        let (Some(next), Some(slot)) = (
            next,
            self.link_wakes
                .get_mut(link)
                .and_then(|l| l.get_mut(direction)),
        ) else {
            return;
        };
        if slot.is_none_or(|at| next < at) {
            *slot = Some(next);
            // `direction` indexes a two-element array: 0 or 1.
            let direction = u8::from(direction == 1);
            self.events
                .schedule(next, Event::LinkWake { link, direction });
        }
    }

    /// Records the time-series rows due at or before `now`, before the
    /// events of `now` change anything.
    fn sample_until(&mut self, now: Instant) {
        while self.next_sample <= now {
            let at = self.next_sample;
            self.sample(at);
            self.next_sample = at + SERIES_INTERVAL;
        }
    }

    fn sample(&mut self, at: Instant) {
        if !self.record_series {
            self.tally_connections();
            return;
        }
        let interval_s = SERIES_INTERVAL.as_secs_f64();
        let bin = (at.as_nanos() / SERIES_INTERVAL.as_nanos() as u64) as usize;
        for ((flow, series), last) in self
            .flows
            .iter_mut()
            .zip(self.series.flows.iter_mut())
            .zip(self.flow_counters.iter_mut())
        {
            let lost = flow.stats.queue_drops + flow.stats.channel_losses;
            let sent_in = flow.stats.packets_sent - last.0;
            let lost_in = lost - last.1;
            *last = (flow.stats.packets_sent, lost);
            let row = flow.sample(at, bin.checked_sub(1), interval_s, sent_in, lost_in);
            if let Some(connections) = row.connections {
                flow.tally_connections(connections, sent_in, lost_in);
            }
            series.rows.push(row);
        }
        let mut index = 0;
        for (link, counters) in self
            .network
            .links()
            .iter()
            .zip(self.link_counters.iter_mut())
        {
            for (direction, last) in link.directions.iter().zip(counters.iter_mut()) {
                let stats = direction.stats();
                let row = LinkSample {
                    time_s: at.as_secs_f64(),
                    queue_packets: direction.queue_len_packets() as u64,
                    queue_bytes: direction.queue_len_bytes(),
                    throughput_bps: (stats.wire_bytes_sent - last.wire_bytes) as f64 * 8.0
                        / interval_s,
                    queue_drops: stats.queue_drops - last.queue_drops,
                    channel_losses: stats.channel_losses - last.channel_losses,
                    ce_marked: stats.ce_marked - last.ce_marked,
                };
                *last = LinkCounters {
                    wire_bytes: stats.wire_bytes_sent,
                    queue_drops: stats.queue_drops,
                    channel_losses: stats.channel_losses,
                    ce_marked: stats.ce_marked,
                };
                if let Some(series) = self.series.links.get_mut(index) {
                    series.rows.push(row);
                }
                index += 1;
            }
        }
    }

    /// The part of [`sample`](Self::sample) the summary needs: each
    /// multi-connection flow's interval tallied by its connection count,
    /// with the data packets sent and lost in it.
    fn tally_connections(&mut self) {
        for &index in &self.tallied_flows {
            let (Some(flow), Some(last)) =
                (self.flows.get_mut(index), self.flow_counters.get_mut(index))
            else {
                continue;
            };
            let lost = flow.stats.queue_drops + flow.stats.channel_losses;
            let sent_in = flow.stats.packets_sent - last.0;
            let lost_in = lost - last.1;
            *last = (flow.stats.packets_sent, lost);
            if let Some(connections) = flow.connection_count() {
                flow.tally_connections(connections, sent_in, lost_in);
            }
        }
    }

    fn summarise(&self) -> Summary {
        let links: Vec<LinkSummary> = self
            .network
            .links()
            .iter()
            .flat_map(|link| summary::link_summaries(link, self.end))
            .collect();
        let mut packets = self.accounting;
        packets.in_links = links.iter().map(|l| l.packets_in_flight).sum();
        Summary {
            seed: self.seed,
            sim_time_s: self.end.as_secs_f64(),
            events: self.events.processed(),
            conservation_ok: links.iter().all(|l| l.conservation_ok) && packets.holds(),
            packets,
            flows: self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    summary::flow_summary(f, self.end, self.media.get(i).cloned().flatten())
                })
                .collect(),
            links,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_stay_small() {
        // The event queue moves whole entries on every push and pop: a
        // packet must not travel inside an event (issue 18).
        assert!(std::mem::size_of::<Event>() <= 16);
    }
}
