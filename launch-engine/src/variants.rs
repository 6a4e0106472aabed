//! Trying launch contracts on one kernel without compiling its source again: the contract is
//! written into the kernel's PTX (`ptx::with_contract`) and ptxas alone is run on it, once per
//! contract, side by side. What `cargo launch explore` measures, and what embedding variants at
//! build time reuses.
//!
//! Each variant is assembled from a module holding only its entry (`ptx::keep_entry`), so ptxas
//! does not compile the file's other kernels again for every contract. Every ptxas run goes
//! through the build's kernel cache ([`cached`]), so a variant assembled once, by a build or by
//! `cargo launch explore`, is not assembled again.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use launch::{Arch, Contract, Resources};

use crate::cache::Cache;
use crate::compile::scheduler::Tokens;
use crate::env::Env;
use crate::error::Error;
use crate::process::Tool;
use crate::ptx::{self, PtxEditError};
use crate::ptxas_log::{self, Severity};
use crate::toolchain::Toolchain;

/// One kernel's PTX for one arch, as NVRTC produced it.
#[derive(Clone, Copy, Debug)]
pub struct PtxKernel<'a> {
    /// The kernel file, relative to the crate (for messages).
    pub file: &'a str,
    /// The arch ptxas assembles for (the PTX's own target or one it can be assembled for).
    pub arch: Arch,
    /// The module's PTX.
    pub ptx: &'a str,
    /// The entry (symbol) to try the contracts on.
    pub entry: &'a str,
}

/// How the variants are assembled.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where ptxas's input and output files go (created when missing; the files are removed).
    pub work_dir: PathBuf,
    /// How many ptxas run at once (at least 1).
    pub jobs: usize,
    /// The longest one ptxas run may take (`LAUNCH_COMPILE_TIMEOUT` in the build).
    pub timeout: Duration,
    /// ptxas options besides `-arch` and `-v` (the file's `ptxas-flags`).
    pub ptxas_flags: Vec<String>,
    /// The kernel cache each variant is looked up in and stored to (`None`: ptxas runs for every
    /// variant, nothing is stored).
    pub cache: Option<KernelCache>,
}

impl Options {
    /// Files in `work_dir`, as many ptxas at once as this machine has cores, the build's time
    /// limit, the kernel cache the variables name ([`KernelCache::open`] with `work_dir` as the
    /// fallback folder; none when `LAUNCH_NO_CACHE` holds a bad value, which [`Env::check`] refuses).
    pub fn new(work_dir: PathBuf) -> Options {
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cache = KernelCache::open(&Env::cli(), &work_dir).unwrap_or(None);
        Options { work_dir, jobs, timeout: crate::process::DEFAULT_TIMEOUT, ptxas_flags: Vec::new(), cache }
    }
}

/// The build's kernel cache, where variants are kept by the content hash of their ptxas run (the
/// edited PTX, the arch, the ptxas options, ptxas's version and identity).
#[derive(Clone, Debug)]
pub struct KernelCache(Cache);

impl KernelCache {
    /// The cache a build with these variables uses: `kernels/` in `LAUNCH_CACHE_DIR` (else
    /// `$XDG_CACHE_HOME/cargo-launch`, else `~/.cache/cargo-launch`), else `launch_dir/cache`
    /// (the build's `OUT_DIR/launch`); `None` with `LAUNCH_NO_CACHE=1`.
    ///
    /// # Errors
    /// A `LAUNCH_NO_CACHE` that is not a switch.
    pub fn open(env: &Env, launch_dir: &Path) -> Result<Option<KernelCache>, Error> {
        Ok(crate::compile::cached::open_cache(env, launch_dir)?.map(KernelCache))
    }

    /// The cache in the folder `dir` (created on the first store).
    pub fn at(dir: PathBuf) -> KernelCache {
        KernelCache(Cache::new(dir))
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        self.0.dir()
    }
}

