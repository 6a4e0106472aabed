//! `launch::cuda::Tuner` on the template's five hand-written builds of `poly_eval` (issue 13,
//! item 4): refused and timed variants, the correctness hook, the winner remembered on disk and
//! found again without timing.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

use launch::cuda::cudarc::driver::{CudaStream, DriverError, LaunchConfig, PushKernelArg};
use launch::cuda::{LoadedKernel, Progress, Recall, Status, Tuner};
use launch::tune::Miss;
use launch::tune::{TuneCache, TunePolicy};
use launch::Kernel;

use crate::{device, say};

#[test]
fn the_tuner_times_the_templates_builds_and_a_second_lookup_hits_the_cache() {
    let Some(dev) = device("the_tuner_times_the_templates_builds_and_a_second_lookup_hits_the_cache") else { return };
    let dir = tempfile::tempdir().unwrap();
    let cache = TuneCache::new(dir.path());
    let stream = dev.context().default_stream();
    let n = 1usize << 20;
    let mut rng = launch_template::SplitMix64(launch_template::fresh_seed());
    let xs = rng.floats(n);
    let mut want = vec![0.0f32; n];
    launch_template::poly_eval_cpu(&xs, &mut want);
    let nan = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    let x = stream.clone_htod(&xs).unwrap();
    let y = RefCell::new(stream.clone_htod(&vec![f32::NAN; n]).unwrap());
    // The five hand-written builds; the unbounded one at 512 threads is the article's trap.
    let candidates: Vec<&'static Kernel> = launch_template::KERNELS.to_vec();
    let block_of = |k: &LoadedKernel| if k.kernel().contract.is_none() { 512 } else { k.kernel().block_size() };
    let launch = |k: &LoadedKernel, stream: &Arc<CudaStream>| {
        let block = block_of(k);
        let cfg = LaunchConfig {
            grid_dim: ((n as u32).div_ceil(block), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let y = y.borrow();
        let n_arg = n as i32;
        let mut args = k.builder(stream);
        args.arg(&x).arg(&*y).arg(&n_arg);
        // SAFETY: (const float* x, float* y, int n) with n floats each.
        unsafe { k.launch(&mut args, cfg) }.map(|_| ())
    };
    let mut tuner = Tuner::new(&dev)
        .cache(cache.clone())
        .policy(TunePolicy::Cached)
        .warmup(3)
        .repetitions(20)
        .progress(Progress::Always)
        .verify(|_k: &LoadedKernel, stream: &Arc<CudaStream>| -> Result<bool, DriverError> {
            let got = stream.clone_dtoh(&*y.borrow())?;
            // Poisoned again, so the next variant's probe must write every element.
            stream.memcpy_dtod(&nan, &mut *y.borrow_mut())?;
            let off = got.iter().zip(&want).filter(|(g, w)| g.is_nan() || (*g - *w).abs() > 1e-5 * w.abs().max(1.0));
            Ok(off.count() == 0)
        });
    let problem = "n=2^20";
    let start = Instant::now();
    let tuned = tuner.tune_candidates(&candidates, problem, launch).unwrap();
    let tune_time = start.elapsed();
    say(&format!("{}\ntune time: {:.3} s", tuned.report, tune_time.as_secs_f64()));
    let report = &tuned.report;
    assert_eq!(report.rows.len(), candidates.len());
    for row in &report.rows {
        assert!(!matches!(row.status, Status::Wrong(_) | Status::Failed(_)), "{}: {:?}", row.variant, row.status);
        if row.registers.is_some_and(|r| r > 128) && row.contract.is_none() {
            assert!(
                matches!(row.status, Status::Refused(_)),
                "{}: 512 threads approved: {:?}",
                row.variant,
                row.status
            );
        }
    }
    assert!(matches!(report.winner().status, Status::Timed(_)));
    assert_eq!(tuned.best.kernel().name, report.winner().variant);
    let path = report.stored.clone().unwrap();
    assert!(path.is_file(), "{}", path.display());

    // A second lookup: the remembered winner, loaded, with no timing.
    let reader = Tuner::new(&dev).cache(cache.clone()).policy(TunePolicy::Cached);
    let mut hits = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let best = reader.best_of(&candidates, problem).unwrap().expect("a cache hit");
        hits.push(start.elapsed().as_secs_f64() * 1e6);
        assert_eq!(best.kernel().name, report.winner().variant);
    }
    // The first launch of the remembered winner, from the lookup on.
    let start = Instant::now();
    let best = reader.best_of(&candidates, problem).unwrap().unwrap();
    launch(&best, &stream).unwrap();
    stream.synchronize().unwrap();
    let to_first_launch = start.elapsed().as_secs_f64() * 1e6;
    say(&format!(
        "cache hit (best_of, winner loaded, no timing): first {:.1} µs, then {:?} µs; lookup to the end of the first \
         launch {to_first_launch:.1} µs",
        hits[0],
        hits[1..].iter().map(|h| format!("{h:.1}")).collect::<Vec<_>>()
    ));
    // Invalidation: another problem key misses; LAUNCH_TUNE=off and always read nothing.
    assert!(matches!(reader.lookup(&candidates, "n=2^21").unwrap(), Recall::Miss(Miss::NotStored)));
    assert!(matches!(reader.lookup(&candidates[..4], problem).unwrap(), Recall::Miss(Miss::NotStored)));
    let off = Tuner::new(&dev).cache(cache.clone()).policy(TunePolicy::Off);
    assert!(matches!(off.lookup(&candidates, problem).unwrap(), Recall::Miss(Miss::Off)));
    let always = Tuner::new(&dev).cache(cache).policy(TunePolicy::Always);
    assert!(always.best_of(&candidates, problem).unwrap().is_none());
}

#[test]
fn the_tuner_times_a_kernel_and_its_build_time_variants() {
    let Some(dev) = device("the_tuner_times_a_kernel_and_its_build_time_variants") else { return };
    let dir = tempfile::tempdir().unwrap();
    let stream = dev.context().default_stream();
    let n = 1i32 << 18;
    let x = stream.clone_htod(&vec![0.5f32; n as usize]).unwrap();
    let y = stream.alloc_zeros::<f32>(n as usize).unwrap();
    let kernel = &launch_template::POLY_EVAL_LB256;
    let mut tuner = Tuner::new(&dev).cache(TuneCache::new(dir.path())).policy(TunePolicy::Cached).repetitions(10);
    let chosen = tuner
        .best_or_tune(kernel, "n=2^18", |k: &LoadedKernel, stream: &Arc<CudaStream>| {
            let block = k.kernel().block_size();
            let cfg = LaunchConfig {
                grid_dim: ((n as u32).div_ceil(block), 1, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut args = k.builder(stream);
            args.arg(&x).arg(&y).arg(&n);
            // SAFETY: (const float* x, float* y, int n) with n floats each.
            unsafe { k.launch(&mut args, cfg) }.map(|_| ())
        })
        .unwrap();
    let report = chosen.report.expect("a miss: the cache folder is new");
    say(&format!("{report}\n({} build-time variants)", kernel.variants().len()));
    assert_eq!(report.rows.len(), 1 + kernel.variants().len());
    let again =
        tuner.best_or_tune(kernel, "n=2^18", |_: &LoadedKernel, _: &Arc<CudaStream>| Err("not timed again")).unwrap();
    assert!(again.report.is_none());
    assert_eq!(again.kernel.kernel().name, chosen.kernel.kernel().name);
}
