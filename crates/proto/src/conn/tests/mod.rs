//! Connection tests over an in-memory pair of endpoints in virtual time
//! ([`super::pair`]).

mod attacks;
mod close;
mod cookies;
mod ecn;
mod endpoint;
mod fixed_rate;
mod handshake;
mod negotiation;
mod robustness;
mod support;
mod transfer;
