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
//! - [`rng`]: the seeded generator and its per-element streams.
//! - [`tcp`]: a TCP NewReno bulk-transfer model (sender and receiver) for
//!   cross traffic.

pub mod rng;
pub mod tcp;
