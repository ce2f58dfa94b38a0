//! DCCP connections (RFC 4340 §8) and the per-CCID machinery they drive.
//!
//! - [`ack_vector`]: the receiver's record of arrivals in Ack Vector form (CCID 2).

pub mod ack_vector;
