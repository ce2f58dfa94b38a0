//! Sequence and acknowledgement numbers of one connection (RFC 4340 §7): ISS,
//! GSS, ISR, GSR, GAR, OSR and the validity windows of §7.5.1.
//!
//! Numbers on the wire are 48-bit and circular ([`SeqNum`]). Inside the
//! connection they are *extended*: 64-bit, monotone, never wrapping, so that
//! the CCIDs (whose APIs take `u64`) and the windows can compare them with
//! `<`. An extended number is its 48-bit value plus a multiple of 2^48; the
//! first one (ISS, ISR) gets one multiple of 2^48 so that numbers just below
//! it do not underflow. Received numbers are extended around GSR and
//! acknowledgement numbers around GSS, the closest candidate in circular
//! order (RFC 4340 §7.6's rule, applied to 48-bit numbers).

use crate::wire::dccp::{PacketType, SeqNum};

/// The sequence number variables of a connection (RFC 4340 §7, §8.5), as
/// 48-bit wire numbers. Receive-side values are `None` until the peer's first
/// packet is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SequenceNumbers {
    /// Initial Sequence Number sent.
    pub iss: SeqNum,
    /// Greatest Sequence Number Sent.
    pub gss: SeqNum,
    /// Initial Sequence Number Received.
    pub isr: Option<SeqNum>,
    /// Greatest Sequence Number Received.
    pub gsr: Option<SeqNum>,
    /// Greatest Acknowledgement Number Received.
    pub gar: SeqNum,
    /// The valid sequence number window [SWL, SWH] (§7.5.1).
    pub swl: Option<SeqNum>,
    /// Its high end.
    pub swh: Option<SeqNum>,
    /// The valid acknowledgement number window [AWL, AWH] (§7.5.1).
    pub awl: SeqNum,
    /// Its high end.
    pub awh: SeqNum,
}

/// The base added to initial numbers so that extension never underflows.
const BASE: u64 = SeqNum::MODULUS;

/// The sequence number state of a connection.
#[derive(Clone, Debug)]
pub(crate) struct SequenceState {
    /// ISS, extended.
    iss: u64,
    /// GSS, extended: the greatest sequence number sent (ISS − 1 before the
    /// first packet).
    gss: u64,
    /// ISR and GSR, extended, once the peer's first packet is known.
    received: Option<Received>,
    /// GAR: the greatest valid acknowledgement number received on a non-Sync
    /// packet; initialised to ISS (RFC 4340 §8.5: "Initialize S.GAR := S.ISS").
    gar: u64,
    /// OSR: the first sequence number received in OPEN (RFC 4340 §8.5).
    osr: Option<u64>,
    /// This endpoint's Sequence Window (W' in the acknowledgement window).
    local_window: u64,
    /// The peer's Sequence Window (W in the sequence number window).
    peer_window: u64,
}

#[derive(Clone, Copy, Debug)]
struct Received {
    isr: u64,
    gsr: u64,
}

impl SequenceState {
    /// A state whose first packet will carry `iss` (taken modulo 2^48).
    pub(crate) fn new(iss: u64, local_window: u64, peer_window: u64) -> SequenceState {
        let iss = BASE + SeqNum::new(iss).value();
        SequenceState {
            iss,
            gss: iss - 1,
            received: None,
            gar: iss,
            osr: None,
            local_window: local_window.max(1),
            peer_window: peer_window.max(1),
        }
    }

    /// Allocates the sequence number of the next packet sent: every packet,
    /// acknowledgements included, consumes one (RFC 4340 §7.1).
    pub(crate) fn next(&mut self) -> u64 {
        self.gss += 1;
        self.gss
    }

    /// ISS, extended.
    #[cfg(test)]
    pub(crate) fn iss(&self) -> u64 {
        self.iss
    }

    /// GSS, extended.
    pub(crate) fn gss(&self) -> u64 {
        self.gss
    }

    /// ISR, extended, once known.
    pub(crate) fn isr(&self) -> Option<u64> {
        self.received.map(|r| r.isr)
    }

    /// GSR, extended, once known.
    pub(crate) fn gsr(&self) -> Option<u64> {
        self.received.map(|r| r.gsr)
    }

    /// GAR, extended.
    #[cfg(test)]
    pub(crate) fn gar(&self) -> u64 {
        self.gar
    }

    /// OSR, extended, once the connection received a packet in OPEN.
    pub(crate) fn osr(&self) -> Option<u64> {
        self.osr
    }

    /// Records OSR if it is not yet set.
    pub(crate) fn note_open_packet(&mut self, seq: u64) {
        self.osr.get_or_insert(seq);
    }

