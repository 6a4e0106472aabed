//! Tests of [`super`] (contract.rs).

use super::*;
use crate::source;

fn check(src: &str) -> Result<Vec<Annotation>, Vec<Diagnostic>> {
    let sc = source::scan(src);
    let ks = source::kernels(src, &sc);
    annotations("k.cu", src, &sc, &ks)
}

fn error(src: &str) -> String {
    check(src).unwrap_err().iter().map(Diagnostic::to_string).collect::<Vec<_>>().join("\n")
}

#[test]
fn one_two_and_three_arguments_attach_to_the_next_kernel() {
    let src = "// @launch(128)\nextern \"C\" __global__ void a() {}\n\n/* notes\n   @launch(1024, 2) */\n// more notes\n\ntemplate <int N>\n__global__ void b() {}\n// @launch(256, 4, 64)\n__global__ void c() {}\n__global__ void d() {}\n";
    let a = check(src).unwrap();
    type Row<'a> = (&'a str, u32, Option<u32>, Option<u32>, u32);
    let got: Vec<Row> = a.iter().map(|a| (a.kernel.as_str(), a.threads, a.min_blocks, a.max_regs, a.line)).collect();
    assert_eq!(got, [("a", 128, None, None, 1), ("b", 1024, Some(2), None, 5), ("c", 256, Some(4), Some(64), 10)]);
}

#[test]
fn every_rejection_row_of_the_seed_with_location_and_caret() {
    let e = error("// @launch(48)\n__global__ void k() {}\n");
    assert_eq!(e, "k.cu:1:12: error: threads = 48 is not a positive multiple of 32: the CTA would not be a whole number of warps (threads: a multiple of 32 from 32 to 1024)\n    @launch(48)\n            ^");
    assert!(error("// @launch()\n__global__ void k() {}\n")
        .contains("k.cu:1:4: error: @launch takes 1 to 3 integer arguments"));
    let e = error("// @launch(32, 1, 64, 2)\n__global__ void k() {}\n");
    assert!(e.contains("k.cu:1:23: error: @launch takes 1 to 3 integer arguments"), "{e}");
    assert!(error("// @launch(2.5e2)\n__global__ void k() {}\n")
        .contains("k.cu:1:12: error: `2.5e2` is not an integer: @launch takes 1 to 3 integer arguments"));
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
        "k.cu:2:13: error: min_blocks = 0: it must be positive (min_blocks: 1 to 32)\n                0) */\n                ^"
    );
}

#[test]
fn all_errors_of_a_file_are_reported_at_once() {
    let e = check("// @launch(48)\n__global__ void a() {}\n// @launch(64, 0)\n__global__ void b() {}\n").unwrap_err();
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
        "extern \"C\" __launch_bounds__(256, 4) __global__ void k(int* p) { [[maybe_unused]] constexpr struct { int threads, warps, lanes, min_blocks, max_regs; } ctx{256, 8, 32, 4, 64}; p[0] = 1; }"
    );
    assert_eq!(out.lines().count(), src.lines().count());
    let ptx = ".visible .entry k(\n\t.param .u64 k_param_0\n)\n.maxntid 256, 1, 1\n.minnctapersm 4\n{\n\tret;\n}\n";
    let patched = apply_to_ptx(ptx, &ann);
    assert!(patched.contains(".minnctapersm 4\n.maxnreg 64\n{"), "{patched}");
}
fn applied(src: &str) -> String {
    let sc = source::scan(src);
    let ks = source::kernels(src, &sc);
    prepare("k.cu", src, &sc, &ks).unwrap().1.text
}

