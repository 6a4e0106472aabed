//! Issue 32, class 8 (the name matcher): every place that takes a kernel name — a
//! `[package.metadata.launch.kernel."<name>"]` table, a `[package.metadata.launch.tune."<name>"]`
//! table, `cargo launch explore <name>` — reads it as `launch::kernel::name` does (and
//! `launch::find`, tested in `launch`): × the forms {mangled, demangled, bare unique, bare
//! ambiguous, file-qualified, no match} on `fixtures/crates/cpp_names` (a unique C++ kernel,
//! overloads `scale(float*)`/`scale(double*)`, a template instantiated twice).
//!
//! Before: a tune table or `explore` on the bare name of the overloads said it named no kernel
//! (where a kernel table said it names two), and neither took a unique bare name.

use std::path::{Path, PathBuf};

use launch_schema::manifest::Manifest;
use serde_json::Value;

use crate::support::{cargo_launch, fixture, run};

const PACK: &str = "pack_8bit_kernel(unsigned char const*, unsigned char*, unsigned long)";

/// What a place made of a name: the one kernel it names (demangled), or its error's text.
type Outcome = Result<Vec<String>, String>;

/// What a form must give: the kernels it names, or (`Err`) the words the refusal must hold.
type Wanted = Result<Vec<&'static str>, Vec<&'static str>>;

/// The forms: (form, name, what it must give).
fn forms() -> Vec<(&'static str, &'static str, Wanted)> {
    vec![
        ("mangled", "_Z5scalePf", Ok(vec!["scale(float*)"])),
        ("demangled", "scale(double*)", Ok(vec!["scale(double*)"])),
        ("bare unique", "pack_8bit_kernel", Ok(vec![PACK])),
        (
            "bare ambiguous",
            "scale",
            Err(vec!["`scale`", "2 kernels", "kernels/names.cu::scale(float*)", "kernels/names.cu::scale(double*)"]),
        ),
        ("file-qualified", "names.cu::scale(float*)", Ok(vec!["scale(float*)"])),
        ("no match", "nope", Err(vec!["nope", "no kernel"])),
    ]
}

/// A copy of `cpp_names` whose `[package.metadata.launch]` is `arch = ["sm_90"]` and `table`.
fn with_table(table: &str) -> tempfile::TempDir {
    let dir = fixture("cpp_names");
    let path = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = text.split_once("[package.metadata.launch]").unwrap();
    let (_, deps) = rest.split_once("[dependencies]").unwrap();
    std::fs::write(
        &path,
        format!("{head}[package.metadata.launch]\narch = [\"sm_90\"]\n\n{table}\n\n[dependencies]{deps}"),
    )
    .unwrap();
    dir
}

/// `cargo build` of `dir`: its manifest (`OUT_DIR/launch/manifest.json`), or stderr on failure.
fn build(dir: &Path) -> Result<Manifest, String> {
    let mut cmd = crate::support::cargo_in(dir);
    cmd.args(["build", "--message-format=json-render-diagnostics"]);
    let (code, stdout, stderr) = run(&mut cmd);
    if code != 0 {
        return Err(stderr);
    }
    let out_dir = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "build-script-executed")
        .filter(|m| m["package_id"].as_str().is_some_and(|p| p.contains("fixture-cpp-names")))
        .find_map(|m| m["out_dir"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("no build-script-executed message:\n{stdout}"));
    let text = std::fs::read_to_string(out_dir.join("launch/manifest.json")).unwrap();
    Ok(Manifest::from_json(&text).unwrap())
}

/// A kernel table `threads = 48` keyed by `name`: the kernels it set, or the build's error; a
/// table that names no kernel warns, which counts as its error here.
fn kernel_table(name: &str) -> Outcome {
    let dir = with_table(&format!("[package.metadata.launch.kernel.{name:?}]\nthreads = 48"));
    let manifest = build(dir.path())?;
    let set: Vec<String> =
        manifest.kernels.iter().filter(|k| k.host_threads == Some(48)).map(|k| k.display_name.clone()).collect();
    if set.is_empty() {
        let (_, _, stderr) = run(cargo_launch().args(["launch", "report"]).current_dir(dir.path()));
        return Err(stderr.lines().filter(|l| l.contains("names no kernel")).collect::<Vec<_>>().join("\n"));
    }
    Ok(set)
}

/// A tune table `threads = [64]` keyed by `name`: the kernels that got variants, or the error.
fn tune_table(name: &str) -> Outcome {
    let dir = with_table(&format!("[package.metadata.launch.tune.{name:?}]\nthreads = [64]"));
    let manifest = build(dir.path())?;
    Ok(manifest.kernels.iter().filter(|k| !k.variants.is_empty()).map(|k| k.display_name.clone()).collect())
}

/// `cargo launch explore <name> --format json`: the kernel it explored, or its error.
fn explore(name: &str) -> Outcome {
    let dir = with_table("");
    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "explore", name, "--arch", "sm_90", "--format", "json", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    if code != 0 {
        return Err(stderr);
    }
    let doc = launch_schema::explore::Document::from_json(&stdout).unwrap();
    Ok(vec![doc.kernel.display_name])
}

#[test]
fn every_place_that_takes_a_kernel_name_reads_every_form_alike() {
    type Place = (&'static str, fn(&str) -> Outcome);
    let places: [Place; 3] = [("kernel table", kernel_table), ("tune table", tune_table), ("explore", explore)];
    let mut wrong = Vec::new();
    let mut cases = 0;
    for (place, read) in places {
        for (form, name, want) in forms() {
            cases += 1;
            let got = read(name);
            let right = match (&got, &want) {
                (Ok(g), Ok(w)) => g == w,
                (Err(e), Err(words)) => words.iter().all(|w| e.contains(w)),
                _ => false,
            };
            if !right {
                wrong.push(format!("{place} × {form} (`{name}`): {got:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {cases} cases wrong:\n{}", wrong.len(), wrong.join("\n\n"));
}
