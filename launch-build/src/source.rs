//! What launch-build reads from kernel sources without compiling them: where each `__global__`
//! function is defined (for `file:line` in reports), the comments above it (for `@launch`), and
//! the headers a file includes (for `rerun-if-changed`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Diagnostic;

/// A `__global__` function definition found in a source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelDef {
    /// The identifier as written (unmangled).
    pub name: String,
    /// 1-based line of the name.
    pub line: u32,
    /// 1-based column of the name.
    pub col: u32,
    /// Byte offset of the `__global__` keyword (or of the declaration's first token).
    pub start: usize,
    /// Byte offset of the `{` that opens the body.
    pub body: usize,
}

/// A comment, with its 1-based starting line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    /// First line of the comment.
    pub line: u32,
    /// Byte offset in the source.
    pub offset: usize,
    /// The comment text, delimiters included.
    pub text: String,
}

/// A source file with comments and string literals blanked out (newlines kept, so offsets and
/// line numbers stay those of the original).
pub struct Scanned {
    /// Source with comments and literals replaced by spaces.
    pub code: String,
    /// Every comment, in order.
    pub comments: Vec<Comment>,
    /// Where each line starts, for offset → line:col lookups.
    pub lines: LineIndex,
}

/// The byte offset at which each line starts. Built once per file, it turns every offset →
/// line:col lookup into a binary search, so scanning stays linear in the file's size however many
/// comments, kernels and annotations it holds (counting newlines from the start of the file for
/// each comment made a 5 MB file take over 15 minutes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes the lines of `src`.
    pub fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        // `match_indices` finds each newline with a vectorised search, even in a debug build.
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// 1-based line of a byte offset (offsets past the end belong to the last line).
    pub fn line(&self, offset: usize) -> u32 {
        // partition_point counts the line starts at or before `offset`: at least 1 (offset 0).
        u32::try_from(self.starts.partition_point(|&s| s <= offset)).unwrap_or(u32::MAX)
    }

    /// Byte offset of the start of the line holding `offset`.
    pub fn line_start(&self, offset: usize) -> usize {
        self.starts[self.starts.partition_point(|&s| s <= offset).saturating_sub(1)]
    }

    /// Byte offset of the start of 1-based `line` (the end of the text's last line start if
    /// there is no such line).
    pub fn start_of_line(&self, line: u32) -> usize {
        let i = (line.max(1) - 1) as usize;
        self.starts.get(i).or(self.starts.last()).copied().unwrap_or(0)
    }

    /// 1-based column (in characters) of a byte offset of `src`, the text this index was built from.
    pub fn col(&self, src: &str, offset: usize) -> u32 {
        let offset = floor_char_boundary(src, offset);
        let start = self.line_start(offset).min(offset);
        u32::try_from(src[start..offset].chars().count()).map_or(u32::MAX, |c| c.saturating_add(1))
    }
}

/// The largest char boundary of `s` at or below `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Blanks comments, string and character literals.
pub fn scan(src: &str) -> Scanned {
    let lines = LineIndex::new(src);
    let b = src.as_bytes();
    let mut code = b.to_vec();
    let mut comments = Vec::new();
    let mut i = 0;
    // Spaces over `from..to`, newlines kept (filled a line at a time: a byte loop is slow in
    // the unoptimised builds that run build scripts' tests).
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        let mut at = from;
        for (n, _) in src[from..to].match_indices('\n') {
            code[at..from + n].fill(b' ');
            at = from + n + 1;
        }
        code[at..to].fill(b' ');
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                comments.push(Comment { line: lines.line(i), offset: i, text: src[i..end].to_string() });
                blank(&mut code, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                comments.push(Comment { line: lines.line(i), offset: i, text: src[i..end].to_string() });
                blank(&mut code, i, end);
                i = end;
            }
            q @ (b'"' | b'\'') => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                // Blank the literal's contents up to its closing quote, or up to the newline or end
                // of file that cut it short.
                let j = j.min(b.len());
                blank(&mut code, i + 1, j);
                i = if j < b.len() && b[j] == q { j + 1 } else { j };
            }
            _ => i += 1,
        }
    }
    // Whole comments and literal contents (each delimited by ASCII characters) were replaced by
    // spaces, so no multi-byte character was cut; the lossy path only guards against a bug here.
    let code = String::from_utf8(code).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Scanned { code, comments, lines }
}

