//! The simulated network of a [`Scenario`]: one [`LinkDirection`] per
//! direction of every link, and the packets that cross them.
//!
//! [`Network::build`] turns the scenario's view of a link (its
//! [`scenario::QueueConfig`], capacity and loss model) into two
//! [`LinkConfig`]s, loads capacity traces (errors name the file) and gives
//! each direction its own random stream, `SimRng::for_element(seed,
//! "link:<index>:fwd")` or `":rev"`, so that adding a link or a flow never
//! perturbs the draws of another.
//!
//! Routing is the scenario's: a packet carries its flow and which way it
//! travels, and the driver ([`crate::runner`]) walks the static route hop by
//! hop.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;
use thiserror::Error;

use crate::link::{
    BodConfig, BodPool, Capacity, LinkConfig, LinkDirection, LinkError, SharedBodPool,
    SharedTddCell, Subframe, TddCell,
};
use crate::queue::{self, Limit, SimPacket, TrafficClass};
use crate::rng::SimRng;
use crate::scenario::{self, Direction, Hop, Scenario};
use crate::tcp::{Ack, Segment};
use crate::trace::{Trace, TraceError};

/// The typical packet RED's idle-time correction assumes on a fixed-rate
/// link: a full Ethernet payload, before the link's overhead.
pub const RED_TYPICAL_PACKET_BYTES: u64 = 1500;

/// RED's typical packet transmission time on a trace-driven link, where no
/// single rate exists.
pub const RED_TRACE_IDLE_PACKET_TIME: Duration = Duration::from_millis(1);

/// What a packet carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// A TCP data segment (sender to receiver).
    TcpSegment(Segment),
    /// A TCP acknowledgment (receiver to sender).
    TcpAck(Ack),
    /// A data segment of transfer `transfer` of a web flow (`cc = "web"`).
    WebSegment {
        /// The transfer's number within its flow.
        transfer: u64,
        /// The segment.
        segment: Segment,
    },
    /// An acknowledgment of transfer `transfer` of a web flow.
    WebAck {
        /// The transfer's number within its flow.
        transfer: u64,
        /// The acknowledgment.
        ack: Ack,
    },
    /// A UDP datagram of an application source.
    Datagram {
        /// Payload bytes (the link adds its per-packet overhead).
        size: u32,
    },
    /// A DCCP packet, the real bytes a `fairstream-proto` endpoint wrote
    /// (carried in UDP, RFC 6773: the link's overhead stands for the IPv4 and
    /// UDP headers).
    Dccp {
        /// The whole DCCP packet, header and options included. Its buffer
        /// goes back to its flow when the packet leaves the network, to
        /// carry a later packet.
        bytes: Vec<u8>,
        /// The application data it carries.
        payload_len: u32,
        /// The ECN codepoint its endpoint sends it with (RFC 4340 §12.1:
        /// ECT(0) on data while ECN is agreed).
        ecn: Ecn,
        /// Its source and destination ports (the first four bytes of
        /// `bytes`), read once when it is made: every hop's queue keys
        /// its flow by them, and by then the bytes are out of the cache.
        ports: u32,
    },
}

impl Body {
    /// A DCCP packet of `bytes` carrying `payload_len` bytes of
    /// application data, sent with `ecn`.
    pub fn dccp(bytes: Vec<u8>, payload_len: u32, ecn: Ecn) -> Body {
        let ports = fairstream_proto::wire::dccp::peek_ports(&bytes)
            .map_or(0, |(src, dst)| u32::from(src) << 16 | u32::from(dst));
        Body::Dccp {
            bytes,
            payload_len,
            ecn,
            ports,
        }
    }
}

/// A packet in the simulated network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique within a run, in order of creation.
    pub id: u64,
    /// Index of the flow in [`Scenario::flows`].
    pub flow: usize,
    /// Whether it travels from the flow's `from` to its `to` (data) rather
    /// than back (acknowledgments).
    pub toward_receiver: bool,
    /// Which of its flow's paths it takes: 0, or for a bonded flow
    /// (`via`, issue 19) the index of the path its connection runs on.
    pub path: u8,
    /// When its host handed it to the network.
    pub sent_at: Instant,
    /// The ECN field of its IP header (RFC 3168 §5): set by the sending
    /// host, turned into CE by a marking queue on the way.
    pub ecn: Ecn,
    /// Its flow's traffic class (the scenario's `class`), both ways: a
    /// class-based priority queue serves it by this.
    pub class: TrafficClass,
    /// What it carries.
    pub body: Body,
}

