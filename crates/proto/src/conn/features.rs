//! Feature negotiation (RFC 4340 §6) for the features a connection uses: the
//! CCIDs of both half-connections, Sequence Window, Ack Ratio, Send Ack
//! Vector and ECN Incapable; every other feature is answered so that the peer
//! keeps its default.
//!
//! Roles, as in RFC 4340 §6.1: "Change L" asks the peer to agree to a value
//! of a feature located at the sender of the option, "Change R" of a feature
//! located at its receiver; "Confirm L" answers a Change R, "Confirm R" a
//! Change L. The CCID feature is located at each half-connection's sender
//! (CCID/A is A's sending CCID), Sequence Window and Ack Ratio at the sender
//! of the packets they govern, Send Ack Vector at the receiver that sends the
//! vectors.
//!
//! Decisions:
//! - A client asks for both CCIDs in its Request (Change L and Change R with
//!   the same preference list) and its Sequence Window (Change L); the server
//!   reconciles (RFC 4340 §6.3.1, "server-priority": the first entry of the
//!   server's list that the client's list also holds) and confirms in the
//!   Response.
//! - Change options stay pending, and ride on every non-Data packet, until
//!   confirmed (§6.6.3); a Confirm is sent once for each Change received.
//! - Feature options are never put on DCCP-Data or DCCP-DataAck packets
//!   (RFC 4340 §5.8 Table 3 forbids them on Data; DataAck is kept small).
//! - CCID Changes after the handshake are ignored: CCIDs are fixed when the
//!   connection opens (as in Linux).
//! - ECN Incapable (RFC 4340 §12.1, feature 4, server-priority, default 0):
//!   an endpoint whose configuration turns ECN off announces Change
//!   L(ECN Incapable, 1) in its Request or Response; an ECN-capable endpoint
//!   accepts either value for either location (its preference list is
//!   0, 1). ECN-Capable Transport is used only while both locations are 0,
//!   so either side turns it off for both half-connections.

use super::config::{Ccid, ConnectionConfig, MAX_SEQUENCE_WINDOW, MIN_SEQUENCE_WINDOW};
use super::state::Role;
use crate::wire::dccp::ResetCode;
use crate::wire::options::{feature_number, kind, DccpOption, Feature, Options};

/// The most Confirm options queued at once (one per feature and location is
/// all a well-behaved peer causes).
const MAX_CONFIRMS: usize = 16;

/// A negotiation that failed: the Reset to send and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NegotiationFailure {
    /// The Reset Code.
    pub(crate) code: ResetCode,
    /// Reset Data 1-3: the option type, then its first two data bytes.
    pub(crate) data: [u8; 3],
    /// A description.
    pub(crate) reason: String,
}

impl NegotiationFailure {
    fn option_error(option_kind: u8, feature: u8, value: u8, reason: String) -> Self {
        NegotiationFailure {
            code: ResetCode::OptionError,
            data: [option_kind, feature, value],
            reason,
        }
    }
}

/// RFC 4340 §6.3.1: "the first entry in the server's list that also occurs
/// in the client's list".
pub(crate) fn reconcile(server: &[u8], client: &[u8]) -> Option<u8> {
    server.iter().find(|v| client.contains(v)).copied()
}

/// The feature negotiation state of one connection.
#[derive(Clone, Debug)]
pub(crate) struct Features {
    role: Role,
    /// This endpoint's CCID preference list.
    ccid_preferences: Vec<u8>,
    /// The CCID of this endpoint's sending half-connection, once agreed.
    tx_ccid: Option<Ccid>,
    /// The CCID of the peer's sending half-connection, once agreed.
    rx_ccid: Option<Ccid>,
    /// The peer's Sequence Window, if it announced a valid one.
    peer_window: Option<u64>,
    /// The Ack Ratio the peer asked this endpoint to use (RFC 4340 §11.3:
    /// default 2).
    ack_ratio: u16,
    /// Whether the peer agreed to send Ack Vectors.
    peer_sends_ack_vectors: bool,
    /// Change options sent and not yet confirmed.
    pending: Vec<DccpOption>,
    /// Confirm options to send once.
    confirms: Vec<DccpOption>,
    /// This endpoint's configuration allows ECN (it reads ECN bits).
    ecn_configured: bool,
    /// ECN Incapable located at this endpoint (RFC 4340 §12.1), as agreed.
    local_ecn_incapable: bool,
    /// ECN Incapable located at the peer, as agreed.
    peer_ecn_incapable: bool,
}

