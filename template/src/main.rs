//! Runs the template's five `poly_eval` builds on a GPU and prints the seed article's missing
//! Section 5: which build is fastest, measured.
//!
//! Each variant is loaded through `launch::cuda` (the cubin of the GPU's arch, else the PTX) and
//! launched at its legal block size with the contract checked; every output element is compared
//! with the CPU reference on fresh random inputs (the output is poisoned with NaN before every
//! run); then it is timed with CUDA events (warm-up, median of many runs).
//!
//! Then `launch::cuda::Tuner` answers the same question for `poly_eval` and the variants of its
//! tune grid (Cargo.toml), remembers the winner, and a second run takes it without timing
//! (`LAUNCH_TUNE=always` times again; see `tuned.rs`).
//!
//! `cargo launch report` needs no GPU; this program does, and says so when there is none.
//!
//! ```text
//! launch-template [--elements N] [--runs R]     (defaults: 16,777,216 elements, 30 runs)
//! ```

use std::process::ExitCode;

mod tuned;

use std::sync::Arc;

use launch::cuda::cudarc::driver::{sys, CudaSlice, CudaStream, LaunchConfig};
use launch::cuda::{Approval, Device, LoadedKernel};
use launch::failure::group;
use launch::{Kernel, Signature, Typed};
use launch_template::{fresh_seed, poly_eval_cpu, SplitMix64, KERNELS, POLY_EVAL};
use launch_template::{POLY_EVAL_LB1024, POLY_EVAL_LB1024X2, POLY_EVAL_LB256, POLY_EVAL_LB256X4};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Floating-point operations per element: 128 multiplies, 8 × 128 FMAs (2 each), 128 adds.
const FLOP_PER_ELEMENT: f64 = 128.0 + 2.0 * 8.0 * 128.0 + 128.0;

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Args {
    elements: usize,
    runs: usize,
}

fn args() -> Result<Args> {
    let mut a = Args { elements: 1 << 24, runs: 30 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> Result<usize> {
            let v = it.next().ok_or_else(|| format!("{name} needs a value"))?;
            Ok(v.replace(['_', ','], "").parse().map_err(|_| format!("{name}: `{v}` is not a number"))?)
        };
        match flag.as_str() {
            "--elements" => a.elements = value("--elements")?.max(1),
            "--runs" => a.runs = value("--runs")?.max(1),
            "-h" | "--help" => {
                println!("launch-template [--elements N] [--runs R]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (expected --elements N, --runs R)").into()),
        }
    }
    Ok(a)
}

struct Row {
    name: &'static str,
    contract: String,
    block: u32,
    registers: u32,
    spills: String,
    occupancy: String,
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
    checked: usize,
}

