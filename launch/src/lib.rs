//! Runtime side of cargo-launch.
//!
//! A crate whose `build.rs` is `fn main() { launch_build::build() }` includes its kernels with
//! one line:
//!
//! ```ignore
//! launch::include_kernels!();
//! // now: kernels::poly::POLY_EVAL (one module per .cu file), POLY_EVAL (re-exported where
//! // no other file has a kernel of that Rust name), KERNELS: &[&launch::Kernel]
//! let k = launch::find(KERNELS, "kernels/poly.cu::poly_eval")?; // or "poly_eval" when unique
//! ```
//!
//! This crate has no build-time dependencies, so a user's binary never links toml or
//! cargo_metadata.
#![deny(missing_docs)]
// Tests may be long tables of cases; the 100-line limit is for the code they test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod analysis;
pub mod arch;
pub mod compat;
#[cfg(feature = "cudarc")]
pub mod cuda;
pub mod gpus;
pub mod kernel;
pub mod occupancy;
pub mod quantity;
#[cfg(feature = "serde")]
pub mod schema;
pub mod tune;

pub use arch::{Arch, ArchParseError, Variant, KNOWN_ARCHES};
pub use kernel::{find, ArchResources, Contract, ContractSource, Cubin, FindError, Kernel, Module, PtxText, Resources};

/// Includes the module `launch-build` generated in `OUT_DIR` (`$OUT_DIR/launch/kernels.rs`).
#[macro_export]
macro_rules! include_kernels {
    () => {
        include!(concat!(env!("OUT_DIR"), "/launch/kernels.rs"));
    };
}
