//! The code-block rules of the book (docs/src) and the README (see docs/src/design/docs.md):
//!
//! * `rust` blocks in the book hold only mdBook includes (`{{#include path}}`, with `:anchor` or
//!   `:start:end` lines) of Rust files that the tests compile; the include must resolve. In the
//!   README, which GitHub shows without mdBook, a `rust` block's text must appear verbatim in such
//!   a file.
//! * `toml` blocks (book and README): literal TOML or an include of it. It must parse, and a
//!   `[package.metadata.launch]` table in it must be accepted by launch-build's own parser,
//!   `launch_engine::Config::parse`, or refused when the info string is `toml,error`.

use std::path::{Path, PathBuf};

use super::markdown::Block;

/// The folders (relative to the repository) whose Rust files are compiled by the tests:
/// the template and the fixture crates (built through the binary under test or as dev-dependencies
/// of launch-tests), the crates' sources, examples and tests (`cargo test --workspace` builds
/// examples too), and the tests themselves.
pub const COMPILED: &[&str] = &[
    "template/src/",
    "template/build.rs",
    "fixtures/crates/",
    "launch/src/",
    "launch/examples/",
    "launch/tests/",
    "launch-analysis/src/",
    "launch-schema/src/",
    "launch-engine/src/",
    "launch-build/src/",
    "launch-build/examples/",
    "launch-build/tests/",
    "cargo-launch/src/",
    "cargo-launch/tests/",
    "tests/",
];

/// One `{{#include path[:anchor|:start[:end]]}}` line, resolved against `dir` (the page's folder):
/// the path, and the text mdBook puts in its place.
pub fn include(dir: &Path, line: &str) -> Result<(PathBuf, String), String> {
    let inner = line
        .trim()
        .strip_prefix("{{#include ")
        .or_else(|| line.trim().strip_prefix("{{#rustdoc_include "))
        .and_then(|s| s.strip_suffix("}}"))
        .ok_or_else(|| format!("`{}` is not an mdBook include ({{{{#include path}}}})", line.trim()))?
        .trim();
    let (file, selector) = inner.split_once(':').unwrap_or((inner, ""));
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("`{}`: {e}", path.display()))?;
    let keep = |l: &&str| !l.contains("ANCHOR:") && !l.contains("ANCHOR_END:");
    let lines: Vec<&str> = text.lines().collect();
    let body: Vec<&str> = if selector.is_empty() {
        lines.iter().copied().filter(keep).collect()
    } else if selector.split(':').all(|n| n.is_empty() || n.chars().all(|c| c.is_ascii_digit())) {
        let (a, b) = selector.split_once(':').unwrap_or((selector, selector));
        let start = a.parse::<usize>().unwrap_or(1).max(1);
        let end = if b.is_empty() { lines.len() } else { b.parse().unwrap_or(0) };
        if start > lines.len() || end < start || end > lines.len() {
            return Err(format!("`{file}` has {} lines; `{selector}` is outside them", lines.len()));
        }
        lines[start - 1..end].iter().copied().filter(keep).collect()
    } else {
        let open = format!("ANCHOR: {selector}");
        let close = format!("ANCHOR_END: {selector}");
        let start = lines.iter().position(|l| l.trim_end().ends_with(&open));
        let end = start.and_then(|s| lines[s..].iter().position(|l| l.trim_end().ends_with(&close)).map(|e| s + e));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(format!("`{file}` has no `{open}` ... `{close}` pair"));
        };
        lines[start + 1..end].iter().copied().filter(keep).collect()
    };
    Ok((path, body.iter().map(|l| format!("{l}\n")).collect()))
}

/// Whether `path` (absolute) is a Rust file in one of the [`COMPILED`] places of `root`.
fn compiled(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.canonicalize().unwrap_or(path.to_path_buf()).strip_prefix(root).map(Path::to_path_buf) else {
        return false;
    };
    let rel = rel.to_string_lossy().replace('\\', "/");
    rel.ends_with(".rs") && COMPILED.iter().any(|p| rel.starts_with(p))
}

