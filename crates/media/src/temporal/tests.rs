use proptest::prelude::*;

use super::*;

fn layers(count: u8) -> TemporalLayers {
    TemporalLayers::new(count).unwrap()
}

/// Frames numbered from `first`, 40 ms apart, of the given ids and sizes.
fn frames(first: u64, ids_and_bytes: &[(u8, u64)]) -> Vec<TemporalFrame> {
    ids_and_bytes
        .iter()
        .enumerate()
        .map(|(i, &(id, bytes))| {
            let number = first + i as u64;
            TemporalFrame::new(number, Duration::from_millis(40 * number), id, bytes).unwrap()
        })
        .collect()
}

fn kept_indices(selection: &Selection) -> Vec<usize> {
    (0..selection.keep.len())
        .filter(|&i| selection.keep[i])
        .collect()
}

#[test]
fn layer_counts_and_the_dyadic_pattern() {
    assert_eq!(TemporalLayers::new(0), Err(TemporalError::LayerCount(0)));
    assert_eq!(TemporalLayers::new(5), Err(TemporalError::LayerCount(5)));
    assert_eq!(TemporalLayers::default(), TemporalLayers::ONE);
    assert_eq!(
        TemporalError::LayerCount(5).to_string(),
        "5 temporal layers: OpenH264 encodes 1 to 4"
    );
    // OpenH264's g_kuiTemporalIdListTable, one temporal GOP a row.
    for (count, gop) in [
        (1, vec![0]),
        (2, vec![0, 1]),
        (3, vec![0, 2, 1, 2]),
        (4, vec![0, 3, 2, 3, 1, 3, 2, 3]),
    ] {
        let t = layers(count);
        assert_eq!((t.count(), t.highest_id()), (count, count - 1));
        assert_eq!(t.gop_frames() as usize, gop.len());
        let ids: Vec<u8> = (0..2 * gop.len() as u64).map(|i| t.dyadic_id(i)).collect();
        assert_eq!(ids, [gop.clone(), gop].concat(), "T = {count}");
        assert!(t.is_reference(0));
        assert_eq!(t.is_reference(t.highest_id()), count == 1);
    }
    assert!(layers(4).is_reference(2) && layers(3).is_reference(1));
    assert_eq!(layers(4).dyadic_id(u64::MAX), 3);
}

#[test]
fn a_frame_is_all_base_or_all_enhancement() {
    let base = TemporalFrame::new(1, Duration::ZERO, 0, 1000).unwrap();
    assert_eq!(
        base.sizes(),
        FrameSizes {
            base_bits: 8000,
            enhancement_bits: 0
        }
    );
    let upper = TemporalFrame::new(2, Duration::from_millis(40), 3, 250).unwrap();
    assert!(!upper.is_base());
    assert_eq!(
        upper.sizes(),
        FrameSizes {
            base_bits: 0,
            enhancement_bits: 2000
        }
    );
    assert_eq!(
        (
            upper.number(),
            upper.time(),
            upper.temporal_id(),
            upper.bytes()
        ),
        (2, Duration::from_millis(40), 3, 250)
    );
    assert!(matches!(
        TemporalFrame::new(3, Duration::ZERO, 4, 1),
        Err(TemporalError::IdOutOfRange {
            temporal_id: 4,
            layers: 4,
            ..
        })
    ));
    assert!(matches!(
        TemporalFrame::new(3, Duration::ZERO, 0, MAX_FRAME_BYTES + 1),
        Err(TemporalError::Frame(LayeredError::FrameTooLarge { .. }))
    ));
    assert!(matches!(
        TemporalFrame::new(3, MAX_FRAME_TIME + Duration::from_nanos(1), 0, 1),
        Err(TemporalError::Frame(LayeredError::BadTime { .. }))
    ));
    let encoded = EncodedFrame {
        bytes: vec![0; 321],
        temporal_id: 2,
    };
    let from = TemporalFrame::from_encoded(7, Duration::ZERO, &encoded).unwrap();
    assert_eq!((from.temporal_id(), from.bytes()), (2, 321));
    assert_eq!(
        bytes_per_layer(&frames(0, &[(0, 10), (2, 3), (1, 5), (2, 4)])),
        [10, 5, 7, 0]
    );
}

