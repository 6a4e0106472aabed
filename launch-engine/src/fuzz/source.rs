//! The source scanner (`crate::source::{scan, kernels}`) and the `@launch` reader
//! (`crate::contract::annotations`): the kernels of the template and the fixtures mutated,
//! kernel files built from pieces with known kernel positions and annotations, random bytes, and
//! now and then a 1 MB file (a generated or amalgamated kernel file) that a quadratic scan cannot
//! get through within the per-input limit.

use fuzz_harness::{ensure, mutate, random_bytes, run, text, Input, Lines, Rng};

use super::PACKAGE;
use crate::contract::{self, Annotation};
use crate::source::{self, KernelDef, Scanned};

const EXTRA: &[&[u8]] = &[
    b"__global__",
    b"__global__ void k(int n) {",
    b"extern \"C\" ",
    b"__launch_bounds__(256, 4) ",
    b"__maxnreg__(32) ",
    b"// @launch(128)\n",
    b"@launch(",
    b"@launch(256, 2, 64)",
    b"/* @launch(1024, 2) */",
    b" * @launch(128,\n *   4)\n",
    b"template <int N>\n",
    b"\\\n",
];

/// A kernel file under construction that knows the line and column of what it appends.
#[derive(Default)]
struct Builder {
    s: String,
    line: u32,
    col: u32,
}

impl Builder {
    fn new() -> Builder {
        Builder { s: String::new(), line: 1, col: 0 }
    }

    fn push(&mut self, t: &str) {
        for ch in t.chars() {
            if ch == '\n' {
                self.line += 1;
                self.col = 0;
            } else {
                self.col += 1;
            }
        }
        self.s.push_str(t);
    }

    /// 1-based (line, column) of the next character.
    fn here(&self) -> (u32, u32) {
        (self.line, self.col + 1)
    }
}

const NOISE: &[&str] = &[
    "__global__ void fake() {}",
    "see the @launch docs",
    "é€ \u{1F600}",
    "{ ; }",
    "#include \"x.h\"",
    "'",
    "__launch_bounds__(64)",
    "x = a / b;",
];

/// Code between kernels: comments, literals and declarations that hold no kernel definition.
fn filler(rng: &mut Rng, b: &mut Builder) {
    for _ in 0..rng.below(4) {
        let noise = rng.pick(NOISE);
        match rng.below(9) {
            0 => b.push(&format!("// {noise} /* \"\n")),
            1 => b.push(&format!("/* {noise}\n   // \" ' {noise} */\n")),
            2 => b.push(&format!(
                "const char* s{} = \"{} \\\" // /* {}\";\n",
                rng.below(99),
                noise.replace('"', "\\\""),
                "é"
            )),
            3 => b.push(&format!("char c{} = '{}';\n", rng.below(99), rng.pick(&["\\'", "\"", "/", "a", "\\\\", "{"]))),
            4 => b.push(&format!("__global__ void decl_{}(int);\n", rng.below(99))),
            5 => b.push("__device__ int twice(int x) { return x * 2; }\n"),
            6 => b.push("#include \"poly.cuh\"\n#define M 4\n"),
            7 => b.push("\n\n"),
            _ => b.push("int a = 1 / 2; /**/ int b = 3; /***/\n"),
        }
    }
}

/// One kernel definition; returns its (name, line, col). `attrs` may put CUDA bounds on it.
fn kernel(rng: &mut Rng, b: &mut Builder, name: &str, attrs: bool) -> (String, u32, u32) {
    let style = rng.below(if attrs { 9 } else { 6 });
    match style {
        0 => b.push("extern \"C\" __global__ void "),
        1 => b.push("__global__ void "),
        2 => b.push("template <int N = 4>\n__global__ void "),
        3 => b.push("/* é€ */ extern \"C\" __global__ void "),
        4 => b.push("__global__\nvoid\n"),
        5 => b.push("__global__ void __attribute__((noinline)) "),
        6 => b.push("extern \"C\" __global__ void __launch_bounds__(256, 4)\n"),
        7 => b.push("__global__ void __maxnreg__(32) "),
        _ => b.push("__global__ void __launch_bounds__(128)\n"),
    }
    let (line, col) = b.here();
    b.push(name);
    b.push(if rng.one_in(3) { "\n(\n  float* p, int n\n)\n{\n" } else { "(float* p, int n) {\n" });
    b.push(&format!("    p[0] = 1; // }} {}\n    const char* t = \"}}\";\n}}\n", rng.pick(NOISE)));
    (name.to_string(), line, col)
}

