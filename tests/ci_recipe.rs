//! The book's CI recipe, run as written: its `run:` lines are read out of the guide's CI page
//! (docs/src/guide/ci.md), so the documentation cannot drift from the binary.
//!
//! `cargo install --locked --path <checkout>/cargo-launch` is the one step not run: it would build
//! the binary under test a second time. The test checks that it installs this repository's
//! `cargo-launch` package from a path (no network source) and puts the already-built binary first
//! on `PATH` instead, which is what the install achieves; every other line runs through the real
//! `cargo`, which finds `cargo-launch` on `PATH` as it would after `cargo install`.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{fixture, root, run, toolchain_root, SCRUBBED};

/// The CI page of the book, where the recipe lives.
const CI_PAGE: &str = "docs/src/guide/ci.md";

/// The `- run:` commands of the YAML block under `## CI recipe`, comments removed.
fn recipe_commands() -> Vec<String> {
    let page = std::fs::read_to_string(root().join(CI_PAGE)).expect(CI_PAGE);
    let section =
        page.split("\n## CI recipe").nth(1).unwrap_or_else(|| panic!("{CI_PAGE} has a `## CI recipe` section"));
    let yaml = section.split("```yaml").nth(1).and_then(|s| s.split("```").next()).expect("a ```yaml block");
    yaml.lines()
        .filter_map(|l| l.trim().strip_prefix("- run:"))
        .map(|c| c.split(" #").next().unwrap_or(c).trim().to_string())
        .collect()
}

#[test]
fn the_books_ci_recipe_runs_as_written() {
    let commands = recipe_commands();
    let words: Vec<Vec<&str>> = commands.iter().map(|c| c.split_whitespace().collect()).collect();
    // The recipe must still install, set up and gate with --deny warnings, or this test proves little.
    assert!(words.iter().any(|w| w.starts_with(&["cargo", "install"])), "{commands:?}");
    assert!(words.iter().any(|w| w == &["cargo", "launch", "setup"]), "{commands:?}");
    assert!(
        words.iter().any(|w| w.starts_with(&["cargo", "launch", "check"]) && w.ends_with(&["--deny", "warnings"])),
        "{commands:?}"
    );

    toolchain_root();
    let bin = crate::support::binary();
    let bin_dir = bin.parent().expect("the binary is in a folder").to_path_buf();
    let path = launch_engine::tooling::Env::cli().get(launch_engine::tooling::var::PATH).unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(&path))).unwrap();
    let dir = fixture("ci");
    for (command, w) in commands.iter().zip(&words) {
        assert!(!command.contains(['"', '\'', '$', '|', '&', ';']), "recipe lines are plain words: {command}");
        assert_eq!(w[0], "cargo", "{command}");
        if w[1] == "install" {
            // Installs from a checkout, never from a network source that may not exist.
            assert!(!w.iter().any(|a| ["--git", "--registry", "--index"].contains(a)), "{command}");
            let at = w.iter().position(|a| *a == "--path").unwrap_or_else(|| panic!("no --path: {command}"));
            let package = PathBuf::from(w[at + 1]);
            assert_eq!(package.file_name().unwrap(), "cargo-launch", "{command}: installs the cargo-launch package");
            assert!(root().join("cargo-launch/Cargo.toml").is_file());
            continue;
        }
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(&w[1..]).current_dir(dir.path()).env("PATH", &path);
        for v in SCRUBBED.iter() {
            cmd.env_remove(v);
        }
        cmd.env("CARGO_TARGET_DIR", crate::support::fixtures_target()).env("CARGO_TERM_COLOR", "never");
        let (code, stdout, stderr) = run(&mut cmd);
        assert_eq!(code, 0, "`{command}` failed:\n{stdout}\n{stderr}");
        if w[1..].starts_with(&["launch", "check"]) {
            // The fixture commits its baseline (for sm_80, sm_90 and sm_100; an arch added to the
            // recipe is a note, not a failure): the gate compared it.
            let arches = w.iter().position(|a| *a == "--arch").map(|at| w[at + 1].split(',').count()).unwrap_or(2);
            assert!(stdout.contains(&format!("checked 1 kernels × {arches} arches (")), "{stdout}");
            assert!(stdout.contains("): 0 errors, 0 warnings; compared against launch-baseline.txt ("), "{stdout}");
        }
    }
}
