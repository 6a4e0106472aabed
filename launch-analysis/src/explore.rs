//! What `cargo launch explore` compares, as arithmetic: the register caps at which a block size's
//! resident blocks per SM change (the cliffs worth compiling a variant at), and which variants are
//! on the frontier of occupancy against spills. The variants themselves are compiled by
//! launch-build (a contract written into the PTX, then ptxas).

use super::AnalysisError;
use launch::occupancy::{self, Carveout, DeviceLimits, FunctionAttrs};
use launch::Arch;

/// A register cap where the resident blocks per SM change: with at most `registers` registers per
/// thread, `blocks` blocks of the block size fit (and with one register more, fewer do).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Cliff {
    /// Registers per thread at most.
    pub registers: u32,
    /// Blocks resident per SM then: the `min_blocks` ptxas can honour at this cap.
    pub blocks: u32,
    /// Occupancy then, in percent to one decimal.
    pub percent: f64,
}

/// Every cliff of blocks of `threads` threads on `arch`, for a kernel with `shared_static` bytes
/// of static and `dynamic_smem` of dynamic shared memory and `barriers` barriers: for each
/// number of blocks that registers alone can make fit, the most registers with which it does,
/// fewest blocks (most registers) first. Empty when no register count lets one block of
/// `threads` fit (the block is too large for the SM, or its shared memory is).
pub fn cliffs(
    arch: Arch,
    threads: u32,
    shared_static: u32,
    dynamic_smem: u32,
    barriers: u32,
) -> Result<Vec<Cliff>, AnalysisError> {
    let dev = DeviceLimits::for_arch(arch).ok_or(AnalysisError::UnknownArch(arch))?;
    let attrs = FunctionAttrs::new(0, shared_static, barriers).opted_in(dev, dynamic_smem);
    let mut out: Vec<Cliff> = Vec::new();
    for blocks in 1..=dev.max_blocks_per_sm {
        let Some(registers) =
            occupancy::registers_for_blocks(dev, &attrs, threads, blocks, dynamic_smem, Carveout::Default)
        else {
            break;
        };
        let at = FunctionAttrs { registers, ..attrs };
        let o = occupancy::occupancy(dev, &at, threads, dynamic_smem, Carveout::Default)
            .map_err(|error| AnalysisError::Occupancy { arch, error })?;
        let cliff = Cliff {
            registers: registers.min(dev.max_registers_assigned()),
            blocks: o.active_blocks,
            percent: o.percent_rounded(),
        };
        // Several block counts can share one cap (the cap that fits 3 blocks may fit 4): keep the
        // most blocks per cap.
        if out.iter().any(|c| c.blocks >= cliff.blocks) {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.registers == cliff.registers => *last = cliff,
            _ => out.push(cliff),
        }
    }
    Ok(out)
}

/// Which of `variants` (occupancy in percent, spill bytes) are on the frontier: no other variant
/// is at least as good on both counts and better on one (higher occupancy, fewer spill bytes).
/// Equal variants are all on it. Variants that cannot launch are passed as occupancy 0.
pub fn frontier(variants: &[(f64, u32)]) -> Vec<bool> {
    let beats = |&(o, s): &(f64, u32), &(occ, spills): &(f64, u32)| o >= occ && s <= spills && (o > occ || s < spills);
    variants.iter().map(|v| !variants.iter().any(|w| beats(w, v))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sm90() -> Arch {
        "sm_90".parse().unwrap()
    }

    #[test]
    fn the_cliffs_of_256_threads_on_sm_90_are_where_each_more_block_fits() {
        let c = cliffs(sm90(), 256, 0, 0, 0).unwrap();
        let regs: Vec<(u32, u32)> = c.iter().map(|c| (c.registers, c.blocks)).collect();
        // 65,536 registers per SM, 8 warps per block, 256-register allocation per warp granule:
        // 1 block up to 255 (ptxas' most), 2 at 128, 3 at 80, 4 at 64, 5 at 48, 6 at 40, 8 at 32.
        assert_eq!(regs, [(255, 1), (128, 2), (80, 3), (64, 4), (48, 5), (40, 6), (32, 8)]);
        assert_eq!(c[1].percent, 25.0);
        assert_eq!(c.last().unwrap().percent, 100.0);
    }

    #[test]
    fn a_block_of_1024_threads_has_two_cliffs_and_shared_memory_limits_them() {
        let c = cliffs(sm90(), 1024, 0, 0, 0).unwrap();
        assert_eq!(c.iter().map(|c| (c.registers, c.blocks)).collect::<Vec<_>>(), [(64, 1), (32, 2)]);
        // 120 KB of shared memory per block: one block whatever the registers.
        let c = cliffs(sm90(), 1024, 120 * 1024, 0, 0).unwrap();
        assert_eq!(c.iter().map(|c| c.blocks).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn the_frontier_keeps_variants_no_other_beats_on_both_counts() {
        // The article's five builds: (occupancy %, spill bytes).
        let v = [(12.5, 0), (12.5, 0), (50.0, 6376), (50.0, 6376), (100.0, 9080)];
        assert_eq!(frontier(&v), [true, true, true, true, true], "each trades spills for occupancy");
        let v = [(12.5, 0), (25.0, 0), (50.0, 100), (25.0, 200)];
        assert_eq!(frontier(&v), [false, true, true, false]);
    }
}
