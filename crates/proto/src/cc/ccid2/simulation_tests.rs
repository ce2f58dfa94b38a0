//! A small closed loop: the sender, a fixed-delay path with Bernoulli loss,
//! and an in-test receiver that returns honest Ack Vectors every Ack Ratio
//! packets. Checks the long-run AIMD behaviour against the square-root law.

use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap};

use super::*;
use crate::cc::AckRun;

/// xorshift64* (Vigna): tiny, deterministic, good enough for loss draws.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        XorShift(seed.max(1))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

enum Event {
    DataArrives(u64),
    AckArrives { feedback: AckFeedback, seq: u64 },
    DelayedAckTimer { generation: u64 },
}

struct Scheduled {
    at: Instant,
    order: u64,
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    /// Reversed: `BinaryHeap` pops the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.order).cmp(&(self.at, self.order))
    }
}

/// A CCID 2 receiver: acknowledges every Ack Ratio data packets (or after a
/// short delay) with an Ack Vector over its recent history.
struct Receiver {
    received: BTreeSet<u64>,
    ack_ratio: u16,
    unacknowledged: u16,
    next_seq: u64,
    timer_generation: u64,
}

impl Receiver {
    const HISTORY: u64 = 256;

    fn ack_vector(&self) -> Option<AckFeedback> {
        let &ack_number = self.received.last()?;
        let lowest = ack_number.saturating_sub(Self::HISTORY - 1);
        let mut runs: Vec<AckRun> = Vec::new();
        let mut push = |state, length| match runs.last_mut() {
            Some(run) if run.state == state => run.length += length,
            _ => runs.push(AckRun { state, length }),
        };
        // Walk the received numbers downwards; the gaps between them are holes.
        let mut expected = ack_number;
        for &seq in self.received.range(lowest..=ack_number).rev() {
            if seq < expected {
                push(AckState::NotReceived, expected - seq);
            }
            push(AckState::Received, 1);
            expected = seq.saturating_sub(1);
            if seq == 0 {
                break;
            }
        }
        // Numbers below the oldest one received in the history stay unreported.
        Some(AckFeedback { ack_number, runs })
    }
}

struct Path {
    one_way_delay: Duration,
    data_loss: f64,
    ack_loss: f64,
}

/// What the application offers: as much as allowed, or at most one packet per interval.
#[derive(Clone, Copy)]
enum Source {
    Greedy,
    Paced(Duration),
}

struct Outcome {
    mean_cwnd: f64,
    final_cwnd: u32,
    max_ack_ratio: u16,
    stats: Ccid2Stats,
}

