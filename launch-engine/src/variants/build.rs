//! Embedding tune variants at build time (`[package.metadata.launch.tune.<kernel>]`): for each
//! variant of the grid ([`super::grid`]) and each arch its kernel is built for, the kernel's PTX
//! from this build's NVRTC run with the contract written in and the entry renamed, its entry
//! alone, assembled by ptxas. The ptxas runs go through the build's kernel cache
//! ([`super::cached`]: keyed by the edited PTX, the arch, the ptxas options and ptxas itself) and
//! its scheduler (side by side, one per jobserver slot), so a rebuild runs none of them.
//!
//! A variant whose launch at its own block size fails on an arch (`launch_analysis`) is not
//! embedded for that arch; the manifest records why. Each variant embedded somewhere is its own
//! module: a cubin per arch it is embedded for and the PTX of the lowest of them.

use std::path::Path;
use std::time::{Duration, Instant};

use launch::{Arch, Contract};
use launch_analysis::{analyze, DynamicStack};

use super::grid::{self, Planned, PlannedVariant};
use super::{cached, PtxKernel, Variant};
use crate::compile::cached::{keep_under_limit, open_cache};
use crate::compile::scheduler::{stops_the_build, tokens, Tokens};
use crate::compile::FileOutputs;
use crate::compile::{bounded, sanitize, Compiler};
use crate::config::Config;
use crate::env::{var, Env};
use crate::error::{Diagnostic, Error, FileFailure};
use crate::stack::as_the_driver_reports;
use crate::{cargo_directives, ptx};
use launch_schema::manifest::{CubinEntry, KernelArch, Manifest, ModuleEntry, RefusedArch, VariantEntry};

/// What [`build`] made besides the manifest's variant records.
#[derive(Debug, Default)]
pub struct Built {
    /// Files to write under `OUT_DIR/launch` (path relative to it, bytes): each embedded
    /// variant's cubins and fallback PTX.
    pub files: Vec<(String, Vec<u8>)>,
    /// ptxas runs the grids needed (variants × arches).
    pub jobs: usize,
    /// Of them, run in this build (the others came from the cache).
    pub compiled: usize,
    /// Their ptxas time, milliseconds.
    pub ptxas_ms: f64,
    /// The grids' notes: points left out as the same code as another or as the kernel.
    pub notes: Vec<String>,
}

/// Cubin of a variant for one arch, relative to `OUT_DIR/launch`.
pub fn cubin_path(file: &str, entry: &str, arch: Arch) -> String {
    format!("variants/{}.{}.{arch}.cubin", sanitize(file), bounded(entry, entry))
}

/// Fallback PTX of a variant, relative to `OUT_DIR/launch`.
pub fn ptx_path(file: &str, entry: &str, arch: Arch) -> String {
    format!("variants/{}.{}.{arch}.ptx", sanitize(file), bounded(entry, entry))
}

/// What one variant embeds: the PTX of its lowest embedded arch, a cubin per embedded arch.
#[derive(Default)]
struct Embedded {
    ptx: Option<(Arch, String)>,
    cubins: Vec<(Arch, Vec<u8>)>,
}

/// One ptxas run: variant `variant` of plan `plan` on `arch`.
struct Job<'a> {
    plan: usize,
    variant: usize,
    arch: Arch,
    file: &'a str,
    entry: &'a str,
    contract: Contract,
    text: String,
    ptxas_flags: Vec<String>,
}

