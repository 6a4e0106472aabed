//! `cargo launch cache [show|prune|clear]`: the local kernel cache (`<cache>/kernels/`, see
//! launch-build's `cache` module) as people and tools see it: where it is, its entries and bytes,
//! its limit (`LAUNCH_CACHE_MAX_SIZE`), the hit rate of the last builds (from the build log the
//! build script appends to) and the remote store; pruning it to a limit and clearing it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use launch_engine::tooling::cache::{
    self as kernel_cache, format_size, BuildRecord, Pruned, RemoteConfig, RemoteMode, Usage,
};
use launch_engine::tooling::toolchain::cache_dir;
use launch_engine::tooling::{var, Env};
use serde_json::json;

use crate::cli::{CacheAction, CacheArgs, Format};
use crate::error::Error;

/// How many builds `show` lists.
const LAST: usize = 10;

/// Runs `cargo launch cache`.
pub(crate) fn run(args: &CacheArgs) -> Result<(), Error> {
    let env = Env::cli();
    let root = cache_dir(&env).ok_or_else(|| {
        Error::Usage(anyhow::anyhow!(
            "no cache folder: none of LAUNCH_CACHE_DIR, XDG_CACHE_HOME and HOME is set; set LAUNCH_CACHE_DIR"
        ))
    })?;
    let limit = env.cache_max_size()?;
    match args.action.unwrap_or(CacheAction::Show) {
        CacheAction::Show => show(&env, &root, limit, args.format),
        CacheAction::Prune { max_size } => {
            let limit = max_size.map_or(limit, |m| m.0);
            let pruned = match limit {
                Some(l) => kernel_cache::prune(&root.join("kernels"), l),
                None => Pruned { left: kernel_cache::usage(&root.join("kernels")), ..Pruned::default() },
            };
            print_pruned("prune", &root, &pruned, limit, args.format)?;
            refuse_failures("prune", &pruned)
        }
        CacheAction::Clear => {
            let cleared = kernel_cache::clear(&root);
            print_pruned("clear", &root, &cleared, limit, args.format)?;
            refuse_failures("clear", &cleared)
        }
    }
}

/// The remote store builds here would use: `LAUNCH_CACHE_REMOTE`, else the `cache-remote` of the
/// crate in the current folder (its URL never shows a password). A bad variable is an error.
fn remote(env: &Env) -> Result<Option<RemoteConfig>, Error> {
    let crate_config = launch_engine::Config::load(Path::new("Cargo.toml")).ok();
    let metadata = crate_config.as_ref().and_then(|c| c.cache_remote.as_ref()).map(|(url, at)| (url, at.clone()));
    env.cache_remote(metadata).map_err(|e| Error::Usage(e.into()))
}

fn remote_json(r: Option<&RemoteConfig>) -> serde_json::Value {
    r.map_or(serde_json::Value::Null, |r| {
        json!({
            "url": r.url.to_string(),
            "read_only": r.mode == RemoteMode::ReadOnly,
            "timeout_s": r.timeout.as_secs(),
            "source": r.source,
        })
    })
}

fn show(env: &Env, root: &Path, limit: Option<u64>, format: Format) -> Result<(), Error> {
    let kernels = root.join("kernels");
    let usage = kernel_cache::usage(&kernels);
    let kernel_cache::Log { records: builds, skipped } = kernel_cache::build_log_counted(root);
    let last = &builds[builds.len().saturating_sub(LAST)..];
    let max_size = var::LAUNCH_CACHE_MAX_SIZE;
    let limit_source = if env.get(max_size).is_some() { max_size.name } else { "default" };
    let remote = remote(env)?;
    let mut out = crate::stdout::stdout();
    match format {
        Format::Json => {
            let doc = json!({
                "root": root,
                "location": kernels,
                "entries": usage.entries,
                "bytes": usage.bytes,
                "limit": limit,
                "limit_source": limit_source,
                "remote": remote_json(remote.as_ref()),
                "builds": {
                    "recorded": builds.len(),
                    "skipped_lines": skipped,
                    "all": totals_json(&builds),
                    "last": totals_json(last),
                    "last_builds": last.iter().map(|b| json!({
                        "time": b.time,
                        "package": b.package,
                        "jobs": b.jobs,
                        "cached": b.cached,
                        "compiled": b.compiled,
                    })).collect::<Vec<_>>(),
                },
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc).map_err(|e| Error::Failure(e.into()))?)
        }
        Format::Text => {
            show_text(&mut out, &kernels, usage, (limit, limit_source), remote.as_ref(), (&builds, skipped))
        }
    }
    .context("writing the cache's state")?;
    Ok(())
}