/// The text a book block stands for: its includes resolved, or its own text when it has none.
/// `Err` when a line mixes includes with text or an include does not resolve.
fn expand(dir: &Path, block: &Block) -> Result<(Vec<PathBuf>, String), String> {
    let lines: Vec<&str> = block.text.lines().filter(|l| !l.trim().is_empty()).collect();
    let includes = lines.iter().filter(|l| l.trim_start().starts_with("{{#")).count();
    if includes == 0 {
        return Ok((Vec::new(), block.text.clone()));
    }
    if includes != lines.len() {
        return Err("mixes includes with literal lines; include whole, compiled files only".into());
    }
    let mut files = Vec::new();
    let mut text = String::new();
    for l in lines {
        let (path, body) = include(dir, l)?;
        files.push(path);
        text.push_str(&body);
    }
    Ok((files, text))
}

/// The rule violations of `page` (a book page under `root`), `file:line: message` each.
pub fn book_page(root: &Path, page: &Path, md: &str) -> Vec<String> {
    let dir = page.parent().expect("a page is in a folder");
    let shown = page.strip_prefix(root).unwrap_or(page).display().to_string();
    let mut errors = Vec::new();
    for block in super::markdown::blocks(md) {
        let at = format!("{shown}:{}", block.line);
        match block.lang() {
            "rust" => match expand(dir, &block) {
                Ok((files, _)) if files.is_empty() => errors.push(format!(
                    "{at}: a rust block holds only {{{{#include ../../../path/to/file.rs}}}} of a file the tests compile"
                )),
                Ok((files, _)) => errors.extend(
                    files
                        .iter()
                        .filter(|f| !compiled(root, f))
                        .map(|f| format!("{at}: `{}` is not in a compiled place ({})", f.display(), COMPILED.join(", "))),
                ),
                Err(e) => errors.push(format!("{at}: {e}")),
            },
            "toml" => match expand(dir, &block) {
                Ok((_, text)) => errors.extend(toml(&text, block.has("error")).err().map(|e| format!("{at}: {e}"))),
                Err(e) => errors.push(format!("{at}: {e}")),
            },
            _ => {}
        }
    }
    errors
}

/// The README's rules: `rust` blocks verbatim in a compiled file, `toml` blocks as in the book.
pub fn readme(root: &Path, md: &str) -> Vec<String> {
    let sources: Vec<String> = COMPILED
        .iter()
        .flat_map(|p| {
            let path = root.join(p);
            if path.is_file() {
                vec![path]
            } else {
                super::files(&path, "rs")
            }
        })
        // The docs tests' own sources hold the examples of bad blocks they test with.
        .filter(|f| !f.starts_with(root.join("tests/docs")))
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| [doc_text(&text), text])
        .collect();
    let mut errors = Vec::new();
    for block in super::markdown::blocks(md) {
        let at = format!("README.md:{}", block.line);
        match block.lang() {
            "rust" => {
                let text = block.text.trim_end_matches('\n');
                if !sources.iter().any(|s| s.contains(text)) {
                    errors.push(format!("{at}: this rust block appears in no compiled file ({})", COMPILED.join(", ")));
                }
            }
            "toml" => errors.extend(toml(&block.text, block.has("error")).err().map(|e| format!("{at}: {e}"))),
            _ => {}
        }
    }
    errors
}

/// The text of `source`'s doc comments (`///`, `//!`) without their markers, where rustdoc's
/// examples are (compiled as doctests); other lines are blank, so no match spans two comments.
fn doc_text(source: &str) -> String {
    let mut out = String::new();
    for line in source.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) {
            out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
        out.push('\n');
    }
    out
}

