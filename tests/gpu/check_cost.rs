//! What the launch check costs against the launch it guards (issue 13, item 5): a repeated
//! configuration is remembered, so the check should be well under 1 % of a cudarc launch enqueue.

use std::time::Instant;

use launch::cuda::cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::{device, say};

const BATCHES: usize = 7;
const CALLS: usize = 20_000;

/// The median over 7 batches of ns per call, each batch `CALLS` calls of `f` (then `after`,
/// untimed: the stream's synchronisation).
fn median_ns(mut f: impl FnMut(), mut after: impl FnMut()) -> f64 {
    let mut batches: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..CALLS {
                f();
            }
            let ns = start.elapsed().as_nanos() as f64 / CALLS as f64;
            after();
            ns
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[BATCHES / 2]
}

#[test]
fn a_repeated_checked_launch_costs_under_one_percent_of_the_launch() {
    let Some(dev) = device("a_repeated_checked_launch_costs_under_one_percent_of_the_launch") else { return };
    let k = dev.load(&fixture_gpu::TINY).unwrap();
    let stream = dev.context().default_stream();
    let n = 4096i32;
    let p = stream.clone_htod(&vec![1.0f32; n as usize]).unwrap();
    let cfg = LaunchConfig { grid_dim: (16, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let sync = || stream.synchronize().unwrap();
    k.check(&cfg).unwrap();
    let check_ns = median_ns(
        || {
            std::hint::black_box(k.check(std::hint::black_box(&cfg)).unwrap());
        },
        || {},
    );
    // SAFETY (both): `tiny(float* p, int n)` with n floats at p; it writes p[i] for i < n only.
    let checked_ns = median_ns(
        || {
            let mut args = k.builder(&stream);
            args.arg(&p).arg(&n);
            unsafe { k.launch(&mut args, cfg) }.unwrap();
        },
        sync,
    );
    let unchecked_ns = median_ns(
        || {
            let mut args = k.builder(&stream);
            args.arg(&p).arg(&n);
            unsafe { args.launch(cfg) }.unwrap();
        },
        sync,
    );
    // The typed launch (issue 33): the same checked launch with its arguments pushed from a
    // tuple the compiler checked; it should cost what the untyped checked launch of the same
    // arguments does. `tiny` takes `float*`, so both push the buffer as written (`&mut`: cudarc
    // records a write, which costs more than the read the launches above push), timed before and
    // after the typed one.
    let mut q = stream.clone_htod(&vec![1.0f32; n as usize]).unwrap();
    let mut untyped = || {
        let mut args = k.builder(&stream);
        args.arg(&mut q).arg(&n);
        unsafe { k.launch(&mut args, cfg) }.unwrap();
    };
    let untyped_ns = median_ns(&mut untyped, sync);
    let typed_ns = median_ns(
        || {
            unsafe { fixture_gpu::TINY.launch(&k, &stream, cfg, (&mut q, n)) }.unwrap();
        },
        sync,
    );
    let untyped_again_ns = median_ns(
        || {
            let mut args = k.builder(&stream);
            args.arg(&mut q).arg(&n);
            unsafe { k.launch(&mut args, cfg) }.unwrap();
        },
        sync,
    );
    let typed_ratio = typed_ns / untyped_ns.min(untyped_again_ns);
    say(&format!(
        "typed launch {typed_ns:.0} ns, untyped checked launch of the same arguments {untyped_ns:.0} ns before and \
         {untyped_again_ns:.0} ns after (typed / untyped = {typed_ratio:.3})"
    ));
    // The bound leaves room for the noise of two medians, not for a typed launch that does more
    // work.
    assert!(typed_ratio < 1.10, "the typed launch costs {typed_ratio:.3} × the untyped checked launch");
    let ratio = check_ns / unchecked_ns;
    say(&format!(
        "launch check cost (medians of {BATCHES} × {CALLS} calls, `tiny` at {cfg:?}): check {check_ns:.1} ns, checked \
         launch {checked_ns:.0} ns, unchecked launch {unchecked_ns:.0} ns; check / launch = {:.3} %",
        ratio * 100.0
    ));
    assert!(ratio < 0.01, "the check costs {check_ns:.1} ns, {:.2} % of a {unchecked_ns:.0} ns launch", ratio * 100.0);
}
