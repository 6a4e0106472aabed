//! The public API of the library crates, one item per line, compared to the committed listing of
//! each crate (`public-api/<crate>.txt`), so that a change of the API is a visible diff in review.
//!
//! `cargo public-api` and rustdoc's JSON need a nightly toolchain, which the build machines do not
//! have; the sources read with syn (already this test's dependency) give the same listing on
//! stable, without resolving types: signatures are as written, and a re-export is listed as
//! written and, when it names an item of a private module, with that item's own lines.
//!
//! What is listed: every `pub` item reachable from `src/lib.rs` through `pub mod`s (files, inline
//! modules and `#[path]`), with its signature (functions), its `pub` fields (structs), its variants
//! (enums), its items (traits), its type (consts, statics); `pub use` as written; the `pub`
//! methods and the trait impls of the listed types wherever they are written; and the
//! attributes a user depends on (`derive`, `non_exhaustive`, `cfg` ...). `#[cfg(test)]` is left
//! out. Bless a deliberate change with `LAUNCH_BLESS_API=1`.

mod items;
mod modules;
mod text;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use items::Crate;
use modules::{load, parse, ModuleInfo};

/// The crate in `crate_dir`, named `name`, as its sorted lines.
pub fn listing(crate_dir: &Path, name: &str) -> Result<Vec<String>, String> {
    let root = crate_dir.join("src/lib.rs");
    let mut modules = Vec::new();
    let (text, items) = parse(&root)?;
    load(&root, Vec::new(), items, &text, ModuleInfo::root(), &mut modules)?;
    let crate_ = Crate { name: name.replace('-', "_"), modules };
    Ok(crate_.lines().into_iter().collect())
}

/// The lines only in `expected` (`-`) and only in `actual` (`+`), in the listing's order.
pub fn diff(expected: &[String], actual: &[String]) -> String {
    let (old, new): (BTreeSet<&String>, BTreeSet<&String>) = (expected.iter().collect(), actual.iter().collect());
    let mut all: Vec<(&String, char)> = old.difference(&new).map(|l| (*l, '-')).collect();
    all.extend(new.difference(&old).map(|l| (*l, '+')));
    all.sort();
    all.into_iter().map(|(line, sign)| format!("{sign}{line}\n")).collect()
}

/// The crates whose API is listed.
const LIBRARIES: [&str; 6] =
    ["launch-remote", "launch", "launch-analysis", "launch-schema", "launch-engine", "launch-build"];

/// How to accept a deliberate change.
const BLESS: &str = "LAUNCH_BLESS_API=1 cargo test -p launch-tests --test architecture public_api";

fn snapshot(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("architecture/public-api").join(format!("{name}.txt"))
}

