use crate::gpus::lookup;
use launch::compat::CudaVersion;
use launch::Arch;
use launch_schema::coverage::Outcome;
use launch_schema::manifest::{CubinEntry, ModuleEntry, PtxEntry};

use super::*;

fn a(s: &str) -> Arch {
    s.parse().unwrap()
}

fn cuda(s: &str) -> CudaVersion {
    driver_rules::parse_version(s).unwrap()
}

/// kernels/k.cu built for sm_80 and sm_90 by CUDA 12.9 (PTX ISA 8.8), its compute_90 PTX
/// embedded for an arch-gated kernel.
fn module() -> ModuleEntry {
    let cubin = |x: &str| CubinEntry { arch: a(x), path: format!("{x}.cubin") };
    ModuleEntry {
        file: "kernels/k.cu".into(),
        ptx: "k.sm_80.ptx".into(),
        ptx_arch: a("sm_80"),
        ptx_version: "8.8".into(),
        cubins: vec![cubin("sm_80"), cubin("sm_90")],
        extra_ptx: vec![PtxEntry { arch: a("sm_90"), path: "k.sm_90.ptx".into(), version: "8.8".into() }],
        rust_module: String::new(),
        ptxas_flags: Vec::new(),
    }
}

fn unit<'a>(m: &'a ModuleEntry, on: &[&str]) -> Unit<'a> {
    Unit {
        name: "k".into(),
        module: m,
        on: on.iter().map(|x| a(x)).collect(),
        built: vec![a("sm_80"), a("sm_90")],
        toolkit: Some(cuda("12.9")),
        own_isa: Some((8, 8)),
        host: false,
    }
}

fn at(u: &Unit, gpu: &str, driver: Option<&str>) -> (Outcome, Option<String>, Option<u32>) {
    let d: Option<CudaVersion> = driver.map(cuda);
    let l = predict(u, &lookup(gpu).unwrap(), d);
    (l.outcome, l.image.map(|x| x.to_string()), l.error)
}

#[test]
fn native_on_same_major_jit_on_newer_majors_nothing_on_older() {
    let m = module();
    let every = unit(&m, &[]);
    let native = |x: &str| (Outcome::Native, Some(x.to_string()), None);
    assert_eq!(at(&every, "A100", None), native("sm_80"));
    // sm_80's cubin runs on 8.6, 8.7 and 8.9; 9.0 has its own.
    assert_eq!(at(&every, "RTX 3090", None), native("sm_80"));
    assert_eq!(at(&every, "Jetson AGX Orin", None), native("sm_80"));
    assert_eq!(at(&every, "RTX 4090", None), native("sm_80"));
    assert_eq!(at(&every, "H200", None), native("sm_90"));
    // Newer majors JIT the lowest PTX; an older GPU has nothing (209).
    assert_eq!(at(&every, "B200", None), (Outcome::Jit, Some("sm_80".into()), None));
    assert_eq!(at(&every, "RTX 5090", Some("13.0")), (Outcome::Jit, Some("sm_80".into()), None));
    assert_eq!(at(&every, "T4", None), (Outcome::NoImage, None, Some(209)));
}

#[test]
fn a_driver_older_than_the_ptx_isa_refuses_it_with_222_and_the_fix_names_the_driver() {
    let m = module();
    let every = unit(&m, &[]);
    assert_eq!(at(&every, "B200", Some("12.4")), (Outcome::JitRefused, Some("sm_80".into()), Some(222)));
    let l = predict(&every, &lookup("B200").unwrap(), Some(cuda("12.4")));
    assert_eq!(l.fix.as_deref(), Some("update the driver to CUDA 12.9 or newer (Linux 575.51.03+)"));
    assert_eq!((l.ptx_isa.as_deref(), l.min_driver.as_deref()), (Some("8.8"), Some("12.9")));
    // The cubins of a CUDA 12 toolkit load on any CUDA 12 driver; a CUDA 13 build's do not.
    assert_eq!(at(&every, "A100", Some("12.4")).0, Outcome::Native);
    let mut thirteen = unit(&m, &[]);
    thirteen.toolkit = Some(cuda("13.0"));
    assert_eq!(at(&thirteen, "A100", Some("12.9")).0, Outcome::DriverTooOld);
}

#[test]
fn arch_gated_kernels_take_only_the_images_that_have_them() {
    let m = module();
    // Under `#if __CUDA_ARCH__ >= 900`: nothing on Ampere/Ada, whatever the arch list.
    let gated = unit(&m, &["sm_90"]);
    assert_eq!(at(&gated, "RTX 4090", None), (Outcome::NoImage, None, Some(209)));
    let l = predict(&gated, &lookup("RTX 4090").unwrap(), None);
    assert!(l.fix.unwrap().starts_with("none from `arch`: the kernel is only in the sm_90 build(s)"));
    assert_eq!(at(&gated, "H100", None), (Outcome::Native, Some("sm_90".into()), None));
    // The compute_90 PTX, not the compute_80 one that lacks it.
    assert_eq!(at(&gated, "B200", None), (Outcome::Jit, Some("sm_90".into()), None));
    // Left out of the sm_90 build: the H100 JIT-compiles the compute_80 PTX.
    let pre = unit(&m, &["sm_80"]);
    assert_eq!(at(&pre, "H100", None), (Outcome::Jit, Some("sm_80".into()), None));
}

