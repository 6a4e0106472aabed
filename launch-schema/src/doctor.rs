//! `cargo launch doctor --format json`: the state of everything a build depends on — the pinned
//! toolchains, the environment variables that change discovery, the cache, the GPU driver, the
//! crate's configuration — and every problem with its fix.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The version of this document.
pub const VERSION: u32 = 1;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// [`VERSION`].
    pub schema: u32,
    /// No problem at all.
    pub healthy: bool,
    /// A toolchain problem blocks builds (the command exits 3).
    pub blocking: bool,
    /// Per pinned toolchain, oldest first.
    pub toolchains: Vec<ToolchainState>,
    /// The documented environment variables that are set.
    pub environment: Vec<Variable>,
    /// The cache folder.
    pub cache: CacheState,
    /// The GPU driver; null when no driver library loads (no GPU, or not looked for).
    pub driver: Option<DriverState>,
    /// The crate the command ran in; null outside one.
    #[serde(rename = "crate")]
    pub krate: Option<CrateState>,
    /// Every problem, blocking ones first.
    pub problems: Vec<Problem>,
}

impl Document {
    /// Reads a document, checking its version.
    pub fn from_json(text: &str) -> Result<Document, super::ReadError> {
        super::read(text, "doctor", VERSION, "written by another version of cargo-launch")
    }
}

/// One pinned toolchain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ToolchainState {
    /// The `toolchain` value (`12.9`).
    pub name: String,
    /// Its exact version (`12.9.86`).
    pub version: String,
    /// Where discovery found it, else where `cargo launch setup` installs it.
    pub path: Option<PathBuf>,
    /// How it was found (`cargo-launch cache`, `LAUNCH_TOOLCHAIN`, ...); null when not found.
    pub origin: Option<String>,
    /// Whether setup finished there.
    pub installed: bool,
    /// Files checked against the wheels' `RECORD` hashes.
    pub files_checked: usize,
    /// Files whose hash or size differs from the wheel's, or that are missing.
    pub damaged: Vec<String>,
    /// NVRTC's version when it loads with its builtins.
    pub nvrtc: Option<String>,
    /// ptxas's version when it runs.
    pub ptxas: Option<String>,
    /// nvdisasm's version when it runs.
    pub nvdisasm: Option<String>,
    /// Whether CCCL's headers (`cuda/std/...`) are there.
    pub cccl: bool,
}

/// A documented environment variable that is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// What it changes.
    pub meaning: String,
    /// For a path: whether it is there (`folder`, `file`, `missing`); null otherwise.
    pub points_at: Option<String>,
}

/// The cache folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct CacheState {
    /// The folder; null when no variable names one.
    pub path: Option<PathBuf>,
    /// Whether a file can be written in its kernel cache.
    pub writable: bool,
    /// Entries of the kernel cache.
    pub entries: u64,
    /// Bytes of the kernel cache.
    pub bytes: u64,
}

/// The GPU driver.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct DriverState {
    /// Its CUDA version (`13.0`), from `cuDriverGetVersion`.
    pub version: String,
    /// The library it was read from.
    pub library: String,
}

/// The crate the command ran in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct CrateState {
    /// Its Cargo.toml.
    pub manifest_path: PathBuf,
    /// Its package name, when its configuration loads.
    pub package: Option<String>,
    /// Its `toolchain`.
    pub toolchain: Option<String>,
    /// Its `min-driver`.
    pub min_driver: Option<String>,
    /// Whether `[package.metadata.launch]` loads.
    pub config_loads: bool,
}

/// One problem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Problem {
    /// Whether it blocks builds.
    pub blocking: bool,
    /// What is wrong.
    pub what: String,
    /// The fix, in one line.
    pub fix: String,
}
