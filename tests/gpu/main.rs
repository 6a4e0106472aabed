//! GPU tests of `launch::cuda`, on every kernel of the template (`poly_eval` in five builds) and of
//! `fixtures/crates/gpu` (static and dynamic shared memory, 6 and 16 barriers, launch bounds, an
//! `@launch` contract, spills).
//!
//! They build wherever the kernel crates build (NVRTC and ptxas, at build time). Without a CUDA
//! driver or GPU each test prints why it skipped and passes, unless `LAUNCH_TEST_REQUIRE_GPU=1`,
//! which makes that a failure. They live in launch-tests rather than in launch so that `cargo test
//! -p launch` needs no CUDA toolchain. To run them on a GPU machine without Rust, build here and
//! copy the binary (tools/gpu/build.sh builds and copies, tools/gpu/device.sh runs there):
//!
//! ```sh
//! cargo test -p launch-tests --release --test gpu --no-run    # prints the binary's path
//! LAUNCH_TEST_REQUIRE_GPU=1 CUDA_CACHE_DISABLE=1 ./gpu-<hash> --test-threads=1 --nocapture
//! ```

mod check_cost;
mod explore_vs_driver;
mod toolchains;
mod tuner;
mod typed;

use std::io::Write;
use std::sync::Arc;

use launch::cuda::cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use launch::cuda::{driver_error, Device, Error, Image, LoadedKernel, Prefer, Problem};
use launch::occupancy;
use launch::{Arch, Cubin, Kernel, Module, Variant};

/// Writes past the test harness's capture, so a skip is visible in a plain `cargo test`.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn require_gpu() -> bool {
    #[allow(clippy::disallowed_methods)] // a test switch, not build configuration
    let v = std::env::var_os("LAUNCH_TEST_REQUIRE_GPU");
    v.is_some_and(|v| v == "1")
}

/// The device, or `None` after printing why the test skips.
fn device(test: &str) -> Option<Device> {
    match Device::new(0) {
        Ok(d) => Some(d),
        Err(e) => {
            assert!(!require_gpu(), "{test}: LAUNCH_TEST_REQUIRE_GPU=1, but: {e}");
            say(&format!("gpu::{test}: skipped: {e}"));
            None
        }
    }
}

/// Every kernel the GPU tests load: the template's and the fixture's, and each one's build-time
/// tune variants (`poly_eval`'s grid), which the checked launch and the driver must agree on too.
fn kernels() -> Vec<&'static Kernel> {
    launch_template::KERNELS
        .iter()
        .chain(fixture_gpu::KERNELS)
        .flat_map(|k| std::iter::once(*k).chain(k.variants()))
        .collect()
}

fn is_template(k: &Kernel) -> bool {
    launch_template::KERNELS.iter().any(|t| std::ptr::eq(*t, k) || t.variants().iter().any(|v| std::ptr::eq(v, k)))
}

/// Buffers for any of the kernels: template kernels get `(x, y, 0)`, fixture kernels `(p, 4096)`.
struct Buffers {
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
    p: CudaSlice<f32>,
}

const FIXTURE_N: i32 = 4096;

impl Buffers {
    fn new(stream: &Arc<CudaStream>) -> Buffers {
        let ones = vec![1.0f32; FIXTURE_N as usize];
        Buffers {
            x: stream.clone_htod(&ones).unwrap(),
            y: stream.clone_htod(&ones).unwrap(),
            p: stream.clone_htod(&ones).unwrap(),
        }
    }
}

/// Launches `k` with `cfg`: through the check (`checked`), or straight to the driver.
fn launch(
    k: &LoadedKernel,
    stream: &Arc<CudaStream>,
    b: &mut Buffers,
    cfg: LaunchConfig,
    checked: bool,
) -> Result<(), Error> {
    let (zero, n) = (0i32, FIXTURE_N);
    let mut args = k.builder(stream);
    if is_template(k.kernel()) {
        args.arg(&b.x).arg(&mut b.y).arg(&zero);
    } else {
        args.arg(&mut b.p).arg(&n);
    }
    // SAFETY: the arguments match each kernel's parameters; template kernels with n = 0 touch
    // nothing, fixture kernels index p modulo n and shared memory modulo its size.
    if checked {
        unsafe { k.launch(&mut args, cfg) }.map(|_| ())
    } else {
        unsafe { args.launch(cfg) }.map(|_| ()).map_err(|error| Error::Driver { what: "forced launch".into(), error })
    }
}

