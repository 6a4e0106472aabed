//! `cargo launch cache` (show, prune, clear) and the local cache's size limit, through real
//! builds of `fixtures/crates/cache` (three kernel files × two arches: six entries) into a cache
//! folder of each test's own (`LAUNCH_CACHE_DIR`; never the user's).
#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{cargo_build, cargo_launch, fixture, run, toolchain_root};

/// `cargo launch cache ARGS` on the cache folder `cache`: (exit code, stdout, stderr).
fn cache_cmd(cache: &Path, args: &[&str]) -> (i32, String, String) {
    run(cargo_launch().env("LAUNCH_CACHE_DIR", cache).arg("launch").arg("cache").args(args))
}

/// `cargo launch cache ARGS --format json`, expecting success.
fn cache_json(cache: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, stdout, stderr) = cache_cmd(cache, &all);
    assert_eq!(code, 0, "cache {args:?}:\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}:\n{stdout}"))
}

fn build(mut cmd: Command) {
    let (code, _, stderr) = run(&mut cmd);
    assert_eq!(code, 0, "cargo build failed:\n{stderr}");
}

/// The entry files under `<cache>/kernels`.
fn entry_files(cache: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(shards) = fs::read_dir(cache.join("kernels")) else { return out };
    for s in shards.flatten() {
        for f in fs::read_dir(s.path()).unwrap().flatten() {
            if f.file_name().len() == 64 {
                out.push(f.path());
            }
        }
    }
    out
}

