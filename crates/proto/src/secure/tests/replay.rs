//! The replay window: duplicates and packets older than the window are
//! refused, reordering within it is accepted, and only authentic packets
//! move it.

use super::*;
use crate::secure::replay::{Refusal, ReplayWindow};

/// Seals the client's packets `0..count` after its ISS (skipping `skip`).
fn sealed_run(count: u64) -> Vec<Vec<u8>> {
    let (mut client, _) = pair();
    (1..=count)
        .map(|n| sealed(client.sealer(), &data(From::Client, n, &payload(20)), &UDP))
        .collect()
}

#[test]
fn a_packet_opens_once() {
    let (_, mut server) = pair();
    let wire = sealed_run(1).remove(0);
    assert!(opened(server.opener(), &wire, &UDP).is_ok());
    assert_eq!(
        opened(server.opener(), &wire, &UDP),
        Err(OpenError::Replayed {
            seq: SeqNum::new(CLIENT_ISS).add(1)
        })
    );
    assert_eq!(
        server.opener().highest_opened(),
        Some(SeqNum::new(CLIENT_ISS).add(1))
    );
}

#[test]
fn reordering_within_the_window_is_accepted() {
    let (_, mut server) = pair();
    let wires = sealed_run(200);
    // Odd ones first, then the even ones backwards, then all again.
    let order: Vec<usize> = (0..200)
        .filter(|i| i % 2 == 1)
        .chain((0..200).filter(|i| i % 2 == 0).rev())
        .collect();
    for &i in &order {
        assert!(opened(server.opener(), &wires[i], &UDP).is_ok(), "{i}");
    }
    for &i in &order {
        assert!(matches!(
            opened(server.opener(), &wires[i], &UDP),
            Err(OpenError::Replayed { .. })
        ));
    }
}

#[test]
fn the_window_edge_is_exact() {
    let (mut client, mut server) = pair();
    let window = REPLAY_WINDOW;
    let old = sealed(client.sealer(), &data(From::Client, 1, b"old"), &UDP);
    let edge = sealed(client.sealer(), &data(From::Client, 2, b"edge"), &UDP);
    let newest = sealed(
        client.sealer(),
        &data(From::Client, 1 + window, b"newest"),
        &UDP,
    );
    assert!(opened(server.opener(), &newest, &UDP).is_ok());
    // 1 + W − 2 = W − 1 behind the newest: the oldest the window holds.
    assert!(opened(server.opener(), &edge, &UDP).is_ok());
    // W behind: refused, with the newest named.
    assert_eq!(
        opened(server.opener(), &old, &UDP),
        Err(OpenError::TooOld {
            seq: SeqNum::new(CLIENT_ISS).add(1),
            newest: SeqNum::new(CLIENT_ISS).add(1 + window),
        })
    );
}

#[test]
fn a_forged_packet_does_not_move_the_window() {
    let (mut client, mut server) = pair();
    let early = sealed(client.sealer(), &data(From::Client, 1, b"early"), &UDP);
    let far = sealed(
        client.sealer(),
        &data(From::Client, 5000, b"far ahead"),
        &UDP,
    );
    let mut forged = far.clone();
    let last = forged.len() - 1;
    forged[last] ^= 1;
    assert!(matches!(
        opened(server.opener(), &forged, &UDP),
        Err(OpenError::BadTag { .. })
    ));
    assert_eq!(server.opener().highest_opened(), None);
    // Had the forgery moved the window, this would be too old.
    assert!(opened(server.opener(), &early, &UDP).is_ok());
    assert!(opened(server.opener(), &far, &UDP).is_ok());
}

#[test]
fn window_slides_and_forgets() {
    let mut window = ReplayWindow::new();
    assert_eq!(window.check(0), Ok(()));
    window.accept(0);
    assert_eq!(window.check(0), Err(Refusal::Replayed));
    // A jump of exactly the window size forgets everything before.
    window.accept(REPLAY_WINDOW);
    assert_eq!(
        window.check(0),
        Err(Refusal::TooOld {
            highest: REPLAY_WINDOW
        })
    );
    for p in 1..REPLAY_WINDOW {
        assert_eq!(window.check(p), Ok(()), "{p} was never accepted");
    }
    // Slots are reused modulo the window: accepting p + W must clear p's
    // bit for p + W's and not report p + W as replayed.
    window.accept(REPLAY_WINDOW + 1);
    assert_eq!(window.check(REPLAY_WINDOW + 1), Err(Refusal::Replayed));
    assert_eq!(window.check(2), Ok(()));
    window.accept(2 * REPLAY_WINDOW + 5);
    for p in REPLAY_WINDOW + 6..2 * REPLAY_WINDOW + 5 {
        assert_eq!(window.check(p), Ok(()), "{p}");
    }
    assert_eq!(window.low_edge(), REPLAY_WINDOW + 6);
}
