//! Hostile input at a running receiver: random datagrams and DCCP packets
//! with wrong sequence numbers or forged Requests, injected from the
//! sender's own address (a relay in the path) and flooded from another
//! address. The receiver must neither crash nor grow without bound, and the
//! stream must complete.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure
#![allow(clippy::disallowed_methods)] // the shared support code runs on the real clock

mod support;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fairstream_media::h264::parse_stream;
use fairstream_net::recv::{OutputSpec, Receiver, RecvConfig, RecvReport};
use fairstream_net::relay::{Relay, RelayConfig};
use fairstream_net::send::{self, Mode, SendConfig, SourceSpec};
use fairstream_proto::conn::{ConnectionConfig, Endpoint, EndpointConfig};
use fairstream_proto::time::Instant as ProtoInstant;
use support::{assert_nearly_every_frame, bind_receiver, generated_live, temp_path};

/// xorshift64*: the test's own deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Hostile datagrams made from a real one: random bytes, the same packet
/// with a random 48-bit sequence number, and a Request (the first packet
/// the sender sent) from a random DCCP port.
fn hostile(rng: &mut Rng, real: Option<&[u8]>, request: &[u8]) -> Vec<Vec<u8>> {
    let len = (rng.next() % 1500) as usize;
    let mut out = vec![rng.bytes(len)];
    if let Some(real) = real.filter(|r| r.len() >= 16) {
        let mut wrong = real.to_vec();
        wrong[10..16].copy_from_slice(&rng.bytes(6));
        out.push(wrong);
    }
    if request.len() >= 16 {
        let mut forged = request.to_vec();
        forged[0..2].copy_from_slice(&rng.bytes(2));
        forged[10..16].copy_from_slice(&rng.bytes(6));
        out.push(forged);
    }
    out
}

/// A relay between sender and receiver that injects hostile packets into
/// the receiver from the address the receiver takes for the sender.
fn relay(
    socket: UdpSocket,
    receiver: SocketAddr,
    stop: Arc<AtomicBool>,
    injected: Arc<AtomicU64>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut sender: Option<SocketAddr> = None;
        let mut request: Vec<u8> = Vec::new();
        let mut forwarded = 0u64;
        let mut buf = vec![0u8; 65_536];
        while !stop.load(Ordering::Relaxed) {
            let Ok((len, from)) = socket.recv_from(&mut buf) else {
                continue;
            };
            let datagram = buf[..len].to_vec();
            if from == receiver {
                if let Some(to) = sender {
                    let _ = socket.send_to(&datagram, to);
                }
                continue;
            }
            sender = Some(from);
            if request.is_empty() {
                request = datagram.clone();
            }
            let _ = socket.send_to(&datagram, receiver);
            forwarded += 1;
            // Packets of an established connection only: during the
            // handshake a Sync provoked by a forged packet makes the client
            // answer with Reset(Packet Error) (RFC 4340 §8.5 step 4),
            // which ends the handshake, as the RFC has it.
            let established = (forwarded > 8).then_some(datagram.as_slice());
            for bad in hostile(&mut rng, established, &request) {
                let _ = socket.send_to(&bad, receiver);
                injected.fetch_add(1, Ordering::Relaxed);
            }
        }
    })
}

