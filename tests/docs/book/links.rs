//! Link checks. Between pages: on the built HTML, where mdBook has turned `page.md#anchor` into
//! `page.html#anchor` and given every heading its `id`, so an anchor is checked against the ids
//! mdBook really wrote. To repository files outside the book (bench/, tools/, fixtures/): on the
//! Markdown source, relative to the page's own file, since the built book does not hold them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// A link to another site, a mail address or a script, which no check follows.
fn is_external(target: &str) -> bool {
    let scheme = target.split([':', '/', '#', '?']).next().unwrap_or("");
    target.starts_with("//") || (target.contains(':') && !scheme.is_empty() && target[scheme.len()..].starts_with(':'))
}

/// `a/./b/../c` as `a/c`; `None` when it climbs above its start.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// `%20` and the other escapes of a URL path, and the HTML entities mdBook writes in attributes.
fn decode(s: &str) -> String {
    let s =
        s.replace("&amp;", "&").replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">");
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%' && i + 2 < bytes.len())
            .then(|| std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()))
            .flatten();
        match hex {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The relative link targets of the Markdown page `page` (a file under `root`) that name no
/// existing file or folder: `file:line: message` each. Fragments are not checked here (the
/// built HTML's check does that for pages of the book).
pub fn source_links(root: &Path, page: &Path, md: &str) -> Vec<String> {
    let dir = page.parent().unwrap_or(Path::new(""));
    let shown = page.strip_prefix(root).unwrap_or(page).display().to_string();
    let mut errors = Vec::new();
    for (line, target) in super::markdown::links(md) {
        if is_external(&target) || target.starts_with('#') {
            continue;
        }
        let path = decode(target.split(['#', '?']).next().unwrap_or(""));
        let exists = normalise(&dir.join(&path))
            .filter(|p| p.starts_with(root) || !root.is_absolute())
            .is_some_and(|p| p.exists());
        if !exists {
            errors.push(format!("{shown}:{line}: `{target}` names no file (relative to {})", dir.display()));
        }
    }
    errors
}

/// The pages a SUMMARY.md lists, relative to its folder.
pub fn summary_pages(summary: &str) -> BTreeSet<PathBuf> {
    super::markdown::links(summary)
        .into_iter()
        .filter(|(_, t)| !is_external(t) && !t.is_empty())
        .filter_map(|(_, t)| normalise(Path::new(&decode(t.split('#').next().unwrap_or("")))))
        .collect()
}

/// The `.md` files under `src` (relative to it) that SUMMARY.md does not list: mdBook would
/// leave them out of the book without a word.
pub fn pages_missing_from_summary(src: &Path) -> Vec<String> {
    let listed = match std::fs::read_to_string(src.join("SUMMARY.md")) {
        Ok(s) => summary_pages(&s),
        Err(e) => return vec![format!("{}: {e}", src.join("SUMMARY.md").display())],
    };
    let mut missing = Vec::new();
    for page in super::files(src, "md") {
        let rel = page.strip_prefix(src).expect("under src").to_path_buf();
        if rel != Path::new("SUMMARY.md") && !listed.contains(&rel) {
            missing.push(format!("{}: not listed in SUMMARY.md, so not in the book", rel.display()));
        }
    }
    missing
}

/// The values of `attr="..."` in `html`.
fn attributes<'h>(html: &'h str, attr: &str) -> Vec<&'h str> {
    let needle = format!(" {attr}=\"");
    html.match_indices(&needle)
        .filter_map(|(at, _)| {
            let start = at + needle.len();
            html[start..].find('"').map(|end| &html[start..start + end])
        })
        .collect()
}

/// Every relative `href` of the built book at `book` resolves to one of its files, and every
/// `#fragment` to an `id` in that file: `page.html: message` each. Links that leave the book (to
/// repository files) are the source check's; print.html (all pages in one, links rewritten to
/// its own anchors) and 404.html (absolute links under the site's URL) are mdBook's and skipped.
pub fn html_links(book: &Path) -> Vec<String> {
    let pages = super::files(book, "html");
    let ids: BTreeMap<PathBuf, BTreeSet<String>> = pages
        .iter()
        .map(|p| {
            let html = std::fs::read_to_string(p).unwrap_or_default();
            (p.clone(), attributes(&html, "id").into_iter().map(decode).collect())
        })
        .collect();
    let mut errors = Vec::new();
    for page in &pages {
        let name = page.strip_prefix(book).unwrap_or(page);
        if name == Path::new("print.html") || name == Path::new("404.html") {
            continue;
        }
        let html = std::fs::read_to_string(page).unwrap_or_default();
        for href in attributes(&html, "href") {
            if is_external(href) || href.is_empty() {
                continue;
            }
            let href = decode(href);
            let (path, fragment) = href.split_once('#').unwrap_or((&href, ""));
            let path = path.split('?').next().unwrap_or("");
            let target = if path.is_empty() {
                Some(page.clone())
            } else {
                normalise(&page.parent().expect("in the book").join(path))
            };
            let Some(mut target) = target.filter(|t| t.starts_with(book)) else { continue };
            if target.is_dir() {
                target.push("index.html");
            }
            if !target.is_file() {
                errors.push(format!("{}: `{href}`: no such file in the book", name.display()));
            } else if !fragment.is_empty() && ids.get(&target).is_some_and(|set| !set.contains(fragment)) {
                let shown = target.strip_prefix(book).unwrap_or(&target).display().to_string();
                errors.push(format!("{}: `{href}`: {shown} has no id `{fragment}`", name.display()));
            }
        }
    }
    errors
}