impl Features {
    /// A client's state: its Request asks for the CCIDs and announces its
    /// Sequence Window.
    pub(crate) fn client(config: &ConnectionConfig) -> Features {
        let preferences = config.ccid_preferences();
        let mut features = Features::new(Role::Client, config);
        features.pending = vec![
            DccpOption::ChangeL(Feature::Ccid(preferences.clone())),
            DccpOption::ChangeR(Feature::Ccid(preferences)),
            DccpOption::ChangeL(Feature::SequenceWindow(Some(
                config.clamped_sequence_window(),
            ))),
        ];
        features.announce_ecn_incapable();
        features
    }

    fn new(role: Role, config: &ConnectionConfig) -> Features {
        Features {
            role,
            ccid_preferences: config.ccid_preferences(),
            tx_ccid: None,
            rx_ccid: None,
            peer_window: None,
            ack_ratio: 2,
            peer_sends_ack_vectors: false,
            pending: Vec::new(),
            confirms: Vec::new(),
            ecn_configured: config.ecn,
            local_ecn_incapable: false,
            peer_ecn_incapable: false,
        }
    }

    /// RFC 4340 §12.1: "DCCP endpoints are ECN-aware by default, but the
    /// ECN Incapable feature lets an endpoint reject the use of ECN." An
    /// endpoint configured without ECN asks for ECN Incapable/local = 1.
    fn announce_ecn_incapable(&mut self) {
        if !self.ecn_configured {
            self.local_ecn_incapable = true;
            self.pending
                .push(DccpOption::ChangeL(Feature::EcnIncapable(vec![true])));
        }
    }

    /// This endpoint's ECN Incapable preference list (RFC 4340 §6.3.1): an
    /// ECN-capable endpoint prefers 0 and accepts 1; one configured without
    /// ECN accepts only 1.
    fn ecn_incapable_preferences(&self) -> Vec<u8> {
        if self.ecn_configured {
            vec![0, 1]
        } else {
            vec![1]
        }
    }

    /// A server's state from the client's Request options: reconciles the
    /// CCIDs and answers every Change; the Response carries the Confirms
    /// and the server's own Sequence Window.
    pub(crate) fn server(
        config: &ConnectionConfig,
        request: &Options,
    ) -> Result<Features, NegotiationFailure> {
        let mut features = Features::new(Role::Server, config);
        features.on_options(request)?;
        // A CCID the client did not negotiate keeps its default, CCID 2
        // (RFC 4340 §10).
        for (slot, kind_asked) in [
            (features.rx_ccid, kind::CHANGE_L),
            (features.tx_ccid, kind::CHANGE_R),
        ] {
            if slot.is_none() && !features.ccid_preferences.contains(&2) {
                return Err(NegotiationFailure::option_error(
                    kind_asked,
                    feature_number::CCID,
                    2,
                    "the client left a CCID at its default, CCID 2, which this server does not accept".into(),
                ));
            }
        }
        features.rx_ccid = features.rx_ccid.or(Some(Ccid::Ccid2));
        features.tx_ccid = features.tx_ccid.or(Some(Ccid::Ccid2));
        features
            .pending
            .push(DccpOption::ChangeL(Feature::SequenceWindow(Some(
                config.clamped_sequence_window(),
            ))));
        if features.tx_ccid == Some(Ccid::Ccid2) {
            features.request_ack_vectors();
        }
        features.announce_ecn_incapable();
        Ok(features)
    }

    /// The client's processing of the Response's options: both CCIDs must be
    /// confirmed with a value from its list, reconciled as RFC 4340 §6.6.8
    /// checks.
    pub(crate) fn on_response(&mut self, options: &Options) -> Result<(), NegotiationFailure> {
        self.on_options(options)?;
        for (agreed, kind_sent) in [
            (self.tx_ccid, kind::CHANGE_L),
            (self.rx_ccid, kind::CHANGE_R),
        ] {
            if agreed.is_none() {
                // Unconfirmed: the feature keeps its default, CCID 2.
                if !self.ccid_preferences.contains(&2) {
                    return Err(NegotiationFailure::option_error(
                        kind_sent,
                        feature_number::CCID,
                        self.ccid_preferences.first().copied().unwrap_or(0),
                        "the Response did not confirm the CCID and the default, CCID 2, is not accepted".into(),
                    ));
                }
            }
        }
        self.tx_ccid = self.tx_ccid.or(Some(Ccid::Ccid2));
        self.rx_ccid = self.rx_ccid.or(Some(Ccid::Ccid2));
        if self.tx_ccid == Some(Ccid::Ccid2) {
            self.request_ack_vectors();
        }
        Ok(())
    }

