//! Issue 14 item 3: `host = [...]` files are compiled with CUDA 13's nvcc through `cc` into a
//! static library linked into the crate; their kernels are in `report` and `check` with the
//! numbers of that very compile; the Rust program calls their `extern "C"` launchers. Needs the
//! 13.0 toolchain and a host C++ compiler: the tests that build skip, saying why, without them
//! (`LAUNCH_TEST_REQUIRE_TOOLCHAINS=1` makes that a failure).

use std::path::{Path, PathBuf};

use launch_engine::tooling::toolchain::{on_path, pin, pin_dir};
use launch_engine::tooling::{var, Env};
use launch_schema::report::Document;

use crate::support::{cargo_build, cargo_launch, exact, fixture, root, run, toolchain_root};

/// The `host_launcher` fixture in a temp dir, its path dependencies made absolute, with this
/// repository's lock file (nothing resolved anew); `edit` applied to its Cargo.toml.
pub(crate) fn host_launcher(edit: impl Fn(String) -> String) -> tempfile::TempDir {
    buildable_fixture("host_launcher", edit)
}

/// The fixture crate `name` in a temp dir, ready for `cargo build`: its path dependencies made
/// absolute, this repository's lock file beside it; `edit` applied to its Cargo.toml.
pub(crate) fn buildable_fixture(name: &str, edit: impl Fn(String) -> String) -> tempfile::TempDir {
    let dir = fixture(name);
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("fixture Cargo.toml");
    let text = text.replace("path = \"../../../", &format!("path = \"{}/", root().display()));
    std::fs::write(&manifest, edit(text)).expect("write Cargo.toml");
    std::fs::copy(root().join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copy Cargo.lock");
    dir
}

/// `cargo launch report --format FORMAT` of `manifest`, which must succeed: its stdout.
pub(crate) fn report_in(format: &str, manifest: &Path) -> String {
    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "report", "--no-setup", "--format", format, "--manifest-path"])
        .arg(manifest));
    assert_eq!(code, 0, "report failed:\n{stderr}");
    stdout
}

/// The 13.0 toolchain's root, or `None` (said) when it or a host C++ compiler is missing.
pub(crate) fn toolchain_13_and_cxx() -> Option<PathBuf> {
    let env = Env::cli();
    let dir = pin_dir(&env, &pin::CUDA_13_0).filter(|d| d.join(".complete").is_file());
    let cxx = on_path(&env.get(var::CXX).map_or("c++".into(), |c| c.to_string_lossy().into_owned()), &env);
    let missing = match (&dir, &cxx) {
        (None, _) => "the CUDA 13.0 toolchain is not installed (`cargo launch setup --toolchain 13.0`)",
        (_, None) => "no host C++ compiler (CXX, else c++) is on PATH",
        _ => return dir,
    };
    assert!(env.get(var::LAUNCH_TEST_REQUIRE_TOOLCHAINS).is_none_or(|v| v != "1"), "{missing}");
    eprintln!("skipped: {missing}");
    None
}

/// `(arch, registers)` of each `Used N registers` line of `nvcc -Xptxas -v` for `saxpy` compiled
/// as the library is (`-gencode` per arch): the numbers the report must show.
fn nvcc_registers(toolchain: &Path, file: &Path) -> Vec<(String, u32)> {
    let nvcc = toolchain.join("nvidia/cu13/bin/nvcc");
    let out = std::process::Command::new(&nvcc)
        .args([
            "-c",
            "-Xptxas",
            "-v",
            "-gencode",
            "arch=compute_80,code=sm_80",
            "-gencode",
            "arch=compute_90,code=sm_90",
        ])
        .arg(file)
        .arg("-o")
        .arg(std::env::temp_dir().join(format!("launch-host-{}.o", std::process::id())))
        .output()
        .expect("run nvcc");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let mut arch = String::new();
    let mut found = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '_Z5saxpyfPKfPfi' for '").nth(1) {
            arch = rest.trim_end_matches('\'').to_string();
        } else if let (Some(n), false) = (line.split("Used ").nth(1), arch.is_empty()) {
            let regs = n.split(' ').next().and_then(|r| r.parse().ok()).expect("a register count");
            found.push((std::mem::take(&mut arch), regs));
        }
    }
    found.sort();
    found
}

