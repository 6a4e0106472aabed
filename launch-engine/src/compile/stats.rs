//! The build statistics, `OUT_DIR/launch/build-stats.json` (layout:
//! [`launch_schema::stats`]): how many jobs compiled and how many came from the cache, which
//! ones compiled and how long each compiler took, the most jobs that ran at once and the build
//! script's peak resident memory. Written only when the whole build succeeded ([`write`]);
//! `LAUNCH_BUILD_DEBUG=1` also prints a summary ([`print_summary`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use launch::Arch;
pub use launch_schema::stats::{BuildStats, CachedJob, CompiledJob, HostJob, PrebuiltUse, VERSION};

use crate::cargo_directives;
use crate::compile::scheduler::Tokens;
use crate::compile::JobTiming;
use crate::error::Error;
use crate::out;

/// The counts of a build whose every job is done; [`add_compiled`] adds each compiled job's
/// times and [`finish`] the wall time and memory.
pub fn counts(
    jobs: usize,
    compiled: usize,
    corrupt: usize,
    cache_dir: Option<PathBuf>,
    tokens: &Tokens,
    max_parallel: usize,
) -> BuildStats {
    BuildStats {
        schema: VERSION,
        jobs,
        compiled,
        cached: jobs - compiled,
        corrupt,
        cache_dir,
        tokens: tokens.describe().to_string(),
        max_parallel,
        nvrtc_ms: 0.0,
        ptxas_ms: 0.0,
        wall_ms: 0.0,
        peak_rss_kib: None,
        compiled_jobs: Vec::new(),
        variant_jobs: 0,
        variants_compiled: 0,
        variant_ptxas_ms: 0.0,
        host_jobs: Vec::new(),
        nvcc_ms: 0.0,
        host_link_ms: 0.0,
        prebuilt: None,
        prebuilt_stale: Vec::new(),
        remote_hits: 0,
        remote_jobs: Vec::new(),
        remote: None,
        kept: false,
        script_ms: 0.0,
    }
}

/// The statistics of a build that embedded the crate's prebuilt kernels: `jobs` (files × arches)
/// held, none compiled, none from the cache, no job slots taken.
pub fn prebuilt(jobs: usize, used: PrebuiltUse, started: Instant) -> BuildStats {
    let mut stats = counts(jobs, 0, 0, None, &Tokens::Serial, 0);
    stats.cached = 0;
    stats.tokens = "none (prebuilt)".to_string();
    stats.prebuilt = Some(used);
    finish(&mut stats, started);
    stats
}

/// `stats` with the tune variants' ptxas runs: `jobs` in all, `compiled` of them in this run,
/// taking `ptxas_ms`.
pub fn with_variants(stats: BuildStats, jobs: usize, compiled: usize, ptxas_ms: f64) -> BuildStats {
    BuildStats { variant_jobs: jobs, variants_compiled: compiled, variant_ptxas_ms: round3(ptxas_ms), ..stats }
}

/// Adds one compiled job (in job order).
pub fn add_compiled(stats: &mut BuildStats, file: &str, arch: Arch, timing: JobTiming) {
    let JobTiming { nvrtc, ptxas } = timing;
    stats.nvrtc_ms += ms(nvrtc);
    stats.ptxas_ms += ms(ptxas);
    stats.compiled_jobs.push(CompiledJob { file: file.to_string(), arch, nvrtc_ms: ms(nvrtc), ptxas_ms: ms(ptxas) });
}

/// Adds one host file's compile (in job order): `nvcc` is its time and threads (`--threads`) when
/// it compiled in this run, `None` when it came from the cache.
pub fn add_host(stats: &mut BuildStats, file: &str, arches: Vec<Arch>, nvcc: Option<(Duration, usize)>) {
    let nvcc_ms = nvcc.map(|(t, _)| ms(t)).unwrap_or(0.0);
    stats.nvcc_ms += nvcc_ms;
    let from = if nvcc.is_some() { "compiled" } else { "cache" };
    let (file, from, nvcc_threads) = (file.to_string(), from.to_string(), nvcc.map_or(0, |(_, n)| n));
    stats.host_jobs.push(HostJob { file, arches, from, nvcc_ms, nvcc_threads });
}

