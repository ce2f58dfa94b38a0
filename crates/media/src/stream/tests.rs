use super::*;
use crate::codec::EncoderSettings;
use crate::evalvid::parse_sender_trace;
use crate::playout::StartupDelay;

const SETTINGS: EncoderSettings = EncoderSettings {
    bitrate_bps: 300_000,
    fps: 25.0,
    gop: 25,
    slice_max_bytes: Some(900),
};

fn everything_sent(packets: &[MediaPacket], fps: f64) -> SendTimes {
    packets
        .iter()
        .map(|p| (p.id, p.frame as f64 / fps))
        .collect()
}

fn receive(packets: &[MediaPacket], lose: impl Fn(&MediaPacket) -> bool, fps: f64) -> Reception {
    let mut reception = Reception::new();
    for p in packets {
        if !lose(p) {
            reception.on_datagram(p.frame as f64 / fps + 0.05, &p.bytes, 1 << 20);
        }
    }
    reception
}

#[test]
fn loss_free_delivery_gives_the_encoders_own_quality() {
    let stream = MediaStream::generated(176, 144, 50, SETTINGS).unwrap();
    let packets = stream.packetize(1000).unwrap();
    assert!(packets.iter().all(|p| p.bytes.len() <= 1000));
    // 900-byte slices fit: one NAL unit (no FU-A) per slice packet.
    let slices: usize = stream
        .frames()
        .iter()
        .map(|f| {
            f.nal_units
                .iter()
                .filter(|n| matches!(n[0] & 0x1f, 1 | 5))
                .count()
        })
        .sum();
    assert!(packets.len() >= slices);
    let sent = everything_sent(&packets, 25.0);
    let reception = receive(&packets, |_| false, 25.0);
    let report = evaluate(&stream, &packets, &sent, &reception, StartupDelay::Auto).unwrap();
    assert_eq!(report.playout.frames_total, 50);
    assert_eq!(report.playout.frames_displayed, 50);
    assert_eq!(report.playout.frames_lost.total(), 0);
    assert_eq!(report.playout.stalls, 0);
    assert_eq!(report.frames_repeated, 0);
    // The encoder's own PSNR: its output decoded loss-free against the
    // generator's frames.
    let own = crate::quality::summarise(
        &crate::quality::compare(
            &(0..50)
                .map(|n| Generator::new(176, 144).unwrap().frame(n))
                .collect::<Vec<_>>(),
            &match &MediaStream::from_annex_b(
                &stream
                    .frames()
                    .iter()
                    .flat_map(|f| {
                        f.nal_units
                            .iter()
                            .flat_map(|n| [0, 0, 0, 1].iter().copied().chain(n.iter().copied()))
                    })
                    .collect::<Vec<u8>>(),
                25.0,
            )
            .unwrap()
            .reference
            {
                Reference::Decoded(frames) => frames.clone(),
                _ => unreachable!(),
            },
        )
        .unwrap(),
    )
    .unwrap();
    let quality = report.quality.unwrap();
    assert_eq!(quality.psnr_db_mean, own.psnr_db_mean);
    assert!(quality.psnr_db_mean > 28.0, "{quality:?}");
}

#[test]
fn lost_packets_cost_frames_by_type_and_quality() {
    let stream = MediaStream::generated(176, 144, 50, SETTINGS).unwrap();
    let packets = stream.packetize(1000).unwrap();
    let sent = everything_sent(&packets, 25.0);
    // Lose every 7th packet.
    let reception = receive(&packets, |p| p.id % 7 == 3, 25.0);
    let report = evaluate(&stream, &packets, &sent, &reception, StartupDelay::Auto).unwrap();
    assert!(report.playout.packets_lost.total() > 0);
    assert!(report.playout.frames_lost.total() > 0);
    let quality = report.quality.unwrap();
    assert!(
        quality.psnr_db_mean < 35.0 && quality.psnr_db_mean > 10.0,
        "{quality:?}"
    );
    // A packet that arrives after its frame's deadline counts as lost.
    let mut late = Reception::new();
    for p in &packets {
        let delay = if p.frame == 30 { 5.0 } else { 0.05 };
        late.on_datagram(p.frame as f64 / 25.0 + delay, &p.bytes, 1 << 20);
    }
    let report = evaluate(&stream, &packets, &sent, &late, StartupDelay::Fixed(0.1)).unwrap();
    assert_eq!(report.playout.frames_lost.total(), 1);
    assert_eq!(report.playout.stalls, 1);
}

