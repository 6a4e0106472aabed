//! `OUT_DIR/launch/build-stats.json`: what one successful `launch-build` run did (written by
//! launch-engine's `compile/stats.rs`, read by the cache tests and by anyone tuning a build).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use launch::Arch;

/// The layout version, written as the `schema` field.
pub const VERSION: u32 = 1;

/// `OUT_DIR/launch/build-stats.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct BuildStats {
    /// Layout version of this file: [`VERSION`].
    pub schema: u32,
    /// Jobs (files × arches).
    pub jobs: usize,
    /// Jobs that ran NVRTC and ptxas.
    pub compiled: usize,
    /// Jobs served from the cache.
    pub cached: usize,
    /// Cache entries found damaged or cut short (compiled again).
    pub corrupt: usize,
    /// The cache folder, or `null` when `LAUNCH_NO_CACHE` is set.
    pub cache_dir: Option<PathBuf>,
    /// Where job slots came from: `cargo jobserver`, `NUM_JOBS` or `serial`.
    pub tokens: String,
    /// The most jobs that ran at once.
    pub max_parallel: usize,
    /// Sum over compiled jobs of NVRTC's time, milliseconds.
    pub nvrtc_ms: f64,
    /// Sum over compiled jobs of ptxas's time, milliseconds.
    pub ptxas_ms: f64,
    /// Wall time of this step (keys, lookups, compiles, cache writes), milliseconds.
    pub wall_ms: f64,
    /// Peak resident memory of the build script so far (`VmHWM`), KiB; `null` where unknown.
    pub peak_rss_kib: Option<u64>,
    /// Every compiled job, in job order.
    pub compiled_jobs: Vec<CompiledJob>,
    /// ptxas runs of the tune grids' variants (`[package.metadata.launch.tune.<kernel>]`):
    /// variants × arches.
    #[serde(default)]
    pub variant_jobs: usize,
    /// Of them, assembled in this run (the others came from the cache).
    #[serde(default)]
    pub variants_compiled: usize,
    /// Their ptxas time, milliseconds.
    #[serde(default)]
    pub variant_ptxas_ms: f64,
    /// Every `host` file's compile (one nvcc run for all its arches), in job order: compiled in
    /// this run or from the cache. Its jobs count in `jobs`, `compiled` and `cached` (one per
    /// arch), its time only here and in `nvcc_ms`, never in `nvrtc_ms` or `ptxas_ms`.
    #[serde(default)]
    pub host_jobs: Vec<HostJob>,
    /// Sum over the host files compiled in this run of nvcc's time, milliseconds.
    #[serde(default)]
    pub nvcc_ms: f64,
    /// Archiving the host files' objects into the crate's static library, milliseconds (0 outside
    /// build scripts and without host files).
    #[serde(default)]
    pub host_link_ms: f64,
    /// The crate's prebuilt kernels (`launch-prebuilt/`) were embedded instead of compiling: no
    /// toolchain ran (`jobs` counts the files × arches they hold, `compiled` and `cached` are 0).
    /// `null` when the build compiled from source.
    #[serde(default)]
    pub prebuilt: Option<PrebuiltUse>,
    /// When the crate has a prebuilt folder that does not match its sources (and the build
    /// compiled from source instead): what changed, one entry per input (`kernels/poly.cu
    /// changed`). Empty otherwise.
    #[serde(default)]
    pub prebuilt_stale: Vec<String>,
    /// Of `cached`, the jobs whose entry came from the remote kernel cache (`LAUNCH_CACHE_REMOTE`);
    /// the others came from the local folder. 0 without a remote.
    #[serde(default)]
    pub remote_hits: usize,
    /// Those jobs, in job order.
    #[serde(default)]
    pub remote_jobs: Vec<CachedJob>,
    /// The remote kernel cache and what this build did with it; `null` when none is configured.
    #[serde(default)]
    pub remote: Option<RemoteCacheUse>,
    /// Every input was as the previous successful build left it, and so was every output: they
    /// were kept, and nothing was read from the cache, compiled, assembled or linked (a rerun for
    /// a touched file or a variable that changes no output). `jobs` and `cached` are the previous
    /// build's; `compiled` is 0.
    #[serde(default)]
    pub kept: bool,
    /// The build script's whole run, configuration to this file, milliseconds (`wall_ms` is the
    /// compile stage's alone).
    #[serde(default)]
    pub script_ms: f64,
}

/// One job served by the remote kernel cache, in [`BuildStats`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct CachedJob {
    /// Kernel file, relative to the crate.
    pub file: String,
    /// Arch.
    pub arch: Arch,
}

/// What one build did with the remote kernel cache, in [`BuildStats`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct RemoteCacheUse {
    /// Its URL, without any password.
    pub url: String,
    /// Read-only (`LAUNCH_CACHE_REMOTE_MODE=ro`): nothing is written to it.
    pub read_only: bool,
    /// Entries read from it, whole and verified (a host file's parts count one each).
    pub entries_read: u64,
    /// Their bytes.
    pub bytes_read: u64,
    /// Entries written to it.
    pub entries_written: u64,
    /// Their bytes.
    pub bytes_written: u64,
    /// It failed (down, slow, full, refusing) and was not used for the rest of the build.
    pub failed: bool,
}

impl BuildStats {
    /// Reads `build-stats.json`, checking its version.
    pub fn from_json(text: &str) -> Result<BuildStats, super::ReadError> {
        super::read(text, "build-stats.json", VERSION, "rebuild the crate")
    }
}

/// One compiled job in [`BuildStats`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct CompiledJob {
    /// Kernel file, relative to the crate.
    pub file: String,
    /// Arch.
    pub arch: Arch,
    /// NVRTC's time, milliseconds.
    pub nvrtc_ms: f64,
    /// ptxas's time, milliseconds.
    pub ptxas_ms: f64,
}

/// One `host` file's compile in [`BuildStats`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct HostJob {
    /// Kernel file, relative to the crate.
    pub file: String,
    /// Its arches, all compiled by the one nvcc run.
    pub arches: Vec<Arch>,
    /// `compiled` (nvcc ran in this build), `cache` (the object and every arch's output came
    /// from the kernel cache) or `kept` (the build kept its outputs and read nothing, see
    /// [`BuildStats::kept`]).
    pub from: String,
    /// nvcc's time, milliseconds; 0 when not compiled.
    pub nvcc_ms: f64,
    /// The arches nvcc compiled side by side (`--threads`, one job slot each: the build's own and
    /// those the jobserver had free when it started); 1 one after the other, 0 when not compiled.
    #[serde(default)]
    pub nvcc_threads: usize,
}

/// The prebuilt folder a build embedded, in [`BuildStats`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct PrebuiltUse {
    /// Its key (`launch-prebuilt/prebuilt.json`).
    pub key: String,
    /// Files embedded from it.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}
