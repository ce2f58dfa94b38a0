//! # fairstream-sim
//!
//! A deterministic discrete-event network simulator that runs the real
//! `fairstream-proto` code on real bytes (see `DESIGN.md`). It is built by the
//! simulator issue and has no code yet.