#[test]
fn show_lists_entries_bytes_limit_remote_and_the_builds_hit_rate_then_prune_and_clear() {
    let tc = toolchain_root();
    let dir = fixture("cache");
    let cache = tempfile::tempdir().unwrap();
    let empty = cache_json(cache.path(), &[]);
    assert_eq!((empty["entries"].as_u64(), empty["bytes"].as_u64()), (Some(0), Some(0)), "{empty}");
    assert_eq!(empty["limit"].as_u64(), Some(5 << 30));
    assert_eq!(empty["remote"], Value::Null);

    build(cargo_build(dir.path(), cache.path(), &tc));
    fs::write(
        dir.path().join("kernels/c.cu"),
        fs::read_to_string(dir.path().join("kernels/c.cu")).unwrap() + "\n// edited\n",
    )
    .unwrap();
    build(cargo_build(dir.path(), cache.path(), &tc));

    let shown = cache_json(cache.path(), &["show"]);
    let files = entry_files(cache.path());
    let bytes: u64 = files.iter().map(|f| fs::metadata(f).unwrap().len()).sum();
    assert_eq!(files.len(), 8, "6 entries, then c.cu's two arches again");
    assert_eq!((shown["entries"].as_u64(), shown["bytes"].as_u64()), (Some(8), Some(bytes)), "{shown}");
    assert_eq!(shown["location"].as_str(), Some(cache.path().join("kernels").to_str().unwrap()));
    let builds = &shown["builds"];
    assert_eq!(builds["recorded"].as_u64(), Some(2), "{shown}");
    let all = &builds["all"];
    assert_eq!((all["jobs"].as_u64(), all["cached"].as_u64(), all["compiled"].as_u64()), (Some(12), Some(4), Some(8)));
    assert_eq!(builds["last_builds"][1]["compiled"].as_u64(), Some(2), "{shown}");

    let (code, text, stderr) = cache_cmd(cache.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    for want in [
        "entries   8 (",
        "limit     5.0 GiB (default)",
        "remote    none (LAUNCH_CACHE_REMOTE, or cache-remote in Cargo.toml)",
        "2 recorded: 33% of 12 jobs",
    ] {
        assert!(text.contains(want), "{want:?} in:\n{text}");
    }
    let limited = run(cargo_launch()
        .env("LAUNCH_CACHE_DIR", cache.path())
        .env("LAUNCH_CACHE_MAX_SIZE", "0")
        .args(["launch", "cache"]));
    assert!(limited.1.contains("limit     none"), "{}", limited.1);

    // Prune to a limit just under the total: the least recently used entries go, down to 90%.
    let one = bytes / 8;
    let limit = bytes - one / 2;
    let pruned = cache_json(cache.path(), &["prune", "--max-size", &limit.to_string()]);
    let removed = pruned["removed"]["entries"].as_u64().unwrap();
    assert!(removed >= 1, "{pruned}");
    assert_eq!(entry_files(cache.path()).len() as u64, 8 - removed);
    assert!(pruned["left"]["bytes"].as_u64().unwrap() <= limit / 10 * 9, "{pruned}");
    // Under the limit: nothing goes.
    let again = cache_json(cache.path(), &["prune", "--max-size", "1G"]);
    assert_eq!(again["removed"]["entries"].as_u64(), Some(0), "{again}");

    // Clear: no entry, no compile time, no build log; the toolchains stay.
    let tool = cache.path().join("toolchain/cuda-12.9.86/nvidia/cuda_nvcc/bin/ptxas");
    fs::create_dir_all(tool.parent().unwrap()).unwrap();
    fs::write(&tool, "mine").unwrap();
    let (code, text, stderr) = cache_cmd(cache.path(), &["clear"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.starts_with(&format!("removed {} entries", 8 - removed)), "{text}");
    assert!(entry_files(cache.path()).is_empty());
    assert_eq!(fs::read_dir(cache.path().join("kernel-timings")).unwrap().count(), 0);
    assert_eq!(fs::read_to_string(&tool).unwrap(), "mine");
    let cleared = cache_json(cache.path(), &[]);
    assert_eq!((cleared["entries"].as_u64(), cleared["builds"]["recorded"].as_u64()), (Some(0), Some(0)), "{cleared}");
}

#[test]
fn a_build_keeps_the_cache_under_its_limit() {
    let tc = toolchain_root();
    let dir = fixture("cache");
    let cache = tempfile::tempdir().unwrap();
    build(cargo_build(dir.path(), cache.path(), &tc));
    let files = entry_files(cache.path());
    assert_eq!(files.len(), 6);
    let bytes: u64 = files.iter().map(|f| fs::metadata(f).unwrap().len()).sum();

    // A limit of about four entries: the next build that stores something prunes.
    let limit = bytes * 2 / 3;
    fs::write(
        dir.path().join("kernels/a.cu"),
        fs::read_to_string(dir.path().join("kernels/a.cu")).unwrap() + "\n// edited\n",
    )
    .unwrap();
    let mut cmd = cargo_build(dir.path(), cache.path(), &tc);
    cmd.env("LAUNCH_CACHE_MAX_SIZE", limit.to_string());
    build(cmd);
    let left: u64 = entry_files(cache.path()).iter().map(|f| fs::metadata(f).unwrap().len()).sum();
    assert!(left <= limit, "{left} bytes left, limit {limit}");
    assert!(left <= limit / 10 * 9, "pruned to 90%: {left} bytes left, limit {limit}");
    let shown = cache_json(cache.path(), &[]);
    let last = &shown["builds"]["last_builds"][1];
    assert_eq!((last["compiled"].as_u64(), last["cached"].as_u64()), (Some(2), Some(4)), "{shown}");
    // What was evicted compiles again: the next build succeeds and stays under the limit too.
    fs::write(
        dir.path().join("kernels/b.cu"),
        fs::read_to_string(dir.path().join("kernels/b.cu")).unwrap() + "\n// edited\n",
    )
    .unwrap();
    let mut again = cargo_build(dir.path(), cache.path(), &tc);
    again.env("LAUNCH_CACHE_MAX_SIZE", limit.to_string());
    build(again);
    let left: u64 = entry_files(cache.path()).iter().map(|f| fs::metadata(f).unwrap().len()).sum();
    assert!(left <= limit, "{left} bytes left, limit {limit}");
}

#[test]
fn a_bad_size_is_a_usage_error_naming_where_it_came_from() {
    let cache = tempfile::tempdir().unwrap();
    let (code, _, stderr) = cache_cmd(cache.path(), &["prune", "--max-size", "5X"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--max-size") && stderr.contains("500M"), "{stderr}");
    let (code, _, stderr) = run(cargo_launch()
        .env("LAUNCH_CACHE_DIR", cache.path())
        .env("LAUNCH_CACHE_MAX_SIZE", "lots")
        .args(["launch", "cache"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("LAUNCH_CACHE_MAX_SIZE") && stderr.contains("`lots`"), "{stderr}");
    // Nothing was written by the refused commands.
    assert_eq!(fs::read_dir(cache.path()).unwrap().count(), 0);
}

/// A build's tune variants are stored after its kernels: the cache is kept under the limit after
/// them too (with a limit of one byte nothing stays; without one, the entries are there).
#[test]
fn tune_variants_a_build_stores_are_kept_under_the_limit_too() {
    let tc = toolchain_root();
    let (dir, cache) = (fixture("tune_grid"), tempfile::tempdir().unwrap());
    let mut cmd = cargo_build(dir.path(), cache.path(), &tc);
    cmd.env("LAUNCH_CACHE_MAX_SIZE", "1");
    build(cmd);
    assert_eq!(entry_files(cache.path()), Vec::<std::path::PathBuf>::new());
    let shown = cache_json(cache.path(), &[]);
    assert_eq!(shown["builds"]["recorded"].as_u64(), Some(1), "the build is recorded all the same: {shown}");

    let (dir, cache) = (fixture("tune_grid"), tempfile::tempdir().unwrap());
    build(cargo_build(dir.path(), cache.path(), &tc));
    assert!(!entry_files(cache.path()).is_empty());
}

/// The children of every test start without any variable the tools document (the scrubbed set is
/// derived from the table, not listed by hand): a developer's `LAUNCH_CACHE_REMOTE` or
/// `LAUNCH_TUNE_CACHE_DIR` cannot change what a test sees.
#[test]
fn every_documented_variable_is_scrubbed_from_the_children() {
    for v in launch_engine::tooling::DOCUMENTED {
        for name in v.names() {
            assert!(crate::support::SCRUBBED.contains(name), "{name} reaches the binary under test");
        }
    }
    for name in
        ["LAUNCH_CACHE_REMOTE", "LAUNCH_CACHE_REMOTE_MODE", "LAUNCH_TUNE_CACHE_REMOTE", "CUDA_PATH", "MAKEFLAGS"]
    {
        assert!(crate::support::SCRUBBED.contains(&name), "{name}");
    }
}

/// Issue 32, class 8: garbage lines in `kernel-builds.tsv` are skipped and counted, never read
/// into impossible statistics ("100% of 3 jobs from the cache, 5 compiled", a build in 1970).
#[test]
fn damaged_build_log_lines_are_skipped_and_counted() {
    let cache = tempfile::tempdir().unwrap();
    let good = "1700000000\t6\t4\t2\tgood\n";
    let bad = "0\t3\t3\t0\tin-1970\n1700000001\t3\t3\t5\timpossible\ngarbage\n";
    fs::write(cache.path().join("kernel-builds.tsv"), format!("{good}{bad}")).unwrap();
    let shown = cache_json(cache.path(), &[]);
    let builds = &shown["builds"];
    assert_eq!((builds["recorded"].as_u64(), builds["skipped_lines"].as_u64()), (Some(1), Some(3)), "{shown}");
    assert_eq!((builds["all"]["jobs"].as_u64(), builds["all"]["compiled"].as_u64()), (Some(6), Some(2)), "{shown}");
    let (code, text, stderr) = cache_cmd(cache.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains("1 recorded: 66% of 6 jobs from the cache, 2 compiled"), "{text}");
    assert!(text.contains("3 damaged lines of the build log skipped"), "{text}");
    assert!(!text.contains("1970") && !text.contains("impossible"), "{text}");
}