/// Each library's public API is the committed listing; `LAUNCH_BLESS_API=1` writes it instead.
#[test]
fn the_public_api_is_the_committed_one() {
    let bless = launch_engine::tooling::Env::cli()
        .flag(launch_engine::tooling::var::LAUNCH_BLESS_API)
        .expect("LAUNCH_BLESS_API is 1 or 0");
    let mut changed = String::new();
    for name in LIBRARIES {
        let actual = listing(&crate::crate_dir(name), name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let file = snapshot(name);
        if bless {
            let header = format!("# The public API of `{name}`, one item per line (tests/architecture/public_api.rs).\n# After a deliberate change: {BLESS}\n");
            std::fs::write(&file, header + &actual.join("\n") + "\n")
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            continue;
        }
        let committed = std::fs::read_to_string(&file).unwrap_or_default();
        let expected: Vec<String> = committed.lines().filter(|l| !l.starts_with('#')).map(String::from).collect();
        if expected != actual {
            changed.push_str(&format!("--- {}\n+++ {name} now\n{}", file.display(), diff(&expected, &actual)));
        }
    }
    assert!(
        changed.is_empty(),
        "the public API changed; if that is meant, run `{BLESS}` and commit the listing:\n{changed}"
    );
}

/// The listing reads what matters: a known line of each kind is there.
#[test]
fn the_listing_holds_each_kind_of_item() {
    let launch = listing(&crate::crate_dir("launch"), "launch").unwrap();
    let build = listing(&crate::crate_dir("launch-build"), "launch-build").unwrap();
    let engine = listing(&crate::crate_dir("launch-engine"), "launch-engine").unwrap();
    let schema = listing(&crate::crate_dir("launch-schema"), "launch-schema").unwrap();
    let expected = [
        (&launch, "launch::cuda  #[cfg(feature = \"cudarc\")] pub mod cuda"),
        (&launch, "launch::include_kernels  macro_rules! include_kernels"),
        (&launch, "launch::tune::TuneKey::problem  pub problem: String"),
        (&launch, "launch::cuda::check_launch  pub fn check_launch(kernel: &str, jit_from: Option<Arch>, dev: &DeviceInfo, contract: Option<&Contract>, func: &FunctionInfo, cfg: &LaunchConfig) -> Result<Approval, LaunchError>"),
        (&engine, "launch_engine::tooling::Env::flag  pub fn flag(&self, var: &EnvVar) -> Result<bool, Error>"),
        (&build, "launch_build  pub use launch_engine::{build, try_build, Config, Error}"),
        (&engine, "launch_engine::error  pub use launch_schema::diagnostics::{Diagnostic, ErrorKind, Severity}"),
        (&schema, "launch_schema::diagnostics::ErrorKind::Toolchain  variant Toolchain"),
    ];
    for (lines, line) in expected {
        assert!(lines.iter().any(|l| l == line), "`{line}` is not in the listing:\n{}", lines.join("\n"));
    }
    let error = engine.iter().find(|l| l.starts_with("launch_engine::error::Error  ")).expect("the error enum");
    assert!(error.contains("#[non_exhaustive] pub enum Error"), "{error}");
    assert!(!engine.iter().any(|l| l.contains("build_with")), "a private function is not listed");
}

/// A planted change shows: a function added to a public module, a method to a re-exported type
/// of a private module, a field made private.
#[test]
fn the_listing_sees_a_planted_change() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("inner")).unwrap();
    let write = |file: &str, text: &str| std::fs::write(src.join(file), text).unwrap();
    write(
        "lib.rs",
        "pub mod shown;\nmod inner;\npub use inner::Thing;\n#[cfg(test)]\nmod tests {\n    pub fn no() {}\n}\n",
    );
    write("inner/mod.rs", "pub struct Thing {\n    pub size: u32,\n}\nimpl Thing {\n    pub fn new() -> Thing { Thing { size: 0 } }\n    fn hidden(&self) {}\n}\n");
    write("shown.rs", "/// Doc.\npub fn one(\n    x: u32, // why\n) -> u32 {\n    x\n}\nfn private() {}\n");
    let before = listing(dir.path(), "planted").unwrap();
    assert_eq!(
        before,
        [
            "planted  pub use inner::Thing",
            "planted::Thing  pub struct Thing",
            "planted::Thing::new  pub fn new() -> Thing",
            "planted::Thing::size  pub size: u32",
            "planted::shown  pub mod shown",
            "planted::shown::one  pub fn one(x: u32) -> u32",
        ]
    );
    write("shown.rs", "pub fn one(x: u32) -> u32 {\n    x\n}\npub fn two() {}\n");
    write("inner/mod.rs", "#[non_exhaustive]\npub struct Thing {\n    size: u32,\n}\nimpl Thing {\n    pub fn new() -> Thing { Thing { size: 0 } }\n    pub fn size(&self) -> u32 { self.size }\n}\n");
    let after = listing(dir.path(), "planted").unwrap();
    assert_eq!(
        diff(&before, &after),
        "+planted::Thing  #[non_exhaustive] pub struct Thing\n\
         -planted::Thing  pub struct Thing\n\
         +planted::Thing::size  pub fn size(&self) -> u32\n\
         -planted::Thing::size  pub size: u32\n\
         +planted::shown::two  pub fn two()\n"
    );
}