#[test]
fn trace_streams_carry_sizes_without_quality() {
    let trace =
        parse_sender_trace("1 I 3000 3 0\n2 P 500 1 0.04\n3 P 700 1 0.08\n", "t.st").unwrap();
    let stream = MediaStream::from_trace(&trace, 25.0).unwrap();
    let packets = stream.packetize(1500).unwrap();
    assert_eq!(packets.len(), 5);
    let payload: usize = packets
        .iter()
        .map(|p| p.bytes.len() - RTP_HEADER_BYTES)
        .sum();
    assert_eq!(payload, 4200);
    let sent = everything_sent(&packets, 25.0);
    let reception = receive(&packets, |p| p.id == 1, 25.0);
    let report = evaluate(&stream, &packets, &sent, &reception, StartupDelay::Auto).unwrap();
    assert!(report.quality.is_none());
    assert_eq!(report.playout.frames_lost.i, 1);
    let (st, sd, rd) = evalvid_files(&stream, &packets, &sent, &reception);
    assert_eq!(st.lines().count(), 3);
    assert_eq!(sd.lines().count(), 5);
    assert_eq!(rd.lines().count(), 4);
}

#[test]
fn what_is_not_rtp_is_counted_and_memory_is_bounded() {
    let mut reception = Reception::new();
    reception.on_datagram(0.0, b"hello", 10);
    reception.on_datagram(0.0, &[], 10);
    assert_eq!(reception.malformed(), 2);
    let stream = MediaStream::from_trace(
        &parse_sender_trace("1 I 30000 30 0\n", "t.st").unwrap(),
        25.0,
    )
    .unwrap();
    for p in stream.packetize(1500).unwrap() {
        reception.on_datagram(0.1, &p.bytes, 10);
    }
    assert_eq!(reception.len(), 10);
    assert!(stream.packetize(14).is_err());
    assert!(MediaStream::from_trace(&[], 0.0).is_err());
}

#[test]
fn fec_rebuilds_what_its_parity_can_and_no_more() {
    let stream = MediaStream::generated(176, 144, 25, SETTINGS).unwrap();
    let packets = stream.packetize(1000).unwrap();
    let fec = FecParams { n: 12, k: 10 };
    let parity = parity_packets(&packets, fec).unwrap();
    let blocks = packets.len().div_ceil(10);
    assert_eq!(parity.len(), blocks * 2);
    let sent = everything_sent(&packets, 25.0);
    // Lose two data packets of every block: all rebuilt.
    let mut reception = receive(&packets, |p| p.id % 10 == 3 || p.id % 10 == 7, 25.0);
    for p in &parity {
        reception.on_datagram(1.0, &p.bytes, 1 << 20);
    }
    let plain = evaluate(&stream, &packets, &sent, &reception, StartupDelay::Auto).unwrap();
    assert!(plain.playout.packets_lost.total() > 0);
    let protected = evaluate_with_fec(
        &stream,
        &packets,
        &sent,
        &reception,
        StartupDelay::Auto,
        Some(fec),
    )
    .unwrap();
    assert_eq!(protected.playout.packets_lost.total(), 0);
    assert_eq!(
        protected.packets_recovered_by_fec,
        plain.playout.packets_lost.total()
    );
    // Three losses in a block are beyond RS(12, 10).
    let reception3 = {
        let mut r = receive(&packets, |p| p.id % 10 < 3, 25.0);
        for p in &parity {
            r.on_datagram(1.0, &p.bytes, 1 << 20);
        }
        r
    };
    let report = evaluate_with_fec(
        &stream,
        &packets,
        &sent,
        &reception3,
        StartupDelay::Auto,
        Some(fec),
    )
    .unwrap();
    assert_eq!(report.packets_recovered_by_fec, 0);
    // The dumps of the first run give the same verdict (what `fairstream
    // evaluate` reads back from `simulate --out`).
    let (_, sd, rd) = evalvid_files(&stream, &packets, &sent, &reception);
    let rd_fec = parity_dump(&reception, Some(fec));
    let dump = |text: &str| crate::evalvid::parse_dump(text, "dump").unwrap();
    let (sd, rd, rd_fec) = (dump(&sd), dump(&rd), dump(&rd_fec));
    assert_eq!(rd_fec.len(), parity.len());
    let dumps = ReceivedDumps {
        sent: &sd,
        received: &rd,
        parity_received: &rd_fec,
    };
    let from_files =
        evaluate_dumps(&stream, &packets, dumps, Some(fec), StartupDelay::Auto).unwrap();
    assert_eq!(from_files, protected);
    // Parity without a code, or a parity id past the code's, is refused.
    assert!(evaluate_dumps(&stream, &packets, dumps, None, StartupDelay::Auto).is_err());
    let narrower = FecParams { n: 11, k: 10 };
    assert!(evaluate_dumps(&stream, &packets, dumps, Some(narrower), StartupDelay::Auto).is_err());
}