/// How the kernel cache served one [`assemble_variants`] call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// The cache's folder (`None`: no cache).
    pub dir: Option<PathBuf>,
    /// Variants taken from the cache: no ptxas run.
    pub hits: usize,
    /// Variants ptxas assembled (or failed on): every one without a cache.
    pub misses: usize,
    /// Of the misses, those whose entry was damaged or unusable (assembled again and replaced).
    pub damaged: usize,
    /// Why the first damaged entry was.
    pub first_damage: Option<String>,
    /// Why the cache could not be written, when it could not (the variants are assembled all the
    /// same, and assembled again next time).
    pub store_failure: Option<String>,
}

/// What [`assemble_variants`] made.
#[derive(Debug)]
pub struct Assembled {
    /// Per contract, in order: the variant, or why ptxas failed on it.
    pub variants: Vec<Result<Variant, Error>>,
    /// How many came from the kernel cache.
    pub cache: CacheUse,
}

/// One contract, assembled.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The contract written into the PTX (`None`: no bounds at all).
    pub contract: Option<Contract>,
    /// What ptxas reported for the entry: registers, spills, stack, ...
    pub resources: Resources,
    /// The entry's `ptxas -v` report lines, verbatim.
    pub lines: Vec<String>,
    /// ptxas's warnings, verbatim (such as a `.maxnreg` it could not honour).
    pub warnings: Vec<String>,
    /// The cubin.
    pub cubin: Vec<u8>,
    /// ptxas's whole `-v` log (what the build's cache keeps).
    pub log: String,
    /// How long the ptxas run took, start to exit (zero for a variant from the cache).
    pub ptxas_time: Duration,
}

/// Assembles `kernel.entry` once per contract (in `contracts`' order, `None` for no bounds), up to
/// `options.jobs` ptxas runs at once, each through `options.cache`: a variant the cache holds is
/// taken from it (the same numbers, lines and cubin as ptxas gave), a damaged entry is assembled
/// again and replaced. Each result is the variant or why ptxas failed on it (a `Compile` error
/// with ptxas's log, a time-out, a report without the entry); one variant's failure does not stop
/// the others, except ptxas itself failing to run (then the variants not yet started say so).
///
/// # Errors
/// The PTX has no such entry, or an entry that never ends: no variant could be written.
pub fn assemble_variants(
    toolchain: &Toolchain,
    kernel: &PtxKernel,
    contracts: &[Option<Contract>],
    options: &Options,
) -> Result<Assembled, PtxEditError> {
    let alone = ptx::keep_entry(kernel.ptx, kernel.entry)?;
    let jobs = contracts
        .iter()
        .map(|c| {
            Ok(cached::Job {
                kernel: *kernel,
                text: ptx::with_contract(&alone, kernel.entry, c.as_ref(), None)?,
                contract: *c,
                ptxas_flags: &options.ptxas_flags,
            })
        })
        .collect::<Result<Vec<_>, PtxEditError>>()?;
    // The implicit slot runs one ptxas; a private jobserver hands out the other `jobs - 1`.
    let tokens = match options.jobs {
        n if n > 1 => {
            jobserver::Client::new(n - 1).map_or(Tokens::Serial, |client| Tokens::Jobserver { client, origin: "jobs" })
        }
        _ => Tokens::Serial,
    };
    let cache = options.cache.as_ref().map(|c| &c.0);
    let ran = cached::assemble(toolchain, cache, &tokens, &options.work_dir, options.timeout, &jobs, false);
    let variants = ran
        .results
        .into_iter()
        .zip(contracts)
        .map(|(r, contract)| {
            r.unwrap_or_else(|| {
                Err(Error::Compile {
                    compiler: format!("ptxas {}", toolchain.ptxas_version),
                    file: kernel.file.to_string(),
                    arch: kernel.arch.to_string(),
                    log: format!(
                        "`{}` with {} not assembled: ptxas could not run for another variant",
                        kernel.entry,
                        describe(contract)
                    ),
                })
            })
        })
        .collect();
    Ok(Assembled { variants, cache: ran.cache })
}

/// `__launch_bounds__(256)` or `no contract`.
fn describe(contract: &Option<Contract>) -> String {
    contract.map_or_else(|| "no contract".to_string(), |c| format!("`{c}`"))
}

