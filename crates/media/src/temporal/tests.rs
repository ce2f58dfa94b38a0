use super::*;

fn layers(count: u8) -> TemporalLayers {
    TemporalLayers::new(count).unwrap()
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
