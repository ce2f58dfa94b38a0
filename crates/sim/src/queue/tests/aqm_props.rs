//! Property tests: random arrivals, departures and pauses against every
//! queue kind; the limit holds, every packet is accounted for exactly once,
//! and only ECN-capable packets are ever marked.

use fairstream_proto::ecn::Ecn;
use proptest::prelude::*;

use super::*;

#[derive(Clone, Debug)]
enum Op {
    Arrive { flow: u64, size: u32, ect: bool },
    Depart,
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..6, 40u32..1600, any::<bool>())
            .prop_map(|(flow, size, ect)| Op::Arrive { flow, size, ect }),
        3 => Just(Op::Depart),
        1 => (0u64..30).prop_map(Op::Wait),
    ]
}

fn configs() -> Vec<(QueueConfig, usize)> {
    let QueueConfig::Red {
        weight,
        idle_packet_time,
        ..
    } = QueueConfig::red(1.0, 2.0, 0.5, Limit::Packets(20))
    else {
        unreachable!()
    };
    vec![
        (
            QueueConfig::DropTail {
                limit: Limit::Packets(20),
            },
            20,
        ),
        (
            QueueConfig::Red {
                min_th: 1.0,
                max_th: 4.0,
                max_p: 0.5,
                weight: weight * 100.0,
                limit: Limit::Packets(20),
                gentle: true,
                idle_packet_time,
                ecn: true,
            },
            20,
        ),
        (
            QueueConfig::CoDel(CoDelConfig {
                limit: Limit::Packets(20),
                ecn: true,
                ..CoDelConfig::default()
            }),
            20,
        ),
        (
            QueueConfig::FqCoDel(FqCoDelConfig {
                flows: 4,
                quantum_bytes: 300,
                limit_packets: 20,
                ..FqCoDelConfig::default()
            }),
            20,
        ),
    ]
}

proptest! {
    #[test]
    fn queues_keep_their_limit_and_account_for_every_packet(
        ops in proptest::collection::vec(op(), 1..400),
        seed in any::<u64>(),
    ) {
        for (config, limit) in configs() {
            let mut queue = Queue::new(config, t(0)).unwrap();
            let mut rng = SimRng::new(seed);
            let mut now = t(0);
            let (mut offered, mut refused, mut departed, mut dropped_later) = (0u64, 0u64, 0u64, 0u64);
            for op in &ops {
                match *op {
                    Op::Arrive { flow, size, ect } => {
                        offered += 1;
                        let ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
                        if let Err(drop) = queue.enqueue(now, EcnPkt::new(size, ecn, flow), &mut rng) {
                            refused += 1;
                            prop_assert!(!drop.packet.ecn.is_ce() || drop.packet.sent_ect);
                        }
                        prop_assert!(queue.len_packets() <= limit, "{config:?}");
                    }
                    Op::Depart => {
                        if let Some(packet) = queue.dequeue(now) {
                            departed += 1;
                            // Only ECN-capable packets are ever marked.
                            prop_assert!(!packet.ecn.is_ce() || packet.sent_ect);
                        }
                    }
                    Op::Wait(ms) => now += Duration::from_millis(ms),
                }
                for drop in queue.take_dropped() {
                    dropped_later += 1;
                    prop_assert!(drop.reason != DropReason::Red);
                }
                let held = queue.len_packets() as u64;
                prop_assert_eq!(offered, refused + departed + dropped_later + held, "{:?}", config);
                let stats = queue.stats();
                prop_assert_eq!(stats.dropped(), refused + dropped_later);
                prop_assert_eq!(stats.enqueued, offered - refused);
                prop_assert_eq!(stats.dequeued, departed);
            }
        }
    }
}
