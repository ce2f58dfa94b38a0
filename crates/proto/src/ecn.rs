//! The ECN field of the IP header (RFC 3168 §5): the two bits a sender sets
//! to say its transport reacts to congestion marks, and that a router's AQM
//! sets to Congestion Experienced instead of dropping the packet.
//!
//! Shared by the DCCP connection (RFC 4340 §12), the simulator's queues and
//! TCP, and the real sockets: each carries an [`Ecn`] beside a datagram.

/// An ECN codepoint (RFC 3168 §5, Figure 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// `00`: Not ECN-Capable Transport; an AQM drops instead of marking.
    #[default]
    NotEct,
    /// `10`: ECN-Capable Transport, ECT(0).
    Ect0,
    /// `01`: ECN-Capable Transport, ECT(1).
    Ect1,
    /// `11`: Congestion Experienced.
    Ce,
}

impl Ecn {
    /// The codepoint of the two low bits of the IPv4 TOS or IPv6 Traffic
    /// Class byte.
    pub fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b10 => Ecn::Ect0,
            0b01 => Ecn::Ect1,
            _ => Ecn::Ce,
        }
    }

    /// The two bits of this codepoint.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect0 => 0b10,
            Ecn::Ect1 => 0b01,
            Ecn::Ce => 0b11,
        }
    }

    /// Whether an AQM may mark this packet instead of dropping it (ECT(0),
    /// ECT(1), or already CE; RFC 3168 §5).
    pub fn is_ect(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }

    /// Whether the packet carries a congestion mark.
    pub fn is_ce(self) -> bool {
        matches!(self, Ecn::Ce)
    }
}

#[cfg(test)]
mod tests {
    use super::Ecn;

    #[test]
    fn codepoints_round_trip_and_match_rfc3168_figure_1() {
        for ecn in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(ecn.bits()), ecn);
        }
        assert_eq!(Ecn::Ect0.bits(), 0b10);
        assert_eq!(Ecn::Ect1.bits(), 0b01);
        // Only the two low bits of the TOS byte are the ECN field.
        assert_eq!(Ecn::from_bits(0xb8 | 0b11), Ecn::Ce);
        assert_eq!(Ecn::from_bits(0xb8), Ecn::NotEct);
        assert!(Ecn::Ce.is_ect() && Ecn::Ce.is_ce());
        assert!(!Ecn::NotEct.is_ect() && !Ecn::Ect0.is_ce());
    }
}
