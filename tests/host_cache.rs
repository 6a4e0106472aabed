//! Issue 25 item 1: a `host` file is compiled once, by one nvcc run for all its arches, and that
//! run gives both the object the crate links and the cubins and `ptxas -v` lines the report
//! reads; the run is a cached job like NVRTC's. Pinned on the `host_launcher` fixture (one host
//! file, one device file, sm_80 and sm_90) through real `cargo build`s and their
//! `build-stats.json`. Needs the 13.0 toolchain and a host C++ compiler (skips, saying why).

use std::path::{Path, PathBuf};

use launch_schema::stats::BuildStats;
use serde_json::Value;

use crate::host_files::{host_launcher, toolchain_13_and_cxx};
use crate::support::{cargo_build, run};

/// One build's `OUT_DIR` and statistics.
struct Built {
    out_dir: PathBuf,
    stats: BuildStats,
}

/// `cargo build` of the fixture at `dir` with `env` set; its build script's `OUT_DIR` and stats.
fn build(dir: &Path, cache: &Path, toolchain: &Path, env: &[(&str, &str)]) -> Built {
    build_with(dir, cache, toolchain, env, &[])
}

/// [`build`] with more arguments for `cargo build` (`-j1`).
fn build_with(dir: &Path, cache: &Path, toolchain: &Path, env: &[(&str, &str)], args: &[&str]) -> Built {
    let mut cmd = cargo_build(dir, cache, toolchain);
    cmd.arg("--message-format=json").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (code, stdout, stderr) = run(&mut cmd);
    assert_eq!(code, 0, "cargo build failed:\n{stderr}");
    let out_dir = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "build-script-executed")
        .filter(|m| m["package_id"].as_str().is_some_and(|p| p.contains("fixture-host-launcher")))
        .find_map(|m| m["out_dir"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("no build-script-executed message:\n{stdout}"));
    let path = out_dir.join("launch/build-stats.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let stats = BuildStats::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Built { out_dir, stats }
}

/// The lines the build script printed to cargo, as a set: warnings left out, and the two
/// switches of `cc` itself (`CC_FORCE_DISABLE`, `CC_ENABLE_DEBUG_OUTPUT`), which `cc` announces
/// when it archives and a kept build does not archive.
fn directives(out_dir: &Path) -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string(out_dir.parent().expect("OUT_DIR's folder").join("output")).expect("output");
    let ours = |l: &&str| l.starts_with("cargo:") && !l.starts_with("cargo:warning=");
    let cc_switch = |l: &&str| l.starts_with("cargo:rerun-if-env-changed=CC_");
    text.lines().filter(ours).filter(|l| !cc_switch(l)).map(str::to_string).collect()
}

/// `(file, from)` of every host compile of a build, e.g. `("kernels/saxpy.cu", "cache")`.
fn host_jobs(b: &Built) -> Vec<(String, String)> {
    b.stats.host_jobs.iter().map(|j| (j.file.clone(), j.from.clone())).collect()
}

/// The device files whose jobs compiled in a build.
fn device_compiled(b: &Built) -> Vec<String> {
    let mut files: Vec<String> = b.stats.compiled_jobs.iter().map(|j| j.file.clone()).collect();
    files.dedup();
    files
}

/// The crate's static library in `OUT_DIR` (named after the package, which the fixture copy renames).
fn library_path(b: &Built) -> PathBuf {
    let found = std::fs::read_dir(&b.out_dir).expect("OUT_DIR").filter_map(Result::ok).map(|e| e.path()).find(|p| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("liblaunch_host_") && n.ends_with(".a"))
    });
    found.unwrap_or_else(|| panic!("no liblaunch_host_*.a in {}", b.out_dir.display()))
}

fn append(path: &Path, text: &str) {
    let mut s = std::fs::read_to_string(path).expect("read");
    s.push_str(text);
    std::fs::write(path, s).expect("write");
}

