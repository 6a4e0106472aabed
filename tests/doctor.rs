//! `cargo launch doctor` on cache folders of each test's own (`LAUNCH_CACHE_DIR`, system
//! locations off), holding a hard-linked copy of the installed 12.9 toolchain where one is needed:
//! a file is damaged or removed by replacing its link, never the installed file. The copies go
//! with their temporary folders.
#![cfg(unix)]

use std::fs;
use std::path::Path;

use launch_schema::doctor::Document;

use crate::support::{cargo_launch, exact, fixture, linked_copy, run, toolchain_root};

fn doctor(cache: &Path, extra: &[&str]) -> (i32, String, String) {
    run(cargo_launch()
        .current_dir(cache)
        .env("LAUNCH_CACHE_DIR", cache)
        .env("LAUNCH_NO_SYSTEM_TOOLCHAIN", "1")
        .args(["launch", "doctor"])
        .args(extra))
}

fn doctor_json(cache: &Path, extra: &[&str], code: i32) -> Document {
    let mut all = extra.to_vec();
    all.extend(["--format", "json"]);
    let (got, stdout, stderr) = doctor(cache, &all);
    assert_eq!(got, code, "{stdout}\n{stderr}");
    exact(&stdout, Document::from_json)
}

/// A cache folder with the 12.9 toolchain (a linked copy) in its place.
fn cache_with_toolchain() -> tempfile::TempDir {
    let cache = tempfile::tempdir().unwrap();
    let real = toolchain_root();
    linked_copy(&real, &cache.path().join("toolchain").join(real.file_name().unwrap()));
    cache
}

#[test]
fn no_toolchain_blocks_builds_and_exits_3_with_the_setup_command() {
    let cache = tempfile::tempdir().unwrap();
    let (code, stdout, _) = doctor(cache.path(), &[]);
    assert_eq!(code, 3, "{stdout}");
    assert!(stdout.contains("toolchain 12.9 (12.9.86): not installed"), "{stdout}");
    assert!(stdout.contains("  blocks builds: no CUDA 12.9 toolchain"), "{stdout}");
    assert!(stdout.contains("    fix: run `cargo launch setup --toolchain 12.9`\n"), "{stdout}");
    let doc = doctor_json(cache.path(), &[], 3);
    assert!(doc.blocking && !doc.healthy && !doc.toolchains[0].installed);
    // The 13.0 pin, which nothing asked for, is absent without being a problem.
    assert_eq!(doc.problems.len(), 1, "{:#?}", doc.problems);
}

#[test]
fn a_damaged_file_and_missing_nvrtc_builtins_are_named() {
    let cache = cache_with_toolchain();
    let root = cache.path().join("toolchain/cuda-12.9.86");
    let doc = doctor_json(cache.path(), &[], 0);
    let t = &doc.toolchains[0];
    assert!(doc.healthy, "{:#?}", doc.problems);
    assert!(t.installed && t.files_checked > 1000 && t.damaged.is_empty(), "{t:#?}");
    assert_eq!((t.nvrtc.as_deref(), t.ptxas.as_deref()), (Some("12.9"), Some("12.9.86")));
    assert!(t.cccl && t.nvdisasm.is_some(), "{t:#?}");

    // One byte of a header changed, same size: the hash names it.
    let header = root.join("nvidia/cuda_nvrtc/include/nvrtc.h");
    let mut bytes = fs::read(&header).unwrap();
    bytes[200] ^= 1;
    fs::remove_file(&header).unwrap();
    fs::write(&header, &bytes).unwrap();
    let doc = doctor_json(cache.path(), &[], 3);
    assert_eq!(doc.toolchains[0].damaged, ["nvidia/cuda_nvrtc/include/nvrtc.h: SHA-256 differs from the wheel's"]);
    let p = &doc.problems[0];
    assert!(p.blocking && p.what.contains("1 of "), "{p:#?}");
    assert_eq!(p.fix, format!("remove {} and run `cargo launch setup --toolchain 12.9`", root.display()));

    // NVRTC's builtins removed: NVRTC cannot compile, and the file is missing from the RECORD's.
    fs::remove_file(&header).unwrap();
    fs::write(&header, {
        bytes[200] ^= 1;
        &bytes
    })
    .unwrap();
    fs::remove_file(root.join("nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.9")).unwrap();
    // Found missing before NVRTC is loaded (issue 32, class 1): the toolchain is damaged, named.
    let (code, stdout, _) = doctor(cache.path(), &[]);
    assert_eq!(code, 3, "{stdout}");
    let builtins = root.join("nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.9");
    let line =
        format!("toolchain 12.9 (12.9.86): damaged ({}): {} is damaged (missing)", root.display(), builtins.display());
    assert!(stdout.contains(&line), "{stdout}");
    assert!(
        stdout.contains("    fix: run `cargo launch setup --toolchain 12.9`, which installs it again\n"),
        "{stdout}"
    );
}

#[test]
fn a_cache_that_is_not_writable_is_a_problem_that_does_not_block() {
    let cache = cache_with_toolchain();
    // A file where the kernel cache's folder should be (tests run as root: permissions would not do).
    fs::write(cache.path().join("kernels"), "not a folder").unwrap();
    let (code, stdout, _) = doctor(cache.path(), &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("writable NO"), "{stdout}");
    let kernels = cache.path().join("kernels");
    assert!(stdout.contains(&format!("  problem: the kernel cache {} is not writable", kernels.display())), "{stdout}");
    assert!(stdout.contains(&format!("fix: make {} a writable folder", kernels.display())), "{stdout}");
}

