//! `cargo launch diff --format json`: what changed per kernel × arch between two sides (two
//! toolchains, a git revision and the working tree, or two `report --format json` documents).
//! Only what changed is listed; the numbers are the report's ([`super::report::Record`]).

use serde::{Deserialize, Serialize};

use super::manifest::Toolchain;
use super::report::Explained;
use launch::Arch;
use launch_analysis::LaunchFailure;

/// The version of this document.
pub const VERSION: u32 = 1;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// [`VERSION`].
    pub schema: u32,
    /// The old side.
    pub old: Side,
    /// The new side.
    pub new: Side,
    /// One entry per kernel × arch on both sides where something changed, most impact first.
    pub changes: Vec<Change>,
    /// Kernels only the new side has.
    pub added: Vec<Kernel>,
    /// Kernels only the old side has.
    pub removed: Vec<Kernel>,
    /// Kernels whose symbol is the same but whose file moved (their numbers are compared).
    pub moved: Vec<Moved>,
    /// A kernel removed and one added at the same file and line: probably renamed. Listed, not
    /// compared.
    pub renamed: Vec<Renamed>,
    /// Kernels on both sides that one side has on an arch the other has not.
    pub arches_only: Vec<ArchOnly>,
    /// Sums over every pair compared.
    pub totals: Totals,
}

impl Document {
    /// Reads a document, checking its version.
    pub fn from_json(text: &str) -> Result<Document, super::ReadError> {
        super::read(text, "diff", VERSION, "written by another version of cargo-launch")
    }
}

/// One side of the comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Side {
    /// What it is: `toolchain 12.9`, `HEAD`, `working tree`, a file's path.
    pub label: String,
    /// The compiler versions of its report.
    pub toolchain: Toolchain,
}

/// A kernel, as a report names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Kernel {
    /// Package.
    pub package: String,
    /// Symbol name (what pairs the sides, with the file).
    pub name: String,
    /// As people name it.
    pub display_name: String,
    /// Source file relative to the package root.
    pub file: String,
    /// 1-based line of the definition.
    pub line: u32,
    /// The arches it has on its side.
    pub arches: Vec<Arch>,
}

/// A kernel whose file changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Moved {
    /// Package.
    pub package: String,
    /// Symbol name.
    pub name: String,
    /// Its file on the old side.
    pub old_file: String,
    /// Its file on the new side.
    pub new_file: String,
}

/// A kernel removed and one added at the same place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Renamed {
    /// The old one.
    pub old: Kernel,
    /// The new one.
    pub new: Kernel,
}

/// A kernel one side has on an arch the other has not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ArchOnly {
    /// Package.
    pub package: String,
    /// Symbol name.
    pub name: String,
    /// The arch.
    pub arch: Arch,
    /// `old` or `new`: the side that has it.
    pub side: String,
}

/// An old and a new value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "json-schema", schemars(rename = "Delta_{T}"))]
pub struct Delta<T> {
    /// Before.
    pub old: T,
    /// After.
    pub new: T,
}

/// The occupancy at the launch block size, before and after.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct OccupancyDelta {
    /// The block size evaluated (the contract's, else the host's).
    pub threads: Delta<u32>,
    /// Occupancy in percent, to one decimal.
    pub percent: Delta<f64>,
    /// Blocks resident per SM.
    pub active_blocks: Delta<u32>,
}

/// A launch at the kernel's block size that stops or starts working.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct LaunchChange {
    /// The block size.
    pub threads: u32,
    /// `true`: it launched and now fails (a new error 701); `false`: it failed and now launches.
    pub fails_now: bool,
    /// Why it fails on the side where it fails.
    pub failure: Explained<LaunchFailure>,
}

/// One field of ptxas's resources that changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ResourceDelta {
    /// The field, as the report names it (`registers`, `barriers`, `cmem`, ...).
    pub field: String,
    /// Before; null where ptxas did not print it.
    pub old: Option<u32>,
    /// After; null where ptxas did not print it.
    pub new: Option<u32>,
}

