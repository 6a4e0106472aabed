use std::cell::Cell;
use std::hint::black_box;
use std::time::Instant;

use super::*;
use crate::cuda::check::{check_launch, FunctionInfo};
use crate::occupancy::{self, Carveout, DeviceLimits};

fn h200() -> DeviceInfo {
    DeviceInfo::from_limits(*DeviceLimits::lookup(9, 0).unwrap(), 132)
}

/// A function of `registers` registers with 4 KB static shared memory and one barrier.
fn func(registers: u32, max_dynamic_shared: u32) -> FunctionInfo {
    let dev = h200();
    FunctionInfo {
        registers,
        shared_static: 4096,
        local_bytes: 0,
        barriers: 1,
        max_threads_per_block: occupancy::max_threads_per_block(&dev.limits, registers, None),
        max_dynamic_shared,
        carveout: Carveout::Default,
        const_bytes: 0,
        ptx_version: 90,
        binary_version: 90,
    }
}

fn cfg(grid: u32, block: u32, smem: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem }
}

/// The memo in front of the real check, counting how often the full check runs.
struct Harness {
    dev: DeviceInfo,
    memo: CheckMemo,
    full_checks: Cell<u32>,
    max_dynamic: Cell<u32>,
}

impl Harness {
    fn new() -> Harness {
        Harness {
            dev: h200(),
            memo: CheckMemo::default(),
            full_checks: Cell::new(0),
            max_dynamic: Cell::new(44 * 1024),
        }
    }

    fn check(&self, c: &LaunchConfig) -> Result<Approval, LaunchError> {
        let max_dynamic = self.max_dynamic.get();
        self.memo.check(&self.dev, c, max_dynamic, || {
            self.full_checks.set(self.full_checks.get() + 1);
            check_launch("k", None, &self.dev, None, &func(40, max_dynamic), c)
        })
    }

    fn direct(&self, c: &LaunchConfig) -> Result<Approval, LaunchError> {
        check_launch("k", None, &self.dev, None, &func(40, self.max_dynamic.get()), c)
    }
}

#[test]
fn a_repeated_launch_returns_the_same_approval_without_the_full_check() {
    let h = Harness::new();
    let c = cfg(1000, 256, 1024);
    let first = h.check(&c).unwrap();
    assert_eq!(first, h.direct(&c).unwrap());
    for _ in 0..10 {
        assert_eq!(h.check(&c).unwrap(), first);
    }
    assert_eq!(h.full_checks.get(), 1);
    // Another grid in range is the same verdict: the grid is checked, not remembered.
    assert_eq!(h.check(&cfg(7, 256, 1024)).unwrap(), first);
    assert_eq!(h.full_checks.get(), 1);
    assert_eq!(h.memo.last(), Some(((256, 1, 1), 1024, first)));
}

#[test]
fn another_block_or_dynamic_size_is_checked_again() {
    let h = Harness::new();
    let a = h.check(&cfg(1, 256, 0)).unwrap();
    let b = h.check(&cfg(1, 128, 0)).unwrap();
    assert_ne!(a, b);
    assert_eq!(b, h.direct(&cfg(1, 128, 0)).unwrap());
    let c = h.check(&cfg(1, 128, 2048)).unwrap();
    assert_eq!(c, h.direct(&cfg(1, 128, 2048)).unwrap());
    let d = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (128, 2, 1), shared_mem_bytes: 2048 };
    assert_eq!(h.check(&d).unwrap(), h.direct(&d).unwrap());
    assert_eq!(h.full_checks.get(), 4);
    // Only the last approval is remembered.
    h.check(&cfg(1, 256, 0)).unwrap();
    assert_eq!(h.full_checks.get(), 5);
}

#[test]
fn a_bad_grid_after_a_remembered_block_gets_the_full_checks_error() {
    let h = Harness::new();
    h.check(&cfg(1, 256, 0)).unwrap();
    for bad in [cfg(0, 256, 0), LaunchConfig { grid_dim: (1, 65536, 1), ..cfg(1, 256, 0) }] {
        let e = h.check(&bad).unwrap_err();
        assert_eq!(e, h.direct(&bad).unwrap_err());
        assert_eq!(e.problem, crate::cuda::Problem::Grid);
    }
    assert_eq!(h.memo.refusals(), 2);
    // A refusal leaves the remembered approval in place.
    let checks = h.full_checks.get();
    h.check(&cfg(1, 256, 0)).unwrap();
    assert_eq!(h.full_checks.get(), checks);
}

#[test]
fn a_refused_launch_is_never_remembered_and_is_counted() {
    let h = Harness::new();
    let big = cfg(1, 1024, 300_000);
    for _ in 0..3 {
        assert!(h.check(&big).is_err());
    }
    assert_eq!((h.full_checks.get(), h.memo.refusals(), h.memo.last()), (3, 3, None));
}

