//! Issue 32, class 1: a damaged toolchain file never crashes anything. Every file the build loads,
//! runs or reads of the 12.9 toolchain × each way of damaging it, through `cargo launch doctor`,
//! `cargo launch report` (which builds through the build script) and `cargo build`: no death by
//! a signal; the toolchain's exit code (doctor and report 3, cargo's 101 for its build script);
//! the file named and `cargo launch setup`. The toolchain is a hard-linked copy in a cache folder
//! of the test's own: a file is damaged by replacing its link (never the installed file), a
//! folder by moving it aside, and each is put back before the next case.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use crate::support::{cargo_launch, fixture, linked_copy, run, toolchain_root, SCRUBBED};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Damage {
    Truncated,
    ZeroBytes,
    NotExecutable,
    Directory,
    Missing,
}

const DAMAGES: [Damage; 5] =
    [Damage::Truncated, Damage::ZeroBytes, Damage::NotExecutable, Damage::Directory, Damage::Missing];

/// What a file is to the build: loaded (NVRTC, its builtins), run (ptxas; nvdisasm, which only
/// `report --spills` and doctor use), or a folder of headers (with the header a cut affects).
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Loaded,
    Run,
    RunBySpillsOnly,
    Headers(&'static str),
}

const FILES: [(&str, Kind); 6] = [
    ("nvidia/cuda_nvrtc/lib/libnvrtc.so.12", Kind::Loaded),
    ("nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.9", Kind::Loaded),
    ("nvidia/cuda_nvcc/bin/ptxas", Kind::Run),
    ("nvidia/cu13/bin/nvdisasm", Kind::RunBySpillsOnly),
    ("nvidia/cuda_runtime/include", Kind::Headers("cuda_fp16.h")),
    ("nvidia/cuda_cccl/include", Kind::Headers("cuda/std/version")),
];

/// Damages `rel` under `root`, the linked copy, without touching the installed files.
fn damage(root: &Path, rel: &str, kind: Kind, how: Damage) {
    let path = root.join(rel);
    if let Kind::Headers(header) = kind {
        let aside = root.join(format!("{rel}.aside"));
        match how {
            Damage::Truncated => {
                let h = path.join(header);
                let bytes = fs::read(&h).unwrap();
                fs::remove_file(&h).unwrap();
                fs::write(&h, &bytes[..bytes.len() / 2]).unwrap();
            }
            Damage::NotExecutable => fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap(),
            Damage::ZeroBytes => {
                fs::rename(&path, &aside).unwrap();
                fs::write(&path, b"").unwrap();
            }
            Damage::Directory => {
                fs::rename(&path, &aside).unwrap();
                fs::create_dir(&path).unwrap();
            }
            Damage::Missing => fs::rename(&path, &aside).unwrap(),
        }
        return;
    }
    let bytes = fs::read(&path).unwrap();
    fs::remove_file(&path).unwrap();
    match how {
        Damage::Truncated => fs::write(&path, &bytes[..bytes.len() / 2]).unwrap(),
        Damage::ZeroBytes => fs::write(&path, b"").unwrap(),
        Damage::NotExecutable => {
            fs::write(&path, &bytes).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        }
        Damage::Directory => fs::create_dir(&path).unwrap(),
        Damage::Missing => {}
    }
}

/// Puts `rel` back as it was: the link to the installed file, the folder moved back.
fn repair(root: &Path, real: &Path, rel: &str, kind: Kind) {
    let path = root.join(rel);
    let remove = |p: &Path| {
        if fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
            fs::remove_dir_all(p).unwrap();
        } else if fs::symlink_metadata(p).is_ok() {
            fs::remove_file(p).unwrap();
        }
    };
    if let Kind::Headers(header) = kind {
        let aside = root.join(format!("{rel}.aside"));
        if aside.exists() {
            remove(&path);
            fs::rename(&aside, &path).unwrap();
        }
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        remove(&path.join(header));
        fs::hard_link(real.join(rel).join(header), path.join(header)).unwrap();
        return;
    }
    remove(&path);
    fs::hard_link(real.join(rel), &path).unwrap();
}

