//! Findings: what `cargo launch check` reports, with a severity, a kind (its rule) and the numbers.
//! The rules about one kernel on one arch are in `kernel_rules` ([`super::kernel_findings`]); the
//! CLI adds the ones about packages, baselines and arches with [`Detail::Text`].

use std::fmt;
use std::path::PathBuf;

use super::{DynamicStack, Note, ThreadsFrom};
use launch::failure::LaunchFailure;
use launch::Arch;

/// How bad a finding is. Ordered most severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Severity {
    /// Fails the check.
    Error,
    /// Fails only with `--deny warnings`.
    Warning,
    /// Information (kernels new since the baseline).
    Note,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Severity {
    /// `error`, `warning`, `note`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// Which rule a finding comes from; its [`FindingKind::id`] is stable (JSON, SARIF rule ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum FindingKind {
    /// A launch at the kernel's block size fails (error 701).
    Launch,
    /// Spill bytes over the budget, or spills with no budget set.
    Spills,
    /// The stack cannot be sized statically (recursion).
    Stack,
    /// Resources worse than the committed baseline.
    Regression,
    /// The toolchain cannot target a requested arch.
    Arch,
    /// The contract asks for what the arch does not give.
    Contract,
    /// No launch contract.
    Unbounded,
    /// A `max_regs` cap that forces spills.
    MaxRegs,
    /// Not in the baseline yet.
    New,
    /// A `[package.metadata.launch]` setting that applies to nothing.
    Config,
    /// A package with no kernel to check.
    Empty,
    /// The baseline file itself: an old format, or records nothing built.
    Baseline,
    /// The kernels did not build: a compiler error, a bad `@launch` or configuration, host code in
    /// a kernel file (from the build's `diagnostics.json`).
    Compile,
    /// Nothing embedded would load on the oldest driver the crate must run on (`min-driver`):
    /// cubins of a newer CUDA major, PTX of a newer ISA than it JITs (see `launch::compat`).
    Driver,
}

impl FindingKind {
    /// Every kind.
    pub const ALL: [FindingKind; 14] = [
        FindingKind::Launch,
        FindingKind::Spills,
        FindingKind::Stack,
        FindingKind::Regression,
        FindingKind::Arch,
        FindingKind::Contract,
        FindingKind::Unbounded,
        FindingKind::MaxRegs,
        FindingKind::New,
        FindingKind::Config,
        FindingKind::Empty,
        FindingKind::Baseline,
        FindingKind::Compile,
        FindingKind::Driver,
    ];

