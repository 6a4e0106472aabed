//! The analysis on the seed article's five builds of `poly_eval` (registers and spills as ptxas
//! 12.9 reported them for sm_90, recorded in fixtures/manifests/template.json), with no compiler.

use super::*;
use launch::ContractSource;

const HOST: HostLaunch = HostLaunch { threads: 256, dynamic_smem: 0 };

fn sm90() -> Arch {
    "sm_90".parse().unwrap()
}

fn bounds(threads: u32, min_blocks: Option<u32>) -> Option<Contract> {
    Some(Contract {
        source: ContractSource::LaunchBounds,
        threads: Some(threads),
        min_blocks,
        max_regs: None,
        exact: false,
    })
}

fn res(registers: u32, spills: u32) -> Resources {
    Resources { registers, spill_stores: spills, spill_loads: spills, ..Default::default() }
}

#[test]
fn the_unbounded_kernel_runs_at_256_and_fails_at_512_with_the_register_arithmetic() {
    let r = analyze(sm90(), &res(167, 0), None, HOST).unwrap();
    assert_eq!((r.occupancy.threads, r.occupancy.threads_from), (256, ThreadsFrom::Host));
    assert_eq!((r.occupancy.active_blocks, r.occupancy.active_warps, r.occupancy.percent), (1, 8, 12.5));
    assert_eq!(r.largest_block, 384);
    assert_eq!(r.launch_failure, None);
    let at = r.fails_at.unwrap();
    assert_eq!(at.threads, 512);
    assert!(matches!(at.failure, LaunchFailure::Registers { needed: 86016, largest_block: 384, .. }));
    let f = kernel_findings(&r, None);
    assert_eq!(f.len(), 1, "only the missing contract: {f:?}");
    assert_eq!((f[0].0, f[0].1), (Severity::Warning, FindingKind::Unbounded));
}

#[test]
fn a_host_block_above_the_largest_is_an_error_that_names_the_fix() {
    let r = analyze(sm90(), &res(167, 0), None, HostLaunch { threads: 512, dynamic_smem: 0 }).unwrap();
    assert_eq!(r.occupancy.active_blocks, 0);
    let f = kernel_findings(&r, None);
    assert_eq!((f[0].0, f[0].1), (Severity::Error, FindingKind::Launch));
    let finding = Finding {
        severity: f[0].0,
        kind: f[0].1,
        package: "t".into(),
        kernel: Some("poly_eval".into()),
        arch: Some(sm90()),
        location: None,
        detail: f[0].2.clone(),
    };
    assert_eq!(
        finding.message(),
        "poly_eval on sm_90: cannot launch at 512 threads (host block size): 167 registers × 512 threads needs 86,016 \
         registers per block (5,376 per warp × 16 warps), the SM allows 65,536; the largest block that launches is \
         384; add __launch_bounds__(512) or launch ≤ 384"
    );
}

#[test]
fn the_four_bounded_builds_give_the_articles_occupancy() {
    let cases = [
        (bounds(256, None), res(200, 0), 1, 12.5),
        (bounds(1024, None), res(64, 1584), 1, 50.0),
        (bounds(256, Some(4)), res(64, 1584), 4, 50.0),
        (bounds(1024, Some(2)), res(32, 2226), 2, 100.0),
    ];
    for (contract, r, blocks, percent) in cases {
        let a = analyze(sm90(), &r, contract, HOST).unwrap();
        assert_eq!(a.occupancy.threads_from, ThreadsFrom::Contract);
        assert_eq!((a.occupancy.active_blocks, a.occupancy.percent), (blocks, percent), "{contract:?}");
        assert_eq!(a.launch_failure, None);
        assert!(a.notes.is_empty(), "{:?}", a.notes);
        assert_eq!(a.fails_at, None, "bounded kernels have no trap");
    }
    // The spilling builds warn (no budget) and fail over a budget.
    let a = analyze(sm90(), &res(32, 2226), bounds(1024, Some(2)), HOST).unwrap();
    assert_eq!(a.register_cap, Some(32));
    let f = kernel_findings(&a, Some(1000));
    assert_eq!((f[0].0, f[0].1), (Severity::Error, FindingKind::Spills));
    assert_eq!(
        f[0].2.to_string(),
        "2226 bytes spill stores + 2226 bytes spill loads = 4452 bytes, over the budget of 1000 (max-spill-bytes)"
    );
}