fn simulate(
    config: &Ccid2Config,
    path: &Path,
    source: Source,
    seed: u64,
    run_for: Duration,
) -> Outcome {
    const SIZE: usize = 1000;
    const DELAYED_ACK: Duration = Duration::from_millis(10);
    let warm_up = run_for / 10;
    let end = Instant::ZERO + run_for;
    let mut rng = XorShift::new(seed);
    let mut sender = Ccid2Sender::new(config, Instant::ZERO);
    let mut receiver = Receiver {
        received: BTreeSet::new(),
        ack_ratio: DEFAULT_ACK_RATIO,
        unacknowledged: 0,
        next_seq: 1_000_000,
        timer_generation: 0,
    };
    let mut queue = BinaryHeap::new();
    let mut order = 0u64;
    let mut schedule = |queue: &mut BinaryHeap<Scheduled>, at, event| {
        order += 1;
        queue.push(Scheduled { at, order, event });
    };
    let mut now = Instant::ZERO;
    let mut next_data_seq = 0u64;
    let mut next_paced_send = Instant::ZERO;
    let mut cwnd_time_integral = 0.0;
    let mut max_ack_ratio = sender.ack_ratio();

    while now < end {
        // The application sends what the window (and its own rate) allows.
        loop {
            if let Source::Paced(_) = source {
                if now < next_paced_send {
                    if sender.permission(now, SIZE) == SendPermission::Now {
                        sender.on_application_limited(now);
                    }
                    break;
                }
            }
            if sender.permission(now, SIZE) != SendPermission::Now {
                break;
            }
            sender.on_packet_sent(now, next_data_seq, SIZE);
            if rng.next_f64() >= path.data_loss {
                schedule(
                    &mut queue,
                    now + path.one_way_delay,
                    Event::DataArrives(next_data_seq),
                );
            }
            next_data_seq += 1;
            if let Source::Paced(interval) = source {
                next_paced_send = now + interval;
            }
        }
        if let Some(r) = sender.take_ack_ratio_change() {
            receiver.ack_ratio = r; // Feature negotiation, idealised as instant.
        }
        max_ack_ratio = max_ack_ratio.max(sender.ack_ratio());

        // Advance to the next event, timeout or paced send.
        let mut next = queue.peek().map_or(end, |e| e.at);
        if let Some(t) = sender.next_timeout() {
            next = next.min(t);
        }
        if let Source::Paced(_) = source {
            // A send time already passed means the window is full: wait for events.
            if next_paced_send > now {
                next = next.min(next_paced_send);
            }
        }
        let next = next.min(end);
        if now >= Instant::ZERO + warm_up {
            cwnd_time_integral += f64::from(sender.cwnd()) * (next - now).as_secs_f64();
        }
        now = next;
        if sender.next_timeout().is_some_and(|t| t <= now) {
            sender.on_timeout(now);
        }
        while queue.peek().is_some_and(|e| e.at <= now) {
            let Some(Scheduled { event, .. }) = queue.pop() else {
                break;
            };
            match event {
                Event::DataArrives(seq) => {
                    receiver.received.insert(seq);
                    while receiver.received.len() > 4 * Receiver::HISTORY as usize {
                        receiver.received.pop_first();
                    }
                    receiver.unacknowledged += 1;
                    if receiver.unacknowledged == 1 {
                        receiver.timer_generation += 1;
                        let generation = receiver.timer_generation;
                        schedule(
                            &mut queue,
                            now + DELAYED_ACK,
                            Event::DelayedAckTimer { generation },
                        );
                    }
                    if receiver.unacknowledged >= receiver.ack_ratio {
                        send_ack(
                            &mut receiver,
                            &mut rng,
                            path,
                            now,
                            &mut queue,
                            &mut schedule,
                        );
                    }
                }
                Event::DelayedAckTimer { generation } => {
                    if generation == receiver.timer_generation && receiver.unacknowledged > 0 {
                        send_ack(
                            &mut receiver,
                            &mut rng,
                            path,
                            now,
                            &mut queue,
                            &mut schedule,
                        );
                    }
                }
                Event::AckArrives { feedback, seq } => {
                    let packet = ReceiverPacket {
                        seq,
                        carries_data: false,
                        ecn_marked: false,
                    };
                    sender.on_receiver_packet(now, packet);
                    sender
                        .on_feedback(now, &Feedback::Ack(feedback))
                        .expect("Ack feedback");
                }
            }
        }
    }
    let measured = run_for - warm_up;
    Outcome {
        mean_cwnd: cwnd_time_integral / measured.as_secs_f64(),
        final_cwnd: sender.cwnd(),
        max_ack_ratio,
        stats: sender.stats(),
    }
}

fn send_ack(
    receiver: &mut Receiver,
    rng: &mut XorShift,
    path: &Path,
    now: Instant,
    queue: &mut BinaryHeap<Scheduled>,
    schedule: &mut impl FnMut(&mut BinaryHeap<Scheduled>, Instant, Event),
) {
    receiver.unacknowledged = 0;
    let seq = receiver.next_seq;
    receiver.next_seq += 1;
    let Some(feedback) = receiver.ack_vector() else {
        return;
    };
    if rng.next_f64() >= path.ack_loss {
        schedule(
            queue,
            now + path.one_way_delay,
            Event::AckArrives { feedback, seq },
        );
    }
}