#[test]
fn hostile_datagrams_neither_crash_the_receiver_nor_grow_it() {
    let Some(input) = fairstream_testkit::shared_file("data/video/test_cif_P_CABAC_slice.264")
    else {
        return;
    };
    let output =
        std::env::temp_dir().join(format!("fairstream-hostile-{}.264", std::process::id()));
    let mut config = RecvConfig::new(
        "dccp://127.0.0.1:0".parse().unwrap(),
        OutputSpec::File(output.clone()),
    );
    config.duration = Some(Duration::from_secs(60));
    config.stats.interval = None;
    let max_connections = config.max_connections;
    let receiver = Receiver::bind(config).unwrap();
    let receiver_addr = SocketAddr::from(([127, 0, 0, 1], receiver.local_addr().port()));
    let never = AtomicBool::new(false);
    let receiving = thread::spawn(move || receiver.run(&never).unwrap());

    let stop = Arc::new(AtomicBool::new(false));
    let injected = Arc::new(AtomicU64::new(0));
    let relay_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay_addr = relay_socket.local_addr().unwrap();
    let relaying = relay(
        relay_socket,
        receiver_addr,
        Arc::clone(&stop),
        Arc::clone(&injected),
    );
    // A flood of random datagrams from another address, meanwhile.
    let flooding = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            let mut rng = Rng(7);
            let mut sent = 0u64;
            while !stop.load(Ordering::Relaxed) && sent < 50_000 {
                let len = (rng.next() % 1400) as usize;
                let _ = socket.send_to(&rng.bytes(len), receiver_addr);
                sent += 1;
                if sent % 1000 == 0 {
                    thread::sleep(Duration::from_millis(1));
                }
            }
            sent
        })
    };

    let url = format!("dccp://{relay_addr}").parse().unwrap();
    let mut send_config = SendConfig::new(SourceSpec::File(input.clone()), url);
    send_config.mode = Mode::OnDemand;
    send_config.duration = Some(Duration::from_secs(60));
    send_config.stats.interval = None;
    let sent = send::run(send_config, Arc::new(AtomicBool::new(false))).unwrap();
    let received = receiving.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    relaying.join().unwrap();
    let flooded = flooding.join().unwrap();
    eprintln!(
        "injected {} hostile datagrams through the relay and flooded {flooded} from elsewhere",
        injected.load(Ordering::Relaxed)
    );
    eprintln!("{sent:?}\n{received:?}");

    assert!(injected.load(Ordering::Relaxed) > 1000);
    assert_eq!(received.stopped_by, "closed");
    assert!(received.foreign_datagrams > 0);
    assert!(received.malformed_datagrams > 0);
    // Bounded: the endpoint's connection table and the connections' own.
    assert!(received.connections_max <= max_connections, "{received:?}");
    assert!(received.tables_max < 64 * 1024, "{received:?}");
    // No connection was lost to the hostile packets.
    assert_eq!(sent.connections_lost, 0);
    // The stream completed. The flood costs packets (the socket's buffer
    // overflows); the receiver accounts for them and for the frames, except
    // for what the very end of the stream lost (no later packet shows it).
    let frames = parse_stream(&std::fs::read(&input).unwrap())
        .unwrap()
        .access_units
        .len() as u64;
    assert_eq!(sent.frames_sent, frames);
    let packets_seen = received.packets_received + received.packets_missing;
    assert!(
        packets_seen <= sent.packets_sent && packets_seen + 40 >= sent.packets_sent,
        "{received:?}"
    );
    let frames_seen = received.frames_written + received.frames_lost.unknown;
    assert!(
        frames_seen <= frames && frames_seen + 2 >= frames,
        "{received:?}"
    );
    assert!(received.frames_written >= frames / 2, "{received:?}");
}

/// A DCCP Request for `target`'s port from DCCP port `port`, padded to
/// `min_len` bytes, as anyone can make one.
fn forged_request(target: SocketAddr, port: u16, min_len: usize) -> Vec<u8> {
    let mut endpoint = Endpoint::new(EndpointConfig {
        connection: ConnectionConfig {
            request_min_len: min_len,
            ..ConnectionConfig::default()
        },
        listen: false,
        max_connections: 1,
        cookies: None,
    });
    endpoint
        .connect(
            ProtoInstant::ZERO,
            port,
            target.port(),
            u64::from(port) * 7919,
        )
        .unwrap();
    let mut buf = Vec::new();
    let (_, transmit) = endpoint
        .poll_transmit(ProtoInstant::ZERO, &mut buf)
        .unwrap();
    buf.truncate(transmit.len);
    buf
}

/// What the forger got back, and how many bytes it sent and received.
#[derive(Debug, Default)]
struct Forger {
    sent_bytes: usize,
    answers: usize,
    answered_bytes: usize,
    largest_answer: usize,
    largest_sent: usize,
}

