//! # fairstream-net
//!
//! The only crate that touches sockets and the operating system's clock: it
//! drives `fairstream-proto` sessions over UDP on the real clock (see
//! `DESIGN.md`), as the simulator drives them in virtual time.
//!
//! - [`clock`]: the real clock as the protocol's [`Instant`](fairstream_proto::time::Instant).
//! - [`link`]: a UDP socket with a reader thread and precise waits.
//! - [`ecn`]: ECN codepoints on sent and received datagrams (RFC 3168).
//! - [`url`]: `dccp://` URLs and their transport options.
//! - [`peer`]: the peer timeout, and what the peer's control packets say.
//! - [`send`]: `fairstream send`: an H.264 file, standard input or live
//!   generated content over a [`SenderSession`](fairstream_proto::session::SenderSession).
//! - [`recv`]: `fairstream recv`: a [`ReceiverSession`](fairstream_proto::session::ReceiverSession)
//!   writing Annex B or re-sending plain RTP with an SDP file.
//! - [`relay`]: `fairstream relay`: paper 003's proxy, a receiver and a
//!   sender joined by a bounded frame buffer.
//! - [`stats`]: live statistics, human and JSON lines.
//! - [`signal`]: Ctrl-C and SIGTERM as a stop flag.
//! - [`emulate`]: `fairstream emulate`: the simulator's links, queues and
//!   loss models on the real clock, forwarding UDP.
//!
//! Both ends run in-process as well ([`send::run`], [`recv::run`] with a
//! stop flag), which is how the tests use them.

// This crate reads the real clock (clippy.toml bans it elsewhere).
#![allow(clippy::disallowed_methods)]

pub mod clock;
pub mod ecn;
pub mod emulate;
#[doc(hidden)]
pub mod fuzzing;
pub mod link;
pub mod peer;
mod protect;
pub mod recv;
pub mod relay;
pub mod send;
pub mod signal;
pub mod stats;
pub mod url;
mod warn;
