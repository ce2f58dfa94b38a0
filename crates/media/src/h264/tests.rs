use proptest::prelude::*;

use super::*;

fn shared(name: &str) -> Option<Vec<u8>> {
    let path = fairstream_testkit::shared_file(&format!("data/video/{name}"))?;
    Some(std::fs::read(path).unwrap())
}

#[test]
fn start_codes_of_three_and_four_bytes_split_units() {
    let stream = [
        0, 0, 0, 1, 0x67, 1, 2, // SPS (4-byte start code)
        0, 0, 1, 0x68, 3, // PPS
        0, 0, 0, 1, 0x65, 4, 5, 0, 0, // IDR slice with trailing zeros
    ];
    let units = split_nal_units(&stream);
    let types: Vec<u8> = units.iter().map(|u| u.nal_type).collect();
    assert_eq!(types, [7, 8, 5]);
    assert_eq!(&stream[units[0].range.clone()], &[0x67, 1, 2]);
    assert_eq!(&stream[units[2].range.clone()], &[0x65, 4, 5]);
    assert_eq!(units[2].ref_idc, 3);
}

#[test]
fn what_is_not_annex_b_is_an_error_that_says_so() {
    let error = parse_stream(b"GIF89a, certainly not video").unwrap_err();
    assert!(
        error.to_string().contains("not an H.264 Annex B stream"),
        "{error}"
    );
    assert!(matches!(
        parse_stream(&[]),
        Err(H264Error::NotAnnexB { .. })
    ));
    // Start codes, but only parameter sets.
    let error = parse_stream(&[0, 0, 1, 0x67, 0x42, 0, 0, 1, 0x68, 0xce]).unwrap_err();
    assert!(
        matches!(error, H264Error::NoPictures { nal_units: 2 }),
        "{error}"
    );
}

#[test]
fn foreman_qcif_has_100_frames_4_idr_and_96_p() {
    let Some(stream) = shared("BA_MW_D.264") else {
        return;
    };
    let report = parse_stream(&stream).unwrap();
    assert_eq!(report.damaged_nal_units, 0);
    assert_eq!(report.picture_size, Some((176, 144)));
    let frames = &report.access_units;
    assert_eq!(frames.len(), 100);
    assert_eq!(frames.iter().filter(|f| f.idr).count(), 4);
    assert_eq!(
        frames
            .iter()
            .filter(|f| f.frame_type == Some(FrameType::P))
            .count(),
        96
    );
    assert!(frames.iter().all(|f| f.frame_type.is_some()));
    // frame_num restarts at 0 on every IDR and counts up between them.
    for pair in frames.windows(2) {
        let next = pair[1].frame_num.unwrap();
        if pair[1].idr {
            assert_eq!(next, 0);
        } else {
            assert!(next > pair[0].frame_num.unwrap() || next == 0, "{pair:?}");
        }
    }
    let total: usize = frames.iter().map(AccessUnit::size_bytes).sum();
    assert!(total > stream.len() * 9 / 10 && total < stream.len());
}

#[test]
fn a_removed_p_frame_leaves_99_frames() {
    let Some(stream) = shared("BA_MW_D_P_LOST.264") else {
        return;
    };
    let report = parse_stream(&stream).unwrap();
    assert_eq!(report.access_units.len(), 99);
    assert_eq!(report.access_units.iter().filter(|f| f.idr).count(), 4);
    // The gap shows in frame_num: one frame missing, found once.
    let missing: usize = report
        .access_units
        .iter()
        .map(|f| f.frames_missing_before)
        .sum();
    assert_eq!(missing, 1);
    let clean = parse_stream(&shared("BA_MW_D.264").unwrap()).unwrap();
    assert!(clean
        .access_units
        .iter()
        .all(|f| f.frames_missing_before == 0));
}

#[test]
fn a_stream_that_lost_its_first_idr_keeps_all_100_positions() {
    let Some(stream) = shared("BA_MW_D_IDR_LOST.264") else {
        return;
    };
    let report = parse_stream(&stream).unwrap();
    // The IDR picture and the two P pictures after it are gone: the first
    // picture left is numbered 3.
    assert_eq!(report.access_units.len(), 97);
    assert_eq!(report.access_units[0].frame_num, Some(3));
    let missing: usize = report
        .access_units
        .iter()
        .map(|f| f.frames_missing_before)
        .sum();
    assert_eq!(missing, 3);
    assert_eq!(report.access_units[0].frames_missing_before, 3);
}

/// Access units with the given (IDR, frame_num), all reference pictures.
fn numbered(pictures: &[(bool, u32)]) -> Vec<AccessUnit> {
    pictures
        .iter()
        .enumerate()
        .map(|(index, &(idr, frame_num))| AccessUnit {
            index,
            frame_type: Some(if idr { FrameType::I } else { FrameType::P }),
            idr,
            frame_num: Some(frame_num),
            reference: true,
            frames_missing_before: 0,
            nal_units: Vec::new(),
        })
        .collect()
}

