//! Documents written by the real tools, validated against the committed schemas: the binary's
//! documents on the template, on a crate whose kernel does not build and on a crate with prebuilt
//! kernels, and the build script's files in their OUT_DIRs. Also the other way round: documents
//! changed so that readers refuse them fail the schemas, and changes readers take pass.

use std::path::{Path, PathBuf};

use launch::Resources;
use launch_analysis::{analyze, HostLaunch};
use launch_schema::report;
use serde_json::{json, Value};

use super::docs_src;
use super::support::{cargo_launch, fixture, root, run, tail, toolchain_root};

/// The committed schema `docs/src/schemas/<name>.schema.json`, compiled.
fn validator(name: &str) -> jsonschema::Validator {
    let path = docs_src().join(format!("schemas/{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{}: not a schema: {e}", path.display()))
}

/// Why `doc` is not a valid `name` document, one line per error (empty: valid).
fn errors(name: &str, doc: &Value) -> Vec<String> {
    validator(name).iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

/// `text` parsed and checked against the `name` schema; `what` says where it came from.
fn valid(name: &str, what: &str, text: &str) -> Value {
    let doc: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{text}"));
    let errors = errors(name, &doc);
    assert!(errors.is_empty(), "{what} is not a valid {name} document:\n{}\n{text}", errors.join("\n"));
    doc
}

/// `cargo launch <args>`; its stdout (the exit code is the command's business: `check` exits 1
/// on the findings these documents are for).
fn stdout_of(args: &[&str], dir: Option<&Path>) -> String {
    stdout_with(args, dir, &[0, 1])
}

/// [`stdout_of`], for a command that exits with one of `codes`.
fn stdout_with(args: &[&str], dir: Option<&Path>, codes: &[i32]) -> String {
    let mut cmd = cargo_launch();
    cmd.arg("launch").args(args);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let (code, stdout, stderr) = run(&mut cmd);
    assert!(codes.contains(&code), "cargo launch {args:?} exited {code}:\n{}", tail(&stderr, 40));
    stdout
}

/// `OUT_DIR/launch/<file>` of the last build of `package` in the fixtures' target folder.
fn out_file(package: &str, file: &str) -> (PathBuf, String) {
    let build = root().join("target/fixtures/debug/build");
    let path = std::fs::read_dir(&build)
        .unwrap_or_else(|e| panic!("{}: {e}", build.display()))
        .filter_map(Result::ok)
        // `<package>-<hash>`: not another package whose name starts with this one's.
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix(package)
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|hash| hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()))
        })
        .map(|e| e.path().join("out/launch").join(file))
        .filter(|p| p.is_file())
        .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| panic!("no {package}-*/out/launch/{file} under {}", build.display()));
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

/// The package name of the fixture copy at `dir` (made unique by `support::fixture`).
fn package_of(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let line = text.lines().find(|l| l.starts_with("name = ")).unwrap();
    line.trim_start_matches("name = ").trim_matches('"').to_string()
}

/// No compile: the calculator's two shapes (one launching, one failing) and doctor's state.
#[test]
fn the_calculators_and_doctors_documents_are_valid() {
    let detail = stdout_of(&["occupancy", "--arch", "sm_90", "--registers", "167", "--format", "json"], None);
    valid("occupancy", "occupancy", &detail);
    let failing = ["occupancy", "--arch", "sm_90", "--registers", "167", "--threads", "1024", "--format", "json"];
    let failing = valid("occupancy", "occupancy of a failing launch", &stdout_of(&failing, None));
    assert_eq!(failing["launch_error"]["kind"], "registers", "{failing}");
    let sweep = ["occupancy", "--arch", "sm_86", "--static-smem", "16K", "--sweep", "smem", "--format", "json"];
    valid("occupancy", "occupancy --sweep", &stdout_of(&sweep, None));
    let manifest = root().join("template/Cargo.toml");
    let doctor = stdout_of(&["doctor", "--format", "json", "--manifest-path", manifest.to_str().unwrap()], None);
    let doctor = valid("doctor", "doctor", &doctor);
    assert!(doctor["crate"].is_object(), "{doctor}");
}

