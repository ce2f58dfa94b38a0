//! Issue 11's targets on a reduced set of the fairness matrix (the whole
//! matrix is `cargo run --release -p fairstream-sim --example fairness`,
//! written to `docs/results/fairness.md`): the default controller fills a
//! lossy hop it has to itself to 0.95 of B_w(1 − p_w) × the payload share,
//! and on a congested wire takes at most 1.25 mean NewReno shares while
//! the NewReno flows lose at most 10 % against one more NewReno flow in its
//! place. Each cell runs 120 s and is judged on its last 60 s.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

#[path = "../examples/fairness/cells.rs"]
mod cells;

use cells::{run_fair, run_full, Channel, FairCell, FullCell, QueueKind, Setup};

fn setup() -> Setup {
    Setup {
        seed: 1,
        controller: "adaptive".to_owned(),
        dump: None,
    }
}

fn full(channel: Channel, bw_mbit: f64, p: f64, rtt_ms: u64) {
    let cell = FullCell {
        bw_mbit,
        p,
        rtt_ms,
        channel,
        duration_s: 120,
    };
    let r = run_full(&cell, &setup()).unwrap();
    eprintln!(
        "full {} {bw_mbit} Mbit/s {p} {rtt_ms} ms: share {:.3}, 0.9 at {:?} s, congestion loss {:.4}, n {:?}",
        channel.name(),
        r.share,
        r.reach_s,
        r.congestion_loss,
        r.n_mean
    );
    assert!(
        r.share >= 0.95,
        "{channel:?} {bw_mbit} {p} {rtt_ms}: {}",
        r.share
    );
    assert!(r.reach_s.is_some_and(|t| t <= 30.0));
}

fn fair(queue: QueueKind, tcp: usize, rtt_ms: u64) -> cells::FairResult {
    let cell = FairCell {
        bottleneck_mbit: 10,
        queue,
        tcp,
        rtt_ms,
        duration_s: 120,
    };
    let r = run_fair(&cell, &setup(), None).unwrap();
    eprintln!(
        "fair {} {tcp} TCP {rtt_ms} ms: stream {:.2} Mbit/s, TCP {:.2} Mbit/s, ratio {:.3}, harm {:.3}, n {:?}",
        queue.name(),
        r.stream_mbit,
        r.tcp_mbit,
        r.ratio,
        r.harm,
        r.n_mean
    );
    assert!(r.ratio <= 1.25, "{}: ratio {}", queue.name(), r.ratio);
    assert!(r.harm <= 0.10, "{}: harm {}", queue.name(), r.harm);
    r
}

#[test]
fn full_on_a_bernoulli_hop() {
    full(Channel::Bernoulli, 5.0, 0.02, 20);
}

#[test]
fn full_on_a_bursty_hop() {
    full(Channel::GilbertElliott, 1.0, 0.02, 100);
}

#[test]
fn full_at_ten_percent_loss() {
    full(Channel::Bernoulli, 5.0, 0.10, 100);
}

#[test]
fn fair_behind_a_one_bdp_drop_tail_queue() {
    fair(QueueKind::Bdp1, 4, 80);
}

#[test]
fn fair_behind_red() {
    fair(QueueKind::Red, 4, 80);
}

#[test]
fn fair_behind_fq_codel() {
    fair(QueueKind::FqCodel, 4, 80);
}
