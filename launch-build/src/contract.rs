//! `@launch(threads[, min_blocks[, max_regs]])` annotations (seeds/004): found in the comment
//! block right above a kernel, validated before anything is compiled, and applied as
//! `__launch_bounds__(threads, min_blocks)` in the source (so NVVM and ptxas see exactly what a
//! CUDA programmer would have written) plus `.maxnreg max_regs` in the PTX (NVRTC refuses
//! `__launch_bounds__` together with `__maxnreg__`; ptxas then caps registers at the smaller of
//! `max_regs` and what `threads × min_blocks` leaves per thread).

use crate::source::{self, KernelDef, Scanned};

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
}

struct Raw {
    offset: usize,
    /// Byte offset just after the comment holding it.
    comment_end: usize,
    text: String,
    args: Vec<(String, usize)>,
}

/// Finds, validates and attaches every `@launch` of one file. Errors are compiler-style lines
/// (`file:line:col: error: ...`, the annotation, a caret), all of them at once.
pub fn annotations(
    file: &str,
    src: &str,
    scanned: &Scanned,
    kernels: &[KernelDef],
) -> Result<Vec<Annotation>, Vec<String>> {
    let mut errors = Vec::new();
    let mut out: Vec<Annotation> = Vec::new();
    for raw in find(scanned) {
        let err = |errors: &mut Vec<String>, at: usize, reason: String| {
            errors.push(diagnostic(file, src, at, &raw.text, raw.offset, &reason));
        };
        let values = match parse_args(&raw) {
            Ok(v) => v,
            Err(at) => {
                err(&mut errors, at, "@launch takes 1 to 3 integer arguments".into());
                continue;
            }
        };
        let (threads, tat) = values[0];
        let mut ok = true;
        if threads <= 0 || threads % 32 != 0 {
            err(&mut errors, tat, format!("threads = {threads} is not a positive multiple of 32: the CTA would not be a whole number of warps"));
            ok = false;
        } else if threads > 1024 {
            err(&mut errors, tat, format!("threads = {threads} is over 1024: no CTA can have more threads"));
            ok = false;
        }
        if let Some(&(b, at)) = values.get(1) {
            if b <= 0 {
                err(&mut errors, at, format!("min_blocks = {b}: it must be positive"));
                ok = false;
            }
        }
        if let Some(&(r, at)) = values.get(2) {
            if !(16..=255).contains(&r) {
                err(&mut errors, at, format!("max_regs = {r} is outside 16..=255, the range .maxnreg accepts"));
                ok = false;
            }
        }
        let Some(kernel) = following_kernel(&scanned.code, raw.comment_end, kernels) else {
            err(&mut errors, raw.offset, "@launch must be followed by a kernel (__global__ function) definition; only blank lines and comments may come between".into());
            continue;
        };
        if let Some(prev) = out.iter().find(|a| a.kernel == kernel.name) {
            err(
                &mut errors,
                raw.offset,
                format!("kernel `{}` already has @launch at line {}; give each kernel one", kernel.name, prev.line),
            );
            continue;
        }
        if let Some(reason) = conflicting_bounds(&scanned.code, kernel, &values) {
            err(&mut errors, raw.offset, reason);
            continue;
        }
        if ok {
            out.push(Annotation {
                kernel: kernel.name.clone(),
                threads: threads as u32,
                min_blocks: values.get(1).map(|v| v.0 as u32),
                max_regs: values.get(2).map(|v| v.0 as u32),
                line: source::line_of(src, raw.offset),
            });
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
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
            if rest[open..].starts_with('(') {
                let body_start = start + "@launch".len() + open + 1;
                let close = c.text[body_start..].find(')').map(|n| body_start + n);
                text_end = close.map_or(c.text.len(), |n| n + 1);
                let body = &c.text[body_start..close.unwrap_or(c.text.len())];
                let mut at = body_start;
                for part in body.split(',') {
                    let lead = part.len() - part.trim_start().len();
                    args.push((part.trim().to_string(), c.offset + at + lead));
                    at += part.len() + 1;
                }
                if close.is_none() {
                    args.push((String::new(), c.offset + c.text.len()));
                }
            } else {
                text_end = start + "@launch".len();
                args.push((String::new(), c.offset + text_end));
            }
            out.push(Raw {
                offset: c.offset + start,
                comment_end: c.offset + c.text.len(),
                text: c.text[start..text_end].lines().next().unwrap_or("").to_string(),
                args,
            });
            from = text_end.max(start + 1);
        }
    }
    out
}

