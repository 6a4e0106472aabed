//! The build plan: the configuration applied to the kernel folder, resolved once. Every stage
//! after it (compile, assemble, link, embed, the tune variants, the line-info recompiler) takes
//! the plan and asks it, never the configuration's patterns:
//!
//! - per file (after `exclude`): its settings (flags, defines, ptxas options, `arch`), the arches
//!   it is compiled for, and whether it is a `host` file: the file patterns (`exclude`, `host`,
//!   `file."<pattern>"`) are matched here and nowhere else ([`Plan::resolve`]);
//! - per kernel, once the compiled kernels are known: its block size, dynamic shared memory and
//!   spill budget from the `kernel."<key>"` tables, matched here and nowhere else
//!   ([`Plan::settle_kernels`]); the manifest records them, so `cargo launch` reads them there.

use std::path::{Path, PathBuf};

use launch::Arch;

use crate::config::{self, Config, FileConfig, HostPattern, KernelConfig};
use crate::error::Error;
use launch_schema::manifest::KernelEntry;

mod kernel_keys;

pub use crate::config::FileSettings;

/// A kernel source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// Path relative to the crate root, `/`-separated (used in messages and the manifest).
    pub file: String,
    /// Absolute path.
    pub path: PathBuf,
    /// Path relative to the kernel folder, `/`-separated (what `exclude` and
    /// `[package.metadata.launch.file."<pattern>"]` patterns match).
    pub kernel_rel: String,
}

/// One kernel file as the build will compile it.
#[derive(Clone, Debug)]
pub struct PlannedFile {
    /// The file.
    pub source: SourceFile,
    /// Its settings: the crate's, then each matching file table's.
    pub settings: FileSettings,
    /// The crate's arches it is compiled for (its `arch` setting keeps a subset), lowest first.
    pub arches: Vec<Arch>,
    /// Whether it is a `host` file (compiled by nvcc, host code and all).
    pub host: bool,
}

/// The configuration applied to the kernel folder.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The configuration it was resolved from.
    pub config: Config,
    /// The kernel files left after `exclude`, sorted.
    pub files: Vec<PlannedFile>,
    /// Warnings for patterns that match nothing (`exclude` entries, file tables): a misspelt
    /// pattern would otherwise be ignored without a word.
    pub warnings: Vec<String>,
    /// The first `host` pattern that matches no file left after `exclude`.
    unmatched_host: Option<usize>,
    /// The warning when `exclude` left out every kernel file there is.
    excluded_all: Option<String>,
}

impl Plan {
    /// Lists the kernel folder and matches every file pattern of `config` against it, once.
    ///
    /// # Errors
    /// The kernel folder (or a folder under it) cannot be listed.
    pub fn resolve(config: Config) -> Result<Plan, Error> {
        let all = kernel_files(config.root(), &config.kernel_dir)?;
        let listed = all.len();
        let mut exclude_used = vec![false; config.exclude.len()];
        let mut table_used = vec![false; config.files.len()];
        let mut host_used = vec![false; config.host.len()];
        let mut files = Vec::new();
        for source in all {
            let rel = source.kernel_rel.as_str();
            let excluded = mark(&config.exclude, &mut exclude_used, |p| config::path_matches(p, rel));
            if excluded {
                continue;
            }
            let tables: Vec<&FileConfig> = config
                .files
                .iter()
                .zip(&mut table_used)
                .filter(|(f, _)| config::path_matches(&f.pattern, rel))
                .map(|(f, used)| {
                    *used = true;
                    f
                })
                .collect();
            let host = mark(&config.host, &mut host_used, |p: &HostPattern| config::path_matches(&p.pattern, rel));
            if !host {
                device_file_nvcc_flags(&config, &tables, &source.file)?;
            }
            let settings = config.merge_file_settings(&tables);
            let arches = file_arches(&config.arches, settings.arch.as_deref());
            files.push(PlannedFile { source, settings, arches, host });
        }
        let folder = config.kernel_dir.display().to_string().replace('\\', "/");
        let mut warnings = Vec::new();
        let at = |places: &[crate::error::Location], i: usize| config::warning_prefix(places.get(i));
        for (i, e) in config.exclude.iter().enumerate().filter(|(i, _)| !exclude_used[*i]) {
            warnings.push(format!(
                "{}exclude entry `{e}` matches no .cu file under {folder}/; it has no effect",
                at(&config.places.exclude, i)
            ));
        }
        for (i, f) in config.files.iter().enumerate().filter(|(i, _)| !table_used[*i]) {
            warnings.push(format!(
                "{}[package.metadata.launch.file.\"{}\"] matches no kernel file under {folder}/ (patterns are relative to it); its settings are unused",
                at(&config.places.files, i),
                f.pattern
            ));
        }
        warnings.extend(define_conflicts(&config, &files));
        let unmatched_host = host_used.iter().position(|used| !used);
        let excluded_all = (files.is_empty() && listed > 0).then(|| {
            let by: Vec<String> = (config.exclude.iter().enumerate().filter(|(i, _)| exclude_used[*i]))
                .map(|(i, e)| format!("`{e}` ({})", at(&config.places.exclude, i).trim_end_matches([':', ' '])))
                .collect();
            format!(
                "{folder}: `exclude` leaves out every .cu file of the kernel folder ({listed}), by {}: no kernel was built",
                by.join(", ")
            )
        });
        Ok(Plan { config, files, warnings, unmatched_host, excluded_all })
    }