#[cfg(test)]
/// 1-based line of a byte offset. Counts from the start of the text: for one-off lookups; use
/// [`Scanned::lines`] for many.
pub fn line_of(src: &str, offset: usize) -> u32 {
    let n = src.as_bytes()[..offset.min(src.len())].iter().filter(|&&c| c == b'\n').count();
    u32::try_from(n).map_or(u32::MAX, |n| n.saturating_add(1))
}

/// A kernel source's text; for bytes that are not UTF-8, the compiler-style error
/// `file:line:col: error: not valid UTF-8 (byte 0xNN at offset N)` pointing at the first of them.
pub fn decode(file: &str, bytes: Vec<u8>) -> Result<String, Diagnostic> {
    // NVRTC takes the source as a C string: a NUL byte would cut it short.
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        let before = String::from_utf8_lossy(&bytes[..at]);
        let line = before.bytes().filter(|&c| c == b'\n').count() + 1;
        let col = before[before.rfind('\n').map_or(0, |n| n + 1)..].chars().count() + 1;
        return Err(Diagnostic::error(
            file,
            count(line),
            count(col),
            format!("a NUL byte (at offset {at}): kernel sources must be text without NUL bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // Valid up to `at` by definition; the lossy form only guards against a bug here.
        let good = String::from_utf8_lossy(&bytes[..at]);
        let line = good.bytes().filter(|&c| c == b'\n').count() + 1;
        let col = good[good.rfind('\n').map_or(0, |n| n + 1)..].chars().count() + 1;
        Diagnostic::error(
            file,
            count(line),
            count(col),
            format!("not valid UTF-8 (byte 0x{:02x} at offset {at}): kernel sources must be UTF-8 text", bytes[at]),
        )
    })
}

/// A line or column count as a diagnostic holds it.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Whether `offset` lies in a preprocessor directive (a `#define` body included, through its
/// `\`-continued lines): a kernel "defined" there is a macro's template, not a kernel.
pub fn in_directive(src: &str, offset: usize) -> bool {
    let offset = offset.min(src.len());
    let mut line_start = src[..offset].rfind('\n').map_or(0, |n| n + 1);
    // Walk back over continued lines: the previous line ends in `\`.
    while line_start > 0 {
        let prev_end = line_start - 1;
        let prev = &src[..prev_end];
        let prev = prev.strip_suffix('\r').unwrap_or(prev);
        if !prev.ends_with('\\') {
            break;
        }
        line_start = prev.rfind('\n').map_or(0, |n| n + 1);
    }
    src[line_start..].trim_start_matches([' ', '\t']).starts_with('#')
}

/// Attribute-like words that may sit between `__global__` and the kernel's name, with a
/// parenthesised argument list.
const ATTRIBUTES: &[&str] =
    &["__launch_bounds__", "__maxnreg__", "__attribute__", "__declspec", "__cluster_dims__", "alignas", "__align__"];

/// Every `__global__` function *definition* (declarations end in `;` and are skipped), in file
/// order. Linear in the file's size: each stretch of code is walked once, and parentheses are
/// matched once for the whole file.
pub fn kernels(src: &str, scanned: &Scanned) -> Vec<KernelDef> {
    let code = &scanned.code;
    let mut out = Vec::new();
    if !code.contains("__global__") {
        return out;
    }
    let parens = Parens::new();
    let mut search = 0;
    while let Some(pos) = code[search..].find("__global__") {
        let at = search + pos;
        search = at + "__global__".len();
        if !is_word_at(code, at, "__global__") {
            continue;
        }
        let (def, resume) = kernel_after(code, &parens, search);
        if let Some((name, body)) = def {
            out.push(KernelDef {
                name: code[name.clone()].to_string(),
                line: scanned.lines.line(name.start),
                col: scanned.lines.col(src, name.start),
                start: at,
                body,
            });
        }
        // Resume where that walk stopped: a `__global__` it passed over would find the same
        // declaration again (and walking the same text again is what makes a scan quadratic).
        search = search.max(resume);
    }
    out
}

fn is_word_at(code: &str, at: usize, word: &str) -> bool {
    let b = code.as_bytes();
    let before_ok = at == 0 || !is_ident(b[at - 1]);
    let end = at + word.len();
    let after_ok = end >= b.len() || !is_ident(b[end]);
    before_ok && after_ok
}

fn is_ident(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

/// From just after `__global__`: the first identifier followed by `(` that is not an attribute,
/// when a body follows its parameters (the name's range and the body's `{`), and the offset where
/// the walk stopped.
fn kernel_after(code: &str, parens: &Parens, mut i: usize) -> (Option<(std::ops::Range<usize>, usize)>, usize) {
    let b = code.as_bytes();
    let mut last_ident: Option<(usize, usize)> = None;
    while i < b.len() {
        let c = b[i];
        if is_ident(c) {
            let s = i;
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
            last_ident = Some((s, i));
            continue;
        }
        match c {
            b'(' => {
                let Some((s, e)) = last_ident else { return (None, i + 1) };
                let Some(close) = parens.close(b, i) else { return (None, i + 1) };
                if ATTRIBUTES.contains(&&code[s..e]) {
                    last_ident = None;
                    i = close + 1;
                    continue;
                }
                // A definition has a body: the next non-space character after the parameters is `{`.
                let after = &code[close + 1..];
                let body = close + 1 + (after.len() - after.trim_start().len());
                if b.get(body) != Some(&b'{') {
                    return (None, close + 1);
                }
                return (Some((s..e, body)), body + 1);
            }
            b';' | b'{' | b'}' => return (None, i + 1),
            _ => i += 1,
        }
    }
    (None, i)
}

/// (open, close) pairs of parentheses.
type Pairs = Vec<(usize, usize)>;

/// Parenthesis matching that walks each stretch of text at most once. A walk from a `(` that
/// closes costs the length of the list, and the callers resume after it. A walk that reaches the
/// end of the text unclosed (`__global__ void k(` in a broken file) would be repeated for every
/// later kernel: that walk records every pair it passes, by a stack, and later lookups are
/// binary searches in that record.
struct Parens {
    /// From the first unclosed `(`: (open, close) in increasing `open`, `usize::MAX` if unclosed.
    table: std::cell::RefCell<Option<(usize, Pairs)>>,
}

impl Parens {
    fn new() -> Parens {
        Parens { table: std::cell::RefCell::new(None) }
    }

    /// The `)` matching the `(` at `open` of `b`.
    fn close(&self, b: &[u8], open: usize) -> Option<usize> {
        if let Some((from, pairs)) = self.table.borrow().as_ref() {
            if open >= *from {
                let i = pairs.binary_search_by_key(&open, |p| p.0).ok()?;
                return Some(pairs[i].1).filter(|&c| c != usize::MAX);
            }
        }
        let mut pairs = Vec::new();
        let mut stack = Vec::new();
        for (k, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'(' => {
                    stack.push(pairs.len());
                    pairs.push((k, usize::MAX));
                }
                b')' => {
                    let Some(p) = stack.pop() else { continue };
                    if stack.is_empty() {
                        return Some(k); // `open`'s own `)`
                    }
                    pairs[p].1 = k;
                }
                _ => {}
            }
        }
        *self.table.borrow_mut() = Some((open, pairs));
        None
    }
}

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

/// Macros NVRTC always defines: it compiles device code only, so `__CUDA_ARCH__` is set, and
/// it is the runtime compiler (`__CUDACC_RTC__`) of CUDA C++ (`__CUDACC__`).
const NVRTC_DEFINED: &[&str] = &["__CUDA_ARCH__", "__CUDACC_RTC__", "__CUDACC__"];

/// What a conditional directive's condition is for NVRTC, as far as it can be told without
/// preprocessing: only the forms that test [`NVRTC_DEFINED`] macros (and `#if 0`) are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cond {
    True,
    False,
    Unknown,
}

