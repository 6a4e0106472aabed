use crate::support::{cargo_launch, fixture, run, toolchain_root};

fn report(dir: &tempfile::TempDir) -> (i32, String, String) {
    run(cargo_launch().args(["launch", "report", "--manifest-path"]).arg(dir.path().join("Cargo.toml")))
}

fn set_metadata(dir: &tempfile::TempDir, extra: &str) {
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("arch = [\"sm_80\"]", &format!("arch = [\"sm_80\"]\n{extra}"))).unwrap();
}

/// Each header nvcc users take for granted is included and used (INFINITY, NAN, M_PI, uint32_t,
/// SIZE_MAX, FLT_MAX, INT_MAX, assert, printf, std::numeric_limits, std::is_same, std::move,
/// std::swap), a file with no include at all uses what nvcc's implicit includes give, and CCCL's
/// cub::BlockReduce and cuda::std compile: the crate builds unchanged, with no warning about our
/// headers.
#[test]
fn the_headers_nvcc_users_take_for_granted_compile() {
    toolchain_root();
    let dir = fixture("headers");
    let (code, stdout, stderr) = report(&dir);
    assert_eq!(code, 0, "{stderr}");
    for kernel in ["c_headers", "max_f32", "max_i64", "implicit", "block_max", "warp_sum"] {
        assert!(stdout.contains(kernel), "{kernel} missing from the report:\n{stdout}");
    }
    assert!(!stderr.contains("redefinition"), "{stderr}");
}

/// `std-headers = false` turns the headers off; a file that needs one fails with NVRTC's message
/// and a note naming the setting.
#[test]
fn std_headers_false_turns_them_off_with_a_hint() {
    toolchain_root();
    let dir = fixture("headers");
    set_metadata(&dir, "std-headers = false");
    for f in ["std_cpp.cu", "no_include.cu", "cccl.cu"] {
        std::fs::remove_file(dir.path().join("kernels").join(f)).unwrap();
    }
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("kernels/std_c.cu(2): catastrophic error: cannot open source file \"stdint.h\""),
        "{stderr}"
    );
    assert!(stderr.contains("`std-headers = false` in [package.metadata.launch] turns them off"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A host-only header gets an error that says NVRTC compiles device code only and what to do.
#[test]
fn a_host_only_header_gets_a_clear_error() {
    toolchain_root();
    let dir = fixture("headers");
    std::fs::write(
        dir.path().join("kernels/host.cu"),
        "#include <vector>\nextern \"C\" __global__ void k(float* p) { p[0] = 1.0f; }\n",
    )
    .unwrap();
    let (code, _, stderr) = report(&dir);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("kernels/host.cu(1): catastrophic error: cannot open source file \"vector\""), "{stderr}");
    assert!(stderr.contains("<vector> is a host-only header: NVRTC compiles device code only"), "{stderr}");
    assert!(stderr.contains("`exclude`"), "{stderr}");
}

/// `<cuda.h>` (the driver API's host header, included by real kernel files for CUDA_VERSION and
/// CUtensorMap) compiles as device code.
#[test]
fn cuda_h_gives_device_code_its_version_and_types() {
    toolchain_root();
    let dir = fixture("headers");
    std::fs::write(
        dir.path().join("kernels/driver.cu"),
        "#include <cuda.h>\n#if CUDA_VERSION < 12000\n#error old\n#endif\n\
         extern \"C\" __global__ void tma(const __grid_constant__ CUtensorMap map, CUdeviceptr out) {\n\
         *reinterpret_cast<unsigned long long*>(out) = map.opaque[0];\n}\n",
    )
    .unwrap();
    let (code, stdout, stderr) = report(&dir);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("tma"), "{stdout}");
}
