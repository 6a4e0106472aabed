//! Issue 11, items 4, 11, 12 and 13 through the real binary: `@launch` against the bounds a
//! kernel already has (written anywhere on its declaration, or hidden in a macro and read back
//! from the PTX), compiler messages without the code the tool inserted, a source that is not
//! UTF-8, and the quiet successes that now warn.

use launch_schema::diagnostics::Diagnostics;

use crate::support::{cargo_launch, exact, fixture, run, toolchain_root};

/// `cargo launch report` on the fixture copy; (exit code, stdout, stderr).
fn report(dir: &tempfile::TempDir) -> (i32, String, String) {
    run(cargo_launch().args(["launch", "report", "--manifest-path"]).arg(dir.path().join("Cargo.toml")))
}

#[test]
fn bounds_written_before_global_disagreeing_or_agreeing_are_read_from_the_source() {
    let dir = fixture("contracts_hardening");
    // Each of these built and silently used @launch's values (or failed inside NVRTC showing
    // inserted code); a file that is not UTF-8 failed with a bare I/O error.
    std::fs::write(
        dir.path().join("kernels/disagree.cu"),
        "// @launch(128)\n\
         extern \"C\" __launch_bounds__(256) __global__ void add(float* p) { p[0] = 1.0f; }\n\
         \n\
         // @launch(256, 4)\n\
         extern \"C\" __global__ void __launch_bounds__(256, 1) min_blocks(float* p) { p[0] = 1.0f; }\n\
         \n\
         // @launch(128)\n\
         extern \"C\" __maxnreg__(64) __global__ void capped(float* p) { p[0] = 1.0f; }\n\
         \n\
         /*\n * @launch(128,\n *   0)\n */\n\
         __global__ void multi_line(float* p) { p[0] = 1.0f; }\n\
         // @launch(128, 4294967298)\n\
         __global__ void overflow(float* p) { p[0] = 1.0f; }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("kernels/latin1.cu"), b"// caf\xe9\n__global__ void k() {}\n").unwrap();
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 4, "{stderr}");
    for expected in [
        "kernels/disagree.cu:1:4: error: kernel `add` also has __launch_bounds__(256), which disagrees with @launch(128)",
        "kernels/disagree.cu:4:4: error: kernel `min_blocks` also has __launch_bounds__(256, 1), which disagrees with @launch(256, 4)",
        "kernels/disagree.cu:7:4: error: kernel `capped` also has __maxnreg__(64); NVRTC cannot combine it",
        "kernels/disagree.cu:12:6: error: min_blocks = 0: it must be positive (min_blocks: 1 to 32)",
        "kernels/disagree.cu:15:17: error: min_blocks = 4294967298 is over 32",
        "kernels/latin1.cu:1:7: error: not valid UTF-8 (byte 0xe9 at offset 6)",
    ] {
        assert!(stderr.contains(expected), "missing `{expected}` in:\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The same errors as data, for `cargo launch check` and editors (issue 12).
    let doc = diagnostics_json(&dir).expect("a failed build writes OUT_DIR/launch/diagnostics.json");
    let located: Vec<String> =
        doc.diagnostics.iter().map(|d| format!("{}:{}:{}: {}", d.file, d.line, d.col, d.severity)).collect();
    for expected in
        ["kernels/disagree.cu:1:4: error", "kernels/disagree.cu:15:17: error", "kernels/latin1.cu:1:7: error"]
    {
        assert!(located.iter().any(|l| l == expected), "missing `{expected}` in {located:?}");
    }
    assert_eq!(doc.schema, 1);
}

/// The `diagnostics.json` of the fixture copy `dir`'s last build. Copies share the target dir but
/// each has a package name of its own, which names its build script's folders and the document.
fn diagnostics_json(dir: &tempfile::TempDir) -> Option<Diagnostics> {
    let manifest = std::fs::read_to_string(dir.path().join("Cargo.toml")).ok()?;
    let name = manifest.lines().find_map(|l| l.strip_prefix("name = \""))?.trim_end_matches('"').to_string();
    let build = crate::support::root().join("target/fixtures/debug/build");
    std::fs::read_dir(build).ok()?.flatten().find_map(|e| {
        let folder = e.file_name().to_string_lossy().into_owned();
        let hash = folder.strip_prefix(&name)?.strip_prefix('-')?;
        if hash.contains('-') {
            return None;
        }
        let text = std::fs::read_to_string(e.path().join("out/launch/diagnostics.json")).ok()?;
        let doc = exact(&text, Diagnostics::from_json);
        (doc.package == name).then_some(doc)
    })
}

#[test]
fn a_macro_that_overrides_launch_is_caught_when_the_ptx_is_read_back() {
    toolchain_root();
    let dir = fixture("contracts_hardening");
    std::fs::write(
        dir.path().join("kernels/macro.cu"),
        "#define BOUNDS __launch_bounds__(256)\n\n  // @launch(128)\nextern \"C\" BOUNDS __global__ void add(float* p) { p[0] = 1.0f; }\n",
    )
    .unwrap();
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains(
            "kernels/macro.cu:3:6: error: @launch(128) of kernel `add` disagrees with the bounds the kernel was compiled with: its PTX for sm_90 has .maxntid 256, 1, 1"
        ),
        "{stderr}"
    );
}

#[test]
fn a_macro_maxnreg_is_explained_at_the_annotation_without_inserted_code() {
    toolchain_root();
    let dir = fixture("contracts_hardening");
    std::fs::write(
        dir.path().join("kernels/cap.cu"),
        "#define CAP __maxnreg__(64)\n// @launch(128)\nextern \"C\" CAP __global__ void add(float* p) { p[0] = 1.0f; }\n",
    )
    .unwrap();
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains(
            "kernels/cap.cu:2:4: error: kernel `add` has a __maxnreg__ the source does not show (from a macro?)"
        ),
        "{stderr}"
    );
    // NVRTC's own message is kept, echoing the line as written.
    assert!(stderr.contains("  extern \"C\" CAP __global__ void add(float* p) { p[0] = 1.0f; }"), "{stderr}");
    assert!(!stderr.contains("__launch_bounds__(128)") && !stderr.contains("maybe_unused"), "{stderr}");
}

