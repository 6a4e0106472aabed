//! Ground truth: numbers an NVIDIA H200 (CC 9.0, driver 580, 132 SMs) returned, the header's own
//! examples, and the table's consistency (occupancy.md §3, §5, §6).

use super::*;

const H200_SMS: u32 = 132;

fn sm90() -> &'static DeviceLimits {
    DeviceLimits::lookup(9, 0).unwrap()
}

fn blocks(dev: &DeviceLimits, func: &FunctionAttrs, block: u32, dynamic: u32) -> u32 {
    occupancy(dev, func, block, dynamic, Carveout::Default).unwrap().active_blocks
}

/// A kernel with `r` registers and one barrier (`__syncthreads`), as the measured `kR` kernels.
fn k(r: u32) -> FunctionAttrs {
    FunctionAttrs::new(r, 0, 1)
}

fn potential(func: &FunctionAttrs, dynamic: u32) -> (u32, u32) {
    max_potential_block_size(sm90(), func, dynamic, H200_SMS, Carveout::Default).unwrap()
}

#[test]
fn table_covers_every_compute_capability() {
    let ccs: Vec<(u32, u32)> = DeviceLimits::all().iter().map(|d| d.compute_capability()).collect();
    assert_eq!(
        ccs,
        [
            (5, 0),
            (5, 2),
            (5, 3),
            (6, 0),
            (6, 1),
            (6, 2),
            (7, 0),
            (7, 2),
            (7, 5),
            (8, 0),
            (8, 6),
            (8, 7),
            (8, 9),
            (9, 0),
            (10, 0),
            (10, 1),
            (10, 3),
            (11, 0),
            (12, 0),
            (12, 1)
        ]
    );
    assert_eq!(DeviceLimits::lookup(10, 2).ok(), None);
    assert_eq!(DeviceLimits::lookup(8, 8).ok(), None);
    assert_eq!(DeviceLimits::lookup(12, 2).unwrap_err(), OccupancyError::UnknownDevice { major: 12, minor: 2 });
    assert_eq!(DeviceLimits::lookup(12, 2).unwrap_err().code(), 2);
}

#[test]
fn every_known_arch_has_a_row() {
    for name in crate::KNOWN_ARCHES {
        let arch: crate::Arch = name.parse().unwrap();
        let dev = DeviceLimits::for_arch(arch).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(dev.compute_capability(), arch.compute_capability());
    }
    let a: crate::Arch = "sm_100f".parse().unwrap();
    assert_eq!(DeviceLimits::for_arch(a).unwrap().compute_capability(), (10, 0));
    let a: crate::Arch = "sm_121a".parse().unwrap();
    assert_eq!(DeviceLimits::for_arch(a).unwrap().chip, "GB20y");
}

