//! One nvcc compile per `host` file, for all its arches at once: the object the crate links, and
//! from the same run the per-arch PTX, cubins and `ptxas -v` lines the report reads. With several
//! arches the compile runs as nvcc's own steps ([`steps`]), so each arch's finished work is kept:
//! the same commands and files, and each arch's ptxas lines in arch order. What follows is the one
//! run, used for one arch or a dry run of another shape.
//!
//! `nvcc -c --keep --keep-dir DIR -Xptxas -v -gencode ... FILE -o OBJ` keeps the intermediate files
//! of the compile that makes the object: `<stem>.compute_XX.ptx` (cicc's output) and
//! `<stem>.compute_XX.cubin` (ptxas's, the very bytes nvcc puts in the object's fatbin) for each
//! arch, while ptxas's `-v` lines go to nvcc's stderr, one ptxas run per arch in `-gencode` order.
//! So the reported code is the linked code, and names are the linked program's: CUB, for one,
//! names its kernels after every arch of the compile (`CUB_300001_SM_800_900`), which a per-arch
//! compile would name differently for each arch.
//!
//! Given more than one job slot, nvcc compiles the arches side by side (`--threads N`, the same
//! bytes: nothing of it is in the cache key). Each arch's ptxas then prints its `-v` lines as one
//! block when it is done, in the order they finish: each block is given to its arch by the arch
//! its "Compiling entry function ... for 'sm_XX'" lines name ([`by_arch`]). A compile whose blocks
//! cannot be told apart that way runs again one arch at a time.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use launch::Arch;

use super::steps::{self, Kept, Plan};
use super::Tools;
use crate::cargo_directives;
use crate::compile::{parse_report, sanitize, work_file, Compiler, Job, JobOutput};
use crate::error::Error;
use crate::process::{Tool, PROBE_TIMEOUT};
use crate::ptxas_log::Severity;

/// What one host file's compile produced.
#[derive(Debug)]
pub struct HostOutput {
    /// Per arch of the file, in its order: the PTX, cubin and report, as for a device job, each
    /// with nvcc's own messages (its warnings) as its `nvrtc_log`.
    pub outputs: Vec<JobOutput>,
    /// The object file, host code and all arches' cubins.
    pub object: Vec<u8>,
    /// How long nvcc ran.
    pub time: Duration,
    /// The arches it compiled side by side (`--threads`).
    pub threads: usize,
}

/// Compiles `jobs` (one per arch, all of the same host file, in its arch order) with one nvcc
/// run, at most `slots` arches side by side. `options`: the file's nvcc options (include
/// folders, defines, its flags; see `host::options`).
///
/// # Errors
/// nvcc failing (its messages, the crate root taken out), timing out, or not writing what it
/// always writes; a ptxas report that does not parse.
pub fn run(
    compiler: &Compiler,
    tools: &Tools,
    jobs: &[Job],
    options: Vec<String>,
    slots: usize,
    kept: &dyn Kept,
) -> Result<HostOutput, Error> {
    // The crate's own `--threads` (or `-t`) is the crate's choice; nvcc refuses two.
    let own = options.iter().any(|o| o == "-t" || o.starts_with("--threads") || o.starts_with("-t="));
    let threads = if own { 1 } else { slots.clamp(1, jobs.len().max(1)) };
    match compile(compiler, tools, jobs, options.clone(), threads, kept)? {
        Compiled::Done(out) => Ok(out),
        // Once more, one arch at a time: the blocks then come in `-gencode` order.
        Compiled::Unordered => match compile(compiler, tools, jobs, options, 1, kept)? {
            Compiled::Done(out) => Ok(out),
            Compiled::Unordered => Err(Error::Report {
                file: jobs[0].file.source.file.clone(),
                arch: String::new(),
                reason: "nvcc's ptxas reports could not be told apart by arch".to_string(),
            }),
        },
    }
}

