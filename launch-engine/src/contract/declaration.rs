//! The kernel declaration an annotation sits on: where its specifiers begin (where
//! `__launch_bounds__` goes) and the launch bounds the user already wrote on it.

use super::parse::Value;
use crate::source::KernelDef;

/// Where the specifiers of the declaration that starts after `from` begin: past whitespace,
/// `extern "C"` and `template <...>` headers. `@launch` becomes a `__launch_bounds__` inserted
/// there, ahead of every attribute the user wrote, because NVRTC keeps the *last* of several
/// `__launch_bounds__`: one the source scan cannot see (a macro) then wins, and reading the PTX
/// back reports the disagreement instead of silently compiling @launch's values.
pub(super) fn declaration_start(code: &str, from: usize, k: &KernelDef) -> usize {
    let b = code.as_bytes();
    let skip_ws = |mut i: usize| {
        while i < k.start && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut i = skip_ws(from);
    loop {
        if word_at(code, i, "extern") {
            let j = skip_ws(i + "extern".len());
            if b.get(j) == Some(&b'"') {
                if let Some(close) = code[j + 1..k.start].find('"') {
                    i = skip_ws(j + 1 + close + 1);
                    continue;
                }
            }
        }
        if word_at(code, i, "template") {
            let j = skip_ws(i + "template".len());
            if let Some(close) = (b.get(j) == Some(&b'<')).then(|| closing_angle(&b[..k.start], j)).flatten() {
                i = skip_ws(close + 1);
                continue;
            }
        }
        break;
    }
    // Not found (a shape this walk does not know): right before `__global__`, as a last resort.
    if i <= k.start {
        i
    } else {
        k.start
    }
}

fn word_at(code: &str, at: usize, word: &str) -> bool {
    let b = code.as_bytes();
    let is_ident = |c: u8| c == b'_' || c.is_ascii_alphanumeric();
    code.get(at..).is_some_and(|r| r.starts_with(word))
        && (at == 0 || !is_ident(b[at - 1]))
        && b.get(at + word.len()).is_none_or(|&c| !is_ident(c))
}

/// The `>` closing the `<` at `open`; `>` inside parentheses (`template <bool B = (2 > 1)>`)
/// does not count.
fn closing_angle(b: &[u8], open: usize) -> Option<usize> {
    let (mut angle, mut paren) = (0usize, 0usize);
    for (k, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'(' => paren += 1,
            b')' => paren = paren.saturating_sub(1),
            b'<' if paren == 0 => angle += 1,
            b'>' if paren == 0 => {
                angle = angle.saturating_sub(1);
                if angle == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Launch-bounds attributes written on a kernel's declaration: `(name, args, offset)` for every
/// `__launch_bounds__`, `launch_bounds` (the `__attribute__` spelling), `__maxnreg__` and
/// `maxnreg` followed by a parenthesised list, anywhere from `from` (the end of the annotation's
/// comment: before or after `__global__`, after `extern "C"` or a template header) to the body.
fn written_bounds<'c>(code: &'c str, from: usize, k: &KernelDef) -> Vec<(&'static str, Vec<&'c str>)> {
    let decl = code.get(from..k.body).unwrap_or("");
    let b = decl.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !(b[i] == b'_' || b[i].is_ascii_alphabetic())
            || (i > 0 && (b[i - 1] == b'_' || b[i - 1].is_ascii_alphanumeric()))
        {
            i += 1;
            continue;
        }
        let end = i + decl[i..].find(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).unwrap_or(decl.len() - i);
        let kind = match &decl[i..end] {
            "__launch_bounds__" | "launch_bounds" | "__launch_bounds" => Some("__launch_bounds__"),
            "__maxnreg__" | "maxnreg" | "__maxnreg" => Some("__maxnreg__"),
            _ => None,
        };
        i = end;
        let Some(kind) = kind else { continue };
        let rest = decl[end..].trim_start();
        let Some(inner) = rest.strip_prefix('(') else { continue };
        let open = decl.len() - inner.len();
        let Some(close) = closing_paren(&b[open..]) else { continue };
        let args = split_top_level(&decl[open..open + close]);
        out.push((kind, args));
        i = open + close + 1;
    }
    out
}

/// The offset of the `)` that closes a list starting just after its `(`.
fn closing_paren(b: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' if depth == 0 => return Some(k),
            b')' => depth -= 1,
            _ => {}
        }
    }
    None
}

fn split_top_level(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0usize, 0);
    for (k, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(list[from..k].trim());
                from = k + 1;
            }
            _ => {}
        }
    }
    out.push(list[from..].trim());
    out
}

/// A C integer literal's value (`256`, `0x100`, `256u`); `None` for anything else (a macro, a
/// constant expression), which only the compiled PTX can tell.
fn c_integer(t: &str) -> Option<i64> {
    let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        i64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
    }
}

/// `__launch_bounds__`/`__maxnreg__` already on the kernel that disagree with the annotation.
/// Bounds whose values are not plain integers (macros, constants) are left to the PTX check.
pub(super) fn conflicting_bounds(code: &str, from: usize, k: &KernelDef, values: &[(Value, usize)]) -> Option<String> {
    let want: Vec<String> = values.iter().map(|v| v.0.to_string()).collect();
    for (kind, args) in written_bounds(code, from, k) {
        if kind == "__maxnreg__" {
            // NVRTC refuses __launch_bounds__ together with __maxnreg__, and @launch is applied as
            // __launch_bounds__: the register cap must move into the annotation.
            return Some(format!(
                "kernel `{}` also has __maxnreg__({}); NVRTC cannot combine it with the __launch_bounds__ that @launch({}) \
                 becomes: remove __maxnreg__ and give the cap as @launch's third argument",
                k.name,
                args.join(", "),
                want.join(", ")
            ));
        }
        // Compare values, not text; a third __launch_bounds__ argument (max blocks per cluster)
        // is not part of the contract. The PTX must end up with exactly @launch's directives.
        let parsed: Vec<Option<i64>> = args.iter().take(2).map(|a| c_integer(a)).collect();
        if parsed.contains(&None) {
            continue; // not a literal: the PTX, read back after compiling, decides
        }
        let declared: Vec<Option<i64>> = values.iter().take(2).map(|v| v.0.int()).collect();
        if parsed != declared {
            return Some(format!(
                "kernel `{}` also has __launch_bounds__({}), which disagrees with @launch({}); declare the contract once",
                k.name,
                args.join(", "),
                want.join(", ")
            ));
        }
    }
    None
}
