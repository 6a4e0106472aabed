//! Compiling a build's jobs through the kernel [cache](crate::cache): which jobs the cache
//! already holds ([`look_up`]), compiling the others side by side with the
//! [scheduler](crate::scheduler), longest first, and storing each entry as soon as its job
//! compiled ([`compile_and_store`]). [`run_all`] ties them to the compiler; the two steps see the
//! cache only through [`Store`], so a shared remote store changes nothing here.
//!
//! On any failure nothing is written under `OUT_DIR` (the caller writes only when every job
//! succeeded); what compiled is in the cache all the same, so the next build does not compile it
//! again. Damaged entries are worth one warning a build; a cache that cannot be written, one more.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use crate::build_stats::{self, BuildStats};
use crate::cache::{self, Cache, Entry, FileId, HeaderDigests, Key, KeyInputs, Lookup, Store, ToolchainId};
use crate::cargo_directives;
use crate::compile::{self, Compiler, Job, JobOutput};
use crate::env::Env;
use crate::error::{Error, FileFailure};
use crate::scheduler::{parallel, start_order, stops_the_build, tokens, Ran, Tokens};
use crate::{source, toolchain};

/// Placeholders for the absolute paths that compiler logs mention, so a cached log is right for
/// whichever checkout and `OUT_DIR` loads it. The work folder first: it may lie under the root.
fn placeholders(compiler: &Compiler) -> Vec<(String, &'static str)> {
    vec![
        (compiler.work_dir().display().to_string(), "${LAUNCH_WORK_DIR}"),
        (compiler.root().display().to_string(), "${LAUNCH_CRATE_ROOT}"),
    ]
}

/// The toolchain's part of every key.
pub fn toolchain_id(compiler: &Compiler) -> ToolchainId {
    let t = &compiler.toolchain;
    ToolchainId {
        nvrtc_version: t.nvrtc_version.clone(),
        nvrtc_api: compiler.nvrtc_api_version(),
        ptxas_version: t.ptxas_version.clone(),
        nvrtc: FileId::of(&t.nvrtc),
        ptxas: FileId::of(&t.ptxas),
    }
}

/// The key of every job, in order (headers found in NVRTC's search order and hashed by content),
/// with each job's size: its text plus every header it includes, in bytes (what the
/// start order guesses from without history).
///
/// # Errors
/// [`Error::InputFile`] at the `#include` of a header that is not a regular file: it is found
/// here, before anything is compiled (NVRTC would hang on a FIFO).
fn keys_and_sizes(compiler: &Compiler, jobs: &[Job]) -> Result<Vec<(Key, u64)>, Error> {
    let id = toolchain_id(compiler);
    let mut digests = HeaderDigests::default();
    // Per source file: its headers (portable path, digest) and their total size.
    type Headers = (Vec<(String, [u8; 32])>, u64);
    let mut headers_of: BTreeMap<PathBuf, Headers> = BTreeMap::new();
    jobs.iter()
        .map(|job| {
            let path = &job.file.source.path;
            if !headers_of.contains_key(path) {
                let deps = source::dependencies(path, &compiler.include_search(job), compiler.root())?;
                let bytes = deps.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
                let mut h: Vec<(String, [u8; 32])> =
                    deps.iter().map(|p| (compiler.portable(p), digests.digest(p))).collect();
                h.sort();
                headers_of.insert(path.clone(), (h, bytes));
            }
            let (headers, header_bytes) = &headers_of[path];
            let options = compiler.options(job, true);
            let ptxas_options = compiler.ptxas_options(job);
            let arch = job.arch.to_string();
            let key = cache::key(&KeyInputs {
                file: &job.file.source.file,
                text: job.text,
                headers,
                options: &options,
                ptxas_options: &ptxas_options,
                arch: &arch,
                annotations: job.annotations,
                toolchain: &id,
            });
            Ok((key, job.text.len() as u64 + *header_bytes))
        })
        .collect()
}

/// What [`run_all`] built.
#[derive(Debug)]
pub struct Built {
    /// One output per job, in job order.
    pub outputs: Vec<JobOutput>,
    /// Per job: compiled in this run (true) or loaded from the cache. Compiler warnings are shown
    /// for compiled jobs only.
    pub compiled: Vec<bool>,
    /// The statistics, for [`build_stats::write`].
    pub stats: BuildStats,
}