/// One kernel × arch where something changed; each field is null when it did not change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Change {
    /// Package.
    pub package: String,
    /// Symbol name.
    pub name: String,
    /// As people name it.
    pub display_name: String,
    /// Source file (the new side's).
    pub file: String,
    /// Line of the definition (the new side's).
    pub line: u32,
    /// The arch.
    pub arch: Arch,
    /// Registers per thread.
    pub registers: Option<Delta<u32>>,
    /// Spill store bytes.
    pub spill_stores: Option<Delta<u32>>,
    /// Spill load bytes.
    pub spill_loads: Option<Delta<u32>>,
    /// Stack frame bytes per thread.
    pub stack_frame: Option<Delta<u32>>,
    /// Static shared memory bytes per block.
    pub shared_static: Option<Delta<u32>>,
    /// Every resource of ptxas's report that changed (`launch::Resources::FIELDS`, in the struct's
    /// order; the five above are among them): barriers, cumulative stack and cmem too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceDelta>,
    /// Occupancy at the launch block size (blocks or percent changed).
    pub occupancy: Option<OccupancyDelta>,
    /// The most registers with which one more block fits (the next-block cliff); null on a side
    /// where registers do not limit the blocks.
    pub next_block_registers: Option<Delta<Option<u32>>>,
    /// The largest block that launches.
    pub largest_block: Option<Delta<u32>>,
    /// The launch at the block size stops or starts working.
    pub launch: Option<LaunchChange>,
    /// With live registers on both sides (`report --pressure` documents, `diff --pressure`): the
    /// peak after any instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_peak: Option<Delta<u32>>,
    /// With live registers on both sides: each source line whose most live registers changed
    /// (over all the places it is inlined at), most change first; null on the side where the line
    /// has no instructions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub live_lines: Vec<LiveLineChange>,
    /// Whether this is a regression, as `check --baseline` judges one too: a resource the field
    /// table marks "more is worse" grew (registers, stack frame, spill stores or loads, static
    /// shared memory), the occupancy at the block size fell, or a launch at the block size fails
    /// now (what `--fail-on regression` fails on).
    pub regression: bool,
}

/// One source line's most live registers, before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct LiveLineChange {
    /// The file, relative to the package root.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// Live general registers.
    pub live: Delta<Option<u32>>,
}

/// Sums over the pairs compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Totals {
    /// Kernel × arch pairs on both sides.
    pub compared: u32,
    /// Of them, with a change.
    pub changed: u32,
    /// Of them, regressions ([`Change::regression`]).
    pub regressions: u32,
    /// Pairs whose occupancy went down.
    pub occupancy_lost: u32,
    /// Pairs whose occupancy went up.
    pub occupancy_gained: u32,
    /// Pairs with more spill bytes.
    pub spills_gained: u32,
    /// Pairs with fewer spill bytes.
    pub spills_lost: u32,
    /// Launches at the block size that fail now.
    pub launches_broken: u32,
    /// Launches at the block size that work now.
    pub launches_fixed: u32,
    /// Registers summed over the pairs, new minus old.
    pub registers_delta: i64,
    /// Spill bytes (stores + loads) summed over the pairs, new minus old.
    pub spill_bytes_delta: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_round_trips_and_refuses_another_version() {
        let doc = Document {
            schema: VERSION,
            old: Side { label: "a".into(), toolchain: Toolchain { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into() } },
            new: Side { label: "b".into(), toolchain: Toolchain { nvrtc: "13.0.88".into(), ptxas: "13.0.88".into() } },
            changes: Vec::new(),
            added: Vec::new(),
            removed: Vec::new(),
            moved: Vec::new(),
            renamed: Vec::new(),
            arches_only: Vec::new(),
            totals: Totals::default(),
        };
        let text = serde_json::to_string_pretty(&doc).unwrap();
        assert_eq!(Document::from_json(&text).unwrap(), doc);
        let other = text.replacen("\"schema\": 1", "\"schema\": 2", 1);
        assert_eq!(
            Document::from_json(&other).unwrap_err().to_string(),
            "diff schema 2 (this tool reads 1); written by another version of cargo-launch"
        );
    }
}
