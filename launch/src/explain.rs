//! Why a launch cannot run, in words and numbers: the arithmetic `cargo launch check` and
//! `cargo launch report` print and the runtime's checked launch (`launch::cuda`) returns.

use crate::occupancy::{DeviceLimits, Occupancy};
use crate::Resources;

/// Why `threads` threads per block (with `dynamic_smem` bytes of dynamic shared memory) cannot
/// launch a kernel with resources `r` on `dev`, given the largest block it can launch
/// (`max_threads`, see [`crate::occupancy::max_threads_per_block`]) and the calculator's result at
/// that size (`occ`). Meant for a launch that fails: `threads > max_threads` or
/// `occ.active_blocks == 0`.
///
/// In order: the register arithmetic (per-warp allocation × warps rounded up to the sub-partition
/// count, against the registers a block may use), the kernel's thread limit, the shared-memory
/// arithmetic (static + dynamic + reserved, rounded to the allocation unit, against the opt-in
/// limit), else the limiting factors.
pub fn launch_failure(
    dev: &DeviceLimits,
    r: &Resources,
    dynamic_smem: u32,
    threads: u32,
    max_threads: u32,
    occ: &Occupancy,
) -> String {
    let registers = r.registers;
    let warps = threads.div_ceil(dev.warp_size);
    let per_warp = (registers * dev.warp_size).div_ceil(dev.reg_granularity) * dev.reg_granularity;
    // The driver checks the allocation as if made on every sub-partition at once (cuda_occupancy.h).
    let alloc_warps = warps.div_ceil(dev.sub_partitions) * dev.sub_partitions;
    let needed = per_warp * alloc_warps;
    if needed > dev.regs_per_block {
        format!(
            "{registers} registers × {threads} threads needs {} registers per block ({} per warp × {alloc_warps} warps), \
             the SM allows {}; the largest block that launches is {max_threads}",
            group(needed),
            group(per_warp),
            group(dev.regs_per_block)
        )
    } else if threads > max_threads {
        format!("{threads} threads exceeds the kernel's limit of {max_threads} threads per block")
    } else if occ.block_limit_smem == 0 {
        format!(
            "{} static + {} dynamic + {} reserved bytes of shared memory per block ({} allocated in units of {}); \
             an SM gives one block at most {}",
            group(r.shared_static),
            group(dynamic_smem),
            group(dev.reserved_smem_per_block),
            group(occ.allocated_smem_per_block),
            dev.smem_granularity,
            group(dev.smem_per_block_optin + dev.reserved_smem_per_block)
        )
    } else {
        let limits: Vec<&str> = occ.limiters.iter().map(|l| l.name()).collect();
        format!("no block of {threads} threads fits on an SM (limited by {})", limits.join(", "))
    }
}

/// `86016` → `86,016`.
pub fn group(n: u32) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::occupancy::{self, Carveout, FunctionAttrs};

    #[test]
    fn the_articles_trap_is_explained_with_its_arithmetic() {
        let dev = DeviceLimits::for_arch("sm_90".parse().unwrap()).unwrap();
        let max = occupancy::max_threads_per_block(dev, 167, None);
        assert_eq!(max, 384);
        let occ = occupancy::occupancy(dev, &FunctionAttrs::new(167, 0, 0), 512, 0, Carveout::Default).unwrap();
        assert_eq!(occ.active_blocks, 0);
        let r = Resources { registers: 167, ..Default::default() };
        assert_eq!(
            launch_failure(dev, &r, 0, 512, max, &occ),
            "167 registers × 512 threads needs 86,016 registers per block (5,376 per warp × 16 warps), the SM allows 65,536; the largest block that launches is 384"
        );
    }

    #[test]
    fn shared_memory_over_the_opt_in_limit_is_explained() {
        let dev = DeviceLimits::for_arch("sm_90".parse().unwrap()).unwrap();
        let f = FunctionAttrs::new(12, 4096, 0).with_max_dynamic_shared(228353);
        let occ = occupancy::occupancy(dev, &f, 32, 228353, Carveout::Default).unwrap();
        assert_eq!(occ.active_blocks, 0);
        let r = Resources { registers: 12, shared_static: 4096, ..Default::default() };
        assert_eq!(
            launch_failure(dev, &r, 228353, 32, 1024, &occ),
            "4,096 static + 228,353 dynamic + 1,024 reserved bytes of shared memory per block (233,600 allocated in units of 128); an SM gives one block at most 233,472"
        );
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(65536), "65,536");
        assert_eq!(group(1234567), "1,234,567");
    }
}