/// One ptxas run on `text`, the edited PTX of `kernel.entry` (`kernel.ptx` is not read).
pub(crate) fn assemble_one(
    toolchain: &Toolchain,
    kernel: &PtxKernel,
    text: &str,
    contract: Option<Contract>,
    work_dir: &Path,
    ptxas_flags: &[String],
    timeout: Duration,
) -> Result<Variant, Error> {
    // Unique per run in this process and across processes sharing the folder.
    static RUN: AtomicU64 = AtomicU64::new(0);
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let dir = work_dir;
    std::fs::create_dir_all(dir).map_err(Error::io("create folder", dir))?;
    let stem =
        format!("variant.{}.{}.{}.{run}", crate::compile::sanitize(kernel.entry), kernel.arch, std::process::id());
    let ptx_path = dir.join(format!("{stem}.ptx"));
    let cubin_path = dir.join(format!("{stem}.cubin"));
    std::fs::write(&ptx_path, text).map_err(Error::io("write", &ptx_path))?;
    let tool = Tool::new(&toolchain.ptxas)
        .arg(format!("-arch={}", kernel.arch))
        .arg("-v")
        .args(ptxas_flags)
        .arg(&ptx_path)
        .arg("-o")
        .arg(&cubin_path)
        .timeout(timeout);
    let started = Instant::now();
    let ran = tool.run_unchecked();
    let ptxas_time = started.elapsed();
    let cubin = std::fs::read(&cubin_path);
    let _ = std::fs::remove_file(&ptx_path);
    let _ = std::fs::remove_file(&cubin_path);
    let (status, out) = ran?;
    // Success is decided by the exit status, as in the build.
    if !status.success() {
        return Err(failed(toolchain, kernel, contract, &out.stderr));
    }
    let cubin = cubin.map_err(Error::io("read ptxas output", &cubin_path))?;
    from_log(toolchain, kernel, contract, out.stderr, cubin, ptxas_time)
}

/// The variant of `kernel.entry` from ptxas's `-v` log and cubin (of a run that exited with
/// success, now or when the build's cache stored it).
pub(crate) fn from_log(
    toolchain: &Toolchain,
    kernel: &PtxKernel,
    contract: Option<Contract>,
    log: String,
    cubin: Vec<u8>,
    ptxas_time: Duration,
) -> Result<Variant, Error> {
    let (file, arch) = (kernel.file.to_string(), kernel.arch.to_string());
    let report = ptxas_log::parse(&log).map_err(|e| Error::Report {
        file: file.clone(),
        arch: arch.clone(),
        reason: e.to_string(),
    })?;
    if report.diagnostics.iter().any(|d| matches!(d.severity, Severity::Error | Severity::Fatal)) {
        return Err(failed(toolchain, kernel, contract, &log));
    }
    let Some(entry) = report.entries.iter().find(|e| e.name == kernel.entry) else {
        return Err(Error::Report {
            file,
            arch,
            reason: format!("ptxas reported nothing for entry `{}` ({})", kernel.entry, describe(&contract)),
        });
    };
    Ok(Variant {
        contract,
        resources: entry.resources,
        lines: entry.lines.clone(),
        warnings: report
            .diagnostics
            .iter()
            .filter(|d| matches!(d.severity, Severity::Warning))
            .map(|d| d.raw.trim().to_string())
            .collect(),
        cubin,
        log,
        ptxas_time,
    })
}

/// ptxas's failure on one variant, with its log.
fn failed(toolchain: &Toolchain, kernel: &PtxKernel, contract: Option<Contract>, log: &str) -> Error {
    Error::Compile {
        compiler: format!("ptxas {}", toolchain.ptxas_version),
        file: kernel.file.to_string(),
        arch: kernel.arch.to_string(),
        log: format!("{}\nnote: `{}` with {} written into its PTX", log.trim_end(), kernel.entry, describe(&contract)),
    }
}

pub(crate) mod build;
mod cached;
mod grid;

#[cfg(test)]
mod tests;
