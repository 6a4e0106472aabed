use std::process::Command;

use predicates::prelude::*;
use predicates::str::contains;

use crate::support::{cargo_launch, fixture, launch_cmd, run, toolchain_root, with_metadata};

fn report(dir: &tempfile::TempDir) -> (i32, String, String) {
    run(cargo_launch().args(["launch", "report", "--manifest-path"]).arg(dir.path().join("Cargo.toml")))
}

#[test]
fn every_config_error_names_the_key_the_value_and_the_choices() {
    let cases: &[(&str, &[&str])] = &[
        (
            "archs = [\"sm_90\"]",
            &[
                "Cargo.toml:8:1",
                "unknown key `archs` (did you mean `arch`?)",
                "arch, kernels, include, defines, threads",
            ],
        ),
        (
            "arch = [\"sm_9O\"]",
            &[
                "Cargo.toml:8:9",
                "`package.metadata.launch.arch[0]`",
                "`sm_9O` is not a GPU architecture",
                "did you mean `sm_90`",
                "valid choices: sm_50",
            ],
        ),
        ("arch = [\"sm_91\"]", &["`sm_91` is not a GPU architecture", "sm_121f"]),
        ("arch = [\"90\"]", &["`90` is not a GPU architecture (did you mean `sm_90`?)"]),
        ("arch = []", &["`package.metadata.launch.arch`", "the list is empty", "valid choices"]),
        ("arch = \"sm_90\"", &["\"sm_90\" is a string; expected a list of arch names such as [\"sm_90\"]"]),
        (
            "arch = [90]",
            &["`package.metadata.launch.arch[0]`: 90 is an integer; expected an arch name such as \"sm_90\""],
        ),
        ("arch = [\"sm_90\"]\nthreads = 4096", &["`package.metadata.launch.threads`", "4096 is not a block size"]),
        (
            "arch = [\"sm_90\"]\nkernels = \"src/cuda\"",
            &["`package.metadata.launch.kernels`", "`src/cuda` does not exist"],
        ),
    ];
    for (meta, expected) in cases {
        let dir = with_metadata(meta);
        let (code, _, stderr) = report(&dir);
        assert_eq!(code, 2, "{meta}: config errors exit 2\n{stderr}");
        for e in *expected {
            assert!(stderr.contains(e), "{meta}: expected `{e}` in:\n{stderr}");
        }
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn the_build_script_reports_config_errors_itself() {
    let dir = with_metadata("arch = [\"sm_9O\"]");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["check", "--manifest-path"]).arg(dir.path().join("Cargo.toml"));
    cmd.env("CARGO_TARGET_DIR", crate::support::fixtures_target());
    let (code, _, stderr) = run(&mut cmd);
    assert_ne!(code, 0);
    assert!(stderr.contains("error: launch-build: "), "{stderr}");
    assert!(stderr.contains("`sm_9O` is not a GPU architecture (did you mean `sm_90`?)"), "{stderr}");
}

#[test]
fn a_compile_error_shows_nvrtcs_message_with_file_and_line() {
    toolchain_root();
    let dir = fixture("broken_kernel");
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("NVRTC 12.9.86 failed to compile kernels/broken.cu for sm_90"), "{stderr}");
    assert!(stderr.contains("kernels/broken.cu(2): error: identifier \"undefined_name\" is undefined"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_missing_toolchain_says_where_it_looked_and_how_to_fix_it() {
    let empty = tempfile::tempdir().unwrap();
    let dir = fixture("bad_config");
    launch_cmd()
        .args(["launch", "report", "--no-setup", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .env("LAUNCH_CACHE_DIR", empty.path())
        .env("LAUNCH_NO_SYSTEM_TOOLCHAIN", "1")
        .assert()
        .code(3)
        .stderr(
            contains("no CUDA toolchain (NVRTC + ptxas) found. Searched, in order:")
                .and(contains(format!("cargo-launch cache: {}", empty.path().join("toolchain/cuda-12.9.86").display())))
                .and(contains("skipped (LAUNCH_NO_SYSTEM_TOOLCHAIN is set)"))
                .and(contains("fix: run `cargo launch setup`")),
        );

    // The build script alone (plain `cargo build`) gives the same message.
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["check", "--manifest-path"]).arg(dir.path().join("Cargo.toml"));
    cmd.env("CARGO_TARGET_DIR", crate::support::fixtures_target());
    cmd.env("LAUNCH_CACHE_DIR", empty.path()).env("LAUNCH_NO_SYSTEM_TOOLCHAIN", "1");
    let (code, _, stderr) = run(&mut cmd);
    assert_ne!(code, 0);
    assert!(stderr.contains("error: launch-build: no CUDA toolchain (NVRTC + ptxas) found"), "{stderr}");
    assert!(stderr.contains("fix: run `cargo launch setup`"), "{stderr}");
}

#[test]
fn bad_command_lines_exit_2_and_help_teaches() {
    launch_cmd()
        .args(["launch", "report", "--arch", "sm_91"])
        .assert()
        .code(2)
        .stderr(contains("`sm_91` is not a GPU architecture; valid choices: sm_50"));
    launch_cmd().args(["launch", "report", "--format", "xml"]).assert().code(2).stderr(contains("xml"));
    launch_cmd().args(["launch", "frobnicate"]).assert().code(2).stderr(contains("frobnicate"));
    launch_cmd().args(["launch", "--help"]).assert().success().stdout(
        contains("report").and(contains("setup")).and(contains("Exit codes:")).and(contains("LAUNCH_TOOLCHAIN")),
    );
    // Run directly, without `cargo`, the subcommand name may be left out.
    launch_cmd().args(["report", "--help"]).assert().success().stdout(contains("--manifest-path"));
    launch_cmd().args(["check", "--help"]).assert().success().stdout(contains("--bless").and(contains("--deny")));
}

/// `LAUNCH_TOOLCHAIN` pointing at an empty or a missing folder: exit 3 naming the variable, and
/// nothing installed (before, `report` downloaded the 321 MB of wheels and then failed with 1).
#[test]
fn a_toolchain_override_that_points_nowhere_exits_3_and_installs_nothing() {
    let dir = fixture("bad_config");
    let empty_toolchain = tempfile::tempdir().unwrap();
    let missing_toolchain = empty_toolchain.path().join("missing");
    for toolchain in [empty_toolchain.path(), missing_toolchain.as_path()] {
        for command in ["report", "check"] {
            let cache = tempfile::tempdir().unwrap();
            launch_cmd()
                .args(["launch", command, "--manifest-path"])
                .arg(dir.path().join("Cargo.toml"))
                .env("LAUNCH_TOOLCHAIN", toolchain)
                .env("LAUNCH_CACHE_DIR", cache.path())
                // Were an install attempted after all, it fails at once instead of downloading (a
                // program that exists: a missing one is refused before anything, exit 2).
                .env("LAUNCH_PYTHON", "/bin/false")
                .assert()
                .code(3)
                .stderr(
                    contains(format!("error: no CUDA toolchain in LAUNCH_TOOLCHAIN={}: ", toolchain.display()))
                        .and(contains("while it is set nothing else is searched and nothing is installed"))
                        .and(contains("installing").not()),
                );
            let left: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
            assert!(left.is_empty(), "{command}: the cache dir must stay empty: {left:?}");
        }
    }
}

/// A ptxas that is not executable: exit 3, and the reason printed once (it was printed twice: the
/// tool error's own text and then its source); since issue 32 class 1 it is found before it is
/// run, a damaged file named with `cargo launch setup`.
#[cfg(unix)]
#[test]
fn a_ptxas_that_cannot_start_is_named_once_with_its_reason() {
    let toolchain = tempfile::tempdir().unwrap();
    let lib = toolchain.path().join("nvidia/cuda_nvrtc/lib");
    let bin = toolchain.path().join("nvidia/cuda_nvcc/bin");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(lib.join("libnvrtc.so.12"), b"not loaded").unwrap();
    std::fs::write(lib.join("libnvrtc-builtins.so.12.9"), b"not loaded").unwrap();
    std::fs::write(bin.join("ptxas"), b"#!/bin/sh\necho never runs\n").unwrap(); // mode 644
    let dir = fixture("bad_config");
    let out = launch_cmd()
        .args(["launch", "report", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .env("LAUNCH_TOOLCHAIN", toolchain.path())
        .assert()
        .code(3)
        .stderr(contains(format!("{}/ptxas is damaged (not executable)", bin.display())))
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("not executable").count(), 1, "{stderr}");
    assert!(stderr.contains("`cargo launch setup`"), "{stderr}");
}

/// Every exit code of the exit-code table (`docs/src/reference/exit-codes.md`), one case per path (the toolchain, configuration and
/// baseline cases have their own tests above and in check.rs).
#[test]
fn exit_codes_are_the_documented_ones() {
    let manifest = |d: &tempfile::TempDir| d.path().join("Cargo.toml");

    // 2: a crate that builds with launch-build but has no [package.metadata.launch] (was 1: the
    // build script's failure surfaced as a failed `cargo check`).
    let no_table = fixture("bad_config");
    let text = std::fs::read_to_string(manifest(&no_table)).unwrap();
    std::fs::write(manifest(&no_table), text.replace("[package.metadata.launch]\narch = [\"sm_90\"]\n", "")).unwrap();
    for command in ["report", "check"] {
        launch_cmd().args(["launch", command, "--manifest-path"]).arg(manifest(&no_table)).assert().code(2).stderr(
            contains("`package.metadata.launch`: missing table; add to Cargo.toml:").and(contains("failed").not()),
        );
    }

    // 2: a --manifest-path that is not there, a package that is not in the workspace.
    launch_cmd().args(["launch", "check", "--manifest-path", "/nonexistent/Cargo.toml"]).assert().code(2);
    let dir = fixture("bad_config");
    launch_cmd()
        .args(["launch", "report", "-p", "nope", "--manifest-path"])
        .arg(manifest(&dir))
        .assert()
        .code(2)
        .stderr(contains("package `nope` is not in this workspace"));

    // 2: a selection in which no package builds kernels with launch-build.
    toolchain_root();
    let plain = fixture("bad_config");
    std::fs::write(plain.path().join("build.rs"), "fn main() {}\n").unwrap();
    std::fs::write(plain.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    launch_cmd()
        .args(["launch", "report", "--manifest-path"])
        .arg(manifest(&plain))
        .assert()
        .code(2)
        .stderr(contains("no selected package builds kernels with launch-build"));

    // 2: the calculator's bad values.
    launch_cmd().args(["launch", "occupancy", "--arch", "sm_90", "--threads", "0"]).assert().code(2);

    // 4: a kernel that does not compile, under `check` as under `report` (was 1, `check`'s verdict).
    let broken = fixture("broken_kernel");
    launch_cmd()
        .args(["launch", "check", "--manifest-path"])
        .arg(manifest(&broken))
        .assert()
        .code(4)
        .stderr(contains("kernels/broken.cu(2): error: identifier \"undefined_name\" is undefined"));

    // 3: no toolchain and none may be installed, for check and setup too.
    let empty = tempfile::tempdir().unwrap();
    launch_cmd()
        .args(["launch", "check", "--no-setup", "--manifest-path"])
        .arg(manifest(&dir))
        .env("LAUNCH_CACHE_DIR", empty.path())
        .env("LAUNCH_NO_SYSTEM_TOOLCHAIN", "1")
        .assert()
        .code(3)
        .stderr(contains("no CUDA toolchain (NVRTC + ptxas) found"));
    launch_cmd()
        .args(["launch", "setup"])
        .env("LAUNCH_CACHE_DIR", empty.path())
        .env("CARGO_NET_OFFLINE", "true")
        .assert()
        .code(3)
        .stderr(contains("CARGO_NET_OFFLINE=true forbids downloading it"));

    // 0: the same crate once it is right.
    launch_cmd().args(["launch", "check", "--manifest-path"]).arg(manifest(&dir)).assert().code(0);
}

/// The installer's output (pip writes its progress to stdout) goes to stderr: on first use,
/// `report --format json` auto-installs the toolchain, and its stdout must hold only the JSON
/// document. Before, pip's "Collecting ..." lines came first on stdout.
#[cfg(unix)]
#[test]
fn the_installers_output_goes_to_stderr_so_stdout_holds_only_the_document() {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    let python = bin.path().join("python3");
    std::fs::write(&python, "#!/bin/sh\necho 'Collecting nvidia-fake-wheel (the fake pip of this test)'\nexit 1\n")
        .unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let dir = fixture("bad_config");
    let out = launch_cmd()
        .args(["launch", "report", "--format", "json", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .env("LAUNCH_CACHE_DIR", cache.path())
        .env("LAUNCH_NO_SYSTEM_TOOLCHAIN", "1")
        .env("LAUNCH_PYTHON", &python)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("Collecting nvidia-fake-wheel"), "the installer's output is shown:\n{stderr}");
    assert!(stdout.is_empty(), "stdout holds the installer's output:\n{stdout}");
}
