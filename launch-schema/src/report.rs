//! `cargo launch report --format json`: one record per kernel × arch.
//!
//! Version 2 (this one) differs from version 1 where version 1 carried prose where numbers belong:
//! `occupancy.launch_error`, `fails_at.reason` and each of `notes` are objects with a `kind`, the
//! numbers and the sentence as `message`; `occupancy.limiters` are snake_case names
//! (`shared_memory`, `blocks`); `contract` gains `exact`; `toolchain` is `{nvrtc, ptxas}` as before.

use serde::{Deserialize, Serialize};

use crate::manifest::Toolchain;
use launch::occupancy::Limiters;
use launch::{Arch, Contract, Resources};
use launch_analysis::{DynamicStack, KernelReport, LaunchFailure, NextBlock, Note, ThreadsFrom};

/// The version of this document.
pub const VERSION: u32 = 2;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// [`VERSION`].
    pub schema: u32,
    /// The toolchain that compiled the kernels.
    pub toolchain: Toolchain,
    /// One record per kernel × arch (those `--kernel`/`--file` select, in `--sort` order).
    pub records: Vec<Record>,
    /// Per package, the driver each kind of embedded image needs (`launch::compat`).
    #[serde(default)]
    pub drivers: Vec<DriverNeed>,
}

impl Document {
    /// A document of this version (no [`Document::drivers`] yet).
    pub fn new(toolchain: Toolchain, records: Vec<Record>) -> Document {
        Document { schema: VERSION, toolchain, records, drivers: Vec::new() }
    }

    /// Reads a document, checking its version.
    pub fn from_json(text: &str) -> Result<Document, super::ReadError> {
        super::read(text, "report", VERSION, "written by another version of cargo-launch")
    }
}

/// The oldest driver that loads some of a package's embedded images.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct DriverNeed {
    /// Package.
    pub package: String,
    /// `cubin` or `ptx`.
    pub image: ImageKind,
    /// The cubins' arches, or the PTX's arch (`sm_80` standing for `compute_80`).
    pub arches: Vec<Arch>,
    /// The PTX's ISA (`8.8`); `null` for cubins.
    pub ptx_isa: Option<String>,
    /// The oldest driver, as its CUDA version (`12.9`); `null` when the table does not know it.
    pub min_driver: Option<String>,
    /// Whether the package's `min-driver` (or the toolchain's version) loads it.
    pub loads_on_min_driver: bool,
}

/// An embedded image's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ImageKind {
    /// Built by ptxas for one arch.
    Cubin,
    /// JIT-compiled by the driver.
    Ptx,
}

/// Which kernel a record is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct KernelId {
    /// Package.
    pub package: String,
    /// Symbol name.
    pub name: String,
    /// As people name it: demangled, qualified by its file where the name is in several files.
    pub display_name: String,
    /// `path/file.cu::name`.
    pub qualified: String,
    /// Source file relative to the package root.
    pub file: String,
    /// 1-based line of the definition.
    pub line: u32,
}

/// One kernel on one arch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Record {
    /// The kernel.
    #[serde(flatten)]
    pub kernel: KernelId,
    /// The arch.
    pub arch: Arch,
    /// The contract, `null` when unbounded.
    pub contract: Option<Contract>,
    /// What ptxas printed.
    pub ptxas: Ptxas,
    /// At the launch block size.
    pub occupancy: Occupancy,
    /// The largest block the driver accepts for this binary.
    pub max_threads_per_block: u32,
    /// The register cap the contract implies on this arch (see
    /// [`KernelReport::register_cap`]); null without one.
    pub register_cap: Option<u32>,
    /// What the contract asks for that this arch does not give.
    pub notes: Vec<Explained<Note>>,
    /// For a kernel without a thread contract whose largest block is below the device's maximum:
    /// the next power of two above it and why it fails.
    pub fails_at: Option<FailsAt>,
    /// When registers limit the blocks per SM: the most registers per thread with which one more
    /// block fits, and the blocks and occupancy then; null otherwise (added in version 2, after
    /// the first release of it: absent in older documents).
    #[serde(default)]
    pub next_block: Option<NextBlock>,
    /// With `--spills`, for a kernel that spills: its spill stores and loads by source line;
    /// null otherwise (added in version 2: absent in older documents).
    #[serde(default)]
    pub spills_by_line: Option<SpillsByLine>,
    /// Set when the kernel's stack cannot be sized statically (recursion), with the sentence;
    /// absent otherwise (and in documents written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_stack: Option<Explained<DynamicStack>>,
    /// The kernel's parameters as the compiler sees them (the manifest's `params`); absent when
    /// the build could not recover them (and in documents written before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Vec<crate::manifest::Param>>,
    /// With `--pressure`: the live registers by source line; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<Pressure>,
}