/// Runs every job through the cache, compiles the misses in parallel (longest first, see
/// [`start_order`]) and stores what compiled. Returns one output per job, in job order, and the
/// statistics, which the caller writes with [`build_stats::write`] only once the whole build
/// succeeded (a failed build writes nothing).
///
/// # Errors
/// When jobs fail to compile, every job still runs and the error is [`Error::Failed`]: every
/// failing file in file order, each failure once for all the arches that gave the same message.
/// A failure of the tools themselves ([`stops_the_build`]) stops the build at once with that error.
pub fn run_all(env: &Env, compiler: &Compiler, launch_dir: &Path, jobs: &[Job]) -> Result<Built, Error> {
    let started = Instant::now();
    let debug = env.flag("LAUNCH_BUILD_DEBUG")?;
    let root = toolchain::cache_dir(env);
    let cache = open_cache(env, launch_dir)?;
    // Compile times live beside the entry folder, never in it (see cache::Timings).
    let timings_dir = root.map(|d| d.join("kernel-timings")).unwrap_or_else(|| launch_dir.join("cache-timings"));
    let pairs = placeholders(compiler);
    let (keys, sizes): (Vec<Key>, Vec<u64>) = keys_and_sizes(compiler, jobs)?.into_iter().unzip();
    let label = |i: usize| format!("{} {}", jobs[i].file.source.file, jobs[i].arch);

    let Found { mut outputs, corrupt, first_damage } =
        look_up(cache.as_ref(), &keys, |i, e| from_entry(&jobs[i], e, &pairs), label, debug);

    // Damage is worth one warning a build: something else wrote into the cache (or a disk
    // failed); each entry is compiled again and replaced.
    if let Some(first) = &first_damage {
        if env.is_build_script() {
            let entries = if corrupt == 1 { "entry" } else { "entries" };
            cargo_directives::launch_build_warning(&format!(
                "{corrupt} damaged kernel cache {entries} compiled again and replaced (first: {first})"
            ));
        }
    }

    let pending: Vec<usize> = (0..jobs.len()).filter(|&i| outputs[i].is_none()).collect();
    let mut timings = cache.as_ref().map(|_| cache::Timings::load(&timings_dir, compiler.root())).unwrap_or_default();
    let history: Vec<Option<u64>> =
        pending.iter().map(|&i| timings.get(&jobs[i].file.source.file, &jobs[i].arch.to_string())).collect();
    let order = start_order(&history, &pending.iter().map(|&i| sizes[i]).collect::<Vec<_>>());
    if debug && !order.is_empty() {
        let first: Vec<String> = order.iter().take(3).map(|&k| label(pending[k])).collect();
        note(debug, &format!("starting the longest jobs first: {}, ...", first.join(", ")));
    }
    let tokens = if pending.len() > 1 { tokens(env) } else { Tokens::Serial };
    let (ran, store_failure) = compile_and_store(
        cache.as_ref(),
        &tokens,
        &order,
        &pending,
        &keys,
        |i| compiler.run_timed(&jobs[i]),
        |(out, _)| to_entry(out, &pairs),
    );
    if let Some(message) = store_failure {
        if env.is_build_script() {
            cargo_directives::launch_build_warning(&format!("{message} (the build goes on without it)"));
        }
    }
    let max_parallel = ran.max_active;

    // Every result in job order (file by file): the first failure that stops the build wins;
    // otherwise every failed job is reported.
    let mut compiled = Vec::new();
    let mut failed = Vec::new();
    for (&i, r) in pending.iter().zip(ran.results) {
        match r {
            Some(Ok(v)) => compiled.push((i, v)),
            Some(Err(e)) if stops_the_build(&e) => return Err(e),
            Some(Err(e)) => failed.push((jobs[i].file.source.file.clone(), jobs[i].arch.to_string(), e)),
            None => {}
        }
    }
    // What compiled is remembered even when others failed: the next build orders by it.
    for (i, (_, timing)) in &compiled {
        let ms = (timing.nvrtc + timing.ptxas).as_millis();
        timings.record(&jobs[*i].file.source.file, &jobs[*i].arch.to_string(), u64::try_from(ms).unwrap_or(u64::MAX));
    }
    if !compiled.is_empty() {
        if let Err(e) = timings.save() {
            note(debug, &format!("could not write the compile times to the kernel cache: {e}"));
        }
    }
    if !failed.is_empty() {
        return Err(Error::Failed(FileFailure::group(failed)));
    }

    let cache_dir = cache.as_ref().map(|c| c.dir().to_path_buf());
    let mut stats = build_stats::counts(jobs.len(), pending.len(), corrupt, cache_dir, &tokens, max_parallel);
    let mut fresh = vec![false; jobs.len()];
    for (i, (out, timing)) in compiled {
        build_stats::add_compiled(&mut stats, &jobs[i].file.source.file, jobs[i].arch, timing);
        outputs[i] = Some(out);
        fresh[i] = true;
    }
    build_stats::finish(&mut stats, started);
    if debug {
        build_stats::print_summary(&stats);
    }
    let mut all = Vec::with_capacity(jobs.len());
    for (i, o) in outputs.into_iter().enumerate() {
        // Every job either came from the cache or compiled (a job that did not would have
        // returned above); say which one did not rather than panic.
        all.push(o.ok_or_else(|| {
            let no_output = format!("no output for {}", jobs[i].arch);
            Error::Kernels(vec![crate::error::Diagnostic::error(&jobs[i].file.source.file, 0, 0, no_output)])
        })?);
    }
    Ok(Built { outputs: all, compiled: fresh, stats })
}

