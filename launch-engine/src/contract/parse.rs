//! Finding `@launch(...)` in comments and reading its arguments: their text, their values and
//! whether each is in its range.

use crate::quantity::Quantity;

use crate::source::Scanned;

/// One `@launch` as found in a comment, before its arguments are checked.
pub(super) struct Raw {
    pub(super) offset: usize,
    /// Byte offset just after the comment holding it.
    pub(super) comment_end: usize,
    /// The annotation's first line, from `@launch` on.
    pub(super) text: String,
    /// Each argument's text (block-comment continuations removed) and offset.
    pub(super) args: Vec<(String, usize)>,
    /// `Some(reason)` when the argument list is not closed.
    pub(super) unclosed: Option<&'static str>,
    /// Offset of a second annotation, or of a second argument list, on the same line after this
    /// one's `)`: `// @launch(128) // @launch(64)`, `// @launch(128)(64)`.
    pub(super) second: Option<usize>,
}

/// Every `@launch(...)` inside a comment.
pub(super) fn find(scanned: &Scanned) -> Vec<Raw> {
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
pub(super) enum Value {
    Int(i64),
    /// The digits as written (outside every valid range).
    Huge(String),
}

impl Value {
    pub(super) fn int(&self) -> Option<i64> {
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
pub(super) fn parse_args(raw: &Raw) -> Result<Vec<(Value, usize)>, (usize, String)> {
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

/// Why argument `i` (0: threads, 1: min_blocks, 2: max_regs) is out of its range, with the range:
/// the rule of `crate::quantity`, which every other place that takes the quantity applies too.
pub(super) fn out_of_range(i: usize, v: &Value) -> Option<String> {
    let q = [Quantity::Threads, Quantity::MinBlocks, Quantity::MaxRegs][i.min(2)];
    match v {
        Value::Int(n) => q.check(*n).err(),
        Value::Huge(t) => q.parse(t).err(),
    }
    .map(|e| e.to_string())
}