/// `name` with no surrounding space, a single identifier.
fn ident(name: &str) -> Option<&str> {
    let name = name.trim();
    (!name.is_empty() && name.bytes().all(is_ident)).then_some(name)
}

/// `defined(X)`, `defined (X)` or `defined X`: the macro tested.
fn defined_operand(expr: &str) -> Option<&str> {
    let rest = expr.trim().strip_prefix("defined")?;
    let rest = rest.trim_start();
    match rest.strip_prefix('(') {
        Some(inner) => ident(inner.trim_end().strip_suffix(')')?),
        // Without parentheses a space must separate `defined` from the name (`definedX` is a
        // different identifier).
        None if rest.len() < expr.trim().len() - "defined".len() => ident(rest),
        None => None,
    }
}

/// The value of `#if EXPR` for NVRTC: `0`, `[!]defined(M)` for the macros NVRTC defines;
/// anything else is unknown.
fn if_condition(expr: &str) -> Cond {
    let expr = expr.trim();
    if expr == "0" {
        return Cond::False;
    }
    let (negated, operand) = match expr.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, expr),
    };
    match defined_operand(operand) {
        Some(m) if NVRTC_DEFINED.contains(&m) => {
            if negated {
                Cond::False
            } else {
                Cond::True
            }
        }
        _ => Cond::Unknown,
    }
}

