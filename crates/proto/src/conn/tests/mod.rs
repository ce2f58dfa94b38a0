//! Connection tests over an in-memory pair of endpoints in virtual time
//! ([`super::pair`]).

mod attacks;
mod close;
mod handshake;
mod robustness;
mod support;
mod transfer;
