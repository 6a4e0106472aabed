//! Evaluations per second of `launch::occupancy::occupancy` (the `cudaOccMaxActiveBlocksPerMultiprocessor`
//! port), not a timed test: `cargo run --release -p launch --example occupancy_bench [-- ROUNDS]`.
//!
//! Each round evaluates every architecture × register counts 0..=255 × block sizes 32..=1024 (step
//! 32) × three shared-memory/barrier settings, so every branch of the calculator is exercised.
//! The best round is reported (the least disturbed by the rest of the machine), with the median.
// A benchmark run by hand at a terminal: its one line of result may use `println!` (clippy.toml).
#![allow(clippy::disallowed_macros)]

use std::hint::black_box;
use std::time::Instant;

use launch::occupancy::{occupancy, Carveout, DeviceLimits, FunctionAttrs};

/// (static shared memory, barriers, dynamic shared memory, carveout): no shared memory; 4 KB static
/// and 8 barriers; 40 000 B static plus 20 000 B dynamic at a 50 % carveout.
const SETTINGS: [(u32, u32, u32, Carveout); 3] =
    [(0, 1, 0, Carveout::Default), (4096, 8, 0, Carveout::Default), (40_000, 1, 20_000, Carveout::Percent(50))];

fn round() -> (u64, u64) {
    let mut evaluations = 0u64;
    let mut checksum = 0u64;
    for dev in DeviceLimits::all() {
        for &(shared, barriers, dynamic, carveout) in &SETTINGS {
            for registers in 0..=255 {
                let func = FunctionAttrs::new(registers, shared, barriers);
                for block in (32..=1024).step_by(32) {
                    let r = occupancy(black_box(dev), black_box(&func), black_box(block), dynamic, carveout);
                    // Consume the result so the work cannot be optimised away.
                    checksum = checksum.wrapping_add(r.map_or(1, |o| u64::from(o.active_blocks)));
                    evaluations += 1;
                }
            }
        }
    }
    (evaluations, checksum)
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    black_box(round()); // warm-up
    let mut rates = Vec::with_capacity(rounds);
    let mut evaluations = 0;
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        let (n, checksum) = round();
        let secs = start.elapsed().as_secs_f64();
        black_box(checksum);
        evaluations = n;
        rates.push(n as f64 / secs);
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    let best = rates[rates.len() - 1];
    let median = rates[rates.len() / 2];
    println!(
        "occupancy(): {evaluations} evaluations per round, {} rounds: best {:.1} M evaluations/s ({:.0} ns each), median {:.1} M/s",
        rates.len(),
        best / 1e6,
        1e9 / best,
        median / 1e6
    );
}