type Found = Vec<(String, u32, u32)>;

fn found(ks: &[KernelDef]) -> Found {
    ks.iter().map(|k| (k.name.clone(), k.line, k.col)).collect()
}

/// A file with 1 MB of the shapes generated and amalgamated kernel files have: one kernel and
/// then comment lines, or a kernel every kilobyte. Annotated when `annotate`.
fn probe(rng: &mut Rng, annotate: bool) -> (String, Found) {
    let mut b = Builder::new();
    let mut ks = Vec::new();
    let dense = rng.one_in(2);
    let comment = format!("// {}\n", "x".repeat(77));
    let mut i = 0;
    while b.s.len() < 1 << 20 {
        if i == 0 || dense {
            if annotate {
                b.push("// @launch(128)\n");
            }
            b.push("extern \"C\" __global__ void ");
            let (line, col) = b.here();
            let name = format!("k{i}");
            b.push(&name);
            b.push("(float* p) { p[0] = 1; }\n");
            ks.push((name, line, col));
        }
        i += 1;
        for _ in 0..if dense { 12 } else { 1000 } {
            b.push(&comment);
        }
    }
    (b.s, ks)
}

/// Properties of any scan: same length and newlines, comments blanked and where the text says,
/// nothing but comment and literal contents blanked.
fn check_scan(src: &str, lines: &Lines, sc: &Scanned) -> Result<(), String> {
    let (s, c) = (src.as_bytes(), sc.code.as_bytes());
    ensure(s.len() == c.len(), || format!("code is {} bytes, the source {}", c.len(), s.len()))?;
    for i in 0..s.len() {
        if (s[i] == b'\n') != (c[i] == b'\n') || (c[i] != s[i] && c[i] != b' ') {
            return Err(format!(
                "byte {i}: source {:?}, code {:?}: only comment and literal contents may be blanked, newlines kept",
                s[i] as char, c[i] as char
            ));
        }
    }
    ensure(!sc.code.contains("//") && !sc.code.contains("/*"), || "a comment was left in the code".into())?;
    let mut end = 0;
    for cm in &sc.comments {
        ensure(cm.offset >= end, || format!("comment at byte {} overlaps the one before", cm.offset))?;
        ensure(src.get(cm.offset..).is_some_and(|r| r.starts_with(&cm.text)), || {
            format!("comment {:?} is not at byte {} of the source", cm.text, cm.offset)
        })?;
        ensure(cm.text.starts_with("//") || cm.text.starts_with("/*"), || format!("{:?} is not a comment", cm.text))?;
        ensure(cm.line as usize == lines.line_of(cm.offset), || {
            format!("comment at byte {} says line {}, it is on line {}", cm.offset, cm.line, lines.line_of(cm.offset))
        })?;
        end = cm.offset + cm.text.len();
        ensure(c[cm.offset..end].iter().all(|&b| b == b' ' || b == b'\n'), || {
            format!("comment {:?} not blanked", cm.text)
        })?;
    }
    Ok(())
}