/// The template: report, check, explore, coverage, a diff of two reports, and its build's manifest
/// and statistics.
#[test]
fn the_templates_documents_are_valid() {
    toolchain_root();
    let manifest = root().join("template/Cargo.toml");
    let m = manifest.to_str().unwrap();
    let report_text = stdout_of(&["report", "--format", "json", "--manifest-path", m], None);
    let report = valid("report", "report", &report_text);
    valid("check", "check", &stdout_of(&["check", "--format", "json", "--manifest-path", m], None));
    let explore = ["explore", "poly_eval", "--arch", "sm_90", "--max-regs", "cliffs", "--format", "json"];
    valid("explore", "explore", &stdout_of(&[&explore[..], &["--manifest-path", m]].concat(), None));
    let coverage = ["coverage", "--gpu", "A100,T4,sm_90,B200", "--driver", "12.4", "--format", "json"];
    valid("coverage", "coverage", &stdout_of(&[&coverage[..], &["--manifest-path", m]].concat(), None));
    valid("manifest", "the template's manifest.json", &out_file("launch-template", "manifest.json").1);
    valid("build-stats", "the template's build-stats.json", &out_file("launch-template", "build-stats.json").1);

    // A diff with a change of every kind it reports: registers up, spills, a kernel gone.
    let tmp = tempfile::tempdir().unwrap();
    let mut new = report.clone();
    let records = new["records"].as_array_mut().unwrap();
    records[0]["ptxas"]["registers"] = json!(records[0]["ptxas"]["registers"].as_u64().unwrap() + 40);
    records[1]["ptxas"]["spill_stores"] = json!(64);
    let gone = records[2]["name"].clone();
    records.retain(|r| r["name"] != gone);
    let (old_path, new_path) = (tmp.path().join("old.json"), tmp.path().join("new.json"));
    std::fs::write(&old_path, &report_text).unwrap();
    std::fs::write(&new_path, new.to_string()).unwrap();
    let diff = stdout_of(&["diff", old_path.to_str().unwrap(), new_path.to_str().unwrap(), "--format", "json"], None);
    let diff = valid("diff", "diff of two reports", &diff);
    assert!(
        !diff["changes"].as_array().unwrap().is_empty() && !diff["removed"].as_array().unwrap().is_empty(),
        "{diff}"
    );
}

/// A kernel that does not compile: check's `compile` findings and the build's diagnostics.json.
#[test]
fn a_failed_builds_documents_are_valid() {
    toolchain_root();
    let dir = fixture("broken_kernel");
    let m = dir.path().join("Cargo.toml");
    // 4: the failed build's exit code.
    let check = stdout_with(&["check", "--format", "json", "--manifest-path", m.to_str().unwrap()], None, &[4]);
    let check = valid("check", "check of a failed build", &check);
    assert!(check["findings"].as_array().unwrap().iter().any(|f| f["kind"] == "compile"), "{check}");
    let (path, text) = out_file(&package_of(dir.path()), "diagnostics.json");
    valid("diagnostics", &path.display().to_string(), &text);
}