#[test]
fn dropping_above_a_layer_keeps_indices_for_alignment() {
    let encoded: Vec<EncodedFrame> = [0u8, 2, 1, 2, 0]
        .iter()
        .enumerate()
        .map(|(i, &temporal_id)| EncodedFrame {
            bytes: vec![i as u8; i + 1],
            temporal_id,
        })
        .collect();
    let indices = |highest| -> Vec<usize> {
        drop_above_layer(&encoded, highest)
            .iter()
            .map(|&(i, _)| i)
            .collect()
    };
    assert_eq!(indices(0), [0, 4]);
    assert_eq!(indices(1), [0, 2, 4]);
    assert_eq!(indices(2), [0, 1, 2, 3, 4]);
    assert_eq!(drop_above_layer(&encoded, 1)[1], (2, &[2u8, 2, 2][..]));
}

/// T = 3, two temporal GOPs: layer 1 has 300 + 280 bytes, layer 2
/// 100 + 120 + 110 + 130, 1040 in all.
fn two_gops() -> Vec<TemporalFrame> {
    frames(
        0,
        &[
            (0, 1000),
            (2, 100),
            (1, 300),
            (2, 120),
            (0, 900),
            (2, 110),
            (1, 280),
            (2, 130),
        ],
    )
}

#[test]
fn a_budget_keeps_whole_frames_lowest_layer_first() {
    for (budget, kept) in [
        (0, vec![0, 4]),
        (299, vec![0, 4]),             // the first layer-1 frame does not fit
        (300, vec![0, 2, 4]),          // exactly it
        (579, vec![0, 2, 4]),          // the second needs 280 of 279 left
        (580, vec![0, 2, 4, 6]),       // layer 1 whole
        (679, vec![0, 2, 4, 6]),       // layer 2's first needs 100 of 99
        (800, vec![0, 1, 2, 3, 4, 6]), // + 100 + 120 in time order
        (1039, vec![0, 1, 2, 3, 4, 5, 6]),
        (1040, (0..8).collect()),
        (u64::MAX, (0..8).collect()),
    ] {
        let mut thinner = TemporalThinner::new(layers(3));
        let selection = thinner.select(&two_gops(), budget).unwrap();
        assert_eq!(kept_indices(&selection), kept, "budget {budget}");
        assert_eq!(selection.base_bytes, 1900);
        let enhancement: u64 = kept.iter().map(|&i| two_gops()[i].bytes()).sum::<u64>() - 1900;
        assert_eq!(selection.enhancement_bytes, enhancement);
        assert!(selection.enhancement_bytes <= budget);
        assert_eq!(selection.kept_bytes(), 1900 + enhancement);
        assert_eq!(selection.kept_frames(), kept.len());
    }
}

#[test]
fn a_share_is_rounded_down_like_the_controllers() {
    for (eta, kept) in [
        (0.0, vec![0, 4]),
        (0.5, vec![0, 2, 4]),        // ⌊520⌋: 300 fits, 280 does not
        (0.557_7, vec![0, 2, 4, 6]), // ⌊580.008⌋ = 580
        (0.557_6, vec![0, 2, 4]),    // ⌊579.904⌋ = 579
        (1.0, (0..8).collect()),
    ] {
        let mut thinner = TemporalThinner::new(layers(3));
        let selection = thinner.select_share(&two_gops(), Share::new(eta)).unwrap();
        assert_eq!(kept_indices(&selection), kept, "η = {eta}");
    }
}