/// The integer arguments with their offsets, or the offset of the first bad one.
fn parse_args(raw: &Raw) -> Result<Vec<(i64, usize)>, usize> {
    if raw.args.is_empty() || raw.args.len() > 3 || (raw.args.len() == 1 && raw.args[0].0.is_empty()) {
        return Err(raw.args.get(3).map_or(raw.offset, |a| a.1));
    }
    raw.args.iter().map(|(t, at)| t.parse::<i64>().map(|v| (v, *at)).map_err(|_| *at)).collect()
}

/// The kernel whose declaration follows `from` with nothing between but whitespace, comments
/// (blanked in `code`) and declaration prefixes such as `extern "C"` or `template <int N>`: any
/// statement end, block or preprocessor line in between means the annotation is attached to no
/// kernel. (`=` and parentheses may appear: `template <int N = 4>`, `__launch_bounds__(...)`.)
fn following_kernel<'k>(code: &str, from: usize, kernels: &'k [KernelDef]) -> Option<&'k KernelDef> {
    let k = kernels.iter().filter(|k| k.start >= from).min_by_key(|k| k.start)?;
    let between = &code[from..k.start];
    (!between.contains([';', '{', '}', '#'])).then_some(k)
}

/// `__launch_bounds__`/`__maxnreg__` already on the kernel that disagree with the annotation.
fn conflicting_bounds(code: &str, k: &KernelDef, values: &[(i64, usize)]) -> Option<String> {
    // Only this kernel's declaration: from `__global__` to the `{` of its body.
    let decl = &code[k.start..k.body];
    let args_of = |attr: &str| -> Option<Vec<String>> {
        let at = decl.find(attr)? + attr.len();
        let body = decl[at..].trim_start().strip_prefix('(')?;
        let end = body.find(')')?;
        Some(body[..end].split(',').map(|s| s.trim().to_string()).collect())
    };
    let want: Vec<String> = values.iter().map(|v| v.0.to_string()).collect();
    if let Some(mr) = args_of("__maxnreg__") {
        // NVRTC refuses __launch_bounds__ together with __maxnreg__, and @launch is applied as
        // __launch_bounds__: the register cap must move into the annotation.
        return Some(format!(
            "kernel `{}` also has __maxnreg__({}); NVRTC cannot combine it with the __launch_bounds__ that @launch({}) \
             becomes: remove __maxnreg__ and give the cap as @launch's third argument",
            k.name,
            mr.join(", "),
            want.join(", ")
        ));
    }
    if let Some(lb) = args_of("__launch_bounds__") {
        // Compare values, not text; a third __launch_bounds__ argument (max blocks per cluster)
        // is not part of the contract. The PTX must end up with exactly @launch's directives.
        let parsed: Vec<Option<i64>> = lb.iter().take(2).map(|a| a.parse().ok()).collect();
        let declared: Vec<Option<i64>> = values.iter().take(2).map(|v| Some(v.0)).collect();
        if parsed != declared {
            return Some(format!(
                "kernel `{}` also has __launch_bounds__({}), which disagrees with @launch({}); declare the contract once",
                k.name,
                lb.join(", "),
                want.join(", ")
            ));
        }
    }
    None
}

