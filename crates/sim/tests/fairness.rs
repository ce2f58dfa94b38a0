//! Issue 11's targets on a reduced set of the fairness matrix (the whole
//! matrix is `cargo run --release -p fairstream-sim --example fairness`,
//! written to `docs/results/fairness.md`): the default controller fills a
//! lossy hop it has to itself to 0.95 of B_w(1 − p_w) × the payload share,
//! and on a congested wire takes at most 1.25 mean NewReno shares while
//! the NewReno flows lose at most 10 % against one more NewReno flow in its
//! place. Each cell runs 120 s and is judged on its last 60 s. The cells
//! pinned here meet the targets; `docs/results/fairness.md` lists those that
//! do not, with their figures.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test harness

#[path = "../examples/fairness/cells.rs"]
mod cells;

use cells::{run_fair, run_full, Channel, FairCell, FullCell, QueueKind, Setup};

fn setup() -> Setup {
    Setup {
        seed: 1,
        controller: "adaptive".to_owned(),
        dump: None,
        tcp: "newreno".to_owned(),
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
fn fair_behind_a_four_bdp_drop_tail_queue() {
    fair(QueueKind::Bdp4, 4, 80);
}

#[test]
fn fair_behind_red() {
    fair(QueueKind::Red, 4, 80);
}

#[test]
fn fair_behind_fq_codel() {
    fair(QueueKind::FqCodel, 4, 80);
}

/// The ECN path end to end: behind CoDel with ECN, the bottleneck marks the
/// stream's ECT(0) packets, CCID 248's receiver counts the marks (option
/// 197), and the adaptive controller falls back to one flow's share; behind
/// the same CoDel without ECN it has no such signal and takes more.
#[test]
fn ecn_marks_reach_the_adaptive_controller() {
    use fairstream_sim::runner::Simulation;
    use fairstream_sim::scenario::Scenario;
    let cell = |queue| FairCell {
        bottleneck_mbit: 10,
        queue,
        tcp: 4,
        rtt_ms: 80,
        duration_s: 120,
    };
    let marked = cell(QueueKind::CodelEcn);
    let text = marked.scenario(&setup(), true, None);
    let summary = Simulation::new(&Scenario::from_str(&text, "codel-ecn.toml").unwrap())
        .unwrap()
        .run();
    let marks: u64 = summary.links.iter().map(|l| l.ce_marked).sum();
    assert!(marks > 0, "the bottleneck marked nothing");
    let with_ecn = fair(QueueKind::CodelEcn, 4, 80);
    let cell = cell(QueueKind::Codel);
    let without = run_fair(&cell, &setup(), None).unwrap();
    eprintln!(
        "CoDel+ECN: {marks} CE marks, ratio {:.3}, n {:?}; CoDel alone: ratio {:.3}, n {:?}",
        with_ecn.ratio, with_ecn.n_mean, without.ratio, without.n_mean
    );
    assert!(with_ecn.n_mean.unwrap() < without.n_mean.unwrap());
    assert!(without.ratio > with_ecn.ratio);
}

/// Both at once on an ECN path: the congested wire (10 Mbit/s, CoDel with
/// ECN, four ECN-capable NewReno flows, 80 ms), then a 1 Mbit/s hop losing
/// 5 % that only the stream crosses. The bottleneck signals congestion by
/// marks; the hop's losses arrive while it marks, so CCID 248's receiver
/// sets them aside from its congestion loss event rate (option 198) and the
/// adaptive connection's equation takes that rate: the stream fills what it
/// could have (the hop) and stays within the fairness targets. Without the
/// option (before issue 11's last change) it filled 0.88.
#[test]
fn both_on_an_ecn_path_fills_the_lossy_hop() {
    let cell = FairCell {
        bottleneck_mbit: 10,
        queue: QueueKind::CodelEcn,
        tcp: 4,
        rtt_ms: 80,
        duration_s: 120,
    };
    let r = run_fair(&cell, &setup(), Some((1.0, 0.05))).unwrap();
    eprintln!(
        "both CoDel+ECN, 1 Mbit/s 5 %: stream {:.2} Mbit/s, TCP {:.2} Mbit/s, ratio {:.3}, harm {:.3}, fill {:?}, n {:?}",
        r.stream_mbit, r.tcp_mbit, r.ratio, r.harm, r.fill, r.n_mean
    );
    assert!(r.fill.unwrap() >= 0.95, "fill {:?}", r.fill);
    assert!(r.ratio <= 1.25, "ratio {}", r.ratio);
    assert!(r.harm <= 0.10, "harm {}", r.harm);
}
