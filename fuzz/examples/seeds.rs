//! Writes the seed corpus for every fuzz target into `fuzz/seeds/<target>/`:
//! valid packets of every DCCP type with every option, RTP, RTCP and H.264
//! payload sequences, FEC-protected RTP streams, relay buffer operations,
//! URLs, option values, scenario files, mahimahi traces and what a real
//! receiver answers a sender session. Run from `fuzz/`:
//! `cargo +nightly run --example seeds`.

#[path = "../fuzz_targets/sender_driver.rs"]
mod sender_driver;

use std::collections::VecDeque;
use std::fs;
use std::path::Path;
use std::time::Duration;

use fairstream_media::evalvid::parse_sender_trace;
use fairstream_media::fec::FecCode;
use fairstream_media::h264::incremental::{AccessUnitSplitter, SplitAccessUnit};
use fairstream_media::h264::FrameType;
use fairstream_media::layered::{
    fgs_trace, format_layered_trace, from_evalvid, FgsTraceConfig, Share,
};
use fairstream_media::stream::{parity_rtp_packet, rtp_timestamp, FramePacketizer, ParityHeader};
use fairstream_proto::conn::ConnectionConfig;
use fairstream_proto::session::{ReceiverSession, ReorderConfig, SenderSession};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::rtp::RtpRepr;

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
        (
            "request",
            PacketKind::Request {
                service_code: 0x5254_5020,
            },
        ),
        (
            "response",
            PacketKind::Response {
                ack,
                service_code: 0x5254_5020,
            },
        ),
        ("data", PacketKind::Data),
        ("ack", PacketKind::Ack { ack }),
        ("dataack", PacketKind::DataAck { ack }),
        ("closereq", PacketKind::CloseReq { ack }),
        ("close", PacketKind::Close { ack }),
        (
            "reset",
            PacketKind::Reset {
                ack,
                code: ResetCode::Closed,
                data: [1, 2, 3],
            },
        ),
        ("sync", PacketKind::Sync { ack }),
        ("syncack", PacketKind::SyncAck { ack }),
    ];
    let cells = [
        (AckVectorState::Received, 5),
        (AckVectorState::NotReceived, 1),
        (AckVectorState::Received, 63),
    ];
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
                        LossInterval {
                            lossless_length: 100,
                            ecn_nonce_echo: false,
                            loss_length: 3,
                            data_length: 103,
                        },
                        LossInterval {
                            lossless_length: 90,
                            ecn_nonce_echo: true,
                            loss_length: 1,
                            data_length: 91,
                        },
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
                DccpOption::TimestampEcho {
                    timestamp: 0xdead_beef,
                    elapsed: Some(ElapsedTime(40)),
                },
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
            let payload: &[u8] = if matches!(
                kind,
                PacketKind::Data
                    | PacketKind::DataAck { .. }
                    | PacketKind::Request { .. }
                    | PacketKind::Response { .. }
            ) {
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
                write(
                    "dccp_connection",
                    &format!("{kind_name}-{set_name}"),
                    &framed,
                );
            }
            write("dccp_options", &format!("{set_name}"), &list.to_bytes());
        }
    }
    // RTP: plain, with CSRCs + extension + padding.
    write(
        "rtp",
        "plain",
        &[
            0x80, 0x60, 0x00, 0x01, 0x00, 0x00, 0x0b, 0xb8, 0x12, 0x34, 0x56, 0x78, 0x65, 0x88,
            0x84, 0x00,
        ],
    );
    write(
        "rtp",
        "csrc-ext-pad",
        &[
            0xb2, 0xe0, 0xff, 0xff, 0, 0, 0, 1, 0xaa, 0xbb, 0xcc,
            0xdd, // V=2 P X CC=2, M PT=96
            0, 0, 0, 1, 0, 0, 0, 2, // CSRCs
            0xbe, 0xde, 0x00, 0x01, 1, 2, 3, 4, // extension, 1 word
            0x41, 0x9a, 0, 0, 0, 3, // payload + 3 padding bytes
        ],
    );
    // RTCP: SR with one report block + SDES CNAME, and an RR.
    let mut sr = vec![0x81, 200, 0, 12, 0x12, 0x34, 0x56, 0x78];
    sr.extend_from_slice(&[0xe6, 0x5b, 0x8f, 0x00, 0x40, 0x00, 0x00, 0x00]); // NTP
    sr.extend_from_slice(&[0, 0, 0x0b, 0xb8, 0, 0, 0, 10, 0, 0, 0x05, 0xdc]); // RTP ts, packets, octets
    sr.extend_from_slice(&[
        0xca, 0xfe, 0xba, 0xbe, 0x05, 0, 0, 3, 0, 1, 0, 20, 0, 0, 0, 9, 0x8f, 0, 0x40, 0, 0, 0,
        0x10, 0,
    ]);
    sr.extend_from_slice(&[
        0x81, 202, 0, 3, 0x12, 0x34, 0x56, 0x78, 1, 4, b'f', b's', b'1', b'0', 0, 0,
    ]);
    write("rtcp", "sr-sdes", &sr);
    write(
        "rtcp",
        "rr-empty",
        &[0x80, 201, 0, 1, 0x12, 0x34, 0x56, 0x78],
    );
    // H.264 payloads: a NAL split into FU-A fragments, and a single NAL unit,
    // in the target's framing (seq:u16, marker:u8, len:u8, payload).
    let nal: Vec<u8> = std::iter::once(0x65)
        .chain((0..600u32).map(|i| (i * 7) as u8))
        .collect();
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
    let units = access_units();
    let packets = rtp_packets(&units);
    fec_seeds(&packets);
    assembler_seeds(&packets);
    relay_buffer_seeds(&units);
    text_seeds();
    scenario_seeds();
    mahimahi_seeds();
    layered_trace_seeds();
    sender_feedback_seeds();
    secure_seeds();
    println!("seed corpus written to fuzz/seeds/");
}

