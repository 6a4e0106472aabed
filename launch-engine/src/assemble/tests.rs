//! Tests of [`super`] (assemble.rs).

use super::*;
use crate::compile::JobOutput;
use crate::plan::{PlannedFile, SourceFile};
use crate::ptxas_log::{EntryReport, PtxasLog};

fn config(arches: &str) -> Config {
    config_with(arches, "")
}

/// A config with `arch = [arches]` and `extra` TOML after it.
fn config_with(arches: &str, extra: &str) -> Config {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("kernels")).expect("kernel folder");
    let text = format!(
        "[package]\nname = \"t\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [{arches}]\n{extra}"
    );
    Config::parse(&dir.path().join("Cargo.toml"), &text).expect("valid config")
}

fn arch(a: &str) -> Arch {
    a.parse().expect("known arch")
}

/// The `.param` lines NVRTC writes for a C++ kernel's parameters (as its mangled name says), so
/// the synthetic PTX agrees with the signature the build reads from the name.
fn ptx_params(symbol: &str) -> String {
    use crate::signature::{demangled_params, kind, Kind};
    let types =
        if symbol.starts_with("_Z") { demangled_params(&demangle(symbol)).unwrap_or_default() } else { Vec::new() };
    let decl = |ty: &str| match kind(ty) {
        Kind::Value("bool" | "i8" | "u8") => ".u8",
        Kind::Value("i16" | "u16" | "f16" | "bf16") => ".u16",
        Kind::Value("i32" | "u32" | "f32") => ".u32",
        _ => ".u64",
    };
    let lines: Vec<String> =
        types.iter().enumerate().map(|(i, t)| format!("\t.param {} {symbol}_param_{i}", decl(t))).collect();
    if lines.is_empty() {
        String::new()
    } else {
        lines.join(",\n") + "\n"
    }
}

/// The output of one job whose PTX and `ptxas -v` report hold `kernels`.
fn output(a: &str, kernels: &[&str]) -> (Arch, JobOutput) {
    let ptx = format!(
        ".version 8.8\n.target {a}\n{}",
        kernels.iter().map(|k| format!(".visible .entry {k}(\n{})\n{{\n}}\n", ptx_params(k))).collect::<String>()
    );
    let entries = kernels
        .iter()
        .map(|k| EntryReport {
            name: k.to_string(),
            arch: a.to_string(),
            resources: launch::Resources { registers: 10, ..Default::default() },
            compile_time_ms: None,
            lines: Vec::new(),
        })
        .collect();
    let report = PtxasLog { gmem: None, cmem: Vec::new(), entries, functions: Vec::new(), diagnostics: Vec::new() };
    (
        arch(a),
        JobOutput {
            ptx,
            cubin: Vec::new(),
            report,
            nvrtc_log: String::new(),
            ptxas_log: String::new(),
            probes: Vec::new(),
        },
    )
}

fn source(file: &str) -> PlannedFile {
    with_arch(file, None)
}

/// `file`, planned with its own `arch` setting `arch`.
fn with_arch(file: &str, arch: Option<Vec<Arch>>) -> PlannedFile {
    let kernel_rel = file.strip_prefix("kernels/").unwrap_or(file).to_string();
    let source = SourceFile { file: file.to_string(), path: std::path::PathBuf::from(file), kernel_rel };
    let settings = crate::config::FileSettings { arch, ..Default::default() };
    PlannedFile { source, settings, arches: Vec::new(), host: false }
}

/// [`super::manifest`] for `config`, its warnings in the manifest as the build puts them there.
fn manifest(config: &Config, toolchain: ToolchainInfo, files: &[FileOutputs]) -> Result<Manifest, Error> {
    let plan = Plan::of(config.clone(), Vec::new());
    let mut warnings = Warnings::default();
    let mut m = super::manifest(&plan, toolchain, files, &mut warnings)?;
    m.warnings = warnings.for_manifest();
    Ok(m)
}

fn toolchain() -> ToolchainInfo {
    ToolchainInfo { compilers: Toolchain { nvrtc: "12.9".into(), ptxas: "12.9".into() }, description: String::new() }
}

/// One file without annotations or an `arch` setting, with its outputs.
fn plain_file<'a>(
    source: &'a PlannedFile,
    text: &'a str,
    definitions: &'a [source::KernelDef],
    outputs: Vec<(Arch, JobOutput)>,
) -> FileOutputs<'a> {
    let fresh = outputs.iter().map(|_| true).collect();
    FileOutputs { file: source, text, annotations: &[], definitions, outputs, fresh }
}

