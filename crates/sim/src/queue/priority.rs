//! Class-based priority queueing: a voice class served with strict
//! priority, the other classes in one FIFO or in weighted round robin
//! (the model is documented on [`PriorityConfig`]).

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

use super::{Drop, DropReason, QueueError, QueueStats, SimPacket};

/// A packet's traffic class, set per flow in a scenario (`class =
/// "voice"`); only a [`PriorityConfig`] queue tells them apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TrafficClass {
    /// `"voice"`: strict priority.
    Voice,
    /// `"video"`: a weighted class below voice.
    Video,
    /// `"default"`: best effort, the class of a flow without `class`.
    #[default]
    Default,
    /// `"background"`: a weighted class below voice.
    Background,
}

impl TrafficClass {
    /// Every class, voice first.
    pub const ALL: [TrafficClass; 4] = [
        TrafficClass::Voice,
        TrafficClass::Video,
        TrafficClass::Default,
        TrafficClass::Background,
    ];

    /// The name scenario files use.
    pub fn name(self) -> &'static str {
        match self {
            TrafficClass::Voice => "voice",
            TrafficClass::Video => "video",
            TrafficClass::Default => "default",
            TrafficClass::Background => "background",
        }
    }
}

impl fmt::Display for TrafficClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A class name that is none of [`TrafficClass::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown traffic class \"{0}\" (expected \"voice\", \"video\", \"default\" or \"background\")"
)]
pub struct UnknownTrafficClass(pub String);

impl FromStr for TrafficClass {
    type Err = UnknownTrafficClass;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        TrafficClass::ALL
            .into_iter()
            .find(|class| class.name() == text)
            .ok_or_else(|| UnknownTrafficClass(text.to_owned()))
    }
}

/// How the classes below voice share the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorityScheduler {
    /// One FIFO for video, default and background, in arrival order.
    Fifo,
    /// A FIFO per class, served in turn: up to `weights[i]` packets of
    /// video, default, background (in that order) a turn, each at least 1.
    WeightedRoundRobin {
        /// Packets a turn for video, default and background.
        weights: [u32; 3],
    },
}

/// A class-based priority queue (`queue = { kind = "priority", … }`).
///
/// Paper 002 §IV.C compares "a simple queuing method using no priority
/// and one using Class-based Priority Queuing (CBQ)" at the satellite
/// terminal: "Priority queuing allows voice traffic to take priority".
/// CBQ is Floyd & Jacobson's link-sharing scheduler ("Link-sharing and
/// resource management models for packet networks", IEEE/ACM ToN 1995),
/// ns-2's `CBQ` with its `WRR` class scheduler: classes of a higher
/// priority are served first, classes of one priority share by weighted
/// round robin. This model keeps the two levels paper 002 needs and
/// leaves out CBQ's link-sharing limits (borrowing, overlimit classes):
///
/// - [`TrafficClass::Voice`] is one strict-priority band: whenever it
///   holds a packet, that packet goes next.
/// - The other classes ([`TrafficClass::Video`], [`TrafficClass::Default`],
///   [`TrafficClass::Background`]) share the rest of the link:
///   [`PriorityScheduler::Fifo`] puts them in one FIFO in arrival order;
///   [`PriorityScheduler::WeightedRoundRobin`] gives each its own FIFO and
///   serves them in turn, up to its weight in packets a turn, skipping an
///   empty class (work-conserving).
///
/// Every band is a drop-tail FIFO of `limit_packets` packets; an arrival to
/// a full band is refused ([`DropReason::Full`]). A strict-priority band
/// can starve the others: paper 002's voice is a few 64 kbit/s calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PriorityConfig {
    /// The drop-tail limit of each band, in packets.
    pub limit_packets: usize,
    /// How the classes below voice are served.
    pub scheduler: PriorityScheduler,
}

/// The bands of a [`PriorityConfig`] queue and the round robin's position.
#[derive(Clone, Debug)]
pub(super) struct PriorityQueue<P> {
    limit_packets: usize,
    voice: VecDeque<P>,
    /// One band (FIFO) or three (weighted round robin).
    others: Vec<VecDeque<P>>,
    weights: Vec<u32>,
    /// The band whose turn it is, and the packets left in its turn.
    current: usize,
    credit: u32,
    bytes: u64,
}

impl<P: SimPacket> PriorityQueue<P> {
    pub(super) fn new(config: PriorityConfig) -> Result<PriorityQueue<P>, QueueError> {
        let invalid = |parameter, reason| QueueError::InvalidAqm {
            discipline: "priority",
            parameter,
            reason,
        };
        if config.limit_packets == 0 {
            return Err(invalid("limit", "must hold at least one packet"));
        }
        let weights = match config.scheduler {
            PriorityScheduler::Fifo => vec![1],
            PriorityScheduler::WeightedRoundRobin { weights } => {
                if weights.contains(&0) {
                    return Err(invalid("weights", "must each be at least 1"));
                }
                weights.to_vec()
            }
        };
        Ok(PriorityQueue {
            limit_packets: config.limit_packets,
            voice: VecDeque::new(),
            others: weights.iter().map(|_| VecDeque::new()).collect(),
            credit: weights.first().copied().unwrap_or(1),
            weights,
            current: 0,
            bytes: 0,
        })
    }

    /// The band a class is queued in.
    fn band_mut(&mut self, class: TrafficClass) -> Option<&mut VecDeque<P>> {
        let index = match class {
            TrafficClass::Voice => return Some(&mut self.voice),
            _ if self.others.len() == 1 => 0,
            TrafficClass::Video => 0,
            TrafficClass::Default => 1,
            TrafficClass::Background => 2,
        };
        self.others.get_mut(index)
    }

    pub(super) fn enqueue(&mut self, packet: P, stats: &mut QueueStats) -> Result<(), Drop<P>> {
        let limit = self.limit_packets;
        let size = u64::from(packet.size_bytes());
        match self.band_mut(packet.class()) {
            Some(band) if band.len() < limit => band.push_back(packet),
            _ => {
                stats.dropped_full += 1;
                return Err(Drop {
                    packet,
                    reason: DropReason::Full,
                });
            }
        }
        self.bytes += size;
        Ok(())
    }

    pub(super) fn dequeue(&mut self) -> Option<P> {
        let packet = match self.voice.pop_front() {
            Some(packet) => Some(packet),
            None => self.next_round_robin(),
        }?;
        self.bytes -= u64::from(packet.size_bytes());
        Some(packet)
    }

    /// Weighted round robin over the bands below voice: the current band
    /// sends while it has packets and credit, then the turn passes on.
    fn next_round_robin(&mut self) -> Option<P> {
        let bands = self.others.len();
        // One pass over every band, plus the current one again with fresh
        // credit: enough to find any queued packet.
        for _ in 0..=bands {
            if self.credit > 0 {
                if let Some(packet) = self.others.get_mut(self.current)?.pop_front() {
                    self.credit -= 1;
                    return Some(packet);
                }
            }
            self.current = (self.current + 1) % bands.max(1);
            self.credit = self.weights.get(self.current).copied().unwrap_or(1);
        }
        None
    }

    pub(super) fn len_packets(&self) -> usize {
        self.voice.len() + self.others.iter().map(VecDeque::len).sum::<usize>()
    }

    pub(super) fn len_bytes(&self) -> u64 {
        self.bytes
    }
}
