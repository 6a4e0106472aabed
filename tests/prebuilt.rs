//! Issue 20: prebuilt kernels. `cargo launch prebuild` writes `launch-prebuilt/` (deterministic,
//! rewritten only when it changes, `--verify` compares a compile from source byte for byte); a
//! build whose sources match embeds it with no toolchain; a stale one compiles from source with a
//! warning, or, with no toolchain or under `LAUNCH_PREBUILT=require`, fails naming the change;
//! `report`/`check` work without a toolchain and `check` fails on a stale folder; and a downstream
//! program builds from the packaged crate with no Python, no toolchain, no cache and no network.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use launch_schema::prebuilt::{Record, Summary};
use launch_schema::stats::BuildStats;
use serde_json::Value;

use crate::support::{cargo_launch, copy_dir, fixture, root, run, toolchain_root, SCRUBBED};

/// The kernel crate's package name (the fixture copy's, made unique).
fn package_of(dir: &Path) -> String {
    let text = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let line = text.lines().find(|l| l.starts_with("name = ")).unwrap();
    line.trim_start_matches("name = ").trim_matches('"').to_string()
}

/// `cargo launch prebuild [extra]` on the crate at `dir`, with the pinned toolchain.
fn prebuild(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut cmd = cargo_launch();
    cmd.current_dir(dir).args(["launch", "prebuild"]).args(extra);
    run(&mut cmd)
}

/// Every file under `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let rel = format!("{prefix}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &format!("{rel}/"), out);
            } else {
                out.insert(rel, fs::read(e.path()).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out);
    out
}

/// `cargo` with the test's scrubbed environment, in `dir`.
fn cargo(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    for v in SCRUBBED.iter() {
        cmd.env_remove(v);
    }
    cmd.env_remove("LAUNCH_PREBUILT");
    cmd.current_dir(dir).env("CARGO_TERM_COLOR", "never").env("CARGO_TARGET_DIR", crate::support::fixtures_target());
    cmd
}

/// An environment with no CUDA toolchain to find, no Python, an empty cargo-launch cache and no
/// network: `PATH` is a folder of links to every program of /usr/bin and /bin but Python's,
/// then cargo's own folder.
struct Bare {
    _dir: tempfile::TempDir,
    path: PathBuf,
    cache: PathBuf,
}

impl Bare {
    fn new() -> Bare {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        for sys in ["/usr/bin", "/bin"] {
            let Ok(rd) = fs::read_dir(sys) else { continue };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if !name.starts_with("python") && !bin.join(&name).exists() {
                    let _ = std::os::unix::fs::symlink(e.path(), bin.join(&name));
                }
            }
        }
        let cargo_dir = Path::new(env!("CARGO")).parent().unwrap().to_path_buf();
        let path = std::env::join_paths([bin, cargo_dir]).unwrap();
        let cache = dir.path().join("cache");
        fs::create_dir(&cache).unwrap();
        assert!(which::which_in("python3", Some(&path), "/").is_err(), "python3 is reachable");
        Bare { path: PathBuf::from(path), cache, _dir: dir }
    }

    /// `cmd` in this environment.
    fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env("PATH", &self.path)
            .env("LAUNCH_CACHE_DIR", &self.cache)
            .env("XDG_CACHE_HOME", &self.cache)
            .env("LAUNCH_NO_SYSTEM_TOOLCHAIN", "1")
            .env("CARGO_NET_OFFLINE", "true")
            .env_remove("LAUNCH_TOOLCHAIN")
            .env_remove("LAUNCH_PYTHON")
            .env_remove("VIRTUAL_ENV")
    }
}

/// `cargo build --message-format=json` output → the build-stats of `package`'s build script.
fn stats_of(stdout: &str, package: &str) -> (PathBuf, BuildStats) {
    let id = format!("#{package}@");
    let out_dir = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "build-script-executed" && m["package_id"].as_str().is_some_and(|p| p.contains(&id)))
        .find_map(|m| m["out_dir"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("no build script run of {package}:\n{stdout}"));
    let text = fs::read_to_string(out_dir.join("launch/build-stats.json")).unwrap();
    (out_dir, BuildStats::from_json(&text).unwrap())
}