/// Before the real sender starts, forged Requests reach `target` from
/// other ports: one small one (the issue's ~40-byte datagram), then 20
/// sockets × 10 Requests, half of them padded enough to be answered.
fn forge_requests(target: SocketAddr) -> Forger {
    let mut forger = Forger::default();
    let mut sockets = Vec::new();
    for s in 0..20u16 {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        for i in 0..10u16 {
            let min_len = if s == 0 && i == 0 {
                0
            } else if i % 2 == 0 {
                512
            } else {
                0
            };
            let request = forged_request(target, 2000 + s * 10 + i, min_len);
            forger.sent_bytes += request.len();
            forger.largest_sent = forger.largest_sent.max(request.len());
            socket.send_to(&request, target).unwrap();
        }
        sockets.push(socket);
    }
    let mut buf = vec![0u8; 65_536];
    for socket in &sockets {
        while let Ok(len) = socket.recv(&mut buf) {
            forger.answers += 1;
            forger.answered_bytes += len;
            forger.largest_answer = forger.largest_answer.max(len);
        }
    }
    forger
}

/// Generated video, live, for four seconds, to `target`.
fn real_sender(target: SocketAddr) -> send::SendReport {
    let config = generated_live(&format!("dccp://{target}"), 4);
    send::run(config, Arc::new(AtomicBool::new(false)))
        .unwrap_or_else(|e| panic!("the real sender failed: {e}"))
}

/// A receiver on a thread, writing `name`; its address.
fn quiet_receiver(
    name: &str,
) -> (
    SocketAddr,
    thread::JoinHandle<Result<RecvReport, fairstream_net::recv::RecvError>>,
) {
    let (to, receiver) = bind_receiver(
        "",
        OutputSpec::File(temp_path(name)),
        Duration::from_secs(30),
        None,
    );
    (
        to,
        thread::spawn(move || receiver.run(&AtomicBool::new(false))),
    )
}

fn check_forger(forger: &Forger) {
    eprintln!("forger: {forger:?}");
    // Answered, but never with more than came: each answer is no larger
    // than the largest Request, and in all no more bytes went back.
    assert!(forger.answers > 0, "{forger:?}");
    assert!(forger.largest_answer <= forger.largest_sent, "{forger:?}");
    assert!(forger.answered_bytes <= forger.sent_bytes, "{forger:?}");
}

#[test]
fn forged_requests_before_the_sender_cannot_take_the_receiver() {
    let (target, receiving) = quiet_receiver("forged-requests.264");
    let forger = forge_requests(target);
    let sent = real_sender(target);
    let received = receiving.join().unwrap().unwrap();
    check_forger(&forger);
    eprintln!(
        "sender: {} frames sent; receiver: {} written, {} busy refusals, {} foreign datagrams",
        sent.frames_sent,
        received.frames_written,
        received.busy_refusals,
        received.foreign_datagrams
    );
    assert_eq!(sent.stopped_by, "duration");
    assert!(sent.frames_sent >= 90, "{}", sent.frames_sent);
    assert_nearly_every_frame(received.frames_written, sent.frames_sent);
}

#[test]
fn forged_requests_before_the_sender_cannot_take_the_relay() {
    let (downstream_addr, receiving) = quiet_receiver("forged-relay.264");
    let mut relay_config = RelayConfig::new(
        "dccp://127.0.0.1:0".parse().unwrap(),
        format!("dccp://{downstream_addr}").parse().unwrap(),
    );
    relay_config.duration = Some(Duration::from_secs(30));
    relay_config.stats.interval = None;
    let relay = Relay::bind(relay_config).unwrap();
    let target = SocketAddr::from(([127, 0, 0, 1], relay.local_addr().port()));
    let relaying = thread::spawn(move || relay.run(&AtomicBool::new(false)));
    let forger = forge_requests(target);
    let sent = real_sender(target);
    let relayed = relaying.join().unwrap().unwrap();
    let received = receiving.join().unwrap().unwrap();
    check_forger(&forger);
    eprintln!(
        "sender: {} frames sent; relay: {} frames in; receiver: {} written",
        sent.frames_sent, relayed.upstream.frames_written, received.frames_written
    );
    assert!(sent.frames_sent >= 90, "{}", sent.frames_sent);
    assert_nearly_every_frame(received.frames_written, sent.frames_sent);
}