/// Plans every tune table's variants, assembles them and fills each tuned kernel's
/// `variants` in `manifest`.
///
/// # Errors
/// A tune table that names no kernel (or too many variants), a kernel whose PTX cannot be edited,
/// ptxas failing on a variant (every failing one is reported, as for kernel files).
pub fn build(
    env: &Env,
    compiler: &Compiler,
    config: &Config,
    launch_dir: &Path,
    files: &[FileOutputs],
    manifest: &mut Manifest,
) -> Result<Built, Error> {
    let mut plans = grid::plan(config, &manifest.kernels)?;
    let notes: Vec<String> = plans.iter().filter_map(|p| p.note.clone()).collect();
    plans.retain(|p| !p.variants.is_empty());
    if plans.is_empty() {
        return Ok(Built { notes, ..Built::default() });
    }
    let jobs = jobs(&plans, manifest, files)?;
    let assembled = assemble_all(env, compiler, launch_dir, compiler.timeout(), &jobs)?;

    let mut built = Built { jobs: jobs.len(), notes, ..Built::default() };
    let mut entries: Vec<Vec<VariantEntry>> = plans
        .iter()
        .map(|p| {
            p.variants
                .iter()
                .map(|v| VariantEntry {
                    name: v.name.clone(),
                    contract: v.contract,
                    module: None,
                    arches: Vec::new(),
                    refused: Vec::new(),
                })
                .collect()
        })
        .collect();
    // Lowest arch first (the kernel's arches are), so each variant's first embedded arch gives
    // its fallback PTX.
    let mut embedded: Vec<Vec<Embedded>> =
        plans.iter().map(|p| (0..p.variants.len()).map(|_| Embedded::default()).collect()).collect();
    for (job, (variant, fresh)) in jobs.iter().zip(assembled) {
        if fresh {
            built.compiled += 1;
            built.ptxas_ms += variant.ptxas_time.as_secs_f64() * 1e3;
        }
        let k = &manifest.kernels[plans[job.plan].kernel];
        let host = manifest.host_launch(k);
        let e = &mut entries[job.plan][job.variant];
        // An arch without occupancy data cannot be judged: embedded, as the kernel is.
        let failure = analyze(job.arch, &variant.resources, Some(job.contract), host)
            .ok()
            .and_then(|r| r.launch_failure.map(|f| format!("cannot launch at {} threads: {f}", r.occupancy.threads)));
        match failure {
            Some(reason) => e.refused.push(RefusedArch { arch: job.arch, reason, resources: variant.resources }),
            None => {
                // A variant is its kernel's code under another contract: the same call graph, so
                // the same recursion (ptxas's frame is the variant's own).
                let dynamic_stack = k.arches.iter().find(|a| a.arch == job.arch).and_then(|a| a.dynamic_stack.clone());
                let dynamic_stack =
                    dynamic_stack.map(|d| DynamicStack { ptxas_frame: variant.resources.stack_frame, ..d });
                let resources = as_the_driver_reports(variant.resources, dynamic_stack.as_ref());
                e.arches.push(KernelArch {
                    arch: job.arch,
                    resources,
                    ptxas_lines: variant.lines,
                    dynamic_stack,
                    contract: None,
                });
                let files = &mut embedded[job.plan][job.variant];
                files.ptx.get_or_insert((job.arch, job.text.clone()));
                files.cubins.push((job.arch, variant.cubin));
            }
        }
    }
    for (pi, plan) in plans.iter().enumerate() {
        let file = manifest.kernels[plan.kernel].file.clone();
        // The variants are assembled with their file's ptxas options (see `jobs`).
        let flags = files.iter().find(|f| f.name() == file).map(|f| &f.file.settings.ptxas_flags[..]).unwrap_or(&[]);
        for (vi, e) in entries[pi].iter_mut().enumerate() {
            let embedded = std::mem::take(&mut embedded[pi][vi]);
            e.module = module((&file, flags), &e.name, embedded, &mut built.files);
        }
        manifest.kernels[plan.kernel].variants = std::mem::take(&mut entries[pi]);
    }
    built.ptxas_ms = (built.ptxas_ms * 1e3).round() / 1e3;
    Ok(built)
}

/// One ptxas job per variant × arch of each plan: the kernel's PTX for the arch with only its
/// entry kept and the variant's contract written in.
fn jobs<'m>(plans: &'m [Planned], manifest: &'m Manifest, files: &[FileOutputs]) -> Result<Vec<Job<'m>>, Error> {
    let mut jobs: Vec<Job> = Vec::new();
    for (pi, plan) in plans.iter().enumerate() {
        let k = &manifest.kernels[plan.kernel];
        let Some(f) = files.iter().find(|f| f.name() == k.file) else { continue };
        let ptxas_flags = &f.file.settings.ptxas_flags;
        for ka in &k.arches {
            let Some((_, out)) = f.outputs.iter().find(|(a, _)| *a == ka.arch) else { continue };
            let not_editable = |e: ptx::PtxEditError| {
                Error::Kernels(vec![Diagnostic::error(
                    &k.file,
                    k.line,
                    k.col,
                    format!(
                        "the tune variants of `{}` cannot be derived from its PTX for {}: {e}",
                        k.display_name, ka.arch
                    ),
                )])
            };
            let alone = ptx::keep_entry(&out.ptx, &k.name).map_err(not_editable)?;
            for (vi, PlannedVariant { name, contract }) in plan.variants.iter().enumerate() {
                let text = ptx::with_contract(&alone, &k.name, Some(contract), Some(name)).map_err(not_editable)?;
                if let Err(e) = same_params(k, &text, name) {
                    let message = format!(
                        "the tune variants of `{}` do not take its parameters on {}: {e}",
                        k.display_name, ka.arch
                    );
                    return Err(Error::Kernels(vec![Diagnostic::error(&k.file, k.line, k.col, message)]));
                }
                jobs.push(Job {
                    plan: pi,
                    variant: vi,
                    arch: ka.arch,
                    file: &k.file,
                    entry: name,
                    contract: *contract,
                    text,
                    ptxas_flags: ptxas_flags.clone(),
                });
            }
        }
    }
    Ok(jobs)
}

