//! Issue 33 item 1: every kernel's parameter list recovered from the compiler, never from the
//! source text — a C++ kernel's from its mangled symbol, an `extern "C"` kernel's from the lowered
//! name of a `decltype` probe — and held to the PTX's `.param` list on every arch. On
//! `fixtures/crates/signatures`: typedefs (`real`, `uint`, `size_t`) and macros resolved, every
//! scalar width, half and bfloat16 (and their pairs), vector types, a struct by value (its size and
//! alignment the PTX's), a template instantiation, overloads; and the fallback, said, for a file
//! whose probe cannot name a kernel.

use launch_schema::manifest::{Manifest, ParamKind};

use crate::support::{cargo_launch, fixture, fixtures_target, run};

/// `(type as the compiler names it, Rust type or pointee, size, align)`; `*` before the pointee
/// marks a pointer the kernel may write, `&` one it only reads, `?` an opaque value.
const EVERY_KIND: [(&str, &str, u32, u32); 19] = [
    ("float const*", "&float", 8, 8),
    ("float*", "*float", 8, 8),
    ("int", "i32", 4, 4),
    ("unsigned long", "u64", 8, 8),
    ("unsigned int", "u32", 4, 4),
    ("long long", "i64", 8, 8),
    ("__half", "f16", 2, 2),
    ("__half2", "f16x2", 4, 4),
    ("__nv_bfloat16", "bf16", 2, 2),
    ("__nv_bfloat162", "bf16x2", 4, 4),
    ("float4", "f32x4", 16, 16),
    ("int2", "i32x2", 8, 8),
    ("Params", "?", 24, 8),
    ("bool", "bool", 1, 1),
    ("unsigned char", "u8", 1, 1),
    ("signed char", "i8", 1, 1),
    ("char", "i8", 1, 1),
    ("double", "f64", 8, 8),
    ("unsigned short", "u16", 2, 2),
];

fn short(kind: &ParamKind) -> String {
    match kind {
        ParamKind::Pointer { pointee, mutable: true } => format!("*{pointee}"),
        ParamKind::Pointer { pointee, mutable: false } => format!("&{pointee}"),
        ParamKind::Value { rust } => rust.to_string(),
        ParamKind::Opaque => "?".into(),
    }
}

#[test]
fn every_kernels_parameters_come_from_the_compiler_and_agree_with_the_ptx() {
    let dir = fixture("signatures");
    let (code, _, stderr) = run(cargo_launch().args(["launch", "report", "--format", "json"]).current_dir(dir.path()));
    assert_eq!(code, 0, "{stderr}");
    let manifest = newest_manifest("fixture-signatures");
    let params = |name: &str| {
        let k = manifest.kernels.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("{name}"));
        k.params
            .as_ref()
            .map(|p| p.iter().map(|p| (p.ty.to_string(), short(&p.kind), p.size, p.align)).collect::<Vec<_>>())
    };
    let expected: Vec<_> = EVERY_KIND.iter().map(|(t, k, s, a)| (t.to_string(), k.to_string(), *s, *a)).collect();
    assert_eq!(params("every_kind"), Some(expected));
    // Kernels a macro generates: the types it was given.
    let unary = |t: &str| {
        Some(vec![
            (format!("{t} const*"), format!("&{t}"), 8, 8),
            (format!("{t}*"), format!("*{t}"), 8, 8),
            ("unsigned long".into(), "u64".into(), 8, 8),
        ])
    };
    assert_eq!(params("ucopy_f32"), unary("float"));
    assert_eq!(params("ucopy_f64"), unary("double"));
    let tk = params("_ZN2ns2tkIfLi4EEEvPT_6ParamsPK7__half2y").unwrap();
    let tk: Vec<&str> = tk.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(tk, ["*float", "?", "&__half2", "u64"]);
    assert_eq!(params("_Z10overloadedPi").unwrap().len(), 1);
    assert_eq!(params("_Z10overloadedPfi").unwrap().len(), 2);
    assert_eq!(params("_Z9no_paramsv"), Some(Vec::new()));
    // A kernel only the higher arch builds (an `#if __CUDA_ARCH__` in its file): that arch's probe.
    let gated = params("only_on_sm100").unwrap();
    assert_eq!(gated.iter().map(|p| p.1.as_str()).collect::<Vec<_>>(), ["&double", "*double", "u32"]);

    // The file whose probe cannot compile: its extern "C" kernels have none, and say why.
    for name in ["in_namespace", "beside_it"] {
        let k = manifest.kernels.iter().find(|k| k.name == name).unwrap();
        assert_eq!(k.params, None, "{name}");
        assert!(k.params_unknown.as_deref().is_some_and(|w| w.contains("probe did not compile")), "{name}: {k:?}");
    }
    assert_eq!(params("_Z13cpp_beside_itPdi").map(|p| p.len()), Some(2));

    // The report carries them.
    let (_, json, _) = run(cargo_launch().args(["launch", "report", "--format", "json"]).current_dir(dir.path()));
    let doc = launch_schema::report::Document::from_json(&json).unwrap();
    let r = doc.records.iter().find(|r| r.kernel.name == "ucopy_f64").unwrap();
    assert_eq!(r.params.as_ref().map(Vec::len), Some(3));
}

/// A `host` file (nvcc, toolchain 13.0): the `extern "C"` kernel's parameters from nvcc's host stub
/// in the object (`__device_stub__Z6axpy_cfPKfPfm`, typedef resolved), the C++ template's from its
/// mangled name.
#[test]
fn a_host_files_kernels_get_their_parameters_from_the_object_and_the_mangled_names() {
    let dir = fixture("host_signatures");
    let (code, _, stderr) = run(cargo_launch().args(["launch", "report", "--format", "json"]).current_dir(dir.path()));
    assert_eq!(code, 0, "{stderr}");
    let manifest = newest_manifest("fixture-host-signatures");
    let types = |name: &str| {
        let k = manifest.kernels.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("{name}: {manifest:?}"));
        k.params.as_ref().map(|p| p.iter().map(|p| short(&p.kind)).collect::<Vec<_>>())
    };
    assert_eq!(types("axpy_c"), Some(vec!["f32".into(), "&float".into(), "*float".into(), "u64".into()]));
    assert_eq!(types("_Z4fillIdEvPT_S0_i"), Some(vec!["*double".into(), "f64".into(), "i32".into()]));
}

/// The manifest the last build of `package` wrote in the fixtures' target folder.
fn newest_manifest(package: &str) -> Manifest {
    let build = fixtures_target().join("debug/build");
    let newest = std::fs::read_dir(&build)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("{package}-")))
        .map(|e| e.path().join("out/launch/manifest.json"))
        .filter(|p| p.is_file())
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .expect("a manifest");
    Manifest::from_json(&std::fs::read_to_string(newest).unwrap()).unwrap()
}
