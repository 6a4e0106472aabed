//! Compiling a build's jobs through the kernel [cache](crate::cache): which jobs the cache
//! already holds ([`look_up`]), compiling the others side by side with the
//! [scheduler](crate::compile::scheduler), longest first, and storing each entry as soon as its job
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

use launch::Arch;

use super::stats::{self, BuildStats};
use crate::cache::{self, Cache, Entry, HeaderDigests, Key, KeyInputs, Lookup, Store, ToolchainId};
use crate::cargo_directives;
use crate::compile::host::{self, HostObject};
use crate::compile::scheduler::{parallel, start_order, stops_the_build, tokens, Ran, Tokens};
use crate::compile::{self, Compiler, Decision, Job, JobOutput, JobTiming, Step};
use crate::env::{var, Env};
use crate::error::{Error, FileFailure};
use crate::{source, toolchain};

/// Placeholders for the absolute paths that compiler logs mention, so a cached log is right for
/// whichever checkout, toolchain install and `OUT_DIR` loads it. The work folder and the
/// toolchain first: either may lie under the crate root (keys say the same, see
/// [`compile::portable_path`]).
fn placeholders(compiler: &Compiler) -> Vec<(String, &'static str)> {
    vec![
        (compiler.work_dir().display().to_string(), "${LAUNCH_WORK_DIR}"),
        (compiler.toolchain.root.display().to_string(), "${LAUNCH_TOOLCHAIN_ROOT}"),
        (compiler.root().display().to_string(), "${LAUNCH_CRATE_ROOT}"),
    ]
}

/// The toolchain's part of every key: versions and the tools' content digests, memoised in
/// `memo_dir` (the cache root) when there is one.
pub fn toolchain_id(compiler: &Compiler, memo_dir: Option<&Path>) -> ToolchainId {
    let t = &compiler.toolchain;
    ToolchainId {
        nvrtc_version: t.nvrtc_version.clone(),
        nvrtc_api: compiler.nvrtc_api_version(),
        ptxas_version: t.ptxas_version.clone(),
        nvrtc: cache::tool_digest(&t.nvrtc, memo_dir),
        ptxas: cache::tool_digest(&t.ptxas, memo_dir),
    }
}

/// What one compile makes: one device job (NVRTC and ptxas, one arch), or every arch of one
/// `host` file (one nvcc run, see [`host::nvcc`]). `jobs`: the job indices, consecutive.
#[derive(Clone, Debug)]
struct Unit {
    jobs: std::ops::Range<usize>,
    host: bool,
}

/// The build's units, in job order: a host file's jobs (consecutive, one per arch) make one.
fn units(jobs: &[Job]) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < jobs.len() {
        let host = jobs[i].file.host;
        let mut end = i + 1;
        while host && end < jobs.len() && jobs[end].file.host && jobs[end].file.source.path == jobs[i].file.source.path
        {
            end += 1;
        }
        out.push(Unit { jobs: i..end, host });
        i = end;
    }
    out
}

impl Unit {
    /// The arches it compiles, as keys and timings name them (`sm_80+sm_90` for a host file).
    fn arch_label(&self, jobs: &[Job]) -> String {
        jobs[self.jobs.clone()].iter().map(|j| j.arch.to_string()).collect::<Vec<_>>().join("+")
    }
}

/// The key of every unit, in order (headers found in the compiler's search order and hashed by
/// content), with each unit's size: its text plus every header it includes, in bytes, times its
/// arches (what the start order guesses from without history).
///
/// # Errors
/// [`Error::InputFile`] at the `#include` of a header that is not a regular file: it is found
/// here, before anything is compiled (NVRTC would hang on a FIFO).
fn keys_and_sizes(
    compiler: &Compiler,
    host: Option<&host::Tools>,
    jobs: &[Job],
    units: &[Unit],
    cache: Option<&Cache>,
) -> Result<Vec<(Key, u64)>, Error> {
    let id = toolchain_id(compiler, cache.map(Cache::root));
    let mut digests = HeaderDigests::default();
    // Per source file: its headers (portable path, digest) and their total size.
    type Headers = (Vec<(String, [u8; 32])>, u64);
    let mut headers_of: BTreeMap<PathBuf, Headers> = BTreeMap::new();
    units
        .iter()
        .map(|unit| {
            let job = &jobs[unit.jobs.start];
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
            let options = match (unit.host, host) {
                (true, Some(tools)) => host::options(compiler, tools, job.file, true),
                _ => compiler.options(job, true),
            };
            let ptxas_options = compiler.ptxas_options(job);
            let arch = unit.arch_label(jobs);
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
            Ok((key, (job.text.len() as u64 + *header_bytes) * unit.jobs.len() as u64))
        })
        .collect()
}

