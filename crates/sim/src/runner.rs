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
//! This step runs TCP NewReno, CBR and on-off flows; the DCCP transports
//! (`tfrc`, `tfrc-sp`, `ccid2`) are refused with [`SimError::Unsupported`].
//! TCP's `sack` option is accepted and ignored (the model has no SACK).
//!
//! [`LinkDirection::next_event`]: crate::link::LinkDirection::next_event

mod flow;
mod summary;

use fairstream_proto::time::Instant;
use thiserror::Error;

use crate::engine::EventQueue;
use crate::link::EnqueueOutcome;
use crate::network::{direction_index, Body, Network, NetworkError, Packet};
use crate::scenario::{Hop, Scenario};
use crate::tcp::TcpConfigError;

use flow::FlowState;
pub use summary::{FlowSummary, LinkSummary, Summary};

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
    /// A flow's endpoints have no route between them.
    #[error("flow {flow}: no route from its sender to its receiver")]
    NoRoute {
        /// The flow's name.
        flow: String,
    },
    /// The flow's transport is not simulated yet.
    #[error("flow {flow}: transport {cc:?} is not supported by the simulator yet")]
    Unsupported {
        /// The flow's name.
        flow: String,
        /// The transport's `cc` name.
        cc: &'static str,
    },
}

/// Something due at a moment of virtual time.
#[derive(Debug)]
enum Event {
    /// A link direction's `next_event` is due.
    LinkWake { link: usize, direction: usize },
    /// A packet reached the far end of hop `hop` of its route.
    Arrive { packet: Packet, hop: usize },
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
    flows: Vec<FlowState>,
    next_packet_id: u64,
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
            let forward = scenario.route(flow.from, flow.to).ok_or_else(no_route)?;
            let reverse = scenario.route(flow.to, flow.from).ok_or_else(no_route)?;
            if forward.is_empty() || reverse.is_empty() {
                return Err(no_route());
            }
            flows.push(FlowState::new(
                flow,
                index,
                seed,
                end,
                forward.to_vec(),
                reverse.to_vec(),
            )?);
        }
        let mut events = EventQueue::new();
        for (index, flow) in flows.iter_mut().enumerate() {
            events.schedule(flow.start, Event::FlowWake { flow: index });
            flow.wake_at = Some(flow.start);
        }
        Ok(Simulation {
            seed,
            end,
            events,
            link_wakes: vec![[None; 2]; network.links().len()],
            network,
            flows,
            next_packet_id: 0,
            summary: None,
        })
    }

    /// Runs to the scenario's end (once; later calls return the same
    /// summary) and reports what was measured.
    pub fn run(&mut self) -> Summary {
        if let Some(summary) = &self.summary {
            return summary.clone();
        }
        while let Some((now, event)) = self.events.pop_until(self.end) {
            match event {
                Event::LinkWake { link, direction } => self.on_link_wake(now, link, direction),
                Event::Arrive { packet, hop } => self.on_arrive(now, packet, hop),
                Event::FlowWake { flow } => self.on_flow_wake(now, flow),
            }
        }
        self.events.advance_to(self.end);
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
        let deliveries = link_direction.process(now);
        let lost = link_direction.take_lost_packets();
        for packet in lost {
            if packet.toward_receiver {
                if let Some(flow) = self.flows.get_mut(packet.flow) {
                    flow.stats.channel_losses += 1;
                }
            }
        }
        for delivery in deliveries {
            let hop = self.flows.get(delivery.packet.flow).and_then(|flow| {
                flow.route(delivery.packet.toward_receiver)
                    .iter()
                    .position(|h| h.link.0 == link && direction_index(h.direction) == direction)
            });
            if let Some(hop) = hop {
                self.events.schedule(
                    delivery.at,
                    Event::Arrive {
                        packet: delivery.packet,
                        hop,
                    },
                );
            }
        }
        self.arm_link(now, link, direction);
    }

    fn on_arrive(&mut self, now: Instant, packet: Packet, hop: usize) {
        let Some(flow) = self.flows.get_mut(packet.flow) else {
            return;
        };
        if let Some(next) = flow.route(packet.toward_receiver).get(hop + 1).copied() {
            self.offer(now, next, packet);
            return;
        }
        let index = packet.flow;
        let out = flow.on_arrival(now, &packet);
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
        let out = flow.service(now);
        self.send_all(now, index, out);
    }

    /// Puts what flow `index` sent on its routes and re-arms its timers.
    fn send_all(&mut self, now: Instant, index: usize, out: Vec<(bool, Body)>) {
        for (toward_receiver, body) in out {
            let Some(first) = self
                .flows
                .get(index)
                .and_then(|f| f.route(toward_receiver).first().copied())
            else {
                continue;
            };
            let packet = Packet {
                id: self.next_packet_id,
                flow: index,
                toward_receiver,
                sent_at: now,
                body,
            };
            self.next_packet_id += 1;
            self.offer(now, first, packet);
        }
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

    /// Offers `packet` to the link direction of `hop` at `now`.
    fn offer(&mut self, now: Instant, hop: Hop, packet: Packet) {
        let Some(link_direction) = self.network.direction_mut(hop) else {
            return;
        };
        if let EnqueueOutcome::Dropped(drop) = link_direction.enqueue(now, packet) {
            if drop.packet.toward_receiver {
                if let Some(flow) = self.flows.get_mut(drop.packet.flow) {
                    flow.stats.queue_drops += 1;
                }
            }
        }
        self.arm_link(now, hop.link.0, direction_index(hop.direction));
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
            self.events
                .schedule(next, Event::LinkWake { link, direction });
        }
    }

    fn summarise(&self) -> Summary {
        let links: Vec<LinkSummary> = self
            .network
            .links()
            .iter()
            .flat_map(|link| summary::link_summaries(link, self.end))
            .collect();
        Summary {
            seed: self.seed,
            sim_time_s: self.end.as_secs_f64(),
            events: self.events.processed(),
            conservation_ok: links.iter().all(|l| l.conservation_ok),
            flows: self
                .flows
                .iter()
                .map(|f| summary::flow_summary(f, self.end))
                .collect(),
            links,
        }
    }
}
