//! Issue 22 item 3: the book builds with the pinned mdBook and its examples run. How the docs are
//! tested and regenerated is written for the book's readers in docs/src/design/docs.md.
//!
//! * The book (docs/) builds with mdBook 0.5.4 (tools/docs/install-mdbook.sh installs it; the test
//!   takes `LAUNCH_MDBOOK`, else the install's path, and skips with the reason without it unless
//!   `LAUNCH_TEST_REQUIRE_MDBOOK=1`, which .ci/run sets), and every relative link and anchor in
//!   the built HTML resolves ([`links::html_links`]).
//! * Links from the pages and the README to repository files exist; every page is in SUMMARY.md.
//! * Code blocks follow the rules ([`blocks`]); marked console blocks run ([`console`]).

mod blocks;
mod console;
mod links;
mod markdown;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::root;

/// The pinned version; tools/docs/install-mdbook.sh installs the same.
const MDBOOK_VERSION: &str = "0.5.4";

/// The files under `dir` ending in `.ext`, sorted; build output (`target`, `book`) left out.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            if e.file_name() != "target" {
                out.extend(files(&path, ext));
            }
        } else if path.extension().is_some_and(|x| x == ext) {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn src() -> PathBuf {
    root().join("docs/src")
}

/// The book's pages and the README, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let mut pages: Vec<PathBuf> = files(&src(), "md");
    pages.push(root().join("README.md"));
    pages.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).expect("read page"))).collect()
}

fn fail_on(errors: Vec<String>, what: &str) {
    assert!(errors.is_empty(), "{what}:\n{}", errors.join("\n"));
}

/// The pinned mdbook: `LAUNCH_MDBOOK`, else where tools/docs/install-mdbook.sh puts it. `None`
/// (after saying why) when it is not there and not required.
fn mdbook() -> Option<PathBuf> {
    let env = launch_engine::tooling::Env::cli();
    let path = env.get(launch_engine::tooling::var::LAUNCH_MDBOOK).map(PathBuf::from).or_else(|| {
        launch_engine::tooling::toolchain::cache_dir(&env)
            .map(|c| c.join(format!("tools/mdbook-{MDBOOK_VERSION}/bin/mdbook")))
    });
    if let Some(path) = path.filter(|p| p.is_file()) {
        return Some(path);
    }
    let why = "no mdbook: run tools/docs/install-mdbook.sh (or set LAUNCH_MDBOOK); the book build and its HTML link check are skipped";
    assert!(
        env.get(launch_engine::tooling::var::LAUNCH_TEST_REQUIRE_MDBOOK).is_none_or(|v| v != "1"),
        "LAUNCH_TEST_REQUIRE_MDBOOK=1: {why}"
    );
    // Past the harness's capture, so the skip shows in a plain `cargo test`.
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
    None
}

#[test]
fn the_book_builds_with_the_pinned_mdbook_and_its_links_and_anchors_resolve() {
    let Some(mdbook) = mdbook() else { return };
    let (code, version, _) = crate::support::run(Command::new(&mdbook).arg("--version"));
    assert_eq!((code, version.trim()), (0, format!("mdbook v{MDBOOK_VERSION}").as_str()), "{}", mdbook.display());
    let out = tempfile::tempdir().expect("temp dir");
    let (code, stdout, stderr) = crate::support::run(
        Command::new(&mdbook).arg("build").arg(root().join("docs")).arg("--dest-dir").arg(out.path()),
    );
    assert_eq!(code, 0, "mdbook build docs failed:\n{stdout}\n{stderr}");
    // mdBook reports a missing include or a bad SUMMARY.md entry as an error yet may still exit 0.
    assert!(!stderr.contains("ERROR"), "mdbook build docs reported errors:\n{stderr}");
    assert!(out.path().join("index.html").is_file(), "no index.html in the built book");
    let mut errors = links::html_links(out.path());
    let readme = root().join("README.md");
    let text = std::fs::read_to_string(&readme).expect("README.md");
    errors.extend(links::anchors_into_book(&root(), &readme, &text, out.path()));
    fail_on(errors, "links in the built book (or from the README into it) that do not resolve");
}

