//! Issue 33 item 2: a typed launch's wrong count, order, width, element type, mutability,
//! struct, half or vector type is a compile error in the user's crate that names the kernel and
//! the parameter; an untyped kernel has no typed launch; the typed launch is `unsafe` (memory
//! is the caller's contract); a struct named in `[package.metadata.launch.types]` whose layout is
//! not the PTX's does not compile.
//!
//! Each case of `fixtures/crates/typed_gpu/compile_fail/` (statements, put into `main.rs.in`)
//! becomes an example of one copy of the fixture; one `cargo check --examples --keep-going` checks them all, and every `//~` line of a
//! case must be in an error on that case's file (`ok.rs`, which has none, must compile: the
//! cases fail for what they say, not for a typo in the harness).

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{cargo_in, fixture_outside, root, run};

/// `file → error lines` of cargo's short-format output.
fn errors_by_file(stderr: &str) -> BTreeMap<String, Vec<String>> {
    let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in stderr.lines().filter(|l| l.contains(": error")) {
        let file = line.split(':').next().unwrap_or_default().to_string();
        by_file.entry(file).or_default().push(line.to_string());
    }
    by_file
}

#[test]
fn every_wrong_launch_is_a_compile_error_naming_the_kernel_and_parameter() {
    let dir = fixture_outside("typed_gpu");
    let cases = root().join("fixtures/crates/typed_gpu/compile_fail");
    let examples = dir.path().join("examples");
    std::fs::create_dir_all(&examples).unwrap();
    let wrapper = std::fs::read_to_string(cases.join("main.rs.in")).unwrap();
    let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in std::fs::read_dir(&cases).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".rs") {
            continue;
        }
        let case = std::fs::read_to_string(e.path()).unwrap();
        std::fs::write(examples.join(&name), wrapper.replace("    // CASE\n", &case)).unwrap();
        let wanted = case.lines().filter_map(|l| l.strip_prefix("//~ ")).map(str::to_string).collect();
        expected.insert(format!("examples/{name}"), wanted);
    }
    assert!(expected.len() >= 14, "the cases: {:?}", expected.keys());
    let (code, _, stderr) =
        run(cargo_in(dir.path()).args(["check", "--examples", "--keep-going", "--message-format", "short"]));
    assert_ne!(code, 0, "the wrong launches compiled:\n{stderr}");
    let errors = errors_by_file(&stderr);
    assert_eq!(errors.get("examples/ok.rs"), None, "the correct launches must compile:\n{stderr}");
    for (file, wanted) in &expected {
        if file.ends_with("/ok.rs") {
            continue;
        }
        let got = errors.get(file).unwrap_or_else(|| panic!("{file} compiled; it must not:\n{stderr}"));
        for w in wanted {
            assert!(
                got.iter().any(|l| l.contains(w.as_str())),
                "{file}: no error says `{w}`; its errors:\n{}",
                got.join("\n")
            );
        }
    }
    // Nothing else failed: every error is on a case's file.
    let stray: Vec<&String> = errors.keys().filter(|f| !expected.contains_key(*f)).collect();
    assert!(stray.is_empty(), "errors outside the cases: {stray:?}\n{stderr}");
}

#[test]
fn a_named_struct_of_another_layout_does_not_compile() {
    let dir = fixture_outside("typed_gpu");
    let lib = dir.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    // `Pad` is `{ double d; int i; }` in C++, 16 bytes: an f32 first makes the Rust one 8.
    std::fs::write(&lib, text.replace("    pub d: f64,\n    pub i: i32,", "    pub d: f32,\n    pub i: i32,")).unwrap();
    let (code, _, stderr) = run(cargo_in(dir.path()).args(["check", "--lib", "--message-format", "short"]));
    assert_ne!(code, 0, "{stderr}");
    let want = "`crate::Pad` is passed for the C++ `Pad`, which the PTX declares as 16 bytes aligned to 8";
    assert!(stderr.contains(want), "{stderr}");
    assert!(!Path::new(&dir.path().join("examples")).exists());
}

/// A documentation build (docs.rs: `DOCS_RS` set, no toolchain, nothing compiled) types every
/// kernel as `launch::signature::Uncompiled`, so a crate whose code launches its kernels still
/// builds there.
#[test]
fn a_documentation_build_of_code_that_launches_typed_compiles() {
    let dir = fixture_outside("typed_gpu");
    let cases = root().join("fixtures/crates/typed_gpu/compile_fail");
    let wrapper = std::fs::read_to_string(cases.join("main.rs.in")).unwrap();
    let case = std::fs::read_to_string(cases.join("ok.rs")).unwrap();
    std::fs::create_dir_all(dir.path().join("examples")).unwrap();
    std::fs::write(dir.path().join("examples/ok.rs"), wrapper.replace("    // CASE\n", &case)).unwrap();
    let (code, _, stderr) =
        run(cargo_in(dir.path()).env("DOCS_RS", "1").args(["check", "--examples", "--message-format", "short"]));
    assert_eq!(code, 0, "{stderr}");
    let kernels_rs = walk_for(&crate::support::fixtures_target().join("debug/build"), dir.path())
        .unwrap_or_else(|| panic!("no kernels.rs of the documentation build"));
    let text = std::fs::read_to_string(kernels_rs).unwrap();
    assert!(text.contains("type Params = ::launch::signature::Uncompiled;"), "{text}");
    assert!(text.contains("pub static AXPY: ::launch::Typed<AXPY>"), "{text}");
}

/// The newest `OUT_DIR/launch/kernels.rs` under `build` of the package at `dir` (its folder
/// name starts with the package name the copy was given).
fn walk_for(build: &std::path::Path, dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    let name = manifest.lines().find_map(|l| l.strip_prefix("name = \"")?.strip_suffix('"'))?;
    crate::support::newest_launch_dir(build, name, "kernels.rs").map(|d| d.join("kernels.rs"))
}