fn one_block(block: u32, dynamic: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (1, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: dynamic }
}

#[test]
fn driver_attributes_equal_the_embedded_report() {
    let Some(dev) = device("driver_attributes_equal_the_embedded_report") else { return };
    let info = dev.info();
    say(&format!(
        "device: {} (sm_{}{}), {} SMs, driver {}; table differences: {:?}",
        info.name,
        info.limits.major,
        info.limits.minor,
        info.sms,
        info.driver_version,
        dev.table_differences()
    ));
    assert!(dev.table_differences().is_empty(), "the occupancy table's row differs from the driver");
    let mut differences = Vec::new();
    say("kernel               image        NUM_REGS  LOCAL  SHARED  MAX_THREADS  BINARY  embedded (regs/stack/smem/barriers)");
    for kernel in kernels() {
        let k = dev.load(kernel).unwrap();
        let d = k.function_info();
        let e = k.embedded().copied().unwrap_or_default();
        say(&format!(
            "{:<20} {:<12} {:>8} {:>6} {:>7} {:>12} {:>7}  {}/{}/{}/{}",
            kernel.name,
            k.image().to_string(),
            d.registers,
            d.local_bytes,
            d.shared_static,
            d.max_threads_per_block,
            d.binary_version,
            e.registers,
            e.stack_frame,
            e.shared_static,
            e.barriers
        ));
        for diff in k.cross_check() {
            differences.push(format!("{}: {diff}", kernel.name));
        }
    }
    // The runtime never needs NVRTC: cubins and PTX both go to the driver.
    if let Ok(maps) = std::fs::read_to_string("/proc/self/maps") {
        assert!(!maps.contains("libnvrtc"), "libnvrtc was loaded");
        say("libnvrtc mapped into the process: no");
    }
    say(&format!("{} kernels, {} differences", kernels().len(), differences.len()));
    assert!(differences.is_empty(), "{differences:#?}");
}

extern "C" fn no_dynamic_smem(_block: std::ffi::c_int) -> usize {
    0
}

#[test]
fn driver_occupancy_equals_ours_at_every_block_size() {
    let Some(dev) = device("driver_occupancy_equals_ours_at_every_block_size") else { return };
    let lim = dev.info().limits;
    let (mut compared, mut mismatches) = (0usize, Vec::new());
    for kernel in kernels() {
        let k = dev.load(kernel).unwrap();
        let st = k.function_info().shared_static;
        let default_max = lim.smem_per_block.saturating_sub(st);
        let optin_max = lim.smem_per_block_optin - st;
        let phases: [(Option<u32>, Vec<u32>); 2] = [
            (None, vec![0, 1, 3072, default_max, default_max + 1]),
            (Some(optin_max), vec![0, 49152u32.saturating_sub(st), 100_000, optin_max, optin_max + 1]),
        ];
        for (opt_in, sizes) in phases {
            if let Some(bytes) = opt_in {
                k.set_max_dynamic_shared(bytes).unwrap();
            }
            for &dynamic in &sizes {
                for block in 1..=1024u32 {
                    let driver = k
                        .function()
                        .occupancy_max_active_blocks_per_multiprocessor(block, dynamic as usize, None)
                        .map_err(|e| driver_error(&e));
                    let ours = k.occupancy(block, dynamic).map(|o| o.active_blocks).map_err(|e| e.to_string());
                    compared += 1;
                    if driver != ours {
                        mismatches.push(format!(
                            "{} block {block} dyn {dynamic}: driver {driver:?}, ours {ours:?}",
                            kernel.name
                        ));
                    }
                }
            }
            // cuOccupancyMaxPotentialBlockSize (no dynamic memory) against ours.
            let driver = k.function().occupancy_max_potential_block_size(no_dynamic_smem, 0, 0, None).unwrap();
            let f = k.function_info();
            let ours = occupancy::max_potential_block_size(
                &lim,
                &f.attrs(f.max_dynamic_shared),
                0,
                dev.info().sms,
                f.carveout,
            )
            .unwrap();
            compared += 1;
            if driver != ours {
                mismatches.push(format!("{} potential block size: driver {driver:?}, ours {ours:?}", kernel.name));
            }
        }
        // The full wave: blocks per SM × SMs, at the kernel's own block size.
        let block = kernel.block_size();
        let wave = k.full_wave_grid(block, 0).unwrap();
        let per_sm = k.function().occupancy_max_active_blocks_per_multiprocessor(block, 0, None).unwrap();
        assert_eq!(wave, per_sm * dev.info().sms, "{}", kernel.name);
    }
    say(&format!(
        "occupancy: {compared} driver queries on {} kernels (block sizes 1..=1024 × 5 dynamic sizes, before and after the \
         opt-in, plus the potential block size), {} mismatches",
        kernels().len(),
        mismatches.len()
    ));
    assert!(mismatches.is_empty(), "{:#?}", &mismatches[..mismatches.len().min(50)]);
}

