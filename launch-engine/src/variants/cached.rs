//! Variants through the build's kernel cache: each ptxas run of an edited entry is keyed by
//! [`cache::variant_key`] (the edited PTX, the arch, the ptxas options, ptxas's version and
//! identity), looked up before anything runs, and stored as soon as ptxas succeeded on it. The
//! misses run side by side with the [scheduler](crate::compile::scheduler). One path for a build's tune
//! variants ([`super::build`]) and `cargo launch explore`'s grid ([`super::assemble_variants`]).
//!
//! A damaged entry, or one whose log no longer parses, is a miss: ptxas runs and the entry is
//! replaced. A failed run is never stored, so it runs again next time.

use std::path::Path;
use std::time::Duration;

use launch::Contract;

use super::{assemble_one, from_log, CacheUse, PtxKernel, Variant};
use crate::cache::{self, Cache, Entry, Key, VariantKeyInputs};
use crate::compile::cached::{compile_and_store, look_up};
use crate::compile::scheduler::{start_order, Tokens};
use crate::error::Error;
use crate::toolchain::Toolchain;

/// One ptxas run: `text`, the edited PTX of `kernel.entry` (`kernel.ptx` is not read).
pub(crate) struct Job<'a> {
    pub kernel: PtxKernel<'a>,
    pub text: String,
    pub contract: Option<Contract>,
    pub ptxas_flags: &'a [String],
}

/// What [`assemble`] made, by job.
pub(crate) struct Ran {
    /// Each job's variant or failure; `None` for a job that never started because ptxas itself
    /// could not run for another ([`crate::compile::scheduler::stops_the_build`]).
    pub results: Vec<Option<Result<Variant, Error>>>,
    /// Per job: taken from the cache (no ptxas run).
    pub from_cache: Vec<bool>,
    /// The counts and messages.
    pub cache: CacheUse,
}

/// Every job's variant: from `cache` where it holds a usable entry, else from ptxas (up to as
/// many at once as `tokens` allows, largest PTX first), stored in `cache` when it succeeded.
/// ptxas's files go to `work_dir`; each run may take `timeout`. `debug`: the build's
/// `LAUNCH_BUILD_DEBUG` notes on damaged entries.
pub(crate) fn assemble(
    toolchain: &Toolchain,
    cache: Option<&Cache>,
    tokens: &Tokens,
    work_dir: &Path,
    timeout: Duration,
    jobs: &[Job],
    debug: bool,
) -> Ran {
    let ptxas = cache::tool_digest(&toolchain.ptxas, cache.map(Cache::root));
    let keys: Vec<Key> = jobs
        .iter()
        .map(|j| {
            cache::variant_key(&VariantKeyInputs {
                text: &j.text,
                ptxas_options: j.ptxas_flags,
                arch: &j.kernel.arch.to_string(),
                ptxas_version: &toolchain.ptxas_version,
                ptxas: &ptxas,
            })
        })
        .collect();
    // ptxas's log names the file it read: kept as a placeholder, right in any work folder.
    let pairs = vec![(work_dir.display().to_string(), "${LAUNCH_WORK_DIR}")];
    let label = |i: usize| format!("{} {} {}", jobs[i].kernel.file, jobs[i].kernel.entry, jobs[i].kernel.arch);
    let found = look_up(
        cache,
        &keys,
        |i, e: Entry| {
            let log = cache::from_placeholders(&e.ptxas_log, &pairs);
            from_log(toolchain, &jobs[i].kernel, jobs[i].contract, log, e.cubin, Duration::ZERO)
        },
        label,
        debug,
    );
    let from_cache: Vec<bool> = found.outputs.iter().map(Option::is_some).collect();
    let mut results: Vec<Option<Result<Variant, Error>>> = found.outputs.into_iter().map(|o| o.map(Ok)).collect();
    let pending: Vec<usize> = (0..jobs.len()).filter(|&i| results[i].is_none()).collect();
    let sizes: Vec<u64> = pending.iter().map(|&i| jobs[i].text.len() as u64).collect();
    let order = start_order(&vec![None; pending.len()], &sizes);
    let serial = Tokens::Serial;
    let tokens = if pending.len() > 1 { tokens } else { &serial };
    let (ran, store_failure) = compile_and_store(
        cache,
        tokens,
        &order,
        &pending,
        &keys,
        |i| {
            let j = &jobs[i];
            let ran = assemble_one(toolchain, &j.kernel, &j.text, j.contract, work_dir, j.ptxas_flags, timeout);
            ran.map(|v| (i, v)).map_err(|e| {
                match e {
                    // A time-out concerns this variant only: the others still run.
                    Error::ToolTimedOut { tool, command, timeout, .. } => Error::ToolTimedOut {
                        tool,
                        command,
                        file: Some(j.kernel.file.to_string()),
                        arch: Some(j.kernel.arch.to_string()),
                        timeout,
                    },
                    e => e,
                }
            })
        },
        |key, (i, v)| {
            let entry = Entry {
                ptx: jobs[*i].text.clone(),
                cubin: v.cubin.clone(),
                ptxas_log: cache::to_placeholders(&v.log, &pairs),
                nvrtc_log: String::new(),
                probes: String::new(),
            };
            vec![(*key, entry)]
        },
    );
    for (&i, r) in pending.iter().zip(ran.results) {
        results[i] = r.map(|r| r.map(|(_, v)| v));
    }
    let hits = from_cache.iter().filter(|&&c| c).count();
    let cache = CacheUse {
        dir: cache.map(|c| c.dir().to_path_buf()),
        hits,
        misses: jobs.len() - hits,
        damaged: found.corrupt,
        first_damage: found.first_damage,
        store_failure,
    };
    Ran { results, from_cache, cache }
}