#[cfg(test)]
impl Packet {
    /// A data packet of flow 0 carrying a UDP datagram of `size` bytes
    /// (for unit tests).
    pub(crate) fn datagram(id: u64, size: u32) -> Packet {
        Packet {
            id,
            flow: 0,
            toward_receiver: true,
            path: 0,
            sent_at: Instant::ZERO,
            ecn: Ecn::NotEct,
            class: TrafficClass::Default,
            body: Body::Datagram { size },
        }
    }
}

impl Packet {
    /// The DCCP source and destination ports (RFC 4340 §5.1: the first
    /// four bytes of the generic header), `0` for other bodies.
    fn ports(&self) -> u32 {
        match &self.body {
            Body::Dccp { ports, .. } => *ports,
            _ => 0,
        }
    }
}

impl SimPacket for Packet {
    fn size_bytes(&self) -> u32 {
        let bytes = match &self.body {
            Body::TcpSegment(segment) | Body::WebSegment { segment, .. } => segment.wire_size(),
            Body::TcpAck(ack) | Body::WebAck { ack, .. } => ack.wire_size(),
            Body::Datagram { size } => u64::from(*size),
            Body::Dccp { bytes, .. } => bytes.len() as u64,
        };
        u32::try_from(bytes).unwrap_or(u32::MAX)
    }

    fn ecn(&self) -> Ecn {
        self.ecn
    }

    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }

    fn class(&self) -> TrafficClass {
        self.class
    }

    /// The simulator's 5-tuple: the flow (its two hosts and transport),
    /// the direction, and for DCCP the two ports, so that each connection
    /// of a multi-connection flow is a flow of its own to FQ-CoDel.
    fn flow_key(&self) -> u64 {
        let flow = (self.flow as u64) << 33;
        let direction = u64::from(self.toward_receiver) << 32;
        flow | direction | u64::from(self.ports())
    }
}

/// What a link needs of a [`Packet`], and where the packet waits meanwhile:
/// the runner keeps each packet in one store from its creation to its
/// delivery (or loss) and moves only this handle through queues,
/// transmitters and deliveries (issue 18: moving the 80-byte packet about
/// ten times a hop, and running its drop glue, was a quarter of a NewReno
/// run). A queue's CE mark lands on the handle's `ecn`, which the runner
/// copies back to the packet when the hop delivers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRef {
    /// [`SimPacket::flow_key`] of the packet.
    pub flow_key: u64,
    /// The packet's slot in the runner's store.
    pub slot: u32,
    /// The index, in its flow's route, of the hop it is crossing.
    pub hop: u32,
    /// [`SimPacket::size_bytes`] of the packet.
    pub size_bytes: u32,
    /// The packet's ECN field, as queues on this hop left it.
    pub ecn: Ecn,
    /// The packet's traffic class.
    pub class: TrafficClass,
}

impl PacketRef {
    /// The handle of `packet`, kept in `slot`, for hop `hop` of its route.
    pub fn new(packet: &Packet, slot: u32, hop: u32) -> PacketRef {
        PacketRef {
            flow_key: packet.flow_key(),
            slot,
            hop,
            size_bytes: packet.size_bytes(),
            ecn: packet.ecn,
            class: packet.class,
        }
    }
}

impl SimPacket for PacketRef {
    fn size_bytes(&self) -> u32 {
        self.size_bytes
    }

    fn ecn(&self) -> Ecn {
        self.ecn
    }

    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }

    fn class(&self) -> TrafficClass {
        self.class
    }

    fn flow_key(&self) -> u64 {
        self.flow_key
    }
}