    /// The kebab-case name: `launch`, `max-regs`, ...
    pub fn id(self) -> &'static str {
        match self {
            FindingKind::Launch => "launch",
            FindingKind::Spills => "spills",
            FindingKind::Stack => "stack",
            FindingKind::Regression => "regression",
            FindingKind::Arch => "arch",
            FindingKind::Contract => "contract",
            FindingKind::Unbounded => "unbounded",
            FindingKind::MaxRegs => "max-regs",
            FindingKind::New => "new",
            FindingKind::Config => "config",
            FindingKind::Empty => "empty",
            FindingKind::Baseline => "baseline",
            FindingKind::Compile => "compile",
            FindingKind::Driver => "driver",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Where a finding points.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The file, relative to the package root.
    pub file: String,
    /// 1-based line; 0 when the finding is about the whole file.
    pub line: u32,
    /// 1-based column; 0 when unknown (ptxas, NVRTC and the manifest give only lines).
    pub col: u32,
    /// The file's absolute path, for annotations and SARIF.
    pub path: Option<PathBuf>,
}

/// What a finding says, with its numbers.
#[derive(Clone, Debug, PartialEq)]
pub enum Detail {
    /// A launch at the kernel's block size fails.
    Launch {
        /// The block size.
        threads: u32,
        /// Where it came from.
        threads_from: ThreadsFrom,
        /// Why it fails.
        failure: LaunchFailure,
        /// The largest block that launches.
        largest_block: u32,
        /// Whether the kernel has a contract (without one, bounds are the fix).
        bounded: bool,
    },
    /// The kernel spills.
    Spills {
        /// Spill store bytes.
        stores: u32,
        /// Spill load bytes.
        loads: u32,
        /// `max-spill-bytes`, when set.
        budget: Option<u32>,
    },
    /// The stack cannot be sized statically.
    Stack(DynamicStack),
    /// The contract asks for what the arch does not give.
    Contract(Note),
    /// No launch contract.
    Unbounded {
        /// The host block size checked.
        threads: u32,
        /// The largest block that launches.
        largest_block: u32,
    },
    /// A register cap forces spills.
    MaxRegs {
        /// The cap.
        cap: u32,
        /// Spill bytes (stores + loads).
        spill_bytes: u32,
    },
    /// Worse than the baseline: each change as `registers 32 → 40`.
    Regression {
        /// The changes.
        changes: Vec<String>,
    },
    /// Not in the baseline.
    NotInBaseline,
    /// A finding about a package, a file or the configuration, as a sentence.
    Text(String),
}

impl Detail {
    /// Whether the sentence is about one kernel on one arch (it is then prefixed with them).
    fn about_kernel(&self) -> bool {
        !matches!(self, Detail::Text(_))
    }
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::Launch { threads, threads_from, failure, largest_block, bounded } => {
                let at = if *threads_from == ThreadsFrom::Host { " (host block size)" } else { "" };
                write!(f, "cannot launch at {threads} threads{at}: {failure}")?;
                if !bounded && largest_block < threads {
                    write!(f, "; add __launch_bounds__({threads}) or launch ≤ {largest_block}")?;
                }
                Ok(())
            }
            Detail::Spills { stores, loads, budget } => {
                let total = stores.saturating_add(*loads);
                write!(f, "{stores} bytes spill stores + {loads} bytes spill loads = {total} bytes")?;
                match budget {
                    Some(b) => write!(f, ", over the budget of {b} (max-spill-bytes)"),
                    None => f.write_str("; no max-spill-bytes budget set"),
                }
            }
            Detail::Stack(stack) => stack.fmt(f),
            Detail::Contract(note) => note.fmt(f),
            Detail::Unbounded { threads, largest_block } => write!(
                f,
                "no launch contract: checked at the host block size {threads}; the largest block that launches is \
                 {largest_block}"
            ),
            Detail::MaxRegs { cap, spill_bytes } => {
                write!(f, "the cap of {cap} registers per thread forces {spill_bytes} bytes of spills")
            }
            Detail::Regression { changes } => write!(f, "since the baseline: {}", changes.join(", ")),
            Detail::NotInBaseline => {
                f.write_str("not in the baseline (new kernel or arch); run `cargo launch check --bless` to record it")
            }
            Detail::Text(text) => f.write_str(text),
        }
    }
}

/// One problem, for one kernel on one arch where that applies.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Error, warning or note.
    pub severity: Severity,
    /// The rule.
    pub kind: FindingKind,
    /// The package.
    pub package: String,
    /// The kernel (as people name it), when the finding is about one.
    pub kernel: Option<String>,
    /// The arch, when the finding is about one.
    pub arch: Option<Arch>,
    /// Where it points.
    pub location: Option<Location>,
    /// What it says.
    pub detail: Detail,
}

impl Finding {
    /// The sentence: `fill on sm_90: cannot launch at ...` for a kernel, the detail otherwise.
    pub fn message(&self) -> String {
        match (&self.kernel, self.arch) {
            (Some(k), Some(a)) if self.detail.about_kernel() => format!("{k} on {a}: {}", self.detail),
            _ => self.detail.to_string(),
        }
    }

    /// The file, when there is one.
    pub fn file(&self) -> Option<&str> {
        self.location.as_ref().map(|l| l.file.as_str())
    }

    /// The line, 0 when unknown.
    pub fn line(&self) -> u32 {
        self.location.as_ref().map_or(0, |l| l.line)
    }

    /// The column, 0 when unknown.
    pub fn col(&self) -> u32 {
        self.location.as_ref().map_or(0, |l| l.col)
    }
}