    /// Sets the peer's Sequence Window (its Change L(Sequence Window)).
    pub(crate) fn set_peer_window(&mut self, window: u64) {
        self.peer_window = window.max(1);
    }

    /// Sets this endpoint's Sequence Window (W' of the acknowledgement window).
    pub(crate) fn set_local_window(&mut self, window: u64) {
        self.local_window = window.max(1);
    }

    /// This endpoint's Sequence Window in use.
    pub(crate) fn local_window(&self) -> u64 {
        self.local_window
    }

    /// The peer's Sequence Window in use.
    pub(crate) fn peer_window(&self) -> u64 {
        self.peer_window
    }

    /// Sets ISR and GSR from the peer's first packet (RFC 4340 §8.5 step 3
    /// for a server, step 4 for a client). Returns ISR, extended.
    pub(crate) fn set_isr(&mut self, seq: SeqNum) -> u64 {
        let isr = BASE + seq.value();
        self.received = Some(Received { isr, gsr: isr });
        isr
    }

    /// Extends a received sequence number around GSR (around nothing before
    /// ISR is known: then the number is taken as the first). `None` if it
    /// would fall below zero, which no valid number does.
    pub(crate) fn extend_received(&self, seq: SeqNum) -> Option<u64> {
        match self.received {
            None => Some(BASE + seq.value()),
            Some(r) => extend_around(r.gsr, seq),
        }
    }

    /// Extends a received acknowledgement number around GSS.
    pub(crate) fn extend_ack(&self, ack: SeqNum) -> Option<u64> {
        extend_around(self.gss, ack)
    }

    /// The 48-bit wire form of an extended number.
    pub(crate) fn wire(extended: u64) -> SeqNum {
        SeqNum::new(extended)
    }

    /// SWL = max(GSR + 1 − floor(W/4), ISR) (RFC 4340 §7.5.1).
    pub(crate) fn swl(&self) -> Option<u64> {
        let r = self.received?;
        Some((r.gsr + 1).saturating_sub(self.peer_window / 4).max(r.isr))
    }

    /// SWH = GSR + floor(3W/4) (RFC 4340 §7.5.1).
    pub(crate) fn swh(&self) -> Option<u64> {
        let r = self.received?;
        Some(r.gsr.saturating_add(self.peer_window.saturating_mul(3) / 4))
    }

    /// AWL = max(GSS + 1 − W', ISS) (RFC 4340 §7.5.1).
    pub(crate) fn awl(&self) -> u64 {
        (self.gss + 1)
            .saturating_sub(self.local_window)
            .max(self.iss)
    }

    /// AWH = GSS (RFC 4340 §7.5.1).
    pub(crate) fn awh(&self) -> u64 {
        self.gss
    }

    /// Whether `ack` lies in [AWL, AWH].
    pub(crate) fn ack_in_window(&self, ack: u64) -> bool {
        (self.awl()..=self.awh()).contains(&ack)
    }

    /// RFC 4340 §8.5 step 6: "Let LSWL = S.SWL and LAWL = S.AWL. If P.type ==
    /// CloseReq or P.type == Close or P.type == Reset, LSWL := S.GSR + 1, LAWL
    /// := S.GAR. If LSWL <= P.seqno <= S.SWH and (P.ackno does not exist or
    /// LAWL <= P.ackno <= S.AWH)" the packet is valid.
    pub(crate) fn is_valid(&self, packet_type: PacketType, seq: u64, ack: Option<u64>) -> bool {
        let (Some(r), Some(swl), Some(swh)) = (self.received, self.swl(), self.swh()) else {
            return false;
        };
        let (lswl, lawl) = match packet_type {
            PacketType::CloseReq | PacketType::Close | PacketType::Reset => (r.gsr + 1, self.gar),
            _ => (swl, self.awl()),
        };
        (lswl..=swh).contains(&seq) && ack.is_none_or(|a| (lawl..=self.awh()).contains(&a))
    }

    /// RFC 4340 §8.5 step 5: a Sync or SyncAck is valid if "S.AWL <= P.ackno
    /// <= S.AWH and P.seqno >= S.SWL".
    pub(crate) fn sync_is_valid(&self, seq: u64, ack: u64) -> bool {
        self.swl().is_some_and(|swl| seq >= swl) && self.ack_in_window(ack)
    }

    /// The variables as wire numbers.
    pub(crate) fn numbers(&self) -> SequenceNumbers {
        SequenceNumbers {
            iss: Self::wire(self.iss),
            gss: Self::wire(self.gss),
            isr: self.isr().map(Self::wire),
            gsr: self.gsr().map(Self::wire),
            gar: Self::wire(self.gar),
            swl: self.swl().map(Self::wire),
            swh: self.swh().map(Self::wire),
            awl: Self::wire(self.awl()),
            awh: Self::wire(self.awh()),
        }
    }

