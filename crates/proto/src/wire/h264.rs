//! RTP wire format (being written).
