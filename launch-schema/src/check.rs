//! `cargo launch check --format json`: the verdict, per-package baseline use and every finding.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::manifest::Toolchain;
use launch::Arch;
use launch_analysis::{Finding, FindingKind, Severity};

/// The version of this document: 2 since findings gained the `compile` kind (a new value an
/// older reader refuses) and `col`; 3 since the `driver` kind.
pub const VERSION: u32 = 3;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// [`VERSION`].
    pub schema: u32,
    /// The toolchain that compiled the kernels; null when nothing was built.
    pub toolchain: Option<Toolchain>,
    /// Kernels checked.
    pub kernels: usize,
    /// Arches checked, by number.
    pub arches: Vec<Arch>,
    /// Findings of severity error.
    pub errors: usize,
    /// Findings of severity warning.
    pub warnings: usize,
    /// Per package: which baseline was compared, written or not found.
    pub baselines: Vec<BaselineUse>,
    /// Every finding, most severe first.
    pub findings: Vec<FindingRecord>,
}

impl Document {
    /// Reads a document, checking its version.
    pub fn from_json(text: &str) -> Result<Document, super::ReadError> {
        super::read(text, "check", VERSION, "written by another version of cargo-launch")
    }
}

/// What `check` did with one package's baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct BaselineUse {
    /// Package.
    pub package: String,
    /// The baseline file.
    pub path: PathBuf,
    /// Compared, written or absent.
    pub state: BaselineState,
    /// Records read or written (0 when absent).
    pub records: usize,
}

/// What happened to a baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum BaselineState {
    /// Read and compared.
    Compared,
    /// Written (`--bless`).
    Written,
    /// The default file does not exist: no regression was checked.
    Absent,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct FindingRecord {
    /// `error`, `warning` or `note`.
    pub severity: Severity,
    /// The rule: `launch`, `spills`, `regression`, `arch`, `contract`, `unbounded`, `max-regs`,
    /// `new`, `config`, `empty`, `baseline`, `compile`, `driver`.
    pub kind: FindingKind,
    /// Package (empty for a finding about the command line).
    pub package: String,
    /// Kernel, when the finding is about one.
    pub kernel: Option<String>,
    /// Arch, when the finding is about one.
    pub arch: Option<Arch>,
    /// Source file, relative to the package root.
    pub file: Option<String>,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown (a compiler's diagnostic may give one).
    #[serde(default)]
    pub col: u32,
    /// What is wrong, with the arithmetic.
    pub message: String,
}

impl From<&Finding> for FindingRecord {
    fn from(f: &Finding) -> FindingRecord {
        FindingRecord {
            severity: f.severity,
            kind: f.kind,
            package: f.package.clone(),
            kernel: f.kernel.clone(),
            arch: f.arch,
            file: f.file().map(str::to_string),
            line: f.line(),
            col: f.col(),
            message: f.message(),
        }
    }
}