    /// "Update S.GSR, S.SWL, S.SWH" (the windows follow GSR) and, unless the
    /// packet is a Sync, "Update S.GAR" (RFC 4340 §8.5 steps 5 and 6).
    pub(crate) fn on_valid(&mut self, seq: u64, ack: Option<u64>, is_sync: bool) {
        if let Some(r) = &mut self.received {
            r.gsr = r.gsr.max(seq);
        }
        if let (false, Some(ack)) = (is_sync, ack) {
            self.gar = self.gar.max(ack);
        }
    }
}

/// The extended number with `wire`'s low 48 bits closest to `center` in
/// circular order.
fn extend_around(center: u64, wire: SeqNum) -> Option<u64> {
    let distance = SeqNum::new(center).distance(wire);
    center.checked_add_signed(distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(iss: u64) -> SequenceState {
        SequenceState::new(iss, 100, 100)
    }

    #[test]
    fn windows_follow_rfc_4340_7_5_1() {
        let mut s = client(1000);
        // The Request, then eight more packets.
        for _ in 0..9 {
            s.next();
        }
        let isr = s.set_isr(SeqNum::new(5000));
        assert_eq!(s.swl(), Some(isr), "SWL is at least ISR");
        assert_eq!(s.swh(), Some(isr + 75), "SWH = GSR + floor(3W/4)");
        assert_eq!(s.awl(), s.iss(), "AWL is at least ISS");
        assert_eq!(s.awh(), s.iss() + 8);
        s.on_valid(isr + 60, None, false);
        assert_eq!(s.swl(), Some(isr + 61 - 25));
        assert_eq!(s.swh(), Some(isr + 60 + 75));
        for _ in 0..200 {
            s.next();
        }
        assert_eq!(s.awl(), s.gss() + 1 - 100);
    }

    #[test]
    fn step_6_checks_and_the_stricter_close_and_reset_rule() {
        let mut s = client(0);
        s.next();
        let isr = s.set_isr(SeqNum::new(77));
        let gss = s.gss();
        assert!(s.is_valid(PacketType::Ack, isr + 1, Some(gss)));
        assert!(s.is_valid(PacketType::Data, isr + 75, None));
        assert!(!s.is_valid(PacketType::Data, isr + 76, None));
        assert!(!s.is_valid(PacketType::Ack, isr + 1, Some(gss + 1)));
        // Close, CloseReq and Reset must be newer than GSR.
        assert!(!s.is_valid(PacketType::Reset, isr, Some(gss)));
        assert!(s.is_valid(PacketType::Reset, isr + 1, Some(gss)));
        s.on_valid(isr + 10, Some(gss), false);
        assert_eq!(s.gar(), gss);
        assert!(
            s.is_valid(PacketType::Data, isr + 5, None),
            "within W/4 below GSR"
        );
        assert!(!s.is_valid(PacketType::Close, isr + 5, Some(gss)));
    }

    #[test]
    fn sync_validity_needs_the_ack_window_only_above_swl() {
        let mut s = client(10);
        s.next();
        let isr = s.set_isr(SeqNum::new(20));
        // A Sync far above SWH is valid (step 5 resynchronises GSR).
        assert!(s.sync_is_valid(isr + 10_000, s.gss()));
        assert!(!s.sync_is_valid(isr + 10_000, s.gss() + 1));
        s.on_valid(isr + 10_000, Some(s.gss()), true);
        assert_eq!(s.gsr(), Some(isr + 10_000));
        assert_eq!(s.gar(), s.iss(), "a Sync does not update GAR");
    }

    #[test]
    fn extension_across_the_48_bit_wrap() {
        let top = SeqNum::MODULUS - 3;
        let mut s = client(top);
        let first = s.next();
        assert_eq!(SequenceState::wire(first).value(), top);
        for _ in 0..5 {
            s.next();
        }
        assert_eq!(
            SequenceState::wire(s.gss()).value(),
            2,
            "wrapped on the wire"
        );
        assert_eq!(s.extend_ack(SeqNum::new(1)), Some(s.gss() - 1));
        assert_eq!(s.extend_ack(SeqNum::new(top)), Some(first));
        let isr = s.set_isr(SeqNum::new(SeqNum::MODULUS - 1));
        assert_eq!(s.extend_received(SeqNum::new(4)), Some(isr + 5));
        assert_eq!(
            s.extend_received(SeqNum::new(SeqNum::MODULUS - 2)),
            Some(isr - 1)
        );
    }
}
