//! `OUT_DIR/launch/manifest.json`: everything launch-build learned, for `cargo launch` and other
//! tools. Paths are relative (to the crate root for sources, to `OUT_DIR/launch` for outputs), so
//! the manifest does not depend on where the checkout lives.

use launch::{Arch, Contract, Resources};
use serde::{Deserialize, Serialize};

/// Bumped on any incompatible change of this format.
pub const SCHEMA: u32 = 1;

/// The manifest of one crate's kernels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The package name.
    pub package: String,
    /// The toolchain that produced the outputs.
    pub toolchain: ToolchainInfo,
    /// Arches built, lowest first.
    pub arches: Vec<Arch>,
    /// Block size for kernels without a contract.
    pub host_threads: u32,
    /// One entry per kernel source file.
    pub modules: Vec<ModuleEntry>,
    /// One entry per kernel.
    pub kernels: Vec<KernelEntry>,
    /// Compiler warnings, verbatim (`file: ptxas warning : ...`).
    pub warnings: Vec<String>,
}

/// Which toolchain ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolchainInfo {
    /// NVRTC version (`12.9.86`).
    pub nvrtc: String,
    /// ptxas version (`12.9.86`).
    pub ptxas: String,
    /// How it was found and where.
    pub description: String,
}

/// One `.cu` file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleEntry {
    /// Source path relative to the crate root, `/`-separated.
    pub file: String,
    /// Fallback PTX (lowest arch), relative to `OUT_DIR/launch`.
    pub ptx: String,
    /// Arch of the fallback PTX.
    pub ptx_arch: Arch,
    /// `.version` of that PTX (`8.8`): the driver must support this PTX ISA to JIT it.
    pub ptx_version: String,
    /// One cubin per arch, relative to `OUT_DIR/launch`.
    pub cubins: Vec<CubinEntry>,
}

/// One cubin file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CubinEntry {
    /// Its arch.
    pub arch: Arch,
    /// Path relative to `OUT_DIR/launch`.
    pub path: String,
}

/// One kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelEntry {
    /// Symbol name (mangled where the kernel is not `extern "C"`).
    pub name: String,
    /// Human-readable name (demangled).
    pub display_name: String,
    /// Name of the generated Rust static.
    pub rust_name: String,
    /// Source file, relative to the crate root.
    pub file: String,
    /// 1-based line of the definition (0 when not found).
    pub line: u32,
    /// 1-based column of the name (0 when not found).
    pub col: u32,
    /// Launch contract, `None` when unbounded.
    pub contract: Option<Contract>,
    /// Per-arch results, lowest arch first.
    pub arches: Vec<KernelArch>,
}

/// One kernel on one arch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelArch {
    /// The arch.
    pub arch: Arch,
    /// Numbers from `ptxas -v`.
    pub resources: Resources,
    /// The kernel's `ptxas -v` lines, verbatim.
    pub ptxas_lines: Vec<String>,
}

impl Manifest {
    /// Reads a manifest, checking its schema.
    pub fn from_json(text: &str) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if m.schema != SCHEMA {
            return Err(format!("manifest schema {} (this tool reads {SCHEMA}); rebuild the crate", m.schema));
        }
        Ok(m)
    }
}