/// `#ifdef M` (`defined = true`) or `#ifndef M` for NVRTC.
fn ifdef_condition(name: &str, defined: bool) -> Cond {
    match ident(name) {
        Some(m) if NVRTC_DEFINED.contains(&m) => {
            if defined {
                Cond::True
            } else {
                Cond::False
            }
        }
        _ => Cond::Unknown,
    }
}

/// One open `#if` group.
struct Group {
    /// Whether the code around the group is active.
    outer: bool,
    /// A branch so far is known to be taken: every later one is dead.
    taken: bool,
}

/// The byte ranges of `code` (a [`Scanned::code`]: comments and literals blanked) that NVRTC
/// never compiles: the branches of conditional directives that are known false for it (see
/// [`Cond`]). Branches whose condition is unknown count as compiled. Sorted, disjoint; each
/// starts and ends at a line start (or the end of the text). One pass over the text.
fn nvrtc_inactive(code: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut stack: Vec<Group> = Vec::new();
    let mut active = true;
    // Start of the inactive stretch in progress, if `!active`.
    let mut dead_from = 0;
    let mut at = 0;
    while at < code.len() {
        // One logical line: physical lines joined by a `\` before their newline.
        let mut end = at;
        loop {
            end = code[end..].find('\n').map_or(code.len(), |n| end + n);
            let physical = code[..end].strip_suffix('\r').unwrap_or(&code[..end]);
            if end < code.len() && physical.ends_with('\\') {
                end += 1;
                continue;
            }
            break;
        }
        let line = &code[at..end];
        let next = (end + 1).min(code.len());
        let directive = line.trim_start().strip_prefix('#').map(str::trim_start);
        let Some(directive) =
            directive.filter(|d| d.starts_with("if") || d.starts_with("el") || d.starts_with("endif"))
        else {
            at = next;
            continue;
        };
        // Only conditional directives get here: joining their continuation lines costs their length.
        let directive = directive.replace("\\\r\n", " ").replace("\\\n", " ");
        let keyword_len = directive.bytes().take_while(|&c| is_ident(c)).count();
        let (keyword, rest) = directive.split_at(keyword_len);
        let was_active = active;
        match keyword {
            "if" | "ifdef" | "ifndef" => {
                let cond = match keyword {
                    "if" => if_condition(rest),
                    "ifdef" => ifdef_condition(rest, true),
                    _ => ifdef_condition(rest, false),
                };
                stack.push(Group { outer: active, taken: cond == Cond::True });
                active = active && cond != Cond::False;
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                if let Some(g) = stack.last_mut() {
                    let cond = match keyword {
                        "elif" => if_condition(rest),
                        "elifdef" => ifdef_condition(rest, true),
                        "elifndef" => ifdef_condition(rest, false),
                        _ => Cond::True,
                    };
                    active = g.outer && !g.taken && cond != Cond::False;
                    g.taken |= cond == Cond::True;
                }
            }
            "endif" => {
                if let Some(g) = stack.pop() {
                    active = g.outer;
                }
            }
            _ => {}
        }
        // The directive lines themselves hold no code; a dead stretch runs from the line after
        // the directive that starts it to the line of the one that ends it.
        if was_active && !active {
            dead_from = next;
        } else if !was_active && active && at > dead_from {
            ranges.push(dead_from..at);
        }
        at = next;
    }
    // An unterminated group is dead to the end of the file.
    if !active && code.len() > dead_from {
        ranges.push(dead_from..code.len());
    }
    ranges
}

