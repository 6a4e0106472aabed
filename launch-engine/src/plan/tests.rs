//! Tests of [`super`] (plan.rs): the one place file patterns and kernel tables are matched.

use super::*;
use launch_schema::manifest::Origin;

/// A crate in a temp folder: `meta` as its `[package.metadata.launch]` and empty `files` under
/// `kernels/`. Returns the folder and its plan.
fn planned(meta: &str, files: &[&str]) -> (tempfile::TempDir, Plan) {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("kernels");
    std::fs::create_dir_all(&k).unwrap();
    for f in files {
        std::fs::create_dir_all(k.join(f).parent().unwrap()).unwrap();
        std::fs::write(k.join(f), "").unwrap();
    }
    let text = format!("[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\n{meta}\n");
    let config = Config::parse(&dir.path().join("Cargo.toml"), &text).unwrap();
    let plan = Plan::resolve(config).unwrap();
    (dir, plan)
}

fn rels(plan: &Plan) -> Vec<&str> {
    plan.files.iter().map(|f| f.source.kernel_rel.as_str()).collect()
}

#[test]
fn kernel_files_are_sorted_recursive_and_relative() {
    let d = tempfile::tempdir().unwrap();
    let k = d.path().join("kernels");
    std::fs::create_dir_all(k.join("sub")).unwrap();
    for f in ["b.cu", "a.cu", "sub/c.cu", "h.cuh", "notes.txt"] {
        std::fs::write(k.join(f), "").unwrap();
    }
    let files: Vec<(String, String)> =
        kernel_files(d.path(), Path::new("kernels")).unwrap().into_iter().map(|s| (s.file, s.kernel_rel)).collect();
    let expected = [("kernels/a.cu", "a.cu"), ("kernels/b.cu", "b.cu"), ("kernels/sub/c.cu", "sub/c.cu")];
    assert_eq!(files, expected.map(|(a, b)| (a.to_string(), b.to_string())));
}

/// `exclude`: a file, a folder (everything under it), globs with `*`, `?` and `**`.
#[test]
fn excluded_files_and_folders_are_not_planned() {
    let all = [
        "a.cu",
        "host.cu",
        "moe/x.cu",
        "moe/deep/y.cu",
        "mmq_gguf/z.cu",
        "sub/keep.cu",
        "sub/k_test.cu",
        "sub/deeper/t_test.cu",
        "v1.cu",
        "v22.cu",
    ];
    let list = |exclude: &[&str]| -> Vec<String> {
        let quoted: Vec<String> = exclude.iter().map(|e| format!("\"{e}\"")).collect();
        let (_dir, plan) = planned(&format!("arch = [\"sm_90\"]\nexclude = [{}]", quoted.join(", ")), &all);
        rels(&plan).into_iter().map(String::from).collect()
    };
    assert_eq!(list(&["host.cu", "moe", "mm*_gguf", "**/*_test.cu", "v?.cu"]), ["a.cu", "sub/keep.cu", "v22.cu"]);
    assert_eq!(list(&["sub/*"]).len(), 7, "`*` does not cross a folder, but a matched folder takes its files");
    assert_eq!(
        list(&["*.cu"]),
        ["mmq_gguf/z.cu", "moe/deep/y.cu", "moe/x.cu", "sub/deeper/t_test.cu", "sub/k_test.cu", "sub/keep.cu"]
    );
    assert_eq!(list(&["nothing"]).len(), 10);
}

