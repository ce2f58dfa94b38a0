//! Packet protection end to end (issue 13, item 1): with a passphrase,
//! nothing of the video crosses the wire in clear, forged packets on the
//! path change nothing, and mismatched passphrases fail at both ends with
//! errors that say so. On the main branch before this change the first
//! test found 93 of 112 sampled 64-byte chunks of the source on the wire,
//! and one forged Reset closed the stream.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // a real-time test runs on the real clock

mod support;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fairstream_net::recv::{OutputSpec, RecvError, RecvReport};
use fairstream_net::relay::{Relay, RelayConfig};
use fairstream_net::send::{self, Mode, SendConfig, SendError, SendReport, SourceSpec};
use fairstream_proto::conn::ConnectionConfig;
use fairstream_proto::wire::dccp::{DccpRepr, PacketKind, PacketType, ResetCode};
use fairstream_proto::wire::options::Options;
use support::tap::{Forger, Tap, Tapped, Way};
use support::{access_units, bind_receiver, temp_path};

const PASSPHRASE: &str = "correct%20horse%20battery%20staple";

struct Run {
    sent: Result<SendReport, SendError>,
    received: Result<RecvReport, RecvError>,
    tapped: Tapped,
}

fn query(passphrase: Option<&str>) -> String {
    passphrase.map_or_else(String::new, |p| format!("?passphrase={p}"))
}

/// Streams `input` on demand through a tap (recording `budget` bytes,
/// forging with `forger`), with the given passphrases.
fn run(
    input: &Path,
    name: &str,
    sender: Option<&str>,
    receiver: Option<&str>,
    budget: usize,
    forger: Forger,
) -> Run {
    // A handshake that fails leaves the receiver waiting: 3 s is enough
    // to see what it did.
    let wait = if sender == receiver { 20 } else { 3 };
    let output = temp_path(name);
    let (to, receiving) = bind_receiver(
        &query(receiver),
        OutputSpec::File(output),
        Duration::from_secs(wait),
        None,
    );
    let receiving = thread::spawn(move || receiving.run(&AtomicBool::new(false)));
    let tap = Tap::start(to, budget, forger);
    let url = format!("dccp://{}{}", tap.local_addr(), query(sender))
        .parse()
        .unwrap();
    let mut config = SendConfig::new(SourceSpec::File(input.to_path_buf()), url);
    config.mode = Mode::OnDemand;
    config.duration = Some(Duration::from_secs(30));
    config.stats.interval = None;
    let sent = send::run(config, Arc::new(AtomicBool::new(false)));
    let received = receiving.join().unwrap();
    let tapped = tap.stop();
    Run {
        sent,
        received,
        tapped,
    }
}

fn no_forgery() -> Forger {
    Box::new(|_, _| Vec::new())
}

/// How many of 64-byte chunks taken every 4 KiB of `source` appear
/// anywhere in the datagrams the tap saw.
fn chunks_on_the_wire(source: &[u8], tapped: &Tapped) -> (usize, usize) {
    let chunks: HashSet<&[u8]> = source.chunks(4096).filter_map(|c| c.get(..64)).collect();
    let wire: Vec<u8> = tapped
        .datagrams
        .iter()
        .flat_map(|(_, d)| d.clone())
        .collect();
    let found: HashSet<&[u8]> = wire
        .windows(64)
        .filter_map(|w| chunks.get(w).copied())
        .collect();
    (found.len(), chunks.len())
}

fn clip() -> Option<std::path::PathBuf> {
    fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
}