/// How long one nvcc run of `arches` arches may take: `per_run` (`LAUNCH_COMPILE_TIMEOUT`, one
/// compiler run per file and arch) once per arch, since nvcc does every arch's work of NVRTC and
/// ptxas in the one run, one after the other at worst. A compile making progress on a folder's one
/// big file is not stopped for having several arches (issue 32, class 11: candle-layer-norm's
/// two arches took nvcc 825 s on this machine, 1,364 s on a busy one, against 1,800 s).
pub fn limit(per_run: Duration, arches: usize) -> Duration {
    per_run.saturating_mul(u32::try_from(arches.max(1)).unwrap_or(u32::MAX))
}

/// What one nvcc run gave.
enum Compiled {
    Done(HostOutput),
    /// The arches compiled side by side, and the ptxas blocks name no arch to tell them apart by.
    Unordered,
}

/// [`run`] with `threads` arches side by side.
fn compile(
    compiler: &Compiler,
    tools: &Tools,
    jobs: &[Job],
    options: Vec<String>,
    threads: usize,
    kept: &dyn Kept,
) -> Result<Compiled, Error> {
    let first = jobs.first().expect("a host file has at least one arch");
    let planned = first.file;
    let file = &planned.source.file;
    let arches: Vec<Arch> = jobs.iter().map(|j| j.arch).collect();
    let arch_list = arches.iter().map(Arch::to_string).collect::<Vec<_>>().join(", ");
    // A folder of this file and this process: nvcc writes its intermediate files there.
    let keep = compiler.work_dir().join(format!("host.{}.{}", sanitize(file), std::process::id()));
    let _ = std::fs::remove_dir_all(&keep);
    std::fs::create_dir_all(&keep).map_err(Error::io("create folder", &keep))?;
    let object_path = keep.join("object.o");
    // Host code optimised unless the crate's flags say how (nvcc warns about a second `-O`).
    let optimise = !options.iter().any(|o| o.starts_with("-O") || o.starts_with("--optimize"));
    let mut tool = Tool::new(&tools.nvcc)
        .arg("-c")
        .arg(&planned.source.path)
        .arg("-o")
        .arg(&object_path)
        .arg("--keep")
        .arg("--keep-dir")
        .arg(&keep)
        .arg("-Xptxas")
        .arg("-v")
        .args(optimise.then_some("-O2"))
        // Position-independent host code, for Rust's PIE binaries (not every host compiler's default).
        .arg("-Xcompiler")
        .arg("-fPIC")
        .args(options);
    for o in &planned.settings.ptxas_flags {
        tool = tool.arg("-Xptxas").arg(o);
    }
    for a in &arches {
        tool = tool.arg("-gencode").arg(format!("arch={},code={a}", a.virtual_name()));
    }
    let started = Instant::now();
    let ran = match dry_run(&tool, &arches) {
        Some(plan) => {
            if compiler.debug() {
                cargo_directives::launch_build_warning(&format!("{tool}, as its {} steps", plan.len()));
            }
            plan.run(&arches, &keep, compiler.timeout(), threads, kept).map(|r| (r.ok, r.text, r.kept, true))
        }
        None => {
            if threads > 1 {
                tool = tool.arg("--threads").arg(threads.to_string());
            }
            let tool = tool.timeout(limit(compiler.timeout(), arches.len()));
            if compiler.debug() {
                cargo_directives::launch_build_warning(&tool.to_string());
            }
            let ran = tool.run_unchecked();
            ran.map(|(status, out)| (status.success(), format!("{}{}", out.stdout, out.stderr), Vec::new(), false))
        }
    };
    let ran = ran.map_err(|e| crate::compile::for_job(e, &tools.nvcc_name, file, &arch_list));
    let time = started.elapsed();
    let result = ran.and_then(|(ok, text, restored, in_steps)| {
        if !restored.is_empty() {
            let restored = restored.iter().map(Arch::to_string).collect::<Vec<_>>().join(", ");
            cargo_directives::launch_build_warning(&format!(
                "{file}: {restored} kept from a compile that did not finish (nvcc compiled the other arches)"
            ));
        }
        let root = format!("{}/", compiler.root().display());
        let text = text.replace(&root, "");
        let (nvcc_log, ptxas_logs) = split_log(&text);
        if !ok {
            return Err(Error::Compile {
                compiler: tools.nvcc_name.clone(),
                file: file.clone(),
                arch: arch_list,
                log: text,
            });
        }
        // Steps print each arch's ptxas lines in arch order, as nvcc does one arch at a time.
        let ptxas_logs = match threads {
            _ if in_steps => ptxas_logs,
            1 => ptxas_logs,
            _ => match by_arch(ptxas_logs, &arches) {
                Some(logs) => logs,
                None => return Ok(Compiled::Unordered),
            },
        };
        let mut outputs = read_outputs(jobs, &keep, ptxas_logs)?;
        // nvcc's messages are the file's, of every arch (the build groups them per file).
        for o in &mut outputs {
            o.nvrtc_log.clone_from(&nvcc_log);
        }
        let object = std::fs::read(&object_path).map_err(work_file("read nvcc output", &object_path, file))?;
        // An `extern "C"` kernel's parameter types: its host stub's mangled name.
        let names = super::symbols::names(&object);
        for o in &mut outputs {
            o.probes = crate::ptx::entries(&o.ptx)
                .into_iter()
                .map(|e| e.name)
                .filter(|n| !n.starts_with("_Z"))
                .map(|k| {
                    let stub = super::symbols::stub_of(&names, &k).map(str::to_string);
                    (k, stub)
                })
                .collect();
        }
        Ok(Compiled::Done(HostOutput { outputs, object, time, threads }))
    });
    let _ = std::fs::remove_dir_all(&keep);
    result
}

