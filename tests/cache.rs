//! The kernel cache and the jobserver, through real `cargo build`s of `fixtures/crates/cache`
//! (three kernel files × two arches; `a.cu` includes `common.cuh`, `b.cu` includes `only_b.cuh`
//! which includes `common.cuh`, `c.cu` includes nothing and has a `@launch`).
//!
//! Every build reads `OUT_DIR/launch/build-stats.json`, which lists the jobs that compiled. Each
//! test has its own cache folder (`LAUNCH_CACHE_DIR`) and names the toolchain explicitly
//! (`LAUNCH_TOOLCHAIN`): the pinned one, or a fake one whose ptxas is a shell script around the
//! real ptxas that reports another version, sleeps, and logs when each run starts and ends.
#![cfg(unix)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use launch_schema::stats::BuildStats;
use serde_json::Value;

use crate::support::{fixture, run, toolchain_root, SCRUBBED};

/// A copy of the fixture named `fixture-cache-<tag>`: copies with one name share an `OUT_DIR` in
/// the shared target folder (cargo leaves a path package's folder out of its hash), so tests
/// that run at once must not share a name.
fn crate_copy(tag: &str) -> tempfile::TempDir {
    let dir = fixture("cache");
    let manifest = dir.path().join("Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    // `fixture` gave the copy a unique name; these tests compare copies, so they choose it.
    let text: String = text
        .lines()
        .map(|l| if l.starts_with("name = ") { format!("name = \"fixture-cache-{tag}\"") } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(&manifest, text + "\n").unwrap();
    forget_earlier_copies(&format!("fixture-cache-{tag}"));
    dir
}

/// Removes what an earlier test run's builds of `package` left as their copies of cache entries:
/// its `OUT_DIR` outlives the run (the name is fixed), and the copies would serve a test's cold
/// build that counts what compiles. Every profile's build folders are looked at.
fn forget_earlier_copies(package: &str) {
    let Ok(profiles) = fs::read_dir(crate::support::fixtures_target()) else { return };
    for profile in profiles.flatten() {
        let Ok(builds) = fs::read_dir(profile.path().join("build")) else { continue };
        for b in builds.flatten() {
            let name = b.file_name().to_string_lossy().into_owned();
            let ours = name.strip_prefix(package).and_then(|rest| rest.strip_prefix('-'));
            // `<package>-<hash>`: a hash of hex digits alone, so `fixture-cache-a` is not `-a-b`'s.
            if ours.is_some_and(|h| !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit())) {
                crate::support::forget_copies(&b.path().join("out"));
            }
        }
    }
}

/// The package name of a copy.
fn package_of(dir: &Path) -> String {
    let text = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let line = text.lines().find(|l| l.starts_with("name = ")).unwrap();
    line.trim_start_matches("name = ").trim_matches('"').to_string()
}

/// `cargo build` of `dir` with its own cache folder and toolchain, its messages as JSON.
fn cargo_build(dir: &Path, cache: &Path, toolchain: &Path) -> Command {
    let mut cmd = crate::support::cargo_build(dir, cache, toolchain);
    cmd.arg("--message-format=json-render-diagnostics");
    cmd
}

/// What one build left.
struct Built {
    out_dir: PathBuf,
    build_script: PathBuf,
    stats: BuildStats,
}

impl Built {
    fn launch_dir(&self) -> PathBuf {
        self.out_dir.join("launch")
    }

    /// `(file, arch)` of every job that compiled, e.g. `("a", "sm_80")`.
    fn compiled(&self) -> BTreeSet<(String, String)> {
        self.stats
            .compiled_jobs
            .iter()
            .map(|j| {
                let stem = j.file.trim_start_matches("kernels/").trim_end_matches(".cu");
                (stem.to_string(), j.arch.to_string())
            })
            .collect()
    }
}

fn jobs(files: &[&str], arches: &[&str]) -> BTreeSet<(String, String)> {
    files.iter().flat_map(|f| arches.iter().map(move |a| (f.to_string(), a.to_string()))).collect()
}

/// Runs a build and reads its statistics.
fn build(mut cmd: Command) -> Built {
    let package = package_of(cmd.get_current_dir().expect("cargo_build sets the folder"));
    let id = format!("#{package}@");
    let (code, stdout, stderr) = run(&mut cmd);
    assert_eq!(code, 0, "cargo build failed:\n{stderr}");
    let mut out_dir = None;
    let mut build_script = None;
    for line in stdout.lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else { continue };
        if !msg["package_id"].as_str().is_some_and(|p| p.contains(&id)) {
            continue;
        }
        match msg["reason"].as_str() {
            Some("build-script-executed") => out_dir = msg["out_dir"].as_str().map(PathBuf::from),
            Some("compiler-artifact") if msg["target"]["kind"][0] == "custom-build" => {
                build_script = msg["filenames"][0].as_str().map(PathBuf::from)
            }
            _ => {}
        }
    }
    let out_dir = out_dir.unwrap_or_else(|| panic!("no build-script-executed message:\n{stdout}"));
    let stats = read_stats(&out_dir);
    Built { out_dir, build_script: build_script.expect("the build script's artifact"), stats }
}

