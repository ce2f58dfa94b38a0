//! Wireshark as the judge: packets fairstream emits are written into a pcap
//! (each DCCP packet inside an IPv4 header of protocol 33, with its checksum
//! computed for that native view, since Wireshark 4.0 has no DCCP-over-UDP
//! dissector) and dissected by `tshark`. Every packet must dissect as DCCP with
//! no malformed-packet or checksum expert info, with the types, sequence and
//! acknowledgement numbers that were sent, the CCID 3 options present, and the
//! RTP inside Data packets dissected as RTP with an H.264 payload.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test: a failure is a test failure

use std::fs;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use fairstream_proto::capture::{PcapWriter, IPPROTO_DCCP};
use fairstream_proto::conn::pair::{Direction, LinkConfig, Pair};
use fairstream_proto::conn::{
    Ccid, ChecksumMode, ConnectionConfig, ConnectionId, EndpointConfig, State,
};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::dccp::{
    ChecksumContext, DccpRepr, PacketKind, PseudoHeader, ResetCode, SeqNum,
};
use fairstream_proto::wire::h264::Packetizer;
use fairstream_proto::wire::options::{
    DccpOption, ElapsedTime, Feature, LossEventRate, LossInterval, LossIntervals, Options,
};
use fairstream_proto::wire::rtp::{CsrcList, RtpRepr};

const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const CLIENT_PORT: u16 = 40_000;
const SERVER_PORT: u16 = 5004;

/// One packet as sent: direction, type name as Wireshark prints it, seq, ack.
struct Sent {
    type_name: &'static str,
    seq: u64,
    ack: Option<u64>,
}

struct Capture {
    writer: PcapWriter<Vec<u8>>,
    sent: Vec<Sent>,
    time_ms: u64,
}

impl Capture {
    fn new() -> Capture {
        Capture {
            writer: PcapWriter::new(Vec::new()).unwrap(),
            sent: Vec::new(),
            time_ms: 0,
        }
    }

    fn push(&mut self, from_client: bool, repr: &DccpRepr<'_>) {
        let (src, dst) = if from_client {
            (CLIENT, SERVER)
        } else {
            (SERVER, CLIENT)
        };
        let context = ChecksumContext::PseudoHeader(PseudoHeader::native_v4(src, dst));
        let bytes = repr.emit_to_vec(&context).unwrap();
        self.time_ms += 10;
        self.writer
            .write_ipv4(
                Instant::from_millis(self.time_ms),
                src,
                dst,
                IPPROTO_DCCP,
                &bytes,
            )
            .unwrap();
        self.sent.push(Sent {
            type_name: type_name(&repr.kind),
            seq: repr.seq.value(),
            ack: repr.kind.ack().map(SeqNum::value),
        });
    }
}

fn options(list: Vec<DccpOption>) -> Options {
    let mut options = Options::default();
    for option in list {
        options.push(option).unwrap();
    }
    options
}

fn packet<'a>(
    from_client: bool,
    seq: u64,
    kind: PacketKind,
    opts: Options,
    payload: &'a [u8],
) -> DccpRepr<'a> {
    let (src_port, dst_port) = if from_client {
        (CLIENT_PORT, SERVER_PORT)
    } else {
        (SERVER_PORT, CLIENT_PORT)
    };
    DccpRepr {
        src_port,
        dst_port,
        ccval: (seq % 16) as u8,
        checksum_coverage: 0,
        short_seqno: false,
        seq: SeqNum::new(seq),
        kind,
        options: opts,
        payload,
    }
}

