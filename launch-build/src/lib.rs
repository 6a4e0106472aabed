//! Build-script helper of cargo-launch: compiles every CUDA kernel under `kernels/` for every GPU
//! architecture in `[package.metadata.launch]`, and embeds the cubins, the fallback PTX, each
//! kernel's launch contract and its `ptxas -v` resources in the crate.
//!
//! ```no_run
//! // build.rs
//! fn main() { launch_build::build() }
//! ```
//!
//! ```toml
//! # Cargo.toml
//! [package.metadata.launch]
//! arch = ["sm_90", "sm_100"]
//! ```
//!
//! ```ignore
//! // src/main.rs
//! launch::include_kernels!();   // one `launch::Kernel` static per kernel, plus KERNELS
//! ```
//!
//! No GPU and no CUDA install are needed: NVRTC and ptxas come from NVIDIA's PyPI wheels, which
//! `cargo launch setup` installs into a per-user cache. The build script itself never downloads.
//!
//! # Pipeline
//! config → toolchain → compile (NVRTC → PTX → ptxas → cubin + `-v` report) → contract (read
//! back from PTX) → resources (parsed report) → tune variants (each grid's contracts written into
//! that PTX, ptxas alone, cached like the jobs) → embed (`OUT_DIR/launch/`).
//!
//! # What triggers a rebuild
//! Cargo.toml, the kernel folder, every kernel file and every header it includes from the crate,
//! and the build-time variables listed in `tooling::DOCUMENTED` (the table `cargo launch --help`
//! prints, which also lists the run-time ones). A rerun compiles only the (file, arch) jobs
//! whose content-addressed key changed (`cache`, `cached_compile`), in parallel through cargo's
//! jobserver (`scheduler`), the longest jobs first; `build_stats` says what ran.
//!
//! # Failures and warnings
//! A kernel file that does not compile does not stop the others: every job runs, and the error
//! ([`Error::Failed`]) lists every failing file in file order, once for all the arches that gave
//! the same message, with the first error's `file:line` in a summary (at most
//! [`error::MAX_FAILED_FILES_SHOWN`] files in full; the rest are counted and named).
//! Compiler warnings (NVRTC's log, ptxas's warnings) are printed as `cargo:warning`s only for the
//! jobs compiled in this run, once per file for all the arches with the same log; a job that comes
//! from the cache printed its warnings when it compiled. The manifest keeps every warning, cached
//! jobs' included, so `cargo launch report` still lists them.
#![deny(missing_docs)]
// The one-line build.rs is the example users copy, `fn main` included.
#![allow(clippy::needless_doctest_main)]

mod assemble;
mod build_stats;
mod cache;
mod cached_compile;
mod cargo_directives;
mod compile;
pub mod config;
mod contract;
mod diagnostics_file;
mod embed;
mod env;
pub mod error;
mod flags;
mod headers;
mod host;
mod lineinfo;
mod locate;
pub mod manifest;
mod names;
mod nvrtc;
mod out;
mod process;
mod ptx;
mod ptxas_log;
mod scheduler;
mod source;
mod suggest;
mod timeouts;
mod toolchain;
mod variants;

#[cfg(test)]
mod fuzz;

use std::path::{Path, PathBuf};

pub use config::Config;
pub use error::Error;
pub use manifest::Manifest;

/// What `cargo launch` and the project's end-to-end tests use besides the build: the one
/// environment reader, the toolchain's discovery and pinned install, NVRTC's arch list, the tool
/// runner, the atomic writer, the demangler and the contract variants. Shared so the CLI does
/// exactly what the build does; not a stable API for other users.
pub mod tooling {
    pub use crate::env::{Env, DOCUMENTED};
    pub use crate::names::demangle;
    pub use crate::nvrtc::Nvrtc;
    pub use crate::out::write_if_changed;
    pub use crate::process::Tool;

    /// `OUT_DIR/launch`-relative path of a kernel file's PTX for one arch, written when the build
    /// runs with `LAUNCH_ALL_PTX=1` (as `cargo launch explore` builds).
    pub use crate::assemble::all_ptx_path;