#[test]
fn agreeing_bounds_build_and_a_file_without_kernels_warns() {
    toolchain_root();
    let dir = fixture("contracts_hardening");
    std::fs::write(dir.path().join("kernels/helpers.cu"), "__device__ float twice(float x) { return 2 * x; }\n")
        .unwrap();
    let (code, stdout, stderr) = report(&dir);
    assert_eq!(code, 0, "{stderr}");
    for expected in [
        "before_global  sm_90  @launch(128)",
        "after_static(float*)  sm_90  @launch(256, 2)",
        "templated<3>(float*)  sm_90  @launch(64, 4)",
        "through_macro  sm_90  @launch(256)",
        "warning: kernels/helpers.cu: no kernel (__global__ function) in this file",
    ] {
        assert!(stdout.contains(expected), "missing `{expected}` in:\n{stdout}");
    }
    // NVRTC's warnings (the unreferenced `static` kernel) echo the line as written.
    assert!(!stdout.contains("maybe_unused") && !stdout.contains("__launch_bounds__(256, 2) static"), "{stdout}");
}

#[test]
fn an_empty_kernel_folder_warns_instead_of_passing_silently() {
    toolchain_root();
    let dir = fixture("contracts_hardening");
    std::fs::remove_file(dir.path().join("kernels/agree.cu")).unwrap();
    let (code, stdout, stderr) = report(&dir);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("warning: kernels: no .cu file in the kernel folder: no kernel was built"),
        "{stdout}\n{stderr}"
    );
}
