//! The tuner's memory: which variant of a kernel won on which device for which problem, kept on
//! disk between runs (no GPU needed: the timing itself belongs to the tuner, `launch::cuda::Tuner`,
//! feature `cudarc`, which reads and writes this cache).
//!
//! ```
//! use launch::tune::{DeviceKey, TuneCache, TuneKey, TunePolicy, Winner};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # static MODULE: launch::Module = launch::Module {
//! #     file: "kernels/poly.cu", cubins: &[], ptx: "", extra_ptx: &[],
//! #     ptx_arch: Some(launch::Arch::new(9, 0, launch::Variant::Base)),
//! # };
//! # static POLY_EVAL: launch::Kernel = launch::Kernel {
//! #     name: "poly_eval", demangled: "poly_eval", line: 1, module: &MODULE, contract: None,
//! #     host_threads: 256, resources: &[], variants: &[], params: None,
//! # };
//! # let dir = std::env::temp_dir().join(format!("launch-tune-doc-{}", std::process::id()));
//! let policy = TunePolicy::from_env()?;            // LAUNCH_TUNE=off|cached|always
//! let cache = TuneCache::new(&dir);                // or TuneCache::from_env()?: LAUNCH_TUNE_CACHE_DIR, else ~/.cache/cargo-launch/tune
//! // With feature `cudarc`: DeviceKey::from(dev.info()).
//! let device = DeviceKey { name: "NVIDIA H200".into(), compute_capability: (9, 0), driver_version: 13000 };
//! let variants: Vec<&launch::Kernel> = POLY_EVAL.variants().iter().collect();
//! let key = TuneKey::new(&POLY_EVAL, &variants, device, "n<=2^20");
//! match cache.get(&key) {
//!     Ok(winner) if policy.reads() => println!("load {}", winner.variant),
//!     _ => {
//!         // Time the variants, then remember the fastest:
//!         let winner = Winner { variant: "poly_eval".into(), median_ms: 1.0, min_ms: 0.9, max_ms: 1.2, repetitions: 30, measured_at: 0 };
//!         cache.put(&key, &winner)?;
//!     }
//! }
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```
//!
//! * **The key** ([`TuneKey`]): the kernel's content hash (its name and its
//!   module's images), the variant set's hash (names and contracts), the device's
//!   name, compute capability and driver version, and the caller's problem key. A change in any
//!   part is a miss.
//! * **The store** ([`TuneCache`]): one versioned text file per key, named by the key's hash and
//!   holding the whole key, so a hash collision reads as a miss, and a checksum of its lines, so an
//!   edited or damaged file reads as [`Miss::Damaged`]. Written to a temporary file and
//!   renamed into place; read with a size bound, never blocking on a FIFO. A file that cannot be
//!   read as a result is [`Miss::Damaged`] and is replaced by the next [`TuneCache::put`].
//!
//! * **A fleet** ([`TuneCache::with_remote`], `LAUNCH_TUNE_CACHE_REMOTE`): a remote store behind
//!   the local folder, read after it and written with it (never when
//!   `LAUNCH_TUNE_CACHE_REMOTE_MODE` is `ro`), so machines with the same GPU model and driver tune
//!   once. It is [`crate::remote`], the store launch-build's kernel cache uses, with the same URLs
//!   (`s3://bucket/prefix?endpoint=…`, `webdav+https://…`, `file:///folder` or an absolute
//!   folder), the same read-only mode and timeouts (`LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT`); S3 and
//!   WebDAV need this crate's `remote-store` feature (without it such a URL is one warning naming
//!   the feature, and the local folder works on). A winner read from the remote is verified like
//!   a local one and used only for its whole key; a server that is down or slow is one warning
//!   and this program tunes locally.
//!
//! This crate has no environment module (launch-build's `Env` is build-time only): every variable
//! read here goes through `env_var` in this file.

#[cfg(test)]
mod fuzz;
mod key;
mod policy;
mod shared;
mod store;
#[cfg(test)]
mod tests;

use std::ffi::OsString;

#[cfg(feature = "cudarc")]
pub(crate) use key::StableHasher;
#[cfg(feature = "cudarc")]
pub(crate) use key::{kernel_hash, variants_hash};
pub use key::{DeviceKey, TuneKey};
pub use policy::{TunePolicy, TunePolicyError};
pub use shared::remote_config_from;
pub use store::{Miss, NoCacheDir, TuneCache, Winner, MAX_FILE_BYTES};

/// The one read of the environment in `launch::tune` (`LAUNCH_TUNE`, `LAUNCH_TUNE_CACHE_DIR`,
/// `XDG_CACHE_HOME`, `HOME`, `LAUNCH_TUNE_CACHE_REMOTE*`, `AWS_REGION`, `AWS_DEFAULT_REGION`);
/// empty counts as unset.
fn env_var(name: &str) -> Option<OsString> {
    // The workspace routes reads through launch-build's `Env`, which a runtime crate cannot use.
    #[allow(clippy::disallowed_methods)]
    std::env::var_os(name).filter(|v| !v.is_empty())
}
