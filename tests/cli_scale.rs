use std::path::Path;

use launch_analysis::FindingKind;
use launch_schema::{check, report};

use crate::support::{cargo_launch, exact, fixture, root, run, toolchain_root};

fn launch(dir: &Path, args: &[&str]) -> (i32, String, String) {
    toolchain_root();
    let (cmd, rest) = args.split_first().expect("a command");
    run(cargo_launch().args(["launch", cmd, "--manifest-path"]).arg(dir.join("Cargo.toml")).args(rest))
}

/// Rows of the compact report (`name  sm_XX  ...`).
fn rows(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.split_whitespace().nth(1).is_some_and(|a| a.starts_with("sm_"))).collect()
}

#[test]
fn sixty_records_get_the_compact_report_and_filters_and_check_groups_them() {
    let dir = fixture("many");
    let (code, out, stderr) = launch(dir.path(), &["report"]);
    assert_eq!(code, 0, "{stderr}");
    let pkg = out.lines().next().unwrap();
    assert!(pkg.ends_with(": 30 kernels × 2 arches (sm_80, sm_90)"), "{out}");
    assert!(out.contains("kernel  "), "the compact form is the default above 40 records:\n{out}");
    assert_eq!(rows(&out).len(), 60, "{out}");
    assert!(!out.contains("ptxas info"), "{out}");
    let mix = rows(&out).into_iter().find(|l| l.starts_with("mix_f64_2 ") && l.contains(" sm_90 ")).unwrap();
    assert!(mix.contains(" 256* "), "host block size: {mix}");

    // --detailed always gives the full form; --summary the compact one.
    let (_, detailed, _) = launch(dir.path(), &["report", "--detailed"]);
    assert_eq!(detailed.matches("ptxas info    : Used").count(), 60, "{detailed}");
    let (_, summary, _) = launch(dir.path(), &["report", "--summary", "--kernel", "^scale_f32_2$"]);
    assert_eq!(rows(&summary).len(), 2, "{summary}");
    assert!(summary.contains("showing 2 of 60 records (--kernel '^scale_f32_2$')"), "{summary}");
    let (code, _, stderr) = launch(dir.path(), &["report", "--summary", "--detailed"]);
    assert_eq!(code, 2, "{stderr}");

    // --kernel matches the qualified name too; few records get the detailed form.
    let (_, out, _) = launch(dir.path(), &["report", "--kernel", "many\\.cu::shift_i32"]);
    assert_eq!(out.matches("ptxas info    : Used").count(), 4, "{out}");
    let (_, out, _) = launch(dir.path(), &["report", "--summary", "--file", "*.cu", "--sort", "registers"]);
    let regs: Vec<u32> = rows(&out).iter().map(|l| l.split_whitespace().nth(2).unwrap().parse().unwrap()).collect();
    assert_eq!(regs.len(), 60);
    assert!(regs.windows(2).all(|w| w[0] >= w[1]), "--sort registers: most first: {regs:?}");
    let (_, out, stderr) = launch(dir.path(), &["report", "--file", "sub/*.cu"]);
    assert_eq!(rows(&out).len(), 0, "{out}");
    assert!(stderr.contains("none of the 60 records matches --file 'sub/*.cu'"), "{stderr}");
    let (code, _, stderr) = launch(dir.path(), &["report", "--kernel", "("]);
    assert_eq!(code, 2, "a malformed regex is a usage error: {stderr}");

    // JSON: filtered and sorted the same way, every field present.
    let (_, json, _) = launch(dir.path(), &["report", "--format", "json", "--kernel", "^mix_", "--sort", "name"]);
    let doc = exact(&json, report::Document::from_json);
    let names: Vec<&str> = doc.records.iter().map(|r| r.kernel.name.as_str()).collect();
    assert_eq!(names.len(), 20);
    assert_eq!(&names[..3], ["mix_f32_2", "mix_f32_2", "mix_f32_3"]);
    assert_eq!(doc.records[0].kernel.qualified, "kernels/many.cu::mix_f32_2");

    // check: 60 unbounded warnings are one line; --verbose and JSON list all.
    let (code, out, stderr) = launch(dir.path(), &["check"]);
    assert_eq!(code, 0, "{out}\n{stderr}");
    assert!(
        out.contains(
            "warning[unbounded]: 30 kernels × 2 arches have no launch contract (first: scale_f32_2, scale_f32_3, scale_i32_2, …); --verbose lists all"
        ) || out.contains("warning[unbounded]: 30 kernels × 2 arches have no launch contract (first: "),
        "{out}"
    );
    assert_eq!(out.matches("warning[unbounded]").count(), 1, "{out}");
    assert!(out.contains("checked 30 kernels × 2 arches (sm_80, sm_90): 0 errors, 60 warnings"), "{out}");
    let (_, verbose, _) = launch(dir.path(), &["check", "--verbose"]);
    assert_eq!(verbose.matches("warning[unbounded]").count(), 60, "{verbose}");
    let (_, json, _) = launch(dir.path(), &["check", "--format", "json"]);
    let doc = check::Document::from_json(&json).expect("a check document");
    assert_eq!(doc.findings.iter().filter(|f| f.kind == FindingKind::Unbounded).count(), 60);
}

