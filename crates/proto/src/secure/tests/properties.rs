//! Property tests: open(seal(x)) == x for arbitrary packets, and opening
//! arbitrary bytes never panics and never succeeds by chance.

use proptest::prelude::*;

use super::*;

fn kind() -> impl Strategy<Value = PacketKind> {
    (0..all_kinds().len()).prop_map(|i| all_kinds()[i])
}

fn options() -> impl Strategy<Value = Options> {
    prop_oneof![
        Just(Options::new()),
        Just(some_options()),
        any::<u32>().prop_map(|t| {
            Options::from_options(vec![DccpOption::Timestamp(t)]).expect("valid")
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn open_of_seal_is_identity(
        kind in kind(),
        options in options(),
        payload in proptest::collection::vec(any::<u8>(), 0..1500),
        // Epochs 0 and 1: what a fresh sealer and opener reach.
        n in 0u64..(2 << EPOCH_BITS),
        ccval in 0u8..16,
        native_checksum in any::<bool>(),
        client_sends in any::<bool>(),
    ) {
        let checksum = if native_checksum { native() } else { UDP };
        let from = if client_sends { From::Client } else { From::Server };
        let (src_port, dst_port) = from.ports();
        let plain = DccpRepr {
            src_port,
            dst_port,
            ccval,
            checksum_coverage: 0,
            short_seqno: false,
            seq: SeqNum::new(from.iss()).add(n),
            kind,
            options,
            payload: &payload,
        }
        .emit_to_vec(&checksum)
        .expect("emits");
        let (mut client, mut server) = pair();
        let (sealer, opener) = match from {
            From::Client => (client.sealer(), server.opener()),
            From::Server => (server.sealer(), client.opener()),
        };
        let mut wire = plain.clone();
        sealer.seal(&mut wire, &checksum).expect("seals");
        prop_assert_eq!(wire.len(), plain.len() + TAG_LEN);
        prop_assert_eq!(opened(opener, &wire, &checksum), Ok(plain));
    }

    #[test]
    fn opening_arbitrary_bytes_never_panics_or_succeeds(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        clear_prefix in 0usize..40,
        native_checksum in any::<bool>(),
    ) {
        let checksum = if native_checksum { native() } else { UDP };
        let (_, mut server) = pair();
        let mut buf = bytes.clone();
        let result = server
            .opener()
            .open_with_clear_prefix(&mut buf, clear_prefix, &checksum)
            .map(|opened| opened.len());
        prop_assert!(result.is_err());
        prop_assert_eq!(&buf, &bytes);
        let _ = peek_response(&bytes);
        let mut buf = bytes.clone();
        prop_assert!(server.opener().open_response(&mut buf, &checksum).is_err());
    }

    #[test]
    fn opening_a_mutated_sealed_packet_never_panics_or_succeeds(
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let (mut client, mut server) = pair();
        let wire = sealed(client.sealer(), &data(From::Client, 1, &payload), &UDP);
        let mut changed = wire.clone();
        for (at, mask) in &edits {
            let i = at.index(changed.len());
            // The Checksum field is neither checked nor authenticated over
            // UDP (it is rewritten on opening).
            if (6..8).contains(&i) {
                continue;
            }
            changed[i] ^= mask;
        }
        if let Some(cut) = cut {
            changed.truncate(cut.index(changed.len()));
        }
        prop_assume!(changed != wire);
        prop_assert!(opened(server.opener(), &changed, &UDP).is_err());
    }
}
