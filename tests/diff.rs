//! Issue 24 item 1: `cargo launch diff` between two toolchains (the template, where nothing
//! changes, and a fixture whose registers do), between a git revision and the working tree (a
//! changed `@launch`), and between two report documents (kernels added and removed, the
//! `--fail-on regression` exit codes, the markdown's size bound).

use std::path::Path;
use std::process::Command;

use launch::Resources;
use launch_analysis::{analyze, HostLaunch};
use launch_engine::tooling::toolchain::{pin, pin_dir};
use launch_engine::tooling::{var, Env};
use launch_schema::diff::{Delta, Document};
use launch_schema::manifest::Toolchain;
use launch_schema::report::{self, KernelId, Record};

use crate::support::{cargo_launch, exact, fixture, git, root, run, template_outside};

/// Whether both pinned toolchains are installed; the test skips, saying so, when not
/// (`LAUNCH_TEST_REQUIRE_TOOLCHAINS=1` makes that a failure).
fn both_toolchains() -> bool {
    let installed = [pin::CUDA_12_9, pin::CUDA_13_0]
        .iter()
        .all(|p| pin_dir(&Env::cli(), p).is_some_and(|d| d.join(".complete").is_file()));
    if !installed {
        assert!(
            Env::cli().get(var::LAUNCH_TEST_REQUIRE_TOOLCHAINS).is_none_or(|v| v != "1"),
            "run `cargo launch setup --toolchain 12.9 --toolchain 13.0`"
        );
        eprintln!("skipped: the 12.9 and 13.0 toolchains are not both installed");
    }
    installed
}

fn diff(args: &[&str], manifest: Option<&Path>) -> (i32, String, String) {
    let mut cmd = cargo_launch();
    cmd.args(["launch", "diff"]).args(args);
    if let Some(m) = manifest {
        cmd.arg("--manifest-path").arg(m);
    }
    run(&mut cmd)
}

/// Measured: ptxas 12.9.86 and 13.0.88 give the template's five kernels the same registers,
/// spills, stack and occupancy on sm_90 and sm_100 (as `toolchains.rs` pins for 13.0 alone).
#[test]
fn the_template_is_the_same_with_12_9_and_13_0() {
    if !both_toolchains() {
        return;
    }
    let dir = template_outside();
    let manifest = dir.path().join("Cargo.toml");
    let (code, stdout, stderr) = diff(&["--toolchain", "12.9..13.0", "--no-setup"], Some(&manifest));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("old: toolchain 12.9 (NVRTC 12.9.86, ptxas 12.9.86)"), "{stdout}");
    assert!(stdout.contains("new: toolchain 13.0 (NVRTC 13.0.88, ptxas 13.0.88)"), "{stdout}");
    assert!(stdout.contains("10 kernel × arch pairs compared: nothing changed"), "{stdout}");
    // Each side in a target folder of its own; the normal build is not touched.
    let target = root().join("target/fixtures/launch-diff");
    assert!(target.join("cuda-12.9").is_dir() && target.join("cuda-13.0").is_dir());
}

