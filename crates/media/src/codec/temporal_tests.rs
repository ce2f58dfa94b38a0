//! Temporal layers from the encoder: the ids it reports, which frames are
//! references, and streams with upper layers dropped, decoded and measured.

use std::time::Duration;

use super::*;
use crate::generator::Generator;
use crate::h264::parse_stream;
use crate::layered::Share;
use crate::quality::{compare, summarise};
use crate::temporal::{drop_above_layer, TemporalFrame, TemporalThinner};

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

/// Decodes `units` (frame index, bytes) into `FRAMES` pictures, a dropped
/// frame repeating the one before; returns them and how many were repeats,
/// after checking that the decoder concealed nothing.
fn decode(units: &[(usize, &[u8])]) -> (Vec<Frame>, usize) {
    let mut decoder = Decoder::new(DEFAULT_CONCEALMENT).unwrap();
    let decoded = decode_aligned(&mut decoder, units.iter().copied(), FRAMES as usize, CIF);
    let (pictures, repeats) = decoded.unwrap();
    assert_eq!(decoder.concealed(), 0, "the decoder reported damage");
    (pictures, repeats)
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

/// Keeps layers 0 to k of T = 2, 3 and 4, decodes, and compares with the
/// source: each kept frame decodes exactly as in the whole stream, the
/// decoder conceals nothing, and the dropped frames, repeated, cost PSNR.
/// The floors are the measured figures less about 3 dB; the figures are in
/// `crate::temporal`'s documentation ("Measured"), printed by
/// `cargo test -p fairstream-media --lib dropping_upper_temporal_layers -- --nocapture`.
#[test]
fn dropping_upper_temporal_layers_decodes_cleanly_at_a_lower_frame_rate() {
    let (single, reference) = encode(1);
    let (pictures, repeats) = decode(&drop_above_layer(&single, 0));
    assert_eq!(repeats, 0);
    let single_psnr = summarise(&compare(&reference, &pictures).unwrap())
        .unwrap()
        .psnr_db_mean;
    eprintln!("T  layers kept  frames  fps    bytes   share  PSNR dB");
    eprintln!(
        "1  0            50      25     {:6}  100 %  {single_psnr:.2}",
        whole_stream(&single).len()
    );
    // (T, highest layer kept, frames kept, PSNR floor in dB).
    for (count, cases) in [
        (2, vec![(0, 25, 27.0), (1, 50, 34.0)]),
        (3, vec![(0, 13, 22.0), (1, 25, 27.0), (2, 50, 34.0)]),
        (
            4,
            vec![(0, 7, 18.0), (1, 13, 22.0), (2, 25, 27.0), (3, 50, 34.0)],
        ),
    ] {
        let (frames, reference) = encode(count);
        let total = whole_stream(&frames).len();
        let (full, _) = decode(&drop_above_layer(&frames, count - 1));
        let mut previous_psnr = 0.0;
        let mut layer_bytes = Vec::new();
        for (highest, kept, floor) in cases {
            let units = drop_above_layer(&frames, highest);
            assert_eq!(units.len(), kept, "T = {count}, layers 0-{highest}");
            let (pictures, repeats) = decode(&units);
            assert_eq!(repeats, FRAMES as usize - kept, "one picture a kept frame");
            for &(index, _) in &units {
                assert!(
                    pictures[index] == full[index],
                    "T = {count}, layers 0-{highest}: frame {index} differs from the whole stream's"
                );
            }
            let psnr = summarise(&compare(&reference, &pictures).unwrap())
                .unwrap()
                .psnr_db_mean;
            let bytes: usize = units.iter().map(|(_, b)| b.len()).sum();
            layer_bytes.push(bytes - layer_bytes.iter().sum::<usize>());
            let kept_layers = if highest == 0 {
                "0  ".to_string()
            } else {
                format!("0-{highest}")
            };
            eprintln!(
                "{count}  {kept_layers}          {kept:2}      {:5.2}  {bytes:6}  {:3.0} %  {psnr:.2}",
                25.0 / f64::from(1u8 << (count - 1 - highest)),
                100.0 * bytes as f64 / total as f64
            );
            assert!(
                psnr > floor,
                "T = {count}, layers 0-{highest}: {psnr:.2} dB"
            );
            assert!(psnr > previous_psnr + 3.0, "more layers, better pictures");
            previous_psnr = psnr;
        }
        // Hierarchical prediction costs little against one layer.
        assert!(
            previous_psnr > single_psnr - 1.0,
            "{previous_psnr} vs {single_psnr}"
        );
        // A frame of layer 0 predicts from farther away (or is the IDR):
        // it is larger than the frames of each layer above.
        let frames_in = |layer: u8| frames.iter().filter(|f| f.temporal_id == layer).count();
        let per_frame: Vec<f64> = (0..count)
            .map(|layer| layer_bytes[usize::from(layer)] as f64 / frames_in(layer) as f64)
            .collect();
        eprintln!("T = {count}: bytes per frame of each layer {per_frame:.0?}");
        assert!(
            per_frame[1..].iter().all(|&b| b < per_frame[0]),
            "{per_frame:?}"
        );
    }
}

#[test]
fn a_thinned_stream_decodes_without_damage() {
    // T = 4 in windows of 10 frames, which split temporal GOPs of 8, at a
    // share changing from window to window: whatever the thinner keeps
    // decodes exactly as in the whole stream.
    let (frames, _) = encode(4);
    let (full, _) = decode(&drop_above_layer(&frames, 3));
    let planned: Vec<TemporalFrame> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            TemporalFrame::from_encoded(i as u64, Duration::from_millis(40 * i as u64), f).unwrap()
        })
        .collect();
    let mut thinner = TemporalThinner::new(layers(4));
    let mut keep = Vec::new();
    for (window, eta) in planned.chunks(10).zip([0.9, 0.2, 1.0, 0.5, 0.7]) {
        let selection = thinner.select_share(window, Share::new(eta)).unwrap();
        keep.extend(selection.keep);
    }
    let units: Vec<(usize, &[u8])> = frames
        .iter()
        .enumerate()
        .filter(|&(i, _)| keep[i])
        .map(|(i, f)| (i, f.bytes.as_slice()))
        .collect();
    let pattern: String = frames
        .iter()
        .zip(&keep)
        .map(|(f, &k)| {
            if k {
                char::from(b'0' + f.temporal_id)
            } else {
                '.'
            }
        })
        .collect();
    eprintln!("kept (temporal id, or . for dropped): {pattern}");
    assert!(
        units.len() < FRAMES as usize && units.len() > 7,
        "{} kept",
        units.len()
    );
    let (pictures, repeats) = decode(&units);
    assert_eq!(repeats, FRAMES as usize - units.len());
    for &(index, _) in &units {
        assert!(
            pictures[index] == full[index],
            "frame {index} differs from the whole stream's"
        );
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

#[test]
fn a_frame_kept_after_its_reference_was_dropped_is_damaged() {
    // What the thinner's dependency rule avoids, and what `decode` would
    // catch: T = 4 (ids 0 3 2 3 1 3 2 3 from frame 16), frame 20 of layer
    // 1 dropped and the frames after it in its temporal GOP kept. They
    // predict from it: the decoder conceals them and they differ from the
    // whole stream's.
    let (frames, _) = encode(4);
    let (full, _) = decode(&drop_above_layer(&frames, 3));
    assert_eq!(frames[20].temporal_id, 1);
    let units: Vec<(usize, &[u8])> = frames
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 20)
        .map(|(i, f)| (i, f.bytes.as_slice()))
        .collect();
    let mut decoder = Decoder::new(DEFAULT_CONCEALMENT).unwrap();
    let (pictures, repeats) =
        decode_aligned(&mut decoder, units.iter().copied(), FRAMES as usize, CIF).unwrap();
    assert_eq!(repeats, 1);
    assert!(decoder.concealed() > 0);
    let damaged: Vec<usize> = (0..FRAMES as usize)
        .filter(|&i| i != 20 && pictures[i] != full[i])
        .collect();
    assert_eq!(damaged, [21, 22, 23], "the rest of the temporal GOP");
}
