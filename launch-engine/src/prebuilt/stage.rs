//! Stage 0, before the toolchain is looked for: the crate's prebuilt kernels
//! ([`crate::prebuilt`]) embedded when they match the sources; otherwise what changed, for the
//! warning and for the error when there is no toolchain to compile from source.

use std::path::Path;
use std::time::Instant;

use super::Mode;
use crate::cargo_directives;
use crate::compile::stats::{self, PrebuiltUse};
use crate::config::Config;
use crate::env::{var, Env};
use crate::error::{Error, ErrorKind};
use crate::plan::Plan;
use crate::prebuilt;
use launch_schema::manifest::Manifest;

/// What the build does about the prebuilt folder.
pub enum Decision {
    /// It matched and was embedded: the build is done.
    Embedded(Box<Manifest>),
    /// Compile from source; `stale` says what of the prebuilt folder did not match (empty when
    /// there is none, or it is not to be used).
    Compile {
        /// One entry per changed input or damaged file.
        stale: Vec<String>,
    },
}

/// Embeds the prebuilt folder of `plan`'s crate into `launch_dir` when it matches the sources.
///
/// # Errors
/// `LAUNCH_PREBUILT=require` and no folder, or one that does not match ([`Error::Prebuilt`]); a
/// source that cannot be read; an output that cannot be written.
pub fn run(env: &Env, plan: &Plan, launch_dir: &Path) -> Result<Decision, Error> {
    let started = Instant::now();
    match examine(env, plan, true)? {
        Examined::Fresh(record, files) => {
            embed(env, &record, &files, launch_dir, started).map(|m| Decision::Embedded(Box::new(m)))
        }
        Examined::Compile(stale) => Ok(Decision::Compile { stale }),
    }
}

/// What the prebuilt folder of `plan`'s crate is to its build, without writing anything.
enum Examined {
    /// It matches, its files read and checked: the build embeds them.
    Fresh(Box<prebuilt::Record>, std::collections::BTreeMap<String, Vec<u8>>),
    /// Compile from source; what did not match (empty: no folder, or not to be used).
    Compile(Vec<String>),
}

/// `warn`: say (as a cargo warning) that an unreadable record is ignored; a command's own look
/// says nothing.
fn examine(env: &Env, plan: &Plan, warn: bool) -> Result<Examined, Error> {
    let mode = env.prebuilt_mode()?;
    let folder = prebuilt::folder(plan.config.root());
    // `cargo launch explore` wants every arch's PTX, which the folder does not hold; a crate with
    // `host` files links them from source.
    let usable = mode != Mode::Ignore && !env.flag(var::LAUNCH_ALL_PTX)? && plan.host_files().next().is_none();
    if !usable {
        return Ok(Examined::Compile(Vec::new()));
    }
    let Some(record) = prebuilt::read_record(&folder).or_else(|e| refused(mode, e, warn))? else {
        return match mode {
            Mode::Require => Err(require_error(&folder, vec!["the crate has no prebuilt folder".to_string()])),
            _ => Ok(Examined::Compile(Vec::new())),
        };
    };
    if env.is_build_script() {
        cargo_directives::rerun_if_changed(&folder.join(prebuilt::RECORD));
    }
    let fp = prebuilt::of_plan(plan)?;
    let mut stale = prebuilt::changes(&record, &fp);
    if stale.is_empty() {
        match prebuilt::read_files(&folder, &record) {
            Ok(files) => return Ok(Examined::Fresh(Box::new(record), files)),
            Err(Error::Prebuilt { problems, .. }) => stale = problems,
            Err(e) => return Err(e),
        }
    }
    match mode {
        Mode::Require => Err(require_error(&folder, stale)),
        _ => Ok(Examined::Compile(stale)),
    }
}

