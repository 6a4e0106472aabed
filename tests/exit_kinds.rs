//! Issue 19 item 2: the exit code follows the error's kind wherever it is found. A configuration
//! error is 2 and a toolchain problem 3 whether `cargo launch` finds it or the build script does
//! (which records the kind in `OUT_DIR/launch/diagnostics.json`); every documented variable with a
//! bad value is refused, naming itself, by both.

use std::process::Command;

use crate::support::{cargo_launch, fixture, run, toolchain_root, SCRUBBED};

/// Each checked variable with a bad value (`LAUNCH_COMPILE_TIMEOUT` with each way to be wrong).
const BAD_VARIABLES: &[(&str, &str)] = &[
    ("LAUNCH_CACHE_DIR", "relative/cache"),
    ("LAUNCH_NO_SYSTEM_TOOLCHAIN", "maybe"),
    ("LAUNCH_PYTHON", "/"),
    ("LAUNCH_ARCH", "sm_9O"),
    ("LAUNCH_NO_CACHE", "maybe"),
    ("LAUNCH_ALL_PTX", "maybe"),
    ("LAUNCH_BUILD_DEBUG", "2"),
    ("LAUNCH_COMPILE_TIMEOUT", "abc"),
    ("LAUNCH_COMPILE_TIMEOUT", "-1"),
    ("LAUNCH_COMPILE_TIMEOUT", "0"),
    ("LAUNCH_COMPILE_TIMEOUT", "99999999999999999999999"),
    ("LAUNCH_NVDISASM", "/nonexistent/nvdisasm"),
    ("LAUNCH_NO_AUTO_SETUP", "maybe"),
    ("CARGO_NET_OFFLINE", "maybe"),
];

