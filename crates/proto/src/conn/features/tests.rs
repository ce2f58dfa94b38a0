//! Feature negotiation tests.

use super::*;

fn options(list: Vec<DccpOption>) -> Options {
    Options::from_options(list).unwrap()
}

fn config(ccid: Ccid, accepted: Vec<Ccid>) -> ConnectionConfig {
    ConnectionConfig {
        ccid,
        accepted_ccids: accepted,
        ..ConnectionConfig::default()
    }
}

/// Runs a Request and a Response between two configurations.
fn negotiate(
    client: &ConnectionConfig,
    server: &ConnectionConfig,
) -> Result<(Features, Features), NegotiationFailure> {
    let mut c = Features::client(client);
    let request = options(c.take_options());
    let mut s = Features::server(server, &request)?;
    let response = options(s.take_options());
    c.on_response(&response)?;
    Ok((c, s))
}

#[test]
fn server_priority_picks_the_servers_first_common_ccid() {
    assert_eq!(reconcile(&[3, 2, 4], &[2, 4]), Some(2));
    assert_eq!(reconcile(&[4, 3], &[3, 4]), Some(4));
    assert_eq!(reconcile(&[3], &[2]), None);
    let (c, s) = negotiate(
        &config(Ccid::Ccid2, vec![Ccid::Ccid2, Ccid::Tfrc]),
        &ConnectionConfig::default(),
    )
    .unwrap();
    // The server prefers 3 and the client accepts it.
    assert_eq!(c.ccids(), Some((Ccid::Tfrc, Ccid::Tfrc)));
    assert_eq!(s.ccids(), Some((Ccid::Tfrc, Ccid::Tfrc)));
    let (c, _) = negotiate(&config(Ccid::Ccid2, vec![]), &ConnectionConfig::default()).unwrap();
    assert_eq!(c.ccids(), Some((Ccid::Ccid2, Ccid::Ccid2)));
}

#[test]
fn no_common_ccid_is_an_option_error_naming_the_ccid() {
    let failure = negotiate(
        &config(Ccid::TfrcSp, vec![]),
        &config(Ccid::Tfrc, vec![Ccid::Ccid2]),
    )
    .unwrap_err();
    assert_eq!(failure.code, ResetCode::OptionError);
    assert_eq!(failure.data, [kind::CHANGE_L, feature_number::CCID, 4]);
}

#[test]
fn a_confirm_that_breaks_the_reconciliation_rule_is_refused() {
    let mut c = Features::client(&ConnectionConfig::default());
    let _ = c.take_options();
    // The "server" lists 2 first but confirms 3.
    let bad = options(vec![DccpOption::ConfirmR(Feature::Ccid(vec![3, 2, 3]))]);
    let failure = c.on_response(&bad).unwrap_err();
    assert_eq!(failure.data, [kind::CONFIRM_R, feature_number::CCID, 3]);
    // An empty Confirm for the CCID is refused too (it must be understood).
    let mut c = Features::client(&ConnectionConfig::default());
    let empty = options(vec![DccpOption::ConfirmR(Feature::Ccid(vec![]))]);
    assert_eq!(
        c.on_response(&empty).unwrap_err().code,
        ResetCode::OptionError
    );
}

#[test]
fn sequence_window_and_ack_ratio_are_confirmed_or_refused_with_an_empty_confirm() {
    let mut f = Features::new(Role::Server, &config(Ccid::Tfrc, vec![]));
    f.on_options(&options(vec![
        DccpOption::ChangeL(Feature::SequenceWindow(Some(500))),
        DccpOption::ChangeL(Feature::AckRatio(Some(7))),
    ]))
    .unwrap();
    assert_eq!(f.peer_window(), Some(500));
    assert_eq!(f.ack_ratio(), 7);
    let sent = f.take_options();
    assert!(sent.contains(&DccpOption::ConfirmR(Feature::SequenceWindow(Some(500)))));
    assert!(sent.contains(&DccpOption::ConfirmR(Feature::AckRatio(Some(7)))));
    f.on_options(&options(vec![DccpOption::ChangeL(
        Feature::SequenceWindow(Some(5)),
    )]))
    .unwrap();
    assert_eq!(f.peer_window(), Some(500), "below 32 is refused");
    assert_eq!(
        f.take_options(),
        vec![DccpOption::ConfirmR(Feature::SequenceWindow(None))]
    );
    f.on_options(&options(vec![DccpOption::ChangeR(Feature::Unknown {
        number: 200,
        value: vec![1, 2],
    })]))
    .unwrap();
    assert_eq!(
        f.take_options(),
        vec![DccpOption::ConfirmL(Feature::Unknown {
            number: 200,
            value: vec![]
        })]
    );
}