#[derive(Default)]
struct Sweep {
    approved: usize,
    rejected_refused: usize,
    contract_only: usize,
    by_problem: std::collections::BTreeMap<String, usize>,
    disagreements: Vec<String>,
}

impl Sweep {
    /// Checks `cfg`; runs approved launches through the check and forces rejected ones past it.
    fn case(&mut self, k: &LoadedKernel, stream: &Arc<CudaStream>, b: &mut Buffers, cfg: LaunchConfig) {
        let name = k.kernel().name;
        match k.check(&cfg) {
            Ok(_) => {
                self.approved += 1;
                let r = launch(k, stream, b, cfg, true).and_then(|()| {
                    stream.synchronize().map_err(|error| Error::Driver { what: "synchronize".into(), error })
                });
                if let Err(e) = r {
                    self.disagreements.push(format!("{name} {cfg:?}: approved, but {e}"));
                }
            }
            Err(Error::Launch(e)) => {
                *self.by_problem.entry(format!("{:?}", e.problem)).or_default() += 1;
                // Forced: first the opt-in the launch would need, then the launch itself.
                let mut refused = false;
                if cfg.shared_mem_bytes > k.function_info().max_dynamic_shared {
                    refused = k.set_max_dynamic_shared(cfg.shared_mem_bytes).is_err();
                }
                if !refused {
                    refused = launch(k, stream, b, cfg, false).is_err();
                    stream.synchronize().expect("a forced launch left the context unusable");
                }
                match (refused, e.problem.driver_refuses()) {
                    (true, _) => self.rejected_refused += 1,
                    (false, false) => self.contract_only += 1,
                    (false, true) => {
                        self.disagreements.push(format!("{name} {cfg:?}: rejected ({e}), but the driver ran it"))
                    }
                }
                if e.problem == Problem::ContractExact && cfg.block_dim.0 > k.kernel().block_size() && !refused {
                    self.disagreements
                        .push(format!("{name} {cfg:?}: above the @launch threads, but the driver ran it"));
                }
            }
            Err(other) => self.disagreements.push(format!("{name} {cfg:?}: {other}")),
        }
    }
}