/// The access units of the head of a stream our generator encoded (the
/// `h264_annexb` seed): real parameter sets and slices.
fn access_units() -> Vec<SplitAccessUnit> {
    let stream = fs::read("seeds/h264_annexb/generated-head.264").expect("the h264_annexb seed");
    let mut splitter = AccessUnitSplitter::new();
    let mut units = splitter.push(&stream).expect("our generator's stream");
    units.extend(splitter.finish().expect("our generator's stream"));
    units
}

/// The access units as RTP packets of at most 200 bytes, numbered from 0
/// as the sender numbers them, 25 frames a second.
fn rtp_packets(units: &[SplitAccessUnit]) -> Vec<Vec<u8>> {
    let mut packetizer = FramePacketizer::new(200).expect("200-byte packets");
    let mut packets = Vec::new();
    for (index, unit) in units.iter().enumerate() {
        let nal_units = unit.nal_units.iter().map(Vec::as_slice);
        packets.extend(
            packetizer
                .packetize(rtp_timestamp(index as u64, 25.0), nal_units)
                .expect("packetizes"),
        );
    }
    packets
}

/// Datagrams in the framing of the time-stepped targets: time step (ms),
/// length (two bytes), bytes.
fn framed(step: u8, datagrams: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for datagram in datagrams {
        out.push(step);
        out.extend_from_slice(&(datagram.len() as u16).to_be_bytes());
        out.extend_from_slice(datagram);
    }
    out
}

