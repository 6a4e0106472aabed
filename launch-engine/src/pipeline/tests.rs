//! The build in process on small crates made in temporary folders, with the real toolchain
//! (skipped, saying so, where there is none).

use std::path::Path;

use crate::env::Env;
use crate::source::tests::encodings;

fn toolchain_or_skip() -> bool {
    crate::toolchain::discover(&Env::cli()).map_err(|e| eprintln!("skipped: no CUDA toolchain ({e})")).is_ok()
}

const CARGO_TOML: &str = "[package]\nname = \"encodings\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n";
const KERNEL: &str = "// encodings\n#include \"h.cuh\"\n\n  // @launch(128)\nextern \"C\" __global__ void k(float* p) { p[0] = twice(1.0f); }\n";
const HEADER: &str = "#pragma once\n// a header\n__device__ inline float twice(float x) { return 2.0f * x; }\n";
/// A kernel file that NVRTC refuses at line 6, column 33 (of `undefined_name`).
const BAD: &str = "// encodings\n#include \"h.cuh\"\n\n// @launch(128)\nextern \"C\" __global__ void bad(float* p) {\n  p[0] = twice(1.0f) + (float)undefined_name;\n}\n";

fn build(dir: &Path) -> Result<launch_schema::manifest::Manifest, crate::error::Error> {
    super::build_crate(&Env::cli(), dir, &dir.join("out"))
}

#[test]
fn every_encoding_nvcc_accepts_builds_in_a_kernel_file_and_in_a_header() {
    if !toolchain_or_skip() {
        return;
    }
    // Before: a kernel file with a BOM failed in NVRTC ("unrecognized token" at line 1); one with
    // lone CR line ends built with no kernel found and its `@launch` ignored. A header with a BOM
    // or lone CR line ends (read by NVRTC itself) was refused before compiling; it is now handed
    // to NVRTC in memory, normalised.
    let mut cases = 0;
    for (place, file) in [("kernel file", "kernels/k.cu"), ("header", "kernels/h.cuh")] {
        for (what, _) in encodings(KERNEL) {
            let case = format!("{what} in the {place}");
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("kernels")).unwrap();
            std::fs::write(dir.path().join("Cargo.toml"), CARGO_TOML).unwrap();
            std::fs::write(dir.path().join("kernels/k.cu"), KERNEL).unwrap();
            std::fs::write(dir.path().join("kernels/h.cuh"), HEADER).unwrap();
            let text = if place == "header" { HEADER } else { KERNEL };
            let bytes = encodings(text).into_iter().find(|(w, _)| *w == what).unwrap().1;
            std::fs::write(dir.path().join(file), bytes).unwrap();
            cases += 1;
            let built = build(dir.path());
            let manifest = built.unwrap_or_else(|e| panic!("{case}: {e}"));
            let k = manifest.kernels.iter().find(|k| k.name == "k").unwrap_or_else(|| panic!("{case}: no `k`"));
            assert_eq!((k.file.as_str(), k.line, k.col), ("kernels/k.cu", 5, 28), "{case}");
            assert_eq!(k.contract.and_then(|c| c.threads), Some(128), "{case}: @launch not read");
            if place == "kernel file" {
                // An error NVRTC finds later in a file of the same encoding is at its line.
                let bad = encodings(BAD).into_iter().find(|(w, _)| *w == what).unwrap().1;
                std::fs::write(dir.path().join("kernels/bad.cu"), bad).unwrap();
                let e = build(dir.path()).expect_err(&case).to_string();
                assert!(
                    e.contains("kernels/bad.cu(6): error: identifier \"undefined_name\" is undefined"),
                    "{case}: {e}"
                );
            }
        }
    }
    eprintln!("{cases} encodings × places built, 3 of them headers NVRTC takes from memory");
}

#[test]
fn a_header_nvrtc_cannot_read_in_a_subfolder_builds_with_what_it_includes() {
    if !toolchain_or_skip() {
        return;
    }
    // A BOM and lone CR line ends in `kernels/sub/h.cuh`, included as "sub/h.cuh", which includes
    // "g.cuh" beside it (and plain): NVRTC takes the first from memory and still finds the second.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("kernels/sub")).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), CARGO_TOML).unwrap();
    std::fs::write(dir.path().join("kernels/k.cu"), KERNEL.replace("\"h.cuh\"", "\"sub/h.cuh\"")).unwrap();
    let header =
        "\u{feff}#pragma once\r#include \"g.cuh\"\r__device__ inline float twice(float x) { return two() * x; }\r";
    std::fs::write(dir.path().join("kernels/sub/h.cuh"), header).unwrap();
    std::fs::write(
        dir.path().join("kernels/sub/g.cuh"),
        "#pragma once\n__device__ inline float two() { return 2.0f; }\n",
    )
    .unwrap();
    let manifest = build(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let k = manifest.kernels.iter().find(|k| k.name == "k").expect("`k`");
    assert_eq!((k.file.as_str(), k.line, k.col), ("kernels/k.cu", 5, 28));
    assert_eq!(k.contract.and_then(|c| c.threads), Some(128), "@launch not read");
}

#[test]
fn headers_nvrtc_cannot_read_go_in_memory_normalised_with_what_they_include() {
    // Before: such a header was an error. Now it, and what it includes, go to NVRTC in memory
    // under the names written; a plain header is read from disk; a name that would then stand
    // for two headers is an error at the `#include` that means the other one.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("kernels/sub")).unwrap();
    std::fs::write(root.join("Cargo.toml"), CARGO_TOML).unwrap();
    let kernel = "#include \"plain.cuh\"\n#include \"sub/h.cuh\"\n__global__ void k() {}\n";
    std::fs::write(root.join("kernels/k.cu"), kernel).unwrap();
    std::fs::write(root.join("kernels/plain.cuh"), "#pragma once\n").unwrap();
    std::fs::write(root.join("kernels/sub/h.cuh"), "\u{feff}#pragma once\r\n#include \"g.cuh\"\r").unwrap();
    std::fs::write(root.join("kernels/sub/g.cuh"), "#pragma once\r\n").unwrap();
    let headers = |root: &Path| {
        let plan = crate::plan::Plan::resolve(crate::config::Config::load(&root.join("Cargo.toml")).unwrap()).unwrap();
        crate::prepare::nvrtc_headers(&plan, &plan.files[0])
    };
    let expected = [("sub/h.cuh", "#pragma once\n#include \"g.cuh\"\n"), ("g.cuh", "#pragma once\n")];
    let found = headers(root).unwrap();
    assert_eq!(found.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect::<Vec<_>>(), expected);

    // "g.cuh" from the kernel file is kernels/g.cuh; from sub/h.cuh, kernels/sub/g.cuh.
    std::fs::write(root.join("kernels/k.cu"), format!("#include \"g.cuh\"\n{kernel}")).unwrap();
    std::fs::write(root.join("kernels/g.cuh"), "#pragma once\n").unwrap();
    std::fs::write(root.join("kernels/sub/h.cuh"), "\u{feff}#pragma once\n#include \"g.cuh\"\n").unwrap();
    let e = headers(root).expect_err("one name for two headers").to_string();
    let expected =
        "kernels/k.cu:1:1: error: `#include \"g.cuh\"` finds kernels/g.cuh here and kernels/sub/g.cuh elsewhere";
    assert!(e.contains(expected), "{e}");
}
