//! A TFRC sender and receiver driven in virtual time over a tiny in-test
//! channel: fixed propagation delay, an optional rate limit with a drop-tail
//! queue, and Bernoulli loss from a seeded generator. No network code: this
//! checks that the controllers, together, do what RFC 5348 promises.
//!
//! - With random loss p and round-trip time R, the long-run sending rate is
//!   within 15 % of X(p_event, R), p_event being the long-run loss event
//!   rate (the test groups the losses the channel made into loss events, one
//!   per RTT, RFC 5348 §5.2) and R the sender's smoothed RTT.
//! - With no random loss the rate grows to the channel's capacity and stays
//!   there.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness: a failure is a test failure

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_proto::cc::equation::tfrc_rate;
use fairstream_proto::cc::tfrc::{TfrcConfig, TfrcSender};
use fairstream_proto::cc::tfrc_receiver::{DataPacket, TfrcReceiver, TfrcReceiverConfig};
use fairstream_proto::cc::{Feedback, RateController, SendPermission, TfrcFeedback};
use fairstream_proto::time::Instant;

/// xorshift64*: a small seeded generator, enough for Bernoulli loss.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Channel {
    /// One-way propagation delay.
    delay: Duration,
    /// Bottleneck rate in bytes/s (None: unlimited).
    rate: Option<f64>,
    /// Drop-tail queue limit in packets.
    queue_packets: usize,
    /// Bernoulli loss probability.
    loss: f64,
    /// When the bottleneck is free again.
    busy_until: Instant,
    /// Departure times of packets in the queue (for its occupancy).
    queued: VecDeque<Instant>,
}

impl Channel {
    /// Arrival time of a packet of `size` bytes sent at `now`, or None if lost.
    fn carry(&mut self, now: Instant, size: usize, rng: &mut Rng) -> Option<Instant> {
        if rng.next_f64() < self.loss {
            return None;
        }
        let Some(rate) = self.rate else {
            return Some(now + self.delay);
        };
        while self.queued.front().is_some_and(|&t| t <= now) {
            self.queued.pop_front();
        }
        if self.queued.len() >= self.queue_packets {
            return None;
        }
        let start = self.busy_until.max(now);
        let done = start + Duration::from_secs_f64(size as f64 / rate);
        self.busy_until = done;
        self.queued.push_back(done);
        Some(done + self.delay)
    }
}

struct Outcome {
    /// Mean sending rate after the warm-up, bytes/s.
    send_rate: f64,
    /// Mean receive rate after the warm-up, bytes/s.
    goodput: f64,
    /// The long-run loss event rate after the warm-up: loss events (losses
    /// more than one RTT apart, counted by the test from what the channel
    /// dropped) per packet sent.
    p_event: f64,
    /// The loss event rate the receiver reported last.
    p_reported: f64,
    /// The sender's smoothed RTT at the end.
    rtt: Duration,
}

