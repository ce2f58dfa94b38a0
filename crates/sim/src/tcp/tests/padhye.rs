//! Long-run throughput against the Padhye et al. model (SIGCOMM '98, eq. 33):
//!
//! X = 1 / (R·√(2bp/3) + T0·min(1, 3·√(3bp/8))·p·(1 + 32p²))  packets/s,
//!
//! with R the measured mean RTT, T0 the measured mean (first) RTO, p the
//! per-packet loss rate the channel applies and b packets per ACK (1 without
//! delayed ACKs, 2 with them). Path: 100 ms fixed RTT, ample capacity,
//! independent (Bernoulli) loss of data segments from a seeded xorshift;
//! RFC defaults otherwise (RFC 3390 IW, min RTO 1 s, per-ACK cwnd growth).
//! X counts every segment sent, retransmissions included (the model's send
//! rate), over 2950 s after a 50 s warm-up.
//!
//! Measured (seed 0x9e3779b97f4a7c15), ratio = measured / model:
//!
//! | delayed ACK | p     | R ms  | T0 s | X pkt/s | model | ratio | loss indications/pkt | timeout share | ratio at indication rate |
//! |-------------|-------|-------|------|---------|-------|-------|--------|------|-------|
//! | no  (b=1)   | 0.5 % | 100.0 | 1.00 | 173.2 | 155.7 | 1.112 | 0.0045 | 0.01 | 1.043 |
//! | no  (b=1)   | 1 %   | 100.0 | 1.05 | 118.6 |  99.0 | 1.198 | 0.0086 | 0.01 | 1.079 |
//! | no  (b=1)   | 2 %   | 100.0 | 1.03 |  76.0 |  58.9 | 1.291 | 0.0167 | 0.05 | 1.114 |
//! | no  (b=1)   | 5 %   | 100.0 | 1.08 |  33.9 |  23.7 | 1.432 | 0.0373 | 0.22 | 1.041 |
//! | yes (b=2)   | 0.5 % | 100.1 | 1.00 | 115.8 | 110.0 | 1.053 | 0.0045 | 0.01 | 0.990 |
//! | yes (b=2)   | 1 %   | 100.3 | 1.02 |  74.1 |  70.2 | 1.055 | 0.0090 | 0.04 | 0.979 |
//! | yes (b=2)   | 2 %   | 100.8 | 1.03 |  42.7 |  41.5 | 1.030 | 0.0176 | 0.17 | 0.930 |
//! | yes (b=2)   | 5 %   | 103.7 | 1.08 |  17.2 |  16.5 | 1.043 | 0.0409 | 0.52 | 0.837 |
//!
//! T0 is the mean RTO at the first timeout of each timeout sequence (a
//! timeout of a segment not already resent by the timer); it exceeds 1 s
//! when a sequence starts while the timer is still backed off (Karn: no clean
//! sample since the last one).
//!
//! Without delayed ACKs at 2 % and 5 % the model, fed the per-packet loss
//! rate, underestimates by 29 % and 43 %. This is the model's assumption, not
//! the sender's: Padhye et al. assume that once a packet is lost the rest of
//! its round is lost too (drop-tail), so every loss is a separate loss
//! indication and a timeout follows with probability min(1, 3/w). Under
//! independent loss NewReno repairs several losses of one window in a single
//! recovery (0.0373 indications per packet at p = 0.05) and times out far
//! less often than 3/w predicts (22 % of indications, where the model's Q is
//! near 1 for w ≈ 3.4). Fed the measured loss-indication rate instead, the
//! model is within 25 % everywhere. The test asserts exactly that: within
//! 25 % of the model at p, except for those two points, which must lie
//! above it (the predicted direction) and within 25 % at the indication rate.

use std::time::Duration;

use fairstream_proto::time::Instant;

use super::{Harness, MSS};
use crate::tcp::{Segment, TcpConfig};

/// Marsaglia's xorshift64: a tiny deterministic loss source for this test.
struct XorShift(u64);