#[test]
fn table_rows_are_consistent() {
    for d in DeviceLimits::all() {
        let cc = format!("{}.{}", d.major, d.minor);
        assert_eq!(d.max_threads_per_block, 1024, "{cc}");
        assert_eq!(d.regs_per_sm, 65536, "{cc}");
        assert_eq!(d.warp_size, 32, "{cc}");
        assert_eq!(d.smem_per_block, 49152, "{cc}");
        assert_eq!(d.reg_granularity, 256, "{cc}");
        assert_eq!(d.reserved_smem_per_block, if d.major >= 8 { 1024 } else { 0 }, "{cc}");
        assert_eq!(d.smem_granularity, if d.major >= 8 { 128 } else { 256 }, "{cc}");
        assert_eq!(d.max_regs_per_thread, if d.major >= 7 { 256 } else { 255 }, "{cc}");
        assert_eq!(d.sub_partitions, if (d.major, d.minor) == (6, 0) { 2 } else { 4 }, "{cc}");
        if d.major >= 7 {
            // The largest carveout is the SM's shared memory.
            assert_eq!(d.carveout_kb.last().map(|kb| kb * 1024), Some(d.smem_per_sm), "{cc}");
        } else {
            assert!(d.carveout_kb.is_empty(), "{cc}");
            assert_eq!(d.smem_per_block_optin, 49152, "{cc}");
        }
        if d.major >= 8 {
            assert_eq!(d.smem_per_block_optin + d.reserved_smem_per_block, d.smem_per_sm, "{cc}");
        }
        assert_eq!(d.partitioned_gc, matches!((d.major, d.minor), (5, 2) | (5, 3) | (6, 1) | (6, 2)), "{cc}");
    }
    // 11.0 is 10.1 under its CUDA 13 name.
    let thor = DeviceLimits::lookup(10, 1).unwrap();
    let thor13 = DeviceLimits::lookup(11, 0).unwrap();
    assert_eq!(DeviceLimits { major: 10, minor: 1, chip: "Thor", ..*thor13 }, *thor);
    // §5.2: 5.2 has 65536 registers per block, 5.3 and 6.2 32768.
    assert_eq!(DeviceLimits::lookup(5, 2).unwrap().regs_per_block, 65536);
    assert_eq!(DeviceLimits::lookup(5, 3).unwrap().regs_per_block, 32768);
    assert_eq!(DeviceLimits::lookup(6, 2).unwrap().regs_per_block, 32768);
    assert_eq!(sm90().barriers_per_sm(), Some(64));
    assert_eq!(DeviceLimits::lookup(12, 0).unwrap().barriers_per_sm(), Some(24));
    assert_eq!(DeviceLimits::lookup(8, 0).unwrap().barriers_per_sm(), None);
}

/// §6.1: `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK` on H200.
#[test]
fn max_threads_per_block_matches_the_h200() {
    let dev = sm90();
    let table: &[(&[u32], u32)] = &[
        (&[24, 32, 40, 48, 56, 64], 1024),
        (&[72], 896),
        (&[80], 768),
        (&[96], 640),
        (&[104], 512),
        (&[128], 512),
        (&[136, 144, 152, 160, 168], 384),
        (&[176, 200, 232, 255], 256),
    ];
    for (regs, want) in table {
        for r in *regs {
            assert_eq!(max_threads_per_block(dev, *r, None), *want, "{r} registers");
        }
    }
    assert_eq!(max_threads_per_block(dev, 0, None), 1024);
    // __launch_bounds__(256, 4)
    assert_eq!(max_threads_per_block(dev, 10, Some(256)), 256);
    assert_eq!(max_threads_per_block(dev, 104, Some(1000)), 512);
    // More registers than the architecture accepts: no launch at all.
    assert_eq!(max_threads_per_block(dev, 257, None), 0);
    // 5.3 and 6.2 have 32768 registers per block.
    let tx1 = DeviceLimits::lookup(5, 3).unwrap();
    assert_eq!(max_threads_per_block(tx1, 64, None), 512);
    assert_eq!(max_threads_per_block(tx1, 255, None), 128);
}

