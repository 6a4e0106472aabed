//! The published crates are packageable with the metadata a package page needs, ship their
//! README and license texts and nothing of the workspace's own (fixtures, benchmarks, tools,
//! build output); a crate made by `cargo launch new` is packageable too. Cheap: `cargo package`
//! with `--list` or `--no-verify`, offline, never a build.

use std::path::Path;
use std::process::Command;

use crate::support::{cargo_launch, root, run, SCRUBBED};

const CRATES: [&str; 7] =
    ["launch-remote", "launch", "launch-analysis", "launch-schema", "launch-engine", "launch-build", "cargo-launch"];

/// The crates.io category slugs the crates may use (a category not on crates.io's list is refused
/// on upload, not by `cargo package`).
const CATEGORIES: &[&str] = &[
    "development-tools::build-utils",
    "development-tools::cargo-plugins",
    "development-tools::profiling",
    "hardware-support",
    "science",
];

/// `cargo ARGS` in `dir`, offline, with the variables that would change a build removed.
fn cargo(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO"));
    for v in SCRUBBED.iter() {
        cmd.env_remove(v);
    }
    run(cmd.current_dir(dir).args(args).arg("--offline").env("CARGO_TERM_COLOR", "never"))
}

/// `tar -xzOf CRATE NAME-VERSION/Cargo.toml`: the manifest cargo normalised for the registry.
fn normalised_manifest(dot_crate: &Path, name: &str) -> String {
    let entry = format!("{name}-{}/Cargo.toml", env!("CARGO_PKG_VERSION"));
    let (code, out, stderr) = run(Command::new("tar").arg("-xzOf").arg(dot_crate).arg(&entry));
    assert_eq!(code, 0, "tar -xzOf {} {entry}: {stderr}", dot_crate.display());
    out
}

fn valid_keyword(k: &str) -> bool {
    k.len() <= 20
        && k.starts_with(|c: char| c.is_ascii_alphabetic())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || "-_+".contains(c))
}

#[test]
fn the_published_crates_carry_the_package_page_metadata() {
    let (code, out, stderr) = cargo(&root(), &["metadata", "--format-version", "1", "--no-deps"]);
    assert_eq!(code, 0, "{stderr}");
    let meta: serde_json::Value = serde_json::from_str(&out).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    for name in CRATES {
        let p = packages.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("no package {name}"));
        let dir = Path::new(p["manifest_path"].as_str().unwrap()).parent().unwrap().to_path_buf();
        assert!(p["description"].as_str().is_some_and(|d| d.len() > 20), "{name}: description");
        assert_eq!(p["license"], "MIT OR Apache-2.0", "{name}");
        let readme = p["readme"].as_str().unwrap_or_else(|| panic!("{name}: no readme"));
        let text = std::fs::read_to_string(dir.join(readme)).unwrap();
        assert!(text.starts_with(&format!("# {name}\n")), "{name}: its own README, not the project's");
        assert!((20..=60).contains(&text.lines().count()), "{name}: a short README");
        let keywords: Vec<&str> = p["keywords"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
        assert!((1..=5).contains(&keywords.len()) && keywords.iter().all(|k| valid_keyword(k)), "{name}: {keywords:?}");
        let categories = p["categories"].as_array().unwrap();
        assert!(!categories.is_empty() && categories.len() <= 5, "{name}: {categories:?}");
        assert!(categories.iter().all(|c| CATEGORIES.contains(&c.as_str().unwrap())), "{name}: {categories:?}");
        assert!(p["rust_version"].is_string(), "{name}: rust-version");
        // No public repository or home page exists; a made-up one would mislead.
        assert!(p["repository"].is_null() && p["homepage"].is_null(), "{name}");
        assert!(p["publish"].is_null(), "{name}: publishable");
        // Path dependencies on each other carry the version the registry copy will need; the
        // engine, which is no stable API, exactly its own (its users are released with it).
        for dep in p["dependencies"].as_array().unwrap() {
            if dep["path"].is_string() && dep["kind"].is_null() {
                let op = if dep["name"] == "launch-engine" { "=" } else { "^" };
                assert_eq!(dep["req"], format!("{op}{}", env!("CARGO_PKG_VERSION")), "{name} → {}", dep["name"]);
            }
        }
    }
}