/// A variant launches through its kernel's typed static, so its entry must take the kernel's
/// parameters: `variant`'s `.param` list in `text` against `k`'s recorded one.
fn same_params(k: &launch_schema::manifest::KernelEntry, text: &str, variant: &str) -> Result<(), String> {
    let Some(params) = &k.params else { return Ok(()) };
    let ptx = crate::signature::ptx_params(text, variant).ok_or("its entry's parameters do not read")?;
    let recorded: Vec<(u32, u32)> = params.iter().map(|p| (p.size, p.align)).collect();
    let got: Vec<(u32, u32)> = ptx.iter().map(|p| (p.size, p.align)).collect();
    if got == recorded {
        Ok(())
    } else {
        Err(format!("variant `{variant}` declares the parameters (size, align) {got:?}, its kernel {recorded:?}"))
    }
}

/// The module of variant `name` of a kernel of `file`, from what it is embedded with (none when
/// refused on every arch); its files join `out`.
fn module(
    (file, ptxas_flags): (&str, &[String]),
    name: &str,
    files: Embedded,
    out: &mut Vec<(String, Vec<u8>)>,
) -> Option<ModuleEntry> {
    let (ptx_arch, text) = files.ptx?;
    let module = ModuleEntry {
        file: file.to_string(),
        ptx: ptx_path(file, name, ptx_arch),
        ptx_arch,
        ptx_version: ptx::version(&text).unwrap_or("").to_string(),
        cubins: (files.cubins.iter())
            .map(|(arch, _)| CubinEntry { arch: *arch, path: cubin_path(file, name, *arch) })
            .collect(),
        extra_ptx: Vec::new(),
        rust_module: String::new(),
        ptxas_flags: ptxas_flags.to_vec(),
    };
    out.push((module.ptx.clone(), text.into_bytes()));
    for (c, (_, bytes)) in module.cubins.iter().zip(files.cubins) {
        out.push((c.path.clone(), bytes));
    }
    Some(module)
}

/// Every job's variant, in job order, and whether it was assembled in this run (else it came from
/// the cache).
fn assemble_all(
    env: &Env,
    compiler: &Compiler,
    launch_dir: &Path,
    timeout: Duration,
    jobs: &[Job],
) -> Result<Vec<(Variant, bool)>, Error> {
    let debug = env.flag(var::LAUNCH_BUILD_DEBUG)?;
    let work_dir = launch_dir.join("work").join("variants");
    let runs: Vec<cached::Job> = jobs
        .iter()
        .map(|j| cached::Job {
            kernel: PtxKernel { file: j.file, arch: j.arch, ptx: "", entry: j.entry },
            text: j.text.clone(),
            contract: Some(j.contract),
            ptxas_flags: &j.ptxas_flags,
        })
        .collect();
    let cache = open_cache(env, launch_dir)?;
    let slots = if jobs.len() > 1 { tokens(env) } else { Tokens::Serial };
    let started = Instant::now();
    let ran = cached::assemble(&compiler.toolchain, cache.as_ref(), &slots, &work_dir, timeout, &runs, debug);
    let used = &ran.cache;
    if let (Some(first), true) = (&used.first_damage, env.is_build_script()) {
        cargo_directives::launch_build_warning(&format!(
            "{} damaged kernel cache entries of tune variants assembled again and replaced (first: {first})",
            used.damaged
        ));
    }
    if let (Some(message), true) = (&used.store_failure, env.is_build_script()) {
        cargo_directives::launch_build_warning(&format!("{message} (the build goes on without it)"));
    }
    // What ptxas assembled was stored: the cache kept under its limit, as after the kernels.
    if let Some(cache) = cache.as_ref().filter(|_| used.misses > 0) {
        let fresh = ran.results.iter().zip(&ran.from_cache).filter(|(_, &cached)| !cached);
        let stored: usize =
            fresh.filter_map(|(r, _)| r.as_ref()?.as_ref().ok()).map(|v| v.cubin.len() + v.log.len()).sum();
        keep_under_limit(env, cache, stored as u64, debug)?;
    }
    if debug && used.misses > 0 {
        cargo_directives::launch_build_warning(&format!(
            "tune variants: {} ptxas runs ({} from the cache), {} ms",
            used.misses,
            used.hits,
            started.elapsed().as_millis()
        ));
    }
    let mut outputs = Vec::with_capacity(jobs.len());
    let mut failed = Vec::new();
    for (i, (r, from_cache)) in ran.results.into_iter().zip(ran.from_cache).enumerate() {
        match r {
            Some(Ok(v)) => outputs.push(Some((v, !from_cache))),
            Some(Err(e)) if stops_the_build(&e) => return Err(e),
            Some(Err(e)) => {
                failed.push((jobs[i].file.to_string(), jobs[i].arch.to_string(), e));
                outputs.push(None);
            }
            None => outputs.push(None),
        }
    }
    if !failed.is_empty() {
        failed.sort_by(|a, b| a.0.cmp(&b.0));
        return Err(Error::Failed(FileFailure::group(failed)));
    }
    outputs
        .into_iter()
        .enumerate()
        .map(|(i, o)| {
            o.ok_or_else(|| {
                let message = format!("no output for tune variant `{}` on {}", jobs[i].entry, jobs[i].arch);
                Error::Kernels(vec![Diagnostic::error(jobs[i].file, 0, 0, message)])
            })
        })
        .collect()
}