fn defs(text: &str) -> Vec<source::KernelDef> {
    source::kernels(text, &source::scan(text))
}

fn kernel<'a>(m: &'a Manifest, qualified: &str) -> &'a KernelEntry {
    m.kernels.iter().find(|k| k.qualified == qualified).unwrap_or_else(|| panic!("no {qualified}"))
}

#[test]
fn the_same_kernel_name_in_two_files_is_kept_in_both_modules() {
    let c = config("\"sm_90\"");
    let (a, b) = (source("kernels/a.cu"), source("kernels/sub/b.cu"));
    let ta = "extern \"C\" __global__ void fill(float* x) {}\nextern \"C\" __global__ void only_a(float* x) {}\n";
    let tb = "\n\nextern \"C\" __global__ void fill(float* x) {}\n";
    let (da, db) = (defs(ta), defs(tb));
    let files = [
        plain_file(&a, ta, &da, vec![output("sm_90", &["fill", "only_a"])]),
        plain_file(&b, tb, &db, vec![output("sm_90", &["fill"])]),
    ];
    let m = manifest(&c, toolchain(), &files).expect("duplicate names across files are fine");
    let fa = kernel(&m, "kernels/a.cu::fill");
    let fb = kernel(&m, "kernels/sub/b.cu::fill");
    // Ambiguous plain names are shown qualified and get no flat static; unique ones keep both.
    assert_eq!(
        (fa.display_name.as_str(), fa.rust_path.as_str(), fa.rust_flat),
        ("kernels/a.cu::fill", "kernels::a::FILL", false)
    );
    assert_eq!(
        (fb.display_name.as_str(), fb.rust_path.as_str(), fb.line),
        ("kernels/sub/b.cu::fill", "kernels::sub::b::FILL", 3)
    );
    let only = kernel(&m, "kernels/a.cu::only_a");
    assert_eq!(
        (only.display_name.as_str(), only.rust_path.as_str(), only.rust_flat),
        ("only_a", "kernels::a::ONLY_A", true)
    );
    assert_eq!(m.modules.iter().map(|x| x.rust_module.as_str()).collect::<Vec<_>>(), ["kernels::a", "kernels::sub::b"]);

    let code = crate::embed::generate(&m);
    assert!(code.contains("pub use self::kernels::a::ONLY_A;"), "{code}");
    assert!(!code.contains("pub use self::kernels::a::FILL;"), "{code}");
    assert!(code.contains("    &kernels::a::FILL,\n    &kernels::a::ONLY_A,\n    &kernels::sub::b::FILL,\n"), "{code}");
    // `sub` holds `b`; each module reaches the private module statics at the include site.
    assert!(
        code.contains("    pub mod sub {\n        //! The kernels of the folder `sub`.\n        pub mod b {"),
        "{code}"
    );
    assert!(code.contains("module: &super::super::super::__LAUNCH_MODULE_1,"), "{code}");
}

#[test]
fn per_kernel_host_threads_reach_the_generated_statics() {
    // Before: every static got the crate's `threads`, whatever `kernel."<pattern>"` said, so
    // `block_size()` launched at a size `report` and `check` had not evaluated.
    let c = config_with("\"sm_90\"", "[package.metadata.launch.kernel.\"fill_*\"]\nthreads = 128\n");
    let f = source("kernels/f.cu");
    let text = "extern \"C\" __global__ void fill_a(float* x) {}\nextern \"C\" __global__ void other(float* x) {}\n";
    let d = defs(text);
    let files = [plain_file(&f, text, &d, vec![output("sm_90", &["fill_a", "other"])])];
    let m = manifest(&c, toolchain(), &files).expect("manifest");
    assert_eq!(kernel(&m, "kernels/f.cu::fill_a").host_threads, Some(128));
    assert_eq!(kernel(&m, "kernels/f.cu::other").host_threads, None);
    let code = crate::embed::generate(&m);
    // The text of one generated static, up to the next.
    let static_of = |name: &str| {
        let at = code.find(&format!("pub static {name}:")).unwrap_or_else(|| panic!("{name} in {code}"));
        let end = code[at + 1..].find("pub static").map_or(code.len(), |n| at + 1 + n);
        code[at..end].to_string()
    };
    assert!(static_of("FILL_A").contains("host_threads: 128,"), "{code}");
    assert!(static_of("OTHER").contains("host_threads: 256,"), "{code}");
}

