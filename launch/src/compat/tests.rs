use super::*;

fn v(s: &str) -> CudaVersion {
    s.parse().unwrap()
}

#[test]
fn the_table_is_ordered_and_each_toolkit_writes_its_isa() {
    assert!(TOOLKITS.windows(2).all(|w| w[0].cuda < w[1].cuda && w[0].ptx_isa <= w[1].ptx_isa));
    for (cuda, isa) in [("12.0", (8, 0)), ("12.4", (8, 4)), ("12.6", (8, 5)), ("12.8", (8, 7)), ("12.9", (8, 8))] {
        assert_eq!(ptx_isa_of(v(cuda)), Some(isa), "{cuda}");
    }
    assert_eq!(ptx_isa_of(v("13.0")), Some((9, 0)));
    assert_eq!(ptx_isa_of(v("13.5")), Some((9, 5)));
    assert_eq!(linux_driver(v("13.0")), Some("580.65.06"));
    assert_eq!(linux_driver(v("12.0")), Some("525.60.13"));
}

/// Measured on the H200 (driver 580, `cuDriverGetVersion` 13000): the template's cubins, built by
/// ptxas 12.9.86, load and run there.
#[test]
fn cubins_built_by_12_9_load_on_the_h200s_cuda_13_0_driver() {
    let h200 = CudaVersion::from_driver(13000).unwrap();
    assert_eq!(h200, v("13.0"));
    assert!(cubin_loads_on(v("12.9"), h200));
    // And CUDA 13 cubins need a CUDA 13 driver; any 12.x driver takes any 12.x cubin.
    assert!(!cubin_loads_on(v("13.0"), v("12.9")));
    assert!(cubin_loads_on(v("12.9"), v("12.0")));
    assert!(!cubin_loads_on(v("12.0"), v("11.8")));
    assert_eq!(min_driver_for_cubin(v("13.5")), v("13.0"));
}

#[test]
fn ptx_8_8_is_refused_by_a_12_4_driver_and_taken_by_12_9() {
    assert!(!ptx_jits_on((8, 8), v("12.4")));
    assert!(ptx_jits_on((8, 8), v("12.9")));
    assert!(ptx_jits_on((8, 8), v("13.0")));
    assert!(ptx_jits_on((8, 4), v("12.4")));
    assert_eq!(min_driver_for_ptx((8, 8)), Some(v("12.9")));
    // ISA 8.6 came with the unreleased 12.7: 12.8 is the first driver that takes it.
    assert_eq!(min_driver_for_ptx((8, 6)), Some(v("12.8")));
    assert_eq!(min_driver_for_ptx((9, 0)), Some(v("13.0")));
    assert!(!ptx_jits_on((9, 5), v("13.0")), "PTX from 13.5 is refused by the H200's 13.0 driver");
    assert_eq!(min_driver_for_ptx((9, 9)), None);
    assert!(!ptx_jits_on((9, 9), v("13.5")));
}

#[test]
fn a_drivers_newest_isa() {
    assert_eq!(max_ptx_isa(v("12.9")), Some((8, 8)));
    assert_eq!(max_ptx_isa(v("13.0")), Some((9, 0)));
    assert_eq!(max_ptx_isa(CudaVersion::new(12, 7)), Some((8, 5)));
    assert_eq!(max_ptx_isa(CudaVersion::new(10, 2)), None);
    assert_eq!(max_ptx_isa(CudaVersion::new(99, 0)), None);
}

