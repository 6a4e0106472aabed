//! Where a kernel that has no `__global__` definition of its own name in the file came from: the
//! macro invocation that generated it.
//!
//! ```c
//! #define UNARY_OP(T, NAME) extern "C" __global__ void NAME(const T* x, T* y) { ... }
//! UNARY_OP(float, ucopy_f32)          // ucopy_f32 is found here: line 2, column of UNARY_OP
//! #define OPS(T, S) UNARY_OP(T, neg_##S) UNARY_OP(T, abs_##S)
//! OPS(float, f32)                     // neg_f32 and abs_f32: `f32` is the longest argument that is a
//!                                     // `_`-separated piece of their names
//! ```
//!
//! The scan reads the text once (comments and literals already blanked by [`source::scan`]),
//! skipping preprocessor lines and function bodies, and records every invocation `NAME(...)` at
//! file or namespace scope with the identifiers among its arguments. Each lookup is then a hash
//! probe per `_`-separated piece of the kernel's name: linear in the file, whatever the number of
//! kernels. No compiler option changes, so registers and cubins are exactly those of a build
//! without it.

use std::collections::HashMap;

use crate::source::Scanned;

/// A macro invocation that produced a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// The macro's name.
    pub macro_name: String,
    /// 1-based line of the macro's name.
    pub line: u32,
    /// 1-based column of the macro's name.
    pub col: u32,
}

/// Every argument identifier of every invocation at file or namespace scope, first invocation first.
pub struct Invocations {
    /// identifier → (macro name, byte offset of the macro name) of its first invocation.
    first: HashMap<String, (String, usize)>,
}

/// C/C++ words that are followed by `(` without being a macro invocation.
const NOT_MACROS: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "return",
    "sizeof",
    "alignof",
    "decltype",
    "static_assert",
    "defined",
    "__launch_bounds__",
    "__maxnreg__",
    "__attribute__",
    "__declspec",
    "__align__",
    "alignas",
    "noexcept",
    "operator",
];