#[test]
fn approved_launches_run_and_rejected_ones_are_refused() {
    let Some(dev) = device("approved_launches_run_and_rejected_ones_are_refused") else { return };
    let lim = dev.info().limits;
    let stream = dev.context().default_stream();
    let mut b = Buffers::new(&stream);
    let mut sweep = Sweep::default();
    for kernel in kernels() {
        let k = dev.load(kernel).unwrap();
        let st = k.function_info().shared_static;
        let default_max = lim.smem_per_block.saturating_sub(st);
        let optin_max = lim.smem_per_block_optin - st;
        let mut sizes = vec![
            0,
            1,
            1024,
            default_max,
            default_max + 1,
            65536,
            100_000,
            optin_max,
            optin_max + 1,
            lim.smem_per_block_optin,
            lim.smem_per_sm,
        ];
        sizes.sort_unstable();
        sizes.dedup();
        for &dynamic in &sizes {
            for block in 1..=1024 {
                sweep.case(&k, &stream, &mut b, one_block(block, dynamic));
            }
        }
    }
    // Block shapes and grids, on the smallest kernel.
    let tiny = dev.load(&fixture_gpu::TINY).unwrap();
    let max_x = dev.info().max_grid_dim[0];
    type Dim = (u32, u32, u32);
    let shapes: &[(Dim, Dim)] = &[
        ((0, 1, 1), (1, 1, 1)),
        ((1, 0, 1), (1, 1, 1)),
        ((1, 1, 64), (1, 1, 1)),
        ((1, 1, 65), (1, 1, 1)),
        ((1, 1024, 1), (1, 1, 1)),
        ((1, 1025, 1), (1, 1, 1)),
        ((32, 32, 1), (1, 1, 1)),
        ((33, 32, 1), (1, 1, 1)),
        ((16, 8, 8), (1, 1, 1)),
        ((16, 8, 9), (1, 1, 1)),
        ((1025, 1, 1), (1, 1, 1)),
        ((32, 1, 1), (0, 1, 1)),
        ((32, 1, 1), (1, 0, 1)),
        ((32, 1, 1), (1, 65535, 1)),
        ((32, 1, 1), (1, 65536, 1)),
        ((32, 1, 1), (1, 1, 65535)),
        ((32, 1, 1), (1, 1, 65536)),
        ((32, 1, 1), (max_x.saturating_add(1), 1, 1)),
        ((32, 1, 1), (u32::MAX, 1, 1)),
        ((256, 1, 1), (1 << 20, 1, 1)),
    ];
    for &(block, grid) in shapes {
        sweep.case(&tiny, &stream, &mut b, LaunchConfig { grid_dim: grid, block_dim: block, shared_mem_bytes: 0 });
    }
    let total = sweep.approved + sweep.rejected_refused + sweep.contract_only + sweep.disagreements.len();
    say(&format!(
        "launch sweep: {total} launches on {} kernels: {} approved and run, {} rejected and refused by the driver when \
         forced, {} rejected by an @launch contract only (fewer threads than declared: the driver runs those), {} \
         disagreements; rejections by rule: {:?}",
        kernels().len(),
        sweep.approved,
        sweep.rejected_refused,
        sweep.contract_only,
        sweep.disagreements.len(),
        sweep.by_problem
    ));
    assert!(sweep.disagreements.is_empty(), "{:#?}", &sweep.disagreements[..sweep.disagreements.len().min(50)]);
}