    /// Finding and installing the CUDA toolchain.
    pub mod toolchain {
        pub use crate::toolchain::{
            at, cache_dir, discover, discover_for, on_path, pin, pin_dir, pinned_dir, python, Origin, Pin, Toolchain,
            PINNED_VERSION,
        };
    }

    /// A kernel file compiled again with source-line information, and nvdisasm to read it
    /// (`cargo launch report --spills`); never part of the build.
    pub mod lineinfo {
        pub use crate::lineinfo::nvdisasm;
        pub use crate::lineinfo::{Compiled, Recompiler};
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

use assemble::FileOutputs;
use compile::{Compiler, Job, SourceFile};
use env::Env;
use launch::Arch;
use manifest::{ModuleEntry, ToolchainInfo};

/// Compiles the crate's kernels; on failure prints the error and exits the build script with
/// status 1. Use [`try_build`] to handle the error yourself.
pub fn build() {
    if let Err(e) = try_build() {
        eprintln!("error: launch-build: {e}");
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
        PathBuf::from(env.untracked("CARGO_MANIFEST_DIR").ok_or(Error::NotBuildScript("CARGO_MANIFEST_DIR"))?);
    let out_dir = PathBuf::from(env.untracked("OUT_DIR").ok_or(Error::NotBuildScript("OUT_DIR"))?);
    let launch_dir = out_dir.join("launch");
    let result = build_crate(&env, &manifest_dir, &launch_dir);
    match &result {
        // Best effort both ways: the build's result is what must reach the user, not a failure to
        // write or remove this copy of its errors.
        Ok(_) => {
            if let Err(e) = diagnostics_file::remove_diagnostics(&launch_dir) {
                cargo_directives::launch_build_warning(&e.to_string());
            }
        }
        Err(e) => {
            let package = env.untracked("CARGO_PKG_NAME").map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
            // Set by `cargo launch` for its own builds only; its change must not rerun the script.
            let run = env.untracked("LAUNCH_RUN_ID").map(|r| r.to_string_lossy().into_owned());
            let _ = diagnostics_file::write_diagnostics(&launch_dir, &manifest_dir, &package, run, e);
        }
    }
    result
}

/// [`try_build`] once the build script's folders are known.
fn build_crate(env: &Env, manifest_dir: &Path, launch_dir: &Path) -> Result<Manifest, Error> {
    let manifest_path = manifest_dir.join("Cargo.toml");
    cargo_directives::rerun_if_changed(&manifest_path);
    let mut config = Config::load(&manifest_path)?;
    // `cargo launch check --arch ...` builds for arches the crate may not list.
    if let Some(list) = env.get("LAUNCH_ARCH") {
        config.arches = config::parse_arch_list(&list.to_string_lossy()).map_err(|message| Error::Config {
            location: error::Location::Environment,
            key: "LAUNCH_ARCH".into(),
            message,
        })?;
    }
    build_with(env, &config, launch_dir)
}

/// The pipeline for an already loaded configuration, writing into `launch_dir`.
fn build_with(env: &Env, config: &Config, launch_dir: &Path) -> Result<Manifest, Error> {
    let root = config.root().to_path_buf();
    let sources = compile::kernel_files(&root, &config.kernel_dir, &config.exclude)?;
    if env.is_build_script() {
        announce_inputs(config, &sources);
    }

    if env.get("DOCS_RS").is_some() {
        return docs_stub(config, &sources, launch_dir);
    }
    host::check_patterns(config, &sources)?;

    // Contracts are checked before anything is compiled; every error of every file at once.
    let mut prepared = Vec::new();
    let mut errors = Vec::new();
    let mut warnings = compile::unused_patterns(config, &sources)?;
    if sources.is_empty() {
        warnings.push(format!(
            "{}: no .cu file in the kernel folder: no kernel was built",
            config.kernel_dir.display().to_string().replace('\\', "/")
        ));
    }
    for s in &sources {
        let bytes = std::fs::read(&s.path).map_err(Error::io("read", &s.path))?;
        let text = match source::decode(&s.file, bytes) {
            Ok(t) => t,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let scanned = source::scan(&text);
        let is_host = config.is_host(&s.kernel_rel);
        if let Some(h) = source::host_code(&text, &scanned).filter(|_| !is_host) {
            errors.push(error::Diagnostic::error(
                &s.file,
                h.line,
                h.col,
                format!(
                    "{} is host code, and NVRTC compiles device code only; leave this file out with `exclude = [\"{}\"]` in [package.metadata.launch], or compile it with nvcc, host code and all, with `host = [\"{}\"]` (and `toolchain = \"13.0\"`)",
                    h.what, s.kernel_rel, s.kernel_rel
                ),
            ));
            continue;
        }
        let kernels = source::kernels(&text, &scanned);
        match contract::prepare(&s.file, &text, &scanned, &kernels) {
            // nvcc compiles a host file as written, for the library and the report alike.
            Ok((ann, _)) if is_host && !ann.is_empty() => errors.extend(ann.iter().map(|a| {
                error::Diagnostic::error(
                    &s.file,
                    a.line,
                    a.col,
                    "a `host` file is compiled by nvcc as written, so `@launch` cannot change its code; write `__launch_bounds__` on the kernel instead",
                )
            })),
            Ok((ann, applied)) => prepared.push(Prepared { original: text, applied, annotations: ann, kernels }),
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(Error::Kernels(errors));
    }

    let toolchain = toolchain::discover_for(env, &config.toolchain)?;
    let mut compiler = Compiler::new(toolchain, config, launch_dir.join("work"), compile::Settings::from_env(env)?)?;
    compiler.check_arches(&config.arches)?;
    let host_tools = match config.host.first() {
        Some(first) => {
            let cxx = host::host_compiler(env);
            let tools = host::tools(config, first, &compiler.toolchain, cxx, env)?;
            compiler = compiler.with_host_front_end(Box::new(tools.clone()));
            Some((first, tools))
        }
        None => None,
    };

    // Every job runs before anything is written, so a failure leaves the previous outputs intact.
    // Jobs come from the cache or compile side by side (one per jobserver token); outputs come
    // back in job order.
    // Each file is compiled for the crate's arches its own `arch` setting keeps.
    let settings: Vec<Option<Vec<Arch>>> = sources.iter().map(|s| config.file_settings(&s.kernel_rel).arch).collect();
    let file_arches: Vec<Vec<Arch>> =
        settings.iter().map(|setting| file_arches(&config.arches, setting.as_deref())).collect();
    let jobs: Vec<Job> = sources
        .iter()
        .zip(&prepared)
        .zip(&file_arches)
        .flat_map(|((source, p), arches)| {
            arches.iter().map(move |&arch| Job { source, text: &p.applied.text, annotations: &p.annotations, arch })
        })
        .collect();
    // NVRTC's messages show the text it compiled: show the user's instead (see Applied::restore_log).
    let restore = |file: &str, log: &str| match sources.iter().position(|s| s.file == file) {
        Some(i) => prepared[i].applied.restore_log(file, &prepared[i].original, log),
        None => log.to_string(),
    };
    let built = cached_compile::run_all(env, &compiler, launch_dir, &jobs).map_err(|e| match e {
        Error::Failed(mut files) => {
            for f in &mut files {
                let file = f.file.clone();
                for e in &mut f.errors {
                    if let Error::Compile { compiler, log, .. } = e {
                        if compiler.starts_with("NVRTC") {
                            *log = restore(&file, log);
                        }
                    }
                }
            }
            Error::Failed(files)
        }
        e => e,
    })?;
    let stats = built.stats;
    let mut outputs = built.outputs.into_iter();
    let mut compiled = built.compiled.into_iter();
    let mut files = Vec::new();
    // Compiler warnings of the jobs compiled in this run (cached jobs' were shown when they compiled).
    let mut fresh_warnings = Vec::new();
    for (((source, p), arches), setting) in sources.iter().zip(&prepared).zip(&file_arches).zip(settings) {
        let outputs: Vec<(Arch, compile::JobOutput)> = arches
            .iter()
            .map(|&arch| {
                let mut out = outputs.next().expect("one output per job");
                out.nvrtc_log = restore(&source.file, &out.nvrtc_log);
                (arch, out)
            })
            .collect();
        let fresh: Vec<bool> = arches.iter().map(|_| compiled.next().unwrap_or(true)).collect();
        fresh_warnings.extend(compiler_warnings(&source.file, &outputs, &fresh));
        files.push(FileOutputs {
            source,
            text: &p.original,
            annotations: &p.annotations,
            definitions: &p.kernels,
            arch_setting: setting,
            outputs,
        });
    }
    let info = ToolchainInfo {
        nvrtc: compiler.toolchain.nvrtc_version.clone(),
        ptxas: compiler.toolchain.ptxas_version.clone(),
        description: compiler.toolchain.describe(),
    };
    let mut manifest = assemble::manifest(config, info, &files)?;
    // The tune grids' variants, from the PTX just built (no NVRTC run of their own).
    let timeout = compile::Settings::from_env(env)?.timeout;
    let tuned = variants::build::build(env, &compiler, config, launch_dir, timeout, &files, &mut manifest)?;
    // A file whose PTX has no entry on any arch builds nothing launchable, and a kernel written in
    // the source but absent from every PTX (an `#if __CUDA_ARCH__` the listed arches do not meet)
    // is not embedded: both are said. Decided from the compiled result: macros and headers define
    // most kernels of real folders, so the source alone cannot tell a file without kernels.
    for (s, p) in sources.iter().zip(&prepared) {
        let Some(f) = files.iter().find(|f| f.source.file == s.file && !f.outputs.is_empty()) else { continue };
        let built: std::collections::HashSet<String> =
            manifest.kernels.iter().filter(|k| k.file == s.file).map(|k| names::source_name(&k.name)).collect();
        let absent: Vec<String> = p
            .kernels
            .iter()
            .filter(|d| !built.contains(&d.name) && !source::in_directive(&p.original, d.start))
            .map(|d| format!("`{}` (line {})", d.name, d.line))
            .collect();
        let arches: Vec<String> = f.outputs.iter().map(|(a, _)| a.to_string()).collect();
        if !absent.is_empty() {
            warnings.push(format!(
                "{}: {} in no PTX of {}: an `#if` (such as `#if __CUDA_ARCH__ >= ...`) leaves {} out on every listed arch, or nothing instantiates a template; so {} not embedded",
                s.file,
                absent.join(", "),
                arches.join(", "),
                if absent.len() == 1 { "it" } else { "them" },
                if absent.len() == 1 { "it is" } else { "they are" }
            ));
        } else if built.is_empty() {
            warnings.push(format!(
                "{}: no kernel (__global__ function) in this file: it is compiled, but nothing in it can be launched",
                s.file
            ));
        }
    }
    // Quiet successes speak: in `cargo:warning`s below and in `cargo launch report`.
    // The manifest keeps every warning, compiler warnings of cached jobs included, for
    // `cargo launch report`; the build prints its own warnings, anything else the manifest adds,
    // and the compiler's warnings of the jobs compiled in this run only, once per file for all the
    // arches that gave the same log (a rebuild that compiles nothing prints no compiler warning).
    let mut printed = warnings.clone();
    let from_compilers: std::collections::HashSet<String> =
        files.iter().flat_map(|f| manifest_compiler_warnings(&f.source.file, &f.outputs)).collect();
    printed.extend(manifest.warnings.iter().filter(|w| !from_compilers.contains(*w)).cloned());
    printed.extend(fresh_warnings);
    manifest.warnings.splice(0..0, warnings);
    // The host files' library, once every kernel compiled (see `host`).
    if let Some((first, tools)) = &host_tools {
        let link: Vec<host::LinkFile> = sources
            .iter()
            .zip(&file_arches)
            .filter(|(s, _)| config.is_host(&s.kernel_rel))
            .map(|(source, arches)| host::LinkFile { source, arches })
            .collect();
        let library = match env.is_build_script() {
            true => Some(host::link(&compiler, tools, first, &link, &config.package)?),
            false => None,
        };
        manifest.host = host::record(tools, &link, library.as_deref());
    }
    embed::write(launch_dir, &manifest, &files, &tuned.files, env.flag("LAUNCH_ALL_PTX"))?;
    let stats = build_stats::with_variants(stats, tuned.jobs, tuned.compiled, tuned.ptxas_ms);
    build_stats::write(launch_dir, &stats)?;
    if env.is_build_script() {
        let mut seen = std::collections::HashSet::new();
        for w in printed.iter().filter(|w| seen.insert(*w)) {
            cargo_directives::warning(w);
        }
    }
    Ok(manifest)
}

/// The arches a file is compiled for: the crate's (lowest first), kept to those its `arch` setting
/// lists when it has one. Arches of the setting that the crate does not build are not added (a
/// `cargo launch check --arch` run builds only the arches it names).
pub(crate) fn file_arches(crate_arches: &[Arch], setting: Option<&[Arch]>) -> Vec<Arch> {
    crate_arches.iter().copied().filter(|a| setting.is_none_or(|s| s.contains(a))).collect()
}

/// The compiler warnings of the outputs of one file compiled in this run (`fresh[i]` for output
/// `i`): each distinct NVRTC log once (a warning spans lines), then each distinct ptxas warning,
/// every line prefixed with the arches that gave it: `kernels/a.cu (sm_80, sm_90): ...`.
fn compiler_warnings(file: &str, outputs: &[(launch::Arch, compile::JobOutput)], fresh: &[bool]) -> Vec<String> {
    // (text, arches), first seen first.
    let mut logs: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines: Vec<(String, Vec<String>)> = Vec::new();
    let add = |list: &mut Vec<(String, Vec<String>)>, text: String, arch: String| match list
        .iter_mut()
        .find(|(t, _)| *t == text)
    {
        Some((_, arches)) => arches.push(arch),
        None => list.push((text, vec![arch])),
    };
    for ((arch, out), _) in outputs.iter().zip(fresh).filter(|(_, &f)| f) {
        let log: Vec<&str> = out.nvrtc_log.lines().filter(|l| !l.trim().is_empty()).map(str::trim_end).collect();
        if !log.is_empty() {
            add(&mut logs, log.join("\n"), arch.to_string());
        }
        for d in warnings_of_ptxas(out) {
            add(&mut lines, d, arch.to_string());
        }
    }
    let mut out = Vec::new();
    for (text, arches) in logs.into_iter().chain(lines) {
        let arches = arches.join(", ");
        out.extend(text.lines().map(|l| format!("{file} ({arches}): {l}")));
    }
    out
}

/// Every compiler warning of one file's outputs as the manifest lists them, one per arch
/// (`kernels/a.cu (sm_80): ...`, as `assemble::manifest` writes them): to tell them from the
/// manifest's other warnings.
fn manifest_compiler_warnings(file: &str, outputs: &[(launch::Arch, compile::JobOutput)]) -> Vec<String> {
    let mut out = Vec::new();
    for (arch, o) in outputs {
        out.extend(
            o.nvrtc_log.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("{file} ({arch}): {}", l.trim_end())),
        );
        out.extend(warnings_of_ptxas(o).map(|d| format!("{file} ({arch}): {d}")));
    }
    out
}

/// ptxas's warnings in one output, trimmed.
fn warnings_of_ptxas(out: &compile::JobOutput) -> impl Iterator<Item = String> + '_ {
    out.report
        .diagnostics
        .iter()
        .filter(|d| matches!(d.severity, ptxas_log::Severity::Warning))
        .map(|d| d.raw.trim().to_string())
}

/// One kernel file, read, checked and with its annotations applied.
struct Prepared {
    /// The text as the user wrote it.
    original: String,
    /// The text as compiled.
    applied: contract::Applied,
    annotations: Vec<contract::Annotation>,
    kernels: Vec<source::KernelDef>,
}

/// `rerun-if-changed` for every input that exists: the kernel folder, each kernel file, each
/// header it includes from the crate. (A path that does not exist would rerun the script forever.)
fn announce_inputs(config: &Config, sources: &[SourceFile]) {
    let root = config.root();
    cargo_directives::rerun_if_changed(&root.join(&config.kernel_dir));
    let include_dirs: Vec<PathBuf> =
        std::iter::once(&config.kernel_dir).chain(&config.include_dirs).map(|d| root.join(d)).collect();
    let mut deps = std::collections::BTreeSet::new();
    for s in sources {
        cargo_directives::rerun_if_changed(&s.path);
        deps.extend(source::dependencies(&s.path, &include_dirs));
    }
    for d in deps {
        cargo_directives::rerun_if_changed(&d);
    }
}

/// docs.rs: no network, no toolchain. Every kernel found in the sources gets a static without
/// cubins, so the crate's documentation builds.
fn docs_stub(config: &Config, sources: &[SourceFile], launch_dir: &Path) -> Result<Manifest, Error> {
    let arch = config.arches[0];
    let mut manifest = Manifest {
        schema: manifest::VERSION,
        package: config.package.clone(),
        toolchain: ToolchainInfo {
            nvrtc: "none".into(),
            ptxas: "none".into(),
            description: "DOCS_RS: kernels not compiled".into(),
        },
        arches: config.arches.clone(),
        host_threads: config.host_threads,
        modules: Vec::new(),
        kernels: Vec::new(),
        warnings: Vec::new(),
        min_driver: None,
        host: Vec::new(),
    };
    let kernel_dir = config.kernel_dir.display().to_string().replace('\\', "/");
    let modules = assemble::module_paths(&kernel_dir, &sources.iter().map(|s| s.file.as_str()).collect::<Vec<_>>());
    for (s, module) in sources.iter().zip(modules) {
        let bytes = std::fs::read(&s.path).map_err(Error::io("read", &s.path))?;
        let text = source::decode(&s.file, bytes).map_err(|e| Error::Kernels(vec![e]))?;
        let ptx = assemble::ptx_path(&s.file, arch);
        out::write_if_changed(&launch_dir.join(&ptx), b"")?;
        manifest.modules.push(ModuleEntry {
            file: s.file.clone(),
            ptx,
            ptx_arch: arch,
            ptx_version: String::new(),
            cubins: Vec::new(),
            extra_ptx: Vec::new(),
            rust_module: module.clone(),
        });
        let mut seen = std::collections::BTreeSet::new();
        for d in source::kernels(&text, &source::scan(&text)) {
            // A scan can see one name twice (`#if` branches); the compiler keeps one.
            if !seen.insert(d.name.clone()) {
                continue;
            }
            let rust_name = names::rust_name(&d.name);
            manifest.kernels.push(manifest::KernelEntry {
                rust_path: format!("{module}::{rust_name}"),
                rust_name,
                rust_flat: false,
                qualified: format!("{}::{}", s.file, d.name),
                display_name: d.name.clone(),
                name: d.name,
                file: s.file.clone(),
                line: d.line,
                col: d.col,
                origin: manifest::Origin::Definition,
                contract: None,
                arches: Vec::new(),
                missing: Vec::new(),
                host_threads: None,
                variants: Vec::new(),
            });
        }
    }
    assemble::finish_names(&mut manifest.kernels);
    for k in &mut manifest.kernels {
        k.host_threads = config.kernel_settings(&k.name, &k.qualified).threads;
    }
    out::write_if_changed(&launch_dir.join("kernels.rs"), embed::generate(&manifest).as_bytes())?;
    Ok(manifest)
}