impl Invocations {
    /// Scans `src` (with `scanned` its [`crate::source::scan`]).
    pub fn new(scanned: &Scanned) -> Invocations {
        let code = scanned.code.as_bytes();
        let mut first: HashMap<String, (String, usize)> = HashMap::new();
        // One entry per open `{`: whether it opens a function body (or any block other than
        // `extern "C" {` and `namespace x {`).
        let mut braces: Vec<bool> = Vec::new();
        let mut bodies = 0usize;
        // The open invocation: (macro name, its offset, paren depth inside it).
        let mut open: Option<(String, usize, usize)> = None;
        // The last identifier and the last significant byte before the current position.
        let mut last_ident: Option<(usize, usize)> = None;
        let mut before_last_ident: Option<(usize, usize)> = None;
        let mut prev: u8 = b'\n';
        let mut line_start = true;
        let mut i = 0;
        while i < code.len() {
            let c = code[i];
            if line_start && c == b'#' {
                // A preprocessor directive, with its `\` continuation lines: macro bodies name
                // parameters, not kernels.
                while i < code.len() {
                    if code[i] == b'\n' && (i == 0 || code[i - 1] != b'\\') && !ends_with_backslash_cr(code, i) {
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            if c == b'\n' {
                line_start = true;
                i += 1;
                continue;
            }
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            line_start = false;
            if is_ident_start(c) {
                let start = i;
                while i < code.len() && is_ident(code[i]) {
                    i += 1;
                }
                let word = &scanned.code[start..i];
                if let Some((name, at, _)) = &open {
                    first.entry(word.to_string()).or_insert_with(|| (name.clone(), *at));
                }
                before_last_ident = last_ident;
                last_ident = Some((start, i));
                prev = b'a';
                continue;
            }
            match c {
                b'(' => match &mut open {
                    Some((_, _, depth)) => *depth += 1,
                    None if bodies == 0 && prev == b'a' => {
                        if let Some((s, e)) = last_ident {
                            let name = &scanned.code[s..e];
                            if !NOT_MACROS.contains(&name) {
                                open = Some((name.to_string(), s, 1));
                            }
                        }
                    }
                    None => {}
                },
                b')' => {
                    if let Some((_, _, depth)) = &mut open {
                        *depth -= 1;
                        if *depth == 0 {
                            open = None;
                        }
                    }
                }
                b'{' if open.is_none() => {
                    // `extern "C" {` (the literal's contents are blanked, its quotes kept) and
                    // `namespace [x] {` open scopes; anything else a body.
                    let word = |r: Option<(usize, usize)>| r.map(|(s, e)| &scanned.code[s..e]);
                    let scope = prev == b'"'
                        || (prev == b'a'
                            && (word(last_ident) == Some("namespace") || word(before_last_ident) == Some("namespace")));
                    braces.push(!scope);
                    bodies += usize::from(!scope);
                }
                b'}' if open.is_none() && braces.last() == Some(&true) => {
                    braces.pop();
                    bodies -= 1;
                }
                b'}' if open.is_none() => {
                    braces.pop();
                }
                _ => {}
            }
            prev = c;
            i += 1;
        }
        Invocations { first }
    }

    /// Every argument identifier with its first invocation's (macro name, byte offset).
    pub fn arguments(&self) -> impl Iterator<Item = (&String, &(String, usize))> {
        self.first.iter()
    }

    /// The invocation that produced kernel `name`: the first whose arguments name it, else the
    /// first whose arguments hold the longest `_`-separated piece of it (a name pasted with `##`).
    pub fn find(&self, name: &str, src: &str, scanned: &Scanned) -> Option<Invocation> {
        let at = |(m, off): &(String, usize)| Invocation {
            macro_name: m.clone(),
            line: scanned.lines.line(*off),
            col: scanned.lines.col(src, *off),
        };
        if let Some(hit) = self.first.get(name) {
            return Some(at(hit));
        }
        // Pieces: runs between `_`s. Candidates: every run of whole pieces, longest first.
        let bounds: Vec<(usize, usize)> = pieces(name);
        let mut best: Option<(usize, usize, &(String, usize))> = None;
        for (a, &(s, _)) in bounds.iter().enumerate() {
            for &(_, e) in &bounds[a..] {
                let Some(hit) = self.first.get(&name[s..e]) else { continue };
                let better = match best {
                    None => true,
                    Some((len, off, _)) => e - s > len || (e - s == len && hit.1 < off),
                };
                if better && e - s < name.len() {
                    best = Some((e - s, hit.1, hit));
                }
            }
        }
        best.map(|(_, _, hit)| at(hit))
    }
}

/// `(start, end)` of each `_`-separated non-empty piece of `name`.
fn pieces(name: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in name.char_indices().chain(std::iter::once((name.len(), '_'))) {
        if c == '_' {
            if i > start {
                out.push((start, i));
            }
            start = i + 1;
        }
    }
    out
}

fn ends_with_backslash_cr(code: &[u8], nl: usize) -> bool {
    nl >= 2 && code[nl - 1] == b'\r' && code[nl - 2] == b'\\'
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::scan;

    fn find(src: &str, name: &str) -> Option<(String, u32, u32)> {
        let s = scan(src);
        Invocations::new(&s).find(name, src, &s).map(|i| (i.macro_name, i.line, i.col))
    }

    const SRC: &str = r#"#include <stdint.h>
#define UNARY_OP(T, NAME, F) \
  extern "C" __global__ void NAME(const T* x, T* y) { y[0] = F(x[0]); }
#define OPS(T, S) UNARY_OP(T, neg_##S, -) UNARY_OP(T, abs_##S, fabs)
// UNARY_OP(float, in_a_comment, -)
__device__ float f(float v) { return helper(v, not_a_kernel); }
UNARY_OP(float, ucopy_f32, )
extern "C" {
  UNARY_OP(double,
           ucopy_f64, )
}
namespace ns {
    OPS(float, f32)
}
OPS(double, f64)
"#;

    #[test]
    fn a_name_passed_to_a_macro_is_found_at_the_invocation() {
        assert_eq!(find(SRC, "ucopy_f32"), Some(("UNARY_OP".into(), 7, 1)));
        // Inside `extern "C" {`, over two lines: the macro's name is the place.
        assert_eq!(find(SRC, "ucopy_f64"), Some(("UNARY_OP".into(), 9, 3)));
    }

    #[test]
    fn a_pasted_name_is_found_by_its_longest_argument_piece() {
        assert_eq!(find(SRC, "neg_f32"), Some(("OPS".into(), 13, 5)));
        assert_eq!(find(SRC, "abs_f64"), Some(("OPS".into(), 15, 1)));
    }

    #[test]
    fn comments_directives_and_function_bodies_are_not_invocations() {
        assert_eq!(find(SRC, "in_a_comment"), None);
        assert_eq!(find(SRC, "not_a_kernel"), None);
        // `NAME` and `S` are macro parameters in `#define` lines.
        assert_eq!(find(SRC, "NAME"), None);
        assert_eq!(find(SRC, "nothing_like_it"), None);
    }

    #[test]
    fn pieces_split_at_underscores() {
        assert_eq!(pieces("_a__bc_"), vec![(1, 2), (4, 6)]);
        assert_eq!(pieces("abc"), vec![(0, 3)]);
    }
}
