//! Issue 33 item 6 on real code beyond candle (tests/candle_kernels.rs): the CUDA folders of the
//! published dfdx 0.13.0 (NVRTC files) and mistralrs-quant 0.8.1 (`host` files: nvcc, host code
//! and all), fetched through cargo and built unmodified through `cargo launch report`. Every
//! kernel's parameters are recovered and held to its PTX (or, for a `host` file, its cubins'
//! symbols) on every arch (the build fails otherwise), and every kernel's generated static is a
//! typed one that `report`'s `cargo check` of the crate compiled with `launch`'s cudarc types.
//!
//! Cost: the packages are downloaded once per machine, and their kernels compile through the
//! ordinary kernel cache: only the first run on a machine compiles them.

use std::time::Instant;

use crate::candle_kernels::{crate_with, launch_dir, read_manifest, registry_package, report_json};
use crate::support::{toolchain_root, typed_statics};

/// Builds `package`'s kernel folder `folder` (in the registry copy of `name` `version`) with
/// `metadata`; asserts that every kernel is typed and returns `(kernels, parameters)`.
fn every_kernel_typed(name: &str, version: &str, folder: &str, metadata: &str) -> (usize, usize) {
    toolchain_root();
    let started = Instant::now();
    let sources = registry_package(&format!("real_signatures/{name}"), name, version);
    let package = format!("{name}-unmodified");
    let dir = crate_with(&package, &sources.join(folder), folder, metadata);
    let report = report_json(dir.path());
    let launch = launch_dir(&package);
    let manifest = read_manifest(&launch);
    let unknown: Vec<String> = manifest
        .kernels
        .iter()
        .filter(|k| k.params.is_none())
        .map(|k| format!("{}: {}", k.name, k.params_unknown.as_deref().unwrap_or("?")))
        .collect();
    assert!(unknown.is_empty(), "{name}: kernels without recovered parameters: {unknown:#?}");
    let kernels_rs = std::fs::read_to_string(launch.join("kernels.rs")).expect("kernels.rs");
    let (typed, untyped) = typed_statics(&kernels_rs);
    assert!(untyped.is_empty(), "{name}: kernels launched untyped: {untyped:#?}");
    assert_eq!(typed, manifest.kernels.len(), "{name}: typed statics");
    assert_eq!(
        report.records.iter().filter(|r| r.params.is_none()).count(),
        0,
        "{name}: report records without params"
    );
    let params = manifest.kernels.iter().map(|k| k.params.as_ref().map_or(0, Vec::len)).sum();
    eprintln!(
        "{name} {version}: {} kernels in {} files, all typed ({params} parameters), {:.1?}",
        manifest.kernels.len(),
        manifest.modules.len(),
        started.elapsed()
    );
    (typed, params)
}

#[test]
fn dfdx_kernels_are_all_typed() {
    let (kernels, _) = every_kernel_typed(
        "dfdx",
        "0.13.0",
        "src",
        "arch = [\"sm_80\"]\nkernels = \"src\"\ninclude = [\"src/tensor_ops/utilities\"]",
    );
    assert_eq!(kernels, 493);
}

#[test]
fn mistralrs_quant_kernels_are_all_typed() {
    let (kernels, _) = every_kernel_typed(
        "mistralrs-quant",
        "0.8.1",
        "kernels",
        "arch = [\"sm_80\", \"sm_90\"]\n\
         toolchain = \"13.0\"\n\
         kernels = \"kernels\"\n\
         host = [\"*/*.cu\"]\n\
         exclude = [\"*/dummy_*.cu\", \"*/*_dummy.cu\"]\n\
         flags = [\"-std=c++17\", \"-U__CUDA_NO_HALF_OPERATORS__\", \"-U__CUDA_NO_HALF_CONVERSIONS__\", \
         \"-U__CUDA_NO_HALF2_OPERATORS__\", \"-U__CUDA_NO_BFLOAT16_CONVERSIONS__\", \"--expt-relaxed-constexpr\", \
         \"--expt-extended-lambda\", \"--use_fast_math\"]",
    );
    assert_eq!(kernels, 635);
}