/// Patterns that match nothing are said once each; `exclude` entries against every file, file
/// tables and `host` patterns against the files left after `exclude`.
#[test]
fn patterns_that_match_nothing_are_reported() {
    let (_dir, plan) = planned(
        "arch = [\"sm_90\"]\nexclude = [\"gone\", \"b.cu\"]\n[package.metadata.launch.file.\"b.cu\"]\nflags = [\"-lineinfo\"]\n[package.metadata.launch.file.\"a.cu\"]\nflags = [\"-lineinfo\"]",
        &["a.cu", "b.cu"],
    );
    assert_eq!(
        plan.warnings,
        // At the entry in Cargo.toml (issue 19 item 7: they had no location).
        [
            "Cargo.toml:7:12: exclude entry `gone` matches no .cu file under kernels/; it has no effect",
            "Cargo.toml:8:31: [package.metadata.launch.file.\"b.cu\"] matches no kernel file under kernels/ (patterns are relative to it); its settings are unused",
        ]
    );
    assert!(plan.check_host_patterns().is_ok());
    let (_dir, plan) =
        planned("arch = [\"sm_90\"]\nexclude = [\"b.cu\"]\nhost = [\"a.cu\", \"b.cu\"]", &["a.cu", "b.cu"]);
    assert_eq!(plan.host_files().map(|f| f.source.kernel_rel.as_str()).collect::<Vec<_>>(), ["a.cu"]);
    let e = plan.check_host_patterns().unwrap_err().to_string();
    assert!(e.contains("`b.cu` matches no kernel file under kernels/"), "{e}");
}

/// Crate-wide settings first, then each matching file table in order; later values win; a
/// file's arches are the crate's its `arch` keeps.
#[test]
fn file_settings_merge_in_order() {
    let (_dir, plan) = planned(
        "arch = [\"sm_80\", \"sm_90\"]\nflags = [\"-std=c++14\", \"-lineinfo\"]\nptxas-flags = [\"-O3\"]\ndefines = { N = 1, M = 2 }\n\
         [package.metadata.launch.file.\"fp8/**\"]\narch = [\"sm_90\"]\nflags = [\"-std=c++17\"]\ndefines = { FP8 = true }\n\
         [package.metadata.launch.file.\"fp8/special.cu\"]\narch = [\"sm_80\", \"sm_90\"]\ndefines = { N = 3 }\nflags = [\"-Xptxas\", \"-warn-spills\"]\n\
         [package.metadata.launch.file.\"*.cu\"]\nflags = [\"--use_fast_math\"]",
        &["a.cu", "fp8/gemm.cu", "fp8/special.cu"],
    );
    let sm = |names: &[&str]| names.iter().map(|n| n.parse::<Arch>().unwrap()).collect::<Vec<_>>();
    let of = |rel: &str| plan.files.iter().find(|f| f.source.kernel_rel == rel).unwrap();
    let top = &of("a.cu").settings;
    assert_eq!(top.flags, ["--std=c++14", "--generate-line-info", "--use_fast_math"]);
    assert_eq!(top.arch, None);
    assert_eq!(of("a.cu").arches, sm(&["sm_80", "sm_90"]));
    assert_eq!(top.ptxas_flags, ["--opt-level=3"]);
    let fp8 = &of("fp8/gemm.cu").settings;
    assert_eq!(fp8.flags, ["--generate-line-info", "--std=c++17"], "`*.cu` does not cross a folder");
    assert_eq!(fp8.arch, Some(sm(&["sm_90"])));
    assert_eq!(of("fp8/gemm.cu").arches, sm(&["sm_90"]));
    let d = |n: &str, v: Option<&str>| (n.to_string(), v.map(String::from));
    assert_eq!(fp8.defines, [d("M", Some("2")), d("N", Some("1")), d("FP8", None)]);
    let special = &of("fp8/special.cu").settings;
    assert_eq!(special.arch, Some(sm(&["sm_80", "sm_90"])), "the last table that sets `arch` wins");
    assert_eq!(special.defines, [d("M", Some("2")), d("N", Some("3")), d("FP8", None)]);
    assert_eq!(special.ptxas_flags, ["--opt-level=3", "--warn-on-spills"]);
}

fn entry(file: &str, name: &str) -> KernelEntry {
    KernelEntry {
        name: name.into(),
        display_name: name.into(),
        qualified: format!("{file}::{name}"),
        rust_name: String::new(),
        rust_path: String::new(),
        rust_flat: false,
        file: file.into(),
        line: 1,
        col: 1,
        origin: Origin::Definition,
        contract: None,
        arches: Vec::new(),
        missing: Vec::new(),
        host_threads: None,
        dynamic_smem: None,
        max_spill_bytes: None,
        variants: Vec::new(),
        params: None,
        params_unknown: None,
    }
}

