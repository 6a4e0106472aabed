//! `@launch(threads[, min_blocks[, max_regs]])` annotations (seeds/004): found in the comment
//! block right above a kernel, validated before anything is compiled, and applied as
//! `__launch_bounds__(threads, min_blocks)` in the source (so NVVM and ptxas see exactly what a
//! CUDA programmer would have written) plus `.maxnreg max_regs` in the PTX (NVRTC refuses
//! `__launch_bounds__` together with `__maxnreg__`; ptxas then caps registers at the smaller of
//! `max_regs` and what `threads × min_blocks` leaves per thread).

use std::collections::HashMap;

use crate::error::Diagnostic;
use crate::source::{KernelDef, Scanned};

/// A validated `@launch` annotation, attached to a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// The kernel it applies to.
    pub kernel: String,
    /// Threads per CTA (exact).
    pub threads: u32,
    /// `.minnctapersm`.
    pub min_blocks: Option<u32>,
    /// `.maxnreg`.
    pub max_regs: Option<u32>,
    /// 1-based line of the annotation.
    pub line: u32,
    /// 1-based column of its `@`.
    pub col: u32,
}

impl Annotation {
    /// `@launch(256, 2, 40)`, as the user wrote it.
    pub fn written(&self) -> String {
        let args: Vec<String> =
            std::iter::once(self.threads).chain(self.min_blocks).chain(self.max_regs).map(|v| v.to_string()).collect();
        format!("@launch({})", args.join(", "))
    }
}

/// The most CTAs any GPU keeps resident on one SM (32 on sm_50 to sm_100; sm_75/sm_86 hold 16,
/// sm_120 24). ptxas 12.9 ignores a larger `.minnctapersm` with "out of range" on every arch, and
/// above 2^32 - 1 it fails: a bigger min_blocks can never be met, so it is refused here, where
/// the annotation can be pointed at. (Arches holding fewer are reported by `cargo launch check`.)
pub const MAX_MIN_BLOCKS: i64 = 32;

struct Raw {
    offset: usize,
    /// Byte offset just after the comment holding it.
    comment_end: usize,
    /// The annotation's first line, from `@launch` on.
    text: String,
    /// Each argument's text (block-comment continuations removed) and offset.
    args: Vec<(String, usize)>,
    /// `Some(reason)` when the argument list is not closed.
    unclosed: Option<&'static str>,
    /// Offset of a second annotation, or of a second argument list, on the same line after this
    /// one's `)`: `// @launch(128) // @launch(64)`, `// @launch(128)(64)`.
    second: Option<usize>,
}

/// One annotation, validated and attached to its kernel, with where its bounds go in the source.
struct Attached<'k> {
    annotation: Annotation,
    kernel: &'k KernelDef,
    /// Where the declaration's specifiers begin (after `extern "C"` and `template <...>`).
    decl_at: usize,
}

#[cfg(test)]
/// Finds, validates and attaches every `@launch` of one file. Errors are compiler-style lines
/// (`file:line:col: error: ...`, the annotation, a caret), all of them at once.
pub fn annotations(
    file: &str,
    src: &str,
    scanned: &Scanned,
    kernels: &[KernelDef],
) -> Result<Vec<Annotation>, Vec<Diagnostic>> {
    attach(file, src, scanned, kernels).map(|a| a.into_iter().map(|a| a.annotation).collect())
}