/// A hand-scripted session: handshake with CCID negotiation, RTP/H.264 data
/// (single NAL unit and FU-A), CCID 3 feedback, Sync/SyncAck, close.
fn scripted_session() -> Capture {
    let mut cap = Capture::new();
    let service = fairstream_proto::conn::SERVICE_CODE_RTP; // "RTPV", RFC 5762
    let (c0, s0) = (0x0000_0000_1000_u64, 0x0000_7fff_0000_u64);
    let sn = |n| SeqNum::new(n);
    cap.push(
        true,
        &packet(
            true,
            c0,
            PacketKind::Request {
                service_code: service,
            },
            options(vec![
                DccpOption::ChangeR(Feature::Ccid(vec![3, 2])),
                DccpOption::ChangeL(Feature::Ccid(vec![3, 2])),
            ]),
            &[],
        ),
    );
    cap.push(
        false,
        &packet(
            false,
            s0,
            PacketKind::Response {
                ack: sn(c0),
                service_code: service,
            },
            options(vec![
                DccpOption::ConfirmL(Feature::Ccid(vec![3, 3, 2])),
                DccpOption::ConfirmR(Feature::Ccid(vec![3, 3, 2])),
            ]),
            &[],
        ),
    );
    cap.push(
        true,
        &packet(
            true,
            c0 + 1,
            PacketKind::Ack { ack: sn(s0) },
            Options::default(),
            &[],
        ),
    );
    // Data from the server: RTP with H.264, one single NAL unit and one FU-A NAL.
    // An access unit delimiter (type 9, primary_pic_type 7, stop bit) as
    // the single NAL unit, and an IDR slice large enough for FU-A.
    let small_nal = [0x09u8, 0xf0];
    let big_nal: Vec<u8> = std::iter::once(0x65u8)
        .chain((0..2500u32).map(|i| (i % 251) as u8))
        .collect();
    let mut payloads: Vec<Vec<u8>> = vec![small_nal.to_vec()];
    for fragment in Packetizer::new(&big_nal, 1000).unwrap() {
        payloads.push(fragment.to_vec());
    }
    let mut seq = s0 + 1;
    let count = payloads.len();
    for (i, payload) in payloads.iter().enumerate() {
        let rtp = RtpRepr {
            marker: i + 1 == count,
            payload_type: 96,
            sequence_number: 1000 + i as u16,
            timestamp: 90_000,
            ssrc: 0x1234_5678,
            csrcs: CsrcList::from_slice(&[]).unwrap(),
            extension: None,
            payload,
            padding_len: 0,
        };
        let mut rtp_bytes = vec![0u8; rtp.buffer_len()];
        rtp.emit(&mut rtp_bytes).unwrap();
        let kind = if i == 0 {
            PacketKind::DataAck { ack: sn(c0 + 1) }
        } else {
            PacketKind::Data
        };
        cap.push(
            false,
            &packet(false, seq, kind, Options::default(), &rtp_bytes),
        );
        seq += 1;
    }
    // CCID 3 feedback from the client.
    let feedback = options(vec![
        DccpOption::ElapsedTime(ElapsedTime(150)),
        DccpOption::LossEventRate(LossEventRate::from_p(0.01).unwrap()),
        DccpOption::ReceiveRate(164_005),
        DccpOption::LossIntervals(LossIntervals {
            skip_length: 0,
            intervals: vec![LossInterval {
                lossless_length: 97,
                ecn_nonce_echo: false,
                loss_length: 1,
                data_length: 98,
            }],
        }),
    ]);
    cap.push(
        true,
        &packet(
            true,
            c0 + 2,
            PacketKind::Ack { ack: sn(seq - 1) },
            feedback,
            &[],
        ),
    );
    cap.push(
        false,
        &packet(
            false,
            seq,
            PacketKind::Sync { ack: sn(c0 + 2) },
            Options::default(),
            &[],
        ),
    );
    cap.push(
        true,
        &packet(
            true,
            c0 + 3,
            PacketKind::SyncAck { ack: sn(seq) },
            Options::default(),
            &[],
        ),
    );
    cap.push(
        false,
        &packet(
            false,
            seq + 1,
            PacketKind::CloseReq { ack: sn(c0 + 3) },
            Options::default(),
            &[],
        ),
    );
    cap.push(
        true,
        &packet(
            true,
            c0 + 4,
            PacketKind::Close { ack: sn(seq + 1) },
            Options::default(),
            &[],
        ),
    );
    cap.push(
        false,
        &packet(
            false,
            seq + 2,
            PacketKind::Reset {
                ack: sn(c0 + 4),
                code: ResetCode::Closed,
                data: [0; 3],
            },
            Options::default(),
            &[],
        ),
    );
    cap
}

