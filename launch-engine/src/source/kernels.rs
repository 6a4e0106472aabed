//! Where each `__global__` function is defined, and whether a definition sits in a macro.

use super::scan::{is_ident, Scanned};

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
