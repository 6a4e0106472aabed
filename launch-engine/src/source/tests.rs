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
    let deps = dependencies(&d.path().join("k.cu"), std::slice::from_ref(&inc), d.path()).unwrap();
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
fn lines_and_columns_come_from_the_index() {
    let src = "ab\né\n\nxyz";
    let ix = LineIndex::new(src);
    let at = |o: usize| (ix.line(o), ix.col(src, o));
    assert_eq!(
        [at(0), at(2), at(3), at(5), at(6), at(7), at(9), at(99)],
        [(1, 1), (1, 3), (2, 1), (2, 2), (3, 1), (4, 1), (4, 3), (4, 4)]
    );
    assert_eq!(ix.col(src, 4), 1, "inside a multi-byte character: its column");
    assert_eq!((ix.start_of_line(2), ix.start_of_line(4), ix.start_of_line(9)), (3, 7, 7));
    for o in 0..src.len() {
        assert_eq!(ix.line(o), line_of(src, o));
    }
}

#[test]
fn definitions_inside_macros_are_told_apart() {
    let src = "#define K(NAME) \\\n  extern \"C\" __global__ void NAME(float* p) { \\\n  }\n__global__ void real(float* p) {}\n";
    let ks = kernels(src, &scan(src));
    let names: Vec<(&str, bool)> = ks.iter().map(|k| (k.name.as_str(), in_directive(src, k.start))).collect();
    assert_eq!(names, [("NAME", true), ("real", false)]);
}

#[test]
fn nul_bytes_are_located() {
    // Before: NVRTC's C-string conversion failed with no line ("the source contains a NUL byte").
    let err = decode("kernels/a.cu", b"// a\n__global__ void k() {}\nx\0y\n".to_vec()).unwrap_err().to_string();
    assert!(err.starts_with("kernels/a.cu:3:2: error: a NUL byte (at offset 29)"), "{err}");
}

#[test]
fn non_utf8_sources_are_located() {
    let e = decode("kernels/k.cu", b"int a;\n// caf\xe9\n".to_vec()).unwrap_err().to_string();
    assert_eq!(
        e,
        "kernels/k.cu:2:7: error: not valid UTF-8 (byte 0xe9 at offset 13): kernel sources must be UTF-8 text"
    );
    let e = decode("k.cu", b"\xff".to_vec()).unwrap_err().to_string();
    assert!(e.starts_with("k.cu:1:1: error: not valid UTF-8 (byte 0xff at offset 0)"), "{e}");
    assert_eq!(decode("k.cu", "é\n".into()).unwrap(), "é\n");
}

#[test]
fn a_global_is_found_once_and_unbalanced_parentheses_stop_nothing() {
    let src = "__global__ __global__ void k() {}\n__global__ void open(\n__global__ void b(int x) {}\n";
    let sc = scan(src);
    let names: Vec<(String, u32)> = kernels(src, &sc).into_iter().map(|k| (k.name, k.line)).collect();
    assert_eq!(names, [("k".to_string(), 1), ("b".to_string(), 3)]);
}

fn host(src: &str) -> Option<(String, u32, u32)> {
    host_code(src, &scan(src)).map(|h| (h.what, h.line, h.col))
}

/// Host code is found at its line and column; the same words in comments, strings, member
/// calls and declarations are not host code.
#[test]
fn host_code_is_located_and_comments_do_not_count() {
    let launch = "__global__ void k(int* p) {}\n// k<<<1, 1>>>(p);\nvoid run(int* p) {\n    k<<<1, 32>>>(p);\n}\n";
    assert_eq!(host(launch), Some(("kernel launch syntax `<<<...>>>`".into(), 4, 6)));
    let main = "/* int main() { } */\nconst char* s = \"int main() {}\";\nint main(int argc, char** argv)\n{\n  return 0;\n}\n";
    assert_eq!(host(main), Some(("a `main` function".into(), 3, 5)));
    let api = "#include <cuda_runtime.h>\nvoid f(float** d) {\n  // cudaMalloc(d, 4);\n  cudaMalloc(d, 4 * sizeof(float));\n}\n";
    assert_eq!(host(api), Some(("a call to the host API function `cudaMalloc`".into(), 4, 3)));
    let stdio = "#include <stdio.h>\nextern \"C\" void run() {\n  fprintf(stderr, \"no\\n\");\n}\n";
    assert_eq!(host(stdio), Some(("a call to the host C library function `fprintf`".into(), 3, 3)));
    let sync = "void f() { cudaDeviceSynchronize (); }";
    assert_eq!(host(sync), Some(("a call to the host API function `cudaDeviceSynchronize`".into(), 1, 12)));
    for device_only in [
        "__global__ void k(int* p) { p[0] = 1 << 3; }",
        "// cudaMemcpy(a, b, n, kind);\n__global__ void k() {}",
        "__device__ int main_value(int x) { return x; }",
        "int main(int, char**);",
        "__device__ void f(S s) { s.main(); s->cudaMalloc(0); ns::main(); }",
        "cudaStream_t stream; cudaMemcpyKind kind;",
        "template <typename T> using V = A<B<C<T>>>;",
        "const char* s = \"k<<<1,1>>>()\";",
        "__global__ void k() { printf(\"%d\\n\", 1); }",
        "__device__ int fprintf_count(int x) { return x; }",
    ] {
        assert_eq!(host(device_only), None, "{device_only}");
    }
}

