//! Build-script helper of cargo-launch: compiles every CUDA kernel under `kernels/` for every GPU
//! architecture in `[package.metadata.launch]`, and embeds the cubins, the fallback PTX, each
//! kernel's launch contract and its `ptxas -v` resources in the crate.
//!
//! ```no_run
//! // build.rs
//! fn main() { launch_build::build() }
//! ```
//!
//! ```toml
//! # Cargo.toml
//! [package.metadata.launch]
//! arch = ["sm_90", "sm_100"]
//! ```
//!
//! ```text
//! // src/lib.rs or src/main.rs of the same crate (see the `launch` crate's front page)
//! launch::include_kernels!();   // one `launch::Kernel` static per kernel, plus KERNELS
//! ```
//!
//! No GPU and no CUDA install are needed: NVRTC and ptxas come from NVIDIA's PyPI wheels, which
//! `cargo launch setup` installs into a per-user cache. The build script itself never downloads.
//! A crate that ships its kernels compiled (its `launch-prebuilt/` folder, written by `cargo
//! launch prebuild`) needs not even that downstream: its build embeds them without any toolchain.
//!
//! # Pipeline
//! config → plan (the configuration applied to the kernel folder, once) → prepare (each
//! file read, its `@launch` contracts applied) → compile (NVRTC → PTX → ptxas → cubin + `-v`
//! report, through the cache) → assemble (contracts read back from the PTX, resources from the
//! report, each kernel's settings; tune variants: each grid's contracts written into that PTX,
//! ptxas alone, cached like the jobs) → link (`host` files) → embed (`OUT_DIR/launch/`). The
//! stages are launch-engine's, the crate `cargo launch` shares with this one so that the CLI does
//! exactly what the build does; this crate is the front door.
//!
//! # What triggers a rebuild
//! Cargo.toml, the kernel folder, every kernel file and every header it includes from the crate,
//! and the build-time variables of the table `cargo launch --help` prints (which also lists the
//! run-time ones). A rerun compiles only the (file, arch) jobs
//! whose content-addressed key changed, in parallel through cargo's jobserver, the longest jobs
//! first; `OUT_DIR/launch/build-stats.json` says what ran. A rerun whose every key, variable and
//! output is as the last build left them (a touched file, `LAUNCH_BUILD_DEBUG=1`) keeps the
//! outputs without reading the cache (`OUT_DIR/launch/fresh.json`).
//!
//! # Failures and warnings
//! A kernel file that does not compile does not stop the others: every job runs, and the error
//! ([`Error::Failed`]) lists every failing file in file order, once for all the arches that gave
//! the same message, with the first error's `file:line` in a summary (at most
//! [`MAX_FAILED_FILES_SHOWN`](launch_engine::error::MAX_FAILED_FILES_SHOWN) files in full; the rest are counted and named).
//! Compiler warnings (NVRTC's log, ptxas's warnings) are printed as `cargo:warning`s only for the
//! jobs compiled in this run, once per file for all the arches with the same log; a job that comes
//! from the cache printed its warnings when it compiled. The manifest keeps every warning, cached
//! jobs' included, so `cargo launch report` still lists them.
#![deny(missing_docs)]
// The one-line build.rs is the example users copy, `fn main` included.
#![allow(clippy::needless_doctest_main)]

pub use launch_engine::{build, try_build, Config, Error};
