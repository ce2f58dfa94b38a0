//! Temporal layers from the encoder: the ids it reports and which frames
//! are references.

use super::*;
use crate::generator::Generator;
use crate::h264::parse_stream;

const CIF: (u32, u32) = (352, 288);
const FRAMES: u64 = 50;

/// CIF at 25 fps and 500 kbit/s, an IDR every 48 frames (a multiple of
/// every temporal GOP), one slice a frame.
const SETTINGS: EncoderSettings = EncoderSettings {
    bitrate_bps: 500_000,
    fps: 25.0,
    gop: 48,
    slice_max_bytes: None,
};

fn layers(count: u8) -> TemporalLayers {
    TemporalLayers::new(count).unwrap()
}

/// `FRAMES` generated CIF frames encoded with `count` temporal layers, and
/// the frames they were made from.
fn encode(count: u8) -> (Vec<EncodedFrame>, Vec<Frame>) {
    let generator = Generator::new(CIF.0, CIF.1).unwrap();
    let mut encoder = Encoder::with_temporal_layers(SETTINGS, layers(count)).unwrap();
    assert_eq!(encoder.temporal_layers(), layers(count));
    (0..FRAMES)
        .map(|n| {
            let frame = generator.frame(n);
            (encoder.encode_layered(&frame).unwrap(), frame)
        })
        .unzip()
}

fn whole_stream(frames: &[EncodedFrame]) -> Vec<u8> {
    frames
        .iter()
        .flat_map(|f| f.bytes.iter().copied())
        .collect()
}

#[test]
fn temporal_ids_follow_the_dyadic_pattern_and_the_top_layer_is_not_a_reference() {
    for count in 1..=4 {
        let (frames, _) = encode(count);
        let ids: Vec<u8> = frames.iter().map(|f| f.temporal_id).collect();
        let expected: Vec<u8> = (0..FRAMES).map(|n| layers(count).dyadic_id(n)).collect();
        assert_eq!(ids, expected, "T = {count}");
        if count == 3 {
            assert_eq!(ids[..8], [0, 2, 1, 2, 0, 2, 1, 2]);
        }
        // Our own parse of the stream: one access unit a frame, the first
        // an IDR with its parameter sets (the frame thrown away to switch
        // the encoder to layers left no trace), then an IDR every GOP.
        let report = parse_stream(&whole_stream(&frames)).unwrap();
        assert_eq!(report.access_units.len(), FRAMES as usize);
        assert_eq!(report.picture_size, Some(CIF));
        let idrs: Vec<usize> = report
            .access_units
            .iter()
            .filter(|a| a.idr)
            .map(|a| a.index)
            .collect();
        assert_eq!(idrs, [0, 48], "T = {count}");
        // The ids are not in the stream: no prefix NAL units (type 14).
        let types: std::collections::BTreeSet<u8> = report
            .access_units
            .iter()
            .flat_map(|a| a.nal_units.iter().map(|n| n.nal_type))
            .collect();
        assert!(
            types.iter().all(|&t| matches!(t, 1 | 5 | 7 | 8)),
            "{types:?}"
        );
        for (unit, &id) in report.access_units.iter().zip(&ids) {
            assert_eq!(
                unit.reference,
                layers(count).is_reference(id),
                "T = {count}, frame {} of layer {id}: nal_ref_idc",
                unit.index
            );
        }
    }
}

#[test]
fn bad_temporal_settings_are_refused() {
    assert!(TemporalLayers::new(0).is_err());
    assert!(TemporalLayers::new(5).is_err());
    // The GOP must be a multiple of the temporal GOP, 2^(T−1) frames.
    for (count, gop, ok) in [
        (1, 25, true),
        (2, 25, false),
        (2, 24, true),
        (3, 26, false),
        (4, 48, true),
        (4, 4, false),
    ] {
        let settings = EncoderSettings { gop, ..SETTINGS };
        let result = Encoder::with_temporal_layers(settings, layers(count));
        assert_eq!(result.is_ok(), ok, "T = {count}, GOP {gop}");
    }
    // A layered encoder keeps its layers across a bitrate change before the
    // first frame, and refuses a change of picture size.
    let mut encoder = Encoder::with_temporal_layers(SETTINGS, layers(2)).unwrap();
    encoder.set_bitrate(300_000).unwrap();
    assert_eq!(encoder.temporal_layers(), layers(2));
    let generator = Generator::new(176, 144).unwrap();
    let ids: Vec<u8> = (0..4)
        .map(|n| {
            encoder
                .encode_layered(&generator.frame(n))
                .unwrap()
                .temporal_id
        })
        .collect();
    assert_eq!(ids, [0, 1, 0, 1]);
    // The bitrate follows, and the layers stay.
    encoder.set_bitrate(800_000).unwrap();
    let ids: Vec<u8> = (4..8)
        .map(|n| {
            encoder
                .encode_layered(&generator.frame(n))
                .unwrap()
                .temporal_id
        })
        .collect();
    assert_eq!(ids, [0, 1, 0, 1]);
    let other = Generator::new(352, 288).unwrap().frame(4);
    assert!(matches!(
        encoder.encode_layered(&other),
        Err(CodecError::SizeChanged {
            from: (176, 144),
            to: (352, 288)
        })
    ));
    // One layer: every id is 0, and `encode` gives the same bytes as
    // `encode_layered`.
    let mut plain = Encoder::new(SETTINGS).unwrap();
    let mut layered = Encoder::new(SETTINGS).unwrap();
    for n in 0..3 {
        let frame = generator.frame(n);
        let encoded = layered.encode_layered(&frame).unwrap();
        assert_eq!(encoded.temporal_id, 0);
        assert_eq!(plain.encode(&frame).unwrap(), encoded.bytes);
    }
}