/// The kernel cache of this build: the per-user one, else one under `launch_dir`; `None` with
/// `LAUNCH_NO_CACHE`. A bad `LAUNCH_NO_CACHE` is an error.
pub fn open_cache(env: &Env, launch_dir: &Path) -> Result<Option<Cache>, Error> {
    if env.flag("LAUNCH_NO_CACHE")? {
        return Ok(None);
    }
    let dir = toolchain::cache_dir(env).map(|d| d.join("kernels")).unwrap_or_else(|| launch_dir.join("cache"));
    Ok(Some(Cache::new(dir)))
}

/// What the cache holds for a build's jobs.
#[derive(Debug)]
pub struct Found<T> {
    /// Per job: its output, where the cache held a usable entry.
    pub outputs: Vec<Option<T>>,
    /// Entries found damaged or unusable (compiled again, then replaced).
    pub corrupt: usize,
    /// Why the first of them was, for the build's one warning about damage.
    pub first_damage: Option<String>,
}

/// Looks job `i`'s key `keys[i]` up for every job and turns each whole entry into its output with
/// `usable(i, entry)`. An entry that is damaged, or that `usable` refuses (a ptxas log that no
/// longer parses), counts as corrupt: the job compiles and its entry is replaced. `label(i)` names
/// job `i` in the `LAUNCH_BUILD_DEBUG` notes. Without a cache every job is a miss.
pub fn look_up<S: Store, T>(
    cache: Option<&Cache<S>>,
    keys: &[Key],
    mut usable: impl FnMut(usize, Entry) -> Result<T, Error>,
    label: impl Fn(usize) -> String,
    debug: bool,
) -> Found<T> {
    let mut found = Found { outputs: (0..keys.len()).map(|_| None).collect(), corrupt: 0, first_damage: None };
    let Some(cache) = cache else { return found };
    for (i, key) in keys.iter().enumerate() {
        match cache.load(key) {
            Lookup::Hit(e) => match usable(i, e) {
                Ok(out) => found.outputs[i] = Some(out),
                Err(reason) => {
                    found.corrupt += 1;
                    found.first_damage.get_or_insert_with(|| reason.to_string());
                    note(debug, &format!("cache entry of {} unusable, compiling: {reason}", label(i)));
                }
            },
            Lookup::Miss => {}
            Lookup::Corrupt(reason) => {
                found.corrupt += 1;
                note(debug, &format!("damaged cache entry of {}, compiling: {reason}", label(i)));
                found.first_damage.get_or_insert(reason);
            }
        }
    }
    found
}

/// Runs `compile(pending[k])` for every `k`, started in `order` (a permutation of
/// `0..pending.len()`) with the [scheduler](parallel), and stores each output's entry
/// (`entry(&output)`) under `keys[pending[k]]` as soon as it compiled, so a build killed or failed
/// half-way keeps what it finished. Returns the results by `k`, and the first failure to store
/// (as a message) when the cache could not be written: the build goes on without it.
pub fn compile_and_store<S: Store, T: Send>(
    cache: Option<&Cache<S>>,
    tokens: &Tokens,
    order: &[usize],
    pending: &[usize],
    keys: &[Key],
    compile: impl Fn(usize) -> Result<T, Error> + Sync,
    entry: impl Fn(&T) -> Entry + Sync,
) -> (Ran<T>, Option<String>) {
    let store_failure: Mutex<Option<String>> = Mutex::new(None);
    let ran = parallel(tokens, order, |k| {
        let i = pending[k];
        let out = compile(i)?;
        if let Some(cache) = cache {
            if let Err(e) = cache.store(&keys[i], &entry(&out)) {
                store_failure
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert_with(|| format!("could not write the kernel cache at {}: {e}", cache.location()));
            }
        }
        Ok(out)
    });
    (ran, store_failure.into_inner().unwrap_or_else(|e| e.into_inner()))
}

fn note(debug: bool, message: &str) {
    if debug {
        cargo_directives::launch_build_warning(message);
    }
}

fn to_entry(out: &JobOutput, pairs: &[(String, &str)]) -> Entry {
    Entry {
        ptx: out.ptx.clone(),
        cubin: out.cubin.clone(),
        ptxas_log: cache::to_placeholders(&out.ptxas_log, pairs),
        nvrtc_log: cache::to_placeholders(&out.nvrtc_log, pairs),
    }
}

fn from_entry(job: &Job, e: Entry, pairs: &[(String, &str)]) -> Result<JobOutput, Error> {
    let ptxas_log = cache::from_placeholders(&e.ptxas_log, pairs);
    let report = compile::parse_report(job, &ptxas_log)?;
    Ok(JobOutput {
        ptx: e.ptx,
        cubin: e.cubin,
        report,
        nvrtc_log: cache::from_placeholders(&e.nvrtc_log, pairs),
        ptxas_log,
    })
}

#[cfg(test)]
mod tests;
