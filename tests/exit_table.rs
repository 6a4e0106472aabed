//! Issue 32 class 6: exit codes as the table says (`cargo_launch::EXIT_CODES`), in every case.
//!
//! * Every command that takes `--manifest-path` (read from clap's definition) × every kind of
//!   path that is no crate's manifest: exit 2 at once, naming the path, before any check (no
//!   `cargo` run, nothing written in the cache folder). Before, `doctor` ran its checks and
//!   exited 1 or 3, and the building commands went through `cargo metadata` (and `diff
//!   --toolchain` would install toolchains first).
//! * `prebuild` under `LAUNCH_TOOLCHAIN_PIN` naming another toolchain than the crate's, or none:
//!   exit 2 before any build, naming that variable. Before, a full build, then exit 4 with a fix
//!   naming `LAUNCH_TOOLCHAIN`.
//! * `cache clear` and `cache prune` × each way entries cannot be removed × each format: a
//!   warning per path, exit 4, the JSON listing them. Before, "removed 0 entries" and exit 0.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::commands::{self, Samples};
use crate::support::{cargo_launch, fixture, run};

/// A crate's manifest, for the command lines clap must take apart from the path under test.
const GOOD: &str = "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

/// Every kind of `--manifest-path` that is no crate's manifest, made under `tmp`: (what, path).
fn bad_manifests(tmp: &Path) -> Vec<(&'static str, PathBuf)> {
    let file = |dir: &str, name: &str, bytes: &[u8]| {
        let d = tmp.join(dir);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(name), bytes).unwrap();
        d.join(name)
    };
    vec![
        ("a path that is not there", PathBuf::from("/nonexistent")),
        ("a Cargo.toml that is not there", tmp.join("none/Cargo.toml")),
        ("a folder", tmp.to_path_buf()),
        ("an empty file", file("empty", "Cargo.toml", b"")),
        ("not TOML", file("garbage", "Cargo.toml", b"this is [not toml\n")),
        ("not UTF-8", file("binary", "Cargo.toml", &[0xff, 0xfe, 0x00, 0x01])),
        ("TOML without [package] or [workspace]", file("deps", "Cargo.toml", b"[dependencies]\nserde = \"1\"\n")),
        ("a manifest under another name", file("named", "manifest.toml", GOOD.as_bytes())),
    ]
}

/// A `cargo` that only records that it ran: a command that must not get as far as cargo.
fn fake_cargo(tmp: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let marker = tmp.join("cargo-ran");
    let script = tmp.join("fake-cargo");
    std::fs::write(&script, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", marker.display())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, marker)
}

#[test]
fn every_command_refuses_a_manifest_path_that_is_no_crate_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good/Cargo.toml");
    std::fs::create_dir_all(good.parent().unwrap()).unwrap();
    std::fs::write(&good, GOOD).unwrap();
    let (cargo, marker) = fake_cargo(tmp.path());
    let cache = tmp.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let files = [tmp.path().join("old.json"), tmp.path().join("new.json")];
    let samples = Samples { kernel: "k".into(), new_crate: tmp.path().join("new").display().to_string(), files };
    let (runnable, _) = commands::all();
    let takers: Vec<_> = runnable.iter().filter(|r| r.takes("manifest-path")).collect();
    let names: Vec<String> = takers.iter().map(|r| r.path.join(" ")).collect();
    for must in ["report", "check", "doctor", "prebuild", "init"] {
        assert!(names.iter().any(|n| n == must), "{must} takes --manifest-path: {names:?}");
    }
    let (mut cases, mut failed) = (0, Vec::new());
    for r in &takers {
        let line = r.line(&samples);
        commands::assert_parses(&[line.clone(), vec!["--manifest-path".into(), good.display().to_string()]].concat());
        for (what, path) in bad_manifests(tmp.path()) {
            cases += 1;
            let mut cmd = cargo_launch();
            cmd.current_dir(tmp.path()).arg("launch").args(&line).arg("--manifest-path").arg(&path);
            cmd.env("CARGO", &cargo).env("LAUNCH_CACHE_DIR", &cache).env("LAUNCH_NO_AUTO_SETUP", "1");
            let started = Instant::now();
            let (code, _, stderr) = run(&mut cmd);
            let took = started.elapsed();
            let case = format!("`{} --manifest-path {}` ({what})", line.join(" "), path.display());
            let cache_touched = std::fs::read_dir(&cache).unwrap().next().is_some();
            if code != 2
                || !stderr.contains(&path.display().to_string())
                || took > Duration::from_secs(3)
                || marker.exists()
                || cache_touched
            {
                let ran = std::fs::read_to_string(&marker).unwrap_or_default();
                failed.push(format!("{case}: exit {code} after {took:.1?}, cargo ran: {ran:?}, cache written: {cache_touched}\n{stderr}"));
                let _ = std::fs::remove_file(&marker);
                let _ = std::fs::remove_dir_all(&cache);
                std::fs::create_dir(&cache).unwrap();
            }
        }
    }
    assert_eq!(cases, takers.len() * 8);
    assert!(failed.is_empty(), "{} of {cases} cases failed:\n\n{}", failed.len(), failed.join("\n\n"));
}