fn read_stats(out_dir: &Path) -> BuildStats {
    let path = out_dir.join("launch/build-stats.json");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    BuildStats::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Sets a file's modification time ahead (a `touch` that cargo cannot miss on coarse clocks).
fn touch(path: &Path) {
    static STEP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(10);
    let ahead = STEP.fetch_add(2, std::sync::atomic::Ordering::SeqCst);
    let when = SystemTime::now() + Duration::from_secs(ahead);
    fs::File::options().write(true).open(path).unwrap().set_modified(when).unwrap();
}

/// Removes the record a rerun keeps the outputs by (`OUT_DIR/launch/fresh.json`) and the build's
/// copies of its entries (`OUT_DIR/launch/work/entries`): the next build reads the cache for every
/// job, as a build in a new target folder does. For tests about what such a build reads;
/// `a_touched_input_keeps_the_outputs_and_reads_no_entry` tests the record and the copies.
fn forget_record(out_dir: &Path) {
    fs::remove_file(out_dir.join("launch/fresh.json")).unwrap();
    crate::support::forget_copies(out_dir);
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no `{from}`", path.display());
    fs::write(path, text.replacen(from, to, 1)).unwrap();
    touch(path);
}

fn append(path: &Path, line: &str) {
    let mut text = fs::read_to_string(path).unwrap();
    text.push_str(line);
    fs::write(path, text).unwrap();
    touch(path);
}

/// Every file under `dir` with its bytes, by relative path (build-stats.json left out: it holds
/// timings; so is fresh.json, which holds the outputs' times and the crate's place).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if rel != "work" {
                    stack.push(p);
                }
            } else if rel != "build-stats.json" && rel != "fresh.json" {
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Every cache entry (not temporary files) under a cache root.
fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(cache.join("kernels")) else { return out };
    for fan in rd {
        for e in fs::read_dir(fan.unwrap().path()).unwrap() {
            out.push(e.unwrap().path());
        }
    }
    out.sort();
    out
}

/// A toolchain root whose NVRTC and headers are the pinned ones and whose ptxas is a script: it
/// answers `--version` with `version`, and otherwise logs `start <ns> <its parent's pid>`, sleeps
/// `sleep` seconds, runs the real ptxas and logs `end <ns>` to `log`.
fn fake_toolchain(dir: &Path, version: &str, sleep: &str, log: &Path) -> PathBuf {
    let real = toolchain_root();
    let root = dir.join("toolchain");
    let nvidia = root.join("nvidia");
    fs::create_dir_all(nvidia.join("cuda_nvcc/bin")).unwrap();
    for part in ["cuda_nvrtc", "cuda_runtime"] {
        let link = nvidia.join(part);
        if !link.exists() {
            std::os::unix::fs::symlink(real.join("nvidia").join(part), link).unwrap();
        }
    }
    fs::create_dir_all(root.join("nvidia_cuda_nvrtc_cu12-12.9.86.dist-info")).unwrap();
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$1\" = \"--version\" ]; then echo 'Cuda compilation tools, release 12.9, V{version}'; exit 0; fi\n\
         echo \"start $(date +%s%N) $PPID\" >> '{log}'\n\
         sleep {sleep}\n\
         '{ptxas}' \"$@\"\n\
         rc=$?\n\
         echo \"end $(date +%s%N) $PPID\" >> '{log}'\n\
         exit $rc\n",
        log = log.display(),
        ptxas = real.join("nvidia/cuda_nvcc/bin/ptxas").display(),
    );
    let ptxas = nvidia.join("cuda_nvcc/bin/ptxas");
    fs::write(&ptxas, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&ptxas, fs::Permissions::from_mode(0o755)).unwrap();
    root
}

