//! CUBIC (RFC 9438) and HyStart++ (RFC 9406) in the sender.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use fairstream_proto::time::Instant;

use super::{config, Harness, MSS};
use crate::tcp::{
    Ack, CongestionControl, CongestionState, CubicConfig, HyStartPhase, Segment, SlowStart,
    TcpConfig, TcpReceiver, TcpSender,
};

fn cubic_config(initial_segments: u32, ssthresh_segments: Option<u64>) -> TcpConfig {
    TcpConfig {
        congestion_control: CongestionControl::Cubic(CubicConfig::default()),
        ..config(initial_segments, ssthresh_segments)
    }
}

#[test]
fn cubic_reduces_by_beta_and_regrows_to_w_max_in_about_k() {
    // 100 segments in congestion avoidance on a 100 ms path, one loss.
    for sack in [false, true] {
        let c = TcpConfig {
            sack,
            ..cubic_config(100, Some(100))
        };
        let mut first_send = HashSet::new();
        let mut h = Harness::new(c, Duration::from_millis(100), |s: &Segment| {
            first_send.insert(s.seq) && s.seq == 150 * MSS
        });
        h.keep_sent = false;
        let mut reduced_at = None;
        let mut back_at = None;
        while h.now < Instant::from_millis(12_000) && h.step() {
            if reduced_at.is_none() && h.sender.fast_retransmits() == 1 {
                reduced_at = Some(h.now);
                // RFC 9438 §4.6: ssthresh = flight_size·β_cubic.
                let ssthresh = h.sender.ssthresh() as f64 / MSS as f64;
                let w_max = h
                    .sender
                    .cubic()
                    .and_then(|c| c.w_max_segments())
                    .unwrap_or(0.0);
                assert!(
                    (ssthresh / w_max - 0.7).abs() < 0.03,
                    "{ssthresh} / {w_max}"
                );
            }
            if let (Some(_), None) = (reduced_at, back_at) {
                let w_max = h
                    .sender
                    .cubic()
                    .and_then(|c| c.w_max_segments())
                    .unwrap_or(0.0);
                if h.sender.state() != CongestionState::FastRecovery
                    && h.sender.cwnd() as f64 >= (w_max - 1.0) * MSS as f64
                {
                    back_at = Some(h.now);
                }
            }
        }
        let (Some(reduced), Some(back)) = (reduced_at, back_at) else {
            panic!("sack={sack}: no reduction or no regrowth");
        };
        let k = h.sender.cubic().and_then(|c| c.k()).unwrap_or(0.0);
        let took = back.saturating_duration_since(reduced).as_secs_f64();
        // RFC 9438 eq. 1: W_cubic(t) = W_max - 1 at t = K - ∛(1/C); the
        // epoch starts once recovery ends, an RTT or so after the
        // reduction.
        let predicted = k - (1.0 / 0.4f64).cbrt() + 0.1;
        println!("sack={sack}: K = {k:.2} s, within a segment of W_max after {took:.2} s, predicted {predicted:.2} s");
        assert!(k > 3.0, "K = {k}");
        assert!(
            (took - predicted).abs() < 0.3,
            "sack={sack}: back at W_max - 1 after {took:.2} s, predicted {predicted:.2} s"
        );
        assert_eq!(h.sender.timeouts(), 0);
    }
}

/// A sender and a receiver behind one bottleneck of `rate_bps` with a
/// drop-tail queue of `buffer_bytes` (the delay rises as it fills),
/// `one_way` each way.
struct Bottleneck {
    sender: TcpSender,
    receiver: TcpReceiver,
    now: Instant,
    one_way: Duration,
    rate_bps: f64,
    buffer_bytes: f64,
    link_free: Instant,
    drops: u64,
    data: VecDeque<(Instant, Segment)>,
    acks: VecDeque<(Instant, Ack)>,
}

impl Bottleneck {
    fn new(config: TcpConfig, rate_bps: f64, buffer_bytes: f64, one_way: Duration) -> Bottleneck {
        Bottleneck {
            sender: TcpSender::new(config.clone(), Instant::ZERO).unwrap(),
            receiver: TcpReceiver::new(config).unwrap(),
            now: Instant::ZERO,
            one_way,
            rate_bps,
            buffer_bytes,
            link_free: Instant::ZERO,
            drops: 0,
            data: VecDeque::new(),
            acks: VecDeque::new(),
        }
    }