#[test]
fn prebuild_refuses_a_toolchain_pin_other_than_the_crates_before_building() {
    let krate = fixture("cache");
    let crate_pin = launch_engine::tooling::toolchain::pin::DEFAULT.name;
    let mut values: Vec<&str> =
        launch_engine::tooling::toolchain::pin::PINS.iter().map(|p| p.name).filter(|n| *n != crate_pin).collect();
    values.push("99.9");
    let mut failed = Vec::new();
    for value in &values {
        let mut cmd = cargo_launch();
        cmd.current_dir(krate.path()).args(["launch", "prebuild", "--no-setup"]).env("LAUNCH_TOOLCHAIN_PIN", value);
        let started = Instant::now();
        let (code, _, stderr) = run(&mut cmd);
        let took = started.elapsed();
        // `cargo metadata` runs (the crate's pin is in its Cargo.toml), no build does.
        if code != 2
            || !stderr.contains(&format!("LAUNCH_TOOLCHAIN_PIN={value}")) && !stderr.contains("LAUNCH_TOOLCHAIN_PIN=`")
            || stderr.contains("Compiling")
            || took > Duration::from_secs(20)
        {
            failed.push(format!("LAUNCH_TOOLCHAIN_PIN={value}: exit {code} after {took:.1?}\n{stderr}"));
        }
    }
    assert!(!krate.path().join("launch-prebuilt").exists(), "nothing written");
    assert!(failed.is_empty(), "{} of {} cases failed:\n\n{}", failed.len(), values.len(), failed.join("\n\n"));
}

/// A cache root whose `kernels/ab/` holds three entries.
fn cache_with_entries(root: &Path) -> PathBuf {
    let shard = root.join("kernels/ab");
    std::fs::create_dir_all(&shard).unwrap();
    for i in 0..3 {
        std::fs::write(shard.join(format!("ab{}{i}", "0".repeat(61))), vec![7u8; 100]).unwrap();
    }
    shard
}

/// Whether `dir` refuses new entries (so also the removal of its entries) for this user.
fn refuses_changes(dir: &Path) -> bool {
    let probe = dir.join("probe");
    let refused = std::fs::write(&probe, "").is_err();
    let _ = std::fs::remove_file(&probe);
    refused
}

fn chattr(flag: &str, path: &Path) -> bool {
    Command::new("chattr").arg(flag).arg(path).output().is_ok_and(|o| o.status.success())
}

#[test]
fn cache_clear_and_prune_that_cannot_remove_entries_warn_and_fail() {
    // Each way, set up in a fresh cache root: a guard that undoes it, or None when this machine
    // cannot make it (root ignores folder permissions; chattr needs a file system and the right
    // to set the immutable flag).
    type Way = (&'static str, fn(&Path) -> Option<Box<dyn FnOnce()>>);
    let ways: [Way; 3] = [
        ("`kernels` is a file", |root| {
            std::fs::write(root.join("kernels"), "not a folder").unwrap();
            Some(Box::new(|| {}))
        }),
        ("the shard folder is immutable (chattr +i)", |root| {
            let shard = cache_with_entries(root);
            chattr("+i", &shard).then(|| {
                Box::new(move || {
                    chattr("-i", &shard);
                }) as Box<dyn FnOnce()>
            })
        }),
        ("the shard folder is read-only (mode 555)", |root| {
            use std::os::unix::fs::PermissionsExt;
            let shard = cache_with_entries(root);
            std::fs::set_permissions(&shard, std::fs::Permissions::from_mode(0o555)).unwrap();
            let undo = {
                let shard = shard.clone();
                move || {
                    let _ = std::fs::set_permissions(&shard, std::fs::Permissions::from_mode(0o755));
                }
            };
            if refuses_changes(&shard) {
                Some(Box::new(undo) as Box<dyn FnOnce()>)
            } else {
                undo();
                None
            }
        }),
    ];
    let (runnable, _) = commands::all();
    let actions: Vec<_> = runnable.iter().filter(|r| r.path.len() == 2 && r.path[0] == "cache").collect();
    let removing: Vec<_> = actions.iter().filter(|r| ["clear", "prune"].contains(&r.path[1].as_str())).collect();
    assert_eq!(removing.len(), 2, "cache clear and cache prune");
    let (mut cases, mut skipped, mut failed) = (0, Vec::new(), Vec::new());
    for (way, set_up) in ways {
        for action in &removing {
            for format in action.formats() {
                let tmp = tempfile::tempdir().unwrap();
                let root = tmp.path().join("cache");
                std::fs::create_dir(&root).unwrap();
                let Some(undo) = set_up(&root) else {
                    skipped.push(way);
                    continue;
                };
                cases += 1;
                let mut line = action.path.clone();
                if action.path[1] == "prune" {
                    line.extend(["--max-size".into(), "1".into()]);
                }
                line.extend(["--format".into(), format.clone()]);
                let mut cmd = cargo_launch();
                cmd.arg("launch").args(&line).env("LAUNCH_CACHE_DIR", &root);
                let (code, stdout, stderr) = run(&mut cmd);
                undo();
                let case = format!("`{}` ({way})", line.join(" "));
                let warned = stderr.contains(&format!("warning: `cache {}` could not remove", action.path[1]));
                let listed = format != "json"
                    || serde_json::from_str::<serde_json::Value>(&stdout)
                        .is_ok_and(|d| d["failed"].as_array().is_some_and(|f| !f.is_empty()));
                if code != 4 || !warned || !listed {
                    failed.push(format!(
                        "{case}: exit {code}, warned: {warned}, JSON lists them: {listed}\n{stdout}\n{stderr}"
                    ));
                }
            }
        }
    }
    if !skipped.is_empty() {
        eprintln!("skipped on this machine: {skipped:?}");
    }
    assert!(cases >= 4, "at least `kernels` a file × 2 actions × 2 formats");
    assert!(failed.is_empty(), "{} of {cases} cases failed:\n\n{}", failed.len(), failed.join("\n\n"));
}
