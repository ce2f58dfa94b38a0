//! Key epochs: a new key every 2^EPOCH_BITS packets, without signalling,
//! and packets reordered across a boundary open in either order.

use chacha20poly1305::{AeadInOut, Tag};

use super::*;
use crate::secure::keys::{nonce, DirectionKeys, EpochKeys};

const EPOCH: u64 = 1 << EPOCH_BITS;

/// Sealed client packets at positions `positions` (in increasing order).
fn sealed_at(positions: &[u64]) -> Vec<Vec<u8>> {
    let (mut client, _) = pair();
    positions
        .iter()
        .map(|&p| sealed(client.sealer(), &data(From::Client, p, &payload(24)), &UDP))
        .collect()
}

#[test]
fn the_key_changes_at_the_boundary() {
    let (mut client, _) = pair();
    let sealer = client.sealer();
    sealed(sealer, &data(From::Client, EPOCH - 1, b"last of 0"), &UDP);
    assert_eq!(sealer.epoch(), 0);
    let wire = sealed(sealer, &data(From::Client, EPOCH, b"first of 1"), &UDP);
    assert_eq!(sealer.epoch(), 1);

    // The epoch-1 packet does not verify under the epoch-0 key, and does
    // under the key one update later.
    let mut context = [0u8; 16];
    context[0..2].copy_from_slice(&CLIENT_PORT.to_be_bytes());
    context[2..4].copy_from_slice(&SERVER_PORT.to_be_bytes());
    context[4..10].copy_from_slice(&CLIENT_ISS.to_be_bytes()[2..]);
    context[10..16].copy_from_slice(&SERVER_ISS.to_be_bytes()[2..]);
    let keys = DirectionKeys::derive(master(), &context, 0);
    let header_len = usize::from(wire[4]) * 4;
    let seq = SeqNum::new(CLIENT_ISS).add(EPOCH);
    let tries = |epoch_keys: &EpochKeys| {
        let mut associated = wire[..header_len].to_vec();
        associated[6..8].fill(0);
        let mut body = wire[header_len..wire.len() - TAG_LEN].to_vec();
        let tag = Tag::try_from(&wire[wire.len() - TAG_LEN..]).expect("16 bytes");
        epoch_keys
            .aead()
            .decrypt_inout_detached(
                &nonce(&keys.iv, seq),
                &associated,
                body.as_mut_slice().into(),
                &tag,
            )
            .is_ok()
    };
    assert!(!tries(&keys.first), "epoch 0's key");
    let next = keys.first.next();
    assert_eq!(next.epoch(), 1);
    assert!(tries(&next), "epoch 1's key");
}

#[test]
fn across_a_boundary_in_order() {
    let positions = [EPOCH - 3, EPOCH - 2, EPOCH - 1, EPOCH, EPOCH + 1, EPOCH + 2];
    let wires = sealed_at(&positions);
    let (_, mut server) = pair();
    for (wire, p) in wires.iter().zip(positions) {
        assert!(opened(server.opener(), wire, &UDP).is_ok(), "position {p}");
    }
}

#[test]
fn across_a_boundary_reordered() {
    let positions = [EPOCH - 3, EPOCH - 2, EPOCH - 1, EPOCH, EPOCH + 1, EPOCH + 2];
    let wires = sealed_at(&positions);
    let (_, mut server) = pair();
    // New epoch first, then the old one's stragglers, interleaved.
    for i in [3, 0, 5, 2, 4, 1] {
        assert!(
            opened(server.opener(), &wires[i], &UDP).is_ok(),
            "position {}",
            positions[i]
        );
    }
}

#[test]
fn the_old_key_is_dropped_once_the_window_leaves_its_epoch() {
    let positions = [EPOCH - 1, EPOCH + REPLAY_WINDOW, 2 * EPOCH];
    let wires = sealed_at(&positions);
    let (_, mut server) = pair();
    assert!(opened(server.opener(), &wires[1], &UDP).is_ok());
    // The window's low edge is now in epoch 1: epoch 0 is too old, and
    // epoch 2 is within reach.
    assert!(matches!(
        opened(server.opener(), &wires[0], &UDP),
        Err(OpenError::TooOld { .. })
    ));
    assert!(opened(server.opener(), &wires[2], &UDP).is_ok());
}

#[test]
fn more_than_one_epoch_ahead_is_refused() {
    let (_, mut server) = pair();
    // Sealed honestly, epoch by epoch, then offered to a fresh opener.
    let wires = sealed_at(&[1, EPOCH, 2 * EPOCH]);
    assert_eq!(
        opened(server.opener(), &wires[2], &UDP),
        Err(OpenError::TooFarAhead {
            seq: SeqNum::new(CLIENT_ISS).add(2 * EPOCH)
        })
    );
    assert!(opened(server.opener(), &wires[0], &UDP).is_ok());
    assert!(opened(server.opener(), &wires[1], &UDP).is_ok());
}

#[test]
fn a_forgery_in_the_next_epoch_changes_nothing() {
    let wires = sealed_at(&[1, 2, EPOCH + 5]);
    let (_, mut server) = pair();
    assert!(opened(server.opener(), &wires[0], &UDP).is_ok());
    let mut forged = wires[2].clone();
    let at = forged.len() - 3;
    forged[at] ^= 0x40;
    assert!(matches!(
        opened(server.opener(), &forged, &UDP),
        Err(OpenError::BadTag { .. })
    ));
    assert!(opened(server.opener(), &wires[1], &UDP).is_ok());
    assert!(opened(server.opener(), &wires[2], &UDP).is_ok());
}