/// Every documented variable × a bad value, through `report` and `check`: exit 2, the variable
/// named, nothing built (these exited 0 or 4: `LAUNCH_NO_CACHE=maybe` turned the cache off).
/// `LAUNCH_TOOLCHAIN` is the toolchain's: a file there is exit 3 saying it is a file.
#[test]
fn every_documented_variable_with_a_bad_value_exits_2_naming_it() {
    let dir = fixture("bad_config");
    let mut cases = 0;
    for (name, value) in BAD_VARIABLES {
        for command in ["report", "check"] {
            let (code, stdout, stderr) = run(cargo_launch()
                .args(["launch", command, "--no-setup", "--manifest-path"])
                .arg(dir.path().join("Cargo.toml"))
                .env(name, value));
            assert_eq!(code, 2, "{command} with {name}={value}:\n{stdout}\n{stderr}");
            assert!(stderr.contains(&format!("error: environment: `{name}`: ")), "{name}={value}: {stderr}");
            assert!(!stderr.contains("Compiling") && !stderr.contains("panicked"), "{name}={value}: {stderr}");
            assert_eq!(stdout, "", "{command} with {name}={value}: no verdict for a check that did not run");
            cases += 1;
        }
    }
    assert_eq!(cases, 28);
    // The message for a huge limit does not contradict itself (it said "not a whole number").
    let (_, _, stderr) = run(cargo_launch()
        .args(["launch", "report", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .env("LAUNCH_COMPILE_TIMEOUT", "99999999999999999999999"));
    assert!(stderr.contains("is more than the largest limit, 86400") && !stderr.contains("not a whole"), "{stderr}");

    let (code, _, stderr) = run(cargo_launch()
        .args(["launch", "report", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .env("LAUNCH_TOOLCHAIN", "/etc/passwd"));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("LAUNCH_TOOLCHAIN=/etc/passwd: is a file, not a toolchain folder"), "{stderr}");
}

/// The build script refuses the same values by itself (a plain `cargo check`), naming the
/// variable, and records the failure as a configuration error. `CARGO_NET_OFFLINE` is cargo's
/// own: cargo refuses a bad one before any build script runs.
#[test]
fn the_build_script_refuses_the_same_values_and_records_a_config_error() {
    let dir = fixture("bad_config");
    let target = crate::support::fixtures_target();
    for (name, value) in BAD_VARIABLES.iter().filter(|(n, _)| *n != "CARGO_NET_OFFLINE") {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["check", "--manifest-path"]).arg(dir.path().join("Cargo.toml"));
        for v in SCRUBBED.iter() {
            cmd.env_remove(v);
        }
        cmd.env("CARGO_TARGET_DIR", &target).env(name, value);
        let (code, _, stderr) = run(&mut cmd);
        assert_ne!(code, 0, "{name}={value}: {stderr}");
        assert!(stderr.contains(&format!("error: launch-build: environment: `{name}`: ")), "{name}={value}: {stderr}");
        // A failed build script reports no OUT_DIR: its document is found by the package's name.
        let doc = diagnostics_of(&target, &dir);
        assert_eq!(doc["kind"], "config", "{name}={value}: {doc}");
    }
}

/// The newest `diagnostics.json` of the fixture copy in `dir` under the shared target folder.
fn diagnostics_of(target: &std::path::Path, dir: &tempfile::TempDir) -> serde_json::Value {
    let manifest = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
    let name = manifest.split("name = \"").nth(1).and_then(|r| r.split('"').next()).unwrap().to_string();
    let mut docs: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(target.join("debug/build"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("{name}-")))
        .map(|e| e.path().join("out/launch/diagnostics.json"))
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    docs.sort();
    let (_, newest) = docs.pop().expect("the failed build script wrote diagnostics.json");
    serde_json::from_str(&std::fs::read_to_string(&newest).expect("diagnostics.json")).expect("JSON")
}

/// One configuration key only the build script can judge, with a bad value: what the
/// fixture's Cargo.toml gets, a file to add, and the key the error names.
struct BadKey {
    what: &'static str,
    table: &'static str,
    extra_file: Option<(&'static str, &'static str)>,
    key: &'static str,
}

const BAD_KEYS: &[BadKey] = &[
    BadKey {
        what: "a tune table that names no kernel",
        table: "[package.metadata.launch.tune.nope]\nthreads = [128]\n",
        extra_file: None,
        key: "package.metadata.launch.tune.nope",
    },
    BadKey {
        what: "a tune table that names a kernel of two files",
        table: "[package.metadata.launch.tune.k]\nthreads = [128]\n",
        extra_file: Some(("kernels/k2.cu", "extern \"C\" __global__ void k(int* p) { p[0] = 2; }\n")),
        key: "package.metadata.launch.tune.k",
    },
    BadKey {
        what: "two tune tables of one kernel",
        table: "[package.metadata.launch.tune.k]\nthreads = [128]\n[package.metadata.launch.tune.\"k.cu::k\"]\nthreads = [64]\n",
        extra_file: None,
        key: "package.metadata.launch.tune.\"k.cu::k\"",
    },
    BadKey {
        what: "a cliffs grid over 64 variants once compiled",
        table: "[package.metadata.launch.tune.k]\nthreads = [32, 64]\nmin_blocks = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]\nmax_regs = \"cliffs\"\n",
        extra_file: None,
        key: "package.metadata.launch.tune.k",
    },
    BadKey {
        what: "a host pattern that matches nothing",
        table: "host = [\"nope/*.cu\"]\n",
        extra_file: None,
        key: "package.metadata.launch.host[0]",
    },
    BadKey {
        what: "a host pattern that matches only an excluded file",
        table: "exclude = [\"k2.cu\"]\nhost = [\"k2.cu\"]\n",
        extra_file: Some(("kernels/k2.cu", "extern \"C\" __global__ void k2(int* p) { p[0] = 2; }\n")),
        key: "package.metadata.launch.host[0]",
    },
    BadKey {
        what: "a host file with toolchain 12.9 (no nvcc)",
        table: "host = [\"k.cu\"]\n",
        extra_file: None,
        key: "package.metadata.launch.host[0]",
    },
];

/// Every configuration key the build script judges, with a bad value: exit 2 (was 4) from
/// `report` and `check`, the error at `Cargo.toml:LINE:COL` of the key's line.
#[test]
fn every_key_the_build_script_judges_exits_2_at_its_line() {
    toolchain_root();
    for bad in BAD_KEYS {
        let dir = fixture("bad_config");
        let manifest = dir.path().join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        // Key-value lines go into [package.metadata.launch], tables after it.
        let anchor = "arch = [\"sm_90\"]\n";
        let at = text.find(anchor).expect("the fixture's arch line") + anchor.len();
        let edited = format!("{}{}{}", &text[..at], bad.table, &text[at..]);
        std::fs::write(&manifest, &edited).unwrap();
        if let Some((file, source)) = bad.extra_file {
            std::fs::write(dir.path().join(file), source).unwrap();
        }
        let first = text[..at].lines().count() + 1;
        let last = first + bad.table.lines().count() - 1;
        for command in ["report", "check"] {
            let (code, stdout, stderr) =
                run(cargo_launch().args(["launch", command, "--no-setup", "--manifest-path"]).arg(&manifest));
            assert_eq!(code, 2, "{}: {command}:\n{stdout}\n{stderr}", bad.what);
            let located = (first..=last).any(|line| {
                stderr.lines().any(|l| {
                    l.split(&format!("Cargo.toml:{line}:")).nth(1).is_some_and(|rest| {
                        rest.split(':').next().is_some_and(|col| col.parse::<u32>().is_ok_and(|c| c > 0))
                            && rest.contains(&format!("`{}`", bad.key))
                    })
                })
            });
            assert!(located, "{}: {command}: no `Cargo.toml:{first}..{last}:COL: `{}``:\n{stderr}", bad.what, bad.key);
        }
    }
}