#[test]
fn a_frame_whose_reference_was_dropped_in_the_window_before_is_not_sent() {
    // T = 3: the window boundary falls inside a temporal GOP whose layer-1
    // frame was dropped; its layer-2 frame after it cannot be decoded.
    let stream = frames(
        0,
        &[(0, 900), (2, 100), (1, 300), (2, 100), (0, 900), (2, 100)],
    );
    let mut thinner = TemporalThinner::new(layers(3));
    let first = thinner.select(&stream[..3], 0).unwrap();
    assert_eq!(kept_indices(&first), [0]);
    let second = thinner.select_share(&stream[3..], Share::ONE).unwrap();
    assert_eq!(kept_indices(&second), [1, 2], "frame 3 needs frame 2");
    assert_eq!(second.enhancement_bytes, 100);
    // Dropping only the top layer (not a reference) leaves nothing behind.
    let mut thinner = TemporalThinner::new(layers(3));
    thinner.select(&stream[..2], 0).unwrap();
    let rest = thinner.select_share(&stream[2..], Share::ONE).unwrap();
    assert_eq!(kept_indices(&rest), [0, 1, 2, 3]);

    // T = 4: a frame of layer 2 may predict from the layer-2 frame before
    // it in the GOP (ids 0 3 2 3 1 3 2 3).
    let stream = frames(
        10,
        &[
            (0, 900),
            (3, 50),
            (2, 80),
            (3, 50),
            (1, 200),
            (3, 50),
            (2, 80),
            (3, 50),
            (0, 900),
            (3, 50),
        ],
    );
    let mut thinner = TemporalThinner::new(layers(4));
    assert_eq!(kept_indices(&thinner.select(&stream[..3], 0).unwrap()), [0]);
    let rest = thinner.select_share(&stream[3..], Share::ONE).unwrap();
    // Frames 13, 15, 16, 17 lost frame 12; frame 14 (layer 1) and the next
    // GOP are whole.
    assert_eq!(kept_indices(&rest), [1, 5, 6]);
}

#[test]
fn bad_windows_are_refused_and_change_nothing() {
    let mut thinner = TemporalThinner::new(layers(2));
    assert_eq!(thinner.layers(), layers(2));
    let stream = frames(0, &[(0, 900), (1, 100), (0, 900), (1, 100)]);
    // An id above the stream's layers.
    let bad = frames(0, &[(0, 900), (2, 100)]);
    assert!(matches!(
        thinner.select(&bad, 0),
        Err(TemporalError::IdOutOfRange {
            number: 1,
            temporal_id: 2,
            layers: 2
        })
    ));
    // A layer-1 frame dropped here is not a reference: nothing is carried.
    thinner.select(&stream[..2], 0).unwrap();
    let before = thinner.clone();
    // Numbers that do not increase, within a window or from the one before.
    let mut again = stream[1..].to_vec();
    assert!(matches!(
        thinner.select(&again, 0),
        Err(TemporalError::Frame(LayeredError::NumberNotIncreasing {
            previous: 1,
            number: 1
        }))
    ));
    again.swap(1, 2);
    assert!(thinner.select(&again[1..], 0).is_err());
    // A time going back.
    let back = vec![TemporalFrame::new(5, Duration::ZERO, 0, 1).unwrap()];
    assert!(matches!(
        thinner.select(&back, 0),
        Err(TemporalError::Frame(LayeredError::TimeGoesBack { .. }))
    ));
    assert_eq!(thinner, before, "a refused window leaves no trace");
    let rest = thinner.select_share(&stream[2..], Share::ONE).unwrap();
    assert_eq!(kept_indices(&rest), [0, 1]);
    // An empty window is fine and keeps nothing.
    assert_eq!(thinner.select(&[], 10).unwrap().kept_frames(), 0);
}

/// Whether frame `index` of a stream (`ids` in order, `keep` which frames
/// are sent) can be decoded: no reference frame of its layer or below was
/// dropped before it in its temporal GOP (since the last frame of layer 0).
/// Checked against every earlier frame, independently of the thinner's
/// bookkeeping.
fn decodable(t: TemporalLayers, ids: &[u8], keep: &[bool], index: usize) -> bool {
    let id = ids[index];
    id == 0
        || (0..index)
            .rev()
            .take_while(|&j| ids[j] != 0)
            .all(|j| keep[j] || ids[j] > id || !t.is_reference(ids[j]))
}