/// `(start, end)` of every fake ptxas run, in nanoseconds, from its log.
fn intervals(log: &Path) -> Vec<(u128, u128)> {
    let text = fs::read_to_string(log).unwrap_or_default();
    let mut starts = std::collections::BTreeMap::<String, Vec<u128>>::new();
    let mut out = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            ["start", t, ppid] => starts.entry(ppid.to_string()).or_default().push(t.parse().unwrap()),
            ["end", t, ppid] => {
                let s = starts.get_mut(*ppid).and_then(|v| v.pop()).expect("an end follows a start");
                out.push((s, t.parse().unwrap()));
            }
            _ => {}
        }
    }
    out.sort();
    out
}

fn overlaps(iv: &[(u128, u128)]) -> bool {
    iv.windows(2).any(|w| w[1].0 < w[0].1)
}

#[test]
fn each_change_recompiles_exactly_the_jobs_it_affects() {
    let tc = toolchain_root();
    let dir = crate_copy("edits");
    let cache = tempfile::tempdir().unwrap();
    let d = dir.path();
    let b = || build(cargo_build(d, cache.path(), &tc));
    let all = jobs(&["a", "b", "c"], &["sm_80", "sm_90"]);

    let cold = b();
    assert_eq!(cold.compiled(), all, "{:?}", cold.stats);
    assert_eq!((cold.stats.cached, cold.stats.corrupt), (0, 0));
    assert_eq!(entries(cache.path()).len(), 6);
    let outputs = snapshot(&cold.launch_dir());
    let stats_text = fs::read_to_string(cold.launch_dir().join("build-stats.json")).unwrap();

    // Nothing changed: cargo does not even rerun the build script.
    let again = b();
    assert_eq!(fs::read_to_string(again.launch_dir().join("build-stats.json")).unwrap(), stats_text);

    // Touching every input reruns the script, which compiles nothing and rewrites nothing.
    let cubin = cold.launch_dir().join("cubin/kernels+a.cu.sm_80.cubin");
    let cubin_mtime = fs::metadata(&cubin).unwrap().modified().unwrap();
    for f in ["kernels/a.cu", "kernels/b.cu", "kernels/c.cu", "include/common.cuh", "include/only_b.cuh"] {
        touch(&d.join(f));
    }
    let touched = b();
    assert_eq!(touched.compiled(), BTreeSet::new(), "{:?}", touched.stats);
    assert_eq!(touched.stats.cached, 6);
    assert_eq!(fs::metadata(&cubin).unwrap().modified().unwrap(), cubin_mtime, "an unchanged output was rewritten");
    assert_eq!(snapshot(&touched.launch_dir()), outputs);

    append(&d.join("kernels/a.cu"), "// edited\n");
    assert_eq!(b().compiled(), jobs(&["a"], &["sm_80", "sm_90"]), "a kernel edit");

    append(&d.join("include/only_b.cuh"), "// edited\n");
    assert_eq!(b().compiled(), jobs(&["b"], &["sm_80", "sm_90"]), "a header only b.cu includes");

    append(&d.join("include/common.cuh"), "// edited\n");
    assert_eq!(b().compiled(), jobs(&["a", "b"], &["sm_80", "sm_90"]), "a header a.cu and b.cu include");

    edit(&d.join("Cargo.toml"), "SCALE = 2", "SCALE = 3");
    assert_eq!(b().compiled(), all, "a define");
    // Content-addressed: going back finds the earlier entries.
    edit(&d.join("Cargo.toml"), "SCALE = 3", "SCALE = 2");
    assert_eq!(b().compiled(), BTreeSet::new(), "back to the earlier define");

    edit(&d.join("kernels/c.cu"), "@launch(128)", "@launch(256)");
    assert_eq!(b().compiled(), jobs(&["c"], &["sm_80", "sm_90"]), "an annotation");

    edit(&d.join("Cargo.toml"), "arch = [\"sm_80\", \"sm_90\"]", "arch = [\"sm_80\", \"sm_90\", \"sm_100\"]");
    let more = b();
    assert_eq!(more.compiled(), jobs(&["a", "b", "c"], &["sm_100"]), "an added arch");
    assert_eq!(more.stats.cached, 6);
}

