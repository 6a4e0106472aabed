//! What a build through the kernel cache leaves besides entries: its line in the build log
//! ([`cache::build_log`]), and the cache kept under its size limit ([`cache::limit`]).

use std::time::Instant;

use super::{note, Built};
use crate::cache::{self, Cache};
use crate::compile::Compiler;
use crate::env::{var, Env};
use crate::error::Error;

/// After a successful build through `cache`: its line in the build log, and, when it stored
/// entries, the cache pruned to `LAUNCH_CACHE_MAX_SIZE` ([`cache::limit::after_store`]). Neither
/// can fail the build: a log or a removal that fails is skipped. Returns `built`.
///
/// # Errors
/// A bad `LAUNCH_CACHE_MAX_SIZE` (checked before the build already, so never in practice).
pub(super) fn record_use(
    env: &Env,
    cache: Option<&Cache>,
    compiler: &Compiler,
    built: Built,
    debug: bool,
) -> Result<Built, Error> {
    let Some(cache) = cache else { return Ok(built) };
    let compiled = built.compiled.iter().filter(|&&c| c).count() as u64;
    let package = env
        .get(var::CARGO_PKG_NAME)
        .map(|p| p.to_string_lossy().into_owned())
        .or_else(|| compiler.root().file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let record = cache::build_log::BuildRecord {
        time: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        package,
        jobs: built.compiled.len() as u64,
        cached: built.compiled.len() as u64 - compiled,
        compiled,
    };
    if let Err(e) = cache::build_log::append(cache.root(), &record) {
        note(debug, &format!("could not write the kernel cache's build log: {e}"));
    }
    // What this build stored, about (the entries' headers are left out).
    let stored: usize = built
        .outputs
        .iter()
        .zip(&built.compiled)
        .filter(|(_, &c)| c)
        .map(|(o, _)| o.ptx.len() + o.cubin.len() + o.ptxas_log.len() + o.nvrtc_log.len())
        .chain(built.objects.iter().map(|o| o.object.len()))
        .sum();
    keep_under_limit(env, cache, stored as u64, debug)?;
    Ok(built)
}

/// After a build stored about `stored` bytes in `cache`: the cache pruned to
/// `LAUNCH_CACHE_MAX_SIZE` when it may be over it ([`cache::limit::after_store`]); a note under
/// `LAUNCH_BUILD_DEBUG` when the folder was scanned.
///
/// # Errors
/// A bad `LAUNCH_CACHE_MAX_SIZE` (checked before the build already, so never in practice).
pub(crate) fn keep_under_limit(env: &Env, cache: &Cache, stored: u64, debug: bool) -> Result<(), Error> {
    let Some(limit) = env.cache_max_size()? else { return Ok(()) };
    let started = Instant::now();
    if let Some(p) = cache::limit::after_store(cache.dir(), cache.root(), stored, limit) {
        note(
            debug,
            &format!(
                "kernel cache: {} entries ({}) scanned in {} ms; {} least recently used removed ({}) to stay under {}",
                p.left.entries + p.removed.entries,
                cache::limit::format_size(p.left.bytes + p.removed.bytes),
                started.elapsed().as_millis(),
                p.removed.entries,
                cache::limit::format_size(p.removed.bytes),
                cache::limit::format_size(limit)
            ),
        );
    }
    Ok(())
}