/// `pressure`: the live registers of the kernel compiled with line info, as `nvdisasm
/// --print-life-ranges` counts them after every instruction (`--life-range-mode count`), joined
/// on the instruction's offset with the source line (and inline frames) `nvdisasm -gi` gives it. A
/// live count is the registers holding a value the code still needs at that instruction; ptxas's
/// `allocated` count is at least the peak (it also counts the registers it reserves, and rounds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Pressure {
    /// The nvdisasm that read the cubin (`13.5.37`).
    pub nvdisasm: String,
    /// Why there are no live counts (nvdisasm cannot follow the data flow of this cubin: a CUDA
    /// 12 cubin read by a CUDA 13 nvdisasm); the other fields are then zero and empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The most live registers after any instruction.
    pub peak: LiveCount,
    /// ptxas's `Used N registers` for the kernel (of the build, not the line-info compile).
    pub allocated: u32,
    /// The contract's register budget on this arch: `.maxnreg`, or the most registers per thread
    /// with which `.minnctapersm` (default 1) blocks of `.maxntid` threads fit, whichever is
    /// lower; absent without a contract.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
    /// The occupancy at the record's block size if ptxas allocated the peak (rounded up to the
    /// arch's allocation unit as any allocation is); absent when the counts are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_peak: Option<AtPeak>,
    /// Every source line with instructions, most live general registers first (then file and
    /// line): the most live after one of its instructions.
    pub lines: Vec<PressureLine>,
    /// Instructions nvdisasm gave no source line for.
    pub unattributed: u32,
    /// For a kernel that spills under a register budget: the same file compiled again with the
    /// contract directives (`.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`) removed, i.e.
    /// what the code asks for, and the lines whose live count there is above the budget. Those
    /// are the lines the budget cuts, where the spills are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unbounded: Option<Unbounded>,
}

/// `at_peak`: the occupancy the peak would allow as the allocation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct AtPeak {
    /// CTAs resident per SM.
    pub active_blocks: u32,
    /// Warps resident per SM.
    pub active_warps: u32,
    /// active_warps / the SM's warps × 100, to one decimal.
    pub percent: f64,
}

/// `unbounded`: the kernel without its contract.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Unbounded {
    /// ptxas's `Used N registers` without the contract.
    pub allocated: u32,
    /// The most live registers after any instruction without the contract.
    pub peak: LiveCount,
    /// The lines whose most live general registers without the contract are above the budget,
    /// most first.
    pub over_budget: Vec<PressureLine>,
}

/// Live registers after an instruction, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct LiveCount {
    /// General-purpose registers (`R`).
    pub gpr: u32,
    /// Predicates (`P`).
    pub pred: u32,
    /// Uniform registers (`UR`, sm_75 and later).
    pub ugpr: u32,
}

/// One source line's pressure: one entry per line and inline call stack (a header function
/// inlined at two places is two entries).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct PressureLine {
    /// The file, relative to the package root where it lies under it (else as the compiler named it).
    pub file: String,
    /// 1-based line (the innermost location of code inlined from a header).
    pub line: u32,
    /// For code inlined from a function: the lines it was inlined at, the innermost caller first
    /// (a header function's call in the kernel last); absent for the kernel's own code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inlined_at: Vec<SourceLine>,
    /// The line's text, trimmed; absent when the file cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The most live registers after one of its instructions.
    pub live: LiveCount,
    /// Its instructions.
    pub instructions: u32,
}

/// A file and a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct SourceLine {
    /// As [`PressureLine::file`].
    pub file: String,
    /// 1-based.
    pub line: u32,
}

/// `spills_by_line`: what `nvdisasm -gi` of the kernel compiled with line info says. Counted: the
/// local-memory stores and loads (`STL`, `LDL`) that nvdisasm marks as spill/refill code; the
/// kernel's own local arrays are local memory too and are not counted. Instruction counts are
/// static (each instruction once, not per execution), bytes their access widths: summed, they are
/// ptxas's `spill stores`/`spill loads` bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct SpillsByLine {
    /// One entry per source line with spill code, most instructions first (then most bytes, then
    /// file and line).
    pub lines: Vec<SpillLine>,
    /// Spill code nvdisasm gave no source line for.
    pub unattributed: SpillCount,
    /// Every counted instruction, lines and unattributed.
    pub total: SpillCount,
    /// The nvdisasm that read the cubin (`13.2.51`).
    pub nvdisasm: String,
}

/// One source line's spill code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct SpillLine {
    /// The file, relative to the package root where it lies under it (else as the compiler named it).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// The counts.
    #[serde(flatten)]
    pub count: SpillCount,
}

/// Spill instructions and the bytes they move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct SpillCount {
    /// `STL` instructions.
    pub stores: u32,
    /// `LDL` instructions.
    pub loads: u32,
    /// Bytes the stores write (per thread, each instruction once).
    pub store_bytes: u32,
    /// Bytes the loads read.
    pub load_bytes: u32,
}

