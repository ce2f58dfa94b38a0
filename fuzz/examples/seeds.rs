//! Writes the seed corpus for every fuzz target into `fuzz/seeds/<target>/`:
//! valid packets of every DCCP type with every option, RTP, RTCP and H.264
//! payload sequences. Run from `fuzz/`: `cargo +nightly run --example seeds`.

use std::fs;
use std::path::Path;

use fairstream_proto::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, ResetCode, SeqNum};
use fairstream_proto::wire::h264::Packetizer;
use fairstream_proto::wire::options::{
    AckVector, AckVectorState, DccpOption, ElapsedTime, Feature, LossEventRate, LossInterval,
    LossIntervals, Options,
};

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new("seeds").join(target);
    fs::create_dir_all(&dir).expect("create corpus dir");
    fs::write(dir.join(name), bytes).expect("write seed");
}

fn main() {
    let ack = SeqNum::new(0x0000_1234_5678);
    let kinds = [
        ("request", PacketKind::Request { service_code: 0x5254_5020 }),
        ("response", PacketKind::Response { ack, service_code: 0x5254_5020 }),
        ("data", PacketKind::Data),
        ("ack", PacketKind::Ack { ack }),
        ("dataack", PacketKind::DataAck { ack }),
        ("closereq", PacketKind::CloseReq { ack }),
        ("close", PacketKind::Close { ack }),
        ("reset", PacketKind::Reset { ack, code: ResetCode::Closed, data: [1, 2, 3] }),
        ("sync", PacketKind::Sync { ack }),
        ("syncack", PacketKind::SyncAck { ack }),
    ];
    let cells = [(AckVectorState::Received, 5), (AckVectorState::NotReceived, 1), (AckVectorState::Received, 63)];
    let option_sets: Vec<(&str, Vec<DccpOption>)> = vec![
        ("none", vec![]),
        (
            "features",
            vec![
                DccpOption::ChangeL(Feature::Ccid(vec![3, 2, 4])),
                DccpOption::ConfirmR(Feature::Ccid(vec![3, 2])),
                DccpOption::ChangeR(Feature::SequenceWindow(Some(100))),
                DccpOption::Mandatory,
                DccpOption::ChangeL(Feature::AckRatio(Some(2))),
                DccpOption::ChangeL(Feature::SendAckVector(vec![true])),
            ],
        ),
        (
            "ccid3",
            vec![
                DccpOption::LossEventRate(LossEventRate::from_p(0.01).expect("valid p")),
                DccpOption::ReceiveRate(164_005),
                DccpOption::ElapsedTime(ElapsedTime(1234)),
                DccpOption::LossIntervals(LossIntervals {
                    skip_length: 2,
                    intervals: vec![
                        LossInterval { lossless_length: 100, ecn_nonce_echo: false, loss_length: 3, data_length: 103 },
                        LossInterval { lossless_length: 90, ecn_nonce_echo: true, loss_length: 1, data_length: 91 },
                    ],
                }),
            ],
        ),
        (
            "ccid2",
            vec![
                DccpOption::AckVector(AckVector::from_cells(false, &cells).expect("valid cells")),
                DccpOption::NdpCount(7),
                DccpOption::Timestamp(0xdead_beef),
                DccpOption::TimestampEcho { timestamp: 0xdead_beef, elapsed: Some(ElapsedTime(40)) },
                DccpOption::SlowReceiver,
            ],
        ),
    ];
    for (kind_name, kind) in kinds {
        for (set_name, options) in &option_sets {
            let mut list = Options::default();
            for option in options {
                list.push(option.clone()).expect("option fits");
            }
            let payload: &[u8] = if matches!(kind, PacketKind::Data | PacketKind::DataAck { .. } | PacketKind::Request { .. } | PacketKind::Response { .. }) {
                b"\x80\x60\x00\x01\x00\x00\x0b\xb8\x12\x34\x56\x78\x65\x88\x84"
            } else {
                &[]
            };
            let repr = DccpRepr {
                src_port: 5004,
                dst_port: 5005,
                ccval: 3,
                checksum_coverage: 0,
                short_seqno: false,
                seq: SeqNum::new(0x0000_0000_1000),
                kind,
                options: list.clone(),
                payload,
            };
            let context = ChecksumContext::UdpEncapsulated;
            if let Ok(bytes) = repr.emit_to_vec(&context) {
                write("dccp", &format!("{kind_name}-{set_name}"), &bytes);
                // The connection target's framing: direction, length, bytes.
                let mut framed = vec![0u8];
                framed.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
                framed.extend_from_slice(&bytes);
                write("dccp_connection", &format!("{kind_name}-{set_name}"), &framed);
            }
            write("dccp_options", &format!("{set_name}"), &list.to_bytes());
        }
    }
    // RTP: plain, with CSRCs + extension + padding.
    write("rtp", "plain", &[0x80, 0x60, 0x00, 0x01, 0x00, 0x00, 0x0b, 0xb8, 0x12, 0x34, 0x56, 0x78, 0x65, 0x88, 0x84, 0x00]);
    write(
        "rtp",
        "csrc-ext-pad",
        &[
            0xb2, 0xe0, 0xff, 0xff, 0, 0, 0, 1, 0xaa, 0xbb, 0xcc, 0xdd, // V=2 P X CC=2, M PT=96
            0, 0, 0, 1, 0, 0, 0, 2, // CSRCs
            0xbe, 0xde, 0x00, 0x01, 1, 2, 3, 4, // extension, 1 word
            0x41, 0x9a, 0, 0, 0, 3, // payload + 3 padding bytes
        ],
    );
    // RTCP: SR with one report block + SDES CNAME, and an RR.
    let mut sr = vec![0x81, 200, 0, 12, 0x12, 0x34, 0x56, 0x78];
    sr.extend_from_slice(&[0xe6, 0x5b, 0x8f, 0x00, 0x40, 0x00, 0x00, 0x00]); // NTP
    sr.extend_from_slice(&[0, 0, 0x0b, 0xb8, 0, 0, 0, 10, 0, 0, 0x05, 0xdc]); // RTP ts, packets, octets
    sr.extend_from_slice(&[0xca, 0xfe, 0xba, 0xbe, 0x05, 0, 0, 3, 0, 1, 0, 20, 0, 0, 0, 9, 0x8f, 0, 0x40, 0, 0, 0, 0x10, 0]);
    sr.extend_from_slice(&[0x81, 202, 0, 3, 0x12, 0x34, 0x56, 0x78, 1, 4, b'f', b's', b'1', b'0', 0, 0]);
    write("rtcp", "sr-sdes", &sr);
    write("rtcp", "rr-empty", &[0x80, 201, 0, 1, 0x12, 0x34, 0x56, 0x78]);
    // H.264 payloads: a NAL split into FU-A fragments, and a single NAL unit,
    // in the target's framing (seq:u16, marker:u8, len:u8, payload).
    let nal: Vec<u8> = std::iter::once(0x65).chain((0..600u32).map(|i| (i * 7) as u8)).collect();
    let mut stream = Vec::new();
    let mut seq: u16 = 65_530;
    let fragments = Packetizer::new(&nal, 200).expect("packetizer");
    let count = fragments.len();
    for (i, fragment) in fragments.enumerate() {
        let bytes = fragment.to_vec();
        let len = bytes.len().min(255);
        stream.extend_from_slice(&seq.to_be_bytes());
        stream.push(u8::from(i + 1 == count));
        stream.push(len as u8);
        stream.extend_from_slice(&bytes[..len]);
        seq = seq.wrapping_add(1);
    }
    stream.extend_from_slice(&seq.to_be_bytes());
    stream.extend_from_slice(&[1, 5, 0x41, 0x9a, 0x01, 0x02, 0x03]);
    write("h264_payload", "fu-a-then-single", &stream);
    println!("seed corpus written to fuzz/seeds/");
}
