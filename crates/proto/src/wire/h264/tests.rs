use super::*;
use proptest::prelude::*;

/// An IDR slice (type 5, NRI 3) of 11 bytes.
const IDR: [u8; 11] = [
    0x65, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
];

/// `IDR` cut for a maximum payload of 5 bytes: FU indicator 0x7c (F=0,
/// NRI=3, type 28), FU headers 0x85 (S, type 5), 0x05, 0x45 (E, type 5), and
/// 3 bytes of the NAL payload per fragment.
const IDR_FRAGMENTS: [&[u8]; 4] = [
    &[0x7c, 0x85, 0x01, 0x02, 0x03],
    &[0x7c, 0x05, 0x04, 0x05, 0x06],
    &[0x7c, 0x05, 0x07, 0x08, 0x09],
    &[0x7c, 0x45, 0x0a],
];

const SPS: [u8; 4] = [0x67, 0x42, 0x00, 0x1f];
const PPS: [u8; 4] = [0x68, 0xce, 0x3c, 0x80];

/// SPS and PPS in one STAP-A: header 0x78 (F=0, NRI=3, type 24), then each
/// NAL unit after its 16-bit size.
const STAP_A_SPS_PPS: [u8; 13] = [
    0x78, 0x00, 0x04, 0x67, 0x42, 0x00, 0x1f, 0x00, 0x04, 0x68, 0xce, 0x3c, 0x80,
];

/// Owned copy of an event, for assertions.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Nal(Vec<u8>, bool),
    Gap(u16, u16),
    Discarded(NalHeader, usize, DiscardReason),
}

fn own(event: Depacketized<'_>) -> Event {
    match event {
        Depacketized::Nal {
            data,
            end_of_access_unit,
        } => Event::Nal(data.to_vec(), end_of_access_unit),
        Depacketized::Gap { expected, received } => Event::Gap(expected, received),
        Depacketized::Discarded {
            nal_header,
            bytes,
            reason,
        } => Event::Discarded(nal_header, bytes, reason),
    }
}

/// Pushes one payload and returns the events and the result.
fn push(
    depacketizer: &mut Depacketizer,
    seq: u16,
    marker: bool,
    payload: &[u8],
) -> (Vec<Event>, Result<(), H264Error>) {
    let mut events = Vec::new();
    let result = depacketizer.push(seq, marker, payload, |event| events.push(own(event)));
    (events, result)
}

/// Pushes one payload that must be accepted and returns the events.
fn feed(depacketizer: &mut Depacketizer, seq: u16, marker: bool, payload: &[u8]) -> Vec<Event> {
    let (events, result) = push(depacketizer, seq, marker, payload);
    assert_eq!(result, Ok(()), "packet {seq}");
    events
}

#[test]
fn nal_header_fields() {
    let header = NalHeader(0x65);
    assert!(!header.forbidden_zero_bit());
    assert_eq!(header.nri(), 3);
    assert_eq!(header.nal_type(), 5);
    assert_eq!(NalHeader::new(true, 2, 1), NalHeader(0xc1));
    assert_eq!(header.with_type(FU_A), NalHeader(0x7c));
    assert_eq!(
        PacketType::of(header),
        PacketType::SingleNal { nal_type: 5 }
    );
    assert_eq!(PacketType::of(NalHeader(0x78)), PacketType::StapA);
    assert_eq!(PacketType::of(NalHeader(0x7c)), PacketType::FuA);
    assert_eq!(PacketType::of(NalHeader(0x7d)), PacketType::FuB);
    assert_eq!(
        PacketType::of(NalHeader(0x60)),
        PacketType::Reserved { packet_type: 0 }
    );
    assert_eq!(
        PacketType::of(NalHeader(0x7f)),
        PacketType::Reserved { packet_type: 31 }
    );
}

#[test]
fn small_nal_is_one_single_nal_unit_packet() {
    let fragments = packetize(&IDR, 11).unwrap();
    assert_eq!(fragments, [IDR.to_vec()]);
    let mut packetizer = Packetizer::new(&IDR, 1400).unwrap();
    assert_eq!(packetizer.len(), 1);
    let fragment = packetizer.next().unwrap();
    assert_eq!(fragment, Fragment::Single(&IDR));
    assert!(fragment.is_last());
    assert_eq!(packetizer.next(), None);
}