/// A `toml` block's rule: `text` parses, and its `[package.metadata.launch]` table (if any) is
/// accepted by `launch_engine::Config::parse`, or refused when `error` (a `toml,error` block).
///
/// A block shows part of a Cargo.toml, so the parser gets it completed in a crate folder of its
/// own: a `[package]` name and version when the block has none, `arch = ["sm_90"]` (the one
/// required key) when it shows other keys only, and the folders its `kernels` and `include` keys
/// name (and the default `kernels/`) created, since the parser checks that they exist.
pub fn toml(text: &str, error: bool) -> Result<(), String> {
    let doc = match text.parse::<toml_edit::DocumentMut>() {
        Ok(doc) => doc,
        Err(_) if error => return Ok(()),
        Err(e) => return Err(format!("not TOML: {e}")),
    };
    let Some(launch) = doc.get("package").and_then(|p| p.get("metadata")).and_then(|m| m.get("launch")) else {
        return if error {
            Err("a toml,error block that is valid TOML with no [package.metadata.launch]".into())
        } else {
            Ok(())
        };
    };
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut folders = vec!["kernels".to_string()];
    folders.extend(launch.get("kernels").and_then(|k| k.as_str()).map(str::to_string));
    if let Some(list) = launch.get("include").and_then(|i| i.as_array()) {
        folders.extend(list.iter().filter_map(|v| v.as_str()).map(str::to_string));
    }
    for f in folders.iter().filter(|f| Path::new(f).is_relative() && !f.contains("..")) {
        std::fs::create_dir_all(dir.path().join(f)).map_err(|e| e.to_string())?;
    }
    let full = complete(text, doc.get("package").and_then(|p| p.get("name")).is_some(), launch.get("arch").is_some());
    let manifest = dir.path().join("Cargo.toml");
    match (launch_engine::Config::parse(&manifest, &full), error) {
        (Ok(_), false) | (Err(_), true) => Ok(()),
        (Ok(_), true) => Err("a toml,error block whose [package.metadata.launch] launch-build accepts".into()),
        (Err(e), false) => {
            let e = e.to_string().replace(&format!("{}/", dir.path().display()), "");
            Err(format!("launch-build refuses this [package.metadata.launch] (completed as the docs say): {e}"))
        }
    }
}