#[test]
fn with_a_passphrase_nothing_of_the_video_is_on_the_wire_and_all_of_it_arrives() {
    let Some(input) = clip() else { return };
    let source = std::fs::read(&input).unwrap();
    let frames = access_units(&input) as u64;
    let budget = 4 * source.len();
    let plain = run(&input, "plain.264", None, None, budget, no_forgery());
    let (plain_found, sampled) = chunks_on_the_wire(&source, &plain.tapped);
    let protected = run(
        &input,
        "protected.264",
        Some(PASSPHRASE),
        Some(PASSPHRASE),
        budget,
        no_forgery(),
    );
    let (protected_found, _) = chunks_on_the_wire(&source, &protected.tapped);
    eprintln!(
        "64-byte chunks of the source on the wire: {plain_found} of {sampled} in clear, \
         {protected_found} of {sampled} with a passphrase"
    );
    // The measurement works: in clear, most of the video is readable.
    assert!(plain_found * 2 > sampled, "{plain_found} of {sampled}");
    assert_eq!(protected_found, 0);
    let sent = protected.sent.unwrap();
    let received = protected.received.unwrap();
    assert!(sent.encrypted && received.encrypted);
    assert!(sent.packets_sealed > sent.packets_sent);
    assert_eq!(received.frames_written, frames);
    assert_eq!(received.frames_damaged, 0);
    assert_eq!(received.auth_failures, 0);
    let plain_received = plain.received.unwrap();
    assert!(!plain_received.encrypted);
}

/// Forges, from each 20th data packet after the 50th, a copy with its
/// data changed and a Reset with the next sequence numbers (towards the
/// receiver); from each 5th Ack after the 5th, a Reset likewise (towards
/// the sender). Checksums are valid.
fn forger() -> Forger {
    let mut seen = [0u64; 2];
    let context = ConnectionConfig::default().checksum.send_context();
    let receive = ConnectionConfig::default().checksum.receive_context();
    Box::new(move |way, datagram| {
        let Ok(packet) = DccpRepr::parse_bytes(datagram, &receive) else {
            return Vec::new();
        };

        let data = matches!(
            packet.kind.packet_type(),
            PacketType::Data | PacketType::DataAck
        );
        if !data && way == Way::Forward {
            return Vec::new();
        }
        let (count, first, every) = match way {
            Way::Forward => (&mut seen[0], 50, 20),
            Way::Backward => (&mut seen[1], 5, 5),
        };
        *count += 1;
        if *count < first || *count % every != 0 {
            return Vec::new();
        }
        let mut forged = Vec::new();
        if way == Way::Forward && !packet.payload.is_empty() {
            let changed: Vec<u8> = packet.payload.iter().map(|b| b ^ 0x5a).collect();
            let copy = DccpRepr {
                seq: packet.seq + 1,
                payload: &changed,
                ..packet.clone()
            };
            forged.extend(copy.emit_to_vec(&context));
        }
        let reset = DccpRepr {
            src_port: packet.src_port,
            dst_port: packet.dst_port,
            ccval: 0,
            checksum_coverage: 0,
            short_seqno: false,
            seq: packet.seq + 1,
            kind: PacketKind::Reset {
                ack: packet.kind.ack().unwrap_or(packet.seq),
                code: ResetCode::Aborted,
                data: [0; 3],
            },
            options: Options::new(),
            payload: &[],
        };
        forged.extend(reset.emit_to_vec(&context));
        forged
    })
}

#[test]
fn forged_data_and_resets_on_the_path_change_nothing_with_a_passphrase() {
    let Some(input) = clip() else { return };
    let frames = access_units(&input) as u64;
    let protected = run(
        &input,
        "forged.264",
        Some(PASSPHRASE),
        Some(PASSPHRASE),
        0,
        forger(),
    );
    let sent = protected.sent.unwrap();
    let received = protected.received.unwrap();
    eprintln!(
        "{} forged datagrams injected; receiver: {} did not authenticate, {} frames written \
         ({} damaged); sender: {} did not authenticate",
        protected.tapped.injected,
        received.auth_failures,
        received.frames_written,
        received.frames_damaged,
        sent.auth_failures,
    );
    assert!(protected.tapped.injected > 20);
    assert!(received.auth_failures > 10);
    assert!(sent.auth_failures > 0);
    assert_eq!(received.stopped_by, "closed");
    assert_eq!(received.frames_written, frames);
    assert_eq!(received.frames_damaged, 0);
}

fn stream_report(result: &Result<RecvReport, RecvError>) -> &RecvReport {
    match result {
        Ok(report) => report,
        Err(error) => error.report().unwrap(),
    }
}