/// The lines a build script printed to cargo, warnings left out, as a set (cargo keeps them in
/// `output` beside `OUT_DIR`).
fn directives(out_dir: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(out_dir.parent().unwrap().join("output")).unwrap();
    text.lines().filter(|l| l.starts_with("cargo:") && !l.starts_with("cargo:warning=")).map(str::to_string).collect()
}

/// Issue 32, class 10: a rerun whose every input and output is as the last build left them keeps
/// the outputs and reads no cache entry (every entry is damaged here, and nothing notices), and
/// prints cargo the same lines again. Each kind of real change still builds: a kernel's text, an
/// output gone, a variable that changes the outputs. A one-file edit reads no other file's entry
/// either: the others come from the build's own copies under `OUT_DIR`.
#[test]
fn a_touched_input_keeps_the_outputs_and_reads_no_entry() {
    let tc = toolchain_root();
    let dir = crate_copy("kept");
    let cache = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cold = build(cargo_build(d, cache.path(), &tc));
    assert!(!cold.stats.kept, "{:?}", cold.stats);
    let outputs = snapshot(&cold.launch_dir());
    let printed = directives(&cold.out_dir);
    assert!(printed.iter().any(|l| l.ends_with("include/only_b.cuh")), "{printed:?}");
    for e in entries(cache.path()) {
        let mut bytes = fs::read(&e).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        fs::write(&e, bytes).unwrap();
    }

    for f in ["kernels/a.cu", "kernels/b.cu", "include/common.cuh"] {
        touch(&d.join(f));
    }
    let mut cmd = cargo_build(d, cache.path(), &tc);
    cmd.env("LAUNCH_BUILD_DEBUG", "1").env("LAUNCH_COMPILE_TIMEOUT", "600");
    let kept = build(cmd);
    assert!(kept.stats.kept, "{:?}", kept.stats);
    assert_eq!((kept.stats.compiled, kept.stats.cached, kept.stats.corrupt), (0, 6, 0), "{:?}", kept.stats);
    assert!(kept.stats.script_ms > 0.0 && kept.stats.script_ms < cold.stats.script_ms, "{:?}", kept.stats);
    assert_eq!(snapshot(&kept.launch_dir()), outputs);
    assert_eq!(directives(&kept.out_dir), printed, "the rerun printed other lines than the build it kept");

    // A kernel edited: its jobs compile; the others come from the copies, their damaged cache
    // entries unread (before the copies they were read, found damaged and compiled: 6 and 4).
    append(&d.join("kernels/a.cu"), "// edited\n");
    let edited = build(cargo_build(d, cache.path(), &tc));
    assert!(!edited.stats.kept);
    assert_eq!(edited.compiled(), jobs(&["a"], &["sm_80", "sm_90"]), "{:?}", edited.stats);
    assert_eq!((edited.stats.cached, edited.stats.corrupt), (4, 0), "{:?}", edited.stats);
    // Without the copies (a new target folder) the damage is found and compiled away.
    append(&d.join("kernels/a.cu"), "// edited again\n");
    crate::support::forget_copies(&edited.out_dir);
    let healed = build(cargo_build(d, cache.path(), &tc));
    assert_eq!((healed.stats.compiled, healed.stats.corrupt), (6, 4), "{:?}", healed.stats);

    // An output removed or changed: the build writes it again.
    let cubin = edited.launch_dir().join("cubin/kernels+b.cu.sm_80.cubin");
    let bytes = fs::read(&cubin).unwrap();
    fs::remove_file(&cubin).unwrap();
    touch(&d.join("kernels/b.cu"));
    let restored = build(cargo_build(d, cache.path(), &tc));
    assert!(!restored.stats.kept, "{:?}", restored.stats);
    assert_eq!(fs::read(&cubin).unwrap(), bytes);
    fs::write(&cubin, b"not a cubin").unwrap();
    touch(&d.join("kernels/b.cu"));
    assert!(!build(cargo_build(d, cache.path(), &tc)).stats.kept);
    assert_eq!(fs::read(&cubin).unwrap(), bytes);

    // A variable that changes the outputs.
    let mut cmd = cargo_build(d, cache.path(), &tc);
    cmd.env("LAUNCH_ALL_PTX", "1");
    let all_ptx = build(cmd);
    assert!(!all_ptx.stats.kept, "{:?}", all_ptx.stats);
    assert!(all_ptx.launch_dir().join("ptx-all").is_dir());
}

