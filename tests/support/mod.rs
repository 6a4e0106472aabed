//! Test harness: the real binary, fixture crates in temp dirs, the toolchain installed once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{LazyLock, OnceLock};

mod binary;
pub use binary::binary;
pub mod commands;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// Variables that would change what the binary under test does; removed from every child: the
/// ones the environment table (`launch_engine::tooling::ALL`, which `--help` and the environment
/// page come from too) marks scrubbed: every variable the tools document, so one added there is
/// scrubbed here without an edit (a developer with `LAUNCH_CACHE_REMOTE` set gets the same
/// results as CI), and what cargo and CI give a process (a build script run by hand must not join
/// the harness's own jobserver).
pub static SCRUBBED: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let scrubbed = launch_engine::tooling::ALL.iter().filter(|v| v.is_scrubbed());
    scrubbed.flat_map(|v| v.names()).copied().collect()
});

/// `cargo-launch` with a clean environment. Fixture builds share one target dir, so their
/// dependencies compile once per test run.
pub fn cargo_launch() -> Command {
    let mut cmd = Command::new(binary());
    for v in SCRUBBED.iter() {
        cmd.env_remove(v);
    }
    cmd.env("CARGO_TARGET_DIR", fixtures_target());
    cmd.env("CARGO_TERM_COLOR", "never");
    cmd
}

/// The target folder the fixture builds share, made before any cargo runs in it. Cargo makes a
/// missing target folder atomically (a temporary folder renamed into place): two of them making
/// `target/fixtures` and a folder inside it (`launch-prebuild`, `launch-arch/...`) at once race,
/// and the loser fails with "No such file or directory" at its temporary path (seen on a clean
/// clone, where the first tests of a binary start together).
pub fn fixtures_target() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = root().join("target").join("fixtures");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        dir
    })
    .clone()
}

/// [`cargo_launch`] as an `assert_cmd` command, for `.assert().code(..).stderr(..)` checks.
pub fn launch_cmd() -> assert_cmd::Command {
    assert_cmd::Command::from_std(cargo_launch())
}

/// Installs the pinned toolchain (once per test process; `cargo launch setup` is idempotent and
/// locked across processes) and returns its root.
pub fn toolchain_root() -> PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let out = cargo_launch().args(["launch", "setup"]).output().expect("run cargo-launch setup");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cargo launch setup failed:\n{}", tail(&stderr, 40));
        let dir =
            launch_engine::tooling::toolchain::pinned_dir(&launch_engine::tooling::Env::cli()).expect("HOME is set");
        assert!(dir.join("nvidia/cuda_nvcc/bin/ptxas").is_file(), "setup left no ptxas in {}", dir.display());
        dir
    })
    .clone()
}

/// A copy of `fixtures/crates/<name>` in a fresh temp dir, with `{{ROOT}}` in its Cargo.toml
/// pointing at this repository.
pub fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(&format!("launch-{name}-")).tempdir().expect("temp dir");
    copy_dir(&root().join("fixtures/crates").join(name), dir.path());
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("fixture has Cargo.toml");
    // Cargo leaves a path package's folder out of its build-script hash, so two copies of one
    // fixture with the same package name would share an OUT_DIR in the shared target dir and, in
    // tests running at once, overwrite each other's outputs. Each copy gets its own name.
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let text = text.replace("{{ROOT}}", &root().display().to_string());
    let text = match text.find("name = \"") {
        Some(at) => {
            let end = at + "name = \"".len() + text[at + "name = \"".len()..].find('"').expect("quoted name");
            format!("{}-{}-{n}{}", &text[..end], std::process::id(), &text[end..])
        }
        None => text,
    };
    std::fs::write(&manifest, text).expect("write Cargo.toml");
    dir
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for e in std::fs::read_dir(from).expect("read fixture dir") {
        let e = e.expect("dir entry");
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy fixture file");
        }
    }
}

/// The document `text`, read with `read` (a schema type's `from_json`, which checks the version)
/// and checked to hold exactly that type's fields: written back, it is the JSON read, so a field
/// the schema does not know (or one it lost) fails the test. For the tests that pin a
/// document's shape; the others call `from_json` alone.
pub fn exact<T: serde::Serialize>(text: &str, read: impl FnOnce(&str) -> Result<T, launch_schema::ReadError>) -> T {
    let raw: serde_json::Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"));
    let doc = read(text).unwrap_or_else(|e| panic!("not the schema's document ({e}):\n{text}"));
    assert_eq!(serde_json::to_value(&doc).expect("serialises"), raw, "fields the schema does not know:\n{text}");
    doc
}

/// The last `n` lines of a command's output, for a failing test's message: the error a build
/// ends with, not the hundred lines of "Compiling ..." before it (CI shows a failure's first part).
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let skipped = lines.len().saturating_sub(n);
    let last = lines[skipped..].join("\n");
    if skipped == 0 {
        last
    } else {
        format!("[{skipped} line(s) before]\n{last}")
    }
}

/// Runs `cmd`, returning (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("run command");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of `fixtures/crates/bad_config` whose `[package.metadata.launch]` body (line 8 on) is `meta`.
pub fn with_metadata(meta: &str) -> tempfile::TempDir {
    let dir = fixture("bad_config");
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("arch = [\"sm_90\"]", meta)).unwrap();
    dir
}

