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
        // nvcc's host-side options: for `host` files only (see `nvcc_options_are_for_host_files`).
        (&["-res-usage"], &[]),
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
        (&["-dc"], 0, "`-dc` is not allowed: write `-rdc=true`"),
        (&["--device-link"], 0, "launch-build runs nvcc's device link itself"),
        (
            &["-ccbin", "gcc"],
            0,
            "`-ccbin` is not allowed: launch-build gives nvcc the host C++ compiler that cargo's `cc` chooses; set CXX",
        ),
        (&["--compiler-bindir=/usr/bin"], 0, "set CXX"),
        (&["--keep"], 0, "chooses what is produced"),
        (&["-keep-dir", "tmp"], 0, "chooses what is produced"),
        (&["-odir", "out"], 0, "chooses what is produced"),
        (&["--save-temps"], 0, "chooses what is produced"),
        (&["-MD"], 0, "writes no dependency files"),
        (&["-MF", "x.d"], 0, "writes no dependency files"),
        (&["-M"], 0, "writes no dependency files"),
        (&["-lib"], 0, "links nothing"),
        (&["-Xlinker", "-rpath=x"], 0, "cargo links the `host` files' library"),
        (&["-lcublas"], 0, "is not an NVRTC or nvcc option"),
        (&["-l", "cublas"], 0, "cargo links"),
        (&["--cudart", "shared"], 0, "static CUDA runtime"),
        (&["-x", "c++"], 0, "as CUDA (`-x cu`)"),
        (&["--default-stream=fast"], 0, "`fast` is not one of `legacy`, `null`, `per-thread`"),
        (&["-Xcompiler"], 0, "`-Xcompiler` needs a value"),
        (&["--verbose=1"], 0, "`--verbose` takes no value"),
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
            "`--use-fast-math` is not an NVRTC or nvcc option launch-build knows (did you mean `--use_fast_math`?)",
        ),
        (&["--Werror"], 0, "is not an NVRTC or nvcc option launch-build knows"),
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

fn host(option: &[&str]) -> Mapped {
    Mapped::Nvcc { option: option.iter().map(|o| o.to_string()).collect(), device_refusal: None }
}

/// nvcc's own options, in each spelling, become nvcc's arguments for `host` files; those that
/// only concern the host side carry no refusal (device files leave them out).
#[test]
fn nvcc_options_are_for_host_files() {
    let cases: &[(&[&str], &[Mapped])] = &[
        (&["--expt-extended-lambda"], &[host(&["--expt-extended-lambda"])]),
        (&["-expt-extended-lambda", "--extended-lambda"], &[host(&["--expt-extended-lambda"])]),
        (&["--default-stream", "per-thread"], &[host(&["--default-stream", "per-thread"])]),
        (&["--default-stream per-thread"], &[host(&["--default-stream", "per-thread"])]),
        (&["-default-stream=legacy"], &[host(&["--default-stream", "legacy"])]),
        (&["-Xcompiler", "-fPIC"], &[host(&["-Xcompiler", "-fPIC"])]),
        (&["--compiler-options", "-fPIC"], &[host(&["-Xcompiler", "-fPIC"])]),
        (&["-Xcompiler=-fPIC,-Wall"], &[host(&["-Xcompiler", "-fPIC,-Wall"])]),
        (&["-Xcompiler -std=c++17"], &[host(&["-Xcompiler", "-std=c++17"])]),
        (&["--verbose"], &[host(&["--verbose"])]),
        (&["-v"], &[host(&["--verbose"])]),
        (&["-O3"], &[host(&["-O3"])]),
        (&["--optimize=2", "-O", "1", "-O0"], &[host(&["-O2"]), host(&["-O1"]), host(&["-O0"])]),
        (&["-g", "--debug"], &[host(&["-g"])]),
        (&["-m64", "--machine=64", "-m", "64"], &[host(&["-m64"])]),
        (&["-Wno-deprecated-gpu-targets"], &[host(&["-Wno-deprecated-gpu-targets"])]),
        (&["-t", "4", "-noeh"], &[host(&["--threads", "4"]), host(&["--no-exceptions"])]),
        (&["-allow-unsupported-compiler"], &[host(&["--allow-unsupported-compiler"])]),
        // Issue 32 class 11: bitsandbytes's CUDA 13 options, refused as unknown before.
        (&["--compress-mode=size"], &[host(&["--compress-mode", "size"])]),
        (&["-static-global-template-stub=false"], &[host(&["--static-global-template-stub", "false"])]),
        // Shared with NVRTC: one NVRTC option, which host files get in nvcc's spelling (host.rs).
        (&["--expt-relaxed-constexpr"], &[n("--device-as-default-execution-space")]),
        (&["-diag-suppress=177"], &[n("--diag-suppress=177")]),
        // `-Xptxas` stays ptxas's, whoever compiles the file.
        (&["-Xptxas", "-v"], &[]),
        (&["-Xptxas", "-O2"], &[Mapped::Ptxas("--opt-level=2".into())]),
    ];
    for (list, expected) in cases {
        assert_eq!(nvrtc(list), *expected, "for {list:?}");
    }
    // The mistral.rs command line (less what launch-build sets itself), as one `flags` list.
    let mistral = [
        "-std=c++17",
        "-O3",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "--use_fast_math",
        "--verbose",
        "--compiler-options",
        "-fPIC",
        "--default-stream",
        "per-thread",
    ];
    let mapped = nvrtc(&mistral);
    let nvcc: Vec<&Mapped> = mapped.iter().filter(|m| matches!(m, Mapped::Nvcc { .. })).collect();
    let expected = [
        host(&["-O3"]),
        host(&["--expt-extended-lambda"]),
        host(&["--verbose"]),
        host(&["-Xcompiler", "-fPIC"]),
        host(&["--default-stream", "per-thread"]),
    ];
    assert_eq!(nvcc, expected.iter().collect::<Vec<_>>());
}

