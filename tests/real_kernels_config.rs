//! Issue 10, items 2, 3 and 9 through the real binary: compiler flags in nvcc's spellings,
//! `exclude`, per-file settings, host files, and the include folders `LAUNCH_BUILD_DEBUG` shows.

use launch_schema::report::Document;

use crate::support::{cargo_launch, fixture, run, toolchain_root};

/// `cargo launch report --format json` on the fixture copy; (exit code, stdout, stderr).
fn report(dir: &tempfile::TempDir) -> (i32, String, String) {
    run(cargo_launch()
        .args(["launch", "report", "--format", "json", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")))
}

/// Replaces `from` (which must be there) by `to` in the copy's Cargo.toml.
fn edit_manifest(dir: &tempfile::TempDir, from: &str, to: &str) {
    let path = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "`{from}` is not in the fixture's Cargo.toml");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

const FLAGS: &str = "flags = [\"-std=c++20\", \"--expt-relaxed-constexpr\", \"-I\", \"third_party/inc\"]";

/// With its flags, exclusions and per-file defines the folder builds as shipped: the host file,
/// the `legacy/` folder and the `*_test.cu` file are left out, `tuned.cu` alone gets its macros,
/// and the C++20 + relaxed-constexpr kernels compile.
#[test]
fn the_folder_builds_with_flags_exclusions_and_per_file_defines() {
    toolchain_root();
    let dir = fixture("real_config");
    let (code, stdout, stderr) = report(&dir);
    assert_eq!(code, 0, "{stderr}");
    let doc = Document::from_json(&stdout).expect("a report document");
    let mut kernels: Vec<(String, String)> =
        doc.records.iter().map(|r| (r.kernel.file.clone(), r.kernel.name.clone())).collect();
    kernels.sort();
    let expected = [
        ("kernels/modern.cu", "scale_f32"),
        ("kernels/modern.cu", "scale_f64"),
        ("kernels/plain.cu", "plain_fill"),
        ("kernels/sub/kept.cu", "kept"),
        ("kernels/tuned.cu", "tuned_copy"),
        // Defined only under the file's own `-DTUNED_EXTRA`.
        ("kernels/tuned.cu", "tuned_extra"),
    ];
    assert_eq!(kernels, expected.map(|(f, k)| (f.to_string(), k.to_string())), "{stderr}");
}

/// The same folder without each flag fails in NVRTC; the flags are what make it build.
#[test]
fn without_the_flags_the_modern_kernels_do_not_compile() {
    toolchain_root();
    let cases = [
        // `--expt-relaxed-constexpr` (NVRTC's `-default-device`) lets device code call the
        // unannotated constexpr helper.
        ("flags = [\"-std=c++20\", \"-I\", \"third_party/inc\"]", "host functions are not allowed in JIT mode"),
        // A concept needs C++20; NVRTC's default is C++17.
        ("flags = [\"--expt-relaxed-constexpr\", \"-I\", \"third_party/inc\"]", "kernels/modern.cu(6)"),
    ];
    for (flags, error) in cases {
        let dir = fixture("real_config");
        edit_manifest(&dir, FLAGS, flags);
        let (code, _, stderr) = report(&dir);
        assert_eq!(code, 4, "{flags}: {stderr}");
        assert!(stderr.contains(error), "{flags}: expected `{error}` in:\n{stderr}");
        assert!(stderr.contains("kernels/modern.cu"), "{stderr}");
    }
}

/// A flag launch-build controls is refused before anything runs: exit 2, the key, its
/// `Cargo.toml:LINE:COL` and the reason.
#[test]
fn a_refused_flag_names_its_key_line_and_reason() {
    let dir = fixture("real_config");
    edit_manifest(&dir, FLAGS, "flags = [\"-std=c++20\", \"-arch=sm_90\"]");
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 2, "{stderr}");
    let expected = format!(
        "{}/Cargo.toml:11:24: `package.metadata.launch.flags[1]`: `-arch=sm_90` is not allowed: launch-build sets the target architecture of every compile from `arch`",
        dir.path().display()
    );
    assert!(stderr.contains(&expected), "expected\n{expected}\nin:\n{stderr}");

    let dir = fixture("real_config");
    edit_manifest(&dir, "ptxas-flags = [\"-O3\"]", "ptxas-flags = [\"-O3\", \"-maxrregcount=32\"]");
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("Cargo.toml:12:23: `package.metadata.launch.ptxas-flags[1]`: `-maxrregcount=32` is not allowed: register and block limits belong to each kernel's launch contract"),
        "{stderr}"
    );
}

/// Host files that are not excluded are errors before anything compiles, every file at once,
/// each at the line that shows host code, naming the `exclude` entry that leaves it out.
#[test]
fn host_files_not_excluded_are_located_errors() {
    let dir = fixture("real_config");
    edit_manifest(&dir, "exclude = [\"host_launch.cu\", \"legacy\", \"**/*_test.cu\"]", "exclude = [\"legacy\"]");
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 4, "{stderr}");
    for expected in [
        "kernels/host_launch.cu:8:5: error: a call to the host API function `cudaMalloc` is host code, and NVRTC compiles device code only; leave this file out with `exclude = [\"host_launch.cu\"]` in [package.metadata.launch]",
        "kernels/sub/copy_test.cu:4:5: error: a `main` function is host code, and NVRTC compiles device code only; leave this file out with `exclude = [\"sub/copy_test.cu\"]` in [package.metadata.launch]",
    ] {
        assert!(stderr.contains(expected), "missing\n{expected}\nin:\n{stderr}");
    }
    // Found before compiling: no compiler ran.
    assert!(!stderr.contains("NVRTC 12"), "{stderr}");
}