/// The install script is a no-op when the pinned mdbook is in place, and it looks where the
/// test does: `$XDG_CACHE_HOME/cargo-launch` (no cargo on its PATH, so a build would fail).
#[cfg(unix)]
#[test]
fn the_install_script_keeps_an_install_in_the_xdg_cache() {
    let cache = tempfile::tempdir().expect("temp dir");
    let bin = cache.path().join(format!("cargo-launch/tools/mdbook-{MDBOOK_VERSION}/bin/mdbook"));
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&bin, "").unwrap();
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("tools/docs/install-mdbook.sh"))
        .env_remove("LAUNCH_CACHE_DIR")
        .env("XDG_CACHE_HOME", cache.path())
        .env("PATH", "/usr/bin:/bin");
    let (code, stdout, stderr) = crate::support::run(&mut cmd);
    assert_eq!((code, stdout.trim()), (0, bin.display().to_string().as_str()), "{stderr}");
}

/// The install script, CI and this test agree on the version, and CI builds the book and makes a
/// skip of the build a failure.
#[test]
fn ci_builds_the_book_with_the_pinned_mdbook() {
    let script = std::fs::read_to_string(root().join("tools/docs/install-mdbook.sh")).expect("the install script");
    assert!(script.lines().any(|l| l == format!("version={MDBOOK_VERSION}")), "install-mdbook.sh pins another mdbook");
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    assert!(ci.contains("mdbook=\"$(tools/docs/install-mdbook.sh)\"\n\"$mdbook\" build docs\n"), ".ci/run:\n{ci}");
    let tests = ci.lines().filter(|l| l.contains("cargo test --workspace")).collect::<Vec<_>>();
    assert!(!tests.is_empty() && tests.iter().all(|l| l.contains("LAUNCH_TEST_REQUIRE_MDBOOK=1")), "{tests:?}");
}

#[test]
fn links_to_repository_files_exist() {
    let root = root();
    let errors = pages().iter().flat_map(|(page, md)| links::source_links(&root, page, md)).collect();
    fail_on(errors, "links that name no file");
}

#[test]
fn every_page_is_in_the_summary() {
    fail_on(links::pages_missing_from_summary(&src()), "pages mdBook would leave out");
}

#[test]
fn code_blocks_follow_the_rules() {
    let root = root();
    let mut errors = Vec::new();
    for (page, md) in pages() {
        if page == root.join("README.md") {
            errors.extend(blocks::readme(&root, &md));
        } else {
            errors.extend(blocks::book_page(&root, &page, &md));
        }
    }
    fail_on(errors, "code blocks that break the book's rules (docs/src/design/docs.md)");
}

/// Every marked console block, run; with `LAUNCH_BLESS_DOCS=1` the blocks that differ are
/// rewritten with the real output.
#[test]
fn marked_console_blocks_print_what_they_show() {
    let bless = launch_engine::tooling::Env::cli()
        .get(launch_engine::tooling::var::LAUNCH_BLESS_DOCS)
        .is_some_and(|v| v == "1");
    let root = root();
    let mut errors = Vec::new();
    let mut ran = 0;
    for (page, md) in pages() {
        let shown = page.strip_prefix(&root).unwrap_or(&page).display().to_string();
        let mut rewrites = Vec::new();
        let blocks = markdown::blocks(&md);
        // A marker with a blank line (or anything) before the fence would leave its block unrun.
        for (i, line) in md.lines().enumerate() {
            if line.trim_start().starts_with("<!-- run:") && !blocks.iter().any(|b| b.line == i + 2) {
                errors.push(format!("{shown}:{}: a run marker must be the line just before a ```console fence", i + 1));
            }
        }
        for block in blocks {
            let marker = match console::marker(&block.before) {
                None => continue,
                Some(Err(e)) => {
                    errors.push(format!("{shown}:{}: {e}", block.line - 1));
                    continue;
                }
                Some(Ok(m)) => m,
            };
            if block.lang() != "console" {
                errors.push(format!("{shown}:{}: a run marker goes before a ```console block", block.line));
                continue;
            }
            ran += 1;
            if let Err((why, real)) = console::run(&root, &marker, &block.text) {
                let at = format!("{shown}:{} (in a copy of {})", block.line, console::describe(&marker).display());
                errors.push(format!("{at}: {why}"));
                rewrites.push((block, real));
            }
        }
        if bless && !rewrites.is_empty() {
            std::fs::write(&page, markdown::replace_bodies(&md, &rewrites)).expect("write page");
        }
    }
    eprintln!("{ran} run blocks");
    if bless {
        return;
    }
    let hint = "rerun with LAUNCH_BLESS_DOCS=1 cargo test -p launch-tests --test docs to write the real output";
    fail_on(errors, &format!("console blocks whose output differs ({hint})"));
}