/// The step-by-step plan of `tool`'s compile of `arches` (see [`steps`]), from nvcc's dry run;
/// `None` for one arch, or when the dry run fails or its commands are not as expected.
fn dry_run(tool: &Tool, arches: &[Arch]) -> Option<Plan> {
    if arches.len() < 2 {
        return None;
    }
    let (status, out) = tool.clone().arg("-dryrun").timeout(PROBE_TIMEOUT).run_unchecked().ok()?;
    status.success().then(|| steps::plan(&out.stderr, arches)).flatten()
}

/// Each arch's PTX, cubin and report from the keep folder, `ptxas_logs` the `-v` lines of each
/// ptxas run in order.
fn read_outputs(jobs: &[Job], keep: &Path, ptxas_logs: Vec<String>) -> Result<Vec<JobOutput>, Error> {
    let file = &jobs[0].file.source.file;
    if ptxas_logs.len() != jobs.len() {
        return Err(Error::Report {
            file: file.clone(),
            arch: jobs.iter().map(|j| j.arch.to_string()).collect::<Vec<_>>().join(", "),
            reason: format!(
                "nvcc ran ptxas {} time(s) for {} arch(es): the `-v` lines cannot be told apart by arch",
                ptxas_logs.len(),
                jobs.len()
            ),
        });
    }
    jobs.iter()
        .zip(ptxas_logs)
        .map(|(job, log)| {
            let virt = job.arch.virtual_name();
            let single = jobs.len() == 1;
            let ptx_path = kept(keep, &virt, "ptx", single, file)?;
            let cubin_path = kept(keep, &virt, "cubin", single, file)?;
            let ptx = std::fs::read_to_string(&ptx_path).map_err(work_file("read nvcc output", &ptx_path, file))?;
            let cubin = std::fs::read(&cubin_path).map_err(work_file("read nvcc output", &cubin_path, file))?;
            let report = parse_report(job, &log)?;
            if report.diagnostics.iter().any(|d| matches!(d.severity, Severity::Error | Severity::Fatal)) {
                return Err(Error::Compile {
                    compiler: "ptxas (run by nvcc)".to_string(),
                    file: file.clone(),
                    arch: job.arch.to_string(),
                    log,
                });
            }
            Ok(JobOutput { ptx, cubin, report, nvrtc_log: String::new(), ptxas_log: log, probes: Vec::new() })
        })
        .collect()
}