#[test]
fn a_toolchain_change_recompiles_everything() {
    let tc = toolchain_root();
    let dir = crate_copy("toolchain");
    let cache = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let log = tools.path().join("ptxas.log");
    let all = jobs(&["a", "b", "c"], &["sm_80", "sm_90"]);

    assert_eq!(build(cargo_build(dir.path(), cache.path(), &tc)).compiled(), all);

    // Another ptxas binary (same version text): its identity is in the key.
    let fake = fake_toolchain(tools.path(), "12.9.86", "0", &log);
    assert_eq!(build(cargo_build(dir.path(), cache.path(), &fake)).compiled(), all, "another ptxas");
    touch(&dir.path().join("kernels/a.cu"));
    assert_eq!(build(cargo_build(dir.path(), cache.path(), &fake)).compiled(), BTreeSet::new(), "same fake");

    // The same ptxas reporting another version.
    fake_toolchain(tools.path(), "12.9.99", "0", &log);
    let newer = build(cargo_build(dir.path(), cache.path(), &fake));
    assert_eq!(newer.compiled(), all, "another ptxas version");
    let manifest = fs::read_to_string(newer.launch_dir().join("manifest.json")).unwrap();
    assert!(manifest.contains("\"ptxas\": \"12.9.99\""), "{manifest}");

    // The pinned toolchain's entries are still there.
    touch(&dir.path().join("kernels/a.cu"));
    assert_eq!(build(cargo_build(dir.path(), cache.path(), &tc)).compiled(), BTreeSet::new(), "back to the pinned one");
}

#[test]
fn j1_runs_one_compile_at_a_time_and_j2_runs_two() {
    toolchain_root();
    let dir = crate_copy("jobs");
    let cache = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let log = tools.path().join("ptxas.log");
    let fake = fake_toolchain(tools.path(), "12.9.86", "0.3", &log);

    let mut cmd = cargo_build(dir.path(), cache.path(), &fake);
    cmd.args(["-j", "1"]).env("LAUNCH_NO_CACHE", "1");
    let one = build(cmd);
    let iv = intervals(&log);
    assert_eq!(iv.len(), 6, "{iv:?}");
    assert!(!overlaps(&iv), "-j1 ran two ptxas at once: {iv:?}");
    assert_eq!(one.stats.max_parallel, 1, "{:?}", one.stats);
    assert_eq!(one.stats.tokens, "cargo jobserver");
    assert_eq!(one.stats.cache_dir, None);
    assert!(entries(cache.path()).is_empty(), "LAUNCH_NO_CACHE wrote to the cache");

    fs::remove_file(&log).unwrap();
    touch(&dir.path().join("kernels/a.cu"));
    forget_record(&one.out_dir);
    let mut cmd = cargo_build(dir.path(), cache.path(), &fake);
    cmd.args(["-j", "2"]).env("LAUNCH_NO_CACHE", "1");
    let two = build(cmd);
    let iv = intervals(&log);
    assert_eq!(iv.len(), 6, "{iv:?}");
    assert_eq!(two.stats.max_parallel, 2, "{:?}", two.stats);
    assert!(overlaps(&iv), "-j2 never ran two ptxas at once: {iv:?}");
}

