//! DCCP connections (RFC 4340 §8) and the per-CCID machinery they drive.
//!
//! - [`ack_vector`]: the receiver's record of arrivals in Ack Vector form (CCID 2).
//! - [`window_counter`]: the CCID 3/4 sender's CCVal window counter.

pub mod ack_vector;
pub mod window_counter;