/// The stream with RS(n, k) parity after each block, as `fairstream send`
/// sends it with `fec=n,k`.
fn with_parity(packets: &[Vec<u8>], n: usize, k: usize) -> Vec<(bool, Vec<u8>)> {
    let code = FecCode::new(n, k).expect("a code");
    let mut out = Vec::new();
    let mut parity_sequence = 0u16;
    for (block, data) in packets.chunks(k).enumerate() {
        out.extend(data.iter().map(|p| (true, p.clone())));
        let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        let timestamp = RtpRepr::parse_bytes(&data[data.len() - 1])
            .expect("RTP")
            .timestamp;
        for (index, shard) in code.encode(&refs).expect("encodes").iter().enumerate() {
            let header = ParityHeader {
                block: block as u32,
                index: index as u8,
                k: k as u8,
                n: n as u8,
            };
            out.push((
                false,
                parity_rtp_packet(header, parity_sequence, timestamp, shard).expect("parity"),
            ));
            parity_sequence = parity_sequence.wrapping_add(1);
        }
    }
    out
}

fn fec_seeds(packets: &[Vec<u8>]) {
    let all = |stream: Vec<(bool, Vec<u8>)>| stream.into_iter().map(|(_, p)| p).collect::<Vec<_>>();
    write(
        "fec_parity",
        "rs6-4-all",
        &framed(2, &all(with_parity(packets, 6, 4))),
    );
    // One data packet of every block lost: each is rebuilt.
    let lossy: Vec<Vec<u8>> = with_parity(packets, 6, 4)
        .into_iter()
        .enumerate()
        .filter(|(i, (data, _))| !(*data && i % 6 == 1))
        .map(|(_, (_, p))| p)
        .collect();
    write("fec_parity", "rs6-4-one-lost-a-block", &framed(2, &lossy));
    // Three of RS(12, 10)'s blocks' packets lost: more than parity repairs.
    let mut heavy = all(with_parity(packets, 12, 10));
    heavy.drain(3..6);
    write("fec_parity", "rs12-10-three-lost", &framed(5, &heavy));
    // Parity first, then the data in reverse.
    let mut reversed = all(with_parity(packets, 5, 3));
    reversed.reverse();
    write("fec_parity", "rs5-3-reversed", &framed(1, &reversed));
}

/// Whole RTP packets, each after its length.
fn length_prefixed(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for packet in packets {
        out.extend_from_slice(&(packet.len() as u16).to_be_bytes());
        out.extend_from_slice(packet);
    }
    out
}

fn assembler_seeds(packets: &[Vec<u8>]) {
    write("assembler", "all", &length_prefixed(packets));
    let lossy: Vec<Vec<u8>> = packets
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 5 != 2)
        .map(|(_, p)| p.clone())
        .collect();
    write("assembler", "every-fifth-lost", &length_prefixed(&lossy));
    let mut reordered = packets.to_vec();
    for pair in reordered.chunks_mut(2) {
        pair.reverse();
    }
    write("assembler", "pairs-swapped", &length_prefixed(&reordered));
}

/// The relay target's operations: the limit (in 64-byte units), then a
/// push of each access unit, popping after every `pop_every` pushes.
fn relay_ops(units: &[SplitAccessUnit], limit_units: u16, pop_every: usize) -> Vec<u8> {
    let mut out = limit_units.to_be_bytes().to_vec();
    for (i, unit) in units.iter().enumerate() {
        let kind = match unit.frame_type {
            FrameType::I => 1,
            FrameType::P => 2,
            FrameType::B => 3,
        } | if unit.idr { 4 } else { 0 };
        out.extend_from_slice(&[0, kind, unit.nal_units.len().min(7) as u8]);
        for nal in unit.nal_units.iter().take(7) {
            out.push(nal[0]);
            out.extend_from_slice(&(nal.len().min(usize::from(u16::MAX)) as u16).to_be_bytes());
        }
        if (i + 1) % pop_every == 0 {
            out.push(2);
        }
    }
    out.extend_from_slice(&[3, 2, 2, 2]);
    out
}

