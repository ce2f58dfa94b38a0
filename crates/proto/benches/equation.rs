//! Benchmarks of the throughput equation (placeholder until they are written).

fn main() {}