    /// A plan of `files` as given (unit tests of the later stages, without a kernel folder).
    #[cfg(test)]
    pub fn of(config: Config, files: Vec<PlannedFile>) -> Plan {
        Plan { config, files, warnings: Vec::new(), unmatched_host: None, excluded_all: None }
    }

    /// Why no kernel file is planned, as a warning: none in the kernel folder, or `exclude` left
    /// them all out (by which entries); `None` when some file is planned.
    pub fn nothing_to_build(&self) -> Option<String> {
        if !self.files.is_empty() {
            return None;
        }
        Some(self.excluded_all.clone().unwrap_or_else(|| {
            format!("{}: no .cu file in the kernel folder: no kernel was built", self.kernel_folder())
        }))
    }

    /// The crate root (the folder of Cargo.toml).
    pub fn root(&self) -> &Path {
        self.config.root()
    }

    /// The kernel folder as messages show it, `/`-separated.
    pub fn kernel_folder(&self) -> String {
        self.config.kernel_dir.display().to_string().replace('\\', "/")
    }

    /// The planned file `file` (relative to the crate root), if it is one.
    pub fn file(&self, file: &str) -> Option<&PlannedFile> {
        self.files.iter().find(|f| f.source.file == file)
    }

    /// The `host` files, in file order.
    pub fn host_files(&self) -> impl Iterator<Item = &PlannedFile> {
        self.files.iter().filter(|f| f.host)
    }

    /// Fails at the first `host` pattern that matches no kernel file.
    ///
    /// # Errors
    /// That pattern, at its entry in Cargo.toml.
    pub fn check_host_patterns(&self) -> Result<(), Error> {
        let Some(i) = self.unmatched_host else { return Ok(()) };
        let p = &self.config.host[i];
        Err(host_pattern_error(
            p,
            format!(
                "`{}` matches no kernel file under {}/ (patterns are relative to it; files left out by `exclude` do not count)",
                p.pattern,
                self.kernel_folder()
            ),
        ))
    }

    /// Matches every `[package.metadata.launch.kernel."<key>"]` table against the compiled
    /// `kernels`, once, and records each kernel's settings in its entry: its block size
    /// (`host_threads`, `None` for the crate's), dynamic shared memory and spill budget (its own,
    /// else the crate's). Returns the keys of the tables that name no kernel, in key order.
    ///
    /// Each setting comes from the first table that sets it, in this order: the tables of the
    /// kernel's exact names ([`kernel_keys::keys_naming`]), then the pattern tables that match
    /// (`fill_*`, or `kernels/*.cu::fill_*` against the qualified name) in the order the file
    /// lists them. A key is used only where it applies its settings to a kernel.
    ///
    /// # Errors
    /// A key that is the bare function name of several kernels (C++ overloads or template
    /// instances), at its table, listing them by qualified name.
    pub fn settle_kernels(&self, kernels: &mut [KernelEntry]) -> Result<Vec<String>, Error> {
        let c = &self.config;
        kernel_keys::refuse_ambiguous(c, kernels)?;
        let naming = kernel_keys::keys_naming(c, kernels);
        let mut used = std::collections::BTreeSet::new();
        for (k, exact) in kernels.iter_mut().zip(naming) {
            let patterns =
                c.kernel_patterns.iter().filter(|p| config::kernel_key_matches(p, &k.name, &k.qualified)).cloned();
            let mut keys: Vec<String> = Vec::new();
            for key in exact.into_iter().chain(patterns) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            let mut merged = KernelConfig::default();
            for s in keys.iter().filter_map(|key| c.kernel.get(key)) {
                merged.max_spill_bytes = merged.max_spill_bytes.or(s.max_spill_bytes);
                merged.dynamic_smem = merged.dynamic_smem.or(s.dynamic_smem);
                merged.threads = merged.threads.or(s.threads);
            }
            k.host_threads = merged.threads;
            k.dynamic_smem = merged.dynamic_smem;
            k.max_spill_bytes = merged.max_spill_bytes.or(c.max_spill_bytes);
            used.extend(keys);
        }
        Ok(c.kernel.keys().filter(|key| !used.contains(*key)).cloned().collect())
    }
}