/// A scenario whose network cannot be built.
#[derive(Debug, Error)]
pub enum NetworkError {
    /// A capacity trace could not be read or parsed.
    #[error("link {link}: trace {}: {source}", path.display())]
    Trace {
        /// The link's name (`a-b`).
        link: String,
        /// The trace file.
        path: PathBuf,
        /// What was wrong with it.
        #[source]
        source: TraceError,
    },
    /// A link direction's parameters are invalid.
    #[error("link {link}: {source}")]
    Link {
        /// The link's name (`a-b`).
        link: String,
        /// What was wrong.
        #[source]
        source: LinkError,
    },
    /// A queue limit does not fit this machine's `usize`.
    #[error("link {link}: queue limit {packets} packets is too large")]
    QueueTooLarge {
        /// The link's name (`a-b`).
        link: String,
        /// The configured limit.
        packets: u64,
    },
}

/// Both directions of one link, with the names the summary reports.
#[derive(Debug)]
pub struct NetworkLink {
    /// `a-b`, from the scenario's `between`.
    pub name: String,
    /// The names of the two ends, `between[0]` and `between[1]`.
    pub ends: [String; 2],
    /// [`Direction::Forward`] then [`Direction::Reverse`].
    pub directions: [LinkDirection<PacketRef>; 2],
}

/// Every link direction of a scenario.
#[derive(Debug)]
pub struct Network {
    links: Vec<NetworkLink>,
}

/// The index of a direction in [`NetworkLink::directions`].
pub fn direction_index(direction: Direction) -> usize {
    match direction {
        Direction::Forward => 0,
        Direction::Reverse => 1,
    }
}

impl Network {
    /// Builds every link direction of `scenario`, idle at time zero, each
    /// keeping its channel losses for attribution to flows.
    pub fn build(scenario: &Scenario) -> Result<Network, NetworkError> {
        let nodes = scenario.nodes();
        let seed = scenario.run().seed;
        let mut links = Vec::with_capacity(scenario.links().len());
        let mut pools: BTreeMap<String, SharedBodPool> = BTreeMap::new();
        let mut cells: BTreeMap<String, SharedTddCell> = BTreeMap::new();
        for (index, link) in scenario.links().iter().enumerate() {
            let ends = link
                .between
                .map(|id| nodes.get(id.0).map(|n| n.name.clone()).unwrap_or_default());
            let name = format!("{}-{}", ends[0], ends[1]);
            let tdd = match &link.capacity {
                scenario::Capacity::Tdd { config, cell } => {
                    // A station without `cell` is a cell of its own.
                    let cell_name = cell.clone().unwrap_or_else(|| format!("link:{index}"));
                    let cell = match cells.get(&cell_name) {
                        Some(cell) => Arc::clone(cell),
                        None => {
                            let cell = TddCell::new(&cell_name, *config).map_err(|reason| {
                                NetworkError::Link {
                                    link: name.clone(),
                                    source: LinkError::Tdd(reason),
                                }
                            })?;
                            let cell = Arc::new(Mutex::new(cell));
                            cells.insert(cell_name, Arc::clone(&cell));
                            cell
                        }
                    };
                    Some(cell)
                }
                _ => None,
            };
            let make = |capacity: Capacity,
                        tag: &str,
                        bod: Option<(BodConfig, Option<SharedBodPool>)>,
                        tdd: Option<(SharedTddCell, Subframe)>|
             -> Result<LinkDirection<PacketRef>, NetworkError> {
                let queue = queue_config(&link.queue, &capacity, link.overhead.get(), &name)?;
                let config = LinkConfig {
                    capacity,
                    delay: link.delay,
                    delay_change: link.delay_change.map(|c| (Instant::ZERO + c.at, c.delay)),
                    outage: link.outage.map(|o| {
                        let from = Instant::ZERO + o.at;
                        (from, from + o.length)
                    }),
                    overhead_bytes: u32::try_from(link.overhead.get()).unwrap_or(u32::MAX),
                    queue,
                    loss: link.loss,
                };
                let rng = SimRng::for_element(seed, &format!("link:{index}:{tag}"));
                let direction = match (bod, tdd) {
                    (_, Some((cell, subframe))) => {
                        LinkDirection::with_tdd(config, cell, subframe, rng, Instant::ZERO)
                    }
                    (Some((bod, None)), None) => {
                        LinkDirection::with_bandwidth_on_demand(config, bod, rng, Instant::ZERO)
                    }
                    (Some((bod, Some(pool))), None) => {
                        LinkDirection::with_pooled_bandwidth_on_demand(
                            config,
                            bod,
                            pool,
                            rng,
                            Instant::ZERO,
                        )
                    }
                    (None, None) => LinkDirection::new(config, rng, Instant::ZERO),
                };
                let mut direction = direction.map_err(|source| NetworkError::Link {
                    link: name.clone(),
                    source,
                })?;
                direction.keep_lost_packets();
                direction.keep_dropped_packets();
                Ok(direction)
            };
            let (forward, reverse) = match &link.capacity {
                scenario::Capacity::Fixed(rate) => (Capacity::Fixed(*rate), Capacity::Fixed(*rate)),
                scenario::Capacity::BandwidthOnDemand {
                    forward, reverse, ..
                } => (Capacity::Fixed(forward.max_rate), Capacity::Fixed(*reverse)),
                scenario::Capacity::Tdd { config, .. } => (
                    Capacity::Fixed(config.mean_rate(Subframe::Uplink)),
                    Capacity::Fixed(config.mean_rate(Subframe::Downlink)),
                ),
                scenario::Capacity::Trace { up, down } => (
                    Capacity::Trace(load_trace(up, &name)?),
                    Capacity::Trace(load_trace(down, &name)?),
                ),
            };
            let bod = match &link.capacity {
                scenario::Capacity::BandwidthOnDemand { forward, pool, .. } => {
                    let pool = match pool {
                        None => None,
                        Some(spec) => Some(match pools.get(&spec.name) {
                            Some(pool) => Arc::clone(pool),
                            None => {
                                let pool = BodPool::new(&spec.name, spec.rate, *forward).map_err(
                                    |reason| NetworkError::Link {
                                        link: name.clone(),
                                        source: LinkError::Bod(reason),
                                    },
                                )?;
                                let pool = Arc::new(Mutex::new(pool));
                                pools.insert(spec.name.clone(), Arc::clone(&pool));
                                pool
                            }
                        }),
                    };
                    Some((*forward, pool))
                }
                _ => None,
            };
            let directions = [
                make(
                    forward,
                    "fwd",
                    bod,
                    tdd.clone().map(|cell| (cell, Subframe::Uplink)),
                )?,
                make(
                    reverse,
                    "rev",
                    None,
                    tdd.map(|cell| (cell, Subframe::Downlink)),
                )?,
            ];
            links.push(NetworkLink {
                name,
                ends,
                directions,
            });
        }
        Ok(Network { links })
    }