/// Wireshark 4.0 cannot "decode as" RTP by DCCP port from the command line
/// (RTP is not registered in the `dccp.port` table), so a two-line Lua
/// plugin does the same: it hands non-empty DCCP payloads on our port to the
/// RTP dissector.
fn rtp_over_dccp_plugin(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("rtp_over_dccp.lua");
    let text = format!(
        "local rtp = Dissector.get(\"rtp\")\n\
         local proto = Proto(\"fsrtpdccp\", \"RTP over DCCP (RFC 5762)\")\n\
         function proto.dissector(tvb, pinfo, tree)\n\
           if tvb:len() > 0 then return rtp:call(tvb, pinfo, tree) end\n\
           return 0\n\
         end\n\
         DissectorTable.get(\"dccp.port\"):add({SERVER_PORT}, proto)\n"
    );
    fs::write(&script, text).unwrap();
    script
}

/// What a capture must show beyond clean dissection.
#[derive(Clone, Copy)]
struct Expect {
    /// Some packet carries the CCID 3/4 options 192, 193 and 194.
    ccid3_options: bool,
    /// Some packet carries an Ack Vector (38 or 39).
    ack_vectors: bool,
}

/// Runs tshark on `pcap` and checks every packet against `sent`.
fn judge(tshark: &Path, pcap: &Path, sent: &[Sent], expect: Expect) {
    let plugin = rtp_over_dccp_plugin(pcap.parent().unwrap());
    let output = Command::new(tshark)
        .args(["-r", pcap.to_str().unwrap()])
        .args(["-X", &format!("lua_script:{}", plugin.display())])
        .args([
            "-o",
            "dccp.relative_sequence_numbers:FALSE",
            "-o",
            "dccp.check_checksum:TRUE",
        ])
        .args(["-d", "rtp.pt==96,h264"])
        .args([
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=,",
        ])
        .args([
            "-e",
            "frame.number",
            "-e",
            "_ws.col.Protocol",
            "-e",
            "dccp.type",
            "-e",
            "dccp.seq_raw",
        ])
        .args([
            "-e",
            "dccp.ack_raw",
            "-e",
            "dccp.checksum.status",
            "-e",
            "_ws.expert.severity",
        ])
        .args([
            "-e",
            "_ws.malformed",
            "-e",
            "dccp.option_type",
            "-e",
            "rtp.seq",
            "-e",
            "h264.nal_unit_type",
        ])
        .output()
        .expect("run tshark");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "tshark failed: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        sent.len(),
        "one dissected frame per packet:\n{stdout}"
    );
    let mut saw_ccid3_options = false;
    let mut saw_ack_vector = false;
    let mut saw_h264 = 0;
    for (line, expected) in lines.iter().zip(sent) {
        let f: Vec<&str> = line.split('|').collect();
        assert_eq!(f.len(), 11, "{line}");
        let (
            number,
            protocol,
            dccp_type,
            seq,
            ack,
            checksum,
            severity,
            malformed,
            option_types,
            rtp_seq,
            nal_type,
        ) = (
            f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10],
        );
        assert!(!protocol.is_empty(), "frame {number}: no protocol: {line}");
        assert!(malformed.is_empty(), "frame {number} is malformed: {line}");
        // Expert severities: 0x200000 chat, 0x400000 note, 0x600000 warning,
        // 0x800000 error. The H.264 dissector warns "[Not decoded yet]" on
        // slice data, which it does not decode; errors are what must not occur.
        for s in severity.split(',').filter(|s| !s.is_empty()) {
            let s: u64 = s
                .parse()
                .unwrap_or_else(|_| panic!("severity `{s}` in {line}"));
            assert!(
                s < 0x80_0000,
                "frame {number} has expert info of severity error: {line}"
            );
        }
        // Checksum status: 0 bad, 1 good, 2 unverified.
        assert_eq!(checksum, "1", "frame {number}: checksum not good: {line}");
        let type_code = match expected.type_name {
            "Request" => "0",
            "Response" => "1",
            "Data" => "2",
            "Ack" => "3",
            "DataAck" => "4",
            "CloseReq" => "5",
            "Close" => "6",
            "Reset" => "7",
            "Sync" => "8",
            "SyncAck" => "9",
            other => panic!("unknown type {other}"),
        };
        assert_eq!(
            dccp_type, type_code,
            "frame {number}: type {}: {line}",
            expected.type_name
        );
        assert_eq!(
            seq.parse::<u64>().unwrap(),
            expected.seq,
            "frame {number}: seq: {line}"
        );
        match expected.ack {
            Some(a) => assert_eq!(
                ack.parse::<u64>().unwrap(),
                a,
                "frame {number}: ack: {line}"
            ),
            None => assert!(ack.is_empty(), "frame {number}: unexpected ack: {line}"),
        }
        let types: Vec<&str> = option_types.split(',').collect();
        if ["192", "193", "194"].iter().all(|t| types.contains(t)) {
            saw_ccid3_options = true;
        }
        if types.contains(&"38") || types.contains(&"39") {
            saw_ack_vector = true;
        }
        if matches!(expected.type_name, "Data" | "DataAck") {
            assert!(
                !rtp_seq.is_empty(),
                "frame {number}: no RTP inside Data: {line}"
            );
            if !nal_type.is_empty() {
                saw_h264 += 1;
            }
        }
    }
    if expect.ccid3_options {
        assert!(
            saw_ccid3_options,
            "no packet showed the CCID 3 options 192, 193 and 194:\n{stdout}"
        );
    }
    if expect.ack_vectors {
        assert!(saw_ack_vector, "no packet showed an Ack Vector:\n{stdout}");
    }
    assert!(saw_h264 > 0, "no Data packet dissected as H.264:\n{stdout}");
}

