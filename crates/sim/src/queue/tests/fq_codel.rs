//! FQ-CoDel (RFC 8290): DRR shares, new-flow priority, overflow from the
//! fattest queue.

use fairstream_proto::ecn::Ecn;

use super::*;

fn fq(config: FqCoDelConfig) -> Queue<EcnPkt> {
    Queue::new(QueueConfig::FqCoDel(config), t(0)).unwrap()
}

#[test]
fn fq_codel_serves_backlogged_flows_byte_fair() {
    let mut queue = fq(FqCoDelConfig::default());
    let mut rng = SimRng::new(3);
    // Flow 1 sends 1500-byte packets, flow 2 500-byte ones; both keep a
    // backlog. DRR with a 1514-byte quantum shares bytes, not packets.
    for _ in 0..300 {
        queue
            .enqueue(t(0), EcnPkt::new(1500, Ecn::NotEct, 1), &mut rng)
            .unwrap();
        for _ in 0..3 {
            queue
                .enqueue(t(0), EcnPkt::new(500, Ecn::NotEct, 2), &mut rng)
                .unwrap();
        }
    }
    let mut bytes = [0u64; 3];
    // 400 dequeues within 1 ms: no sojourn reaches target, CoDel is idle.
    for _ in 0..400 {
        let packet = queue.dequeue(t(1)).unwrap();
        bytes[packet.flow as usize] += u64::from(packet.size);
    }
    let share = bytes[1] as f64 / (bytes[1] + bytes[2]) as f64;
    assert!((share - 0.5).abs() < 0.01, "{bytes:?}");
    assert_eq!(queue.stats().dropped(), 0);
}

#[test]
fn fq_codel_sends_a_new_sparse_flow_first() {
    let mut queue = fq(FqCoDelConfig::default());
    let mut rng = SimRng::new(3);
    for _ in 0..50 {
        queue
            .enqueue(t(0), EcnPkt::new(1500, Ecn::NotEct, 1), &mut rng)
            .unwrap();
    }
    // Flow 1 has spent its first quantum (it moves to the old list at its
    // next turn).
    assert_eq!(queue.dequeue(t(1)).map(|p| p.flow), Some(1));
    assert_eq!(queue.dequeue(t(1)).map(|p| p.flow), Some(1));
    queue
        .enqueue(t(1), EcnPkt::new(100, Ecn::NotEct, 7), &mut rng)
        .unwrap();
    // RFC 8290 §4.2: the new list is served first.
    assert_eq!(queue.dequeue(t(1)).map(|p| p.flow), Some(7));
}

#[test]
fn fq_codel_overflow_drops_from_the_fattest_queue() {
    let mut queue = fq(FqCoDelConfig {
        limit_packets: 10,
        ..FqCoDelConfig::default()
    });
    let mut rng = SimRng::new(3);
    for _ in 0..9 {
        queue
            .enqueue(t(0), EcnPkt::new(1500, Ecn::Ect0, 1), &mut rng)
            .unwrap();
    }
    queue
        .enqueue(t(0), EcnPkt::new(100, Ecn::NotEct, 2), &mut rng)
        .unwrap();
    assert!(queue.take_dropped().is_empty());
    // The 11th packet is the thin flow's: accepted, and the fat flow's head
    // is dropped to make room (an overflow drops even ECT packets).
    queue
        .enqueue(t(0), EcnPkt::new(100, Ecn::NotEct, 2), &mut rng)
        .unwrap();
    let dropped = queue.take_dropped();
    assert_eq!(dropped.len(), 1);
    assert_eq!(
        (dropped[0].packet.flow, dropped[0].reason),
        (1, DropReason::Full)
    );
    assert_eq!(queue.len_packets(), 10);
    assert_eq!(queue.len_bytes(), 8 * 1500 + 2 * 100);
    assert_eq!(queue.stats().dropped_full, 1);
}

#[test]
fn fq_codel_runs_codel_per_flow_queue() {
    // One flow keeps a standing queue; a sparse flow's packets never wait
    // and are never dropped, while the fat flow's are.
    let mut queue = fq(FqCoDelConfig {
        ecn: false,
        ..FqCoDelConfig::default()
    });
    let mut rng = SimRng::new(3);
    let mut sparse_seen = 0;
    for now in 0..3_000u64 {
        // The fat flow offers two packets a millisecond, the link takes one.
        for _ in 0..2 {
            queue
                .enqueue(t(now), EcnPkt::new(1000, Ecn::NotEct, 1), &mut rng)
                .unwrap();
        }
        if now % 50 == 0 {
            queue
                .enqueue(t(now), EcnPkt::new(200, Ecn::NotEct, 2), &mut rng)
                .unwrap();
        }
        if let Some(packet) = queue.dequeue(t(now)) {
            sparse_seen += u64::from(packet.flow == 2);
        }
        for drop in queue.take_dropped() {
            assert_eq!(drop.packet.flow, 1, "the sparse flow lost a packet");
        }
    }
    assert_eq!(sparse_seen, 60);
    assert!(queue.stats().dropped_codel > 10, "{:?}", queue.stats());
}
