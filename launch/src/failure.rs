//! Why a launch cannot run, as numbers ([`LaunchFailure`]) with the sentence `cargo launch check`
//! and `cargo launch report` print and the runtime's checked launch (`launch::cuda`) returns.

use std::fmt;

use crate::occupancy::{DeviceLimits, Limiters, Occupancy};
use crate::Resources;

/// Why a block of some size cannot launch, with the arithmetic behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
pub enum LaunchFailure {
    /// The block needs more registers than an SM gives one block (the article's trap).
    Registers {
        /// Registers per thread.
        registers: u32,
        /// Threads per block.
        threads: u32,
        /// Registers the block needs: `per_warp × warps`.
        needed: u32,
        /// Registers allocated per warp (registers × 32, rounded up to the allocation unit).
        per_warp: u32,
        /// Warps allocated: the block's warps rounded up to the SM's sub-partition count.
        warps: u32,
        /// Registers one block may use on the SM.
        allowed: u32,
        /// The largest block that launches.
        largest_block: u32,
    },
    /// The block is above the kernel's own limit for another reason (its contract).
    ThreadLimit {
        /// Threads per block.
        threads: u32,
        /// The kernel's limit.
        largest_block: u32,
    },
    /// Static + dynamic + reserved shared memory is above what an SM gives one block.
    SharedMemory {
        /// Static shared memory per block, bytes.
        shared_static: u32,
        /// Dynamic shared memory per block, bytes.
        dynamic: u32,
        /// Bytes the driver reserves per block.
        reserved: u32,
        /// Bytes allocated per block, rounded to `unit`.
        allocated: u32,
        /// Allocation unit, bytes.
        unit: u32,
        /// The most one block may have (the opt-in limit plus the reserved bytes).
        limit: u32,
    },
    /// No block fits for another reason (the calculator's limiting factors).
    NoBlockFits {
        /// Threads per block.
        threads: u32,
        /// What limits the blocks per SM.
        limiters: Limiters,
    },
}

impl LaunchFailure {
    /// Why `threads` threads per block (with `dynamic_smem` bytes of dynamic shared memory) cannot
    /// launch a kernel with resources `r` on `dev`, given the largest block it can launch
    /// (`largest_block`, see [`crate::occupancy::max_threads_per_block`]) and the calculator's
    /// result at that size (`occ`). Meant for a launch that fails: `threads > largest_block` or
    /// `occ.active_blocks == 0`.
    ///
    /// In order: the register arithmetic (per-warp allocation × warps rounded up to the
    /// sub-partition count, against the registers a block may use), the kernel's thread limit, the
    /// shared-memory arithmetic (static + dynamic + reserved, rounded to the allocation unit,
    /// against the opt-in limit), else the limiting factors.
    pub fn diagnose(
        dev: &DeviceLimits,
        r: &Resources,
        dynamic_smem: u32,
        threads: u32,
        largest_block: u32,
        occ: &Occupancy,
    ) -> LaunchFailure {
        let warps = threads.div_ceil(dev.warp_size);
        let per_warp = (r.registers * dev.warp_size).div_ceil(dev.reg_granularity) * dev.reg_granularity;
        // The driver checks the allocation as if made on every sub-partition at once (cuda_occupancy.h).
        let alloc_warps = warps.div_ceil(dev.sub_partitions) * dev.sub_partitions;
        let needed = per_warp * alloc_warps;
        if needed > dev.regs_per_block {
            LaunchFailure::Registers {
                registers: r.registers,
                threads,
                needed,
                per_warp,
                warps: alloc_warps,
                allowed: dev.regs_per_block,
                largest_block,
            }
        } else if threads > largest_block {
            LaunchFailure::ThreadLimit { threads, largest_block }
        } else if occ.block_limit_smem == 0 {
            LaunchFailure::SharedMemory {
                shared_static: r.shared_static,
                dynamic: dynamic_smem,
                reserved: dev.reserved_smem_per_block,
                allocated: occ.allocated_smem_per_block,
                unit: dev.smem_granularity,
                limit: dev.smem_per_block_optin + dev.reserved_smem_per_block,
            }
        } else {
            LaunchFailure::NoBlockFits { threads, limiters: occ.limiters }
        }
    }
}

impl fmt::Display for LaunchFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LaunchFailure::Registers { registers, threads, needed, per_warp, warps, allowed, largest_block } => write!(
                f,
                "{registers} registers × {threads} threads needs {} registers per block ({} per warp × {warps} warps), \
                 the SM allows {}; the largest block that launches is {largest_block}",
                group(needed),
                group(per_warp),
                group(allowed)
            ),
            LaunchFailure::ThreadLimit { threads, largest_block } => {
                write!(f, "{threads} threads exceeds the kernel's limit of {largest_block} threads per block")
            }
            LaunchFailure::SharedMemory { shared_static, dynamic, reserved, allocated, unit, limit } => write!(
                f,
                "{} static + {} dynamic + {} reserved bytes of shared memory per block ({} allocated in units of \
                 {unit}); an SM gives one block at most {}",
                group(shared_static),
                group(dynamic),
                group(reserved),
                group(allocated),
                group(limit)
            ),
            LaunchFailure::NoBlockFits { threads, limiters } => {
                write!(f, "no block of {threads} threads fits on an SM (limited by {limiters})")
            }
        }
    }
}

/// `86016` → `86,016`.
pub fn group(n: impl Into<u64>) -> String {
    let s = n.into().to_string();
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
        let failure = LaunchFailure::diagnose(dev, &r, 0, 512, max, &occ);
        assert_eq!(
            failure,
            LaunchFailure::Registers {
                registers: 167,
                threads: 512,
                needed: 86016,
                per_warp: 5376,
                warps: 16,
                allowed: 65536,
                largest_block: 384
            }
        );
        assert_eq!(
            failure.to_string(),
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
        let failure = LaunchFailure::diagnose(dev, &r, 228353, 32, 1024, &occ);
        assert!(matches!(failure, LaunchFailure::SharedMemory { allocated: 233600, limit: 233472, .. }), "{failure:?}");
        assert_eq!(
            failure.to_string(),
            "4,096 static + 228,353 dynamic + 1,024 reserved bytes of shared memory per block (233,600 allocated in units of 128); an SM gives one block at most 233,472"
        );
    }

    #[test]
    fn a_block_above_a_contracts_limit_names_the_limit() {
        let dev = DeviceLimits::for_arch("sm_90".parse().unwrap()).unwrap();
        let occ = occupancy::occupancy(dev, &FunctionAttrs::new(32, 0, 0), 512, 0, Carveout::Default).unwrap();
        let r = Resources { registers: 32, ..Default::default() };
        let failure = LaunchFailure::diagnose(dev, &r, 0, 512, 256, &occ);
        assert_eq!(failure, LaunchFailure::ThreadLimit { threads: 512, largest_block: 256 });
        assert_eq!(failure.to_string(), "512 threads exceeds the kernel's limit of 256 threads per block");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group(0u32), "0");
        assert_eq!(group(999u32), "999");
        assert_eq!(group(65536u32), "65,536");
        assert_eq!(group(1234567u64), "1,234,567");
    }
}