#[test]
fn large_nal_is_cut_into_fu_a_fragments_byte_for_byte() {
    let packetizer = Packetizer::new(&IDR, 5).unwrap();
    assert_eq!(packetizer.len(), 4);
    let fragments: Vec<_> = packetizer.collect();
    for (fragment, expected) in fragments.iter().zip(IDR_FRAGMENTS) {
        let mut buffer = [0xee; 8];
        let len = fragment.emit(&mut buffer).unwrap();
        assert_eq!(&buffer[..len], expected);
    }
    assert_eq!(
        fragments.iter().map(Fragment::is_last).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    assert_eq!(
        packetize(&IDR, 5).unwrap(),
        IDR_FRAGMENTS.map(<[u8]>::to_vec)
    );

    // A non-IDR slice, NRI 2: FU indicator 0x5c, FU headers 0x81 ... 0x41.
    let slice = [0x41, 0xaa, 0xbb, 0xcc];
    assert_eq!(
        packetize(&slice, 3).unwrap(),
        [
            vec![0x5c, 0x81, 0xaa],
            vec![0x5c, 0x01, 0xbb],
            vec![0x5c, 0x41, 0xcc]
        ]
    );
    // One byte over the limit still makes two fragments: S and E apart.
    let eleven = packetize(&IDR, 10).unwrap();
    assert_eq!(
        eleven,
        [
            vec![0x7c, 0x85, 1, 2, 3, 4, 5, 6, 7, 8],
            vec![0x7c, 0x45, 9, 10],
        ]
    );
}

#[test]
fn packetizer_refuses_what_cannot_be_sent() {
    assert_eq!(
        Packetizer::new(&IDR, 2).unwrap_err(),
        H264Error::MaxPayloadTooSmall { max_payload: 2 }
    );
    assert_eq!(Packetizer::new(&[], 1400).unwrap_err(), H264Error::EmptyNal);
    assert_eq!(
        Packetizer::new(&[0x7c, 0x85], 1400).unwrap_err(),
        H264Error::UnsendableNalType { nal_type: 28 }
    );
    assert_eq!(
        Packetizer::new(&[0x00, 0x01], 1400).unwrap_err(),
        H264Error::UnsendableNalType { nal_type: 0 }
    );
    let fragment = Packetizer::new(&IDR, 5).unwrap().next().unwrap();
    assert_eq!(
        fragment.emit(&mut [0; 4]),
        Err(H264Error::BufferTooShort { needed: 5, len: 4 })
    );
}

#[test]
fn fu_a_view_reads_the_headers() {
    let start = FuAPacket::new_checked(IDR_FRAGMENTS[0]).unwrap();
    assert!(start.is_start() && !start.is_end());
    assert_eq!(start.indicator(), NalHeader(0x7c));
    assert_eq!(start.nal_header(), NalHeader(0x65));
    assert_eq!(start.fragment(), [1, 2, 3]);
    let end = FuAPacket::new_checked(IDR_FRAGMENTS[3]).unwrap();
    assert!(!end.is_start() && end.is_end());
    // The R bit is ignored.
    let reserved = FuAPacket::new_checked([0x7c, 0x25, 0x01]).unwrap();
    assert_eq!(reserved.nal_header(), NalHeader(0x65));

    assert_eq!(
        FuAPacket::new_checked([0x7c]).unwrap_err(),
        H264Error::FuATruncated { len: 1 }
    );
    assert_eq!(
        FuAPacket::new_checked([]).unwrap_err(),
        H264Error::FuATruncated { len: 0 }
    );
    assert_eq!(
        FuAPacket::new_checked([0x65, 0x85]).unwrap_err(),
        H264Error::WrongPacketType {
            expected: FU_A,
            found: 5
        }
    );
    assert_eq!(
        FuAPacket::new_checked([0x7c, 0xc5, 1]).unwrap_err(),
        H264Error::FuAStartAndEnd
    );
}

#[test]
fn stap_a_both_ways() {
    let stap = StapAPacket::new_checked(&STAP_A_SPS_PPS[..]).unwrap();
    assert_eq!(stap.header(), NalHeader(0x78));
    assert_eq!(stap.nal_units().collect::<Vec<_>>(), [&SPS[..], &PPS[..]]);
    assert_eq!(stap_a_len(&[&SPS, &PPS]), 13);
    let mut buffer = [0; 13];
    assert_eq!(emit_stap_a(&[&SPS, &PPS], &mut buffer).unwrap(), 13);
    assert_eq!(buffer, STAP_A_SPS_PPS);
    // F is the OR and NRI the maximum of the aggregated units.
    let sei = [0x06, 0x05];
    let flagged = [0xa1, 0x00];
    let mut buffer = [0; 9];
    emit_stap_a(&[&sei, &flagged], &mut buffer).unwrap();
    assert_eq!(
        buffer,
        [0xb8, 0x00, 0x02, 0x06, 0x05, 0x00, 0x02, 0xa1, 0x00]
    );
}

#[test]
fn malformed_stap_a_gives_specific_errors() {
    let check = |bytes: &[u8]| StapAPacket::new_checked(bytes).map(|_| ());
    assert_eq!(check(&[0x78]), Err(H264Error::StapAEmpty));
    assert_eq!(check(&[]), Err(H264Error::EmptyPayload));
    assert_eq!(
        check(&[0x78, 0x00]),
        Err(H264Error::StapASizeTruncated { offset: 1 })
    );
    assert_eq!(
        check(&STAP_A_SPS_PPS[..8]),
        Err(H264Error::StapASizeTruncated { offset: 7 })
    );
    assert_eq!(
        check(&[0x78, 0x00, 0x00, 0x67]),
        Err(H264Error::StapAEmptyNal { offset: 1 })
    );
    assert_eq!(
        check(&STAP_A_SPS_PPS[..12]),
        Err(H264Error::StapANalTruncated {
            offset: 7,
            size: 4,
            available: 3
        })
    );
    assert_eq!(
        check(&IDR),
        Err(H264Error::WrongPacketType {
            expected: STAP_A,
            found: 5
        })
    );
    assert_eq!(emit_stap_a(&[], &mut [0; 8]), Err(H264Error::StapAEmpty));
    assert_eq!(emit_stap_a(&[&[]], &mut [0; 8]), Err(H264Error::EmptyNal));
    let long = vec![0x65; 65_536];
    assert_eq!(
        emit_stap_a(&[&long], &mut [0; 8]),
        Err(H264Error::StapANalTooLong { len: 65_536 })
    );
    assert_eq!(
        emit_stap_a(&[&SPS, &PPS], &mut [0; 12]),
        Err(H264Error::BufferTooShort {
            needed: 13,
            len: 12
        })
    );
}

#[test]
fn depacketizer_passes_single_nal_units_and_splits_stap_a() {
    let mut depacketizer = Depacketizer::default();
    let (events, result) = push(&mut depacketizer, 10, true, &STAP_A_SPS_PPS);
    assert_eq!(result, Ok(()));
    assert_eq!(
        events,
        [
            Event::Nal(SPS.to_vec(), false),
            Event::Nal(PPS.to_vec(), true)
        ]
    );
    let (events, result) = push(&mut depacketizer, 11, true, &IDR);
    assert_eq!(result, Ok(()));
    assert_eq!(events, [Event::Nal(IDR.to_vec(), true)]);
    assert_eq!(depacketizer.stats().nal_units, 3);
}

#[test]
fn depacketizer_reassembles_fu_a_across_the_sequence_wrap() {
    let mut depacketizer = Depacketizer::default();
    let mut all = Vec::new();
    for (i, fragment) in IDR_FRAGMENTS.iter().enumerate() {
        let seq = 65534u16.wrapping_add(i as u16);
        let (events, result) = push(&mut depacketizer, seq, i == 3, fragment);
        assert_eq!(result, Ok(()));
        if i < 3 {
            assert!(events.is_empty(), "{events:?}");
        }
        all.extend(events);
    }
    assert_eq!(all, [Event::Nal(IDR.to_vec(), true)]);
}

#[test]
fn a_missing_fragment_drops_the_nal_unit_and_reports_it() {
    let mut depacketizer = Depacketizer::default();
    feed(&mut depacketizer, 1, false, IDR_FRAGMENTS[0]);
    feed(&mut depacketizer, 2, false, IDR_FRAGMENTS[1]);
    // 3 is lost.
    let (events, result) = push(&mut depacketizer, 4, true, IDR_FRAGMENTS[3]);
    assert_eq!(result, Ok(()));
    assert_eq!(
        events,
        [
            Event::Gap(3, 4),
            Event::Discarded(NalHeader(0x65), 7, DiscardReason::Gap)
        ]
    );
    // The next NAL unit is whole again.
    let events = feed(&mut depacketizer, 5, true, &IDR);
    assert_eq!(events, [Event::Nal(IDR.to_vec(), true)]);
    let stats = depacketizer.stats();
    assert_eq!(
        (
            stats.missing_packets,
            stats.discarded_nal_units,
            stats.skipped_fragments
        ),
        (1, 1, 1)
    );
}

#[test]
fn end_without_start_is_reported_once_per_nal_unit() {
    let mut depacketizer = Depacketizer::default();
    let events = feed(&mut depacketizer, 2, false, IDR_FRAGMENTS[1]);
    assert_eq!(
        events,
        [Event::Discarded(
            NalHeader(0x65),
            3,
            DiscardReason::MissingStart
        )]
    );
    let events = feed(&mut depacketizer, 3, false, IDR_FRAGMENTS[2]);
    assert_eq!(events, []);
    let events = feed(&mut depacketizer, 4, true, IDR_FRAGMENTS[3]);
    assert_eq!(events, []);
    // A lone E fragment is its own orphan.
    let events = feed(&mut depacketizer, 5, true, IDR_FRAGMENTS[3]);
    assert_eq!(
        events,
        [Event::Discarded(
            NalHeader(0x65),
            1,
            DiscardReason::MissingStart
        )]
    );
}

#[test]
fn a_new_nal_unit_before_the_end_fragment_drops_the_partial_one() {
    let mut depacketizer = Depacketizer::default();
    feed(&mut depacketizer, 1, false, IDR_FRAGMENTS[0]);
    let events = feed(&mut depacketizer, 2, true, &SPS);
    assert_eq!(
        events,
        [
            Event::Discarded(NalHeader(0x65), 4, DiscardReason::MissingEnd),
            Event::Nal(SPS.to_vec(), true)
        ]
    );
    // A second Start also ends the first.
    feed(&mut depacketizer, 3, false, IDR_FRAGMENTS[0]);
    let events = feed(&mut depacketizer, 4, false, IDR_FRAGMENTS[0]);
    assert_eq!(
        events,
        [Event::Discarded(
            NalHeader(0x65),
            4,
            DiscardReason::MissingEnd
        )]
    );
    let mut depacketizer2 = depacketizer.clone();
    // finish() reports the unfinished one.
    let mut events = Vec::new();
    depacketizer2.finish(|event| events.push(own(event)));
    assert_eq!(
        events,
        [Event::Discarded(
            NalHeader(0x65),
            4,
            DiscardReason::MissingEnd
        )]
    );
}

#[test]
fn fragments_of_another_nal_type_are_inconsistent() {
    let mut depacketizer = Depacketizer::default();
    feed(&mut depacketizer, 1, false, IDR_FRAGMENTS[0]);
    let events = feed(&mut depacketizer, 2, false, &[0x7c, 0x01, 0x04]);
    assert_eq!(
        events,
        [Event::Discarded(
            NalHeader(0x65),
            4,
            DiscardReason::Inconsistent {
                expected: NalHeader(0x65),
                got: NalHeader(0x61)
            }
        )]
    );
    // NRI must match too.
    feed(&mut depacketizer, 3, false, IDR_FRAGMENTS[0]);
    let events = feed(&mut depacketizer, 4, false, &[0x5c, 0x05, 0x04]);
    assert!(matches!(
        events[..],
        [Event::Discarded(_, 4, DiscardReason::Inconsistent { .. })]
    ));
    // F may be set on one fragment; it carries into the NAL unit header.
    feed(&mut depacketizer, 5, false, IDR_FRAGMENTS[0]);
    let events = feed(&mut depacketizer, 6, true, &[0xfc, 0x45, 0x04]);
    assert_eq!(events, [Event::Nal(vec![0xe5, 1, 2, 3, 4], true)]);
}

#[test]
fn reassembly_is_bounded() {
    let config = DepacketizerConfig {
        max_nal_size: 8,
        ..DepacketizerConfig::default()
    };
    let mut depacketizer = Depacketizer::new(config);
    feed(&mut depacketizer, 1, false, IDR_FRAGMENTS[0]);
    feed(&mut depacketizer, 2, false, IDR_FRAGMENTS[1]);
    let events = feed(&mut depacketizer, 3, false, IDR_FRAGMENTS[2]);
    assert_eq!(
        events,
        [Event::Discarded(
            NalHeader(0x65),
            7,
            DiscardReason::TooLarge { limit: 8 }
        )]
    );
    let events = feed(&mut depacketizer, 4, true, IDR_FRAGMENTS[3]);
    assert_eq!(events, [], "the rest is skipped quietly");
    assert!(depacketizer.buffer.capacity() <= 8);
    // A Start fragment alone over the limit.
    let config = DepacketizerConfig {
        max_nal_size: 3,
        ..DepacketizerConfig::default()
    };
    let mut depacketizer = Depacketizer::new(config);
    let events = feed(&mut depacketizer, 1, false, IDR_FRAGMENTS[0]);
    assert_eq!(
        events,
        [Event::Discarded(
            NalHeader(0x65),
            4,
            DiscardReason::TooLarge { limit: 3 }
        )]
    );
    // A whole NAL of exactly the limit passes.
    let config = DepacketizerConfig {
        max_nal_size: 11,
        ..DepacketizerConfig::default()
    };
    let mut depacketizer = Depacketizer::new(config);
    let mut events = Vec::new();
    for (i, fragment) in IDR_FRAGMENTS.iter().enumerate() {
        events.extend(push(&mut depacketizer, i as u16, i == 3, fragment).0);
    }
    assert_eq!(events, [Event::Nal(IDR.to_vec(), true)]);
    assert!(depacketizer.buffer.capacity() <= 11);
}

#[test]
fn malformed_payloads_give_specific_errors() {
    let mut depacketizer = Depacketizer::default();
    feed(&mut depacketizer, 1, false, IDR_FRAGMENTS[0]);
    // S and E both set: an error, and the partial NAL unit is dropped.
    let (events, result) = push(&mut depacketizer, 2, false, &[0x7c, 0xc5, 0x01]);
    assert_eq!(result, Err(H264Error::FuAStartAndEnd));
    assert_eq!(
        events,
        [Event::Discarded(
            NalHeader(0x65),
            4,
            DiscardReason::Malformed
        )]
    );
    assert_eq!(
        push(&mut depacketizer, 3, false, &[]).1,
        Err(H264Error::EmptyPayload)
    );
    assert_eq!(
        push(&mut depacketizer, 4, false, &[0x7c]).1,
        Err(H264Error::FuATruncated { len: 1 })
    );
    assert_eq!(
        push(&mut depacketizer, 5, false, &[0x78, 0x00, 0x09, 0x67]).1,
        Err(H264Error::StapANalTruncated {
            offset: 1,
            size: 9,
            available: 1
        })
    );
    for (packet_type, name) in [(25, "STAP-B"), (26, "MTAP16"), (27, "MTAP24"), (29, "FU-B")] {
        let (_, result) = push(
            &mut depacketizer,
            6 + u16::from(packet_type),
            false,
            &[0x60 | packet_type, 0],
        );
        assert_eq!(
            result,
            Err(H264Error::InterleavedModeOnly { packet_type, name })
        );
    }
    assert_eq!(depacketizer.stats().malformed_packets, 8);
}

#[test]
fn reserved_types_are_ignored_without_breaking_reassembly() {
    let mut depacketizer = Depacketizer::default();
    feed(&mut depacketizer, 1, false, &[0x7c, 0x85, 0x01]);
    let (events, result) = push(&mut depacketizer, 2, false, &[0x7e, 0xff]);
    assert_eq!(
        result,
        Err(H264Error::ReservedPacketType { packet_type: 30 })
    );
    assert_eq!(events, []);
    let (_, result) = push(&mut depacketizer, 3, false, &[0x00]);
    assert_eq!(
        result,
        Err(H264Error::ReservedPacketType { packet_type: 0 })
    );
    let events = feed(&mut depacketizer, 4, true, &[0x7c, 0x45, 0x02]);
    assert_eq!(events, [Event::Nal(vec![0x65, 1, 2], true)]);
}

#[test]
fn duplicates_and_late_packets_are_refused_and_big_jumps_are_gaps() {
    let mut depacketizer = Depacketizer::default();
    feed(&mut depacketizer, 100, false, IDR_FRAGMENTS[0]);
    let (events, result) = push(&mut depacketizer, 100, false, IDR_FRAGMENTS[0]);
    assert_eq!(
        result,
        Err(H264Error::StalePacket {
            expected: 101,
            got: 100
        })
    );
    assert_eq!(events, []);
    assert_eq!(
        push(&mut depacketizer, 50, false, IDR_FRAGMENTS[1]).1,
        Err(H264Error::StalePacket {
            expected: 101,
            got: 50
        })
    );
    // The reassembly survived the duplicates.
    feed(&mut depacketizer, 101, false, IDR_FRAGMENTS[1]);
    feed(&mut depacketizer, 102, false, IDR_FRAGMENTS[2]);
    let events = feed(&mut depacketizer, 103, true, IDR_FRAGMENTS[3]);
    assert_eq!(events, [Event::Nal(IDR.to_vec(), true)]);
    // 100 behind is outside the stale window: a jump (a restart), reported as a gap.
    let (events, result) = push(&mut depacketizer, 4, true, &SPS);
    assert_eq!(result, Ok(()));
    assert_eq!(events, [Event::Gap(104, 4), Event::Nal(SPS.to_vec(), true)]);
}

/// A NAL unit with a random header of type 1..=23 and random contents.
fn nal_unit(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        0u8..4,
        1u8..=23,
        proptest::collection::vec(any::<u8>(), 0..max_len),
    )
        .prop_map(|(forbidden, nri, nal_type, body)| {
            let mut nal = vec![NalHeader::new(forbidden, nri, nal_type).0];
            nal.extend(body);
            nal
        })
}

