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

fn build(dir: &Path) -> Result<crate::manifest::Manifest, crate::error::Error> {
    super::build_crate(&Env::cli(), dir, &dir.join("out"))
}

#[test]
fn every_encoding_nvcc_accepts_builds_in_a_kernel_file_and_in_a_header() {
    if !toolchain_or_skip() {
        return;
    }
    // Before: a kernel file with a BOM failed in NVRTC ("unrecognized token" at line 1); one with
    // lone CR line ends built with no kernel found and its `@launch` ignored.
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
            if place == "header" && ["a byte-order mark", "lone CR line ends", "all of them"].contains(&what) {
                // NVRTC reads included headers from disk itself, and refuses a BOM there
                // ("unrecognized token") and takes a lone CR for no line end (the `#pragma once`
                // line swallows the header): said before compiling, at the header, with the fix.
                let e = built.expect_err(&case).to_string();
                let expected = if what == "lone CR line ends" {
                    "kernels/h.cuh:1:13: error: this header ends a line with a lone CR"
                } else {
                    "kernels/h.cuh:1:1: error: this header starts with a UTF-8 byte-order mark"
                };
                assert!(e.contains(expected) && !e.contains("failed to compile"), "{case}: {e}");
                continue;
            }
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
    eprintln!("{cases} encodings × places, 3 of them header cases NVRTC cannot read (refused, located)");
}
