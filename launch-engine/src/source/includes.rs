//! The headers a kernel file includes, for `rerun-if-changed` and the cache key.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::input;

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
        let Some(directives) = super::known::directives(&f) else { continue };
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
