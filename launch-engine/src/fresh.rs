//! A rerun that keeps the outputs (issue 32, class 10). cargo reruns a build script when a file
//! it watches is touched or a variable it reads changes, also when nothing that reaches the
//! outputs did (a `git checkout` and back, `LAUNCH_BUILD_DEBUG=1`). When every input is as the
//! previous successful build left it, and so is every output, the build reads nothing from the
//! kernel cache, assembles, links and writes nothing but `build-stats.json`, and prints the
//! previous run's cargo directives again (cargo forgets them on a rerun).
//!
//! "Every input" is one digest ([`Gate::inputs`]): the plan (the configuration, the files, their settings),
//! each compile unit's cache key (sources and headers by content, options, the toolchain's
//! identity), where the toolchain and the host tools lie (the link directives name them), the
//! environment that reaches the outputs ([`Env::output_inputs`]), the build script's own binary
//! (a rebuilt launch-build is another build) and what a stale prebuilt folder said.
//! `OUT_DIR/launch/fresh.json`, written last by a successful build, holds it with every output's
//! size and modification time and the directives and warnings to print again.

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::{Instant, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cache::Key;
use crate::cargo_directives;
use crate::compile::stats::{self, BuildStats};
use crate::compile::{host, Compiler};
use crate::env::Env;
use crate::error::Error;
use crate::plan::Plan;
use crate::{embed, out};
use launch_schema::manifest::Manifest;

/// The record's name under `OUT_DIR/launch`.
pub const RECORD: &str = "fresh.json";

/// The record's layout; another is no record.
const FORMAT: &str = "fresh-1";

/// The largest record read; a larger one is no record.
const MAX_RECORD: u64 = 16 << 20;

/// What the build knows of its inputs before anything is compiled, for [`Gate::inputs`].
pub struct Gate {
    /// Digest of the plan, the environment, the build script and the prebuilt folder's staleness;
    /// `None` outside a build script, or when the build script's binary cannot be looked at.
    before: Option<Sha256>,
    launch_dir: PathBuf,
    started: Instant,
}

/// A build that may keep its outputs: the record that matched.
pub struct Kept {
    record: Record,
    launch_dir: PathBuf,
    started: Instant,
    /// The `host` files' archiver, whose link lines `cc` prints itself ([`Kept::linked_by`]).
    archiver: Option<cc::Build>,
}

impl Kept {
    /// The kept build's static library was archived by `archiver` (`link::library::archiver`):
    /// the rerun prints its link lines as `cc` decides them.
    pub fn linked_by(self: Box<Kept>, archiver: Option<cc::Build>) -> Box<Kept> {
        Box::new(Kept { archiver, ..*self })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record {
    format: String,
    /// The digest of the inputs ([`Gate::inputs`]).
    inputs: String,
    /// Every output, relative to `OUT_DIR`, sorted.
    outputs: Vec<Output>,
    /// The directives the build printed (warnings excepted).
    directives: Vec<String>,
    /// The warnings a build that compiles nothing prints.
    warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Output {
    path: String,
    len: u64,
    mtime_ns: u64,
}

impl Gate {
    /// The gate of the build of `plan` into `launch_dir`; `stale` is what the prebuilt stage said
    /// of the crate's prebuilt folder. `started`: when the build began (for `script_ms`).
    pub fn new(env: &Env, plan: &Plan, stale: &[String], launch_dir: &Path, started: Instant) -> Gate {
        let launch_dir = launch_dir.to_path_buf();
        let script = std::env::current_exe().ok().and_then(|exe| Some((stamp(&exe)?, exe)));
        let before = match (env.is_build_script(), script) {
            (true, Some(((len, mtime_ns), exe))) => {
                let mut h = Sha256::new();
                let mut part = |text: &str| {
                    h.update((text.len() as u64).to_le_bytes());
                    h.update(text.as_bytes());
                };
                part(FORMAT);
                part(env!("CARGO_PKG_VERSION"));
                part(&format!("{} {len} {mtime_ns}", exe.display()));
                part(&format!("{plan:?}"));
                part(&format!("{stale:?}"));
                for (name, value) in env.output_inputs() {
                    part(&format!("{name}={value:?}"));
                }
                Some(h)
            }
            _ => None,
        };
        Gate { before, launch_dir, started }
    }

    /// The digest of every input (hex), once the compile stage knows its tools and keys; `None`
    /// where the build keeps no record ([`Gate::new`]).
    pub fn inputs(&self, compiler: &Compiler, host: Option<&host::Tools>, keys: &[Key]) -> Option<String> {
        let mut h = self.before.clone()?;
        h.update(format!("{:?}\n{host:?}\n", compiler.toolchain).as_bytes());
        for key in keys {
            h.update(key.0);
        }
        Some(hex(&h.finalize()))
    }

    /// The previous outputs, when the record says they came from exactly these inputs and every
    /// one of them is still as that build left it.
    pub fn kept(&self, inputs: Option<&str>) -> Option<Box<Kept>> {
        let inputs = inputs?;
        let record = read_record(&self.launch_dir)?;
        let library = library_of(&record);
        if record.inputs != inputs || outputs(&self.launch_dir, library.as_deref())? != record.outputs {
            return None;
        }
        Some(Box::new(Kept { record, launch_dir: self.launch_dir.clone(), started: self.started, archiver: None }))
    }
}

/// Finishes a kept build: the directives and warnings printed again, `build-stats.json` saying
/// so. Returns the previous manifest.
///
/// # Errors
/// The manifest or the statistics cannot be read or written (the outputs were checked a moment
/// ago: only a concurrent writer gets here); `cc` cannot print the library's link lines.
pub fn replay(kept: Box<Kept>) -> Result<Manifest, Error> {
    let Kept { record, launch_dir, started, archiver } = *kept;
    for line in &record.directives {
        cargo_directives::replay(line);
    }
    if let (Some(archiver), Some(name), Some(out_dir)) = (&archiver, library_of(&record), launch_dir.parent()) {
        crate::link::library::print_link_lines(archiver, &out_dir.join(format!("lib{name}.a")))?;
    }
    for w in &record.warnings {
        cargo_directives::warning(w);
    }
    let path = launch_dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(Error::io("read", &path))?;
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| Error::io("read", &path)(std::io::Error::other(e)))?;
    let stats_path = launch_dir.join("build-stats.json");
    let previous = std::fs::read_to_string(&stats_path).ok().and_then(|t| BuildStats::from_json(&t).ok());
    let mut s = kept_stats(previous);
    stats::finish(&mut s, started);
    s.script_ms = s.wall_ms;
    stats::write(&launch_dir, &s)?;
    Ok(manifest)
}

/// The statistics of a kept build from the previous build's: its jobs, none compiled.
fn kept_stats(previous: Option<BuildStats>) -> BuildStats {
    let mut s = previous.unwrap_or_else(|| stats::counts(0, 0, 0, None, &crate::compile::scheduler::Tokens::Serial, 0));
    s.cached = s.jobs;
    s.compiled = 0;
    s.corrupt = 0;
    s.compiled_jobs.clear();
    (s.nvrtc_ms, s.ptxas_ms, s.nvcc_ms, s.host_link_ms, s.variant_ptxas_ms) = (0.0, 0.0, 0.0, 0.0, 0.0);
    s.variants_compiled = 0;
    s.max_parallel = 0;
    s.tokens = "none (outputs kept)".to_string();
    for h in &mut s.host_jobs {
        (h.from, h.nvcc_ms, h.nvcc_threads) = ("kept".to_string(), 0.0, 0);
    }
    (s.remote_hits, s.remote_jobs, s.remote) = (0, Vec::new(), None);
    s.kept = true;
    s
}

/// Writes the record of a successful build, after every other output: `inputs` is
/// [`Gate::inputs`], `library` the static library the link stage wrote under `OUT_DIR`,
/// `warnings` what a build that compiles nothing prints. Without `inputs`, removes any record
/// (the next build cannot keep anything).
///
/// # Errors
/// The record cannot be written or removed.
pub fn record(
    launch_dir: &Path,
    inputs: Option<&str>,
    library: Option<&str>,
    warnings: Vec<String>,
) -> Result<(), Error> {
    let path = launch_dir.join(RECORD);
    let Some((inputs, outputs)) = inputs.and_then(|i| Some((i, outputs(launch_dir, library)?))) else {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io("remove", &path)(e)),
            _ => Ok(()),
        };
    };
    let record = Record {
        format: FORMAT.to_string(),
        inputs: inputs.to_string(),
        outputs,
        directives: cargo_directives::printed(),
        warnings,
    };
    let json = serde_json::to_string_pretty(&record).expect("the record serialises");
    out::write_if_changed(&path, json.as_bytes()).map(drop)
}

/// The record under `launch_dir`, when there is a whole one of this layout.
fn read_record(launch_dir: &Path) -> Option<Record> {
    let path = launch_dir.join(RECORD);
    if std::fs::metadata(&path).ok()?.len() > MAX_RECORD {
        return None;
    }
    let record: Record = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    (record.format == FORMAT).then_some(record)
}

/// Every output of the build under `launch_dir` as it is now, sorted: the embedded folders' files,
/// the generated module, the manifest and the static library `OUT_DIR/lib<library>.a`. `None`
/// when one cannot be looked at.
fn outputs(launch_dir: &Path, library: Option<&str>) -> Option<Vec<Output>> {
    let out_dir = launch_dir.parent()?;
    let mut files: Vec<PathBuf> = vec![launch_dir.join("kernels.rs"), launch_dir.join("manifest.json")];
    for dir in embed::OUTPUT_DIRS {
        walk(&launch_dir.join(dir), &mut files).ok()?;
    }
    if let Some(name) = library {
        files.push(out_dir.join(format!("lib{name}.a")));
    }
    let mut outputs = Vec::with_capacity(files.len());
    for f in files {
        let (len, mtime_ns) = stamp(&f)?;
        let path = f.strip_prefix(out_dir).ok()?.to_string_lossy().into_owned();
        outputs.push(Output { path, len, mtime_ns });
    }
    outputs.sort();
    Some(outputs)
}

/// The static library the record's build linked, from its list of outputs (the manifest's
/// `host.library` says the same; the record is smaller to read).
fn library_of(record: &Record) -> Option<String> {
    record.outputs.iter().find_map(|o| {
        let name = o.path.strip_prefix("lib")?.strip_suffix(".a")?;
        (!name.contains('/')).then(|| name.to_string())
    })
}

/// Every regular file under `dir`, recursively (nothing when `dir` does not exist).
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), files)?;
        } else {
            files.push(entry.path());
        }
    }
    Ok(())
}

/// A file's size and modification time (nanoseconds), links followed.
fn stamp(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((meta.len(), u64::try_from(mtime.as_nanos()).ok()?))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
