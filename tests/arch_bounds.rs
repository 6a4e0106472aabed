//! CUDA's own `__launch_bounds__` that depend on `__CUDA_ARCH__` (CUB's kernels take their block
//! size from a policy per arch): every arch's record, occupancy and embedded contract are that
//! arch's PTX's bounds, also where only one arch has any. Before, the lowest arch's bounds were
//! every arch's: mistralrs-quant's CUB DeviceSelectSweepKernel was recorded at 320 threads on
//! sm_90, where its cubin says 384 (`tools/gpu/results-2026-12-07-mistralrs/`).

use launch_schema::report::Document;

use crate::support::{cargo_in, cargo_launch, fixture, record, run, toolchain_root};

/// (kernel, its maximum threads per block on sm_80, on sm_90; `None` for no bound).
const BOUNDS: [(&str, Option<u32>, Option<u32>); 4] = [
    ("by_policy", Some(320), Some(384)),
    ("hopper_only", None, Some(256)),
    ("ampere_only", Some(128), None),
    ("same", Some(512), Some(512)),
];

#[test]
fn each_arch_has_its_own_launch_bounds() {
    let dir = fixture("arch_bounds");
    let manifest = dir.path().join("Cargo.toml");
    let (code, stdout, stderr) =
        run(cargo_launch().args(["launch", "report", "--format", "json", "--manifest-path"]).arg(&manifest));
    assert_eq!(code, 0, "report failed:\n{stderr}");
    let doc = Document::from_json(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    assert_eq!(doc.records.len(), 8);
    for (kernel, sm80, sm90) in BOUNDS {
        for (arch, want) in [("sm_80", sm80), ("sm_90", sm90)] {
            let r = record(&doc, kernel, arch);
            assert_eq!(r.contract.and_then(|c| c.threads), want, "{kernel} on {arch}: the record's contract");
            // The block size the report speaks of is the arch's bound (the crate's 256 without one).
            assert_eq!(r.occupancy.threads, want.unwrap_or(256), "{kernel} on {arch}: the occupancy's block");
        }
    }
    // The bounds on sm_90 also held when `hopper_only` asks for 2 blocks per SM there.
    assert_eq!(record(&doc, "hopper_only", "sm_90").contract.and_then(|c| c.min_blocks), Some(2));

    // The program's embedded kernels say the same, arch by arch.
    let cache = tempfile::tempdir().unwrap();
    let (code, printed, stderr) = run(cargo_in(dir.path())
        .args(["run", "-q"])
        .env("LAUNCH_CACHE_DIR", cache.path())
        .env("LAUNCH_TOOLCHAIN", toolchain_root()));
    assert_eq!(code, 0, "cargo run failed:\n{stderr}");
    for (kernel, sm80, sm90) in BOUNDS {
        for (arch, want) in [("sm_80", sm80), ("sm_90", sm90)] {
            let line = format!("{kernel} {arch} {want:?}");
            assert!(printed.lines().any(|l| l == line), "no `{line}` in:\n{printed}");
        }
    }
}