fn run() -> Result<bool> {
    let args = args()?;
    let dev = Device::new(0).map_err(|e| {
        format!(
            "{e}\nlaunch-template runs the five poly_eval builds on a GPU and times them; without one, \
             `cargo launch report` shows their registers, spills and occupancy"
        )
    })?;
    let info = dev.info().clone();
    let (n, runs) = (args.elements, args.runs);
    println!(
        "device {}: {} (compute capability {}.{}), {} SMs, driver CUDA {}.{}",
        info.ordinal,
        info.name,
        info.limits.major,
        info.limits.minor,
        info.sms,
        info.driver_version / 1000,
        (info.driver_version % 1000) / 10
    );
    let ctx = dev.context().clone();
    // One stream, so cudarc's per-buffer events are not needed.
    // SAFETY: every buffer is used on this one stream only.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.default_stream();

    // The article's trap: the unbounded build at 512 threads. The check refuses it, with the
    // arithmetic, before the driver would fail it with error 701.
    let trap = dev.load(&POLY_EVAL)?;
    let module_time = dev.load_module(POLY_EVAL.module, launch::cuda::Prefer::Auto)?;
    println!(
        "{}: loaded from {} in {:.3} ms",
        POLY_EVAL.module.file,
        module_time.image(),
        module_time.load_time().as_secs_f64() * 1e3
    );
    let bad = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (512, 1, 1), shared_mem_bytes: 0 };
    match trap.check(&bad) {
        Err(e) => println!("checked launch at 512 threads refused: {e}"),
        Ok(_) => println!("checked launch at 512 threads approved (this build fits 512 threads on this GPU)"),
    }
    println!();

    let mut rng = SplitMix64(fresh_seed());
    let nan = stream.clone_htod(&vec![f32::NAN; n])?;
    let mut y = stream.alloc_zeros::<f32>(n)?;
    let mut reference = vec![0.0f32; n];
    let mut rows = Vec::new();
    let mut all_ok = true;
    assert_eq!(BUILDS.len(), KERNELS.len(), "BUILDS lists every kernel of the crate");
    for build in BUILDS {
        let kernel = build.kernel();
        let k = dev.load(kernel)?;
        let block = kernel.block_size();
        let cfg = LaunchConfig {
            grid_dim: ((n as u32).div_ceil(block), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let approval = k.check(&cfg)?;
        // Fresh inputs for every variant, and their reference.
        let xs = rng.floats(n);
        poly_eval_cpu(&xs, &mut reference);
        let x = stream.clone_htod(&xs)?;
        let once = |y: &mut CudaSlice<f32>| -> Result<()> {
            stream.memcpy_dtod(&nan, y)?;
            // SAFETY: the kernels touch elements below n only, and both buffers hold n.
            unsafe { build.launch(&k, &stream, cfg, (&x, y, n as i32)) }?;
            Ok(())
        };
        once(&mut y)?;
        stream.synchronize()?;
        let mut checked = verify(kernel.name, &stream.clone_dtoh(&y)?, &reference, &mut all_ok);
        // Timing: warm-up, then `runs` launches between events, each on a poisoned output.
        for _ in 0..3 {
            once(&mut y)?;
        }
        let mut times = Vec::with_capacity(runs);
        let start = ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        let end = ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        for _ in 0..runs {
            stream.memcpy_dtod(&nan, &mut y)?;
            start.record(&stream)?;
            // SAFETY: as in `once`.
            unsafe { build.launch(&k, &stream, cfg, (&x, &mut y, n as i32)) }?;
            end.record(&stream)?;
            times.push(f64::from(start.elapsed_ms(&end)?));
        }
        // The last timed run's output is checked too.
        checked += verify(kernel.name, &stream.clone_dtoh(&y)?, &reference, &mut all_ok);
        times.sort_by(f64::total_cmp);
        let r = k.embedded().copied().unwrap_or_default();
        let occ = approval.occupancy;
        rows.push(Row {
            name: kernel.name,
            contract: match kernel.contract {
                Some(c) => format!(
                    "{}({}{})",
                    if c.exact { "@launch" } else { "__launch_bounds__" },
                    c.threads.map_or("-".into(), |t| t.to_string()),
                    c.min_blocks.map_or(String::new(), |m| format!(", {m}"))
                ),
                None => "none".into(),
            },
            block,
            registers: k.function_info().registers,
            spills: if k.embedded().is_some() {
                format!("{} / {}", r.spill_stores, r.spill_loads)
            } else {
                format!("JIT, {} B local", k.function_info().local_bytes)
            },
            occupancy: format!(
                "{} × {} = {}/{} warps ({:.1}%)",
                occ.active_blocks,
                occ.warps_per_block,
                occ.active_warps,
                occ.max_warps,
                occ.percent()
            ),
            median_ms: times[times.len() / 2],
            min_ms: times[0],
            max_ms: times[times.len() - 1],
            checked,
        });
    }

    let fastest = rows.iter().map(|r| r.median_ms).fold(f64::INFINITY, f64::min);
    println!(
        "Section 5, measured: {} elements ({} MB in + {} MB out), median of {runs} runs after 3 warm-ups, CUDA events",
        group(n as u32),
        n * 4 / 1_000_000,
        n * 4 / 1_000_000
    );
    println!();
    println!(
        "| variant | contract | block | registers | spill st / ld (B) | occupancy (blocks × warps) | median ms | min–max ms | G elem/s | GB/s | TFLOP/s | checked | |"
    );
    println!("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|");
    for r in &rows {
        let s = r.median_ms * 1e-3;
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.3} | {:.3}–{:.3} | {:.2} | {:.1} | {:.2} | {} | {} |",
            r.name,
            r.contract,
            r.block,
            r.registers,
            r.spills,
            r.occupancy,
            r.median_ms,
            r.min_ms,
            r.max_ms,
            n as f64 / s / 1e9,
            8.0 * n as f64 / s / 1e9,
            FLOP_PER_ELEMENT * n as f64 / s / 1e12,
            group(r.checked as u32),
            if r.median_ms == fastest { "**fastest**" } else { "" }
        );
    }
    println!();
    for r in &rows {
        println!("{:<20} {:>5.2}× the fastest", r.name, r.median_ms / fastest);
    }
    println!();
    all_ok &= tuned::run(&dev, &stream, &mut rng, n, runs)?;
    if !all_ok {
        eprintln!("error: some outputs differ from the CPU reference (see above)");
    }
    Ok(all_ok)
}