#[test]
fn a_crates_configuration_and_min_driver_are_read() {
    let cache = cache_with_toolchain();
    let krate = fixture("driver_newer_gpu");
    let manifest = krate.path().join("Cargo.toml");
    let doc = doctor_json(cache.path(), &["--manifest-path", manifest.to_str().unwrap()], 0);
    let k = doc.krate.unwrap();
    assert!(k.config_loads && k.package.unwrap().starts_with("fixture-driver-newer-gpu"));
    assert_eq!((k.toolchain.as_deref(), k.min_driver.as_deref()), (Some("12.9"), Some("12.4")));
    // No GPU here: no driver, and builds need none.
    assert_eq!(doc.driver, None);
    // A configuration that does not load is a problem naming the key.
    fs::write(&manifest, fs::read_to_string(&manifest).unwrap().replace("arch = [\"sm_80\"]", "arch = [\"sm_9O\"]"))
        .unwrap();
    let doc = doctor_json(cache.path(), &["--manifest-path", manifest.to_str().unwrap()], 1);
    assert!(!doc.krate.unwrap().config_loads);
    assert!(doc.problems[0].what.contains("sm_9O"), "{:#?}", doc.problems);
}

/// A crate with `host` files: doctor checks the host C++ compiler the build would use (CXX, else
/// c++) and nvcc in the crate's toolchain, as blocking problems located at the `host` entry;
/// with both there, no such problem.
#[test]
fn host_files_need_a_host_compiler_and_nvcc() {
    if crate::host_files::toolchain_13_and_cxx().is_none() {
        return;
    }
    let dir = crate::host_files::host_launcher(|t| t);
    let doctor_in = |dir: &Path, cxx: Option<&str>| {
        let mut cmd = cargo_launch();
        cmd.current_dir(dir).args(["launch", "doctor", "--format", "json"]);
        if let Some(c) = cxx {
            cmd.env("CXX", c);
        }
        let (code, stdout, stderr) = run(&mut cmd);
        (code, exact(&stdout, Document::from_json), stderr)
    };
    let about_host =
        |doc: &Document| doc.problems.iter().filter(|p| p.what.contains("`host` files")).cloned().collect::<Vec<_>>();
    let (_, doc, _) = doctor_in(dir.path(), None);
    assert!(about_host(&doc).is_empty(), "{:#?}", doc.problems);

    let (code, doc, stderr) = doctor_in(dir.path(), Some("/nonexistent/c++"));
    assert_eq!(code, 3, "{:#?}\n{stderr}", doc.problems);
    let host = about_host(&doc);
    assert_eq!(host.len(), 1, "{host:#?}");
    assert!(host[0].blocking && host[0].what.contains("Cargo.toml:13:9: `saxpy.cu`"), "{host:#?}");
    assert!(
        host[0].what.contains("need a host C++ compiler") && host[0].what.contains("`/nonexistent/c++` does not exist"),
        "{host:#?}"
    );
    assert_eq!(host[0].fix, "install g++ or clang++, or set CXX to one");

    // The default 12.9 line has no nvcc.
    let old = crate::host_files::host_launcher(|t| t.replace("toolchain = \"13.0\"\n", ""));
    let (code, doc, _) = doctor_in(old.path(), None);
    let host = about_host(&doc);
    if crate::support::toolchain_root().is_dir() {
        assert_eq!(code, 3, "{:#?}", doc.problems);
        assert_eq!(host.len(), 1, "{host:#?}");
        assert!(host[0].what.contains("are compiled with nvcc, and the CUDA 12.9 toolchain"), "{host:#?}");
        assert!(host[0].fix.contains("toolchain = \"13.0\""), "{host:#?}");
    }
}

/// Issue 32, class 8: a pinned install with one of its tools deleted is damaged, never "not
/// installed" (doctor) nor one "an earlier cargo-launch installed" (setup): each file × each
/// command, offline (setup says why it would install again, then stops).
#[test]
fn a_toolchain_with_a_tool_deleted_is_damaged_not_absent() {
    let files = ["nvidia/cuda_nvcc/bin/ptxas", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"];
    let mut wrong = Vec::new();
    let mut cases = 0;
    for file in files {
        let cache = cache_with_toolchain();
        let root = cache.path().join("toolchain").join(toolchain_root().file_name().unwrap());
        fs::remove_file(root.join(file)).unwrap();
        let name = Path::new(file).file_name().unwrap().to_string_lossy().into_owned();

        cases += 1;
        let (_, stdout, stderr) = doctor(cache.path(), &[]);
        let said = format!("{stdout}{stderr}");
        if said.contains("12.9 (12.9.86): not installed") || !said.contains("is damaged") || !said.contains(&name) {
            wrong.push(format!("doctor, {file} deleted:\n{said}"));
        }

        cases += 1;
        let (_, _, stderr) = run(cargo_launch()
            .current_dir(cache.path())
            .env("LAUNCH_CACHE_DIR", cache.path())
            .env("LAUNCH_NO_SYSTEM_TOOLCHAIN", "1")
            .env("CARGO_NET_OFFLINE", "true")
            .args(["launch", "setup"]));
        if stderr.contains("an earlier cargo-launch")
            || stderr.contains("not installed")
            || !stderr.contains("is damaged")
        {
            wrong.push(format!("setup, {file} deleted:\n{stderr}"));
        }
    }
    assert!(wrong.is_empty(), "{} of {cases} cases wrong:\n{}", wrong.len(), wrong.join("\n\n"));
}