/// One walk per stretch of text, however many unclosed `main(` there are.
#[test]
fn host_code_detection_is_linear() {
    let src = "main(".repeat(200_000);
    let started = std::time::Instant::now();
    assert_eq!(host(&src), None);
    let line = "__device__ float f(float x) { return x * 2.0f + g(x, y[3]); }\n".repeat(20_000);
    assert_eq!(host(&line), None);
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
}

/// The example from the review: a `__host__ __device__` helper whose host branch calls
/// `fprintf` under `#ifndef __CUDA_ARCH__` is device code for NVRTC.
#[test]
fn host_calls_in_branches_nvrtc_never_compiles_do_not_count() {
    let report = "__global__ void k(int* p) { p[0] = 1; }\n__host__ __device__ void report(int x) {\n#ifndef __CUDA_ARCH__\n  fprintf(stderr, \"%d\\n\", x);\n#else\n  printf(\"%d\\n\", x);\n#endif\n}\n";
    assert_eq!(host(report), None);
    // Each form NVRTC never compiles, and each form it always does (the `#else` branch of
    // a dead one), around a host call.
    let dead = [
        "#ifndef __CUDA_ARCH__",
        "#if !defined(__CUDA_ARCH__)",
        "#if ! defined ( __CUDA_ARCH__ )",
        "#if !defined __CUDA_ARCH__",
        "#if 0",
        "#ifndef __CUDACC_RTC__",
        "#if !defined(__CUDACC_RTC__)",
        "#ifndef __CUDACC__",
        "  #  ifndef __CUDA_ARCH__ // host pass",
        "#if/**/0",
    ];
    for open in dead {
        let src = format!("void f() {{\n{open}\n  fopen(\"a\", \"r\");\n#endif\n}}\n");
        assert_eq!(host(&src), None, "{open}");
        let live = format!("void f() {{\n{open}\n#else\n  fopen(\"a\", \"r\");\n#endif\n}}\n");
        assert_eq!(host(&live), Some(("a call to the host C library function `fopen`".into(), 4, 3)), "{open}");
    }
    let taken = [
        "#ifdef __CUDA_ARCH__",
        "#if defined(__CUDA_ARCH__)",
        "#if defined __CUDA_ARCH__",
        "#ifdef __CUDACC_RTC__",
        "#if defined(__CUDACC__)",
    ];
    for open in taken {
        let src = format!("void f() {{\n{open}\n  printf(\"d\");\n#else\n  getenv(\"X\");\n#endif\n}}\n");
        assert_eq!(host(&src), None, "{open}");
        let live = format!("void f() {{\n{open}\n  getenv(\"X\");\n#endif\n}}\n");
        assert_eq!(host(&live), Some(("a call to the host C library function `getenv`".into(), 3, 3)), "{open}");
    }
}

/// Conditions that cannot be told without preprocessing keep every branch scanned, as
/// does code after the group closes.
#[test]
fn unknown_conditions_keep_their_branches_scanned() {
    for open in [
        "#if FOO > 2",
        "#ifdef MY_MACRO",
        "#ifndef MY_MACRO",
        "#if 1",
        "#if defined(__CUDA_ARCH__) && FOO",
        "#if !defined(__CUDA_ARCH__) || FOO",
        "#if (!defined(__CUDA_ARCH__))",
        "#if !definedX",
        "#if __CUDA_ARCH__ >= 800",
    ] {
        let first = format!("void f() {{\n{open}\n  fflush(0);\n#else\n  int x;\n#endif\n}}\n");
        assert_eq!(host(&first).map(|h| h.1), Some(3), "{open}");
        let second = format!("void f() {{\n{open}\n  int x;\n#else\n  fflush(0);\n#endif\n}}\n");
        assert_eq!(host(&second).map(|h| h.1), Some(5), "{open}");
    }
    let after = "#if 0\nint a;\n#endif\nvoid f() { fclose(0); }\n";
    assert_eq!(host(after).map(|h| h.1), Some(4));
    // A stray `#endif` or `#else` changes nothing; an unclosed dead group runs to the end.
    assert_eq!(host("#endif\n#else\nvoid f() { fclose(0); }\n").map(|h| h.1), Some(3));
    assert_eq!(host("#if 0\nvoid f() { fclose(0); }\n"), None);
}