/// The first sign of host code in a kernel file, on the scanned text (comments and literals do
/// not count): kernel launch syntax `<<<`, a `main` function definition, or a call to a host
/// runtime function such as `cudaMalloc`. NVRTC compiles device code only, so code in branches
/// it never compiles (`#ifndef __CUDA_ARCH__`, `#if 0`, ...: see [`nvrtc_inactive`]) does not
/// count. Linear in the file's size: every stretch of code is walked once.
pub fn host_code(src: &str, scanned: &Scanned) -> Option<HostCode> {
    let inactive = nvrtc_inactive(&scanned.code);
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

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"#include "poly.cuh"
// a __global__ in a comment: __global__ void fake() {}
extern "C" __global__ void __launch_bounds__(256, 4)
poly_eval(const float* x) { }

/* block
   comment */
template <int N>
__global__ void tmpl(int* p) { }
__global__ void decl_only(int);
const char* s = "__global__ void in_string() {}";
extern "C" __global__ void __maxnreg__(32) capped(int n)
{
}
"#;

    #[test]
    fn finds_definitions_with_lines_skipping_comments_strings_and_declarations() {
        let sc = scan(SRC);
        let ks = kernels(SRC, &sc);
        let names: Vec<(&str, u32, u32)> = ks.iter().map(|k| (k.name.as_str(), k.line, k.col)).collect();
        assert_eq!(names, [("poly_eval", 4, 1), ("tmpl", 9, 17), ("capped", 12, 44)]);
    }

    #[test]
    fn comments_keep_their_lines() {
        let sc = scan(SRC);
        let lines: Vec<u32> = sc.comments.iter().map(|c| c.line).collect();
        assert_eq!(lines, [2, 6]);
        assert!(sc.comments[1].text.ends_with("comment */"));
        assert_eq!(sc.code.lines().count(), SRC.lines().count());
    }

    #[test]
    fn includes_are_listed_with_their_kind() {
        let inc = includes("#include \"a.cuh\"\n  #  include <cuda_fp16.h>\n// #include \"no.h\"\n");
        assert_eq!(inc, [("a.cuh".to_string(), true), ("cuda_fp16.h".to_string(), false)]);
    }

    #[test]
    fn dependencies_are_transitive_and_skip_missing_headers() {
        let d = tempfile::tempdir().unwrap();
        let inc = d.path().join("inc");
        std::fs::create_dir(&inc).unwrap();
        std::fs::write(d.path().join("k.cu"), "#include \"a.cuh\"\n#include <cuda_fp16.h>\n").unwrap();
        std::fs::write(d.path().join("a.cuh"), "#include <b.cuh>\n").unwrap();
        std::fs::write(inc.join("b.cuh"), "#include \"a.cuh\"\n").unwrap();
        let deps = dependencies(&d.path().join("k.cu"), std::slice::from_ref(&inc));
        assert_eq!(deps.into_iter().collect::<Vec<_>>(), [d.path().join("a.cuh"), inc.join("b.cuh")]);
    }

    #[test]
    fn unterminated_literals_are_blanked_to_the_end() {
        let src = "int a; const char* s = \"é\\\"é";
        let sc = scan(src);
        assert_eq!(sc.code.len(), src.len());
        assert!(!sc.code.contains('é'), "{:?}", sc.code);
    }

    #[test]
    fn lines_and_columns_come_from_the_index() {
        let src = "ab\né\n\nxyz";
        let ix = LineIndex::new(src);
        let at = |o: usize| (ix.line(o), ix.col(src, o));
        assert_eq!(
            [at(0), at(2), at(3), at(5), at(6), at(7), at(9), at(99)],
            [(1, 1), (1, 3), (2, 1), (2, 2), (3, 1), (4, 1), (4, 3), (4, 4)]
        );
        assert_eq!(ix.col(src, 4), 1, "inside a multi-byte character: its column");
        assert_eq!((ix.start_of_line(2), ix.start_of_line(4), ix.start_of_line(9)), (3, 7, 7));
        for o in 0..src.len() {
            assert_eq!(ix.line(o), line_of(src, o));
        }
    }

    #[test]
    fn definitions_inside_macros_are_told_apart() {
        let src = "#define K(NAME) \\\n  extern \"C\" __global__ void NAME(float* p) { \\\n  }\n__global__ void real(float* p) {}\n";
        let ks = kernels(src, &scan(src));
        let names: Vec<(&str, bool)> = ks.iter().map(|k| (k.name.as_str(), in_directive(src, k.start))).collect();
        assert_eq!(names, [("NAME", true), ("real", false)]);
    }

    #[test]
    fn nul_bytes_are_located() {
        // Before: NVRTC's C-string conversion failed with no line ("the source contains a NUL byte").
        let err = decode("kernels/a.cu", b"// a\n__global__ void k() {}\nx\0y\n".to_vec()).unwrap_err().to_string();
        assert!(err.starts_with("kernels/a.cu:3:2: error: a NUL byte (at offset 29)"), "{err}");
    }

    #[test]
    fn non_utf8_sources_are_located() {
        let e = decode("kernels/k.cu", b"int a;\n// caf\xe9\n".to_vec()).unwrap_err().to_string();
        assert_eq!(
            e,
            "kernels/k.cu:2:7: error: not valid UTF-8 (byte 0xe9 at offset 13): kernel sources must be UTF-8 text"
        );
        let e = decode("k.cu", b"\xff".to_vec()).unwrap_err().to_string();
        assert!(e.starts_with("k.cu:1:1: error: not valid UTF-8 (byte 0xff at offset 0)"), "{e}");
        assert_eq!(decode("k.cu", "é\n".into()).unwrap(), "é\n");
    }

    #[test]
    fn a_global_is_found_once_and_unbalanced_parentheses_stop_nothing() {
        let src = "__global__ __global__ void k() {}\n__global__ void open(\n__global__ void b(int x) {}\n";
        let sc = scan(src);
        let names: Vec<(String, u32)> = kernels(src, &sc).into_iter().map(|k| (k.name, k.line)).collect();
        assert_eq!(names, [("k".to_string(), 1), ("b".to_string(), 3)]);
    }

    fn host(src: &str) -> Option<(String, u32, u32)> {
        host_code(src, &scan(src)).map(|h| (h.what, h.line, h.col))
    }

    /// Host code is found at its line and column; the same words in comments, strings, member
    /// calls and declarations are not host code.
    #[test]
    fn host_code_is_located_and_comments_do_not_count() {
        let launch = "__global__ void k(int* p) {}\n// k<<<1, 1>>>(p);\nvoid run(int* p) {\n    k<<<1, 32>>>(p);\n}\n";
        assert_eq!(host(launch), Some(("kernel launch syntax `<<<...>>>`".into(), 4, 6)));
        let main = "/* int main() { } */\nconst char* s = \"int main() {}\";\nint main(int argc, char** argv)\n{\n  return 0;\n}\n";
        assert_eq!(host(main), Some(("a `main` function".into(), 3, 5)));
        let api = "#include <cuda_runtime.h>\nvoid f(float** d) {\n  // cudaMalloc(d, 4);\n  cudaMalloc(d, 4 * sizeof(float));\n}\n";
        assert_eq!(host(api), Some(("a call to the host API function `cudaMalloc`".into(), 4, 3)));
        let stdio = "#include <stdio.h>\nextern \"C\" void run() {\n  fprintf(stderr, \"no\\n\");\n}\n";
        assert_eq!(host(stdio), Some(("a call to the host C library function `fprintf`".into(), 3, 3)));
        let sync = "void f() { cudaDeviceSynchronize (); }";
        assert_eq!(host(sync), Some(("a call to the host API function `cudaDeviceSynchronize`".into(), 1, 12)));
        for device_only in [
            "__global__ void k(int* p) { p[0] = 1 << 3; }",
            "// cudaMemcpy(a, b, n, kind);\n__global__ void k() {}",
            "__device__ int main_value(int x) { return x; }",
            "int main(int, char**);",
            "__device__ void f(S s) { s.main(); s->cudaMalloc(0); ns::main(); }",
            "cudaStream_t stream; cudaMemcpyKind kind;",
            "template <typename T> using V = A<B<C<T>>>;",
            "const char* s = \"k<<<1,1>>>()\";",
            "__global__ void k() { printf(\"%d\\n\", 1); }",
            "__device__ int fprintf_count(int x) { return x; }",
        ] {
            assert_eq!(host(device_only), None, "{device_only}");
        }
    }

    /// One walk per stretch of text, however many unclosed `main(` there are.
    #[test]
    fn host_code_detection_is_linear() {
        let src = "main(".repeat(200_000);
        let started = std::time::Instant::now();
        assert_eq!(host(&src), None);
        let line = "__device__ float f(float x) { return x * 2.0f + g(x, y[3]); }\n".repeat(20_000);
        assert_eq!(host(&line), None);
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }

    /// The example from the review: a `__host__ __device__` helper whose host branch calls
    /// `fprintf` under `#ifndef __CUDA_ARCH__` is device code for NVRTC.
    #[test]
    fn host_calls_in_branches_nvrtc_never_compiles_do_not_count() {
        let report = "__global__ void k(int* p) { p[0] = 1; }\n__host__ __device__ void report(int x) {\n#ifndef __CUDA_ARCH__\n  fprintf(stderr, \"%d\\n\", x);\n#else\n  printf(\"%d\\n\", x);\n#endif\n}\n";
        assert_eq!(host(report), None);
        // Each form NVRTC never compiles, and each form it always does (the `#else` branch of
        // a dead one), around a host call.
        let dead = [
            "#ifndef __CUDA_ARCH__",
            "#if !defined(__CUDA_ARCH__)",
            "#if ! defined ( __CUDA_ARCH__ )",
            "#if !defined __CUDA_ARCH__",
            "#if 0",
            "#ifndef __CUDACC_RTC__",
            "#if !defined(__CUDACC_RTC__)",
            "#ifndef __CUDACC__",
            "  #  ifndef __CUDA_ARCH__ // host pass",
            "#if/**/0",
        ];
        for open in dead {
            let src = format!("void f() {{\n{open}\n  fopen(\"a\", \"r\");\n#endif\n}}\n");
            assert_eq!(host(&src), None, "{open}");
            let live = format!("void f() {{\n{open}\n#else\n  fopen(\"a\", \"r\");\n#endif\n}}\n");
            assert_eq!(host(&live), Some(("a call to the host C library function `fopen`".into(), 4, 3)), "{open}");
        }
        let taken = [
            "#ifdef __CUDA_ARCH__",
            "#if defined(__CUDA_ARCH__)",
            "#if defined __CUDA_ARCH__",
            "#ifdef __CUDACC_RTC__",
            "#if defined(__CUDACC__)",
        ];
        for open in taken {
            let src = format!("void f() {{\n{open}\n  printf(\"d\");\n#else\n  getenv(\"X\");\n#endif\n}}\n");
            assert_eq!(host(&src), None, "{open}");
            let live = format!("void f() {{\n{open}\n  getenv(\"X\");\n#endif\n}}\n");
            assert_eq!(host(&live), Some(("a call to the host C library function `getenv`".into(), 3, 3)), "{open}");
        }
    }

    /// Conditions that cannot be told without preprocessing keep every branch scanned, as
    /// does code after the group closes.
    #[test]
    fn unknown_conditions_keep_their_branches_scanned() {
        for open in [
            "#if FOO > 2",
            "#ifdef MY_MACRO",
            "#ifndef MY_MACRO",
            "#if 1",
            "#if defined(__CUDA_ARCH__) && FOO",
            "#if !defined(__CUDA_ARCH__) || FOO",
            "#if (!defined(__CUDA_ARCH__))",
            "#if !definedX",
            "#if __CUDA_ARCH__ >= 800",
        ] {
            let first = format!("void f() {{\n{open}\n  fflush(0);\n#else\n  int x;\n#endif\n}}\n");
            assert_eq!(host(&first).map(|h| h.1), Some(3), "{open}");
            let second = format!("void f() {{\n{open}\n  int x;\n#else\n  fflush(0);\n#endif\n}}\n");
            assert_eq!(host(&second).map(|h| h.1), Some(5), "{open}");
        }
        let after = "#if 0\nint a;\n#endif\nvoid f() { fclose(0); }\n";
        assert_eq!(host(after).map(|h| h.1), Some(4));
        // A stray `#endif` or `#else` changes nothing; an unclosed dead group runs to the end.
        assert_eq!(host("#endif\n#else\nvoid f() { fclose(0); }\n").map(|h| h.1), Some(3));
        assert_eq!(host("#if 0\nvoid f() { fclose(0); }\n"), None);
    }

    /// `#elif` chains: after a branch known taken every later one is dead; after an unknown
    /// one, later branches stay live unless known false; groups nest.
    #[test]
    fn elif_chains_and_nesting_follow_the_preprocessor() {
        let line = |src: &str| host(src).map(|h| h.1);
        // Known-false first branch: the `#elif` decides.
        let chain = "#ifndef __CUDA_ARCH__\nfputs(a);\n#elif FOO\nfread(a);\n#else\nfwrite(a);\n#endif\n";
        assert_eq!(line(chain), Some(4));
        // Known-true `#elif`: the `#else` after it is dead.
        let chain = "#if 0\nfputs(a);\n#elif defined(__CUDA_ARCH__)\nint a;\n#else\nfwrite(a);\n#endif\n";
        assert_eq!(line(chain), None);
        // Unknown first branch, then a known-true `#elif`: both live, the `#else` dead.
        let chain =
            "#if FOO\nint a;\n#elif defined(__CUDACC_RTC__)\nint b;\n#elif BAR\nfwrite(a);\n#else\nfputs(a);\n#endif\n";
        assert_eq!(line(chain), None);
        let chain = "#if FOO\nfread(a);\n#elif defined(__CUDACC_RTC__)\nint b;\n#endif\n";
        assert_eq!(line(chain), Some(2));
        // `#elifdef` / `#elifndef` (C++23) follow `#ifdef` / `#ifndef`.
        assert_eq!(line("#if FOO\nint a;\n#elifndef __CUDA_ARCH__\nfread(a);\n#endif\n"), None);
        assert_eq!(line("#if 0\nint a;\n#elifdef __CUDA_ARCH__\nint b;\n#else\nfread(a);\n#endif\n"), None);
        // Nested: everything inside a dead group is dead, whatever the inner conditions; a
        // live inner group inside a live outer one is scanned; the outer `#else` is live.
        let nested = "#ifndef __CUDA_ARCH__\n#ifdef __CUDA_ARCH__\nint a;\n#else\nfread(a);\n#endif\n#if FOO\nfputs(a);\n#endif\nfwrite(a);\n#else\n#if FOO\nint b;\n#else\nint c;\n#endif\n#endif\nint d;\n";
        assert_eq!(line(nested), None);
        let nested =
            "#ifdef __CUDA_ARCH__\n#if FOO\n#ifndef __CUDACC__\nfputs(a);\n#endif\n#else\nfclose(a);\n#endif\n#endif\n";
        assert_eq!(line(nested), Some(7));
    }

    /// Continued directive lines are one directive; `<<<` host launch code guarded for nvcc's
    /// host pass is skipped; commented-out directives do not count.
    #[test]
    fn continued_directives_launches_and_commented_directives() {
        let line = |src: &str| host(src).map(|h| h.1);
        let cont = "#if !defined( \\\n    __CUDA_ARCH__)\nfputs(a);\n#endif\nint x;\n";
        assert_eq!(line(cont), None);
        let cont_crlf = "#ifndef \\\r\n __CUDA_ARCH__\r\nfputs(a);\r\n#endif\r\n";
        assert_eq!(line(cont_crlf), None);
        // A continued ordinary line (a macro body) swallows the `#else` on its next line.
        let swallowed = "#if 0\n#define M(x) x \\\n#else\nfputs(a);\n#endif\nint y;\n";
        assert_eq!(line(swallowed), None);
        let launch = "__global__ void k(int* p) {}\n#ifndef __CUDA_ARCH__\nvoid run(int* p) {\n  k<<<1, 32>>>(p);\n  cudaDeviceSynchronize();\n}\nint main() { return 0; }\n#endif\n";
        assert_eq!(line(launch), None);
        let commented = "// #ifndef __CUDA_ARCH__\n/* #if 0 */\nvoid f() { fputs(a); }\n// #endif\n";
        assert_eq!(line(commented), Some(3));
        let in_string = "const char* s = \"\\\n#if 0\";\nvoid f() { fputs(a); }\n";
        assert_eq!(line(in_string), Some(3));
    }

    /// The conditional-stack pass is linear too: deep nesting, many groups, a long continued line.
    #[test]
    fn inactive_regions_are_found_in_linear_time() {
        let started = std::time::Instant::now();
        let depth = 50_000;
        let mut deep = "#if FOO\n#ifndef __CUDA_ARCH__\nfputs(a);\n".repeat(depth);
        deep.push_str(&"#endif\n#endif\n".repeat(depth));
        deep.push_str("void f() { fclose(a); }\n");
        assert_eq!(host(&deep).map(|h| h.1), Some(5 * depth as u32 + 1));
        let many = "#ifndef __CUDA_ARCH__\nfputs(a);\n#elif X\nint a;\n#else\nint b;\n#endif\n".repeat(40_000);
        assert_eq!(host(&many), None);
        let continued = format!("#if 0 \\\n{}\nfputs(a);\n#endif\n", "&& x \\\n".repeat(100_000));
        assert_eq!(host(&continued).map(|h| h.1), Some(100_003));
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }

    #[test]
    fn garbage_does_not_panic() {
        for s in [
            "__global__",
            "__global__ void (",
            "__global__ k(((",
            "\"unterminated",
            "/* open",
            "'",
            "__global__ void k()",
            "#",
            "#if",
            "#elif 0\n#else",
            "#if 0 \\",
            "\\\n#ifndef \\\r\n",
            "#if !defined(",
            "#ifdef \u{e9}\n\u{e9}",
        ] {
            let sc = scan(s);
            let _ = kernels(s, &sc);
            let _ = host_code(s, &sc);
        }
    }
}