/// Rounds the sums and records the wall time since `started` and the peak memory.
pub fn finish(stats: &mut BuildStats, started: Instant) {
    stats.nvrtc_ms = round3(stats.nvrtc_ms);
    stats.ptxas_ms = round3(stats.ptxas_ms);
    stats.nvcc_ms = round3(stats.nvcc_ms);
    stats.wall_ms = ms(started.elapsed());
    stats.peak_rss_kib = peak_rss_kib();
}

/// The one-line summary `LAUNCH_BUILD_DEBUG=1` prints.
pub fn print_summary(stats: &BuildStats) {
    cargo_directives::launch_build_warning(&summary(stats));
}

pub(crate) fn summary(stats: &BuildStats) -> String {
    let host = match stats.host_jobs.len() {
        0 => String::new(),
        n => {
            let compiled = stats.host_jobs.iter().filter(|h| h.from == "compiled").count();
            format!("; {n} host file(s), {compiled} compiled by nvcc in {:.1} s", stats.nvcc_ms / 1e3)
        }
    };
    format!(
        "{} jobs: {} compiled ({} at most at once, {}), {} from the cache{}{}{host}",
        stats.jobs,
        stats.compiled,
        stats.max_parallel,
        stats.tokens,
        stats.cached,
        stats.cache_dir.as_ref().map(|d| format!(" at {}", d.display())).unwrap_or_else(|| " (off)".into()),
        remote_summary(stats)
    )
}

/// ` (3 local, 3 remote from s3://b/p; 2 written there)` where a remote is configured.
fn remote_summary(stats: &BuildStats) -> String {
    let Some(r) = &stats.remote else { return String::new() };
    let written = if r.read_only { "read-only".to_string() } else { format!("{} written there", r.entries_written) };
    let failed = if r.failed { ", failed" } else { "" };
    format!(
        " ({} local, {} remote from {}; {written}{failed})",
        stats.cached - stats.remote_hits.min(stats.cached),
        stats.remote_hits,
        r.url
    )
}

/// The remote's part of the statistics: which jobs it served and what the build did with it.
pub fn add_remote(stats: &mut BuildStats, remote: Option<&crate::cache::Remote>, jobs: Vec<CachedJob>) {
    stats.remote_hits = jobs.len();
    stats.remote_jobs = jobs;
    stats.remote = remote.map(|r| {
        let used = r.usage();
        launch_schema::stats::RemoteCacheUse {
            url: r.config().url.to_string(),
            read_only: r.config().mode == crate::cache::remote::Mode::ReadOnly,
            entries_read: used.hits,
            bytes_read: used.bytes_read,
            entries_written: used.writes,
            bytes_written: used.bytes_written,
            failed: used.failed,
        }
    });
}

/// Writes `launch_dir/build-stats.json` (after the build succeeded).
pub fn write(launch_dir: &Path, stats: &BuildStats) -> Result<(), Error> {
    let json = serde_json::to_string_pretty(stats).expect("the statistics serialise");
    out::write_if_changed(&launch_dir.join("build-stats.json"), json.as_bytes()).map(drop)
}