/// Properties of found kernels: the name really is at the line and column given, in code (not a
/// comment or literal), between `__global__` and the body's `{`.
fn check_kernels(src: &str, lines: &Lines, sc: &Scanned, ks: &[KernelDef]) -> Result<(), String> {
    let mut last = None;
    for k in ks {
        ensure(last < Some(k.start), || format!("kernel `{}` out of order", k.name))?;
        last = Some(k.start);
        ensure(!k.name.is_empty() && k.name.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric()), || {
            format!("`{}` is not an identifier", k.name)
        })?;
        let at = lines.offset_of(k.line as usize, k.col as usize).ok_or_else(|| {
            format!("kernel `{}` at {}:{}: the text has no such line and column", k.name, k.line, k.col)
        })?;
        let word_end = at + k.name.len();
        let ident = |i: usize| src.as_bytes().get(i).is_some_and(|&b| b == b'_' || b.is_ascii_alphanumeric());
        ensure(sc.code[at..].starts_with(&k.name) && !ident(word_end) && (at == 0 || !ident(at - 1)), || {
            format!(
                "kernel `{}` at {}:{}, but the code there is {:?}",
                k.name,
                k.line,
                k.col,
                &src[at..(at + 40).min(src.len())]
            )
        })?;
        ensure(sc.code[k.start..].starts_with("__global__") && k.start < at && at < k.body, || {
            format!("kernel `{}`: __global__ at {}, name at {at}, body at {}", k.name, k.start, k.body)
        })?;
        ensure(sc.code.as_bytes().get(k.body) == Some(&b'{'), || format!("kernel `{}`: no `{{` at its body", k.name))?;
    }
    Ok(())
}

#[derive(Debug)]
enum Scan {
    Any,
    Kernels(Found),
}

#[test]
fn scan() {
    let corpus = super::corpus(&["template/kernels", "fixtures"], &[".cu", ".cuh"]);
    run(
        PACKAGE,
        "scan",
        move |rng| match rng.below(64) {
            0 => {
                let (s, ks) = probe(rng, false);
                Input::new(s, Scan::Kernels(ks))
            }
            1..=24 => {
                let base = rng.pick_ref(&corpus).clone();
                Input::new(text(&mutate(rng, base.as_bytes(), EXTRA)), Scan::Any)
            }
            25..=56 => {
                let mut b = Builder::new();
                let mut ks = Vec::new();
                for i in 0..rng.below(6) {
                    filler(rng, &mut b);
                    let name = format!("k{i}_{}", rng.ident());
                    ks.push(kernel(rng, &mut b, &name, true));
                }
                filler(rng, &mut b);
                if rng.one_in(4) {
                    // A file cut anywhere: whatever is found must still be where it says.
                    let at = rng.below(b.s.len() + 1);
                    let cut = b.s.char_indices().map(|(i, _)| i).chain([b.s.len()]).find(|&i| i >= at).unwrap_or(0);
                    b.s.truncate(cut);
                    return Input::new(b.s, Scan::Any);
                }
                Input::new(b.s, Scan::Kernels(ks))
            }
            _ => Input::new(text(&random_bytes(rng)), Scan::Any),
        },
        |input| {
            let src = input.str();
            let lines = Lines::new(src);
            let sc = source::scan(src);
            check_scan(src, &lines, &sc)?;
            let ks = source::kernels(src, &sc);
            check_kernels(src, &lines, &sc, &ks)?;
            if let Scan::Kernels(want) = &input.expect {
                let got = found(&ks);
                ensure(&got == want, || format!("found {got:?}"))?;
            }
            Ok(())
        },
    );
}

/// One accepted annotation: kernel, threads, min_blocks, max_regs, line.
type Row = (String, u32, Option<u32>, Option<u32>, u32);