#[test]
fn bounds_written_anywhere_on_the_declaration_are_compared() {
    // Issue 11 item 4: before `__global__` (after `extern "C"`), `static`, a template header,
    // the `__attribute__` spelling, a second line: all were outside the compared range.
    for (src, written) in [
        ("// @launch(128)\nextern \"C\" __launch_bounds__(256) __global__ void add(float* p) {}\n", "256"),
        ("// @launch(256, 4)\n__global__ void __launch_bounds__(256, 1) add(float* p) {}\n", "256, 1"),
        ("// @launch(128)\nstatic __launch_bounds__(256) __global__ void add(float* p) {}\n", "256"),
        ("// @launch(128)\ntemplate <int N>\n__launch_bounds__(0x100) __global__ void add(float* p) {}\n", "0x100"),
        ("/* @launch(128) */ __global__ void __attribute__((launch_bounds(64))) add(float* p) {}\n", "64"),
        ("// @launch(128)\n__launch_bounds__(\n  256)\n__global__ void add(float* p) {}\n", "256"),
    ] {
        let e = error(src);
        assert!(
            e.contains(&format!("error: kernel `add` also has __launch_bounds__({written}), which disagrees")),
            "{src}\n{e}"
        );
        assert!(e.starts_with("k.cu:1:"), "{e}");
    }
    let e = error("// @launch(128)\nextern \"C\" __maxnreg__(64) __global__ void add(float* p) {}\n");
    assert!(e.starts_with("k.cu:1:4: error: kernel `add` also has __maxnreg__(64); NVRTC cannot combine"), "{e}");
    // Agreeing, in any spelling: accepted.
    assert!(check("// @launch(256, 2)\nextern \"C\" __launch_bounds__(0x100, 2u) __global__ void k() {}\n").is_ok());
    // A value the scan cannot read (a macro) is left to the PTX, read back after compiling.
    assert!(check("#define N 256\n// @launch(128)\n__global__ void __launch_bounds__(N) k() {}\n").is_ok());
}

#[test]
fn launch_bounds_go_first_so_that_a_hidden_one_wins_and_is_caught_in_the_ptx() {
    // NVRTC keeps the last of several __launch_bounds__: ours comes before every specifier.
    assert_eq!(
        applied("// @launch(128)\nextern \"C\" BOUNDS __global__ void k() {}\n").lines().nth(1).unwrap(),
        "extern \"C\" __launch_bounds__(128) BOUNDS __global__ void k() { [[maybe_unused]] constexpr struct { int threads, warps, lanes, min_blocks, max_regs; } ctx{128, 4, 32, 0, 0};}"
    );
    let t = applied("// @launch(64, 2)\ntemplate <typename T, int N = (2 > 1)>\nstatic __global__ void k(T* p) {}\n");
    assert!(
        t.contains("\ntemplate <typename T, int N = (2 > 1)>\n__launch_bounds__(64, 2) static __global__ void k"),
        "{t}"
    );
    let t = applied("// @launch(64)\n__global__ void k() {}\n");
    assert!(t.starts_with("// @launch(64)\n__launch_bounds__(64) __global__ void k() {"), "{t}");
    // The public two-step form does the same.
    let src = "// @launch(64)\nextern \"C\" __global__ void k() {}\n";
    let sc = source::scan(src);
    let ks = source::kernels(src, &sc);
    let ann = annotations("k.cu", src, &sc, &ks).unwrap();
    assert_eq!(apply_to_source(src, &ks, &ann, &sc), applied(src));
    assert_eq!((ann[0].line, ann[0].col, ann[0].written()), (1, 4, "@launch(64)".to_string()));
}