/// `show`'s text: location, entries, limit, remote, the builds' hit rates and the last builds.
fn show_text(
    out: &mut impl Write,
    kernels: &Path,
    usage: Usage,
    (limit, limit_source): (Option<u64>, &str),
    remote: Option<&RemoteConfig>,
    (builds, skipped): (&[BuildRecord], usize),
) -> std::io::Result<()> {
    let last = &builds[builds.len().saturating_sub(LAST)..];
    writeln!(out, "location  {}", kernels.display())?;
    writeln!(out, "entries   {} ({})", usage.entries, format_size(usage.bytes))?;
    match limit {
        Some(l) => writeln!(out, "limit     {} ({limit_source})", format_size(l))?,
        None => writeln!(out, "limit     none (LAUNCH_CACHE_MAX_SIZE=0)")?,
    }
    match remote {
        Some(r) => writeln!(out, "remote    {r}")?,
        None => writeln!(out, "remote    none (LAUNCH_CACHE_REMOTE, or cache-remote in Cargo.toml)")?,
    }
    writeln!(out, "builds    {}", rate_text(builds, "recorded"))?;
    if skipped > 0 {
        let lines = if skipped == 1 { "line" } else { "lines" };
        writeln!(out, "          {skipped} damaged {lines} of the build log skipped (no build writes them)")?;
    }
    if !last.is_empty() {
        writeln!(out, "last {}    {}", last.len(), rate_text(last, "builds"))?;
        for b in last {
            writeln!(
                out,
                "  {}  {}: {} jobs, {} from the cache, {} compiled",
                utc(b.time),
                b.package,
                b.jobs,
                b.cached,
                b.compiled
            )?;
        }
    }
    Ok(())
}

/// `(jobs, from the cache, compiled)` over `builds`.
fn totals(builds: &[BuildRecord]) -> (u64, u64, u64) {
    builds.iter().fold((0, 0, 0), |(j, h, c), b| (j + b.jobs, h + b.cached, c + b.compiled))
}

fn totals_json(builds: &[BuildRecord]) -> serde_json::Value {
    let (jobs, cached, compiled) = totals(builds);
    let rate = (jobs > 0).then(|| cached as f64 / jobs as f64);
    json!({ "builds": builds.len(), "jobs": jobs, "cached": cached, "compiled": compiled, "hit_rate": rate })
}

/// `12 recorded: 83% of 60 jobs from the cache, 10 compiled`.
fn rate_text(builds: &[BuildRecord], what: &str) -> String {
    let (jobs, cached, compiled) = totals(builds);
    if jobs == 0 {
        return format!("{} {what}, no jobs", builds.len());
    }
    let percent = cached * 100 / jobs;
    format!("{} {what}: {percent}% of {jobs} jobs from the cache, {compiled} compiled", builds.len())
}

fn print_pruned(action: &str, root: &Path, p: &Pruned, limit: Option<u64>, format: Format) -> Result<(), Error> {
    let mut out = crate::stdout::stdout();
    match format {
        Format::Json => {
            let doc = json!({
                "action": action,
                "location": root.join("kernels"),
                "removed": { "entries": p.removed.entries, "bytes": p.removed.bytes },
                "left": { "entries": p.left.entries, "bytes": p.left.bytes },
                "limit": if action == "prune" { limit } else { None },
                "failed": p.failed.iter().map(|(path, why)| json!({ "path": path, "error": why })).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default())
        }
        Format::Text => {
            let kernels: PathBuf = root.join("kernels");
            let removed = format!("removed {} entries ({})", p.removed.entries, format_size(p.removed.bytes));
            let left = format!("{} entries ({}) left", p.left.entries, format_size(p.left.bytes));
            if action == "clear" {
                writeln!(
                    out,
                    "{removed}, the compile times and the build log from {}; {left}; the toolchains in {} stay",
                    kernels.display(),
                    root.join("toolchain").display()
                )
            } else {
                let limit = limit.map_or_else(|| "no limit".to_string(), |l| format!("limit {}", format_size(l)));
                writeln!(out, "{removed} from {}; {left} ({limit})", kernels.display())
            }
        }
    }
    .with_context(|| format!("writing what `cache {action}` did"))?;
    Ok(())
}

/// What `cache clear` or `cache prune` could not read or remove: a warning each on stderr (after
/// the output, which counts them as left), and an error (exit 4) saying how many.
fn refuse_failures(action: &str, p: &Pruned) -> Result<(), Error> {
    let Some((first, why)) = p.failed.first() else { return Ok(()) };
    for (path, why) in &p.failed {
        eprintln!("warning: `cache {action}` could not remove {}: {why}", path.display());
    }
    let n = p.failed.len();
    Err(Error::Failure(anyhow::anyhow!(
        "`cache {action}` could not remove {n} {} (the first: {}: {why}); the rest is done; fix the permissions or \
         remove them by hand",
        if n == 1 { "path" } else { "paths" },
        first.display()
    )))
}

/// `2026-12-01 19:20:11 UTC` from seconds since the Unix epoch (proleptic Gregorian calendar).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let s = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", s / 3600, s % 3600 / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_as_utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_764_617_411), "2025-12-01 19:30:11 UTC");
    }

    #[test]
    fn rates_count_jobs_not_builds() {
        let b = |jobs, cached| BuildRecord { time: 0, package: "p".into(), jobs, cached, compiled: jobs - cached };
        assert_eq!(rate_text(&[b(6, 6), b(4, 0)], "builds"), "2 builds: 60% of 10 jobs from the cache, 4 compiled");
        assert_eq!(rate_text(&[], "recorded"), "0 recorded, no jobs");
    }
}