impl XorShift {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn padhye(p: f64, b: f64, rtt: f64, t0: f64) -> f64 {
    let timeout_term = t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    1.0 / (rtt * (2.0 * b * p / 3.0).sqrt() + timeout_term)
}

struct Outcome {
    measured: f64,
    model: f64,
    /// The model evaluated at the measured loss-indication rate.
    model_at_indications: f64,
    rtt: f64,
    t0: f64,
    loss: f64,
    /// Loss indications (fast retransmits + first timeouts) per packet sent.
    loss_events: f64,
    /// Fraction of loss indications that were timeouts.
    timeout_share: f64,
    /// Goodput over send rate.
    goodput_share: f64,
}

fn run(p: f64, delayed_ack: bool, seed: u64) -> Outcome {
    let config = TcpConfig {
        delayed_ack: delayed_ack.then_some(Duration::from_millis(200)),
        ..TcpConfig::default()
    };
    let mut rng = XorShift(seed);
    let mut dropped = 0u64;
    let mut h = Harness::new(config, Duration::from_millis(100), |_: &Segment| {
        let lost = rng.uniform() < p;
        dropped += u64::from(lost);
        lost
    });
    h.keep_sent = false;
    let warm_up = 50.0;
    let end = 3000.0;
    h.run_until(Instant::from_secs_f64(warm_up));
    let sent_before = h.sender.segments_sent();
    h.run_until(Instant::from_secs_f64(end));
    let measured = (h.sender.segments_sent() - sent_before) as f64 / (end - warm_up);
    let rtt = h
        .sender
        .rtt_estimator()
        .mean_sample()
        .unwrap()
        .as_secs_f64();
    let t0 = if h.first_timeout_rtos.is_empty() {
        h.sender.rto().as_secs_f64()
    } else {
        h.first_timeout_rtos
            .iter()
            .map(Duration::as_secs_f64)
            .sum::<f64>()
            / h.first_timeout_rtos.len() as f64
    };
    let total = h.sender.segments_sent();
    let first_timeouts = h.first_timeout_rtos.len() as f64;
    let indications = h.sender.fast_retransmits() as f64 + first_timeouts;
    let goodput_share = h.receiver.bytes_delivered() as f64 / (total * MSS) as f64;
    drop(h);
    let b = if delayed_ack { 2.0 } else { 1.0 };
    Outcome {
        measured,
        model: padhye(p, b, rtt, t0),
        model_at_indications: padhye(indications / total as f64, b, rtt, t0),
        rtt,
        t0,
        loss: dropped as f64 / total as f64,
        loss_events: indications / total as f64,
        timeout_share: first_timeouts / indications,
        goodput_share,
    }
}

#[test]
fn long_run_throughput_matches_padhye_model() {
    let mut failures = Vec::new();
    for delayed_ack in [false, true] {
        for p in [0.005, 0.01, 0.02, 0.05] {
            let o = run(p, delayed_ack, 0x9e37_79b9_7f4a_7c15);
            let ratio = o.measured / o.model;
            println!(
                "delayed_ack={delayed_ack:5} p={p:.3} measured loss={:.4} R={:.1} ms T0={:.2} s \
                 X={:.1} pkt/s ({:.0} kbit/s) model={:.1} pkt/s ratio={ratio:.3} \
                 | loss indications/pkt={:.4} timeout share={:.2} goodput/sent={:.3} \
                 ratio at indication rate={:.3}",
                o.loss,
                o.rtt * 1e3,
                o.t0,
                o.measured,
                o.measured * MSS as f64 * 8e-3,
                o.model,
                o.loss_events,
                o.timeout_share,
                o.goodput_share,
                o.measured / o.model_at_indications,
            );
            let at_indications = o.measured / o.model_at_indications;
            let within = |r: f64| (0.75..=1.25).contains(&r);
            // Documented exception (module doc): without delayed ACKs at
            // p >= 2 %, the model with the per-packet p underestimates
            // NewReno under independent loss; it must then be above the model
            // and within 25 % of it at the measured loss-indication rate.
            let exception = !delayed_ack && p >= 0.02;
            let ok = if exception {
                ratio > 1.0 && ratio < 1.5 && within(at_indications)
            } else {
                within(ratio)
            };
            if !ok {
                failures.push((delayed_ack, p, ratio, at_indications));
            }
        }
    }
    assert!(failures.is_empty(), "outside 25 %: {failures:?}");
}