/// A tuned kernel's static points at its hidden variants array; each variant embedded on some
/// arch is a `Kernel` with its own entry, contract, module and resources; one refused on every
/// arch has no static; the plain kernel and KERNELS are as without a grid.
#[test]
fn tune_variants_are_hidden_statics_reached_through_their_kernel() {
    use launch_schema::manifest::{RefusedArch, VariantEntry};
    let c = config("\"sm_90\"");
    let f = source("kernels/p.cu");
    let text = "extern \"C\" __global__ void poly(float* x) {}\n";
    let d = defs(text);
    let files = [plain_file(&f, text, &d, vec![output("sm_90", &["poly"])])];
    let mut m = manifest(&c, toolchain(), &files).unwrap();
    let plain = crate::embed::generate(&m);
    let contract = launch::Contract {
        source: ContractSource::LaunchBounds,
        threads: Some(1024),
        min_blocks: Some(2),
        max_regs: Some(32),
        exact: false,
    };
    let module = ModuleEntry {
        file: "kernels/p.cu".into(),
        ptx: "variants/kernels+p.cu.poly__t1024_b2_r32.sm_90.ptx".into(),
        ptx_arch: arch("sm_90"),
        ptx_version: "8.8".into(),
        cubins: vec![CubinEntry {
            arch: arch("sm_90"),
            path: "variants/kernels+p.cu.poly__t1024_b2_r32.sm_90.cubin".into(),
        }],
        extra_ptx: Vec::new(),
        rust_module: String::new(),
        ptxas_flags: Vec::new(),
    };
    let resources = launch::Resources { registers: 32, ..Default::default() };
    m.kernels[0].variants = vec![
        VariantEntry {
            name: "poly__t1024_b2_r32".into(),
            contract,
            module: Some(module),
            arches: vec![KernelArch {
                arch: arch("sm_90"),
                resources,
                ptxas_lines: Vec::new(),
                dynamic_stack: None,
                contract: None,
            }],
            refused: Vec::new(),
        },
        VariantEntry {
            name: "poly__t64".into(),
            contract: launch::Contract { threads: Some(64), min_blocks: None, max_regs: None, ..contract },
            module: None,
            arches: Vec::new(),
            refused: vec![RefusedArch { arch: arch("sm_90"), reason: "cannot launch".into(), resources }],
        },
    ];
    let code = crate::embed::generate(&m);
    assert!(
        code.contains(
            "static __LAUNCH_VARIANT_MODULE_0_0: ::launch::Module = ::launch::Module {\n    file: \"kernels/p.cu\","
        ),
        "{code}"
    );
    assert!(code.contains("/launch/variants/kernels+p.cu.poly__t1024_b2_r32.sm_90.cubin\")) },"), "{code}");
    assert!(code.contains("        variants: &POLY__VARIANTS,\n"), "{code}");
    assert!(code.contains("        #[doc(hidden)]\n        pub static POLY__VARIANTS: [::launch::Kernel; 1] = [\n            ::launch::Kernel {\n                name: \"poly__t1024_b2_r32\",\n                demangled: \"poly__t1024_b2_r32\",\n                line: 1,\n                module: &super::super::__LAUNCH_VARIANT_MODULE_0_0,\n                contract: Some(::launch::Contract { source: ::launch::ContractSource::LaunchBounds, threads: Some(1024), min_blocks: Some(2), max_regs: Some(32), exact: false }),"), "{code}");
    assert!(!code.contains("poly__t64") && !code.contains("__LAUNCH_VARIANT_MODULE_0_1"), "{code}");
    // Without the variants the code is the plain kernel's, byte for byte.
    let without: String = code.replace("variants: &POLY__VARIANTS,", "variants: &[],");
    let cut = |c: &str| c.lines().filter(|l| !l.contains("VARIANT") && !l.trim().is_empty()).count();
    assert!(cut(&without) > cut(&plain), "the variants add lines");
    assert!(plain.contains("        variants: &[],\n"), "{plain}");
    assert!(code.contains("pub static KERNELS: &[&::launch::Kernel] = &[\n    &kernels::p::POLY,\n];"), "{code}");
}