/// The crate packaged by `cargo package` and unpacked, as a registry dependency is.
fn package_and_unpack(dir: &Path, into: &Path) -> PathBuf {
    let (code, _, stderr) =
        run(cargo(dir).args(["package", "--no-verify", "--offline", "--allow-dirty", "--exclude-lockfile"]));
    assert_eq!(code, 0, "cargo package failed:\n{stderr}");
    let name = package_of(dir);
    let krate = root().join(format!("target/fixtures/package/{name}-0.1.0.crate"));
    let (code, _, stderr) = run(Command::new("tar").arg("xzf").arg(&krate).arg("-C").arg(into));
    assert_eq!(code, 0, "tar failed:\n{stderr}");
    into.join(format!("{name}-0.1.0"))
}

#[test]
fn prebuild_writes_a_deterministic_folder_and_verify_compares_it_byte_for_byte() {
    toolchain_root();
    let kc = fixture("prebuilt_kernels");
    let (code, stdout, stderr) = prebuild(kc.path(), &["--format", "json"]);
    assert_eq!(code, 0, "prebuild failed:\n{stderr}");
    let summary: Summary = serde_json::from_str(&stdout).unwrap();
    let p = &summary.packages[0];
    assert_eq!(p.outcome, "written");
    // Both arches' cubins (the tune variants' too), the PTX and the records are costed.
    let parts: Vec<&str> = p.costs.iter().map(|c| c.part.as_str()).collect();
    assert_eq!(parts, ["sm_80", "sm_90", "ptx", "records"]);
    let folder = kc.path().join("launch-prebuilt");
    let first = tree(&folder);
    let record = Record::from_json(std::str::from_utf8(&first["prebuilt.json"]).unwrap()).unwrap();
    let inputs: Vec<&str> = record.inputs.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(
        inputs,
        [
            "Cargo.toml [package.metadata.launch]",
            "kernels/common.cuh",
            "kernels/scale_add.cu",
            "kernels/sum_squares.cu"
        ]
    );
    assert!(first.keys().any(|k| k.starts_with("variants/") && k.ends_with(".sm_90.cubin")), "{:?}", first.keys());
    // Nothing of this machine in it.
    for (path, bytes) in &first {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(&*kc.path().to_string_lossy()), "{path} names the checkout");
        assert!(!text.contains("/.cache/"), "{path} names the cache");
    }

    // Again: nothing rewritten. A second checkout at another path: the same bytes.
    let (code, stdout, _) = prebuild(kc.path(), &[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("is up to date (nothing rewritten)"), "{stdout}");
    let other = tempfile::tempdir().unwrap();
    copy_dir(kc.path(), other.path());
    fs::remove_dir_all(other.path().join("launch-prebuilt")).unwrap();
    assert_eq!(prebuild(other.path(), &[]).0, 0);
    assert_eq!(tree(&other.path().join("launch-prebuilt")), first, "another checkout wrote other bytes");

    // --verify compiles without the cache and finds the folder identical; a flipped byte and a
    // stray file are named, exit 1, and nothing is written.
    let (code, stdout, stderr) = prebuild(kc.path(), &["--verify"]);
    assert_eq!(code, 0, "verify failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("identical to a compile from source, byte for byte"), "{stdout}");
    // Which launch-build wrote the record is not verified (a newer patch release verifies an
    // older folder); everything else is.
    let record_path = folder.join("prebuilt.json");
    let text = fs::read_to_string(&record_path).unwrap();
    fs::write(
        &record_path,
        text.replace(&format!("\"launch-build {}\"", env!("CARGO_PKG_VERSION")), "\"launch-build 0.0.9\""),
    )
    .unwrap();
    assert_ne!(fs::read_to_string(&record_path).unwrap(), text);
    let (code, stdout, _) = prebuild(kc.path(), &["--verify"]);
    assert_eq!(code, 0, "{stdout}");
    let cubin =
        folder.join("cubin").join(first.keys().find(|k| k.starts_with("cubin/")).unwrap().trim_start_matches("cubin/"));
    let mut bytes = fs::read(&cubin).unwrap();
    bytes[200] ^= 1;
    fs::write(&cubin, &bytes).unwrap();
    fs::write(folder.join("extra.txt"), "x").unwrap();
    let (code, stdout, _) = prebuild(kc.path(), &["--verify"]);
    assert_eq!(code, 1, "{stdout}");
    let name = cubin.file_name().unwrap().to_string_lossy().into_owned();
    assert!(stdout.contains(&format!("differs: cubin/{name}: shipped")), "{stdout}");
    assert!(stdout.contains("differs: extra.txt: only in the shipped folder"), "{stdout}");
    assert_eq!(fs::read(&cubin).unwrap(), bytes, "--verify wrote");
}

#[test]
fn a_build_embeds_a_matching_folder_without_any_toolchain_and_names_what_changed_otherwise() {
    toolchain_root();
    let kc = fixture("prebuilt_kernels");
    assert_eq!(prebuild(kc.path(), &[]).0, 0);
    let package = package_of(kc.path());
    let bare = Bare::new();
    let build = |dir: &Path, extra: &[(&str, &str)]| {
        let mut cmd = cargo(dir);
        bare.apply(&mut cmd).args(["build", "--message-format=json-render-diagnostics"]);
        cmd.envs(extra.iter().copied());
        run(&mut cmd)
    };
    let (code, stdout, stderr) = build(kc.path(), &[]);
    assert_eq!(code, 0, "the prebuilt build failed:\n{stderr}");
    let (_, stats) = stats_of(&stdout, &package);
    assert_eq!((stats.compiled, stats.cached, stats.jobs), (0, 0, 4), "{stats:?}");
    assert!(stats.prebuilt.is_some(), "{stats:?}");

    // report and check need no toolchain either (and do not try to install one).
    let mut report = cargo_launch();
    bare.apply(&mut report).current_dir(kc.path()).args(["launch", "report", "--format", "json"]);
    let (code, stdout, stderr) = run(&mut report);
    assert_eq!(code, 0, "report failed:\n{stderr}");
    assert!(stdout.contains("\"scale_add\"") && stdout.contains("\"sum_squares\""), "{stdout}");
    let mut check = cargo_launch();
    bare.apply(&mut check).current_dir(kc.path()).args(["launch", "check", "--arch", "sm_80,sm_90"]);
    let (code, _, stderr) = run(&mut check);
    assert_eq!(code, 0, "check failed:\n{stderr}");

    // LAUNCH_PREBUILT=ignore compiles, and without a toolchain says so (exit of the toolchain kind).
    let (code, _, stderr) = build(kc.path(), &[("LAUNCH_PREBUILT", "ignore")]);
    assert_ne!(code, 0);
    assert!(stderr.contains("no CUDA toolchain"), "{stderr}");
    let (code, _, stderr) = build(kc.path(), &[("LAUNCH_PREBUILT", "sometimes")]);
    assert_ne!(code, 0);
    assert!(stderr.contains("`LAUNCH_PREBUILT`: `sometimes` is not one of auto, ignore, require"), "{stderr}");

    // An edited header: no toolchain → the error names it and the command; with the toolchain →
    // compiled from source with a warning; under `require` → refused even with a toolchain.
    let header = kc.path().join("kernels/common.cuh");
    fs::write(&header, fs::read_to_string(&header).unwrap() + "// edited\n").unwrap();
    let (code, _, stderr) = build(kc.path(), &[]);
    assert_eq!(code, 101, "{stderr}");
    assert!(stderr.contains("cannot be used: kernels/common.cuh changed"), "{stderr}");
    assert!(stderr.contains("`cargo launch prebuild`"), "{stderr}");
    let mut with_toolchain = cargo(kc.path());
    with_toolchain
        .args(["build", "--message-format=json-render-diagnostics"])
        .env("LAUNCH_TOOLCHAIN", toolchain_root());
    let (code, stdout, stderr) = run(&mut with_toolchain);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("cannot be used (kernels/common.cuh changed): compiling from source"), "{stderr}");
    let (_, stats) = stats_of(&stdout, &package);
    assert!(stats.prebuilt.is_none() && stats.prebuilt_stale == ["kernels/common.cuh changed"], "{stats:?}");
    let (code, _, stderr) =
        run(cargo(kc.path()).arg("build").env("LAUNCH_TOOLCHAIN", toolchain_root()).env("LAUNCH_PREBUILT", "require"));
    assert_eq!(code, 101);
    assert!(stderr.contains("LAUNCH_PREBUILT=require"), "{stderr}");

    // check fails on the stale folder (so CI keeps it current), naming the change and the fix.
    let mut check = cargo_launch();
    check.current_dir(kc.path()).args(["launch", "check"]).env("LAUNCH_TOOLCHAIN", toolchain_root());
    let (code, stdout, stderr) = run(&mut check);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("launch-prebuilt/prebuilt.json") && all.contains("kernels/common.cuh changed"), "{all}");
    assert!(all.contains("run `cargo launch prebuild`"), "{all}");
}