/// `#elif` chains: after a branch known taken every later one is dead; after an unknown
/// one, later branches stay live unless known false; groups nest.
#[test]
fn elif_chains_and_nesting_follow_the_preprocessor() {
    let line = |src: &str| host(src).map(|h| h.1);
    // Known-false first branch: the `#elif` decides.
    let chain = "#ifndef __CUDA_ARCH__\nfputs(a);\n#elif FOO\nfread(a);\n#else\nfwrite(a);\n#endif\n";
    assert_eq!(line(chain), Some(4));
    // Known-true `#elif`: the `#else` after it is dead.
    let chain = "#if 0\nfputs(a);\n#elif defined(__CUDA_ARCH__)\nint a;\n#else\nfwrite(a);\n#endif\n";
    assert_eq!(line(chain), None);
    // Unknown first branch, then a known-true `#elif`: both live, the `#else` dead.
    let chain =
        "#if FOO\nint a;\n#elif defined(__CUDACC_RTC__)\nint b;\n#elif BAR\nfwrite(a);\n#else\nfputs(a);\n#endif\n";
    assert_eq!(line(chain), None);
    let chain = "#if FOO\nfread(a);\n#elif defined(__CUDACC_RTC__)\nint b;\n#endif\n";
    assert_eq!(line(chain), Some(2));
    // `#elifdef` / `#elifndef` (C++23) follow `#ifdef` / `#ifndef`.
    assert_eq!(line("#if FOO\nint a;\n#elifndef __CUDA_ARCH__\nfread(a);\n#endif\n"), None);
    assert_eq!(line("#if 0\nint a;\n#elifdef __CUDA_ARCH__\nint b;\n#else\nfread(a);\n#endif\n"), None);
    // Nested: everything inside a dead group is dead, whatever the inner conditions; a
    // live inner group inside a live outer one is scanned; the outer `#else` is live.
    let nested = "#ifndef __CUDA_ARCH__\n#ifdef __CUDA_ARCH__\nint a;\n#else\nfread(a);\n#endif\n#if FOO\nfputs(a);\n#endif\nfwrite(a);\n#else\n#if FOO\nint b;\n#else\nint c;\n#endif\n#endif\nint d;\n";
    assert_eq!(line(nested), None);
    let nested =
        "#ifdef __CUDA_ARCH__\n#if FOO\n#ifndef __CUDACC__\nfputs(a);\n#endif\n#else\nfclose(a);\n#endif\n#endif\n";
    assert_eq!(line(nested), Some(7));
}

/// Continued directive lines are one directive; `<<<` host launch code guarded for nvcc's
/// host pass is skipped; commented-out directives do not count.
#[test]
fn continued_directives_launches_and_commented_directives() {
    let line = |src: &str| host(src).map(|h| h.1);
    let cont = "#if !defined( \\\n    __CUDA_ARCH__)\nfputs(a);\n#endif\nint x;\n";
    assert_eq!(line(cont), None);
    let cont_crlf = "#ifndef \\\r\n __CUDA_ARCH__\r\nfputs(a);\r\n#endif\r\n";
    assert_eq!(line(cont_crlf), None);
    // A continued ordinary line (a macro body) swallows the `#else` on its next line.
    let swallowed = "#if 0\n#define M(x) x \\\n#else\nfputs(a);\n#endif\nint y;\n";
    assert_eq!(line(swallowed), None);
    let launch = "__global__ void k(int* p) {}\n#ifndef __CUDA_ARCH__\nvoid run(int* p) {\n  k<<<1, 32>>>(p);\n  cudaDeviceSynchronize();\n}\nint main() { return 0; }\n#endif\n";
    assert_eq!(line(launch), None);
    let commented = "// #ifndef __CUDA_ARCH__\n/* #if 0 */\nvoid f() { fputs(a); }\n// #endif\n";
    assert_eq!(line(commented), Some(3));
    let in_string = "const char* s = \"\\\n#if 0\";\nvoid f() { fputs(a); }\n";
    assert_eq!(line(in_string), Some(3));
}

