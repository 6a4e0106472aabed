//! Stage `compile`: the toolchain found, every planned file × arch job run through the kernel
//! cache (side by side, one per jobserver token), the outputs in file order.

use std::path::Path;

use launch::Arch;

use super::host::{self, HostObject};
use super::{Compiler, Decision, Job, JobOutput, Settings, Step};
use crate::cache::Key;
use crate::compile::stats::BuildStats;
use crate::env::Env;
use crate::error::Error;
use crate::plan::{Plan, PlannedFile};
use crate::prepare::Prepared;
use crate::{source, toolchain};

/// All outputs of one source file, by arch (lowest first).
pub struct FileOutputs<'a> {
    /// The file, as planned.
    pub file: &'a PlannedFile,
    /// Its text as the user wrote it (to find the macro invocations that generate kernels).
    pub text: &'a str,
    /// Its `@launch` annotations.
    pub annotations: &'a [crate::contract::Annotation],
    /// Its `__global__` definitions, as scanned before compiling (for `file:line`).
    pub definitions: &'a [source::KernelDef],
    /// One output per arch the file is compiled for, lowest first.
    pub outputs: Vec<(Arch, JobOutput)>,
    /// Per output: compiled in this run (its compiler warnings are printed) or from the cache.
    pub fresh: Vec<bool>,
}

impl FileOutputs<'_> {
    /// The file's path relative to the crate root.
    pub fn name(&self) -> &str {
        &self.file.source.file
    }
}

/// What the stage produced.
pub struct Compiled<'p> {
    /// The compiler the jobs ran with (the variants and the link use it too).
    pub compiler: Compiler,
    /// nvcc and the host compiler, when the crate has `host` files.
    pub host_tools: Option<host::Tools>,
    /// The `host` files' objects, for the link stage.
    pub objects: Vec<HostObject>,
    /// Per planned file, its outputs.
    pub files: Vec<FileOutputs<'p>>,
    /// The statistics so far.
    pub stats: BuildStats,
    /// The digest of the build's inputs ([`Decision::Build`]), remembered beside the outputs.
    pub inputs: Option<String>,
}

/// Compiles every file of `plan` (prepared as `prepared`, in plan order) for its arches.
///
/// # Errors
/// No toolchain, an arch it cannot target, a missing host compiler, or [`Error::Failed`] with
/// every failing file (NVRTC's messages show the text as the user wrote it).
pub fn run<'p, K>(
    env: &Env,
    plan: &'p Plan,
    prepared: &'p [Prepared],
    launch_dir: &Path,
    decide: impl FnOnce(&Compiler, Option<&host::Tools>, &[Key]) -> Decision<K>,
) -> Result<Step<Compiled<'p>, K>, Error> {
    let config = &plan.config;
    let toolchain = toolchain::discover_for(env, &config.toolchain)?;
    let compiler = Compiler::new(toolchain, config, launch_dir.join("work"), Settings::from_env(env)?)?;
    compiler.check_arches(&config.arches)?;
    let host_tools = match config.host.first() {
        Some(first) => Some(host::tools(config, first, &compiler.toolchain, host::host_compiler(env), env)?),
        None => None,
    };
    // Jobs come from the cache or compile side by side; outputs come back in job order.
    let jobs: Vec<Job> = plan
        .files
        .iter()
        .zip(prepared)
        .flat_map(|(file, p)| {
            file.arches.iter().map(move |&arch| Job {
                file,
                text: &p.applied.text,
                annotations: &p.annotations,
                headers: &p.headers,
                arch,
            })
        })
        .collect();
    let built = match super::cached::run_all(env, &compiler, host_tools.as_ref(), launch_dir, &jobs, decide)
        .map_err(|e| restored(plan, prepared, e))?
    {
        Step::Done(built) => built,
        Step::Kept(kept) => return Ok(Step::Kept(kept)),
    };
    let mut outputs = built.outputs.into_iter();
    let mut compiled = built.compiled.into_iter();
    let files = plan
        .files
        .iter()
        .zip(prepared)
        .map(|(file, p)| {
            let outputs = (file.arches.iter())
                .map(|&arch| {
                    let mut out = outputs.next().expect("one output per job");
                    out.nvrtc_log = p.applied.restore_log(&file.source.file, &p.original, &out.nvrtc_log);
                    (arch, out)
                })
                .collect();
            let fresh = file.arches.iter().map(|_| compiled.next().unwrap_or(true)).collect();
            FileOutputs {
                file,
                text: &p.original,
                annotations: &p.annotations,
                definitions: &p.kernels,
                outputs,
                fresh,
            }
        })
        .collect();
    let (objects, stats, inputs) = (built.objects, built.stats, built.inputs);
    Ok(Step::Done(Compiled { compiler, host_tools, files, objects, stats, inputs }))
}

/// NVRTC's messages show the text it compiled: the failed files' messages with the user's text
/// instead (see `contract::Applied::restore_log`, which the outputs' logs go through too).
fn restored(plan: &Plan, prepared: &[Prepared], e: Error) -> Error {
    let Error::Failed(mut files) = e else { return e };
    for f in &mut files {
        let Some(i) = plan.files.iter().position(|p| p.source.file == f.file) else { continue };
        for e in &mut f.errors {
            if let Error::Compile { compiler, log, .. } = e {
                if compiler.starts_with("NVRTC") {
                    *log = prepared[i].applied.restore_log(&f.file, &prepared[i].original, log);
                }
            }
        }
    }
    Error::Failed(files)
}