/// report shows the host file's kernel with the registers nvcc's own compile reports, beside
/// the NVRTC file's; check passes; `cargo build` links; the program reports the runtime's error
/// without a GPU (computes and checks saxpy with one) and never crashes.
#[test]
fn a_host_file_is_reported_checked_linked_and_called_from_rust() {
    let Some(toolchain) = toolchain_13_and_cxx() else { return };
    let dir = host_launcher(|t| t);
    let manifest = dir.path().join("Cargo.toml");
    let report = |format: &str| report_in(format, &manifest);
    let text = report("text");
    assert!(text.contains("host file kernels/saxpy.cu: nvcc 13.0.88 (host compiler "), "{text}");
    assert!(text.contains(", linked into liblaunch_host_fixture_host_launcher_"), "{text}");
    let doc = exact(&report("json"), Document::from_json);
    let mut saxpy: Vec<(String, u32)> = doc
        .records
        .iter()
        .filter(|r| r.kernel.file == "kernels/saxpy.cu")
        .map(|r| (r.arch.to_string(), r.ptxas.resources.registers))
        .collect();
    saxpy.sort();
    assert_eq!(saxpy, nvcc_registers(&toolchain, &dir.path().join("kernels/saxpy.cu")), "{text}");
    assert_eq!(saxpy.len(), 2, "{text}");
    assert_eq!(doc.records.iter().filter(|r| r.kernel.file == "kernels/scale.cu").count(), 2, "{text}");

    let (code, stdout, stderr) =
        run(cargo_launch().args(["launch", "check", "--no-setup", "--manifest-path"]).arg(&manifest));
    assert_eq!(code, 0, "check failed:\n{stdout}\n{stderr}");

    let cache = tempfile::tempdir().expect("temp dir");
    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &toolchain));
    assert_eq!(code, 0, "cargo build failed:\n{stderr}");
    let bin = root().join("target/fixtures/debug/host-launcher");
    let (code, stdout, stderr) = run(&mut std::process::Command::new(&bin));
    // The embedded statics, the host file's included.
    assert!(stdout.contains("kernel _Z5saxpyfPKfPfi (kernels/saxpy.cu): sm_80 "), "{stdout}");
    match code {
        0 => assert!(stdout.contains(", 0 wrong") && stdout.ends_with("ok\n"), "{stdout}"),
        // No GPU or driver here: the runtime's error, said, and a clean exit.
        1 => assert!(stderr.starts_with("saxpy_launch failed: CUDA error "), "{stderr}"),
        _ => panic!("the program crashed or failed ({code}):\n{stdout}\n{stderr}"),
    }
}

/// The 12.9 wheels have no nvcc: a `host` file there is an error at the key naming 13.0.
#[test]
fn a_host_file_with_toolchain_12_9_names_toolchain_13_0() {
    toolchain_root();
    let dir = host_launcher(|t| t.replace("toolchain = \"13.0\"\n", ""));
    let (code, _, stderr) = run(cargo_launch()
        .args(["launch", "report", "--no-setup", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    // The crate's `toolchain` is what to change: a configuration error, as the exit-code table says.
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("Cargo.toml:12:9: `package.metadata.launch.host[0]`: `host` files are compiled with nvcc, and the CUDA 12.9 toolchain found"),
        "{stderr}"
    );
    assert!(stderr.contains("set `toolchain = \"13.0\"`"), "{stderr}");
}

/// A `host` pattern that matches no kernel file is an error at the pattern, before any compile.
#[test]
fn a_host_pattern_that_matches_nothing_is_a_located_error() {
    let dir = host_launcher(|t| t.replace("host = [\"saxpy.cu\"]", "host = [\"saxpy.cu\", \"moe/*.cu\"]"));
    let (code, _, stderr) = run(cargo_launch()
        .args(["launch", "report", "--no-setup", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "Cargo.toml:13:21: `package.metadata.launch.host[1]`: `moe/*.cu` matches no kernel file under kernels/"
        ),
        "{stderr}"
    );
}
