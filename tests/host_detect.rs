//! A kernel file whose host code is in a header of the crate it includes (its `extern "C"`
//! launchers in `launch.cuh`) cannot go through NVRTC either: the build says so before compiling,
//! at the file's `#include`, naming the header's line and suggesting `host`. Listed under `host`,
//! it builds with nvcc, beside a launcher file with no kernel of its own, which is no warning.

use crate::host_files::toolchain_13_and_cxx;
use crate::support::{cargo_launch, fixture, run};

/// The `host_through_header` fixture with `edit` applied to its `[package.metadata.launch]`.
fn host_through_header(edit: impl Fn(String) -> String) -> tempfile::TempDir {
    let dir = fixture("host_through_header");
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("fixture Cargo.toml");
    std::fs::write(&manifest, edit(text)).expect("write Cargo.toml");
    dir
}

/// `cargo launch report` of `dir` in `format`: (exit code, stdout, stderr).
fn report(dir: &tempfile::TempDir, format: &str) -> (i32, String, String) {
    run(cargo_launch()
        .args(["launch", "report", "--no-setup", "--format", format, "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")))
}

/// Without `host`, the file whose launchers are in `launch.cuh` is an error at its `#include`
/// line, naming the header's line of host code and the `host` entry, before anything compiles;
/// the kernel-less launcher file is one at its own host code.
#[test]
fn host_code_in_an_included_header_is_an_error_at_the_include() {
    let dir = host_through_header(|t| t);
    let (code, _, stderr) = report(&dir, "json");
    assert_eq!(code, 4, "{stderr}");
    for expected in [
        "kernels/vec.cu:12:1: error: `#include \"launch.cuh\"` brings host code into this file: kernel launch syntax `<<<...>>>` at kernels/launch.cuh:7:12 is host code, and NVRTC compiles device code only, headers included; leave this file out with `exclude = [\"vec.cu\"]` in [package.metadata.launch], or compile it with nvcc, host code and all, with `host = [\"vec.cu\"]` (and `toolchain = \"13.0\"`)",
        "kernels/pipeline.cu:11:26: error: a call to the host API function `cudaDeviceSynchronize` is host code",
    ] {
        assert!(stderr.contains(expected), "missing\n{expected}\nin:\n{stderr}");
    }
    // Found before compiling: no compiler ran.
    assert!(!stderr.contains("NVRTC 1"), "{stderr}");
}

/// A header guarded from NVRTC (`#ifndef __CUDACC_RTC__`) is not read by it: no error.
#[test]
fn a_header_nvrtc_never_includes_is_not_host_code_of_the_file() {
    let dir = host_through_header(|t| t);
    let vec = dir.path().join("kernels/vec.cu");
    let text = std::fs::read_to_string(&vec).unwrap();
    let guarded = "#ifndef __CUDACC_RTC__\n#include \"launch.cuh\"\n#endif\n";
    std::fs::write(&vec, text.replace("#include \"launch.cuh\"\n", guarded)).unwrap();
    std::fs::remove_file(dir.path().join("kernels/pipeline.cu")).unwrap();
    let (code, _, stderr) = report(&dir, "json");
    assert_eq!(code, 0, "{stderr}");
}

/// With both files under `host`, nvcc builds them: vec.cu's kernels are reported, and the
/// launcher file without a kernel of its own draws no "nothing in it can be launched" warning.
#[test]
fn host_files_reaching_host_code_through_headers_build_and_a_kernel_less_launcher_is_no_warning() {
    if toolchain_13_and_cxx().is_none() {
        return;
    }
    let dir = host_through_header(|t| {
        t.replace(
            "arch = [\"sm_80\"]",
            "arch = [\"sm_80\"]\ntoolchain = \"13.0\"\nhost = [\"vec.cu\", \"pipeline.cu\"]",
        )
    });
    let (code, stdout, stderr) = report(&dir, "text");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let all = format!("{stdout}{stderr}");
    // Two files compiled and linked alike: one line for both, then their names.
    assert!(all.contains("host files (2): nvcc 13.0"), "{all}");
    assert!(all.contains("\n  kernels/pipeline.cu, kernels/vec.cu\n"), "{all}");
    for kernel in ["add_one", "scale"] {
        assert!(all.contains(kernel), "{kernel} is not reported:\n{all}");
    }
    assert!(!all.contains("nothing in it can be launched"), "{all}");
    assert!(!all.contains("no kernel (__global__"), "{all}");
}

/// A host-only header NVRTC cannot open, in a file whose crate header holds host code where
/// NVRTC never compiles it: the note says to list the file under `host` first.
#[test]
fn a_host_only_header_beside_guarded_host_code_suggests_host_first() {
    let dir = host_through_header(|t| t);
    let kernels = dir.path().join("kernels");
    for f in ["vec.cu", "launch.cuh", "pipeline.cu"] {
        std::fs::remove_file(kernels.join(f)).unwrap();
    }
    std::fs::write(kernels.join("table.cu"), "#include \"table.cuh\"\n__global__ void k(float* p) { p[0] = 1.0f; }\n")
        .unwrap();
    std::fs::write(
        kernels.join("table.cuh"),
        "#pragma once\n#include <unordered_map>\n#ifndef __CUDA_ARCH__\ninline int sync_all() {\n    return (int)cudaDeviceSynchronize();\n}\n#endif\n",
    )
    .unwrap();
    let (code, _, stderr) = report(&dir, "json");
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("cannot open source file \"unordered_map\""), "{stderr}");
    let expected = "note: <unordered_map> is a host-only header, and this file holds host code (a call to the host API function `cudaDeviceSynchronize` at kernels/table.cuh:5:17): NVRTC compiles device code only; compile it with nvcc, host code and all, with `host = [\"table.cu\"]` in [package.metadata.launch] (and `toolchain = \"13.0\"`)";
    assert!(stderr.contains(expected), "missing\n{expected}\nin:\n{stderr}");
}