/// `cargo check -v` of the fixture in the tests' shared target dir.
fn cargo_check_v(manifest: &Path) -> (i32, String, String) {
    let mut c = std::process::Command::new(env!("CARGO"));
    c.args(["check", "-v", "--manifest-path"]).arg(manifest).env("CARGO_TARGET_DIR", crate::support::fixtures_target());
    run(&mut c)
}

#[test]
fn unlisted_arches_build_elsewhere_and_the_normal_build_stays_fresh() {
    let dir = fixture("multi");
    let manifest = dir.path().join("Cargo.toml");
    let (code, _, stderr) = launch(dir.path(), &["report"]);
    assert_eq!(code, 0, "{stderr}");
    let package = std::fs::read_to_string(&manifest).unwrap();
    let package = package.split('"').nth(1).unwrap().to_string();

    // The crate lists sm_80, sm_90: report compiles sm_100 as check does.
    let (code, out, stderr) = launch(dir.path(), &["report", "--format", "json", "--arch", "sm_100,sm_90"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = report::Document::from_json(&out).expect("a report document");
    let arches: Vec<String> = doc.records.iter().map(|r| r.arch.to_string()).collect();
    assert_eq!(arches, ["sm_90", "sm_100", "sm_90", "sm_100", "sm_90", "sm_100"], "sorted by number per kernel");
    let (code, out, stderr) = launch(dir.path(), &["check", "--arch", "sm_100,sm_90"]);
    assert_eq!(code, 0, "{out}\n{stderr}");
    assert!(out.contains("checked 3 kernels × 2 arches (sm_90, sm_100)"), "{out}");
    let unbounded: Vec<&str> = out.lines().filter(|l| l.contains("smem_tile on sm_")).collect();
    assert!(unbounded[0].contains("on sm_90") && unbounded[1].contains("on sm_100"), "sm_90 before sm_100: {out}");
    assert!(root().join("target/fixtures/launch-arch/sm_90-sm_100").is_dir());

    // The normal build is untouched: no build script reran, the embedded arches are the crate's.
    let (code, _, stderr) = cargo_check_v(&manifest);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(&format!("Fresh {package}")), "the normal build must stay fresh:\n{stderr}");
    assert!(!stderr.contains("build-script-build`"), "the build script must not rerun:\n{stderr}");

    // An arch the toolchain cannot target is a usage error for report.
    let (code, _, stderr) = launch(dir.path(), &["report", "--arch", "sm_110"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the toolchain cannot target sm_110; it supports: sm_50"), "{stderr}");
}

fn cargo_new(parent: &Path, name: &str) -> std::path::PathBuf {
    let dir = parent.join(name);
    let mut c = std::process::Command::new(env!("CARGO"));
    c.args(["new", "--lib", "--vcs", "none", "--quiet"]).arg(&dir);
    let (code, _, stderr) = run(&mut c);
    assert_eq!(code, 0, "{stderr}");
    dir
}

fn init(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    run(cargo_launch().args(["launch", "init"]).args(extra).current_dir(dir))
}

#[test]
fn init_sets_up_a_fresh_crate_that_reports_and_a_second_run_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cargo_new(tmp.path(), &format!("initk-{}", std::process::id()));
    let (code, out, stderr) = init(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(out.contains("added [package.metadata.launch] (arch = [\"sm_80\", \"sm_90\"])"), "{out}");
    assert!(out.contains("wrote build.rs"), "{out}");
    assert!(out.contains("created kernels/ with an example kernel"), "{out}");
    let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let v = env!("CARGO_PKG_VERSION");
    let dep = |k: &str| format!("{k} = {{ path = \"{}\", version = \"{v}\" }}", root().join(k).display());
    assert!(toml.contains(&dep("launch")), "{toml}");
    assert!(toml.contains(&dep("launch-build")), "{toml}");

    let before: Vec<(String, String)> = ["Cargo.toml", "build.rs", "kernels/example.cu"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read_to_string(dir.join(f)).unwrap()))
        .collect();
    let (code, out, _) = init(&dir, &[]);
    assert_eq!(code, 0);
    assert!(out.contains("is already set up for cargo-launch"), "{out}");
    for (f, text) in before {
        assert_eq!(std::fs::read_to_string(dir.join(&f)).unwrap(), text, "{f} unchanged");
    }

    let (code, out, stderr) = launch(&dir, &["report"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(out.contains("saxpy  sm_80  @launch(256)"), "{out}");
    assert!(out.contains("saxpy  sm_90  @launch(256)"), "{out}");
}

#[test]
fn init_leaves_an_existing_build_script_and_kernel_folder_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cargo_new(tmp.path(), &format!("initb-{}", std::process::id()));
    let build = "// generates bindings\nfn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n}\n";
    std::fs::write(dir.join("build.rs"), build).unwrap();
    std::fs::create_dir(dir.join("cuda")).unwrap();
    let (code, out, stderr) = init(&dir, &["--kernels", "cuda"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.join("build.rs")).unwrap(), build, "build.rs untouched");
    assert!(
        out.contains("to do: build.rs exists and was left as it is: add `launch_build::build();` to its main()"),
        "{out}"
    );
    assert!(std::fs::read_dir(dir.join("cuda")).unwrap().next().is_none(), "an existing kernel folder gets no example");
    assert!(std::fs::read_to_string(dir.join("Cargo.toml")).unwrap().contains("kernels = \"cuda\""));
    // A wrong --path is a usage error that says what it needs.
    let (code, _, stderr) = init(&dir, &["--path", tmp.path().to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("has no launch/Cargo.toml"), "{stderr}");
}

#[test]
fn new_creates_a_crate_like_the_template_and_refuses_a_bad_name() {
    let tmp = tempfile::tempdir().unwrap();
    let name = format!("gemm-lab-{}", std::process::id());
    let (code, out, stderr) = run(cargo_launch().args(["launch", "new", &name]).current_dir(tmp.path()));
    assert_eq!(code, 0, "{stderr}");
    assert!(out.contains(&format!("created `{name}`")), "{out}");
    let dir = tmp.path().join(&name);
    let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(toml.contains(&format!("name = \"{name}\"")), "{toml}");
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(main.contains(&format!("use {}::", name.replace('-', "_"))), "the binary uses the new crate's name");
    let (code, out, stderr) = launch(&dir, &["report", "--arch", "sm_90"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(out.contains("poly_eval_lb1024x2  sm_90  __launch_bounds__(1024, 2)"), "{out}");

    for bad in ["2fast", "my crate", "fn"] {
        let (code, _, stderr) = run(cargo_launch().args(["launch", "new", bad]).current_dir(tmp.path()));
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stderr.contains("cannot be a package name"), "{stderr}");
        assert!(!tmp.path().join(bad).exists());
    }
    let (code, _, stderr) = run(cargo_launch().args(["launch", "new", &name]).current_dir(tmp.path()));
    assert_eq!(code, 2, "an existing folder: {stderr}");
}

/// Every file under `dir`, with its bytes: what a refused `init` must leave as it was.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.push((p.clone(), Vec::new()));
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn init_refuses_what_report_would_refuse_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cargo_new(tmp.path(), &format!("initr-{}", std::process::id()));
    let cases: &[(&[&str], &str)] =
        &[(&["--kernels", "/abs/kernels"], "is absolute"), (&["--kernels", ""], "names no folder")];
    let before = snapshot(&dir);
    for (args, why) in cases {
        let (code, out, stderr) = init(&dir, args);
        assert_eq!(code, 2, "{args:?}: {out}\n{stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
        assert_eq!(snapshot(&dir), before, "{args:?}: nothing written");
    }
    // A file where the kernel folder would go.
    std::fs::write(dir.join("kernels"), "not a folder").unwrap();
    let before = snapshot(&dir);
    let (code, _, stderr) = init(&dir, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is a file, not a folder") && stderr.contains("nothing was written"), "{stderr}");
    assert_eq!(snapshot(&dir), before);
    std::fs::remove_file(dir.join("kernels")).unwrap();

    // An existing table init would leave broken: named with its location, nothing written, no
    // kernel folder left behind.
    let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), format!("{toml}\n[package.metadata.launch]\narch = \"sm_90\"\n")).unwrap();
    let before = snapshot(&dir);
    let (code, out, stderr) = init(&dir, &[]);
    assert_eq!(code, 2, "{out}\n{stderr}");
    assert!(stderr.contains("Cargo.toml:") && stderr.contains("`package.metadata.launch.arch`"), "{stderr}");
    assert_eq!(snapshot(&dir), before, "nothing written, the kernel folder made for the check is gone");
}

#[test]
fn init_keeps_crlf_and_accepts_the_crate_folder_as_manifest_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cargo_new(tmp.path(), &format!("initc-{}", std::process::id()));
    let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap().replace('\n', "\r\n");
    std::fs::write(dir.join("Cargo.toml"), &toml).unwrap();
    let (code, out, stderr) = init(tmp.path(), &["--manifest-path", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{stderr}");
    assert!(out.contains("added [package.metadata.launch]"), "{out}");
    let after = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(after.contains("[package.metadata.launch]\r\n"), "{after:?}");
    assert!(!after.replace("\r\n", "").contains('\n'), "every line ends in CRLF: {after:?}");
    assert!(dir.join("kernels/example.cu").is_file());
}

#[test]
fn new_refuses_names_that_would_not_build() {
    let tmp = tempfile::tempdir().unwrap();
    for (bad, why) in [
        ("_", "is not an identifier"),
        ("launch", "clashes with cargo-launch's own crate `launch`"),
        ("launch-build", "clashes with cargo-launch's own crate `launch-build`"),
        ("cargo-launch", "clashes with cargo-launch's own crate `cargo-launch`"),
    ] {
        let (code, _, stderr) = run(cargo_launch().args(["launch", "new", bad]).current_dir(tmp.path()));
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stderr.contains(why), "{bad}: {stderr}");
        assert!(!tmp.path().join(bad).exists(), "{bad}");
    }
}
