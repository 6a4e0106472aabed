//! Launches the embedded `poly_eval` cubin through cudarc and checks it against the CPU.
//!
//! `cargo launch report` needs no GPU; running this binary does.

launch::include_kernels!();

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

/// The kernel's arithmetic, on the CPU.
fn poly_eval_cpu(v: f32) -> f32 {
    const N: usize = 128;
    let mut acc: Vec<f32> = (0..N).map(|k| v * (k as f32 + 1.0)).collect();
    for _ in 0..8 {
        for k in 0..N {
            acc[k] = acc[k].mul_add(v, acc[(k + 7) & (N - 1)]);
        }
    }
    acc.iter().sum()
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    for k in KERNELS {
        println!("{:<20} block {:>4}  contract {:?}", k.name, k.block_size(), k.contract.map(|c| c.threads));
    }
    // SAFETY: only tries to dlopen libcuda; cudarc would panic on first use without it.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda) on this machine: `cargo launch report` works without a GPU, running kernels does not".into());
    }
    let ctx = CudaContext::new(0)?;
    let (major, minor) = ctx.compute_capability()?;
    let arch = format!("sm_{major}{minor}");
    let kernel = &POLY_EVAL;
    let module = match kernel.cubin(&arch) {
        Some(c) => ctx.load_module(Ptx::from_binary(c.bytes.to_vec()))?,
        None => ctx.load_module(Ptx::from_src(kernel.module.ptx))?,
    };
    let f = module.load_function(kernel.name)?;
    let stream = ctx.default_stream();
    let n: usize = 1 << 20;
    let host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 / 1000.0 - 0.5).collect();
    let x = stream.clone_htod(&host)?;
    let mut y = stream.alloc_zeros::<f32>(n)?;
    let block = kernel.block_size();
    let cfg =
        LaunchConfig { grid_dim: ((n as u32).div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    let n_arg = n as i32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&x).arg(&mut y).arg(&n_arg);
    // SAFETY: the kernel takes (const float*, float*, int) and reads/writes n elements.
    unsafe { launch.launch(cfg) }?;
    let out = stream.clone_dtoh(&y)?;
    let bad = host
        .iter()
        .zip(&out)
        .filter(|(v, g)| (poly_eval_cpu(**v) - **g).abs() > 1e-3 * poly_eval_cpu(**v).abs().max(1.0))
        .count();
    println!("{} on {arch}: {n} elements, {bad} mismatches", kernel.name);
    if bad > 0 {
        return Err(format!("{bad} elements differ from the CPU reference").into());
    }
    Ok(())
}