#[test]
fn a_damaged_cache_entry_is_compiled_again_never_loaded() {
    let tc = toolchain_root();
    let dir = crate_copy("damaged");
    let cache = tempfile::tempdir().unwrap();
    let cold = build(cargo_build(dir.path(), cache.path(), &tc));
    let outputs = snapshot(&cold.launch_dir());

    let e = entries(cache.path());
    assert_eq!(e.len(), 6);
    // One cut short (a killed build or a full disk), one with a flipped byte.
    let len = fs::metadata(&e[0]).unwrap().len();
    fs::File::options().write(true).open(&e[0]).unwrap().set_len(len / 2).unwrap();
    let mut bytes = fs::read(&e[3]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    fs::write(&e[3], bytes).unwrap();

    for f in ["kernels/a.cu", "kernels/b.cu", "kernels/c.cu"] {
        touch(&dir.path().join(f));
    }
    forget_record(&cold.out_dir);
    let rebuilt = build(cargo_build(dir.path(), cache.path(), &tc));
    assert_eq!((rebuilt.stats.corrupt, rebuilt.stats.compiled, rebuilt.stats.cached), (2, 2, 4));
    assert_eq!(snapshot(&rebuilt.launch_dir()), outputs);

    touch(&dir.path().join("kernels/a.cu"));
    forget_record(&rebuilt.out_dir);
    let healed = build(cargo_build(dir.path(), cache.path(), &tc));
    assert_eq!((healed.stats.corrupt, healed.stats.compiled), (0, 0), "{:?}", healed.stats);
}

#[test]
fn a_folder_in_an_entrys_place_is_replaced_once_not_compiled_on_every_build() {
    let tc = toolchain_root();
    let dir = crate_copy("folder");
    let cache = tempfile::tempdir().unwrap();
    let first = build(cargo_build(dir.path(), cache.path(), &tc));
    let e = entries(cache.path());
    assert_eq!(e.len(), 6);
    fs::remove_file(&e[0]).unwrap();
    fs::create_dir_all(e[0].join("planted")).unwrap();
    fs::write(e[0].join("planted/file"), "x").unwrap();

    touch(&dir.path().join("kernels/a.cu"));
    forget_record(&first.out_dir);
    let replaced = build(cargo_build(dir.path(), cache.path(), &tc));
    assert_eq!((replaced.stats.corrupt, replaced.stats.compiled), (1, 1), "{:?}", replaced.stats);
    assert!(fs::symlink_metadata(&e[0]).unwrap().is_file(), "the folder was not replaced by an entry");

    // Before the fix the folder stayed, and this build compiled that job again.
    touch(&dir.path().join("kernels/a.cu"));
    forget_record(&replaced.out_dir);
    let again = build(cargo_build(dir.path(), cache.path(), &tc));
    assert_eq!((again.stats.corrupt, again.stats.compiled, again.stats.cached), (0, 0, 6), "{:?}", again.stats);
}

#[test]
fn a_build_killed_mid_compile_is_followed_by_a_good_build() {
    toolchain_root();
    let dir = crate_copy("killed");
    let cache = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let log = tools.path().join("ptxas.log");
    let fake = fake_toolchain(tools.path(), "12.9.86", "0.4", &log);

    let mut cmd = cargo_build(dir.path(), cache.path(), &fake);
    cmd.args(["-j", "1"]).stdout(Stdio::null()).stderr(Stdio::null());
    let mut cargo = cmd.spawn().unwrap();
    // Two jobs finished (and stored), the third is in ptxas: kill the build script.
    let started = Instant::now();
    let script_pid = loop {
        let text = fs::read_to_string(&log).unwrap_or_default();
        let starts: Vec<&str> = text.lines().filter(|l| l.starts_with("start")).collect();
        if starts.len() >= 3 {
            break starts[2].split_whitespace().nth(2).unwrap().to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(120), "the build never reached its third job:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let (code, _, stderr) = run(Command::new("kill").args(["-KILL", &script_pid]));
    assert_eq!(code, 0, "{stderr}");
    assert!(!cargo.wait().unwrap().success(), "the build whose script was killed must fail");

    let good = build(cargo_build(dir.path(), cache.path(), &fake));
    let cached = good.stats.cached;
    assert!(cached >= 2, "the jobs that finished before the kill are in the cache: {:?}", good.stats);
    assert_eq!(good.stats.compiled, 6 - cached);
    assert_eq!(good.stats.corrupt, 0);
    assert_eq!(entries(cache.path()).len(), 6);
}

#[test]
fn two_build_scripts_at_once_share_one_cache() {
    let tc = toolchain_root();
    let seed = crate_copy("race");
    let seed_cache = tempfile::tempdir().unwrap();
    let reference = build(cargo_build(seed.path(), seed_cache.path(), &tc));
    let outputs = snapshot(&reference.launch_dir());

    // Two crates (copies in two folders), two build-script processes started together, one
    // shared and empty cache; a slow ptxas widens the window in which both write the same keys.
    let cache = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let log = tools.path().join("ptxas.log");
    let fake = fake_toolchain(tools.path(), "12.9.86", "0.2", &log);
    let crates = [crate_copy("race"), crate_copy("race")];
    let outs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let script = |i: usize| {
        let mut cmd = Command::new(&reference.build_script);
        for v in SCRUBBED.iter() {
            cmd.env_remove(v);
        }
        cmd.current_dir(crates[i].path())
            .env("CARGO_MANIFEST_DIR", crates[i].path())
            .env("OUT_DIR", outs[i].path())
            .env("NUM_JOBS", "2")
            .env("LAUNCH_CACHE_DIR", cache.path())
            .env("LAUNCH_TOOLCHAIN", &fake)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    };
    let children: Vec<_> = (0..2).map(|i| script(i).spawn().unwrap()).collect();
    let mut compiled = 0;
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "build script {i} failed:\n{}", String::from_utf8_lossy(&out.stderr));
        let stats = read_stats(outs[i].path());
        compiled += stats.compiled;
        // The fake ptxas is another binary, but the kernels are the same: same outputs.
        let fake_manifest = |s: Vec<(String, Vec<u8>)>| -> Vec<(String, Vec<u8>)> {
            s.into_iter().filter(|(p, _)| p != "manifest.json").collect()
        };
        assert_eq!(fake_manifest(snapshot(&outs[i].path().join("launch"))), fake_manifest(outputs.clone()));
    }
    assert!(compiled >= 6, "between them the two scripts compiled every job");
    let iv = intervals(&log);
    let pids: BTreeSet<String> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect();
    assert_eq!(pids.len(), 2, "both scripts compiled: {iv:?}");

    // Every entry is whole, none is left half-written, and both crates now build from it alone.
    let e = entries(cache.path());
    assert_eq!(e.len(), 6, "{e:?}");
    assert!(e.iter().all(|p| !p.file_name().unwrap().to_string_lossy().ends_with(".tmp")), "{e:?}");
    for (i, o) in outs.iter().enumerate() {
        let out = script(i).output().unwrap();
        assert!(out.status.success());
        let stats = read_stats(o.path());
        assert_eq!((stats.cached, stats.corrupt), (6, 0), "{stats:?}");
    }
}

#[test]
fn outputs_do_not_depend_on_the_checkout_folder() {
    let tc = toolchain_root();
    let (one, two, three) = (crate_copy("folders"), crate_copy("folders"), crate_copy("folders"));
    let (cache_one, cache_two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());

    // Compiled separately in two folders: byte-identical generated code, manifest, PTX and cubins.
    // (Copies with one package name share an OUT_DIR, so each is read right after its build.)
    let a = build(cargo_build(one.path(), cache_one.path(), &tc));
    let sa = snapshot(&a.launch_dir());
    crate::support::forget_copies(&a.out_dir);
    let b = build(cargo_build(two.path(), cache_two.path(), &tc));
    let sb = snapshot(&b.launch_dir());
    assert_eq!((a.stats.compiled, b.stats.compiled), (6, 6));
    assert!(sa.iter().any(|(p, _)| p.starts_with("cubin/")), "{:?}", sa.iter().map(|x| &x.0).collect::<Vec<_>>());
    assert_eq!(sa, sb);
    // Keys do not depend on the folder either: a third checkout compiles nothing.
    let c = build(cargo_build(three.path(), cache_one.path(), &tc));
    assert_eq!((c.stats.compiled, c.stats.cached), (0, 6), "{:?}", c.stats);
    assert_eq!(snapshot(&c.launch_dir()), sa);

    // Nor on where or when the toolchain was installed: a copy at another path, its files
    // written now (other modification times), gives the same keys: a fourth checkout built with
    // it compiles nothing. (Tools are keyed by the SHA-256 of their bytes.)
    let copy = tempfile::tempdir().unwrap();
    let other = copy.path().join("elsewhere/cuda");
    crate::support::copy_dir(&tc, &other);
    let (ptxas, copied) = (tc.join("nvidia/cuda_nvcc/bin/ptxas"), other.join("nvidia/cuda_nvcc/bin/ptxas"));
    let mtime = |p: &Path| fs::metadata(p).unwrap().modified().unwrap();
    assert_ne!(mtime(&ptxas), mtime(&copied));
    let four = crate_copy("folders");
    let d = build(cargo_build(four.path(), cache_one.path(), &other));
    assert_eq!((d.stats.compiled, d.stats.cached), (0, 6), "{:?}", d.stats);
    // The same code; only what names the toolchain's place may differ (the manifest says which
    // toolchain built it).
    let sd = snapshot(&d.launch_dir());
    let differ: Vec<&str> = sd.iter().zip(&sa).filter(|(x, y)| x != y).map(|(x, _)| x.0.as_str()).collect();
    assert_eq!(sd.iter().map(|x| &x.0).collect::<Vec<_>>(), sa.iter().map(|x| &x.0).collect::<Vec<_>>());
    assert!(differ.iter().all(|f| *f == "manifest.json"), "{differ:?}");
}

/// `from` recreated at `to` with every file hard-linked (identical bytes, as two installs of one
/// pinned toolchain are, or a cache folder a CI step restores) and every symbolic link as it was.
fn link_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (path, target) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&path).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            link_tree(&path, &target);
        } else {
            fs::hard_link(&path, &target).unwrap();
        }
    }
}