proptest! {
    #[test]
    fn packetize_then_depacketize_round_trips(
        nal in nal_unit(20_000),
        max_payload in 3usize..1500,
        start in any::<u16>(),
    ) {
        let packetizer = Packetizer::new(&nal, max_payload).unwrap();
        let count = packetizer.len();
        let fragments: Vec<_> = packetizer.collect();
        prop_assert_eq!(fragments.len(), count);
        if nal.len() <= max_payload {
            prop_assert_eq!(&fragments, &[Fragment::Single(&nal)]);
        } else {
            prop_assert!(count >= 2);
            prop_assert_eq!(count, (nal.len() - 1).div_ceil(max_payload - 2));
        }
        let mut depacketizer = Depacketizer::default();
        let mut events = Vec::new();
        let mut buffer = vec![0; max_payload];
        for (i, fragment) in fragments.iter().enumerate() {
            let len = fragment.emit(&mut buffer).unwrap();
            prop_assert!(len <= max_payload);
            // Every fragment but the last is full.
            prop_assert!(fragment.is_last() || len == max_payload);
            prop_assert_eq!(fragment.is_last(), i == count - 1);
            let seq = start.wrapping_add(i as u16);
            depacketizer
                .push(seq, fragment.is_last(), &buffer[..len], |event| events.push(own(event)))
                .unwrap();
        }
        prop_assert_eq!(events, vec![Event::Nal(nal, true)]);
    }

    #[test]
    fn with_drops_every_nal_unit_is_exact_or_reported_lost(
        nals in proptest::collection::vec(nal_unit(5_000), 1..8),
        max_payload in 3usize..1500,
        start in any::<u16>(),
        drop_seed in proptest::collection::vec(0u8..100, 0..200),
        drop_percent in 0u8..60,
    ) {
        // Number every payload of every NAL unit, drop some.
        let mut sent = Vec::new();
        for (index, nal) in nals.iter().enumerate() {
            for fragment in Packetizer::new(nal, max_payload).unwrap() {
                sent.push((index, fragment.to_vec()));
            }
        }
        let mut complete = vec![true; nals.len()];
        let mut depacketizer = Depacketizer::default();
        let mut events = Vec::new();
        let dropped: Vec<bool> = (0..sent.len())
            .map(|i| drop_seed.get(i).is_some_and(|&roll| roll < drop_percent))
            .collect();
        for (i, (index, payload)) in sent.iter().enumerate() {
            if dropped[i] {
                complete[*index] = false;
                continue;
            }
            let seq = start.wrapping_add(i as u16);
            depacketizer.push(seq, false, payload, |event| events.push(own(event))).unwrap();
        }
        depacketizer.finish(|event| events.push(own(event)));
        let delivered: Vec<Vec<u8>> = events
            .iter()
            .filter_map(|event| match event {
                Event::Nal(data, _) => Some(data.clone()),
                _ => None,
            })
            .collect();
        let expected: Vec<Vec<u8>> = nals
            .iter()
            .zip(&complete)
            .filter(|(_, whole)| **whole)
            .map(|(nal, _)| nal.clone())
            .collect();
        // Exactly the NAL units that arrived whole, in order, and nothing else.
        prop_assert_eq!(delivered, expected);
        let reports = events.iter().filter(|event| !matches!(event, Event::Nal(..))).count();
        // A loss between the first and the last packet that arrived is always
        // reported (a lost head or tail cannot be seen); without loss nothing is.
        let first_arrived = dropped.iter().position(|lost| !lost);
        let last_arrived = dropped.iter().rposition(|lost| !lost);
        let seen_loss = match (first_arrived, last_arrived) {
            (Some(first), Some(last)) => dropped[first..last].contains(&true),
            _ => false,
        };
        if seen_loss {
            prop_assert!(reports > 0);
        }
        if !dropped.contains(&true) {
            prop_assert_eq!(reports, 0);
        }
    }

    #[test]
    fn random_payloads_never_panic_and_stay_bounded(
        packets in proptest::collection::vec(
            (
                any::<u16>(),
                any::<bool>(),
                prop_oneof![Just(None), Just(Some(FU_A)), Just(Some(STAP_A))],
                proptest::collection::vec(any::<u8>(), 0..2000),
            ),
            0..40,
        ),
        max_nal_size in 1usize..6000,
        small_steps in any::<bool>(),
    ) {
        let config = DepacketizerConfig { max_nal_size, ..DepacketizerConfig::default() };
        let mut depacketizer = Depacketizer::new(config);
        for (i, (seq, marker, forced_type, mut payload)) in packets.into_iter().enumerate() {
            if let (Some(packet_type), Some(first)) = (forced_type, payload.first_mut()) {
                *first = (*first & 0xe0) | packet_type;
            }
            let _ = FuAPacket::new_checked(&payload[..]).map(|fu| (fu.nal_header(), fu.fragment().len()));
            if let Ok(stap) = StapAPacket::new_checked(&payload[..]) {
                prop_assert!(stap.nal_units().count() >= 1);
            }
            // Mostly consecutive sequence numbers so that reassembly gets going.
            let seq = if small_steps { i as u16 } else { seq };
            let longest = payload.len().max(max_nal_size);
            let _ = depacketizer.push(seq, marker, &payload, |event| {
                if let Depacketized::Nal { data, .. } = event {
                    assert!(!data.is_empty() && data.len() <= longest);
                }
            });
            prop_assert!(depacketizer.buffer.capacity() <= max_nal_size.max(1));
        }
        depacketizer.finish(|_| {});
    }
}
