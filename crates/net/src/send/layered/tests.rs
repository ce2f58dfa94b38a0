//! The `cc=buffer` sender's tests.

use std::time::Duration;

use fairstream_proto::cc::buffer::{BufferFeedback, Share};
use fairstream_proto::units::Rate;

use super::*;

/// Fills the window with the next 25 frames of a three-layer stream:
/// 3000 bytes a frame of layer 0, 1000 above.
fn fill(sender: &mut LayeredSender, layers: TemporalLayers) {
    while sender.wants_frame() {
        let tid = layers.dyadic_id(sender.next_frame);
        let frame = SplitAccessUnit {
            frame_type: FrameType::P,
            idr: false,
            nal_units: vec![vec![0x41; if tid == 0 { 3000 } else { 1000 }]],
        };
        sender.push_frame(&frame, tid).unwrap();
    }
}

/// Takes every packet due by `until`.
fn drain(sender: &mut LayeredSender, until: Instant) -> Vec<TimedPacket> {
    std::iter::from_fn(|| sender.pop_due(until)).collect()
}

fn report(seq: u64, congested: bool, underruns: u64) -> Vec<u8> {
    BufferReport {
        ssrc: 2,
        feedback: BufferFeedback {
            seq,
            average_occupancy_bits: 0,
            full_buffer_bits: 0,
            occupancy: Duration::from_millis(500),
            span: Duration::from_millis(500),
            eta: Share::ZERO,
            congested,
            losses_observed: false,
            deficit: Duration::ZERO,
            underruns,
            receive_rate: Rate::ZERO,
        },
    }
    .emit()
}

#[test]
fn windows_are_thinned_to_whole_frames_and_a_dry_base_layer_ends_the_stream() {
    let layers = TemporalLayers::new(3).unwrap();
    let mut sender = LayeredSender::new(BufferConfig::default(), layers, 25.0, 1400).unwrap();
    let t = |ms: u64| Instant::from_millis(ms);
    // The first window: the whole stream, every packet carrying its
    // frame's extension, paced over the window in frame order.
    fill(&mut sender, layers);
    sender.plan(t(0), None).unwrap();
    let first = drain(&mut sender, t(1000));
    assert_eq!(sender.report().frames_kept, [7, 6, 12]);
    assert!(first
        .windows(2)
        .all(|w| w[0].at <= w[1].at && w[0].frame <= w[1].frame));
    assert!(first.last().unwrap().at > t(900), "paced over the window");
    let frame_zero: Vec<&TimedPacket> = first.iter().filter(|p| p.frame == 0).collect();
    let bytes: usize = frame_zero.iter().map(|p| p.packet.len()).sum();
    for packet in &frame_zero {
        let rtp = RtpRepr::parse_bytes(&packet.packet).unwrap();
        let info = TemporalFrameInfo::from_extension(&rtp.extension.unwrap())
            .unwrap()
            .unwrap();
        assert_eq!((info.frame_index, info.temporal_id, info.layers), (0, 0, 3));
        assert_eq!(info.frame_bytes as usize, bytes);
        assert_eq!(info.frame_interval_us, 40_000);
    }
    // Congestion with an empty buffer (η = 0): the next windows carry
    // the frames of layer 0 alone.
    sender.on_report(t(1000), &report(0, true, 0)).unwrap();
    // Another RTCP packet, and a malformed report, change nothing.
    sender
        .on_report(t(1000), &[0x80, 201, 0, 1, 0, 0, 0, 1])
        .unwrap();
    let mut malformed = report(1, true, 0);
    malformed.truncate(40);
    malformed[3] = 9;
    sender.on_report(t(1000), &malformed).unwrap();
    for window in 1..3u64 {
        fill(&mut sender, layers);
        sender.plan(t(1000 * window), None).unwrap();
        let packets = drain(&mut sender, t(1000 * (window + 1)));
        assert!(!packets.is_empty());
    }
    let so_far = sender.report();
    assert_eq!(so_far.frames_kept, [19, 6, 12], "{so_far:?}");
    assert_eq!(so_far.base_only_windows, 2);
    assert_eq!(so_far.congestion_feedbacks, 1);
    assert_eq!(so_far.malformed_reports, 1);
    // An underrun after 1.5 s of the base layer alone: cut off.
    let error = sender.on_report(t(2500), &report(2, true, 1)).unwrap_err();
    assert!(matches!(
        error,
        SendError::BufferStopped(StopReason::BufferRanDry { .. })
    ));
    assert!(
        error.to_string().contains("cc=buffer cut the stream off"),
        "{error}"
    );
    assert!(sender.report().stop_reason.is_some());
    assert!(sender.is_drained());
}
