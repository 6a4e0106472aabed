//! What a contract asks for that an arch does not give: `min_blocks` that cannot be met or is not
//! reached, `max_regs` above the cap the block size already imposes. ptxas ignores or overrides
//! those silently; the report and `check` say so.

use std::fmt;

use launch::occupancy::{self, Carveout, DeviceLimits, FunctionAttrs, Limiters, Occupancy};
use launch::{Arch, Contract};

/// One thing a contract asks for that this arch does not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
pub enum Note {
    /// No register count lets `min_blocks` blocks of the contract's threads be resident.
    MinBlocksImpossible {
        /// The arch.
        arch: Arch,
        /// `min_blocks`.
        blocks: u32,
        /// The contract's threads per block.
        threads: u32,
        /// Why.
        reason: Impossible,
    },
    /// `min_blocks` could be met but the kernel as compiled does not reach it.
    MinBlocksNotReached {
        /// The arch.
        arch: Arch,
        /// `min_blocks`.
        blocks: u32,
        /// Blocks that are resident.
        active_blocks: u32,
        /// What limits them.
        limiters: Limiters,
    },
    /// `max_regs` is above the registers that `min_blocks` blocks of the contract's threads
    /// leave per thread; ptxas holds the kernel to the lower number.
    MaxRegsAboveFit {
        /// The arch.
        arch: Arch,
        /// `max_regs`.
        max_regs: u32,
        /// The registers per thread that fit.
        fit: u32,
        /// `min_blocks` (1 when not given).
        blocks: u32,
        /// The contract's threads per block.
        threads: u32,
    },
}

/// Why `min_blocks` blocks can never be resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(tag = "limit", rename_all = "snake_case"))]
pub enum Impossible {
    /// The blocks' threads exceed the SM's.
    ThreadsPerSm {
        /// Threads an SM holds.
        max: u32,
    },
    /// More blocks than an SM holds.
    BlocksPerSm {
        /// Blocks an SM holds.
        max: u32,
    },
    /// Their shared memory or barriers do not fit.
    SharedMemoryOrBarriers,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Note::MinBlocksImpossible { arch, blocks, threads, reason } => {
                write!(f, "min_blocks {blocks} cannot be met on {arch}: ")?;
                match reason {
                    Impossible::ThreadsPerSm { max } => {
                        write!(f, "{blocks} × {threads} threads exceed the SM's {max} threads")?
                    }
                    Impossible::BlocksPerSm { max } => write!(f, "the SM holds at most {max} blocks")?,
                    Impossible::SharedMemoryOrBarriers => {
                        f.write_str("the shared memory or barriers of that many blocks do not fit")?
                    }
                }
                f.write_str("; ptxas ignores it")
            }
            Note::MinBlocksNotReached { arch, blocks, active_blocks, limiters } => write!(
                f,
                "min_blocks {blocks} is not reached on {arch}: {active_blocks} blocks fit (limited by {limiters})"
            ),
            Note::MaxRegsAboveFit { arch, max_regs, fit, blocks, threads } => write!(
                f,
                "max_regs {max_regs} is above the {fit} registers that {blocks} block(s) of {threads} threads leave per \
                 thread on {arch}; ptxas holds the kernel to {fit}"
            ),
        }
    }
}

/// The register cap a contract implies on `dev` (the most registers per thread with which
/// `min_blocks`, default 1, blocks of its threads fit, lowered by `max_regs`), and what the arch
/// does not honour. `attrs` and `occ` describe the kernel as compiled.
pub(crate) fn contract_notes(
    dev: &DeviceLimits,
    contract: Option<Contract>,
    attrs: &FunctionAttrs,
    occ: &Occupancy,
    arch: Arch,
) -> (Option<u32>, Vec<Note>) {
    let mut notes = Vec::new();
    let Some(c) = contract else { return (None, notes) };
    let Some(threads) = c.threads else { return (c.max_regs, notes) };
    let blocks = c.min_blocks.unwrap_or(1);
    let fit = occupancy::registers_for_blocks(dev, attrs, threads, blocks, 0, Carveout::Default);
    if c.min_blocks.is_some() && fit.is_none() {
        let reason = if blocks * threads > dev.max_threads_per_sm {
            Impossible::ThreadsPerSm { max: dev.max_threads_per_sm }
        } else if blocks > dev.max_blocks_per_sm {
            Impossible::BlocksPerSm { max: dev.max_blocks_per_sm }
        } else {
            Impossible::SharedMemoryOrBarriers
        };
        notes.push(Note::MinBlocksImpossible { arch, blocks, threads, reason });
    } else if c.min_blocks.is_some() && occ.active_blocks < blocks {
        notes.push(Note::MinBlocksNotReached {
            arch,
            blocks,
            active_blocks: occ.active_blocks,
            limiters: occ.limiters,
        });
    }
    let cap = match (fit, c.max_regs) {
        (Some(fit), Some(max_regs)) => {
            if max_regs > fit {
                notes.push(Note::MaxRegsAboveFit { arch, max_regs, fit, blocks, threads });
            }
            Some(fit.min(max_regs))
        }
        (f, m) => f.or(m),
    };
    (cap, notes)
}