#[test]
fn out_of_range_numbers_get_their_argument_and_range() {
    // Issue 11 item 5: 4294967298 was accepted as min_blocks 2 (u32 truncation); a number too
    // long for an i64 was "not an integer".
    let e = error("// @launch(128, 4294967298)\n__global__ void k() {}\n");
    assert!(e.starts_with("k.cu:1:17: error: min_blocks = 4294967298 is over 32: no GPU keeps more CTAs resident on one SM (min_blocks: 1 to 32)"), "{e}");
    assert!(
        error("// @launch(128, 4294967296)\n__global__ void k() {}\n").contains("min_blocks = 4294967296 is over 32")
    );
    assert!(
        error("// @launch(128, 33)\n__global__ void k() {}\n").contains("k.cu:1:17: error: min_blocks = 33 is over 32")
    );
    assert!(check("// @launch(128, 32)\n__global__ void k() {}\n").is_ok());
    let e = error("// @launch(99999999999999999999)\n__global__ void k() {}\n");
    assert!(e.starts_with("k.cu:1:12: error: threads = 99999999999999999999 is over 1024: no CTA can have more threads (threads: a multiple of 32 from 32 to 1024)"), "{e}");
    let e = error("// @launch(-99999999999999999999)\n__global__ void k() {}\n");
    assert!(e.contains("k.cu:1:12: error: threads = -99999999999999999999 is not a positive multiple of 32"), "{e}");
    let e = error("// @launch(128, 1, 99999999999999999999999)\n__global__ void k() {}\n");
    assert!(e.contains("k.cu:1:20: error: max_regs = 99999999999999999999999 is outside 16..=255"), "{e}");
    let e = error("// @launch(128, 1, 4294967312)\n__global__ void k() {}\n");
    assert!(e.contains("max_regs = 4294967312 is outside 16..=255"), "{e}");
    let e = error("// @launch(4294967424)\n__global__ void k() {}\n");
    assert!(e.contains("threads = 4294967424 is over 1024"), "{e}");
    let e = error("// @launch(128, x)\n__global__ void k() {}\n");
    assert!(e.contains("k.cu:1:17: error: `x` is not an integer: @launch takes 1 to 3 integer arguments"), "{e}");
}

#[test]
fn a_block_comment_annotation_may_continue_on_starred_lines() {
    // Issue 11 item 11: the `*` margin of the next line was read as the argument.
    let a = check("/*\n * @launch(128,\n *   2)\n */\n__global__ void k() {}\n").unwrap();
    assert_eq!((a[0].threads, a[0].min_blocks, a[0].line, a[0].col), (128, Some(2), 2, 4));
    let e = error("/*\n * @launch(128,\n *   0)\n */\n__global__ void k() {}\n");
    assert_eq!(
        e,
        "k.cu:3:6: error: min_blocks = 0: it must be positive (min_blocks: 1 to 32)\n     *   0)\n         ^"
    );
    let a = check("/** @launch(\n *    256,\n *    1,\n *    64\n *  ) */\n__global__ void k() {}\n").unwrap();
    assert_eq!((a[0].threads, a[0].min_blocks, a[0].max_regs), (256, Some(1), Some(64)));
    // A `//` annotation must fit on its line, and says so.
    let e = error("// @launch(128,\n//   2)\n__global__ void k() {}\n");
    assert!(
        e.starts_with(
            "k.cu:1:4: error: `@launch(` has no `)` on its line: in a // comment, `@launch(...)` must fit on one line"
        ),
        "{e}"
    );
    let e = error("/* @launch(128, 2 */\n__global__ void k() {}\n");
    assert!(e.contains("k.cu:1:4: error: `@launch(` has no `)` before the end of its comment"), "{e}");
    let e = error("/*\n * @launch(128,\n * 2 2)\n */\n__global__ void k() {}\n");
    assert!(e.starts_with("k.cu:3:4: error: `2 2` is not an integer"), "{e}");
}

