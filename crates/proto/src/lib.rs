//! # fairstream-proto
//!
//! The sans-IO core of fairstream. Nothing in this crate opens a socket, reads a
//! clock, starts a thread or touches a global random number generator: every call
//! that depends on time takes `now` as an argument, so the same code runs inside
//! the deterministic simulator, over real sockets, and in tests in virtual time.
//!
//! - [`time`]: [`Instant`](time::Instant), nanoseconds since an arbitrary epoch.
//! - [`units`]: [`Rate`](units::Rate) and [`Bytes`](units::Bytes), and parsers for the
//!   units users type (`100ms`, `2mbit`, `1460`).
//! - [`cc`]: the rate controllers (TFRC, TFRC-SP, TCP-like) behind one
//!   [`RateController`](cc::RateController) trait, the throughput equations and the
//!   receiver loss history.
//! - [`conn`]: DCCP connections (RFC 4340 §8) driving the CCIDs, an endpoint
//!   that demultiplexes them (RFC 6773), and an in-memory pair for tests.
//! - [`ecn`]: the IP header's ECN codepoint (RFC 3168), carried beside a datagram.
//! - [`session`]: one stream over several connections (papers 001, 000): the
//!   split, the connection count, and the receiver's reordering.

#![forbid(unsafe_code)]

pub mod buffers;
pub mod capture;
pub mod cc;
pub mod conn;
pub mod ecn;
pub mod secure;
pub mod session;
pub mod time;
pub mod units;
pub mod wire;