#[test]
fn overloads_in_one_file_get_their_parameter_types_and_true_clashes_are_errors() {
    let c = config("\"sm_90\"");
    let f = source("kernels/o.cu");
    let text = "__global__ void k(float* x) {}\n__global__ void k(int* x) {}\n";
    let d = defs(text);
    let files = [plain_file(&f, text, &d, vec![output("sm_90", &["_Z1kPf", "_Z1kPi"])])];
    let m = manifest(&c, toolchain(), &files).expect("overloads are named apart");
    let names: Vec<&str> = m.kernels.iter().map(|k| k.rust_name.as_str()).collect();
    assert!(names.contains(&"K_FLOAT") && names.contains(&"K_INT"), "{names:?}");

    // `a<b>` and `a_b` are one Rust name with and without parameters: an error at the kernel.
    let text = "__global__ void a_b() {}\n";
    let d = defs(text);
    let files = [plain_file(&f, text, &d, vec![output("sm_90", &["a_b", "_Z1aI1bEvv"])])];
    let Err(Error::Kernels(e)) = manifest(&c, toolchain(), &files) else { panic!("a clash in one file is an error") };
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].message.contains("would be generated as `kernels::o::A_B`")
            && e[0].to_string().contains("rename one of them"),
        "{e:?}"
    );
}

#[test]
fn module_paths_are_identifiers_and_never_collide() {
    let files = ["k/a-b.cu", "k/a_b.cu", "k/A_B.cu", "k/2d.cu", "k/mod.cu", "k/sub.cu", "k/sub/x.cu", "k/é.cu"];
    assert_eq!(
        module_paths("k", &files),
        [
            "kernels::a_b_3",
            "kernels::a_b",
            "kernels::a_b_2",
            "kernels::k_2d",
            "kernels::mod_",
            "kernels::sub",
            "kernels::sub::x",
            "kernels::k__",
        ]
    );
}

#[test]
fn a_kernel_gated_by_arch_lists_its_arches_its_missing_ones_and_gets_a_ptx() {
    let c = config("\"sm_80\", \"sm_90\"");
    let (g, h) = (source("kernels/gated.cu"), with_arch("kernels/hopper.cu", Some(vec![arch("sm_90")])));
    let text = "extern \"C\" __global__ void all() {}\n#if __CUDA_ARCH__ >= 900\nextern \"C\" __global__ void fp8() {}\n#endif\n";
    let d = defs(text);
    let files = [
        plain_file(&g, text, &d, vec![output("sm_80", &["all"]), output("sm_90", &["all", "fp8"])]),
        // A file whose own setting is arch = ["sm_90"].
        FileOutputs {
            file: &h,
            text: "extern \"C\" __global__ void h() {}\n",
            annotations: &[],
            definitions: &[],
            outputs: vec![output("sm_90", &["h"])],
            fresh: vec![true],
        },
    ];
    let m = manifest(&c, toolchain(), &files).unwrap();
    let fp8 = kernel(&m, "kernels/gated.cu::fp8");
    assert_eq!(fp8.arches.iter().map(|a| a.arch.to_string()).collect::<Vec<_>>(), ["sm_90"]);
    assert_eq!(fp8.missing, [MissingArch { arch: arch("sm_80"), reason: "absent from the PTX".into() }]);
    assert!(kernel(&m, "kernels/gated.cu::all").missing.is_empty());
    // The sm_80 PTX lacks fp8: the sm_90 PTX is embedded too.
    assert_eq!(
        m.modules[0].extra_ptx.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(),
        ["ptx/kernels+gated.cu.sm_90.ptx"]
    );
    let hk = kernel(&m, "kernels/hopper.cu::h");
    assert_eq!(hk.missing, [MissingArch { arch: arch("sm_80"), reason: "file setting arch = [sm_90]".into() }]);
    // Its lowest arch is sm_90: that is its fallback PTX, nothing extra.
    assert_eq!((m.modules[1].ptx_arch, m.modules[1].extra_ptx.len()), (arch("sm_90"), 0));
    assert_eq!(m.modules[1].cubins.len(), 1);
    // The generated module embeds the extra PTX for the runtime.
    let code = crate::embed::generate(&m);
    assert!(code.contains("::launch::PtxText { arch: ::launch::Arch::new(9, 0, ::launch::Variant::Base), text: include_str!(concat!(env!(\"OUT_DIR\"), \"/launch/ptx/kernels+gated.cu.sm_90.ptx\")) },"), "{code}");
    assert!(code.contains("    ptx_arch: Some(::launch::Arch::new(8, 0, ::launch::Variant::Base)),\n"), "{code}");
    assert!(
        code.contains(
            "::launch::ArchResources { arch: ::launch::Arch::new(9, 0, ::launch::Variant::Base), resources: "
        ),
        "{code}"
    );
    // No arch name is left for the run time to parse.
    assert!(!code.contains("arch: \"") && !code.contains("ptx_arch: \""), "{code}");
    assert!(code.contains("/// Not compiled for sm_80: absent from the PTX."), "{code}");
}

