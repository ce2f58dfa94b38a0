//! The throughput equations: direct evaluation against the lookup table
//! (paper 000 §3.2 suggests one; DESIGN.md asks that it be measured to be
//! faster), and the MulTFRC equation and the inverses for comparison.
//!
//! Every benchmark runs over the same 64 loss event rates, log-spaced in
//! [10⁻⁹, 1]; the throughput is reported in elements (calls) per second, so
//! the time per call is the time per iteration divided by 64.
//!
//! ```text
//! cargo bench -p fairstream-proto --bench equation -- --quick
//! ```

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairstream_proto::cc::equation::{self, FTable};
use fairstream_proto::cc::multfrc;
use fairstream_proto::units::Rate;

/// How many loss event rates each iteration evaluates.
const POINTS: usize = 64;
const SIZE_BYTES: f64 = 1460.0;
const RTT: Duration = Duration::from_millis(100);

/// 64 values of p log-spaced from 10⁻⁹ to 1 (both included).
fn loss_event_rates() -> [f64; POINTS] {
    std::array::from_fn(|i| 10f64.powf(-9.0 + 9.0 * i as f64 / (POINTS - 1) as f64))
}

fn f_of_p(c: &mut Criterion) {
    let ps = loss_event_rates();
    let table = FTable::new();
    let mut group = c.benchmark_group("f(p)");
    group.throughput(Throughput::Elements(POINTS as u64));
    group.bench_function("direct", |b| {
        b.iter(|| {
            for &p in black_box(&ps) {
                black_box(equation::f(p));
            }
        })
    });
    group.bench_function("table", |b| {
        b.iter(|| {
            for &p in black_box(&ps) {
                black_box(table.f(p));
            }
        })
    });
    group.finish();
}

fn rate(c: &mut Criterion) {
    let ps = loss_event_rates();
    let table = FTable::new();
    let mut group = c.benchmark_group("rate");
    group.throughput(Throughput::Elements(POINTS as u64));
    group.bench_function("tfrc direct", |b| {
        b.iter(|| {
            for &p in black_box(&ps) {
                black_box(equation::tfrc_rate(SIZE_BYTES, RTT, p).ok());
            }
        })
    });
    group.bench_function("tfrc table", |b| {
        b.iter(|| {
            for &p in black_box(&ps) {
                black_box(table.rate(SIZE_BYTES, RTT, p).ok());
            }
        })
    });
    group.bench_function("multfrc n=1 j=1", |b| {
        b.iter(|| {
            for &p in black_box(&ps) {
                black_box(multfrc::multfrc_rate(SIZE_BYTES, RTT, p, 1.0, 1.0).ok());
            }
        })
    });
    group.bench_function("multfrc n=2.5 j=2", |b| {
        b.iter(|| {
            for &p in black_box(&ps) {
                black_box(multfrc::multfrc_rate(SIZE_BYTES, RTT, p, 2.5, 2.0).ok());
            }
        })
    });
    group.finish();
}

fn inverse(c: &mut Criterion) {
    let ps = loss_event_rates();
    let tfrc_rates: Vec<Rate> = ps
        .iter()
        .filter_map(|&p| equation::tfrc_rate(SIZE_BYTES, RTT, p).ok())
        .collect();
    let multfrc_rates: Vec<Rate> = ps
        .iter()
        .filter_map(|&p| multfrc::multfrc_rate(SIZE_BYTES, RTT, p, 2.5, 2.0).ok())
        .collect();
    let mut group = c.benchmark_group("inverse");
    group.throughput(Throughput::Elements(POINTS as u64));
    group.bench_function("tfrc (Newton)", |b| {
        b.iter(|| {
            for &x in black_box(&tfrc_rates) {
                black_box(equation::tfrc_loss_event_rate(x, SIZE_BYTES, RTT).ok());
            }
        })
    });
    group.bench_function("multfrc n=2.5 j=2 (Illinois)", |b| {
        b.iter(|| {
            for &x in black_box(&multfrc_rates) {
                black_box(multfrc::multfrc_loss_event_rate(x, SIZE_BYTES, RTT, 2.5, 2.0).ok());
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // Short by default; command-line options (--measurement-time, --quick) override.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = f_of_p, rate, inverse
}
criterion_main!(benches);