/// The `#anchor`s of links from `page` (a Markdown file outside the book, such as the README)
/// into the book's pages (`docs/src/guide/ci.md#baselines`), checked against the ids of the
/// built page in `book`: GitHub shows the README, but its links land in the book.
pub fn anchors_into_book(root: &Path, page: &Path, md: &str, book: &Path) -> Vec<String> {
    let src = root.join("docs/src");
    let dir = page.parent().unwrap_or(root);
    let shown = page.strip_prefix(root).unwrap_or(page).display().to_string();
    let mut errors = Vec::new();
    for (line, target) in super::markdown::links(md) {
        let Some((path, fragment)) = target.split_once('#').filter(|(p, f)| !is_external(p) && !f.is_empty()) else {
            continue;
        };
        let Some(rel) =
            normalise(&dir.join(decode(path))).and_then(|p| p.strip_prefix(&src).ok().map(Path::to_path_buf))
        else {
            continue;
        };
        let html = book.join(rel.with_extension("html"));
        let html_text = std::fs::read_to_string(&html).unwrap_or_default();
        if !attributes(&html_text, "id").into_iter().any(|id| decode(id) == decode(fragment)) {
            errors.push(format!("{shown}:{line}: `{target}`: the built {} has no id `{fragment}`", rel.display()));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_broken_anchor_and_a_missing_page_in_the_html_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path();
        write(book, "index.html", r#"<a href="guide/a.html#steps">ok</a> <a href="https://x.org/y">out</a>"#);
        write(
            book,
            "guide/a.html",
            r#"<h2 id="steps">Steps</h2><a href="../index.html">up</a><a href="a.html#stesp">typo</a>"#,
        );
        write(
            book,
            "guide/b.html",
            r##"<a href="c.html">gone</a><a href="#top">self</a><a href="../../../bench/x.md">repo</a>"##,
        );
        let errors = html_links(book);
        assert_eq!(
            errors,
            [
                "guide/a.html: `a.html#stesp`: guide/a.html has no id `stesp`",
                "guide/b.html: `c.html`: no such file in the book",
                "guide/b.html: `#top`: guide/b.html has no id `top`",
            ]
        );
    }

    #[test]
    fn a_link_to_a_missing_repository_file_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "bench/run.sh", "");
        let md = "[ok](../../bench/run.sh) [gone](../../bench/nope.sh#x) [web](https://example.org) [here](#a)\n";
        write(root, "docs/src/p.md", md);
        let errors = source_links(root, &root.join("docs/src/p.md"), md);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with("docs/src/p.md:1: `../../bench/nope.sh#x` names no file"), "{errors:?}");
    }

    #[test]
    fn a_page_missing_from_the_summary_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path();
        write(src, "SUMMARY.md", "# Summary\n\n[Intro](introduction.md)\n\n# Guide\n\n- [A](guide/a.md)\n");
        write(src, "introduction.md", "");
        write(src, "guide/a.md", "");
        write(src, "guide/orphan.md", "");
        assert_eq!(pages_missing_from_summary(src), ["guide/orphan.md: not listed in SUMMARY.md, so not in the book"]);
    }

    #[test]
    fn a_readme_anchor_into_the_book_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let (root, book) = (dir.path().join("repo"), dir.path().join("out"));
        write(&book, "guide/ci.html", r#"<h2 id="baselines">Baselines</h2>"#);
        let md = "[ok](docs/src/guide/ci.md#baselines) [typo](docs/src/guide/ci.md#baseline) [other](#top)\n";
        let errors = anchors_into_book(&root, &root.join("README.md"), md, &book);
        assert_eq!(
            errors,
            ["README.md:1: `docs/src/guide/ci.md#baseline`: the built guide/ci.md has no id `baseline`"]
        );
    }

    #[test]
    fn schemes_escapes_and_dot_segments() {
        assert!(is_external("https://a/b") && is_external("mailto:x@y") && is_external("//cdn/x"));
        assert!(!is_external("a/b.md#x:y") && !is_external("../c.md"));
        assert_eq!(decode("a%20b&amp;c"), "a b&c");
        assert_eq!(normalise(Path::new("a/./b/../c")), Some(PathBuf::from("a/c")));
        assert_eq!(normalise(Path::new("../a")), None);
    }
}
