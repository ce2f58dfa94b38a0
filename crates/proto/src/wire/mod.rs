//! Wire formats, zero-copy and sans-IO (the smoltcp pattern).
//!
//! Each format has a `Packet<T: AsRef<[u8]>>` view with a checked constructor
//! (`new_checked`) and field accessors, and a validated representation (`…Repr`)
//! with `parse` and `emit`. Parsers never panic and never allocate without bound
//! on any input; their errors are typed and name what was wrong.
//!
//! | module | format |
//! |---|---|
//! | [`dccp`] | DCCP generic header, packet types, checksum (RFC 4340, RFC 6773) |
//! | [`options`] | DCCP options, feature negotiation, Ack Vector, CCID 3/4 options (RFC 4340 §5.8, RFC 4341, RFC 4342 §8, RFC 5622) |
//! | [`rtp`] | RTP fixed header (RFC 3550) |
//! | [`rtcp`] | RTCP sender and receiver reports (RFC 3550 §6.4) |
//! | [`h264`] | H.264 RTP payload: single NAL unit, STAP-A and FU-A (RFC 6184) |

pub mod checksum;
pub mod dccp;
pub mod h264;
pub mod options;
pub mod rtcp;
pub mod rtp;