#[test]
fn contract_notes_say_what_the_arch_does_not_give() {
    // 3 blocks of 1024 threads never fit an SM of 2048 threads.
    let a = analyze(sm90(), &res(32, 0), bounds(1024, Some(3)), HOST).unwrap();
    assert_eq!(
        a.notes,
        vec![Note::MinBlocksImpossible {
            arch: sm90(),
            blocks: 3,
            threads: 1024,
            reason: Impossible::ThreadsPerSm { max: 2048 }
        }]
    );
    assert_eq!(
        a.notes[0].to_string(),
        "min_blocks 3 cannot be met on sm_90: 3 × 1024 threads exceed the SM's 2048 threads; ptxas ignores it"
    );
    // max_regs above what 2 blocks of 1024 leave (32) is held to 32.
    let c = Contract { max_regs: Some(64), ..bounds(1024, Some(2)).unwrap() };
    let a = analyze(sm90(), &res(32, 0), Some(c), HOST).unwrap();
    assert_eq!(a.register_cap, Some(32));
    assert_eq!(a.notes.len(), 1);
    assert_eq!(
        a.notes[0].to_string(),
        "max_regs 64 is above the 32 registers that 2 block(s) of 1024 threads leave per thread on sm_90; ptxas holds \
         the kernel to 32"
    );
    // min_blocks that fits in principle but not as compiled.
    let a = analyze(sm90(), &res(64, 0), bounds(256, Some(8)), HOST).unwrap();
    assert!(matches!(a.notes[0], Note::MinBlocksNotReached { blocks: 8, active_blocks: 4, .. }), "{:?}", a.notes);
}

#[test]
fn a_register_cap_binds_below_the_most_a_thread_can_have() {
    // 2 blocks of 1024 threads leave 32 registers per thread: that binds.
    let a = analyze(sm90(), &res(32, 0), bounds(1024, Some(2)), HOST).unwrap();
    assert_eq!((a.register_cap, a.binding_register_cap()), (Some(32), Some(32)));
    // One block of 256 threads leaves 255, which every kernel has anyway (sm_90 accepts 256 in
    // the header, ptxas assigns at most 255); so does a 255 from max_regs alone.
    let a = analyze(sm90(), &res(32, 0), bounds(256, None), HOST).unwrap();
    assert_eq!((a.register_cap, a.binding_register_cap()), (Some(255), None));
    let only_regs = |max_regs| Contract { threads: None, max_regs: Some(max_regs), ..bounds(1, None).unwrap() };
    let a = analyze(sm90(), &res(32, 0), Some(only_regs(255)), HOST).unwrap();
    assert_eq!((a.register_cap, a.binding_register_cap()), (Some(255), None));
    let a = analyze(sm90(), &res(32, 0), Some(only_regs(254)), HOST).unwrap();
    assert_eq!(a.binding_register_cap(), Some(254));
    assert_eq!(analyze(sm90(), &res(32, 0), None, HOST).unwrap().binding_register_cap(), None);
}

#[test]
fn an_arch_without_data_is_an_error_not_a_panic() {
    let mut arch = sm90();
    arch.major = 1;
    assert_eq!(analyze(arch, &res(1, 0), None, HOST).unwrap_err(), AnalysisError::UnknownArch(arch));
}

#[test]
fn the_cliff_is_the_register_count_where_one_more_block_fits() {
    // The article's kernel: 167 registers hold one block of 256 threads; 128 hold two.
    let a = analyze(sm90(), &res(167, 0), None, HOST).unwrap();
    assert_eq!(a.next_block, Some(NextBlock { registers: 128, active_blocks: 2, percent: 25.0 }));
    let a = analyze(sm90(), &res(200, 0), bounds(256, None), HOST).unwrap();
    assert_eq!(a.next_block, Some(NextBlock { registers: 128, active_blocks: 2, percent: 25.0 }));
    // A block that does not launch at all: the registers at which one does.
    let a = analyze(sm90(), &res(167, 0), None, HostLaunch { threads: 512, dynamic_smem: 0 }).unwrap();
    assert_eq!(a.next_block, Some(NextBlock { registers: 128, active_blocks: 1, percent: 25.0 }));
    // Full occupancy: registers tie with warps, and no register count fits a third block.
    let a = analyze(sm90(), &res(32, 2226), bounds(1024, Some(2)), HOST).unwrap();
    assert!(a.occupancy.limiters.contains(launch::occupancy::Limiter::Registers));
    assert_eq!(a.next_block, None);
    // Not register-limited: no cliff to show.
    let a = analyze(sm90(), &res(16, 0), None, HOST).unwrap();
    assert_eq!(a.next_block, None);
}
