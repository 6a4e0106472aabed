//! Running the compile jobs: each (file, arch) is looked up in the [cache](crate::cache) first;
//! the misses compile side by side, one per jobserver token.
//!
//! # Parallelism
//! Cargo gives every build script one job slot (the process's implicit token) and a jobserver to
//! ask for more (`CARGO_MAKEFLAGS`). Here the implicit token runs one job, and every extra token
//! the jobserver hands out runs one more, on a scoped thread that returns its token as soon as no
//! job is left. Tokens are requested one at a time, only while unclaimed jobs remain, from
//! `jobserver`'s helper thread, so a request that cargo never grants (`cargo build -j1`, or every
//! slot busy with other crates) costs nothing and is cancelled at the end. No thread pool is sized
//! to the machine: `cargo build -j1` compiles one job at a time, `-jN` at most N. Nothing here
//! waits on a child that needs a token (ptxas does not use the jobserver), so holding a token
//! while ptxas runs cannot deadlock. Without a jobserver (the build script run by hand) a private
//! one is made with `NUM_JOBS` slots (counting the implicit one); without either, jobs run one at a
//! time.
//!
//! Results are collected in job order whatever order the jobs finish in. After the first failure
//! no new job starts; the error of the earliest failed job is returned, and nothing is written
//! under `OUT_DIR` (the caller writes only when every job succeeded).
//!
//! # Statistics
//! `OUT_DIR/launch/build-stats.json` (written only when the whole build succeeded, by
//! [`write_stats`]) says how many jobs compiled and how many came from the
//! cache, which ones compiled and how long each compiler took, the most jobs that ran at once and
//! the build script's peak resident memory. `LAUNCH_BUILD_DEBUG=1` also prints a summary.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cache::{self, Cache, Entry, FileId, HeaderDigests, KeyInputs, Lookup, ToolchainId};
use crate::compile::{self, Compiler, Job, JobOutput, JobTiming};
use crate::env::Env;
use crate::error::Error;
use crate::{out, source, toolchain};

/// Where extra job slots come from.
#[derive(Debug, Clone)]
pub enum Tokens {
    /// Only the implicit slot: one job at a time.
    Serial,
    /// A jobserver: cargo's (inherited) or a private one sized from `NUM_JOBS`.
    Jobserver {
        /// The client.
        client: jobserver::Client,
        /// Where it came from, for messages and statistics.
        origin: &'static str,
    },
}

impl Tokens {
    /// `cargo jobserver`, `NUM_JOBS`, or `serial`.
    pub fn describe(&self) -> &'static str {
        match self {
            Tokens::Serial => "serial",
            Tokens::Jobserver { origin, .. } => origin,
        }
    }
}

/// cargo's jobserver, adopted once per process.
fn inherited() -> Option<jobserver::Client> {
    static CLIENT: OnceLock<Option<jobserver::Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // SAFETY: `from_env_ext` adopts the two descriptors that CARGO_MAKEFLAGS names (or opens
            // the named FIFO). The hazard its docs warn about is a descriptor number that was closed
            // and then reused for another file before this call, which would make us read and write
            // someone else's file. Here: cargo hands the build script both descriptors open;
            // launch-build never closes a descriptor it did not open; std never closes descriptors it
            // does not own, and a newly opened file always takes the lowest *free* number, so it
            // cannot take one that is still open. Only a user build.rs that closes descriptors it
            // does not own before calling `launch_build::build()` could break that, and against it
            // `check_pipe = true` makes the crate verify (fstat) that both descriptors are pipes or
            // FIFOs, refusing anything else; we then fall back to NUM_JOBS. On Linux the crate
            // reopens them through /dev/fd, so cargo's descriptions are never made non-blocking.
            // Called at most once per process (OnceLock), and only from a build script.
            let from_env = unsafe { jobserver::Client::from_env_ext(true) };
            from_env.client.ok()
        })
        .clone()
}

