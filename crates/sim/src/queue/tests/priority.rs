//! Class-based priority queue tests: strict priority for voice, FIFO or
//! weighted round robin below it, per-class drop-tail limits.

use proptest::prelude::*;

use super::*;

/// A packet with a class and an id (its size is the id, for checking bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Classed(TrafficClass, u32);

impl SimPacket for Classed {
    fn size_bytes(&self) -> u32 {
        self.1
    }

    fn class(&self) -> TrafficClass {
        self.0
    }
}

fn queue(limit_packets: usize, scheduler: PriorityScheduler) -> Queue<Classed> {
    Queue::new(
        QueueConfig::Priority(PriorityConfig {
            limit_packets,
            scheduler,
        }),
        Instant::ZERO,
    )
    .unwrap()
}

fn drain(queue: &mut Queue<Classed>) -> Vec<Classed> {
    std::iter::from_fn(|| queue.dequeue(Instant::ZERO)).collect()
}

use TrafficClass::{Background, Default as Best, Video, Voice};

#[test]
fn voice_goes_first_and_the_rest_in_arrival_order() {
    let mut q = queue(10, PriorityScheduler::Fifo);
    let mut rng = SimRng::new(1);
    for packet in [
        Classed(Best, 1),
        Classed(Video, 2),
        Classed(Voice, 3),
        Classed(Background, 4),
        Classed(Voice, 5),
    ] {
        q.enqueue(Instant::ZERO, packet, &mut rng).unwrap();
    }
    assert_eq!((q.len_packets(), q.len_bytes()), (5, 15));
    let order: Vec<u32> = drain(&mut q).into_iter().map(|p| p.1).collect();
    assert_eq!(order, [3, 5, 1, 2, 4]);
    assert_eq!(q.len_bytes(), 0);
}

#[test]
fn weighted_round_robin_serves_weights_a_turn() {
    let mut q = queue(
        100,
        PriorityScheduler::WeightedRoundRobin { weights: [3, 2, 1] },
    );
    let mut rng = SimRng::new(1);
    for i in 0..6 {
        for class in [Video, Best, Background] {
            q.enqueue(Instant::ZERO, Classed(class, i + 1), &mut rng)
                .unwrap();
        }
    }
    let classes: Vec<TrafficClass> = drain(&mut q).into_iter().map(|p| p.0).collect();
    // Turns of 3 video, 2 default, 1 background until video runs out.
    assert_eq!(
        classes[..12],
        [
            Video, Video, Video, Best, Best, Background, Video, Video, Video, Best, Best,
            Background
        ]
    );
    // Then the empty class is skipped: 2 default, 1 background a turn.
    assert_eq!(
        classes[12..],
        [Best, Best, Background, Background, Background, Background]
    );
}

#[test]
fn each_class_has_its_own_limit() {
    let mut q = queue(2, PriorityScheduler::Fifo);
    let mut rng = SimRng::new(1);
    for _ in 0..2 {
        q.enqueue(Instant::ZERO, Classed(Best, 10), &mut rng)
            .unwrap();
    }
    let refused = q
        .enqueue(Instant::ZERO, Classed(Video, 10), &mut rng)
        .unwrap_err();
    assert_eq!(refused.reason, DropReason::Full);
    // The voice band is not full.
    q.enqueue(Instant::ZERO, Classed(Voice, 10), &mut rng)
        .unwrap();
    assert_eq!(q.stats().dropped_full, 1);
}

#[test]
fn zero_limits_and_weights_are_refused() {
    let config = |limit_packets, weights| {
        QueueConfig::Priority(PriorityConfig {
            limit_packets,
            scheduler: PriorityScheduler::WeightedRoundRobin { weights },
        })
    };
    assert!(Queue::<Classed>::new(config(0, [1, 1, 1]), Instant::ZERO).is_err());
    assert!(Queue::<Classed>::new(config(5, [1, 0, 1]), Instant::ZERO).is_err());
}

fn class() -> impl Strategy<Value = TrafficClass> {
    prop::sample::select(TrafficClass::ALL.to_vec())
}

proptest! {
    /// Whatever arrives and leaves: voice never waits behind another class,
    /// the queue is work-conserving, and every packet is refused, queued
    /// or dequeued exactly once.
    #[test]
    fn priority_queue_invariants(
        ops in prop::collection::vec((class(), any::<bool>()), 1..300),
        wrr in any::<bool>(),
        weights in [1u32..5, 1u32..5, 1u32..5],
    ) {
        let scheduler = if wrr {
            PriorityScheduler::WeightedRoundRobin { weights }
        } else {
            PriorityScheduler::Fifo
        };
        let mut q = queue(8, scheduler);
        let mut rng = SimRng::new(7);
        let (mut offered, mut refused, mut out) = (0u64, 0u64, 0u64);
        for (i, (class, arrive)) in ops.into_iter().enumerate() {
            if arrive {
                offered += 1;
                if q.enqueue(Instant::ZERO, Classed(class, i as u32 + 1), &mut rng).is_err() {
                    refused += 1;
                }
            } else {
                let voice_waiting = drain_voice_count(&q);
                let before = q.len_packets();
                match q.dequeue(Instant::ZERO) {
                    Some(packet) => {
                        out += 1;
                        prop_assert!(voice_waiting == 0 || packet.0 == Voice);
                    }
                    None => prop_assert_eq!(before, 0),
                }
            }
            prop_assert_eq!(offered, refused + out + q.len_packets() as u64);
        }
        let stats = q.stats();
        prop_assert_eq!(stats.dropped_full, refused);
        prop_assert_eq!(stats.dequeued, out);
    }
}

/// Voice packets queued, counted from a clone (the queue has no peek).
fn drain_voice_count(queue: &Queue<Classed>) -> usize {
    let mut copy = queue.clone();
    drain(&mut copy).iter().filter(|p| p.0 == Voice).count()
}
