use launch_schema::manifest::{CubinEntry, ModuleEntry, PtxEntry};

use super::*;
use crate::records::testing;

/// A package of arches `arches` whose one file `kernels/many.cu` embeds a cubin per arch and the
/// lowest arch's PTX of ISA `isa`, built by `toolkit`, to run on `min_driver`.
fn package(
    dir: &std::path::Path,
    arches: &[&str],
    toolkit: &str,
    isa: &str,
    min_driver: Option<&str>,
) -> PackageKernels {
    let mut p = testing::package(dir, 1, arches, &[]);
    let m = &mut p.manifest;
    m.toolchain.compilers.nvrtc = toolkit.into();
    m.toolchain.compilers.ptxas = toolkit.into();
    m.min_driver = min_driver.map(str::to_string);
    m.modules = vec![ModuleEntry {
        file: "kernels/many.cu".into(),
        ptx: "ptx/many.ptx".into(),
        ptx_arch: m.arches[0],
        ptx_version: isa.into(),
        cubins: m.arches.iter().map(|&arch| CubinEntry { arch, path: format!("cubin/{arch}") }).collect(),
        extra_ptx: Vec::new(),
        rust_module: "kernels::many".into(),
        ptxas_flags: Vec::new(),
    }];
    p
}

fn texts(f: &[Finding]) -> Vec<(Severity, Option<String>, String)> {
    f.iter().map(|f| (f.severity, f.arch.map(|a| a.to_string()), f.message())).collect()
}

#[test]
fn the_default_min_driver_is_the_toolchains_and_finds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = package(dir.path(), &["sm_80", "sm_90"], "12.9.86", "8.8", None);
    assert!(findings(&p).is_empty());
    assert_eq!(
        header_line(&p).unwrap(),
        "drivers: cubins sm_80, sm_90: driver >= 12.0 (CUDA 12 cubins); PTX compute_80 (ISA 8.8): driver >= 12.9; \
         min-driver 12.9"
    );
}

#[test]
fn a_12_4_driver_loads_12_9_cubins_but_a_newer_gpu_finds_no_ptx_it_jits() {
    let dir = tempfile::tempdir().unwrap();
    let p = package(dir.path(), &["sm_80"], "12.9.86", "8.8", Some("12.4"));
    let f = findings(&p);
    assert_eq!(f.len(), 1, "{:#?}", texts(&f));
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(
        f[0].message(),
        "a GPU newer than every listed arch (sm_90, sm_100 …) would find nothing to load from kernels/many.cu with a \
         CUDA 12.4 driver (`min-driver`): cubins run only on their own major version, and the PTX compute_80 (ISA 8.8) needs a \
         driver >= 12.9; add its arch to `arch` or raise `min-driver`"
    );
    let needs = needs(&p);
    assert!(needs[0].loads_on_min_driver && !needs[1].loads_on_min_driver, "{needs:#?}");
    // The newest arch listed: no newer GPU exists, nothing to warn about.
    let p = package(dir.path(), &["sm_121"], "12.9.86", "8.8", Some("12.4"));
    assert!(findings(&p).is_empty());
}

#[test]
fn cuda_13_cubins_and_isa_9_0_on_a_12_x_driver_are_an_error_per_arch() {
    let dir = tempfile::tempdir().unwrap();
    let p = package(dir.path(), &["sm_90", "sm_100"], "13.0.88", "9.0", Some("12.8"));
    let f = texts(&findings(&p));
    assert_eq!(f.len(), 3, "{f:#?}");
    assert_eq!(f[0].0, Severity::Error);
    assert_eq!(f[0].1.as_deref(), Some("sm_90"));
    assert_eq!(
        f[0].2,
        "nothing embedded for kernels/many.cu loads on sm_90 with a CUDA 12.8 driver (`min-driver`): cubins built by \
         CUDA 13.0 need a CUDA 13 driver (>= 13.0, Linux 580.65.06+); PTX compute_90 (ISA 9.0) needs a driver >= 13.0; \
         raise `min-driver` or build with an older toolchain"
    );
    // sm_100 runs the compute_90 PTX too, but 12.8 cannot JIT ISA 9.0 either.
    assert_eq!(f[1].1.as_deref(), Some("sm_100"));
    assert_eq!(f[2].0, Severity::Warning);
    // A 13.0 driver loads both.
    let p = package(dir.path(), &["sm_90", "sm_100"], "13.0.88", "9.0", Some("13.0"));
    assert!(findings(&p).is_empty());
}

#[test]
fn a_ptx_the_driver_jits_rescues_an_arch_whose_cubin_it_cannot_load() {
    let dir = tempfile::tempdir().unwrap();
    // Cubins of 13.0 on a 12.9 driver do not load, but PTX of ISA 8.8 (written for 12.9) does.
    let mut p = package(dir.path(), &["sm_80", "sm_90"], "13.0.88", "8.8", Some("12.9"));
    assert!(findings(&p).is_empty(), "{:#?}", texts(&findings(&p)));
    // An `a` PTX runs on its own chip only: an sm_90a-only package warns about no newer GPU.
    p.manifest.arches = vec!["sm_90a".parse().unwrap()];
    p.manifest.modules[0].ptx_arch = p.manifest.arches[0];
    p.manifest.modules[0].ptx_version = "9.0".into();
    p.manifest.modules[0].cubins.clear();
    p.manifest.modules[0].extra_ptx.push(PtxEntry {
        arch: p.manifest.arches[0],
        path: "x".into(),
        version: "9.0".into(),
    });
    let f = texts(&findings(&p));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(f[0].2.starts_with("nothing embedded for kernels/many.cu loads on sm_90a"), "{f:#?}");
}

#[test]
fn min_driver_is_located_in_cargo_toml() {
    let dir = tempfile::tempdir().unwrap();
    let p = package(dir.path(), &["sm_80"], "12.9.86", "8.8", Some("12.4"));
    let toml = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&toml).unwrap() + "min-driver = \"12.4\"\n";
    std::fs::write(&toml, text).unwrap();
    let l = findings(&p)[0].location.clone().unwrap();
    assert_eq!((l.file.as_str(), l.line, l.col), ("Cargo.toml", 7, 1));
    assert_eq!(files(&["a", "b", "c", "d", "e"]), "a, b, c and 2 more files");
    assert_eq!(files(&["a", "b"]), "a and b");
}