fn attach<'k>(
    file: &str,
    src: &str,
    scanned: &Scanned,
    kernels: &'k [KernelDef],
) -> Result<Vec<Attached<'k>>, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut out: Vec<Attached> = Vec::new();
    // Kernel name → line of its annotation (one annotation per kernel).
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let by_start = KernelsByStart::new(kernels);
    for raw in find(scanned) {
        let err = |errors: &mut Vec<Diagnostic>, at: usize, reason: String| {
            errors.push(diagnostic(file, src, scanned, at, &raw.text, raw.offset, &reason));
        };
        if let Some(reason) = raw.unclosed {
            err(&mut errors, raw.offset, reason.into());
            continue;
        }
        if let Some(at) = raw.second {
            err(
                &mut errors,
                at,
                "a second launch contract on the annotation's line: give each kernel one `@launch(...)`".into(),
            );
            continue;
        }
        let values = match parse_args(&raw) {
            Ok(v) => v,
            Err((at, reason)) => {
                err(&mut errors, at, reason);
                continue;
            }
        };
        let mut ok = true;
        for (i, (v, at)) in values.iter().enumerate() {
            if let Some(reason) = out_of_range(i, v) {
                err(&mut errors, *at, reason);
                ok = false;
            }
        }
        let Some(kernel) = by_start.following(&scanned.code, raw.comment_end) else {
            err(&mut errors, raw.offset, "@launch must be followed by a kernel (__global__ function) definition; only blank lines and comments may come between".into());
            continue;
        };
        let line = scanned.lines.line(raw.offset);
        if let Some(prev) = seen.get(kernel.name.as_str()) {
            err(
                &mut errors,
                raw.offset,
                format!("kernel `{}` already has @launch at line {prev}; give each kernel one", kernel.name),
            );
            continue;
        }
        seen.insert(&kernel.name, line);
        if let Some(reason) = conflicting_bounds(&scanned.code, raw.comment_end, kernel, &values) {
            err(&mut errors, raw.offset, reason);
            continue;
        }
        if ok {
            let int = |i: usize| values.get(i).and_then(|v| v.0.int()).and_then(|v| u32::try_from(v).ok());
            out.push(Attached {
                annotation: Annotation {
                    kernel: kernel.name.clone(),
                    threads: int(0).unwrap_or(0),
                    min_blocks: int(1),
                    max_regs: int(2),
                    line,
                    col: scanned.lines.col(src, raw.offset),
                },
                kernel,
                decl_at: declaration_start(&scanned.code, raw.comment_end, kernel),
            });
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Kernels ordered by the offset of their `__global__`, for "the next kernel after offset X" by
/// binary search (a linear search per annotation is quadratic in a file of many kernels).
struct KernelsByStart<'k> {
    sorted: Vec<&'k KernelDef>,
}

impl<'k> KernelsByStart<'k> {
    fn new(kernels: &'k [KernelDef]) -> Self {
        let mut sorted: Vec<&KernelDef> = kernels.iter().collect();
        sorted.sort_by_key(|k| k.start); // already in order when they come from source::kernels
        KernelsByStart { sorted }
    }

    /// The kernel whose declaration follows `from` with nothing between but whitespace, comments
    /// (blanked in `code`) and declaration prefixes such as `extern "C"` or `template <int N>`:
    /// any statement end, block or preprocessor line in between means the annotation is attached
    /// to no kernel. (`=` and parentheses may appear: `template <int N = 4>`, `__launch_bounds__(...)`.)
    fn following(&self, code: &str, from: usize) -> Option<&'k KernelDef> {
        let k = *self.sorted.get(self.sorted.partition_point(|k| k.start < from))?;
        let between = code.get(from..k.start)?;
        (!between.contains([';', '{', '}', '#'])).then_some(k)
    }
}

/// Every `@launch(...)` inside a comment.
fn find(scanned: &Scanned) -> Vec<Raw> {
    let mut out = Vec::new();
    for c in &scanned.comments {
        let mut from = 0;
        while let Some(pos) = c.text[from..].find("@launch") {
            let start = from + pos;
            // Only an annotation that begins its comment line counts: `@launch` in prose
            // ("the @launch forms") is text, not a contract.
            let line_start = c.text[..start].rfind('\n').map_or(0, |n| n + 1);
            if !c.text[line_start..start].chars().all(|ch| matches!(ch, '/' | '*' | '!' | ' ' | '\t')) {
                from = start + 1;
                continue;
            }
            let rest = &c.text[start + "@launch".len()..];
            let open = rest.len() - rest.trim_start().len();
            let text_end;
            let mut args = Vec::new();
            let mut unclosed = None;
            if rest[open..].starts_with('(') {
                let body_start = start + "@launch".len() + open + 1;
                let close = c.text[body_start..].find(')').map(|n| body_start + n);
                text_end = close.map_or(c.text.len(), |n| n + 1);
                let body = &c.text[body_start..close.unwrap_or(c.text.len())];
                let mut at = body_start;
                for part in body.split(',') {
                    let (lead, value) = arg_value(part);
                    args.push((value, c.offset + at + lead));
                    at += part.len() + 1;
                }
                if close.is_none() {
                    unclosed = Some(if c.text.starts_with("//") {
                        "`@launch(` has no `)` on its line: in a // comment, `@launch(...)` must fit on one line"
                    } else {
                        "`@launch(` has no `)` before the end of its comment"
                    });
                }
            } else {
                text_end = start + "@launch".len();
                args.push((String::new(), c.offset + text_end));
            }
            // The rest of the annotation's line: prose may follow (`// @launch(256)  one tile`),
            // but not another contract, which would be silently ignored.
            let line_rest = &c.text[text_end..];
            let line_rest = &line_rest[..line_rest.find('\n').unwrap_or(line_rest.len())];
            let second = line_rest
                .find("@launch")
                .or_else(|| {
                    // `@launch(128)(64)`: a second argument list, not a parenthesised remark.
                    let t = line_rest.trim_start();
                    let list =
                        t.strip_prefix('(').is_some_and(|r| r.trim_start().starts_with(|c: char| c.is_ascii_digit()));
                    list.then(|| line_rest.len() - t.len())
                })
                .filter(|_| unclosed.is_none())
                .map(|n| c.offset + text_end + n);
            out.push(Raw {
                offset: c.offset + start,
                comment_end: c.offset + c.text.len(),
                text: c.text[start..text_end].lines().next().unwrap_or("").to_string(),
                args,
                unclosed,
                second,
            });
            from = text_end.max(start + 1);
        }
    }
    out
}