#[test]
fn frame_num_gaps_count_lost_idr_pictures_and_survive_the_wrap() {
    let gaps = |pictures: &[(bool, u32)], max: u32| {
        let mut units = numbered(pictures);
        let maxes = vec![Some(max); units.len()];
        super::count_missing_frames(&mut units, &maxes);
        units
            .iter()
            .map(|u| u.frames_missing_before)
            .collect::<Vec<_>>()
    };
    // A lost P picture.
    assert_eq!(gaps(&[(true, 0), (false, 1), (false, 3)], 16), [0, 0, 1]);
    // A lost IDR mid-stream: 0..=2 then 1, 2 of the next period.
    assert_eq!(
        gaps(&[(true, 0), (false, 1), (false, 2), (false, 1)], 256),
        [0, 0, 0, 1]
    );
    // The stream starts after its IDR and one P picture.
    assert_eq!(gaps(&[(false, 2), (false, 3)], 16), [2, 0]);
    // MaxFrameNum wraps: no loss, then one lost across the wrap.
    assert_eq!(
        gaps(&[(true, 0), (false, 14), (false, 15), (false, 0)], 16)[3],
        0
    );
    assert_eq!(gaps(&[(false, 14), (false, 0)], 16), [0, 1]);
}

#[test]
fn foreman_cif_main_profile_has_300_frames_of_14_slices() {
    let Some(stream) = shared("test_cif_P_CABAC_slice.264") else {
        return;
    };
    let report = parse_stream(&stream).unwrap();
    assert_eq!(report.picture_size, Some((352, 288)));
    assert_eq!(report.access_units.len(), 300);
    assert!(report.access_units[0].idr);
    assert_eq!(report.access_units[0].frame_type, Some(FrameType::I));
    assert!(report.access_units[1..]
        .iter()
        .all(|f| f.frame_type == Some(FrameType::P) && !f.idr));
    assert!(report.access_units.iter().all(|f| f.slices().count() == 14));
}

#[test]
fn truncated_and_corrupted_streams_are_parsed_as_far_as_they_go() {
    let Some(stream) = shared("BA_MW_D.264") else {
        return;
    };
    // Cut in the middle of a NAL unit: the frames before the cut remain.
    let cut = &stream[..stream.len() / 2 + 7];
    let report = parse_stream(cut).unwrap();
    assert!(report.access_units.len() >= 45 && report.access_units.len() <= 55);
    // Bytes flipped all over: never a panic; the damage is counted.
    let mut flipped = stream.clone();
    for i in (100..flipped.len()).step_by(997) {
        flipped[i] ^= 0xa5;
    }
    let report = parse_stream(&flipped).unwrap();
    assert!(!report.access_units.is_empty());
}

/// The start codes of a byte-by-byte scan: what `split_nal_units`'s
/// skipping search must find.
fn start_codes_byte_by_byte(stream: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut i = 0;
    while i + 3 <= stream.len() {
        if stream[i..i + 3] == [0, 0, 1] {
            starts.push(i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    starts
}

/// Where each unit's header byte is: the start code's end.
fn unit_starts(stream: &[u8]) -> Vec<usize> {
    split_nal_units(stream)
        .iter()
        .map(|u| u.range.start)
        .collect()
}

proptest! {
    #[test]
    fn the_skipping_search_finds_every_start_code_a_byte_scan_does(
        // Mostly zeros and ones, so that start codes, runs of zeros and
        // near misses are common.
        stream in proptest::collection::vec(prop_oneof![Just(0u8), Just(1), Just(2), any::<u8>()], 0..300),
    ) {
        // A unit is kept when it has a byte after its start code and
        // trailing zeros; compare the starts of those kept.
        let expected: Vec<usize> = start_codes_byte_by_byte(&stream);
        let found = unit_starts(&stream);
        prop_assert!(found.iter().all(|s| expected.contains(s)), "{found:?} ⊄ {expected:?}");
        for (index, &start) in expected.iter().enumerate() {
            let end = expected.get(index + 1).map_or(stream.len(), |next| next - 3);
            if stream[start..end].iter().any(|&b| b != 0) {
                prop_assert!(found.contains(&start), "{start} missing from {found:?}");
            }
        }
    }

    #[test]
    fn any_bytes_parse_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = parse_stream(&bytes);
    }

    #[test]
    fn any_bytes_after_a_start_code_never_panic(
        body in proptest::collection::vec(any::<u8>(), 0..400),
        nal in prop_oneof![Just(0x65u8), Just(0x41), Just(0x67), Just(0x68), any::<u8>()],
    ) {
        let mut stream = vec![0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1e, 0xda, 0x02, 0x80, 0xbf,
                              0, 0, 0, 1, 0x68, 0xce, 0x3c, 0x80, 0, 0, 0, 1, nal];
        stream.extend_from_slice(&body);
        let _ = parse_stream(&stream);
    }
}
