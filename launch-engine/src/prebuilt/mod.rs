//! Prebuilt kernels: the outputs of one from-source build, shipped in the crate's
//! `launch-prebuilt/` folder, so that the crate builds where there is no CUDA toolchain, no
//! Python and no network (a user's `cargo build`, an IDE's `cargo check`, a Docker image, docs).
//!
//! ```text
//! launch-prebuilt/
//!   prebuilt.json     the record (launch_schema::prebuilt::Record): key, inputs, files
//!   manifest.json     the build's manifest, its toolchain described without the machine's paths
//!   cubin/ ptx/ variants/   every file the manifest embeds, by the same paths as OUT_DIR/launch
//! ```
//!
//! `cargo launch prebuild` writes it ([`contents`], [`write_folder`]); the build script embeds it
//! when its key equals the key of the sources at hand ([`fingerprint`], computed without any
//! toolchain), checking every file's digest first, and otherwise compiles from source (saying
//! which input changed) or, without a toolchain or under `LAUNCH_PREBUILT=require`, fails naming
//! it ([`Error::Prebuilt`]).
//!
//! # Trust
//! A shipped cubin runs on the user's GPU like any binary: it is as trustworthy as whoever ran
//! `cargo launch prebuild --verify` (a from-source compile, without the cache, compared byte for
//! byte) on it. `LAUNCH_PREBUILT=ignore` always compiles from source.
//!
//! # The key
//! SHA-256 over launch-build's [`OUTPUT_FORMAT`], the package name, the arches, the pinned
//! toolchain (name and exact version) and the digest of every input: the canonical
//! `[package.metadata.launch]` table, each kernel file, each crate header they include. Not in
//! it: paths, times, the machine, the launch-build patch version.

mod fingerprint;
mod folder;
pub(crate) mod stage;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use crate::env::PrebuiltMode as Mode;
pub(crate) use fingerprint::of_plan;
pub use fingerprint::{Fingerprint, METADATA_INPUT};
pub use folder::{changes, contents, read_files, read_record, write_folder, Contents};
pub use launch_schema::prebuilt::Record;

use crate::config::Config;
use crate::error::Error;
use crate::plan::Plan;

/// The folder, beside the crate's Cargo.toml.
pub const FOLDER: &str = "launch-prebuilt";
/// The record's name in it.
pub const RECORD: &str = "prebuilt.json";

/// Version of what launch-build makes of the same inputs and toolchain: the options it gives NVRTC
/// and ptxas, the headers it adds, the manifest's content. It is in the key instead of
/// launch-build's version, so that a patch release does not make every published crate's
/// prebuilt kernels stale; bump it with any change that can change an output byte
/// (`cargo launch prebuild --verify` catches a forgotten bump: it compiles and compares).
pub const OUTPUT_FORMAT: u32 = 1;

/// Whether a crate's prebuilt folder matches its sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// The crate has no prebuilt folder.
    Absent,
    /// It matches: a build embeds it.
    Fresh(Box<Record>),
    /// It does not: what changed, one entry per input (`kernels/poly.cu changed`).
    Stale(Box<Record>, Vec<String>),
}

/// The fingerprint of the crate `config` describes (for the arches it lists): what its
/// prebuilt folder's key must be.
///
/// # Errors
/// The kernel folder cannot be listed; a kernel file, header or Cargo.toml cannot be read.
pub fn fingerprint(config: &Config) -> Result<Fingerprint, Error> {
    fingerprint::of_plan(&Plan::resolve(config.clone())?)
}

/// The folder of the crate at `root`.
pub fn folder(root: &Path) -> PathBuf {
    root.join(FOLDER)
}

/// Whether the prebuilt folder of the crate `config` describes matches its sources.
///
/// # Errors
/// As [`fingerprint`]; a record that cannot be read ([`Error::Prebuilt`]).
pub fn status(config: &Config) -> Result<Status, Error> {
    let Some(record) = read_record(&folder(config.root()))? else { return Ok(Status::Absent) };
    let changed = changes(&record, &fingerprint(config)?);
    Ok(if changed.is_empty() { Status::Fresh(Box::new(record)) } else { Status::Stale(Box::new(record), changed) })
}
