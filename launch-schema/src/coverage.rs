//! `cargo launch coverage --format json`: per GPU, what of the crate's embedded images loads
//! there (a cubin, PTX through the driver's JIT, or nothing), the bytes each arch costs, and the
//! smallest arch list that covers the GPUs.

use serde::{Deserialize, Serialize};

use super::manifest::Toolchain;
use launch::Arch;

/// The version of this document.
pub const VERSION: u32 = 1;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// [`VERSION`].
    pub schema: u32,
    /// The toolchain that built the images; null when nothing was built.
    pub toolchain: Option<Toolchain>,
    /// The driver asked about (`--driver`, a CUDA version such as `12.4`); null: any driver new
    /// enough for what is embedded (each JIT says which it needs).
    pub driver: Option<String>,
    /// Per GPU asked about, in the order asked.
    pub gpus: Vec<GpuCoverage>,
    /// Per package and arch, the bytes embedded.
    pub sizes: Vec<ArchSize>,
    /// The smallest arch list that runs every GPU natively; null with no GPU.
    pub suggestion: Option<Suggestion>,
    /// What the first load of a PTX costs (a JIT compile), with where the figure comes from;
    /// null when no GPU JIT-compiles anything.
    pub jit_cost: Option<String>,
}

impl Document {
    /// Reads a document, checking its version.
    pub fn from_json(text: &str) -> Result<Document, super::ReadError> {
        super::read(text, "coverage", VERSION, "written by another version of cargo-launch")
    }
}

/// One GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct GpuCoverage {
    /// Its name (`RTX 4090`), or the arch it was given as (`sm_86`).
    pub name: String,
    /// Its compute capability's arch (`sm_89`).
    pub arch: Arch,
    /// What loads, grouped: kernels with the same outcome share one entry.
    pub loads: Vec<Load>,
}

/// What loads for some kernels on one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Load {
    /// What happens.
    pub outcome: Outcome,
    /// The image: the cubin's arch, or the PTX's (`sm_80` standing for `compute_80`); null for
    /// `no_image`.
    pub image: Option<Arch>,
    /// The PTX's ISA (`8.8`), for a PTX.
    pub ptx_isa: Option<String>,
    /// The oldest driver that takes the image (a CUDA version); null when not known.
    pub min_driver: Option<String>,
    /// The CUDA error the load gives (209 no kernel image, 222 unsupported PTX version); null when
    /// it loads.
    pub error: Option<u32>,
    /// The fix, in one line; null when it loads.
    pub fix: Option<String>,
    /// The kernels (`package: file::kernel`, tune variants as `kernel[variant]`).
    pub kernels: Vec<String>,
    /// Whether the kernels are in `host` files: nvcc compiles those to cubins only (no PTX), so a
    /// GPU newer than every listed arch has no image for them (`no_image`), where the embedded
    /// module's kernels JIT from PTX. False (and left out) for other kernels.
    #[serde(default, skip_serializing_if = "is_false")]
    pub host: bool,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// What a GPU does with a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A cubin runs as is.
    Native,
    /// The driver JIT-compiles the PTX (on the first load; then from its cache).
    Jit,
    /// The PTX runs there but its ISA is newer than the driver takes: error 222.
    JitRefused,
    /// The cubin runs there but was built by a newer CUDA major than the driver's.
    DriverTooOld,
    /// Nothing embedded runs there: error 209.
    NoImage,
}

/// The bytes one arch costs one package.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ArchSize {
    /// Package.
    pub package: String,
    /// The arch.
    pub arch: Arch,
    /// Its cubins' bytes (tune variants included).
    pub cubin_bytes: u64,
    /// Its PTX's bytes (the fallback PTX is the lowest arch's; higher arches carry PTX only for
    /// arch-gated kernels).
    pub ptx_bytes: u64,
}

/// The smallest arch list for the GPUs asked about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Suggestion {
    /// The arches, lowest first: per compute-capability major, its lowest minor asked about (a
    /// cubin runs on newer minors of its major); the lowest also gives the fallback PTX that newer
    /// GPUs JIT-compile.
    pub arch: Vec<Arch>,
    /// The bytes of that list (cubins and the fallback PTX).
    pub bytes: u64,
    /// Whether `bytes` is estimated: an arch this build did not compile is costed at the mean
    /// of the arches it did.
    pub estimated: bool,
    /// The bytes of the current build, for comparison.
    pub current_bytes: u64,
}