/// The job slots of this run: cargo's jobserver in a build script, else a private one with
/// `NUM_JOBS` slots, else serial.
pub fn tokens(env: &Env) -> Tokens {
    if env.is_build_script() {
        if let Some(client) = inherited() {
            return Tokens::Jobserver { client, origin: "cargo jobserver" };
        }
    }
    let jobs = env.untracked("NUM_JOBS").and_then(|n| n.to_string_lossy().trim().parse::<usize>().ok()).unwrap_or(1);
    // The implicit slot is one of the NUM_JOBS.
    if jobs > 1 {
        if let Ok(client) = jobserver::Client::new(jobs - 1) {
            return Tokens::Jobserver { client, origin: "NUM_JOBS" };
        }
    }
    Tokens::Serial
}

enum Msg {
    Token(io::Result<jobserver::Acquired>),
    /// A worker claimed the last job, or stopped: time to look at whether to stop asking.
    Wake,
}

struct Shared<T> {
    n: usize,
    next: AtomicUsize,
    failed: AtomicBool,
    active: AtomicUsize,
    max_active: AtomicUsize,
    results: Mutex<Vec<Option<Result<T, Error>>>>,
}

impl<T> Shared<T> {
    fn done(&self) -> bool {
        self.failed.load(Ordering::SeqCst) || self.next.load(Ordering::SeqCst) >= self.n
    }

    /// Claims and runs jobs until none is left or one failed.
    fn work(&self, run: &(dyn Fn(usize) -> Result<T, Error> + Sync), wake: &mpsc::Sender<Msg>) {
        loop {
            if self.failed.load(Ordering::SeqCst) {
                break;
            }
            let i = self.next.fetch_add(1, Ordering::SeqCst);
            if i >= self.n {
                break;
            }
            if i + 1 == self.n {
                let _ = wake.send(Msg::Wake);
            }
            let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_active.fetch_max(now, Ordering::SeqCst);
            let r = run(i);
            self.active.fetch_sub(1, Ordering::SeqCst);
            if r.is_err() {
                self.failed.store(true, Ordering::SeqCst);
            }
            self.results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
        }
        let _ = wake.send(Msg::Wake);
    }
}

/// Runs `run(0..n)`, one job per slot, and returns the results in index order with the most jobs
/// that ran at once. On failure, the error of the lowest failed index.
pub fn parallel<T: Send>(
    tokens: &Tokens,
    n: usize,
    run: impl Fn(usize) -> Result<T, Error> + Sync,
) -> Result<(Vec<T>, usize), Error> {
    let shared = Shared {
        n,
        next: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        active: AtomicUsize::new(0),
        max_active: AtomicUsize::new(0),
        results: Mutex::new((0..n).map(|_| None).collect()),
    };
    let run: &(dyn Fn(usize) -> Result<T, Error> + Sync) = &run;
    let client = match tokens {
        Tokens::Jobserver { client, .. } if n > 1 => Some(client.clone()),
        _ => None,
    };
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<Msg>();
        // The implicit slot.
        {
            let tx = tx.clone();
            let shared = &shared;
            s.spawn(move || shared.work(run, &tx));
        }
        let helper = client.and_then(|c| {
            let tx = tx.clone();
            c.into_helper_thread(move |token| {
                let _ = tx.send(Msg::Token(token));
            })
            .ok()
        });
        if let Some(h) = &helper {
            h.request_token();
        }
        while !shared.done() {
            let Ok(msg) = rx.recv() else { break };
            match msg {
                Msg::Token(Ok(token)) => {
                    let unclaimed = n.saturating_sub(shared.next.load(Ordering::SeqCst));
                    if unclaimed == 0 || shared.failed.load(Ordering::SeqCst) {
                        continue; // dropping the token gives it back
                    }
                    let tx = tx.clone();
                    let shared = &shared;
                    s.spawn(move || {
                        shared.work(run, &tx);
                        drop(token);
                    });
                    if unclaimed > 1 {
                        if let Some(h) = &helper {
                            h.request_token();
                        }
                    }
                }
                // The jobserver broke: carry on with the slots we have.
                Msg::Token(Err(_)) => {}
                Msg::Wake => {}
            }
        }
        // Cancels a pending request; a token acquired meanwhile is dropped, i.e. given back.
        drop(helper);
    });
    let max_active = shared.max_active.load(Ordering::SeqCst);
    let results = shared.results.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(pos) = results.iter().position(|r| matches!(r, Some(Err(_)))) {
        let Some(Some(Err(e))) = results.into_iter().nth(pos) else { unreachable!("position found an error") };
        return Err(e);
    }
    let out = results.into_iter().map(|r| match r {
        Some(Ok(v)) => v,
        _ => unreachable!("without a failure every job ran"),
    });
    Ok((out.collect(), max_active))
}

