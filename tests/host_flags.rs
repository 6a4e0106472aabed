//! nvcc's own options in `flags` reach `host` files (compiled by nvcc): a host file that needs
//! `--expt-extended-lambda` (from its file table) builds, with `--default-stream per-thread` and
//! `-Xcompiler` reaching nvcc and the host compiler; an NVRTC file of the same crate leaves those
//! host-side options out. The builds need the 13.0 toolchain and a host C++ compiler (skipped,
//! saying why, without them); the refusals need the default toolchain only.

use crate::host_files::toolchain_13_and_cxx;
use crate::support::{cargo_build, cargo_launch, root, run, toolchain_root, with_metadata};

/// The `host_flags` fixture in a temp dir, ready to build; `edit` applied to its Cargo.toml.
fn host_flags(edit: impl Fn(String) -> String) -> tempfile::TempDir {
    crate::host_files::buildable_fixture("host_flags", edit)
}

/// `cargo build` of `dir`: the files whose jobs compiled (not from the cache), from the build's
/// `build-stats.json`.
fn built_jobs(dir: &std::path::Path, cache: &std::path::Path, toolchain: &std::path::Path) -> Vec<String> {
    let (code, stdout, stderr) =
        run(cargo_build(dir, cache, toolchain).arg("--message-format=json-render-diagnostics"));
    assert_eq!(code, 0, "cargo build failed:\n{stderr}");
    let out_dir = (stdout.lines())
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "build-script-executed")
        .filter(|m| m["package_id"].as_str().is_some_and(|p| p.contains("fixture-host-flags")))
        .find_map(|m| m["out_dir"].as_str().map(std::path::PathBuf::from))
        .unwrap_or_else(|| panic!("no build-script-executed message:\n{stdout}"));
    let text = std::fs::read_to_string(out_dir.join("launch/build-stats.json")).expect("build-stats.json");
    let stats = launch_schema::stats::BuildStats::from_json(&text).expect("build statistics");
    // Device files' jobs, and host files compiled by nvcc (one run for all arches).
    let host = stats.host_jobs.iter().filter(|j| j.from == "compiled").map(|j| j.file.clone());
    let files: std::collections::BTreeSet<String> =
        stats.compiled_jobs.iter().map(|j| j.file.clone()).chain(host).collect();
    files.into_iter().collect()
}

fn report(manifest: &std::path::Path) -> (i32, String, String) {
    run(cargo_launch().args(["launch", "report", "--no-setup", "--manifest-path"]).arg(manifest))
}

/// The host file compiles only with `--expt-extended-lambda` (its `__device__` lambda) and, on
/// its host side, only when `--default-stream per-thread` and `-Xcompiler=-D...` reached nvcc
/// (its `#error`s): report and `cargo build` succeed, the program runs or says the runtime's
/// error. Without the table's `--expt-extended-lambda`, nvcc refuses the lambda.
#[test]
fn nvcc_options_reach_host_files_and_the_crate_builds() {
    let Some(toolchain) = toolchain_13_and_cxx() else { return };
    let dir = host_flags(|t| t);
    let manifest = dir.path().join("Cargo.toml");
    let (code, text, stderr) = report(&manifest);
    assert_eq!(code, 0, "report failed:\n{stderr}");
    assert!(text.contains("host file kernels/launch/apply.cu: nvcc 13.0.88"), "{text}");
    assert!(text.contains("void apply<apply_launch::{lambda(float)#1}>"), "{text}");
    assert!(text.contains("\nscale  sm_80"), "the NVRTC file, with the crate's host-side options:\n{text}");

    let cache = tempfile::tempdir().expect("temp dir");
    let compiled = built_jobs(dir.path(), cache.path(), &toolchain);
    assert_eq!(compiled, ["kernels/launch/apply.cu", "kernels/scale.cu"]);
    let (code, stdout, stderr) = run(&mut std::process::Command::new(root().join("target/fixtures/debug/host-flags")));
    match code {
        0 => assert!(stdout.contains(" 0 wrong") && stdout.ends_with("ok\n"), "{stdout}"),
        // No GPU or driver here: the runtime's error, said, and a clean exit.
        1 => assert!(stderr.starts_with("apply_launch failed: CUDA error "), "{stderr}"),
        _ => panic!("the program crashed or failed ({code}):\n{stdout}\n{stderr}"),
    }

    // nvcc's options are in the host file's cache key, and in no NVRTC file's.
    let edited = std::fs::read_to_string(&manifest).unwrap().replace("\"-fPIC\"]", "\"-fPIC,-Wall\"]");
    std::fs::write(&manifest, edited).unwrap();
    assert_eq!(built_jobs(dir.path(), cache.path(), &toolchain), ["kernels/launch/apply.cu"]);

    // Before, the flag was dropped: nvcc refused the lambda (44 errors in mistral.rs's kernels).
    let dir = host_flags(|t| t.replace("\"--expt-extended-lambda\", ", ""));
    let (code, _, stderr) = report(&dir.path().join("Cargo.toml"));
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("kernels/launch/apply.cu"), "{stderr}");
    assert!(stderr.contains("requires --extended-lambda nvcc flag"), "{stderr}");
}

/// A crate of NVRTC files only: nvcc's host-side options have no effect and no error; `-arch` is
/// still refused with its reason; an nvcc option that would change device code and NVRTC lacks
/// is refused at the flag, naming the file.
#[test]
fn device_files_leave_host_side_options_out_and_arch_is_still_refused() {
    toolchain_root();
    let flags = "\"-Xcompiler\", \"-fPIC\", \"--default-stream\", \"per-thread\", \"--expt-extended-lambda\", \"-O3\", \"--verbose\"";
    let dir = with_metadata(&format!("arch = [\"sm_90\"]\nflags = [{flags}]"));
    let (code, text, stderr) = report(&dir.path().join("Cargo.toml"));
    assert_eq!(code, 0, "report failed:\n{stderr}");
    assert!(text.contains("kernels/k.cu"), "{text}");

    let dir = with_metadata("arch = [\"sm_90\"]\nflags = [\"-Xcompiler\", \"-fPIC\", \"-arch=sm_80\"]");
    let (code, _, stderr) = report(&dir.path().join("Cargo.toml"));
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("Cargo.toml:9:33: `package.metadata.launch.flags[2]`: `-arch=sm_80` is not allowed: launch-build sets the target architecture of every compile from `arch`"),
        "{stderr}"
    );

    let dir = with_metadata("arch = [\"sm_90\"]\nflags = [\"-Xcudafe\", \"--diag_suppress=177\"]");
    let (code, _, stderr) = report(&dir.path().join("Cargo.toml"));
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("Cargo.toml:9:10: `package.metadata.launch.flags[0]`: `-Xcudafe --diag_suppress=177` would reach kernels/k.cu, which NVRTC compiles: NVRTC has no separate front-end step"),
        "{stderr}"
    );
    assert!(stderr.contains("`host` files take it"), "{stderr}");
}