/// `prebuild`'s summary, the folder's record and manifest (a tune grid's variants in it), and
/// the statistics of a build that embedded the folder.
#[test]
fn a_prebuilt_crates_documents_are_valid() {
    toolchain_root();
    let dir = fixture("prebuilt_kernels");
    let summary = stdout_of(&["prebuild", "--format", "json"], Some(dir.path()));
    valid("prebuild", "prebuild --format json", &summary);
    let folder = dir.path().join("launch-prebuilt");
    valid("prebuilt", "prebuilt.json", &std::fs::read_to_string(folder.join("prebuilt.json")).unwrap());
    let manifest =
        valid("manifest", "the prebuilt manifest", &std::fs::read_to_string(folder.join("manifest.json")).unwrap());
    assert!(manifest["kernels"].as_array().unwrap().iter().any(|k| k["variants"].is_array()), "{manifest}");
    let report = stdout_of(&["report", "--format", "json"], Some(dir.path()));
    valid("report", "report of a prebuilt crate", &report);
    let (path, stats) = out_file(&package_of(dir.path()), "build-stats.json");
    let stats = valid("build-stats", &path.display().to_string(), &stats);
    assert!(stats["prebuilt"].is_object(), "the build did not embed the prebuilt folder: {stats}");
}

/// A report written by serde from the real types: a kernel with the article's trap (167
/// registers at 512 threads), so the document has a launch error, notes and a cliff.
fn sample_report() -> Value {
    let r = Resources { registers: 167, ..Default::default() };
    let analysed = analyze("sm_90".parse().unwrap(), &r, None, HostLaunch { threads: 512, dynamic_smem: 0 }).unwrap();
    let id = report::KernelId {
        package: "p".into(),
        name: "poly_eval".into(),
        display_name: "poly_eval".into(),
        qualified: "kernels/poly.cu::poly_eval".into(),
        file: "kernels/poly.cu".into(),
        line: 7,
    };
    let record = report::Record::new(id, vec!["ptxas info    : Used 167 registers".into()], &analysed);
    let doc = report::Document::new(
        launch_schema::manifest::Toolchain { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into() },
        vec![record],
    );
    serde_json::to_value(doc).unwrap()
}

/// The schema refuses what the reader refuses, and takes what the reader takes: each change
/// below, with whether both accept it. (The reader is laxer in one way the schema is not: a
/// missing field whose type is an Option reads as null; the tools always write it, so the schema
/// requires it.)
#[test]
fn a_document_the_reader_refuses_is_not_valid() {
    type Change = fn(&mut Value);
    let changes: [(&str, Change, bool); 9] = [
        ("unchanged", |_| {}, true),
        ("a field no version has (a newer writer's)", |d| d["records"][0]["new_field"] = json!(1), true),
        ("`drivers` absent (it has a default)", |d| drop(d.as_object_mut().unwrap().remove("drivers")), true),
        (
            "`next_block` absent (it has a default)",
            |d| drop(d["records"][0].as_object_mut().unwrap().remove("next_block")),
            true,
        ),
        ("`arch` absent", |d| drop(d["records"][0].as_object_mut().unwrap().remove("arch")), false),
        (
            "`qualified` absent (a flattened field)",
            |d| drop(d["records"][0].as_object_mut().unwrap().remove("qualified")),
            false,
        ),
        ("version 1", |d| d["schema"] = json!(1), false),
        ("a limiter no version knows", |d| d["records"][0]["occupancy"]["limiters"] = json!(["bogus"]), false),
        (
            "a launch error of unknown kind",
            |d| d["records"][0]["occupancy"]["launch_error"]["kind"] = json!("bogus"),
            false,
        ),
    ];
    let base = sample_report();
    assert!(base["records"][0]["occupancy"]["launch_error"].is_object(), "{base}");
    for (what, change, ok) in changes {
        let mut doc = base.clone();
        change(&mut doc);
        let schema = errors("report", &doc);
        assert_eq!(schema.is_empty(), ok, "{what}: the schema says {schema:?}\n{doc}");
        let reader = report::Document::from_json(&doc.to_string());
        assert_eq!(reader.is_ok(), ok, "{what}: the reader says {reader:?}");
    }
    // An arch name must look like one (the reader refuses it too, as an unknown arch).
    let mut doc = base;
    doc["records"][0]["arch"] = json!("compute_90");
    assert!(!errors("report", &doc).is_empty() && report::Document::from_json(&doc.to_string()).is_err());
}