fn relay_buffer_seeds(units: &[SplitAccessUnit]) {
    write("relay_buffer", "roomy", &relay_ops(units, 1024, 1));
    write("relay_buffer", "tight-drops", &relay_ops(units, 16, 4));
    write("relay_buffer", "one-unit", &relay_ops(units, 1, 3));
    // Two GOPs of 12 frames (I B B P ...), a parameter-set frame first, of
    // 300 to 3000 bytes, into a buffer of 8 kB popped every third push.
    let gops: Vec<SplitAccessUnit> = (0..24)
        .map(|i| {
            let (frame_type, header) = match i % 12 {
                0 => (FrameType::I, 0x65),
                n if n % 3 == 0 => (FrameType::P, 0x41),
                _ => (FrameType::B, 0x01),
            };
            let mut nal_units = vec![vec![header; 300 + (i * 311) % 2700]];
            if i % 12 == 0 {
                nal_units.insert(0, vec![0x67; 12]);
                nal_units.insert(1, vec![0x68; 4]);
            }
            SplitAccessUnit {
                frame_type,
                idr: i % 12 == 0,
                nal_units,
            }
        })
        .collect();
    write("relay_buffer", "gops-8kB", &relay_ops(&gops, 125, 3));
}

fn text_seeds() {
    let urls = [
        "dccp://127.0.0.1:9000?cc=tfrc-sp&conns=4&controller=e-multfrc&policy=gop-interleave&start_offset=0.25s&max_packet=1000",
        "dccp://host.example:9000?cc=tfrc&conns=4",
        "dccp://:9000",
        "dccp://[::1]:5004?cc=ccid2&max_packet=1200&peer_timeout=5s&arq=off",
        "dccp://127.0.0.1:9001?cc=fixed&rate=64kbit",
        "dccp://h:1?controller=adaptive&rtt_min_lifetime=60s&fec=24,20&peer_timeout=auto",
        "dccp://0.0.0.0:9000/?cc=tfrc&max_packet=1400&arq=on",
    ];
    for (i, url) in urls.iter().enumerate() {
        write("url", &format!("url-{i}"), url.as_bytes());
    }
    let units = [
        "2mbit",
        "250kbit",
        "1.5Mbps",
        "125kB/s",
        "1e6bit",
        "64000bit/s",
        "1gbps",
        "1460",
        "1.5kB",
        "64KiB",
        "1GiB",
        "1_000B",
        "100ms",
        "0.1s",
        "250us",
        "2min",
        "1h",
        "500ns",
        "1e-1s",
    ];
    for (i, value) in units.iter().enumerate() {
        write("units", &format!("value-{i}"), value.as_bytes());
    }
    let options = [
        "2mbit",
        "40ms",
        "1s",
        "none",
        "2%",
        "0.02",
        "bernoulli:0.02",
        "ge:0.95,0.94,0.01,0.05",
        "gilbert-elliott:0.9,0.5,0,1",
        "50",
        "64kB",
        "96000B",
        "red:5,15,0.1",
        "RED:5, 15, 0.1, 200",
    ];
    for (i, value) in options.iter().enumerate() {
        write("emulate_options", &format!("value-{i}"), value.as_bytes());
    }
}

/// Every scenario file of the repository.
fn scenario_seeds() {
    for dir in ["../experiments", "../crates/sim/tests/scenarios"] {
        let mut stack = vec![Path::new(dir).to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).expect("a scenario directory") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "toml") {
                    let name = path
                        .strip_prefix("..")
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .replace('/', "-");
                    write(
                        "scenario",
                        &name,
                        &fs::read(&path).expect("a scenario file"),
                    );
                }
            }
        }
    }
}

/// mahimahi traces: a constant rate, bursts with repeated offsets, a
/// sparse one.
fn mahimahi_seeds() {
    let constant: String = (1..=100).map(|ms| format!("{ms}\n")).collect();
    write("mahimahi", "constant-12mbit", constant.as_bytes());
    let bursty: String = (0..60u64)
        .flat_map(|i| std::iter::repeat_n(i * 7 + 1, (i % 4) as usize + 1))
        .map(|ms| format!("{ms}\n"))
        .collect();
    write("mahimahi", "bursty", bursty.as_bytes());
    write("mahimahi", "sparse", b"0\n0\n250\n1000");
}