/// The conditional-stack pass is linear too: deep nesting, many groups, a long continued line.
#[test]
fn inactive_regions_are_found_in_linear_time() {
    let started = std::time::Instant::now();
    let depth = 50_000;
    let mut deep = "#if FOO\n#ifndef __CUDA_ARCH__\nfputs(a);\n".repeat(depth);
    deep.push_str(&"#endif\n#endif\n".repeat(depth));
    deep.push_str("void f() { fclose(a); }\n");
    assert_eq!(host(&deep).map(|h| h.1), Some(5 * depth as u32 + 1));
    let many = "#ifndef __CUDA_ARCH__\nfputs(a);\n#elif X\nint a;\n#else\nint b;\n#endif\n".repeat(40_000);
    assert_eq!(host(&many), None);
    let continued = format!("#if 0 \\\n{}\nfputs(a);\n#endif\n", "&& x \\\n".repeat(100_000));
    assert_eq!(host(&continued).map(|h| h.1), Some(100_003));
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
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
        "#",
        "#if",
        "#elif 0\n#else",
        "#if 0 \\",
        "\\\n#ifndef \\\r\n",
        "#if !defined(",
        "#ifdef \u{e9}\n\u{e9}",
    ] {
        let sc = scan(s);
        let _ = kernels(s, &sc);
        let _ = host_code(s, &sc);
    }
}

/// What nvcc accepts in a source's encoding, applied to LF-only `text`: (name, bytes).
pub(crate) fn encodings(text: &str) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("a byte-order mark", format!("\u{feff}{text}").into_bytes()),
        ("CRLF line ends", text.replace('\n', "\r\n").into_bytes()),
        ("lone CR line ends", text.replace('\n', "\r").into_bytes()),
        ("no final newline", text.trim_end_matches('\n').as_bytes().to_vec()),
        ("form feeds", text.replace('\n', "\x0c\n").into_bytes()),
        ("all of them", format!("\u{feff}{}", text.trim_end_matches('\n').replace('\n', "\x0c\r\n")).into_bytes()),
    ]
}

#[test]
fn every_encoding_nvcc_accepts_decodes_to_the_same_lines_and_columns() {
    // Before: a BOM went to NVRTC ("unrecognized token" at 1:1) and counted as a column; a file
    // with lone CR line ends was one line, its first `//` comment swallowing every kernel.
    let text = "// k\n  // @launch(128)\n  __global__ void k(float* p) { p[0] = 1.0f; }\n#include \"h.cuh\"\n";
    for (what, bytes) in encodings(text) {
        let decoded = decode("k.cu", bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(!decoded.contains(['\r', '\u{feff}']), "{what}: {decoded:?}");
        let sc = scan(&decoded);
        let ks = kernels(&decoded, &sc);
        assert_eq!(ks.iter().map(|k| (k.name.as_str(), k.line)).collect::<Vec<_>>(), [("k", 3)], "{what}");
        let launch = sc.comments.iter().find(|c| c.text.contains("@launch")).expect("the comment");
        let at = launch.offset + launch.text.find('@').unwrap();
        assert_eq!((sc.lines.line(at), sc.lines.col(&decoded, at)), (2, 6), "{what}");
        assert_eq!(includes(&decoded), [("h.cuh".to_string(), true)], "{what}");
    }
}

#[test]
fn bad_bytes_are_located_on_the_decoded_lines() {
    for (what, bytes) in encodings("int a;\n// caf\u{e9}\n") {
        // The `é` made a Latin-1 byte; a BOM is not a column.
        let at = bytes.windows(2).position(|w| w == "é".as_bytes()).unwrap();
        let mut latin1 = bytes.clone();
        latin1.splice(at..at + 2, [0xe9]);
        let e = decode("k.cu", latin1).unwrap_err().to_string();
        assert!(e.starts_with("k.cu:2:7: error: not valid UTF-8 (byte 0xe9"), "{what}: {e}");
        let mut nul = bytes;
        nul.splice(at..at + 2, [0]);
        let e = decode("k.cu", nul).unwrap_err().to_string();
        assert!(e.starts_with("k.cu:2:7: error: a NUL byte"), "{what}: {e}");
    }
}

#[test]
fn headers_with_any_line_end_or_a_bom_have_their_includes_found() {
    let text = "#include \"a.cuh\"\n  #  include <b.cuh>\n// #include \"c.cuh\"\n";
    for (what, bytes) in encodings(text) {
        let header = String::from_utf8(bytes).unwrap();
        let found: Vec<String> = includes(&header).into_iter().map(|(n, _)| n).collect();
        assert_eq!(found, ["a.cuh", "b.cuh"], "{what}");
    }
}

#[test]
fn a_header_nvrtc_cannot_read_is_named_with_where_and_why() {
    let text = "#pragma once\n// h\n__device__ int one() { return 1; }\n";
    for (what, bytes) in encodings(text) {
        let found = header_encoding(&bytes).map(|(line, col, why)| (line, col, why.split(',').next().unwrap()));
        let expected = match what {
            "a byte-order mark" | "all of them" => Some((1, 1, "this header starts with a UTF-8 byte-order mark")),
            "lone CR line ends" => Some((1, 13, "this header ends a line with a lone CR")),
            _ => None,
        };
        assert_eq!(found, expected, "{what}");
    }
    assert_eq!(header_encoding(b"a\nbc\rd").map(|(l, c, _)| (l, c)), Some((2, 3)));
}
