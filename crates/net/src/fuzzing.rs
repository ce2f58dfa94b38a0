//! The receiver's internals that the fuzz targets (`fuzz/`) drive directly:
//! for the fuzz targets only; not a stable API.
//!
//! - [`FecDecoder`]: the receiver's packet-level FEC (`fuzz_targets/fec_parity.rs`).
//! - [`Assembler`]: RTP/H.264 packets back into access units
//!   (`fuzz_targets/assembler.rs`).

pub use crate::recv::assembler::{Assembler, Completed};
pub use crate::recv::fec::{FecDecoder, MAX_OPEN_BLOCKS};
