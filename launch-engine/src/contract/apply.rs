//! Applying annotations: `__launch_bounds__` and `ctx` inserted in the source, `.maxnreg` in the
//! PTX, and the compiler's messages shown against the text the user wrote.

use std::collections::HashMap;

use super::{Annotation, Attached};
use crate::source::Scanned;

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

pub(super) fn apply(src: &str, scanned: &Scanned, attached: &[Attached]) -> Applied {
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