/// What the build of the crate `config` describes would say instead of `why`, the toolchain
/// problem a command met before building (`cargo launch report`, `check` and `coverage` look for
/// the toolchain first): when the crate's prebuilt folder is stale, the build's own error
/// ([`Error::Prebuilt`]: what changed, `cargo launch prebuild`, `cargo launch setup`); under
/// `LAUNCH_PREBUILT=require`, its refusal; `None` when the folder explains nothing (none, fresh,
/// not to be used). One message for every entry point.
pub fn explain_no_toolchain(env: &Env, config: &Config, why: &dyn std::fmt::Display) -> Option<Error> {
    let plan = Plan::resolve(config.clone()).ok()?;
    match examine(env, &plan, false) {
        Ok(Examined::Compile(stale)) if !stale.is_empty() => {
            Some(stale_without_toolchain(&prebuilt::folder(config.root()), &stale, why))
        }
        Ok(_) => None,
        Err(refused) => Some(refused),
    }
}

/// A record that cannot be read: under `require` the error, else a folder that does not match.
fn refused(mode: Mode, e: Error, warn: bool) -> Result<Option<prebuilt::Record>, Error> {
    match (mode, e) {
        (Mode::Require, e) => Err(e),
        (_, Error::Prebuilt { .. }) if !warn => Ok(None),
        (_, Error::Prebuilt { problems, .. }) => {
            cargo_directives::launch_build_warning(&format!(
                "the prebuilt kernels cannot be read ({}); compiling from source",
                problems.join("; ")
            ));
            Ok(None)
        }
        (_, e) => Err(e),
    }
}

fn require_error(folder: &Path, problems: Vec<String>) -> Error {
    Error::Prebuilt {
        folder: folder.to_path_buf(),
        problems,
        instead: "LAUNCH_PREBUILT=require: the kernels are not compiled from source.".to_string(),
        no_toolchain: false,
    }
}

/// The warning of a build that compiles from source because the prebuilt folder is stale.
pub fn stale_warning(stale: &[String]) -> String {
    format!(
        "the prebuilt kernels in {}/ cannot be used ({}): compiling from source; refresh them with \
         `cargo launch prebuild`",
        prebuilt::FOLDER,
        stale.join("; ")
    )
}

/// A toolchain error of a build whose prebuilt folder was stale: the stale folder is the cause
/// worth telling (with what changed and how to refresh it), the missing toolchain the detail.
pub fn without_toolchain(e: Error, folder: &Path, stale: &[String]) -> Error {
    if stale.is_empty() || e.kind() != ErrorKind::Toolchain {
        return e;
    }
    stale_without_toolchain(folder, stale, &e)
}

fn stale_without_toolchain(folder: &Path, stale: &[String], why: &dyn std::fmt::Display) -> Error {
    Error::Prebuilt {
        folder: folder.to_path_buf(),
        problems: stale.to_vec(),
        instead: format!("No CUDA toolchain to compile them from source: {why}"),
        no_toolchain: true,
    }
}

/// Writes the prebuilt outputs under `launch_dir`, with the build statistics.
fn embed(
    env: &Env,
    record: &prebuilt::Record,
    files: &std::collections::BTreeMap<String, Vec<u8>>,
    launch_dir: &Path,
    started: Instant,
) -> Result<Manifest, Error> {
    let json = &files["manifest.json"];
    let text = String::from_utf8_lossy(json);
    let manifest = Manifest::from_json(&text).map_err(|e| Error::Prebuilt {
        folder: prebuilt::FOLDER.into(),
        problems: vec![format!("manifest.json: {e}")],
        instead: String::new(),
        no_toolchain: false,
    })?;
    let embedded = files.iter().filter(|(p, _)| p.as_str() != "manifest.json");
    crate::embed::write_prebuilt(launch_dir, &manifest, json, embedded.map(|(p, b)| (p.as_str(), b.as_slice())))?;
    let jobs = manifest.modules.iter().map(|m| m.cubins.len()).sum();
    let used = PrebuiltUse {
        key: record.key.clone(),
        files: files.len(),
        bytes: files.values().map(|b| b.len() as u64).sum(),
    };
    let stats = stats::prebuilt(jobs, used, started);
    stats::write(launch_dir, &stats)?;
    if env.flag(var::LAUNCH_BUILD_DEBUG)? {
        cargo_directives::launch_build_warning(&format!(
            "embedded the prebuilt kernels ({} files, key {}) in {:.1} ms",
            files.len(),
            &record.key[..12],
            stats.wall_ms
        ));
    }
    Ok(manifest)
}
