//! Host code in a kernel file (a `<<<` launch, a `main` function, a host API call), which NVRTC
//! cannot compile.

use super::conditionals::nvrtc_inactive;
use super::scan::{is_ident, Scanned};

/// Host code found in a kernel file: what shows it and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCode {
    /// What was found, in words (``kernel launch syntax `<<<...>>>` ``).
    pub what: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

/// Host runtime and driver API functions (by prefix) whose call marks a file as host code: they
/// allocate, copy, launch or synchronise from the CPU side.
const HOST_API: &[&str] = &[
    "cudaMalloc",
    "cudaFree",
    "cudaMemcpy",
    "cudaMemset",
    "cudaLaunch",
    "cudaDeviceSynchronize",
    "cudaDeviceReset",
    "cudaSetDevice",
    "cudaGetDeviceCount",
    "cudaGetDeviceProperties",
    "cudaStreamCreate",
    "cudaStreamSynchronize",
    "cudaStreamDestroy",
    "cudaEventCreate",
    "cudaEventRecord",
    "cudaEventSynchronize",
    "cudaEventElapsedTime",
    "cudaEventDestroy",
    "cudaHostAlloc",
    "cudaHostRegister",
    "cudaFuncSetAttribute",
    "cudaOccupancy",
    "cudaGraph",
    "cuInit",
    "cuCtxCreate",
    "cuModuleLoad",
    "cuLaunchKernel",
    "cuMemAlloc",
    "cuMemcpy",
];

/// C library functions that exist on the host only (device code has `printf`, not these): a
/// file calling one holds host functions. Matched as whole names.
const HOST_LIBC: &[&str] = &["fprintf", "fopen", "fclose", "fread", "fwrite", "fputs", "fflush", "getenv"];

/// The first sign of host code in a kernel file, on the scanned text (comments and literals do
/// not count): kernel launch syntax `<<<`, a `main` function definition, or a call to a host
/// runtime function such as `cudaMalloc`. NVRTC compiles device code only, so code in branches
/// it never compiles (`#ifndef __CUDA_ARCH__`, `#if 0`, ...: see [`nvrtc_inactive`]) does not
/// count. Linear in the file's size: every stretch of code is walked once.
pub fn host_code(src: &str, scanned: &Scanned) -> Option<HostCode> {
    find(src, scanned, true)
}

/// [`host_code`] in any branch, those NVRTC never compiles included: whether the file holds code
/// for the host side at all (nvcc's host pass compiles those branches), for the notes on a
/// host-only header NVRTC cannot open.
pub fn host_code_in_any_branch(src: &str, scanned: &Scanned) -> Option<HostCode> {
    find(src, scanned, false)
}

/// The first host code of `scanned`; with `nvrtc_only`, outside the branches NVRTC never compiles.
pub(super) fn find(src: &str, scanned: &Scanned, nvrtc_only: bool) -> Option<HostCode> {
    let inactive = if nvrtc_only { nvrtc_inactive(&scanned.code) } else { Vec::new() };
    let blanked;
    let code = if inactive.is_empty() {
        &scanned.code
    } else {
        let mut bytes = scanned.code.clone().into_bytes();
        for r in inactive {
            bytes[r].fill(b' ');
        }
        // Each range starts after a newline and ends before a line or at the end, so no
        // character is cut; the lossy path only guards against a bug here.
        blanked = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        &blanked
    };
    let b = code.as_bytes();
    let at = |offset: usize, what: String| {
        Some(HostCode { what, line: scanned.lines.line(offset), col: scanned.lines.col(src, offset) })
    };
    // The last non-space byte before `i` is `.`, `>` (`->`) or `:` (`::`): a member or a
    // qualified name, not the global function.
    let member = |i: usize| matches!(code[..i].trim_end().as_bytes().last(), Some(b'.' | b'>' | b':'));
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'<' && b[i..].starts_with(b"<<<") {
            return at(i, "kernel launch syntax `<<<...>>>`".into());
        }
        if !is_ident(c) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        let word = &code[start..i];
        if c.is_ascii_digit() || member(start) {
            continue;
        }
        let rest = &code[i..];
        let paren = i + (rest.len() - rest.trim_start().len());
        if b.get(paren) != Some(&b'(') {
            continue;
        }
        if word == "main" {
            // A definition: the parameter list, then `{`. The walk stops at the first `;`, `{`
            // or `}` (none can be in a parameter list) and the scan resumes there.
            let mut depth = 0usize;
            let mut j = paren;
            while j < b.len() {
                match b[j] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b';' | b'{' | b'}' => break,
                    _ => {}
                }
                j += 1;
            }
            if b.get(j) == Some(&b')') && code[j + 1..].trim_start().starts_with('{') {
                return at(start, "a `main` function".into());
            }
            i = j.max(i);
            continue;
        }
        if HOST_API.iter().any(|p| word.starts_with(p)) {
            return at(start, format!("a call to the host API function `{word}`"));
        }
        if HOST_LIBC.contains(&word) {
            return at(start, format!("a call to the host C library function `{word}`"));
        }
    }
    None
}