fn run(forward: Channel, rtt: Duration, seconds: u64, seed: u64) -> Outcome {
    const SIZE: usize = 1460;
    let mut rng = Rng(seed.max(1));
    let mut forward = forward;
    let back_delay = rtt - forward.delay;
    let start = Instant::ZERO;
    let mut sender = TfrcSender::new(TfrcConfig::default(), start);
    let mut receiver = TfrcReceiver::new(TfrcReceiverConfig::default(), start);
    let mut to_receiver: VecDeque<(Instant, DataPacket)> = VecDeque::new();
    let mut to_sender: VecDeque<(Instant, TfrcFeedback)> = VecDeque::new();
    let end = start + Duration::from_secs(seconds);
    let warm_up = start + Duration::from_secs(seconds / 5);
    let (mut sent_bytes, mut received_bytes) = (0u64, 0u64);
    let mut seq = 0u64;
    // The test's own count of loss events, from the packets the channel lost.
    let (mut packets_measured, mut events_measured) = (0u64, 0u64);
    let mut event_start: Option<Instant> = None;
    let mut now = start;
    let mut next_send = Some(start);
    while now < end {
        while to_receiver.front().is_some_and(|(t, _)| *t <= now) {
            let (_, packet) = to_receiver.pop_front().unwrap();
            if now >= warm_up {
                received_bytes += packet.size_bytes as u64;
            }
            receiver.on_data_packet(now, &packet);
        }
        if let Some(fb) = receiver.poll_feedback(now) {
            to_sender.push_back((now + back_delay, fb));
        }
        while to_sender.front().is_some_and(|(t, _)| *t <= now) {
            let (_, fb) = to_sender.pop_front().unwrap();
            sender.on_feedback(now, &Feedback::Tfrc(fb)).unwrap();

            next_send = Some(now);
        }
        if sender.next_timeout().is_some_and(|t| t <= now) {
            sender.on_timeout(now);
            next_send = Some(now);
        }
        // Sender: send whenever allowed (a saturating source), then learn
        // when the next packet may go.
        while next_send.is_some_and(|t| t <= now) {
            match sender.permission(now, SIZE) {
                SendPermission::Now => {
                    sender.on_packet_sent(now, seq, SIZE);
                    if now >= warm_up {
                        sent_bytes += SIZE as u64;
                    }
                    let packet = DataPacket {
                        seq,
                        size_bytes: SIZE,
                        send_time: now,
                        rtt_estimate: sender.rtt(),
                        window_counter: None,
                    };
                    if now >= warm_up {
                        packets_measured += 1;
                    }
                    if let Some(at) = forward.carry(now, SIZE, &mut rng) {
                        // The channel is FIFO: arrival times never decrease.
                        to_receiver.push_back((at, packet));
                    } else if event_start.is_none_or(|start| now >= start + rtt) {
                        // RFC 5348 §5.2: a loss more than one RTT after the
                        // start of the current loss event starts a new one.
                        event_start = Some(now);
                        if now >= warm_up {
                            events_measured += 1;
                        }
                    }
                    seq += 1;
                }
                SendPermission::At(t) => next_send = Some(t),
                SendPermission::WindowFull => next_send = None,
            }
        }
        // Advance to the next event.
        let candidates = [
            next_send.filter(|&t| t > now),
            sender.next_timeout().filter(|&t| t > now),
            receiver.next_timeout().filter(|&t| t > now),
            to_receiver.front().map(|(t, _)| *t),
            to_sender.front().map(|(t, _)| *t),
        ];
        let next = candidates.into_iter().flatten().min().unwrap_or(end);
        now = next.max(now + Duration::from_nanos(1)).min(end);
    }
    let span = (end - warm_up).as_secs_f64();
    Outcome {
        send_rate: sent_bytes as f64 / span,
        goodput: received_bytes as f64 / span,
        p_event: events_measured as f64 / packets_measured.max(1) as f64,
        p_reported: receiver.loss_event_rate(),
        rtt: sender.rtt().expect("feedback arrived"),
    }
}

fn lossy(p: f64) -> Channel {
    Channel {
        delay: Duration::from_millis(50),
        rate: None,
        queue_packets: usize::MAX,
        loss: p,
        busy_until: Instant::ZERO,
        queued: VecDeque::new(),
    }
}

fn check_rate_matches_equation(p: f64, seconds: u64) {
    let rtt = Duration::from_millis(100);
    let out = run(lossy(p), rtt, seconds, 0x5eed ^ (p * 1e6) as u64);
    let expected = tfrc_rate(1460.0, out.rtt, out.p_event)
        .unwrap()
        .bytes_per_sec();
    let ratio = out.send_rate / expected;
    eprintln!(
        "p = {p}: p_event = {:.5} (receiver's last: {:.5}), R = {:?}, send rate {:.0} B/s, \
         X(p_event, R) = {:.0} B/s, ratio {:.3}, goodput {:.0} B/s",
        out.p_event, out.p_reported, out.rtt, out.send_rate, expected, ratio, out.goodput
    );
    assert!((0.85..=1.15).contains(&ratio), "p = {p}: ratio {ratio:.3}");
}

#[test]
fn long_run_rate_follows_the_equation_at_0_1_percent_loss() {
    check_rate_matches_equation(0.001, 400);
}

#[test]
fn long_run_rate_follows_the_equation_at_1_percent_loss() {
    check_rate_matches_equation(0.01, 200);
}

#[test]
fn long_run_rate_follows_the_equation_at_5_percent_loss() {
    check_rate_matches_equation(0.05, 200);
}

#[test]
fn without_loss_the_rate_grows_to_the_channel_capacity_and_stays() {
    let capacity = 250_000.0; // 2 Mbit/s
    let channel = Channel {
        delay: Duration::from_millis(50),
        rate: Some(capacity),
        queue_packets: 25,
        loss: 0.0,
        busy_until: Instant::ZERO,
        queued: VecDeque::new(),
    };
    let out = run(channel, Duration::from_millis(100), 120, 7);
    let utilisation = out.goodput / capacity;
    eprintln!(
        "no random loss: goodput {:.0} B/s = {:.3} of capacity, p reported {:.5}, R {:?}",
        out.goodput, utilisation, out.p_reported, out.rtt
    );
    assert!(utilisation > 0.9, "utilisation {utilisation:.3}");
    assert!(utilisation <= 1.0 + 1e-9);
}
