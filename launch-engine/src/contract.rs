//! `@launch(threads[, min_blocks[, max_regs]])` annotations (seeds/004): found in the comment
//! block right above a kernel, validated before anything is compiled, and applied as
//! `__launch_bounds__(threads, min_blocks)` in the source (so NVVM and ptxas see exactly what a
//! CUDA programmer would have written) plus `.maxnreg max_regs` in the PTX (NVRTC refuses
//! `__launch_bounds__` together with `__maxnreg__`; ptxas then caps registers at the smaller of
//! `max_regs` and what `threads × min_blocks` leaves per thread).

use std::collections::HashMap;

use crate::error::Diagnostic;
use crate::source::{KernelDef, Scanned};

/// `@launch(...)` found in comments, its arguments read and range-checked.
mod parse;
use parse::{find, out_of_range, parse_args};

/// The declaration an annotation sits on, and the bounds already written there.
mod declaration;
use declaration::{conflicting_bounds, declaration_start};

/// `__launch_bounds__` into the source, `.maxnreg` into the PTX, compiler messages back.
mod apply;
use apply::apply;
pub use apply::{apply_to_ptx, Applied};

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

#[cfg(test)]
mod tests;