#[test]
fn a_downstream_program_builds_from_the_packaged_crate_with_no_python_toolchain_cache_or_network() {
    toolchain_root();
    let kc = fixture("prebuilt_kernels");
    assert_eq!(prebuild(kc.path(), &[]).0, 0);
    let unpacked_at = tempfile::tempdir().unwrap();
    let unpacked = package_and_unpack(kc.path(), unpacked_at.path());
    assert!(unpacked.join("launch-prebuilt/prebuilt.json").is_file(), "the package lacks the prebuilt folder");
    let package = package_of(kc.path());
    let down = fixture("prebuilt_downstream");
    let manifest = down.path().join("Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    let text = text.replace("{{KERNELS}}", &unpacked.display().to_string()).replace("{{KERNELS_NAME}}", &package);
    fs::write(&manifest, text).unwrap();
    let binary = root().join(format!("target/fixtures/debug/{}", package_of(down.path())));

    let bare = Bare::new();
    let mut build = cargo(down.path());
    bare.apply(&mut build).args(["build", "--message-format=json-render-diagnostics"]);
    let (code, stdout, stderr) = run(&mut build);
    assert_eq!(code, 0, "the downstream build failed:\n{stderr}");
    let (_, stats) = stats_of(&stdout, &package);
    assert_eq!(stats.compiled, 0, "a compiler ran: {stats:?}");
    assert!(stats.prebuilt.is_some(), "{stats:?}");
    let dumped = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(Command::new(&binary).arg("--dump").arg(dumped.path().join("prebuilt")));
    assert_eq!(code, 0, "{stderr}");

    // The same program built from source (with the toolchain): the same embedded bytes.
    let mut from_source = cargo(down.path());
    from_source
        .args(["build", "--message-format=json-render-diagnostics"])
        .env("LAUNCH_PREBUILT", "ignore")
        .env("LAUNCH_TOOLCHAIN", toolchain_root())
        .env("LAUNCH_NO_CACHE", "1");
    let (code, stdout, stderr) = run(&mut from_source);
    assert_eq!(code, 0, "the from-source build failed:\n{stderr}");
    let (_, stats) = stats_of(&stdout, &package);
    assert_eq!((stats.compiled, stats.prebuilt.is_none()), (4, true), "{stats:?}");
    let (code, _, stderr) = run(Command::new(&binary).arg("--dump").arg(dumped.path().join("source")));
    assert_eq!(code, 0, "{stderr}");
    let (prebuilt, source) = (tree(&dumped.path().join("prebuilt")), tree(&dumped.path().join("source")));
    assert!(prebuilt.keys().filter(|k| k.ends_with(".cubin")).count() >= 4, "{:?}", prebuilt.keys());
    assert_eq!(prebuilt, source, "the embedded images differ from a from-source build's");

    // One kernel edited in the unpacked crate: the downstream build fails, naming it.
    let kernel = unpacked.join("kernels/scale_add.cu");
    fs::write(&kernel, fs::read_to_string(&kernel).unwrap().replace("fmaf(a, x[i], y[i])", "a * x[i] + y[i]")).unwrap();
    let mut build = cargo(down.path());
    bare.apply(&mut build).arg("build");
    let (code, _, stderr) = run(&mut build);
    assert_eq!(code, 101, "{stderr}");
    assert!(stderr.contains("kernels/scale_add.cu changed"), "{stderr}");
    assert!(stderr.contains("No CUDA toolchain to compile them from source"), "{stderr}");
    assert!(stderr.contains("`cargo launch prebuild`") && stderr.contains("`cargo launch setup`"), "{stderr}");
}

#[test]
fn a_crate_made_by_new_ships_its_prebuilt_kernels_in_its_package() {
    toolchain_root();
    let tmp = tempfile::tempdir().unwrap();
    let name = format!("prebuilt-new-{}", std::process::id());
    let (code, _, stderr) = run(cargo_launch().args(["launch", "new", &name]).current_dir(tmp.path()));
    assert_eq!(code, 0, "{stderr}");
    let dir = tmp.path().join(&name);
    let (code, stdout, stderr) = prebuild(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    // What each arch costs, the template's two arches with their tune variants.
    assert!(stdout.contains("  sm_90 ") && stdout.contains("  sm_100 ") && stdout.contains("  total "), "{stdout}");
    assert!(!stderr.contains("10 MB"), "{stderr}");
    let (code, list, stderr) =
        run(cargo(&dir).args(["package", "--list", "--allow-dirty", "--no-verify", "--offline"]));
    assert_eq!(code, 0, "{stderr}");
    let shipped: Vec<&str> = list.lines().filter(|l| l.starts_with("launch-prebuilt/")).collect();
    let folder = tree(&dir.join("launch-prebuilt"));
    assert_eq!(shipped.len(), folder.len(), "{list}");
    for f in folder.keys() {
        assert!(shipped.contains(&format!("launch-prebuilt/{f}").as_str()), "{f} is not in the package:\n{list}");
    }
}

/// A crate with `host` files has no prebuilt form: `prebuild` (and `--verify`) refuses it as a
/// configuration error (exit 2), located at the `host` entry and saying why, before any build
/// or toolchain install; nothing is written.
#[test]
fn prebuild_refuses_a_crate_with_host_files_at_its_host_entry() {
    let dir = crate::host_files::host_launcher(|t| t);
    for extra in [&[][..], &["--verify"][..]] {
        let (code, _, stderr) = prebuild(dir.path(), extra);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("Cargo.toml:13:9: `cargo launch prebuild` does not support crates with `host` files"),
            "{stderr}"
        );
        assert!(stderr.contains("linked with the CUDA runtime"), "{stderr}");
        assert!(!stderr.contains("refresh them"), "{stderr}");
    }
    assert!(!dir.path().join("launch-prebuilt").exists());
}

/// Issue 32, class 5: a stale prebuilt folder and no toolchain give the build's message (what
/// changed, `cargo launch prebuild`, `cargo launch setup`) from every entry point that builds the
/// crate — `cargo build` and the commands that look for a toolchain before building — under
/// `LAUNCH_PREBUILT` unset (exit 3, the toolchain's kind) and `require` (the refusal, exit 4).
#[test]
fn a_stale_folder_without_a_toolchain_gives_the_build_s_message_from_every_entry_point() {
    toolchain_root();
    let kc = fixture("prebuilt_kernels");
    assert_eq!(prebuild(kc.path(), &[]).0, 0);
    let header = kc.path().join("kernels/common.cuh");
    fs::write(&header, fs::read_to_string(&header).unwrap() + "// edited\n").unwrap();
    let bare = Bare::new();
    let commands: [&[&str]; 6] = [
        &["build"],
        &["launch", "report"],
        &["launch", "report", "--format", "json"],
        &["launch", "check"],
        &["launch", "check", "--arch", "sm_80,sm_90"],
        &["launch", "coverage"],
    ];
    let (mut cases, mut wrong) = (0, Vec::new());
    for mode in [None, Some("require")] {
        for args in commands {
            cases += 1;
            let mut cmd = if args[0] == "build" { cargo(kc.path()) } else { cargo_launch() };
            bare.apply(&mut cmd).current_dir(kc.path()).args(args);
            if let Some(m) = mode {
                cmd.env("LAUNCH_PREBUILT", m);
            }
            let (code, stdout, stderr) = run(&mut cmd);
            let want_code = match (args[0], mode) {
                ("build", _) => 101,
                (_, None) => 3,
                (_, Some(_)) => 4,
            };
            let why = if mode.is_some() {
                "LAUNCH_PREBUILT=require"
            } else {
                "No CUDA toolchain to compile them from source"
            };
            let said = code == want_code
                && stderr.contains("cannot be used: kernels/common.cuh changed")
                && stderr.contains(why)
                && stderr.contains("`cargo launch prebuild`")
                && stderr.contains("`cargo launch setup`");
            if !said {
                wrong.push(format!(
                    "{args:?} LAUNCH_PREBUILT={mode:?}: exit {code} (want {want_code})\n{stdout}{stderr}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {cases} entry points say something else:\n{}", wrong.len(), wrong.join("\n---\n"));
}
