//! The headers a kernel file includes, for `rerun-if-changed` and the cache key.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::input;

/// `#include "x"` / `#include <x>` targets of one file, with whether they were quoted.
pub fn includes(src: &str) -> Vec<(String, bool)> {
    src.lines()
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
    let shown = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string().replace('\\', "/");
    let mut seen = BTreeSet::new();
    let mut stack = vec![file.to_path_buf()];
    while let Some(f) = stack.pop() {
        let Ok(bytes) = input::read(&f) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let here = f.parent().map(Path::to_path_buf).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let Some((name, quoted)) = includes(line).into_iter().next().filter(|(n, _)| !n.is_empty()) else {
                continue;
            };
            let dirs = quoted.then_some(&here).into_iter().chain(include_dirs.iter());
            for candidate in dirs.map(|d| d.join(&name)) {
                match input::check(&candidate) {
                    Ok(()) => {
                        if seen.insert(candidate.clone()) {
                            stack.push(candidate);
                        }
                    }
                    // Not there, or not to be looked at (permissions): NVRTC says what it finds.
                    Err(input::Refused::Missing(_) | input::Refused::Io(_)) => continue,
                    Err(refused @ input::Refused::NotAFile(_)) => {
                        let col = line.find('#').map_or(1, |c| c as u32 + 1);
                        let at = Some((shown(&f), (i as u32).saturating_add(1), col));
                        let fix = format!("make it a regular file, or change the `#include \"{name}\"`");
                        return Err(refused.into_error(&shown(&candidate), &candidate, at, &fix));
                    }
                }
                break;
            }
        }
    }
    Ok(seen)
}