/// Cargo in `dir` with a clean environment, into the fixtures' shared target folder.
pub fn cargo_in(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    for v in SCRUBBED.iter() {
        cmd.env_remove(v);
    }
    cmd.current_dir(dir).env("CARGO_TARGET_DIR", fixtures_target()).env("CARGO_TERM_COLOR", "never");
    cmd
}

/// `cargo build` of `dir` with its own kernel cache folder and the given toolchain, into the
/// fixtures' shared target folder.
pub fn cargo_build(dir: &Path, cache: &Path, toolchain: &Path) -> Command {
    let mut cmd = cargo_in(dir);
    cmd.arg("build").env("LAUNCH_CACHE_DIR", cache).env("LAUNCH_TOOLCHAIN", toolchain);
    cmd
}

/// `src` again at `dst`, every file a hard link (same file system: the cache and the temp folder
/// are both under /).
pub fn linked_copy(src: &Path, dst: &Path) {
    use std::fs;
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap().flatten() {
        let (from, to) = (e.path(), dst.join(e.file_name()));
        let kind = e.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&from).unwrap(), &to).unwrap();
        } else if kind.is_dir() {
            linked_copy(&from, &to);
        } else {
            fs::hard_link(&from, &to).or_else(|_| fs::copy(&from, &to).map(|_| ())).unwrap();
        }
    }
}

/// What a generated `kernels.rs` says about typed launches: how many kernels are `launch::Typed`
/// statics, and `NAME: why` for each one that stays an untyped `launch::Kernel`.
pub fn typed_statics(kernels_rs: &str) -> (usize, Vec<String>) {
    const UNTYPED: &str = "/// Untyped (launch it through `LoadedKernel::builder`): ";
    let (mut typed, mut untyped, mut why) = (0, Vec::new(), None);
    for line in kernels_rs.lines().map(str::trim) {
        if let Some(reason) = line.strip_prefix(UNTYPED) {
            why = Some(reason.trim_end_matches('.').to_string());
        } else if let Some(rest) = line.strip_prefix("pub static ") {
            let (name, ty) = rest.split_once(':').unwrap_or((rest, ""));
            if ty.trim_start().starts_with("::launch::Typed<") {
                typed += 1;
            } else if let Some(reason) = why.take() {
                untyped.push(format!("{name}: {reason}"));
            }
        }
    }
    (typed, untyped)
}

/// The template, copied with its path dependencies made absolute, in a workspace of its own (a
/// package name of its own, the workspace's lock file).
pub fn template_outside() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("launch-template-").tempdir().expect("temp dir");
    copy_dir(&root().join("template"), dir.path());
    let _ = std::fs::remove_dir_all(dir.path().join("target"));
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("template Cargo.toml");
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let text = text
        .replace("path = \"../", &format!("path = \"{}/", root().display()))
        .replace("name = \"launch-template\"", &format!("name = \"launch-template-{}-{n}\"", std::process::id()));
    std::fs::write(&manifest, format!("{text}\n[lib]\nname = \"launch_template\"\n\n[workspace]\n")).unwrap();
    std::fs::copy(root().join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copy Cargo.lock");
    dir
}

/// The newest `<build>/<package>-<hash>/out/launch` folder that holds `file` (cargo gives a build
/// script's output folder the package name and a hash; after a rebuild several may exist).
pub fn newest_launch_dir(build: &Path, package: &str, file: &str) -> Option<PathBuf> {
    let prefix = format!("{package}-");
    std::fs::read_dir(build)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path().join("out/launch"))
        .filter(|d| d.join(file).is_file())
        .max_by_key(|d| std::fs::metadata(d.join(file)).and_then(|m| m.modified()).ok())
}

/// Runs `git args` in `dir` as a throwaway identity (no signing), asserting that it succeeds.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A copy of `fixtures/crates/<name>` — one the workspace also builds as a dependency, whose path
/// dependencies are relative (`../../../launch`) — that builds outside the repository: those
/// paths made absolute, its own package name (the build-script hash leaves the folder out, see
/// [`fixture`]), and the workspace's lock file beside it, so nothing is resolved anew.
pub fn fixture_outside(name: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(&format!("launch-{name}-")).tempdir().expect("temp dir");
    copy_dir(&root().join("fixtures/crates").join(name), dir.path());
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("fixture has Cargo.toml");
    let text = text.replace("\"../../../", &format!("\"{}/", root().display()));
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let at = text.find("name = \"").expect("a package name") + "name = \"".len();
    let end = at + text[at..].find('"').expect("quoted name");
    let text = format!("{}-{}-{n}{}", &text[..end], std::process::id(), &text[end..]);
    std::fs::write(&manifest, text).expect("write Cargo.toml");
    std::fs::copy(root().join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copy Cargo.lock");
    dir
}

/// The record of kernel `name` (its symbol) on `arch` in a report document.
pub fn record<'a>(
    doc: &'a launch_schema::report::Document,
    name: &str,
    arch: &str,
) -> &'a launch_schema::report::Record {
    doc.records
        .iter()
        .find(|r| r.kernel.name == name && r.arch.to_string() == arch)
        .unwrap_or_else(|| panic!("no record of {name} on {arch}"))
}

/// Removes a build's copies of its cache entries alone (`OUT_DIR/launch/work/entries`; none
/// without a cache), so a rerun with another cache folder looks the jobs up there.
pub fn forget_copies(out_dir: &Path) {
    match std::fs::remove_dir_all(out_dir.join("launch/work/entries")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{e}"),
        _ => {}
    }
}