/// Qualified name, then plain name, then patterns in file order, setting by setting; the spill
/// budget falls back to the crate's; tables that name no kernel are returned.
#[test]
fn kernel_settings_by_name_qualified_name_and_pattern() {
    let (_dir, plan) = planned(
        "arch = [\"sm_90\"]\nmax-spill-bytes = 99\n[package.metadata.launch.kernel.\"fill_*\"]\nthreads = 128\ndynamic-smem = 64\n\
         [package.metadata.launch.kernel.\"kernels/c*.cu::fill_*\"]\nmax-spill-bytes = 1\n\
         [package.metadata.launch.kernel.\"*\"]\nthreads = 32\nmax-spill-bytes = 8\n\
         [package.metadata.launch.kernel.fill_f16]\nthreads = 512\n\
         [package.metadata.launch.kernel.\"kernels/b.cu::fill_f16\"]\ndynamic-smem = 0\n\
         [package.metadata.launch.kernel.\"kernels/z.cu::gone\"]\nthreads = 1",
        &[],
    );
    assert_eq!(plan.config.kernel_patterns, ["fill_*", "kernels/c*.cu::fill_*", "*"]);
    let mut kernels = vec![
        entry("kernels/a.cu", "fill_f32"),
        entry("kernels/a.cu", "fill_f16"),
        entry("kernels/b.cu", "fill_f16"),
        entry("kernels/copy.cu", "fill_u8"),
        entry("kernels/a.cu", "other"),
    ];
    let unused = plan.settle_kernels(&mut kernels).unwrap();
    let got: Vec<_> = kernels.iter().map(|k| (k.host_threads, k.dynamic_smem, k.max_spill_bytes)).collect();
    assert_eq!(
        got,
        [
            (Some(128), Some(64), Some(8)),
            (Some(512), Some(64), Some(8)),
            (Some(512), Some(0), Some(8)),
            (Some(128), Some(64), Some(1)),
            (Some(32), None, Some(8)),
        ]
    );
    assert_eq!(unused, ["kernels/z.cu::gone"]);

    let (_dir, none) = planned("arch = [\"sm_90\"]\nmax-spill-bytes = 99", &[]);
    let mut kernels = vec![entry("kernels/a.cu", "k")];
    assert!(none.settle_kernels(&mut kernels).unwrap().is_empty());
    assert_eq!((kernels[0].host_threads, kernels[0].dynamic_smem, kernels[0].max_spill_bytes), (None, None, Some(99)));
    assert!(config::kernel_key_matches("kernels/a.cu::k", "k", "kernels/a.cu::k"));
    assert!(!config::kernel_key_matches("kernels/*.cu::k", "k", "kernels/sub/a.cu::k"));
}

/// A C++ kernel as the build records it: `symbol`, demangled `display`, in `file`.
fn cpp(file: &str, symbol: &str, display: &str) -> KernelEntry {
    KernelEntry { display_name: display.into(), qualified: format!("{file}::{display}"), ..entry(file, symbol) }
}