/// `LAUNCH_ALL_PTX=1` (what `cargo launch explore` builds with) writes every arch's PTX under
/// `ptx-all/`, which nothing embeds; a build without it empties the folder again.
#[test]
fn every_arch_ptx_is_written_only_when_asked() {
    let c = config("\"sm_80\", \"sm_90\"");
    let g = source("kernels/gated.cu");
    let text = "extern \"C\" __global__ void all() {}\n";
    let d = defs(text);
    let files = [plain_file(&g, text, &d, vec![output("sm_80", &["all"]), output("sm_90", &["all"])])];
    let m = manifest(&c, toolchain(), &files).unwrap();
    let out = tempfile::tempdir().unwrap();
    crate::embed::write(out.path(), &m, &files, &[], true).unwrap();
    let all: Vec<String> = ["sm_80", "sm_90"].iter().map(|a| all_ptx_path("kernels/gated.cu", arch(a))).collect();
    assert_eq!(all, ["ptx-all/kernels+gated.cu.sm_80.ptx", "ptx-all/kernels+gated.cu.sm_90.ptx"]);
    assert!(all.iter().all(|p| out.path().join(p).is_file()));
    assert!(!crate::embed::generate(&m).contains("ptx-all"), "never embedded");
    crate::embed::write(out.path(), &m, &files, &[], false).unwrap();
    assert!(all.iter().all(|p| !out.path().join(p).exists()));
}

#[test]
fn a_file_whose_setting_shares_no_arch_is_a_warning_not_a_silent_gap() {
    let c = config("\"sm_80\"");
    let h = with_arch("kernels/hopper.cu", Some(vec![arch("sm_90")]));
    let files = [FileOutputs {
        file: &h,
        text: "",
        annotations: &[],
        definitions: &[],
        outputs: Vec::new(),
        fresh: Vec::new(),
    }];
    let m = manifest(&c, toolchain(), &files).unwrap();
    assert!(m.modules.is_empty());
    assert_eq!(
        m.warnings,
        ["kernels/hopper.cu: not compiled: its `arch` setting [sm_90] shares no arch with the build's [sm_80]"]
    );
}

#[test]
fn macro_generated_kernels_are_at_the_invocation_and_none_at_line_0() {
    let c = config("\"sm_90\"");
    let f = source("kernels/unary.cu");
    let text = "#define UNARY_OP(T, NAME) \\\n  extern \"C\" __global__ void NAME(T* x) { x[0] = 0; }\n\nUNARY_OP(float, ucopy_f32)\n  UNARY_OP(double, ucopy_f64)\n";
    let d = defs(text);
    let files = [plain_file(&f, text, &d, vec![output("sm_90", &["ucopy_f32", "ucopy_f64", "from_a_header"])])];
    let m = manifest(&c, toolchain(), &files).unwrap();
    let at = |q: &str| {
        let k = kernel(&m, q);
        (k.line, k.col, k.origin.clone())
    };
    let by = Origin::Macro { name: "UNARY_OP".into() };
    assert_eq!(at("kernels/unary.cu::ucopy_f32"), (4, 1, by.clone()));
    assert_eq!(at("kernels/unary.cu::ucopy_f64"), (5, 3, by));
    // Not in the file at all: line 1 stands for the file, and the manifest says so.
    assert_eq!(at("kernels/unary.cu::from_a_header"), (1, 1, Origin::NotFound));
    assert!(m.kernels.iter().all(|k| k.line > 0));
}

/// A module records the ptxas options its file was assembled with (the crate's, then its file
/// tables'), so `cargo launch explore` assembles its PTX as the build did.
#[test]
fn a_module_records_its_files_ptxas_options() {
    let c = config("\"sm_90\"");
    let mut f = source("kernels/a.cu");
    f.settings.ptxas_flags = vec!["--opt-level=2".into(), "--warn-on-spills".into()];
    let plain = source("kernels/b.cu");
    let text = "extern \"C\" __global__ void k(float* x) {}\n";
    let d = defs(text);
    let files = [
        plain_file(&f, text, &d, vec![output("sm_90", &["k"])]),
        plain_file(&plain, text, &d, vec![output("sm_90", &["k"])]),
    ];
    let m = manifest(&c, toolchain(), &files).unwrap();
    assert_eq!(m.modules[0].ptxas_flags, ["--opt-level=2", "--warn-on-spills"]);
    assert!(m.modules[1].ptxas_flags.is_empty());
    let json = serde_json::to_string(&m).unwrap();
    assert_eq!(json.matches("ptxas_flags").count(), 1, "left out when empty: {json}");
}