    fn step(&mut self) -> bool {
        while let Some(segment) = self.sender.poll_transmit(self.now) {
            let start = self.link_free.max(self.now);
            let queued =
                start.saturating_duration_since(self.now).as_secs_f64() * self.rate_bps / 8.0;
            if queued + segment.wire_size() as f64 > self.buffer_bytes {
                self.drops += 1;
                continue;
            }
            let serialise =
                Duration::from_secs_f64(segment.wire_size() as f64 * 8.0 / self.rate_bps);
            self.link_free = start + serialise;
            self.data
                .push_back((self.link_free + self.one_way, segment));
        }
        let next = [
            self.data.front().map(|(t, _)| *t),
            self.acks.front().map(|(t, _)| *t),
            self.sender.next_timeout(),
        ];
        let Some(next) = next.iter().flatten().min().copied() else {
            return false;
        };
        self.now = self.now.max(next);
        if self.data.front().is_some_and(|(t, _)| *t <= self.now) {
            let (_, segment) = self.data.pop_front().unwrap();
            if let Some(ack) = self.receiver.on_segment(self.now, &segment) {
                self.acks.push_back((self.now + self.one_way, ack));
            }
        } else if self.acks.front().is_some_and(|(t, _)| *t <= self.now) {
            let (_, ack) = self.acks.pop_front().unwrap();
            self.sender.on_ack(self.now, &ack);
        } else {
            self.sender.on_timeout(self.now);
        }
        true
    }
}

/// Over 10 Mbit/s, 100 ms base RTT and a drop-tail buffer of two BDPs,
/// with SACK: the drops of the initial slow start (up to the end of the
/// first recovery, or the first timeout), whether HyStart++ went through
/// CSS, timeouts and bytes delivered in 5 s.
fn initial_overshoot(slow_start: SlowStart) -> (u64, bool, u64, u64) {
    let rate = 10e6;
    let bdp_bytes = rate * 0.1 / 8.0;
    let c = TcpConfig {
        slow_start,
        sack: true,
        ..cubic_config(10, None)
    };
    let mut path = Bottleneck::new(c, rate, 2.0 * bdp_bytes, Duration::from_millis(50));
    let mut css_seen = false;
    let mut first_episode = None;
    let mut was_in_recovery = false;
    while path.now < Instant::from_millis(5_000) && path.step() {
        css_seen |= path.sender.hystart_phase() == Some(HyStartPhase::ConservativeSlowStart);
        let in_recovery = path.sender.state() == CongestionState::FastRecovery;
        if first_episode.is_none()
            && ((was_in_recovery && !in_recovery) || path.sender.timeouts() > 0)
        {
            first_episode = Some(path.drops);
        }
        was_in_recovery |= in_recovery;
    }
    (
        first_episode.unwrap_or(path.drops),
        css_seen,
        path.sender.timeouts(),
        path.receiver.bytes_delivered(),
    )
}

#[test]
fn hystart_overshoots_less_than_slow_start() {
    // Standard slow start doubles until the buffer overflows and loses
    // about a window's worth (~450 segments here); HyStart++ sees the
    // round's minimum RTT rise, grows by a quarter in CSS (RFC 9406 §4.2)
    // and overflows the buffer by far less (~90), which SACK recovery
    // repairs without a timeout.
    let (standard, _, _, standard_bytes) = initial_overshoot(SlowStart::Standard);
    let (hystart, css_seen, hystart_timeouts, hystart_bytes) =
        initial_overshoot(SlowStart::HyStartPlusPlus);
    println!(
        "drops of the initial slow start: standard {standard}, HyStart++ {hystart}; \
         delivered in 5 s: {standard_bytes} against {hystart_bytes} bytes"
    );
    assert!(css_seen);
    assert!(
        3 * hystart < standard,
        "HyStart++ {hystart} against {standard}"
    );
    assert_eq!(hystart_timeouts, 0);
    assert!(hystart_bytes > standard_bytes);
}