fn aimd_config() -> Ccid2Config {
    Ccid2Config {
        segment_size: 1000,
        // RFC 4341 §5 does not require the 1 s minimum; 200 ms keeps the
        // rare timeouts from dominating a 50 ms path.
        min_rto: Duration::from_millis(200),
        ..Ccid2Config::default()
    }
}

const RTT_50MS: Path = Path {
    one_way_delay: Duration::from_millis(25),
    data_loss: 0.0,
    ack_loss: 0.0,
};

#[test]
fn mean_window_follows_the_square_root_law_under_random_loss() {
    for (p, seed) in [(0.005, 1), (0.01, 2), (0.02, 3)] {
        let path = Path {
            data_loss: p,
            ..RTT_50MS
        };
        let outcome = simulate(
            &aimd_config(),
            &path,
            Source::Greedy,
            seed,
            Duration::from_secs(600),
        );
        // Deterministic AIMD sawtooth: mean cwnd = sqrt(3 / (2p)).
        let expected = (3.0 / (2.0 * p)).sqrt();
        let ratio = outcome.mean_cwnd / expected;
        println!(
            "p = {p}: mean cwnd {:.2}, sqrt(3/2p) = {expected:.2}, ratio {ratio:.3}, {:?}",
            outcome.mean_cwnd, outcome.stats
        );
        assert!((0.7..=1.3).contains(&ratio), "p = {p}: ratio {ratio:.3}");
        assert!(outcome.stats.congestion_events > 100, "{:?}", outcome.stats);
    }
}

#[test]
fn without_loss_the_window_grows_to_its_limit() {
    let config = Ccid2Config {
        max_window: 200,
        ..aimd_config()
    };
    let outcome = simulate(
        &config,
        &RTT_50MS,
        Source::Greedy,
        7,
        Duration::from_secs(20),
    );
    assert_eq!(outcome.final_cwnd, 200);
    assert_eq!(outcome.stats.congestion_events + outcome.stats.timeouts, 0);
    assert_eq!(outcome.stats.packets_lost, 0);
    // Most of the run is spent at the limit.
    assert!(outcome.mean_cwnd > 190.0, "mean cwnd {}", outcome.mean_cwnd);
}

#[test]
fn an_application_limited_sender_does_not_inflate_its_window() {
    // 1 packet per 5 ms = 10 packets per 50 ms round trip.
    let paced = Source::Paced(Duration::from_millis(5));
    let outcome = simulate(
        &aimd_config(),
        &RTT_50MS,
        paced,
        11,
        Duration::from_secs(20),
    );
    assert!(outcome.final_cwnd <= 20, "cwnd {}", outcome.final_cwnd);
    assert!(outcome.stats.packets_sent > 3900, "{:?}", outcome.stats);
}

#[test]
fn lost_acks_raise_the_ack_ratio_and_a_clean_path_keeps_it_at_two() {
    let config = Ccid2Config {
        max_window: 100,
        ..aimd_config()
    };
    let clean = simulate(
        &config,
        &RTT_50MS,
        Source::Greedy,
        5,
        Duration::from_secs(20),
    );
    assert_eq!(clean.max_ack_ratio, 2);
    let lossy_acks = Path {
        ack_loss: 0.05,
        ..RTT_50MS
    };
    let lossy = simulate(
        &config,
        &lossy_acks,
        Source::Greedy,
        5,
        Duration::from_secs(20),
    );
    assert!(
        lossy.max_ack_ratio >= 4,
        "max Ack Ratio {}",
        lossy.max_ack_ratio
    );
    assert!(lossy.stats.reverse_congestion_signals > 0);
    // Lost acks are not data losses: the Ack Vector's redundancy covers them.
    assert_eq!(lossy.stats.packets_lost, 0);
}
