//! Runtime side of cargo-launch: the kernels a crate's build embedded (`launch::Kernel`, with
//! each one's launch contract and its `ptxas -v` resources per arch), the exact occupancy model
//! (`occupancy`), why a launch cannot run (`failure`), the driver compatibility table (`compat`)
//! and, with feature `cudarc`, loading and contract-checked launching on a GPU (`cuda`), so that
//! "too many resources requested for launch" (error 701) is refused with the arithmetic before
//! the driver sees the launch.
//!
//! This is the crate a user's binary links, and it holds only what runs there: the static
//! analysis `cargo launch` runs on the same numbers is the crate `launch-analysis`, the JSON
//! documents the tools write are `launch-schema`.
//!
//! A crate whose `build.rs` is `fn main() { launch_build::build() }` includes its kernels with one
//! line, `launch::include_kernels!();`, which gives one static per kernel
//! (`kernels::poly::POLY_EVAL`, one module per `.cu` file; `POLY_EVAL` re-exported where no other
//! file has a kernel of that Rust name) and `KERNELS: &[&launch::Kernel]`:
//!
//! ```
//! # fn main() -> Result<(), launch::FindError> {
//! # // What `launch::include_kernels!()` generates for kernels/poly.cu (abridged, no images):
//! # static MODULE: launch::Module = launch::Module {
//! #     file: "kernels/poly.cu", cubins: &[], ptx: "", extra_ptx: &[],
//! #     ptx_arch: Some(launch::Arch::new(9, 0, launch::Variant::Base)),
//! # };
//! # static POLY_EVAL: launch::Kernel = launch::Kernel {
//! #     name: "poly_eval", demangled: "poly_eval", line: 1, module: &MODULE, contract: None,
//! #     host_threads: 256, resources: &[], variants: &[], params: None,
//! # };
//! # static KERNELS: &[&launch::Kernel] = &[&POLY_EVAL];
//! let k = launch::find(KERNELS, "kernels/poly.cu::poly_eval")?; // or "poly_eval" when unique
//! assert_eq!(k.block_size(), 256); // no contract: the `threads` of [package.metadata.launch]
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//! * `cudarc`: module `cuda` — load the embedded cubins (or the PTX, JIT-compiled by the driver) and
//!   launch them with the contract checked, and the tuner. cudarc loads the driver dynamically: a
//!   binary built with it starts on machines without a GPU and reports the absence as an error.
//! * `serde`: serde's traits on the shared types (`Arch`, `Contract`, `Resources`, `LaunchFailure`,
//!   the occupancy limiters) that launch-schema's documents carry; never needed by a user's binary.
//! * `json-schema` (implies `serde`): `schemars::JsonSchema` on the same types, for the JSON
//!   Schemas of those documents.
//! * `remote-store`: the S3 and WebDAV stores of the remote store (crate `launch-remote`, here
//!   `remote`; OpenDAL), through which the tune cache (`LAUNCH_TUNE_CACHE_REMOTE=s3://…`) and
//!   launch-build's kernel cache share entries across a fleet. Without it `remote` has the
//!   `file://` store only, and no dependency.
//!
//! This crate has no build-time dependencies, so a user's binary never links toml or
//! cargo_metadata; without features it compiles only itself and `launch-remote` (no dependency).
#![deny(missing_docs)]
// Tests may be long tables of cases; the 100-line limit is for the code they test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod arch;
pub mod compat;
#[cfg(feature = "cudarc")]
pub mod cuda;
pub mod failure;
pub mod kernel;
pub mod occupancy;
pub mod signature;
/// The remote store behind the tune cache, which launch-build's kernel cache shares: the crate
/// `launch-remote`, re-exported because [`tune::TuneCache::with_remote`] takes its `RemoteStore`.
pub use launch_remote as remote;
#[cfg(test)]
mod test_dir;
pub mod tune;
pub mod types;

pub use arch::{Arch, ArchParseError, Variant, KNOWN_ARCHES};
pub use kernel::{
    find, ArchResources, Contract, ContractSource, Cubin, FindError, Kernel, Module, Param, ParamKind, PtxText,
    Resources,
};
pub use signature::{Signature, Typed};

/// Includes the module `launch-build` generated in `OUT_DIR` (`$OUT_DIR/launch/kernels.rs`).
#[macro_export]
macro_rules! include_kernels {
    () => {
        include!(concat!(env!("OUT_DIR"), "/launch/kernels.rs"));
    };
}