#[test]
fn raising_the_dynamic_limit_or_clearing_invalidates_the_verdict() {
    let h = Harness::new();
    // 100 KB needs the opt-in: approved with a raise.
    let c = cfg(1, 128, 100_000);
    let before = h.check(&c).unwrap();
    assert_eq!(before.raise_max_dynamic_shared, Some(100_000));
    assert_eq!(h.check(&c).unwrap(), before);
    assert_eq!(h.full_checks.get(), 1);
    // The launch raised the limit: the same configuration no longer needs a raise.
    h.max_dynamic.set(100_000);
    let after = h.check(&c).unwrap();
    assert_eq!(after.raise_max_dynamic_shared, None);
    assert_eq!(after, h.direct(&c).unwrap());
    assert_eq!(h.full_checks.get(), 2);
    h.memo.clear();
    assert_eq!(h.memo.last(), None);
    assert_eq!(h.check(&c).unwrap(), after);
    assert_eq!(h.full_checks.get(), 3);
}

#[test]
fn every_approval_survives_the_round_trip_through_words() {
    let dev = h200();
    let mut seen = 0;
    for registers in [16, 40, 128, 255] {
        for max_dynamic in [0, 48 * 1024, 200_000] {
            for smem in [0, 1, 40_000, 100_000, 220_000] {
                for block in (1..=1024).step_by(7) {
                    let c = cfg(1, block, smem);
                    let Ok(a) = check_launch("k", None, &dev, None, &func(registers, max_dynamic), &c) else {
                        continue;
                    };
                    let k = key(&c, max_dynamic);
                    let mut all = [0u32; WORDS];
                    all[..KEY_WORDS].copy_from_slice(&k);
                    all[KEY_WORDS..].copy_from_slice(&encode(&a));
                    assert_eq!(decode(&all), Some(a));
                    seen += 1;
                }
            }
        }
    }
    assert!(seen > 1000, "{seen}");
    // The states `check` cannot produce from this device, by hand: each flag on its own.
    let base = check_launch("k", None, &dev, None, &func(40, 0), &cfg(1, 256, 0)).unwrap();
    for gc in [PartitionedGc::Off, PartitionedGc::On, PartitionedGc::OnStrict] {
        for barriers in [None, Some(0), Some(7)] {
            let mut a = base;
            a.occupancy.partitioned_gc = gc;
            a.occupancy.block_limit_barriers = barriers;
            a.occupancy.limiters = Limiters::from_bits(0x15);
            a.raise_max_dynamic_shared = Some(0);
            let mut all = [0u32; WORDS];
            all[KEY_WORDS..].copy_from_slice(&encode(&a));
            assert_eq!(decode(&all), Some(a));
        }
    }
    assert_eq!(decode(&[0; WORDS]), None, "an empty memo holds nothing");
}

#[test]
fn readers_racing_a_writer_see_whole_approvals_or_nothing() {
    let dev = h200();
    let approvals: Vec<([u32; KEY_WORDS], Approval)> = [64, 128, 256, 512]
        .iter()
        .map(|&b| {
            let c = cfg(1, b, 0);
            (key(&c, 0), check_launch("k", None, &dev, None, &func(32, 0), &c).unwrap())
        })
        .collect();
    let memo = CheckMemo::default();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..20_000 {
                let (k, a) = &approvals[i % approvals.len()];
                memo.put(k, a);
            }
        });
        let mut hits = 0;
        for i in 0..20_000 {
            let (k, a) = &approvals[(i * 3) % approvals.len()];
            if let Some(got) = memo.get(k) {
                assert_eq!(&got, a);
                hits += 1;
            }
            if let Some((block, _, got)) = memo.last() {
                let (_, want) = approvals.iter().find(|(k, _)| k[0] == block.0).unwrap();
                assert_eq!(&got, want);
            }
        }
        black_box(hits);
    });
}

/// Median ns per call of `f` over 7 batches of 20,000 calls.
fn ns_per_call(mut f: impl FnMut()) -> f64 {
    let mut batches: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..20_000 {
                f();
            }
            start.elapsed().as_nanos() as f64 / 20_000.0
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[3]
}

#[test]
fn the_remembered_check_costs_a_few_nanoseconds() {
    let dev = h200();
    let memo = CheckMemo::default();
    let f = func(40, 48 * 1024);
    let c = cfg(4096, 256, 0);
    let full = || check_launch("k", None, &dev, None, &f, black_box(&c));
    let remembered = || memo.check(&dev, black_box(&c), black_box(48 * 1024), full);
    remembered().unwrap();
    let fast = ns_per_call(|| {
        black_box(remembered().unwrap());
    });
    let slow = ns_per_call(|| {
        black_box(full().unwrap());
    });
    eprintln!(
        "launch check on this CPU: remembered {fast:.1} ns/call, full {slow:.1} ns/call (medians of 7 × 20,000); \
         1 % of a 3.4 µs launch is 34 ns"
    );
    assert!(fast < slow, "the remembered check ({fast:.1} ns) is not cheaper than the full one ({slow:.1} ns)");
}