/// What one unit made: an output per job, and a host file's object.
#[derive(Debug)]
struct UnitOutput {
    /// Per job, in order, with its arch.
    outputs: Vec<(Arch, JobOutput)>,
    object: Option<Vec<u8>>,
}

/// How long one compiled unit took.
#[derive(Clone, Copy, Debug)]
enum UnitTiming {
    Device(JobTiming),
    /// nvcc's run, every arch of a host file, and how many it compiled side by side.
    Host(std::time::Duration, usize),
}

/// What [`run_all`] built.
#[derive(Debug)]
pub struct Built {
    /// One output per job, in job order.
    pub outputs: Vec<JobOutput>,
    /// Per job: compiled in this run (true) or loaded from the cache. Compiler warnings are shown
    /// for compiled jobs only.
    pub compiled: Vec<bool>,
    /// The `host` files' objects, in job order.
    pub objects: Vec<HostObject>,
    /// The statistics, for [`stats::write`].
    pub stats: BuildStats,
    /// The digest of the build's inputs ([`Decision::Build`]), remembered beside the outputs.
    pub inputs: Option<String>,
}

/// Where compile times live: beside the entry folder, never in it (see `cache::Timings`).
fn timings_dir(root: Option<&Path>, launch_dir: &Path) -> PathBuf {
    root.map(|d| d.join("kernel-timings")).unwrap_or_else(|| launch_dir.join("cache-timings"))
}

/// Records the copies this build used, once its outputs are whole ([`cache::Copies::save`]).
fn save_copies(cache: Option<&Cache>, debug: bool) {
    if let Some(Err(e)) = cache.and_then(Cache::copies).map(cache::Copies::save) {
        note(debug, &format!("could not record the build's copies of its cache entries: {e}"));
    }
}

/// A build script's own copies of what it uses, so the next one reads only what changed from the
/// cache (`wanted`: a build script with a shared cache, not one whose cache lies in `launch_dir`).
fn with_copies(cache: Option<Cache>, wanted: bool, launch_dir: &Path) -> Option<Cache> {
    match cache {
        Some(c) if wanted => Some(c.with_copies(cache::Copies::open(cache::copies::folder(launch_dir)))),
        c => c,
    }
}