/// A table keyed by a C++ kernel's demangled name, its bare function name (one kernel has it),
/// or `path::bare` applies its settings; none of them is "unused" without applying them.
#[test]
fn cpp_kernels_are_named_by_demangled_and_bare_names() {
    let (_dir, plan) = planned(
        "arch = [\"sm_90\"]\n[package.metadata.launch.kernel.\"ns::k()\"]\nthreads = 64\n\
         [package.metadata.launch.kernel.pack]\nthreads = 96\n\
         [package.metadata.launch.kernel.\"kernels/b.cu::scale\"]\nthreads = 32\n\
         [package.metadata.launch.kernel.\"scale(float*)\"]\ndynamic-smem = 8\n\
         [package.metadata.launch.kernel.nothing]\nthreads = 1",
        &[],
    );
    let mut kernels = vec![
        cpp("kernels/a.cu", "_ZN2ns1kEv", "ns::k()"),
        cpp("kernels/a.cu", "_Z4packPKhPhm", "pack(unsigned char const*, unsigned char*, unsigned long)"),
        cpp("kernels/b.cu", "_Z5scalePf", "scale(float*)"),
        cpp("kernels/c.cu", "_Z5scalePd", "scale(double*)"),
    ];
    let unused = plan.settle_kernels(&mut kernels).unwrap();
    let got: Vec<_> = kernels.iter().map(|k| (k.host_threads, k.dynamic_smem)).collect();
    assert_eq!(got, [(Some(64), None), (Some(96), None), (Some(32), Some(8)), (None, None)]);
    assert_eq!(unused, ["nothing"]);
}

/// A bare name several kernels share (overloads, template instances) is an error at its table
/// that lists them by qualified name; an `extern "C"` name shared by files keeps naming them all.
#[test]
fn an_ambiguous_bare_name_is_an_error_listing_the_kernels() {
    let (_dir, plan) = planned("arch = [\"sm_90\"]\n[package.metadata.launch.kernel.scale]\nthreads = 32", &[]);
    let mut kernels = vec![
        cpp("kernels/b.cu", "_Z5scalePf", "scale(float*)"),
        cpp("kernels/b.cu", "_Z5scalePd", "scale(double*)"),
        cpp("kernels/c.cu", "_Z5scaleILi8EEvPi", "void scale<8>(int*)"),
    ];
    let e = plan.settle_kernels(&mut kernels).unwrap_err().to_string();
    assert!(
        e.ends_with(
            "Cargo.toml:7:33: `package.metadata.launch.kernel.scale`: `scale` is the name of 3 kernels; write one's \
         qualified name (or its symbol) as the key: kernels/b.cu::scale(float*); kernels/b.cu::scale(double*); \
         kernels/c.cu::void scale<8>(int*)"
        ),
        "{e}"
    );
    assert_eq!(kernels[0].host_threads, None);

    let (_dir, plan) = planned("arch = [\"sm_90\"]\n[package.metadata.launch.kernel.fill]\nthreads = 32", &[]);
    let mut kernels = vec![entry("kernels/a.cu", "fill"), entry("kernels/b.cu", "fill")];
    assert!(plan.settle_kernels(&mut kernels).unwrap().is_empty());
    assert_eq!(kernels.iter().map(|k| k.host_threads).collect::<Vec<_>>(), [Some(32), Some(32)]);
}

/// The candidates a table that names no kernel is shown: at most five, closest first, each a key
/// that names one kernel (the bare name where it is unique, else the qualified name).
#[test]
fn closest_keys_are_few_and_work_as_keys() {
    let mut kernels = vec![
        cpp(
            "kernels/a.cu",
            "_Z16pack_8bit_kernelPKhPhm",
            "pack_8bit_kernel(unsigned char const*, unsigned char*, unsigned long)",
        ),
        cpp(
            "kernels/a.cu",
            "_Z16pack_4bit_kernelPKhPhm",
            "pack_4bit_kernel(unsigned char const*, unsigned char*, unsigned long)",
        ),
        cpp("kernels/b.cu", "_Z5scalePf", "scale(float*)"),
        cpp("kernels/b.cu", "_Z5scalePd", "scale(double*)"),
    ];
    kernels.extend((0..8).map(|i| entry("kernels/c.cu", &format!("unrelated_{i}"))));
    assert_eq!(config::closest_kernel_keys("pack_8bit_kernl", &kernels), ["pack_8bit_kernel", "pack_4bit_kernel"]);
    assert_eq!(
        config::closest_kernel_keys("kernels/x.cu::scale", &kernels),
        ["kernels/b.cu::scale(double*)", "kernels/b.cu::scale(float*)"]
    );
    assert_eq!(config::closest_kernel_keys("unrelated", &kernels).len(), 5);
    assert!(config::closest_kernel_keys("zzzz", &kernels).is_empty());
}

