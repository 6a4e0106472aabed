//! Issue 10, items 4, 6 and 7 through the real binary on `fixtures/crates/naming`: one kernel name
//! in two files (from a shared header) keeps both kernels addressable, macro-generated kernels
//! are at the macro invocation (never line 0), and a kernel that only the sm_90 build has is
//! recorded on sm_90 only, with the sm_90 PTX embedded for it.

use std::process::Command;

use launch_schema::manifest::{Manifest, Origin};
use launch_schema::report::Document;

use crate::support::{cargo_launch, exact, fixture, root, run, toolchain_root, SCRUBBED};

/// `cargo <args>` in the fixture copy, with the fixtures' shared target dir.
pub(crate) fn cargo(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO"));
    for v in SCRUBBED.iter() {
        cmd.env_remove(v);
    }
    cmd.current_dir(dir)
        .args(args)
        .env("CARGO_TARGET_DIR", crate::support::fixtures_target())
        .env("CARGO_TERM_COLOR", "never");
    run(&mut cmd)
}

#[test]
fn duplicate_names_macro_kernels_and_arch_gated_kernels_build_run_and_report() {
    toolchain_root();
    let dir = fixture("naming");
    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "report", "--format", "json", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    assert_eq!(code, 0, "{stderr}");
    // Files whose kernels all come from macros or headers are not "files without a kernel".
    assert!(!stderr.contains("no kernel (__global__"), "{stderr}");
    let records = Document::from_json(&stdout).expect("a report document").records;
    let at = |display: &str, arch: &str| {
        records
            .iter()
            .find(|r| r.kernel.display_name == display && r.arch.to_string() == arch)
            .map(|r| (r.kernel.file.clone(), r.kernel.line))
    };
    // Item 4: the same name in two files was fatal ("would be generated as FILL_ONES ... rename
    // one of them"); now both are kept and shown qualified because the plain name is ambiguous.
    assert_eq!(at("kernels/a/ops.cu::fill_ones", "sm_80"), Some(("kernels/a/ops.cu".into(), 1)));
    assert_eq!(at("kernels/b/ops.cu::fill_ones", "sm_90"), Some(("kernels/b/ops.cu".into(), 1)));
    assert_eq!(at("scale_a", "sm_80"), Some(("kernels/a/ops.cu".into(), 3)), "unique names stay plain");
    // Item 6: kernels written by macros were at line 0; now at the invocation that wrote them,
    // `##`-pasted names included.
    assert_eq!(at("ucopy_f32", "sm_80"), Some(("kernels/b/ops.cu".into(), 11)));
    assert_eq!(at("ucopy_f64", "sm_80"), Some(("kernels/b/ops.cu".into(), 12)));
    assert_eq!(at("neg_f32", "sm_90"), Some(("kernels/b/ops.cu".into(), 13)));
    assert_eq!(at("sqr_f32", "sm_90"), Some(("kernels/b/ops.cu".into(), 13)));
    assert!(records.iter().all(|r| r.kernel.line > 0), "no kernel at line 0");
    // Item 7: `hopper_only` exists on sm_90 only: one record, not an sm_80 record with zeros.
    assert_eq!(at("hopper_only", "sm_90"), Some(("kernels/gated.cu".into(), 5)));
    assert_eq!(at("hopper_only", "sm_80"), None);
    assert_eq!(records.len(), 2 * 10 - 1, "10 kernels on 2 arches, less hopper_only on sm_80");

    // The manifest says where each kernel exists, why it is missing elsewhere, and which PTX
    // gives it a JIT path; the sm_90 PTX is embedded next to the sm_80 fallback.
    let manifest = find_manifest(&dir);
    let m = exact(&std::fs::read_to_string(&manifest).unwrap(), Manifest::from_json);
    let hopper = m.kernels.iter().find(|k| k.name == "hopper_only").unwrap();
    assert_eq!(hopper.missing.len(), 1);
    assert_eq!(
        (hopper.missing[0].arch.to_string(), hopper.missing[0].reason.as_str()),
        ("sm_80".into(), "absent from the PTX")
    );
    let gated = m.modules.iter().find(|x| x.file == "kernels/gated.cu").unwrap();
    assert_eq!(gated.extra_ptx.iter().map(|p| p.arch.to_string()).collect::<Vec<_>>(), ["sm_90"]);
    let extra = manifest.parent().unwrap().join(&gated.extra_ptx[0].path);
    assert!(std::fs::read_to_string(extra).unwrap().contains(".entry hopper_only"));
    assert!(m.modules.iter().filter(|x| x.file != "kernels/gated.cu").all(|x| x.extra_ptx.is_empty()));
    let fill = m.kernels.iter().find(|k| k.qualified == "kernels/b/ops.cu::fill_ones").unwrap();
    assert_eq!(
        fill.origin,
        Origin::Header { file: "include/fills.cuh".into(), line: 5 },
        "a kernel from a shared header is at the #include that brings it in"
    );

    // The generated API compiles and names every kernel: modules per file, flat statics where
    // unique, and lookup by `path/file.cu::name` at run time.
    let (code, stdout, stderr) = cargo(dir.path(), &["run", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    for line in [
        "kernels/a/ops.cu::fill_ones -> kernels/a/ops.cu::fill_ones line 1 arches [\"sm_80\", \"sm_90\"]",
        "b/ops.cu::fill_ones -> kernels/b/ops.cu::fill_ones line 1",
        "ucopy_f64 -> kernels/b/ops.cu::ucopy_f64 line 12",
        "hopper_only -> kernels/gated.cu::hopper_only line 5 arches [\"sm_90\"]",
        "fill_ones -> error: `fill_ones` names 2 kernels: kernels/a/ops.cu::fill_ones, kernels/b/ops.cu::fill_ones; \
         name one as `path/file.cu::name`",
        "10 kernels",
    ] {
        assert!(stdout.contains(line), "missing `{line}` in:\n{stdout}");
    }
    // rustdoc takes the generated modules (docs of every module and static).
    let (code, _, stderr) = cargo(dir.path(), &["doc", "--no-deps", "-q"]);
    assert_eq!(code, 0, "{stderr}");
}

/// `OUT_DIR/launch/manifest.json` of the fixture copy's last build (its package name is unique).
pub(crate) fn find_manifest(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let text = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
    let name = text.lines().find_map(|l| l.strip_prefix("name = ")).unwrap().trim_matches('"').to_string();
    let build = root().join("target/fixtures/debug/build");
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(&build)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&format!("{name}-"))))
        .map(|p| p.join("out/launch/manifest.json"))
        .filter(|p| p.is_file())
        .collect();
    found.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    found.pop().expect("the report built the fixture")
}