#[test]
fn changes_stay_pending_until_confirmed_and_confirms_are_sent_once() {
    let (mut c, mut s) =
        negotiate(&config(Ccid::Ccid2, vec![]), &config(Ccid::Ccid2, vec![])).unwrap();
    // The server (CCID 2 sender) asked for Ack Vectors in the Response;
    // the client's first packet confirms; the client's own request for
    // Ack Vectors and its Confirm of the server's window ride along.
    let first = c.take_options();
    assert!(
        first.contains(&DccpOption::ConfirmL(Feature::SendAckVector(vec![
            true, true, false
        ])))
    );
    assert!(first.contains(&DccpOption::ChangeR(Feature::SendAckVector(vec![true]))));
    s.on_options(&options(first)).unwrap();
    assert!(s.peer_sends_ack_vectors());
    assert!(!s.has_pending_changes());
    // The client's Change stays until the server's Confirm arrives.
    assert!(c.has_pending_changes());
    let answer = s.take_options();
    c.on_options(&options(answer)).unwrap();
    assert!(!c.has_pending_changes());
    assert!(!c.has_confirms());
    // A Confirm of another value confirms nothing.
    c.change_ack_ratio(6);
    c.on_options(&options(vec![DccpOption::ConfirmR(Feature::AckRatio(
        Some(3),
    ))]))
    .unwrap();
    assert!(c.has_pending_changes());
    c.on_options(&options(vec![DccpOption::ConfirmR(Feature::AckRatio(
        Some(6),
    ))]))
    .unwrap();
    assert!(!c.has_pending_changes());
    c.change_ack_ratio(4);
    c.change_ack_ratio(5);
    assert_eq!(
        c.take_options(),
        vec![DccpOption::ChangeL(Feature::AckRatio(Some(5)))],
        "a newer Change replaces the older"
    );
}

fn without_ecn() -> ConnectionConfig {
    ConnectionConfig {
        ecn: false,
        ..ConnectionConfig::default()
    }
}

/// RFC 4340 §12.1: ECN is on by default; an endpoint configured without it
/// announces Change L(ECN Incapable, 1), and ECT is then off at both ends,
/// whichever side asked.
#[test]
fn ecn_incapable_on_either_side_turns_ecn_off_for_both() {
    let (c, s) = negotiate(&ConnectionConfig::default(), &ConnectionConfig::default()).unwrap();
    assert!(c.ecn_permitted() && s.ecn_permitted());
    let (c, s) = negotiate(&without_ecn(), &ConnectionConfig::default()).unwrap();
    assert!(!c.ecn_permitted() && !s.ecn_permitted());
    let (c, s) = negotiate(&ConnectionConfig::default(), &without_ecn()).unwrap();
    assert!(!c.ecn_permitted() && !s.ecn_permitted());

    // The Change is answered with the reconciled value first and the
    // answering endpoint's preference list (0, then 1).
    let mut c = Features::client(&without_ecn());
    let request = c.take_options();
    assert!(request.contains(&DccpOption::ChangeL(Feature::EcnIncapable(vec![true]))));
    let mut s = Features::server(&ConnectionConfig::default(), &options(request)).unwrap();
    let response = s.take_options();
    assert!(
        response.contains(&DccpOption::ConfirmR(Feature::EcnIncapable(vec![
            true, false, true
        ])))
    );
    c.on_response(&options(response)).unwrap();
    // Confirmed: the Change is no longer repeated.
    assert!(!c
        .take_options()
        .iter()
        .any(|o| o.feature().map(Feature::number) == Some(feature_number::ECN_INCAPABLE)));
}

/// A peer that asks this endpoint to be ECN incapable (Change R) is obeyed;
/// a value list without a common value gets an empty Confirm.
#[test]
fn ecn_incapable_change_r_and_unreconcilable_lists() {
    let mut f = Features::new(Role::Server, &ConnectionConfig::default());
    f.on_options(&options(vec![DccpOption::ChangeR(Feature::EcnIncapable(
        vec![true],
    ))]))
    .unwrap();
    assert!(!f.ecn_permitted());
    let mut f = Features::new(Role::Server, &without_ecn());
    f.on_options(&options(vec![DccpOption::ChangeL(Feature::EcnIncapable(
        vec![false],
    ))]))
    .unwrap();
    assert!(!f.ecn_permitted());
    assert!(f
        .take_options()
        .contains(&DccpOption::ConfirmR(Feature::EcnIncapable(Vec::new()))));
}
