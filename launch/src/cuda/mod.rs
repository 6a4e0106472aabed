//! Loading the embedded kernels through [cudarc] and launching them with the contract checked
//! (feature `cudarc`).
//!
//! ```no_run
//! use launch::cuda::{cudarc::driver::LaunchConfig, Device};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # static MODULE: launch::Module = launch::Module {
//! #     file: "kernels/poly.cu", cubins: &[], ptx: "", extra_ptx: &[],
//! #     ptx_arch: Some(launch::Arch::new(9, 0, launch::Variant::Base)),
//! # };
//! # static POLY_EVAL__KERNEL: launch::Kernel = launch::Kernel {
//! #     name: "poly_eval", demangled: "poly_eval", line: 1, module: &MODULE, contract: None,
//! #     host_threads: 256, resources: &[], variants: &[], params: None,
//! # };
//! # #[allow(non_camel_case_types)] enum POLY_EVAL {}
//! # impl launch::Signature for POLY_EVAL { type Params = (*const f32, *mut f32, i32); const KERNEL: &'static str = "poly_eval"; }
//! # static POLY_EVAL: launch::Typed<POLY_EVAL> = unsafe { launch::Typed::new(&POLY_EVAL__KERNEL) };
//! # let (host, n) = (vec![1.0f32; 1 << 20], 1usize << 20);
//!
//! let dev = Device::new(0)?;                  // Err (never a panic) without a driver or GPU
//! let k = dev.load(&POLY_EVAL)?;              // the sm_90 cubin on an H200, else the PTX (JIT)
//! let stream = dev.context().default_stream();
//! let (x, mut y) = (stream.clone_htod(&host)?, stream.alloc_zeros::<f32>(n)?);
//! let cfg = LaunchConfig { grid_dim: (n.div_ceil(256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
//! // poly_eval(const float* x, float* y, int n): the tuple is held to it when this compiles.
//! // SAFETY: poly_eval touches elements below n only, and both buffers hold n.
//! unsafe { POLY_EVAL.launch(&k, &stream, cfg, (&x, &mut y, n as i32)) }?; // a 512-thread block is refused here
//! # Ok(())
//! # }
//! ```
//!
//! * **Loading** ([`Device::load`]): a cubin that runs on the device's compute capability (its
//!   major version, same or older minor; `a` builds only on their own chip), else the PTX, which the driver JIT-compiles; a PTX the
//!   driver cannot take is an error naming the embedded arches and the PTX ISA version. cudarc is
//!   loaded dynamically and only after [`driver_present`] says `libcuda` loads, so a missing
//!   driver is [`Error::NoDriver`]. NVRTC is never loaded: cubins and PTX both go to the driver.
//! * **Typed launches** ([`crate::Typed::launch`]): the arguments as one tuple the compiler holds
//!   to the kernel's parameters ([`crate::signature`] has the mapping); the untyped builder
//!   ([`LoadedKernel::builder`], then [`LoadedKernel::launch`]) is the `unsafe` escape hatch. The
//!   loaded function's parameters are compared with the recorded ones at load time.
//! * **Launching** ([`LoadedKernel::launch`], [`LoadedKernel::check`]): the block against the
//!   device, the contract (`@launch` exactly, `__launch_bounds__` at most) and the driver's
//!   `MAX_THREADS_PER_BLOCK`; dynamic shared memory against the opt-in limit (raising the
//!   function's limit when needed); resident blocks by the occupancy calculator; the grid. A
//!   refusal is a [`LaunchError`] with the arithmetic `cargo launch check` prints.
//!   The last approved block, dynamic size and limit are remembered per loaded kernel, so a
//!   repeated launch costs a comparison (memo.rs).
//! * **Tuning** ([`Tuner`]): times a kernel's variants with CUDA events, ranks them, rejects the
//!   ones a correctness hook refuses, and remembers the winner on disk ([`crate::tune`]).
//! * **Helpers**: [`LoadedKernel::full_wave_grid`], [`LoadedKernel::occupancy`],
//!   [`LoadedKernel::cross_check`], [`Device::load_module`] (timed, uncached loads).

pub use cudarc;

mod check;
mod device;
mod error;
mod image;
mod kernel;
mod memo;
mod param_check;
mod tuner;
mod typed;

pub use check::{check_launch, Approval, DeviceInfo, FunctionInfo, LaunchError, Problem};
pub use device::{driver_present, Device};
pub use error::{driver_error, Error};
pub use image::{Image, NoImage, Prefer};
pub use kernel::{Difference, LoadedKernel, LoadedModule};
pub use tuner::{
    Chosen, Progress, Recall, Row, Statistic, Status, Timing, TuneError, TuneReport, Tuned, Tuner, Verdict,
};
pub use typed::{Arg, Args};
