//! The headers a kernel file includes, for `rerun-if-changed` and the cache key.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::input;

/// `#include "x"` / `#include <x>` targets of one file, with whether they were quoted. Headers are
/// read as they are on disk, so LF, CRLF and lone CR all end a line, and a byte-order mark at the
/// start is skipped (as `decode` does for kernel files).
pub fn includes(src: &str) -> Vec<(String, bool)> {
    src.strip_prefix('\u{feff}')
        .unwrap_or(src)
        .split(['\n', '\r'])
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?.trim_start();
            let (close, quoted) = match rest.chars().next()? {
                '"' => ('"', true),
                '<' => ('>', false),
                _ => return None,
            };
            let inner = &rest[1..];
            let end = inner.find(close)?;
            Some((inner[..end].to_string(), quoted))
        })
        .collect()
}

/// Every header `file` includes, transitively, that exists in its folder or in `include_dirs`
/// (toolkit headers are not found there and are not tracked: the toolchain version is).
///
/// Each file is read through [`crate::input`], and each place an `#include` could name is looked
/// at before anything reads it: one that holds something other than a regular file within the
/// size limit (a FIFO, a folder, a device, a broken link, a link loop, ...) is
/// [`Error::InputFile`] at that `#include`'s line and column, paths relative to `root` (a compiler
/// reading it would hang or fail without a word on what it is). A file that cannot be read is
/// left out, as is one that is not there.
pub fn dependencies(file: &Path, include_dirs: &[PathBuf], root: &Path) -> Result<BTreeSet<PathBuf>, Error> {
    Ok(included(file, include_dirs, root)?.into_iter().map(|i| i.path).collect())
}

/// One `#include` directive that found a header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Include {
    /// The file the directive is in.
    pub from: PathBuf,
    /// Where it is: 1-based line and column of its `#`.
    pub line: u32,
    pub col: u32,
    /// The name it writes (`h.cuh`, `sub/h.cuh`).
    pub name: String,
    /// The header it found.
    pub path: PathBuf,
}

/// The `#include` directives behind [`dependencies`]: each that found a header, in the order
/// met, once per (file, name).
///
/// # Errors
/// As [`dependencies`].
pub fn included(file: &Path, include_dirs: &[PathBuf], root: &Path) -> Result<Vec<Include>, Error> {
    let shown = |p: &Path| crate::input::shown(p, root);
    let mut seen = BTreeSet::new();
    let mut named = Vec::new();
    // (file, name) pairs already in `named`: a toolkit header tree has thousands of directives.
    let mut met: std::collections::HashSet<(PathBuf, String)> = std::collections::HashSet::new();
    let mut stack = vec![file.to_path_buf()];
    while let Some(f) = stack.pop() {
        let Some(directives) = directives(&f) else { continue };
        let here = f.parent().map(Path::to_path_buf).unwrap_or_default();
        for d in directives.iter() {
            let (i, col, name, quoted) = (d.index, d.col, &d.name, d.quoted);
            let dirs = quoted.then_some(&here).into_iter().chain(include_dirs.iter());
            for candidate in dirs.map(|d| d.join(name)) {
                match input::check(&candidate) {
                    Ok(()) => {
                        if met.insert((f.clone(), name.clone())) {
                            let line = (i as u32).saturating_add(1);
                            let (from, path) = (f.clone(), candidate.clone());
                            named.push(Include { from, line, col, name: name.clone(), path });
                        }
                        if seen.insert(candidate.clone()) {
                            stack.push(candidate);
                        }
                    }
                    // Not there, or not to be looked at (permissions): NVRTC says what it finds.
                    Err(input::Refused::Missing(_) | input::Refused::Io(_)) => continue,
                    Err(refused @ input::Refused::NotAFile(_)) => {
                        let at = Some((shown(&f), (i as u32).saturating_add(1), col));
                        let fix = format!("make it a regular file, or change the `#include \"{name}\"`");
                        return Err(refused.into_error(&shown(&candidate), &candidate, at, &fix));
                    }
                }
                break;
            }
        }
    }
    Ok(named)
}

/// One `#include` of a file: its line (0-based), the column of its `#`, the name it writes and
/// whether it was quoted.
struct Directive {
    index: usize,
    col: u32,
    name: String,
    quoted: bool,
}

/// The `#include` directives of the file at `path`, read and parsed once per process for each
/// version of the file (its size and modification time): every kernel file of a crate includes
/// the same toolkit headers, hundreds of them behind `<cub/cub.cuh>`. `None` when it cannot be
/// read (see [`input::read`]).
fn directives(path: &Path) -> Option<std::sync::Arc<Vec<Directive>>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Version = (u64, Option<std::time::SystemTime>);
    type Memo = HashMap<PathBuf, (Version, Arc<Vec<Directive>>)>;
    static PARSED: OnceLock<Mutex<Memo>> = OnceLock::new();
    let meta = std::fs::metadata(path).ok()?;
    let version = (meta.len(), meta.modified().ok());
    let memo = PARSED.get_or_init(Mutex::default);
    if let Some((v, d)) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
        if *v == version {
            return Some(d.clone());
        }
    }
    let bytes = input::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        // A header with lone CR line ends is one `lines()` line: each of its includes counts.
        for (name, quoted) in includes(line).into_iter().filter(|(n, _)| !n.is_empty()) {
            let col = line.find('#').map_or(1, |c| c as u32 + 1);
            found.push(Directive { index, col, name, quoted });
        }
    }
    let found = Arc::new(found);
    memo.lock().unwrap_or_else(|e| e.into_inner()).insert(path.to_path_buf(), (version, found.clone()));
    Some(found)
}

/// Where and why NVRTC cannot read `bytes`, an included header, as nvcc would (the build then
/// hands NVRTC the header's [`crate::source::normalise_header`] text in memory instead): a UTF-8
/// byte-order mark at the start ("unrecognized token" in NVRTC), or a lone CR, which NVRTC does
/// not take for a line end (a `#pragma once` or `//` line then swallows the rest). 1-based line
/// and column; `None` for a header NVRTC reads as nvcc does (CRLF, form feeds and no final
/// newline included).
pub fn header_encoding(bytes: &[u8]) -> Option<(u32, u32, &'static str)> {
    if bytes.starts_with("\u{feff}".as_bytes()) {
        return Some((
            1,
            1,
            "this header starts with a UTF-8 byte-order mark, which NVRTC cannot read in an included header (nvcc skips it)",
        ));
    }
    let at = bytes.iter().enumerate().position(|(i, &b)| b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))?;
    let before = String::from_utf8_lossy(&bytes[..at]);
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |n| n + 1)..].chars().count() + 1;
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Some((
        count(line),
        count(col),
        "this header ends a line with a lone CR, which NVRTC does not take for a line end in an included header (nvcc does)",
    ))
}