/// `OUT_DIR/launch/build-stats.json`.
#[derive(Debug, Serialize)]
pub struct BuildStats {
    /// Layout version of this file.
    pub schema: u32,
    /// Jobs (files × arches).
    pub jobs: usize,
    /// Jobs that ran NVRTC and ptxas.
    pub compiled: usize,
    /// Jobs served from the cache.
    pub cached: usize,
    /// Cache entries found damaged or cut short (compiled again).
    pub corrupt: usize,
    /// The cache folder, or `null` when `LAUNCH_NO_CACHE` is set.
    pub cache_dir: Option<PathBuf>,
    /// Where job slots came from: `cargo jobserver`, `NUM_JOBS` or `serial`.
    pub tokens: String,
    /// The most jobs that ran at once.
    pub max_parallel: usize,
    /// Sum over compiled jobs of NVRTC's time, milliseconds.
    pub nvrtc_ms: f64,
    /// Sum over compiled jobs of ptxas's time, milliseconds.
    pub ptxas_ms: f64,
    /// Wall time of this step (keys, lookups, compiles, cache writes), milliseconds.
    pub wall_ms: f64,
    /// Peak resident memory of the build script so far (`VmHWM`), KiB; `null` where unknown.
    pub peak_rss_kib: Option<u64>,
    /// Every compiled job, in job order.
    pub compiled_jobs: Vec<CompiledJob>,
}

/// One compiled job in [`BuildStats`].
#[derive(Debug, Serialize)]
pub struct CompiledJob {
    /// Kernel file, relative to the crate.
    pub file: String,
    /// Arch.
    pub arch: String,
    /// NVRTC's time, milliseconds.
    pub nvrtc_ms: f64,
    /// ptxas's time, milliseconds.
    pub ptxas_ms: f64,
}

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

/// The key of every job, in order. Headers are found like `source::dependencies` finds them, in
/// NVRTC's search order, and hashed by content.
pub fn keys(compiler: &Compiler, jobs: &[Job]) -> Vec<cache::Key> {
    let id = toolchain_id(compiler);
    let mut digests = HeaderDigests::default();
    let mut headers_of: BTreeMap<PathBuf, Vec<(String, [u8; 32])>> = BTreeMap::new();
    jobs.iter()
        .map(|job| {
            let headers = headers_of.entry(job.source.path.clone()).or_insert_with(|| {
                let deps = source::dependencies(&job.source.path, &compiler.include_search(job));
                let mut h: Vec<(String, [u8; 32])> = deps
                    .iter()
                    .map(|p| (compile::portable_path(p, compiler.root(), &compiler.toolchain.root), digests.digest(p)))
                    .collect();
                h.sort();
                h
            });
            let options = compiler.options(job, true);
            let ptxas_options = compiler.ptxas_options(job);
            let arch = job.arch.to_string();
            cache::key(&KeyInputs {
                file: &job.source.file,
                text: job.text,
                headers,
                options: &options,
                ptxas_options: &ptxas_options,
                arch: &arch,
                annotations: job.annotations,
                toolchain: &id,
            })
        })
        .collect()
}