    /// Processes the Change and Confirm options of a packet.
    pub(crate) fn on_options(&mut self, options: &Options) -> Result<(), NegotiationFailure> {
        for option in options {
            match option {
                DccpOption::ChangeL(feature) => self.on_change(kind::CHANGE_L, feature)?,
                DccpOption::ChangeR(feature) => self.on_change(kind::CHANGE_R, feature)?,
                DccpOption::ConfirmL(feature) => self.on_confirm(kind::CONFIRM_L, feature)?,
                DccpOption::ConfirmR(feature) => self.on_confirm(kind::CONFIRM_R, feature)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn queue_confirm(&mut self, option: DccpOption) {
        // One Confirm per option type and feature: a repeated Change replaces
        // the answer instead of growing the list.
        let key = (option.kind(), option.feature().map(Feature::number));
        self.confirms
            .retain(|c| (c.kind(), c.feature().map(Feature::number)) != key);
        if self.confirms.len() < MAX_CONFIRMS {
            self.confirms.push(option);
        }
    }

    /// The Confirm that answers a Change of type `change_kind`.
    fn confirm_for(change_kind: u8, feature: Feature) -> DccpOption {
        if change_kind == kind::CHANGE_L {
            DccpOption::ConfirmR(feature)
        } else {
            DccpOption::ConfirmL(feature)
        }
    }

    /// Reconciles a server-priority list with `ours`, the server's list
    /// being the DCCP server's (RFC 4340 §6.3.1).
    fn reconcile_with(&self, ours: &[u8], theirs: &[u8]) -> Option<u8> {
        match self.role {
            Role::Server => reconcile(ours, theirs),
            Role::Client => reconcile(theirs, ours),
        }
    }

    fn on_change(&mut self, change_kind: u8, feature: &Feature) -> Result<(), NegotiationFailure> {
        // "L": the feature is located at the peer; "R": at this endpoint.
        let at_peer = change_kind == kind::CHANGE_L;
        match feature {
            Feature::Ccid(list) => {
                let already = if at_peer { self.rx_ccid } else { self.tx_ccid };
                if already.is_some() {
                    // CCIDs are fixed once agreed; a repeated Change (a
                    // retransmitted Request) gets the same answer.
                    if let Some(ccid) = already {
                        let mut value = vec![ccid.number()];
                        value.extend_from_slice(&self.ccid_preferences);
                        self.queue_confirm(Self::confirm_for(change_kind, Feature::Ccid(value)));
                    }
                    return Ok(());
                }
                let Some(chosen) = self
                    .reconcile_with(&self.ccid_preferences, list)
                    .and_then(Ccid::from_number)
                else {
                    // RFC 4340 §6.4: CCID must be understood; no common value
                    // leaves nothing to run the half-connection with.
                    return Err(NegotiationFailure::option_error(
                        change_kind,
                        feature_number::CCID,
                        list.first().copied().unwrap_or(0),
                        format!(
                            "no common CCID: peer offers {list:?}, this endpoint accepts {:?}",
                            self.ccid_preferences
                        ),
                    ));
                };
                if at_peer {
                    self.rx_ccid = Some(chosen);
                } else {
                    self.tx_ccid = Some(chosen);
                }
                let mut value = vec![chosen.number()];
                value.extend_from_slice(&self.ccid_preferences);
                self.queue_confirm(Self::confirm_for(change_kind, Feature::Ccid(value)));
            }
            Feature::SequenceWindow(value) if at_peer => {
                // RFC 4340 §6.3.2: the feature remote accepts any valid value
                // of a non-negotiable feature; §7.5.2 bounds the window.
                match value {
                    Some(w) if (MIN_SEQUENCE_WINDOW..=MAX_SEQUENCE_WINDOW).contains(w) => {
                        self.peer_window = Some(*w);
                        self.queue_confirm(DccpOption::ConfirmR(Feature::SequenceWindow(Some(*w))));
                    }
                    _ => self.queue_confirm(DccpOption::ConfirmR(Feature::SequenceWindow(None))),
                }
            }
            Feature::AckRatio(value) if at_peer => match value {
                // RFC 4340 §11.3: Ack Ratio is a positive integer.
                Some(r) if *r > 0 => {
                    self.ack_ratio = *r;
                    self.queue_confirm(DccpOption::ConfirmR(Feature::AckRatio(Some(*r))));
                }
                _ => self.queue_confirm(DccpOption::ConfirmR(Feature::AckRatio(None))),
            },
            Feature::SendAckVector(list) if !at_peer => {
                // This endpoint can send Ack Vectors; it prefers to.
                let ours = [1u8, 0];
                let theirs: Vec<u8> = list.iter().map(|&b| u8::from(b)).collect();
                let chosen = self.reconcile_with(&ours, &theirs);
                let value = match chosen {
                    Some(v) => vec![v == 1, true, false],
                    None => Vec::new(),
                };
                self.queue_confirm(DccpOption::ConfirmL(Feature::SendAckVector(value)));
            }
            Feature::AllowShortSeqnos(list) => {
                // Only 48-bit sequence numbers are sent and accepted.
                if !list.contains(&false) {
                    return Err(NegotiationFailure::option_error(
                        change_kind,
                        feature_number::ALLOW_SHORT_SEQNOS,
                        1,
                        "the peer insists on short sequence numbers".into(),
                    ));
                }
                self.queue_confirm(Self::confirm_for(
                    change_kind,
                    Feature::AllowShortSeqnos(vec![false, false]),
                ));
            }
            Feature::EcnIncapable(list) => {
                // RFC 4340 §12.1: server-priority, reconciled with this
                // endpoint's list; the result holds for the feature's
                // location.
                let ours = self.ecn_incapable_preferences();
                let theirs: Vec<u8> = list.iter().map(|&b| u8::from(b)).collect();
                let value = match self.reconcile_with(&ours, &theirs) {
                    Some(chosen) => {
                        if at_peer {
                            self.peer_ecn_incapable = chosen == 1;
                        } else {
                            self.local_ecn_incapable = chosen == 1;
                        }
                        let mut value = vec![chosen == 1];
                        value.extend(ours.iter().map(|&v| v == 1));
                        value
                    }
                    // No common value: an empty Confirm keeps the current
                    // one (RFC 4340 §6.6.7 does the same for a feature not
                    // understood).
                    None => Vec::new(),
                };
                self.queue_confirm(Self::confirm_for(change_kind, Feature::EcnIncapable(value)));
            }
            other => {
                // Not understood here, or not negotiable at this location:
                // an empty Confirm keeps the default (RFC 4340 §6.6.7).
                let empty = empty_value(other);
                self.queue_confirm(Self::confirm_for(change_kind, empty));
            }
        }
        Ok(())
    }

    fn on_confirm(
        &mut self,
        confirm_kind: u8,
        feature: &Feature,
    ) -> Result<(), NegotiationFailure> {
        // Confirm R answers this endpoint's Change L (feature at this end);
        // Confirm L answers its Change R (feature at the peer).
        let change_kind = if confirm_kind == kind::CONFIRM_R {
            kind::CHANGE_L
        } else {
            kind::CHANGE_R
        };
        let number = feature.number();
        let Some(index) = self.pending.iter().position(|p| {
            p.kind() == change_kind && p.feature().map(Feature::number) == Some(number)
        }) else {
            return Ok(()); // Nothing asked: a duplicate or stray Confirm.
        };
        if let Feature::Ccid(value) = feature {
            let Some((&chosen, server_list)) = value.split_first() else {
                // RFC 4340 §6.6.7: CCID must be understood.
                return Err(NegotiationFailure::option_error(
                    confirm_kind,
                    number,
                    0,
                    "the peer sent an empty Confirm for the CCID".into(),
                ));
            };
            let reconciled = if server_list.is_empty() {
                self.ccid_preferences.contains(&chosen).then_some(chosen)
            } else {
                self.reconcile_with(&self.ccid_preferences, server_list)
            };
            // RFC 4340 §6.6.8: the confirmed value must be the one the
            // reconciliation rule gives.
            let ccid = Ccid::from_number(chosen).filter(|_| reconciled == Some(chosen));
            let Some(ccid) = ccid else {
                return Err(NegotiationFailure::option_error(
                    confirm_kind,
                    number,
                    chosen,
                    format!(
                        "the peer confirmed CCID {chosen}, which reconciling {server_list:?} with {:?} does not give",
                        self.ccid_preferences
                    ),
                ));
            };
            if change_kind == kind::CHANGE_L {
                self.tx_ccid = Some(ccid);
            } else {
                self.rx_ccid = Some(ccid);
            }
        }
        if !feature.is_server_priority()
            && self.pending.get(index).and_then(DccpOption::feature) != Some(feature)
        {
            // A non-negotiable Confirm must repeat the value sent (RFC 4340
            // §6.3.2); another value confirms nothing, and the Change stays.
            return Ok(());
        }
        if let Feature::SendAckVector(value) = feature {
            self.peer_sends_ack_vectors = value.first().copied().unwrap_or(false);
        }
        if let Feature::EcnIncapable(value) = feature {
            // An empty Confirm (a peer that does not know the feature)
            // leaves the value this endpoint asked for: it still does not
            // read ECN bits.
            if let Some(&agreed) = value.first() {
                if change_kind == kind::CHANGE_L {
                    self.local_ecn_incapable = agreed || !self.ecn_configured;
                } else {
                    self.peer_ecn_incapable = agreed;
                }
            }
        }
        self.pending.remove(index);
        Ok(())
    }

    /// Asks the peer to send Ack Vectors: RFC 4341 §4, the CCID 2 receiver
    /// must have Send Ack Vector enabled.
    pub(crate) fn request_ack_vectors(&mut self) {
        self.queue_change(DccpOption::ChangeR(Feature::SendAckVector(vec![true])));
    }

    /// Announces a new Ack Ratio for the peer to use when acknowledging this
    /// endpoint's data (RFC 4341 §6.1.2, RFC 4340 §11.3).
    pub(crate) fn change_ack_ratio(&mut self, ratio: u16) {
        self.queue_change(DccpOption::ChangeL(Feature::AckRatio(Some(ratio.max(1)))));
    }

    /// Announces a larger Sequence Window for this endpoint's packets (RFC
    /// 4340 §7.5.2: Change L(Sequence Window) "as the connection
    /// progresses").
    pub(crate) fn change_sequence_window(&mut self, window: u64) {
        self.queue_change(DccpOption::ChangeL(Feature::SequenceWindow(Some(window))));
    }

    fn queue_change(&mut self, option: DccpOption) {
        let key = (option.kind(), option.feature().map(Feature::number));
        self.pending
            .retain(|p| (p.kind(), p.feature().map(Feature::number)) != key);
        self.pending.push(option);
    }

    /// The options for the next non-Data packet: the queued Confirms (sent
    /// once) and every pending Change.
    pub(crate) fn take_options(&mut self) -> Vec<DccpOption> {
        let mut out = std::mem::take(&mut self.confirms);
        out.extend(self.pending.iter().cloned());
        out
    }

    /// Whether Confirms wait to be sent.
    pub(crate) fn has_confirms(&self) -> bool {
        !self.confirms.is_empty()
    }

    /// Whether Changes wait for their Confirm.
    pub(crate) fn has_pending_changes(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The agreed CCIDs (sending, receiving), once both are known.
    pub(crate) fn ccids(&self) -> Option<(Ccid, Ccid)> {
        self.tx_ccid.zip(self.rx_ccid)
    }

    /// The peer's Sequence Window, if it announced one.
    pub(crate) fn peer_window(&self) -> Option<u64> {
        self.peer_window
    }

    /// The Ack Ratio the peer asked for.
    pub(crate) fn ack_ratio(&self) -> u16 {
        self.ack_ratio
    }

    /// Whether packets may be sent ECN-Capable (RFC 4340 §12.1): this
    /// endpoint's configuration allows ECN and ECN Incapable is 0 at both
    /// endpoints.
    pub(crate) fn ecn_permitted(&self) -> bool {
        self.ecn_configured && !self.local_ecn_incapable && !self.peer_ecn_incapable
    }

    /// Whether the peer confirmed it sends Ack Vectors.
    pub(crate) fn peer_sends_ack_vectors(&self) -> bool {
        self.peer_sends_ack_vectors
    }
}

/// The empty value of a feature, for an empty Confirm.
fn empty_value(feature: &Feature) -> Feature {
    match feature {
        Feature::Ccid(_) => Feature::Ccid(Vec::new()),
        Feature::AllowShortSeqnos(_) => Feature::AllowShortSeqnos(Vec::new()),
        Feature::SequenceWindow(_) => Feature::SequenceWindow(None),
        Feature::EcnIncapable(_) => Feature::EcnIncapable(Vec::new()),
        Feature::AckRatio(_) => Feature::AckRatio(None),
        Feature::SendAckVector(_) => Feature::SendAckVector(Vec::new()),
        Feature::SendNdpCount(_) => Feature::SendNdpCount(Vec::new()),
        Feature::MinimumChecksumCoverage(_) => Feature::MinimumChecksumCoverage(Vec::new()),
        Feature::CheckDataChecksum(_) => Feature::CheckDataChecksum(Vec::new()),
        Feature::Unknown { number, .. } => Feature::Unknown {
            number: *number,
            value: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests;