/// What the `@launch` reader must do with a generated file.
#[derive(Debug)]
enum Launch {
    /// Only general properties (mutated or random input).
    Any,
    /// Exactly these annotations: kernel, threads, min_blocks, max_regs, line.
    Exactly(Vec<Row>),
    /// An error at this line and column for this argument text.
    BadArgument { line: u32, col: u32, arg: String },
    /// Exactly these numbers (an annotation spread over lines of a block comment), or an error
    /// saying that `@launch(...)` must fit on one line.
    OneLineOr(Vec<Row>),
    /// An error naming the CUDA attribute that disagrees with the annotation.
    Disagrees(&'static str),
}

const BAD_THREADS: &[&str] =
    &["0", "-32", "33", "1025", "2048", "4294967296", "4294967328", "99999999999999999999", "N", "2.5e2", "0x100"];
const BAD_MIN_BLOCKS: &[&str] = &["0", "33", "65535", "-1", "4294967296", "4294967298", "99999999999999999999", "x"];
const BAD_MAX_REGS: &[&str] = &["8", "256", "4294967312", "99999999999999999999", "-16"];

/// Valid numbers, at the edges now and then.
fn valid_values(rng: &mut Rng) -> Vec<u32> {
    let n = rng.range(1, 3) as usize;
    let threads = if rng.one_in(4) { rng.pick(&[32, 1024]) } else { 32 * rng.range(1, 32) as u32 };
    let mut v = vec![threads];
    if n >= 2 {
        v.push(if rng.one_in(4) { rng.pick(&[1, crate::quantity::MAX_MIN_BLOCKS]) } else { rng.range(1, 8) as u32 });
    }
    if n >= 3 {
        v.push(if rng.one_in(4) { rng.pick(&[16, 255]) } else { rng.range(16, 255) as u32 });
    }
    v
}

/// Appends an annotation with `args` in one of the comment forms; returns the (line, col) of
/// `@launch` and of each argument.
fn annotation(rng: &mut Rng, b: &mut Builder, args: &[String]) -> ((u32, u32), Vec<(u32, u32)>) {
    let (open, close) = match rng.below(5) {
        0 => ("// ", "\n"),
        1 => ("/* ", " */\n"),
        2 => ("/// ", "\n"),
        3 => ("/**\n * Notes.\n * ", "\n */\n"),
        _ => ("// notes\n//   ", " (the contract)\n"),
    };
    b.push(open);
    let at = b.here();
    b.push(if rng.one_in(6) { "@launch (" } else { "@launch(" });
    let mut cols = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            b.push(if rng.one_in(2) { ", " } else { "," });
        }
        if rng.one_in(5) {
            b.push(" ");
        }
        cols.push(b.here());
        b.push(a);
    }
    b.push(")");
    b.push(close);
    if rng.one_in(3) {
        b.push(rng.pick(&["// more notes\n", "\n", "/* x */\n"]));
    }
    (at, cols)
}

/// General properties of the reader on any file: accepted annotations are valid, sit on a real
/// kernel, and their numbers are the ones written; errors carry a location in the file.
fn check_annotations(
    src: &str,
    lines: &Lines,
    ks: &[KernelDef],
    result: &Result<Vec<Annotation>, Vec<String>>,
) -> Result<(), String> {
    match result {
        Ok(anns) => {
            for a in anns {
                ensure(ks.iter().any(|k| k.name == a.kernel), || {
                    format!("@launch on `{}`, which is no kernel", a.kernel)
                })?;
                ensure(a.threads % 32 == 0 && (32..=1024).contains(&a.threads), || {
                    format!("threads {} accepted", a.threads)
                })?;
                ensure(a.min_blocks.is_none_or(|b| b >= 1), || format!("min_blocks {:?} accepted", a.min_blocks))?;
                ensure(a.max_regs.is_none_or(|r| (16..=255).contains(&r)), || {
                    format!("max_regs {:?} accepted", a.max_regs)
                })?;
                // The numbers are the ones written after the `@launch(` the annotation is at (a line
                // may hold another `@launch(` outside a comment, which is no annotation).
                let at = lines.offset_of(a.line as usize, a.col as usize).unwrap_or(0);
                let after = src.get(at..).unwrap_or("");
                ensure(after.starts_with("@launch"), || {
                    format!(
                        "@launch at {}:{} points at {:?}",
                        a.line,
                        a.col,
                        after.chars().take(20).collect::<String>()
                    )
                })?;
                let args = &after[after.find('(').map_or(0, |i| i + 1)..after.find(')').unwrap_or(after.len())];
                let written: Vec<Option<u128>> = args
                    .split(',')
                    .map(|s| s.trim_matches(|c: char| c.is_whitespace() || c == '*' || c == '/').parse().ok())
                    .collect();
                let got: Vec<Option<u128>> = [Some(a.threads), a.min_blocks, a.max_regs]
                    .iter()
                    .take(written.len())
                    .map(|v| v.map(u128::from))
                    .collect();
                ensure(written == got, || {
                    format!(
                        "@launch at line {} reads as {:?}, the text says {args:?}",
                        a.line,
                        (a.threads, a.min_blocks, a.max_regs)
                    )
                })?;
            }
        }
        Err(errors) => {
            ensure(!errors.is_empty(), || "an empty error list".into())?;
            for e in errors {
                let loc = e.strip_prefix("k.cu:").and_then(|r| {
                    let mut p = r.splitn(3, ':');
                    Some((p.next()?.parse::<usize>().ok()?, p.next()?.parse::<usize>().ok()?))
                });
                let (l, c) = loc.ok_or_else(|| format!("error without `k.cu:LINE:COL`: {e:?}"))?;
                ensure(lines.offset_of(l, c).is_some(), || format!("error at {l}:{c}, outside the file: {e:?}"))?;
            }
        }
    }
    Ok(())
}