/// `fixtures/crates/diff_toolkits`: double-precision math whose device-library code changed
/// between 12.9 and 13.0 (numbers measured with the installed ptxas of each).
#[test]
fn registers_that_differ_between_toolkits_are_listed_by_impact() {
    if !both_toolchains() {
        return;
    }
    let dir = fixture("diff_toolkits");
    let manifest = dir.path().join("Cargo.toml");
    let (code, stdout, stderr) =
        diff(&["--toolchain", "12.9..13.0", "--no-setup", "--format", "json"], Some(&manifest));
    assert_eq!(code, 0, "{stderr}");
    let doc = exact(&stdout, Document::from_json);
    assert_eq!((doc.old.toolchain.ptxas.as_str(), doc.new.toolchain.ptxas.as_str()), ("12.9.86", "13.0.88"));
    /// Kernel, arch, registers, occupancy (old, new), regression.
    type Row = (String, String, Option<Delta<u32>>, Option<(f64, f64)>, bool);
    let got: Vec<Row> = doc
        .changes
        .iter()
        .map(|c| {
            let occupancy = c.occupancy.map(|o| (o.percent.old, o.percent.new));
            (c.name.clone(), c.arch.to_string(), c.registers, occupancy, c.regression)
        })
        .collect();
    let d = |old, new| Some(Delta { old, new });
    let want = vec![
        ("sincospi_mix".to_string(), "sm_80".to_string(), d(36, 32), Some((75.0, 100.0)), false),
        ("sincospi_mix".into(), "sm_90".into(), d(36, 32), Some((75.0, 100.0)), false),
        ("sincospi_mix".into(), "sm_100".into(), d(32, 34), Some((100.0, 75.0)), true),
        // More registers at the same occupancy: a regression, as check --baseline judges one.
        ("pow_mix".into(), "sm_100".into(), d(30, 32), None, true),
        ("pow_mix".into(), "sm_90".into(), d(29, 30), None, true),
    ];
    assert_eq!(got, want, "{stdout}");
    let t = doc.totals;
    assert_eq!((t.compared, t.changed, t.regressions, t.occupancy_lost, t.occupancy_gained), (9, 5, 3, 1, 2));
    assert_eq!(t.registers_delta, -4 - 4 + 2 + 2 + 1);
    assert!(doc.added.is_empty() && doc.removed.is_empty() && doc.moved.is_empty());

    // The same, from the cache, as text; and the regressions fail the gate.
    let (code, stdout, stderr) =
        diff(&["--toolchain", "12.9..13.0", "--no-setup", "--fail-on", "regression"], Some(&manifest));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stdout.contains("regressed  sincospi_mix  sm_100  kernels/math.cu:4"), "{stdout}");
    assert!(stdout.contains("occupancy at 256 threads 100.0% → 75.0% (8 → 6 blocks/SM)"), "{stdout}");
    assert!(stdout.contains("regressed  pow_mix  sm_90  kernels/math.cu:11"), "{stdout}");
    assert!(stderr.contains("3 regression(s) (--fail-on regression)"), "{stderr}");
}