/// Cold: one nvcc run for saxpy.cu's two arches, its time in `nvcc_ms` (not `nvrtc_ms`), and
/// every cubin the crate embeds for it is byte for byte in the linked static library. Then a
/// rerun after an environment change keeps the outputs and still links; an edit of the device file compiles that
/// file only; an edit of the host file compiles the host file only.
#[test]
fn a_host_file_compiles_once_for_all_arches_and_is_cached_like_any_job() {
    let Some(toolchain) = toolchain_13_and_cxx() else { return };
    let dir = host_launcher(|t| t);
    let cache = tempfile::tempdir().expect("temp dir");
    let saxpy = || ("kernels/saxpy.cu".to_string(), "compiled".to_string());
    let cached = || ("kernels/saxpy.cu".to_string(), "cache".to_string());

    let cold = build(dir.path(), cache.path(), &toolchain, &[]);
    assert_eq!(host_jobs(&cold), vec![saxpy()], "{:?}", cold.stats);
    let arches: Vec<String> = cold.stats.host_jobs[0].arches.iter().map(|a| a.to_string()).collect();
    assert_eq!(arches, ["sm_80", "sm_90"]);
    assert!(cold.stats.nvcc_ms > 0.0 && cold.stats.host_jobs[0].nvcc_ms > 0.0, "{:?}", cold.stats);
    assert_eq!((cold.stats.jobs, cold.stats.compiled), (4, 4), "{:?}", cold.stats);
    assert_eq!(device_compiled(&cold), ["kernels/scale.cu"], "{:?}", cold.stats);
    let library = std::fs::read(library_path(&cold)).expect("the library");
    let mut embedded = 0;
    for entry in std::fs::read_dir(cold.out_dir.join("launch/cubin")).expect("cubin folder") {
        let path = entry.expect("entry").path();
        if !path.to_string_lossy().contains("saxpy") {
            continue;
        }
        let cubin = std::fs::read(&path).expect("cubin");
        let linked = library.windows(cubin.len()).any(|w| w == cubin.as_slice());
        assert!(linked, "{} is not in the linked library: the report would not be the linked code", path.display());
        embedded += 1;
    }
    assert_eq!(embedded, 2, "one cubin per arch of saxpy.cu");

    // The build script reruns for a variable that changes no output: the outputs are kept
    // (nothing read from the cache, nothing archived again), and the program still links, since
    // the link lines are printed again.
    let printed = directives(&cold.out_dir);
    assert!(printed.iter().any(|l| l.starts_with("cargo:rustc-link-lib=static=launch_host_")), "{printed:?}");
    let rerun = build(dir.path(), cache.path(), &toolchain, &[("LAUNCH_BUILD_DEBUG", "1")]);
    assert_eq!(directives(&rerun.out_dir), printed, "the kept build printed other lines");
    let kept = ("kernels/saxpy.cu".to_string(), "kept".to_string());
    assert!(rerun.stats.kept, "{:?}", rerun.stats);
    assert_eq!(host_jobs(&rerun), vec![kept], "{:?}", rerun.stats);
    assert_eq!((rerun.stats.compiled, rerun.stats.nvcc_ms), (0, 0.0), "{:?}", rerun.stats);
    let again = std::fs::read(library_path(&rerun)).expect("the library");
    assert_eq!(again, library, "the library kept as it was");

    append(&dir.path().join("kernels/scale.cu"), "\n// an edit of the device file\n");
    let device_edit = build(dir.path(), cache.path(), &toolchain, &[]);
    assert_eq!(host_jobs(&device_edit), vec![cached()], "{:?}", device_edit.stats);
    assert_eq!(device_compiled(&device_edit), ["kernels/scale.cu"], "{:?}", device_edit.stats);

    append(&dir.path().join("kernels/saxpy.cu"), "\n// an edit of the host file\n");
    let host_edit = build(dir.path(), cache.path(), &toolchain, &[]);
    assert_eq!(host_jobs(&host_edit), vec![saxpy()], "{:?}", host_edit.stats);
    assert!(device_compiled(&host_edit).is_empty(), "{:?}", host_edit.stats);
    assert_eq!(host_edit.stats.compiled, 2, "the host file's two arches, one run");
}