#[test]
fn cubin_loads_in_a_fraction_of_the_ptx_jit() {
    let Some(dev) = device("cubin_loads_in_a_fraction_of_the_ptx_jit") else { return };
    let stream = dev.context().default_stream();
    let mut b = Buffers::new(&stream);
    let modules: Vec<&'static Module> = vec![launch_template::POLY_EVAL.module, fixture_gpu::TINY.module];
    let mut sweep = Sweep::default();
    for m in modules {
        let Ok(cubin) = dev.load_module(m, Prefer::Cubin) else {
            say(&format!("{}: no cubin for this device", m.file));
            continue;
        };
        let cubin_ms: Vec<f64> = std::iter::once(cubin.load_time())
            .chain((0..4).map(|_| dev.load_module(m, Prefer::Cubin).unwrap().load_time()))
            .map(|d| d.as_secs_f64() * 1e3)
            .collect();
        let jit = dev.load_module(m, Prefer::Ptx).unwrap();
        let jit_ms = jit.load_time().as_secs_f64() * 1e3;
        let mut sorted = cubin_ms.clone();
        sorted.sort_by(f64::total_cmp);
        say(&format!(
            "{}: cubin ({}) load {:.3} ms (median of 5: {:?}), PTX JIT ({}) {:.1} ms: {:.0}× slower",
            m.file,
            cubin.image(),
            sorted[2],
            cubin_ms.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>(),
            jit.image(),
            jit_ms,
            jit_ms / sorted[2]
        ));
        assert!(matches!(jit.image(), Image::Ptx { .. }));
        // The JIT-compiled kernels: consistent attributes, and the same launch verdicts.
        for kernel in kernels().into_iter().filter(|k| std::ptr::eq(k.module, m)) {
            let k = jit.kernel(kernel).unwrap();
            assert!(k.cross_check().is_empty(), "{}: {:?}", kernel.name, k.cross_check());
            say(&format!(
                "  {:<20} JIT: {} registers, {} B local, max {} threads (cubin: {:?} registers)",
                kernel.name,
                k.function_info().registers,
                k.function_info().local_bytes,
                k.function_info().max_threads_per_block,
                kernel.resources_on(cubin.image().arch()).map(|r| r.registers)
            ));
            for block in 1..=1024 {
                sweep.case(&k, &stream, &mut b, one_block(block, 0));
            }
        }
    }
    say(&format!(
        "JIT-compiled sweep: {} approved and run, {} refused when forced, {} contract-only, {} disagreements",
        sweep.approved,
        sweep.rejected_refused,
        sweep.contract_only,
        sweep.disagreements.len()
    ));
    assert!(sweep.disagreements.is_empty(), "{:#?}", sweep.disagreements);
}

#[test]
fn a_ptx_the_driver_cannot_take_is_an_error_naming_what_is_embedded() {
    let Some(dev) = device("a_ptx_the_driver_cannot_take_is_an_error_naming_what_is_embedded") else { return };
    let real = launch_template::POLY_EVAL.module;
    let cc = dev.info().limits.compute_capability();
    // Only cubins for another arch, and a PTX whose ISA no driver knows yet.
    let other: &'static [Cubin] = Box::leak(
        real.cubins
            .iter()
            .filter(|c| c.arch.compute_capability() != cc)
            .map(|c| Cubin { arch: c.arch, bytes: c.bytes })
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let ptx = real
        .ptx
        .lines()
        .map(|l| if l.trim_start().starts_with(".version") { ".version 9.9" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let fake: &'static Module = Box::leak(Box::new(Module {
        file: "kernels/poly.cu",
        cubins: other,
        ptx_arch: real.ptx_arch,
        ptx: Box::leak(ptx.into_boxed_str()),
        extra_ptx: &[],
    }));
    let e = dev.load_module(fake, Prefer::Auto).unwrap_err();
    say(&format!("PTX ISA 9.9: {e}"));
    assert!(matches!(e, Error::PtxRejected { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("PTX ISA 9.9") && text.contains("cannot JIT"), "{text}");
    for c in other {
        assert!(text.contains(&c.arch.to_string()), "{text}");
    }
    // A PTX newer than the device never reaches the driver.
    let newer: &'static Module = Box::leak(Box::new(Module {
        file: "kernels/new.cu",
        cubins: &[],
        ptx_arch: Some(Arch::new(12, 1, Variant::Base)),
        ptx: real.ptx,
        extra_ptx: &[],
    }));
    let e = dev.load_module(newer, Prefer::Auto).unwrap_err();
    say(&format!("PTX for a newer arch: {e}"));
    assert!(matches!(e, Error::NoImage(_)), "{e:?}");
}