#[test]
fn compiler_messages_show_the_text_the_user_wrote() {
    let src = "// @launch(128)\nextern \"C\" CAP __global__ void k(float* p) { undefined(); }\n";
    let sc = source::scan(src);
    let ks = source::kernels(src, &sc);
    let (_, applied) = prepare("kernels/k.cu", src, &sc, &ks).unwrap();
    let compiled = applied.text.lines().nth(1).unwrap().to_string();
    let caret_at = |line: &str, what: &str| format!("  {}^", " ".repeat(line.find(what).unwrap()));
    let log = format!(
        "kernels/k.cu(2): error: The __launch_bounds__ and __maxnreg__ qualifiers cannot be applied to the same kernel\n  {compiled}\n{}\n\nkernels/k.cu(2): error: identifier \"undefined\" is undefined\n  {}\n{}\n\n2 errors detected in the compilation of \"kernels/k.cu\".\n",
        caret_at(&compiled, "k(float"),
        &compiled[compiled.find("__global__").unwrap()..],
        caret_at(&compiled[compiled.find("__global__").unwrap()..], "undefined"),
    );
    let restored = applied.restore_log("kernels/k.cu", src, &log);
    assert!(!restored.contains("__launch_bounds__(128)") && !restored.contains("maybe_unused"), "{restored}");
    let user = src.lines().nth(1).unwrap();
    assert!(
        restored.starts_with("kernels/k.cu:1:4: error: kernel `k` has a __maxnreg__ the source does not show (from a macro?); NVRTC cannot combine it with the __launch_bounds__ that @launch(128) becomes"),
        "{restored}"
    );
    assert!(restored.contains(&format!("  {user}\n{}\n", caret_at(user, "k(float"))), "{restored}");
    // The truncated window is mapped too: what is left of it, with its caret on `undefined`.
    let window = "__global__ void k(float* p) { undefined(); }";
    assert!(restored.contains(&format!("  {window}\n{}\n", caret_at(window, "undefined"))), "{restored}");
    assert!(restored.ends_with("2 errors detected in the compilation of \"kernels/k.cu\".\n"), "{restored}");
    // A log of another file, or of a file without annotations, is left as it is.
    assert_eq!(applied.restore_log("kernels/other.cu", src, "x.cu(2): error: e\n  y\n"), "x.cu(2): error: e\n  y\n");
}

/// One kernel then `n` bytes of 80-byte comment lines (issue 11 item 1: 0.25 MB took 8.6 s,
/// 5 MB over 15 minutes).
fn kernel_then_comments(n: usize) -> String {
    let mut src = String::from("// @launch(128)\nextern \"C\" __global__ void k(float* p) { p[0] = 1; }\n");
    let line = format!("// {}\n", "x".repeat(76));
    while src.len() < n {
        src.push_str(&line);
    }
    src
}

fn scan_all(src: &str) -> (usize, std::time::Duration) {
    let t = std::time::Instant::now();
    let sc = source::scan(src);
    let ks = source::kernels(src, &sc);
    let (ann, applied) = prepare("k.cu", src, &sc, &ks).unwrap();
    assert!(applied.text.len() > src.len());
    (ann.len(), t.elapsed())
}

#[test]
fn a_five_megabyte_file_scans_in_linear_time() {
    // Generous bounds for an unoptimised test build on a shared machine; the release build
    // takes a few tens of milliseconds (see the issue 11 report).
    let src = kernel_then_comments(5 << 20);
    let (n, took) = scan_all(&src);
    eprintln!("5 MB, one kernel, 80-byte comment lines: {took:?}");
    assert_eq!(n, 1);
    assert!(took.as_secs_f64() < 2.0, "{took:?}");

    // Many kernels, each annotated: the per-annotation lookups and the insertions are linear
    // too (1 MB, 15,000 kernels: each once searched the kernel list and counted lines from
    // the start of the file, and each insertion moved the rest of the text).
    let mut src = String::new();
    let mut i = 0;
    while src.len() < 1 << 20 {
        src.push_str(&format!("// @launch(256, 2, 64)\n__global__ void k{i}(float* p) {{ p[0] = 1; }}\n"));
        i += 1;
    }
    let (n, took) = scan_all(&src);
    eprintln!("1 MB, {n} annotated kernels: {took:?}");
    assert_eq!(n, i);
    assert!(took.as_secs_f64() < 5.0, "{took:?}");

    // Unclosed parameter lists: each once walked to the end of the file.
    let src = "__global__ void k(\n".repeat((5 << 20) / 19);
    let t = std::time::Instant::now();
    let sc = source::scan(&src);
    assert_eq!(source::kernels(&src, &sc), []);
    eprintln!("5 MB of unclosed kernel declarations: {:?}", t.elapsed());
    assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
}