#[test]
fn each_package_ships_its_readme_and_the_license_texts_and_no_workspace_files() {
    for name in CRATES {
        let (code, out, stderr) = cargo(&root(), &["package", "-p", name, "--list", "--allow-dirty", "--no-verify"]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let files: Vec<&str> = out.lines().collect();
        for f in ["README.md", "LICENSE-MIT", "LICENSE-APACHE", "Cargo.toml", "src/lib.rs"] {
            assert!(files.contains(&f), "{name} ships {f}: {files:?}");
        }
        for dir in ["target/", "fixtures/", "bench/", "tools/", "tests/"] {
            assert!(!files.iter().any(|f| f.starts_with(dir)), "{name} ships {dir}: {files:?}");
        }
        // The license files are links to the root's texts, shipped as their content.
        for f in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let shipped = std::fs::read_to_string(root().join(name).join(f)).unwrap();
            assert_eq!(shipped, std::fs::read_to_string(root().join(f)).unwrap(), "{name}/{f}");
        }
    }
    // `cargo launch new` embeds the template, so cargo-launch carries a copy inside its package
    // (its Cargo.toml renamed, or cargo would take the folder for a package and leave it out).
    let (_, out, _) = cargo(&root(), &["package", "-p", "cargo-launch", "--list", "--allow-dirty", "--no-verify"]);
    for f in ["template/Cargo.toml.in", "template/build.rs", "template/kernels/poly.cu", "template/src/main.rs"] {
        assert!(out.lines().any(|l| l == f), "cargo-launch ships {f}: {out}");
    }
}

#[test]
fn the_packaged_manifests_depend_on_each_other_by_version_and_drop_path_dev_dependencies() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().display().to_string();
    let mut args = vec!["package", "--no-verify", "--allow-dirty", "--exclude-lockfile", "--target-dir", &target];
    for name in CRATES {
        args.extend(["-p", name]);
    }
    let (code, _, stderr) = cargo(&root(), &args);
    assert_eq!(code, 0, "{stderr}");
    let version = env!("CARGO_PKG_VERSION");
    for name in CRATES {
        let dot_crate = tmp.path().join("package").join(format!("{name}-{version}.crate"));
        let toml = normalised_manifest(&dot_crate, name);
        assert!(!toml.contains("path = \"..") && !toml.contains("fuzz-harness"), "{name}:\n{toml}");
        assert!(!toml.contains("[dev-dependencies.launch]"), "{name}: path-only dev-dependencies are dropped:\n{toml}");
        assert!(toml.contains("readme = \"README.md\""), "{name}:\n{toml}");
    }
    let cli =
        normalised_manifest(&tmp.path().join("package").join(format!("cargo-launch-{version}.crate")), "cargo-launch");
    for (dep, req) in [("launch", version.to_string()), ("launch-engine", format!("={version}"))] {
        assert!(cli.contains(&format!("[dependencies.{dep}]\nversion = \"{req}\"\n")), "{cli}");
    }
}

#[test]
fn a_crate_made_by_new_is_packageable_with_versioned_dependencies() {
    let tmp = tempfile::tempdir().unwrap();
    let name = format!("pkg-lab-{}", std::process::id());
    let (code, _, stderr) = run(cargo_launch().args(["launch", "new", &name]).current_dir(tmp.path()));
    assert_eq!(code, 0, "{stderr}");
    let dir = tmp.path().join(&name);

    let (code, out, stderr) = cargo(&dir, &["package", "--list", "--allow-dirty", "--no-verify"]);
    assert_eq!(code, 0, "{stderr}");
    for f in ["Cargo.toml", "build.rs", "kernels/poly.cu", "kernels/poly.cuh", "src/lib.rs", "src/main.rs"] {
        assert!(out.lines().any(|l| l == f), "{f}: {out}");
    }
    // Only cargo's note about a missing documentation/homepage/repository link remains: the
    // description and license are there (as placeholders to replace).
    assert!(!stderr.contains("description") && !stderr.contains("license"), "{stderr}");

    // The registry has no launch of this version yet, so no lock file is resolved.
    let target = dir.join("target").display().to_string();
    let (code, _, stderr) =
        cargo(&dir, &["package", "--no-verify", "--allow-dirty", "--exclude-lockfile", "--target-dir", &target]);
    assert_eq!(code, 0, "{stderr}");
    let version = env!("CARGO_PKG_VERSION");
    let toml = normalised_manifest(&dir.join(format!("target/package/{name}-{version}.crate")), &name);
    assert!(
        toml.contains(&format!("[dependencies.launch]\nversion = \"{version}\"\nfeatures = [\"cudarc\"]\n")),
        "{toml}"
    );
    assert!(toml.contains(&format!("[build-dependencies.launch-build]\nversion = \"{version}\"\n")), "{toml}");
    assert!(!toml.contains("path = \"/") && !toml.contains("publish ="), "{toml}");
    assert!(toml.contains("license = \"MIT OR Apache-2.0\""), "{toml}");
}