/// Runs every job through the cache, compiles the misses in parallel and stores what compiled.
/// Returns one output per job, in job order, and the statistics, which the caller writes with
/// [`write_stats`] only once the whole build succeeded (a failed build writes nothing).
pub fn run_all(
    env: &Env,
    compiler: &Compiler,
    launch_dir: &Path,
    jobs: &[Job],
) -> Result<(Vec<JobOutput>, BuildStats), Error> {
    let started = Instant::now();
    let debug = env.flag("LAUNCH_BUILD_DEBUG");
    let cache = if env.flag("LAUNCH_NO_CACHE") {
        None
    } else {
        let dir = toolchain::cache_dir(env).map(|d| d.join("kernels")).unwrap_or_else(|| launch_dir.join("cache"));
        Some(Cache::new(dir))
    };
    let pairs = placeholders(compiler);
    let keys = keys(compiler, jobs);

    let mut outputs: Vec<Option<JobOutput>> = (0..jobs.len()).map(|_| None).collect();
    let mut corrupt = 0;
    let mut first_damage = None;
    if let Some(cache) = &cache {
        for (i, (job, key)) in jobs.iter().zip(&keys).enumerate() {
            match cache.load(key) {
                Lookup::Hit(e) => match from_entry(job, e, &pairs) {
                    Ok(out) => outputs[i] = Some(out),
                    Err(reason) => {
                        corrupt += 1;
                        first_damage.get_or_insert_with(|| reason.to_string());
                        note(
                            debug,
                            &format!("cache entry of {} {} unusable, compiling: {reason}", job.source.file, job.arch),
                        );
                    }
                },
                Lookup::Miss => {}
                Lookup::Corrupt(reason) => {
                    corrupt += 1;
                    first_damage.get_or_insert_with(|| reason.clone());
                    note(
                        debug,
                        &format!("damaged cache entry of {} {}, compiling: {reason}", job.source.file, job.arch),
                    );
                }
            }
        }
    }

    // Damage is worth one warning a build: something else wrote into the cache (or a disk
    // failed); each entry is compiled again and replaced.
    if let Some(first) = &first_damage {
        if env.is_build_script() {
            let entries = if corrupt == 1 { "entry" } else { "entries" };
            println!(
                "cargo:warning=launch-build: {corrupt} damaged kernel cache {entries} compiled again and replaced (first: {first})"
            );
        }
    }

    let pending: Vec<usize> = (0..jobs.len()).filter(|&i| outputs[i].is_none()).collect();
    let tokens = if pending.len() > 1 { tokens(env) } else { Tokens::Serial };
    let store_failure: Mutex<Option<String>> = Mutex::new(None);
    let (compiled, max_parallel) = parallel(&tokens, pending.len(), |k| {
        let i = pending[k];
        let (out, timing) = compiler.run_timed(&jobs[i])?;
        if let Some(cache) = &cache {
            if let Err(e) = cache.store(&keys[i], &to_entry(&out, &pairs)) {
                store_failure.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(|| {
                    format!("could not write the kernel cache at {}: {e}", cache.dir().display())
                });
            }
        }
        Ok((out, timing))
    })?;
    if let Some(message) = store_failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        if env.is_build_script() {
            println!("cargo:warning=launch-build: {message} (the build goes on without it)");
        }
    }

    let mut stats = BuildStats {
        schema: 1,
        jobs: jobs.len(),
        compiled: pending.len(),
        cached: jobs.len() - pending.len(),
        corrupt,
        cache_dir: cache.as_ref().map(|c| c.dir().to_path_buf()),
        tokens: tokens.describe().to_string(),
        max_parallel,
        nvrtc_ms: 0.0,
        ptxas_ms: 0.0,
        wall_ms: 0.0,
        peak_rss_kib: None,
        compiled_jobs: Vec::new(),
    };
    for (&i, (out, timing)) in pending.iter().zip(compiled) {
        let JobTiming { nvrtc, ptxas } = timing;
        stats.nvrtc_ms += ms(nvrtc);
        stats.ptxas_ms += ms(ptxas);
        stats.compiled_jobs.push(CompiledJob {
            file: jobs[i].source.file.clone(),
            arch: jobs[i].arch.to_string(),
            nvrtc_ms: ms(nvrtc),
            ptxas_ms: ms(ptxas),
        });
        outputs[i] = Some(out);
    }
    stats.nvrtc_ms = round3(stats.nvrtc_ms);
    stats.ptxas_ms = round3(stats.ptxas_ms);
    stats.wall_ms = ms(started.elapsed());
    stats.peak_rss_kib = peak_rss_kib();
    if debug {
        println!(
            "cargo:warning=launch-build: {} jobs: {} compiled ({} at most at once, {}), {} from the cache{}",
            stats.jobs,
            stats.compiled,
            stats.max_parallel,
            stats.tokens,
            stats.cached,
            stats.cache_dir.as_ref().map(|d| format!(" at {}", d.display())).unwrap_or_else(|| " (off)".into())
        );
    }
    let outputs = outputs.into_iter().map(|o| o.expect("every job has an output")).collect();
    Ok((outputs, stats))
}

