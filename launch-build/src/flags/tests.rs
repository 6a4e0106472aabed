//! Tests of [`super`] (flags.rs).

use super::*;

fn nvrtc(list: &[&str]) -> Vec<Mapped> {
    map_nvrtc(list).unwrap_or_else(|r| panic!("{list:?} refused: {r:?}"))
}

fn refused(list: &[&str]) -> (usize, String) {
    match map_nvrtc(list) {
        Ok(m) => panic!("{list:?} accepted as {m:?}"),
        Err(r) => (r.index, r.message),
    }
}

fn n(s: &str) -> Mapped {
    Mapped::Nvrtc(s.into())
}

/// Every spelling of the mapping table, in its NVRTC and nvcc forms, and what it becomes.
#[test]
fn nvcc_and_nvrtc_spellings_map_to_one_nvrtc_option() {
    let cases: &[(&[&str], &[Mapped])] = &[
        (&["-std=c++17"], &[n("--std=c++17")]),
        (&["--std=c++17"], &[n("--std=c++17")]),
        (&["-std", "c++20"], &[n("--std=c++20")]),
        (&["--std c++14"], &[n("--std=c++14")]),
        (&["--expt-relaxed-constexpr"], &[n("--device-as-default-execution-space")]),
        (&["-expt-relaxed-constexpr"], &[n("--device-as-default-execution-space")]),
        (&["-default-device", "--expt-relaxed-constexpr"], &[n("--device-as-default-execution-space")]),
        (&["--use_fast_math"], &[n("--use_fast_math")]),
        (&["-use_fast_math"], &[n("--use_fast_math")]),
        (&["-lineinfo"], &[n("--generate-line-info")]),
        (&["--generate-line-info"], &[n("--generate-line-info")]),
        (&["--extra-device-vectorization"], &[n("--extra-device-vectorization")]),
        (&["-G"], &[n("--device-debug")]),
        (&["--device-debug"], &[n("--device-debug")]),
        (&["-D", "X"], &[n("--define-macro=X")]),
        (&["-DX=1"], &[n("--define-macro=X=1")]),
        (&["-D X=a b"], &[n("--define-macro=X=a b")]),
        (&["--define-macro=X"], &[n("--define-macro=X")]),
        (&["-UX"], &[n("--undefine-macro=X")]),
        (&["-I", "inc"], &[Mapped::Include("inc".into())]),
        (&["-Iinc"], &[Mapped::Include("inc".into())]),
        (&["--include-path=third/inc"], &[Mapped::Include("third/inc".into())]),
        (&["-I/opt/cuda/include"], &[Mapped::Include("/opt/cuda/include".into())]),
        (&["-Xptxas", "-O3"], &[Mapped::Ptxas("--opt-level=3".into())]),
        (
            &["-Xptxas=-O2,-warn-spills"],
            &[Mapped::Ptxas("--opt-level=2".into()), Mapped::Ptxas("--warn-on-spills".into())],
        ),
        (&["--ptxas-options=-v"], &[]),
        (
            &["--ftz=true", "-prec-div=false", "--prec-sqrt", "false", "-fmad=false"],
            &[n("--ftz=true"), n("--prec-div=false"), n("--prec-sqrt=false"), n("--fmad=false")],
        ),
        (
            &["--restrict", "-dw", "-w", "--device-int128"],
            &[n("--restrict"), n("--device-w"), n("--disable-warnings"), n("--device-int128")],
        ),
        (&["-rdc=false"], &[n("--relocatable-device-code=false")]),
        (&["-diag-suppress", "177,550"], &[n("--diag-suppress=177,550")]),
        (&["-dopt", "on"], &[n("--dopt=on")]),
        // Host-side nvcc options: accepted, nothing passed on.
        (
            &[
                "-O0",
                "-O3",
                "--optimize=2",
                "-O",
                "1",
                "-g",
                "-m64",
                "--expt-extended-lambda",
                "-Wno-deprecated-gpu-targets",
                "-res-usage",
            ],
            &[],
        ),
    ];
    for (list, expected) in cases {
        assert_eq!(nvrtc(list), *expected, "for {list:?}");
    }
}

/// Options that would change what launch-build controls, or that NVRTC lacks, are refused
/// with the reason, naming the element at fault.
#[test]
fn values_ptxas_or_nvrtc_would_refuse_are_refused_here() {
    // Before: these reached NVRTC or ptxas and failed there, blamed on a kernel file, exit 1.
    for bad in
        ["--diag-suppress=abc", "--diag-suppress=0", "--diag-suppress=1,abc", "-diag-suppress=99999999999999999999"]
    {
        let e = map_nvrtc(&[bad]).unwrap_err();
        assert!(e.message.contains("diagnostic numbers separated by commas"), "{bad}: {e:?}");
    }
    assert!(map_nvrtc(&["--diag-suppress=177,550"]).is_ok());
    let e = map_ptxas(&["-dlcm=xx"]).unwrap_err();
    assert!(e.message.contains("one of `ca`, `cg`, `cs`, `cv`, `lu`"), "{e:?}");
    assert!(map_ptxas(&["-dscm=wt"]).is_ok());
}

