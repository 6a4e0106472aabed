//! `cargo launch check` on kernels that do not build: the build script's located errors
//! (`OUT_DIR/launch/diagnostics.json`) become `compile` findings at their lines, in every format,
//! and the exit code is the failed build's (4), on every run of the failure.

use launch_analysis::{FindingKind, Severity};
use launch_schema::check::Document;

use crate::support::{cargo_launch, fixture, run, toolchain_root};

fn check(dir: &tempfile::TempDir, format: &str) -> (i32, String, String) {
    run(cargo_launch()
        .args(["launch", "check", "--format", format, "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")))
}

#[test]
fn a_kernel_that_does_not_compile_is_a_located_compile_finding_in_text_json_and_sarif() {
    toolchain_root();
    let dir = fixture("broken_kernel");
    let (code, stdout, stderr) = check(&dir, "text");
    assert_eq!(code, 4, "the failed build's code:\n{stdout}\n{stderr}");
    assert!(
        stdout
            .contains("error[compile]: kernels/broken.cu:2: identifier \"undefined_name\" is undefined (NVRTC 12.9.86"),
        "{stdout}"
    );
    assert!(stdout.contains("the kernels did not build: 1 error, 0 warnings"), "{stdout}");
    assert!(stderr.contains("`cargo check` failed"), "cargo's own output still goes to stderr: {stderr}");

    // Run again: the build script fails the same way and rewrites the document, which is still
    // this run's (an unchanged failure must not read as an old one).
    let (code, stdout, _) = check(&dir, "json");
    assert_eq!(code, 4);
    let doc = Document::from_json(&stdout).expect("the check document");
    assert_eq!(doc.findings.len(), 1, "{stdout}");
    let f = &doc.findings[0];
    assert_eq!(
        (f.severity, f.kind, f.file.as_deref(), f.line),
        (Severity::Error, FindingKind::Compile, Some("kernels/broken.cu"), 2)
    );

    let (code, stdout, _) = check(&dir, "sarif");
    assert_eq!(code, 4);
    let log: serde_json::Value = serde_json::from_str(&stdout).expect("a SARIF log");
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "launch/compile");
    // The file itself, relative to the root (the fixture's folder: it is in no repository), not a
    // fallback with the line of another file.
    let place = &result["locations"][0]["physicalLocation"];
    assert_eq!(place["artifactLocation"]["uri"], "kernels/broken.cu", "{stdout}");
    assert_eq!(place["region"]["startLine"], 2);

    // Fixed, the build succeeds, its document is gone and no compile finding remains.
    std::fs::write(dir.path().join("kernels/broken.cu"), "extern \"C\" __global__ void k(int* p) { p[0] = 1; }\n")
        .unwrap();
    let (code, stdout, stderr) = check(&dir, "text");
    assert_ne!(code, 4, "{stdout}\n{stderr}");
    assert!(!stdout.contains("[compile]"), "{stdout}");
}

/// A build that fails before any file (a bad `LAUNCH_COMPILE_TIMEOUT`) has nothing to place: no
/// summary that would read as a clean check, no document, and exit 2, a configuration error (it
/// was 4: the kind of an error the build script found was lost).
#[test]
fn a_failure_located_nowhere_prints_no_verdict() {
    toolchain_root();
    let dir = fixture("broken_kernel");
    for format in ["text", "json", "sarif"] {
        let (code, stdout, stderr) = run(cargo_launch()
            .args(["launch", "check", "--format", format, "--manifest-path"])
            .arg(dir.path().join("Cargo.toml"))
            .env("LAUNCH_COMPILE_TIMEOUT", "abc"));
        assert_eq!(code, 2, "{stdout}\n{stderr}");
        assert_eq!(stdout, "", "{format}: no verdict for a check that did not run");
        assert!(stderr.contains("LAUNCH_COMPILE_TIMEOUT"), "{stderr}");
    }
}
