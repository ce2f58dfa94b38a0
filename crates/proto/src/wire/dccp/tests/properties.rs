//! Property tests: round trips, corruption detection, no panics.

use super::*;
use crate::wire::options::tests::properties::arb_options;

/// A repr's parts with an owned payload.
#[derive(Clone, Debug)]
struct Parts {
    src_port: u16,
    dst_port: u16,
    ccval: u8,
    checksum_coverage: u8,
    short_seqno: bool,
    seq: SeqNum,
    kind: PacketKind,
    options: Options,
    payload: Vec<u8>,
}

impl Parts {
    fn repr(&self) -> DccpRepr<'_> {
        DccpRepr {
            src_port: self.src_port,
            dst_port: self.dst_port,
            ccval: self.ccval,
            checksum_coverage: self.checksum_coverage,
            short_seqno: self.short_seqno,
            seq: self.seq,
            kind: self.kind,
            options: self.options.clone(),
            payload: &self.payload,
        }
    }
}

fn arb_seq(short: bool) -> impl Strategy<Value = SeqNum> + Clone {
    let bound = if short { 1u64 << 24 } else { SeqNum::MODULUS };
    (0..bound).prop_map(SeqNum::new)
}

fn arb_kind(short: bool) -> BoxedStrategy<PacketKind> {
    let ack = arb_seq(short);
    let short_kinds = prop_oneof![
        Just(PacketKind::Data),
        ack.clone().prop_map(|ack| PacketKind::Ack { ack }),
        ack.clone().prop_map(|ack| PacketKind::DataAck { ack }),
    ];
    if short {
        return short_kinds.boxed();
    }
    prop_oneof![
        short_kinds,
        any::<u32>().prop_map(|service_code| PacketKind::Request { service_code }),
        (ack.clone(), any::<u32>())
            .prop_map(|(ack, service_code)| PacketKind::Response { ack, service_code }),
        ack.clone().prop_map(|ack| PacketKind::CloseReq { ack }),
        ack.clone().prop_map(|ack| PacketKind::Close { ack }),
        (ack.clone(), any::<u8>(), any::<[u8; 3]>()).prop_map(|(ack, code, data)| {
            PacketKind::Reset {
                ack,
                code: ResetCode::from(code),
                data,
            }
        }),
        ack.clone().prop_map(|ack| PacketKind::Sync { ack }),
        ack.prop_map(|ack| PacketKind::SyncAck { ack }),
    ]
    .boxed()
}

fn arb_parts() -> impl Strategy<Value = Parts> {
    any::<bool>()
        .prop_flat_map(|short_seqno| {
            (
                any::<u16>(),
                any::<u16>(),
                0u8..16,
                Just(short_seqno),
                arb_seq(short_seqno),
                arb_kind(short_seqno),
                arb_options(),
                proptest::collection::vec(any::<u8>(), 0..80),
            )
        })
        .prop_flat_map(|parts| {
            // CsCov may cover at most the data there is.
            let max_cscov = (parts.7.len() / 4 + 1).min(15) as u8;
            (Just(parts), 0..=max_cscov)
        })
        .prop_map(
            |((src_port, dst_port, ccval, short_seqno, seq, kind, options, payload), cscov)| {
                Parts {
                    src_port,
                    dst_port,
                    ccval,
                    checksum_coverage: cscov,
                    short_seqno,
                    seq,
                    kind,
                    options,
                    payload,
                }
            },
        )
}

fn arb_context() -> impl Strategy<Value = ChecksumContext> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<[u8; 4]>(), any::<u8>()).prop_map(|(s, d, protocol)| {
            ChecksumContext::PseudoHeader(PseudoHeader::V4 {
                src: Ipv4Addr::from(s),
                dst: Ipv4Addr::from(d),
                protocol,
            })
        }),
        (any::<[u8; 16]>(), any::<[u8; 16]>()).prop_map(|(s, d)| {
            ChecksumContext::PseudoHeader(PseudoHeader::native_v6(
                Ipv6Addr::from(s),
                Ipv6Addr::from(d),
            ))
        }),
        Just(ChecksumContext::UdpEncapsulated),
    ]
}

proptest! {
    #[test]
    fn emit_then_parse_round_trips(parts in arb_parts(), context in arb_context()) {
        let repr = parts.repr();
        let bytes = repr.emit_to_vec(&context).expect("valid repr emits");
        prop_assert_eq!(bytes.len(), repr.buffer_len());
        prop_assert_eq!(usize::from(bytes[4]) * 4, repr.header_len());
        let parsed = DccpRepr::parse_bytes(&bytes, &context).expect("emitted packet parses");
        prop_assert_eq!(&parsed, &repr);
        // The emitted checksum agrees with the longhand computation.
        if let ChecksumContext::PseudoHeader(PseudoHeader::V6 { src, dst, .. }) = context {
            prop_assert_eq!(u16::from_be_bytes([bytes[6], bytes[7]]), reference_v6(src, dst, &bytes));
        }
        if context == ChecksumContext::UdpEncapsulated {
            prop_assert_eq!(&bytes[6..8], &[0, 0]);
        }
    }

    #[test]
    fn any_single_byte_corruption_is_caught(
        parts in arb_parts(),
        index in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let mut parts = parts;
        parts.checksum_coverage = 0;
        let repr = parts.repr();
        let mut bytes = repr.emit_to_vec(&native()).expect("valid repr emits");
        let at = index.index(bytes.len());
        // Byte 5 holds CsCov, which moves the coverage; every other byte is
        // covered by a full-coverage checksum.
        prop_assume!(at != 5);
        bytes[at] ^= flip;
        prop_assert!(DccpRepr::parse_bytes(&bytes, &native()).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = peek_ports(&bytes);
        let unchecked = Packet::new_unchecked(&bytes[..]);
        let _ = (
            unchecked.seq_number(),
            unchecked.ack_number(),
            unchecked.service_code(),
            unchecked.reset(),
            unchecked.options(),
            unchecked.payload(),
            unchecked.payload_ref(),
            unchecked.checksum_coverage_len(),
            unchecked.verify_checksum(&native()),
        );
        if let Ok(packet) = Packet::new_checked(&bytes[..]) {
            prop_assert!(packet.header_len() <= bytes.len());
        }
        let _ = DccpRepr::parse_bytes(&bytes, &native());
        if let Ok(repr) = DccpRepr::parse_bytes(&bytes, &ChecksumContext::UdpEncapsulated) {
            // Whatever parses can be emitted again and parses to the same repr.
            let again = repr.emit_to_vec(&ChecksumContext::UdpEncapsulated).expect("re-emits");
            let reparsed = DccpRepr::parse_bytes(&again, &ChecksumContext::UdpEncapsulated);
            prop_assert_eq!(reparsed.as_ref(), Ok(&repr));
        }
    }

    #[test]
    fn mutated_packets_never_panic(
        parts in arb_parts(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = parts.repr().emit_to_vec(&native()).expect("valid repr emits");
        for (index, value) in edits {
            let at = index.index(bytes.len());
            bytes[at] = value;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        let _ = DccpRepr::parse_bytes(&bytes, &native());
        let _ = DccpRepr::parse_bytes(&bytes, &ChecksumContext::UdpEncapsulated);
    }
}
