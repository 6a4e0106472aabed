//! The analysis of one kernel on one arch, as data: what a launch at the kernel's block size gives
//! (occupancy and its limiters), the largest block that launches, the register cap its contract
//! implies, what the arch does not honour, and the findings `cargo launch check` gates on.
//!
//! Everything here is arithmetic on the occupancy model ([`launch::occupancy`]): no compiler, no
//! GPU. `cargo launch report` and `check` select packages and render these results; the runtime's
//! checked launch (`launch::cuda`) explains a refused launch with the same [`LaunchFailure`], which
//! lives in the run-time crate (`launch::failure`) for that reason.
//!
//! A crate of its own because two tools use it and a user's binary does not: the build (the tune
//! grid and `explore`'s variants drop a block size that cannot launch) and `cargo launch`; the
//! documents (`launch-schema`) carry its results.
#![deny(missing_docs)]
// Tests may be long tables of cases; the 100-line limit is for the code they test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod explore;
mod findings;
mod kernel_rules;
mod notes;
mod stack;

use std::fmt;

pub use explore::{cliffs, frontier, Cliff};
pub use findings::{Detail, Finding, FindingKind, Location, Severity};
pub use kernel_rules::{baseline_finding, kernel_findings, variant_findings};
pub use launch::failure::{group, LaunchFailure};
pub use notes::{Impossible, Note};
pub use stack::DynamicStack;

use launch::occupancy::{self, Carveout, DeviceLimits, FunctionAttrs, Limiter, Limiters, OccupancyError};
use launch::{Arch, Contract, Resources};

/// How the host launches a kernel: the block size used when the kernel has no thread contract,
/// and the dynamic shared memory per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HostLaunch {
    /// Threads per block for a kernel without a thread contract.
    pub threads: u32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_smem: u32,
}

/// Where the evaluated block size came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ThreadsFrom {
    /// The contract's thread count.
    Contract,
    /// The host's block size (the `threads` metadata key, default 256): the kernel has no thread contract.
    Host,
}

/// The occupancy of a launch at the kernel's block size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaunchOccupancy {
    /// Block size evaluated: the contract's threads, else the host's.
    pub threads: u32,
    /// Where `threads` came from.
    pub threads_from: ThreadsFrom,
    /// Dynamic shared memory per block evaluated.
    pub dynamic_smem: u32,
    /// CTAs resident per SM (0: the launch fails).
    pub active_blocks: u32,
    /// Warps resident per SM.
    pub active_warps: u32,
    /// Warps an SM can hold.
    pub max_warps: u32,
    /// active_warps / max_warps × 100, to one decimal.
    pub percent: f64,
    /// What limits the blocks per SM, ties included.
    pub limiters: Limiters,
}

/// The occupancy cliff of a register-limited kernel: the most registers per thread with which one
/// more block fits on an SM, and what the SM then holds. What a developer tuning `max_regs` wants
/// first: `167 → 128 registers: 2 blocks/SM, 25 %`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct NextBlock {
    /// Registers per thread at most.
    pub registers: u32,
    /// Blocks resident per SM then.
    pub active_blocks: u32,
    /// The occupancy then, in percent to one decimal.
    pub percent: f64,
}

/// A block size that cannot be launched, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct FailingBlock {
    /// Threads per block.
    pub threads: u32,
    /// Why it fails.
    pub failure: LaunchFailure,
}

/// One kernel on one arch.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelReport {
    /// The arch.
    pub arch: Arch,
    /// What ptxas reported.
    pub resources: Resources,
    /// The launch contract, `None` when unbounded.
    pub contract: Option<Contract>,
    /// At the kernel's block size.
    pub occupancy: LaunchOccupancy,
    /// The largest block the driver accepts for this binary (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub largest_block: u32,
    /// Why the launch at the kernel's block size fails; `None` when it succeeds.
    pub launch_failure: Option<LaunchFailure>,
    /// For a contract with a thread count: the most registers per thread with which `min_blocks`
    /// (default 1) blocks of `threads` fit on this arch, lowered by `max_regs`. `max_regs` alone
    /// without a thread count.
    pub register_cap: Option<u32>,
    /// What the contract asks for that this arch does not give.
    pub notes: Vec<Note>,
    /// For a kernel without a thread contract whose largest block is below the device's maximum:
    /// the next power of two above it, and why a launch there fails (the seed article's trap).
    pub fails_at: Option<FailingBlock>,
    /// When registers limit the blocks per SM: where one more block fits. `None` otherwise, or
    /// when no register count lets one more block fit (another limit is as tight).
    pub next_block: Option<NextBlock>,
    /// When the kernel's stack cannot be sized statically (recursion), why; see
    /// [`KernelReport::with_stack`].
    pub dynamic_stack: Option<DynamicStack>,
}