/// One argument as written in `part` (the text between two commas): its offset in `part` and its
/// text. An argument may continue on the next line of a `/* */` comment, whose leading `*` is the
/// comment's margin, not part of the argument: `/*\n * @launch(128,\n *   2)\n */`.
fn arg_value(part: &str) -> (usize, String) {
    let mut pieces: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for (n, line) in part.split_inclusive('\n').enumerate() {
        let mut t = line.trim_start();
        let mut lead = line.len() - t.len();
        if n > 0 && t.starts_with('*') && !t.starts_with("*/") {
            t = &t[1..];
            let more = t.len() - t.trim_start().len();
            t = t.trim_start();
            lead += 1 + more;
        }
        let t = t.trim_end();
        if !t.is_empty() {
            pieces.push((at + lead, t));
        }
        at += line.len();
    }
    match pieces.as_slice() {
        [] => (part.len(), String::new()),
        [(lead, t)] => (*lead, t.to_string()),
        // Two pieces are not one integer: kept apart so the value does not parse.
        [(lead, _), ..] => (*lead, pieces.iter().map(|p| p.1).collect::<Vec<_>>().join(" ")),
    }
}

/// An argument's value: an integer, or an integer written with too many digits for one.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Int(i64),
    /// The digits as written (outside every valid range).
    Huge(String),
}

impl Value {
    fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Huge(_) => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Huge(t) => f.write_str(t),
        }
    }
}

/// The arguments with their offsets, or the offset of the first bad one and why.
fn parse_args(raw: &Raw) -> Result<Vec<(Value, usize)>, (usize, String)> {
    const USAGE: &str = "@launch takes 1 to 3 integer arguments: @launch(threads[, min_blocks[, max_regs]])";
    if raw.args.is_empty() || raw.args.len() > 3 || (raw.args.len() == 1 && raw.args[0].0.is_empty()) {
        return Err((raw.args.get(3).map_or(raw.offset, |a| a.1), USAGE.into()));
    }
    raw.args
        .iter()
        .map(|(t, at)| match t.parse::<i64>() {
            Ok(v) => Ok((Value::Int(v), *at)),
            // All digits but too long for an i64: out of range, not "not an integer".
            Err(_) if is_decimal(t) => Ok((Value::Huge(t.clone()), *at)),
            Err(_) if t.is_empty() => Err((*at, format!("missing argument: {USAGE}"))),
            Err(_) => Err((*at, format!("`{t}` is not an integer: {USAGE}"))),
        })
        .collect()
}