#[test]
fn a_second_contract_on_the_annotation_line_is_an_error_and_prose_is_not() {
    // Before: the second contract on the line was ignored without a word (an outside probe).
    for (src, col) in [
        ("// @launch(128) // @launch(64)\n__global__ void k() {}\n", 20),
        ("// @launch(64) /* @launch(128) */\n__global__ void k() {}\n", 19),
        ("// @launch(64); @launch(96)\n__global__ void k() {}\n", 17),
        ("// @launch(128)(64)\n__global__ void k() {}\n", 16),
    ] {
        let e = error(src);
        assert!(
            e.starts_with(&format!("k.cu:1:{col}: error: a second launch contract on the annotation's line")),
            "{src:?}: {e}"
        );
    }
    let a = check("// @launch(256)  one tile per block\n__global__ void k() {}\n").unwrap();
    assert_eq!(a[0].threads, 256);
    let a = check("// @launch(256) (the contract)\n__global__ void k() {}\n").unwrap();
    assert_eq!(a[0].threads, 256);
}

/// Issue 19, item 3: every quantity a build input takes, at every place of the build that takes
/// it (`@launch`, `[package.metadata.launch]` and its `kernel.` tables, tune grids), refuses the
/// same out-of-range values with the one wording of `crate::quantity` (the CLI's flags are
/// enumerated in cargo-launch's cli.rs). Before, a tune grid built `threads = [100]`, which
/// `@launch(100)` refuses, and `dynamic-smem` took any `u32`.
#[test]
fn every_quantity_is_refused_alike_at_every_build_entry_point() {
    use crate::quantity::{Quantity, QUANTITIES};
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("kernels")).unwrap();
    let config = |meta: String| {
        let text = format!(
            "[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n{meta}\n"
        );
        match crate::Config::parse(&dir.path().join("Cargo.toml"), &text) {
            Ok(_) => panic!("accepted:\n{meta}"),
            Err(e) => e.to_string(),
        }
    };
    let annotation = |args: String| error(&format!("// @launch({args})\n__global__ void k() {{}}\n"));
    let mut cases = 0;
    for q in QUANTITIES {
        let bad: &[i64] = match q {
            Quantity::Threads => &[0, -32, 100, 1056, 2000],
            Quantity::BlockSize => &[0, -1, 1025, 2000],
            Quantity::MinBlocks => &[0, -1, 33, 99],
            Quantity::MaxRegs => &[0, 8, 15, 256],
            Quantity::DynamicSmem => &[-1, 232_449, 4_294_967_295],
        };
        for &v in bad {
            let rule = q.check(v).unwrap_err().to_string();
            let entries: Vec<(&str, String)> = match q {
                Quantity::Threads => vec![
                    ("@launch", annotation(format!("{v}"))),
                    ("tune grid", config(format!("[package.metadata.launch.tune.k]\nthreads = [{v}]"))),
                ],
                Quantity::BlockSize => vec![
                    ("crate threads", config(format!("threads = {v}"))),
                    ("kernel threads", config(format!("[package.metadata.launch.kernel.k]\nthreads = {v}"))),
                ],
                Quantity::MinBlocks => vec![
                    ("@launch", annotation(format!("256, {v}"))),
                    ("tune grid", config(format!("[package.metadata.launch.tune.k]\nmin_blocks = [{v}]"))),
                ],
                Quantity::MaxRegs => vec![
                    ("@launch", annotation(format!("256, 1, {v}"))),
                    ("tune grid", config(format!("[package.metadata.launch.tune.k]\nmax_regs = [{v}]"))),
                ],
                Quantity::DynamicSmem => {
                    vec![(
                        "kernel dynamic-smem",
                        config(format!("[package.metadata.launch.kernel.k]\ndynamic-smem = {v}")),
                    )]
                }
            };
            for (entry, message) in entries {
                assert!(message.contains(&rule), "{q:?} = {v} at {entry}: {message}\nexpected: {rule}");
                // Located: `k.cu:1:COL` or `Cargo.toml:LINE:COL`.
                assert!(message.contains("k.cu:1:") || message.contains("Cargo.toml:"), "{message}");
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 37);
}
