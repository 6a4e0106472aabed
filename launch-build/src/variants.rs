//! Trying launch contracts on one kernel without compiling its source again: the contract is
//! written into the kernel's PTX (`ptx::with_contract`) and ptxas alone is run on it, once per
//! contract, side by side. What `cargo launch explore` measures, and what embedding variants at
//! build time reuses.
//!
//! Each variant is assembled from a module holding only its entry (`ptx::keep_entry`), so ptxas
//! does not compile the file's other kernels again for every contract.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use launch::{Arch, Contract, Resources};

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
}

impl Options {
    /// Files in `work_dir`, as many ptxas at once as this machine has cores, the build's time limit.
    pub fn new(work_dir: PathBuf) -> Options {
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        Options { work_dir, jobs, timeout: crate::process::DEFAULT_TIMEOUT, ptxas_flags: Vec::new() }
    }
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
/// `options.jobs` ptxas runs at once. Each result is the variant or why ptxas failed on it (a
/// `Compile` error with ptxas's log, a time-out, a report without the entry); one variant's
/// failure does not stop the others.
///
/// # Errors
/// The PTX has no such entry, or an entry that never ends: no variant could be written.
pub fn assemble_variants(
    toolchain: &Toolchain,
    kernel: &PtxKernel,
    contracts: &[Option<Contract>],
    options: &Options,
) -> Result<Vec<Result<Variant, Error>>, PtxEditError> {
    let alone = ptx::keep_entry(kernel.ptx, kernel.entry)?;
    let texts = contracts
        .iter()
        .map(|c| ptx::with_contract(&alone, kernel.entry, c.as_ref(), None))
        .collect::<Result<Vec<String>, PtxEditError>>()?;
    let next = AtomicUsize::new(0);
    let workers = options.jobs.clamp(1, contracts.len().max(1));
    let mut results: Vec<(usize, Result<Variant, Error>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(text) = texts.get(i) else { break };
                        done.push((i, assemble_one(toolchain, kernel, text, contracts[i], options)));
                    }
                    done
                })
            })
            .collect();
        // A worker only panics on a bug here; its variants are then reported as lost, not a panic.
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let mut out = Vec::with_capacity(contracts.len());
    let mut results = results.into_iter().peekable();
    for (i, contract) in contracts.iter().enumerate() {
        match results.next_if(|(j, _)| *j == i) {
            Some((_, r)) => out.push(r),
            None => out.push(Err(Error::Compile {
                compiler: format!("ptxas {}", toolchain.ptxas_version),
                file: kernel.file.to_string(),
                arch: kernel.arch.to_string(),
                log: format!("the thread assembling `{}` with {} stopped", kernel.entry, describe(contract)),
            })),
        }
    }
    Ok(out)
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
    options: &Options,
) -> Result<Variant, Error> {
    // Unique per run in this process and across processes sharing the folder.
    static RUN: AtomicU64 = AtomicU64::new(0);
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let dir = &options.work_dir;
    std::fs::create_dir_all(dir).map_err(Error::io("create folder", dir))?;
    let stem =
        format!("variant.{}.{}.{}.{run}", crate::compile::sanitize(kernel.entry), kernel.arch, std::process::id());
    let ptx_path = dir.join(format!("{stem}.ptx"));
    let cubin_path = dir.join(format!("{stem}.cubin"));
    std::fs::write(&ptx_path, text).map_err(Error::io("write", &ptx_path))?;
    let tool = Tool::new(&toolchain.ptxas)
        .arg(format!("-arch={}", kernel.arch))
        .arg("-v")
        .args(&options.ptxas_flags)
        .arg(&ptx_path)
        .arg("-o")
        .arg(&cubin_path)
        .timeout(options.timeout);
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
mod grid;

#[cfg(test)]
mod tests;
