use std::path::{Path, PathBuf};

use super::*;

const LAUNCHER: &str =
    "#pragma once\n// The launcher.\nextern \"C\" void launch_k(float* x) {\n    k<<<1, 32>>>(x);\n}\n";

/// A crate in a temp dir: `files` written (folders made) under it; returns it and `kernels/`.
fn crate_with(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = d.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let kernels = d.path().join("kernels");
    (d, kernels)
}

/// The host code `kernels/k.cu` brings in through headers in `kernels/` and `dirs`, as
/// (include line, name, chain relative to the crate, host code line, what).
fn found(root: &Path, dirs: &[PathBuf], nvrtc_only: bool) -> Option<(u32, String, Vec<String>, u32, String)> {
    let file = root.join("kernels/k.cu");
    let src = std::fs::read_to_string(&file).unwrap();
    let h = host_code_in_headers(&src, &scan(&src), &file, dirs, nvrtc_only)?;
    let chain = h.chain.iter().map(|p| p.strip_prefix(root).unwrap().display().to_string()).collect();
    Some((h.line, h.name, chain, h.code.line, h.code.what))
}

#[test]
fn host_code_in_an_included_header_is_found_at_the_include() {
    let (d, kernels) = crate_with(&[
        ("kernels/k.cu", "__global__ void k(float* x) {}\n#include \"launch.cuh\"\n"),
        ("kernels/launch.cuh", LAUNCHER),
    ]);
    let got = found(d.path(), &[kernels], true);
    assert_eq!(
        got,
        Some((2, "launch.cuh".into(), vec!["kernels/launch.cuh".into()], 4, "kernel launch syntax `<<<...>>>`".into()))
    );
}

#[test]
fn host_code_two_headers_down_is_found_at_the_first_include_with_the_chain() {
    let (d, kernels) = crate_with(&[
        ("kernels/k.cu", "#include \"dev.cuh\"\n#include \"outer.cuh\"\n__global__ void k(float* x) {}\n"),
        ("kernels/dev.cuh", "__device__ float twice(float x) { return 2 * x; }\n"),
        ("kernels/outer.cuh", "#pragma once\n#include <inner.cuh>\n"),
        ("include/inner.cuh", "#include <cstdio>\nvoid say() { fprintf(stderr, \"hi\"); }\n"),
    ]);
    let got = found(d.path(), &[kernels, d.path().join("include")], true);
    assert_eq!(
        got,
        Some((
            2,
            "outer.cuh".into(),
            vec!["kernels/outer.cuh".into(), "include/inner.cuh".into()],
            2,
            "a call to the host C library function `fprintf`".into()
        ))
    );
}

#[test]
fn a_header_included_twice_is_scanned_once_and_named_at_its_first_include() {
    let (d, kernels) = crate_with(&[
        (
            "kernels/k.cu",
            "#include \"dev.cuh\"\n#include \"both.cuh\"\n#include \"dev.cuh\"\n#include \"launch.cuh\"\n",
        ),
        ("kernels/dev.cuh", "#pragma once\n__device__ int one() { return 1; }\n"),
        ("kernels/both.cuh", "#include \"dev.cuh\"\n#include \"launch.cuh\"\n"),
        ("kernels/launch.cuh", LAUNCHER),
    ]);
    let got = found(d.path(), &[kernels], true).unwrap();
    // Reached first through both.cuh (line 2), not at its own `#include` (line 4).
    assert_eq!((got.0, got.1.as_str()), (2, "both.cuh"));
    assert_eq!(got.2, ["kernels/both.cuh", "kernels/launch.cuh"]);
}

#[test]
fn an_include_cycle_ends() {
    let (d, kernels) = crate_with(&[
        ("kernels/k.cu", "#include \"a.cuh\"\n"),
        ("kernels/a.cuh", "#include \"b.cuh\"\n"),
        // Back to a.cuh, and to the kernel file itself, by another spelling.
        ("kernels/b.cuh", "#include \"a.cuh\"\n#include \"../kernels/k.cu\"\n#include \"./b.cuh\"\n"),
    ]);
    assert_eq!(found(d.path(), std::slice::from_ref(&kernels), true), None);
    std::fs::write(kernels.join("b.cuh"), "#include \"a.cuh\"\nint main() { return 0; }\n").unwrap();
    let got = found(d.path(), &[kernels], true).unwrap();
    assert_eq!((got.0, got.2.len(), got.3, got.4.as_str()), (1, 2, 2, "a `main` function"));
}

#[test]
fn system_and_toolkit_headers_are_not_scanned() {
    // A toolkit folder that is not one of the crate's: its headers declare and call host API.
    let (d, kernels) = crate_with(&[
        ("kernels/k.cu", "#include <cuda_runtime.h>\n#include <vector>\n__global__ void k() {}\n"),
        ("toolkit/cuda_runtime.h", "inline void f() { void* p; cudaMalloc(&p, 4); }\n"),
        ("toolkit/vector", "int main() { return 0; }\n"),
    ]);
    assert_eq!(found(d.path(), std::slice::from_ref(&kernels), true), None);
    assert_eq!(found(d.path(), &[kernels], false), None);
}

#[test]
fn includes_nvrtc_never_reads_count_for_the_host_side_only() {
    let (d, kernels) = crate_with(&[
        (
            "kernels/k.cu",
            "// #include \"launch.cuh\"\n/* #include \"launch.cuh\" */\n#ifndef __CUDACC_RTC__\n#include \"launch.cuh\"\n#endif\n",
        ),
        ("kernels/launch.cuh", LAUNCHER),
    ]);
    assert_eq!(found(d.path(), std::slice::from_ref(&kernels), true), None);
    let got = found(d.path(), &[kernels], false).unwrap();
    assert_eq!((got.0, got.3), (4, 4));
}

#[test]
fn host_code_in_branches_of_a_header_nvrtc_never_compiles_does_not_count() {
    let guarded = "#if !defined(__CUDA_ARCH__)\nvoid launch(float* x) { k<<<1, 1>>>(x); }\n#endif\n";
    let (d, kernels) = crate_with(&[("kernels/k.cu", "#include \"launch.cuh\"\n"), ("kernels/launch.cuh", guarded)]);
    assert_eq!(found(d.path(), std::slice::from_ref(&kernels), true), None);
    assert_eq!(found(d.path(), &[kernels], false).map(|f| f.3), Some(2));
}