/// A temporary repository holding the fixture; the working tree gives `sincospi_mix` a contract
/// of 1024 threads: at the same registers, occupancy at the block size goes from 75% (6 blocks of
/// 256) to 50% (one of 1024). The revision's worktree is gone afterwards.
#[test]
fn rev_head_against_a_changed_launch_in_the_working_tree() {
    let dir = fixture("diff_toolkits");
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("arch = [\"sm_80\", \"sm_90\", \"sm_100\"]", "arch = [\"sm_90\"]")).unwrap();
    git(dir.path(), &["init", "--quiet"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "--quiet", "-m", "fixture"]);
    let kernel = dir.path().join("kernels/math.cu");
    let source = std::fs::read_to_string(&kernel).unwrap();
    let changed = source.replace(
        "extern \"C\" __global__ void sincospi_mix",
        "// @launch(1024)\nextern \"C\" __global__ void sincospi_mix",
    );
    std::fs::write(&kernel, changed).unwrap();

    let (code, stdout, stderr) = diff(&["--rev", "HEAD", "--format", "json"], Some(&manifest));
    assert_eq!(code, 0, "{stderr}");
    let doc = exact(&stdout, Document::from_json);
    assert!(doc.old.label.starts_with("HEAD ("), "{}", doc.old.label);
    assert_eq!(doc.new.label, "working tree");
    assert_eq!(doc.changes.len(), 1, "{stdout}");
    let c = &doc.changes[0];
    assert_eq!((c.name.as_str(), c.arch.to_string().as_str(), c.line), ("sincospi_mix", "sm_90", 5));
    let o = c.occupancy.expect("occupancy changed");
    assert_eq!((o.threads.old, o.threads.new), (256, 1024));
    assert_eq!((o.percent.old, o.percent.new), (75.0, 50.0));
    assert!(c.regression);
    // The worktree was removed: git lists only the repository's own.
    let out = Command::new("git").current_dir(dir.path()).args(["worktree", "list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1, "{}", String::from_utf8_lossy(&out.stdout));

    let (code, _, stderr) = diff(&["--rev", "HEAD", "--fail-on", "regression"], Some(&manifest));
    assert_eq!(code, 1, "{stderr}");
    let (code, _, stderr) = diff(&["--rev", "no-such-rev"], Some(&manifest));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("`no-such-rev` is not a commit of the repository"), "{stderr}");

    // A revision whose kernel does not compile: the build's failure (exit 4), and its worktree
    // is removed all the same.
    std::fs::write(&kernel, source.replace("double v = x[i];\n    y[i] = sinpi", "double v = x[i]\n    y[i] = sinpi"))
        .unwrap();
    git(dir.path(), &["commit", "--quiet", "-am", "broken"]);
    std::fs::write(&kernel, &source).unwrap();
    let (code, _, stderr) = diff(&["--rev", "HEAD"], Some(&manifest));
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("kernels/math.cu(8): error: expected a \";\""), "the revision's compile error: {stderr}");
    let out = Command::new("git").current_dir(dir.path()).args(["worktree", "list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1, "{}", String::from_utf8_lossy(&out.stdout));
}

/// A report record of `name` (in `kernels/k.cu`, line `line`) on sm_90 with `registers`,
/// launched with 256 threads.
fn record(name: &str, line: u32, registers: u32) -> Record {
    let r = Resources { registers, ..Default::default() };
    let report = analyze("sm_90".parse().unwrap(), &r, None, HostLaunch { threads: 256, dynamic_smem: 0 }).unwrap();
    let id = KernelId {
        package: "p".into(),
        name: name.into(),
        display_name: name.into(),
        qualified: format!("kernels/k.cu::{name}"),
        file: "kernels/k.cu".into(),
        line,
    };
    Record::new(id, vec![format!("ptxas info    : Used {registers} registers")], &report)
}

fn write_report(dir: &Path, file: &str, records: Vec<Record>) -> std::path::PathBuf {
    let doc = report::Document::new(Toolchain { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into() }, records);
    let path = dir.join(file);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

/// Two report documents: `gone` removed, `fresh` added, `same` unchanged, `grows` with more
/// registers (32 → 48: 100% → 62.5%, a regression), and the exit codes of the gate.
#[test]
fn two_report_files_list_added_and_removed_kernels_and_gate_on_regressions() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_report(
        dir.path(),
        "old.json",
        vec![record("same", 1, 32), record("gone", 5, 32), record("grows", 9, 32)],
    );
    let new = write_report(
        dir.path(),
        "new.json",
        vec![record("same", 1, 32), record("fresh", 20, 40), record("grows", 9, 48)],
    );
    let better = write_report(dir.path(), "better.json", vec![record("same", 1, 32), record("grows", 9, 24)]);
    let s = |p: &Path| p.display().to_string();

    let (code, stdout, stderr) = diff(&[&s(&old), &s(&new), "--format", "json"], None);
    assert_eq!(code, 0, "{stderr}");
    let doc = exact(&stdout, Document::from_json);
    assert_eq!(doc.added.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["fresh"]);
    assert_eq!(doc.removed.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["gone"]);
    assert_eq!(doc.changes.len(), 1);
    assert_eq!(doc.changes[0].registers, Some(Delta { old: 32, new: 48 }));
    assert!(doc.changes[0].regression);
    assert_eq!(doc.old.label, s(&old));

    let (code, stdout, _) = diff(&[&s(&old), &s(&new)], None);
    assert_eq!(code, 0);
    assert!(stdout.contains("added: fresh (kernels/k.cu:20; sm_90)"), "{stdout}");
    assert!(stdout.contains("removed: gone (kernels/k.cu:5; sm_90)"), "{stdout}");
    assert!(stdout.contains("registers 32 → 48 (+16)"), "{stdout}");

    let (code, _, stderr) = diff(&[&s(&old), &s(&new), "--fail-on", "regression"], None);
    assert_eq!(code, 1, "a kernel lost occupancy: {stderr}");
    let (code, stdout, stderr) = diff(&[&s(&old), &s(&better), "--fail-on", "regression"], None);
    assert_eq!(code, 0, "fewer registers and a removed kernel are no regression: {stdout}\n{stderr}");
    let (code, _, stderr) = diff(&[&s(&old), &s(&dir.path().join("none.json"))], None);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("none.json: cannot read it"), "{stderr}");
    let (code, _, stderr) = diff(&[&s(&old)], None);
    assert_eq!(code, 2, "one file is a usage error: {stderr}");
}