/// `LAUNCH_BUILD_DEBUG`: a top-level file's folder is the kernel folder, passed once; the flags'
/// include folder and the ptxas flags are on the command lines.
#[test]
fn the_debug_command_lines_list_each_include_folder_once() {
    toolchain_root();
    let dir = fixture("real_config");
    // Patterns that match nothing (misspelt) are warned about, not silently ignored.
    edit_manifest(&dir, "\"**/*_test.cu\"]", "\"**/*_test.cu\", \"legacyy\"]");
    edit_manifest(
        &dir,
        "[dependencies]",
        "[package.metadata.launch.file.\"tunned.cu\"]\ndefines = { X = 1 }\n\n[dependencies]",
    );
    let (code, _, stderr) = run(cargo_launch()
        .args(["launch", "report", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .env("LAUNCH_BUILD_DEBUG", "1")
        .env("LAUNCH_NO_CACHE", "1"));
    assert_eq!(code, 0, "{stderr}");
    let root = dir.path().display().to_string();
    let nvrtc_line = |file: &str| {
        stderr
            .lines()
            .find(|l| l.contains(&format!("NVRTC {file} ")))
            .unwrap_or_else(|| panic!("no NVRTC line for {file} in:\n{stderr}"))
            .to_string()
    };
    let plain = nvrtc_line("kernels/plain.cu");
    assert_eq!(plain.matches(&format!("--include-path={root}/kernels ")).count(), 1, "{plain}");
    assert!(plain.contains(&format!("--include-path={root}/third_party/inc")), "{plain}");
    assert!(plain.contains("--std=c++20 --device-as-default-execution-space"), "{plain}");
    assert!(!plain.contains("TUNED"), "{plain}");
    let nested = nvrtc_line("kernels/sub/kept.cu");
    let includes: Vec<&str> = nested.split(' ').filter(|o| o.starts_with("--include-path=")).collect();
    assert_eq!(includes[..2], [format!("--include-path={root}/kernels/sub"), format!("--include-path={root}/kernels")]);
    let tuned = nvrtc_line("kernels/tuned.cu");
    assert!(tuned.contains("--define-macro=TUNED_WIDTH=8") && tuned.contains("--define-macro=TUNED_EXTRA"), "{tuned}");
    assert!(stderr.lines().any(|l| l.contains("ptxas") && l.contains("--opt-level=3")), "{stderr}");
    for warning in [
        "exclude entry `legacyy` matches no .cu file under kernels/; it has no effect",
        "[package.metadata.launch.file.\"tunned.cu\"] matches no kernel file under kernels/ (patterns are relative to it); its settings are unused",
    ] {
        assert!(stderr.contains(warning), "missing `{warning}` in:\n{stderr}");
    }
    assert!(!stderr.contains("`legacy` matches"), "{stderr}");
}

/// A file's `arch` setting keeps it to those arches: its kernels are reported there only, with
/// the setting as the reason elsewhere; a build whose arches it shares none of says so once
/// (before: it also claimed the file had no kernel).
#[test]
fn a_file_arch_setting_keeps_its_kernels_to_those_arches() {
    toolchain_root();
    let dir = fixture("real_config");
    edit_manifest(&dir, "arch = [\"sm_80\"]", "arch = [\"sm_80\", \"sm_90\"]");
    edit_manifest(
        &dir,
        "[package.metadata.launch.file.\"tuned.cu\"]",
        "[package.metadata.launch.file.\"plain.cu\"]\narch = [\"sm_90\"]\n\n[package.metadata.launch.file.\"tuned.cu\"]",
    );
    let (code, stdout, stderr) = report(&dir);
    assert_eq!(code, 0, "{stderr}");
    let doc = Document::from_json(&stdout).expect("a report document");
    let arches: Vec<String> =
        doc.records.iter().filter(|r| r.kernel.name == "plain_fill").map(|r| r.arch.to_string()).collect();
    assert_eq!(arches, ["sm_90"], "{stdout}");

    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "report", "--arch", "sm_86", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    assert_eq!(code, 0, "{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains(
            "kernels/plain.cu: not compiled: its `arch` setting [sm_90] shares no arch with the build's [sm_86]"
        ),
        "{all}"
    );
    assert!(!all.contains("kernels/plain.cu: no kernel"), "{all}");
}

/// A device file whose host-only code (`fprintf`, a `<<<` launcher, `main`) sits in branches
/// NVRTC never compiles (`#ifndef __CUDA_ARCH__`, `#if !defined(__CUDA_ARCH__)`, `#if 0`) is not
/// host code: it builds and its kernel is reported.
#[test]
fn host_code_in_branches_nvrtc_never_compiles_builds() {
    toolchain_root();
    let dir = fixture("host_guarded");
    let (code, stdout, stderr) = report(&dir);
    assert_eq!(code, 0, "{stderr}");
    let doc = Document::from_json(&stdout).expect("a report document");
    let kernels: Vec<(&str, &str)> =
        doc.records.iter().map(|r| (r.kernel.file.as_str(), r.kernel.name.as_str())).collect();
    assert_eq!(kernels, [("kernels/guarded.cu", "guarded_fill")], "{stderr}");
}