/// nvcc's options that would change device code and that NVRTC lacks are accepted with the reason
/// a device file may not take them (the plan refuses them there).
#[test]
fn nvcc_options_nvrtc_lacks_carry_the_reason_for_device_files() {
    for (list, option, why) in [
        (
            &["-Xcudafe", "--diag_suppress=177"][..],
            &["-Xcudafe", "--diag_suppress=177"][..],
            "no separate front-end step",
        ),
        (&["--cudafe-options=--display_error_number"], &["-Xcudafe", "--display_error_number"], "front-end"),
        (&["-ftemplate-depth=2000"], &["--ftemplate-depth", "2000"], "NVRTC has no such option"),
        (&["--keep-device-functions"], &["--keep-device-functions"], "NVRTC has no such option"),
        // Separable compilation: nvcc's, with launch-build's device link (issue 32, class 11).
        (&["-rdc=true"], &["-rdc=true"], "NVRTC files are each compiled to one complete module"),
        (&["--relocatable-device-code", "true"], &["-rdc=true"], "`host` files take `-rdc=true`"),
    ] {
        match nvrtc(list).as_slice() {
            [Mapped::Nvcc { option: o, device_refusal: Some(w) }] => {
                assert_eq!(o, option, "{list:?}");
                assert!(w.contains(why), "{list:?}: {w}");
            }
            other => panic!("{list:?}: {other:?}"),
        }
    }
}

#[test]
fn nvcc_options_merge_later_values_over_earlier_ones() {
    let o = |s: &[&str]| s.iter().map(|o| o.to_string()).collect::<Vec<_>>();
    let merged = merge_nvcc([
        o(&["-O2"]),
        o(&["--default-stream", "legacy"]),
        o(&["-Xcompiler", "-fPIC"]),
        o(&["--expt-extended-lambda"]),
        o(&["-O3"]),
        o(&["-Xcompiler", "-Wall"]),
        o(&["--default-stream", "per-thread"]),
        o(&["-Xcompiler", "-fPIC"]),
        o(&["--expt-extended-lambda"]),
    ]);
    assert_eq!(
        merged,
        [
            "-Xcompiler",
            "-fPIC",
            "--expt-extended-lambda",
            "-O3",
            "-Xcompiler",
            "-Wall",
            "--default-stream",
            "per-thread"
        ]
    );
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