fn is_decimal(t: &str) -> bool {
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

/// Why argument `i` (0: threads, 1: min_blocks, 2: max_regs) is out of its range, with the range.
fn out_of_range(i: usize, v: &Value) -> Option<String> {
    let n = v.int();
    let negative = matches!(v, Value::Huge(t) if t.starts_with('-')) || n.is_some_and(|n| n <= 0);
    match i {
        0 => {
            const RANGE: &str = "(threads: a multiple of 32 from 32 to 1024)";
            if negative || n.is_some_and(|n| n % 32 != 0) {
                Some(format!(
                    "threads = {v} is not a positive multiple of 32: the CTA would not be a whole number of warps {RANGE}"
                ))
            } else if n.is_none_or(|n| n > 1024) {
                Some(format!("threads = {v} is over 1024: no CTA can have more threads {RANGE}"))
            } else {
                None
            }
        }
        1 => {
            const RANGE: &str = "(min_blocks: 1 to 32)";
            if negative {
                Some(format!("min_blocks = {v}: it must be positive {RANGE}"))
            } else if n.is_none_or(|n| n > MAX_MIN_BLOCKS) {
                Some(format!(
                    "min_blocks = {v} is over {MAX_MIN_BLOCKS}: no GPU keeps more CTAs resident on one SM {RANGE}"
                ))
            } else {
                None
            }
        }
        _ => (!n.is_some_and(|n| (16..=255).contains(&n)))
            .then(|| format!("max_regs = {v} is outside 16..=255, the range .maxnreg accepts")),
    }
}

/// Where the specifiers of the declaration that starts after `from` begin: past whitespace,
/// `extern "C"` and `template <...>` headers. `@launch` becomes a `__launch_bounds__` inserted
/// there, ahead of every attribute the user wrote, because NVRTC keeps the *last* of several
/// `__launch_bounds__`: one the source scan cannot see (a macro) then wins, and reading the PTX
/// back reports the disagreement instead of silently compiling @launch's values.
fn declaration_start(code: &str, from: usize, k: &KernelDef) -> usize {
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
fn conflicting_bounds(code: &str, from: usize, k: &KernelDef, values: &[(Value, usize)]) -> Option<String> {
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

/// The error at offset `at`, with the annotation `text` (starting at offset `start`) and a caret
/// under the column.
fn diagnostic(
    file: &str,
    src: &str,
    scanned: &Scanned,
    at: usize,
    text: &str,
    start: usize,
    reason: &str,
) -> Diagnostic {
    let at = at.min(src.len());
    let lines = &scanned.lines;
    let line = lines.line(at);
    let line_start = lines.line_start(at);
    let col = lines.col(src, at);
    let (text, caret) = if lines.line(start) != line {
        // The bad argument is on a later line of a /* */ comment: show that line.
        (src[line_start..].lines().next().unwrap_or(""), " ".repeat((col as usize).saturating_sub(1)))
    } else {
        let ann_col = (lines.col(src, start) as usize).saturating_sub(1);
        (text, " ".repeat((col as usize).saturating_sub(1).saturating_sub(ann_col)))
    };
    Diagnostic { excerpt: vec![text.to_string(), format!("{caret}^")], ..Diagnostic::error(file, line, col, reason) }
}

/// A kernel source with the annotations applied, and what was inserted where (so that the
/// compiler's messages can be shown against the text the user wrote).
#[derive(Clone, Debug)]
pub struct Applied {
    /// The source as compiled.
    pub text: String,
    /// (offset in the original source, inserted length), in increasing offset.
    edits: Vec<(usize, usize)>,
    /// `shifts[i]`: the bytes inserted by `edits[..i]`.
    shifts: Vec<usize>,
    /// Each annotated kernel's declaration lines and its annotation.
    declarations: Vec<(std::ops::RangeInclusive<u32>, Annotation)>,
}

/// Validates a file's annotations and applies them. The one entry point of the build: see
/// [`annotations`] for the errors and [`apply_to_source`] for what is inserted.
pub fn prepare(
    file: &str,
    src: &str,
    scanned: &Scanned,
    kernels: &[KernelDef],
) -> Result<(Vec<Annotation>, Applied), Vec<Diagnostic>> {
    let attached = attach(file, src, scanned, kernels)?;
    let applied = apply(src, scanned, &attached);
    Ok((attached.into_iter().map(|a| a.annotation).collect(), applied))
}

#[cfg(test)]
/// The source with each annotated kernel's `__launch_bounds__` inserted at the start of its
/// declaration (see [`declaration_start`]), on the same line so every line number stays what the
/// user wrote, and seeds/004's `ctx` constants at the start of its body. (A file whose
/// annotations have errors, see [`annotations`], is returned as it is.)
pub fn apply_to_source(src: &str, kernels: &[KernelDef], annotations: &[Annotation], scanned: &Scanned) -> String {
    let Ok(attached) = attach("", src, scanned, kernels) else { return src.to_string() };
    let wanted: HashMap<(&str, u32), &Annotation> =
        annotations.iter().map(|a| ((a.kernel.as_str(), a.line), a)).collect();
    let attached: Vec<Attached> = attached
        .into_iter()
        .filter_map(|a| {
            wanted
                .get(&(a.annotation.kernel.as_str(), a.annotation.line))
                .map(|w| Attached { annotation: (*w).clone(), ..a })
        })
        .collect();
    apply(src, scanned, &attached).text
}

fn apply(src: &str, scanned: &Scanned, attached: &[Attached]) -> Applied {
    let mut edits: Vec<(usize, String)> = Vec::new();
    let mut declarations = Vec::new();
    for Attached { annotation: a, kernel: k, decl_at } in attached {
        let lb = match a.min_blocks {
            Some(b) => format!("__launch_bounds__({}, {b}) ", a.threads),
            None => format!("__launch_bounds__({}) ", a.threads),
        };
        edits.push((*decl_at, lb));
        // seeds/004's ctx.threads / ctx.warps / ctx.lanes as compile-time constants in the body,
        // on the line of its `{` so line numbers stay the user's.
        edits.push((
            k.body + 1,
            format!(
                " [[maybe_unused]] constexpr struct {{ int threads, warps, lanes, min_blocks, max_regs; }} ctx{{{}, {}, 32, {}, {}}};",
                a.threads,
                a.threads / 32,
                a.min_blocks.unwrap_or(0),
                a.max_regs.unwrap_or(0)
            ),
        ));
        declarations.push((scanned.lines.line(*decl_at)..=scanned.lines.line(k.body), a.clone()));
    }
    // One pass over the text (inserting into a String one edit at a time moves the rest of the
    // file each time: quadratic in a file of many kernels).
    edits.sort_by_key(|e| e.0);
    let mut text = String::with_capacity(src.len() + edits.iter().map(|e| e.1.len()).sum::<usize>());
    let mut from = 0;
    for (at, insert) in &edits {
        text.push_str(&src[from..*at]);
        text.push_str(insert);
        from = *at;
    }
    text.push_str(&src[from..]);
    let shifts = std::iter::once(0)
        .chain(edits.iter().scan(0, |sum, e| {
            *sum += e.1.len();
            Some(*sum)
        }))
        .collect();
    Applied { text, edits: edits.iter().map(|(at, s)| (*at, s.len())).collect(), shifts, declarations }
}

impl Applied {
    /// NVRTC's log for this file as the user should read it: each echoed source line shown as
    /// written (the inserted `__launch_bounds__` and `ctx` removed, the caret moved to match),
    /// and a `__maxnreg__` that the source scan could not see (a macro) next to an annotation
    /// explained at the annotation's `file:line:col`.
    pub fn restore_log(&self, file: &str, src: &str, log: &str) -> String {
        if self.edits.is_empty() || log.is_empty() {
            return log.to_string();
        }
        let lines = crate::source::LineIndex::new(src);
        let header = format!("{file}(");
        let mut out: Vec<String> = Vec::new();
        let mut explained: Vec<String> = Vec::new();
        let log_lines: Vec<&str> = log.lines().collect();
        let mut i = 0;
        while i < log_lines.len() {
            let l = log_lines[i];
            out.push(l.to_string());
            i += 1;
            let Some(n) =
                l.strip_prefix(&header).and_then(|r| r.split_once("): ")).and_then(|(n, _)| n.parse::<u32>().ok())
            else {
                continue;
            };
            if l.contains("__launch_bounds__ and __maxnreg__") {
                if let Some((_, a)) = self.declarations.iter().find(|(r, _)| r.contains(&n)) {
                    explained.push(format!(
                        "{file}:{}:{}: error: kernel `{}` has a __maxnreg__ the source does not show (from a macro?); NVRTC cannot combine it with the __launch_bounds__ that {} becomes: remove __maxnreg__ and give the cap as @launch's third argument",
                        a.line, a.col, a.kernel, a.written()
                    ));
                }
            }
            let Some(echo) = log_lines.get(i).and_then(|e| e.strip_prefix("  ")) else { continue };
            let start = lines.start_of_line(n);
            let end = src[start..].find('\n').map_or(src.len(), |e| start + e);
            // The edits are in increasing offset: this line's are found by binary search.
            let first = self.edits.partition_point(|e| e.0 < start);
            let last = self.edits.partition_point(|e| e.0 <= end);
            let edits = &self.edits[first..last];
            if edits.is_empty() || lines.line(start) != n {
                continue;
            }
            let caret = log_lines
                .get(i + 1)
                .filter(|c| c.trim() == "^")
                .map(|c| c.len() - c.trim_start().len())
                .and_then(|c| c.checked_sub(2));
            if let Some((text, caret_at)) =
                restore_echo(&src[start..end], start, edits, &self.text_of(start, end), echo, caret)
            {
                *out.last_mut().expect("pushed above") = l.to_string();
                out.push(format!("  {text}"));
                i += 1;
                if let Some(c) = caret_at {
                    out.push(format!("  {}^", " ".repeat(c)));
                    i += 1;
                }
            }
        }
        explained.extend(out);
        let mut s = explained.join("\n");
        if log.ends_with('\n') {
            s.push('\n');
        }
        s
    }

    /// The compiled text of original bytes `start..end` (one line), insertions included.
    fn text_of(&self, start: usize, end: usize) -> String {
        // Offsets in the compiled text move by every insertion before them.
        let shift = |at: usize, inclusive: bool| -> usize {
            let n = self.edits.partition_point(|e| e.0 < at || (inclusive && e.0 == at));
            self.shifts[n]
        };
        let (s, e) = (start + shift(start, false), end + shift(end, true));
        self.text.get(s..e).unwrap_or("").to_string()
    }
}

/// The part of `line` (original text at `start`) that `echo` (a window of the compiled line
/// `compiled`) shows, and where the caret at `caret` (a column of the echo) falls in it.
fn restore_echo(
    line: &str,
    start: usize,
    edits: &[(usize, usize)],
    compiled: &str,
    echo: &str,
    caret: Option<usize>,
) -> Option<(String, Option<usize>)> {
    // For each byte of the compiled line, the byte of the original line it came from.
    let mut origin: Vec<Option<usize>> = Vec::with_capacity(compiled.len());
    let mut o = 0;
    for &(at, len) in edits {
        let at = at - start;
        origin.extend((o..at).map(Some));
        origin.extend(std::iter::repeat_n(None, len));
        o = at;
    }
    origin.extend((o..line.len()).map(Some));
    let w = compiled.find(echo)?;
    let shown: Vec<usize> = origin.get(w..w + echo.len())?.iter().flatten().copied().collect();
    let (first, last) = (*shown.first()?, *shown.last()?);
    let text = line.get(first..=last.min(line.len().saturating_sub(1)))?;
    let caret = caret.map(|c| {
        let at = origin[w + c.min(echo.len())..].iter().flatten().next().copied().unwrap_or(line.len());
        line.get(first..at.max(first)).map_or(0, |t| t.chars().count())
    });
    Some((text.to_string(), caret))
}

/// Adds `.maxnreg` to the PTX entries whose annotation has `max_regs`.
pub fn apply_to_ptx(ptx: &str, annotations: &[Annotation]) -> String {
    // By kernel name: a lookup per entry stays constant-time in a module of many kernels.
    let caps: HashMap<&str, u32> =
        annotations.iter().filter_map(|a| a.max_regs.map(|r| (a.kernel.as_str(), r))).collect();
    if caps.is_empty() {
        return ptx.to_string();
    }
    let mut out = String::with_capacity(ptx.len() + 64);
    let mut pending: Option<u32> = None;
    for line in ptx.split_inclusive('\n') {
        let t = line.trim();
        if let Some(symbol) = crate::ptx::entry_name(t) {
            // Annotations name the kernel as written; a kernel that is not extern "C" has a
            // mangled symbol in the PTX.
            let name = crate::names::source_name(symbol);
            pending = caps.get(symbol).or_else(|| caps.get(name.as_str())).copied();
        }
        if t.starts_with(".maxnreg") {
            pending = None; // never two .maxnreg directives on one entry
        }
        if t.starts_with('{') {
            if let Some(r) = pending.take() {
                out.push_str(&format!(".maxnreg {r}\n"));
            }
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests;