#[test]
fn refusals_say_why() {
    let cases: &[(&[&str], usize, &str)] = &[
        (&["-arch=sm_80"], 0, "`-arch=sm_80` is not allowed: launch-build sets the target architecture"),
        (
            &["-std=c++17", "--gpu-architecture", "compute_80"],
            1,
            "`--gpu-architecture` is not allowed: launch-build sets the target",
        ),
        (&["-gencode", "arch=compute_80,code=sm_80"], 0, "`-gencode` is not allowed"),
        (&["-code=sm_80"], 0, "sets the target architecture"),
        (&["--ptx"], 0, "launch-build chooses what is produced"),
        (&["-o", "x.ptx"], 0, "launch-build chooses what is produced"),
        (&["-c"], 0, "launch-build chooses what is produced"),
        (&["--cubin"], 0, "chooses what is produced"),
        (&["--fatbin"], 0, "chooses what is produced"),
        (&["-rdc=true"], 0, "relocatable device code needs a device link step, and launch-build links nothing"),
        (&["-dc"], 0, "links nothing"),
        (&["-Xcompiler", "-Wall"], 0, "option of nvcc's host compiler"),
        (&["-ccbin", "gcc"], 0, "host compiler"),
        (&["-include", "common.cuh"], 0, "write `#include` at the top of the file"),
        (
            &["-maxrregcount=32"],
            0,
            "belong to each kernel's launch contract: write `// @launch(threads, min_blocks, max_regs)`",
        ),
        (&["-m32"], 0, "GPU code is 64-bit only"),
        (
            &["-Xptxas", "-maxrregcount=32"],
            0,
            "`-Xptxas` passes `-maxrregcount=32` to ptxas: `-maxrregcount=32` is not allowed",
        ),
        (&["-Xptxas=-O3,-arch=sm_80"], 0, "passes `-arch=sm_80` to ptxas"),
        (
            &["--use-fast-math"],
            0,
            "`--use-fast-math` is not an NVRTC option launch-build knows (did you mean `--use_fast_math`?)",
        ),
        (&["--Werror"], 0, "is not an NVRTC option launch-build knows"),
        (&["-lineinfo=true"], 0, "`-lineinfo` takes no value"),
        (&["-std=c++23"], 0, "`-std`: `c++23` is not one of `c++03`, `c++11`, `c++14`, `c++17`, `c++20`"),
        (&["--ftz=yes"], 0, "`--ftz`: `yes` is not `true` or `false`"),
        (&["-D"], 0, "`-D` needs a value"),
        (&["-D1X"], 0, "`1X` is not a macro name"),
        (&["-std=c++17", "c++17"], 1, "`c++17` is not an option"),
        (&[""], 0, "an empty flag"),
    ];
    for (list, index, part) in cases {
        let (i, m) = refused(list);
        assert_eq!(i, *index, "{list:?}: {m}");
        assert!(m.contains(part), "{list:?}: expected `{part}` in:\n{m}");
    }
}

#[test]
fn ptxas_flags_are_checked_and_canonical() {
    assert_eq!(
        map_ptxas(&["-O3", "--allow-expensive-optimizations=true", "-warn-spills", "--opt-level", "3", "-v"]).unwrap(),
        ["--opt-level=3", "--allow-expensive-optimizations=true", "--warn-on-spills"]
    );
    for (bad, part) in [
        ("-arch=sm_90", "launch-build runs ptxas for each arch"),
        ("-o", "chooses ptxas's input and output"),
        ("--compile-only", "relocatable object"),
        ("--maxrregcount=64", "launch contract"),
        ("-e", "leave kernels out"),
        ("-O7", "not a ptxas option"),
        ("--opt-level=7", "`7` is not an integer from 0 to 3"),
    ] {
        let r = map_ptxas(&[bad]).unwrap_err();
        assert!(r.message.contains(part), "{bad}: {}", r.message);
    }
}

#[test]
fn later_values_replace_earlier_ones_and_lists_accumulate() {
    let merged = merge_nvrtc(
        ["--std=c++14", "--define-macro=A", "--use_fast_math", "--std=c++17", "--define-macro=B", "--use_fast_math"]
            .map(String::from),
    );
    assert_eq!(merged, ["--define-macro=A", "--use_fast_math", "--std=c++17", "--define-macro=B"]);
}

#[test]
fn garbage_never_panics() {
    for list in
        [&["-"][..], &["="], &["-D="], &["-I"], &["--std="], &["-Xptxas", ""], &["-Xptxas=,"], &["é"], &["-é=é"]]
    {
        let _ = map_nvrtc(list);
        let _ = map_ptxas(list);
    }
}
