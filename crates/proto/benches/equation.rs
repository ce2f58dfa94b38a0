//! Benchmarks of the throughput equation.

fn main() {}
