//! A kernel on one arch as `cargo launch report` and `check` see it: the record printed and
//! serialised to JSON. A leaf: the report builds records, the renderers, the selection and the
//! check read them.

use launch::Arch;
use serde::Serialize;

/// One kernel on one arch, as printed and as serialised to JSON.
#[derive(Debug, Serialize)]
pub struct Record {
    /// Package.
    pub package: String,
    /// Symbol name.
    pub name: String,
    /// Demangled name.
    pub display_name: String,
    /// `path/file.cu::name`: names the kernel even where its plain name is in several files.
    pub qualified: String,
    /// Arch.
    pub arch: Arch,
    /// Source file relative to the crate root.
    pub file: String,
    /// 1-based line of the definition.
    pub line: u32,
    /// The contract, `null` when unbounded.
    pub contract: Option<ContractJson>,
    /// What ptxas printed.
    pub ptxas: PtxasJson,
    /// Occupancy at the launch block size.
    pub occupancy: OccupancyJson,
    /// The largest block the driver accepts for this binary (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub max_threads_per_block: u32,
    /// For a contract with a thread count: the most registers per thread with which
    /// `min_blocks` (default 1) blocks of `threads` fit on this arch, i.e. the cap the driver's
    /// limits impose; `max_regs` lowers it further. Null without a thread count.
    pub register_cap: Option<u32>,
    /// What the contract asked for that this arch does not give (ptxas ignores or overrides it).
    pub notes: Vec<String>,
    /// For a kernel without a thread contract whose largest block is below 1024: the next power of
    /// two above it, and why a launch there fails (error 701). Null otherwise.
    pub fails_at: Option<FailingBlock>,
}

/// A block size that cannot be launched, and why.
#[derive(Debug, Serialize)]
pub struct FailingBlock {
    /// Threads per block.
    pub threads: u32,
    /// The arithmetic.
    pub reason: String,
}

/// `contract` in the JSON.
#[derive(Debug, Serialize)]
pub struct ContractJson {
    /// `annotation` (`@launch`) or `launch_bounds` (`__launch_bounds__`/`__maxnreg__`).
    pub source: launch::ContractSource,
    /// Threads per CTA.
    pub threads: Option<u32>,
    /// `.minnctapersm`.
    pub min_blocks: Option<u32>,
    /// `.maxnreg`.
    pub max_regs: Option<u32>,
}

/// `ptxas` in the JSON: the lines and the numbers (`registers`, `barriers`, `stack_frame`,
/// `spill_stores`, `spill_loads`, `cumulative_stack`, `shared_static`, `cmem`).
#[derive(Debug, Serialize)]
pub struct PtxasJson {
    /// The kernel's `ptxas -v` lines, verbatim.
    pub lines: Vec<String>,
    /// The parsed numbers.
    #[serde(flatten)]
    pub resources: launch::Resources,
}

/// `occupancy` in the JSON.
#[derive(Debug, Serialize)]
pub struct OccupancyJson {
    /// Block size evaluated: the contract's threads, else the host block size.
    pub threads: u32,
    /// Dynamic shared memory per block evaluated (`dynamic-smem` of the kernel's metadata).
    pub dynamic_smem: u32,
    /// Where `threads` came from: `contract` or `host` (the `threads` metadata key, default 256).
    pub threads_from: &'static str,
    /// CTAs resident per SM (0: the launch fails).
    pub active_blocks: u32,
    /// Warps resident per SM.
    pub active_warps: u32,
    /// Warps an SM can hold.
    pub max_warps: u32,
    /// active_warps / max_warps × 100.
    pub percent: f64,
    /// What limits the blocks per SM (every tie listed), in words.
    pub limiters: Vec<&'static str>,
    /// Why the launch fails, with the arithmetic; null when it succeeds.
    pub launch_error: Option<String>,
}