/// §6.2: blocks per SM of the measured kernels at 32 … 1024 threads, and the potential block size.
#[test]
fn blocks_per_sm_match_the_h200() {
    let dev = sm90();
    let sizes = [32, 64, 128, 256, 512, 1024];
    /// Kernel, attributes, MAX_THREADS_PER_BLOCK, blocks at `sizes`, MaxPotentialBlockSize.
    type Row = (&'static str, FunctionAttrs, u32, [u32; 6], (u32, u32));
    let rows: &[Row] = &[
        ("k24", k(24), 1024, [32, 32, 16, 8, 4, 2], (264, 1024)),
        ("k40", k(40), 1024, [32, 24, 12, 6, 3, 1], (264, 768)),
        ("k64", k(64), 1024, [32, 16, 8, 4, 2, 1], (132, 1024)),
        ("k72", k(72), 896, [28, 14, 7, 3, 1, 0], (132, 896)),
        ("k104", k(104), 512, [16, 8, 4, 2, 1, 0], (132, 512)),
        ("k255", k(255), 256, [8, 4, 2, 1, 0, 0], (132, 256)),
        ("b5", FunctionAttrs::new(10, 0, 6), 1024, [10, 10, 10, 8, 4, 2], (264, 1024)),
        ("b15", FunctionAttrs::new(10, 0, 16), 1024, [4, 4, 4, 4, 4, 2], (264, 1024)),
        ("lb", k(10).with_launch_bounds(256), 256, [32, 32, 16, 8, 4, 2], (1056, 256)),
        ("s4k", FunctionAttrs::new(12, 4096, 1), 1024, [32, 32, 16, 8, 4, 2], (264, 1024)),
    ];
    for (name, func, max_threads, want, pot) in rows {
        assert_eq!(max_threads_per_block(dev, func.registers, func.max_threads_per_block), *max_threads, "{name}");
        let got: Vec<u32> = sizes.iter().map(|b| blocks(dev, func, *b, 0)).collect();
        assert_eq!(got, want, "{name}");
        assert_eq!(potential(func, 0), *pot, "{name}");
    }
    for (r, pot) in [
        (48, (264, 640)),
        (56, (264, 576)),
        (80, (132, 768)),
        (96, (132, 640)),
        (128, (132, 512)),
        (136, (132, 384)),
        (168, (132, 384)),
        (176, (132, 256)),
        (255, (132, 256)),
    ] {
        assert_eq!(potential(&k(r), 0), pot, "k{r}");
    }
    // k72 gets 0 blocks from 928 threads on.
    assert_eq!(blocks(dev, &k(72), 896, 0), 1);
    for b in (928..=1024).step_by(32) {
        assert_eq!(blocks(dev, &k(72), b, 0), 0, "k72 at {b}");
    }
    // 104 registers: 17-19 warps pass the software check but fail the hardware check.
    for b in [544, 576, 608] {
        let o = occupancy(dev, &k(104), b, 0, Carveout::Default).unwrap();
        assert_eq!((o.active_blocks, o.block_limit_regs), (0, 0), "k104 at {b}");
        assert!(o.allocated_regs_per_block <= dev.regs_per_block);
    }
    // Launch bounds are not checked per block size: lb at 288 threads still reports 7 blocks.
    assert_eq!(blocks(dev, &k(10).with_launch_bounds(256), 288, 0), 7);
    // Feeding 1024 as the function's limit would wrongly suggest 1024 for lb.
    assert_eq!(potential(&k(10), 0), (264, 1024));
}

/// §6.3: barriers are enforced on 9.0 (64 per SM).
#[test]
fn barriers_limit_blocks_on_hopper() {
    let dev = sm90();
    for (bars, want) in [(0, 32), (1, 32), (2, 32), (6, 10), (16, 4)] {
        let o = occupancy(dev, &FunctionAttrs::new(10, 0, bars), 32, 0, Carveout::Default).unwrap();
        assert_eq!(o.active_blocks, want, "{bars} barriers");
        assert_eq!(o.block_limit_barriers, (bars > 0).then(|| 64 / bars), "{bars} barriers");
    }
    assert_eq!(blocks(dev, &FunctionAttrs::new(10, 0, 16), 512, 0), 4);
    // 16 barriers on sm_120 leave one block per SM; nothing applies below 9.0.
    let gb20x = DeviceLimits::lookup(12, 0).unwrap();
    assert_eq!(blocks(gb20x, &FunctionAttrs::new(10, 0, 16), 32, 0), 1);
    let ga100 = DeviceLimits::lookup(8, 0).unwrap();
    let o = occupancy(ga100, &FunctionAttrs::new(10, 0, 16), 32, 0, Carveout::Default).unwrap();
    assert_eq!((o.active_blocks, o.block_limit_barriers), (32, None));
}

/// §3: the tie quirk of the limiting factors.
#[test]
fn limiting_factors_keep_ties_and_earlier_bits() {
    let gb20x = DeviceLimits::lookup(12, 0).unwrap();
    let o = occupancy(gb20x, &FunctionAttrs::new(32, 0, 4), 32, 0, Carveout::Default).unwrap();
    assert_eq!(o.active_blocks, 6);
    assert_eq!(o.limiters.bits(), 0x18);
    assert_eq!(o.limiters.iter().collect::<Vec<_>>(), [Limiter::Blocks, Limiter::Barriers]);

    let o = occupancy(sm90(), &FunctionAttrs::new(104, 0, 16), 32, 0, Carveout::Default).unwrap();
    assert_eq!(o.active_blocks, 4);
    assert_eq!(o.block_limit_regs, 16);
    assert_eq!(o.limiters.bits(), 0x12);
    assert_eq!(o.limiters.to_string(), "registers, barriers");

    // The reserved KB makes the shared-memory limit finite on CC >= 8.
    let o = occupancy(sm90(), &k(0), 32, 0, Carveout::Default).unwrap();
    assert_eq!(o.block_limit_smem, 228);
    assert_eq!(o.block_limit_regs, UNLIMITED);
    assert_eq!(o.limiters, [Limiter::Blocks].into_iter().collect());
    let ga10x = DeviceLimits::lookup(8, 6).unwrap();
    assert_eq!(occupancy(ga10x, &k(0), 32, 0, Carveout::Default).unwrap().block_limit_smem, 100);
    // Below 8.0, a block without shared memory is not limited by it.
    let gv100 = DeviceLimits::lookup(7, 0).unwrap();
    let o = occupancy(gv100, &k(0), 32, 0, Carveout::Default).unwrap();
    assert_eq!((o.block_limit_smem, o.allocated_smem_per_block), (UNLIMITED, 0));

    // Full occupancy with several ties: 2 blocks of 1024 at 32 registers hit warps and registers.
    let o = occupancy(sm90(), &k(32), 1024, 0, Carveout::Default).unwrap();
    assert_eq!(o.limiters.iter().collect::<Vec<_>>(), [Limiter::Warps, Limiter::Registers]);
    // A block above 1024 threads: 0 blocks, limited by warps.
    let o = occupancy(sm90(), &k(32), 1056, 0, Carveout::Default).unwrap();
    assert_eq!((o.active_blocks, o.block_limit_warps), (0, 0));
    assert!(o.limiters.contains(Limiter::Warps));
}

/// The seed article's sm_90 numbers.
#[test]
fn seed_article_numbers() {
    let dev = sm90();
    let o = occupancy(dev, &k(167), 256, 0, Carveout::Default).unwrap();
    assert_eq!((o.active_blocks, o.active_warps), (1, 8));
    assert_eq!(o.percent(), 12.5);
    assert_eq!(o.limiters.iter().collect::<Vec<_>>(), [Limiter::Registers]);
    let o = occupancy(dev, &k(167), 512, 0, Carveout::Default).unwrap();
    assert_eq!(o.active_blocks, 0);
    assert_eq!(max_threads_per_block(dev, 167, None), 384);
    assert_eq!(occupancy(dev, &k(200), 256, 0, Carveout::Default).unwrap().percent(), 12.5);
    let o = occupancy(dev, &k(64), 256, 0, Carveout::Default).unwrap();
    assert_eq!((o.active_blocks, o.percent()), (4, 50.0));
    assert_eq!(occupancy(dev, &k(64), 1024, 0, Carveout::Default).unwrap().percent(), 50.0);
    let o = occupancy(dev, &k(32), 1024, 0, Carveout::Default).unwrap();
    assert_eq!((o.active_blocks, o.percent()), (2, 100.0));
}

/// Nsight Compute's documented samples (§7).
#[test]
fn nsight_compute_samples() {
    let o = occupancy(sm90(), &FunctionAttrs::new(72, 4096, 1), 256, 0, Carveout::Default).unwrap();
    assert_eq!(o.percent(), 37.5);
    assert_eq!((o.active_blocks, o.allocated_regs_per_block, o.allocated_smem_per_block), (3, 18432, 5120));
    assert_eq!(o.limiters.iter().collect::<Vec<_>>(), [Limiter::Registers]);
    let ga10x = DeviceLimits::lookup(8, 6).unwrap();
    assert_eq!(occupancy(ga10x, &k(32), 256, 0, Carveout::Default).unwrap().percent(), 100.0);
    let gb20x = DeviceLimits::lookup(12, 0).unwrap();
    assert_eq!(occupancy(gb20x, &k(40), 128, 0, Carveout::Default).unwrap().percent(), 100.0);
}

/// §6.4: dynamic shared memory, opt-in and carveout on the 4 KB static kernel.
#[test]
fn dynamic_shared_memory_opt_in_and_carveout() {
    let dev = sm90();
    let s4k = FunctionAttrs::new(12, 4096, 1);
    assert_eq!(s4k.max_dynamic_shared_on(dev), 45056);
    for (dynamic, want) in [
        (0, 32),
        (1, 32),
        (1024, 32),
        (3072, 28),
        (3073, 28),
        (7168, 19),
        (44032, 4),
        (44033, 4),
        (45056, 4),
        (49152, 0),
    ] {
        assert_eq!(blocks(dev, &s4k, 32, dynamic), want, "32 threads, {dynamic} B");
    }
    for (dynamic, want) in [(0, 8), (8192, 8), (16384, 8), (40000, 5)] {
        assert_eq!(blocks(dev, &s4k, 256, dynamic), want, "256 threads, {dynamic} B");
    }
    let opt_in = s4k.with_max_dynamic_shared(232448 - 4096);
    for (dynamic, want) in [(49152, 4), (65536, 3), (100000, 2), (110000, 2), (200000, 1), (228352, 1), (228353, 0)] {
        assert_eq!(blocks(dev, &opt_in, 32, dynamic), want, "opt-in, {dynamic} B");
    }
    assert_eq!(potential(&opt_in, 100000), (264, 1024));

    let dynamics = [0, 8192, 16384, 30000, 45056];
    let table: &[(i32, [u32; 5])] = &[
        (0, [1, 1, 1, 1, 1]),
        (10, [6, 2, 1, 1, 1]),
        (25, [12, 4, 3, 1, 1]),
        (50, [26, 10, 6, 3, 2]),
        (75, [32, 15, 9, 5, 4]),
        (100, [32, 17, 10, 6, 4]),
        (-1, [32, 17, 10, 6, 4]),
    ];
    for (pct, want) in table {
        let got: Vec<u32> = dynamics
            .iter()
            .map(|d| occupancy(dev, &s4k, 32, *d, Carveout::from_raw(*pct)).unwrap().active_blocks)
            .collect();
        assert_eq!(got, want, "carveout {pct}");
    }
    assert_eq!(Carveout::from_raw(-1), Carveout::Default);
    // Outside -1..=100 the carveout is invalid on CC >= 7, and ignored below.
    for bad in [-2, 101] {
        let e = occupancy(dev, &s4k, 32, 0, Carveout::Percent(bad)).unwrap_err();
        assert_eq!(e.code(), 1);
        // 6.1: 96 KB / 4 KB static.
        let gp10x = DeviceLimits::lookup(6, 1).unwrap();
        assert_eq!(occupancy(gp10x, &s4k, 32, 0, Carveout::Percent(bad)).unwrap().active_blocks, 24);
    }
    // The default limit configuration never applies the opt-in, nor checks max_dynamic_shared.
    let default_cfg = FunctionAttrs { shmem_limit: ShmemLimitConfig::Default, ..s4k };
    assert_eq!(blocks(dev, &default_cfg, 32, 44032), 4);
    assert_eq!(blocks(dev, &default_cfg, 32, 45057), 0);
}

/// §6.6: `cuOccupancyAvailableDynamicSMemPerBlock`, including the reserved-KB quirk.
#[test]
fn available_dynamic_shared_memory_matches_the_h200() {
    let dev = sm90();
    let s4k = FunctionAttrs::new(12, 4096, 1);
    let avail = |f: &FunctionAttrs, n: u32, b: u32| available_dynamic_smem_per_block(dev, f, n, b, Carveout::Default);
    for (n, want) in [(1, 45056), (2, 45056), (3, 45056), (7, 29184), (32, 3200)] {
        assert_eq!(avail(&s4k, n, 32), Ok(want), "{n} blocks");
    }
    assert_eq!(avail(&s4k, 1, 1024), Ok(45056));
    assert_eq!(avail(&s4k, 2, 1024), Ok(45056));
    assert_eq!(avail(&s4k, 3, 1024).unwrap_err().code(), 1);
    assert_eq!(avail(&s4k, 0, 32).unwrap_err().code(), 1);
    let opt_in = s4k.with_max_dynamic_shared(228352);
    for (n, want) in [(1, 228352), (2, 112640), (3, 73728)] {
        assert_eq!(avail(&opt_in, n, 32), Ok(want), "opt-in, {n} blocks");
    }
    // The quirk: 29184 bytes for 7 blocks, but only 6 fit.
    assert_eq!(blocks(dev, &s4k, 32, 29184), 6);
}

/// [`registers_for_blocks`] for a kernel with one barrier and `shared_static` bytes of static
/// shared memory, opted in to `dynamic` bytes (what `cargo launch occupancy` asks).
fn regs_for(dev: &DeviceLimits, block: u32, blocks: u32, shared_static: u32, dynamic: u32) -> Option<u32> {
    let func = FunctionAttrs::new(0, shared_static, 1).opted_in(dev, dynamic);
    registers_for_blocks(dev, &func, block, blocks, dynamic, Carveout::Default)
}

#[test]
fn registers_for_blocks_finds_the_largest_count() {
    let dev = sm90();
    // 4 blocks of 256: 64 registers is the seed's 50 %; 72 gives 3.
    assert_eq!(regs_for(dev, 256, 4, 0, 0), Some(64));
    assert_eq!(regs_for(dev, 256, 1, 0, 0), Some(255));
    assert_eq!(regs_for(dev, 1024, 2, 0, 0), Some(32));
    assert_eq!(regs_for(dev, 1024, 1, 0, 0), Some(64));
    assert_eq!(regs_for(dev, 512, 1, 0, 0), Some(128));
    // Impossible: 3 blocks of 1024 threads, or blocks above 1024 threads.
    assert_eq!(regs_for(dev, 1024, 3, 0, 0), None);
    assert_eq!(regs_for(dev, 1056, 1, 0, 0), None);
    assert_eq!(regs_for(dev, 0, 1, 0, 0), None);
    // Shared memory binds first: 2 blocks of 100 KB dynamic fit (opt-in implied), 3 do not.
    assert_eq!(regs_for(dev, 128, 2, 0, 100_000), Some(255));
    assert_eq!(regs_for(dev, 128, 3, 0, 100_000), None);
}

#[test]
fn bad_input_is_an_error_or_zero_never_a_panic() {
    let dev = sm90();
    assert_eq!(occupancy(dev, &k(32), 0, 0, Carveout::Default).unwrap_err().code(), 1);
    assert_eq!(occupancy(dev, &k(32), u32::MAX, 0, Carveout::Default).unwrap_err().code(), 1);
    assert_eq!(occupancy(dev, &k(u32::MAX), 32, 0, Carveout::Default).unwrap_err().code(), 1);
    assert_eq!(blocks(dev, &k(257), 32, 0), 0);
    assert_eq!(blocks(dev, &k(1 << 30), 32, 0), 0);
    assert_eq!(blocks(dev, &k(32), i32::MAX as u32, 0), 0);
    assert_eq!(blocks(dev, &k(32), 2048, 0), 0);
    assert_eq!(blocks(dev, &k(32).with_max_dynamic_shared(u32::MAX), 32, u32::MAX), 0);
    assert_eq!(blocks(dev, &FunctionAttrs::new(32, u32::MAX, u32::MAX), 32, u32::MAX), 0);
    let e = occupancy(dev, &k(32).with_launch_bounds(0), 32, 0, Carveout::Default).unwrap_err();
    assert_eq!(e.code(), 1);
    assert!(e.to_string().contains("invalid occupancy input"));
    assert_eq!(max_potential_block_size(dev, &k(32), 0, 0, Carveout::Default).unwrap_err().code(), 1);
    assert_eq!(max_potential_block_size(dev, &k(300), 0, 1, Carveout::Default).unwrap_err().code(), 1);
    let zero = DeviceLimits { warp_size: 0, smem_granularity: 0, sub_partitions: 0, reg_granularity: 0, ..*dev };
    assert_eq!(occupancy(&zero, &k(32), 32, 0, Carveout::Default).unwrap_err().code(), 1);
    assert_eq!(max_threads_per_block(&zero, 32, None), 0);
    assert_eq!(available_dynamic_smem_per_block(&zero, &k(32), 1, 32, Carveout::Default).unwrap_err().code(), 1);
    assert_eq!(regs_for(&zero, 32, 1, 0, 0), None);
    let o = occupancy(dev, &k(32), 1, 0, Carveout::Default).unwrap();
    assert_eq!((o.active_blocks, o.warps_per_block), (32, 1));
}

/// GP100 re-checks registers as a GP10x: 2 sub-partitions alone would allow 18 warps at 104
/// registers, the GP10x check only 16.
#[test]
fn gp100_rule() {
    let gp100 = DeviceLimits::lookup(6, 0).unwrap();
    assert_eq!(max_threads_per_block(gp100, 104, None), 576);
    assert_eq!(blocks(gp100, &k(104), 512, 0), 1);
    assert_eq!(blocks(gp100, &k(104), 576, 0), 0);
    let gp10x = DeviceLimits::lookup(6, 1).unwrap();
    assert_eq!(max_threads_per_block(gp10x, 104, None), 512);
}

#[test]
fn partitioned_global_caching() {
    let gm20x = DeviceLimits::lookup(5, 2).unwrap();
    let on = FunctionAttrs { partitioned_gc: PartitionedGc::On, ..k(32) };
    let strict = FunctionAttrs { partitioned_gc: PartitionedGc::OnStrict, ..k(32) };
    // 96 threads = 3 warps: half an SM holds 32 warps → 10 blocks per half, 20 in all.
    let o = occupancy(gm20x, &on, 96, 0, Carveout::Default).unwrap();
    assert_eq!((o.block_limit_warps, o.partitioned_gc), (20, PartitionedGc::On));
    assert_eq!(occupancy(gm20x, &k(32), 96, 0, Carveout::Default).unwrap().block_limit_warps, 21);
    // 255 registers × 1024 threads cannot fit half an SM: ON falls back, ON_STRICT gives 0.
    let big = |f: FunctionAttrs| FunctionAttrs { registers: 64, ..f };
    let o = occupancy(gm20x, &big(on), 1024, 0, Carveout::Default).unwrap();
    assert_eq!((o.active_blocks, o.partitioned_gc), (1, PartitionedGc::Off));
    let o = occupancy(gm20x, &big(strict), 1024, 0, Carveout::Default).unwrap();
    assert_eq!((o.active_blocks, o.partitioned_gc), (0, PartitionedGc::OnStrict));
    // Ignored where the chip has no partitioned caching.
    let o = occupancy(sm90(), &on, 96, 0, Carveout::Default).unwrap();
    assert_eq!(o.partitioned_gc, PartitionedGc::Off);
}

#[test]
fn limiter_names() {
    let names: Vec<&str> = Limiter::ALL.iter().map(|l| l.name()).collect();
    assert_eq!(names, ["warps", "registers", "shared memory", "blocks per SM", "barriers"]);
    assert_eq!(Limiters::default().to_string(), "none");
    assert_eq!(Limiters::from_bits(0xff).bits(), 0x1f);
}
