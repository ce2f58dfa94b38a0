//! A two-host harness shared by the unit, property and throughput tests.

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_proto::time::Instant;

use crate::tcp::{Ack, Segment, TcpConfig, TcpReceiver, TcpSender};

/// Sender and receiver joined by a fixed-delay, unlimited-capacity path.
/// `drop` decides, per data segment, whether the forward path loses it;
/// ACKs are never lost.
pub(in crate::tcp::tests) struct Harness<F: FnMut(&Segment) -> bool> {
    pub(in crate::tcp::tests) sender: TcpSender,
    pub(in crate::tcp::tests) receiver: TcpReceiver,
    pub(in crate::tcp::tests) now: Instant,
    one_way: Duration,
    data: VecDeque<(Instant, Segment)>,
    acks: VecDeque<(Instant, Ack)>,
    drop: F,
    /// Sender RTO at each first (non-repeated) timeout, for Padhye's T0.
    pub(in crate::tcp::tests) first_timeout_rtos: Vec<Duration>,
    last_timeout_una: Option<u64>,
    pub(in crate::tcp::tests) sent: Vec<Segment>,
    pub(in crate::tcp::tests) keep_sent: bool,
}

impl<F: FnMut(&Segment) -> bool> Harness<F> {
    pub(in crate::tcp::tests) fn new(config: TcpConfig, rtt: Duration, drop: F) -> Self {
        Harness {
            sender: TcpSender::new(config.clone(), Instant::ZERO).unwrap(),
            receiver: TcpReceiver::new(config).unwrap(),
            now: Instant::ZERO,
            one_way: rtt / 2,
            data: VecDeque::new(),
            acks: VecDeque::new(),
            drop,
            first_timeout_rtos: Vec::new(),
            last_timeout_una: None,
            sent: Vec::new(),
            keep_sent: true,
        }
    }

    fn pump(&mut self) {
        while let Some(segment) = self.sender.poll_transmit(self.now) {
            if self.keep_sent {
                self.sent.push(segment);
            }
            if !(self.drop)(&segment) {
                self.data.push_back((self.now + self.one_way, segment));
            }
        }
    }

    /// Runs one event (or nothing when idle); returns false when idle.
    pub(in crate::tcp::tests) fn step(&mut self) -> bool {
        self.pump();
        let candidates = [
            self.data.front().map(|(t, _)| *t),
            self.acks.front().map(|(t, _)| *t),
            self.sender.next_timeout(),
            self.receiver.next_timeout(),
        ];
        let Some(next) = candidates.iter().flatten().min().copied() else {
            return false;
        };
        self.now = self.now.max(next);
        let now = self.now;
        if self.data.front().is_some_and(|(t, _)| *t <= now) {
            let (_, segment) = self.data.pop_front().unwrap();
            if let Some(ack) = self.receiver.on_segment(now, &segment) {
                self.acks.push_back((now + self.one_way, ack));
            }
        } else if self.acks.front().is_some_and(|(t, _)| *t <= now) {
            let (_, ack) = self.acks.pop_front().unwrap();
            self.sender.on_ack(now, &ack);
        } else if self.sender.next_timeout().is_some_and(|t| t <= now) {
            // A timeout of a segment not already resent by the timer starts
            // a new timeout sequence (the sender's own rule, RFC 5681 §3.1).
            let una = self.sender.bytes_acked();
            if self.last_timeout_una != Some(una) {
                self.first_timeout_rtos.push(self.sender.rto());
                self.last_timeout_una = Some(una);
            }
            self.sender.on_timeout(now);
        } else if let Some(ack) = self.receiver.on_timeout(now) {
            self.acks.push_back((now + self.one_way, ack));
        }
        self.pump();
        true
    }

    /// Runs until `now` passes `until` or nothing is left to do.
    pub(in crate::tcp::tests) fn run_until(&mut self, until: Instant) {
        while self.now < until && self.step() {}
    }
}