#[test]
fn launch() {
    let corpus = super::corpus(&["fixtures/crates/contracts", "template/kernels"], &[".cu"]);
    run(PACKAGE, "launch", move |rng| launch_input(rng, &corpus), check_launch_input);
}

/// One input of the `launch` target: a corpus file mutated, random bytes, or a kernel file built
/// from pieces, with what the `@launch` reader must make of it.
fn launch_input(rng: &mut Rng, corpus: &[String]) -> Input<Launch> {
    let mut b = Builder::new();
    let mut want = Vec::new();
    let mode = rng.below(16);
    if mode == 0 && rng.one_in(4) {
        let (s, ks) = probe(rng, true);
        let want = ks.into_iter().map(|(k, line, _)| (k, 128, None, None, line - 1)).collect();
        return Input::new(s, Launch::Exactly(want));
    }
    if mode <= 3 {
        let base = rng.pick_ref(corpus).clone();
        return Input::new(text(&mutate(rng, base.as_bytes(), EXTRA)), Launch::Any);
    }
    if mode == 4 {
        return Input::new(text(&random_bytes(rng)), Launch::Any);
    }
    let kernels = rng.range(1, 4) as usize;
    let special = rng.below(kernels);
    let mut expect = None;
    for i in 0..kernels {
        filler(rng, &mut b);
        let name = format!("k{i}_{}", rng.ident());
        let values = valid_values(rng);
        let mut args: Vec<String> = values.iter().map(u32::to_string).collect();
        let row = |line| (name.clone(), values[0], values.get(1).copied(), values.get(2).copied(), line);
        if i == special && mode <= 9 {
            // One argument out of range or not an integer.
            let which = rng.below(args.len());
            args[which] = rng.pick([BAD_THREADS, BAD_MIN_BLOCKS, BAD_MAX_REGS][which]).to_string();
            let (_, cols) = annotation(rng, &mut b, &args);
            let (line, col) = cols[which];
            expect = Some(Launch::BadArgument { line, col, arg: args[which].clone() });
        } else if i == special && mode <= 11 && args.len() >= 2 {
            // The same numbers spread over the lines of a block comment.
            b.push("/*\n * ");
            let (line, _) = b.here();
            b.push(&format!("@launch({},\n *   {})\n */\n", args[0], args[1..].join(",\n *   ")));
            want.push(row(line));
            expect = Some(Launch::OneLineOr(Vec::new()));
        } else if i == special && mode <= 14 {
            // CUDA's own attribute, written in any of its places, disagreeing.
            let t = if values[0] == 1024 { 512 } else { values[0] + 32 };
            let (attr, text) = if rng.one_in(3) {
                ("__maxnreg__", format!("__maxnreg__({})", rng.range(16, 255)))
            } else {
                ("__launch_bounds__", format!("__launch_bounds__({t})"))
            };
            annotation(rng, &mut b, &args);
            match rng.below(3) {
                0 => b.push(&format!("__global__ void {text} ")),
                1 => b.push(&format!("{text} __global__ void ")),
                _ => b.push(&format!("extern \"C\" {text} __global__ void ")),
            }
            b.push(&name);
            b.push("(float* p) { p[0] = 1; }\n");
            expect = Some(Launch::Disagrees(attr));
            continue;
        } else if !rng.one_in(4) {
            let ((line, _), _) = annotation(rng, &mut b, &args);
            want.push(row(line));
        }
        kernel(rng, &mut b, &name, false);
    }
    filler(rng, &mut b);
    let expect = match expect {
        Some(Launch::OneLineOr(_)) => Launch::OneLineOr(want),
        Some(e) => e,
        None => Launch::Exactly(want),
    };
    Input::new(b.s, expect)
}

