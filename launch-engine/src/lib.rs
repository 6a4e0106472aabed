//! The engine behind `launch-build` (a kernel crate's build script) and `cargo launch`: the build
//! pipeline — config → plan → prepare → compile → assemble → link → embed, the modules of
//! `pipeline` — with the kernel cache, the toolchain's discovery and install, and the tools the
//! CLI shares with the build (`tooling`), so that the CLI does exactly what the build does.
//!
//! Not a stable API: a build script uses `launch-build`, whose front door (`build`, `try_build`,
//! `Config`, `Error`) is re-exported from here; `cargo-launch` and the project's tests use the
//! rest, at the same version.
#![deny(missing_docs)]
// The one-line build.rs is the example users copy, `fn main` included.
#![allow(clippy::needless_doctest_main)]
// Tests may be long tables of cases; the 100-line limit is for the code they test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod assemble;
mod cache;
mod cargo_directives;
pub mod compat;
mod compile;
pub mod config;
mod contract;
mod diagnostics_file;
mod driver;
mod elf;
mod embed;
mod env;
pub mod error;
mod fresh;
mod headers;
mod input;
mod library_headers;
mod lineinfo;
mod link;
mod names;
mod nvrtc;
mod out;
mod pipeline;
mod plan;
pub mod prebuilt;
mod prepare;
mod process;
mod ptx;
mod ptxas_log;
pub mod quantity;
mod signature;
mod source;
mod stack;
mod suggest;
mod timeouts;
mod toolchain;
mod variants;
mod warnings;

#[cfg(test)]
mod fuzz;

use std::path::PathBuf;

pub use config::Config;
pub use error::Error;
pub use launch_schema::manifest::Manifest;

/// What `cargo launch` and the project's end-to-end tests use besides the build: the one
/// environment reader, the toolchain's discovery and pinned install, NVRTC's arch list, the tool
/// runner, the atomic writer, the demangler and the contract variants. Shared so the CLI does
/// exactly what the build does; not a stable API for other users.
pub mod tooling {
    pub use crate::compile::host::host_compiler;
    pub use crate::env::{accepted_values, value_kind, var, Env, EnvVar, ValueKind, ALL, DOCUMENTED};
    pub use crate::names::demangle;
    pub use crate::nvrtc::Nvrtc;
    pub use crate::out::write_if_changed;
    pub use crate::process::Tool;

    /// This machine's CUDA driver version, when a driver library loads (`cargo launch doctor`).
    pub mod driver {
        pub use crate::driver::{version, DriverVersion};
    }

    /// What a crate's build says for a toolchain error a command met before building: the stale
    /// prebuilt folder's error, as `cargo build` gives it, where it has one.
    pub use crate::pipeline::explain_no_toolchain;

    /// `OUT_DIR/launch`-relative path of a kernel file's PTX for one arch, written when the build
    /// runs with `LAUNCH_ALL_PTX=1` (as `cargo launch explore` builds).
    pub use crate::assemble::all_ptx_path;

    /// Finding and installing the CUDA toolchain.
    pub mod toolchain {
        pub use crate::toolchain::{
            at, cache_dir, damage, discover, discover_for, library_dir, library_include, library_installed, on_path,
            pin, pin_dir, pinned_dir, python, Origin, Pin, Role, Toolchain, PINNED_VERSION,
        };
    }

    /// A kernel file compiled again with source-line information, and nvdisasm to read it
    /// (`cargo launch report --spills`); never part of the build.
    pub mod lineinfo {
        pub use crate::lineinfo::nvdisasm;
        pub use crate::lineinfo::{Compiled, Recompiler};
    }

    /// The local kernel cache for `cargo launch cache`: its size (`usage`), its limit
    /// (`parse_size`, `Env::cache_max_size`), pruning and clearing, and the build log.
    pub mod cache {
        pub use crate::cache::build_log::{read as build_log, read_counted as build_log_counted, BuildRecord, Log};
        pub use crate::cache::limit::{clear, format_size, parse_size, prune, usage, Pruned, Usage, DEFAULT_MAX_SIZE};
        pub use crate::cache::remote::{
            Mode as RemoteMode, RemoteConfig, RemoteUrl, DEFAULT_TIMEOUT as REMOTE_TIMEOUT,
        };
    }

    /// Trying launch contracts on a kernel's PTX with ptxas alone (`cargo launch explore`):
    /// [`with_contract`](variants::with_contract) writes a contract into one entry's PTX,
    /// [`assemble_variants`](variants::assemble_variants) runs ptxas once per contract, each run
    /// through the build's kernel cache ([`KernelCache`](variants::KernelCache)).
    pub mod variants {
        pub use crate::ptx::{keep_entry, with_contract, PtxEditError};
        pub use crate::variants::{assemble_variants, Assembled, CacheUse, KernelCache, Options, PtxKernel, Variant};
    }
}

use env::{var, Env};

/// Compiles the crate's kernels; on failure prints the error and exits the build script with
/// status 1. Use [`try_build`] to handle the error yourself.
pub fn build() {
    if let Err(e) = try_build() {
        eprintln!("error: launch-build: {}", launch_remote::redact(&e.to_string()));
        std::process::exit(1);
    }
}

/// Compiles the crate's kernels and writes `OUT_DIR/launch/`. Returns the manifest.
///
/// # Errors
/// A configuration error, a missing toolchain, a kernel that does not compile, or an I/O error.
/// Nothing under `OUT_DIR` is changed unless every kernel compiled, except
/// `OUT_DIR/launch/diagnostics.json`: a failed build writes the error's located problems there
/// ([`Error::diagnostics`]) for `cargo launch check` and editors; a successful one removes it.
pub fn try_build() -> Result<Manifest, Error> {
    let env = Env::build_script();
    let manifest_dir =
        PathBuf::from(env.get(var::CARGO_MANIFEST_DIR).ok_or(Error::NotBuildScript(var::CARGO_MANIFEST_DIR.name))?);
    let out_dir = PathBuf::from(env.get(var::OUT_DIR).ok_or(Error::NotBuildScript(var::OUT_DIR.name))?);
    let launch_dir = out_dir.join("launch");
    let result = pipeline::build_crate(&env, &manifest_dir, &launch_dir);
    match &result {
        // Best effort both ways: the build's result is what must reach the user, not a failure to
        // write or remove this copy of its errors.
        Ok(_) => {
            if let Err(e) = diagnostics_file::remove_diagnostics(&launch_dir) {
                cargo_directives::launch_build_warning(&e.to_string());
            }
        }
        Err(e) => {
            let package = env.get(var::CARGO_PKG_NAME).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
            // Set by `cargo launch` for its own builds only; its entry does not rerun the script.
            let run = env.get(var::LAUNCH_RUN_ID).map(|r| r.to_string_lossy().into_owned());
            let _ = diagnostics_file::write_diagnostics(&launch_dir, &manifest_dir, &package, run, e);
        }
    }
    result
}
