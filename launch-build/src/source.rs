//! What launch-build reads from kernel sources without compiling them: where each `__global__`
//! function is defined (for `file:line` in reports), the comments above it (for `@launch`), and
//! the headers a file includes (for `rerun-if-changed`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
}

/// Blanks comments, string and character literals.
pub fn scan(src: &str) -> Scanned {
    let b = src.as_bytes();
    let mut code = b.to_vec();
    let mut comments = Vec::new();
    let mut i = 0;
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut code[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                comments.push(Comment { line: line_of(src, i), offset: i, text: src[i..end].to_string() });
                blank(&mut code, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                comments.push(Comment { line: line_of(src, i), offset: i, text: src[i..end].to_string() });
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
    Scanned { code, comments }
}

/// 1-based line of a byte offset.
pub fn line_of(src: &str, offset: usize) -> u32 {
    src.as_bytes()[..offset.min(src.len())].iter().filter(|&&c| c == b'\n').count() as u32 + 1
}

fn col_of(src: &str, offset: usize) -> u32 {
    let start = src[..offset].rfind('\n').map_or(0, |n| n + 1);
    src[start..offset].chars().count() as u32 + 1
}

/// Attribute-like words that may sit between `__global__` and the kernel's name, with a
/// parenthesised argument list.
const ATTRIBUTES: &[&str] =
    &["__launch_bounds__", "__maxnreg__", "__attribute__", "__declspec", "__cluster_dims__", "alignas", "__align__"];

/// Every `__global__` function *definition* (declarations end in `;` and are skipped).
pub fn kernels(src: &str, scanned: &Scanned) -> Vec<KernelDef> {
    let code = &scanned.code;
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(pos) = code[search..].find("__global__") {
        let at = search + pos;
        search = at + "__global__".len();
        if !is_word_at(code, at, "__global__") {
            continue;
        }
        if let Some(def) = kernel_after(src, code, search) {
            out.push(KernelDef { start: at, ..def });
        }
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

/// From just after `__global__`: the first identifier followed by `(` that is not an attribute.
fn kernel_after(src: &str, code: &str, mut i: usize) -> Option<KernelDef> {
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
                let (s, e) = last_ident?;
                let word = &code[s..e];
                let close = matching_paren(b, i)?;
                if ATTRIBUTES.contains(&word) {
                    last_ident = None;
                    i = close + 1;
                    continue;
                }
                // A definition has a body: the next non-space character after the parameters is `{`.
                let after = &code[close + 1..];
                let body = close + 1 + (after.len() - after.trim_start().len());
                if code.as_bytes().get(body) != Some(&b'{') {
                    return None;
                }
                return Some(KernelDef {
                    name: word.to_string(),
                    line: line_of(src, s),
                    col: col_of(src, s),
                    start: s,
                    body,
                });
            }
            b';' | b'{' | b'}' => return None,
            _ => i += 1,
        }
    }
    None
}

fn matching_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
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
    fn garbage_does_not_panic() {
        for s in [
            "__global__",
            "__global__ void (",
            "__global__ k(((",
            "\"unterminated",
            "/* open",
            "'",
            "__global__ void k()",
        ] {
            let sc = scan(s);
            let _ = kernels(s, &sc);
        }
    }
}
