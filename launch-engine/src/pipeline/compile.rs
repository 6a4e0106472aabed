//! Stage `compile`: the toolchain found, every planned file × arch job run through the kernel
//! cache (side by side, one per jobserver token), the outputs in file order.

use std::path::Path;

use crate::assemble::FileOutputs;
use crate::build_stats::BuildStats;
use crate::cached_compile;
use crate::compile::{self, Compiler, Job};
use crate::env::Env;
use crate::error::Error;
use crate::host::{self, library::HostObject};
use crate::plan::Plan;
use crate::prepare::Prepared;
use crate::toolchain;

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
}

/// Compiles every file of `plan` (prepared as `prepared`, in plan order) for its arches.
///
/// # Errors
/// No toolchain, an arch it cannot target, a missing host compiler, or [`Error::Failed`] with
/// every failing file (NVRTC's messages show the text as the user wrote it).
pub fn run<'p>(env: &Env, plan: &'p Plan, prepared: &'p [Prepared], launch_dir: &Path) -> Result<Compiled<'p>, Error> {
    let config = &plan.config;
    let toolchain = toolchain::discover_for(env, &config.toolchain)?;
    let compiler = Compiler::new(toolchain, config, launch_dir.join("work"), compile::Settings::from_env(env)?)?;
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
    let built = cached_compile::run_all(env, &compiler, host_tools.as_ref(), launch_dir, &jobs)
        .map_err(|e| restored(plan, prepared, e))?;
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
    Ok(Compiled { compiler, host_tools, files, objects: built.objects, stats: built.stats })
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
