//! The Section 5 question answered by the tuner instead of by hand: `launch::cuda::Tuner` times
//! `poly_eval` and every variant of its tune grid (`[package.metadata.launch.tune.poly_eval]` in
//! Cargo.toml, embedded by the build), remembers the winner on disk, and a later run takes it
//! without timing.
//!
//! A run that tunes also times the same candidates again, separately, with this program's own
//! method (fresh poisoned output before every launch, `runs` launches), and says whether that
//! exhaustive run's fastest is the tuner's winner and how far apart their medians are.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

use launch::cuda::cudarc::driver::{sys, CudaSlice, CudaStream, DriverError, LaunchConfig};
use launch::cuda::{Device, LoadedKernel, Progress, Status, Tuner};
use launch::Kernel;
use launch_template::{poly_eval_cpu, SplitMix64, POLY_EVAL};

use crate::Result;

/// The launch every candidate gets: its own block size, enough blocks for `n` elements.
fn config(k: &LoadedKernel, n: usize) -> LaunchConfig {
    let block = k.kernel().block_size();
    LaunchConfig { grid_dim: ((n as u32).div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// A typed launch of `k`, poly_eval or one of its variants (which share its parameters).
fn launch(
    k: &LoadedKernel,
    stream: &Arc<CudaStream>,
    x: &CudaSlice<f32>,
    y: &mut CudaSlice<f32>,
    n: usize,
) -> Result<()> {
    // SAFETY: the kernels touch elements below n only, and both buffers hold n.
    unsafe { POLY_EVAL.launch(k, stream, config(k, n), (x, y, n as i32)) }?;
    Ok(())
}

/// Elements that differ from the reference (NaN: not written).
fn wrong(got: &[f32], want: &[f32]) -> usize {
    got.iter().zip(want).filter(|(g, w)| g.is_nan() || (*g - *w).abs() > 1e-5 * w.abs().max(1.0)).count()
}

/// Runs the tuner section; `Ok(false)` when an output was wrong or the exhaustive run disagrees.
pub fn run(dev: &Device, stream: &Arc<CudaStream>, rng: &mut SplitMix64, n: usize, runs: usize) -> Result<bool> {
    let problem = format!("poly_eval n={n}");
    let candidates: Vec<&'static Kernel> = std::iter::once(POLY_EVAL.kernel()).chain(POLY_EVAL.variants()).collect();
    println!(
        "Tuner: poly_eval and its {} build-time variants (Cargo.toml [package.metadata.launch.tune.poly_eval]), \
         problem key `{problem}`",
        POLY_EVAL.variants().len()
    );
    let xs = rng.floats(n);
    let mut want = vec![0.0f32; n];
    poly_eval_cpu(&xs, &mut want);
    let x = stream.clone_htod(&xs)?;
    let nan = stream.clone_htod(&vec![f32::NAN; n])?;
    let y = RefCell::new(stream.clone_htod(&vec![f32::NAN; n])?);

    // A remembered winner: loaded and launched with no timing.
    let start = Instant::now();
    let reader = Tuner::new(dev);
    if let Some(best) = reader.best(&POLY_EVAL, &problem)? {
        let lookup = start.elapsed();
        launch(&best, stream, &x, &mut y.borrow_mut(), n)?;
        stream.synchronize()?;
        let first = start.elapsed();
        let off = wrong(&stream.clone_dtoh(&*y.borrow())?, &want);
        println!(
            "cached winner: {} ({}), no timing: lookup and load {:.1} µs, lookup to the end of its first launch {:.1} µs; \
             {off} wrong elements",
            best.kernel().name,
            best.kernel().contract.map_or("no contract".into(), |c| c.to_string()),
            lookup.as_secs_f64() * 1e6,
            first.as_secs_f64() * 1e6,
        );
        return Ok(off == 0);
    }

    let mut tuner = Tuner::new(dev).warmup(3).repetitions(runs as u32).progress(Progress::Auto).verify(
        |_k: &LoadedKernel, stream: &Arc<CudaStream>| -> std::result::Result<bool, DriverError> {
            let got = stream.clone_dtoh(&*y.borrow())?;
            // Poisoned again, so the next candidate's probe must write every element.
            stream.memcpy_dtod(&nan, &mut *y.borrow_mut())?;
            Ok(wrong(&got, &want) == 0)
        },
    );
    let start = Instant::now();
    let tuned = tuner
        .tune(&POLY_EVAL, &problem, |k: &LoadedKernel, s: &Arc<CudaStream>| launch(k, s, &x, &mut y.borrow_mut(), n))?;
    let tune_time = start.elapsed();
    println!("{}", tuned.report);
    println!(
        "tune time: {:.3} s (load, probe, verify, 3 warm-ups and {runs} timed launches per candidate)",
        tune_time.as_secs_f64()
    );
    let mut ok = tuned.report.rows.iter().all(|r| !matches!(r.status, Status::Wrong(_) | Status::Failed(_)));

    // The exhaustive run, separately: every candidate the tuner timed, this program's own method.
    let winner = tuned.report.winner();
    let Some(winner_ms) = winner.timing().map(|t| t.median_ms) else { return Ok(false) };
    let ctx = dev.context();
    let (t0, t1) = (
        ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?,
        ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?,
    );
    let mut exhaustive = Vec::new();
    for kernel in &candidates {
        let Some(row) = tuned.report.rows.iter().find(|r| r.variant == kernel.name) else { continue };
        if !matches!(row.status, Status::Timed(_)) {
            continue;
        }
        let k = dev.load(kernel)?;
        let mut y = y.borrow_mut();
        for _ in 0..3 {
            launch(&k, stream, &x, &mut y, n)?;
        }
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            stream.memcpy_dtod(&nan, &mut *y)?;
            t0.record(stream)?;
            launch(&k, stream, &x, &mut y, n)?;
            t1.record(stream)?;
            times.push(f64::from(t0.elapsed_ms(&t1)?));
        }
        let off = wrong(&stream.clone_dtoh(&*y)?, &want);
        ok &= off == 0;
        times.sort_by(f64::total_cmp);
        exhaustive.push((kernel.name, times[times.len() / 2], off));
    }
    let Some(&(fastest, fastest_ms, _)) = exhaustive.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Ok(false);
    };
    println!("exhaustive run, separately, right after: median of {runs} launches after 3 warm-ups, output poisoned before each");
    for (name, ms, off) in &exhaustive {
        println!("  {name:<40} {ms:>9.3} ms  {:>5.2}×  {off} wrong", ms / fastest_ms);
    }
    let gap = (winner_ms - fastest_ms).abs() / fastest_ms * 100.0;
    let agree = fastest == winner.variant;
    println!(
        "tuner's winner {} ({winner_ms:.3} ms); exhaustive fastest {fastest} ({fastest_ms:.3} ms): {}, medians {gap:.2}% apart{}",
        winner.variant,
        if agree { "the same variant" } else { "DIFFERENT variants" },
        if gap <= 2.0 { " (within 2%)" } else { " (MORE than 2%)" }
    );
    Ok(ok)
}