impl KernelReport {
    /// With what the build found about the kernel's stack on this arch (the manifest's record;
    /// [`analyze`] reads only the numbers).
    #[must_use]
    pub fn with_stack(self, dynamic_stack: Option<DynamicStack>) -> KernelReport {
        KernelReport { dynamic_stack, ..self }
    }

    /// The contract's register cap where it binds: below the most registers a thread can have on
    /// this arch ([`DeviceLimits::max_registers_assigned`], 255), which every kernel has anyway.
    /// `None` without a cap.
    pub fn binding_register_cap(&self) -> Option<u32> {
        let most =
            DeviceLimits::for_arch(self.arch).map_or(occupancy::PTXAS_MAX_REGISTERS, |d| d.max_registers_assigned());
        self.register_cap.filter(|&cap| cap < most)
    }
}

/// Why a kernel could not be analysed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnalysisError {
    /// The occupancy model has no data for the arch.
    UnknownArch(Arch),
    /// The calculator rejected the input.
    Occupancy {
        /// The arch.
        arch: Arch,
        /// What it said.
        error: OccupancyError,
    },
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::UnknownArch(arch) => write!(f, "no occupancy data for {arch}"),
            AnalysisError::Occupancy { arch, error } => write!(f, "occupancy on {arch}: {error}"),
        }
    }
}

impl std::error::Error for AnalysisError {}

/// Analyses a kernel with `resources` and `contract` on `arch`, launched as `host` says when the
/// contract gives no thread count.
pub fn analyze(
    arch: Arch,
    resources: &Resources,
    contract: Option<Contract>,
    host: HostLaunch,
) -> Result<KernelReport, AnalysisError> {
    let dev = DeviceLimits::for_arch(arch).ok_or(AnalysisError::UnknownArch(arch))?;
    let r = *resources;
    let maxntid = contract.and_then(|c| c.threads);
    let (threads, threads_from) = match maxntid {
        Some(t) => (t, ThreadsFrom::Contract),
        None => (host.threads, ThreadsFrom::Host),
    };
    let largest_block = occupancy::max_threads_per_block(dev, r.registers, maxntid);
    // The driver's default limit on dynamic shared memory is raised (opt-in) when the host asks for more.
    let attrs = FunctionAttrs::new(r.registers, r.shared_static, r.barriers).opted_in(dev, host.dynamic_smem);
    let calc = |threads, dynamic| {
        occupancy::occupancy(dev, &attrs, threads, dynamic, Carveout::Default)
            .map_err(|error| AnalysisError::Occupancy { arch, error })
    };
    let occ = calc(threads, host.dynamic_smem)?;
    let launch_failure = (occ.active_blocks == 0 || threads > largest_block)
        .then(|| LaunchFailure::diagnose(dev, &r, host.dynamic_smem, threads, largest_block, &occ));
    let fails_at = match maxntid {
        None if largest_block < dev.max_threads_per_block => {
            let t = (largest_block + 1).next_power_of_two().min(dev.max_threads_per_block);
            let o = calc(t, 0)?;
            Some(FailingBlock { threads: t, failure: LaunchFailure::diagnose(dev, &r, 0, t, largest_block, &o) })
        }
        _ => None,
    };
    let (register_cap, notes) = notes::contract_notes(dev, contract, &attrs, &occ, arch);
    let next_block = if occ.limiters.contains(Limiter::Registers) {
        let blocks = occ.active_blocks + 1;
        match occupancy::registers_for_blocks(dev, &attrs, threads, blocks, host.dynamic_smem, Carveout::Default) {
            Some(registers) if registers < r.registers => {
                let fewer = FunctionAttrs { registers, ..attrs };
                let o = occupancy::occupancy(dev, &fewer, threads, host.dynamic_smem, Carveout::Default)
                    .map_err(|error| AnalysisError::Occupancy { arch, error })?;
                Some(NextBlock { registers, active_blocks: o.active_blocks, percent: o.percent_rounded() })
            }
            _ => None,
        }
    } else {
        None
    };
    Ok(KernelReport {
        arch,
        resources: r,
        contract,
        occupancy: LaunchOccupancy {
            threads,
            threads_from,
            dynamic_smem: host.dynamic_smem,
            active_blocks: occ.active_blocks,
            active_warps: occ.active_warps,
            max_warps: occ.max_warps,
            percent: occ.percent_rounded(),
            limiters: occ.limiters,
        },
        largest_block,
        launch_failure,
        register_cap,
        notes,
        fails_at,
        next_block,
        dynamic_stack: None,
    })
}

#[cfg(test)]
mod tests;