/// Issue 25 item 3: CUB names its kernels after every arch of the compile that instantiates them
/// (`cub::CUB_300001_SM_800_900::...`). The one nvcc run per host file gives the report the names
/// the linked program has: each kernel once, with both arches (a per-arch compile named them
/// `..._SM_800` and `..._SM_900`, each "not compiled for" the other arch).
#[test]
fn cub_kernels_are_listed_once_with_all_arches_under_the_linked_names() {
    if toolchain_13_and_cxx().is_none() {
        return;
    }
    let dir = crate::host_files::buildable_fixture("host_cub", |t| t);
    let (code, stdout, stderr) = run(crate::support::cargo_launch()
        .args(["launch", "report", "--no-setup", "--format", "json", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    assert_eq!(code, 0, "report failed:\n{stderr}");
    let doc = crate::support::exact(&stdout, launch_schema::report::Document::from_json);
    let mut arches: std::collections::BTreeMap<&str, Vec<String>> = std::collections::BTreeMap::new();
    for r in &doc.records {
        arches.entry(r.kernel.name.as_str()).or_default().push(r.arch.to_string());
    }
    let cub: Vec<&&str> = arches.keys().filter(|n| n.contains("CUB_")).collect();
    assert!(cub.len() >= 2, "CUB's reduction kernels are reported: {:?}", arches.keys());
    for name in &cub {
        assert!(name.contains("_SM_800_900"), "{name}: named after both arches of the compile");
    }
    for (name, a) in &arches {
        assert_eq!(a, &["sm_80", "sm_90"], "{name}: listed once, with both arches");
    }
}

/// Issue 32, class 12: a host file that is the build's last job to start compiles its arches side
/// by side with the job slots cargo has free (`nvcc --threads`), and the bytes are the ones a
/// one-slot build makes: the same library, the same cubins, the same ptxas reports, and the same
/// cache key (a `-j1` build after a `-j2` one compiles nothing).
#[test]
fn a_lone_host_file_compiles_its_arches_side_by_side_with_the_same_bytes() {
    let Some(toolchain) = toolchain_13_and_cxx() else { return };
    let (one, two) = (host_launcher(|t| t), host_launcher(|t| t));
    let mut built = Vec::new();
    for (dir, jobs) in [(&one, "-j1"), (&two, "-j2")] {
        // The host file alone: nothing else to give the second slot to.
        std::fs::remove_file(dir.path().join("kernels/scale.cu")).expect("remove the device file");
        let cache = tempfile::tempdir().expect("temp dir");
        // The crate's dependency first, so that cargo has nothing to run beside the build script.
        let (code, _, stderr) = run(cargo_build(dir.path(), cache.path(), &toolchain).args(["-p", "launch", jobs]));
        assert_eq!(code, 0, "{stderr}");
        let b = build_with(dir.path(), cache.path(), &toolchain, &[], &[jobs]);
        assert_eq!(host_jobs(&b), vec![("kernels/saxpy.cu".to_string(), "compiled".to_string())], "{:?}", b.stats);
        built.push((b, cache));
    }
    let threads: Vec<usize> = built.iter().map(|(b, _)| b.stats.host_jobs[0].nvcc_threads).collect();
    assert_eq!(threads, [1, 2], "{:?}", built.iter().map(|(b, _)| &b.stats).collect::<Vec<_>>());
    let library = |b: &Built| std::fs::read(library_path(b)).expect("the library");
    assert!(library(&built[0].0) == library(&built[1].0), "the side-by-side compile linked other bytes");
    let cubins = |b: &Built| {
        let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(b.out_dir.join("launch/cubin"))
            .expect("cubin folder")
            .map(|e| e.expect("entry").path())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).expect("cubin")))
            .collect();
        all.sort();
        all
    };
    assert_eq!(cubins(&built[0].0), cubins(&built[1].0));
    let resources = |b: &Built| {
        let text = std::fs::read_to_string(b.out_dir.join("launch/manifest.json")).expect("manifest");
        let m: Value = serde_json::from_str(&text).expect("manifest json");
        m["kernels"].as_array().expect("kernels").iter().map(|k| k["arches"].to_string()).collect::<Vec<_>>()
    };
    assert_eq!(resources(&built[0].0), resources(&built[1].0), "the reports differ");
    // Keyed alike: the one-slot build's cache serves the side-by-side build's crate.
    let (_, cache_one) = &built[0];
    let again = build_with(two.path(), cache_one.path(), &toolchain, &[], &["-j2"]);
    assert_eq!(host_jobs(&again), vec![("kernels/saxpy.cu".to_string(), "cache".to_string())], "{:?}", again.stats);
}
