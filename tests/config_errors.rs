//! Issue 11, items 9 and 12: configuration errors through the real binary name the full key path,
//! `Cargo.toml:LINE:COL` of the value, the value as written and what is expected in TOML terms
//! (never serde's "invalid type ... expected i64"), exit 2, and a `kernels` link that loops or
//! dangles says so.

use std::process::Command;

use crate::support::{cargo_launch, fixture, run, with_metadata};

/// `cargo launch report` on `dir`: (exit code, stderr).
fn report(dir: &tempfile::TempDir) -> (i32, String) {
    let (code, _, stderr) =
        run(cargo_launch().args(["launch", "report", "--manifest-path"]).arg(dir.path().join("Cargo.toml")));
    (code, stderr)
}

#[test]
fn type_errors_name_the_key_the_position_the_value_and_what_is_expected() {
    let a = "arch = [\"sm_90\"]\n";
    let cases: &[(String, &str)] = &[
        // The six examples of the issue.
        (format!("{a}threads = \"x\""), "Cargo.toml:9:11: `package.metadata.launch.threads`: \"x\" is a string; expected an integer from 1 to 1024"),
        ("arch = \"sm_90\"".into(), "Cargo.toml:8:8: `package.metadata.launch.arch`: \"sm_90\" is a string; expected a list of arch names such as [\"sm_90\"]"),
        ("arch = [\"sm_90\", 90]".into(), "Cargo.toml:8:18: `package.metadata.launch.arch[1]`: 90 is an integer; expected an arch name such as \"sm_90\""),
        (format!("{a}threads = 128.5"), "Cargo.toml:9:11: `package.metadata.launch.threads`: 128.5 is a floating-point number; expected an integer from 1 to 1024"),
        (format!("{a}kernel = 5"), "Cargo.toml:9:10: `package.metadata.launch.kernel`: 5 is an integer; expected a table of per-kernel settings such as [package.metadata.launch.kernel.my_kernel]"),
        (format!("{a}include = \"inc\""), "Cargo.toml:9:11: `package.metadata.launch.include`: \"inc\" is a string; expected a list of folder paths such as [\"include\"]"),
        // A key of a per-kernel table, a range and a nested value.
        (format!("{a}[package.metadata.launch.kernel.poly_eval]\nthreads = 2048"), "Cargo.toml:10:11: `package.metadata.launch.kernel.poly_eval.threads`: 2048 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
        (format!("{a}max-spill-bytes = -1"), "Cargo.toml:9:19: `package.metadata.launch.max-spill-bytes`: -1 is not a byte count; expected a non-negative integer number of bytes (0 to 4294967295)"),
        (format!("{a}defines = {{ N = [128] }}"), "Cargo.toml:9:17: `package.metadata.launch.defines.N`: [128] is a list; expected a string, integer, floating-point number or boolean (the macro's value)"),
    ];
    for (meta, expected) in cases {
        let dir = with_metadata(meta);
        let (code, stderr) = report(&dir);
        assert_eq!(code, 2, "{meta}: a configuration error exits 2\n{stderr}");
        assert!(
            stderr.contains(&format!("{}/{expected}", dir.path().display())),
            "{meta}: expected\n{expected}\nin:\n{stderr}"
        );
        for rust in ["invalid type", "i64", "sequence", "panicked"] {
            assert!(!stderr.contains(rust), "{meta}: `{rust}` in:\n{stderr}");
        }
    }
}

#[cfg(unix)]
#[test]
fn a_kernels_folder_that_links_to_itself_is_called_a_loop() {
    let dir = fixture("bad_config");
    std::fs::remove_dir_all(dir.path().join("kernels")).unwrap();
    std::os::unix::fs::symlink("kernels", dir.path().join("kernels")).unwrap();
    let (code, stderr) = report(&dir);
    assert_eq!(code, 2, "{stderr}");
    let d = dir.path().display();
    assert!(
        stderr.contains(&format!(
            "{d}/Cargo.toml:7:1: `package.metadata.launch.kernels`: the default kernel folder `{d}/kernels` is a symbolic-link loop (it points to `kernels`, back to itself)"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("does not exist"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn a_dangling_kernels_link_names_its_missing_target() {
    let dir = with_metadata("arch = [\"sm_90\"]\nkernels = \"cuda\"");
    std::os::unix::fs::symlink("generated/cuda", dir.path().join("cuda")).unwrap();
    let (code, stderr) = report(&dir);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("Cargo.toml:9:11: `package.metadata.launch.kernels`: `cuda` is a symbolic link to `generated/cuda`, which does not exist; expected a folder of .cu files, relative to Cargo.toml"),
        "{stderr}"
    );
}

/// `LAUNCH_ARCH` is read by the build script: a bad entry is named with its position in the list.
#[test]
fn a_bad_launch_arch_entry_is_named_with_its_position() {
    let dir = fixture("bad_config");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["check", "--manifest-path"]).arg(dir.path().join("Cargo.toml"));
    for v in crate::support::SCRUBBED.iter() {
        cmd.env_remove(v);
    }
    cmd.env("CARGO_TARGET_DIR", crate::support::fixtures_target());
    cmd.env("LAUNCH_ARCH", "sm_90,sm_9O");
    let (code, _, stderr) = run(&mut cmd);
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("environment: `LAUNCH_ARCH`: entry 2 of `sm_90,sm_9O`: `sm_9O` is not a GPU architecture (did you mean `sm_90`?)"),
        "{stderr}"
    );
    assert!(stderr.contains("valid choices: sm_50"), "{stderr}");
}

/// An absolute include folder that is not there is a configuration error at its value (exit 2),
/// named as written, like a relative one.
#[test]
fn a_missing_absolute_include_folder_is_located() {
    let gone = tempfile::tempdir().unwrap().path().join("include");
    let dir = with_metadata(&format!("arch = [\"sm_90\"]\ninclude = [{:?}]", gone.display().to_string()));
    let (code, stderr) = report(&dir);
    assert_eq!(code, 2, "{stderr}");
    let expected = format!(
        "Cargo.toml:9:12: `package.metadata.launch.include[0]`: `{}` does not exist; expected an include folder \
         (absolute, as given)",
        gone.display()
    );
    assert!(stderr.contains(&format!("{}/{expected}", dir.path().display())), "expected\n{expected}\nin:\n{stderr}");
}
