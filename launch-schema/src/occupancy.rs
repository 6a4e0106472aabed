//! `cargo launch occupancy --format json`: NVIDIA's Occupancy Calculator for a hypothetical
//! kernel. Without `--sweep` the document is a [`Detail`]; with `--sweep` a [`Sweep`].
//!
//! Version 2 (this one) differs from version 1 as the report's version 2 did: `limiters` are the
//! calculator's snake_case names (`shared_memory`, `blocks`), and `launch_error` is an object with
//! a `kind`, the numbers and the sentence as `message` (it was the sentence).

use serde::{Deserialize, Serialize};

use super::report::Explained;
use launch::occupancy::Limiters;
use launch::Arch;
use launch_analysis::LaunchFailure;

/// The version of these documents (their `schema` field).
pub const VERSION: u32 = 2;

/// One evaluated configuration, the fields of `{"points": [...]}`: the inputs (threads, registers,
/// static and dynamic shared memory in bytes), resident blocks and warps per SM (0 blocks: the
/// launch fails), the SM's warp slots, the occupancy in percent to one decimal (as the report),
/// and every limit that binds, ties included, as in the report (snake_case names:
/// `"registers"`, `"shared_memory"`, `"blocks"`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Point {
    /// Threads per block.
    pub threads: u32,
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub static_smem: u32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_smem: u32,
    /// Blocks resident per SM (0: the launch fails).
    pub active_blocks: u32,
    /// Warps resident per SM.
    pub active_warps: u32,
    /// Warp slots of an SM.
    pub max_warps: u32,
    /// active_warps / max_warps × 100, to one decimal.
    pub percent: f64,
    /// What limits the blocks per SM, ties included.
    pub limiters: Limiters,
}

/// The input a [`Sweep`] varies (`--sweep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Variable {
    /// Threads per block, 32..=1024 by 32 (plus the given block size).
    Threads,
    /// Registers per thread, every count 0..=255.
    Registers,
    /// Shared memory per block (static + dynamic), 0 to the arch's opt-in limit by 512 bytes (plus
    /// the given amount).
    Smem,
}

/// `--sweep`: one of the calculator's three graphs, the points in ascending order of the varied
/// input, `current` the index of the given configuration among them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Sweep {
    /// [`VERSION`].
    pub schema: u32,
    /// The varied input.
    pub sweep: Variable,
    /// Index of the given configuration in `points`.
    pub current: usize,
    /// The graph, in ascending order of the varied input.
    pub points: Vec<Point>,
}

/// A single configuration: the point's fields, then the rest of the calculator's answer. Block
/// limits that do not apply (no registers, no shared memory, barriers below 9.0) are null;
/// `suggested` is the point at the block size `cuOccupancyMaxPotentialBlockSize` picks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Detail {
    /// [`VERSION`].
    pub schema: u32,
    /// The given configuration.
    #[serde(flatten)]
    pub point: Point,
    /// The architecture.
    pub arch: Arch,
    /// The carveout in percent, null for the default.
    pub carveout: Option<u32>,
    /// Threads resident per SM.
    pub active_threads: u32,
    /// Blocks per SM each resource allows.
    pub block_limits: BlockLimits,
    /// Registers allocated per block (per warp, rounded to the granularity).
    pub allocated_registers_per_block: u32,
    /// Shared memory allocated per block (with the reserved part, rounded to the granularity).
    pub allocated_smem_per_block: u32,
    /// The largest block that launches (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub max_threads_per_block: u32,
    /// The point at the suggested block size; null when no block size launches.
    pub suggested: Option<Point>,
    /// The most registers per thread with which one more block (`active_blocks + 1`) fits.
    pub registers_for_one_more_block: Option<u32>,
    /// Why the launch fails: its kind, numbers and sentence (the report's `launch_error`); null
    /// when it succeeds.
    pub launch_error: Option<Explained<LaunchFailure>>,
}

impl Sweep {
    /// Reads a `--sweep` document, checking its version.
    pub fn from_json(text: &str) -> Result<Sweep, super::ReadError> {
        super::read(text, "occupancy sweep", VERSION, "written by another version of cargo-launch")
    }
}

impl Detail {
    /// Reads a single-configuration document, checking its version.
    pub fn from_json(text: &str) -> Result<Detail, super::ReadError> {
        super::read(text, "occupancy", VERSION, "written by another version of cargo-launch")
    }
}

/// Blocks per SM each resource allows; null where the resource sets no limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct BlockLimits {
    /// By the warp slots.
    pub warps: u32,
    /// By the registers; null without registers.
    pub registers: Option<u32>,
    /// By the shared memory; null without shared memory.
    pub shared_memory: Option<u32>,
    /// By the arch's maximum of blocks per SM.
    pub blocks: u32,
    /// By the CTA barriers; null below compute capability 9.0 or without barriers.
    pub barriers: Option<u32>,
}
