//! `cargo launch explore --format json`: one kernel under several launch contracts, per arch.

use serde::{Deserialize, Serialize};

use super::manifest::Toolchain;
use super::report::{Explained, KernelId};
use launch::occupancy::Limiters;
use launch::{Arch, Contract, Resources};
use launch_analysis::{LaunchFailure, NextBlock, ThreadsFrom};

/// The version of this document.
pub const VERSION: u32 = 1;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// [`VERSION`].
    pub schema: u32,
    /// The toolchain that compiled the kernel and assembled the variants.
    pub toolchain: Toolchain,
    /// The kernel.
    pub kernel: KernelId,
    /// With `--pressure`: the nvdisasm that counted the live registers (`13.5.37`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvdisasm: Option<String>,
    /// One entry per arch, lowest first.
    pub arches: Vec<ArchVariants>,
}

impl Document {
    /// Reads a document, checking its version.
    pub fn from_json(text: &str) -> Result<Document, super::ReadError> {
        super::read(text, "explore", VERSION, "written by another version of cargo-launch")
    }
}

/// The variants on one arch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ArchVariants {
    /// The arch.
    pub arch: Arch,
    /// The current build's cliff: the registers at which one more block fits (null when
    /// registers are not the limit).
    pub next_block: Option<NextBlock>,
    /// With `--pressure`: why this arch's variants have no live counts (nvdisasm follows no data
    /// flow through their cubins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_unavailable: Option<String>,
    /// The variants, the current build first.
    pub variants: Vec<Variant>,
}

/// One contract on one arch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Variant {
    /// `current`, `none`, `cliff`, or `grid`.
    pub origin: String,
    /// The contract (null: none).
    pub contract: Option<Contract>,
    /// What ptxas reported for it; null when ptxas refused it (see `error`).
    pub resources: Option<Resources>,
    /// With `--pressure`: the most live registers after any instruction of its cubin (nvdisasm
    /// `-lrm count`), at most `resources.registers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_peak: Option<crate::report::LiveCount>,
    /// Why ptxas refused it.
    pub error: Option<String>,
    /// Block size evaluated.
    pub threads: u32,
    /// Where `threads` came from.
    pub threads_from: ThreadsFrom,
    /// Blocks resident per SM (0: the launch fails, or ptxas refused the variant).
    pub active_blocks: u32,
    /// Occupancy in percent, to one decimal.
    pub percent: f64,
    /// What limits the blocks per SM (none when ptxas refused the variant).
    pub limiters: Limiters,
    /// Why the launch fails; null when it succeeds.
    pub launch_error: Option<Explained<LaunchFailure>>,
    /// The largest block that launches (0 when ptxas refused the variant: nothing to launch).
    pub max_threads_per_block: u32,
    /// On the frontier: no other variant of this arch has at least the occupancy and at most the
    /// spill bytes, and is better in one.
    pub frontier: bool,
}