/// The `@launch` reader on one input of the `launch` target: its errors located, the contracts
/// applied without moving a line, and what it read as the input expects.
fn check_launch_input(input: &Input<Launch>) -> Result<(), String> {
    let src = input.str();
    let lines = Lines::new(src);
    let sc = source::scan(src);
    let ks = source::kernels(src, &sc);
    // The errors as the build prints them.
    let result =
        contract::annotations("k.cu", src, &sc, &ks).map_err(|e| e.iter().map(ToString::to_string).collect::<Vec<_>>());
    check_annotations(src, &lines, &ks, &result)?;
    if let Ok(anns) = &result {
        // Applying the contracts keeps every line where the user wrote it.
        let applied = contract::apply_to_source(src, &ks, anns, &sc);
        let again = source::kernels(&applied, &source::scan(&applied));
        ensure(applied.matches('\n').count() == src.matches('\n').count(), || "applying moved lines".into())?;
        ensure(again.iter().map(|k| (&k.name, k.line)).eq(ks.iter().map(|k| (&k.name, k.line))), || {
            format!("after applying, the kernels are {:?}", found(&again))
        })?;
    }
    let rows = |anns: &[Annotation]| -> Vec<Row> {
        anns.iter().map(|a| (a.kernel.clone(), a.threads, a.min_blocks, a.max_regs, a.line)).collect()
    };
    match (&input.expect, &result) {
        (Launch::Any, _) => Ok(()),
        (Launch::Exactly(want), Ok(anns)) => ensure(&rows(anns) == want, || format!("read {:?}", rows(anns))),
        (Launch::Exactly(_), Err(e)) => Err(format!("valid annotations refused: {e:?}")),
        (Launch::BadArgument { line, col, arg }, Err(errors)) => {
            let at = format!("k.cu:{line}:{col}: error: ");
            let e =
                errors.iter().find(|e| e.starts_with(&at)).ok_or_else(|| format!("no error at {at}: {errors:?}"))?;
            let integer = arg.trim_start_matches('-').bytes().all(|b| b.is_ascii_digit());
            ensure(!(integer && e.contains("takes 1 to 3 integer arguments")), || {
                format!("`{arg}` is an integer out of range, but the error says {e:?}")
            })
        }
        (Launch::BadArgument { arg, .. }, Ok(anns)) => Err(format!("`{arg}` accepted, as {:?}", rows(anns))),
        (Launch::OneLineOr(want), Ok(anns)) => ensure(&rows(anns) == want, || format!("read {:?}", rows(anns))),
        (Launch::OneLineOr(_), Err(errors)) => ensure(errors.iter().any(|e| e.contains("one line")), || {
            format!("an annotation over several lines is refused without saying it must fit on one line: {errors:?}")
        }),
        (Launch::Disagrees(attr), Err(errors)) => {
            ensure(errors.iter().any(|e| e.contains(attr)), || format!("the error does not name {attr}: {errors:?}"))
        }
        (Launch::Disagrees(attr), Ok(anns)) => {
            Err(format!("{attr} disagreeing with @launch accepted: {:?}", rows(anns)))
        }
    }
}