/// Writes `launch_dir/build-stats.json` (after the build succeeded).
pub fn write_stats(launch_dir: &Path, stats: &BuildStats) -> Result<(), Error> {
    let json = serde_json::to_string_pretty(stats).expect("the statistics serialise");
    out::write_if_changed(&launch_dir.join("build-stats.json"), json.as_bytes()).map(drop)
}

fn note(debug: bool, message: &str) {
    if debug {
        println!("cargo:warning=launch-build: {message}");
    }
}

fn ms(d: Duration) -> f64 {
    round3(d.as_secs_f64() * 1e3)
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
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

/// `VmHWM` of this process (Linux), KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sleepy(i: usize) -> Result<usize, Error> {
        std::thread::sleep(Duration::from_millis(20));
        Ok(i * 10)
    }

    #[test]
    fn serial_runs_one_at_a_time_in_order() {
        let (out, max) = parallel(&Tokens::Serial, 5, sleepy).unwrap();
        assert_eq!(out, [0, 10, 20, 30, 40]);
        assert_eq!(max, 1);
    }

    #[test]
    fn a_jobserver_with_one_extra_token_runs_two_at_once() {
        let client = jobserver::Client::new(1).unwrap();
        let tokens = Tokens::Jobserver { client: client.clone(), origin: "test" };
        let (out, max) = parallel(&tokens, 8, sleepy).unwrap();
        assert_eq!(out, (0..8).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(max, 2, "the implicit slot plus one token");
        // Every token went back.
        assert_eq!(client.available().unwrap(), 1);
    }

    #[test]
    fn an_empty_jobserver_means_one_at_a_time_and_does_not_hang() {
        let client = jobserver::Client::new(1).unwrap();
        let held = client.acquire().unwrap();
        let tokens = Tokens::Jobserver { client: client.clone(), origin: "test" };
        let started = Instant::now();
        let (out, max) = parallel(&tokens, 4, sleepy).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(max, 1);
        assert!(started.elapsed() < Duration::from_secs(5), "cancelling the pending request took too long");
        drop(held);
        assert_eq!(client.available().unwrap(), 1);
    }

    #[test]
    fn the_earliest_failure_wins_and_later_jobs_do_not_start() {
        let started = AtomicUsize::new(0);
        let r = parallel(&Tokens::Serial, 10, |i| {
            started.fetch_add(1, Ordering::SeqCst);
            if i == 3 || i == 5 {
                Err(Error::Kernels(vec![format!("job {i}")]))
            } else {
                Ok(i)
            }
        });
        match r {
            Err(Error::Kernels(l)) => assert_eq!(l, ["job 3"]),
            other => panic!("{other:?}"),
        }
        assert_eq!(started.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn with_many_tokens_the_lowest_failed_index_is_reported() {
        let client = jobserver::Client::new(3).unwrap();
        let tokens = Tokens::Jobserver { client, origin: "test" };
        for _ in 0..5 {
            let r = parallel(&tokens, 6, |i| {
                // Job 1 fails late, job 4 fails early: job 1's error must win when both ran.
                std::thread::sleep(Duration::from_millis(if i == 1 { 60 } else { 5 }));
                if i == 1 || i == 4 {
                    Err(Error::Kernels(vec![format!("job {i}")]))
                } else {
                    Ok(i)
                }
            });
            match r {
                Err(Error::Kernels(l)) => assert_eq!(l, ["job 1"]),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn zero_jobs() {
        let (out, max) = parallel(&Tokens::Serial, 0, sleepy).unwrap();
        assert!(out.is_empty());
        assert_eq!(max, 0);
    }
}