/// The file of `keep` nvcc wrote for `virt` with extension `ext`: `<stem>.compute_XX.<ext>` when the
/// compile had several arches, `<stem>.<ext>` when it had one (`single`).
pub(crate) fn kept(keep: &Path, virt: &str, ext: &str, single: bool, file: &str) -> Result<PathBuf, Error> {
    let entries = std::fs::read_dir(keep).map_err(Error::io("list", keep))?;
    let names: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    let named = |p: &&PathBuf, test: &dyn Fn(&str) -> bool| p.file_name().and_then(|n| n.to_str()).is_some_and(test);
    let per_arch = format!(".{virt}.{ext}");
    let found = names.iter().find(|p| named(p, &|n| n.ends_with(&per_arch))).or_else(|| {
        let plain = format!(".{ext}");
        single.then(|| names.iter().find(|p| named(p, &|n| n.ends_with(&plain) && !n.contains(".compute_")))).flatten()
    });
    found.cloned().ok_or_else(|| {
        let missing = keep.join(format!("<stem>{per_arch}"));
        work_file("find nvcc's kept output", &missing, file)(std::io::Error::from(std::io::ErrorKind::NotFound))
    })
}

/// The ptxas blocks of a side-by-side compile (one per arch, in the order they finished) in the
/// order of `arches`: each block goes to the arch its "... for 'sm_XX'" lines name. Blocks that
/// name none (a file without kernels for that arch) take the arches left, in order, when they are
/// all the same text (so which takes which changes nothing). `None` when that does not give each
/// arch one block: a block naming two arches, two naming one, or differing blocks naming none.
pub fn by_arch(runs: Vec<String>, arches: &[Arch]) -> Option<Vec<String>> {
    if runs.len() != arches.len() {
        return None;
    }
    let mut placed: Vec<Option<String>> = vec![None; arches.len()];
    let mut unnamed = Vec::new();
    for run in runs {
        let named: std::collections::BTreeSet<usize> = run
            .lines()
            .filter_map(|l| l.rsplit_once(" for '").and_then(|(_, a)| a.strip_suffix('\'')))
            .map(|a| arches.iter().position(|x| x.to_string() == a))
            .collect::<Option<_>>()?;
        match named.into_iter().collect::<Vec<_>>()[..] {
            [] => unnamed.push(run),
            [i] if placed[i].is_none() => placed[i] = Some(run),
            _ => return None,
        }
    }
    if unnamed.windows(2).any(|w| w[0] != w[1]) {
        return None;
    }
    let mut unnamed = unnamed.into_iter();
    placed.into_iter().map(|p| p.or_else(|| unnamed.next())).collect()
}

/// nvcc's messages apart from ptxas's `-v` lines, and those lines cut into one log per ptxas run.
/// ptxas starts each run's report with its `N bytes gmem` line; its other lines start with
/// `ptxas` or, continuing a function's properties, with blanks. The commands `--verbose` prints
/// (`#$ ...`) are left out: they are not messages about the code, and they hold this machine's
/// paths (`LAUNCH_BUILD_DEBUG=1` prints the nvcc command).
pub fn split_log(text: &str) -> (String, Vec<String>) {
    let mut nvcc = String::new();
    let mut runs: Vec<String> = Vec::new();
    let mut in_ptxas = false;
    // Whether the run being read already had its gmem line (warnings may come before it).
    let mut had_gmem = false;
    for line in text.lines().filter(|l| !l.starts_with("#$ ")) {
        let is_ptxas = line.starts_with("ptxas ");
        let continues = in_ptxas && line.starts_with(char::is_whitespace) && !line.trim().is_empty();
        if is_ptxas || continues {
            let gmem = is_ptxas && line.contains(" bytes gmem");
            if runs.is_empty() || (gmem && had_gmem) {
                runs.push(String::new());
                had_gmem = false;
            }
            had_gmem |= gmem;
            let run = runs.last_mut().expect("pushed above");
            run.push_str(line);
            run.push('\n');
            in_ptxas = true;
        } else {
            nvcc.push_str(line);
            nvcc.push('\n');
            in_ptxas = false;
        }
    }
    (nvcc, runs)
}