/// A stream of up to 4 layers split into windows, each with a share.
#[derive(Clone, Debug)]
struct Scenario {
    /// The layer count.
    count: u8,
    /// The frames' (temporal id, bytes).
    frames: Vec<(u8, u64)>,
    /// The windows' (length, share), cycled.
    windows: Vec<(usize, f64)>,
}

fn scenarios() -> impl Strategy<Value = Scenario> {
    (1u8..=4).prop_flat_map(|count| {
        (
            prop::collection::vec((0..count, 1u64..2000), 0..80),
            prop::collection::vec((1usize..20, 0.0f64..=1.0), 1..12),
        )
            .prop_map(move |(frames, windows)| Scenario {
                count,
                frames,
                windows,
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_thinner_keeps_its_promises(scenario in scenarios()) {
        let t = layers(scenario.count);
        let stream = frames(0, &scenario.frames);
        let ids: Vec<u8> = stream.iter().map(|f| f.temporal_id()).collect();
        let mut thinner = TemporalThinner::new(t);
        let mut keep = Vec::new();
        let mut bounds = Vec::new();
        let mut rest = stream.as_slice();
        for &(length, eta) in scenario.windows.iter().cycle().take(stream.len() + 1) {
            if rest.is_empty() {
                break;
            }
            let (window, after) = rest.split_at(length.min(rest.len()));
            rest = after;
            let share = Share::new(eta);
            let state = thinner.clone();
            let selection = thinner.select_share(window, share).unwrap();
            // The base is whole; the enhancement within ⌊η · bytes⌋, and
            // what the selection says it is.
            let layer_sums = bytes_per_layer(window);
            let enhancement: u64 = layer_sums[1..].iter().sum();
            let budget = (share.get() * enhancement as f64).floor() as u64;
            prop_assert!(selection.enhancement_bytes <= budget);
            prop_assert_eq!(selection.base_bytes, layer_sums[0]);
            let kept_enhancement: u64 = window
                .iter()
                .zip(&selection.keep)
                .filter(|(f, &k)| k && !f.is_base())
                .map(|(f, _)| f.bytes())
                .sum();
            prop_assert_eq!(selection.enhancement_bytes, kept_enhancement);
            prop_assert!(window.iter().zip(&selection.keep).all(|(f, &k)| k || !f.is_base()));
            // A larger share, from the same state, keeps at least as much.
            let more = state.clone().select_share(window, Share::new((eta + 0.3).min(1.0))).unwrap();
            prop_assert!(selection.keep.iter().zip(&more.keep).all(|(&a, &b)| !a || b));
            bounds.push(keep.len()..keep.len() + window.len());
            keep.extend(selection.keep);
        }
        prop_assert_eq!(keep.len(), stream.len());
        for index in 0..stream.len() {
            if keep[index] {
                prop_assert!(decodable(t, &ids, &keep, index), "frame {} of {:?} {:?}", index, ids, keep);
            }
        }
        // Lowest layer first, in time order within a layer: in a window, a
        // frame that was kept comes after every dropped frame that could
        // have been decoded.
        for window in bounds {
            for kept in window.clone().filter(|&i| keep[i] && ids[i] > 0) {
                for dropped in window.clone().filter(|&i| !keep[i] && ids[i] > 0) {
                    let before = (ids[dropped], dropped) < (ids[kept], kept);
                    prop_assert!(
                        !before || !decodable(t, &ids, &keep, dropped),
                        "frame {} dropped, {} kept: {:?} {:?}", dropped, kept, ids, keep
                    );
                }
            }
        }
        let mut everything = TemporalThinner::new(t);
        let all = everything.select_share(&stream, Share::ONE).unwrap();
        prop_assert!(all.keep.iter().all(|&k| k), "η = 1 from the start keeps every frame");
    }
}
