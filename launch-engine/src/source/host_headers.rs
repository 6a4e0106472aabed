//! Host code that a kernel file brings in through the crate's own headers (an `extern "C"`
//! launcher in an included `launch.cuh`): NVRTC compiles what a header holds as if it were in the
//! file, so such a file cannot go through NVRTC either.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::conditionals::nvrtc_inactive;
use super::decode::normalise_header;
use super::host_code::{find, HostCode};
use super::known::includes;
use super::scan::{scan, Scanned};

/// Host code in a header that a kernel file includes, directly or through other headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderHostCode {
    /// The kernel file's `#include` that leads to it: 1-based line and column of its `#`.
    pub line: u32,
    pub col: u32,
    /// The name that `#include` writes.
    pub name: String,
    /// The headers from the one that `#include` finds to the one holding the host code.
    pub chain: Vec<PathBuf>,
    /// The host code, located in the last header of `chain`.
    pub code: HostCode,
}

/// The first host code (see [`super::host_code()`]) in a header that `src`, the text of the
/// kernel file at `file`, includes, transitively, where NVRTC would find it: beside the including
/// file for a quoted name, then in the kernel file's folder and `include_dirs` (the crate's kernel
/// and `include` folders). Toolkit and standard headers are not there, so they are not scanned:
/// they declare host functions that device code never calls. Each header is scanned once however
/// often it is included, so an include cycle ends. With `nvrtc_only`, `#include`s and code in
/// branches NVRTC never compiles do not count. A header that cannot be read is left out (the
/// build says what it is where it reads the headers).
pub fn host_code_in_headers(
    src: &str,
    scanned: &Scanned,
    file: &Path,
    include_dirs: &[PathBuf],
    nvrtc_only: bool,
) -> Option<HeaderHostCode> {
    let dirs: Vec<PathBuf> =
        file.parent().map(Path::to_path_buf).into_iter().chain(include_dirs.iter().cloned()).collect();
    let mut seen: HashSet<PathBuf> = HashSet::from([identity(file)]);
    for top in active_includes(src, scanned, nvrtc_only) {
        let Some(path) = resolve(file, &top, &dirs) else { continue };
        if !seen.insert(identity(&path)) {
            continue;
        }
        // Depth first, each header's includes in the order written.
        let mut stack = vec![vec![path]];
        while let Some(chain) = stack.pop() {
            let header = chain.last().expect("a chain holds at least the included header");
            let Ok(bytes) = crate::input::read(header) else { continue };
            let text = normalise_header(&bytes);
            let scanned = scan(&text);
            if let Some(code) = find(&text, &scanned, nvrtc_only) {
                return Some(HeaderHostCode { line: top.line, col: top.col, name: top.name, chain, code });
            }
            for inc in active_includes(&text, &scanned, nvrtc_only).into_iter().rev() {
                if let Some(next) = resolve(header, &inc, &dirs).filter(|p| seen.insert(identity(p))) {
                    stack.push(chain.iter().cloned().chain([next]).collect());
                }
            }
        }
    }
    None
}

/// One `#include` directive of a file.
struct Directive {
    line: u32,
    col: u32,
    name: String,
    quoted: bool,
}

/// The `#include`s of `src` outside comments and, with `nvrtc_only`, outside the branches NVRTC
/// never compiles.
fn active_includes(src: &str, scanned: &Scanned, nvrtc_only: bool) -> Vec<Directive> {
    let inactive = if nvrtc_only { nvrtc_inactive(&scanned.code) } else { Vec::new() };
    let mut found = Vec::new();
    let mut start = 0;
    for (i, line) in src.split('\n').enumerate() {
        let at = start;
        start += line.len() + 1;
        // The scan blanks comments (and the quoted name, so the name is read from `src`).
        let code = scanned.code.get(at..at + line.len()).unwrap_or_default();
        if !code.trim_start().starts_with('#') || inactive.iter().any(|r| r.contains(&at)) {
            continue;
        }
        for (name, quoted) in includes(line).into_iter().filter(|(n, _)| !n.is_empty()) {
            let col = line.find('#').map_or(1, |c| u32::try_from(c).unwrap_or(u32::MAX).saturating_add(1));
            let line = u32::try_from(i).unwrap_or(u32::MAX).saturating_add(1);
            found.push(Directive { line, col, name, quoted });
        }
    }
    found
}

/// The file `inc`, written in `from`, names: beside `from` if quoted, else the first of `dirs`
/// that holds it.
fn resolve(from: &Path, inc: &Directive, dirs: &[PathBuf]) -> Option<PathBuf> {
    let here = from.parent().map(Path::to_path_buf).filter(|_| inc.quoted);
    here.iter().chain(dirs).map(|d| d.join(&inc.name)).find(|p| crate::input::check(p).is_ok())
}

/// One key per file however its path is spelt (`a/../b.cuh`, a link).
fn identity(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests;