/// Layered traces: a synthetic FGS one, the `evalvid` seed split into a base
/// and an FGS rest, and one of discrete layers with comments, blank lines,
/// spaces and CRLF line ends.
fn layered_trace_seeds() {
    let config = FgsTraceConfig {
        frames: 30,
        ..FgsTraceConfig::default()
    };
    let frames = fgs_trace(&config).expect("the default FGS trace");
    write(
        "layered_trace",
        "fgs-generated.lt",
        format_layered_trace(&frames).as_bytes(),
    );
    let evalvid = fs::read_to_string("seeds/evalvid/generated.st").expect("the evalvid seed");
    let evalvid = parse_sender_trace(&evalvid, "generated.st").expect("the evalvid seed");
    let frames = from_evalvid(&evalvid, Share::new(0.3)).expect("the evalvid seed splits");
    write(
        "layered_trace",
        "from-evalvid.lt",
        format_layered_trace(&frames).as_bytes(),
    );
    write(
        "layered_trace",
        "discrete-layers.lt",
        b"# frame_no type base_bytes enhancement time_s\r\n\r\n\
          1 I 2400 layers:300,300,450 0.000\r\n\
          2\tP\t800\tlayers:\t0.033333333\r\n\
          # a comment between frames\r\n\
          5 B 780 fgs:0 0.033333333\r\n\
          9 P 1 layers:1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 1000000\r\n",
    );
}

/// What a real receiver answers the `sender_feedback` target's session
/// over a 10 ms path for `duration_ms`, losing the data packets `lose`
/// selects (so that it asks for them again): the session's inputs in the
/// target's framing.
fn sender_conversation(duration_ms: u64, lose: impl Fn(u64) -> bool) -> Vec<u8> {
    let delay = Duration::from_millis(10);
    let mut now = Instant::ZERO;
    let mut sender =
        SenderSession::new(sender_driver::config(), now).expect("a valid configuration");
    let mut receiver =
        ReceiverSession::new(ConnectionConfig::default(), 64, ReorderConfig::default());
    let mut to_receiver: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut to_sender: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let (mut offered, mut sent, mut iss) = (0, 0u64, 1u64);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut last_fed = now;
    for _ in 0..duration_ms {
        now += Duration::from_millis(1);
        let mut leaving = Vec::new();
        sender_driver::tick(&mut sender, now, &mut offered, &mut buf, |d| {
            leaving.push(d.to_vec())
        });
        while to_receiver.front().is_some_and(|(at, _)| *at <= now) {
            let (_, datagram) = to_receiver.pop_front().expect("a datagram");
            iss += 1;
            receiver.handle_datagram(now, &datagram, iss);
        }
        receiver.handle_timeout(now);
        while receiver.poll_transmit(now, &mut buf).is_some() {
            to_sender.push_back((now + delay, buf.clone()));
        }
        while receiver.recv().is_some() {}
        while to_sender.front().is_some_and(|(at, _)| *at <= now) {
            let (_, datagram) = to_sender.pop_front().expect("a datagram");
            let step = (now - last_fed).as_millis();
            last_fed = now;
            out.push(u8::try_from(step).expect("the receiver answers within 255 ms"));
            out.extend_from_slice(&(datagram.len() as u16).to_be_bytes());
            out.extend_from_slice(&datagram);
            sender_driver::feed(&mut sender, now, &datagram, &mut buf, |d| {
                leaving.push(d.to_vec())
            });
        }
        for datagram in leaving {
            // DCCP-Data and DataAck carry the session's datagrams.
            let data = datagram.len() > 100;
            sent += u64::from(data);
            if !(data && lose(sent)) {
                to_receiver.push_back((now + delay, datagram));
            }
        }
    }
    // The target, fed the recording alone, must come to the same state.
    let replayed = replay(&out);
    assert_eq!(replayed.arq_stats(), sender.arq_stats());
    assert_eq!(
        replayed.max_open_connections(),
        sender.max_open_connections()
    );
    assert_eq!(
        sender.max_open_connections(),
        4,
        "the session opened its connections"
    );
    out
}