/// Milliseconds, to the microsecond.
fn ms(d: Duration) -> f64 {
    round3(d.as_secs_f64() * 1e3)
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
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

    fn timing(nvrtc_us: u64, ptxas_us: u64) -> JobTiming {
        JobTiming { nvrtc: Duration::from_micros(nvrtc_us), ptxas: Duration::from_micros(ptxas_us) }
    }

    /// `LAUNCH_BUILD_DEBUG`'s summary splits the hits into local and remote where a remote is
    /// configured, and says nothing of one otherwise.
    #[test]
    fn the_summary_says_where_hits_came_from() {
        let mut stats = counts(6, 1, 0, Some(PathBuf::from("/c/kernels")), &Tokens::Serial, 1);
        assert!(!summary(&stats).contains("remote"), "{}", summary(&stats));
        stats.remote_hits = 3;
        stats.remote = Some(launch_schema::stats::RemoteCacheUse {
            url: "s3://b/p".into(),
            read_only: false,
            entries_read: 3,
            bytes_read: 30,
            entries_written: 1,
            bytes_written: 10,
            failed: false,
        });
        let text = summary(&stats);
        assert!(
            text.ends_with("5 from the cache at /c/kernels (2 local, 3 remote from s3://b/p; 1 written there)"),
            "{text}"
        );
        stats.remote.as_mut().unwrap().read_only = true;
        stats.remote.as_mut().unwrap().failed = true;
        assert!(
            summary(&stats).ends_with("(2 local, 3 remote from s3://b/p; read-only, failed)"),
            "{}",
            summary(&stats)
        );
    }

    /// The field names are the file's layout: renaming one is a new `VERSION` (see
    /// `launch_schema`), so they are pinned here, where the file is written.
    #[test]
    fn the_file_has_todays_fields_and_reads_back_into_the_shared_type() {
        let mut stats = counts(3, 2, 1, Some(PathBuf::from("/c/kernels")), &Tokens::Serial, 1);
        add_compiled(&mut stats, "kernels/a.cu", "sm_80".parse().unwrap(), timing(1500, 2250));
        add_compiled(&mut stats, "kernels/b.cu", "sm_90".parse().unwrap(), timing(1, 2));
        let arches = vec!["sm_80".parse().unwrap(), "sm_90".parse().unwrap()];
        add_host(&mut stats, "kernels/h.cu", arches.clone(), Some((Duration::from_micros(2500), 2)));
        add_host(&mut stats, "kernels/g.cu", arches, None);
        finish(&mut stats, Instant::now());
        assert_eq!((stats.schema, stats.cached, stats.nvrtc_ms, stats.ptxas_ms), (VERSION, 1, 1.501, 2.252));
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &stats).unwrap();
        let text = std::fs::read_to_string(d.path().join("build-stats.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut fields: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        fields.sort_unstable();
        assert_eq!(
            fields,
            [
                "cache_dir",
                "cached",
                "compiled",
                "compiled_jobs",
                "corrupt",
                "host_jobs",
                "host_link_ms",
                "jobs",
                "kept",
                "max_parallel",
                "nvcc_ms",
                "nvrtc_ms",
                "peak_rss_kib",
                "prebuilt",
                "prebuilt_stale",
                "ptxas_ms",
                "remote",
                "remote_hits",
                "remote_jobs",
                "schema",
                "script_ms",
                "tokens",
                "variant_jobs",
                "variant_ptxas_ms",
                "variants_compiled",
                "wall_ms"
            ]
        );
        let mut job: Vec<&str> = json["compiled_jobs"][0].as_object().unwrap().keys().map(String::as_str).collect();
        job.sort_unstable();
        assert_eq!(job, ["arch", "file", "nvrtc_ms", "ptxas_ms"]);
        assert_eq!(json["compiled_jobs"][0]["arch"], "sm_80", "the arch is written as its name");
        assert_eq!(json["schema"], 1);
        let mut host: Vec<&str> = json["host_jobs"][0].as_object().unwrap().keys().map(String::as_str).collect();
        host.sort_unstable();
        assert_eq!(host, ["arches", "file", "from", "nvcc_ms", "nvcc_threads"]);
        assert_eq!(
            (&json["host_jobs"][0]["from"], &json["host_jobs"][1]["from"]),
            (&"compiled".into(), &"cache".into())
        );
        assert_eq!((stats.nvcc_ms, stats.nvrtc_ms), (2.5, 1.501), "nvcc's time is not NVRTC's");
        assert_eq!(serde_json::from_str::<BuildStats>(&text).unwrap(), stats);
    }

    #[test]
    fn the_summary_names_the_cache_or_says_it_is_off() {
        let on = counts(6, 2, 0, Some(PathBuf::from("/c/kernels")), &Tokens::Serial, 1);
        assert_eq!(summary(&on), "6 jobs: 2 compiled (1 at most at once, serial), 4 from the cache at /c/kernels");
        let off = counts(6, 6, 0, None, &Tokens::Serial, 1);
        assert!(summary(&off).ends_with("0 from the cache (off)"), "{}", summary(&off));
    }
}