    /// The links, indexed like [`Scenario::links`].
    pub fn links(&self) -> &[NetworkLink] {
        &self.links
    }

    /// The link direction a hop crosses.
    pub fn direction_mut(&mut self, hop: Hop) -> Option<&mut LinkDirection<PacketRef>> {
        self.links
            .get_mut(hop.link.0)
            .and_then(|l| l.directions.get_mut(direction_index(hop.direction)))
    }

    /// The link direction at (`link`, `direction` index).
    pub fn by_index_mut(
        &mut self,
        link: usize,
        direction: usize,
    ) -> Option<&mut LinkDirection<PacketRef>> {
        self.links
            .get_mut(link)
            .and_then(|l| l.directions.get_mut(direction))
    }
}

fn load_trace(path: &Path, link: &str) -> Result<Trace, NetworkError> {
    Trace::from_file(path).map_err(|source| NetworkError::Trace {
        link: link.to_owned(),
        path: path.to_owned(),
        source,
    })
}

/// The simulator's queue for the scenario's description. RED's typical
/// packet time s is (1500 B + overhead) / rate on a fixed link and
/// [`RED_TRACE_IDLE_PACKET_TIME`] on a trace.
fn queue_config(
    config: &scenario::QueueConfig,
    capacity: &Capacity,
    overhead_bytes: u64,
    link: &str,
) -> Result<queue::QueueConfig, NetworkError> {
    let packets = |n: u64| {
        usize::try_from(n).map_err(|_| NetworkError::QueueTooLarge {
            link: link.to_owned(),
            packets: n,
        })
    };
    Ok(match config {
        scenario::QueueConfig::DropTailPackets(n) => queue::QueueConfig::DropTail {
            limit: Limit::Packets(packets(*n)?),
        },
        scenario::QueueConfig::DropTailBytes(bytes) => queue::QueueConfig::DropTail {
            limit: Limit::Bytes(bytes.get()),
        },
        scenario::QueueConfig::Red(red) => {
            let idle_packet_time = match capacity {
                Capacity::Fixed(rate) => rate
                    .time_to_send((RED_TYPICAL_PACKET_BYTES + overhead_bytes) as f64)
                    .unwrap_or(RED_TRACE_IDLE_PACKET_TIME),
                Capacity::Trace(_) => RED_TRACE_IDLE_PACKET_TIME,
            };
            queue::QueueConfig::Red {
                min_th: red.min_th,
                max_th: red.max_th,
                max_p: red.max_p,
                weight: red.weight,
                limit: Limit::Packets(packets(red.limit_packets)?),
                gentle: red.gentle,
                idle_packet_time,
                ecn: red.ecn,
            }
        }
        scenario::QueueConfig::CoDel(codel) => queue::QueueConfig::CoDel(*codel),
        scenario::QueueConfig::FqCoDel(fq) => queue::QueueConfig::FqCoDel(*fq),
        scenario::QueueConfig::Priority(priority) => queue::QueueConfig::Priority(*priority),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_idle_time_is_one_typical_packet_at_the_link_rate() {
        let red = scenario::QueueConfig::Red(scenario::RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
            limit_packets: 100,
            gentle: true,
            ecn: false,
        });
        let rate = fairstream_proto::units::Rate::from_bits_per_sec(1.528e6);
        let q = queue_config(&red, &Capacity::Fixed(rate), 28, "a-b").unwrap();
        let queue::QueueConfig::Red {
            idle_packet_time, ..
        } = q
        else {
            panic!("RED expected");
        };
        // (1500 + 28) bytes at 1.528 Mbit/s = 8 ms.
        assert_eq!(idle_packet_time, Duration::from_millis(8));
    }

    #[test]
    fn a_packet_handle_stays_small_and_reads_like_its_packet() {
        // Queues, transmitters and deliveries move the handle on every
        // step of every hop (issue 18).
        assert!(std::mem::size_of::<PacketRef>() <= 24);
        let packet = Packet {
            id: 7,
            flow: 3,
            toward_receiver: false,
            path: 0,
            sent_at: Instant::ZERO,
            ecn: Ecn::Ect0,
            class: TrafficClass::Default,
            body: Body::Datagram { size: 321 },
        };
        let mut handle = PacketRef::new(&packet, 5, 2);
        assert_eq!((handle.slot, handle.hop), (5, 2));
        assert_eq!(handle.size_bytes(), packet.size_bytes());
        assert_eq!(handle.flow_key(), packet.flow_key());
        assert_eq!(handle.class(), packet.class());
        assert_eq!(handle.ecn(), Ecn::Ect0);
        handle.set_ce();
        assert_eq!(handle.ecn(), Ecn::Ce);
    }

    #[test]
    fn packet_sizes_come_from_the_body() {
        let datagram = Packet::datagram(0, 1000);
        assert_eq!(datagram.size_bytes(), 1000);
        let ack = Packet {
            body: Body::TcpAck(Ack::new(5)),
            ..datagram
        };
        assert_eq!(ack.size_bytes(), 40);
    }

    #[test]
    fn packets_carry_their_ecn_field_and_a_flow_key() {
        let dccp = |ports: [u8; 4]| Packet {
            id: 0,
            flow: 3,
            toward_receiver: true,
            path: 0,
            sent_at: Instant::ZERO,
            ecn: Ecn::Ect0,
            class: TrafficClass::Default,
            body: Body::dccp([&ports[..], &[0u8; 12]].concat(), 0, Ecn::Ect0),
        };
        let mut a = dccp([0x9c, 0x40, 0x13, 0x8c]);
        let b = dccp([0x9c, 0x41, 0x13, 0x8c]);
        // Two connections of one flow are two flows to FQ-CoDel, and the
        // two directions of a connection differ too.
        assert_ne!(a.flow_key(), b.flow_key());
        let back = Packet {
            toward_receiver: false,
            path: 0,
            ..a.clone()
        };
        assert_ne!(a.flow_key(), back.flow_key());
        a.set_ce();
        assert_eq!(a.ecn(), Ecn::Ce);
    }
}
