//! The headers a kernel file includes, for `rerun-if-changed` and the cache key.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
pub fn dependencies(file: &Path, include_dirs: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![file.to_path_buf()];
    while let Some(f) = stack.pop() {
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        let here = f.parent().map(Path::to_path_buf).unwrap_or_default();
        for (name, quoted) in includes(&text) {
            let dirs = quoted.then_some(&here).into_iter().chain(include_dirs.iter());
            if let Some(found) = dirs.map(|d| d.join(&name)).find(|p| p.is_file()) {
                if seen.insert(found.clone()) {
                    stack.push(found);
                }
            }
        }
    }
    seen
}

/// Where and why NVRTC cannot read `bytes`, an included header, as nvcc would: a UTF-8
/// byte-order mark at the start ("unrecognized token" in NVRTC), or a lone CR, which NVRTC does
/// not take for a line end (a `#pragma once` or `//` line then swallows the rest). 1-based line
/// and column; `None` for a header NVRTC reads as nvcc does (CRLF, form feeds and no final
/// newline included).
pub fn header_encoding(bytes: &[u8]) -> Option<(u32, u32, &'static str)> {
    if bytes.starts_with("\u{feff}".as_bytes()) {
        return Some((
            1,
            1,
            "this header starts with a UTF-8 byte-order mark, which NVRTC cannot read in an included header (nvcc skips it; a kernel file may have one): save the header as UTF-8 without a byte-order mark",
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
        "this header ends a line with a lone CR, which NVRTC does not take for a line end in an included header (nvcc does; a kernel file may): save the header with LF or CRLF line ends",
    ))
}
