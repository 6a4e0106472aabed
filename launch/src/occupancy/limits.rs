//! Per-architecture hardware limits: the device properties the driver reports
//! (`cudaOccDeviceProp`) and the per-arch constants `cuda_occupancy.h` (CUDA 12.9) hard-codes in
//! its `switch (computeMajor)` blocks, one row per compute capability.
//!
//! Sources, as cited in each row (see `shared/reference/occupancy.md` §4–§5):
//!
//! * "header l.N": `cuda_occupancy.h` from the nvidia-cuda-runtime-cu12 12.9.79 wheel;
//! * "guide": CUDA 13 Programming Guide, compute capabilities, Tables 30–32;
//! * "ncu": Nsight Compute 2025.3.1 `ncu_occupancy.get_gpu_data(major, minor)`;
//! * "CCCL": `cuda/__device/arch_traits.h`;
//! * "deviceQuery": real-device `deviceQuery` outputs;
//! * "H200": measured on an NVIDIA H200 with driver 580 (only the 9.0 row).
//!
//! Where sources disagree, the row uses occupancy.md §5.2's "Use" column (5.2 registers/block
//! 65536; 6.2 registers/block 32768; the header's sub-partition count and 256-register
//! per-thread maximum on CC >= 7; 11.0 takes the 10.1 values).

use super::DeviceLimits;

/// Carveout steps (KB) of Volta: header l.806–829, guide Table 32, ncu.
const CARVEOUT_VOLTA: &[u32] = &[0, 8, 16, 32, 64, 96];
/// Carveout steps (KB) of Turing: header l.795–805 (no 0 KB step), ncu `[65536, 32768]`.
const CARVEOUT_TURING: &[u32] = &[32, 64];
/// Carveout steps (KB) of GA100 / Orin (8.0, 8.7): header l.833–860, guide Table 32.
const CARVEOUT_164: &[u32] = &[0, 8, 16, 32, 64, 100, 132, 164];
/// Carveout steps (KB) of 8.6, 8.9, 12.x: header l.862–883 and l.968–997, guide Table 32.
const CARVEOUT_100: &[u32] = &[0, 8, 16, 32, 64, 100];
/// Carveout steps (KB) of 9.0 and 10.x: header l.886–920 and l.922–966, guide Table 32.
const CARVEOUT_228: &[u32] = &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228];

/// Fields every row shares (occupancy.md §5: "All rows"): 1024 threads per block (header
/// `maxThreadsPerBlock`), 65536 registers per SM, warps of 32, 48 KB per block without opt-in,
/// 256-register allocation unit (header l.671–694, ncu `reg_allocation_unit_size`), 4
/// sub-partitions (header l.698–724; only 6.0 differs).
const BASE: DeviceLimits = DeviceLimits {
    major: 0,
    minor: 0,
    chip: "",
    max_threads_per_block: 1024,
    max_threads_per_sm: 2048,
    max_blocks_per_sm: 32,
    regs_per_block: 65536,
    regs_per_sm: 65536,
    warp_size: 32,
    smem_per_block: 49152,
    smem_per_sm: 65536,
    smem_per_block_optin: 49152,
    reserved_smem_per_block: 0,
    smem_granularity: 256,
    reg_granularity: 256,
    sub_partitions: 4,
    max_regs_per_thread: 255,
    barriers_per_block_slot: 2,
    carveout_kb: &[],
    partitioned_gc: false,
};

/// Maxwell/Pascal defaults: 256 B shared-memory granularity (header l.613–638), 255 registers
/// per thread (header l.642–667), 32 blocks (header l.736–738), fixed shared memory (no
/// carveout: header l.1094–1098), barrier count 2 × blocks (header l.1571–1574, unused below 9.0).
const MAXWELL_PASCAL: DeviceLimits = BASE;

/// Volta-and-later defaults: 256 registers per thread (header l.642–667).
const VOLTA_PLUS: DeviceLimits = DeviceLimits { max_regs_per_thread: 256, ..BASE };

/// Ampere-and-later defaults: 128 B granularity (header l.613–638), 1 KB reserved per block
/// (CCCL `reserved_shared_memory_per_block = cc >= 80 ? 1024 : 0`; H200), opt-in = smem/SM − 1 KB
/// (CCCL `max_shared_memory_per_block_optin`, guide Table 31).
const AMPERE_PLUS: DeviceLimits = DeviceLimits { smem_granularity: 128, reserved_smem_per_block: 1024, ..VOLTA_PLUS };

