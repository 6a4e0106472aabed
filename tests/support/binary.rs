//! The `cargo-launch` binary under test. It belongs to another package, so cargo sets no
//! `CARGO_BIN_EXE_cargo-launch` for these tests (that needs the unstable artifact dependencies).
//! Instead the first test that needs it runs `cargo build -p cargo-launch --bin cargo-launch`
//! with the cargo, target folder and profile that built this test executable, and takes the
//! path from cargo's JSON messages. After `cargo test --workspace` that build is a no-op that
//! finds the binary fresh; after `cargo test -p launch-tests` it compiles it once. Cargo does not
//! hold its build lock while tests run, so the nested build cannot wait on the outer one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The path of the freshly built `cargo-launch` binary (built once per test process).
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(build)
}

fn build() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.arg("build").arg("--manifest-path").arg(super::root().join("Cargo.toml")).args([
        "-p",
        "cargo-launch",
        "--bin",
        "cargo-launch",
        "--message-format=json-render-diagnostics",
    ]);
    cmd.args(same_output_as(&exe));
    let out = cmd.output().expect("run cargo build");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "building the binary under test failed: {cmd:?}\n{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let path = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "cargo-launch")
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("{cmd:?} named no cargo-launch executable:\n{stdout}\n{stderr}"));
    assert!(path.is_file(), "{} does not exist after {cmd:?}", path.display());
    path
}

/// `--target-dir`, `--profile` and `--target` arguments for the binary to land where cargo put
/// `test_exe`: `<target dir>[/<triple>]/<profile folder>/deps/<test>-<hash>`.
fn same_output_as(test_exe: &Path) -> Vec<String> {
    let Some(profile_dir) = test_exe.parent().filter(|d| d.ends_with("deps")).and_then(Path::parent) else {
        // Not a layout cargo writes (a copied test binary): cargo's defaults.
        return Vec::new();
    };
    let folder = profile_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // The `dev` and `release` profiles (and `test` and `bench`, which inherit them) write to
    // `debug` and `release`; a custom profile writes to a folder of its own name.
    let profile = if folder == "debug" { "dev".to_string() } else { folder };
    let mut args = vec!["--profile".to_string(), profile];
    let Some(parent) = profile_dir.parent() else { return args };
    // Cargo tags the target folder's root; a cross build adds a folder named after the triple.
    match parent.parent() {
        Some(root) if !parent.join("CACHEDIR.TAG").is_file() && root.join("CACHEDIR.TAG").is_file() => {
            let triple = parent.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            args.extend(["--target-dir".to_string(), root.display().to_string(), "--target".to_string(), triple]);
        }
        _ => args.extend(["--target-dir".to_string(), parent.display().to_string()]),
    }
    args
}