#[test]
fn versions_parse_strictly_with_located_help() {
    assert_eq!(v("12.4"), CudaVersion::new(12, 4));
    assert_eq!(CudaVersion::of_release("12.9.86"), Some(v("12.9")));
    assert_eq!(CudaVersion::of_release("none"), None);
    assert_eq!(CudaVersion::from_driver(12040), Some(v("12.4")));
    assert_eq!(CudaVersion::from_driver(-1), None);
    let e = "12.7".parse::<CudaVersion>().unwrap_err();
    assert!(e.unknown);
    assert!(e.to_string().starts_with("CUDA 12.7 is not a CUDA release this version of launch knows; known: 11.0,"));
    let e = "550.54.14".parse::<CudaVersion>().unwrap_err();
    assert!(e.to_string().contains("driver 550.54.14 is CUDA 12.4"), "{e}");
    for bad in ["12", "12.", ".4", "12.4.1", " 12.4", "+12.4", "99999999999.0", "1\n2.4"] {
        let e = bad.parse::<CudaVersion>().unwrap_err();
        assert!(!e.unknown && e.to_string().contains("is not a CUDA version"), "{bad}: {e}");
    }
}

#[test]
fn arch_rules() {
    let a = |s: &str| s.parse::<Arch>().unwrap();
    assert!(cubin_runs_on(a("sm_90"), (9, 0)));
    // Same major, same or newer minor: sm_80 on 8.6/8.7/8.9, never on 9.0 or on an older minor.
    for cc in [(8, 0), (8, 6), (8, 7), (8, 9)] {
        assert!(cubin_runs_on(a("sm_80"), cc), "{cc:?}");
    }
    assert!(!cubin_runs_on(a("sm_80"), (9, 0)));
    assert!(!cubin_runs_on(a("sm_86"), (8, 0)));
    assert!(!cubin_runs_on(a("sm_75"), (8, 0)));
    // `a` only on its chip, `f` on its family.
    assert!(cubin_runs_on(a("sm_90a"), (9, 0)));
    assert!(!cubin_runs_on(a("sm_100a"), (10, 3)));
    assert!(cubin_runs_on(a("sm_100f"), (10, 3)));
    assert!(!cubin_runs_on(a("sm_100f"), (11, 0)));
    assert!(!cubin_runs_on(a("sm_103f"), (10, 0)));
    assert!(ptx_runs_on(a("sm_80"), (12, 0)));
    assert!(!ptx_runs_on(a("sm_90a"), (10, 0)));
    assert!(ptx_runs_on(a("sm_100f"), (10, 3)));
    assert!(!ptx_runs_on(a("sm_100f"), (12, 0)));
    assert!(!ptx_runs_on(a("sm_100a"), (10, 3)));
    assert_eq!(ptx_isa_version("// x\n.version 9.0\n.target sm_90\n"), Some((9, 0)));
    assert_eq!(parse_ptx_isa("8.8"), Some((8, 8)));
    assert_eq!(parse_ptx_isa(""), None);
}

#[test]
fn the_best_image_for_a_device() {
    let a = |s: &str| s.parse::<Arch>().unwrap();
    let all = [a("sm_75"), a("sm_80"), a("sm_86"), a("sm_90"), a("sm_90a"), a("sm_100f")];
    // The nearest minor not newer than the device; `a` over base on its chip; `f` on its family.
    assert_eq!(best_cubin(all, (8, 9)), Some(a("sm_86")));
    assert_eq!(best_cubin(all, (8, 7)), Some(a("sm_86")));
    assert_eq!(best_cubin(all, (8, 0)), Some(a("sm_80")));
    assert_eq!(best_cubin(all, (9, 0)), Some(a("sm_90a")));
    assert_eq!(best_cubin(all, (10, 3)), Some(a("sm_100f")));
    assert_eq!(best_cubin(all, (12, 0)), None);
    assert_eq!(best_cubin([a("sm_80"), a("sm_89")], (9, 0)), None);
    // The lowest PTX that runs: base anywhere newer, `a`/`f` as their rules say.
    assert_eq!(best_ptx([a("sm_90"), a("sm_80")], (12, 0)), Some(a("sm_80")));
    assert_eq!(best_ptx([a("sm_90")], (8, 9)), None);
    assert_eq!(best_ptx([a("sm_90a")], (10, 0)), None);
    assert_eq!(best_ptx([a("sm_100f")], (10, 3)), Some(a("sm_100f")));
}
