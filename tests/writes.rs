//! Issue 19 item 5: every command that writes (`init`, `new`, `check --bless`, `explore --plot`,
//! `occupancy --plot`, `setup`) × a target it cannot write (a folder where a file goes, a path
//! under a regular file, a path in `/proc`, a folder that does not exist, a folder outside the
//! crate): exit 2 before any work, a message naming the path, and nothing created or changed.
//! The paths fail for root too (the tests run as root on some machines).

use std::path::{Path, PathBuf};

use crate::support::{cargo_launch, run};

/// Every entry under `dir` with its bytes (a folder's are empty), sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                out.push((p.clone(), Vec::new()));
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// A crate made by `cargo new` in `tmp/c`, with `extra` added under `[package]`.
fn crate_in(tmp: &Path, extra: &str) -> PathBuf {
    let dir = tmp.join("c");
    let mut c = std::process::Command::new(env!("CARGO"));
    c.args(["new", "--lib", "--vcs", "none", "--quiet"]).arg(&dir);
    let (code, _, stderr) = run(&mut c);
    assert_eq!(code, 0, "{stderr}");
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replacen("[package]\n", &format!("[package]\n{extra}"), 1)).unwrap();
    dir
}

/// One case: how to set it up (in a fresh folder, which holds a regular file `file` and a crate
/// `c`), the command line, the variables, and what the message must contain.
struct Case {
    name: &'static str,
    package: &'static str,
    setup: fn(&Path),
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    says: String,
}

fn cases(tmp: &Path) -> Vec<Case> {
    let t = |p: &str| tmp.join(p).display().to_string();
    let none: fn(&Path) = |_| {};
    let case = |name, args: &[&str], says: &str| Case {
        name,
        package: "",
        setup: none,
        args: args.iter().map(|a| a.to_string()).collect(),
        env: Vec::new(),
        says: says.to_string(),
    };
    let mut all = vec![
        // init: the kernel folder outside the crate or under a file; the build script a folder,
        // under a file, in /proc.
        case("init --kernels ../x", &["init", "--kernels", "../outside"], "--kernels `../outside` leaves the crate"),
        case("init --kernels Cargo.toml/k", &["init", "--kernels", "Cargo.toml/k"], "is a file, not a folder"),
        Case {
            setup: |c| std::fs::create_dir(c.join("build.rs")).unwrap(),
            ..case("init, build.rs a folder", &["init"], "build.rs")
        },
        Case {
            package: "build = \"Cargo.toml/build.rs\"\n",
            ..case("init, build script under a file", &["init"], "Cargo.toml/build.rs")
        },
        Case {
            package: "build = \"/proc/launch-build.rs\"\n",
            ..case("init, build script in /proc", &["init"], "/proc/launch-build.rs")
        },
        // new: under a file, in /proc, where a folder is.
        case("new file/x", &["new", &t("file/x")], "is a file, not a folder"),
        case("new /proc/x", &["new", "/proc/launch-new-x"], "cannot create `/proc/launch-new-x`"),
        case("new existing", &["new", &t("c")], "exists already"),
        // setup: the cache under a file, in /proc.
        Case {
            env: vec![("LAUNCH_CACHE_DIR", t("file/cache"))],
            ..case("setup, cache under a file", &["setup"], "is a file, not a folder")
        },
        Case {
            env: vec![("LAUNCH_CACHE_DIR", "/proc/launch-cache".into())],
            ..case("setup, cache in /proc", &["setup"], "cannot create files in /proc")
        },
    ];
    // The file arguments: a folder, `.`, under a file, in /proc, in a missing folder.
    let targets = [t("c"), ".".into(), t("file/x.out"), "/proc/launch-x.out".into(), t("no/such/x.out")];
    for target in targets {
        let mut with = |name, args: &[&str], says: &str| {
            let mut c = case(name, args, says);
            c.args.push(target.clone());
            c.says = says.replace("{}", &target);
            all.push(c);
        };
        with("check --bless --baseline", &["check", "--bless", "--baseline"], "cannot write the baseline `{}`");
        with("explore --plot", &["explore", "k", "--plot"], "writing the plot to {}:");
        with("occupancy --plot", &["occupancy", "--arch", "sm_90", "--plot"], "writing the plot to {}:");
    }
    all
}

