use super::*;

fn v(s: &str) -> CudaVersion {
    parse_version(s).unwrap()
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
fn versions_parse_strictly_with_located_help() {
    assert_eq!(v("12.4"), CudaVersion::new(12, 4));
    assert_eq!(release_version("12.9.86"), Some(v("12.9")));
    assert_eq!(release_version("none"), None);
    assert_eq!(CudaVersion::from_driver(12040), Some(v("12.4")));
    assert_eq!(CudaVersion::from_driver(-1), None);
    let e = parse_version("12.7").unwrap_err();
    assert!(e.unknown);
    assert!(e.to_string().starts_with("CUDA 12.7 is not a CUDA release this version of launch knows; known: 11.0,"));
    let e = parse_version("550.54.14").unwrap_err();
    assert!(e.to_string().contains("driver 550.54.14 is CUDA 12.4"), "{e}");
    for bad in ["12", "12.", ".4", "12.4.1", " 12.4", "+12.4", "99999999999.0", "1\n2.4"] {
        let e = parse_version(bad).unwrap_err();
        assert!(!e.unknown && e.to_string().contains("is not a CUDA version"), "{bad}: {e}");
    }
}

#[test]
fn the_manifests_ptx_isa() {
    assert_eq!(parse_ptx_isa("8.8"), Some((8, 8)));
    assert_eq!(parse_ptx_isa(""), None);
}