/// Runs every job through the cache, compiles the misses in parallel (longest first, see
/// [`start_order`]) and stores what compiled. A `host` file's jobs compile together, with
/// `host`'s nvcc. Returns one output per job, in job order, and the statistics, which the caller
/// writes with [`stats::write`] only once the whole build succeeded (a failed build writes
/// nothing).
///
/// # Errors
/// When jobs fail to compile, every job still runs and the error is [`Error::Failed`]: every
/// failing file in file order, each failure once for all the arches that gave the same message.
/// A failure of the tools themselves ([`stops_the_build`]) stops the build at once with that error.
pub fn run_all<K>(
    env: &Env,
    compiler: &Compiler,
    host: Option<&host::Tools>,
    launch_dir: &Path,
    jobs: &[Job],
    decide: impl FnOnce(&Compiler, Option<&host::Tools>, &[Key]) -> Decision<K>,
) -> Result<Step<Built, K>, Error> {
    let started = Instant::now();
    let debug = env.flag(var::LAUNCH_BUILD_DEBUG)?;
    let root = toolchain::cache_dir(env);
    let cache = open_shared_cache(env, launch_dir, compiler.config())?;
    let timings_dir = timings_dir(root.as_deref(), launch_dir);
    let pairs = placeholders(compiler);
    let units = units(jobs);
    let (keys, sizes): (Vec<Key>, Vec<u64>) =
        keys_and_sizes(compiler, host, jobs, &units, cache.as_ref())?.into_iter().unzip();
    let label = |u: usize| format!("{} {}", jobs[units[u].jobs.start].file.source.file, units[u].arch_label(jobs));
    let inputs = match decide(compiler, host, &keys) {
        Decision::Build(inputs) => inputs,
        Decision::Keep(kept) => return Ok(Step::Kept(keep(cache.as_ref(), &units, &keys, jobs, debug, kept))),
    };
    let cache = with_copies(cache, env.is_build_script() && root.is_some(), launch_dir);
    let Found { mut outputs, corrupt, first_damage, remote: from_remote } = look_up(
        cache.as_ref(),
        &keys,
        |u, e| from_unit_entry(cache.as_ref(), &keys[u], &units[u], jobs, e, &pairs),
        label,
        debug,
    );

    warn_damage(env, corrupt, first_damage.as_deref());
    let pending: Vec<usize> = (0..units.len()).filter(|&u| outputs[u].is_none()).collect();
    let mut timings = cache.as_ref().map(|_| cache::Timings::load(&timings_dir, compiler.root())).unwrap_or_default();
    let file_of = |u: usize| &jobs[units[u].jobs.start].file.source.file;
    let history: Vec<Option<u64>> =
        pending.iter().map(|&u| timings.get(file_of(u), &units[u].arch_label(jobs))).collect();
    let order = start_order(&history, &pending.iter().map(|&u| sizes[u]).collect::<Vec<_>>());
    if debug && !order.is_empty() {
        let first: Vec<String> = order.iter().take(3).map(|&k| label(pending[k])).collect();
        note(debug, &format!("starting the longest jobs first: {}, ...", first.join(", ")));
    }
    let (tokens, last) = slots(env, &units, &pending, &order);
    let (ran, store_failure) = compile_and_store(
        cache.as_ref(),
        &tokens,
        &order,
        &pending,
        &keys,
        |u| {
            let kept = cache.as_ref().map(|cache| KeptArches { cache, key: keys[u], pairs: &pairs });
            let spare = (Some(u) == last).then_some(&tokens);
            compile_unit(compiler, host, &jobs[units[u].jobs.clone()], spare, kept.as_ref())
        },
        |key, (out, _)| unit_entries(key, out, &pairs),
    );
    warn_store_failure(env, store_failure);
    let max_parallel = ran.max_active;

    // Every result in job order (file by file): the first failure that stops the build wins;
    // otherwise every failed job is reported.
    let mut compiled = Vec::new();
    let mut failed = Vec::new();
    for (&u, r) in pending.iter().zip(ran.results) {
        match r {
            Some(Ok(v)) => compiled.push((u, v)),
            Some(Err(e)) if stops_the_build(&e) => return Err(e),
            Some(Err(e)) => failed.push((file_of(u).clone(), units[u].arch_label(jobs).replace('+', ", "), e)),
            None => {}
        }
    }
    // What compiled is remembered even when others failed: the next build orders by it.
    for (u, (_, timing)) in &compiled {
        let ms = match timing {
            UnitTiming::Device(t) => (t.nvrtc + t.ptxas).as_millis(),
            UnitTiming::Host(t, _) => t.as_millis(),
        };
        timings.record(file_of(*u), &units[*u].arch_label(jobs), u64::try_from(ms).unwrap_or(u64::MAX));
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
    let compiled_jobs = compiled.iter().map(|(u, _)| units[*u].jobs.len()).sum();
    let mut stats = stats::counts(jobs.len(), compiled_jobs, corrupt, cache_dir, &tokens, max_parallel);
    let mut fresh = vec![false; units.len()];
    let mut nvcc_time: Vec<Option<(std::time::Duration, usize)>> = vec![None; units.len()];
    for (u, (out, timing)) in compiled {
        match timing {
            UnitTiming::Device(t) => stats::add_compiled(&mut stats, file_of(u), jobs[units[u].jobs.start].arch, t),
            UnitTiming::Host(t, threads) => nvcc_time[u] = Some((t, threads)),
        }
        outputs[u] = Some(out);
        fresh[u] = true;
    }
    for (u, unit) in units.iter().enumerate().filter(|(_, unit)| unit.host) {
        let arches = jobs[unit.jobs.clone()].iter().map(|j| j.arch).collect();
        stats::add_host(&mut stats, file_of(u), arches, nvcc_time[u]);
    }
    let remote_jobs = served_remotely(jobs, &units, &from_remote, &fresh);
    stats::add_remote(&mut stats, cache.as_ref().and_then(Cache::remote), remote_jobs);
    stats::finish(&mut stats, started);
    if debug {
        stats::print_summary(&stats);
    }
    let built = finish(jobs, &units, outputs, &fresh, stats, inputs)?;
    save_copies(cache.as_ref(), debug);
    record_use(env, cache.as_ref(), compiler, built, debug).map(Step::Done)
}

/// A build that keeps its outputs ([`Decision::Keep`]): every unit's entries marked used, as if
/// it had read them, so the size limit keeps what the kept outputs stand on.
fn keep<K>(cache: Option<&Cache>, units: &[Unit], keys: &[Key], jobs: &[Job], debug: bool, kept: K) -> K {
    note(debug, "every input and output is as the last build left them: its outputs are kept");
    let Some(cache) = cache else { return kept };
    for (unit, key) in units.iter().zip(keys) {
        cache.mark_used(key);
        for job in jobs[unit.jobs.clone()].iter().filter(|_| unit.host) {
            cache.mark_used(&cache::part_key(key, &job.arch.to_string()));
        }
    }
    kept
}

/// The job slots for the `pending` units (started in `order`), and the one unit that may take
/// the slots free when it starts: the last to start, which leaves no job waiting for them.
fn slots(env: &Env, units: &[Unit], pending: &[usize], order: &[usize]) -> (Tokens, Option<usize>) {
    // One pending job needs slots too when it can use more than one (a host file's arches).
    let wide = |u: &usize| units[*u].host && units[*u].jobs.len() > 1;
    let tokens = if pending.len() > 1 || pending.iter().any(wide) { tokens(env) } else { Tokens::Serial };
    (tokens, order.last().map(|&k| pending[k]))
}

/// A cache that could not be written is worth one warning a build.
fn warn_store_failure(env: &Env, failure: Option<String>) {
    if let (Some(message), true) = (failure, env.is_build_script()) {
        cargo_directives::launch_build_warning(&format!("{message} (the build goes on without it)"));
    }
}

/// Damage is worth one warning a build: something else wrote into the cache (or a disk failed,
/// or a remote entry was forged); each entry is compiled again and replaced.
fn warn_damage(env: &Env, corrupt: usize, first_damage: Option<&str>) {
    if let (Some(first), true) = (first_damage, env.is_build_script()) {
        let entries = if corrupt == 1 { "entry" } else { "entries" };
        cargo_directives::launch_build_warning(&format!(
            "{corrupt} damaged kernel cache {entries} compiled again and replaced (first: {first})"
        ));
    }
}

/// The jobs whose unit the remote store served (and that did not compile after all).
fn served_remotely(jobs: &[Job], units: &[Unit], remote: &[bool], fresh: &[bool]) -> Vec<stats::CachedJob> {
    (0..units.len())
        .filter(|&u| remote[u] && !fresh[u])
        .flat_map(|u| jobs[units[u].jobs.clone()].iter())
        .map(|j| stats::CachedJob { file: j.file.source.file.clone(), arch: j.arch })
        .collect()
}

/// The per-job outputs and the host objects from the units' outputs (every unit has one: a unit
/// that did not would have returned an error before; say which one did not rather than panic).
fn finish(
    jobs: &[Job],
    units: &[Unit],
    outputs: Vec<Option<UnitOutput>>,
    fresh: &[bool],
    stats: BuildStats,
    inputs: Option<String>,
) -> Result<Built, Error> {
    let mut all = Vec::with_capacity(jobs.len());
    let mut compiled = Vec::with_capacity(jobs.len());
    let mut objects = Vec::new();
    for ((unit, o), &fresh) in units.iter().zip(outputs).zip(fresh) {
        let first = &jobs[unit.jobs.start];
        let o = o.ok_or_else(|| {
            let no_output = format!("no output for {}", unit.arch_label(jobs));
            Error::Kernels(vec![crate::error::Diagnostic::error(&first.file.source.file, 0, 0, no_output)])
        })?;
        compiled.extend(std::iter::repeat_n(fresh, o.outputs.len()));
        all.extend(o.outputs.into_iter().map(|(_, out)| out));
        if let Some(object) = o.object {
            objects.push(HostObject { file: first.file.source.file.clone(), object });
        }
    }
    Ok(Built { outputs: all, compiled, objects, stats, inputs })
}

/// Compiles one unit: a device job with NVRTC and ptxas, a host file's jobs with one nvcc
/// compile, its arches side by side with the job slots `spare` has free (held until nvcc is
/// done), each arch's finished work in `kept` until the compile is.
fn compile_unit(
    compiler: &Compiler,
    host: Option<&host::Tools>,
    jobs: &[Job],
    spare: Option<&Tokens>,
    kept: Option<&KeptArches>,
) -> Result<(UnitOutput, UnitTiming), Error> {
    let kept: &dyn host::steps::Kept = match kept {
        Some(k) => k,
        None => &host::steps::Nowhere,
    };
    match host.filter(|_| jobs[0].file.host) {
        Some(tools) => {
            let spare = spare.map(|t| t.spare(jobs.len() - 1)).unwrap_or_default();
            let options = host::options(compiler, tools, jobs[0].file, false);
            let out = host::nvcc::run(compiler, tools, jobs, options, 1 + spare.len(), kept)?;
            drop(spare);
            let outputs = jobs.iter().map(|j| j.arch).zip(out.outputs).collect();
            let timing = UnitTiming::Host(out.time, out.threads);
            Ok((UnitOutput { outputs, object: Some(out.object) }, timing))
        }
        None => {
            let (out, timing) = compiler.run_timed(&jobs[0])?;
            Ok((UnitOutput { outputs: vec![(jobs[0].arch, out)], object: None }, UnitTiming::Device(timing)))
        }
    }
}

/// The entries of a compiled unit under `key`: a device job's one; a host file's, one per arch
/// under [`cache::part_key`]s, then its object under `key` itself (stored last: a reader that
/// finds the object finds the arches).
fn unit_entries(key: &Key, out: &UnitOutput, pairs: &[(String, &str)]) -> Vec<(Key, Entry)> {
    let Some(object) = &out.object else {
        return out.outputs.iter().map(|(_, o)| (*key, to_entry(o, pairs))).collect();
    };
    let mut entries: Vec<(Key, Entry)> =
        out.outputs.iter().map(|(arch, o)| (cache::part_key(key, &arch.to_string()), to_entry(o, pairs))).collect();
    let object = Entry {
        ptx: String::new(),
        cubin: object.clone(),
        ptxas_log: String::new(),
        nvrtc_log: String::new(),
        probes: String::new(),
    };
    entries.push((*key, object));
    entries
}

/// A unit's output from its entry `e` (a host file's: its object, then each arch's part).
fn from_unit_entry<S: Store>(
    cache: Option<&Cache<S>>,
    key: &Key,
    unit: &Unit,
    jobs: &[Job],
    e: Entry,
    pairs: &[(String, &str)],
) -> Result<UnitOutput, Error> {
    if !unit.host {
        let job = &jobs[unit.jobs.start];
        return Ok(UnitOutput { outputs: vec![(job.arch, from_entry(job, e, pairs)?)], object: None });
    }
    let mut outputs = Vec::new();
    for job in &jobs[unit.jobs.clone()] {
        let arch = job.arch.to_string();
        let part = cache.map(|c| c.load(&cache::part_key(key, &arch)));
        let Some(Lookup::Hit(p)) = part else {
            return Err(Error::Report {
                file: job.file.source.file.clone(),
                arch,
                reason: "its part of the host file's cache entry is missing or damaged".to_string(),
            });
        };
        outputs.push((job.arch, from_entry(job, p, pairs)?));
    }
    Ok(UnitOutput { outputs, object: Some(e.cubin) })
}

/// The kernel cache of this build: the per-user one, else one under `launch_dir`; `None` with
/// `LAUNCH_NO_CACHE`. A bad `LAUNCH_NO_CACHE` is an error.
pub fn open_cache(env: &Env, launch_dir: &Path) -> Result<Option<Cache>, Error> {
    if env.flag(var::LAUNCH_NO_CACHE)? {
        return Ok(None);
    }
    // Without a cache root, one under `launch_dir` laid out the same way (`cache/kernels/`), so the
    // root's files (tool digests, build log, size estimate) stay out of the build's outputs.
    let root = toolchain::cache_dir(env).unwrap_or_else(|| launch_dir.join("cache"));
    let dir = root.join("kernels");
    Ok(Some(Cache::new(dir)))
}

/// [`open_cache`] with the remote store the crate's `cache-remote` or `LAUNCH_CACHE_REMOTE`
/// names behind it ([`cache::remote`]); its one warning, if it fails, is a cargo warning.
///
/// # Errors
/// A bad `LAUNCH_NO_CACHE` or remote variable.
pub fn open_shared_cache(env: &Env, launch_dir: &Path, config: &crate::Config) -> Result<Option<Cache>, Error> {
    let Some(cache) = open_cache(env, launch_dir)? else { return Ok(None) };
    let metadata = config.cache_remote.as_ref().map(|(url, at)| (url, at.clone()));
    let Some(remote) = env.cache_remote(metadata)? else { return Ok(Some(cache)) };
    let warn: fn(&str) =
        if env.is_build_script() { cargo_directives::launch_build_warning } else { |m| eprintln!("warning: {m}") };
    Ok(Some(cache.with_remote(cache::Remote::open(remote, warn))))
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
    /// Per job: its output came from the remote store (see [`Cache::load_traced`]).
    pub remote: Vec<bool>,
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
    let mut found = Found {
        outputs: (0..keys.len()).map(|_| None).collect(),
        corrupt: 0,
        first_damage: None,
        remote: vec![false; keys.len()],
    };
    let Some(cache) = cache else { return found };
    for (i, key) in keys.iter().enumerate() {
        let (lookup, source) = cache.load_traced(key);
        match lookup {
            Lookup::Hit(e) => match usable(i, e) {
                Ok(out) => {
                    found.outputs[i] = Some(out);
                    found.remote[i] = source == cache::Source::Remote;
                }
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
/// `0..pending.len()`) with the [scheduler](parallel), and stores each output's entries
/// (`entries(&keys[pending[k]], &output)`: key and entry, usually that key's one) as soon as it
/// compiled, so a build killed or failed
/// half-way keeps what it finished. Returns the results by `k`, and the first failure to store
/// (as a message) when the cache could not be written: the build goes on without it.
pub fn compile_and_store<S: Store, T: Send>(
    cache: Option<&Cache<S>>,
    tokens: &Tokens,
    order: &[usize],
    pending: &[usize],
    keys: &[Key],
    compile: impl Fn(usize) -> Result<T, Error> + Sync,
    entries: impl Fn(&Key, &T) -> Vec<(Key, Entry)> + Sync,
) -> (Ran<T>, Option<String>) {
    let store_failure: Mutex<Option<String>> = Mutex::new(None);
    let ran = parallel(tokens, order, |k| {
        let i = pending[k];
        let out = compile(i)?;
        if let Some(cache) = cache {
            for (key, entry) in entries(&keys[i], &out) {
                if let Err(e) = cache.store(&key, &entry) {
                    store_failure.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(|| {
                        format!("could not write the kernel cache at {}: {e}", cache.location())
                    });
                    break;
                }
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
        probes: out.probes.iter().map(|(k, l)| format!("{k}\t{}\n", l.as_deref().unwrap_or(""))).collect(),
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
        probes: e
            .probes
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(k, l)| (k.to_string(), (!l.is_empty()).then(|| l.to_string())))
            .collect(),
    })
}

mod kept_arches;
use kept_arches::KeptArches;
mod usage;
pub(crate) use usage::keep_under_limit;
use usage::record_use;

#[cfg(test)]
mod tests;