/// Issue 32, class 3, end to end: `LAUNCH_CACHE_DIR` inside the crate's folder (as CI recipes that
/// cache a workspace folder have it) holding the pinned toolchain, which the build finds there.
/// A second builder with its own cache folder in the crate (`cache2`: the same toolchain
/// installed again, hard links, and the kernel entries the first one stored), then the crate
/// moved to another path with its cache folder: both build everything from the cache. Before
/// the fix the toolchain's headers and include folders were keyed as crate files
/// (`$CRATE/cache/toolchain/...`), so each compiled all 6 jobs again.
#[test]
fn a_toolchain_in_a_cache_folder_inside_the_crate_is_keyed_by_content_not_place() {
    let tc = toolchain_root();
    let name = tc.file_name().unwrap();
    let dir = crate_copy("toolchain-inside");
    let build_with = |crate_dir: &Path, cache: &Path| {
        let mut cmd = cargo_build(crate_dir, cache, &tc);
        // Found in the cache folder, as `cargo launch setup` would have installed it there.
        cmd.env_remove("LAUNCH_TOOLCHAIN");
        build(cmd)
    };
    let (cache, cache2) = (dir.path().join("cache"), dir.path().join("cache2"));
    link_tree(&tc, &cache.join("toolchain").join(name));
    let cold = build_with(dir.path(), &cache);
    assert_eq!((cold.stats.compiled, cold.stats.cached), (6, 0), "{:?}", cold.stats);
    let manifest = fs::read_to_string(cold.launch_dir().join("manifest.json")).unwrap();
    assert!(manifest.contains("/cache/toolchain/"), "the build used the toolchain in the crate:\n{manifest}");

    link_tree(&tc, &cache2.join("toolchain").join(name));
    link_tree(&cache.join("kernels"), &cache2.join("kernels"));
    let second = build_with(dir.path(), &cache2);
    let moved = tempfile::tempdir().unwrap();
    let moved_crate = moved.path().join("other/path/crate");
    link_tree(dir.path(), &moved_crate);
    let third = build_with(&moved_crate, &moved_crate.join("cache"));
    let outcomes = [("a second install in cache2", &second), ("the crate at another path", &third)];
    let missed: Vec<String> = outcomes
        .iter()
        .filter(|(_, b)| (b.stats.compiled, b.stats.cached) != (0, 6))
        .map(|(what, b)| format!("{what}: {} compiled, {} from the cache", b.stats.compiled, b.stats.cached))
        .collect();
    assert!(
        missed.is_empty(),
        "{} of {} builders missed the cache:\n{}",
        missed.len(),
        outcomes.len(),
        missed.join("\n")
    );
}