/// The table, in ascending compute capability.
pub(super) static TABLE: &[DeviceLimits] = &[
    // 5.0 GM10x. smem/SM 64 KB, 64 warps, 32 blocks: ncu; header gran/blocks/sub-partitions.
    DeviceLimits { major: 5, minor: 0, chip: "GM10x", ..MAXWELL_PASCAL },
    // 5.2 GM20x. regs/block 65536: deviceQuery (GTX 970/980 Ti/Titan X/M2000) and guide,
    // not ncu's 32768 (§5.2 #1). smem/SM 96 KB: deviceQuery (GTX 960), ncu.
    // Partitioned global caching: header l.1174–1177.
    DeviceLimits { major: 5, minor: 2, chip: "GM20x", smem_per_sm: 98304, partitioned_gc: true, ..MAXWELL_PASCAL },
    // 5.3 GM20B (Tegra X1). regs/block 32768: deviceQuery, ncu. smem/SM 64 KB: ncu.
    // Partitioned global caching: header l.1174–1177.
    DeviceLimits { major: 5, minor: 3, chip: "GM20B", regs_per_block: 32768, partitioned_gc: true, ..MAXWELL_PASCAL },
    // 6.0 GP100. 2 sub-partitions: header l.716–718. No partitioned caching: header l.1179–1181.
    // smem/SM 64 KB: ncu, CCCL.
    DeviceLimits { major: 6, minor: 0, chip: "GP100", sub_partitions: 2, ..MAXWELL_PASCAL },
    // 6.1 GP10x. smem/SM 96 KB: ncu, CCCL. Partitioned global caching: header l.1174–1177.
    DeviceLimits { major: 6, minor: 1, chip: "GP10x", smem_per_sm: 98304, partitioned_gc: true, ..MAXWELL_PASCAL },
    // 6.2 GP10B (Tegra X2). regs/block 32768: deviceQuery (TX2) and CCCL, not ncu's 65536
    // (§5.2 #2). smem/SM 64 KB: ncu, CCCL. Partitioned global caching: header l.1174–1177.
    DeviceLimits { major: 6, minor: 2, chip: "GP10B", regs_per_block: 32768, partitioned_gc: true, ..MAXWELL_PASCAL },
    // 7.0 GV100. smem/SM and opt-in 96 KB, 32 blocks: ncu, CCCL; carveout: header, ncu.
    DeviceLimits {
        major: 7,
        minor: 0,
        chip: "GV100",
        smem_per_sm: 98304,
        smem_per_block_optin: 98304,
        carveout_kb: CARVEOUT_VOLTA,
        ..VOLTA_PLUS
    },
    // 7.2 GV11B (Xavier). 65536 regs/block, 2048 threads/SM: deviceQuery (gist r7vme); rest
    // as 7.0: ncu, header (7.2 takes the Volta branches).
    DeviceLimits {
        major: 7,
        minor: 2,
        chip: "GV11B",
        smem_per_sm: 98304,
        smem_per_block_optin: 98304,
        carveout_kb: CARVEOUT_VOLTA,
        ..VOLTA_PLUS
    },
    // 7.5 TU10x. 32 warps, 16 blocks (header l.740–743), 64 KB smem/SM and per block: guide
    // Tables 30–31, ncu.
    DeviceLimits {
        major: 7,
        minor: 5,
        chip: "TU10x",
        max_threads_per_sm: 1024,
        max_blocks_per_sm: 16,
        smem_per_sm: 65536,
        smem_per_block_optin: 65536,
        carveout_kb: CARVEOUT_TURING,
        ..VOLTA_PLUS
    },
    // 8.0 GA100. 64 warps, 32 blocks (header l.746–748), 164 KB smem/SM, 163 KB per block: guide.
    DeviceLimits {
        major: 8,
        minor: 0,
        chip: "GA100",
        smem_per_sm: 167936,
        smem_per_block_optin: 166912,
        carveout_kb: CARVEOUT_164,
        ..AMPERE_PLUS
    },
    // 8.6 GA10x. 48 warps, 16 blocks (header l.752–754), 100 KB smem/SM, 99 KB per block: guide.
    // Barriers 1 × blocks: header l.1580–1582 (unused below 9.0).
    DeviceLimits {
        major: 8,
        minor: 6,
        chip: "GA10x",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 16,
        smem_per_sm: 102400,
        smem_per_block_optin: 101376,
        barriers_per_block_slot: 1,
        carveout_kb: CARVEOUT_100,
        ..AMPERE_PLUS
    },
    // 8.7 GA10y (Orin). 48 warps, 16 blocks, 164 KB smem/SM: guide, deviceQuery (gist atinfinity).
    DeviceLimits {
        major: 8,
        minor: 7,
        chip: "GA10y",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 16,
        smem_per_sm: 167936,
        smem_per_block_optin: 166912,
        barriers_per_block_slot: 1,
        carveout_kb: CARVEOUT_164,
        ..AMPERE_PLUS
    },
    // 8.9 AD10x. 48 warps, 24 blocks (header l.749–751), 100 KB smem/SM: guide.
    DeviceLimits {
        major: 8,
        minor: 9,
        chip: "AD10x",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        smem_per_sm: 102400,
        smem_per_block_optin: 101376,
        barriers_per_block_slot: 1,
        carveout_kb: CARVEOUT_100,
        ..AMPERE_PLUS
    },
    // 9.0 GH100. Measured on H200 (§6): 2048 threads/SM, 32 blocks, 233472 / 232448 / 1024 B.
    // Barriers 2 × blocks: header l.1584–1585, H200 (§6.3).
    DeviceLimits {
        major: 9,
        minor: 0,
        chip: "GH100",
        smem_per_sm: 233472,
        smem_per_block_optin: 232448,
        carveout_kb: CARVEOUT_228,
        ..AMPERE_PLUS
    },
    // 10.0 GB10x. 64 warps, 32 blocks (header l.759–767), 228 KB: guide. Barriers 2 × blocks:
    // header l.1587–1595.
    DeviceLimits {
        major: 10,
        minor: 0,
        chip: "GB10x",
        smem_per_sm: 233472,
        smem_per_block_optin: 232448,
        carveout_kb: CARVEOUT_228,
        ..AMPERE_PLUS
    },
    // 10.1 Thor (CUDA 12.9 name). 24 blocks (header l.761–763), barriers 1 × blocks (header
    // l.1589–1591); 48 warps, 228 KB: guide and CCCL for sm_110 (§5.2 #5).
    DeviceLimits {
        major: 10,
        minor: 1,
        chip: "Thor",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        smem_per_sm: 233472,
        smem_per_block_optin: 232448,
        barriers_per_block_slot: 1,
        carveout_kb: CARVEOUT_228,
        ..AMPERE_PLUS
    },
    // 10.3 GB11x. As 10.0: guide, header default branch of major 10.
    DeviceLimits {
        major: 10,
        minor: 3,
        chip: "GB11x",
        smem_per_sm: 233472,
        smem_per_block_optin: 232448,
        carveout_kb: CARVEOUT_228,
        ..AMPERE_PLUS
    },
    // 11.0 GB10B (Thor, CUDA 13 name). Unknown to the 12.9 header; same limits as 10.1
    // (§5.2 #5; guide, ncu, CCCL `arch_traits<sm_110>`: 24 blocks, 1536 threads, 228 KB).
    DeviceLimits {
        major: 11,
        minor: 0,
        chip: "GB10B",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        smem_per_sm: 233472,
        smem_per_block_optin: 232448,
        barriers_per_block_slot: 1,
        carveout_kb: CARVEOUT_228,
        ..AMPERE_PLUS
    },
    // 12.0 GB20x. 48 warps, 24 blocks (header l.769–770), 100 KB: guide. Barriers 1 × blocks:
    // header l.1598–1599.
    DeviceLimits {
        major: 12,
        minor: 0,
        chip: "GB20x",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        smem_per_sm: 102400,
        smem_per_block_optin: 101376,
        barriers_per_block_slot: 1,
        carveout_kb: CARVEOUT_100,
        ..AMPERE_PLUS
    },
    // 12.1 GB20y. As 12.0: guide, ncu, header.
    DeviceLimits {
        major: 12,
        minor: 1,
        chip: "GB20y",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        smem_per_sm: 102400,
        smem_per_block_optin: 101376,
        barriers_per_block_slot: 1,
        carveout_kb: CARVEOUT_100,
        ..AMPERE_PLUS
    },
];