#[test]
fn template_kernels_compute_the_reference_through_checked_launches() {
    let Some(dev) = device("template_kernels_compute_the_reference_through_checked_launches") else { return };
    let stream = dev.context().default_stream();
    let n = 1 << 16;
    let mut rng = launch_template::SplitMix64(launch_template::fresh_seed());
    for kernel in launch_template::KERNELS {
        let k = dev.load(kernel).unwrap();
        let xs = rng.floats(n);
        let mut want = vec![0.0; n];
        launch_template::poly_eval_cpu(&xs, &mut want);
        let x = stream.clone_htod(&xs).unwrap();
        let mut y = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
        let block = kernel.block_size();
        let cfg = LaunchConfig {
            grid_dim: ((n as u32).div_ceil(block), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let n_arg = n as i32;
        let mut args = k.builder(&stream);
        args.arg(&x).arg(&mut y).arg(&n_arg);
        // SAFETY: (const float*, float*, int) with n elements each.
        unsafe { k.launch(&mut args, cfg) }.unwrap();
        let got = stream.clone_dtoh(&y).unwrap();
        let exact = got.iter().zip(&want).filter(|(g, w)| g.to_bits() == w.to_bits()).count();
        let off =
            got.iter().zip(&want).filter(|(g, w)| g.is_nan() || (*g - *w).abs() > 1e-5 * w.abs().max(1.0)).count();
        say(&format!(
            "{} at {block} threads: {n} elements, {exact} bit-identical to the CPU, {off} off by more than 1e-5 (or unwritten)",
            kernel.name
        ));
        assert_eq!(off, 0, "{}", kernel.name);
    }
    // The article's trap is refused before the driver sees it.
    let k = dev.load(&launch_template::POLY_EVAL).unwrap();
    let e = k.check(&one_block(512, 0)).unwrap_err();
    say(&format!("512 threads: {e}"));
}

#[test]
fn a_missing_driver_or_device_is_an_error_not_a_panic() {
    match Device::new(0) {
        Err(Error::NoDriver { tried }) => {
            assert!(tried.iter().any(|t| t.contains("cuda")));
            let text = Error::NoDriver { tried }.to_string();
            assert!(text.starts_with("no CUDA driver"), "{text}");
            say(&format!("gpu::a_missing_driver_or_device_is_an_error_not_a_panic: no driver here: {text}"));
        }
        Err(e) => say(&format!("gpu::a_missing_driver_or_device_is_an_error_not_a_panic: driver but no device: {e}")),
        Ok(_) => {
            let e = Device::new(4096).unwrap_err();
            say(&format!("device 4096: {e}"));
            assert!(matches!(e, Error::Driver { .. }), "{e:?}");
        }
    }
}

#[test]
fn an_arch_gated_kernel_is_jit_compiled_from_the_lowest_ptx_that_has_it() {
    let Some(dev) = device("an_arch_gated_kernel_is_jit_compiled_from_the_lowest_ptx_that_has_it") else { return };
    let stream = dev.context().default_stream();
    // Built for sm_80 and sm_89 only: on a 9.0 device neither cubin loads, so both kernels are
    // JIT-compiled, each from the lowest PTX that has it.
    let cases: [(&'static Kernel, &str, f32); 2] =
        [(&fixture_gated_gpu::EVERYWHERE, "sm_80", 1.0), (&fixture_gated_gpu::ADA_AND_NEWER, "sm_89", 2.0)];
    assert_eq!(
        fixture_gated_gpu::ADA_AND_NEWER.resources.iter().map(|r| r.arch.to_string()).collect::<Vec<_>>(),
        ["sm_89"]
    );
    for (kernel, ptx_arch, mark) in cases {
        let k = dev.load(kernel).unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
        say(&format!("{}: loaded from {} ({})", kernel.name, k.image(), k.device().arch()));
        if dev.info().limits.compute_capability() >= (9, 0) {
            assert!(k.image().is_jit(), "{}: {}", kernel.name, k.image());
            assert_eq!(k.image().arch().to_string(), ptx_arch, "{}", kernel.name);
        }
        let n = 1000i32;
        let mut p = stream.alloc_zeros::<f32>(n as usize).unwrap();
        let cfg = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut args = k.builder(&stream);
        args.arg(&mut p).arg(&n);
        // SAFETY: (float* p, int n) with n floats at p; the kernel writes p[i] for i < n only.
        unsafe { k.launch(&mut args, cfg) }.unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
        let host = stream.clone_dtoh(&p).unwrap();
        assert!(host.iter().all(|&v| v == mark), "{}: {:?}", kernel.name, &host[..4]);
    }
}