#[test]
fn mismatched_passphrases_fail_at_both_ends_and_say_so() {
    let Some(input) = clip() else { return };
    let cases: [(Option<&str>, Option<&str>); 3] = [
        (Some("another%20passphrase"), Some(PASSPHRASE)),
        (None, Some(PASSPHRASE)),
        (Some(PASSPHRASE), None),
    ];
    for (i, (sender, receiver)) in cases.into_iter().enumerate() {
        let outcome = run(
            &input,
            &format!("mismatch-{i}.264"),
            sender,
            receiver,
            0,
            no_forgery(),
        );
        let error = outcome.sent.unwrap_err();
        let received = stream_report(&outcome.received);
        eprintln!("{sender:?} → {receiver:?}: sender: {error}; receiver: {received:?}");
        assert_eq!(received.frames_written, 0);
        match (sender, receiver) {
            (Some(_), Some(_)) => {
                assert!(matches!(error, SendError::WrongPassphrase(_)), "{error}");
                assert!(error.to_string().contains("another passphrase"));
                assert!(received.refused_senders >= 1);
            }
            (None, Some(_)) => {
                assert!(matches!(error, SendError::ReceiverProtected(_)), "{error}");
                assert!(error.to_string().contains("requires a passphrase"));
                assert!(received.refused_senders >= 1);
            }
            _ => {
                assert!(matches!(error, SendError::ReceiverPlain(_)), "{error}");
                assert!(error.to_string().contains("has no passphrase"));
            }
        }
    }
}

#[test]
fn forged_packets_at_a_protected_relay_change_nothing() {
    let Some(input) = clip() else { return };
    let frames = access_units(&input) as u64;
    // The receiver, with its own passphrase for the relay's downstream side.
    let downstream_secret = "the%20second%20hop%20passphrase";
    let (to, receiving) = bind_receiver(
        &query(Some(downstream_secret)),
        OutputSpec::File(temp_path("relayed.264")),
        Duration::from_secs(30),
        None,
    );
    let receiving = thread::spawn(move || receiving.run(&AtomicBool::new(false)));
    let mut config = RelayConfig::new(
        format!("dccp://127.0.0.1:0{}", query(Some(PASSPHRASE)))
            .parse()
            .unwrap(),
        format!("dccp://{to}{}", query(Some(downstream_secret)))
            .parse()
            .unwrap(),
    );
    config.duration = Some(Duration::from_secs(30));
    config.stats.interval = None;
    let relay = Relay::bind(config).unwrap();
    let relay_addr = SocketAddr::from(([127, 0, 0, 1], relay.local_addr().port()));
    let relaying = thread::spawn(move || relay.run(&AtomicBool::new(false)));
    // The attacker sits between the sender and the relay.
    let tap = Tap::start(relay_addr, 0, forger());
    let url = format!("dccp://{}{}", tap.local_addr(), query(Some(PASSPHRASE)))
        .parse()
        .unwrap();
    let mut send_config = SendConfig::new(SourceSpec::File(input.clone()), url);
    send_config.mode = Mode::OnDemand;
    send_config.duration = Some(Duration::from_secs(30));
    send_config.stats.interval = None;
    let sent = send::run(send_config, Arc::new(AtomicBool::new(false))).unwrap();
    let relayed = relaying.join().unwrap().unwrap();
    let received = receiving.join().unwrap().unwrap();
    let tapped = tap.stop();
    eprintln!(
        "{} forged datagrams injected before the relay; relay upstream: {} did not \
         authenticate, {} frames in; receiver: {} frames written ({} damaged)",
        tapped.injected,
        relayed.upstream.auth_failures,
        relayed.upstream.frames_written,
        received.frames_written,
        received.frames_damaged,
    );
    assert!(tapped.injected > 20);
    assert!(sent.encrypted && relayed.upstream.encrypted && relayed.downstream.encrypted);
    assert!(received.encrypted);
    assert!(relayed.upstream.auth_failures > 10);
    assert_eq!(relayed.upstream.frames_written, frames);
    assert_eq!(received.frames_written, frames);
    assert_eq!(received.frames_damaged, 0);
}
