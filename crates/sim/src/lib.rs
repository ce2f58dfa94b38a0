//! # fairstream-sim
//!
//! A deterministic discrete-event network simulator that runs the real
//! `fairstream-proto` code on real bytes (see `DESIGN.md`).
//!
//! Nothing here reads a clock or a global random number generator: time is
//! virtual ([`fairstream_proto::time::Instant`]) and every random choice comes
//! from [`rng::SimRng`], seeded by the scenario and split per element so that
//! adding a flow does not perturb the others.
//!
//! - [`engine`]: the event queue, ordered by (time, insertion sequence).
//! - [`rng`]: the seeded generator and its per-element streams.
//! - [`source`]: application traffic (saturating, CBR, on-off).
//! - [`queue`]: drop-tail and RED queues.
//! - [`loss`]: per-packet channel loss models (Bernoulli, Gilbert-Elliott).
//! - [`link`]: one direction of a link: queue, capacity, delay, channel loss.
//! - [`trace`]: mahimahi capacity traces.
//! - [`scenario`]: scenario files (TOML), validated, with static routes.
//! - [`tcp`]: a TCP NewReno bulk-transfer model (sender and receiver) for
//!   cross traffic.
//! - [`network`]: the link directions of a scenario and the packets they carry.
//! - [`runner`]: the event loop that runs a scenario and summarises it.

pub mod engine;
pub mod limits;
pub mod link;
pub mod loss;
pub mod network;
pub mod queue;
pub mod rng;
pub mod runner;
pub mod scenario;
pub mod source;
pub mod tcp;
pub mod trace;