#[test]
fn scripted_session_dissects_cleanly() {
    let Some(tshark) = fairstream_testkit::tool("tshark") else {
        return;
    };
    let capture = scripted_session();
    let dir = std::env::temp_dir().join(format!("fairstream-wireshark-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("scripted.pcap");
    fs::write(&pcap, capture.writer.into_inner().unwrap()).unwrap();
    judge(
        &tshark,
        &pcap,
        &capture.sent,
        Expect {
            ccid3_options: true,
            ack_vectors: false,
        },
    );
}

/// The Wireshark name's type code of a packet we emitted.
fn type_name(kind: &PacketKind) -> &'static str {
    match kind {
        PacketKind::Request { .. } => "Request",
        PacketKind::Response { .. } => "Response",
        PacketKind::Data => "Data",
        PacketKind::Ack { .. } => "Ack",
        PacketKind::DataAck { .. } => "DataAck",
        PacketKind::CloseReq { .. } => "CloseReq",
        PacketKind::Close { .. } => "Close",
        PacketKind::Reset { .. } => "Reset",
        PacketKind::Sync { .. } => "Sync",
        PacketKind::SyncAck { .. } => "SyncAck",
    }
}

/// RTP packets carrying H.264: an access unit delimiter and an IDR slice in
/// FU-A fragments that fit `max_payload`, repeated `frames` times.
fn rtp_h264_stream(frames: u16, max_payload: usize) -> Vec<Vec<u8>> {
    let mut packets = Vec::new();
    let mut sequence_number: u16 = 0;
    for frame in 0..frames {
        let idr: Vec<u8> = std::iter::once(0x65u8)
            .chain((0..3000u32).map(|i| ((i + u32::from(frame)) % 251) as u8))
            .collect();
        let mut payloads = vec![vec![0x09u8, 0xf0]];
        for fragment in Packetizer::new(&idr, max_payload - 12).unwrap() {
            payloads.push(fragment.to_vec());
        }
        let count = payloads.len();
        for (i, payload) in payloads.iter().enumerate() {
            let rtp = RtpRepr {
                marker: i + 1 == count,
                payload_type: 96,
                sequence_number,
                timestamp: u32::from(frame) * 3000,
                ssrc: 0x1234_5678,
                csrcs: CsrcList::from_slice(&[]).unwrap(),
                extension: None,
                payload,
                padding_len: 0,
            };
            let mut bytes = vec![0u8; rtp.buffer_len()];
            rtp.emit(&mut bytes).unwrap();
            packets.push(bytes);
            sequence_number = sequence_number.wrapping_add(1);
        }
    }
    packets
}

/// A real in-memory session through the connection code: handshake with CCID
/// negotiation (and, when the client is configured without ECN, Change
/// L(ECN Incapable, 1) and its Confirm, RFC 4340 §12.1), RTP/H.264 over a
/// link with 3 % loss (so CCID 3 feedback carries loss intervals), and an
/// orderly close, captured and judged.
fn in_memory_session(ccid: Ccid, client_ecn: bool) -> (Vec<u8>, Vec<Sent>) {
    let native = ChecksumMode::NativeV4 {
        local: CLIENT,
        remote: SERVER,
    };
    let config = |checksum, ecn| EndpointConfig {
        connection: ConnectionConfig {
            ccid,
            checksum,
            ecn,
            msl: Duration::from_millis(500),
            ..ConnectionConfig::default()
        },
        ..EndpointConfig::default()
    };
    let link = LinkConfig {
        delay: Duration::from_millis(20),
        loss: 0.03,
        seed: 7,
        ..LinkConfig::default()
    };
    let mut pair = Pair::new(
        config(native, client_ecn),
        config(native.reversed(), true),
        link,
    );
    pair.record(true);
    let id = pair.connect(CLIENT_PORT, SERVER_PORT).unwrap();
    pair.run_until(Instant::from_millis(300));
    let negotiated = pair.client.connection(id).and_then(|c| c.ccids());
    assert_eq!(negotiated, Some((ccid, ccid)), "negotiated CCIDs");
    let server_id = ConnectionId {
        local_port: SERVER_PORT,
        remote_port: CLIENT_PORT,
    };
    let max_payload = ConnectionConfig::default().max_payload();
    let stream = rtp_h264_stream(40, max_payload);
    let mut next = 0;
    pair.run_with(Instant::from_millis(20_000), |p| {
        let now = p.now();
        if let Some(conn) = p.client.connection_mut(id) {
            while next < stream.len()
                && conn.state() == State::Open
                && conn.send(now, &stream[next]).is_ok()
            {
                next += 1;
            }
        }
        if let Some(conn) = p.server.connection_mut(server_id) {
            while conn.recv().is_some() {}
        }
    });
    assert_eq!(
        next,
        stream.len(),
        "the whole stream was handed to the connection"
    );
    let now = pair.now();
    pair.client.connection_mut(id).unwrap().close(now);
    pair.run_until(now + Duration::from_secs(3));
    let mut pcap = PcapWriter::new(Vec::new()).unwrap();
    let mut sent = Vec::new();
    for c in pair.captured() {
        let (src, dst) = match c.direction {
            Direction::ClientToServer => (CLIENT, SERVER),
            Direction::ServerToClient => (SERVER, CLIENT),
        };
        let context = ChecksumContext::PseudoHeader(PseudoHeader::native_v4(src, dst));
        let repr = DccpRepr::parse_bytes(&c.bytes, &context).unwrap();
        sent.push(Sent {
            type_name: type_name(&repr.kind),
            seq: repr.seq.value(),
            ack: repr.kind.ack().map(SeqNum::value),
        });
        pcap.write_ipv4(c.at, src, dst, IPPROTO_DCCP, &c.bytes)
            .unwrap();
    }
    (pcap.into_inner().unwrap(), sent)
}

#[test]
fn in_memory_sessions_dissect_cleanly() {
    let Some(tshark) = fairstream_testkit::tool("tshark") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("fairstream-wireshark-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    for (ccid, name, client_ecn) in [
        (Ccid::Tfrc, "ccid3", true),
        (Ccid::Ccid2, "ccid2", true),
        (Ccid::TfrcSp, "ccid4", true),
        (Ccid::Tfrc, "ccid3-ecn-incapable", false),
    ] {
        let (bytes, sent) = in_memory_session(ccid, client_ecn);
        assert!(sent.len() > 100, "{name}: only {} packets", sent.len());
        eprintln!("{name}: {} packets judged by tshark", sent.len());
        let pcap = dir.join(format!("session-{name}.pcap"));
        fs::write(&pcap, bytes).unwrap();
        let expect = Expect {
            ccid3_options: ccid != Ccid::Ccid2,
            ack_vectors: ccid == Ccid::Ccid2,
        };
        judge(&tshark, &pcap, &sent, expect);
    }
}