/// The `sender_feedback` target's loop, without its checks.
fn replay(input: &[u8]) -> SenderSession {
    let mut now = Instant::ZERO;
    let mut sender =
        SenderSession::new(sender_driver::config(), now).expect("a valid configuration");
    let (mut offered, mut buf, mut rest) = (0, Vec::new(), input);
    while rest.len() >= 3 {
        for _ in 0..rest[0] {
            now += Duration::from_millis(1);
            sender_driver::tick(&mut sender, now, &mut offered, &mut buf, |_| {});
        }
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]])).min(rest.len() - 3);
        sender_driver::feed(&mut sender, now, &rest[3..3 + len], &mut buf, |_| {});
        rest = &rest[3 + len..];
    }
    sender
}

fn sender_feedback_seeds() {
    write(
        "sender_feedback",
        "handshakes-300ms",
        &sender_conversation(300, |_| false),
    );
    write(
        "sender_feedback",
        "clean-1500ms",
        &sender_conversation(1500, |_| false),
    );
    write(
        "sender_feedback",
        "lossy-1500ms",
        &sender_conversation(1500, |n| n % 17 == 0),
    );
}

/// Sealed datagrams for `secure_open`, with its keys: a Response carrying
/// the salt, Data and DataAck packets, and a plain packet; each also serves
/// as data to seal.
fn secure_seeds() {
    use fairstream_proto::conn::ChecksumMode;
    use fairstream_proto::secure::{ConnectionKeys, MasterKey, Passphrase, Role};
    const CLIENT_ISS: u64 = 0x0000_1234_5678_9abc;
    const SERVER_ISS: u64 = 0x0000_fedc_ba98_7654;
    let passphrase: Passphrase = "fuzzing passphrase".parse().expect("a valid passphrase");
    let salt = *b"fairstream fuzz!";
    let master = MasterKey::derive(&passphrase, &salt);
    let checksum = ChecksumMode::UdpEncapsulated.send_context();
    let packet = |src: u16, dst: u16, seq: u64, kind: PacketKind, payload: &[u8]| {
        DccpRepr {
            src_port: src,
            dst_port: dst,
            ccval: 0,
            checksum_coverage: 0,
            short_seqno: false,
            seq: SeqNum::new(seq),
            kind,
            options: Options::new(),
            payload,
        }
        .emit_to_vec(&checksum)
        .expect("a seed packet emits")
    };
    let mut server = ConnectionKeys::new(&master, Role::Server, 5004, 9000, CLIENT_ISS, SERVER_ISS);
    let mut response = packet(
        9000,
        5004,
        SERVER_ISS,
        PacketKind::Response {
            ack: SeqNum::new(CLIENT_ISS),
            service_code: 0x5254_5056,
        },
        &[],
    );
    server
        .sealer()
        .seal_response(&mut response, &salt, &checksum)
        .expect("the Response seals");
    write("secure_open", "sealed-response", &response);
    let mut client = ConnectionKeys::new(&master, Role::Client, 5004, 9000, CLIENT_ISS, SERVER_ISS);
    for (i, payload) in [&b"fairstream"[..], &[0u8; 1200][..], &[]]
        .iter()
        .enumerate()
    {
        let seq = CLIENT_ISS + 1 + i as u64;
        let plain = packet(5004, 9000, seq, PacketKind::Data, payload);
        write("secure_open", &format!("plain-data-{i}"), &plain);
        let mut sealed = packet(
            5004,
            9000,
            seq,
            PacketKind::DataAck {
                ack: SeqNum::new(SERVER_ISS),
            },
            payload,
        );
        client
            .sealer()
            .seal(&mut sealed, &checksum)
            .expect("a DataAck seals");
        write("secure_open", &format!("sealed-data-ack-{i}"), &sealed);
    }
}