/// Hundreds of changed kernels: the markdown stays under 60 KB, with its summary table and the
/// details collapsed, and says how many entries it left out.
#[test]
fn the_markdown_for_hundreds_of_changed_kernels_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let many = |extra: u32| (0..800).map(|i| record(&format!("kernel_{i:04}"), i + 1, 32 + extra + i % 64)).collect();
    let old = write_report(dir.path(), "old.json", many(0));
    let new = write_report(dir.path(), "new.json", many(8));
    let s = |p: &Path| p.display().to_string();
    let (code, stdout, stderr) = diff(&[&s(&old), &s(&new), "--format", "markdown"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.len() < 60_000, "{} bytes", stdout.len());
    assert!(stdout.contains("800 kernel × arch pairs compared, 800 changed"), "{}", &stdout[..400]);
    assert!(stdout.contains("| | kernel | arch | registers |"));
    assert!(stdout.contains("<details><summary>Details</summary>") && stdout.contains("</details>"));
    assert!(stdout.contains("700 more changes are in the details below."), "{stdout}");
    let left = stdout.lines().find(|l| l.contains("entries left out to stay under 60 KB")).expect("a note");
    let n: usize = left.split_whitespace().next().unwrap().parse().unwrap();
    assert!(n > 100 && n < 800, "{left}");
}

/// The newest pin, 13.5, against 13.0 on the fixture: the same code (measured), so nothing
/// changes; both sides' versions are named. Skips when 13.5 is not installed
/// (`cargo launch setup --toolchain 13.5`; `LAUNCH_TEST_REQUIRE_TOOLCHAINS=1` makes that a failure).
#[test]
fn the_fixture_is_the_same_with_13_0_and_13_5() {
    let installed = [pin::CUDA_13_0, pin::CUDA_13_5]
        .iter()
        .all(|p| pin_dir(&Env::cli(), p).is_some_and(|d| d.join(".complete").is_file()));
    if !installed {
        assert!(
            Env::cli().get(var::LAUNCH_TEST_REQUIRE_TOOLCHAINS).is_none_or(|v| v != "1"),
            "run `cargo launch setup --toolchain 13.0 --toolchain 13.5`"
        );
        eprintln!("skipped: the 13.0 and 13.5 toolchains are not both installed");
        return;
    }
    let dir = fixture("diff_toolkits");
    let (code, stdout, stderr) =
        diff(&["--toolchain", "13.0..13.5", "--no-setup"], Some(&dir.path().join("Cargo.toml")));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("new: toolchain 13.5 (NVRTC 13.5.37, ptxas 13.5.37)"), "{stdout}");
    assert!(stdout.contains("9 kernel × arch pairs compared: nothing changed"), "{stdout}");
}

/// `LAUNCH_TOOLCHAIN_PIN`, what `diff --toolchain` sets for each side, refuses a name that is not
/// a pin: a configuration error naming the variable (exit 2).
#[test]
fn a_toolchain_pin_that_is_not_pinned_is_a_config_error() {
    let dir = fixture("diff_toolkits");
    // A pin's name with spaces around it is refused too (issue 32, class 7: no value is trimmed).
    for (value, shown) in [("12.8", "12.8"), (" 13.0", " 13.0"), ("12.9 ", "12.9 "), ("\t13.5", "\\t13.5")] {
        let (code, _, stderr) = run(cargo_launch()
            .env("LAUNCH_TOOLCHAIN_PIN", value)
            .args(["launch", "report", "--no-setup", "--manifest-path"])
            .arg(dir.path().join("Cargo.toml")));
        assert_eq!(code, 2, "{value:?}: {stderr}");
        let want = format!(
            "`LAUNCH_TOOLCHAIN_PIN`: `{shown}` is not a pinned toolchain; valid choices: \"12.9\", \"13.0\", \"13.5\""
        );
        assert!(stderr.contains(&want), "{value:?}: {stderr}");
    }
}

/// Issue 32, class 8: `diff` on a `prebuilt.json` (not a report) says what the file is, never
/// that another version of cargo-launch wrote it.
#[test]
fn diff_on_a_prebuilt_record_says_what_the_file_is() {
    let dir = tempfile::tempdir().unwrap();
    let prebuilt = dir.path().join("prebuilt.json");
    let record = serde_json::json!({
        "schema": 1, "key": "00", "package": "p", "made_by": "cargo-launch 0.1.0",
        "toolchain": { "pin": "12.9", "nvrtc": "12.9.86", "ptxas": "12.9.86" },
        "arches": ["sm_90"], "inputs": [], "files": [],
    });
    std::fs::write(&prebuilt, record.to_string()).unwrap();
    let p = prebuilt.display().to_string();
    let (code, _, stderr) = run(cargo_launch().args(["launch", "diff", &p, &p]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("this is cargo-launch's `launch-prebuilt/prebuilt.json` document, not its `report` document"),
        "{stderr}"
    );
    assert!(!stderr.contains("another version"), "{stderr}");
}