fn diagnostic(file: &str, src: &str, at: usize, text: &str, start: usize, reason: &str) -> String {
    let at = at.min(src.len());
    let line = source::line_of(src, at);
    let line_start = src[..at].rfind('\n').map_or(0, |n| n + 1);
    let col = src[line_start..at].chars().count() + 1;
    if source::line_of(src, start) != line {
        // The bad argument is on a later line of a /* */ comment: show that line.
        let text = src[line_start..].lines().next().unwrap_or("");
        let caret = " ".repeat(col - 1);
        return format!("{file}:{line}:{col}: error: {reason}\n    {text}\n    {caret}^");
    }
    let ann_col = src[line_start..start.min(src.len())].chars().count();
    let caret = " ".repeat(col.saturating_sub(1).saturating_sub(ann_col));
    format!("{file}:{line}:{col}: error: {reason}\n    {text}\n    {caret}^")
}

/// The source with each annotated kernel's `__launch_bounds__` inserted before its name, on the
/// same line so every line number stays what the user wrote.
pub fn apply_to_source(src: &str, kernels: &[KernelDef], annotations: &[Annotation], scanned: &Scanned) -> String {
    let mut edits: Vec<(usize, String)> = Vec::new();
    for a in annotations {
        let Some(k) = kernels.iter().find(|k| k.name == a.kernel) else { continue };
        if scanned.code[k.start..k.body].contains("__launch_bounds__") {
            continue; // the same bounds are already written (checked to agree)
        }
        let lb = match a.min_blocks {
            Some(b) => format!("__launch_bounds__({}, {b}) ", a.threads),
            None => format!("__launch_bounds__({}) ", a.threads),
        };
        let name_at = name_offset(src, k);
        edits.push((name_at, lb));
    }
    // seeds/004's ctx.threads / ctx.warps / ctx.lanes as compile-time constants in the body,
    // on the line of its `{` so line numbers stay the user's.
    for a in annotations {
        let Some(k) = kernels.iter().find(|k| k.name == a.kernel) else { continue };
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
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut s = src.to_string();
    for (at, text) in edits {
        s.insert_str(at, &text);
    }
    s
}

fn name_offset(src: &str, k: &KernelDef) -> usize {
    let line_start: usize = src.split_inclusive('\n').take(k.line as usize - 1).map(str::len).sum();
    let line = &src[line_start..];
    let col_bytes: usize = line.chars().take(k.col as usize - 1).map(char::len_utf8).sum();
    line_start + col_bytes
}

/// Adds `.maxnreg` to the PTX entries whose annotation has `max_regs`.
pub fn apply_to_ptx(ptx: &str, annotations: &[Annotation]) -> String {
    let caps: Vec<(&str, u32)> =
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
            let name = crate::assemble::source_name(symbol);
            pending = caps.iter().find(|c| c.0 == symbol || c.0 == name).map(|c| c.1);
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
mod tests {
    use super::*;

    fn check(src: &str) -> Result<Vec<Annotation>, Vec<String>> {
        let sc = source::scan(src);
        let ks = source::kernels(src, &sc);
        annotations("k.cu", src, &sc, &ks)
    }

    fn error(src: &str) -> String {
        check(src).unwrap_err().join("\n")
    }

    #[test]
    fn one_two_and_three_arguments_attach_to_the_next_kernel() {
        let src = "// @launch(128)\nextern \"C\" __global__ void a() {}\n\n/* notes\n   @launch(1024, 2) */\n// more notes\n\ntemplate <int N>\n__global__ void b() {}\n// @launch(256, 4, 64)\n__global__ void c() {}\n__global__ void d() {}\n";
        let a = check(src).unwrap();
        type Row<'a> = (&'a str, u32, Option<u32>, Option<u32>, u32);
        let got: Vec<Row> =
            a.iter().map(|a| (a.kernel.as_str(), a.threads, a.min_blocks, a.max_regs, a.line)).collect();
        assert_eq!(got, [("a", 128, None, None, 1), ("b", 1024, Some(2), None, 5), ("c", 256, Some(4), Some(64), 10)]);
    }

    #[test]
    fn every_rejection_row_of_the_seed_with_location_and_caret() {
        let e = error("// @launch(48)\n__global__ void k() {}\n");
        assert_eq!(e, "k.cu:1:12: error: threads = 48 is not a positive multiple of 32: the CTA would not be a whole number of warps\n    @launch(48)\n            ^");
        assert!(error("// @launch()\n__global__ void k() {}\n")
            .contains("k.cu:1:4: error: @launch takes 1 to 3 integer arguments"));
        let e = error("// @launch(32, 1, 64, 2)\n__global__ void k() {}\n");
        assert!(e.contains("k.cu:1:23: error: @launch takes 1 to 3 integer arguments"), "{e}");
        assert!(error("// @launch(2.5e2)\n__global__ void k() {}\n")
            .contains("k.cu:1:12: error: @launch takes 1 to 3 integer arguments"));
        assert!(error("// @launch(N)\n__global__ void k() {}\n").contains("@launch takes 1 to 3 integer arguments"));
        assert!(error("// @launch(0)\n__global__ void k() {}\n").contains("not a positive multiple of 32"));
        assert!(error("// @launch(256, 0)\n__global__ void k() {}\n")
            .contains("k.cu:1:17: error: min_blocks = 0: it must be positive"));
        assert!(error("// @launch(256, -1)\n__global__ void k() {}\n").contains("min_blocks = -1: it must be positive"));
        assert!(error("// @launch(256, 1, 8)\n__global__ void k() {}\n")
            .contains("k.cu:1:20: error: max_regs = 8 is outside 16..=255, the range .maxnreg accepts"));
        assert!(error("// @launch(256, 1, 256)\n__global__ void k() {}\n").contains("max_regs = 256"));
        assert!(error("// @launch(2048)\n__global__ void k() {}\n")
            .contains("threads = 2048 is over 1024: no CTA can have more threads"));
    }

    #[test]
    fn prose_mentioning_launch_is_not_an_annotation() {
        assert_eq!(check("// see the @launch docs\n/* uses @launch(48) */\n__global__ void k() {}\n").unwrap(), []);
    }

    #[test]
    fn annotations_must_sit_on_exactly_one_kernel() {
        let e = error("// @launch(128)\nint x = 3;\n__global__ void k() {}\n");
        assert!(e.contains("k.cu:1:4: error: @launch must be followed by a kernel"), "{e}");
        assert!(error("__global__ void k() {}\n// @launch(128)\n").contains("must be followed by a kernel"));
        let e = error("// @launch(128)\n// @launch(256)\n__global__ void k() {}\n");
        assert!(e.contains("k.cu:2:4: error: kernel `k` already has @launch at line 1"), "{e}");
    }

    #[test]
    fn disagreeing_cuda_bounds_are_an_error_agreeing_ones_are_not() {
        let e = error("// @launch(256, 2)\n__global__ void __launch_bounds__(128) k() {}\n");
        assert!(e.contains("also has __launch_bounds__(128), which disagrees with @launch(256, 2)"), "{e}");
        let e = error("// @launch(256, 2, 64)\n__global__ void __maxnreg__(32) k() {}\n");
        assert!(e.contains("also has __maxnreg__(32)"), "{e}");
        assert!(check("// @launch(256, 2)\n__global__ void __launch_bounds__(256, 2) k() {}\n").is_ok());
    }

    #[test]
    fn only_the_annotated_kernels_own_declaration_is_compared() {
        // A later kernel's bounds are not this kernel's (was: a 400-byte window).
        assert!(check("// @launch(256)\n__global__ void a(float* x) { x[0]=1; }\n__global__ void __launch_bounds__(128) b(float* x) {}\n").is_ok());
        // A multi-byte character near the declaration cannot split a slice (`é` at byte 399 after
        // `__global__` split the old 400-byte window).
        let src = format!("// @launch(256)\n__global__ void a(float* x) {{ /*{}é*/ }}\n", "x".repeat(367));
        assert!(check(&src).is_ok());
    }

    #[test]
    fn maxnreg_next_to_launch_is_refused_with_the_fix() {
        let e = error("// @launch(256, 1, 64)\nextern \"C\" __global__ void __maxnreg__(64) k() {}\n");
        assert!(e.contains("also has __maxnreg__(64); NVRTC cannot combine it"), "{e}");
        assert!(e.contains("give the cap as @launch's third argument"), "{e}");
    }

    #[test]
    fn declaration_prefixes_with_defaults_and_attributes_are_allowed() {
        let a = check("// @launch(256)\ntemplate <int N = 4>\n__global__ void t(float* x) {}\n").unwrap();
        assert_eq!(a[0].kernel, "t");
        // A three-argument __launch_bounds__ (max blocks per cluster) agrees on its first two values.
        assert!(check("// @launch(256, 2)\n__global__ void __launch_bounds__(256, 2, 1) k() {}\n").is_ok());
        let e = error("// @launch(256, 1, 64)\n__global__ void __launch_bounds__(256) k() {}\n");
        assert!(e.contains("disagrees with @launch(256, 1, 64)"), "{e}");
    }

    #[test]
    fn a_mangled_kernel_gets_its_maxnreg() {
        let src = "// @launch(256, 1, 64)\n__global__ void mangled(float* x) { x[0] = 1; }\n";
        let sc = source::scan(src);
        let ks = source::kernels(src, &sc);
        let ann = annotations("k.cu", src, &sc, &ks).unwrap();
        let ptx = ".visible .entry _Z7mangledPf(\n\t.param .u64 _Z7mangledPf_param_0\n)\n.maxntid 256, 1, 1\n.minnctapersm 1\n{\n}\n";
        assert!(apply_to_ptx(ptx, &ann).contains(".minnctapersm 1\n.maxnreg 64\n{"));
    }

    #[test]
    fn a_bad_argument_on_a_later_comment_line_is_shown_on_its_line() {
        let e = error("/* @launch(256,\n            0) */\n__global__ void k() {}\n");
        assert_eq!(
            e,
            "k.cu:2:13: error: min_blocks = 0: it must be positive\n                0) */\n                ^"
        );
    }

    #[test]
    fn all_errors_of_a_file_are_reported_at_once() {
        let e =
            check("// @launch(48)\n__global__ void a() {}\n// @launch(64, 0)\n__global__ void b() {}\n").unwrap_err();
        assert_eq!(e.len(), 2);
    }

    #[test]
    fn applying_keeps_line_numbers_and_adds_maxnreg_to_the_ptx() {
        let src = "// @launch(256, 4, 64)\nextern \"C\" __global__ void k(int* p) { p[0] = 1; }\n";
        let sc = source::scan(src);
        let ks = source::kernels(src, &sc);
        let ann = annotations("k.cu", src, &sc, &ks).unwrap();
        let out = apply_to_source(src, &ks, &ann, &sc);
        assert_eq!(
            out.lines().nth(1).unwrap(),
            "extern \"C\" __global__ void __launch_bounds__(256, 4) k(int* p) { [[maybe_unused]] constexpr struct { int threads, warps, lanes, min_blocks, max_regs; } ctx{256, 8, 32, 4, 64}; p[0] = 1; }"
        );
        assert_eq!(out.lines().count(), src.lines().count());
        let ptx = ".visible .entry k(\n\t.param .u64 k_param_0\n)\n.maxntid 256, 1, 1\n.minnctapersm 4\n{\n\tret;\n}\n";
        let patched = apply_to_ptx(ptx, &ann);
        assert!(patched.contains(".minnctapersm 4\n.maxnreg 64\n{"), "{patched}");
    }
}
