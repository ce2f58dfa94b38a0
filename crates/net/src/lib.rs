//! # fairstream-net
//!
//! The only crate that touches sockets and the operating system's clock: it
//! drives `fairstream-proto` endpoints over UDP (see `DESIGN.md`). It is built by
//! the real-streaming issue and has no code yet.

pub mod emulate;