/// An entry point's name and its command.
type Entry = (&'static str, fn() -> Command);

/// The scrubbed environment: this cache folder alone, no system toolchain, no install.
fn scrubbed(mut cmd: Command, cache: &Path, dir: &Path) -> Command {
    for v in SCRUBBED.iter() {
        cmd.env_remove(v);
    }
    cmd.current_dir(dir)
        .env("LAUNCH_CACHE_DIR", cache)
        .env("LAUNCH_NO_SYSTEM_TOOLCHAIN", "1")
        .env("LAUNCH_NO_AUTO_SETUP", "1")
        .env("CARGO_TARGET_DIR", crate::support::fixtures_target())
        .env("CARGO_TERM_COLOR", "never");
    cmd
}

/// doctor, report (which builds through the build script) and `cargo build`.
const ENTRIES: [Entry; 3] = [
    ("doctor", || {
        let mut c = cargo_launch();
        c.args(["launch", "doctor"]);
        c
    }),
    ("report", || {
        let mut c = cargo_launch();
        c.args(["launch", "report", "--no-setup"]);
        c
    }),
    ("cargo build", || {
        let mut c = Command::new(env!("CARGO"));
        c.arg("build");
        c
    }),
];

/// Each of `files` of the toolchain copy at `root` (linked to `real`) × each damage × each entry
/// point, on the crate at `krate` (its kernel edited each time, so that the build script runs
/// again) with the cache folder `cache` and `vars`: the number of cases and what went wrong.
fn enumerate(
    (root, real): (&Path, &Path),
    files: &[(&str, Kind)],
    (krate, cache): (&Path, &Path),
    vars: &[(&str, &Path)],
) -> (usize, Vec<String>) {
    let kernel = krate.join("kernels/saxpy.cu");
    let source = fs::read_to_string(&kernel).unwrap();
    let (mut cases, mut wrong) = (0, Vec::<String>::new());
    for &(rel, kind) in files {
        for how in DAMAGES {
            damage(root, rel, kind, how);
            for (name, make) in ENTRIES {
                cases += 1;
                fs::write(&kernel, format!("{source}// case {cases}\n")).unwrap();
                let mut cmd = scrubbed(make(), cache, krate);
                cmd.envs(vars.iter().copied());
                let (code, stdout, stderr) = run(&mut cmd);
                let all = format!("{stdout}{stderr}");
                // Harmless here: a library or folder without an executable bit (the tests run as
                // root, who reads it anyway). doctor holds every file against the wheels' RECORD,
                // and one that differs blocks builds (3); nvdisasm that only lost its executable
                // bit is a problem of `report --spills` alone, which blocks nothing (1), and the
                // build never runs nvdisasm.
                let harmless = how == Damage::NotExecutable && kind != Kind::Run && kind != Kind::RunBySpillsOnly;
                let want = match (name, harmless, kind, how) {
                    (_, true, ..) => 0,
                    ("doctor", _, Kind::RunBySpillsOnly, Damage::NotExecutable) => 1,
                    ("doctor", ..) => 3,
                    (_, _, Kind::RunBySpillsOnly, _) => 0,
                    ("cargo build", ..) => 101,
                    _ => 3,
                };
                let file = match kind {
                    Kind::Headers(_) => rel.trim_start_matches("nvidia/").to_string(),
                    _ => Path::new(rel).file_name().unwrap().to_string_lossy().into_owned(),
                };
                let said = want == 0 || (all.contains(&file) && all.contains("cargo launch setup"));
                let signal = all.contains("signal:") || !(0..=128).contains(&code);
                if code != want || !said || signal {
                    let shown: String = all.lines().take(12).collect::<Vec<_>>().join("\n");
                    wrong.push(format!("{rel} {how:?} via {name}: exit {code} (want {want})\n{shown}"));
                }
            }
            repair(root, real, rel, kind);
        }
    }
    (cases, wrong)
}

/// The pinned toolchain, in the cache: every file checked against its wheel's RECORD.
#[test]
fn every_damaged_toolchain_file_is_a_toolchain_error_naming_it_and_setup() {
    let real = toolchain_root();
    let cache = tempfile::tempdir().unwrap();
    let root = cache.path().join("toolchain").join(real.file_name().unwrap());
    linked_copy(&real, &root);
    let krate = fixture("driver_newer_gpu");
    let (cases, wrong) = enumerate((&root, &real), &FILES, (krate.path(), cache.path()), &[]);
    assert_eq!(cases, 90);
    assert!(wrong.is_empty(), "{} of {cases} cases:\n{}", wrong.len(), wrong.join("\n---\n"));
}

/// The same files in a toolchain no RECORD describes (its `*.dist-info` folders removed, named by
/// `LAUNCH_TOOLCHAIN`): NVRTC, its builtins and ptxas are judged by their ELF headers and size.
#[test]
fn a_damaged_file_of_a_toolchain_without_records_is_named_too() {
    let real = toolchain_root();
    let (cache, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let root = elsewhere.path().join("toolchain");
    linked_copy(&real, &root);
    for e in fs::read_dir(&root).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with(".dist-info") {
            fs::remove_dir_all(e.path()).unwrap();
        }
    }
    let krate = fixture("driver_newer_gpu");
    let vars = [("LAUNCH_TOOLCHAIN", root.as_path())];
    let (cases, wrong) = enumerate((&root, &real), &FILES[..3], (krate.path(), cache.path()), &vars);
    assert_eq!(cases, 45);
    assert!(wrong.is_empty(), "{} of {cases} cases:\n{}", wrong.len(), wrong.join("\n---\n"));
}

/// nvcc, where it is used: a crate with `host` files on the 13.0 toolchain (a linked copy in a
/// cache folder of the test's own) × each damage, through doctor, report and `cargo build`.
#[test]
fn a_damaged_nvcc_is_a_toolchain_error_naming_it_and_setup_for_host_files() {
    let Some(real) = crate::host_files::toolchain_13_and_cxx() else { return };
    let cache = tempfile::tempdir().unwrap();
    let root = cache.path().join("toolchain").join(real.file_name().unwrap());
    linked_copy(&real, &root);
    let krate = crate::host_files::host_launcher(|t| t);
    let kernel = krate.path().join("kernels/saxpy.cu");
    let source = fs::read_to_string(&kernel).unwrap();
    let rel = "nvidia/cu13/bin/nvcc";
    let (mut cases, mut wrong) = (0, Vec::<String>::new());
    for how in DAMAGES {
        damage(&root, rel, Kind::Run, how);
        for (name, make) in ENTRIES {
            cases += 1;
            fs::write(&kernel, format!("{source}// case {cases}\n")).unwrap();
            let (code, stdout, stderr) = run(&mut scrubbed(make(), cache.path(), krate.path()));
            let all = format!("{stdout}{stderr}");
            let want = if name == "cargo build" { 101 } else { 3 };
            let said = all.contains("nvcc") && all.contains("cargo launch setup");
            let signal = all.contains("signal:") || !(0..=128).contains(&code);
            if code != want || !said || signal {
                let shown: String = all.lines().take(14).collect::<Vec<_>>().join("\n");
                wrong.push(format!("{rel} {how:?} via {name}: exit {code} (want {want})\n{shown}"));
            }
        }
        repair(&root, &real, rel, Kind::Run);
    }
    assert_eq!(cases, 15);
    assert!(wrong.is_empty(), "{} of {cases} cases:\n{}", wrong.len(), wrong.join("\n---\n"));
}
