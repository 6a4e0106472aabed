//! The crates by audience, as rules on their manifests and on what cargo resolves for them: which
//! workspace crate may depend on which (the layers of `docs/src/design/architecture.md`), and what
//! a user's binary (`launch`) and a kernel crate's build script (`launch-build`) pull in.

use std::collections::BTreeSet;
use std::process::Command;

use crate::crate_dir;

/// Each workspace crate and the workspace crates it may depend on (normal dependencies), exactly.
/// One direction only: remote store ← run time ← analysis ← documents ← engine ← front door / CLI
/// (the remote store is below both of its users, the tuner in `launch` and the kernel cache in the
/// engine).
const LAYERS: &[(&str, &[&str])] = &[
    ("launch-remote", &[]),
    ("launch", &["launch-remote"]),
    ("launch-analysis", &["launch"]),
    ("launch-schema", &["launch", "launch-analysis"]),
    ("launch-engine", &["launch", "launch-remote", "launch-analysis", "launch-schema"]),
    ("launch-build", &["launch-engine"]),
    ("cargo-launch", &["launch", "launch-analysis", "launch-schema", "launch-engine"]),
];

/// What only the CLI needs; a build script must never compile it.
const CLI_ONLY: &[&str] = &["cargo-launch", "cargo_metadata", "clap", "anyhow", "regex", "flate2", "opendal", "tokio"];

/// What only the build needs; the documents crate, which other tools link, must never compile it.
const BUILD_ONLY: &[&str] =
    &["launch-engine", "toml_edit", "libloading", "jobserver", "cc", "which", "cpp_demangle", "tempfile"];

/// The workspace crates named in `[dependencies]` of a crate's manifest.
fn workspace_dependencies(name: &str) -> BTreeSet<String> {
    let path = crate_dir(name).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: toml_edit::DocumentMut = text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let deps = doc.get("dependencies").and_then(|d| d.as_table_like()).expect("a [dependencies] table");
    deps.iter()
        .filter(|(_, v)| v.as_table_like().is_some_and(|t| t.contains_key("path")))
        .map(|(k, _)| k.to_string())
        .collect()
}

/// The packages cargo resolves for `package`'s normal dependencies with `features` (none: the
/// defaults), read from `cargo tree` offline.
fn resolved(package: &str, features: &[&str]) -> BTreeSet<String> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["tree", "-q", "--offline", "-e", "normal", "--prefix", "none", "-p", package]);
    if !features.is_empty() {
        cmd.arg("--features").arg(features.join(","));
    }
    let out = cmd.current_dir(crate_dir("launch")).output().expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.split_whitespace().next()).map(String::from).collect()
}

/// Every workspace crate's dependencies on the others are exactly its layer's.
#[test]
fn each_crate_depends_only_on_the_crates_below_it() {
    let mut wrong = Vec::new();
    for (name, allowed) in LAYERS {
        let found = workspace_dependencies(name);
        let allowed: BTreeSet<String> = allowed.iter().map(|s| s.to_string()).collect();
        if found != allowed {
            wrong.push(format!("{name}: depends on {found:?}, its layer allows exactly {allowed:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A user's binary links `launch`: without features it compiles nothing else but the remote store
/// its tune cache uses (`launch-remote`, itself without a dependency: its network stores are a
/// feature), and its run-time feature (`cudarc`) brings neither a document nor a build-time crate.
#[test]
fn a_users_binary_links_only_the_runtime() {
    assert_eq!(resolved("launch-remote", &[]), BTreeSet::from(["launch-remote".to_string()]));
    assert_eq!(resolved("launch", &[]), BTreeSet::from(["launch".to_string(), "launch-remote".to_string()]));
    let with_cudarc = resolved("launch", &["cudarc"]);
    for forbidden in ["launch-schema", "launch-analysis", "serde", "serde_json", "toml_edit", "cargo_metadata"] {
        assert!(!with_cudarc.contains(forbidden), "launch --features cudarc pulls in {forbidden}: {with_cudarc:?}");
    }
}

/// A kernel crate's build script compiles `launch-build` and what the build needs, never the CLI's
/// crates (nor the remote store's without its feature).
#[test]
fn the_build_dependency_pulls_in_nothing_of_the_cli() {
    let tree = resolved("launch-build", &[]);
    assert!(tree.contains("launch-engine") && tree.contains("toml_edit"), "{tree:?}");
    let found: Vec<&&str> = CLI_ONLY.iter().filter(|c| tree.contains(**c)).collect();
    assert!(found.is_empty(), "launch-build pulls in {found:?}");
}

/// Another tool that reads the documents compiles neither the build nor the CLI.
#[test]
fn the_documents_crate_is_light() {
    let tree = resolved("launch-schema", &[]);
    let found: Vec<&&str> = BUILD_ONLY.iter().chain(CLI_ONLY).filter(|c| tree.contains(**c)).collect();
    assert!(found.is_empty(), "launch-schema pulls in {found:?}");
}

/// The rules above see every workspace crate that publishes (a new one must be placed).
#[test]
fn every_published_crate_has_a_layer() {
    let root = crate_dir("launch").join("..");
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    let members = doc["workspace"]["members"].as_array().expect("workspace members");
    for m in members.iter().filter_map(|m| m.as_str()) {
        let manifest = std::fs::read_to_string(root.join(m).join("Cargo.toml")).unwrap();
        let publishes = !manifest.contains("publish = false");
        let placed = LAYERS.iter().any(|(name, _)| *name == m);
        assert!(!publishes || placed, "{m} is published but has no layer in tests/architecture/crates.rs");
    }
}