/// The parameters all five builds share, as their generated signatures spell them.
type PolyParams = (*const f32, *mut f32, i32);

/// One of the five builds, launched typed: each is its own kernel (and signature type), so the
/// loop holds them as this trait.
trait PolyBuild: Sync {
    fn kernel(&self) -> &'static Kernel;
    /// # Safety
    /// As [`Typed::launch`]: the buffers hold every element the launch touches.
    unsafe fn launch(
        &self,
        k: &LoadedKernel,
        stream: &Arc<CudaStream>,
        cfg: LaunchConfig,
        args: (&CudaSlice<f32>, &mut CudaSlice<f32>, i32),
    ) -> std::result::Result<Approval, launch::cuda::Error>;
}

impl<K: Signature<Params = PolyParams>> PolyBuild for Typed<K> {
    fn kernel(&self) -> &'static Kernel {
        Typed::kernel(self)
    }
    unsafe fn launch(
        &self,
        k: &LoadedKernel,
        stream: &Arc<CudaStream>,
        cfg: LaunchConfig,
        args: (&CudaSlice<f32>, &mut CudaSlice<f32>, i32),
    ) -> std::result::Result<Approval, launch::cuda::Error> {
        // SAFETY: the caller's.
        unsafe { Typed::launch(self, k, stream, cfg, args) }
    }
}

/// The five builds, in source order (as `KERNELS`).
static BUILDS: [&dyn PolyBuild; 5] =
    [&POLY_EVAL, &POLY_EVAL_LB256, &POLY_EVAL_LB1024, &POLY_EVAL_LB256X4, &POLY_EVAL_LB1024X2];

/// Compares every element; returns how many were compared. Prints and clears `ok` on a mismatch.
fn verify(name: &str, got: &[f32], want: &[f32], ok: &mut bool) -> usize {
    let (mut unwritten, mut differ, mut worst) = (0usize, 0usize, 0.0f32);
    for (g, w) in got.iter().zip(want) {
        if g.is_nan() && !w.is_nan() {
            unwritten += 1;
        } else if g.to_bits() != w.to_bits() {
            let rel = (g - w).abs() / w.abs().max(1.0);
            worst = worst.max(rel);
            if rel > 1e-5 {
                differ += 1;
            }
        }
    }
    if unwritten > 0 || differ > 0 {
        println!("{name}: {unwritten} elements not written, {differ} differ (worst relative error {worst:e})");
        *ok = false;
    }
    got.len()
}