/// The plan of `meta` over `files`, or its error as shown.
fn plan_or_error(meta: &str, files: &[&str]) -> Result<Plan, String> {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("kernels");
    std::fs::create_dir_all(&k).unwrap();
    for f in files {
        std::fs::write(k.join(f), "").unwrap();
    }
    let text = format!("[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\n{meta}\n");
    let config = Config::parse(&dir.path().join("Cargo.toml"), &text).unwrap();
    Plan::resolve(config).map_err(|e| {
        let shown = e.to_string();
        shown.replace(&format!("{}/", dir.path().display()), "")
    })
}

/// nvcc's own options reach `host` files (crate's, then the tables', in order); device files get
/// none of them; those that change device code and NVRTC lacks are refused only where a device
/// file would get them, at the flag.
#[test]
fn nvcc_options_reach_host_files_and_device_files_refuse_what_nvrtc_lacks() {
    let plan = plan_or_error(
        "arch = [\"sm_90\"]\nhost = [\"h.cu\"]\nflags = [\"-O3\", \"--default-stream\", \"per-thread\", \"-Xcompiler\", \"-fPIC\"]\n\
         [package.metadata.launch.file.\"h.cu\"]\nflags = [\"--expt-extended-lambda\", \"-Xcudafe\", \"--diag_suppress=177\", \"-O2\"]",
        &["d.cu", "h.cu"],
    )
    .unwrap();
    let nvcc = |f: &str| plan.files.iter().find(|p| p.source.kernel_rel == f).unwrap().settings.nvcc_flags.clone();
    assert_eq!(
        nvcc("h.cu"),
        [
            "--default-stream",
            "per-thread",
            "-Xcompiler",
            "-fPIC",
            "--expt-extended-lambda",
            "-Xcudafe",
            "--diag_suppress=177",
            "-O2"
        ]
    );
    assert_eq!(nvcc("d.cu"), ["-O3", "--default-stream", "per-thread", "-Xcompiler", "-fPIC"]);
    assert!(plan.files.iter().all(|f| f.settings.flags.is_empty()), "nothing of them reaches NVRTC");

    // The crate's `-Xcudafe` would reach d.cu, compiled by NVRTC.
    let e = plan_or_error(
        "arch = [\"sm_90\"]\nhost = [\"h.cu\"]\nflags = [\"-O3\", \"-Xcudafe\", \"--diag_suppress=177\"]",
        &["d.cu", "h.cu"],
    )
    .unwrap_err();
    assert_eq!(
        e,
        "Cargo.toml:8:17: `package.metadata.launch.flags[1]`: `-Xcudafe --diag_suppress=177` would reach kernels/d.cu, which NVRTC compiles: \
         NVRTC has no separate front-end step (its diagnostics options are `--diag-suppress=N`, `--diag-warn=N` and `--diag-error=N`); \
         `host` files take it (nvcc compiles them): list the file in `host`, or give the option in a \
         [package.metadata.launch.file.\"<pattern>\"] table of the host files only"
    );
    // Every file a host file: the crate's flag is theirs.
    assert!(plan_or_error(
        "arch = [\"sm_90\"]\nhost = [\"*.cu\"]\nflags = [\"-ftemplate-depth=900\"]",
        &["a.cu", "b.cu"]
    )
    .is_ok());
    // A table of a device file.
    let e = plan_or_error(
        "arch = [\"sm_90\"]\n[package.metadata.launch.file.\"d.cu\"]\nflags = [\"-lineinfo\", \"--keep-device-functions\"]",
        &["d.cu"],
    )
    .unwrap_err();
    assert!(e.starts_with("Cargo.toml:8:23: `package.metadata.launch.file.\"d.cu\".flags[1]`: `--keep-device-functions` would reach kernels/d.cu"), "{e}");
}