#[test]
fn grouping_keeps_one_entry_per_outcome() {
    let m = module();
    let mut a1 = unit(&m, &[]);
    a1.name = "a".into();
    let mut b = unit(&m, &["sm_90"]);
    b.name = "b".into();
    let mut c = unit(&m, &[]);
    c.name = "c".into();
    let g = group(&[a1, b, c], &lookup("A100").unwrap(), None);
    assert_eq!(g.len(), 2);
    assert_eq!((g[0].outcome, g[0].kernels.clone()), (Outcome::Native, vec!["a".to_string(), "c".to_string()]));
    assert_eq!((g[1].outcome, g[1].kernels.clone()), (Outcome::NoImage, vec!["b".to_string()]));
}

#[test]
fn the_smallest_list_takes_each_majors_lowest_minor() {
    let names = |ccs: &[(u32, u32)]| smallest_arch_list(ccs).iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(
        names(&[(8, 0), (9, 0), (8, 9), (7, 5), (10, 0), (12, 0), (8, 7), (8, 6)]),
        ["sm_75", "sm_80", "sm_90", "sm_100", "sm_120"]
    );
    assert_eq!(names(&[(8, 9), (8, 6)]), ["sm_86"]);
    assert_eq!(names(&[(10, 3), (12, 1), (10, 0)]), ["sm_100", "sm_121"]);
}

#[test]
fn ptx_of_isa_9_5_is_refused_by_the_h200s_13_0_driver() {
    // As tools/gpu/coverage_device.py loads fixtures/ptx/axpb135.cuda-13.5.ptx on the H200 (580).
    let mut m = module();
    m.cubins.clear();
    m.extra_ptx.clear();
    m.ptx_arch = a("sm_90");
    m.ptx_version = "9.5".into();
    let u = unit(&m, &[]);
    let l = predict(&u, &lookup("H200").unwrap(), Some(cuda("13.0")));
    assert_eq!((l.outcome, l.error, l.min_driver.as_deref()), (Outcome::JitRefused, Some(222), Some("13.5")));
    assert_eq!(l.fix.as_deref(), Some("update the driver to CUDA 13.5 or newer"));
}

#[test]
fn a_tune_variant_refused_on_a_listed_arch_is_not_fixed_by_listing_it() {
    // Built for sm_80 and sm_90, the variant refused on sm_80: an A100 has nothing of it, and
    // "add sm_80" would be wrong; a T4 (nothing built for it) is told to add its arch.
    let mut m = module();
    m.cubins.retain(|c| c.arch == a("sm_90"));
    m.ptx_arch = a("sm_90");
    m.extra_ptx.clear();
    let variant = unit(&m, &["sm_90"]);
    let l = predict(&variant, &lookup("A100").unwrap(), None);
    assert_eq!((l.outcome, l.error), (Outcome::NoImage, Some(209)));
    assert!(l.fix.unwrap().starts_with("none from `arch`: the kernel is only in the sm_90 build(s)"));
    let every = module();
    let l = predict(&unit(&every, &[]), &lookup("T4").unwrap(), None);
    assert_eq!(l.fix.as_deref(), Some("add \"sm_75\" to `arch` in [package.metadata.launch]"));
}

#[test]
fn host_file_kernels_have_cubins_only_so_a_newer_gpu_has_no_image_for_them() {
    let m = module();
    let mut launcher = unit(&m, &[]);
    launcher.host = true;
    // The listed arches run natively, as for any kernel.
    assert_eq!(at(&launcher, "H200", None), (Outcome::Native, Some("sm_90".into()), None));
    // A newer major: no PTX to JIT (nvcc wrote cubins only), where the embedded module's kernels JIT.
    assert_eq!(at(&launcher, "B200", None), (Outcome::NoImage, None, Some(209)));
    assert_eq!(at(&unit(&m, &[]), "B200", None).0, Outcome::Jit);
    let l = predict(&launcher, &lookup("B200").unwrap(), None);
    assert!(l.host, "{l:?}");
    assert_eq!(
        l.fix.as_deref(),
        Some("add \"sm_100\" to `arch` in [package.metadata.launch]: `host` files are compiled to cubins only (no PTX to JIT)")
    );
    // Grouped apart from the embedded kernels.
    let groups = group(&[unit(&m, &[]), launcher], &lookup("B200").unwrap(), None);
    assert_eq!(
        groups.iter().map(|g| (g.outcome, g.host)).collect::<Vec<_>>(),
        [(Outcome::Jit, false), (Outcome::NoImage, true)]
    );
}
