//! Issue 14's evidence on a CUDA 13.0 driver: a cubin built by the 13.0 toolchain
//! (`fixtures/crates/gpu13`, `toolchain = "13.0"`) loads as a cubin and computes the right answer,
//! and a PTX written by NVRTC 13.5 (ISA 9.5, `fixtures/ptx/`, made by tools/gpu/make_ptx_13_5.py)
//! is refused by the driver exactly when `launch::compat`'s table says it would be.

use launch::compat::{ptx_isa_version, CudaVersion};
use launch::cuda::cudarc::driver::{LaunchConfig, PushKernelArg};
use launch::cuda::{Error, Image, Prefer};
use launch::{Arch, Module, Variant};
use launch_engine::compat::ptx_jits_on;

const SM_90: Arch = Arch::new(9, 0, Variant::Base);

use crate::{device, say};

#[test]
fn a_cuda_13_0_cubin_loads_and_runs_on_this_driver() {
    let Some(dev) = device("a_cuda_13_0_cubin_loads_and_runs_on_this_driver") else { return };
    let k = dev.load(&fixture_gpu13::AXPB13).unwrap();
    let (major, minor) = dev.info().limits.compute_capability();
    let stream = dev.context().default_stream();
    let n = 1 << 20;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let x = stream.clone_htod(&xs).unwrap();
    let y = stream.alloc_zeros::<f32>(n).unwrap();
    let cfg = LaunchConfig { grid_dim: ((n as u32).div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (a, b, n_arg) = (3.0f32, -1.0f32, n as i32);
    let mut args = k.builder(&stream);
    args.arg(&x).arg(&y).arg(&a).arg(&b).arg(&n_arg);
    // SAFETY: axpb13(const float* x, float* y, float a, float b, int n) with n floats each.
    unsafe { k.launch(&mut args, cfg) }.unwrap();
    let got = stream.clone_dtoh(&y).unwrap();
    let wrong = got.iter().zip(&xs).filter(|(g, x)| **g != a.mul_add(**x, b)).count();
    say(&format!(
        "toolchain 13.0: axpb13 loaded from {} on sm_{major}{minor}, driver {}; {n} elements, {wrong} wrong; driver: \
         {} registers, binary version {}",
        k.image(),
        dev.info().driver_version,
        k.function_info().registers,
        k.function_info().binary_version
    ));
    if (major, minor) == (9, 0) {
        assert_eq!(k.image(), Image::Cubin { arch: SM_90 }, "the 13.0 cubin, not a JIT");
    }
    assert_eq!(wrong, 0);
}

#[test]
fn a_cuda_13_5_ptx_is_refused_exactly_when_the_compatibility_table_says() {
    let Some(dev) = device("a_cuda_13_5_ptx_is_refused_exactly_when_the_compatibility_table_says") else { return };
    let ptx: &'static str = include_str!("../../fixtures/ptx/axpb135.cuda-13.5.ptx");
    let isa = ptx_isa_version(ptx).expect("the PTX names its ISA");
    assert_eq!(isa, (9, 5));
    let driver = CudaVersion::from_driver(dev.info().driver_version).unwrap();
    let predicted = ptx_jits_on(isa, driver);
    static MODULE: Module = Module {
        file: "fixtures/ptx/axpb135.cuda-13.5.ptx",
        cubins: &[],
        ptx_arch: Some(SM_90),
        ptx: "",
        extra_ptx: &[],
    };
    let module: &'static Module = Box::leak(Box::new(Module { ptx, ..MODULE }));
    let loaded = dev.load_module(module, Prefer::Auto);
    say(&format!(
        "PTX ISA {}.{} (NVRTC 13.5) on driver CUDA {}.{}: launch::compat predicts {}; the driver {}",
        isa.0,
        isa.1,
        driver.major,
        driver.minor,
        if predicted { "it loads" } else { "a refusal" },
        match &loaded {
            Ok(m) => format!("loaded it ({})", m.image()),
            Err(e) => format!("refused it: {e}"),
        }
    ));
    match loaded {
        Ok(_) => assert!(predicted, "the driver JIT-compiled a PTX the table says it cannot"),
        Err(e) => {
            assert!(!predicted, "the table says this driver JITs ISA 9.5, but: {e}");
            assert!(matches!(e, Error::PtxRejected { .. }), "{e:?}");
            assert!(e.to_string().contains("PTX ISA 9.5"), "{e}");
        }
    }
}