impl SpillCount {
    /// Stores + loads.
    pub fn instructions(&self) -> u32 {
        self.stores + self.loads
    }

    /// Adds `other`.
    pub fn add(&mut self, other: &SpillCount) {
        self.stores += other.stores;
        self.loads += other.loads;
        self.store_bytes += other.store_bytes;
        self.load_bytes += other.load_bytes;
    }
}

/// `ptxas`: the lines and the numbers (`registers`, `barriers`, `stack_frame`, `spill_stores`,
/// `spill_loads`, `cumulative_stack`, `shared_static`, `cmem`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Ptxas {
    /// The kernel's `ptxas -v` lines, verbatim.
    pub lines: Vec<String>,
    /// The parsed numbers.
    #[serde(flatten)]
    pub resources: Resources,
}

/// `occupancy`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Occupancy {
    /// Block size evaluated.
    pub threads: u32,
    /// Dynamic shared memory per block evaluated.
    pub dynamic_smem: u32,
    /// `contract` or `host`.
    pub threads_from: ThreadsFrom,
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
    /// Why the launch fails; null when it succeeds.
    pub launch_error: Option<Explained<LaunchFailure>>,
}

/// `fails_at`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct FailsAt {
    /// Threads per block.
    pub threads: u32,
    /// Why it fails.
    pub reason: Explained<LaunchFailure>,
}

/// A typed value (its fields, with its `kind`) and the sentence that says it (`message`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
#[cfg_attr(feature = "json-schema", schemars(rename = "Explained_{T}"))]
pub struct Explained<T> {
    /// The value.
    #[serde(flatten)]
    pub value: T,
    /// Its sentence.
    pub message: String,
}

impl<T: std::fmt::Display> Explained<T> {
    /// The value with its sentence.
    pub fn new(value: T) -> Explained<T> {
        let message = value.to_string();
        Explained { value, message }
    }
}

impl Record {
    /// The record of `kernel` analysed as `r`, with its ptxas lines.
    pub fn new(kernel: KernelId, lines: Vec<String>, r: &KernelReport) -> Record {
        let o = &r.occupancy;
        Record {
            kernel,
            arch: r.arch,
            contract: r.contract,
            ptxas: Ptxas { lines, resources: r.resources },
            occupancy: Occupancy {
                threads: o.threads,
                dynamic_smem: o.dynamic_smem,
                threads_from: o.threads_from,
                active_blocks: o.active_blocks,
                active_warps: o.active_warps,
                max_warps: o.max_warps,
                percent: o.percent,
                limiters: o.limiters,
                launch_error: r.launch_failure.map(Explained::new),
            },
            max_threads_per_block: r.largest_block,
            register_cap: r.register_cap,
            notes: r.notes.iter().copied().map(Explained::new).collect(),
            fails_at: r.fails_at.map(|f| FailsAt { threads: f.threads, reason: Explained::new(f.failure) }),
            next_block: r.next_block,
            spills_by_line: None,
            pressure: None,
            dynamic_stack: r.dynamic_stack.clone().map(Explained::new),
            params: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use launch_analysis::{analyze, HostLaunch};

    #[test]
    fn a_record_round_trips_with_its_numbers_and_sentences() {
        let r = Resources { registers: 167, ..Default::default() };
        let report = analyze("sm_90".parse().unwrap(), &r, None, HostLaunch { threads: 512, dynamic_smem: 0 }).unwrap();
        let id = KernelId {
            package: "p".into(),
            name: "poly_eval".into(),
            display_name: "poly_eval".into(),
            qualified: "kernels/poly.cu::poly_eval".into(),
            file: "kernels/poly.cu".into(),
            line: 7,
        };
        let doc = Document::new(
            Toolchain { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into() },
            vec![Record::new(id, vec!["ptxas info    : Used 167 registers".into()], &report)],
        );
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let e = &v["records"][0]["occupancy"]["launch_error"];
        assert_eq!(e["kind"], "registers");
        assert_eq!(e["needed"], 86016);
        assert!(e["message"].as_str().unwrap().starts_with("167 registers × 512 threads needs 86,016"), "{e}");
        assert_eq!(v["records"][0]["occupancy"]["threads_from"], "host");
        assert_eq!(v["records"][0]["display_name"], "poly_eval");
        assert_eq!(v["records"][0]["ptxas"]["registers"], 167);
        assert_eq!(Document::from_json(&text).unwrap(), doc);
        let old = text.replacen("\"schema\": 2", "\"schema\": 1", 1);
        assert_eq!(
            Document::from_json(&old).unwrap_err().to_string(),
            "report schema 1 (this tool reads 2); written by another version of cargo-launch"
        );
    }
}
