//! The cost of packet protection (`fairstream_proto::secure`): sealing and
//! opening 1200-byte DCCP-Data datagrams against a plain copy of the same
//! datagram in the same run, and the key derivations.
//!
//! Every datagram iteration copies a 1200-byte clear packet into the buffer
//! and writes the next sequence number into it (sealing refuses a number
//! twice); the "copy" baseline does only that, so the difference is the
//! cost of protection. Throughput is in bytes of clear datagram.
//!
//! ```text
//! cargo bench -p fairstream-proto --bench secure -- --quick
//! ```

#![allow(missing_docs)]

use std::hint::black_box;
use std::net::Ipv4Addr;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairstream_proto::secure::{ConnectionKeys, MasterKey, Passphrase, Role};
use fairstream_proto::wire::dccp::{ChecksumContext, DccpRepr, PacketKind, PseudoHeader, SeqNum};
use fairstream_proto::wire::options::Options;

const DATAGRAM_BYTES: usize = 1200;
/// A DCCP-Data header with X = 1 and no options.
const HEADER_BYTES: usize = 16;
const CLIENT_ISS: u64 = 0x0123_4567_89AB;
const SERVER_ISS: u64 = 0xFEDC_BA98_7654;

fn master() -> MasterKey {
    let passphrase =
        Passphrase::new("correct horse battery staple".to_owned()).expect("a valid passphrase");
    MasterKey::derive(&passphrase, b"fairstream salt!")
}

fn keys(master: &MasterKey, role: Role) -> ConnectionKeys {
    ConnectionKeys::new(master, role, 40000, 5004, CLIENT_ISS, SERVER_ISS)
}

/// A 1200-byte DCCP-Data packet from the client.
fn template(checksum: &ChecksumContext) -> Vec<u8> {
    let payload: Vec<u8> = (0..DATAGRAM_BYTES - HEADER_BYTES)
        .map(|i| (i * 7) as u8)
        .collect();
    let packet = DccpRepr {
        src_port: 40000,
        dst_port: 5004,
        ccval: 0,
        checksum_coverage: 0,
        short_seqno: false,
        seq: SeqNum::new(CLIENT_ISS),
        kind: PacketKind::Data,
        options: Options::new(),
        payload: &payload,
    }
    .emit_to_vec(checksum)
    .expect("the packet emits");
    assert_eq!(packet.len(), DATAGRAM_BYTES);
    packet
}

/// Copies `template` into `buf` with sequence number ISS + `n`.
fn fill(buf: &mut Vec<u8>, template: &[u8], n: u64) {
    buf.clear();
    buf.extend_from_slice(template);
    let seq = SeqNum::new(CLIENT_ISS).add(n).value().to_be_bytes();
    buf[10..16].copy_from_slice(&seq[2..]);
}

fn datagrams(c: &mut Criterion) {
    let master = master();
    let udp = ChecksumContext::UdpEncapsulated;
    let native = ChecksumContext::PseudoHeader(PseudoHeader::native_v4(
        Ipv4Addr::new(192, 0, 2, 1),
        Ipv4Addr::new(198, 51, 100, 2),
    ));
    let mut group = c.benchmark_group("datagram 1200 B");
    group.throughput(Throughput::Bytes(DATAGRAM_BYTES as u64));

    let clear = template(&udp);
    let mut buf = Vec::with_capacity(2048);
    let mut n = 0;
    group.bench_function("copy (baseline)", |b| {
        b.iter(|| {
            n += 1;
            fill(&mut buf, black_box(&clear), n);
            black_box(&buf);
        })
    });

    let (mut sealer, _) = keys(&master, Role::Client).into_parts();
    let mut n = 0;
    group.bench_function("seal", |b| {
        b.iter(|| {
            n += 1;
            fill(&mut buf, black_box(&clear), n);
            sealer.seal(&mut buf, &udp).expect("seals");
            black_box(&buf);
        })
    });

    for (name, checksum) in [
        ("seal + open", udp),
        ("seal + open, native checksum", native),
    ] {
        let clear = template(&checksum);
        let (mut sealer, _) = keys(&master, Role::Client).into_parts();
        let (_, mut opener) = keys(&master, Role::Server).into_parts();
        let mut n = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                fill(&mut buf, black_box(&clear), n);
                sealer.seal(&mut buf, &checksum).expect("seals");
                let opened = opener.open(&mut buf, &checksum).expect("opens");
                black_box(opened);
            })
        });
    }
    group.finish();
}

fn derivations(c: &mut Criterion) {
    let passphrase =
        Passphrase::new("correct horse battery staple".to_owned()).expect("a valid passphrase");
    let master = master();
    let mut group = c.benchmark_group("keys");
    group.sample_size(10);
    group.bench_function("MasterKey::derive (Argon2id, 64 MiB, t=3, p=4)", |b| {
        b.iter(|| {
            black_box(MasterKey::derive(
                &passphrase,
                black_box(b"fairstream salt!"),
            ))
        })
    });
    group.bench_function("ConnectionKeys::new", |b| {
        b.iter(|| black_box(keys(&master, Role::Client)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // Short by default; command-line options (--measurement-time, --quick) override.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = datagrams, derivations
}
criterion_main!(benches);
