use super::*;

fn v(s: &str) -> CudaVersion {
    let (a, b) = s.split_once('.').unwrap();
    CudaVersion::new(a.parse().unwrap(), b.parse().unwrap())
}

#[test]
fn the_table_is_ordered_and_each_toolkit_writes_its_isa() {
    assert!(TOOLKITS.windows(2).all(|w| w[0].cuda < w[1].cuda && w[0].ptx_isa <= w[1].ptx_isa));
    for (cuda, isa) in [("12.0", (8, 0)), ("12.4", (8, 4)), ("12.6", (8, 5)), ("12.8", (8, 7)), ("12.9", (8, 8))] {
        assert_eq!(v(cuda).toolkit().map(|t| t.ptx_isa), Some(isa), "{cuda}");
    }
    assert_eq!(v("13.0").toolkit().map(|t| t.ptx_isa), Some((9, 0)));
    assert_eq!(v("13.5").toolkit().map(|t| t.ptx_isa), Some((9, 5)));
    assert_eq!(v("13.0").toolkit().and_then(|t| t.linux_driver), Some("580.65.06"));
    assert_eq!(v("12.0").toolkit().and_then(|t| t.linux_driver), Some("525.60.13"));
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