/// `text` with a `[package]` name and version put first when it has no package name, and
/// `arch = ["sm_90"]` in its `[package.metadata.launch]` (a header of its own when the block shows
/// only sub-tables) when it has no arch. Text, not a rewritten document: the block's own lines
/// stay as written, in order.
fn complete(text: &str, has_name: bool, has_arch: bool) -> String {
    let mut out = String::new();
    if !has_name {
        out.push_str("[package]\nname = \"docs-example\"\nversion = \"0.1.0\"\n\n");
    }
    let header = text.lines().position(|l| l.trim_start().starts_with("[package.metadata.launch]"));
    match (has_arch, header) {
        (true, _) => out.push_str(text),
        (false, Some(at)) => {
            for (i, line) in text.lines().enumerate() {
                out.push_str(line);
                out.push('\n');
                if i == at {
                    out.push_str("arch = [\"sm_90\"]\n");
                }
            }
        }
        (false, None) => {
            out.push_str("[package.metadata.launch]\narch = [\"sm_90\"]\n\n");
            out.push_str(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        crate::support::root()
    }

    #[test]
    fn includes_resolve_lines_and_anchors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "one\n// ANCHOR: mid\ntwo\n// ANCHOR_END: mid\nthree\n").unwrap();
        let text = |l: &str| include(dir.path(), l).map(|(_, t)| t);
        assert_eq!(text("{{#include a.rs}}").unwrap(), "one\ntwo\nthree\n");
        assert_eq!(text("{{#include a.rs:mid}}").unwrap(), "two\n");
        assert_eq!(text("{{#include a.rs:5}}").unwrap(), "three\n");
        assert_eq!(text("{{#include a.rs:3:}}").unwrap(), "two\nthree\n");
        assert!(text("{{#include a.rs:end}}").unwrap_err().contains("no `ANCHOR: end`"));
        assert!(text("{{#include a.rs:4:9}}").unwrap_err().contains("outside them"));
        assert!(text("{{#include missing.rs}}").unwrap_err().contains("missing.rs"));
    }

    #[test]
    fn a_rust_block_must_include_an_existing_compiled_file() {
        let root = root();
        let page = root.join("docs/src/guide/example.md");
        let errors = |md: &str| book_page(&root, &page, md);
        assert_eq!(errors("```rust\n{{#include ../../../template/build.rs}}\n```\n"), Vec::<String>::new());
        let missing = errors("```rust\n{{#include ../../../template/src/gone.rs}}\n```\n");
        assert!(missing.len() == 1 && missing[0].contains("gone.rs"), "{missing:?}");
        let literal = errors("\n```rust\nfn main() {}\n```\n");
        assert!(
            literal.len() == 1 && literal[0].starts_with("docs/src/guide/example.md:2: a rust block holds only"),
            "{literal:?}"
        );
        let not_compiled = errors("```rust\n{{#include ../../../tools/h200/README.md}}\n```\n");
        assert!(not_compiled.len() == 1 && not_compiled[0].contains("not in a compiled place"), "{not_compiled:?}");
    }

    #[test]
    fn a_readme_rust_block_must_be_verbatim_in_a_compiled_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("template/src")).unwrap();
        std::fs::create_dir_all(root.join("launch/src")).unwrap();
        std::fs::create_dir_all(root.join("tools")).unwrap();
        std::fs::write(root.join("template/src/lib.rs"), "launch::include_kernels!();\n").unwrap();
        std::fs::write(root.join("launch/src/lib.rs"), "//! ```\n//! let k = find()?;\n//! ```\nfn x() {}\n").unwrap();
        std::fs::write(root.join("tools/x.rs"), "let only = here;\n").unwrap();
        let errors = |md: &str| readme(root, md);
        assert_eq!(errors("```rust\nlaunch::include_kernels!();\n```\n"), Vec::<String>::new());
        // A rustdoc example (a doctest) counts, without its comment markers.
        assert_eq!(errors("```rust\nlet k = find()?;\n```\n"), Vec::<String>::new());
        let not_verbatim = errors("x\n```rust\nlaunch::include_kernels!(); // not so\n```\n");
        assert!(
            not_verbatim.len() == 1
                && not_verbatim[0].starts_with("README.md:2: this rust block appears in no compiled file")
        );
        let not_compiled = errors("```rust\nlet only = here;\n```\n");
        assert_eq!(not_compiled.len(), 1, "tools/ is not a compiled place");
        let across_comments = errors("```rust\nlet k = find()?;\nfn x() {}\n```\n");
        assert_eq!(across_comments.len(), 1, "a doc line and a code line do not make one block");
    }

    #[test]
    fn toml_blocks_are_judged_by_launch_build() {
        assert_eq!(toml("[package.metadata.launch]\narch = [\"sm_90\"]\nkernels = \"src/cu\"\n", false), Ok(()));
        assert_eq!(toml("[dependencies]\nlaunch = { path = \"../launch\" }\n", false), Ok(()));
        // One key of a table shown alone: completed with a package and an arch.
        assert_eq!(toml("[package.metadata.launch.tune.poly_eval]\nthreads = [256, 1024]\n", false), Ok(()));
        assert_eq!(toml("[package]\nname = \"k\"\n[package.metadata.launch]\nthreads = 128\n", false), Ok(()));
        let bad_key = toml("[package.metadata.launch]\narhc = [\"sm_90\"]\n", false).unwrap_err();
        assert!(bad_key.contains("arhc"), "{bad_key}");
        assert!(toml("[package.metadata.launch]\narch = [\"sm_90\"\n", false).unwrap_err().starts_with("not TOML"));
        // `toml,error` blocks must be refused.
        assert_eq!(toml("[package.metadata.launch]\narch = \"sm_90\"\n", true), Ok(()));
        let accepted = toml("[package.metadata.launch]\narch = [\"sm_90\"]\n", true).unwrap_err();
        assert!(accepted.contains("launch-build accepts"), "{accepted}");
    }
}