/// Whether any of `patterns` matches (by `matches`), marking every one that does as used.
fn mark<P>(patterns: &[P], used: &mut [bool], matches: impl Fn(&P) -> bool) -> bool {
    let mut any = false;
    for (p, u) in patterns.iter().zip(used.iter_mut()) {
        if matches(p) {
            *u = true;
            any = true;
        }
    }
    any
}

/// Fails at the first nvcc option of the crate's `flags` or of the matching `tables` that a device
/// (NVRTC) file, `file`, may not take: one that would change device code and that NVRTC lacks.
/// A crate whose every file is a `host` file takes it (nvcc compiles them).
fn device_file_nvcc_flags(config: &Config, tables: &[&FileConfig], file: &str) -> Result<(), Error> {
    let mut flags = config.nvcc_flags.iter().chain(tables.iter().flat_map(|t| &t.nvcc_flags));
    let Some((flag, why)) = flags.find_map(|f| f.device_refusal.as_ref().map(|why| (f, why))) else { return Ok(()) };
    Err(Error::Config {
        location: flag.location.clone(),
        key: flag.key.clone(),
        message: format!(
            "`{}` would reach {file}, which NVRTC compiles: {why}; `host` files take it (nvcc compiles them): list the file in `host`, or give the option in a [package.metadata.launch.file.\"<pattern>\"] table of the host files only",
            flag.option.join(" ")
        ),
    })
}

/// A warning per macro that a `-D` option in `flags` and `defines` give different values for one
/// file (each once, at the first such option): NVRTC sees `defines` first, so the flag wins.
fn define_conflicts(config: &Config, files: &[PlannedFile]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in files {
        for d in f.settings.flags.iter().filter_map(|o| o.strip_prefix("--define-macro=")) {
            let (name, flag) = d.split_once('=').unwrap_or((d, "1"));
            let Some((_, value)) = f.settings.defines.iter().find(|(n, _)| n == name) else { continue };
            let value = value.as_deref().unwrap_or("1");
            if value == flag {
                continue;
            }
            let place = config.places.define_flags.iter().find(|(n, _)| n == name).map(|(_, at)| at);
            let w = format!(
                "{}`-D{d}` in `flags` and `defines` give macro `{name}` different values ({flag} and {value}); the \
                 `flags` one wins (NVRTC reads `defines` first): keep one",
                config::warning_prefix(place)
            );
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// The arches a file is compiled for: the crate's (lowest first), kept to those its `arch` setting
/// lists when it has one. Arches of the setting that the crate does not build are not added (a
/// `cargo launch check --arch` run builds only the arches it names).
fn file_arches(crate_arches: &[Arch], setting: Option<&[Arch]>) -> Vec<Arch> {
    crate_arches.iter().copied().filter(|a| setting.is_none_or(|s| s.contains(a))).collect()
}

/// A located error at a `host` entry of Cargo.toml.
pub fn host_pattern_error(p: &HostPattern, message: String) -> Error {
    Error::Config { location: p.location.clone(), key: p.key.clone(), message }
}

/// Every `.cu` file under the kernel folder, recursively, sorted (never directory order).
pub fn kernel_files(root: &Path, kernel_dir: &Path) -> Result<Vec<SourceFile>, Error> {
    let base = root.join(kernel_dir);
    let slashed = |p: &Path, from: &Path| {
        let rel = p.strip_prefix(from).unwrap_or(p);
        rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
    };
    let mut files = Vec::new();
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        let rd = std::fs::read_dir(&dir).map_err(Error::io("list", &dir))?;
        for e in rd {
            let e = e.map_err(Error::io("list", &dir))?;
            let p = e.path();
            // file_type does not follow symbolic links: a link cycle under kernels/ cannot loop.
            if e.file_type().map_err(Error::io("list", &dir))?.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cu") {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files
        .into_iter()
        .map(|path| SourceFile { file: slashed(&path, root), kernel_rel: slashed(&path, &base), path })
        .collect())
}

#[cfg(test)]
mod tests;
