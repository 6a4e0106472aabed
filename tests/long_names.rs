//! Kernels with demangled names of hundreds of characters (`fixtures/crates/long_names`, nested
//! templates explicitly instantiated, as CUB's and marlin's are): the text outputs shorten them
//! within their bounds and keep them apart, JSON keeps them whole, and the generated Rust statics
//! get short hashed names that compile.

use std::collections::BTreeSet;

use launch_schema::manifest::Manifest;
use launch_schema::report::Document;

use crate::real_kernels_naming::{cargo, find_manifest};
use crate::support::{cargo_launch, exact, fixture, run, toolchain_root};

/// The widest line `report --summary` prints (docs/src/guide/report.md, "Kernel names in text output").
const LINE_WIDTH: usize = 120;

#[test]
fn long_template_names_are_short_in_text_whole_in_json_and_hashed_in_rust() {
    toolchain_root();
    let dir = fixture("long_names");
    let manifest = dir.path().join("Cargo.toml");
    let launch = |args: &[&str]| {
        let (code, stdout, stderr) = run(cargo_launch().arg("launch").args(args).arg("--manifest-path").arg(&manifest));
        (code, stdout, stderr)
    };

    // JSON: the full demangled names, unchanged.
    let (code, stdout, stderr) = launch(&["report", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let records = Document::from_json(&stdout).expect("a report document").records;
    let full: BTreeSet<String> = records.iter().map(|r| r.kernel.display_name.clone()).collect();
    let long: Vec<&String> = full.iter().filter(|n| n.len() > 300).collect();
    assert_eq!(long.len(), 3, "three names over 300 characters: {full:#?}");
    assert!(long.iter().all(|n| n.contains("tiling::detail::Pipeline<tiling::detail::Shape<128, 128, 32>, 4>")));
    assert!(full.contains("fill"), "{full:#?}");
    let gemm = |threads: u32| {
        long.iter()
            .find(|n| n.starts_with("void gemm<") && n.ends_with(&format!(", {threads}>(float*, float const*, int)")))
    };
    let (gemm128, gemm256) = (gemm(128).expect("gemm<…, 128>"), gemm(256).expect("gemm<…, 256>"));

    // --summary: every line within the bound, each kernel once, the two gemms told apart by the
    // template argument in which they differ.
    let (code, stdout, stderr) = launch(&["report", "--summary"]);
    assert_eq!(code, 0, "{stderr}");
    for line in stdout.lines() {
        assert!(line.chars().count() <= LINE_WIDTH, "{} characters: {line}", line.chars().count());
    }
    assert!(!stdout.contains("tiling::"), "{stdout}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains("kernels/tiled.cu:")).collect();
    let shown: Vec<&str> = rows.iter().map(|l| l.split("  ").next().unwrap().trim()).collect();
    assert_eq!(
        shown.iter().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from(["fill", "gemm<…, 128>", "gemm<…, 256>", "reduce<…>"]),
        "{stdout}"
    );
    assert_eq!(shown.len(), 4, "each kernel once (one arch): {stdout}");
    let line_of = |name: &str| rows.iter().find(|l| l.starts_with(&format!("{name}  "))).unwrap().to_string();
    let at = |l: &str| l.rsplit("  ").next().unwrap().to_string();
    assert_eq!(at(&line_of("gemm<…, 128>")), at(&line_of("gemm<…, 256>")), "both from one template");

    // The detailed report (the default for few records): the short name, then the full one.
    let (code, stdout, stderr) = launch(&["report", "--detailed"]);
    assert_eq!(code, 0, "{stderr}");
    let one = stdout.find("gemm<…, 128>  sm_80  unbounded  ptxas ").expect("the first gemm");
    assert!(stdout[one..].contains(&format!("\n  full name: {gemm128}\n")), "{stdout}");
    let two = stdout.find("gemm<…, 256>  sm_80").expect("the second gemm");
    assert!(stdout[two..].contains(&format!("  full name: {gemm256}\n")), "{stdout}");
    assert!(!stdout.contains("full name: fill"), "a short name is not repeated: {stdout}");

    // check's text names the kernels shortly too; its JSON in full.
    let (_, stdout, stderr) = launch(&["check", "--verbose"]);
    assert!(stdout.contains("gemm<…, 128> on sm_80: "), "{stdout}{stderr}");
    assert!(!stdout.contains("tiling::"), "{stdout}");
    let (_, stdout, _) = launch(&["check", "--format", "json"]);
    assert!(stdout.contains(&serde_json::to_string(gemm128).unwrap()), "{stdout}");

    // The generated statics: short hashed names for the long kernels, `FILL` as always.
    let built = find_manifest(&dir);
    let m = exact(&std::fs::read_to_string(&built).unwrap(), Manifest::from_json);
    let rust: BTreeSet<&str> = m.kernels.iter().map(|k| k.rust_name.as_str()).collect();
    assert!(rust.contains("FILL"), "{rust:?}");
    let hashed = |base: &str, n: &str| {
        n.strip_prefix(base).is_some_and(|h| h.len() == 8 && h.chars().all(|c| c.is_ascii_hexdigit()))
    };
    assert_eq!(rust.iter().filter(|n| hashed("GEMM_", n)).count(), 2, "{rust:?}");
    assert_eq!(rust.iter().filter(|n| hashed("REDUCE_", n)).count(), 1, "{rust:?}");
    let generated = std::fs::read_to_string(built.with_file_name("kernels.rs")).unwrap();
    let statics: Vec<&str> = generated
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub static "))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    // A typed kernel's static has the name; its plain `Kernel` is beside it, `NAME__KERNEL`.
    let named: Vec<&&str> = statics.iter().filter(|s| !s.ends_with("__KERNEL")).collect();
    assert_eq!(named.len(), 5, "four kernels and KERNELS: {statics:?}");
    assert!(statics.iter().all(|s| s.len() <= 64), "{statics:?}");
    assert!(generated.contains("/// Named by its function and a hash of its symbol `_Z4gemm"), "{generated}");
    // Built twice from scratch, the same names: the hash is of the symbol alone.
    let again = fixture("long_names");
    let (code, _, stderr) = run(cargo_launch()
        .args(["launch", "report", "--summary", "--manifest-path"])
        .arg(again.path().join("Cargo.toml")));
    assert_eq!(code, 0, "{stderr}");
    let m2 = exact(&std::fs::read_to_string(find_manifest(&again)).unwrap(), Manifest::from_json);
    assert_eq!(rust, m2.kernels.iter().map(|k| k.rust_name.as_str()).collect::<BTreeSet<_>>());

    // The crate compiles against them and reaches every kernel, whole names and all.
    let (code, stdout, stderr) = cargo(dir.path(), &["run", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("4 kernels"), "{stdout}");
    assert!(stdout.contains(&format!(" {gemm256}\n")), "{stdout}");
}
