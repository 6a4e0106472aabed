use super::*;

/// NVRTC 12.9's PTX for `extern "C" __global__ void poly(const float *x, float *y, int n,
/// size_t m, uint u, long long ll, __half h, __half2 h2, float4 v, Params p, bool b,
/// unsigned char uc, signed char sc, char ch)` (13.5 writes the same list).
const PTX: &str = "
.visible .entry poly(
	.param .u64 poly_param_0,
	.param .u64 poly_param_1,
	.param .u32 poly_param_2,
	.param .u64 poly_param_3,
	.param .u32 poly_param_4,
	.param .u64 poly_param_5,
	.param .align 2 .b8 poly_param_6[2],
	.param .align 4 .b8 poly_param_7[4],
	.param .align 16 .b8 poly_param_8[16],
	.param .align 8 .b8 poly_param_9[24],
	.param .u8 poly_param_10,
	.param .u8 poly_param_11,
	.param .u8 poly_param_12,
	.param .u8 poly_param_13
)
{
	ret;
}
.visible .entry empty()
{
	ret;
}
";

/// The probe's lowered name for `poly`, as NVRTC 12.9 gave it, demangled.
const PROBE_DEMANGLED: &str = "void __launch_probe<void (float const*, float*, int, unsigned long, unsigned int, long \
                               long, __half, __half2, float4, Params, bool, unsigned char, signed char, char)>()";

#[test]
fn the_ptx_param_list_gives_each_size_and_alignment() {
    let p = ptx_params(PTX, "poly").unwrap();
    let got: Vec<(u32, u32)> = p.iter().map(|p| (p.size, p.align)).collect();
    assert_eq!(
        got,
        [
            (8, 8),
            (8, 8),
            (4, 4),
            (8, 8),
            (4, 4),
            (8, 8),
            (2, 2),
            (4, 4),
            (16, 16),
            (24, 8),
            (1, 1),
            (1, 1),
            (1, 1),
            (1, 1)
        ]
    );
    assert_eq!(ptx_params(PTX, "empty"), Some(Vec::new()));
    assert_eq!(ptx_params(PTX, "absent"), None);
    // A pointer's attributes (`.ptr .global .align N`, as NVRTC writes for sm_100): the `.align`
    // is the pointee's, the parameter is 8 bytes at 8.
    let annotated = ".visible .entry k(\n\t.param .u64 .ptr .align 1 k_param_0,\n\t.param .u64 .ptr .global .align 16 k_param_1\n)\n{\n}\n";
    assert_eq!(ptx_params(annotated, "k"), Some(vec![PtxParam { size: 8, align: 8 }; 2]));
}

#[test]
fn an_extern_c_kernels_types_come_from_the_probe_and_match_the_ptx() {
    let types = probe_params(PROBE_DEMANGLED).unwrap();
    assert_eq!(types.len(), 14);
    let params = check(&types, &ptx_params(PTX, "poly").unwrap()).unwrap();
    let kinds: Vec<Kind> = params.iter().map(|p| p.kind.clone()).collect();
    assert_eq!(kinds[0], Kind::Pointer { pointee: "float".into(), mutable: false });
    assert_eq!(kinds[1], Kind::Pointer { pointee: "float".into(), mutable: true });
    assert_eq!(kinds[2..9].to_vec(), ["i32", "u64", "u32", "i64", "f16", "f16x2", "f32x4"].map(Kind::Value).to_vec());
    // A struct by value: opaque, its size and alignment the PTX's.
    assert_eq!((params[9].kind.clone(), params[9].size, params[9].align), (Kind::Opaque, 24, 8));
    assert_eq!(kinds[10..].to_vec(), ["bool", "u8", "i8", "i8"].map(Kind::Value).to_vec());
}

#[test]
fn a_cpp_kernels_types_come_from_its_demangled_symbol() {
    let t = demangled_params("void ns::tk<float, 4>(float*, Params, __half2 const*, unsigned long long)").unwrap();
    assert_eq!(t, ["float*", "Params", "__half2 const*", "unsigned long long"]);
    assert_eq!(kind(&t[2]), Kind::Pointer { pointee: "__half2".into(), mutable: false });
    // Template arguments and function pointers hold commas and brackets of their own.
    let t = demangled_params("void k<std::pair<int, int> >(Wrap<int, 2>, void (*)(int, int), int)").unwrap();
    assert_eq!(t, ["Wrap<int, 2>", "void (*)(int, int)", "int"]);
    assert_eq!(demangled_params("void k()"), Some(Vec::new()));
    assert_eq!(demangled_params("void k(void)"), Some(Vec::new()));
    assert_eq!(demangled_params("k"), None);
}

#[test]
fn a_disagreement_with_the_ptx_names_the_parameter() {
    let ptx = ptx_params(PTX, "poly").unwrap();
    let mut types = probe_params(PROBE_DEMANGLED).unwrap();
    types.pop();
    assert_eq!(check(&types, &ptx), Err(Mismatch::Count { types: 13, ptx: 14 }));
    types.push("double".into());
    let e = check(&types, &ptx).unwrap_err();
    assert_eq!(e, Mismatch::Layout { index: 13, ty: "double".into(), expected: (8, 8), ptx: (1, 1) });
    assert_eq!(e.to_string(), "parameter 13 (`double`) is 8 bytes aligned to 8, the PTX declares 1 bytes aligned to 1");
}

#[test]
fn the_probe_is_a_name_expression_of_the_kernels_type() {
    assert_eq!(probe_expression("ucopy_f32"), "&__launch_probe<decltype(ucopy_f32)>");
    assert!(PROBE.contains("template <class F> __global__ void __launch_probe() {}"));
}