#[test]
fn every_writing_command_refuses_a_target_it_cannot_write_before_any_work_and_writes_nothing() {
    let probe = tempfile::tempdir().unwrap();
    let n = cases(probe.path()).len();
    assert_eq!(n, 25, "6 commands: 5 init, 3 new, 2 setup, 5 targets × (check, explore, occupancy)");
    for i in 0..n {
        let tmp = tempfile::tempdir().unwrap();
        let c = cases(tmp.path()).swap_remove(i);
        std::fs::write(tmp.path().join("file"), "a regular file").unwrap();
        let dir = crate_in(tmp.path(), c.package);
        (c.setup)(&dir);
        let before = snapshot(tmp.path());
        let mut cmd = cargo_launch();
        cmd.arg("launch").args(&c.args).current_dir(&dir);
        for (k, v) in &c.env {
            cmd.env(k, v);
        }
        let (code, out, stderr) = run(&mut cmd);
        assert_eq!(code, 2, "{}: exit 2 for a target that cannot be written\n{out}\n{stderr}", c.name);
        assert!(stderr.contains(&c.says), "{}: the message says `{}`:\n{stderr}", c.name, c.says);
        assert!(!stderr.contains("Compiling") && !stderr.contains("panicked"), "{}: no work:\n{stderr}", c.name);
        assert_eq!(snapshot(tmp.path()), before, "{}: nothing created or changed", c.name);
        for p in ["/proc/launch-x.out", "/proc/launch-new-x", "/proc/launch-cache"] {
            assert!(!Path::new(p).exists(), "{}: {p}", c.name);
        }
    }
}

#[test]
fn init_writes_all_or_nothing_and_a_second_run_still_adds_the_example_kernel() {
    // A build script path init cannot write used to leave Cargo.toml edited and an empty kernels/
    // behind (exit 4), and the next init then skipped the example kernel.
    let tmp = tempfile::tempdir().unwrap();
    let dir = crate_in(tmp.path(), "");
    std::fs::create_dir(dir.join("build.rs")).unwrap();
    let (code, _, stderr) = run(cargo_launch().args(["launch", "init"]).current_dir(&dir));
    assert_eq!(code, 2, "{stderr}");
    assert!(!dir.join("kernels").exists(), "{stderr}");
    std::fs::remove_dir(dir.join("build.rs")).unwrap();
    let (code, out, stderr) = run(cargo_launch().args(["launch", "init"]).current_dir(&dir));
    assert_eq!(code, 0, "{out}\n{stderr}");
    assert!(dir.join("kernels/example.cu").is_file() && dir.join("build.rs").is_file(), "{out}");
}

/// `check --bless` without `--baseline` writes `launch-baseline.txt` beside each package's
/// Cargo.toml: one it cannot write (here a folder) is refused before anything is built, exit 2.
#[test]
fn the_default_baseline_is_checked_before_the_build_too() {
    let dir = crate::support::fixture("multi");
    std::fs::create_dir(dir.path().join("launch-baseline.txt")).unwrap();
    let before = snapshot(dir.path());
    let (code, out, stderr) = run(cargo_launch().args(["launch", "check", "--bless"]).current_dir(dir.path()));
    assert_eq!(code, 2, "{out}\n{stderr}");
    assert!(stderr.contains("launch-baseline.txt"), "{stderr}");
    assert!(!stderr.contains("Compiling") && !stderr.contains("panicked"), "no build: {stderr}");
    assert_eq!(snapshot(dir.path()), before, "nothing written");
}
